//! `Marshal.dump`: walks an object graph depth first and writes CRuby's format 4.8.
//!
//! Invariants:
//! - `objects` maps a heap value's address (a flonum's bits) to its index; every value
//!   entered there is also pushed on `keep`, a protected Ruby Array, so no address can be
//!   freed and reused while the dump runs.
//! - `count` is the next object index; it also advances for records that are never linked
//!   to (Fixnums written as Bignums), as in CRuby.
//! - `symbols` maps a symbol to its index in the symbol table of the stream.
//! - `limit` is CRuby's depth limit: negative means none; a record met at limit 0 raises.
//! - `interned_keys` stands in for CRuby's interning of plain String Hash keys: equal
//!   plain keys are one object in CRuby, so the first is written and the others linked.
//!
//! The walk (`write_object`) is separate from the encoding primitives (`long`, `bytes`,
//! `symbol`, `float_repr`): what an object is written as (user hooks, extended modules,
//! user subclass, instance variables, exception state) is decided by `hooks_of`,
//! `write_extended`, `write_uclass`, `ivars_of` and `exception_ivars`, which another
//! serializer of object graphs (Teleporter) can follow.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use num_bigint::Sign;

use super::*;
use crate::core::module::{self, body, ClassKind};
use crate::core::{array, bignum, encoding, exception, float, object, regexp, string, struct_};
use crate::object::{basic, data_ref, ObjType, FL_EXIVAR};
use crate::symbol::{sym, SymId, SymMap};

/// Hasher for maps keyed by object addresses: they are 8-aligned and mostly distinct in
/// their middle bits, so a multiply and a fold spread them well.
#[derive(Default, Clone, Copy)]
pub(crate) struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.0 ^ (self.0 >> 29)
    }
}

pub(crate) type AddrMap<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// What a class's instances answer to the hooks Marshal asks about, looked up once per
/// dump (`None` when a user `respond_to?` must be asked for each object).
#[derive(Clone, Copy)]
struct Hooks {
    marshal_dump: bool,
    user_dump: bool,
}

/// The encoding a String, Regexp or Symbol carries as an instance variable.
#[derive(Clone, Copy, PartialEq)]
enum EncIvar {
    None,
    /// `E`: true for UTF-8, false for US-ASCII.
    Short(bool),
    /// `encoding`: the encoding's name.
    Named(u8),
}

pub struct Dumper {
    out: Vec<u8>,
    objects: AddrMap<u32>,
    count: u32,
    symbols: SymMap<u32>,
    hooks: AddrMap<Option<Hooks>>,
    class_names: AddrMap<SymId>,
    /// Plain String Hash keys written so far, by a hash of their content and encoding.
    interned_keys: AddrMap<Vec<(Value, u32)>>,
    /// Classes whose name was checked to lead back to them.
    resolved: std::collections::HashSet<u64, BuildHasherDefault<AddrHasher>>,
    enc_names: HashMap<u8, Value>,
    /// Whether an instance variable name is Carmine's own (`is_internal_ivar`), by id.
    internal: SymMap<bool>,
    sym_e: SymId,
    /// Counts calls into Ruby code (hooks) made by the dump.
    hook_calls: u64,
    /// The ENV object (a Hash here).
    env: Value,
    keep: Value,
}

impl Dumper {
    /// The bytes of `Marshal.dump(obj)` with depth `limit`.
    pub fn dump(ctx: &mut Ctx, obj: Value, limit: i64) -> Result<Vec<u8>> {
        let keep = array::new(ctx);
        let mark = ctx.protect(keep);
        let mut d = Dumper {
            out: Vec::with_capacity(64),
            objects: AddrMap::default(),
            count: 0,
            symbols: SymMap::default(),
            hooks: AddrMap::default(),
            class_names: AddrMap::default(),
            resolved: Default::default(),
            interned_keys: AddrMap::default(),
            enc_names: HashMap::new(),
            internal: SymMap::default(),
            sym_e: ctx.intern("E"),
            hook_calls: 0,
            env: module::body(ctx.c().object).const_get(ctx.intern("ENV")).map_or(Value::UNDEF, |e| e.value),
            keep,
        };
        d.out.push(MAJOR_VERSION);
        d.out.push(MINOR_VERSION);
        let r = d.write_object(ctx, obj, limit);
        ctx.unprotect(mark);
        r.map(|_| d.out)
    }

    // ---- primitives ----

    #[inline]
    fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    fn long(&mut self, n: i64) {
        write_long(&mut self.out, n);
    }

    fn bytes(&mut self, b: &[u8]) {
        self.long(b.len() as i64);
        self.out.extend_from_slice(b);
    }

    /// Enters `v` in the object table (and keeps it alive for the rest of the dump).
    fn register(&mut self, ctx: &mut Ctx, v: Value) {
        self.objects.insert(v.raw(), self.count);
        self.count += 1;
        if v.is_heap() {
            array::push(ctx, self.keep, v);
        }
    }

    fn keep(&mut self, ctx: &mut Ctx, v: Value) {
        if v.is_heap() {
            array::push(ctx, self.keep, v);
        }
    }

    fn symbol(&mut self, ctx: &mut Ctx, id: SymId) {
        if let Some(&i) = self.symbols.get(&id) {
            self.byte(T_SYMLINK);
            self.long(i as i64);
            return;
        }
        self.symbols.insert(id, self.symbols.len() as u32);
        let name = ctx.sym_name(id);
        let enc = if name.is_ascii() || std::str::from_utf8(&name).is_err() { EncIvar::None } else { EncIvar::Short(true) };
        if enc == EncIvar::None {
            self.byte(T_SYMBOL);
            self.bytes(&name);
        } else {
            self.byte(T_IVAR);
            self.byte(T_SYMBOL);
            self.bytes(&name);
            self.long(1);
            self.symbol(ctx, self.sym_e);
            self.byte(T_TRUE);
        }
    }

    /// A Bignum record: sign, length in 16-bit words, magnitude little-endian.
    fn bignum_digits(&mut self, negative: bool, mut mag: Vec<u8>) {
        while mag.len() > 1 && mag.last() == Some(&0) {
            mag.pop();
        }
        if mag.len() % 2 == 1 {
            mag.push(0);
        }
        self.byte(T_BIGNUM);
        self.byte(if negative { b'-' } else { b'+' });
        self.long((mag.len() / 2) as i64);
        self.out.extend_from_slice(&mag);
    }

    // ---- the walk ----

    pub fn write_object(&mut self, ctx: &mut Ctx, v: Value, limit: i64) -> Result<()> {
        if limit == 0 {
            return Err(ctx.arg_error("exceed depth limit"));
        }
        if !v.is_heap() {
            return self.write_immediate(ctx, v);
        }
        if let Some(&i) = self.objects.get(&v.raw()) {
            self.byte(T_LINK);
            self.long(i as i64);
            return Ok(());
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        let limit = if limit > 0 { limit - 1 } else { limit };
        let ty = basic(v).obj_type();
        if matches!(ty, ObjType::Object | ObjType::Data | ObjType::String | ObjType::Array | ObjType::Hash | ObjType::Range) {
            let hooks = self.hooks_of(ctx, v)?;
            if hooks.marshal_dump {
                self.hook_calls += 1;
                let data = ctx.call(v, sym::MARSHAL_DUMP, &[])?;
                self.register(ctx, v);
                self.keep(ctx, data);
                self.write_class(ctx, T_USRMARSHAL, v, false)?;
                return self.write_object(ctx, data, limit);
            }
            if hooks.user_dump {
                return self.write_user_dump(ctx, v, limit);
            }
        }
        self.register(ctx, v);
        match ty {
            ObjType::Class => self.write_module(ctx, v),
            ObjType::Float => {
                self.byte(T_FLOAT);
                let s = float_repr(float::get(v));
                self.bytes(s.as_bytes());
                Ok(())
            }
            ObjType::Bignum => {
                let (sign, mag) = bignum::get(v).to_bytes_le();
                self.bignum_digits(sign == Sign::Minus, mag);
                Ok(())
            }
            ObjType::String => {
                let enc = enc_ivar(string::encoding(v));
                let ivars = self.ivars_of(ctx, v);
                let has = enc != EncIvar::None || !ivars.is_empty();
                if has {
                    self.byte(T_IVAR);
                }
                self.write_uclass(ctx, v, ctx.c().string)?;
                self.byte(T_STRING);
                self.bytes(string::bytes(v));
                if has {
                    self.write_ivars(ctx, enc, &ivars, limit)?;
                }
                Ok(())
            }
            ObjType::Array => {
                let ivars = self.ivars_of(ctx, v);
                if !ivars.is_empty() {
                    self.byte(T_IVAR);
                }
                self.write_uclass(ctx, v, ctx.c().array)?;
                self.byte(T_ARRAY);
                let n = array::len(v);
                self.long(n as i64);
                for i in 0..n {
                    // Re-read each time: a hook called for an element may change the Array.
                    let e = if i < array::len(v) { array::get(v, i) } else { Value::NIL };
                    self.write_object(ctx, e, limit)?;
                }
                if !ivars.is_empty() {
                    self.write_ivars(ctx, EncIvar::None, &ivars, limit)?;
                }
                Ok(())
            }
            ObjType::Hash => {
                // ENV is a Hash here but a plain Object without `_dump_data` in CRuby.
                if v == self.env {
                    return Err(ctx.type_error("no _dump_data is defined for class Object"));
                }
                self.write_hash(ctx, v, limit)
            }
            ObjType::Range => {
                self.write_class(ctx, T_OBJECT, v, true)?;
                let mut ivars = vec![
                    (ctx.intern("excl"), Value::bool(crate::core::range::excl(v))),
                    (ctx.intern("begin"), crate::core::range::begin(v)),
                    (ctx.intern("end"), crate::core::range::end(v)),
                ];
                ivars.extend(self.ivars_of(ctx, v));
                self.write_ivars(ctx, EncIvar::None, &ivars, limit)
            }
            ObjType::Object => {
                if object::is_a(ctx, v, ctx.c().weakmap) {
                    return Err(ctx.type_error("no _dump_data is defined for class ObjectSpace::WeakMap"));
                }
                self.write_class(ctx, T_OBJECT, v, true)?;
                let ivars = if object::is_a(ctx, v, ctx.c().exception) { self.exception_ivars(ctx, v) } else { self.ivars_of(ctx, v) };
                self.write_ivars(ctx, EncIvar::None, &ivars, limit)
            }
            ObjType::Data => self.write_data(ctx, v, limit),
            _ => {
                let name = object::class_name_of(ctx, v);
                Err(ctx.type_error(&format!("no _dump_data is defined for class {name}")))
            }
        }
    }

    fn write_immediate(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        match v {
            Value::NIL => self.byte(T_NIL),
            Value::TRUE => self.byte(T_TRUE),
            Value::FALSE => self.byte(T_FALSE),
            _ => {
                if let Some(n) = v.as_fixnum() {
                    if (-(1i64 << 30)..(1i64 << 30)).contains(&n) {
                        self.byte(T_FIXNUM);
                        self.long(n);
                    } else {
                        // CRuby writes it as a new Bignum, which takes an object index.
                        self.count += 1;
                        self.bignum_digits(n < 0, n.unsigned_abs().to_le_bytes().to_vec());
                    }
                } else if let Some(id) = v.as_symbol() {
                    self.symbol(ctx, id);
                } else if v.is_flonum() {
                    if let Some(&i) = self.objects.get(&v.raw()) {
                        self.byte(T_LINK);
                        self.long(i as i64);
                    } else {
                        self.register(ctx, v);
                        self.byte(T_FLOAT);
                        let s = float_repr(v.flonum_unchecked());
                        self.bytes(s.as_bytes());
                    }
                } else {
                    return Err(ctx.type_error("can't dump an internal value"));
                }
            }
        }
        Ok(())
    }

    /// The hooks `v` answers to, cached per class unless `respond_to?` is user-defined.
    fn hooks_of(&mut self, ctx: &mut Ctx, v: Value) -> Result<Hooks> {
        let klass = basic(v).klass;
        let cached = match self.hooks.get(&klass.raw()) {
            Some(h) => *h,
            None => {
                let user_rt = module::find_method(ctx, klass, sym::RESPOND_TO).is_some_and(|me| !matches!(me.body, module::MethodBody::Builtin { .. }));
                let h = if user_rt {
                    None
                } else {
                    let udump = ctx.intern("_dump");
                    Some(Hooks { marshal_dump: ctx.respond_to(v, sym::MARSHAL_DUMP, true), user_dump: ctx.respond_to(v, udump, true) })
                };
                self.keep(ctx, klass);
                self.hooks.insert(klass.raw(), h);
                h
            }
        };
        match cached {
            Some(h) => Ok(h),
            None => {
                self.hook_calls += 1;
                let marshal_dump = responds(ctx, v, sym::MARSHAL_DUMP)?;
                let user_dump = !marshal_dump && responds(ctx, v, ctx.intern("_dump"))?;
                Ok(Hooks { marshal_dump, user_dump })
            }
        }
    }

    /// An object dumped through `_dump(limit)`: the String it returns, with that String's
    /// encoding and instance variables; the object takes its index after them.
    fn write_user_dump(&mut self, ctx: &mut Ctx, v: Value, limit: i64) -> Result<()> {
        let udump = ctx.intern("_dump");
        self.hook_calls += 1;
        let data = ctx.call(v, udump, &[Value::fixnum(limit)])?;
        if !string::is_string(data) {
            return Err(ctx.type_error("_dump() must return string"));
        }
        self.keep(ctx, data);
        let enc = enc_ivar(string::encoding(data));
        let ivars = self.ivars_of(ctx, data);
        let has = enc != EncIvar::None || !ivars.is_empty();
        if has {
            self.byte(T_IVAR);
        }
        self.write_class(ctx, T_USERDEF, v, false)?;
        self.bytes(string::bytes(data));
        if has {
            self.write_ivars(ctx, enc, &ivars, limit)?;
        }
        self.register(ctx, v);
        Ok(())
    }

    fn write_module(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        if body(v).kind == ClassKind::Singleton {
            return Err(ctx.type_error("singleton class can't be dumped"));
        }
        let name = self.class_name(ctx, v)?;
        self.byte(if module::is_module(v) { T_MODULE } else { T_CLASS });
        let bytes = ctx.sym_name(name);
        self.bytes(&bytes);
        Ok(())
    }

    fn write_hash(&mut self, ctx: &mut Ctx, v: Value, limit: i64) -> Result<()> {
        let ivars = self.ivars_of(ctx, v);
        if !ivars.is_empty() {
            self.byte(T_IVAR);
        }
        self.write_uclass(ctx, v, ctx.c().hash)?;
        if basic(v).has(crate::core::hash::FL_IDENTITY) {
            self.byte(T_UCLASS);
            let name = self.class_name(ctx, ctx.c().hash)?;
            self.symbol(ctx, name);
        }
        if basic(v).has(crate::core::hash::FL_DEFAULT_PROC) {
            return Err(ctx.type_error("can't dump hash with default proc"));
        }
        let default = crate::core::hash::rhash(v).default;
        self.byte(if default.is_nil() { T_HASH } else { T_HASH_DEF });
        self.long(crate::core::hash::len(v) as i64);
        let dedup_keys = !basic(v).has(crate::core::hash::FL_IDENTITY);
        let mut i = 0;
        while let Some(e) = crate::core::hash::entry_at(v, i) {
            i += 1;
            if let Some((k, val)) = e {
                if dedup_keys {
                    self.write_hash_key(ctx, k, limit)?;
                } else {
                    self.write_object(ctx, k, limit)?;
                }
                self.write_object(ctx, val, limit)?;
            }
        }
        if !default.is_nil() {
            self.write_object(ctx, default, limit)?;
        }
        if !ivars.is_empty() {
            self.write_ivars(ctx, EncIvar::None, &ivars, limit)?;
        }
        Ok(())
    }

    /// A Hash key. CRuby interns a plain String key when it is stored (one frozen String
    /// per content), so equal keys are one object, written once and linked after; Carmine
    /// copies each key, so equal plain keys are linked here to give the same bytes.
    fn write_hash_key(&mut self, ctx: &mut Ctx, k: Value, limit: i64) -> Result<()> {
        let plain = k.is_heap()
            && basic(k).klass == ctx.c().string
            && object::is_frozen(k)
            && !basic(k).has(FL_EXIVAR)
            && !self.objects.contains_key(&k.raw());
        if !plain {
            return self.write_object(ctx, k, limit);
        }
        let enc = string::encoding(k);
        let h = crate::core::hash::hash_bytes(enc as u64, string::bytes(k));
        if let Some(list) = self.interned_keys.get(&h) {
            for &(other, idx) in list {
                if string::encoding(other) == enc && string::bytes(other) == string::bytes(k) {
                    if limit == 0 {
                        return Err(ctx.arg_error("exceed depth limit"));
                    }
                    self.byte(T_LINK);
                    self.long(idx as i64);
                    return Ok(());
                }
            }
        }
        let idx = self.count;
        self.write_object(ctx, k, limit)?;
        self.interned_keys.entry(h).or_default().push((k, idx));
        Ok(())
    }

    /// Rust-backed objects: Regexp, Struct and Data instances, and whatever defines
    /// `_dump_data`; everything else cannot be dumped.
    fn write_data(&mut self, ctx: &mut Ctx, v: Value, limit: i64) -> Result<()> {
        if let Some(re) = data_ref::<regexp::RegexpObj>(v) {
            let (source, opts, enc) = (re.source.clone(), re.opts, re.enc);
            let enc = enc_ivar(enc);
            let ivars = self.ivars_of(ctx, v);
            let has = enc != EncIvar::None || !ivars.is_empty();
            if has {
                self.byte(T_IVAR);
            }
            self.write_uclass(ctx, v, ctx.c().regexp)?;
            self.byte(T_REGEXP);
            self.bytes(&source);
            self.byte((opts & 0xff) as u8);
            if has {
                self.write_ivars(ctx, enc, &ivars, limit)?;
            }
            return Ok(());
        }
        if struct_::is_struct_obj(v) {
            let ivars = self.ivars_of(ctx, v);
            if !ivars.is_empty() {
                self.byte(T_IVAR);
            }
            self.write_class(ctx, T_STRUCT, v, true)?;
            let members = struct_::members_of(ctx, v)?;
            let values = struct_::values(ctx, v)?;
            let n = array::len(members);
            self.long(n as i64);
            for i in 0..n {
                let m = array::get(members, i).as_symbol().unwrap_or(sym::EMPTY);
                self.symbol(ctx, m);
                let e = if i < array::len(values) { array::get(values, i) } else { Value::NIL };
                self.write_object(ctx, e, limit)?;
            }
            if !ivars.is_empty() {
                self.write_ivars(ctx, EncIvar::None, &ivars, limit)?;
            }
            return Ok(());
        }
        if let Some(set) = data_ref::<crate::core::set::SetObj>(v) {
            let table = set.hash;
            return self.write_set(ctx, v, table, limit);
        }
        let dump_data = ctx.intern("_dump_data");
        self.hook_calls += 1;
        if responds(ctx, v, dump_data)? {
            let data = ctx.call(v, dump_data, &[])?;
            self.keep(ctx, data);
            self.write_class(ctx, T_DATA, v, true)?;
            return self.write_object(ctx, data, limit);
        }
        let name = object::class_name_of(ctx, v);
        if object::is_a(ctx, v, ctx.c().io) || crate::core::matchdata::is_match_data(v) {
            return Err(ctx.type_error(&format!("can't dump {name}")));
        }
        Err(ctx.type_error(&format!("no _dump_data is defined for class {name}")))
    }

    /// A Set as set.rb's object: `@hash`, a Hash from members to true with default false.
    fn write_set(&mut self, ctx: &mut Ctx, v: Value, table: Value, limit: i64) -> Result<()> {
        self.write_class(ctx, T_OBJECT, v, true)?;
        let ivars = self.ivars_of(ctx, v);
        self.long(1 + ivars.len() as i64);
        let id = ctx.intern("@hash");
        self.symbol(ctx, id);
        let limit = if limit > 0 { limit - 1 } else { limit };
        if table.is_nil() || !crate::core::hash::is_hash(table) {
            self.count += 1;
            self.out.extend_from_slice(&[T_HASH_DEF, 0, T_FALSE]);
        } else {
            self.register(ctx, table);
            if basic(table).has(crate::core::hash::FL_IDENTITY) {
                self.byte(T_UCLASS);
                let name = self.class_name(ctx, ctx.c().hash)?;
                self.symbol(ctx, name);
            }
            self.byte(T_HASH_DEF);
            self.long(crate::core::hash::len(table) as i64);
            let mut i = 0;
            while let Some(e) = crate::core::hash::entry_at(table, i) {
                i += 1;
                if let Some((k, _)) = e {
                    self.write_object(ctx, k, limit)?;
                    self.byte(T_TRUE);
                }
            }
            self.byte(T_FALSE);
        }
        for &(name, val) in &ivars {
            self.symbol(ctx, name);
            self.write_object(ctx, val, limit)?;
        }
        Ok(())
    }

    // ---- classes ----

    /// The name of a class or module as a symbol; anonymous ones cannot be dumped, nor
    /// ones whose name no longer leads to them.
    fn class_name(&mut self, ctx: &mut Ctx, k: Value) -> Result<SymId> {
        let id = self.class_name_unchecked(ctx, k)?;
        if !self.resolved.contains(&k.raw()) {
            let name = ctx.sym_name(id);
            let found = path_to_class(ctx, &name)?;
            if module::real_class(found) != module::real_class(k) {
                let text = String::from_utf8_lossy(&name).into_owned();
                return Err(ctx.type_error(&format!("{text} can't be referred to")));
            }
            self.resolved.insert(k.raw());
        }
        Ok(id)
    }

    /// The name of a class or module as a symbol; anonymous ones cannot be dumped.
    fn class_name_unchecked(&mut self, ctx: &mut Ctx, k: Value) -> Result<SymId> {
        if let Some(&id) = self.class_names.get(&k.raw()) {
            return Ok(id);
        }
        let b = body(k);
        let name = match b.name {
            Some(n) if !b.temporary_name => n,
            _ => {
                let path = crate::core::module_methods::class_path(ctx, k);
                let kind = if module::is_module(k) { "module" } else { "class" };
                return Err(ctx.type_error(&format!("can't dump anonymous {kind} {path}")));
            }
        };
        let id = ctx.intern_bytes(string::bytes(name));
        self.keep(ctx, k);
        self.class_names.insert(k.raw(), id);
        Ok(id)
    }

    /// The modules `v` was extended with (`e` records); with `check`, a singleton class
    /// that holds methods or instance variables of its own cannot be dumped.
    fn write_extended(&mut self, ctx: &mut Ctx, v: Value, check: bool) -> Result<()> {
        let k = basic(v).klass;
        if !module::is_class_or_module(k) || body(k).kind != ClassKind::Singleton {
            return Ok(());
        }
        if check {
            let b = body(k);
            let own_ivars = b.ivars.iter().any(|(n, _)| !is_internal_ivar(&ctx.sym_name(*n)));
            if !b.methods.is_empty() || own_ivars {
                return Err(ctx.type_error("singleton can't be dumped"));
            }
        }
        let real = module::real_class(k);
        let anc = module::ancestors(ctx, k);
        for &m in anc.iter() {
            if m == real {
                break;
            }
            if module::is_module(m) {
                let name = self.class_name_unchecked(ctx, m).map_err(|_| {
                    let path = crate::core::module_methods::class_path(ctx, m);
                    ctx.type_error(&format!("can't dump anonymous class {path}"))
                })?;
                self.byte(T_EXTENDED);
                self.symbol(ctx, name);
            }
        }
        Ok(())
    }

    /// Extended modules, then `ty` and the object's class name.
    fn write_class(&mut self, ctx: &mut Ctx, ty: u8, v: Value, check: bool) -> Result<()> {
        self.write_extended(ctx, v, check)?;
        let real = object::real_class_of(ctx, v);
        let name = self.class_name(ctx, real)?;
        self.byte(ty);
        self.symbol(ctx, name);
        Ok(())
    }

    /// Extended modules, then a `C` record when `v` is an instance of a subclass of the
    /// core class `base`.
    fn write_uclass(&mut self, ctx: &mut Ctx, v: Value, base: Value) -> Result<()> {
        self.write_extended(ctx, v, true)?;
        let real = object::real_class_of(ctx, v);
        if real != base {
            let name = self.class_name(ctx, real)?;
            self.byte(T_UCLASS);
            self.symbol(ctx, name);
        }
        Ok(())
    }

    // ---- instance variables ----

    fn is_internal(&mut self, ctx: &Ctx, name: SymId) -> bool {
        *self.internal.entry(name).or_insert_with(|| is_internal_ivar(&ctx.sym_name(name)))
    }

    /// The instance variables Marshal writes for `v` (Carmine's own are left out).
    fn ivars_of(&mut self, ctx: &mut Ctx, v: Value) -> Vec<(SymId, Value)> {
        let ty = basic(v).obj_type();
        if ty == ObjType::Object {
            // Read the slots directly: `ivar_list` copies the class's name list.
            let real = module::real_class(basic(v).klass);
            let names = &body(real).iv_names;
            // SAFETY: `v` is an RObject (type checked above).
            let o = unsafe { &*v.as_ptr::<crate::object::RObject>() };
            let mut list = Vec::with_capacity(names.len());
            for (i, &n) in names.iter().enumerate() {
                let val = o.ivar(i);
                if !val.is_undef() && !self.is_internal(ctx, n) {
                    list.push((n, val));
                }
            }
            return list;
        }
        if !basic(v).has(FL_EXIVAR) {
            return Vec::new();
        }
        let mut list = object::ivar_list(ctx, v);
        list.retain(|&(n, _)| !self.is_internal(ctx, n));
        list
    }

    /// An exception's state as CRuby names it (`mesg`, `bt`, then `cause` when there is
    /// one), followed by its other instance variables.
    fn exception_ivars(&mut self, ctx: &mut Ctx, v: Value) -> Vec<(SymId, Value)> {
        let mesg = exception::message_raw(ctx, v);
        let bt = exception::backtrace(ctx, v);
        self.keep(ctx, bt);
        let bt_locations = ctx.intern("bt_locations");
        let mut list = vec![(sym::MESG, mesg), (sym::BT, bt)];
        for (n, val) in self.ivars_of(ctx, v) {
            if n == sym::MESG || n == sym::BT || n == bt_locations || (n == sym::CAUSE && val.is_nil()) {
                continue;
            }
            list.push((n, val));
        }
        list
    }

    fn write_ivars(&mut self, ctx: &mut Ctx, enc: EncIvar, ivars: &[(SymId, Value)], limit: i64) -> Result<()> {
        let n = ivars.len() + usize::from(enc != EncIvar::None);
        self.long(n as i64);
        match enc {
            EncIvar::None => {}
            EncIvar::Short(utf8) => {
                self.symbol(ctx, self.sym_e);
                self.byte(if utf8 { T_TRUE } else { T_FALSE });
            }
            EncIvar::Named(e) => {
                let id = ctx.intern("encoding");
                self.symbol(ctx, id);
                let name = match self.enc_names.get(&e) {
                    Some(&s) => s,
                    None => {
                        let s = string::new_binary(ctx, encoding::name(e).as_bytes());
                        self.keep(ctx, s);
                        self.enc_names.insert(e, s);
                        s
                    }
                };
                self.write_object(ctx, name, limit)?;
            }
        }
        // `ivars` is a Rust Vec, which the collector does not see: once a hook has run
        // (and could have dropped the rest from their object), the rest are kept alive.
        let hooks_before = self.hook_calls;
        let mut kept = false;
        for (i, &(name, val)) in ivars.iter().enumerate() {
            if !kept && self.hook_calls != hooks_before {
                for &(_, rest) in &ivars[i..] {
                    self.keep(ctx, rest);
                }
                kept = true;
            }
            self.symbol(ctx, name);
            self.write_object(ctx, val, limit)?;
        }
        Ok(())
    }
}

/// CRuby's `w_long`: small values in one byte, others as 1-8 little-endian bytes preceded
/// by their count (negated for negative values).
pub(crate) fn write_long(out: &mut Vec<u8>, n: i64) {
    if n == 0 {
        out.push(0);
    } else if 0 < n && n < 123 {
        out.push((n + 5) as u8);
    } else if -124 < n && n < 0 {
        out.push(((n - 5) & 0xff) as u8);
    } else {
        let mut buf = [0u8; 9];
        let mut x = n;
        for i in 1..9 {
            buf[i] = (x & 0xff) as u8;
            x >>= 8;
            if x == 0 || x == -1 {
                buf[0] = if x == 0 { i as u8 } else { (-(i as i64)) as u8 };
                out.extend_from_slice(&buf[..=i]);
                return;
            }
        }
        out.extend_from_slice(&buf);
    }
}

fn enc_ivar(enc: u8) -> EncIvar {
    match enc {
        encoding::BINARY => EncIvar::None,
        encoding::US_ASCII => EncIvar::Short(false),
        encoding::UTF_8 => EncIvar::Short(true),
        e => EncIvar::Named(e),
    }
}

/// CRuby's text for a Float in Marshal: the shortest digits that read back exactly, in
/// positional form when the decimal point falls inside or just before them, otherwise as
/// `d.ddde±x`; `inf`, `-inf`, `nan`, `0` and `-0` for the special values.
pub(crate) fn float_repr(f: f64) -> FloatText {
    let mut t = FloatText { buf: [0; 40], len: 0 };
    if f.is_nan() {
        t.push(b"nan");
    } else if f.is_infinite() {
        t.push(if f > 0.0 { b"inf" } else { b"-inf" });
    } else if f == 0.0 {
        t.push(if f.is_sign_negative() { b"-0" } else { b"0" });
    } else {
        // Shortest round-trip digits from Rust's formatter, as `d.ddde<exp>`.
        let mut sci = [0u8; 40];
        let n = {
            let mut cur = std::io::Cursor::new(&mut sci[..]);
            let _ = std::io::Write::write_fmt(&mut cur, format_args!("{:e}", f.abs()));
            cur.position() as usize
        };
        let sci = &sci[..n];
        let epos = sci.iter().position(|&c| c == b'e').unwrap_or(n);
        let exp: i64 = std::str::from_utf8(&sci[epos + 1..]).ok().and_then(|e| e.parse().ok()).unwrap_or(0);
        let mut digits = [0u8; 24];
        let mut nd = 0;
        for &c in &sci[..epos] {
            if c.is_ascii_digit() && nd < digits.len() {
                digits[nd] = c;
                nd += 1;
            }
        }
        let digits = &digits[..nd];
        let ndigits = nd as i64;
        // The decimal point sits after `decpt` digits.
        let decpt = exp + 1;
        if f < 0.0 {
            t.push(b"-");
        }
        if decpt < -3 || decpt > ndigits {
            t.push(&digits[..1]);
            if ndigits > 1 {
                t.push(b".");
                t.push(&digits[1..]);
            }
            t.push(b"e");
            let e = (decpt - 1).to_string();
            t.push(e.as_bytes());
        } else if decpt > 0 {
            t.push(&digits[..decpt as usize]);
            if ndigits > decpt {
                t.push(b".");
                t.push(&digits[decpt as usize..]);
            }
        } else {
            t.push(b"0.");
            for _ in 0..-decpt {
                t.push(b"0");
            }
            t.push(digits);
        }
    }
    t
}

/// The text of a Float, on the stack (at most 17 digits, a sign, a point and an exponent).
pub(crate) struct FloatText {
    buf: [u8; 40],
    len: usize,
}

impl FloatText {
    fn push(&mut self, b: &[u8]) {
        let n = b.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&b[..n]);
        self.len += n;
    }

    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::{float_repr, write_long};

    fn long(n: i64) -> Vec<u8> {
        let mut v = Vec::new();
        write_long(&mut v, n);
        v
    }

    #[test]
    fn longs_as_cruby_writes_them() {
        assert_eq!(long(0), [0]);
        assert_eq!(long(5), [10]);
        assert_eq!(long(122), [127]);
        assert_eq!(long(123), [1, 123]);
        assert_eq!(long(-123), [128]);
        assert_eq!(long(-124), [255, 132]);
        assert_eq!(long(1234), [2, 210, 4]);
        assert_eq!(long(-1234), [254, 46, 251]);
        assert_eq!(long(-4_516_727), [253, 137, 20, 187]);
        assert_eq!(long(1 << 24), [4, 0, 0, 0, 1]);
        assert_eq!(long(-(1 << 24)), [253, 0, 0, 0]);
    }

    #[test]
    fn floats_as_cruby_writes_them() {
        let f = |x: f64| String::from_utf8(float_repr(x).as_bytes().to_vec()).unwrap();
        assert_eq!(f(0.0), "0");
        assert_eq!(f(-0.0), "-0");
        assert_eq!(f(1.0), "1");
        assert_eq!(f(100.0), "1e2");
        assert_eq!(f(123.4567), "123.4567");
        assert_eq!(f(-0.841), "-0.841");
        assert_eq!(f(0.0001), "0.0001");
        assert_eq!(f(1e-5), "1e-5");
        assert_eq!(f(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(f(12345678901234567.0), "12345678901234568");
        assert_eq!(f(1e20), "1e20");
        assert_eq!(f(-2.5e-5), "-2.5e-5");
        assert_eq!(f(f64::INFINITY), "inf");
        assert_eq!(f(f64::NEG_INFINITY), "-inf");
        assert_eq!(f(f64::NAN), "nan");
    }
}
