//! BigMath.exp and BigMath.log on `Dec`: series evaluated with guard digits, results
//! rounded (half up) to the requested number of significant digits.

use super::arith::{Dec, Kind, ROUND_HALF_UP};
use num_bigint::BigUint;

const GUARD: i64 = 12;

/// `a / b` with `p` significant digits (truncated); both finite, `b` nonzero.
fn div_sig(a: &Dec, b: &Dec, p: i64) -> Dec {
    if a.is_zero() {
        return a.clone();
    }
    a.div_trunc(b, a.exponent10() - b.exponent10() - p - 1).0
}

fn small(n: u64) -> Dec {
    Dec::new(false, BigUint::from(n), 0)
}

/// e**x with `n` significant digits (x finite).
pub fn exp(x: &Dec, n: i64) -> Dec {
    if x.kind != Kind::Finite {
        return if x.is_zero() { Dec::one() } else { x.clone() };
    }
    let e10 = x.exponent10();
    if e10 > 19 {
        return if x.neg { Dec::zero(false) } else { Dec::inf(false) };
    }
    // Halve the argument s times so the series converges fast, then square s times.
    let s = if e10 > -3 { ((e10 + 3) as f64 * std::f64::consts::LOG2_10).ceil() as u64 } else { 0 };
    let p = n + GUARD + (s as f64).log10().ceil() as i64 + e10.max(0);
    let five_s = num_traits::pow(BigUint::from(5u32), s as usize);
    let y = Dec::new(false, &x.m * five_s, x.exp - s as i64);
    let mut sum = Dec::one();
    let mut term = Dec::one();
    let mut k = 1u64;
    loop {
        term = div_sig(&term.mul(&y).round_sig(p, ROUND_HALF_UP), &small(k), p);
        if term.is_zero() || term.exponent10() < sum.exponent10() - p {
            break;
        }
        sum = sum.add(&term);
        k += 1;
    }
    for _ in 0..s {
        sum = sum.mul(&sum).round_sig(p, ROUND_HALF_UP);
    }
    let r = if x.neg { div_sig(&Dec::one(), &sum, p) } else { sum };
    r.round_sig(n, ROUND_HALF_UP)
}

/// atanh(u) = u + u³/3 + u⁵/5 … to absolute precision 10**-p (|u| < 1/2).
fn atanh(u: &Dec, p: i64) -> Dec {
    let u2 = u.mul(u).round_sig(p, ROUND_HALF_UP);
    let mut pow = u.clone();
    let mut sum = u.clone();
    let mut k = 3u64;
    loop {
        pow = pow.mul(&u2).round_sig(p, ROUND_HALF_UP);
        let term = div_sig(&pow, &small(k), p);
        if term.is_zero() || term.exponent10() < -p {
            break;
        }
        sum = sum.add(&term);
        k += 2;
    }
    sum
}

/// ln(z) for z near 1, as 2 atanh((z-1)/(z+1)).
fn ln_near_one(z: &Dec, p: i64) -> Dec {
    let one = Dec::one();
    let u = div_sig(&z.sub(&one), &z.add(&one), p);
    atanh(&u, p).mul(&small(2))
}

/// The natural logarithm of a positive finite x with `n` significant digits.
pub fn log(x: &Dec, n: i64) -> Dec {
    let one = Dec::one();
    let d = x.sub(&one);
    if d.is_zero() {
        return Dec::zero(false);
    }
    // Digits lost when x is close to 1, and digits of the integer part of the result.
    let near = (-d.exponent10()).max(0);
    let k = x.exponent10();
    let p = n + GUARD + near + (k.unsigned_abs().max(1) as f64).log10().ceil() as i64;
    // x = z × 10**k × 2**j with z in [0.75, 1.5).
    let mut z = Dec::new(false, x.m.clone(), x.exp - k);
    let mut j: i64 = 0;
    let (lo, hi) = (Dec::new(false, BigUint::from(75u32), -2), Dec::new(false, BigUint::from(15u32), -1));
    let two = small(2);
    while z.cmp(&lo) == Some(std::cmp::Ordering::Less) {
        z = z.mul(&two);
        j -= 1;
    }
    while z.cmp(&hi) != Some(std::cmp::Ordering::Less) {
        z = div_sig(&z, &two, p + 2);
        j += 1;
    }
    let mut r = ln_near_one(&z, p);
    if j != 0 || k != 0 {
        // ln 2 = 2 atanh(1/3); ln 10 = 3 ln 2 + 2 atanh(1/9).
        let ln2 = atanh(&div_sig(&one, &small(3), p), p).mul(&two);
        if j != 0 {
            r = r.add(&ln2.mul(&Dec::from_i64(j)));
        }
        if k != 0 {
            let ln10 = ln2.mul(&small(3)).add(&atanh(&div_sig(&one, &small(9), p), p).mul(&two));
            r = r.add(&ln10.mul(&Dec::from_i64(k)));
        }
    }
    r.round_sig(n, ROUND_HALF_UP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stdlib::bigdecimal::format::{parse, to_e_string};

    #[test]
    fn exp_and_log() {
        assert_eq!(to_e_string(&exp(&Dec::one(), 10), 0, 0), "0.2718281828e1");
        assert_eq!(to_e_string(&exp(&parse("-2.5", true).unwrap(), 20), 0, 0), "0.8208499862389879517e-1");
        assert_eq!(to_e_string(&log(&parse("2", true).unwrap(), 10), 0, 0), "0.6931471806e0");
        assert_eq!(to_e_string(&log(&parse("123.456", true).unwrap(), 20), 0, 0), "0.48158848172832638831e1");
    }
}
