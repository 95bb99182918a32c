//! Multiplication of large Integers by number-theoretic transform (NTT).
//!
//! num-bigint multiplies with Karatsuba and Toom-3 only; from about 400 64-bit words per
//! operand a convolution by NTT is faster. The magnitudes are cut into pieces of `bits` bits
//! (the coefficients of two polynomials in 2^bits), their cyclic convolution is computed
//! modulo two or three primes p in (2^61, 2^62) of the form c * 2^32 + 1, put back together
//! by the Chinese remainder theorem (Garner), and the coefficients are added up with carries.
//! Each coefficient is below min(pieces) * 2^(2 bits): with three primes (product ~2^186)
//! the pieces are whole 64-bit words; with two (~2^124) they are as wide as the bound allows
//! (about 55 bits at 10,000 pieces), which needs a third fewer transforms when the padded
//! length stays the same. `plan` picks the cheaper of the two.
//!
//! A cyclic convolution of n pieces of `bits` bits, with n bits a multiple of 64, is also the
//! product modulo B^N - 1 (B = 2^64, N = n bits / 64): the wrap-around is the reduction.
//! Division by a fixed divisor needs only such a product for its remainder (half the
//! transform length), and a `FixedOperand` keeps the transforms of a number that many
//! others are multiplied by, so each product transforms only the other operand.
//!
//! The transforms are radix 4 (two layers per pass over the data), with one radix-2 layer
//! when the number of layers is odd.
//!
//! On CPUs with AVX-512's 52-bit multiply-adds, products use `ifma` instead: three primes
//! below 2^50, whole words as pieces, eight points per instruction (a `Plan` says which).
//! The scalar primes below stay the fallback elsewhere and are tested beside `ifma`'s.
//!
//! Invariants of the arithmetic modulo p:
//! - Twiddle factors are plain residues with Shoup's precomputed quotient, so multiplying by
//!   one costs two high/low products and lands in [0, 2p) (`mul_shoup`).
//! - Forward transforms (decimation in frequency: natural order in, bit-reversed out) keep
//!   values in [0, 2p); inverse ones (decimation in time: bit-reversed in, natural out)
//!   take [0, 2p) to [0, 4p). Harvey's lazy butterflies; 4p < 2^64 since p < 2^62, so a
//!   sum of two values below 2p never overflows, and each sum of more is reduced first.
//! - Pointwise products are Montgomery's (R = 2^64, `mul`): x * y / R, exact in [0, p); the
//!   final scaling by n^-1 * R takes that R out and reduces to [0, p).
//! - Twiddle tables depend only on the prime and the transform length: those of lengths up
//!   to 2^CACHED_LEVELS are computed once per process and then only read (`OnceLock`).

use std::borrow::Cow;
use std::sync::OnceLock;

use num_bigint::{BigInt, BigUint, Sign};

#[cfg(target_arch = "x86_64")]
mod ifma;

/// Whether products use the eight-lane transform (`ifma`) on this CPU.
fn ifma_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        ifma::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Both operands at least this many words: below it num-bigint's Toom-3 is faster (measured
/// crossover 400-500 words).
const NTT_MIN_WORDS: usize = 400;

/// The same with `ifma`'s transform (measured: 200 x 200 words 15.5 us against Toom-3's
/// 19.1, 160 x 160 15.7 against 12.8, where the transform length doubles).
const IFMA_MIN_WORDS: usize = 192;

/// Both operands at least this many words: products by NTT.
fn ntt_min_words(ifma: bool) -> usize {
    if ifma { IFMA_MIN_WORDS } else { NTT_MIN_WORDS }
}

/// Largest transform: 2^22 points (the transform then needs ~100 MB); larger products use
/// num-bigint.
const MAX_LOG: u32 = 22;

/// Twiddle segments of levels below this are cached (at most 2^CACHED_LEVELS * 32 bytes per
/// prime), here and in `ifma`.
const CACHED_LEVELS: usize = 17;

struct Prime {
    p: u64,
    /// p^-1 mod 2^64.
    pinv: u64,
    /// R^2 mod p (converts x to x * R).
    r2: u64,
    /// A generator of the multiplicative group.
    g: u64,
}

/// p^-1 mod 2^64 for an odd p, by Newton's iteration (each step doubles the correct bits).
const fn inverse_mod_2_64(p: u64) -> u64 {
    let mut inv: u64 = 1;
    let mut i = 0;
    while i < 7 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(p.wrapping_mul(inv)));
        i += 1;
    }
    inv
}

const fn prime(p: u64, g: u64) -> Prime {
    let r = ((1u128 << 64) % p as u128) as u64;
    let r2 = ((r as u128 * r as u128) % p as u128) as u64;
    Prime { p, pinv: inverse_mod_2_64(p), r2, g }
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
        mul_shoup64(x, w, ws, self.p)
    }

    /// Twiddle factors for the butterflies at distance 2^level, each with its Shoup quotient:
    /// x^j for j < 2^level (kind 0), or x^(3j) for j < 2^(level-1) (kind 2, for the radix-4
    /// steps), where x = w, a root of unity of order 2^(level+1), or x = w^-1 (kinds 1, 3).
    fn twiddle_segment(&self, level: usize, kind: usize) -> Vec<(u64, u64)> {
        let len = 1usize << level;
        let order = 2 * len as u64;
        let mut w = self.mul(self.pow(self.to_mont(self.g), (self.p - 1) / order), 1);
        if kind & 1 == 1 {
            // w^-1 = w^(order - 1).
            w = self.mul(self.pow(self.to_mont(w), order - 1), 1);
        }
        let count = if kind & 2 == 2 {
            w = self.mul(self.pow(self.to_mont(w), 3), 1);
            len / 2
        } else {
            len
        };
        let ws = self.shoup(w);
        let mut seg = Vec::with_capacity(count);
        let mut x = 1u64;
        for _ in 0..count {
            seg.push((x, self.shoup(x)));
            let y = self.mul_shoup(x, w, ws);
            x = if y >= self.p { y - self.p } else { y };
        }
        seg
    }

    /// x mod 2p for x < 4p.
    #[inline(always)]
    fn reduce_2p(&self, x: u64) -> u64 {
        let p2 = 2 * self.p;
        if x >= p2 {
            x - p2
        } else {
            x
        }
    }

    /// Decimation in frequency, two layers at a time (radix 4) and one radix-2 layer first
    /// when the number of layers is odd; values in [0, 2p) stay in [0, 2p) (Harvey's lazy
    /// butterflies).
    fn forward(&self, a: &mut [u64], tw: &Twiddles) {
        let n = a.len();
        let p2 = 2 * self.p;
        let mut len = n / 2;
        if n.trailing_zeros() % 2 == 1 {
            let tw = &tw.fw[len.trailing_zeros() as usize][..];
            for block in a.chunks_exact_mut(2 * len) {
                let (lo, hi) = block.split_at_mut(len);
                for ((l, h), &(wj, wsj)) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let (u, v) = (*l, *h);
                    *l = self.reduce_2p(u + v);
                    *h = self.mul_shoup(u + p2 - v, wj, wsj);
                }
            }
            len /= 2;
        }
        if n < 4 {
            return;
        }
        // The fourth root of unity w_4 (w^L for w of order 4L).
        let (i4, i4s) = tw.fw[1][1];
        while len >= 2 {
            let l = len / 2;
            let (t1, t2, t3) = tw.radix4(false, len);
            for block in a.chunks_exact_mut(4 * l) {
                let [b0, b1, b2, b3] = quarters(block, l);
                for j in 0..l {
                    let (a0, a1, a2, a3) = (b0[j], b1[j], b2[j], b3[j]);
                    let t0 = self.reduce_2p(a0 + a2);
                    let s1 = self.reduce_2p(a1 + a3);
                    let d2 = self.reduce_2p(a0 + p2 - a2);
                    let d3 = self.mul_shoup(a1 + p2 - a3, i4, i4s);
                    b0[j] = self.reduce_2p(t0 + s1);
                    b1[j] = self.mul_shoup(t0 + p2 - s1, t2[j].0, t2[j].1);
                    b2[j] = self.mul_shoup(d2 + d3, t1[j].0, t1[j].1);
                    b3[j] = self.mul_shoup(d2 + p2 - d3, t3[j].0, t3[j].1);
                }
            }
            len /= 4;
        }
    }

    /// Decimation in time, the mirror of `forward`: radix-4 steps, then one radix-2 layer
    /// when the number of layers is odd; inputs in [0, 2p), outputs in [0, 4p).
    fn inverse(&self, a: &mut [u64], tw: &Twiddles) {
        let n = a.len();
        let p2 = 2 * self.p;
        let mut len = 2;
        if n >= 4 {
            // The inverse fourth root of unity.
            let (i4, i4s) = tw.inv[1][1];
            while 2 * len <= n {
                let l = len / 2;
                let (t1, t2, t3) = tw.radix4(true, len);
                for block in a.chunks_exact_mut(4 * l) {
                    let [b0, b1, b2, b3] = quarters(block, l);
                    for j in 0..l {
                        let a0 = self.reduce_2p(b0[j]);
                        let c1 = self.mul_shoup(b1[j], t2[j].0, t2[j].1);
                        let c2 = self.mul_shoup(b2[j], t1[j].0, t1[j].1);
                        let c3 = self.mul_shoup(b3[j], t3[j].0, t3[j].1);
                        let s = self.reduce_2p(a0 + c1);
                        let d = self.reduce_2p(a0 + p2 - c1);
                        let e = self.reduce_2p(c2 + c3);
                        let f = self.mul_shoup(c2 + p2 - c3, i4, i4s);
                        b0[j] = s + e;
                        b2[j] = s + p2 - e;
                        b1[j] = d + f;
                        b3[j] = d + p2 - f;
                    }
                }
                len *= 4;
            }
        }
        let len = len / 2;
        if len < n {
            let tw = &tw.inv[len.trailing_zeros() as usize][..];
            for block in a.chunks_exact_mut(2 * len) {
                let (lo, hi) = block.split_at_mut(len);
                for ((l, h), &(wj, wsj)) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let u = self.reduce_2p(*l);
                    let v = self.mul_shoup(*h, wj, wsj);
                    *l = u + v;
                    *h = u + p2 - v;
                }
            }
        }
    }

    /// Brings pieces of `bits` bits into [0, 2p), the forward transform's input range.
    fn reduce_input(&self, a: &mut [u64], bits: usize) {
        if bits > 62 {
            let one_s = self.shoup(1);
            for x in a.iter_mut() {
                *x = self.mul_shoup(*x, 1, one_s);
            }
        }
    }

    /// Pieces of `bits` bits to their forward transform (values in [0, 2p)).
    fn transform(&self, a: &mut [u64], tw: &Twiddles, bits: usize) {
        self.reduce_input(a, bits);
        self.forward(a, tw);
    }

    /// Pointwise product of two forward transforms, left in `fa` (Montgomery: times R^-1).
    fn pointwise(&self, fa: &mut [u64], fb: &[u64]) {
        for (x, &y) in fa.iter_mut().zip(fb) {
            *x = self.mul(*x, y);
        }
    }

    /// The inverse transform of pointwise products: the cyclic convolution modulo p, in
    /// plain form in [0, p).
    fn finish(&self, fa: &mut [u64], tw: &Twiddles) {
        let n = fa.len();
        self.inverse(fa, tw);
        // Pointwise Montgomery products left a factor R^-1: scale by n^-1 * R.
        let n_inv = self.mul(modinv(n as u64 % self.p, self.p), self.r2);
        let n_inv = self.mul(self.mul(n_inv, self.r2), 1);
        let n_inv_s = self.shoup(n_inv);
        for x in fa.iter_mut() {
            let y = self.mul_shoup(*x, n_inv, n_inv_s);
            *x = if y >= self.p { y - self.p } else { y };
        }
    }
}

/// Twiddle segments of one prime for one transform length, indexed by level (log2 of the
/// butterfly distance).
struct Twiddles {
    fw: Vec<Cow<'static, [(u64, u64)]>>,
    inv: Vec<Cow<'static, [(u64, u64)]>>,
    fw3: Vec<Cow<'static, [(u64, u64)]>>,
    inv3: Vec<Cow<'static, [(u64, u64)]>>,
}

type TwiddleSegment<'a> = &'a [(u64, u64)];

impl Twiddles {
    /// The twiddles of a radix-4 step whose first layer has butterflies at distance `len`
    /// (w of order 2 len): w^j, w^(2j), w^(3j) for j < len / 2, or their inverses.
    fn radix4(&self, inverse: bool, len: usize) -> (TwiddleSegment<'_>, TwiddleSegment<'_>, TwiddleSegment<'_>) {
        let (one, three) = if inverse { (&self.inv, &self.inv3) } else { (&self.fw, &self.fw3) };
        let (l, level) = (len / 2, len.trailing_zeros() as usize);
        (&one[level][..l], &one[level - 1][..l], &three[level][..l])
    }
}

/// A block of 4 l values as its four quarters.
fn quarters(block: &mut [u64], l: usize) -> [&mut [u64]; 4] {
    let (b01, b23) = block.split_at_mut(2 * l);
    let (b0, b1) = b01.split_at_mut(l);
    let (b2, b3) = b23.split_at_mut(l);
    [b0, b1, b2, b3]
}

static TWIDDLE_CACHE: [[[OnceLock<Vec<(u64, u64)>>; CACHED_LEVELS]; 4]; 3] =
    [const { [const { [const { OnceLock::new() }; CACHED_LEVELS] }; 4] }; 3];

fn twiddles(prime: usize, n: usize) -> Twiddles {
    let levels = n.trailing_zeros() as usize;
    let p = &PRIMES[prime];
    let seg = |level: usize, kind: usize| -> Cow<'static, [(u64, u64)]> {
        if level < CACHED_LEVELS {
            Cow::Borrowed(&TWIDDLE_CACHE[prime][kind][level].get_or_init(|| p.twiddle_segment(level, kind))[..])
        } else {
            Cow::Owned(p.twiddle_segment(level, kind))
        }
    };
    let kind = |k: usize| (0..levels).map(|l| seg(l, k)).collect();
    Twiddles { fw: kind(0), inv: kind(1), fw3: kind(2), inv3: kind(3) }
}

/// How a product is computed: number of primes, bits per piece, transform length, and
/// whether the primes are `ifma`'s (three of them, 64-bit pieces) or this module's.
#[derive(Clone, Copy, Debug)]
struct Plan {
    primes: usize,
    bits: usize,
    n: usize,
    ifma: bool,
}

impl Plan {
    /// `ifma`'s plan for a product of `words` words (whole words as pieces).
    fn ifma(words: usize) -> Plan {
        Plan { primes: 3, bits: 64, n: words.next_power_of_two().max(64), ifma: true }
    }

    /// The pieces' forward transform modulo prime `i`.
    fn transform(&self, i: usize, a: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.ifma {
            return ifma::transform(i, a);
        }
        PRIMES[i].transform(a, &twiddles(i, self.n), self.bits)
    }

    /// fa * fb pointwise modulo prime `i` (fb = None: fa squared), left in `fa`.
    fn pointwise(&self, i: usize, fa: &mut [u64], fb: Option<&[u64]>) {
        #[cfg(target_arch = "x86_64")]
        if self.ifma {
            return ifma::pointwise(i, fa, fb);
        }
        let prime = &PRIMES[i];
        match fb {
            Some(fb) => prime.pointwise(fa, fb),
            None => fa.iter_mut().for_each(|x| *x = prime.mul(*x, *x)),
        }
    }

    /// The cyclic convolution modulo prime `i` from pointwise products, in [0, p).
    fn finish(&self, i: usize, fa: &mut [u64]) {
        #[cfg(target_arch = "x86_64")]
        if self.ifma {
            return ifma::finish(i, fa);
        }
        PRIMES[i].finish(fa, &twiddles(i, self.n))
    }
}

fn pieces(words: usize, bits: usize) -> usize {
    (words * 64).div_ceil(bits)
}

/// Two-prime pieces: the widest (at most 61 bits) for which coefficients stay below
/// min(pieces) * 2^(2 bits) <= 2^123 < p1 * p2.
fn two_prime_bits(min_words: usize) -> usize {
    (40..=61).rev().find(|&bits| 2 * bits + (usize::BITS - pieces(min_words, bits).leading_zeros()) as usize <= 123).unwrap_or(40)
}

fn cost(p: &Plan, square: bool) -> usize {
    let transforms = if square { 2 } else { 3 };
    p.primes * transforms * p.n * (p.n.trailing_zeros() as usize + 1)
}

/// The cheaper way to multiply operands of `la` and `lb` words (`None` if too large), with
/// `ifma`'s primes or this module's.
fn plan(la: usize, lb: usize, square: bool, ifma: bool) -> Option<Plan> {
    let best = if ifma {
        Plan::ifma(la + lb)
    } else {
        let three = Plan { primes: 3, bits: 64, n: (la + lb).next_power_of_two(), ifma: false };
        let bits = two_prime_bits(la.min(lb));
        let two = Plan { primes: 2, bits, n: (pieces(la, bits) + pieces(lb, bits)).next_power_of_two(), ifma: false };
        if cost(&two, square) <= cost(&three, square) { two } else { three }
    };
    (best.n.trailing_zeros() <= MAX_LOG).then_some(best)
}

/// The cheaper way to multiply operands of `la` and `lb` words modulo B^N - 1 for some
/// N >= `words` (B = 2^64) by a cyclic convolution of length n: N = n bits / 64 exactly, so
/// the wrap-around of the convolution is the reduction modulo B^N - 1.
fn cyclic_plan(la: usize, lb: usize, words: usize, square: bool, ifma: bool) -> Option<Plan> {
    if ifma {
        let plan = Plan::ifma(words);
        return (plan.n.trailing_zeros() <= MAX_LOG).then_some(plan);
    }
    let three = Plan { primes: 3, bits: 64, n: words.next_power_of_two().max(64), ifma: false };
    let max_bits = two_prime_bits(la.min(lb));
    // The smallest length at which pieces of at most max_bits bits cover `words` words.
    let mut n = (pieces(words, max_bits)).next_power_of_two().max(64);
    let bits = loop {
        let bits = (64 * words).div_ceil(n).max(1);
        if bits <= max_bits {
            break bits;
        }
        n *= 2;
    };
    let two = Plan { primes: 2, bits, n, ifma: false };
    let best = if cost(&two, square) <= cost(&three, square) { two } else { three };
    (best.n.trailing_zeros() <= MAX_LOG).then_some(best)
}

/// The magnitude `a` cut into `bits`-bit pieces, zero-padded to `n`.
fn split(a: &[u64], bits: usize, n: usize) -> Vec<u64> {
    let mut out = vec![0u64; n];
    if bits == 64 {
        out[..a.len()].copy_from_slice(a);
        return out;
    }
    let mask = (1u64 << bits) - 1;
    let count = pieces(a.len(), bits);
    for (i, slot) in out[..count].iter_mut().enumerate() {
        let pos = i * bits;
        let (w, s) = (pos / 64, pos % 64);
        let mut v = a[w] >> s;
        if s + bits > 64 && w + 1 < a.len() {
            v |= a[w + 1] << (64 - s);
        }
        *slot = v & mask;
    }
    out
}

/// Magnitude product of two word slices by NTT; `None` when too large for the primes.
fn mul_words(a: &[u64], b: &[u64], ifma: bool) -> Option<Vec<u64>> {
    let square = std::ptr::eq(a, b);
    let plan = plan(a.len(), b.len(), square, ifma)?;
    let other = if square { Operand::Same } else { Operand::Words(b) };
    Some(convolve_words(a, other, plan, a.len() + b.len()))
}

/// The second operand of a product.
enum Operand<'a> {
    /// Squaring.
    Same,
    Words(&'a [u64]),
    /// Transformed beforehand, with its plan.
    Fixed(&'a FixedOperand),
}

/// The sum of the convolution's coefficients times 2^(bits i), in `out_len` words (the
/// caller makes it large enough).
fn convolve_words(a: &[u64], b: Operand, plan: Plan, out_len: usize) -> Vec<u64> {
    let mut sa = split(a, plan.bits, plan.n);
    let mut sb = match b {
        Operand::Words(w) => Some(split(w, plan.bits, plan.n)),
        _ => None,
    };
    let mut res: Vec<Vec<u64>> = Vec::with_capacity(plan.primes);
    for i in 0..plan.primes {
        // The last prime transforms the pieces in place.
        let last = i + 1 == plan.primes;
        let mut fa = if last { std::mem::take(&mut sa) } else { sa.clone() };
        plan.transform(i, &mut fa);
        match b {
            Operand::Same => plan.pointwise(i, &mut fa, None),
            Operand::Words(_) => {
                let mut fb = if last { sb.take().unwrap_or_default() } else { sb.clone().unwrap_or_default() };
                plan.transform(i, &mut fb);
                plan.pointwise(i, &mut fa, Some(&fb));
            }
            Operand::Fixed(f) => plan.pointwise(i, &mut fa, Some(&f.transforms[i])),
        }
        plan.finish(i, &mut fa);
        res.push(fa);
    }
    #[cfg(target_arch = "x86_64")]
    if plan.ifma {
        return ifma::recompose(&res[0], &res[1], &res[2], out_len);
    }
    if plan.primes == 2 {
        recompose2(&res[0], &res[1], plan.bits, out_len)
    } else {
        recompose3(&res[0], &res[1], &res[2], out_len)
    }
}

/// A number that many others are multiplied by, with its transforms computed once.
pub struct FixedOperand {
    value: BigUint,
    /// Operands up to this many words use the transforms.
    max_words: usize,
    /// Products modulo B^N - 1 (`cyclic`) or whole.
    cyclic: bool,
    plan: Plan,
    transforms: Vec<Vec<u64>>,
}

impl FixedOperand {
    /// `b` prepared for products with numbers of at most `max_words` words: whole products,
    /// or products modulo B^N - 1 for some N >= `cyclic_words` when given.
    pub fn new(b: &BigUint, max_words: usize, cyclic_words: Option<usize>) -> Self {
        Self::with_primes(b, max_words, cyclic_words, ifma_available())
    }

    fn with_primes(b: &BigUint, max_words: usize, cyclic_words: Option<usize>, ifma: bool) -> Self {
        let wb = b.to_u64_digits();
        let plan = match cyclic_words {
            None => plan(max_words, wb.len(), false, ifma),
            Some(words) => cyclic_plan(max_words, wb.len(), words, false, ifma),
        };
        let transforms = match plan {
            // Half the transform length for products modulo B^N - 1: half the threshold.
            Some(plan) if max_words.min(wb.len()) >= ntt_min_words(ifma) / if cyclic_words.is_some() { 2 } else { 1 } => {
                let pieces = split(&wb, plan.bits, plan.n);
                (0..plan.primes)
                    .map(|i| {
                        let mut t = pieces.clone();
                        plan.transform(i, &mut t);
                        t
                    })
                    .collect()
            }
            _ => Vec::new(),
        };
        let plan = plan.unwrap_or(Plan { primes: 0, bits: 64, n: 0, ifma: false });
        FixedOperand { value: b.clone(), max_words, cyclic: cyclic_words.is_some(), plan, transforms }
    }

    pub fn value(&self) -> &BigUint {
        &self.value
    }

    /// a * b (a whole product).
    pub fn mul(&self, a: &BigUint) -> BigUint {
        let wa = a.to_u64_digits();
        if self.cyclic || self.transforms.is_empty() || wa.len() > self.max_words || wa.len() < ntt_min_words(self.plan.ifma) {
            return mul_unsigned(a, &self.value);
        }
        let out_len = wa.len() + self.value.iter_u64_digits().len();
        biguint_from_words(convolve_words(&wa, Operand::Fixed(self), self.plan, out_len))
    }

    /// a * b mod (B^N - 1) and N (B = 2^64, N the `cyclic_words` given to `new` or more);
    /// the result may be B^N - 1 itself for a product of 0 mod B^N - 1. None when `b` was
    /// not prepared for this or `a` is too long.
    pub fn mul_mod_bn_minus_1(&self, a: &BigUint) -> Option<(BigUint, usize)> {
        let wa = a.to_u64_digits();
        if !self.cyclic || self.transforms.is_empty() || wa.len() > self.max_words {
            return None;
        }
        let n_words = self.plan.n * self.plan.bits / 64;
        Some((fold_bn_minus_1(convolve_words(&wa, Operand::Fixed(self), self.plan, n_words + 3), n_words), n_words))
    }
}

/// `words` (N + 3 of them) reduced modulo B^N - 1, into [0, B^N - 1].
fn fold_bn_minus_1(mut words: Vec<u64>, n_words: usize) -> BigUint {
    let high = biguint_from_words(words.split_off(n_words));
    let modulus = (BigUint::from(1u32) << (64 * n_words)) - 1u32;
    let mut r = biguint_from_words(words) + high;
    while r > modulus {
        r -= &modulus;
    }
    r
}

/// The product from its coefficients modulo p1 and p2, pieces of `bits` bits.
fn recompose2(r1: &[u64], r2: &[u64], bits: usize, out_len: usize) -> Vec<u64> {
    let [p1, p2, _] = &PRIMES;
    let inv_p1_mod_p2 = p2.to_mont(modinv(p1.p % p2.p, p2.p));
    let mut out = vec![0u64; out_len];
    let mask = (1u128 << bits) - 1;
    // Coefficients below 2^123, the carry below 2^(124 - bits): the sum fits in 128 bits.
    let mut acc: u128 = 0;
    let mut pos = 0usize;
    let put = |out: &mut [u64], pos: usize, v: u64| {
        let (w, s) = (pos / 64, pos % 64);
        if v == 0 || w >= out.len() {
            return;
        }
        out[w] |= v << s;
        if s + bits > 64 && w + 1 < out.len() {
            out[w + 1] |= v >> (64 - s);
        }
    };
    for (&x1, &x2) in r1.iter().zip(r2) {
        let x1_2 = if x1 >= p2.p { x1 - p2.p } else { x1 };
        let v2 = p2.mul(p2.sub(x2, x1_2), inv_p1_mod_p2);
        acc += x1 as u128 + v2 as u128 * p1.p as u128;
        put(&mut out, pos, (acc & mask) as u64);
        acc >>= bits;
        pos += bits;
    }
    while acc != 0 {
        put(&mut out, pos, (acc & mask) as u64);
        acc >>= bits;
        pos += bits;
    }
    out
}

/// The product from its coefficients modulo the three primes, pieces of 64 bits.
fn recompose3(r1: &[u64], r2: &[u64], r3: &[u64], out_len: usize) -> Vec<u64> {
    let [p1, p2, p3] = &PRIMES;
    // Garner's constants, in Montgomery form so that `mul` by them is a plain product.
    let inv_p1_mod_p2 = p2.to_mont(modinv(p1.p % p2.p, p2.p));
    let p1p2_mod_p3 = ((p1.p as u128 * p2.p as u128) % p3.p as u128) as u64;
    let inv_p1p2_mod_p3 = p3.to_mont(modinv(p1p2_mod_p3, p3.p));
    let p1_mod_p3 = p3.to_mont(p1.p % p3.p);
    sum_garner3(r1.len(), p1.p as u128 * p2.p as u128, out_len, |i| {
        let (x1, x2, x3) = (r1[i], r2[i], r3[i]);
        // All three primes lie in (2^61, 2^62), so x1 < p1 < 2 p2 and one subtraction reduces it.
        let x1_2 = if x1 >= p2.p { x1 - p2.p } else { x1 };
        let x1_3 = if x1 >= p3.p { x1 - p3.p } else { x1 };
        let v2 = p2.mul(p2.sub(x2, x1_2), inv_p1_mod_p2);
        let t = p3.add(x1_3, p3.mul(v2, p1_mod_p3));
        let v3 = p3.mul(p3.sub(x3, t), inv_p1p2_mod_p3);
        (x1 as u128 + v2 as u128 * p1.p as u128, v3)
    })
}

/// The sum of `n` coefficients x_i 2^(64 i), in `out_len` words, where Garner's form of
/// x_i is `garner(i)` = (x1 + p1 v2, v3) with x_i = x1 + p1 v2 + p1 p2 v3 < 2^192.
fn sum_garner3(n: usize, p1p2: u128, out_len: usize, garner: impl Fn(usize) -> (u128, u64)) -> Vec<u64> {
    let mut out = vec![0u64; out_len.max(n + 2)];
    // Running sum of coefficients not yet written out, as two words above the one written.
    let (mut c0, mut c1) = (0u64, 0u64);
    for (i, slot) in out[..n].iter_mut().enumerate() {
        let (low, v3) = garner(i);
        // v3 * p1p2 as three words.
        let a0 = (p1p2 as u64) as u128 * v3 as u128;
        let a1 = (p1p2 >> 64) * v3 as u128 + (a0 >> 64);
        let (w0, w1, w2) = (a0 as u64, a1 as u64, (a1 >> 64) as u64);
        let (s0, k0) = w0.overflowing_add(low as u64);
        let (s1, k1a) = w1.overflowing_add((low >> 64) as u64);
        let (s1, k1b) = s1.overflowing_add(k0 as u64);
        let s2 = w2 + k1a as u64 + k1b as u64;
        // Add to the carry.
        let (d0, e0) = c0.overflowing_add(s0);
        let (d1, e1a) = c1.overflowing_add(s1);
        let (d1, e1b) = d1.overflowing_add(e0 as u64);
        let d2 = s2.wrapping_add(e1a as u64 + e1b as u64);
        *slot = d0;
        c0 = d1;
        c1 = d2;
    }
    out[n] = c0;
    out[n + 1] = c1;
    debug_assert!(out[out_len..].iter().all(|&w| w == 0));
    out.truncate(out_len);
    out
}

/// x * w mod p in [0, 2p) for any 64-bit x, a prime p < 2^63 and w < p, with Shoup's
/// quotient ws = floor(w 2^64 / p).
#[inline(always)]
fn mul_shoup64(x: u64, w: u64, ws: u64, p: u64) -> u64 {
    let q = ((x as u128 * ws as u128) >> 64) as u64;
    x.wrapping_mul(w).wrapping_sub(q.wrapping_mul(p))
}

/// b^e mod p, by division (constants and tables only).
const fn pow_mod(b: u64, mut e: u64, p: u64) -> u64 {
    let p128 = p as u128;
    let (mut r, mut b) = (1u128, b as u128 % p128);
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % p128;
        }
        b = b * b % p128;
        e >>= 1;
    }
    r as u64
}

/// a^-1 mod a prime p.
const fn modinv(a: u64, p: u64) -> u64 {
    pow_mod(a, p - 2, p)
}

/// The bytes a product of `la` and `lb` words allocates and frees again (transform buffers,
/// or Toom-3's temporaries), for the collector's accounting of malloc'd memory.
pub fn scratch_bytes(la: usize, lb: usize) -> usize {
    match plan(la, lb, false, ifma_available()) {
        Some(p) if la.min(lb) >= ntt_min_words(p.ifma) => p.n * 8 * (2 * p.primes + 1),
        _ => (la + lb) * 8 * 2,
    }
}

/// a * b, by NTT when both are large.
pub fn mul(a: &BigInt, b: &BigInt) -> BigInt {
    let sign = if a.sign() == b.sign() { Sign::Plus } else { Sign::Minus };
    BigInt::from_biguint(sign, mul_unsigned(a.magnitude(), b.magnitude()))
}

/// a * b for magnitudes, by NTT when both are large.
pub fn mul_unsigned(a: &BigUint, b: &BigUint) -> BigUint {
    let words = |x: &BigUint| x.iter_u64_digits().len();
    let ifma = ifma_available();
    if words(a).min(words(b)) < ntt_min_words(ifma) {
        return a * b;
    }
    let wa = a.to_u64_digits();
    let product = if std::ptr::eq(a, b) || a == b {
        mul_words(&wa, &wa, ifma)
    } else {
        mul_words(&wa, &b.to_u64_digits(), ifma)
    };
    match product {
        Some(words) => biguint_from_words(words),
        None => a * b,
    }
}

fn biguint_from_words(words: Vec<u64>) -> BigUint {
    BigUint::new(words.iter().flat_map(|&w| [w as u32, (w >> 32) as u32]).collect())
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

    /// The primes this CPU can run: this module's, and `ifma`'s where available.
    fn kinds() -> Vec<bool> {
        if ifma_available() { vec![false, true] } else { vec![false] }
    }

    /// a * b by NTT with the given primes, whatever the operands' sizes.
    fn product(a: &BigInt, b: &BigInt, ifma: bool) -> BigInt {
        let (wa, wb) = (a.magnitude().to_u64_digits(), b.magnitude().to_u64_digits());
        let words = if a == b { mul_words(&wa, &wa, ifma) } else { mul_words(&wa, &wb, ifma) };
        let sign = if a.sign() == b.sign() { Sign::Plus } else { Sign::Minus };
        BigInt::from_biguint(sign, biguint_from_words(words.expect("a plan")))
    }

    #[test]
    fn ntt_products_match_schoolbook_and_toom() {
        for &(n, m) in &[(1200, 1200), (1300, 5000), (2000, 2001), (1200, 20000)] {
            let a = words(n, n as u64);
            let b = words(m, m as u64 + 7);
            for ifma in kinds() {
                assert_eq!(product(&a, &b, ifma), &a * &b, "{n} x {m} words, ifma {ifma}");
                assert_eq!(product(&-&a, &b, ifma), -(&a * &b));
                assert_eq!(product(&a, &a, ifma), &a * &a);
            }
            assert_eq!(mul(&a, &b), &a * &b);
        }
    }

    #[test]
    fn ntt_products_of_random_words_at_plan_boundaries() {
        // Full random words make the coefficients large; sizes around the two- and
        // three-prime plans' power-of-two lengths.
        for &(n, m) in &[(1, 1), (7, 9), (60, 70), (400, 400), (401, 1003), (1000, 1000), (1500, 1100), (2049, 2049), (2600, 2601), (4000, 1000), (1000, 9000)] {
            let a = words(n, 5 * n as u64);
            let b = words(m, m as u64 + 11);
            for ifma in kinds() {
                assert_eq!(product(&a, &b, ifma), &a * &b, "{n} x {m} words, ifma {ifma}");
                assert_eq!(product(&a, &a, ifma), &a * &a, "{n} squared, ifma {ifma}");
            }
        }
    }

    #[test]
    fn fixed_operands_and_products_modulo_bn_minus_1() {
        for &(n, m) in &[(400, 401), (1000, 999), (2600, 2601), (3000, 1200)] {
            let a = words(n, 17 * n as u64).into_parts().1;
            let b = words(m, m as u64 + 3).into_parts().1;
            for ifma in kinds() {
                let whole = FixedOperand::with_primes(&b, n, None, ifma);
                assert_eq!(whole.mul(&a), &a * &b, "{n} x {m} words, ifma {ifma}");
                let cyclic = FixedOperand::with_primes(&b, n, Some(n.max(m) + 1), ifma);
                let (r, words) = cyclic.mul_mod_bn_minus_1(&a).unwrap();
                assert!(words > n.max(m));
                let modulus = (BigUint::from(1u32) << (64 * words)) - 1u32;
                assert_eq!(r % &modulus, (&a * &b) % &modulus, "{n} x {m} words mod B^{words} - 1, ifma {ifma}");
            }
        }
    }

    #[test]
    fn ntt_handles_largest_coefficients() {
        // All-ones words make every convolution coefficient as large as it can be.
        let ones = (BigInt::from(1) << (64 * 3000)) - 1;
        let other = (BigInt::from(1) << (64 * 5000)) - 1;
        for ifma in kinds() {
            assert_eq!(product(&ones, &ones, ifma), &ones * &ones, "ifma {ifma}");
            assert_eq!(product(&ones, &other, ifma), &ones * &other, "ifma {ifma}");
        }
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
