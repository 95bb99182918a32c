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
                if let Some(id) = uid {
                    if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(id) != 0 || libc::setuid(id) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
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
    fn crash_signals() {
        assert!(is_crash_signal(libc::SIGSEGV));
        assert!(!is_crash_signal(libc::SIGTERM));
    }
}
