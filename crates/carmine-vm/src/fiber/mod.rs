//! Fibers (seed 000): each fiber runs on its own native stack and has its own VM stacks;
//! switching is a few instructions of assembly plus swapping the per-fiber fields of `Ctx`.
//!
//! Invariants:
//! - Fibers never migrate between threads; a `FiberData` records its thread's `Ctx`.
//! - The running fiber's state (VM stacks, protected values, catch tags, `$!`, recursion
//!   guards, native stack bounds) lives in `Ctx`; every other fiber's lives in its
//!   `FiberData::saved`. Whoever switches swaps both sides before the native switch, so a
//!   fiber always wakes up with its own state loaded.
//! - A fiber suspended *inside* a Rust call chain (deep: `Fiber.yield` from a block called by
//!   a builtin, or a fiber waiting in `resume`) keeps its native stack, and `sp` is its saved
//!   stack pointer; the collector scans that stack conservatively from `sp`.
//! - A fiber whose `Fiber.yield` is called straight from its own single dispatch loop
//!   (shallow) has nothing on its native stack worth keeping: the builtin returns
//!   `Unwind::Suspend`, the loop returns without popping frames, and the fiber leaves its
//!   native stack to the pool. Resuming it starts a fresh entry on any pooled stack that
//!   pushes the resume value (or raises) where the call's result goes and re-enters the
//!   loop. This is what lets a million suspended fibers fit in memory: they hold VM stacks
//!   (a touched page or so, carved from shared chunk mappings) but no native stacks.
//! - A shallowly suspended fiber resumed from Ruby code runs *borrowed*: its top frame runs
//!   on the resumer's native stack, in the resumer's `Fiber#resume` call, with its VM state
//!   swapped into `Ctx`, as long as its instructions cannot allocate, raise, run Ruby code
//!   from Rust or switch (`interp::borrowed`). At the first instruction that could, it stops
//!   before executing it and continues on a native stack of its own (`continue_run`), and
//!   is `promoted`: its own-loop yields keep that stack from then on.
//! - Native stacks come from a per-thread pool, are taken at the first resume (not at
//!   `Fiber.new`) and go back when the fiber ends or suspends shallowly. A fiber that leaves
//!   its stack for good cannot free it while running on it, so it parks it in
//!   `ThreadFibers::release` and whoever runs next returns it to the pool.
//! - A message (`Xfer`) travels with every switch: the values of resume/yield/transfer, an
//!   exception to raise, or the final result of a fiber that ended.

pub mod scheduler;
pub mod stack;
pub mod switch;

use std::any::Any;
use std::sync::Arc;

use crate::core::{array, hash};
use crate::error::Unwind;
use crate::heap::Marker;
use crate::interp::frame::Block;
use crate::thread::{Ctx, Stacks};
use crate::value::Value;
use crate::Result;
use stack::{NativeStack, NativeStackPool, ValueStackPool};

/// Usable native stack of a fiber (address space; pages are committed as they are touched).
pub const NATIVE_STACK_SIZE: usize = 1 << 20;
/// Native stack kept free below a fiber's limit for Rust code without its own depth check.
const NATIVE_RESERVE: usize = 192 * 1024;
/// Value stack slots of a fiber.
pub const VALUE_STACK_SLOTS: usize = 64 * 1024;
/// Suspended fibers keep their native stacks (the fastest switch) until this many stacks are
/// in use; beyond it, fibers that can suspend shallowly give theirs back.
const KEEP_NATIVE_STACKS: usize = 256;
/// Yields from a fiber's own loop that keep its native stack before it starts suspending
/// shallowly (for borrowed runs; see `FiberData::own_yields`).
const DEEP_OWN_YIELDS: u8 = 2;
/// Execution states of finished fibers kept for reuse.
const SPARE_STATES: usize = 64;
/// Frames a fiber may nest before `SystemStackError`.
pub const MAX_FRAMES: usize = 20_000;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum State {
    /// Made by `Fiber.new`, never resumed.
    Created,
    /// Running, or waiting in `resume` for a fiber it resumed.
    Resumed,
    /// Waiting in `Fiber.yield` or `transfer`.
    Suspended,
    Terminated,
}

/// What a fiber runs.
pub enum Body {
    /// The thread's original execution, on the thread's native stack: (lowest address,
    /// highest address, overflow limit). Boxed to keep the payload small (one per thread).
    Root(Box<(usize, usize, usize)>),
    /// `Fiber.new { … }`.
    Proc(Value),
    /// A Rust function of one value (e.g. the iteration behind `Enumerator#next`).
    Native(fn(&mut Ctx, Value) -> Result<Value>, Value),
}

/// A message handed over with a switch.
pub enum Xfer {
    None,
    /// The values of `resume`/`yield`/`transfer` (already packed: nil, one value or an Array).
    Value(Value),
    /// Raise this in the fiber switched to (`Fiber#raise`).
    Raise(Value),
    /// Unwind the fiber switched to, running its `ensure` clauses (`Fiber#kill`).
    Kill,
    /// The fiber that switched here has ended with this result.
    Done(Result<Value>),
    /// The fiber that switched here panicked (a Carmine bug); re-raised as a panic here.
    Panic(Box<dyn Any + Send>),
}

impl Xfer {
    fn mark(&self, m: &mut Marker<'_>) {
        match self {
            Xfer::Value(v) | Xfer::Raise(v) => m.mark(*v),
            Xfer::Done(r) => mark_result(r, m),
            Xfer::None | Xfer::Kill | Xfer::Panic(_) => {}
        }
    }
}

fn mark_result(r: &Result<Value>, m: &mut Marker<'_>) {
    match r {
        Ok(v) => m.mark(*v),
        Err(e) => mark_unwind(e, m),
    }
}

fn mark_unwind(e: &Unwind, m: &mut Marker<'_>) {
    match e {
        Unwind::Raise(v) => m.mark(*v),
        Unwind::Break { value, .. } | Unwind::Return { value, .. } => m.mark(*value),
        Unwind::Throw { tag, value } => {
            m.mark(*tag);
            m.mark(*value);
        }
        Unwind::Exit(_) | Unwind::Suspend => {}
    }
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum MsgKind {
    None,
    Value,
    Raise,
    Kill,
    DoneOk,
    DoneErr,
    Panic,
}

/// Per-thread fiber state, kept in `Ctx`.
pub struct ThreadFibers {
    /// The root fiber's object, or nil until one is needed.
    pub root: Value,
    /// The payload of the running fiber (`ctx.fiber_obj`), or null before the root fiber's
    /// object exists.
    cur: *mut FiberData,
    /// The message of the switch in progress, split so that the common kinds travel as two
    /// plain words (a whole-enum copy right before the switch stalls on store forwarding).
    msg_kind: MsgKind,
    msg_value: Value,
    /// The rare payloads: a finished fiber's error, a panic.
    msg_unwind: Option<Unwind>,
    msg_panic: Option<Box<dyn Any + Send>>,
    /// Set by a shallow `Fiber.yield` before it unwinds its loop: where to go, with what.
    pending: Option<(Value, Xfer)>,
    /// The native stack of a fiber that left it for good, to be pooled by the next runner.
    release: Option<NativeStack>,
    natives: NativeStackPool,
    values: Option<Arc<ValueStackPool>>,
    /// Execution states of finished fibers, ready for new ones (value stack included).
    spare_states: Vec<Box<Stacks>>,
    /// Tag of the throw that unwinds a killed fiber.
    kill_tag: Value,
}

impl Default for ThreadFibers {
    fn default() -> Self {
        ThreadFibers { root: Value::NIL, cur: std::ptr::null_mut(), msg_kind: MsgKind::None, msg_value: Value::NIL, msg_unwind: None, msg_panic: None, pending: None, release: None, natives: NativeStackPool::default(), values: None, spare_states: Vec::new(), kill_tag: Value::NIL }
    }
}

impl ThreadFibers {
    pub fn mark(&self, m: &mut Marker<'_>) {
        m.mark(self.root);
        m.mark(self.kill_tag);
        m.mark(self.msg_value);
        if let Some(e) = &self.msg_unwind {
            mark_unwind(e, m);
        }
        if let Some((v, x)) = &self.pending {
            m.mark(*v);
            x.mark(m);
        }
    }

    /// Posts the message for the fiber about to run.
    #[inline(always)]
    fn post(&mut self, x: Xfer) {
        let (kind, value) = match x {
            Xfer::None => (MsgKind::None, Value::NIL),
            Xfer::Value(v) => (MsgKind::Value, v),
            Xfer::Raise(v) => (MsgKind::Raise, v),
            Xfer::Kill => (MsgKind::Kill, Value::NIL),
            Xfer::Done(Ok(v)) => (MsgKind::DoneOk, v),
            Xfer::Done(Err(e)) => {
                self.msg_unwind = Some(e);
                (MsgKind::DoneErr, Value::NIL)
            }
            Xfer::Panic(p) => {
                self.msg_panic = Some(p);
                (MsgKind::Panic, Value::NIL)
            }
        };
        self.msg_kind = kind;
        self.msg_value = value;
    }

    /// Posts a plain value (the resume/yield case), without building an `Xfer`.
    #[inline(always)]
    fn post_value(&mut self, v: Value) {
        self.msg_kind = MsgKind::Value;
        self.msg_value = v;
    }

    /// Takes the posted message.
    #[inline(always)]
    fn take(&mut self) -> Xfer {
        if self.msg_kind == MsgKind::Value {
            self.msg_kind = MsgKind::None;
            return Xfer::Value(self.msg_value);
        }
        self.take_other()
    }

    #[inline(never)]
    fn take_other(&mut self) -> Xfer {
        let v = self.msg_value;
        let kind = std::mem::replace(&mut self.msg_kind, MsgKind::None);
        match kind {
            MsgKind::None => Xfer::None,
            MsgKind::Value => Xfer::Value(v),
            MsgKind::Raise => Xfer::Raise(v),
            MsgKind::Kill => Xfer::Kill,
            MsgKind::DoneOk => Xfer::Done(Ok(v)),
            MsgKind::DoneErr => Xfer::Done(Err(self.msg_unwind.take().unwrap_or(Unwind::Exit(1)))),
            MsgKind::Panic => match self.msg_panic.take() {
                Some(p) => Xfer::Panic(p),
                None => Xfer::None,
            },
        }
    }

    #[inline(always)]
    fn release_pending(&mut self) {
        if self.release.is_none() {
            return;
        }
        if let Some(s) = self.release.take() {
            self.natives.give(s);
        }
    }
}

/// The part of `Ctx` that belongs to a fiber, kept here while another fiber runs. (Its
/// native stack bounds are not saved: they follow from its stack, see `native_bounds`.)
struct Saved {
    /// Its execution state; `None` while the fiber runs (it is `ctx.stacks` then) and
    /// before it first runs.
    stacks: Option<Box<Stacks>>,
}

impl Saved {
    fn empty() -> Saved {
        Saved { stacks: None }
    }

    fn mark(&self, m: &mut Marker<'_>) {
        if let Some(st) = &self.stacks {
            crate::gc::mark_stacks(st, m);
        }
    }
}

/// Moves the running fiber's state from `ctx` into `from` and `to`'s state into `ctx`.
/// `to.saved.stacks` must be present and `to` on a native stack (`enter` makes sure of both).
#[inline]
fn exchange(ctx: &mut Ctx, from: &mut FiberData, to: &mut FiberData) {
    let incoming = to.saved.stacks.take().unwrap_or_else(|| fatal("fiber state missing"));
    // `from` runs, so it has no saved state to drop (forgetting the `None` skips the check).
    debug_assert!(from.saved.stacks.is_none());
    std::mem::forget(from.saved.stacks.replace(std::mem::replace(&mut ctx.stacks, incoming)));
    (ctx.native_stack_lo, ctx.native_stack_hi, ctx.native_limit) = native_bounds(to);
}

/// (lowest address, highest address, overflow limit) of the native stack `d` runs on: its
/// own stack, or for the root fiber (the only one without) the thread's, recorded when the
/// root fiber was made.
#[inline]
fn native_bounds(d: &FiberData) -> (usize, usize, usize) {
    match (&d.native, &d.body) {
        (Some(n), _) => (n.lo(), n.hi(), n.lo() + NATIVE_RESERVE),
        (None, Body::Root(bounds)) => **bounds,
        (None, _) => (0, 0, 0),
    }
}

/// The payload of a Fiber object.
pub struct FiberData {
    pub state: State,
    body: Body,
    /// Arguments of the first resume, until the body starts.
    start_args: Value,
    /// The fiber that resumed this one and gets control at its yield or end; nil otherwise.
    resumer: Value,
    /// The fiber this one resumed and waits for (CRuby's `resuming_fiber`); nil otherwise.
    resuming: Value,
    /// Last entered by `transfer` (it may not be resumed, and cannot yield).
    transferred: bool,
    /// Suspended by `Fiber.yield` (not by `transfer`).
    yielding: bool,
    blocking: bool,
    /// `Fiber[]` storage: a Hash, or nil until written.
    storage: Value,
    native: Option<NativeStack>,
    /// Saved native stack pointer while suspended on its own stack (deep); 0 otherwise.
    sp: usize,
    /// Suspended by unwinding its loop: resuming restarts the loop on a fresh stack, or runs
    /// it borrowed (`interp::borrowed`) on the resumer's.
    shallow: bool,
    /// A borrowed run stopped at an instruction it does not run: the fiber continues on a
    /// native stack from there (its resume value is already pushed).
    continue_run: bool,
    /// Needed a native stack between two yields once (a borrowed run stopped): its yields
    /// from its own loop keep the native stack from then on (the fastest native switch)
    /// instead of suspending shallowly for borrowed runs.
    promoted: bool,
    /// Yields from its own loop that kept the native stack (saturating): the first
    /// `DEEP_OWN_YIELDS` do, so a fiber that yields only once or twice never pays for a
    /// shallow suspension and restart.
    own_yields: u8,
    /// `kill`ed while it was resuming another fiber: it unwinds when it runs again.
    killed: bool,
    saved: Saved,
    /// The thread's context (identity only).
    owner: usize,
}

// Small enough for the allocator's fast bins (chunks of at most 128 bytes): a fiber's
// payload is allocated and freed once per fiber, and larger chunks freed in bulk by a sweep
// go through glibc's slow consolidating path (a third of fig. 6's per-fiber cost).
const _: () = assert!(std::mem::size_of::<FiberData>() <= 120);

crate::data_obj!(FiberData, |s, m| {
    if let Body::Proc(p) | Body::Native(_, p) = s.body {
        m.mark(p);
    }
    m.mark(s.start_args);
    m.mark(s.resumer);
    m.mark(s.resuming);
    m.mark(s.storage);
    s.saved.mark(m);
    if s.sp != 0 {
        // SAFETY: a suspended stack: [sp, hi) holds its live frames and saved registers.
        unsafe { m.mark_range_conservative(s.sp, native_bounds(s).1) };
    }
});

/// The payload of a Fiber object, or `None` for other objects.
pub fn data<'a>(v: Value) -> Option<&'a mut FiberData> {
    crate::object::data_ref::<FiberData>(v)
}

fn fd<'a>(v: Value) -> &'a mut FiberData {
    data(v).expect("a Fiber object")
}

fn new_data(ctx: &Ctx, body: Body, state: State) -> FiberData {
    FiberData {
        state,
        body,
        start_args: Value::NIL,
        resumer: Value::NIL,
        resuming: Value::NIL,
        transferred: false,
        yielding: false,
        blocking: false,
        storage: Value::NIL,
        native: None,
        sp: 0,
        shallow: false,
        continue_run: false,
        promoted: false,
        killed: false,
        own_yields: 0,
        saved: Saved::empty(),
        owner: ctx.serial,
    }
}

/// A new fiber running `body`.
pub fn new_fiber(ctx: &mut Ctx, klass: Value, body: Body, blocking: bool, storage: Value) -> Value {
    let mut d = new_data(ctx, body, State::Created);
    d.blocking = blocking;
    d.storage = storage;
    crate::core::object::new_data(ctx, klass, Box::new(d))
}

/// The running fiber's object (the root fiber's object is made on first use).
pub fn current(ctx: &mut Ctx) -> Value {
    if ctx.fiber_obj.is_nil() {
        // Made while the thread runs on its own stack (no fiber has run yet).
        let root = Body::Root(Box::new((ctx.native_stack_lo, ctx.native_stack_hi, ctx.native_limit)));
        let mut d = new_data(ctx, root, State::Resumed);
        d.blocking = true;
        let f = crate::core::object::new_data(ctx, ctx.c().fiber, Box::new(d));
        ctx.fibers.root = f;
        ctx.fiber_obj = f;
        ctx.fibers.cur = fd(f);
    }
    ctx.fiber_obj
}

fn fiber_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    ctx.raise(ctx.c().fiber_error, msg)
}

/// Ruby's packing of several values into one: none → nil, one → itself, more → an Array.
pub fn pack(ctx: &mut Ctx, args: &[Value]) -> Value {
    match args {
        [] => Value::NIL,
        [v] => *v,
        _ => array::from_vec(ctx, args.to_vec()),
    }
}

fn check_thread(ctx: &mut Ctx, f: Value) -> Result<()> {
    check_owner(ctx, fd(f))
}

/// `check_thread` for a fiber whose payload the caller already has.
#[inline(always)]
fn check_owner(ctx: &mut Ctx, d: &FiberData) -> Result<()> {
    if d.owner != ctx.serial {
        return Err(fiber_error(ctx, "fiber called across threads"));
    }
    if !switch::SUPPORTED {
        return Err(ctx.not_implemented("Fiber on this CPU architecture"));
    }
    Ok(())
}

// ---- switching ----

/// Makes `d` ready to run and returns the native stack pointer to switch to: its saved one,
/// or a fresh entry on a pooled stack when it has none (created, or suspended shallowly).
#[inline(always)]
fn enter(ctx: &mut Ctx, d: &mut FiberData) -> Result<usize> {
    if d.sp != 0 {
        let sp = d.sp;
        d.sp = 0;
        return Ok(sp);
    }
    let native = match ctx.fibers.natives.take(NATIVE_STACK_SIZE) {
        Some(s) => s,
        None => return Err(fiber_error(ctx, "can't alloc machine stack to fiber: Cannot allocate memory")),
    };
    if d.saved.stacks.is_none() {
        if let Some(st) = ctx.fibers.spare_states.pop() {
            d.saved.stacks = Some(st);
        }
    }
    if d.saved.stacks.is_none() {
        let pool = ctx.fibers.values.get_or_insert_with(|| ValueStackPool::new(VALUE_STACK_SLOTS)).clone();
        let Some(vs) = pool.take() else {
            ctx.fibers.natives.give(native);
            return Err(fiber_error(ctx, "can't alloc VM stack to fiber: Cannot allocate memory"));
        };
        d.saved.stacks = Some(Box::new(Stacks::new(vs, MAX_FRAMES)));
    }
    if let Some(st) = &mut d.saved.stacks {
        st.exec_depth = 0;
    }
    let hi = native.hi();
    d.native = Some(native);
    // SAFETY: the top of a stack no context runs on.
    Ok(unsafe { switch::prepare(hi, fiber_entry, ctx as *mut Ctx as usize) })
}

/// Switches from the running fiber (whose payload is `from_d`) to `to` with `msg`; returns
/// what this fiber is handed when it runs again.
#[inline(always)]
fn switch_to(ctx: &mut Ctx, from_d: *mut FiberData, to: Value, to_d: &mut FiberData) -> Result<Value> {
    let to_sp = match enter(ctx, to_d) {
        Ok(sp) => sp,
        Err(e) => {
            // The message posted for the target is not delivered.
            let _ = ctx.fibers.take();
            return Err(e);
        }
    };
    // SAFETY: `from_d` is the running fiber's payload, alive (its object is `ctx.fiber_obj`);
    // it is only used before the switch below, after which others may change it.
    let from = unsafe { &mut *from_d };
    exchange(ctx, from, to_d);
    to_d.state = State::Resumed;
    ctx.fiber_obj = to;
    ctx.fibers.cur = to_d;
    let save: *mut usize = &mut from.sp;
    // SAFETY: `to_sp` is a prepared or suspended context of this thread; `save` lives in the
    // Fiber object, which stays reachable (it is `to`'s resumer, the root, or referenced by
    // whoever will switch back to it).
    unsafe { switch::switch(save, to_sp, 0) };
    // Running again: whoever switched here loaded our state and set the message.
    ctx.fibers.release_pending();
    let r = take_message(ctx);
    // SAFETY: the running fiber's payload (this fiber, running again). What it was handed
    // is dropped if it was killed.
    let me = unsafe { &mut *ctx.fibers.cur };
    if me.killed {
        // Killed while it waited for the fiber it resumed: unwind once (its `ensure`
        // clauses run, and may switch again).
        me.killed = false;
        return Err(kill_unwind(ctx));
    }
    r
}

/// The running fiber and its payload.
#[inline(always)]
fn running(ctx: &mut Ctx) -> (Value, *mut FiberData) {
    if ctx.fibers.cur.is_null() {
        current(ctx);
    }
    (ctx.fiber_obj, ctx.fibers.cur)
}

/// `Fiber#raise`'s exception arriving in the fiber: without a backtrace, it gets the
/// fiber's, where the fiber was suspended.
fn raised_here(ctx: &mut Ctx, e: Value) -> Unwind {
    crate::core::exception::ensure_backtrace(ctx, e);
    Unwind::Raise(e)
}

#[inline(always)]
fn take_message(ctx: &mut Ctx) -> Result<Value> {
    match ctx.fibers.take() {
        Xfer::None => Ok(Value::NIL),
        Xfer::Value(v) => Ok(v),
        Xfer::Raise(e) => Err(raised_here(ctx, e)),
        Xfer::Kill => Err(kill_unwind(ctx)),
        Xfer::Done(r) => r,
        Xfer::Panic(p) => std::panic::resume_unwind(p),
    }
}

pub(crate) fn kill_unwind(ctx: &mut Ctx) -> Unwind {
    if ctx.fibers.kill_tag.is_nil() {
        ctx.fibers.kill_tag = crate::core::object::new_object(ctx, ctx.c().object);
    }
    Unwind::Throw { tag: ctx.fibers.kill_tag, value: Value::NIL }
}

/// Whether `tag` is that of the throw that unwinds a killed fiber (`kill_unwind`).
pub(crate) fn is_kill_tag(ctx: &Ctx, tag: Value) -> bool {
    tag == ctx.fibers.kill_tag && !tag.is_nil()
}

/// Where a fiber that ends hands control: its resumer, else (a fiber entered by `transfer`)
/// the last fiber of the chain of resumes that starts at the root fiber, as CRuby does.
fn return_target(ctx: &mut Ctx, f: Value) -> Value {
    let r = fd(f).resumer;
    if !r.is_nil() {
        fd(f).resumer = Value::NIL;
        return r;
    }
    let root = ctx.fibers.root;
    if root.is_nil() || root == f {
        // Unreachable in practice: the root fiber never ends inside this module.
        return f;
    }
    let mut t = root;
    loop {
        let next = fd(t).resuming;
        if next.is_nil() || next == f || fd(next).state == State::Terminated {
            return t;
        }
        t = next;
    }
}

/// How a fiber's run on its current native stack ended.
enum Leave {
    Suspend(Value, Xfer),
    Done(Result<Value>),
}

extern "C" fn fiber_entry(_transfer: usize, ctxp: usize) -> ! {
    // SAFETY: `enter` passes the address of the thread's boxed Ctx, which outlives its fibers
    // running, and only this thread uses it.
    let ctx = unsafe { &mut *(ctxp as *mut Ctx) };
    ctx.fibers.release_pending();
    let fiber = ctx.fiber_obj;
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_fiber(ctx, fiber)));
    let (target, msg) = match outcome {
        Ok(Leave::Suspend(target, msg)) => {
            let d = fd(fiber);
            d.state = State::Suspended;
            d.shallow = true;
            (target, msg)
        }
        Ok(Leave::Done(r)) => {
            fd(fiber).state = State::Terminated;
            (return_target(ctx, fiber), Xfer::Done(r))
        }
        Err(panic) => {
            fd(fiber).state = State::Terminated;
            (return_target(ctx, fiber), Xfer::Panic(panic))
        }
    };
    leave_stack(ctx, fiber, target, msg)
}

/// Switches away from `fiber` for good on this native stack, which goes back to the pool.
fn leave_stack(ctx: &mut Ctx, fiber: Value, target: Value, msg: Xfer) -> ! {
    let td = fd(target);
    let to_sp = match enter(ctx, td) {
        Ok(sp) => sp,
        // The target is always suspended on its own stack here (a resumer or the root).
        Err(_) => fatal("fiber switch target has no context"),
    };
    let d = fd(fiber);
    exchange(ctx, d, td);
    if d.state == State::Terminated {
        // Its execution state is reused by the next new fiber (or dropped, which returns the
        // value stack to the pool).
        if let Some(mut st) = d.saved.stacks.take() {
            if ctx.fibers.spare_states.len() < SPARE_STATES && st.frames.capacity() <= 64 {
                st.reset();
                ctx.fibers.spare_states.push(st);
            }
        }
        d.saved = Saved::empty();
    }
    ctx.fibers.release = d.native.take();
    td.state = State::Resumed;
    ctx.fiber_obj = target;
    ctx.fibers.cur = td;
    ctx.fibers.post(msg);
    let mut dead = 0usize;
    // SAFETY: as in `switch_to`; this context is never resumed (its stack is released).
    unsafe { switch::switch(&mut dead, to_sp, 0) };
    fatal("a finished fiber was resumed")
}

/// An internal invariant broke where no Ruby exception can be raised.
pub(crate) fn fatal(msg: &str) -> ! {
    crate::core::io::write_stderr_fd(format!("[BUG] Carmine internal error: {msg}\n").as_bytes());
    std::process::abort()
}

/// Runs the fiber's body, or continues it after a shallow suspension.
fn run_fiber(ctx: &mut Ctx, fiber: Value) -> Leave {
    let msg = ctx.fibers.take();
    let d = fd(fiber);
    let r = if d.continue_run {
        d.continue_run = false;
        d.shallow = false;
        crate::interp::exec::continue_suspended(ctx)
    } else if d.shallow {
        d.shallow = false;
        let resumed = match msg {
            Xfer::Value(v) => Ok(v),
            Xfer::Raise(e) => Err(raised_here(ctx, e)),
            Xfer::Kill => Err(kill_unwind(ctx)),
            _ => Ok(Value::NIL),
        };
        crate::interp::exec::resume_suspended(ctx, resumed)
    } else {
        let args = std::mem::replace(&mut d.start_args, Value::NIL);
        match d.body {
            Body::Proc(p) => {
                ctx.stacks.set_root_proc(p);
                let items = if args.is_nil() { Vec::new() } else { array::to_vec(args) };
                crate::interp::call::call_block(ctx, &Block::Proc(p), &items, None, None, None)
            }
            Body::Native(f, arg) => f(ctx, arg),
            Body::Root(_) => Ok(Value::NIL),
        }
    };
    match r {
        Err(Unwind::Suspend) => match ctx.fibers.pending.take() {
            Some((target, msg)) => Leave::Suspend(target, msg),
            None => Leave::Done(Err(ctx.runtime_error("fiber suspended without a target"))),
        },
        r => Leave::Done(finish_result(ctx, r)),
    }
}

/// Turns unwinds that may not leave a fiber into the errors CRuby raises for them.
fn finish_result(ctx: &mut Ctx, r: Result<Value>) -> Result<Value> {
    match r {
        // A killed thread unwinds through its fibers to its top (`Thread#kill`); a killed
        // fiber ends there (`Fiber#kill`).
        Err(Unwind::Throw { tag, value }) if is_kill_tag(ctx, tag) => {
            if crate::thread::sched::data(ctx.thread_obj).is_some_and(|d| d.killed) {
                Err(Unwind::Throw { tag, value })
            } else {
                Ok(Value::NIL)
            }
        }
        Err(Unwind::Break { .. }) => {
            let reason = ctx.intern("break");
            Err(ctx.local_jump_error("break from proc-closure", reason, Value::NIL))
        }
        Err(Unwind::Return { value, .. }) => {
            let reason = ctx.intern("return");
            Err(ctx.local_jump_error("unexpected return", reason, value))
        }
        Err(Unwind::Throw { tag, value }) => Err(crate::core::kernel::uncaught_throw(ctx, tag, value)),
        r => r,
    }
}

// ---- the operations behind the Ruby methods ----

/// `fiber.resume(*args)`.
/// A switch decided by `resume` or `yield`, not yet made.
struct Plan {
    from_d: *mut FiberData,
    to: Value,
    to_d: *mut FiberData,
    /// For `resume`: the resumed fiber's payload and its resumer, to unlink afterwards.
    resumed: Option<(*mut FiberData, Value)>,
}

/// Makes the switch. Every resume and yield from Ruby goes through the single use of
/// `run_plan` (with `switch_point` inlined) in `switch_builtin`, so the `Fiber#resume` /
/// `Fiber.yield` builtin holds the only call of the assembly switch, and the builtins are
/// called from one place in the dispatch loop: both sides of a resume/yield ping-pong return
/// through the same addresses and the CPU's return-address predictor stays right across the
/// switch. (Inlining `switch_point` saves a frame's register saves on each side.)
#[inline(always)]
fn run_plan(ctx: &mut Ctx, p: Plan) -> Result<Value> {
    // SAFETY: `to_d` is the payload of `to`, which the plan's caller keeps referenced.
    let r = switch_point(ctx, p.from_d, p.to, unsafe { &mut *p.to_d });
    if let Some((d, cur)) = p.resumed {
        // SAFETY: the resumed fiber's payload; its object is still referenced by the caller.
        let d = unsafe { &mut *d };
        if d.resumer == cur {
            d.resumer = Value::NIL;
        }
        // SAFETY: the running fiber's payload (this fiber is running again).
        unsafe { (*p.from_d).resuming = Value::NIL };
    }
    r
}

#[inline(always)]
fn switch_point(ctx: &mut Ctx, from_d: *mut FiberData, to: Value, to_d: &mut FiberData) -> Result<Value> {
    switch_to(ctx, from_d, to, to_d)
}

/// The builtin behind both `Fiber#resume` (an instance receiver) and `Fiber.yield` (the class).
pub fn switch_builtin(ctx: &mut Ctx, recv: Value, args: &[Value]) -> Result<Value> {
    let plan = match data(recv) {
        Some(d) => {
            let d: *mut FiberData = d;
            plan_resume_args(ctx, recv, d, args)?
        }
        // `Fiber.yield` (the receiver is the class); `resume` of an allocated fiber.
        None if crate::core::module::is_class(recv) => plan_yield(ctx, args, true)?,
        None => return Err(fiber_error(ctx, "uninitialized fiber")),
    };
    let r = run_plan(ctx, plan);
    // Back in this fiber: `:fiber_switch` (the dispatch loop's direct switches are off
    // while tracing, so every switch comes here).
    if crate::core::tracepoint::tracing(ctx) {
        crate::core::tracepoint::simple(ctx, crate::core::tracepoint::FIBER_SWITCH)?;
    }
    r
}

/// `fiber.resume(arg)` or `Fiber.yield(arg)` (at most one argument, no block) called by the
/// dispatch loop, in the common cases: a resume of a fiber suspended on its own native
/// stack by `Fiber.yield`, or a yield to a resumer waiting on its native stack. Makes the
/// switch without a builtin call or frame; `None` (nothing changed) when the general path
/// must decide (errors, first resume, transfers, shallow suspension, dense mode). The
/// receiver and arguments stay on the value stack (marked) while this fiber is suspended.
#[inline(never)]
pub fn switch_from_loop(ctx: &mut Ctx, recv: Value, args: &[Value]) -> Option<Result<Value>> {
    let cur_d = ctx.fibers.cur;
    if cur_d.is_null() || args.len() > 1 {
        return None;
    }
    let v = args.first().copied().unwrap_or(Value::NIL);
    let target = match data(recv) {
        Some(d) => {
            // A Suspended or Created fiber is not the running one (which is Resumed). A
            // Created one started without arguments needs no start arguments (`enter`
            // gives it a fresh stack and its body ignores the message).
            let created = d.state == State::Created && args.is_empty();
            if !((created || d.state == State::Suspended) && unlinked_here(ctx, d)) {
                return None;
            }
            let borrow = d.sp == 0 && d.shallow && !d.promoted && d.yielding;
            if d.sp == 0 && !borrow && !created {
                return None;
            }
            if borrow {
                if let Some(y) = run_borrowed(ctx, d, v) {
                    return Some(Ok(y));
                }
                // It needs a native stack from here on: continue it there (below).
            }
            d.resumer = ctx.fiber_obj;
            d.yielding = false;
            // SAFETY: the running fiber's payload, distinct from `d`.
            unsafe { (*cur_d).resuming = recv };
            Some((recv, d as *mut FiberData))
        }
        None => None,
    };
    let (to, to_d) = match target {
        Some(t) => t,
        None => {
            // SAFETY: the running fiber's payload.
            let d = unsafe { &mut *cur_d };
            let own_loop = ctx.stacks.exec_depth == 1 && matches!(d.body, Body::Proc(_));
            if d.resumer.is_nil() || (own_loop && shallow_yield(ctx, d)) {
                // The general path decides (a yield from the fiber's own loop suspends
                // shallowly there).
                return None;
            }
            if own_loop {
                d.own_yields = d.own_yields.saturating_add(1);
            }
            let target = d.resumer;
            let td = fd(target);
            if td.sp == 0 {
                return None;
            }
            d.resumer = Value::NIL;
            d.yielding = true;
            d.state = State::Suspended;
            (target, td as *mut FiberData)
        }
    };
    ctx.fibers.post_value(v);
    // SAFETY: `to_d` is `to`'s payload; `to` is referenced by `recv` or by the resumer link.
    let r = switch_to(ctx, cur_d, to, unsafe { &mut *to_d });
    // Running again. After a resume (this fiber's `resuming` is the resumed fiber; a fiber
    // that yielded has none), unlink the resumed fiber, which yielded or ended. The test
    // reads memory rather than remembering the branch taken above, so that the compiler does
    // not duplicate the switch into the resume and yield branches: with one call site of the
    // assembly switch, both sides of a resume/yield ping-pong return to the same address and
    // the return predictor stays right.
    // SAFETY: the running fiber's payload.
    let resumed = unsafe { (*cur_d).resuming };
    if !resumed.is_nil() {
        let cur = ctx.fiber_obj;
        // `resumed` is the receiver of the resume, still on the caller's stack.
        let d = fd(resumed);
        if d.resumer == cur {
            d.resumer = Value::NIL;
        }
        // SAFETY: as above.
        unsafe { (*cur_d).resuming = Value::NIL };
    }
    Some(r)
}

/// Resumes the shallowly suspended fiber with payload `d` with `v` by a borrowed run on this
/// native stack (`interp::borrowed`). `Some(y)`: it yielded `y` and is suspended shallowly
/// again. `None`: it stopped at an instruction that needs its own native stack, marked to
/// continue from there when switched to (`continue_run`) and `promoted`.
///
/// The run works on the fiber's saved execution state in place, and nothing else changes:
/// the fiber stays `Suspended` and unlinked, and `ctx` keeps the resumer's state. Nothing can
/// tell: the borrowed interpreter runs no instruction that calls, allocates (so no
/// collection happens), raises or switches.
#[inline(always)]
fn run_borrowed(ctx: &Ctx, d: &mut FiberData, v: Value) -> Option<Value> {
    let Some(st) = d.saved.stacks.as_deref_mut() else { fatal("fiber state missing") };
    let sp = st.sp;
    st.stack[sp] = v;
    st.sp = sp + 1;
    let out = crate::interp::borrowed::run(ctx, st);
    if out.is_none() {
        d.continue_run = true;
        d.promoted = true;
    }
    out
}

/// `fiber.resume(*args)` from Rust.
#[inline(always)]
pub fn resume(ctx: &mut Ctx, f: Value, args: &[Value]) -> Result<Value> {
    let Some(d) = data(f) else { return Err(ctx.type_error("uninitialized fiber")) };
    resume_data(ctx, f, d, args)
}

/// `fiber.resume(*args)` from Rust, with `f`'s payload `d` already looked up.
#[inline(always)]
pub fn resume_data(ctx: &mut Ctx, f: Value, d: &mut FiberData, args: &[Value]) -> Result<Value> {
    let plan = plan_resume_args(ctx, f, d, args)?;
    run_plan(ctx, plan)
}

/// Whether `resume` of the fiber with payload `d` from this thread would switch to it
/// rather than raise: it is suspended in `Fiber.yield` (not by `transfer`) and linked to no
/// other fiber. (A subset of `plan_resume`'s checks, for fast paths that must not raise.)
#[inline(always)]
pub fn resumable(ctx: &Ctx, d: &FiberData) -> bool {
    d.state == State::Suspended && unlinked_here(ctx, d)
}

/// The fiber belongs to this thread and is linked to no other fiber by a resume or transfer:
/// what `plan_resume` requires of a fiber that is not running or finished.
#[inline(always)]
fn unlinked_here(ctx: &Ctx, d: &FiberData) -> bool {
    d.resumer.is_nil() && d.resuming.is_nil() && !d.transferred && d.owner == ctx.serial
}

#[inline(always)]
fn plan_resume_args(ctx: &mut Ctx, f: Value, d: *mut FiberData, args: &[Value]) -> Result<Plan> {
    // SAFETY: `f`'s payload; `f` is referenced by the caller.
    let created = unsafe { (*d).state == State::Created };
    let (msg, start) = match (created, args.is_empty()) {
        (true, true) => (Xfer::None, Value::NIL),
        (true, false) => (Xfer::None, array::from_slice(ctx, args)),
        (false, _) => (Xfer::Value(pack(ctx, args)), Value::NIL),
    };
    plan_resume(ctx, f, d, msg, start)
}

fn resume_with(ctx: &mut Ctx, f: Value, d: *mut FiberData, msg: Xfer, start_args: Value) -> Result<Value> {
    let plan = plan_resume(ctx, f, d, msg, start_args)?;
    run_plan(ctx, plan)
}

#[inline(always)]
fn plan_resume(ctx: &mut Ctx, f: Value, d: *mut FiberData, msg: Xfer, start_args: Value) -> Result<Plan> {
    let (cur, cur_d) = running(ctx);
    // SAFETY: `f`'s payload (f is referenced by the caller), distinct from the running one
    // unless `f == cur`, which is rejected before anything is written.
    let dr = unsafe { &mut *d };
    if dr.owner != ctx.serial || !switch::SUPPORTED {
        check_thread(ctx, f)?;
    }
    if dr.state == State::Terminated {
        return Err(fiber_error(ctx, "attempt to resume a terminated fiber"));
    }
    if f == cur {
        return Err(fiber_error(ctx, "attempt to resume the current fiber"));
    }
    if !dr.resumer.is_nil() {
        return Err(fiber_error(ctx, "attempt to resume a resumed fiber (double resume)"));
    }
    if !dr.resuming.is_nil() {
        return Err(fiber_error(ctx, "attempt to resume a resuming fiber"));
    }
    if dr.state == State::Resumed {
        return Err(fiber_error(ctx, "attempt to resume a resumed fiber (double resume)"));
    }
    if dr.transferred {
        return Err(fiber_error(ctx, "attempt to resume a transferring fiber"));
    }
    if dr.state == State::Created {
        dr.start_args = start_args;
    }
    dr.resumer = cur;
    dr.yielding = false;
    // SAFETY: the running fiber's payload, distinct from `dr` (f != cur).
    unsafe { (*cur_d).resuming = f };
    match msg {
        Xfer::Value(v) => ctx.fibers.post_value(v),
        msg => ctx.fibers.post(msg),
    }
    Ok(Plan { from_d: cur_d, to: f, to_d: d, resumed: Some((d, cur)) })
}

/// `Fiber.yield(*args)` from Rust: suspends on the native stack.
#[inline(always)]
pub fn yield_(ctx: &mut Ctx, args: &[Value]) -> Result<Value> {
    let plan = plan_yield(ctx, args, false)?;
    run_plan(ctx, plan)
}

/// Decides a yield; `from_ruby` when called as the `Fiber.yield` builtin (its frame on top),
/// which may suspend shallowly instead (returning `Unwind::Suspend`).
#[inline(always)]
fn plan_yield(ctx: &mut Ctx, args: &[Value], from_ruby: bool) -> Result<Plan> {
    let (_, cur_d) = running(ctx);
    // SAFETY: the running fiber's payload.
    let d = unsafe { &mut *cur_d };
    if d.resumer.is_nil() {
        return Err(fiber_error(ctx, "attempt to yield on a not resumed fiber"));
    }
    let v = pack(ctx, args);
    let target = d.resumer;
    d.resumer = Value::NIL;
    d.yielding = true;
    let own_loop = from_ruby && matches!(d.body, Body::Proc(_)) && called_from_own_loop(ctx);
    if own_loop && shallow_yield(ctx, d) {
        ctx.fibers.pending = Some((target, Xfer::Value(v)));
        return Err(Unwind::Suspend);
    }
    if own_loop {
        d.own_yields = d.own_yields.saturating_add(1);
    }
    d.state = State::Suspended;
    ctx.fibers.post_value(v);
    Ok(Plan { from_d: cur_d, to: target, to_d: fd(target), resumed: None })
}

/// Whether a yield of `d` from its own loop suspends shallowly (giving its native stack
/// back): in dense mode, and for a fiber that has yielded this way a few times without
/// needing a native stack between yields (so its resumes can be borrowed runs).
#[inline(always)]
fn shallow_yield(ctx: &Ctx, d: &FiberData) -> bool {
    ctx.fibers.natives.held() > KEEP_NATIVE_STACKS || (!d.promoted && d.own_yields >= DEEP_OWN_YIELDS)
}

/// True when the builtin on top was called by Ruby code of the fiber's own (only) dispatch
/// loop: then nothing but that loop is on the fiber's native stack (a Proc-bodied fiber
/// enters it straight from `fiber_entry`), so the fiber can suspend by unwinding it.
fn called_from_own_loop(ctx: &Ctx) -> bool {
    let frames = &ctx.stacks.frames;
    let n = frames.len();
    ctx.stacks.exec_depth == 1 && n >= 2 && !frames[n - 1].is_ruby() && frames[n - 2].is_ruby()
}

/// `fiber.transfer(*args)`.
pub fn transfer(ctx: &mut Ctx, f: Value, args: &[Value]) -> Result<Value> {
    let d: *mut FiberData = fd(f);
    // SAFETY: the payload of `f`, a live Fiber the caller holds; the pointer is not kept
    // past this call's own uses below.
    check_owner(ctx, unsafe { &*d })?;
    let (cur, cur_d) = running(ctx);
    let v = pack(ctx, args);
    if f == cur {
        return Ok(v);
    }
    // SAFETY: as above; nothing since then freed or moved the payload (it is boxed).
    let d = unsafe { &mut *d };
    match d.state {
        State::Terminated => return Err(fiber_error(ctx, "dead fiber called")),
        State::Resumed => return Err(fiber_error(ctx, "attempt to transfer to a resuming fiber")),
        State::Suspended if d.yielding => return Err(fiber_error(ctx, "attempt to transfer to a yielding fiber")),
        _ => {}
    }
    if d.state == State::Created {
        d.start_args = array::from_slice(ctx, args);
    }
    d.transferred = true;
    // SAFETY: the running fiber's payload.
    unsafe {
        (*cur_d).state = State::Suspended;
        (*cur_d).yielding = false;
    }
    ctx.fibers.post_value(v);
    switch_to(ctx, cur_d, f, d)
}

/// Switches to a transferred fiber `f` with `msg` (for `raise`/`kill` on it).
fn transfer_message(ctx: &mut Ctx, f: Value, msg: Xfer) -> Result<Value> {
    check_thread(ctx, f)?;
    let (_, cur_d) = running(ctx);
    // SAFETY: the running fiber's payload.
    unsafe { (*cur_d).state = State::Suspended };
    ctx.fibers.post(msg);
    switch_to(ctx, cur_d, f, fd(f))
}

/// `fiber.raise(...)`: raises the exception made from `args` inside the fiber.
pub fn raise_in(ctx: &mut Ctx, f: Value, args: &[Value]) -> Result<Value> {
    // Without arguments: a RuntimeError with an empty message (not Kernel#raise's re-raise
    // of `$!` or "unhandled exception").
    let exc = if args.is_empty() {
        ctx.new_error(ctx.c().runtime_error, "")
    } else {
        crate::core::kernel::make_exception(ctx, args)?
    };
    let cur = current(ctx);
    // A fiber waiting in `resume` gets it where the chain of resumes it started ends, as
    // in CRuby (raising on a parent fiber from its child raises in the child).
    let mut f = f;
    while !fd(f).resuming.is_nil() && f != cur {
        f = fd(f).resuming;
    }
    if f == cur {
        return Err(Unwind::Raise(exc));
    }
    match fd(f).state {
        State::Created => Err(fiber_error(ctx, "cannot raise exception on unborn fiber")),
        State::Terminated => Err(fiber_error(ctx, "attempt to resume a terminated fiber")),
        // Suspended by `transfer` (not waiting in `Fiber.yield`): reached by a transfer, as
        // in CRuby 3.4, whether it was entered by `resume` or by `transfer`.
        State::Suspended if fd(f).transferred || !fd(f).yielding => transfer_message(ctx, f, Xfer::Raise(exc)),
        _ => resume_with(ctx, f, fd(f), Xfer::Raise(exc), Value::NIL),
    }
}

/// `fiber.kill`: unwinds the fiber (running its `ensure` clauses) and ends it.
pub fn kill(ctx: &mut Ctx, f: Value) -> Result<Value> {
    let cur = current(ctx);
    match fd(f).state {
        State::Terminated => Ok(f),
        State::Created => {
            fd(f).state = State::Terminated;
            Ok(f)
        }
        _ if f == cur => Err(kill_unwind(ctx)),
        // Waiting for the fibers it resumed, down to the running one: the running fiber
        // unwinds (the killer does not carry on, as in CRuby), and so does each fiber of
        // the chain, `f` included, when control comes back to it. A thread's root fiber
        // killed this way ends the thread.
        State::Resumed if resumes_into(f, cur) => {
            let mut t = f;
            while t != cur {
                fd(t).killed = true;
                t = fd(t).resuming;
            }
            Err(kill_unwind(ctx))
        }
        _ if fd(f).transferred => {
            transfer_message(ctx, f, Xfer::Kill)?;
            Ok(f)
        }
        _ => {
            resume_with(ctx, f, fd(f), Xfer::Kill, Value::NIL)?;
            Ok(f)
        }
    }
}

/// Whether the chain of resumes that starts at `f` leads to the running fiber `cur`.
fn resumes_into(f: Value, cur: Value) -> bool {
    let mut t = fd(f).resuming;
    while !t.is_nil() {
        if t == cur {
            return true;
        }
        t = fd(t).resuming;
    }
    false
}

pub fn is_alive(f: Value) -> bool {
    fd(f).is_alive()
}

impl FiberData {
    pub fn is_alive(&self) -> bool {
        self.state != State::Terminated
    }
}

pub fn is_blocking(f: Value) -> bool {
    fd(f).blocking
}

pub fn set_blocking(f: Value, blocking: bool) {
    fd(f).blocking = blocking;
}

/// The fiber's `Fiber[]` storage (nil until written).
pub fn storage(f: Value) -> Value {
    fd(f).storage
}

pub fn set_storage(f: Value, h: Value) {
    fd(f).storage = h;
}

/// `#<Fiber:0x… file:line (state)>`.
pub fn inspect(ctx: &mut Ctx, f: Value) -> String {
    let d = fd(f);
    let state = match d.state {
        State::Created => "created",
        State::Resumed => "resumed",
        State::Suspended => "suspended",
        State::Terminated => "terminated",
    };
    let loc = match d.body {
        Body::Proc(p) => match crate::core::proc::captured(p) {
            Some(c) => {
                let is = crate::compile::iseq::iseq_of(c.iseq);
                format!(" {}:{}", is.path, is.first_line)
            }
            None => String::new(),
        },
        _ => String::new(),
    };
    let name = crate::core::object::class_name_of(ctx, f);
    format!("#<{name}:0x{:016x}{loc} ({state})>", f.raw())
}

/// A copy of the running fiber's storage, for a new fiber to inherit.
pub fn inherited_storage(ctx: &mut Ctx) -> Value {
    let cur = current(ctx);
    let s = fd(cur).storage;
    if s.is_nil() {
        Value::NIL
    } else {
        hash::dup(ctx, s)
    }
}
