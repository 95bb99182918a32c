//! Time formatting: `strftime` (CRuby's `rb_strftime` directives, flags and widths),
//! `to_s`, `inspect`, `ctime`/`asctime` and `xmlschema`/`iso8601`.
//!
//! Invariant: formatting reads a `Tm` snapshot (see `time.rs`) and never calls Ruby code,
//! so the receiver cannot change underneath it.

use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{Pow, Signed, Zero};

use crate::core::encoding;
use crate::core::string;
use crate::core::time::{days_from_civil, tm_of, Tm};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const DAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
const MONTHS: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

#[derive(Clone, Copy, PartialEq)]
enum Pad {
    Default,
    None,
    Space,
    Zero,
}

struct Flags {
    pad: Pad,
    upcase: bool,
    swapcase: bool,
    width: Option<usize>,
    colons: usize,
}

/// ISO 8601 week-based year and week number.
fn iso_week(tm: &Tm) -> (i64, u32) {
    let wday = if tm.wday == 0 { 7 } else { tm.wday } as i64;
    let yday = tm.yday as i64;
    let week = (yday - wday + 10).div_euclid(7);
    let weeks_in = |y: i64| -> i64 {
        let jan1 = (days_from_civil(y, 1, 1) + 4).rem_euclid(7);
        let leap = crate::core::time::is_leap(y);
        if jan1 == 4 || (leap && jan1 == 3) {
            53
        } else {
            52
        }
    };
    if week < 1 {
        (tm.year.saturating_sub(1), weeks_in(tm.year.saturating_sub(1)) as u32)
    } else if week > weeks_in(tm.year) {
        (tm.year.saturating_add(1), 1)
    } else {
        (tm.year, week as u32)
    }
}

fn push_num(out: &mut Vec<u8>, f: &Flags, def_pad: u8, def_width: usize, v: i64) {
    let neg = v < 0;
    let digits = v.unsigned_abs().to_string();
    let width = f.width.unwrap_or(def_width);
    let pad = match f.pad {
        Pad::None => None,
        Pad::Space => Some(b' '),
        Pad::Zero => Some(b'0'),
        Pad::Default => Some(def_pad),
    };
    let len = digits.len() + neg as usize;
    match pad {
        Some(b'0') => {
            if neg {
                out.push(b'-');
            }
            for _ in len..width {
                out.push(b'0');
            }
        }
        Some(p) => {
            for _ in len..width {
                out.push(p);
            }
            if neg {
                out.push(b'-');
            }
        }
        None => {
            if neg {
                out.push(b'-');
            }
        }
    }
    out.extend_from_slice(digits.as_bytes());
}

fn push_text(out: &mut Vec<u8>, f: &Flags, s: &str, swap_means_lower: bool) {
    let s = if f.upcase {
        s.to_ascii_uppercase()
    } else if f.swapcase {
        if swap_means_lower {
            s.to_ascii_lowercase()
        } else {
            s.to_ascii_uppercase()
        }
    } else {
        s.to_string()
    };
    if let Some(w) = f.width.filter(|_| f.pad != Pad::None) {
        let pad = if f.pad == Pad::Zero { b'0' } else { b' ' };
        for _ in s.len()..w {
            out.push(pad);
        }
    }
    out.extend_from_slice(s.as_bytes());
}

/// Subsecond digits, truncated (not rounded), `n` of them.
fn frac_digits(tm: &Tm, n: usize) -> String {
    let scale: BigInt = Pow::pow(BigInt::from(10), n as u32);
    let v = (&tm.sub_num * scale).div_floor(&tm.sub_den);
    left_pad(v.to_string(), '0', n)
}

/// `s` padded on the left with `c` to `width` characters (`format!` widths stop at
/// u16::MAX; strftime widths go up to its size limit).
fn left_pad(s: String, c: char, width: usize) -> String {
    let n = s.chars().count();
    if n >= width {
        return s;
    }
    let mut out: String = std::iter::repeat_n(c, width - n).collect();
    out.push_str(&s);
    out
}

/// `%z` and its colon forms (CRuby's rules: the width widens the hour field; `_` pads it
/// with spaces before the sign).
fn push_offset(out: &mut Vec<u8>, f: &Flags, off: i32) {
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.unsigned_abs();
    let (h, m, s) = (a / 3600, a / 60 % 60, a % 60);
    let w = f.width.unwrap_or(0);
    let (prec, tail) = match f.colons {
        0 => (if w <= 5 { 2 } else { w - 3 }, format!("{m:02}")),
        1 => (if w <= 6 { 2 } else { w - 4 }, format!(":{m:02}")),
        2 => (if w <= 9 { 2 } else { w - 7 }, format!(":{m:02}:{s:02}")),
        _ => {
            if a % 3600 == 0 {
                (if w <= 3 { 2 } else { w - 1 }, String::new())
            } else if a % 60 == 0 {
                (if w <= 6 { 2 } else { w - 4 }, format!(":{m:02}"))
            } else {
                (if w <= 9 { 2 } else { w - 7 }, format!(":{m:02}:{s:02}"))
            }
        }
    };
    let hour = if f.pad == Pad::Space {
        left_pad(format!("{sign}{h}"), ' ', prec + 1)
    } else {
        format!("{sign}{}", left_pad(h.to_string(), '0', prec))
    };
    out.extend_from_slice(hour.as_bytes());
    out.extend_from_slice(tail.as_bytes());
}

/// Why `strftime` failed.
#[derive(Debug)]
pub enum StrftimeError {
    /// An incomplete trailing directive (ArgumentError).
    Incomplete(String),
    /// The result would pass CRuby's size limit, which grows with the format's length
    /// (Errno::ERANGE).
    TooLong,
}

/// Formats `tm` with `fmt`.
pub fn strftime(tm: &Tm, fmt: &[u8]) -> std::result::Result<Vec<u8>, StrftimeError> {
    // CRuby's buffer limit: about 512 KiB per format byte for one directive's width (the
    // whole result may reach twice that here).
    let limit = fmt.len().saturating_mul(512 << 10);
    let mut out = Vec::with_capacity(fmt.len() + 16);
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut f = Flags { pad: Pad::Default, upcase: false, swapcase: false, width: None, colons: 0 };
        loop {
            match fmt.get(i) {
                Some(b'-') => f.pad = Pad::None,
                Some(b'_') => f.pad = Pad::Space,
                Some(b'0') => f.pad = Pad::Zero,
                Some(b'^') => f.upcase = true,
                Some(b'#') => f.swapcase = true,
                _ => break,
            }
            i += 1;
        }
        let ws = i;
        while i < fmt.len() && fmt[i].is_ascii_digit() {
            i += 1;
        }
        // A width past a C int makes the directive unknown (copied as it is), as in CRuby.
        let mut bad_width = false;
        if i > ws {
            f.width = std::str::from_utf8(&fmt[ws..i]).ok().and_then(|s| s.parse::<u64>().ok()).filter(|&w| w <= i32::MAX as u64).map(|w| w as usize);
            bad_width = f.width.is_none();
        }
        while fmt.get(i) == Some(&b':') {
            f.colons += 1;
            i += 1;
        }
        let Some(&c) = fmt.get(i) else {
            return Err(StrftimeError::Incomplete(String::from_utf8_lossy(&fmt[start..]).into_owned()));
        };
        i += 1;
        let width = f.width.unwrap_or(0);
        if width >= limit || out.len().saturating_add(width) > 2 * limit {
            return Err(StrftimeError::TooLong);
        }
        if bad_width || (f.colons > 0 && c != b'z') {
            out.extend_from_slice(&fmt[start..i]);
            continue;
        }
        let h12 = if tm.hour % 12 == 0 { 12 } else { tm.hour % 12 } as i64;
        match c {
            b'Y' => {
                let y = tm.year;
                push_num(&mut out, &f, b'0', if y < 0 { 5 } else { 4 }, y);
            }
            b'C' => push_num(&mut out, &f, b'0', 2, tm.year.div_euclid(100)),
            b'y' => push_num(&mut out, &f, b'0', 2, tm.year.rem_euclid(100)),
            b'm' => push_num(&mut out, &f, b'0', 2, tm.mon as i64),
            b'd' => push_num(&mut out, &f, b'0', 2, tm.mday as i64),
            b'e' => push_num(&mut out, &f, b' ', 2, tm.mday as i64),
            b'j' => push_num(&mut out, &f, b'0', 3, tm.yday as i64),
            b'H' => push_num(&mut out, &f, b'0', 2, tm.hour as i64),
            b'k' => push_num(&mut out, &f, b' ', 2, tm.hour as i64),
            b'I' => push_num(&mut out, &f, b'0', 2, h12),
            b'l' => push_num(&mut out, &f, b' ', 2, h12),
            b'M' => push_num(&mut out, &f, b'0', 2, tm.min as i64),
            b'S' => push_num(&mut out, &f, b'0', 2, tm.sec as i64),
            b'L' | b'N' => {
                let n = f.width.unwrap_or(if c == b'L' { 3 } else { 9 });
                out.extend_from_slice(frac_digits(tm, n).as_bytes());
            }
            b'z' => push_offset(&mut out, &f, tm.utc_offset),
            b'Z' => {
                let z = tm.zone.clone().unwrap_or_default();
                push_text(&mut out, &f, &z, true);
            }
            b'A' => push_text(&mut out, &f, DAYS[tm.wday as usize], false),
            b'a' => push_text(&mut out, &f, &DAYS[tm.wday as usize][..3], false),
            b'B' => push_text(&mut out, &f, MONTHS[tm.mon as usize - 1], false),
            b'b' | b'h' => push_text(&mut out, &f, &MONTHS[tm.mon as usize - 1][..3], false),
            b'p' => push_text(&mut out, &f, if tm.hour < 12 { "AM" } else { "PM" }, true),
            b'P' => push_text(&mut out, &f, if tm.hour < 12 { "am" } else { "pm" }, false),
            b'u' => push_num(&mut out, &f, b'0', 1, if tm.wday == 0 { 7 } else { tm.wday as i64 }),
            b'w' => push_num(&mut out, &f, b'0', 1, tm.wday as i64),
            b'U' => push_num(&mut out, &f, b'0', 2, ((tm.yday as i64 - 1) - tm.wday as i64 + 7) / 7),
            b'W' => {
                let wd = (tm.wday as i64 + 6) % 7;
                push_num(&mut out, &f, b'0', 2, ((tm.yday as i64 - 1) - wd + 7) / 7);
            }
            b'G' => {
                let (y, _) = iso_week(tm);
                push_num(&mut out, &f, b'0', if y < 0 { 5 } else { 4 }, y);
            }
            b'g' => push_num(&mut out, &f, b'0', 2, iso_week(tm).0.rem_euclid(100)),
            b'V' => push_num(&mut out, &f, b'0', 2, iso_week(tm).1 as i64),
            b's' => {
                let s = tm.epoch.to_string();
                push_text(&mut out, &f, &s, false);
            }
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'%' => push_text(&mut out, &f, "%", false),
            b'c' | b'D' | b'F' | b'T' | b'R' | b'r' | b'x' | b'X' | b'v' => {
                let sub: &[u8] = match c {
                    b'c' => b"%a %b %e %H:%M:%S %Y",
                    b'D' | b'x' => b"%m/%d/%y",
                    b'F' => b"%Y-%m-%d",
                    b'T' | b'X' => b"%H:%M:%S",
                    b'R' => b"%H:%M",
                    b'r' => b"%I:%M:%S %p",
                    _ => b"%e-%^b-%4Y",
                };
                let s = String::from_utf8_lossy(&fixed(tm, sub)).into_owned();
                push_text(&mut out, &f, &s, false);
            }
            _ => out.extend_from_slice(&fmt[start..i]),
        }
    }
    if out.len() > 2 * limit {
        return Err(StrftimeError::TooLong);
    }
    Ok(out)
}

/// `strftime` of a fixed (always valid) format.
fn fixed(tm: &Tm, fmt: &[u8]) -> Vec<u8> {
    strftime(tm, fmt).unwrap_or_default()
}

fn m_strftime(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fmt = string::to_str_arg(ctx, args.pos[0])?;
    let fb = string::bytes(fmt).to_vec();
    let enc = string::encoding(fmt);
    let mut tm = tm_of(ctx, recv)?;
    if fb.windows(2).any(|w| w == b"%Z") || fb.contains(&b'Z') {
        if let Some(abbr) = crate::core::time::zone_abbreviation(ctx, recv)? {
            tm.zone = Some(string::to_rust_string_lossy(abbr));
        }
    }
    let out = match strftime(&tm, &fb) {
        Ok(o) => o,
        Err(StrftimeError::Incomplete(d)) => return Err(ctx.arg_error(&format!("invalid format: {d}"))),
        Err(StrftimeError::TooLong) => {
            let f = String::from_utf8_lossy(&fb).into_owned();
            return Err(crate::core::process::errno_error(ctx, libc::ERANGE, &f));
        }
    };
    let enc = if enc == encoding::US_ASCII && !out.is_ascii() { encoding::UTF_8 } else { enc };
    Ok(string::new_with_enc(ctx, out, enc))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    let utc = crate::core::time::is_utc_value(recv);
    let out = fixed(&tm, if utc { b"%Y-%m-%d %H:%M:%S UTC" } else { b"%Y-%m-%d %H:%M:%S %z" });
    Ok(string::new_with_enc(ctx, out, encoding::US_ASCII))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    let mut out = fixed(&tm, b"%Y-%m-%d %H:%M:%S");
    if !tm.sub_num.is_zero() {
        let ns = &tm.sub_num * 1_000_000_000i64;
        let (q, r) = ns.div_rem(&tm.sub_den);
        if r.is_zero() {
            let mut s = format!(".{:0>9}", q.to_string());
            while s.ends_with('0') {
                s.pop();
            }
            out.extend_from_slice(s.as_bytes());
        } else {
            let g = tm.sub_num.gcd(&tm.sub_den);
            out.extend_from_slice(format!(" {}/{}", &tm.sub_num / &g, &tm.sub_den / &g).as_bytes());
        }
    }
    if crate::core::time::is_utc_value(recv) {
        out.extend_from_slice(b" UTC");
    } else {
        let off = tm.utc_offset;
        let sign = if off < 0 { '-' } else { '+' };
        let a = off.unsigned_abs();
        out.extend_from_slice(format!(" {sign}{:02}{:02}", a / 3600, a / 60 % 60).as_bytes());
        if a % 60 != 0 {
            out.extend_from_slice(format!("{:02}", a % 60).as_bytes());
        }
    }
    Ok(string::new_with_enc(ctx, out, encoding::US_ASCII))
}

fn m_ctime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    let out = fixed(&tm, b"%a %b %e %T %Y");
    Ok(string::new_with_enc(ctx, out, encoding::US_ASCII))
}

fn m_xmlschema(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let digits = match args.pos.first() {
        Some(&d) => crate::core::integer::to_i64_arg(ctx, d)?.max(0) as usize,
        None => 0,
    };
    let tm = tm_of(ctx, recv)?;
    let mut out = if tm.year < 0 || tm.year > 9999 {
        let mut v = Vec::new();
        let y = tm.year;
        v.extend_from_slice(format!("{}{:04}", if y < 0 { "-" } else { "" }, y.unsigned_abs()).as_bytes());
        v.extend(fixed(&tm, b"-%m-%dT%H:%M:%S"));
        v
    } else {
        fixed(&tm, b"%Y-%m-%dT%H:%M:%S")
    };
    if digits > 0 {
        out.push(b'.');
        out.extend_from_slice(frac_digits(&tm, digits).as_bytes());
    }
    if crate::core::time::is_utc_value(recv) {
        out.push(b'Z');
    } else {
        out.extend(fixed(&tm, b"%:z"));
    }
    let _ = BigInt::zero().is_negative();
    Ok(string::new_with_enc(ctx, out, encoding::US_ASCII))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().time;
    crate::methods!(ctx, c, [
        ("strftime", m_strftime, [1], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("ctime", m_ctime, [0], Safe),
        ("asctime", m_ctime, [0], Safe),
        ("xmlschema", m_xmlschema, [0..=1], Safe),
        ("iso8601", m_xmlschema, [0..=1], Safe),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::{breakdown, Zone};
    use num_traits::One;

    fn f(secs: i64, zone: Zone, fmt: &str) -> String {
        let tm = breakdown(&BigInt::from(secs), &BigInt::one(), zone);
        String::from_utf8(strftime(&tm, fmt.as_bytes()).unwrap()).unwrap()
    }

    #[test]
    fn directives() {
        // 2000-01-02 03:04:05 UTC, a Sunday.
        let t = 946782245;
        assert_eq!(f(t, Zone::Utc, "%Y-%m-%d %H:%M:%S %z %Z"), "2000-01-02 03:04:05 +0000 UTC");
        assert_eq!(f(t, Zone::Utc, "%a %A %b %B %j %e %-d %3N %p %I %l %s"), "Sun Sunday Jan January 002  2 2 000 AM 03  3 946782245");
        assert_eq!(f(t, Zone::Fixed(-9000), "%z %:z %::z"), "-0230 -02:30 -02:30:00");
        assert_eq!(f(t, Zone::Utc, "%^a %#b %10A|%-10A|"), "SUN JAN     Sunday|Sunday|");
        assert_eq!(f(t, Zone::Utc, "%G-W%V-%u %U %W"), "1999-W52-7 01 00");
    }
}
