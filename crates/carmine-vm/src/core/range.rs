//! Range: `begin..end` / `begin...end`, possibly beginless or endless.
//!
//! Invariants: `begin`/`end` are nil for an open side; `RBasic::aux` bit 0 marks an
//! exclusive end. Ranges built from literals are frozen.

use crate::core::{array, integer, object, string};
use crate::heap::page::SLOT_SIZE;
use crate::heap::Marker;
use crate::interp::Args;
use crate::object::{basic, is_type, ObjType, RBasic};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[repr(C)]
pub struct RRange {
    pub basic: RBasic,
    pub begin: Value,
    pub end: Value,
}

const _: () = assert!(std::mem::size_of::<RRange>() <= SLOT_SIZE);

#[inline]
fn rrange<'a>(v: Value) -> &'a mut RRange {
    // SAFETY: callers pass a Range value.
    unsafe { &mut *v.as_ptr::<RRange>() }
}

#[inline]
pub fn is_range(v: Value) -> bool {
    is_type(v, ObjType::Range)
}

pub fn begin(v: Value) -> Value {
    rrange(v).begin
}

pub fn end(v: Value) -> Value {
    rrange(v).end
}

pub fn excl(v: Value) -> bool {
    basic(v).aux & 1 != 0
}

pub fn new_raw(ctx: &mut Ctx, b: Value, e: Value, excl: bool) -> Value {
    let klass = ctx.c().range;
    let p = ctx.alloc_slot(ObjType::Range, klass) as *mut RRange;
    // SAFETY: fresh Range slot.
    unsafe {
        (*p).begin = b;
        (*p).end = e;
        (*p).basic.aux = excl as u32;
    }
    Value::from_ptr(p)
}

/// A range, checking that the ends are comparable (`ArgumentError: bad value for range`).
pub fn new_checked(ctx: &mut Ctx, b: Value, e: Value, excl: bool) -> Result<Value> {
    if !(b.is_fixnum() && e.is_fixnum()) && !b.is_nil() && !e.is_nil() {
        let c = ctx.call(b, sym::CMP, &[e]);
        match c {
            Ok(v) if !v.is_nil() => {}
            _ => return Err(ctx.arg_error("bad value for range")),
        }
    }
    Ok(new_raw(ctx, b, e, excl))
}

pub fn allocate(ctx: &mut Ctx, klass: Value) -> Value {
    let r = new_raw(ctx, Value::NIL, Value::NIL, false);
    basic(r).klass = klass;
    r
}

pub fn dup(ctx: &mut Ctx, v: Value) -> Value {
    let r = new_raw(ctx, begin(v), end(v), excl(v));
    basic(r).klass = basic(v).klass;
    r
}

pub fn mark(v: Value, m: &mut Marker<'_>) {
    let r = rrange(v);
    m.mark(r.begin);
    m.mark(r.end);
}

/// (start, length) of a range used as an index into a sequence of `len` elements;
/// `None` when the start is out of range.
pub fn resolve_bounds(ctx: &mut Ctx, r: Value, len: i64) -> Result<Option<(i64, i64)>> {
    let b = if begin(r).is_nil() { 0 } else { integer::to_i64_arg(ctx, begin(r))? };
    let e = if end(r).is_nil() { -1 } else { integer::to_i64_arg(ctx, end(r))? };
    let ex = excl(r) && !end(r).is_nil();
    let s = if b < 0 { b + len } else { b };
    if s < 0 || s > len {
        return Ok(None);
    }
    let mut e = if e < 0 { e + len } else { e };
    if !ex {
        e += 1;
    }
    let count = (e - s).max(0);
    Ok(Some((s, count)))
}

/// Like `resolve_bounds`, but a start past the end is allowed (for `ary[r] = v`).
pub fn resolve_bounds_for_write(ctx: &mut Ctx, r: Value, len: i64) -> Result<Option<(i64, i64)>> {
    let b = if begin(r).is_nil() { 0 } else { integer::to_i64_arg(ctx, begin(r))? };
    let e = if end(r).is_nil() { -1 } else { integer::to_i64_arg(ctx, end(r))? };
    let ex = excl(r) && !end(r).is_nil();
    let s = if b < 0 { b + len } else { b };
    if s < 0 {
        return Ok(None);
    }
    let mut e = if e < 0 { e + len } else { e };
    if !ex {
        e += 1;
    }
    Ok(Some((s, (e - s).max(0))))
}

fn cmp(ctx: &mut Ctx, a: Value, b: Value) -> Result<Option<i64>> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok(Some((x > y) as i64 - (x < y) as i64));
    }
    let r = ctx.call(a, sym::CMP, &[b])?;
    Ok(r.as_fixnum().map(|i| i.signum()).or_else(|| if r.is_nil() { None } else { Some(crate::core::comparable::cmp_result(ctx, r, a, b).unwrap_or(0)) }))
}

/// `range.cover?(v)` semantics.
pub fn covers(ctx: &mut Ctx, r: Value, v: Value) -> Result<bool> {
    let (b, e) = (begin(r), end(r));
    if !b.is_nil() {
        match cmp(ctx, b, v)? {
            Some(c) if c <= 0 => {}
            _ => return Ok(false),
        }
    }
    if !e.is_nil() {
        match cmp(ctx, v, e)? {
            Some(c) if c < 0 || (c == 0 && !excl(r)) => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

// ---- methods ----

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let excl = args.pos.get(2).is_some_and(|v| v.truthy());
    let r = new_checked(ctx, args.pos[0], args.pos[1], excl)?;
    basic(r).klass = recv;
    Ok(r)
}

fn m_begin(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(begin(recv))
}

fn m_end(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(end(recv))
}

fn m_first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        if begin(recv).is_nil() {
            return Err(ctx.range_error("cannot get the first element of beginless range"));
        }
        return Ok(begin(recv));
    }
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size (or size too big)"));
    }
    let out = array::new(ctx);
    let mut count = 0;
    each_value(ctx, recv, &mut |ctx, v| {
        if count >= n {
            return Ok(false);
        }
        array::push(ctx, out, v);
        count += 1;
        Ok(count < n)
    })?;
    Ok(out)
}

fn m_last(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        if end(recv).is_nil() {
            return Err(ctx.range_error("cannot get the last element of endless range"));
        }
        return Ok(end(recv));
    }
    let all = m_to_a(ctx, recv, &Args::new(&[]))?;
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size"));
    }
    let l = array::len(all);
    let k = (n as usize).min(l);
    let v = array::slice_to_vec(all, l - k, k);
    Ok(array::from_vec(ctx, v))
}

fn m_exclude_end(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(excl(recv)))
}

/// Iterates the range's values; `f` returns false to stop.
pub fn each_value(ctx: &mut Ctx, r: Value, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let (b, e, ex) = (begin(r), end(r), excl(r));
    if let Some(s) = b.as_fixnum() {
        if e.is_nil() {
            let mut i = s;
            loop {
                let v = Value::try_fixnum(i).unwrap_or(Value::NIL);
                if v.is_nil() || !f(ctx, v)? {
                    return Ok(());
                }
                i += 1;
            }
        }
        if let Some(t) = e.as_fixnum() {
            let last = if ex { t - 1 } else { t };
            let mut i = s;
            while i <= last {
                if !f(ctx, Value::fixnum(i))? {
                    return Ok(());
                }
                i += 1;
            }
            return Ok(());
        }
        if crate::core::float::is_float(e) {
            let t = crate::core::float::get(e);
            let mut i = s;
            while (i as f64) < t || (!ex && (i as f64) == t) {
                if !f(ctx, Value::fixnum(i))? {
                    return Ok(());
                }
                i += 1;
            }
            return Ok(());
        }
    }
    if b.is_nil() {
        return Err(ctx.type_error("can't iterate from NilClass"));
    }
    if string::is_string(b) && (string::is_string(e) || e.is_nil()) {
        if e.is_nil() {
            let mut cur = b;
            loop {
                if !f(ctx, cur)? {
                    return Ok(());
                }
                cur = ctx.call(cur, sym::SUCC, &[])?;
            }
        }
        string::upto_each(ctx, b, e, ex, f)?;
        return Ok(());
    }
    if !ctx.respond_to(b, sym::SUCC, true) {
        let cname = object::class_name_of(ctx, b);
        return Err(ctx.type_error(&format!("can't iterate from {cname}")));
    }
    let mut cur = b;
    loop {
        if !e.is_nil() {
            let c = cmp(ctx, cur, e)?.unwrap_or(1);
            if c > 0 || (c == 0 && ex) {
                return Ok(());
            }
        }
        if !f(ctx, cur)? {
            return Ok(());
        }
        if !e.is_nil() && cmp(ctx, cur, e)? == Some(0) {
            return Ok(());
        }
        cur = ctx.call(cur, sym::SUCC, &[])?;
    }
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        return crate::core::enumerator::enum_for_sized(ctx, recv, "each", &[], crate::core::enumerator::SizeFn::RangeSize);
    };
    each_value(ctx, recv, &mut |ctx, v| {
        ctx.yield1(&blk, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn m_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if end(recv).is_nil() {
        return Err(ctx.range_error("cannot convert endless range to an array"));
    }
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    size(ctx, recv)
}

pub fn size(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let (b, e) = (begin(recv), end(recv));
    if !crate::core::numeric::is_numeric(ctx, b) {
        if b.is_nil() && crate::core::numeric::is_numeric(ctx, e) {
            return Err(ctx.type_error("can't iterate from NilClass"));
        }
        if b.is_nil() {
            return Ok(Value::NIL);
        }
        let cname = object::class_name_of(ctx, b);
        return Err(ctx.type_error(&format!("can't iterate from {cname}")));
    }
    if e.is_nil() {
        return Ok(crate::core::float::new(ctx, f64::INFINITY));
    }
    if let (Some(x), Some(y)) = (b.as_fixnum(), e.as_fixnum()) {
        let n = if excl(recv) { y - x } else { y - x + 1 };
        return Ok(Value::fixnum(n.max(0)));
    }
    if crate::core::float::is_float(b) {
        return Err(ctx.type_error("can't iterate from Float"));
    }
    let fb = crate::core::numeric::to_f64(ctx, b)?;
    let fe = crate::core::numeric::to_f64(ctx, e)?;
    if fe.is_infinite() {
        return Ok(crate::core::float::new(ctx, f64::INFINITY));
    }
    let mut n = (fe - fb).floor() + 1.0;
    if excl(recv) && fb + n - 1.0 >= fe {
        n -= 1.0;
    }
    Ok(Value::fixnum(n.max(0.0) as i64))
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_range(o) {
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(excl(recv) == excl(o) && object::equal(ctx, begin(recv), begin(o))? && object::equal(ctx, end(recv), end(o))?))
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_range(o) {
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(excl(recv) == excl(o) && object::eql(ctx, begin(recv), begin(o))? && object::eql(ctx, end(recv), end(o))?))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = object::hash_of(ctx, begin(recv))?;
    let b = object::hash_of(ctx, end(recv))?;
    let h = crate::core::hash::mix(crate::core::hash::mix(a, b), excl(recv) as u64);
    Ok(Value::fixnum((h >> 2) as i64))
}

fn m_include(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let (b, e) = (begin(recv), end(recv));
    let numeric = crate::core::numeric::is_numeric(ctx, b) || crate::core::numeric::is_numeric(ctx, e);
    if numeric || b.is_nil() || e.is_nil() {
        return Ok(Value::bool(covers(ctx, recv, v)?));
    }
    if string::is_string(b) && string::is_string(e) {
        if !string::is_string(v) {
            return Ok(Value::FALSE);
        }
        return Ok(Value::bool(covers(ctx, recv, v)?));
    }
    let mut found = false;
    each_value(ctx, recv, &mut |ctx, x| {
        if object::equal(ctx, x, v)? {
            found = true;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(Value::bool(found))
}

fn m_cover(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if is_range(v) {
        let (vb, ve) = (begin(v), end(v));
        if !vb.is_nil() && !covers(ctx, recv, vb)? {
            return Ok(Value::FALSE);
        }
        if ve.is_nil() {
            return Ok(Value::bool(end(recv).is_nil()));
        }
        if excl(v) && !excl(recv) || excl(v) == excl(recv) {
            return Ok(Value::bool(covers(ctx, recv, ve)? || (excl(v) && !end(recv).is_nil() && object::equal(ctx, ve, end(recv))?)));
        }
        return Ok(Value::bool(covers(ctx, recv, ve)?));
    }
    Ok(Value::bool(covers(ctx, recv, v)?))
}

fn m_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match covers(ctx, recv, args.pos[0]) {
        Ok(b) => Ok(Value::bool(b)),
        Err(_) => Ok(Value::FALSE),
    }
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let mut out = Vec::new();
    if !begin(recv).is_nil() {
        let s = string::to_s(ctx, begin(recv))?;
        out.extend_from_slice(string::bytes(s));
    }
    out.extend_from_slice(if excl(recv) { b"..." } else { b".." });
    if !end(recv).is_nil() {
        let s = string::to_s(ctx, end(recv))?;
        out.extend_from_slice(string::bytes(s));
    }
    Ok(string::new_from_bytes(ctx, &out))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let mut out = Vec::new();
    let b = begin(recv);
    let e = end(recv);
    if !b.is_nil() || e.is_nil() {
        let s = object::inspect(ctx, b)?;
        if !b.is_nil() {
            out.extend_from_slice(string::bytes(s));
        } else if e.is_nil() {
            out.extend_from_slice(b"nil");
        }
    }
    out.extend_from_slice(if excl(recv) { b"..." } else { b".." });
    if !e.is_nil() {
        let s = object::inspect(ctx, e)?;
        out.extend_from_slice(string::bytes(s));
    } else if b.is_nil() {
        out.extend_from_slice(b"nil");
    }
    Ok(string::new_from_bytes(ctx, &out))
}

fn m_step(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    crate::core::enumerator::range_step(ctx, recv, args)
}

fn m_dup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(dup(ctx, recv))
}

fn m_sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_none() {
        if let (Some(b), Some(e)) = (begin(recv).as_fixnum(), end(recv).as_fixnum()) {
            let init = args.pos.first().copied().unwrap_or(Value::fixnum(0));
            let e = if excl(recv) { e - 1 } else { e };
            if e < b {
                return Ok(init);
            }
            let n = num_bigint::BigInt::from(e - b + 1) * (num_bigint::BigInt::from(b) + num_bigint::BigInt::from(e)) / 2;
            let total = crate::core::bignum::normalize(ctx, n);
            return ctx.call(init, sym::PLUS, &[total]);
        }
    }
    crate::core::enumerable::sum_impl(ctx, recv, args)
}

fn m_count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() && args.block.is_none() {
        if end(recv).is_nil() || begin(recv).is_nil() {
            return Ok(crate::core::float::new(ctx, f64::INFINITY));
        }
        if begin(recv).is_fixnum() {
            return size(ctx, recv);
        }
    }
    crate::core::enumerable::count_impl(ctx, recv, args)
}

fn m_minmax_simple(ctx: &mut Ctx, recv: Value, args: &Args, want_max: bool) -> Result<Value> {
    if args.block.is_some() || !args.pos.is_empty() || !(begin(recv).is_fixnum() && end(recv).is_fixnum()) {
        let name = if want_max { "max" } else { "min" };
        if want_max && end(recv).is_nil() {
            return Err(ctx.range_error("cannot get the maximum of endless range"));
        }
        if !want_max && begin(recv).is_nil() {
            return Err(ctx.range_error("cannot get the minimum of beginless range"));
        }
        return crate::core::enumerable::call_enumerable(ctx, recv, name, args);
    }
    let (b, e) = (begin(recv).fixnum_unchecked(), end(recv).fixnum_unchecked());
    let e = if excl(recv) { e - 1 } else { e };
    if e < b {
        return Ok(Value::NIL);
    }
    Ok(Value::fixnum(if want_max { e } else { b }))
}

fn m_min(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    m_minmax_simple(ctx, recv, args, false)
}

fn m_max(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    m_minmax_simple(ctx, recv, args, true)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().range;
    crate::methods!(ctx, c, [
        ("new", s_new, [2..=3], Safe, Singleton),
        ("begin", m_begin, [0], Safe),
        ("end", m_end, [0], Safe),
        ("first", m_first, [0..=1], Safe),
        ("last", m_last, [0..=1], Safe),
        ("min", m_min, [0..=1], Safe),
        ("max", m_max, [0..=1], Safe),
        ("exclude_end?", m_exclude_end, [0], Safe),
        ("each", m_each, [0], Safe),
        ("to_a", m_to_a, [0], Safe),
        ("entries", m_to_a, [0], Safe),
        ("size", m_size, [0], Safe),
        ("count", m_count, [0..=1], Safe),
        ("==", m_eq, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("include?", m_include, [1], Safe),
        ("member?", m_include, [1], Safe),
        ("cover?", m_cover, [1], Safe),
        ("===", m_eqq, [1], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("step", m_step, [0..=1], Safe),
        ("%", m_step, [1], Safe),
        ("dup", m_dup, [0], Safe),
        ("sum", m_sum, [0..=1], Safe),
    ]);
    let _ = integer::to_i64_arg;
}
