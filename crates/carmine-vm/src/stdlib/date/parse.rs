//! Date parsing: `Date._parse` (free-form, CRuby's heuristics for the common forms: ISO
//! 8601, RFC 2822/HTTP dates, "Jan 2 2001", "2 Jan 2001", slashed and dotted dates, times
//! with zones), `Date._iso8601` (strict) and `Date._strptime` (format directives).
//! Each returns CRuby's hash of the fields it found (`:year`, `:mon`, `:mday`, `:wday`,
//! `:yday`, `:hour`, `:min`, `:sec`, `:sec_fraction`, `:zone`, `:offset`, …).

use onig::{Regex, RegexOptions, Syntax};

use crate::core::{hash, string};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

#[derive(Default)]
struct Fields {
    year: Option<i64>,
    /// The year was written with fewer than three digits (completed when `comp`).
    short_year: bool,
    mon: Option<i64>,
    mday: Option<i64>,
    wday: Option<i64>,
    yday: Option<i64>,
    hour: Option<i64>,
    min: Option<i64>,
    sec: Option<i64>,
    frac: Option<(i64, i64)>,
    zone: Option<String>,
    cwyear: Option<i64>,
    cweek: Option<i64>,
    cwday: Option<i64>,
    wnum0: Option<i64>,
    wnum1: Option<i64>,
    seconds: Option<i64>,
    leftover: Option<String>,
}

fn re(p: &str) -> Regex {
    Regex::with_options(p, RegexOptions::REGEX_OPTION_IGNORECASE, Syntax::ruby()).expect("date pattern")
}

fn num(s: &str) -> i64 {
    s.trim_start_matches('\'').parse().unwrap_or(0)
}

fn month_of(s: &str) -> Option<i64> {
    let l = s.to_ascii_lowercase();
    MONTHS.iter().position(|m| l.starts_with(m)).map(|i| i as i64 + 1)
}

/// Seconds east of UTC for a zone written as "Z", "+09:00", "-0500", "UTC", "GMT+9", "EST" …
pub fn zone_offset(z: &str) -> Option<i32> {
    let t = z.trim();
    let l = t.to_ascii_lowercase();
    let named: &[(&str, i32)] = &[
        ("utc", 0), ("ut", 0), ("gmt", 0), ("z", 0), ("est", -5), ("edt", -4), ("cst", -6), ("cdt", -5), ("mst", -7), ("mdt", -6), ("pst", -8), ("pdt", -7),
        ("jst", 9), ("cet", 1), ("cest", 2), ("eet", 2), ("eest", 3), ("bst", 1), ("ist", 5), ("hst", -10), ("akst", -9), ("akdt", -8), ("wet", 0), ("west", 1),
    ];
    if let Some(&(_, h)) = named.iter().find(|(n, _)| *n == l) {
        return Some(h * 3600);
    }
    let rest = l.strip_prefix("gmt").or_else(|| l.strip_prefix("utc")).unwrap_or(&l);
    let (sign, digits) = match rest.as_bytes().first()? {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        _ => return None,
    };
    let (h, m, s) = if let Some((h, ms)) = digits.split_once(':') {
        let (m, s) = ms.split_once(':').unwrap_or((ms, "0"));
        (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?, s.parse::<i32>().ok()?)
    } else if digits.contains(['.', ',']) {
        let f: f64 = digits.replace(',', ".").parse().ok()?;
        return Some(sign * (f * 3600.0).round() as i32);
    } else {
        match digits.len() {
            1 | 2 => (digits.parse().ok()?, 0, 0),
            3 => (digits[..1].parse().ok()?, digits[1..].parse().ok()?, 0),
            4 => (digits[..2].parse().ok()?, digits[2..].parse().ok()?, 0),
            6 => (digits[..2].parse().ok()?, digits[2..4].parse().ok()?, digits[4..].parse().ok()?),
            _ => return None,
        }
    };
    Some(sign * (h * 3600 + m * 60 + s))
}

/// The time part: "10:20", "10:20:30.5", "10pm", with a zone after it. Removes what it
/// used from `s` (replaced by spaces, as CRuby does, so other patterns see word breaks).
fn parse_time(s: &mut String, f: &mut Fields) {
    let r = re(r"(\d+):(\d+)(?::(\d+)(?:[,.](\d+))?)?\s*(?:([ap])(?:m\b|\.m\.))?(?:\s*((?:gmt|utc?)?[-+]\d+(?:[,.:]\d+(?::\d+)?)?|(?-i:[[:alpha:].\s]+)(?:standard|daylight)\s+time\b|(?-i:[[:alpha:]]+)(?:\sdst)?\b|z\b))?");
    let caps = r.captures(s).map(|c| (c.pos(0), (1..=6).map(|i| c.at(i).map(str::to_string)).collect::<Vec<_>>()));
    let r2 = re(r"\b(\d+)\s*([ap])(?:m\b|\.m\.)");
    if let Some((Some((a, b)), g)) = caps {
        let mut hour = num(g[0].as_deref().unwrap_or("0"));
        if let Some(p) = &g[4] {
            hour = hour % 12 + if p.eq_ignore_ascii_case("p") { 12 } else { 0 };
        }
        f.hour = Some(hour);
        f.min = g[1].as_deref().map(num);
        f.sec = g[2].as_deref().map(num);
        if let Some(fr) = &g[3] {
            f.frac = Some((fr.parse().unwrap_or(0), 10i64.pow(fr.len().min(18) as u32)));
        }
        if let Some(z) = &g[5] {
            let z = z.trim().to_string();
            if !z.is_empty() && (zone_offset(&z).is_some() || z.chars().all(|c| c.is_ascii_alphabetic())) {
                f.zone = Some(z);
            }
        }
        s.replace_range(a..b, &" ".repeat(b - a));
    } else if let Some(c) = r2.captures(s) {
        let h = num(c.at(1).unwrap_or("0"));
        let pm = c.at(2).is_some_and(|p| p.eq_ignore_ascii_case("p"));
        f.hour = Some(h % 12 + if pm { 12 } else { 0 });
        if let Some((a, b)) = c.pos(0) {
            s.replace_range(a..b, &" ".repeat(b - a));
        }
    }
}

fn blank(s: &mut String, pos: Option<(usize, usize)>) {
    if let Some((a, b)) = pos {
        s.replace_range(a..b, &" ".repeat(b - a));
    }
}

fn parse_fields(input: &str, comp: bool) -> Fields {
    let mut f = Fields::default();
    let mut s = input.to_string();
    // Day of the week.
    if let Some(c) = re(r"\b(sun|mon|tue|wed|thu|fri|sat)[^-/\d\s]*").captures(&s.clone()) {
        let d = c.at(1).unwrap_or("").to_ascii_lowercase();
        f.wday = DAYS.iter().position(|x| *x == d).map(|i| i as i64);
        blank(&mut s, c.pos(0));
    }
    parse_time(&mut s, &mut f);
    let era = r"(?:\s*,?\s*(c(?:e|\.e\.)|b(?:ce|\.c\.e\.)|a(?:d|\.d\.)|b(?:c|\.c\.))?\s*('?-?\d+(?:(?:st|nd|rd|th)\b)?))?";
    let mon = "(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)";
    let is_bc = |e: Option<&str>| e.is_some_and(|e| e.to_ascii_lowercase().starts_with('b'));
    if let Some(c) = re(&format!(r"'?(\d+)(?:st|nd|rd|th)?[^-\d\s]*\s*{mon}[^-\d\s']*{era}")).captures(&s.clone()) {
        // European: 3 Feb 2001, 3/feb/2001, 2001 feb 3.
        s3e(&mut f, c.at(4), month_of(c.at(2).unwrap_or("")), c.at(1), is_bc(c.at(3)));
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(&format!(r"\b{mon}[^-\d\s']*\s*('?\d+)(?:st|nd|rd|th)?\b[^-\d\s']*{era}")).captures(&s.clone()) {
        // American: Feb 3 2001, Feb 3, 2001, feb/2001.
        s3e(&mut f, c.at(4), month_of(c.at(1).unwrap_or("")), c.at(2), is_bc(c.at(3)));
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(r"('?[-+]?\d+)-(\d+)-('?-?\d+)").captures(&s.clone()) {
        // ISO 8601 (2001-02-03), or 03-02-2001.
        let m = c.at(2).map(num);
        s3e(&mut f, c.at(1), m, c.at(3), false);
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(&format!(r"('?-?\d+)-{mon}[^-/.]*-('?-?\d+)")).captures(&s.clone()) {
        // VMS: 3-feb-2001.
        s3e(&mut f, c.at(3), month_of(c.at(2).unwrap_or("")), c.at(1), false);
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(&format!(r"\b{mon}[^-/.]*-('?-?\d+)(?:-('?-?\d+))?")).captures(&s.clone()) {
        // VMS: feb-3-2001, feb-2001.
        s3e(&mut f, c.at(3), month_of(c.at(1).unwrap_or("")), c.at(2), false);
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(r"('?-?\d+)/\s*('?\d+)(?:\D\s*('?-?\d+))?").captures(&s.clone()) {
        // Slashes: 2001/2/3, or (US) 2/3/2001.
        let (a, b, cc) = (c.at(1).unwrap_or(""), c.at(2), c.at(3));
        if a.trim_start_matches(['\'', '-']).len() > 2 || a.starts_with('\'') {
            s3e(&mut f, Some(a), b.map(num), cc, false);
        } else {
            s3e(&mut f, cc, Some(num(a)), b, false);
        }
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(r"('?-?\d+)\.\s*('?\d+)\.\s*('?-?\d+)").captures(&s.clone()) {
        // Dots: 2001.2.3, or 3.2.2001.
        let (a, b, cc) = (c.at(1).unwrap_or(""), c.at(2), c.at(3).unwrap_or(""));
        if a.trim_start_matches(['\'', '-']).len() > 2 || a.starts_with('\'') {
            s3e(&mut f, Some(a), b.map(num), Some(cc), false);
        } else {
            s3e(&mut f, Some(a), b.map(num), Some(cc), false);
        }
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(&format!(r"\b{mon}\S*")).captures(&s.clone()) {
        f.mon = month_of(c.at(1).unwrap_or(""));
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(r"(?<![\d.])([-+]?)(\d{2,14})(?:\s*t?\s*(\d{2,6})?(?:[,.](\d*))?)?(?![\d.])").captures(&s.clone()) {
        // Digits only (CRuby's "ddd"): DD, DDD (year day), MMDD, YYDDD, YYMMDD, YYYYDDD,
        // YYYYMMDD, then hours, minutes and seconds.
        let d = c.at(2).unwrap_or("");
        let n = |a: usize, b: usize| num(&d[a..b]);
        match d.len() {
            2 => f.mday = Some(n(0, 2)),
            3 => f.yday = Some(n(0, 3)),
            4 => {
                f.mon = Some(n(0, 2));
                f.mday = Some(n(2, 4));
            }
            5 => {
                f.year = Some(n(0, 2));
                f.short_year = true;
                f.yday = Some(n(2, 5));
            }
            6 => {
                f.year = Some(n(0, 2));
                f.short_year = true;
                f.mon = Some(n(2, 4));
                f.mday = Some(n(4, 6));
            }
            7 => {
                f.year = Some(n(0, 4));
                f.yday = Some(n(4, 7));
            }
            l => {
                f.year = Some(n(0, 4));
                f.mon = Some(n(4, 6));
                f.mday = Some(n(6, 8));
                if l >= 10 {
                    f.hour = Some(n(8, 10));
                }
                if l >= 12 {
                    f.min = Some(n(10, 12));
                }
                if l >= 14 {
                    f.sec = Some(n(12, 14));
                }
            }
        }
        if c.at(1) == Some("-") {
            f.year = f.year.map(|y| -y);
        }
        if let Some(t) = c.at(3) {
            let tn = |a: usize, b: usize| t.get(a..b).map(num);
            f.hour = tn(0, 2);
            f.min = tn(2, 4);
            f.sec = tn(4, 6);
        }
        blank(&mut s, c.pos(0));
    } else if let Some(c) = re(r"(?<!\d)'(\d+)\b").captures(&s.clone()) {
        f.year = Some(num(c.at(1).unwrap_or("0")));
        f.short_year = true;
        blank(&mut s, c.pos(0));
    }
    if f.zone.is_none() {
        if let Some(c) = re(r"(?:\s|^)([-+]\d{2}:?\d{2}|z\b|utc\b|gmt\b)").captures(&s.clone()) {
            f.zone = c.at(1).map(str::to_string);
        }
    }
    if comp && f.short_year {
        if let Some(y) = f.year {
            if (0..100).contains(&y) {
                f.year = Some(if y >= 69 { y + 1900 } else { y + 2000 });
            }
        }
    }
    f
}

/// Sets year, month and day from the three parts of a date as written, swapping year and
/// day when the "day" is the one that looks like a year (an apostrophe, or more than two
/// digits), as CRuby's s3e does.
fn s3e(f: &mut Fields, y: Option<&str>, m: Option<i64>, d: Option<&str>, bc: bool) {
    let strip = |x: &str| x.trim_end_matches(|c: char| c.is_ascii_alphabetic()).to_string();
    let looks_like_year = |x: &str| x.starts_with('\'') || strip(x).trim_start_matches(['-', '+']).len() > 2;
    let (y, d) = match (y, d) {
        (y, Some(dd)) if looks_like_year(dd) && !y.is_some_and(looks_like_year) => (Some(dd), y),
        other => other,
    };
    if let Some(yy) = y {
        let digits = strip(yy);
        let v = num(&digits);
        f.year = Some(if bc { -v + 1 } else { v });
        f.short_year = !yy.starts_with('\'') && digits.trim_start_matches(['-', '+']).len() < 3 && !yy.starts_with(['-', '+']);
    }
    f.mon = m;
    if let Some(dd) = d {
        f.mday = Some(num(&strip(dd)));
    }
}

fn to_hash(ctx: &mut Ctx, f: &Fields) -> Result<Value> {
    let h = hash::new(ctx);
    let set = |ctx: &mut Ctx, k: &str, v: Value| -> Result<()> {
        let key = Value::symbol(ctx.intern(k));
        hash::aset(ctx, h, key, v)
    };
    for (k, v) in [("year", f.year), ("mon", f.mon), ("mday", f.mday), ("wday", f.wday), ("yday", f.yday), ("cwyear", f.cwyear), ("cweek", f.cweek), ("cwday", f.cwday), ("wnum0", f.wnum0), ("wnum1", f.wnum1), ("hour", f.hour), ("min", f.min), ("sec", f.sec), ("seconds", f.seconds)] {
        if let Some(v) = v {
            set(ctx, k, Value::fixnum(v))?;
        }
    }
    if let Some((n, d)) = f.frac {
        let r = crate::core::rational::new_reduced(ctx, Value::fixnum(n), Value::fixnum(d))?;
        set(ctx, "sec_fraction", r)?;
    }
    if let Some(z) = &f.zone {
        let zs = string::new_utf8(ctx, z);
        set(ctx, "zone", zs)?;
        match zone_offset(z) {
            Some(o) => set(ctx, "offset", Value::fixnum(o as i64))?,
            None => set(ctx, "offset", Value::NIL)?,
        }
    }
    if let Some(l) = &f.leftover {
        let ls = string::new_utf8(ctx, l);
        set(ctx, "leftover", ls)?;
    }
    Ok(h)
}

pub fn parse_to_hash(ctx: &mut Ctx, s: &str, comp: bool) -> Result<Value> {
    let f = parse_fields(s, comp);
    to_hash(ctx, &f)
}

/// `Date._iso8601`: calendar, ordinal and week dates, with an optional time and zone.
pub fn iso8601_to_hash(ctx: &mut Ctx, s: &str) -> Result<Value> {
    let mut f = Fields::default();
    let t = s.trim();
    let time = r"(?:t(\d{2}):(\d{2})(?::(\d{2})(?:[,.](\d+))?)?(z|[-+]\d{2}(?::?\d{2})?)?)?";
    if let Some(c) = re(&format!(r"\A([-+]?\d{{4,}})-(\d{{2}})-(\d{{2}}){time}\z")).captures(t).or_else(|| re(&format!(r"\A([-+]?\d{{4}})(\d{{2}})(\d{{2}}){time}\z")).captures(t)) {
        f.year = c.at(1).map(num);
        f.mon = c.at(2).map(num);
        f.mday = c.at(3).map(num);
        f.hour = c.at(4).map(num);
        f.min = c.at(5).map(num);
        f.sec = c.at(6).map(num);
        f.frac = c.at(7).map(|fr| (fr.parse().unwrap_or(0), 10i64.pow(fr.len().min(18) as u32)));
        f.zone = c.at(8).map(str::to_string);
    } else if let Some(c) = re(&format!(r"\A([-+]?\d{{4,}})-(\d{{3}}){time}\z")).captures(t) {
        f.year = c.at(1).map(num);
        f.yday = c.at(2).map(num);
        f.hour = c.at(3).map(num);
        f.min = c.at(4).map(num);
        f.sec = c.at(5).map(num);
        f.zone = c.at(7).map(str::to_string);
    } else if let Some(c) = re(&format!(r"\A([-+]?\d{{4,}})-w(\d{{2}})-(\d){time}\z")).captures(t) {
        f.cwyear = c.at(1).map(num);
        f.cweek = c.at(2).map(num);
        f.cwday = c.at(3).map(num);
        f.hour = c.at(4).map(num);
        f.min = c.at(5).map(num);
        f.sec = c.at(6).map(num);
        f.zone = c.at(8).map(str::to_string);
    } else if let Some(c) = re(r"\A(\d{2}):(\d{2})(?::(\d{2})(?:[,.](\d+))?)?(z|[-+]\d{2}(?::?\d{2})?)?\z").captures(t) {
        f.hour = c.at(1).map(num);
        f.min = c.at(2).map(num);
        f.sec = c.at(3).map(num);
        f.frac = c.at(4).map(|fr| (fr.parse().unwrap_or(0), 10i64.pow(fr.len().min(18) as u32)));
        f.zone = c.at(5).map(str::to_string);
    }
    to_hash(ctx, &f)
}

/// Reads an unsigned number of at most `width` digits at `s[*i..]` (with a sign when
/// `signed`).
fn take_num(s: &[u8], i: &mut usize, width: usize, signed: bool) -> Option<i64> {
    let start = *i;
    let mut neg = false;
    if signed && *i < s.len() && (s[*i] == b'-' || s[*i] == b'+') {
        neg = s[*i] == b'-';
        *i += 1;
    }
    let ds = *i;
    while *i < s.len() && *i - ds < width && s[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == ds {
        *i = start;
        return None;
    }
    let v: i64 = std::str::from_utf8(&s[ds..*i]).ok()?.parse().ok()?;
    Some(if neg { -v } else { v })
}

fn take_name(s: &[u8], i: &mut usize, names: &[&str]) -> Option<i64> {
    let rest = std::str::from_utf8(&s[*i..]).ok()?.to_ascii_lowercase();
    let full: Vec<String> = match names.len() {
        12 => ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"].iter().map(|x| x.to_string()).collect(),
        _ => ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].iter().map(|x| x.to_string()).collect(),
    };
    for (k, n) in full.iter().enumerate() {
        if rest.starts_with(n.as_str()) {
            *i += n.len();
            return Some(k as i64);
        }
    }
    for (k, n) in names.iter().enumerate() {
        if rest.starts_with(n) {
            *i += n.len();
            return Some(k as i64);
        }
    }
    None
}

/// `Date._strptime(string, format)`: None when the string does not match.
pub fn strptime_to_hash(ctx: &mut Ctx, s: &str, fmt: &str) -> Result<Option<Value>> {
    let mut f = Fields::default();
    if !strptime_into(s.as_bytes(), &mut 0, fmt.as_bytes(), &mut f) {
        return Ok(None);
    }
    to_hash(ctx, &f).map(Some)
}

fn strptime_into(s: &[u8], pos: &mut usize, fmt: &[u8], f: &mut Fields) -> bool {
    let mut i = *pos;
    let mut k = 0;
    let mut century: Option<i64> = None;
    let mut pm: Option<bool> = None;
    while k < fmt.len() {
        let c = fmt[k];
        if c.is_ascii_whitespace() {
            while i < s.len() && s[i].is_ascii_whitespace() {
                i += 1;
            }
            k += 1;
            continue;
        }
        if c != b'%' || k + 1 >= fmt.len() {
            if i >= s.len() || s[i] != c {
                return false;
            }
            i += 1;
            k += 1;
            continue;
        }
        k += 1;
        // Flags and widths are accepted and ignored (except `:` for %z).
        while k < fmt.len() && matches!(fmt[k], b'-' | b'_' | b'0' | b'^' | b'#' | b':') {
            k += 1;
        }
        while k < fmt.len() && fmt[k].is_ascii_digit() {
            k += 1;
        }
        let Some(&d) = fmt.get(k) else { return false };
        k += 1;
        let ok = match d {
            b'Y' => take_num(s, &mut i, 10, true).map(|v| f.year = Some(v)).is_some(),
            b'C' => take_num(s, &mut i, 2, true).map(|v| century = Some(v)).is_some(),
            b'y' => take_num(s, &mut i, 2, false).map(|v| {
                f.year = Some(v + if v >= 69 { 1900 } else { 2000 });
            }).is_some(),
            b'm' => take_num(s, &mut i, 2, false).map(|v| f.mon = Some(v)).is_some_and(|_| f.mon.is_some_and(|m| (1..=12).contains(&m))),
            b'd' | b'e' => {
                while i < s.len() && s[i] == b' ' {
                    i += 1;
                }
                take_num(s, &mut i, 2, false).map(|v| f.mday = Some(v)).is_some()
            }
            b'j' => take_num(s, &mut i, 3, false).map(|v| f.yday = Some(v)).is_some(),
            b'H' | b'k' => {
                while i < s.len() && s[i] == b' ' {
                    i += 1;
                }
                take_num(s, &mut i, 2, false).map(|v| f.hour = Some(v)).is_some()
            }
            b'I' | b'l' => take_num(s, &mut i, 2, false).map(|v| f.hour = Some(v)).is_some(),
            b'M' => take_num(s, &mut i, 2, false).map(|v| f.min = Some(v)).is_some(),
            b'S' => take_num(s, &mut i, 2, false).map(|v| f.sec = Some(v)).is_some(),
            b'L' | b'N' => {
                let st = i;
                while i < s.len() && s[i].is_ascii_digit() {
                    i += 1;
                }
                let digits = std::str::from_utf8(&s[st..i]).unwrap_or("0");
                f.frac = Some((digits.parse().unwrap_or(0), 10i64.pow(digits.len().min(18) as u32)));
                i > st
            }
            b'p' | b'P' => {
                let rest = std::str::from_utf8(&s[i..]).unwrap_or("").to_ascii_lowercase();
                let found = ["am", "pm", "a.m.", "p.m."].iter().find(|x| rest.starts_with(*x));
                match found {
                    Some(x) => {
                        pm = Some(x.starts_with('p'));
                        i += x.len();
                        true
                    }
                    None => false,
                }
            }
            b'b' | b'h' | b'B' => take_name(s, &mut i, &MONTHS).map(|v| f.mon = Some(v + 1)).is_some(),
            b'a' | b'A' => take_name(s, &mut i, &DAYS).map(|v| f.wday = Some(v)).is_some(),
            b'u' => take_num(s, &mut i, 1, false).map(|v| f.cwday = Some(v)).is_some(),
            b'w' => take_num(s, &mut i, 1, false).map(|v| f.wday = Some(v)).is_some(),
            b'V' => take_num(s, &mut i, 2, false).map(|v| f.cweek = Some(v)).is_some(),
            b'U' => take_num(s, &mut i, 2, false).map(|v| f.wnum0 = Some(v)).is_some(),
            b'W' => take_num(s, &mut i, 2, false).map(|v| f.wnum1 = Some(v)).is_some(),
            b'g' => take_num(s, &mut i, 2, false).map(|v| f.cwyear = Some(v + if v >= 69 { 1900 } else { 2000 })).is_some(),
            b'G' => take_num(s, &mut i, 10, true).map(|v| f.cwyear = Some(v)).is_some(),
            b's' => take_num(s, &mut i, 20, true).map(|v| f.seconds = Some(v)).is_some(),
            b'z' | b'Z' => {
                let st = i;
                while i < s.len() && (s[i].is_ascii_alphanumeric() || matches!(s[i], b'+' | b'-' | b':')) {
                    i += 1;
                }
                let z = String::from_utf8_lossy(&s[st..i]).to_string();
                let ok = !z.is_empty();
                f.zone = Some(z);
                ok
            }
            b'%' => {
                let ok = s.get(i) == Some(&b'%');
                i += 1;
                ok
            }
            b'n' | b't' => {
                while i < s.len() && s[i].is_ascii_whitespace() {
                    i += 1;
                }
                true
            }
            b'F' => strptime_into(s, &mut i, b"%Y-%m-%d", f),
            b'T' | b'X' => strptime_into(s, &mut i, b"%H:%M:%S", f),
            b'R' => strptime_into(s, &mut i, b"%H:%M", f),
            b'D' | b'x' => strptime_into(s, &mut i, b"%m/%d/%y", f),
            b'r' => strptime_into(s, &mut i, b"%I:%M:%S %p", f),
            b'c' => strptime_into(s, &mut i, b"%a %b %e %H:%M:%S %Y", f),
            b'v' => strptime_into(s, &mut i, b"%e-%b-%Y", f),
            b'+' => strptime_into(s, &mut i, b"%a %b %e %H:%M:%S %Z %Y", f),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    if let (Some(c), Some(y)) = (century, f.year) {
        f.year = Some(c * 100 + y.rem_euclid(100));
    }
    if let (Some(p), Some(h)) = (pm, f.hour) {
        f.hour = Some(h % 12 + if p { 12 } else { 0 });
    }
    if i < s.len() {
        f.leftover = Some(String::from_utf8_lossy(&s[i..]).to_string());
    }
    *pos = i;
    true
}
