//! The dispatch loop.
//!
//! Invariants:
//! - `run` executes the top frame and every frame it pushes, and returns when a frame with
//!   `FRAME_FINISH` leaves (or an unwind passes it).
//! - Inside the loop `sp`/`pc` are cached in locals; `sync!` writes them back before
//!   anything that can allocate, call, or raise, so the collector and backtraces see the
//!   truth. After a call, `sp` is reloaded from `ctx.stacks.sp`.
//! - Safepoints (`Checkpoint` at loop back edges and method entry) poll one word.

use crate::compile::iseq::{CatchKind, Insn, Iseq};
use crate::core::float::IntoValue;
use crate::core::{array, float, hash, integer, string};
use crate::error::Unwind;
use crate::interp::env::{self, RCref, CREF_EVAL};
use crate::core::module::MethodBody;
use crate::interp::call;
use crate::interp::frame::{Block, Captured, FRAME_CTOR, FRAME_FINISH, FRAME_ITER, FRAME_ITER_BLOCK};
use crate::interp::iter;
use crate::interp::ops;
use crate::object::{basic, ObjType, RObject};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Runs frames until the frame that was on top when called (a `FRAME_FINISH` frame) leaves.
pub fn run(ctx: &mut Ctx) -> Result<Value> {
    ctx.stacks.exec_depth += 1;
    let r = run_loop(ctx);
    ctx.stacks.exec_depth -= 1;
    r
}

/// Continues a fiber's frames after a shallow `Fiber.yield`: the resume value becomes the
/// result of that call (or the exception is raised at it), then the loop runs on.
pub fn resume_suspended(ctx: &mut Ctx, r: Result<Value>) -> Result<Value> {
    ctx.stacks.exec_depth += 1;
    let out = match r {
        Ok(v) => {
            let sp = ctx.stacks.sp;
            ctx.stacks.stack[sp] = v;
            ctx.stacks.sp = sp + 1;
            run_loop(ctx)
        }
        Err(e) => match handle_unwind(ctx, e) {
            Ok(None) => run_loop(ctx),
            Ok(Some(v)) => Ok(v),
            Err(e) => Err(e),
        },
    };
    ctx.stacks.exec_depth -= 1;
    out
}

/// Continues a fiber's frames from the instruction a borrowed run stopped at
/// (`interp::borrowed`): the resume value is already on its stack.
pub fn continue_suspended(ctx: &mut Ctx) -> Result<Value> {
    ctx.stacks.exec_depth += 1;
    let out = run_loop(ctx);
    ctx.stacks.exec_depth -= 1;
    out
}

/// A new cref for `klass` inside `parent`.
pub fn new_cref(ctx: &mut Ctx, klass: Value, parent: Value, eval: bool) -> Value {
    // A scope sees the refinements of the scope around it; inside a refine block (the
    // scope of a refinement) also those of the module that defines it.
    let inherited = if parent.is_nil() { Value::NIL } else { crate::interp::env::cref(parent).refinements };
    let refinements = crate::core::refinement::scope_refinements(ctx, klass, inherited);
    let p = ctx.alloc_slot(ObjType::Cref, Value::NIL) as *mut RCref;
    // SAFETY: fresh Cref slot, initialised before the next allocation.
    unsafe {
        (*p).klass = klass;
        (*p).parent = parent;
        (*p).refinements = refinements;
        if eval {
            (*p).basic.flags |= CREF_EVAL;
        }
    }
    Value::from_ptr(p)
}

/// Boxes a non-exception unwind so an ensure handler can keep it in a local.
pub fn unwind_to_value(ctx: &mut Ctx, e: Unwind) -> Value {
    match e {
        Unwind::Raise(v) => v,
        other => ops::box_unwind(ctx, other),
    }
}

/// Leaves the top frame with `v`. `Some(v)` when it was a finish frame.
#[inline]
fn leave_frame(ctx: &mut Ctx, v: Value) -> Option<Value> {
    let f = ctx.stacks.frames.pop().expect("leave without frame");
    let v = if f.flags & FRAME_CTOR != 0 { f.self_ } else { v };
    if f.flags & FRAME_FINISH != 0 {
        ctx.stacks.sp = f.ret_sp;
        return Some(v);
    }
    ctx.stacks.stack[f.ret_sp] = v;
    ctx.stacks.sp = f.ret_sp + 1;
    None
}

/// Finds where an unwind lands: a `break` target, a handler, a `return` target, or the
/// end of this `run`. `Ok(None)` means "continue with the top frame".
fn handle_unwind(ctx: &mut Ctx, e: Unwind) -> Result<Option<Value>> {
    if matches!(e, Unwind::Suspend) {
        // A shallow Fiber.yield: leave the loop with every frame in place.
        return Err(e);
    }
    let e = match e {
        Unwind::Raise(exc) if crate::core::tracepoint::tracing(ctx) && ctx.trace_raised != exc => {
            ctx.trace_raised = exc;
            match crate::core::tracepoint::raised(ctx, exc) {
                Ok(()) => Unwind::Raise(exc),
                Err(other) => other,
            }
        }
        e => e,
    };
    loop {
        let fi = ctx.stacks.frames.len() - 1;
        let (serial, pc, is_ruby) = {
            let f = &ctx.stacks.frames[fi];
            (f.serial, f.pc, f.is_ruby())
        };
        if !is_ruby {
            // A builtin frame left behind by a callee that unwound through Rust, or an
            // iterator frame (whose call's result slot is where the stack resumes).
            if ctx.stacks.frames[fi].flags & FRAME_ITER != 0 {
                if iter::unwind(ctx, &e) {
                    return Ok(None);
                }
            } else {
                ctx.stacks.frames.pop();
            }
            continue;
        }
        if let Unwind::Break { target, value } = e {
            if target == serial {
                let sp = ctx.stacks.sp;
                ctx.stacks.stack[sp] = value;
                ctx.stacks.sp = sp + 1;
                return Ok(None);
            }
        }
        if !matches!(e, Unwind::Exit(_)) {
            let iseq: &Iseq = ctx.stacks.frames[fi].iseq();
            let at = pc.saturating_sub(1) as u32;
            let found = iseq.catch_table.iter().find(|c| c.start <= at && at < c.end && (c.kind == CatchKind::Ensure || matches!(e, Unwind::Raise(_)))).copied();
            if let Some(entry) = found {
                if let Unwind::Raise(exc) = e {
                    if entry.kind == CatchKind::Rescue {
                        ctx.stacks.errinfo = exc;
                    }
                }
                let rescued = match e {
                    Unwind::Raise(exc) if entry.kind == CatchKind::Rescue => Some(exc),
                    _ => None,
                };
                let v = unwind_to_value(ctx, e);
                let f = &mut ctx.stacks.frames[fi];
                // SAFETY: entry.local is a local of this frame.
                unsafe { *f.locals.add(entry.local as usize) = v };
                f.pc = entry.handler as usize;
                ctx.stacks.sp = f.sp_base + entry.depth as usize;
                if let Some(exc) = rescued.filter(|_| crate::core::tracepoint::tracing(ctx)) {
                    // A hook raising unwinds from the handler.
                    if let Err(other) = crate::core::tracepoint::rescue_entered(ctx, fi, exc) {
                        return handle_unwind(ctx, other);
                    }
                }
                return Ok(None);
            }
        }
        if let Unwind::Return { target, value } = e {
            if target == serial {
                return Ok(leave_frame(ctx, value));
            }
        }
        let f = ctx.stacks.frames.pop().expect("frame");
        ctx.stacks.sp = f.ret_sp;
        if f.flags & FRAME_FINISH != 0 {
            return Err(e);
        }
    }
}

#[inline(always)]
fn fix_add(a: Value, b: Value) -> Option<Value> {
    (a.raw() as i64 - 1).checked_add(b.raw() as i64).map(|r| Value::from_raw(r as u64))
}

#[inline(always)]
fn fix_sub(a: Value, b: Value) -> Option<Value> {
    (a.raw() as i64).checked_sub(b.raw() as i64 - 1).map(|r| Value::from_raw(r as u64))
}

/// Runs the dispatch loop in its untraced instance, or in its traced one while a TracePoint
/// is enabled (`core::tracepoint`): the untraced loop has no event checks at all. Tracing is
/// switched by builtins (`TracePoint#enable`, `Coverage.start` …): after a call returns a
/// value, the running instance hands over to the other one if it changed (returning with
/// the frame synced; the other instance resumes it at its pc).
fn run_loop(ctx: &mut Ctx) -> Result<Value> {
    loop {
        let r = if crate::core::tracepoint::tracing(ctx) { run_loop_impl::<true>(ctx) } else { run_loop_impl::<false>(ctx) };
        if ctx.trace_switch {
            ctx.trace_switch = false;
            continue;
        }
        return r;
    }
}

fn run_loop_impl<const TRACE: bool>(ctx: &mut Ctx) -> Result<Value> {
    let vmp: *const crate::vm::Vm = ctx.vm_ptr();
    'reload: loop {
        // The top frame: a Ruby frame, once any iterator frame on top has been stepped.
        let mut entered: (usize, *const Iseq, usize, *mut Value) = {
            let fi = ctx.stacks.frames.len() - 1;
            // SAFETY: fi is the top frame.
            if unsafe { ctx.stacks.frames.get_unchecked(fi).iseq.is_null() } {
                // An iterator frame whose block frame just left (no other builtin frame
                // reaches the loop): its next iteration, or its end.
                match iter::step(ctx) {
                    Ok(()) => continue 'reload,
                    Err(e) => match handle_unwind(ctx, e) {
                        Ok(None) => continue 'reload,
                        Ok(Some(v)) => return Ok(v),
                        Err(e) => return Err(e),
                    },
                }
            }
            // SAFETY: fi is the top frame.
            let f = unsafe { ctx.stacks.frames.get_unchecked(fi) };
            (fi, f.iseq, f.pc, f.locals)
        };
        // The running frame's index, iseq, pc and locals. A cached call that pushed a Ruby
        // frame, and a return to a Ruby frame, set `entered` to that frame and continue
        // 'enter, which takes them as they are instead of reading the top frame again.
        // (Switching to the frame right in the dispatch loop, without 'enter, made the loop
        // keep `ip` in a stack slot: see `Send`.)
        'enter: loop {
            // SAFETY: a Ruby frame keeps its iseq alive.
            let (fi, iseq, pc0, locals): (usize, &Iseq, usize, *mut Value) = (entered.0, unsafe { &*entered.1 }, entered.2, entered.3);
            let code = iseq.code.as_ptr();
            // SAFETY: pc0 is within the code (frames only store pcs of their own iseq).
            let mut ip = unsafe { code.add(pc0) };
            let base = ctx.stacks.stack.as_mut_ptr();
            let mut sp = ctx.stacks.sp;

            macro_rules! push {
                ($v:expr) => {{
                    let v = $v;
                    // SAFETY: enter_frame reserved stack_max slots above sp_base.
                    unsafe { *base.add(sp) = v };
                    sp += 1;
                }};
            }
            macro_rules! pop {
                () => {{
                    sp -= 1;
                    // SAFETY: sp stays above sp_base for well-formed code.
                    unsafe { *base.add(sp) }
                }};
            }
            macro_rules! top {
                ($n:expr) => {
                    // SAFETY: as for pop.
                    unsafe { *base.add(sp - 1 - $n) }
                };
            }
            // `self` is read from the frame where used rather than kept in a local: as a local,
            // the compiler hoisted tests on it (heap object? which type?) into every frame
            // change, which costs more than the load.
            macro_rules! self_ {
                () => {
                    // SAFETY: fi is the top frame of this loop.
                    unsafe { ctx.stacks.frames.get_unchecked(fi).self_ }
                };
            }
            macro_rules! set_top {
                ($n:expr, $v:expr) => {
                    // SAFETY: as for pop.
                    unsafe { *base.add(sp - 1 - $n) = $v }
                };
            }
            macro_rules! pc {
                () => {
                    // SAFETY: ip points into `code`.
                    unsafe { ip.offset_from(code) as usize }
                };
            }
            macro_rules! jump {
                ($t:expr) => {
                    // SAFETY: jump targets are within the code.
                    ip = unsafe { code.add($t as usize) }
                };
            }
            macro_rules! sync {
                () => {{
                    ctx.stacks.sp = sp;
                    let pc = pc!();
                    // SAFETY: fi is the index of the running frame.
                    unsafe { ctx.stacks.frames.get_unchecked_mut(fi).pc = pc };
                }};
            }
            macro_rules! poll {
                () => {
                    // SAFETY: the VM outlives this loop.
                    if unsafe { (*vmp).interrupt.load(std::sync::atomic::Ordering::Relaxed) } != 0 {
                        sync!();
                        tri!(ops::handle_interrupt(ctx));
                    }
                };
            }
            macro_rules! throw {
                ($e:expr) => {{
                    let e = $e;
                    sync!();
                    match handle_unwind(ctx, e) {
                        Ok(None) => continue 'reload,
                        Ok(Some(v)) => return Ok(v),
                        Err(e) => return Err(e),
                    }
                }};
            }
            macro_rules! tri {
                ($r:expr) => {
                    match $r {
                        Ok(v) => v,
                        Err(e) => throw!(e),
                    }
                };
            }
            // A failed call has already reset `ctx.stacks.sp` to the call's result slot (where
            // a `break` value lands), so only the pc is synced before unwinding.
            macro_rules! throw_call {
                ($e:expr) => {{
                    let e = $e;
                    let pc = pc!();
                    // SAFETY: fi is the index of the running frame.
                    unsafe { ctx.stacks.frames.get_unchecked_mut(fi).pc = pc };
                    match handle_unwind(ctx, e) {
                        Ok(None) => continue 'reload,
                        Ok(Some(v)) => return Ok(v),
                        Err(e) => return Err(e),
                    }
                }};
            }
            // After a call returned a value: a builtin (TracePoint#enable, Coverage.start …) may
            // have switched tracing; then this frame (synced) goes on in the other instance.
            macro_rules! switch_if_tracing_changed {
                () => {
                    if TRACE != crate::core::tracepoint::tracing(ctx) {
                        ctx.stacks.sp = sp;
                        ctx.trace_switch = true;
                        return Ok(Value::NIL);
                    }
                };
            }
            macro_rules! call_op {
                ($op:expr) => {{
                    sync!();
                    match $op {
                        Ok(Some(v)) => {
                            sp = ctx.stacks.sp;
                            push!(v);
                            switch_if_tracing_changed!();
                        }
                        Ok(None) => continue 'reload,
                        Err(e) => throw_call!(e),
                    }
                }};
            }
            // A call from an operator instruction whose fast path did not apply: out of line, so
            // the many operator arms stay small.
            macro_rules! send {
                ($ci:expr) => {
                    call_op!(ops::send_any(ctx, iseq, fi, $ci as usize))
                };
            }
            // While tracing, every operator takes its send path, so that `:c_call` sees it.
            macro_rules! redefined {
                ($bit:expr) => {
                    // SAFETY: the VM outlives this loop.
                    TRACE || unsafe { (*vmp).redefined.load(std::sync::atomic::Ordering::Relaxed) } & $bit != 0
                };
            }
            macro_rules! local {
                ($i:expr) => {
                    // SAFETY: local indices are below the frame's local count.
                    unsafe { *locals.add($i as usize) }
                };
            }
            // A Float fast path's result as a Value: only a result that must be allocated
            // syncs the frame (a collection may run).
            macro_rules! float_value {
                ($r:expr) => {{
                    let r = $r;
                    match r.immediate() {
                        Some(v) => v,
                        None => {
                            sync!();
                            r.into_value(ctx)
                        }
                    }
                }};
            }
            // A fused operator's Float result is pushed; next instruction.
            macro_rules! push_float_result {
                ($r:expr) => {{
                    let v = float_value!($r);
                    push!(v);
                    continue;
                }};
            }
            // `local <op> imm` with a Fixnum fast path; otherwise the original send.
            macro_rules! fused_li {
                ($l:expr, $k:expr, $ci:expr, |$a:ident, $b:ident| $fix:expr, |$x:ident, $y:ident| $flo:expr) => {{
                    let $a = local!($l);
                    let kk = $k as i64;
                    if $a.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                        let $b = Value::fixnum(kk);
                        if let Some(r) = $fix {
                            push!(r);
                            continue;
                        }
                    } else if $a.is_flonum() && !redefined!(ops::REDEF_FLOAT) {
                        let $x = $a.flonum_unchecked();
                        let $y = kk as f64;
                        push_float_result!($flo);
                    }
                    push!($a);
                    push!(Value::fixnum(kk));
                    send!($ci)
                }};
            }
            // `local <op> local` with Fixnum and Float fast paths; otherwise the original send.
            macro_rules! fused_ll {
                ($la:expr, $lb:expr, $ci:expr, |$a:ident, $b:ident| fix $fix:block flo $flo:block) => {{
                    let $a = local!($la);
                    let $b = local!($lb);
                    let float_operands = if $a.is_fixnum() && $b.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                        if let Some(r) = $fix {
                            push!(r);
                            continue;
                        }
                        None
                    } else if $a.is_flonum() && $b.is_flonum() && !redefined!(ops::REDEF_FLOAT) {
                        Some(($a.flonum_unchecked(), $b.flonum_unchecked()))
                    } else if !redefined!(ops::REDEF_INTEGER | ops::REDEF_FLOAT) {
                        ops::mixed_float_operands($a, $b)
                    } else {
                        None
                    };
                    if let Some(($a, $b)) = float_operands {
                        push_float_result!($flo);
                    }
                    push!($a);
                    push!($b);
                    send!($ci)
                }};
            }
            // The result of a Float operation replaces the two operands; next instruction.
            macro_rules! float_result {
                ($r:expr) => {{
                    let v = float_value!($r);
                    sp -= 1;
                    set_top!(0, v);
                    continue;
                }};
            }
            macro_rules! binop_fix_flo {
                // `$mixed`: a Float with a Fixnum (either side) also computes as Floats.
                ($ci:expr, $mixed:expr, |$a:ident, $b:ident| fix $fix:block flo $flo:block) => {{
                    let $b = top!(0);
                    let $a = top!(1);
                    if $a.is_fixnum() && $b.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                        if let Some(r) = $fix {
                            sp -= 1;
                            set_top!(0, r);
                            continue;
                        }
                    } else if $a.is_flonum() && $b.is_flonum() && !redefined!(ops::REDEF_FLOAT) {
                        let $a = $a.flonum_unchecked();
                        let $b = $b.flonum_unchecked();
                        float_result!($flo);
                    } else if $mixed && !redefined!(ops::REDEF_INTEGER | ops::REDEF_FLOAT) {
                        if let Some(($a, $b)) = ops::mixed_float_operands($a, $b) {
                            float_result!($flo);
                        }
                    }
                    send!($ci)
                }};
            }

            if TRACE && pc0 == 0 {
                sync!();
                tri!(crate::core::tracepoint::frame_entered(ctx, fi));
            }
            loop {
                if TRACE {
                    if let Some(line) = iseq.line_start(pc!()) {
                        sync!();
                        tri!(crate::core::tracepoint::line(ctx, fi, line));
                    }
                }
                // SAFETY: compiled code always ends in Leave/jumps; ip stays in bounds.
                // `unsafe { *cur }` is a value: the instruction is copied out, so every operand
                // field is loaded before the jump. Matching the place instead (`match *insn` with
                // `insn = &*cur`, or with `ip` at the running instruction) loads each arm's own
                // operands and ran 5-8% fewer instructions, but LLVM then kept `ip` in a stack
                // slot (a load and a store per dispatch on the critical path): richards, queens
                // and json_parser ran 13-22% slower (session 19, docs/benchmarks.md). Tried
                // again with tail duplication (session 28): the same spill, and the dispatch
                // jump was no longer copied into the instructions. So each distinct operand
                // field (offset and type) is one load on every dispatch: `Insn`'s operands are
                // unsigned words at offsets 4, 8 and 12 only (`iseq::CmpLocal`, the fused
                // immediates; session 29).
                let cur = ip;
                // SAFETY: as above.
                ip = unsafe { ip.add(1) };
                // SAFETY: `cur` points at an instruction of `code`, which is not changed while it runs.
                match unsafe { *cur } {
                    Insn::Nop => {}
                    Insn::PutNil => push!(Value::NIL),
                    Insn::PutTrue => push!(Value::TRUE),
                    Insn::PutFalse => push!(Value::FALSE),
                    Insn::PutSelf => push!(self_!()),
                    Insn::PutInt(i) => push!(Value::fixnum(i as i64)),
                    Insn::PutLit(i) => push!(iseq.literals[i as usize]),
                    Insn::PutString(i) => {
                        sync!();
                        let s = string::new_from_literal(ctx, iseq.literals[i as usize]);
                        push!(s)
                    }
                    Insn::Pop => sp -= 1,
                    Insn::Dup => {
                        let v = top!(0);
                        push!(v)
                    }
                    Insn::DupN(n) => {
                        let n = n as usize;
                        for i in 0..n {
                            let v = top!(n - 1);
                            let _ = i;
                            push!(v);
                        }
                    }
                    Insn::Swap => {
                        let a = top!(0);
                        let b = top!(1);
                        set_top!(0, b);
                        set_top!(1, a);
                    }
                    Insn::TopN(n) => {
                        let v = top!(n as usize);
                        push!(v)
                    }
                    Insn::SetN(n) => {
                        let v = top!(0);
                        set_top!(n as usize, v);
                    }
                    Insn::AdjustStack(n) => sp -= n as usize,

                    Insn::GetLocal(i) => {
                        // SAFETY: i < local_count; locals points at the frame's locals.
                        let v = unsafe { *locals.add(i as usize) };
                        push!(v)
                    }
                    Insn::SetLocal(i) => {
                        let v = pop!();
                        // SAFETY: as for GetLocal.
                        unsafe { *locals.add(i as usize) = v };
                    }
                    Insn::GetLocalUp(i, depth) => {
                        let outer = unsafe { ctx.stacks.frames.get_unchecked(fi).outer };
                        let e = env::env_at_depth(outer, depth);
                        let v = env::env(e).vals[i as usize];
                        push!(v)
                    }
                    Insn::SetLocalUp(i, depth) => {
                        let v = pop!();
                        let outer = unsafe { ctx.stacks.frames.get_unchecked(fi).outer };
                        let e = env::env_at_depth(outer, depth);
                        env::env(e).vals[i as usize] = v;
                    }
                    Insn::GetIvar(id, c) => {
                        let self_ = self_!();
                        // SAFETY: ivar cache indices in code are within the iseq's caches (the compiler and the
                        // bytecode verifier ensure it).
                        let cache = unsafe { iseq.ivar_caches.get_unchecked(c as usize) };
                        if let Some(v) = ops::ivar_cached(ctx, self_, cache) {
                            push!(v)
                        } else {
                            sync!();
                            let v = ops::get_ivar_cached(ctx, self_, id, cache);
                            push!(v)
                        }
                    }
                    Insn::SetIvar(id, c) => {
                        let self_ = self_!();
                        let v = top!(0);
                        // SAFETY: ivar cache indices in code are within the iseq's caches (the compiler and the
                        // bytecode verifier ensure it).
                        let cache = unsafe { iseq.ivar_caches.get_unchecked(c as usize) };
                        match self_ {
                            _ if ops::ivar_cache_writable(ctx, self_, cache) => {
                                // SAFETY: type checked; index came from this class's layout.
                                unsafe { (*self_.as_ptr::<RObject>()).set_ivar(cache.1.get() as usize, v) };
                            }
                            _ => {
                                sync!();
                                tri!(ops::set_ivar_cached(ctx, self_, id, v, cache));
                            }
                        }
                        sp -= 1;
                    }
                    Insn::GetCvar(id) => {
                        sync!();
                        let v = tri!(ops::get_cvar(ctx, fi, id));
                        push!(v)
                    }
                    Insn::SetCvar(id) => {
                        let v = top!(0);
                        sync!();
                        tri!(ops::set_cvar(ctx, fi, id, v));
                        sp -= 1;
                    }
                    Insn::GetGlobal(id) => {
                        sync!();
                        let v = tri!(crate::core::globals::get(ctx, id));
                        push!(v)
                    }
                    Insn::SetGlobal(id) => {
                        let v = top!(0);
                        sync!();
                        tri!(crate::core::globals::set(ctx, id, v));
                        sp -= 1;
                    }
                    Insn::GetConst(id, c) => {
                        // SAFETY: constant cache indices in code are within the iseq's caches (the
                        // compiler and the bytecode verifier ensure it).
                        let cache = unsafe { iseq.const_caches.get_unchecked(c as usize) };
                        // SAFETY: fi is the top frame.
                        let cref = unsafe { ctx.stacks.frames.get_unchecked(fi).cref };
                        if let Some(v) = ops::const_cache_hit(ctx, cache, cref) {
                            push!(v)
                        } else {
                            sync!();
                            let v = tri!(ops::get_const_lexical(ctx, cref, id));
                            cache.0.set(ctx.vm().const_epoch());
                            cache.1.set(v);
                            cache.2.set(cref);
                            push!(v)
                        }
                    }
                    Insn::GetConstUnder(id) => {
                        let scope = pop!();
                        sync!();
                        let v = tri!(ops::get_const_under(ctx, scope, id));
                        push!(v)
                    }
                    Insn::GetConstTop(id) => {
                        sync!();
                        let obj = ctx.c().object;
                        let v = tri!(ops::get_const_under(ctx, obj, id));
                        push!(v)
                    }
                    Insn::SetConst(id) => {
                        let v = pop!();
                        let scope = pop!();
                        sync!();
                        let cref = unsafe { ctx.stacks.frames.get_unchecked(fi).cref };
                        tri!(ops::set_const(ctx, cref, scope, id, v));
                    }
                    Insn::GetSpecial(kind) => {
                        sync!();
                        let v = tri!(ops::get_special(ctx, fi, kind));
                        push!(v)
                    }
                    Insn::GetLastLine => {
                        let v = ops::last_line(ctx, fi);
                        push!(v)
                    }
                    Insn::SetLastLine => {
                        let v = pop!();
                        ops::set_last_line(ctx, fi, v);
                    }

                    Insn::Jump(t) => jump!(t),
                    Insn::BranchIf(t) => {
                        if pop!().truthy() {
                            jump!(t);
                        }
                    }
                    Insn::BranchUnless(t) => {
                        if !pop!().truthy() {
                            jump!(t);
                        }
                    }
                    Insn::BranchNil(t) => {
                        if pop!().is_nil() {
                            jump!(t);
                        }
                    }
                    Insn::JumpPoll(t) => {
                        jump!(t);
                        poll!();
                    }
                    Insn::BranchIfPoll(t) => {
                        if pop!().truthy() {
                            jump!(t);
                            poll!();
                        }
                    }
                    Insn::BranchUnlessPoll(t) => {
                        if !pop!().truthy() {
                            jump!(t);
                            poll!();
                        }
                    }
                    Insn::BranchIfSet(local, t) => {
                        if !local!(local).is_undef() {
                            jump!(t);
                        }
                    }
                    Insn::Checkpoint => poll!(),
                    Insn::JumpIfLI(ol, k, t) => {
                        let a = local!(ol.local());
                        if a.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            if ol.eval(a.fixnum_unchecked(), k as i64) {
                                jump!(t);
                                poll!();
                            } else {
                                // SAFETY: the fused compare and its branch follow this instruction.
                                ip = unsafe { ip.add(2) };
                            }
                        }
                    }
                    Insn::AddIvarI(_, k, c) => {
                        let self_ = self_!();
                        // SAFETY: ivar cache indices in code are within the iseq's caches (the
                        // compiler and the bytecode verifier ensure it).
                        let cache = unsafe { iseq.ivar_caches.get_unchecked(c as usize) };
                        if ops::ivar_cache_writable(ctx, self_, cache) && !redefined!(ops::REDEF_INTEGER) {
                            let slot = cache.1.get() as usize;
                            // SAFETY: type checked; index came from this class's layout.
                            let v = unsafe { (*self_.as_ptr::<RObject>()).ivar(slot) };
                            if v.is_fixnum() {
                                if let Some(r) = fix_add(v, Value::fixnum(k as i64)) {
                                    // SAFETY: as above.
                                    unsafe { (*self_.as_ptr::<RObject>()).set_ivar(slot, r) };
                                    // SAFETY: the four instructions of the update follow this one.
                                    ip = unsafe { ip.add(4) };
                                }
                            }
                        }
                    }
                    Insn::AddLocalLI(l, k) => {
                        let a = local!(l);
                        if a.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            if let Some(r) = fix_add(a, Value::fixnum(k as i64)) {
                                // SAFETY: local index below the frame's local count.
                                unsafe { *locals.add(l as usize) = r };
                                // SAFETY: the fused add and its store follow this instruction.
                                ip = unsafe { ip.add(2) };
                            }
                        }
                    }
                    Insn::OptPlusLI(l, k, ci) => fused_li!(l, k, ci, |a, b| fix_add(a, b), |x, y| float::Num(x + y)),
                    Insn::OptMinusLI(l, k, ci) => fused_li!(l, k, ci, |a, b| fix_sub(a, b), |x, y| float::Num(x - y)),
                    Insn::OptLtLI(l, k, ci) => fused_li!(l, k, ci, |a, b| Some(Value::bool(a.fixnum_unchecked() < b.fixnum_unchecked())), |x, y| float::Bool(x < y)),
                    Insn::OptLeLI(l, k, ci) => fused_li!(l, k, ci, |a, b| Some(Value::bool(a.fixnum_unchecked() <= b.fixnum_unchecked())), |x, y| float::Bool(x <= y)),
                    Insn::OptGtLI(l, k, ci) => fused_li!(l, k, ci, |a, b| Some(Value::bool(a.fixnum_unchecked() > b.fixnum_unchecked())), |x, y| float::Bool(x > y)),
                    Insn::OptGeLI(l, k, ci) => fused_li!(l, k, ci, |a, b| Some(Value::bool(a.fixnum_unchecked() >= b.fixnum_unchecked())), |x, y| float::Bool(x >= y)),
                    Insn::OptEqLI(l, k, ci) => fused_li!(l, k, ci, |a, b| Some(Value::bool(a == b)), |x, y| float::Bool(x == y)),
                    Insn::OptPlusLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { fix_add(a, b) } flo { float::Num(a + b) }),
                    Insn::OptMinusLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { fix_sub(a, b) } flo { float::Num(a - b) }),
                    Insn::OptMultLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { a.fixnum_unchecked().checked_mul(b.fixnum_unchecked()).and_then(Value::try_fixnum) } flo { float::Num(a * b) }),
                    Insn::OptLtLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() < b.fixnum_unchecked())) } flo { float::Bool(a < b) }),
                    Insn::OptLeLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() <= b.fixnum_unchecked())) } flo { float::Bool(a <= b) }),
                    Insn::OptGtLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() > b.fixnum_unchecked())) } flo { float::Bool(a > b) }),
                    Insn::OptGeLL(x, y, ci) => fused_ll!(x, y, ci, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() >= b.fixnum_unchecked())) } flo { float::Bool(a >= b) }),
                    Insn::OptEqLL(x, y, ci) => {
                        let (a, b) = (local!(x), local!(y));
                        if let Some(r) = ops::fast_eq(ctx, a, b) {
                            push!(Value::bool(r));
                        } else {
                            push!(a);
                            push!(b);
                            send!(ci)
                        }
                    }
                    Insn::JumpIfLL(ol, y, t) => {
                        let (a, b) = (local!(ol.local()), local!(y));
                        if a.is_fixnum() && b.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            if ol.eval(a.fixnum_unchecked(), b.fixnum_unchecked()) {
                                jump!(t);
                                poll!();
                            } else {
                                // SAFETY: the fused compare and its branch follow this instruction.
                                ip = unsafe { ip.add(2) };
                            }
                        }
                    }

                    Insn::Send(ci) => {
                        // SAFETY: call indices in code are within the iseq's `calls`.
                        let c = unsafe { iseq.calls.get_unchecked(ci as usize) };
                        if !TRACE && c.cache.fast_klass.get() != 0 {
                            // A Ruby method the call site's cache marked as enterable directly
                            // (`ops::fast_target`): push its frame and go on in it through
                            // 'enter. (Switching the loop's state to the callee right here,
                            // without leaving the dispatch loop, ran fewer instructions but
                            // made the loop keep `ip` in a stack slot: nbody, so_lists,
                            // red_black 20-30% slower.)
                            let argc = c.argc as usize;
                            let ret_sp = sp - argc - 1;
                            // SAFETY: the receiver and arguments are on the operand stack.
                            let recv = unsafe { *base.add(ret_sp) };
                            let cc = &c.cache;
                            // SAFETY: the VM outlives this loop.
                            if crate::interp::class_of(ctx, recv).raw() == cc.fast_klass.get() && cc.epoch.get() == unsafe { (*vmp).method_epoch() } {
                                // SAFETY: the cache's entries (`CallCache::entry`) hold it while the epoch is current.
                                let me = unsafe { &*cc.fast_me.get() };
                                match me.body {
                                    MethodBody::Iseq { iseq: callee_val, cref } => {
                                        // Only the pc: the callee's frame sets the stack top,
                                        // and a failed push syncs below.
                                        let here = pc!();
                                        // SAFETY: fi is the index of the running frame.
                                        unsafe { ctx.stacks.frames.get_unchecked_mut(fi).pc = here };
                                        let pc = cc.fast_pc.get() as usize;
                                        if let Some((callee, callee_locals)) = call::push_fast_method_frame(ctx, recv, me, callee_val, cref, argc, pc, ret_sp) {
                                            if c.block != u32::MAX {
                                                ops::give_literal_block(ctx, iseq, fi, c.block);
                                            }
                                            entered = (fi + 1, callee, pc, callee_locals);
                                            continue 'enter;
                                        }
                                    }
                                    // Attribute methods as the `GetIvar`/`SetIvar` arms do it, with
                                    // the call site's ivar cache.
                                    MethodBody::AttrReader(_) => {
                                        if let Some(v) = ops::ivar_cached(ctx, recv, &cc.ivar) {
                                            sp = ret_sp;
                                            push!(v);
                                            continue;
                                        }
                                    }
                                    MethodBody::AttrWriter(_) if ops::ivar_cache_writable(ctx, recv, &cc.ivar) => {
                                        let v = top!(0);
                                        // SAFETY: type checked; index came from this class's layout.
                                        unsafe { (*recv.as_ptr::<RObject>()).set_ivar(cc.ivar.1.get() as usize, v) };
                                        sp = ret_sp;
                                        push!(v);
                                        continue;
                                    }
                                    _ => {}
                                }
                            }
                        }
                        // The method call, with the cached simple-method path inlined.
                        sync!();
                        let r = match ops::send_cached(ctx, iseq, fi, c) {
                            Some(r) => r,
                            None => ops::send(ctx, iseq, fi, ci as usize),
                        };
                        match r {
                            Ok(Some(v)) => {
                                sp = ctx.stacks.sp;
                                push!(v);
                                switch_if_tracing_changed!();
                            }
                            Ok(None) => continue 'reload,
                            Err(e) => throw_call!(e),
                        }
                    }
                    Insn::OptPlus(ci) => binop_fix_flo!(ci, true, |a, b| fix { fix_add(a, b) } flo { float::Num(a + b) }),
                    Insn::OptMinus(ci) => binop_fix_flo!(ci, true, |a, b| fix { fix_sub(a, b) } flo { float::Num(a - b) }),
                    Insn::OptMult(ci) => binop_fix_flo!(ci, true, |a, b| fix { a.fixnum_unchecked().checked_mul(b.fixnum_unchecked()).and_then(Value::try_fixnum) } flo { float::Num(a * b) }),
                    Insn::OptDiv(ci) => binop_fix_flo!(ci, true, |a, b| fix { integer::fix_div(a.fixnum_unchecked(), b.fixnum_unchecked()) } flo { float::Num(a / b) }),
                    Insn::OptMod(ci) => {
                        // A zero Float divisor raises ZeroDivisionError in Float#%: slow path.
                        // (The send pushes its result: the fast path must not run after it.)
                        if top!(0).is_flonum() && top!(0).flonum_unchecked() == 0.0 {
                            send!(ci)
                        } else {
                            binop_fix_flo!(ci, false, |a, b| fix { integer::fix_mod(a.fixnum_unchecked(), b.fixnum_unchecked()) } flo { float::Num(float::ruby_mod(a, b)) })
                        }
                    }
                    Insn::OptLt(ci) => binop_fix_flo!(ci, true, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() < b.fixnum_unchecked())) } flo { float::Bool(a < b) }),
                    Insn::OptLe(ci) => binop_fix_flo!(ci, true, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() <= b.fixnum_unchecked())) } flo { float::Bool(a <= b) }),
                    Insn::OptGt(ci) => binop_fix_flo!(ci, true, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() > b.fixnum_unchecked())) } flo { float::Bool(a > b) }),
                    Insn::OptGe(ci) => binop_fix_flo!(ci, true, |a, b| fix { Some(Value::bool(a.fixnum_unchecked() >= b.fixnum_unchecked())) } flo { float::Bool(a >= b) }),
                    Insn::OptEq(ci) => {
                        let b = top!(0);
                        let a = top!(1);
                        if let Some(r) = ops::fast_eq(ctx, a, b) {
                            sp -= 1;
                            set_top!(0, Value::bool(r));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptNeq(ci) => {
                        let b = top!(0);
                        let a = top!(1);
                        if let Some(r) = ops::fast_eq(ctx, a, b) {
                            sp -= 1;
                            set_top!(0, Value::bool(!r));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptLtLt(ci) => {
                        let a = top!(1);
                        let b = top!(0);
                        if array::is_plain_array(a) && !redefined!(ops::REDEF_ARRAY) && !crate::object::basic(a).has(crate::object::FL_FROZEN) {
                            // Only a push that grows the buffer may collect: it syncs.
                            if !array::push_in_place(a, b) {
                                sync!();
                                array::push_grown(ctx, a, b);
                            }
                            sp -= 1;
                        } else if string::is_plain_string(a) && string::is_string(b) && !redefined!(ops::REDEF_STRING) && crate::object::basic(a).flags & (crate::object::FL_FROZEN | crate::object::FL_CHILLED) == 0 && string::try_append_str(a, b) {
                            sp -= 1;
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptAnd(ci) => {
                        let b = top!(0);
                        let a = top!(1);
                        if a.is_fixnum() && b.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            sp -= 1;
                            set_top!(0, Value::from_raw(a.raw() & b.raw()));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptOr(ci) => {
                        let b = top!(0);
                        let a = top!(1);
                        if a.is_fixnum() && b.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            sp -= 1;
                            set_top!(0, Value::from_raw(a.raw() | b.raw()));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptAref(ci) => {
                        let i = top!(0);
                        let a = top!(1);
                        if i.is_fixnum() && array::is_plain_array(a) && !redefined!(ops::REDEF_ARRAY) {
                            let v = array::aref_fix(a, i.fixnum_unchecked());
                            sp -= 1;
                            set_top!(0, v);
                        } else if crate::core::hash::is_plain_hash(a) && !redefined!(ops::REDEF_HASH) {
                            sync!();
                            let v = tri!(crate::core::hash::aref(ctx, a, i));
                            sp -= 1;
                            set_top!(0, v);
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptAset(ci) => {
                        let v = top!(0);
                        let i = top!(1);
                        let a = top!(2);
                        if i.is_fixnum() && array::is_plain_array(a) && !redefined!(ops::REDEF_ARRAY) && !basic(a).has(crate::object::FL_FROZEN) {
                            // An index within the array needs no sync: nothing allocates or raises.
                            if !array::aset_in_place(a, i.fixnum_unchecked(), v) {
                                sync!();
                                tri!(array::aset_fix(ctx, a, i.fixnum_unchecked(), v));
                            }
                            sp -= 2;
                            set_top!(0, v);
                        } else if crate::core::hash::is_plain_hash(a) && !redefined!(ops::REDEF_HASH) && !basic(a).has(crate::object::FL_FROZEN) {
                            sync!();
                            tri!(crate::core::hash::aset_from_code(ctx, a, i, v));
                            sp -= 2;
                            set_top!(0, v);
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptNot(ci) => {
                        let a = top!(0);
                        if !redefined!(ops::REDEF_NOT) {
                            set_top!(0, Value::bool(!a.truthy()));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptLength(ci) | Insn::OptSize(ci) => {
                        let a = top!(0);
                        if array::is_plain_array(a) && !redefined!(ops::REDEF_ARRAY) {
                            set_top!(0, Value::fixnum(array::len(a) as i64));
                        } else if string::is_plain_string(a) && !redefined!(ops::REDEF_STRING) {
                            set_top!(0, Value::fixnum(string::char_length(a) as i64));
                        } else if hash::is_plain_hash(a) && !redefined!(ops::REDEF_HASH) {
                            set_top!(0, Value::fixnum(hash::len(a) as i64));
                        } else if let Some(v) = ops::cached_attr_read::<TRACE>(ctx, iseq, ci, a) {
                            // `disk.size` with `attr_reader :size`.
                            set_top!(0, v);
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptEmptyP(ci) => {
                        let a = top!(0);
                        if array::is_plain_array(a) && !redefined!(ops::REDEF_ARRAY) {
                            set_top!(0, Value::bool(array::len(a) == 0));
                        } else if string::is_plain_string(a) && !redefined!(ops::REDEF_STRING) {
                            set_top!(0, Value::bool(string::len(a) == 0));
                        } else if hash::is_plain_hash(a) && !redefined!(ops::REDEF_HASH) {
                            set_top!(0, Value::bool(hash::len(a) == 0));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptCmp(ci) => {
                        let b = top!(0);
                        let a = top!(1);
                        if a.is_fixnum() && b.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            sp -= 1;
                            set_top!(0, Value::fixnum(a.fixnum_unchecked().cmp(&b.fixnum_unchecked()) as i64));
                        } else if a.is_flonum() && b.is_flonum() && !redefined!(ops::REDEF_FLOAT) {
                            let r = a.flonum_unchecked().partial_cmp(&b.flonum_unchecked());
                            sp -= 1;
                            set_top!(0, r.map_or(Value::NIL, |o| Value::fixnum(o as i64)));
                        } else {
                            send!(ci)
                        }
                    }
                    Insn::OptSucc(ci) => {
                        let a = top!(0);
                        if a.is_fixnum() && !redefined!(ops::REDEF_INTEGER) {
                            if let Some(r) = fix_add(a, Value::fixnum(1)) {
                                set_top!(0, r);
                                continue;
                            }
                        }
                        send!(ci)
                    }
                    Insn::Yield(ci) => {
                        sync!();
                        if ops::yield_simple(ctx, fi, &iseq.calls[ci as usize]) {
                            continue 'reload;
                        }
                        call_op!(ops::invoke_yield(ctx, iseq, fi, ci as usize))
                    }
                    Insn::InvokeSuper(ci) => call_op!(ops::invoke_super(ctx, iseq, fi, ci as usize)),

                    Insn::Leave => {
                        if TRACE {
                            sync!();
                            tri!(crate::core::tracepoint::frame_leaving(ctx, fi, top!(0)));
                        }
                        // One borrow of the stacks for the whole return: through `ctx`, the
                        // stores below made the compiler read `ctx.stacks` again after each.
                        let st = &mut *ctx.stacks;
                        // SAFETY: fi is the top frame.
                        let (flags, ret_sp) = unsafe {
                            let f = st.frames.get_unchecked(fi);
                            (f.flags, f.ret_sp)
                        };
                        if flags & (FRAME_ITER_BLOCK | FRAME_CTOR | FRAME_FINISH) == 0 {
                            // The common return (`leave_frame` without its cases): the result
                            // replaces the receiver, the frame below runs on.
                            // SAFETY: `ret_sp` is below this frame's operand stack; a frame
                            // holds nothing to drop, so shortening the Vec pops it.
                            let v = top!(0);
                            unsafe {
                                *base.add(ret_sp) = v;
                                st.frames.set_len(fi);
                            }
                            st.sp = ret_sp + 1;
                            // Back into the caller: a Ruby frame, or an iterator frame ('reload
                            // steps it). A frame without FRAME_FINISH always has one below it.
                            // SAFETY: frame fi - 1 is live.
                            let caller = unsafe { st.frames.get_unchecked(fi - 1) };
                            if !caller.iseq.is_null() {
                                entered = (fi - 1, caller.iseq, caller.pc, caller.locals);
                                continue 'enter;
                            }
                            continue 'reload;
                        }
                        if flags & FRAME_ITER_BLOCK != 0 {
                            match iter::restart(ctx, fi, iseq.local_count(), iseq.params.lead as usize, top!(0)) {
                                iter::Restart::InPlace => {
                                    ip = code;
                                    sp = ctx.stacks.sp;
                                    continue;
                                }
                                iter::Restart::Reload => continue 'reload,
                                iter::Restart::No => {}
                            }
                        }
                        let v = pop!();
                        ctx.stacks.sp = sp;
                        if let Some(v) = leave_frame(ctx, v) {
                            return Ok(v);
                        }
                        continue 'reload;
                    }
                    Insn::ThrowBreak => {
                        let v = pop!();
                        sync!();
                        let e = tri!(ops::break_unwind(ctx, fi, v));
                        match e {
                            None => {
                                // `break` in a lambda: leave it.
                                if let Some(v) = leave_frame(ctx, v) {
                                    return Ok(v);
                                }
                                continue 'reload;
                            }
                            Some(e) => throw!(e),
                        }
                    }
                    Insn::ThrowNext => {
                        let v = pop!();
                        sync!();
                        let e = ops::next_from_class_body(ctx, fi, v);
                        throw!(e)
                    }
                    Insn::ThrowReturn => {
                        let v = pop!();
                        sync!();
                        let e = tri!(ops::return_unwind(ctx, fi, v));
                        throw!(e)
                    }
                    Insn::Reraise(local) => {
                        // SAFETY: local of this frame.
                        let v = unsafe { *locals.add(local as usize) };
                        sync!();
                        let e = ops::value_to_unwind(v);
                        throw!(e)
                    }

                    Insn::NewArray(n) => {
                        let n = n as usize;
                        sync!();
                        // SAFETY: the n values are on the stack below sp.
                        let items = unsafe { std::slice::from_raw_parts(base.add(sp - n), n) };
                        let a = array::from_slice(ctx, items);
                        sp -= n;
                        push!(a)
                    }
                    Insn::SplatArray(dup) => {
                        let v = top!(0);
                        sync!();
                        let a = tri!(array::splat(ctx, v, dup != 0));
                        set_top!(0, a);
                    }
                    Insn::ConcatArray => {
                        let b = top!(0);
                        let a = top!(1);
                        sync!();
                        let r = tri!(array::concat_for_splat(ctx, a, b));
                        sp -= 1;
                        set_top!(0, r);
                    }
                    Insn::ArrayAppend => {
                        let v = pop!();
                        let a = top!(0);
                        sync!();
                        array::push(ctx, a, v);
                    }
                    Insn::ExpandArray(n, flags) => {
                        let v = pop!();
                        sync!();
                        tri!(ops::expand_array(ctx, v, n, flags));
                        sp = ctx.stacks.sp;
                    }
                    Insn::NewHash(n) => {
                        let n = n as usize;
                        sync!();
                        // SAFETY: the n values are on the stack below sp.
                        let items = unsafe { std::slice::from_raw_parts(base.add(sp - n), n) };
                        let h = tri!(crate::core::hash::from_pairs_slice(ctx, items));
                        sp -= n;
                        push!(h)
                    }
                    Insn::HashMergeKw => {
                        let src = top!(0);
                        let dst = top!(1);
                        sync!();
                        tri!(crate::core::hash::merge_kwsplat(ctx, dst, src));
                        sp -= 1;
                    }
                    Insn::NewRange(excl) => {
                        let e = top!(0);
                        let b = top!(1);
                        sync!();
                        let r = tri!(crate::core::range::new_checked(ctx, b, e, excl != 0));
                        sp -= 1;
                        set_top!(0, r);
                    }
                    Insn::ToS(ci) => {
                        let v = top!(0);
                        if !string::is_string(v) {
                            sync!();
                            let s = tri!(ops::to_s_for_interpolation(ctx, v, iseq, ci));
                            set_top!(0, s);
                        }
                    }
                    Insn::ConcatStrings(n) => {
                        let n = n as usize;
                        sync!();
                        // SAFETY: the n strings are on the stack below sp.
                        let parts = unsafe { std::slice::from_raw_parts(base.add(sp - n), n) };
                        let s = tri!(string::concat_parts(ctx, parts));
                        sp -= n;
                        push!(s)
                    }
                    Insn::Intern => {
                        let s = top!(0);
                        sync!();
                        let sym = string::intern(ctx, s);
                        set_top!(0, sym);
                    }
                    Insn::ToRegexp(n, opts) => {
                        let n = n as usize;
                        sync!();
                        // SAFETY: the n strings are on the stack below sp.
                        let parts = unsafe { std::slice::from_raw_parts(base.add(sp - n), n) };
                        let r = tri!(crate::core::regexp::from_parts(ctx, parts, opts));
                        sp -= n;
                        push!(r)
                    }
                    Insn::Once(target, slot) => {
                        let v = iseq.once_caches[slot as usize].get();
                        if !v.is_undef() && !v.is_nil() {
                            push!(v);
                            jump!(target);
                        }
                    }
                    Insn::SetOnce(slot) => {
                        iseq.once_caches[slot as usize].set(top!(0));
                    }

                    Insn::DefineMethod(name, child) => {
                        sync!();
                        let v = tri!(ops::define_method(ctx, fi, name, iseq.children[child as usize]));
                        push!(v)
                    }
                    Insn::DefineSMethod(name, child) => {
                        let obj = pop!();
                        sync!();
                        let v = tri!(ops::define_singleton_method(ctx, fi, obj, name, iseq.children[child as usize]));
                        push!(v)
                    }
                    Insn::DefineClass(name, child, flags) => {
                        sync!();
                        tri!(ops::define_class(ctx, fi, name, iseq.children[child as usize], flags));
                        continue 'reload;
                    }
                    Insn::Defined(kind, operand) => {
                        sync!();
                        let v = tri!(ops::defined(ctx, iseq, fi, kind, operand));
                        sp = ctx.stacks.sp;
                        push!(v)
                    }
                    Insn::CheckMatch(kind) => {
                        let pattern = top!(0);
                        let target = top!(1);
                        // `when 3` / `when CONST` against a Fixnum or Symbol: `===` is `==`.
                        if kind == ops::MATCH_WHEN && ((pattern.is_fixnum() && target.is_fixnum() && !redefined!(ops::REDEF_INTEGER)) || (pattern.is_symbol() && target.is_symbol() && !redefined!(ops::REDEF_SYMBOL))) {
                            sp -= 1;
                            set_top!(0, Value::bool(pattern == target));
                            continue;
                        }
                        sync!();
                        let r = tri!(ops::check_match(ctx, pattern, target, kind));
                        sp -= 1;
                        set_top!(0, Value::bool(r));
                    }
                    Insn::BlockArg => {
                        sync!();
                        let blk = ctx.stacks.frames[fi].block(&ctx.stacks.frames);
                        let v = match blk {
                            Some(b) => tri!(crate::core::proc::from_block(ctx, &b)),
                            None => Value::NIL,
                        };
                        push!(v)
                    }
                    Insn::GetBlockParamProxy(_) => {
                        let given = unsafe { ctx.stacks.frames.get_unchecked(fi).block.is_some() };
                        push!(if given { Value::BLOCK_PARAM_PROXY } else { Value::NIL })
                    }
                    Insn::BlockGiven => {
                        let given = ctx.stacks.frames[fi].block(&ctx.stacks.frames).is_some();
                        push!(Value::bool(given))
                    }
                    Insn::GetErrinfo => push!(ctx.stacks.errinfo),
                    Insn::SetErrinfo => ctx.stacks.errinfo = pop!(),
                    Insn::Lambda(child) => {
                        sync!();
                        let f = unsafe { ctx.stacks.frames.get_unchecked(fi) };
                        let cap = Captured {
                            iseq: iseq.children[child as usize],
                            self_: f.self_,
                            env: f.env,
                            cref: f.cref,
                            home_serial: f.serial,
                            home_index: fi as u32,
                            _pad: 0,
                        };
                        let p = crate::core::proc::new_from_captured(ctx, &cap, true);
                        push!(p)
                    }
                    Insn::PatternError(key) => {
                        let v = pop!();
                        sync!();
                        throw!(ops::pattern_error(ctx, v, key))
                    }
                    Insn::Alias(kind) => {
                        let old = pop!();
                        let new = pop!();
                        sync!();
                        tri!(ops::alias(ctx, fi, new, old, kind));
                        push!(Value::NIL)
                    }
                    Insn::Undef => {
                        let name = pop!();
                        sync!();
                        tri!(ops::undef(ctx, fi, name));
                    }
                    Insn::Deconstruct(target) => {
                        let v = top!(0);
                        sync!();
                        match tri!(ops::deconstruct(ctx, v)) {
                            Some(a) => set_top!(0, a),
                            None => {
                                set_top!(0, Value::FALSE);
                                jump!(target);
                            }
                        }
                    }
                    Insn::DeconstructKeys(target) => {
                        let keys = pop!();
                        let v = top!(0);
                        sync!();
                        match tri!(ops::deconstruct_keys(ctx, v, keys)) {
                            Some(h) => set_top!(0, h),
                            None => {
                                set_top!(0, Value::FALSE);
                                jump!(target);
                            }
                        }
                    }
                    Insn::FlipFlop(local, excl) => {
                        let cond_hit = pop!();
                        let _ = (local, excl, cond_hit);
                        sync!();
                        throw!(ctx.not_implemented("flip-flop"))
                    }
                    Insn::Unreachable => {
                        sync!();
                        throw!(ctx.runtime_error("[BUG] unreachable instruction"))
                    }
                }
            }
        }
    }
}

/// Captures the literal block of call `ci` made from frame `fi`.
#[inline]
pub fn capture_block(ctx: &Ctx, iseq: &Iseq, fi: usize, child: u32) -> Block {
    // SAFETY: fi is a live frame index.
    let f = unsafe { ctx.stacks.frames.get_unchecked(fi) };
    Block::Captured(Captured {
        iseq: iseq.children[child as usize],
        self_: f.self_,
        env: f.env,
        cref: f.cref,
        home_serial: f.serial,
        home_index: fi as u32,
        _pad: 0,
    })
}

