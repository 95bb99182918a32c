//! Math: the module functions over Floats.

use crate::core::{array, float, integer, numeric};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn arg(ctx: &mut Ctx, v: Value) -> Result<f64> {
    if v.is_nil() || crate::core::string::is_string(v) || v == Value::TRUE || v == Value::FALSE {
        let name = crate::core::object::type_name_for_error(ctx, v);
        return Err(ctx.type_error(&format!("can't convert {name} into Float")));
    }
    numeric::to_f64(ctx, v)
}

fn domain_error(ctx: &mut Ctx, name: &str) -> crate::error::Unwind {
    let msg = format!("Numerical argument is out of domain - \"{name}\"");
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

unary!(sqrt, "sqrt", |x| if x == 0.0 { x } else { x.sqrt() }, x >= 0.0 || x.is_nan());
unary!(cbrt, "cbrt", |x| x.cbrt(), true);
unary!(sin, "sin", |x| x.sin(), true);
unary!(cos, "cos", |x| x.cos(), true);
unary!(tan, "tan", |x| x.tan(), true);
unary!(asin, "asin", |x| x.asin(), (-1.0..=1.0).contains(&x) || x.is_nan());
unary!(acos, "acos", |x| x.acos(), (-1.0..=1.0).contains(&x) || x.is_nan());
unary!(atan, "atan", |x| x.atan(), true);
unary!(sinh, "sinh", |x| x.sinh(), true);
unary!(cosh, "cosh", |x| x.cosh(), true);
unary!(tanh, "tanh", |x| x.tanh(), true);
unary!(asinh, "asinh", |x| x.asinh(), true);
unary!(acosh, "acosh", |x| x.acosh(), x >= 1.0 || x.is_nan());
unary!(atanh, "atanh", |x| x.atanh(), (-1.0..=1.0).contains(&x) || x.is_nan());
unary!(exp, "exp", |x| x.exp(), true);
unary!(log2, "log2", |x| x.log2(), x >= 0.0 || x.is_nan());
unary!(log10, "log10", |x| x.log10(), x >= 0.0 || x.is_nan());
unary!(erf, "erf", |x| erf_f(x), true);
unary!(erfc, "erfc", |x| 1.0 - erf_f(x), true);

fn erf_f(x: f64) -> f64 {
    // Abramowitz-Stegun 7.1.26 refined with a series for small |x|.
    if x.abs() < 2.0 {
        let mut sum = x;
        let mut term = x;
        let x2 = x * x;
        for n in 1..60 {
            term *= -x2 / n as f64;
            sum += term / (2 * n + 1) as f64;
        }
        return 2.0 / std::f64::consts::PI.sqrt() * sum;
    }
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = 1.0 - t * (-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))).exp();
    if x >= 0.0 {
        y
    } else {
        -y
    }
}

/// Natural logarithm of a real value (bignums beyond the double range included).
pub fn log_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if crate::core::bignum::is_bignum(v) {
        let b = crate::core::bignum::get(v);
        let bits = b.bits() as i64;
        let shift = (bits - 60).max(0);
        let small: f64 = num_traits::ToPrimitive::to_f64(&(b >> shift as usize)).unwrap_or(0.0);
        return Ok(float::new(ctx, small.ln() + shift as f64 * std::f64::consts::LN_2));
    }
    let x = arg(ctx, v)?;
    Ok(float::new(ctx, x.ln()))
}

fn log(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let x = if crate::core::bignum::is_bignum(v) {
        let b = crate::core::bignum::get(v);
        if num_traits::Signed::is_negative(b) {
            return Err(domain_error(ctx, "log"));
        }
        let bits = b.bits() as i64;
        let shift = (bits - 60).max(0);
        let small: f64 = num_traits::ToPrimitive::to_f64(&(b >> shift as usize)).unwrap_or(0.0);
        let l = small.ln() + shift as f64 * std::f64::consts::LN_2;
        return finish_log(ctx, l, args);
    } else {
        arg(ctx, v)?
    };
    if x < 0.0 {
        return Err(domain_error(ctx, "log"));
    }
    finish_log(ctx, x.ln(), args)
}

fn finish_log(ctx: &mut Ctx, l: f64, args: &Args) -> Result<Value> {
    match args.pos.get(1) {
        Some(&b) => {
            let base = arg(ctx, b)?;
            if base < 0.0 {
                return Err(domain_error(ctx, "log"));
            }
            Ok(float::new(ctx, l / base.ln()))
        }
        None => Ok(float::new(ctx, l)),
    }
}

fn atan2(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = arg(ctx, args.pos[0])?;
    let x = arg(ctx, args.pos[1])?;
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
    Ok(float::new(ctx, x * 2f64.powi(e.clamp(-2000, 2000) as i32)))
}

fn frexp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    if x == 0.0 || !x.is_finite() {
        let f = float::new(ctx, x);
        return Ok(array::from_slice(ctx, &[f, Value::fixnum(0)]));
    }
    let e = x.abs().log2().floor() as i64 + 1;
    let m = x / 2f64.powi(e as i32);
    let f = float::new(ctx, m);
    Ok(array::from_slice(ctx, &[f, Value::fixnum(e)]))
}

fn gamma(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    if x == f64::NEG_INFINITY || (x < 0.0 && x.fract() == 0.0) {
        return Err(domain_error(ctx, "gamma"));
    }
    if x.fract() == 0.0 && x > 0.0 && x < 24.0 {
        let mut r = 1.0;
        let mut i = 2.0;
        while i < x {
            r *= i;
            i += 1.0;
        }
        return Ok(float::new(ctx, r));
    }
    Ok(float::new(ctx, gamma_f(x)))
}

fn gamma_f(x: f64) -> f64 {
    if x < 0.5 {
        return std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma_f(1.0 - x));
    }
    let g = 7.0;
    let c = [0.999_999_999_999_809_9, 676.5203681218851, -1259.1392167224028, 771.323_428_777_653_1, -176.615_029_162_140_6, 12.507343278686905, -0.13857109526572012, 9.984_369_578_019_572e-6, 1.5056327351493116e-7];
    let x = x - 1.0;
    let mut a = c[0];
    let t = x + g + 0.5;
    for (i, &ci) in c.iter().enumerate().skip(1) {
        a += ci / (x + i as f64);
    }
    (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
}

fn lgamma(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = arg(ctx, args.pos[0])?;
    if x == f64::NEG_INFINITY {
        return Err(domain_error(ctx, "lgamma"));
    }
    let g = gamma_f(x);
    let v = float::new(ctx, g.abs().ln());
    let sign = if g < 0.0 { -1 } else { 1 };
    Ok(array::from_slice(ctx, &[v, Value::fixnum(sign)]))
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
        ("erf", erf, [1], Safe, ModuleFunction),
        ("erfc", erfc, [1], Safe, ModuleFunction),
        ("gamma", gamma, [1], Safe, ModuleFunction),
        ("lgamma", lgamma, [1], Safe, ModuleFunction),
    ]);
}
