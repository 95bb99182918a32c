//! Parsing rational and complex numbers from text: `String#to_r`/`#to_c` (lenient) and
//! `Rational("…")`/`Complex("…")` (strict), following CRuby's `read_rat` / `read_comp`.
//!
//! Invariant: parsers work on bytes and produce exact parts (BigInt fractions) or a
//! description of the number's kind; turning them into Ruby values happens in the
//! `*_value` functions, which are the only ones that allocate.

use num_bigint::BigInt;
use num_traits::{One, Pow, Signed, ToPrimitive, Zero};

use crate::core::{bignum, complex, float, rational};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Digits with single underscores between them; returns the end and the digits.
fn digits(s: &[u8], mut i: usize) -> (usize, String) {
    let mut out = String::new();
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() {
            out.push(c as char);
            i += 1;
        } else if c == b'_' && !out.is_empty() && s.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    (i, out)
}

/// A parsed real number: exact value num/den, and whether it was written as a float
/// (with `.` or an exponent) or as a fraction (with `/`).
#[derive(Clone, Debug)]
pub struct Num {
    pub num: BigInt,
    pub den: BigInt,
    pub float: bool,
    pub fraction: bool,
}

/// An unsigned decimal number `digits[.digits][e[+-]digits]`. `allow_bare_point` accepts
/// `"1."` (Rational() does, Complex() does not).
fn read_decimal(s: &[u8], i: usize, allow_bare_point: bool) -> Option<(Num, usize)> {
    let (mut j, ip) = digits(s, i);
    let mut frac = String::new();
    let mut float = false;
    if s.get(j) == Some(&b'.') {
        let (k, f) = digits(s, j + 1);
        if !f.is_empty() {
            frac = f;
            j = k;
            float = true;
        } else if allow_bare_point && !ip.is_empty() {
            j += 1;
        }
    }
    if ip.is_empty() && frac.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(s.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        let mut neg = false;
        if matches!(s.get(k), Some(b'+' | b'-')) {
            neg = s[k] == b'-';
            k += 1;
        }
        let (k2, ed) = digits(s, k);
        if !ed.is_empty() {
            exp = ed.parse::<i64>().unwrap_or(i64::MAX / 4).min(1_000_000);
            if neg {
                exp = -exp;
            }
            j = k2;
            float = true;
        }
    }
    let mant = BigInt::parse_bytes(format!("{ip}{frac}").as_bytes(), 10).unwrap_or_default();
    let scale = exp - frac.len() as i64;
    let ten = BigInt::from(10);
    let (num, den) = if scale >= 0 { (mant * Pow::pow(&ten, scale as u64), BigInt::one()) } else { (mant, Pow::pow(&ten, (-scale) as u64)) };
    Some((Num { num, den, float, fraction: false }, j))
}

/// `[sign] decimal ['/' decimal]`.
fn read_rational(s: &[u8], mut i: usize, allow_bare_point: bool, strict: bool) -> Option<(Num, usize)> {
    let mut neg = false;
    if matches!(s.get(i), Some(b'+' | b'-')) {
        neg = s[i] == b'-';
        i += 1;
    }
    let (mut n, mut j) = read_decimal(s, i, allow_bare_point)?;
    if s.get(j) == Some(&b'/') {
        match read_decimal(s, j + 1, allow_bare_point) {
            Some((d, k)) => {
                n = Num { num: n.num * d.den, den: n.den * d.num, float: false, fraction: true };
                j = k;
            }
            None if strict => return None,
            None => {}
        }
    }
    if neg {
        n.num = -n.num;
    }
    Some((n, j))
}

fn skip_space(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    i
}

/// Parses a Rational; `None` for text a strict parse rejects.
pub fn parse_rational(s: &[u8], strict: bool) -> Option<Num> {
    let i = skip_space(s, 0);
    match read_rational(s, i, true, strict) {
        Some((n, j)) => {
            if strict && skip_space(s, j) != s.len() {
                return None;
            }
            Some(n)
        }
        None if strict => None,
        None => Some(Num { num: BigInt::zero(), den: BigInt::one(), float: false, fraction: false }),
    }
}

/// A complex number in text: rectangular parts or polar (magnitude, angle).
pub enum ComplexText {
    Rect(Num, Num),
    Polar(Num, Num),
}

fn is_unit(c: Option<&u8>) -> bool {
    matches!(c, Some(b'i' | b'I' | b'j' | b'J'))
}

fn int_num(v: i64) -> Num {
    Num { num: BigInt::from(v), den: BigInt::one(), float: false, fraction: false }
}

/// Parses a Complex (CRuby's `read_comp`).
pub fn parse_complex(s: &[u8], strict: bool) -> Option<ComplexText> {
    let zero = || int_num(0);
    let i = skip_space(s, 0);
    let done = |j: usize, c: ComplexText| -> Option<ComplexText> {
        if strict && skip_space(s, j) != s.len() {
            return None;
        }
        Some(c)
    };
    if is_unit(s.get(i)) {
        return done(i + 1, ComplexText::Rect(zero(), int_num(1)));
    }
    if matches!(s.get(i), Some(b'+' | b'-')) && is_unit(s.get(i + 1)) {
        let v = if s[i] == b'-' { -1 } else { 1 };
        return done(i + 2, ComplexText::Rect(zero(), int_num(v)));
    }
    let Some((a, j)) = read_rational(s, i, false, strict) else {
        return if strict { None } else { Some(ComplexText::Rect(zero(), zero())) };
    };
    if s.get(j) == Some(&b'@') {
        return match read_rational(s, j + 1, false, strict) {
            Some((b, k)) => done(k, ComplexText::Polar(a, b)),
            None if strict => None,
            None => Some(ComplexText::Rect(a, zero())),
        };
    }
    if is_unit(s.get(j)) {
        return done(j + 1, ComplexText::Rect(zero(), a));
    }
    if matches!(s.get(j), Some(b'+' | b'-')) {
        let sign = if s[j] == b'-' { -1 } else { 1 };
        if is_unit(s.get(j + 1)) {
            return done(j + 2, ComplexText::Rect(a, int_num(sign)));
        }
        if let Some((b, k)) = read_rational(s, j, false, strict) {
            if is_unit(s.get(k)) {
                return done(k + 1, ComplexText::Rect(a, b));
            }
        }
        return if strict { None } else { Some(ComplexText::Rect(a, zero())) };
    }
    done(j, ComplexText::Rect(a, zero()))
}

/// The Ruby value of a parsed real: Integer, Rational or Float.
pub fn num_value(ctx: &mut Ctx, n: &Num) -> Result<Value> {
    if n.float {
        let f = ratio_to_f64(&n.num, &n.den);
        return Ok(float::new(ctx, f));
    }
    if n.den.is_zero() {
        return Err(ctx.zero_division());
    }
    if n.fraction {
        return rational::reduce(ctx, n.num.clone(), n.den.clone());
    }
    if n.den.is_one() {
        return Ok(bignum::normalize(ctx, n.num.clone()));
    }
    rational::reduce(ctx, n.num.clone(), n.den.clone())
}

/// num/den correctly rounded to a double.
pub fn ratio_to_f64(num: &BigInt, den: &BigInt) -> f64 {
    if den.is_zero() {
        return if num.is_zero() { f64::NAN } else if num.is_negative() { f64::NEG_INFINITY } else { f64::INFINITY };
    }
    if let (Some(a), Some(b)) = (num.to_i64(), den.to_i64()) {
        if a.unsigned_abs() < (1 << 53) && b.unsigned_abs() < (1 << 53) {
            return a as f64 / b as f64;
        }
    }
    // Scale so the quotient has 64+ significant bits, divide, and round once.
    let neg = num.is_negative() != den.is_negative();
    let (n, d) = (num.abs(), den.abs());
    let shift = d.bits() as i64 - n.bits() as i64 + 66;
    let q = if shift >= 0 { (n << shift as usize) / &d } else { n / (d << (-shift) as usize) };
    let q = q | BigInt::one();
    let f = crate::core::float::scale_big_pub(&q, -shift);
    if neg {
        -f
    } else {
        f
    }
}

/// `String#to_r` / `Rational("…")`.
pub fn rational_value(ctx: &mut Ctx, s: &[u8], strict: bool) -> Result<Option<Value>> {
    let Some(n) = parse_rational(s, strict) else { return Ok(None) };
    if n.den.is_zero() {
        return Err(ctx.zero_division());
    }
    rational::reduce(ctx, n.num, n.den).map(Some)
}

/// `String#to_c` / `Complex("…")`.
pub fn complex_value(ctx: &mut Ctx, s: &[u8], strict: bool) -> Result<Option<Value>> {
    match parse_complex(s, strict) {
        None => Ok(None),
        Some(ComplexText::Rect(a, b)) => {
            let re = num_value(ctx, &a)?;
            let im = num_value(ctx, &b)?;
            complex::new_rect(ctx, re, im).map(Some)
        }
        Some(ComplexText::Polar(a, b)) => {
            let r = num_value(ctx, &a)?;
            let t = num_value(ctx, &b)?;
            complex::polar(ctx, r, t).map(Some)
        }
    }
}
