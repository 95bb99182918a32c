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

/// Runs a shell command, returning (output, exit status).
fn shell(ctx: &mut Ctx, cmd: &str, capture: bool) -> Result<(Vec<u8>, i32)> {
    crate::core::io::flush_stdout(ctx);
    let mut c = std::process::Command::new("/bin/sh");
    c.arg("-c").arg(cmd);
    if capture {
        match c.output() {
            Ok(o) => Ok((o.stdout, o.status.code().unwrap_or(-1))),
            Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), cmd)),
        }
    } else {
        match c.status() {
            Ok(s) => Ok((Vec::new(), s.code().unwrap_or(-1))),
            Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), cmd)),
        }
    }
}

fn set_last_status(ctx: &mut Ctx, code: i32) {
    crate::core::globals::define(ctx, crate::symbol::sym::DOLLAR_QUESTION, Value::fixnum(code as i64));
}

fn k_backtick(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let cmd = string::str_arg(ctx, args.pos[0])?;
    let (out, code) = shell(ctx, &cmd, true)?;
    set_last_status(ctx, code);
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
    let (_, code) = shell(ctx, &cmd, false)?;
    set_last_status(ctx, code);
    Ok(if code == 127 { Value::NIL } else { Value::bool(code == 0) })
}

fn sig_list(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let h = crate::core::hash::new(ctx);
    for (n, v) in [("EXIT", 0), ("HUP", 1), ("INT", 2), ("QUIT", 3), ("KILL", 9), ("USR1", 10), ("SEGV", 11), ("USR2", 12), ("PIPE", 13), ("ALRM", 14), ("TERM", 15), ("CHLD", 17)] {
        let k = string::new_utf8(ctx, n);
        crate::core::hash::aset(ctx, h, k, Value::fixnum(v))?;
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
