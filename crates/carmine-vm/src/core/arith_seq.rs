//! Enumerator::ArithmeticSequence: what `Range#step`/`Range#%` and `Numeric#step` return
//! for numeric arguments.
//!
//! Invariants:
//! - A sequence is an ordinary Enumerator (`EnumObj`, so `next`, `with_index`, `lazy` …
//!   work) whose receiver/method/arguments are the original call (for `inspect`) and whose
//!   generator is a native one over the state Array `[begin, end, step, exclude_end]`.
//! - Iteration follows CRuby's `arith_seq_each`: `ruby_float_step` when a Float is
//!   involved, otherwise the last value is computed first (`begin + step * ((end - begin)
//!   div step)`) and the values are compared against it, so any Numeric works.

use crate::core::enumerator::{self, EnumObj, NativeGen, SizeFn};
use crate::core::{array, bignum, float, hash, integer, numeric, object, range, string};
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A new sequence for `recv.meth(*args, **kw)` iterating `begin`, `begin + step`, … `end`.
#[allow(clippy::too_many_arguments)]
pub fn new(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value], kw: Option<Value>, begin: Value, end: Value, step: Value, excl: bool) -> Value {
    let state = array::from_slice(ctx, &[begin, end, step, Value::bool(excl)]);
    let gk = ctx.c().generator;
    let gen = object::new_data(ctx, gk, Box::new(NativeGen { state, f: gen_each }));
    let call_args = array::from_slice(ctx, args);
    if let Some(h) = kw {
        array::push(ctx, call_args, h);
    }
    let meth = ctx.intern(meth);
    let klass = ctx.c().arith_seq;
    // `size` is ArithmeticSequence#size (defined on the class), so no size function here.
    enumerator::new_enum(ctx, klass, EnumObj { recv, meth, args: call_args, kw: Value::NIL, size: SizeFn::None, generator: gen, cursor: Value::NIL })
}

pub fn is_arith_seq(v: Value) -> bool {
    data_ref::<EnumObj>(v).is_some_and(|e| data_ref::<NativeGen>(e.generator).is_some_and(|g| g.f as usize == gen_each as *const () as usize))
}

/// (begin, end, step, exclude_end) of a sequence.
pub fn parts(ctx: &mut Ctx, v: Value) -> Result<(Value, Value, Value, bool)> {
    let state = data_ref::<EnumObj>(v).and_then(|e| data_ref::<NativeGen>(e.generator)).filter(|g| g.f as usize == gen_each as *const () as usize).map(|g| g.state);
    match state {
        Some(s) => Ok((array::get(s, 0), array::get(s, 1), array::get(s, 2), array::get(s, 3).truthy())),
        None => Err(ctx.type_error("not an arithmetic sequence")),
    }
}

fn gen_each(ctx: &mut Ctx, state: Value, blk: &Block) -> Result<Value> {
    let (b, e, s, x) = (array::get(state, 0), array::get(state, 1), array::get(state, 2), array::get(state, 3).truthy());
    each(ctx, b, e, s, x, &mut |ctx, v| {
        ctx.yield1(blk, v)?;
        Ok(true)
    })?;
    Ok(Value::NIL)
}

// ---- generic numeric operations with Integer fast paths ----

fn plus(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if integer::is_integer(a) && integer::is_integer(b) {
        return integer::add(ctx, a, b);
    }
    ctx.call(a, sym::PLUS, &[b])
}

fn minus(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if integer::is_integer(a) && integer::is_integer(b) {
        return integer::sub(ctx, a, b);
    }
    ctx.call(a, sym::MINUS, &[b])
}

fn mul(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if integer::is_integer(a) && integer::is_integer(b) {
        return integer::mul(ctx, a, b);
    }
    ctx.call(a, sym::MUL, &[b])
}

/// `a.div(b)` (floored integer division).
fn idiv(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    if integer::is_integer(a) && integer::is_integer(b) {
        return integer::div(ctx, a, b);
    }
    let div = ctx.intern("div");
    ctx.call(a, div, &[b])
}

fn ge(ctx: &mut Ctx, a: Value, b: Value) -> Result<bool> {
    if let (Some(x), Some(y)) = (a.as_fixnum(), b.as_fixnum()) {
        return Ok(x >= y);
    }
    Ok(ctx.call(a, sym::GE, &[b])?.truthy())
}

/// CRuby's `rb_num_negative_int_p`: the sign of an Integer, `num < 0` otherwise.
fn negative(ctx: &mut Ctx, v: Value) -> Result<bool> {
    if let Some(i) = v.as_fixnum() {
        return Ok(i < 0);
    }
    if bignum::is_bignum(v) {
        return Ok(num_traits::Signed::is_negative(bignum::get(v)));
    }
    Ok(ctx.call(v, sym::LT, &[Value::fixnum(0)])?.truthy())
}

/// The last value of a bounded, non-Float sequence and whether it was pulled back from an
/// excluded end; `None` when the sequence is empty.
fn last_value(ctx: &mut Ctx, b: Value, e: Value, s: Value, excl: bool) -> Result<Option<(Value, Value, bool)>> {
    let span = minus(ctx, e, b)?;
    let len_1 = idiv(ctx, span, s)?;
    if negative(ctx, len_1)? {
        return Ok(None);
    }
    let off = mul(ctx, s, len_1)?;
    let mut last = plus(ctx, b, off)?;
    let adjusted = excl && object::equal(ctx, last, e)?;
    if adjusted {
        last = minus(ctx, last, s)?;
    }
    Ok(Some((last, len_1, adjusted)))
}

/// Runs `f` over the sequence (CRuby's `arith_seq_each`); `f` returns false to stop.
pub fn each(ctx: &mut Ctx, b: Value, e: Value, s: Value, excl: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let complex = object::is_a(ctx, s, ctx.c().complex);
    if !complex && numeric::float_step_each(ctx, b, e, s, excl, f)? {
        return Ok(());
    }
    if let (Some(mut i), Some(st)) = (b.as_fixnum(), s.as_fixnum()) {
        if st == 0 {
            while f(ctx, b)? {}
            return Ok(());
        }
        // A fixnum counter against the precomputed last value; leaves for the generic
        // loop when a value no longer fits.
        let last: Option<i128> = match e.as_fixnum() {
            Some(end) => {
                let (b0, end, st) = (i as i128, end as i128, st as i128);
                let len_1 = num_integer::Integer::div_floor(&(end - b0), &st);
                if len_1 < 0 {
                    return Ok(());
                }
                let mut last = b0 + st * len_1;
                if excl && last == end {
                    last -= st;
                }
                Some(last)
            }
            None if e.is_nil() => None,
            None => return each_generic(ctx, b, e, s, excl, f),
        };
        loop {
            if let Some(last) = last {
                if (st < 0 && (i as i128) < last) || (st > 0 && (i as i128) > last) {
                    return Ok(());
                }
            }
            if !f(ctx, Value::fixnum(i))? {
                return Ok(());
            }
            match i.checked_add(st) {
                Some(n) if Value::fits_fixnum(n) => i = n,
                _ => {
                    let next = integer::add(ctx, Value::fixnum(i), s)?;
                    return each_generic(ctx, next, e, s, excl, f);
                }
            }
        }
    }
    each_generic(ctx, b, e, s, excl, f)
}

fn each_generic(ctx: &mut Ctx, b: Value, e: Value, s: Value, excl: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let mut c = b;
    if e.is_nil() {
        loop {
            if !f(ctx, c)? {
                return Ok(());
            }
            c = plus(ctx, c, s)?;
        }
    }
    if object::equal(ctx, s, Value::fixnum(0))? {
        while f(ctx, c)? {}
        return Ok(());
    }
    let Some((last, _, _)) = last_value(ctx, b, e, s, excl)? else { return Ok(()) };
    let desc = negative(ctx, s)?;
    loop {
        let go = if desc { ge(ctx, c, last)? } else { ge(ctx, last, c)? };
        if !go || !f(ctx, c)? {
            return Ok(());
        }
        c = plus(ctx, c, s)?;
    }
}

/// CRuby's `arith_seq_size`.
fn size(ctx: &mut Ctx, b: Value, e: Value, s: Value, excl: bool) -> Result<Value> {
    if float::is_float(b) || float::is_float(e) || float::is_float(s) {
        let end = if e.is_nil() {
            if negative(ctx, s)? {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        } else {
            numeric::to_f64(ctx, e)?
        };
        let (fb, fs) = (numeric::to_f64(ctx, b)?, numeric::to_f64(ctx, s)?);
        let n = numeric::float_step_size(fb, end, fs, excl);
        if n.is_infinite() {
            return Ok(float::new(ctx, n));
        }
        return float::to_integer(ctx, n);
    }
    if e.is_nil() {
        return Ok(float::new(ctx, f64::INFINITY));
    }
    let s = if numeric::is_numeric(ctx, s) { s } else { integer::to_integer_arg(ctx, s)? };
    if object::equal(ctx, s, Value::fixnum(0))? {
        return Ok(float::new(ctx, f64::INFINITY));
    }
    match last_value(ctx, b, e, s, excl)? {
        None => Ok(Value::fixnum(0)),
        Some((_, len_1, true)) => Ok(len_1),
        Some((_, len_1, false)) => plus(ctx, len_1, Value::fixnum(1)),
    }
}

// ---- methods ----

fn m_begin(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(ctx, recv)?.0)
}

fn m_end(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(ctx, recv)?.1)
}

fn m_step(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(parts(ctx, recv)?.2)
}

fn m_exclude_end(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(parts(ctx, recv)?.3))
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else { return Ok(recv) };
    let (b, e, s, x) = parts(ctx, recv)?;
    each(ctx, b, e, s, x, &mut |ctx, v| {
        ctx.yield1(&blk, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (b, e, s, x) = parts(ctx, recv)?;
    size(ctx, b, e, s, x)
}

fn m_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (b, e, s, x) = parts(ctx, recv)?;
    if e.is_nil() {
        return Err(ctx.range_error("cannot convert endless range to an array"));
    }
    let out = array::new(ctx);
    each(ctx, b, e, s, x, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

/// `first` / `first(n)` (CRuby's `arith_seq_first`).
fn m_first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (b, e, s, x) = parts(ctx, recv)?;
    let Some(&n) = args.pos.first() else {
        if b.is_nil() {
            return Ok(Value::NIL);
        }
        if !e.is_nil() {
            let desc = negative(ctx, s)?;
            let zero = object::equal(ctx, s, Value::fixnum(0))?;
            if !zero && !desc && ctx.call(b, sym::GT, &[e])?.truthy() {
                return Ok(Value::NIL);
            }
            if !zero && desc && ctx.call(b, sym::LT, &[e])?.truthy() {
                return Ok(Value::NIL);
            }
        }
        return Ok(b);
    };
    let n = integer::to_i64_arg(ctx, n)?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to take negative size"));
    }
    let out = array::new(ctx);
    if n == 0 {
        return Ok(out);
    }
    each(ctx, b, e, s, x, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok((array::len(out) as i64) < n)
    })?;
    Ok(out)
}

/// `last` / `last(n)` (CRuby's `arith_seq_last`).
fn m_last(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (b, e, s, x) = parts(ctx, recv)?;
    if e.is_nil() {
        return Err(ctx.range_error("cannot get the last element of endless arithmetic sequence"));
    }
    let Some((last, len_1, adjusted)) = last_value(ctx, b, e, s, x)? else {
        return Ok(if args.pos.is_empty() { Value::NIL } else { array::new(ctx) });
    };
    let Some(&nv) = args.pos.first() else { return Ok(last) };
    let len = if adjusted { len_1 } else { plus(ctx, len_1, Value::fixnum(1))? };
    let mut nv = integer::to_integer_arg(ctx, nv)?;
    if ctx.call(nv, sym::GT, &[len])?.truthy() {
        nv = len;
    }
    let n = integer::to_i64_arg(ctx, nv)?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size"));
    }
    let out = array::new(ctx);
    let back = mul(ctx, s, nv)?;
    let mut v = minus(ctx, last, back)?;
    for _ in 0..n {
        v = plus(ctx, v, s)?;
        array::push(ctx, out, v);
    }
    Ok(out)
}

/// `((1..10).step(2))`, `(1.step(10, 2))`, `(1.step(by: 2, to: 5))`.
fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let Some(e) = data_ref::<EnumObj>(recv) else { return Err(ctx.type_error("not an arithmetic sequence")) };
    let (obj, meth, args) = (e.recv, e.meth, e.args);
    let is_range = range::is_range(obj);
    let shown = string::to_s(ctx, obj)?;
    let mut out: Vec<u8> = Vec::new();
    out.extend_from_slice(if is_range { b"((" } else { b"(" });
    out.extend_from_slice(string::bytes(shown));
    if is_range {
        out.push(b')');
    }
    out.push(b'.');
    out.extend_from_slice(ctx.sym_str(meth).as_bytes());
    let mut argc = array::len(args);
    if argc > 0 {
        let mut kwds = Value::NIL;
        let tail = array::get(args, argc - 1);
        if hash::is_hash(tail) && hash::pairs(tail).iter().all(|(k, _)| k.is_symbol()) {
            kwds = tail;
            argc -= 1;
        }
        let mut parts: Vec<Vec<u8>> = Vec::new();
        for i in 0..argc {
            let s = object::inspect(ctx, array::get(args, i))?;
            parts.push(string::bytes(s).to_vec());
        }
        if !kwds.is_nil() {
            for (k, v) in hash::pairs(kwds) {
                let mut p = string::bytes(string::to_s(ctx, k)?).to_vec();
                p.extend_from_slice(b": ");
                let vs = object::inspect(ctx, v)?;
                p.extend_from_slice(string::bytes(vs));
                parts.push(p);
            }
        }
        out.push(b'(');
        out.extend_from_slice(&parts.join(&b", "[..]));
        out.push(b')');
    }
    out.push(b')');
    Ok(string::new_from_bytes(ctx, &out))
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_arith_seq(o) {
        return Ok(Value::FALSE);
    }
    let (a, b) = (parts(ctx, recv)?, parts(ctx, o)?);
    Ok(Value::bool(a.3 == b.3 && object::equal(ctx, a.0, b.0)? && object::equal(ctx, a.1, b.1)? && object::equal(ctx, a.2, b.2)?))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (b, e, s, x) = parts(ctx, recv)?;
    let mut h = hash::mix(ctx.vm().hash_seed, x as u64);
    for v in [b, e, s] {
        let hv = object::hash_of(ctx, v)?;
        h = hash::mix(h, hv);
    }
    Ok(Value::fixnum((h >> 2) as i64))
}

/// `Array#[]` with an arithmetic sequence (CRuby's `rb_arithmetic_sequence_beg_len_step`
/// and `rb_ary_subseq_step`).
pub fn array_aref(ctx: &mut Ctx, ary: Value, seq: Value) -> Result<Value> {
    let (mut b, mut e, st, mut excl) = parts(ctx, seq)?;
    let step = if st.is_nil() { 1 } else { integer::to_i64_arg(ctx, st)? };
    let alen = array::len(ary) as i64;
    if step < 0 {
        // Reverse the range; an excluded end becomes an included one past it.
        if excl && !e.is_nil() {
            let ev = integer::to_i64_arg(ctx, e)?;
            e = Value::fixnum(ev + 1);
            excl = false;
        }
        std::mem::swap(&mut b, &mut e);
    }
    // Steps other than ±1 must stay inside the array (err=1: the end is not clipped).
    let wide = !(-1..=1).contains(&step);
    let Some((beg, mut len)) = crate::core::array_methods::beg_len_components(ctx, b, e, excl, alen, if wide { 1 } else { 0 }, seq)? else {
        return Ok(Value::NIL);
    };
    if wide && (beg > alen || len > alen) {
        let shown = object::inspect_string(ctx, seq)?;
        return Err(ctx.range_error(&format!("{shown} out of range")));
    }
    if beg > alen || beg < 0 || len < 0 {
        return Ok(Value::NIL);
    }
    if alen < len || alen < beg + len {
        len = alen - beg;
    }
    if len == 0 {
        return Ok(array::new(ctx));
    }
    if step == 0 {
        return Err(ctx.arg_error("slice step cannot be zero"));
    }
    if step > 0 && step >= len {
        let v = array::get(ary, beg as usize);
        return Ok(array::from_slice(ctx, &[v]));
    }
    let step = if step < 0 && step < -len { -len } else { step };
    let ustep = step.abs();
    let n = (len + ustep - 1) / ustep;
    let mut j = beg + if step > 0 { 0 } else { len - 1 };
    let out = array::with_capacity(ctx, n as usize);
    for _ in 0..n {
        let v = array::get(ary, j as usize);
        array::push(ctx, out, v);
        j += step;
    }
    Ok(out)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().arith_seq;
    crate::methods!(ctx, c, [
        ("begin", m_begin, [0], Safe),
        ("end", m_end, [0], Safe),
        ("step", m_step, [0], Safe),
        ("exclude_end?", m_exclude_end, [0], Safe),
        ("each", m_each, [0], Unsafe),
        ("size", m_size, [0], Unsafe),
        ("to_a", m_to_a, [0], Unsafe),
        ("first", m_first, [0..=1], Unsafe),
        ("last", m_last, [0..=1], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
        ("==", m_eq, [1], Unsafe),
        ("hash", m_hash, [0], Unsafe),
    ]);
    crate::core::define_alias(ctx, c, "entries", "to_a");
    crate::core::define_alias(ctx, c, "to_s", "inspect");
    crate::core::define_alias(ctx, c, "===", "==");
    crate::core::define_alias(ctx, c, "eql?", "==");
    // Sequences come only from `step`/`%`.
    if let Ok(single) = object::singleton_class(ctx, c) {
        let new = sym::NEW;
        let _ = crate::core::module_methods::undef_method(ctx, single, new);
    }
}
