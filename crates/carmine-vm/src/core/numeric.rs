//! Numeric: the coercion protocol shared by all number classes, and the methods Numeric
//! provides to its subclasses.

use std::cmp::Ordering;

use crate::core::{array, float, integer, object};
use crate::interp::{Args, Block};
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

/// `b.coerce(a)`, returning the converted pair (CRuby's `do_coerce`): `None` when `b`
/// has no `coerce`, or, for comparisons, when it answers nil. Exceptions from `coerce`
/// propagate (Ruby 2.5+).
pub fn do_coerce(ctx: &mut Ctx, a: Value, b: Value, compare: bool) -> Result<Option<(Value, Value)>> {
    if !b.is_heap() || float::is_float(b) {
        return Ok(None);
    }
    let Some(r) = crate::core::convert::check_funcall(ctx, b, sym::COERCE, &[a])? else { return Ok(None) };
    if compare && r.is_nil() {
        return Ok(None);
    }
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

// ---- Numeric#step (CRuby's num_step) ----

/// Rejects keywords other than `allowed`, as `rb_get_kwargs` does.
pub fn check_keywords(ctx: &mut Ctx, args: &Args, allowed: &[&str]) -> Result<()> {
    let Some(kw) = args.kw else { return Ok(()) };
    let mut unknown = Vec::new();
    for (k, _) in crate::core::hash::pairs(kw) {
        let known = k.as_symbol().is_some_and(|s| allowed.iter().any(|a| ctx.sym_str(s) == *a));
        if !known {
            unknown.push(object::inspect_string(ctx, k)?);
        }
    }
    if unknown.is_empty() {
        return Ok(());
    }
    let s = if unknown.len() > 1 { "s" } else { "" };
    Err(ctx.arg_error(&format!("unknown keyword{s}: {}", unknown.join(", "))))
}

/// Whether a step goes downwards (`num_step_negative_p`): Integers by sign, anything else
/// by `step > 0`.
fn step_negative(ctx: &mut Ctx, step: Value) -> Result<bool> {
    if let Some(i) = step.as_fixnum() {
        return Ok(i < 0);
    }
    if crate::core::bignum::is_bignum(step) {
        return Ok(num_traits::Signed::is_negative(crate::core::bignum::get(step)));
    }
    if !ctx.respond_to(step, sym::GT, true) {
        return Err(coerce_failed(ctx, step, Value::fixnum(0)));
    }
    Ok(!ctx.call(step, sym::GT, &[Value::fixnum(0)])?.truthy())
}

/// Number of elements of a float sequence (`ruby_float_step_size`).
pub fn float_step_size(beg: f64, end: f64, unit: f64, excl: bool) -> f64 {
    if unit == 0.0 {
        return f64::INFINITY;
    }
    if unit.is_infinite() {
        let inside = if unit > 0.0 { beg <= end } else { beg >= end };
        return if inside { 1.0 } else { 0.0 };
    }
    let n = (end - beg) / unit;
    let err = ((beg.abs() + end.abs() + (end - beg).abs()) / unit.abs() * f64::EPSILON).min(0.5);
    if excl {
        if n <= 0.0 {
            return 0.0;
        }
        // The last whole step, then one more when it still lands before `end`: the
        // error term must not drop a value just below the end (Bug #16612).
        let mut k = if n < 1.0 { 0.0 } else { (n - err).floor() };
        let d = (k + 1.0) * unit + beg;
        if (beg < end && d < end) || (beg > end && d > end) {
            k += 1.0;
        }
        k + 1.0
    } else {
        if n < 0.0 {
            return 0.0;
        }
        (n + err).floor() + 1.0
    }
}

/// Runs `f` over a float sequence when any of the three is a Float (`ruby_float_step`,
/// nil `to` meaning endless); false when none is, leaving the iteration to the caller.
/// `f` returns false to stop.
pub fn float_step_each(ctx: &mut Ctx, from: Value, to: Value, step: Value, excl: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<bool> {
    if !(float::is_float(from) || float::is_float(to) || float::is_float(step)) {
        return Ok(false);
    }
    let unit = to_f64(ctx, step)?;
    let beg = to_f64(ctx, from)?;
    let end = if to.is_nil() {
        if unit < 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    } else {
        to_f64(ctx, to)?
    };
    let n = float_step_size(beg, end, unit, excl);
    if unit.is_infinite() {
        // i * unit + beg would be NaN.
        if n != 0.0 {
            let v = float::new(ctx, beg);
            f(ctx, v)?;
        }
    } else if unit == 0.0 {
        let v = float::new(ctx, beg);
        while f(ctx, v)? {}
    } else {
        let mut i: f64 = 0.0;
        while i < n {
            let mut d = i * unit + beg;
            if if unit >= 0.0 { end < d } else { d < end } {
                d = end;
            }
            let v = float::new(ctx, d);
            if !f(ctx, v)? {
                break;
            }
            i += 1.0;
        }
    }
    Ok(true)
}

fn float_step(ctx: &mut Ctx, from: Value, to: Value, step: Value, blk: &Block) -> Result<bool> {
    float_step_each(ctx, from, to, step, false, &mut |ctx, v| {
        ctx.yield1(blk, v)?;
        Ok(true)
    })
}

/// CRuby's `ruby_num_interval_step_size`: how many values `from`, `from + step`, … lie
/// within `to` (Infinity for a zero step).
pub fn interval_step_size(ctx: &mut Ctx, from: Value, to: Value, step: Value, excl: bool) -> Result<Value> {
    if let (Some(b), Some(e), Some(st)) = (from.as_fixnum(), to.as_fixnum(), step.as_fixnum()) {
        if st == 0 {
            return Ok(float::new(ctx, f64::INFINITY));
        }
        let (mut delta, diff) = if st < 0 { (b as i128 - e as i128, -(st as i128)) } else { (e as i128 - b as i128, st as i128) };
        if excl {
            delta -= 1;
        }
        if delta < 0 {
            return Ok(Value::fixnum(0));
        }
        return Ok(crate::core::bignum::from_i128(ctx, delta / diff + 1));
    }
    if float::is_float(from) || float::is_float(to) || float::is_float(step) {
        let (b, e, st) = (to_f64(ctx, from)?, to_f64(ctx, to)?, to_f64(ctx, step)?);
        let n = float_step_size(b, e, st, excl);
        if n.is_infinite() {
            return Ok(float::new(ctx, n));
        }
        return float::to_integer(ctx, n);
    }
    let zero = Value::fixnum(0);
    let r = ctx.call(step, sym::CMP, &[zero])?;
    let cmp = match crate::core::comparable::cmp_result(ctx, r, step, zero)? {
        0 => return Ok(float::new(ctx, f64::INFINITY)),
        c if c < 0 => sym::LT,
        _ => sym::GT,
    };
    if ctx.call(from, cmp, &[to])?.truthy() {
        return Ok(Value::fixnum(0));
    }
    let diff = ctx.call(to, sym::MINUS, &[from])?;
    let div = ctx.intern("div");
    let mut result = ctx.call(diff, div, &[step])?;
    let past = if excl {
        let prod = ctx.call(result, sym::MUL, &[step])?;
        let last = ctx.call(from, sym::PLUS, &[prod])?;
        ctx.call(to, cmp, &[last])?.truthy()
    } else {
        true
    };
    if past {
        result = ctx.call(result, sym::PLUS, &[Value::fixnum(1)])?;
    }
    Ok(result)
}

/// Size of a non-arithmetic `step` enumerator (`num_step_size`); args are `[to, step]`.
fn step_enum_size(ctx: &mut Ctx, from: Value, args: Value) -> Result<Value> {
    let (to, mut step) = (array::get(args, 0), array::get(args, 1));
    if object::equal(ctx, step, Value::fixnum(0))? {
        return Err(ctx.arg_error("step can't be 0"));
    }
    if step.is_nil() {
        step = Value::fixnum(1);
    }
    // `num_step_negative_p` first: a String step fails its `>` comparison here.
    step_negative(ctx, step)?;
    interval_step_size(ctx, from, to, step, false)
}

/// `Numeric#step(to = nil, by = 1)` / `step(to:, by:)`: with a block, iterates like CRuby's
/// `num_step` (an integer counter for Integers, `ruby_float_step` when a Float is
/// involved, `+` and `<`/`>` otherwise); without one, returns an ArithmeticSequence for
/// numeric arguments and a plain Enumerator otherwise.
fn n_step(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_keywords(ctx, args, &["to", "by"])?;
    let argc = args.pos.len();
    let mut to = args.pos.first().copied().unwrap_or(Value::NIL);
    let mut step = args.pos.get(1).copied().unwrap_or(Value::NIL);
    if let Some(v) = args.kwarg(ctx, "to") {
        if argc > 0 {
            return Err(ctx.arg_error("to is given twice"));
        }
        to = v;
    }
    let by = match args.kwarg(ctx, "by") {
        Some(v) if argc > 1 => {
            let _ = v;
            return Err(ctx.arg_error("step is given twice"));
        }
        Some(v) => Some(v),
        None => None,
    };
    let Some(blk) = args.block else {
        if let Some(b) = by {
            step = b;
        }
        if step.is_nil() {
            step = Value::fixnum(1);
        } else if object::equal(ctx, step, Value::fixnum(0))? {
            return Err(ctx.arg_error("step can't be 0"));
        }
        if (to.is_nil() || is_numeric(ctx, to)) && is_numeric(ctx, step) {
            return Ok(crate::core::arith_seq::new(ctx, recv, "step", args.pos, args.kw, recv, to, step, false));
        }
        return crate::core::enumerator::enum_for_sized(ctx, recv, "step", &[to, step], crate::core::enumerator::SizeFn::Native(step_enum_size));
    };
    match by {
        Some(b) => step = b,
        None if argc > 1 && step.is_nil() => return Err(ctx.type_error("step must be numeric")),
        None => {}
    }
    if object::equal(ctx, step, Value::fixnum(0))? {
        return Err(ctx.arg_error("step can't be 0"));
    }
    if step.is_nil() {
        step = Value::fixnum(1);
    }
    let desc = step_negative(ctx, step)?;
    if to.is_nil() {
        to = float::new(ctx, if desc { f64::NEG_INFINITY } else { f64::INFINITY });
    }
    let inf = float::is_float(to) && {
        let f = float::get(to);
        f.is_infinite() && if f.is_sign_negative() { desc } else { !desc }
    };
    let mut i = recv;
    match (recv.as_fixnum(), step.as_fixnum()) {
        (Some(from), Some(diff)) if inf || to.is_fixnum() => {
            // An integer counter while the values stay Fixnums; past that the generic
            // loop below carries on with Bignums.
            let end = to.as_fixnum();
            let mut n = from;
            loop {
                if let Some(e) = end {
                    if if desc { n < e } else { n > e } {
                        return Ok(recv);
                    }
                }
                ctx.yield1(&blk, Value::fixnum(n))?;
                match n.checked_add(diff) {
                    Some(m) if Value::fits_fixnum(m) => n = m,
                    _ => {
                        i = integer::add(ctx, Value::fixnum(n), step)?;
                        break;
                    }
                }
            }
        }
        _ => {
            if float_step(ctx, recv, to, step, &blk)? {
                return Ok(recv);
            }
        }
    }
    let cmp = if desc { sym::LT } else { sym::GT };
    loop {
        if !inf && ctx.call(i, cmp, &[to])?.truthy() {
            return Ok(recv);
        }
        ctx.yield1(&blk, i)?;
        i = ctx.call(i, sym::PLUS, &[step])?;
    }
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

/// `Numeric#numerator`/`#denominator`: those of `to_r`.
fn n_numerator(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = ctx.call(recv, sym::TO_R, &[])?;
    let m = ctx.intern("numerator");
    ctx.call(r, m, &[])
}

fn n_denominator(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = ctx.call(recv, sym::TO_R, &[])?;
    let m = ctx.intern("denominator");
    ctx.call(r, m, &[])
}

/// Numbers are immutable values: `dup` is the receiver itself.
fn n_dup(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

/// `clone(freeze: nil)` returns the receiver (CRuby's `rb_immutable_obj_clone`); it cannot
/// be unfrozen.
fn n_clone(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.kwarg(ctx, "freeze") {
        None => {}
        Some(v) if v.is_nil() || v == Value::TRUE => {}
        Some(v) if v == Value::FALSE => {
            let cname = object::class_name_of(ctx, recv);
            return Err(ctx.arg_error(&format!("can't unfreeze {cname}")));
        }
        Some(v) => {
            let cname = object::class_name_of(ctx, v);
            return Err(ctx.arg_error(&format!("unexpected value for freeze: {cname}")));
        }
    }
    Ok(recv)
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
        ("numerator", n_numerator, [0], Safe),
        ("denominator", n_denominator, [0], Safe),
        ("dup", n_dup, [0], Safe),
        ("clone", n_clone, [0], Safe, Kw),
        ("polar", n_polar, [0], Safe),
        ("eql?", n_eql, [1], Safe),
    ]);
}
