//! Process-shared locks and futex waits in shared memory.
//!
//! Invariants:
//! - A `RobustMutex` is a pthread mutex initialised `PTHREAD_PROCESS_SHARED` and
//!   `PTHREAD_MUTEX_ROBUST` inside the segment. When its holder dies (`kill -9`, or a normal
//!   exit) the kernel walks the holder's robust list and marks the lock owner-dead; the next
//!   `lock` gets it with `Locked::Recovered` and must repair what the lock protects before
//!   unlocking (`unlock` marks it consistent first, so the lock is never left unrecoverable).
//! - Critical sections are short and never run Ruby code, never allocate on the Ruby heap and
//!   never block on anything else than another of these locks (in the fixed order documented
//!   in `segment.rs`), so waiting for one holds the VM's giant lock.
//! - Futex words are plain `AtomicU32`s in the segment; the waits and wakes are the shared
//!   (not `FUTEX_PRIVATE_FLAG`) kind, keyed by the page, so processes that map the segment
//!   at different addresses wait on the same word.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// A robust, process-shared pthread mutex that lives in shared memory.
#[repr(C)]
pub struct RobustMutex {
    raw: std::cell::UnsafeCell<libc::pthread_mutex_t>,
}

/// How `RobustMutex::lock` got the lock.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum Locked {
    /// The previous holder unlocked it.
    Clean,
    /// The previous holder died holding it: the protected state may be half-updated.
    Recovered,
}

/// The lock could not be taken at all (it was made unrecoverable, or is not initialised).
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub struct LockError(pub i32);

impl RobustMutex {
    /// Initialises the mutex in place.
    ///
    /// # Safety
    /// `this` points at writable shared memory that no process uses as a lock yet.
    pub unsafe fn init(this: *mut RobustMutex) -> Result<(), LockError> {
        let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
        let mut rc = libc::pthread_mutexattr_init(&mut attr);
        if rc == 0 {
            rc = libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
        }
        if rc == 0 {
            rc = libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST);
        }
        if rc == 0 {
            rc = libc::pthread_mutex_init((*this).raw.get(), &attr);
        }
        libc::pthread_mutexattr_destroy(&mut attr);
        if rc == 0 {
            Ok(())
        } else {
            Err(LockError(rc))
        }
    }

    /// Takes the lock, waiting for the holder (in the kernel, for as long as a critical
    /// section lasts).
    pub fn lock(&self) -> Result<Locked, LockError> {
        // SAFETY: the mutex was initialised by `init` when the segment was made and lives as
        // long as the mapping that `self` borrows.
        match unsafe { libc::pthread_mutex_lock(self.raw.get()) } {
            0 => Ok(Locked::Clean),
            libc::EOWNERDEAD => Ok(Locked::Recovered),
            e => Err(LockError(e)),
        }
    }

    /// Takes the lock if it is free (or its holder is dead); `None` if someone holds it.
    pub fn try_lock(&self) -> Result<Option<Locked>, LockError> {
        // SAFETY: as in `lock`.
        match unsafe { libc::pthread_mutex_trylock(self.raw.get()) } {
            0 => Ok(Some(Locked::Clean)),
            libc::EOWNERDEAD => Ok(Some(Locked::Recovered)),
            libc::EBUSY => Ok(None),
            e => Err(LockError(e)),
        }
    }

    /// Releases the lock. After a `Locked::Recovered` the caller has repaired the protected
    /// state, so the lock is marked consistent first.
    pub fn unlock(&self, how: Locked) {
        // SAFETY: the calling thread holds the lock (`lock`/`try_lock` returned it).
        unsafe {
            if how == Locked::Recovered {
                libc::pthread_mutex_consistent(self.raw.get());
            }
            libc::pthread_mutex_unlock(self.raw.get());
        }
    }
}

/// Sleeps while `*word == expected`, at most `timeout` (spurious wake-ups are possible).
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    // SAFETY: `word` is a valid aligned u32 for the duration of the call; FUTEX_WAIT reads
    // it and sleeps on its page-keyed address (shared, so other processes can wake it).
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT, expected, &ts as *const libc::timespec, std::ptr::null::<u32>(), 0u32);
    }
}

/// Wakes up to `n` processes or threads sleeping on `word`.
pub fn futex_wake(word: &AtomicU32, n: i32) {
    // SAFETY: as in `futex_wait`; FUTEX_WAKE only reads the address as a key.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, n, std::ptr::null::<libc::timespec>(), std::ptr::null::<u32>(), 0u32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared_page() -> *mut u8 {
        // SAFETY: a fresh anonymous shared mapping of one page.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), 4096, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) };
        assert_ne!(p, libc::MAP_FAILED);
        p as *mut u8
    }

    #[test]
    fn a_dead_holders_lock_is_recovered() {
        let page = shared_page();
        let m = page as *mut RobustMutex;
        // SAFETY: fresh shared memory.
        unsafe { RobustMutex::init(m).unwrap() };
        // SAFETY: the child only locks and exits; the parent waits for it.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: `m` is mapped in the child too.
            let got = unsafe { (*m).lock() };
            unsafe { libc::_exit(if got == Ok(Locked::Clean) { 0 } else { 1 }) };
        }
        let mut status = 0;
        // SAFETY: waits for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(libc::WEXITSTATUS(status), 0);
        // SAFETY: `m` stays mapped.
        let mutex = unsafe { &*m };
        assert_eq!(mutex.lock(), Ok(Locked::Recovered));
        mutex.unlock(Locked::Recovered);
        assert_eq!(mutex.lock(), Ok(Locked::Clean));
        assert_eq!(mutex.try_lock(), Ok(None));
        mutex.unlock(Locked::Clean);
        assert_eq!(mutex.try_lock(), Ok(Some(Locked::Clean)));
        mutex.unlock(Locked::Clean);
    }

    #[test]
    fn futex_wake_ends_a_wait() {
        let page = shared_page();
        // SAFETY: a u32 at the start of the shared page.
        let word = unsafe { &*(page as *const AtomicU32) };
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            std::thread::sleep(Duration::from_millis(20));
            word.store(1, std::sync::atomic::Ordering::SeqCst);
            futex_wake(word, 1);
            unsafe { libc::_exit(0) };
        }
        let start = std::time::Instant::now();
        while word.load(std::sync::atomic::Ordering::SeqCst) == 0 {
            futex_wait(word, 0, Duration::from_secs(10));
        }
        assert!(start.elapsed() < Duration::from_secs(10));
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }
}
