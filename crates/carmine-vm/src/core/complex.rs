//! Complex: a pair of Reals (real, imaginary).

use crate::core::{array, float, integer, numeric, object, string};
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
    let c = data_ref::<ComplexObj>(v).expect("complex");
    (c.re, c.im)
}

pub fn new_rect(ctx: &mut Ctx, re: Value, im: Value) -> Result<Value> {
    let klass = ctx.c().complex;
    let v = object::new_data(ctx, klass, Box::new(ComplexObj { re, im }));
    Ok(object::freeze(v))
}

/// `Complex.polar(r, theta)` (CRuby's `f_complex_polar`).
pub fn polar(ctx: &mut Ctx, r: Value, theta: Value) -> Result<Value> {
    let is_zero = |v: Value| v == Value::fixnum(0) || (float::is_float(v) && float::get(v) == 0.0);
    if is_zero(theta) && !float::is_float(theta) || is_zero(r) && !float::is_float(r) {
        return new_rect(ctx, r, Value::fixnum(0));
    }
    if float::is_float(theta) {
        let arg = float::get(theta);
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

fn operand(ctx: &mut Ctx, v: Value) -> Result<Option<(Value, Value)>> {
    if is_complex(v) {
        return Ok(Some(parts(v)));
    }
    if numeric::is_numeric(ctx, v) {
        return Ok(Some((v, Value::fixnum(0))));
    }
    Ok(None)
}

fn add(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    ctx.call(a, sym::PLUS, &[b])
}
fn sub(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    ctx.call(a, sym::MINUS, &[b])
}
fn mul(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    ctx.call(a, sym::MUL, &[b])
}

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::PLUS, false) };
    let re = add(ctx, a, c)?;
    let im = add(ctx, b, d)?;
    new_rect(ctx, re, im)
}

fn m_minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::MINUS, false) };
    let re = sub(ctx, a, c)?;
    let im = sub(ctx, b, d)?;
    new_rect(ctx, re, im)
}

fn m_mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::MUL, false) };
    let ac = mul(ctx, a, c)?;
    let bd = mul(ctx, b, d)?;
    let ad = mul(ctx, a, d)?;
    let bc = mul(ctx, b, c)?;
    let re = sub(ctx, ac, bd)?;
    let im = add(ctx, ad, bc)?;
    new_rect(ctx, re, im)
}

fn m_div(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let Some((c, d)) = operand(ctx, args.pos[0])? else { return numeric::coerce_bin(ctx, recv, args.pos[0], sym::DIV, false) };
    let cc = mul(ctx, c, c)?;
    let dd = mul(ctx, d, d)?;
    let den = add(ctx, cc, dd)?;
    let ac = mul(ctx, a, c)?;
    let bd = mul(ctx, b, d)?;
    let bc = mul(ctx, b, c)?;
    let ad = mul(ctx, a, d)?;
    let rn = add(ctx, ac, bd)?;
    let inum = sub(ctx, bc, ad)?;
    let quo = ctx.intern("quo");
    let re = ctx.call(rn, quo, &[den])?;
    let im = ctx.call(inum, quo, &[den])?;
    new_rect(ctx, re, im)
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    match operand(ctx, args.pos[0])? {
        Some((c, d)) => Ok(Value::bool(object::equal(ctx, a, c)? && object::equal(ctx, b, d)?)),
        None => {
            let r = ctx.call(args.pos[0], sym::EQ, &[recv])?;
            Ok(Value::bool(r.truthy()))
        }
    }
}

fn m_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if is_complex(o) {
        return Ok(array::from_slice(ctx, &[o, recv]));
    }
    if numeric::is_numeric(ctx, o) && ctx.call_str(o, "real?", &[])?.truthy() {
        let c = new_rect(ctx, o, Value::fixnum(0))?;
        return Ok(array::from_slice(ctx, &[c, recv]));
    }
    let cname = object::class_name_of(ctx, o);
    Err(ctx.type_error(&format!("{cname} can't be coerced into Complex")))
}

fn m_real(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(recv).0)
}

fn m_imag(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(recv).1)
}

fn m_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let x = numeric::to_f64(ctx, a)?;
    let y = numeric::to_f64(ctx, b)?;
    Ok(float::new(ctx, x.hypot(y)))
}

fn m_arg(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let x = numeric::to_f64(ctx, a)?;
    let y = numeric::to_f64(ctx, b)?;
    Ok(float::new(ctx, y.atan2(x)))
}

fn m_conj(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let nb = ctx.call(b, sym::UMINUS, &[])?;
    new_rect(ctx, a, nb)
}

fn m_rect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    Ok(array::from_slice(ctx, &[a, b]))
}

fn format_parts(ctx: &mut Ctx, recv: Value) -> Result<String> {
    let (a, b) = parts(recv);
    let re = string::to_s(ctx, a)?;
    let re = string::to_rust_string_lossy(re);
    let neg = if float::is_float(b) { float::get(b).is_sign_negative() } else { ctx.call(b, sym::LT, &[Value::fixnum(0)])?.truthy() };
    let babs = if neg { ctx.call(b, sym::UMINUS, &[])? } else { b };
    let im = string::to_s(ctx, babs)?;
    let mut im = string::to_rust_string_lossy(im);
    if float::is_float(b) && !float::get(b).is_finite() {
        im.push('*');
    }
    Ok(format!("{}{}{}i", re, if neg { "-" } else { "+" }, im))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = format_parts(ctx, recv)?;
    Ok(string::new_us_ascii(ctx, &s))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = format_parts(ctx, recv)?;
    Ok(string::new_us_ascii(ctx, &format!("({s})")))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let x = object::hash_of(ctx, a)?;
    let y = object::hash_of(ctx, b)?;
    Ok(Value::fixnum((crate::core::hash::mix(x, y) >> 2) as i64))
}

fn m_real_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::FALSE)
}

fn s_rect(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let im = args.pos.get(1).copied().unwrap_or(Value::fixnum(0));
    new_rect(ctx, args.pos[0], im)
}

fn s_polar(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let r = numeric::to_f64(ctx, args.pos[0])?;
    let t = match args.pos.get(1) {
        Some(&t) => numeric::to_f64(ctx, t)?,
        None => 0.0,
    };
    let re = float::new(ctx, r * t.cos());
    let im = float::new(ctx, r * t.sin());
    new_rect(ctx, re, im)
}

/// `Kernel#Complex(a, b = 0)`.
fn kernel_complex(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    if string::is_string(a) {
        let b = string::bytes(a).to_vec();
        if b.contains(&0) {
            return Err(ctx.arg_error("string contains null byte"));
        }
        return match crate::core::numeric_parse::complex_value(ctx, &b, true)? {
            Some(c) => Ok(c),
            None => {
                let q = String::from_utf8_lossy(&string::inspect_bytes(&b, string::encoding(a))).into_owned();
                Err(ctx.arg_error(&format!("invalid value for convert(): {q}")))
            }
        };
    }
    if is_complex(a) && args.pos.len() == 1 {
        return Ok(a);
    }
    let im = args.pos.get(1).copied().unwrap_or(Value::fixnum(0));
    new_rect(ctx, a, im)
}

/// `3i` literals compile to `3.__imaginary_literal__`.
fn imaginary_literal(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    new_rect(ctx, Value::fixnum(0), recv)
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
        ("==", m_eq, [1], Safe),
        ("real", m_real, [0], Safe),
        ("imaginary", m_imag, [0], Safe),
        ("imag", m_imag, [0], Safe),
        ("abs", m_abs, [0], Safe),
        ("magnitude", m_abs, [0], Safe),
        ("arg", m_arg, [0], Safe),
        ("angle", m_arg, [0], Safe),
        ("conjugate", m_conj, [0], Safe),
        ("conj", m_conj, [0], Safe),
        ("rectangular", m_rect, [0], Safe),
        ("rect", m_rect, [0], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("hash", m_hash, [0], Safe),
        ("real?", m_real_p, [0], Safe),
        ("coerce", m_coerce, [1], Safe),
    ]);
    let i_const = {
        let z = Value::fixnum(0);
        let o = Value::fixnum(1);
        new_rect(ctx, z, o).expect("Complex::I")
    };
    let id = ctx.intern("I");
    crate::core::module::body(c).const_set(id, i_const);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [("Complex", kernel_complex, [1..=2], Safe, ModuleFunction)]);
    let n = ctx.c().numeric;
    crate::methods!(ctx, n, [("__imaginary_literal__", imaginary_literal, [0], Safe)]);
    let _ = integer::is_integer;
}
