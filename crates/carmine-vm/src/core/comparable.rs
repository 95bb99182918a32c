//! Comparable: relational operators from `<=>`.

use crate::core::object;
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Interprets a `<=>` result as an ordering sign (`ArgumentError` when it is nil).
pub fn cmp_result(ctx: &mut Ctx, r: Value, a: Value, b: Value) -> Result<i64> {
    if let Some(i) = r.as_fixnum() {
        return Ok(i.signum());
    }
    if r.is_nil() {
        return Err(cmp_failed(ctx, a, b));
    }
    if crate::core::float::is_float(r) {
        let f = crate::core::float::get(r);
        return Ok(if f > 0.0 { 1 } else if f < 0.0 { -1 } else { 0 });
    }
    let gt = ctx.call(r, sym::GT, &[Value::fixnum(0)])?;
    if gt.truthy() {
        return Ok(1);
    }
    let lt = ctx.call(r, sym::LT, &[Value::fixnum(0)])?;
    Ok(if lt.truthy() { -1 } else { 0 })
}

pub fn cmp_failed(ctx: &mut Ctx, a: Value, b: Value) -> crate::error::Unwind {
    let an = object::class_name_of(ctx, a);
    let bn = match b {
        Value::NIL => "nil".to_string(),
        Value::TRUE => "true".to_string(),
        Value::FALSE => "false".to_string(),
        _ if b.is_fixnum() || crate::core::float::is_float(b) => match object::inspect_string(ctx, b) {
            Ok(s) => s,
            Err(e) => return e,
        },
        _ => object::class_name_of(ctx, b),
    };
    ctx.arg_error(&format!("comparison of {an} with {bn} failed"))
}

/// `a <=> b` as -1/0/1, raising when incomparable.
pub fn compare(ctx: &mut Ctx, a: Value, b: Value) -> Result<i64> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok((x > y) as i64 - (x < y) as i64);
    }
    if crate::core::string::is_plain_string(a) && crate::core::string::is_plain_string(b) {
        return Ok(crate::core::string::bytes(a).cmp(crate::core::string::bytes(b)) as i64);
    }
    if crate::core::float::is_float(a) && crate::core::float::is_float(b) {
        if let Some(o) = crate::core::float::get(a).partial_cmp(&crate::core::float::get(b)) {
            return Ok(o as i64);
        }
    }
    let r = ctx.call(a, sym::CMP, &[b])?;
    cmp_result(ctx, r, a, b)
}

fn op(ctx: &mut Ctx, recv: Value, other: Value, test: fn(i64) -> bool) -> Result<Value> {
    let r = ctx.call(recv, sym::CMP, &[other])?;
    let c = cmp_result(ctx, r, recv, other)?;
    Ok(Value::bool(test(c)))
}

fn c_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if recv == other {
        return Ok(Value::TRUE);
    }
    let r = object::guard_recursion(ctx, sym::CMP, recv, other, Value::NIL, |ctx| ctx.call(recv, sym::CMP, &[other]))?;
    if r.is_nil() {
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(cmp_result(ctx, r, recv, other)? == 0))
}

fn c_lt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    op(ctx, recv, args.pos[0], |c| c < 0)
}
fn c_le(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    op(ctx, recv, args.pos[0], |c| c <= 0)
}
fn c_gt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    op(ctx, recv, args.pos[0], |c| c > 0)
}
fn c_ge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    op(ctx, recv, args.pos[0], |c| c >= 0)
}

fn c_between(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let lo = compare(ctx, recv, args.pos[0])?;
    let hi = compare(ctx, recv, args.pos[1])?;
    Ok(Value::bool(lo >= 0 && hi <= 0))
}

fn c_clamp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (lo, hi) = if args.pos.len() == 1 {
        let r = args.pos[0];
        if !crate::core::range::is_range(r) {
            let cname = object::class_name_of(ctx, r);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Range)")));
        }
        if crate::core::range::excl(r) && !crate::core::range::end(r).is_nil() {
            return Err(ctx.arg_error("cannot clamp with an exclusive range"));
        }
        (crate::core::range::begin(r), crate::core::range::end(r))
    } else {
        (args.pos[0], args.pos[1])
    };
    if !lo.is_nil() && !hi.is_nil() && compare(ctx, lo, hi)? > 0 {
        return Err(ctx.arg_error("min argument must be less than or equal to max argument"));
    }
    if !lo.is_nil() && compare(ctx, recv, lo)? < 0 {
        return Ok(lo);
    }
    if !hi.is_nil() && compare(ctx, recv, hi)? > 0 {
        return Ok(hi);
    }
    Ok(recv)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().comparable;
    crate::methods!(ctx, c, [
        ("==", c_eq, [1], Safe),
        ("<", c_lt, [1], Safe),
        ("<=", c_le, [1], Safe),
        (">", c_gt, [1], Safe),
        (">=", c_ge, [1], Safe),
        ("between?", c_between, [2], Safe),
        ("clamp", c_clamp, [1..=2], Safe),
    ]);
}
