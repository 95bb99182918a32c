//! Receiving signals: one process-wide handler and one dedicated thread that delivers
//! each signal to the VMs that asked for it, as an interrupt of their main thread.
//!
//! Invariants:
//! - The C handler only does async-signal-safe work: it counts the signal in `PENDING` and
//!   writes one byte to a pipe. Everything else happens on the "carmine-signal" thread,
//!   which reads the pipe and, for every registered VM, queues the signal in its `Inbox`,
//!   sets `INTERRUPT_SIGNAL` in its interrupt word and wakes its main thread.
//! - Signal dispositions are process-wide, so they are the one piece of process-global state
//!   here (`PENDING`, the pipe, the registry); a VM registers its inbox when it installs
//!   a handler and unregisters when it is dropped (the inbox is held weakly).
//! - A forked child has no signal thread: `restart_after_fork` makes a new one (and pipe)
//!   if the parent had one, and points this VM's registration at its new main thread.
//! - The main thread runs the Ruby-level handlers at its next safepoint (see
//!   `interp::ops::handle_interrupt` and `core::signal`); a blocked main thread is woken.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Once, Weak};

use crate::thread::sched::ThreadShared;

const NSIG: usize = 65;

static PENDING: [AtomicU32; NSIG] = [const { AtomicU32::new(0) }; NSIG];
static PIPE_W: AtomicI32 = AtomicI32::new(-1);
static PIPE_R: AtomicI32 = AtomicI32::new(-1);
static START: Once = Once::new();
static REGISTRY: Mutex<Vec<Registration>> = Mutex::new(Vec::new());

/// Signals delivered to one VM and not yet handled by its main thread.
#[derive(Default)]
pub struct Inbox {
    pub queue: Mutex<VecDeque<i32>>,
}

struct Registration {
    inbox: Weak<Inbox>,
    main: Arc<ThreadShared>,
    /// The VM's interrupt word; valid while `inbox` is alive (the VM owns both).
    interrupt: *const AtomicU32,
}

// SAFETY: `interrupt` points at an atomic inside a VM that outlives its registration
// (the registration is dropped with the VM's inbox, checked through the Weak).
unsafe impl Send for Registration {}

extern "C" fn on_signal(sig: libc::c_int) {
    if (sig as usize) < NSIG {
        PENDING[sig as usize].fetch_add(1, Ordering::AcqRel);
    }
    let fd = PIPE_W.load(Ordering::Acquire);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; a full pipe just drops the wake-up byte
        // (the count in PENDING is what matters).
        unsafe { libc::write(fd, &b as *const u8 as *const libc::c_void, 1) };
    }
}

fn start_thread() {
    START.call_once(|| {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return;
        }
        // SAFETY: F_SETFL on the write end just made.
        unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) };
        spawn_receiver(fds);
    });
}

fn spawn_receiver(fds: [i32; 2]) {
    PIPE_R.store(fds[0], Ordering::Release);
    PIPE_W.store(fds[1], Ordering::Release);
    let rfd = fds[0];
    let _ = std::thread::Builder::new().name("carmine-signal".into()).spawn(move || receive(rfd));
}

/// In the child of a `fork` (only the forking thread exists): a new signal thread, on a
/// new pipe, when the parent had one; this VM's signals go to `main` from now on.
pub fn restart_after_fork(inbox: &Arc<Inbox>, main: Arc<ThreadShared>, interrupt: &AtomicU32) {
    let old_w = PIPE_W.swap(-1, Ordering::AcqRel);
    if old_w < 0 {
        return;
    }
    // SAFETY: both ends belonged to the parent's signal thread, which does not exist here.
    unsafe {
        libc::close(old_w);
        libc::close(PIPE_R.load(Ordering::Acquire));
    }
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    // SAFETY: F_SETFL on the write end just made.
    unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) };
    // The parent's signal thread may have held the registry at the fork; then it stays
    // locked in the child and this VM keeps its old registration.
    if let Ok(mut reg) = REGISTRY.try_lock() {
        reg.retain(|r| r.inbox.strong_count() > 0 && r.inbox.as_ptr() != Arc::as_ptr(inbox));
        reg.push(Registration { inbox: Arc::downgrade(inbox), main, interrupt });
    }
    spawn_receiver(fds);
}

fn receive(rfd: i32) {
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: buf is a valid writable buffer.
        let n = unsafe { libc::read(rfd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return;
        }
        for sig in 1..NSIG {
            let count = PENDING[sig].swap(0, Ordering::AcqRel);
            for _ in 0..count {
                deliver(sig as i32);
            }
        }
    }
}

fn deliver(sig: i32) {
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    reg.retain(|r| r.inbox.strong_count() > 0);
    for r in reg.iter() {
        let Some(inbox) = r.inbox.upgrade() else { continue };
        inbox.queue.lock().unwrap_or_else(|e| e.into_inner()).push_back(sig);
        // SAFETY: the VM is alive while its inbox is (see `Registration`).
        unsafe { (*r.interrupt).fetch_or(crate::interp::ops::INTERRUPT_SIGNAL, Ordering::AcqRel) };
        r.main.wake();
    }
}

/// Registers a VM (its inbox, main thread and interrupt word) for delivery, once.
pub fn register(inbox: &Arc<Inbox>, main: Arc<ThreadShared>, interrupt: &AtomicU32) {
    start_thread();
    let mut reg = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    if reg.iter().any(|r| r.inbox.as_ptr() == Arc::as_ptr(inbox)) {
        return;
    }
    reg.push(Registration { inbox: Arc::downgrade(inbox), main, interrupt });
}

/// How the process reacts to a signal.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Disposition {
    /// Caught and delivered to registered VMs.
    Catch,
    Ignore,
    /// The system's default action.
    Default,
}

/// Sets the process's disposition of `sig`; the previous one.
pub fn set_disposition(sig: i32, d: Disposition) -> std::io::Result<Disposition> {
    if d == Disposition::Catch {
        start_thread();
    }
    // SAFETY: zeroed sigactions are valid; the handler is async-signal-safe.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        let mut old: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = match d {
            Disposition::Catch => on_signal as extern "C" fn(libc::c_int) as usize,
            Disposition::Ignore => libc::SIG_IGN,
            Disposition::Default => libc::SIG_DFL,
        };
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(sig, &sa, &mut old) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(match old.sa_sigaction {
            libc::SIG_IGN => Disposition::Ignore,
            libc::SIG_DFL => Disposition::Default,
            _ => Disposition::Catch,
        })
    }
}

/// Waits briefly until the signal thread has passed every received signal on (after
/// `Process.kill` to this process, so the handler runs before `kill` returns).
pub fn drain_pending(inbox: &Inbox) -> bool {
    for _ in 0..200 {
        let queued = !inbox.queue.lock().unwrap_or_else(|e| e.into_inner()).is_empty();
        let pending = PENDING.iter().any(|p| p.load(Ordering::Acquire) != 0);
        if queued && !pending {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    false
}
