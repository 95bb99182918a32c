//! Enumerator (internal iteration), Enumerator::Yielder/Generator, Enumerator::Lazy and
//! Enumerator::ArithmeticSequence.
//!
//! Invariants:
//! - An enumerator is (receiver, method, arguments) or a generator block; `each` with a
//!   block calls through. External iteration (`next`) runs the enumerator in a fiber.
//! - Enumerator::Lazy is in `lazy.rs`; a Lazy is an Enumerator over a native generator.

use crate::core::{array, enumerable, float, integer, numeric, object, string};
use crate::error::Unwind;
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// How an enumerator computes `size` without iterating.
#[derive(Copy, Clone, Debug)]
pub enum SizeFn {
    None,
    ArrayLen,
    HashLen,
    RangeSize,
    IntTimes,
    /// A Proc or an Integer given by the user.
    Value(Value),
    /// Computed by a builtin from the receiver and the enumerator's arguments (an Array).
    Native(fn(&mut Ctx, Value, Value) -> Result<Value>),
}

pub struct EnumObj {
    pub recv: Value,
    pub meth: SymId,
    pub args: Value,
    pub kw: Value,
    pub size: SizeFn,
    /// For `Enumerator.new { |y| … }`: the generator block.
    pub generator: Value,
    /// External-iteration state (a fiber) once `next` has been called.
    pub cursor: Value,
}

crate::data_obj!(EnumObj, |s, m| {
    m.mark(s.recv);
    m.mark(s.args);
    m.mark(s.kw);
    m.mark(s.generator);
    m.mark(s.cursor);
    if let SizeFn::Value(v) = s.size {
        m.mark(v);
    }
});

pub fn new_enum(ctx: &mut Ctx, klass: Value, e: EnumObj) -> Value {
    object::new_data(ctx, klass, Box::new(e))
}

pub fn enum_for(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value], size_fn: Option<Value>) -> Result<Value> {
    let size = size_fn.map_or(SizeFn::None, SizeFn::Value);
    enum_for_full(ctx, recv, meth, args, None, size)
}

pub fn enum_for_kw(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value], kw: Option<Value>, size_fn: Option<Value>) -> Result<Value> {
    let size = size_fn.map_or(SizeFn::None, SizeFn::Value);
    enum_for_full(ctx, recv, meth, args, kw, size)
}

pub fn enum_for_sized(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value], size: SizeFn) -> Result<Value> {
    enum_for_full(ctx, recv, meth, args, None, size)
}

/// An enumerator for the running builtin under the name it was called by (so an alias
/// like `collect` gives `#<Enumerator: [1]:collect>`); `fallback` when no builtin runs.
pub fn enum_for_this(ctx: &mut Ctx, recv: Value, fallback: &str, args: &[Value], size: SizeFn) -> Result<Value> {
    let called = ctx.stacks.frames.last().filter(|f| f.kind == crate::interp::frame::FrameKind::Builtin).and_then(|f| f.mid);
    let name = match called {
        Some(id) => ctx.sym_str(id),
        None => fallback.to_string(),
    };
    enum_for_full(ctx, recv, &name, args, None, size)
}

fn enum_for_full(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value], kw: Option<Value>, size: SizeFn) -> Result<Value> {
    let meth = ctx.intern(meth);
    let args = array::from_slice(ctx, args);
    let klass = ctx.c().enumerator;
    Ok(new_enum(ctx, klass, EnumObj { recv, meth, args, kw: kw.unwrap_or(Value::NIL), size, generator: Value::NIL, cursor: Value::NIL }))
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut EnumObj> {
    match data_ref::<EnumObj>(v) {
        Some(e) => Ok(e),
        None => Err(ctx.type_error("uninitialized enumerator")),
    }
}

/// A generator implemented in Rust: `f(state, block)` runs one iteration, yielding to
/// `block`. Its class is Enumerator::Generator, so such enumerators look like CRuby's.
pub struct NativeGen {
    pub state: Value,
    pub f: fn(&mut Ctx, Value, &Block) -> Result<Value>,
}

crate::data_obj!(NativeGen, |s, m| {
    m.mark(s.state);
});

/// An enumerator whose `each` runs `f(state, block)` (used by `chunk`, `slice_when` …).
pub fn from_native_generator(ctx: &mut Ctx, state: Value, f: fn(&mut Ctx, Value, &Block) -> Result<Value>, size: SizeFn) -> Value {
    let gk = ctx.c().generator;
    let gen = object::new_data(ctx, gk, Box::new(NativeGen { state, f }));
    let empty = array::new(ctx);
    let klass = ctx.c().enumerator;
    new_enum(ctx, klass, EnumObj { recv: Value::NIL, meth: sym::EACH, args: empty, kw: Value::NIL, size, generator: gen, cursor: Value::NIL })
}

/// Runs the enumerator's iteration with `block`.
pub fn run(ctx: &mut Ctx, e: Value, block: Block) -> Result<Value> {
    let (recv, meth, args, kw, gen) = {
        let o = get(ctx, e)?;
        (o.recv, o.meth, o.args, o.kw, o.generator)
    };
    if let Some(ng) = data_ref::<NativeGen>(gen) {
        let (state, f) = (ng.state, ng.f);
        return f(ctx, state, &block);
    }
    if !gen.is_nil() {
        let y = new_yielder(ctx, block)?;
        return ctx.call_proc(gen, &[y], None);
    }
    let a = array::to_vec(args);
    let kw = if kw.is_nil() { None } else { Some(kw) };
    ctx.call_kw(recv, meth, &a, kw, Some(block))
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !args.pos.is_empty() {
        let (r, m, old, kw, size) = {
            let o = get(ctx, recv)?;
            (o.recv, o.meth, o.args, o.kw, o.size)
        };
        let mut a = array::to_vec(old);
        a.extend_from_slice(args.pos);
        let na = array::from_vec(ctx, a);
        let klass = object::real_class_of(ctx, recv);
        let e = new_enum(ctx, klass, EnumObj { recv: r, meth: m, args: na, kw, size, generator: Value::NIL, cursor: Value::NIL });
        if let Some(b) = args.block {
            return run(ctx, e, b);
        }
        return Ok(e);
    }
    match args.block {
        Some(b) => run(ctx, recv, b),
        None => Ok(recv),
    }
}

pub fn size_of(ctx: &mut Ctx, e: Value) -> Result<Value> {
    let (recv, size, args) = {
        let o = get(ctx, e)?;
        (o.recv, o.size, o.args)
    };
    match size {
        SizeFn::None => Ok(Value::NIL),
        SizeFn::ArrayLen => Ok(Value::fixnum(array::len(recv) as i64)),
        SizeFn::HashLen => Ok(Value::fixnum(crate::core::hash::len(recv) as i64)),
        SizeFn::RangeSize => crate::core::range::size(ctx, recv),
        SizeFn::IntTimes => Ok(if recv.as_fixnum().is_some_and(|n| n < 0) { Value::fixnum(0) } else { recv }),
        SizeFn::Native(f) => f(ctx, recv, args),
        SizeFn::Value(v) => {
            if crate::core::proc::is_proc(v) {
                let a = array::to_vec(args);
                let mut call_args = vec![];
                call_args.extend(a);
                ctx.call_proc(v, &call_args, None)
            } else {
                Ok(v)
            }
        }
    }
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    size_of(ctx, recv)
}

fn m_with_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let offset = match args.pos.first() {
        Some(&o) if !o.is_nil() => integer::to_integer_arg(ctx, o)?,
        _ => Value::fixnum(0),
    };
    let Some(b) = args.block else {
        return enum_for(ctx, recv, "with_index", &[offset], None);
    };
    let mut i = offset;
    let keep = array::from_slice(ctx, &[i]);
    let r = crate::core::proc::with_native_block(
        ctx,
        &mut |ctx, vals| {
            let v = enumerable::pack(ctx, vals);
            let r = ctx.yield_block(&b, &[v, i])?;
            i = integer::add(ctx, i, Value::fixnum(1))?;
            array::set(keep, 0, i);
            Ok(r)
        },
        |ctx, blk| run(ctx, recv, blk),
    )?;
    Ok(r)
}

fn m_each_with_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_none() {
        return enum_for(ctx, recv, "each_with_index", &[], None);
    }
    m_with_index(ctx, recv, &Args { pos: &[], kw: None, block: args.block })
}

fn m_with_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let memo = args.pos[0];
    let Some(b) = args.block else {
        return enum_for(ctx, recv, "with_object", args.pos, None);
    };
    crate::core::proc::with_native_block(
        ctx,
        &mut |ctx, vals| {
            let v = enumerable::pack(ctx, vals);
            ctx.yield_block(&b, &[v, memo])
        },
        |ctx, blk| run(ctx, recv, blk),
    )?;
    Ok(memo)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let (r, m, args, gen) = {
        let o = get(ctx, recv)?;
        (o.recv, o.meth, o.args, o.generator)
    };
    if !gen.is_nil() {
        return Ok(string::new_utf8(ctx, &format!("#<{cname}: #<Enumerator::Generator:0x{:016x}>:each>", gen.raw())));
    }
    let rs = object::inspect_string(ctx, r)?;
    let mut s = format!("#<{cname}: {rs}:{}", ctx.sym_str(m));
    if array::len(args) > 0 {
        let mut parts = Vec::new();
        for a in array::to_vec(args) {
            parts.push(object::inspect_string(ctx, a)?);
        }
        s.push_str(&format!("({})", parts.join(", ")));
    }
    s.push('>');
    Ok(string::new_utf8(ctx, &s))
}

fn m_next(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::fiber::enumerator_next(ctx, recv, false)
}

fn m_peek(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::fiber::enumerator_next(ctx, recv, true)
}

fn m_next_values(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::fiber::enumerator_next_values(ctx, recv, false)
}

fn m_peek_values(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::fiber::enumerator_next_values(ctx, recv, true)
}

fn m_feed(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    crate::core::fiber::enumerator_feed(ctx, recv, args.pos[0])
}

/// Drops the external-iteration state; like CRuby, also rewinds the receiver if it can.
fn m_rewind(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let inner = get(ctx, recv)?.recv;
    let rewind = ctx.intern("rewind");
    if !inner.is_nil() && ctx.respond_to(inner, rewind, true) {
        ctx.call(inner, rewind, &[])?;
    }
    get(ctx, recv)?.cursor = Value::NIL;
    Ok(recv)
}

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(ctx.arg_error("no block given"));
    };
    let gen = crate::core::proc::from_block(ctx, &b)?;
    let size = match args.pos.first() {
        Some(&s) => SizeFn::Value(s),
        None => SizeFn::None,
    };
    let empty = array::new(ctx);
    Ok(new_enum(ctx, recv, EnumObj { recv: Value::NIL, meth: sym::EACH, args: empty, kw: Value::NIL, size, generator: gen, cursor: Value::NIL }))
}

fn m_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let parts = array::from_slice(ctx, &[recv, args.pos[0]]);
    chain_new(ctx, parts)
}

// ---- Yielder ----

pub struct YielderObj {
    pub block: Option<Block>,
}

crate::data_obj!(YielderObj, |s, m| {
    if let Some(Block::Proc(p)) = s.block {
        m.mark(p);
    }
    if let Some(Block::Captured(c)) = s.block {
        m.mark(c.iseq);
        m.mark(c.self_);
        m.mark(c.env);
        m.mark(c.cref);
    }
});

pub fn new_yielder(ctx: &mut Ctx, block: Block) -> Result<Value> {
    let klass = ctx.c().yielder;
    Ok(object::new_data(ctx, klass, Box::new(YielderObj { block: Some(block) })))
}

fn yielder_block(ctx: &mut Ctx, y: Value) -> Result<Block> {
    match data_ref::<YielderObj>(y).and_then(|o| o.block) {
        Some(b) => Ok(b),
        None => Err(ctx.runtime_error("uninitialized yielder")),
    }
}

fn y_yield(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = yielder_block(ctx, recv)?;
    ctx.yield_block(&b, args.pos)
}

fn y_push(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = yielder_block(ctx, recv)?;
    ctx.yield1(&b, args.pos[0])?;
    Ok(recv)
}

fn y_to_proc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = ctx.intern("yield");
    let meth = crate::core::method::method_object(ctx, recv, m)?;
    Ok(crate::core::proc::method_proc(ctx, meth))
}

// ---- Chain ----

pub fn chain_new(ctx: &mut Ctx, parts: Value) -> Result<Value> {
    let klass = ctx.c().chain;
    let empty = array::new(ctx);
    Ok(new_enum(ctx, klass, EnumObj { recv: parts, meth: sym::EACH, args: empty, kw: Value::NIL, size: SizeFn::None, generator: Value::NIL, cursor: Value::NIL }))
}

fn chain_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return Ok(recv) };
    let parts = get(ctx, recv)?.recv;
    for p in array::to_vec(parts) {
        ctx.call_with_block(p, sym::EACH, &[], Some(b))?;
    }
    Ok(recv)
}

fn chain_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let parts = get(ctx, recv)?.recv;
    let mut total = Value::fixnum(0);
    for p in array::to_vec(parts) {
        let s = ctx.call(p, sym::SIZE, &[])?;
        if s.is_nil() {
            return Ok(Value::NIL);
        }
        total = ctx.call(total, sym::PLUS, &[s])?;
    }
    Ok(total)
}

// ---- ArithmeticSequence and step ----

pub struct ArithSeq {
    pub begin: Value,
    pub end: Value,
    pub step: Value,
    pub excl: bool,
    /// Made by `Range#step` (affects inspect).
    pub from_range: bool,
}

crate::data_obj!(ArithSeq, |s, m| {
    m.mark(s.begin);
    m.mark(s.end);
    m.mark(s.step);
});

pub fn is_arith_seq(v: Value) -> bool {
    data_ref::<ArithSeq>(v).is_some()
}

fn arith_new(ctx: &mut Ctx, begin: Value, end: Value, step: Value, excl: bool, from_range: bool) -> Value {
    let klass = ctx.c().arith_seq;
    object::new_data(ctx, klass, Box::new(ArithSeq { begin, end, step, excl, from_range }))
}

/// Iterates begin, begin+step, … up to end.
fn arith_each(ctx: &mut Ctx, s: &ArithSeq, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let (b, e, st) = (s.begin, s.end, s.step);
    if float::is_float(b) || float::is_float(e) || float::is_float(st) {
        let beg = numeric::to_f64(ctx, b)?;
        let unit = numeric::to_f64(ctx, st)?;
        let end = if e.is_nil() { if unit < 0.0 { f64::NEG_INFINITY } else { f64::INFINITY } } else { numeric::to_f64(ctx, e)? };
        if unit == 0.0 {
            loop {
                let v = float::new(ctx, beg);
                if !f(ctx, v)? {
                    return Ok(());
                }
            }
        }
        if end.is_infinite() {
            let mut i = 0.0;
            loop {
                let v = float::new(ctx, beg + i * unit);
                if !f(ctx, v)? {
                    return Ok(());
                }
                i += 1.0;
            }
        }
        let n = (end - beg) / unit;
        let err = ((beg.abs() + end.abs() + (end - beg).abs()) / unit.abs() * f64::EPSILON).min(0.5);
        let count = if s.excl {
            if n <= 0.0 {
                0
            } else {
                let c = (n - err).floor();
                (if n - err > c { c + 1.0 } else { c }) as i64
            }
        } else if n < 0.0 {
            0
        } else {
            ((n + err).floor() + 1.0) as i64
        };
        for i in 0..count {
            let mut x = beg + i as f64 * unit;
            if !s.excl && i == count - 1 && ((unit > 0.0 && x > end) || (unit < 0.0 && x < end)) {
                x = end;
            }
            let v = float::new(ctx, x);
            if !f(ctx, v)? {
                return Ok(());
            }
        }
        return Ok(());
    }
    if let (Some(bi), Some(si)) = (b.as_fixnum(), st.as_fixnum()) {
        if si == 0 {
            loop {
                if !f(ctx, b)? {
                    return Ok(());
                }
            }
        }
        if e.is_nil() {
            let mut i = bi;
            loop {
                if !f(ctx, Value::fixnum(i))? {
                    return Ok(());
                }
                i += si;
            }
        }
        if let Some(ei) = e.as_fixnum() {
            let mut i = bi;
            loop {
                let stop = if si > 0 { i > ei || (s.excl && i == ei) } else { i < ei || (s.excl && i == ei) };
                if stop {
                    return Ok(());
                }
                if !f(ctx, Value::fixnum(i))? {
                    return Ok(());
                }
                i = match i.checked_add(si) {
                    Some(n) => n,
                    None => return Ok(()),
                };
            }
        }
    }
    let desc = ctx.call(st, sym::LT, &[Value::fixnum(0)])?.truthy();
    let mut i = b;
    loop {
        if !e.is_nil() {
            let c = crate::core::comparable::compare(ctx, i, e)?;
            let stop = if desc { c < 0 || (s.excl && c == 0) } else { c > 0 || (s.excl && c == 0) };
            if stop {
                return Ok(());
            }
        }
        if !f(ctx, i)? {
            return Ok(());
        }
        i = ctx.call(i, sym::PLUS, &[st])?;
    }
}

fn arith_get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a ArithSeq> {
    match data_ref::<ArithSeq>(v) {
        Some(a) => Ok(a),
        None => Err(ctx.type_error("not an arithmetic sequence")),
    }
}

fn as_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return Ok(recv) };
    let s = arith_get(ctx, recv)?;
    let copy = ArithSeq { begin: s.begin, end: s.end, step: s.step, excl: s.excl, from_range: s.from_range };
    arith_each(ctx, &copy, &mut |ctx, v| {
        ctx.yield1(&b, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn as_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = arith_get(ctx, recv)?;
    if s.end.is_nil() {
        return Err(ctx.range_error("cannot convert endless range to an array"));
    }
    let copy = ArithSeq { begin: s.begin, end: s.end, step: s.step, excl: s.excl, from_range: s.from_range };
    let out = array::new(ctx);
    arith_each(ctx, &copy, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn as_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = arith_get(ctx, recv)?;
    let copy = ArithSeq { begin: s.begin, end: s.end, step: s.step, excl: s.excl, from_range: s.from_range };
    if copy.end.is_nil() {
        return Ok(float::new(ctx, f64::INFINITY));
    }
    if float::is_float(copy.begin) || float::is_float(copy.end) || float::is_float(copy.step) {
        let beg = numeric::to_f64(ctx, copy.begin)?;
        let end = numeric::to_f64(ctx, copy.end)?;
        let unit = numeric::to_f64(ctx, copy.step)?;
        if unit == 0.0 {
            return Ok(float::new(ctx, f64::INFINITY));
        }
        let mut n = 0i64;
        arith_each(ctx, &copy, &mut |_ctx, _v| {
            n += 1;
            Ok(n < 100_000_000)
        })?;
        let _ = (beg, end);
        return Ok(Value::fixnum(n));
    }
    if let (Some(b), Some(e), Some(st)) = (copy.begin.as_fixnum(), copy.end.as_fixnum(), copy.step.as_fixnum()) {
        if st == 0 {
            return Ok(float::new(ctx, f64::INFINITY));
        }
        let span = if copy.excl { if st > 0 { e - b - 1 } else { e - b + 1 } } else { e - b };
        let n = if (st > 0 && span < 0) || (st < 0 && span > 0) { 0 } else { span / st + 1 };
        return Ok(Value::fixnum(n.max(0)));
    }
    let mut n = 0i64;
    arith_each(ctx, &copy, &mut |_ctx, _v| {
        n += 1;
        Ok(true)
    })?;
    Ok(Value::fixnum(n))
}

fn as_first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = arith_get(ctx, recv)?;
    let copy = ArithSeq { begin: s.begin, end: s.end, step: s.step, excl: s.excl, from_range: s.from_range };
    match args.pos.first() {
        None => {
            let mut first = Value::NIL;
            arith_each(ctx, &copy, &mut |_ctx, v| {
                first = v;
                Ok(false)
            })?;
            Ok(first)
        }
        Some(&n) => {
            let n = integer::to_i64_arg(ctx, n)?;
            let out = array::new(ctx);
            if n <= 0 {
                return Ok(out);
            }
            arith_each(ctx, &copy, &mut |ctx, v| {
                array::push(ctx, out, v);
                Ok((array::len(out) as i64) < n)
            })?;
            Ok(out)
        }
    }
}

fn as_last(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let all = as_to_a(ctx, recv, &Args::new(&[]))?;
    match args.pos.first() {
        None => {
            let n = array::len(all);
            Ok(if n == 0 { Value::NIL } else { array::get(all, n - 1) })
        }
        Some(&n) => {
            let n = integer::to_i64_arg(ctx, n)?.max(0) as usize;
            let l = array::len(all);
            let k = n.min(l);
            let v = array::slice_to_vec(all, l - k, k);
            Ok(array::from_vec(ctx, v))
        }
    }
}

fn as_begin(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(arith_get(ctx, recv)?.begin)
}
fn as_end(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(arith_get(ctx, recv)?.end)
}
fn as_step(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(arith_get(ctx, recv)?.step)
}
fn as_excl(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(arith_get(ctx, recv)?.excl))
}

fn as_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = arith_get(ctx, recv)?;
    let (b, e, st, excl, from_range) = (s.begin, s.end, s.step, s.excl, s.from_range);
    let bs = object::inspect_string(ctx, b)?;
    let es = if e.is_nil() { String::new() } else { object::inspect_string(ctx, e)? };
    let ss = object::inspect_string(ctx, st)?;
    let text = if from_range {
        format!("(({}{}{}).step({}))", bs, if excl { "..." } else { ".." }, es, ss)
    } else if e.is_nil() {
        format!("({}.step(by: {}))", bs, ss)
    } else {
        format!("({}.step({}, {}))", bs, es, ss)
    };
    Ok(string::new_utf8(ctx, &text))
}

fn as_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(o) = data_ref::<ArithSeq>(args.pos[0]) else { return Ok(Value::FALSE) };
    let s = arith_get(ctx, recv)?;
    let (a, b) = ((s.begin, s.end, s.step, s.excl), (o.begin, o.end, o.step, o.excl));
    Ok(Value::bool(a.3 == b.3 && object::equal(ctx, a.0, b.0)? && object::equal(ctx, a.1, b.1)? && object::equal(ctx, a.2, b.2)?))
}

/// `Array#[]` with an arithmetic sequence.
pub fn array_aref_arith_seq(ctx: &mut Ctx, ary: Value, seq: Value) -> Result<Value> {
    // CRuby's rb_arithmetic_sequence_beg_len_step + rb_ary_subseq_step.
    let s = arith_get(ctx, seq)?;
    let (mut b, mut e, st, mut excl) = (s.begin, s.end, s.step, s.excl);
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
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        out.push(array::get(ary, j as usize));
        j += step;
    }
    Ok(array::from_vec(ctx, out))
}

/// `Range#step`.
pub fn range_step(ctx: &mut Ctx, r: Value, args: &Args) -> Result<Value> {
    let (b, e, excl) = (crate::core::range::begin(r), crate::core::range::end(r), crate::core::range::excl(r));
    let step = args.pos.first().copied().unwrap_or(Value::fixnum(1));
    let numeric_range = (b.is_nil() || numeric::is_numeric(ctx, b)) && (e.is_nil() || numeric::is_numeric(ctx, e));
    if numeric_range {
        if !numeric::is_numeric(ctx, step) {
            let cname = object::class_name_of(ctx, step);
            return Err(ctx.type_error(&format!("no implicit conversion of {cname} into Integer")));
        }
        if object::equal(ctx, step, Value::fixnum(0))? {
            return Err(ctx.arg_error("step can't be 0"));
        }
        if ctx.call(step, sym::LT, &[Value::fixnum(0)])?.truthy() && args.block.is_some() {
            return Err(ctx.arg_error("step can't be negative"));
        }
        let seq = arith_new(ctx, b, e, step, excl, true);
        if let Some(blk) = args.block {
            as_each(ctx, seq, &Args { pos: &[], kw: None, block: Some(blk) })?;
            return Ok(r);
        }
        return Ok(seq);
    }
    let n = integer::to_i64_arg(ctx, step)?;
    if n < 0 {
        return Err(ctx.arg_error("step can't be negative"));
    }
    if n == 0 {
        return Err(ctx.arg_error("step can't be 0"));
    }
    let Some(blk) = args.block else {
        return enum_for(ctx, r, "step", args.pos, None);
    };
    let mut i = 0i64;
    crate::core::range::each_value(ctx, r, &mut |ctx, v| {
        if i % n == 0 {
            ctx.yield1(&blk, v)?;
        }
        i += 1;
        Ok(true)
    })?;
    Ok(r)
}

/// `Numeric#step(limit = nil, step = 1, by: nil, to: nil)`.
pub fn numeric_step(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut limit = args.pos.first().copied().unwrap_or(Value::NIL);
    let mut step = args.pos.get(1).copied().unwrap_or(Value::UNDEF);
    if let Some(by) = args.kwarg(ctx, "by") {
        if !step.is_undef() {
            return Err(ctx.arg_error("step is given twice"));
        }
        step = by;
    }
    if let Some(to) = args.kwarg(ctx, "to") {
        if !args.pos.is_empty() {
            return Err(ctx.arg_error("to is given twice"));
        }
        limit = to;
    }
    if step.is_undef() {
        step = Value::fixnum(1);
    }
    if step.is_nil() {
        if args.block.is_some() || args.pos.len() > 1 {
            return Err(ctx.type_error("no implicit conversion from nil to integer"));
        }
        step = Value::fixnum(1);
    }
    if !numeric::is_numeric(ctx, step) {
        let cname = object::class_name_of(ctx, step);
        return Err(ctx.type_error(&format!("no implicit conversion of {cname} into Integer")));
    }
    if args.block.is_some() && object::equal(ctx, step, Value::fixnum(0))? {
        return Err(ctx.arg_error("step can't be 0"));
    }
    let seq = arith_new(ctx, recv, limit, step, false, false);
    match args.block {
        Some(b) => {
            as_each(ctx, seq, &Args { pos: &[], kw: None, block: Some(b) })?;
            Ok(recv)
        }
        None => Ok(seq),
    }
}

fn s_produce(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    let p = crate::core::proc::from_block(ctx, &b)?;
    let init = args.pos.first().copied().unwrap_or(Value::UNDEF);
    let holder = array::from_slice(ctx, &[p, init]);
    let inf = float::new(ctx, f64::INFINITY);
    enum_for(ctx, holder, "__produce_each__", &[], Some(inf))
}

fn produce_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    let p = array::get(recv, 0);
    let mut cur = array::get(recv, 1);
    if cur.is_undef() {
        cur = ctx.call_proc(p, &[], None)?;
    }
    loop {
        ctx.yield1(&b, cur)?;
        cur = match ctx.call_proc(p, &[cur], None) {
            Ok(v) => v,
            Err(Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().stop_iteration) => return Ok(Value::NIL),
            Err(e) => return Err(e),
        };
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().enumerator;
    crate::methods!(ctx, c, [
        ("new", s_new, [0..=1], Safe, Singleton),
        ("produce", s_produce, [0..=1], Safe, Singleton),
        ("each", m_each, [0..], Safe),
        ("size", m_size, [0], Safe),
        ("with_index", m_with_index, [0..=1], Safe),
        ("each_with_index", m_each_with_index, [0], Safe),
        ("with_object", m_with_object, [1], Safe),
        ("each_with_object", m_with_object, [1], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_s", m_inspect, [0], Safe),
        ("next", m_next, [0], Unsafe),
        ("peek", m_peek, [0], Unsafe),
        ("rewind", m_rewind, [0], Unsafe),
        ("next_values", m_next_values, [0], Unsafe),
        ("peek_values", m_peek_values, [0], Unsafe),
        ("feed", m_feed, [1], Unsafe),
        ("+", m_plus, [1], Safe),
    ]);
    let a = ctx.c().array;
    crate::methods!(ctx, a, [("__produce_each__", produce_each, [0], Safe, Private)]);
    let y = ctx.c().yielder;
    crate::methods!(ctx, y, [
        ("yield", y_yield, [0..], Safe),
        ("call", y_yield, [0..], Safe),
        ("<<", y_push, [1], Safe),
        ("to_proc", y_to_proc, [0], Safe),
    ]);
    let ch = ctx.c().chain;
    crate::methods!(ctx, ch, [
        ("each", chain_each, [0], Safe),
        ("size", chain_size, [0], Safe),
    ]);
    let s = ctx.c().arith_seq;
    crate::methods!(ctx, s, [
        ("each", as_each, [0], Safe),
        ("to_a", as_to_a, [0], Safe),
        ("entries", as_to_a, [0], Safe),
        ("size", as_size, [0], Safe),
        ("first", as_first, [0..=1], Safe),
        ("last", as_last, [0..=1], Safe),
        ("begin", as_begin, [0], Safe),
        ("end", as_end, [0], Safe),
        ("step", as_step, [0], Safe),
        ("exclude_end?", as_excl, [0], Safe),
        ("inspect", as_inspect, [0], Safe),
        ("to_s", as_inspect, [0], Safe),
        ("==", as_eq, [1], Safe),
        ("===", as_eq, [1], Safe),
        ("eql?", as_eq, [1], Safe),
    ]);
}
