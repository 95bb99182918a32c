//! Thread::Mutex, Thread::Queue, Thread::SizedQueue and Thread::ConditionVariable.
//!
//! Invariants:
//! - Their state is read and written only under the GL; a thread that must wait uses
//!   `sched::wait_until`, which re-checks the condition under the GL after every wake-up.
//! - A Mutex is owned by a fiber (CRuby 3.x); the owning thread lists it in
//!   `ThreadData::mutexes`, and a thread that ends unlocks what it still holds.
//! - Every state change another thread may wait for wakes the waiters (`sched::wake_all`).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::core::{array, object};
use crate::error::Unwind;
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::sched::{self, td};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn thread_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    let c = ctx.c().thread_error;
    ctx.raise(c, msg)
}

/// A timeout argument in seconds (nil: none) as a deadline.
pub(crate) fn deadline_of(ctx: &mut Ctx, v: Option<Value>) -> Result<Option<Instant>> {
    match v {
        None => Ok(None),
        Some(v) if v.is_nil() => Ok(None),
        Some(v) => {
            // rb_num2dbl: Strings, booleans and nil are not converted.
            if v == Value::TRUE || v == Value::FALSE || crate::core::string::is_string(v) {
                let name = object::type_name_for_error(ctx, v);
                return Err(ctx.type_error(&format!("no implicit conversion of {name} into Float")));
            }
            let secs = crate::core::numeric::to_f64(ctx, v)?;
            if secs < 0.0 {
                return Err(ctx.arg_error("time interval must not be negative"));
            }
            Ok(Some(Instant::now() + Duration::from_secs_f64(secs.min(1e9))))
        }
    }
}

// ---- Mutex ----

pub struct MutexData {
    /// The owning fiber, or nil when unlocked.
    owner: Value,
    /// The owning fiber's thread.
    thread: Value,
    /// Threads waiting in `lock` (unlock wakes threads only when there are some).
    waiting: u32,
}

crate::data_obj!(MutexData, |s, m| {
    m.mark(s.owner);
    m.mark(s.thread);
});

fn alloc_mutex(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(MutexData { owner: Value::NIL, thread: Value::NIL, waiting: 0 })))
}

fn mutex_arg<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut MutexData> {
    match data_ref::<MutexData>(v) {
        Some(m) => Ok(m),
        None => {
            let cname = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {cname} (expected mutex)")))
        }
    }
}

/// Locks `m`, waiting (until `deadline`) while another fiber holds it. Ok(false) on timeout.
fn lock(ctx: &mut Ctx, m: Value, deadline: Option<Instant>) -> Result<bool> {
    let me = crate::fiber::current(ctx);
    let d = mutex_arg(ctx, m)?;
    if d.owner.is_nil() {
        // Uncontended: taken at once, with no interrupt check (as CRuby's trylock path).
        take(ctx, m, me);
        return Ok(true);
    }
    if d.owner == me {
        return Err(thread_error(ctx, "deadlock; recursive locking"));
    }
    if d.thread == sched::current(ctx) && crate::fiber::scheduler::active(ctx).is_none() {
        // Another fiber of this thread holds it: without a fiber scheduler nothing could
        // ever run that fiber to unlock it.
        return Err(thread_error(ctx, "deadlock; lock already owned by another fiber belonging to the same thread"));
    }
    d.waiting += 1;
    let got = sched::wait_on(ctx, m, deadline, |_| Ok(data_ref::<MutexData>(m).is_some_and(|d| d.owner.is_nil())));
    if let Some(d) = data_ref::<MutexData>(m) {
        d.waiting -= 1;
    }
    let got = got?;
    if got {
        take(ctx, m, me);
    }
    Ok(got)
}

fn take(ctx: &mut Ctx, m: Value, fiber: Value) {
    let t = sched::current(ctx);
    if let Some(d) = data_ref::<MutexData>(m) {
        d.owner = fiber;
        d.thread = t;
    }
    td(t).mutexes.push(m);
}

fn unlock(ctx: &mut Ctx, m: Value) -> Result<()> {
    let me = crate::fiber::current(ctx);
    let d = mutex_arg(ctx, m)?;
    if d.owner.is_nil() {
        return Err(thread_error(ctx, "Attempt to unlock a mutex which is not locked"));
    }
    if d.owner != me {
        return Err(thread_error(ctx, "Attempt to unlock a mutex which is locked by another thread/fiber"));
    }
    let t = d.thread;
    d.owner = Value::NIL;
    d.thread = Value::NIL;
    let waiting = d.waiting > 0;
    if let Some(td) = sched::data(t) {
        if let Some(i) = td.mutexes.iter().rposition(|&x| x == m) {
            td.mutexes.remove(i);
        }
    }
    if waiting || !ctx.vm().blocked_fibers.borrow().is_empty() {
        sched::wake_all(ctx);
    }
    Ok(())
}

/// Unlocks a mutex held by a thread that has ended (its waiters are woken by the thread's
/// end).
pub fn release_from_dead_thread(m: Value) {
    if let Some(d) = data_ref::<MutexData>(m) {
        d.owner = Value::NIL;
        d.thread = Value::NIL;
    }
}

fn m_lock(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    lock(ctx, recv, None)?;
    Ok(recv)
}

fn m_try_lock(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !mutex_arg(ctx, recv)?.owner.is_nil() {
        return Ok(Value::FALSE);
    }
    let me = crate::fiber::current(ctx);
    take(ctx, recv, me);
    Ok(Value::TRUE)
}

fn m_unlock(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    unlock(ctx, recv)?;
    Ok(recv)
}

fn m_locked_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(!mutex_arg(ctx, recv)?.owner.is_nil()))
}

fn m_owned_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let me = crate::fiber::current(ctx);
    Ok(Value::bool(mutex_arg(ctx, recv)?.owner == me))
}

fn m_synchronize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(thread_error(ctx, "must be called with a block"));
    };
    lock(ctx, recv, None)?;
    let r = ctx.yield_block(&b, &[]);
    let me = crate::fiber::current(ctx);
    if mutex_arg(ctx, recv)?.owner == me {
        unlock(ctx, recv)?;
    }
    r
}

/// `Mutex#sleep(timeout = nil)`: unlocks, sleeps until woken or the timeout, relocks.
/// Returns the whole seconds slept, or nil when the timeout passed.
fn m_sleep(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let deadline = deadline_of(ctx, args.pos.first().copied())?;
    let start = Instant::now();
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        // The scheduler's `kernel_sleep` does the waiting (woken by its `unblock`).
        unlock(ctx, recv)?;
        let r = crate::fiber::scheduler::kernel_sleep(ctx, s, args.pos);
        relock(ctx, recv)?;
        let woke = r?;
        if !woke.truthy() && deadline.is_some() {
            return Ok(Value::NIL);
        }
        return Ok(Value::fixnum(start.elapsed().as_secs_f64().round() as i64));
    }
    unlock(ctx, recv)?;
    let me = sched::current(ctx);
    td(me).wakeup = false;
    let woken = sched::wait_until(ctx, deadline, |_| Ok(std::mem::take(&mut td(me).wakeup)));
    relock(ctx, recv)?;
    let woken = woken?;
    if !woken && deadline.is_some() {
        return Ok(Value::NIL);
    }
    Ok(Value::fixnum(start.elapsed().as_secs_f64().round() as i64))
}

/// Locks `m` again after a wait, even when the wait is interrupted (`Thread#raise`,
/// `kill`), as CRuby does, so that an `ensure … unlock` finds it held; the interrupt is
/// raised once the lock is held.
fn relock(ctx: &mut Ctx, m: Value) -> Result<()> {
    let mut interrupt = None;
    loop {
        match lock(ctx, m, None) {
            Ok(_) => break,
            Err(e) => {
                let me = crate::fiber::current(ctx);
                if mutex_arg(ctx, m)?.owner == me {
                    return Err(e);
                }
                interrupt.get_or_insert(e);
            }
        }
    }
    match interrupt {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

// ---- ConditionVariable ----

pub struct CondVarData {
    /// Threads waiting, oldest first; `signal` removes the first.
    waiters: Vec<Value>,
}

crate::data_obj!(CondVarData, |s, m| {
    m.mark_all(&s.waiters);
});

fn alloc_cv(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(CondVarData { waiters: Vec::new() })))
}

fn cv_arg<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut CondVarData> {
    match data_ref::<CondVarData>(v) {
        Some(c) => Ok(c),
        None => Err(ctx.type_error("uninitialized ConditionVariable")),
    }
}

/// `wait(mutex, timeout = nil)`: releases `mutex` (any object with `sleep` like Mutex's),
/// sleeps until signalled or the timeout, relocks. Returns what `Mutex#sleep` would: nil
/// after a timeout, else the whole seconds slept.
fn cv_wait(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = args.pos[0];
    // A non-blocking fiber waits as itself (its scheduler blocks it), a thread as the thread.
    let thread = sched::current(ctx);
    let me = if crate::fiber::scheduler::active(ctx).is_some() { ctx.fiber_obj } else { thread };
    cv_arg(ctx, recv)?.waiters.push(me);
    if data_ref::<MutexData>(m).is_none() {
        // A mutex-like object: its `sleep` does the waiting (CRuby calls it too).
        let sleep = ctx.intern("sleep");
        let r = ctx.call(m, sleep, &args.pos[1..]);
        cv_arg(ctx, recv)?.waiters.retain(|&t| t != me);
        return r;
    }
    let deadline = deadline_of(ctx, args.pos.get(1).copied())?;
    let start = Instant::now();
    unlock(ctx, m)?;
    td(thread).wakeup = false;
    let r = sched::wait_on(ctx, recv, deadline, |ctx| Ok(!cv_arg(ctx, recv)?.waiters.contains(&me) || (me == thread && std::mem::take(&mut td(thread).wakeup))));
    cv_arg(ctx, recv)?.waiters.retain(|&t| t != me);
    relock(ctx, m)?;
    if !r? && deadline.is_some() {
        return Ok(Value::NIL);
    }
    Ok(Value::fixnum(start.elapsed().as_secs_f64().round() as i64))
}

fn cv_signal(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let c = cv_arg(ctx, recv)?;
    if !c.waiters.is_empty() {
        let w = c.waiters.remove(0);
        wake_waiter(ctx, w);
    }
    Ok(recv)
}

fn cv_broadcast(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let waiters = std::mem::take(&mut cv_arg(ctx, recv)?.waiters);
    let mark = ctx.stacks.protected.len();
    for &w in &waiters {
        ctx.protect(w);
    }
    for w in waiters {
        wake_waiter(ctx, w);
    }
    ctx.unprotect(mark);
    Ok(recv)
}

/// Wakes a condition variable's waiter: a thread, or a fiber blocked in its scheduler.
fn wake_waiter(ctx: &mut Ctx, w: Value) {
    if sched::data(w).is_some() {
        sched::wake_thread(ctx, w);
    } else {
        crate::fiber::scheduler::unblock_all(ctx);
    }
}

// ---- Queue and SizedQueue ----

pub struct QueueData {
    items: VecDeque<Value>,
    closed: bool,
    /// SizedQueue's capacity; None for a Queue.
    max: Option<usize>,
    /// Threads waiting in `pop` (and in a full SizedQueue's `push`).
    pop_waiting: usize,
    push_waiting: usize,
}

crate::data_obj!(QueueData, |s, m| {
    for &v in &s.items {
        m.mark(v);
    }
});

fn alloc_queue(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(QueueData { items: VecDeque::new(), closed: false, max: None, pop_waiting: 0, push_waiting: 0 })))
}

fn queue_arg<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut QueueData> {
    match data_ref::<QueueData>(v) {
        Some(q) => Ok(q),
        None => Err(ctx.type_error("uninitialized Queue")),
    }
}

fn q_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let items = match args.pos.first() {
        None => Vec::new(),
        Some(&v) => {
            let to_a = ctx.intern("to_a");
            if !ctx.respond_to(v, to_a, false) {
                let cname = object::class_name_of(ctx, v);
                return Err(ctx.type_error(&format!("can't convert {cname} into Array")));
            }
            let a = ctx.call(v, to_a, &[])?;
            if !array::is_array(a) {
                let cname = object::class_name_of(ctx, v);
                let got = object::class_name_of(ctx, a);
                return Err(ctx.type_error(&format!("can't convert {cname} into Array ({cname}#to_a gives {got})")));
            }
            array::to_vec(a)
        }
    };
    let q = queue_arg(ctx, recv)?;
    q.items = items.into();
    Ok(Value::NIL)
}

fn sq_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let max = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if max <= 0 {
        return Err(ctx.arg_error("queue size must be positive"));
    }
    queue_arg(ctx, recv)?.max = Some(max as usize);
    Ok(Value::NIL)
}

/// (non_block, timeout) of `pop`/`push`: a positional flag and a `timeout:` keyword.
fn block_args(ctx: &mut Ctx, args: &Args, flag_at: usize) -> Result<(bool, Option<Instant>)> {
    let non_block = args.pos.get(flag_at).is_some_and(|v| v.truthy());
    let timeout = args.kwarg(ctx, "timeout");
    if non_block && timeout.is_some_and(|t| !t.is_nil()) {
        return Err(ctx.arg_error("can't set a timeout if non_block is enabled"));
    }
    Ok((non_block, deadline_of(ctx, timeout)?))
}

fn q_push(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let (non_block, deadline) = block_args(ctx, args, 1)?;
    let q = queue_arg(ctx, recv)?;
    if q.closed {
        let c = ctx.c().closed_queue_error;
        return Err(ctx.raise(c, "queue closed"));
    }
    if let Some(max) = q.max {
        if q.items.len() >= max {
            if non_block {
                return Err(thread_error(ctx, "queue full"));
            }
            q.push_waiting += 1;
            let r = sched::wait_on(ctx, recv, deadline, |ctx| {
                let q = queue_arg(ctx, recv)?;
                Ok(q.closed || q.items.len() < max)
            });
            let q = queue_arg(ctx, recv)?;
            q.push_waiting -= 1;
            if !r? {
                return Ok(Value::NIL);
            }
            if q.closed {
                let c = ctx.c().closed_queue_error;
                return Err(ctx.raise(c, "queue closed"));
            }
        }
    }
    queue_arg(ctx, recv)?.items.push_back(v);
    sched::wake_all(ctx);
    Ok(recv)
}

fn q_pop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (non_block, deadline) = block_args(ctx, args, 0)?;
    let q = queue_arg(ctx, recv)?;
    if q.items.is_empty() {
        if non_block {
            return Err(thread_error(ctx, "queue empty"));
        }
        if q.closed {
            return Ok(Value::NIL);
        }
        q.pop_waiting += 1;
        let r = sched::wait_on(ctx, recv, deadline, |ctx| {
            let q = queue_arg(ctx, recv)?;
            Ok(q.closed || !q.items.is_empty())
        });
        queue_arg(ctx, recv)?.pop_waiting -= 1;
        r?;
    }
    let q = queue_arg(ctx, recv)?;
    let v = q.items.pop_front();
    if v.is_some() && q.max.is_some() && q.push_waiting > 0 {
        sched::wake_all(ctx);
    }
    Ok(v.unwrap_or(Value::NIL))
}

fn q_close(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let q = queue_arg(ctx, recv)?;
    if !q.closed {
        q.closed = true;
        sched::wake_all(ctx);
    }
    Ok(recv)
}

fn q_closed_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(queue_arg(ctx, recv)?.closed))
}

fn q_clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    queue_arg(ctx, recv)?.items.clear();
    sched::wake_all(ctx);
    Ok(recv)
}

fn q_empty_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(queue_arg(ctx, recv)?.items.is_empty()))
}

fn q_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(queue_arg(ctx, recv)?.items.len() as i64))
}

fn q_num_waiting(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let q = queue_arg(ctx, recv)?;
    Ok(Value::fixnum((q.pop_waiting + q.push_waiting) as i64))
}

fn q_freeze(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = object::inspect_string(ctx, recv)?;
    Err(ctx.type_error(&format!("cannot freeze {s}")))
}

fn q_marshal_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = object::inspect_string(ctx, recv)?;
    Err(ctx.type_error(&format!("can't dump {s}")))
}

fn sq_max(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(queue_arg(ctx, recv)?.max.unwrap_or(0) as i64))
}

fn sq_set_max(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let max = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if max <= 0 {
        return Err(ctx.arg_error("queue size must be positive"));
    }
    queue_arg(ctx, recv)?.max = Some(max as usize);
    sched::wake_all(ctx);
    Ok(args.pos[0])
}

pub fn init(ctx: &mut Ctx) {
    let m = ctx.c().mutex;
    crate::core::module::body(m).alloc = crate::core::module::AllocKind::Data(alloc_mutex);
    crate::methods!(ctx, m, [
        ("lock", m_lock, [0], Unsafe),
        ("try_lock", m_try_lock, [0], Unsafe),
        ("unlock", m_unlock, [0], Unsafe),
        ("locked?", m_locked_p, [0], Unsafe),
        ("owned?", m_owned_p, [0], Unsafe),
        ("synchronize", m_synchronize, [0], Unsafe),
        ("sleep", m_sleep, [0..=1], Unsafe),
        ("marshal_dump", q_marshal_dump, [0], Unsafe),
    ]);
    let cv = ctx.c().condition_variable;
    crate::core::module::body(cv).alloc = crate::core::module::AllocKind::Data(alloc_cv);
    crate::methods!(ctx, cv, [
        ("wait", cv_wait, [1..=2], Unsafe),
        ("signal", cv_signal, [0], Unsafe),
        ("broadcast", cv_broadcast, [0], Unsafe),
        ("marshal_dump", q_marshal_dump, [0], Unsafe),
    ]);
    let q = ctx.c().queue;
    crate::core::module::body(q).alloc = crate::core::module::AllocKind::Data(alloc_queue);
    crate::methods!(ctx, q, [
        ("initialize", q_initialize, [0..=1], Unsafe, Private),
        ("push", q_push, [1], Unsafe),
        ("<<", q_push, [1], Unsafe),
        ("enq", q_push, [1], Unsafe),
        ("pop", q_pop, [0..=1], Unsafe, Kw),
        ("shift", q_pop, [0..=1], Unsafe, Kw),
        ("deq", q_pop, [0..=1], Unsafe, Kw),
        ("close", q_close, [0], Unsafe),
        ("closed?", q_closed_p, [0], Unsafe),
        ("clear", q_clear, [0], Unsafe),
        ("empty?", q_empty_p, [0], Unsafe),
        ("length", q_length, [0], Unsafe),
        ("size", q_length, [0], Unsafe),
        ("num_waiting", q_num_waiting, [0], Unsafe),
        ("freeze", q_freeze, [0], Unsafe),
        ("marshal_dump", q_marshal_dump, [0], Unsafe),
    ]);
    let sq = ctx.c().sized_queue;
    crate::core::module::body(sq).alloc = crate::core::module::AllocKind::Data(alloc_queue);
    crate::methods!(ctx, sq, [
        ("initialize", sq_initialize, [1], Unsafe, Private),
        ("push", q_push, [1..=2], Unsafe, Kw),
        ("<<", q_push, [1..=2], Unsafe, Kw),
        ("enq", q_push, [1..=2], Unsafe, Kw),
        ("max", sq_max, [0], Unsafe),
        ("max=", sq_set_max, [1], Unsafe),
    ]);
}
