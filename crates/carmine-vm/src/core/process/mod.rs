//! Process, Signal, and system errors (`Errno::*`), plus running shell commands.

pub mod clock;
pub mod ids;
pub mod spawn;

use crate::core::{array, module, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The errno of the system call that just failed.
pub fn last_errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

/// An `Errno::EXXX` exception for `code`, with `detail` appended to its message.
pub fn errno_error(ctx: &mut Ctx, code: i32, detail: &str) -> Unwind {
    // "func - detail" names the failing function: "strerror @ func - detail".
    let (func, detail) = match detail.split_once(" - ") {
        Some((f, rest)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') => (Some(f), rest),
        _ => (None, detail),
    };
    let d = if detail.is_empty() { Value::NIL } else { string::new_utf8(ctx, detail) };
    let f = match func {
        Some(f) => string::new_utf8(ctx, f),
        None => Value::NIL,
    };
    errno_new(ctx, code, d, f)
}

/// An `Errno::EXXX` exception for `code` with a detail String (nil for none; "" gives
/// CRuby's "… - " with an empty detail) and the failing function (or nil).
pub fn errno_new(ctx: &mut Ctx, code: i32, d: Value, f: Value) -> Unwind {
    let klass = crate::core::exception::errno_class(ctx, code);
    let r = match klass {
        Some(k) => object::allocate(ctx, k).and_then(|e| ctx.call(e, crate::symbol::sym::INITIALIZE, &[d, f]).map(|_| e)),
        None => {
            let k = ctx.c().system_call_error;
            object::allocate(ctx, k).and_then(|e| ctx.call(e, crate::symbol::sym::INITIALIZE, &[d, Value::fixnum(code as i64), f]).map(|_| e))
        }
    };
    match r {
        Ok(e) => {
            crate::core::exception::capture_backtrace(ctx, e);
            Unwind::Raise(e)
        }
        Err(err) => err,
    }
}

fn p_pid(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(std::process::id() as i64))
}


/// A finished child: `Process::Status` (`$?`). `status` is the raw wait(2)
/// status word.
pub struct StatusObj {
    pub pid: i64,
    pub status: i32,
}
crate::data_obj!(StatusObj);

/// Sets `$?` to a new Process::Status and returns it.
pub(crate) fn set_last_status(ctx: &mut Ctx, pid: i64, status: i32) -> Value {
    let klass = status_class(ctx);
    let v = object::new_data(ctx, klass, Box::new(StatusObj { pid, status }));
    ctx.last_status = v;
    v
}

fn status_class(ctx: &mut Ctx) -> Value {
    let p = ctx.c().process;
    let id = ctx.intern("Status");
    module::body(p).const_get(id).map_or(ctx.c().object, |e| e.value)
}

fn status_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut StatusObj> {
    match crate::object::data_ref::<StatusObj>(v) {
        Some(s) => Ok(s),
        None => Err(ctx.type_error("wrong argument type (expected Process::Status)")),
    }
}

fn st_exitstatus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(if libc::WIFEXITED(st) { Value::fixnum(libc::WEXITSTATUS(st) as i64) } else { Value::NIL })
}

fn st_success_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(if libc::WIFEXITED(st) { Value::bool(libc::WEXITSTATUS(st) == 0) } else { Value::NIL })
}

fn st_exited_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(Value::bool(libc::WIFEXITED(st)))
}

fn st_signaled_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(Value::bool(libc::WIFSIGNALED(st)))
}

fn st_termsig(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(if libc::WIFSIGNALED(st) { Value::fixnum(libc::WTERMSIG(st) as i64) } else { Value::NIL })
}

fn st_stopped_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(Value::bool(libc::WIFSTOPPED(st)))
}

fn st_pid(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(status_of(ctx, recv)?.pid))
}

fn st_to_i(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(status_of(ctx, recv)?.status as i64))
}

fn st_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status as i64;
    let other = args.pos[0];
    if let Some(o) = crate::object::data_ref::<StatusObj>(other) {
        return Ok(Value::bool(o.status as i64 == st));
    }
    Ok(Value::bool(other.as_fixnum() == Some(st)))
}

fn st_describe(st: &StatusObj) -> String {
    let s = st.status;
    if libc::WIFEXITED(s) {
        format!("pid {} exit {}", st.pid, libc::WEXITSTATUS(s))
    } else if libc::WIFSIGNALED(s) {
        let sig = libc::WTERMSIG(s);
        let name = signal_name(sig).map_or(format!("{sig}"), |n| format!("SIG{n} ({sig})"));
        format!("pid {} {}{}", st.pid, name, if libc::WCOREDUMP(s) { " (core dumped)" } else { "" })
    } else {
        format!("pid {} status {}", st.pid, s)
    }
}

pub(crate) fn signal_name(sig: i32) -> Option<&'static str> {
    SIGNALS.iter().find(|(_, n)| *n == sig).map(|(name, _)| *name)
}

const SIGNALS: &[(&str, i32)] = &[
    ("EXIT", 0), ("HUP", libc::SIGHUP), ("INT", libc::SIGINT), ("QUIT", libc::SIGQUIT), ("ILL", libc::SIGILL), ("TRAP", libc::SIGTRAP),
    ("ABRT", libc::SIGABRT), ("IOT", libc::SIGIOT), ("BUS", libc::SIGBUS), ("FPE", libc::SIGFPE), ("KILL", libc::SIGKILL), ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV), ("USR2", libc::SIGUSR2), ("PIPE", libc::SIGPIPE), ("ALRM", libc::SIGALRM), ("TERM", libc::SIGTERM),
("CHLD", libc::SIGCHLD), ("CLD", libc::SIGCHLD), ("CONT", libc::SIGCONT), ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP), ("TTIN", libc::SIGTTIN), ("TTOU", libc::SIGTTOU), ("URG", libc::SIGURG), ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ), ("VTALRM", libc::SIGVTALRM), ("PROF", libc::SIGPROF), ("WINCH", libc::SIGWINCH), ("IO", libc::SIGIO),
    ("POLL", libc::SIGPOLL), ("PWR", libc::SIGPWR), ("SYS", libc::SIGSYS),
];

/// `SignalException#initialize(sig, message = nil)`: a signal number (with an optional
/// message), or a name (`"INT"`, `:SIGINT`) whose message is "SIGNAME".
fn sigexc_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(&sig) = args.pos.first() else { return Err(ctx.arity_error(0, 1, Some(2))) };
    if args.pos.len() > 2 {
        return Err(ctx.arity_error(args.pos.len(), 1, Some(2)));
    }
    let (signo, msg) = if let Some(n) = sig.as_fixnum() {
        if !(0..=64).contains(&n) {
            return Err(ctx.arg_error(&format!("invalid signal number ({n})")));
        }
        let msg = match args.pos.get(1) {
            Some(&m) => m,
            None => {
                let name = signal_name(n as i32).map_or(format!("SIG{n}"), |s| format!("SIG{s}"));
                string::new_utf8(ctx, &name)
            }
        };
        (n as i32, msg)
    } else {
        if !(sig.is_symbol() || string::is_string(sig)) {
            let s = object::inspect_string(ctx, sig)?;
            let cname = object::class_name_of(ctx, sig);
            let _ = s;
            return Err(ctx.arg_error(&format!("bad signal type {cname}")));
        }
        if args.pos.len() > 1 {
            return Err(ctx.arity_error(args.pos.len(), 1, Some(1)));
        }
        let (n, _) = signal_arg(ctx, sig)?;
        let name = signal_name(n).unwrap_or("");
        (n, string::new_utf8(ctx, &format!("SIG{name}")))
    };
    crate::core::exception::set_message(ctx, recv, msg);
    let id = ctx.intern("@signo");
    object::ivar_set_raw(ctx, recv, id, Value::fixnum(signo as i64));
    Ok(Value::NIL)
}

/// `Interrupt#initialize(message = "Interrupt")` (signal INT).
fn interrupt_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let msg = match args.pos.first() {
        Some(&m) => m,
        None => string::new_utf8(ctx, "Interrupt"),
    };
    crate::core::exception::set_message(ctx, recv, msg);
    let id = ctx.intern("@signo");
    object::ivar_set_raw(ctx, recv, id, Value::fixnum(libc::SIGINT as i64));
    Ok(Value::NIL)
}

fn sigexc_signo(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@signo");
    Ok(object::ivar_get(ctx, recv, id))
}

fn sigexc_signm(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.call(recv, crate::symbol::sym::MESSAGE, &[])
}

/// The signal an uncaught SignalException stands for (the process then dies of it).
pub fn uncaught_signal(ctx: &mut Ctx, e: Value) -> Option<i32> {
    let name = if object::is_a(ctx, e, ctx.c().signal_exception) {
        "@signo"
    } else if object::is_a(ctx, e, ctx.c().system_call_error) {
        EXIT_SIGNAL_IVAR
    } else {
        return None;
    };
    let id = ctx.intern(name);
    object::ivar_get(ctx, e, id).as_fixnum().map(|n| n as i32)
}

/// Hidden ivar of a SystemCallError that, uncaught, ends the process by a signal.
const EXIT_SIGNAL_IVAR: &str = "__signo__";

/// Makes the SystemCallError `e`, if nothing rescues it, end the process silently by
/// signal `signo` (CRuby's `Errno::EPIPE` on the standard streams).
pub fn mark_signal_on_exit(ctx: &mut Ctx, e: Value, signo: i32) {
    let id = ctx.intern(EXIT_SIGNAL_IVAR);
    object::ivar_set_raw(ctx, e, id, Value::fixnum(signo as i64));
}

fn st_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let text = st_describe(status_of(ctx, recv)?);
    Ok(string::new_utf8(ctx, &text))
}

fn st_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let text = st_describe(status_of(ctx, recv)?);
    Ok(string::new_utf8(ctx, &format!("#<Process::Status: {text}>")))
}

/// What a child of fork(2) (`Process._fork`, `Process.daemon`) resets before it runs Ruby
/// code: only the forking thread lives on, signals are delivered again, and the default
/// random generator is reseeded.
fn after_fork_in_child(ctx: &mut Ctx) {
    let me = ctx.thread_obj;
    ctx.vm_mut().reset_threads_after_fork(me);
    crate::core::signal::after_fork(ctx);
    crate::core::random::reseed_default_after_fork(ctx);
}

/// `Process._fork`: fork(2) itself, the pid in the parent and 0 in the child, which
/// continues with only this thread. `fork` calls it through method dispatch, so a
/// library can hook every fork by overriding it.
fn p_underscore_fork(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::core::io::flush_stdout(ctx);
    // SAFETY: this thread holds the giant lock, so no other thread of this VM is inside
    // the heap or a VM table; the child continues with a copy of the whole heap and only
    // this thread (`reset_threads_after_fork`).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let code = last_errno();
        return Err(errno_error(ctx, code, "fork(2)"));
    }
    if pid == 0 {
        after_fork_in_child(ctx);
    }
    Ok(Value::fixnum(pid as i64))
}

/// `fork` / `Process.fork`: a child process running this program from here. With a block,
/// the child runs the block and then ends as a program does (`at_exit` handlers, status
/// 0 or that of an uncaught exception), never returning into the caller's frames.
fn k_fork(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let process = ctx.c().process;
    let pid = ctx.call_str(process, "_fork", &[])?;
    if pid != Value::fixnum(0) {
        return Ok(pid);
    }
    match args.block {
        Some(ref b) => {
            let r = ctx.yield_block(b, &[]);
            match crate::runtime::finish(ctx, r) {
                crate::runtime::Outcome::Signal(n) => crate::runtime::die_of_signal(n),
                o => std::process::exit(o.status()),
            }
        }
        None => Ok(Value::NIL),
    }
}

/// A pidfd (Linux's descriptor for a process, readable once it ends), closed on drop.
struct PidFd(i32);

impl PidFd {
    fn open(pid: libc::pid_t) -> Option<PidFd> {
        // SAFETY: pidfd_open takes a pid and flags; the result is a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as i32;
        (fd >= 0).then_some(PidFd(fd))
    }
}

impl Drop for PidFd {
    fn drop(&mut self) {
        // SAFETY: the descriptor is owned by this value.
        unsafe { libc::close(self.0) };
    }
}

/// waitpid(2) that keeps the thread responsive while the child runs: the wait happens
/// in short polls outside the GL (on the child's pidfd when waiting for one process's
/// end, else with a growing pause), so other threads run and trap handlers, `Thread#raise`
/// and `kill` interrupt it. Returns (pid, raw status), pid 0 with WNOHANG when no child
/// has changed state.
pub fn waitpid_interruptible(ctx: &mut Ctx, pid: libc::pid_t, flags: i32) -> Result<(libc::pid_t, i32)> {
    let once = |status: &mut i32| loop {
        // SAFETY: status is a valid out-pointer.
        let r = unsafe { libc::waitpid(pid, status, flags | libc::WNOHANG) };
        if r < 0 && last_errno() == libc::EINTR {
            continue;
        }
        break r;
    };
    let by_end = pid > 0 && flags & (libc::WUNTRACED | libc::WCONTINUED) == 0;
    let pidfd = if by_end && flags & libc::WNOHANG == 0 { PidFd::open(pid) } else { None };
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        let mut status = 0;
        let r = once(&mut status);
        if r < 0 {
            let code = last_errno();
            return Err(errno_error(ctx, code, ""));
        }
        if r > 0 || flags & libc::WNOHANG != 0 {
            return Ok((r, status));
        }
        match &pidfd {
            Some(fd) => {
                let mut fds = [libc::pollfd { fd: fd.0, events: libc::POLLIN, revents: 0 }];
                crate::thread::sched::poll_fds(ctx, &mut fds, Some(std::time::Instant::now() + std::time::Duration::from_secs(1)))?;
            }
            None => {
                crate::thread::sched::poll_fds(ctx, &mut [], Some(std::time::Instant::now() + pause))?;
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
        }
    }
}

/// waitpid(2) for `pid` (-1: any child) with `flags`; sets `$?`. Returns None when
/// WNOHANG found no finished child.
fn wait_child(ctx: &mut Ctx, args: &Args) -> Result<Option<(i64, Value)>> {
    let pid = match args.pos.first() {
        Some(&v) if !v.is_nil() => crate::core::integer::to_i64_arg(ctx, v)? as libc::pid_t,
        _ => -1,
    };
    let flags = match args.pos.get(1) {
        Some(&v) if !v.is_nil() => crate::core::integer::to_i64_arg(ctx, v)? as i32,
        _ => 0,
    };
    if flags & libc::WNOHANG == 0 {
        if let Some(st) = scheduler_wait(ctx, pid as i64, flags as i64)? {
            return Ok(Some(st));
        }
    }
    let (r, status) = waitpid_interruptible(ctx, pid, flags)?;
    if r == 0 {
        return Ok(None);
    }
    let st = set_last_status(ctx, r as i64, status);
    Ok(Some((r as i64, st)))
}

fn p_wait(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(wait_child(ctx, args)?.map_or(Value::NIL, |(pid, _)| Value::fixnum(pid)))
}

fn p_wait2(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    match wait_child(ctx, args)? {
        Some((pid, st)) => Ok(array::from_slice(ctx, &[Value::fixnum(pid), st])),
        None => Ok(Value::NIL),
    }
}

/// A blocking wait of a non-blocking fiber through its scheduler's `process_wait` hook:
/// the pid and Process::Status it answers (also set as `$?`).
fn scheduler_wait(ctx: &mut Ctx, pid: i64, flags: i64) -> Result<Option<(i64, Value)>> {
    let Some(st) = crate::fiber::scheduler::process_wait(ctx, pid, flags)? else { return Ok(None) };
    ctx.last_status = st;
    let pid_v = ctx.call_str(st, "pid", &[])?;
    Ok(Some((pid_v.as_fixnum().unwrap_or(pid), st)))
}

/// Waits for child `pid` and sets `$?` (for IO.popen's close and `system`).
pub fn wait_for(ctx: &mut Ctx, pid: i32) -> Result<Value> {
    if let Some((_, st)) = scheduler_wait(ctx, pid as i64, 0)? {
        return Ok(st);
    }
    let (_, status) = waitpid_interruptible(ctx, pid, 0)?;
    Ok(set_last_status(ctx, pid as i64, status))
}

/// `Process.waitall`: [[pid, status], ...] for every child, in the order they end.
fn p_waitall(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    let echild = crate::core::exception::errno_class(ctx, libc::ECHILD).unwrap_or(Value::NIL);
    loop {
        let (r, status) = match waitpid_interruptible(ctx, -1, 0) {
            Ok(x) => x,
            Err(Unwind::Raise(e)) if object::is_a(ctx, e, echild) => break,
            Err(e) => return Err(e),
        };
        let st = set_last_status(ctx, r as i64, status);
        let pair = array::from_slice(ctx, &[Value::fixnum(r as i64), st]);
        array::push(ctx, out, pair);
    }
    Ok(out)
}

/// A signal argument of `Process.kill`: a number, or a name with or without `SIG`
/// (a leading `-` signals the process group).
pub(crate) fn signal_arg(ctx: &mut Ctx, v: Value) -> Result<(i32, bool)> {
    if let Some(n) = v.as_fixnum() {
        return Ok(((n as i32).wrapping_abs(), n < 0));
    }
    let name = if let Some(s) = v.as_symbol() {
        ctx.sym_str(s).to_string()
    } else if string::is_string(v) || (v.is_heap() && ctx.respond_to(v, crate::symbol::sym::TO_STR, true)) {
        let s = string::to_str_arg(ctx, v)?;
        string::to_rust_string_lossy(s)
    } else {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.arg_error(&format!("bad signal type {cname}")));
    };
    let (neg, bare) = match name.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, name.as_str()),
    };
    let bare = bare.strip_prefix("SIG").unwrap_or(bare);
    match SIGNALS.iter().find(|(n, _)| *n == bare) {
        Some(&(_, num)) => Ok((num, neg)),
        None => Err(ctx.arg_error(&format!("unsupported signal 'SIG{bare}'"))),
    }
}

fn p_kill(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() < 2 {
        return Err(ctx.arity_error(args.pos.len(), 2, None));
    }
    let (sig, group) = signal_arg(ctx, args.pos[0])?;
    // SAFETY: getpid/getpgrp have no preconditions.
    let (me, my_group) = unsafe { (libc::getpid(), libc::getpgrp()) };
    let mut to_self = false;
    for &p in &args.pos[1..] {
        let pid = crate::core::integer::to_i64_arg(ctx, p)? as libc::pid_t;
        let target = if group { -pid } else { pid };
        to_self |= target == me || target == 0 || target == -my_group;
        // SAFETY: kill(2) has no memory-safety requirements.
        if unsafe { libc::kill(target, sig) } < 0 {
            let code = last_errno();
            return Err(errno_error(ctx, code, ""));
        }
    }
    if to_self && sig != 0 {
        crate::core::signal::after_self_kill(ctx)?;
    }
    Ok(Value::fixnum(args.pos.len() as i64 - 1))
}

fn p_ppid(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: getppid(2) cannot fail.
    Ok(Value::fixnum(unsafe { libc::getppid() } as i64))
}

fn sig_list(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let h = crate::core::hash::new(ctx);
    for &(n, v) in SIGNALS {
        let k = string::new_utf8(ctx, n);
        crate::core::hash::aset(ctx, h, k, Value::fixnum(v as i64))?;
    }
    Ok(h)
}

/// `Process::Status#&` (deprecated in 3.3): the raw status masked.
fn st_and(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status as i64;
    let mask = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    crate::core::warning::deprecated_with(ctx, "Process::Status#&", "use other Process::Status predicates instead")?;
    if mask < 0 {
        return Err(ctx.arg_error(&format!("negative mask value: {mask}")));
    }
    Ok(Value::fixnum(st & mask))
}

/// `Process::Status#>>` (deprecated in 3.3): the raw status shifted.
fn st_shr(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status as i64;
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    crate::core::warning::deprecated_with(ctx, "Process::Status#>>", "use other Process::Status attributes instead")?;
    if n < 0 {
        return Err(ctx.arg_error(&format!("negative shift value: {n}")));
    }
    Ok(Value::fixnum(if n >= 63 { 0 } else { st >> n }))
}

fn st_stopsig(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(if libc::WIFSTOPPED(st) { Value::fixnum(libc::WSTOPSIG(st) as i64) } else { Value::NIL })
}

fn st_coredump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = status_of(ctx, recv)?.status;
    Ok(Value::bool(libc::WIFSIGNALED(st) && libc::WCOREDUMP(st)))
}

/// `Process::Status.wait(pid = -1, flags = 0)`: like `Process.wait2`'s status, without
/// touching `$?`; pid -1 with no children gives a status with pid -1.
fn st_s_wait(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let saved = ctx.last_status;
    let r = wait_child(ctx, args);
    let now = ctx.last_status;
    ctx.last_status = saved;
    match r {
        Ok(Some(_)) => Ok(now),
        Ok(None) => Ok(Value::NIL),
        Err(crate::error::Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().system_call_error) => {
            let klass = status_class(ctx);
            Ok(object::new_data(ctx, klass, Box::new(StatusObj { pid: -1, status: 0 })))
        }
        Err(e) => Err(e),
    }
}

fn p_last_status(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(ctx.last_status)
}

/// `Process.detach(pid)`: a thread that waits for the child; its value is the status and
/// it answers `pid`.
fn p_detach(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pid = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let p = ctx.c().process;
    let id = ctx.intern("__detacher");
    let mut f = object::ivar_get(ctx, p, id);
    if f.is_nil() {
        let src = string::new_utf8(ctx, "->(pid) {\n  t = Thread.new { begin; Process.waitpid(pid); $?; rescue Errno::ECHILD; nil; end }\n  t[:pid] = pid\n  t.define_singleton_method(:pid) { pid }\n  t\n}");
        let scope = crate::core::binding::EvalScope::Singleton(p);
        f = crate::core::kernel::eval_string_with_self(ctx, src, p, scope, None, None)?;
        object::ivar_set_raw(ctx, p, id, f);
    }
    ctx.call_proc(f, &[Value::fixnum(pid)], None)
}

/// `Process.argv0`: the script name as the program started, frozen.
fn p_argv0(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("__carmine_argv0");
    let p = ctx.c().process;
    if let Some(e) = module::body(p).const_get(id) {
        return Ok(e.value);
    }
    let name = ctx.vm().script_name.borrow().clone();
    let s = string::new_utf8(ctx, &name);
    object::freeze(s);
    module::body(p).const_set(id, s);
    Ok(s)
}

unsafe extern "C" {
    /// glibc's copy of argv[0]: the start of the process's argument strings.
    static program_invocation_name: *mut libc::c_char;
}

/// Whether the process's command line is Ruby's to change: set by the `carmine` command
/// (`Runtime::own_process_title`), never by an application that embeds VMs.
static OWNS_ARGV: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

pub fn own_process_title() {
    OWNS_ARGV.store(true, std::sync::atomic::Ordering::Release);
}

/// The memory of the process's argument strings (what `ps` and /proc/PID/cmdline show),
/// as (address, length). It is the one place the kernel reads the command line from, so
/// it is process-wide by nature; found once, and only trusted when it holds what
/// /proc/self/cmdline says.
fn argv_area() -> Option<(usize, usize)> {
    if !OWNS_ARGV.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    static AREA: std::sync::OnceLock<Option<(usize, usize)>> = std::sync::OnceLock::new();
    *AREA.get_or_init(|| {
        let cmdline = std::fs::read("/proc/self/cmdline").ok()?;
        // SAFETY: glibc sets program_invocation_name to argv[0] before main.
        let start = unsafe { program_invocation_name } as *const u8;
        if start.is_null() || cmdline.is_empty() {
            return None;
        }
        // SAFETY: argv's strings are `cmdline.len()` contiguous bytes from argv[0]; they are
        // compared before the area is used.
        let current = unsafe { std::slice::from_raw_parts(start, cmdline.len()) };
        (current == cmdline.as_slice()).then_some((start as usize, cmdline.len()))
    })
}

/// `Process.setproctitle(title)`: the command line `ps` shows becomes `title` (cut to
/// the length of the original command line), and the thread name (`comm`) too.
fn p_setproctitle(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    set_process_title(string::bytes(s).to_vec());
    Ok(s)
}

/// The title `ps` shows for this process (`setproctitle`, and assigning `$0`).
pub fn set_process_title(title: Vec<u8>) {
    if let Some((addr, len)) = argv_area() {
        let n = title.len().min(len - 1);
        // SAFETY: the argv area is `len` writable bytes of this process (see `argv_area`);
        // builtins run one at a time under the GL, so nothing reads it while it changes.
        unsafe {
            let area = std::slice::from_raw_parts_mut(addr as *mut u8, len);
            area[..n].copy_from_slice(&title[..n]);
            area[n..].fill(0);
        }
    }
    if let Ok(c) = std::ffi::CString::new(title) {
        // SAFETY: PR_SET_NAME reads a NUL-terminated string (truncated to 16 bytes).
        unsafe { libc::prctl(libc::PR_SET_NAME, c.as_ptr()) };
    }
}

/// `Process.warmup`: a full collection, as CRuby's does before forking servers.
fn p_warmup(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let gc = ctx.c().gc;
    ctx.call_str(gc, "start", &[])?;
    Ok(Value::TRUE)
}

/// `Process.daemon(nochdir = false, noclose = false)`: detaches from the terminal as
/// daemon(3) does (the parent exits at once, without exit handlers); 0 in the daemon.
fn p_daemon(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut flags = [false; 2];
    for (i, name) in ["nochdir", "noclose"].into_iter().enumerate() {
        match args.pos.get(i) {
            None => {}
            Some(&v) if v.is_nil() || v == Value::TRUE || v == Value::FALSE => flags[i] = v.truthy(),
            Some(&v) => {
                let shown = object::inspect_string(ctx, v)?;
                return Err(ctx.arg_error(&format!("expected true or false as {name}: {shown}")));
            }
        }
    }
    let [nochdir, noclose] = flags;
    crate::core::io::flush_stdout(ctx);
    // SAFETY: as `fork`: this thread holds the GL; the parent only calls _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, "daemon"));
    }
    if pid > 0 {
        // SAFETY: the parent ends without running anything else.
        unsafe { libc::_exit(0) };
    }
    after_fork_in_child(ctx);
    // SAFETY: plain system calls in the new daemon process.
    unsafe {
        libc::setsid();
        if !nochdir {
            libc::chdir(c"/".as_ptr());
        }
        if !noclose {
            let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if fd >= 0 {
                for target in 0..3 {
                    libc::dup2(fd, target);
                }
                if fd > 2 {
                    libc::close(fd);
                }
            }
        }
    }
    Ok(Value::fixnum(0))
}

pub fn init(ctx: &mut Ctx) {
    ids::init(ctx);
    clock::init(ctx);
    // Listed like any global; its value is per thread (`Ctx::last_status`).
    crate::core::globals::define(ctx, crate::symbol::sym::DOLLAR_QUESTION, Value::NIL);
    let p = ctx.c().process;
    crate::methods!(ctx, p, [
        ("pid", p_pid, [0], Safe, ModuleFunction),
        ("last_status", p_last_status, [0], Safe, ModuleFunction),
        ("detach", p_detach, [1], Unsafe, ModuleFunction),
        ("argv0", p_argv0, [0], Unsafe, ModuleFunction),
        ("setproctitle", p_setproctitle, [1], Unsafe, ModuleFunction),
        ("warmup", p_warmup, [0], Unsafe, ModuleFunction),
        ("daemon", p_daemon, [0..=2], Unsafe, ModuleFunction),
        ("spawn", spawn::p_spawn, [1..], Unsafe, ModuleFunction, Kw),
        ("exec", spawn::k_exec, [1..], Unsafe, ModuleFunction, Kw),
        ("ppid", p_ppid, [0], Safe, ModuleFunction),
        ("fork", k_fork, [0], Unsafe, ModuleFunction),
        ("_fork", p_underscore_fork, [0], Unsafe, ModuleFunction),
        ("wait", p_wait, [0..=2], Unsafe, ModuleFunction),
        ("waitpid", p_wait, [0..=2], Unsafe, ModuleFunction),
        ("wait2", p_wait2, [0..=2], Unsafe, ModuleFunction),
        ("waitpid2", p_wait2, [0..=2], Unsafe, ModuleFunction),
        ("waitall", p_waitall, [0], Unsafe, ModuleFunction),
        ("kill", p_kill, [0..], Unsafe, ModuleFunction),
        ("exit", crate::core::kernel::k_exit, [0..=1], Safe, ModuleFunction),
        ("exit!", crate::core::kernel::k_exit_bang, [0..=1], Safe, ModuleFunction),
        ("abort", crate::core::kernel::k_abort, [0..=1], Unsafe, ModuleFunction),
    ]);
    for (name, v) in [("WNOHANG", libc::WNOHANG), ("WUNTRACED", libc::WUNTRACED)] {
        let id = ctx.intern(name);
        module::body(p).const_set(id, Value::fixnum(v as i64));
    }
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("`", spawn::k_backtick, [1], Unsafe, ModuleFunction),
        ("system", spawn::k_system, [1..], Unsafe, ModuleFunction, Kw),
        ("spawn", spawn::p_spawn, [1..], Unsafe, ModuleFunction, Kw),
        ("exec", spawn::k_exec, [1..], Unsafe, ModuleFunction, Kw),
        ("fork", k_fork, [0], Unsafe, ModuleFunction),
        ("_fork", p_underscore_fork, [0], Unsafe, ModuleFunction),
    ]);
    let s = ctx.c().signal;
    crate::methods!(ctx, s, [("list", sig_list, [0], Safe, ModuleFunction)]);
    crate::core::signal::init(ctx);
    let se = ctx.c().signal_exception;
    crate::methods!(ctx, se, [
        ("initialize", sigexc_initialize, [0..], Safe, Private),
        ("signo", sigexc_signo, [0], Safe),
        ("signm", sigexc_signm, [0], Safe),
    ]);
    let ie = ctx.c().interrupt;
    crate::methods!(ctx, ie, [("initialize", interrupt_initialize, [0..=1], Safe, Private)]);
    let object = ctx.c().object;
    let status = crate::core::module_methods::define_class_under(ctx, p, "Status", object);
    module::body(status).alloc = module::AllocKind::None;
    crate::methods!(ctx, status, [
        ("exitstatus", st_exitstatus, [0], Safe),
        ("success?", st_success_p, [0], Safe),
        ("exited?", st_exited_p, [0], Safe),
        ("signaled?", st_signaled_p, [0], Safe),
        ("termsig", st_termsig, [0], Safe),
        ("stopped?", st_stopped_p, [0], Safe),
        ("pid", st_pid, [0], Safe),
        ("to_i", st_to_i, [0], Safe),
        ("==", st_eq, [1], Safe),
        ("to_s", st_to_s, [0], Safe),
        ("inspect", st_inspect, [0], Safe),
        ("&", st_and, [1], Unsafe),
        (">>", st_shr, [1], Unsafe),
        ("stopsig", st_stopsig, [0], Safe),
        ("coredump?", st_coredump, [0], Safe),
        ("wait", st_s_wait, [0..=2], Unsafe, Singleton),
    ]);
    // Errno classes; names for the same errno share one class (EWOULDBLOCK is EAGAIN).
    let errno = ctx.c().errno;
    for (alias, of) in [("EWOULDBLOCK", "EAGAIN"), ("EOPNOTSUPP", "ENOTSUP"), ("EDEADLOCK", "EDEADLK")] {
        let (alias_id, of_id) = (ctx.intern(alias), ctx.intern(of));
        if module::body(errno).const_get(alias_id).is_none() {
            let sce = ctx.c().system_call_error;
            let k = match module::body(errno).const_get(of_id) {
                Some(e) => e.value,
                None => {
                    let k = crate::core::module_methods::define_class_under(ctx, errno, of, sce);
                    let eid = ctx.intern("Errno");
                    let code = crate::core::exception::ERRNO_NAMES.iter().find(|(n, _)| *n == of).map_or(0, |(_, c)| *c);
                    module::body(k).const_set(eid, Value::fixnum(code as i64));
                    k
                }
            };
            module::body(errno).const_set(alias_id, k);
        }
    }
    let sce = ctx.c().system_call_error;
    for (name, code) in crate::core::exception::ERRNO_NAMES {
        let id = ctx.intern(name);
        if module::body(errno).const_get(id).is_some() {
            continue;
        }
        let k = crate::core::module_methods::define_class_under(ctx, errno, name, sce);
        let eid = ctx.intern("Errno");
        module::body(k).const_set(eid, Value::fixnum(*code as i64));
    }
    define_io_wait_errors(ctx);
}

/// IO::WaitReadable/WaitWritable and the errors nonblocking IO raises, which are both an
/// Errno class and one of those (`IO::EAGAINWaitReadable`; EWOULDBLOCK is EAGAIN here).
fn define_io_wait_errors(ctx: &mut Ctx) {
    let io = ctx.c().io;
    let errno = ctx.c().errno;
    let readable = crate::core::module_methods::define_module_under(ctx, io, "WaitReadable");
    let writable = crate::core::module_methods::define_module_under(ctx, io, "WaitWritable");
    for (errname, aliases) in [("EAGAIN", &["EWOULDBLOCK"][..]), ("EINPROGRESS", &[][..])] {
        let id = ctx.intern(errname);
        let Some(base) = module::body(errno).const_get(id).map(|e| e.value) else { continue };
        for (suffix, m) in [("WaitReadable", readable), ("WaitWritable", writable)] {
            let name = format!("{errname}{suffix}");
            let k = crate::core::module_methods::define_class_under(ctx, io, &name, base);
            let _ = ctx.call_str(k, "include", &[m]);
            for a in aliases {
                let aid = ctx.intern(&format!("{a}{suffix}"));
                module::body(io).const_set(aid, k);
            }
        }
    }
}
