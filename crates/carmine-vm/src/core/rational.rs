//! Rational: exact fractions of Integers, always in lowest terms with a positive
//! denominator.

use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{FromPrimitive, One, Signed, ToPrimitive, Zero};

use crate::core::{array, bignum, float, integer, numeric, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct RationalObj {
    pub num: Value,
    pub den: Value,
}

crate::data_obj!(RationalObj, |s, m| {
    m.mark(s.num);
    m.mark(s.den);
});

pub fn is_rational(v: Value) -> bool {
    data_ref::<RationalObj>(v).is_some()
}

/// (numerator, denominator) as BigInts.
pub fn parts(v: Value) -> (BigInt, BigInt) {
    let r = data_ref::<RationalObj>(v).expect("rational");
    (bignum::to_big(r.num), bignum::to_big(r.den))
}

fn make(ctx: &mut Ctx, n: BigInt, d: BigInt) -> Value {
    let num = bignum::normalize(ctx, n);
    let den = bignum::normalize(ctx, d);
    let klass = ctx.c().rational;
    let v = object::new_data(ctx, klass, Box::new(RationalObj { num, den }));
    object::freeze(v)
}

/// num/den reduced; `ZeroDivisionError` for a zero denominator.
pub fn reduce(ctx: &mut Ctx, n: BigInt, d: BigInt) -> Result<Value> {
    if d.is_zero() {
        return Err(ctx.zero_division());
    }
    let g = n.gcd(&d);
    let (mut n, mut d) = if g.is_zero() { (n, d) } else { (n / &g, d / &g) };
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    Ok(make(ctx, n, d))
}

pub fn new_reduced(ctx: &mut Ctx, num: Value, den: Value) -> Result<Value> {
    reduce(ctx, bignum::to_big(num), bignum::to_big(den))
}

pub fn new_literal(ctx: &mut Ctx, num: Value, den: Value) -> Result<Value> {
    new_reduced(ctx, num, den)
}

pub fn from_integer(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_rational(v) {
        return Ok(v);
    }
    if integer::is_integer(v) {
        return Ok(make(ctx, bignum::to_big(v), BigInt::one()));
    }
    if float::is_float(v) {
        let (n, d) = float::exact_fraction(float::get(v));
        return reduce(ctx, n, d);
    }
    Err(ctx.conversion_error(v, "Rational"))
}

pub fn to_f64(v: Value) -> f64 {
    let (n, d) = parts(v);
    let f = n.to_f64().unwrap_or(f64::NAN) / d.to_f64().unwrap_or(f64::NAN);
    if f.is_finite() {
        return f;
    }
    // Scale down huge parts before dividing.
    let shift = n.bits().max(d.bits()).saturating_sub(1000) as usize;
    (n >> shift).to_f64().unwrap_or(0.0) / (d >> shift).to_f64().unwrap_or(1.0)
}

/// Converts an operand to (num, den) if it is exact (Integer or Rational).
fn exact(v: Value) -> Option<(BigInt, BigInt)> {
    if integer::is_integer(v) {
        return Some((bignum::to_big(v), BigInt::one()));
    }
    if is_rational(v) {
        return Some(parts(v));
    }
    None
}

fn arith(ctx: &mut Ctx, recv: Value, other: Value, op: crate::symbol::SymId) -> Result<Value> {
    let (a, b) = parts(recv);
    if let Some((c, d)) = exact(other) {
        return match op {
            sym::PLUS => reduce(ctx, &a * &d + &c * &b, b * d),
            sym::MINUS => reduce(ctx, &a * &d - &c * &b, b * d),
            sym::MUL => reduce(ctx, a * c, b * d),
            _ => {
                if c.is_zero() {
                    return Err(ctx.zero_division());
                }
                reduce(ctx, a * d, b * c)
            }
        };
    }
    if float::is_float(other) {
        let x = to_f64(recv);
        let y = float::get(other);
        let r = match op {
            sym::PLUS => x + y,
            sym::MINUS => x - y,
            sym::MUL => x * y,
            _ => x / y,
        };
        return Ok(float::new(ctx, r));
    }
    numeric::coerce_bin(ctx, recv, other, op, false)
}

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith(ctx, recv, args.pos[0], sym::PLUS)
}
fn m_minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith(ctx, recv, args.pos[0], sym::MINUS)
}
fn m_mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith(ctx, recv, args.pos[0], sym::MUL)
}
fn m_div(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith(ctx, recv, args.pos[0], sym::DIV)
}

fn m_pow(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut e = args.pos[0];
    if e == Value::fixnum(0) {
        return Ok(make(ctx, BigInt::one(), BigInt::one()));
    }
    if is_rational(e) && parts(e).1.is_one() {
        let num = data_ref::<RationalObj>(e).map_or(Value::fixnum(0), |r| r.num);
        e = num;
    }
    if integer::is_integer(e) {
        let (n, d) = parts(recv);
        if d.is_one() {
            if n.is_one() {
                return Ok(make(ctx, BigInt::one(), BigInt::one()));
            }
            if n == BigInt::from(-1) {
                let odd = bignum::to_big(e).is_odd();
                return Ok(make(ctx, BigInt::from(if odd { -1 } else { 1 }), BigInt::one()));
            }
            if n.is_zero() {
                if bignum::to_big(e).is_negative() {
                    return Err(ctx.zero_division());
                }
                return Ok(make(ctx, BigInt::zero(), BigInt::one()));
            }
        }
    }
    if bignum::is_bignum(e) {
        return Err(ctx.arg_error("exponent is too large"));
    }
    if let Some(k) = e.as_fixnum() {
        let (n, d) = parts(recv);
        if (n.bits().max(d.bits()) as u128) * (k.unsigned_abs() as u128) > 32 * 1024 * 1024 * 8 {
            return Err(ctx.arg_error("exponent is too large"));
        }
        if k >= 0 {
            let k = k as u32;
            return reduce(ctx, num_traits::pow(n, k as usize), num_traits::pow(d, k as usize));
        }
        if n.is_zero() {
            return Err(ctx.zero_division());
        }
        let k = (-k) as usize;
        return reduce(ctx, num_traits::pow(d, k), num_traits::pow(n, k));
    }
    if float::is_float(e) || is_rational(e) {
        let x = to_f64(recv);
        let y = numeric::to_f64(ctx, e)?;
        return float::pow(ctx, x, y);
    }
    numeric::coerce_bin(ctx, recv, e, sym::POW, false)
}

/// `rationalize([eps])`: self, or the simplest rational within `eps`.
fn m_rationalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(&e) = args.pos.first() else { return Ok(recv) };
    let (n, d) = parts(recv);
    let neg = n.is_negative();
    let an = n.abs();
    let (a, b) = if float::is_float(e) {
        let x = crate::core::numeric_parse::ratio_to_f64(&an, &d);
        let ef = float::get(e).abs();
        (Real::Flt(x - ef), Real::Flt(x + ef))
    } else {
        let Some((en, ed)) = exact(e) else {
            let ef = numeric::to_f64(ctx, e)?.abs();
            let x = crate::core::numeric_parse::ratio_to_f64(&an, &d);
            let (p, q) = simplest_between(Real::Flt(x - ef), Real::Flt(x + ef));
            return reduce(ctx, if neg { -p } else { p }, q);
        };
        let en = en.abs();
        (Real::Rat(&an * &ed - &en * &d, &d * &ed), Real::Rat(&an * &ed + &en * &d, &d * &ed))
    };
    let same = match (&a, &b) {
        (Real::Rat(x1, y1), Real::Rat(x2, y2)) => x1 * y2 == x2 * y1,
        (Real::Flt(x), Real::Flt(y)) => x == y,
        _ => false,
    };
    if same {
        return Ok(recv);
    }
    let (p, q) = simplest_between(a, b);
    reduce(ctx, if neg { -p } else { p }, q)
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = parts(recv);
    let o = args.pos[0];
    if let Some((c, d)) = exact(o) {
        return Ok(Value::fixnum((a * d).cmp(&(c * b)) as i64));
    }
    if float::is_float(o) {
        return Ok(match to_f64(recv).partial_cmp(&float::get(o)) {
            Some(ord) => Value::fixnum(ord as i64),
            None => Value::NIL,
        });
    }
    match numeric::coerce_cmp(ctx, recv, o) {
        Ok(Some(ord)) => Ok(Value::fixnum(ord as i64)),
        _ => Ok(Value::NIL),
    }
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if let Some((c, d)) = exact(o) {
        let (a, b) = parts(recv);
        return Ok(Value::bool(a == c && b == d));
    }
    if float::is_float(o) {
        return Ok(Value::bool(to_f64(recv) == float::get(o)));
    }
    let r = ctx.call(o, sym::EQ, &[recv])?;
    Ok(Value::bool(r.truthy()))
}

fn m_numerator(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(data_ref::<RationalObj>(recv).map_or(Value::NIL, |r| r.num))
}

fn m_denominator(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(data_ref::<RationalObj>(recv).map_or(Value::NIL, |r| r.den))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (n, d) = parts(recv);
    Ok(string::new_us_ascii(ctx, &format!("{n}/{d}")))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (n, d) = parts(recv);
    Ok(string::new_us_ascii(ctx, &format!("({n}/{d})")))
}

fn m_to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(float::new(ctx, to_f64(recv)))
}

/// A real number in the simplest-rational search: exact, or a Float when an operand was.
#[derive(Clone)]
pub enum Real {
    Rat(BigInt, BigInt),
    Flt(f64),
}

impl Real {
    fn ceil(&self) -> BigInt {
        match self {
            Real::Rat(n, d) => {
                let (q, r) = n.div_mod_floor(d);
                if r.is_zero() {
                    q
                } else {
                    q + 1
                }
            }
            Real::Flt(f) => BigInt::from_f64(f.ceil()).unwrap_or_default(),
        }
    }

    fn gt_int(&self, c: &BigInt) -> bool {
        match self {
            Real::Rat(n, d) => n > &(c * d),
            Real::Flt(f) => {
                let cf = c.to_f64().unwrap_or(f64::INFINITY);
                *f > cf
            }
        }
    }

    /// 1 / (self - k)
    fn recip_minus(&self, k: &BigInt) -> Real {
        match self {
            Real::Rat(n, d) => {
                let num = n - k * d;
                if num.is_negative() {
                    Real::Rat(-d.clone(), -num)
                } else {
                    Real::Rat(d.clone(), num)
                }
            }
            Real::Flt(f) => Real::Flt(1.0 / (f - k.to_f64().unwrap_or(0.0))),
        }
    }
}

/// The simplest rational in the interval [a, b] (CRuby's `nurat_rationalize_internal`).
pub fn simplest_between(a: Real, b: Real) -> (BigInt, BigInt) {
    let (mut a, mut b) = (a, b);
    let (mut p0, mut p1, mut q0, mut q1) = (BigInt::zero(), BigInt::one(), BigInt::one(), BigInt::zero());
    for _ in 0..2000 {
        let c = a.ceil();
        if b.gt_int(&c) {
            return (&c * &p1 + &p0, &c * &q1 + &q0);
        }
        let k = c - 1;
        let p2 = &k * &p1 + &p0;
        let q2 = &k * &q1 + &q0;
        let t = b.recip_minus(&k);
        b = a.recip_minus(&k);
        a = t;
        p0 = p1;
        q0 = q1;
        p1 = p2;
        q1 = q2;
    }
    (p1, q1)
}

/// `n/d` rounded to `digits` decimal digits, as an exact fraction (`kind`: b'r' with
/// `half` b'u'/b'd'/b'e', or b'f', b'c', b't').
pub fn round_exact(n: &BigInt, d: &BigInt, digits: i64, kind: u8, half: u8) -> (BigInt, BigInt) {
    let scale: BigInt = num_traits::pow(BigInt::from(10), digits.unsigned_abs() as usize);
    let (sn, sd) = if digits >= 0 { (n * &scale, d.clone()) } else { (n.clone(), d * &scale) };
    let (q, r) = sn.div_mod_floor(&sd);
    let up = match kind {
        b'f' => false,
        b'c' => !r.is_zero(),
        b't' => sn.is_negative() && !r.is_zero(),
        _ => {
            let twice: BigInt = &r * 2;
            match twice.cmp(&sd) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => match half {
                    b'e' => q.is_odd(),
                    b'd' => sn.is_negative(),
                    _ => !sn.is_negative(),
                },
            }
        }
    };
    let q = if up { q + 1 } else { q };
    if digits >= 0 {
        (q, scale)
    } else {
        (q * scale, BigInt::one())
    }
}

fn rounded(ctx: &mut Ctx, recv: Value, args: &Args, mode: u8) -> Result<Value> {
    let (n, d) = parts(recv);
    let digits = match args.pos.first() {
        Some(&x) => integer::to_i64_arg(ctx, x)?,
        None => 0,
    };
    let half = if mode == b'r' { numeric::rounding_mode(ctx, args)? } else { b'u' };
    let scale: BigInt = num_traits::pow(BigInt::from(10), digits.unsigned_abs() as usize);
    let (sn, sd) = if digits >= 0 { (n * &scale, d) } else { (n, d * &scale) };
    let (q, r) = sn.div_mod_floor(&sd);
    let up = match mode {
        b'f' => false,
        b'c' => !r.is_zero(),
        b't' => sn.is_negative() && !r.is_zero(),
        _ => {
            let twice: BigInt = &r * 2;
            match twice.cmp(&sd) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Less => false,
                std::cmp::Ordering::Equal => match half {
                    b'e' => q.is_odd(),
                    b'd' => sn.is_negative(),
                    _ => !sn.is_negative(),
                },
            }
        }
    };
    let q = if up { q + 1 } else { q };
    if digits > 0 {
        return reduce(ctx, q, scale);
    }
    let r = if digits < 0 { q * scale } else { q };
    Ok(bignum::normalize(ctx, r))
}

fn m_floor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    rounded(ctx, recv, args, b'f')
}
fn m_ceil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    rounded(ctx, recv, args, b'c')
}
fn m_truncate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    rounded(ctx, recv, args, b't')
}
fn m_round(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    rounded(ctx, recv, args, b'r')
}

fn m_to_r(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (n, d) = parts(recv);
    Ok(make(ctx, n.abs(), d))
}

fn m_uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (n, d) = parts(recv);
    Ok(make(ctx, -n, d))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (n, d) = parts(recv);
    let seed = ctx.vm().hash_seed;
    let h = crate::core::hash::mix(crate::core::hash::hash_bytes(seed, &n.to_signed_bytes_le()), crate::core::hash::hash_bytes(seed, &d.to_signed_bytes_le()));
    Ok(Value::fixnum((h >> 2) as i64))
}

fn m_eql(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    Ok(Value::bool(is_rational(o) && parts(o) == parts(recv)))
}

fn m_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if integer::is_integer(o) {
        let r = from_integer(ctx, o)?;
        return Ok(array::from_slice(ctx, &[r, recv]));
    }
    if float::is_float(o) {
        let f = float::new(ctx, to_f64(recv));
        return Ok(array::from_slice(ctx, &[o, f]));
    }
    if is_rational(o) {
        return Ok(array::from_slice(ctx, &[o, recv]));
    }
    if crate::core::complex::is_complex(o) {
        // A Complex with an exact zero imaginary part becomes its real part as a
        // Rational; any other Complex makes the receiver Complex.
        let im = ctx.call_str(o, "imaginary", &[])?;
        let exact_zero = im == Value::fixnum(0) || (is_rational(im) && parts(im).0.is_zero());
        if !exact_zero {
            let c = crate::core::complex::new_rect(ctx, recv, Value::fixnum(0))?;
            return Ok(array::from_slice(ctx, &[o, c]));
        }
        let re = ctx.call_str(o, "real", &[])?;
        let r = ctx.call_str(re, "to_r", &[])?;
        return Ok(array::from_slice(ctx, &[r, recv]));
    }
    let cname = object::class_name_of(ctx, o);
    Err(ctx.type_error(&format!("{cname} can't be coerced into Rational")))
}

fn m_zero(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(parts(recv).0.is_zero()))
}

fn m_negative(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(parts(recv).0.is_negative()))
}

fn m_positive(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(parts(recv).0.is_positive()))
}

/// One argument of `Rational()` as an exact Rational or Float.
fn rational_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if string::is_string(v) {
        let b = string::bytes(v).to_vec();
        if b.contains(&0) {
            return Err(ctx.arg_error("string contains null byte"));
        }
        return match crate::core::numeric_parse::rational_value(ctx, &b, true)? {
            Some(r) => Ok(r),
            None => {
                let q = String::from_utf8_lossy(&string::inspect_bytes(&b, string::encoding(v))).into_owned();
                Err(ctx.arg_error(&format!("invalid value for convert(): {q}")))
            }
        };
    }
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Rational"));
    }
    if crate::core::complex::is_complex(v) {
        let im = ctx.call_str(v, "imaginary", &[])?;
        if im == Value::fixnum(0) {
            let re = ctx.call_str(v, "real", &[])?;
            return rational_arg(ctx, re);
        }
        let s = ctx.call(v, sym::TO_S, &[])?;
        let s = string::to_rust_string_lossy(s);
        return Err(ctx.range_error(&format!("can't convert {s} into Rational")));
    }
    if integer::is_integer(v) || is_rational(v) || float::is_float(v) {
        return from_integer(ctx, v);
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_R, true) {
        let r = ctx.call(v, sym::TO_R, &[])?;
        if is_rational(r) {
            return Ok(r);
        }
        let cname = object::class_name_of(ctx, v);
        let rname = object::type_name_for_error(ctx, r);
        return Err(ctx.type_error(&format!("can't convert {cname} into Rational ({cname}#to_r gives {rname})")));
    }
    // As CRuby's rb_check_to_int: an exception in `to_int` means "not convertible".
    if v.is_heap() && ctx.respond_to(v, sym::TO_INT, true) {
        match integer::to_integer_arg(ctx, v) {
            Ok(i) => return from_integer(ctx, i),
            Err(crate::error::Unwind::Raise(_)) => {}
            Err(e) => return Err(e),
        }
    }
    let name = object::type_name_for_error(ctx, v);
    Err(ctx.type_error(&format!("can't convert {name} into Rational")))
}

/// `Kernel#Rational(a, b = 1, exception: true)`.
pub fn kernel_rational(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = crate::core::convert::exception_kw(ctx, args)?;
    let r = (|| -> Result<Value> {
        let a = rational_arg(ctx, args.pos[0])?;
        match args.pos.get(1) {
            Some(&b) => {
                // A Complex denominator with an imaginary part divides as a Complex.
                if crate::core::complex::is_complex(b) && ctx.call_str(b, "imaginary", &[])? != Value::fixnum(0) {
                    return ctx.call(a, sym::DIV, &[b]);
                }
                let b = rational_arg(ctx, b)?;
                if b == Value::fixnum(0) || (is_rational(b) && parts(b).0.is_zero()) {
                    return Err(ctx.zero_division());
                }
                let q = ctx.call(a, sym::DIV, &[b])?;
                if integer::is_integer(q) {
                    return from_integer(ctx, q);
                }
                Ok(q)
            }
            None => Ok(a),
        }
    })();
    match r {
        Ok(v) => Ok(v),
        Err(crate::error::Unwind::Raise(_)) if !raise => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().rational;
    crate::methods!(ctx, c, [
        ("+", m_plus, [1], Safe),
        ("-", m_minus, [1], Safe),
        ("*", m_mul, [1], Safe),
        ("/", m_div, [1], Safe),
        ("quo", m_div, [1], Safe),
        ("**", m_pow, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("==", m_eq, [1], Safe),
        ("numerator", m_numerator, [0], Safe),
        ("denominator", m_denominator, [0], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_f", m_to_f, [0], Safe),
        ("to_i", m_truncate, [0], Safe),
        ("truncate", m_truncate, [0..=1], Safe),
        ("floor", m_floor, [0..=1], Safe),
        ("ceil", m_ceil, [0..=1], Safe),
        ("round", m_round, [0..=1], Safe, Kw),
        ("to_r", m_to_r, [0], Safe),
        ("rationalize", m_rationalize, [0..=1], Safe),
        ("abs", m_abs, [0], Safe),
        ("-@", m_uminus, [0], Safe),
        ("hash", m_hash, [0], Safe),
        ("eql?", m_eql, [1], Safe),
        ("coerce", m_coerce, [1], Safe),
        ("zero?", m_zero, [0], Safe),
        ("negative?", m_negative, [0], Safe),
        ("positive?", m_positive, [0], Safe),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [("Rational", kernel_rational, [1..=2], Safe, ModuleFunction, Kw)]);
    // Instances come from literals and conversions only (CRuby undefines `new`).
    let single = object::singleton_class(ctx, ctx.c().rational).expect("singleton class of a builtin class");
    let _ = crate::core::module_methods::undef_method(ctx, single, sym::NEW);
}
