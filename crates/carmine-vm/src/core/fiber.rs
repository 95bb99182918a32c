//! Fiber (the Ruby class) and external iteration of enumerators (`Enumerator#next`).
//!
//! The switching machinery is in `crate::fiber`; this file is the Ruby-facing surface.
//!
//! Invariants:
//! - An enumerator's cursor (`EnumObj::cursor`) is an `EnumCursor` Data object, or nil
//!   before the first `next`/`peek` and after `rewind`.
//! - The cursor's fiber runs the enumerator's `each` with a native block that hands each
//!   yielded value to `next` through `Fiber.yield`; what `feed` set (or nil) is handed back
//!   as that block's value.

use crate::core::enumerator::EnumObj;
use crate::core::{array, hash, object};
use crate::error::Unwind;
use crate::fiber::{self, Body};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn fiber_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if fiber::data(v).is_some() {
        Ok(v)
    } else {
        Err(ctx.type_error("uninitialized fiber"))
    }
}

fn symbol_key(ctx: &mut Ctx, k: Value) -> Result<Value> {
    if k.is_symbol() {
        Ok(k)
    } else {
        let cname = object::class_name_of(ctx, k);
        Err(ctx.type_error(&format!("wrong argument type {cname} (expected Symbol)")))
    }
}

/// A `Fiber[]` / `Fiber[]=` key: a Symbol, or a String (or an object with `to_str`) as the
/// Symbol of its text (Ruby 3.4); `to_sym` is not called.
fn access_key(ctx: &mut Ctx, k: Value) -> Result<Value> {
    if k.is_symbol() {
        return Ok(k);
    }
    match crate::core::string::try_to_str(ctx, k)? {
        Some(s) => Ok(Value::symbol(ctx.intern_bytes(crate::core::string::bytes(s)))),
        None => symbol_key(ctx, k),
    }
}

/// Checks a Hash given as a fiber's storage: not frozen, Symbol keys only.
fn check_storage_hash(ctx: &mut Ctx, h: Value) -> Result<()> {
    ctx.check_frozen(h)?;
    for (k, _) in hash::pairs(h) {
        symbol_key(ctx, k)?;
    }
    Ok(())
}

/// `Fiber.new(blocking: false, storage: true) { |*args| … }`.
/// `Fiber#initialize(blocking: false, storage: true) { ... }`; `Fiber.new` is allocate +
/// initialize, so subclasses' and reopened `initialize` methods run.
fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if fiber::data(recv).is_some() {
        return Err(ctx.runtime_error("cannot initialize twice"));
    }
    if !args.pos.is_empty() {
        return Err(ctx.arity_error(args.pos.len(), 0, Some(0)));
    }
    let mut blocking = false;
    let mut storage = Value::TRUE;
    if let Some(kw) = args.kw {
        for (k, v) in hash::pairs(kw) {
            let name = k.as_symbol().map(|s| ctx.sym_str(s)).unwrap_or_default();
            match name.as_str() {
                "blocking" => blocking = v.truthy(),
                "storage" => storage = v,
                _ => {
                    let s = object::inspect_string(ctx, k)?;
                    return Err(ctx.arg_error(&format!("unknown keyword: {s}")));
                }
            }
        }
    }
    let Some(b) = args.block else {
        return Err(ctx.arg_error("tried to create Proc object without a block"));
    };
    let storage = if storage == Value::TRUE {
        fiber::inherited_storage(ctx)
    } else if storage.is_nil() {
        Value::NIL
    } else if hash::is_hash(storage) {
        check_storage_hash(ctx, storage)?;
        storage
    } else {
        let cname = object::class_name_of(ctx, storage);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Hash)")));
    };
    let p = crate::core::proc::from_block(ctx, &b)?;
    let klass = object::real_class_of(ctx, recv);
    let f = fiber::new_fiber(ctx, klass, Body::Proc(p), blocking, storage);
    crate::object::move_data(recv, f);
    Ok(Value::NIL)
}

/// True when `f` is the builtin behind `Fiber.yield` and `Fiber#resume`, which the dispatch
/// loop calls directly (`fiber::switch_from_loop`).
#[inline(always)]
pub fn is_switch(f: crate::core::module::BuiltinFn) -> bool {
    std::ptr::fn_addr_eq(f, switch as crate::core::module::BuiltinFn)
}

/// `Fiber.yield` and `Fiber#resume`: one builtin (see `fiber::switch_builtin`).
fn switch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    fiber::switch_builtin(ctx, recv, args.pos)
}

fn s_current(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(fiber::current(ctx))
}

fn s_aref(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let k = access_key(ctx, args.pos[0])?;
    let cur = fiber::current(ctx);
    let s = fiber::storage(cur);
    Ok(if s.is_nil() { Value::NIL } else { hash::get(s, k).unwrap_or(Value::NIL) })
}

fn s_aset(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let k = access_key(ctx, args.pos[0])?;
    let v = args.pos[1];
    let cur = fiber::current(ctx);
    let mut s = fiber::storage(cur);
    if s.is_nil() {
        s = hash::new(ctx);
        fiber::set_storage(cur, s);
    }
    if v.is_nil() {
        hash::delete(ctx, s, k)?;
    } else {
        hash::aset(ctx, s, k, v)?;
    }
    Ok(v)
}

/// `Fiber.set_scheduler(scheduler)`.
fn s_set_scheduler(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    fiber::scheduler::set(ctx, args.pos[0])
}

/// `Fiber.scheduler`: the thread's scheduler, whether or not the current fiber uses it.
fn s_scheduler(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(ctx.scheduler)
}

/// `Fiber.current_scheduler`: the scheduler when the current fiber is non-blocking.
fn s_current_scheduler(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(fiber::scheduler::active_user(ctx).unwrap_or(Value::NIL))
}

fn s_schedule(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    fiber::scheduler::schedule(ctx, args)
}

fn s_blocking_p(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let cur = fiber::current(ctx);
    Ok(if fiber::is_blocking(cur) { Value::fixnum(1) } else { Value::FALSE })
}

/// `Fiber.blocking { |fiber| … }` (Ruby 3.2): runs the block with the current fiber marked
/// blocking, then restores its flag (also when the block raises or breaks).
fn s_blocking(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    let cur = fiber::current(ctx);
    if fiber::is_blocking(cur) {
        return ctx.yield1(&b, cur);
    }
    fiber::set_blocking(cur, true);
    let r = ctx.yield1(&b, cur);
    fiber::set_blocking(cur, false);
    r
}

fn m_transfer(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    fiber::transfer(ctx, f, args.pos)
}

fn m_raise(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    fiber::raise_in(ctx, f, args.pos)
}

fn m_kill(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    fiber::kill(ctx, f)
}

fn m_alive_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    Ok(Value::bool(fiber::is_alive(f)))
}

fn m_blocking_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    Ok(Value::bool(fiber::is_blocking(f)))
}

fn check_storage_access(ctx: &mut Ctx, f: Value) -> Result<()> {
    if f != fiber::current(ctx) {
        return Err(ctx.arg_error("Fiber storage can only be accessed from the Fiber it belongs to"));
    }
    Ok(())
}

fn m_storage(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    check_storage_access(ctx, f)?;
    let s = fiber::storage(f);
    Ok(if s.is_nil() { hash::new(ctx) } else { hash::dup(ctx, s) })
}

fn m_set_storage(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    check_storage_access(ctx, f)?;
    let h = args.pos[0];
    if !h.is_nil() && !hash::is_hash(h) {
        let cname = object::class_name_of(ctx, h);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Hash)")));
    }
    if !h.is_nil() {
        check_storage_hash(ctx, h)?;
    }
    fiber::set_storage(f, h);
    Ok(h)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = fiber_arg(ctx, recv)?;
    let s = fiber::inspect(ctx, f);
    Ok(crate::core::string::new_utf8(ctx, &s))
}

// ---- Enumerator#next ----

/// External-iteration state of an enumerator.
pub struct EnumCursor {
    enumerator: Value,
    fiber: Value,
    /// A value fetched by `peek` and not yet returned by `next`: (packed, as next_values).
    lookahead: Option<(Value, Value, bool)>,
    /// The StopIteration raised once the iteration ended (raised again until `rewind`).
    stop: Value,
    /// What `feed` set: the value of the pending `yield` inside `each`.
    feed: Option<Value>,
    /// Values of the last yield: the single yielded value itself when `last_single` (the
    /// common case; `next_values` wraps it in an Array only when asked), else their Array.
    last_values: Value,
    last_single: bool,
}

crate::data_obj!(EnumCursor, |s, m| {
    m.mark(s.enumerator);
    m.mark(s.fiber);
    if let Some((a, b, _)) = s.lookahead {
        m.mark(a);
        m.mark(b);
    }
    m.mark(s.stop);
    if let Some(f) = s.feed {
        m.mark(f);
    }
    m.mark(s.last_values);
});

fn enum_obj<'a>(ctx: &mut Ctx, e: Value) -> Result<&'a mut EnumObj> {
    match data_ref::<EnumObj>(e) {
        Some(o) => Ok(o),
        None => Err(ctx.type_error("uninitialized enumerator")),
    }
}

fn cursor<'a>(v: Value) -> Option<&'a mut EnumCursor> {
    data_ref::<EnumCursor>(v)
}

/// The body of an enumerator's iterating fiber: runs `each`, handing every yielded value to
/// the fiber's resumer.
fn iterate(ctx: &mut Ctx, cur: Value) -> Result<Value> {
    let Some(c) = cursor(cur) else { return Ok(Value::NIL) };
    let e = c.enumerator;
    // The cursor's payload, looked up once: the collector does not move it, and `cur` stays
    // referenced by this fiber's body for as long as the fiber runs.
    let c: *mut EnumCursor = c;
    let mut hand_over = |ctx: &mut Ctx, args: &[Value]| -> Result<Value> {
        let single = args.len() == 1;
        let (values, packed) = if single {
            (args[0], args[0])
        } else {
            (array::from_slice(ctx, args), fiber::pack(ctx, args))
        };
        // SAFETY: see above.
        unsafe {
            (*c).last_values = values;
            (*c).last_single = single;
        }
        fiber::yield_(ctx, &[packed])
    };
    crate::core::proc::with_native_block(ctx, &mut hand_over, |ctx, b| crate::core::enumerator::run(ctx, e, b))
}

/// The external-iteration cursor of `e` and its payload, created on first use.
#[inline(always)]
fn cursor_of<'a>(ctx: &mut Ctx, e: Value) -> Result<(Value, &'a mut EnumCursor)> {
    let cur = enum_obj(ctx, e)?.cursor;
    if let Some(c) = cursor(cur) {
        return Ok((cur, c));
    }
    let c = EnumCursor { enumerator: e, fiber: Value::NIL, lookahead: None, stop: Value::NIL, feed: None, last_values: Value::NIL, last_single: true };
    let cur = crate::core::object::new_data(ctx, Value::NIL, Box::new(c));
    enum_obj(ctx, e)?.cursor = cur;
    Ok((cur, cursor(cur).expect("cursor")))
}

/// The next values of `e`'s iteration as (packed, values, single), advancing unless `peek`;
/// `values` is the lone yielded value when `single`, else the Array of them.
#[inline(always)]
fn next_values(ctx: &mut Ctx, e: Value, peek: bool) -> Result<(Value, Value, bool)> {
    // The collector does not move payloads, and `cur` stays referenced by `e` (the receiver,
    // on the caller's stack) for the whole call: the cursor's payload outlives every use of
    // `c` below, including across the resume.
    let (cur, c) = cursor_of(ctx, e)?;
    if let Some(la) = c.lookahead {
        if !peek {
            c.lookahead = None;
        }
        return Ok(la);
    }
    if !c.stop.is_nil() {
        return Err(Unwind::Raise(c.stop));
    }
    let (f, d) = match fiber::data(c.fiber) {
        Some(d) if d.is_alive() => (c.fiber, d),
        _ => {
            let klass = ctx.c().fiber;
            c.fiber = fiber::new_fiber(ctx, klass, Body::Native(iterate, cur), false, Value::NIL);
            (c.fiber, fiber::data(c.fiber).expect("a Fiber"))
        }
    };
    // A fed value is what the pending `yield` inside `each` returns, so it stays set until a
    // yield is pending: the first resume only starts `each`.
    let feed = if d.state == fiber::State::Created { Value::NIL } else { c.feed.take().unwrap_or(Value::NIL) };
    // `f` (a local, so also on the native stack) keeps `d` alive across the resume.
    let v = resume_cursor(ctx, c, f, d, feed)?;
    if !d.is_alive() {
        return Err(end_iteration(ctx, c, v));
    }
    let (values, single) = (c.last_values, c.last_single);
    if peek {
        c.lookahead = Some((v, values, single));
    }
    Ok((v, values, single))
}

/// Resumes the cursor's iterating fiber `f` (payload `d`) with `feed`; an error from it ends
/// the iteration (the next `next` starts over).
#[inline(always)]
fn resume_cursor(ctx: &mut Ctx, c: &mut EnumCursor, f: Value, d: &mut fiber::FiberData, feed: Value) -> Result<Value> {
    let r = fiber::resume_data(ctx, f, d, &[feed]);
    if r.is_err() {
        c.fiber = Value::NIL;
    }
    r
}

/// `each` returned `v`: the iteration is over, and `v` is the StopIteration's result.
#[cold]
fn end_iteration(ctx: &mut Ctx, c: &mut EnumCursor, v: Value) -> Unwind {
    let stop = ctx.new_error(ctx.c().stop_iteration, "iteration reached an end");
    object::ivar_set_raw(ctx, stop, crate::symbol::sym::RESULT, v);
    c.stop = stop;
    c.fiber = Value::NIL;
    Unwind::Raise(stop)
}

/// `e.next` called by the dispatch loop (`me` is `Enumerator#next`, no arguments): the
/// steady state of an external iteration, a resume of the suspended iterating fiber, without
/// a builtin call or frame. `None` (nothing done) in every other case, left to the builtin.
/// Errors from the fiber carry their own backtraces; the StopIteration at the end is made
/// under a builtin frame, as the builtin would.
pub fn next_from_loop(ctx: &mut Ctx, e: Value, me: &crate::core::module::MethodEntry) -> Option<Result<Value>> {
    let cur = data_ref::<EnumObj>(e)?.cursor;
    let c = cursor(cur)?;
    if c.lookahead.is_some() || !c.stop.is_nil() || c.feed.is_some() {
        return None;
    }
    let f = c.fiber;
    let d = fiber::data(f)?;
    if !fiber::resumable(ctx, d) {
        return None;
    }
    let v = match resume_cursor(ctx, c, f, d, Value::NIL) {
        Ok(v) => v,
        Err(err) => return Some(Err(err)),
    };
    if d.is_alive() {
        return Some(Ok(v));
    }
    let depth = ctx.stacks.frames.len();
    crate::interp::call::push_builtin_frame(ctx, e, me.owner, me.name);
    let stop = end_iteration(ctx, c, v);
    ctx.stacks.frames.truncate(depth);
    Some(Err(stop))
}

/// `Enumerator#next` / `#peek`.
#[inline(always)]
pub fn enumerator_next(ctx: &mut Ctx, e: Value, peek: bool) -> Result<Value> {
    next_values(ctx, e, peek).map(|(v, _, _)| v)
}

/// `Enumerator#next_values` / `#peek_values`.
pub fn enumerator_next_values(ctx: &mut Ctx, e: Value, peek: bool) -> Result<Value> {
    let (_, values, single) = next_values(ctx, e, peek)?;
    Ok(match (single, peek) {
        (true, _) => array::from_slice(ctx, &[values]),
        (false, true) => array::dup(ctx, values),
        (false, false) => values,
    })
}

/// `Enumerator#feed(v)`.
pub fn enumerator_feed(ctx: &mut Ctx, e: Value, v: Value) -> Result<Value> {
    let (_, c) = cursor_of(ctx, e)?;
    if c.feed.is_some() {
        return Err(ctx.type_error("feed value already set"));
    }
    c.feed = Some(v);
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().fiber;
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, c, [
        ("initialize", initialize, [0..], Unsafe, Private, Kw),
        ("yield", switch, [0..], Unsafe, Singleton),
        ("current", s_current, [0], Unsafe, Singleton),
        ("[]", s_aref, [1], Unsafe, Singleton),
        ("[]=", s_aset, [2], Unsafe, Singleton),
        ("blocking?", s_blocking_p, [0], Unsafe, Singleton),
        ("set_scheduler", s_set_scheduler, [1], Unsafe, Singleton),
        ("scheduler", s_scheduler, [0], Unsafe, Singleton),
        ("current_scheduler", s_current_scheduler, [0], Unsafe, Singleton),
        ("schedule", s_schedule, [0..], Unsafe, Singleton, Kw),
        ("blocking", s_blocking, [0], Unsafe, Singleton),
        ("resume", switch, [0..], Unsafe),
        ("transfer", m_transfer, [0..], Unsafe),
        ("raise", m_raise, [0..=3], Unsafe),
        ("kill", m_kill, [0], Unsafe),
        ("alive?", m_alive_p, [0], Unsafe),
        ("blocking?", m_blocking_p, [0], Unsafe),
        ("storage", m_storage, [0], Unsafe),
        ("storage=", m_set_storage, [1], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
        ("to_s", m_inspect, [0], Unsafe),
    ]);
}
