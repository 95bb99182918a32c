//! The number-theoretic transform on eight points at a time, with AVX-512's 52-bit
//! multiply-adds (IFMA), for CPUs that have them.
//!
//! The primes are three of the form c * 2^32 + 1 just below 2^50 (their product is above
//! 2^149.99), so whole 64-bit words are the pieces of a product of up to 2^21 words per
//! operand: each coefficient of the convolution is below min(pieces) * 2^128 < 2^149.
//! A butterfly of eight points costs a few vector instructions where the 62-bit primes of
//! the parent module need about a dozen scalar ones per point.
//!
//! Invariants of the arithmetic modulo p:
//! - Values are kept in [0, 2p) between butterflies; 4p < 2^52, so a sum of two of them
//!   (or u + 2p - v) is a valid 52-bit multiplier input.
//! - A multiplication by a fixed w < p uses Shoup's quotient ws = floor(w 2^52 / p):
//!   q = hi52(x ws), r = (x w - q p) mod 2^52, exact in [0, 2p) for every x < 2^52.
//! - Pointwise products are Montgomery's with R = 2^52 (x y / R, in [0, 2p) for x, y < 2p);
//!   the final scaling by n^-1 R takes R out and reduces to [0, p).
//! - Forward transforms are decimation in frequency (natural order in, bit-reversed out),
//!   inverse ones decimation in time (bit-reversed in, natural out). Butterflies at distance
//!   eight or more pair two vectors; the three layers at distances 4, 2 and 1 permute the
//!   lanes of two vectors into first and second points and back (`SmallLayer`).
//! - Twiddle tables depend only on the prime and the level: those of levels below
//!   CACHED_LEVELS are computed once per process and then only read (`OnceLock`).

use std::borrow::Cow;
use std::sync::OnceLock;

use std::arch::x86_64::*;

const MASK52: u64 = (1 << 52) - 1;

use super::{mul_shoup64, pow_mod, CACHED_LEVELS};

pub(super) struct Prime52 {
    p: u64,
    /// An element of order exactly 2^32.
    root: u64,
}

/// Three primes c * 2^32 + 1 in (2^49.99, 2^50), with elements of order 2^32.
pub(super) const PRIMES: [Prime52; 3] = [
    Prime52 { p: 0x3_fff3_0000_0001, root: 0x2_cade_c07d_ee3b },
    Prime52 { p: 0x3_ffed_0000_0001, root: 0x8647_9089_c323 },
    Prime52 { p: 0x3_ffeb_0000_0001, root: 0x3_7cbd_9d30_34ce },
];

/// Whether this CPU runs the vector transform.
pub(super) fn available() -> bool {
    is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512ifma")
}

impl Prime52 {
    /// a * b mod p, by division (tables and constants only).
    const fn mul_mod(&self, a: u64, b: u64) -> u64 {
        ((a as u128 * b as u128) % self.p as u128) as u64
    }

    const fn inv(&self, a: u64) -> u64 {
        super::modinv(a, self.p)
    }

    /// 2^-k mod p for k <= 32: 2^k (p - (p - 1) / 2^k) = 2^k p - (p - 1), which is 1 mod p.
    const fn inv_pow2(&self, k: u32) -> u64 {
        self.p - ((self.p - 1) >> k)
    }

    /// floor(w 2^52 / p), Shoup's quotient for a multiplier w < p.
    const fn shoup(&self, w: u64) -> u64 {
        (((w as u128) << 52) / self.p as u128) as u64
    }

    /// -p^-1 mod 2^52 (Montgomery's constant).
    const fn neg_pinv(&self) -> u64 {
        super::inverse_mod_2_64(self.p).wrapping_neg() & MASK52
    }

    /// The twiddles of the layer with butterflies at distance 2^level: w^j for j < 2^level,
    /// w of order 2^(level + 1) (or its inverse), with their Shoup quotients.
    fn segment(&self, level: usize, inverse: bool) -> Segment {
        let len = 1usize << level;
        let mut w = pow_mod(self.root, 1 << (31 - level), self.p);
        if inverse {
            w = self.inv(w);
        }
        let mut powers = Vec::with_capacity(len);
        let mut x = 1;
        for _ in 0..len {
            powers.push(x);
            x = self.mul_mod(x, w);
        }
        let quotients = powers.iter().map(|&w| self.shoup(w)).collect();
        Segment { w: powers, ws: quotients }
    }
}

#[derive(Clone)]
struct Segment {
    w: Vec<u64>,
    ws: Vec<u64>,
}

static SEGMENTS: [[[OnceLock<Segment>; CACHED_LEVELS]; 2]; 3] =
    [const { [const { [const { OnceLock::new() }; CACHED_LEVELS] }; 2] }; 3];

fn segment(prime: usize, level: usize, inverse: bool) -> Cow<'static, Segment> {
    let p = &PRIMES[prime];
    if level < CACHED_LEVELS {
        Cow::Borrowed(SEGMENTS[prime][inverse as usize][level].get_or_init(|| p.segment(level, inverse)))
    } else {
        Cow::Owned(p.segment(level, inverse))
    }
}

/// The eight-lane operations. Every function requires AVX-512F and IFMA (`available()`).
mod vector {
    use std::arch::x86_64::*;

    /// x w mod p in [0, 2p) for x < 2^52, w < p, ws = shoup(w); negp = 2^52 - p.
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub fn mul_shoup(x: __m512i, w: __m512i, ws: __m512i, negp: __m512i, mask: __m512i) -> __m512i {
        let z = _mm512_setzero_si512();
        let q = _mm512_madd52hi_epu64(z, x, ws);
        let xw = _mm512_madd52lo_epu64(z, x, w);
        _mm512_and_si512(_mm512_madd52lo_epu64(xw, q, negp), mask)
    }

    /// [0, 4p) to [0, 2p) (p2 = 2p).
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn reduce(x: __m512i, p2: __m512i) -> __m512i {
        _mm512_min_epu64(x, _mm512_sub_epi64(x, p2))
    }

    /// x y / 2^52 mod p in [0, 2p) for x, y < 2p (Montgomery).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    pub fn mul_mont(x: __m512i, y: __m512i, p: __m512i, neg_pinv: __m512i) -> __m512i {
        let z = _mm512_setzero_si512();
        let lo = _mm512_madd52lo_epu64(z, x, y);
        let hi = _mm512_madd52hi_epu64(z, x, y);
        let m = _mm512_madd52lo_epu64(z, lo, neg_pinv);
        // lo + lo52(m p) is a multiple of 2^52 below 2^53: its top bit is the carry.
        let carry = _mm512_srli_epi64::<52>(_mm512_madd52lo_epu64(lo, m, p));
        _mm512_madd52hi_epu64(_mm512_add_epi64(hi, carry), m, p)
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn load(s: &[u64]) -> __m512i {
        assert!(s.len() >= 8);
        // SAFETY: the slice holds at least eight u64s; unaligned loads are allowed.
        unsafe { _mm512_loadu_si512(s.as_ptr().cast()) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn store(s: &mut [u64], v: __m512i) {
        assert!(s.len() >= 8);
        // SAFETY: the slice holds at least eight u64s; unaligned stores are allowed.
        unsafe { _mm512_storeu_si512(s.as_mut_ptr().cast(), v) }
    }
}

/// The constant vectors of the arithmetic modulo one prime p (the 52-bit mask, 2^52 - p
/// and 2p), and the butterflies built on them.
#[derive(Clone, Copy)]
struct Lanes {
    mask: __m512i,
    negp: __m512i,
    p2: __m512i,
}

impl Lanes {
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn new(p: u64) -> Lanes {
        Lanes { mask: _mm512_set1_epi64(MASK52 as i64), negp: _mm512_set1_epi64((MASK52 + 1 - p) as i64), p2: _mm512_set1_epi64(2 * p as i64) }
    }

    /// x w mod p in [0, 2p) for x < 2^52, w < p, ws = shoup(w).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn mul(&self, x: __m512i, w: __m512i, ws: __m512i) -> __m512i {
        vector::mul_shoup(x, w, ws, self.negp, self.mask)
    }

    /// The sum and the difference of u and v (both in [0, 2p)), in [0, 2p).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn sum_difference(&self, u: __m512i, v: __m512i) -> (__m512i, __m512i) {
        let p2 = self.p2;
        (vector::reduce(_mm512_add_epi64(u, v), p2), vector::reduce(_mm512_sub_epi64(_mm512_add_epi64(u, p2), v), p2))
    }

    /// The forward butterfly: u + v, and (u - v) w with its twiddle w, in [0, 2p).
    #[inline]
    #[target_feature(enable = "avx512f,avx512ifma")]
    fn forward(&self, u: __m512i, v: __m512i, w: __m512i, ws: __m512i) -> (__m512i, __m512i) {
        (vector::reduce(_mm512_add_epi64(u, v), self.p2), self.mul(_mm512_sub_epi64(_mm512_add_epi64(u, self.p2), v), w, ws))
    }
}

/// Runs the transform `f` modulo prime `i` on `a`, whose length is a power of two of at
/// least 16 (two vectors, what the small layers take at a time).
fn on_vectors(i: usize, a: &mut [u64], f: unsafe fn(usize, &mut [u64])) {
    assert!(available() && a.len() >= 16 && a.len().is_power_of_two());
    // SAFETY: the CPU has AVX-512F and IFMA (checked above), all that `f` requires.
    unsafe { f(i, a) }
}

/// Words (any 64-bit values) to their forward transform modulo prime `i`, in [0, 2p).
pub(super) fn transform(i: usize, a: &mut [u64]) {
    on_vectors(i, a, transform_avx)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn transform_avx(i: usize, a: &mut [u64]) {
    let pr = &PRIMES[i];
    let lanes = Lanes::new(pr.p);
    // x = hi 2^52 + lo with hi < 2^12: x mod p = lo * 1 + hi * (2^52 mod p), each in [0, 2p).
    let two52 = (1u64 << 52) % pr.p;
    let (one, one_s) = (_mm512_set1_epi64(1), _mm512_set1_epi64(pr.shoup(1) as i64));
    let (c, c_s) = (_mm512_set1_epi64(two52 as i64), _mm512_set1_epi64(pr.shoup(two52) as i64));
    for chunk in a.chunks_exact_mut(8) {
        let x = vector::load(chunk);
        let lo = lanes.mul(_mm512_and_si512(x, lanes.mask), one, one_s);
        let hi = lanes.mul(_mm512_srli_epi64::<52>(x), c, c_s);
        vector::store(chunk, vector::reduce(_mm512_add_epi64(lo, hi), lanes.p2));
    }
    let n = a.len();
    let mut len = n / 2;
    while len >= 8 {
        let tw = segment(i, len.trailing_zeros() as usize, false);
        for block in a.chunks_exact_mut(2 * len) {
            let (lo, hi) = block.split_at_mut(len);
            for j in (0..len).step_by(8) {
                let (u, v) = (vector::load(&lo[j..]), vector::load(&hi[j..]));
                let (w, ws) = (vector::load(&tw.w[j..]), vector::load(&tw.ws[j..]));
                let (l, h) = lanes.forward(u, v, w, ws);
                vector::store(&mut lo[j..], l);
                vector::store(&mut hi[j..], h);
            }
        }
        len /= 2;
    }
    // The layers at distances 4, 2 and 1, sixteen points (two vectors) at a time.
    let layers = [4, 2].map(|d| SmallLayer::new(i, d, false));
    let last = SmallLayer::new(i, 1, false);
    for chunk in a.chunks_exact_mut(16) {
        let (mut x, mut y) = (vector::load(chunk), vector::load(&chunk[8..]));
        for layer in &layers {
            let (u, v) = layer.split(x, y);
            let (l, h) = lanes.forward(u, v, layer.w, layer.ws);
            (x, y) = layer.merge(l, h);
        }
        // At distance 1 the twiddle is 1: the sum and the difference.
        let (u, v) = last.split(x, y);
        let (l, h) = lanes.sum_difference(u, v);
        (x, y) = last.merge(l, h);
        vector::store(chunk, x);
        vector::store(&mut chunk[8..], y);
    }
}

/// A layer of butterflies at distance d < 8 on sixteen points held in two vectors: the
/// permutations that gather the first and the second point of each pair into a vector
/// each, the inverse permutations, and the twiddles of the pairs' lanes.
struct SmallLayer {
    first: __m512i,
    second: __m512i,
    merge_lo: __m512i,
    merge_hi: __m512i,
    w: __m512i,
    ws: __m512i,
}

impl SmallLayer {
    #[target_feature(enable = "avx512f")]
    fn new(prime: usize, d: usize, inverse: bool) -> SmallLayer {
        let tw = segment(prime, d.trailing_zeros() as usize, inverse);
        let (mut first, mut second) = ([0u64; 8], [0u64; 8]);
        let (mut merged, mut w, mut ws) = ([0u64; 16], [0u64; 8], [0u64; 8]);
        let (mut f, mut s) = (0, 0);
        for e in 0..16 {
            if e & d == 0 {
                // Lane f of the first points; its partner is lane f of the second ones.
                first[f] = e as u64;
                merged[e] = f as u64;
                w[f] = tw.w[e % d];
                ws[f] = tw.ws[e % d];
                f += 1;
            } else {
                second[s] = e as u64;
                merged[e] = 8 + s as u64;
                s += 1;
            }
        }
        let v = |x: &[u64]| vector::load(x);
        SmallLayer { first: v(&first), second: v(&second), merge_lo: v(&merged[..8]), merge_hi: v(&merged[8..]), w: v(&w), ws: v(&ws) }
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn split(&self, x: __m512i, y: __m512i) -> (__m512i, __m512i) {
        (_mm512_permutex2var_epi64(x, self.first, y), _mm512_permutex2var_epi64(x, self.second, y))
    }

    #[inline]
    #[target_feature(enable = "avx512f")]
    fn merge(&self, lo: __m512i, hi: __m512i) -> (__m512i, __m512i) {
        (_mm512_permutex2var_epi64(lo, self.merge_lo, hi), _mm512_permutex2var_epi64(lo, self.merge_hi, hi))
    }
}


/// fa[k] = fa[k] fb[k] / 2^52 mod p (fb = None: fa[k]^2 / 2^52), in [0, 2p).
pub(super) fn pointwise(i: usize, fa: &mut [u64], fb: Option<&[u64]>) {
    assert!(available() && fa.len() % 8 == 0 && fb.is_none_or(|fb| fb.len() == fa.len()));
    // SAFETY: the CPU has AVX-512F and IFMA (checked above).
    unsafe { pointwise_avx(i, fa, fb) }
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn pointwise_avx(i: usize, fa: &mut [u64], fb: Option<&[u64]>) {
    let pr = &PRIMES[i];
    let (p, neg_pinv) = (_mm512_set1_epi64(pr.p as i64), _mm512_set1_epi64(pr.neg_pinv() as i64));
    for k in (0..fa.len()).step_by(8) {
        let x = vector::load(&fa[k..]);
        let y = match fb {
            Some(fb) => vector::load(&fb[k..]),
            None => x,
        };
        vector::store(&mut fa[k..], vector::mul_mont(x, y, p, neg_pinv));
    }
}

/// The inverse transform of pointwise products: the cyclic convolution modulo p, in
/// [0, p).
pub(super) fn finish(i: usize, a: &mut [u64]) {
    on_vectors(i, a, finish_avx)
}

#[target_feature(enable = "avx512f,avx512ifma")]
fn finish_avx(i: usize, a: &mut [u64]) {
    let pr = &PRIMES[i];
    let p = pr.p;
    let n = a.len();
    let lanes = Lanes::new(p);
    // The layers at distances 1, 2 and 4, sixteen points (two vectors) at a time.
    let first = SmallLayer::new(i, 1, true);
    let layers = [2, 4].map(|d| SmallLayer::new(i, d, true));
    for chunk in a.chunks_exact_mut(16) {
        let (mut x, mut y) = (vector::load(chunk), vector::load(&chunk[8..]));
        // At distance 1 the twiddle is 1.
        let (u, v) = first.split(x, y);
        let (l, h) = lanes.sum_difference(u, v);
        (x, y) = first.merge(l, h);
        for layer in &layers {
            let (u, v) = layer.split(x, y);
            let (l, h) = lanes.sum_difference(u, lanes.mul(v, layer.w, layer.ws));
            (x, y) = layer.merge(l, h);
        }
        vector::store(chunk, x);
        vector::store(&mut chunk[8..], y);
    }
    let mut len: usize = 8;
    while len < n {
        let tw = segment(i, len.trailing_zeros() as usize, true);
        for block in a.chunks_exact_mut(2 * len) {
            let (lo, hi) = block.split_at_mut(len);
            for j in (0..len).step_by(8) {
                let (w, ws) = (vector::load(&tw.w[j..]), vector::load(&tw.ws[j..]));
                let (l, h) = lanes.sum_difference(vector::load(&lo[j..]), lanes.mul(vector::load(&hi[j..]), w, ws));
                vector::store(&mut lo[j..], l);
                vector::store(&mut hi[j..], h);
            }
        }
        len *= 2;
    }
    // The pointwise products left a factor 2^-52: scale by n^-1 2^52, then reduce to [0, p).
    let s = pr.mul_mod(pr.inv_pow2(n.trailing_zeros()), (1u64 << 52) % p);
    let (s, s_s, pv) = (_mm512_set1_epi64(s as i64), _mm512_set1_epi64(pr.shoup(s) as i64), _mm512_set1_epi64(p as i64));
    for chunk in a.chunks_exact_mut(8) {
        let y = lanes.mul(vector::load(chunk), s, s_s);
        vector::store(chunk, _mm512_min_epu64(y, _mm512_sub_epi64(y, pv)));
    }
}

/// x * w mod p in [0, p) for any 64-bit x and w < p, with ws = floor(w 2^64 / p): the
/// scalar reconstruction's multiplications by constants.
#[inline(always)]
fn mul_const(x: u64, w: u64, ws: u64, p: u64) -> u64 {
    let r = mul_shoup64(x, w, ws, p);
    if r >= p { r - p } else { r }
}

/// Garner's constants for the three primes, each with its 64-bit Shoup quotient.
struct Garner {
    /// p1^-1 mod p2.
    inv12: (u64, u64),
    /// p1 mod p3.
    p1_3: (u64, u64),
    /// (p1 p2)^-1 mod p3.
    inv123: (u64, u64),
}

const GARNER: Garner = {
    const fn with_quotient(w: u64, p: u64) -> (u64, u64) {
        (w, (((w as u128) << 64) / p as u128) as u64)
    }
    let (p1, p2, p3) = (&PRIMES[0], &PRIMES[1], &PRIMES[2]);
    let p1p2_3 = ((p1.p as u128 * p2.p as u128) % p3.p as u128) as u64;
    Garner {
        inv12: with_quotient(p2.inv(p1.p), p2.p),
        p1_3: with_quotient(p1.p % p3.p, p3.p),
        inv123: with_quotient(p3.inv(p1p2_3), p3.p),
    }
};

/// The product from its coefficients modulo the three primes (in [0, p)), whole words as
/// pieces, in `out_len` words.
pub(super) fn recompose(r1: &[u64], r2: &[u64], r3: &[u64], out_len: usize) -> Vec<u64> {
    let [p1, p2, p3] = &PRIMES;
    let Garner { inv12: (inv12, inv12_s), p1_3: (p1_3, p1_3_s), inv123: (inv123, inv123_s) } = GARNER;
    let p1p2 = p1.p as u128 * p2.p as u128;
    super::sum_garner3(r1.len(), p1p2, out_len, |i| {
        let (x1, x2, x3) = (r1[i], r2[i], r3[i]);
        // The primes are within a factor 2 of each other: one subtraction reduces x1 < p1.
        let x1_2 = if x1 >= p2.p { x1 - p2.p } else { x1 };
        let x1_3 = if x1 >= p3.p { x1 - p3.p } else { x1 };
        let d2 = if x2 >= x1_2 { x2 - x1_2 } else { x2 + p2.p - x1_2 };
        let v2 = mul_const(d2, inv12, inv12_s, p2.p);
        let t = x1_3 + mul_const(v2, p1_3, p1_3_s, p3.p);
        let t = if t >= p3.p { t - p3.p } else { t };
        let d3 = if x3 >= t { x3 - t } else { x3 + p3.p - t };
        let v3 = mul_const(d3, inv123, inv123_s, p3.p);
        (x1 as u128 + v2 as u128 * p1.p as u128, v3)
    })
}
