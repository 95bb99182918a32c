//! The opcode table: one byte per instruction, then its operands in order (`u32` as
//! uleb, `i32` as sleb, a Symbol as its symbol-table index, a comparison as one byte).
//! `Defined`'s operand is a Symbol for the kinds that name something (ivar … method)
//! and a plain number otherwise. Changing this table changes `ISA_HASH`.

use super::read::{Reader, R};
use super::write::Writer;
use crate::compile::iseq::{CmpLocal, CmpOp, Insn};
use crate::interp::ops;
use crate::symbol::SymId;

/// One operand's encoding.
pub(super) trait Operand: Sized {
    fn put(self, w: &mut Writer<'_>);
    fn get(r: &mut Reader<'_>) -> R<Self>;
}

impl Operand for u32 {
    fn put(self, w: &mut Writer<'_>) {
        w.uleb(self as u64);
    }
    fn get(r: &mut Reader<'_>) -> R<Self> {
        r.u32()
    }
}

impl Operand for i32 {
    fn put(self, w: &mut Writer<'_>) {
        w.sleb(self as i64);
    }
    fn get(r: &mut Reader<'_>) -> R<Self> {
        r.i32()
    }
}

impl Operand for SymId {
    fn put(self, w: &mut Writer<'_>) {
        w.sym(self);
    }
    fn get(r: &mut Reader<'_>) -> R<Self> {
        r.sym()
    }
}

impl Operand for CmpOp {
    fn put(self, w: &mut Writer<'_>) {
        w.byte(CmpOp::ALL.iter().position(|&c| c == self).unwrap_or(0) as u8);
    }
    fn get(r: &mut Reader<'_>) -> R<Self> {
        let i = r.byte()?;
        CmpOp::ALL.get(i as usize).copied().ok_or_else(|| format!("bad comparison {i}"))
    }
}

/// The comparison's byte, then the local's index.
impl Operand for CmpLocal {
    fn put(self, w: &mut Writer<'_>) {
        self.op().put(w);
        self.local().put(w);
    }
    fn get(r: &mut Reader<'_>) -> R<Self> {
        let op = CmpOp::get(r)?;
        let l = u32::get(r)?;
        CmpLocal::new(op, l).ok_or_else(|| format!("local index {l} too large for a comparison"))
    }
}

/// `defined?` kinds whose operand is a Symbol.
fn defined_names_symbol(kind: u32) -> bool {
    matches!(kind, ops::DEF_IVAR | ops::DEF_GVAR | ops::DEF_CVAR | ops::DEF_CONST | ops::DEF_CONST_FROM | ops::DEF_FUNC | ops::DEF_METHOD)
}

const DEFINED: u8 = 255;

macro_rules! opcodes {
    ($($code:literal $name:ident $(($($a:ident: $t:ty),*))?;)*) => {
        /// Appends one instruction.
        pub(super) fn encode(insn: &Insn, w: &mut Writer<'_>) {
            match *insn {
                $(Insn::$name $(($($a),*))? => {
                    w.byte($code);
                    $($(Operand::put($a, w);)*)?
                })*
                Insn::Defined(kind, operand) => {
                    w.byte(DEFINED);
                    kind.put(w);
                    if defined_names_symbol(kind) {
                        SymId(operand).put(w);
                    } else {
                        operand.put(w);
                    }
                }
            }
        }

        /// Reads one instruction.
        pub(super) fn decode(r: &mut Reader<'_>) -> R<Insn> {
            let code = r.byte()?;
            Ok(match code {
                $($code => Insn::$name $(($(<$t as Operand>::get(r)?),*))?,)*
                DEFINED => {
                    let kind = u32::get(r)?;
                    let operand = if defined_names_symbol(kind) { SymId::get(r)?.0 } else { u32::get(r)? };
                    Insn::Defined(kind, operand)
                }
                _ => return Err(format!("unknown opcode {code}")),
            })
        }
    };
}

opcodes! {
    0 Nop;
    1 PutNil;
    2 PutTrue;
    3 PutFalse;
    4 PutSelf;
    5 PutInt(i: i32);
    6 PutLit(i: u32);
    7 PutString(i: u32);
    8 Pop;
    9 Dup;
    10 DupN(n: u32);
    11 Swap;
    12 TopN(n: u32);
    13 SetN(n: u32);
    14 AdjustStack(n: u32);
    15 GetLocal(i: u32);
    16 SetLocal(i: u32);
    17 GetLocalUp(i: u32, d: u32);
    18 SetLocalUp(i: u32, d: u32);
    19 GetIvar(id: SymId, c: u32);
    20 SetIvar(id: SymId, c: u32);
    21 GetCvar(id: SymId);
    22 SetCvar(id: SymId);
    23 GetGlobal(id: SymId);
    24 SetGlobal(id: SymId);
    25 GetConst(id: SymId, c: u32);
    26 GetConstUnder(id: SymId);
    27 GetConstTop(id: SymId);
    28 SetConst(id: SymId);
    29 GetSpecial(k: u32);
    30 GetLastLine;
    31 SetLastLine;
    32 Jump(t: u32);
    33 BranchIf(t: u32);
    34 BranchUnless(t: u32);
    35 JumpPoll(t: u32);
    36 BranchIfPoll(t: u32);
    37 BranchUnlessPoll(t: u32);
    38 BranchNil(t: u32);
    39 BranchIfSet(l: u32, t: u32);
    40 Send(ci: u32);
    41 OptPlus(ci: u32);
    42 OptMinus(ci: u32);
    43 OptMult(ci: u32);
    44 OptDiv(ci: u32);
    45 OptMod(ci: u32);
    46 OptEq(ci: u32);
    47 OptNeq(ci: u32);
    48 OptLt(ci: u32);
    49 OptLe(ci: u32);
    50 OptGt(ci: u32);
    51 OptGe(ci: u32);
    52 OptLtLt(ci: u32);
    53 OptAnd(ci: u32);
    54 OptOr(ci: u32);
    55 OptAref(ci: u32);
    56 OptAset(ci: u32);
    57 OptNot(ci: u32);
    58 OptLength(ci: u32);
    59 OptSize(ci: u32);
    60 OptEmptyP(ci: u32);
    61 OptSucc(ci: u32);
    62 OptPlusLI(l: u32, k: u32, ci: u32);
    63 OptMinusLI(l: u32, k: u32, ci: u32);
    64 OptLtLI(l: u32, k: u32, ci: u32);
    65 OptLeLI(l: u32, k: u32, ci: u32);
    66 OptGtLI(l: u32, k: u32, ci: u32);
    67 OptGeLI(l: u32, k: u32, ci: u32);
    68 OptEqLI(l: u32, k: u32, ci: u32);
    69 JumpIfLI(ol: CmpLocal, k: u32, t: u32);
    70 AddLocalLI(l: u32, k: u32);
    71 Yield(ci: u32);
    72 InvokeSuper(ci: u32);
    73 Leave;
    74 ThrowBreak;
    75 ThrowReturn;
    76 ThrowNext;
    77 Reraise(l: u32);
    78 NewArray(n: u32);
    79 SplatArray(d: u32);
    80 ConcatArray;
    81 ArrayAppend;
    82 ExpandArray(n: u32, f: u32);
    83 NewHash(n: u32);
    84 HashMergeKw;
    85 NewRange(x: u32);
    86 ToS(ci: u32);
    87 ConcatStrings(n: u32);
    88 Intern;
    89 ToRegexp(n: u32, o: u32);
    90 Once(t: u32, s: u32);
    91 SetOnce(s: u32);
    92 DefineMethod(id: SymId, c: u32);
    93 DefineSMethod(id: SymId, c: u32);
    94 DefineClass(id: SymId, c: u32, f: u32);
    95 CheckMatch(k: u32);
    96 BlockArg;
    97 BlockGiven;
    98 GetErrinfo;
    99 SetErrinfo;
    100 Lambda(c: u32);
    101 Checkpoint;
    102 PatternError(k: u32);
    103 Alias(k: u32);
    104 Undef;
    105 Deconstruct(t: u32);
    106 DeconstructKeys(t: u32);
    107 FlipFlop(l: u32, x: u32);
    108 Unreachable;
    109 OptPlusLL(a: u32, b: u32, ci: u32);
    110 OptMinusLL(a: u32, b: u32, ci: u32);
    111 OptMultLL(a: u32, b: u32, ci: u32);
    112 OptLtLL(a: u32, b: u32, ci: u32);
    113 OptLeLL(a: u32, b: u32, ci: u32);
    114 OptGtLL(a: u32, b: u32, ci: u32);
    115 OptGeLL(a: u32, b: u32, ci: u32);
    116 OptEqLL(a: u32, b: u32, ci: u32);
    117 JumpIfLL(ol: CmpLocal, b: u32, t: u32);
    118 OptCmp(ci: u32);
    119 GetBlockParamProxy(l: u32);
    120 AddIvarI(id: SymId, k: u32, c: u32);
}
