//! `TracePoint`: hooks called on interpreter events (`:line`, `:call`, `:return`,
//! `:c_call`, `:c_return`, `:b_call`, `:b_return`, `:class`, `:end`, `:raise`,
//! `:thread_begin`, `:thread_end`, `:fiber_switch`, `:rescue`, `:script_compiled`).
//!
//! Invariants:
//! - `Vm::tracepoints` lists the enabled TracePoints (GC roots) and `Vm::tracing` says
//!   whether it is non-empty. While no TracePoint is enabled the interpreter runs its
//!   untraced dispatch loop, which has no event checks at all (`interp::exec` switches to the
//!   traced instance of the loop when `tracing` changes); builtin calls, unwinding, threads
//!   and fiber switches test `tracing` once. A running `Coverage` turns `tracing` on too.
//! - Events are not reported while a hook of the same thread runs (no recursion).
//! - A TracePoint's event attributes (`event`, `lineno`, `return_value` …) exist only during
//!   its hook; outside it they raise RuntimeError "access from outside".

use crate::core::{array, module, object, string};
use crate::interp::frame::FrameKind;
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const LINE: u32 = 1 << 0;
pub const CALL: u32 = 1 << 1;
pub const RETURN: u32 = 1 << 2;
pub const C_CALL: u32 = 1 << 3;
pub const C_RETURN: u32 = 1 << 4;
pub const B_CALL: u32 = 1 << 5;
pub const B_RETURN: u32 = 1 << 6;
pub const CLASS: u32 = 1 << 7;
pub const END: u32 = 1 << 8;
pub const RAISE: u32 = 1 << 9;
pub const THREAD_BEGIN: u32 = 1 << 10;
pub const THREAD_END: u32 = 1 << 11;
pub const FIBER_SWITCH: u32 = 1 << 12;
pub const RESCUE: u32 = 1 << 13;
pub const SCRIPT_COMPILED: u32 = 1 << 14;

const NAMES: &[(&str, u32)] = &[
    ("line", LINE),
    ("call", CALL),
    ("return", RETURN),
    ("c_call", C_CALL),
    ("c_return", C_RETURN),
    ("b_call", B_CALL),
    ("b_return", B_RETURN),
    ("class", CLASS),
    ("end", END),
    ("raise", RAISE),
    ("thread_begin", THREAD_BEGIN),
    ("thread_end", THREAD_END),
    ("fiber_switch", FIBER_SWITCH),
    ("rescue", RESCUE),
    ("script_compiled", SCRIPT_COMPILED),
];

/// What a hook sees of the event being reported.
#[derive(Clone, Copy)]
struct Event {
    kind: u32,
    path: Value,
    lineno: i64,
    method_id: Option<SymId>,
    defined_class: Value,
    self_: Value,
    return_value: Value,
    raised: Value,
    /// The Ruby frame of the event (for `binding`), if any.
    frame: Option<usize>,
    /// A `:call`/`:return` of a method: its parameters come from this entry's iseq.
    iseq: Value,
    /// `:script_compiled`: the source given to `eval` (nil for a file).
    eval_script: Value,
}

pub struct TracePointObj {
    events: u32,
    hook: Value,
    enabled: bool,
    /// `enable(target:)`: the iseq whose events alone are reported, with the iseqs of
    /// the blocks inside it (nil / empty: all).
    target: Value,
    target_iseqs: Vec<Value>,
    /// `enable(target_line:)`: only `:line` events of this line.
    target_line: Option<i64>,
    /// `enable(target_thread:)`: only events of this thread (nil: all).
    target_thread: Value,
    current: Option<Event>,
}

crate::data_obj!(TracePointObj, |t, m| {
    m.mark(t.hook);
    m.mark(t.target);
    m.mark_all(&t.target_iseqs);
    m.mark(t.target_thread);
    if let Some(e) = &t.current {
        for v in [e.path, e.defined_class, e.self_, e.return_value, e.raised, e.iseq, e.eval_script] {
            m.mark(v);
        }
    }
});

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut TracePointObj> {
    data_ref::<TracePointObj>(v).ok_or_else(|| ctx.type_error("not a TracePoint"))
}

/// Whether any TracePoint is enabled (the one test the untraced paths make).
#[inline(always)]
pub fn tracing(ctx: &Ctx) -> bool {
    ctx.vm().tracing.load(std::sync::atomic::Ordering::Relaxed)
}

/// The events some enabled TracePoint wants, for thread `ctx` (0 inside a hook).
fn wanted(ctx: &Ctx) -> u32 {
    if ctx.trace_hook_depth > 0 {
        return 0;
    }
    ctx.vm().tracepoints.borrow().iter().filter_map(|&t| data_ref::<TracePointObj>(t)).fold(0, |a, t| a | t.events)
}

/// Sets `Vm::tracing` from the enabled TracePoints and a running `Coverage`.
pub fn refresh(ctx: &Ctx) {
    let on = !ctx.vm().tracepoints.borrow().is_empty() || crate::stdlib::coverage::running(ctx);
    ctx.vm().tracing.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Calls the hooks of the enabled TracePoints that want `ev`: as in CRuby, the global
/// ones first (in the order they were enabled), then the ones enabled with `target:`
/// (the last enabled first).
fn fire(ctx: &mut Ctx, ev: Event) -> Result<()> {
    let all: Vec<Value> = ctx.vm().tracepoints.borrow().clone();
    let targeted = |tp: &Value| data_ref::<TracePointObj>(*tp).is_some_and(|t| !t.target.is_nil());
    let mut tps: Vec<Value> = all.iter().copied().filter(|tp| !targeted(tp)).collect();
    tps.extend(all.iter().rev().copied().filter(|tp| targeted(tp)));
    for tp in tps {
        let Some(t) = data_ref::<TracePointObj>(tp) else { continue };
        if !t.enabled || t.events & ev.kind == 0 {
            continue;
        }
        if !t.target_thread.is_nil() && t.target_thread != ctx.thread_obj && !(ctx.thread_obj.is_nil() && t.target_thread == ctx.vm().main_thread.get()) {
            continue;
        }
        if !t.target.is_nil() && !t.target_iseqs.contains(&ev.iseq) {
            continue;
        }
        if t.target_line.is_some_and(|l| ev.kind == LINE && ev.lineno != l) {
            continue;
        }
        let hook = t.hook;
        t.current = Some(ev);
        ctx.trace_hook_depth += 1;
        let r = ctx.yield1(&crate::interp::frame::Block::Proc(hook), tp);
        ctx.trace_hook_depth -= 1;
        if let Some(t) = data_ref::<TracePointObj>(tp) {
            t.current = None;
        }
        r?;
    }
    Ok(())
}

fn frame_event(ctx: &Ctx, kind: u32, fi: usize) -> Event {
    let f = &ctx.stacks.frames[fi];
    let (path, lineno, iseq) = if f.iseq.is_null() {
        (Value::NIL, 0, Value::NIL)
    } else if kind & (CALL | B_CALL | CLASS) != 0 {
        // Entering: the line of the `def`, the block or the `class`.
        (Value::NIL, f.iseq().first_line as i64, f.iseq_val)
    } else {
        (Value::NIL, f.line() as i64, f.iseq_val)
    };
    Event { kind, path, lineno, method_id: f.mid, defined_class: f.owner, self_: f.self_, return_value: Value::NIL, raised: Value::NIL, frame: Some(fi), iseq: method_iseq(ctx, fi, iseq), eval_script: Value::NIL }
}

/// The iseq `enable(target:)` compares with: a block's own iseq, a method's body.
fn method_iseq(_ctx: &Ctx, _fi: usize, iseq: Value) -> Value {
    iseq
}

/// A frame at its first instruction: `:call`, `:b_call` or `:class`.
pub fn frame_entered(ctx: &mut Ctx, fi: usize) -> Result<()> {
    let kind = match ctx.stacks.frames[fi].kind {
        FrameKind::Method => CALL,
        FrameKind::Block | FrameKind::Lambda => B_CALL,
        FrameKind::Class => CLASS,
        _ => return Ok(()),
    };
    if wanted(ctx) & kind == 0 {
        return Ok(());
    }
    let ev = frame_event(ctx, kind, fi);
    fire(ctx, ev)
}

/// A frame returning `v`: `:return`, `:b_return` or `:end`.
pub fn frame_leaving(ctx: &mut Ctx, fi: usize, v: Value) -> Result<()> {
    let kind = match ctx.stacks.frames[fi].kind {
        FrameKind::Method => RETURN,
        FrameKind::Block | FrameKind::Lambda => B_RETURN,
        FrameKind::Class => END,
        _ => return Ok(()),
    };
    if wanted(ctx) & kind == 0 {
        return Ok(());
    }
    let mut ev = frame_event(ctx, kind, fi);
    ev.return_value = v;
    fire(ctx, ev)
}

/// Frame `fi` starts line `line`.
pub fn line(ctx: &mut Ctx, fi: usize, line: u32) -> Result<()> {
    if ctx.vm().coverage.borrow().is_some() {
        let path = ctx.stacks.frames[fi].iseq().path.clone();
        crate::stdlib::coverage::hit(ctx, &path, line);
    }
    if wanted(ctx) & LINE == 0 {
        return Ok(());
    }
    let mut ev = frame_event(ctx, LINE, fi);
    ev.lineno = line as i64;
    fire(ctx, ev)
}

/// Around a builtin call: `:c_call` before (`done` None) and `:c_return` after.
pub fn c_event(ctx: &mut Ctx, recv: Value, owner: Value, mid: SymId, done: Option<Value>) -> Result<()> {
    let kind = if done.is_some() { C_RETURN } else { C_CALL };
    if wanted(ctx) & kind == 0 {
        return Ok(());
    }
    let fi = ctx.stacks.frames.iter().rposition(|f| f.kind != FrameKind::Builtin);
    let lineno = fi.map_or(0, |i| ctx.stacks.frames[i].line() as i64);
    let ev = Event { kind, path: Value::NIL, lineno, method_id: Some(mid), defined_class: owner, self_: recv, return_value: done.unwrap_or(Value::NIL), raised: Value::NIL, frame: fi, iseq: Value::NIL, eval_script: Value::NIL };
    fire(ctx, ev)
}

/// An exception starting to unwind the innermost Ruby frame.
pub fn raised(ctx: &mut Ctx, exc: Value) -> Result<()> {
    if wanted(ctx) & RAISE == 0 {
        return Ok(());
    }
    let Some(fi) = ctx.stacks.frames.iter().rposition(|f| f.kind != FrameKind::Builtin && !f.iseq.is_null()) else { return Ok(()) };
    let mut ev = frame_event(ctx, RAISE, fi);
    ev.raised = exc;
    fire(ctx, ev)
}

/// Frame `fi` enters the handler of a `rescue` for `exc` (`:rescue`, before the
/// exception classes are matched, as in CRuby).
pub fn rescue_entered(ctx: &mut Ctx, fi: usize, exc: Value) -> Result<()> {
    if wanted(ctx) & RESCUE == 0 {
        return Ok(());
    }
    let mut ev = frame_event(ctx, RESCUE, fi);
    ev.raised = exc;
    fire(ctx, ev)
}

/// `:script_compiled`: code was compiled for `eval` (`src`, its source) or from a file
/// (`src` nil), reported at the Ruby code that asked for it.
pub fn script_compiled(ctx: &mut Ctx, src: Value) -> Result<()> {
    if wanted(ctx) & SCRIPT_COMPILED == 0 {
        return Ok(());
    }
    let Some(fi) = ctx.stacks.frames.iter().rposition(|f| f.kind != FrameKind::Builtin && !f.iseq.is_null()) else { return Ok(()) };
    let mut ev = frame_event(ctx, SCRIPT_COMPILED, fi);
    ev.eval_script = src;
    fire(ctx, ev)
}

/// `:thread_begin`, `:thread_end`, `:fiber_switch`.
pub fn simple(ctx: &mut Ctx, kind: u32) -> Result<()> {
    if wanted(ctx) & kind == 0 {
        return Ok(());
    }
    let self_ = if kind == FIBER_SWITCH { ctx.fiber_obj } else { ctx.thread_obj };
    let ev = Event { kind, path: Value::NIL, lineno: 0, method_id: None, defined_class: Value::NIL, self_, return_value: Value::NIL, raised: Value::NIL, frame: None, iseq: Value::NIL, eval_script: Value::NIL };
    fire(ctx, ev)
}

// ---- the TracePoint class ----

fn events_from_args(ctx: &mut Ctx, args: &[Value]) -> Result<u32> {
    if args.is_empty() {
        return Ok(NAMES.iter().filter(|(n, _)| !matches!(*n, "thread_begin" | "thread_end" | "fiber_switch" | "rescue" | "script_compiled")).fold(0, |a, (_, b)| a | b));
    }
    let mut mask = 0;
    for &a in args {
        let a = if a.is_symbol() || string::is_string(a) {
            a
        } else if ctx.respond_to(a, ctx.intern("to_sym"), true) {
            ctx.call_str(a, "to_sym", &[])?
        } else {
            let s = object::inspect_string(ctx, a)?;
            return Err(ctx.type_error(&format!("{s} is not a symbol nor a string")));
        };
        let id = crate::core::symbol::to_sym_id(ctx, a)?;
        let name = ctx.sym_str(id);
        let bit = match name.as_str() {
            "a_call" => CALL | B_CALL | C_CALL,
            "a_return" => RETURN | B_RETURN | C_RETURN,
            n => match NAMES.iter().find(|(k, _)| *k == n) {
                Some(&(_, b)) => b,
                None => return Err(ctx.arg_error(&format!("unknown event: {n}"))),
            },
        };
        mask |= bit;
    }
    Ok(mask)
}

fn new_tracepoint(ctx: &mut Ctx, klass: Value, args: &Args) -> Result<Value> {
    let events = events_from_args(ctx, args.pos)?;
    let Some(b) = args.block else {
        return Err(ctx.arg_error("must be called with a block"));
    };
    let hook = crate::core::proc::from_block(ctx, &b)?;
    let t = TracePointObj { events, hook, enabled: false, target: Value::NIL, target_iseqs: Vec::new(), target_line: None, target_thread: Value::NIL, current: None };
    Ok(object::new_data(ctx, klass, Box::new(t)))
}

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    new_tracepoint(ctx, recv, args)
}

/// `TracePoint.trace(*events) { }`: a new TracePoint, enabled.
fn s_trace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let tp = new_tracepoint(ctx, recv, args)?;
    set_enabled(ctx, tp, true);
    Ok(tp)
}

fn s_stat(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(crate::core::hash::new(ctx))
}

fn s_allow_reentry(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    if ctx.trace_hook_depth == 0 {
        return Err(ctx.raise(ctx.c().runtime_error, "No need to allow reentrance."));
    }
    let saved = std::mem::replace(&mut ctx.trace_hook_depth, 0);
    let r = ctx.yield_block(&b, &[]);
    ctx.trace_hook_depth = saved;
    r
}

fn set_enabled(ctx: &mut Ctx, tp: Value, on: bool) {
    let Some(t) = data_ref::<TracePointObj>(tp) else { return };
    t.enabled = on;
    let mut list = ctx.vm().tracepoints.borrow_mut();
    list.retain(|&x| x != tp);
    if on {
        list.push(tp);
    }
    drop(list);
    refresh(ctx);
}

/// The iseq of an `enable(target:)` argument (a Method, UnboundMethod or Proc of Ruby code).
fn target_iseq(ctx: &mut Ctx, target: Value) -> Result<Value> {
    if crate::core::proc::is_proc(target) {
        if let Some(c) = crate::core::proc::captured(target) {
            return Ok(c.iseq);
        }
    } else if let Some(me) = crate::core::method::method_entry_of(target) {
        if let module::MethodBody::Iseq { iseq, .. } = me.body {
            return Ok(iseq);
        }
    }
    Err(ctx.arg_error("specified target is not supported"))
}

/// The events code of `iseq` itself can report (for `enable(target:)`).
fn events_of_iseq(iseq: Value) -> u32 {
    use crate::compile::iseq::IseqKind;
    let i = crate::compile::iseq::iseq_of(iseq);
    let own = match i.kind {
        IseqKind::Method => CALL | RETURN,
        IseqKind::Block => B_CALL | B_RETURN,
        IseqKind::Class => CLASS | END,
        _ => 0,
    };
    let calls = if i.calls.is_empty() { 0 } else { C_CALL | C_RETURN };
    own | calls | LINE | RAISE | RESCUE
}

/// The iseq and the iseqs of the blocks inside it.
fn with_children(iseq: Value, out: &mut Vec<Value>) {
    out.push(iseq);
    for &c in &crate::compile::iseq::iseq_of(iseq).children {
        with_children(c, out);
    }
}

/// `enable(target: nil, target_line: nil, target_thread: nil) { }`.
fn m_enable(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let was = get(ctx, recv)?.enabled;
    let target = args.kwarg(ctx, "target").unwrap_or(Value::NIL);
    let line = args.kwarg(ctx, "target_line").unwrap_or(Value::NIL);
    // `target_thread: nil` given explicitly: every thread, even with a block.
    let thread_kw = args.kwarg(ctx, "target_thread");
    let thread = thread_kw.unwrap_or(Value::NIL);
    if !get(ctx, recv)?.target.is_nil() || (was && !target.is_nil()) {
        return Err(ctx.arg_error("can't nest-enable a targeting TracePoint"));
    }
    let line = if line.is_nil() {
        None
    } else {
        if target.is_nil() {
            return Err(ctx.arg_error("only target_line is specified"));
        }
        if get(ctx, recv)?.events & LINE == 0 {
            return Err(ctx.arg_error("target_line is specified, but line event is not specified"));
        }
        Some(crate::core::integer::to_i64_arg(ctx, line)?)
    };
    if !target.is_nil() {
        let iseq = target_iseq(ctx, target)?;
        let mut all = Vec::new();
        with_children(iseq, &mut all);
        if get(ctx, recv)?.events & all.iter().fold(0, |a, &i| a | events_of_iseq(i)) == 0 {
            return Err(ctx.arg_error("can not enable any hooks"));
        }
        if let Some(l) = line {
            let covers = all.iter().any(|&i| crate::compile::iseq::iseq_of(i).lines.iter().any(|&x| x as i64 == l));
            if !covers {
                return Err(ctx.arg_error("can not enable any hooks"));
            }
        }
        let t = get(ctx, recv)?;
        t.target = iseq;
        t.target_iseqs = all;
        t.target_line = line;
    }
    let t = get(ctx, recv)?;
    if !thread.is_nil() {
        t.target_thread = thread;
    } else if args.block.is_some() && target.is_nil() && thread_kw.is_none() {
        // With a block and no target, CRuby reports only the current thread's events.
        t.target_thread = ctx.thread_obj;
    }
    set_enabled(ctx, recv, true);
    let Some(b) = args.block else { return Ok(Value::bool(was)) };
    let r = ctx.yield_block(&b, &[]);
    set_enabled(ctx, recv, was);
    if let Some(t) = data_ref::<TracePointObj>(recv) {
        t.target = Value::NIL;
        t.target_iseqs.clear();
        t.target_line = None;
        t.target_thread = Value::NIL;
    }
    r
}

fn m_disable(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let was = get(ctx, recv)?.enabled;
    if args.block.is_some() && !get(ctx, recv)?.target.is_nil() {
        return Err(ctx.arg_error("can't disable a targeting TracePoint in a block"));
    }
    set_enabled(ctx, recv, false);
    if let Some(t) = data_ref::<TracePointObj>(recv) {
        if args.block.is_none() {
            t.target = Value::NIL;
            t.target_iseqs.clear();
            t.target_line = None;
        }
    }
    let Some(b) = args.block else { return Ok(Value::bool(was)) };
    let r = ctx.yield_block(&b, &[]);
    set_enabled(ctx, recv, was);
    r
}

fn m_enabled_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.enabled))
}

fn current(ctx: &mut Ctx, recv: Value) -> Result<Event> {
    match get(ctx, recv)?.current {
        Some(e) => Ok(e),
        None => Err(ctx.raise(ctx.c().runtime_error, "access from outside")),
    }
}

fn event_name(kind: u32) -> &'static str {
    NAMES.iter().find(|(_, b)| *b == kind).map_or("unknown", |(n, _)| n)
}

fn m_event(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    Ok(Value::symbol(ctx.intern(event_name(e.kind))))
}

fn m_lineno(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(current(ctx, recv)?.lineno))
}

fn m_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    let path = match e.frame {
        Some(fi) if fi < ctx.stacks.frames.len() && !ctx.stacks.frames[fi].iseq.is_null() => ctx.stacks.frames[fi].iseq().path.to_string(),
        _ => return Ok(e.path),
    };
    Ok(string::new_utf8(ctx, &path))
}

fn m_method_id(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    Ok(match e.method_id {
        Some(id) if e.kind & (LINE | CALL | RETURN | C_CALL | C_RETURN | B_CALL | B_RETURN | RAISE) != 0 => {
            // The original name of an aliased method.
            let id = if module::is_class_or_module(e.defined_class) { module::body(e.defined_class).methods.get(&id).map_or(id, |me| me.original_name) } else { id };
            Value::symbol(id)
        }
        _ => Value::NIL,
    })
}

fn m_callee_id(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    Ok(e.method_id.map_or(Value::NIL, Value::symbol))
}

fn m_defined_class(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(current(ctx, recv)?.defined_class)
}

fn m_self(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(current(ctx, recv)?.self_)
}

fn m_return_value(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    if e.kind & (RETURN | C_RETURN | B_RETURN) == 0 {
        return Err(ctx.raise(ctx.c().runtime_error, "not supported by this event"));
    }
    Ok(e.return_value)
}

fn m_raised_exception(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    if e.kind & (RAISE | RESCUE) == 0 {
        return Err(ctx.raise(ctx.c().runtime_error, "not supported by this event"));
    }
    Ok(e.raised)
}

fn m_eval_script(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    if e.kind != SCRIPT_COMPILED {
        return Err(ctx.raise(ctx.c().runtime_error, "not supported by this event"));
    }
    Ok(e.eval_script)
}

fn m_binding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    match e.frame {
        Some(fi) if e.kind & (C_CALL | C_RETURN) == 0 && fi < ctx.stacks.frames.len() && !ctx.stacks.frames[fi].iseq.is_null() => crate::core::binding::from_frame(ctx, fi),
        _ => Ok(Value::NIL),
    }
}

fn m_parameters(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = current(ctx, recv)?;
    if e.kind & (CALL | RETURN | B_CALL | B_RETURN | C_CALL | C_RETURN) == 0 {
        return Err(ctx.raise(ctx.c().runtime_error, "not supported by this event"));
    }
    if e.iseq.is_nil() {
        return Ok(array::new(ctx));
    }
    let lambda = e.kind & (CALL | RETURN) != 0 || e.frame.is_some_and(|fi| fi < ctx.stacks.frames.len() && ctx.stacks.frames[fi].kind == FrameKind::Lambda);
    Ok(crate::core::proc::parameters_of(ctx, e.iseq, lambda))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let s = match t.current {
        None => format!("#<TracePoint:{}>", if t.enabled { "enabled" } else { "disabled" }),
        Some(e) => {
            let name = event_name(e.kind);
            let path = match e.frame {
                Some(fi) if fi < ctx.stacks.frames.len() && !ctx.stacks.frames[fi].iseq.is_null() => ctx.stacks.frames[fi].iseq().path.to_string(),
                _ => String::new(),
            };
            match e.kind {
                LINE => format!("#<TracePoint:line {path}:{}>", e.lineno),
                CALL | C_CALL | RETURN | C_RETURN => {
                    let m = e.method_id.map(|id| ctx.sym_str(id)).unwrap_or_default();
                    format!("#<TracePoint:{name} '{m}' {path}:{}>", e.lineno)
                }
                THREAD_BEGIN | THREAD_END => {
                    let th = crate::core::object::inspect_string(ctx, e.self_)?;
                    format!("#<TracePoint:{name} {th}>")
                }
                _ => format!("#<TracePoint:{name} {path}:{}>", e.lineno),
            }
        }
    };
    Ok(string::new_utf8(ctx, &s))
}

pub fn init(ctx: &mut Ctx) {
    let obj = ctx.c().object;
    let tp = crate::core::module_methods::define_class_under(ctx, obj, "TracePoint", obj);
    crate::methods!(ctx, tp, [
        ("new", s_new, [0..], Safe, Singleton),
        ("trace", s_trace, [0..], Safe, Singleton),
        ("stat", s_stat, [0], Safe, Singleton),
        ("allow_reentry", s_allow_reentry, [0], Safe, Singleton),
        ("enable", m_enable, [0], Safe, Kw),
        ("disable", m_disable, [0], Safe),
        ("enabled?", m_enabled_p, [0], Safe),
        ("event", m_event, [0], Safe),
        ("lineno", m_lineno, [0], Safe),
        ("path", m_path, [0], Safe),
        ("method_id", m_method_id, [0], Safe),
        ("callee_id", m_callee_id, [0], Safe),
        ("defined_class", m_defined_class, [0], Safe),
        ("self", m_self, [0], Safe),
        ("return_value", m_return_value, [0], Safe),
        ("raised_exception", m_raised_exception, [0], Safe),
        ("binding", m_binding, [0], Safe),
        ("eval_script", m_eval_script, [0], Safe),
        ("parameters", m_parameters, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
    ]);
}
