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

/// As `futex_wait`, tagged with `bits`: `futex_wake_bits` wakes it only when their bits
/// meet; `futex_wake` wakes it as any other.
pub fn futex_wait_bits(word: &AtomicU32, expected: u32, timeout: Duration, bits: u32) {
    // FUTEX_WAIT_BITSET takes a deadline on CLOCK_MONOTONIC, not a length.
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec to write.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    let nanos = now.tv_nsec as u64 + timeout.subsec_nanos() as u64;
    let secs = (now.tv_sec as u64).saturating_add(timeout.as_secs()).saturating_add(nanos / 1_000_000_000);
    let deadline = libc::timespec { tv_sec: secs.min(libc::time_t::MAX as u64) as libc::time_t, tv_nsec: (nanos % 1_000_000_000) as libc::c_long };
    // SAFETY: as in `futex_wait`.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAIT_BITSET, expected, &deadline as *const libc::timespec, std::ptr::null::<u32>(), bits.max(1));
    }
}

/// Wakes up to `n` sleepers on `word` whose `futex_wait_bits` named one of `bits` (plain
/// `futex_wait`s name all): how many woke.
pub fn futex_wake_bits(word: &AtomicU32, n: i32, bits: u32) -> i32 {
    // SAFETY: as in `futex_wake`.
    let r = unsafe { libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE_BITSET, n, std::ptr::null::<libc::timespec>(), std::ptr::null::<u32>(), bits.max(1)) };
    r.max(0) as i32
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

    #[test]
    fn a_wake_aimed_at_other_bits_leaves_a_waiter_asleep() {
        let word: &'static AtomicU32 = Box::leak(Box::new(AtomicU32::new(0)));
        let waiter = std::thread::spawn(move || futex_wait_bits(word, 0, Duration::from_secs(10), 1 << 3));
        // Nothing wakes it before it sleeps; once it sleeps, only a wake naming bit 3 does.
        let start = std::time::Instant::now();
        loop {
            assert_eq!(futex_wake_bits(word, 1, 1 << 4), 0);
            if futex_wake_bits(word, 1, 1 << 3) == 1 {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(5), "the waiter never slept");
            std::thread::sleep(Duration::from_millis(1));
        }
        waiter.join().unwrap();
    }

    #[test]
    fn a_tagged_wait_times_out_after_its_length() {
        let word = AtomicU32::new(0);
        let start = std::time::Instant::now();
        futex_wait_bits(&word, 0, Duration::from_millis(50), 1);
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(45) && took < Duration::from_secs(5), "{took:?}");
    }
}
