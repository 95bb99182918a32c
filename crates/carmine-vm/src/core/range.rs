//! Range: `begin..end` / `begin...end`, possibly beginless or endless — representation,
//! construction, comparison and the methods that do not iterate (iteration is in
//! `range_iter.rs`).
//!
//! Invariants:
//! - `begin`/`end` are nil for an open side; `RBasic::aux` bit 0 marks an exclusive end,
//!   bit 1 an initialized range (`Range.allocate` makes an uninitialized one, which
//!   `initialize`/`initialize_copy` fill in exactly once).
//! - Ranges of class Range itself are frozen once initialized (literals, `Range.new`);
//!   instances of subclasses are not.
//! - Comparisons follow CRuby's `r_less`: `<=>` answering nil counts as "greater"
//!   (`i64::MAX`), so incomparable values are never covered.

use crate::core::{array, bignum, comparable, convert, float, integer, numeric, object, string};
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

const EXCL: u32 = 1;
const INITIALIZED: u32 = 2;

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
    basic(v).aux & EXCL != 0
}

fn set(ctx: &mut Ctx, r: Value, b: Value, e: Value, exclusive: bool) {
    let rr = rrange(r);
    rr.begin = b;
    rr.end = e;
    basic(r).aux = INITIALIZED | if exclusive { EXCL } else { 0 };
    if basic(r).klass == ctx.c().range {
        object::freeze(r);
    }
}

/// A frozen Range of `b` and `e` without the comparability check.
pub fn new_raw(ctx: &mut Ctx, b: Value, e: Value, exclusive: bool) -> Value {
    let r = allocate(ctx, ctx.c().range);
    set(ctx, r, b, e, exclusive);
    r
}

/// CRuby's `range_init` check: ends other than two Fixnums or a nil must be comparable
/// (`ArgumentError: bad value for range`); exceptions from `<=>` propagate.
fn check_ends(ctx: &mut Ctx, b: Value, e: Value) -> Result<()> {
    if (!b.is_fixnum() || !e.is_fixnum()) && !b.is_nil() && !e.is_nil() {
        let c = ctx.call(b, sym::CMP, &[e])?;
        if c.is_nil() {
            return Err(ctx.arg_error("bad value for range"));
        }
    }
    Ok(())
}

/// A range, checking that the ends are comparable.
pub fn new_checked(ctx: &mut Ctx, b: Value, e: Value, exclusive: bool) -> Result<Value> {
    check_ends(ctx, b, e)?;
    Ok(new_raw(ctx, b, e, exclusive))
}

/// An uninitialized range of class `klass` (`Range.allocate`).
pub fn allocate(ctx: &mut Ctx, klass: Value) -> Value {
    let p = ctx.alloc_slot(ObjType::Range, klass) as *mut RRange;
    // SAFETY: fresh Range slot.
    unsafe {
        (*p).begin = Value::NIL;
        (*p).end = Value::NIL;
        (*p).basic.aux = 0;
    }
    Value::from_ptr(p)
}

/// The object `dup`/`clone` start from: an uninitialized range of the same class, which
/// `initialize_copy` then fills in.
pub fn dup(ctx: &mut Ctx, v: Value) -> Value {
    let klass = object::real_class_of(ctx, v);
    allocate(ctx, klass)
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

// ---- comparison helpers ----

/// CRuby's `r_less`: the sign of `a <=> b`, or `i64::MAX` when they are incomparable.
pub fn r_less(ctx: &mut Ctx, a: Value, b: Value) -> Result<i64> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok((x > y) as i64 - (x < y) as i64);
    }
    let r = ctx.call(a, sym::CMP, &[b])?;
    if r.is_nil() {
        return Ok(i64::MAX);
    }
    comparable::cmp_result(ctx, r, a, b)
}

/// `range.cover?(v)` for a single value (CRuby's `r_cover_p`).
pub fn covers(ctx: &mut Ctx, r: Value, v: Value) -> Result<bool> {
    let (b, e) = (begin(r), end(r));
    if b.is_nil() || r_less(ctx, b, v)? <= 0 {
        let lim = if excl(r) { -1 } else { 0 };
        if e.is_nil() || r_less(ctx, v, e)? <= lim {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `range.cover?(other_range)` (CRuby's `r_cover_range_p`).
fn covers_range(ctx: &mut Ctx, r: Value, val: Value) -> Result<bool> {
    let (b, e) = (begin(r), end(r));
    let (vb, ve) = (begin(val), end(val));
    if !e.is_nil() && ve.is_nil() {
        return Ok(false);
    }
    if !b.is_nil() && vb.is_nil() {
        return Ok(false);
    }
    if !vb.is_nil() && !ve.is_nil() && r_less(ctx, vb, ve)? > if excl(val) { -1 } else { 0 } {
        return Ok(false);
    }
    if !vb.is_nil() && !covers(ctx, r, vb)? {
        return Ok(false);
    }
    let cmp_end = r_less(ctx, e, ve)?;
    if excl(r) == excl(val) {
        return Ok(cmp_end >= 0);
    } else if excl(r) {
        return Ok(cmp_end > 0);
    } else if cmp_end >= 0 {
        return Ok(true);
    }
    // `self` includes its end, `val` excludes its own: compare with val's last element.
    let max = ctx.intern("max");
    let val_max = match ctx.call(val, max, &[]) {
        Ok(v) => v,
        Err(crate::error::Unwind::Raise(ex)) if object::is_a(ctx, ex, ctx.c().type_error) => return Ok(false),
        Err(other) => return Err(other),
    };
    if val_max.is_nil() {
        return Ok(false);
    }
    let c = r_less(ctx, e, val_max)?;
    Ok(c >= 0 && c != i64::MAX)
}

/// CRuby's `linear_object_p`: numbers and Times, whose ranges are continuous.
fn linear_object(ctx: &mut Ctx, v: Value) -> bool {
    if v.is_fixnum() || float::is_float(v) || bignum::is_bignum(v) {
        return true;
    }
    if !v.is_heap() {
        return false;
    }
    numeric::is_numeric(ctx, v) || object::is_a(ctx, v, ctx.c().time)
}

/// CRuby's `discrete_object_p`: values with `succ`.
pub fn discrete_object(ctx: &mut Ctx, v: Value) -> bool {
    ctx.respond_to(v, sym::SUCC, false)
}

/// CRuby's `rb_check_to_integer(v, "to_int")`: an Integer, `to_int`'s Integer result, or
/// `None`.
fn check_to_integer(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if integer::is_integer(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() && !float::is_float(v) {
        return Ok(None);
    }
    match convert::check_funcall(ctx, v, sym::TO_INT, &[])? {
        Some(r) if integer::is_integer(r) => Ok(Some(r)),
        _ => Ok(None),
    }
}

pub fn cant_iterate_from(ctx: &mut Ctx, v: Value) -> crate::error::Unwind {
    let cname = object::class_name_of(ctx, v);
    ctx.type_error(&format!("can't iterate from {cname}"))
}

// ---- construction and copying ----

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify_check(ctx, recv)?;
    let exclusive = args.pos.get(2).is_some_and(|v| v.truthy());
    check_ends(ctx, args.pos[0], args.pos[1])?;
    set(ctx, recv, args.pos[0], args.pos[1], exclusive);
    Ok(Value::NIL)
}

/// CRuby's `range_modify`: a range is initialized once.
fn modify_check(ctx: &mut Ctx, recv: Value) -> Result<()> {
    ctx.check_frozen(recv)?;
    if basic(recv).aux & INITIALIZED != 0 {
        let id = ctx.intern("initialize");
        return Err(ctx.name_error("'initialize' called twice", id, recv));
    }
    Ok(())
}

fn initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = args.pos[0];
    if recv == src {
        return Ok(recv);
    }
    modify_check(ctx, recv)?;
    if !is_range(src) || object::real_class_of(ctx, recv) != object::real_class_of(ctx, src) {
        return Err(ctx.type_error("initialize_copy should take same class object"));
    }
    let rr = rrange(recv);
    rr.begin = begin(src);
    rr.end = end(src);
    basic(recv).aux = INITIALIZED | if excl(src) { EXCL } else { 0 };
    Ok(recv)
}

// ---- accessors, equality, printing ----

fn m_begin(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(begin(recv))
}

fn m_end(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(end(recv))
}

fn m_exclude_end(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(excl(recv)))
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if recv == o {
        return Ok(Value::TRUE);
    }
    if !is_range(o) {
        return Ok(Value::FALSE);
    }
    let op = sym::EQ;
    object::guard_recursion(ctx, op, recv, o, Value::TRUE, |ctx| {
        Ok(Value::bool(object::equal(ctx, begin(recv), begin(o))? && object::equal(ctx, end(recv), end(o))? && excl(recv) == excl(o)))
    })
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if recv == o {
        return Ok(Value::TRUE);
    }
    if !is_range(o) {
        return Ok(Value::FALSE);
    }
    let op = sym::EQL;
    object::guard_recursion(ctx, op, recv, o, Value::TRUE, |ctx| {
        Ok(Value::bool(object::eql(ctx, begin(recv), begin(o))? && object::eql(ctx, end(recv), end(o))? && excl(recv) == excl(o)))
    })
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let x = excl(recv) as u64;
    let mut h = crate::core::hash::mix(ctx.vm().hash_seed, x);
    let a = object::hash_of(ctx, begin(recv))?;
    h = crate::core::hash::mix(h, a);
    let b = object::hash_of(ctx, end(recv))?;
    h = crate::core::hash::mix(h, b);
    h = crate::core::hash::mix(h, x << 24);
    Ok(Value::fixnum((h >> 2) as i64))
}

fn dots(ctx: &mut Ctx, r: Value) -> Value {
    string::new_us_ascii(ctx, if excl(r) { "..." } else { ".." })
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = string::to_s(ctx, begin(recv))?;
    let b = string::to_s(ctx, end(recv))?;
    let d = dots(ctx, recv);
    string::concat_parts(ctx, &[a, d, b])
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let op = sym::INSPECT;
    let recursive = string::new_us_ascii(ctx, if excl(recv) { "(... ... ...)" } else { "(... .. ...)" });
    object::guard_recursion(ctx, op, recv, Value::NIL, recursive, |ctx| {
        let (b, e) = (begin(recv), end(recv));
        // The pieces are kept in a Ruby Array: inspecting an end may collect.
        let parts = array::new(ctx);
        if !b.is_nil() || e.is_nil() {
            let s = object::inspect(ctx, b)?;
            array::push(ctx, parts, s);
        }
        let d = dots(ctx, recv);
        array::push(ctx, parts, d);
        if b.is_nil() || !e.is_nil() {
            let s = object::inspect(ctx, e)?;
            array::push(ctx, parts, s);
        }
        let list = array::to_vec(parts);
        string::concat_parts(ctx, &list)
    })
}

// ---- elements without iterating ----

fn m_first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if begin(recv).is_nil() {
        return Err(ctx.range_error("cannot get the first element of beginless range"));
    }
    let Some(&n) = args.pos.first() else { return Ok(begin(recv)) };
    first_n(ctx, recv, n)
}

/// The first `n` elements by `each` (`first(n)`, `min(n)`).
fn first_n(ctx: &mut Ctx, recv: Value, n: Value) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, n)?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size (or size too big)"));
    }
    let out = array::new(ctx);
    if n == 0 {
        return Ok(out);
    }
    crate::core::enumerable::each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok((array::len(out) as i64) < n)
    })?;
    Ok(out)
}

fn m_last(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if end(recv).is_nil() {
        return Err(ctx.range_error("cannot get the last element of endless range"));
    }
    let Some(&nv) = args.pos.first() else { return Ok(end(recv)) };
    let (b, e) = (begin(recv), end(recv));
    let each_is_builtin = crate::core::range_iter::each_is_builtin(ctx, recv);
    if integer::is_integer(b) && integer::is_integer(e) && each_is_builtin {
        return int_range_last(ctx, recv, nv);
    }
    let all = crate::core::enumerable::to_array(ctx, recv)?;
    let n = integer::to_i64_arg(ctx, nv)?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size"));
    }
    let l = array::len(all);
    let k = (n as u64).min(l as u64) as usize;
    let v = array::slice_to_vec(all, l - k, k);
    Ok(array::from_vec(ctx, v))
}

/// CRuby's `rb_int_range_last`: the last `n` Integers computed, not iterated.
fn int_range_last(ctx: &mut Ctx, recv: Value, nv: Value) -> Result<Value> {
    let (b, mut e) = (begin(recv), end(recv));
    let one = Value::fixnum(1);
    let len_1 = integer::sub(ctx, e, b)?;
    let len = if excl(recv) {
        e = integer::sub(ctx, e, one)?;
        len_1
    } else {
        integer::add(ctx, len_1, one)?
    };
    if integer::cmp_values(ctx, len, Value::fixnum(0))? != Some(std::cmp::Ordering::Greater) {
        return Ok(array::new(ctx));
    }
    let mut n = integer::to_i64_arg(ctx, nv)?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size"));
    }
    if integer::cmp_values(ctx, Value::fixnum(n), len)? == Some(std::cmp::Ordering::Greater) {
        n = integer::to_i64_arg(ctx, len)?;
    }
    let out = array::with_capacity(ctx, n as usize);
    let mut v = integer::sub(ctx, e, Value::fixnum(n))?;
    for _ in 0..n {
        v = integer::add(ctx, v, one)?;
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn m_min(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (b, e) = (begin(recv), end(recv));
    if b.is_nil() {
        return Err(ctx.range_error("cannot get the minimum of beginless range"));
    }
    if args.block.is_some() {
        if e.is_nil() {
            return Err(ctx.range_error("cannot get the minimum of endless range with custom comparison method"));
        }
        return crate::core::enumerable::call_enumerable(ctx, recv, "min", args);
    }
    if let Some(&n) = args.pos.first() {
        return first_n(ctx, recv, n);
    }
    let c = if e.is_nil() { -1 } else { comparable::compare(ctx, b, e)? };
    if c > 0 || (c == 0 && excl(recv)) {
        return Ok(Value::NIL);
    }
    Ok(b)
}

fn m_max(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (b, e) = (begin(recv), end(recv));
    if e.is_nil() {
        let msg = if args.pos.is_empty() { "cannot get the maximum of endless range" } else { "cannot get the maximum element of endless range" };
        return Err(ctx.range_error(msg));
    }
    let numeric_end = numeric::is_numeric(ctx, e);
    if args.block.is_some() || (excl(recv) && !numeric_end) || !args.pos.is_empty() {
        if b.is_nil() {
            return Err(ctx.range_error("cannot get the maximum of beginless range with custom comparison method"));
        }
        return crate::core::enumerable::call_enumerable(ctx, recv, "max", args);
    }
    let c = if b.is_nil() { -1 } else { comparable::compare(ctx, b, e)? };
    if c > 0 {
        return Ok(Value::NIL);
    }
    if excl(recv) {
        if !integer::is_integer(e) {
            return Err(ctx.type_error("cannot exclude non Integer end value"));
        }
        if c == 0 {
            return Ok(Value::NIL);
        }
        if !integer::is_integer(b) {
            return Err(ctx.type_error("cannot exclude end value with non Integer begin value"));
        }
        return integer::sub(ctx, e, Value::fixnum(1));
    }
    Ok(e)
}

fn m_minmax(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_some() {
        return crate::core::enumerable::call_enumerable(ctx, recv, "minmax", args);
    }
    let (min_id, max_id) = (ctx.intern("min"), ctx.intern("max"));
    let min = ctx.call(recv, min_id, &[])?;
    let max = ctx.call(recv, max_id, &[])?;
    Ok(array::from_slice(ctx, &[min, max]))
}

/// `Range#size`: the element count of an Integer-started range, nil for other iterable
/// ranges, TypeError for ranges that cannot be iterated (Ruby 3.4).
pub fn size(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let (b, e) = (begin(recv), end(recv));
    if integer::is_integer(b) {
        if numeric::is_numeric(ctx, e) {
            return numeric::interval_step_size(ctx, b, e, Value::fixnum(1), excl(recv));
        }
        if e.is_nil() {
            return Ok(float::new(ctx, f64::INFINITY));
        }
    }
    if !discrete_object(ctx, b) {
        return Err(cant_iterate_from(ctx, b));
    }
    Ok(Value::NIL)
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    size(ctx, recv)
}

fn m_count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() && args.block.is_none() {
        if begin(recv).is_nil() || end(recv).is_nil() {
            return Ok(float::new(ctx, f64::INFINITY));
        }
        if integer::is_integer(begin(recv)) {
            let s = size(ctx, recv)?;
            if !s.is_nil() {
                return Ok(s);
            }
        }
    }
    crate::core::enumerable::call_enumerable(ctx, recv, "count", args)
}

/// `sum`: Enumerable#sum, computed in closed form for Integer ranges (CRuby's
/// `int_range_sum`).
fn m_sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let init = args.pos.first().copied().unwrap_or(Value::fixnum(0));
    let (b, e) = (begin(recv), end(recv));
    if args.block.is_none() && !float::is_float(init) && integer::is_integer(b) && integer::is_integer(e) {
        let (bb, mut eb) = (bignum::to_big(b), bignum::to_big(e));
        if excl(recv) {
            eb -= 1;
        }
        if eb < bb {
            return Ok(init);
        }
        let n = (&eb - &bb + 1) * (&eb + &bb) / 2;
        let total = bignum::normalize(ctx, n);
        return ctx.call(init, sym::PLUS, &[total]);
    }
    crate::core::enumerable::call_enumerable(ctx, recv, "sum", args)
}

fn m_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if end(recv).is_nil() {
        return Err(ctx.range_error("cannot convert endless range to an array"));
    }
    crate::core::enumerable::to_array(ctx, recv)
}

// ---- membership ----

/// `include?`/`member?` (CRuby's `range_include_internal`, Ruby 3.3+): continuous ranges
/// use `cover?`, String ranges walk `succ`, open non-numeric ranges cannot answer.
fn m_include(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let val = args.pos[0];
    let (b, e) = (begin(recv), end(recv));
    let linear = linear_object(ctx, b) || linear_object(ctx, e) || (b.is_nil() && e.is_nil() && linear_object(ctx, val));
    if linear || check_to_integer(ctx, b)?.is_some() || check_to_integer(ctx, e)?.is_some() {
        return Ok(Value::bool(covers(ctx, recv, val)?));
    }
    if string::is_string(b) && string::is_string(e) {
        return Ok(Value::bool(string_range_includes(ctx, b, e, val, excl(recv))?));
    }
    if b.is_nil() || e.is_nil() {
        return Err(ctx.type_error("cannot determine inclusion in beginless/endless ranges"));
    }
    crate::core::enumerable::call_enumerable(ctx, recv, "include?", args)
}

/// CRuby's `rb_str_include_range_p`: single ASCII characters compare directly, other
/// strings are looked for among `b.upto(e)`.
fn string_range_includes(ctx: &mut Ctx, b: Value, e: Value, val: Value, exclusive: bool) -> Result<bool> {
    let Some(val) = string::try_to_str(ctx, val)? else { return Ok(false) };
    let ascii_compat = |v: Value| crate::core::encoding::is_ascii_compatible(string::encoding(v));
    if ascii_compat(b) && ascii_compat(e) && ascii_compat(val) && string::len(b) == 1 && string::len(e) == 1 {
        let vb = string::bytes(val);
        if vb.len() != 1 {
            return Ok(false);
        }
        let (bc, ec, vc) = (string::bytes(b)[0], string::bytes(e)[0], vb[0]);
        if bc.is_ascii() && ec.is_ascii() && vc.is_ascii() {
            return Ok((bc <= vc && vc < ec) || (!exclusive && vc == ec));
        }
    }
    let mut found = false;
    string::upto_each(ctx, b, e, exclusive, &mut |ctx, s| {
        if object::equal(ctx, s, val)? {
            found = true;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(found)
}

fn m_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(covers(ctx, recv, args.pos[0])?))
}

fn m_cover(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if is_range(v) {
        return Ok(Value::bool(covers_range(ctx, recv, v)?));
    }
    Ok(Value::bool(covers(ctx, recv, v)?))
}

/// CRuby's `empty_region_p`: whether `from..to` (or `from...to`) holds nothing.
fn empty_region(ctx: &mut Ctx, from: Value, to: Value, to_excl: bool) -> Result<bool> {
    if from.is_nil() || to.is_nil() {
        return Ok(false);
    }
    let c = r_less(ctx, from, to)?;
    Ok(c == i64::MAX || c > 0 || (c == 0 && to_excl))
}

/// `overlap?(range)` (Ruby 3.3).
fn m_overlap(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if !is_range(other) {
        let cname = object::class_name_of(ctx, other);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Range)")));
    }
    let (sb, se, sx) = (begin(recv), end(recv), excl(recv));
    let (ob, oe, ox) = (begin(other), end(other), excl(other));
    if empty_region(ctx, sb, oe, ox)? || empty_region(ctx, ob, se, sx)? {
        return Ok(Value::FALSE);
    }
    if !sb.is_nil() && !ob.is_nil() {
        let c = ctx.call(sb, sym::CMP, &[ob])?;
        if c.is_nil() {
            return Ok(Value::FALSE);
        }
        if comparable::cmp_result(ctx, c, sb, ob)? == 0 {
            return Ok(Value::TRUE);
        }
    } else if sb.is_nil() && ob.is_nil() {
        let c = ctx.call(se, sym::CMP, &[oe])?;
        return Ok(Value::bool(!c.is_nil()));
    }
    // Neither range may be empty itself.
    if empty_region(ctx, sb, se, sx)? || empty_region(ctx, ob, oe, ox)? {
        return Ok(Value::FALSE);
    }
    Ok(Value::TRUE)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().range;
    crate::methods!(ctx, c, [
        ("initialize", initialize, [2..=3], Unsafe, Private),
        ("initialize_copy", initialize_copy, [1], Safe, Private),
        ("begin", m_begin, [0], Safe),
        ("end", m_end, [0], Safe),
        ("exclude_end?", m_exclude_end, [0], Safe),
        ("==", m_eq, [1], Unsafe),
        ("eql?", m_eql, [1], Unsafe),
        ("hash", m_hash, [0], Unsafe),
        ("to_s", m_to_s, [0], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
        ("first", m_first, [0..=1], Unsafe),
        ("last", m_last, [0..=1], Unsafe),
        ("min", m_min, [0..=1], Unsafe),
        ("max", m_max, [0..=1], Unsafe),
        ("minmax", m_minmax, [0], Unsafe),
        ("size", m_size, [0], Unsafe),
        ("count", m_count, [0..=1], Unsafe),
        ("sum", m_sum, [0..=1], Unsafe),
        ("to_a", m_to_a, [0], Unsafe),
        ("include?", m_include, [1], Unsafe),
        ("===", m_eqq, [1], Unsafe),
        ("cover?", m_cover, [1], Unsafe),
        ("overlap?", m_overlap, [1], Unsafe),
    ]);
    crate::core::define_alias(ctx, c, "member?", "include?");
    crate::core::define_alias(ctx, c, "entries", "to_a");
}
