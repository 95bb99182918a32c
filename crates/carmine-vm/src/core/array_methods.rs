//! Array methods beyond the basics in `array.rs`: element access, searching, deletion and
//! insertion, filtering in place, set operations, comparison and conversion. Ordering,
//! numeric folds, randomness and combinatorics are in `array_order.rs`; `pack` in `pack.rs`.
//!
//! Invariants (in addition to those of `array.rs`):
//! - Every mutator checks `FL_FROZEN` before its first change (CRuby's
//!   `rb_ary_modify_check`), and again after running a block when it writes afterwards.
//! - Methods that run blocks re-read the length on every step; results are accumulated in
//!   Ruby Arrays so the collector sees them.
//! - Set operations use `eql?` by linear search while both operands are small (as CRuby
//!   does, so objects defining only `eql?` behave the same) and a Hash beyond that.

use crate::core::array::{self, get, len, push, rarray, to_ary_arg, try_to_ary};
use crate::core::enumerator::{enum_for_this, SizeFn};
use crate::core::{hash, integer, object, range};
use crate::interp::Args;
use crate::object::basic;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Below this length both operands of a set operation are searched linearly.
const SMALL_ARRAY_LEN: usize = 16;

/// Largest array length a method may create (CRuby's `ARY_MAX_SIZE` on 64-bit).
pub const ARY_MAX_SIZE: i64 = i64::MAX / 8;

/// Fails with `NoMemoryError` for a length that could never be allocated; an array that
/// large would otherwise abort the process inside the Rust allocator.
/// A quick NoMemoryError for element counts no machine holds; callers still reserve the
/// room fallibly (`array::reserve_up_to`, `Ctx::try_reserve`) for the counts below it.
pub fn check_alloc_len(ctx: &mut Ctx, n: i64) -> Result<()> {
    if n > (1 << 34) {
        return Err(ctx.raise(ctx.c().no_memory_error, "failed to allocate memory"));
    }
    Ok(())
}

fn to_long(ctx: &mut Ctx, v: Value) -> Result<i64> {
    integer::to_i64_arg(ctx, v)
}

/// `ary.size` for enumerators created by Array methods.
pub fn size_fn_len(_ctx: &mut Ctx, recv: Value, _args: Value) -> Result<Value> {
    Ok(Value::fixnum(len(recv) as i64))
}

/// `rb_range_beg_len`: (start, length) of range `r` over `n` elements. `err` 0 clips the
/// end and returns `None` when the start is out of range; 1 raises `RangeError` instead and
/// does not clip the end; 2 clips and raises.
pub fn range_beg_len(ctx: &mut Ctx, r: Value, n: i64, err: u8) -> Result<Option<(i64, i64)>> {
    beg_len_components(ctx, range::begin(r), range::end(r), range::excl(r), n, err, r)
}

/// `rb_range_component_beg_len`: like `range_beg_len` for the parts of a range; `shown`
/// is what a RangeError message inspects.
pub fn beg_len_components(ctx: &mut Ctx, b: Value, e: Value, excl: bool, n: i64, err: u8, shown: Value) -> Result<Option<(i64, i64)>> {
    let mut beg = if b.is_nil() { 0 } else { to_long(ctx, b)? };
    let mut end = if e.is_nil() { -1 } else { to_long(ctx, e)? };
    let excl = excl && !e.is_nil();
    let out_of_range = |ctx: &mut Ctx| -> Result<Option<(i64, i64)>> {
        if err != 0 {
            let s = object::inspect_string(ctx, shown)?;
            return Err(ctx.range_error(&format!("{s} out of range")));
        }
        Ok(None)
    };
    if beg < 0 {
        beg += n;
        if beg < 0 {
            return out_of_range(ctx);
        }
    }
    if end < 0 {
        end += n;
    }
    if !excl {
        end += 1;
    }
    if err == 0 || err == 2 {
        if beg > n {
            return out_of_range(ctx);
        }
        if end > n {
            end = n;
        }
    }
    Ok(Some((beg, (end - beg).max(0))))
}

// ---- access ----

fn at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = to_long(ctx, args.pos[0])?;
    Ok(array::aref_fix(recv, i))
}

fn fetch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let pos = args.pos[0];
    if args.block.is_some() && args.pos.len() == 2 {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: block supersedes default value argument\n"));
    }
    let idx = to_long(ctx, pos)?;
    let n = len(recv) as i64;
    let i = if idx < 0 { idx + n } else { idx };
    if i >= 0 && i < n {
        return Ok(get(recv, i as usize));
    }
    if let Some(b) = args.block {
        return ctx.yield1(&b, pos);
    }
    if let Some(&d) = args.pos.get(1) {
        return Ok(d);
    }
    Err(ctx.index_error(&format!("index {idx} outside of array bounds: {}...{}", -n, n)))
}

fn fetch_values(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::with_capacity(ctx, args.pos.len());
    for &i in args.pos {
        let one = [i];
        let a = Args { pos: &one, kw: None, block: args.block };
        let v = fetch(ctx, recv, &a)?;
        push(ctx, out, v);
    }
    Ok(out)
}

/// `obj.dig(*rest)` for the next level of a `dig` chain (CRuby's `rb_obj_dig`).
pub fn dig_rest(ctx: &mut Ctx, obj: Value, rest: &[Value]) -> Result<Value> {
    if rest.is_empty() || obj.is_nil() {
        return Ok(obj);
    }
    if !ctx.respond_to(obj, sym::DIG, true) {
        let cname = object::class_name_of(ctx, obj);
        return Err(ctx.type_error(&format!("{cname} does not have #dig method")));
    }
    ctx.call(obj, sym::DIG, rest)
}

fn dig(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = to_long(ctx, args.pos[0])?;
    let v = array::aref_fix(recv, i);
    dig_rest(ctx, v, &args.pos[1..])
}

fn values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    for &sel in args.pos {
        if let Some(i) = sel.as_fixnum() {
            let v = array::aref_fix(recv, i);
            push(ctx, out, v);
            continue;
        }
        if range::is_range(sel) {
            let n = len(recv) as i64;
            if let Some((beg, cnt)) = range_beg_len(ctx, sel, n, 1)? {
                check_alloc_len(ctx, cnt)?;
                array::reserve_up_to(ctx, out, len(out) + cnt as usize)?;
                for j in beg..beg + cnt {
                    let v = if j < len(recv) as i64 { get(recv, j as usize) } else { Value::NIL };
                    push(ctx, out, v);
                }
            }
            continue;
        }
        let i = to_long(ctx, sel)?;
        let v = array::aref_fix(recv, i);
        push(ctx, out, v);
    }
    Ok(out)
}

fn assoc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    let mut i = 0;
    while i < len(recv) {
        let e = get(recv, i);
        if let Some(a) = try_to_ary(ctx, e)? {
            if len(a) > 0 && object::equal(ctx, get(a, 0), key)? {
                return Ok(a);
            }
        }
        i += 1;
    }
    Ok(Value::NIL)
}

fn rassoc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let val = args.pos[0];
    let mut i = 0;
    while i < len(recv) {
        let e = get(recv, i);
        if let Some(a) = try_to_ary(ctx, e)? {
            if len(a) > 1 && object::equal(ctx, get(a, 1), val)? {
                return Ok(a);
            }
        }
        i += 1;
    }
    Ok(Value::NIL)
}

// ---- searching ----

fn warn_block_unused(ctx: &mut Ctx) {
    let (path, line) = crate::core::kernel::caller_location(ctx);
    crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: given block not used\n"));
}

fn index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&x) = args.pos.first() {
        if args.block.is_some() {
            warn_block_unused(ctx);
        }
        let mut i = 0;
        while i < len(recv) {
            if object::equal(ctx, get(recv, i), x)? {
                return Ok(Value::fixnum(i as i64));
            }
            i += 1;
        }
        return Ok(Value::NIL);
    }
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "index", &[], SizeFn::None) };
    let mut i = 0;
    while i < len(recv) {
        if ctx.yield1(&b, get(recv, i))?.truthy() {
            return Ok(Value::fixnum(i as i64));
        }
        i += 1;
    }
    Ok(Value::NIL)
}

fn rindex(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut i = len(recv);
    if let Some(&x) = args.pos.first() {
        if args.block.is_some() {
            warn_block_unused(ctx);
        }
        while i > 0 {
            i -= 1;
            if i >= len(recv) {
                i = len(recv);
                continue;
            }
            if object::equal(ctx, get(recv, i), x)? {
                return Ok(Value::fixnum(i as i64));
            }
        }
        return Ok(Value::NIL);
    }
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "rindex", &[], SizeFn::None) };
    while i > 0 {
        i -= 1;
        if i >= len(recv) {
            // The block shrank the array: continue from its new end.
            i = len(recv);
            continue;
        }
        if ctx.yield1(&b, get(recv, i))?.truthy() {
            return Ok(Value::fixnum(i as i64));
        }
    }
    Ok(Value::NIL)
}

fn count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&x) = args.pos.first() {
        if args.block.is_some() {
            warn_block_unused(ctx);
        }
        let mut n = 0;
        let mut i = 0;
        while i < len(recv) {
            if object::equal(ctx, get(recv, i), x)? {
                n += 1;
            }
            i += 1;
        }
        return Ok(Value::fixnum(n));
    }
    let Some(b) = args.block else { return Ok(Value::fixnum(len(recv) as i64)) };
    let mut n = 0;
    let mut i = 0;
    while i < len(recv) {
        if ctx.yield1(&b, get(recv, i))?.truthy() {
            n += 1;
        }
        i += 1;
    }
    Ok(Value::fixnum(n))
}

// ---- deletion and insertion ----

fn delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let item = args.pos[0];
    let mut found = Value::UNDEF;
    let (mut i1, mut i2) = (0, 0);
    while i1 < len(recv) {
        let e = get(recv, i1);
        if object::equal(ctx, e, item)? {
            found = e;
            i1 += 1;
            continue;
        }
        if i1 != i2 {
            ctx.check_frozen(recv)?;
            if i2 < len(recv) {
                rarray(recv).items_mut()[i2] = e;
            }
        }
        i1 += 1;
        i2 += 1;
    }
    if found.is_undef() || len(recv) == i2 {
        if found.is_undef() {
            return match args.block {
                Some(b) => ctx.yield1(&b, item),
                None => Ok(Value::NIL),
            };
        }
        return Ok(found);
    }
    ctx.check_frozen(recv)?;
    rarray(recv).items_mut().truncate(i2);
    Ok(found)
}

/// Removes and returns the element at `pos` (nil when out of range).
pub fn delete_at_pos(ctx: &mut Ctx, recv: Value, pos: i64) -> Result<Value> {
    let n = len(recv) as i64;
    let p = if pos < 0 { pos + n } else { pos };
    if p < 0 || p >= n {
        return Ok(Value::NIL);
    }
    ctx.check_frozen(recv)?;
    Ok(rarray(recv).items_mut().remove(p as usize))
}

fn delete_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let pos = to_long(ctx, args.pos[0])?;
    delete_at_pos(ctx, recv, pos)
}

/// Keeps the elements for which `keep(block result)` holds, compacting in place; on a
/// non-local exit from the block the elements already visited are compacted and the rest
/// kept, as CRuby's `select_bang_ensure` does. Returns whether anything was removed.
fn filter_in_place(ctx: &mut Ctx, recv: Value, b: &crate::interp::Block, keep_if_truthy: bool) -> Result<bool> {
    let (mut i1, mut i2) = (0usize, 0usize);
    let r: Result<()> = (|| {
        while i1 < len(recv) {
            let v = get(recv, i1);
            let t = ctx.yield1(b, v)?.truthy();
            if t == keep_if_truthy {
                if i1 != i2 {
                    ctx.check_frozen(recv)?;
                    if i2 < len(recv) {
                        rarray(recv).items_mut()[i2] = v;
                    }
                }
                i2 += 1;
            }
            i1 += 1;
        }
        Ok(())
    })();
    let n = len(recv);
    let mut changed = false;
    if i2 < n && i2 < i1 {
        ctx.check_frozen(recv)?;
        let mut items = rarray(recv).items_mut();
        let tail = if i1 < n { n - i1 } else { 0 };
        if tail > 0 {
            items.copy_within(i1..n, i2);
        }
        items.truncate(i2 + tail);
        changed = true;
    }
    r?;
    Ok(changed)
}

fn delete_if(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "delete_if", &[], SizeFn::ArrayLen) };
    ctx.check_frozen(recv)?;
    filter_in_place(ctx, recv, &b, false)?;
    Ok(recv)
}

fn reject_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "reject!", &[], SizeFn::ArrayLen) };
    ctx.check_frozen(recv)?;
    Ok(if filter_in_place(ctx, recv, &b, false)? { recv } else { Value::NIL })
}

fn select_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "select!", &[], SizeFn::ArrayLen) };
    ctx.check_frozen(recv)?;
    Ok(if filter_in_place(ctx, recv, &b, true)? { recv } else { Value::NIL })
}

fn keep_if(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "keep_if", &[], SizeFn::ArrayLen) };
    ctx.check_frozen(recv)?;
    filter_in_place(ctx, recv, &b, true)?;
    Ok(recv)
}

fn insert(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let mut pos = to_long(ctx, args.pos[0])?;
    if args.pos.len() == 1 {
        return Ok(recv);
    }
    let n = len(recv) as i64;
    if pos == -1 {
        pos = n;
    } else if pos < 0 {
        let minpos = -n - 1;
        if pos < minpos {
            return Err(ctx.index_error(&format!("index {pos} too small for array; minimum: {minpos}")));
        }
        pos += 1 + n;
    }
    check_alloc_len(ctx, pos)?;
    array::reserve_up_to(ctx, recv, (pos as usize).max(len(recv)) + args.pos.len() - 1)?;
    let mut items = rarray(recv).items_mut();
    let p = pos as usize;
    if p > items.len() {
        items.resize(p, Value::NIL);
    }
    items.splice(p..p, args.pos[1..].iter().copied());
    Ok(recv)
}

fn fill(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let block = args.block;
    let (item, rest) = match block {
        Some(_) => {
            if args.pos.len() > 2 {
                return Err(ctx.arity_error(args.pos.len(), 0, Some(2)));
            }
            (Value::UNDEF, args.pos)
        }
        None => {
            if args.pos.is_empty() || args.pos.len() > 3 {
                return Err(ctx.arity_error(args.pos.len(), 1, Some(3)));
            }
            (args.pos[0], &args.pos[1..])
        }
    };
    let n = len(recv) as i64;
    let mut resolved = None;
    if rest.len() == 1 && range::is_range(rest[0]) {
        resolved = range_beg_len(ctx, rest[0], n, 1)?;
    }
    let (beg, count) = match resolved {
        Some(x) => x,
        None if rest.is_empty() => (0, n),
        None => {
            let a1 = rest[0];
            let mut beg = if a1.is_nil() { 0 } else { to_long(ctx, a1)? };
            if beg < 0 {
                beg = (n + beg).max(0);
            }
            let count = match rest.get(1) {
                None => n - beg,
                Some(&a2) if a2.is_nil() => n - beg,
                Some(&a2) => to_long(ctx, a2)?,
            };
            (beg, count)
        }
    };
    ctx.check_frozen(recv)?;
    if count < 0 {
        return Ok(recv);
    }
    if beg >= ARY_MAX_SIZE || count > ARY_MAX_SIZE - beg {
        return Err(ctx.arg_error("argument too big"));
    }
    let end = beg + count;
    check_alloc_len(ctx, end)?;
    array::reserve_up_to(ctx, recv, end as usize)?;
    if (len(recv) as i64) < end {
        rarray(recv).items_mut().resize(end as usize, Value::NIL);
    }
    match block {
        Some(b) => {
            let mut i = beg;
            while i < end {
                if i >= len(recv) as i64 {
                    break;
                }
                let v = ctx.yield1(&b, Value::fixnum(i))?;
                if (i as usize) < len(recv) {
                    rarray(recv).items_mut()[i as usize] = v;
                }
                i += 1;
            }
        }
        None => {
            for slot in &mut rarray(recv).items_mut()[beg as usize..end as usize] {
                *slot = item;
            }
        }
    }
    Ok(recv)
}

fn slice_bang_start_len(ctx: &mut Ctx, recv: Value, pos: i64, count: i64) -> Result<Value> {
    let n = len(recv) as i64;
    if count < 0 || pos < -n || pos > n {
        return Ok(Value::NIL);
    }
    let pos = if pos < 0 { pos + n } else { pos };
    let count = count.min(n - pos);
    if count == 0 {
        return Ok(array::new(ctx));
    }
    let (s, e) = (pos as usize, (pos + count) as usize);
    let removed: Vec<Value> = rarray(recv).items_mut().drain(s..e).collect();
    Ok(array::from_vec(ctx, removed))
}

fn slice_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if args.pos.len() == 2 {
        let pos = to_long(ctx, args.pos[0])?;
        let count = to_long(ctx, args.pos[1])?;
        return slice_bang_start_len(ctx, recv, pos, count);
    }
    let a = args.pos[0];
    if !a.is_fixnum() && range::is_range(a) {
        let n = len(recv) as i64;
        return match range_beg_len(ctx, a, n, 0)? {
            Some((pos, count)) => slice_bang_start_len(ctx, recv, pos, count),
            None => Ok(Value::NIL),
        };
    }
    let pos = to_long(ctx, a)?;
    delete_at_pos(ctx, recv, pos)
}

fn compact(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v: Vec<Value> = rarray(recv).items().iter().copied().filter(|v| !v.is_nil()).collect();
    Ok(array::from_vec(ctx, v))
}

fn compact_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let mut items = rarray(recv).items_mut();
    let n = items.len();
    items.retain(|v| !v.is_nil());
    Ok(if items.len() == n { Value::NIL } else { recv })
}

// ---- take / drop ----

fn take(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = to_long(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to take negative size"));
    }
    let v = array::slice_to_vec(recv, 0, n.min(len(recv) as i64) as usize);
    Ok(array::from_vec(ctx, v))
}

fn drop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = to_long(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to drop negative size"));
    }
    let l = len(recv);
    let s = (n.min(l as i64)) as usize;
    let v = array::slice_to_vec(recv, s, l - s);
    Ok(array::from_vec(ctx, v))
}

fn take_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "take_while", &[], SizeFn::None) };
    let mut i = 0;
    while i < len(recv) {
        if !ctx.yield1(&b, get(recv, i))?.truthy() {
            break;
        }
        i += 1;
    }
    let v = array::slice_to_vec(recv, 0, i);
    Ok(array::from_vec(ctx, v))
}

fn drop_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "drop_while", &[], SizeFn::None) };
    let mut i = 0;
    while i < len(recv) {
        if !ctx.yield1(&b, get(recv, i))?.truthy() {
            break;
        }
        i += 1;
    }
    let l = len(recv);
    let v = array::slice_to_vec(recv, i.min(l), l.saturating_sub(i));
    Ok(array::from_vec(ctx, v))
}

// ---- set operations ----

/// Whether `a` contains an element `eql?` to `v` (linear search).
fn includes_by_eql(ctx: &mut Ctx, a: Value, v: Value) -> Result<bool> {
    let mut i = 0;
    while i < len(a) {
        if object::eql(ctx, v, get(a, i))? {
            return Ok(true);
        }
        i += 1;
    }
    Ok(false)
}

/// A Hash whose keys are the elements of `a` (first occurrence wins), for membership.
pub fn elements_hash(ctx: &mut Ctx, a: Value) -> Result<Value> {
    let h = hash::new(ctx);
    let mut i = 0;
    while i < len(a) {
        let v = get(a, i);
        if hash::lookup(ctx, h, v)?.is_none() {
            hash::insert_raw(ctx, h, v, v)?;
        }
        i += 1;
    }
    Ok(h)
}

fn difference_one(ctx: &mut Ctx, a: Value, other: Value) -> Result<Value> {
    let out = array::new(ctx);
    if len(other) <= SMALL_ARRAY_LEN {
        let mut i = 0;
        while i < len(a) {
            let v = get(a, i);
            if !includes_by_eql(ctx, other, v)? {
                push(ctx, out, v);
            }
            i += 1;
        }
        return Ok(out);
    }
    let h = elements_hash(ctx, other)?;
    let mut i = 0;
    while i < len(a) {
        let v = get(a, i);
        if hash::lookup(ctx, h, v)?.is_none() {
            push(ctx, out, v);
        }
        i += 1;
    }
    Ok(out)
}

fn minus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = to_ary_arg(ctx, args.pos[0])?;
    difference_one(ctx, recv, other)
}

fn difference(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut acc = array::dup(ctx, recv);
    for &o in args.pos {
        let o = to_ary_arg(ctx, o)?;
        acc = difference_one(ctx, acc, o)?;
    }
    Ok(acc)
}

/// Appends the elements of `src` not yet in `out` (tracked by `seen` when not small).
fn union_into(ctx: &mut Ctx, out: Value, seen: Option<Value>, src: Value) -> Result<()> {
    let mut i = 0;
    while i < len(src) {
        let v = get(src, i);
        match seen {
            Some(h) => {
                if hash::lookup(ctx, h, v)?.is_none() {
                    hash::insert_raw(ctx, h, v, v)?;
                    push(ctx, out, v);
                }
            }
            None => {
                if !includes_by_eql(ctx, out, v)? {
                    push(ctx, out, v);
                }
            }
        }
        i += 1;
    }
    Ok(())
}

fn union_all(ctx: &mut Ctx, recv: Value, others: &[Value]) -> Result<Value> {
    let mut arrays = vec![recv];
    let mut total = len(recv);
    for &o in others {
        let a = to_ary_arg(ctx, o)?;
        total += len(a);
        arrays.push(a);
    }
    let keep = array::from_slice(ctx, &arrays);
    let out = array::new(ctx);
    let seen = if total <= SMALL_ARRAY_LEN { None } else { Some(hash::new(ctx)) };
    let holder = array::from_slice(ctx, &[seen.unwrap_or(Value::NIL)]);
    for k in 0..len(keep) {
        union_into(ctx, out, seen, get(keep, k))?;
    }
    std::hint::black_box(holder);
    Ok(out)
}

fn or(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    union_all(ctx, recv, args.pos)
}

fn union(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    union_all(ctx, recv, args.pos)
}

fn intersection_one(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    let out = array::new(ctx);
    if len(a) == 0 || len(b) == 0 {
        return Ok(out);
    }
    if len(a) <= SMALL_ARRAY_LEN && len(b) <= SMALL_ARRAY_LEN {
        let mut i = 0;
        while i < len(a) {
            let v = get(a, i);
            if includes_by_eql(ctx, b, v)? && !includes_by_eql(ctx, out, v)? {
                push(ctx, out, v);
            }
            i += 1;
        }
        return Ok(out);
    }
    let h = elements_hash(ctx, b)?;
    let mut i = 0;
    while i < len(a) {
        let v = get(a, i);
        if hash::lookup(ctx, h, v)?.is_some() {
            hash::delete(ctx, h, v)?;
            push(ctx, out, v);
        }
        i += 1;
    }
    Ok(out)
}

fn and(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = to_ary_arg(ctx, args.pos[0])?;
    intersection_one(ctx, recv, other)
}

fn intersection(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut acc = recv;
    if args.pos.is_empty() {
        return Ok(array::dup(ctx, recv));
    }
    for &o in args.pos {
        let o = to_ary_arg(ctx, o)?;
        acc = intersection_one(ctx, acc, o)?;
    }
    Ok(acc)
}

fn intersect_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = to_ary_arg(ctx, args.pos[0])?;
    if len(recv) == 0 || len(other) == 0 {
        return Ok(Value::FALSE);
    }
    if len(recv) <= SMALL_ARRAY_LEN && len(other) <= SMALL_ARRAY_LEN {
        let mut i = 0;
        while i < len(recv) {
            if includes_by_eql(ctx, other, get(recv, i))? {
                return Ok(Value::TRUE);
            }
            i += 1;
        }
        return Ok(Value::FALSE);
    }
    let (small, large) = if len(recv) <= len(other) { (recv, other) } else { (other, recv) };
    let h = elements_hash(ctx, small)?;
    let mut i = 0;
    while i < len(large) {
        if hash::lookup(ctx, h, get(large, i))?.is_some() {
            return Ok(Value::TRUE);
        }
        i += 1;
    }
    Ok(Value::FALSE)
}

/// The elements of `a` with duplicates removed (by block value when a block is given).
fn uniq_values(ctx: &mut Ctx, a: Value, block: Option<crate::interp::Block>) -> Result<Value> {
    let out = array::new(ctx);
    let h = hash::new(ctx);
    let mut i = 0;
    while i < len(a) {
        let v = get(a, i);
        let k = match block {
            Some(b) => ctx.yield1(&b, v)?,
            None => v,
        };
        if hash::lookup(ctx, h, k)?.is_none() {
            hash::insert_raw(ctx, h, k, v)?;
            push(ctx, out, v);
        }
        i += 1;
    }
    Ok(out)
}

fn uniq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if len(recv) <= 1 {
        return Ok(array::dup(ctx, recv));
    }
    uniq_values(ctx, recv, args.block)
}

fn uniq_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if len(recv) <= 1 {
        return Ok(Value::NIL);
    }
    let u = uniq_values(ctx, recv, args.block)?;
    ctx.check_frozen(recv)?;
    if len(u) == len(recv) {
        return Ok(Value::NIL);
    }
    let v = array::to_vec(u);
    rarray(recv).set_items(v);
    Ok(recv)
}

// ---- flatten ----

/// Flattens `a` to `level` (negative: fully). `None` when nothing needed flattening.
pub fn flatten_values(ctx: &mut Ctx, a: Value, level: i64) -> Result<Option<Value>> {
    let mut first_nested = None;
    let mut i = 0;
    while i < len(a) {
        if let Some(t) = try_to_ary(ctx, get(a, i))? {
            first_nested = Some(t);
            break;
        }
        i += 1;
    }
    let Some(nested) = first_nested else { return Ok(None) };
    if level == 0 {
        return Ok(None);
    }
    let result = array::from_vec(ctx, array::slice_to_vec(a, 0, i));
    // `stack` holds (array, resume index) pairs; `memo` the arrays being flattened, to
    // detect recursion when flattening fully.
    let stack = array::from_slice(ctx, &[a, Value::fixnum(i as i64 + 1)]);
    let memo = if level < 0 {
        let m = hash::new(ctx);
        basic(m).flags |= hash::FL_IDENTITY;
        hash::insert_raw(ctx, m, a, Value::TRUE)?;
        hash::insert_raw(ctx, m, nested, Value::TRUE)?;
        Some(m)
    } else {
        None
    };
    let holder = array::from_slice(ctx, &[result, stack, memo.unwrap_or(Value::NIL)]);
    let mut cur = nested;
    let mut i = 0usize;
    loop {
        while i < len(cur) {
            let elt = get(cur, i);
            i += 1;
            if level >= 0 && (len(stack) / 2) as i64 >= level {
                push(ctx, result, elt);
                continue;
            }
            match try_to_ary(ctx, elt)? {
                None => push(ctx, result, elt),
                Some(t) => {
                    if let Some(m) = memo {
                        if hash::lookup(ctx, m, t)?.is_some() {
                            return Err(ctx.arg_error("tried to flatten recursive array"));
                        }
                        hash::insert_raw(ctx, m, t, Value::TRUE)?;
                    }
                    push(ctx, stack, cur);
                    push(ctx, stack, Value::fixnum(i as i64));
                    cur = t;
                    i = 0;
                }
            }
        }
        if len(stack) == 0 {
            break;
        }
        if let Some(m) = memo {
            hash::delete(ctx, m, cur)?;
        }
        let mut items = rarray(stack).items_mut();
        let idx = items.pop().and_then(|v| v.as_fixnum()).unwrap_or(0);
        cur = items.pop().unwrap_or(Value::NIL);
        i = idx as usize;
    }
    std::hint::black_box(holder);
    Ok(Some(result))
}

fn flatten_level(ctx: &mut Ctx, args: &Args) -> Result<i64> {
    match args.pos.first() {
        Some(&l) if !l.is_nil() => {
            let n = to_long(ctx, l)?;
            if n > i32::MAX as i64 || n < i32::MIN as i64 {
                return Err(ctx.range_error(&format!("integer {n} too {} to convert to 'int'", if n > 0 { "big" } else { "small" })));
            }
            Ok(n)
        }
        _ => Ok(-1),
    }
}

fn flatten(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let level = flatten_level(ctx, args)?;
    match flatten_values(ctx, recv, level)? {
        Some(r) => Ok(r),
        None => Ok(array::dup(ctx, recv)),
    }
}

fn flatten_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let level = flatten_level(ctx, args)?;
    ctx.check_frozen(recv)?;
    if level == 0 {
        return Ok(Value::NIL);
    }
    match flatten_values(ctx, recv, level)? {
        Some(r) => {
            let v = array::to_vec(r);
            rarray(recv).set_items(v);
            Ok(recv)
        }
        None => Ok(Value::NIL),
    }
}

// ---- comparison, repetition, conversion ----

fn cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(other) = try_to_ary(ctx, args.pos[0])? else { return Ok(Value::NIL) };
    if recv == other {
        return Ok(Value::fixnum(0));
    }
    let r = object::guard_recursion(ctx, sym::CMP, recv, other, Value::UNDEF, |ctx| {
        let mut i = 0;
        while i < len(recv) && i < len(other) {
            let (a, b) = (get(recv, i), get(other, i));
            let c = match (a.as_fixnum(), b.as_fixnum()) {
                (Some(x), Some(y)) => Value::fixnum((x > y) as i64 - (x < y) as i64),
                _ => ctx.call(a, sym::CMP, &[b])?,
            };
            if c != Value::fixnum(0) {
                return Ok(c);
            }
            i += 1;
        }
        Ok(Value::UNDEF)
    })?;
    if !r.is_undef() {
        return Ok(r);
    }
    let (x, y) = (len(recv), len(other));
    Ok(Value::fixnum((x > y) as i64 - (x < y) as i64))
}

fn times(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let t = args.pos[0];
    if crate::core::string::is_string(t) || (t.is_heap() && ctx.respond_to(t, sym::TO_STR, true)) {
        let s = crate::core::string::to_str_arg(ctx, t)?;
        return array::join_with(ctx, recv, s);
    }
    let n = to_long(ctx, t)?;
    if n < 0 {
        return Err(ctx.arg_error("negative argument"));
    }
    let l = len(recv) as i64;
    if l != 0 && n > ARY_MAX_SIZE / l {
        return Err(ctx.arg_error("argument too big"));
    }
    check_alloc_len(ctx, n * l)?;
    let mut v = Vec::new();
    ctx.try_reserve(&mut v, (n * l) as usize)?;
    let items = rarray(recv).items();
    for _ in 0..n {
        v.extend_from_slice(items);
    }
    Ok(array::from_vec(ctx, v))
}

fn to_h(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = hash::new(ctx);
    let mut i = 0;
    while i < len(recv) {
        let mut e = get(recv, i);
        if let Some(b) = args.block {
            e = ctx.yield1(&b, e)?;
        }
        let Some(pair) = try_to_ary(ctx, e)? else {
            let cname = object::class_name_of(ctx, e);
            return Err(ctx.type_error(&format!("wrong element type {cname} at {i} (expected array)")));
        };
        if len(pair) != 2 {
            return Err(ctx.arg_error(&format!("wrong array length at {i} (expected 2, was {})", len(pair))));
        }
        hash::aset(ctx, h, get(pair, 0), get(pair, 1))?;
        i += 1;
    }
    Ok(h)
}

fn deconstruct(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn reverse_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "reverse_each", &[], SizeFn::ArrayLen) };
    let mut n = len(recv);
    while n > 0 {
        n -= 1;
        ctx.yield1(&b, get(recv, n))?;
        if len(recv) < n {
            n = len(recv);
        }
    }
    Ok(recv)
}

fn quantifier(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    if !args.pos.is_empty() && args.block.is_some() {
        warn_block_unused(ctx);
    }
    crate::core::enumerable::quantifier(ctx, recv, args, kind)
}

fn all_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'a')
}
fn any_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'y')
}
fn none_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'n')
}
fn one_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'o')
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().array;
    crate::methods!(ctx, c, [
        ("at", at, [1], Safe),
        ("fetch", fetch, [1..=2], Safe),
        ("fetch_values", fetch_values, [0..], Safe),
        ("dig", dig, [1..], Safe),
        ("values_at", values_at, [0..], Safe),
        ("assoc", assoc, [1], Safe),
        ("rassoc", rassoc, [1], Safe),
        ("index", index, [0..=1], Safe),
        ("rindex", rindex, [0..=1], Safe),
        ("count", count, [0..=1], Safe),
        ("delete", delete, [1], Unsafe),
        ("delete_at", delete_at, [1], Unsafe),
        ("delete_if", delete_if, [0], Unsafe),
        ("reject!", reject_bang, [0], Unsafe),
        ("select!", select_bang, [0], Unsafe),
        ("keep_if", keep_if, [0], Unsafe),
        ("insert", insert, [1..], Unsafe),
        ("fill", fill, [0..], Unsafe),
        ("slice!", slice_bang, [1..=2], Unsafe),
        ("compact", compact, [0], Safe),
        ("compact!", compact_bang, [0], Unsafe),
        ("take", take, [1], Safe),
        ("drop", drop, [1], Safe),
        ("take_while", take_while, [0], Safe),
        ("drop_while", drop_while, [0], Safe),
        ("-", minus, [1], Safe),
        ("difference", difference, [0..], Safe),
        ("|", or, [1], Safe),
        ("union", union, [0..], Safe),
        ("&", and, [1], Safe),
        ("intersection", intersection, [0..], Safe),
        ("intersect?", intersect_p, [1], Safe),
        ("uniq", uniq, [0], Safe),
        ("uniq!", uniq_bang, [0], Unsafe),
        ("flatten", flatten, [0..=1], Safe),
        ("flatten!", flatten_bang, [0..=1], Unsafe),
        ("<=>", cmp, [1], Safe),
        ("*", times, [1], Safe),
        ("to_h", to_h, [0], Safe),
        ("deconstruct", deconstruct, [0], Safe),
        ("reverse_each", reverse_each, [0], Safe),
        ("all?", all_p, [0..=1], Safe),
        ("any?", any_p, [0..=1], Safe),
        ("none?", none_p, [0..=1], Safe),
        ("one?", one_p, [0..=1], Safe),
    ]);
    crate::core::define_alias(ctx, c, "find_index", "index");
    crate::core::define_alias(ctx, c, "filter!", "select!");
    crate::core::array_order::init(ctx);
}
