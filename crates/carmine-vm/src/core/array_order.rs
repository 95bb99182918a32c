//! Array methods about order and arrangement: sorting, min/max, sums, rotation, random
//! shuffling and sampling, binary search, combinatorics (`combination`, `permutation`,
//! `product` …), `transpose`, `zip` and `cycle`.
//!
//! Invariants:
//! - Combinatorial iterators work on a snapshot of the receiver kept in a Ruby Array, so a
//!   block that mutates the receiver cannot free the values being yielded; each yielded
//!   combination is a fresh Array.
//! - Randomness comes from `Random` (the default generator, or the `random:` object's
//!   `rand`), whose results are range-checked like CRuby's `rb_random_ulong_limited`.

use num_bigint::BigInt;
use num_traits::{One, Zero};

use crate::core::array::{self, get, len, push, rarray, to_ary_arg, try_to_ary};
use crate::core::array_methods::check_alloc_len;
use crate::core::enumerator::{enum_for_this, SizeFn};
use crate::core::{bignum, enumerable, hash, integer, object};
use crate::interp::{Args, Block};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn to_long(ctx: &mut Ctx, v: Value) -> Result<i64> {
    integer::to_i64_arg(ctx, v)
}

// ---- sorting ----

fn sort(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    enumerable::sort_array(ctx, recv, args.block)
}

fn sort_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if len(recv) > 1 {
        let sorted = enumerable::sort_array(ctx, recv, args.block)?;
        ctx.check_frozen(recv)?;
        let v = array::to_vec(sorted);
        rarray(recv).set_items(v);
    }
    Ok(recv)
}

fn sort_by_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "sort_by!", &[], SizeFn::ArrayLen) };
    ctx.check_frozen(recv)?;
    let snapshot = array::dup(ctx, recv);
    let sorted = enumerable::sort_by_values(ctx, snapshot, &b)?;
    ctx.check_frozen(recv)?;
    let v = array::to_vec(sorted);
    rarray(recv).set_items(v);
    Ok(recv)
}

// ---- min / max / sum ----

fn min(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    enumerable::minmax_generic(ctx, recv, args, false, false)
}

fn max(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    enumerable::minmax_generic(ctx, recv, args, true, false)
}

fn minmax(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    enumerable::minmax_pair(ctx, recv, args.block)
}

fn sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let init = args.pos.first().copied().unwrap_or(Value::fixnum(0));
    let mut acc = enumerable::Summer::new(ctx, init);
    let mut i = 0;
    while i < len(recv) {
        let mut e = get(recv, i);
        if let Some(b) = args.block {
            e = ctx.yield1(&b, e)?;
        }
        acc.add(ctx, e)?;
        i += 1;
    }
    acc.finish(ctx)
}

// ---- rotation ----

fn rotate_count(cnt: i64, n: usize) -> usize {
    if n == 0 {
        0
    } else {
        cnt.rem_euclid(n as i64) as usize
    }
}

fn rotate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let cnt = match args.pos.first() {
        Some(&c) => to_long(ctx, c)?,
        None => 1,
    };
    let mut v = array::to_vec(recv);
    let k = rotate_count(cnt, v.len());
    v.rotate_left(k);
    Ok(array::from_vec(ctx, v))
}

fn rotate_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let cnt = match args.pos.first() {
        Some(&c) => to_long(ctx, c)?,
        None => 1,
    };
    ctx.check_frozen(recv)?;
    let mut items = rarray(recv).items_mut();
    let k = rotate_count(cnt, items.len());
    items.rotate_left(k);
    Ok(recv)
}

// ---- randomness ----

/// The `random:` keyword (nil for the default generator); other keywords are errors.
fn random_kw(ctx: &mut Ctx, args: &Args) -> Result<Value> {
    let Some(kw) = args.kw else { return Ok(Value::NIL) };
    let key = Value::symbol(ctx.intern("random"));
    let mut rng = Value::NIL;
    for (k, v) in hash::pairs(kw) {
        if k == key {
            rng = v;
        } else {
            let s = object::inspect_string(ctx, k)?;
            return Err(ctx.arg_error(&format!("unknown keyword: {s}")));
        }
    }
    Ok(rng)
}

/// A random index in `0...max` (`max` ≥ 1) from `rng` (nil: the default generator).
fn rand_upto(ctx: &mut Ctx, rng: Value, max: usize) -> Result<usize> {
    let lim = Value::fixnum(max as i64);
    let r = if rng.is_nil() {
        let k = ctx.c().random;
        ctx.call_str(k, "rand", &[lim])?
    } else {
        let mid = ctx.intern("rand");
        ctx.call_public(rng, mid, &[lim], None, None)?
    };
    let r = integer::to_integer_arg(ctx, r)?;
    let i = to_long(ctx, r)?;
    if i < 0 {
        return Err(ctx.range_error(&format!("random number too small {i}")));
    }
    if i as u64 >= max as u64 {
        return Err(ctx.range_error(&format!("random number too big {i}")));
    }
    Ok(i as usize)
}

fn shuffle_in_place(ctx: &mut Ctx, a: Value, rng: Value) -> Result<()> {
    let n = len(a);
    let mut i = n;
    while i > 1 {
        let j = rand_upto(ctx, rng, i)?;
        if len(a) != n {
            return Err(ctx.runtime_error("modified during shuffle"));
        }
        i -= 1;
        rarray(a).items_mut().swap(i, j);
    }
    Ok(())
}

fn shuffle_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let rng = random_kw(ctx, args)?;
    ctx.check_frozen(recv)?;
    shuffle_in_place(ctx, recv, rng)?;
    Ok(recv)
}

fn shuffle(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let rng = random_kw(ctx, args)?;
    let a = array::dup(ctx, recv);
    shuffle_in_place(ctx, a, rng)?;
    Ok(a)
}

fn sample(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let rng = random_kw(ctx, args)?;
    let n = len(recv);
    let Some(&nv) = args.pos.first() else {
        if n == 0 {
            return Ok(Value::NIL);
        }
        let i = if n == 1 { 0 } else { rand_upto(ctx, rng, n)? };
        return Ok(array::get(recv, i));
    };
    let k = to_long(ctx, nv)?;
    if k < 0 {
        return Err(ctx.arg_error("negative sample number"));
    }
    let k = (k as usize).min(n);
    let pool = array::dup(ctx, recv);
    for i in 0..k {
        let j = i + rand_upto(ctx, rng, n - i)?;
        rarray(pool).items_mut().swap(i, j);
    }
    rarray(pool).items_mut().truncate(k);
    Ok(pool)
}

// ---- binary search ----

/// `bsearch_index`: the index found by CRuby's find-minimum / find-any protocol.
fn bsearch_position(ctx: &mut Ctx, recv: Value, b: &Block) -> Result<Option<usize>> {
    let (mut low, mut high) = (0usize, len(recv));
    let mut satisfied = false;
    while low < high {
        let mid = low + (high - low) / 2;
        let v = ctx.yield1(b, get(recv, mid))?;
        let smaller;
        if let Some(i) = v.as_fixnum() {
            if i == 0 {
                return Ok(Some(mid));
            }
            smaller = i < 0;
        } else if v == Value::TRUE {
            satisfied = true;
            smaller = true;
        } else if !v.truthy() {
            smaller = false;
        } else if crate::core::numeric::is_numeric(ctx, v) {
            let zero = Value::fixnum(0);
            let r = ctx.call(v, sym::CMP, &[zero])?;
            match crate::core::comparable::cmp_result(ctx, r, v, zero)? {
                0 => return Ok(Some(mid)),
                1 => smaller = false,
                _ => smaller = true,
            }
        } else {
            let cname = object::class_name_of(ctx, v);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (must be numeric, true, false or nil)")));
        }
        if smaller {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Ok(if satisfied { Some(low) } else { None })
}

fn bsearch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "bsearch", &[], SizeFn::None) };
    Ok(match bsearch_position(ctx, recv, &b)? {
        Some(i) => get(recv, i),
        None => Value::NIL,
    })
}

fn bsearch_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "bsearch_index", &[], SizeFn::None) };
    Ok(match bsearch_position(ctx, recv, &b)? {
        Some(i) => Value::fixnum(i as i64),
        None => Value::NIL,
    })
}

// ---- combinatorics ----

fn binomial(n: i64, k: i64) -> BigInt {
    if k < 0 || k > n {
        return BigInt::zero();
    }
    let k = k.min(n - k);
    let mut r = BigInt::one();
    for i in 0..k {
        r = r * BigInt::from(n - i) / BigInt::from(i + 1);
    }
    r
}

fn descending_factorial(from: i64, k: i64) -> BigInt {
    if k < 0 || k > from {
        return BigInt::zero();
    }
    let mut r = BigInt::one();
    for i in 0..k {
        r *= BigInt::from(from - i);
    }
    r
}

fn first_arg_long(ctx: &mut Ctx, args: Value) -> Result<Option<i64>> {
    match array::get(args, 0) {
        v if v.is_nil() => Ok(None),
        v => Ok(Some(to_long(ctx, v)?)),
    }
}

fn combination_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let k = first_arg_long(ctx, args)?.unwrap_or(0);
    Ok(bignum::normalize(ctx, binomial(len(recv) as i64, k)))
}

fn permutation_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let n = len(recv) as i64;
    let k = first_arg_long(ctx, args)?.unwrap_or(n);
    Ok(bignum::normalize(ctx, descending_factorial(n, k)))
}

fn repeated_combination_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let n = len(recv) as i64;
    let k = first_arg_long(ctx, args)?.unwrap_or(0);
    let r = if k < 0 {
        BigInt::zero()
    } else if k == 0 {
        BigInt::one()
    } else {
        binomial(n + k - 1, k)
    };
    Ok(bignum::normalize(ctx, r))
}

fn repeated_permutation_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let n = len(recv) as i64;
    let k = first_arg_long(ctx, args)?.unwrap_or(0);
    if k < 0 {
        return Ok(Value::fixnum(0));
    }
    let r = num_traits::pow::pow(BigInt::from(n), k.min(u32::MAX as i64) as usize);
    Ok(bignum::normalize(ctx, r))
}

/// Yields a fresh Array of `values[idx[0]], values[idx[1]], …`.
fn yield_indexed(ctx: &mut Ctx, b: &Block, values: Value, idx: &[usize]) -> Result<()> {
    let v: Vec<Value> = idx.iter().map(|&i| get(values, i)).collect();
    let a = array::from_vec(ctx, v);
    ctx.yield1(b, a)?;
    Ok(())
}

/// Handles the `k == 0` and `k == 1` cases shared by the combinatorial methods.
fn yield_trivial(ctx: &mut Ctx, b: &Block, values: Value, k: i64) -> Result<bool> {
    match k {
        0 => {
            let a = array::new(ctx);
            ctx.yield1(b, a)?;
            Ok(true)
        }
        1 => {
            let mut i = 0;
            while i < len(values) {
                let a = array::from_slice(ctx, &[get(values, i)]);
                ctx.yield1(b, a)?;
                i += 1;
            }
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn combination(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "combination", args.pos, SizeFn::Native(combination_size)) };
    let k = to_long(ctx, args.pos[0])?;
    let n = len(recv) as i64;
    if k < 0 || k > n {
        return Ok(recv);
    }
    let values = array::dup(ctx, recv);
    if yield_trivial(ctx, &b, values, k)? {
        return Ok(recv);
    }
    let (n, k) = (n as usize, k as usize);
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        yield_indexed(ctx, &b, values, &idx)?;
        // Advance the rightmost index that can still move, then reset the ones after it.
        let mut i = k;
        loop {
            if i == 0 {
                return Ok(recv);
            }
            i -= 1;
            if idx[i] < n - k + i {
                break;
            }
        }
        idx[i] += 1;
        for j in i + 1..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

fn permutation(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "permutation", args.pos, SizeFn::Native(permutation_size)) };
    let n = len(recv) as i64;
    let r = match args.pos.first() {
        Some(&v) if !v.is_nil() => to_long(ctx, v)?,
        _ => n,
    };
    if r < 0 || r > n {
        return Ok(recv);
    }
    let values = array::dup(ctx, recv);
    if yield_trivial(ctx, &b, values, r)? {
        return Ok(recv);
    }
    let (n, r) = (n as usize, r as usize);
    // CRuby's permute0: indices in lexicographic order, `used` marks those taken.
    let mut p = vec![0usize; r];
    let mut used = vec![false; n];
    let (mut i, mut index) = (0usize, 0usize);
    loop {
        match (i..n).find(|&j| !used[j]) {
            None => {
                if index == 0 {
                    break;
                }
                index -= 1;
                i = p[index];
                used[i] = false;
                i += 1;
            }
            Some(j) => {
                p[index] = j;
                used[j] = true;
                index += 1;
                if index < r - 1 {
                    p[index] = 0;
                    i = 0;
                    continue;
                }
                for j in 0..n {
                    if used[j] {
                        continue;
                    }
                    p[index] = j;
                    yield_indexed(ctx, &b, values, &p)?;
                }
                index -= 1;
                i = p[index];
                used[i] = false;
                i += 1;
                p[index] = i;
            }
        }
    }
    Ok(recv)
}

fn repeated_combination(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "repeated_combination", args.pos, SizeFn::Native(repeated_combination_size)) };
    let r = to_long(ctx, args.pos[0])?;
    let n = len(recv);
    if r < 0 {
        return Ok(recv);
    }
    let values = array::dup(ctx, recv);
    if yield_trivial(ctx, &b, values, r)? || n == 0 {
        return Ok(recv);
    }
    let r = r as usize;
    let mut p = ctx.try_vec_filled(r, 0usize)?;
    let (mut i, mut index) = (0usize, 0usize);
    loop {
        index += 1;
        if index < r - 1 {
            p[index] = i;
            continue;
        }
        while i < n {
            p[index] = i;
            yield_indexed(ctx, &b, values, &p)?;
            i += 1;
        }
        loop {
            if index == 0 {
                return Ok(recv);
            }
            index -= 1;
            p[index] += 1;
            i = p[index];
            if i < n {
                break;
            }
        }
    }
}

fn repeated_permutation(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "repeated_permutation", args.pos, SizeFn::Native(repeated_permutation_size)) };
    let r = to_long(ctx, args.pos[0])?;
    let n = len(recv);
    if r < 0 {
        return Ok(recv);
    }
    let values = array::dup(ctx, recv);
    if yield_trivial(ctx, &b, values, r)? || n == 0 {
        return Ok(recv);
    }
    let r = r as usize;
    let mut p = ctx.try_vec_filled(r, 0usize)?;
    let mut index = 0usize;
    loop {
        index += 1;
        if index < r - 1 {
            p[index] = 0;
            continue;
        }
        for i in 0..n {
            p[index] = i;
            yield_indexed(ctx, &b, values, &p)?;
        }
        loop {
            if index == 0 {
                return Ok(recv);
            }
            index -= 1;
            p[index] += 1;
            if p[index] < n {
                break;
            }
        }
    }
}

fn product(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let arrays = array::from_slice(ctx, &[recv]);
    for &o in args.pos {
        let a = to_ary_arg(ctx, o)?;
        push(ctx, arrays, a);
    }
    let k = len(arrays);
    let result = if args.block.is_some() { Value::NIL } else { array::new(ctx) };
    let holder = array::from_slice(ctx, &[result]);
    for j in 0..k {
        if len(get(arrays, j)) == 0 {
            return Ok(if args.block.is_some() { recv } else { result });
        }
    }
    let mut total: i64 = 1;
    for j in 0..k {
        let l = len(get(arrays, j)) as i64;
        total = match total.checked_mul(l) {
            Some(t) if t <= crate::core::array_methods::ARY_MAX_SIZE => t,
            _ => return Err(ctx.range_error("too big to product")),
        };
    }
    if args.block.is_none() {
        check_alloc_len(ctx, total)?;
    }
    let mut counters = vec![0usize; k];
    loop {
        let row: Vec<Value> = (0..k).map(|j| get(get(arrays, j), counters[j])).collect();
        let sub = array::from_vec(ctx, row);
        match args.block {
            Some(b) => {
                ctx.yield1(&b, sub)?;
            }
            None => push(ctx, result, sub),
        }
        let mut m = k - 1;
        counters[m] += 1;
        while counters[m] >= len(get(arrays, m)) {
            counters[m] = 0;
            if m == 0 {
                std::hint::black_box(holder);
                return Ok(if args.block.is_some() { recv } else { result });
            }
            m -= 1;
            counters[m] += 1;
        }
    }
}

fn transpose(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let alen = len(recv);
    if alen == 0 {
        return Ok(array::new(ctx));
    }
    let mut result = Value::NIL;
    let mut elen = 0usize;
    for i in 0..alen {
        let row = to_ary_arg(ctx, get(recv, i))?;
        if result.is_nil() {
            elen = len(row);
            result = array::with_capacity(ctx, elen);
            for _ in 0..elen {
                let col = array::with_capacity(ctx, alen);
                push(ctx, result, col);
            }
        } else if len(row) != elen {
            return Err(ctx.index_error(&format!("element size differs ({} should be {elen})", len(row))));
        }
        for j in 0..elen {
            array::set(get(result, j), i, get(row, j));
        }
    }
    Ok(result)
}

/// The first `n` elements of `obj` as an Array: `to_ary` if possible, else via `each`
/// (Array#zip) or via `obj.to_enum(:each)` (Enumerable#zip).
fn take_items(ctx: &mut Ctx, obj: Value, n: usize, via_to_enum: bool) -> Result<Value> {
    if let Some(a) = try_to_ary(ctx, obj)? {
        let v = array::slice_to_vec(a, 0, n);
        return Ok(array::from_vec(ctx, v));
    }
    let not_each = |ctx: &mut Ctx| {
        let cname = object::class_name_of(ctx, obj);
        ctx.type_error(&format!("wrong argument type {cname} (must respond to :each)"))
    };
    if !ctx.respond_to(obj, sym::EACH, true) {
        return Err(not_each(ctx));
    }
    let obj = if via_to_enum {
        let each = Value::symbol(sym::EACH);
        ctx.call(obj, sym::TO_ENUM, &[each])?
    } else {
        obj
    };
    let out = array::new(ctx);
    if n == 0 {
        return Ok(out);
    }
    enumerable::each_value(ctx, obj, &mut |ctx, v| {
        push(ctx, out, v);
        Ok(len(out) < n)
    })?;
    Ok(out)
}

fn zip(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    zip_values(ctx, recv, args.pos, args.block, false)
}

/// `zip` over the elements of Array `recv` (also used by Enumerable#zip).
pub fn zip_values(ctx: &mut Ctx, recv: Value, others_in: &[Value], block: Option<Block>, via_to_enum: bool) -> Result<Value> {
    let args = Args { pos: others_in, kw: None, block };
    let n = len(recv);
    let others = array::new(ctx);
    for &o in args.pos {
        let a = take_items(ctx, o, n, via_to_enum)?;
        push(ctx, others, a);
    }
    let out = if args.block.is_some() { Value::NIL } else { array::with_capacity(ctx, n) };
    let mut i = 0;
    while i < len(recv) {
        let mut row = Vec::with_capacity(len(others) + 1);
        row.push(get(recv, i));
        for j in 0..len(others) {
            row.push(get(get(others, j), i));
        }
        let t = array::from_vec(ctx, row);
        match args.block {
            Some(b) => {
                ctx.yield1(&b, t)?;
            }
            None => push(ctx, out, t),
        }
        i += 1;
    }
    Ok(out)
}

fn cycle_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    if len(recv) == 0 {
        return Ok(Value::fixnum(0));
    }
    match first_arg_long(ctx, args)? {
        None => Ok(crate::core::float::new(ctx, f64::INFINITY)),
        Some(k) if k <= 0 => Ok(Value::fixnum(0)),
        Some(k) => {
            let r = BigInt::from(k) * BigInt::from(len(recv));
            Ok(bignum::normalize(ctx, r))
        }
    }
}

fn cycle(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "cycle", args.pos, SizeFn::Native(cycle_size)) };
    let mut times = match args.pos.first() {
        Some(&v) if !v.is_nil() => to_long(ctx, v)?,
        _ => -1,
    };
    if times == 0 {
        return Ok(Value::NIL);
    }
    while len(recv) > 0 && (times < 0 || times > 0) {
        if times > 0 {
            times -= 1;
        }
        let mut i = 0;
        while i < len(recv) {
            ctx.yield1(&b, get(recv, i))?;
            i += 1;
        }
    }
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().array;
    crate::methods!(ctx, c, [
        ("sort", sort, [0], Safe),
        ("sort!", sort_bang, [0], Unsafe),
        ("sort_by!", sort_by_bang, [0], Unsafe),
        ("min", min, [0..=1], Safe),
        ("max", max, [0..=1], Safe),
        ("minmax", minmax, [0], Safe),
        ("sum", sum, [0..=1], Safe),
        ("rotate", rotate, [0..=1], Safe),
        ("rotate!", rotate_bang, [0..=1], Unsafe),
        ("shuffle", shuffle, [0], Unsafe, Kw),
        ("shuffle!", shuffle_bang, [0], Unsafe, Kw),
        ("sample", sample, [0..=1], Unsafe, Kw),
        ("bsearch", bsearch, [0], Safe),
        ("bsearch_index", bsearch_index, [0], Safe),
        ("combination", combination, [1], Safe),
        ("permutation", permutation, [0..=1], Safe),
        ("repeated_combination", repeated_combination, [1], Safe),
        ("repeated_permutation", repeated_permutation, [1], Safe),
        ("product", product, [0..], Safe),
        ("transpose", transpose, [0], Safe),
        ("zip", zip, [0..], Safe),
        ("cycle", cycle, [0..=1], Safe),
        ("pack", crate::core::pack::array_pack, [1], Safe, Kw),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials_and_factorials() {
        assert_eq!(binomial(5, 2), BigInt::from(10));
        assert_eq!(binomial(5, 6), BigInt::zero());
        assert_eq!(binomial(5, -1), BigInt::zero());
        assert_eq!(binomial(0, 0), BigInt::one());
        assert_eq!(descending_factorial(5, 2), BigInt::from(20));
        assert_eq!(descending_factorial(4, 4), BigInt::from(24));
        assert_eq!(descending_factorial(3, 4), BigInt::zero());
    }

    #[test]
    fn rotation_counts() {
        assert_eq!(rotate_count(1, 3), 1);
        assert_eq!(rotate_count(-1, 3), 2);
        assert_eq!(rotate_count(7, 3), 1);
        assert_eq!(rotate_count(5, 0), 0);
    }
}
