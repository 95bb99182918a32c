//! Semantics of the instructions that are too large for the dispatch loop: calls, yield,
//! super, constants, class variables, definitions, `defined?`, pattern helpers.
//!
//! Invariant: a call operation that fails leaves `ctx.stacks.sp` at the call's result
//! slot, where a `break` aimed at the calling frame puts its value.

use std::cell::Cell;
use std::sync::Arc;

use crate::compile::iseq::{iseq_of, call_flags as cf, CallCache, CallInfo, Insn, Iseq, PIC_SIZE};
use crate::core::module::{self, ClassKind, MethodBody, MethodEntry, Visibility};
use crate::core::{array, hash, object, string};
use crate::error::Unwind;
use crate::interp::call::{self, call_builtin, MissingKind};
use crate::interp::iter;
use crate::interp::env::{cref, CREF_EVAL};
use crate::interp::exec::capture_block;
use crate::interp::frame::{Block, BlockRef, Captured, Frame, FrameKind, HomeMethod};
use crate::interp::{class_of, Args};
use crate::object::{basic, ObjType, RObject};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Bits of `Vm::redefined`: a core class had an operator redefined (or a module mixed in),
/// so the dispatch loop's fast paths for it are off.
pub const REDEF_INTEGER: u32 = 1;
pub const REDEF_FLOAT: u32 = 2;
pub const REDEF_STRING: u32 = 4;
pub const REDEF_ARRAY: u32 = 8;
pub const REDEF_HASH: u32 = 16;
pub const REDEF_NOT: u32 = 32;
pub const REDEF_SYMBOL: u32 = 64;
/// NilClass#to_a (or respond_to?) was redefined: `*nil` must call it.
pub const REDEF_NIL_TO_A: u32 = 128;
/// `==` redefined on NilClass, TrueClass or FalseClass (or Object/Kernel/BasicObject).
pub const REDEF_SPECIAL_EQ: u32 = 256;

// ---- calls ----

/// The block of the running frame, which passes it on with `&blk` as a
/// `Value::BLOCK_PARAM_PROXY`: the call consuming the proxy runs in the frame that pushed it.
fn passed_on_block(ctx: &Ctx) -> Option<Block> {
    let frames = &ctx.stacks.frames;
    frames.last().and_then(|f| f.block(frames))
}

/// Converts a `&arg` value to a block.
pub fn block_from_value(ctx: &mut Ctx, v: Value) -> Result<Option<Block>> {
    if v.is_nil() {
        return Ok(None);
    }
    if v == Value::BLOCK_PARAM_PROXY {
        return Ok(passed_on_block(ctx));
    }
    if crate::core::proc::is_proc(v) {
        return Ok(Some(Block::Proc(v)));
    }
    if let Some(s) = v.as_symbol() {
        let p = crate::core::proc::symbol_proc(ctx, s);
        // `&:sym` in a scope with refinements calls the refined method.
        if let Some(f) = ctx.stacks.frames.last() {
            if !crate::core::refinement::frame_refinements(f).is_nil() {
                crate::core::proc::set_symbol_scope(p, f.cref);
            }
        }
        return Ok(Some(Block::Proc(p)));
    }
    if let Some(me) = crate::core::refinement::refined_method_for(ctx, v, sym::TO_PROC) {
        let p = crate::interp::call::invoke_from_rust(ctx, v, &me, &[], None, None)?;
        if crate::core::proc::is_proc(p) {
            return Ok(Some(Block::Proc(p)));
        }
    }
    if !ctx.respond_to(v, sym::TO_PROC, true) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Proc)")));
    }
    let p = ctx.call(v, sym::TO_PROC, &[])?;
    if !crate::core::proc::is_proc(p) {
        let cname = object::class_name_of(ctx, v);
        let rname = object::class_name_of(ctx, p);
        return Err(ctx.type_error(&format!("can't convert {cname} into Proc ({cname}#to_proc gives {rname})")));
    }
    Ok(Some(Block::Proc(p)))
}

/// Whether `KW_ARGS` keywords of `ci` stay on the stack through `prepare_args(.., true)`,
/// right after the positional arguments, for a callee that binds them directly.
#[inline]
fn kw_on_stack(ci: &CallInfo) -> bool {
    ci.flags & (cf::KW_ARGS | cf::SPLAT) == cf::KW_ARGS
}

/// Whether `me` binds the keywords of a `kw_on_stack` call site without a Hash.
fn binds_stacked_kw(me: &MethodEntry) -> Option<(Value, Value)> {
    match me.body {
        MethodBody::Iseq { iseq, cref } if iseq_of(iseq).params.accepts_kw() => Some((iseq, cref)),
        _ => None,
    }
}

/// The Hash of the `kw_on_stack` keywords at `stack[at..]`, left where the first of them
/// was, with `sp` lowered to it (as `prepare_args` leaves a keyword Hash).
fn pop_kw_hash(ctx: &mut Ctx, ci: &CallInfo, at: usize) -> Result<Value> {
    let h = call::kw_hash(ctx, &ci.kw_keys, at)?;
    ctx.stacks.stack[at] = h;
    ctx.stacks.sp = at;
    Ok(h)
}

/// Pops the block argument, keyword hash and splat of a call site, leaving plain positional
/// arguments at the top of the stack. Returns (argc, keywords, block-from-&arg). With
/// `keep_kw`, `kw_on_stack` keywords stay above the positional arguments (not returned).
fn prepare_args(ctx: &mut Ctx, ci: &CallInfo, keep_kw: bool) -> Result<(usize, Option<Value>, Option<Block>)> {
    let mut sp = ctx.stacks.sp;
    let mut block = None;
    if ci.has(cf::BLOCK_ARG) {
        sp -= 1;
        let b = ctx.stacks.stack[sp];
        ctx.stacks.sp = sp + 1;
        block = block_from_value(ctx, b)?;
        ctx.stacks.sp = sp;
    }
    let mut kw = None;
    if ci.has(cf::KW_ARGS) {
        sp -= ci.kw_keys.len();
        ctx.stacks.sp = sp + ci.kw_keys.len();
        if keep_kw && kw_on_stack(ci) {
            return Ok((ci.argc as usize, None, block));
        }
        kw = Some(pop_kw_hash(ctx, ci, sp)?);
    } else if ci.has(cf::KW_HASH) {
        sp -= 1;
        let h = ctx.stacks.stack[sp];
        ctx.stacks.sp = sp;
        if hash::is_hash(h) && hash::len(h) > 0 {
            kw = Some(h);
        } else if !hash::is_hash(h) && !h.is_nil() {
            kw = Some(h);
        }
    }
    let mut argc = ci.argc as usize;
    if ci.has(cf::SPLAT) {
        sp -= 1;
        let a = ctx.stacks.stack[sp];
        let n = array::len(a);
        if sp + n + 64 > ctx.stacks.stack.len() {
            return Err(call::stack_overflow(ctx));
        }
        for i in 0..n {
            ctx.stacks.stack[sp + i] = array::get(a, i);
        }
        sp += n;
        argc = argc - 1 + n;
        // A trailing Hash from a ruby2_keywords splat becomes keywords.
        if kw.is_none() && n > 0 {
            let last = ctx.stacks.stack[sp - 1];
            if hash::is_hash(last) && hash::is_ruby2_keywords(last) {
                sp -= 1;
                argc -= 1;
                if hash::len(last) > 0 {
                    kw = Some(last);
                }
            }
        }
        ctx.stacks.sp = sp;
    }
    Ok((argc, kw, block))
}

/// The method entry for `mid` on `klass`, through the call site's inline cache.
#[inline]
fn lookup_cached(ctx: &Ctx, ci: &CallInfo, klass: Value) -> Option<Arc<MethodEntry>> {
    let epoch = ctx.vm().method_epoch();
    let cc = &ci.cache;
    if cc.epoch.get() == epoch {
        if let Some(i) = cc.position(klass.raw()) {
            return cc.entry_arc(i);
        }
    } else {
        cc.clear_entries(epoch);
        cc.fast_klass.set(0);
        cc.sym_klass.set(0);
        *cc.sym_keep.borrow_mut() = None;
    }
    // A call site in a scope with refinements (`using`) sees them; the site's cache holds
    // what it saw.
    let active = ctx.stacks.frames.last().map_or(Value::NIL, crate::core::refinement::frame_refinements);
    let me = if active.is_nil() { module::find_method(ctx, klass, ci.mid) } else { crate::core::refinement::find_method_refined(ctx, klass, ci.mid, active) };
    if cc.add_entry(klass.raw(), me.clone()) == cc.fast_klass.get() {
        cc.fast_klass.set(0);
    }
    if let Some(m) = me.as_ref() {
        let (leaf, leaf_fn) = match m.body {
            MethodBody::Builtin { f, .. } => crate::interp::leaf::lookup(f, ci.argc as usize).map_or((crate::interp::leaf::Cond::No, None), |(c, lf)| (c, Some(lf))),
            _ => (crate::interp::leaf::Cond::No, None),
        };
        if let Some(pc) = fast_target(ci, m, leaf) {
            cc.fast_klass.set(klass.raw());
            cc.fast_me.set(Arc::as_ptr(m));
            cc.fast_pc.set(pc);
            cc.fast_leaf.set(leaf as u8);
            cc.leaf_fn.set(leaf_fn);
        }
    }
    me
}

/// Gives the frame just pushed above frame `fi` (running `iseq`) that frame's literal block
/// `child`. Out of line: computed inside the dispatch loop's fast call path, the block made
/// the whole loop spill more (+18 instructions per plain call).
#[inline(never)]
pub fn give_literal_block(ctx: &mut Ctx, iseq: &Iseq, fi: usize, child: u32) {
    let serial = ctx.stacks.frames[fi].serial;
    ctx.stacks.frames[fi + 1].block = BlockRef { v: iseq.children[child as usize], home: fi as u32, serial };
}

/// Whether the dispatch loop may enter `me` from call site `ci` with no checks beyond the
/// receiver's class and room on the stacks (for an attribute method: the site's ivar cache):
/// a plain call allowed by visibility, of a Ruby method taking the site's positional
/// arguments as required parameters (or as required and some of its optional ones, where it
/// has no other kind), with its locals on the value stack, and, if the site passes a literal
/// block, using its block (else the unused-block warning has to be considered); or of an
/// attribute reader or writer without a block; or of a leaf builtin (`leaf`, its
/// `leaf::lookup` for this site) without a block. `Some(pc)`: where the method's frame starts
/// for this site (0 for the others).
fn fast_target(ci: &CallInfo, me: &MethodEntry, leaf: crate::interp::leaf::Cond) -> Option<u32> {
    let visible = me.visibility == Visibility::Public || ci.has(cf::FCALL) || ci.has(cf::SELF_RECV);
    if !ci.plain() || !visible {
        return None;
    }
    let no_block = ci.block == u32::MAX;
    match me.body {
        MethodBody::Iseq { iseq, .. } => {
            let callee = iseq_of(iseq);
            let p = &callee.params;
            let pc = if p.simple && p.lead == ci.argc {
                0
            } else if p.opt_simple && (p.lead..=p.lead + p.opt).contains(&ci.argc) {
                p.opt_pcs[(ci.argc - p.lead) as usize]
            } else {
                return None;
            };
            (!callee.locals_on_heap && (no_block || callee.uses_block)).then_some(pc)
        }
        MethodBody::AttrReader(_) => (ci.argc == 0 && no_block).then_some(0),
        MethodBody::AttrWriter(_) => (ci.argc == 1 && no_block).then_some(0),
        MethodBody::Builtin { .. } => (no_block && leaf != crate::interp::leaf::Cond::No).then_some(0),
        _ => None,
    }
}

/// `proc.call(args)` (and its aliases) on a proc made from a Ruby block: the block's frame
/// runs in this dispatch loop, as for `yield`, instead of in a nested one under a builtin
/// frame. The arguments move down over the receiver's slot, where the block's locals start and
/// its result goes. `None` (nothing changed) for procs the general path must run.
#[inline(never)]
fn push_proc_call(ctx: &mut Ctx, p: Value, argc: usize, ret_sp: usize) -> Option<Result<()>> {
    let cap = crate::core::proc::captured(p)?;
    ctx.stacks.stack.copy_within(ret_sp + 1..ret_sp + 1 + argc, ret_sp);
    let lambda = crate::core::proc::is_lambda(p);
    if lambda || !call::push_simple_block_frame(ctx, &cap, HomeMethod::find(&ctx.stacks.frames, &cap), argc, ret_sp, 0) {
        if let Err(e) = call::push_block_frame(ctx, &cap, argc, None, None, lambda, None, 0, ret_sp) {
            ctx.stacks.sp = ret_sp;
            return Some(Err(e));
        }
    }
    crate::core::proc::restore_home(ctx, p);
    Some(Ok(()))
}

/// A call of the leaf builtin (`interp::leaf`) cached at site `ci`, whose receiver is at
/// `ret_sp`, without a frame, when the site's cache marked it as one for the receiver's class
/// and the call meets its `Cond`; `None` (nothing done) otherwise. Checked first in
/// `send_cached`, before the general cache lookup (`a.last`: 393 -> 355 instructions per
/// loop iteration). Out of line, and reached from `send_cached` rather than from the dispatch
/// loop's cached path: in the loop (even out of line) it made every instruction's dispatch
/// spill more (a `while` loop +6% instructions, a plain call +18 instructions).
#[inline(never)]
fn leaf_call(ctx: &mut Ctx, ci: &CallInfo, ret_sp: usize) -> Option<Value> {
    let cc = &ci.cache;
    let recv = ctx.stacks.stack[ret_sp];
    // (A TracePoint wants the builtin's c_call/c_return events: the general path gives them.)
    if crate::interp::class_of(ctx, recv).raw() != cc.fast_klass.get() || cc.epoch.get() != ctx.vm().method_epoch() || crate::core::tracepoint::tracing(ctx) {
        return None;
    }
    let f = cc.leaf_fn.get()?;
    // SAFETY: the arguments stay on the stack, below sp, for the whole call.
    let args = unsafe { std::slice::from_raw_parts(ctx.stacks.stack.as_ptr().add(ret_sp + 1), ci.argc as usize) };
    if !crate::interp::leaf::allows(cc.fast_leaf.get(), recv, args) {
        return None;
    }
    let v = crate::interp::leaf::call(ctx, f, recv, args);
    if v.is_undef() {
        // Declined (see `leaf`): the general path.
        return None;
    }
    ctx.stacks.sp = ret_sp;
    Some(v)
}

/// The common call: plain positional arguments (and possibly a literal block), and an
/// inline-cache hit on a Ruby method with only required parameters or on a builtin. Works
/// from the cache's raw entry pointer, which the cache holds alive, instead of cloning the
/// `Arc` (two atomic operations per call). `None` when the general path must run.
#[inline(always)]
pub fn send_cached(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci: &CallInfo) -> Option<Result<Option<Value>>> {
    if !ci.plain() {
        return None;
    }
    let argc = ci.argc as usize;
    let ret_sp = ctx.stacks.sp - argc - 1;
    if ci.cache.fast_leaf.get() != 0 {
        if let Some(v) = leaf_call(ctx, ci, ret_sp) {
            return Some(Ok(Some(v)));
        }
    }
    let recv = ctx.stacks.stack[ret_sp];
    let me = cache_hit(ctx, ci, recv)?;
    let caller = iseq;
    let block = |ctx: &Ctx| if ci.block != u32::MAX { Some(capture_block(ctx, caller, fi, ci.block)) } else { None };
    match me.body {
        MethodBody::Iseq { iseq, cref } => {
            if ci.block != u32::MAX && !iseq_of(iseq).uses_block {
                if let Err(e) = warn_unused_block(ctx, fi, ci, me, iseq) {
                    return Some(Err(e));
                }
            }
            // The literal block as the frame stores it, without building a `Block` first.
            let bref = if ci.block == u32::MAX {
                BlockRef::NONE
            } else {
                // SAFETY: fi is the caller's live frame.
                let serial = unsafe { ctx.stacks.frames.get_unchecked(fi).serial };
                BlockRef { v: caller.children[ci.block as usize], home: fi as u32, serial }
            };
            if call::push_simple_method_frame(ctx, recv, me, iseq, cref, argc, bref, ret_sp) {
                return Some(Ok(None));
            }
            let block = block(ctx);
            let r = call::push_method_frame(ctx, recv, me, iseq, cref, argc, None, block, ret_sp, 0);
            Some(match r {
                Ok(()) => Ok(None),
                Err(e) => {
                    ctx.stacks.sp = ret_sp;
                    Err(e)
                }
            })
        }
        MethodBody::Builtin { .. } if !(me.original_name == sym::NEW && me.owner == ctx.c().class) => {
            if let Some(public) = sends(me) {
                // `send`/`public_send` run their target in place; with a literal block the
                // general path does (`send_in_place` with the captured block), and what it
                // cannot take (a name that is not a Symbol, method_missing…) is the builtin's
                // to run, below.
                if ci.block != u32::MAX {
                    return None;
                }
                if let Some(r) = send_in_place(ctx, &ci.cache, recv, public, argc, None, None, ret_sp) {
                    if r.is_err() {
                        ctx.stacks.sp = ret_sp;
                    }
                    return Some(r);
                }
            }
            // SAFETY: the arguments stay on the stack, below sp, for the whole call.
            let args = unsafe { std::slice::from_raw_parts(ctx.stacks.stack.as_ptr().add(ret_sp + 1), argc) };
            if ci.block != u32::MAX && argc <= 1 {
                if let Some(n) = iter::iterations(ctx, me, recv, args) {
                    let arg0 = args.first().copied().unwrap_or(Value::UNDEF);
                    return Some(iter::start(ctx, recv, me, n, arg0, caller.children[ci.block as usize], fi, ret_sp, ci));
                }
            }
            if let MethodBody::Builtin { f, .. } = me.body {
                if ci.block == u32::MAX {
                    let r = if crate::core::fiber::is_switch(f) && !crate::core::tracepoint::tracing(ctx) {
                        crate::fiber::switch_from_loop(ctx, recv, args)
                    } else if argc == 0 && crate::core::enumerator::is_next(f) {
                        crate::core::fiber::next_from_loop(ctx, recv, me)
                    } else if crate::core::proc::is_call(f) && !crate::core::tracepoint::tracing(ctx) {
                        match push_proc_call(ctx, recv, argc, ret_sp) {
                            Some(Ok(())) => return Some(Ok(None)),
                            Some(Err(e)) => Some(Err(e)),
                            None => None,
                        }
                    } else {
                        None
                    };
                    if let Some(r) = r {
                        ctx.stacks.sp = ret_sp;
                        return Some(r.map(Some));
                    }
                }
            }
            let block = block(ctx);
            let r = call_builtin(ctx, recv, me, &Args { pos: args, kw: None, block });
            ctx.stacks.sp = ret_sp;
            Some(r.map(Some))
        }
        MethodBody::Builtin { .. } => {
            // `Class#new` (the only builtin the arm above leaves): allocate and push
            // `initialize` right here when it is a Ruby method.
            let block = block(ctx);
            match inline_class_new(ctx, recv, argc, None, block, ret_sp, Some(&ci.cache)) {
                Ok(Some(r)) => Some(Ok(r)),
                Ok(None) => None,
                Err(e) => {
                    ctx.stacks.sp = ret_sp;
                    Some(Err(e))
                }
            }
        }
        MethodBody::Proc(p) if ci.block == u32::MAX => {
            // A `define_method` body run by this dispatch loop (not a nested one): its
            // arguments move down over the receiver's slot, where the block frame's locals
            // start and where its result goes.
            let cap = crate::core::proc::captured(p)?;
            ctx.stacks.stack.copy_within(ret_sp + 1..ret_sp + 1 + argc, ret_sp);
            let home = HomeMethod::find(&ctx.stacks.frames, &cap);
            if !call::push_simple_bmethod_frame(ctx, &Captured { self_: recv, ..cap }, home, argc, ret_sp) {
                let r = call::push_block_frame(ctx, &cap, argc, None, None, true, Some((recv, cap.cref)), crate::interp::frame::FRAME_BMETHOD, ret_sp);
                if let Err(e) = r {
                    ctx.stacks.sp = ret_sp;
                    return Some(Err(e));
                }
            }
            crate::core::proc::restore_home(ctx, p);
            if let Some(f) = ctx.stacks.frames.last_mut() {
                f.owner = me.owner;
                f.mid = Some(me.name);
            }
            Some(Ok(None))
        }
        MethodBody::AttrReader(_) if argc == 0 && ci.block == u32::MAX => attr_call(ctx, &me.body, recv, &ci.cache, ret_sp),
        MethodBody::AttrWriter(_) if argc == 1 && ci.block == u32::MAX => attr_call(ctx, &me.body, recv, &ci.cache, ret_sp),
        _ => None,
    }
}

/// An attribute reader's or writer's call (no block, the receiver at `ret_sp`, a writer's
/// value above it) through the call site's ivar cache: its result, the stack popped to
/// `ret_sp`. `None` for any other method body.
#[inline(always)]
fn attr_call(ctx: &mut Ctx, body: &MethodBody, recv: Value, cc: &CallCache, ret_sp: usize) -> Option<Result<Option<Value>>> {
    match *body {
        MethodBody::AttrReader(name) => {
            let v = ivar_get_fast(ctx, recv, name, &cc.ivar);
            ctx.stacks.sp = ret_sp;
            Some(Ok(Some(v)))
        }
        MethodBody::AttrWriter(name) => {
            let v = ctx.stacks.stack[ret_sp + 1];
            let r = ivar_set_fast(ctx, recv, name, v, &cc.ivar);
            ctx.stacks.sp = ret_sp;
            Some(r.map(|()| Some(v)))
        }
        _ => None,
    }
}

/// A Float and a Fixnum (in either order) as two `f64`s, when the Fixnum converts exactly
/// (|n| ≤ 2^53). Then Float arithmetic and comparison on the pair is what `Integer#+`,
/// `Float#<` and the rest compute (CRuby converts the Fixnum the same way, and compares
/// exactly, which the exact conversion preserves).
#[inline(always)]
pub fn mixed_float_operands(a: Value, b: Value) -> Option<(f64, f64)> {
    const EXACT: i64 = 1 << 53;
    let exact = |v: Value| v.is_fixnum() && (-EXACT..=EXACT).contains(&v.fixnum_unchecked());
    if a.is_flonum() && exact(b) {
        Some((a.flonum_unchecked(), b.fixnum_unchecked() as f64))
    } else if exact(a) && b.is_flonum() {
        Some((a.fixnum_unchecked() as f64, b.flonum_unchecked()))
    } else {
        None
    }
}

/// Whether an ivar cache holds `obj`'s class layout (then its index is valid for `obj`).
#[inline(always)]
pub fn ivar_cache_hit(ctx: &Ctx, obj: Value, cache: &(Cell<u64>, Cell<u32>)) -> bool {
    obj.is_heap() && basic(obj).obj_type() == ObjType::Object && basic(obj).klass.raw() | ctx.vm().class_key_bits() == cache.0.get()
}

/// Whether `obj`'s instance variables may be written through `cache`: its layout is cached
/// and it is not frozen.
#[inline(always)]
pub fn ivar_cache_writable(ctx: &Ctx, obj: Value, cache: &(Cell<u64>, Cell<u32>)) -> bool {
    ivar_cache_hit(ctx, obj, cache) && basic(obj).flags & crate::object::FL_FROZEN == 0
}

/// `obj`'s instance variable `id` through `cache` (filled on a miss).
#[inline(always)]
pub fn ivar_get_fast(ctx: &mut Ctx, obj: Value, id: SymId, cache: &(Cell<u64>, Cell<u32>)) -> Value {
    match ivar_cached(ctx, obj, cache) {
        Some(v) => v,
        None => get_ivar_cached(ctx, obj, id, cache),
    }
}

/// `obj`'s instance variable at the slot `cache` holds, when `cache` holds `obj`'s layout
/// (an unset variable reads nil); None on a miss.
#[inline(always)]
pub fn ivar_cached(ctx: &Ctx, obj: Value, cache: &(Cell<u64>, Cell<u32>)) -> Option<Value> {
    if !ivar_cache_hit(ctx, obj, cache) {
        return None;
    }
    // SAFETY: type checked; the index came from this class's layout.
    let v = unsafe { (*obj.as_ptr::<RObject>()).ivar(cache.1.get() as usize) };
    Some(if v.is_undef() { Value::NIL } else { v })
}

/// Sets `obj`'s instance variable `id` through `cache` (FrozenError on a frozen object).
#[inline(always)]
pub fn ivar_set_fast(ctx: &mut Ctx, obj: Value, id: SymId, v: Value, cache: &(Cell<u64>, Cell<u32>)) -> Result<()> {
    if ivar_cache_writable(ctx, obj, cache) {
        // SAFETY: type checked; the index came from this class's layout.
        unsafe { (*obj.as_ptr::<RObject>()).set_ivar(cache.1.get() as usize, v) };
        return Ok(());
    }
    set_ivar_cached(ctx, obj, id, v, cache)
}

/// The value a `GetConst` inline cache holds for lexical scope `cref`, if still valid.
#[inline(always)]
pub fn const_cache_hit(ctx: &Ctx, cache: &(Cell<u64>, Cell<Value>, Cell<Value>), cref: Value) -> Option<Value> {
    (cache.0.get() == ctx.vm().const_epoch() && cache.2.get() == cref).then(|| cache.1.get())
}

/// The method entry the inline cache of `ci` holds for `recv`, when it is valid and callable
/// from this site (visibility).
#[inline(always)]
pub fn cache_hit<'a>(ctx: &Ctx, ci: &'a CallInfo, recv: Value) -> Option<&'a MethodEntry> {
    let k = class_of(ctx, recv).raw();
    let cc = &ci.cache;
    if cc.epoch.get() != ctx.vm().method_epoch() {
        return None;
    }
    let i = if cc.klass[0].get() == k {
        0
    } else {
        (1..PIC_SIZE).find(|&i| cc.klass[i].get() == k)?
    };
    // On a cache hit the cache owns the entry (`CallCache::entry`); it is only rewritten by a
    // later lookup at this call site, and the entry is not used after control reaches Ruby
    // code.
    let me: &MethodEntry = cc.entry(i)?;
    if me.visibility != Visibility::Public && !ci.has(cf::FCALL) && !ci.has(cf::SELF_RECV) {
        return None;
    }
    Some(me)
}

/// The attribute a 0-argument operator send reads (`disk.size` compiled as `OptSize`, with
/// `attr_reader :size`) when the call site's cache holds that reader for `recv`'s class and
/// its ivar cache `recv`'s layout: the value, without a call. None otherwise, and while
/// tracing (the send reports its `:c_call`).
#[inline(always)]
pub fn cached_attr_read<const TRACE: bool>(ctx: &Ctx, iseq: &Iseq, ci: u32, recv: Value) -> Option<Value> {
    if TRACE {
        return None;
    }
    // SAFETY: call indices in code are within the iseq's `calls`.
    let cc = &unsafe { iseq.calls.get_unchecked(ci as usize) }.cache;
    if cc.fast_klass.get() == 0 || class_of(ctx, recv).raw() != cc.fast_klass.get() || cc.epoch.get() != ctx.vm().method_epoch() {
        return None;
    }
    // SAFETY: the cache's entries (`CallCache::entry`) hold it while the epoch is current.
    let me = unsafe { &*cc.fast_me.get() };
    if !matches!(me.body, MethodBody::AttrReader(_)) {
        return None;
    }
    ivar_cached(ctx, recv, &cc.ivar)
}

/// A call through the inline cache when it applies, else the general path. (The send of an
/// operator instruction whose own fast path did not apply: `disk.size` on an object whose
/// `size` is an attribute reader.)
#[inline(never)]
pub fn send_any(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci_idx: usize) -> Result<Option<Value>> {
    let c = &iseq.calls[ci_idx];
    if let Some(r) = send_fast(ctx, c) {
        return r;
    }
    match send_cached(ctx, iseq, fi, c) {
        Some(r) => r,
        None => send(ctx, iseq, fi, ci_idx),
    }
}

/// What the dispatch loop's `Send` arm does on a hit of the call site's `fast_klass`
/// (`fast_target`: the argument count fits, no literal block), without `send_cached`'s
/// checks: a Ruby method's frame pushed (`Ok(None)`), an attribute read or written through
/// the site's ivar cache (`attr_call`). `None` (nothing changed) otherwise, and always
/// while tracing (`:call` / `:c_call` events).
#[inline(always)]
fn send_fast(ctx: &mut Ctx, c: &CallInfo) -> Option<Result<Option<Value>>> {
    let cc = &c.cache;
    if cc.fast_klass.get() == 0 || c.block != u32::MAX || crate::core::tracepoint::tracing(ctx) {
        return None;
    }
    let argc = c.argc as usize;
    let ret_sp = ctx.stacks.sp - argc - 1;
    let recv = ctx.stacks.stack[ret_sp];
    if class_of(ctx, recv).raw() != cc.fast_klass.get() || cc.epoch.get() != ctx.vm().method_epoch() {
        return None;
    }
    // SAFETY: the cache's entries (`CallCache::entry`) hold it while the epoch is current.
    let me = unsafe { &*cc.fast_me.get() };
    match me.body {
        MethodBody::Iseq { iseq, cref } => {
            call::push_fast_method_frame(ctx, recv, me, iseq, cref, argc, cc.fast_pc.get() as usize, ret_sp).map(|_| Ok(None))
        }
        _ => attr_call(ctx, &me.body, recv, cc, ret_sp),
    }
}

pub fn send(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci_idx: usize) -> Result<Option<Value>> {
    let ci = &iseq.calls[ci_idx];
    if ci.has(cf::BLOCK_ARG) {
        if let Some(r) = send_proc_block_cached(ctx, ci) {
            return r;
        }
    }
    let ret_sp = ctx.stacks.sp - ci.arg_slots() - 1;
    let r = send_inner(ctx, iseq, fi, ci, ret_sp);
    if r.is_err() {
        ctx.stacks.sp = ret_sp;
    }
    r
}

/// `recv.m(args, &blk)` with a Proc (or nil) as `blk`, plain positional arguments and an
/// inline-cache hit on a Ruby method that uses its block: the frame is pushed with the proc
/// as its block, without `send_inner`'s general argument handling. `None` (nothing changed)
/// when any of that does not hold.
#[inline(never)]
fn send_proc_block_cached(ctx: &mut Ctx, ci: &CallInfo) -> Option<Result<Option<Value>>> {
    if ci.flags & (cf::KW_HASH | cf::KW_ARGS | cf::SPLAT | cf::SAFE_NAV) != 0 {
        return None;
    }
    let argc = ci.argc as usize;
    let sp = ctx.stacks.sp;
    let b = ctx.stacks.stack[sp - 1];
    let block = if b.is_nil() {
        BlockRef::NONE
    } else if b == Value::BLOCK_PARAM_PROXY {
        // The running frame's block, passed on as it is: its home frame is below.
        ctx.stacks.frames.last()?.block
    } else if crate::core::proc::is_proc(b) {
        BlockRef { v: b, home: 0, serial: 0 }
    } else {
        return None;
    };
    let ret_sp = sp - argc - 2;
    let recv = ctx.stacks.stack[ret_sp];
    let me = cache_hit(ctx, ci, recv)?;
    let MethodBody::Iseq { iseq, cref } = me.body else { return None };
    if block.is_some() && !iseq_of(iseq).uses_block {
        return None;
    }
    ctx.stacks.sp = sp - 1;
    if call::push_simple_method_frame(ctx, recv, me, iseq, cref, argc, block, ret_sp) {
        return Some(Ok(None));
    }
    let block = block.get(&ctx.stacks.frames);
    Some(match call::push_method_frame(ctx, recv, me, iseq, cref, argc, None, block, ret_sp, 0) {
        Ok(()) => Ok(None),
        Err(e) => {
            ctx.stacks.sp = ret_sp;
            Err(e)
        }
    })
}

fn send_inner(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci: &CallInfo, ret_sp: usize) -> Result<Option<Value>> {
    if ci.flags & (cf::BLOCK_ARG | cf::KW_HASH | cf::KW_ARGS | cf::SPLAT | cf::SAFE_NAV) == cf::BLOCK_ARG && ci.argc == 0 && ctx.stacks.stack[ret_sp + 1].is_symbol() {
        if let Some(r) = symbol_iteration(ctx, fi, ci, ret_sp) {
            return r;
        }
    }
    let (argc, mut kw, mut block) = if ci.plain() { (ci.argc as usize, None, None) } else { prepare_args(ctx, ci, true)? };
    if ci.block != u32::MAX {
        block = Some(capture_block(ctx, iseq, fi, ci.block));
    }
    let recv = ctx.stacks.stack[ret_sp];
    if ci.has(cf::SAFE_NAV) && recv.is_nil() {
        ctx.stacks.sp = ret_sp;
        return Ok(Some(Value::NIL));
    }
    let klass = class_of(ctx, recv);
    let me = lookup_cached(ctx, ci, klass);
    if kw_on_stack(ci) {
        let at = ret_sp + 1 + argc;
        let visible = |m: &MethodEntry| m.visibility == Visibility::Public || ci.has(cf::FCALL) || ci.has(cf::SELF_RECV);
        if let Some(m) = me.as_deref().filter(|m| visible(m)) {
            if let Some((body, cref)) = binds_stacked_kw(m) {
                if block.is_some() && !iseq_of(body).uses_block {
                    warn_unused_block(ctx, fi, ci, m, body)?;
                }
                call::push_method_frame_kw(ctx, recv, m, body, cref, argc, call::Kw::Stack(&ci.kw_keys, at), block, ret_sp, 0)?;
                return Ok(None);
            }
        }
        kw = Some(pop_kw_hash(ctx, ci, at)?);
    }
    let Some(me) = me else {
        if let Some(r) = push_method_missing_frame(ctx, recv, klass, ci.mid, argc, kw, block, ret_sp) {
            return r.map(|()| None);
        }
        let args = stack_args(ctx, ret_sp, argc);
        let kind = if ci.has(cf::VCALL) { MissingKind::VCall } else { MissingKind::Normal };
        let r = call::call_method_missing(ctx, recv, ci.mid, &args, kw, block, kind);
        ctx.stacks.sp = ret_sp;
        return r.map(Some);
    };
    if me.visibility != Visibility::Public && !ci.has(cf::FCALL) && !ci.has(cf::SELF_RECV) {
        let self_ = ctx.stacks.frames[fi].self_;
        let ok = me.visibility == Visibility::Protected && module::includes_module(ctx, class_of(ctx, self_), module::real_class(me.owner));
        if !ok {
            if let Some(mm) = user_method_missing(ctx, klass) {
                let mut args = vec![Value::symbol(ci.mid)];
                args.extend(stack_args(ctx, ret_sp, argc));
                let r = call::invoke_from_rust(ctx, recv, &mm, &args, kw, block);
                ctx.stacks.sp = ret_sp;
                return r.map(Some);
            }
            return Err(call::method_visibility_error(ctx, recv, ci.mid, me.visibility));
        }
    }
    if let MethodBody::Iseq { iseq: body, .. } = me.body {
        if block.is_some() && !iseq_of(body).uses_block {
            warn_unused_block(ctx, fi, ci, &me, body)?;
        }
    }
    if let Some(public) = sends(&me) {
        if let Some(r) = send_in_place(ctx, &ci.cache, recv, public, argc, kw, block, ret_sp) {
            return r;
        }
    }
    if ci.block != u32::MAX && argc <= 1 && kw.is_none() {
        let args = &ctx.stacks.stack[ret_sp + 1..ret_sp + 1 + argc];
        if let Some(n) = iter::iterations(ctx, &me, recv, args) {
            let arg0 = args.first().copied().unwrap_or(Value::UNDEF);
            return iter::start(ctx, recv, &me, n, arg0, iseq.children[ci.block as usize], fi, ret_sp, ci);
        }
    }
    invoke(ctx, recv, &me, argc, kw, block, ret_sp)
}

/// `recv.each(&:name)` (or `times`) as an iterator frame calling `name` on each element
/// (`iter::call_symbol`), with no Proc made for the Symbol. `None` (nothing changed) when the
/// block is not a Symbol, refinements are in scope, tracing is on, or the method is not an
/// iterator the loop drives.
#[inline(never)]
fn symbol_iteration(ctx: &mut Ctx, fi: usize, ci: &CallInfo, ret_sp: usize) -> Option<Result<Option<Value>>> {
    let name = ctx.stacks.stack[ret_sp + 1];
    if crate::core::tracepoint::tracing(ctx) || !crate::core::refinement::frame_refinements(&ctx.stacks.frames[fi]).is_nil() {
        return None;
    }
    let recv = ctx.stacks.stack[ret_sp];
    let me = lookup_cached(ctx, ci, class_of(ctx, recv))?;
    let visible = me.visibility == Visibility::Public || ci.has(cf::FCALL) || ci.has(cf::SELF_RECV);
    let n = iter::iterations(ctx, &me, recv, &[]).filter(|&n| visible && n != usize::MAX && iter::takes_symbol(&me))?;
    Some(iter::start(ctx, recv, &me, n, Value::UNDEF, name, fi, ret_sp, ci))
}

/// Whether `me` is `send`/`__send__` (`Some(false)`) or `public_send` (`Some(true)`).
#[inline]
fn sends(me: &MethodEntry) -> Option<bool> {
    match me.body {
        MethodBody::Builtin { f, .. } => object::send_kind(f),
        _ => None,
    }
}

/// `recv.send(:name, args…)` (`public` for `public_send`) run as the call `recv.name(args…)`
/// from this dispatch loop: the name is dropped from the arguments on the stack and the
/// target is invoked like a direct call (a Ruby method's frame is pushed here, not run in a
/// nested loop; `send` leaves no frame of its own, as in CRuby). `None` (nothing changed)
/// when the builtin must run: no name, a name that is not a Symbol, refinements in scope,
/// a missing method (method_missing), or for `public_send` a method that is not public or
/// not a Ruby method. The target's entry is remembered in the call site's cache `cc` (its
/// `sym_*` fields; the caller has validated `cc`'s epoch).
#[inline(never)]
fn send_in_place(ctx: &mut Ctx, cc: &CallCache, recv: Value, public: bool, argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize) -> Option<Result<Option<Value>>> {
    let mid = ctx.stacks.stack.get(ret_sp + 1).filter(|_| argc > 0)?.as_symbol()?;
    if ctx.stacks.frames.last().is_some_and(|f| !crate::core::refinement::frame_refinements(f).is_nil()) {
        return None;
    }
    let klass = class_of(ctx, recv);
    // The entry is used before any Ruby code runs (binding may allocate, which leaves method
    // caches alone).
    let me = if cc.sym_klass.get() == klass.raw() && cc.sym_mid.get() == mid && cc.epoch.get() == ctx.vm().method_epoch() {
        // SAFETY: `sym_keep` holds the entry while the epoch is current.
        unsafe { &*cc.sym_me.get() }
    } else {
        send_target(ctx, cc, klass, mid)?
    };
    if public && me.visibility != Visibility::Public {
        return None;
    }
    let MethodBody::Iseq { iseq, cref } = me.body else {
        // `public_send` is a method with a backtrace line of its own (`send` is not, in
        // CRuby): only a Ruby target runs in place for it, above a pass-through frame.
        if public {
            return None;
        }
        let me = module::find_method(ctx, klass, mid)?;
        drop_send_name(ctx, argc, ret_sp);
        return Some(invoke(ctx, recv, &me, argc - 1, kw, block, ret_sp));
    };
    if public && ctx.stacks.frames.len() + 1 >= ctx.stacks.max_frames {
        return Some(Err(call::stack_overflow(ctx)));
    }
    drop_send_name(ctx, argc, ret_sp);
    if public {
        iter::push_passthrough(ctx, recv, ctx.c().kernel, sym::PUBLIC_SEND, ret_sp);
    }
    let simple = kw.is_none() && call::push_simple_method_frame(ctx, recv, me, iseq, cref, argc - 1, BlockRef::from_block(block), ret_sp);
    let r = if simple { Ok(()) } else { call::push_method_frame(ctx, recv, me, iseq, cref, argc - 1, kw, block, ret_sp, 0) };
    if public && r.is_err() {
        iter::pop_iter(ctx);
    }
    Some(r.map(|()| None))
}

/// The method `send_in_place` runs for `mid` on `klass`, remembered in `cc`.
#[inline(never)]
fn send_target<'a>(ctx: &Ctx, cc: &CallCache, klass: Value, mid: crate::symbol::SymId) -> Option<&'a MethodEntry> {
    let me = module::find_method(ctx, klass, mid).filter(|m| !m.is_undefined() && !matches!(m.body, MethodBody::ZSuper))?;
    let p = Arc::as_ptr(&me);
    cc.sym_klass.set(klass.raw());
    cc.sym_mid.set(mid);
    cc.sym_me.set(p);
    *cc.sym_keep.borrow_mut() = Some(me);
    // SAFETY: `sym_keep` holds the entry until the cache is rewritten, which takes another
    // `send` at this call site or a new method epoch, both after the caller is done with it.
    Some(unsafe { &*p })
}

/// Removes a `send`'s method name, the first of its `argc` arguments above `ret_sp`.
fn drop_send_name(ctx: &mut Ctx, argc: usize, ret_sp: usize) {
    // A loop: a call of memmove costs more for the few arguments a call has.
    for i in ret_sp + 1..ret_sp + argc {
        ctx.stacks.stack[i] = ctx.stacks.stack[i + 1];
    }
    ctx.stacks.sp = ret_sp + argc;
}

/// Ruby 3.4's warning for a block passed to a Ruby method that never uses one (no
/// yield, super or block parameter), shown with `$VERBOSE` or the `strict_unused_block`
/// category: once per method definition, or per call site in strict mode.
#[cold]
#[inline(never)]
fn warn_unused_block(ctx: &mut Ctx, fi: usize, ci: &CallInfo, me: &MethodEntry, body: Value) -> Result<()> {
    let strict = crate::core::warning::enabled(ctx, "strict_unused_block");
    if !strict && crate::core::globals::verbose_level(ctx) != 2 {
        return Ok(());
    }
    let def_key = (body.raw() as usize, 0usize);
    {
        let mut seen = ctx.vm().unused_block_warned.borrow_mut();
        let fresh = if strict { seen.insert((body.raw() as usize, ci as *const CallInfo as usize)) } else { seen.insert(def_key) };
        seen.insert(def_key);
        if !fresh {
            return Ok(());
        }
    }
    let (path, line) = {
        let f = &ctx.stacks.frames[fi];
        (f.iseq().path.clone(), f.line())
    };
    let m = iseq_of(body);
    let (mpath, mline) = (m.path.clone(), m.first_line);
    let name = crate::core::exception::method_label(ctx, me.owner, Some(me.original_name)).unwrap_or_default();
    let msg = format!("{path}:{line}: warning: the block passed to '{name}' defined at {mpath}:{mline} may be ignored\n");
    crate::core::warning::emit(ctx, &msg, None)
}

fn user_method_missing(ctx: &Ctx, klass: Value) -> Option<Arc<MethodEntry>> {
    let mm = module::find_method(ctx, klass, sym::METHOD_MISSING)?;
    if matches!(mm.body, MethodBody::Builtin { .. }) && mm.owner == ctx.c().basic_object {
        None
    } else {
        Some(mm)
    }
}

/// A call of a missing method whose receiver's class defines `method_missing` in Ruby: its
/// frame runs in this dispatch loop, as a call of `method_missing` with the name under the
/// `argc` arguments above `ret_sp` (they move up one slot). `None` (nothing changed) for the
/// default `method_missing`, one that is not a Ruby method, or no room for the name: then
/// `call::call_method_missing` runs it.
#[allow(clippy::too_many_arguments)]
fn push_method_missing_frame(ctx: &mut Ctx, recv: Value, klass: Value, mid: SymId, argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize) -> Option<Result<()>> {
    let mm = user_method_missing(ctx, klass)?;
    let MethodBody::Iseq { iseq, cref } = mm.body else {
        return None;
    };
    let args = ret_sp + 1;
    if args + argc + 1 + call::STACK_MARGIN > ctx.stacks.stack.len() {
        return None;
    }
    ctx.stacks.stack.copy_within(args..args + argc, args + 1);
    ctx.stacks.stack[args] = Value::symbol(mid);
    ctx.stacks.sp = args + argc + 1;
    let r = call::push_method_frame(ctx, recv, &mm, iseq, cref, argc + 1, kw, block, ret_sp, 0);
    if r.is_err() {
        ctx.stacks.sp = ret_sp;
    }
    Some(r)
}

fn stack_args(ctx: &Ctx, ret_sp: usize, argc: usize) -> Vec<Value> {
    ctx.stacks.stack[ret_sp + 1..ret_sp + 1 + argc].to_vec()
}

/// Invokes `me` on `recv` with `argc` arguments above `ret_sp`. `Ok(None)` when a Ruby
/// frame was pushed.
pub fn invoke(ctx: &mut Ctx, recv: Value, me: &Arc<MethodEntry>, argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize) -> Result<Option<Value>> {
    match &me.body {
        MethodBody::Iseq { iseq, cref } => {
            call::push_method_frame(ctx, recv, me, *iseq, *cref, argc, kw, block, ret_sp, 0)?;
            Ok(None)
        }
        MethodBody::Builtin { .. } if me.original_name == sym::NEW && me.owner == ctx.c().class => {
            if let Some(r) = inline_class_new(ctx, recv, argc, kw, block, ret_sp, None)? {
                return Ok(r);
            }
            invoke_builtin(ctx, recv, me, argc, kw, block, ret_sp)
        }
        MethodBody::Builtin { .. } => invoke_builtin(ctx, recv, me, argc, kw, block, ret_sp),
        MethodBody::AttrReader(name) => {
            if argc != 0 || kw.is_some() {
                return Err(ctx.arity_error(argc + kw.is_some() as usize, 0, Some(0)));
            }
            ctx.stacks.sp = ret_sp;
            Ok(Some(object::ivar_get(ctx, recv, *name)))
        }
        MethodBody::AttrWriter(name) => {
            if argc != 1 || kw.is_some() {
                return Err(ctx.arity_error(argc + kw.is_some() as usize, 1, Some(1)));
            }
            let v = ctx.stacks.stack[ret_sp + 1];
            object::ivar_set(ctx, recv, *name, v)?;
            ctx.stacks.sp = ret_sp;
            Ok(Some(v))
        }
        _ => {
            let args = stack_args(ctx, ret_sp, argc);
            ctx.stacks.sp = ret_sp + 1 + argc;
            let r = call::invoke_from_rust(ctx, recv, me, &args, kw, block);
            ctx.stacks.sp = ret_sp;
            r.map(Some)
        }
    }
}

/// Calls the builtin `me` with `argc` arguments above `ret_sp`.
fn invoke_builtin(ctx: &mut Ctx, recv: Value, me: &MethodEntry, mut argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize) -> Result<Option<Value>> {
    let MethodBody::Builtin { kw: accepts_kw, .. } = me.body else { unreachable!("invoke_builtin on a non-builtin") };
    let mut kw = kw;
    if let Some(h) = kw {
        if !accepts_kw {
            let sp = ret_sp + 1 + argc;
            ctx.stacks.stack[sp] = h;
            argc += 1;
            kw = None;
        }
    }
    ctx.stacks.sp = ret_sp + 1 + argc;
    // SAFETY: the arguments stay on the stack, below sp, for the whole call.
    let args = unsafe { std::slice::from_raw_parts(ctx.stacks.stack.as_ptr().add(ret_sp + 1), argc) };
    let r = call_builtin(ctx, recv, me, &Args { pos: args, kw, block });
    ctx.stacks.sp = ret_sp;
    r.map(Some)
}

/// `Class#new` for a plain object whose `initialize` is a Ruby method: allocates the object
/// and pushes `initialize` as an ordinary frame (flagged to return the object), instead of
/// running it in a nested dispatch loop from the builtin; with BasicObject's `initialize`
/// and no arguments, allocates the object and returns it; with another builtin
/// `initialize` (Hash, Array, String, exceptions), allocates and calls it directly, without
/// looking it up again by name in `Class#new`. `Ok(None)` when not applicable.
fn inline_class_new(ctx: &mut Ctx, klass: Value, argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize, cc: Option<&CallCache>) -> Result<Option<Option<Value>>> {
    if !module::is_class(klass) || module::body(klass).kind == ClassKind::Singleton {
        return Ok(None);
    }
    // The entry is used only until its frame is pushed below; nothing in between runs Ruby
    // code or defines methods (allocation may collect, which leaves method caches alone).
    let Some(init) = initialize_of(ctx, klass, cc) else { return Ok(None) };
    if let MethodBody::Builtin { f, .. } = init.body {
        // BasicObject's `initialize`, which does nothing, called with no arguments: the new
        // object is the result (a builtin with the same code would do the same).
        if argc == 0 && kw.is_none() && object::is_default_initialize(f) {
            let o = object::allocate(ctx, klass)?;
            ctx.stacks.sp = ret_sp;
            return Ok(Some(Some(o)));
        }
        if kw.is_some() {
            return Ok(None);
        }
        return builtin_class_new(ctx, klass, argc, block, ret_sp).map(Some);
    }
    if !matches!(module::body(klass).alloc, module::AllocKind::Object) {
        return Ok(None);
    }
    let MethodBody::Iseq { iseq, cref } = init.body else { return Ok(None) };
    let o = object::new_object(ctx, klass);
    ctx.stacks.stack[ret_sp] = o;
    if kw.is_none() && call::push_simple_method_frame(ctx, o, init, iseq, cref, argc, BlockRef::from_block(block), ret_sp) {
        if let Some(f) = ctx.stacks.frames.last_mut() {
            f.flags |= crate::interp::frame::FRAME_CTOR;
        }
        return Ok(Some(None));
    }
    call::push_method_frame(ctx, o, init, iseq, cref, argc, kw, block, ret_sp, crate::interp::frame::FRAME_CTOR)?;
    Ok(Some(None))
}

/// `klass`'s `initialize`. A `new` call site whose cache is current for this epoch (`cc`,
/// from `send_cached`) remembers it for `klass` in its `sym_klass`/`sym_me` (held by
/// `sym_keep`), which no other use of a `Class#new` site takes.
#[inline(always)]
fn initialize_of<'a>(ctx: &Ctx, klass: Value, cc: Option<&'a CallCache>) -> Option<&'a MethodEntry> {
    let Some(cc) = cc else { return module::find_method_ref(ctx, klass, sym::INITIALIZE) };
    if cc.sym_klass.get() == klass.raw() {
        // SAFETY: `sym_keep` holds the entry; the caller checked the epoch (a cache hit).
        return Some(unsafe { &*cc.sym_me.get() });
    }
    let me = module::find_method(ctx, klass, sym::INITIALIZE)?;
    cc.sym_klass.set(klass.raw());
    cc.sym_me.set(Arc::as_ptr(&me));
    *cc.sym_keep.borrow_mut() = Some(me);
    // SAFETY: as above, `sym_keep` now holds it.
    Some(unsafe { &*cc.sym_me.get() })
}

/// `Class#new` with a builtin `initialize` and `argc` positional arguments above `ret_sp`:
/// the object is allocated, then `initialize` runs under a `new` frame as it would when
/// called from `Class#new` (backtraces and `caller` see both).
#[inline(never)]
fn builtin_class_new(ctx: &mut Ctx, klass: Value, argc: usize, block: Option<Block>, ret_sp: usize) -> Result<Option<Value>> {
    // TracePoint's c_call/c_return events for `new` come from the general path.
    if crate::core::tracepoint::tracing(ctx) {
        return Ok(None);
    }
    // An owned entry: a builtin `initialize` may run Ruby code that redefines methods.
    let Some(init) = module::find_method(ctx, klass, sym::INITIALIZE) else { return Ok(None) };
    let o = object::allocate(ctx, klass)?;
    ctx.stacks.stack[ret_sp] = o;
    let depth = ctx.stacks.frames.len();
    call::push_builtin_frame(ctx, klass, ctx.c().class, sym::NEW);
    // SAFETY: the arguments stay on the stack, below sp, for the whole call.
    let args = unsafe { std::slice::from_raw_parts(ctx.stacks.stack.as_ptr().add(ret_sp + 1), argc) };
    let r = call_builtin(ctx, o, &init, &Args { pos: args, kw: None, block });
    ctx.stacks.frames.truncate(depth);
    ctx.stacks.sp = ret_sp;
    r.map(|_| Some(o))
}

/// `yield` with plain positional arguments to a literal block of the running method, when
/// `push_simple_block_frame` applies. Returns false when the general path must run.
#[inline(always)]
pub fn yield_simple(ctx: &mut Ctx, fi: usize, ci: &CallInfo) -> bool {
    if ci.flags & (cf::BLOCK_ARG | cf::KW_HASH | cf::KW_ARGS | cf::SPLAT) != 0 {
        return false;
    }
    let frames = &ctx.stacks.frames;
    // SAFETY: `fi` is the running frame.
    let b = unsafe { frames.get_unchecked(fi) }.block;
    if b.v.is_nil() {
        return false;
    }
    if crate::core::proc::is_proc(b.v) {
        return yield_simple_proc(ctx, b.v, ci);
    }
    let Some(h) = frames.get(b.home as usize).filter(|h| h.serial == b.serial) else { return false };
    let cap = Captured { iseq: b.v, self_: h.self_, env: h.env, cref: h.cref, home_serial: h.serial, home_index: b.home, _pad: 0 };
    let home = HomeMethod::of(h);
    let argc = ci.argc as usize;
    let ret_sp = ctx.stacks.sp - argc;
    call::push_simple_block_frame(ctx, &cap, home, argc, ret_sp, 0)
}

/// `yield_simple` to a block given as a proc (`&blk` passed on): a plain (not lambda, not
/// symbol or method) proc whose parameters take the arguments as they are.
#[inline(never)]
fn yield_simple_proc(ctx: &mut Ctx, p: Value, ci: &CallInfo) -> bool {
    if crate::core::proc::is_lambda(p) {
        return false;
    }
    let Some(cap) = crate::core::proc::captured(p) else { return false };
    let argc = ci.argc as usize;
    let ret_sp = ctx.stacks.sp - argc;
    if !call::push_simple_block_frame(ctx, &cap, HomeMethod::find(&ctx.stacks.frames, &cap), argc, ret_sp, 0) {
        return false;
    }
    crate::core::proc::restore_home(ctx, p);
    true
}

pub fn invoke_yield(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci_idx: usize) -> Result<Option<Value>> {
    let ci = &iseq.calls[ci_idx];
    let ret_sp = ctx.stacks.sp - ci.arg_slots();
    let r = yield_inner(ctx, fi, ci, ret_sp);
    if r.is_err() {
        ctx.stacks.sp = ret_sp;
    }
    r
}

fn yield_inner(ctx: &mut Ctx, fi: usize, ci: &CallInfo, ret_sp: usize) -> Result<Option<Value>> {
    let (argc, kw, blockarg) = prepare_args(ctx, ci, false)?;
    let Some(block) = ctx.stacks.frames[fi].block(&ctx.stacks.frames) else {
        return Err(ctx.local_jump_error("no block given (yield)", sym::YIELD, Value::NIL));
    };
    let (cap, lambda) = match block {
        Block::Captured(c) => (c, false),
        Block::Proc(p) => match crate::core::proc::captured(p) {
            Some(c) => (c, crate::core::proc::is_lambda(p)),
            None => {
                if let Some(r) = yield_to_symbol(ctx, p, argc, kw, blockarg, ret_sp) {
                    return r;
                }
                let args = ctx.stacks.stack[ret_sp..ret_sp + argc].to_vec();
                let r = crate::core::proc::call_special(ctx, p, &args, kw, blockarg);
                ctx.stacks.sp = ret_sp;
                return r.map(Some);
            }
        },
    };
    call::push_block_frame(ctx, &cap, argc, kw, blockarg, lambda, None, 0, ret_sp)?;
    if let Block::Proc(p) = block {
        crate::core::proc::restore_home(ctx, p);
    }
    Ok(None)
}

/// `yield` to a Symbol proc block (`&:name`) whose method is a Ruby method: the first
/// argument, already in the result slot, is the receiver of the call, which is pushed like a
/// direct call. `None` (nothing changed) for the general path (`proc::call_special`).
#[inline(never)]
fn yield_to_symbol(ctx: &mut Ctx, p: Value, argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize) -> Option<Result<Option<Value>>> {
    let mid = crate::core::proc::plain_symbol(p).filter(|_| argc > 0)?;
    let recv = ctx.stacks.stack[ret_sp];
    let (me, iseq, cref) = crate::core::proc::symbol_ruby_target(ctx, recv, mid)?;
    Some(call::push_method_frame(ctx, recv, me, iseq, cref, argc - 1, kw, block, ret_sp, 0).map(|()| None))
}

pub fn invoke_super(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci_idx: usize) -> Result<Option<Value>> {
    let ci = &iseq.calls[ci_idx];
    let ret_sp = ctx.stacks.sp - ci.arg_slots() - 1;
    let r = super_inner(ctx, iseq, fi, ci, ret_sp);
    if r.is_err() {
        ctx.stacks.sp = ret_sp;
    }
    r
}

/// The method `super` calls from the method `frame_mid` of `owner` (found at occurrence
/// `skip` of `owner` among the ancestors of `klass`, the receiver's class), and the
/// occurrence of the found method's owner; None when there is none. Remembered per
/// receiver class in the `InvokeSuper` site's cache (see `CallCache`) for the method epoch,
/// except for a refined method's super and a found owner past its first occurrence.
fn super_method(ctx: &Ctx, ci: &CallInfo, klass: Value, owner: Value, skip: u32, frame_mid: SymId) -> Option<(Arc<MethodEntry>, u32)> {
    let cc = &ci.cache;
    let epoch = ctx.vm().method_epoch();
    if cc.epoch.get() == epoch && cc.sym_klass.get() == owner.raw() && cc.fast_pc.get() == skip && cc.sym_mid.get() == frame_mid {
        if let Some(me) = cc.position(klass.raw()).and_then(|i| cc.entry_arc(i)) {
            return Some((me, 0));
        }
    } else {
        cc.clear_entries(epoch);
        cc.sym_klass.set(owner.raw());
        cc.fast_pc.set(skip);
        cc.sym_mid.set(frame_mid);
    }
    // An alias (or a `define_method` copy) calls super for the method's original name.
    let mid = module::body(owner).methods.get(&frame_mid).map_or(frame_mid, |me| me.original_name);
    if module::is_class_or_module(owner) && module::body(owner).refined {
        // A refined method's super: the refined class's own method.
        return crate::core::refinement::super_of_refined(ctx, klass, owner, mid).map(|me| (me, 0));
    }
    let found = if module::is_class_or_module(owner) && (module::is_module(owner) || module::includes_module(ctx, klass, owner)) {
        // (A module's method may run on an object without the module: `UnboundMethod#bind`.)
        module::find_super_method_at(ctx, klass, owner, skip, mid)
    } else {
        None
    };
    if let Some((me, 0)) = &found {
        cc.add_entry(klass.raw(), Some(me.clone()));
    }
    found
}

fn super_inner(ctx: &mut Ctx, iseq: &Iseq, fi: usize, ci: &CallInfo, ret_sp: usize) -> Result<Option<Value>> {
    let (argc, mut kw, mut block) = prepare_args(ctx, ci, true)?;
    if ci.block != u32::MAX {
        block = Some(capture_block(ctx, iseq, fi, ci.block));
    } else if !ci.has(cf::BLOCK_ARG) {
        block = ctx.stacks.frames[fi].block(&ctx.stacks.frames);
    }
    let (owner, skip, mid, self_) = {
        let f = &ctx.stacks.frames[fi];
        (f.owner, f.owner_skip, f.mid, f.self_)
    };
    let Some(mid) = mid.filter(|_| !owner.is_nil()) else {
        return Err(ctx.raise(ctx.c().no_method_error, "super called outside of method"));
    };
    let klass = class_of(ctx, self_);
    let me = super_method(ctx, ci, klass, owner, skip, mid);
    if kw_on_stack(ci) {
        let at = ret_sp + 1 + argc;
        if let Some((m, occurrence)) = &me {
            if let Some((body, cref)) = binds_stacked_kw(m) {
                call::push_method_frame_kw(ctx, self_, m, body, cref, argc, call::Kw::Stack(&ci.kw_keys, at), block, ret_sp, 0)?;
                if *occurrence != 0 {
                    ctx.stacks.frames.last_mut().expect("callee frame").owner_skip = *occurrence;
                }
                return Ok(None);
            }
        }
        kw = Some(pop_kw_hash(ctx, ci, at)?);
    }
    match me {
        Some((me, occurrence)) => {
            let depth = ctx.stacks.frames.len();
            let r = invoke(ctx, self_, &me, argc, kw, block, ret_sp);
            if occurrence != 0 && matches!(r, Ok(None)) && ctx.stacks.frames.len() > depth {
                ctx.stacks.frames.last_mut().expect("callee frame").owner_skip = occurrence;
            }
            r
        }
        None => {
            let args = stack_args(ctx, ret_sp, argc);
            let r = call::call_method_missing(ctx, self_, mid, &args, kw, block, MissingKind::Super);
            ctx.stacks.sp = ret_sp;
            r.map(Some)
        }
    }
}

// ---- break / return ----

/// Whether frame `h` is in the middle of the call that was given the block literal
/// `block_iseq`: only then can a `break` from that block end the call. A proc whose call
/// has returned (`Proc.new { break }.call`) is an orphan, as in CRuby.
fn is_calling_with_block(h: &Frame, block_iseq: Value) -> bool {
    if !h.is_ruby() || h.pc == 0 {
        return false;
    }
    let iseq = h.iseq();
    match iseq.code.get(h.pc - 1) {
        Some(Insn::Send(ci) | Insn::InvokeSuper(ci)) => {
            let c = &iseq.calls[*ci as usize];
            c.block != u32::MAX && iseq.children[c.block as usize] == block_iseq
        }
        _ => false,
    }
}

/// The block frame a class body frame was entered from (class bodies run directly above
/// the frame that defines them).
fn block_below_class_body(ctx: &Ctx, mut fi: usize) -> usize {
    while fi > 0 && ctx.stacks.frames[fi].kind == FrameKind::Class {
        fi -= 1;
    }
    fi
}

/// `next` in a class body inside a block: the block's frame returns the value.
pub fn next_from_class_body(ctx: &mut Ctx, fi: usize, v: Value) -> Unwind {
    let b = block_below_class_body(ctx, fi);
    Unwind::Return { target: ctx.stacks.frames[b].serial, value: v }
}

/// `Ok(None)`: a `break` that simply leaves the current lambda.
pub fn break_unwind(ctx: &mut Ctx, fi: usize, v: Value) -> Result<Option<Unwind>> {
    let f = &ctx.stacks.frames[fi];
    if f.kind == FrameKind::Class {
        // In a class body inside a block: the break acts on the block (and leaves a lambda
        // through the class body's frames).
        let b = block_below_class_body(ctx, fi);
        return Ok(Some(match break_unwind(ctx, b, v)? {
            Some(e) => e,
            None => Unwind::Return { target: ctx.stacks.frames[b].serial, value: v },
        }));
    }
    match f.kind {
        FrameKind::Lambda => Ok(None),
        FrameKind::Block => {
            let home = f.home_index as usize;
            let alive = ctx.stacks.frames.get(home).is_some_and(|h| h.serial == f.home_serial && is_calling_with_block(h, f.iseq_val));
            if alive {
                Ok(Some(Unwind::Break { target: f.home_serial, value: v }))
            } else {
                Err(ctx.local_jump_error("break from proc-closure", sym::EMPTY, v))
            }
        }
        _ => Err(ctx.local_jump_error("break from proc-closure", sym::EMPTY, v)),
    }
}

pub fn return_unwind(ctx: &mut Ctx, fi: usize, v: Value) -> Result<Unwind> {
    let mut i = fi;
    loop {
        let f = &ctx.stacks.frames[i];
        match f.kind {
            // A proc made at the top level returns from the script, but not through a lambda
            // called from the top level (CRuby: "unexpected return").
            FrameKind::Top if ((i + 1)..fi).any(|j| ctx.stacks.frames[j].kind == FrameKind::Lambda && local_home(&ctx.stacks.frames, j) == i) => {
                return Err(ctx.local_jump_error("unexpected return", sym::EMPTY, v));
            }
            FrameKind::Method | FrameKind::Lambda | FrameKind::Top | FrameKind::Eval => {
                return Ok(Unwind::Return { target: f.serial, value: v });
            }
            FrameKind::Block => {
                let home = f.home_index as usize;
                let alive = home < i && ctx.stacks.frames.get(home).is_some_and(|h| h.serial == f.home_serial);
                if !alive {
                    return Err(ctx.local_jump_error("unexpected return", sym::EMPTY, v));
                }
                i = home;
            }
            // `return` in a class body returns from the method (or block's method) that
            // runs the class definition.
            FrameKind::Class if i > 0 => i = block_below_class_body(ctx, i),
            _ => return Err(ctx.local_jump_error("unexpected return", sym::EMPTY, v)),
        }
    }
}

/// The index of the method-level frame a block frame was created in (following its home
/// links while they are alive), or the frame itself when it is not a block.
fn local_home(frames: &[Frame], mut i: usize) -> usize {
    while matches!(frames[i].kind, FrameKind::Block | FrameKind::Lambda) {
        let home = frames[i].home_index as usize;
        if home >= i || frames[home].serial != frames[i].home_serial {
            break;
        }
        i = home;
    }
    i
}

/// Holds a non-exception unwind while an ensure clause runs.
struct UnwindBox(Unwind);

crate::data_obj!(UnwindBox, |s, m| {
    match s.0 {
        Unwind::Break { value, .. } | Unwind::Return { value, .. } => m.mark(value),
        Unwind::Throw { tag, value } => {
            m.mark(tag);
            m.mark(value);
        }
        Unwind::Raise(e) => m.mark(e),
        Unwind::Exit(_) | Unwind::Suspend => {}
    }
});

pub fn box_unwind(ctx: &mut Ctx, e: Unwind) -> Value {
    object::new_data(ctx, Value::NIL, Box::new(UnwindBox(e)))
}

pub fn value_to_unwind(v: Value) -> Unwind {
    if let Some(b) = crate::object::data_ref::<UnwindBox>(v) {
        return b.0;
    }
    Unwind::Raise(v)
}

// ---- instance and class variables ----

/// Remembers `klass`'s slot `idx` for an instance variable: the class's address with the
/// class epoch's low bits above it (`Vm::class_key_bits`: a class allocated where a freed one
/// was must not match; see `Vm::class_freed`), and the index.
fn fill_ivar_cache(ctx: &Ctx, cache: &(std::cell::Cell<u64>, std::cell::Cell<u32>), klass: Value, idx: u32) {
    if klass.raw() >> 48 != 0 {
        cache.0.set(0);
        return;
    }
    cache.0.set(klass.raw() | ctx.vm().class_key_bits());
    cache.1.set(idx);
}

pub fn get_ivar_cached(ctx: &mut Ctx, self_: Value, id: SymId, cache: &(std::cell::Cell<u64>, std::cell::Cell<u32>)) -> Value {
    if self_.is_heap() && basic(self_).obj_type() == ObjType::Object {
        let klass = basic(self_).klass;
        let real = module::real_class(klass);
        if let Some(&idx) = module::body(real).iv_index.get(&id) {
            fill_ivar_cache(ctx, cache, klass, idx);
            // SAFETY: type checked above.
            let v = unsafe { (*self_.as_ptr::<RObject>()).ivar(idx as usize) };
            return if v.is_undef() { Value::NIL } else { v };
        }
        return Value::NIL;
    }
    object::ivar_get(ctx, self_, id)
}

pub fn set_ivar_cached(ctx: &mut Ctx, self_: Value, id: SymId, v: Value, cache: &(std::cell::Cell<u64>, std::cell::Cell<u32>)) -> Result<()> {
    ctx.check_frozen(self_)?;
    if self_.is_heap() && basic(self_).obj_type() == ObjType::Object {
        let klass = basic(self_).klass;
        let real = module::real_class(klass);
        let idx = module::body(real).ivar_slot(id);
        fill_ivar_cache(ctx, cache, klass, idx);
        // SAFETY: type checked above.
        unsafe { (*self_.as_ptr::<RObject>()).set_ivar(idx as usize, v) };
        return Ok(());
    }
    object::ivar_set(ctx, self_, id, v)
}

/// The class whose class variables a frame sees: the innermost non-eval cref class.
/// The class whose class variables frame `fi` uses: the innermost class
/// body's (a singleton class of a class stands for that class), or None at
/// the top level.
fn cvar_base(ctx: &Ctx, fi: usize) -> Option<Value> {
    let mut c = ctx.stacks.frames[fi].cref;
    while !c.is_nil() {
        let cr = cref(c);
        if !basic(c).has(CREF_EVAL) && !cr.parent.is_nil() {
            let k = cr.klass;
            if module::is_class_or_module(k) && module::body(k).kind == ClassKind::Singleton {
                let att = module::body(k).attached;
                if module::is_class_or_module(att) {
                    return Some(att);
                }
            }
            return Some(k);
        }
        c = cr.parent;
    }
    None
}

fn has_cvar(m: Value, id: SymId) -> bool {
    module::body(m).cvars.iter().any(|(n, _)| *n == id)
}

/// The ancestor of `base` holding class variable `id`. When a subclass and an
/// ancestor both hold it, the ancestor's wins: the subclass's copy is removed
/// and RuntimeError raised (it was "overtaken"), as in CRuby.
fn find_cvar_owner(ctx: &mut Ctx, base: Value, id: SymId) -> Result<Option<Value>> {
    let anc = module::ancestors(ctx, base);
    let owners: Vec<Value> = anc.iter().copied().filter(|&m| has_cvar(m, id)).collect();
    let (Some(&front), Some(&target)) = (owners.first(), owners.last()) else {
        return Ok(None);
    };
    if front != target {
        module::body(front).cvars.retain(|(n, _)| *n != id);
        let name = ctx.sym_str(id);
        let f = crate::core::module_methods::class_path(ctx, front);
        let t = crate::core::module_methods::class_path(ctx, target);
        return Err(ctx.runtime_error(&format!("class variable {name} of {f} is overtaken by {t}")));
    }
    Ok(Some(front))
}

fn toplevel_cvar_error(ctx: &mut Ctx) -> crate::error::Unwind {
    ctx.runtime_error("class variable access from toplevel")
}

pub fn get_cvar(ctx: &mut Ctx, fi: usize, id: SymId) -> Result<Value> {
    let Some(base) = cvar_base(ctx, fi) else {
        return Err(toplevel_cvar_error(ctx));
    };
    cvar_get(ctx, base, id)
}

pub fn cvar_get(ctx: &mut Ctx, base: Value, id: SymId) -> Result<Value> {
    match find_cvar_owner(ctx, base, id)? {
        Some(owner) => Ok(module::body(owner).cvars.iter().find(|(n, _)| *n == id).map_or(Value::NIL, |(_, v)| *v)),
        None => {
            let name = ctx.sym_str(id);
            let cname = crate::core::module_methods::class_path(ctx, base);
            Err(ctx.name_error(&format!("uninitialized class variable {name} in {cname}"), id, base))
        }
    }
}

pub fn set_cvar(ctx: &mut Ctx, fi: usize, id: SymId, v: Value) -> Result<()> {
    let Some(base) = cvar_base(ctx, fi) else {
        return Err(toplevel_cvar_error(ctx));
    };
    cvar_set(ctx, base, id, v)
}

pub fn cvar_set(ctx: &mut Ctx, base: Value, id: SymId, v: Value) -> Result<()> {
    // The class that holds the variable (an ancestor of `base`, or `base` for a new one)
    // is the one modified.
    let owner = find_cvar_owner(ctx, base, id)?.unwrap_or(base);
    ctx.check_frozen(owner)?;
    let b = module::body(owner);
    if let Some(e) = b.cvars.iter_mut().find(|(n, _)| *n == id) {
        e.1 = v;
    } else {
        b.cvars.push((id, v));
    }
    Ok(())
}

// ---- constants ----

/// Looks `id` up in `klass`'s own table, loading an autoload if needed.
pub fn const_own(ctx: &mut Ctx, klass: Value, id: SymId) -> Result<Option<Value>> {
    let entry = module::body(klass).const_get(id).cloned();
    match entry {
        Some(e) if e.autoload.is_some() && e.value.is_undef() => {
            let path = e.autoload.unwrap_or(Value::NIL);
            crate::core::load::autoload_now(ctx, klass, id, path)?;
            Ok(module::body(klass).const_get(id).map(|e| e.value).filter(|v| !v.is_undef()))
        }
        // Being autoloaded by this lookup's own load: not defined yet (so that the loaded
        // file's `class Foo` defines it).
        Some(e) if e.value.is_undef() => Ok(None),
        Some(e) => {
            if e.deprecated {
                let owner = if klass == ctx.c().object { String::new() } else { crate::core::module_methods::class_path(ctx, klass) };
                let name = ctx.sym_str(id);
                crate::core::warning::deprecated(ctx, &format!("constant {owner}::{name}"))?;
            }
            Ok(Some(e.value))
        }
        None => Ok(None),
    }
}

/// Constant lookup through ancestors (and Object for modules when `with_object`).
pub fn const_in_ancestors(ctx: &mut Ctx, klass: Value, id: SymId, exclude_object: bool) -> Result<Option<Value>> {
    let anc = module::ancestors(ctx, klass);
    let object = ctx.c().object;
    for &m in anc.iter() {
        // `A::X` does not find Object's own constants (CRuby stops there),
        // but does find those of modules included into Object.
        if exclude_object && m == object && klass != object {
            if module::body(object).const_get(id).is_some() {
                return Ok(None);
            }
            continue;
        }
        if let Some(v) = const_own(ctx, m, id)? {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

/// The module holding constant `id` as `A::B` would find it from `scope`,
/// when that constant is private.
pub fn private_const_owner(ctx: &mut Ctx, scope: Value, id: SymId) -> Option<Value> {
    let anc = module::ancestors(ctx, scope);
    let object = ctx.c().object;
    for &m in anc.iter() {
        if let Some(e) = module::body(m).const_get(id) {
            if m == object && scope != object {
                return None;
            }
            return e.private.then_some(m);
        }
    }
    None
}

pub fn private_const_error(ctx: &mut Ctx, owner: Value, id: SymId) -> crate::error::Unwind {
    let cname = crate::core::module_methods::class_path(ctx, owner);
    let name = ctx.sym_str(id);
    let msg = if owner == ctx.c().object { format!("private constant {name} referenced") } else { format!("private constant {cname}::{name} referenced") };
    ctx.name_error(&msg, id, owner)
}

/// The innermost cref that is not an eval cref.
pub fn lexical_cref(mut c: Value) -> Value {
    while !c.is_nil() && basic(c).has(CREF_EVAL) {
        c = cref(c).parent;
    }
    c
}

pub fn get_const_lexical(ctx: &mut Ctx, cref_v: Value, id: SymId) -> Result<Value> {
    if let Some(v) = lookup_const_lexical(ctx, cref_v, id)? {
        return Ok(v);
    }
    let c = lexical_cref(cref_v);
    let klass = if c.is_nil() { ctx.c().object } else { cref(c).klass };
    const_missing(ctx, klass, id)
}

/// Lexical constant lookup without `const_missing`.
pub fn lookup_const_lexical(ctx: &mut Ctx, cref_v: Value, id: SymId) -> Result<Option<Value>> {
    let mut c = cref_v;
    while !c.is_nil() {
        let cr = cref(c);
        if cr.parent.is_nil() {
            break;
        }
        if !basic(c).has(CREF_EVAL) {
            if let Some(v) = const_own(ctx, cr.klass, id)? {
                return Ok(Some(v));
            }
        }
        c = cr.parent;
    }
    let c = lexical_cref(cref_v);
    let klass = if c.is_nil() { ctx.c().object } else { cref(c).klass };
    if let Some(v) = const_in_ancestors(ctx, klass, id, false)? {
        return Ok(Some(v));
    }
    if module::is_module(klass) || module::body(klass).kind == ClassKind::Singleton {
        let object = ctx.c().object;
        if let Some(v) = const_in_ancestors(ctx, object, id, false)? {
            return Ok(Some(v));
        }
    }
    Ok(None)
}

pub fn const_missing(ctx: &mut Ctx, klass: Value, id: SymId) -> Result<Value> {
    ctx.call(klass, sym::CONST_MISSING, &[Value::symbol(id)])
}

pub fn get_const_under(ctx: &mut Ctx, scope: Value, id: SymId) -> Result<Value> {
    if !module::is_class_or_module(scope) {
        let s = object::inspect_string(ctx, scope)?;
        return Err(ctx.type_error(&format!("{s} is not a class/module")));
    }
    // The common case, `A::B` naming a public constant of A itself, without walking A's
    // ancestors: with nothing prepended to A, A's own table is the first one searched.
    {
        let b = module::body(scope);
        if b.prepends.is_empty() {
            if let Some(e) = b.const_get(id).filter(|e| !e.private && !e.deprecated && e.autoload.is_none() && !e.value.is_undef()) {
                return Ok(e.value);
            }
        }
    }
    if let Some(owner) = private_const_owner(ctx, scope, id) {
        // A private constant is missing for `A::B`: a user-defined
        // const_missing gets a chance, the default one reports the owner.
        let cm = module::find_method(ctx, class_of(ctx, scope), sym::CONST_MISSING);
        if cm.is_some_and(|me| !matches!(me.body, module::MethodBody::Builtin { .. })) {
            return const_missing(ctx, scope, id);
        }
        return Err(private_const_error(ctx, owner, id));
    }
    match const_in_ancestors(ctx, scope, id, true)? {
        Some(v) => Ok(v),
        None => const_missing(ctx, scope, id),
    }
}

pub fn set_const(ctx: &mut Ctx, cref_v: Value, scope: Value, id: SymId, v: Value) -> Result<()> {
    let target = if scope.is_nil() {
        let c = lexical_cref(cref_v);
        if c.is_nil() {
            ctx.c().object
        } else {
            cref(c).klass
        }
    } else {
        scope
    };
    if !module::is_class_or_module(target) {
        let s = object::inspect_string(ctx, target)?;
        return Err(ctx.type_error(&format!("{s} is not a class/module")));
    }
    crate::core::module_methods::const_set_checked(ctx, target, id, v)
}

// ---- special variables ----

/// The frame that owns `$~`/`$_` for frame `fi` (the method-level frame).
pub fn svar_frame(ctx: &Ctx, mut fi: usize) -> usize {
    loop {
        let f = &ctx.stacks.frames[fi];
        if !matches!(f.kind, FrameKind::Block | FrameKind::Lambda) {
            return fi;
        }
        let h = f.home_index as usize;
        if h < fi && ctx.stacks.frames.get(h).is_some_and(|hf| hf.serial == f.home_serial) {
            fi = h;
        } else {
            return fi;
        }
    }
}

/// Index of the Ruby frame that called the running builtin.
pub fn caller_ruby_frame(ctx: &Ctx) -> Option<usize> {
    ctx.stacks.frames.iter().rposition(|f| f.is_ruby())
}

/// Where the `$~`/`$_` pair of frame `s` (a `svar_frame`) is kept: in the method-level
/// heap environment when there is one, so blocks created in the scope share it even after
/// the scope's frame returned (a block whose home is gone reaches it through its outer
/// chain); otherwise in the frame.
fn svar_env(ctx: &Ctx, s: usize) -> SvarHome {
    let f = &ctx.stacks.frames[s];
    if matches!(f.kind, FrameKind::Block | FrameKind::Lambda) {
        // The home frame is gone: its environment is the outermost of the block's chain,
        // unless that is the scope this thread or fiber started in, whose `$~`/`$_` are
        // its own.
        if f.outer.is_nil() {
            return SvarHome::Frame(s);
        }
        let e = outermost_env(f.outer);
        return if e == ctx.stacks.root_env { SvarHome::Root } else { SvarHome::Env(e) };
    }
    if f.env.is_nil() {
        SvarHome::Frame(s)
    } else {
        SvarHome::Env(f.env)
    }
}

/// Where a `$~`/`$_` pair (nil or a 2-element Array) is kept.
#[derive(Copy, Clone)]
enum SvarHome {
    Env(Value),
    Frame(usize),
    /// `Stacks::root_svar`.
    Root,
}

impl SvarHome {
    fn get(self, ctx: &Ctx) -> Value {
        match self {
            SvarHome::Env(e) => crate::interp::env::env(e).svar,
            SvarHome::Frame(s) => ctx.stacks.frames[s].svar,
            SvarHome::Root => ctx.stacks.root_svar,
        }
    }

    fn set(self, ctx: &mut Ctx, a: Value) {
        match self {
            SvarHome::Env(e) => crate::interp::env::env(e).svar = a,
            SvarHome::Frame(s) => ctx.stacks.frames[s].svar = a,
            SvarHome::Root => ctx.stacks.root_svar = a,
        }
    }
}

/// The method-level environment a block's `outer` chain leads to.
pub fn outermost_env(mut e: Value) -> Value {
    loop {
        let o = crate::interp::env::env(e).outer;
        if o.is_nil() || crate::object::basic(e).has(crate::interp::env::ENV_SCOPE_ROOT) {
            return e;
        }
        e = o;
    }
}

fn svar_get(ctx: &Ctx, s: usize, i: usize) -> Value {
    let a = svar_env(ctx, s).get(ctx);
    if a.is_nil() {
        Value::NIL
    } else {
        array::get(a, i)
    }
}

fn svar_set(ctx: &mut Ctx, s: usize, i: usize, v: Value) {
    let home = svar_env(ctx, s);
    let mut a = home.get(ctx);
    if a.is_nil() {
        if v.is_nil() {
            return;
        }
        a = array::from_slice(ctx, &[Value::NIL, Value::NIL]);
        home.set(ctx, a);
    }
    array::set(a, i, v);
}

/// Sets `$~` in the frame that called the running builtin.
pub fn set_last_match(ctx: &mut Ctx, v: Value) {
    if let Some(fi) = caller_ruby_frame(ctx) {
        let s = svar_frame(ctx, fi);
        svar_set(ctx, s, crate::interp::frame::SVAR_LAST_MATCH, v);
    }
}

pub fn get_last_match(ctx: &Ctx) -> Value {
    match caller_ruby_frame(ctx) {
        Some(fi) => {
            let s = svar_frame(ctx, fi);
            svar_get(ctx, s, crate::interp::frame::SVAR_LAST_MATCH)
        }
        None => Value::NIL,
    }
}

pub fn get_special(ctx: &mut Ctx, fi: usize, kind: u32) -> Result<Value> {
    let s = svar_frame(ctx, fi);
    let m = svar_get(ctx, s, crate::interp::frame::SVAR_LAST_MATCH);
    if kind == 0 {
        return Ok(m);
    }
    if m.is_nil() {
        return Ok(Value::NIL);
    }
    crate::core::matchdata::match_special(ctx, m, kind)
}

pub fn last_line(ctx: &Ctx, fi: usize) -> Value {
    let s = svar_frame(ctx, fi);
    svar_get(ctx, s, crate::interp::frame::SVAR_LAST_LINE)
}

pub fn set_last_line(ctx: &mut Ctx, fi: usize, v: Value) {
    let s = svar_frame(ctx, fi);
    svar_set(ctx, s, crate::interp::frame::SVAR_LAST_LINE, v);
}

/// Sets `$_` in the frame that called the running builtin.
pub fn set_caller_last_line(ctx: &mut Ctx, v: Value) {
    if let Some(fi) = caller_ruby_frame(ctx) {
        set_last_line(ctx, fi, v);
    }
}

pub fn get_caller_last_line(ctx: &Ctx) -> Value {
    caller_ruby_frame(ctx).map_or(Value::NIL, |fi| last_line(ctx, fi))
}

// ---- safepoints ----

/// Interrupt bits.
/// A signal is waiting in the VM's inbox (`thread::signal`).
pub const INTERRUPT_SIGNAL: u32 = 1;
/// Another thread has waited a whole time slice for the giant lock.
pub const INTERRUPT_YIELD: u32 = 2;
/// A collection queued finalizers of objects it freed (`weak::run_pending`).
pub const INTERRUPT_FINALIZE: u32 = 4;
/// A limit an embedding host set (timeout, memory cap) tripped (`runtime::limits`).
pub const INTERRUPT_LIMIT: u32 = 8;

/// Handles the VM's interrupt word at a safepoint: a signal (its handler run in the main
/// thread, forwarded to it from others), a request to hand the giant lock over, and
/// then what other threads posted to this one.
#[cold]
#[inline(never)]
pub fn handle_interrupt(ctx: &mut Ctx) -> Result<()> {
    use crate::thread::sched;
    let bits = ctx.vm().interrupt.swap(0, std::sync::atomic::Ordering::AcqRel);
    if bits & INTERRUPT_SIGNAL != 0 {
        if sched::is_main(ctx) {
            crate::core::signal::run_handlers(ctx)?;
        } else {
            let main = ctx.vm().main_thread.get();
            sched::post(ctx, main, sched::PENDING_SIGNAL);
        }
    }
    if bits & INTERRUPT_YIELD != 0 {
        sched::yield_gl(ctx);
    }
    if bits & INTERRUPT_FINALIZE != 0 {
        crate::weak::run_pending(ctx);
    }
    if bits & INTERRUPT_LIMIT != 0 {
        crate::runtime::limits::check(ctx)?;
    }
    sched::check_pending(ctx)
}

// ---- equality fast path ----

#[inline]
pub fn fast_eq(ctx: &Ctx, a: Value, b: Value) -> Option<bool> {
    if a.is_fixnum() && b.is_fixnum() {
        if ctx.vm().redefined.load(std::sync::atomic::Ordering::Relaxed) & REDEF_INTEGER != 0 {
            return None;
        }
        return Some(a == b);
    }
    if a.is_flonum() && b.is_flonum() {
        return Some(a.flonum_unchecked() == b.flonum_unchecked());
    }
    let redefined = ctx.vm().redefined.load(std::sync::atomic::Ordering::Relaxed);
    if a.is_symbol() && b.is_symbol() && redefined & REDEF_SYMBOL == 0 {
        return Some(a == b);
    }
    if (a.is_nil() || a == Value::TRUE || a == Value::FALSE) && redefined & REDEF_SPECIAL_EQ == 0 {
        return Some(a == b);
    }
    if string::is_plain_string(a) && string::is_plain_string(b) && ctx.vm().redefined.load(std::sync::atomic::Ordering::Relaxed) & REDEF_STRING == 0 {
        return Some(string::eq(a, b));
    }
    None
}

// ---- multiple assignment ----

pub fn expand_array(ctx: &mut Ctx, v: Value, n: u32, flags: u32) -> Result<()> {
    // CRuby's rb_check_array_type: a user respond_to? and method_missing are honoured.
    let converted = if array::is_array(v) {
        Some(v)
    } else if v.is_heap() && !string::is_string(v) {
        crate::core::convert::check_funcall(ctx, v, sym::TO_ARY, &[])?
    } else {
        None
    };
    let arr = match converted {
        Some(r) if array::is_array(r) => r,
        Some(r) if !r.is_nil() => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            return Err(ctx.type_error(&format!("can't convert {cname} into Array ({cname}#to_ary gives {rname})")));
        }
        _ => array::from_slice(ctx, &[v]),
    };
    let pre = n as usize;
    let splat = flags & 1 != 0;
    let post = (flags >> 8) as usize;
    let len = array::len(arr);
    let mut sp = ctx.stacks.sp;
    if sp + pre + post + 1 + 64 > ctx.stacks.stack.len() {
        return Err(call::stack_overflow(ctx));
    }
    if splat {
        let post_start = pre.max(len.saturating_sub(post));
        for j in (0..post).rev() {
            ctx.stacks.stack[sp] = if post_start + j < len { array::get(arr, post_start + j) } else { Value::NIL };
            sp += 1;
        }
        let rest = if post_start > pre { array::slice_to_vec(arr, pre, post_start - pre) } else { Vec::new() };
        ctx.stacks.sp = sp;
        let r = array::from_vec(ctx, rest);
        ctx.stacks.stack[sp] = r;
        sp += 1;
    }
    for i in (0..pre).rev() {
        ctx.stacks.stack[sp] = if i < len { array::get(arr, i) } else { Value::NIL };
        sp += 1;
    }
    ctx.stacks.sp = sp;
    Ok(())
}

// ---- interpolation ----

pub fn to_s_for_interpolation(ctx: &mut Ctx, v: Value, _iseq: &Iseq, _ci: u32) -> Result<Value> {
    let refined = crate::core::refinement::refined_method_for(ctx, v, sym::TO_S);
    if let (Some(i), None) = (v.as_fixnum(), &refined) {
        return Ok(string::new_utf8(ctx, &i.to_string()));
    }
    let s = match refined {
        Some(me) => crate::interp::call::invoke_from_rust(ctx, v, &me, &[], None, None)?,
        None => ctx.call(v, sym::TO_S, &[])?,
    };
    if string::is_string(s) {
        Ok(s)
    } else {
        Ok(object::any_to_s(ctx, v))
    }
}

// ---- definitions ----

/// The class or module `def` defines into for frame `fi`. Under
/// `instance_eval` of an object without a singleton class (an Integer or
/// Symbol) there is none: TypeError, as in CRuby.
pub fn definee(ctx: &mut Ctx, fi: usize) -> Result<Value> {
    let c = ctx.stacks.frames[fi].cref;
    if c.is_nil() {
        return Ok(ctx.c().object);
    }
    if basic(c).has(crate::interp::env::CREF_SINGLETON) {
        let self_ = ctx.stacks.frames[fi].self_;
        return match object::singleton_class(ctx, self_) {
            Ok(s) => Ok(s),
            Err(_) => Err(ctx.type_error("can't define singleton")),
        };
    }
    let klass = cref(c).klass;
    if klass.is_nil() {
        return Err(ctx.type_error("can't define singleton"));
    }
    Ok(klass)
}

/// The default visibility for `def` in block frame `fi`: what `private` set
/// in the block itself, else that of the enclosing class body or top level
/// when the block still defines into it (same cref), else public.
pub fn block_scope_visibility(ctx: &Ctx, mut fi: usize) -> Visibility {
    loop {
        let f = &ctx.stacks.frames[fi];
        match f.kind {
            FrameKind::Class | FrameKind::Top => return f.visibility,
            FrameKind::Block | FrameKind::Lambda => {
                if f.visibility != Visibility::Public {
                    return f.visibility;
                }
                let h = f.home_index as usize;
                let home_alive = h < fi && ctx.stacks.frames.get(h).is_some_and(|hf| hf.serial == f.home_serial && hf.cref == f.cref);
                if !home_alive {
                    return Visibility::Public;
                }
                fi = h;
            }
            _ => return Visibility::Public,
        }
    }
}

pub fn define_method(ctx: &mut Ctx, fi: usize, name: SymId, iseq_val: Value) -> Result<Value> {
    let target = definee(ctx, fi)?;
    let (kind, frame_vis, cref_v) = {
        let f = &ctx.stacks.frames[fi];
        (f.kind, f.visibility, f.cref)
    };
    let mut vis = match kind {
        FrameKind::Class | FrameKind::Top => frame_vis,
        FrameKind::Eval if cref(cref_v).parent.is_nil() => Visibility::Private,
        FrameKind::Block | FrameKind::Lambda => block_scope_visibility(ctx, fi),
        _ => Visibility::Public,
    };
    if module::always_private(ctx, target, name) {
        vis = Visibility::Private;
    }
    crate::core::module_methods::check_class_modifiable(ctx, target)?;
    let module_function = vis == Visibility::ModuleFunction;
    let me = MethodEntry {
        name,
        original_name: name,
        owner: target,
        visibility: if module_function { Visibility::Private } else { vis },
        body: MethodBody::Iseq { iseq: iseq_val, cref: cref_v },
    };
    crate::core::module_methods::add_method_with_hooks(ctx, target, me)?;
    if module_function {
        let single = object::singleton_class(ctx, target)?;
        let me = MethodEntry { name, original_name: name, owner: single, visibility: Visibility::Public, body: MethodBody::Iseq { iseq: iseq_val, cref: cref_v } };
        crate::core::module_methods::add_method_with_hooks(ctx, single, me)?;
    }
    Ok(Value::symbol(name))
}

pub fn define_singleton_method(ctx: &mut Ctx, fi: usize, obj: Value, name: SymId, iseq_val: Value) -> Result<Value> {
    let single = object::singleton_class(ctx, obj)?;
    let cref_v = ctx.stacks.frames[fi].cref;
    let me = MethodEntry { name, original_name: name, owner: single, visibility: Visibility::Public, body: MethodBody::Iseq { iseq: iseq_val, cref: cref_v } };
    crate::core::module_methods::add_method_with_hooks(ctx, single, me)?;
    Ok(Value::symbol(name))
}

/// Flags of `DefineClass`.
pub const DEFCLASS_HAS_SUPER: u32 = 1;
pub const DEFCLASS_SCOPED: u32 = 2;
pub const DEFCLASS_MODULE: u32 = 4;
pub const DEFCLASS_SINGLETON: u32 = 8;

/// Opens (or creates) a class/module and pushes the frame running its body.
pub fn define_class(ctx: &mut Ctx, fi: usize, name: SymId, body_iseq: Value, flags: u32) -> Result<()> {
    let mut sp = ctx.stacks.sp;
    let klass = if flags & DEFCLASS_SINGLETON != 0 {
        sp -= 1;
        let obj = ctx.stacks.stack[sp];
        ctx.stacks.sp = sp;
        object::exposed_singleton_class(ctx, obj)?
    } else {
        let superclass = if flags & DEFCLASS_HAS_SUPER != 0 {
            sp -= 1;
            Some(ctx.stacks.stack[sp])
        } else {
            None
        };
        sp -= 1;
        let cbase_v = ctx.stacks.stack[sp];
        ctx.stacks.sp = sp;
        let cref_v = ctx.stacks.frames[fi].cref;
        let cbase = if flags & DEFCLASS_SCOPED != 0 {
            if !module::is_class_or_module(cbase_v) {
                let s = object::inspect_string(ctx, cbase_v)?;
                return Err(ctx.type_error(&format!("{s} is not a class/module")));
            }
            // `module A::B` cannot reopen a private B from outside.
            if module::body(cbase_v).const_get(name).is_some_and(|e| e.private) {
                return Err(private_const_error(ctx, cbase_v, name));
            }
            cbase_v
        } else {
            let c = lexical_cref(cref_v);
            if c.is_nil() {
                ctx.c().object
            } else {
                cref(c).klass
            }
        };
        if flags & DEFCLASS_MODULE != 0 {
            crate::core::module_methods::open_module(ctx, cbase, name)?
        } else {
            crate::core::module_methods::open_class(ctx, cbase, name, superclass)?
        }
    };
    // Run the body in a new frame (result goes where the class value was).
    let ret_sp = ctx.stacks.sp;
    ctx.stacks.stack[ret_sp] = klass;
    ctx.stacks.sp = ret_sp + 1;
    let parent = ctx.stacks.frames[fi].cref;
    let new_cref = crate::interp::exec::new_cref(ctx, klass, parent, false);
    ctx.stacks.sp = ret_sp;
    let iseq = crate::compile::iseq::iseq_of(body_iseq);
    let nlocals = iseq.local_count();
    if ret_sp + nlocals + call::STACK_MARGIN > ctx.stacks.stack.len() {
        return Err(call::stack_overflow(ctx));
    }
    for i in 0..nlocals {
        ctx.stacks.stack[ret_sp + i] = Value::NIL;
    }
    let f = call::enter_frame(ctx, FrameKind::Class, iseq, body_iseq, ret_sp, 0, ret_sp, Value::NIL)?;
    f.self_ = klass;
    f.cref = new_cref;
    Ok(())
}

// ---- defined? ----

pub const DEF_IVAR: u32 = 1;
pub const DEF_GVAR: u32 = 2;
pub const DEF_CVAR: u32 = 3;
pub const DEF_CONST: u32 = 4;
pub const DEF_CONST_FROM: u32 = 5;
pub const DEF_FUNC: u32 = 6;
pub const DEF_METHOD: u32 = 7;
pub const DEF_YIELD: u32 = 8;
pub const DEF_ZSUPER: u32 = 9;
pub const DEF_REF: u32 = 10;

pub fn defined(ctx: &mut Ctx, _iseq: &Iseq, fi: usize, kind: u32, operand: u32) -> Result<Value> {
    let id = SymId(operand);
    let answer: Option<&str> = match kind {
        DEF_IVAR => {
            let self_ = ctx.stacks.frames[fi].self_;
            object::ivar_defined(ctx, self_, id).then_some("instance-variable")
        }
        DEF_GVAR => crate::core::globals::is_defined(ctx, id).then_some("global-variable"),
        DEF_CVAR => {
            match cvar_base(ctx, fi) {
                Some(base) => find_cvar_owner(ctx, base, id).ok().flatten().is_some().then_some("class variable"),
                None => None,
            }
        }
        DEF_CONST => {
            let cref_v = ctx.stacks.frames[fi].cref;
            lookup_const_lexical(ctx, cref_v, id).ok().flatten().is_some().then_some("constant")
        }
        DEF_CONST_FROM => {
            ctx.stacks.sp -= 1;
            let scope = ctx.stacks.stack[ctx.stacks.sp];
            (module::is_class_or_module(scope) && private_const_owner(ctx, scope, id).is_none() && const_in_ancestors(ctx, scope, id, true).ok().flatten().is_some()).then_some("constant")
        }
        DEF_FUNC => {
            let self_ = ctx.stacks.frames[fi].self_;
            ctx.respond_to(self_, id, true).then_some("method")
        }
        DEF_METHOD => {
            ctx.stacks.sp -= 1;
            let recv = ctx.stacks.stack[ctx.stacks.sp];
            let klass = class_of(ctx, recv);
            let ok = match module::find_method(ctx, klass, id) {
                Some(me) => match me.visibility {
                    Visibility::Public => true,
                    Visibility::Protected => {
                        let self_ = ctx.stacks.frames[fi].self_;
                        module::includes_module(ctx, class_of(ctx, self_), module::real_class(me.owner))
                    }
                    _ => false,
                },
                None => ctx.respond_to_dynamic(recv, id).unwrap_or(false),
            };
            ok.then_some("method")
        }
        DEF_YIELD => ctx.stacks.frames[fi].block(&ctx.stacks.frames).is_some().then_some("yield"),
        DEF_ZSUPER => {
            let (owner, mid, self_) = {
                let f = &ctx.stacks.frames[fi];
                (f.owner, f.mid, f.self_)
            };
            let found = match mid {
                Some(mid) if module::is_class_or_module(owner) => {
                    let klass = class_of(ctx, self_);
                    (module::is_module(owner) || module::includes_module(ctx, klass, owner)) && module::find_super_method(ctx, klass, owner, mid).is_some()
                }
                _ => false,
            };
            found.then_some("super")
        }
        DEF_REF => {
            let v = get_special(ctx, fi, operand)?;
            (!v.is_nil()).then_some("global-variable")
        }
        _ => None,
    };
    Ok(match answer {
        Some(s) => {
            let v = string::new_utf8(ctx, s);
            object::freeze(v);
            v
        }
        None => Value::NIL,
    })
}

// ---- case/when, rescue ----

pub const MATCH_WHEN: u32 = 0;
pub const MATCH_RESCUE: u32 = 1;
pub const MATCH_WHEN_SPLAT: u32 = 2;
pub const MATCH_RESCUE_SPLAT: u32 = 3;
/// Whether the target is a Ruby exception (and not a boxed break/return/throw
/// being unwound); the pattern is ignored.
pub const MATCH_EXCEPTION: u32 = 4;

pub fn check_match(ctx: &mut Ctx, pattern: Value, target: Value, kind: u32) -> Result<bool> {
    match kind {
        MATCH_WHEN => case_eq(ctx, pattern, target),
        MATCH_RESCUE => {
            if !module::is_class_or_module(pattern) {
                return Err(ctx.type_error("class or module required for rescue clause"));
            }
            Ok(ctx.call(pattern, sym::EQQ, &[target])?.truthy())
        }
        MATCH_WHEN_SPLAT | MATCH_RESCUE_SPLAT => {
            let n = array::len(pattern);
            for i in 0..n {
                let p = array::get(pattern, i);
                let sub = if kind == MATCH_WHEN_SPLAT { MATCH_WHEN } else { MATCH_RESCUE };
                if check_match(ctx, p, target, sub)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        MATCH_EXCEPTION => {
            let klass = if target.is_heap() { basic(target).klass } else { Value::NIL };
            Ok(module::is_class_or_module(klass) && object::is_a(ctx, target, ctx.c().exception))
        }
        _ => Ok(false),
    }
}

/// `pattern === target` with fast paths for immediates.
pub fn case_eq(ctx: &mut Ctx, pattern: Value, target: Value) -> Result<bool> {
    if let Some(r) = fast_eq(ctx, pattern, target) {
        if !pattern.is_heap() || string::is_plain_string(pattern) {
            return Ok(r);
        }
    }
    // `when SomeClass`: `Module#===` (not redefined for this pattern) is `kind_of?`.
    if pattern.is_heap() && basic(pattern).obj_type() == ObjType::Class {
        let klass = class_of(ctx, pattern);
        if let Some(me) = module::find_method_ref(ctx, klass, sym::EQQ) {
            if me.owner == ctx.c().module && matches!(me.body, MethodBody::Builtin { .. }) {
                return Ok(object::is_a(ctx, target, pattern));
            }
        }
    }
    Ok(ctx.call(pattern, sym::EQQ, &[target])?.truthy())
}

pub fn pattern_error(ctx: &mut Ctx, v: Value, key: u32) -> Unwind {
    let s = match object::inspect_string(ctx, v) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let class = if key != 0 { ctx.c().no_matching_pattern_key_error } else { ctx.c().no_matching_pattern_error };
    ctx.raise(class, &s)
}

pub fn alias(ctx: &mut Ctx, fi: usize, new: Value, old: Value, kind: u32) -> Result<()> {
    let (Some(new), Some(old)) = (new.as_symbol(), old.as_symbol()) else {
        return Err(ctx.type_error("alias names must be symbols"));
    };
    if kind == 1 {
        crate::core::globals::alias(ctx, new, old);
        return Ok(());
    }
    let target = definee(ctx, fi)?;
    crate::core::module_methods::alias_method(ctx, target, new, old)
}

pub fn undef(ctx: &mut Ctx, fi: usize, name: Value) -> Result<()> {
    let Some(name) = name.as_symbol() else {
        return Err(ctx.type_error("undef name must be a symbol"));
    };
    let target = definee(ctx, fi)?;
    crate::core::module_methods::undef_method(ctx, target, name)
}

/// `respond_to?(name)` as a pattern asks it: a redefined respond_to? is
/// called (with the name only), otherwise public methods are looked up.
fn pattern_responds(ctx: &mut Ctx, v: Value, name: SymId) -> Result<bool> {
    let klass = class_of(ctx, v);
    match module::find_method(ctx, klass, sym::RESPOND_TO) {
        Some(me) if !matches!(me.body, module::MethodBody::Builtin { .. }) => Ok(ctx.call(v, sym::RESPOND_TO, &[Value::symbol(name)])?.truthy()),
        _ => Ok(ctx.respond_to(v, name, false)),
    }
}

pub fn deconstruct(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    // A plain Array is its own deconstruction; one with a singleton
    // #deconstruct (or a subclass) is asked.
    if array::is_array(v) && basic(v).klass == ctx.c().array {
        return Ok(Some(v));
    }
    if !pattern_responds(ctx, v, sym::DECONSTRUCT)? {
        return Ok(None);
    }
    let r = ctx.call(v, sym::DECONSTRUCT, &[])?;
    if !array::is_array(r) {
        return Err(ctx.type_error("deconstruct must return Array"));
    }
    Ok(Some(r))
}

pub fn deconstruct_keys(ctx: &mut Ctx, v: Value, keys: Value) -> Result<Option<Value>> {
    if hash::is_hash(v) && basic(v).klass == ctx.c().hash {
        return Ok(Some(v));
    }
    if !pattern_responds(ctx, v, sym::DECONSTRUCT_KEYS)? {
        return Ok(None);
    }
    let r = ctx.call(v, sym::DECONSTRUCT_KEYS, &[keys])?;
    if !hash::is_hash(r) {
        return Err(ctx.type_error("deconstruct_keys must return Hash"));
    }
    Ok(Some(r))
}
