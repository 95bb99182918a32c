//! Checks a loaded iseq before anything can run it. The dispatch loop trusts compiled code
//! (unchecked local, stack and jump accesses: `interp::exec`), so loaded code must have
//! every property the compiler guarantees and the loop relies on:
//! - operand indexes within their tables (locals, literals, calls, children, caches);
//! - jump, catch and optional-parameter targets inside the code; no path runs off its end;
//! - on every path the operand stack never goes below the frame's base, each pc is
//!   reached with one depth, and handlers start at the depth their entry records; the
//!   largest depth becomes `stack_max` (what `enter_frame` reserves);
//! - outer-local accesses (`GetLocalUp`) stay within the chain of enclosing blocks, whose
//!   locals live on the heap; children are of the kind their use needs;
//! - the parameter layout fits the locals.

use crate::compile::builder::stack_effect;
use crate::compile::iseq::{Insn, Iseq, IseqKind};
use crate::interp::ops;

use super::read::R;

/// What a nested iseq needs to know of one enclosing iseq.
pub(super) struct Outer {
    pub kind: IseqKind,
    pub local_count: usize,
    pub locals_on_heap: bool,
}

/// Bound on counts held in operands (array sizes, argument counts …): keeps stack-effect
/// arithmetic far from overflow. `enter_frame` checks the real room on the VM stack.
const MAX_COUNT: u32 = 1 << 20;
/// Deepest operand stack a loaded iseq may use.
const MAX_DEPTH: i64 = 1 << 22;
/// Call flags the compiler sets (`iseq::call_flags`).
const CALL_FLAGS: u32 = 2047;

/// Checks `is` (whose children have the kinds `child_kinds`, and which is nested in
/// `outer`, innermost last); returns its largest operand stack depth.
pub(super) fn verify(is: &Iseq, child_kinds: &[IseqKind], outer: &[Outer], top: bool) -> R<u32> {
    match (top, is.kind) {
        (true, IseqKind::Top | IseqKind::Main) | (false, IseqKind::Method | IseqKind::Block | IseqKind::Class) => {}
        (_, k) => return Err(format!("an iseq of kind {k:?} {}", if top { "at the top" } else { "nested" })),
    }
    let n = is.code.len();
    if n == 0 || is.lines.len() != n {
        return Err(format!("iseq {} has no code", is.name));
    }
    let nlocals = is.local_names.len();
    let local = |i: u32| -> R<()> { if (i as usize) < nlocals { Ok(()) } else { Err(format!("local {i} out of range")) } };
    let target = |t: u32| -> R<usize> { if (t as usize) < n { Ok(t as usize) } else { Err(format!("jump target {t} out of range")) } };
    let count = |c: u32| -> R<()> { if c <= MAX_COUNT { Ok(()) } else { Err(format!("count {c} too large")) } };
    let child = |c: u32, want: IseqKind| -> R<()> {
        match child_kinds.get(c as usize) {
            Some(&k) if k == want => Ok(()),
            _ => Err(format!("child {c} is not a {want:?} iseq")),
        }
    };
    let call = |ci: u32| -> R<()> { if (ci as usize) < is.calls.len() { Ok(()) } else { Err(format!("call {ci} out of range")) } };
    let lit = |i: u32| -> R<()> { if (i as usize) < is.literals.len() { Ok(()) } else { Err(format!("literal {i} out of range")) } };

    for c in &is.calls {
        count(c.argc)?;
        if c.flags & !CALL_FLAGS != 0 {
            return Err(format!("unknown call flags {:#x}", c.flags));
        }
        if c.block != u32::MAX {
            child(c.block, IseqKind::Block)?;
        }
    }
    verify_params(is, n)?;

    // Operands.
    for insn in &is.code {
        use Insn::*;
        match *insn {
            PutLit(i) => lit(i)?,
            PutString(i) => {
                lit(i)?;
                if !crate::core::string::is_string(is.literals[i as usize]) {
                    return Err("PutString of a literal that is not a String".into());
                }
            }
            DupN(c) | AdjustStack(c) | NewArray(c) | ConcatStrings(c) | TopN(c) | SetN(c) => count(c)?,
            NewHash(c) => {
                count(c)?;
                if c % 2 != 0 {
                    return Err("NewHash of an odd count".into());
                }
            }
            ToRegexp(c, _) => count(c)?,
            ExpandArray(c, flags) => {
                count(c)?;
                count(flags >> 8)?;
            }
            GetLocal(i) | SetLocal(i) | Reraise(i) | FlipFlop(i, _) | AddLocalLI(i, _) => local(i)?,
            GetLocalUp(i, d) | SetLocalUp(i, d) => outer_local(is.kind, outer, i, d)?,
            GetIvar(_, c) | SetIvar(_, c) => {
                if c as usize >= is.ivar_caches.len() {
                    return Err("ivar cache out of range".into());
                }
            }
            GetConst(_, c) => {
                if c as usize >= is.const_caches.len() {
                    return Err("constant cache out of range".into());
                }
            }
            GetSpecial(k) => special(is, k)?,
            Defined(kind, operand) => {
                if kind == ops::DEF_REF {
                    special(is, operand)?;
                }
            }
            Jump(t) | BranchIf(t) | BranchUnless(t) | JumpPoll(t) | BranchIfPoll(t) | BranchUnlessPoll(t) | BranchNil(t) | Deconstruct(t) | DeconstructKeys(t) => {
                target(t)?;
            }
            BranchIfSet(l, t) => {
                local(l)?;
                target(t)?;
            }
            JumpIfLI(_, l, _, t) => {
                local(l)?;
                target(t)?;
            }
            Send(ci) | OptPlus(ci) | OptMinus(ci) | OptMult(ci) | OptDiv(ci) | OptMod(ci) | OptEq(ci) | OptNeq(ci) | OptLt(ci) | OptLe(ci) | OptGt(ci) | OptGe(ci) | OptLtLt(ci) | OptAnd(ci) | OptOr(ci) | OptAref(ci) | OptAset(ci) | OptNot(ci) | OptLength(ci) | OptSize(ci) | OptEmptyP(ci) | OptSucc(ci) | Yield(ci) | InvokeSuper(ci) | ToS(ci) => call(ci)?,
            OptPlusLI(l, _, ci) | OptMinusLI(l, _, ci) | OptLtLI(l, _, ci) | OptLeLI(l, _, ci) | OptGtLI(l, _, ci) | OptGeLI(l, _, ci) | OptEqLI(l, _, ci) => {
                local(l)?;
                call(ci)?;
            }
            Once(t, s) => {
                target(t)?;
                if s as usize >= is.once_caches.len() {
                    return Err("once slot out of range".into());
                }
            }
            SetOnce(s) => {
                if s as usize >= is.once_caches.len() {
                    return Err("once slot out of range".into());
                }
            }
            DefineMethod(_, c) | DefineSMethod(_, c) => child(c, IseqKind::Method)?,
            DefineClass(_, c, _) => child(c, IseqKind::Class)?,
            Lambda(c) => child(c, IseqKind::Block)?,
            CheckMatch(k) => {
                if k > ops::MATCH_EXCEPTION {
                    return Err(format!("bad match kind {k}"));
                }
            }
            _ => {}
        }
    }
    for e in &is.catch_table {
        local(e.local)?;
        target(e.handler)?;
        if e.start > e.end || e.end as usize > n {
            return Err("catch range out of the code".into());
        }
    }
    stack_depths(is)
}

/// `$~`-derived specials (`ops::get_special`): the kinds the compiler emits.
fn special(is: &Iseq, k: u32) -> R<()> {
    let ok = match k {
        0..=4 | 16..0x0100_0000 => true,
        0x0100_0000.. => is.literals.get((k - 0x0100_0000) as usize).is_some_and(|v| v.is_symbol()),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("bad special variable {k}"))
    }
}

/// `GetLocalUp(i, d)`: from a block, `d` environments out through enclosing blocks to a
/// scope whose locals are on the heap and include `i`.
fn outer_local(kind: IseqKind, outer: &[Outer], i: u32, d: u32) -> R<()> {
    let bad = || Err(format!("outer local {i} at depth {d} out of range"));
    if d == 0 || kind != IseqKind::Block || d as usize > outer.len() {
        return bad();
    }
    for k in 1..=d as usize {
        let o = &outer[outer.len() - k];
        if !o.locals_on_heap || (k < d as usize && o.kind != IseqKind::Block) {
            return bad();
        }
    }
    if (i as usize) < outer[outer.len() - d as usize].local_count {
        Ok(())
    } else {
        bad()
    }
}

fn verify_params(is: &Iseq, n: usize) -> R<()> {
    let p = &is.params;
    let slots = p.lead as u64 + p.opt as u64 + p.rest as u64 + p.post as u64 + p.kw.len() as u64 + p.kwrest as u64 + p.block as u64;
    if slots > is.local_names.len() as u64 {
        return Err("parameters do not fit the locals".into());
    }
    let pcs_ok = if p.opt == 0 { p.opt_pcs.is_empty() } else { p.opt_pcs.len() == p.opt as usize + 1 };
    if !pcs_ok || p.opt_pcs.iter().any(|&pc| pc as usize >= n) {
        return Err("bad optional-parameter entry points".into());
    }
    if p.simple && (p.opt > 0 || p.rest || p.post > 0 || !p.kw.is_empty() || p.kwrest || p.block || p.forwarding || p.trailing_comma) {
        return Err("a simple parameter list with more than required parameters".into());
    }
    if p.forwarding && !(p.rest && p.kwrest && p.block) {
        return Err("`...` without its rest, keyword rest and block".into());
    }
    Ok(())
}

/// Follows every path from the entry points (pc 0, the optional-parameter entries, the
/// catch handlers) and returns the largest operand stack depth.
fn stack_depths(is: &Iseq) -> R<u32> {
    let n = is.code.len();
    let mut depth: Vec<i64> = vec![-1; n];
    let mut work: Vec<(usize, i64)> = vec![(0, 0)];
    work.extend(is.params.opt_pcs.iter().map(|&pc| (pc as usize, 0)));
    work.extend(is.catch_table.iter().map(|e| (e.handler as usize, e.depth as i64)));
    let mut max = 0i64;
    while let Some((pc, d)) = work.pop() {
        if depth[pc] >= 0 {
            if depth[pc] != d {
                return Err(format!("{}: stack depth {d} and {} at pc {pc}", is.name, depth[pc]));
            }
            continue;
        }
        depth[pc] = d;
        let insn = is.code[pc];
        let (pops, pushes) = stack_effect(&insn, &is.calls);
        let floor = match insn {
            Insn::TopN(k) | Insn::SetN(k) => k as i64 + 1,
            _ => pops as i64,
        };
        if d < floor {
            return Err(format!("{}: operand stack underflow at pc {pc}", is.name));
        }
        let nd = d - pops as i64 + pushes as i64;
        if nd > MAX_DEPTH {
            return Err("operand stack too deep".into());
        }
        max = max.max(nd).max(d);
        let mut next = |t: usize, at: i64| -> R<()> {
            if t >= n {
                return Err(format!("{}: runs off the end of its code at pc {pc}", is.name));
            }
            work.push((t, at));
            Ok(())
        };
        use Insn::*;
        match insn {
            Leave | ThrowBreak | ThrowReturn | ThrowNext | Reraise(_) | PatternError(_) | Unreachable => {}
            Jump(t) | JumpPoll(t) => next(t as usize, nd)?,
            BranchIf(t) | BranchUnless(t) | BranchIfPoll(t) | BranchUnlessPoll(t) | BranchNil(t) | BranchIfSet(_, t) | Deconstruct(t) | DeconstructKeys(t) => {
                next(pc + 1, nd)?;
                next(t as usize, nd)?;
            }
            // The fused fast paths skip the two instructions that follow them.
            JumpIfLI(_, _, _, t) => {
                next(pc + 1, nd)?;
                next(t as usize, nd)?;
                next(pc + 3, nd)?;
            }
            AddLocalLI(..) => {
                next(pc + 1, nd)?;
                next(pc + 3, nd)?;
            }
            // Jumps with the cached regexp pushed.
            Once(t, _) => {
                next(pc + 1, nd)?;
                next(t as usize, nd + 1)?;
            }
            _ => next(pc + 1, nd)?,
        }
    }
    Ok(max as u32)
}
