//! Conversion of large Integers to digit strings (`Integer#to_s(base)`).
//!
//! num-bigint converts by divide and conquer over powers base^(m 2^k) with Burnikel-Ziegler
//! division built on Toom-3 products. Here the same recursion divides by Barrett's method:
//! each power d comes with its reciprocal floor(B^(2 len(d)) / d) (B = 2^64), so a quotient
//! costs two products, done by `bigmul::mul` (NTT for large operands).
//!
//! Invariants: at level k the number being converted is below power(k)^2, so its quotient
//! and remainder by power(k) are both below power(k) and recurse at level k - 1; every part
//! but the most significant is written with exactly m 2^(k+1) digits (leading zeros kept).
//! The powers of ten and their reciprocals depend on nothing but k: those of the first
//! CACHED_LEVELS levels are computed once per process and then only read (`OnceLock`).

use std::borrow::Cow;
use std::sync::OnceLock;

use num_bigint::{BigInt, BigUint, Sign};

use crate::core::bigmul;

/// Numbers of fewer words are converted by num-bigint directly.
const BASE_WORDS: usize = 24;

/// Levels whose powers of ten are kept (level 14: 311,296 digits, 16,000 words).
const CACHED_LEVELS: usize = 15;

/// base^(m 2^k) and floor(B^(2 len) / base^(m 2^k)).
#[derive(Clone)]
struct Power {
    d: BigUint,
    len: usize,
    recip: BigUint,
}

static DECIMAL_POWERS: [OnceLock<Power>; CACHED_LEVELS] = [const { OnceLock::new() }; CACHED_LEVELS];

/// The largest power of `base` below 2^64: (base^m, m).
fn word_power(base: u32) -> (u64, usize) {
    let mut p = base as u64;
    let mut m = 1;
    while let Some(q) = p.checked_mul(base as u64) {
        p = q;
        m += 1;
    }
    (p, m)
}

/// The power of the level after `prev` (level 0 when None), with its reciprocal.
fn power(base: u32, prev: Option<&Power>) -> Power {
    let d = match prev {
        None => BigUint::from(word_power(base).0),
        Some(p) => bigmul::mul_unsigned(&p.d, &p.d),
    };
    let len = d.iter_u64_digits().len();
    let recip = (BigUint::from(1u32) << (128 * len)) / &d;
    Power { d, len, recip }
}

/// Powers of `base` for levels 0..=top, cached or computed for one conversion.
struct Powers {
    levels: Vec<Cow<'static, Power>>,
}

/// Powers up to the first whose square exceeds a number of `words` words.
fn powers(base: u32, words: usize) -> Powers {
    let mut levels: Vec<Cow<'static, Power>> = Vec::new();
    loop {
        let k = levels.len();
        let p = match levels.last() {
            None if base == 10 => Cow::Borrowed(DECIMAL_POWERS[0].get_or_init(|| power(10, None))),
            // Only base 10 has borrowed (cached) levels.
            Some(Cow::Borrowed(prev)) if k < CACHED_LEVELS => {
                let prev: &'static Power = prev;
                Cow::Borrowed(DECIMAL_POWERS[k].get_or_init(|| power(10, Some(prev))))
            }
            prev => Cow::Owned(power(base, prev.map(|p| &**p))),
        };
        let done = 2 * p.len > words + 1;
        levels.push(p);
        if done {
            return Powers { levels };
        }
    }
}

/// (u / d, u % d) for u < d^2, by Barrett's method with d's reciprocal.
fn div_rem(u: &BigUint, p: &Power) -> (BigUint, BigUint) {
    let n = p.len;
    let q1 = u >> (64 * (n - 1));
    let mut q = bigmul::mul_unsigned(&q1, &p.recip) >> (64 * (n + 1));
    let mut r = u - bigmul::mul_unsigned(&q, &p.d);
    while r >= p.d {
        r -= &p.d;
        q += 1u32;
    }
    (q, r)
}

fn convert(x: &BigUint, base: u32, pw: &Powers, k: usize, width: usize, out: &mut Vec<u8>) {
    if x.iter_u64_digits().len() < BASE_WORDS || k == 0 {
        let s = if x.bits() == 0 && width > 0 { Vec::new() } else { x.to_str_radix(base).into_bytes() };
        out.resize(out.len() + width.saturating_sub(s.len()), b'0');
        out.extend_from_slice(&s);
        return;
    }
    let p = &pw.levels[k];
    if x < &p.d {
        return convert(x, base, pw, k - 1, width, out);
    }
    let (q, r) = div_rem(x, p);
    let half = word_power(base).1 << k;
    convert(&q, base, pw, k - 1, width.saturating_sub(half), out);
    convert(&r, base, pw, k - 1, half, out);
}

/// `n` in `base` (2..=36), lowercase, with a leading '-' when negative.
pub fn to_str_radix(n: &BigInt, base: u32) -> String {
    let words = n.iter_u64_digits().len();
    if words < BASE_WORDS || base.is_power_of_two() {
        return n.to_str_radix(base);
    }
    let pw = powers(base, words);
    let mut out = Vec::with_capacity((n.bits() as f64 / (base as f64).log2()) as usize + 2);
    if n.sign() == Sign::Minus {
        out.push(b'-');
    }
    convert(n.magnitude(), base, &pw, pw.levels.len() - 1, 0, &mut out);
    String::from_utf8(out).expect("digits are ASCII")
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_traits::Pow;

    #[test]
    fn conversion_matches_num_bigint() {
        let mut x = BigInt::from(7);
        let mut seed = 12345u64;
        for i in 0..120 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let bits = (seed >> 40) % 150_000 + 1000;
            let v: BigInt = (BigInt::from(1) << bits) / (&x + (seed % 1000)) + &x;
            x = &x * 3 + 1;
            let v = if i % 3 == 0 { -v } else { v };
            for base in [10u32, 3, 7, 36] {
                if i % 10 != 0 && base != 10 {
                    continue;
                }
                assert_eq!(to_str_radix(&v, base), v.to_str_radix(base), "{i} {base}");
            }
        }
    }

    #[test]
    fn powers_of_the_base_and_neighbours() {
        for e in [500u32, 5000, 20000, 100000] {
            for d in [-1i32, 0, 1] {
                let v = Pow::pow(BigInt::from(10), e) + d;
                assert_eq!(to_str_radix(&v, 10), v.to_str_radix(10));
                assert_eq!(to_str_radix(&-&v, 10), (-&v).to_str_radix(10));
            }
            let v = Pow::pow(BigInt::from(35), e / 2) - 1;
            assert_eq!(to_str_radix(&v, 35), v.to_str_radix(35));
        }
    }
}
