//! Time: an exact instant (a rational number of seconds since the Unix epoch) plus how it
//! is shown: in UTC, in the system's local time zone, or at a fixed UTC offset.
//! Construction, accessors and arithmetic live here; `strftime`, `to_s`, `inspect` and
//! `xmlschema` in `time_format.rs`.
//!
//! Invariants:
//! - `TimeObj::{num, den}` is reduced with `den > 0`; arithmetic is exact (Floats enter as
//!   their exact binary value, as in CRuby), so `Time.at(1.1).subsec` is the Float's
//!   fraction, not 1/10.
//! - Calendar fields are computed on demand with the proleptic Gregorian calendar in pure
//!   Rust; only the local zone's offset, DST flag and abbreviation come from libc
//!   (`localtime_r` after `tzset`, so a changed `TZ` is honoured). No other global state.
//! - `utc`/`localtime` mutate the receiver's zone (checking frozen state), as in CRuby.

use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{One, Pow, Signed, ToPrimitive, Zero};

use crate::core::{array, bignum, float, hash, integer, object, rational, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Zone {
    Utc,
    Local,
    Fixed(i32),
    /// A timezone object (`utc_to_local`/`local_to_utc`) and the UTC offset it gave for
    /// this instant (computed when the Time is made, as CRuby caches it).
    Obj(Value, i32),
}

#[derive(Clone)]
pub struct TimeObj {
    pub num: BigInt,
    pub den: BigInt,
    pub zone: Zone,
}

crate::data_obj!(TimeObj, |s, m| {
    if let Zone::Obj(z, _) = s.zone {
        m.mark(z);
    }
});

/// Calendar fields of a Time in its zone.
#[derive(Clone, Debug)]
pub struct Tm {
    pub year: i64,
    pub mon: u32,
    pub mday: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
    pub wday: u32,
    pub yday: u32,
    pub isdst: bool,
    pub utc_offset: i32,
    pub zone: Option<String>,
    /// Fraction of the second as num/den in [0, 1).
    pub sub_num: BigInt,
    pub sub_den: BigInt,
    /// Whole seconds since the epoch.
    pub epoch: BigInt,
}

/// Whether a Time value is shown in UTC.
pub fn is_utc_value(v: Value) -> bool {
    data_ref::<TimeObj>(v).is_some_and(|t| t.zone == Zone::Utc)
}

pub fn is_time(v: Value) -> bool {
    data_ref::<TimeObj>(v).is_some()
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut TimeObj> {
    match data_ref::<TimeObj>(v) {
        Some(t) => Ok(t),
        None => Err(ctx.type_error("uninitialized Time")),
    }
}

fn reduce(num: BigInt, den: BigInt) -> (BigInt, BigInt) {
    let g = num.gcd(&den);
    let (mut n, mut d) = if g.is_zero() { (num, den) } else { (num / &g, den / &g) };
    if d.is_negative() {
        n = -n;
        d = -d;
    }
    (n, d)
}

pub fn new_time(ctx: &mut Ctx, klass: Value, num: BigInt, den: BigInt, zone: Zone) -> Value {
    let (num, den) = reduce(num, den);
    object::new_data(ctx, klass, Box::new(TimeObj { num, den, zone }))
}

// ---- calendar arithmetic (Howard Hinnant's algorithms) ----

/// Days since 1970-01-01 of a date; in 128 bits, since years span the whole i64 range.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i128 {
    let y = y as i128;
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i128 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i128 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

/// The date `z` days after 1970-01-01 (years beyond i64 saturate: Tm keeps an i64 year).
pub fn civil_from_days(z: i128) -> (i64, u32, u32) {
    let z = z.clamp(-(1i128 << 100), 1i128 << 100) + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = if m <= 2 { y + 1 } else { y };
    (y.clamp(i64::MIN as i128, i64::MAX as i128) as i64, m, d)
}

pub fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

extern "C" {
    fn tzset();
}

/// The local zone's (offset, isdst, abbreviation) at `t` seconds since the epoch.
pub fn local_info(t: i64) -> (i32, bool, String) {
    // SAFETY: tzset only re-reads TZ; localtime_r writes into our own `tm` and its
    // tm_zone points to static storage that stays valid while we copy it out.
    unsafe {
        tzset();
        let tt: libc::time_t = t as libc::time_t;
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&tt, &mut tm).is_null() {
            return (0, false, "UTC".to_string());
        }
        let zone = if tm.tm_zone.is_null() { String::new() } else { std::ffi::CStr::from_ptr(tm.tm_zone).to_string_lossy().into_owned() };
        (tm.tm_gmtoff as i32, tm.tm_isdst > 0, zone)
    }
}

/// Makes libc's `TZ` follow Ruby's `ENV["TZ"]` (CRuby's ENV writes through to the
/// process environment; here ENV is read when local time is needed).
pub fn sync_tz(ctx: &mut Ctx) {
    let Some(env) = crate::core::module::body(ctx.c().object).const_get(ctx.intern("ENV")).map(|e| e.value) else { return };
    let key = string::new_utf8(ctx, "TZ");
    let want: Option<Vec<u8>> = if hash::is_hash(env) {
        hash::get(env, key).filter(|v| string::is_string(*v)).map(|v| string::bytes(v).to_vec())
    } else {
        None
    };
    let have = std::env::var_os("TZ").map(|v| v.as_encoded_bytes().to_vec());
    if want != have {
        // SAFETY: setenv/unsetenv with NUL-terminated strings; TZ is the one piece of
        // process state Time shares with libc (as in CRuby).
        unsafe {
            match &want {
                Some(w) => {
                    let v = std::ffi::CString::new(w.clone()).unwrap_or_default();
                    libc::setenv(c"TZ".as_ptr(), v.as_ptr(), 1);
                }
                None => {
                    libc::unsetenv(c"TZ".as_ptr());
                }
            }
        }
    }
}

/// Clamps a (possibly huge) epoch second to what libc can localize.
fn libc_seconds(t: &BigInt) -> i64 {
    t.to_i64().unwrap_or(if t.is_negative() { i64::MIN } else { i64::MAX }).clamp(-67_768_036_191_676_800, 67_767_976_233_316_800)
}

/// The calendar fields of instant `num/den` shown in `zone`.
pub fn breakdown(num: &BigInt, den: &BigInt, zone: Zone) -> Tm {
    let (secs, rem) = num.div_mod_floor(den);
    let (offset, isdst, zname) = match zone {
        Zone::Utc => (0, false, Some("UTC".to_string())),
        Zone::Fixed(o) | Zone::Obj(_, o) => (o, false, None),
        Zone::Local => {
            let (o, d, z) = local_info(libc_seconds(&secs));
            (o, d, Some(z))
        }
    };
    let local = &secs + offset;
    let (days, sod) = local.div_mod_floor(&BigInt::from(86400));
    let days = days.to_i128().unwrap_or(if days.is_negative() { i128::MIN / 2 } else { i128::MAX / 2 });
    let sod = sod.to_u32().unwrap_or(0);
    let (year, mon, mday) = civil_from_days(days);
    let wday = (days + 4).rem_euclid(7) as u32;
    let yday = (days - days_from_civil(year, 1, 1) + 1).clamp(1, 366) as u32;
    Tm {
        year,
        mon,
        mday,
        hour: sod / 3600,
        min: sod / 60 % 60,
        sec: sod % 60,
        wday,
        yday,
        isdst,
        utc_offset: offset,
        zone: zname,
        sub_num: rem,
        sub_den: den.clone(),
        epoch: secs,
    }
}

pub fn tm_of(ctx: &mut Ctx, v: Value) -> Result<Tm> {
    let zone = get(ctx, v)?.zone;
    if zone == Zone::Local {
        sync_tz(ctx);
    }
    let t = get(ctx, v)?;
    Ok(breakdown(&t.num, &t.den, t.zone))
}

// ---- argument conversion ----

/// An exact number of seconds (CRuby's `num_exact`).
fn exact_arg(ctx: &mut Ctx, v: Value) -> Result<(BigInt, BigInt)> {
    if integer::is_integer(v) {
        return Ok((bignum::to_big(v), BigInt::one()));
    }
    if float::is_float(v) {
        let f = float::get(v);
        if !f.is_finite() {
            return Err(ctx.float_domain_error(&float::to_s(f)));
        }
        return Ok(float::exact_fraction(f));
    }
    if rational::is_rational(v) {
        return Ok(rational::parts(v));
    }
    if !v.is_nil() && !string::is_string(v) && v.is_heap() && ctx.respond_to(v, sym::TO_R, true) {
        let r = ctx.call(v, sym::TO_R, &[])?;
        if rational::is_rational(r) {
            return Ok(rational::parts(r));
        }
    }
    if !v.is_nil() && !string::is_string(v) && v.is_heap() && ctx.respond_to(v, sym::TO_INT, true) {
        let i = integer::to_integer_arg(ctx, v)?;
        return Ok((bignum::to_big(i), BigInt::one()));
    }
    let cname = object::class_name_of(ctx, v);
    Err(ctx.type_error(&format!("can't convert {cname} into an exact number")))
}

/// CRuby's `utc_offset_arg`: a String offset ("+HH:MM", "UTC", "Z", military letters;
/// `None` when it is not one) or an exact number of seconds.
fn utc_offset_arg(ctx: &mut Ctx, v: Value) -> Result<Option<Zone>> {
    if let Some(s) = string::try_to_str(ctx, v)? {
        let b = string::bytes(s).to_vec();
        if b.eq_ignore_ascii_case(b"UTC") || b == b"Z" {
            return Ok(Some(Zone::Utc));
        }
        if b.len() == 1 {
            let c = b[0];
            let h: i32 = match c {
                b'A'..=b'I' => (c - b'A' + 1) as i32,
                b'K'..=b'M' => (c - b'A') as i32,
                b'N'..=b'Y' => b'M' as i32 - c as i32,
                _ => return Ok(None),
            };
            return Ok(Some(Zone::Fixed(h * 3600)));
        }
        let d2 = |x: &[u8]| -> Option<i32> { (x.len() == 2 && x.iter().all(u8::is_ascii_digit)).then(|| ((x[0] - b'0') * 10 + (x[1] - b'0')) as i32) };
        if b.len() < 3 || !(b[0] == b'+' || b[0] == b'-') {
            return Ok(None);
        }
        let body = &b[1..];
        let (h, m, sec) = match body.len() {
            2 => (d2(body), Some(0), Some(0)),
            4 => (d2(&body[..2]), d2(&body[2..]), Some(0)),
            5 if body[2] == b':' => (d2(&body[..2]), d2(&body[3..]), Some(0)),
            6 => (d2(&body[..2]), d2(&body[2..4]), d2(&body[4..])),
            8 if body[2] == b':' && body[5] == b':' => (d2(&body[..2]), d2(&body[3..5]), d2(&body[6..])),
            _ => (None, None, None),
        };
        let (Some(h), Some(m), Some(sec)) = (h, m, sec) else { return Ok(None) };
        if m > 59 || sec > 59 {
            return Ok(None);
        }
        let off = h * 3600 + m * 60 + sec;
        if b[0] == b'-' && off == 0 {
            return Ok(Some(Zone::Utc));
        }
        let off = if b[0] == b'-' { -off } else { off };
        validate_offset(ctx, off as i64)?;
        return Ok(Some(Zone::Fixed(off)));
    }
    let (n, d) = exact_arg(ctx, v)?;
    let off = n.div_floor(&d).to_i64().unwrap_or(i64::MAX);
    validate_offset(ctx, off)?;
    Ok(Some(Zone::Fixed(off as i32)))
}

fn validate_offset(ctx: &mut Ctx, off: i64) -> Result<()> {
    if off.abs() >= 86400 {
        return Err(ctx.arg_error("utc_offset out of range"));
    }
    Ok(())
}

fn invalid_offset(ctx: &mut Ctx, v: Value) -> crate::error::Unwind {
    let shown = match string::try_to_str(ctx, v) {
        Ok(Some(s)) => string::to_rust_string_lossy(s),
        _ => object::inspect_string(ctx, v).unwrap_or_default(),
    };
    ctx.arg_error(&format!("\"+HH:MM\", \"-HH:MM\", \"UTC\" or \"A\"..\"I\",\"K\"..\"Z\" expected for utc_offset: {shown}"))
}

/// A zone argument: a fixed zone, or a timezone object that answers `want`
/// ("utc_to_local" when the instant is known, "local_to_utc" when the wall clock is).
enum ZoneSpec {
    Zone(Zone),
    Obj(Value),
}

/// Resolves a zone argument like CRuby: timezone objects first (anything but nil,
/// Integers and Structs that has `want`), then offsets, then `klass.find_timezone(name)`
/// for other Strings.
fn resolve_zone(ctx: &mut Ctx, klass: Value, v: Value, want: &str) -> Result<ZoneSpec> {
    if v.is_nil() {
        return Ok(ZoneSpec::Zone(Zone::Local));
    }
    let want_id = ctx.intern(want);
    let maybe_obj = !integer::is_integer(v) && !crate::core::struct_::is_struct_obj(v);
    if maybe_obj && ctx.respond_to(v, want_id, true) {
        return Ok(ZoneSpec::Obj(v));
    }
    if let Some(z) = utc_offset_arg(ctx, v)? {
        return Ok(ZoneSpec::Zone(z));
    }
    let find = ctx.intern("find_timezone");
    if let Some(z) = crate::core::convert::check_funcall(ctx, klass, find, &[v])? {
        if !z.is_nil() && ctx.respond_to(z, want_id, true) {
            return Ok(ZoneSpec::Obj(z));
        }
    }
    Err(invalid_offset(ctx, v))
}

/// The Time-like argument given to a timezone object: a UTC Time of whole seconds.
fn tm_arg(ctx: &mut Ctx, secs: &BigInt) -> Value {
    let klass = ctx.c().time;
    new_time(ctx, klass, secs.clone(), BigInt::one(), Zone::Utc)
}

/// Seconds from a timezone object's answer (CRuby's `extract_time`/`extract_vtm`): a
/// Time's wall clock (`wall`) or instant, an Integer, or `to_i`.
fn zone_result_seconds(ctx: &mut Ctx, r: Value, wall: bool) -> Result<BigInt> {
    if let Some(t) = data_ref::<TimeObj>(r) {
        let secs = t.num.div_floor(&t.den);
        return Ok(match t.zone {
            Zone::Fixed(o) | Zone::Obj(_, o) if wall => secs + o,
            _ => secs,
        });
    }
    if integer::is_integer(r) {
        return Ok(bignum::to_big(r));
    }
    let to_i = ctx.call(r, sym::TO_I, &[])?;
    let i = crate::core::convert::integer_conv_value(ctx, to_i)?;
    Ok(bignum::to_big(i))
}

/// The zone of instant `num/den` shown through timezone object `z` (`utc_to_local`).
fn zone_obj_localtime(ctx: &mut Ctx, z: Value, num: &BigInt, den: &BigInt) -> Result<Zone> {
    let secs = num.div_floor(den);
    let tm = tm_arg(ctx, &secs);
    let id = ctx.intern("utc_to_local");
    let r = ctx.call(z, id, &[tm])?;
    let wall = zone_result_seconds(ctx, r, true)?;
    let off = (wall - &secs).to_i64().unwrap_or(i64::MAX);
    validate_offset(ctx, off)?;
    Ok(Zone::Obj(z, off as i32))
}

/// What `%Z` shows for a timezone object (CRuby's `rb_time_zone_abbreviation`): its
/// `abbr(tm)`, `strftime("%Z", tm)` or `name`, as a String; `None` for other zones.
pub fn zone_abbreviation(ctx: &mut Ctx, time: Value) -> Result<Option<Value>> {
    let Zone::Obj(z, _) = get(ctx, time)?.zone else { return Ok(None) };
    if let Some(s) = string::try_to_str(ctx, z)? {
        return Ok(Some(s));
    }
    let t = get(ctx, time)?;
    let secs = t.num.div_floor(&t.den);
    let tm = tm_arg(ctx, &secs);
    let abbr = ctx.intern("abbr");
    let r = match crate::core::convert::check_funcall(ctx, z, abbr, &[tm])? {
        Some(r) => r,
        None => {
            let fmt = string::new_us_ascii(ctx, "%Z");
            let strftime = ctx.intern("strftime");
            match crate::core::convert::check_funcall(ctx, z, strftime, &[fmt, tm])? {
                Some(r) => r,
                None => {
                    let name = ctx.intern("name");
                    crate::core::convert::check_funcall(ctx, z, name, &[])?.unwrap_or(Value::NIL)
                }
            }
        }
    };
    Ok(Some(string::to_s(ctx, r)?))
}

/// A zone for instant `num/den` from a zone argument (`Time.at(in:)`, `getlocal`, `now`).
fn zone_for_instant(ctx: &mut Ctx, klass: Value, v: Value, num: &BigInt, den: &BigInt) -> Result<Zone> {
    match resolve_zone(ctx, klass, v, "utc_to_local")? {
        ZoneSpec::Zone(z) => Ok(z),
        ZoneSpec::Obj(o) => zone_obj_localtime(ctx, o, num, den),
    }
}

/// The same zone for a new instant: a timezone object is asked again.
fn rezone(ctx: &mut Ctx, zone: Zone, num: &BigInt, den: &BigInt) -> Result<Zone> {
    match zone {
        Zone::Obj(z, _) => zone_obj_localtime(ctx, z, num, den),
        z => Ok(z),
    }
}

/// The `in:` keyword's value, if given.
fn in_kwarg(ctx: &mut Ctx, args: &Args) -> Option<Value> {
    args.kwarg(ctx, "in")
}

/// Integer-like field conversion with CRuby's `obj2ubits` limit check.
fn field_int(ctx: &mut Ctx, v: Value, bits: u32) -> Result<i64> {
    let n = if let Some(s) = string::try_to_str(ctx, v)? {
        match integer::parse_int(string::bytes(s), 10, true) {
            Some(n) => n.to_i64().unwrap_or(i64::MAX),
            None => {
                let q = String::from_utf8_lossy(&string::inspect_bytes(string::bytes(s), string::encoding(s))).into_owned();
                return Err(ctx.arg_error(&format!("invalid value for Integer(): {q}")));
            }
        }
    } else {
        integer::to_i64_arg(ctx, v)?
    };
    if bits > 0 && (n < 0 || n >= (1i64 << bits)) {
        return Err(ctx.arg_error("argument out of range"));
    }
    Ok(n)
}

const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

fn month_arg(ctx: &mut Ctx, v: Value) -> Result<i64> {
    if let Some(s) = string::try_to_str(ctx, v)? {
        let b = string::bytes(s);
        if b.len() == 3 {
            let lower = String::from_utf8_lossy(b).to_ascii_lowercase();
            if let Some(i) = MONTHS.iter().position(|&m| m == lower) {
                return Ok(i as i64 + 1);
            }
        }
    }
    field_int(ctx, v, 4)
}

/// Seconds with an optional fraction: (whole, fraction num/den).
fn sec_arg(ctx: &mut Ctx, v: Value) -> Result<(i64, BigInt, BigInt)> {
    if string::is_string(v) {
        let i = field_int(ctx, v, 6)?;
        return Ok((i, BigInt::zero(), BigInt::one()));
    }
    let (n, d) = exact_arg(ctx, v)?;
    let (q, r) = n.div_mod_floor(&d);
    let q = q.to_i64().unwrap_or(i64::MAX);
    if !(0..64).contains(&q) {
        return Err(ctx.arg_error("argument out of range"));
    }
    Ok((q, r, d))
}

/// Parsed `Time.utc`/`Time.local`/`Time.new` fields, validated like CRuby's `time_arg`.
struct Fields {
    year: i64,
    mon: u32,
    mday: u32,
    hour: u32,
    min: u32,
    sec: u32,
    frac_num: BigInt,
    frac_den: BigInt,
}

fn time_fields(ctx: &mut Ctx, a: &[Value], usec_arg: bool) -> Result<Fields> {
    let (year, mon, mday, hour, min, sec, usec) = if a.len() == 10 {
        (a[5], Some(a[4]), Some(a[3]), Some(a[2]), Some(a[1]), Some(a[0]), None)
    } else {
        (a[0], a.get(1).copied(), a.get(2).copied(), a.get(3).copied(), a.get(4).copied(), a.get(5).copied(), if usec_arg { a.get(6).copied() } else { None })
    };
    let year = if let Some(s) = string::try_to_str(ctx, year)? {
        match integer::parse_int(string::bytes(s), 10, true) {
            Some(n) => n.to_i64().unwrap_or(i64::MAX),
            None => return Err(ctx.arg_error("argument out of range")),
        }
    } else {
        let y = integer::to_integer_arg(ctx, year)?;
        integer::to_i64_arg(ctx, y)?
    };
    let opt = |v: Option<Value>| v.filter(|x| !x.is_nil());
    let mon = match opt(mon) {
        Some(v) => month_arg(ctx, v)?,
        None => 1,
    };
    let mday = match opt(mday) {
        Some(v) => field_int(ctx, v, 5)?,
        None => 1,
    };
    let hour = match opt(hour) {
        Some(v) => field_int(ctx, v, 5)?,
        None => 0,
    };
    let min = match opt(min) {
        Some(v) => field_int(ctx, v, 6)?,
        None => 0,
    };
    let (sec, mut fnum, mut fden) = match opt(sec) {
        Some(v) => sec_arg(ctx, v)?,
        None => (0, BigInt::zero(), BigInt::one()),
    };
    if let Some(u) = opt(usec) {
        let (n, d) = if string::is_string(u) {
            let i = field_int(ctx, u, 0)?;
            (BigInt::from(i), BigInt::one())
        } else {
            exact_arg(ctx, u)?
        };
        let d = d * 1_000_000;
        fnum = fnum * &d + n * &fden;
        fden *= d;
    }
    if !(1..=12).contains(&mon) {
        return Err(ctx.arg_error("mon out of range"));
    }
    if !(1..=31).contains(&mday) {
        return Err(ctx.arg_error("mday out of range"));
    }
    if hour > 24 {
        return Err(ctx.arg_error("hour out of range"));
    }
    if min > 59 {
        return Err(ctx.arg_error("min out of range"));
    }
    if sec > 60 {
        return Err(ctx.arg_error("sec out of range"));
    }
    if hour == 24 {
        if min != 0 {
            return Err(ctx.arg_error("min out of range"));
        }
        if sec != 0 || !fnum.is_zero() {
            return Err(ctx.arg_error("sec out of range"));
        }
    }
    if fnum.is_negative() || fnum >= fden {
        return Err(ctx.arg_error("subsecx out of range"));
    }
    Ok(Fields { year, mon: mon as u32, mday: mday as u32, hour: hour as u32, min: min as u32, sec: sec as u32, frac_num: fnum, frac_den: fden })
}

/// Seconds since the epoch of wall-clock fields read as UTC (days past a month's end
/// roll over, as CRuby allows up to the 31st).
fn fields_to_utc_seconds(f: &Fields) -> BigInt {
    let days = days_from_civil(f.year, f.mon, 1) + f.mday as i128 - 1;
    BigInt::from(days) * 86400 + (f.hour as i64 * 3600 + f.min as i64 * 60 + f.sec as i64)
}

/// Epoch seconds for local wall-clock `wall` (seconds as if UTC), choosing the offset in
/// force at that moment.
fn local_to_epoch(wall: &BigInt) -> BigInt {
    let w = libc_seconds(wall);
    let (o1, _, _) = local_info(w);
    let t1 = w - o1 as i64;
    let (o2, _, _) = local_info(t1);
    if o2 == o1 {
        return wall - o1;
    }
    let t2 = w - o2 as i64;
    let (o3, _, _) = local_info(t2);
    if o3 == o2 {
        wall - o2
    } else {
        wall - o1
    }
}

fn make_from_fields(ctx: &mut Ctx, klass: Value, f: &Fields, zone: Zone) -> Value {
    if zone == Zone::Local {
        sync_tz(ctx);
    }
    let wall = fields_to_utc_seconds(f);
    let secs = match zone {
        Zone::Utc => wall,
        Zone::Fixed(o) | Zone::Obj(_, o) => wall - o,
        Zone::Local => local_to_epoch(&wall),
    };
    let num = secs * &f.frac_den + &f.frac_num;
    new_time(ctx, klass, num, f.frac_den.clone(), zone)
}

/// A Time from wall-clock fields in the zone given by argument `zarg` (nil: local); a
/// timezone object converts the wall clock with `local_to_utc` (CRuby's
/// `zone_timelocal`).
fn make_in_zone(ctx: &mut Ctx, klass: Value, f: &Fields, zarg: Value) -> Result<Value> {
    match resolve_zone(ctx, klass, zarg, "local_to_utc")? {
        ZoneSpec::Zone(z) => Ok(make_from_fields(ctx, klass, f, z)),
        ZoneSpec::Obj(z) => {
            let wall = fields_to_utc_seconds(f);
            let tm = tm_arg(ctx, &wall);
            let id = ctx.intern("local_to_utc");
            let r = ctx.call(z, id, &[tm])?;
            let utc = zone_result_seconds(ctx, r, false)?;
            let off = (&wall - &utc).to_i64().unwrap_or(i64::MAX);
            validate_offset(ctx, off)?;
            let num = utc * &f.frac_den + &f.frac_num;
            Ok(new_time(ctx, klass, num, f.frac_den.clone(), Zone::Obj(z, off as i32)))
        }
    }
}

// ---- class methods ----

fn now_parts() -> (BigInt, BigInt) {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    (BigInt::from(ts.tv_sec) * 1_000_000_000 + ts.tv_nsec, BigInt::from(1_000_000_000))
}

fn s_now(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (n, d) = now_parts();
    let zone = match in_kwarg(ctx, args) {
        Some(z) => zone_for_instant(ctx, recv, z, &n, &d)?,
        None => Zone::Local,
    };
    Ok(new_time(ctx, recv, n, d, zone))
}

fn s_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let zone_kw = in_kwarg(ctx, args);
    let t = args.pos[0];
    let (mut n, mut d, mut zone) = if let Some(o) = data_ref::<TimeObj>(t) {
        (o.num.clone(), o.den.clone(), o.zone)
    } else {
        let (n, d) = exact_arg(ctx, t)?;
        (n, d, Zone::Local)
    };
    if let Some(&sub) = args.pos.get(1) {
        let scale: i64 = match args.pos.get(2) {
            None => 1_000_000,
            Some(&u) => {
                let name = u.as_symbol().map(|s| ctx.sym_str(s)).unwrap_or_default();
                match name.as_str() {
                    "millisecond" => 1000,
                    "usec" | "microsecond" => 1_000_000,
                    "nsec" | "nanosecond" => 1_000_000_000,
                    _ => {
                        let s = if u.is_symbol() { name } else { object::inspect_string(ctx, u)? };
                        return Err(ctx.arg_error(&format!("unexpected unit: {s}")));
                    }
                }
            }
        };
        let (sn, sd) = exact_arg(ctx, sub)?;
        let sd = sd * scale;
        n = n * &sd + sn * &d;
        d *= sd;
    }
    if let Some(z) = zone_kw {
        zone = zone_for_instant(ctx, recv, z, &n, &d)?;
    }
    Ok(new_time(ctx, recv, n, d, zone))
}

fn s_utc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let f = time_fields(ctx, args.pos, true)?;
    Ok(make_from_fields(ctx, recv, &f, Zone::Utc))
}

fn s_local(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let f = time_fields(ctx, args.pos, true)?;
    Ok(make_from_fields(ctx, recv, &f, Zone::Local))
}

/// `Time.new(string)` (Ruby 3.3): "YYYY-MM-DD HH:MM:SS[.frac][ zone]".
fn parse_time_string(ctx: &mut Ctx, recv: Value, s: Value, zone_kw: Option<Value>) -> Result<Value> {
    let b = string::bytes(s).to_vec();
    let shown = String::from_utf8_lossy(&b).into_owned();
    let bad = |ctx: &mut Ctx, what: &str| ctx.arg_error(&format!("{what}: {shown}"));
    if !b.is_empty() && b.iter().all(u8::is_ascii_digit) {
        let year = Value::fixnum(String::from_utf8_lossy(&b).parse::<i64>().unwrap_or(0));
        let f = time_fields(ctx, &[year], false)?;
        return make_in_zone(ctx, recv, &f, zone_kw.unwrap_or(Value::NIL));
    }
    let mut i = 0;
    let num = |i: &mut usize, n: usize| -> Option<i64> {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() && *i - start < n {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        std::str::from_utf8(&b[start..*i]).ok()?.parse().ok()
    };
    let neg = b.first() == Some(&b'-');
    if neg {
        i += 1;
    }
    let Some(mut year) = num(&mut i, 10) else { return Err(bad(ctx, "can't parse")) };
    if neg {
        year = -year;
    }
    let expect = |i: &mut usize, c: u8| -> bool {
        if b.get(*i) == Some(&c) {
            *i += 1;
            true
        } else {
            false
        }
    };
    if !expect(&mut i, b'-') {
        return Err(bad(ctx, "can't parse"));
    }
    let Some(mon) = num(&mut i, 2) else { return Err(bad(ctx, "two digits mon is expected after '-'")) };
    if !expect(&mut i, b'-') {
        return Err(bad(ctx, "can't parse"));
    }
    let Some(mday) = num(&mut i, 2) else { return Err(bad(ctx, "two digits mday is expected after '-'")) };
    if i >= b.len() {
        return Err(ctx.arg_error("no time information"));
    }
    if !(expect(&mut i, b' ') || expect(&mut i, b'T')) {
        return Err(bad(ctx, "can't parse"));
    }
    let Some(hour) = num(&mut i, 2) else { return Err(bad(ctx, "two digits hour is expected")) };
    if !expect(&mut i, b':') {
        return Err(bad(ctx, "missing min part"));
    }
    let Some(min) = num(&mut i, 2) else { return Err(bad(ctx, "two digits min is expected after ':'")) };
    if !expect(&mut i, b':') {
        return Err(bad(ctx, "missing sec part"));
    }
    let Some(sec) = num(&mut i, 2) else { return Err(bad(ctx, "two digits sec is expected after ':'")) };
    let (mut fnum, mut fden) = (BigInt::zero(), BigInt::one());
    if expect(&mut i, b'.') {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return Err(bad(ctx, "subsecond expected after dot"));
        }
        fnum = BigInt::parse_bytes(&b[start..i], 10).unwrap_or_default();
        fden = Pow::pow(BigInt::from(10), (i - start) as u32);
    }
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    let mut zone = zone_kw.unwrap_or(Value::NIL);
    if i < b.len() {
        zone = string::new_from_bytes(ctx, &b[i..]);
    }
    let vals = [Value::fixnum(year), Value::fixnum(mon), Value::fixnum(mday), Value::fixnum(hour), Value::fixnum(min), Value::fixnum(sec)];
    let mut f = time_fields(ctx, &vals, false)?;
    f.frac_num = fnum;
    f.frac_den = fden;
    make_in_zone(ctx, recv, &f, zone)
}

/// `Time#initialize`: `Time.new` is allocate + initialize, so an `initialize` defined by
/// reopening Time or in a subclass runs (and reaches this one with `super`).
fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let t = build(ctx, klass, args)?;
    crate::object::move_data(recv, t);
    Ok(Value::NIL)
}

/// A new Time of class `recv` from `Time.new`'s arguments.
fn build(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let zone_kw = in_kwarg(ctx, args);
    if args.pos.is_empty() {
        let (n, d) = now_parts();
        let zone = match zone_kw {
            Some(z) => zone_for_instant(ctx, recv, z, &n, &d)?,
            None => Zone::Local,
        };
        return Ok(new_time(ctx, recv, n, d, zone));
    }
    if args.pos.len() == 1 && string::is_string(args.pos[0]) {
        return parse_time_string(ctx, recv, args.pos[0], zone_kw);
    }
    if args.pos.len() > 7 {
        return Err(ctx.arity_error(args.pos.len(), 0, Some(7)));
    }
    let zone = match args.pos.get(6) {
        Some(&z) if !z.is_nil() => {
            if zone_kw.is_some() {
                return Err(ctx.arg_error("timezone argument given as positional and keyword arguments"));
            }
            z
        }
        _ => zone_kw.unwrap_or(Value::NIL),
    };
    let f = time_fields(ctx, &args.pos[..args.pos.len().min(6)], false)?;
    make_in_zone(ctx, recv, &f, zone)
}

// ---- accessors ----

macro_rules! tm_field {
    ($name:ident, |$tm:ident| $e:expr) => {
        fn $name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
            let $tm = tm_of(ctx, recv)?;
            Ok($e)
        }
    };
}

// Years span the whole i64 range (past Fixnum's).
fn m_year(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    Ok(bignum::from_i128(ctx, tm.year as i128))
}
tm_field!(m_month, |tm| Value::fixnum(tm.mon as i64));
tm_field!(m_day, |tm| Value::fixnum(tm.mday as i64));
tm_field!(m_hour, |tm| Value::fixnum(tm.hour as i64));
tm_field!(m_min, |tm| Value::fixnum(tm.min as i64));
tm_field!(m_sec, |tm| Value::fixnum(tm.sec as i64));
tm_field!(m_wday, |tm| Value::fixnum(tm.wday as i64));
tm_field!(m_yday, |tm| Value::fixnum(tm.yday as i64));
tm_field!(m_utc_offset, |tm| Value::fixnum(tm.utc_offset as i64));
tm_field!(m_isdst, |tm| Value::bool(tm.isdst));
tm_field!(m_sunday, |tm| Value::bool(tm.wday == 0));
tm_field!(m_monday, |tm| Value::bool(tm.wday == 1));
tm_field!(m_tuesday, |tm| Value::bool(tm.wday == 2));
tm_field!(m_wednesday, |tm| Value::bool(tm.wday == 3));
tm_field!(m_thursday, |tm| Value::bool(tm.wday == 4));
tm_field!(m_friday, |tm| Value::bool(tm.wday == 5));
tm_field!(m_saturday, |tm| Value::bool(tm.wday == 6));

fn scaled_sub(ctx: &mut Ctx, recv: Value, scale: i64) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    let v = (tm.sub_num * scale).div_floor(&tm.sub_den);
    Ok(bignum::normalize(ctx, v))
}

fn m_usec(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    scaled_sub(ctx, recv, 1_000_000)
}

fn m_nsec(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    scaled_sub(ctx, recv, 1_000_000_000)
}

fn m_subsec(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    if tm.sub_num.is_zero() {
        return Ok(Value::fixnum(0));
    }
    rational::reduce(ctx, tm.sub_num, tm.sub_den)
}

fn m_zone(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if let Zone::Obj(z, _) = get(ctx, recv)?.zone {
        return Ok(z);
    }
    let tm = tm_of(ctx, recv)?;
    match tm.zone {
        Some(z) => Ok(string::new_us_ascii(ctx, &z)),
        None => Ok(Value::NIL),
    }
}

fn m_utc_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.zone == Zone::Utc))
}

fn m_to_i(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let v = t.num.div_floor(&t.den);
    Ok(bignum::normalize(ctx, v))
}

fn m_to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let f = crate::core::numeric_parse::ratio_to_f64(&t.num, &t.den);
    Ok(float::new(ctx, f))
}

fn m_to_r(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let (n, d) = (t.num.clone(), t.den.clone());
    rational::reduce(ctx, n, d)
}

fn m_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    let zone = match &tm.zone {
        Some(z) => string::new_us_ascii(ctx, z),
        None => Value::NIL,
    };
    let year = bignum::from_i128(ctx, tm.year as i128);
    let items = [
        Value::fixnum(tm.sec as i64),
        Value::fixnum(tm.min as i64),
        Value::fixnum(tm.hour as i64),
        Value::fixnum(tm.mday as i64),
        Value::fixnum(tm.mon as i64),
        year,
        Value::fixnum(tm.wday as i64),
        Value::fixnum(tm.yday as i64),
        Value::bool(tm.isdst),
        zone,
    ];
    Ok(array::from_slice(ctx, &items))
}

fn m_deconstruct_keys(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let tm = tm_of(ctx, recv)?;
    let h = hash::new(ctx);
    let keys = args.pos[0];
    let wanted = |ctx: &mut Ctx, name: &str| -> bool {
        if keys.is_nil() {
            return true;
        }
        let k = Value::symbol(ctx.intern(name));
        (0..array::len(keys)).any(|i| array::get(keys, i) == k)
    };
    if !keys.is_nil() && !array::is_array(keys) {
        let cname = object::class_name_of(ctx, keys);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Array or nil)")));
    }
    let fields: [(&str, i64); 8] = [
        ("year", tm.year),
        ("month", tm.mon as i64),
        ("day", tm.mday as i64),
        ("yday", tm.yday as i64),
        ("wday", tm.wday as i64),
        ("hour", tm.hour as i64),
        ("min", tm.min as i64),
        ("sec", tm.sec as i64),
    ];
    for (name, v) in fields {
        if wanted(ctx, name) {
            let k = Value::symbol(ctx.intern(name));
            let v = bignum::from_i128(ctx, v as i128);
            hash::aset(ctx, h, k, v)?;
        }
    }
    if wanted(ctx, "subsec") {
        let s = m_subsec(ctx, recv, args)?;
        let k = Value::symbol(ctx.intern("subsec"));
        hash::aset(ctx, h, k, s)?;
    }
    if wanted(ctx, "dst") {
        let k = Value::symbol(ctx.intern("dst"));
        hash::aset(ctx, h, k, Value::bool(tm.isdst))?;
    }
    if wanted(ctx, "zone") {
        let z = m_zone(ctx, recv, args)?;
        let k = Value::symbol(ctx.intern("zone"));
        hash::aset(ctx, h, k, z)?;
    }
    Ok(h)
}

// ---- zone conversion ----

fn set_zone(ctx: &mut Ctx, recv: Value, zone: Zone) -> Result<Value> {
    let t = get(ctx, recv)?;
    if t.zone != zone {
        ctx.check_frozen(recv)?;
        get(ctx, recv)?.zone = zone;
    }
    Ok(recv)
}

fn m_utc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    set_zone(ctx, recv, Zone::Utc)
}

fn m_localtime(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let zone = match args.pos.first() {
        Some(&z) => {
            let t = get(ctx, recv)?;
            let (n, d) = (t.num.clone(), t.den.clone());
            let klass = object::real_class_of(ctx, recv);
            zone_for_instant(ctx, klass, z, &n, &d)?
        }
        None => Zone::Local,
    };
    set_zone(ctx, recv, zone)
}

fn copy_with_zone(ctx: &mut Ctx, recv: Value, zone: Zone) -> Result<Value> {
    let t = get(ctx, recv)?;
    let (n, d) = (t.num.clone(), t.den.clone());
    let klass = object::real_class_of(ctx, recv);
    Ok(new_time(ctx, klass, n, d, zone))
}

fn m_getutc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    copy_with_zone(ctx, recv, Zone::Utc)
}

fn m_getlocal(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let zone = match args.pos.first() {
        Some(&z) => {
            let t = get(ctx, recv)?;
            let (n, d) = (t.num.clone(), t.den.clone());
            let klass = object::real_class_of(ctx, recv);
            zone_for_instant(ctx, klass, z, &n, &d)?
        }
        None => Zone::Local,
    };
    copy_with_zone(ctx, recv, zone)
}

fn m_dup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let z = get(ctx, recv)?.zone;
    copy_with_zone(ctx, recv, z)
}

fn m_clone(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let c = m_dup(ctx, recv, args)?;
    let freeze = args.kwarg(ctx, "freeze");
    let frozen = match freeze {
        Some(v) if v == Value::FALSE => false,
        Some(v) if v == Value::TRUE => true,
        _ => object::is_frozen(recv),
    };
    if frozen {
        object::freeze(c);
    }
    Ok(c)
}

// ---- arithmetic and comparison ----

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if is_time(o) {
        return Err(ctx.type_error("time + time?"));
    }
    let (n, d) = exact_arg(ctx, o)?;
    let t = get(ctx, recv)?;
    let (num, den) = (&t.num * &d + n * &t.den, &t.den * d);
    let zone = t.zone;
    let zone = rezone(ctx, zone, &num, &den)?;
    Ok(new_time(ctx, ctx.c().time, num, den, zone))
}

fn m_minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if let Some(other) = data_ref::<TimeObj>(o) {
        let (on, od) = (other.num.clone(), other.den.clone());
        let t = get(ctx, recv)?;
        let (num, den) = (&t.num * &od - on * &t.den, &t.den * od);
        let f = crate::core::numeric_parse::ratio_to_f64(&num, &den);
        return Ok(float::new(ctx, f));
    }
    let (n, d) = exact_arg(ctx, o)?;
    let t = get(ctx, recv)?;
    let (num, den) = (&t.num * &d - n * &t.den, &t.den * d);
    let zone = t.zone;
    let zone = rezone(ctx, zone, &num, &den)?;
    Ok(new_time(ctx, ctx.c().time, num, den, zone))
}

fn cmp_times(a: &TimeObj, b: &TimeObj) -> std::cmp::Ordering {
    (&a.num * &b.den).cmp(&(&b.num * &a.den))
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    let Some(b) = data_ref::<TimeObj>(o) else {
        // CRuby's rb_invcmp: the other's `<=>`, its sign reversed.
        let r = crate::core::convert::check_funcall(ctx, o, sym::CMP, &[recv])?.unwrap_or(Value::NIL);
        if r.is_nil() {
            return Ok(r);
        }
        let c = crate::core::comparable::cmp_result(ctx, r, o, recv)?;
        return Ok(Value::fixnum(-c));
    };
    let a = get(ctx, recv)?;
    Ok(Value::fixnum(cmp_times(a, b) as i64))
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = data_ref::<TimeObj>(args.pos[0]) else { return Ok(Value::FALSE) };
    let a = get(ctx, recv)?;
    Ok(Value::bool(cmp_times(a, b) == std::cmp::Ordering::Equal))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let seed = ctx.vm().hash_seed;
    let h = crate::core::hash::mix(crate::core::hash::hash_bytes(seed, &t.num.to_signed_bytes_le()), crate::core::hash::hash_bytes(seed, &t.den.to_signed_bytes_le()));
    Ok(Value::fixnum((h >> 2) as i64))
}

/// `round`/`floor`/`ceil` of the subsecond part to `digits` decimal places.
fn round_impl(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    let digits = match args.pos.first() {
        Some(&d) => integer::to_i64_arg(ctx, d)?,
        None => 0,
    };
    if digits < 0 {
        return Err(ctx.arg_error("negative ndigits given"));
    }
    let t = get(ctx, recv)?;
    let scale: BigInt = Pow::pow(BigInt::from(10), digits.min(1000) as u32);
    let x = &t.num * &scale;
    let (q, r) = x.div_mod_floor(&t.den);
    let up = match kind {
        b'f' => false,
        b'c' => !r.is_zero(),
        _ => (&r * 2) >= t.den,
    };
    let q = if up { q + 1 } else { q };
    let zone = t.zone;
    Ok(new_time(ctx, ctx.c().time, q, scale, zone))
}

fn m_round(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b'r')
}
fn m_floor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b'f')
}
fn m_ceil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_impl(ctx, recv, args, b'c')
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().time;
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, c, [
        ("now", s_now, [0], Safe, Singleton, Kw),
        ("at", s_at, [1..=3], Safe, Singleton, Kw),
        ("utc", s_utc, [1..=10], Safe, Singleton),
        ("gm", s_utc, [1..=10], Safe, Singleton),
        ("local", s_local, [1..=10], Safe, Singleton),
        ("mktime", s_local, [1..=10], Safe, Singleton),
        ("initialize", initialize, [0..], Safe, Private, Kw),
        ("year", m_year, [0], Safe),
        ("month", m_month, [0], Safe),
        ("mon", m_month, [0], Safe),
        ("day", m_day, [0], Safe),
        ("mday", m_day, [0], Safe),
        ("hour", m_hour, [0], Safe),
        ("min", m_min, [0], Safe),
        ("sec", m_sec, [0], Safe),
        ("usec", m_usec, [0], Safe),
        ("tv_usec", m_usec, [0], Safe),
        ("nsec", m_nsec, [0], Safe),
        ("tv_nsec", m_nsec, [0], Safe),
        ("subsec", m_subsec, [0], Safe),
        ("wday", m_wday, [0], Safe),
        ("yday", m_yday, [0], Safe),
        ("zone", m_zone, [0], Safe),
        ("utc_offset", m_utc_offset, [0], Safe),
        ("gmt_offset", m_utc_offset, [0], Safe),
        ("gmtoff", m_utc_offset, [0], Safe),
        ("utc?", m_utc_p, [0], Safe),
        ("gmt?", m_utc_p, [0], Safe),
        ("dst?", m_isdst, [0], Safe),
        ("isdst", m_isdst, [0], Safe),
        ("sunday?", m_sunday, [0], Safe),
        ("monday?", m_monday, [0], Safe),
        ("tuesday?", m_tuesday, [0], Safe),
        ("wednesday?", m_wednesday, [0], Safe),
        ("thursday?", m_thursday, [0], Safe),
        ("friday?", m_friday, [0], Safe),
        ("saturday?", m_saturday, [0], Safe),
        ("to_i", m_to_i, [0], Safe),
        ("tv_sec", m_to_i, [0], Safe),
        ("to_f", m_to_f, [0], Safe),
        ("to_r", m_to_r, [0], Safe),
        ("to_a", m_to_a, [0], Safe),
        ("deconstruct_keys", m_deconstruct_keys, [1], Safe),
        ("utc", m_utc, [0], Unsafe),
        ("gmtime", m_utc, [0], Unsafe),
        ("localtime", m_localtime, [0..=1], Unsafe),
        ("getutc", m_getutc, [0], Safe),
        ("getgm", m_getutc, [0], Safe),
        ("getlocal", m_getlocal, [0..=1], Safe),
        ("dup", m_dup, [0], Safe),
        ("clone", m_clone, [0], Safe, Kw),
        ("+", m_plus, [1], Safe),
        ("-", m_minus, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("round", m_round, [0..=1], Safe),
        ("floor", m_floor, [0..=1], Safe),
        ("ceil", m_ceil, [0..=1], Safe),
    ]);
    crate::core::time_format::init(ctx);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_round_trip() {
        for &(y, m, d) in &[(1970, 1, 1), (2000, 2, 29), (1900, 3, 1), (-1, 12, 31), (2024, 12, 31), (10000, 1, 1)] {
            let days = days_from_civil(y, m, d);
            assert_eq!(civil_from_days(days), (y, m, d));
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 1, 1), 10957);
    }

    #[test]
    fn breakdown_utc() {
        let tm = breakdown(&BigInt::from(946782245), &BigInt::one(), Zone::Utc);
        assert_eq!((tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec, tm.wday, tm.yday), (2000, 1, 2, 3, 4, 5, 0, 2));
        let tm = breakdown(&BigInt::from(-1), &BigInt::one(), Zone::Fixed(3600));
        assert_eq!((tm.year, tm.mon, tm.mday, tm.hour, tm.min, tm.sec), (1970, 1, 1, 0, 59, 59));
    }
}
