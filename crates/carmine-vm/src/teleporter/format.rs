//! Teleporter's copy format: a compact binary encoding of an object graph (see
//! `docs/teleporter.md`, "The copy format", for the byte layout).
//!
//! Invariants (see also the module comment of `teleporter`):
//! - `dump` appends exactly one encoding (a version byte, then one record) to `out`; on an
//!   error `out` may hold a partial encoding, which the caller discards.
//! - `dump` runs no Ruby code and allocates no Ruby object while it holds object addresses
//!   in its identity table, so no collection runs meanwhile. A graph holding shared objects
//!   (SharedString, SharedArray, SharedHash) is walked twice: the first walk only finds
//!   them; their plain copies are made (and protected) between the walks, and the second
//!   walk writes the copies in their place.
//! - `load` reads only inside `bytes`, checks every length against what is left before
//!   allocating for it, and fails with `Teleporter::Error` on anything malformed, including
//!   bytes left over after the record.

use crate::core::module::{self, body};
use crate::core::{array, complex, encoding, float, hash, object, range, rational, string, struct_};
use crate::object::{basic, data_ref, ObjType, FL_EXIVAR};
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The first byte of every encoding.
pub const VERSION: u8 = 1;

// Record tags.
pub(crate) const T_NIL: u8 = 0x00;
pub(crate) const T_TRUE: u8 = 0x01;
pub(crate) const T_FALSE: u8 = 0x02;
/// A 64-bit Integer: zigzag varint.
pub(crate) const T_INT: u8 = 0x03;
/// A Float: its 8 bytes, little-endian.
pub(crate) const T_FLOAT: u8 = 0x04;
/// A Bignum: sign byte (0 or 1), varint count of 64-bit limbs, the limbs little-endian.
pub(crate) const T_BIGNUM: u8 = 0x05;
pub(crate) const T_RATIONAL: u8 = 0x06;
pub(crate) const T_COMPLEX: u8 = 0x07;
/// Strings: varint length and bytes, in BINARY, UTF-8, US-ASCII, or (T_STR_ENC) the
/// encoding named by a varint-length name before them.
pub(crate) const T_STR_BIN: u8 = 0x08;
pub(crate) const T_STR_UTF8: u8 = 0x09;
pub(crate) const T_STR_ASCII: u8 = 0x0a;
pub(crate) const T_STR_ENC: u8 = 0x0b;
/// A Symbol by name (varint length, bytes); takes the next symbol index.
pub(crate) const T_SYM: u8 = 0x0c;
/// A Symbol already written: varint symbol index.
pub(crate) const T_SYMREF: u8 = 0x0d;
pub(crate) const T_ARRAY: u8 = 0x0e;
pub(crate) const T_HASH: u8 = 0x0f;
pub(crate) const T_RANGE: u8 = 0x10;
pub(crate) const T_STRUCT: u8 = 0x11;
pub(crate) const T_OBJECT: u8 = 0x12;
/// An object already written: varint object index.
pub(crate) const T_REF: u8 = 0x13;
pub(crate) const T_UCLASS: u8 = 0x14;
pub(crate) const T_IVARS: u8 = 0x15;
pub(crate) const T_CLASS: u8 = 0x16;
pub(crate) const T_MODULE: u8 = 0x17;
/// An Array of Fixnums only: width byte (1, 2, 4 or 8), varint count, the values as signed
/// little-endian integers of that width.
pub(crate) const T_ARRAY_INTS: u8 = 0x18;
/// An Array of Floats only: varint count, each value's 8 bytes little-endian.
pub(crate) const T_ARRAY_FLOATS: u8 = 0x19;
/// Arrays shorter than this are written element by element (the packed records pay a
/// scan of the elements first).
const PACK_MIN: usize = 8;
/// Tags 0x80..=0xff are the Integers SMALL_MIN..SMALL_MIN+127 in one byte.
pub(crate) const T_SMALL: u8 = 0x80;
pub(crate) const SMALL_MIN: i64 = -32;

// ---- varints ----

#[inline]
fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[inline]
fn zigzag(n: i64) -> u64 {
    ((n << 1) ^ (n >> 63)) as u64
}

#[inline]
fn unzigzag(n: u64) -> i64 {
    ((n >> 1) as i64) ^ -((n & 1) as i64)
}

#[inline]
fn put_int(out: &mut Vec<u8>, n: i64) {
    if (SMALL_MIN..SMALL_MIN + 128).contains(&n) {
        out.push(T_SMALL | (n - SMALL_MIN) as u8);
    } else {
        out.push(T_INT);
        put_varint(out, zigzag(n));
    }
}

// ---- dump ----

/// Appends the encoding of `value` to `out`. Objects the format has no record for raise
/// TypeError ("can't teleport Proc").
pub fn dump(ctx: &mut Ctx, value: Value, out: &mut Vec<u8>) -> Result<()> {
    out.push(VERSION);
    if !value.is_heap() {
        // Immediates need no tables: nothing allocated besides `out`.
        return match value.as_symbol() {
            Some(id) => {
                let name = ctx.sym_name(id);
                out.push(T_SYM);
                put_varint(out, name.len() as u64);
                out.extend_from_slice(&name);
                Ok(())
            }
            None => write_immediate(ctx, value, out),
        };
    }
    let start = out.len();
    let mut d = Dumper::new(out, None);
    d.write(ctx, value)?;
    if d.shared.is_empty() {
        return Ok(());
    }
    let mut found = std::mem::take(&mut d.shared);
    found.sort_unstable_by_key(|v| v.raw());
    found.dedup_by_key(|v| v.raw());
    let mark = ctx.stacks.protected.len();
    let r = (|| {
        let mut copies = std::collections::HashMap::new();
        for w in found {
            let copy = super::shared::plain_copy(ctx, w)?;
            ctx.protect(copy);
            copies.insert(w.raw(), copy);
        }
        out.truncate(start);
        Dumper::new(out, Some(&copies)).write(ctx, value)
    })();
    ctx.unprotect(mark);
    r
}

#[inline]
fn write_immediate(ctx: &mut Ctx, v: Value, out: &mut Vec<u8>) -> Result<()> {
    match v {
        Value::NIL => out.push(T_NIL),
        Value::TRUE => out.push(T_TRUE),
        Value::FALSE => out.push(T_FALSE),
        _ => {
            if let Some(n) = v.as_fixnum() {
                put_int(out, n);
            } else if v.is_flonum() {
                out.push(T_FLOAT);
                out.extend_from_slice(&v.flonum_unchecked().to_bits().to_le_bytes());
            } else {
                return Err(ctx.type_error("can't teleport an internal value"));
            }
        }
    }
    Ok(())
}

/// An open-addressing map from object addresses (never 0) to object indexes.
struct AddrTable {
    slots: Vec<(u64, u32)>,
    len: usize,
}

impl AddrTable {
    fn new() -> AddrTable {
        AddrTable { slots: Vec::new(), len: 0 }
    }

    #[inline]
    fn hash(k: u64, mask: usize) -> usize {
        ((k >> 3).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as usize & mask
    }

    fn get(&self, k: u64) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(k, mask);
        loop {
            let (sk, sv) = self.slots[i];
            if sk == k {
                return Some(sv);
            }
            if sk == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, k: u64, v: u32) {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = Self::hash(k, mask);
        while self.slots[i].0 != 0 && self.slots[i].0 != k {
            i = (i + 1) & mask;
        }
        if self.slots[i].0 == 0 {
            self.len += 1;
        }
        self.slots[i] = (k, v);
    }

    fn grow(&mut self) {
        let cap = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![(0, 0); cap]);
        self.len = 0;
        for (k, v) in old {
            if k != 0 {
                self.insert(k, v);
            }
        }
    }
}

struct Dumper<'a> {
    out: &'a mut Vec<u8>,
    syms: crate::symbol::SymMap<u32>,
    objects: AddrTable,
    /// Class addresses to the symbol of their name.
    classes: AddrTable,
    count: u32,
    /// Shared objects met in a first walk (written as nil there), once per reference.
    shared: Vec<Value>,
    /// In the second walk: the plain copy of each shared object, by address.
    copies: Option<&'a std::collections::HashMap<u64, Value>>,
}

/// Flags byte of a T_HASH record.
const HASH_IDENTITY: u8 = 1;
const HASH_DEFAULT: u8 = 2;
/// Flags byte of a T_RANGE record.
const RANGE_EXCL: u8 = 1;

/// Whether an instance variable is Carmine's own bookkeeping (as Marshal decides: `__`
/// names, and an exception's cached `bt_locations`), never written.
fn is_internal_ivar(name: &[u8]) -> bool {
    name.starts_with(b"__") || name == b"bt_locations"
}

impl<'a> Dumper<'a> {
    fn new(out: &'a mut Vec<u8>, copies: Option<&'a std::collections::HashMap<u64, Value>>) -> Dumper<'a> {
        Dumper { out, syms: crate::symbol::SymMap::default(), objects: AddrTable::new(), classes: AddrTable::new(), count: 0, shared: Vec::new(), copies }
    }

    /// A shared object: its plain copy in the second walk; noted in the first.
    fn shared_object(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        if let Some(copies) = self.copies {
            let copy = copies.get(&v.raw()).copied().ok_or_else(|| format_error(ctx, "a shared object changed during the dump"))?;
            return self.write(ctx, copy);
        }
        self.shared.push(v);
        self.out.push(T_NIL);
        Ok(())
    }

    fn symbol(&mut self, ctx: &mut Ctx, id: SymId) {
        if let Some(&i) = self.syms.get(&id) {
            self.out.push(T_SYMREF);
            put_varint(self.out, i as u64);
            return;
        }
        let n = self.syms.len() as u32;
        self.syms.insert(id, n);
        let name = ctx.sym_name(id);
        self.out.push(T_SYM);
        put_varint(self.out, name.len() as u64);
        self.out.extend_from_slice(&name);
    }

    /// Enters `v` in the identity table; true when it was already there (a T_REF written).
    #[inline]
    fn seen(&mut self, v: Value) -> bool {
        if let Some(i) = self.objects.get(v.raw()) {
            self.out.push(T_REF);
            put_varint(self.out, i as u64);
            return true;
        }
        self.objects.insert(v.raw(), self.count);
        self.count += 1;
        false
    }

    fn write(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        if !v.is_heap() {
            return match v.as_symbol() {
                Some(id) => {
                    self.symbol(ctx, id);
                    Ok(())
                }
                None => write_immediate(ctx, v, self.out),
            };
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        let ty = basic(v).obj_type();
        match ty {
            ObjType::Float => {
                self.out.push(T_FLOAT);
                self.out.extend_from_slice(&float::get(v).to_bits().to_le_bytes());
                Ok(())
            }
            ObjType::Bignum => {
                self.bignum(v);
                Ok(())
            }
            ObjType::Class => {
                let name = self.class_name(ctx, v)?;
                self.out.push(if module::is_module(v) { T_MODULE } else { T_CLASS });
                self.symbol(ctx, name);
                Ok(())
            }
            ObjType::String | ObjType::Array | ObjType::Hash | ObjType::Range | ObjType::Object => self.write_object(ctx, v, ty),
            ObjType::Data => {
                if super::shared::shared_obj(v).is_some() {
                    return self.shared_object(ctx, v);
                }
                if let Some(r) = data_ref::<rational::RationalObj>(v) {
                    let (n, d) = (r.num, r.den);
                    self.out.push(T_RATIONAL);
                    self.write(ctx, n)?;
                    return self.write(ctx, d);
                }
                if let Some(c) = data_ref::<complex::ComplexObj>(v) {
                    let (re, im) = (c.re, c.im);
                    self.out.push(T_COMPLEX);
                    self.write(ctx, re)?;
                    return self.write(ctx, im);
                }
                if struct_::is_struct_obj(v) {
                    return self.write_object(ctx, v, ty);
                }
                Err(cant_teleport(ctx, v))
            }
            _ => Err(cant_teleport(ctx, v)),
        }
    }

    fn bignum(&mut self, v: Value) {
        let b = crate::core::bignum::get(v);
        let digits = b.magnitude().iter_u64_digits();
        self.out.reserve(2 + 10 + digits.len() * 8);
        self.out.push(T_BIGNUM);
        self.out.push(u8::from(b.sign() == num_bigint::Sign::Minus));
        put_varint(self.out, digits.len() as u64);
        for d in digits {
            self.out.extend_from_slice(&d.to_le_bytes());
        }
    }

    /// The symbol of a class's name; anonymous classes cannot be written.
    fn class_name(&mut self, ctx: &mut Ctx, k: Value) -> Result<SymId> {
        if let Some(id) = self.classes.get(k.raw()) {
            return Ok(SymId(id));
        }
        let b = body(k);
        let name = match b.name {
            Some(n) if !b.temporary_name && body(k).kind != module::ClassKind::Singleton => n,
            _ => {
                let path = crate::core::module_methods::class_path(ctx, k);
                let kind = if module::is_module(k) { "module" } else { "class" };
                return Err(ctx.type_error(&format!("can't teleport anonymous {kind} {path}")));
            }
        };
        let id = ctx.intern_bytes(string::bytes(name));
        self.classes.insert(k.raw(), id.0);
        Ok(id)
    }

    /// Instance variables of a String, Array, Hash, Range or Struct (an Object's are
    /// written by `write_object` from its slots).
    fn extra_ivars(&mut self, ctx: &mut Ctx, v: Value) -> Vec<(SymId, Value)> {
        if !basic(v).has(FL_EXIVAR) {
            return Vec::new();
        }
        let mut list = object::ivar_list(ctx, v);
        list.retain(|&(n, _)| !is_internal_ivar(&ctx.sym_name(n)));
        list
    }

    fn write_ivars(&mut self, ctx: &mut Ctx, ivars: &[(SymId, Value)]) -> Result<()> {
        put_varint(self.out, ivars.len() as u64);
        for &(name, val) in ivars {
            self.symbol(ctx, name);
            self.write(ctx, val)?;
        }
        Ok(())
    }

    /// Objects with an identity: String, Array, Hash, Range, Struct/Data, user objects.
    fn write_object(&mut self, ctx: &mut Ctx, v: Value, ty: ObjType) -> Result<()> {
        if self.seen(v) {
            return Ok(());
        }
        let klass = basic(v).klass;
        if body(klass).kind == module::ClassKind::Singleton && !body(klass).methods.is_empty() {
            // Its behaviour would not travel with it (ENV is such a Hash).
            let name = object::class_name_of(ctx, v);
            return Err(ctx.type_error(&format!("can't teleport {name} with singleton methods")));
        }
        let real = module::real_class(klass);
        if ty == ObjType::Object {
            if object::is_a(ctx, v, ctx.c().weakmap) {
                return Err(cant_teleport(ctx, v));
            }
            let name = self.class_name(ctx, real)?;
            self.out.push(T_OBJECT);
            self.symbol(ctx, name);
            // The slots in the class's order; undefined and internal ones left out.
            let names = &body(real).iv_names;
            // SAFETY: `v` is an RObject (type checked above).
            let o = unsafe { &*v.as_ptr::<crate::object::RObject>() };
            let mut ivars: Vec<(SymId, Value)> = Vec::with_capacity(names.len());
            for (i, &n) in names.iter().enumerate() {
                let val = o.ivar(i);
                if !val.is_undef() && !is_internal_ivar(&ctx.sym_name(n)) {
                    ivars.push((n, val));
                }
            }
            return self.write_ivars(ctx, &ivars);
        }
        let ivars = self.extra_ivars(ctx, v);
        if !ivars.is_empty() {
            self.out.push(T_IVARS);
        }
        if ty == ObjType::Data {
            let name = self.class_name(ctx, real)?;
            self.out.push(T_STRUCT);
            self.symbol(ctx, name);
            let values = struct_::values(ctx, v)?;
            let n = array::len(values);
            put_varint(self.out, n as u64);
            for i in 0..n {
                let e = array::get(values, i);
                self.write(ctx, e)?;
            }
        } else {
            let c = ctx.c();
            let base = match ty {
                ObjType::String => c.string,
                ObjType::Array => c.array,
                ObjType::Hash => c.hash,
                _ => c.range,
            };
            if real != base {
                // ENV is a Hash whose class is Object.
                if !module::includes_module(ctx, real, base) {
                    return Err(cant_teleport(ctx, v));
                }
                let name = self.class_name(ctx, real)?;
                self.out.push(T_UCLASS);
                self.symbol(ctx, name);
            }
            match ty {
                ObjType::String => self.string_body(v),
                ObjType::Array => self.array_body(ctx, v)?,
                ObjType::Hash => self.hash_body(ctx, v)?,
                _ => {
                    self.out.push(T_RANGE);
                    self.out.push(if range::excl(v) { RANGE_EXCL } else { 0 });
                    self.write(ctx, range::begin(v))?;
                    self.write(ctx, range::end(v))?;
                }
            }
        }
        if !ivars.is_empty() {
            self.write_ivars(ctx, &ivars)?;
        }
        Ok(())
    }

    /// An Array's record: packed when every element is a Fixnum or every one a Float (no
    /// tag per element, decoded without the general walk), else element by element.
    fn array_body(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        // No Ruby code runs and nothing is allocated during a dump, so the elements cannot
        // change while they are borrowed here.
        let items: &[Value] = array::rarray(v).items();
        let n = items.len();
        if n >= PACK_MIN {
            let kind = packing(items);
            if let Packing::Ints(width) = kind {
                self.out.push(T_ARRAY_INTS);
                self.out.push(width as u8);
                put_varint(self.out, n as u64);
                put_packed_ints(self.out, items, width);
                return Ok(());
            }
            let flonums = matches!(kind, Packing::Flonums);
            if flonums || items.iter().all(|&e| float::is_float(e)) {
                self.out.push(T_ARRAY_FLOATS);
                put_varint(self.out, n as u64);
                put_packed_floats(self.out, items, flonums);
                return Ok(());
            }
        }
        self.out.push(T_ARRAY);
        put_varint(self.out, n as u64);
        self.out.reserve(n);
        for &e in items {
            // Numbers inline: the common elements skip the general walk.
            if let Some(x) = e.as_fixnum() {
                put_int(self.out, x);
            } else if e.is_flonum() {
                self.out.push(T_FLOAT);
                self.out.extend_from_slice(&e.flonum_unchecked().to_bits().to_le_bytes());
            } else if crate::core::bignum::is_bignum(e) {
                self.bignum(e);
            } else {
                self.write(ctx, e)?;
            }
        }
        Ok(())
    }

    fn string_body(&mut self, v: Value) {
        let enc = string::encoding(v);
        let tag = match enc {
            encoding::BINARY => T_STR_BIN,
            encoding::UTF_8 => T_STR_UTF8,
            encoding::US_ASCII => T_STR_ASCII,
            _ => T_STR_ENC,
        };
        self.out.push(tag);
        if tag == T_STR_ENC {
            let name = encoding::name(enc).as_bytes();
            put_varint(self.out, name.len() as u64);
            self.out.extend_from_slice(name);
        }
        let b = string::bytes(v);
        put_varint(self.out, b.len() as u64);
        self.out.extend_from_slice(b);
    }

    fn hash_body(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        if basic(v).has(hash::FL_DEFAULT_PROC) {
            let name = object::class_name_of(ctx, v);
            return Err(ctx.type_error(&format!("can't teleport {name} with a default proc")));
        }
        let default = hash::rhash(v).default;
        let mut flags = 0;
        if basic(v).has(hash::FL_IDENTITY) {
            flags |= HASH_IDENTITY;
        }
        if !default.is_nil() {
            flags |= HASH_DEFAULT;
        }
        self.out.push(T_HASH);
        self.out.push(flags);
        put_varint(self.out, hash::len(v) as u64);
        let mut i = 0;
        while let Some(e) = hash::entry_at(v, i) {
            i += 1;
            if let Some((k, val)) = e {
                self.write(ctx, k)?;
                self.write(ctx, val)?;
            }
        }
        if !default.is_nil() {
            self.write(ctx, default)?;
        }
        Ok(())
    }
}

/// What one pass over an Array's elements finds.
enum Packing {
    /// Every element is a Fixnum, and this width (1, 2, 4 or 8 bytes) holds them all.
    Ints(usize),
    /// Every element is a flonum.
    Flonums,
    None,
}

/// Whether `items` can be written as a packed record. One pass over the raw words without
/// a branch per element (the loop vectorizes): a Fixnum's word is 2x + 1, so the low bits
/// are all set only if every element is a Fixnum, and `w ^ sign(w)` has its highest bit
/// below 2^b exactly when x fits in b signed bits.
fn packing(items: &[Value]) -> Packing {
    let (mut tags, mut flonums, mut magnitude) = (1u64, true, 0u64);
    for &e in items {
        let w = e.raw();
        tags &= w;
        flonums &= e.is_flonum();
        magnitude |= w ^ 0u64.wrapping_sub(w >> 63);
    }
    if tags & 1 == 1 {
        let width = if magnitude >> 8 == 0 {
            1
        } else if magnitude >> 16 == 0 {
            2
        } else if magnitude >> 32 == 0 {
            4
        } else {
            8
        };
        return Packing::Ints(width);
    }
    if flonums {
        Packing::Flonums
    } else {
        Packing::None
    }
}

/// Appends the Fixnums `items` as little-endian integers of `width` bytes (which hold them).
fn put_packed_ints(out: &mut Vec<u8>, items: &[Value], width: usize) {
    let start = out.len();
    out.resize(start + items.len() * width, 0);
    let dst = &mut out[start..];
    // The low `width` bytes of x are those of the word shifted right (logically: the bits
    // the shift brings in are cut off, except for width 8, which shifts arithmetically).
    let low = |e: &Value| e.raw() >> 1;
    match width {
        1 => dst.iter_mut().zip(items).for_each(|(d, e)| *d = low(e) as u8),
        2 => dst.chunks_exact_mut(2).zip(items).for_each(|(d, e)| d.copy_from_slice(&(low(e) as u16).to_le_bytes())),
        4 => dst.chunks_exact_mut(4).zip(items).for_each(|(d, e)| d.copy_from_slice(&(low(e) as u32).to_le_bytes())),
        _ => dst.chunks_exact_mut(8).zip(items).for_each(|(d, e)| d.copy_from_slice(&e.fixnum_unchecked().to_le_bytes())),
    }
}

/// Appends the Floats `items` (flonums or boxed) as 8 little-endian bytes each.
fn put_packed_floats(out: &mut Vec<u8>, items: &[Value], all_flonums: bool) {
    let start = out.len();
    out.resize(start + items.len() * 8, 0);
    let dst = out[start..].chunks_exact_mut(8).zip(items);
    if all_flonums {
        dst.for_each(|(d, e)| d.copy_from_slice(&e.flonum_unchecked().to_bits().to_le_bytes()));
    } else {
        dst.for_each(|(d, e)| d.copy_from_slice(&float::get(*e).to_bits().to_le_bytes()));
    }
}

/// The magnitude whose 64-bit limbs `bytes` holds, least significant first (a multiple of
/// 8 bytes).
fn biguint_from_limbs(bytes: &[u8]) -> num_bigint::BigUint {
    let limb = |c: &[u8]| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
    match bytes.len() {
        0 => num_bigint::BigUint::ZERO,
        8 => num_bigint::BigUint::from(limb(bytes)),
        16 => num_bigint::BigUint::from(limb(bytes) as u128 | (limb(&bytes[8..]) as u128) << 64),
        _ => {
            let digits: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            num_bigint::BigUint::new(digits)
        }
    }
}

/// The Integer whose sign and 64-bit limbs (least significant first) are given: a Fixnum
/// when it fits (the writer never sends one so, but any bytes must load).
fn bignum_value(ctx: &mut Ctx, negative: bool, limbs: &[u8]) -> Value {
    let sign = if negative { num_bigint::Sign::Minus } else { num_bigint::Sign::Plus };
    crate::core::bignum::normalize(ctx, num_bigint::BigInt::from_biguint(sign, biguint_from_limbs(limbs)))
}

/// TypeError "can't teleport Proc".
fn cant_teleport(ctx: &mut Ctx, v: Value) -> crate::Unwind {
    let name = object::class_name_of(ctx, v);
    ctx.type_error(&format!("can't teleport {name}"))
}

// ---- load ----

/// Decodes the one value `bytes` encodes; every byte must belong to it.
pub fn load(ctx: &mut Ctx, bytes: &[u8]) -> Result<Value> {
    let mark = ctx.stacks.protected.len();
    let mut l = Loader { bytes, pos: 0, objects: Vec::new(), syms: Vec::new(), classes: Vec::new() };
    let r = l.run(ctx);
    ctx.unprotect(mark);
    r
}

struct Loader<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Objects by index (each also on the protect stack).
    objects: Vec<Value>,
    syms: Vec<SymId>,
    /// Classes looked up so far, by name (each also on the protect stack).
    classes: Vec<(SymId, Value)>,
}

/// The object slot of a Range whose ends are still being read: a reference to it is an
/// error (a Range is built once its ends are known).
const UNFINISHED: Value = Value::UNDEF;

/// The Integer `n` (a Bignum when it is outside the Fixnum range).
#[inline]
fn int_value(ctx: &mut Ctx, n: i64) -> Value {
    match Value::try_fixnum(n) {
        Some(v) => v,
        None => crate::core::bignum::normalize(ctx, num_bigint::BigInt::from(n)),
    }
}

/// Teleporter::Error with `msg`.
pub(crate) fn format_error(ctx: &mut Ctx, msg: &str) -> crate::Unwind {
    let k = super::error_class(ctx);
    ctx.raise(k, msg)
}

impl<'a> Loader<'a> {
    fn run(&mut self, ctx: &mut Ctx) -> Result<Value> {
        let v = self.byte(ctx)?;
        if v != VERSION {
            return Err(format_error(ctx, &format!("incompatible format version {v} (expected {VERSION})")));
        }
        let r = self.read(ctx)?;
        if self.pos != self.bytes.len() {
            return Err(format_error(ctx, &format!("{} extra bytes after the object", self.bytes.len() - self.pos)));
        }
        Ok(r)
    }

    fn truncated(&self, ctx: &mut Ctx) -> crate::Unwind {
        format_error(ctx, "truncated data")
    }

    #[inline]
    fn byte(&mut self, ctx: &mut Ctx) -> Result<u8> {
        match self.bytes.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(self.truncated(ctx)),
        }
    }

    #[inline]
    fn varint(&mut self, ctx: &mut Ctx) -> Result<u64> {
        // Most counts and lengths fit in one byte.
        if let Some(&b) = self.bytes.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        let mut n: u64 = 0;
        let mut shift = 0;
        loop {
            let b = self.byte(ctx)?;
            if shift == 63 && b > 1 {
                return Err(format_error(ctx, "integer too long"));
            }
            n |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(n);
            }
            shift += 7;
            if shift > 63 {
                return Err(format_error(ctx, "integer too long"));
            }
        }
    }

    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// A varint count of items that each take at least `min` bytes.
    fn count(&mut self, ctx: &mut Ctx, min: usize) -> Result<usize> {
        let n = self.varint(ctx)?;
        if n > (self.left() / min.max(1)) as u64 {
            return Err(self.truncated(ctx));
        }
        Ok(n as usize)
    }

    fn slice(&mut self, ctx: &mut Ctx, n: usize) -> Result<&'a [u8]> {
        if n > self.left() {
            return Err(self.truncated(ctx));
        }
        let bytes: &'a [u8] = self.bytes;
        let s = &bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Enters a new object at the next index (and roots it until the load ends).
    fn register(&mut self, ctx: &mut Ctx, v: Value) {
        self.objects.push(v);
        ctx.protect(v);
    }

    /// Roots a value read before the rest of its record (until the load ends).
    #[inline]
    fn hold(&mut self, ctx: &mut Ctx, v: Value) {
        if v.is_heap() {
            ctx.protect(v);
        }
    }

    #[inline]
    fn check_stack(&mut self, ctx: &mut Ctx) -> Result<()> {
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        Ok(())
    }

    /// A T_SYM or T_SYMREF record.
    fn symbol(&mut self, ctx: &mut Ctx) -> Result<SymId> {
        match self.byte(ctx)? {
            T_SYM => {
                let id = self.sym_body(ctx)?;
                self.syms.push(id);
                Ok(id)
            }
            T_SYMREF => self.symref(ctx),
            t => Err(format_error(ctx, &format!("expected a symbol, found tag 0x{t:02x} at byte {}", self.pos - 1))),
        }
    }

    fn symref(&mut self, ctx: &mut Ctx) -> Result<SymId> {
        let i = self.varint(ctx)?;
        match usize::try_from(i).ok().and_then(|i| self.syms.get(i)) {
            Some(&id) => Ok(id),
            None => Err(format_error(ctx, &format!("reference to undefined symbol {i}"))),
        }
    }

    /// The class or module whose name (a symbol record) follows: ArgumentError
    /// "undefined class/module Foo" when this process has none by that name, as Marshal.
    fn class_or_module(&mut self, ctx: &mut Ctx) -> Result<Value> {
        let name = self.symbol(ctx)?;
        if let Some(&(_, k)) = self.classes.iter().find(|(n, _)| *n == name) {
            return Ok(k);
        }
        let text = ctx.sym_name(name);
        let k = crate::core::marshal::path_to_class(ctx, &text)?;
        ctx.protect(k);
        self.classes.push((name, k));
        Ok(k)
    }

    fn class(&mut self, ctx: &mut Ctx) -> Result<Value> {
        let k = self.class_or_module(ctx)?;
        if !module::is_class(k) {
            let name = crate::core::module_methods::class_path(ctx, k);
            return Err(ctx.type_error(&format!("{name} does not refer to class")));
        }
        Ok(k)
    }

    /// A count and that many (symbol, value) pairs, set as instance variables of `v`.
    fn ivars(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        let n = self.count(ctx, 2)?;
        for _ in 0..n {
            let name = self.symbol(ctx)?;
            let val = self.read(ctx)?;
            object::ivar_set_raw(ctx, v, name, val);
        }
        Ok(())
    }

    fn sym_body(&mut self, ctx: &mut Ctx) -> Result<SymId> {
        let n = self.count(ctx, 1)?;
        let id = {
            let name = self.slice(ctx, n)?;
            ctx.intern_bytes(name)
        };
        Ok(id)
    }

    /// `read` with the records of numbers decoded in line (for elements of containers).
    #[inline(always)]
    fn read_element(&mut self, ctx: &mut Ctx) -> Result<Value> {
        match self.bytes.get(self.pos) {
            Some(&t) if t >= T_SMALL => {
                self.pos += 1;
                Ok(Value::fixnum((t & 0x7f) as i64 + SMALL_MIN))
            }
            Some(&T_INT) => {
                self.pos += 1;
                let n = unzigzag(self.varint(ctx)?);
                Ok(int_value(ctx, n))
            }
            Some(&T_FLOAT) if self.left() >= 9 => {
                let mut a = [0u8; 8];
                a.copy_from_slice(&self.bytes[self.pos + 1..self.pos + 9]);
                self.pos += 9;
                Ok(float::new(ctx, f64::from_bits(u64::from_le_bytes(a))))
            }
            Some(&T_BIGNUM) => {
                // The common shape in one bounds check: a sign byte, a one-byte limb count,
                // the limbs.
                let rest = &self.bytes[self.pos + 1..];
                if let [sign @ 0..=1, n @ 0..=0x7f, ..] = *rest {
                    let len = n as usize * 8;
                    if let Some(limbs) = rest.get(2..2 + len) {
                        self.pos += 3 + len;
                        return Ok(bignum_value(ctx, sign == 1, limbs));
                    }
                }
                self.read(ctx)
            }
            _ => self.read(ctx),
        }
    }

    fn read(&mut self, ctx: &mut Ctx) -> Result<Value> {
        let tag = self.byte(ctx)?;
        if tag >= T_SMALL {
            return Ok(Value::fixnum((tag & 0x7f) as i64 + SMALL_MIN));
        }
        match tag {
            T_NIL => Ok(Value::NIL),
            T_TRUE => Ok(Value::TRUE),
            T_FALSE => Ok(Value::FALSE),
            T_INT => {
                let n = unzigzag(self.varint(ctx)?);
                Ok(int_value(ctx, n))
            }
            T_FLOAT => {
                let b = self.slice(ctx, 8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(float::new(ctx, f64::from_bits(u64::from_le_bytes(a))))
            }
            T_BIGNUM => {
                let sign = self.byte(ctx)?;
                if sign > 1 {
                    return Err(format_error(ctx, "bad Bignum sign"));
                }
                let n = self.count(ctx, 8)?;
                let b = self.slice(ctx, n * 8)?;
                Ok(bignum_value(ctx, sign == 1, b))
            }
            T_STR_BIN | T_STR_UTF8 | T_STR_ASCII | T_STR_ENC => {
                let enc = match tag {
                    T_STR_BIN => encoding::BINARY,
                    T_STR_UTF8 => encoding::UTF_8,
                    T_STR_ASCII => encoding::US_ASCII,
                    _ => {
                        let n = self.count(ctx, 1)?;
                        let name = self.slice(ctx, n)?;
                        let found = std::str::from_utf8(name).ok().and_then(encoding::find);
                        match found {
                            Some(e) => e,
                            None => {
                                let text = String::from_utf8_lossy(name).into_owned();
                                return Err(format_error(ctx, &format!("unknown encoding {text:?}")));
                            }
                        }
                    }
                };
                let n = self.count(ctx, 1)?;
                let b = self.slice(ctx, n)?;
                let s = string::new_with_enc_from_slice(ctx, b, enc);
                self.register(ctx, s);
                Ok(s)
            }
            T_SYM => {
                let id = self.sym_body(ctx)?;
                self.syms.push(id);
                Ok(Value::symbol(id))
            }
            T_SYMREF => Ok(Value::symbol(self.symref(ctx)?)),
            T_REF => {
                let i = self.varint(ctx)?;
                match usize::try_from(i).ok().and_then(|i| self.objects.get(i)) {
                    Some(&v) if v != UNFINISHED => Ok(v),
                    Some(_) => Err(format_error(ctx, "reference to a Range from inside its own ends")),
                    None => Err(format_error(ctx, &format!("reference to undefined object {i}"))),
                }
            }
            T_ARRAY => {
                self.check_stack(ctx)?;
                let n = self.count(ctx, 1)?;
                let a = array::with_capacity(ctx, n);
                self.register(ctx, a);
                for _ in 0..n {
                    let e = self.read_element(ctx)?;
                    array::push(ctx, a, e);
                }
                Ok(a)
            }
            T_ARRAY_INTS => {
                let width = self.byte(ctx)? as usize;
                if !matches!(width, 1 | 2 | 4 | 8) {
                    return Err(format_error(ctx, &format!("bad packed Integer width {width}")));
                }
                let n = self.count(ctx, width)?;
                let b = self.slice(ctx, n * width)?;
                let mut items: Vec<Value> = Vec::with_capacity(n);
                match width {
                    1 => items.extend(b.iter().map(|&x| Value::fixnum(x as i8 as i64))),
                    2 => items.extend(b.chunks_exact(2).map(|c| Value::fixnum(i16::from_le_bytes([c[0], c[1]]) as i64))),
                    4 => items.extend(b.chunks_exact(4).map(|c| Value::fixnum(i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64))),
                    _ => {
                        for c in b.chunks_exact(8) {
                            let x = i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                            match Value::try_fixnum(x) {
                                Some(v) => items.push(v),
                                None => return Err(format_error(ctx, "packed Integer out of the Fixnum range")),
                            }
                        }
                    }
                }
                // No object was registered since this record began: the Array takes the
                // index its writer gave it.
                let a = array::from_vec(ctx, items);
                self.register(ctx, a);
                Ok(a)
            }
            T_ARRAY_FLOATS => {
                let n = self.count(ctx, 8)?;
                let b = self.slice(ctx, n * 8)?;
                let mut items: Vec<Value> = Vec::with_capacity(n);
                for c in b.chunks_exact(8) {
                    let f = f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
                    let v = match Value::try_flonum(f) {
                        Some(v) => v,
                        None => {
                            // Boxed: rooted until the load ends, as `items` is not scanned.
                            let v = float::new(ctx, f);
                            ctx.protect(v);
                            v
                        }
                    };
                    items.push(v);
                }
                let a = array::from_vec(ctx, items);
                self.register(ctx, a);
                Ok(a)
            }
            T_RATIONAL => {
                let n = self.read(ctx)?;
                self.hold(ctx, n);
                let d = self.read(ctx)?;
                let int = |v: Value| crate::core::integer::is_integer(v);
                if !int(n) || !int(d) || d == Value::fixnum(0) {
                    return Err(format_error(ctx, "bad Rational"));
                }
                rational::new_reduced(ctx, n, d)
            }
            T_COMPLEX => {
                let re = self.read(ctx)?;
                self.hold(ctx, re);
                let im = self.read(ctx)?;
                let real = |v: Value| crate::core::integer::is_integer(v) || float::is_float(v) || rational::is_rational(v);
                if !real(re) || !real(im) {
                    return Err(format_error(ctx, "bad Complex"));
                }
                complex::new_rect(ctx, re, im)
            }
            T_HASH => {
                self.check_stack(ctx)?;
                let flags = self.byte(ctx)?;
                if flags & !(HASH_IDENTITY | HASH_DEFAULT) != 0 {
                    return Err(format_error(ctx, "bad Hash flags"));
                }
                let n = self.count(ctx, 2)?;
                let h = hash::new(ctx);
                if flags & HASH_IDENTITY != 0 {
                    basic(h).flags |= hash::FL_IDENTITY;
                }
                self.register(ctx, h);
                for _ in 0..n {
                    let k = self.read_element(ctx)?;
                    self.hold(ctx, k);
                    let v = self.read_element(ctx)?;
                    // Keys of a Hash that compares by value are frozen Strings (Hash#[]=
                    // copies the others), so the key needs no copy here.
                    if flags & HASH_IDENTITY == 0 && string::is_plain_string(k) {
                        object::freeze(k);
                    }
                    hash::aset(ctx, h, k, v)?;
                }
                if flags & HASH_DEFAULT != 0 {
                    hash::rhash(h).default = self.read(ctx)?;
                }
                Ok(h)
            }
            T_RANGE => {
                self.check_stack(ctx)?;
                let flags = self.byte(ctx)?;
                if flags & !RANGE_EXCL != 0 {
                    return Err(format_error(ctx, "bad Range flags"));
                }
                let slot = self.objects.len();
                self.objects.push(UNFINISHED);
                let b = self.read(ctx)?;
                self.hold(ctx, b);
                let e = self.read(ctx)?;
                self.hold(ctx, e);
                let r = range::new_checked(ctx, b, e, flags & RANGE_EXCL != 0)?;
                ctx.protect(r);
                self.objects[slot] = r;
                Ok(r)
            }
            T_STRUCT => {
                self.check_stack(ctx)?;
                let k = self.class(ctx)?;
                let n = self.count(ctx, 1)?;
                let Some(members) = struct_::members_of_class(ctx, k) else {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    return Err(ctx.type_error(&format!("{name} is not a Struct or Data class")));
                };
                if array::len(members) != n {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    let m = array::len(members);
                    return Err(ctx.type_error(&format!("{name} has {m} members, the data {n}")));
                }
                let v = struct_::alloc_struct(ctx, k)?;
                self.register(ctx, v);
                let values = struct_::values(ctx, v)?;
                for i in 0..n {
                    let e = self.read(ctx)?;
                    array::set(values, i, e);
                }
                if module::includes_module(ctx, k, ctx.c().data) {
                    object::freeze(v);
                }
                Ok(v)
            }
            T_OBJECT => {
                self.check_stack(ctx)?;
                let k = self.class(ctx)?;
                let v = object::allocate(ctx, k)?;
                if basic(v).obj_type() != ObjType::Object {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    return Err(ctx.type_error(&format!("{name} is not a class of plain objects")));
                }
                self.register(ctx, v);
                self.ivars(ctx, v)?;
                Ok(v)
            }
            T_UCLASS => {
                let k = self.class(ctx)?;
                let v = self.read(ctx)?;
                let c = ctx.c();
                let base = if !v.is_heap() {
                    Value::NIL
                } else {
                    match basic(v).obj_type() {
                        ObjType::String => c.string,
                        ObjType::Array => c.array,
                        ObjType::Hash => c.hash,
                        ObjType::Range => c.range,
                        _ => Value::NIL,
                    }
                };
                if base.is_nil() || !module::includes_module(ctx, k, base) {
                    return Err(format_error(ctx, "bad subclass record"));
                }
                basic(v).klass = k;
                crate::heap::write_barrier(v, k);
                Ok(v)
            }
            T_IVARS => {
                let v = self.read(ctx)?;
                if !v.is_heap() || module::is_class_or_module(v) {
                    return Err(format_error(ctx, "instance variables on a value that has none"));
                }
                self.ivars(ctx, v)?;
                Ok(v)
            }
            T_CLASS | T_MODULE => {
                let k = self.class_or_module(ctx)?;
                if (tag == T_CLASS) != module::is_class(k) {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    let what = if tag == T_CLASS { "class" } else { "module" };
                    return Err(ctx.type_error(&format!("{name} does not refer to {what}")));
                }
                Ok(k)
            }
            _ => Err(format_error(ctx, &format!("unknown tag 0x{tag:02x} at byte {}", self.pos - 1))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zigzag_round_trips() {
        for n in [0i64, 1, -1, 63, -64, i64::MAX, i64::MIN, 1 << 40, -(1 << 40)] {
            assert_eq!(unzigzag(zigzag(n)), n);
        }
    }

    #[test]
    fn addr_table_maps_and_grows() {
        let mut t = AddrTable::new();
        for i in 1..1000u64 {
            t.insert(i * 8, i as u32);
        }
        for i in 1..1000u64 {
            assert_eq!(t.get(i * 8), Some(i as u32));
        }
        assert_eq!(t.get(8 * 5000), None);
    }
}
