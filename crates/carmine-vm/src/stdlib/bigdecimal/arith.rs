//! Arithmetic on `Dec`, BigDecimal's value, independent of the VM: exact sums and
//! products, division truncated on CRuby's word grid, rounding at a decimal position in
//! the seven rounding modes, integer powers and square roots.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer as _;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;

/// Decimal digits per word of CRuby's representation (BASE = 10**9): the grid on which
/// CRuby truncates quotients and counts allocations.
pub const BASE_FIG: i64 = 9;
/// BigDecimal.double_fig: the digits of a Float that BigDecimal keeps.
pub const DOUBLE_FIG: i64 = 16;

pub const ROUND_UP: u8 = 1;
pub const ROUND_DOWN: u8 = 2;
pub const ROUND_HALF_UP: u8 = 3;
pub const ROUND_HALF_DOWN: u8 = 4;
pub const ROUND_CEILING: u8 = 5;
pub const ROUND_FLOOR: u8 = 6;
pub const ROUND_HALF_EVEN: u8 = 7;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    NaN,
    Inf,
    Zero,
    Finite,
}

/// `±m × 10**exp`. For `Finite`, `m > 0` and `m % 10 != 0`; otherwise `m == 0`, `exp == 0`
/// (`neg` is the sign of a zero or infinity, false for NaN).
#[derive(Clone, Debug)]
pub struct Dec {
    pub kind: Kind,
    pub neg: bool,
    pub m: BigUint,
    pub exp: i64,
}

pub fn pow10(n: u64) -> BigUint {
    if n < 20 {
        return BigUint::from(10u64.pow(n as u32));
    }
    num_traits::pow(BigUint::from(10u32), n as usize)
}

/// Whether 10 divides `m`, without dividing: even, and (as 2**32 ≡ 1 mod 5) the sum of
/// its 32-bit digits divisible by 5.
fn divisible_by_10(m: &BigUint) -> bool {
    if m.bit(0) {
        return false;
    }
    m.iter_u32_digits().fold(0u64, |acc, d| (acc + d as u64) % 5) == 0
}

/// The number of decimal digits of `m` (1 for zero).
pub fn ndigits(m: &BigUint) -> i64 {
    if m.is_zero() {
        return 1;
    }
    if let Some(v) = m.to_u64() {
        return v.ilog10() as i64 + 1;
    }
    // log10(2) slightly under-estimated, then corrected by one comparison.
    let bits = m.bits();
    let est = ((bits - 1) as f64 * std::f64::consts::LOG10_2).floor() as u64;
    if *m >= pow10(est + 1) {
        est as i64 + 2
    } else {
        est as i64 + 1
    }
}

pub fn floor_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b)
}

pub fn ceil_div(a: i64, b: i64) -> i64 {
    -(-a).div_euclid(b)
}

impl Dec {
    pub fn nan() -> Dec {
        Dec { kind: Kind::NaN, neg: false, m: BigUint::zero(), exp: 0 }
    }
    pub fn inf(neg: bool) -> Dec {
        Dec { kind: Kind::Inf, neg, m: BigUint::zero(), exp: 0 }
    }
    pub fn zero(neg: bool) -> Dec {
        Dec { kind: Kind::Zero, neg, m: BigUint::zero(), exp: 0 }
    }
    pub fn one() -> Dec {
        Dec::new(false, BigUint::one(), 0)
    }

    /// `±m × 10**exp`, normalized (trailing zeros of `m` move into `exp`; zero keeps
    /// the sign).
    pub fn new(neg: bool, mut m: BigUint, mut exp: i64) -> Dec {
        if m.is_zero() {
            return Dec::zero(neg);
        }
        // Past the exponent range a value overflows to Infinity or underflows to zero
        // (which also keeps every exponent and digit count far from i64's limits).
        let limit = super::format::EXP_LIMIT;
        if !(-limit..=limit).contains(&exp) {
            let e10 = exp.saturating_add(ndigits(&m));
            if e10 > limit {
                return Dec::inf(neg);
            }
            if e10 < -limit {
                return Dec::zero(neg);
            }
        }
        if !divisible_by_10(&m) {
            return Dec { kind: Kind::Finite, neg, m, exp };
        }
        // Strip trailing zeros, many at a time while possible.
        let big = BigUint::from(1_000_000_000u32);
        loop {
            let (q, r) = m.div_rem(&big);
            if !r.is_zero() {
                break;
            }
            m = q;
            exp += 9;
        }
        let ten = BigUint::from(10u32);
        loop {
            let (q, r) = m.div_rem(&ten);
            if !r.is_zero() {
                break;
            }
            m = q;
            exp += 1;
        }
        Dec { kind: Kind::Finite, neg, m, exp }
    }

    pub fn from_bigint(n: &BigInt) -> Dec {
        Dec::new(n.sign() == Sign::Minus, n.magnitude().clone(), 0)
    }

    pub fn from_i64(n: i64) -> Dec {
        Dec::new(n < 0, BigUint::from(n.unsigned_abs()), 0)
    }

    pub fn is_finite(&self) -> bool {
        matches!(self.kind, Kind::Finite | Kind::Zero)
    }
    pub fn is_nonzero_finite(&self) -> bool {
        self.kind == Kind::Finite
    }
    pub fn is_zero(&self) -> bool {
        self.kind == Kind::Zero
    }
    pub fn is_nan(&self) -> bool {
        self.kind == Kind::NaN
    }
    pub fn is_inf(&self) -> bool {
        self.kind == Kind::Inf
    }

    /// The number of significant digits of a nonzero finite value.
    pub fn n_digits(&self) -> i64 {
        if self.kind == Kind::Finite {
            ndigits(&self.m)
        } else {
            0
        }
    }

    /// The exponent of the value written `0.ddd × 10**e` (BigDecimal#exponent); 0 for
    /// zero and non-finite values.
    pub fn exponent10(&self) -> i64 {
        if self.kind == Kind::Finite {
            self.exp + ndigits(&self.m)
        } else {
            0
        }
    }

    /// The exponent in CRuby's words: the value is `0.w1 w2 … × BASE**word_exp`.
    pub fn word_exp(&self) -> i64 {
        ceil_div(self.exponent10(), BASE_FIG)
    }

    /// The number of words CRuby uses for the digits (its `Prec`).
    pub fn prec_words(&self) -> i64 {
        if self.kind == Kind::Finite {
            self.word_exp() - floor_div(self.exp, BASE_FIG)
        } else {
            1
        }
    }

    /// The leading word of CRuby's representation (a nonzero finite value).
    pub fn leading_word(&self) -> u64 {
        if self.kind != Kind::Finite {
            return 0;
        }
        let shift = BASE_FIG * (self.word_exp() - 1) - self.exp;
        let w = if shift >= 0 { &self.m / pow10(shift as u64) } else { &self.m * pow10((-shift) as u64) };
        w.to_u64().unwrap_or(0)
    }

    /// The decimal digits an exact sum with `o` spans (both finite and nonzero).
    pub fn sum_digits(&self, o: &Dec) -> i64 {
        if self.kind != Kind::Finite || o.kind != Kind::Finite {
            return 0;
        }
        self.exponent10().max(o.exponent10()).saturating_sub(self.exp.min(o.exp))
    }

    /// BigDecimal#scale: digits after the decimal point.
    pub fn scale(&self) -> i64 {
        if self.kind == Kind::Finite {
            (-self.exp).max(0)
        } else {
            0
        }
    }

    /// BigDecimal#precision: digits of the integer part (none for |x| < 1) plus scale.
    pub fn precision(&self) -> i64 {
        if self.kind == Kind::Finite {
            self.exponent10().max(0) + self.scale()
        } else {
            0
        }
    }

    pub fn negate(&self) -> Dec {
        let mut d = self.clone();
        if d.kind != Kind::NaN {
            d.neg = !d.neg;
        }
        d
    }

    pub fn abs(&self) -> Dec {
        let mut d = self.clone();
        d.neg = false;
        d
    }

    /// The signed integer `±m`.
    fn signed_m(&self) -> BigInt {
        let s = if self.neg { Sign::Minus } else { Sign::Plus };
        BigInt::from_biguint(s, self.m.clone())
    }

    /// Both mantissas scaled to the smaller exponent: (a, b, exp).
    fn aligned(a: &Dec, b: &Dec) -> (BigInt, BigInt, i64) {
        let e = a.exp.min(b.exp);
        let sa = a.signed_m() * BigInt::from(pow10((a.exp - e) as u64));
        let sb = b.signed_m() * BigInt::from(pow10((b.exp - e) as u64));
        (sa, sb, e)
    }

    /// Numeric comparison; None when either is NaN.
    pub fn compare(&self, o: &Dec) -> Option<Ordering> {
        use Kind::*;
        let rank = |d: &Dec| -> i32 {
            match d.kind {
                Inf => {
                    if d.neg {
                        -2
                    } else {
                        2
                    }
                }
                Zero => 0,
                Finite => {
                    if d.neg {
                        -1
                    } else {
                        1
                    }
                }
                NaN => 0,
            }
        };
        if self.is_nan() || o.is_nan() {
            return None;
        }
        let (ra, rb) = (rank(self), rank(o));
        if ra != rb || ra.abs() != 1 {
            return Some(ra.cmp(&rb));
        }
        // Both finite nonzero, same sign.
        let (ea, eb) = (self.exponent10(), o.exponent10());
        let mag = if ea != eb {
            ea.cmp(&eb)
        } else {
            let (x, y, _) = Dec::aligned(&self.abs(), &o.abs());
            x.cmp(&y)
        };
        Some(if self.neg { mag.reverse() } else { mag })
    }

    pub fn add(&self, o: &Dec) -> Dec {
        use Kind::*;
        match (self.kind, o.kind) {
            (NaN, _) | (_, NaN) => Dec::nan(),
            (Inf, Inf) => {
                if self.neg == o.neg {
                    self.clone()
                } else {
                    Dec::nan()
                }
            }
            (Inf, _) => self.clone(),
            (_, Inf) => o.clone(),
            (Zero, Zero) => Dec::zero(self.neg && o.neg),
            (Zero, _) => o.clone(),
            (_, Zero) => self.clone(),
            (Finite, Finite) => {
                // Magnitudes on the smaller exponent, then a sum or a difference.
                let e = self.exp.min(o.exp);
                let scaled = |d: &Dec| if d.exp == e { d.m.clone() } else { &d.m * pow10((d.exp - e) as u64) };
                let (x, y) = (scaled(self), scaled(o));
                if self.neg == o.neg {
                    return Dec::new(self.neg, x + y, e);
                }
                match x.cmp(&y) {
                    Ordering::Equal => Dec::zero(false),
                    Ordering::Greater => Dec::new(self.neg, x - y, e),
                    Ordering::Less => Dec::new(o.neg, y - x, e),
                }
            }
        }
    }

    pub fn sub(&self, o: &Dec) -> Dec {
        self.add(&o.negate())
    }

    pub fn mul(&self, o: &Dec) -> Dec {
        use Kind::*;
        let neg = self.neg != o.neg;
        match (self.kind, o.kind) {
            (NaN, _) | (_, NaN) => Dec::nan(),
            (Inf, Zero) | (Zero, Inf) => Dec::nan(),
            (Inf, _) | (_, Inf) => Dec::inf(neg),
            (Zero, _) | (_, Zero) => Dec::zero(neg),
            (Finite, Finite) => match self.exp.checked_add(o.exp) {
                Some(e) => Dec::new(neg, &self.m * &o.m, e),
                None if self.exp > 0 => Dec::inf(neg),
                None => Dec::zero(neg),
            },
        }
    }

    /// The quotient of two nonzero finite values truncated toward zero at the decimal
    /// position `unit` (a multiple of 10**unit), with the first digit below it and
    /// whether anything nonzero remains below the truncation.
    pub fn div_trunc(&self, o: &Dec, unit: i64) -> (Dec, u8, bool) {
        let shift = self.exp - o.exp - unit;
        let (mut num, mut den) = (self.m.clone(), o.m.clone());
        if shift >= 0 {
            num *= pow10(shift as u64);
        } else {
            den *= pow10((-shift) as u64);
        }
        let (q, r) = num.div_rem(&den);
        let r10 = r * 10u32;
        let (v, rest) = r10.div_rem(&den);
        let v = v.to_u8().unwrap_or(0);
        let inexact = v != 0 || !rest.is_zero();
        (Dec::new(self.neg != o.neg, q, unit), v, inexact)
    }

    /// The quotient truncated on CRuby's word grid when the quotient may hold
    /// `word_c` words (the first of which is a zero word).
    pub fn div_words(&self, o: &Dec, word_c: i64) -> (Dec, u8, bool) {
        let unit = BASE_FIG * (self.word_exp() - o.word_exp() + 2 - word_c);
        self.div_trunc(o, unit)
    }

    /// `self + o` as CRuby computes it into a result of `max_prec` words: when the
    /// exact sum needs more, both operands are cut below a window of `max_prec - 1`
    /// words from the top word of the larger one (and an operand wholly below the result
    /// leaves the other one rounded to `max_prec` words).
    pub fn add_window(&self, o: &Dec, max_prec: i64, mode: u8) -> Dec {
        if self.kind != Kind::Finite || o.kind != Kind::Finite {
            return self.add(o);
        }
        let (x, y) = if self.word_exp() > o.word_exp() || (self.word_exp() == o.word_exp() && self.abs().compare(&o.abs()) != Some(Ordering::Less)) { (self, o) } else { (o, self) };
        let shift = x.word_exp() - y.word_exp();
        let right = x.prec_words().max(y.prec_words() + shift);
        if right < max_prec {
            return self.add(o);
        }
        if shift >= max_prec {
            return x.round_at(BASE_FIG * (x.word_exp() - max_prec), mode);
        }
        let pos = BASE_FIG * (x.word_exp() - (max_prec - 1));
        x.round_at(pos, ROUND_DOWN).add(&y.round_at(pos, ROUND_DOWN))
    }

    /// Rounds to a multiple of 10**pos (keeping the digits at 10**pos and above) in
    /// `mode`. CRuby's word layout shows through one way: a rounding position more than
    /// a whole word above the leading word gives zero except in ceiling/floor modes.
    pub fn round_at(&self, pos: i64, mode: u8) -> Dec {
        if self.kind != Kind::Finite || self.exp >= pos {
            return self.clone();
        }
        if (self.word_exp() * BASE_FIG).saturating_sub(pos) < 0 && mode != ROUND_CEILING && mode != ROUND_FLOOR {
            return Dec::zero(self.neg);
        }
        let k = (pos as i128 - self.exp as i128).min(u64::MAX as i128) as u64;
        let (q, v, rest) = if k > ndigits(&self.m) as u64 {
            // Every digit lies below the first one dropped.
            (BigUint::zero(), 0u8, true)
        } else {
            let (q, r) = self.m.div_rem(&pow10(k));
            // r != 0: the last digit of m is nonzero.
            let (v, rest) = r.div_rem(&pow10(k - 1));
            (q, v.to_u8().unwrap_or(0), !rest.is_zero())
        };
        let fracf = true;
        let odd = q.is_odd();
        let up = match mode {
            ROUND_DOWN => false,
            ROUND_UP => fracf,
            ROUND_HALF_UP => v >= 5,
            ROUND_HALF_DOWN => v > 5 || (v == 5 && rest),
            ROUND_CEILING => !self.neg,
            ROUND_FLOOR => self.neg,
            _ => v > 5 || (v == 5 && (rest || odd)),
        };
        let q = if up { q + 1u32 } else { q };
        Dec::new(self.neg, q, pos.min(super::format::EXP_LIMIT + 1))
    }

    /// Rounds to `n` significant digits (CRuby's VpLeftRound).
    pub fn round_sig(&self, n: i64, mode: u8) -> Dec {
        if self.kind != Kind::Finite {
            return self.clone();
        }
        self.round_at(self.exponent10().saturating_sub(n), mode)
    }

    /// Truncation toward zero to an Integer (finite values only).
    pub fn to_bigint(&self) -> BigInt {
        if self.kind != Kind::Finite {
            return BigInt::zero();
        }
        let m = if self.exp >= 0 {
            &self.m * pow10(self.exp as u64)
        } else if -self.exp >= ndigits(&self.m) {
            BigUint::zero()
        } else {
            &self.m / pow10((-self.exp) as u64)
        };
        BigInt::from_biguint(if self.neg { Sign::Minus } else { Sign::Plus }, m)
    }

    /// The integer part (BigDecimal#fix).
    pub fn fix(&self) -> Dec {
        if self.kind != Kind::Finite || self.exp >= 0 {
            return self.clone();
        }
        let d = Dec::from_bigint(&self.to_bigint());
        if d.is_zero() {
            Dec::zero(self.neg)
        } else {
            d
        }
    }

    /// The fractional part (BigDecimal#frac).
    pub fn frac(&self) -> Dec {
        if self.kind != Kind::Finite {
            return self.clone();
        }
        if self.exp >= 0 {
            return Dec::zero(self.neg);
        }
        if -self.exp >= ndigits(&self.m) {
            return self.clone();
        }
        let (_, r) = self.m.div_rem(&pow10((-self.exp) as u64));
        Dec::new(self.neg, r, self.exp)
    }

    /// Exact `(numerator, denominator)` of a finite value.
    pub fn to_ratio(&self) -> (BigInt, BigInt) {
        let n = self.signed_m();
        if self.exp >= 0 {
            (n * BigInt::from(pow10(self.exp as u64)), BigInt::one())
        } else {
            (n, BigInt::from(pow10((-self.exp) as u64)))
        }
    }

    /// The nearest Float (correctly rounded through the shortest decimal string).
    pub fn to_f64(&self) -> f64 {
        match self.kind {
            Kind::NaN => f64::NAN,
            Kind::Inf => {
                if self.neg {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }
            }
            Kind::Zero => {
                if self.neg {
                    -0.0
                } else {
                    0.0
                }
            }
            Kind::Finite => {
                let e10 = self.exponent10();
                let f = if e10 > 400 {
                    f64::INFINITY
                } else if e10 < -400 {
                    0.0
                } else {
                    format!("{}e{}", self.m, self.exp).parse::<f64>().unwrap_or(f64::NAN)
                };
                if self.neg {
                    -f
                } else {
                    f
                }
            }
        }
    }

    /// `self ** n` for an integer `n`: exact for finite values and n >= 0; NaN, zeros
    /// and infinities follow IEEE-like rules for any n. (Negative powers of finite
    /// values need a precision: the caller divides.)
    pub fn powi(&self, n: i64) -> Dec {
        match self.kind {
            Kind::NaN => return Dec::nan(),
            Kind::Zero => {
                if n == 0 {
                    return Dec::one();
                }
                let neg = self.neg && n % 2 != 0;
                return if n < 0 { Dec::inf(neg) } else { Dec::zero(neg) };
            }
            Kind::Inf => {
                if n == 0 {
                    return Dec::one();
                }
                let neg = self.neg && n % 2 != 0;
                return if n > 0 { Dec::inf(neg) } else { Dec::zero(neg) };
            }
            Kind::Finite => {}
        }
        let k = n.unsigned_abs();
        let exp = self.exp.saturating_mul(k as i64);
        let digits = ndigits(&self.m).saturating_mul(k as i64);
        if exp.saturating_add(digits) > super::format::EXP_LIMIT {
            return Dec::inf(self.neg && k % 2 == 1);
        }
        if exp.saturating_add(digits) < -super::format::EXP_LIMIT {
            return Dec::zero(self.neg && k % 2 == 1);
        }
        let m = num_traits::pow(self.m.clone(), k as usize);
        Dec::new(self.neg && k % 2 == 1, m, exp)
    }

    /// e**|self| to about `p` significant digits, for arguments too large for CRuby's
    /// plain Taylor series (which needs about e·|x| terms): the argument is halved `s`
    /// times, the series summed with guard digits, and the sum squared `s` times.
    /// Infinity past the largest exponent.
    pub fn exp_abs(&self, p: i64) -> Dec {
        let e10 = self.exponent10();
        if self.kind != Kind::Finite {
            return if self.is_zero() { Dec::one() } else { self.clone() };
        }
        if e10 > 19 {
            return Dec::inf(false);
        }
        let s = ((e10 + 3).max(0) as f64 * std::f64::consts::LOG2_10).ceil() as u64;
        let p = p + 12 + e10.max(0) + (s.max(1) as f64).log10().ceil() as i64;
        let five_s = num_traits::pow(BigUint::from(5u32), s as usize);
        let y = Dec::new(false, &self.m * five_s, self.exp - s as i64);
        let div_sig = |a: &Dec, b: &Dec| a.div_trunc(b, a.exponent10() - b.exponent10() - p - 1).0;
        let (mut sum, mut term, mut k) = (Dec::one(), Dec::one(), 1u64);
        loop {
            term = div_sig(&term.mul(&y).round_sig(p, ROUND_HALF_UP), &Dec::new(false, BigUint::from(k), 0));
            if term.is_zero() || term.exponent10() < sum.exponent10() - p {
                break;
            }
            sum = sum.add(&term);
            k += 1;
        }
        for _ in 0..s {
            sum = sum.mul(&sum).round_sig(p, ROUND_HALF_UP);
            if sum.exponent10() > super::format::EXP_LIMIT {
                return Dec::inf(false);
            }
        }
        sum
    }

    /// The square root truncated to `words` words starting at its leading word (x > 0).
    pub fn sqrt(&self, words: i64) -> Dec {
        // sqrt(m × 10**exp): make the exponent even and scale so that the integer
        // square root has the digits wanted.
        let e10 = self.exponent10();
        let lead_word = ceil_div(ceil_div(e10, 2), BASE_FIG);
        let unit = BASE_FIG * (lead_word - words);
        // result = isqrt(x × 10**(-2 unit)) × 10**unit
        let shift = self.exp - 2 * unit;
        let v = if shift >= 0 {
            &self.m * pow10(shift as u64)
        } else {
            &self.m / pow10((-shift) as u64)
        };
        Dec::new(false, v.sqrt(), unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        crate::stdlib::bigdecimal::format::parse(s, true).unwrap()
    }

    #[test]
    fn normalizes_and_counts() {
        let x = d("1234.5000");
        assert_eq!(x.m, BigUint::from(12345u32));
        assert_eq!(x.exp, -1);
        assert_eq!(x.exponent10(), 4);
        assert_eq!(x.precision(), 5);
        assert_eq!(d("1e20").precision(), 21);
        assert_eq!(d("1e-20").precision(), 20);
    }

    #[test]
    fn tests_divisibility_by_ten() {
        for n in [10u64, 20, 1_000_000_000_000_000_000, 4_294_967_296 * 10] {
            assert!(divisible_by_10(&BigUint::from(n)), "{n}");
        }
        for n in [1u64, 5, 12, 4_294_967_296, 4_294_967_296 * 5 + 2] {
            assert!(!divisible_by_10(&BigUint::from(n)), "{n}");
        }
        assert!(divisible_by_10(&(pow10(40) * 7u32)));
        assert!(!divisible_by_10(&(pow10(40) + 2u32)));
    }

    #[test]
    fn rounds_in_every_mode() {
        let x = d("2.5");
        let r = |m| x.round_at(0, m).to_bigint();
        assert_eq!(r(ROUND_HALF_UP), BigInt::from(3));
        assert_eq!(r(ROUND_HALF_DOWN), BigInt::from(2));
        assert_eq!(r(ROUND_HALF_EVEN), BigInt::from(2));
        assert_eq!(r(ROUND_UP), BigInt::from(3));
        assert_eq!(r(ROUND_DOWN), BigInt::from(2));
        assert_eq!(d("-2.1").round_at(0, ROUND_FLOOR).to_bigint(), BigInt::from(-3));
        assert_eq!(d("-2.1").round_at(0, ROUND_CEILING).to_bigint(), BigInt::from(-2));
    }

    #[test]
    fn divides_on_the_word_grid() {
        let (q, v, _) = d("1").div_words(&d("3"), 6);
        assert_eq!(q.n_digits(), 36);
        assert_eq!(v, 3);
    }
}
