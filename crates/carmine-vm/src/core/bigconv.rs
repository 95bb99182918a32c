//! Conversion of large Integers to and from digit strings (`Integer#to_s(base)`,
//! `Integer()`/`String#to_i` of long digit strings).
//!
//! num-bigint converts to digits by divide and conquer over powers base^(m 2^k) (m digits
//! per word) with Burnikel-Ziegler division built on Toom-3 products, and parses in
//! quadratic time. Here the same recursion divides by Barrett's method: each power d comes
//! with its reciprocal floor(B^(2 len(d)) / d) (B = 2^64), so a quotient costs one product
//! by the reciprocal and one by d modulo B^N - 1 (`bigmul::FixedOperand`, NTT products with
//! the transforms of d and of the reciprocal computed once). Parsing is the same recursion
//! upside down: high part * power + low part.
//!
//! Invariants: at level k the number being converted is below power(k)^2, so its quotient
//! and remainder by power(k) are both below power(k) and recurse at level k - 1; every part
//! but the most significant is written with exactly m 2^(k+1) digits (leading zeros kept).
//! The powers of ten and their reciprocals depend on nothing but k: those of the first
//! CACHED_LEVELS levels are computed once per process and then only read (`OnceLock`).

use std::sync::OnceLock;

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;

use crate::core::bigmul::{self, FixedOperand};

/// Numbers of fewer words are converted by num-bigint directly.
const BASE_WORDS: usize = 24;

/// Divisions by powers of fewer words are num-bigint's (schoolbook below its
/// Burnikel-Ziegler threshold): callgrind, 100,000 digits, 48.6 M instructions with Barrett
/// at every level, 45.7 M from 256 words.
const BARRETT_MIN_WORDS: usize = 256;

/// Reciprocals of powers of fewer words come from num-bigint's division.
const NEWTON_MIN_WORDS: usize = 64;

/// Levels whose powers of ten are kept (level 14: 311,296 digits, 16,000 words).
const CACHED_LEVELS: usize = 15;

/// d = base^(m 2^k), and what Barrett's division by d needs, made at its first division.
struct Power {
    d: BigUint,
    len: usize,
    barrett: OnceLock<Barrett>,
}

/// d and its reciprocal floor(B^(2 len) / d), each prepared for their products: the
/// reciprocal by the top len + 1 words of a dividend, d by a quotient modulo B^N - 1 for
/// some N > len.
struct Barrett {
    d: FixedOperand,
    recip: FixedOperand,
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

/// The power of the level after `prev` (level 0 when None).
fn power(base: u32, prev: Option<&Power>) -> Power {
    let d = match prev {
        None => BigUint::from(word_power(base).0),
        Some(p) => bigmul::mul_unsigned(&p.d, &p.d),
    };
    let len = d.iter_u64_digits().len();
    Power { d, len, barrett: OnceLock::new() }
}

/// Level k's Barrett data, made (with those of the levels below) on first use.
fn barrett(pw: &Powers, k: usize) -> &Barrett {
    let p = &pw.levels[k];
    p.barrett.get_or_init(|| {
        let prev = if k > 0 { Some((&*pw.levels[k - 1], barrett(pw, k - 1).recip.value())) } else { None };
        let recip = reciprocal(&p.d, p.len, prev);
        Barrett { d: FixedOperand::new(&p.d, p.len, Some(p.len + 1)), recip: FixedOperand::new(&recip, p.len + 1, None) }
    })
}

/// floor(B^(2 len) / d) for d of `len` words. With d = d'^2 and x = floor(B^(2 n') / d')
/// of the level below, x^2 B^(2 len - 4 n') is within a relative 2 B^-n' of it; one Newton
/// step squares that error, and the last units come from the exact remainder.
fn reciprocal(d: &BigUint, len: usize, prev: Option<(&Power, &BigUint)>) -> BigUint {
    let one = BigUint::from(1u32) << (128 * len);
    let Some((below, x)) = prev.filter(|_| len >= NEWTON_MIN_WORDS) else {
        return one / d;
    };
    let sq = bigmul::mul_unsigned(x, x);
    let shift = 2 * len as isize - 4 * below.len as isize;
    let y0 = if shift >= 0 { sq << (64 * shift as usize) } else { sq >> (64 * -shift as usize) };
    let (one, d) = (BigInt::from(one), BigInt::from(d.clone()));
    let y0 = BigInt::from(y0);
    let e = &one - bigmul::mul(&d, &y0);
    let y1 = &y0 + (bigmul::mul(&y0, &e) >> (128 * len));
    let r = &one - bigmul::mul(&d, &y1);
    (y1 + r.div_floor(&d)).into_parts().1
}

/// Powers of `base` for levels 0..=top, cached or computed for one conversion.
struct Powers {
    levels: Vec<Level>,
}

enum Level {
    Cached(&'static Power),
    Owned(Power),
}

impl std::ops::Deref for Level {
    type Target = Power;
    fn deref(&self) -> &Power {
        match self {
            Level::Cached(p) => p,
            Level::Owned(p) => p,
        }
    }
}

/// Powers of `base` from level 0 up to the first for which `enough` holds.
fn powers(base: u32, enough: impl Fn(usize, &Power) -> bool) -> Powers {
    let mut levels: Vec<Level> = Vec::new();
    loop {
        let k = levels.len();
        let p = match levels.last() {
            None if base == 10 => Level::Cached(DECIMAL_POWERS[0].get_or_init(|| power(10, None))),
            // Only base 10 has cached levels.
            Some(&Level::Cached(prev)) if k < CACHED_LEVELS => Level::Cached(DECIMAL_POWERS[k].get_or_init(|| power(10, Some(prev)))),
            prev => Level::Owned(power(base, prev.map(|p| &**p))),
        };
        let done = enough(k, &p);
        levels.push(p);
        if done {
            return Powers { levels };
        }
    }
}

/// (u / d, u % d) for u < d^2, by Barrett's method with d's reciprocal.
fn div_rem(u: &BigUint, pw: &Powers, k: usize) -> (BigUint, BigUint) {
    if pw.levels[k].len < BARRETT_MIN_WORDS {
        return u.div_rem(&pw.levels[k].d);
    }
    let (p, b) = (&pw.levels[k], barrett(pw, k));
    let n = p.len;
    let d = &p.d;
    let q1 = u >> (64 * (n - 1));
    let h = q1.iter_u64_digits().len();
    let mut q = if 2 * h < n {
        // A short quotient needs only the reciprocal's top h + 2 words: the words dropped
        // add less than B^-2 to q1 * recip / B^(n+1), so q loses at most 1 more.
        let top = b.recip.value() >> (64 * (n - 1 - h));
        bigmul::mul_unsigned(&q1, &top) >> (64 * (h + 2))
    } else {
        b.recip.mul(&q1) >> (64 * (n + 1))
    };
    // q is at most 3 below the quotient, so the remainder u - q d lies in [0, 4d), below
    // B^(n+1) - 1: it is known from q d modulo B^N - 1 for N > n, a product half as long.
    let mut r = match b.d.mul_mod_bn_minus_1(&q) {
        Some((w, words)) => {
            let modulus = (BigUint::from(1u32) << (64 * words)) - 1u32;
            let mut r = (u >> (64 * words)) + (u & &modulus) + &modulus - w;
            while r >= modulus {
                r -= &modulus;
            }
            r
        }
        None => u - bigmul::mul_unsigned(&q, d),
    };
    while &r >= d {
        r -= d;
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
    let (q, r) = div_rem(x, pw, k);
    let half = word_power(base).1 << k;
    convert(&q, base, pw, k - 1, width.saturating_sub(half), out);
    convert(&r, base, pw, k - 1, half, out);
}

/// The bytes converting a number of `words` words allocates and frees again (products and
/// parts of every level), for the collector's accounting of malloc'd memory.
pub fn scratch_bytes(words: usize) -> usize {
    if words < BASE_WORDS {
        0
    } else {
        words * 128
    }
}

/// `n` in `base` (2..=36), lowercase, with a leading '-' when negative.
pub fn to_str_radix(n: &BigInt, base: u32) -> String {
    let words = n.iter_u64_digits().len();
    if words < BASE_WORDS || base.is_power_of_two() {
        return n.to_str_radix(base);
    }
    // The top power's square must exceed n: 2 len - 2 >= words.
    let pw = powers(base, |_, p| 2 * p.len > words + 1);
    let mut out = Vec::with_capacity((n.bits() as f64 / (base as f64).log2()) as usize + 2);
    if n.sign() == Sign::Minus {
        out.push(b'-');
    }
    convert(n.magnitude(), base, &pw, pw.levels.len() - 1, 0, &mut out);
    String::from_utf8(out).expect("digits are ASCII")
}

/// Numbers of at least this many digits are parsed by divide and conquer (num-bigint's
/// parsing is quadratic); shorter ones by num-bigint.
const PARSE_MIN_DIGITS: usize = 2000;

/// The magnitude written by the ASCII digits `text` (0-9, a-z, A-Z; no sign or underscore)
/// in `base` (2..=36); None if a character is not a digit of the base.
pub fn parse_digits(text: &[u8], base: u32) -> Option<BigUint> {
    if text.len() < PARSE_MIN_DIGITS || base.is_power_of_two() {
        return BigUint::parse_bytes(text, base);
    }
    let digits = text.iter().map(|&c| (c as char).to_digit(base).map(|d| d as u8)).collect::<Option<Vec<u8>>>()?;
    let m = word_power(base).1;
    // Level k splits off the low m 2^k digits: the top level is the largest with m 2^k < len.
    let top = (usize::BITS - 1 - ((digits.len() - 1) / m).leading_zeros()) as usize;
    let pw = powers(base, |k, _| k == top);
    Some(parse(&digits, base, &pw, top))
}

/// `digits` (fewer than m 2^(k+1)) as a number: high part * power(k) + low m 2^k digits.
fn parse(digits: &[u8], base: u32, pw: &Powers, k: usize) -> BigUint {
    let low_len = word_power(base).1 << k;
    if digits.len() <= low_len {
        return if k == 0 || digits.len() < PARSE_MIN_DIGITS / 4 {
            BigUint::from_radix_be(digits, base).unwrap_or_default()
        } else {
            parse(digits, base, pw, k - 1)
        };
    }
    let (high, low) = digits.split_at(digits.len() - low_len);
    let high = parse(high, base, pw, k.saturating_sub(1));
    let low = parse(low, base, pw, k.saturating_sub(1));
    bigmul::mul_unsigned(&high, &pw.levels[k].d) + low
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
    fn parsing_matches_num_bigint() {
        let x: BigInt = Pow::pow(BigInt::from(7), 40_000u32) + Pow::pow(BigInt::from(10), 20_000u32);
        for base in [10u32, 3, 36] {
            let text = x.to_str_radix(base);
            assert_eq!(parse_digits(text.as_bytes(), base), Some(x.magnitude().clone()), "base {base}");
            assert_eq!(parse_digits(text.to_uppercase().as_bytes(), base), Some(x.magnitude().clone()));
        }
        let zeros = "0".repeat(5000) + "12";
        assert_eq!(parse_digits(zeros.as_bytes(), 10), Some(BigUint::from(12u32)));
        assert_eq!(parse_digits(("9".repeat(4000) + "x").as_bytes(), 10), None);
        assert_eq!(parse_digits("9".repeat(4000).as_bytes(), 9), None);
    }

    #[test]
    fn reciprocals_by_newton_are_exact() {
        for base in [10u32, 7] {
            let pw = powers(base, |k, _| k == 11);
            for k in 0..=11 {
                let p = &pw.levels[k];
                let exact = (BigUint::from(1u32) << (128 * p.len)) / &p.d;
                assert_eq!(barrett(&pw, k).recip.value(), &exact, "base {base} level {k}");
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
