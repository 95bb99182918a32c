//! Waiting on one IO (`io/wait`, built in since Ruby 3.2): `wait`, `wait_readable`,
//! `wait_writable`, `wait_priority`, `ready?`; and `io/nonblock`: `nonblock?`,
//! `nonblock=`, `nonblock { }`. The event constants `IO::READABLE`, `PRIORITY`, `WRITABLE`.
//!
//! Invariants: buffered input counts as readable without asking the system; every wait
//! goes through `thread::sched::poll_fds` (the GL is left, interrupts are taken), where
//! the fiber scheduler will hook `io_wait`.

use std::time::Instant;

use crate::core::io::{get_io, io_ref};
use crate::core::io::select::timeout_arg;
use crate::core::integer;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const READABLE: i64 = 1;
const PRIORITY: i64 = 2;
const WRITABLE: i64 = 4;

fn open_fd(ctx: &mut Ctx, v: Value) -> Result<i32> {
    let io = get_io(ctx, v)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    Ok(io.fd)
}

/// Waits for `events` (READABLE/PRIORITY/WRITABLE bits) until `timeout` seconds pass;
/// the events that are ready (0 at the timeout).
pub(crate) fn wait_events(ctx: &mut Ctx, v: Value, events: i64, timeout: Option<&Value>) -> Result<i64> {
    let fd = open_fd(ctx, v)?;
    let timeout = timeout_arg(ctx, timeout)?;
    if events & READABLE != 0 && io_ref(v).is_some_and(|io| io.rpos < io.rbuf.len()) {
        return Ok(READABLE);
    }
    let mut poll_events = 0;
    if events & READABLE != 0 {
        poll_events |= libc::POLLIN;
    }
    if events & PRIORITY != 0 {
        poll_events |= libc::POLLPRI;
    }
    if events & WRITABLE != 0 {
        poll_events |= libc::POLLOUT;
    }
    let mut fds = [libc::pollfd { fd, events: poll_events, revents: 0 }];
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        // A non-blocking fiber asks its scheduler (CRuby's rb_io_wait): the events it
        // reports, or none after the timeout.
        if !crate::fiber::scheduler::ready_now(fd, poll_events) {
            let t = match timeout {
                Some(t) => crate::core::float::new(ctx, t.as_secs_f64()),
                None => Value::NIL,
            };
            let r = crate::fiber::scheduler::io_wait(ctx, s, v, events, t)?;
            return Ok(r.as_fixnum().unwrap_or(0));
        }
    }
    let deadline = timeout.map(|t| Instant::now() + t);
    if crate::thread::sched::poll_fds(ctx, &mut fds, deadline)? == 0 {
        return Ok(0);
    }
    let r = fds[0].revents;
    let mut ready = 0;
    if r & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 && events & READABLE != 0 {
        ready |= READABLE;
    }
    if r & libc::POLLPRI != 0 {
        ready |= PRIORITY;
    }
    if r & (libc::POLLOUT | libc::POLLERR) != 0 && events & WRITABLE != 0 {
        ready |= WRITABLE;
    }
    Ok(ready)
}

fn m_wait_readable(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = wait_events(ctx, recv, READABLE, args.pos.first())?;
    Ok(if r == 0 { Value::NIL } else { recv })
}

fn m_wait_writable(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = wait_events(ctx, recv, WRITABLE, args.pos.first())?;
    Ok(if r == 0 { Value::NIL } else { recv })
}

fn m_wait_priority(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = wait_events(ctx, recv, PRIORITY, args.pos.first())?;
    Ok(if r == 0 { Value::NIL } else { recv })
}

/// `wait(events, timeout)` (the events ready, or nil), or the older
/// `wait(timeout = nil, *modes)` with mode Symbols (self, or nil).
fn m_wait(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let symbolic = args.pos.len() != 2 || args.pos.get(1).is_some_and(|v| v.as_symbol().is_some());
    if !symbolic {
        let events = integer::to_i64_arg(ctx, args.pos[0])?;
        if events <= 0 {
            return Err(ctx.arg_error("Events must be positive integer!"));
        }
        let r = wait_events(ctx, recv, events, args.pos.get(1))?;
        return Ok(if r == 0 { Value::NIL } else { Value::fixnum(r) });
    }
    let mut events = 0;
    let mut timeout = None;
    for &a in args.pos {
        if let Some(id) = a.as_symbol() {
            events |= match ctx.sym_str(id).as_str() {
                "r" | "read" | "readable" => READABLE,
                "w" | "write" | "writable" => WRITABLE,
                "rw" | "read_write" | "readable_writable" => READABLE | WRITABLE,
                other => return Err(ctx.arg_error(&format!("unsupported mode: {other}"))),
            };
        } else {
            timeout = Some(a);
        }
    }
    if events == 0 {
        events = READABLE;
    }
    let r = wait_events(ctx, recv, events, timeout.as_ref())?;
    Ok(if r == 0 { Value::NIL } else { recv })
}

/// `ready?`: input can be read now without waiting.
fn m_ready(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = wait_events(ctx, recv, READABLE, Some(&Value::fixnum(0)))?;
    Ok(Value::bool(r != 0))
}

/// `nread`: bytes readable without blocking: what the IO has buffered, else what the
/// kernel holds for the descriptor (FIONREAD; 0 when it cannot tell).
fn m_nread(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = open_fd(ctx, recv)?;
    let buffered = io_ref(recv).map_or(0, |io| io.rbuf.len().saturating_sub(io.rpos));
    if buffered > 0 {
        return Ok(Value::fixnum(buffered as i64));
    }
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    if unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) } != 0 {
        return Ok(Value::fixnum(0));
    }
    Ok(Value::fixnum(n as i64))
}

fn flags(fd: i32) -> i32 {
    // SAFETY: F_GETFL only queries the descriptor.
    unsafe { libc::fcntl(fd, libc::F_GETFL) }
}

fn set_nonblock(fd: i32, on: bool) {
    let fl = flags(fd);
    if fl >= 0 {
        // SAFETY: F_SETFL on an open descriptor.
        unsafe { libc::fcntl(fd, libc::F_SETFL, if on { fl | libc::O_NONBLOCK } else { fl & !libc::O_NONBLOCK }) };
    }
}

fn m_nonblock_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = open_fd(ctx, recv)?;
    Ok(Value::bool(flags(fd) & libc::O_NONBLOCK != 0))
}

fn m_set_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fd = open_fd(ctx, recv)?;
    set_nonblock(fd, args.pos[0].truthy());
    Ok(args.pos[0])
}

/// `nonblock(on = true) { }`: the mode set for the block and restored after it.
fn m_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fd = open_fd(ctx, recv)?;
    let on = args.pos.first().is_none_or(|v| v.truthy());
    let Some(b) = args.block else {
        set_nonblock(fd, on);
        return Ok(recv);
    };
    let was = flags(fd) & libc::O_NONBLOCK != 0;
    set_nonblock(fd, on);
    let r = ctx.yield1(&b, recv);
    if io_ref(recv).is_some_and(|io| !io.closed) {
        set_nonblock(fd, was);
    }
    r
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    for (name, v) in [("READABLE", READABLE), ("PRIORITY", PRIORITY), ("WRITABLE", WRITABLE)] {
        let id = ctx.intern(name);
        crate::core::module::body(io).const_set(id, Value::fixnum(v));
    }
    crate::methods!(ctx, io, [
        ("wait", m_wait, [0..], Unsafe),
        ("wait_readable", m_wait_readable, [0..=1], Unsafe),
        ("wait_writable", m_wait_writable, [0..=1], Unsafe),
        ("wait_priority", m_wait_priority, [0..=1], Unsafe),
        ("ready?", m_ready, [0], Unsafe),
        ("nread", m_nread, [0], Unsafe),
        ("nonblock?", m_nonblock_p, [0], Unsafe),
        ("nonblock=", m_set_nonblock, [1], Unsafe),
        ("nonblock", m_nonblock, [0..=1], Unsafe),
    ]);
}
