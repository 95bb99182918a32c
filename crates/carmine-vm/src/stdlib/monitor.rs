//! `monitor.so`: the Monitor class that CRuby's monitor.rb (MonitorMixin, the
//! `Monitor#new_cond` condition variables) builds on: a reentrant lock.
//!
//! Invariants:
//! - A Monitor wraps one Thread::Mutex; `owner` is the fiber holding the mutex through
//!   this monitor (nil when free) and `count` how many times it entered. The mutex is held
//!   exactly while `count > 0`.
//! - Ownership is per fiber, as CRuby 3.x's (and Carmine's Mutex): another fiber of the
//!   same thread does not re-enter.
//! - `wait_for_cond` gives the mutex up for the wait and restores owner and count after
//!   it, also when the wait is interrupted.

use crate::core::object;
use crate::error::Unwind;
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct MonitorData {
    mutex: Value,
    owner: Value,
    count: i64,
}

crate::data_obj!(MonitorData, |s, m| {
    m.mark(s.mutex);
    m.mark(s.owner);
});

fn alloc_monitor(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let mutex_class = ctx.c().mutex;
    let new = ctx.intern("new");
    let mutex = ctx.call(mutex_class, new, &[])?;
    let mark = ctx.protect(mutex);
    let m = object::new_data(ctx, klass, Box::new(MonitorData { mutex, owner: Value::NIL, count: 0 }));
    ctx.unprotect(mark);
    Ok(m)
}

fn data<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut MonitorData> {
    match data_ref::<MonitorData>(v) {
        Some(d) => Ok(d),
        None => {
            let cname = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {cname} (expected monitor)")))
        }
    }
}

fn thread_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    let c = ctx.c().thread_error;
    ctx.raise(c, msg)
}

fn call_mutex(ctx: &mut Ctx, recv: Value, name: &str, args: &[Value]) -> Result<Value> {
    let mutex = data(ctx, recv)?.mutex;
    let id = ctx.intern(name);
    ctx.call(mutex, id, args)
}

fn enter(ctx: &mut Ctx, recv: Value) -> Result<()> {
    let me = crate::fiber::current(ctx);
    if data(ctx, recv)?.owner != me {
        call_mutex(ctx, recv, "lock", &[])?;
        let d = data(ctx, recv)?;
        d.owner = me;
        d.count = 0;
    }
    data(ctx, recv)?.count += 1;
    Ok(())
}

fn check_owner(ctx: &mut Ctx, recv: Value) -> Result<()> {
    let me = crate::fiber::current(ctx);
    if data(ctx, recv)?.owner != me {
        return Err(thread_error(ctx, "current fiber not owner"));
    }
    Ok(())
}

fn exit(ctx: &mut Ctx, recv: Value) -> Result<()> {
    check_owner(ctx, recv)?;
    let d = data(ctx, recv)?;
    if d.count <= 0 {
        let msg = format!("monitor_exit: count:{}", d.count);
        return Err(thread_error(ctx, &msg));
    }
    d.count -= 1;
    if d.count == 0 {
        d.owner = Value::NIL;
        call_mutex(ctx, recv, "unlock", &[])?;
    }
    Ok(())
}

fn m_try_enter(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let me = crate::fiber::current(ctx);
    if data(ctx, recv)?.owner != me {
        if !call_mutex(ctx, recv, "try_lock", &[])?.truthy() {
            return Ok(Value::FALSE);
        }
        let d = data(ctx, recv)?;
        d.owner = me;
        d.count = 0;
    }
    data(ctx, recv)?.count += 1;
    Ok(Value::TRUE)
}

fn m_enter(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    enter(ctx, recv)?;
    Ok(Value::NIL)
}

fn m_exit(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    exit(ctx, recv)?;
    Ok(Value::NIL)
}

fn m_synchronize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        let c = ctx.c().local_jump_error;
        return Err(ctx.raise(c, "no block given (yield)"));
    };
    enter(ctx, recv)?;
    let r = ctx.yield_block(&b, &[]);
    // The block may have left the monitor itself (an explicit exit); only leave it if
    // still held, as an `ensure mon_exit` would fail the same way in CRuby.
    let e = exit(ctx, recv);
    let v = r?;
    e?;
    Ok(v)
}

fn m_locked_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    call_mutex(ctx, recv, "locked?", &[])
}

fn m_owned_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let me = crate::fiber::current(ctx);
    let locked = call_mutex(ctx, recv, "locked?", &[])?.truthy();
    Ok(Value::bool(locked && data(ctx, recv)?.owner == me))
}

fn m_check_owner(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_owner(ctx, recv)?;
    Ok(Value::NIL)
}

/// `wait_for_cond(cond, timeout)`: waits on a Thread::ConditionVariable with the monitor's
/// mutex, however deeply the monitor was entered, and re-enters as deeply. True when
/// signalled, false after the timeout.
fn m_wait_for_cond(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (cond, timeout) = (args.pos[0], args.pos[1]);
    let d = data(ctx, recv)?;
    let (count, mutex) = (d.count, d.mutex);
    d.owner = Value::NIL;
    d.count = 0;
    let wait = ctx.intern("wait");
    let r = ctx.call(cond, wait, &[mutex, timeout]);
    let me = crate::fiber::current(ctx);
    let d = data(ctx, recv)?;
    d.owner = me;
    d.count = count;
    Ok(Value::bool(r?.truthy()))
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let k = crate::core::module_methods::define_class_under(ctx, obj, "Monitor", obj);
    crate::core::module::body(k).alloc = crate::core::module::AllocKind::Data(alloc_monitor);
    crate::methods!(ctx, k, [
        ("try_enter", m_try_enter, [0], Unsafe),
        ("enter", m_enter, [0], Unsafe),
        ("exit", m_exit, [0], Unsafe),
        ("synchronize", m_synchronize, [0], Unsafe),
        ("mon_locked?", m_locked_p, [0], Unsafe),
        ("mon_owned?", m_owned_p, [0], Unsafe),
        ("mon_check_owner", m_check_owner, [0], Unsafe),
        ("wait_for_cond", m_wait_for_cond, [2], Unsafe),
    ]);
    Ok(())
}
