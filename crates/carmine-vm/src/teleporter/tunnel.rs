//! `Teleporter::Tunnel`: a queue of Ruby objects in shared memory between processes (and
//! between VMs of one process).
//!
//! Invariants:
//! - A Tunnel object holds an `Rc<Handle>`: the mapping and the process slot this process
//!   uses in it. A slot is taken at the first operation of each process (a forked child
//!   takes its own; the parent's slot is never touched by the child) and given back when
//!   the last Tunnel object of the mapping is collected in the process that took it.
//! - `send` copies: immediates (Integer fixnums, Float, nil, true, false, short ASCII
//!   Symbols) go into the ring entry as they are, anything else through `format::dump`
//!   into the Tunnel's reused buffer, then into the entry (up to 56 bytes) or a heap block.
//!   `recv` decodes from the entry or straight from the block, which it holds (and nobody
//!   else writes) until the decode ends, and then frees.
//! - Blocking: an operation that must wait leaves the giant lock, spins briefly and sleeps
//!   on the segment's futex in slices of at most `SLICE`, taking interrupts (Thread#raise,
//!   kill, signals) between slices; a non-blocking fiber waits through its scheduler's
//!   `kernel_sleep` instead, polling the queue. Dead processes' slots are reclaimed at
//!   least every `RECLAIM_EVERY` of waiting, so memory a crashed process held comes back.
//! - A send that needs a heap block waits (up to `FLOW_GRACE`) while the queue's blocks
//!   reach the flow limit and another process receives them (`hold_back`).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use super::alloc::BLOCK_HEADER;
use super::queue::{Entry, PopError, PushError, INLINE_MAX};
use super::segment::{OpenError, Segment};
use super::{format, shared, shm};
use crate::core::{float, hash, module, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::{sched, Ctx};
use crate::value::Value;
use crate::Result;

/// Capacity of a tunnel when `capacity:` is not given.
pub const DEFAULT_CAPACITY: usize = 32 << 20;
/// The longest a blocked operation sleeps before it looks at interrupts again.
const SLICE: Duration = Duration::from_millis(50);
/// How often a blocked operation reclaims the slots of dead processes.
const RECLAIM_EVERY: Duration = Duration::from_millis(500);
/// The longest a send is held back by the flow limit (`queue::Segment::held_back`): a
/// receiver that does not bring the queue below it in that time is not keeping up anyway,
/// or has stopped receiving.
const FLOW_GRACE: Duration = Duration::from_millis(20);

// Entry kinds.
const K_NIL: u32 = 1;
const K_TRUE: u32 = 2;
const K_FALSE: u32 = 3;
const K_FIXNUM: u32 = 4;
const K_FLOAT: u32 = 5;
const K_SYMBOL: u32 = 6;
/// A copy-format dump (inline or in a block).
const K_DUMP: u32 = 7;
/// A shared object (`share_send`): a block holding its graph's image; the record's offset
/// in the entry's data after the block offset.
const K_SHARE: u32 = 8;
/// A moved object (`move_send`), as K_SHARE.
const K_MOVE: u32 = 9;

/// One mapping of a tunnel's segment in this process.
pub struct Handle {
    pub(crate) seg: Segment,
    /// The POSIX name of a named tunnel.
    pub(super) name: Option<String>,
    /// (pid, slot) of the slot this process took, if it took one.
    attached: Cell<Option<(u32, usize)>>,
    /// How long a receiver spins before sleeping (µs): `adaptive_wait` keeps it near twice
    /// the time recent messages took to arrive, up to `queue::SPIN`.
    spin_us: Cell<u32>,
    /// Waits in a row that spinning could not have caught.
    spin_misses: Cell<u32>,
    /// How long the last wait for an entry took (µs), spun or slept.
    last_wait_us: Cell<u32>,
    /// Shared-object blocks this process holds, with the number of its `shared::Root`s
    /// holding each (the last one dropped releases the process's bit).
    pub(crate) holds: std::cell::RefCell<shared::Holds>,
    /// The frozen root of each block this process received with a share, while the root
    /// lives: a block shared back and forth (a ping-pong) is received into that root
    /// again instead of a new one (`shared::receive`).
    pub(crate) frozen_roots: std::cell::RefCell<shared::FrozenRoots>,
    /// This process's pid, without a system call per operation (right after fork too).
    pub(crate) mark: shm::ProcessMark,
    /// SharedString, SharedArray and SharedHash of this VM once looked up (`shared::wrap`).
    pub(crate) classes: Cell<Option<[Value; 3]>>,
    /// When a failed allocation of this process last looked for dead processes' memory.
    last_failed_reclaim: Cell<Option<Instant>>,
    /// The receive count (`Segment::received`) at which a send held back by the flow limit
    /// last waited `FLOW_GRACE` without anybody receiving: sends are not held back again
    /// until somebody does.
    flow_stalled_at: Cell<Option<u64>>,
    /// Bytes of blocks received as shared objects since this process last collected for
    /// the tunnel's sake (`shared::account`).
    pub(crate) received_since_gc: Cell<usize>,
    /// Bytes of the blocks in `holds`.
    pub(crate) held_bytes: Cell<usize>,
}

impl Drop for Handle {
    fn drop(&mut self) {
        if let Some((pid, slot)) = self.attached.get() {
            if pid == self.mark.pid() {
                self.seg.detach(slot);
            }
        }
    }
}

/// After a run of misses, one wait in this many spins the whole `queue::SPIN` again.
const PROBE_EVERY: u32 = 8;

impl Handle {
    /// Waits up to `slice` for an entry (for slot `me`), spinning first for as long as
    /// spinning has lately paid. The spin follows how long messages take to arrive: a wait
    /// caught by the spin sets it to at least twice the time it took (a peer that answers
    /// in 50 µs keeps being caught instead of paying a futex wake-up every time); a wait the
    /// spin did not catch halves it (a slow or descheduled peer is not delayed by a waiter
    /// burning a core). Halving alone would be a ratchet: one preemption of the peer and the
    /// spin decays to nothing, after which every wait sleeps. So after a run of misses one
    /// wait in `PROBE_EVERY` probes with a longer spin again: twice the last wait, the time
    /// the peer took to answer (up to `queue::SPIN`), so a probe costs little when the
    /// peer answers quickly from this core, and catches it when it runs on another.
    ///
    /// When the last sender ran on this thread's CPU, the wait sleeps at once and leaves the
    /// spin as it was: spinning would only keep that peer off the core. A message the spin
    /// caught from a sender on this CPU (one the hint could not foresee: this process sent
    /// last) counts as a miss: it came only once the spin yielded the core, and crediting
    /// it would keep the spin long exactly when it delays the peer.
    fn adaptive_wait(&self, me: usize, slice: Duration) {
        if self.seg.sender_shares_cpu(me) {
            self.seg.wait_for_entry(slice, Duration::ZERO);
            return;
        }
        let max = super::queue::SPIN.as_micros() as u32;
        let (spin, misses) = (self.spin_us.get(), self.spin_misses.get());
        let probe = self.last_wait_us.get().saturating_mul(2).saturating_add(2).min(max);
        let limit = if misses % PROBE_EVERY == PROBE_EVERY - 1 { spin.max(probe) } else { spin };
        let start = Instant::now();
        let caught = self.seg.wait_for_entry(slice, Duration::from_micros(limit as u64));
        let took = start.elapsed().as_micros().min(u32::MAX as u128) as u32;
        self.last_wait_us.set(took);
        // A message caught from a sender on this CPU came only once the spin yielded the
        // core to it: spinning delayed it, so that counts as a miss.
        if caught && !self.seg.sender_shares_cpu(me) {
            self.spin_us.set(spin.max(took.saturating_mul(2).saturating_add(2)).min(max));
            self.spin_misses.set(0);
        } else {
            self.spin_us.set(spin / 2);
            self.spin_misses.set(misses.wrapping_add(1));
        }
    }
}

pub struct TunnelData {
    handle: Rc<Handle>,
    /// The dump buffer `send` reuses.
    buf: Vec<u8>,
}
crate::data_obj!(TunnelData);

fn error_class(ctx: &mut Ctx) -> Value {
    super::error_class(ctx)
}

fn tp_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    let c = error_class(ctx);
    ctx.raise(c, msg)
}

/// `Teleporter::ClosedError` (a StopIteration, as ClosedQueueError is: `loop { t.recv }`
/// ends when the tunnel is closed and drained).
fn closed_error(ctx: &mut Ctx) -> Unwind {
    let m = super::teleporter_module(ctx);
    let c = match crate::stdlib::const_of(ctx, m, "ClosedError") {
        Some(c) => c,
        None => ctx.c().stop_iteration,
    };
    ctx.raise(c, "tunnel closed")
}

pub(super) fn handle(ctx: &mut Ctx, v: Value) -> Result<Rc<Handle>> {
    match data_ref::<TunnelData>(v) {
        Some(d) => Ok(d.handle.clone()),
        None => {
            let name = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {name} (expected Teleporter::Tunnel)")))
        }
    }
}

impl Handle {
    /// Whether a failed allocation should look for memory of dead processes now: at most
    /// once per `SLICE` in each process. Looking reads `/proc/PID/stat` of every process
    /// of the tunnel; when replies fill the heap, every send of every worker fails once
    /// before it waits, and those reads were 5-7% of the cycles of 16 workers.
    fn failed_reclaim_due(&self) -> bool {
        let now = Instant::now();
        if self.last_failed_reclaim.get().is_some_and(|t| now.duration_since(t) < SLICE) {
            return false;
        }
        self.last_failed_reclaim.set(Some(now));
        true
    }

    /// This process's slot, taken at its first use.
    fn slot(&self, ctx: &mut Ctx) -> Result<usize> {
        let pid = self.mark.pid();
        if let Some((p, s)) = self.attached.get() {
            if p == pid {
                return Ok(s);
            }
        }
        match self.seg.attach() {
            Some(s) => {
                self.attached.set(Some((pid, s)));
                Ok(s)
            }
            None => Err(tp_error(ctx, &format!("too many processes use this tunnel (at most {})", super::segment::MAX_PROCS))),
        }
    }
}

fn open_error(ctx: &mut Ctx, e: OpenError, what: &str) -> Unwind {
    match e {
        OpenError::Io(e) => {
            let code = e.raw_os_error().unwrap_or(libc::EIO);
            crate::core::process::errno_error(ctx, code, what)
        }
        OpenError::BadSize => ctx.arg_error(&format!("capacity must be between {} and {} bytes (and slots between 2 and 1048576)", super::segment::MIN_CAPACITY, super::segment::MAX_CAPACITY)),
        OpenError::NotATunnel => tp_error(ctx, &format!("{what} is not a tunnel (or its creator died before setting it up)")),
        OpenError::Lock(code) => crate::core::process::errno_error(ctx, code, "pthread_mutex_init"),
    }
}

/// The `capacity:` and `slots:` keywords.
fn size_args(ctx: &mut Ctx, args: &Args) -> Result<(usize, Option<usize>)> {
    crate::core::numeric::check_keywords(ctx, args, &["capacity", "slots"])?;
    let mut capacity = DEFAULT_CAPACITY;
    if let Some(v) = args.kwarg(ctx, "capacity").filter(|v| !v.is_nil()) {
        let n = crate::core::integer::to_i64_arg(ctx, v)?;
        capacity = usize::try_from(n).unwrap_or(0);
    }
    let mut slots = None;
    if let Some(v) = args.kwarg(ctx, "slots").filter(|v| !v.is_nil()) {
        let n = crate::core::integer::to_i64_arg(ctx, v)?;
        slots = Some(usize::try_from(n).unwrap_or(0));
    }
    Ok((capacity, slots))
}

pub(super) fn wrap(ctx: &mut Ctx, klass: Value, seg: Segment, name: Option<String>) -> Value {
    let handle = Rc::new(Handle {
        seg,
        name,
        attached: Cell::new(None),
        spin_us: Cell::new(super::queue::SPIN.as_micros() as u32),
        spin_misses: Cell::new(0),
        last_wait_us: Cell::new(0),
        holds: Default::default(),
        frozen_roots: Default::default(),
        mark: shm::ProcessMark::new(),
        classes: Cell::new(None),
        last_failed_reclaim: Cell::new(None),
        flow_stalled_at: Cell::new(None),
        received_since_gc: Cell::new(0),
        held_bytes: Cell::new(0),
    });
    object::new_data(ctx, klass, Box::new(TunnelData { handle, buf: Vec::new() }))
}

/// `Tunnel.new(capacity: 32 MiB, slots: nil)`: an anonymous tunnel, shared with the
/// children forked after it.
fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (capacity, slots) = size_args(ctx, args)?;
    let seg = Segment::anonymous(capacity, slots).map_err(|e| open_error(ctx, e, "mmap"))?;
    Ok(wrap(ctx, recv, seg, None))
}

fn name_arg(ctx: &mut Ctx, v: Value) -> Result<String> {
    let Some(s) = string::try_to_str(ctx, v)? else {
        let name = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("no implicit conversion of {name} into String")));
    };
    let bytes = string::bytes(s);
    match std::str::from_utf8(bytes) {
        Ok(n) if shm::shm_name(n).is_ok() => Ok(n.to_string()),
        _ => {
            let shown = object::inspect_string(ctx, s)?;
            Err(ctx.arg_error(&format!("invalid tunnel name {shown} (no '/' or NUL, 1 to 250 bytes)")))
        }
    }
}

/// `Tunnel.open(name, capacity: 32 MiB, slots: nil)`: the named tunnel `name`, created (mode
/// 0600) if it does not exist; an existing one keeps the size its creator gave it.
fn s_open(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = name_arg(ctx, args.pos[0])?;
    let (capacity, slots) = size_args(ctx, args)?;
    let (seg, _) = Segment::named(&name, capacity, slots).map_err(|e| open_error(ctx, e, &name))?;
    Ok(wrap(ctx, recv, seg, Some(name)))
}

fn unlink_name(ctx: &mut Ctx, name: &str) -> Result<Value> {
    match shm::unlink(name) {
        Ok(()) => Ok(Value::NIL),
        Err(e) => Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EIO), name)),
    }
}

/// `Tunnel.unlink(name)`: removes the name (as File.unlink: Errno::ENOENT if there is
/// none); processes that have the tunnel open keep using it.
fn s_unlink(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let name = name_arg(ctx, args.pos[0])?;
    unlink_name(ctx, &name)
}

/// `Tunnel#unlink`: removes this tunnel's name.
fn t_unlink(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = handle(ctx, recv)?;
    match &h.name {
        Some(n) => unlink_name(ctx, n),
        None => Err(tp_error(ctx, "an anonymous tunnel has no name to unlink")),
    }
}

fn t_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = handle(ctx, recv)?;
    Ok(match &h.name {
        Some(n) => string::new_utf8(ctx, n),
        None => Value::NIL,
    })
}

fn t_capacity(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = handle(ctx, recv)?;
    Ok(Value::fixnum(h.seg.len() as i64))
}

/// The ring entry for `v`: immediates as they are, anything else as a dump in `buf`
/// (None: the caller stores `buf`).
fn immediate_entry(ctx: &Ctx, v: Value) -> Option<Entry> {
    if let Some(i) = v.as_fixnum() {
        return Some(Entry::inline(K_FIXNUM, &i.to_ne_bytes()));
    }
    if v.is_nil() {
        return Some(Entry::new(K_NIL));
    }
    if v == Value::TRUE {
        return Some(Entry::new(K_TRUE));
    }
    if v == Value::FALSE {
        return Some(Entry::new(K_FALSE));
    }
    if v.is_flonum() {
        return Some(Entry::inline(K_FLOAT, &v.flonum_unchecked().to_bits().to_ne_bytes()));
    }
    if float::is_float(v) {
        return Some(Entry::inline(K_FLOAT, &float::get(v).to_bits().to_ne_bytes()));
    }
    if let Some(id) = v.as_symbol() {
        let name = ctx.sym_name(id);
        if name.len() <= INLINE_MAX && name.is_ascii() {
            return Some(Entry::inline(K_SYMBOL, &name));
        }
    }
    None
}

/// The outcome of one attempt of a blocking operation.
enum Attempt<T> {
    Done(T),
    /// Not now: wait for the receivers' word (an entry) or the senders' (room, seen at
    /// the given value of the word).
    WaitEntry,
    WaitRoom(u32),
    /// Held back by the flow limit until a receive, at most until the given time.
    WaitFlow(Instant),
}

/// Runs `attempt` until it is done or `deadline` passes (None then), waiting between
/// attempts without the giant lock (or through the fiber scheduler) and taking interrupts.
fn blocking<T>(ctx: &mut Ctx, h: &Rc<Handle>, me: usize, deadline: Option<Instant>, mut attempt: impl FnMut(&mut Ctx) -> Result<Attempt<T>>) -> Result<Option<T>> {
    let wait = match attempt(ctx)? {
        Attempt::Done(v) => return Ok(Some(v)),
        w => w,
    };
    wait_and_retry(ctx, h, me, deadline, wait, attempt)
}

/// The waiting part of `blocking`, after a first attempt that must wait (`wait`).
fn wait_and_retry<T>(ctx: &mut Ctx, h: &Rc<Handle>, me: usize, deadline: Option<Instant>, mut wait: Attempt<T>, mut attempt: impl FnMut(&mut Ctx) -> Result<Attempt<T>>) -> Result<Option<T>> {
    let mut last_reclaim = Instant::now();
    let mut backoff = Duration::from_micros(100);
    loop {
        let waited_for_room = matches!(wait, Attempt::WaitRoom(_));
        let now = Instant::now();
        let slice = match deadline {
            Some(d) if now >= d => return Ok(None),
            Some(d) => (d - now).min(SLICE),
            None => SLICE,
        };
        if let Some(s) = crate::fiber::scheduler::active(ctx) {
            let secs = float::new(ctx, backoff.min(slice).as_secs_f64());
            crate::fiber::scheduler::kernel_sleep(ctx, s, &[secs])?;
            backoff = (backoff * 2).min(Duration::from_millis(10));
        } else {
            let hh = h.clone();
            sched::without_gl(ctx, move || match wait {
                Attempt::WaitRoom(seq) => hh.seg.wait_for_room(me, seq, slice),
                Attempt::WaitFlow(until) => hh.seg.wait_for_flow(me, until.saturating_duration_since(now).min(slice)),
                _ => hh.adaptive_wait(me, slice),
            });
        }
        sched::poll_interrupts(ctx)?;
        if last_reclaim.elapsed() >= RECLAIM_EVERY {
            h.seg.reclaim_dead(Some(me));
            last_reclaim = Instant::now();
        }
        wait = match attempt(ctx)? {
            Attempt::Done(v) => {
                if waited_for_room {
                    h.seg.pass_room();
                }
                return Ok(Some(v));
            }
            w => w,
        };
    }
}

/// A heap block of `len` bytes for slot `me`, waiting (until `deadline`) for receivers to
/// free memory while messages are queued. None after the deadline.
fn alloc_block(ctx: &mut Ctx, h: &Rc<Handle>, me: usize, len: usize, deadline: Option<Instant>) -> Result<Option<usize>> {
    if len.saturating_add(BLOCK_HEADER) > h.seg.heap_len() || len > u32::MAX as usize {
        let cap = h.seg.len();
        return Err(tp_error(ctx, &format!("message of {len} bytes does not fit in the tunnel (capacity {cap} bytes)")));
    }
    let mut reclaimed = false;
    let mut held = None;
    blocking(ctx, h, me, deadline, |ctx| {
        if let Some(until) = hold_back(h, me, deadline, &mut held) {
            return Ok(Attempt::WaitFlow(until));
        }
        let seq = h.seg.send_seq();
        if let Some(off) = h.seg.alloc(me, len) {
            return Ok(Attempt::Done(off));
        }
        if !reclaimed {
            reclaimed = true;
            if h.failed_reclaim_due() && h.seg.reclaim_dead(Some(me)) > 0 {
                return Ok(Attempt::WaitRoom(seq.wrapping_sub(1)));
            }
        }
        if h.seg.is_closed() {
            return Err(closed_error(ctx));
        }
        if h.seg.queued() == 0 {
            let st = h.seg.heap_stats();
            return Err(tp_error(ctx, &format!("tunnel memory exhausted: {len} bytes wanted, {} bytes in use by {} blocks", st.used_bytes, st.used_blocks)));
        }
        Ok(Attempt::WaitRoom(seq))
    })
}

/// Whether a send of slot `me` waits for a receive before it takes a block (the flow limit,
/// `queue::Segment::held_back`): until when, from the first time it was held back
/// (`held`: that time and the receive count then). A send held back for `FLOW_GRACE`
/// goes on; if nobody received meanwhile, the process's sends are not held back again
/// until somebody does, so a process that sends to itself, or whose receivers stopped,
/// waits once and not at every send. A send with a timeout is not held back: the flow
/// limit is no reason for it to fail.
fn hold_back(h: &Handle, me: usize, deadline: Option<Instant>, held: &mut Option<(Instant, u64)>) -> Option<Instant> {
    let received = h.seg.received();
    if deadline.is_some() || h.flow_stalled_at.get() == Some(received) || !h.seg.held_back(me) {
        return None;
    }
    let (since, at) = *held.get_or_insert_with(|| (Instant::now(), received));
    let until = since + FLOW_GRACE;
    if Instant::now() < until {
        return Some(until);
    }
    if received == at {
        h.flow_stalled_at.set(Some(received));
    }
    None
}

/// The `timeout:` keyword as a deadline.
fn timeout_arg(ctx: &mut Ctx, args: &Args) -> Result<Option<Instant>> {
    if args.kw.is_none() {
        return Ok(None);
    }
    crate::core::numeric::check_keywords(ctx, args, &["timeout"])?;
    let t = args.kwarg(ctx, "timeout");
    crate::core::sync::deadline_of(ctx, t)
}

/// What every send starts with: the `timeout:` deadline, the tunnel's handle, this
/// process's slot and the object; ClosedError on a closed tunnel.
fn send_start(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<(Option<Instant>, Rc<Handle>, usize, Value)> {
    let deadline = timeout_arg(ctx, args)?;
    let h = handle(ctx, recv)?;
    let me = h.slot(ctx)?;
    if h.seg.is_closed() {
        return Err(closed_error(ctx));
    }
    Ok((deadline, h, me, args.pos[0]))
}

/// `send(obj, timeout: nil)`: copies `obj` into the tunnel. Waits while the queue is full
/// (or its memory is taken by queued messages), as SizedQueue#push does; returns self, or
/// nil if the timeout passed first. Raises Teleporter::ClosedError on a closed tunnel,
/// Teleporter::Error for a message larger than the tunnel, TypeError for what cannot be
/// copied.
fn t_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (deadline, h, me, v) = send_start(ctx, recv, args)?;
    let entry = match immediate_entry(ctx, v) {
        Some(e) => e,
        None => {
            let mut buf = data_ref::<TunnelData>(recv).map(|d| std::mem::take(&mut d.buf)).unwrap_or_default();
            buf.clear();
            let dumped = format::dump(ctx, v, &mut buf);
            let e = match dumped {
                Err(e) => Err(e),
                Ok(()) if buf.len() <= INLINE_MAX => Ok(Entry::inline(K_DUMP, &buf)),
                Ok(()) => match alloc_block(ctx, &h, me, buf.len(), deadline) {
                    Ok(Some(off)) => {
                        // SAFETY: the block holds at least `buf.len()` bytes and is ours.
                        unsafe { std::ptr::copy_nonoverlapping(buf.as_ptr(), h.seg.payload(off), buf.len()) };
                        Ok(Entry::block(K_DUMP, off, buf.len()))
                    }
                    Ok(None) => {
                        restore_buf(recv, buf);
                        return Ok(Value::NIL);
                    }
                    Err(e) => Err(e),
                },
            };
            restore_buf(recv, buf);
            e?
        }
    };
    let sent = blocking(ctx, &h, me, deadline, |ctx| {
        let seq = h.seg.send_seq();
        match h.seg.push(me, &entry, false) {
            Ok(()) => Ok(Attempt::Done(())),
            Err(PushError::Full) => Ok(Attempt::WaitRoom(seq)),
            Err(PushError::Closed) => Err(closed_error(ctx)),
            Err(PushError::Lock(code)) => Err(crate::core::process::errno_error(ctx, code, "pthread_mutex_lock")),
        }
    });
    match sent {
        Ok(Some(())) => Ok(recv),
        other => {
            // Not queued: the block (if any) is still ours alone.
            if let Some(off) = entry.block_offset() {
                h.seg.release(off, 1 << me);
            }
            other.map(|_| Value::NIL)
        }
    }
}

/// Keeps the (grown) dump buffer for the next send, unless a large message made it huge.
fn restore_buf(recv: Value, mut buf: Vec<u8>) {
    if buf.capacity() > 1 << 20 {
        buf = Vec::new();
    }
    if let Some(d) = data_ref::<TunnelData>(recv) {
        d.buf = buf;
    }
}

/// The object entry `e` (taken by slot `me`) carries; a block it names is freed.
fn decode(ctx: &mut Ctx, h: &Rc<Handle>, me: usize, e: &Entry) -> Result<Value> {
    let word = || {
        let mut b = [0u8; 8];
        b.copy_from_slice(&e.data[..8]);
        b
    };
    match e.kind & !super::queue::KIND_BLOCK {
        K_NIL => Ok(Value::NIL),
        K_TRUE => Ok(Value::TRUE),
        K_FALSE => Ok(Value::FALSE),
        K_FIXNUM => Ok(Value::fixnum(i64::from_ne_bytes(word()))),
        K_FLOAT => Ok(float::new(ctx, f64::from_bits(u64::from_ne_bytes(word())))),
        K_SYMBOL => Ok(Value::symbol(ctx.intern_bytes(e.inline_bytes()))),
        K_DUMP => match e.block_offset() {
            None => {
                let bytes = e.inline_bytes().to_vec();
                format::load(ctx, &bytes)
            }
            Some(off) => {
                let len = e.len as usize;
                let r = if len <= h.seg.block_capacity(off) {
                    // SAFETY: the block is ours until released below and holds `len`
                    // bytes; no process writes a block it does not hold.
                    let bytes = unsafe { std::slice::from_raw_parts(h.seg.payload(off), len) };
                    format::load(ctx, bytes)
                } else {
                    Err(tp_error(ctx, "corrupt tunnel entry (length past its block)"))
                };
                h.seg.release(off, 1 << me);
                r
            }
        },
        k @ (K_SHARE | K_MOVE) => shared::receive(ctx, h, me, e, k == K_MOVE, None),
        k => {
            if let Some(off) = e.block_offset() {
                h.seg.release(off, 1 << me);
            }
            Err(tp_error(ctx, &format!("corrupt tunnel entry (kind {k})")))
        }
    }
}

fn pop_attempt(ctx: &mut Ctx, h: &Rc<Handle>, me: usize) -> Result<Attempt<Entry>> {
    match h.seg.pop(me) {
        Ok(e) => Ok(Attempt::Done(e)),
        Err(PopError::Empty) => Ok(Attempt::WaitEntry),
        Err(PopError::Closed) => Err(closed_error(ctx)),
        Err(PopError::Corrupt) => Err(tp_error(ctx, "corrupt tunnel entry (not a block of this tunnel)")),
        Err(PopError::Lock(code)) => Err(crate::core::process::errno_error(ctx, code, "pthread_mutex_lock")),
    }
}

/// `recv(timeout: nil)`: the oldest message, waiting for one; nil if the timeout passed
/// first (as Queue#pop(timeout:)). On a closed tunnel, messages still queued are
/// delivered, then Teleporter::ClosedError is raised.
fn t_recv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let deadline = timeout_arg(ctx, args)?;
    let h = handle(ctx, recv)?;
    let me = h.slot(ctx)?;
    match blocking(ctx, &h, me, deadline, |ctx| pop_attempt(ctx, &h, me))? {
        Some(e) => decode(ctx, &h, me, &e),
        None => Ok(Value::NIL),
    }
}

/// `recv_nonblock(exception: true)`: the oldest message if there is one; else raises
/// Teleporter::EmptyError (or returns `:wait_readable` with `exception: false`, as
/// IO#read_nonblock does). Teleporter::ClosedError once closed and drained.
fn t_recv_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    crate::core::numeric::check_keywords(ctx, args, &["exception"])?;
    let raise = crate::core::convert::exception_kw(ctx, args)?;
    let h = handle(ctx, recv)?;
    let me = h.slot(ctx)?;
    match pop_attempt(ctx, &h, me)? {
        Attempt::Done(e) => decode(ctx, &h, me, &e),
        _ if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        _ => {
            let m = super::teleporter_module(ctx);
            let c = crate::stdlib::const_of(ctx, m, "EmptyError").unwrap_or_else(|| error_class(ctx));
            Err(ctx.raise(c, "tunnel empty"))
        }
    }
}

/// `close`: no more sends (they raise Teleporter::ClosedError); receivers get what is
/// queued, then ClosedError. Wakes every waiting process. Returns self.
fn t_close(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    handle(ctx, recv)?.seg.close();
    Ok(recv)
}

fn t_closed_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(handle(ctx, recv)?.seg.is_closed()))
}

/// `size` / `length`: messages queued now.
fn t_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(handle(ctx, recv)?.seg.queued() as i64))
}

fn t_empty_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(handle(ctx, recv)?.seg.queued() == 0))
}

/// `reclaim`: releases what processes that are gone still held (their slots, blocks and
/// pages); the number of processes reclaimed. Blocked operations do it on their own.
fn t_reclaim(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = handle(ctx, recv)?;
    let mine = h.attached.get().filter(|&(p, _)| p == h.mark.pid()).map(|(_, s)| s);
    Ok(Value::fixnum(h.seg.reclaim_dead(mine) as i64))
}

/// `stats`: a Hash describing the segment now (:capacity, :slots, :queued, :processes,
/// :used_blocks, :used_bytes, :free_pages, :orphan_pages, :pages, :reclaimed).
fn t_stats(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = handle(ctx, recv)?;
    let st = h.seg.heap_stats();
    let reclaimed = h.seg.header().recovery.reclaimed.load(std::sync::atomic::Ordering::Relaxed) as usize;
    let pairs: [(&str, usize); 10] = [
        ("capacity", h.seg.len()),
        ("slots", h.seg.ring_slots()),
        ("queued", h.seg.queued()),
        ("processes", h.seg.attached()),
        ("used_blocks", st.used_blocks),
        ("used_bytes", st.used_bytes),
        ("free_pages", st.free_pages),
        ("orphan_pages", st.orphan_pages),
        ("pages", h.seg.page_count()),
        ("reclaimed", reclaimed),
    ];
    let out = hash::new(ctx);
    for (k, n) in pairs {
        let key = Value::symbol(ctx.intern(k));
        hash::aset(ctx, out, key, Value::fixnum(n as i64))?;
    }
    Ok(out)
}

/// `initialize_copy`: a dup shares the mapping (and this process's slot).
fn t_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = handle(ctx, args.pos[0])?;
    crate::object::set_data(recv, Box::new(TunnelData { handle: h, buf: Vec::new() }));
    Ok(recv)
}

fn t_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = handle(ctx, recv)?;
    let cname = object::class_name_of(ctx, recv);
    let what = match &h.name {
        Some(n) => format!("{n:?}"),
        None => "anonymous".to_string(),
    };
    let closed = if h.seg.is_closed() { " closed" } else { "" };
    let s = format!("#<{cname} {what} capacity={} queued={}{closed}>", h.seg.len(), h.seg.queued());
    Ok(string::new_utf8(ctx, &s))
}

/// Queues `entry` (for slot `me`; `keep`: the sender keeps its hold on the entry's block),
/// waiting for room until `deadline`: None if it passed first.
fn push_waiting(ctx: &mut Ctx, h: &Rc<Handle>, me: usize, entry: &Entry, keep: bool, deadline: Option<Instant>) -> Result<Option<()>> {
    blocking(ctx, h, me, deadline, |ctx| {
        let seq = h.seg.send_seq();
        match h.seg.push(me, entry, keep) {
            Ok(()) => Ok(Attempt::Done(())),
            Err(PushError::Full) => Ok(Attempt::WaitRoom(seq)),
            Err(PushError::Closed) => Err(closed_error(ctx)),
            Err(PushError::Lock(code)) => Err(crate::core::process::errno_error(ctx, code, "pthread_mutex_lock")),
        }
    })
}

/// `share_send(obj, timeout: nil)` and `move_send(obj, timeout: nil)`: pass `obj` without
/// copying it (a plain object is converted into a shared graph once). Sharing freezes the
/// graph for every process (the sender's wrappers included); moving gives it away (the
/// sender's wrappers raise Teleporter::MovedError from then on). Immediates travel as
/// with `send`. Returns self, or nil if the timeout passed first.
fn shared_send(ctx: &mut Ctx, recv: Value, args: &Args, mode: shared::Mode) -> Result<Value> {
    let (deadline, h, me, v) = send_start(ctx, recv, args)?;
    if let Some(e) = immediate_entry(ctx, v) {
        return Ok(push_waiting(ctx, &h, me, &e, false, deadline)?.map_or(Value::NIL, |_| recv));
    }
    let (root, rec, plain) = match shared::shared_obj(v) {
        Some(w) => (w.root.clone(), w.rec, false),
        None => {
            let (root, rec) = shared::convert(ctx, v)?;
            (root, rec, true)
        }
    };
    root.check(ctx, v)?;
    let owned = root.state.get() == shared::State::Owned;
    // A frozen plain object (an Integer, a Rational, a Range, a Data, a frozen String …)
    // moves like any plain object: the conversion is the receiver's new graph, and the
    // sender's object, private memory, stays as it was.
    if mode == shared::Mode::Move && (!owned || (!plain && object::is_frozen(v))) {
        let name = object::class_name_of(ctx, v);
        return Err(tp_error(ctx, &format!("can't move a frozen {name} (a shared object is read-only everywhere; dup it for a writable copy)")));
    }
    let Some(off) = shared::place(ctx, &root, &h, me, &mut |ctx, len| alloc_block(ctx, &h, me, len, deadline))? else {
        return Ok(Value::NIL);
    };
    let img = root.img().ok_or_else(|| shared::corrupt(ctx))?;
    let entry = shared::entry_for(if mode == shared::Mode::Move { K_MOVE } else { K_SHARE }, off, img.used(), rec);
    if mode == shared::Mode::Share {
        if owned {
            img.set_frozen();
            root.state.set(shared::State::Frozen);
        }
        let sent = push_waiting(ctx, &h, me, &entry, true, deadline);
        if owned && !matches!(sent, Ok(Some(()))) {
            // Nobody received it: the graph is still this process's alone.
            img.clear_frozen();
            root.state.set(shared::State::Owned);
        }
        return Ok(sent?.map_or(Value::NIL, |_| recv));
    }
    if h.holds.borrow().get(&off).copied() != Some(1) {
        let name = object::class_name_of(ctx, v);
        return Err(tp_error(ctx, &format!("can't move this {name}: other objects of this process hold its graph")));
    }
    match push_waiting(ctx, &h, me, &entry, false, deadline)? {
        Some(()) => {
            // The ring took this process's hold: the root gives the block up unreleased.
            shared::give_up(&h, off);
            *root.store.borrow_mut() = shared::Store::Gone;
            root.state.set(shared::State::Moved);
            Ok(recv)
        }
        None => Ok(Value::NIL),
    }
}

fn t_share_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    shared_send(ctx, recv, args, shared::Mode::Share)
}

fn t_move_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    shared_send(ctx, recv, args, shared::Mode::Move)
}

/// `share_recv(timeout: nil)` / `move_recv(timeout: nil)`: the oldest message, a shared
/// object read in place: frozen from `share_recv`, writable from `move_recv` (which raises
/// Teleporter::Error for a message sent with `share_send`). Copied messages arrive as
/// copies, immediates as they are; nil if the timeout passed first.
fn shared_recv(ctx: &mut Ctx, recv: Value, args: &Args, mode: shared::Mode) -> Result<Value> {
    let deadline = timeout_arg(ctx, args)?;
    let h = handle(ctx, recv)?;
    let me = h.slot(ctx)?;
    match blocking(ctx, &h, me, deadline, |ctx| pop_attempt(ctx, &h, me))? {
        Some(e) => match e.kind & !super::queue::KIND_BLOCK {
            k @ (K_SHARE | K_MOVE) => shared::receive(ctx, &h, me, &e, k == K_MOVE, Some(mode)),
            _ => decode(ctx, &h, me, &e),
        },
        None => Ok(Value::NIL),
    }
}

fn t_share_recv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    shared_recv(ctx, recv, args, shared::Mode::Share)
}

fn t_move_recv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    shared_recv(ctx, recv, args, shared::Mode::Move)
}

/// Defines Teleporter::Tunnel, Teleporter::ClosedError and Teleporter::EmptyError.
pub fn init(ctx: &mut Ctx) -> Result<()> {
    let m = super::teleporter_module(ctx);
    let err = error_class(ctx);
    let stop = ctx.c().stop_iteration;
    crate::core::module_methods::define_class_under(ctx, m, "ClosedError", stop);
    crate::core::module_methods::define_class_under(ctx, m, "EmptyError", err);
    let obj = ctx.c().object;
    let k = crate::core::module_methods::define_class_under(ctx, m, "Tunnel", obj);
    module::body(k).alloc = module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, k, [
        ("new", s_new, [0], Unsafe, Singleton, Kw),
        ("open", s_open, [1], Unsafe, Singleton, Kw),
        ("unlink", s_unlink, [1], Unsafe, Singleton),
        ("initialize_copy", t_initialize_copy, [1], Unsafe, Private),
        ("send", t_send, [1], Unsafe, Kw),
        ("<<", t_send, [1], Unsafe),
        ("recv", t_recv, [0], Unsafe, Kw),
        ("recv_nonblock", t_recv_nonblock, [0], Unsafe, Kw),
        ("share_send", t_share_send, [1], Unsafe, Kw),
        ("move_send", t_move_send, [1], Unsafe, Kw),
        ("share_recv", t_share_recv, [0], Unsafe, Kw),
        ("move_recv", t_move_recv, [0], Unsafe, Kw),
        ("close", t_close, [0], Unsafe),
        ("closed?", t_closed_p, [0], Unsafe),
        ("size", t_size, [0], Unsafe),
        ("length", t_size, [0], Unsafe),
        ("empty?", t_empty_p, [0], Unsafe),
        ("name", t_name, [0], Unsafe),
        ("capacity", t_capacity, [0], Unsafe),
        ("unlink", t_unlink, [0], Unsafe),
        ("reclaim", t_reclaim, [0], Unsafe),
        ("stats", t_stats, [0], Unsafe),
        ("inspect", t_inspect, [0], Unsafe),
    ]);
    Ok(())
}
