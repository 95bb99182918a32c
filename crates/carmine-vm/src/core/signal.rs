//! Signal and `Kernel#trap`: installing handlers and running them when a signal arrives.
//!
//! Invariants:
//! - `Vm::traps` (a Hash, signal number => handler) records what Ruby asked for: a Proc
//!   or callable, a command String, "IGNORE", "DEFAULT", "SYSTEM_DEFAULT", "EXIT", or nil;
//!   the process disposition follows it (`thread::signal::set_disposition`).
//! - Signals whose default in Ruby is an exception (INT, HUP, TERM, QUIT, ALRM, USR1, USR2)
//!   are caught by the command-line runtime from the start (`install_ruby_defaults`); with
//!   no trap they raise `Interrupt` / `SignalException` in the main thread.
//! - Handlers run on the main thread, at a safepoint or in a blocking wait, in the order
//!   the signals arrived (`run_handlers`).

use crate::core::process::{signal_arg, signal_name};
use crate::core::{hash, string};
use crate::interp::Args;
use crate::thread::signal::{self as sig, Disposition};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Signals that CRuby turns into exceptions by default.
const RUBY_DEFAULT: &[i32] = &[libc::SIGINT, libc::SIGHUP, libc::SIGTERM, libc::SIGQUIT, libc::SIGALRM, libc::SIGUSR1, libc::SIGUSR2];

/// Signals Ruby refuses to trap (the VM needs them or they cannot be handled safely).
const RESERVED: &[i32] = &[libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGVTALRM];

fn traps(ctx: &mut Ctx) -> Value {
    let t = ctx.vm().traps.get();
    if !t.is_nil() {
        return t;
    }
    let h = hash::new(ctx);
    ctx.vm().roots.borrow_mut().push(h);
    ctx.vm().traps.set(h);
    h
}

fn register(ctx: &mut Ctx) {
    let mut main = ctx.vm().main_thread.get();
    if main.is_nil() {
        // Before any Thread object exists the caller is the main thread.
        main = crate::thread::sched::current(ctx);
    }
    let Some(d) = crate::thread::sched::data(main) else { return };
    let shared = d.shared.clone();
    let vm = ctx.vm();
    sig::register(&vm.signals, shared, &vm.interrupt);
}

/// In a forked child: signals are received again, and go to this thread (the child's
/// only one, now its main thread).
pub fn after_fork(ctx: &mut Ctx) {
    let main = crate::thread::sched::current(ctx);
    let Some(d) = crate::thread::sched::data(main) else { return };
    let shared = d.shared.clone();
    let vm = ctx.vm();
    sig::restart_after_fork(&vm.signals, shared, &vm.interrupt);
}

/// Catches the signals whose Ruby default is an exception (the command line does this
/// at start; an embedding application may choose not to).
pub fn install_ruby_defaults(ctx: &mut Ctx) {
    register(ctx);
    for &s in RUBY_DEFAULT {
        // SIGINT stays ignored when the parent ignored it (a background job), as CRuby.
        if let Ok(Disposition::Ignore) = sig::set_disposition(s, Disposition::Catch) {
            let _ = sig::set_disposition(s, Disposition::Ignore);
        }
    }
}

/// The signal number of a trap argument, with CRuby's errors for reserved and
/// untrappable signals.
fn trap_signal(ctx: &mut Ctx, v: Value) -> Result<i32> {
    if let Some(n) = v.as_fixnum().filter(|n| *n < 0) {
        return Err(ctx.arg_error(&format!("invalid signal number ({n})")));
    }
    let (n, negative) = signal_arg(ctx, v)?;
    if negative {
        let name = signal_name(n).unwrap_or("?");
        return Err(ctx.arg_error(&format!("negative signal name: -{name}")));
    }
    if !(0..65).contains(&n) {
        return Err(ctx.arg_error(&format!("invalid signal number ({n})")));
    }
    if RESERVED.contains(&n) {
        let name = signal_name(n).unwrap_or("?");
        return Err(ctx.arg_error(&format!("can't trap reserved signal: SIG{name}")));
    }
    if n == libc::SIGKILL || n == libc::SIGSTOP {
        let name = signal_name(n).unwrap_or("?");
        return Err(crate::core::process::errno_error(ctx, libc::EINVAL, &format!("SIG{name}")));
    }
    Ok(n)
}

/// What a command means for the process disposition, and the value recorded for it.
fn command(ctx: &mut Ctx, signo: i32, cmd: Value) -> Result<(Disposition, Value)> {
    if cmd.is_nil() {
        return Ok((Disposition::Ignore, Value::NIL));
    }
    let name = if let Some(id) = cmd.as_symbol() {
        Some(ctx.sym_str(id))
    } else if string::is_string(cmd) {
        Some(string::to_rust_string_lossy(cmd))
    } else {
        None
    };
    let ruby_default = if RUBY_DEFAULT.contains(&signo) { Disposition::Catch } else { Disposition::Default };
    let named = |ctx: &mut Ctx, s: &str| string::new_utf8(ctx, s);
    Ok(match name.as_deref() {
        Some("" | "IGNORE" | "SIG_IGN") => (Disposition::Ignore, named(ctx, "IGNORE")),
        Some("DEFAULT" | "SIG_DFL") => (ruby_default, named(ctx, "DEFAULT")),
        Some("SYSTEM_DEFAULT") => (Disposition::Default, named(ctx, "SYSTEM_DEFAULT")),
        Some("EXIT") => (Disposition::Catch, named(ctx, "EXIT")),
        _ => (Disposition::Catch, cmd),
    })
}

/// What `trap` reports for a signal Ruby never trapped: "DEFAULT" for those Ruby handles
/// (and CHLD), nil for EXIT, PIPE and SYS (which the VM sets up itself), else
/// "SYSTEM_DEFAULT".
fn initial(ctx: &mut Ctx, signo: i32) -> Value {
    if signo == 0 || signo == libc::SIGPIPE || signo == libc::SIGSYS {
        return Value::NIL;
    }
    let ruby = RUBY_DEFAULT.contains(&signo) || signo == libc::SIGCHLD;
    string::new_utf8(ctx, if ruby { "DEFAULT" } else { "SYSTEM_DEFAULT" })
}

/// `Signal.trap(signal, command = nil) { |signo| }`: the previous handler.
fn s_trap(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let signo = trap_signal(ctx, args.pos[0])?;
    let cmd = match (args.pos.get(1), args.block) {
        (Some(&c), _) => c,
        (None, Some(b)) => crate::core::proc::from_block(ctx, &b)?,
        (None, None) => return Err(ctx.arg_error("tried to create Proc object without a block")),
    };
    let (disp, recorded) = command(ctx, signo, cmd)?;
    let table = traps(ctx);
    let key = Value::fixnum(signo as i64);
    let previous = match hash::get(table, key) {
        Some(v) => v,
        None => initial(ctx, signo),
    };
    hash::aset(ctx, table, key, recorded)?;
    if signo != 0 {
        register(ctx);
        if let Err(e) = sig::set_disposition(signo, disp) {
            return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EINVAL), ""));
        }
    }
    Ok(previous)
}

/// `Signal.signame(signo)`: the name without "SIG", or nil.
fn s_signame(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_int_arg(ctx, args.pos[0])?;
    Ok(match signal_name(n) {
        Some(name) if n != 0 || name == "EXIT" => string::new_utf8(ctx, name),
        _ => Value::NIL,
    })
}

/// Raises the exception a signal means with no trap: Interrupt for SIGINT, else
/// SignalException.
fn default_exception(ctx: &mut Ctx, signo: i32) -> crate::error::Unwind {
    let new = ctx.intern("new");
    let made = if signo == libc::SIGINT {
        let k = ctx.c().interrupt;
        let empty = string::new_utf8(ctx, "");
        ctx.call(k, new, &[empty])
    } else {
        let k = ctx.c().signal_exception;
        ctx.call(k, new, &[Value::fixnum(signo as i64)])
    };
    match made {
        Ok(e) => {
            crate::core::exception::capture_backtrace(ctx, e);
            crate::error::Unwind::Raise(e)
        }
        Err(e) => e,
    }
}

/// Runs the handlers of the signals in this VM's inbox (on the main thread).
pub fn run_handlers(ctx: &mut Ctx) -> Result<()> {
    loop {
        let next = ctx.vm().signals.queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
        let Some(signo) = next else { return Ok(()) };
        let table = ctx.vm().traps.get();
        let handler = if table.is_nil() { None } else { hash::get(table, Value::fixnum(signo as i64)) };
        match handler {
            None => return Err(default_exception(ctx, signo)),
            Some(h) if string::is_string(h) => match string::to_rust_string_lossy(h).as_str() {
                "DEFAULT" => return Err(default_exception(ctx, signo)),
                "IGNORE" | "SYSTEM_DEFAULT" => {}
                "EXIT" => {
                    crate::core::kernel::k_exit(ctx, Value::NIL, &Args::new(&[Value::TRUE]))?;
                }
                code => {
                    let src = string::new_utf8(ctx, code);
                    ctx.call_str(ctx.vm().main_obj.get(), "eval", &[src])?;
                }
            },
            Some(h) if h.is_nil() => {}
            Some(h) => {
                let call = ctx.intern("call");
                let arity = ctx.call_str(h, "arity", &[]).ok().and_then(|a| a.as_fixnum()).unwrap_or(1);
                if arity == 0 {
                    ctx.call(h, call, &[])?;
                } else {
                    ctx.call(h, call, &[Value::fixnum(signo as i64)])?;
                }
            }
        }
    }
}

/// After `Process.kill` to this process: runs the handler before returning, as CRuby does.
pub fn after_self_kill(ctx: &mut Ctx) -> Result<()> {
    let inbox = ctx.vm().signals.clone();
    if sig::drain_pending(&inbox) && crate::thread::sched::is_main(ctx) {
        ctx.vm().interrupt.fetch_and(!crate::interp::ops::INTERRUPT_SIGNAL, std::sync::atomic::Ordering::AcqRel);
        return run_handlers(ctx);
    }
    Ok(())
}

/// The handler recorded for `trap("EXIT")`, run when the process ends.
pub fn exit_handler(ctx: &mut Ctx) -> Option<Value> {
    let table = ctx.vm().traps.get();
    if table.is_nil() {
        return None;
    }
    let h = hash::get(table, Value::fixnum(0))?;
    (!h.is_nil() && !string::is_string(h)).then_some(h)
}

pub fn init(ctx: &mut Ctx) {
    let s = ctx.c().signal;
    crate::methods!(ctx, s, [
        ("trap", s_trap, [1..=2], Unsafe, ModuleFunction),
        ("signame", s_signame, [1], Safe, ModuleFunction),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [("trap", s_trap, [1..=2], Unsafe, ModuleFunction)]);
}
