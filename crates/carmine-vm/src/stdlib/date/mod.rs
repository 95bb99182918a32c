//! `date_core`: the native half of CRuby's `date` library — `Date` and `DateTime` — on
//! which `/usr/lib/ruby/3.x/date.rb` (Date::Infinity, `infinite?`) and `time.rb`
//! (`Time.parse`, `Time#iso8601` …) load.
//!
//! Invariants:
//! - A date is its local civil Julian Day Number `jd`, the local seconds into that day
//!   `sec` (0 for a Date), nanoseconds `ns`, the UTC offset `of` in seconds, and the day
//!   of calendar reform `sg` (ITALY by default; ±infinity for the proleptic Gregorian or
//!   Julian calendar). Civil fields are computed from `jd` and `sg` when asked.
//! - Date and DateTime objects are immutable: every operation makes a new one of the
//!   receiver's class.
//! - Parsing (`parse.rs`) returns CRuby's hashes (`Date._parse`, `_iso8601`, `_strptime`);
//!   the constructors build dates from those hashes.

mod parse;

use crate::core::module_methods::define_class_under;
use crate::core::{array, hash, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const ITALY: f64 = 2299161.0;
const ENGLAND: f64 = 2361222.0;
const DAY: i64 = 86400;
const MONTHNAMES: [&str; 12] = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYNAMES: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

#[derive(Clone, Copy)]
pub struct DateObj {
    jd: i64,
    sec: i64,
    ns: i64,
    of: i32,
    sg: f64,
}

crate::data_obj!(DateObj);

// ---- calendar arithmetic ----

fn floor_div(a: i64, b: i64) -> i64 {
    a.div_euclid(b)
}

/// The Julian Day Number of a civil date in the calendar `sg` selects.
pub fn civil_to_jd(y: i64, m: i64, d: i64, sg: f64) -> i64 {
    let (mut y2, mut m2) = (y, m);
    if m2 <= 2 {
        y2 -= 1;
        m2 += 12;
    }
    let a = floor_div(y2, 100);
    let b = 2 - a + floor_div(a, 4);
    let jd = floor_div(1461 * (y2 + 4716), 4) + floor_div(306001 * (m2 + 1), 10000) + d + b - 1524;
    if (jd as f64) < sg {
        jd - b
    } else {
        jd
    }
}

/// (year, month, day) of a Julian Day Number.
pub fn jd_to_civil(jd: i64, sg: f64) -> (i64, i64, i64) {
    let a = if (jd as f64) < sg {
        jd
    } else {
        let x = floor_div(4 * jd - 7468865, 146097);
        jd + 1 + x - floor_div(x, 4)
    };
    let b = a + 1524;
    let c = floor_div(20 * b - 2442, 7305);
    let d = floor_div(1461 * c, 4);
    let e = floor_div(10000 * (b - d), 306001);
    let dom = b - d - floor_div(306001 * e, 10000);
    let m = if e <= 13 { e - 1 } else { e - 13 };
    let y = if m <= 2 { c - 4715 } else { c - 4716 };
    (y, m, dom)
}

fn leap_gregorian(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// The number of the month's last day (not its count of days: October 1582 ends on the
/// 31st though ten days were skipped).
fn days_in_month(y: i64, m: i64, sg: f64) -> i64 {
    let next = if m == 12 { civil_to_jd(y + 1, 1, 1, sg) } else { civil_to_jd(y, m + 1, 1, sg) };
    jd_to_civil(next - 1, sg).2
}

/// The JD of a civil date given as Ruby does (negative month/day count from the end);
/// None if there is no such date.
pub fn valid_civil(y: i64, m: i64, d: i64, sg: f64) -> Option<i64> {
    let m = if m < 0 { m + 13 } else { m };
    if !(1..=12).contains(&m) {
        return None;
    }
    let dim = days_in_month(y, m, sg);
    let d = if d < 0 { dim + d + 1 } else { d };
    if d < 1 || d > dim {
        return None;
    }
    let jd = civil_to_jd(y, m, d, sg);
    // Days skipped by the calendar reform do not exist.
    (jd_to_civil(jd, sg) == (y, m, d)).then_some(jd)
}

impl DateObj {
    fn civil(&self) -> (i64, i64, i64) {
        jd_to_civil(self.jd, self.sg)
    }
    fn wday(&self) -> i64 {
        (self.jd + 1).rem_euclid(7)
    }
    fn yday(&self) -> i64 {
        let (y, _, _) = self.civil();
        self.jd - civil_to_jd(y, 1, 1, self.sg) + 1
    }
    /// ISO 8601 week-based year, week and day of week (1 = Monday).
    fn commercial(&self) -> (i64, i64, i64) {
        let cwday = (self.jd).rem_euclid(7) + 1;
        let (y, _, _) = self.civil();
        let week1 = |yy: i64| {
            let jan4 = civil_to_jd(yy, 1, 4, self.sg);
            jan4 - jan4.rem_euclid(7)
        };
        let mut cy = y + 1;
        if self.jd < week1(cy) {
            cy = y;
            if self.jd < week1(cy) {
                cy = y - 1;
            }
        }
        (cy, (self.jd - week1(cy)) / 7 + 1, cwday)
    }
    /// Seconds from the Unix epoch (UTC).
    fn epoch(&self) -> i64 {
        (self.jd - 2440588) * DAY + self.sec - self.of as i64
    }
    fn tm(&self) -> crate::core::time::Tm {
        let (y, m, d) = self.civil();
        crate::core::time::Tm {
            year: y,
            mon: m as u32,
            mday: d as u32,
            hour: (self.sec / 3600) as u32,
            min: (self.sec / 60 % 60) as u32,
            sec: (self.sec % 60) as u32,
            wday: self.wday() as u32,
            yday: self.yday() as u32,
            isdst: false,
            utc_offset: self.of,
            zone: Some(offset_string(self.of, true)),
            sub_num: self.ns.into(),
            sub_den: 1_000_000_000i64.into(),
            epoch: self.epoch().into(),
        }
    }
}

fn offset_string(of: i32, colon: bool) -> String {
    let sign = if of < 0 { '-' } else { '+' };
    let a = of.unsigned_abs();
    if colon {
        format!("{sign}{:02}:{:02}", a / 3600, a / 60 % 60)
    } else {
        format!("{sign}{:02}{:02}", a / 3600, a / 60 % 60)
    }
}

// ---- objects ----

fn date_class(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("Date");
    crate::core::module::body(ctx.c().object).const_get(id).map_or(ctx.c().object, |e| e.value)
}

fn datetime_class(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("DateTime");
    crate::core::module::body(ctx.c().object).const_get(id).map_or(ctx.c().object, |e| e.value)
}

fn is_datetime(ctx: &mut Ctx, v: Value) -> bool {
    let dt = datetime_class(ctx);
    object::is_a(ctx, v, dt)
}

fn get(ctx: &mut Ctx, v: Value) -> Result<DateObj> {
    match data_ref::<DateObj>(v) {
        Some(d) => Ok(*d),
        None => {
            let name = object::type_name_for_error(ctx, v);
            Err(ctx.type_error(&format!("expected Date, got {name}")))
        }
    }
}

fn new_obj(ctx: &mut Ctx, klass: Value, d: DateObj) -> Value {
    object::new_data(ctx, klass, Box::new(d))
}

/// A new date of `like`'s class.
fn derive(ctx: &mut Ctx, like: Value, d: DateObj) -> Value {
    let klass = object::real_class_of(ctx, like);
    new_obj(ctx, klass, d)
}

fn date_error(ctx: &mut Ctx, msg: &str) -> crate::error::Unwind {
    let date = date_class(ctx);
    let id = ctx.intern("Error");
    let c = crate::core::module::body(date).const_get(id).map_or(ctx.c().argument_error, |e| e.value);
    ctx.raise(c, msg)
}

fn sg_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<f64> {
    match v {
        Some(&v) => crate::core::numeric::to_f64(ctx, v),
        None => Ok(ITALY),
    }
}

fn int_arg(ctx: &mut Ctx, v: Option<&Value>, default: i64) -> Result<i64> {
    match v {
        Some(&v) if !v.is_nil() => {
            if integer::is_integer(v) {
                integer::to_i64_arg(ctx, v)
            } else {
                Ok(crate::core::numeric::to_f64(ctx, v)?.floor() as i64)
            }
        }
        _ => Ok(default),
    }
}

/// An offset argument: seconds, a fraction of a day (Rational/Float), or "+09:00".
fn offset_arg(ctx: &mut Ctx, v: Value) -> Result<i32> {
    if string::is_string(v) {
        let s = string::to_rust_string_lossy(v);
        return parse::zone_offset(&s).ok_or_else(|| ctx.arg_error("invalid offset"));
    }
    if integer::is_integer(v) {
        // An Integer offset is in days.
        return Ok((integer::to_i64_arg(ctx, v)? * DAY) as i32);
    }
    let f = crate::core::numeric::to_f64(ctx, v)?;
    Ok((f * DAY as f64).round() as i32)
}

// ---- constructors ----

/// `Date.civil(year = -4712, month = 1, mday = 1, start = ITALY)`.
fn s_civil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), -4712)?;
    let m = int_arg(ctx, args.pos.get(1), 1)?;
    let d = int_arg(ctx, args.pos.get(2), 1)?;
    let sg = sg_arg(ctx, args.pos.get(3))?;
    let Some(jd) = valid_civil(y, m, d, sg) else { return Err(date_error(ctx, "invalid date")) };
    Ok(new_obj(ctx, recv, DateObj { jd, sec: 0, ns: 0, of: 0, sg }))
}

/// A whole-number argument of `DateTime.new` (fractions only in the seconds).
fn whole_arg(ctx: &mut Ctx, v: Option<&Value>, default: i64) -> Result<i64> {
    match v {
        Some(&v) if !v.is_nil() && !integer::is_integer(v) => {
            let f = crate::core::numeric::to_f64(ctx, v)?;
            if f.fract() != 0.0 {
                return Err(ctx.arg_error("invalid fraction"));
            }
            Ok(f as i64)
        }
        other => int_arg(ctx, other, default),
    }
}

/// `DateTime.civil(y, m, d, hour, minute, second, offset, start)`.
fn dt_s_civil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), -4712)?;
    let m = whole_arg(ctx, args.pos.get(1), 1)?;
    let d = whole_arg(ctx, args.pos.get(2), 1)?;
    let h = whole_arg(ctx, args.pos.get(3), 0)?;
    let mi = whole_arg(ctx, args.pos.get(4), 0)?;
    let (s, ns) = match args.pos.get(5) {
        Some(&v) if !v.is_nil() && !integer::is_integer(v) => {
            let f = crate::core::numeric::to_f64(ctx, v)?;
            (f.floor() as i64, ((f - f.floor()) * 1e9).round() as i64)
        }
        other => (int_arg(ctx, other, 0)?, 0),
    };
    let of = match args.pos.get(6) {
        Some(&v) => offset_arg(ctx, v)?,
        None => 0,
    };
    let sg = sg_arg(ctx, args.pos.get(7))?;
    let Some(jd) = valid_civil(y, m, d, sg) else { return Err(date_error(ctx, "invalid date")) };
    let h = if h < 0 { h + 24 } else { h };
    let mi = if mi < 0 { mi + 60 } else { mi };
    let s = if s < 0 { s + 60 } else { s };
    if !(0..=24).contains(&h) || !(0..60).contains(&mi) || !(0..60).contains(&s) {
        return Err(date_error(ctx, "invalid date"));
    }
    let (jd, sec) = if h == 24 { (jd + 1, mi * 60 + s) } else { (jd, h * 3600 + mi * 60 + s) };
    Ok(new_obj(ctx, recv, DateObj { jd, sec, ns, of, sg }))
}

fn s_jd(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let jd = int_arg(ctx, args.pos.first(), 0)?;
    let sg = sg_arg(ctx, args.pos.get(1))?;
    Ok(new_obj(ctx, recv, DateObj { jd, sec: 0, ns: 0, of: 0, sg }))
}

fn s_ordinal(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), -4712)?;
    let yd = int_arg(ctx, args.pos.get(1), 1)?;
    let sg = sg_arg(ctx, args.pos.get(2))?;
    let first = civil_to_jd(y, 1, 1, sg);
    let len = civil_to_jd(y + 1, 1, 1, sg) - first;
    let yd = if yd < 0 { len + yd + 1 } else { yd };
    if yd < 1 || yd > len {
        return Err(date_error(ctx, "invalid date"));
    }
    Ok(new_obj(ctx, recv, DateObj { jd: first + yd - 1, sec: 0, ns: 0, of: 0, sg }))
}

fn s_commercial(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), -4712)?;
    let w = int_arg(ctx, args.pos.get(1), 1)?;
    let d = int_arg(ctx, args.pos.get(2), 1)?;
    let sg = sg_arg(ctx, args.pos.get(3))?;
    let jan4 = civil_to_jd(y, 1, 4, sg);
    let week1 = jan4 - jan4.rem_euclid(7);
    let d = if d < 0 { d + 8 } else { d };
    if !(1..=7).contains(&d) || !(1..=53).contains(&w) {
        return Err(date_error(ctx, "invalid date"));
    }
    Ok(new_obj(ctx, recv, DateObj { jd: week1 + (w - 1) * 7 + d - 1, sec: 0, ns: 0, of: 0, sg }))
}

/// Now, in the local zone: (epoch seconds, nanoseconds, offset).
fn now_parts() -> (i64, i64, i32) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let secs = now.as_secs() as i64;
    // SAFETY: localtime_r writes into the zeroed tm.
    let of = unsafe {
        let t = secs as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&t, &mut tm);
        tm.tm_gmtoff as i32
    };
    (secs, now.subsec_nanos() as i64, of)
}

fn from_epoch(secs: i64, ns: i64, of: i32, sg: f64) -> DateObj {
    let local = secs + of as i64;
    DateObj { jd: floor_div(local, DAY) + 2440588, sec: local.rem_euclid(DAY), ns, of, sg }
}

fn s_today(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let sg = sg_arg(ctx, args.pos.first())?;
    let (s, _, of) = now_parts();
    let d = from_epoch(s, 0, of, sg);
    Ok(new_obj(ctx, recv, DateObj { sec: 0, of: 0, ..d }))
}

fn dt_s_now(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let sg = sg_arg(ctx, args.pos.first())?;
    let (s, ns, of) = now_parts();
    Ok(new_obj(ctx, recv, from_epoch(s, ns, of, sg)))
}

fn s_valid_civil_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), 0)?;
    let m = int_arg(ctx, args.pos.get(1), 0)?;
    let d = int_arg(ctx, args.pos.get(2), 0)?;
    let sg = sg_arg(ctx, args.pos.get(3))?;
    Ok(Value::bool(valid_civil(y, m, d, sg).is_some()))
}

fn s_valid_jd_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(args.pos.first().is_some_and(|v| crate::core::numeric::is_numeric(ctx, *v))))
}

fn s_valid_ordinal_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), 0)?;
    let yd = int_arg(ctx, args.pos.get(1), 0)?;
    let sg = sg_arg(ctx, args.pos.get(2))?;
    let first = civil_to_jd(y, 1, 1, sg);
    let len = civil_to_jd(y + 1, 1, 1, sg) - first;
    let yd = if yd < 0 { len + yd + 1 } else { yd };
    Ok(Value::bool(yd >= 1 && yd <= len))
}

fn s_valid_commercial_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), 0)?;
    let w = int_arg(ctx, args.pos.get(1), 0)?;
    let d = int_arg(ctx, args.pos.get(2), 0)?;
    let sg = sg_arg(ctx, args.pos.get(3))?;
    let d = if d < 0 { d + 8 } else { d };
    if !(1..=7).contains(&d) {
        return Ok(Value::FALSE);
    }
    // The last week of the year: the week of December 28th.
    let dec28 = DateObj { jd: civil_to_jd(y, 12, 28, sg), sec: 0, ns: 0, of: 0, sg };
    let weeks = dec28.commercial().1;
    let w = if w < 0 { weeks + w + 1 } else { w };
    Ok(Value::bool(w >= 1 && w <= weeks))
}

fn s_gregorian_leap_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), 0)?;
    Ok(Value::bool(leap_gregorian(y)))
}

fn s_julian_leap_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let y = int_arg(ctx, args.pos.first(), 0)?;
    Ok(Value::bool(y.rem_euclid(4) == 0))
}

/// Builds a date (or DateTime) from a parsed hash, defaulting missing fields from today
/// the way CRuby's `Date.parse` does.
fn from_hash(ctx: &mut Ctx, klass: Value, h: Value, sg: f64) -> Result<Value> {
    let get_i = |ctx: &mut Ctx, k: &str| -> Result<Option<i64>> {
        let key = Value::symbol(ctx.intern(k));
        let v = hash::get(h, key).unwrap_or(Value::NIL);
        if v.is_nil() {
            Ok(None)
        } else {
            Ok(Some(int_arg(ctx, Some(&v), 0)?))
        }
    };
    let year = get_i(ctx, "year")?;
    let mon = get_i(ctx, "mon")?;
    let mday = get_i(ctx, "mday")?;
    let yday = get_i(ctx, "yday")?;
    let wday = get_i(ctx, "wday")?;
    let cwyear = get_i(ctx, "cwyear")?;
    let cweek = get_i(ctx, "cweek")?;
    let seconds = get_i(ctx, "seconds")?;
    let hour = get_i(ctx, "hour")?.unwrap_or(0);
    let min = get_i(ctx, "min")?.unwrap_or(0);
    let sec = get_i(ctx, "sec")?.unwrap_or(0).min(59);
    let of = get_i(ctx, "offset")?.unwrap_or(0) as i32;
    let frac_key = Value::symbol(ctx.intern("sec_fraction"));
    let frac = hash::get(h, frac_key).unwrap_or(Value::NIL);
    let ns = if frac.is_nil() { 0 } else { (crate::core::numeric::to_f64(ctx, frac)? * 1e9).round() as i64 };
    let datetime = is_datetime_class(ctx, klass);
    if let Some(s) = seconds {
        let d = from_epoch(s, 0, of, sg);
        return Ok(new_obj(ctx, klass, if datetime { d } else { DateObj { sec: 0, of: 0, ..d } }));
    }
    let (ty, tm, _) = {
        let (s, _, o) = now_parts();
        from_epoch(s, 0, o, sg).civil()
    };
    let cwday = get_i(ctx, "cwday")?;
    let wnum0 = get_i(ctx, "wnum0")?;
    let wnum1 = get_i(ctx, "wnum1")?;
    let jd = if let (Some(yd), None) = (yday, mon) {
        civil_to_jd(year.unwrap_or(ty), 1, 1, sg) + yd - 1
    } else if cwyear.is_some() || cweek.is_some() || (cwday.is_some() && year.is_none() && mon.is_none()) {
        let cy = cwyear.unwrap_or(ty);
        let jan4 = civil_to_jd(cy, 1, 4, sg);
        jan4 - jan4.rem_euclid(7) + (cweek.unwrap_or(1) - 1) * 7 + cwday.unwrap_or(1) - 1
    } else if let (Some(w), None) = (wnum0.or(wnum1), mon) {
        // %U / %W: weeks starting on Sunday / Monday, week 1 holding the first such day.
        let jan1 = civil_to_jd(year.unwrap_or(ty), 1, 1, sg);
        let monday_based = wnum0.is_none();
        let wd = wday.unwrap_or(if monday_based { 1 } else { 0 });
        let jan1_wday = (jan1 + 1).rem_euclid(7);
        let (first, wd) = if monday_based { ((jan1_wday + 6) % 7, (wd + 6) % 7) } else { (jan1_wday, wd) };
        jan1 - first + w * 7 + wd
    } else if year.is_none() && mon.is_none() && mday.is_none() {
        let (s, _, o) = now_parts();
        let today = from_epoch(s, 0, o, sg);
        match wday {
            // Only a day of the week: that day of this week.
            Some(w) => today.jd - today.wday() + w,
            None if datetime && h_has_time(ctx, h)? => today.jd,
            None => return Err(date_error(ctx, "invalid date")),
        }
    } else {
        let y = year.unwrap_or(ty);
        let m = mon.unwrap_or(if year.is_some() && mday.is_none() { 1 } else { tm });
        let d = mday.unwrap_or(1);
        match valid_civil(y, m, d, sg) {
            Some(jd) => jd,
            None => return Err(date_error(ctx, "invalid date")),
        }
    };
    if !datetime {
        return Ok(new_obj(ctx, klass, DateObj { jd, sec: 0, ns: 0, of: 0, sg }));
    }
    if !(0..=24).contains(&hour) || !(0..60).contains(&min) {
        return Err(date_error(ctx, "invalid date"));
    }
    let (jd, secs) = if hour == 24 { (jd + 1, min * 60 + sec) } else { (jd, hour * 3600 + min * 60 + sec) };
    Ok(new_obj(ctx, klass, DateObj { jd, sec: secs, ns, of, sg }))
}

fn h_has_time(ctx: &mut Ctx, h: Value) -> Result<bool> {
    let key = Value::symbol(ctx.intern("hour"));
    Ok(!hash::get(h, key).unwrap_or(Value::NIL).is_nil())
}

fn is_datetime_class(ctx: &mut Ctx, klass: Value) -> bool {
    let dt = datetime_class(ctx);
    crate::core::module::includes_module(ctx, klass, dt)
}

fn string_arg(ctx: &mut Ctx, v: Option<&Value>, default: &str) -> Result<String> {
    match v {
        Some(&v) => {
            let s = string::to_str_arg(ctx, v)?;
            Ok(string::to_rust_string_lossy(s))
        }
        None => Ok(default.to_string()),
    }
}

/// Keyword `limit:` (default 128): longer strings raise ArgumentError, as CRuby.
fn check_limit(ctx: &mut Ctx, s: &str, args: &Args) -> Result<()> {
    let limit = match args.kwarg(ctx, "limit") {
        Some(v) if v.is_nil() => return Ok(()),
        Some(v) => integer::to_i64_arg(ctx, v)?,
        None => 128,
    };
    if s.len() as i64 > limit {
        return Err(ctx.arg_error(&format!("string length ({}) exceeds the limit {limit}", s.len())));
    }
    Ok(())
}

/// `Date._parse(string, comp = true, limit: 128)`.
fn s_underscore_parse(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string_arg(ctx, args.pos.first(), "")?;
    check_limit(ctx, &s, args)?;
    let comp = args.pos.get(1).is_none_or(|v| v.truthy());
    parse::parse_to_hash(ctx, &s, comp)
}

/// `Date.parse(string = "-4712-01-01", comp = true, start = ITALY, limit: 128)`.
fn s_parse(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string_arg(ctx, args.pos.first(), "-4712-01-01")?;
    check_limit(ctx, &s, args)?;
    let comp = args.pos.get(1).is_none_or(|v| v.truthy());
    let sg = sg_arg(ctx, args.pos.get(2))?;
    let h = parse::parse_to_hash(ctx, &s, comp)?;
    if hash::len(h) == 0 {
        return Err(date_error(ctx, "invalid date"));
    }
    from_hash(ctx, recv, h, sg)
}

fn s_underscore_iso8601(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string_arg(ctx, args.pos.first(), "")?;
    parse::iso8601_to_hash(ctx, &s)
}

/// `Date.iso8601`, `rfc3339`, `xmlschema`: strict forms.
fn s_iso8601(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string_arg(ctx, args.pos.first(), "-4712-01-01")?;
    let sg = sg_arg(ctx, args.pos.get(1))?;
    let h = parse::iso8601_to_hash(ctx, &s)?;
    if hash::len(h) == 0 {
        return Err(date_error(ctx, "invalid date"));
    }
    from_hash(ctx, recv, h, sg)
}

fn s_underscore_strptime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string_arg(ctx, args.pos.first(), "")?;
    let default = if is_datetime_class(ctx, _recv) { "%FT%T%z" } else { "%F" };
    let fmt = string_arg(ctx, args.pos.get(1), default)?;
    match parse::strptime_to_hash(ctx, &s, &fmt)? {
        Some(h) => Ok(h),
        None => Ok(Value::NIL),
    }
}

fn s_strptime(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string_arg(ctx, args.pos.first(), "-4712-01-01")?;
    let default = if is_datetime_class(ctx, recv) { "%FT%T%z" } else { "%F" };
    let fmt = string_arg(ctx, args.pos.get(1), default)?;
    let sg = sg_arg(ctx, args.pos.get(2))?;
    let Some(h) = parse::strptime_to_hash(ctx, &s, &fmt)? else { return Err(date_error(ctx, "invalid date")) };
    let leftover = Value::symbol(ctx.intern("leftover"));
    if !hash::get(h, leftover).unwrap_or(Value::NIL).is_nil() {
        return Err(date_error(ctx, "invalid date"));
    }
    from_hash(ctx, recv, h, sg)
}

// ---- readers ----

macro_rules! reader {
    ($name:ident, |$d:ident| $e:expr) => {
        fn $name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
            let $d = get(ctx, recv)?;
            Ok(Value::fixnum($e))
        }
    };
}

reader!(m_year, |d| d.civil().0);
reader!(m_mon, |d| d.civil().1);
reader!(m_mday, |d| d.civil().2);
reader!(m_wday, |d| d.wday());
reader!(m_yday, |d| d.yday());
reader!(m_jd, |d| d.jd);
reader!(m_mjd, |d| d.jd - 2400001);
reader!(m_ld, |d| d.jd - 2299160);
reader!(m_cwyear, |d| d.commercial().0);
reader!(m_cweek, |d| d.commercial().1);
reader!(m_cwday, |d| d.commercial().2);
reader!(m_hour, |d| d.sec / 3600);
reader!(m_min, |d| d.sec / 60 % 60);
reader!(m_sec, |d| d.sec % 60);

fn m_start(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(crate::core::float::new(ctx, d.sg))
}

fn rational(ctx: &mut Ctx, num: i64, den: i64) -> Result<Value> {
    crate::core::rational::new_reduced(ctx, Value::fixnum(num), Value::fixnum(den))
}

fn m_ajd(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    // Astronomical JD: days since noon, UTC, as a Rational.
    let secs = (d.jd * DAY + d.sec - d.of as i64) * 2 - DAY;
    rational(ctx, secs, 2 * DAY)
}

fn m_day_fraction(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    rational(ctx, d.sec, DAY)
}

fn m_sec_fraction(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    rational(ctx, d.ns, 1_000_000_000)
}

fn m_offset(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    rational(ctx, d.of as i64, DAY)
}

fn m_zone(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(string::new_utf8(ctx, &offset_string(d.of, true)))
}

fn m_leap_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let (y, _, _) = d.civil();
    Ok(Value::bool(days_in_month(y, 2, d.sg) == 29))
}

fn m_gregorian_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(Value::bool(d.jd as f64 >= d.sg))
}

fn m_julian_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(Value::bool((d.jd as f64) < d.sg))
}

fn wday_is(ctx: &mut Ctx, recv: Value, w: i64) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.wday() == w))
}
fn m_sunday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 0)
}
fn m_monday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 1)
}
fn m_tuesday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 2)
}
fn m_wednesday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 3)
}
fn m_thursday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 4)
}
fn m_friday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 5)
}
fn m_saturday_p(ctx: &mut Ctx, r: Value, _a: &Args) -> Result<Value> {
    wday_is(ctx, r, 6)
}

// ---- arithmetic and comparison ----

/// `self + n` days (n may be fractional for a DateTime).
fn add_days(ctx: &mut Ctx, recv: Value, n: Value) -> Result<Value> {
    let d = get(ctx, recv)?;
    if integer::is_integer(n) {
        let k = integer::to_i64_arg(ctx, n)?;
        return Ok(derive(ctx, recv, DateObj { jd: d.jd + k, ..d }));
    }
    if !crate::core::numeric::is_numeric(ctx, n) {
        return Err(ctx.type_error("expected numeric"));
    }
    let days = crate::core::numeric::to_f64(ctx, n)?;
    let total_ns = (days * DAY as f64 * 1e9).round() as i128 + (d.sec as i128) * 1_000_000_000 + d.ns as i128;
    let day_ns = DAY as i128 * 1_000_000_000;
    let jd = d.jd + total_ns.div_euclid(day_ns) as i64;
    let rest = total_ns.rem_euclid(day_ns);
    let r = DateObj { jd, sec: (rest / 1_000_000_000) as i64, ns: (rest % 1_000_000_000) as i64, ..d };
    Ok(derive(ctx, recv, r))
}

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    add_days(ctx, recv, args.pos[0])
}

fn m_minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if let Some(other) = data_ref::<DateObj>(o).copied() {
        let d = get(ctx, recv)?;
        let a = (d.jd * DAY + d.sec - d.of as i64) as i128 * 1_000_000_000 + d.ns as i128;
        let b = (other.jd * DAY + other.sec - other.of as i64) as i128 * 1_000_000_000 + other.ns as i128;
        let diff = a - b;
        let day_ns = DAY as i128 * 1_000_000_000;
        if diff % day_ns == 0 {
            return rational(ctx, (diff / day_ns) as i64, 1);
        }
        let num = crate::core::bignum::from_i128(ctx, diff);
        let den = crate::core::bignum::from_i128(ctx, day_ns);
        return crate::core::rational::new_reduced(ctx, num, den);
    }
    let neg = ctx.call_str(o, "-@", &[])?;
    add_days(ctx, recv, neg)
}

/// `self >> n` months (the day clamped to the month's length).
fn add_months(ctx: &mut Ctx, recv: Value, n: i64) -> Result<Value> {
    let d = get(ctx, recv)?;
    let (y, m, day) = d.civil();
    let t = y * 12 + (m - 1) + n;
    let (ny, nm) = (t.div_euclid(12), t.rem_euclid(12) + 1);
    let dim = days_in_month(ny, nm, d.sg);
    let jd = civil_to_jd(ny, nm, day.min(dim), d.sg);
    Ok(derive(ctx, recv, DateObj { jd, ..d }))
}

fn m_rshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 0)?;
    add_months(ctx, recv, n)
}

fn m_lshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 0)?;
    add_months(ctx, recv, -n)
}

fn m_next_day(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = args.pos.first().copied().unwrap_or(Value::fixnum(1));
    add_days(ctx, recv, n)
}

fn m_prev_day(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 1)?;
    add_days(ctx, recv, Value::fixnum(-n))
}

fn m_next_month(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 1)?;
    add_months(ctx, recv, n)
}

fn m_prev_month(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 1)?;
    add_months(ctx, recv, -n)
}

fn m_next_year(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 1)?;
    add_months(ctx, recv, n * 12)
}

fn m_prev_year(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = int_arg(ctx, args.pos.first(), 1)?;
    add_months(ctx, recv, -n * 12)
}

/// The instant as (UTC seconds from JD 0, nanoseconds), for comparisons.
fn instant(d: &DateObj) -> (i64, i64) {
    (d.jd * DAY + d.sec - d.of as i64, d.ns)
}

/// `step(limit, by = 1) { |date| }`.
fn m_step(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "step", args.pos, None);
    };
    let limit = args.pos[0];
    let by = args.pos.get(1).copied().unwrap_or(Value::fixnum(1));
    let zero = Value::fixnum(0);
    let sign = ctx.call_str(by, "<=>", &[zero])?.as_fixnum().unwrap_or(0);
    if sign == 0 {
        return Err(ctx.arg_error("step can't be 0"));
    }
    let mut cur = recv;
    loop {
        let c = ctx.call_str(cur, "<=>", &[limit])?.as_fixnum().unwrap_or(0);
        if (sign > 0 && c > 0) || (sign < 0 && c < 0) {
            break;
        }
        ctx.yield1(&b, cur)?;
        cur = add_days(ctx, cur, by)?;
    }
    Ok(recv)
}

fn m_upto(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = [args.pos[0], Value::fixnum(1)];
    m_step(ctx, recv, &Args { pos: &a, kw: None, block: args.block })
}

fn m_downto(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = [args.pos[0], Value::fixnum(-1)];
    m_step(ctx, recv, &Args { pos: &a, kw: None, block: args.block })
}

/// `deconstruct_keys(keys)` (pattern matching): a Hash of the asked fields (all if nil).
fn m_deconstruct_keys(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let keys = args.pos[0];
    if !keys.is_nil() && !crate::core::array::is_array(keys) {
        let name = object::type_name_for_error(ctx, keys);
        return Err(ctx.type_error(&format!("wrong argument type {name} (expected Array or nil)")));
    }
    let d = get(ctx, recv)?;
    let (y, m, dd) = d.civil();
    let dt = is_datetime(ctx, recv);
    let mut fields: Vec<(&str, Value)> = vec![("year", Value::fixnum(y)), ("month", Value::fixnum(m)), ("day", Value::fixnum(dd)), ("yday", Value::fixnum(d.yday())), ("wday", Value::fixnum(d.wday()))];
    if dt {
        let frac = rational(ctx, d.ns, 1_000_000_000)?;
        let zone = string::new_utf8(ctx, &offset_string(d.of, true));
        fields.extend([("hour", Value::fixnum(d.sec / 3600)), ("min", Value::fixnum(d.sec / 60 % 60)), ("sec", Value::fixnum(d.sec % 60)), ("sec_fraction", frac), ("zone", zone)]);
    }
    let h = hash::new(ctx);
    for (k, v) in fields {
        let key = Value::symbol(ctx.intern(k));
        if !keys.is_nil() && !(0..array::len(keys)).any(|i| array::get(keys, i) == key) {
            continue;
        }
        hash::aset(ctx, h, key, v)?;
    }
    Ok(h)
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let o = args.pos[0];
    if let Some(other) = data_ref::<DateObj>(o).copied() {
        return Ok(Value::fixnum(instant(&d).cmp(&instant(&other)) as i64));
    }
    if crate::core::numeric::is_numeric(ctx, o) {
        // A number is an astronomical Julian Day.
        let ajd = m_ajd(ctx, recv, args)?;
        return ctx.call_str(ajd, "<=>", &[o]);
    }
    Ok(Value::NIL)
}

fn m_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(Value::bool(data_ref::<DateObj>(args.pos[0]).is_some_and(|o| o.jd == d.jd)))
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(Value::bool(data_ref::<DateObj>(args.pos[0]).is_some_and(|o| instant(o) == instant(&d))))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let (a, b) = instant(&d);
    Ok(Value::fixnum((a.wrapping_mul(1_000_003) ^ b) >> 2))
}

// ---- formatting ----

fn format(ctx: &mut Ctx, recv: Value, fmt: &str) -> Result<Value> {
    let d = get(ctx, recv)?;
    let out = crate::core::time_format::strftime(&d.tm(), fmt.as_bytes()).map_err(|_| ctx.arg_error("invalid format"))?;
    Ok(string::new_with_enc(ctx, out, crate::core::encoding::US_ASCII))
}

fn m_strftime(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let default = if is_datetime(ctx, recv) { "%FT%T%:z" } else { "%F" };
    let fmt = string_arg(ctx, args.pos.first(), default)?;
    let d = get(ctx, recv)?;
    let out = crate::core::time_format::strftime(&d.tm(), fmt.as_bytes()).map_err(|_| ctx.arg_error("invalid format"))?;
    Ok(string::new_utf8(ctx, &String::from_utf8_lossy(&out)))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if is_datetime(ctx, recv) {
        format(ctx, recv, "%Y-%m-%dT%H:%M:%S%:z")
    } else {
        format(ctx, recv, "%Y-%m-%d")
    }
}

fn m_iso8601(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !is_datetime(ctx, recv) {
        return format(ctx, recv, "%Y-%m-%d");
    }
    let n = int_arg(ctx, args.pos.first(), 0)?;
    let f = if n > 0 { format!("%Y-%m-%dT%H:%M:%S.%{n}N%:z") } else { "%Y-%m-%dT%H:%M:%S%:z".to_string() };
    format(ctx, recv, &f)
}

fn m_rfc2822(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    format(ctx, recv, "%a, %-d %b %Y %T %z")
}

fn m_httpdate(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let utc = from_epoch(d.epoch(), 0, 0, d.sg);
    let v = derive(ctx, recv, utc);
    format(ctx, v, "%a, %d %b %Y %T GMT")
}

fn m_asctime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    format(ctx, recv, "%a %b %e %H:%M:%S %Y")
}

fn m_jisx0301(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let (y, _, _) = d.civil();
    let (era, base) = if d.jd >= 2458605 {
        ('R', 2018)
    } else if d.jd >= 2447535 {
        ('H', 1988)
    } else if d.jd >= 2424875 {
        ('S', 1925)
    } else if d.jd >= 2419614 {
        ('T', 1911)
    } else {
        ('M', 1867)
    };
    let f = if d.jd < 2405160 { "%Y-%m-%d".to_string() } else { format!("{era}{:02}.%m.%d", y - base) };
    format(ctx, recv, &f)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let cname = object::class_name_of(ctx, recv);
    let body = if is_datetime(ctx, recv) { "%Y-%m-%dT%H:%M:%S%:z" } else { "%Y-%m-%d" };
    let body = string::to_rust_string_lossy(format(ctx, recv, body)?);
    let utc = d.jd * DAY + d.sec - d.of as i64;
    let sg = if d.sg.is_infinite() { format!("{}", if d.sg > 0.0 { "Infj" } else { "-Infj" }) } else { format!("{}j", d.sg as i64) };
    let s = format!("#<{cname}: {body} (({}j,{}s,{}n),{:+}s,{sg})>", floor_div(utc, DAY), utc.rem_euclid(DAY), d.ns, d.of);
    Ok(string::new_utf8(ctx, &s))
}

// ---- conversions ----

fn m_to_date(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let klass = date_class(ctx);
    Ok(new_obj(ctx, klass, DateObj { sec: 0, ns: 0, of: 0, ..d }))
}

fn m_to_datetime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let klass = datetime_class(ctx);
    Ok(new_obj(ctx, klass, d))
}

fn m_to_time(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let time = ctx.c().time;
    if is_datetime(ctx, recv) {
        let secs = crate::core::bignum::from_i128(ctx, d.epoch() as i128 * 1_000_000_000 + d.ns as i128);
        let ns = Value::fixnum(1_000_000_000);
        let r = crate::core::rational::new_reduced(ctx, secs, ns)?;
        let t = ctx.call_str(time, "at", &[r])?;
        let off = Value::fixnum(d.of as i64);
        return ctx.call_str(t, "getlocal", &[off]);
    }
    let (y, m, dd) = d.civil();
    ctx.call_str(time, "local", &[Value::fixnum(y), Value::fixnum(m), Value::fixnum(dd)])
}

fn m_new_offset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let of = match args.pos.first() {
        Some(&v) => offset_arg(ctx, v)?,
        None => 0,
    };
    Ok(derive(ctx, recv, from_epoch(d.epoch(), d.ns, of, d.sg)))
}

fn m_new_start(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let sg = sg_arg(ctx, args.pos.first())?;
    Ok(derive(ctx, recv, DateObj { sg, ..d }))
}

fn m_italy(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(derive(ctx, recv, DateObj { sg: ITALY, ..d }))
}

fn m_england(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(derive(ctx, recv, DateObj { sg: ENGLAND, ..d }))
}

fn m_gregorian(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(derive(ctx, recv, DateObj { sg: f64::NEG_INFINITY, ..d }))
}

fn m_julian(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(derive(ctx, recv, DateObj { sg: f64::INFINITY, ..d }))
}

/// `Time#to_date`, `Time#to_datetime`.
fn time_to_date(ctx: &mut Ctx, recv: Value, datetime: bool) -> Result<Value> {
    let tm = crate::core::time::tm_of(ctx, recv)?;
    let jd = civil_to_jd(tm.year, tm.mon as i64, tm.mday as i64, ITALY);
    let klass = if datetime { datetime_class(ctx) } else { date_class(ctx) };
    let d = if datetime {
        let ns = ((tm.sub_num * 1_000_000_000i64) / tm.sub_den).try_into().unwrap_or(0i64);
        DateObj { jd, sec: (tm.hour * 3600 + tm.min * 60 + tm.sec.min(59)) as i64, ns, of: tm.utc_offset, sg: ITALY }
    } else {
        DateObj { jd, sec: 0, ns: 0, of: 0, sg: ITALY }
    };
    Ok(new_obj(ctx, klass, d))
}

fn t_to_date(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    time_to_date(ctx, recv, false)
}

fn t_to_datetime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    time_to_date(ctx, recv, true)
}

fn m_marshal_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let utc = d.jd * DAY + d.sec - d.of as i64;
    let ns = rational(ctx, d.ns, 1)?;
    let sg = crate::core::float::new(ctx, d.sg);
    Ok(array::from_slice(ctx, &[Value::fixnum(0), Value::fixnum(floor_div(utc, DAY)), Value::fixnum(utc.rem_euclid(DAY)), ns, Value::fixnum(d.of as i64), sg]))
}

fn m_marshal_load(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    let n = array::len(a);
    if n < 6 {
        return Err(ctx.type_error("invalid size"));
    }
    let utc_jd = int_arg(ctx, Some(&array::get(a, 1)), 0)?;
    let df = int_arg(ctx, Some(&array::get(a, 2)), 0)?;
    let ns = int_arg(ctx, Some(&array::get(a, 3)), 0)?;
    let of = int_arg(ctx, Some(&array::get(a, 4)), 0)? as i32;
    let sg = crate::core::numeric::to_f64(ctx, array::get(a, 5))?;
    let local = utc_jd * DAY + df + of as i64;
    let d = DateObj { jd: floor_div(local, DAY), sec: local.rem_euclid(DAY), ns, of, sg };
    let fresh = new_obj(ctx, ctx.c().object, d);
    crate::object::move_data(recv, fresh);
    Ok(recv)
}

fn names_array(ctx: &mut Ctx, names: &[&str], leading_nil: bool, abbr: bool) -> Value {
    let out = array::new(ctx);
    if leading_nil {
        array::push(ctx, out, Value::NIL);
    }
    for n in names {
        let s = if abbr { &n[..3] } else { n };
        let v = string::new_utf8(ctx, s);
        object::freeze(v);
        array::push(ctx, out, v);
    }
    object::freeze(out);
    out
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let date = define_class_under(ctx, obj, "Date", obj);
    crate::core::module::body(date).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    let comparable = ctx.c().comparable;
    crate::core::module::body(date).includes.push(comparable);
    let arg_err = ctx.c().argument_error;
    define_class_under(ctx, date, "Error", arg_err);
    for (name, v) in [("ITALY", ITALY), ("ENGLAND", ENGLAND), ("JULIAN", f64::INFINITY), ("GREGORIAN", f64::NEG_INFINITY)] {
        let id = ctx.intern(name);
        let val = if v.is_finite() { Value::fixnum(v as i64) } else { crate::core::float::new(ctx, v) };
        crate::core::module::body(date).const_set(id, val);
    }
    for (name, arr) in [
        ("MONTHNAMES", names_array(ctx, &MONTHNAMES, true, false)),
        ("ABBR_MONTHNAMES", names_array(ctx, &MONTHNAMES, true, true)),
        ("DAYNAMES", names_array(ctx, &DAYNAMES, false, false)),
        ("ABBR_DAYNAMES", names_array(ctx, &DAYNAMES, false, true)),
    ] {
        let id = ctx.intern(name);
        crate::core::module::body(date).const_set(id, arr);
    }
    crate::methods!(ctx, date, [
        ("new", s_civil, [0..=4], Safe, Singleton),
        ("civil", s_civil, [0..=4], Safe, Singleton),
        ("jd", s_jd, [0..=2], Safe, Singleton),
        ("ordinal", s_ordinal, [0..=3], Safe, Singleton),
        ("commercial", s_commercial, [0..=4], Safe, Singleton),
        ("today", s_today, [0..=1], Safe, Singleton),
        ("valid_date?", s_valid_civil_p, [3..=4], Safe, Singleton),
        ("valid_civil?", s_valid_civil_p, [3..=4], Safe, Singleton),
        ("leap?", s_gregorian_leap_p, [1], Safe, Singleton),
        ("valid_jd?", s_valid_jd_p, [0..=2], Safe, Singleton),
        ("valid_ordinal?", s_valid_ordinal_p, [2..=3], Safe, Singleton),
        ("valid_commercial?", s_valid_commercial_p, [3..=4], Safe, Singleton),
        ("gregorian_leap?", s_gregorian_leap_p, [1], Safe, Singleton),
        ("julian_leap?", s_julian_leap_p, [1], Safe, Singleton),
        ("_parse", s_underscore_parse, [1..=2], Safe, Singleton, Kw),
        ("parse", s_parse, [0..=3], Safe, Singleton, Kw),
        ("_iso8601", s_underscore_iso8601, [1], Safe, Singleton, Kw),
        ("iso8601", s_iso8601, [0..=2], Safe, Singleton, Kw),
        ("rfc3339", s_iso8601, [0..=2], Safe, Singleton, Kw),
        ("xmlschema", s_iso8601, [0..=2], Safe, Singleton, Kw),
        ("rfc2822", s_parse, [0..=2], Safe, Singleton, Kw),
        ("rfc822", s_parse, [0..=2], Safe, Singleton, Kw),
        ("httpdate", s_parse, [0..=2], Safe, Singleton, Kw),
        ("_strptime", s_underscore_strptime, [1..=2], Safe, Singleton),
        ("strptime", s_strptime, [0..=3], Safe, Singleton),
        ("year", m_year, [0], Safe),
        ("mon", m_mon, [0], Safe),
        ("month", m_mon, [0], Safe),
        ("mday", m_mday, [0], Safe),
        ("day", m_mday, [0], Safe),
        ("wday", m_wday, [0], Safe),
        ("yday", m_yday, [0], Safe),
        ("jd", m_jd, [0], Safe),
        ("mjd", m_mjd, [0], Safe),
        ("ld", m_ld, [0], Safe),
        ("ajd", m_ajd, [0], Safe),
        ("day_fraction", m_day_fraction, [0], Safe),
        ("start", m_start, [0], Safe),
        ("cwyear", m_cwyear, [0], Safe),
        ("cweek", m_cweek, [0], Safe),
        ("cwday", m_cwday, [0], Safe),
        ("leap?", m_leap_p, [0], Safe),
        ("gregorian?", m_gregorian_p, [0], Safe),
        ("julian?", m_julian_p, [0], Safe),
        ("sunday?", m_sunday_p, [0], Safe),
        ("monday?", m_monday_p, [0], Safe),
        ("tuesday?", m_tuesday_p, [0], Safe),
        ("wednesday?", m_wednesday_p, [0], Safe),
        ("thursday?", m_thursday_p, [0], Safe),
        ("friday?", m_friday_p, [0], Safe),
        ("saturday?", m_saturday_p, [0], Safe),
        ("+", m_plus, [1], Safe),
        ("-", m_minus, [1], Safe),
        (">>", m_rshift, [1], Safe),
        ("<<", m_lshift, [1], Safe),
        ("next_day", m_next_day, [0..=1], Safe),
        ("prev_day", m_prev_day, [0..=1], Safe),
        ("next", m_next_day, [0], Safe),
        ("succ", m_next_day, [0], Safe),
        ("next_month", m_next_month, [0..=1], Safe),
        ("prev_month", m_prev_month, [0..=1], Safe),
        ("next_year", m_next_year, [0..=1], Safe),
        ("prev_year", m_prev_year, [0..=1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("step", m_step, [1..=2], Safe),
        ("upto", m_upto, [1], Safe),
        ("downto", m_downto, [1], Safe),
        ("deconstruct_keys", m_deconstruct_keys, [1], Safe),
        ("italy", m_italy, [0], Safe),
        ("england", m_england, [0], Safe),
        ("===", m_eqq, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("strftime", m_strftime, [0..=1], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("iso8601", m_iso8601, [0..=1], Safe),
        ("xmlschema", m_iso8601, [0..=1], Safe),
        ("rfc3339", m_iso8601, [0..=1], Safe),
        ("rfc2822", m_rfc2822, [0], Safe),
        ("rfc822", m_rfc2822, [0], Safe),
        ("httpdate", m_httpdate, [0], Safe),
        ("asctime", m_asctime, [0], Safe),
        ("ctime", m_asctime, [0], Safe),
        ("jisx0301", m_jisx0301, [0], Safe),
        ("to_date", m_to_date, [0], Safe),
        ("to_datetime", m_to_datetime, [0], Safe),
        ("to_time", m_to_time, [0], Safe),
        ("new_start", m_new_start, [0..=1], Safe),
        ("gregorian", m_gregorian, [0], Safe),
        ("julian", m_julian, [0], Safe),
        ("marshal_dump", m_marshal_dump, [0], Safe),
        ("marshal_load", m_marshal_load, [1], Safe),
    ]);
    let dt = define_class_under(ctx, obj, "DateTime", date);
    crate::methods!(ctx, dt, [
        ("new", dt_s_civil, [0..=8], Safe, Singleton),
        ("civil", dt_s_civil, [0..=8], Safe, Singleton),
        ("now", dt_s_now, [0..=1], Safe, Singleton),
        ("hour", m_hour, [0], Safe),
        ("min", m_min, [0], Safe),
        ("minute", m_min, [0], Safe),
        ("sec", m_sec, [0], Safe),
        ("second", m_sec, [0], Safe),
        ("sec_fraction", m_sec_fraction, [0], Safe),
        ("second_fraction", m_sec_fraction, [0], Safe),
        ("offset", m_offset, [0], Safe),
        ("zone", m_zone, [0], Safe),
        ("new_offset", m_new_offset, [0..=1], Safe),
    ]);
    let time = ctx.c().time;
    crate::methods!(ctx, time, [
        ("to_date", t_to_date, [0], Safe),
        ("to_datetime", t_to_datetime, [0], Safe),
    ]);
    Ok(())
}
