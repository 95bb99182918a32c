//! Numeric: the coercion protocol shared by all number classes, and the methods Numeric
//! provides to its subclasses.

use std::cmp::Ordering;

use crate::core::{array, float, integer, object};
use crate::interp::Args;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub fn is_numeric(ctx: &Ctx, v: Value) -> bool {
    v.is_fixnum() || v.is_flonum() || object::is_a(ctx, v, ctx.c().numeric)
}

/// Converts any Real to f64 (`TypeError` otherwise).
pub fn to_f64(ctx: &mut Ctx, v: Value) -> Result<f64> {
    if float::is_float(v) {
        return Ok(float::get(v));
    }
    if integer::is_integer(v) {
        return Ok(integer::to_f64(v));
    }
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Float"));
    }
    if is_numeric(ctx, v) && ctx.respond_to(v, sym::TO_F, true) {
        let f = ctx.call(v, sym::TO_F, &[])?;
        if float::is_float(f) {
            return Ok(float::get(f));
        }
    }
    if v == Value::TRUE || v == Value::FALSE || crate::core::string::is_string(v) {
        let name = object::type_name_for_error(ctx, v);
        return Err(ctx.type_error(&format!("can't convert {name} into Float")));
    }
    if ctx.respond_to(v, sym::TO_F, true) {
        let f = ctx.call(v, sym::TO_F, &[])?;
        if float::is_float(f) {
            return Ok(float::get(f));
        }
    }
    let name = object::type_name_for_error(ctx, v);
    Err(ctx.type_error(&format!("can't convert {name} into Float")))
}

/// `b.coerce(a)`, returning the converted pair.
fn do_coerce(ctx: &mut Ctx, a: Value, b: Value, compare: bool) -> Result<Option<(Value, Value)>> {
    if !b.is_heap() || !ctx.respond_to(b, sym::COERCE, true) {
        return Ok(None);
    }
    let r = match ctx.call(b, sym::COERCE, &[a]) {
        Ok(r) => r,
        Err(e) if compare => {
            // A failing coerce in a comparison is reported as a failed comparison.
            if let Some(exc) = e.exception() {
                if object::is_a(ctx, exc, ctx.c().standard_error) {
                    return Ok(None);
                }
            }
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    if !array::is_array(r) || array::len(r) != 2 {
        return Err(ctx.type_error("coerce must return [x, y]"));
    }
    Ok(Some((array::get(r, 0), array::get(r, 1))))
}

/// `TypeError: X can't be coerced into Integer` (special constants are shown inspected).
pub fn coerce_failed(ctx: &mut Ctx, a: Value, b: Value) -> crate::error::Unwind {
    let aname = object::class_name_of(ctx, a);
    let bdesc = if b.is_heap() && !float::is_float(b) { object::class_name_of(ctx, b) } else { object::inspect_string(ctx, b).unwrap_or_default() };
    ctx.type_error(&format!("{bdesc} can't be coerced into {aname}"))
}

/// `a op b` for a number `a` and an operand of another type.
pub fn coerce_bin(ctx: &mut Ctx, a: Value, b: Value, op: SymId, compare: bool) -> Result<Value> {
    match do_coerce(ctx, a, b, compare)? {
        Some((x, y)) => ctx.call(x, op, &[y]),
        None => {
            let aname = object::class_name_of(ctx, a);
            if compare {
                let bdesc = match b {
                    Value::NIL => "nil".to_string(),
                    Value::TRUE => "true".to_string(),
                    Value::FALSE => "false".to_string(),
                    _ => object::class_name_of(ctx, b),
                };
                return Err(ctx.arg_error(&format!("comparison of {aname} with {bdesc} failed")));
            }
            let _ = aname;
            Err(coerce_failed(ctx, a, b))
        }
    }
}

/// `<=>` through coercion; `None` when not comparable.
pub fn coerce_cmp(ctx: &mut Ctx, a: Value, b: Value) -> Result<Option<Ordering>> {
    match do_coerce(ctx, a, b, true)? {
        Some((x, y)) => {
            let r = ctx.call(x, sym::CMP, &[y])?;
            Ok(r.as_fixnum().map(|i| i.cmp(&0)))
        }
        None => Ok(None),
    }
}

/// The `half:` rounding mode of `round`: b'u' (default), b'd', b'e'.
pub fn rounding_mode(ctx: &mut Ctx, args: &Args) -> Result<u8> {
    let Some(kw) = args.kw else { return Ok(b'u') };
    let key = Value::symbol(sym::HALF);
    let Some(v) = crate::core::hash::get(kw, key) else { return Ok(b'u') };
    if v.is_nil() {
        return Ok(b'u');
    }
    let name = match v.as_symbol() {
        Some(s) => ctx.sym_str(s),
        None if crate::core::string::is_string(v) => crate::core::string::to_rust_string_lossy(v),
        None => {
            let s = object::inspect_string(ctx, v)?;
            return Err(ctx.arg_error(&format!("invalid rounding mode: {s}")));
        }
    };
    match name.as_str() {
        "up" => Ok(b'u'),
        "down" => Ok(b'd'),
        "even" => Ok(b'e'),
        _ => Err(ctx.arg_error(&format!("invalid rounding mode: {name}"))),
    }
}

// ---- Numeric methods ----

fn n_uplus(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn n_uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match do_coerce(ctx, Value::fixnum(0), recv, false)? {
        Some((x, y)) => ctx.call(x, sym::MINUS, &[y]),
        None => Err(ctx.type_error("can't negate")),
    }
}

fn n_zero(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = ctx.call(recv, sym::EQ, &[Value::fixnum(0)])?;
    Ok(Value::bool(r.truthy()))
}

fn n_nonzero(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let z = ctx.call_str(recv, "zero?", &[])?;
    Ok(if z.truthy() { Value::NIL } else { recv })
}

fn n_positive(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = ctx.call(recv, sym::GT, &[Value::fixnum(0)])?;
    Ok(Value::bool(r.truthy()))
}

fn n_negative(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = ctx.call(recv, sym::LT, &[Value::fixnum(0)])?;
    Ok(Value::bool(r.truthy()))
}

fn n_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let neg = ctx.call(recv, sym::LT, &[Value::fixnum(0)])?;
    if neg.truthy() {
        ctx.call(recv, sym::UMINUS, &[])
    } else {
        Ok(recv)
    }
}

fn n_integer_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::FALSE)
}

fn n_real_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::TRUE)
}

fn n_finite(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::TRUE)
}

fn n_infinite(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

fn n_cmp(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(if recv == args.pos[0] { Value::fixnum(0) } else { Value::NIL })
}

fn n_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if object::real_class_of(ctx, other) == object::real_class_of(ctx, recv) {
        return Ok(array::from_slice(ctx, &[other, recv]));
    }
    let a = to_f64(ctx, other)?;
    let b = to_f64(ctx, recv)?;
    let av = float::new(ctx, a);
    let bv = float::new(ctx, b);
    Ok(array::from_slice(ctx, &[av, bv]))
}

fn n_div(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos[0] == Value::fixnum(0) {
        return Err(ctx.zero_division());
    }
    let q = ctx.call(recv, sym::DIV, &[args.pos[0]])?;
    let floor = ctx.intern("floor");
    ctx.call(q, floor, &[])
}

fn n_modulo(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = n_div(ctx, recv, args)?;
    let prod = ctx.call(args.pos[0], sym::MUL, &[d])?;
    ctx.call(recv, sym::MINUS, &[prod])
}

fn n_divmod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = n_div(ctx, recv, args)?;
    let m = n_modulo(ctx, recv, args)?;
    Ok(array::from_slice(ctx, &[d, m]))
}

fn n_remainder(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let y = args.pos[0];
    let m = ctx.call(recv, sym::MOD, &[y])?;
    let zero = Value::fixnum(0);
    let m_zero = object::equal(ctx, m, zero)?;
    if !m_zero {
        let rneg = ctx.call(recv, sym::LT, &[zero])?.truthy();
        let yneg = ctx.call(y, sym::LT, &[zero])?.truthy();
        if rneg != yneg {
            return ctx.call(m, sym::MINUS, &[y]);
        }
    }
    Ok(m)
}

fn n_fdiv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = to_f64(ctx, recv)?;
    let b = to_f64(ctx, args.pos[0])?;
    Ok(float::new(ctx, a / b))
}

fn n_quo(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = crate::core::rational::from_integer(ctx, recv)?;
    ctx.call(r, sym::DIV, &[args.pos[0]])
}

fn n_to_int(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.call(recv, sym::TO_I, &[])
}

fn via_float(ctx: &mut Ctx, recv: Value, args: &Args, name: &str) -> Result<Value> {
    let f = to_f64(ctx, recv)?;
    let fv = float::new(ctx, f);
    let mid = ctx.intern(name);
    ctx.call_kw(fv, mid, args.pos, args.kw, None)
}

fn n_floor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    via_float(ctx, recv, args, "floor")
}
fn n_ceil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    via_float(ctx, recv, args, "ceil")
}
fn n_round(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    via_float(ctx, recv, args, "round")
}
fn n_truncate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    via_float(ctx, recv, args, "truncate")
}

fn n_step(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    crate::core::enumerator::numeric_step(ctx, recv, args)
}

fn n_real(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn n_imag(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(0))
}

fn n_conj(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn n_rect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(array::from_slice(ctx, &[recv, Value::fixnum(0)]))
}

fn n_i(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::complex::new_rect(ctx, Value::fixnum(0), recv)
}

fn n_arg(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let neg = ctx.call(recv, sym::LT, &[Value::fixnum(0)])?.truthy();
    if neg {
        Ok(float::new(ctx, std::f64::consts::PI))
    } else {
        Ok(Value::fixnum(0))
    }
}

fn n_abs2(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.call(recv, sym::MUL, &[recv])
}

fn n_polar(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = ctx.call_str(recv, "abs", &[])?;
    let t = ctx.call_str(recv, "arg", args.pos)?;
    Ok(array::from_slice(ctx, &[a, t]))
}

fn n_to_c(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::complex::new_rect(ctx, recv, Value::fixnum(0))
}

fn n_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if object::real_class_of(ctx, recv) != object::real_class_of(ctx, o) {
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(object::equal(ctx, recv, o)?))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().numeric;
    crate::methods!(ctx, c, [
        ("+@", n_uplus, [0], Safe),
        ("-@", n_uminus, [0], Safe),
        ("zero?", n_zero, [0], Safe),
        ("nonzero?", n_nonzero, [0], Safe),
        ("positive?", n_positive, [0], Safe),
        ("negative?", n_negative, [0], Safe),
        ("abs", n_abs, [0], Safe),
        ("magnitude", n_abs, [0], Safe),
        ("integer?", n_integer_p, [0], Safe),
        ("real?", n_real_p, [0], Safe),
        ("finite?", n_finite, [0], Safe),
        ("infinite?", n_infinite, [0], Safe),
        ("<=>", n_cmp, [1], Safe),
        ("coerce", n_coerce, [1], Safe),
        ("div", n_div, [1], Safe),
        ("modulo", n_modulo, [1], Safe),
        ("%", n_modulo, [1], Safe),
        ("divmod", n_divmod, [1], Safe),
        ("remainder", n_remainder, [1], Safe),
        ("fdiv", n_fdiv, [1], Safe),
        ("quo", n_quo, [1], Safe),
        ("to_int", n_to_int, [0], Safe),
        ("floor", n_floor, [0..=1], Safe),
        ("ceil", n_ceil, [0..=1], Safe),
        ("round", n_round, [0..=1], Safe, Kw),
        ("truncate", n_truncate, [0..=1], Safe),
        ("step", n_step, [0..=2], Safe, Kw),
        ("real", n_real, [0], Safe),
        ("imaginary", n_imag, [0], Safe),
        ("imag", n_imag, [0], Safe),
        ("conj", n_conj, [0], Safe),
        ("conjugate", n_conj, [0], Safe),
        ("rectangular", n_rect, [0], Safe),
        ("rect", n_rect, [0], Safe),
        ("i", n_i, [0], Safe),
        ("arg", n_arg, [0], Safe),
        ("angle", n_arg, [0], Safe),
        ("phase", n_arg, [0], Safe),
        ("to_c", n_to_c, [0], Safe),
        ("abs2", n_abs2, [0], Safe),
        ("polar", n_polar, [0], Safe),
        ("eql?", n_eql, [1], Safe),
    ]);
}
