//! Calls: method dispatch, argument binding, frame pushes for methods and blocks,
//! `method_missing`, and calls initiated from Rust.
//!
//! Invariants:
//! - Arguments of a call being set up live on the value stack (`[bp, bp + argc)`), the
//!   receiver just below `bp`, so the collector sees them while binding allocates (rest
//!   arrays, keyword hashes, block procs). All allocation in `bind_args` happens before
//!   values are moved into their final local slots.
//! - `push_*_frame` leave `stacks.sp` at the new frame's `sp_base`; on error they leave the
//!   stack as they found it (`sp` at the call's result slot + 1 is restored by the caller).

use std::sync::Arc;

use crate::compile::iseq::{iseq_of, Iseq};
use crate::core::module::{self, MethodBody, MethodEntry, Visibility};
use crate::core::{array, hash, proc as rproc};
use crate::error::Unwind;
use crate::interp::env::REnv;
use crate::interp::frame::{Block, BlockRef, Captured, Frame, FrameKind, HomeMethod, FRAME_BMETHOD, FRAME_FINISH};
use crate::interp::{class_of, exec, Args};
use crate::object::{ObjType, RBasic};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// How arguments bind to parameters.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum ArgMode {
    /// Methods and lambdas: exact arity.
    Strict,
    /// Blocks and procs: missing arguments are nil, extras dropped, one array auto-splats.
    Loose,
}

/// Slots kept free above a frame's operand stack for calls made from builtins.
pub(crate) const STACK_MARGIN: usize = 32;

#[inline]
pub fn stack_overflow(ctx: &mut Ctx) -> Unwind {
    ctx.raise(ctx.c().system_stack_error, "stack level too deep")
}

/// Allocates a heap environment holding `vals`.
pub fn new_env(ctx: &mut Ctx, boxed: Box<[Value]>, outer: Value) -> Value {
    // Marked while the slot is allocated: the box is the values' only holder.
    let outer_pending = std::mem::replace(&mut ctx.pending_values, (boxed.as_ptr(), boxed.len()));
    let p = ctx.alloc_slot(ObjType::Env, Value::NIL) as *mut REnv;
    ctx.pending_values = outer_pending;
    // SAFETY: fresh Env slot; fields written before the next allocation.
    unsafe {
        std::ptr::write(&mut (*p).vals, boxed);
        (*p).outer = outer;
        (*p).svar = Value::NIL;
    }
    Value::from_ptr(p)
}

/// Moves the `nlocals` locals at `stack[bp..]` (already initialised, and covered by
/// `ctx.stacks.sp`) into a new heap environment over `outer`, for a frame whose locals are
/// captured by blocks; returns it and the address of its first local. `scope_root` marks
/// the environment of a method or top-level scope (not a block's).
#[inline(never)]
pub(crate) fn heap_locals(ctx: &mut Ctx, bp: usize, nlocals: usize, outer: Value, scope_root: bool) -> (Value, *mut Value) {
    let vals: Box<[Value]> = ctx.stacks.stack[bp..bp + nlocals].into();
    let env = new_env(ctx, vals, outer);
    if scope_root {
        crate::object::basic(env).set(crate::interp::env::ENV_SCOPE_ROOT, true);
    }
    (env, crate::interp::env::env(env).vals.as_mut_ptr())
}

/// Pushes a frame with every field at its default and returns it for the caller to fill in.
/// The frame is written directly into the frame stack: building it elsewhere and moving it in
/// costs a ~200-byte copy per call that showed up as a quarter of block-call time.
#[inline(always)]
fn push_frame(ctx: &mut Ctx, kind: FrameKind) -> &mut Frame {
    push_frame_as(ctx, Frame { kind, ..Frame::BLANK })
}

/// Pushes `frame` with the next serial. The callers of the hot paths pass the whole frame
/// as one value, so that each field is stored once (setting fields after `push_frame`
/// stored most of them twice) and the constant fields, next to each other in `Frame`,
/// are stored a few words at a time.
#[inline(always)]
fn push_frame_as(ctx: &mut Ctx, frame: Frame) -> &mut Frame {
    ctx.frame_serial += 1;
    let serial = ctx.frame_serial;
    let frames = &mut ctx.stacks.frames;
    if frames.len() == frames.capacity() {
        grow_frames(frames);
    }
    let n = frames.len();
    // SAFETY: there is room for one more frame (reserved above); it is fully written before
    // the length covers it. Writing through the pointer (rather than `Vec::push`, whose
    // argument is built before a possible reallocation) lets the frame be built in place.
    unsafe {
        let f = frames.as_mut_ptr().add(n);
        std::ptr::write(f, Frame { serial, ..frame });
        frames.set_len(n + 1);
        &mut *f
    }
}

#[cold]
#[inline(never)]
fn grow_frames(frames: &mut Vec<Frame>) {
    frames.reserve(frames.len().max(16));
}

// ---- binding arguments ----

/// Converts a block's single argument for auto-splatting: an Array, or the result of
/// `to_ary`, or `None` to keep it as one argument.
fn splat_candidate(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if array::is_array(v) {
        return Ok(Some(v));
    }
    if v.is_heap() && ctx.respond_to_dynamic(v, sym::TO_ARY)? {
        let r = ctx.call(v, sym::TO_ARY, &[])?;
        if array::is_array(r) {
            return Ok(Some(r));
        }
        if !r.is_nil() {
            return Err(ctx.type_error("can't convert to Array"));
        }
    }
    Ok(None)
}

fn keyword_list(ctx: &Ctx, names: &[Value]) -> String {
    names
        .iter()
        .map(|v| match v.as_symbol() {
            Some(s) => format!(":{}", ctx.sym_str(s)),
            None => format!("{v:?}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The keywords a call passes, as they arrive.
#[derive(Copy, Clone)]
pub enum Kw<'a> {
    None,
    /// A non-empty Hash (or a value to be converted, passed through as it was).
    Hash(Value),
    /// `KW_ARGS` values: the value of `keys[i]` is at `stack[at + i]`, covered by `sp`.
    Stack(&'a [SymId], usize),
}

impl Kw<'_> {
    pub fn from_hash(kw: Option<Value>) -> Self {
        kw.map_or(Kw::None, Kw::Hash)
    }
}

/// The Hash of `KW_ARGS` keywords: `keys` with the values at `stack[at..]` (still on the
/// stack, under `sp`, while it is built).
pub fn kw_hash(ctx: &mut Ctx, keys: &[SymId], at: usize) -> Result<Value> {
    // Distinct names (a call may repeat one: the last value wins) make their entries at once.
    if keys.len() <= 16 && keys.iter().enumerate().all(|(i, k)| !keys[..i].contains(k)) {
        return Ok(hash::from_distinct_symbols(ctx, keys, at));
    }
    let h = hash::new(ctx);
    let guard = ctx.protect(h);
    for (i, &k) in keys.iter().enumerate() {
        let v = ctx.stacks.stack[at + i];
        if let Err(e) = hash::aset(ctx, h, Value::symbol(k), v) {
            ctx.unprotect(guard);
            return Err(e);
        }
    }
    ctx.unprotect(guard);
    Ok(h)
}

#[cold]
#[inline(never)]
fn missing_keywords(ctx: &mut Ctx, p: &crate::compile::iseq::Params, vals: &[Value]) -> Unwind {
    let missing: Vec<Value> = p.kw.iter().zip(vals).filter(|(k, v)| k.required && v.is_undef()).map(|(k, _)| Value::symbol(k.name)).collect();
    let s = if missing.len() == 1 { "" } else { "s" };
    let list = keyword_list(ctx, &missing);
    ctx.arg_error(&format!("missing keyword{s}: {list}"))
}

#[cold]
#[inline(never)]
fn unknown_keywords(ctx: &mut Ctx, unknown: &[Value]) -> Unwind {
    let s = if unknown.len() == 1 { "" } else { "s" };
    let list = keyword_list(ctx, unknown);
    ctx.arg_error(&format!("unknown keyword{s}: {list}"))
}

/// The `ArgumentError` for `given` positional arguments to parameters `p`: CRuby names the
/// required keywords too (`expected 1; required keywords: a, b`).
#[cold]
#[inline(never)]
fn method_arity_error(ctx: &mut Ctx, p: &crate::compile::iseq::Params, given: usize, min: usize, max: Option<usize>) -> Unwind {
    let required: Vec<String> = p.kw.iter().filter(|k| k.required).map(|k| ctx.sym_str(k.name)).collect();
    if required.is_empty() {
        return ctx.arity_error(given, min, max);
    }
    let counts = crate::error::arity_counts(given, min, max);
    let s = if required.len() == 1 { "" } else { "s" };
    ctx.arg_error(&format!("wrong number of arguments ({counts}; required keyword{s}: {})", required.join(", ")))
}

/// The common keyword call: required positional parameters, all given, and keyword
/// parameters (`def m(a, k:, j: 1)`), with keywords from the stack or none. Binds without
/// allocating; `None` (nothing changed) for the general path, which also raises the errors
/// (a missing or unknown keyword).
#[inline]
fn bind_kw_only(ctx: &mut Ctx, iseq: &Iseq, bp: usize, argc: usize, kw: Kw<'_>) -> Option<usize> {
    let p = &iseq.params;
    let nlocals = iseq.local_count();
    let mut vals = [Value::UNDEF; 8];
    let vals = vals.get_mut(..p.kw.len())?;
    if bp + nlocals + STACK_MARGIN > ctx.stacks.stack.len() {
        return None;
    }
    if let Kw::Stack(keys, at) = kw {
        for (j, key) in keys.iter().enumerate() {
            let i = p.kw.iter().position(|k| k.name == *key)?;
            vals[i] = ctx.stacks.stack[at + j];
        }
    }
    if p.kw.iter().zip(vals.iter()).any(|(k, v)| k.required && v.is_undef()) {
        return None;
    }
    let stack = &mut ctx.stacks.stack[bp..bp + nlocals];
    let ks = p.kw_start() as usize;
    for v in &mut stack[argc..] {
        *v = Value::NIL;
    }
    stack[ks..ks + vals.len()].copy_from_slice(vals);
    Some(0)
}

/// Binds `argc` arguments at `stack[bp..]` (plus keywords and block) to the parameters of
/// `iseq`, writing the frame's locals in place. Returns the pc to start at.
#[allow(clippy::too_many_arguments)]
pub fn bind_args(ctx: &mut Ctx, iseq: &Iseq, bp: usize, argc: usize, kw: Option<Value>, block: Option<Block>, mode: ArgMode) -> Result<usize> {
    bind_args_kw(ctx, iseq, bp, argc, Kw::from_hash(kw), block, mode)
}

/// `bind_args` with keywords in either form. `Kw::Stack` values lie right after the
/// positional arguments; a callee with keyword parameters takes them without a Hash.
#[allow(clippy::too_many_arguments)]
pub fn bind_args_kw(ctx: &mut Ctx, iseq: &Iseq, bp: usize, mut argc: usize, mut kw: Kw<'_>, block: Option<Block>, mode: ArgMode) -> Result<usize> {
    let p = &iseq.params;
    let nlocals = iseq.local_count();
    let cap = ctx.stacks.stack.len();
    let need = |n: usize| bp + n + STACK_MARGIN;

    // Keywords on the stack as a Hash where the callee takes one (no keyword parameters),
    // or where a block's argument spreading could overwrite them.
    if let Kw::Stack(keys, at) = kw {
        if !p.accepts_kw() || mode == ArgMode::Loose {
            kw = Kw::Hash(kw_hash(ctx, keys, at)?);
        }
    }

    if mode == ArgMode::Strict && p.kw_only() && argc == p.lead as usize && !matches!(kw, Kw::Hash(_)) {
        if let Some(pc) = bind_kw_only(ctx, iseq, bp, argc, kw) {
            return Ok(pc);
        }
    }

    // Keywords to a method without keyword parameters become a trailing Hash.
    if let Kw::Hash(h) = kw {
        if !p.accepts_kw() {
            if p.no_kw {
                return Err(ctx.arg_error("no keywords accepted"));
            }
            kw = Kw::None;
            if hash::len(h) > 0 {
                if need(argc + 1) > cap {
                    return Err(stack_overflow(ctx));
                }
                let h2 = hash::dup(ctx, h);
                if p.ruby2_keywords {
                    crate::object::basic(h2).set(hash::FL_RUBY2_KEYWORDS, true);
                }
                ctx.stacks.stack[bp + argc] = h2;
                argc += 1;
                ctx.stacks.sp = bp + argc;
            }
        }
    }

    // A block given one Array for several parameters spreads it.
    if mode == ArgMode::Loose && argc == 1 {
        let multi = p.lead + p.post + p.opt;
        // Ruby 3.2+: keywords never make a block splat a lone Array
        // (`|a, k:|`, `|*a, **kw|`).
        let wants_splat = multi >= 2 || (p.rest && multi >= 1) || p.trailing_comma;
        if wants_splat {
            let a = ctx.stacks.stack[bp];
            if let Some(arr) = splat_candidate(ctx, a)? {
                let n = array::len(arr);
                if need(n) > cap {
                    return Err(stack_overflow(ctx));
                }
                for i in 0..n {
                    ctx.stacks.stack[bp + i] = array::get(arr, i);
                }
                argc = n;
                ctx.stacks.sp = bp + argc;
            }
        }
    }

    let required = (p.lead + p.post) as usize;
    let max = if p.rest || p.forwarding { None } else { Some(required + p.opt as usize) };
    match mode {
        ArgMode::Strict => {
            if argc < required || max.is_some_and(|m| argc > m) {
                return Err(method_arity_error(ctx, p, argc, required, max));
            }
        }
        ArgMode::Loose => {
            if argc < required {
                if need(required) > cap {
                    return Err(stack_overflow(ctx));
                }
                // Missing arguments fill the leading parameters first, then the post ones.
                for i in argc..required {
                    ctx.stacks.stack[bp + i] = Value::NIL;
                }
                argc = required;
                ctx.stacks.sp = bp + argc;
            }
            if let Some(m) = max {
                if argc > m {
                    argc = m;
                    ctx.stacks.sp = bp + argc;
                }
            }
        }
    }
    if need(nlocals.max(argc)) > cap {
        return Err(stack_overflow(ctx));
    }

    let lead = p.lead as usize;
    let post = p.post as usize;
    let n_opt = (argc - required).min(p.opt as usize);
    let n_rest = argc - required - n_opt;

    // Allocate everything first (arguments are still in place on the stack).
    let rest_arr = if p.rest {
        let s = bp + lead + n_opt;
        let items: Vec<Value> = ctx.stacks.stack[s..s + n_rest].to_vec();
        Some(array::from_vec(ctx, items))
    } else {
        None
    };
    let rest_guard = ctx.protect(rest_arr.unwrap_or(Value::NIL));
    // The keyword parameters' values (UNDEF: not given), read before any local is written.
    let nkw = p.kw.len();
    let mut kw_small = [Value::UNDEF; 8];
    let mut kw_large = Vec::new();
    let kw_vals: &mut [Value] = if nkw <= kw_small.len() {
        &mut kw_small[..nkw]
    } else {
        kw_large.resize(nkw, Value::UNDEF);
        &mut kw_large
    };
    let mut kwrest = Value::NIL;
    if p.accepts_kw() {
        let mut given = 0;
        match kw {
            Kw::Hash(h) => {
                for (k, slot) in p.kw.iter().zip(kw_vals.iter_mut()) {
                    if let Some(v) = hash::get(h, Value::symbol(k.name)) {
                        *slot = v;
                        given += 1;
                    }
                }
            }
            Kw::Stack(keys, at) => {
                for (j, key) in keys.iter().enumerate() {
                    if let Some(i) = p.kw.iter().position(|k| k.name == *key) {
                        kw_vals[i] = ctx.stacks.stack[at + j];
                        given += 1;
                    }
                }
            }
            Kw::None => {}
        }
        if p.kw.iter().zip(kw_vals.iter()).any(|(k, v)| k.required && v.is_undef()) {
            ctx.unprotect(rest_guard);
            return Err(missing_keywords(ctx, p, kw_vals));
        }
        if p.kwrest {
            kwrest = hash::new(ctx);
            ctx.protect(kwrest);
        }
        // Keys that are not parameters go to `**rest`, or are an error.
        let mut unknown: Vec<Value> = Vec::new();
        let known = |k: Value| k.as_symbol().is_some_and(|s| p.kw.iter().any(|kp| kp.name == s));
        match kw {
            Kw::Hash(h) if hash::len(h) > given => {
                for (k, v) in hash::pairs(h) {
                    if known(k) {
                        continue;
                    }
                    if p.kwrest {
                        hash::aset(ctx, kwrest, k, v)?;
                    } else {
                        unknown.push(k);
                    }
                }
            }
            Kw::Stack(keys, at) if keys.len() > given => {
                for (j, &key) in keys.iter().enumerate() {
                    let k = Value::symbol(key);
                    if known(k) {
                        continue;
                    }
                    if p.kwrest {
                        let v = ctx.stacks.stack[at + j];
                        hash::aset(ctx, kwrest, k, v)?;
                    } else {
                        unknown.push(k);
                    }
                }
            }
            _ => {}
        }
        if !unknown.is_empty() {
            ctx.unprotect(rest_guard);
            return Err(unknown_keywords(ctx, &unknown));
        }
    }
    let block_val = if p.block {
        let b = match block {
            Some(b) => rproc::from_block(ctx, &b)?,
            None => Value::NIL,
        };
        ctx.protect(b);
        b
    } else {
        Value::NIL
    };
    let post_vals: Vec<Value> = if post > 0 {
        let s = bp + argc - post;
        ctx.stacks.stack[s..s + post].to_vec()
    } else {
        Vec::new()
    };
    ctx.unprotect(rest_guard);
    // No allocation from here on: place values in their final slots.
    let stack = &mut ctx.stacks.stack;
    for i in (lead + n_opt)..nlocals {
        stack[bp + i] = Value::NIL;
    }
    if let Some(r) = rest_arr {
        stack[bp + p.rest_index() as usize] = r;
    }
    let ps = p.post_start() as usize;
    for (i, v) in post_vals.into_iter().enumerate() {
        stack[bp + ps + i] = v;
    }
    let ks = p.kw_start() as usize;
    stack[bp + ks..bp + ks + nkw].copy_from_slice(kw_vals);
    if p.kwrest {
        stack[bp + p.kwrest_index() as usize] = kwrest;
    }
    if p.block {
        stack[bp + p.block_index() as usize] = block_val;
    }
    Ok(if p.opt > 0 { p.opt_pcs[n_opt] as usize } else { 0 })
}

// ---- frames ----

/// Pushes the frame of a Ruby scope whose locals are bound in `[bp, bp + nlocals)`; execution
/// starts at `pc` and the result goes to `ret_sp`. `outer` is the enclosing environment (blocks,
/// eval) or nil. The caller fills in self, cref, block and the method identity.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn enter_frame<'c>(ctx: &'c mut Ctx, kind: FrameKind, iseq: &Iseq, iseq_val: Value, bp: usize, pc: usize, ret_sp: usize, outer: Value) -> Result<&'c mut Frame> {
    let nlocals = iseq.local_count();
    if bp + nlocals + iseq.stack_max as usize + STACK_MARGIN > ctx.stacks.stack.len() || ctx.stacks.frames.len() >= ctx.stacks.max_frames {
        return Err(stack_overflow(ctx));
    }
    let (env, locals, sp_base) = if iseq.locals_on_heap {
        ctx.stacks.sp = bp + nlocals;
        let (env, locals) = heap_locals(ctx, bp, nlocals, outer, !matches!(kind, FrameKind::Block | FrameKind::Lambda));
        (env, locals, bp)
    } else {
        (Value::NIL, ctx.stacks.stack[bp..].as_mut_ptr(), bp + nlocals)
    };
    ctx.stacks.sp = sp_base;
    let f = push_frame(ctx, kind);
    f.iseq = iseq as *const Iseq;
    f.iseq_val = iseq_val;
    f.pc = pc;
    f.bp = bp;
    f.sp_base = sp_base;
    f.ret_sp = ret_sp;
    f.locals = locals;
    f.env = env;
    f.outer = outer;
    Ok(f)
}

/// The common method call, kept small enough to inline into the dispatch loop: a method with
/// only required parameters, called with exactly that many, whose locals stay on the stack,
/// with room on both stacks. Returns false (having changed nothing) when any of that does not
/// hold, and the general `push_method_frame` must run.
#[inline(always)]
pub fn push_simple_method_frame(ctx: &mut Ctx, recv: Value, me: &MethodEntry, iseq_val: Value, cref: Value, argc: usize, block: BlockRef, ret_sp: usize) -> bool {
    let iseq = iseq_of(iseq_val);
    let p = &iseq.params;
    let nlocals = iseq.local_count();
    let bp = ret_sp + 1;
    if !p.simple || argc != p.lead as usize || bp + nlocals + iseq.stack_max as usize + STACK_MARGIN > ctx.stacks.stack.len() || ctx.stacks.frames.len() >= ctx.stacks.max_frames {
        return false;
    }
    let stack = &mut ctx.stacks.stack[bp..bp + nlocals];
    for v in &mut stack[argc..] {
        *v = Value::NIL;
    }
    let mut locals = stack.as_mut_ptr();
    ctx.stacks.sp = bp + nlocals;
    let (mut env, mut sp_base) = (Value::NIL, bp + nlocals);
    if iseq.locals_on_heap {
        (env, locals) = heap_locals(ctx, bp, nlocals, Value::NIL, true);
        sp_base = bp;
        ctx.stacks.sp = bp;
    }
    let f = push_method_frame_at(ctx, recv, me, iseq, iseq_val, cref, bp, sp_base, ret_sp, locals, 0);
    f.env = env;
    f.block = block;
    true
}

/// Pushes a method frame whose locals (at `locals`) and operand stack (from `sp_base`) are
/// in place; it starts at `pc` with no block and no heap environment.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn push_method_frame_at<'c>(ctx: &'c mut Ctx, recv: Value, me: &MethodEntry, iseq: &Iseq, iseq_val: Value, cref: Value, bp: usize, sp_base: usize, ret_sp: usize, locals: *mut Value, pc: usize) -> &'c mut Frame {
    push_frame_as(
        ctx,
        Frame {
            iseq: iseq as *const Iseq,
            pc,
            bp,
            sp_base,
            ret_sp,
            locals,
            self_: recv,
            cref,
            iseq_val,
            owner: me.owner,
            mid: Some(me.name),
            kind: FrameKind::Method,
            ..Frame::BLANK
        },
    )
}

/// The dispatch loop's cached call of a Ruby method whose parameters `ops::fast_target`
/// checked against the call site when it filled the cache (required and optional
/// positionals, locals on the value stack): the `argc` arguments after the receiver at
/// `ret_sp` become the first locals, the others start nil, and the frame starts at `pc`.
/// Only the room on the stacks is left to check; None (having changed nothing) without it.
/// The pushed frame's iseq and locals otherwise, for the dispatch loop to go on in it.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn push_fast_method_frame(ctx: &mut Ctx, recv: Value, me: &MethodEntry, iseq_val: Value, cref: Value, argc: usize, pc: usize, ret_sp: usize) -> Option<(*const Iseq, *mut Value)> {
    let iseq = iseq_of(iseq_val);
    let nlocals = iseq.local_count();
    let bp = ret_sp + 1;
    if bp + nlocals + iseq.stack_max as usize + STACK_MARGIN > ctx.stacks.stack.len() || ctx.stacks.frames.len() >= ctx.stacks.max_frames {
        return None;
    }
    // Filled as a slice: a raw-pointer loop here made LLVM keep the dispatch loop's `ip` in a
    // stack slot (a store and a load on every dispatch).
    // SAFETY: `bp + nlocals` is within the stack (checked above), and `argc <= nlocals`.
    let stack = unsafe { ctx.stacks.stack.get_unchecked_mut(bp..bp + nlocals) };
    // SAFETY: as above.
    for v in unsafe { stack.get_unchecked_mut(argc..) } {
        *v = Value::NIL;
    }
    let locals = stack.as_mut_ptr();
    ctx.stacks.sp = bp + nlocals;
    push_method_frame_at(ctx, recv, me, iseq, iseq_val, cref, bp, bp + nlocals, ret_sp, locals, pc);
    Some((iseq as *const Iseq, locals))
}

/// Pushes the frame of a Ruby method whose receiver is at `ret_sp` and whose `argc`
/// arguments follow it.
#[allow(clippy::too_many_arguments)]
pub fn push_method_frame(ctx: &mut Ctx, recv: Value, me: &MethodEntry, iseq_val: Value, cref: Value, argc: usize, kw: Option<Value>, block: Option<Block>, ret_sp: usize, flags: u8) -> Result<()> {
    push_method_frame_kw(ctx, recv, me, iseq_val, cref, argc, Kw::from_hash(kw), block, ret_sp, flags)
}

/// `push_method_frame` with keywords in either form (`Kw::Stack` values follow the
/// positional arguments).
#[allow(clippy::too_many_arguments)]
pub fn push_method_frame_kw(ctx: &mut Ctx, recv: Value, me: &MethodEntry, iseq_val: Value, cref: Value, argc: usize, kw: Kw<'_>, block: Option<Block>, ret_sp: usize, flags: u8) -> Result<()> {
    let iseq = iseq_of(iseq_val);
    let bp = ret_sp + 1;
    let pc = if iseq.params.simple && matches!(kw, Kw::None) {
        if argc != iseq.params.lead as usize {
            return Err(ctx.arity_error(argc, iseq.params.lead as usize, Some(iseq.params.lead as usize)));
        }
        let nlocals = iseq.local_count();
        if bp + nlocals + STACK_MARGIN > ctx.stacks.stack.len() {
            return Err(stack_overflow(ctx));
        }
        for i in argc..nlocals {
            ctx.stacks.stack[bp + i] = Value::NIL;
        }
        0
    } else if matches!(kw, Kw::None) && iseq.params.lead_and_block() && argc == iseq.params.lead as usize {
        // `def m(a, &blk)`: the block parameter is the only work beyond the simple case.
        let nlocals = iseq.local_count();
        if bp + nlocals + STACK_MARGIN > ctx.stacks.stack.len() {
            return Err(stack_overflow(ctx));
        }
        ctx.stacks.sp = bp + argc;
        let b = match &block {
            Some(b) => rproc::from_block(ctx, b)?,
            None => Value::NIL,
        };
        for i in argc..nlocals {
            ctx.stacks.stack[bp + i] = Value::NIL;
        }
        ctx.stacks.stack[bp + iseq.params.block_index() as usize] = b;
        ctx.stacks.sp = bp + nlocals;
        0
    } else {
        ctx.stacks.sp = match kw {
            Kw::Stack(keys, at) => at + keys.len(),
            _ => bp + argc,
        };
        bind_args_kw(ctx, iseq, bp, argc, kw, block, ArgMode::Strict)?
    };
    let f = enter_frame(ctx, FrameKind::Method, iseq, iseq_val, bp, pc, ret_sp, Value::NIL)?;
    f.self_ = recv;
    f.cref = cref;
    f.block = BlockRef::from_block(block);
    f.owner = me.owner;
    f.mid = Some(me.name);
    f.flags = flags;
    Ok(())
}

/// The common block call, small enough to inline into the dispatch loop and into `call_block`:
/// a non-lambda block with only required parameters whose locals stay on the stack, given
/// arguments it does not auto-splat. `cap` describes the block and `home` its home frame's
/// method (the caller has usually just read that frame); `argc` arguments are at `ret_sp`.
/// Returns false (having changed nothing) when the general path must run.
#[inline(always)]
pub fn push_simple_block_frame(ctx: &mut Ctx, cap: &Captured, home: HomeMethod, argc: usize, ret_sp: usize, flags: u8) -> bool {
    push_simple_frame_of(ctx, cap, home, argc, ret_sp, flags, FrameKind::Block)
}

/// `push_simple_block_frame` for the body of a method made with `define_method` (a lambda
/// frame flagged `FRAME_BMETHOD`): `cap`'s self is the receiver, `home` names the method,
/// and the argument count must be the parameters' (a lambda's arity).
#[inline]
pub fn push_simple_bmethod_frame(ctx: &mut Ctx, cap: &Captured, home: HomeMethod, argc: usize, ret_sp: usize) -> bool {
    push_simple_frame_of(ctx, cap, home, argc, ret_sp, FRAME_BMETHOD, FrameKind::Lambda)
}

/// The frame of `push_simple_block_frame` (`kind` Block) or `push_simple_bmethod_frame`
/// (`kind` Lambda, which takes exactly its parameters' count of arguments).
#[inline(always)]
fn push_simple_frame_of(ctx: &mut Ctx, cap: &Captured, home: HomeMethod, argc: usize, ret_sp: usize, flags: u8, kind: FrameKind) -> bool {
    let iseq = iseq_of(cap.iseq);
    let p = &iseq.params;
    let lead = p.lead as usize;
    let nlocals = iseq.local_count();
    let bp = ret_sp;
    let arity_ok = if kind == FrameKind::Lambda { argc == lead } else { argc != 1 || lead < 2 };
    if !p.simple || !arity_ok || bp + nlocals.max(argc) + iseq.stack_max as usize + STACK_MARGIN > ctx.stacks.stack.len() || ctx.stacks.frames.len() >= ctx.stacks.max_frames {
        return false;
    }
    // SAFETY: `bp + nlocals` is within the stack (checked above); `argc.min(lead) <= nlocals`.
    let stack = unsafe { ctx.stacks.stack.get_unchecked_mut(bp..bp + nlocals) };
    // SAFETY: as above.
    for v in unsafe { stack.get_unchecked_mut(argc.min(lead)..) } {
        *v = Value::NIL;
    }
    let mut locals = stack.as_mut_ptr();
    ctx.stacks.sp = bp + nlocals;
    let (mut env, mut sp_base) = (Value::NIL, bp + nlocals);
    if iseq.locals_on_heap {
        (env, locals) = heap_locals(ctx, bp, nlocals, cap.env, false);
        sp_base = bp;
        ctx.stacks.sp = bp;
    }
    push_frame_as(
        ctx,
        Frame {
            iseq: iseq as *const Iseq,
            iseq_val: cap.iseq,
            bp,
            sp_base,
            env,
            ret_sp,
            locals,
            outer: cap.env,
            self_: cap.self_,
            cref: cap.cref,
            home_index: cap.home_index,
            home_serial: cap.home_serial,
            owner: home.owner,
            owner_skip: home.owner_skip,
            mid: home.mid,
            block: home.block,
            flags,
            kind,
            ..Frame::BLANK
        },
    );
    true
}

/// Pushes a block frame for `cap` with `argc` arguments at `bp`; the result goes to `bp`.
#[allow(clippy::too_many_arguments)]
pub fn push_block_frame(ctx: &mut Ctx, cap: &Captured, argc: usize, kw: Option<Value>, block_arg: Option<Block>, lambda: bool, self_override: Option<(Value, Value)>, flags: u8, ret_sp: usize) -> Result<()> {
    let iseq = iseq_of(cap.iseq);
    let bp = ret_sp;
    let p = &iseq.params;
    let lead = p.lead as usize;
    // Fast path: only required parameters, no keywords, and no auto-splat of a single Array
    // (a block ignores extra arguments and fills missing ones with nil).
    let pc = if p.simple && kw.is_none() && (if lambda { argc == lead } else { argc != 1 || lead < 2 }) {
        let nlocals = iseq.local_count();
        if bp + nlocals.max(argc) + STACK_MARGIN > ctx.stacks.stack.len() {
            return Err(stack_overflow(ctx));
        }
        for i in argc.min(lead)..nlocals {
            ctx.stacks.stack[bp + i] = Value::NIL;
        }
        0
    } else {
        ctx.stacks.sp = bp + argc;
        let mode = if lambda { ArgMode::Strict } else { ArgMode::Loose };
        bind_args(ctx, iseq, bp, argc, kw, block_arg, mode)?
    };
    let (self_, cref) = self_override.unwrap_or((cap.self_, cap.cref));
    let HomeMethod { owner, owner_skip, mid, block } = HomeMethod::find(&ctx.stacks.frames, cap);
    let f = enter_frame(ctx, if lambda { FrameKind::Lambda } else { FrameKind::Block }, iseq, cap.iseq, bp, pc, ret_sp, cap.env)?;
    f.flags = flags;
    f.self_ = self_;
    f.cref = cref;
    f.home_index = cap.home_index;
    f.home_serial = cap.home_serial;
    f.owner = owner;
    f.owner_skip = owner_skip;
    f.mid = mid;
    f.block = block;
    Ok(())
}

/// Runs an iseq compiled from `eval`/a script as a frame over `outer` (the environment of
/// the binding, or nil for a fresh top level).
#[allow(clippy::too_many_arguments)]
pub fn run_iseq_frame(ctx: &mut Ctx, iseq_val: Value, kind: FrameKind, self_: Value, cref: Value, outer: Value, owner: Value, mid: Option<SymId>, block: Option<Block>) -> Result<(Value, Value)> {
    run_iseq_frame_hooked(ctx, iseq_val, kind, self_, cref, outer, owner, mid, block, None)
}

/// `run_iseq_frame`, calling `on_enter` with the frame's environment before it runs.
#[allow(clippy::too_many_arguments)]
pub fn run_iseq_frame_hooked(ctx: &mut Ctx, iseq_val: Value, kind: FrameKind, self_: Value, cref: Value, outer: Value, owner: Value, mid: Option<SymId>, block: Option<Block>, on_enter: Option<&mut dyn FnMut(&mut Ctx, Value)>) -> Result<(Value, Value)> {
    let iseq = iseq_of(iseq_val);
    let base = ctx.stacks.sp;
    if ctx.native_stack_exhausted() {
        return Err(stack_overflow(ctx));
    }
    let nlocals = iseq.local_count();
    if base + nlocals + iseq.stack_max as usize + STACK_MARGIN > ctx.stacks.stack.len() {
        return Err(stack_overflow(ctx));
    }
    for i in 0..nlocals {
        ctx.stacks.stack[base + i] = Value::NIL;
    }
    let f = match enter_frame(ctx, kind, iseq, iseq_val, base, 0, base, outer) {
        Ok(f) => f,
        Err(e) => {
            ctx.stacks.sp = base;
            return Err(e);
        }
    };
    f.self_ = self_;
    f.cref = cref;
    f.owner = owner;
    f.mid = mid;
    f.block = BlockRef::from_block(block);
    f.flags = FRAME_FINISH;
    if kind == FrameKind::Top {
        f.visibility = Visibility::Private;
    }
    let env = ctx.stacks.frames.last().map_or(Value::NIL, |f| f.env);
    if let Some(hook) = on_enter {
        hook(ctx, env);
    }
    let r = exec::run(ctx)?;
    Ok((r, env))
}

/// Pushes a frame recording a builtin call (for backtraces).
#[inline]
pub fn push_builtin_frame(ctx: &mut Ctx, recv: Value, owner: Value, mid: SymId) {
    let sp = ctx.stacks.sp;
    push_frame_as(ctx, Frame { self_: recv, owner, mid: Some(mid), ret_sp: sp, bp: sp, sp_base: sp, kind: FrameKind::Builtin, ..Frame::BLANK });
}

/// Calls a builtin with its frame; the arity was not checked yet.
#[inline]
pub fn call_builtin(ctx: &mut Ctx, recv: Value, me: &MethodEntry, args: &Args<'_>) -> Result<Value> {
    let MethodBody::Builtin { f, arity, .. } = me.body else { unreachable!("call_builtin on a non-builtin") };
    let n = args.pos.len();
    if n < arity.min as usize || arity.max.is_some_and(|m| n > m as usize) {
        return Err(ctx.arity_error(n, arity.min as usize, arity.max.map(|m| m as usize)));
    }
    if ctx.stacks.frames.len() >= ctx.stacks.max_frames || ctx.native_stack_exhausted() {
        return Err(stack_overflow(ctx));
    }
    let depth = ctx.stacks.frames.len();
    if crate::core::tracepoint::tracing(ctx) {
        crate::core::tracepoint::c_event(ctx, recv, me.owner, me.name, None)?;
        push_builtin_frame(ctx, recv, me.owner, me.name);
        let r = f(ctx, recv, args);
        ctx.stacks.frames.truncate(depth);
        let v = r?;
        crate::core::tracepoint::c_event(ctx, recv, me.owner, me.name, Some(v))?;
        return Ok(v);
    }
    push_builtin_frame(ctx, recv, me.owner, me.name);
    let r = f(ctx, recv, args);
    ctx.stacks.frames.truncate(depth);
    r
}

// ---- calls from Rust ----

/// `recv.mid(*args, **kw, &block)` from Rust.
pub fn call_method(ctx: &mut Ctx, recv: Value, mid: SymId, args: &[Value], kw: Option<Value>, block: Option<Block>, fcall: bool) -> Result<Value> {
    let klass = class_of(ctx, recv);
    match module::find_method(ctx, klass, mid) {
        Some(me) => {
            if !fcall && me.visibility != Visibility::Public {
                let self_ = current_self(ctx);
                if me.visibility == Visibility::Private || !protected_ok(ctx, self_, &me) {
                    return Err(method_visibility_error(ctx, recv, mid, me.visibility));
                }
            }
            invoke_from_rust(ctx, recv, &me, args, kw, block)
        }
        None => call_method_missing(ctx, recv, mid, args, kw, block, MissingKind::Normal),
    }
}

pub fn current_self(ctx: &Ctx) -> Value {
    ctx.stacks.frames.iter().rev().find(|f| f.kind != FrameKind::Builtin).map_or(Value::NIL, |f| f.self_)
}

fn protected_ok(ctx: &Ctx, self_: Value, me: &MethodEntry) -> bool {
    me.visibility == Visibility::Protected && {
        let k = class_of(ctx, self_);
        module::includes_module(ctx, k, module::real_class(me.owner))
    }
}

/// Invokes a resolved method from Rust.
pub fn invoke_from_rust(ctx: &mut Ctx, recv: Value, me: &Arc<MethodEntry>, args: &[Value], kw: Option<Value>, block: Option<Block>) -> Result<Value> {
    match &me.body {
        MethodBody::Builtin { kw: accepts_kw, .. } => {
            if kw.is_some() && !accepts_kw {
                let h = kw.unwrap_or(Value::NIL);
                if hash::len(h) == 0 {
                    return call_builtin(ctx, recv, me, &Args { pos: args, kw: None, block });
                }
                let mut v = args.to_vec();
                v.push(h);
                return call_builtin(ctx, recv, me, &Args { pos: &v, kw: None, block });
            }
            call_builtin(ctx, recv, me, &Args { pos: args, kw, block })
        }
        MethodBody::Iseq { iseq, cref } => {
            let base = ctx.stacks.sp;
            if base + args.len() + 1 + STACK_MARGIN > ctx.stacks.stack.len() || ctx.native_stack_exhausted() {
                return Err(stack_overflow(ctx));
            }
            ctx.stacks.stack[base] = recv;
            ctx.stacks.stack[base + 1..base + 1 + args.len()].copy_from_slice(args);
            ctx.stacks.sp = base + 1 + args.len();
            if let Err(e) = push_method_frame(ctx, recv, me, *iseq, *cref, args.len(), kw, block, base, FRAME_FINISH) {
                ctx.stacks.sp = base;
                return Err(e);
            }
            exec::run(ctx)
        }
        MethodBody::AttrReader(name) => {
            if !args.is_empty() {
                return Err(ctx.arity_error(args.len(), 0, Some(0)));
            }
            Ok(crate::core::object::ivar_get(ctx, recv, *name))
        }
        MethodBody::AttrWriter(name) => {
            if args.len() != 1 {
                return Err(ctx.arity_error(args.len(), 1, Some(1)));
            }
            crate::core::object::ivar_set(ctx, recv, *name, args[0])?;
            Ok(args[0])
        }
        MethodBody::Proc(p) => call_bmethod(ctx, recv, me, *p, args, kw, block),
        MethodBody::Alias(inner) => {
            let inner = inner.clone();
            invoke_from_rust(ctx, recv, &inner, args, kw, block)
        }
        MethodBody::Undefined | MethodBody::ZSuper => {
            call_method_missing(ctx, recv, me.name, args, kw, block, MissingKind::Normal)
        }
    }
}

/// A method defined with `define_method` and a block: the block runs as a lambda with
/// `self` = receiver and a frame that answers `__method__` and `super`.
pub fn call_bmethod(ctx: &mut Ctx, recv: Value, me: &MethodEntry, proc_: Value, args: &[Value], kw: Option<Value>, block: Option<Block>) -> Result<Value> {
    let Some(cap) = rproc::captured(proc_) else {
        // A proc made from a method or symbol: call it with the receiver prepended.
        return ctx.call_proc(proc_, args, block);
    };
    let base = ctx.stacks.sp;
    if base + args.len() + STACK_MARGIN > ctx.stacks.stack.len() || ctx.native_stack_exhausted() {
        return Err(stack_overflow(ctx));
    }
    ctx.stacks.stack[base..base + args.len()].copy_from_slice(args);
    let cref = cap.cref;
    if let Err(e) = push_block_frame(ctx, &cap, args.len(), kw, block, true, Some((recv, cref)), FRAME_FINISH | FRAME_BMETHOD, base) {
        ctx.stacks.sp = base;
        return Err(e);
    }
    // `yield`, `block_given?` and `super()` see the block of the scope the body was written
    // in, as CRuby's do; the block given to the call only reaches a `&b` parameter.
    rproc::restore_home(ctx, proc_);
    if let Some(f) = ctx.stacks.frames.last_mut() {
        f.owner = me.owner;
        f.mid = Some(me.name);
    }
    exec::run(ctx)
}

/// Whether a builtin that yields `[key, value]` pairs may yield the two values to `block`
/// instead, with no Array made (CRuby's `rb_block_pair_yield_optimizable`): a block that
/// is not a lambda and requires at least two positional parameters and takes no keywords
/// binds both the same way (the pair would be spread over its parameters), so the pair is
/// never seen. A Proc passed with `&` must also take a fixed number of arguments, as in CRuby.
pub fn takes_pair_as_two(block: &Block) -> bool {
    let (cap, fixed) = match block {
        Block::Captured(c) => (*c, false),
        Block::Proc(p) if !rproc::is_lambda(*p) && !rproc::is_native(*p) => match rproc::captured(*p) {
            Some(c) => (c, true),
            None => return false,
        },
        Block::Proc(_) => return false,
    };
    let p = &iseq_of(cap.iseq).params;
    p.lead + p.post >= 2 && p.kw.is_empty() && !p.kwrest && !p.forwarding && !(fixed && (p.opt > 0 || p.rest))
}

/// Calls a block (or proc) from Rust.
pub fn call_block(ctx: &mut Ctx, block: &Block, args: &[Value], kw: Option<Value>, block_arg: Option<Block>, self_override: Option<(Value, Option<Value>)>) -> Result<Value> {
    // The common case (a literal block given plain arguments) with a small prologue; the
    // rest is out of line.
    let cap = match block {
        Block::Captured(c) => Some(*c),
        // A Rust closure given as a block (external iteration's generator, for one).
        Block::Proc(p) if rproc::is_native(*p) && kw.is_none() => return rproc::call_native(ctx, *p, args),
        Block::Proc(p) if !rproc::is_lambda(*p) => rproc::captured(*p),
        Block::Proc(_) => None,
    };
    if let (Some(cap), None, None, None) = (&cap, kw, block_arg, self_override) {
        let base = ctx.stacks.sp;
        if base + args.len() + STACK_MARGIN <= ctx.stacks.stack.len() && !ctx.native_stack_exhausted() {
            // SAFETY: bounds checked just above. One argument (the usual yield) is stored
            // directly; `copy_nonoverlapping` of an unknown length becomes a memcpy call.
            unsafe {
                let dst = ctx.stacks.stack.as_mut_ptr().add(base);
                match args {
                    [] => {}
                    [v] => *dst = *v,
                    _ => std::ptr::copy_nonoverlapping(args.as_ptr(), dst, args.len()),
                }
            }
            if push_simple_block_frame(ctx, cap, HomeMethod::find(&ctx.stacks.frames, cap), args.len(), base, FRAME_FINISH) {
                if let Block::Proc(p) = block {
                    rproc::restore_home(ctx, *p);
                }
                return exec::run(ctx);
            }
        }
    }
    call_block_general(ctx, block, args, kw, block_arg, self_override)
}

#[inline(never)]
fn call_block_general(ctx: &mut Ctx, block: &Block, args: &[Value], kw: Option<Value>, block_arg: Option<Block>, self_override: Option<(Value, Option<Value>)>) -> Result<Value> {
    let (cap, lambda) = match block {
        Block::Captured(c) => (*c, false),
        Block::Proc(p) => match rproc::captured(*p) {
            Some(c) => (c, rproc::is_lambda(*p)),
            None => return rproc::call_special(ctx, *p, args, kw, block_arg),
        },
    };
    let base = ctx.stacks.sp;
    if base + args.len() + STACK_MARGIN > ctx.stacks.stack.len() || ctx.native_stack_exhausted() {
        return Err(stack_overflow(ctx));
    }
    ctx.stacks.stack[base..base + args.len()].copy_from_slice(args);
    let over = match self_override {
        Some((s, Some(klass))) => {
            let cref = crate::interp::exec::new_cref(ctx, klass, cap.cref, true);
            Some((s, cref))
        }
        Some((s, None)) => Some((s, cap.cref)),
        None => None,
    };
    if over.is_none() && !lambda && kw.is_none() && block_arg.is_none() && push_simple_block_frame(ctx, &cap, HomeMethod::find(&ctx.stacks.frames, &cap), args.len(), base, FRAME_FINISH) {
        if let Block::Proc(p) = block {
            rproc::restore_home(ctx, *p);
        }
        return exec::run(ctx);
    }
    if let Err(e) = push_block_frame(ctx, &cap, args.len(), kw, block_arg, lambda, over, FRAME_FINISH, base) {
        ctx.stacks.sp = base;
        return Err(e);
    }
    if let Block::Proc(p) = block {
        rproc::restore_home(ctx, *p);
    }
    exec::run(ctx)
}

// ---- method_missing and visibility errors ----

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum MissingKind {
    Normal,
    /// A bare identifier: "undefined local variable or method".
    VCall,
    /// `super` with no superclass method.
    Super,
}

pub fn call_method_missing(ctx: &mut Ctx, recv: Value, mid: SymId, args: &[Value], kw: Option<Value>, block: Option<Block>, kind: MissingKind) -> Result<Value> {
    let klass = class_of(ctx, recv);
    if let Some(mm) = module::find_method(ctx, klass, sym::METHOD_MISSING) {
        let is_default = matches!(mm.body, MethodBody::Builtin { .. }) && mm.owner == ctx.c().basic_object;
        if !is_default {
            let mut v = Vec::with_capacity(args.len() + 1);
            v.push(Value::symbol(mid));
            v.extend_from_slice(args);
            return invoke_from_rust(ctx, recv, &mm, &v, kw, block);
        }
    }
    Err(no_method_error(ctx, recv, mid, args, kind))
}

/// Builds the NoMethodError/NameError for a missing method, CRuby 3.4 wording.
pub fn no_method_error(ctx: &mut Ctx, recv: Value, mid: SymId, args: &[Value], kind: MissingKind) -> Unwind {
    let name = ctx.sym_str(mid);
    let desc = crate::core::object::describe_for_error(ctx, recv);
    let (class, msg) = match kind {
        MissingKind::VCall => (ctx.c().name_error, format!("undefined local variable or method '{name}' for {desc}")),
        MissingKind::Super => (ctx.c().no_method_error, format!("super: no superclass method '{name}' for {desc}")),
        MissingKind::Normal => (ctx.c().no_method_error, format!("undefined method '{name}' for {desc}")),
    };
    let e = ctx.new_error(class, &msg);
    crate::core::object::ivar_set_raw(ctx, e, sym::NAME, Value::symbol(mid));
    crate::core::object::ivar_set_raw(ctx, e, sym::RECEIVER, recv);
    if class == ctx.c().no_method_error {
        let a = array::from_slice(ctx, args);
        crate::core::object::ivar_set_raw(ctx, e, sym::ARGS, a);
    }
    Unwind::Raise(e)
}

pub fn method_visibility_error(ctx: &mut Ctx, recv: Value, mid: SymId, vis: Visibility) -> Unwind {
    let name = ctx.sym_str(mid);
    let desc = crate::core::object::describe_for_error(ctx, recv);
    let which = if vis == Visibility::Protected { "protected" } else { "private" };
    let msg = format!("{which} method '{name}' called for {desc}");
    let e = ctx.new_error(ctx.c().no_method_error, &msg);
    crate::core::object::ivar_set_raw(ctx, e, sym::NAME, Value::symbol(mid));
    crate::core::object::ivar_set_raw(ctx, e, sym::RECEIVER, recv);
    Unwind::Raise(e)
}

/// Reads a value slot header type (used by the dispatch loop's fast paths).
#[inline(always)]
pub fn heap_type(v: Value) -> Option<ObjType> {
    if v.is_heap() {
        // SAFETY: heap values start with RBasic.
        Some(unsafe { (*v.as_ptr::<RBasic>()).obj_type() })
    } else {
        None
    }
}
