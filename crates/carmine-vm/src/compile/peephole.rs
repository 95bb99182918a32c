//! Peephole optimisation of finished instruction sequences: fuses common sequences into
//! single instructions so the dispatch loop runs fewer, cheaper steps.
//!
//! Invariants:
//! - A sequence is fused only when no jump, catch-table entry or optional-argument entry
//!   points into its middle; targets are remapped afterwards (`remap`).
//! - Fused instructions keep the call-site index of the operator they replace, so their
//!   slow path is exactly the original `send`.
//! - A fused `local <op> imm` followed by a conditional branch, or `local + imm` stored back
//!   to the same local, gets a Fixnum-only guard instruction in front (`JumpIfLI`,
//!   `AddLocalLI`) that does the whole job in one dispatch and skips the general pair, which
//!   stays in place for every other case.
//! - `GetLocal(a); GetLocal(b); <op>` fuses the same way (`Opt*LL`, guard `JumpIfLL`).
//! - A forward `Jump` to `Leave` becomes `Leave` (nothing runs in between); a `Jump` to the
//!   next instruction (the end of an `if` without `else`) is dropped.
//! - `PutTrue; BranchIf` and `PutNil`/`PutFalse; BranchUnless` (`while true`, `until
//!   false`) become a `Jump`.
//! - Every loop back edge polls the interrupt word: backward jumps become `*Poll` variants,
//!   and the compiler's `Checkpoint` markers are dropped.

use std::collections::HashSet;

use super::builder::Builder;
use super::iseq::{CmpLocal, CmpOp, Insn};

fn jump_target(insn: &Insn) -> Option<u32> {
    match *insn {
        Insn::Jump(t) | Insn::BranchIf(t) | Insn::BranchUnless(t) | Insn::BranchNil(t) | Insn::JumpPoll(t) | Insn::BranchIfPoll(t) | Insn::BranchUnlessPoll(t) => Some(t),
        Insn::JumpIfLI(_, _, t) | Insn::JumpIfLL(_, _, t) => Some(t),
        Insn::BranchIfSet(_, t) | Insn::Deconstruct(t) | Insn::DeconstructKeys(t) | Insn::Once(t, _) => Some(t),
        _ => None,
    }
}

fn with_target(insn: Insn, t: u32) -> Insn {
    match insn {
        Insn::Jump(_) => Insn::Jump(t),
        Insn::BranchIf(_) => Insn::BranchIf(t),
        Insn::BranchUnless(_) => Insn::BranchUnless(t),
        Insn::BranchNil(_) => Insn::BranchNil(t),
        Insn::JumpPoll(_) => Insn::JumpPoll(t),
        Insn::BranchIfPoll(_) => Insn::BranchIfPoll(t),
        Insn::BranchUnlessPoll(_) => Insn::BranchUnlessPoll(t),
        Insn::BranchIfSet(l, _) => Insn::BranchIfSet(l, t),
        Insn::JumpIfLI(ol, k, _) => Insn::JumpIfLI(ol, k, t),
        Insn::JumpIfLL(ol, b, _) => Insn::JumpIfLL(ol, b, t),
        Insn::Deconstruct(_) => Insn::Deconstruct(t),
        Insn::DeconstructKeys(_) => Insn::DeconstructKeys(t),
        Insn::Once(_, s) => Insn::Once(t, s),
        other => other,
    }
}

/// `GetLocal(l); PutInt(k); <op>(ci)` or `GetLocal(a); GetLocal(b); <op>(ci)` as one
/// instruction.
fn fuse_local_operands(a: &Insn, b: &Insn, c: &Insn) -> Option<Insn> {
    Some(match (*a, *b, *c) {
        (Insn::GetLocal(l), Insn::PutInt(k), op) if k >= 0 => {
            let k = k as u32;
            match op {
                Insn::OptPlus(ci) => Insn::OptPlusLI(l, k, ci),
                Insn::OptMinus(ci) => Insn::OptMinusLI(l, k, ci),
                Insn::OptLt(ci) => Insn::OptLtLI(l, k, ci),
                Insn::OptLe(ci) => Insn::OptLeLI(l, k, ci),
                Insn::OptGt(ci) => Insn::OptGtLI(l, k, ci),
                Insn::OptGe(ci) => Insn::OptGeLI(l, k, ci),
                Insn::OptEq(ci) => Insn::OptEqLI(l, k, ci),
                _ => return None,
            }
        }
        (Insn::GetLocal(x), Insn::GetLocal(y), op) => match op {
            Insn::OptPlus(ci) => Insn::OptPlusLL(x, y, ci),
            Insn::OptMinus(ci) => Insn::OptMinusLL(x, y, ci),
            Insn::OptMult(ci) => Insn::OptMultLL(x, y, ci),
            Insn::OptLt(ci) => Insn::OptLtLL(x, y, ci),
            Insn::OptLe(ci) => Insn::OptLeLL(x, y, ci),
            Insn::OptGt(ci) => Insn::OptGtLL(x, y, ci),
            Insn::OptGe(ci) => Insn::OptGeLL(x, y, ci),
            Insn::OptEq(ci) => Insn::OptEqLL(x, y, ci),
            _ => return None,
        },
        _ => return None,
    })
}

/// The Fixnum-only compare-and-branch guard for a fused compare followed by `branch`.
fn branch_guard(fused: &Insn, branch: &Insn) -> Option<Insn> {
    enum Rhs {
        Imm(u32),
        Local(u32),
    }
    let (op, l, rhs) = match *fused {
        Insn::OptLtLI(l, k, _) => (CmpOp::Lt, l, Rhs::Imm(k)),
        Insn::OptLeLI(l, k, _) => (CmpOp::Le, l, Rhs::Imm(k)),
        Insn::OptGtLI(l, k, _) => (CmpOp::Gt, l, Rhs::Imm(k)),
        Insn::OptGeLI(l, k, _) => (CmpOp::Ge, l, Rhs::Imm(k)),
        Insn::OptEqLI(l, k, _) => (CmpOp::Eq, l, Rhs::Imm(k)),
        Insn::OptLtLL(a, b, _) => (CmpOp::Lt, a, Rhs::Local(b)),
        Insn::OptLeLL(a, b, _) => (CmpOp::Le, a, Rhs::Local(b)),
        Insn::OptGtLL(a, b, _) => (CmpOp::Gt, a, Rhs::Local(b)),
        Insn::OptGeLL(a, b, _) => (CmpOp::Ge, a, Rhs::Local(b)),
        Insn::OptEqLL(a, b, _) => (CmpOp::Eq, a, Rhs::Local(b)),
        _ => return None,
    };
    let (op, t) = match *branch {
        Insn::BranchIf(t) => (op, t),
        Insn::BranchUnless(t) => (op.negate(), t),
        _ => return None,
    };
    let ol = CmpLocal::new(op, l)?;
    Some(match rhs {
        Rhs::Imm(k) => Insn::JumpIfLI(ol, k, t),
        Rhs::Local(b) => Insn::JumpIfLL(ol, b, t),
    })
}

/// Rewrites `b.code` in place; catch table, optional-argument pcs and lines follow.
pub fn optimize(b: &mut Builder) {
    let code = std::mem::take(&mut b.code);
    let lines = std::mem::take(&mut b.lines);
    let mut targets: HashSet<u32> = code.iter().filter_map(jump_target).collect();
    for c in &b.catch_table {
        targets.insert(c.start);
        targets.insert(c.end);
        targets.insert(c.handler);
    }
    targets.extend(b.params.opt_pcs.iter().copied());
    let interior_free = |i: usize, n: usize| (i + 1..i + n).all(|j| !targets.contains(&(j as u32)));

    // old pc -> new pc (for a fused or dropped instruction: where its successor lands).
    let mut map: Vec<u32> = vec![0; code.len() + 1];
    let mut out: Vec<Insn> = Vec::with_capacity(code.len());
    let mut out_lines: Vec<u32> = Vec::with_capacity(code.len());
    let mut i = 0;
    while i < code.len() {
        map[i] = out.len() as u32;
        // Checkpoints are markers only; a jump to the next instruction does nothing.
        if code[i] == Insn::Checkpoint || code[i] == Insn::Jump(i as u32 + 1) {
            i += 1;
            continue;
        }
        // A branch on a literal that always takes it (`while true`, `until false`) is a jump.
        if i + 1 < code.len() && interior_free(i, 2) {
            if let (Insn::PutTrue, Insn::BranchIf(t)) | (Insn::PutNil | Insn::PutFalse, Insn::BranchUnless(t)) = (code[i], code[i + 1]) {
                map[i + 1] = out.len() as u32;
                out.push(Insn::Jump(t));
                out_lines.push(lines[i + 1]);
                i += 2;
                continue;
            }
        }
        // `@x += k` as a statement: a Fixnum-only update goes first, which skips the four.
        if i + 3 < code.len() && interior_free(i, 4) {
            if let (Insn::GetIvar(id, _), Insn::PutInt(k), Insn::OptPlus(_), Insn::SetIvar(set_id, c)) = (code[i], code[i + 1], code[i + 2], code[i + 3]) {
                if id == set_id && k >= 0 {
                    // `map[i]` (set above) is the fused instruction: a jump to the update runs it.
                    out.push(Insn::AddIvarI(id, k as u32, c));
                    out_lines.push(lines[i]);
                    for j in i..i + 4 {
                        if j > i {
                            map[j] = out.len() as u32;
                        }
                        out.push(code[j]);
                        out_lines.push(lines[j]);
                    }
                    i += 4;
                    continue;
                }
            }
        }
        if i + 2 < code.len() && interior_free(i, 3) {
            if let Some(f) = fuse_local_operands(&code[i], &code[i + 1], &code[i + 2]) {
                // Followed by a conditional branch or (for `+`) a store back to the same local:
                // a Fixnum-only instruction goes first, which skips the general pair.
                let next = code.get(i + 3).copied();
                let guard = match (f, next) {
                    (_, Some(n)) if interior_free(i, 4) => match (branch_guard(&f, &n), f, n) {
                        (Some(g), _, _) => Some(g),
                        (None, Insn::OptPlusLI(l, k, _), Insn::SetLocal(s)) if s == l => Some(Insn::AddLocalLI(l, k)),
                        _ => None,
                    },
                    _ => None,
                };
                if let (Some(g), Some(n)) = (guard, next) {
                    map[i + 1] = out.len() as u32;
                    map[i + 2] = out.len() as u32;
                    out.push(g);
                    out_lines.push(lines[i + 2]);
                    out.push(f);
                    out_lines.push(lines[i + 2]);
                    map[i + 3] = out.len() as u32;
                    out.push(n);
                    out_lines.push(lines[i + 3]);
                    i += 4;
                    continue;
                }
                map[i + 1] = out.len() as u32;
                map[i + 2] = out.len() as u32;
                out.push(f);
                out_lines.push(lines[i + 2]);
                i += 3;
                continue;
            }
        }
        out.push(code[i]);
        out_lines.push(lines[i]);
        i += 1;
    }
    map[code.len()] = out.len() as u32;
    let end = out.len() as u32;
    let remap = |t: u32| map.get(t as usize).copied().unwrap_or(end);
    for (pc, insn) in out.iter_mut().enumerate() {
        if let Some(t) = jump_target(insn) {
            let nt = remap(t);
            let mut ni = with_target(*insn, nt);
            // Backward jumps are loop back edges: they poll for interrupts.
            if nt as usize <= pc {
                ni = match ni {
                    Insn::Jump(t) => Insn::JumpPoll(t),
                    Insn::BranchIf(t) => Insn::BranchIfPoll(t),
                    Insn::BranchUnless(t) => Insn::BranchUnlessPoll(t),
                    other => other,
                };
            }
            *insn = ni;
        }
    }
    // A jump to `leave` leaves right away (the arms of a conditional in tail position).
    for i in 0..out.len() {
        if let Insn::Jump(t) = out[i] {
            if out.get(t as usize) == Some(&Insn::Leave) {
                out[i] = Insn::Leave;
            }
        }
    }
    for c in &mut b.catch_table {
        c.start = remap(c.start);
        c.end = remap(c.end);
        c.handler = remap(c.handler);
    }
    for p in &mut b.params.opt_pcs {
        *p = remap(*p);
    }
    b.code = out;
    b.lines = out_lines;
}
