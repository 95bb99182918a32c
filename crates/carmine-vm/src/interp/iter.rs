//! Iterator frames: builtin iterators that the dispatch loop drives itself.
//!
//! `Integer#times`, `Integer#upto`/`downto` (with a Fixnum limit), `Kernel#loop` and
//! `Array#each` called from Ruby code with a literal
//! block do not run their Rust loops (which would call the block through `call_block`, re-entering the
//! dispatch loop on the native stack once per iteration). Instead the call pushes a builtin
//! frame marked `FRAME_ITER` and the block frame of the first iteration, and returns to the
//! loop. When a block frame leaves into an iterator frame the loop calls `step`, which
//! pushes the next iteration's block frame or, when done, pops the iterator frame and leaves
//! the call's result. A block frame pushed by the fast path (`push_simple_block_frame`) is
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
//!   `loop`; for `each` (`FRAME_ITER_EACH`) the count is its self's length at every step, as
//!   the block may change it), `outer` nil or, for `upto`/`downto`, the step (Fixnum ±1) from
//!   the receiver to each iteration's argument, `sp_base` the stack slot of the block's argument (where the block's result
//!   lands), `ret_sp` the call's result slot, `iseq_val` with `home_index`/`home_serial` the
//!   literal block (its home is the calling frame, always live below).
//! - An unwind passing an iterator frame pops it and resets `sp` to its result slot (as a
//!   failed builtin call does), so a `break` value lands where the call's result goes; a
//!   `loop` frame instead ends with the result of a `StopIteration` passing it.
//! - With `FRAME_ITER_SYM` (`each(&:name)`, `times(&:name)`: the call site's block is a
//!   Symbol) the iteration's argument is the receiver of a call of that method: a Ruby method's
//!   frame is pushed with its result slot at `sp_base`, as a block frame's would be; any other
//!   method runs at once and the iteration goes on. No Proc is made. `locals` then points to
//!   the call site's `CallInfo` (in the home frame's iseq, alive while that frame is), whose
//!   cache remembers the method for the last element's class (`sym_klass`, `sym_me`), so a
//!   monomorphic iteration looks it up once per call site and method epoch.
//! - A pass-through frame (`push_passthrough`, `home_index` `PASSTHROUGH`) is a
//!   `FRAME_ITER` frame with one Ruby method frame above it sharing its result slot.
//! - No Rust frames sit between the loop and the blocks, so a fiber whose blocks run in
//!   iterator frames can still suspend shallowly (dense mode) and switch fast.

use crate::compile::iseq::{CallCache, CallInfo};
use crate::core::module::{MethodBody, MethodEntry, Visibility};
use crate::error::Unwind;
use crate::interp::call;
use crate::core::array;
use crate::interp::frame::{BlockRef, Captured, Frame, FRAME_ITER, FRAME_ITER_BLOCK, FRAME_ITER_EACH, FRAME_ITER_LOOP, FRAME_ITER_SYM};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The iterator a builtin call can run as, if any: `Some(count)` with the number of
/// iterations (`usize::MAX` for `loop`, the current length for `each`), `Some(0)` for a
/// `times` (or `upto`/`downto`) that does not iterate.
/// `me` is the called entry (under any alias), `recv` its receiver, `args` its positional
/// arguments: none, or for `Integer#upto`/`downto` one Fixnum limit.
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
        return None;
    }
    if !args.is_empty() {
        return None;
    }
    if me.original_name == sym::TIMES && me.owner == ctx.c().integer && recv.is_fixnum() {
        return Some(recv.fixnum_unchecked().max(0) as usize);
    }
    if me.original_name == sym::LOOP && me.owner == ctx.c().kernel {
        return Some(usize::MAX);
    }
    if me.original_name == sym::EACH && me.owner == ctx.c().array && array::is_array(recv) {
        return Some(array::len(recv));
    }
    None
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
/// site `site` of `home`. Its receiver sits at `ret_sp`, its arguments (read already) above
/// it. `Ok(None)`: a block frame was pushed, continue with the top frame; `Ok(Some(v))`: done
/// without iterating.
#[allow(clippy::too_many_arguments)]
pub fn start(ctx: &mut Ctx, recv: Value, me: &MethodEntry, count: usize, block_iseq: Value, home: usize, ret_sp: usize, site: &CallInfo) -> Result<Option<Value>> {
    ctx.stacks.sp = ret_sp;
    if count == 0 {
        return Ok(Some(recv));
    }
    if ctx.stacks.frames.len() + 1 >= ctx.stacks.max_frames {
        return Err(call::stack_overflow(ctx));
    }
    let home_serial = ctx.stacks.frames[home].serial;
    let arg = ret_sp + 1;
    ctx.stacks.sp = arg;
    call::push_builtin_frame(ctx, recv, me.owner, me.name);
    let f = ctx.stacks.frames.last_mut().expect("iterator frame");
    f.flags = if me.original_name == sym::EACH {
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
    if me.original_name == sym::UPTO {
        f.outer = Value::fixnum(1);
    } else if me.original_name == sym::DOWNTO {
        f.outer = Value::fixnum(-1);
    }
    f.ret_sp = ret_sp;
    f.sp_base = arg;
    f.bp = count;
    f.pc = 0;
    f.iseq_val = block_iseq;
    f.home_index = home as u32;
    f.home_serial = home_serial;
    let depth = ctx.stacks.frames.len();
    let r = match push_iteration(ctx, 0) {
        Ok(true) => Ok(()),
        Ok(false) => step(ctx),
        Err(e) => Err(e),
    };
    if let Err(e) = r {
        if ctx.stacks.frames.len() == depth {
            pop_iter(ctx);
        }
        return Err(e);
    }
    Ok(None)
}

/// The iterator frame on top regains control (its block frame left): pushes the next
/// iteration's block frame, or pops the iterator frame and leaves its result. On an error
/// the iterator frame is still on top, for `handle_unwind` to pop.
pub fn step(ctx: &mut Ctx) -> Result<()> {
    loop {
        let f = ctx.stacks.frames.last_mut().expect("iterator frame");
        if f.home_index == PASSTHROUGH {
            // The method above it left its result in the slot they share.
            let ret_sp = f.ret_sp;
            ctx.stacks.frames.pop();
            ctx.stacks.sp = ret_sp + 1;
            return Ok(());
        }
        let i = f.pc.wrapping_add(1);
        if finished(f, i) {
            let (ret_sp, recv) = (f.ret_sp, f.self_);
            ctx.stacks.frames.pop();
            ctx.stacks.stack[ret_sp] = recv;
            ctx.stacks.sp = ret_sp + 1;
            return Ok(());
        }
        f.pc = i;
        if ctx.vm().interrupt.load(std::sync::atomic::Ordering::Relaxed) != 0 {
            crate::interp::ops::handle_interrupt(ctx)?;
        }
        if push_iteration(ctx, i)? {
            return Ok(());
        }
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
    ctx.stacks.sp = arg;
    r.map(|_| false)
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
    let argc = if f.flags & FRAME_ITER_LOOP != 0 { 0 } else { 1 };
    let v = argument(f, i);
    let h = &frames[home_index as usize];
    let cap = Captured { iseq, self_: h.self_, env: h.env, cref: h.cref, home_serial, home_index, _pad: 0 };
    ctx.stacks.stack[arg] = v;
    ctx.stacks.sp = arg + argc;
    if call::push_simple_block_frame(ctx, &cap, argc, arg, 0) {
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
/// iterator frame) is leaving: when its iterator goes on, no interrupt is pending and no
/// TracePoint is enabled, starts the next iteration in the same frame (a fresh activation:
/// new serial, argument and locals reset, a new environment when its locals live on the
/// heap, pc 0).
#[inline(always)]
pub fn restart(ctx: &mut Ctx, fi: usize, nlocals: usize, lead: usize) -> Restart {
    // SAFETY: a `FRAME_ITER_BLOCK` frame is only pushed directly above its iterator frame.
    let (it, f): (&mut Frame, &mut Frame) = unsafe {
        let p = ctx.stacks.frames.as_mut_ptr();
        (&mut *p.add(fi - 1), &mut *p.add(fi))
    };
    let i = it.pc.wrapping_add(1);
    // While tracing, every iteration gets a new frame so that it reports its `b_call`.
    if finished(it, i) || ctx.vm().interrupt.load(std::sync::atomic::Ordering::Relaxed) != 0 || crate::core::tracepoint::tracing(ctx) {
        return Restart::No;
    }
    it.pc = i;
    // `times` passes the iteration number, `each` the element, `loop` nothing.
    let argc = (it.flags & FRAME_ITER_LOOP == 0) as usize;
    let arg = argument(it, i);
    ctx.frame_serial += 1;
    f.serial = ctx.frame_serial;
    f.pc = 0;
    f.visibility = Visibility::Public;
    f.svar = Value::NIL;
    let (bp, heap, outer) = (f.bp, !f.env.is_nil(), f.outer);
    let stack = &mut ctx.stacks.stack[bp..bp + nlocals.max(1)];
    stack[0] = arg;
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
