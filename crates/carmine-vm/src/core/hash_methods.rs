//! Hash methods beyond the basics in `hash.rs`: filtering, transformation, merging,
//! searching, comparison and conversion.
//!
//! Invariants (in addition to those of `hash.rs`):
//! - Mutators check `FL_FROZEN` first (CRuby's `rb_hash_modify_check`).
//! - Blocks of `select`/`reject`/`delete_if`/`keep_if`/`filter_map`-style methods receive
//!   `key, value` as two arguments (CRuby's `rb_yield_values(2, …)`); methods inherited
//!   from Enumerable receive `[key, value]` pairs.
//! - Copies made by `select`, `reject`, `slice`, `except`, `transform_values`,
//!   `compact`-like methods keep `compare_by_identity` and are plain Hashes without a
//!   default unless CRuby's method keeps them (`merge`, `compact` duplicate the receiver).

use crate::core::enumerator::{enum_for_this, SizeFn};
use crate::core::hash::{self, each_pair, len, lookup, rhash, to_hash_arg, FL_IDENTITY};
use crate::core::{array, object};
use crate::interp::{Args, Block};
use crate::object::basic;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A new empty plain Hash comparing keys like `h` does.
fn new_like(ctx: &mut Ctx, h: Value) -> Value {
    let r = hash::new(ctx);
    if basic(h).has(FL_IDENTITY) {
        basic(r).flags |= FL_IDENTITY;
    }
    r
}

fn sized(ctx: &mut Ctx, recv: Value, name: &str) -> Result<Value> {
    enum_for_this(ctx, recv, name, &[], SizeFn::HashLen)
}

fn yield_kv(ctx: &mut Ctx, b: &Block, k: Value, v: Value) -> Result<Value> {
    ctx.yield_block(b, &[k, v])
}

/// A plain copy of `h`'s entries comparing keys like `h` (no default).
fn copy_like(ctx: &mut Ctx, h: Value) -> Result<Value> {
    let out = new_like(ctx, h);
    for (k, v) in hash::pairs(h) {
        hash::insert_raw(ctx, out, k, v)?;
    }
    Ok(out)
}

/// Entries of `recv` for which `block(key, value)` is `want`, as a new Hash. Like CRuby,
/// the copy is what gets iterated, so the block may modify `recv`.
fn filtered_copy(ctx: &mut Ctx, recv: Value, b: &Block, want: bool) -> Result<Value> {
    let out = copy_like(ctx, recv)?;
    each_pair(ctx, out, &mut |ctx, k, v| {
        if yield_kv(ctx, b, k, v)?.truthy() != want {
            hash::delete(ctx, out, k)?;
        }
        Ok(true)
    })?;
    Ok(out)
}

/// Deletes the entries for which `block(key, value)` is not `keep`; returns whether any
/// was deleted.
fn filter_in_place(ctx: &mut Ctx, recv: Value, b: &Block, keep: bool) -> Result<bool> {
    let mut changed = false;
    each_pair(ctx, recv, &mut |ctx, k, v| {
        if yield_kv(ctx, b, k, v)?.truthy() != keep {
            ctx.check_frozen(recv)?;
            hash::delete(ctx, recv, k)?;
            changed = true;
        }
        Ok(true)
    })?;
    Ok(changed)
}

fn select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "select") };
    filtered_copy(ctx, recv, &b, true)
}

fn reject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "reject") };
    filtered_copy(ctx, recv, &b, false)
}

fn select_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "select!") };
    ctx.check_frozen(recv)?;
    Ok(if filter_in_place(ctx, recv, &b, true)? { recv } else { Value::NIL })
}

fn reject_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "reject!") };
    ctx.check_frozen(recv)?;
    Ok(if filter_in_place(ctx, recv, &b, false)? { recv } else { Value::NIL })
}

fn keep_if(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "keep_if") };
    ctx.check_frozen(recv)?;
    filter_in_place(ctx, recv, &b, true)?;
    Ok(recv)
}

fn delete_if(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "delete_if") };
    ctx.check_frozen(recv)?;
    filter_in_place(ctx, recv, &b, false)?;
    Ok(recv)
}

fn any_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if len(recv) == 0 {
        return Ok(Value::FALSE);
    }
    let pattern = args.pos.first().copied();
    if pattern.is_some() && args.block.is_some() {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: given block not used\n"));
    }
    if pattern.is_none() && args.block.is_none() {
        return Ok(Value::TRUE);
    }
    let mut found = false;
    each_pair(ctx, recv, &mut |ctx, k, v| {
        let pair = array::from_slice(ctx, &[k, v]);
        let hit = match (pattern, args.block) {
            (Some(p), _) => crate::interp::ops::case_eq(ctx, p, pair)?,
            (None, Some(b)) => ctx.yield1(&b, pair)?.truthy(),
            (None, None) => true,
        };
        if hit {
            found = true;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(Value::bool(found))
}

// ---- transformation ----

fn transform_values(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "transform_values") };
    let out = new_like(ctx, recv);
    each_pair(ctx, recv, &mut |ctx, k, v| {
        let nv = ctx.yield1(&b, v)?;
        hash::insert_raw(ctx, out, k, nv)?;
        Ok(true)
    })?;
    Ok(out)
}

fn transform_values_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "transform_values!") };
    ctx.check_frozen(recv)?;
    let mut i = 0;
    while let Some(e) = hash::entry_at(recv, i) {
        if let Some((k, v)) = e {
            let nv = ctx.yield1(&b, v)?;
            ctx.check_frozen(recv)?;
            // The block may have deleted or replaced the entry; store by key.
            if let Some(entry) = rhash(recv).entries.get_mut(i) {
                if entry.key == k {
                    entry.value = nv;
                } else {
                    hash::aset(ctx, recv, k, nv)?;
                }
            }
        }
        i += 1;
    }
    Ok(recv)
}

/// The new key for `key` in `transform_keys(mapping) { … }`.
fn new_key(ctx: &mut Ctx, key: Value, mapping: Option<Value>, block: Option<Block>) -> Result<Value> {
    if let Some(m) = mapping {
        if let Some(k) = lookup(ctx, m, key)? {
            return Ok(k);
        }
        return match block {
            Some(b) => ctx.yield1(&b, key),
            None => Ok(key),
        };
    }
    match block {
        Some(b) => ctx.yield1(&b, key),
        None => Ok(key),
    }
}

fn transform_keys(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mapping = match args.pos.first() {
        Some(&m) => Some(to_hash_arg(ctx, m)?),
        None => None,
    };
    if mapping.is_none() && args.block.is_none() {
        return sized(ctx, recv, "transform_keys");
    }
    let out = hash::new(ctx);
    each_pair(ctx, recv, &mut |ctx, k, v| {
        let nk = new_key(ctx, k, mapping, args.block)?;
        hash::aset(ctx, out, nk, v)?;
        Ok(true)
    })?;
    Ok(out)
}

fn transform_keys_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mapping = match args.pos.first() {
        Some(&m) => Some(to_hash_arg(ctx, m)?),
        None => None,
    };
    if mapping.is_none() && args.block.is_none() {
        return sized(ctx, recv, "transform_keys!");
    }
    ctx.check_frozen(recv)?;
    if len(recv) == 0 {
        return Ok(recv);
    }
    // CRuby's algorithm: walk a snapshot of the pairs; a key is deleted unless it is one
    // of the keys already produced, then the new key is stored.
    let pairs = flat_pairs(ctx, recv);
    let new_keys = hash::new(ctx);
    let mut i = 0;
    while i + 1 < array::len(pairs) {
        let (k, v) = (array::get(pairs, i), array::get(pairs, i + 1));
        let nk = new_key(ctx, k, mapping, args.block)?;
        ctx.check_frozen(recv)?;
        if lookup(ctx, new_keys, k)?.is_none() {
            hash::delete(ctx, recv, k)?;
        }
        hash::aset(ctx, recv, nk, v)?;
        hash::aset(ctx, new_keys, nk, Value::NIL)?;
        i += 2;
    }
    Ok(recv)
}

/// `[k1, v1, k2, v2, …]`.
fn flat_pairs(ctx: &mut Ctx, h: Value) -> Value {
    let mut v = Vec::with_capacity(len(h) * 2);
    for (k, x) in hash::pairs(h) {
        v.push(k);
        v.push(x);
    }
    array::from_vec(ctx, v)
}

fn invert(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = hash::new(ctx);
    each_pair(ctx, recv, &mut |ctx, k, v| {
        hash::aset(ctx, out, v, k)?;
        Ok(true)
    })?;
    Ok(out)
}

fn compact(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let out = hash::dup_with_class(ctx, recv, klass);
    for (k, v) in hash::pairs(out) {
        if v.is_nil() {
            hash::delete(ctx, out, k)?;
        }
    }
    Ok(out)
}

fn compact_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let n = len(recv);
    for (k, v) in hash::pairs(recv) {
        if v.is_nil() {
            hash::delete(ctx, recv, k)?;
        }
    }
    Ok(if len(recv) == n { Value::NIL } else { recv })
}

// ---- merging ----

/// Merges `other` into `dst` (CRuby's `rb_hash_update` for one argument).
fn update_one(ctx: &mut Ctx, dst: Value, other: Value, block: Option<Block>) -> Result<()> {
    each_pair(ctx, other, &mut |ctx, k, v| {
        let nv = match block {
            Some(b) => match lookup(ctx, dst, k)? {
                Some(old) => ctx.yield_block(&b, &[k, old, v])?,
                None => v,
            },
            None => v,
        };
        ctx.check_frozen(dst)?;
        hash::aset(ctx, dst, k, nv)?;
        Ok(true)
    })
}

fn update(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    for &o in args.pos {
        let o = to_hash_arg(ctx, o)?;
        update_one(ctx, recv, o, args.block)?;
    }
    Ok(recv)
}

fn merge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let out = hash::dup_with_class(ctx, recv, klass);
    // A copy, as CRuby's merge is dup + update: a subclass's instance variables come along.
    object::copy_ivars(ctx, out, recv);
    for &o in args.pos {
        let o = to_hash_arg(ctx, o)?;
        update_one(ctx, out, o, args.block)?;
    }
    Ok(out)
}

// ---- searching and access ----

fn dig(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = hash::aref(ctx, recv, args.pos[0])?;
    crate::core::array_methods::dig_rest(ctx, v, &args.pos[1..])
}

fn fetch_values(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::with_capacity(ctx, args.pos.len());
    for &k in args.pos {
        let v = match lookup(ctx, recv, k)? {
            Some(v) => v,
            None => match args.block {
                Some(b) => ctx.yield1(&b, k)?,
                None => {
                    let s = object::inspect_string(ctx, k)?;
                    return Err(ctx.key_error(&format!("key not found: {s}"), recv, k));
                }
            },
        };
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::with_capacity(ctx, args.pos.len());
    for &k in args.pos {
        let v = hash::aref(ctx, recv, k)?;
        array::push(ctx, out, v);
    }
    Ok(out)
}

/// The first entry whose value (`by_value`) or key equals `x` with `==`; CRuby calls
/// `stored == x` for values and `x == key` for keys.
fn find_entry(ctx: &mut Ctx, recv: Value, x: Value, by_value: bool) -> Result<Option<(Value, Value)>> {
    let mut found = None;
    each_pair(ctx, recv, &mut |ctx, k, v| {
        let hit = if by_value { object::equal(ctx, v, x)? } else { object::equal(ctx, x, k)? };
        if hit {
            found = Some((k, v));
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(found)
}

fn key(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(find_entry(ctx, recv, args.pos[0], true)?.map_or(Value::NIL, |(k, _)| k))
}

fn value_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(find_entry(ctx, recv, args.pos[0], true)?.is_some()))
}

fn assoc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let k = args.pos[0];
    // CRuby compares with `==` (a linear scan for identity hashes and small tables).
    let found = find_entry(ctx, recv, k, false)?;
    Ok(match found {
        Some((k, v)) => array::from_slice(ctx, &[k, v]),
        None => Value::NIL,
    })
}

fn rassoc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(match find_entry(ctx, recv, args.pos[0], true)? {
        Some((k, v)) => array::from_slice(ctx, &[k, v]),
        None => Value::NIL,
    })
}

fn shift(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let first = rhash(recv).entries.iter().find(|e| !e.key.is_undef()).map(|e| (e.key, e.value));
    match first {
        Some((k, v)) => {
            hash::delete(ctx, recv, k)?;
            Ok(array::from_slice(ctx, &[k, v]))
        }
        None => Ok(Value::NIL),
    }
}

fn slice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = new_like(ctx, recv);
    for &k in args.pos {
        if let Some(v) = lookup(ctx, recv, k)? {
            hash::aset(ctx, out, k, v)?;
        }
    }
    Ok(out)
}

fn except(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = copy_like(ctx, recv)?;
    for &k in args.pos {
        hash::delete(ctx, out, k)?;
    }
    Ok(out)
}

// ---- conversion ----

fn to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = array::with_capacity(ctx, len(recv));
    each_pair(ctx, recv, &mut |ctx, k, v| {
        let pair = array::from_slice(ctx, &[k, v]);
        array::push(ctx, out, pair);
        Ok(true)
    })?;
    Ok(out)
}

fn flatten(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let level = match args.pos.first() {
        Some(&l) => {
            let n = crate::core::integer::to_i64_arg(ctx, l)?;
            if n > i32::MAX as i64 || n < i32::MIN as i64 {
                return Err(ctx.range_error(&format!("integer {n} too {} to convert to 'int'", if n > 0 { "big" } else { "small" })));
            }
            n
        }
        None => 1,
    };
    if level == 0 {
        return to_a(ctx, recv, args);
    }
    let flat = flat_pairs(ctx, recv);
    let rest = level - 1;
    if rest != 0 {
        let lv = if rest > 0 { vec![Value::fixnum(rest)] } else { vec![] };
        ctx.call_str(flat, "flatten!", &lv)?;
    }
    Ok(flat)
}

fn to_proc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = crate::core::method::method_object(ctx, recv, sym::AREF)?;
    Ok(crate::core::proc::method_proc(ctx, m))
}

fn deconstruct_keys(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

// ---- comparison ----

/// Whether every pair of `a` is in `b` (values compared with `==`).
fn subset(ctx: &mut Ctx, a: Value, b: Value) -> Result<bool> {
    let mut ok = true;
    each_pair(ctx, a, &mut |ctx, k, v| {
        match lookup(ctx, b, k)? {
            Some(w) if object::equal(ctx, v, w)? => Ok(true),
            _ => {
                ok = false;
                Ok(false)
            }
        }
    })?;
    Ok(ok)
}

fn le(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_hash_arg(ctx, args.pos[0])?;
    Ok(Value::bool(len(recv) <= len(o) && subset(ctx, recv, o)?))
}

fn lt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_hash_arg(ctx, args.pos[0])?;
    Ok(Value::bool(len(recv) < len(o) && subset(ctx, recv, o)?))
}

fn ge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_hash_arg(ctx, args.pos[0])?;
    Ok(Value::bool(len(o) <= len(recv) && subset(ctx, o, recv)?))
}

fn gt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_hash_arg(ctx, args.pos[0])?;
    Ok(Value::bool(len(o) < len(recv) && subset(ctx, o, recv)?))
}

/// `Hash#sum`, `min_by` … come from Enumerable; `count` too (CRuby defines no Hash#count).
pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().hash;
    crate::methods!(ctx, c, [
        ("select", select, [0], Safe),
        ("reject", reject, [0], Safe),
        ("select!", select_bang, [0], Unsafe),
        ("reject!", reject_bang, [0], Unsafe),
        ("keep_if", keep_if, [0], Unsafe),
        ("delete_if", delete_if, [0], Unsafe),
        ("any?", any_p, [0..=1], Safe),
        ("transform_values", transform_values, [0], Safe),
        ("transform_values!", transform_values_bang, [0], Unsafe),
        ("transform_keys", transform_keys, [0..=1], Safe),
        ("transform_keys!", transform_keys_bang, [0..=1], Unsafe),
        ("invert", invert, [0], Safe),
        ("compact", compact, [0], Safe),
        ("compact!", compact_bang, [0], Unsafe),
        ("merge", merge, [0..], Safe),
        ("update", update, [0..], Unsafe),
        ("dig", dig, [1..], Safe),
        ("fetch_values", fetch_values, [0..], Safe),
        ("values_at", values_at, [0..], Safe),
        ("key", key, [1], Safe),
        ("value?", value_p, [1], Safe),
        ("assoc", assoc, [1], Safe),
        ("rassoc", rassoc, [1], Safe),
        ("shift", shift, [0], Unsafe),
        ("slice", slice, [0..], Safe),
        ("except", except, [0..], Safe),
        ("to_a", to_a, [0], Safe),
        ("flatten", flatten, [0..=1], Safe),
        ("to_proc", to_proc, [0], Safe),
        ("deconstruct_keys", deconstruct_keys, [1], Safe),
        ("<=", le, [1], Safe),
        ("<", lt, [1], Safe),
        (">=", ge, [1], Safe),
        (">", gt, [1], Safe),
    ]);
    crate::core::define_alias(ctx, c, "filter", "select");
    crate::core::define_alias(ctx, c, "filter!", "select!");
    crate::core::define_alias(ctx, c, "merge!", "update");
    crate::core::define_alias(ctx, c, "has_value?", "value?");
}
