//! The hooks through which CRuby marshals some core classes, so their records match
//! CRuby's: `Time#_dump`/`Time._load` (8 packed bytes plus `nano_num`, `nano_den`,
//! `submicro`, `offset` and `zone` instance variables on the String), `Encoding#_dump`/
//! `Encoding._load` (the name), and `marshal_dump` for Rational and Complex (`[a, b]`; the
//! loader builds those two itself, as CRuby's compat allocators do).
//!
//! Invariants: a Time's packed fields are its UTC calendar fields; the year is stored in
//! a `year` instance variable when `year - 1900` does not fit in 16 bits.

use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{Signed, ToPrimitive, Zero};

use super::*;
use crate::core::time::{self, TimeObj, Zone};
use crate::core::{array, bignum, encoding, object};
use crate::object::data_ref;

fn time_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a TimeObj> {
    match data_ref::<TimeObj>(v) {
        Some(t) => Ok(t),
        None => Err(ctx.type_error("uninitialized Time")),
    }
}

/// `Time#_dump`.
fn time_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = time_of(ctx, recv)?;
    let (num, den, zone) = (t.num.clone(), t.den.clone(), t.zone);
    let utc = time::breakdown(&num, &den, Zone::Utc);
    let shown = time::tm_of(ctx, recv)?;
    // The fraction of the second in microseconds, and what is left in nanoseconds.
    let usec: BigInt = (&utc.sub_num * BigInt::from(1_000_000)).div_floor(&utc.sub_den);
    let nano_n: BigInt = &utc.sub_num * BigInt::from(1_000_000_000i64) - &usec * BigInt::from(1000) * &utc.sub_den;
    let g = nano_n.gcd(&utc.sub_den);
    let (nano_num, nano_den) = if nano_n.is_zero() { (BigInt::zero(), BigInt::from(1)) } else { (&nano_n / &g, &utc.sub_den / &g) };
    let nsec = (&nano_num / &nano_den).to_u32().unwrap_or(0);
    // Years outside 1900..=1900+0xffff keep 0 or 0xffff in the packed field and the
    // distance beyond it in bytes appended to the String (a length byte + 5, then the
    // distance little-endian).
    let year_field = (utc.year - 1900).clamp(0, 0xffff);
    let year_extra = if utc.year < 1900 { 1900 - utc.year } else { utc.year - 1900 - year_field };
    let p: u32 = 1 << 31
        | u32::from(zone == Zone::Utc) << 30
        | (year_field as u32) << 14
        | (utc.mon - 1) << 10
        | utc.mday << 5
        | utc.hour;
    let s: u32 = utc.min << 26 | utc.sec << 20 | usec.to_u32().unwrap_or(0);
    let mut packed = Vec::with_capacity(8);
    packed.extend_from_slice(&p.to_le_bytes());
    packed.extend_from_slice(&s.to_le_bytes());
    if year_extra > 0 {
        let le = year_extra.to_le_bytes();
        let n = le.iter().rposition(|&b| b != 0).map_or(1, |i| i + 1);
        packed.push(n as u8 + 5);
        packed.extend_from_slice(&le[..n]);
    }
    let out = string::new_binary(ctx, &packed);
    for (n, v) in object::ivar_list(ctx, recv) {
        if !is_internal_ivar(&ctx.sym_name(n)) {
            object::ivar_set_raw(ctx, out, n, v);
        }
    }
    if !nano_num.is_zero() {
        let n = bignum::normalize(ctx, nano_num);
        let d = bignum::normalize(ctx, nano_den);
        let (nid, did) = (ctx.intern("nano_num"), ctx.intern("nano_den"));
        object::ivar_set_raw(ctx, out, nid, n);
        object::ivar_set_raw(ctx, out, did, d);
    }
    if nsec != 0 {
        // Packed decimal digits of the nanoseconds (CRuby 1.9's format).
        let b0 = ((nsec / 100 % 10) << 4 | (nsec / 10 % 10)) as u8;
        let b1 = ((nsec % 10) << 4) as u8;
        let digits: &[u8] = if b1 == 0 { &[b0] } else { &[b0, b1] };
        let sm = string::new_binary(ctx, digits);
        let id = ctx.intern("submicro");
        object::ivar_set_raw(ctx, out, id, sm);
    }
    if zone != Zone::Utc {
        let id = ctx.intern("offset");
        object::ivar_set_raw(ctx, out, id, Value::fixnum(shown.utc_offset as i64));
    }
    let zname = match &shown.zone {
        Some(z) if !matches!(zone, Zone::Fixed(_) | Zone::Obj(..)) => string::new_us_ascii(ctx, z),
        _ => Value::NIL,
    };
    let id = ctx.intern("zone");
    object::ivar_set_raw(ctx, out, id, zname);
    Ok(out)
}

fn int_ivar(ctx: &mut Ctx, v: Value, name: &str) -> Option<BigInt> {
    let id = ctx.intern(name);
    let x = object::ivar_get(ctx, v, id);
    crate::core::integer::is_integer(x).then(|| bignum::to_big(x))
}

/// `Time._load(string)`.
fn time_load(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let b = string::bytes(s);
    if b.len() < 8 {
        return Err(ctx.type_error("marshaled time format differ"));
    }
    let p = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let w = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let mut zone = Zone::Local;
    let b = b.to_vec();
    let (num, den) = if p & (1 << 31) == 0 {
        // The pre-1.8 format: seconds and microseconds since the epoch.
        (BigInt::from(p) * BigInt::from(1_000_000) + BigInt::from(w), BigInt::from(1_000_000))
    } else {
        let utc_p = p >> 30 & 1 == 1;
        let field = ((p >> 14) & 0xffff) as i64;
        let mut year = field + 1900;
        if b.len() > 9 && b[8] > 5 {
            let n = (b[8] - 5) as usize;
            let extra = b[9..].iter().take(n.min(8)).rev().fold(0i64, |acc, &x| acc << 8 | x as i64);
            year = if field == 0 { 1900 - extra } else { year + extra };
        }
        if let Some(y) = int_ivar(ctx, s, "year").and_then(|y| y.to_i64()) {
            year = y;
        }
        let (mon, mday, hour) = (((p >> 10) & 0xf) + 1, (p >> 5) & 0x1f, p & 0x1f);
        let (min, sec, usec) = ((w >> 26) & 0x3f, (w >> 20) & 0x3f, w & 0xfffff);
        let days = time::days_from_civil(year, mon.min(12), mday.max(1));
        let secs: BigInt = BigInt::from(days) * BigInt::from(86400) + BigInt::from(hour * 3600 + min * 60 + sec);
        let (nano_num, nano_den) = match (int_ivar(ctx, s, "nano_num"), int_ivar(ctx, s, "nano_den")) {
            (Some(n), Some(d)) if !d.is_zero() => (n, d),
            _ => {
                let sid = ctx.intern("submicro");
                let sm = object::ivar_get(ctx, s, sid);
                let mut n = 0u32;
                if string::is_string(sm) {
                    let d = string::bytes(sm);
                    let b0 = d.first().copied().unwrap_or(0) as u32;
                    let b1 = d.get(1).copied().unwrap_or(0) as u32;
                    n = (b0 >> 4) * 100 + (b0 & 0xf) * 10 + (b1 >> 4);
                }
                (BigInt::from(n), BigInt::from(1))
            }
        };
        let num: BigInt = (secs * BigInt::from(1_000_000_000i64) + BigInt::from(usec) * BigInt::from(1000)) * &nano_den + nano_num;
        let den: BigInt = nano_den * BigInt::from(1_000_000_000i64);
        if utc_p {
            zone = Zone::Utc;
        } else if let Some(off) = int_ivar(ctx, s, "offset").and_then(|o| o.to_i32()) {
            zone = Zone::Fixed(off);
            // A Time in the local zone stays local when the zone still gives it that
            // offset and name.
            time::sync_tz(ctx);
            let epoch = num.div_floor(&den).to_i64().unwrap_or(0);
            let (loff, _, lname) = time::local_info(epoch);
            let zid = ctx.intern("zone");
            let zv = object::ivar_get(ctx, s, zid);
            if loff == off && string::is_string(zv) && string::bytes(zv) == lname.as_bytes() {
                zone = Zone::Local;
            }
        }
        (num, den)
    };
    let (num, den) = if den.is_negative() { (-num, -den) } else { (num, den) };
    let t = time::new_time(ctx, recv, num, den, zone);
    for (n, v) in object::ivar_list(ctx, s) {
        let name = ctx.sym_name(n);
        if name.first() == Some(&b'@') {
            object::ivar_set_raw(ctx, t, n, v);
        }
    }
    Ok(t)
}

/// `Rational#marshal_dump` / `Complex#marshal_dump`: the two parts.
fn numeric_pair_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (a, b) = if let Some(r) = data_ref::<crate::core::rational::RationalObj>(recv) {
        (r.num, r.den)
    } else if let Some(c) = data_ref::<crate::core::complex::ComplexObj>(recv) {
        (c.re, c.im)
    } else {
        return Err(ctx.type_error("not a Rational or Complex"));
    };
    Ok(array::from_slice(ctx, &[a, b]))
}

/// `Encoding#_dump`.
fn encoding_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = encoding::encoding_arg(ctx, recv)?;
    Ok(string::new_us_ascii(ctx, encoding::name(e)))
}

/// `Encoding._load(name)`.
fn encoding_load(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let e = encoding::encoding_arg(ctx, args.pos[0])?;
    Ok(encoding::encoding_object(ctx, e))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().clone();
    crate::methods!(ctx, c.time, [("_dump", time_dump, [0..=1], Unsafe, Private)]);
    // CRuby's Time._load is private too.
    let time_single = object::singleton_class(ctx, c.time).expect("singleton class of Time");
    crate::methods!(ctx, time_single, [("_load", time_load, [1], Unsafe, Private)]);
    crate::methods!(ctx, c.rational, [("marshal_dump", numeric_pair_dump, [0], Safe, Private)]);
    crate::methods!(ctx, c.complex, [("marshal_dump", numeric_pair_dump, [0], Safe, Private)]);
    crate::methods!(ctx, c.encoding, [
        ("_dump", encoding_dump, [0..=1], Safe),
        ("_load", encoding_load, [1], Safe, Singleton),
    ]);
}
