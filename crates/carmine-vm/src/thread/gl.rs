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
//! - With one thread nothing ever waits, so the interpreter's only cost is the interrupt
//!   word it already polls at safepoints.
//! - A waiter that has not got the GL after `TIME_SLICE` sets `INTERRUPT_YIELD` in the VM's
//!   interrupt word; the holder then hands the GL over at its next safepoint (`yield_now`)
//!   and does not take it back before another thread has had it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::interp::ops::INTERRUPT_YIELD;

/// How long a thread waits for the GL before asking the holder to hand it over (CRuby's
/// time slice is 100 ms).
pub const TIME_SLICE: Duration = Duration::from_millis(50);

#[derive(Default)]
struct State {
    held: bool,
    /// Threads waiting in `acquire`.
    waiting: u32,
    /// Count of acquisitions, so that a yielding thread sees that another one ran.
    acquisitions: u64,
}

#[derive(Default)]
pub struct GiantLock {
    state: Mutex<State>,
    cv: Condvar,
}

impl GiantLock {
    /// A lock already held by the thread that creates the VM.
    pub fn held() -> GiantLock {
        GiantLock { state: Mutex::new(State { held: true, waiting: 0, acquisitions: 1 }), cv: Condvar::new() }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Waits for the GL and takes it.
    pub fn acquire(&self, interrupt: &AtomicU32) {
        let st = self.lock();
        drop(self.take(st, interrupt));
    }

    fn take<'a>(&'a self, mut st: MutexGuard<'a, State>, interrupt: &AtomicU32) -> MutexGuard<'a, State> {
        if st.held {
            st.waiting += 1;
            while st.held {
                let (g, timeout) = self.cv.wait_timeout(st, TIME_SLICE).unwrap_or_else(|e| e.into_inner());
                st = g;
                if st.held && timeout.timed_out() {
                    interrupt.fetch_or(INTERRUPT_YIELD, Ordering::AcqRel);
                }
            }
            st.waiting -= 1;
        }
        st.held = true;
        st.acquisitions += 1;
        // A yielding thread waits for this acquisition.
        self.cv.notify_all();
        st
    }

    /// Gives the GL up.
    pub fn release(&self) {
        let mut st = self.lock();
        st.held = false;
        if st.waiting > 0 {
            self.cv.notify_all();
        }
    }

    /// Hands the GL to a waiting thread, if there is one, and waits to get it back after
    /// that thread has had it.
    pub fn yield_now(&self, interrupt: &AtomicU32) {
        let mut st = self.lock();
        if st.waiting == 0 {
            return;
        }
        st.held = false;
        let seen = st.acquisitions;
        self.cv.notify_all();
        while st.acquisitions == seen && st.waiting > 0 {
            st = self.cv.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        drop(self.take(st, interrupt));
    }

    /// Whether another thread waits for the GL.
    pub fn contended(&self) -> bool {
        self.lock().waiting > 0
    }
}
