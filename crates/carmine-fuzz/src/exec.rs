//! Running one Ruby file in a `carmine` subprocess, with a wall-clock timeout, and telling
//! a crash (a fatal signal, a panicked main thread, a `[BUG]` report) from an ordinary end.
//!
//! The child runs in its own process group (so a timeout kills whatever it spawned), with
//! core dumps off, an address-space limit (a runaway allocation fails instead of taking the
//! machine's memory), stdin closed and stdout discarded. Its stderr is read by a thread that
//! keeps the first bytes for the report and watches the whole stream for `[BUG]`.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Exit status of `carmine` when its main thread panicked (a script can exit with it too:
/// only the `[BUG]` report on stderr makes it a crash).
pub const PANIC_EXIT_STATUS: i32 = 70;

/// What `carmine` prints for a VM bug: its panic hook (a panic in any thread) and its
/// internal consistency checks.
const BUG_MARKER: &[u8] = b"[BUG] Carmine internal error";

/// Bytes of stderr kept for a failure report.
const STDERR_KEEP: usize = 16 * 1024;

/// How to run the `carmine` binary.
#[derive(Clone, Debug)]
pub struct Runner {
    pub carmine: PathBuf,
    /// Required before the script (`-r`), e.g. the spec-DSL prelude.
    pub prelude: Option<PathBuf>,
    pub timeout: Duration,
    /// Address-space limit of the child in bytes (0: none).
    pub mem_limit: u64,
    /// Extra environment (`MSPEC_RUNNER`, the prelude's temporary directory…).
    pub env: Vec<(String, String)>,
    /// Run the child as this user and group id (mutated scripts then cannot write outside
    /// the world-writable scratch directories, whatever their file operations become).
    pub uid: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecOutcome {
    /// Ended normally with this exit status (a Ruby exception is status 1: fine).
    Exited(i32),
    /// Ended by a signal that Ruby code can send itself (TERM, INT, KILL…): not a VM crash.
    Signalled(i32),
    /// Did not finish in time and was killed.
    Timeout,
    /// Aborted by a failed allocation after using much of its memory limit.
    OutOfMemory,
    /// A VM bug: the reason and the start of stderr.
    Crash { reason: String, stderr: String },
    /// The child could not be started.
    SpawnError(String),
}

fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGSYS => "SIGSYS".into(),
        libc::SIGTRAP => "SIGTRAP".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGXFSZ => "SIGXFSZ".into(),
        libc::SIGXCPU => "SIGXCPU".into(),
        n => format!("signal {n}"),
    }
}

/// Signals that only a VM bug produces (Ruby code raising one of these at itself with
/// `Process.kill` is not something the corpus does).
fn is_crash_signal(sig: i32) -> bool {
    matches!(sig, libc::SIGSEGV | libc::SIGABRT | libc::SIGBUS | libc::SIGILL | libc::SIGFPE | libc::SIGSYS | libc::SIGTRAP)
}

/// What the stderr reader thread found.
struct StderrScan {
    head: Vec<u8>,
    bug: bool,
}

fn scan_stderr(mut r: impl Read) -> StderrScan {
    let mut head = Vec::new();
    let mut bug = false;
    let mut buf = [0u8; 8192];
    // The last bytes of the previous chunk, so a marker split across reads is still seen.
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if head.len() < STDERR_KEEP {
            let take = n.min(STDERR_KEEP - head.len());
            head.extend_from_slice(&buf[..take]);
        }
        if !bug {
            carry.extend_from_slice(&buf[..n]);
            if carry.windows(BUG_MARKER.len()).any(|w| w == BUG_MARKER) {
                bug = true;
            }
            let keep = carry.len().min(BUG_MARKER.len() - 1);
            carry.drain(..carry.len() - keep);
        }
    }
    StderrScan { head, bug }
}

impl Runner {
    /// Runs `script` with the working directory `cwd`.
    pub fn run(&self, script: &Path, cwd: &Path) -> ExecOutcome {
        let mut cmd = Command::new(&self.carmine);
        cmd.arg("-W0");
        if let Some(p) = &self.prelude {
            cmd.arg("-r").arg(p);
        }
        cmd.arg(script).current_dir(cwd).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.process_group(0);
        let mem_limit = self.mem_limit;
        let uid = self.uid;
        // SAFETY: only async-signal-safe calls (setrlimit, setgroups, setgid, setuid)
        // between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let core = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
                libc::setrlimit(libc::RLIMIT_CORE, &core);
                if mem_limit > 0 {
                    let lim = libc::rlimit { rlim_cur: mem_limit as libc::rlim_t, rlim_max: mem_limit as libc::rlim_t };
                    libc::setrlimit(libc::RLIMIT_AS, &lim);
                }
                match uid {
                    Some(id) => become_user(id),
                    None => Ok(()),
                }
            });
        }
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => return ExecOutcome::SpawnError(e.to_string()),
        };
        let stderr = child.stderr.take();
        let reader = std::thread::spawn(move || match stderr {
            Some(s) => scan_stderr(s),
            None => StderrScan { head: Vec::new(), bug: false },
        });
        let start = Instant::now();
        let pid = child.id() as i32;
        let mut timed_out = false;
        // wait4 rather than Child::try_wait: the child's peak memory tells an exhausted
        // address space from a single impossible allocation.
        let mut raw_status: libc::c_int = 0;
        // SAFETY: rusage is plain old data.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let status = loop {
            // SAFETY: waits for our own child; both out-pointers are valid.
            let r = unsafe { libc::wait4(pid, &mut raw_status, libc::WNOHANG, &mut usage) };
            if r == pid {
                break Some(std::process::ExitStatus::from_raw(raw_status));
            }
            if r < 0 {
                break None;
            }
            if start.elapsed() >= self.timeout {
                timed_out = true;
                // SAFETY: kill(2) on the child's own process group (created by
                // process_group(0) above), then on the child itself, then reaping it.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                    libc::kill(pid, libc::SIGKILL);
                    libc::wait4(pid, &mut raw_status, 0, &mut usage);
                }
                break Some(std::process::ExitStatus::from_raw(raw_status));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        drop(child);
        let peak_rss = usage.ru_maxrss as u64 * 1024;
        // Kill stragglers of the group (children the script spawned) so the pipe closes.
        // SAFETY: as above; the group id is the child's pid, which we have not reaped
        // before this point only if wait failed, so the id cannot have been reused by then.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let scan = reader.join().unwrap_or(StderrScan { head: Vec::new(), bug: false });
        let head = String::from_utf8_lossy(&scan.head).into_owned();
        if timed_out {
            return ExecOutcome::Timeout;
        }
        let Some(status) = status else { return ExecOutcome::SpawnError("wait failed".into()) };
        if let Some(sig) = status.signal() {
            // Out of address space after growing to it (an endless loop that allocates):
            // the allocator's abort is reported apart, not as a VM crash. A single huge
            // allocation in a small process is a crash (a size that was not checked).
            if sig == libc::SIGABRT && head.contains("memory allocation of") && self.mem_limit > 0 && peak_rss >= self.mem_limit / 4 {
                return ExecOutcome::OutOfMemory;
            }
            if is_crash_signal(sig) {
                return ExecOutcome::Crash { reason: format!("killed by {}", signal_name(sig)), stderr: head };
            }
            return ExecOutcome::Signalled(sig);
        }
        let code = status.code().unwrap_or(-1);
        if scan.bug {
            let reason = if code == PANIC_EXIT_STATUS { "panic (exit status 70)" } else { "[BUG] on stderr" };
            return ExecOutcome::Crash { reason: reason.into(), stderr: head };
        }
        ExecOutcome::Exited(code)
    }
}

/// The user id scripts run as when the harness runs as root (`Runner::uid`).
pub const NOBODY: u32 = 65534;

/// `Some(NOBODY)` when this process runs as root and `nobody` can start `carmine` (a
/// checkout under a directory only root may enter cannot be run that way); `None` otherwise.
/// Mutated scripts run as root could signal or delete whatever a mutated argument names: a
/// `Process.kill` whose pid became another number stops or kills the harness's own processes.
pub fn unprivileged_uid(carmine: &Path) -> Option<u32> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let mut cmd = Command::new(carmine);
    cmd.args(["-e", "0"]).current_dir("/").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls (setgroups, setgid, setuid) between fork and exec.
    unsafe {
        cmd.pre_exec(|| become_user(NOBODY));
    }
    cmd.status().is_ok_and(|s| s.success()).then_some(NOBODY)
}

/// In a forked child before exec: drops supplementary groups and becomes user and group
/// `id`. Only async-signal-safe calls.
fn become_user(id: u32) -> std::io::Result<()> {
    // SAFETY: plain system calls with valid arguments (no groups: a null list of length 0).
    if unsafe { libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(id) != 0 || libc::setuid(id) != 0 } {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// `cmd.output()` with a time limit, for test harnesses: the child runs in its own process
/// group with stdin closed; past `limit` the whole group is killed and the error says so.
/// Processes the child left in its group are killed when it ends, so none of them can keep
/// its output pipes open; one that left the group (a daemon) and still holds them is
/// reported after a grace period instead of blocking the harness.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Result<std::process::Output, String> {
    use std::sync::mpsc;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().map_err(|e| format!("cannot start: {e}"))?;
    let (tx, rx) = mpsc::channel();
    let mut readers = 0;
    for (i, stream) in [child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>), child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>)].into_iter().enumerate() {
        if let Some(mut s) = stream {
            let tx = tx.clone();
            readers += 1;
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = s.read_to_end(&mut buf);
                let _ = tx.send((i, buf));
            });
        }
    }
    let pid = child.id() as i32;
    let start = Instant::now();
    loop {
        // Whether the child has ended, without reaping it: its pid (the group's id) stays
        // reserved until the stragglers of its group are killed below.
        // SAFETY: siginfo_t is plain old data; waitid only writes into it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits on our own child with a valid out-pointer.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT) };
        // SAFETY: si_pid is set by waitid when a child changed state (zero otherwise).
        if r != 0 || unsafe { info.si_pid() } != 0 {
            break;
        }
        if start.elapsed() >= limit {
            let procs = Command::new("ps").args(["-eo", "pgid,pid,stat,etime,wchan:20,args"]).output();
            let procs = procs.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
            let procs: String = procs.lines().filter(|l| l.split_whitespace().next() == Some(&pid.to_string())).map(|l| format!("{l}\n")).collect();
            // SAFETY: kill(2) on the child's own process group, then reaping it.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let _ = child.wait();
            return Err(format!("did not finish in {} s and was killed; its process group was:\n{procs}", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: the child is not reaped yet, so the group id is still its own.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let status = child.wait().map_err(|e| format!("wait failed: {e}"))?;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for _ in 0..readers {
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok((0, b)) => stdout = b,
            Ok((_, b)) => stderr = b,
            Err(_) => return Err(format!("exited with {status} but a process it started outside its group still holds its output open")),
        }
    }
    Ok(std::process::Output { status, stdout, stderr })
}

/// `output_within` for a test file that should never hang: a hang is written at once to
/// the real standard error (past the test harness's capture, so a CI log keeps it even if
/// the test passes) and the file runs once more; a second hang is the error.
pub fn output_reporting_hangs(build: impl Fn() -> Command, limit: Duration) -> Result<std::process::Output, String> {
    match output_within(&mut build(), limit) {
        Err(e) if e.starts_with("did not finish") => {
            let cmd = build();
            let report = format!("HANG: {:?} {:?}: {e}(running it once more)\n", cmd.get_program(), cmd.get_args().collect::<Vec<_>>());
            let _ = std::io::Write::write_all(&mut std::io::stderr(), report.as_bytes());
            output_within(&mut build(), limit).map_err(|e2| format!("{e}\nand again: {e2}"))
        }
        r => r,
    }
}

/// The `carmine` binary next to the running executable (both are built into the same
/// target directory).
pub fn sibling_carmine() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    for cand in [dir.join("carmine"), dir.join("../carmine")] {
        if cand.is_file() {
            return Some(cand);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_scan_finds_a_split_marker() {
        struct Chunks(Vec<&'static [u8]>);
        impl Read for Chunks {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if self.0.is_empty() {
                    return Ok(0);
                }
                let c = self.0.remove(0);
                buf[..c.len()].copy_from_slice(c);
                Ok(c.len())
            }
        }
        assert!(scan_stderr(Chunks(vec![b"abc [B", b"UG] Carmine internal error: x"])).bug);
        assert!(scan_stderr(Chunks(vec![b"abc [BUG] Carmine", b" internal error: x"])).bug);
        assert!(!scan_stderr(Chunks(vec![b"abc [B", b"G] x"])).bug);
        assert!(!scan_stderr(Chunks(vec![b"a script's own [BUG] text"])).bug);
    }

    #[test]
    fn output_within_kills_a_hung_child_and_its_stragglers() {
        let t = Instant::now();
        let e = output_within(Command::new("sh").args(["-c", "sleep 30"]), Duration::from_millis(300)).unwrap_err();
        assert!(e.starts_with("did not finish in 0 s") && e.contains("sleep 30"), "{e}");
        // A background process left in the group would hold the pipes open: it is killed.
        let o = output_within(Command::new("sh").args(["-c", "sleep 30 & echo hi; echo err >&2"]), Duration::from_secs(20)).expect("ends");
        assert_eq!((o.stdout.as_slice(), o.stderr.as_slice(), o.status.success()), (&b"hi\n"[..], &b"err\n"[..], true));
        assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    }

    #[test]
    fn crash_signals() {
        assert!(is_crash_signal(libc::SIGSEGV));
        assert!(!is_crash_signal(libc::SIGTERM));
    }
}
