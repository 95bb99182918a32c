//! Enumerable: everything built on `each`.
//!
//! Invariants:
//! - Elements are collected into Ruby Arrays (never only into Rust vectors) while Ruby
//!   code may run, so the collector sees them.
//! - `each_value` packs multiple yielded values into one Array, like CRuby's
//!   `enum_yield`; early exit uses a private `throw` tag.

use crate::core::{array, comparable, hash, object, proc as rproc};
use crate::error::Unwind;
use crate::interp::{Args, Block};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Packs the values given to a block into one (CRuby's `rb_enum_values_pack`).
pub fn pack(ctx: &mut Ctx, args: &[Value]) -> Value {
    match args.len() {
        0 => Value::NIL,
        1 => args[0],
        _ => array::from_slice(ctx, args),
    }
}

/// Iterates `recv.each`, calling `f` with each (packed) element; `f` returns false to stop.
pub fn each_value(ctx: &mut Ctx, recv: Value, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    each_value_with(ctx, recv, sym::EACH, &[], f)
}

/// Like `each_value` over `recv.meth(*args)`.
pub fn each_value_with(ctx: &mut Ctx, recv: Value, meth: crate::symbol::SymId, margs: &[Value], f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    if meth == sym::EACH && margs.is_empty() && array::is_plain_array(recv) && !ctx.vm_redefined(crate::interp::ops::REDEF_ARRAY) {
        let mut i = 0;
        while i < array::len(recv) {
            if !f(ctx, array::get(recv, i))? {
                return Ok(());
            }
            i += 1;
        }
        return Ok(());
    }
    let tag = object::new_object(ctx, Value::NIL);
    let r = rproc::with_native_block(
        ctx,
        &mut |ctx, args| {
            let v = pack(ctx, args);
            if f(ctx, v)? {
                Ok(Value::NIL)
            } else {
                Err(Unwind::Throw { tag, value: Value::NIL })
            }
        },
        |ctx, blk| ctx.call_with_block(recv, meth, margs, Some(blk)),
    );
    std::hint::black_box(tag);
    match r {
        Ok(_) => Ok(()),
        Err(Unwind::Throw { tag: t, .. }) if t == tag => Ok(()),
        Err(e) => Err(e),
    }
}

/// All elements as a new Array.
pub fn to_array(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn yield_packed(ctx: &mut Ctx, b: &Block, v: Value) -> Result<Value> {
    ctx.yield1(b, v)
}

/// Calls an Enumerable method by name on an object whose class overrides it.
pub fn call_enumerable(ctx: &mut Ctx, recv: Value, name: &str, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    let mid = ctx.intern(name);
    match crate::core::module::body(e).methods.get(&mid).cloned() {
        Some(me) => crate::interp::call::invoke_from_rust(ctx, recv, &me, args.pos, args.kw, args.block),
        None => Err(ctx.not_implemented(&format!("Enumerable#{name}"))),
    }
}

fn e_to_a(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    each_value_with(ctx, recv, sym::EACH, args.pos, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn e_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "map", &[], None) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let r = yield_packed(ctx, &b, v)?;
        array::push(ctx, out, r);
        Ok(true)
    })?;
    Ok(out)
}

fn e_flat_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "flat_map", &[], None) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let r = yield_packed(ctx, &b, v)?;
        match array::try_to_ary(ctx, r)? {
            Some(a) => {
                for x in array::to_vec(a) {
                    array::push(ctx, out, x);
                }
            }
            None => array::push(ctx, out, r),
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "select", &[], None) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if yield_packed(ctx, &b, v)?.truthy() {
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_filter_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "filter_map", &[], None) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let r = yield_packed(ctx, &b, v)?;
        if r.truthy() {
            array::push(ctx, out, r);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_reject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "reject", &[], None) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if !yield_packed(ctx, &b, v)?.truthy() {
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_find(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "find", args.pos, None) };
    let mut found = None;
    each_value(ctx, recv, &mut |ctx, v| {
        if yield_packed(ctx, &b, v)?.truthy() {
            found = Some(v);
            return Ok(false);
        }
        Ok(true)
    })?;
    match found {
        Some(v) => Ok(v),
        None => match args.pos.first() {
            Some(&ifnone) if !ifnone.is_nil() => ctx.call(ifnone, sym::CALL, &[]),
            _ => Ok(Value::NIL),
        },
    }
}

fn e_find_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let target = args.pos.first().copied();
    if target.is_none() && args.block.is_none() {
        return crate::core::enumerator::enum_for(ctx, recv, "find_index", &[], None);
    }
    let mut idx = 0i64;
    let mut found = None;
    each_value(ctx, recv, &mut |ctx, v| {
        let hit = match target {
            Some(t) => object::equal(ctx, v, t)?,
            None => yield_packed(ctx, args.block.as_ref().expect("block"), v)?.truthy(),
        };
        if hit {
            found = Some(idx);
            return Ok(false);
        }
        idx += 1;
        Ok(true)
    })?;
    Ok(found.map_or(Value::NIL, Value::fixnum))
}

fn e_include(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = args.pos[0];
    let mut found = false;
    each_value(ctx, recv, &mut |ctx, v| {
        if object::equal(ctx, v, x)? {
            found = true;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(Value::bool(found))
}

fn e_inject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (mut acc, op) = match (args.pos.len(), args.block) {
        (0, Some(_)) => (Value::UNDEF, None),
        (1, Some(_)) => (args.pos[0], None),
        (1, None) => (Value::UNDEF, Some(crate::core::symbol::to_sym_id(ctx, args.pos[0])?)),
        (2, _) => (args.pos[0], Some(crate::core::symbol::to_sym_id(ctx, args.pos[1])?)),
        (0, None) => return Err(ctx.local_jump_error("no block given", sym::EMPTY, Value::NIL)),
        _ => return Err(ctx.arity_error(args.pos.len(), 0, Some(2))),
    };
    let keep = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if acc.is_undef() {
            acc = v;
        } else {
            acc = match op {
                Some(mid) => {
                    if mid == sym::PLUS {
                        if let (Some(_), Some(_)) = (acc.as_fixnum(), v.as_fixnum()) {
                            crate::core::integer::add(ctx, acc, v)?
                        } else {
                            crate::interp::call::call_method(ctx, acc, mid, &[v], None, None, false)?
                        }
                    } else {
                        crate::interp::call::call_method(ctx, acc, mid, &[v], None, None, false)?
                    }
                }
                None => ctx.yield_block(args.block.as_ref().expect("block"), &[acc, v])?,
            };
        }
        array::set(keep, 0, acc);
        Ok(true)
    })?;
    Ok(if acc.is_undef() { Value::NIL } else { acc })
}

/// `sum` with Kahan-Babuska compensation for floats, as CRuby does.
pub fn sum_impl(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut acc = args.pos.first().copied().unwrap_or(Value::fixnum(0));
    let mut fsum: Option<(f64, f64)> = None;
    let keep = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let v = match args.block {
            Some(b) => yield_packed(ctx, &b, v)?,
            None => v,
        };
        if let Some((s, c)) = fsum.as_mut() {
            if crate::core::float::is_float(v) || v.is_fixnum() {
                let x = if v.is_fixnum() { v.fixnum_unchecked() as f64 } else { crate::core::float::get(v) };
                let t = *s + x;
                if s.abs() >= x.abs() {
                    *c += (*s - t) + x;
                } else {
                    *c += (x - t) + *s;
                }
                *s = t;
                return Ok(true);
            }
            let f = crate::core::float::new(ctx, *s + *c);
            acc = f;
            fsum = None;
        }
        if crate::core::float::is_float(v) && (acc.is_fixnum() || crate::core::float::is_float(acc)) {
            let a = if acc.is_fixnum() { acc.fixnum_unchecked() as f64 } else { crate::core::float::get(acc) };
            fsum = Some((a, 0.0));
            let (s, c) = fsum.as_mut().expect("float sum");
            let x = crate::core::float::get(v);
            let t = *s + x;
            if s.abs() >= x.abs() {
                *c += (*s - t) + x;
            } else {
                *c += (x - t) + *s;
            }
            *s = t;
            return Ok(true);
        }
        acc = if acc.is_fixnum() && v.is_fixnum() { crate::core::integer::add(ctx, acc, v)? } else { ctx.call(acc, sym::PLUS, &[v])? };
        array::set(keep, 0, acc);
        Ok(true)
    })?;
    if let Some((s, c)) = fsum {
        let total = s + c;
        let total = if total.is_nan() && s.is_infinite() { s } else { total };
        return Ok(crate::core::float::new(ctx, total));
    }
    Ok(acc)
}

fn e_sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    sum_impl(ctx, recv, args)
}

pub fn count_impl(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut n = 0i64;
    let target = args.pos.first().copied();
    each_value(ctx, recv, &mut |ctx, v| {
        let hit = match (target, args.block) {
            (Some(t), _) => object::equal(ctx, v, t)?,
            (None, Some(b)) => yield_packed(ctx, &b, v)?.truthy(),
            (None, None) => true,
        };
        if hit {
            n += 1;
        }
        Ok(true)
    })?;
    Ok(Value::fixnum(n))
}

fn e_count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    count_impl(ctx, recv, args)
}

fn e_first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.pos.first() {
        None => {
            let mut first = Value::NIL;
            each_value(ctx, recv, &mut |_ctx, v| {
                first = v;
                Ok(false)
            })?;
            Ok(first)
        }
        Some(&n) => {
            let n = crate::core::integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error("attempt to take negative size"));
            }
            let out = array::new(ctx);
            if n == 0 {
                return Ok(out);
            }
            each_value(ctx, recv, &mut |ctx, v| {
                array::push(ctx, out, v);
                Ok((array::len(out) as i64) < n)
            })?;
            Ok(out)
        }
    }
}

fn e_take_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "take_while", &[], None) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if !yield_packed(ctx, &b, v)?.truthy() {
            return Ok(false);
        }
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn e_drop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to drop negative size"));
    }
    let out = array::new(ctx);
    let mut i = 0;
    each_value(ctx, recv, &mut |ctx, v| {
        if i >= n {
            array::push(ctx, out, v);
        }
        i += 1;
        Ok(true)
    })?;
    Ok(out)
}

fn e_drop_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "drop_while", &[], None) };
    let out = array::new(ctx);
    let mut dropping = true;
    each_value(ctx, recv, &mut |ctx, v| {
        if dropping && yield_packed(ctx, &b, v)?.truthy() {
            return Ok(true);
        }
        dropping = false;
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

/// `all?`/`any?`/`none?`/`one?`: pattern, block, or truthiness.
fn quantifier(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    let pattern = args.pos.first().copied();
    let mut hits = 0usize;
    let mut result = match kind {
        b'a' | b'n' => true,
        _ => false,
    };
    each_value(ctx, recv, &mut |ctx, v| {
        let t = match (pattern, args.block) {
            (Some(p), _) => crate::interp::ops::case_eq(ctx, p, v)?,
            (None, Some(b)) => yield_packed(ctx, &b, v)?.truthy(),
            (None, None) => v.truthy(),
        };
        match kind {
            b'a' if !t => {
                result = false;
                return Ok(false);
            }
            b'y' if t => {
                result = true;
                return Ok(false);
            }
            b'n' if t => {
                result = false;
                return Ok(false);
            }
            b'o' if t => {
                hits += 1;
                if hits > 1 {
                    result = false;
                    return Ok(false);
                }
                result = true;
            }
            _ => {}
        }
        Ok(true)
    })?;
    Ok(Value::bool(result))
}

fn e_all(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'a')
}
fn e_any(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'y')
}
fn e_none(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'n')
}
fn e_one(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    quantifier(ctx, recv, args, b'o')
}

/// Stable merge sort with a fallible comparator. The caller keeps the values reachable.
pub fn sort_values(ctx: &mut Ctx, v: &mut Vec<Value>, cmp: &mut dyn FnMut(&mut Ctx, Value, Value) -> Result<i64>) -> Result<()> {
    let n = v.len();
    if n < 2 {
        return Ok(());
    }
    // Insertion sort for short runs, then bottom-up merging.
    const RUN: usize = 16;
    let mut i = 0;
    while i < n {
        let end = (i + RUN).min(n);
        for j in i + 1..end {
            let mut k = j;
            while k > i && cmp(ctx, v[k - 1], v[k])? > 0 {
                v.swap(k - 1, k);
                k -= 1;
            }
        }
        i = end;
    }
    let mut width = RUN;
    let mut buf = v.clone();
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut a, mut b, mut k) = (lo, mid, lo);
            while a < mid && b < hi {
                if cmp(ctx, v[a], v[b])? <= 0 {
                    buf[k] = v[a];
                    a += 1;
                } else {
                    buf[k] = v[b];
                    b += 1;
                }
                k += 1;
            }
            while a < mid {
                buf[k] = v[a];
                a += 1;
                k += 1;
            }
            while b < hi {
                buf[k] = v[b];
                b += 1;
                k += 1;
            }
            lo = hi;
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    Ok(())
}

/// Sorts an Array's elements into a new Array (with an optional comparison block).
pub fn sort_array(ctx: &mut Ctx, src: Value, block: Option<Block>) -> Result<Value> {
    let keep = array::dup(ctx, src);
    let mut items = array::to_vec(keep);
    sort_values(ctx, &mut items, &mut |ctx, a, b| match block {
        Some(blk) => {
            let r = ctx.yield_block(&blk, &[a, b])?;
            comparable::cmp_result(ctx, r, a, b)
        }
        None => comparable::compare(ctx, a, b),
    })?;
    array::rarray(keep).items = items;
    Ok(keep)
}

fn e_sort(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = to_array(ctx, recv)?;
    sort_array(ctx, a, args.block)
}

/// Sorts `items` by keys computed with `key` (keys kept in a Ruby array while sorting).
pub fn sort_by_values(ctx: &mut Ctx, items: Value, block: &Block) -> Result<Value> {
    let n = array::len(items);
    let keys = array::with_capacity(ctx, n);
    for i in 0..n {
        let k = ctx.yield1(block, array::get(items, i))?;
        array::push(ctx, keys, k);
    }
    let mut idx: Vec<Value> = (0..n as i64).map(Value::fixnum).collect();
    sort_values(ctx, &mut idx, &mut |ctx, a, b| {
        let ka = array::get(keys, a.fixnum_unchecked() as usize);
        let kb = array::get(keys, b.fixnum_unchecked() as usize);
        comparable::compare(ctx, ka, kb)
    })?;
    let out: Vec<Value> = idx.iter().map(|i| array::get(items, i.fixnum_unchecked() as usize)).collect();
    Ok(array::from_vec(ctx, out))
}

fn e_sort_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "sort_by", &[], None) };
    let items = to_array(ctx, recv)?;
    sort_by_values(ctx, items, &b)
}

fn minmax_generic(ctx: &mut Ctx, recv: Value, args: &Args, want_max: bool, by: bool) -> Result<Value> {
    if by && args.block.is_none() {
        let name = if want_max { "max_by" } else { "min_by" };
        return crate::core::enumerator::enum_for(ctx, recv, name, args.pos, None);
    }
    if let Some(&n) = args.pos.first() {
        let items = to_array(ctx, recv)?;
        let sorted = if by {
            sort_by_values(ctx, items, args.block.as_ref().expect("block"))?
        } else {
            sort_array(ctx, items, args.block)?
        };
        let n = crate::core::integer::to_i64_arg(ctx, n)?;
        if n < 0 {
            return Err(ctx.arg_error(&format!("negative size ({n})")));
        }
        let mut v = array::to_vec(sorted);
        if want_max {
            v.reverse();
        }
        v.truncate(n as usize);
        return Ok(array::from_vec(ctx, v));
    }
    let mut best = Value::UNDEF;
    let mut best_key = Value::UNDEF;
    let keep = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let key = if by { yield_packed(ctx, args.block.as_ref().expect("block"), v)? } else { v };
        if best.is_undef() {
            best = v;
            best_key = key;
        } else {
            let c = if !by && args.block.is_some() {
                let r = ctx.yield_block(args.block.as_ref().expect("block"), &[key, best_key])?;
                comparable::cmp_result(ctx, r, key, best_key)?
            } else {
                comparable::compare(ctx, key, best_key)?
            };
            if (want_max && c > 0) || (!want_max && c < 0) {
                best = v;
                best_key = key;
            }
        }
        array::set(keep, 0, best);
        array::set(keep, 1, best_key);
        Ok(true)
    })?;
    Ok(if best.is_undef() { Value::NIL } else { best })
}

fn e_min(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, false, false)
}
fn e_max(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, true, false)
}
fn e_min_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, false, true)
}
fn e_max_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, true, true)
}

fn e_minmax(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let lo = minmax_generic(ctx, recv, args, false, false)?;
    let hi = minmax_generic(ctx, recv, args, true, false)?;
    Ok(array::from_slice(ctx, &[lo, hi]))
}

fn e_group_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "group_by", &[], None) };
    let h = hash::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let k = yield_packed(ctx, &b, v)?;
        match hash::lookup(ctx, h, k)? {
            Some(list) => array::push(ctx, list, v),
            None => {
                let list = array::from_slice(ctx, &[v]);
                hash::aset(ctx, h, k, list)?;
            }
        }
        Ok(true)
    })?;
    Ok(h)
}

fn e_partition(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "partition", &[], None) };
    let yes = array::new(ctx);
    let no = array::new(ctx);
    let pair = array::from_slice(ctx, &[yes, no]);
    each_value(ctx, recv, &mut |ctx, v| {
        if yield_packed(ctx, &b, v)?.truthy() {
            array::push(ctx, yes, v);
        } else {
            array::push(ctx, no, v);
        }
        Ok(true)
    })?;
    Ok(pair)
}

fn e_each_with_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "each_with_index", args.pos, None) };
    let mut i = 0i64;
    let m = sym::EACH;
    each_value_with(ctx, recv, m, args.pos, &mut |ctx, v| {
        ctx.yield_block(&b, &[v, Value::fixnum(i)])?;
        i += 1;
        Ok(true)
    })?;
    Ok(recv)
}

fn e_each_with_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let memo = args.pos[0];
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "each_with_object", args.pos, None) };
    each_value(ctx, recv, &mut |ctx, v| {
        ctx.yield_block(&b, &[v, memo])?;
        Ok(true)
    })?;
    Ok(memo)
}

fn e_each_slice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if n <= 0 {
        return Err(ctx.arg_error("invalid slice size"));
    }
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "each_slice", args.pos, None) };
    let mut cur = array::new(ctx);
    let holder = array::from_slice(ctx, &[cur]);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, cur, v);
        if array::len(cur) as i64 == n {
            let full = cur;
            cur = array::new(ctx);
            array::set(holder, 0, cur);
            ctx.yield1(&b, full)?;
        }
        Ok(true)
    })?;
    if array::len(cur) > 0 {
        ctx.yield1(&b, cur)?;
    }
    Ok(recv)
}

fn e_each_cons(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if n <= 0 {
        return Err(ctx.arg_error("invalid size"));
    }
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "each_cons", args.pos, None) };
    let window = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, window, v);
        if array::len(window) as i64 > n {
            array::rarray(window).items.remove(0);
        }
        if array::len(window) as i64 == n {
            let w = array::dup(ctx, window);
            ctx.yield1(&b, w)?;
        }
        Ok(true)
    })?;
    Ok(recv)
}

fn e_zip(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut others = Vec::new();
    for &o in args.pos {
        let a = match array::try_to_ary(ctx, o)? {
            Some(a) => a,
            None => {
                if !ctx.respond_to(o, sym::EACH, true) {
                    let cname = object::class_name_of(ctx, o);
                    return Err(ctx.type_error(&format!("wrong argument type {cname} (must respond to :each)")));
                }
                to_array(ctx, o)?
            }
        };
        others.push(a);
    }
    let others_arr = array::from_slice(ctx, &others);
    let out = array::new(ctx);
    let mut i = 0;
    each_value(ctx, recv, &mut |ctx, v| {
        let mut row = vec![v];
        for k in 0..array::len(others_arr) {
            row.push(array::get(array::get(others_arr, k), i));
        }
        let r = array::from_vec(ctx, row);
        array::push(ctx, out, r);
        i += 1;
        Ok(true)
    })?;
    if let Some(b) = args.block {
        for k in 0..array::len(out) {
            ctx.yield1(&b, array::get(out, k))?;
        }
        return Ok(Value::NIL);
    }
    Ok(out)
}

fn e_tally(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = hash::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let n = hash::lookup(ctx, h, v)?.and_then(|x| x.as_fixnum()).unwrap_or(0);
        hash::aset(ctx, h, v, Value::fixnum(n + 1))?;
        Ok(true)
    })?;
    Ok(h)
}

fn e_uniq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let seen = hash::new(ctx);
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let k = match args.block {
            Some(b) => yield_packed(ctx, &b, v)?,
            None => v,
        };
        if hash::lookup(ctx, seen, k)?.is_none() {
            hash::aset(ctx, seen, k, Value::TRUE)?;
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_to_h(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = hash::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let pair = match args.block {
            Some(b) => yield_packed(ctx, &b, v)?,
            None => v,
        };
        let Some(p) = array::try_to_ary(ctx, pair)? else {
            let cname = object::class_name_of(ctx, pair);
            return Err(ctx.type_error(&format!("wrong element type {cname} (expected array)")));
        };
        if array::len(p) != 2 {
            return Err(ctx.arg_error(&format!("element has wrong array length (expected 2, was {})", array::len(p))));
        }
        hash::aset(ctx, h, array::get(p, 0), array::get(p, 1))?;
        Ok(true)
    })?;
    Ok(h)
}

fn e_reverse_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "reverse_each", &[], None) };
    let items = to_array(ctx, recv)?;
    let mut i = array::len(items);
    while i > 0 {
        i -= 1;
        ctx.yield1(&b, array::get(items, i))?;
    }
    Ok(recv)
}

fn e_each_entry(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "each_entry", args.pos, None) };
    each_value_with(ctx, recv, sym::EACH, args.pos, &mut |ctx, v| {
        ctx.yield1(&b, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn e_cycle(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return crate::core::enumerator::enum_for(ctx, recv, "cycle", args.pos, None) };
    let times = match args.pos.first() {
        Some(&n) if !n.is_nil() => Some(crate::core::integer::to_i64_arg(ctx, n)?),
        _ => None,
    };
    let items = to_array(ctx, recv)?;
    if array::len(items) == 0 {
        return Ok(Value::NIL);
    }
    let mut round = 0;
    loop {
        if let Some(t) = times {
            if round >= t {
                break;
            }
        }
        for i in 0..array::len(items) {
            ctx.yield1(&b, array::get(items, i))?;
        }
        round += 1;
    }
    Ok(Value::NIL)
}

fn e_lazy(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::enumerator::lazy_new(ctx, recv)
}

fn e_chunk_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    let items = to_array(ctx, recv)?;
    let out = array::new(ctx);
    let n = array::len(items);
    if n == 0 {
        return crate::core::enumerator::enum_for(ctx, out, "each", &[], None);
    }
    let mut cur = array::from_slice(ctx, &[array::get(items, 0)]);
    array::push(ctx, out, cur);
    for i in 1..n {
        let (prev, x) = (array::get(items, i - 1), array::get(items, i));
        if ctx.yield_block(&b, &[prev, x])?.truthy() {
            array::push(ctx, cur, x);
        } else {
            cur = array::from_slice(ctx, &[x]);
            array::push(ctx, out, cur);
        }
    }
    crate::core::enumerator::enum_for(ctx, out, "each", &[], None)
}

fn e_slice_when(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    let items = to_array(ctx, recv)?;
    let out = array::new(ctx);
    let n = array::len(items);
    if n == 0 {
        return crate::core::enumerator::enum_for(ctx, out, "each", &[], None);
    }
    let mut cur = array::from_slice(ctx, &[array::get(items, 0)]);
    array::push(ctx, out, cur);
    for i in 1..n {
        let (prev, x) = (array::get(items, i - 1), array::get(items, i));
        if !ctx.yield_block(&b, &[prev, x])?.truthy() {
            array::push(ctx, cur, x);
        } else {
            cur = array::from_slice(ctx, &[x]);
            array::push(ctx, out, cur);
        }
    }
    crate::core::enumerator::enum_for(ctx, out, "each", &[], None)
}

impl Ctx {
    /// Whether a core class's operator fast paths were disabled by a redefinition.
    pub fn vm_redefined(&self, bit: u32) -> bool {
        self.vm().redefined.load(std::sync::atomic::Ordering::Relaxed) & bit != 0
    }
}

pub fn init(ctx: &mut Ctx) {
    let e = ctx.c().enumerable;
    crate::methods!(ctx, e, [
        ("to_a", e_to_a, [0..], Safe),
        ("entries", e_to_a, [0..], Safe),
        ("map", e_map, [0], Safe),
        ("collect", e_map, [0], Safe),
        ("flat_map", e_flat_map, [0], Safe),
        ("collect_concat", e_flat_map, [0], Safe),
        ("select", e_select, [0], Safe),
        ("filter", e_select, [0], Safe),
        ("find_all", e_select, [0], Safe),
        ("filter_map", e_filter_map, [0], Safe),
        ("reject", e_reject, [0], Safe),
        ("find", e_find, [0..=1], Safe),
        ("detect", e_find, [0..=1], Safe),
        ("find_index", e_find_index, [0..=1], Safe),
        ("include?", e_include, [1], Safe),
        ("member?", e_include, [1], Safe),
        ("inject", e_inject, [0..=2], Safe),
        ("reduce", e_inject, [0..=2], Safe),
        ("sum", e_sum, [0..=1], Safe),
        ("count", e_count, [0..=1], Safe),
        ("first", e_first, [0..=1], Safe),
        ("take", e_first, [1], Safe),
        ("take_while", e_take_while, [0], Safe),
        ("drop", e_drop, [1], Safe),
        ("drop_while", e_drop_while, [0], Safe),
        ("all?", e_all, [0..=1], Safe),
        ("any?", e_any, [0..=1], Safe),
        ("none?", e_none, [0..=1], Safe),
        ("one?", e_one, [0..=1], Safe),
        ("sort", e_sort, [0], Safe),
        ("sort_by", e_sort_by, [0], Safe),
        ("min", e_min, [0..=1], Safe),
        ("max", e_max, [0..=1], Safe),
        ("min_by", e_min_by, [0..=1], Safe),
        ("max_by", e_max_by, [0..=1], Safe),
        ("minmax", e_minmax, [0], Safe),
        ("group_by", e_group_by, [0], Safe),
        ("partition", e_partition, [0], Safe),
        ("each_with_index", e_each_with_index, [0..], Safe),
        ("each_with_object", e_each_with_object, [1], Safe),
        ("each_slice", e_each_slice, [1], Safe),
        ("each_cons", e_each_cons, [1], Safe),
        ("zip", e_zip, [0..], Safe),
        ("tally", e_tally, [0..=1], Safe),
        ("uniq", e_uniq, [0], Safe),
        ("to_h", e_to_h, [0..], Safe),
        ("reverse_each", e_reverse_each, [0], Safe),
        ("each_entry", e_each_entry, [0..], Safe),
        ("cycle", e_cycle, [0..=1], Safe),
        ("lazy", e_lazy, [0], Safe),
        ("chunk_while", e_chunk_while, [0], Safe),
        ("slice_when", e_slice_when, [0], Safe),
    ]);
}
