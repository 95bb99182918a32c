//! Teleporter's copy format: a compact binary encoding of an object graph (see
//! `docs/teleporter.md`, "The copy format", for the byte layout).
//!
//! Invariants (see also the module comment of `teleporter`):
//! - `dump` appends exactly one encoding (a version byte, then one record) to `out`; on an
//!   error `out` may hold a partial encoding, which the caller discards.
//! - `dump` runs no Ruby code and allocates no Ruby object until it fails, so no collection
//!   runs while it holds object addresses in its identity table.
//! - `load` reads only inside `bytes`, checks every length against what is left before
//!   allocating for it, and fails with `Teleporter::Error` on anything malformed, including
//!   bytes left over after the record.

#![allow(dead_code)] // the tags not written yet (step 1 supports a subset)

use crate::core::{array, encoding, float, object, string};
use crate::object::{basic, ObjType};
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
    let mut d = Dumper { out, syms: crate::symbol::SymMap::default(), objects: AddrTable::new(), count: 0 };
    d.write(ctx, value)
}

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
    count: u32,
}

impl Dumper<'_> {
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
                let b = crate::core::bignum::get(v);
                self.out.push(T_BIGNUM);
                self.out.push(u8::from(b.sign() == num_bigint::Sign::Minus));
                let n = b.magnitude().iter_u64_digits().len();
                put_varint(self.out, n as u64);
                for d in b.magnitude().iter_u64_digits() {
                    self.out.extend_from_slice(&d.to_le_bytes());
                }
                Ok(())
            }
            ObjType::String if basic(v).klass == ctx.c().string && !basic(v).has(crate::object::FL_EXIVAR) => {
                if self.seen(v) {
                    return Ok(());
                }
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
                Ok(())
            }
            ObjType::Array if basic(v).klass == ctx.c().array && !basic(v).has(crate::object::FL_EXIVAR) => {
                if self.seen(v) {
                    return Ok(());
                }
                self.out.push(T_ARRAY);
                let n = array::len(v);
                put_varint(self.out, n as u64);
                for i in 0..n {
                    // Re-read: the length is fixed by what was written.
                    let e = array::get(v, i);
                    self.write(ctx, e)?;
                }
                Ok(())
            }
            _ => Err(cant_teleport(ctx, v)),
        }
    }
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
    let mut l = Loader { bytes, pos: 0, objects: Vec::new(), syms: Vec::new() };
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

    fn sym_body(&mut self, ctx: &mut Ctx) -> Result<SymId> {
        let n = self.count(ctx, 1)?;
        let id = {
            let name = self.slice(ctx, n)?;
            ctx.intern_bytes(name)
        };
        Ok(id)
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
                Ok(match Value::try_fixnum(n) {
                    Some(v) => v,
                    None => crate::core::bignum::normalize(ctx, num_bigint::BigInt::from(n)),
                })
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
                let mag = num_bigint::BigUint::from_bytes_le(b);
                let s = if sign == 1 { num_bigint::Sign::Minus } else { num_bigint::Sign::Plus };
                Ok(crate::core::bignum::normalize(ctx, num_bigint::BigInt::from_biguint(s, mag)))
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
            T_SYMREF => {
                let i = self.varint(ctx)?;
                match usize::try_from(i).ok().and_then(|i| self.syms.get(i)) {
                    Some(&id) => Ok(Value::symbol(id)),
                    None => Err(format_error(ctx, &format!("reference to undefined symbol {i}"))),
                }
            }
            T_REF => {
                let i = self.varint(ctx)?;
                match usize::try_from(i).ok().and_then(|i| self.objects.get(i)) {
                    Some(&v) => Ok(v),
                    None => Err(format_error(ctx, &format!("reference to undefined object {i}"))),
                }
            }
            T_ARRAY => {
                if ctx.native_stack_exhausted() {
                    return Err(crate::interp::call::stack_overflow(ctx));
                }
                let n = self.count(ctx, 1)?;
                let a = array::with_capacity(ctx, n);
                self.register(ctx, a);
                for _ in 0..n {
                    let e = self.read(ctx)?;
                    array::push(ctx, a, e);
                }
                Ok(a)
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
