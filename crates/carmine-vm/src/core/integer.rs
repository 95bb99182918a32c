//! Integer: Fixnum fast paths, Bignum fallback, Ruby's floor division and modulo.
//!
//! Invariants:
//! - Results are normalized: a value that fits a Fixnum is a Fixnum (`bignum::normalize`).
//! - Division and modulo round toward negative infinity; `divmod` agrees with both.
//! - Operands of other types go through `numeric::coerce_bin` (Float, Rational, Complex,
//!   user classes with `coerce`).

use num_bigint::{BigInt, Sign};
use num_integer::Integer as _;
use num_traits::{One, Pow, Signed, ToPrimitive, Zero};

use crate::core::{array, bignum, float, numeric, object, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[inline]
pub fn is_integer(v: Value) -> bool {
    v.is_fixnum() || bignum::is_bignum(v)
}

/// Floor division of fixnums; `None` for a zero divisor or overflow.
#[inline]
pub fn fix_div(a: i64, b: i64) -> Option<Value> {
    if b == 0 {
        return None;
    }
    let q = a.checked_div(b)?;
    let q = if (a % b != 0) && ((a < 0) != (b < 0)) { q - 1 } else { q };
    Value::try_fixnum(q)
}

/// Floor modulo of fixnums; `None` for a zero divisor.
#[inline]
pub fn fix_mod(a: i64, b: i64) -> Option<Value> {
    if b == 0 {
        return None;
    }
    let r = a.checked_rem(b).unwrap_or(0);
    let r = if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r };
    Some(Value::fixnum(r))
}

/// Implicit conversion to a C `int` (CRuby's `NUM2INT`: digit counts, widths…).
pub fn to_int_arg(ctx: &mut Ctx, v: Value) -> Result<i32> {
    let n = to_i64_arg(ctx, v)?;
    i32::try_from(n).map_err(|_| {
        let dir = if n < 0 { "small" } else { "big" };
        ctx.range_error(&format!("integer {n} too {dir} to convert to 'int'"))
    })
}

/// Implicit conversion to a machine integer (CRuby's `NUM2LONG`). A Fixnum is converted in
/// line; anything else out of line.
#[inline]
pub fn to_i64_arg(ctx: &mut Ctx, v: Value) -> Result<i64> {
    if let Some(i) = v.as_fixnum() {
        return Ok(i);
    }
    to_i64_arg_other(ctx, v)
}

#[inline(never)]
fn to_i64_arg_other(ctx: &mut Ctx, v: Value) -> Result<i64> {
    if bignum::is_bignum(v) {
        return match bignum::get(v).to_i64() {
            Some(i) => Ok(i),
            None => Err(ctx.range_error("bignum too big to convert into 'long'")),
        };
    }
    if float::is_float(v) {
        let f = float::get(v);
        if f.is_nan() || f.is_infinite() {
            return Err(ctx.float_domain_error(&float::to_s(f)));
        }
        if f >= 9.223372036854776e18 || f < -9.223372036854776e18 {
            return Err(ctx.range_error(&format!("float {} out of range of integer", float::to_s(f))));
        }
        return Ok(f as i64);
    }
    if v.is_nil() {
        return Err(ctx.type_error("no implicit conversion from nil to integer"));
    }
    let i = to_integer_arg(ctx, v)?;
    to_i64_arg(ctx, i)
}

/// Implicit conversion to Integer via `to_int`.
pub fn to_integer_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_integer(v) {
        return Ok(v);
    }
    if float::is_float(v) {
        let f = float::get(v);
        return float::to_integer(ctx, f.trunc());
    }
    // `to_int` is found like `rb_check_funcall` does (a user `respond_to?`, method_missing).
    if v.is_heap() {
        if let Some(r) = crate::core::convert::check_funcall(ctx, v, sym::TO_INT, &[])? {
            if is_integer(r) {
                return Ok(r);
            }
            let cname = crate::core::object::class_name_of(ctx, v);
            let rname = crate::core::object::class_name_of(ctx, r);
            return Err(ctx.type_error(&format!("can't convert {cname} into Integer ({cname}#to_int gives {rname})")));
        }
    }
    Err(ctx.conversion_error(v, "Integer"))
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Parses an integer the way CRuby's `rb_int_parse_cstr` does.
///
/// `base` is 2..=36, or 0 / a negative number for "detect from the prefix" (`0x`, `0b`,
/// `0o`, `0d`, a leading `0` meaning octal; otherwise `-base`, or 10 for 0 and -1).
/// Lenient parsing (`strict == false`, `String#to_i`) stops at the first invalid character
/// and answers 0 when no digit is found; strict parsing (`Integer()`) allows only
/// surrounding whitespace and answers `None` for anything else.
pub fn parse_int(s: &[u8], base: i32, strict: bool) -> Option<BigInt> {
    let bad = if strict { None } else { Some(BigInt::zero()) };
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let lower_at = |k: usize| s.get(k).map(|c| c.to_ascii_lowercase());
    let mut base = base;
    if base <= 0 {
        if s.get(i) == Some(&b'0') && i + 1 < s.len() {
            match lower_at(i + 1) {
                Some(b'x') => {
                    base = 16;
                    i += 2;
                }
                Some(b'b') => {
                    base = 2;
                    i += 2;
                }
                Some(b'o') => {
                    base = 8;
                    i += 2;
                }
                Some(b'd') => {
                    base = 10;
                    i += 2;
                }
                _ => base = 8,
            }
        } else {
            base = if base < -1 { -base } else { 10 };
        }
    } else if s.get(i) == Some(&b'0') {
        let prefix = match base {
            16 => Some(b'x'),
            2 => Some(b'b'),
            8 => Some(b'o'),
            10 => Some(b'd'),
            _ => None,
        };
        if prefix.is_some() && lower_at(i + 1) == prefix {
            i += 2;
        }
    }
    let digit = |c: u8| (c as char).to_digit(base as u32);
    if i >= s.len() || digit(s[i]).is_none() {
        return bad;
    }
    let mut digits = Vec::with_capacity(s.len() - i);
    while i < s.len() {
        let c = s[i];
        if c == b'_' {
            if i + 1 < s.len() && digit(s[i + 1]).is_some() {
                i += 1;
                continue;
            }
            break;
        }
        if digit(c).is_none() {
            break;
        }
        digits.push(c);
        i += 1;
    }
    if strict {
        while i < s.len() && is_space(s[i]) {
            i += 1;
        }
        if i < s.len() {
            return None;
        }
    }
    let n = BigInt::from_biguint(num_bigint::Sign::Plus, crate::core::bigconv::parse_digits(&digits, base as u32)?);
    Some(if neg { -n } else { n })
}

pub fn negate(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if v.is_fixnum() || bignum::is_bignum(v) {
        return Ok(negate_integer(ctx, v));
    }
    ctx.call(v, sym::UMINUS, &[])
}

/// `-v` for an Integer `v` (`Integer#-@`).
pub fn negate_integer(ctx: &mut Ctx, v: Value) -> Value {
    match v.as_fixnum() {
        Some(i) => Value::try_fixnum(-i).unwrap_or_else(|| bignum::normalize(ctx, -BigInt::from(i))),
        None => {
            let n = -bignum::get(v);
            bignum::normalize(ctx, n)
        }
    }
}

/// `v.abs` for an Integer `v` (`Integer#abs`).
pub fn abs_integer(ctx: &mut Ctx, v: Value) -> Value {
    match v.as_fixnum() {
        Some(x) => Value::try_fixnum(x.abs()).unwrap_or_else(|| bignum::normalize(ctx, BigInt::from(x).abs())),
        None => {
            let n = bignum::get(v).abs();
            bignum::normalize(ctx, n)
        }
    }
}

/// Integer to string in `base`.
pub fn to_s_base(v: Value, base: u32) -> String {
    match v.as_fixnum() {
        Some(i) if base == 10 => i.to_string(),
        Some(i) => BigInt::from(i).to_str_radix(base),
        None => crate::core::bigconv::to_str_radix(bignum::get(v), base),
    }
}

fn coerce_fail_is_compare(op: crate::symbol::SymId) -> bool {
    matches!(op, sym::LT | sym::LE | sym::GT | sym::GE)
}

/// A binary operation where `b` is not an Integer.
fn other_operand(ctx: &mut Ctx, a: Value, b: Value, op: crate::symbol::SymId) -> Result<Value> {
    if float::is_float(b) {
        let x = to_f64(a);
        let y = float::get(b);
        let r = match op {
            sym::PLUS => x + y,
            sym::MINUS => x - y,
            sym::MUL => x * y,
            sym::DIV => x / y,
            sym::MOD => {
                // CRuby's flodivmod: a zero Float divisor raises, unlike `/`.
                if y == 0.0 {
                    return Err(ctx.zero_division());
                }
                float::ruby_mod(x, y)
            }
            sym::POW => return float::pow(ctx, x, y),
            sym::LT => return Ok(Value::bool(float::cmp_int_float(a, y).is_some_and(|o| o.is_lt()))),
            sym::LE => return Ok(Value::bool(float::cmp_int_float(a, y).is_some_and(|o| o.is_le()))),
            sym::GT => return Ok(Value::bool(float::cmp_int_float(a, y).is_some_and(|o| o.is_gt()))),
            sym::GE => return Ok(Value::bool(float::cmp_int_float(a, y).is_some_and(|o| o.is_ge()))),
            _ => return numeric::coerce_bin(ctx, a, b, op, coerce_fail_is_compare(op)),
        };
        return Ok(float::new(ctx, r));
    }
    numeric::coerce_bin(ctx, a, b, op, coerce_fail_is_compare(op))
}

pub fn to_f64(v: Value) -> f64 {
    match v.as_fixnum() {
        Some(i) => i as f64,
        None => bignum::get(v).to_f64().unwrap_or(f64::NAN),
    }
}

fn big_binop(ctx: &mut Ctx, a: Value, b: Value, op: crate::symbol::SymId) -> Result<Value> {
    if op == sym::MUL && bignum::is_bignum(a) && bignum::is_bignum(b) {
        return Ok(bignum::mul(ctx, bignum::get(a), bignum::get(b)));
    }
    let (x, y) = (bignum::to_big(a), bignum::to_big(b));
    let r = match op {
        sym::PLUS => x + y,
        sym::MINUS => x - y,
        sym::MUL => x * y,
        sym::DIV | sym::MOD => {
            if y.is_zero() {
                return Err(ctx.zero_division());
            }
            let (q, r) = x.div_mod_floor(&y);
            if op == sym::DIV {
                q
            } else {
                r
            }
        }
        sym::AND => x & y,
        sym::OR => x | y,
        sym::XOR => x ^ y,
        _ => return Ok(Value::NIL),
    };
    Ok(bignum::normalize(ctx, r))
}

pub fn add(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok(match x.checked_add(y).and_then(Value::try_fixnum) {
            Some(v) => v,
            None => bignum::from_i128(ctx, x as i128 + y as i128),
        });
    }
    if !is_integer(b) {
        return other_operand(ctx, a, b, sym::PLUS);
    }
    big_binop(ctx, a, b, sym::PLUS)
}

pub fn sub(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok(match x.checked_sub(y).and_then(Value::try_fixnum) {
            Some(v) => v,
            None => bignum::from_i128(ctx, x as i128 - y as i128),
        });
    }
    if !is_integer(b) {
        return other_operand(ctx, a, b, sym::MINUS);
    }
    big_binop(ctx, a, b, sym::MINUS)
}

pub fn mul(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok(match x.checked_mul(y).and_then(Value::try_fixnum) {
            Some(v) => v,
            None => bignum::from_i128(ctx, x as i128 * y as i128),
        });
    }
    if !is_integer(b) {
        return other_operand(ctx, a, b, sym::MUL);
    }
    big_binop(ctx, a, b, sym::MUL)
}

pub fn div(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        if y == 0 {
            return Err(ctx.zero_division());
        }
        if let Some(v) = fix_div(x, y) {
            return Ok(v);
        }
    }
    if !is_integer(b) {
        return other_operand(ctx, a, b, sym::DIV);
    }
    big_binop(ctx, a, b, sym::DIV)
}

pub fn modulo(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        if y == 0 {
            return Err(ctx.zero_division());
        }
        if let Some(v) = fix_mod(x, y) {
            return Ok(v);
        }
    }
    if !is_integer(b) {
        return other_operand(ctx, a, b, sym::MOD);
    }
    big_binop(ctx, a, b, sym::MOD)
}

/// Integer ** Integer (negative exponents give a Rational).
pub fn pow(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if !is_integer(b) {
        if float::is_float(b) {
            return float::pow(ctx, to_f64(a), float::get(b));
        }
        return numeric::coerce_bin(ctx, a, b, sym::POW, false);
    }
    if b.as_fixnum().is_some_and(|e| e < 0) || (bignum::is_bignum(b) && bignum::get(b).is_negative()) {
        let r = crate::core::rational::from_integer(ctx, a)?;
        return ctx.call(r, sym::POW, &[b]);
    }
    let base = bignum::to_big(a);
    let Some(e) = b.as_fixnum() else {
        // Huge exponent: only trivial bases are representable.
        if base.is_zero() || base.is_one() {
            return Ok(a);
        }
        if base == BigInt::from(-1) {
            return Ok(if bignum::get(b).is_even() { Value::fixnum(1) } else { Value::fixnum(-1) });
        }
        return Err(ctx.arg_error("exponent is too large"));
    };
    if let (Some(x), true) = (a.as_fixnum(), e < 64) {
        if let Some(r) = x.checked_pow(e as u32).and_then(Value::try_fixnum) {
            return Ok(r);
        }
    }
    let bits = base.bits().max(1) as u128 * e as u128;
    if bits > 32 * 1024 * 1024 * 8 {
        if base.is_zero() || base.is_one() {
            return Ok(a);
        }
        if base == BigInt::from(-1) {
            return Ok(if e % 2 == 0 { Value::fixnum(1) } else { Value::fixnum(-1) });
        }
        return Err(ctx.arg_error("exponent is too large"));
    }
    let r = crate::core::bigmul::pow(&base, e as u64);
    Ok(bignum::normalize(ctx, r))
}

/// `(a ** b) % m` for integers.
fn pow_mod(ctx: &mut Ctx, a: Value, b: Value, m: Value) -> Result<Value> {
    if !is_integer(b) {
        return Err(ctx.type_error("Integer#pow() 2nd argument not allowed unless a 1st argument is integer"));
    }
    if bignum::to_big(b).is_negative() {
        return Err(ctx.range_error("Integer#pow() 1st argument cannot be negative when 2nd argument specified"));
    }
    if !is_integer(m) {
        return Err(ctx.type_error("Integer#pow() 2nd argument not allowed unless all arguments are integers"));
    }
    let (x, e, md) = (bignum::to_big(a), bignum::to_big(b), bignum::to_big(m));
    if md.is_zero() {
        return Err(ctx.zero_division());
    }
    let r = x.modpow(&e, &md.abs());
    let r = if !r.is_zero() && md.is_negative() { r + md } else { r };
    Ok(bignum::normalize(ctx, r))
}

pub fn cmp_values(ctx: &mut Ctx, a: Value, b: Value) -> Result<Option<std::cmp::Ordering>> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok(Some(x.cmp(&y)));
    }
    if is_integer(b) {
        return Ok(Some(bignum::to_big(a).cmp(&bignum::to_big(b))));
    }
    if float::is_float(b) {
        return Ok(float::cmp_int_float(a, float::get(b)));
    }
    let r = numeric::coerce_cmp(ctx, a, b)?;
    Ok(r)
}

// ---- methods ----

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    add(ctx, recv, args.pos[0])
}
fn m_minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    sub(ctx, recv, args.pos[0])
}
fn m_mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    mul(ctx, recv, args.pos[0])
}
fn m_div(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    div(ctx, recv, args.pos[0])
}
fn m_mod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modulo(ctx, recv, args.pos[0])
}

fn m_pow(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.pos.get(1) {
        Some(&m) => pow_mod(ctx, recv, args.pos[0], m),
        None => pow(ctx, recv, args.pos[0]),
    }
}

fn m_divmod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if is_integer(b) {
        let q = div(ctx, recv, b)?;
        let r = modulo(ctx, recv, b)?;
        return Ok(array::from_slice(ctx, &[q, r]));
    }
    if float::is_float(b) {
        let f = float::new(ctx, to_f64(recv));
        return ctx.call(f, ctx.intern("divmod"), &[b]);
    }
    numeric::coerce_bin(ctx, recv, b, ctx.intern("divmod"), false)
}

fn m_remainder(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if let (Some(x), Some(y)) = (recv.as_fixnum(), b.as_fixnum()) {
        if y == 0 {
            return Err(ctx.zero_division());
        }
        return Ok(Value::fixnum(x.checked_rem(y).unwrap_or(0)));
    }
    if is_integer(b) {
        let (x, y) = (bignum::to_big(recv), bignum::to_big(b));
        if y.is_zero() {
            return Err(ctx.zero_division());
        }
        return Ok(bignum::normalize(ctx, x % y));
    }
    if float::is_float(b) {
        // CRuby's num_remainder: `x % y`, moved towards zero when the signs differ; a
        // Bignum is first coerced to Float.
        let y = float::get(b);
        if y == 0.0 {
            return Err(ctx.zero_division());
        }
        let x = to_f64(recv);
        let z = float::ruby_mod(x, y);
        if z != 0.0 && ((x < 0.0 && y > 0.0) || (x > 0.0 && y < 0.0)) {
            if y.is_infinite() {
                return Ok(if recv.is_fixnum() { recv } else { float::new(ctx, x) });
            }
            return Ok(float::new(ctx, z - y));
        }
        return Ok(float::new(ctx, z));
    }
    numeric::coerce_bin(ctx, recv, b, ctx.intern("remainder"), false)
}

/// `fdiv`: exact quotient rounded once when both operands are Integers.
fn m_fdiv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if is_integer(b) {
        if let (Some(x), Some(y)) = (recv.as_fixnum(), b.as_fixnum()) {
            if x.unsigned_abs() < (1 << 53) && y.unsigned_abs() < (1 << 53) {
                return Ok(float::new(ctx, x as f64 / y as f64));
            }
        }
        let f = crate::core::numeric_parse::ratio_to_f64(&bignum::to_big(recv), &bignum::to_big(b));
        return Ok(float::new(ctx, f));
    }
    if float::is_float(b) {
        return Ok(float::new(ctx, to_f64(recv) / float::get(b)));
    }
    if crate::core::rational::is_rational(b) {
        let (n, d) = crate::core::rational::parts(b);
        let f = crate::core::numeric_parse::ratio_to_f64(&(bignum::to_big(recv) * d), &n);
        return Ok(float::new(ctx, f));
    }
    let fd = ctx.intern("fdiv");
    numeric::coerce_bin(ctx, recv, b, fd, false)
}

/// `div`: floored quotient as an Integer for any real divisor.
fn m_idiv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if is_integer(b) {
        return div(ctx, recv, b);
    }
    if float::is_float(b) {
        let y = float::get(b);
        if y == 0.0 {
            return Err(ctx.zero_division());
        }
        return float::to_integer(ctx, (to_f64(recv) / y).floor());
    }
    // CRuby's fix_divide: other operands are coerced and asked for `div`.
    let div_id = ctx.intern("div");
    numeric::coerce_bin(ctx, recv, b, div_id, false)
}

/// `ceildiv` (Ruby 3.2): `-div(-other)`.
fn m_ceildiv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let neg = ctx.call(args.pos[0], sym::UMINUS, &[])?;
    let q = m_idiv(ctx, recv, &Args::new(&[neg]))?;
    ctx.call(q, sym::UMINUS, &[])
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if is_integer(b) {
        return Ok(Value::bool(recv == b || (bignum::is_bignum(recv) && bignum::is_bignum(b) && bignum::get(recv) == bignum::get(b))));
    }
    if float::is_float(b) {
        return Ok(Value::bool(float::cmp_int_float(recv, float::get(b)) == Some(std::cmp::Ordering::Equal)));
    }
    let r = ctx.call(b, sym::EQ, &[recv])?;
    Ok(Value::bool(r.truthy()))
}

pub(crate) fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if !is_integer(b) && !float::is_float(b) && !numeric::is_numeric(ctx, b) {
        if !ctx.respond_to(b, sym::COERCE, true) {
            return Ok(Value::NIL);
        }
    }
    match cmp_values(ctx, recv, b)? {
        Some(o) => Ok(Value::fixnum(o as i64)),
        None => Ok(Value::NIL),
    }
}

fn compare_op(ctx: &mut Ctx, recv: Value, b: Value, op: crate::symbol::SymId) -> Result<Value> {
    if is_integer(b) || float::is_float(b) {
        let o = cmp_values(ctx, recv, b)?;
        let r = match o {
            None => false,
            Some(o) => match op {
                sym::LT => o.is_lt(),
                sym::LE => o.is_le(),
                sym::GT => o.is_gt(),
                _ => o.is_ge(),
            },
        };
        return Ok(Value::bool(r));
    }
    numeric::coerce_bin(ctx, recv, b, op, true)
}

fn m_lt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    compare_op(ctx, recv, args.pos[0], sym::LT)
}
fn m_le(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    compare_op(ctx, recv, args.pos[0], sym::LE)
}
fn m_gt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    compare_op(ctx, recv, args.pos[0], sym::GT)
}
fn m_ge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    compare_op(ctx, recv, args.pos[0], sym::GE)
}

fn m_and(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if let (Some(x), Some(y)) = (recv.as_fixnum(), b.as_fixnum()) {
        return Ok(Value::fixnum(x & y));
    }
    if !is_integer(b) {
        if float::is_float(b) {
            return Err(numeric::coerce_failed(ctx, recv, b));
        }
        return numeric::coerce_bin(ctx, recv, b, sym::AND, false);
    }
    big_binop(ctx, recv, b, sym::AND)
}

fn m_or(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if let (Some(x), Some(y)) = (recv.as_fixnum(), b.as_fixnum()) {
        return Ok(Value::fixnum(x | y));
    }
    if !is_integer(b) {
        if float::is_float(b) {
            return Err(numeric::coerce_failed(ctx, recv, b));
        }
        return numeric::coerce_bin(ctx, recv, b, sym::OR, false);
    }
    big_binop(ctx, recv, b, sym::OR)
}

pub(crate) fn m_xor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if let (Some(x), Some(y)) = (recv.as_fixnum(), b.as_fixnum()) {
        return Ok(Value::fixnum(x ^ y));
    }
    if !is_integer(b) {
        if float::is_float(b) {
            return Err(numeric::coerce_failed(ctx, recv, b));
        }
        return numeric::coerce_bin(ctx, recv, b, sym::XOR, false);
    }
    big_binop(ctx, recv, b, sym::XOR)
}

fn m_not(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if let Some(x) = recv.as_fixnum() {
        return Ok(Value::fixnum(!x));
    }
    let n = !bignum::to_big(recv);
    Ok(bignum::normalize(ctx, n))
}

pub fn shift_left(ctx: &mut Ctx, a: Value, n: i64) -> Result<Value> {
    if n < 0 {
        let x = bignum::to_big(a);
        let s = n.unsigned_abs();
        let r = if s > (x.bits() + 1) { if x.is_negative() { BigInt::from(-1) } else { BigInt::zero() } } else { x >> (s as usize) };
        return Ok(bignum::normalize(ctx, r));
    }
    if let Some(x) = a.as_fixnum() {
        if n < 62 && x.unsigned_abs().leading_zeros() as i64 > n + 1 {
            return Ok(Value::fixnum(x << n));
        }
        if x == 0 {
            return Ok(a);
        }
    }
    // Results of 2**32 bits (512 MiB) and more are refused, as other Rubies than CRuby do
    // (ruby/spec allows it); CRuby would try to allocate them.
    if n >= (1 << 32) {
        return Err(ctx.range_error("shift width too big"));
    }
    let r = bignum::to_big(a) << (n as usize);
    Ok(bignum::normalize(ctx, r))
}

fn m_lshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = to_integer_arg(ctx, args.pos[0])?;
    match b.as_fixnum() {
        Some(n) => shift_left(ctx, recv, n),
        None => {
            if bignum::get(b).is_negative() {
                Ok(Value::fixnum(if bignum::to_big(recv).is_negative() { -1 } else { 0 }))
            } else if bignum::to_big(recv).is_zero() {
                Ok(Value::fixnum(0))
            } else {
                Err(ctx.range_error("shift width too big"))
            }
        }
    }
}

pub(crate) fn m_rshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = to_integer_arg(ctx, args.pos[0])?;
    match b.as_fixnum() {
        Some(n) => shift_left(ctx, recv, n.checked_neg().unwrap_or(i64::MAX)),
        None => {
            if bignum::get(b).is_negative() {
                if bignum::to_big(recv).is_zero() {
                    return Ok(Value::fixnum(0));
                }
                Err(ctx.range_error("shift width too big"))
            } else {
                Ok(Value::fixnum(if bignum::to_big(recv).is_negative() { -1 } else { 0 }))
            }
        }
    }
}

fn mask_of(ctx: &mut Ctx, len: Value) -> Result<BigInt> {
    let n = to_i64_arg(ctx, len)?;
    if n < 0 {
        return Ok(BigInt::from(-1));
    }
    if n > (1 << 34) {
        return Err(ctx.range_error("shift width too big"));
    }
    Ok((BigInt::one() << n as usize) - 1)
}

fn shift_right_value(ctx: &mut Ctx, x: Value, by: Value) -> Result<Value> {
    let n = to_i64_arg(ctx, by)?;
    shift_left(ctx, x, n.checked_neg().unwrap_or(i64::MAX))
}

/// `int[i]`, `int[i, len]` and `int[range]` (bit extraction, CRuby 2.7+ semantics).
fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&len) = args.pos.get(1) {
        let shifted = shift_right_value(ctx, recv, args.pos[0])?;
        let mask = mask_of(ctx, len)?;
        let r = bignum::to_big(shifted) & mask;
        return Ok(bignum::normalize(ctx, r));
    }
    let a = args.pos[0];
    if crate::core::range::is_range(a) {
        let (b, e, excl) = (crate::core::range::begin(a), crate::core::range::end(a), crate::core::range::excl(a));
        if b.is_nil() {
            if e.is_nil() {
                return Ok(recv);
            }
            let e = to_integer_arg(ctx, e)?;
            if bignum::to_big(e).is_negative() {
                return Ok(Value::fixnum(0));
            }
            let len = if excl { e } else { add(ctx, e, Value::fixnum(1))? };
            let mask = mask_of(ctx, len)?;
            if (bignum::to_big(recv) & mask).is_zero() {
                return Ok(Value::fixnum(0));
            }
            return Err(ctx.arg_error("The beginless range for Integer#[] results in infinity"));
        }
        let b = to_integer_arg(ctx, b)?;
        let shifted = shift_right_value(ctx, recv, b)?;
        if e.is_nil() {
            return Ok(shifted);
        }
        let e = to_integer_arg(ctx, e)?;
        match bignum::to_big(b).cmp(&bignum::to_big(e)) {
            std::cmp::Ordering::Less => {
                let d = sub(ctx, e, b)?;
                let len = if excl { d } else { add(ctx, d, Value::fixnum(1))? };
                let mask = mask_of(ctx, len)?;
                let r = bignum::to_big(shifted) & mask;
                return Ok(bignum::normalize(ctx, r));
            }
            std::cmp::Ordering::Equal => {
                if excl {
                    return Ok(Value::fixnum(0));
                }
                return bit_at(ctx, recv, b);
            }
            std::cmp::Ordering::Greater => return Ok(shifted),
        }
    }
    let i = to_integer_arg(ctx, a)?;
    bit_at(ctx, recv, i)
}

fn bit_at(ctx: &mut Ctx, recv: Value, i: Value) -> Result<Value> {
    let x = bignum::to_big(recv);
    let Some(i) = i.as_fixnum() else {
        // A huge index: the sign bit extends forever.
        return Ok(Value::fixnum(if x.is_negative() && !bignum::get(i).is_negative() { 1 } else { 0 }));
    };
    let _ = ctx;
    if i < 0 {
        return Ok(Value::fixnum(0));
    }
    if i > (1 << 40) {
        return Ok(Value::fixnum(x.is_negative() as i64));
    }
    let bit = (x >> (i as usize)) & BigInt::one();
    Ok(Value::fixnum(if bit.is_zero() { 0 } else { 1 }))
}

pub fn m_uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    negate(ctx, recv)
}

pub fn m_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(abs_integer(ctx, recv))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let base = match args.pos.first() {
        Some(&b) => to_i64_arg(ctx, b)?,
        None => 10,
    };
    if !(2..=36).contains(&base) {
        return Err(ctx.arg_error(&format!("invalid radix {base}")));
    }
    let s = to_s_base(recv, base as u32);
    if bignum::is_bignum(recv) {
        // The conversion's own buffers, freed already, count like CRuby's temporaries.
        ctx.note_malloc(crate::core::bigconv::scratch_bytes(bignum::get(recv).iter_u64_digits().len()));
    }
    Ok(string::new_us_ascii(ctx, &s))
}

fn m_to_r(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::rational::from_integer(ctx, recv)
}

fn m_rationalize(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::rational::from_integer(ctx, recv)
}

fn m_denominator(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(1))
}

fn m_to_i(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(float::new(ctx, to_f64(recv)))
}

/// `chr(encoding = nil)` (CRuby's `int_chr`): without an encoding, bytes up to 0xff
/// (US-ASCII below 0x80, binary above) or a codepoint in `Encoding.default_internal`.
fn m_chr(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    use crate::core::encoding as enc_mod;
    let code = match recv.as_fixnum() {
        Some(i) if (0..=u32::MAX as i64).contains(&i) => i as u32,
        Some(i) => return Err(ctx.range_error(&format!("{i} out of char range"))),
        None => return Err(ctx.range_error("bignum out of char range")),
    };
    let e = match args.pos.first() {
        Some(&enc) => enc_mod::encoding_arg(ctx, enc)?,
        None if code > 0xff => match enc_mod::default_internal(ctx) {
            Some(e) => e,
            None => return Err(ctx.range_error(&format!("{code} out of char range"))),
        },
        None if code < 0x80 => return Ok(string::new_us_ascii(ctx, &((code as u8) as char).to_string())),
        None => return Ok(string::new_binary(ctx, &[code as u8])),
    };
    // CRuby's `rb_enc_uint_chr`.
    let invalid = |ctx: &mut Ctx| ctx.range_error(&format!("invalid codepoint 0x{code:X} in {}", enc_mod::name(e)));
    if enc_mod::is_unicode(e) {
        if code > 0x10FFFF {
            return Err(ctx.range_error(&format!("{code} out of char range")));
        }
        return match enc_mod::encode_codepoint(e, code) {
            Some(b) => Ok(string::new_with_enc(ctx, b, e)),
            None => Err(invalid(ctx)),
        };
    }
    if let Some(b) = enc_mod::encode_codepoint(e, code) {
        return Ok(string::new_with_enc(ctx, b, e));
    }
    if code > 0xff {
        return Err(ctx.range_error(&format!("{code} out of char range")));
    }
    if e == enc_mod::US_ASCII && code > 0x7f {
        return Err(invalid(ctx));
    }
    Ok(string::new_with_enc(ctx, vec![code as u8], e))
}

fn m_ord(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_times(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_sized(ctx, recv, "times", &[], crate::core::enumerator::SizeFn::IntTimes);
    };
    let n = match recv.as_fixnum() {
        Some(n) => n,
        None => {
            if bignum::get(recv).is_negative() {
                return Ok(recv);
            }
            i64::MAX
        }
    };
    let mut i = 0;
    while i < n {
        ctx.yield1(&b, Value::fixnum(i))?;
        i += 1;
    }
    Ok(recv)
}

/// The element count of `upto`/`downto` when the limit is an Integer or Float.
/// Sizes of `upto`/`downto` enumerators (`ruby_num_interval_step_size` with step ±1).
fn upto_size(ctx: &mut Ctx, from: Value, args: Value) -> Result<Value> {
    numeric::interval_step_size(ctx, from, array::get(args, 0), Value::fixnum(1), false)
}

fn downto_size(ctx: &mut Ctx, from: Value, args: Value) -> Result<Value> {
    numeric::interval_step_size(ctx, from, array::get(args, 0), Value::fixnum(-1), false)
}

fn m_upto(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_sized(ctx, recv, "upto", args.pos, crate::core::enumerator::SizeFn::Native(upto_size));
    };
    let lim = args.pos[0];
    if let (Some(s), Some(e)) = (recv.as_fixnum(), lim.as_fixnum()) {
        let mut i = s;
        while i <= e {
            ctx.yield1(&b, Value::fixnum(i))?;
            i += 1;
        }
        return Ok(recv);
    }
    let mut i = recv;
    loop {
        let gt = ctx.call(i, sym::GT, &[lim])?;
        if gt.truthy() {
            break;
        }
        ctx.yield1(&b, i)?;
        i = add(ctx, i, Value::fixnum(1))?;
    }
    Ok(recv)
}

fn m_downto(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_sized(ctx, recv, "downto", args.pos, crate::core::enumerator::SizeFn::Native(downto_size));
    };
    let lim = args.pos[0];
    if let (Some(s), Some(e)) = (recv.as_fixnum(), lim.as_fixnum()) {
        let mut i = s;
        while i >= e {
            ctx.yield1(&b, Value::fixnum(i))?;
            i -= 1;
        }
        return Ok(recv);
    }
    let mut i = recv;
    loop {
        let lt = ctx.call(i, sym::LT, &[lim])?;
        if lt.truthy() {
            break;
        }
        ctx.yield1(&b, i)?;
        i = sub(ctx, i, Value::fixnum(1))?;
    }
    Ok(recv)
}

fn m_succ(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    add(ctx, recv, Value::fixnum(1))
}

fn m_pred(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    sub(ctx, recv, Value::fixnum(1))
}

/// Whether Integer `v` is even.
#[inline]
pub fn is_even(v: Value) -> bool {
    match v.as_fixnum() {
        Some(x) => x % 2 == 0,
        None => bignum::get(v).is_even(),
    }
}

pub(crate) fn m_even(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(is_even(recv)))
}

pub(crate) fn m_odd(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(!is_even(recv)))
}

pub(crate) fn m_zero(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(recv == Value::fixnum(0)))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = match recv.as_fixnum() {
        Some(_) => crate::core::hash::mix(ctx.vm().hash_seed, recv.raw()),
        None => crate::core::hash::hash_bytes(ctx.vm().hash_seed, &bignum::get(recv).to_signed_bytes_le()),
    };
    Ok(Value::fixnum((h >> 2) as i64))
}

fn m_eql(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    Ok(Value::bool(recv == b || (bignum::is_bignum(recv) && bignum::is_bignum(b) && bignum::get(recv) == bignum::get(b))))
}

fn m_gcd(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if !is_integer(b) {
        return Err(ctx.type_error("not an integer"));
    }
    let r = bignum::to_big(recv).gcd(&bignum::to_big(b));
    Ok(bignum::normalize(ctx, r))
}

fn m_lcm(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if !is_integer(b) {
        return Err(ctx.type_error("not an integer"));
    }
    let r = bignum::to_big(recv).lcm(&bignum::to_big(b));
    Ok(bignum::normalize(ctx, r))
}

fn m_gcdlcm(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let g = m_gcd(ctx, recv, args)?;
    let l = m_lcm(ctx, recv, args)?;
    Ok(array::from_slice(ctx, &[g, l]))
}

fn m_digits(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let base = match args.pos.first() {
        Some(&b) => to_integer_arg(ctx, b)?,
        None => Value::fixnum(10),
    };
    let bb = bignum::to_big(base);
    if bb.is_negative() {
        return Err(ctx.arg_error("negative radix"));
    }
    if bb < BigInt::from(2) {
        let s = to_s_base(base, 10);
        return Err(ctx.arg_error(&format!("invalid radix {s}")));
    }
    let mut x = bignum::to_big(recv);
    if x.is_negative() {
        return Err(ctx.raise(ctx.c().math_domain_error, "out of domain"));
    }
    let out = array::new(ctx);
    if x.is_zero() {
        array::push(ctx, out, Value::fixnum(0));
        return Ok(out);
    }
    while !x.is_zero() {
        let (q, r) = x.div_mod_floor(&bb);
        let d = bignum::normalize(ctx, r);
        array::push(ctx, out, d);
        x = q;
    }
    Ok(out)
}

fn m_bit_length(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = bignum::to_big(recv);
    let n = if x.is_negative() { (-x - 1u32).bits() } else { x.bits() };
    Ok(Value::fixnum(n as i64))
}

fn m_size(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if recv.is_fixnum() {
        return Ok(Value::fixnum(8));
    }
    let bytes = bignum::get(recv).bits().div_ceil(8);
    Ok(Value::fixnum(bytes as i64))
}

fn round_to(ctx: &mut Ctx, recv: Value, args: &Args, mode: u8) -> Result<Value> {
    let Some(&nd) = args.pos.first() else { return Ok(recv) };
    let nd = to_int_arg(ctx, nd)? as i64;
    let half = if mode == b'r' { numeric::rounding_mode(ctx, args)? } else { b'u' };
    if nd >= 0 {
        return Ok(recv);
    }
    round_int(ctx, recv, nd, mode, half)
}

/// Rounds Integer `recv` to `nd < 0` digits: `kind` is b'r' (with `half` b'u'/b'd'/b'e'),
/// b'f', b'c' or b't'.
pub fn round_int(ctx: &mut Ctx, recv: Value, nd: i64, mode: u8, half: u8) -> Result<Value> {
    if nd >= 0 {
        return Ok(recv);
    }
    // CRuby's int_round_zero_p: when 10**-nd / 2 exceeds any value of this size the
    // result is 0, without computing the (possibly enormous) power.
    let bytes = if recv.is_fixnum() { 8 } else { bignum::to_big(recv).bits().div_ceil(64) * 8 };
    if -0.415241 * nd as f64 - 0.125 > bytes as f64 {
        // |recv| < 10**-nd / 2: rounding gives 0, except a ceiling of a positive number or a
        // floor of a negative one, which is ±10**-nd (CRuby 3.4).
        let sign = if recv.is_fixnum() { recv.fixnum_unchecked().signum() } else if bignum::to_big(recv).is_negative() { -1 } else { 1 };
        let away = match mode {
            b'c' => sign > 0,
            b'f' => sign < 0,
            _ => false,
        };
        if !away {
            return Ok(Value::fixnum(0));
        }
        if (-nd) as u128 * 4 > 32 * 1024 * 1024 * 8 {
            return Err(ctx.arg_error("exponent is too large"));
        }
        let p: BigInt = Pow::pow(BigInt::from(10), (-nd) as u64);
        return Ok(bignum::normalize(ctx, if sign < 0 { -p } else { p }));
    }
    let p: BigInt = Pow::pow(BigInt::from(10), (-nd) as u64);
    let x = bignum::to_big(recv);
    let (q, r) = x.div_mod_floor(&p);
    let r2: BigInt = &r * 2;
    let up = match mode {
        b'f' => false,
        b'c' => !r.is_zero(),
        b't' => x.is_negative() && !r.is_zero(),
        _ => match r2.cmp(&p) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => match half {
                b'e' => q.is_odd(),
                b'd' => x.is_negative(),
                _ => !x.is_negative(),
            },
        },
    };
    let res = (q + if up { BigInt::one() } else { BigInt::zero() }) * p;
    Ok(bignum::normalize(ctx, res))
}

fn m_round(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args, b'r')
}
fn m_floor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args, b'f')
}
fn m_ceil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args, b'c')
}
fn m_truncate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args, b't')
}

fn m_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    if is_integer(b) {
        return Ok(array::from_slice(ctx, &[b, recv]));
    }
    let fb = crate::core::convert::float_conv_value(ctx, b)?;
    let fr = float::new(ctx, to_f64(recv));
    Ok(array::from_slice(ctx, &[fb, fr]))
}

fn m_allbits(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = to_integer_arg(ctx, args.pos[0])?;
    let (x, y) = (bignum::to_big(recv), bignum::to_big(m));
    Ok(Value::bool((x & &y) == y))
}

fn m_anybits(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = to_integer_arg(ctx, args.pos[0])?;
    Ok(Value::bool(!(bignum::to_big(recv) & bignum::to_big(m)).is_zero()))
}

fn m_nobits(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = to_integer_arg(ctx, args.pos[0])?;
    Ok(Value::bool((bignum::to_big(recv) & bignum::to_big(m)).is_zero()))
}

fn m_integer_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::TRUE)
}

/// `Integer.try_convert(obj)`: obj itself, its `to_int`, or nil (CRuby's
/// `rb_check_integer_type`).
fn s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if is_integer(v) {
        return Ok(v);
    }
    if !ctx.respond_to(v, sym::TO_INT, true) {
        return Ok(Value::NIL);
    }
    let r = ctx.call(v, sym::TO_INT, &[])?;
    if r.is_nil() || is_integer(r) {
        return Ok(r);
    }
    let cname = object::class_name_of(ctx, v);
    let rname = object::class_name_of(ctx, r);
    Err(ctx.type_error(&format!("can't convert {cname} into Integer ({cname}#to_int gives {rname})")))
}

fn s_sqrt(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let x = to_integer_arg(ctx, args.pos[0])?;
    let b = bignum::to_big(x);
    if b.is_negative() {
        return Err(ctx.raise(ctx.c().math_domain_error, "Numerical argument is out of domain - \"isqrt\""));
    }
    Ok(bignum::normalize(ctx, b.sqrt()))
}

fn m_pow_dummy(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().integer;
    crate::methods!(ctx, c, [
        ("sqrt", s_sqrt, [1], Safe, Singleton),
        ("try_convert", s_try_convert, [1], Safe, Singleton),
        ("+", m_plus, [1], Safe),
        ("-", m_minus, [1], Safe),
        ("*", m_mul, [1], Safe),
        ("/", m_div, [1], Safe),
        ("div", m_idiv, [1], Safe),
        ("ceildiv", m_ceildiv, [1], Safe),
        ("to_r", m_to_r, [0], Safe),
        ("rationalize", m_rationalize, [0..=1], Safe),
        ("numerator", m_to_i, [0], Safe),
        ("denominator", m_denominator, [0], Safe),
        ("%", m_mod, [1], Safe),
        ("modulo", m_mod, [1], Safe),
        ("**", m_pow, [1], Safe),
        ("pow", m_pow, [1..=2], Safe),
        ("divmod", m_divmod, [1], Safe),
        ("remainder", m_remainder, [1], Safe),
        ("fdiv", m_fdiv, [1], Safe),
        ("==", m_eq, [1], Safe),
        ("===", m_eq, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("<", m_lt, [1], Safe),
        ("<=", m_le, [1], Safe),
        (">", m_gt, [1], Safe),
        (">=", m_ge, [1], Safe),
        ("&", m_and, [1], Safe),
        ("|", m_or, [1], Safe),
        ("^", m_xor, [1], Safe),
        ("~", m_not, [0], Safe),
        ("<<", m_lshift, [1], Safe),
        (">>", m_rshift, [1], Safe),
        ("[]", m_aref, [1..=2], Safe),
        ("-@", m_uminus, [0], Safe),
        ("abs", m_abs, [0], Safe),
        ("magnitude", m_abs, [0], Safe),
        ("to_s", m_to_s, [0..=1], Safe),
        ("inspect", m_to_s, [0..=1], Safe),
        ("to_i", m_to_i, [0], Safe),
        ("to_int", m_to_i, [0], Safe),
        ("to_f", m_to_f, [0], Safe),
        ("chr", m_chr, [0..=1], Safe),
        ("ord", m_ord, [0], Safe),
        ("times", m_times, [0], Safe),
        ("upto", m_upto, [1], Safe),
        ("downto", m_downto, [1], Safe),
        ("succ", m_succ, [0], Safe),
        ("next", m_succ, [0], Safe),
        ("pred", m_pred, [0], Safe),
        ("even?", m_even, [0], Safe),
        ("odd?", m_odd, [0], Safe),
        ("zero?", m_zero, [0], Safe),
        ("hash", m_hash, [0], Safe),
        ("eql?", m_eql, [1], Safe),
        ("gcd", m_gcd, [1], Safe),
        ("lcm", m_lcm, [1], Safe),
        ("gcdlcm", m_gcdlcm, [1], Safe),
        ("digits", m_digits, [0..=1], Safe),
        ("bit_length", m_bit_length, [0], Safe),
        ("size", m_size, [0], Safe),
        ("round", m_round, [0..=1], Safe, Kw),
        ("floor", m_floor, [0..=1], Safe),
        ("ceil", m_ceil, [0..=1], Safe),
        ("truncate", m_truncate, [0..=1], Safe),
        ("coerce", m_coerce, [1], Safe),
        ("allbits?", m_allbits, [1], Safe),
        ("anybits?", m_anybits, [1], Safe),
        ("nobits?", m_nobits, [1], Safe),
        ("integer?", m_integer_p, [0], Safe),
    ]);
    let _ = (m_pow_dummy, Sign::Plus);
    // Instances come from literals and conversions only (CRuby undefines `new`).
    let single = object::singleton_class(ctx, ctx.c().integer).expect("singleton class of a builtin class");
    let _ = crate::core::module_methods::undef_method(ctx, single, sym::NEW);
}
