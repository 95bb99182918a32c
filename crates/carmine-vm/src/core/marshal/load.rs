//! `Marshal.load`: reads CRuby's format 4.8 from a String or from anything with `getbyte`
//! and `read`.
//!
//! Invariants:
//! - `objects` (a protected Ruby Array) holds every object read so far at its stream
//!   index; a slot is reserved (nil) before the elements of an object that is built only
//!   after them (Regexp, Range, Rational, Complex), so later indexes stay CRuby's.
//! - `symbols` holds the symbol table of the stream; a symbol's slot is reserved before
//!   its encoding is read, as the dumper numbers it.
//! - Every value read that is not yet reachable from the result (pending instance
//!   variables, classes looked up, modules to extend with) is pushed on `keep`.
//! - An object is "left" (frozen with `freeze: true`, then passed to the proc) once it is
//!   complete, its `I` instance variables included; a link is passed to the proc again
//!   unless its object is still being built or was made by `_load`/`marshal_load`
//!   (Ruby 3.4); symbol links never are.

use num_bigint::{BigInt, Sign};

use super::*;
use crate::core::module::{self, body, ClassKind};
use crate::core::{array, bignum, complex, encoding, float, object, rational, regexp, struct_};
use crate::object::basic;
use crate::symbol::{sym, SymId, SymMap};

enum Source {
    Bytes { data: Vec<u8>, pos: usize },
    /// An IO: read in chunks with `readpartial`; what was read past the end of the data
    /// is pushed back with `ungetbyte` when the load ends, so the next read (another
    /// `Marshal.load`) starts right after this object.
    Io { io: Value, buf: Vec<u8>, pos: usize },
    /// Any other object with `getbyte` and `read`: read byte by byte, never past the data.
    Duck(Value),
}

/// Bytes asked of an IO at a time.
const IO_CHUNK: usize = 64 * 1024;

/// What enclosing records ask of the object that follows: modules to extend it with
/// (`e`), a subclass of its core class (`C`), identity comparison for a Hash (`C:Hash`).
struct Pending {
    extmods: Vec<Value>,
    uclass: Value,
    identity: bool,
}

impl Pending {
    fn none() -> Pending {
        Pending { extmods: Vec::new(), uclass: Value::NIL, identity: false }
    }
}

pub struct Loader {
    src: Source,
    symbols: Vec<SymId>,
    objects: Value,
    keep: Value,
    proc_: Value,
    freeze: bool,
    classes: SymMap<Value>,
    /// With a proc: addresses of objects entered but not complete yet (links to them
    /// are not passed to the proc).
    unfinished: std::collections::HashSet<u64, std::hash::BuildHasherDefault<super::dump::AddrHasher>>,
}

impl Loader {
    pub fn load(ctx: &mut Ctx, source: Value, proc_: Value, freeze: bool) -> Result<Value> {
        let src = match string::try_to_str(ctx, source)? {
            Some(s) => Source::Bytes { data: string::bytes(s).to_vec(), pos: 0 },
            None => {
                let getbyte = ctx.intern("getbyte");
                if !ctx.respond_to(source, getbyte, false) || !ctx.respond_to(source, sym::READ, false) {
                    return Err(ctx.type_error("instance of IO needed"));
                }
                let binmode = ctx.intern("binmode");
                if ctx.respond_to(source, binmode, false) {
                    ctx.call(source, binmode, &[])?;
                }
                let buffered = object::is_a(ctx, source, ctx.c().io)
                    && ctx.respond_to(source, ctx.intern("readpartial"), false)
                    && ctx.respond_to(source, ctx.intern("ungetbyte"), false);
                if buffered {
                    Source::Io { io: source, buf: Vec::new(), pos: 0 }
                } else {
                    Source::Duck(source)
                }
            }
        };
        let objects = array::new(ctx);
        let keep = array::new(ctx);
        let mark = ctx.protect(objects);
        ctx.protect(keep);
        ctx.protect(source);
        ctx.protect(proc_);
        let mut l = Loader { src, symbols: Vec::new(), objects, keep, proc_, freeze, classes: SymMap::default(), unfinished: Default::default() };
        let mut r = l.run(ctx);
        if let Source::Io { io, buf, pos } = &l.src {
            if *pos < buf.len() {
                let rest = string::new_binary(ctx, &buf[*pos..]);
                let pushed = ctx.call_str(*io, "ungetbyte", &[rest]);
                if let (Ok(_), Err(e)) = (&r, pushed) {
                    r = Err(e);
                }
            }
        }
        ctx.unprotect(mark);
        r
    }

    /// Reads the next chunk of an IO source into its buffer; false at end of file.
    fn refill(&mut self, ctx: &mut Ctx, want: usize) -> Result<bool> {
        let Source::Io { io, .. } = &self.src else { return Ok(false) };
        let io = *io;
        let readpartial = ctx.intern("readpartial");
        let ask = want.clamp(IO_CHUNK, 256 * IO_CHUNK);
        let chunk = match ctx.call(io, readpartial, &[Value::fixnum(ask as i64)]) {
            Ok(c) => c,
            Err(e) if e.exception().is_some_and(|x| object::is_a(ctx, x, ctx.c().eof_error)) => return Ok(false),
            Err(e) => return Err(e),
        };
        if let Source::Io { buf, pos, .. } = &mut self.src {
            buf.drain(..*pos);
            *pos = 0;
            if !string::is_string(chunk) || string::len(chunk) == 0 {
                return Ok(false);
            }
            buf.extend_from_slice(string::bytes(chunk));
        }
        Ok(true)
    }

    fn run(&mut self, ctx: &mut Ctx) -> Result<Value> {
        let major = self.byte(ctx)?;
        let minor = self.byte(ctx)?;
        if major != MAJOR_VERSION || minor > MINOR_VERSION {
            return Err(ctx.type_error(&format!(
                "incompatible marshal file format (can't be read)\n\tformat version {MAJOR_VERSION}.{MINOR_VERSION} required; {major}.{minor} given"
            )));
        }
        self.object(ctx)
    }

    // ---- primitives ----

    fn too_short(ctx: &mut Ctx) -> crate::error::Unwind {
        ctx.arg_error("marshal data too short")
    }

    fn byte(&mut self, ctx: &mut Ctx) -> Result<u8> {
        match &mut self.src {
            Source::Bytes { data, pos } => match data.get(*pos) {
                Some(&b) => {
                    *pos += 1;
                    Ok(b)
                }
                None => Err(Self::too_short(ctx)),
            },
            Source::Io { buf, pos, .. } => {
                if let Some(&b) = buf.get(*pos) {
                    *pos += 1;
                    return Ok(b);
                }
                if !self.refill(ctx, 1)? {
                    return Err(crate::core::io::eof_error(ctx));
                }
                self.byte(ctx)
            }
            Source::Duck(io) => {
                let io = *io;
                let getbyte = ctx.intern("getbyte");
                let v = ctx.call(io, getbyte, &[])?;
                match v.as_fixnum() {
                    Some(b) => Ok(b as u8),
                    None if v.is_nil() => Err(crate::core::io::eof_error(ctx)),
                    None => Err(ctx.type_error("getbyte must return an Integer")),
                }
            }
        }
    }

    /// CRuby's `r_long`.
    fn long(&mut self, ctx: &mut Ctx) -> Result<i64> {
        let c = self.byte(ctx)? as i8 as i64;
        if c == 0 {
            return Ok(0);
        }
        if c > 0 {
            if 4 < c {
                return Ok(c - 5);
            }
            let mut x: i64 = 0;
            for i in 0..c {
                x |= (self.byte(ctx)? as i64) << (8 * i);
            }
            return Ok(x);
        }
        if c < -4 {
            return Ok(c + 5);
        }
        let n = -c;
        let mut x: i64 = -1;
        for i in 0..n {
            x &= !(0xff << (8 * i));
            x |= (self.byte(ctx)? as i64) << (8 * i);
        }
        Ok(x)
    }

    fn bytes_of_len(&mut self, ctx: &mut Ctx, n: i64) -> Result<Vec<u8>> {
        if n < 0 {
            return Err(ctx.arg_error("negative string size (or size too big)"));
        }
        let n = n as usize;
        match &mut self.src {
            Source::Bytes { data, pos } => {
                if data.len() - *pos < n {
                    return Err(Self::too_short(ctx));
                }
                let b = data[*pos..*pos + n].to_vec();
                *pos += n;
                Ok(b)
            }
            Source::Io { .. } => loop {
                if let Source::Io { buf, pos, .. } = &mut self.src {
                    if buf.len() - *pos >= n {
                        let b = buf[*pos..*pos + n].to_vec();
                        *pos += n;
                        return Ok(b);
                    }
                    let missing = n - (buf.len() - *pos);
                    if !self.refill(ctx, missing)? {
                        return Err(Self::too_short(ctx));
                    }
                }
            },
            Source::Duck(io) => {
                if n == 0 {
                    return Ok(Vec::new());
                }
                let io = *io;
                let s = ctx.call(io, sym::READ, &[Value::fixnum(n as i64)])?;
                if !string::is_string(s) || string::len(s) < n {
                    return Err(Self::too_short(ctx));
                }
                Ok(string::bytes(s).to_vec())
            }
        }
    }

    fn bytes(&mut self, ctx: &mut Ctx) -> Result<Vec<u8>> {
        let n = self.long(ctx)?;
        self.bytes_of_len(ctx, n)
    }

    fn keep(&mut self, ctx: &mut Ctx, v: Value) {
        if v.is_heap() {
            array::push(ctx, self.keep, v);
        }
    }

    /// Enters `v` at the next index.
    fn register(&mut self, ctx: &mut Ctx, v: Value) -> usize {
        let i = array::len(self.objects);
        array::push(ctx, self.objects, v);
        if !self.proc_.is_nil() && v.is_heap() {
            self.unfinished.insert(v.raw());
        }
        i
    }

    // ---- symbols ----

    fn symbol(&mut self, ctx: &mut Ctx) -> Result<SymId> {
        let b = self.byte(ctx)?;
        match b {
            T_SYMBOL => self.symbol_body(ctx, false),
            T_SYMLINK => self.symlink(ctx),
            T_IVAR => {
                let b = self.byte(ctx)?;
                if b != T_SYMBOL {
                    return Err(ctx.arg_error(&format!("dump format error for symbol(0x{b:x})")));
                }
                self.symbol_body(ctx, true)
            }
            _ => Err(ctx.arg_error(&format!("dump format error for symbol(0x{b:x})"))),
        }
    }

    fn symlink(&mut self, ctx: &mut Ctx) -> Result<SymId> {
        let i = self.long(ctx)?;
        match usize::try_from(i).ok().and_then(|i| self.symbols.get(i)) {
            Some(&id) => Ok(id),
            None => Err(ctx.arg_error("bad symbol")),
        }
    }

    /// A symbol's name (and, with `ivars`, its encoding, which the name's bytes already
    /// determine here).
    fn symbol_body(&mut self, ctx: &mut Ctx, ivars: bool) -> Result<SymId> {
        let slot = self.symbols.len();
        self.symbols.push(sym::EMPTY);
        let name = self.bytes(ctx)?;
        if ivars {
            let n = self.long(ctx)?;
            for _ in 0..n {
                self.symbol(ctx)?;
                self.object(ctx)?;
            }
        }
        let id = ctx.intern_bytes(&name);
        self.symbols[slot] = id;
        Ok(id)
    }

    // ---- classes ----

    /// The class or module named `path` ("A::B").
    fn path_to_class(&mut self, ctx: &mut Ctx, path: SymId) -> Result<Value> {
        if let Some(&k) = self.classes.get(&path) {
            return Ok(k);
        }
        let name = ctx.sym_name(path);
        let scope = super::path_to_class(ctx, &name)?;
        self.keep(ctx, scope);
        self.classes.insert(path, scope);
        Ok(scope)
    }

    fn class_named(&mut self, ctx: &mut Ctx, path: SymId) -> Result<Value> {
        let k = self.path_to_class(ctx, path)?;
        if !module::is_class(k) {
            return Err(ctx.arg_error(&format!("{} does not refer to class", ctx.sym_str(path))));
        }
        Ok(k)
    }

    fn read_class(&mut self, ctx: &mut Ctx) -> Result<Value> {
        let path = self.symbol(ctx)?;
        self.class_named(ctx, path)
    }

    // ---- objects ----

    pub fn object(&mut self, ctx: &mut Ctx) -> Result<Value> {
        self.object0(ctx, false, None, Pending::none())
    }

    /// One record. `partial`: the caller completes the object (its `I` instance
    /// variables) and leaves it. `ivp`: set when `I` instance variables follow; a record
    /// that consumes them itself (`u`, `/`, `:`) clears it.
    fn object0(&mut self, ctx: &mut Ctx, partial: bool, ivp: Option<&mut bool>, mut pend: Pending) -> Result<Value> {
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        let ty = self.byte(ctx)?;
        match ty {
            T_LINK => {
                let i = self.long(ctx)?;
                let v = match usize::try_from(i).ok().filter(|&i| i < array::len(self.objects)) {
                    Some(i) => array::get(self.objects, i),
                    None => return Err(ctx.arg_error("dump format error (unlinked)")),
                };
                if self.proc_.is_nil() || self.unfinished.contains(&v.raw()) {
                    Ok(v)
                } else {
                    self.call_proc(ctx, v)
                }
            }
            T_IVAR => {
                let mut iv = true;
                let v = self.object0(ctx, true, Some(&mut iv), pend)?;
                if iv {
                    self.ivars(ctx, v)?;
                }
                self.leave(ctx, v, partial)
            }
            T_EXTENDED => {
                let path = self.symbol(ctx)?;
                let m = self.path_to_class(ctx, path)?;
                if !module::is_module(m) {
                    return Err(ctx.arg_error("dump format error (user class)"));
                }
                pend.extmods.push(m);
                self.object0(ctx, partial, ivp, pend)
            }
            T_UCLASS => {
                let k = self.read_class(ctx)?;
                if body(k).kind == ClassKind::Singleton {
                    return Err(ctx.type_error("singleton can't be loaded"));
                }
                if k == ctx.c().hash {
                    pend.identity = true;
                } else {
                    pend.uclass = k;
                }
                self.object0(ctx, partial, ivp, pend)
            }
            T_NIL => self.leave(ctx, Value::NIL, partial),
            T_TRUE => self.leave(ctx, Value::TRUE, partial),
            T_FALSE => self.leave(ctx, Value::FALSE, partial),
            T_FIXNUM => {
                let n = self.long(ctx)?;
                self.leave(ctx, Value::fixnum(n), partial)
            }
            T_FLOAT => {
                let b = self.bytes(ctx)?;
                let text = b.split(|&c| c == 0).next().unwrap_or(&[]);
                let f = match text {
                    b"nan" => f64::NAN,
                    b"inf" => f64::INFINITY,
                    b"-inf" => f64::NEG_INFINITY,
                    _ => float::parse_float(text, false).unwrap_or(0.0),
                };
                let v = float::new(ctx, f);
                self.register(ctx, v);
                self.leave(ctx, v, partial)
            }
            T_BIGNUM => {
                let sign = self.byte(ctx)?;
                let n = self.long(ctx)?;
                let mag = self.bytes_of_len(ctx, n.saturating_mul(2))?;
                let big = BigInt::from_bytes_le(if sign == b'-' { Sign::Minus } else { Sign::Plus }, &mag);
                let v = bignum::normalize(ctx, big);
                self.register(ctx, v);
                self.leave(ctx, v, partial)
            }
            T_STRING => {
                let b = self.bytes(ctx)?;
                let v = string::new_with_enc(ctx, b, encoding::BINARY);
                self.apply_uclass(ctx, v, &pend, ctx.c().string)?;
                self.register(ctx, v);
                self.extend(ctx, v, &pend)?;
                self.leave(ctx, v, partial)
            }
            T_REGEXP => self.regexp(ctx, partial, ivp, pend),
            T_ARRAY => {
                let n = self.long(ctx)?;
                let v = array::with_capacity(ctx, n.clamp(0, 1 << 16) as usize);
                self.apply_uclass(ctx, v, &pend, ctx.c().array)?;
                self.register(ctx, v);
                self.extend(ctx, v, &pend)?;
                for _ in 0..n {
                    let e = self.object(ctx)?;
                    array::push(ctx, v, e);
                }
                self.leave(ctx, v, partial)
            }
            T_HASH | T_HASH_DEF => {
                let n = self.long(ctx)?;
                let v = crate::core::hash::new(ctx);
                self.apply_uclass(ctx, v, &pend, ctx.c().hash)?;
                if pend.identity {
                    basic(v).flags |= crate::core::hash::FL_IDENTITY;
                }
                self.register(ctx, v);
                self.extend(ctx, v, &pend)?;
                for _ in 0..n {
                    let k = self.object(ctx)?;
                    let val = self.object(ctx)?;
                    crate::core::hash::aset(ctx, v, k, val)?;
                }
                if ty == T_HASH_DEF {
                    let d = self.object(ctx)?;
                    crate::core::hash::rhash(v).default = d;
                }
                self.leave(ctx, v, partial)
            }
            T_STRUCT => self.structure(ctx, partial, pend),
            T_USERDEF => {
                let k = self.read_class(ctx)?;
                let b = self.bytes(ctx)?;
                let data = string::new_with_enc(ctx, b, encoding::BINARY);
                self.keep(ctx, data);
                if let Some(iv) = ivp {
                    if *iv {
                        self.ivars(ctx, data)?;
                        *iv = false;
                    }
                }
                let load = ctx.intern("_load");
                if !ctx.respond_to(k, load, true) {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    return Err(ctx.type_error(&format!("class {name} needs to have method '_load'")));
                }
                let v = ctx.call(k, load, &[data])?;
                self.register(ctx, v);
                self.extend(ctx, v, &pend)?;
                self.leave_user_loaded(ctx, v, partial)
            }
            T_USRMARSHAL => {
                let k = self.read_class(ctx)?;
                if k == ctx.c().rational || k == ctx.c().complex {
                    return self.numeric_pair(ctx, k, partial);
                }
                let v = object::allocate(ctx, k)?;
                self.extend(ctx, v, &pend)?;
                self.register(ctx, v);
                let mload = ctx.intern("marshal_load");
                if !responds(ctx, v, mload)? {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    return Err(ctx.type_error(&format!("instance of {name} needs to have method 'marshal_load'")));
                }
                let data = self.object(ctx)?;
                ctx.call(v, mload, &[data])?;
                self.leave_user_loaded(ctx, v, partial)
            }
            T_OBJECT => {
                let k = self.read_class(ctx)?;
                if module::includes_module(ctx, k, ctx.c().range) {
                    return self.range(ctx, k, partial, pend);
                }
                let v = object::allocate(ctx, k)?;
                if crate::core::set::is_set(v) {
                    return self.set(ctx, v, partial, pend);
                }
                if basic(v).obj_type() != crate::object::ObjType::Object {
                    return Err(ctx.arg_error("dump format error"));
                }
                self.register(ctx, v);
                self.extend(ctx, v, &pend)?;
                self.ivars(ctx, v)?;
                self.leave(ctx, v, partial)
            }
            T_DATA => {
                let k = self.read_class(ctx)?;
                let v = object::allocate(ctx, k)?;
                if basic(v).obj_type() != crate::object::ObjType::Data {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    return Err(ctx.arg_error(&format!("dump format error: {name} is not a wrapped C pointer")));
                }
                self.register(ctx, v);
                let load_data = ctx.intern("_load_data");
                if !responds(ctx, v, load_data)? {
                    let name = crate::core::module_methods::class_path(ctx, k);
                    return Err(ctx.type_error(&format!("class {name} needs to have instance method '_load_data'")));
                }
                let data = self.object(ctx)?;
                ctx.call(v, load_data, &[data])?;
                self.leave(ctx, v, partial)
            }
            T_CLASS | T_MODULE | T_MODULE_OLD => {
                let b = self.bytes(ctx)?;
                let path = ctx.intern_bytes(&b);
                let k = self.path_to_class(ctx, path)?;
                let text = String::from_utf8_lossy(&b).into_owned();
                if ty == T_CLASS && !module::is_class(k) {
                    return Err(ctx.arg_error(&format!("{text} does not refer to class")));
                }
                if ty == T_MODULE && !module::is_module(k) {
                    return Err(ctx.arg_error(&format!("{text} does not refer to module")));
                }
                self.register(ctx, k);
                self.leave(ctx, k, partial)
            }
            T_SYMBOL => {
                let with_ivars = match ivp {
                    Some(iv) if *iv => {
                        *iv = false;
                        true
                    }
                    _ => false,
                };
                let id = self.symbol_body(ctx, with_ivars)?;
                self.leave(ctx, Value::symbol(id), partial)
            }
            T_SYMLINK => {
                let id = self.symlink(ctx)?;
                Ok(Value::symbol(id))
            }
            _ => Err(ctx.arg_error(&format!("dump format error(0x{ty:x})"))),
        }
    }

    /// A complete object: frozen with `freeze: true` (Strings deduplicated), then given
    /// to the proc, whose result replaces it.
    fn leave(&mut self, ctx: &mut Ctx, v: Value, partial: bool) -> Result<Value> {
        if partial {
            return Ok(v);
        }
        let mut v = v;
        if !self.proc_.is_nil() {
            self.unfinished.remove(&v.raw());
        }
        if self.freeze && v.is_heap() && !module::is_class_or_module(v) {
            if string::is_plain_string(v) && !basic(v).has(crate::object::FL_EXIVAR) {
                v = crate::core::string_methods::fstring(ctx, v)?;
            } else {
                object::freeze(v);
            }
        }
        if self.proc_.is_nil() {
            return Ok(v);
        }
        self.call_proc(ctx, v)
    }

    /// The proc given to `load` (anything with `call`) applied to `v`.
    fn call_proc(&mut self, ctx: &mut Ctx, v: Value) -> Result<Value> {
        if crate::object::is_type(self.proc_, crate::object::ObjType::Proc) {
            ctx.call_proc(self.proc_, &[v], None)
        } else {
            ctx.call_str(self.proc_, "call", &[v])
        }
    }

    /// `leave` for an object made by `_load` or `marshal_load`: links to it are not
    /// passed to the proc (as in CRuby 3.4).
    fn leave_user_loaded(&mut self, ctx: &mut Ctx, v: Value, partial: bool) -> Result<Value> {
        let r = self.leave(ctx, v, partial)?;
        if !self.proc_.is_nil() && v.is_heap() {
            self.unfinished.insert(v.raw());
        }
        Ok(r)
    }

    /// `C` made the object an instance of a subclass of its core class `base`.
    fn apply_uclass(&mut self, ctx: &mut Ctx, v: Value, pend: &Pending, base: Value) -> Result<()> {
        let k = pend.uclass;
        if k.is_nil() {
            return Ok(());
        }
        if !module::includes_module(ctx, k, base) {
            return Err(ctx.arg_error("dump format error (user class)"));
        }
        basic(v).klass = k;
        crate::heap::write_barrier(v, k);
        Ok(())
    }

    /// Extends `v` with the modules of `e` records, innermost (last written) first.
    fn extend(&mut self, ctx: &mut Ctx, v: Value, pend: &Pending) -> Result<()> {
        for &m in pend.extmods.iter().rev() {
            let s = object::singleton_class(ctx, v)?;
            if !module::includes_module(ctx, s, m) {
                body(s).includes.push(m);
                ctx.vm().bump_method_epoch();
            }
        }
        Ok(())
    }

    /// Instance variables of `v`: a String's `E`/`encoding` set its encoding.
    fn ivars(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        let n = self.long(ctx)?;
        for _ in 0..n {
            let name = self.symbol(ctx)?;
            let val = self.object(ctx)?;
            self.set_ivar(ctx, v, name, val)?;
        }
        Ok(())
    }

    fn set_ivar(&mut self, ctx: &mut Ctx, v: Value, name: SymId, val: Value) -> Result<()> {
        if string::is_string(v) {
            if let Some(enc) = encoding_ivar(ctx, name, val)? {
                string::set_encoding(v, enc);
                return Ok(());
            }
        }
        if name == ctx.intern("bt_locations") {
            return Ok(());
        }
        object::ivar_set_raw(ctx, v, name, val);
        Ok(())
    }

    fn regexp(&mut self, ctx: &mut Ctx, partial: bool, ivp: Option<&mut bool>, pend: Pending) -> Result<Value> {
        let source = self.bytes(ctx)?;
        let opts = self.byte(ctx)? as u32;
        let slot = self.register(ctx, Value::NIL);
        let mut enc = encoding::BINARY;
        let mut others: Vec<(SymId, Value)> = Vec::new();
        if let Some(iv) = ivp {
            if *iv {
                *iv = false;
                let n = self.long(ctx)?;
                for _ in 0..n {
                    let name = self.symbol(ctx)?;
                    let val = self.object(ctx)?;
                    match encoding_ivar(ctx, name, val)? {
                        Some(e) => enc = e,
                        None => {
                            self.keep(ctx, val);
                            others.push((name, val));
                        }
                    }
                }
            }
        }
        let k = if pend.uclass.is_nil() { ctx.c().regexp } else { pend.uclass };
        if !module::includes_module(ctx, k, ctx.c().regexp) {
            return Err(ctx.arg_error("dump format error (user class)"));
        }
        let ruby_opts = opts & (regexp::IGNORECASE | regexp::EXTENDED | regexp::MULTILINE | regexp::FIXEDENCODING | regexp::NOENCODING);
        let v = regexp::new_regexp(ctx, k, &source, ruby_opts, enc)?;
        array::set(self.objects, slot, v);
        self.extend(ctx, v, &pend)?;
        for (name, val) in others {
            ctx.check_frozen(v)?;
            object::ivar_set_raw(ctx, v, name, val);
        }
        self.leave(ctx, v, partial)
    }

    fn structure(&mut self, ctx: &mut Ctx, partial: bool, pend: Pending) -> Result<Value> {
        let k = self.read_class(ctx)?;
        let Some(members) = struct_::members_of_class(ctx, k) else {
            let name = crate::core::module_methods::class_path(ctx, k);
            return Err(ctx.type_error(&format!("class {name} not a struct")));
        };
        let n = self.long(ctx)?;
        if n != array::len(members) as i64 {
            let name = crate::core::module_methods::class_path(ctx, k);
            return Err(ctx.type_error(&format!("struct {name} not compatible (struct size differs)")));
        }
        let v = struct_::alloc_struct(ctx, k)?;
        self.register(ctx, v);
        self.extend(ctx, v, &pend)?;
        let values = struct_::values(ctx, v)?;
        for i in 0..n as usize {
            let slot = self.symbol(ctx)?;
            let want = array::get(members, i).as_symbol().unwrap_or(sym::EMPTY);
            if slot != want {
                let name = crate::core::module_methods::class_path(ctx, k);
                let (a, b) = (ctx.sym_str(slot), ctx.sym_str(want));
                return Err(ctx.type_error(&format!("struct {name} not compatible (:{a} for :{b})")));
            }
            let val = self.object(ctx)?;
            array::set(values, i, val);
        }
        if module::includes_module(ctx, k, ctx.c().data) {
            object::freeze(v);
        }
        self.leave(ctx, v, partial)
    }

    /// `o:Range`: a Range built from its `excl`, `begin` and `end` instance variables.
    fn range(&mut self, ctx: &mut Ctx, k: Value, partial: bool, pend: Pending) -> Result<Value> {
        let slot = self.register(ctx, Value::NIL);
        let n = self.long(ctx)?;
        let (mut b, mut e, mut excl) = (Value::NIL, Value::NIL, Value::FALSE);
        let mut others: Vec<(SymId, Value)> = Vec::new();
        for _ in 0..n {
            let name = self.symbol(ctx)?;
            let val = self.object(ctx)?;
            self.keep(ctx, val);
            match &*ctx.sym_name(name) {
                b"begin" => b = val,
                b"end" => e = val,
                b"excl" => excl = val,
                _ => others.push((name, val)),
            }
        }
        let v = object::allocate(ctx, k)?;
        // Range's own initialize, not a subclass's (CRuby sets the fields directly).
        let init = ctx.intern("initialize");
        match module::find_method(ctx, ctx.c().range, init).map(|me| me.body.clone()) {
            Some(module::MethodBody::Builtin { f, .. }) => {
                f(ctx, v, &Args::new(&[b, e, excl]))?;
            }
            _ => {
                ctx.call(v, init, &[b, e, excl])?;
            }
        }
        array::set(self.objects, slot, v);
        self.extend(ctx, v, &pend)?;
        for (name, val) in others {
            object::ivar_set_raw(ctx, v, name, val);
        }
        self.leave(ctx, v, partial)
    }

    /// `o:Set`: set.rb's `@hash` becomes the member table.
    fn set(&mut self, ctx: &mut Ctx, v: Value, partial: bool, pend: Pending) -> Result<Value> {
        self.register(ctx, v);
        self.extend(ctx, v, &pend)?;
        let n = self.long(ctx)?;
        let hash_id = ctx.intern("@hash");
        for _ in 0..n {
            let name = self.symbol(ctx)?;
            let val = self.object(ctx)?;
            if name == hash_id && crate::core::hash::is_hash(val) {
                crate::core::hash::rhash(val).default = Value::NIL;
                if let Some(o) = crate::object::data_ref::<crate::core::set::SetObj>(v) {
                    o.hash = val;
                }
            } else {
                object::ivar_set_raw(ctx, v, name, val);
            }
        }
        self.leave(ctx, v, partial)
    }

    /// `U:Rational` / `U:Complex`: frozen numbers built from their two parts.
    fn numeric_pair(&mut self, ctx: &mut Ctx, k: Value, partial: bool) -> Result<Value> {
        let slot = self.register(ctx, Value::NIL);
        let data = self.object(ctx)?;
        let kind = if k == ctx.c().rational { "rational" } else { "complex" };
        if !array::is_array(data) || array::len(data) != 2 {
            let len = if array::is_array(data) { array::len(data) as i64 } else { 0 };
            return Err(ctx.arg_error(&format!("marshaled {kind} must have an array whose length is 2 but {len}")));
        }
        let (a, b) = (array::get(data, 0), array::get(data, 1));
        let v = if k == ctx.c().rational {
            if !crate::core::integer::is_integer(a) || !crate::core::integer::is_integer(b) {
                return Err(ctx.type_error("not an integer"));
            }
            rational::new_reduced(ctx, a, b)?
        } else {
            complex::new_rect(ctx, a, b)?
        };
        array::set(self.objects, slot, v);
        self.leave(ctx, v, partial)
    }
}

/// The encoding an `E` or `encoding` instance variable names, if `name` is one of them.
fn encoding_ivar(ctx: &mut Ctx, name: SymId, val: Value) -> Result<Option<u8>> {
    let text = ctx.sym_name(name);
    if &*text == b"E" {
        return Ok(Some(if val.truthy() { encoding::UTF_8 } else { encoding::US_ASCII }));
    }
    if &*text == b"encoding" && string::is_string(val) {
        let n = string::to_rust_string_lossy(val);
        return match encoding::find(&n) {
            Some(e) => Ok(Some(e)),
            None => Err(ctx.arg_error(&format!("unknown encoding name - {n}"))),
        };
    }
    Ok(None)
}
