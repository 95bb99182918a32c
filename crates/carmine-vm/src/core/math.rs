//! Math: the module functions over Floats, following CRuby's `math.c` (domain checks and
//! their messages, logarithms of Integers beyond the double range, the exact factorial
//! table for `gamma`, the glibc `cbrt` correction).
//!
//! Invariant: every function converts its arguments with `arg` (CRuby's `Get_Double`)
//! before computing, and reports domain errors as `Math::DomainError`.

use crate::core::{array, bignum, float, integer, numeric};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

extern "C" {
    fn tgamma(x: f64) -> f64;
    fn lgamma_r(x: f64, sign: *mut i32) -> f64;
    fn erf(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
}

fn arg(ctx: &mut Ctx, v: Value) -> Result<f64> {
    if v.is_nil() || crate::core::string::is_string(v) || v == Value::TRUE || v == Value::FALSE {
        let name = crate::core::object::type_name_for_error(ctx, v);
        return Err(ctx.type_error(&format!("can't convert {name} into Float")));
    }
    numeric::to_f64(ctx, v)
}

fn domain_error(ctx: &mut Ctx, name: &str) -> crate::error::Unwind {
    let msg = format!("Numerical argument is out of domain - {name}");
    ctx.raise(ctx.c().math_domain_error, &msg)
}

macro_rules! unary {
    ($fname:ident, $name:literal, |$x:ident| $body:expr, $domain:expr) => {
        fn $fname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
            let $x = arg(ctx, args.pos[0])?;
            if !($domain) {
                return Err(domain_error(ctx, $name));
            }
            Ok(float::new(ctx, $body))
        }
    };
}

unary!(sin, "sin", |x| x.sin(), true);
unary!(cos, "cos", |x| x.cos(), true);
unary!(tan, "tan", |x| x.tan(), true);
unary!(asin, "asin", |x| x.asin(), !(x < -1.0 || x > 1.0));
unary!(acos, "acos", |x| x.acos(), !(x < -1.0 || x > 1.0));
unary!(atan, "atan", |x| x.atan(), true);
unary!(sinh, "sinh", |x| x.sinh(), true);
unary!(cosh, "cosh", |x| x.cosh(), true);
unary!(tanh, "tanh", |x| x.tanh(), true);
unary!(asinh, "asinh", |x| x.asinh(), true);
unary!(acosh, "acosh", |x| x.acosh(), !(x < 1.0));
unary!(exp, "exp", |x| x.exp(), true);
// SAFETY (both): erf/erfc are pure libm functions of a double.
unary!(erf_m, "erf", |x| unsafe { erf(x) }, true);
unary!(erfc_m, "erfc", |x| unsafe { erfc(x) }, true);

fn atanh(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    if x < -1.0 || x > 1.0 {
        return Err(domain_error(ctx, "atanh"));
    }
    let r = if x == -1.0 {
        f64::NEG_INFINITY
    } else if x == 1.0 {
        f64::INFINITY
    } else {
        x.atanh()
    };
    Ok(float::new(ctx, r))
}

fn sqrt(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    if x < 0.0 {
        return Err(domain_error(ctx, "sqrt"));
    }
    if x == 0.0 {
        return Ok(float::new(ctx, 0.0));
    }
    Ok(float::new(ctx, x.sqrt()))
}

fn cbrt(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    let f = x.cbrt();
    let mut r = f;
    // One Newton step, as CRuby does on glibc, whose cbrt may be off by an ulp.
    if r.is_finite() && !(f == 0.0 && r == 0.0) {
        r = (2.0 * r + (x / r / r)) / 3.0;
    }
    Ok(float::new(ctx, r))
}

/// A real as (double, extra binary exponent): Integers too large for a double are
/// shifted right first so their logarithm stays finite.
fn split_for_log(ctx: &mut Ctx, v: Value) -> Result<(f64, u64)> {
    if bignum::is_bignum(v) {
        let b = bignum::get(v);
        if num_traits::Signed::is_positive(b) && b.bits() >= 1024 {
            let shift = b.bits() - 53;
            let small: f64 = num_traits::ToPrimitive::to_f64(&(b >> shift as usize)).unwrap_or(0.0);
            return Ok((small, shift));
        }
    }
    Ok((arg(ctx, v)?, 0))
}

fn log1(ctx: &mut Ctx, v: Value, name: &str) -> Result<f64> {
    let (d, bits) = split_for_log(ctx, v)?;
    if d < 0.0 {
        return Err(domain_error(ctx, name));
    }
    if d == 0.0 {
        return Ok(f64::NEG_INFINITY);
    }
    Ok(d.ln() + bits as f64 * std::f64::consts::LN_2)
}

/// Natural logarithm of a real value (bignums beyond the double range included).
pub fn log_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let l = log1(ctx, v, "log")?;
    Ok(float::new(ctx, l))
}

fn log(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut d = log1(ctx, args.pos[0], "log")?;
    if let Some(&b) = args.pos.get(1) {
        d /= log1(ctx, b, "log")?;
    }
    Ok(float::new(ctx, d))
}

fn log2(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (d, bits) = split_for_log(ctx, args.pos[0])?;
    if d < 0.0 {
        return Err(domain_error(ctx, "log2"));
    }
    if d == 0.0 {
        return Ok(float::new(ctx, f64::NEG_INFINITY));
    }
    Ok(float::new(ctx, d.log2() + bits as f64))
}

fn log10(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (d, bits) = split_for_log(ctx, args.pos[0])?;
    if d < 0.0 {
        return Err(domain_error(ctx, "log10"));
    }
    if d == 0.0 {
        return Ok(float::new(ctx, f64::NEG_INFINITY));
    }
    Ok(float::new(ctx, d.log10() + bits as f64 * std::f64::consts::LOG10_2))
}

fn atan2(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = arg(ctx, args.pos[0])?;
    let x = arg(ctx, args.pos[1])?;
    if x == 0.0 && y == 0.0 {
        if !x.is_sign_negative() {
            return Ok(float::new(ctx, y));
        }
        if !y.is_sign_negative() {
            return Ok(float::new(ctx, std::f64::consts::PI));
        }
        return Ok(float::new(ctx, -std::f64::consts::PI));
    }
    Ok(float::new(ctx, y.atan2(x)))
}

fn hypot(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    let y = arg(ctx, args.pos[1])?;
    Ok(float::new(ctx, x.hypot(y)))
}

fn ldexp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    let e = integer::to_i64_arg(ctx, args.pos[1])?;
    if e > i32::MAX as i64 || e < i32::MIN as i64 {
        return Err(ctx.range_error(&format!("integer {e} too {} to convert to 'int'", if e > 0 { "big" } else { "small" })));
    }
    // Scale in steps so intermediate powers of two never overflow or underflow early.
    let mut r = x;
    let mut e = e;
    while e > 1000 {
        r *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        r *= 2f64.powi(-1000);
        e += 1000;
    }
    Ok(float::new(ctx, r * 2f64.powi(e as i32)))
}

fn frexp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    if x == 0.0 || !x.is_finite() {
        let f = float::new(ctx, x);
        return Ok(array::from_slice(ctx, &[f, Value::fixnum(0)]));
    }
    let bits = x.to_bits();
    let be = ((bits >> 52) & 0x7ff) as i64;
    let (m, e) = if be == 0 {
        // Subnormal: normalise first.
        let y = x * 2f64.powi(64);
        let b2 = ((y.to_bits() >> 52) & 0x7ff) as i64;
        (f64::from_bits((y.to_bits() & !(0x7ff << 52)) | (1022 << 52)), b2 - 1022 - 64)
    } else {
        (f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52)), be - 1022)
    };
    let f = float::new(ctx, m);
    Ok(array::from_slice(ctx, &[f, Value::fixnum(e)]))
}

const FACT_TABLE: [f64; 23] = [
    1.0, 1.0, 2.0, 6.0, 24.0, 120.0, 720.0, 5040.0, 40320.0, 362880.0, 3628800.0, 39916800.0, 479001600.0, 6227020800.0, 87178291200.0, 1307674368000.0,
    20922789888000.0, 355687428096000.0, 6402373705728000.0, 121645100408832000.0, 2432902008176640000.0, 51090942171709440000.0, 1124000727777607680000.0,
];

fn gamma(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let d = arg(ctx, args.pos[0])?;
    if d.is_infinite() {
        if d < 0.0 {
            return Err(domain_error(ctx, "gamma"));
        }
        return Ok(float::new(ctx, f64::INFINITY));
    }
    if d == 0.0 {
        return Ok(float::new(ctx, if d.is_sign_negative() { f64::NEG_INFINITY } else { f64::INFINITY }));
    }
    if d == d.floor() {
        if d < 0.0 {
            return Err(domain_error(ctx, "gamma"));
        }
        if (1.0..=23.0).contains(&d) {
            return Ok(float::new(ctx, FACT_TABLE[d as usize - 1]));
        }
    }
    // SAFETY: tgamma is a pure libm function of a double.
    Ok(float::new(ctx, unsafe { tgamma(d) }))
}

fn lgamma(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let d = arg(ctx, args.pos[0])?;
    if d.is_infinite() {
        if d < 0.0 {
            return Err(domain_error(ctx, "lgamma"));
        }
        let v = float::new(ctx, f64::INFINITY);
        return Ok(array::from_slice(ctx, &[v, Value::fixnum(1)]));
    }
    if d == 0.0 {
        let sign = if d.is_sign_negative() { -1 } else { 1 };
        let v = float::new(ctx, f64::INFINITY);
        return Ok(array::from_slice(ctx, &[v, Value::fixnum(sign)]));
    }
    let mut sign: i32 = 1;
    // SAFETY: lgamma_r writes the sign through a valid pointer to a local.
    let r = unsafe { lgamma_r(d, &mut sign) };
    let v = float::new(ctx, r);
    Ok(array::from_slice(ctx, &[v, Value::fixnum(if sign < 0 { -1 } else { 1 })]))
}

pub fn init(ctx: &mut Ctx) {
    let m = ctx.c().math;
    for (name, v) in [("PI", std::f64::consts::PI), ("E", std::f64::consts::E)] {
        let id = ctx.intern(name);
        let fv = float::new(ctx, v);
        crate::core::module::body(m).const_set(id, fv);
    }
    crate::methods!(ctx, m, [
        ("sqrt", sqrt, [1], Safe, ModuleFunction),
        ("cbrt", cbrt, [1], Safe, ModuleFunction),
        ("sin", sin, [1], Safe, ModuleFunction),
        ("cos", cos, [1], Safe, ModuleFunction),
        ("tan", tan, [1], Safe, ModuleFunction),
        ("asin", asin, [1], Safe, ModuleFunction),
        ("acos", acos, [1], Safe, ModuleFunction),
        ("atan", atan, [1], Safe, ModuleFunction),
        ("atan2", atan2, [2], Safe, ModuleFunction),
        ("sinh", sinh, [1], Safe, ModuleFunction),
        ("cosh", cosh, [1], Safe, ModuleFunction),
        ("tanh", tanh, [1], Safe, ModuleFunction),
        ("asinh", asinh, [1], Safe, ModuleFunction),
        ("acosh", acosh, [1], Safe, ModuleFunction),
        ("atanh", atanh, [1], Safe, ModuleFunction),
        ("exp", exp, [1], Safe, ModuleFunction),
        ("log", log, [1..=2], Safe, ModuleFunction),
        ("log2", log2, [1], Safe, ModuleFunction),
        ("log10", log10, [1], Safe, ModuleFunction),
        ("hypot", hypot, [2], Safe, ModuleFunction),
        ("ldexp", ldexp, [2], Safe, ModuleFunction),
        ("frexp", frexp, [1], Safe, ModuleFunction),
        ("erf", erf_m, [1], Safe, ModuleFunction),
        ("erfc", erfc_m, [1], Safe, ModuleFunction),
        ("gamma", gamma, [1], Safe, ModuleFunction),
        ("lgamma", lgamma, [1], Safe, ModuleFunction),
    ]);
}
