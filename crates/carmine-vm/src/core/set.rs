//! Set (Ruby 3.4's `set.rb` API), implemented in Rust over a Hash whose keys are the
//! members (values are `true`).
//!
//! Invariants:
//! - A Set is a Data object holding `SetObj { hash }`; `hash` is nil only for an
//!   allocated-but-uninitialized set and is created on first use. The payload marks it.
//! - Membership, order and `compare_by_identity` are the Hash's: insertion order, `eql?`
//!   and `hash` (String members are copied and frozen like Hash keys).
//! - A frozen Set refuses mutation with the FrozenError its internal Hash would raise
//!   ("can't modify frozen Hash: …"), as CRuby 3.4's set.rb does. Iterating a Set marks its
//!   Hash as iterated, so adding during `each` raises like CRuby.
//! - Methods that CRuby implements by calling other public methods on *other* objects
//!   (`set.is_a?(Set)`, `enum.each_entry`, `klass.new`) call them dynamically, so Set-like
//!   objects and subclasses interoperate as they do with set.rb.

use crate::core::enumerator::{enum_for_this, SizeFn};
use crate::core::module::{self, body, AllocKind, MethodEntry, Visibility};
use crate::core::{array, enumerable, hash, object, proc as rproc};
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct SetObj {
    pub hash: Value,
}

crate::data_obj!(SetObj, |s, m| {
    m.mark(s.hash);
});

fn alloc_set(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(SetObj { hash: Value::NIL })))
}

#[inline]
pub fn is_set(v: Value) -> bool {
    data_ref::<SetObj>(v).is_some()
}

/// The member table of `s`, created when the set was never initialized.
fn table(ctx: &mut Ctx, s: Value) -> Result<Value> {
    let Some(o) = data_ref::<SetObj>(s) else {
        let cname = object::class_name_of(ctx, s);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Set)")));
    };
    if o.hash.is_nil() {
        let h = hash::new(ctx);
        if let Some(o) = data_ref::<SetObj>(s) {
            o.hash = h;
        }
        return Ok(h);
    }
    Ok(o.hash)
}

/// The table of `s` for a mutation (FrozenError when `s` is frozen).
fn modify(ctx: &mut Ctx, s: Value) -> Result<Value> {
    let h = table(ctx, s)?;
    if object::is_frozen(s) || object::is_frozen(h) {
        return Err(ctx.frozen_error(h));
    }
    Ok(h)
}

/// A new Set of class `klass` (through `klass.new`, so subclasses initialize).
fn new_of_class(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    ctx.call(klass, sym::NEW, &[])
}

/// A new plain Set holding the keys of `h` (no Ruby calls).
fn new_plain(ctx: &mut Ctx) -> Result<Value> {
    let k = ctx.c().set;
    let s = alloc_set(ctx, k)?;
    table(ctx, s)?;
    Ok(s)
}

fn add_to(ctx: &mut Ctx, s: Value, o: Value) -> Result<()> {
    if is_set(s) {
        let h = modify(ctx, s)?;
        hash::aset(ctx, h, o, Value::TRUE)
    } else {
        let mid = ctx.intern("add");
        ctx.call(s, mid, &[o]).map(|_| ())
    }
}

fn includes(ctx: &mut Ctx, s: Value, o: Value) -> Result<bool> {
    if is_set(s) {
        let h = table(ctx, s)?;
        return Ok(hash::lookup(ctx, h, o)?.is_some());
    }
    let mid = ctx.intern("include?");
    Ok(ctx.call(s, mid, &[o])?.truthy())
}

fn size_of(ctx: &mut Ctx, s: Value) -> Result<usize> {
    if is_set(s) {
        let h = table(ctx, s)?;
        return Ok(hash::len(h));
    }
    let n = ctx.call(s, sym::SIZE, &[])?;
    Ok(crate::core::integer::to_i64_arg(ctx, n)?.max(0) as usize)
}

/// `v.is_a?(Set)` as set.rb asks it (honouring an overridden `is_a?`).
fn set_like(ctx: &mut Ctx, v: Value) -> Result<bool> {
    if is_set(v) {
        return Ok(true);
    }
    if !v.is_heap() {
        return Ok(false);
    }
    let set_class = ctx.c().set;
    let mid = ctx.intern("is_a?");
    Ok(ctx.call(v, mid, &[set_class])?.truthy())
}

fn same_class(ctx: &Ctx, a: Value, b: Value) -> bool {
    is_set(b) && object::real_class_of(ctx, a) == object::real_class_of(ctx, b)
}

/// CRuby's `do_with_enum`: iterates `enum` with `each_entry` (or `each`).
fn do_with_enum(ctx: &mut Ctx, e: Value, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let each_entry = ctx.intern("each_entry");
    if array::is_array(e) {
        return enumerable::each_value(ctx, e, f);
    }
    if ctx.respond_to(e, each_entry, false) {
        return enumerable::each_value_with(ctx, e, each_entry, &[], f);
    }
    if ctx.respond_to(e, sym::EACH, false) {
        return enumerable::each_value(ctx, e, f);
    }
    Err(ctx.arg_error("value must be enumerable"))
}

fn check_enumerable(ctx: &mut Ctx, e: Value) -> Result<()> {
    let each_entry = ctx.intern("each_entry");
    if array::is_array(e) || ctx.respond_to(e, each_entry, false) || ctx.respond_to(e, sym::EACH, false) {
        return Ok(());
    }
    Err(ctx.arg_error("value must be enumerable"))
}

/// The members of `s` (a snapshot Array).
fn members(ctx: &mut Ctx, s: Value) -> Result<Value> {
    let h = table(ctx, s)?;
    let v: Vec<Value> = hash::pairs(h).into_iter().map(|(k, _)| k).collect();
    Ok(array::from_vec(ctx, v))
}

/// Adds every element of `e` to `s` (CRuby's `merge` for one argument).
fn merge_one(ctx: &mut Ctx, s: Value, e: Value) -> Result<()> {
    if same_class(ctx, s, e) {
        let src = table(ctx, e)?;
        let dst = modify(ctx, s)?;
        let keys = members(ctx, e)?;
        let _ = src;
        let mut i = 0;
        while i < array::len(keys) {
            hash::aset(ctx, dst, array::get(keys, i), Value::TRUE)?;
            i += 1;
        }
        return Ok(());
    }
    do_with_enum(ctx, e, &mut |ctx, o| {
        add_to(ctx, s, o)?;
        Ok(true)
    })
}

fn size_fn(ctx: &mut Ctx, recv: Value, _args: Value) -> Result<Value> {
    Ok(Value::fixnum(size_of(ctx, recv)? as i64))
}

fn sized(ctx: &mut Ctx, recv: Value, name: &str) -> Result<Value> {
    enum_for_this(ctx, recv, name, &[], SizeFn::Native(size_fn))
}

// ---- construction ----

fn s_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = array::from_slice(ctx, args.pos);
    ctx.call(recv, sym::NEW, &[a])
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    table(ctx, recv)?;
    let Some(&e) = args.pos.first() else { return Ok(Value::NIL) };
    if e.is_nil() {
        return Ok(Value::NIL);
    }
    match args.block {
        Some(b) => do_with_enum(ctx, e, &mut |ctx, o| {
            let v = ctx.yield1(&b, o)?;
            add_to(ctx, recv, v)?;
            Ok(true)
        })?,
        None => merge_one(ctx, recv, e)?,
    }
    Ok(Value::NIL)
}

/// A copy of Set `v` for dup/clone (the table is duplicated; freezing is the caller's).
pub fn dup_set(ctx: &mut Ctx, v: Value, klass: Value) -> Result<Option<Value>> {
    if !is_set(v) {
        return Ok(None);
    }
    let h = table(ctx, v)?;
    let copy = hash::dup(ctx, h);
    let s = alloc_set(ctx, klass)?;
    if let Some(o) = data_ref::<SetObj>(s) {
        o.hash = copy;
    }
    Ok(Some(s))
}

fn compare_by_identity(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = table(ctx, recv)?;
    if object::is_frozen(recv) {
        return Err(ctx.frozen_error(h));
    }
    ctx.call_str(h, "compare_by_identity", &[])?;
    Ok(recv)
}

fn compare_by_identity_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = table(ctx, recv)?;
    Ok(Value::bool(crate::object::basic(h).has(hash::FL_IDENTITY)))
}

fn freeze(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = table(ctx, recv)?;
    object::freeze(h);
    Ok(object::freeze(recv))
}

// ---- size and contents ----

fn size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = table(ctx, recv)?;
    Ok(Value::fixnum(hash::len(h) as i64))
}

fn empty_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = table(ctx, recv)?;
    Ok(Value::bool(hash::len(h) == 0))
}

fn clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = modify(ctx, recv)?;
    hash::clear(h);
    Ok(recv)
}

fn replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = args.pos[0];
    if same_class(ctx, recv, e) {
        let h = modify(ctx, recv)?;
        let src = table(ctx, e)?;
        ctx.call_str(h, "replace", &[src])?;
        return Ok(recv);
    }
    check_enumerable(ctx, e)?;
    let h = modify(ctx, recv)?;
    hash::clear(h);
    merge_one(ctx, recv, e)?;
    Ok(recv)
}

fn to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    members(ctx, recv)
}

fn to_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let set_class = ctx.c().set;
    let klass = args.pos.first().copied().unwrap_or(set_class);
    if object::real_class_of(ctx, recv) == set_class && klass == set_class && args.block.is_none() && args.pos.len() <= 1 {
        return Ok(recv);
    }
    let mut call_args = vec![recv];
    if args.pos.len() > 1 {
        call_args.extend_from_slice(&args.pos[1..]);
    }
    ctx.call_kw(klass, sym::NEW, &call_args, args.kw, args.block)
}

fn include_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(includes(ctx, recv, args.pos[0])?))
}

fn each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "each") };
    let h = table(ctx, recv)?;
    hash::each_pair(ctx, h, &mut |ctx, k, _| {
        ctx.yield1(&b, k)?;
        Ok(true)
    })?;
    Ok(recv)
}

// ---- adding and removing ----

fn add(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = modify(ctx, recv)?;
    hash::aset(ctx, h, args.pos[0], Value::TRUE)?;
    Ok(recv)
}

fn add_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if includes(ctx, recv, args.pos[0])? {
        return Ok(Value::NIL);
    }
    add(ctx, recv, args)
}

fn delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = modify(ctx, recv)?;
    hash::delete(ctx, h, args.pos[0])?;
    Ok(recv)
}

fn delete_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !includes(ctx, recv, args.pos[0])? {
        return Ok(Value::NIL);
    }
    delete(ctx, recv, args)
}

/// Deletes the members for which the block's truthiness is `when_truthy`; returns whether
/// any member was deleted. Like set.rb, the block sees every member before any deletion.
fn delete_matching(ctx: &mut Ctx, recv: Value, b: &Block, when_truthy: bool) -> Result<bool> {
    modify(ctx, recv)?;
    let all = members(ctx, recv)?;
    let doomed = array::new(ctx);
    let mut i = 0;
    while i < array::len(all) {
        let o = array::get(all, i);
        if ctx.yield1(b, o)?.truthy() == when_truthy {
            array::push(ctx, doomed, o);
        }
        i += 1;
    }
    let h = modify(ctx, recv)?;
    let mut changed = false;
    let mut i = 0;
    while i < array::len(doomed) {
        if hash::delete(ctx, h, array::get(doomed, i))?.is_some() {
            changed = true;
        }
        i += 1;
    }
    Ok(changed)
}

fn delete_if(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "delete_if") };
    delete_matching(ctx, recv, &b, true)?;
    Ok(recv)
}

fn keep_if(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "keep_if") };
    delete_matching(ctx, recv, &b, false)?;
    Ok(recv)
}

fn reject_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "reject!") };
    Ok(if delete_matching(ctx, recv, &b, true)? { recv } else { Value::NIL })
}

fn select_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "select!") };
    Ok(if delete_matching(ctx, recv, &b, false)? { recv } else { Value::NIL })
}

fn collect_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "collect!") };
    modify(ctx, recv)?;
    let all = members(ctx, recv)?;
    let fresh = hash::new(ctx);
    let mut i = 0;
    while i < array::len(all) {
        let v = ctx.yield1(&b, array::get(all, i))?;
        hash::aset(ctx, fresh, v, Value::TRUE)?;
        i += 1;
    }
    let h = modify(ctx, recv)?;
    ctx.call_str(h, "replace", &[fresh])?;
    Ok(recv)
}

fn merge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &e in args.pos {
        merge_one(ctx, recv, e)?;
    }
    Ok(recv)
}

fn subtract(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = args.pos[0];
    do_with_enum(ctx, e, &mut |ctx, o| {
        let h = modify(ctx, recv)?;
        hash::delete(ctx, h, o)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn reset(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = modify(ctx, recv)?;
    ctx.call_str(h, "rehash", &[])?;
    Ok(recv)
}

// ---- set algebra ----

fn dup_of(ctx: &mut Ctx, s: Value) -> Result<Value> {
    ctx.call(s, sym::DUP, &[])
}

fn union(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = dup_of(ctx, recv)?;
    merge_one(ctx, d, args.pos[0])?;
    Ok(d)
}

fn difference(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = dup_of(ctx, recv)?;
    subtract(ctx, d, args)?;
    Ok(d)
}

fn intersection(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = args.pos[0];
    let klass = object::real_class_of(ctx, recv);
    let n = new_of_class(ctx, klass)?;
    if set_like(ctx, e)? {
        if size_of(ctx, e)? > size_of(ctx, recv)? {
            let all = members(ctx, recv)?;
            let mut i = 0;
            while i < array::len(all) {
                let o = array::get(all, i);
                if includes(ctx, e, o)? {
                    add_to(ctx, n, o)?;
                }
                i += 1;
            }
        } else {
            enumerable::each_value(ctx, e, &mut |ctx, o| {
                if includes(ctx, recv, o)? {
                    add_to(ctx, n, o)?;
                }
                Ok(true)
            })?;
        }
    } else {
        do_with_enum(ctx, e, &mut |ctx, o| {
            if includes(ctx, recv, o)? {
                add_to(ctx, n, o)?;
            }
            Ok(true)
        })?;
    }
    Ok(n)
}

fn xor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = new_plain(ctx)?;
    merge_one(ctx, n, args.pos[0])?;
    let all = members(ctx, recv)?;
    let nh = table(ctx, n)?;
    let mut i = 0;
    while i < array::len(all) {
        let o = array::get(all, i);
        if hash::delete(ctx, nh, o)?.is_none() {
            hash::aset(ctx, nh, o, Value::TRUE)?;
        }
        i += 1;
    }
    Ok(n)
}

fn eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if recv == o {
        return Ok(Value::TRUE);
    }
    if same_class(ctx, recv, o) {
        let (a, b) = (table(ctx, recv)?, table(ctx, o)?);
        return Ok(Value::bool(hash::hashes_equal(ctx, a, b, false)?));
    }
    if set_like(ctx, o)? && size_of(ctx, recv)? == size_of(ctx, o)? {
        let h = table(ctx, recv)?;
        let mut all = true;
        enumerable::each_value(ctx, o, &mut |ctx, x| {
            if hash::lookup(ctx, h, x)?.is_none() {
                all = false;
                return Ok(false);
            }
            Ok(true)
        })?;
        return Ok(Value::bool(all));
    }
    Ok(Value::FALSE)
}

fn set_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let raw = data_ref::<SetObj>(recv).map_or(Value::NIL, |o| o.hash);
    ctx.call(raw, sym::HASH, &[])
}

fn eql_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !set_like(ctx, o)? || !is_set(o) {
        return Ok(Value::FALSE);
    }
    let (a, b) = (table(ctx, recv)?, table(ctx, o)?);
    Ok(Value::bool(hash::hashes_equal(ctx, a, b, true)?))
}

/// `a ⊆ b` (strict when `proper`), for a Set `a` and a set-like `b`.
fn subset_of(ctx: &mut Ctx, a: Value, b: Value, proper: bool) -> Result<bool> {
    let (na, nb) = (size_of(ctx, a)?, size_of(ctx, b)?);
    if na > nb || (proper && na == nb) {
        return Ok(false);
    }
    let all = members(ctx, a)?;
    let mut i = 0;
    while i < array::len(all) {
        if !includes(ctx, b, array::get(all, i))? {
            return Ok(false);
        }
        i += 1;
    }
    Ok(true)
}

/// `b ⊆ a` for a Set `a` and a set-like `b` (iterating `b`).
fn superset_of(ctx: &mut Ctx, a: Value, b: Value, proper: bool) -> Result<bool> {
    let (na, nb) = (size_of(ctx, a)?, size_of(ctx, b)?);
    if na < nb || (proper && na == nb) {
        return Ok(false);
    }
    let mut all = true;
    enumerable::each_value(ctx, b, &mut |ctx, x| {
        if !includes(ctx, a, x)? {
            all = false;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(all)
}

fn need_set(ctx: &mut Ctx, v: Value) -> Result<()> {
    if set_like(ctx, v)? {
        Ok(())
    } else {
        Err(ctx.arg_error("value must be a set"))
    }
}

fn superset_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    need_set(ctx, args.pos[0])?;
    Ok(Value::bool(superset_of(ctx, recv, args.pos[0], false)?))
}

fn proper_superset_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    need_set(ctx, args.pos[0])?;
    Ok(Value::bool(superset_of(ctx, recv, args.pos[0], true)?))
}

fn subset_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    need_set(ctx, args.pos[0])?;
    Ok(Value::bool(subset_of(ctx, recv, args.pos[0], false)?))
}

fn proper_subset_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    need_set(ctx, args.pos[0])?;
    Ok(Value::bool(subset_of(ctx, recv, args.pos[0], true)?))
}

fn cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !set_like(ctx, o)? {
        return Ok(Value::NIL);
    }
    let (na, nb) = (size_of(ctx, recv)?, size_of(ctx, o)?);
    Ok(match na.cmp(&nb) {
        std::cmp::Ordering::Less if subset_of(ctx, recv, o, true)? => Value::fixnum(-1),
        std::cmp::Ordering::Greater if superset_of(ctx, recv, o, true)? => Value::fixnum(1),
        std::cmp::Ordering::Equal if eq(ctx, recv, args)?.truthy() => Value::fixnum(0),
        _ => Value::NIL,
    })
}

fn intersect_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    let mut found = false;
    if set_like(ctx, o)? && size_of(ctx, recv)? < size_of(ctx, o)? {
        let all = members(ctx, recv)?;
        let mut i = 0;
        while i < array::len(all) {
            if includes(ctx, o, array::get(all, i))? {
                found = true;
                break;
            }
            i += 1;
        }
        return Ok(Value::bool(found));
    }
    let enumerable_mod = ctx.c().enumerable;
    if !set_like(ctx, o)? && !object::is_a(ctx, o, enumerable_mod) {
        return Err(ctx.arg_error("value must be enumerable"));
    }
    enumerable::each_value(ctx, o, &mut |ctx, x| {
        if includes(ctx, recv, x)? {
            found = true;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(Value::bool(found))
}

fn disjoint_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(!intersect_p(ctx, recv, args)?.truthy()))
}

// ---- grouping ----

fn classify_into(ctx: &mut Ctx, recv: Value, b: &Block) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let h = hash::new(ctx);
    let all = members(ctx, recv)?;
    let mut i = 0;
    while i < array::len(all) {
        let o = array::get(all, i);
        let k = ctx.yield1(b, o)?;
        let group = match hash::lookup(ctx, h, k)? {
            Some(g) => g,
            None => {
                let g = new_of_class(ctx, klass)?;
                hash::aset(ctx, h, k, g)?;
                g
            }
        };
        add_to(ctx, group, o)?;
        i += 1;
    }
    Ok(h)
}

fn classify(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "classify") };
    classify_into(ctx, recv, &b)
}

fn divide(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized(ctx, recv, "divide") };
    let p = rproc::from_block(ctx, &b)?;
    let out = new_plain(ctx)?;
    if rproc::arity_of(ctx, p) != 2 {
        let groups = classify_into(ctx, recv, &b)?;
        for (_, g) in hash::pairs(groups) {
            add_to(ctx, out, g)?;
        }
        return Ok(out);
    }
    // Elements u, v are related when func(u, v); the groups are the strongly connected
    // components of that relation (set.rb uses TSort).
    let all = members(ctx, recv)?;
    let n = array::len(all);
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (u, row) in adj.iter_mut().enumerate() {
        for v in 0..n {
            let (x, y) = (array::get(all, u), array::get(all, v));
            if ctx.call_proc(p, &[x, y], None)?.truthy() {
                row.push(v);
            }
        }
    }
    let klass = object::real_class_of(ctx, recv);
    for comp in strongly_connected_components(&adj) {
        let elems: Vec<Value> = comp.iter().map(|&i| array::get(all, i)).collect();
        let arr = array::from_vec(ctx, elems);
        let g = ctx.call(klass, sym::NEW, &[arr])?;
        add_to(ctx, out, g)?;
    }
    Ok(out)
}

/// Tarjan's algorithm (iterative); components in reverse topological order, like TSort.
fn strongly_connected_components(adj: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = adj.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        // (node, next edge to visit)
        let mut work = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (v, ref mut ei)) = work.last_mut() {
            if let Some(&w) = adj[v].get(*ei) {
                *ei += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comp.reverse();
                out.push(comp);
            }
        }
    }
    out
}

// ---- flattening ----

/// Adds the members of `src` to `dst`, descending into member sets; `seen` (an identity
/// Hash) holds the sets on the current path.
fn flatten_into(ctx: &mut Ctx, dst: Value, src: Value, seen: Value) -> Result<()> {
    let elems = if is_set(src) { members(ctx, src)? } else { enumerable::to_array(ctx, src)? };
    let mut i = 0;
    while i < array::len(elems) {
        let e = array::get(elems, i);
        if set_like(ctx, e)? {
            if hash::lookup(ctx, seen, e)?.is_some() {
                return Err(ctx.arg_error("tried to flatten recursive Set"));
            }
            hash::insert_raw(ctx, seen, e, Value::TRUE)?;
            flatten_into(ctx, dst, e, seen)?;
            hash::delete(ctx, seen, e)?;
        } else {
            add_to(ctx, dst, e)?;
        }
        i += 1;
    }
    Ok(())
}

fn identity_hash(ctx: &mut Ctx) -> Value {
    let h = hash::new(ctx);
    crate::object::basic(h).flags |= hash::FL_IDENTITY;
    h
}

fn flatten_merge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let seen = match args.pos.get(1) {
        Some(&s) if hash::is_hash(s) => s,
        _ => identity_hash(ctx),
    };
    flatten_into(ctx, recv, args.pos[0], seen)?;
    Ok(recv)
}

fn flatten(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let out = new_of_class(ctx, klass)?;
    let seen = identity_hash(ctx);
    flatten_into(ctx, out, recv, seen)?;
    Ok(out)
}

fn flatten_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let all = members(ctx, recv)?;
    let mut nested = false;
    let mut i = 0;
    while i < array::len(all) {
        if set_like(ctx, array::get(all, i))? {
            nested = true;
            break;
        }
        i += 1;
    }
    if !nested {
        return Ok(Value::NIL);
    }
    let flat = flatten(ctx, recv, args)?;
    let a = [flat];
    replace(ctx, recv, &Args { pos: &a, kw: None, block: None })
}

// ---- conversion ----

fn join(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = ctx.call(recv, sym::TO_A, &[])?;
    let sep = args.pos.first().copied().unwrap_or(Value::NIL);
    ctx.call_str(a, "join", &[sep])
}

fn inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let cname = crate::core::module_methods::class_path(ctx, klass);
    let r = object::guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let all = members(ctx, recv)?;
        let mut out = format!("#<{cname}: {{").into_bytes();
        let mut i = 0;
        while i < array::len(all) {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            let s = array::inspect_elem(ctx, array::get(all, i))?;
            out.extend_from_slice(crate::core::string::bytes(s));
            i += 1;
        }
        out.extend_from_slice(b"}>");
        Ok(Some(out))
    })?;
    Ok(match r {
        Some(b) => crate::core::string::new_from_bytes(ctx, &b),
        None => crate::core::string::new_utf8(ctx, &format!("#<{cname}: {{...}}>")),
    })
}

fn pretty_print_cycle(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let cname = crate::core::module_methods::class_path(ctx, klass);
    let empty = hash::len(table(ctx, recv)?) == 0;
    let s = crate::core::string::new_utf8(ctx, &format!("#<{cname}: {{{}}}>", if empty { "" } else { "..." }));
    ctx.call_str(args.pos[0], "text", &[s])
}

/// Makes `name` protected in `klass` (the methods! table defines public methods).
fn make_protected(ctx: &mut Ctx, klass: Value, name: &str) {
    let id = ctx.intern(name);
    if let Some(me) = body(klass).methods.get(&id).cloned() {
        module::add_method(ctx, klass, MethodEntry { name: me.name, original_name: me.original_name, owner: me.owner, visibility: Visibility::Protected, body: me.body.clone() });
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().set;
    body(c).alloc = AllocKind::Data(alloc_set);
    crate::methods!(ctx, c, [
        ("[]", s_aref, [0..], Unsafe, Singleton),
        ("initialize", initialize, [0..=1], Unsafe, Private),
        ("compare_by_identity", compare_by_identity, [0], Unsafe),
        ("compare_by_identity?", compare_by_identity_p, [0], Safe),
        ("freeze", freeze, [0], Unsafe),
        ("size", size, [0], Safe),
        ("empty?", empty_p, [0], Safe),
        ("clear", clear, [0], Unsafe),
        ("replace", replace, [1], Unsafe),
        ("to_a", to_a, [0], Safe),
        ("to_set", to_set, [0..], Unsafe, Kw),
        ("include?", include_p, [1], Safe),
        ("each", each, [0], Unsafe),
        ("add", add, [1], Unsafe),
        ("add?", add_p, [1], Unsafe),
        ("delete", delete, [1], Unsafe),
        ("delete?", delete_p, [1], Unsafe),
        ("delete_if", delete_if, [0], Unsafe),
        ("keep_if", keep_if, [0], Unsafe),
        ("reject!", reject_bang, [0], Unsafe),
        ("select!", select_bang, [0], Unsafe),
        ("collect!", collect_bang, [0], Unsafe),
        ("merge", merge, [0..], Unsafe),
        ("subtract", subtract, [1], Unsafe),
        ("reset", reset, [0], Unsafe),
        ("|", union, [1], Unsafe),
        ("-", difference, [1], Unsafe),
        ("&", intersection, [1], Unsafe),
        ("^", xor, [1], Unsafe),
        ("==", eq, [1], Unsafe),
        ("hash", set_hash, [0], Unsafe),
        ("eql?", eql_p, [1], Unsafe),
        ("superset?", superset_p, [1], Unsafe),
        ("proper_superset?", proper_superset_p, [1], Unsafe),
        ("subset?", subset_p, [1], Unsafe),
        ("proper_subset?", proper_subset_p, [1], Unsafe),
        ("<=>", cmp, [1], Unsafe),
        ("intersect?", intersect_p, [1], Unsafe),
        ("disjoint?", disjoint_p, [1], Unsafe),
        ("classify", classify, [0], Unsafe),
        ("divide", divide, [0], Unsafe),
        ("flatten_merge", flatten_merge, [1..=2], Unsafe),
        ("flatten", flatten, [0], Unsafe),
        ("flatten!", flatten_bang, [0], Unsafe),
        ("join", join, [0..=1], Unsafe),
        ("inspect", inspect, [0], Unsafe),
        ("pretty_print_cycle", pretty_print_cycle, [1], Unsafe),
    ]);
    crate::core::define_alias(ctx, c, "length", "size");
    crate::core::define_alias(ctx, c, "member?", "include?");
    crate::core::define_alias(ctx, c, "===", "include?");
    crate::core::define_alias(ctx, c, "<<", "add");
    crate::core::define_alias(ctx, c, "filter!", "select!");
    crate::core::define_alias(ctx, c, "map!", "collect!");
    crate::core::define_alias(ctx, c, "+", "|");
    crate::core::define_alias(ctx, c, "union", "|");
    crate::core::define_alias(ctx, c, "difference", "-");
    crate::core::define_alias(ctx, c, "intersection", "&");
    crate::core::define_alias(ctx, c, ">=", "superset?");
    crate::core::define_alias(ctx, c, ">", "proper_superset?");
    crate::core::define_alias(ctx, c, "<=", "subset?");
    crate::core::define_alias(ctx, c, "<", "proper_subset?");
    crate::core::define_alias(ctx, c, "to_s", "inspect");
    make_protected(ctx, c, "flatten_merge");
}

#[cfg(test)]
mod tests {
    use super::strongly_connected_components;

    #[test]
    fn scc_groups_mutually_reachable_nodes() {
        // 0 <-> 1, 2 alone, 3 -> 4 -> 3
        let adj = vec![vec![1], vec![0], vec![], vec![4], vec![3]];
        let mut comps: Vec<Vec<usize>> = strongly_connected_components(&adj).into_iter().map(|mut c| {
            c.sort();
            c
        }).collect();
        comps.sort();
        assert_eq!(comps, vec![vec![0, 1], vec![2], vec![3, 4]]);
    }
}
