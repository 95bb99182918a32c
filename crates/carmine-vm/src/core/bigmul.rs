//! Multiplication of large Integers by number-theoretic transform (NTT).
//!
//! num-bigint multiplies with Karatsuba and Toom-3 only; from about 1,200 64-bit words per
//! operand a convolution by NTT is faster (2x at 5,000 words). The product of two
//! magnitudes is their convolution as polynomials in 2^64: each coefficient is below
//! min(len) * 2^128, so it is computed modulo three primes p in (2^61, 2^62) of the form
//! c * 2^32 + 1 (product ~2^186), put back together by the Chinese remainder theorem
//! (Garner), and the carries are propagated.
//!
//! Invariants of the arithmetic modulo p:
//! - Twiddle factors are plain residues with Shoup's precomputed quotient, so multiplying by
//!   one costs two high/low products and lands in [0, 2p) (`mul_shoup`).
//! - Forward transforms (decimation in frequency: natural order in, bit-reversed out) keep
//!   values in [0, 2p); inverse ones (decimation in time: bit-reversed in, natural out)
//!   take [0, 2p) to [0, 4p). Harvey's lazy butterflies; 4p < 2^64 since p < 2^62.
//! - Pointwise products are Montgomery's (R = 2^64, `mul`): x * y / R, exact in [0, p); the
//!   final scaling by n^-1 * R takes that R out and reduces to [0, p).
//! Nothing is cached between calls (no VM state): the tables cost n/2 products per prime.

use num_bigint::{BigInt, BigUint, Sign};

/// Both operands at least this many words: below it num-bigint's Toom-3 is faster.
pub const NTT_MIN_WORDS: usize = 1200;

/// Largest transform: 2^22 words (268 M bits of product; the transform then needs ~300 MB);
/// larger products use num-bigint.
const MAX_LOG: u32 = 22;

struct Prime {
    p: u64,
    /// p^-1 mod 2^64.
    pinv: u64,
    /// R^2 mod p (converts x to x * R).
    r2: u64,
    /// A generator of the multiplicative group.
    g: u64,
}

const fn prime(p: u64, g: u64) -> Prime {
    // Newton's iteration for the inverse modulo 2^64: each step doubles the correct bits.
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 7 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(p.wrapping_mul(inv)));
        i += 1;
    }
    let r = ((1u128 << 64) % p as u128) as u64;
    let r2 = ((r as u128 * r as u128) % p as u128) as u64;
    Prime { p, pinv: inv, r2, g }
}

/// Three primes c * 2^32 + 1 in (2^61, 2^62) with a generator each.
const PRIMES: [Prime; 3] = [prime(0x3fff_ffee_0000_0001, 3), prime(0x3fff_ffb4_0000_0001, 19), prime(0x3fff_ffa0_0000_0001, 3)];

impl Prime {
    #[inline(always)]
    fn mul(&self, a: u64, b: u64) -> u64 {
        let t = a as u128 * b as u128;
        let m = (t as u64).wrapping_mul(self.pinv);
        let mp = ((m as u128 * self.p as u128) >> 64) as u64;
        let hi = (t >> 64) as u64;
        // t and m * p agree in their low word, so the difference is exact in the high one.
        let (d, borrow) = hi.overflowing_sub(mp);
        if borrow {
            d.wrapping_add(self.p)
        } else {
            d
        }
    }

    #[inline(always)]
    fn add(&self, a: u64, b: u64) -> u64 {
        let s = a + b;
        if s >= self.p {
            s - self.p
        } else {
            s
        }
    }

    #[inline(always)]
    fn sub(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            a - b
        } else {
            a + self.p - b
        }
    }

    /// x * R mod p for any 64-bit x.
    #[inline(always)]
    fn to_mont(&self, x: u64) -> u64 {
        self.mul(x, self.r2)
    }

    /// b^e, both in Montgomery form.
    fn pow(&self, mut b: u64, mut e: u64) -> u64 {
        let mut r = self.to_mont(1);
        while e > 0 {
            if e & 1 == 1 {
                r = self.mul(r, b);
            }
            b = self.mul(b, b);
            e >>= 1;
        }
        r
    }

    /// floor(w * 2^64 / p) for w < p (Shoup's precomputed quotient): w * 2^64 - (w * R mod p)
    /// is an exact multiple of p, so the quotient is that difference times p^-1 mod 2^64.
    #[inline(always)]
    fn shoup(&self, w: u64) -> u64 {
        self.to_mont(w).wrapping_neg().wrapping_mul(self.pinv)
    }

    /// x * w mod p in [0, 2p), for any 64-bit x and w < p with ws = shoup(w).
    #[inline(always)]
    fn mul_shoup(&self, x: u64, w: u64, ws: u64) -> u64 {
        let q = ((x as u128 * ws as u128) >> 64) as u64;
        x.wrapping_mul(w).wrapping_sub(q.wrapping_mul(self.p))
    }

    /// Twiddle tables for transforms of length n (plain form, each with its Shoup quotient):
    /// entry `len + j` holds w_{2 len}^j (forward) or w_{2 len}^-j (inverse), for each power
    /// of two len < n.
    fn twiddles(&self, n: usize) -> [Vec<(u64, u64)>; 2] {
        let mut fw = vec![(0u64, 0u64); n.max(2)];
        let mut inv = vec![(0u64, 0u64); n.max(2)];
        let half = n / 2;
        if half == 0 {
            return [fw, inv];
        }
        let wm = self.pow(self.to_mont(self.g), (self.p - 1) / n as u64);
        let w = self.mul(wm, 1);
        let ws = self.shoup(w);
        let mut x = 1u64;
        for j in 0..half {
            fw[half + j] = (x, self.shoup(x));
            let y = self.mul_shoup(x, w, ws);
            x = if y >= self.p { y - self.p } else { y };
        }
        let mut len = half / 2;
        while len >= 1 {
            for j in 0..len {
                fw[len + j] = fw[2 * len + 2 * j];
            }
            len /= 2;
        }
        // w^-j = w^(2 len - j) = -w^(len - j).
        let mut len = 1;
        while len <= half {
            inv[len] = (1, self.shoup(1));
            for j in 1..len {
                let v = self.p - fw[len + len - j].0;
                inv[len + j] = (v, self.shoup(v));
            }
            len *= 2;
        }
        [fw, inv]
    }

    /// Decimation in frequency; values in [0, 2p) stay in [0, 2p) (Harvey's lazy butterfly).
    fn forward(&self, a: &mut [u64], w: &[(u64, u64)]) {
        let n = a.len();
        let p2 = 2 * self.p;
        let mut len = n / 2;
        while len >= 1 {
            let tw = &w[len..2 * len];
            for block in a.chunks_exact_mut(2 * len) {
                let (lo, hi) = block.split_at_mut(len);
                for ((l, h), &(wj, wsj)) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let u = *l;
                    let v = *h;
                    let s = u + v;
                    *l = if s >= p2 { s - p2 } else { s };
                    *h = self.mul_shoup(u + p2 - v, wj, wsj);
                }
            }
            len /= 2;
        }
    }

    /// Decimation in time; inputs in [0, 2p), outputs in [0, 4p).
    fn inverse(&self, a: &mut [u64], w: &[(u64, u64)]) {
        let n = a.len();
        let p2 = 2 * self.p;
        let mut len = 1;
        while len < n {
            let tw = &w[len..2 * len];
            for block in a.chunks_exact_mut(2 * len) {
                let (lo, hi) = block.split_at_mut(len);
                for ((l, h), &(wj, wsj)) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let u = if *l >= p2 { *l - p2 } else { *l };
                    let v = self.mul_shoup(*h, wj, wsj);
                    *l = u + v;
                    *h = u + p2 - v;
                }
            }
            len *= 2;
        }
    }

    /// The cyclic convolution of `a` and `b` (words) modulo p, length n, in plain form.
    fn convolve(&self, a: &[u64], b: &[u64], n: usize, square: bool) -> Vec<u64> {
        let [fw, iw] = self.twiddles(n);
        let one_s = self.shoup(1);
        let mut fa = vec![0u64; n];
        for (d, &x) in fa.iter_mut().zip(a) {
            *d = self.mul_shoup(x, 1, one_s);
        }
        self.forward(&mut fa, &fw);
        if square {
            for x in fa.iter_mut() {
                *x = self.mul(*x, *x);
            }
        } else {
            let mut fb = vec![0u64; n];
            for (d, &x) in fb.iter_mut().zip(b) {
                *d = self.mul_shoup(x, 1, one_s);
            }
            self.forward(&mut fb, &fw);
            for (x, &y) in fa.iter_mut().zip(&fb) {
                *x = self.mul(*x, y);
            }
        }
        self.inverse(&mut fa, &iw);
        // Pointwise Montgomery products left a factor R^-1: scale by n^-1 * R.
        let n_inv = {
            let p = self.p as u128;
            let mut r: u128 = 1;
            let mut b = n as u128 % p;
            let mut e = self.p as u128 - 2;
            while e > 0 {
                if e & 1 == 1 {
                    r = r * b % p;
                }
                b = b * b % p;
                e >>= 1;
            }
            (r * ((1u128 << 64) % p) % p) as u64
        };
        let n_inv_s = self.shoup(n_inv);
        for x in fa.iter_mut() {
            let y = self.mul_shoup(*x, n_inv, n_inv_s);
            *x = if y >= self.p { y - self.p } else { y };
        }
        fa
    }
}

/// Magnitude product of two word slices by NTT; `None` when too large for the primes.
fn mul_words(a: &[u64], b: &[u64]) -> Option<Vec<u64>> {
    let out_len = a.len() + b.len();
    let n = out_len.next_power_of_two();
    if n.trailing_zeros() > MAX_LOG {
        return None;
    }
    let square = std::ptr::eq(a, b);
    let [p1, p2, p3] = &PRIMES;
    let r1 = p1.convolve(a, b, n, square);
    let r2 = p2.convolve(a, b, n, square);
    let r3 = p3.convolve(a, b, n, square);
    // Garner's constants, in Montgomery form so that `mul` by them is a plain product.
    let inv_p1_mod_p2 = p2.to_mont(modinv(p1.p % p2.p, p2.p));
    let p1p2_mod_p3 = ((p1.p as u128 * p2.p as u128) % p3.p as u128) as u64;
    let inv_p1p2_mod_p3 = p3.to_mont(modinv(p1p2_mod_p3, p3.p));
    let p1_mod_p3 = p3.to_mont(p1.p % p3.p);
    let p1p2 = p1.p as u128 * p2.p as u128;
    let mut out = vec![0u64; out_len];
    // Running sum of coefficients not yet written out, as three words (below 2^192).
    let (mut c0, mut c1, mut c2) = (0u64, 0u64, 0u64);
    for (i, slot) in out.iter_mut().enumerate() {
        let (x1, x2, x3) = (r1[i], r2[i], r3[i]);
        // x = x1 + p1 * v2 + p1 * p2 * v3.
        // All three primes lie in (2^61, 2^62), so x1 < p1 < 2 p2 and one subtraction reduces it.
        let x1_2 = if x1 >= p2.p { x1 - p2.p } else { x1 };
        let x1_3 = if x1 >= p3.p { x1 - p3.p } else { x1 };
        let v2 = p2.mul(p2.sub(x2, x1_2), inv_p1_mod_p2);
        let t = p3.add(x1_3, p3.mul(v2, p1_mod_p3));
        let v3 = p3.mul(p3.sub(x3, t), inv_p1p2_mod_p3);
        let low = x1 as u128 + v2 as u128 * p1.p as u128;
        // v3 * p1p2 as three words.
        let a0 = (p1p2 as u64) as u128 * v3 as u128;
        let a1 = (p1p2 >> 64) as u128 * v3 as u128 + (a0 >> 64);
        let (w0, w1, w2) = (a0 as u64, a1 as u64, (a1 >> 64) as u64);
        let (s0, k0) = w0.overflowing_add(low as u64);
        let (s1, k1a) = w1.overflowing_add((low >> 64) as u64);
        let (s1, k1b) = s1.overflowing_add(k0 as u64);
        let s2 = w2 + k1a as u64 + k1b as u64;
        // Add to the carry.
        let (d0, e0) = c0.overflowing_add(s0);
        let (d1, e1a) = c1.overflowing_add(s1);
        let (d1, e1b) = d1.overflowing_add(e0 as u64);
        let d2 = c2.wrapping_add(s2).wrapping_add(e1a as u64 + e1b as u64);
        *slot = d0;
        c0 = d1;
        c1 = d2;
        c2 = 0;
    }
    debug_assert!(c0 == 0 && c1 == 0);
    Some(out)
}

fn modinv(a: u64, p: u64) -> u64 {
    let p128 = p as u128;
    let (mut r, mut b, mut e) = (1u128, a as u128 % p128, p128 - 2);
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % p128;
        }
        b = b * b % p128;
        e >>= 1;
    }
    r as u64
}

/// a * b, by NTT when both are large.
pub fn mul(a: &BigInt, b: &BigInt) -> BigInt {
    let (sa, wa) = a.to_u64_digits();
    if wa.len() < NTT_MIN_WORDS {
        return a * b;
    }
    let same = a == b;
    let (sb, wb) = if same { (sa, Vec::new()) } else { b.to_u64_digits() };
    if !same && wb.len() < NTT_MIN_WORDS {
        return a * b;
    }
    let words = if same { mul_words(&wa, &wa) } else { mul_words(&wa, &wb) };
    let Some(words) = words else { return a * b };
    let sign = if sa == sb { Sign::Plus } else { Sign::Minus };
    BigInt::from_biguint(sign, biguint_from_words(words))
}

fn biguint_from_words(words: Vec<u64>) -> BigUint {
    let mut bytes = Vec::with_capacity(words.len() * 8);
    for w in words {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    BigUint::from_bytes_le(&bytes)
}

/// base^e by squaring, with `mul` for the large products.
pub fn pow(base: &BigInt, mut e: u64) -> BigInt {
    let mut result = BigInt::from(1);
    let mut b = base.clone();
    while e > 0 {
        if e & 1 == 1 {
            result = mul(&result, &b);
        }
        e >>= 1;
        if e > 0 {
            b = mul(&b, &b);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize, seed: u64) -> BigInt {
        let mut x = seed;
        let mut bytes = Vec::with_capacity(n * 8);
        for _ in 0..n {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        BigInt::from_bytes_le(Sign::Plus, &bytes)
    }

    #[test]
    fn ntt_products_match_schoolbook_and_toom() {
        for &(n, m) in &[(1200, 1200), (1300, 5000), (2000, 2001), (1200, 20000)] {
            let a = words(n, n as u64);
            let b = words(m, m as u64 + 7);
            assert_eq!(mul(&a, &b), &a * &b, "{n} x {m} words");
            assert_eq!(mul(&-&a, &b), -(&a * &b));
            assert_eq!(mul(&a, &a), &a * &a);
        }
    }

    #[test]
    fn ntt_handles_largest_coefficients() {
        // All-ones words make every convolution coefficient as large as it can be.
        let ones = (BigInt::from(1) << (64 * 3000)) - 1;
        assert_eq!(mul(&ones, &ones), &ones * &ones);
    }

    #[test]
    fn ntt_with_zero_words_and_small_operands() {
        let a = words(2500, 3);
        let p2 = BigInt::from(1) << (64 * 2000 + 5);
        assert_eq!(mul(&p2, &a), &a << (64 * 2000 + 5));
        assert_eq!(mul(&a, &(&p2 + 1)), &a * (&p2 + 1));
        assert_eq!(mul(&a, &BigInt::from(-3)), &a * -3);
        assert_eq!(mul(&a, &BigInt::from(0)), BigInt::from(0));
    }

    #[test]
    fn pow_matches_num_bigint() {
        use num_traits::Pow;
        assert_eq!(pow(&BigInt::from(3), 200_000), Pow::pow(BigInt::from(3), 200_000u32));
        assert_eq!(pow(&BigInt::from(-7), 30_001), Pow::pow(BigInt::from(-7), 30_001u32));
        assert_eq!(pow(&BigInt::from(12345), 0), BigInt::from(1));
    }
}
