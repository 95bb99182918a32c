//! Marshal: CRuby's binary object format 4.8, byte for byte (`dump.rs` writes it,
//! `load.rs` reads it, `compat.rs` gives Time, Rational, Complex and Encoding the
//! `_dump`/`marshal_dump` hooks through which CRuby marshals them).
//!
//! Invariants:
//! - Object indexes follow CRuby's order exactly: an object takes the next index when its
//!   own record starts (before its elements and instance variables), except an object
//!   dumped through `_dump`, which takes it after the instance variables of the String
//!   `_dump` returned. A Fixnum outside 31 bits is written in Bignum form and takes an index
//!   without ever being linked to (CRuby converts it to a fresh Bignum each time).
//! - Every value the dumper or the loader holds outside the object graph (the results of
//!   `_dump`/`marshal_dump`, objects already read, classes looked up) sits in a Ruby Array
//!   kept on `ctx.protect` while the operation runs: Rust maps hold only indexes, symbol
//!   ids and addresses of values that Array keeps alive, so no address is ever reused
//!   during one dump.
//! - Instance variables whose names start with `__` are Carmine's own bookkeeping and are
//!   never written; exception state (`mesg`, `bt`, `cause`) is written as CRuby names it.
//! - Objects CRuby marshals through hooks or as other types are written in CRuby's form:
//!   Time/Encoding through `_dump`, Rational/Complex/Random through `marshal_dump`, Set as
//!   set.rb's object with `@hash`, Range as an object with `excl`/`begin`/`end`.
//! - Both directions recurse on the native stack (one Rust frame per nesting level) and
//!   raise `SystemStackError` before the stack runs out.

mod compat;
mod dump;
mod load;

pub use dump::Dumper;
pub use load::Loader;

use crate::core::{hash, integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const MAJOR_VERSION: u8 = 4;
pub const MINOR_VERSION: u8 = 8;

// Type bytes of the format.
pub(crate) const T_NIL: u8 = b'0';
pub(crate) const T_TRUE: u8 = b'T';
pub(crate) const T_FALSE: u8 = b'F';
pub(crate) const T_FIXNUM: u8 = b'i';
pub(crate) const T_EXTENDED: u8 = b'e';
pub(crate) const T_UCLASS: u8 = b'C';
pub(crate) const T_OBJECT: u8 = b'o';
pub(crate) const T_DATA: u8 = b'd';
pub(crate) const T_USERDEF: u8 = b'u';
pub(crate) const T_USRMARSHAL: u8 = b'U';
pub(crate) const T_FLOAT: u8 = b'f';
pub(crate) const T_BIGNUM: u8 = b'l';
pub(crate) const T_STRING: u8 = b'"';
pub(crate) const T_REGEXP: u8 = b'/';
pub(crate) const T_ARRAY: u8 = b'[';
pub(crate) const T_HASH: u8 = b'{';
pub(crate) const T_HASH_DEF: u8 = b'}';
pub(crate) const T_STRUCT: u8 = b'S';
pub(crate) const T_MODULE_OLD: u8 = b'M';
pub(crate) const T_CLASS: u8 = b'c';
pub(crate) const T_MODULE: u8 = b'm';
pub(crate) const T_SYMBOL: u8 = b':';
pub(crate) const T_SYMLINK: u8 = b';';
pub(crate) const T_IVAR: u8 = b'I';
pub(crate) const T_LINK: u8 = b'@';

/// Whether an instance variable is Carmine's own bookkeeping (never marshaled).
pub(crate) fn is_internal_ivar(name: &[u8]) -> bool {
    name.starts_with(b"__")
}

/// `respond_to?(mid, true)` as CRuby's `rb_obj_respond_to`: a user-defined `respond_to?`
/// is asked, otherwise the method table (private methods included).
pub(crate) fn responds(ctx: &mut Ctx, v: Value, mid: crate::symbol::SymId) -> Result<bool> {
    let klass = crate::interp::class_of(ctx, v);
    if let Some(me) = crate::core::module::find_method(ctx, klass, crate::symbol::sym::RESPOND_TO) {
        if !matches!(me.body, crate::core::module::MethodBody::Builtin { .. }) {
            let r = ctx.call(v, crate::symbol::sym::RESPOND_TO, &[Value::symbol(mid), Value::TRUE])?;
            return Ok(r.truthy());
        }
    }
    Ok(ctx.respond_to(v, mid, true))
}

/// The class or module named `name` ("A::B"), as CRuby's `rb_path_to_class`: ArgumentError
/// "undefined class/module A::B" when a segment is missing.
pub(crate) fn path_to_class(ctx: &mut Ctx, name: &[u8]) -> Result<Value> {
    let object = ctx.c().object;
    let mut scope = object;
    let mut start = 0;
    loop {
        let end = name[start..].windows(2).position(|w| w == b"::").map_or(name.len(), |p| start + p);
        if !crate::core::module::is_class_or_module(scope) {
            let outer = String::from_utf8_lossy(&name[..start.saturating_sub(2)]).into_owned();
            return Err(ctx.type_error(&format!("{outer} does not refer to class/module")));
        }
        let id = ctx.intern_bytes(&name[start..end]);
        scope = match crate::interp::ops::const_in_ancestors(ctx, scope, id, scope != object)? {
            Some(v) => v,
            None => {
                let prefix = String::from_utf8_lossy(&name[..end]).into_owned();
                return Err(ctx.arg_error(&format!("undefined class/module {prefix}")));
            }
        };
        if end == name.len() {
            break;
        }
        start = end + 2;
    }
    if !crate::core::module::is_class_or_module(scope) {
        return Err(ctx.type_error(&format!("{} does not refer to class/module", String::from_utf8_lossy(name))));
    }
    Ok(scope)
}

/// `Marshal.dump(obj, port = nil, limit = -1)`.
fn m_dump(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = args.pos[0];
    let (mut port, mut limit) = (Value::NIL, -1i64);
    match args.pos.len() {
        2 => {
            let a = args.pos[1];
            if a.is_fixnum() {
                limit = a.as_fixnum().unwrap_or(-1);
            } else {
                port = a;
            }
        }
        3 => {
            port = args.pos[1];
            limit = integer::to_i64_arg(ctx, args.pos[2])?;
        }
        _ => {}
    }
    let write = crate::symbol::sym::WRITE;
    if !port.is_nil() {
        if !ctx.respond_to(port, write, false) {
            return Err(ctx.type_error("instance of IO needed"));
        }
        let binmode = ctx.intern("binmode");
        if ctx.respond_to(port, binmode, false) {
            ctx.call(port, binmode, &[])?;
        }
    }
    let bytes = Dumper::dump(ctx, obj, limit)?;
    let s = string::new_with_enc(ctx, bytes, crate::core::encoding::BINARY);
    if port.is_nil() {
        return Ok(s);
    }
    ctx.call(port, write, &[s])?;
    Ok(port)
}

/// `Marshal.load(source, proc = nil, freeze: false)`.
fn m_load(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let source = args.pos[0];
    let proc_ = args.pos.get(1).copied().unwrap_or(Value::NIL);
    let mut freeze = false;
    if let Some(h) = args.kw.filter(|h| hash::is_hash(*h)) {
        let key = Value::symbol(ctx.intern("freeze"));
        let mut unknown = Vec::new();
        for (k, v) in hash::pairs(h) {
            if k == key {
                freeze = v.truthy();
            } else {
                unknown.push(crate::core::object::inspect_string(ctx, k)?);
            }
        }
        if !unknown.is_empty() {
            let s = if unknown.len() == 1 { "" } else { "s" };
            return Err(ctx.arg_error(&format!("unknown keyword{s}: {}", unknown.join(", "))));
        }
    }
    Loader::load(ctx, source, proc_, freeze)
}

pub fn init(ctx: &mut Ctx) {
    let m = ctx.c().marshal;
    for (name, v) in [("MAJOR_VERSION", MAJOR_VERSION), ("MINOR_VERSION", MINOR_VERSION)] {
        let id = ctx.intern(name);
        crate::core::module::body(m).const_set(id, Value::fixnum(v as i64));
    }
    crate::methods!(ctx, m, [
        ("dump", m_dump, [1..=3], Unsafe, ModuleFunction),
        ("load", m_load, [1..=2], Unsafe, ModuleFunction, Kw),
    ]);
    crate::core::define_alias(ctx, m, "restore", "load");
    let single = crate::core::object::singleton_class(ctx, m).expect("singleton class of Marshal");
    crate::core::define_alias(ctx, single, "restore", "load");
    compat::init(ctx);
}
