//! Text and Float conversions of `Dec`: CRuby's BigDecimal string grammar (strict for
//! `BigDecimal()`, loose for `String#to_d`), `to_s` in E and F forms with sign and digit
//! grouping options, and Float to decimal (shortest, or a given number of digits).

use super::arith::{Dec, Kind};
use num_bigint::BigUint;

/// Exponents beyond this many decimal places overflow to Infinity (or underflow to 0).
pub const EXP_LIMIT: i64 = 4_000_000_000_000_000_000;

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

fn special(s: &[u8]) -> Option<Dec> {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let mut j = s.len();
    while j > i && is_space(s[j - 1]) {
        j -= 1;
    }
    match &s[i..j] {
        b"NaN" => Some(Dec::nan()),
        b"Infinity" | b"+Infinity" => Some(Dec::inf(false)),
        b"-Infinity" => Some(Dec::inf(true)),
        _ => None,
    }
}

/// How a run of fraction or exponent digits ended.
enum RunEnd {
    /// At another character (the caller goes on from it).
    Other,
    /// At the end of the text or (loose parsing) at a space.
    Stop,
    /// Loose parsing stopped at a misplaced `_`.
    Underscore,
    /// Strict parsing met a misplaced `_`.
    Invalid,
}

/// Reads digits from `j` into `digits` (a `_` only between two digits), as `BigDecimal()`
/// reads a fraction or an exponent.
fn digit_run(at: &impl Fn(usize) -> u8, j: &mut usize, strict: bool, digits: &mut String) -> RunEnd {
    loop {
        let v = at(*j);
        if v == 0 || (!strict && is_space(v)) {
            return RunEnd::Stop;
        }
        if v == b'_' {
            if !digits.is_empty() && at(*j + 1).is_ascii_digit() {
                *j += 1;
                continue;
            }
            return if strict { RunEnd::Invalid } else { RunEnd::Underscore };
        }
        if !v.is_ascii_digit() {
            return RunEnd::Other;
        }
        digits.push(v as char);
        *j += 1;
    }
}

/// Parses CRuby's BigDecimal syntax. Strict: the whole string (but surrounding white
/// space) must be a number, else None. Loose: the longest valid prefix is taken and an
/// invalid start gives zero.
pub fn parse(text: &str, strict: bool) -> Option<Dec> {
    let s = text.as_bytes();
    if let Some(d) = special(s) {
        return Some(d);
    }
    let invalid = || if strict { None } else { Some(Dec::zero(false)) };
    let at = |j: usize| -> u8 { s.get(j).copied().unwrap_or(0) };
    let mut j = 0;
    while is_space(at(j)) {
        j += 1;
    }
    let mut neg = false;
    if at(j) == b'-' || at(j) == b'+' {
        neg = at(j) == b'-';
        j += 1;
    }
    let mut int_digits = String::new();
    let mut frac_digits = String::new();
    let mut exp_digits = String::new();
    let mut exp_neg = false;
    let (mut dot_seen, mut exp_seen) = (false, false);
    let mut stop = false; // the loose scan met its end
    loop {
        let v = at(j);
        if v == 0 {
            stop = true;
            break;
        }
        if !strict && is_space(v) {
            stop = true;
            break;
        }
        if v == b'_' {
            if !int_digits.is_empty() {
                let n = at(j + 1);
                if n == 0 || is_space(n) || n.is_ascii_digit() {
                    j += 1;
                    continue;
                }
                if !strict {
                    stop = true;
                    break;
                }
            }
            return invalid();
        }
        if !v.is_ascii_digit() {
            break;
        }
        int_digits.push(v as char);
        j += 1;
    }
    if !stop {
        if at(j) == b'.' {
            dot_seen = true;
            j += 1;
            match digit_run(&at, &mut j, strict, &mut frac_digits) {
                RunEnd::Invalid => return invalid(),
                RunEnd::Other => {}
                RunEnd::Stop => stop = true,
                RunEnd::Underscore => {
                    stop = true;
                    dot_seen = !frac_digits.is_empty();
                }
            }
        }
        if !stop && matches!(at(j), b'e' | b'E' | b'd' | b'D') {
            exp_seen = true;
            j += 1;
            if at(j) == b'-' || at(j) == b'+' {
                exp_neg = at(j) == b'-';
                j += 1;
            }
            match digit_run(&at, &mut j, strict, &mut exp_digits) {
                RunEnd::Invalid => return invalid(),
                RunEnd::Other => {}
                RunEnd::Stop => stop = true,
                RunEnd::Underscore => {
                    stop = true;
                    exp_seen = !exp_digits.is_empty();
                }
            }
        }
        if !stop && at(j) != 0 {
            while is_space(at(j)) {
                j += 1;
            }
            if at(j) != 0 && strict {
                return None;
            }
        }
    }
    if strict && (((int_digits.is_empty() || dot_seen) && frac_digits.is_empty()) || (exp_seen && exp_digits.is_empty())) {
        return None;
    }
    let _ = exp_seen;
    let digits = format!("{int_digits}{frac_digits}");
    let m: BigUint = if digits.is_empty() { BigUint::default() } else { digits.parse().unwrap_or_default() };
    // The exponent saturates: anything past EXP_LIMIT over- or underflows anyway.
    let mut e: i64 = 0;
    for c in exp_digits.bytes() {
        e = e.saturating_mul(10).saturating_add((c - b'0') as i64).min(EXP_LIMIT * 2);
    }
    if exp_neg {
        e = -e;
    }
    Some(finish(neg, m, e - frac_digits.len() as i64))
}

/// `±m × 10**exp`, overflowing to Infinity or underflowing to zero past EXP_LIMIT.
pub fn finish(neg: bool, m: BigUint, exp: i64) -> Dec {
    let d = Dec::new(neg, m, exp);
    if d.kind == Kind::Finite {
        let e10 = d.exponent10();
        if e10 > EXP_LIMIT {
            return Dec::inf(neg);
        }
        if e10 < -EXP_LIMIT {
            return Dec::zero(neg);
        }
    }
    d
}

/// Inserts a space after every `n` digits of each digit run (integer part, fraction,
/// mantissa), as CRuby's `to_s(n)` does; the exponent is left alone.
fn group(s: &str, n: usize) -> String {
    if n == 0 {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + s.len() / n + 1);
    let mut count = 0;
    let mut in_exp = false;
    for c in s.chars() {
        if in_exp {
            out.push(c);
            continue;
        }
        match c {
            ' ' | '-' | '+' => {}
            '.' => count = 0,
            'e' | 'E' => in_exp = true,
            _ => {
                count += 1;
                if count > n {
                    out.push(' ');
                    count = 1;
                }
            }
        }
        out.push(c);
    }
    out
}

fn special_string(d: &Dec, plus: u8) -> Option<String> {
    let sign = match plus {
        1 => " ",
        2 => "+",
        _ => "",
    };
    match d.kind {
        Kind::NaN => Some("NaN".into()),
        Kind::Inf if d.neg => Some("-Infinity".into()),
        Kind::Inf => Some(format!("{sign}Infinity")),
        Kind::Zero if d.neg => Some("-0.0".into()),
        Kind::Zero => Some(format!("{sign}0.0")),
        Kind::Finite => None,
    }
}

fn sign_prefix(d: &Dec, plus: u8) -> &'static str {
    if d.neg {
        "-"
    } else {
        match plus {
            1 => " ",
            2 => "+",
            _ => "",
        }
    }
}

/// `0.ddde±n`; `plus` is 0, 1 (a space before positive numbers) or 2 (a plus sign).
pub fn to_e_string(d: &Dec, grouping: usize, plus: u8) -> String {
    if let Some(s) = special_string(d, plus) {
        return s;
    }
    let s = format!("{}0.{}e{}", sign_prefix(d, plus), d.m, d.exponent10());
    group(&s, grouping)
}

/// Plain notation: `ddd.ddd` (at least one digit on each side of the point).
pub fn to_f_string(d: &Dec, grouping: usize, plus: u8) -> String {
    if let Some(s) = special_string(d, plus) {
        return s;
    }
    let digits = d.m.to_string();
    let body = if d.exp >= 0 {
        format!("{digits}{}.0", "0".repeat(d.exp as usize))
    } else {
        let k = (-d.exp) as usize;
        if k >= digits.len() {
            format!("0.{}{digits}", "0".repeat(k - digits.len()))
        } else {
            let (i, f) = digits.split_at(digits.len() - k);
            format!("{i}.{f}")
        }
    };
    group(&format!("{}{body}", sign_prefix(d, plus)), grouping)
}

/// The value of a finite Float as decimal digits: the shortest that round-trips
/// (`digits == 0`, at most DOUBLE_FIG of them kept) or correctly rounded to `digits`.
pub fn from_f64(f: f64, digits: usize) -> Dec {
    if f.is_nan() {
        return Dec::nan();
    }
    if f.is_infinite() {
        return Dec::inf(f < 0.0);
    }
    if f == 0.0 {
        return Dec::zero(f.is_sign_negative());
    }
    let s = if digits == 0 { format!("{:e}", f.abs()) } else { format!("{:.*e}", digits - 1, f.abs()) };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut ds: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    if digits == 0 && ds.len() > super::arith::DOUBLE_FIG as usize {
        ds.truncate(super::arith::DOUBLE_FIG as usize);
    }
    let n = ds.len() as i64;
    let m: BigUint = ds.parse().unwrap_or_default();
    Dec::new(f < 0.0, m, exp - (n - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_and_loose_parsing() {
        assert!(parse("1.5", true).is_some());
        assert!(parse("1.", true).is_none());
        assert!(parse(".5", true).is_some());
        assert!(parse("1e", true).is_none());
        assert!(parse("12_345.67E89", true).is_some());
        assert!(parse("12345_.67", true).is_none());
        assert!(parse("123x", true).is_none());
        assert_eq!(to_e_string(&parse("1.5abc", false).unwrap(), 0, 0), "0.15e1");
        assert_eq!(to_e_string(&parse("abc", false).unwrap(), 0, 0), "0.0");
    }

    #[test]
    fn formats() {
        let d = parse("1234567.891", true).unwrap();
        assert_eq!(to_f_string(&d, 3, 0), "123 456 7.891");
        assert_eq!(to_e_string(&d, 3, 2), "+0.123 456 789 1e7");
        assert_eq!(to_f_string(&parse("0.00001234", true).unwrap(), 2, 1), " 0.00 00 12 34");
        assert_eq!(to_f_string(&parse("100", true).unwrap(), 0, 0), "100.0");
    }

    #[test]
    fn floats() {
        assert_eq!(to_e_string(&from_f64(0.1, 0), 0, 0), "0.1e0");
        assert_eq!(to_e_string(&from_f64(1.0 / 3.0, 0), 0, 0), "0.3333333333333333e0");
        assert_eq!(to_e_string(&from_f64(1.0 / 3.0, 3), 0, 0), "0.333e0");
    }
}
