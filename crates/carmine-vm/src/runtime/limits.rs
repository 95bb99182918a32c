//! Limits an embedding host puts on a run: a wall-clock timeout and a memory cap, each
//! ending a runaway script with an exception at its next safepoint.
//!
//! Invariants:
//! - Nothing here is on the dispatch loop's path: a limit that trips sets
//!   `INTERRUPT_LIMIT` in the VM's interrupt word, which safepoints already poll; the
//!   handler (`check`) raises. While a limit stays tripped the bit is set again after
//!   each raise, so a script that rescues the exception is stopped at the next safepoint.
//! - Limits are armed only during a run (`arm` … `disarm`); `disarm` clears the bit and
//!   every tripped flag, so the next run starts clean.
//! - The timeout is kept by one watchdog thread per VM, started when a timeout is first
//!   set (again in a forked child, which inherits the VM but not the thread) and joined
//!   when the VM is dropped; it touches only the VM's interrupt word and its own state.
//! - The memory cap is compared against the heap's pages plus the out-of-line buffers of
//!   live objects (measured at each collection, only while a cap is set) plus the buffer
//!   bytes allocated since that collection.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::interp::ops::INTERRUPT_LIMIT;
use crate::thread::Ctx;
use crate::vm::Vm;
use crate::Result;

#[derive(Default)]
pub struct Limits {
    timeout: Cell<Option<Duration>>,
    memory_cap: Cell<usize>,
    /// Out-of-line bytes owned by the objects alive after the last collection (measured
    /// only while a cap is set).
    live_buffers: Cell<usize>,
    armed: Cell<bool>,
    memory_exceeded: Cell<bool>,
    /// A limit ended (or is ending) the current run.
    tripped: Cell<bool>,
    watchdog: RefCell<Option<Watchdog>>,
}

struct Watchdog {
    shared: Arc<WatchShared>,
    thread: Option<std::thread::JoinHandle<()>>,
    /// The process that started the thread: a forked child has the struct but not the
    /// thread, and starts its own.
    pid: u32,
}

struct WatchShared {
    state: Mutex<WatchState>,
    wake: Condvar,
    /// The deadline of the current run passed.
    fired: AtomicBool,
}

struct WatchState {
    deadline: Option<Instant>,
    quit: bool,
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        if self.pid != std::process::id() {
            // A forked child's copy: the thread is not here, and its lock may have been
            // held at the fork; touch neither.
            if let Some(t) = self.thread.take() {
                std::mem::forget(t);
            }
            return;
        }
        if let Ok(mut st) = self.shared.state.lock() {
            st.quit = true;
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The watchdog's loop: sleeps until the armed deadline, then trips the VM's interrupt.
fn watch(shared: Arc<WatchShared>, interrupt: usize) {
    // SAFETY: `interrupt` is the address of the VM's interrupt word; the VM joins this
    // thread (dropping its `Watchdog`) before its memory is freed.
    let interrupt = unsafe { &*(interrupt as *const AtomicU32) };
    let Ok(mut st) = shared.state.lock() else { return };
    loop {
        if st.quit {
            return;
        }
        st = match st.deadline {
            None => match shared.wake.wait(st) {
                Ok(g) => g,
                Err(_) => return,
            },
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    st.deadline = None;
                    shared.fired.store(true, Ordering::Release);
                    interrupt.fetch_or(INTERRUPT_LIMIT, Ordering::AcqRel);
                    continue;
                }
                match shared.wake.wait_timeout(st, d - now) {
                    Ok((g, _)) => g,
                    Err(_) => return,
                }
            }
        };
    }
}

impl Limits {
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout.get()
    }

    pub fn memory_cap(&self) -> usize {
        self.memory_cap.get()
    }

    /// Whether a limit ended the current or last run (until the next `arm`).
    pub fn tripped(&self) -> bool {
        self.tripped.get()
    }
}

/// Sets the timeout of later runs (None: none), starting the watchdog on first use.
pub fn set_timeout(vm: &Vm, t: Option<Duration>) -> std::io::Result<()> {
    let l = &vm.host.limits;
    let stale = l.watchdog.borrow().as_ref().is_some_and(|w| w.pid != std::process::id());
    if stale {
        l.watchdog.borrow_mut().take();
    }
    if t.is_some() && l.watchdog.borrow().is_none() {
        let shared = Arc::new(WatchShared { state: Mutex::new(WatchState { deadline: None, quit: false }), wake: Condvar::new(), fired: AtomicBool::new(false) });
        let s = shared.clone();
        let interrupt = &vm.interrupt as *const AtomicU32 as usize;
        let thread = std::thread::Builder::new().name("carmine-watchdog".into()).stack_size(64 * 1024).spawn(move || watch(s, interrupt))?;
        *l.watchdog.borrow_mut() = Some(Watchdog { shared, thread: Some(thread), pid: std::process::id() });
    }
    l.timeout.set(t);
    Ok(())
}

pub fn set_memory_cap(vm: &Vm, bytes: usize) {
    vm.host.limits.memory_cap.set(bytes);
}

/// Starts the limits of a run.
pub fn arm(vm: &Vm) {
    arm_until(vm, deadline(vm));
}

/// When a run starting now must end by the timeout (None: no timeout).
pub fn deadline(vm: &Vm) -> Option<Instant> {
    vm.host.limits.timeout.get().map(|t| Instant::now() + t)
}

/// Starts the limits of a run (or of one step of a suspendable run) whose time is up at
/// `deadline`: a deadline already past trips the timeout at once.
#[inline]
pub fn arm_until(vm: &Vm, deadline: Option<Instant>) {
    let l = &vm.host.limits;
    l.tripped.set(false);
    l.memory_exceeded.set(false);
    l.armed.set(true);
    if l.watchdog.borrow().is_none() {
        return;
    }
    if l.watchdog.borrow().as_ref().is_some_and(|w| w.pid != std::process::id()) {
        // In a forked child: start a watchdog of its own.
        let _ = set_timeout(vm, l.timeout.get());
    }
    if let (Some(d), Some(w)) = (deadline, l.watchdog.borrow().as_ref()) {
        if d <= Instant::now() {
            w.shared.fired.store(true, Ordering::Release);
            vm.interrupt.fetch_or(INTERRUPT_LIMIT, Ordering::AcqRel);
            return;
        }
        w.shared.fired.store(false, Ordering::Release);
        if let Ok(mut st) = w.shared.state.lock() {
            st.deadline = Some(d);
        }
        w.shared.wake.notify_all();
    }
}

/// Ends the limits of a run (`tripped` still tells whether one ended it).
#[inline]
pub fn disarm(vm: &Vm) {
    let l = &vm.host.limits;
    l.armed.set(false);
    l.memory_exceeded.set(false);
    if let Some(w) = l.watchdog.borrow().as_ref() {
        if let Ok(mut st) = w.shared.state.lock() {
            st.deadline = None;
        }
        w.shared.fired.store(false, Ordering::Release);
    }
    vm.interrupt.fetch_and(!INTERRUPT_LIMIT, Ordering::AcqRel);
}

/// At a safepoint that found `INTERRUPT_LIMIT`: raises for a tripped limit.
#[cold]
pub fn check(ctx: &mut Ctx) -> Result<()> {
    let l = &ctx.vm().host.limits;
    if !l.armed.get() {
        return Ok(());
    }
    let timed_out = l.watchdog.borrow().as_ref().is_some_and(|w| w.shared.fired.load(Ordering::Acquire));
    let memory = l.memory_exceeded.get();
    let (ms, cap) = (l.timeout.get().map_or(0, |t| t.as_millis()), l.memory_cap.get());
    let (class, msg) = if timed_out {
        (timeout_error_class(ctx), format!("execution expired (timeout of {ms} ms)"))
    } else if memory {
        (ctx.c().no_memory_error, format!("memory limit of {cap} bytes exceeded"))
    } else {
        return Ok(());
    };
    ctx.vm().host.limits.tripped.set(true);
    // Raised again at every later safepoint until the run ends.
    ctx.vm().interrupt.fetch_or(INTERRUPT_LIMIT, Ordering::AcqRel);
    Err(ctx.raise(class, &msg))
}

/// `Carmine::TimeoutError` (an Exception, not a StandardError: a bare `rescue` does not
/// catch it).
pub fn timeout_error_class(ctx: &mut Ctx) -> crate::value::Value {
    let carmine = super::host::carmine_module(ctx);
    let id = ctx.intern("TimeoutError");
    if let Some(e) = crate::core::module::body(carmine).const_get(id) {
        return e.value;
    }
    let exception = ctx.c().exception;
    let k = crate::core::module_methods::define_class_under(ctx, carmine, "TimeoutError", exception);
    ctx.vm().bump_const_epoch();
    k
}

/// Bytes the heap uses: its pages, the buffers of live objects as of the last
/// collection, and buffers allocated since.
fn usage_estimate(vm: &Vm) -> usize {
    let heap = vm.heap.lock();
    heap.page_count() * crate::heap::page::PAGE_SIZE + vm.host.limits.live_buffers.get() + heap.malloc_increase
}

/// Bytes the heap uses now (walks the heap: for hosts, not for hot paths).
pub fn memory_usage(vm: &Vm) -> usize {
    let heap = vm.heap.lock();
    let mut buffers = 0;
    heap.for_each_object(&mut |p| buffers += crate::stdlib::objspace::memsize::owned_bytes(crate::value::Value::from_ptr(p)));
    heap.page_count() * crate::heap::page::PAGE_SIZE + buffers + heap.malloc_increase
}

/// Whether buffer growth should collect now to enforce the cap (a run is armed, no limit
/// tripped yet, and the estimate is past the cap).
#[inline]
pub fn wants_collection_for_cap(vm: &Vm) -> bool {
    let l = &vm.host.limits;
    l.memory_cap.get() != 0 && l.armed.get() && !l.memory_exceeded.get() && usage_estimate(vm) > l.memory_cap.get()
}

/// After a collection: measures the live buffers and trips the cap if it is exceeded.
pub fn after_collection(vm: &Vm) {
    let l = &vm.host.limits;
    if l.memory_cap.get() == 0 {
        return;
    }
    let usage = memory_usage(vm);
    let heap = vm.heap.lock();
    let pages = heap.page_count() * crate::heap::page::PAGE_SIZE;
    drop(heap);
    l.live_buffers.set(usage.saturating_sub(pages));
    if l.armed.get() && usage > l.memory_cap.get() {
        l.memory_exceeded.set(true);
        vm.interrupt.fetch_or(INTERRUPT_LIMIT, Ordering::AcqRel);
    }
}
