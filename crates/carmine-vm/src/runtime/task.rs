//! Suspendable runs for hosts with an event loop (nginx): a script runs on a fiber of its
//! own (a *runner*), and when it would block — `sleep`, or IO on a descriptor that is not
//! ready — the run is suspended instead and the host is told what to wait for
//! (`Wait`); the host resumes it when that happened, from its own event loop.
//!
//! Invariants:
//! - A runner is a fiber entered by `transfer` from the thread's root fiber (so a script's
//!   `Fiber.yield` at its top level raises FiberError, as on a main fiber) and created
//!   *blocking*: a scheduler the script sets with `Fiber.set_scheduler` serves the fibers
//!   the script schedules, never the runner itself. While a step of a task runs,
//!   `Ctx::host_fiber` names its runner, and `fiber::scheduler::active` sends the
//!   runner's blocking operations to the host scheduler (`Ctx::host_scheduler`), whose
//!   hooks suspend the run by transferring back to the root fiber.
//! - A run suspends only from its runner, with no host method (C function) on the stack
//!   and, unless the host lets threads run while it is outside (`set_threads_outside`),
//!   no other Ruby thread alive (they run only while the VM's thread waits in the VM):
//!   otherwise the hooks wait by blocking, as a run without suspension does.
//! - Every isolated run has a tag (`Ctx::run_tag`), inherited by the threads it starts;
//!   `TaskState::current_run` is the run whose changes are in the VM, and a thread runs
//!   Ruby code only while its run is current (`thread::sched::wait_turn`). A run is
//!   current while it runs; a suspended run whose threads are alive is kept in
//!   `Runtime::parked`, and while the host is outside the VM one of them is current
//!   (`host_leave` swaps it in, `host_enter` out again; they take turns). A run's end
//!   kills its own threads only.
//! - `Mutex`, `Queue`, `SizedQueue` and `ConditionVariable` waits (the `block` hook)
//!   suspend only when the host set a waker (`Runtime::set_waker`): what ends them is
//!   another run's doing (a push, an unlock), which the host cannot watch. The runner is
//!   then listed in `TaskState::blocked` until that happens: `unblock` takes it off the
//!   list and calls the waker with it (inside the run or thread that woke it: on a Ruby
//!   thread's OS thread when a thread's end wakes a `Thread#join`, which the embedding
//!   layer hands to the host's thread), and the host resumes the task from its event loop. A woken run checks its condition
//!   again and may suspend again. Without a waker these waits block the thread.
//! - Any number of tasks may be suspended in one VM. Each step ends with the VM as the
//!   host left it: a suspending run's changes are swapped out of the VM (see
//!   `isolation`) and back in when it resumes, so every run sees only its own changes.
//! - Runners are reused: a run that ends leaves its runner idle (kept in `Runtime`, a VM
//!   root, up to `IDLE_RUNNERS`). A cancelled run's runner is killed (its `ensure`
//!   clauses run, waiting by blocking) and dropped.
//! - A run's timeout is a deadline fixed when it starts: suspended time counts, every
//!   wait's timeout is capped by what is left, and a step resumed after the deadline
//!   raises `Carmine::TimeoutError` at its first safepoint.

use std::cell::{Cell, RefCell};
use std::time::{Duration, Instant};

use super::{host, isolation, limits, Isolation, Runtime, Script};
use crate::core::module::{self, Arity, ThreadSafety, Visibility};
use crate::error::Unwind;
use crate::fiber::scheduler::{PRIORITY, READABLE, WRITABLE};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Idle runners a VM keeps for later runs.
const IDLE_RUNNERS: usize = 16;

/// What a suspended run waits for before it is resumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait {
    /// `READABLE` / `WRITABLE` bits for `fd`; 0 when the run only waits for time.
    pub events: i64,
    /// The descriptor (-1 when `events` is 0).
    pub fd: i32,
    /// Resume after this long at the latest, ready or not (None: no limit): the length of
    /// a `sleep`, an IO wait's timeout, or what is left of the run's timeout.
    pub timeout: Option<Duration>,
}

/// How one step of a task ended.
pub enum Step {
    /// The run ended (its isolation is undone): its value, or what ended it.
    Done(std::result::Result<Value, Unwind>),
    Suspended(Wait),
}

/// A run in progress (suspended between steps).
pub struct Task {
    runner: Value,
    /// The run's tag (0 for a shared run; see `Ctx::run_tag`).
    tag: u64,
    snapshot: Option<std::rc::Rc<isolation::RunSnapshot>>,
    /// Boxed: a `Task` is moved through every step and is small without it.
    swapped: Option<Box<isolation::Swapped>>,
    deadline: Option<Instant>,
}

/// What a runner runs next.
#[derive(Clone, Copy)]
struct Job {
    iseq: Value,
    /// For an isolated run: the `at_exit` blocks registered before it.
    at_exit: Option<usize>,
}

enum StepEnd {
    Suspended(Wait),
    Done(std::result::Result<Value, Unwind>),
}

/// Called with the runner of a task suspended in a `block` wait that can go on now (nil:
/// no task, the host is only asked to come back into the VM; see `thread_ended`).
pub type Waker = Box<dyn FnMut(Value)>;

/// Per-VM state of the tasks (in `HostState`).
#[derive(Default)]
pub struct TaskState {
    job: Cell<Option<Job>>,
    /// Set by the runner just before it hands control back to the host.
    end: RefCell<Option<StepEnd>>,
    waker: RefCell<Option<Waker>>,
    /// Runners suspended in a `block` wait, not yet woken (registered roots: see `runner`).
    blocked: RefCell<Vec<Value>>,
    /// The run whose changes are in the VM now (its tag; 0: the VM as the host left it).
    /// Threads of other runs wait for their run's turn (`thread::sched::wait_turn`).
    pub current_run: Cell<u64>,
    /// The host lets the VM's threads run while it is outside the VM (`Runtime::host_leave`),
    /// so a run may suspend while threads are alive (see the module invariants).
    pub threads_outside: Cell<bool>,
}

impl Task {
    /// The fiber the run is on (what a `Waker` is called with).
    pub fn runner(&self) -> Value {
        self.runner
    }
}

impl Runtime {
    /// Starts `script` as a task: like `run_script`, but a wait inside it suspends the run
    /// (`Step::Suspended`) instead of blocking; `resume_task` continues it.
    pub fn start_task(&mut self, script: &Script, isolation: Isolation) -> (Task, Step) {
        self.bind_thread();
        host_scheduler(&mut self.ctx);
        let snapshot = self.start_snapshot(isolation);
        let at_exit = snapshot.as_ref().map(|s| s.at_exit_len());
        let runner = self.runner();
        let tag = self.run_tag(snapshot.is_some());
        let mut task = Task { runner, tag, snapshot, swapped: None, deadline: limits::deadline(&self.vm) };
        self.vm.host.tasks.job.set(Some(Job { iseq: script.iseq, at_exit }));
        let step = self.step(&mut task, &[]);
        (task, step)
    }

    /// Continues a suspended task. `ready`: the events of its `Wait` that happened
    /// (`READABLE`/`WRITABLE` bits), 0 when its timeout passed (or its sleep ended).
    pub fn resume_task(&mut self, task: &mut Task, ready: i64) -> Step {
        self.bind_thread();
        self.step(task, &[Value::fixnum(ready)])
    }

    /// Ends a suspended task without resuming its wait: its `ensure` clauses and
    /// `at_exit` blocks run (their waits block), then its isolation is undone. Returns
    /// what ended it.
    pub fn cancel_task(&mut self, mut task: Task) -> std::result::Result<Value, Unwind> {
        self.bind_thread();
        self.settled = false;
        self.running += 1;
        limits::arm_until(&self.vm, task.deadline);
        self.swap_in_task(&mut task);
        let ctx = &mut *self.ctx;
        let r = crate::fiber::kill(ctx, task.runner);
        let end = self.vm.host.tasks.end.borrow_mut().take();
        let r = match end {
            Some(StepEnd::Done(r)) => r,
            _ => r.map(|_| Value::NIL),
        };
        self.retire(task.runner);
        let r = self.finish(&mut task, r);
        self.make_current(0);
        limits::disarm(&self.vm);
        self.running -= 1;
        r
    }

    /// Lets `Mutex`, `Queue` and `ConditionVariable` waits suspend a task: `waker` is
    /// called with the task's runner (`Task::runner`) when it may continue, and the host
    /// resumes it (with `ready` 0). `waker` runs inside the run that woke the task and
    /// must not call into the VM. None: those waits block again.
    pub fn set_waker(&mut self, waker: Option<Waker>) {
        *self.vm.host.tasks.waker.borrow_mut() = waker;
    }

    /// A runner for a new task: an idle one, or a new fiber.
    fn runner(&mut self) -> Value {
        if let Some(r) = self.idle_runners.pop() {
            return r;
        }
        let ctx = &mut *self.ctx;
        let fiber_class = ctx.c().fiber;
        let f = crate::fiber::new_fiber(ctx, fiber_class, crate::fiber::Body::Native(runner_body, Value::NIL), true, Value::NIL);
        host::gc_register(ctx, f);
        f
    }

    /// A runner whose run ended: kept for the next task when it can run again.
    fn retire(&mut self, runner: Value) {
        let idle = crate::fiber::data(runner).is_some_and(|d| d.is_alive());
        if idle && self.idle_runners.len() < IDLE_RUNNERS {
            self.idle_runners.push(runner);
        } else {
            host::gc_unregister(&self.ctx, runner);
        }
    }

    /// Runs the task until it suspends or ends.
    fn step(&mut self, task: &mut Task, msg: &[Value]) -> Step {
        self.settled = false;
        self.running += 1;
        limits::arm_until(&self.vm, task.deadline);
        self.swap_in_task(task);
        let ctx = &mut *self.ctx;
        let outer = std::mem::replace(&mut ctx.host_fiber, task.runner);
        let r = crate::fiber::transfer(ctx, task.runner, msg);
        ctx.host_fiber = outer;
        let end = self.vm.host.tasks.end.borrow_mut().take();
        let step = match end {
            Some(StepEnd::Suspended(wait)) => {
                let ctx = &mut *self.ctx;
                task.swapped = task.snapshot.as_ref().and_then(|s| s.swap_out(ctx, self.baseline.as_mut())).map(Box::new);
                self.make_current(0);
                // Its threads run while the host is outside the VM (`host_leave`).
                if task.tag != 0 && self.vm.host.tasks.threads_outside.get() && crate::thread::sched::run_has_threads(&self.ctx, task.tag) {
                    self.parked.push(Parked { tag: task.tag, snapshot: task.snapshot.clone(), swapped: task.swapped.take() });
                }
                let left = task.deadline.map(|d| d.saturating_duration_since(Instant::now()));
                let timeout = match (wait.timeout, left) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                Step::Suspended(Wait { timeout, ..wait })
            }
            Some(StepEnd::Done(r)) => {
                self.retire(task.runner);
                let r = self.finish(task, r);
                self.make_current(0);
                Step::Done(r)
            }
            // The runner ended on its own (a bug of the VM's, or a kill from inside).
            None => {
                self.retire(task.runner);
                let r = self.finish(task, r.map(|_| Value::NIL));
                self.make_current(0);
                Step::Done(r)
            }
        };
        limits::disarm(&self.vm);
        self.running -= 1;
        step
    }

    /// The end of a task's run, on the root fiber (see `end_run`).
    fn finish(&mut self, task: &mut Task, r: std::result::Result<Value, Unwind>) -> std::result::Result<Value, Unwind> {
        let snapshot = task.snapshot.take();
        self.end_run(snapshot, task.tag, r)
    }

    /// Puts the task's changes back into the VM (they were set aside when it suspended,
    /// in the task or, while its threads are alive, in `parked`) and makes it current.
    #[inline(always)]
    fn swap_in_task(&mut self, task: &mut Task) {
        if !self.parked.is_empty() {
            self.unpark(task);
        }
        if let Some(s) = task.swapped.take() {
            s.swap_in(&mut self.ctx);
        }
        self.make_current(task.tag);
    }

    /// Takes the task's changes back from `parked`, if they are there.
    #[cold]
    fn unpark(&mut self, task: &mut Task) {
        if let Some(i) = self.parked.iter().position(|p| p.tag == task.tag) {
            task.swapped = self.parked.swap_remove(i).swapped;
        }
    }

    /// The host goes back to its own loop (its outermost call into the VM returns): when
    /// it lets threads run meanwhile (`set_threads_outside`) and some are alive, the first
    /// suspended run with threads alive is made current (its changes swapped in, its
    /// threads woken) and the host must give the GL up (true: `host_release_gl`, once it
    /// no longer claims the VM). Runs with threads take turns, one per `host_leave`.
    #[inline]
    pub fn host_leave(&mut self) -> bool {
        // Usually no thread is alive (the test is two loads when none was ever made).
        if !self.vm.host.tasks.threads_outside.get() || self.ctx.thread_obj.is_nil() || !crate::thread::sched::others_running(&self.ctx) {
            return false;
        }
        self.leave_to_threads();
        true
    }

    #[cold]
    fn leave_to_threads(&mut self) {
        let ctx = &mut *self.ctx;
        if let Some(i) = self.parked.iter().position(|p| crate::thread::sched::run_has_threads(ctx, p.tag)) {
            let mut p = self.parked.remove(i);
            if let Some(s) = p.swapped.take() {
                s.swap_in(ctx);
            }
            let tag = p.tag;
            self.parked.push(p);
            self.current_parked = Some(tag);
            self.settled = false;
            self.make_current(tag);
            // The host's own context belongs to no run while it is outside.
            self.ctx.run_tag = 0;
        }
    }

    /// The host is back (it holds the GL again, `host_take_gl`): the run `host_leave` made
    /// current is set aside again, so the VM is as the host left it.
    #[inline]
    pub fn host_enter(&mut self) {
        if let Some(tag) = self.current_parked.take() {
            self.set_parked_aside(tag);
        }
    }

    #[cold]
    fn set_parked_aside(&mut self, tag: u64) {
        let ctx = &mut *self.ctx;
        if let Some(p) = self.parked.iter_mut().find(|p| p.tag == tag) {
            p.swapped = p.snapshot.as_ref().and_then(|s| s.swap_out(ctx, self.baseline.as_mut())).map(Box::new);
        }
        self.make_current(0);
    }

    /// Lets the VM's threads run while the host is outside the VM: the host calls
    /// `host_leave` whenever it returns to its loop and `host_enter` when it comes back,
    /// and its waker may be called on any thread. Runs may then suspend while threads are
    /// alive (`Thread#join` and `Thread#value` suspend them).
    pub fn set_threads_outside(&mut self, on: bool) {
        self.vm.host.tasks.threads_outside.set(on);
    }

    /// Makes run `tag` the one whose changes are in the VM (0: none) and wakes its threads.
    #[inline(always)]
    pub(super) fn make_current(&mut self, tag: u64) {
        self.ctx.run_tag = tag;
        self.vm.host.tasks.current_run.set(tag);
        if tag != 0 && !self.ctx.thread_obj.is_nil() {
            crate::thread::sched::wake_run(&self.ctx, tag);
        }
    }
}

/// A suspended run whose threads are alive: its changes, set aside, and made current
/// while the host is outside the VM (`Runtime::host_leave`).
pub(super) struct Parked {
    tag: u64,
    snapshot: Option<std::rc::Rc<isolation::RunSnapshot>>,
    swapped: Option<Box<isolation::Swapped>>,
}

/// The body of every runner: runs the job it is given, reports the end to the host and
/// waits (idle) for the next one.
fn runner_body(ctx: &mut Ctx, _arg: Value) -> Result<Value> {
    loop {
        let job = ctx.vm().host.tasks.job.take();
        let r = match job {
            Some(job) => super::run_top(ctx, job.iseq, job.at_exit),
            None => Ok(Value::NIL),
        };
        if let Err(Unwind::Throw { tag, .. }) = r {
            if crate::fiber::is_kill_tag(ctx, tag) {
                // Cancelled: the runner ends here.
                *ctx.vm().host.tasks.end.borrow_mut() = Some(StepEnd::Done(Ok(Value::NIL)));
                return r;
            }
        }
        *ctx.vm().host.tasks.end.borrow_mut() = Some(StepEnd::Done(r));
        let root = ctx.fibers.root;
        crate::fiber::transfer(ctx, root, &[])?;
    }
}

/// A thread of run `ctx.run_tag` ended. When it was its run's last and other runs' threads
/// wait for their turn (the host is outside the VM with this run current: see
/// `Runtime::host_leave`), the host is asked back (its waker, with no runner) so that its
/// next return hands the turn on.
pub fn thread_ended(ctx: &Ctx) {
    let tag = ctx.run_tag;
    if tag == 0 || !ctx.vm().host.tasks.threads_outside.get() || crate::thread::sched::run_has_threads(ctx, tag) {
        return;
    }
    let waiting = ctx.vm().threads.borrow().iter().any(|e| crate::thread::sched::data(e.obj).is_some_and(|d| d.run_tag != 0 && d.run_tag != tag));
    if waiting {
        if let Some(wake) = ctx.vm().host.tasks.waker.borrow_mut().as_mut() {
            wake(Value::NIL);
        }
    }
}

// ---- the host scheduler ----

/// The object whose hooks suspend runs (made once per thread context).
fn host_scheduler(ctx: &mut Ctx) -> Value {
    if !ctx.host_scheduler.is_nil() {
        return ctx.host_scheduler;
    }
    let object = ctx.c().object;
    let k = crate::core::module_methods::new_class(ctx, object, None);
    use ThreadSafety::Unsafe;
    use Visibility::Public;
    module::define_builtin(ctx, k, "kernel_sleep", hook_kernel_sleep, Arity::rest(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "io_wait", hook_io_wait, Arity::range(2, 3), Unsafe, Public, false);
    module::define_builtin(ctx, k, "block", hook_block, Arity::range(1, 2), Unsafe, Public, false);
    module::define_builtin(ctx, k, "unblock", hook_unblock, Arity::exact(2), Unsafe, Public, false);
    let s = crate::core::object::new_object(ctx, k);
    ctx.host_scheduler = s;
    s
}

/// Whether the running code may suspend its run now (see the module invariants).
fn can_suspend(ctx: &Ctx) -> bool {
    let h = ctx.host_fiber;
    !h.is_nil() && h == ctx.fiber_obj && ctx.vm().host.calls.get() == 0 && (ctx.vm().host.tasks.threads_outside.get() || !crate::thread::sched::others_running(ctx))
}

/// Runs `f` as if no host scheduler were there (its waits block the thread).
fn blocking<T>(ctx: &mut Ctx, f: impl FnOnce(&mut Ctx) -> T) -> T {
    let h = std::mem::replace(&mut ctx.host_fiber, Value::NIL);
    let r = f(ctx);
    ctx.host_fiber = h;
    r
}

/// Suspends the run until the host resumes it; the events the host reports ready.
fn suspend(ctx: &mut Ctx, wait: Wait) -> Result<i64> {
    *ctx.vm().host.tasks.end.borrow_mut() = Some(StepEnd::Suspended(wait));
    let root = ctx.fibers.root;
    let v = crate::fiber::transfer(ctx, root, &[])?;
    // Resumed after the run's deadline: the timeout is raised here, where the wait was.
    if ctx.vm().interrupt.load(std::sync::atomic::Ordering::Relaxed) & crate::interp::ops::INTERRUPT_LIMIT != 0 {
        limits::check(ctx)?;
    }
    Ok(v.as_fixnum().unwrap_or(0))
}

fn seconds(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<Duration>> {
    match v {
        Some(&v) if !v.is_nil() => {
            let s = crate::core::numeric::to_f64(ctx, v)?;
            Ok(Some(Duration::from_secs_f64(s.clamp(0.0, 1e9))))
        }
        _ => Ok(None),
    }
}

/// `kernel_sleep(*duration)`: `sleep`.
fn hook_kernel_sleep(ctx: &mut Ctx, _recv: Value, args: &crate::interp::Args) -> Result<Value> {
    let secs = crate::core::kernel::sleep_seconds(ctx, args.pos)?;
    if !can_suspend(ctx) {
        blocking(ctx, |ctx| crate::core::thread::sleep(ctx, secs))?;
        return Ok(Value::NIL);
    }
    let timeout = secs.map(|s| Duration::from_secs_f64(s.min(1e9)));
    suspend(ctx, Wait { events: 0, fd: -1, timeout })?;
    Ok(Value::NIL)
}

/// `io_wait(io, events, timeout)`: the events ready, or false after the timeout.
fn hook_io_wait(ctx: &mut Ctx, _recv: Value, args: &crate::interp::Args) -> Result<Value> {
    let io = args.pos[0];
    let events = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
    let timeout = args.pos.get(2).copied().unwrap_or(Value::NIL);
    let fd = crate::core::io::io_ref(io).filter(|o| !o.closed).map(|o| o.fd);
    let Some(fd) = fd.filter(|_| can_suspend(ctx)) else {
        let got = blocking(ctx, |ctx| crate::core::io::wait::wait_events(ctx, io, events, Some(&timeout)))?;
        return Ok(if got == 0 { Value::FALSE } else { Value::fixnum(got) });
    };
    let mut want = events & (READABLE | WRITABLE);
    if events & PRIORITY != 0 {
        want |= READABLE;
    }
    let timeout = seconds(ctx, Some(&timeout))?;
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut poll_events = 0;
    if events & (READABLE | PRIORITY) != 0 {
        poll_events |= libc::POLLIN;
    }
    if events & WRITABLE != 0 {
        poll_events |= libc::POLLOUT;
    }
    loop {
        let timeout = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let got = suspend(ctx, Wait { events: want, fd, timeout })? & events;
        if got == 0 {
            return Ok(Value::FALSE);
        }
        // The host's word is checked: a descriptor reported ready early is waited for again.
        if crate::fiber::scheduler::ready_now(fd, poll_events) {
            return Ok(Value::fixnum(got));
        }
    }
}

/// `block(blocker, timeout = nil)`: waits once, until it is woken (the caller checks its
/// condition again) or the timeout passes: by suspending the run when the host set a
/// waker, else by blocking the thread.
fn hook_block(ctx: &mut Ctx, _recv: Value, args: &crate::interp::Args) -> Result<Value> {
    let timeout = seconds(ctx, args.pos.get(1))?;
    if can_suspend(ctx) && ctx.vm().host.tasks.waker.borrow().is_some() {
        let fiber = ctx.fiber_obj;
        ctx.vm().host.tasks.blocked.borrow_mut().push(fiber);
        let r = suspend(ctx, Wait { events: 0, fd: -1, timeout });
        ctx.vm().host.tasks.blocked.borrow_mut().retain(|&f| f != fiber);
        r?;
        return Ok(Value::TRUE);
    }
    let deadline = timeout.map(|d| Instant::now() + d);
    let mut woken = false;
    blocking(ctx, |ctx| {
        crate::thread::sched::wait_until(ctx, deadline, |_| {
            let r = woken;
            woken = true;
            Ok(r)
        })
    })?;
    Ok(Value::TRUE)
}

/// `unblock(blocker, fiber)`: a task suspended in `block` is handed to the host's waker
/// (once: it is taken off the list). Blocked threads are woken by the caller.
fn hook_unblock(ctx: &mut Ctx, _recv: Value, args: &crate::interp::Args) -> Result<Value> {
    let fiber = args.pos[1];
    let tasks = &ctx.vm().host.tasks;
    let was_blocked = {
        let mut blocked = tasks.blocked.borrow_mut();
        let before = blocked.len();
        blocked.retain(|&f| f != fiber);
        blocked.len() != before
    };
    if was_blocked {
        if let Some(wake) = tasks.waker.borrow_mut().as_mut() {
            wake(fiber);
        }
    }
    Ok(Value::NIL)
}
