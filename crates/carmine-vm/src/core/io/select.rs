//! `IO.select`: waiting for several IOs at once.
//!
//! Invariants: an IO with unread data in its read buffer is readable without asking the
//! system (poll would not see data already read); the wait itself goes through
//! `thread::sched::poll_fds` (GL left, interruptible); the result keeps the caller's
//! objects (not their `to_io`), in the order given.

use std::time::{Duration, Instant};

use crate::core::io::io_ref;
use crate::core::{array, object};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The descriptor of a select argument (an IO or an object with `to_io`).
fn fd_of(ctx: &mut Ctx, v: Value) -> Result<(i32, bool)> {
    let io_v = if io_ref(v).is_some() {
        v
    } else {
        let to_io = ctx.intern("to_io");
        if !ctx.respond_to(v, to_io, true) {
            let cname = object::class_name_of(ctx, v);
            return Err(ctx.type_error(&format!("no implicit conversion of {cname} into IO")));
        }
        ctx.call(v, to_io, &[])?
    };
    let Some(io) = io_ref(io_v) else {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("can't convert {cname} to IO")));
    };
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    Ok((io.fd, io.rpos < io.rbuf.len()))
}

fn list(ctx: &mut Ctx, v: Option<&Value>) -> Result<Vec<Value>> {
    match v {
        Some(&v) if !v.is_nil() => {
            let a = array::to_ary_arg(ctx, v)?;
            Ok(array::to_vec(a))
        }
        _ => Ok(Vec::new()),
    }
}

/// A timeout argument: nil waits forever; negative is an error.
pub fn timeout_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<Duration>> {
    let Some(&v) = v.filter(|v| !v.is_nil()) else { return Ok(None) };
    let secs = if let Some(n) = v.as_fixnum() { n as f64 } else { crate::core::numeric::to_f64(ctx, v)? };
    if secs < 0.0 {
        return Err(ctx.arg_error("time interval must not be negative"));
    }
    Ok(Some(Duration::from_secs_f64(secs.min(1e9))))
}

/// `IO.select(reads, writes = nil, errors = nil, timeout = nil)`.
fn s_select(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if let Some(r) = crate::fiber::scheduler::io_select(ctx, args.pos)? {
        return Ok(r);
    }
    let sets = [list(ctx, args.pos.first())?, list(ctx, args.pos.get(1))?, list(ctx, args.pos.get(2))?];
    let timeout = timeout_arg(ctx, args.pos.get(3))?;
    let mut fds = Vec::new();
    let mut owners = Vec::new();
    let mut buffered = Vec::new();
    for (kind, set) in sets.iter().enumerate() {
        for &v in set {
            let (fd, has_data) = fd_of(ctx, v)?;
            let events = match kind {
                0 => libc::POLLIN,
                1 => libc::POLLOUT,
                _ => libc::POLLPRI,
            };
            if kind == 0 && has_data {
                buffered.push(v);
            }
            fds.push(libc::pollfd { fd, events, revents: 0 });
            owners.push((kind, v));
        }
    }
    let ready = if buffered.is_empty() {
        let deadline = timeout.map(|t| Instant::now() + t);
        crate::thread::sched::poll_fds(ctx, &mut fds, deadline)?
    } else {
        // Buffered input answers at once; still report whatever else is ready now.
        crate::thread::sched::poll_fds(ctx, &mut fds, Some(Instant::now()))?;
        1
    };
    if ready == 0 {
        return Ok(Value::NIL);
    }
    let mut out = [Vec::new(), Vec::new(), Vec::new()];
    for (p, &(kind, v)) in fds.iter().zip(&owners) {
        let hit = match kind {
            0 => p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 || buffered.contains(&v),
            1 => p.revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0,
            _ => p.revents & libc::POLLPRI != 0,
        };
        if hit && !out[kind].contains(&v) {
            out[kind].push(v);
        }
    }
    let [r, w, e] = out;
    let (r, w, e) = (array::from_vec(ctx, r), array::from_vec(ctx, w), array::from_vec(ctx, e));
    Ok(array::from_vec(ctx, vec![r, w, e]))
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [("select", s_select, [1..=4], Unsafe, Singleton)]);
    // `Kernel#select` is `IO.select`.
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [("select", s_select, [1..=4], Unsafe, ModuleFunction)]);
}
