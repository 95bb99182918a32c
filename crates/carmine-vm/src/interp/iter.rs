//! Iterator frames: builtin iterators that the dispatch loop drives itself.
//!
//! `Integer#times`, `Integer#upto`/`downto` (with a Fixnum limit), `Kernel#loop`, and over an
//! Array `each`, `map`, `select`, `reject`, `count`, `each_with_index` and `inject` called
//! from Ruby code with a literal block do not run their Rust loops (which would call the
//! block through `call_block`, re-entering the dispatch loop on the native stack once per
//! iteration). Instead the call pushes a builtin
//! frame marked `FRAME_ITER` and the block frame of the first iteration, and returns to the
//! loop. When a block frame leaves into an iterator frame the loop calls `step`, which
//! takes in the block's result, then pushes the next iteration's block frame or, when done,
//! pops the iterator frame and leaves the call's result. A block frame pushed by the fast path (`push_simple_block_frame`) is
//! flagged `FRAME_ITER_BLOCK` and restarted in place instead (`restart`): a new activation
//! (serial, argument, locals — in a new heap environment if they live on the heap — pc) in
//! the same frame.
//!
//! Invariants:
//! - An iterator frame is a builtin frame (null iseq; backtraces show `Integer#times` or
//!   `Kernel#loop`) with `FRAME_ITER` (plus `FRAME_ITER_LOOP` for `loop`); it is only ever
//!   pushed by Ruby code running in the same dispatch loop, so the frame below it is a Ruby
//!   frame of that loop, and it is never `FRAME_FINISH`.
//! - Its fields: `pc` is the current iteration, `bp` the iteration count (`usize::MAX` for
//!   `loop`; with `FRAME_ITER_EACH` (the Array iterators) the count is its self's length at
//!   every step, as the block may change it), `outer` nil or, for `upto`/`downto`, the step
//!   (Fixnum ±1) from the receiver to each iteration's argument (for the Array iterators see
//!   below), `sp_base` the stack slot of the block's first argument (where the block's
//!   result lands), `ret_sp` the call's result slot, `iseq_val` with `home_index`/`home_serial` the
//!   literal block (its home is the calling frame, always live below).
//! - An unwind passing an iterator frame pops it and resets `sp` to its result slot (as a
//!   failed builtin call does), so a `break` value lands where the call's result goes; a
//!   `loop` frame instead ends with the result of a `StopIteration` passing it.
//! - With `FRAME_ITER_SYM` (`each(&:name)`, `times(&:name)`, never for the kinds other
//!   than `PLAIN`: the call site's block is a Symbol) the iteration's argument is the receiver of a call of that method: a Ruby method's
//!   frame is pushed with its result slot at `sp_base`, as a block frame's would be; any other
//!   method runs at once and the iteration goes on. No Proc is made. `locals` then points to
//!   the call site's `CallInfo` (in the home frame's iseq, alive while that frame is), whose
//!   cache remembers the method for the last element's class (`sym_klass`, `sym_me`), so a
//!   monomorphic iteration looks it up once per call site and method epoch.
//! - A pass-through frame (`push_passthrough`, `home_index` `PASSTHROUGH`) is a
//!   `FRAME_ITER` frame with one Ruby method frame above it sharing its result slot.
//! - With `FRAME_ITER_EACH`, `owner_skip` holds the builtin's `Kind`: `PLAIN` (`each`,
//!   and every iterator without the flag) passes each element and returns its self; `MAP`,
//!   `SELECT`, `REJECT` and `COUNT` pass each element and build their result in `outer` (the
//!   new Array, or the Fixnum count); `WITH_INDEX` passes the element and its index;
//!   `INJECT` passes the accumulator (in `outer`) and the element, and the block's result is
//!   the next accumulator (without an initial value, `outer` starts as element 0 and the
//!   iteration at 1). `REJECT` keeps the element given to the block in the stack slot
//!   below `sp_base` (its `sp_base` is `ret_sp + 2`), as the block may change the Array. The `Enumerable` ones (`WITH_INDEX`, `INJECT`) only run for a plain Array
//!   whose `each` is Array's own (`REDEF_ARRAY` clear), as `Enumerable` would call `each`.
//! - `Array.new(n) { }` runs `Array#initialize` as an iterator frame of kind `FILL` (no
//!   `FRAME_ITER_EACH`: `n` iterations, passing the index) on the new Array, above a
//!   pass-through frame for `Array.new` (`start` pushes both); each result is appended to
//!   its self.
//! - A block's result is taken in (`absorb`) exactly once: by `restart` when the frame is
//!   restarted in place, else by `step` (it sits at `sp_base`, where the block frame or the
//!   Symbol's method left it).
//! - No Rust frames sit between the loop and the blocks, so a fiber whose blocks run in
//!   iterator frames can still suspend shallowly (dense mode) and switch fast.

use crate::compile::iseq::{CallCache, CallInfo};
use crate::core::module::{MethodBody, MethodEntry, Visibility};
use crate::error::Unwind;
use crate::interp::call;
use crate::core::array;
use crate::interp::frame::{BlockRef, Captured, Frame, HomeMethod, FRAME_ITER, FRAME_ITER_BLOCK, FRAME_ITER_EACH, FRAME_ITER_LOOP, FRAME_ITER_SYM};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The builtin an Array iterator frame runs (its `owner_skip`; see the module comment).
pub mod kind {
    pub const PLAIN: u32 = 0;
    pub const MAP: u32 = 1;
    pub const SELECT: u32 = 2;
    pub const REJECT: u32 = 3;
    pub const COUNT: u32 = 4;
    pub const WITH_INDEX: u32 = 5;
    pub const INJECT: u32 = 6;
    pub const FILL: u32 = 7;
}

/// The iterator a builtin call can run as, if any: `Some(count)` with the number of
/// iterations (`usize::MAX` for `loop`, the current length for the Array iterators),
/// `Some(0)` for a `times` (or `upto`/`downto`) that does not iterate.
/// `me` is the called entry (under any alias), `recv` its receiver, `args` its positional
/// arguments: none, or one Fixnum limit for `Integer#upto`/`downto`, or `inject`'s initial
/// value.
#[inline(always)]
pub fn iterations(ctx: &Ctx, me: &MethodEntry, recv: Value, args: &[Value]) -> Option<usize> {
    if !matches!(me.body, MethodBody::Builtin { .. }) {
        return None;
    }
    if let [limit] = args {
        if (me.original_name == sym::UPTO || me.original_name == sym::DOWNTO) && me.owner == ctx.c().integer && recv.is_fixnum() && limit.is_fixnum() {
            let (from, to) = (recv.fixnum_unchecked(), limit.fixnum_unchecked());
            let n = if me.original_name == sym::UPTO { to - from + 1 } else { from - to + 1 };
            return Some(n.max(0) as usize);
        }
    } else if args.is_empty() {
        if me.original_name == sym::TIMES && me.owner == ctx.c().integer && recv.is_fixnum() {
            return Some(recv.fixnum_unchecked().max(0) as usize);
        }
        if me.original_name == sym::LOOP && me.owner == ctx.c().kernel {
            return Some(usize::MAX);
        }
        if me.original_name == sym::EACH && me.owner == ctx.c().array && array::is_array(recv) {
            return Some(array::len(recv));
        }
    }
    array_iterations(ctx, me, recv, args)
}

/// `iterations` for the Array iterators other than `each` (see the module comment), given
/// `argc` arguments.
#[inline(never)]
fn array_iterations(ctx: &Ctx, me: &MethodEntry, recv: Value, args: &[Value]) -> Option<usize> {
    let name = me.original_name;
    if crate::core::tracepoint::tracing(ctx) {
        return None;
    }
    if name == sym::NEW {
        // `Array.new(n)` (Array's own `new`, or `Class#new`), Array's `initialize` the builtin.
        let n = args.first().and_then(|v| v.as_fixnum()).filter(|&n| recv == ctx.c().array && args.len() == 1 && (0..=1 << 32).contains(&n))?;
        let init = crate::core::module::find_method_ref(ctx, recv, sym::INITIALIZE)?;
        return (init.owner == recv && matches!(init.body, MethodBody::Builtin { .. })).then_some(n as usize);
    }
    if !array::is_array(recv) || args.len() > (name == sym::INJECT) as usize {
        return None;
    }
    let ok = if me.owner == ctx.c().array {
        name == sym::MAP || name == sym::SELECT || name == sym::REJECT || name == sym::COUNT
    } else {
        me.owner == ctx.c().enumerable && (name == sym::INJECT || name == sym::EACH_WITH_INDEX) && array::is_plain_array(recv) && !ctx.vm_redefined(crate::interp::ops::REDEF_ARRAY)
    };
    ok.then(|| array::len(recv))
}

/// Whether the iterator `me` (`iterations` accepted it) runs as an iterator frame with a
/// Symbol block: only those whose results it drops. `map(&:name)` and the like keep the
/// Symbol proc called from Rust, which is cheaper when the method is a builtin or an
/// attribute reader (each of which `call_symbol` calls through `invoke_from_rust`).
pub fn takes_symbol(me: &MethodEntry) -> bool {
    kind_of(me) == kind::PLAIN
}

/// The `Kind` of the iterator `me`.
fn kind_of(me: &MethodEntry) -> u32 {
    match me.original_name {
        sym::MAP => kind::MAP,
        sym::SELECT => kind::SELECT,
        sym::REJECT => kind::REJECT,
        sym::COUNT => kind::COUNT,
        sym::EACH_WITH_INDEX => kind::WITH_INDEX,
        sym::INJECT => kind::INJECT,
        sym::NEW => kind::FILL,
        _ => kind::PLAIN,
    }
}

/// Whether an iterator of kind `k` keeps the element given to the block below `sp_base`.
#[inline(always)]
fn keeps_element(k: u32) -> bool {
    k == kind::REJECT
}

/// Whether the iteration of iterator frame `f` is over at iteration `i`.
#[inline(always)]
fn finished(f: &Frame, i: usize) -> bool {
    if f.flags & FRAME_ITER_EACH != 0 {
        return i >= array::len(f.self_);
    }
    i >= f.bp
}

/// The argument of iteration `i` of iterator frame `f` (`loop` passes none).
#[inline(always)]
fn argument(f: &Frame, i: usize) -> Value {
    if f.flags & FRAME_ITER_EACH != 0 {
        return array::get(f.self_, i);
    }
    if let Some(step) = f.outer.as_fixnum() {
        // `upto`/`downto`: from the receiver by steps of ±1 (the values stay between the
        // receiver and the limit, both Fixnums).
        return Value::fixnum(f.self_.fixnum_unchecked() + step * i as i64);
    }
    Value::fixnum(i as i64)
}

/// Starts the iterator call `me` (`iterations` gave `count`) on `recv`, the block the
/// literal `block_iseq` of the frame `home` (or a Symbol: `FRAME_ITER_SYM`), made at call
/// site `site` of `home`. Its receiver sits at `ret_sp`, its arguments (read already:
/// `arg0` is the first one, or undef) above it. `Ok(None)`: a block frame was pushed, or
/// the call's result is in place; continue with the top frame. `Ok(Some(v))`: done without
/// iterating.
#[allow(clippy::too_many_arguments)]
pub fn start(ctx: &mut Ctx, recv: Value, me: &MethodEntry, count: usize, arg0: Value, block_iseq: Value, home: usize, ret_sp: usize, site: &CallInfo) -> Result<Option<Value>> {
    ctx.stacks.sp = ret_sp;
    let k = kind_of(me);
    if count == 0 && k == kind::PLAIN {
        return Ok(Some(recv));
    }
    if ctx.stacks.frames.len() + 1 >= ctx.stacks.max_frames {
        return Err(call::stack_overflow(ctx));
    }
    let home_serial = ctx.stacks.frames[home].serial;
    let arg = ret_sp + 1 + keeps_element(k) as usize;
    ctx.stacks.sp = arg;
    let (mut recv, mut owner, mut name) = (recv, me.owner, me.name);
    if k == kind::FILL {
        // `Array.new`: a pass-through frame for it, and the iterator frame runs
        // `Array#initialize` on the new Array.
        if ctx.stacks.frames.len() + 2 >= ctx.stacks.max_frames {
            return Err(call::stack_overflow(ctx));
        }
        push_passthrough(ctx, recv, me.owner, me.name, ret_sp);
        (owner, name) = (recv, sym::INITIALIZE);
        recv = array::with_capacity(ctx, count);
    }
    let (outer, first): (Value, usize) = match k {
        kind::MAP => (array::with_capacity(ctx, count), 0),
        kind::SELECT | kind::REJECT => (array::new(ctx), 0),
        kind::COUNT => (Value::fixnum(0), 0),
        kind::INJECT if arg0.is_undef() => (array::get(recv, 0), 1),
        kind::INJECT => (arg0, 0),
        _ if me.original_name == sym::UPTO => (Value::fixnum(1), 0),
        _ if me.original_name == sym::DOWNTO => (Value::fixnum(-1), 0),
        _ => (Value::NIL, 0),
    };
    call::push_builtin_frame(ctx, recv, owner, name);
    let f = ctx.stacks.frames.last_mut().expect("iterator frame");
    f.flags = if me.original_name == sym::EACH || (k != kind::PLAIN && k != kind::FILL) {
        FRAME_ITER | FRAME_ITER_EACH
    } else if count == usize::MAX {
        FRAME_ITER | FRAME_ITER_LOOP
    } else {
        FRAME_ITER
    };
    if block_iseq.is_symbol() {
        f.flags |= FRAME_ITER_SYM;
        f.locals = site as *const CallInfo as *mut Value;
    }
    f.owner_skip = k;
    f.outer = outer;
    f.ret_sp = ret_sp;
    f.sp_base = arg;
    f.bp = count;
    f.pc = first.wrapping_sub(1);
    f.iseq_val = block_iseq;
    f.home_index = home as u32;
    f.home_serial = home_serial;
    let depth = ctx.stacks.frames.len();
    if let Err(e) = advance(ctx) {
        if ctx.stacks.frames.len() == depth {
            pop_iter(ctx);
            if k == kind::FILL {
                pop_iter(ctx);
            }
        }
        return Err(e);
    }
    Ok(None)
}

/// The iterator frame on top regains control (its block frame left): takes in the block's
/// result, then pushes the next iteration's block frame, or pops the iterator frame and
/// leaves its result. On an error the iterator frame is still on top, for `handle_unwind`
/// to pop.
pub fn step(ctx: &mut Ctx) -> Result<()> {
    let f = ctx.stacks.frames.last_mut().expect("iterator frame");
    if f.home_index == PASSTHROUGH {
        // The method above it left its result in the slot they share.
        let ret_sp = f.ret_sp;
        ctx.stacks.frames.pop();
        ctx.stacks.sp = ret_sp + 1;
        return Ok(());
    }
    if f.owner_skip != kind::PLAIN {
        let v = ctx.stacks.stack[f.sp_base];
        absorb(ctx, ctx.stacks.frames.len() - 1, v);
    }
    advance(ctx)
}

/// Goes on with the iterator frame on top after its iteration `pc`: pushes the next
/// iteration's block frame, or (done) pops the frame and leaves its result.
fn advance(ctx: &mut Ctx) -> Result<()> {
    loop {
        let f = ctx.stacks.frames.last_mut().expect("iterator frame");
        let i = f.pc.wrapping_add(1);
        if finished(f, i) {
            let k = f.owner_skip;
            let (ret_sp, result) = (f.ret_sp, if k == kind::PLAIN || k == kind::WITH_INDEX || k == kind::FILL { f.self_ } else { f.outer });
            ctx.stacks.frames.pop();
            ctx.stacks.stack[ret_sp] = result;
            ctx.stacks.sp = ret_sp + 1;
            return Ok(());
        }
        f.pc = i;
        let k = f.owner_skip;
        if ctx.vm().interrupt.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            crate::interp::ops::handle_interrupt(ctx)?;
        }
        if push_iteration(ctx, i)? {
            return Ok(());
        }
        if k != kind::PLAIN {
            // A Symbol's method ran at once, its result at `sp_base`.
            let fi = ctx.stacks.frames.len() - 1;
            let v = ctx.stacks.stack[ctx.stacks.frames[fi].sp_base];
            absorb(ctx, fi, v);
        }
    }
}

/// Takes in `v`, the block's result for the current iteration of the Array iterator frame
/// `fi` (its kind is not `PLAIN`).
#[inline(never)]
fn absorb(ctx: &mut Ctx, fi: usize, v: Value) {
    let f = &mut ctx.stacks.frames[fi];
    let (k, out, recv) = (f.owner_skip, f.outer, f.self_);
    match k {
        kind::MAP => array::push(ctx, out, v),
        // As in CRuby, `select` takes the element as it is after the block, `reject` the
        // one it gave the block.
        kind::SELECT if v.truthy() => {
            let e = array::get(recv, f.pc);
            array::push(ctx, out, e);
        }
        kind::REJECT if !v.truthy() => {
            let e = ctx.stacks.stack[f.sp_base - 1];
            array::push(ctx, out, e);
        }
        kind::COUNT if v.truthy() => f.outer = Value::fixnum(out.fixnum_unchecked() + 1),
        kind::INJECT => f.outer = v,
        kind::FILL => array::push(ctx, recv, v),
        _ => {}
    }
}

/// The arguments of iteration `i` of iterator frame `f`: how many, and the first two.
#[inline(always)]
fn arguments(f: &Frame, i: usize) -> (usize, Value, Value) {
    match f.owner_skip {
        kind::PLAIN => ((f.flags & FRAME_ITER_LOOP == 0) as usize, argument(f, i), Value::NIL),
        kind::WITH_INDEX => (2, array::get(f.self_, i), Value::fixnum(i as i64)),
        kind::INJECT => (2, f.outer, array::get(f.self_, i)),
        kind::FILL => (1, Value::fixnum(i as i64), Value::NIL),
        _ => (1, array::get(f.self_, i), Value::NIL),
    }
}

/// `home_index` of a pass-through frame (`push_passthrough`).
const PASSTHROUGH: u32 = u32::MAX;

/// Pushes the frame of builtin `owner#mid` called on `recv` with its result slot at `ret_sp`,
/// for a Ruby method frame the caller pushes right above it with the same result slot: the
/// builtin (`public_send`) keeps its backtrace line while its callee runs in this loop. When
/// the callee leaves, `step` pops this frame, the result already in place.
pub fn push_passthrough(ctx: &mut Ctx, recv: Value, owner: Value, mid: crate::symbol::SymId, ret_sp: usize) {
    call::push_builtin_frame(ctx, recv, owner, mid);
    let f = ctx.stacks.frames.last_mut().expect("pass-through frame");
    f.flags = FRAME_ITER;
    f.ret_sp = ret_sp;
    f.home_index = PASSTHROUGH;
}

/// Iteration `i` of a `FRAME_ITER_SYM` iterator frame on top: calls the method named by
/// the Symbol on the iteration's argument. `Ok(true)`: its frame was pushed; `Ok(false)`:
/// it already ran.
#[inline(never)]
fn call_symbol(ctx: &mut Ctx, i: usize) -> Result<bool> {
    let f = ctx.stacks.frames.last().expect("iterator frame");
    let (arg, mid) = (f.sp_base, f.iseq_val.as_symbol().expect("symbol iterator"));
    let recv = argument(f, i);
    // SAFETY: a `FRAME_ITER_SYM` frame's `locals` is its call site (see the module comment).
    let cc = unsafe { &(*(f.locals as *const CallInfo)).cache };
    if keeps_element(f.owner_skip) {
        ctx.stacks.stack[arg - 1] = recv;
    }
    ctx.stacks.stack[arg] = recv;
    ctx.stacks.sp = arg + 1;
    let klass = crate::interp::class_of(ctx, recv);
    let epoch_ok = cc.epoch.get() == ctx.vm().method_epoch();
    let me = if epoch_ok && cc.sym_klass.get() == klass.raw() {
        // SAFETY: `sym_keep` holds the entry while the epoch is current.
        Some(unsafe { &*cc.sym_me.get() })
    } else {
        find_symbol_method(ctx, cc, klass, mid, epoch_ok)
    };
    if let Some((me, &MethodBody::Iseq { iseq, cref })) = me.map(|me| (me, &me.body)) {
        if !call::push_simple_method_frame(ctx, recv, me, iseq, cref, 0, BlockRef::NONE, arg) {
            call::push_method_frame(ctx, recv, me, iseq, cref, 0, None, None, arg, 0)?;
        }
        return Ok(true);
    }
    let r = match crate::core::proc::symbol_target(ctx, recv, mid)? {
        Some(me) => call::invoke_from_rust(ctx, recv, &me, &[], None, None),
        None => call::call_method(ctx, recv, mid, &[], None, None, false),
    };
    let v = r?;
    ctx.stacks.stack[arg] = v;
    ctx.stacks.sp = arg + 1;
    Ok(false)
}

/// The public Ruby method `mid` on `klass` (the one `call_symbol` pushes a frame for), or
/// `None` for any other kind of method; remembered in the call site's cache `cc` when its
/// epoch is current (`cache`).
#[inline(never)]
fn find_symbol_method<'a>(ctx: &Ctx, cc: &CallCache, klass: Value, mid: crate::symbol::SymId, cache: bool) -> Option<&'a MethodEntry> {
    let me = crate::core::module::find_method(ctx, klass, mid)?;
    if me.visibility != Visibility::Public || !matches!(me.body, MethodBody::Iseq { .. }) {
        return None;
    }
    let p = std::sync::Arc::as_ptr(&me);
    if cache {
        cc.sym_klass.set(klass.raw());
        cc.sym_me.set(p);
        *cc.sym_keep.borrow_mut() = Some(me);
    }
    // SAFETY: `klass`'s method cache (and `sym_keep`) hold the entry until a method is
    // defined, which cannot happen before the caller has pushed the method's frame.
    Some(unsafe { &*p })
}

/// Pushes the block frame of iteration `i` of the iterator frame on top (`Ok(true)`), or
/// for a Symbol block makes the call (`call_symbol`).
#[inline]
fn push_iteration(ctx: &mut Ctx, i: usize) -> Result<bool> {
    let frames = &ctx.stacks.frames;
    let f = frames.last().expect("iterator frame");
    if f.flags & FRAME_ITER_SYM != 0 {
        return call_symbol(ctx, i);
    }
    let (arg, home_index, home_serial, iseq) = (f.sp_base, f.home_index, f.home_serial, f.iseq_val);
    let (argc, a, b) = arguments(f, i);
    let k = f.owner_skip;
    let h = &frames[home_index as usize];
    let cap = Captured { iseq, self_: h.self_, env: h.env, cref: h.cref, home_serial, home_index, _pad: 0 };
    let home = HomeMethod::of_serial(h, home_serial);
    ctx.stacks.stack[arg] = a;
    if argc == 2 {
        ctx.stacks.stack[arg + 1] = b;
    } else if keeps_element(k) {
        ctx.stacks.stack[arg - 1] = a;
    }
    ctx.stacks.sp = arg + argc;
    if call::push_simple_block_frame(ctx, &cap, home, argc, arg, 0) {
        ctx.stacks.frames.last_mut().expect("block frame").flags = FRAME_ITER_BLOCK;
        return Ok(true);
    }
    call::push_block_frame(ctx, &cap, argc, None, None, false, None, 0, arg)?;
    Ok(true)
}

/// What `restart` did.
#[derive(Copy, Clone, PartialEq, Eq)]
pub enum Restart {
    /// The iteration is over: the frame leaves normally.
    No,
    /// The frame runs again from its first instruction, with the same locals storage.
    InPlace,
    /// The frame runs again with a new heap environment: reload the frame's state.
    Reload,
}

/// The block frame `fi` (flagged `FRAME_ITER_BLOCK`, a simple block frame directly above its
/// iterator frame) is leaving with `result`: when its iterator goes on, no interrupt is
/// pending and no TracePoint is enabled, takes in the result and starts the next iteration
/// in the same frame (a fresh activation: new serial, arguments and locals reset, a new
/// environment when its locals live on the heap, pc 0).
#[inline(always)]
pub fn restart(ctx: &mut Ctx, fi: usize, nlocals: usize, lead: usize, result: Value) -> Restart {
    // The Array iterators that take in results restart out of line, so that the dispatch
    // loop's `Leave` keeps the code it had for `times` and `each`.
    // SAFETY: a `FRAME_ITER_BLOCK` frame is only pushed directly above its iterator frame.
    if unsafe { ctx.stacks.frames.get_unchecked(fi - 1).owner_skip } != kind::PLAIN {
        return restart_array(ctx, fi, nlocals, lead, result);
    }
    reactivate::<false>(ctx, fi, nlocals, lead, result)
}

/// `restart` under an Array iterator frame whose kind is not `PLAIN`.
#[inline(never)]
fn restart_array(ctx: &mut Ctx, fi: usize, nlocals: usize, lead: usize, result: Value) -> Restart {
    reactivate::<true>(ctx, fi, nlocals, lead, result)
}

/// `restart`, for an iterator frame of kind `PLAIN` (`ARRAY` false) or not.
#[inline(always)]
fn reactivate<const ARRAY: bool>(ctx: &mut Ctx, fi: usize, nlocals: usize, lead: usize, result: Value) -> Restart {
    // SAFETY: as in `restart`; `fi - 1` is the iterator frame.
    let it: &Frame = unsafe { &*ctx.stacks.frames.as_ptr().add(fi - 1) };
    let i = it.pc.wrapping_add(1);
    // While tracing, every iteration gets a new frame so that it reports its `b_call`.
    if finished(it, i) || ctx.vm().interrupt.load(std::sync::atomic::Ordering::Relaxed) != 0 || crate::core::tracepoint::tracing(ctx) {
        return Restart::No;
    }
    // `times` passes the iteration number, `each` the element, `loop` nothing; the other
    // Array iterators take in the result first.
    let (argc, arg, arg2) = if ARRAY { next_arguments(ctx, fi - 1, i, result) } else { ((it.flags & FRAME_ITER_LOOP == 0) as usize, argument(it, i), Value::NIL) };
    // SAFETY: a `FRAME_ITER_BLOCK` frame is only pushed directly above its iterator frame.
    let (it, f): (&mut Frame, &mut Frame) = unsafe {
        let p = ctx.stacks.frames.as_mut_ptr();
        (&mut *p.add(fi - 1), &mut *p.add(fi))
    };
    it.pc = i;
    ctx.frame_serial += 1;
    f.serial = ctx.frame_serial;
    f.pc = 0;
    f.visibility = Visibility::Public;
    f.svar = Value::NIL;
    let (bp, heap, outer) = (f.bp, !f.env.is_nil(), f.outer);
    // A second argument is written even where the block has no parameter for it: slots
    // past its locals are its operand stack, which starts afresh.
    let stack = &mut ctx.stacks.stack[bp..bp + nlocals.max(1 + ARRAY as usize)];
    stack[0] = arg;
    if ARRAY {
        stack[1] = arg2;
    }
    for v in &mut stack[argc.min(lead)..nlocals] {
        *v = Value::NIL;
    }
    ctx.stacks.sp = bp + nlocals;
    if !heap {
        return Restart::InPlace;
    }
    // Blocks may have captured the last iteration's environment: this one gets its own, made
    // from the fresh locals (covered by `sp` while it is allocated).
    let (env, locals) = call::heap_locals(ctx, bp, nlocals, outer, false);
    let f = &mut ctx.stacks.frames[fi];
    f.env = env;
    f.locals = locals;
    ctx.stacks.sp = bp;
    Restart::Reload
}

/// `restart` of a block frame of the Array iterator frame `it` (not `PLAIN`): takes in
/// `result` and gives iteration `i`'s arguments (keeping the element where its kind does).
#[inline]
fn next_arguments(ctx: &mut Ctx, it: usize, i: usize, result: Value) -> (usize, Value, Value) {
    // The block's locals (its operand stack is gone) stay covered while `absorb` allocates;
    // `result` is held here.
    ctx.stacks.sp = ctx.stacks.frames[it + 1].sp_base;
    absorb(ctx, it, result);
    let f = &ctx.stacks.frames[it];
    let args = arguments(f, i);
    if keeps_element(f.owner_skip) {
        ctx.stacks.stack[f.sp_base - 1] = args.1;
    }
    args
}

/// An unwind reaches the iterator frame on top: pops it. `Ok(true)` when the iteration
/// ends with a result instead (a `StopIteration` passing a `loop`), left in the call's
/// result slot for the frame below to continue with.
pub fn unwind(ctx: &mut Ctx, e: &Unwind) -> bool {
    let flags = ctx.stacks.frames.last().map_or(0, |f| f.flags);
    if flags & FRAME_ITER_LOOP != 0 {
        if let Unwind::Raise(exc) = *e {
            if crate::core::object::is_a(ctx, exc, ctx.c().stop_iteration) {
                let result = crate::core::object::ivar_get(ctx, exc, sym::RESULT);
                pop_iter(ctx);
                let sp = ctx.stacks.sp;
                ctx.stacks.stack[sp] = result;
                ctx.stacks.sp = sp + 1;
                return true;
            }
        }
    }
    pop_iter(ctx);
    false
}

/// Pops the iterator frame on top (an unwind passing it, or a failed start).
pub fn pop_iter(ctx: &mut Ctx) {
    if let Some(f) = ctx.stacks.frames.pop() {
        ctx.stacks.sp = f.ret_sp;
    }
}
