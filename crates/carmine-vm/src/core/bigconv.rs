//! Conversion of large Integers to and from digit strings (`Integer#to_s(base)`,
//! `format("%d")`, `Integer()`/`String#to_i` of long digit strings).
//!
//! num-bigint converts to digits by divide and conquer over powers base^(m 2^k) (m digits
//! per word) with Burnikel-Ziegler division built on Toom-3 products, and parses in
//! quadratic time. Here the same recursion divides by Barrett's method: each power d comes
//! with its reciprocal floor(B^(2 len(d)) / d) (B = 2^64), so a quotient costs one product
//! by the reciprocal and one by d modulo B^N - 1 (`bigmul::FixedOperand`, NTT products with
//! the transforms of d and of the reciprocal computed once). Below BARRETT_MIN_WORDS the
//! parts are divided in place on word slices by Knuth's algorithm D (by the odd part of
//! the power for even bases; a mulx/adox/adcx multiply-add where the CPU has it) down to
//! two words, written m digits at a time. Parsing is the same recursion upside down:
//! high part * power + low part.
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
const BASE_WORDS: usize = 2;

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
    /// The odd part of d prepared for Knuth's division, and the power of two taken out (bits).
    knuth: OnceLock<(Normalized, usize)>,
}

/// d shifted left until its top bit is set, and the reciprocal of its top two words
/// floor((B^3 - 1) / (d1 B + d0)) - B (Möller and Granlund's 3-by-2 division), for the
/// schoolbook division of the small levels.
struct Normalized {
    words: Vec<u64>,
    /// B^len - words: u - q d is u + q (B^len - d) - q B^len, a multiply-add.
    complement: Vec<u64>,
    shift: u32,
    v: u64,
}

impl Normalized {
    fn new(d: &BigUint) -> Normalized {
        let shift = d.iter_u64_digits().last().map_or(0, |top| top.leading_zeros());
        let words = (d << shift).to_u64_digits();
        let top2 = (BigUint::from(words[words.len() - 1]) << 64) + words[words.len() - 2];
        let v: BigUint = ((BigUint::from(1u32) << 192u32) - 1u32) / top2 - (BigUint::from(1u32) << 64u32);
        let mut complement: Vec<u64> = words.iter().map(|w| !w).collect();
        for w in complement.iter_mut() {
            *w = w.wrapping_add(1);
            if *w != 0 {
                break;
            }
        }
        Normalized { words, complement, shift, v: v.iter_u64_digits().next().unwrap_or(0) }
    }
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
    Power { d, len, barrett: OnceLock::new(), knuth: OnceLock::new() }
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
    let p = &pw.levels[k];
    if p.len < BARRETT_MIN_WORDS {
        let words = x.to_u64_digits();
        let w = word_power(base).1 << (k + 1);
        let start = out.len();
        out.resize(start + width.max(w), b'0');
        let mut scratch = vec![0u64; 8 * p.len + 16 * (k + 1)];
        let end = out.len();
        convert_small(&words, base, pw, k, &mut out[end - w..], &mut scratch);
        if width == 0 {
            let zeros = out[start..].iter().take_while(|&&c| c == b'0').count().min(w - 1);
            out.drain(start..start + zeros);
        }
        return;
    }
    if x < &p.d {
        return convert(x, base, pw, k - 1, width, out);
    }
    let (q, r) = div_rem(x, pw, k);
    let half = word_power(base).1 << k;
    convert(&q, base, pw, k - 1, width.saturating_sub(half), out);
    convert(&r, base, pw, k - 1, half, out);
}

/// Writes `x` (below power(k)^2, low word first) as exactly `out.len()` = m 2^(k+1) digits.
/// Each level divides by power(k) in place (Knuth's algorithm D on a copy shifted into
/// `scratch`, the quotient left above the remainder), down to numbers of two words.
///
/// For an even base = 2^a b', power(k) = base^h is 2^(a h) b'^h: the quotient is that of
/// x >> (a h) by the odd part b'^h, and the remainder that division's remainder above the low
/// a h bits of x. The divisor is then shorter by a/log2(base) (30% for base 10), and so is
/// the work of the division.
fn convert_small(x: &[u64], base: u32, pw: &Powers, k: usize, out: &mut [u8], scratch: &mut [u64]) {
    let x = &x[..x.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1)];
    if k == 0 || x.len() <= 2 {
        let lo = x.first().copied().unwrap_or(0);
        let hi = x.get(1).copied().unwrap_or(0);
        return write_leaf(hi, lo, base, out);
    }
    let p = &pw.levels[k];
    let half = out.len() / 2;
    let (high_out, low_out) = out.split_at_mut(half);
    if x.len() < p.len || (x.len() == p.len && x.iter().copied().rev().cmp(p.d.iter_u64_digits().rev()) == std::cmp::Ordering::Less) {
        high_out.fill(b'0');
        return convert_small(x, base, pw, k - 1, low_out, scratch);
    }
    let (d, two_bits) = p.knuth.get_or_init(|| {
        // The odd part needs two words for the 3-by-2 quotients.
        let two_bits = base.trailing_zeros() as usize * half;
        let odd = &p.d >> two_bits;
        if odd.iter_u64_digits().len() >= 2 {
            (Normalized::new(&odd), two_bits)
        } else {
            (Normalized::new(&p.d), 0)
        }
    });
    let two_bits = *two_bits;
    let (u, rest) = scratch.split_at_mut(x.len() + 1);
    shift_into(x, two_bits, d.shift, u);
    // Knuth's algorithm wants the top word below d's (one zero word above the dividend, or
    // the carry of the normalizing shift), not more.
    let used = u.iter().rposition(|&w| w != 0).map_or(0, |i| i + 2).clamp(d.words.len() + 1, u.len());
    let u = &mut u[..used];
    div_in_place(u, d);
    let l = d.words.len();
    shift_right(&mut u[..l], d.shift);
    let (r, q) = u.split_at(l);
    if two_bits == 0 {
        convert_small(q, base, pw, k - 1, high_out, rest);
        return convert_small(r, base, pw, k - 1, low_out, rest);
    }
    let (whole, rest) = rest.split_at_mut(p.len + 2);
    join_low_bits(r, x, two_bits, whole);
    convert_small(q, base, pw, k - 1, high_out, rest);
    convert_small(whole, base, pw, k - 1, low_out, rest);
}

/// (x >> `right` bits) << `left` bits into `u` (at least x.len() + 1 words), `left` < 64.
fn shift_into(x: &[u64], right: usize, left: u32, u: &mut [u64]) {
    let word = |i: isize| if i >= 0 { x.get(i as usize).copied().unwrap_or(0) } else { 0 };
    let net = right as isize - left as isize;
    let (offset, bits) = (net.div_euclid(64), net.rem_euclid(64) as u32);
    for (i, dst) in u.iter_mut().enumerate() {
        let j = i as isize + offset;
        *dst = if bits == 0 { word(j) } else { (word(j) >> bits) | (word(j + 1) << (64 - bits)) };
    }
    // The bits of x below `right` landed below `left`.
    if left > 0 {
        u[0] &= !((1u64 << left) - 1);
    }
}

/// r * 2^bits + (x mod 2^bits) into `out` (long enough for it).
fn join_low_bits(r: &[u64], x: &[u64], bits: usize, out: &mut [u64]) {
    out.fill(0);
    let (w, b) = (bits / 64, (bits % 64) as u32);
    for i in 0..w.min(x.len()) {
        out[i] = x[i];
    }
    if b > 0 {
        out[w] = x.get(w).copied().unwrap_or(0) & ((1u64 << b) - 1);
    }
    for (i, &v) in r.iter().enumerate() {
        out[w + i] |= v << b;
        if b > 0 {
            out[w + i + 1] |= v >> (64 - b);
        }
    }
}

/// `u` >>= `shift` in place, `shift` < 64 (the bits shifted out are zero).
fn shift_right(u: &mut [u64], shift: u32) {
    if shift == 0 {
        return;
    }
    for i in 0..u.len() {
        let next = u.get(i + 1).copied().unwrap_or(0);
        u[i] = (u[i] >> shift) | (next << (64 - shift));
    }
}

/// Knuth's algorithm D: `u` (at least d's length + 1 words, below d B^(len u - len d)) by
/// the normalized `d`: the remainder is left in u[..len d], the quotient in u[len d..].
fn div_in_place(u: &mut [u64], d: &Normalized) {
    let l = d.words.len();
    let (d1, d0) = (d.words[l - 1], d.words[l - 2]);
    for j in (0..u.len() - l).rev() {
        let (u2, u1, u0) = (u[j + l], u[j + l - 1], u[j + l - 2]);
        // (u2, u1) <= (d1, d0) since the partial remainder is below d B^(j+1); the 3-by-2
        // quotient is then at most 1 above the true one.
        let mut q = if (u2, u1) >= (d1, d0) { u64::MAX } else { div_3by2(u2, u1, u0, d1, d0, d.v) };
        let carry = addmul(&mut u[j..j + l], &d.complement, q);
        let top = u2 as u128 + carry as u128;
        let (mut top, mut negative) = ((top as u64).wrapping_sub(q), top < q as u128);
        while negative {
            q -= 1;
            let carry = add_in_place(&mut u[j..j + l], &d.words);
            (top, negative) = top.overflowing_add(carry);
            negative = !negative;
        }
        debug_assert_eq!(top, 0);
        u[j + l] = q;
    }
}

/// floor((u2 B^2 + u1 B + u0) / (d1 B + d0)) for (u2, u1) < (d1, d0), d1's top bit set and
/// v = floor((B^3 - 1) / (d1 B + d0)) - B (Möller and Granlund, "Improved division by
/// invariant integers", algorithm 5).
#[inline(always)]
fn div_3by2(u2: u64, u1: u64, u0: u64, d1: u64, d0: u64, v: u64) -> u64 {
    let q = (v as u128 * u2 as u128).wrapping_add(((u2 as u128) << 64) | u1 as u128);
    let (mut q1, q0) = ((q >> 64) as u64, q as u64);
    let r1 = u1.wrapping_sub(q1.wrapping_mul(d1));
    let d = ((d1 as u128) << 64) | d0 as u128;
    let mut r = (((r1 as u128) << 64) | u0 as u128).wrapping_sub(d0 as u128 * q1 as u128).wrapping_sub(d);
    q1 = q1.wrapping_add(1);
    if (r >> 64) as u64 >= q0 {
        q1 = q1.wrapping_sub(1);
        r = r.wrapping_add(d);
    }
    if r >= d {
        q1 = q1.wrapping_add(1);
    }
    q1
}

/// u += q * d over d's length; returns the carry word.
#[inline(always)]
fn addmul(u: &mut [u64], d: &[u64], q: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if has_mulx_adx() && !d.is_empty() {
        // SAFETY: the CPU has BMI2 and ADX; both slices hold at least d.len() words.
        return unsafe { addmul_mulx_adx(u[..d.len()].as_mut_ptr(), d.as_ptr(), d.len(), q) };
    }
    let mut carry = 0u64;
    for (x, &y) in u.iter_mut().zip(d) {
        let p = y as u128 * q as u128 + carry as u128 + *x as u128;
        *x = p as u64;
        carry = (p >> 64) as u64;
    }
    carry
}

#[cfg(target_arch = "x86_64")]
fn has_mulx_adx() -> bool {
    std::is_x86_feature_detected!("bmi2") && std::is_x86_feature_detected!("adx")
}

/// `addmul` with two independent carry chains: the high words of the products ride on the
/// overflow flag (adox), the sum with `u` on the carry flag (adcx), so neither waits for
/// the other. One word at a time until the count is a multiple of 4, then four per pass
/// (jrcxz and lea leave the flags alone).
///
/// # Safety
/// The CPU supports BMI2 and ADX; `u` and `d` point to `n` >= 1 words.
#[cfg(target_arch = "x86_64")]
unsafe fn addmul_mulx_adx(u: *mut u64, d: *const u64, n: usize, q: u64) -> u64 {
    let carry: u64;
    std::arch::asm!(
        "mov r11, rcx",
        "shr r11, 2",
        "and ecx, 3",
        "xor r8d, r8d",
        "2:",
        "jrcxz 4f",
        "mulx r10, r9, qword ptr [{d} + 0]",
        "adox r9, r8",
        "adcx r9, qword ptr [{u} + 0]",
        "mov qword ptr [{u} + 0], r9",
        "mov r8, r10",
        "lea {d}, [{d} + 8]",
        "lea {u}, [{u} + 8]",
        "lea rcx, [rcx - 1]",
        "jmp 2b",
        "4:",
        "mov rcx, r11",
        "5:",
        "jrcxz 6f",
        "jmp 7f",
        "6:",
        "jmp 3f",
        "7:",
        "mulx r10, r9, qword ptr [{d} + 0]",
        "adox r9, r8",
        "adcx r9, qword ptr [{u} + 0]",
        "mov qword ptr [{u} + 0], r9",
        "mov r8, r10",
        "mulx r10, r9, qword ptr [{d} + 8]",
        "adox r9, r8",
        "adcx r9, qword ptr [{u} + 8]",
        "mov qword ptr [{u} + 8], r9",
        "mov r8, r10",
        "mulx r10, r9, qword ptr [{d} + 16]",
        "adox r9, r8",
        "adcx r9, qword ptr [{u} + 16]",
        "mov qword ptr [{u} + 16], r9",
        "mov r8, r10",
        "mulx r10, r9, qword ptr [{d} + 24]",
        "adox r9, r8",
        "adcx r9, qword ptr [{u} + 24]",
        "mov qword ptr [{u} + 24], r9",
        "mov r8, r10",
        "lea {d}, [{d} + 32]",
        "lea {u}, [{u} + 32]",
        "lea rcx, [rcx - 1]",
        "jmp 5b",
        "3:",
        "mov eax, 0",
        "adox r8, rax",
        "adcx r8, rax",
        d = inout(reg) d => _,
        u = inout(reg) u => _,
        inout("rcx") n => _,
        in("rdx") q,
        out("rax") _,
        out("r8") carry,
        out("r9") _,
        out("r10") _,
        out("r11") _,
        options(nostack),
    );
    carry
}

/// u += d over d's length; returns the carry out.
fn add_in_place(u: &mut [u64], d: &[u64]) -> u64 {
    let mut carry = false;
    for (x, &y) in u.iter_mut().zip(d) {
        let (s, c1) = x.overflowing_add(y);
        let (s, c2) = s.overflowing_add(carry as u64);
        *x = s;
        carry = c1 | c2;
    }
    carry as u64
}

/// (hi B + lo) / d and its remainder, for hi < d.
#[inline(always)]
fn div_2by1(hi: u64, lo: u64, d: u64) -> (u64, u64) {
    #[cfg(target_arch = "x86_64")]
    {
        let (q, r);
        // SAFETY: `div` reads rdx:rax and the operand and writes rax and rdx only; hi < d
        // keeps the quotient within 64 bits, so it cannot fault.
        unsafe {
            std::arch::asm!("div {0}", in(reg) d, inout("rdx") hi => r, inout("rax") lo => q, options(pure, nomem, nostack));
        }
        (q, r)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let n = ((hi as u128) << 64) | lo as u128;
        ((n / d as u128) as u64, (n % d as u128) as u64)
    }
}

/// hi B + lo as exactly `out.len()` digits (a multiple of m, enough for the number): m digits
/// per remainder by base^m, from the right.
fn write_leaf(mut hi: u64, mut lo: u64, base: u32, out: &mut [u8]) {
    let (p, m) = word_power(base);
    let mut end = out.len();
    while (hi != 0 || lo != 0) && end >= m {
        let (qh, rh) = if hi < p { (0, hi) } else { (hi / p, hi % p) };
        let (ql, r) = div_2by1(rh, lo, p);
        (hi, lo) = (qh, ql);
        write_chunk(r, base, &mut out[end - m..end]);
        end -= m;
    }
    out[..end].fill(b'0');
}

/// "00" to "99".
static DIGIT_PAIRS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// `r` (below base^m) as exactly out.len() = m digits.
#[inline]
fn write_chunk(mut r: u64, base: u32, out: &mut [u8]) {
    if base == 10 {
        // 19 digits: 3, then two times 8 (four pairs each).
        let low = r % 10_000_000_000_000_000;
        let top = (r / 10_000_000_000_000_000) as usize;
        out[0] = b'0' + (top / 100) as u8;
        out[1..3].copy_from_slice(&DIGIT_PAIRS[2 * (top % 100)..2 * (top % 100) + 2]);
        for (half, v) in out[3..].chunks_exact_mut(8).zip([(low / 100_000_000) as u32, (low % 100_000_000) as u32]) {
            let (a, b) = ((v / 10_000) as usize, (v % 10_000) as usize);
            for (pair, x) in half.chunks_exact_mut(2).zip([a / 100, a % 100, b / 100, b % 100]) {
                pair.copy_from_slice(&DIGIT_PAIRS[2 * x..2 * x + 2]);
            }
        }
        return;
    }
    for c in out.iter_mut().rev() {
        let d = (r % base as u64) as u8;
        r /= base as u64;
        *c = if d < 10 { b'0' + d } else { b'a' + d - 10 };
    }
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
    fn small_levels_match_num_bigint_in_every_base() {
        // Random words, runs of zero and all-ones words and short words, 1-300 words (the
        // in-place levels and their leaves) and a few past the first Barrett level.
        let mut seed = 88172645463325252u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for i in 0..1500 {
            let words = (next() % if i % 50 == 0 { 1100 } else { 300 }) as usize + 1;
            let kind = next() % 4;
            let mut bytes = Vec::with_capacity(8 * words);
            for _ in 0..words {
                let w = match kind {
                    0 => next(),
                    1 => u64::MAX,
                    2 => if next() % 3 == 0 { next() } else { 0 },
                    _ => next() >> (next() % 64),
                };
                bytes.extend_from_slice(&w.to_le_bytes());
            }
            let v = BigInt::from_bytes_le(if i % 2 == 0 { Sign::Plus } else { Sign::Minus }, &bytes);
            let base = if i % 3 == 0 { 10 } else { 2 + (next() % 35) as u32 };
            assert_eq!(to_str_radix(&v, base), v.to_str_radix(base), "case {i}, {words} words, base {base}");
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
