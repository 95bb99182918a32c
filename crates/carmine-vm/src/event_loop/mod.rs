//! `require "carmine/scheduler"`: Carmine's own fiber scheduler. Its loop and hooks are Ruby
//! (`lib/carmine/scheduler.rb`); this module is its native part, `Carmine::Selector`, an
//! epoll(7) set that maps ready descriptors to the fibers waiting for them.
//!
//! Invariants:
//! - A selector belongs to one scheduler, hence to one thread; only `wakeup` may be called
//!   from another thread's Ruby code (it writes the selector's eventfd).
//! - Every waiting fiber is listed under its descriptor with the events it waits for
//!   (`IO::READABLE`/`PRIORITY`/`WRITABLE` bits). A waiter leaves the list when its event
//!   is returned by `select` or when it `deregister`s (timeout, exception), so a fiber is
//!   never returned twice for one wait.
//! - A descriptor is added to epoll once, edge-triggered for every event, and stays (epoll
//!   drops it when the file is closed): waiting costs no system call. `added` records the
//!   serial of the IO that added it (`IoObj::serial`), so a descriptor number reused by
//!   another opening is added again. Edges that find no waiter are dropped: `register`
//!   relies on its caller having found the descriptor not ready after its last operation
//!   (EAGAIN or poll), as Carmine's IO does before it asks the scheduler; new input after
//!   that raises a new edge, and adding a descriptor reports what is already ready.
//! - A descriptor epoll cannot watch (a regular file: EPERM) is ready at once: its waiters
//!   are returned by the next `select` without waiting.
//! - `select` leaves the giant lock while it waits and takes interrupts (signals,
//!   `Thread#raise`) between 50 ms slices, like every other blocking wait.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::core::module_methods::{define_class_under, define_module_under};
use crate::core::{array, io, module, object};
use crate::fiber::scheduler::{PRIORITY, READABLE, WRITABLE};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The longest one epoll_wait lasts before interrupts are looked at.
const SLICE: Duration = Duration::from_millis(50);
/// Events taken from the kernel per epoll_wait.
const MAX_EVENTS: usize = 256;

struct Waiter {
    fiber: Value,
    events: i64,
}

pub struct Selector {
    epfd: i32,
    wake_fd: i32,
    waiters: HashMap<i32, Vec<Waiter>>,
    /// Descriptors in the epoll set, with the serial of the IO that added each.
    added: HashMap<i32, u64>,
    /// Waiters on descriptors epoll refused, returned by the next `select`.
    immediate: Vec<(Value, i64)>,
    count: usize,
}

crate::data_obj!(Selector, |s, m| {
    for list in s.waiters.values() {
        for w in list {
            m.mark(w.fiber);
        }
    }
    for &(f, _) in &s.immediate {
        m.mark(f);
    }
});

impl Selector {
    fn close(&mut self) {
        for fd in [self.epfd, self.wake_fd] {
            if fd >= 0 {
                // SAFETY: descriptors owned by the selector.
                unsafe { libc::close(fd) };
            }
        }
        self.epfd = -1;
        self.wake_fd = -1;
    }

    /// Puts `fd` (opened as IO serial `serial`) in the epoll set unless it is there; false
    /// when epoll cannot watch it.
    fn watch(&mut self, fd: i32, serial: u64) -> std::result::Result<bool, i32> {
        if self.added.get(&fd) == Some(&serial) {
            return Ok(true);
        }
        let bits = libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLPRI | libc::EPOLLOUT | libc::EPOLLET;
        let mut ev = libc::epoll_event { events: bits as u32, u64: fd as u64 };
        // SAFETY: a valid epoll descriptor and event.
        let mut r = unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_ADD, fd, &mut ev) };
        if r < 0 && crate::core::process::last_errno() == libc::EEXIST {
            // Already watched for the same file (another IO on the descriptor): modifying
            // reports what is ready now.
            // SAFETY: as above.
            r = unsafe { libc::epoll_ctl(self.epfd, libc::EPOLL_CTL_MOD, fd, &mut ev) };
        }
        if r < 0 {
            let e = crate::core::process::last_errno();
            self.added.remove(&fd);
            return if e == libc::EPERM { Ok(false) } else { Err(e) };
        }
        self.added.insert(fd, serial);
        Ok(true)
    }

    fn remove_waiter(&mut self, fd: i32, fiber: Value) -> bool {
        let Some(list) = self.waiters.get_mut(&fd) else { return false };
        let before = list.len();
        list.retain(|w| w.fiber != fiber);
        let removed = before - list.len();
        if list.is_empty() {
            self.waiters.remove(&fd);
        }
        self.count -= removed;
        removed > 0
    }
}

impl Drop for Selector {
    fn drop(&mut self) {
        self.close();
    }
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut Selector> {
    match data_ref::<Selector>(v) {
        Some(s) if s.epfd >= 0 => Ok(s),
        Some(_) => Err(ctx.raise(ctx.c().io_error, "selector closed")),
        None => Err(ctx.type_error("uninitialized Carmine::Selector")),
    }
}

/// The descriptor of an IO (or of what `to_io` gives), and the IO's serial.
fn fd_of(ctx: &mut Ctx, v: Value) -> Result<(i32, u64)> {
    let io = if io::io_ref(v).is_some() { v } else { ctx.call_str(v, "to_io", &[])? };
    match io::io_ref(io) {
        Some(o) if o.closed => Err(ctx.raise(ctx.c().io_error, "closed stream")),
        Some(o) => Ok((o.fd, o.serial)),
        None => Err(ctx.type_error("expected an IO")),
    }
}

fn s_initialize(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: plain system calls; the descriptors are owned by the new selector.
    let epfd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epfd < 0 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, "epoll_create1"));
    }
    // SAFETY: as above.
    let wake_fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if wake_fd < 0 {
        let e = crate::core::process::last_errno();
        // SAFETY: closing the descriptor made above.
        unsafe { libc::close(epfd) };
        return Err(crate::core::process::errno_error(ctx, e, "eventfd"));
    }
    let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: wake_fd as u64 };
    // SAFETY: valid descriptors and event.
    unsafe { libc::epoll_ctl(epfd, libc::EPOLL_CTL_ADD, wake_fd, &mut ev) };
    let sel = Selector { epfd, wake_fd, waiters: HashMap::new(), added: Default::default(), immediate: Vec::new(), count: 0 };
    let fresh = object::new_data(ctx, ctx.c().object, Box::new(sel));
    crate::object::move_data(recv, fresh);
    Ok(Value::NIL)
}

/// `register(io, events, fiber)`: `fiber` waits for `events` on `io`.
fn s_register(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (fd, serial) = fd_of(ctx, args.pos[0])?;
    let events = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
    let fiber = args.pos[2];
    let s = get(ctx, recv)?;
    match s.watch(fd, serial) {
        Ok(true) => s.waiters.entry(fd).or_default().push(Waiter { fiber, events }),
        Ok(false) => s.immediate.push((fiber, events)),
        Err(e) => return Err(crate::core::process::errno_error(ctx, e, "epoll_ctl")),
    }
    s.count += 1;
    Ok(Value::TRUE)
}

/// `deregister(io, fiber)`: `fiber` no longer waits on `io` (true if it was waiting).
fn s_deregister(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fiber = args.pos[1];
    let s = get(ctx, recv)?;
    let fd = match io::io_ref(args.pos[0]) {
        Some(o) => o.fd,
        None => return Ok(Value::FALSE),
    };
    let mut removed = s.remove_waiter(fd, fiber);
    let before = s.immediate.len();
    s.immediate.retain(|&(f, _)| f != fiber);
    if s.immediate.len() != before {
        s.count -= before - s.immediate.len();
        removed = true;
    }
    Ok(Value::bool(removed))
}

/// The scheduler's event bits for what epoll reported, limited to what a waiter asked for
/// (an error or hang-up wakes every waiter: its next operation reports it).
fn ready_bits(epoll: u32, wanted: i64) -> i64 {
    if epoll & (libc::EPOLLERR as u32 | libc::EPOLLHUP as u32) != 0 {
        return wanted;
    }
    let mut e = 0;
    if epoll & (libc::EPOLLIN as u32 | libc::EPOLLRDHUP as u32) != 0 {
        e |= READABLE;
    }
    if epoll & libc::EPOLLPRI as u32 != 0 {
        e |= PRIORITY;
    }
    if epoll & libc::EPOLLOUT as u32 != 0 {
        e |= WRITABLE;
    }
    e & wanted
}

/// `select(timeout)`: waits up to `timeout` seconds (nil: until something happens) and
/// returns the fibers whose descriptors are ready as a flat Array `[fiber, events, …]`.
fn s_select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let timeout = match args.pos.first() {
        Some(&v) if !v.is_nil() => Some(Duration::from_secs_f64(crate::core::numeric::to_f64(ctx, v)?.clamp(0.0, 1e9))),
        _ => None,
    };
    let out = array::new(ctx);
    let s = get(ctx, recv)?;
    if !s.immediate.is_empty() {
        let now = std::mem::take(&mut s.immediate);
        s.count -= now.len();
        for (f, e) in now {
            array::push(ctx, out, f);
            array::push(ctx, out, Value::fixnum(e));
        }
        return Ok(out);
    }
    let deadline = timeout.map(|t| Instant::now() + t);
    let epfd = s.epfd;
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
    let n = loop {
        let ms = match deadline {
            Some(d) => {
                let left = d.saturating_duration_since(Instant::now()).min(SLICE);
                // Round up: a timer due in 0.3 ms must not spin with zero-length waits.
                (left.as_micros() as i32 + 999) / 1000
            }
            None => SLICE.as_millis() as i32,
        };
        let ptr = events.as_mut_ptr() as usize;
        let n = if ms == 0 {
            // SAFETY: `events` has room for MAX_EVENTS entries.
            unsafe { libc::epoll_wait(epfd, ptr as *mut libc::epoll_event, MAX_EVENTS as i32, 0) }
        } else {
            crate::thread::sched::without_gl(ctx, || {
                // SAFETY: as above; `events` outlives the call.
                unsafe { libc::epoll_wait(epfd, ptr as *mut libc::epoll_event, MAX_EVENTS as i32, ms) }
            })
        };
        if n > 0 {
            break n as usize;
        }
        if n < 0 && crate::core::process::last_errno() != libc::EINTR {
            let e = crate::core::process::last_errno();
            return Err(crate::core::process::errno_error(ctx, e, "epoll_wait"));
        }
        crate::thread::sched::poll_interrupts(ctx)?;
        if deadline.map_or(false, |d| Instant::now() >= d) || ms == 0 {
            return Ok(out);
        }
    };
    let s = get(ctx, recv)?;
    for ev in &events[..n] {
        let fd = ev.u64 as i32;
        let bits = ev.events;
        if fd == s.wake_fd {
            let mut buf = [0u8; 8];
            // SAFETY: draining the eventfd counter into an 8-byte buffer.
            unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, 8) };
            continue;
        }
        let Some(list) = s.waiters.get_mut(&fd) else { continue };
        let mut i = 0;
        while i < list.len() {
            let got = ready_bits(bits, list[i].events);
            if got != 0 {
                let w = list.remove(i);
                s.count -= 1;
                array::push(ctx, out, w.fiber);
                array::push(ctx, out, Value::fixnum(got));
            } else {
                i += 1;
            }
        }
        if list.is_empty() {
            s.waiters.remove(&fd);
        }
    }
    Ok(out)
}

/// `wakeup`: makes a waiting `select` return (callable from any thread).
fn s_wakeup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = get(ctx, recv)?;
    let one: u64 = 1;
    // SAFETY: writing 8 bytes to the selector's eventfd.
    unsafe { libc::write(s.wake_fd, &one as *const u64 as *const libc::c_void, 8) };
    Ok(Value::NIL)
}

/// `waiting?`: whether any fiber waits for a descriptor.
fn s_waiting_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.count > 0))
}

fn s_close(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if let Some(s) = data_ref::<Selector>(recv) {
        s.close();
    }
    Ok(Value::NIL)
}

/// Defines `Carmine::Selector` and loads the scheduler written in Ruby.
pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let id = ctx.intern("Carmine");
    let carmine = match module::body(obj).const_get(id) {
        Some(e) => e.value,
        None => define_module_under(ctx, obj, "Carmine"),
    };
    let sel = define_class_under(ctx, carmine, "Selector", obj);
    module::body(sel).alloc = module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, sel, [
        ("initialize", s_initialize, [0], Unsafe, Private),
        ("register", s_register, [3], Unsafe),
        ("deregister", s_deregister, [2], Unsafe),
        ("select", s_select, [1], Unsafe),
        ("wakeup", s_wakeup, [0], Unsafe),
        ("waiting?", s_waiting_p, [0], Unsafe),
        ("close", s_close, [0], Unsafe),
    ]);
    let path = crate::core::file::expand_path(&format!("{}/carmine/scheduler.rb", crate::core::load::stdlib_dir()), None);
    crate::core::load::load_file(ctx, &path)
}
