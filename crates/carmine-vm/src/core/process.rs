//! Process, Signal, and system errors (`Errno::*`), plus running shell commands.

use crate::core::{array, module, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// An `Errno::EXXX` exception for `code`, with `detail` appended to its message.
pub fn errno_error(ctx: &mut Ctx, code: i32, detail: &str) -> Unwind {
    let errno = ctx.c().errno;
    let klass = crate::core::exception::ERRNO_NAMES
        .iter()
        .find(|(_, c)| *c == code)
        .and_then(|(name, _)| {
            let id = ctx.intern(name);
            module::body(errno).const_get(id).map(|e| e.value)
        })
        .unwrap_or(ctx.c().system_call_error);
    let d = string::new_utf8(ctx, detail);
    let e = match object::allocate(ctx, klass) {
        Ok(e) => e,
        Err(e) => return e,
    };
    let args: Vec<Value> = if detail.is_empty() { vec![] } else { vec![d] };
    let r = if klass == ctx.c().system_call_error {
        let mut a = args.clone();
        if a.is_empty() {
            a.push(Value::NIL);
        }
        a.push(Value::fixnum(code as i64));
        ctx.call(e, crate::symbol::sym::INITIALIZE, &a)
    } else {
        ctx.call(e, crate::symbol::sym::INITIALIZE, &args)
    };
    if let Err(err) = r {
        return err;
    }
    crate::core::exception::capture_backtrace(ctx, e);
    Unwind::Raise(e)
}

fn p_pid(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(std::process::id() as i64))
}

fn p_clock_gettime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let clock = args.pos.first().and_then(|v| v.as_fixnum()).unwrap_or(libc::CLOCK_MONOTONIC as i64) as libc::clockid_t;
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return Err(errno_error(ctx, libc::EINVAL, "clock_gettime"));
    }
    let unit = args.pos.get(1).and_then(|v| v.as_symbol()).map(|s| ctx.sym_str(s));
    let ns = ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128;
    Ok(match unit.as_deref() {
        Some("nanosecond") => crate::core::bignum::from_i128(ctx, ns),
        Some("microsecond") => crate::core::bignum::from_i128(ctx, ns / 1000),
        Some("millisecond") => crate::core::bignum::from_i128(ctx, ns / 1_000_000),
        Some("second") => crate::core::bignum::from_i128(ctx, ns / 1_000_000_000),
        Some("float_millisecond") => crate::core::float::new(ctx, ns as f64 / 1e6),
        Some("float_microsecond") => crate::core::float::new(ctx, ns as f64 / 1e3),
        _ => crate::core::float::new(ctx, ns as f64 / 1e9),
    })
}

/// A finished child: `Process::Status` (`$?`). `status` is the raw wait(2)
/// status word.
pub struct StatusObj {
    pub pid: i64,
    pub status: i32,
}
crate::data_obj!(StatusObj);

/// Runs a shell command, returning (output, pid, raw wait status).
fn shell(ctx: &mut Ctx, cmd: &str, capture: bool) -> Result<(Vec<u8>, i64, i32)> {
    use std::os::unix::process::ExitStatusExt;
    crate::core::io::flush_stdout(ctx);
    let mut c = std::process::Command::new("/bin/sh");
    c.arg("-c").arg(cmd);
    if capture {
        c.stdin(std::process::Stdio::inherit()).stderr(std::process::Stdio::inherit());
        let child = c.stdout(std::process::Stdio::piped()).spawn();
        match child {
            Ok(ch) => {
                let pid = ch.id() as i64;
                match ch.wait_with_output() {
                    Ok(o) => Ok((o.stdout, pid, o.status.into_raw())),
                    Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ECHILD), cmd)),
                }
            }
            Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), cmd)),
        }
    } else {
        match c.spawn() {
            Ok(mut ch) => {
                let pid = ch.id() as i64;
                match ch.wait() {
                    Ok(st) => Ok((Vec::new(), pid, st.into_raw())),
                    Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ECHILD), cmd)),
                }
            }
            Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), cmd)),
        }
    }
}

fn set_last_status(ctx: &mut Ctx, pid: i64, status: i32) {
    let klass = status_class(ctx);
    let v = object::new_data(ctx, klass, Box::new(StatusObj { pid, status }));
    crate::core::globals::define(ctx, crate::symbol::sym::DOLLAR_QUESTION, v);
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

fn signal_name(sig: i32) -> Option<&'static str> {
    SIGNALS.iter().find(|(_, n)| *n == sig).map(|(name, _)| *name)
}

const SIGNALS: &[(&str, i32)] = &[("EXIT", 0), ("HUP", 1), ("INT", 2), ("QUIT", 3), ("ILL", 4), ("TRAP", 5), ("ABRT", 6), ("BUS", 7), ("FPE", 8), ("KILL", 9), ("USR1", 10), ("SEGV", 11), ("USR2", 12), ("PIPE", 13), ("ALRM", 14), ("TERM", 15), ("CHLD", 17), ("CONT", 18), ("STOP", 19), ("TSTP", 20)];

fn st_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let text = st_describe(status_of(ctx, recv)?);
    Ok(string::new_utf8(ctx, &text))
}

fn st_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let text = st_describe(status_of(ctx, recv)?);
    Ok(string::new_utf8(ctx, &format!("#<Process::Status: {text}>")))
}

fn k_backtick(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let cmd = string::str_arg(ctx, args.pos[0])?;
    let (out, pid, status) = shell(ctx, &cmd, true)?;
    set_last_status(ctx, pid, status);
    Ok(string::new_from_bytes(ctx, &out))
}

fn k_system(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut parts = Vec::new();
    for &a in args.pos {
        if crate::core::hash::is_hash(a) {
            continue;
        }
        parts.push(string::str_arg(ctx, a)?);
    }
    let cmd = parts.join(" ");
    let (_, pid, status) = shell(ctx, &cmd, false)?;
    set_last_status(ctx, pid, status);
    let exited = libc::WIFEXITED(status);
    let code = libc::WEXITSTATUS(status);
    Ok(if exited && code == 127 { Value::NIL } else { Value::bool(exited && code == 0) })
}

fn sig_list(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let h = crate::core::hash::new(ctx);
    for &(n, v) in SIGNALS {
        let k = string::new_utf8(ctx, n);
        crate::core::hash::aset(ctx, h, k, Value::fixnum(v as i64))?;
    }
    Ok(h)
}

pub fn init(ctx: &mut Ctx) {
    let p = ctx.c().process;
    for (name, v) in [("CLOCK_REALTIME", libc::CLOCK_REALTIME), ("CLOCK_MONOTONIC", libc::CLOCK_MONOTONIC), ("CLOCK_PROCESS_CPUTIME_ID", libc::CLOCK_PROCESS_CPUTIME_ID), ("CLOCK_THREAD_CPUTIME_ID", libc::CLOCK_THREAD_CPUTIME_ID)] {
        let id = ctx.intern(name);
        module::body(p).const_set(id, Value::fixnum(v as i64));
    }
    crate::methods!(ctx, p, [
        ("pid", p_pid, [0], Safe, ModuleFunction),
        ("clock_gettime", p_clock_gettime, [1..=2], Safe, ModuleFunction),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("`", k_backtick, [1], Unsafe, ModuleFunction),
        ("system", k_system, [1..], Unsafe, ModuleFunction),
    ]);
    let s = ctx.c().signal;
    crate::methods!(ctx, s, [("list", sig_list, [0], Safe, ModuleFunction)]);
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
    ]);
    // Errno classes.
    let errno = ctx.c().errno;
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
    let _ = array::new;
}
