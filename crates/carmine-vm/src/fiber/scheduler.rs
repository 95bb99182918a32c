//! The fiber scheduler interface (`Fiber.set_scheduler`, Ruby 3.x): blocking operations of
//! a non-blocking fiber call hooks of a Ruby object instead of blocking the thread, so one
//! thread serves many fibers. Carmine's own scheduler (`require "carmine/scheduler"`) is
//! one such object; any scheduler written for CRuby is another.
//!
//! Invariants:
//! - A thread's scheduler is `Ctx::scheduler` (nil: none). Hooks run only while the current
//!   fiber is non-blocking (`active`); the root fiber and `Fiber.blocking { }` never reach
//!   the scheduler, as in CRuby.
//! - Changing or clearing a scheduler closes the old one first (`scheduler_close`, else
//!   `close`); so does the end of the thread, and for the main thread the end of the program
//!   before `at_exit` handlers run.
//! - A fiber waiting through the `block` hook (Mutex, Queue, ConditionVariable,
//!   `Thread#join`, `Mutex#sleep`) is listed in `Vm::blocked_fibers` until it is unblocked;
//!   every `thread::sched::wake_all` unblocks all listed fibers through their schedulers'
//!   `unblock`, and each re-checks its condition and blocks again if it must (spurious
//!   wake-ups are harmless, missed ones impossible).
//! - Descriptor waits ask poll(2) first: the hook `io_wait` is called only when the
//!   operation would block. When it returns an Integer with the awaited events the
//!   descriptor is taken as ready (the scheduler saw it so); any other return is checked
//!   with poll(2) and the hook called again if the descriptor is still not ready.

use std::time::Instant;

use crate::heap::Marker;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// `IO::READABLE`, `IO::PRIORITY`, `IO::WRITABLE`.
pub const READABLE: i64 = 1;
pub const PRIORITY: i64 = 2;
pub const WRITABLE: i64 = 4;

/// A fiber waiting in its scheduler's `block` hook.
pub struct Blocked {
    pub fiber: Value,
    pub blocker: Value,
    pub scheduler: Value,
}

pub fn mark_blocked(list: &[Blocked], m: &mut Marker<'_>) {
    for b in list {
        m.mark(b.fiber);
        m.mark(b.blocker);
        m.mark(b.scheduler);
    }
}

/// The scheduler whose hooks the current fiber uses, if any: the thread's scheduler for a
/// non-blocking fiber, else an embedding host's for the fiber of a suspendable run
/// (`runtime::task`; that fiber is blocking, so a script's own scheduler never sees it).
#[inline]
pub fn active(ctx: &Ctx) -> Option<Value> {
    let s = ctx.scheduler;
    if !s.is_nil() {
        let f = ctx.fiber_obj;
        if !f.is_nil() && !crate::fiber::is_blocking(f) {
            return Some(s);
        }
    }
    let h = ctx.host_fiber;
    if !h.is_nil() && h == ctx.fiber_obj {
        return Some(ctx.host_scheduler);
    }
    None
}

/// The thread's own scheduler when the current fiber is non-blocking (what
/// `Fiber.current_scheduler` answers: never an embedding host's).
pub fn active_user(ctx: &Ctx) -> Option<Value> {
    let s = ctx.scheduler;
    let f = ctx.fiber_obj;
    if s.is_nil() || f.is_nil() || crate::fiber::is_blocking(f) {
        return None;
    }
    Some(s)
}

/// `active`, when the scheduler also implements the optional hook `name`.
pub fn active_with(ctx: &mut Ctx, name: &str) -> Option<Value> {
    let s = active(ctx)?;
    let mid = ctx.intern(name);
    ctx.respond_to(s, mid, true).then_some(s)
}

/// `Fiber.set_scheduler(s)`: checks the interface, closes the current scheduler, installs `s`.
pub fn set(ctx: &mut Ctx, s: Value) -> Result<Value> {
    if !s.is_nil() {
        for m in ["block", "unblock", "kernel_sleep", "io_wait"] {
            let mid = ctx.intern(m);
            if !ctx.respond_to(s, mid, true) {
                return Err(ctx.arg_error(&format!("Scheduler must implement #{m}")));
            }
        }
    }
    close_current(ctx)?;
    ctx.scheduler = s;
    Ok(s)
}

/// Closes the thread's scheduler (if any) and clears it: the scheduler runs until the
/// fibers it serves are done. `Fiber.scheduler` still answers it while it closes.
pub fn close_current(ctx: &mut Ctx) -> Result<()> {
    let s = ctx.scheduler;
    if s.is_nil() {
        return Ok(());
    }
    let r = match ctx.call_if_responds(s, ctx.intern("scheduler_close"), &[])? {
        Some(_) => Ok(()),
        None => ctx.call_if_responds(s, ctx.intern("close"), &[]).map(|_| ()),
    };
    if ctx.scheduler == s {
        ctx.scheduler = Value::NIL;
    }
    r
}

/// `Fiber.schedule { }`: the scheduler's `fiber` hook makes and starts the fiber.
pub fn schedule(ctx: &mut Ctx, args: &crate::interp::Args) -> Result<Value> {
    let s = ctx.scheduler;
    if s.is_nil() {
        let c = ctx.c().runtime_error;
        return Err(ctx.raise(c, "No scheduler is available!"));
    }
    let fiber = ctx.intern("fiber");
    ctx.call_kw(s, fiber, args.pos, args.kw, args.block)
}

/// Poll bits as the scheduler's event bits.
fn events_of(poll: i16) -> i64 {
    let mut e = 0;
    if poll & libc::POLLIN != 0 {
        e |= READABLE;
    }
    if poll & libc::POLLPRI != 0 {
        e |= PRIORITY;
    }
    if poll & libc::POLLOUT != 0 {
        e |= WRITABLE;
    }
    e
}

/// Whether `fd` is ready for `events` (poll bits) right now; errors and hang-ups count as
/// ready (the operation then reports them).
pub fn ready_now(fd: i32, events: i16) -> bool {
    let mut p = libc::pollfd { fd, events, revents: 0 };
    // SAFETY: one valid pollfd, no waiting.
    unsafe { libc::poll(&mut p, 1, 0) != 0 }
}

/// Waits for `fd` through scheduler `s`'s `io_wait` until it is ready for `events` (poll
/// bits). The hook gets an IO for the descriptor that does not close it.
pub fn wait_fd(ctx: &mut Ctx, s: Value, fd: i32, events: i16) -> Result<()> {
    if ready_now(fd, events) {
        return Ok(());
    }
    let io = crate::core::io::new_io(ctx, ctx.c().io, fd, true, true, None);
    if let Some(o) = crate::core::io::io_ref(io) {
        o.autoclose = false;
    }
    wait_io(ctx, s, io, fd, events)
}

/// Waits through scheduler `s`'s `io_wait` for `io` (whose descriptor is `fd`), which the
/// caller found not ready for `events` since its last operation (EAGAIN, or poll).
pub fn wait_io(ctx: &mut Ctx, s: Value, io: Value, fd: i32, events: i16) -> Result<()> {
    let want = events_of(events);
    loop {
        let got = io_wait(ctx, s, io, want, Value::NIL)?;
        // The scheduler reported the events ready: no need to ask poll again. Anything
        // else (nil, false, a stray wake-up) is checked.
        if got.as_fixnum().is_some_and(|g| g & want != 0) || ready_now(fd, events) {
            return Ok(());
        }
    }
}

/// The `io_wait(io, events, timeout)` hook; its result (the ready events, or false/nil
/// after the timeout).
pub fn io_wait(ctx: &mut Ctx, s: Value, io: Value, events: i64, timeout: Value) -> Result<Value> {
    let mid = ctx.intern("io_wait");
    ctx.call(s, mid, &[io, Value::fixnum(events), timeout])
}

/// The `kernel_sleep(*duration)` hook (`sleep`, `Mutex#sleep`).
pub fn kernel_sleep(ctx: &mut Ctx, s: Value, args: &[Value]) -> Result<Value> {
    let mid = ctx.intern("kernel_sleep");
    ctx.call(s, mid, args)
}

/// Seconds until `deadline` as a Float (nil without one).
fn timeout_value(ctx: &mut Ctx, deadline: Option<Instant>) -> Value {
    match deadline {
        None => Value::NIL,
        Some(d) => crate::core::float::new(ctx, d.saturating_duration_since(Instant::now()).as_secs_f64()),
    }
}

/// `thread::sched::wait_until` for a non-blocking fiber: blocks in scheduler `s`'s `block`
/// hook (with `blocker`, the object waited on) until `ready` or the deadline. `check`
/// takes the thread's interrupts before each look at the condition.
pub fn wait_until(ctx: &mut Ctx, s: Value, blocker: Value, deadline: Option<Instant>, ready: &mut dyn FnMut(&mut Ctx) -> Result<bool>, check: fn(&mut Ctx) -> Result<()>) -> Result<bool> {
    let fiber = ctx.fiber_obj;
    let block = ctx.intern("block");
    loop {
        check(ctx)?;
        if ready(ctx)? {
            return Ok(true);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(false);
        }
        ctx.vm().blocked_fibers.borrow_mut().push(Blocked { fiber, blocker, scheduler: s });
        let timeout = timeout_value(ctx, deadline);
        let r = ctx.call(s, block, &[blocker, timeout]);
        ctx.vm().blocked_fibers.borrow_mut().retain(|b| b.fiber != fiber);
        r?;
    }
}

/// Calls `unblock(blocker, fiber)` of every fiber blocked in a scheduler (they re-check what
/// they wait for). A failing `unblock` is reported on `$stderr` and the others still run.
pub fn unblock_all(ctx: &mut Ctx) {
    if ctx.vm().blocked_fibers.borrow().is_empty() {
        return;
    }
    let list = std::mem::take(&mut *ctx.vm().blocked_fibers.borrow_mut());
    // Out of the VM's list, the entries stay reachable as protected values.
    let mark = ctx.stacks.protected.len();
    for b in &list {
        ctx.protect(b.fiber);
        ctx.protect(b.blocker);
        ctx.protect(b.scheduler);
    }
    let unblock = ctx.intern("unblock");
    for b in &list {
        if let Err(e) = ctx.call(b.scheduler, unblock, &[b.blocker, b.fiber]) {
            crate::runtime::report(ctx, e);
        }
    }
    ctx.unprotect(mark);
}

/// `Process.wait` through the `process_wait(pid, flags)` hook, when the scheduler has it:
/// the Process::Status it returns.
pub fn process_wait(ctx: &mut Ctx, pid: i64, flags: i64) -> Result<Option<Value>> {
    let Some(s) = active_with(ctx, "process_wait") else { return Ok(None) };
    let mid = ctx.intern("process_wait");
    ctx.call(s, mid, &[Value::fixnum(pid), Value::fixnum(flags)]).map(Some)
}

/// `IO.select` through the `io_select(readables, writables, exceptables, timeout)` hook.
pub fn io_select(ctx: &mut Ctx, args: &[Value]) -> Result<Option<Value>> {
    let Some(s) = active_with(ctx, "io_select") else { return Ok(None) };
    let mid = ctx.intern("io_select");
    let mut a = [Value::NIL; 4];
    for (i, v) in args.iter().take(4).enumerate() {
        a[i] = *v;
    }
    ctx.call(s, mid, &a).map(Some)
}

/// Name resolution through the `address_resolve(hostname)` hook: the addresses (Strings)
/// it returns.
pub fn address_resolve(ctx: &mut Ctx, host: &str) -> Result<Option<Vec<String>>> {
    let Some(s) = active_with(ctx, "address_resolve") else { return Ok(None) };
    let mid = ctx.intern("address_resolve");
    let h = crate::core::string::new_utf8(ctx, host);
    let r = ctx.call(s, mid, &[h])?;
    let r = crate::core::array::to_ary_arg(ctx, r)?;
    let mut out = Vec::new();
    for v in crate::core::array::to_vec(r) {
        let v = crate::core::string::to_str_arg(ctx, v)?;
        out.push(crate::core::string::to_rust_string_lossy(v));
    }
    Ok(Some(out))
}
