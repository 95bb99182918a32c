//! Random::Formatter#random_number and #rand: random numbers drawn from the receiver's
//! `bytes(n)` (SecureRandom's come from the system's entropy source), for any object
//! that extends the module; random/formatter.rb adds hex, base64, uuid … on top.
//!
//! Invariants:
//! - Every number is built from bytes the receiver returns: a Float from 53 random bits,
//!   an Integer below a limit by rejection sampling (no modulo bias).
//! - A limit that is nil, zero or negative gives a Float in [0, 1) (CRuby's lenient
//!   random_number); a non-numeric limit raises ArgumentError.

use num_bigint::{BigInt, Sign};
use num_traits::{Signed, Zero};

use crate::core::{bignum, float, integer, numeric, range, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn random_bytes(ctx: &mut Ctx, recv: Value, n: usize) -> Result<Vec<u8>> {
    let bytes = ctx.intern("bytes");
    let s = ctx.call(recv, bytes, &[Value::fixnum(n as i64)])?;
    let s = string::to_str_arg(ctx, s)?;
    let b = string::bytes(s);
    if b.len() < n {
        return Err(ctx.raise(ctx.c().runtime_error, "random source returned too few bytes"));
    }
    Ok(b[..n].to_vec())
}

/// A Float in [0, 1).
fn float01(ctx: &mut Ctx, recv: Value) -> Result<f64> {
    let b = random_bytes(ctx, recv, 8)?;
    let x = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
    Ok((x >> 11) as f64 * (1.0 / (1u64 << 53) as f64))
}

/// An Integer in [0, limit) (limit > 0).
fn int_below(ctx: &mut Ctx, recv: Value, limit: &BigInt) -> Result<BigInt> {
    let max: BigInt = limit - 1;
    let bits = max.bits();
    if bits == 0 {
        return Ok(BigInt::zero());
    }
    let nbytes = bits.div_ceil(8) as usize;
    let top_mask = if bits.is_multiple_of(8) { 0xff } else { (1u16 << (bits % 8)) as u8 - 1 };
    loop {
        let mut b = random_bytes(ctx, recv, nbytes)?;
        // Big-endian: the first byte is the most significant.
        b[0] &= top_mask;
        let v = BigInt::from_bytes_be(Sign::Plus, &b);
        if v <= max {
            return Ok(v);
        }
    }
}

fn invalid(ctx: &mut Ctx, v: Value) -> crate::error::Unwind {
    match ctx.call_str(v, "to_s", &[]) {
        Ok(s) => {
            let s = string::to_rust_string_lossy(s);
            ctx.arg_error(&format!("invalid argument - {s}"))
        }
        Err(e) => e,
    }
}

fn new_float(ctx: &mut Ctx, f: f64) -> Value {
    float::new(ctx, f)
}

/// A number in a Range: Integer ends give an Integer, otherwise a Float; None if empty.
fn in_range(ctx: &mut Ctx, recv: Value, rng: Value) -> Result<Option<Value>> {
    let (b, e, excl) = (range::begin(rng), range::end(rng), range::excl(rng));
    if integer::is_integer(b) && integer::is_integer(e) {
        let span: BigInt = bignum::to_big(e) - bignum::to_big(b) + if excl { 0 } else { 1 };
        if !span.is_positive() {
            return Ok(None);
        }
        let v = int_below(ctx, recv, &span)? + bignum::to_big(b);
        return Ok(Some(bignum::normalize(ctx, v)));
    }
    if !numeric::is_numeric(ctx, b) || !numeric::is_numeric(ctx, e) {
        return Err(invalid(ctx, rng));
    }
    let (lo, hi) = (numeric::to_f64(ctx, b)?, numeric::to_f64(ctx, e)?);
    if hi < lo || (excl && hi == lo) {
        return Ok(None);
    }
    let f = float01(ctx, recv)?;
    Ok(Some(new_float(ctx, lo + f * (hi - lo))))
}

/// `random_number(limit = nil)` and `rand(limit = nil)`.
fn m_random_number(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let arg = args.pos.first().copied().unwrap_or(Value::NIL);
    if range::is_range(arg) {
        if let Some(v) = in_range(ctx, recv, arg)? {
            return Ok(v);
        }
    } else if float::is_float(arg) {
        let m = float::get(arg);
        if m > 0.0 && m.is_finite() {
            let f = float01(ctx, recv)?;
            return Ok(new_float(ctx, f * m));
        }
    } else if integer::is_integer(arg) {
        let m = bignum::to_big(arg);
        if m.is_positive() {
            let v = int_below(ctx, recv, &m)?;
            return Ok(bignum::normalize(ctx, v));
        }
    } else if !arg.is_nil() {
        if !numeric::is_numeric(ctx, arg) {
            return Err(invalid(ctx, arg));
        }
        let m = integer::to_integer_arg(ctx, arg)?;
        return m_random_number(ctx, recv, &Args::new(&[m]));
    }
    let f = float01(ctx, recv)?;
    Ok(new_float(ctx, f))
}

pub fn init(ctx: &mut Ctx) {
    let random = ctx.c().random;
    let m = crate::core::module_methods::define_module_under(ctx, random, "Formatter");
    crate::methods!(ctx, m, [
        ("random_number", m_random_number, [0..=1], Unsafe),
        ("rand", m_random_number, [0..=1], Unsafe),
    ]);
}
