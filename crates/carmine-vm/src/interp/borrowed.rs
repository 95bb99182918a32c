//! Borrowed runs: a suspended fiber's bytecode run on its resumer's native stack.
//!
//! A fiber that suspended shallowly (its `Fiber.yield` called straight from its own dispatch
//! loop, so it keeps no native stack) is resumed from Ruby code by running its top frame
//! right here, inside the resumer's `Fiber#resume` call, on the fiber's saved execution
//! state in place (`fiber::switch_from_loop`). No native stack is taken, no state is
//! swapped and no assembly switch happens: a resume/yield ping-pong of a fiber whose loop
//! between yields is plain bytecode costs this loop's run.
//!
//! Invariants:
//! - `run` executes only instructions that cannot allocate, raise, call Rust code that may
//!   run Ruby code, or switch fibers: stack and local operations, jumps, cached constant
//!   reads, and `Fiber.yield` with at most one argument through a valid inline cache. So no
//!   collection, backtrace or other fiber can observe that the fiber ran without being
//!   made the running fiber.
//! - At any other instruction (or a pending interrupt at a back edge) it stops *before*
//!   executing it, with the frame's `pc` and the stack pointer synced: the fiber is then
//!   continued on a native stack of its own from exactly that instruction
//!   (`exec::continue_suspended`), so nothing runs twice or is skipped.
//! - On `Fiber.yield` it leaves the frame as a shallow suspension does: `pc` after the call,
//!   `sp` at the call's result slot, where the next resume value goes.

use crate::compile::iseq::Insn;
use crate::core::module::MethodBody;
use crate::interp::{env, ops};
use crate::thread::{Ctx, Stacks};
use crate::value::Value;

/// Runs the top frame of a suspended fiber's execution state `st` until it calls
/// `Fiber.yield` (returns the yielded value) or reaches an instruction it leaves to the full
/// loop (returns `None`). `ctx` (the resumer's) is only read: for constant and method
/// caches and the interrupt word.
pub fn run(ctx: &Ctx, st: &mut Stacks) -> Option<Value> {
    let fi = st.frames.len().checked_sub(1)?;
    let f = &st.frames[fi];
    if !f.is_ruby() {
        return None;
    }
    // SAFETY: a Ruby frame keeps its iseq alive (`iseq_val`).
    let iseq = unsafe { &*f.iseq };
    let (locals, cref, outer, self_, pc0) = (f.locals, f.cref, f.outer, f.self_, f.pc);
    let code = iseq.code.as_ptr();
    let end = iseq.code.len();
    if pc0 >= end {
        return None;
    }
    // SAFETY: pc0 is within the code; jump targets and fall-through stay within it (code
    // always ends in `Leave`, which stops this loop).
    let mut ip = unsafe { code.add(pc0) };
    let base = st.stack.as_mut_ptr();
    let mut sp = st.sp;
    macro_rules! push {
        ($v:expr) => {{
            let v = $v;
            // SAFETY: the frame reserved `stack_max` slots above its base for these
            // instructions, as for the dispatch loop.
            unsafe { *base.add(sp) = v };
            sp += 1;
        }};
    }
    macro_rules! pop {
        () => {{
            sp -= 1;
            // SAFETY: well-formed code pops only what it pushed.
            unsafe { *base.add(sp) }
        }};
    }
    macro_rules! jump {
        ($t:expr) => {{
            // SAFETY: jump targets are within the code.
            ip = unsafe { code.add($t as usize) };
            continue;
        }};
    }
    let yielded = loop {
        // SAFETY: see `ip` above.
        let insn = unsafe { *ip };
        match insn {
            Insn::Nop => {}
            Insn::PutNil => push!(Value::NIL),
            Insn::PutTrue => push!(Value::TRUE),
            Insn::PutFalse => push!(Value::FALSE),
            Insn::PutInt(i) => push!(Value::fixnum(i as i64)),
            Insn::PutLit(i) => push!(iseq.literals[i as usize]),
            Insn::PutSelf => push!(self_),
            Insn::Pop => sp -= 1,
            Insn::Dup => {
                // SAFETY: as for pop.
                let v = unsafe { *base.add(sp - 1) };
                push!(v)
            }
            Insn::GetLocal(i) => {
                // SAFETY: local indices are below the frame's local count.
                push!(unsafe { *locals.add(i as usize) })
            }
            Insn::SetLocal(i) => {
                let v = pop!();
                // SAFETY: as above.
                unsafe { *locals.add(i as usize) = v };
            }
            Insn::GetLocalUp(i, depth) => {
                let e = env::env_at_depth(outer, depth);
                push!(env::env(e).vals[i as usize])
            }
            Insn::SetLocalUp(i, depth) => {
                let v = pop!();
                let e = env::env_at_depth(outer, depth);
                env::env(e).vals[i as usize] = v;
            }
            Insn::Jump(t) => jump!(t),
            Insn::JumpPoll(t) => {
                if interrupted(ctx) {
                    break None;
                }
                jump!(t)
            }
            Insn::BranchIf(t) | Insn::BranchUnless(t) | Insn::BranchIfPoll(t) | Insn::BranchUnlessPoll(t) => {
                let want = matches!(insn, Insn::BranchIf(_) | Insn::BranchIfPoll(_));
                let poll = matches!(insn, Insn::BranchIfPoll(_) | Insn::BranchUnlessPoll(_));
                // SAFETY: as for pop.
                let taken = unsafe { *base.add(sp - 1) }.truthy() == want;
                if taken && poll && interrupted(ctx) {
                    break None;
                }
                sp -= 1;
                if taken {
                    jump!(t)
                }
            }
            Insn::GetConst(_, c) => {
                let Some(v) = ops::const_cache_hit(ctx, &iseq.const_caches[c as usize], cref) else { break None };
                push!(v)
            }
            Insn::Send(ci) => {
                let ci = &iseq.calls[ci as usize];
                let argc = ci.argc as usize;
                if !ci.plain() || ci.block != u32::MAX || argc > 1 {
                    break None;
                }
                let ret_sp = sp - argc - 1;
                // SAFETY: the receiver and arguments are on the stack below sp.
                let recv = unsafe { *base.add(ret_sp) };
                let Some(me) = ops::cache_hit(ctx, ci, recv) else { break None };
                let MethodBody::Builtin { f, .. } = me.body else { break None };
                // `Fiber.yield` (called on `Fiber` itself; an instance would be `resume`).
                if !crate::core::fiber::is_switch(f) || recv != ctx.c().fiber {
                    break None;
                }
                // SAFETY: as for the receiver.
                let v = if argc == 1 { unsafe { *base.add(ret_sp + 1) } } else { Value::NIL };
                sp = ret_sp;
                // SAFETY: a call is never the last instruction.
                ip = unsafe { ip.add(1) };
                break Some(v);
            }
            _ => break None,
        }
        // SAFETY: see `ip` above.
        ip = unsafe { ip.add(1) };
    };
    // SAFETY: ip points into `code`.
    st.frames[fi].pc = unsafe { ip.offset_from(code) } as usize;
    st.sp = sp;
    yielded
}

#[inline(always)]
fn interrupted(ctx: &Ctx) -> bool {
    ctx.vm().interrupt.load(std::sync::atomic::Ordering::Relaxed) != 0
}
