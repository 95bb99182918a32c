//! Conversions: Kernel#Integer and Kernel#Float, the strict conversions (CRuby's
//! `rb_Integer` / `rb_Float`) shared by `format` and the numeric classes; and implicit
//! conversion calls (`to_ary`, `to_hash`, …) with CRuby's `rb_check_funcall` semantics.
//!
//! Invariants:
//! - Strings are parsed strictly (whole string, single underscores between digits,
//!   surrounding whitespace only); other objects go through `to_int`/`to_i` or `to_f`. The
//!   `exception: false` keyword turns a raised error into nil, as CRuby does.
//! - `check_funcall` consults a user-defined `respond_to?`, and lets an object whose
//!   `method_missing` handles the conversion convert; it never raises because a method is
//!   missing (a NoMethodError for the conversion itself means "does not convert"), every
//!   other exception propagates.

use crate::core::module::{self, MethodBody};
use crate::core::{bignum, float, integer, object, string};
use crate::error::Unwind;
use crate::interp::{class_of, Args};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The `exception:` keyword of the conversion functions (true when absent).
pub fn exception_kw(ctx: &mut Ctx, args: &Args) -> Result<bool> {
    match args.kwarg(ctx, "exception") {
        None => Ok(true),
        Some(v) if v == Value::TRUE => Ok(true),
        Some(v) if v == Value::FALSE => Ok(false),
        Some(v) => {
            let s = object::inspect_string(ctx, v)?;
            Err(ctx.arg_error(&format!("expected true or false as exception: {s}")))
        }
    }
}

fn k_integer(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = exception_kw(ctx, args)?;
    match integer_conv(ctx, args) {
        Ok(v) => Ok(v),
        Err(Unwind::Raise(_)) if !raise => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

/// `Integer(v)` / `Integer(str, base)`.
fn integer_conv(ctx: &mut Ctx, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let base = match args.pos.get(1) {
        Some(&b) if !b.is_nil() => Some(integer::to_i64_arg(ctx, b)?),
        _ => None,
    };
    let Some(b) = base else { return integer_conv_value(ctx, v) };
    let s = match string::try_to_str(ctx, v)? {
        Some(s) => s,
        None => return Err(ctx.arg_error("base specified for non string value")),
    };
    if b < 0 || b == 1 || b > 36 {
        return Err(ctx.arg_error(&format!("invalid radix {b}")));
    }
    parse_integer_string(ctx, s, b as i32)
}

fn parse_integer_string(ctx: &mut Ctx, s: Value, base: i32) -> Result<Value> {
    if string::bytes(s).contains(&0) {
        return Err(ctx.arg_error("string contains null byte"));
    }
    match integer::parse_int(string::bytes(s), base, true) {
        Some(n) => Ok(bignum::normalize(ctx, n)),
        None => {
            let q = String::from_utf8_lossy(&string::inspect_bytes(string::bytes(s), string::encoding(s))).into_owned();
            Err(ctx.arg_error(&format!("invalid value for Integer(): {q}")))
        }
    }
}

/// `Integer(v)` without a base (CRuby's `rb_Integer`): Strings are parsed strictly, Floats
/// truncated, other objects converted with `to_int` then `to_i`.
pub fn integer_conv_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if string::is_string(v) {
        return parse_integer_string(ctx, v, 0);
    }
    if integer::is_integer(v) {
        return Ok(v);
    }
    if float::is_float(v) {
        let f = float::get(v);
        return float::to_integer(ctx, f.trunc());
    }
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Integer"));
    }
    if ctx.respond_to(v, sym::TO_INT, true) {
        let r = ctx.call(v, sym::TO_INT, &[])?;
        if integer::is_integer(r) {
            return Ok(r);
        }
    }
    if let Some(s) = string::try_to_str(ctx, v)? {
        return parse_integer_string(ctx, s, 0);
    }
    if ctx.respond_to(v, sym::TO_I, true) {
        let r = ctx.call(v, sym::TO_I, &[])?;
        if integer::is_integer(r) {
            return Ok(r);
        }
        let cname = object::class_name_of(ctx, v);
        let rname = object::type_name_for_error(ctx, r);
        return Err(ctx.type_error(&format!("can't convert {cname} into Integer ({cname}#to_i gives {rname})")));
    }
    let name = object::type_name_for_error(ctx, v);
    Err(ctx.type_error(&format!("can't convert {name} into Integer")))
}

/// `Float(v)` (CRuby's `rb_Float`): Strings are parsed strictly (hexadecimal allowed).
pub fn float_conv_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if string::is_string(v) {
        if string::bytes(v).contains(&0) {
            return Err(ctx.arg_error("string for Float contains null byte"));
        }
        return match float::parse_float(string::bytes(v), true) {
            Some(f) => {
                if f.is_infinite() {
                    float::warn_out_of_range(ctx, string::bytes(v));
                }
                Ok(float::new(ctx, f))
            }
            None => {
                let q = String::from_utf8_lossy(&string::inspect_bytes(string::bytes(v), string::encoding(v))).into_owned();
                Err(ctx.arg_error(&format!("invalid value for Float(): {q}")))
            }
        };
    }
    if float::is_float(v) {
        return Ok(v);
    }
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Float"));
    }
    // An object's `to_f` result is returned as it is (the same NaN or Infinity object).
    if v.is_heap() && !integer::is_integer(v) && v != Value::TRUE && v != Value::FALSE && !string::is_string(v) && ctx.respond_to(v, sym::TO_F, true) {
        let f = ctx.call(v, sym::TO_F, &[])?;
        if float::is_float(f) {
            return Ok(f);
        }
        let cname = object::class_name_of(ctx, v);
        let rname = object::type_name_for_error(ctx, f);
        return Err(ctx.type_error(&format!("can't convert {cname} into Float ({cname}#to_f gives {rname})")));
    }
    let f = crate::core::numeric::to_f64(ctx, v)?;
    Ok(float::new(ctx, f))
}

fn k_float(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = exception_kw(ctx, args)?;
    match float_conv_value(ctx, args.pos[0]) {
        Ok(v) => Ok(v),
        Err(Unwind::Raise(_)) if !raise => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

/// Registers `Integer()` and `Float()` on Kernel. Runs after `kernel::init`, whose older
/// definitions of the same names these replace.
// ---- implicit conversion calls ----

fn is_builtin_entry(ctx: &Ctx, klass: Value, mid: SymId) -> bool {
    match module::find_method(ctx, klass, mid) {
        Some(me) => matches!(me.body, MethodBody::Builtin { .. }),
        None => true,
    }
}

/// `recv.mid(*args)` if `recv` can answer it, else `None` (CRuby's `rb_check_funcall`).
pub fn check_funcall(ctx: &mut Ctx, recv: Value, mid: SymId, args: &[Value]) -> Result<Option<Value>> {
    let klass = class_of(ctx, recv);
    // A user-defined respond_to? decides first.
    let mut responds_explicitly = false;
    if !is_builtin_entry(ctx, klass, sym::RESPOND_TO) {
        let r = ctx.call(recv, sym::RESPOND_TO, &[Value::symbol(mid), Value::TRUE])?;
        if !r.truthy() {
            return Ok(None);
        }
        responds_explicitly = true;
    }
    if let Some(me) = module::find_method(ctx, klass, mid) {
        if !me.is_undefined() {
            return Ok(Some(ctx.call(recv, mid, args)?));
        }
    }
    // Not defined: respond_to_missing? (when user-defined) and method_missing.
    let mut missing_says_yes = false;
    if !is_builtin_entry(ctx, klass, sym::RESPOND_TO_MISSING) {
        let r = ctx.call(recv, sym::RESPOND_TO_MISSING, &[Value::symbol(mid), Value::TRUE])?;
        if !r.truthy() {
            return Ok(None);
        }
        missing_says_yes = true;
    }
    if is_builtin_entry(ctx, klass, sym::METHOD_MISSING) {
        return Ok(None);
    }
    let mut mm_args = vec![Value::symbol(mid)];
    mm_args.extend_from_slice(args);
    match ctx.call(recv, sym::METHOD_MISSING, &mm_args) {
        Ok(v) => Ok(Some(v)),
        Err(e) => {
            if !responds_explicitly && !missing_says_yes {
                if let Some(exc) = e.exception() {
                    let nme = ctx.c().no_method_error;
                    if crate::core::object::is_a(ctx, exc, nme) {
                        return Ok(None);
                    }
                }
            }
            Err(e)
        }
    }
}

pub fn init(ctx: &mut Ctx) {
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("Integer", k_integer, [1..=2], Safe, ModuleFunction, Kw),
        ("Float", k_float, [1], Safe, ModuleFunction, Kw),
    ]);
}
