//! Enumerator (internal iteration) and Enumerator::Yielder/Generator.
//!
//! Invariants:
//! - An enumerator is (receiver, method, arguments) or a generator block; `each` with a
//!   block calls through. External iteration (`next`) runs the enumerator in a fiber.
//! - Enumerator::Lazy is in `lazy.rs`, Enumerator::ArithmeticSequence in `arith_seq.rs`;
//!   Enumerator::Chain in `enum_chain.rs`, Enumerator::Product in `enum_product.rs`;
//!   all are Enumerators over native generators.

use crate::core::{array, enumerable, float, integer, object, string};
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
            let a = if args.is_nil() { Vec::new() } else { array::to_vec(args) };
            if crate::core::proc::is_proc(v) {
                ctx.call_proc(v, &a, None)
            } else if v.is_heap() && ctx.respond_to(v, crate::symbol::sym::CALL, false) {
                // Any callable size object is called, as CRuby does.
                ctx.call(v, crate::symbol::sym::CALL, &a)
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
        return enum_for_sized(ctx, recv, "with_index", &[offset], SizeFn::Native(enumerable::enum_size));
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
        return enum_for_sized(ctx, recv, "each_with_index", &[], SizeFn::Native(enumerable::enum_size));
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
    if data_ref::<EnumObj>(recv).is_none() {
        return Ok(string::new_utf8(ctx, &format!("#<{cname}: uninitialized>")));
    }
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

/// Whether builtin `f` is `Enumerator#next`, which the dispatch loop calls directly in the
/// steady state of an external iteration (`core::fiber::next_from_loop`).
#[inline(always)]
pub fn is_next(f: crate::core::module::BuiltinFn) -> bool {
    std::ptr::fn_addr_eq(f, m_next as crate::core::module::BuiltinFn)
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

/// `Enumerator#initialize(size = nil) { |yielder| … }` (`Enumerator.new` is `Class#new`, so
/// subclasses' own `initialize` runs and can call `super`).
fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let Some(b) = args.block else {
        return Err(ctx.arg_error("no block given"));
    };
    let gen = crate::core::proc::from_block(ctx, &b)?;
    let size = match args.pos.first() {
        Some(&s) if !s.is_nil() => SizeFn::Value(s),
        _ => SizeFn::None,
    };
    let empty = array::new(ctx);
    crate::object::set_data(recv, Box::new(EnumObj { recv: Value::NIL, meth: sym::EACH, args: empty, kw: Value::NIL, size, generator: gen, cursor: Value::NIL }));
    Ok(recv)
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

fn s_produce(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(ctx.arg_error("no block given"));
    };
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
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, c, [
        ("initialize", m_initialize, [0..=1], Safe, Private),
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
}
