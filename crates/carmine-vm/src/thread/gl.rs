//! The giant lock (GL): the right to run Ruby code in one VM.
//!
//! Every part of the interpreter is still "not yet thread-safe" (seed 003's term), so a
//! thread holds the GL whenever it runs Ruby code or a builtin, and leaves it only in
//! *safe regions*: blocking operations (`sleep`, `join`, `Queue#pop`, `Mutex#lock` …) and
//! the hand-over at a safepoint when another thread has waited a whole time slice.
//!
//! Invariants:
//! - The GL is a flag under a mutex, not an OS lock held across Ruby code: whoever set
//!   `held` owns it, whatever native thread that is (an embedder may drive a VM from
//!   different threads one after the other).
//! - Waiters queue in arrival order (an embedding host coming back into its VM goes first,
//!   `acquire_first`) and the GL is handed directly to the first of them:
//!   `held` stays set and only that waiter is woken (each waits on its own condition
//!   variable), so a hand-over costs the same with 5,000 waiting threads as with one.
//! - With one thread nothing ever waits, so the interpreter's only cost is the interrupt
//!   word it already polls at safepoints.
//! - Waiters sleep without timeouts. While any thread waits, a timer thread (started at
//!   the first contention, one per VM) sets `INTERRUPT_YIELD` in the VM's interrupt word
//!   once the holder has had the GL for `TIME_SLICE`; the holder then hands the GL over
//!   at its next safepoint (`yield_now`) and queues behind the threads already waiting.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::interp::ops::INTERRUPT_YIELD;

/// How long a thread may hold the GL while others wait before it is asked to hand it over
/// (CRuby's time slice is 100 ms).
pub const TIME_SLICE: Duration = Duration::from_millis(50);

/// One thread waiting for the GL: set `granted` and notify to hand it the GL.
#[derive(Default)]
struct Waiter {
    granted: Mutex<bool>,
    cv: Condvar,
}

impl Waiter {
    fn grant(&self) {
        *self.granted.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.cv.notify_one();
    }

    fn wait(&self) {
        let mut g = self.granted.lock().unwrap_or_else(|e| e.into_inner());
        while !*g {
            g = self.cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

struct State {
    held: bool,
    /// When the holder got the GL: it is asked to yield only after a whole time slice.
    held_since: Instant,
    /// Threads waiting for the GL, first come first served.
    queue: VecDeque<Arc<Waiter>>,
    /// The timer thread runs (it is started at the first contention).
    timer: bool,
    /// Set when the VM goes away: the timer thread ends.
    shutdown: bool,
}

/// What the timer thread shares with the lock.
struct Shared {
    state: Mutex<State>,
    /// Wakes the timer thread when the queue becomes non-empty (or at shutdown).
    timer_cv: Condvar,
}

/// The interrupt word of the VM, for the timer thread.
#[derive(Clone, Copy)]
struct InterruptPtr(*const AtomicU32);

// SAFETY: the word is an atomic that outlives the timer thread (`GiantLock::drop` joins
// the thread before the VM that holds both is freed).
unsafe impl Send for InterruptPtr {}

pub struct GiantLock {
    shared: Arc<Shared>,
    timer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Default for GiantLock {
    fn default() -> Self {
        let state = State { held: false, held_since: Instant::now(), queue: VecDeque::new(), timer: false, shutdown: false };
        GiantLock { shared: Arc::new(Shared { state: Mutex::new(state), timer_cv: Condvar::new() }), timer_thread: Mutex::new(None) }
    }
}

impl Drop for GiantLock {
    fn drop(&mut self) {
        self.lock().shutdown = true;
        self.shared.timer_cv.notify_all();
        if let Some(h) = self.timer_thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = h.join();
        }
    }
}

impl GiantLock {
    /// A lock already held by the thread that creates the VM.
    pub fn held() -> GiantLock {
        let gl = GiantLock::default();
        gl.lock().held = true;
        gl
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the GL and takes it.
    pub fn acquire(&self, interrupt: &AtomicU32) {
        self.take(interrupt, false);
    }

    /// Takes the GL ahead of the threads waiting for it: an embedding host coming back into
    /// its VM (its event loop waits on it). The holder is asked to hand the GL over at its
    /// next safepoint, not after a whole time slice.
    pub fn acquire_first(&self, interrupt: &AtomicU32) {
        self.take(interrupt, true);
    }

    /// Takes the GL, waiting last in the queue, or (`first`) first with the holder asked
    /// to yield now.
    fn take(&self, interrupt: &AtomicU32, first: bool) {
        let mut st = self.lock();
        if !st.held {
            st.held = true;
            st.held_since = Instant::now();
            return;
        }
        let me = Arc::new(Waiter::default());
        self.enqueue(&mut st, me.clone(), interrupt);
        if first {
            // `enqueue` put it last.
            if let Some(w) = st.queue.pop_back() {
                st.queue.push_front(w);
            }
            interrupt.fetch_or(INTERRUPT_YIELD, Ordering::AcqRel);
        }
        drop(st);
        me.wait();
        interrupt.fetch_and(!INTERRUPT_YIELD, Ordering::AcqRel);
    }

    /// Queues a waiter and makes sure the timer watches the holder's time slice.
    fn enqueue(&self, st: &mut State, w: Arc<Waiter>, interrupt: &AtomicU32) {
        st.queue.push_back(w);
        if st.queue.len() == 1 {
            if !st.timer {
                st.timer = true;
                self.start_timer(interrupt);
            }
            self.shared.timer_cv.notify_one();
        }
    }

    fn start_timer(&self, interrupt: &AtomicU32) {
        let shared = self.shared.clone();
        let ip = InterruptPtr(interrupt);
        let spawned = std::thread::Builder::new().name("carmine-gl-timer".into()).spawn(move || {
            let ip = ip;
            run_timer(&shared, ip);
        });
        // Without a timer a holder that never blocks keeps the GL; threads still run
        // whenever it blocks or passes.
        if let Ok(h) = spawned {
            *self.timer_thread.lock().unwrap_or_else(|e| e.into_inner()) = Some(h);
        }
    }

    /// Gives the GL up: to the first waiter, if any.
    pub fn release(&self) {
        let mut st = self.lock();
        match st.queue.pop_front() {
            Some(next) => {
                st.held_since = Instant::now();
                next.grant();
            }
            None => st.held = false,
        }
    }

    /// Hands the GL to the first waiting thread, if there is one, and waits to get it back
    /// after the threads already waiting have had it.
    pub fn yield_now(&self, interrupt: &AtomicU32) {
        let mut st = self.lock();
        let Some(next) = st.queue.pop_front() else { return };
        let me = Arc::new(Waiter::default());
        st.queue.push_back(me.clone());
        st.held_since = Instant::now();
        next.grant();
        drop(st);
        me.wait();
        interrupt.fetch_and(!INTERRUPT_YIELD, Ordering::AcqRel);
    }

    /// Whether another thread waits for the GL.
    pub fn contended(&self) -> bool {
        !self.lock().queue.is_empty()
    }

    /// In the child of a `fork`: the timer thread and every waiter are gone; the lock is
    /// replaced without being dropped (its mutexes may be held by threads that no longer
    /// exist, and its timer thread cannot be joined).
    pub fn replace_after_fork(old: &mut GiantLock) {
        std::mem::forget(std::mem::replace(old, GiantLock::held()));
    }
}

/// The timer: while threads wait, asks the holder to yield each time it has held the GL
/// for a whole time slice.
fn run_timer(shared: &Shared, interrupt: InterruptPtr) {
    let mut st = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    while !st.shutdown {
        if st.queue.is_empty() {
            st = shared.timer_cv.wait(st).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let held = st.held_since.elapsed();
        let wait = if held >= TIME_SLICE {
            // SAFETY: see `InterruptPtr`.
            unsafe { (*interrupt.0).fetch_or(INTERRUPT_YIELD, Ordering::AcqRel) };
            TIME_SLICE
        } else {
            TIME_SLICE - held
        };
        st = shared.timer_cv.wait_timeout(st, wait).unwrap_or_else(|e| e.into_inner()).0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hands_over_in_arrival_order() {
        let gl = Arc::new(GiantLock::held());
        let interrupt = Arc::new(AtomicU32::new(0));
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut handles = Vec::new();
        for i in 0..4 {
            let (g, interrupt, order) = (gl.clone(), interrupt.clone(), order.clone());
            handles.push(std::thread::spawn(move || {
                g.acquire(&interrupt);
                order.lock().unwrap().push(i);
                g.release();
            }));
            // Each thread queues before the next one starts.
            while gl.lock().queue.len() < i + 1 {
                std::thread::yield_now();
            }
        }
        gl.release();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
        assert!(!gl.lock().held);
    }

    #[test]
    fn acquire_first_goes_ahead_of_the_queue() {
        let gl = Arc::new(GiantLock::held());
        let interrupt = Arc::new(AtomicU32::new(0));
        let order = Arc::new(Mutex::new(Vec::new()));
        let spawn = |name: &'static str, first: bool| {
            let (g, i, o) = (gl.clone(), interrupt.clone(), order.clone());
            std::thread::spawn(move || {
                if first {
                    g.acquire_first(&i);
                } else {
                    g.acquire(&i);
                }
                o.lock().unwrap().push(name);
                g.release();
            })
        };
        let a = spawn("thread", false);
        while gl.lock().queue.len() < 1 {
            std::thread::yield_now();
        }
        let b = spawn("host", true);
        while gl.lock().queue.len() < 2 {
            std::thread::yield_now();
        }
        assert!(interrupt.load(Ordering::Acquire) & INTERRUPT_YIELD != 0, "the holder is asked to yield at once");
        gl.release();
        a.join().unwrap();
        b.join().unwrap();
        assert_eq!(*order.lock().unwrap(), vec!["host", "thread"]);
    }

    #[test]
    fn yield_now_runs_the_waiters_first() {
        let gl = Arc::new(GiantLock::held());
        let interrupt = Arc::new(AtomicU32::new(0));
        let ran = Arc::new(Mutex::new(false));
        let (g2, i2, r2) = (gl.clone(), interrupt.clone(), ran.clone());
        let h = std::thread::spawn(move || {
            g2.acquire(&i2);
            *r2.lock().unwrap() = true;
            g2.release();
        });
        while !gl.contended() {
            std::thread::yield_now();
        }
        gl.yield_now(&interrupt);
        assert!(*ran.lock().unwrap());
        assert!(gl.lock().held);
        h.join().unwrap();
    }
}
