//! Float: IEEE doubles, inline as flonums when possible, boxed otherwise.
//!
//! Invariants: `new` picks the flonum encoding whenever it exists, so a Float has one
//! representation per bit pattern; `to_s` follows CRuby's shortest round-trip format.

use std::cmp::Ordering;

use num_bigint::BigInt;
use num_traits::{FromPrimitive, ToPrimitive, Zero};

use crate::core::{array, bignum, integer, numeric, string};
use crate::heap::page::{SizeClass, SMALL_SLOT_SIZE};
use crate::interp::Args;
use crate::object::{is_type, ObjType, RBasic};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[repr(C)]
pub struct RFloat {
    pub basic: RBasic,
    pub value: f64,
}

const _: () = assert!(std::mem::size_of::<RFloat>() <= SMALL_SLOT_SIZE);

/// Results of float fast paths in the dispatch loop.
pub struct Num(pub f64);
pub struct Bool(pub bool);

/// A float fast path's result: `immediate` when it needs no object (a flonum, a boolean),
/// which the dispatch loop stores without syncing its frame; `into_value` otherwise, which
/// allocates (the frame synced first: a collection may run).
pub trait IntoValue {
    fn immediate(&self) -> Option<Value>;
    fn into_value(self, ctx: &mut Ctx) -> Value;
}

impl IntoValue for Num {
    #[inline(always)]
    fn immediate(&self) -> Option<Value> {
        Value::try_flonum(self.0)
    }

    #[inline]
    fn into_value(self, ctx: &mut Ctx) -> Value {
        new_boxed(ctx, self.0)
    }
}

impl IntoValue for Bool {
    #[inline(always)]
    fn immediate(&self) -> Option<Value> {
        Some(Value::bool(self.0))
    }

    #[inline]
    fn into_value(self, _ctx: &mut Ctx) -> Value {
        Value::bool(self.0)
    }
}

#[inline]
pub fn new(ctx: &mut Ctx, f: f64) -> Value {
    match Value::try_flonum(f) {
        Some(v) => v,
        None => new_boxed(ctx, f),
    }
}

/// A Float outside the flonum range (or a NaN or infinity: any `f` that `try_flonum`
/// refused), on the heap.
#[cold]
#[inline(never)]
pub fn new_boxed(ctx: &mut Ctx, f: f64) -> Value {
    let klass = ctx.c().float;
    let p = ctx.alloc_slot_in(SizeClass::Small, ObjType::Float, klass) as *mut RFloat;
    // SAFETY: fresh Float slot.
    unsafe {
        (*p).value = f;
        (*p).basic.flags |= crate::object::FL_FROZEN;
    }
    Value::from_ptr(p)
}

#[inline]
pub fn is_float(v: Value) -> bool {
    v.is_flonum() || is_type(v, ObjType::Float)
}

#[inline]
pub fn get(v: Value) -> f64 {
    if v.is_flonum() {
        v.flonum_unchecked()
    } else {
        // SAFETY: callers pass a Float value.
        unsafe { (*v.as_ptr::<RFloat>()).value }
    }
}

pub fn hash_f64(seed: u64, f: f64) -> u64 {
    let bits = if f == 0.0 { 0 } else { f.to_bits() };
    crate::core::hash::mix(seed ^ 0x466c_6f61_74, bits)
}

/// Ruby's floored modulo for floats (`y` nonzero; callers raise ZeroDivisionError).
#[inline]
pub fn ruby_mod(x: f64, y: f64) -> f64 {
    flodivmod(x, y).1
}

/// CRuby's `flodivmod`: floored quotient and modulo (`y` nonzero).
pub fn flodivmod(x: f64, y: f64) -> (f64, f64) {
    if y.is_nan() {
        return (y, y);
    }
    let mut m = if x == 0.0 || (y.is_infinite() && !x.is_infinite()) { x } else { x % y };
    let mut d = if x.is_infinite() && !y.is_infinite() { x } else { ((x - m) / y).round() };
    if y * m < 0.0 {
        m += y;
        d -= 1.0;
    }
    (d, m)
}

/// CRuby's `Float#to_s`.
pub fn to_s(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    // Shortest round-trip digits in scientific form: d.ddde±x.
    let sci = format!("{:e}", f);
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if neg { "-" } else { "" };
    // Plain notation up to 15 integer digits, and for 16 when a fraction follows them
    // (CRuby: decpt <= DBL_DIG + 1 with digits after the point).
    if (-4..15).contains(&exp) || (exp == 15 && digits.len() > 16) {
        let point = exp + 1;
        let s = if point <= 0 {
            format!("0.{}{}", "0".repeat((-point) as usize), digits)
        } else if point as usize >= digits.len() {
            format!("{}{}.0", digits, "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{s}")
    } else {
        let frac = if digits.len() > 1 { &digits[1..] } else { "0" };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{}.{}e{}{:02}", &digits[..1], frac, esign, exp.abs())
    }
}

/// `warning: Float 1e400 out of range` for a parsed literal that overflowed.
pub fn warn_out_of_range(ctx: &mut Ctx, text: &[u8]) {
    let t = String::from_utf8_lossy(text);
    let t = t.trim_matches(|c: char| c.is_ascii_whitespace());
    let (path, line) = crate::core::kernel::caller_location(ctx);
    crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: Float {t} out of range\n"));
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Scans `digits ('_' digits)*` at `i`, appending the digits to `out`; returns the new
/// position and whether a misplaced underscore stopped the scan.
fn scan_digits(s: &[u8], mut i: usize, out: &mut String, hex: bool) -> (usize, bool) {
    let is_digit = |c: u8| if hex { c.is_ascii_hexdigit() } else { c.is_ascii_digit() };
    while i < s.len() {
        let c = s[i];
        if is_digit(c) {
            out.push(c as char);
            i += 1;
        } else if c == b'_' && !out.is_empty() && i + 1 < s.len() && is_digit(s[i + 1]) && is_digit(s[i - 1]) {
            i += 1;
        } else {
            return (i, c == b'_');
        }
    }
    (i, false)
}

/// Parses a hexadecimal float body (after `0x`): `h[.h][p[+-]d]`.
fn parse_hex_float(s: &[u8], mut i: usize, strict: bool) -> Option<(f64, usize)> {
    let mut int = String::new();
    let (j, _) = scan_digits(s, i, &mut int, true);
    i = j;
    let mut frac = String::new();
    if s.get(i) == Some(&b'.') {
        let (j, _) = scan_digits(s, i + 1, &mut frac, true);
        if j > i + 1 {
            i = j;
        } else if strict {
            return None;
        }
    }
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut j = i + 1;
        let mut eneg = false;
        if matches!(s.get(j), Some(b'+' | b'-')) {
            eneg = s[j] == b'-';
            j += 1;
        }
        let mut ed = String::new();
        let (k, _) = scan_digits(s, j, &mut ed, false);
        if ed.is_empty() {
            if strict {
                return None;
            }
        } else {
            exp = ed.parse::<i64>().unwrap_or(i64::MAX / 4).min(100_000);
            if eneg {
                exp = -exp;
            }
            i = k;
        }
    }
    let mant = BigInt::parse_bytes(format!("{int}{frac}").as_bytes(), 16).unwrap_or_default();
    let shift = exp - 4 * frac.len() as i64;
    Some((scale_big_pub(&mant, shift), i))
}

/// `mant * 2**shift` rounded to the nearest double.
pub fn scale_big_pub(mant: &BigInt, shift: i64) -> f64 {
    let bits = mant.bits() as i64;
    if bits == 0 {
        return 0.0;
    }
    // Keep 64 significant bits (sticky bit for the rest), then let the FPU round once.
    let drop = (bits - 64).max(0);
    let top = mant >> drop as usize;
    let mut m = top.to_u64().unwrap_or(u64::MAX);
    if drop > 0 && (mant - (&top << drop as usize)) != BigInt::zero() {
        m |= 1;
    }
    let e = shift + drop;
    let f = m as f64;
    if e > 2000 {
        f64::INFINITY
    } else if e < -2200 {
        0.0
    } else {
        let half = e / 2;
        f * 2f64.powi(half as i32) * 2f64.powi((e - half) as i32)
    }
}

/// Parses a float the way CRuby's `rb_cstr_to_dbl` does (Ruby 3.4 rules: `"1."` and
/// `"1.e5"` are accepted).
///
/// Lenient parsing (`String#to_f`) takes the longest valid prefix and answers 0.0 when
/// there is none (and for `0x` strings without a sign); strict parsing (`Float()`) accepts
/// hexadecimal floats and surrounding whitespace only, answering `None` otherwise.
pub fn parse_float(s: &[u8], strict: bool) -> Option<f64> {
    let bad = if strict { None } else { Some(0.0) };
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let unsigned_hex = s.get(i) == Some(&b'0') && matches!(s.get(i + 1), Some(b'x' | b'X'));
    if unsigned_hex && !strict {
        return Some(0.0);
    }
    let mut neg = false;
    if matches!(s.get(i), Some(b'+' | b'-')) {
        neg = s[i] == b'-';
        i += 1;
    }
    let finish = |v: f64, i: usize| -> Option<f64> {
        let mut k = i;
        if strict {
            while k < s.len() && is_space(s[k]) {
                k += 1;
            }
            if k < s.len() {
                return None;
            }
        }
        Some(if neg { -v } else { v })
    };
    if s.get(i) == Some(&b'0') && matches!(s.get(i + 1), Some(b'x' | b'X')) {
        return match parse_hex_float(s, i + 2, strict) {
            Some((v, j)) => finish(v, j),
            None => bad,
        };
    }
    let mut num = String::new();
    let (j, stopped_at_underscore) = scan_digits(s, i, &mut num, false);
    if strict && stopped_at_underscore {
        return None;
    }
    let int_digits = num.len();
    i = j;
    let mut frac_digits = 0;
    if s.get(i) == Some(&b'.') {
        let mut frac = String::new();
        let (k, us) = scan_digits(s, i + 1, &mut frac, false);
        if strict && us {
            return None;
        }
        if !frac.is_empty() {
            num.push('.');
            num.push_str(&frac);
            frac_digits = frac.len();
            i = k;
        } else if int_digits > 0 {
            // "1." (and "1.e5"): the decimal part may be omitted.
            i += 1;
        }
    }
    if int_digits == 0 && frac_digits == 0 {
        return bad;
    }
    if matches!(s.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if matches!(s.get(j), Some(b'+' | b'-')) {
            exp.push(s[j] as char);
            j += 1;
        }
        let mut ed = String::new();
        let (k, us) = scan_digits(s, j, &mut ed, false);
        if ed.is_empty() || (strict && us) {
            if strict {
                return None;
            }
        } else {
            exp.push_str(&ed);
            num.push_str(&exp);
            i = k;
        }
    }
    let v: f64 = num.parse().unwrap_or(0.0);
    finish(v, i)
}

/// An f64 that is integral, as an Integer.
pub fn to_integer(ctx: &mut Ctx, f: f64) -> Result<Value> {
    if f.is_nan() {
        return Err(ctx.float_domain_error("NaN"));
    }
    if f.is_infinite() {
        return Err(ctx.float_domain_error(if f > 0.0 { "Infinity" } else { "-Infinity" }));
    }
    if f.abs() < 4e18 {
        return Ok(Value::fixnum(f as i64));
    }
    let b = BigInt::from_f64(f).unwrap_or_default();
    Ok(bignum::normalize(ctx, b))
}

/// Compares an Integer with a float exactly.
pub fn cmp_int_float(i: Value, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 { Ordering::Less } else { Ordering::Greater });
    }
    if let Some(x) = i.as_fixnum() {
        if x.unsigned_abs() < (1 << 53) {
            return (x as f64).partial_cmp(&f);
        }
    }
    let bi = bignum::to_big(i);
    let fl = f.floor();
    let bf = BigInt::from_f64(fl)?;
    match bi.cmp(&bf) {
        Ordering::Equal => Some(if f > fl { Ordering::Less } else { Ordering::Equal }),
        o => Some(o),
    }
}

pub fn pow(ctx: &mut Ctx, x: f64, y: f64) -> Result<Value> {
    if x < 0.0 && y.fract() != 0.0 && y.is_finite() {
        let c = crate::core::complex::new_polar_pow(ctx, x, y)?;
        return Ok(c);
    }
    Ok(new(ctx, x.powf(y)))
}

#[inline]
fn other(ctx: &mut Ctx, a: f64, b: Value, op: crate::symbol::SymId) -> Result<Option<f64>> {
    if b.is_flonum() {
        return Ok(Some(b.flonum_unchecked()));
    }
    if let Some(i) = b.as_fixnum() {
        return Ok(Some(i as f64));
    }
    if is_float(b) {
        return Ok(Some(get(b)));
    }
    if integer::is_integer(b) {
        return Ok(Some(integer::to_f64(b)));
    }
    let _ = (a, op);
    let _ = ctx;
    Ok(None)
}

macro_rules! float_binop {
    ($name:ident, $op:expr, |$x:ident, $y:ident| $body:expr) => {
        fn $name(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
            let $x = get(recv);
            match other(ctx, $x, args.pos[0], $op)? {
                Some($y) => {
                    let r: f64 = $body;
                    Ok(new(ctx, r))
                }
                None => numeric::coerce_bin(ctx, recv, args.pos[0], $op, false),
            }
        }
    };
}

float_binop!(m_plus, sym::PLUS, |x, y| x + y);
float_binop!(m_minus, sym::MINUS, |x, y| x - y);
float_binop!(m_mul, sym::MUL, |x, y| x * y);
float_binop!(m_div, sym::DIV, |x, y| x / y);

fn m_mod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = get(recv);
    match other(ctx, x, args.pos[0], sym::MOD)? {
        Some(y) => {
            if y == 0.0 {
                return Err(ctx.zero_division());
            }
            Ok(new(ctx, ruby_mod(x, y)))
        }
        None => numeric::coerce_bin(ctx, recv, args.pos[0], sym::MOD, false),
    }
}

fn m_pow(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = get(recv);
    match other(ctx, x, args.pos[0], sym::POW)? {
        Some(y) => pow(ctx, x, y),
        None => numeric::coerce_bin(ctx, recv, args.pos[0], sym::POW, false),
    }
}

fn m_divmod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = get(recv);
    let Some(y) = other(ctx, x, args.pos[0], sym::DIV)? else {
        let dm = ctx.intern("divmod");
        return numeric::coerce_bin(ctx, recv, args.pos[0], dm, false);
    };
    if y == 0.0 {
        return Err(ctx.zero_division());
    }
    let (q, m) = flodivmod(x, y);
    let qi = to_integer(ctx, q)?;
    let mv = new(ctx, m);
    Ok(array::from_slice(ctx, &[qi, mv]))
}

fn m_div_int(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = get(recv);
    let Some(y) = other(ctx, x, args.pos[0], sym::DIV)? else {
        let d = ctx.intern("div");
        return numeric::coerce_bin(ctx, recv, args.pos[0], d, false);
    };
    if y == 0.0 {
        return Err(ctx.zero_division());
    }
    to_integer(ctx, (x / y).floor())
}

fn float_cmp(ctx: &mut Ctx, x: f64, b: Value) -> Result<Option<Option<Ordering>>> {
    if is_float(b) {
        return Ok(Some(x.partial_cmp(&get(b))));
    }
    if integer::is_integer(b) {
        return Ok(Some(cmp_int_float(b, x).map(Ordering::reverse)));
    }
    let _ = ctx;
    Ok(None)
}

macro_rules! float_cmpop {
    ($name:ident, $op:expr, |$o:ident| $test:expr) => {
        fn $name(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
            match float_cmp(ctx, get(recv), args.pos[0])? {
                Some(Some($o)) => Ok(Value::bool($test)),
                Some(None) => Ok(Value::FALSE),
                None => numeric::coerce_bin(ctx, recv, args.pos[0], $op, true),
            }
        }
    };
}

float_cmpop!(m_lt, sym::LT, |o| o.is_lt());
float_cmpop!(m_le, sym::LE, |o| o.is_le());
float_cmpop!(m_gt, sym::GT, |o| o.is_gt());
float_cmpop!(m_ge, sym::GE, |o| o.is_ge());

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match float_cmp(ctx, get(recv), args.pos[0])? {
        Some(o) => Ok(Value::bool(o == Some(Ordering::Equal))),
        None => {
            let r = ctx.call(args.pos[0], sym::EQ, &[recv])?;
            Ok(Value::bool(r.truthy()))
        }
    }
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = get(recv);
    match float_cmp(ctx, x, args.pos[0])? {
        Some(Some(o)) => Ok(Value::fixnum(o as i64)),
        Some(None) => Ok(Value::NIL),
        None => {
            // CRuby's flo_cmp: an infinite receiver asks the other's `infinite?`.
            let y = args.pos[0];
            if x.is_infinite() {
                let id = ctx.intern("infinite?");
                if let Some(i) = crate::core::convert::check_funcall(ctx, y, id, &[])? {
                    if i.truthy() {
                        let j = crate::core::comparable::cmp_result(ctx, i, recv, y)?;
                        let r = if x > 0.0 { if j > 0 { 0 } else { 1 } } else if j < 0 { 0 } else { -1 };
                        return Ok(Value::fixnum(r));
                    }
                    return Ok(Value::fixnum(if x > 0.0 { 1 } else { -1 }));
                }
            }
            match numeric::coerce_cmp(ctx, recv, y)? {
                Some(o) => Ok(Value::fixnum(o as i64)),
                None => Ok(Value::NIL),
            }
        }
    }
}

fn m_eql(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.pos[0];
    Ok(Value::bool(is_float(b) && get(b) == get(recv)))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum((hash_f64(ctx.vm().hash_seed, get(recv)) >> 2) as i64))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_us_ascii(ctx, &to_s(get(recv))))
}

fn m_to_f(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_to_i(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    to_integer(ctx, get(recv).trunc())
}

pub fn m_uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(new(ctx, -get(recv)))
}

pub fn m_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(new(ctx, get(recv).abs()))
}

fn m_nan(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(recv).is_nan()))
}

fn m_infinite(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = get(recv);
    Ok(if f.is_infinite() { Value::fixnum(if f > 0.0 { 1 } else { -1 }) } else { Value::NIL })
}

fn m_finite(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(recv).is_finite()))
}

fn m_zero(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(recv) == 0.0))
}

fn round_half_up(x: f64, s: f64) -> f64 {
    let xs = x * s;
    let mut f = xs.round();
    if s == 1.0 {
        return f;
    }
    if x > 0.0 {
        if (f + 0.5) / s <= x {
            f += 1.0;
        }
    } else if (f - 0.5) / s >= x {
        f -= 1.0;
    }
    f
}

fn round_half_down(x: f64, s: f64) -> f64 {
    let xs = x * s;
    let mut f = xs.round();
    if x > 0.0 {
        if (f - 0.5) / s >= x {
            f -= 1.0;
        }
    } else if (f + 0.5) / s <= x {
        f += 1.0;
    }
    f
}

fn round_half_even(x: f64, s: f64) -> f64 {
    let u = x.trunc();
    let v = x - u;
    let us = u * s;
    let vs = v * s;
    let r = if x > 0.0 {
        let f = vs.floor();
        let uf = us + f;
        let d = vs - f;
        let d = if d > 0.5 {
            1.0
        } else if d == 0.5 || (uf + 0.5) / s <= x {
            uf % 2.0
        } else {
            0.0
        };
        f + d
    } else if x < 0.0 {
        let f = vs.ceil();
        let uf = us + f;
        let d = f - vs;
        let d = if d > 0.5 {
            1.0
        } else if d == 0.5 || (uf - 0.5) / s >= x {
            (-uf) % 2.0
        } else {
            0.0
        };
        f - d
    } else {
        return x;
    };
    us + r
}

fn round_mode(x: f64, s: f64, mode: u8) -> f64 {
    match mode {
        b'e' => round_half_even(x, s),
        b'd' => round_half_down(x, s),
        _ => round_half_up(x, s),
    }
}

/// `frexp`'s binary exponent: `2**(e-1) <= |x| < 2**e`.
fn binexp(x: f64) -> i32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        let m = bits & 0xf_ffff_ffff_ffff;
        return -1022 - (m.leading_zeros() as i32 - 12) + 1 - 1;
    }
    e - 1022
}

fn float_round_overflow(ndigits: i64, binexp: i32) -> bool {
    let float_dig = 15 + 2;
    let b = binexp as i64;
    ndigits >= float_dig - if b > 0 { b / 4 } else { b / 3 - 1 }
}

fn float_round_underflow(ndigits: i64, binexp: i32) -> bool {
    let b = binexp as i64;
    ndigits < -(if b > 0 { b / 3 + 1 } else { b / 4 })
}

/// `Float#round(ndigits > 14)`: exact rounding through a Rational.
fn round_by_rational(ctx: &mut Ctx, x: f64, ndigits: i64, mode: u8) -> Result<Value> {
    let (n, d) = exact_fraction(x);
    let r = crate::core::rational::round_exact(&n, &d, ndigits, b'r', mode);
    let (rn, rd) = r;
    Ok(new(ctx, crate::core::numeric_parse::ratio_to_f64(&rn, &rd)))
}

/// An f64's integer part as an Integer (Float#to_i).
fn float_to_i(ctx: &mut Ctx, x: f64) -> Result<Value> {
    to_integer(ctx, x.trunc())
}

fn round_impl(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    let x = get(recv);
    let nd = match args.pos.first() {
        Some(&n) => integer::to_int_arg(ctx, n)? as i64,
        None => 0,
    };
    let mode = if kind == b'r' { numeric::rounding_mode(ctx, args)? } else { b'u' };
    if x == 0.0 {
        return Ok(if nd > 0 { recv } else { Value::fixnum(0) });
    }
    match kind {
        b'r' => {
            if nd < 0 {
                let i = float_to_i(ctx, x)?;
                return integer::round_int(ctx, i, nd, b'r', mode);
            }
            if nd == 0 {
                if !x.is_finite() {
                    return to_integer(ctx, x);
                }
                return to_integer(ctx, round_mode(x, 1.0, mode));
            }
            if !x.is_finite() {
                return Ok(recv);
            }
            let be = binexp(x);
            if float_round_overflow(nd, be) {
                return Ok(recv);
            }
            if float_round_underflow(nd, be) {
                return Ok(new(ctx, 0.0));
            }
            if nd > 14 {
                return round_by_rational(ctx, x, nd, mode);
            }
            let s = 10f64.powi(nd as i32);
            let r = round_mode(x, s, mode);
            Ok(new(ctx, r / s))
        }
        b'f' | b'c' => {
            let floor = kind == b'f';
            if nd > 0 {
                if !x.is_finite() {
                    return Ok(recv);
                }
                let be = binexp(x);
                if float_round_overflow(nd, be) {
                    return Ok(recv);
                }
                if (if floor { x > 0.0 } else { x < 0.0 }) && float_round_underflow(nd, be) {
                    return Ok(new(ctx, 0.0));
                }
                let f = 10f64.powi(nd as i32);
                if floor {
                    let mul = (x * f).floor();
                    let mut res = (mul + 1.0) / f;
                    if res > x {
                        res = mul / f;
                    }
                    return Ok(new(ctx, res));
                }
                return Ok(new(ctx, (x * f).ceil() / f));
            }
            let i = to_integer(ctx, if floor { x.floor() } else { x.ceil() })?;
            if nd < 0 {
                return integer::round_int(ctx, i, nd, kind, b'u');
            }
            Ok(i)
        }
        _ => {
            // truncate: ceil for negative numbers, floor otherwise.
            round_impl(ctx, recv, args, if x.is_sign_negative() { b'c' } else { b'f' })
        }
    }
}

fn m_round(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b'r')
}
fn m_floor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b'f')
}
fn m_ceil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b'c')
}
fn m_truncate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b't')
}

fn m_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let yv = crate::core::convert::float_conv_value(ctx, args.pos[0])?;
    Ok(array::from_slice(ctx, &[yv, recv]))
}

/// `rationalize([eps])`: the simplest rational within eps (or within half an ulp).
fn m_rationalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    use crate::core::rational::{simplest_between, Real};
    let x = get(recv);
    if !x.is_finite() {
        return Err(ctx.float_domain_error(&to_s(x)));
    }
    let neg = x < 0.0;
    let ax = x.abs();
    let (p, q) = match args.pos.first() {
        Some(&e) => {
            let e = numeric::to_f64(ctx, e)?.abs();
            let (a, b) = (ax - e, ax + e);
            if a == b {
                exact_fraction(ax)
            } else {
                simplest_between(Real::Flt(a), Real::Flt(b))
            }
        }
        None => {
            let (f, n) = decode(ax);
            if f.is_zero() || n >= 0 {
                (f << n.max(0) as usize, BigInt::from(1))
            } else {
                let den = BigInt::from(1) << (1 - n) as usize;
                let two_f: BigInt = f * 2;
                simplest_between(Real::Rat(&two_f - 1, den.clone()), Real::Rat(&two_f + 1, den))
            }
        }
    };
    let p = if neg { -p } else { p };
    crate::core::rational::reduce(ctx, p, q)
}

/// `x = f * 2**n` with `f` a 53-bit integer (CRuby's `float_decode_internal`).
fn decode(x: f64) -> (BigInt, i64) {
    if x == 0.0 {
        return (BigInt::zero(), 0);
    }
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64;
    let m = bits & 0xf_ffff_ffff_ffff;
    if e == 0 {
        (BigInt::from(m), -1074)
    } else {
        (BigInt::from(m | (1 << 52)), e - 1075)
    }
}

fn m_numerator(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = get(recv);
    if !x.is_finite() {
        return Ok(recv);
    }
    let r = m_to_r(ctx, recv, &Args::new(&[]))?;
    ctx.call_str(r, "numerator", &[])
}

fn m_denominator(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = get(recv);
    if !x.is_finite() {
        return Ok(Value::fixnum(1));
    }
    let r = m_to_r(ctx, recv, &Args::new(&[]))?;
    ctx.call_str(r, "denominator", &[])
}

fn m_arg(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = get(recv);
    if x.is_nan() {
        return Ok(recv);
    }
    if x.is_sign_negative() {
        return Ok(new(ctx, std::f64::consts::PI));
    }
    Ok(Value::fixnum(0))
}

fn m_polar(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = new(ctx, get(recv).abs());
    let t = m_arg(ctx, recv, args)?;
    Ok(array::from_slice(ctx, &[a, t]))
}

fn m_next_float(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = get(recv);
    let r = if x.is_nan() || x == f64::INFINITY {
        x
    } else if x == 0.0 {
        f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() + 1)
    } else {
        f64::from_bits(x.to_bits() - 1)
    };
    Ok(new(ctx, r))
}

fn m_prev_float(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = get(recv);
    let r = if x.is_nan() || x == f64::NEG_INFINITY {
        x
    } else if x == 0.0 {
        -f64::from_bits(1)
    } else if x > 0.0 {
        f64::from_bits(x.to_bits() - 1)
    } else {
        f64::from_bits(x.to_bits() + 1)
    };
    Ok(new(ctx, r))
}

fn m_quo(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    m_div(ctx, recv, args)
}

fn m_integer_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::FALSE)
}

fn m_to_r(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = get(recv);
    if !x.is_finite() {
        return Err(ctx.float_domain_error(&to_s(x)));
    }
    let (num, den) = exact_fraction(x);
    let n = bignum::normalize(ctx, num);
    let d = bignum::normalize(ctx, den);
    crate::core::rational::new_reduced(ctx, n, d)
}

/// The exact binary fraction num/den of a finite double.
pub fn exact_fraction(x: f64) -> (BigInt, BigInt) {
    if x == 0.0 {
        return (BigInt::zero(), BigInt::from(1));
    }
    let bits = x.to_bits();
    let sign = if bits >> 63 == 0 { 1 } else { -1 };
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = if exp == 0 { (bits & 0xf_ffff_ffff_ffff) << 1 } else { (bits & 0xf_ffff_ffff_ffff) | 0x10_0000_0000_0000 };
    let e = exp - 1075;
    let m = BigInt::from(mant) * sign;
    if e >= 0 {
        (m << e as usize, BigInt::from(1))
    } else {
        (m, BigInt::from(1) << (-e) as usize)
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().float;
    let consts: [(&str, f64); 9] = [
        ("INFINITY", f64::INFINITY),
        ("NAN", f64::NAN),
        ("EPSILON", f64::EPSILON),
        ("MAX", f64::MAX),
        ("MIN", f64::MIN_POSITIVE),
        ("DIG", 15.0),
        ("MANT_DIG", 53.0),
        ("MAX_10_EXP", 308.0),
        ("MIN_10_EXP", -307.0),
    ];
    for (name, v) in consts {
        let id = ctx.intern(name);
        let val = if matches!(name, "DIG" | "MANT_DIG" | "MAX_10_EXP" | "MIN_10_EXP") { Value::fixnum(v as i64) } else { new(ctx, v) };
        crate::core::module::body(c).const_set(id, val);
    }
    for (name, v) in [("MAX_EXP", 1024i64), ("MIN_EXP", -1021), ("RADIX", 2)] {
        let id = ctx.intern(name);
        crate::core::module::body(c).const_set(id, Value::fixnum(v));
    }
    crate::methods!(ctx, c, [
        ("+", m_plus, [1], Safe),
        ("-", m_minus, [1], Safe),
        ("*", m_mul, [1], Safe),
        ("/", m_div, [1], Safe),
        ("%", m_mod, [1], Safe),
        ("modulo", m_mod, [1], Safe),
        ("**", m_pow, [1], Safe),
        ("pow", m_pow, [1], Safe),
        ("divmod", m_divmod, [1], Safe),
        ("div", m_div_int, [1], Safe),
        ("quo", m_quo, [1], Safe),
        ("fdiv", m_quo, [1], Safe),
        ("<", m_lt, [1], Safe),
        ("<=", m_le, [1], Safe),
        (">", m_gt, [1], Safe),
        (">=", m_ge, [1], Safe),
        ("==", m_eq, [1], Safe),
        ("===", m_eq, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_to_s, [0], Safe),
        ("to_f", m_to_f, [0], Safe),
        ("to_i", m_to_i, [0], Safe),
        ("to_int", m_to_i, [0], Safe),
        ("-@", m_uminus, [0], Safe),
        ("abs", m_abs, [0], Safe),
        ("magnitude", m_abs, [0], Safe),
        ("nan?", m_nan, [0], Safe),
        ("infinite?", m_infinite, [0], Safe),
        ("finite?", m_finite, [0], Safe),
        ("zero?", m_zero, [0], Safe),
        ("round", m_round, [0..=1], Safe, Kw),
        ("floor", m_floor, [0..=1], Safe),
        ("ceil", m_ceil, [0..=1], Safe),
        ("truncate", m_truncate, [0..=1], Safe),
        ("coerce", m_coerce, [1], Safe),
        ("next_float", m_next_float, [0], Safe),
        ("prev_float", m_prev_float, [0], Safe),
        ("integer?", m_integer_p, [0], Safe),
        ("to_r", m_to_r, [0], Safe),
        ("rationalize", m_rationalize, [0..=1], Safe),
        ("numerator", m_numerator, [0], Safe),
        ("denominator", m_denominator, [0], Safe),
        ("arg", m_arg, [0], Safe),
        ("angle", m_arg, [0], Safe),
        ("phase", m_arg, [0], Safe),
        ("polar", m_polar, [0], Safe),
    ]);
    // Instances come from literals and conversions only (CRuby undefines `new`).
    let single = crate::core::object::singleton_class(ctx, ctx.c().float).expect("singleton class of a builtin class");
    let _ = crate::core::module_methods::undef_method(ctx, single, sym::NEW);
}

#[cfg(test)]
mod tests {
    use super::to_s;

    #[test]
    fn ruby_float_format() {
        assert_eq!(to_s(1.0), "1.0");
        assert_eq!(to_s(1.5), "1.5");
        assert_eq!(to_s(100.0), "100.0");
        assert_eq!(to_s(1e16), "1.0e+16");
        assert_eq!(to_s(1e15), "1.0e+15");
        assert_eq!(to_s(999999999999999.9), "999999999999999.9");
        assert_eq!(to_s(0.0001), "0.0001");
        assert_eq!(to_s(0.00001), "1.0e-05");
        assert_eq!(to_s(1.5e-7), "1.5e-07");
        assert_eq!(to_s(123456789.123456789), "123456789.12345679");
        assert_eq!(to_s(-0.0), "-0.0");
        assert_eq!(to_s(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(to_s(f64::INFINITY), "Infinity");
        assert_eq!(to_s(2.5e100), "2.5e+100");
    }
}
