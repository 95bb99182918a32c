//! Double → decimal digit conversion as CRuby does it for `format`: David Gay's `dtoa`
//! in modes 2 (N significant digits) and 3 (N digits after the point), including CRuby's
//! change to the fast path (an ambiguous last digit is rounded half-even on the digit,
//! which is why `format("%.1f", 0.35)` is `"0.4"` in Ruby but `"0.3"` in C), and `hdtoa`
//! for `%a`.
//!
//! Invariants: results are digit strings without trailing zeros plus the decimal point
//! position `decpt` (value = 0.d1d2d3… × 10^decpt); zero is `("0", 1)`. The slow path
//! uses exact big-integer arithmetic, so only the fast path's floating-point steps
//! (ported operation by operation) decide the quirky cases.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Pow, Zero};

const TENS: [f64; 23] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
const BIGTENS: [f64; 5] = [1e16, 1e32, 1e64, 1e128, 1e256];
const QUICK_MAX: i32 = 14;
const INT_MAX: i32 = 14;
const TEN_PMAX: i32 = 22;

/// `(mantissa, be, bbits)` with `d = mantissa * 2^be`, mantissa odd (Gay's `d2b`).
fn d2b(d: f64) -> (u64, i32, i32) {
    let bits = d.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & 0xf_ffff_ffff_ffff;
    let (mut m, mut be) = if exp == 0 { (frac, -1074) } else { (frac | (1 << 52), exp - 1075) };
    let tz = m.trailing_zeros();
    m >>= tz;
    be += tz as i32;
    let bbits = 64 - m.leading_zeros() as i32;
    (m, be, bbits)
}

/// Gay's estimate of floor(log10(d)), with `k_check` telling whether it may be one
/// too large.
fn estimate_k(d: f64, be: i32, bbits: i32) -> (i32, bool, i32) {
    let bits = d.to_bits();
    let word0 = (bits >> 32) as u32;
    let word1 = bits as u32;
    let biased = ((word0 >> 20) & 0x7ff) as i32;
    let (d2, i) = if biased != 0 {
        let d2 = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | (0x3ff << 52));
        (d2, biased - 1023)
    } else {
        let i = bbits + be + (1023 + 53 - 1);
        let x: u32 = if i > 32 { (word0 << (64 - i)) | (word1 >> (i - 32)) } else { word1 << (32 - i) };
        let d2 = x as f64 / 2f64.powi(31);
        (d2, i - (1023 + 53 - 1) - 1)
    };
    let ds = (d2 - 1.5) * 0.289529654602168 + 0.1760912590558 + i as f64 * 0.301029995663981;
    let mut k = ds as i32;
    if ds < 0.0 && ds != k as f64 {
        k -= 1;
    }
    let mut k_check = true;
    if (0..=TEN_PMAX).contains(&k) {
        if d < TENS[k as usize] {
            k -= 1;
        }
        k_check = false;
    }
    (k, k_check, i)
}

fn bump_up(s: &mut Vec<u8>, k: &mut i32) {
    loop {
        match s.pop() {
            Some(b'9') => {
                if s.is_empty() {
                    *k += 1;
                    s.push(b'1');
                    return;
                }
            }
            Some(c) => {
                s.push(c + 1);
                return;
            }
            None => {
                *k += 1;
                s.push(b'1');
                return;
            }
        }
    }
}

fn trim_zeros(s: &mut Vec<u8>) {
    while s.len() > 1 && s.last() == Some(&b'0') {
        s.pop();
    }
}

/// CRuby's `dtoa(d, mode, ndigits)` for mode 2 or 3; `d` finite and positive (or zero).
pub fn dtoa(d: f64, mode: u8, ndigits: i32) -> (Vec<u8>, i32) {
    if d == 0.0 {
        return (b"0".to_vec(), 1);
    }
    let (mant, be, bbits) = d2b(d);
    let (mut k, k_check, i_exp) = estimate_k(d, be, bbits);
    let (mut ilim, ilim1, ndigits) = if mode == 2 {
        let n = ndigits.max(1);
        (n, n, n)
    } else {
        let i = ndigits + k + 1;
        (i, i - 1, ndigits)
    };
    let mut half = false;
    let mut s: Vec<u8> = Vec::new();

    // Fast path: floating-point digit generation with an error bound.
    if ilim >= 0 && ilim <= QUICK_MAX {
        let d2 = d;
        let k0 = k;
        let ilim0 = ilim;
        let mut dv = d;
        let mut ieps = 2;
        let mut i = 0usize;
        if k > 0 {
            let mut ds = TENS[(k & 0xf) as usize];
            let mut j = k >> 4;
            if j & 0x10 != 0 {
                j &= 0x10 - 1;
                dv /= BIGTENS[4];
                ieps += 1;
            }
            while j != 0 {
                if j & 1 != 0 {
                    ieps += 1;
                    ds *= BIGTENS[i];
                }
                j >>= 1;
                i += 1;
            }
            dv /= ds;
        } else if k < 0 {
            let j1 = -k;
            dv *= TENS[(j1 & 0xf) as usize];
            let mut j = j1 >> 4;
            while j != 0 {
                if j & 1 != 0 {
                    ieps += 1;
                    dv *= BIGTENS[i];
                }
                j >>= 1;
                i += 1;
            }
        }
        let mut failed = false;
        if k_check && dv < 1.0 && ilim > 0 {
            if ilim1 <= 0 {
                failed = true;
            } else {
                ilim = ilim1;
                k -= 1;
                dv *= 10.0;
                ieps += 1;
            }
        }
        if !failed {
            let mut eps = (ieps as f64 * dv + 7.0) / 2f64.powi(52);
            if ilim == 0 {
                dv -= 5.0;
                if dv > eps {
                    return (b"1".to_vec(), k + 2);
                }
                if dv < -eps {
                    return (Vec::new(), -ndigits);
                }
            } else {
                eps *= TENS[(ilim - 1) as usize];
                let mut n = 1;
                loop {
                    let l = dv as i64;
                    dv -= l as f64;
                    if dv == 0.0 {
                        ilim = n;
                    }
                    s.push(b'0' + l as u8);
                    if n == ilim {
                        if dv > 0.5 + eps {
                            bump_up(&mut s, &mut k);
                            return (s, k + 1);
                        } else if dv < 0.5 - eps {
                            trim_zeros(&mut s);
                            return (s, k + 1);
                        }
                        half = true;
                        if (s[s.len() - 1] - b'0') & 1 == 1 {
                            bump_up(&mut s, &mut k);
                            return (s, k + 1);
                        }
                        break;
                    }
                    n += 1;
                    dv *= 10.0;
                }
            }
        }
        s.clear();
        let _ = d2;
        k = k0;
        ilim = ilim0;
    }

    // Integer-valued doubles below 10^15: exact double arithmetic.
    if be >= 0 && k <= INT_MAX {
        let ds = TENS[k as usize];
        let mut dv = d;
        let mut n = 1;
        loop {
            let l = (dv / ds) as i64;
            dv -= l as f64 * ds;
            s.push(b'0' + l as u8);
            if dv == 0.0 {
                break;
            }
            if n == ilim {
                dv += dv;
                if dv > ds || (dv == ds && l & 1 == 1) {
                    bump_up(&mut s, &mut k);
                }
                break;
            }
            n += 1;
            dv *= 10.0;
        }
        trim_zeros(&mut s);
        return (s, k + 1);
    }

    // Exact path: b / S = d / 10^k.
    let j = bbits - i_exp - 1;
    let (mut b2, mut s2) = if j >= 0 { (0, j) } else { (-j, 0) };
    let (b5, s5) = if k >= 0 {
        s2 += k;
        (0, k)
    } else {
        b2 -= k;
        (-k, 0)
    };
    let five = BigInt::from(5);
    let mut b = BigInt::from(mant) * Pow::pow(&five, b5 as u32) << b2 as usize;
    let mut big_s: BigInt = Pow::pow(&five, s5 as u32);
    big_s <<= s2 as usize;
    if k_check && b < big_s {
        k -= 1;
        b *= 10;
        ilim = ilim1;
    }
    if ilim <= 0 && mode == 3 {
        if ilim < 0 || b <= &big_s * 5 {
            return (Vec::new(), -ndigits);
        }
        return (b"1".to_vec(), k + 2);
    }
    let mut dig;
    let mut n = 1;
    loop {
        let (q, r) = b.div_rem(&big_s);
        dig = q.iter_u32_digits().next().unwrap_or(0) as u8;
        b = r;
        s.push(b'0' + dig);
        if b.is_zero() {
            trim_zeros(&mut s);
            return (s, k + 1);
        }
        if n >= ilim {
            break;
        }
        b *= 10;
        n += 1;
    }
    b <<= 1;
    let up = match b.cmp(&big_s) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => dig & 1 == 1,
        std::cmp::Ordering::Less => false,
    };
    if up {
        while s.last() == Some(&b'9') {
            s.pop();
        }
        match s.last_mut() {
            None => {
                k += 1;
                s.push(b'1');
            }
            Some(c) => {
                if !half || (*c - b'0') & 1 == 1 {
                    *c += 1;
                }
            }
        }
    } else {
        trim_zeros(&mut s);
    }
    let _ = BigInt::one();
    (s, k + 1)
}

/// CRuby's `hdtoa`: hexadecimal digits of `d` (positive, finite, nonzero) with the first
/// digit always `1`, rounded to `ndigits` digits (half-even) when `ndigits > 0`, or all
/// significant digits when `ndigits <= 0`. Returns (digits, binary exponent + 1).
pub fn hdtoa(d: f64, ndigits: i32, upper: bool) -> (Vec<u8>, i32) {
    const SIGFIGS: i32 = 15;
    let xdigs: &[u8; 16] = if upper { b"0123456789ABCDEF" } else { b"0123456789abcdef" };
    let mut u = d;
    let mut decpt;
    let exp = ((u.to_bits() >> 52) & 0x7ff) as i32;
    if exp != 0 {
        decpt = exp - 1022;
    } else {
        u *= 5.363123171977039e+154;
        decpt = ((u.to_bits() >> 52) & 0x7ff) as i32 - (514 + 1022);
    }
    let ndigits = if ndigits == 0 { 1 } else { ndigits };
    let bufsize = if ndigits > 0 { ndigits } else { SIGFIGS };
    if SIGFIGS > ndigits && ndigits > 0 {
        // Round by letting the FPU add 1.0 at the right exponent (half-even).
        let offset = 4 * ndigits + 1024 - 4 - 53;
        let bits = (u.to_bits() & !(0x7ff << 52)) | ((offset as u64) << 52);
        u = f64::from_bits(bits);
        u += 1.0;
        u -= 1.0;
        decpt += ((u.to_bits() >> 52) & 0x7ff) as i32 - offset;
    }
    let mut manh = ((u.to_bits() >> 32) & 0xfffff) as u32;
    let mut manl = u.to_bits() as u32;
    let mut s = vec![b'1'];
    for _ in 1..bufsize {
        s.push(xdigs[((manh >> (20 - 4)) & 0xf) as usize]);
        manh = (manh << 4) | (manl >> (32 - 4));
        manl <<= 4;
    }
    if ndigits < 0 {
        let mut n = SIGFIGS as usize;
        while n > 1 && s[n - 1] == b'0' {
            n -= 1;
        }
        s.truncate(n);
    } else {
        s.truncate(ndigits as usize);
    }
    (s, decpt)
}

#[cfg(test)]
mod tests {
    use super::dtoa;

    fn f(d: f64, prec: i32) -> (String, i32) {
        let (s, e) = dtoa(d, 3, prec);
        (String::from_utf8(s).unwrap(), e)
    }

    #[test]
    fn ruby_fast_path_rounding() {
        assert_eq!(f(0.35, 1), ("4".into(), 0));
        assert_eq!(f(2.675, 2), ("268".into(), 1));
        assert_eq!(f(0.45, 1), ("4".into(), 0));
        assert_eq!(f(1.0005, 3), ("1".into(), 1));
        assert_eq!(f(2.5, 0), ("2".into(), 1));
        assert_eq!(f(9.995, 2), ("1".into(), 2));
        let (s, e) = dtoa(12345.678, 2, 7);
        assert_eq!((String::from_utf8(s).unwrap(), e), ("1234568".into(), 5));
    }
}
