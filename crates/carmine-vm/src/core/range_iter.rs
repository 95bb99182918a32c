//! Range iteration: `each`, `reverse_each`, `step`/`%` and `bsearch` (Ruby 3.4 semantics).
//!
//! Invariants:
//! - Integer ranges count with an i64 while values are Fixnums and continue with
//!   Integers past that, so no overflow is possible; endless ranges never stop by
//!   themselves (the block breaks out).
//! - String and Symbol ranges go through `String#upto` semantics
//!   (`string::upto_each`); other discrete values through `succ` and `<=>`
//!   (`range::r_less`, where an incomparable pair stops the iteration).
//! - `step` with a numeric range and step returns an ArithmeticSequence
//!   (`arith_seq.rs`); non-numeric ranges step with `+` (Ruby 3.4), except String and
//!   Symbol ranges with an Integer step, which keep the `succ` counting.

use num_bigint::BigInt;

use crate::core::enumerator::{self, SizeFn};
use crate::core::range::{begin, cant_iterate_from, discrete_object, end, excl, r_less};
use crate::core::{arith_seq, array, bignum, float, integer, module, numeric, object, string};
use crate::interp::{Args, Block};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Whether `Range#each` is still the builtin (CRuby's `rb_method_basic_definition_p`), so
/// methods may compute elements instead of calling `each`.
pub fn each_is_builtin(ctx: &mut Ctx, _r: Value) -> bool {
    let k = ctx.c().range;
    match module::find_method(ctx, k, sym::EACH) {
        Some(me) => matches!(me.body, module::MethodBody::Builtin { f, .. } if f as usize == m_each as *const () as usize),
        None => false,
    }
}

/// Counts from `i` upwards while the values are Fixnums, then continues with Integers;
/// `last` (inclusive) bounds it when given. `f` returns false to stop.
fn each_integer(ctx: &mut Ctx, from: Value, last: Option<Value>, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let mut cur = from;
    if let Some(mut i) = from.as_fixnum() {
        let lim = last.and_then(|l| if bignum::is_bignum(l) { None } else { l.as_fixnum() });
        let below = last.is_some_and(|l| bignum::is_bignum(l) && num_traits::Signed::is_negative(bignum::get(l)));
        if below {
            return Ok(());
        }
        loop {
            if lim.is_some_and(|l| i > l) {
                return Ok(());
            }
            if !f(ctx, Value::fixnum(i))? {
                return Ok(());
            }
            match i.checked_add(1) {
                Some(n) if Value::fits_fixnum(n) => i = n,
                _ => break,
            }
        }
        cur = integer::add(ctx, Value::fixnum(i), Value::fixnum(1))?;
    }
    loop {
        if let Some(l) = last {
            if integer::cmp_values(ctx, cur, l)? == Some(std::cmp::Ordering::Greater) {
                return Ok(());
            }
        }
        if !f(ctx, cur)? {
            return Ok(());
        }
        cur = integer::add(ctx, cur, Value::fixnum(1))?;
    }
}

/// Runs `f` over the range's elements as `Range#each` yields them (CRuby's `range_each`);
/// `f` returns false to stop.
pub fn each_value(ctx: &mut Ctx, r: Value, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let (b, e, x) = (begin(r), end(r), excl(r));
    if integer::is_integer(b) && (e.is_nil() || integer::is_integer(e)) {
        let last = if e.is_nil() {
            None
        } else if x {
            Some(integer::sub(ctx, e, Value::fixnum(1))?)
        } else {
            Some(e)
        };
        return each_integer(ctx, b, last, f);
    }
    if b.is_symbol() && (e.is_nil() || e.is_symbol()) {
        let bs = crate::core::symbol::to_string(ctx, b);
        let mut each_sym = |ctx: &mut Ctx, s: Value| -> Result<bool> {
            let sy = string::intern(ctx, s);
            f(ctx, sy)
        };
        if e.is_nil() {
            return upto_endless(ctx, bs, &mut each_sym);
        }
        let es = crate::core::symbol::to_string(ctx, e);
        return string::upto_each(ctx, bs, es, x, &mut each_sym);
    }
    if let Some(s) = string::try_to_str(ctx, b)? {
        if e.is_nil() {
            return upto_endless(ctx, s, f);
        }
        return string::upto_each(ctx, s, e, x, f);
    }
    if !discrete_object(ctx, b) {
        return Err(cant_iterate_from(ctx, b));
    }
    if e.is_nil() {
        let mut v = b;
        loop {
            if !f(ctx, v)? {
                return Ok(());
            }
            v = ctx.call(v, sym::SUCC, &[])?;
        }
    }
    each_by_succ(ctx, b, e, x, f)
}

/// CRuby's `range_each_func`: `succ` from `b` while `<=>` says the value is before `e`.
fn each_by_succ(ctx: &mut Ctx, b: Value, e: Value, x: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let mut v = b;
    loop {
        let c = r_less(ctx, v, e)?;
        if c == i64::MAX || c > 0 || (x && c == 0) {
            return Ok(());
        }
        if !f(ctx, v)? || c == 0 {
            return Ok(());
        }
        v = ctx.call(v, sym::SUCC, &[])?;
    }
}

/// CRuby's `rb_str_upto_endless_each`: `s`, `s.succ`, … forever.
fn upto_endless(ctx: &mut Ctx, s: Value, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let mut cur = string::new_like(ctx, s, string::bytes(s).to_vec());
    loop {
        let next = ctx.call(cur, sym::SUCC, &[])?;
        if !f(ctx, cur)? {
            return Ok(());
        }
        cur = next;
    }
}

pub(crate) fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        return enumerator::enum_for_sized(ctx, recv, "each", &[], SizeFn::RangeSize);
    };
    each_value(ctx, recv, &mut |ctx, v| {
        ctx.yield1(&blk, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

// ---- reverse_each ----

/// Size of `reverse_each`'s enumerator (Ruby 3.4's `range_enum_reverse_size`).
fn reverse_size(ctx: &mut Ctx, r: Value, _args: Value) -> Result<Value> {
    let (b, e) = (begin(r), end(r));
    if e.is_nil() {
        return Err(cant_iterate_from(ctx, e));
    }
    if integer::is_integer(b) {
        if numeric::is_numeric(ctx, e) {
            return numeric::interval_step_size(ctx, b, e, Value::fixnum(1), excl(r));
        }
        return Err(cant_iterate_from(ctx, e));
    }
    if b.is_nil() {
        if integer::is_integer(e) {
            return Ok(float::new(ctx, f64::INFINITY));
        }
        return Err(cant_iterate_from(ctx, e));
    }
    if !discrete_object(ctx, b) {
        return Err(cant_iterate_from(ctx, e));
    }
    Ok(Value::NIL)
}

/// `reverse_each` (Ruby 3.3): Integer ranges count down from the end, beginless ones
/// forever; other ranges use Enumerable#reverse_each.
fn m_reverse_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        return enumerator::enum_for_sized(ctx, recv, "reverse_each", &[], SizeFn::Native(reverse_size));
    };
    let (b, e) = (begin(recv), end(recv));
    if e.is_nil() {
        return Err(cant_iterate_from(ctx, e));
    }
    if (b.is_nil() || integer::is_integer(b)) && integer::is_integer(e) {
        let mut cur = if excl(recv) { integer::sub(ctx, e, Value::fixnum(1))? } else { e };
        loop {
            if !b.is_nil() && integer::cmp_values(ctx, cur, b)? == Some(std::cmp::Ordering::Less) {
                return Ok(recv);
            }
            ctx.yield1(&blk, cur)?;
            cur = integer::sub(ctx, cur, Value::fixnum(1))?;
        }
    }
    crate::core::enumerable::call_enumerable(ctx, recv, "reverse_each", args)
}

// ---- step ----

/// Size of a non-arithmetic `step` enumerator: counted only for numeric ranges.
fn step_size(ctx: &mut Ctx, r: Value, args: Value) -> Result<Value> {
    let step = if array::len(args) > 0 { array::get(args, 0) } else { Value::fixnum(1) };
    let (b, e) = (begin(r), end(r));
    if numeric::is_numeric(ctx, b) && numeric::is_numeric(ctx, e) && numeric::is_numeric(ctx, step) {
        return numeric::interval_step_size(ctx, b, e, step, excl(r));
    }
    Ok(Value::NIL)
}

fn m_step(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    step(ctx, recv, args.pos.first().copied(), "step", args.block)
}

fn m_percent(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    step(ctx, recv, Some(args.pos[0]), "%", args.block)
}

/// `step(n = 1)` / `% n` (CRuby 3.4's `range_step`).
fn step(ctx: &mut Ctx, r: Value, step_arg: Option<Value>, meth: &str, block: Option<Block>) -> Result<Value> {
    let (b, e, x) = (begin(r), end(r), excl(r));
    let b_num = numeric::is_numeric(ctx, b);
    let e_num = numeric::is_numeric(ctx, e);
    // String and Symbol ranges keep the pre-3.4 "every n-th succ" stepping for Integer
    // steps (and a missing step).
    let str_begin = string::try_to_str(ctx, b)?;
    let sym_begin = if b.is_symbol() { Some(crate::core::symbol::to_string(ctx, b)) } else { None };
    let step = match step_arg {
        Some(s) => s,
        None if b_num || str_begin.is_some() || sym_begin.is_some() || (b.is_nil() && e_num) => Value::fixnum(1),
        None => return Err(ctx.arg_error("step is required for non-numeric ranges")),
    };
    let step_num = numeric::is_numeric(ctx, step);
    if step_num && b_num && object::equal(ctx, step, Value::fixnum(0))? {
        return Err(ctx.arg_error("step can't be 0"));
    }
    let Some(blk) = block else {
        if step_num && ((b_num && (e.is_nil() || e_num)) || (b.is_nil() && e_num)) {
            let argv: Vec<Value> = step_arg.into_iter().collect();
            return Ok(arith_seq::new(ctx, r, meth, &argv, None, b, e, step, x));
        }
        if b.is_nil() {
            return Err(ctx.arg_error("#step for non-numeric beginless ranges is meaningless"));
        }
        let argv: Vec<Value> = step_arg.into_iter().collect();
        return enumerator::enum_for_sized(ctx, r, meth, &argv, SizeFn::Native(step_size));
    };
    if b.is_nil() {
        return Err(ctx.arg_error("#step iteration for beginless ranges is meaningless"));
    }
    let mut yield_v = |ctx: &mut Ctx, v: Value| -> Result<bool> {
        ctx.yield1(&blk, v)?;
        Ok(true)
    };
    if let (Some(bi), Some(si)) = (b.as_fixnum(), step.as_fixnum()) {
        if e.is_nil() || e.is_fixnum() {
            step_fixnum(ctx, bi, e.as_fixnum(), si, x, &mut yield_v)?;
            return Ok(r);
        }
    }
    if b_num && step_num && numeric::float_step_each(ctx, b, e, step, x, &mut yield_v)? {
        return Ok(r);
    }
    if let Some(s) = str_begin.or(sym_begin) {
        if let Some(n) = step.as_fixnum() {
            return step_every_nth_succ(ctx, r, s, b.is_symbol(), n, &blk);
        }
    }
    if e.is_nil() {
        let mut v = b;
        loop {
            ctx.yield1(&blk, v)?;
            v = ctx.call(v, sym::PLUS, &[step])?;
        }
    }
    let mut v = b;
    if b_num && step_num && r_less(ctx, step, Value::fixnum(0))? < 0 {
        // A negative numeric step iterates backwards, like an ArithmeticSequence.
        loop {
            let c = r_less(ctx, e, v)?;
            if !(c < 0 || (!x && c == 0)) {
                return Ok(r);
            }
            ctx.yield1(&blk, v)?;
            if c == 0 {
                return Ok(r);
            }
            v = ctx.call(v, sym::PLUS, &[step])?;
        }
    }
    let dir = r_less(ctx, b, e)?;
    if dir == 0 {
        if !x {
            ctx.yield1(&blk, v)?;
        }
        return Ok(r);
    }
    // One addition first: the step must move from begin towards end, else nothing.
    let second = ctx.call(b, sym::PLUS, &[step])?;
    if r_less(ctx, b, second)? != dir {
        return Ok(r);
    }
    loop {
        let c = r_less(ctx, v, e)?;
        if !(c == dir || (!x && c == 0)) {
            return Ok(r);
        }
        ctx.yield1(&blk, v)?;
        if c == 0 {
            return Ok(r);
        }
        v = ctx.call(v, sym::PLUS, &[step])?;
    }
}

/// Fixnum begin, end (or none) and step, counted in i128 so no sum overflows; values past
/// the Fixnum range become Bignums.
fn step_fixnum(ctx: &mut Ctx, b: i64, e: Option<i64>, st: i64, x: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let (mut i, st) = (b as i128, st as i128);
    loop {
        if let Some(e) = e {
            let e = e as i128;
            let inside = if st > 0 { i < e || (!x && i == e) } else { i > e || (!x && i == e) };
            if !inside {
                return Ok(());
            }
        }
        let v = bignum::from_i128(ctx, i);
        if !f(ctx, v)? {
            return Ok(());
        }
        match i.checked_add(st) {
            Some(n) => i = n,
            None => break,
        }
    }
    // Only an endless range gets here (after 2**64 steps): go on with Integers.
    let mut cur = bignum::normalize(ctx, BigInt::from(i) + BigInt::from(st));
    let s = Value::fixnum(st as i64);
    loop {
        if !f(ctx, cur)? {
            return Ok(());
        }
        cur = integer::add(ctx, cur, s)?;
    }
}

/// String/Symbol ranges with an Integer step: every `n`-th value of `upto`.
fn step_every_nth_succ(ctx: &mut Ctx, r: Value, s: Value, symbols: bool, n: i64, blk: &Block) -> Result<Value> {
    if n < 0 {
        return Err(ctx.arg_error("step can't be negative"));
    }
    if n == 0 {
        return Err(ctx.arg_error("step can't be 0"));
    }
    let e = end(r);
    let mut i = 0i64;
    let mut each = |ctx: &mut Ctx, v: Value| -> Result<bool> {
        if i % n == 0 {
            let v = if symbols { string::intern(ctx, v) } else { v };
            ctx.yield1(blk, v)?;
        }
        i += 1;
        Ok(true)
    };
    if e.is_nil() {
        upto_endless(ctx, s, &mut each)?;
    } else {
        let es = if e.is_symbol() { crate::core::symbol::to_string(ctx, e) } else { e };
        string::upto_each(ctx, s, es, excl(r), &mut each)?;
    }
    Ok(r)
}

// ---- bsearch ----

/// How the block's answer steers a binary search (CRuby's `BSEARCH_CHECK`): `Found` for
/// find-any mode's zero, otherwise whether to go to the smaller half and whether the
/// probe satisfied find-minimum mode.
enum Probe {
    Found,
    Smaller(bool),
    Larger,
}

fn probe(ctx: &mut Ctx, blk: &Block, val: Value) -> Result<Probe> {
    let v = ctx.yield1(blk, val)?;
    if let Some(i) = v.as_fixnum() {
        return Ok(if i == 0 {
            Probe::Found
        } else if i < 0 {
            Probe::Smaller(false)
        } else {
            Probe::Larger
        });
    }
    if v == Value::TRUE {
        return Ok(Probe::Smaller(true));
    }
    if v == Value::FALSE || v.is_nil() {
        return Ok(Probe::Larger);
    }
    if numeric::is_numeric(ctx, v) {
        let c = crate::core::comparable::compare(ctx, v, Value::fixnum(0))?;
        return Ok(match c {
            0 => Probe::Found,
            c if c < 0 => Probe::Smaller(false),
            _ => Probe::Larger,
        });
    }
    let cname = object::class_name_of(ctx, v);
    Err(ctx.type_error(&format!("wrong argument type {cname} (must be numeric, true, false or nil)")))
}

/// Binary search over `low..=high` mapped through `conv` (i64 keys: Fixnums, or Floats
/// by their ordered bit patterns).
fn bsearch_i64(ctx: &mut Ctx, blk: &Block, mut low: i64, mut high: i64, exclusive: bool, conv: &dyn Fn(&mut Ctx, i64) -> Value) -> Result<Value> {
    let mut satisfied = Value::NIL;
    if exclusive {
        high -= 1;
    }
    let org_high = high;
    while low < high {
        // Midpoint without overflow, rounding towards negative infinity.
        let mid = ((low as i128 + high as i128).div_euclid(2)) as i64;
        let val = conv(ctx, mid);
        match probe(ctx, blk, val)? {
            Probe::Found => return Ok(val),
            Probe::Smaller(sat) => {
                if sat {
                    satisfied = val;
                }
                high = mid;
            }
            Probe::Larger => low = mid + 1,
        }
    }
    if low == org_high {
        let val = conv(ctx, low);
        match probe(ctx, blk, val)? {
            Probe::Found => return Ok(val),
            Probe::Smaller(sat) => {
                if sat {
                    satisfied = val;
                }
            }
            Probe::Larger => return Ok(Value::NIL),
        }
    }
    Ok(satisfied)
}

/// Binary search over arbitrary Integers (CRuby's `bsearch_integer_range`).
fn bsearch_integer(ctx: &mut Ctx, blk: &Block, beg: Value, end: Value, exclusive: bool) -> Result<Value> {
    let mut low = bignum::to_big(integer::to_integer_arg(ctx, beg)?);
    let mut high = bignum::to_big(integer::to_integer_arg(ctx, end)?);
    if exclusive {
        high -= 1;
    }
    let org_high = high.clone();
    let mut satisfied = Value::NIL;
    while low < high {
        let mid = num_integer::Integer::div_floor(&(&low + &high), &BigInt::from(2));
        let val = bignum::normalize(ctx, mid.clone());
        match probe(ctx, blk, val)? {
            Probe::Found => return Ok(val),
            Probe::Smaller(sat) => {
                if sat {
                    satisfied = val;
                }
                high = mid;
            }
            Probe::Larger => low = mid + 1,
        }
    }
    if low == org_high {
        let val = bignum::normalize(ctx, low);
        match probe(ctx, blk, val)? {
            Probe::Found => return Ok(val),
            Probe::Smaller(sat) => {
                if sat {
                    satisfied = val;
                }
            }
            Probe::Larger => return Ok(Value::NIL),
        }
    }
    Ok(satisfied)
}

/// A double as an i64 ordered like the doubles (-0.0 maps to 0).
fn double_as_i64(d: f64) -> i64 {
    let bits = d.abs().to_bits() as i64;
    if d < 0.0 {
        -bits
    } else {
        bits
    }
}

fn i64_as_double(ctx: &mut Ctx, i: i64) -> Value {
    let d = f64::from_bits(i.unsigned_abs());
    float::new(ctx, if i < 0 { -d } else { d })
}

/// Whether `v.integer?` is true (CRuby's `is_integer_p`, through `rb_check_funcall`).
fn is_integer_p(ctx: &mut Ctx, v: Value) -> Result<bool> {
    if integer::is_integer(v) {
        return Ok(true);
    }
    if v.is_nil() || float::is_float(v) {
        return Ok(false);
    }
    let id = ctx.intern("integer?");
    Ok(crate::core::convert::check_funcall(ctx, v, id, &[])?.is_some_and(|r| r.truthy()))
}

fn m_bsearch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (b, e, x) = (begin(recv), end(recv), excl(recv));
    let kind = if b.is_fixnum() && e.is_fixnum() {
        0
    } else if float::is_float(b) || float::is_float(e) {
        1
    } else if is_integer_p(ctx, b)? && is_integer_p(ctx, e)? {
        2
    } else if is_integer_p(ctx, b)? && e.is_nil() {
        3
    } else if b.is_nil() && is_integer_p(ctx, e)? {
        4
    } else {
        let cname = object::class_name_of(ctx, b);
        return Err(ctx.type_error(&format!("can't do binary search for {cname}")));
    };
    let Some(blk) = args.block else {
        return enumerator::enum_for_sized(ctx, recv, "bsearch", &[], SizeFn::None);
    };
    match kind {
        0 => bsearch_i64(ctx, &blk, b.fixnum_unchecked(), e.fixnum_unchecked(), x, &|_ctx, i| Value::fixnum(i)),
        1 => {
            let lo = if b.is_nil() { f64::NEG_INFINITY } else { numeric::to_f64(ctx, b)? };
            let hi = if e.is_nil() { f64::INFINITY } else { numeric::to_f64(ctx, e)? };
            bsearch_i64(ctx, &blk, double_as_i64(lo), double_as_i64(hi), x, &i64_as_double)
        }
        2 => bsearch_integer(ctx, &blk, b, e, x),
        3 => {
            // Grow the upper bound by doubling until the block says "smaller".
            let mut diff = Value::fixnum(1);
            loop {
                let mid = ctx.call(b, sym::PLUS, &[diff])?;
                match probe(ctx, &blk, mid)? {
                    Probe::Found => return Ok(mid),
                    Probe::Smaller(_) => return bsearch_integer(ctx, &blk, b, mid, false),
                    Probe::Larger => {}
                }
                diff = integer::mul(ctx, diff, Value::fixnum(2))?;
            }
        }
        _ => {
            let mut diff = Value::fixnum(-1);
            loop {
                let mid = ctx.call(e, sym::PLUS, &[diff])?;
                match probe(ctx, &blk, mid)? {
                    Probe::Found => return Ok(mid),
                    Probe::Smaller(_) => {}
                    Probe::Larger => return bsearch_integer(ctx, &blk, mid, e, x),
                }
                diff = integer::mul(ctx, diff, Value::fixnum(2))?;
            }
        }
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().range;
    crate::methods!(ctx, c, [
        ("each", m_each, [0], Unsafe),
        ("reverse_each", m_reverse_each, [0], Unsafe),
        ("step", m_step, [0..=1], Unsafe),
        ("%", m_percent, [1], Unsafe),
        ("bsearch", m_bsearch, [0], Unsafe),
    ]);
}
