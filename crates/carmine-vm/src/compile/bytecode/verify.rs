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
use crate::compile::iseq::{call_flags, Insn, Iseq, IseqKind};
use crate::interp::ops;

use super::read::R;

/// What a nested iseq needs to know of one enclosing iseq.
pub(super) struct Outer {
    pub kind: IseqKind,
    pub local_names: Vec<crate::symbol::SymId>,
    pub locals_on_heap: bool,
}

/// Bound on counts held in operands (array sizes, argument counts …): keeps stack-effect
/// arithmetic far from overflow. `enter_frame` checks the real room on the VM stack.
const MAX_COUNT: u32 = 1 << 20;
/// Deepest operand stack a loaded iseq may use.
const MAX_DEPTH: i64 = 1 << 22;
/// Call flags the compiler sets (`iseq::call_flags`).
const CALL_FLAGS: u32 = 4095;

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
        // Keyword values on the stack come with their keys (distinct), and only then.
        count(c.kw_keys.len() as u32)?;
        let distinct = c.kw_keys.iter().enumerate().all(|(i, k)| !c.kw_keys[..i].contains(k));
        if c.has(crate::compile::iseq::call_flags::KW_ARGS) != !c.kw_keys.is_empty() || !distinct {
            return Err("keyword arguments without their keys".into());
        }
        if c.block != u32::MAX {
            child(c.block, IseqKind::Block)?;
        }
    }
    verify_params(is, n)?;
    verify_outer_names(is, outer)?;

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
            GetLocal(i) | SetLocal(i) | Reraise(i) | FlipFlop(i, _) | AddLocalLI(i, _) | GetBlockParamProxy(i) => local(i)?,
            GetLocalUp(i, d) | SetLocalUp(i, d) => outer_local(is.kind, outer, i, d)?,
            GetIvar(_, c) | SetIvar(_, c) | AddIvarI(_, _, c) if c as usize >= is.ivar_caches.len() => return Err("ivar cache out of range".into()),
            GetConst(_, c) if c as usize >= is.const_caches.len() => return Err("constant cache out of range".into()),
            GetSpecial(k) => special(is, k)?,
            Defined(kind, operand) if kind == ops::DEF_REF => special(is, operand)?,
            Jump(t) | BranchIf(t) | BranchUnless(t) | JumpPoll(t) | BranchIfPoll(t) | BranchUnlessPoll(t) | BranchNil(t) | Deconstruct(t) | DeconstructKeys(t) => {
                target(t)?;
            }
            BranchIfSet(l, t) => {
                local(l)?;
                target(t)?;
            }
            JumpIfLI(ol, _, t) => {
                local(ol.local())?;
                target(t)?;
            }
            JumpIfLL(ol, b, t) => {
                local(ol.local())?;
                local(b)?;
                target(t)?;
            }
            Send(ci) | OptPlus(ci) | OptMinus(ci) | OptMult(ci) | OptDiv(ci) | OptMod(ci) | OptEq(ci) | OptNeq(ci) | OptLt(ci) | OptLe(ci) | OptGt(ci) | OptGe(ci) | OptLtLt(ci) | OptAnd(ci) | OptOr(ci) | OptAref(ci) | OptAset(ci) | OptNot(ci) | OptLength(ci) | OptSize(ci) | OptEmptyP(ci) | OptSucc(ci) | OptCmp(ci) | Yield(ci) | InvokeSuper(ci) | ToS(ci) => call(ci)?,
            OptPlusLI(l, _, ci) | OptMinusLI(l, _, ci) | OptLtLI(l, _, ci) | OptLeLI(l, _, ci) | OptGtLI(l, _, ci) | OptGeLI(l, _, ci) | OptEqLI(l, _, ci) => {
                local(l)?;
                call(ci)?;
            }
            OptPlusLL(a, b, ci) | OptMinusLL(a, b, ci) | OptMultLL(a, b, ci) | OptLtLL(a, b, ci) | OptLeLL(a, b, ci) | OptGtLL(a, b, ci) | OptGeLL(a, b, ci) | OptEqLL(a, b, ci) => {
                local(a)?;
                local(b)?;
                call(ci)?;
            }
            Once(t, s) => {
                target(t)?;
                if s as usize >= is.once_caches.len() {
                    return Err("once slot out of range".into());
                }
            }
            SetOnce(s) if s as usize >= is.once_caches.len() => return Err("once slot out of range".into()),
            DefineMethod(_, c) | DefineSMethod(_, c) => child(c, IseqKind::Method)?,
            DefineClass(_, c, _) => child(c, IseqKind::Class)?,
            Lambda(c) => child(c, IseqKind::Block)?,
            CheckMatch(k) if k > ops::MATCH_EXCEPTION => return Err(format!("bad match kind {k}")),
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
    if (i as usize) < outer[outer.len() - d as usize].local_names.len() {
        Ok(())
    } else {
        bad()
    }
}

/// The local names of the enclosing scopes (innermost first) that `binding` and `eval`
/// resolve against the environment chain: as the compiler records them, none for a class
/// body, else one list per enclosing iseq, each the start of that iseq's locals.
fn verify_outer_names(is: &Iseq, outer: &[Outer]) -> R<()> {
    let names = &is.outer_local_names;
    let ok = if is.kind == IseqKind::Class { names.is_empty() } else { names.len() == outer.len() && names.iter().zip(outer.iter().rev()).all(|(n, o)| o.local_names.starts_with(n)) };
    if ok {
        Ok(())
    } else {
        Err(format!("{}: outer local names do not match the enclosing scopes", is.name))
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
    if p.simple && (p.opt > 0 || p.rest || p.post > 0 || !p.kw.is_empty() || p.kwrest || (p.block && !p.block_proxy) || p.forwarding || p.trailing_comma) {
        return Err("a simple parameter list with more than required parameters".into());
    }
    if p.opt_simple && (p.opt == 0 || p.rest || p.post > 0 || !p.kw.is_empty() || p.kwrest || p.block || p.forwarding || p.trailing_comma) {
        return Err("an optional-only parameter list with other parameters".into());
    }
    if p.forwarding && !(p.rest && p.kwrest && p.block) {
        return Err("`...` without its rest, keyword rest and block".into());
    }
    Ok(())
}

/// What the verifier knows of an operand stack slot: only what some instruction relies
/// on (the array an `ArrayAppend` appends to, the strings `ConcatStrings` joins …), which
/// the compiler guarantees by construction and a loaded file must too.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Ty {
    Any,
    /// An Array the code made (`NewArray`, `SplatArray` …).
    Array,
    /// A Hash the code made (`NewHash`).
    Hash,
    /// A String (`PutString`, a String literal, `ToS`, `ConcatStrings`).
    Str,
    /// A Regexp (a literal, `ToRegexp`, a `once` cache).
    Regexp,
}

fn join(a: Ty, b: Ty) -> Ty {
    if a == b {
        a
    } else {
        Ty::Any
    }
}

/// Follows every path from the entry points (pc 0, the optional-parameter entries, the
/// catch handlers) with the operand stack's slot types; returns the largest depth.
fn stack_depths(is: &Iseq) -> R<u32> {
    use Insn::*;
    let n = is.code.len();
    let mut state: Vec<Option<Vec<Ty>>> = vec![None; n];
    let mut work: Vec<usize> = Vec::new();
    let mut max = 0usize;
    let enter = |state: &mut Vec<Option<Vec<Ty>>>, work: &mut Vec<usize>, from: usize, t: usize, st: &[Ty]| -> R<()> {
        if t >= n {
            return Err(format!("{}: runs off the end of its code at pc {from}", is.name));
        }
        match &mut state[t] {
            None => {
                state[t] = Some(st.to_vec());
                work.push(t);
            }
            Some(old) => {
                if old.len() != st.len() {
                    return Err(format!("{}: stack depth {} and {} at pc {t}", is.name, st.len(), old.len()));
                }
                let mut changed = false;
                for (o, &x) in old.iter_mut().zip(st) {
                    let j = join(*o, x);
                    changed |= j != *o;
                    *o = j;
                }
                if changed {
                    work.push(t);
                }
            }
        }
        Ok(())
    };
    enter(&mut state, &mut work, 0, 0, &[])?;
    for &pc in &is.params.opt_pcs {
        enter(&mut state, &mut work, 0, pc as usize, &[])?;
    }
    for e in &is.catch_table {
        if e.depth as i64 > MAX_DEPTH {
            return Err("operand stack too deep".into());
        }
        enter(&mut state, &mut work, 0, e.handler as usize, &vec![Ty::Any; e.depth as usize])?;
    }
    while let Some(pc) = work.pop() {
        let mut st = state[pc].clone().unwrap_or_default();
        let d = st.len();
        let insn = is.code[pc];
        let (pops, pushes) = stack_effect(&insn, &is.calls);
        let (pops, pushes) = (pops as usize, pushes as usize);
        let floor = match insn {
            TopN(k) | SetN(k) => k as usize + 1,
            _ => pops,
        };
        if d < floor {
            return Err(format!("{}: operand stack underflow at pc {pc}", is.name));
        }
        if d - pops + pushes > MAX_DEPTH as usize {
            return Err("operand stack too deep".into());
        }
        let need = |st: &[Ty], below_top: usize, what: &[Ty]| -> R<()> {
            match st.len().checked_sub(below_top + 1).map(|i| st[i]) {
                Some(t) if what.contains(&t) => Ok(()),
                _ => Err(format!("{}: {insn:?} at pc {pc} without the {:?} it needs", is.name, what[0])),
            }
        };
        // What the instruction relies on.
        match insn {
            ConcatArray | ArrayAppend => need(&st, 1, &[Ty::Array])?,
            HashMergeKw => need(&st, 1, &[Ty::Hash])?,
            Intern => need(&st, 0, &[Ty::Str])?,
            ConcatStrings(k) => (0..k as usize).try_for_each(|i| need(&st, i, &[Ty::Str]))?,
            ToRegexp(k, _) => (0..k as usize).try_for_each(|i| need(&st, i, &[Ty::Str, Ty::Regexp]))?,
            CheckMatch(k) if k == ops::MATCH_WHEN_SPLAT || k == ops::MATCH_RESCUE_SPLAT => need(&st, 0, &[Ty::Array])?,
            Send(ci) | OptPlus(ci) | OptMinus(ci) | OptMult(ci) | OptDiv(ci) | OptMod(ci) | OptEq(ci) | OptNeq(ci) | OptLt(ci) | OptLe(ci) | OptGt(ci) | OptGe(ci) | OptLtLt(ci) | OptAnd(ci) | OptOr(ci) | OptAref(ci) | OptAset(ci) | OptNot(ci) | OptLength(ci) | OptSize(ci) | OptEmptyP(ci) | OptSucc(ci) | OptCmp(ci) | Yield(ci) | InvokeSuper(ci) => {
                let c = &is.calls[ci as usize];
                if c.has(call_flags::SPLAT) {
                    if c.argc == 0 {
                        return Err(format!("{}: a splat call without arguments at pc {pc}", is.name));
                    }
                    need(&st, c.has(call_flags::KW_HASH) as usize + c.has(call_flags::BLOCK_ARG) as usize, &[Ty::Array])?;
                }
            }
            _ => {}
        }
        // The slot types after it.
        match insn {
            Dup => st.push(st[d - 1]),
            DupN(k) => st.extend_from_within(d - k as usize..),
            TopN(k) => st.push(st[d - 1 - k as usize]),
            Swap => st.swap(d - 1, d - 2),
            SetN(k) => st[d - 1 - k as usize] = st[d - 1],
            _ => {
                st.truncate(d - pops);
                let made = match insn {
                    NewArray(_) | SplatArray(_) | ConcatArray | ArrayAppend => Ty::Array,
                    NewHash(_) | HashMergeKw => Ty::Hash,
                    PutString(_) | ToS(_) | ConcatStrings(_) => Ty::Str,
                    ToRegexp(..) => Ty::Regexp,
                    PutLit(i) => literal_ty(is.literals[i as usize]),
                    _ => Ty::Any,
                };
                st.extend(std::iter::repeat_n(made, pushes));
            }
        }
        max = max.max(d).max(st.len());
        match insn {
            Leave | ThrowBreak | ThrowReturn | ThrowNext | Reraise(_) | PatternError(_) | Unreachable => {}
            Jump(t) | JumpPoll(t) => enter(&mut state, &mut work, pc, t as usize, &st)?,
            BranchIf(t) | BranchUnless(t) | BranchIfPoll(t) | BranchUnlessPoll(t) | BranchNil(t) | BranchIfSet(_, t) | Deconstruct(t) | DeconstructKeys(t) => {
                enter(&mut state, &mut work, pc, pc + 1, &st)?;
                enter(&mut state, &mut work, pc, t as usize, &st)?;
            }
            // The fused fast paths skip the two instructions that follow them.
            JumpIfLI(_, _, t) | JumpIfLL(_, _, t) => {
                enter(&mut state, &mut work, pc, pc + 1, &st)?;
                enter(&mut state, &mut work, pc, t as usize, &st)?;
                enter(&mut state, &mut work, pc, pc + 3, &st)?;
            }
            AddLocalLI(..) => {
                enter(&mut state, &mut work, pc, pc + 1, &st)?;
                enter(&mut state, &mut work, pc, pc + 3, &st)?;
            }
            // Skips the four instructions of `@x += k` that follow it.
            AddIvarI(..) => {
                enter(&mut state, &mut work, pc, pc + 1, &st)?;
                enter(&mut state, &mut work, pc, pc + 5, &st)?;
            }
            // Jumps with the cached regexp pushed.
            Once(t, _) => {
                enter(&mut state, &mut work, pc, pc + 1, &st)?;
                st.push(Ty::Regexp);
                enter(&mut state, &mut work, pc, t as usize, &st)?;
            }
            _ => enter(&mut state, &mut work, pc, pc + 1, &st)?,
        }
    }
    Ok(max as u32)
}

fn literal_ty(v: crate::value::Value) -> Ty {
    if crate::core::string::is_string(v) {
        Ty::Str
    } else if crate::core::regexp::is_regexp(v) {
        Ty::Regexp
    } else {
        Ty::Any
    }
}
