//! Thread (the Ruby class): native 1:1 threads sharing their VM's heap, run one at a time
//! under the giant lock for now (see `crate::thread::gl` and `docs/threads.md`).
//!
//! Invariants:
//! - A Thread object is listed in `Vm::threads` from `Thread.new` until its thread has
//!   ended, which keeps it (and its block) alive while no Ruby code refers to it.
//! - A thread's outcome (`value` or `exception`) is written once, under the GL, before its
//!   status becomes `Dead`; joiners wait for that status.

use std::time::{Duration, Instant};

use crate::core::{array, hash, kernel, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::thread::sched::{self, data, td, Entry, Status, ThreadData, PENDING_KILL, PENDING_RAISE};
use crate::thread::Ctx;
use crate::value::Value;
use crate::vm::Vm;
use crate::Result;

/// Value-stack slots of a thread made by `Thread.new` (touched lazily by the OS).
const THREAD_STACK_SLOTS: usize = 1 << 20;
/// Native stack of such a thread.
const THREAD_NATIVE_STACK: usize = 8 << 20;
/// Frames before `SystemStackError` in such a thread.
const THREAD_MAX_FRAMES: usize = 100_000;

fn thread_arg(ctx: &mut Ctx, v: Value) -> Result<&'static mut ThreadData> {
    match data(v) {
        Some(d) => Ok(d),
        None => Err(ctx.type_error("uninitialized thread")),
    }
}

fn thread_error_or_arg(ctx: &mut Ctx, new: bool) -> Unwind {
    if new {
        thread_error(ctx, "must be called with a block")
    } else {
        ctx.arg_error("must be called with a block")
    }
}

fn thread_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    let c = ctx.c().thread_error;
    ctx.raise(c, msg)
}

fn alloc_thread(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let report = ctx.vm().report_on_exception.get();
    Ok(object::new_data(ctx, klass, Box::new(ThreadData::new(report))))
}

/// `Thread.new(*args) { |*args| … }`: allocates, calls `initialize`, checks it started.
fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let t = alloc_thread(ctx, recv)?;
    ctx.call_kw(t, crate::symbol::sym::INITIALIZE, args.pos, args.kw, args.block)?;
    if !td(t).started {
        let name = object::class_name_of(ctx, t);
        return Err(thread_error(ctx, &format!("uninitialized thread - check `{name}#initialize'")));
    }
    Ok(t)
}

/// `Thread.start` / `Thread.fork`: like `new` without calling `initialize`.
fn s_start(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_none() {
        return Err(thread_error_or_arg(ctx, false));
    }
    let t = alloc_thread(ctx, recv)?;
    start(ctx, t, args)?;
    Ok(t)
}

fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    if d.started {
        let s = object::inspect_string(ctx, recv)?;
        return Err(thread_error(ctx, &format!("already initialized thread - {s}")));
    }
    start(ctx, recv, args)?;
    Ok(Value::NIL)
}

/// Starts the native thread of `t` running the block of `args`.
fn start(ctx: &mut Ctx, t: Value, args: &Args) -> Result<()> {
    let Some(b) = &args.block else {
        return Err(thread_error_or_arg(ctx, true));
    };
    let p = crate::core::proc::from_block(ctx, b)?;
    sched::current(ctx);
    let (path, line) = kernel::caller_location(ctx);
    let a = array::from_vec(ctx, args.pos.to_vec());
    td(t).args = a;
    let storage = crate::fiber::inherited_storage(ctx);
    let me = ctx.thread_obj;
    let group = group_of(ctx, me);
    let d = td(t);
    d.storage = storage;
    d.group = group;
    d.block = p;
    d.args = a;
    d.started = true;
    d.run_tag = ctx.run_tag;
    d.location = format!("{path}:{line}");
    ctx.vm().threads.borrow_mut().push(Entry { obj: t, ctx: std::ptr::null_mut() });
    let vm = ctx.vm_ptr() as usize;
    let obj = t.raw();
    let spawned = match crate::fiber::stack::ValueStack::mapped(THREAD_STACK_SLOTS) {
        Some(stack) => {
            let stack = SendStack(stack);
            std::thread::Builder::new().stack_size(THREAD_NATIVE_STACK).spawn(move || {
                // SAFETY: the VM outlives its threads (the main thread waits for them before
                // the VM is dropped); `obj` is a Thread object kept alive by `Vm::threads`.
                unsafe { thread_main(vm as *mut Vm, Value::from_raw(obj), stack.0) }
            })
        }
        None => Err(std::io::Error::from_raw_os_error(libc::ENOMEM)),
    };
    if let Err(e) = spawned {
        ctx.vm().threads.borrow_mut().retain(|e| e.obj != t);
        td(t).status = Status::Dead;
        let msg = format!("can't create Thread: {e}");
        return Err(thread_error(ctx, &msg));
    }
    Ok(())
}

/// A value stack handed to the thread that will use it (mapped memory, owned by one
/// thread at a time).
struct SendStack(crate::fiber::stack::ValueStack);

// SAFETY: the mapping is used only by the receiving thread once sent.
unsafe impl Send for SendStack {}

/// The body of a thread made by `Thread.new`.
///
/// # Safety
/// `vm` must outlive the thread and `t` must be a Thread object listed in `Vm::threads`.
unsafe fn thread_main(vm: *mut Vm, t: Value, stack: crate::fiber::stack::ValueStack) {
    let mut ctx = Box::new(Ctx::with_stack(vm, stack, THREAD_MAX_FRAMES));
    td(t).shared.attach();
    (*vm).gl.acquire(&(*vm).interrupt);
    let cp: *mut Ctx = &mut *ctx;
    ctx.thread_obj = t;
    ctx.inherit_alloc_flags();
    td(t).ctx = cp;
    for e in (*vm).threads.borrow_mut().iter_mut() {
        if e.obj == t {
            e.ctx = cp;
        }
    }
    ctx.run_tag = td(t).run_tag;
    sched::wait_turn(&mut ctx);
    let storage = td(t).storage;
    if !storage.is_nil() {
        let root = crate::fiber::current(&mut ctx);
        crate::fiber::set_storage(root, storage);
    }
    let r = match sched::check_pending(&mut ctx) {
        Ok(()) => {
            let d = td(t);
            let (p, a) = (d.block, d.args);
            ctx.stacks.set_root_proc(p);
            let items = array::to_vec(a);
            let traced = |ctx: &mut Ctx, kind| if crate::core::tracepoint::tracing(ctx) { crate::core::tracepoint::simple(ctx, kind) } else { Ok(()) };
            let r = traced(&mut ctx, crate::core::tracepoint::THREAD_BEGIN).and_then(|_| ctx.call_proc(p, &items, None));
            let r = match (r, traced(&mut ctx, crate::core::tracepoint::THREAD_END)) {
                (Ok(_), Err(e)) => Err(e),
                (r, _) => r,
            };
            // The thread's fiber scheduler runs its fibers to the end before the thread ends.
            let closed = crate::fiber::scheduler::close_current(&mut ctx);
            match (r, closed) {
                (Ok(_), Err(e)) => Err(e),
                (r, _) => r,
            }
        }
        Err(e) => Err(e),
    };
    finish(&mut ctx, t, r);
    (*vm).threads.borrow_mut().retain(|e| e.obj != t);
    td(t).ctx = std::ptr::null_mut();
    sched::wake_all(&mut ctx);
    crate::runtime::task::thread_ended(&ctx);
    ctx.return_alloc_cache();
    drop(ctx);
    (*vm).gl.release();
}

/// Records how a thread ended: reports an exception (`report_on_exception`), passes it
/// to the main thread when it must (`abort_on_exception`, `exit`), unlocks its mutexes.
fn finish(ctx: &mut Ctx, t: Value, r: Result<Value>) {
    let d = td(t);
    if d.status != Status::Aborting {
        d.status = Status::Run;
    }
    let mutexes = std::mem::take(&mut d.mutexes);
    for m in mutexes {
        crate::core::sync::release_from_dead_thread(m);
    }
    match r {
        Ok(v) => td(t).value = v,
        Err(Unwind::Raise(e)) => {
            td(t).exception = e;
            let system_exit = object::is_a(ctx, e, ctx.c().system_exit);
            if !system_exit && td(t).report_on_exception {
                report(ctx, t, e);
            }
            if system_exit || td(t).abort_on_exception || ctx.vm().abort_on_exception.get() {
                let main = ctx.vm().main_thread.get();
                if !main.is_nil() {
                    td(main).pending_raise.push(e);
                    sched::post(ctx, main, PENDING_RAISE);
                }
            }
        }
        Err(Unwind::Exit(code)) => {
            crate::core::io::flush_stdout(ctx);
            std::process::exit(code);
        }
        Err(Unwind::Throw { tag, .. }) if crate::fiber::is_kill_tag(ctx, tag) => {}
        Err(e) => {
            // break/return/throw out of the thread's block: CRuby's errors for them.
            let msg = match e {
                Unwind::Throw { .. } => "uncaught throw",
                Unwind::Break { .. } => "break from proc-closure",
                _ => "unexpected return",
            };
            let exc = ctx.new_error(ctx.c().local_jump_error, msg);
            td(t).exception = exc;
            if td(t).report_on_exception {
                report(ctx, t, exc);
            }
        }
    }
    td(t).status = Status::Dead;
}

fn report(ctx: &mut Ctx, t: Value, e: Value) {
    let head = inspect(ctx, t);
    let msg = crate::core::exception::full_message(ctx, e);
    let text = format!("{head} terminated with exception (report_on_exception is true):\n{msg}\n");
    crate::core::io::write_error_message(ctx, text.as_bytes());
}

fn status_word(d: &ThreadData) -> &'static str {
    match d.status {
        Status::Run => "run",
        Status::Sleep => "sleep",
        Status::Aborting => "aborting",
        Status::Dead => "dead",
    }
}

fn inspect(ctx: &mut Ctx, t: Value) -> String {
    let cname = object::class_name_of(ctx, t);
    let d = td(t);
    let mut s = format!("#<{cname}:0x{:016x}", t.raw());
    if !d.name.is_nil() && string::is_string(d.name) {
        s.push('@');
        s.push_str(&string::to_rust_string_lossy(d.name));
    }
    if !d.location.is_empty() {
        s.push(' ');
        s.push_str(&d.location);
    }
    s.push(' ');
    s.push_str(status_word(d));
    s.push('>');
    s
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let s = inspect(ctx, recv);
    // CRuby's is binary, unless a name gives it that name's encoding.
    if td(recv).name.is_nil() {
        Ok(string::new_binary(ctx, s.as_bytes()))
    } else {
        Ok(string::new_utf8(ctx, &s))
    }
}

fn s_current(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(sched::current(ctx))
}

fn s_main(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    sched::current(ctx);
    Ok(ctx.vm().main_thread.get())
}

fn s_list(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    sched::current(ctx);
    let list: Vec<Value> = ctx.vm().threads.borrow().iter().map(|e| e.obj).filter(|&t| td(t).status != Status::Dead).collect();
    Ok(array::from_vec(ctx, list))
}

fn s_pass(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    if ctx.vm().gl.contended() {
        sched::yield_gl(ctx);
    }
    sched::poll_interrupts(ctx)?;
    Ok(Value::NIL)
}

fn s_stop(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let me = sched::current(ctx);
    if ctx.vm().threads.borrow().len() <= 1 {
        return Err(thread_error(ctx, "stopping only thread\n\tnote: use sleep to stop forever"));
    }
    sleep_until(ctx, me, None)?;
    Ok(Value::NIL)
}

/// Sleeps until `deadline` (forever if None) or `Thread#wakeup`.
pub fn sleep_until(ctx: &mut Ctx, me: Value, deadline: Option<Instant>) -> Result<()> {
    sched::wait_until(ctx, deadline, |_| {
        let d = td(me);
        Ok(std::mem::take(&mut d.wakeup))
    })?;
    Ok(())
}

/// `Kernel#sleep` for `secs` seconds (forever when None), woken early by `Thread#wakeup`.
pub fn sleep(ctx: &mut Ctx, secs: Option<f64>) -> Result<()> {
    let me = sched::current(ctx);
    td(me).wakeup = false;
    match secs {
        Some(s) => sleep_until(ctx, me, Some(Instant::now() + Duration::from_secs_f64(s.min(1e9)))),
        // `sleep` with no argument is not a deadlock (CRuby's sleep_forever without
        // SLEEP_DEADLOCKABLE): it sleeps in long slices, so it never counts as stuck.
        None => loop {
            let slice = Instant::now() + Duration::from_secs(3600);
            if sched::wait_until(ctx, Some(slice), |_| Ok(std::mem::take(&mut td(me).wakeup)))? {
                return Ok(());
            }
        },
    }
}

fn join(ctx: &mut Ctx, t: Value, limit: Option<Value>) -> Result<Value> {
    let me = sched::current(ctx);
    if t == me {
        return Err(thread_error(ctx, "Target thread must not be current thread"));
    }
    if td(t).is_main {
        return Err(thread_error(ctx, "Target thread must not be main thread"));
    }
    let deadline = match limit {
        None => None,
        Some(v) if v.is_nil() => None,
        Some(v) => {
            let secs = crate::core::numeric::to_f64(ctx, v)?;
            Some(Instant::now() + Duration::from_secs_f64(secs.clamp(0.0, 1e9)))
        }
    };
    let done = sched::wait_on(ctx, t, deadline, |_| Ok(td(t).status == Status::Dead))?;
    if !done {
        return Ok(Value::NIL);
    }
    let e = td(t).exception;
    if !e.is_nil() {
        return Err(Unwind::Raise(e));
    }
    Ok(t)
}

fn m_join(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    join(ctx, recv, args.pos.first().copied())
}

fn m_value(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    join(ctx, recv, None)?;
    Ok(td(recv).value)
}

fn m_alive_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    Ok(Value::bool(d.status != Status::Dead))
}

fn m_stop_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    Ok(Value::bool(matches!(d.status, Status::Dead | Status::Sleep)))
}

fn m_status(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    if d.status == Status::Dead {
        return Ok(if d.exception.is_nil() { Value::FALSE } else { Value::NIL });
    }
    let w = status_word(d);
    Ok(string::new_utf8(ctx, w))
}

/// `Thread#kill`: the thread unwinds (running `ensure`) and ends without an exception.
fn m_kill(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    if d.status == Status::Dead {
        return Ok(recv);
    }
    let me = sched::current(ctx);
    if recv == me {
        let d = td(me);
        d.killed = true;
        d.status = Status::Aborting;
        return Err(crate::fiber::kill_unwind(ctx));
    }
    if !td(recv).started {
        return Ok(recv);
    }
    td(recv).killed = true;
    td(recv).raise_before_kill = !td(recv).pending_raise.is_empty();
    sched::post(ctx, recv, PENDING_KILL);
    Ok(recv)
}

fn s_kill(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let t = args.pos[0];
    thread_arg(ctx, t)?;
    m_kill(ctx, t, &Args::new(&[]))
}

fn s_exit(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let me = sched::current(ctx);
    m_kill(ctx, me, &Args::new(&[]))
}

/// `Thread#raise(...)`: the exception is raised in the thread at its next safepoint or
/// when it wakes up.
fn m_raise(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    if d.status == Status::Dead {
        return Ok(Value::NIL);
    }
    let e = if args.pos.is_empty() {
        ctx.new_error(ctx.c().runtime_error, "")
    } else {
        kernel::make_exception(ctx, args.pos)?
    };
    let me = sched::current(ctx);
    if recv == me {
        crate::core::exception::ensure_backtrace(ctx, e);
        return Err(Unwind::Raise(e));
    }
    td(recv).pending_raise.push(e);
    sched::post(ctx, recv, PENDING_RAISE);
    Ok(Value::NIL)
}

fn m_wakeup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    if d.status == Status::Dead {
        return Err(thread_error(ctx, "killed thread"));
    }
    d.wakeup = true;
    sched::wake_thread(ctx, recv);
    Ok(recv)
}

fn m_run(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    m_wakeup(ctx, recv, args)?;
    s_pass(ctx, recv, args)?;
    Ok(recv)
}

fn key_of(ctx: &mut Ctx, k: Value) -> Result<Value> {
    if k.is_symbol() {
        return Ok(k);
    }
    if let Some(s) = string::try_to_str(ctx, k)? {
        return Ok(Value::symbol(ctx.intern_bytes(string::bytes(s))));
    }
    let s = object::inspect_string(ctx, k)?;
    Err(ctx.type_error(&format!("{s} is not a symbol nor a string")))
}

/// The current thread's fiber-local `Thread#[]` entry `key` (nil when unset): state that
/// native libraries keep per thread, as CRuby's `rb_thread_local_aref` does.
pub fn current_local_get(ctx: &Ctx, key: Value) -> Value {
    let t = ctx.thread_obj;
    if t.is_nil() {
        return Value::NIL;
    }
    table_get(locals_of(ctx, t), key)
}

/// Sets the current thread's fiber-local `Thread#[]` entry `key` (nil removes it).
pub fn current_local_set(ctx: &mut Ctx, key: Value, v: Value) -> Result<Value> {
    let t = ctx.thread_obj;
    if t.is_nil() {
        return Ok(v);
    }
    table_set(ctx, t, false, key, v)
}

fn table_get(table: Value, k: Value) -> Value {
    if table.is_nil() {
        Value::NIL
    } else {
        hash::get(table, k).unwrap_or(Value::NIL)
    }
}

/// The fiber that thread `t` runs now, or None for its root fiber (or when it is not
/// running).
fn running_fiber(ctx: &Ctx, t: Value) -> Option<Value> {
    let (fiber, root) = if ctx.thread_obj == t {
        (ctx.fiber_obj, ctx.fibers.root)
    } else {
        let p = td(t).ctx;
        if p.is_null() {
            return None;
        }
        // SAFETY: a running thread other than this one is outside the giant lock, so its
        // context does not change while it is read.
        unsafe { ((*p).fiber_obj, (*p).fibers.root) }
    };
    (!fiber.is_nil() && fiber != root).then_some(fiber)
}

/// The `Thread#[]` table of `t`'s running fiber (nil if it has none yet).
fn locals_of(ctx: &Ctx, t: Value) -> Value {
    let d = td(t);
    match running_fiber(ctx, t) {
        None => d.locals,
        Some(f) => d.fiber_locals.iter().find(|e| e.0 == f).map_or(Value::NIL, |e| e.1),
    }
}

fn table_set(ctx: &mut Ctx, t: Value, vars: bool, k: Value, v: Value) -> Result<Value> {
    if object::is_frozen(t) {
        let c = ctx.c().frozen_error;
        return Err(ctx.raise(c, "can't modify frozen thread locals"));
    }
    let mut table = if vars { td(t).vars } else { locals_of(ctx, t) };
    if table.is_nil() {
        table = hash::new(ctx);
        let fiber = running_fiber(ctx, t);
        let d = td(t);
        match (vars, fiber) {
            (true, _) => d.vars = table,
            (false, None) => d.locals = table,
            (false, Some(f)) => {
                d.fiber_locals.retain(|&(f, _)| crate::fiber::is_alive(f));
                d.fiber_locals.push((f, table));
            }
        }
    }
    if v.is_nil() {
        hash::delete(ctx, table, k)?;
    } else {
        hash::aset(ctx, table, k, v)?;
    }
    Ok(v)
}

fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let table = locals_of(ctx, recv);
    let k = key_of(ctx, args.pos[0])?;
    Ok(table_get(table, k))
}

fn m_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let k = key_of(ctx, args.pos[0])?;
    table_set(ctx, recv, false, k, args.pos[1])
}

fn m_key_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let table = locals_of(ctx, recv);
    let k = key_of(ctx, args.pos[0])?;
    Ok(Value::bool(!table.is_nil() && hash::get(table, k).is_some()))
}

fn keys_of(ctx: &mut Ctx, table: Value) -> Value {
    let keys: Vec<Value> = if table.is_nil() { Vec::new() } else { hash::pairs(table).into_iter().map(|(k, _)| k).collect() };
    array::from_vec(ctx, keys)
}

fn m_keys(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let table = locals_of(ctx, recv);
    Ok(keys_of(ctx, table))
}

fn m_fetch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let table = locals_of(ctx, recv);
    if args.pos.len() == 2 && args.block.is_some() {
        let (path, line) = kernel::caller_location(ctx);
        kernel::write_warning(ctx, &format!("{path}:{line}: warning: block supersedes default value argument\n"));
    }
    let k = key_of(ctx, args.pos[0])?;
    if !table.is_nil() {
        if let Some(v) = hash::get(table, k) {
            return Ok(v);
        }
    }
    if let Some(b) = &args.block {
        return ctx.yield_block(b, &[k]);
    }
    if let Some(&d) = args.pos.get(1) {
        return Ok(d);
    }
    let s = object::inspect_string(ctx, k)?;
    Err(ctx.key_error(&format!("key not found: {s}"), recv, k))
}

fn m_tvar_get(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let table = thread_arg(ctx, recv)?.vars;
    let k = key_of(ctx, args.pos[0])?;
    Ok(table_get(table, k))
}

fn m_tvar_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let k = key_of(ctx, args.pos[0])?;
    table_set(ctx, recv, true, k, args.pos[1])
}

fn m_tvar_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let table = thread_arg(ctx, recv)?.vars;
    let k = key_of(ctx, args.pos[0])?;
    Ok(Value::bool(!table.is_nil() && hash::get(table, k).is_some()))
}

fn m_tvars(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let table = thread_arg(ctx, recv)?.vars;
    Ok(keys_of(ctx, table))
}

fn m_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(thread_arg(ctx, recv)?.name)
}

fn m_set_name(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let v = args.pos[0];
    let name = if v.is_nil() {
        Value::NIL
    } else {
        let s = string::to_str_arg(ctx, v)?;
        if string::bytes(s).contains(&0) {
            return Err(ctx.arg_error("string contains null byte"));
        }
        let copy = string::new_from_bytes(ctx, string::bytes(s));
        object::freeze(copy)
    };
    td(recv).name = name;
    Ok(v)
}

fn m_priority(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(thread_arg(ctx, recv)?.priority))
}

fn m_set_priority(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let p = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    td(recv).priority = p.clamp(-3, 3);
    Ok(args.pos[0])
}

fn m_report_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(thread_arg(ctx, recv)?.report_on_exception))
}

fn m_set_report(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?.report_on_exception = args.pos[0].truthy();
    Ok(args.pos[0])
}

fn m_abort_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(thread_arg(ctx, recv)?.abort_on_exception))
}

fn m_set_abort(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?.abort_on_exception = args.pos[0].truthy();
    Ok(args.pos[0])
}

fn s_report_p(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().report_on_exception.get()))
}

fn s_set_report(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    ctx.vm().report_on_exception.set(args.pos[0].truthy());
    Ok(args.pos[0])
}

fn s_abort_p(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().abort_on_exception.get()))
}

fn s_set_abort(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    ctx.vm().abort_on_exception.set(args.pos[0].truthy());
    Ok(args.pos[0])
}

fn m_native_thread_id(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = thread_arg(ctx, recv)?;
    if d.status == Status::Dead {
        return Ok(Value::NIL);
    }
    let tid = d.shared.tid.load(std::sync::atomic::Ordering::Acquire);
    Ok(if tid == 0 { Value::NIL } else { Value::fixnum(tid) })
}

/// `Thread.handle_interrupt(ExceptionClass => :immediate | :on_blocking | :never) { … }`:
/// interrupts of those classes (`Thread#raise`, `kill`, SIGINT) are taken only as said
/// while the block runs; what was deferred is raised when the block ends.
fn s_handle_interrupt(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let h = hash::to_hash_arg(ctx, args.pos[0])?;
    let Some(b) = args.block else {
        return Err(ctx.arg_error("block is needed."));
    };
    let mut mask = Vec::new();
    for (k, v) in hash::pairs(h) {
        let ok = v.as_symbol().map(|s| ctx.sym_str(s)).is_some_and(|s| matches!(s.as_str(), "immediate" | "on_blocking" | "never"));
        if !ok {
            return Err(ctx.arg_error("unknown mask signature"));
        }
        mask.push((k, v));
    }
    let frozen = hash::new(ctx);
    for (k, v) in mask {
        hash::aset(ctx, frozen, k, v)?;
    }
    let me = sched::current(ctx);
    td(me).masks.push(frozen);
    let r = match sched::check_pending(ctx) {
        Ok(()) => ctx.yield_block(&b, &[]),
        Err(e) => Err(e),
    };
    td(me).masks.pop();
    sched::check_pending(ctx)?;
    r
}

fn pending_class_arg(ctx: &mut Ctx, args: &Args) -> Result<Option<Value>> {
    match args.pos.first() {
        None => Ok(None),
        Some(&k) if crate::core::module::is_class_or_module(k) => Ok(Some(k)),
        Some(_) => Err(ctx.type_error("class or module required for rescue clause")),
    }
}

fn s_pending_interrupt_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let me = sched::current(ctx);
    let k = pending_class_arg(ctx, args)?;
    Ok(Value::bool(sched::has_pending(ctx, me, k)))
}

fn m_pending_interrupt_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let k = pending_class_arg(ctx, args)?;
    Ok(Value::bool(sched::has_pending(ctx, recv, k)))
}

/// The frames of thread `t` (innermost first), or None when it is dead; `skip` leading
/// frames of the current thread are left out.
fn frames_of(ctx: &mut Ctx, t: Value, skip: usize) -> Option<Vec<crate::core::exception::BtFrame>> {
    let d = td(t);
    if d.status == Status::Dead {
        return None;
    }
    if t == sched::current(ctx) {
        return Some(crate::core::exception::current_backtrace(ctx, skip).frames);
    }
    if d.ctx.is_null() {
        return Some(Vec::new());
    }
    // SAFETY: a listed thread other than this one is outside the giant lock (this thread
    // holds it), so its frames stay as they are while they are read.
    let frames = unsafe { &(*d.ctx).stacks.frames };
    Some(crate::core::exception::backtrace_of_frames(ctx, frames, 0).frames)
}

/// (start, length) of `backtrace(start = 0, length = nil)` / `backtrace(range)`.
fn backtrace_range(ctx: &mut Ctx, args: &Args, len: usize) -> Result<Option<(usize, usize)>> {
    let (start, count) = match (args.pos.first(), args.pos.get(1)) {
        (None, _) => (0, None),
        (Some(&a), None) if crate::core::range::is_range(a) => {
            let b = crate::core::range::begin(a);
            let e = crate::core::range::end(a);
            let s = if b.is_nil() { 0 } else { crate::core::integer::to_i64_arg(ctx, b)? };
            let s = if s < 0 { len as i64 + s } else { s };
            let c = if e.is_nil() {
                None
            } else {
                let e = crate::core::integer::to_i64_arg(ctx, e)?;
                let e = if e < 0 { len as i64 + e } else { e };
                Some((e - s + if crate::core::range::excl(a) { 0 } else { 1 }).max(0))
            };
            (s, c)
        }
        (Some(&a), l) => {
            let s = crate::core::integer::to_i64_arg(ctx, a)?;
            if s < 0 {
                return Err(ctx.arg_error(&format!("negative level ({s})")));
            }
            let c = match l {
                Some(&l) if !l.is_nil() => {
                    let c = crate::core::integer::to_i64_arg(ctx, l)?;
                    if c < 0 {
                        return Err(ctx.arg_error(&format!("negative size ({c})")));
                    }
                    Some(c)
                }
                _ => None,
            };
            (s, c)
        }
    };
    if start < 0 || start as usize > len {
        return Ok(None);
    }
    let start = start as usize;
    let count = count.map_or(len - start, |c| (c as usize).min(len - start));
    Ok(Some((start, count)))
}

fn m_backtrace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let Some(frames) = frames_of(ctx, recv, 0) else { return Ok(Value::NIL) };
    let Some((start, count)) = backtrace_range(ctx, args, frames.len())? else { return Ok(Value::NIL) };
    let out = array::new(ctx);
    for f in &frames[start..start + count] {
        let s = string::new_utf8(ctx, &f.to_line());
        array::push(ctx, out, s);
    }
    Ok(out)
}

fn m_backtrace_locations(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    let Some(frames) = frames_of(ctx, recv, 0) else { return Ok(Value::NIL) };
    let Some((start, count)) = backtrace_range(ctx, args, frames.len())? else { return Ok(Value::NIL) };
    kernel::locations_array(ctx, &frames[start..start + count])
}

/// `Thread.each_caller_location { |loc| … }`: the caller's locations, innermost first.
fn s_each_caller_location(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(ctx.local_jump_error("no block given", crate::symbol::sym::YIELD, Value::NIL));
    };
    // Skip this builtin's frame and its caller's (as caller_locations(1) does).
    let frames = crate::core::exception::current_backtrace(ctx, 2).frames;
    for f in frames {
        let loc = kernel::locations_array(ctx, std::slice::from_ref(&f))?;
        let v = array::to_vec(loc).first().copied().unwrap_or(Value::NIL);
        ctx.yield_block(&b, &[v])?;
    }
    Ok(Value::NIL)
}

fn s_ignore_deadlock(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().ignore_deadlock.get()))
}

fn s_set_ignore_deadlock(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    ctx.vm().ignore_deadlock.set(args.pos[0].truthy());
    Ok(args.pos[0])
}

// ---- ThreadGroup ----

pub struct GroupData {
    enclosed: bool,
}

crate::data_obj!(GroupData);

fn alloc_group(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(GroupData { enclosed: false })))
}

fn group_arg<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut GroupData> {
    match crate::object::data_ref::<GroupData>(v) {
        Some(g) => Ok(g),
        None => Err(ctx.type_error("uninitialized ThreadGroup")),
    }
}

/// `ThreadGroup::Default`, the group of the main thread and of threads made outside any
/// other group.
fn default_group(ctx: &mut Ctx) -> Value {
    let tg = ctx.c().thread_group;
    let id = ctx.intern("Default");
    crate::core::module::body(tg).const_get(id).map(|e| e.value).unwrap_or(Value::NIL)
}

fn group_of(ctx: &mut Ctx, t: Value) -> Value {
    let d = td(t);
    if d.group.is_nil() {
        let g = default_group(ctx);
        td(t).group = g;
        return g;
    }
    d.group
}

fn m_group(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    thread_arg(ctx, recv)?;
    Ok(group_of(ctx, recv))
}

fn g_list(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    group_arg(ctx, recv)?;
    sched::current(ctx);
    let all: Vec<Value> = ctx.vm().threads.borrow().iter().map(|e| e.obj).collect();
    let mut list = Vec::new();
    for t in all {
        if td(t).status != Status::Dead && group_of(ctx, t) == recv {
            list.push(t);
        }
    }
    Ok(array::from_vec(ctx, list))
}

fn g_add(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let t = args.pos[0];
    thread_arg(ctx, t)?;
    if group_arg(ctx, recv)?.enclosed {
        return Err(thread_error(ctx, "can't move to the enclosed thread group"));
    }
    let from = group_of(ctx, t);
    if crate::object::data_ref::<GroupData>(from).is_some_and(|g| g.enclosed) {
        return Err(thread_error(ctx, "can't move from the enclosed thread group"));
    }
    td(t).group = recv;
    Ok(recv)
}

fn g_enclose(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    group_arg(ctx, recv)?.enclosed = true;
    Ok(recv)
}

fn g_enclosed_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(group_arg(ctx, recv)?.enclosed))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().thread;
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Unsafe, Singleton, Kw),
        ("start", s_start, [0..], Unsafe, Singleton),
        ("fork", s_start, [0..], Unsafe, Singleton),
        ("current", s_current, [0], Unsafe, Singleton),
        ("main", s_main, [0], Unsafe, Singleton),
        ("list", s_list, [0], Unsafe, Singleton),
        ("pass", s_pass, [0], Unsafe, Singleton),
        ("stop", s_stop, [0], Unsafe, Singleton),
        ("kill", s_kill, [1], Unsafe, Singleton),
        ("exit", s_exit, [0], Unsafe, Singleton),
        ("report_on_exception", s_report_p, [0], Unsafe, Singleton),
        ("report_on_exception=", s_set_report, [1], Unsafe, Singleton),
        ("abort_on_exception", s_abort_p, [0], Unsafe, Singleton),
        ("abort_on_exception=", s_set_abort, [1], Unsafe, Singleton),
        ("handle_interrupt", s_handle_interrupt, [1], Unsafe, Singleton),
        ("ignore_deadlock", s_ignore_deadlock, [0], Unsafe, Singleton),
        ("each_caller_location", s_each_caller_location, [0], Unsafe, Singleton),
        ("ignore_deadlock=", s_set_ignore_deadlock, [1], Unsafe, Singleton),
        ("pending_interrupt?", s_pending_interrupt_p, [0..=1], Unsafe, Singleton),
        ("initialize", m_initialize, [0..], Unsafe, Private, Kw),
        ("join", m_join, [0..=1], Unsafe),
        ("value", m_value, [0], Unsafe),
        ("alive?", m_alive_p, [0], Unsafe),
        ("stop?", m_stop_p, [0], Unsafe),
        ("status", m_status, [0], Unsafe),
        ("kill", m_kill, [0], Unsafe),
        ("terminate", m_kill, [0], Unsafe),
        ("exit", m_kill, [0], Unsafe),
        ("raise", m_raise, [0..=3], Unsafe),
        ("wakeup", m_wakeup, [0], Unsafe),
        ("run", m_run, [0], Unsafe),
        ("[]", m_aref, [1], Unsafe),
        ("[]=", m_aset, [2], Unsafe),
        ("key?", m_key_p, [1], Unsafe),
        ("keys", m_keys, [0], Unsafe),
        ("fetch", m_fetch, [1..=2], Unsafe),
        ("thread_variable_get", m_tvar_get, [1], Unsafe),
        ("thread_variable_set", m_tvar_set, [2], Unsafe),
        ("thread_variable?", m_tvar_p, [1], Unsafe),
        ("thread_variables", m_tvars, [0], Unsafe),
        ("name", m_name, [0], Unsafe),
        ("name=", m_set_name, [1], Unsafe),
        ("priority", m_priority, [0], Unsafe),
        ("priority=", m_set_priority, [1], Unsafe),
        ("report_on_exception", m_report_p, [0], Unsafe),
        ("report_on_exception=", m_set_report, [1], Unsafe),
        ("abort_on_exception", m_abort_p, [0], Unsafe),
        ("abort_on_exception=", m_set_abort, [1], Unsafe),
        ("native_thread_id", m_native_thread_id, [0], Unsafe),
        ("group", m_group, [0], Unsafe),
        ("backtrace", m_backtrace, [0..=2], Unsafe),
        ("backtrace_locations", m_backtrace_locations, [0..=2], Unsafe),
        ("pending_interrupt?", m_pending_interrupt_p, [0..=1], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
        ("to_s", m_inspect, [0], Unsafe),
    ]);
    let object = ctx.c().object;
    let tg = crate::core::module_methods::define_class_under(ctx, object, "ThreadGroup", object);
    ctx.vm_mut().c.thread_group = tg;
    crate::core::module::body(tg).alloc = crate::core::module::AllocKind::Data(alloc_group);
    crate::methods!(ctx, tg, [
        ("list", g_list, [0], Unsafe),
        ("add", g_add, [1], Unsafe),
        ("enclose", g_enclose, [0], Unsafe),
        ("enclosed?", g_enclosed_p, [0], Unsafe),
    ]);
    if let Ok(default) = alloc_group(ctx, tg) {
        let id = ctx.intern("Default");
        crate::core::module::body(tg).const_set(id, default);
    }
}
