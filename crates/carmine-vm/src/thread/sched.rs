//! Threads of one VM: their registry, safe regions, waiting and waking, and the interrupts
//! one thread sends another (`Thread#raise`, `Thread#kill`, a forwarded SIGINT).
//!
//! Invariants:
//! - Everything here except `ThreadShared` is read and written only by the GL holder.
//! - A thread outside the GL is in a *safe region*: `Ctx::safe_sp` holds the stack pointer
//!   below its spilled callee-saved registers, so the collector (running on the GL holder)
//!   scans `[safe_sp, native_stack_hi)` and the thread's `Ctx` as roots. Code in a safe
//!   region touches no Ruby value and no VM table.
//! - `Vm::threads` lists every thread that has started and not finished, with its `Ctx`;
//!   a thread made by `Thread.new` but not started yet is listed with a null `Ctx`.
//! - A thread started by an embedding host's run carries the run's tag and runs Ruby code
//!   only while that run is current (`wait_turn`, after every taking of the GL); an
//!   embedding host that lets threads run while it is outside the VM gives the GL up
//!   between its calls, its context listed with no native stack to scan (`safe_sp` 0).
//! - A thread blocked with no deadline counts in `Vm::forever_sleepers` while its
//!   `ThreadData::sleeping_forever` is set; when every listed thread sleeps forever, the
//!   main thread gets `fatal` ("No live threads left. Deadlock?"), as in CRuby.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::Unwind;
use crate::heap::stack_scan::with_registers_spilled;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// `ThreadShared::pending` bits.
pub const PENDING_KILL: u32 = 1;
pub const PENDING_RAISE: u32 = 2;
/// Signals wait in the VM's inbox for the main thread (posted by another thread that saw
/// the VM's `INTERRUPT_SIGNAL`).
pub const PENDING_SIGNAL: u32 = 4;
pub const PENDING_DEADLOCK: u32 = 8;

/// The longest a blocked thread sleeps before it looks at the VM's interrupt word again
/// (a SIGINT is recorded there by the signal handler, which cannot wake it).
const POLL: Duration = Duration::from_millis(50);

/// The part of a thread that other threads touch without the GL: they post interrupts
/// and wake it.
#[derive(Default)]
pub struct ThreadShared {
    pub pending: AtomicU32,
    pub wake: AtomicBool,
    /// The OS thread id (`gettid`), once the thread runs.
    pub tid: std::sync::atomic::AtomicI64,
    handle: std::sync::OnceLock<std::thread::Thread>,
}

impl ThreadShared {
    /// Records the calling native thread as the one to unpark.
    pub fn attach(&self) {
        let _ = self.handle.set(std::thread::current());
        // SAFETY: gettid has no preconditions.
        self.tid.store(unsafe { libc::gettid() } as i64, Ordering::Release);
    }

    /// Sets the wake flag and unparks the thread, unless the flag was already set (the
    /// thread then has an unpark coming, or has not parked since).
    pub fn wake(&self) {
        if !self.wake.swap(true, Ordering::AcqRel) {
            if let Some(h) = self.handle.get() {
                h.unpark();
            }
        }
    }

    pub fn post(&self, bits: u32) {
        self.pending.fetch_or(bits, Ordering::AcqRel);
        self.wake();
    }
}

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Status {
    /// Made, not started yet, or running / waiting for the GL.
    Run,
    /// Blocked in `sleep`, `join`, `Queue#pop`, `Mutex#lock` …
    Sleep,
    /// Unwinding after `kill`.
    Aborting,
    Dead,
}

/// The payload of a Thread object.
pub struct ThreadData {
    pub shared: Arc<ThreadShared>,
    pub status: Status,
    /// The running thread's context; null before it starts and after it ends.
    pub ctx: *mut Ctx,
    pub is_main: bool,
    pub block: Value,
    pub args: Value,
    /// The block's value once the thread ended normally.
    pub value: Value,
    /// The exception that ended the thread, or nil.
    pub exception: Value,
    /// Exceptions posted by `Thread#raise`, oldest first.
    pub pending_raise: Vec<Value>,
    /// A `Thread#kill` came after a pending `Thread#raise`: the raise is taken first (the
    /// thread ends with that exception), as CRuby takes interrupts in order.
    pub raise_before_kill: bool,
    /// `Thread#[]` of the thread's root fiber (a Hash or nil), and of its other fibers
    /// (fiber, Hash); entries of finished fibers are dropped when one is added.
    pub locals: Value,
    pub fiber_locals: Vec<(Value, Value)>,
    /// `thread_variable_get` / `_set`: thread-wide.
    pub vars: Value,
    /// The creating fiber's storage (`Fiber[]`), copied for the new thread's root fiber.
    pub storage: Value,
    pub name: Value,
    pub report_on_exception: bool,
    pub abort_on_exception: bool,
    pub priority: i64,
    /// `Thread#wakeup` was called and not yet consumed by a `sleep`.
    pub wakeup: bool,
    pub sleeping_forever: bool,
    /// Killed (`Thread#kill`): ends without an exception even while unwinding.
    pub killed: bool,
    /// Mutexes this thread holds, unlocked when it ends.
    pub mutexes: Vec<Value>,
    /// `Thread.handle_interrupt` masks (Hashes of class => timing), innermost last.
    pub masks: Vec<Value>,
    /// The ThreadGroup (nil until first asked: ThreadGroup::Default).
    pub group: Value,
    /// Where `Thread.new` was called, for `inspect`.
    pub location: String,
    pub started: bool,
    /// The embedding host's run that started it, directly or through other threads (0:
    /// none; see `wait_turn`).
    pub run_tag: u64,
}

crate::data_obj!(ThreadData, |s, m| {
    m.mark(s.block);
    m.mark(s.args);
    m.mark(s.value);
    m.mark(s.exception);
    m.mark_all(&s.pending_raise);
    m.mark(s.locals);
    for &(f, h) in &s.fiber_locals {
        m.mark(f);
        m.mark(h);
    }
    m.mark(s.vars);
    m.mark(s.storage);
    m.mark(s.name);
    m.mark_all(&s.mutexes);
    m.mark_all(&s.masks);
    m.mark(s.group);
});

impl ThreadData {
    pub fn new(report_on_exception: bool) -> ThreadData {
        ThreadData {
            shared: Arc::new(ThreadShared::default()),
            status: Status::Run,
            ctx: std::ptr::null_mut(),
            is_main: false,
            block: Value::NIL,
            args: Value::NIL,
            value: Value::NIL,
            exception: Value::NIL,
            pending_raise: Vec::new(),
            raise_before_kill: false,
            locals: Value::NIL,
            fiber_locals: Vec::new(),
            vars: Value::NIL,
            storage: Value::NIL,
            name: Value::NIL,
            report_on_exception,
            abort_on_exception: false,
            priority: 0,
            wakeup: false,
            sleeping_forever: false,
            killed: false,
            mutexes: Vec::new(),
            masks: Vec::new(),
            group: Value::NIL,
            location: String::new(),
            started: false,
            run_tag: 0,
        }
    }
}

/// The payload of a Thread object, or `None` for other objects.
pub fn data<'a>(v: Value) -> Option<&'a mut ThreadData> {
    data_ref::<ThreadData>(v)
}

pub fn td<'a>(v: Value) -> &'a mut ThreadData {
    data(v).expect("a Thread object")
}

/// A thread listed in `Vm::threads`.
#[derive(Copy, Clone)]
pub struct Entry {
    pub obj: Value,
    pub ctx: *mut Ctx,
}

/// The running thread's Thread object (the main thread's is made on first use).
pub fn current(ctx: &mut Ctx) -> Value {
    if ctx.thread_obj.is_nil() {
        let mut d = ThreadData::new(ctx.vm().report_on_exception.get());
        d.is_main = true;
        d.started = true;
        d.ctx = ctx as *mut Ctx;
        d.shared.attach();
        let t = crate::core::object::new_data(ctx, ctx.c().thread, Box::new(d));
        ctx.thread_obj = t;
        ctx.vm().main_thread.set(t);
        let cp = ctx as *mut Ctx;
        ctx.vm().threads.borrow_mut().push(Entry { obj: t, ctx: cp });
    }
    ctx.thread_obj
}

pub fn is_main(ctx: &Ctx) -> bool {
    ctx.thread_obj.is_nil() || ctx.thread_obj == ctx.vm().main_thread.get()
}

/// Runs `f` outside the GL (a safe region): `f` must not touch Ruby values or the VM.
pub fn without_gl<R>(ctx: &mut Ctx, f: impl FnOnce() -> R) -> R {
    let out = outside_gl(ctx, f);
    wait_turn(ctx);
    out
}

/// `without_gl` without `wait_turn`.
fn outside_gl<R>(ctx: &mut Ctx, f: impl FnOnce() -> R) -> R {
    let vm = ctx.vm_ptr();
    let cp = ctx as *mut Ctx;
    let mut f = Some(f);
    let mut out = None;
    with_registers_spilled(&mut |sp| {
        // SAFETY: the context belongs to this thread; while `safe_sp` is set only the
        // collector (on the GL holder) reads it. The VM outlives its threads.
        unsafe {
            (*cp).safe_sp = sp;
            (*vm).gl.release();
            out = f.take().map(|f| f());
            (*vm).gl.acquire(&(*vm).interrupt);
            (*cp).safe_sp = 0;
        }
    });
    out.unwrap_or_else(|| crate::fiber::fatal("safe region did not run"))
}

/// Called with the GL just taken: a thread started by an embedding host's run (its
/// `run_tag`) runs Ruby code only while that run's state is the VM's
/// (`TaskState::current_run`, see `runtime::task`); otherwise it gives the GL back and
/// sleeps until its run is made current (`wake_run`). A thread asked to die goes on
/// regardless (its `ensure` clauses run against the state current then), so that
/// closing a VM never waits for a run that cannot become current again.
pub fn wait_turn(ctx: &mut Ctx) {
    let tag = ctx.run_tag;
    if tag == 0 {
        return;
    }
    loop {
        if ctx.vm().host.tasks.current_run.get() == tag {
            return;
        }
        let Some(d) = data(ctx.thread_obj) else { return };
        if d.shared.pending.load(Ordering::Acquire) & PENDING_KILL != 0 {
            return;
        }
        let shared = d.shared.clone();
        outside_gl(ctx, || {
            if !shared.wake.swap(false, Ordering::AcqRel) {
                std::thread::park_timeout(POLL);
            }
            shared.wake.store(false, Ordering::Release);
        });
    }
}

/// Wakes the threads of run `tag`, which just became current (see `wait_turn`).
pub fn wake_run(ctx: &Ctx, tag: u64) {
    for e in ctx.vm().threads.borrow().iter() {
        if let Some(d) = data(e.obj) {
            if d.run_tag == tag {
                d.shared.wake();
            }
        }
    }
}

/// Whether a thread of run `tag` is alive (made and not finished).
pub fn run_has_threads(ctx: &Ctx, tag: u64) -> bool {
    ctx.vm().threads.borrow().iter().any(|e| data(e.obj).is_some_and(|d| d.run_tag == tag))
}

/// Whether threads other than this one exist (then blocking operations leave the GL).
pub fn others_running(ctx: &Ctx) -> bool {
    ctx.vm().threads.borrow().len() > 1
}

/// Waits until `fd` is readable (or has an error or hang-up) without the GL, when other
/// threads exist; interrupts (`Thread#kill`, `raise`) are taken between 50 ms polls. A
/// non-blocking fiber waits through its fiber scheduler instead.
pub fn wait_readable(ctx: &mut Ctx, fd: i32) -> Result<()> {
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        return crate::fiber::scheduler::wait_fd(ctx, s, fd, libc::POLLIN);
    }
    if !others_running(ctx) {
        return Ok(());
    }
    wait_fd(ctx, fd, libc::POLLIN)
}

/// Waits until `fd` can take more output, as `wait_readable` waits for input.
pub fn wait_writable(ctx: &mut Ctx, fd: i32) -> Result<()> {
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        return crate::fiber::scheduler::wait_fd(ctx, s, fd, libc::POLLOUT);
    }
    if !others_running(ctx) {
        return Ok(());
    }
    wait_fd(ctx, fd, libc::POLLOUT)
}

/// Waits until `fd` is ready for `events` (poll bits) in every case: after a non-blocking
/// descriptor answered EAGAIN (`IO#nonblock = true`, CRuby's pipes and sockets) the
/// operation must wait even when no other thread exists. Through the fiber scheduler for a
/// non-blocking fiber, else poll(2) without the GL, interruptible.
pub fn wait_ready(ctx: &mut Ctx, fd: i32, events: i16) -> Result<()> {
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        return crate::fiber::scheduler::wait_fd(ctx, s, fd, events);
    }
    let mut fds = [libc::pollfd { fd, events, revents: 0 }];
    poll_fds(ctx, &mut fds, None).map(|_| ())
}

fn wait_fd(ctx: &mut Ctx, fd: i32, events: i16) -> Result<()> {
    loop {
        // A thread blocked on IO reports "sleep", as CRuby's do.
        let saved = data(ctx.thread_obj).map(|d| std::mem::replace(&mut d.status, Status::Sleep));
        let ready = without_gl(ctx, || {
            let mut p = libc::pollfd { fd, events, revents: 0 };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut p, 1, POLL.as_millis() as i32) }
        });
        if let (Some(status), Some(d)) = (saved, data(ctx.thread_obj)) {
            d.status = status;
        }
        if ready != 0 {
            return Ok(());
        }
        if ctx.vm().interrupt.load(Ordering::Relaxed) != 0 {
            crate::interp::ops::handle_interrupt(ctx)?;
        }
        check_pending_at(ctx, true)?;
    }
}

/// poll(2) over several descriptors until one is ready or `deadline` passes (the count
/// of ready descriptors, 0 at the deadline). The GL is left while waiting and interrupts
/// are taken between 50 ms slices, so `IO.select` is interruptible like other waits.
pub fn poll_fds(ctx: &mut Ctx, fds: &mut [libc::pollfd], deadline: Option<Instant>) -> Result<i32> {
    loop {
        let slice = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()).min(POLL),
            None => POLL,
        };
        let saved = data(ctx.thread_obj).map(|d| std::mem::replace(&mut d.status, Status::Sleep));
        let ptr = fds.as_mut_ptr() as usize;
        let len = fds.len();
        let n = without_gl(ctx, || {
            // SAFETY: `ptr` points at `len` pollfds owned by the caller for this call.
            unsafe { libc::poll(ptr as *mut libc::pollfd, len as libc::nfds_t, slice.as_millis() as i32) }
        });
        if let (Some(status), Some(d)) = (saved, data(ctx.thread_obj)) {
            d.status = status;
        }
        if n > 0 {
            return Ok(n);
        }
        if n < 0 {
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINTR);
            if e != libc::EINTR {
                return Err(crate::core::process::errno_error(ctx, e, "select"));
            }
        }
        if ctx.vm().interrupt.load(Ordering::Relaxed) != 0 {
            crate::interp::ops::handle_interrupt(ctx)?;
        }
        check_pending_at(ctx, true)?;
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(0);
        }
    }
}

/// Hands the GL to a thread that has waited for it a whole time slice (at a safepoint).
pub fn yield_gl(ctx: &mut Ctx) {
    let vm = ctx.vm_ptr();
    let cp = ctx as *mut Ctx;
    with_registers_spilled(&mut |sp| {
        // SAFETY: as in `without_gl`.
        unsafe {
            (*cp).safe_sp = sp;
            (*vm).gl.yield_now(&(*vm).interrupt);
            (*cp).safe_sp = 0;
        }
    });
    wait_turn(ctx);
}

/// Raises what other threads posted to this one (kill, raise, SIGINT, deadlock), unless
/// `Thread.handle_interrupt` defers it; `blocking` says whether the thread is in a
/// blocking operation (where `:on_blocking` interrupts are taken).
pub fn check_pending_at(ctx: &mut Ctx, blocking: bool) -> Result<()> {
    let t = ctx.thread_obj;
    let Some(d) = data(t) else { return Ok(()) };
    if d.shared.pending.load(Ordering::Acquire) == 0 {
        return Ok(());
    }
    let bits = d.shared.pending.swap(0, Ordering::AcqRel);
    let r = take_pending(ctx, t, bits, blocking);
    let (keep, err) = match r {
        Ok(keep) => (keep, None),
        Err((keep, e)) => (keep, Some(e)),
    };
    if keep != 0 {
        td(t).shared.pending.fetch_or(keep, Ordering::AcqRel);
    }
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

pub fn check_pending(ctx: &mut Ctx) -> Result<()> {
    check_pending_at(ctx, false)
}

/// Handles the posted `bits`: Err with the unwind to raise, and in both cases the bits
/// still pending (deferred, or not handled yet).
fn take_pending(ctx: &mut Ctx, t: Value, bits: u32, blocking: bool) -> std::result::Result<u32, (u32, Unwind)> {
    let mut keep = 0;
    let raise_first = bits & PENDING_KILL != 0 && td(t).raise_before_kill && td(t).pending_raise.first().is_some_and(|&e| deliverable(ctx, t, e, blocking));
    if raise_first {
        td(t).raise_before_kill = false;
        let e = td(t).pending_raise.remove(0);
        return Err((bits, raise_in_target(ctx, e)));
    }
    if bits & PENDING_KILL != 0 {
        // CRuby masks a kill like an Integer (its internal kill signal is a Fixnum).
        if deliverable(ctx, t, Value::fixnum(0), blocking) {
            let d = td(t);
            d.killed = true;
            d.status = Status::Aborting;
            d.pending_raise.clear();
            return Err((0, crate::fiber::kill_unwind(ctx)));
        }
        keep |= PENDING_KILL;
    }
    let rest = bits & !PENDING_KILL;
    if rest & PENDING_DEADLOCK != 0 {
        let fatal = ctx.c().fatal;
        return Err((keep | (rest & !PENDING_DEADLOCK), ctx.raise(fatal, "No live threads left. Deadlock?")));
    }
    if rest & PENDING_SIGNAL != 0 {
        if let Err(e) = crate::core::signal::run_handlers(ctx) {
            return Err((keep | (rest & !PENDING_SIGNAL), e));
        }
    }
    if rest & PENDING_RAISE != 0 {
        let list = td(t).pending_raise.clone();
        for (i, e) in list.into_iter().enumerate() {
            if deliverable(ctx, t, e, blocking) {
                let d = td(t);
                d.pending_raise.remove(i);
                if !d.pending_raise.is_empty() {
                    keep |= PENDING_RAISE;
                }
                return Err((keep, raise_in_target(ctx, e)));
            }
        }
        if !td(t).pending_raise.is_empty() {
            keep |= PENDING_RAISE;
        }
    }
    Ok(keep)
}

/// The unwind that delivers a `Thread#raise` of `e` in its target thread: as CRuby, the
/// target asks for the exception again (`exception` without arguments), and an
/// exception without a backtrace gets the target's, where it was interrupted.
fn raise_in_target(ctx: &mut Ctx, e: Value) -> Unwind {
    let e = match ctx.call(e, crate::symbol::sym::EXCEPTION, &[]) {
        Ok(x) if crate::core::object::is_a(ctx, x, ctx.c().exception) => x,
        Ok(_) => e,
        Err(u) => return u,
    };
    crate::core::exception::ensure_backtrace(ctx, e);
    Unwind::Raise(e)
}

/// Whether an interrupt raising `e` may be taken now under the thread's
/// `Thread.handle_interrupt` masks (innermost first; the first key `e` is a kind of wins).
fn deliverable(ctx: &mut Ctx, t: Value, e: Value, blocking: bool) -> bool {
    let masks = td(t).masks.clone();
    for m in masks.iter().rev() {
        for (k, v) in crate::core::hash::pairs(*m) {
            if crate::core::module::is_class_or_module(k) && crate::core::object::is_a(ctx, e, k) {
                let timing = v.as_symbol().map(|s| ctx.sym_str(s)).unwrap_or_default();
                return match timing.as_str() {
                    "never" => false,
                    "on_blocking" => blocking,
                    _ => true,
                };
            }
        }
    }
    true
}

/// Whether `t` has interrupts deferred by `Thread.handle_interrupt` (of class `klass`, or
/// any).
pub fn has_pending(ctx: &mut Ctx, t: Value, klass: Option<Value>) -> bool {
    let d = td(t);
    let kill = d.shared.pending.load(Ordering::Acquire) & PENDING_KILL != 0;
    let list = d.pending_raise.clone();
    match klass {
        None => kill || !list.is_empty(),
        Some(k) => list.iter().any(|&e| crate::core::object::is_a(ctx, e, k)),
    }
}

/// Wakes every blocked thread of the VM to re-check what it waits for. A thread that is
/// not blocked needs nothing: it checks its condition (under the GL, which the caller
/// holds) before it blocks.
pub fn wake_all(ctx: &mut Ctx) {
    let vm = ctx.vm();
    for e in vm.threads.borrow().iter() {
        if td(e.obj).status == Status::Sleep {
            wake_thread(ctx, e.obj);
        }
    }
    crate::fiber::scheduler::unblock_all(ctx);
}

/// Wakes one thread (it re-checks what it waits for).
pub fn wake_thread(ctx: &Ctx, t: Value) {
    let d = td(t);
    if d.sleeping_forever {
        d.sleeping_forever = false;
        let n = ctx.vm().forever_sleepers.get();
        ctx.vm().forever_sleepers.set(n.saturating_sub(1));
    }
    d.shared.wake();
}

/// Posts `bits` to thread `t` (and wakes it).
pub fn post(ctx: &Ctx, t: Value, bits: u32) {
    wake_thread(ctx, t);
    td(t).shared.post(bits);
}

/// Blocks this thread until `ready` (checked with the GL held) returns true, `deadline`
/// passes (`Ok(false)`), or another thread interrupts it (the interrupt is raised).
pub fn wait_until(ctx: &mut Ctx, deadline: Option<Instant>, ready: impl FnMut(&mut Ctx) -> Result<bool>) -> Result<bool> {
    wait_on(ctx, Value::NIL, deadline, ready)
}

/// `wait_until` on `blocker` (the Mutex, Queue, Thread … waited for): a non-blocking fiber
/// waits in its fiber scheduler's `block(blocker, timeout)` instead of blocking the thread.
pub fn wait_on(ctx: &mut Ctx, blocker: Value, deadline: Option<Instant>, mut ready: impl FnMut(&mut Ctx) -> Result<bool>) -> Result<bool> {
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        return crate::fiber::scheduler::wait_until(ctx, s, blocker, deadline, &mut ready, |ctx| {
            if ctx.vm().interrupt.load(Ordering::Relaxed) != 0 {
                crate::interp::ops::handle_interrupt(ctx)?;
            }
            check_pending_at(ctx, true)
        });
    }
    let me = current(ctx);
    loop {
        if ctx.vm().interrupt.load(Ordering::Relaxed) != 0 {
            crate::interp::ops::handle_interrupt(ctx)?;
        }
        check_pending_at(ctx, true)?;
        if ready(ctx)? {
            return Ok(true);
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(false);
        }
        crate::core::io::flush_stdout(ctx);
        let d = td(me);
        let status = d.status;
        d.status = Status::Sleep;
        if deadline.is_none() {
            d.sleeping_forever = true;
            let vm = ctx.vm();
            vm.forever_sleepers.set(vm.forever_sleepers.get() + 1);
            if vm.forever_sleepers.get() >= vm.threads.borrow().len() && !vm.ignore_deadlock.get() {
                let main = vm.main_thread.get();
                post(ctx, main, PENDING_DEADLOCK);
            }
        }
        let shared = d.shared.clone();
        let vm = ctx.vm_ptr() as usize;
        let main = is_main(ctx);
        without_gl(ctx, || {
            // SAFETY: only the interrupt word (an atomic) is read; the VM outlives us.
            let interrupt = unsafe { &(*(vm as *const crate::vm::Vm)).interrupt };
            park(&shared, interrupt, main, deadline)
        });
        let d = td(me);
        d.status = status;
        if d.sleeping_forever {
            d.sleeping_forever = false;
            let vm = ctx.vm();
            vm.forever_sleepers.set(vm.forever_sleepers.get().saturating_sub(1));
        }
    }
}

/// Sleeps outside the GL until woken, interrupted, or past `deadline`.
fn park(shared: &ThreadShared, interrupt: &AtomicU32, main: bool, deadline: Option<Instant>) {
    loop {
        if shared.wake.swap(false, Ordering::AcqRel) || shared.pending.load(Ordering::Acquire) != 0 {
            return;
        }
        if main && interrupt.load(Ordering::Relaxed) & crate::interp::ops::INTERRUPT_SIGNAL != 0 {
            return;
        }
        if interrupt.load(Ordering::Relaxed) & crate::interp::ops::INTERRUPT_LIMIT != 0 {
            return;
        }
        let mut slice = POLL;
        if let Some(d) = deadline {
            let now = Instant::now();
            if now >= d {
                return;
            }
            slice = slice.min(d - now);
        }
        std::thread::park_timeout(slice);
    }
}

/// The interrupts a safepoint or a blocking operation looks at: the VM's word (SIGINT,
/// a waiting thread's time slice) and this thread's pending ones.
pub fn poll_interrupts(ctx: &mut Ctx) -> Result<()> {
    if ctx.vm().interrupt.load(Ordering::Relaxed) != 0 {
        crate::interp::ops::handle_interrupt(ctx)
    } else {
        check_pending(ctx)
    }
}

/// Kills every other thread and waits until they have ended (their `ensure` clauses run),
/// when the main thread ends.
#[inline]
pub fn terminate_all(ctx: &mut Ctx) {
    let me = ctx.thread_obj;
    // Usually no other thread is alive (an embedded VM checks at the end of every run).
    if me.is_nil() || ctx.vm().threads.borrow().iter().all(|e| e.obj == me) {
        return;
    }
    terminate_others(ctx, None);
}

/// Kills the threads of an embedding host's run `tag` (those it started, and theirs) and
/// waits until they have ended, when the run ends.
#[inline]
pub fn terminate_run(ctx: &mut Ctx, tag: u64) {
    if ctx.thread_obj.is_nil() || !run_has_threads(ctx, tag) {
        return;
    }
    terminate_others(ctx, Some(tag));
}

/// Kills the other threads (of run `tag` only, when given) and waits until they have ended.
#[cold]
fn terminate_others(ctx: &mut Ctx, tag: Option<u64>) {
    let me = ctx.thread_obj;
    let chosen = move |t: Value| t != me && tag.is_none_or(|tag| td(t).run_tag == tag);
    let others: Vec<Value> = ctx.vm().threads.borrow().iter().map(|e| e.obj).filter(|&t| chosen(t)).collect();
    for &t in &others {
        post(ctx, t, PENDING_KILL);
    }
    let mark = ctx.protect(me);
    for &t in &others {
        ctx.protect(t);
    }
    let ended = move |ctx: &Ctx| !ctx.vm().threads.borrow().iter().any(|e| chosen(e.obj));
    loop {
        // Interrupts that reach the main thread now (another SIGINT) are ignored: it is
        // ending anyway.
        match wait_until(ctx, None, |ctx| Ok(ended(ctx))) {
            Ok(_) => break,
            Err(_) => {
                if ended(ctx) {
                    break;
                }
            }
        }
    }
    ctx.unprotect(mark);
}
