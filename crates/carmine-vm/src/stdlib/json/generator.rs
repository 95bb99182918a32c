//! `JSON::Ext::Generator`: `State` (the formatting options and the nesting depth) and the
//! `GeneratorMethods` modules whose `to_json` methods `json/common.rb` mixes into the core
//! classes.
//!
//! Invariants:
//! - A generation walks plain Hashes, Arrays, Strings, Integers, Floats, nil, true and
//!   false in Rust; any other object (a subclass too, as json 2.6 checks the exact class)
//!   is asked for `to_json(state)`, whose String is copied in, or else for `to_s`.
//! - The depth lives in the State object; it is written back before Ruby code runs
//!   (a nested `to_json(state)` continues from it) and read again afterwards.
//! - Strings are escaped as json 2.6 does: UTF-8 is checked (GeneratorError "partial
//!   character in source, but hit end" / "source sequence is illegal/malformed utf-8"),
//!   control characters become `\uXXXX` (lowercase hex), `/` only with `escape_slash`,
//!   everything non-ASCII with `ascii_only`.
//! - Arrays and Hashes are walked by position, re-reading their length, so Ruby code that
//!   mutates them cannot make the walk read out of bounds; Hashes are marked as iterated.

use super::error;
use crate::core::encoding::{BINARY, US_ASCII, UTF_8};
use crate::core::module::{body, AllocKind};
use crate::core::{array, bignum, float, hash, integer, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::object::{basic, data_ref, ObjType};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone)]
pub struct StateObj {
    indent: Vec<u8>,
    space: Vec<u8>,
    space_before: Vec<u8>,
    object_nl: Vec<u8>,
    array_nl: Vec<u8>,
    allow_nan: bool,
    ascii_only: bool,
    escape_slash: bool,
    max_nesting: i64,
    depth: i64,
    buffer_initial_length: i64,
}

crate::data_obj!(StateObj);

impl Default for StateObj {
    fn default() -> StateObj {
        StateObj {
            indent: Vec::new(),
            space: Vec::new(),
            space_before: Vec::new(),
            object_nl: Vec::new(),
            array_nl: Vec::new(),
            allow_nan: false,
            ascii_only: false,
            escape_slash: false,
            max_nesting: 100,
            depth: 0,
            buffer_initial_length: 1024,
        }
    }
}

fn alloc(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(StateObj::default())))
}

fn state_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut StateObj> {
    match data_ref::<StateObj>(v) {
        Some(s) => Ok(s),
        None => {
            let cname = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {cname} (expected JSON/Generator/State)")))
        }
    }
}

fn state_class(ctx: &mut Ctx) -> Value {
    let json = super::json_module(ctx);
    let ext = super::module_under(ctx, json, "Ext");
    let gen = super::module_under(ctx, ext, "Generator");
    let obj = ctx.c().object;
    super::class_under(ctx, gen, "State", obj)
}

/// `State.from_state(opts)`: a State as is, a new State configured by a Hash, else a new
/// default State.
fn from_state(ctx: &mut Ctx, opts: Value) -> Result<Value> {
    if data_ref::<StateObj>(opts).is_some() {
        return Ok(opts);
    }
    let k = state_class(ctx);
    if hash::is_hash(opts) {
        return ctx.call(k, sym::NEW, &[opts]);
    }
    ctx.call(k, sym::NEW, &[])
}

fn s_from_state(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    from_state(ctx, args.pos[0])
}

// ---- configuration ----

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    state_of(ctx, recv)?;
    if let Some(&opts) = args.pos.first() {
        if !opts.is_nil() {
            configure(ctx, recv, &Args::new(&[opts]))?;
        }
    }
    Ok(Value::NIL)
}

fn initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let orig = state_of(ctx, args.pos[0])?.clone();
    *state_of(ctx, recv)? = orig;
    Ok(recv)
}

/// The String option `v` as bytes (TypeError for anything else).
fn string_option(ctx: &mut Ctx, v: Value) -> Result<Vec<u8>> {
    if !string::is_string(v) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
    }
    Ok(string::bytes(v).to_vec())
}

fn fixnum_option(ctx: &mut Ctx, v: Value) -> Result<i64> {
    match v.as_fixnum() {
        Some(i) => Ok(i),
        None => {
            let cname = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {cname} (expected Fixnum)")))
        }
    }
}

/// `configure(opts)` (alias `merge`): json 2.6 resets `max_nesting` and `depth` to their
/// defaults and the flags to false unless `opts` gives them.
fn configure(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let opts = match hash::try_to_hash(ctx, args.pos[0])? {
        Some(h) => h,
        None => {
            let cname = object::class_name_of(ctx, args.pos[0]);
            let to_h = ctx.intern("to_h");
            if !ctx.respond_to(args.pos[0], to_h, true) {
                return Err(ctx.type_error(&format!("can't convert {cname} into Hash")));
            }
            let h = ctx.call(args.pos[0], to_h, &[])?;
            if !hash::is_hash(h) {
                let got = object::class_name_of(ctx, h);
                return Err(ctx.type_error(&format!("can't convert {cname} to Hash ({cname}#to_h gives {got})")));
            }
            h
        }
    };
    let mut st = state_of(ctx, recv)?.clone();
    let get = |ctx: &mut Ctx, name: &str| -> Result<Option<Value>> {
        let key = Value::symbol(ctx.intern(name));
        hash::lookup(ctx, opts, key)
    };
    for (name, field) in [("indent", 0), ("space", 1), ("space_before", 2), ("object_nl", 3), ("array_nl", 4)] {
        if let Some(v) = get(ctx, name)? {
            if v.truthy() {
                let b = string_option(ctx, v)?;
                *match field {
                    0 => &mut st.indent,
                    1 => &mut st.space,
                    2 => &mut st.space_before,
                    3 => &mut st.object_nl,
                    _ => &mut st.array_nl,
                } = b;
            }
        }
    }
    st.max_nesting = 100;
    if let Some(v) = get(ctx, "max_nesting")? {
        st.max_nesting = if v.truthy() { fixnum_option(ctx, v)? } else { 0 };
    }
    st.depth = 0;
    if let Some(v) = get(ctx, "depth")? {
        st.depth = if v.truthy() { fixnum_option(ctx, v)? } else { 0 };
    }
    if let Some(v) = get(ctx, "buffer_initial_length")? {
        if v.truthy() {
            let n = fixnum_option(ctx, v)?;
            if n > 0 {
                st.buffer_initial_length = n;
            }
        }
    }
    st.allow_nan = get(ctx, "allow_nan")?.is_some_and(|v| v.truthy());
    st.ascii_only = get(ctx, "ascii_only")?.is_some_and(|v| v.truthy());
    st.escape_slash = get(ctx, "escape_slash")?.is_some_and(|v| v.truthy());
    *state_of(ctx, recv)? = st;
    Ok(recv)
}

fn to_h(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = state_of(ctx, recv)?.clone();
    let h = hash::new(ctx);
    for (id, v) in object::ivar_list(ctx, recv) {
        let name = ctx.vm().symbols.name(id);
        let key = Value::symbol(ctx.intern_bytes(name.strip_prefix(b"@").unwrap_or(&name)));
        hash::aset(ctx, h, key, v)?;
    }
    let strs = [("indent", &st.indent), ("space", &st.space), ("space_before", &st.space_before), ("object_nl", &st.object_nl), ("array_nl", &st.array_nl)];
    for (name, b) in strs {
        let key = Value::symbol(ctx.intern(name));
        let v = string::new_from_bytes(ctx, b);
        hash::aset(ctx, h, key, v)?;
    }
    let rest = [
        ("allow_nan", Value::bool(st.allow_nan)),
        ("ascii_only", Value::bool(st.ascii_only)),
        ("max_nesting", Value::fixnum(st.max_nesting)),
        ("escape_slash", Value::bool(st.escape_slash)),
        ("depth", Value::fixnum(st.depth)),
        ("buffer_initial_length", Value::fixnum(st.buffer_initial_length)),
    ];
    for (name, v) in rest {
        let key = Value::symbol(ctx.intern(name));
        hash::aset(ctx, h, key, v)?;
    }
    Ok(h)
}

/// `state[name]`: the reader `name` if the State has one, else the ivar `@name`.
fn aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = ctx.call_str(args.pos[0], "to_s", &[])?;
    let name = string::to_rust_string_lossy(name);
    let id = ctx.intern(&name);
    if ctx.respond_to(recv, id, false) {
        return ctx.call(recv, id, &[]);
    }
    let ivar = ctx.intern(&format!("@{name}"));
    Ok(object::ivar_get(ctx, recv, ivar))
}

fn aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = ctx.call_str(args.pos[0], "to_s", &[])?;
    let name = string::to_rust_string_lossy(name);
    let writer = ctx.intern(&format!("{name}="));
    if ctx.respond_to(recv, writer, false) {
        return ctx.call(recv, writer, &[args.pos[1]]);
    }
    let ivar = ctx.intern(&format!("@{name}"));
    object::ivar_set(ctx, recv, ivar, args.pos[1])?;
    Ok(Value::NIL)
}

macro_rules! string_accessors {
    ($($get:ident, $set:ident, $field:ident;)*) => {$(
        fn $get(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
            let b = state_of(ctx, recv)?.$field.clone();
            Ok(string::new_from_bytes(ctx, &b))
        }
        fn $set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
            let b = string_option(ctx, args.pos[0])?;
            state_of(ctx, recv)?.$field = b;
            Ok(args.pos[0])
        }
    )*};
}

string_accessors! {
    indent, set_indent, indent;
    space, set_space, space;
    space_before, set_space_before, space_before;
    object_nl, set_object_nl, object_nl;
    array_nl, set_array_nl, array_nl;
}

fn max_nesting(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(state_of(ctx, recv)?.max_nesting))
}

fn set_max_nesting(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = fixnum_option(ctx, args.pos[0])?;
    state_of(ctx, recv)?.max_nesting = n;
    Ok(args.pos[0])
}

fn depth(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(state_of(ctx, recv)?.depth))
}

fn set_depth(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = fixnum_option(ctx, args.pos[0])?;
    state_of(ctx, recv)?.depth = n;
    Ok(args.pos[0])
}

fn buffer_initial_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(state_of(ctx, recv)?.buffer_initial_length))
}

fn set_buffer_initial_length(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = fixnum_option(ctx, args.pos[0])?;
    if n > 0 {
        state_of(ctx, recv)?.buffer_initial_length = n;
    }
    Ok(args.pos[0])
}

fn escape_slash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(state_of(ctx, recv)?.escape_slash))
}

fn set_escape_slash(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    state_of(ctx, recv)?.escape_slash = args.pos[0].truthy();
    Ok(args.pos[0])
}

fn check_circular_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(state_of(ctx, recv)?.max_nesting != 0))
}

fn allow_nan_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(state_of(ctx, recv)?.allow_nan))
}

fn ascii_only_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(state_of(ctx, recv)?.ascii_only))
}

// ---- generation ----

/// One generation: the options copied out of the State, the output and the depth.
struct Gen {
    st: StateObj,
    state: Value,
    out: Vec<u8>,
}

impl Gen {
    fn new(ctx: &mut Ctx, state: Value) -> Result<Gen> {
        let st = state_of(ctx, state)?.clone();
        let cap = st.buffer_initial_length.clamp(0, 1 << 20) as usize;
        Ok(Gen { st, state, out: Vec::with_capacity(cap) })
    }

    /// Runs Ruby code with the State's depth up to date.
    fn call_out(&mut self, ctx: &mut Ctx, f: impl FnOnce(&mut Ctx) -> Result<Value>) -> Result<Value> {
        self.sync_depth();
        let r = f(ctx);
        if let Some(s) = data_ref::<StateObj>(self.state) {
            self.st.depth = s.depth;
        }
        r
    }

    fn sync_depth(&self) {
        if let Some(s) = data_ref::<StateObj>(self.state) {
            s.depth = self.st.depth;
        }
    }

    fn finish(self, ctx: &mut Ctx) -> Value {
        self.sync_depth();
        string::new_with_enc(ctx, self.out, UTF_8)
    }

    fn indent(&mut self, depth: i64) {
        if !self.st.indent.is_empty() {
            for _ in 0..depth {
                self.out.extend_from_slice(&self.st.indent);
            }
        }
    }

    fn nesting_error(&mut self, ctx: &mut Ctx) -> Unwind {
        self.st.depth -= 1;
        self.sync_depth();
        error(ctx, "NestingError", format!("nesting of {} is too deep", self.st.depth).as_bytes())
    }

    fn value(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        if let Some(i) = v.as_fixnum() {
            push_int(&mut self.out, i);
            return Ok(());
        }
        if v.is_flonum() {
            return self.float(ctx, v);
        }
        if v.is_nil() {
            self.out.extend_from_slice(b"null");
            return Ok(());
        }
        if v == Value::TRUE {
            self.out.extend_from_slice(b"true");
            return Ok(());
        }
        if v == Value::FALSE {
            self.out.extend_from_slice(b"false");
            return Ok(());
        }
        if v.is_heap() {
            let klass = basic(v).klass;
            let c = ctx.c();
            if klass == c.hash {
                return self.object(ctx, v);
            }
            if klass == c.array {
                return self.array(ctx, v);
            }
            if klass == c.string {
                return self.string(ctx, v);
            }
            if basic(v).obj_type() == ObjType::Bignum {
                self.out.extend_from_slice(integer::to_s_base(v, 10).as_bytes());
                return Ok(());
            }
            if klass == c.float {
                return self.float(ctx, v);
            }
        }
        self.other(ctx, v)
    }

    /// Any other object: its `to_json(state)`, or its `to_s` as a JSON string.
    fn other(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        let to_json = ctx.intern("to_json");
        let state = self.state;
        let klass = crate::interp::class_of(ctx, v);
        let default_to_json = crate::core::module::find_method_ref(ctx, klass, to_json).is_some_and(|me| {
            me.visibility == crate::core::module::Visibility::Public && matches!(me.body, crate::core::module::MethodBody::Builtin { f, .. } if std::ptr::eq(f as *const (), object_to_json as *const ()))
        });
        if default_to_json {
            // `GeneratorMethods::Object#to_json` is `to_s` as a JSON string: done here
            // without a State copy and an intermediate String.
            let s = self.call_out(ctx, |ctx| ctx.call(v, sym::TO_S, &[]))?;
            if !string::is_string(s) {
                let cname = object::class_name_of(ctx, s);
                return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
            }
            return self.string(ctx, s);
        }
        if ctx.respond_to(v, to_json, false) {
            let s = self.call_out(ctx, |ctx| ctx.call(v, to_json, &[state]))?;
            if !string::is_string(s) {
                let cname = object::class_name_of(ctx, s);
                return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
            }
            self.out.extend_from_slice(string::bytes(s));
            return Ok(());
        }
        let s = self.call_out(ctx, |ctx| ctx.call(v, sym::TO_S, &[]))?;
        self.string(ctx, s)
    }

    fn float(&mut self, ctx: &mut Ctx, v: Value) -> Result<()> {
        let f = float::get(v);
        if !self.st.allow_nan && !f.is_finite() {
            let line = if f.is_nan() { 1003 } else { 1000 };
            return Err(error(ctx, "GeneratorError", format!("{line}: {} not allowed in JSON", float::to_s(f)).as_bytes()));
        }
        self.out.extend_from_slice(float::to_s(f).as_bytes());
        Ok(())
    }

    fn enter(&mut self, ctx: &mut Ctx) -> Result<i64> {
        self.st.depth += 1;
        let depth = self.st.depth;
        if self.st.max_nesting != 0 && depth > self.st.max_nesting {
            return Err(self.nesting_error(ctx));
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        Ok(depth)
    }

    fn array(&mut self, ctx: &mut Ctx, a: Value) -> Result<()> {
        let depth = self.enter(ctx)?;
        self.out.push(b'[');
        self.out.extend_from_slice(&self.st.array_nl);
        let mut i = 0;
        while i < array::len(a) {
            if i > 0 {
                self.out.push(b',');
                self.out.extend_from_slice(&self.st.array_nl);
            }
            self.indent(depth);
            let e = array::get(a, i);
            self.value(ctx, e)?;
            i += 1;
        }
        self.st.depth -= 1;
        if !self.st.array_nl.is_empty() {
            self.out.extend_from_slice(&self.st.array_nl);
            self.indent(depth - 1);
        }
        self.out.push(b']');
        Ok(())
    }

    fn object(&mut self, ctx: &mut Ctx, h: Value) -> Result<()> {
        let depth = self.enter(ctx)?;
        self.out.push(b'{');
        hash::with_iteration(ctx, h, |ctx| {
            let mut i = 0;
            let mut n = 0;
            while let Some(e) = hash::entry_at(h, i) {
                i += 1;
                let Some((k, v)) = e else { continue };
                if n > 0 {
                    self.out.push(b',');
                }
                n += 1;
                self.out.extend_from_slice(&self.st.object_nl);
                self.indent(depth);
                if string::is_string(k) {
                    self.string(ctx, k)?;
                } else if let Some(id) = k.as_symbol() {
                    let name = ctx.vm().symbols.name(id);
                    self.string_bytes(ctx, &name, UTF_8)?;
                } else {
                    let s = self.call_out(ctx, |ctx| ctx.call(k, sym::TO_S, &[]))?;
                    if !string::is_string(s) {
                        let cname = object::class_name_of(ctx, s);
                        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
                    }
                    self.string(ctx, s)?;
                }
                self.out.extend_from_slice(&self.st.space_before);
                self.out.push(b':');
                self.out.extend_from_slice(&self.st.space);
                self.value(ctx, v)?;
            }
            Ok(())
        })?;
        self.st.depth -= 1;
        if !self.st.object_nl.is_empty() {
            self.out.extend_from_slice(&self.st.object_nl);
            self.indent(depth - 1);
        }
        self.out.push(b'}');
        Ok(())
    }

    fn string(&mut self, ctx: &mut Ctx, s: Value) -> Result<()> {
        let enc = string::encoding(s);
        if enc == UTF_8 || enc == US_ASCII || enc == BINARY || string::is_7bit(s) {
            // The bytes are taken as they are (a binary String that is not UTF-8 fails
            // the check below, as the failed conversion leaves it unchanged in json 2.6).
            let b = string::bytes(s);
            return self.string_bytes(ctx, b, enc);
        }
        let utf8 = string::new_us_ascii(ctx, "UTF-8");
        let conv = match self.call_out(ctx, |ctx| ctx.call_str(s, "encode", &[utf8])) {
            Ok(c) if string::is_string(c) => c,
            Ok(_) => s,
            Err(Unwind::Raise(_)) => s,
            Err(e) => return Err(e),
        };
        let b = string::bytes(conv);
        self.string_bytes(ctx, b, UTF_8)
    }

    fn string_bytes(&mut self, ctx: &mut Ctx, b: &[u8], _enc: u8) -> Result<()> {
        self.out.push(b'"');
        let r = if self.st.ascii_only { escape_ascii(&mut self.out, b, self.st.escape_slash) } else { escape_utf8(&mut self.out, b, self.st.escape_slash) };
        if let Err(msg) = r {
            return Err(error(ctx, "GeneratorError", msg.as_bytes()));
        }
        self.out.push(b'"');
        Ok(())
    }
}

fn push_int(out: &mut Vec<u8>, i: i64) {
    let mut buf = [0u8; 24];
    let mut p = buf.len();
    let neg = i < 0;
    let mut n = i.unsigned_abs();
    loop {
        p -= 1;
        buf[p] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if neg {
        p -= 1;
        buf[p] = b'-';
    }
    out.extend_from_slice(&buf[p..]);
}

const PARTIAL: &str = "partial character in source, but hit end";
const MALFORMED: &str = "source sequence is illegal/malformed utf-8";

/// Extra bytes announced by a UTF-8 lead byte (0 for ASCII and continuation bytes; up to 5
/// for the obsolete 0xF8-0xFD forms, as in ConvertUTF).
fn trailing_bytes(c: u8) -> usize {
    match c {
        0..=0xBF => 0,
        0xC0..=0xDF => 1,
        0xE0..=0xEF => 2,
        0xF0..=0xF7 => 3,
        0xF8..=0xFB => 4,
        _ => 5,
    }
}

/// ConvertUTF's `isLegalUTF8` for the sequence `s`.
fn legal_utf8(s: &[u8]) -> bool {
    let len = s.len();
    if !(1..=4).contains(&len) {
        return false;
    }
    let first = s[0];
    if len >= 2 {
        for &a in &s[2..] {
            if !(0x80..=0xBF).contains(&a) {
                return false;
            }
        }
        let a = s[1];
        if a > 0xBF {
            return false;
        }
        let ok = match first {
            0xE0 => a >= 0xA0,
            0xED => a <= 0x9F,
            0xF0 => a >= 0x90,
            0xF4 => a <= 0x8F,
            _ => a >= 0x80,
        };
        if !ok {
            return false;
        }
    }
    if (0x80..0xC2).contains(&first) {
        return false;
    }
    first <= 0xF4
}

/// Bytes that need an escape (or a UTF-8 check) in a JSON string body.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i < 0x20 || i == b'"' as usize || i == b'\\' as usize || i >= 0x80;
        i += 1;
    }
    t
};

fn push_u_escape(out: &mut Vec<u8>, c: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(&[b'\\', b'u', HEX[(c >> 12 & 15) as usize], HEX[(c >> 8 & 15) as usize], HEX[(c >> 4 & 15) as usize], HEX[(c & 15) as usize]]);
}

fn push_control(out: &mut Vec<u8>, c: u8) {
    match c {
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x08 => out.extend_from_slice(b"\\b"),
        _ => push_u_escape(out, c as u32),
    }
}

fn escape_utf8(out: &mut Vec<u8>, b: &[u8], escape_slash: bool) -> std::result::Result<(), &'static str> {
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if !(SPECIAL[c as usize] || (c == b'/' && escape_slash)) {
            i += 1;
            continue;
        }
        if c >= 0x80 {
            // A byte above 0x7F: the String is not ASCII-only, so it is checked.
            let n = 1 + trailing_bytes(c);
            if i + n > b.len() {
                return Err(PARTIAL);
            }
            if !legal_utf8(&b[i..i + n]) {
                return Err(MALFORMED);
            }
            i += n;
            continue;
        }
        out.extend_from_slice(&b[start..i]);
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            _ => push_control(out, c),
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&b[start..]);
    Ok(())
}

fn escape_ascii(out: &mut Vec<u8>, b: &[u8], escape_slash: bool) -> std::result::Result<(), &'static str> {
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let extra = trailing_bytes(c);
        if i + extra >= b.len() {
            return Err(PARTIAL);
        }
        if !legal_utf8(&b[i..i + extra + 1]) {
            return Err(MALFORMED);
        }
        if extra == 0 {
            match c {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'/' if escape_slash => out.extend_from_slice(b"\\/"),
                0x20..=0x7f => out.push(c),
                _ => push_control(out, c),
            }
            i += 1;
            continue;
        }
        let mut ch = (c as u32) & (0x7F >> (extra + 1));
        for &d in &b[i + 1..i + 1 + extra] {
            ch = (ch << 6) | (d as u32 & 0x3F);
        }
        i += extra + 1;
        if (0xD800..=0xDFFF).contains(&ch) || ch > 0x10FFFF {
            push_u_escape(out, 0xFFFD);
        } else if ch <= 0xFFFF {
            push_u_escape(out, ch);
        } else {
            let c = ch - 0x10000;
            push_u_escape(out, 0xD800 + (c >> 10));
            push_u_escape(out, 0xDC00 + (c & 0x3FF));
        }
    }
    Ok(())
}

/// Generates `v` with `state` through `f` (one of the `Gen` walkers).
fn generate_with(ctx: &mut Ctx, state: Value, v: Value, f: fn(&mut Gen, &mut Ctx, Value) -> Result<()>) -> Result<Value> {
    let mut g = Gen::new(ctx, state)?;
    let r = f(&mut g, ctx, v);
    if r.is_err() {
        g.sync_depth();
    }
    r?;
    Ok(g.finish(ctx))
}

fn generate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    generate_with(ctx, recv, args.pos[0], Gen::value)
}

// ---- GeneratorMethods ----

fn arg_state(ctx: &mut Ctx, args: &Args) -> Result<Value> {
    from_state(ctx, args.pos.first().copied().unwrap_or(Value::NIL))
}

fn object_to_json(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = ctx.call(recv, sym::TO_S, &[])?;
    if !string::is_string(s) {
        let cname = object::class_name_of(ctx, s);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
    }
    let state = arg_state(ctx, args)?;
    generate_with(ctx, state, s, Gen::string)
}

fn hash_to_json(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let state = arg_state(ctx, args)?;
    generate_with(ctx, state, recv, Gen::object)
}

fn array_to_json(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let state = arg_state(ctx, args)?;
    generate_with(ctx, state, recv, Gen::array)
}

fn integer_to_json(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arg_state(ctx, args)?;
    let s = if let Some(i) = recv.as_fixnum() { i.to_string() } else if bignum::is_bignum(recv) { integer::to_s_base(recv, 10) } else { return Err(ctx.type_error("not an Integer")) };
    Ok(string::new_utf8(ctx, &s))
}

fn float_to_json(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let state = arg_state(ctx, args)?;
    generate_with(ctx, state, recv, Gen::float)
}

fn string_to_json(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let state = arg_state(ctx, args)?;
    generate_with(ctx, state, recv, Gen::string)
}

fn literal(ctx: &mut Ctx, args: &Args, text: &str) -> Result<Value> {
    arg_state(ctx, args)?;
    Ok(string::new_utf8(ctx, text))
}

fn true_to_json(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    literal(ctx, args, "true")
}

fn false_to_json(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    literal(ctx, args, "false")
}

fn nil_to_json(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    literal(ctx, args, "null")
}

/// `{JSON.create_id => class name, "raw" => bytes}`.
fn to_json_raw_object(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = hash::new(ctx);
    let json = super::json_module(ctx);
    let id = ctx.call_str(json, "create_id", &[])?;
    let k = object::real_class_of(ctx, recv);
    let name = ctx.call_str(k, "name", &[])?;
    hash::aset(ctx, h, id, name)?;
    let fmt = string::new_us_ascii(ctx, "C*");
    let raw = ctx.call_str(recv, "unpack", &[fmt])?;
    let key = string::new_us_ascii(ctx, "raw");
    hash::aset(ctx, h, key, raw)?;
    Ok(h)
}

fn to_json_raw(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = to_json_raw_object(ctx, recv, args)?;
    let to_json = ctx.intern("to_json");
    ctx.call(h, to_json, args.pos)
}

/// `String.json_create(o)`: the String whose bytes are `o["raw"]`.
fn string_json_create(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let o = hash::to_hash_arg(ctx, args.pos[0])?;
    let key = string::new_us_ascii(ctx, "raw");
    let raw = hash::aref(ctx, o, key)?;
    let fmt = string::new_us_ascii(ctx, "C*");
    ctx.call_str(raw, "pack", &[fmt])
}

/// `GeneratorMethods::String.included(klass)`: the class also gets `json_create`.
fn string_included(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let ext = super::const_of(ctx, recv, "Extend").unwrap_or(Value::NIL);
    ctx.call_str(args.pos[0], "extend", &[ext])
}

pub fn init(ctx: &mut Ctx) {
    let json = super::json_module(ctx);
    let ext = super::module_under(ctx, json, "Ext");
    let gen = super::module_under(ctx, ext, "Generator");
    let obj = ctx.c().object;
    let state = super::class_under(ctx, gen, "State", obj);
    body(state).alloc = AllocKind::Data(alloc);
    crate::methods!(ctx, state, [
        ("from_state", s_from_state, [1], Unsafe, Singleton),
        ("initialize", initialize, [0..=1], Unsafe, Private),
        ("initialize_copy", initialize_copy, [1], Unsafe, Private),
        ("indent", indent, [0], Unsafe),
        ("indent=", set_indent, [1], Unsafe),
        ("space", space, [0], Unsafe),
        ("space=", set_space, [1], Unsafe),
        ("space_before", space_before, [0], Unsafe),
        ("space_before=", set_space_before, [1], Unsafe),
        ("object_nl", object_nl, [0], Unsafe),
        ("object_nl=", set_object_nl, [1], Unsafe),
        ("array_nl", array_nl, [0], Unsafe),
        ("array_nl=", set_array_nl, [1], Unsafe),
        ("max_nesting", max_nesting, [0], Safe),
        ("max_nesting=", set_max_nesting, [1], Unsafe),
        ("escape_slash", escape_slash, [0], Safe),
        ("escape_slash?", escape_slash, [0], Safe),
        ("escape_slash=", set_escape_slash, [1], Unsafe),
        ("check_circular?", check_circular_p, [0], Safe),
        ("allow_nan?", allow_nan_p, [0], Safe),
        ("ascii_only?", ascii_only_p, [0], Safe),
        ("depth", depth, [0], Safe),
        ("depth=", set_depth, [1], Unsafe),
        ("buffer_initial_length", buffer_initial_length, [0], Safe),
        ("buffer_initial_length=", set_buffer_initial_length, [1], Unsafe),
        ("configure", configure, [1], Unsafe),
        ("to_h", to_h, [0], Unsafe),
        ("[]", aref, [1], Unsafe),
        ("[]=", aset, [2], Unsafe),
        ("generate", generate, [1], Unsafe),
    ]);
    crate::core::define_alias(ctx, state, "merge", "configure");
    crate::core::define_alias(ctx, state, "to_hash", "to_h");

    let gm = super::module_under(ctx, gen, "GeneratorMethods");
    let m = super::module_under(ctx, gm, "Object");
    crate::methods!(ctx, m, [("to_json", object_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "Hash");
    crate::methods!(ctx, m, [("to_json", hash_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "Array");
    crate::methods!(ctx, m, [("to_json", array_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "Integer");
    crate::methods!(ctx, m, [("to_json", integer_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "Float");
    crate::methods!(ctx, m, [("to_json", float_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "String");
    crate::methods!(ctx, m, [
        ("included", string_included, [1], Unsafe, Singleton),
        ("to_json", string_to_json, [0..=1], Unsafe),
        ("to_json_raw_object", to_json_raw_object, [0], Unsafe),
        ("to_json_raw", to_json_raw, [0..], Unsafe),
    ]);
    let extend = super::module_under(ctx, m, "Extend");
    crate::methods!(ctx, extend, [("json_create", string_json_create, [1], Unsafe)]);
    let m = super::module_under(ctx, gm, "TrueClass");
    crate::methods!(ctx, m, [("to_json", true_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "FalseClass");
    crate::methods!(ctx, m, [("to_json", false_to_json, [0..=1], Unsafe)]);
    let m = super::module_under(ctx, gm, "NilClass");
    crate::methods!(ctx, m, [("to_json", nil_to_json, [0..=1], Unsafe)]);
}
