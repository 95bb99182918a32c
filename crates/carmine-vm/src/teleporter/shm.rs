//! Shared-memory mappings: anonymous `MAP_SHARED` memory (inherited across `fork`) and named
//! POSIX shared memory (`shm_open`, mode 0600, opened by unrelated processes), plus the
//! liveness test of the processes that use them.
//!
//! Invariants:
//! - A `Mapping` owns one `mmap` of the whole segment and unmaps it when dropped; nothing in
//!   shared memory holds an address, only offsets from the mapping's base, so each process
//!   may map a segment anywhere.
//! - A `ProcessMark` answers the pid of the process asking, also in a forked child (its
//!   cache lives in a wipe-on-fork page).
//! - A named segment is created with `O_CREAT | O_EXCL`, sized with `ftruncate` and its pages
//!   reserved with `posix_fallocate` (a full `/dev/shm` is an error at creation, never a
//!   SIGBUS later); its name stays until `unlink`, as POSIX names do.

use std::ffi::CString;
use std::io;

/// The size of a memory page (the kernel's, on every target Carmine builds for).
const PAGE: usize = 4096;

/// One mapping of a segment into this process.
pub struct Mapping {
    base: *mut u8,
    len: usize,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what mmap returned; nothing borrows the mapping
        // past the owner's lifetime.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// How `Mapping::named` found the name.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum Opened {
    /// This call created the segment: the caller initialises it.
    Created,
    /// The segment existed: another process created (or is creating) it.
    Existing,
}

fn last_error() -> io::Error {
    io::Error::last_os_error()
}

/// The POSIX shared-memory name for `name` ("/name"); names holding '/' or NUL are refused.
pub fn shm_name(name: &str) -> io::Result<CString> {
    let bare = name.strip_prefix('/').unwrap_or(name);
    if bare.is_empty() || bare.contains('/') || bare.len() > 250 {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    CString::new(format!("/{bare}")).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

impl Mapping {
    /// Anonymous shared memory of `len` bytes (zeroed), shared with children forked later.
    pub fn anonymous(len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh mapping; the kernel picks the address.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_ANONYMOUS, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(last_error());
        }
        Ok(Mapping { base: p as *mut u8, len })
    }

    /// The named segment `name`: created with `len` bytes (zeroed) if it does not exist,
    /// else mapped at the size its creator gave it.
    pub fn named(name: &str, len: usize) -> io::Result<(Mapping, Opened)> {
        let cname = shm_name(name)?;
        // SAFETY: a NUL-terminated name; the descriptor is closed below.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC, 0o600) };
        if fd >= 0 {
            return match Self::size_new(fd, len) {
                Ok(()) => Self::map_fd(fd, len).map(|m| (m, Opened::Created)),
                Err(e) => {
                    // SAFETY: our own descriptor and name, just created.
                    unsafe {
                        libc::close(fd);
                        libc::shm_unlink(cname.as_ptr());
                    }
                    Err(e)
                }
            };
        }
        let err = last_error();
        if err.raw_os_error() != Some(libc::EEXIST) {
            return Err(err);
        }
        // SAFETY: as above.
        let fd = unsafe { libc::shm_open(cname.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC, 0) };
        if fd < 0 {
            return Err(last_error());
        }
        // The creator sizes the object right after creating it: wait a little for that.
        let mut size = 0;
        for _ in 0..2000 {
            // SAFETY: `st` is written by fstat on our descriptor.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstat(fd, &mut st) } != 0 {
                let e = last_error();
                unsafe { libc::close(fd) };
                return Err(e);
            }
            size = st.st_size as usize;
            if size > 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
        if size == 0 {
            unsafe { libc::close(fd) };
            return Err(io::Error::from_raw_os_error(libc::ENODATA));
        }
        Self::map_fd(fd, size).map(|m| (m, Opened::Existing))
    }

    fn size_new(fd: i32, len: usize) -> io::Result<()> {
        // SAFETY: our descriptor, opened read-write.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            return Err(last_error());
        }
        // SAFETY: as above; reserves the pages so that touching them cannot SIGBUS.
        let rc = unsafe { libc::posix_fallocate(fd, 0, len as libc::off_t) };
        if rc != 0 && rc != libc::EOPNOTSUPP && rc != libc::EINVAL {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }

    /// Maps `len` bytes of `fd` shared and closes the descriptor.
    fn map_fd(fd: i32, len: usize) -> io::Result<Mapping> {
        // SAFETY: a fresh mapping of our descriptor; the mapping keeps the object alive, so
        // the descriptor can be closed at once.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) };
        let err = last_error();
        unsafe { libc::close(fd) };
        if p == libc::MAP_FAILED {
            return Err(err);
        }
        Ok(Mapping { base: p as *mut u8, len })
    }

    /// A second mapping of the same shared pages (anonymous or named), at another address
    /// of this process, owned and unmapped on its own: how another VM of the process gets
    /// a tunnel without a name (`teleporter::handoff`).
    pub fn duplicate(&self) -> io::Result<Mapping> {
        // SAFETY: `base`/`len` are a live MAP_SHARED mapping; an old size of 0 asks mremap for
        // a new mapping of the same pages and leaves this one as it is.
        let p = unsafe { libc::mremap(self.base as *mut libc::c_void, 0, self.len, libc::MREMAP_MAYMOVE) };
        if p == libc::MAP_FAILED {
            return Err(last_error());
        }
        Ok(Mapping { base: p as *mut u8, len: self.len })
    }

    /// Maps the pages of `off..off + len` into this process now, writable, so that the
    /// first use of each does not fault. Only a hint: a kernel without
    /// `MADV_POPULATE_WRITE` (before 5.14) leaves them to fault as before.
    pub fn populate(&self, off: usize, len: usize) {
        let start = off & !(PAGE - 1);
        let end = off.saturating_add(len).min(self.len);
        if start >= end {
            return;
        }
        // SAFETY: `start..end` lies inside this live mapping and starts on a page boundary;
        // populating changes no byte of it.
        unsafe { libc::madvise(self.base.add(start) as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE) };
    }

    /// Reads one byte of every 4 KiB page of `off..off + len`, so that the pages of that
    /// range other processes already use come into this process's page tables 16 at a time
    /// (the kernel maps the neighbours of a read fault on shared memory, 64 KiB by default;
    /// writable, since shared anonymous memory is not tracked for dirtying) rather than by a
    /// write fault each. A page already mapped costs one load; unlike `populate`, no system
    /// call, and a page no process uses yet is left to the first write.
    pub fn touch(&self, off: usize, len: usize) {
        let end = off.saturating_add(len).min(self.len);
        let mut at = off & !4095;
        while at < end {
            // SAFETY: `at` lies inside this live mapping; the read has no effect but the fault.
            unsafe { std::ptr::read_volatile(self.base.add(at)) };
            at += 4096;
        }
    }

    pub fn base(&self) -> *mut u8 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Removes the name `name` (existing mappings stay valid until unmapped).
pub fn unlink(name: &str) -> io::Result<()> {
    let cname = shm_name(name)?;
    // SAFETY: a NUL-terminated name.
    if unsafe { libc::shm_unlink(cname.as_ptr()) } != 0 {
        return Err(last_error());
    }
    Ok(())
}

/// This process's identity as stored in a process slot: its pid in the low 22 bits (Linux's
/// `pid_max` limit) and its start time (clock ticks since boot) above, so a recycled pid
/// is never taken for the process that had it.
pub fn process_identity(pid: u32) -> Option<u64> {
    let start = start_time(pid)?;
    Some(((start & ((1 << 42) - 1)) << 22) | (pid as u64 & ((1 << 22) - 1)))
}

/// The pid part of an identity.
pub fn identity_pid(id: u64) -> u32 {
    (id & ((1 << 22) - 1)) as u32
}

/// The start time of process `pid` (field 22 of /proc/pid/stat), unless it is gone or a
/// zombie (a process killed with SIGKILL is a zombie until its parent waits for it, and
/// counts as dead here).
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is parenthesised and may hold spaces and parentheses: the
    // fields after it start after the last ')'.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" || state == "x" {
        return None;
    }
    // Fields 3..=22: `state` was field 3, so the start time is 19 fields further.
    fields.nth(18)?.parse().ok()
}

/// Whether the process with identity `id` still runs.
pub fn alive(id: u64) -> bool {
    let pid = identity_pid(id);
    match process_identity(pid) {
        Some(now) => now == id,
        None => {
            // Without /proc (or with it hidden), fall back on kill(pid, 0).
            if std::path::Path::new("/proc/self/stat").exists() {
                return false;
            }
            // SAFETY: signal 0 only checks for existence.
            unsafe { libc::kill(pid as i32, 0) == 0 || *libc::__errno_location() != libc::ESRCH }
        }
    }
}

/// This process's pid (a system call: hot paths use a `ProcessMark`).
pub fn my_pid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() as u32 }
}

/// This process's pid without a system call per question, also after `fork`: the pid is
/// cached in a private page marked `MADV_WIPEONFORK`, which the kernel gives a forked
/// child zeroed, so a child finds no pid there and asks the kernel once. (glibc's `getpid`
/// is a real system call, ~75 ns here; a share or move transfer asked several times.)
/// Without that madvise (kernels before 4.14) every question is a `getpid`.
pub struct ProcessMark {
    /// The page, or null when it could not be made wipe-on-fork.
    page: *mut u32,
}

impl ProcessMark {
    pub fn new() -> ProcessMark {
        // SAFETY: a fresh private mapping; the kernel picks the address.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), PAGE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
        if p == libc::MAP_FAILED {
            return ProcessMark { page: std::ptr::null_mut() };
        }
        // SAFETY: our own mapping, unmapped on failure.
        if unsafe { libc::madvise(p, PAGE, libc::MADV_WIPEONFORK) } != 0 {
            unsafe { libc::munmap(p, PAGE) };
            return ProcessMark { page: std::ptr::null_mut() };
        }
        ProcessMark { page: p as *mut u32 }
    }

    /// The pid of the process running now.
    #[inline]
    pub fn pid(&self) -> u32 {
        if self.page.is_null() {
            return my_pid();
        }
        // SAFETY: the page is ours and mapped while `self` lives; only the thread using the
        // VM that owns this mark reads or writes it.
        unsafe {
            let cached = *self.page;
            if cached != 0 {
                return cached;
            }
            let pid = my_pid();
            *self.page = pid;
            pid
        }
    }
}

impl Default for ProcessMark {
    fn default() -> ProcessMark {
        ProcessMark::new()
    }
}

impl Drop for ProcessMark {
    fn drop(&mut self) {
        if !self.page.is_null() {
            // SAFETY: the mapping made in `new`.
            unsafe { libc::munmap(self.page as *mut libc::c_void, 4096) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minor_faults() -> i64 {
        // SAFETY: getrusage fills the struct it is given.
        unsafe {
            let mut r: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut r);
            r.ru_minflt
        }
    }

    /// A forked child writing pages the parent wrote faults once per page; touched first,
    /// once per 64 KiB window (the kernel's fault-around, 16 pages by default).
    #[test]
    fn touch_maps_pages_another_process_wrote_many_at_a_time() {
        let len = 4 << 20;
        let m = Mapping::anonymous(len).unwrap();
        // SAFETY: the mapping is `len` bytes, live for the test.
        unsafe { std::ptr::write_bytes(m.base(), 1, len) };
        let pages = (len / 4096) as i64;
        for touch in [false, true] {
            // SAFETY: the child only writes the shared mapping and exits without unwinding.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let before = minor_faults();
                if touch {
                    m.touch(0, len);
                }
                for at in (0..len).step_by(4096) {
                    // SAFETY: inside the mapping.
                    unsafe { *m.base().add(at) = 2 };
                }
                let faults = minor_faults() - before;
                let ok = if touch { faults < pages / 4 } else { faults >= pages };
                // SAFETY: leaves the forked child without running the test harness's exit.
                unsafe { libc::_exit(if ok { 0 } else { 1 }) };
            }
            let mut status = 0;
            // SAFETY: pid is our child.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "touch {touch}: child status {status}");
        }
        // SAFETY: the mapping is live; the children's writes are shared.
        assert_eq!(unsafe { (*m.base().add(len - 4096), *m.base().add(len - 1)) }, (2, 1));
    }

    #[test]
    fn identity_of_this_process_is_alive() {
        let id = process_identity(my_pid()).unwrap();
        assert_eq!(identity_pid(id), my_pid());
        assert!(alive(id));
        // The same pid with another start time is a different (dead) process.
        assert!(!alive(id ^ (1 << 30)));
    }

    #[test]
    fn a_killed_child_is_dead_before_it_is_reaped() {
        // SAFETY: the child only sleeps.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            std::thread::sleep(std::time::Duration::from_secs(30));
            unsafe { libc::_exit(0) };
        }
        let id = process_identity(pid as u32).unwrap();
        assert!(alive(id));
        unsafe { libc::kill(pid, libc::SIGKILL) };
        let mut dead = false;
        for _ in 0..1000 {
            if !alive(id) {
                dead = true;
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(dead);
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
    }

    #[test]
    fn a_process_mark_answers_the_pid_of_a_forked_child() {
        let mark = ProcessMark::new();
        assert_eq!(mark.pid(), my_pid());
        let mut fds = [0i32; 2];
        // SAFETY: a pipe for the child's answer; the child only writes it and exits.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            let pid = libc::fork();
            if pid == 0 {
                let ok = (mark.pid() == my_pid() && mark.pid() != 0) as u8;
                libc::write(fds[1], &ok as *const u8 as *const libc::c_void, 1);
                libc::_exit(0);
            }
            let mut ok = 0u8;
            assert_eq!(libc::read(fds[0], &mut ok as *mut u8 as *mut libc::c_void, 1), 1);
            let mut status = 0;
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
            libc::close(fds[1]);
            assert_eq!(ok, 1, "the child must see its own pid, not the parent's cached one");
        }
        assert_eq!(mark.pid(), my_pid());
    }

    /// Removes a test's name even when the test fails half-way.
    struct Unlink(String);

    impl Drop for Unlink {
        fn drop(&mut self) {
            let _ = unlink(&self.0);
        }
    }

    #[test]
    fn named_segments_are_created_once_and_unlinked() {
        let name = format!("carmine-shm-test-{}", my_pid());
        let _guard = Unlink(name.clone());
        let (a, how) = Mapping::named(&name, 1 << 16).unwrap();
        assert_eq!(how, Opened::Created);
        // SAFETY: both map the same object.
        unsafe { *a.base().add(100) = 42 };
        let (b, how) = Mapping::named(&name, 1 << 20).unwrap();
        assert_eq!(how, Opened::Existing);
        assert_eq!(b.len(), 1 << 16);
        assert_eq!(unsafe { *b.base().add(100) }, 42);
        unlink(&name).unwrap();
        assert!(!std::path::Path::new(&format!("/dev/shm/{name}")).exists());
        assert!(unlink(&name).is_err());
        assert!(shm_name("a/b").is_err());
    }
}
