//! Complex: a pair of real numbers (real, imaginary), immutable.
//!
//! Invariants:
//! - Both parts are real Numerics (Integer, Float, Rational or a user real); a Complex is
//!   frozen at creation and never changes.
//! - Arithmetic follows CRuby's `complex.c`: exact parts stay exact (the `f_add`/`f_mul`
//!   shortcuts for exact 0 and 1 avoid turning `0` into `0.0`), division canonicalizes
//!   Rationals with denominator 1 to Integers, and `inf * 0` is avoided in products.

use crate::core::{array, bignum, float, integer, numeric, object, rational, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct ComplexObj {
    pub re: Value,
    pub im: Value,
}

crate::data_obj!(ComplexObj, |s, m| {
    m.mark(s.re);
    m.mark(s.im);
});

pub fn is_complex(v: Value) -> bool {
    data_ref::<ComplexObj>(v).is_some()
}

fn parts(v: Value) -> (Value, Value) {
    match data_ref::<ComplexObj>(v) {
        Some(c) => (c.re, c.im),
        None => (v, Value::fixnum(0)),
    }
}

pub fn new_rect(ctx: &mut Ctx, re: Value, im: Value) -> Result<Value> {
    let klass = ctx.c().complex;
    let v = object::new_data(ctx, klass, Box::new(ComplexObj { re, im }));
    Ok(object::freeze(v))
}

// ---- helpers over reals (CRuby's f_* shortcuts) ----

fn is_exact_zero(v: Value) -> bool {
    v == Value::fixnum(0) || (rational::is_rational(v) && rational::parts(v).0 == num_bigint::BigInt::from(0))
}

fn is_zero(ctx: &mut Ctx, v: Value) -> Result<bool> {
    if let Some(i) = v.as_fixnum() {
        return Ok(i == 0);
    }
    if float::is_float(v) {
        return Ok(float::get(v) == 0.0);
    }
    if integer::is_integer(v) {
        return Ok(false);
    }
    if rational::is_rational(v) {
        return Ok(is_exact_zero(v));
    }
    Ok(ctx.call_str(v, "zero?", &[])?.truthy())
}

fn add(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if b == Value::fixnum(0) {
        return Ok(a);
    }
    if a == Value::fixnum(0) {
        return Ok(b);
    }
    ctx.call(a, sym::PLUS, &[b])
}

fn sub(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if b == Value::fixnum(0) {
        return Ok(a);
    }
    ctx.call(a, sym::MINUS, &[b])
}

fn mul(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if b == Value::fixnum(0) && integer::is_integer(a) {
        return Ok(Value::fixnum(0));
    }
    if b == Value::fixnum(1) {
        return Ok(a);
    }
    if a == Value::fixnum(0) && integer::is_integer(b) {
        return Ok(Value::fixnum(0));
    }
    if a == Value::fixnum(1) {
        return Ok(b);
    }
    ctx.call(a, sym::MUL, &[b])
}

fn neg(ctx: &mut Ctx, a: Value) -> Result<Value> {
    if let Some(i) = a.as_fixnum() {
        return integer::negate(ctx, Value::fixnum(i));
    }
    ctx.call(a, sym::UMINUS, &[])
}

fn quo(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    let q = ctx.call_str(a, "quo", &[b])?;
    Ok(canonicalize(q))
}

/// A Rational with denominator 1 becomes its Integer numerator.
fn canonicalize(v: Value) -> Value {
    if let Some(r) = data_ref::<rational::RationalObj>(v) {
        if r.den == Value::fixnum(1) {
            return r.num;
        }
    }
    v
}

fn is_real(ctx: &mut Ctx, v: Value) -> Result<bool> {
    if integer::is_integer(v) || float::is_float(v) || rational::is_rational(v) {
        return Ok(true);
    }
    if is_complex(v) || !numeric::is_numeric(ctx, v) {
        return Ok(false);
    }
    Ok(ctx.call_str(v, "real?", &[])?.truthy())
}

/// `safe_mul`: a nonzero float factor times an exact zero keeps its sign only, so that
/// `Infinity * 0` does not produce NaN.
fn safe_mul(ctx: &mut Ctx, a: Value, b: Value, az: bool, bz: bool) -> Result<Value> {
    let mut a = a;
    let mut b = b;
    if !az && bz && float::is_float(a) && !float::get(a).is_nan() {
        a = float::new(ctx, if float::get(a).is_sign_negative() { -1.0 } else { 1.0 });
    }
    if !bz && az && float::is_float(b) && !float::get(b).is_nan() {
        b = float::new(ctx, if float::get(b).is_sign_negative() { -1.0 } else { 1.0 });
    }
    mul(ctx, a, b)
}

fn comp_mul(ctx: &mut Ctx, ar: Value, ai: Value, br: Value, bi: Value) -> Result<(Value, Value)> {
    let (arz, aiz, brz, biz) = (is_zero(ctx, ar)?, is_zero(ctx, ai)?, is_zero(ctx, br)?, is_zero(ctx, bi)?);
    let rr = safe_mul(ctx, ar, br, arz, brz)?;
    let ii = safe_mul(ctx, ai, bi, aiz, biz)?;
    let ri = safe_mul(ctx, ar, bi, arz, biz)?;
    let ir = safe_mul(ctx, ai, br, aiz, brz)?;
    let re = sub(ctx, rr, ii)?;
    let im = add(ctx, ri, ir)?;
    Ok((re, im))
}

fn real_cmp(ctx: &mut Ctx, a: Value, b: Value) -> Result<Option<std::cmp::Ordering>> {
    let r = ctx.call(a, sym::CMP, &[b])?;
    Ok(r.as_fixnum().map(|i| i.cmp(&0)))
}

fn abs_real(ctx: &mut Ctx, v: Value) -> Result<Value> {
    ctx.call_str(v, "abs", &[])
}

// ---- construction ----

/// `Complex.polar(r, theta)` (CRuby's `f_complex_polar`).
pub fn polar(ctx: &mut Ctx, r: Value, theta: Value) -> Result<Value> {
    if is_exact_zero(theta) || is_exact_zero(r) {
        return new_rect(ctx, r, Value::fixnum(0));
    }
    if float::is_float(theta) {
        let arg = float::get(theta);
        if arg == std::f64::consts::PI {
            let nr = neg(ctx, r)?;
            let z = float::new(ctx, 0.0);
            return new_rect(ctx, nr, z);
        }
        if arg == std::f64::consts::FRAC_PI_2 {
            let z = float::new(ctx, 0.0);
            return new_rect(ctx, z, r);
        }
        if float::is_float(r) {
            let abs = float::get(r);
            let re = float::new(ctx, abs * arg.cos());
            let im = float::new(ctx, abs * arg.sin());
            return new_rect(ctx, re, im);
        }
        let c = float::new(ctx, arg.cos());
        let s = float::new(ctx, arg.sin());
        let re = mul(ctx, r, c)?;
        let im = mul(ctx, r, s)?;
        return new_rect(ctx, re, im);
    }
    let t = numeric::to_f64(ctx, theta)?;
    let c = float::new(ctx, t.cos());
    let s = float::new(ctx, t.sin());
    let re = mul(ctx, r, c)?;
    let im = mul(ctx, r, s)?;
    new_rect(ctx, re, im)
}

/// `x ** y` for a negative float base and fractional exponent.
pub fn new_polar_pow(ctx: &mut Ctx, x: f64, y: f64) -> Result<Value> {
    polar_pi(ctx, x.abs().powf(y), y)
}

/// `abs * e^(i*pi*ang)` with exact results for (half-)integer `ang` (CRuby's
/// `rb_dbl_complex_new_polar_pi`).
pub fn polar_pi(ctx: &mut Ctx, abs: f64, ang: f64) -> Result<Value> {
    let fi = ang.trunc();
    let fr = ang - fi;
    let pos = fr == 0.5;
    if pos || fr == -0.5 {
        let half = (fi / 2.0) - (fi / 2.0).trunc();
        let abs = if (half != fr) ^ pos { -abs } else { abs };
        let re = float::new(ctx, 0.0);
        let im = float::new(ctx, abs);
        return new_rect(ctx, re, im);
    }
    if fr == 0.0 {
        let half = (fi / 2.0) - (fi / 2.0).trunc();
        return Ok(float::new(ctx, if half != 0.0 { -abs } else { abs }));
    }
    let theta = std::f64::consts::PI * ang;
    let re = float::new(ctx, abs * theta.cos());
    let im = float::new(ctx, abs * theta.sin());
    new_rect(ctx, re, im)
}

fn not_real_check(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !is_real(ctx, v)? {
        return Err(ctx.type_error("not a real"));
    }
    Ok(())
}

fn s_rect(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let re = args.pos[0];
    let im = args.pos.get(1).copied().unwrap_or(Value::fixnum(0));
    not_real_check(ctx, re)?;
    not_real_check(ctx, im)?;
    new_rect(ctx, re, im)
}

fn s_polar(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let r = args.pos[0];
    not_real_check(ctx, r)?;
    match args.pos.get(1) {
        Some(&t) => {
            not_real_check(ctx, t)?;
            polar(ctx, r, t)
        }
        None => new_rect(ctx, r, Value::fixnum(0)),
    }
}

/// One argument of `Complex()`: a Complex or real value.
fn complex_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if string::is_string(v) {
        let b = string::bytes(v).to_vec();
        if b.contains(&0) {
            return Err(ctx.arg_error("string contains null byte"));
        }
        return match crate::core::numeric_parse::complex_value(ctx, &b, true)? {
            Some(c) => Ok(c),
            None => {
                let q = String::from_utf8_lossy(&string::inspect_bytes(&b, string::encoding(v))).into_owned();
                Err(ctx.arg_error(&format!("invalid value for convert(): {q}")))
            }
        };
    }
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Complex"));
    }
    if is_complex(v) || numeric::is_numeric(ctx, v) {
        return Ok(v);
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_C, true) {
        return ctx.call(v, sym::TO_C, &[]);
    }
    let name = object::type_name_for_error(ctx, v);
    Err(ctx.type_error(&format!("can't convert {name} into Complex")))
}

/// `Kernel#Complex(a, b = nil, exception: true)`.
fn kernel_complex(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = crate::core::convert::exception_kw(ctx, args)?;
    // `exception: false` turns conversion errors into nil, but not a non-real real part
    // given with a numeric imaginary part (CRuby's `nucomp_real_check`), nor a String in
    // an ASCII-incompatible encoding.
    let mut hard_error = false;
    let r = (|| -> Result<Value> {
        let a0 = args.pos[0];
        for &v in args.pos {
            let enc = if string::is_string(v) { string::encoding(v) } else { crate::core::encoding::UTF_8 };
            if !crate::core::encoding::is_ascii_compatible(enc) {
                hard_error = true;
                let name = crate::core::encoding::name(enc);
                return Err(ctx.raise(ctx.c().compatibility_error, &format!("ASCII incompatible encoding: {name}")));
            }
        }
        if let Some(&b0) = args.pos.get(1) {
            let numeric_b = !string::is_string(b0) && numeric::is_numeric(ctx, b0);
            if !string::is_string(a0) && !is_complex(a0) && !numeric::is_numeric(ctx, a0) && !a0.is_nil() && numeric_b {
                hard_error = true;
                return Err(ctx.type_error("not a real"));
            }
        }
        let a = complex_arg(ctx, a0)?;
        let Some(&b0) = args.pos.get(1) else {
            // A non-real Numeric is returned as it is.
            if is_complex(a) || !is_real(ctx, a)? {
                return Ok(a);
            }
            return new_rect(ctx, a, Value::fixnum(0));
        };
        let b = complex_arg(ctx, b0)?;
        let unreal = (!is_complex(a) && !is_real(ctx, a)?) || (!is_complex(b) && !is_real(ctx, b)?);
        if !is_complex(a) && !is_complex(b) && !unreal {
            return new_rect(ctx, a, b);
        }
        // a + b*i, as the operands compute it (returned as it is for non-real Numerics).
        let i = new_rect(ctx, Value::fixnum(0), Value::fixnum(1))?;
        let bi = ctx.call(b, sym::MUL, &[i])?;
        let r = ctx.call(a, sym::PLUS, &[bi])?;
        if unreal || is_complex(r) {
            Ok(r)
        } else {
            new_rect(ctx, r, Value::fixnum(0))
        }
    })();
    match r {
        Ok(v) => Ok(v),
        Err(crate::error::Unwind::Raise(_)) if !raise && !hard_error => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

/// `3i` literals compile to `3.__imaginary_literal__`.
fn imaginary_literal(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    new_rect(ctx, Value::fixnum(0), recv)
}

// ---- arithmetic ----

/// The operand as (real, imag) when it is Complex or real; `None` for others.
fn operand(ctx: &mut Ctx, v: Value) -> Result<Option<(Value, Value, bool)>> {
    if is_complex(v) {
        let (r, i) = parts(v);
        return Ok(Some((r, i, true)));
    }
    if is_real(ctx, v)? {
        return Ok(Some((v, Value::fixnum(0), false)));
    }
    Ok(None)
}

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d, cx)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::PLUS, false) };
    let re = add(ctx, a, c)?;
    let im = if cx { add(ctx, b, d)? } else { b };
    new_rect(ctx, re, im)
}

fn m_minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d, cx)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::MINUS, false) };
    let re = sub(ctx, a, c)?;
    let im = if cx { sub(ctx, b, d)? } else { b };
    new_rect(ctx, re, im)
}

fn m_mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d, cx)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::MUL, false) };
    if !cx {
        let re = mul(ctx, a, c)?;
        let im = mul(ctx, b, c)?;
        return new_rect(ctx, re, im);
    }
    let (re, im) = comp_mul(ctx, a, b, c, d)?;
    new_rect(ctx, re, im)
}

/// CRuby's `f_divide` with `quo` (or `fdiv`).
fn divide(ctx: &mut Ctx, recv: Value, other: Value, fdiv: bool) -> Result<Value> {
    let div = |ctx: &mut Ctx, a: Value, b: Value| -> Result<Value> {
        if fdiv {
            ctx.call_str(a, "fdiv", &[b])
        } else {
            quo(ctx, a, b)
        }
    };
    let (ar, ai) = parts(recv);
    if is_complex(other) {
        let (br, bi) = parts(other);
        let flo = [ar, ai, br, bi].iter().any(|&v| float::is_float(v));
        let abr = abs_real(ctx, br)?;
        let abi = abs_real(ctx, bi)?;
        let (x, y) = if real_cmp(ctx, abr, abi)? == Some(std::cmp::Ordering::Greater) {
            let r = div(ctx, bi, br)?;
            let rr = mul(ctx, r, r)?;
            let one_rr = add(ctx, Value::fixnum(1), rr)?;
            let n = mul(ctx, br, one_rr)?;
            let air = mul(ctx, ai, r)?;
            let xs = add(ctx, ar, air)?;
            let arr = mul(ctx, ar, r)?;
            let ys = sub(ctx, ai, arr)?;
            (div(ctx, xs, n)?, div(ctx, ys, n)?)
        } else {
            let r = div(ctx, br, bi)?;
            let rr = mul(ctx, r, r)?;
            let one_rr = add(ctx, Value::fixnum(1), rr)?;
            let n = mul(ctx, bi, one_rr)?;
            let arr = mul(ctx, ar, r)?;
            let xs = add(ctx, arr, ai)?;
            let air = mul(ctx, ai, r)?;
            let ys = sub(ctx, air, ar)?;
            (div(ctx, xs, n)?, div(ctx, ys, n)?)
        };
        let (x, y) = if flo { (x, y) } else { (canonicalize(x), canonicalize(y)) };
        return new_rect(ctx, x, y);
    }
    if is_real(ctx, other)? {
        let x = div(ctx, ar, other)?;
        let y = div(ctx, ai, other)?;
        return new_rect(ctx, canonicalize(x), canonicalize(y));
    }
    let op = if fdiv { ctx.intern("fdiv") } else { sym::DIV };
    numeric::coerce_bin(ctx, recv, other, op, false)
}

fn m_div(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    divide(ctx, recv, args.pos[0], false)
}

fn m_fdiv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    divide(ctx, recv, args.pos[0], true)
}

fn m_uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let na = neg(ctx, a)?;
    let nb = neg(ctx, b)?;
    new_rect(ctx, na, nb)
}

fn m_pow(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut other = args.pos[0];
    if is_exact_zero(other) {
        return new_rect(ctx, Value::fixnum(1), Value::fixnum(0));
    }
    if let Some(r) = data_ref::<rational::RationalObj>(other) {
        if r.den == Value::fixnum(1) {
            other = r.num;
        }
    }
    if is_complex(other) {
        let (r, i) = parts(other);
        if is_exact_zero(i) {
            other = r;
        }
    }
    if other == Value::fixnum(1) {
        let (a, b) = parts(recv);
        return new_rect(ctx, a, b);
    }
    if is_complex(other) {
        let (or, oi) = parts(other);
        let r = m_abs(ctx, recv, args)?;
        let theta = m_arg(ctx, recv, args)?;
        let logr = crate::core::math::log_value(ctx, r)?;
        let a = mul(ctx, or, logr)?;
        let b = mul(ctx, oi, theta)?;
        let e = sub(ctx, a, b)?;
        let ef = numeric::to_f64(ctx, e)?;
        let nr = float::new(ctx, ef.exp());
        let c = mul(ctx, theta, or)?;
        let d = mul(ctx, oi, logr)?;
        let nt = add(ctx, c, d)?;
        return polar(ctx, nr, nt);
    }
    if let Some(mut n) = other.as_fixnum() {
        let mut base = recv;
        if n < 0 {
            base = divide(ctx, Value::fixnum(1), recv, false).or_else(|_| {
                let one = new_rect(ctx, Value::fixnum(1), Value::fixnum(0))?;
                divide(ctx, one, recv, false)
            })?;
            n = -n;
            other = Value::fixnum(n);
        }
        let (xr, xi) = parts(base);
        if is_zero(ctx, xi)? {
            let zr = ctx.call(xr, sym::POW, &[other])?;
            return new_rect(ctx, zr, xi);
        }
        if is_zero(ctx, xr)? {
            let mut zi = ctx.call(xi, sym::POW, &[other])?;
            if n & 2 != 0 {
                zi = neg(ctx, zi)?;
            }
            let mut zr = xr;
            if n & 1 == 0 {
                std::mem::swap(&mut zr, &mut zi);
            }
            return new_rect(ctx, zr, zi);
        }
        let (mut xr, mut xi) = (xr, xi);
        let (mut zr, mut zi) = (xr, xi);
        n -= 1;
        while n > 0 {
            while n % 2 == 0 {
                let a = mul(ctx, xr, xr)?;
                let b = mul(ctx, xi, xi)?;
                let tmp = sub(ctx, a, b)?;
                let two_xr = mul(ctx, Value::fixnum(2), xr)?;
                xi = mul(ctx, two_xr, xi)?;
                xr = tmp;
                n /= 2;
            }
            let (r, i) = comp_mul(ctx, zr, zi, xr, xi)?;
            zr = r;
            zi = i;
            n -= 1;
        }
        return new_rect(ctx, zr, zi);
    }
    if is_real(ctx, other)? {
        let r = m_abs(ctx, recv, args)?;
        let theta = m_arg(ctx, recv, args)?;
        let nr = ctx.call(r, sym::POW, &[other])?;
        let nt = mul(ctx, theta, other)?;
        return polar(ctx, nr, nt);
    }
    numeric::coerce_bin(ctx, recv, other, sym::POW, false)
}

// ---- comparison ----

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let o = args.pos[0];
    if is_complex(o) {
        let (c, d) = parts(o);
        return Ok(Value::bool(object::equal(ctx, a, c)? && object::equal(ctx, b, d)?));
    }
    if is_real(ctx, o)? {
        return Ok(Value::bool(object::equal(ctx, a, o)? && is_zero(ctx, b)?));
    }
    let r = ctx.call(o, sym::EQ, &[recv])?;
    Ok(Value::bool(r.truthy()))
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_complex(o) && !numeric::is_numeric(ctx, o) {
        return match numeric::coerce_cmp(ctx, recv, o)? {
            Some(ord) => Ok(Value::fixnum(ord as i64)),
            None => Ok(Value::NIL),
        };
    }
    let (a, b) = parts(recv);
    if !is_zero(ctx, b)? {
        return Ok(Value::NIL);
    }
    if is_complex(o) {
        let (c, d) = parts(o);
        if !is_zero(ctx, d)? {
            return Ok(Value::NIL);
        }
        return ctx.call(a, sym::CMP, &[c]);
    }
    ctx.call(a, sym::CMP, &[o])
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_complex(o) {
        return Ok(Value::FALSE);
    }
    let (a, b) = parts(recv);
    let (c, d) = parts(o);
    if object::real_class_of(ctx, a) != object::real_class_of(ctx, c) || object::real_class_of(ctx, b) != object::real_class_of(ctx, d) {
        return Ok(Value::FALSE);
    }
    m_eq(ctx, recv, args)
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let x = object::hash_of(ctx, a)?;
    let y = object::hash_of(ctx, b)?;
    Ok(Value::fixnum((crate::core::hash::mix(x ^ 0x436f_6d70, y) >> 2) as i64))
}

// ---- properties ----

fn m_real(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(recv).0)
}

fn m_imag(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(recv).1)
}

fn m_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    if is_zero(ctx, a)? {
        let r = abs_real(ctx, b)?;
        if float::is_float(a) && !float::is_float(b) {
            let f = numeric::to_f64(ctx, r)?;
            return Ok(float::new(ctx, f));
        }
        return Ok(r);
    }
    if is_zero(ctx, b)? {
        let r = abs_real(ctx, a)?;
        if !float::is_float(a) && float::is_float(b) {
            let f = numeric::to_f64(ctx, r)?;
            return Ok(float::new(ctx, f));
        }
        return Ok(r);
    }
    let x = numeric::to_f64(ctx, a)?;
    let y = numeric::to_f64(ctx, b)?;
    Ok(float::new(ctx, x.hypot(y)))
}

fn m_abs2(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let aa = mul(ctx, a, a)?;
    let bb = mul(ctx, b, b)?;
    add(ctx, aa, bb)
}

fn m_arg(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let x = numeric::to_f64(ctx, a)?;
    let y = numeric::to_f64(ctx, b)?;
    Ok(float::new(ctx, y.atan2(x)))
}

fn m_polar_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = m_abs(ctx, recv, args)?;
    let t = m_arg(ctx, recv, args)?;
    Ok(array::from_slice(ctx, &[r, t]))
}

fn m_conj(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let nb = neg(ctx, b)?;
    new_rect(ctx, a, nb)
}

fn m_rect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    Ok(array::from_slice(ctx, &[a, b]))
}

fn m_real_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::FALSE)
}

fn part_finite(ctx: &mut Ctx, v: Value) -> Result<bool> {
    if float::is_float(v) {
        return Ok(float::get(v).is_finite());
    }
    if integer::is_integer(v) || rational::is_rational(v) {
        return Ok(true);
    }
    Ok(ctx.call_str(v, "finite?", &[])?.truthy())
}

fn m_finite(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    Ok(Value::bool(part_finite(ctx, a)? && part_finite(ctx, b)?))
}

fn m_infinite(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let inf = |v: Value| float::is_float(v) && float::get(v).is_infinite();
    Ok(if inf(a) || inf(b) { Value::fixnum(1) } else { Value::NIL })
}

fn m_denominator(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let da = ctx.call_str(a, "denominator", &[])?;
    let db = ctx.call_str(b, "denominator", &[])?;
    ctx.call_str(da, "lcm", &[db])
}

fn m_numerator(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = m_denominator(ctx, recv, args)?;
    let c = m_mul(ctx, recv, &Args::new(&[d]))?;
    let (a, b) = parts(c);
    let (a, b) = (canonicalize(a), canonicalize(b));
    new_rect(ctx, a, b)
}

// ---- conversions ----

fn format_parts(ctx: &mut Ctx, recv: Value, inspect: bool) -> Result<Vec<u8>> {
    let (a, b) = parts(recv);
    let show = |ctx: &mut Ctx, v: Value| -> Result<Vec<u8>> {
        let s = if inspect { object::inspect(ctx, v)? } else { string::to_s(ctx, v)? };
        Ok(string::bytes(s).to_vec())
    };
    let positive = if float::is_float(b) {
        !float::get(b).is_sign_negative()
    } else if integer::is_integer(b) {
        !bignum::to_big(b).is_negative_num()
    } else {
        !ctx.call(b, sym::LT, &[Value::fixnum(0)])?.truthy()
    };
    let mut out = show(ctx, a)?;
    out.push(if positive { b'+' } else { b'-' });
    let babs = abs_real(ctx, b)?;
    out.extend(show(ctx, babs)?);
    if !out.last().is_some_and(u8::is_ascii_digit) {
        out.push(b'*');
    }
    out.push(b'i');
    Ok(out)
}

trait NegativeNum {
    fn is_negative_num(&self) -> bool;
}

impl NegativeNum for num_bigint::BigInt {
    fn is_negative_num(&self) -> bool {
        self.sign() == num_bigint::Sign::Minus
    }
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = format_parts(ctx, recv, false)?;
    Ok(string::new_with_enc(ctx, s, crate::core::encoding::US_ASCII))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let mut s = vec![b'('];
    s.extend(format_parts(ctx, recv, true)?);
    s.push(b')');
    Ok(string::new_with_enc(ctx, s, crate::core::encoding::US_ASCII))
}

/// The real part, when the imaginary part is an exact zero.
fn real_only(ctx: &mut Ctx, recv: Value, what: &str) -> Result<Value> {
    let (a, b) = parts(recv);
    if !is_exact_zero(b) {
        let s = format_parts(ctx, recv, false)?;
        let s = String::from_utf8_lossy(&s).into_owned();
        return Err(ctx.range_error(&format!("can't convert {s} into {what}")));
    }
    Ok(a)
}

fn m_to_i(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = real_only(ctx, recv, "Integer")?;
    ctx.call(a, sym::TO_I, &[])
}

fn m_to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = real_only(ctx, recv, "Float")?;
    ctx.call(a, sym::TO_F, &[])
}

fn m_to_r(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = real_only(ctx, recv, "Rational")?;
    ctx.call(a, sym::TO_R, &[])
}

fn m_rationalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = real_only(ctx, recv, "Rational")?;
    ctx.call_str(a, "rationalize", args.pos)
}

fn m_to_c(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if is_complex(o) {
        return Ok(array::from_slice(ctx, &[o, recv]));
    }
    if is_real(ctx, o)? {
        let c = new_rect(ctx, o, Value::fixnum(0))?;
        return Ok(array::from_slice(ctx, &[c, recv]));
    }
    Err(numeric::coerce_failed(ctx, recv, o))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().complex;
    crate::methods!(ctx, c, [
        ("rectangular", s_rect, [1..=2], Safe, Singleton),
        ("rect", s_rect, [1..=2], Safe, Singleton),
        ("polar", s_polar, [1..=2], Safe, Singleton),
        ("+", m_plus, [1], Safe),
        ("-", m_minus, [1], Safe),
        ("*", m_mul, [1], Safe),
        ("/", m_div, [1], Safe),
        ("quo", m_div, [1], Safe),
        ("fdiv", m_fdiv, [1], Safe),
        ("**", m_pow, [1], Safe),
        ("-@", m_uminus, [0], Safe),
        ("==", m_eq, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("real", m_real, [0], Safe),
        ("imaginary", m_imag, [0], Safe),
        ("imag", m_imag, [0], Safe),
        ("abs", m_abs, [0], Safe),
        ("magnitude", m_abs, [0], Safe),
        ("abs2", m_abs2, [0], Safe),
        ("arg", m_arg, [0], Safe),
        ("angle", m_arg, [0], Safe),
        ("phase", m_arg, [0], Safe),
        ("polar", m_polar_m, [0], Safe),
        ("conjugate", m_conj, [0], Safe),
        ("conj", m_conj, [0], Safe),
        ("rectangular", m_rect, [0], Safe),
        ("rect", m_rect, [0], Safe),
        ("real?", m_real_p, [0], Safe),
        ("finite?", m_finite, [0], Safe),
        ("infinite?", m_infinite, [0], Safe),
        ("numerator", m_numerator, [0], Safe),
        ("denominator", m_denominator, [0], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_i", m_to_i, [0], Safe),
        ("to_f", m_to_f, [0], Safe),
        ("to_r", m_to_r, [0], Safe),
        ("rationalize", m_rationalize, [0..=1], Safe),
        ("to_c", m_to_c, [0], Safe),
        ("coerce", m_coerce, [1], Safe),
    ]);
    let i_const = new_rect(ctx, Value::fixnum(0), Value::fixnum(1)).expect("Complex::I");
    let id = ctx.intern("I");
    crate::core::module::body(c).const_set(id, i_const);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [("Complex", kernel_complex, [1..=2], Safe, ModuleFunction, Kw)]);
    let n = ctx.c().numeric;
    crate::methods!(ctx, n, [("__imaginary_literal__", imaginary_literal, [0], Safe)]);
    // Instances come from literals and conversions only (CRuby undefines `new`).
    let single = object::singleton_class(ctx, ctx.c().complex).expect("singleton class of a builtin class");
    let _ = crate::core::module_methods::undef_method(ctx, single, sym::NEW);
}
