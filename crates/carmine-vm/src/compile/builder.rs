//! Building one instruction sequence: emitting, labels, stack depth, side tables.
//!
//! Invariants:
//! - `depth` is the operand stack depth after the last emitted instruction along the
//!   current path; `max_depth` bounds it over the whole sequence (the frame reserves it).
//! - A label is placed at most once; jumps to it are patched when it is placed (or at
//!   `finish` for forward references).

use std::cell::Cell;

use crate::compile::iseq::{CallCache, CallInfo, CatchEntry, CatchKind, Insn, IseqKind, Params};
use crate::symbol::{SymId, SymMap};
use crate::value::Value;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Label(pub usize);

pub struct Builder {
    pub kind: IseqKind,
    pub name: String,
    pub method_name: Option<SymId>,
    pub code: Vec<Insn>,
    pub lines: Vec<u32>,
    pub literals: Vec<Value>,
    pub calls: Vec<CallInfo>,
    pub children: Vec<Value>,
    pub catch_table: Vec<CatchEntry>,
    pub local_names: Vec<SymId>,
    pub local_index: SymMap<u32>,
    pub params: Params,
    pub locals_on_heap: bool,
    /// The method yields, calls super or otherwise uses its block (see `Iseq::uses_block`).
    pub uses_block: bool,
    /// The method looks at its block only with `block_given?` (see `Iseq::sees_block`).
    pub checks_block: bool,
    pub depth: i32,
    pub max_depth: i32,
    pub line: u32,
    /// The line the scope starts on (the `def`, the block's opening).
    pub start_line: u32,
    pub ivar_cache_count: u32,
    pub const_cache_count: u32,
    pub once_count: u32,
    labels: Vec<Option<u32>>,
    fixups: Vec<(usize, usize)>,
    pub block_depth: u32,
    hidden_counter: u32,
    /// The parameters but a `&block` one are only required positionals.
    pub simple_but_block: bool,
    /// The `&block` parameter's local is read or written other than as a `&blk` argument
    /// in the method's own body (`GetBlockParamProxy`), or the scope's locals escape
    /// (`binding`, `eval`): the parameter must be a Proc.
    pub block_param_used: bool,
}

impl Builder {
    pub fn new(kind: IseqKind, name: String, line: u32) -> Builder {
        Builder {
            kind,
            name,
            method_name: None,
            code: Vec::new(),
            lines: Vec::new(),
            literals: Vec::new(),
            calls: Vec::new(),
            children: Vec::new(),
            catch_table: Vec::new(),
            local_names: Vec::new(),
            local_index: SymMap::default(),
            params: Params::default(),
            locals_on_heap: false,
            uses_block: false,
            checks_block: false,
            depth: 0,
            max_depth: 0,
            line,
            start_line: line,
            ivar_cache_count: 0,
            const_cache_count: 0,
            once_count: 0,
            labels: Vec::new(),
            fixups: Vec::new(),
            block_depth: 0,
            hidden_counter: 0,
            simple_but_block: false,
            block_param_used: false,
        }
    }

    // ---- locals ----

    pub fn local(&mut self, name: SymId) -> u32 {
        if let Some(&i) = self.local_index.get(&name) {
            return i;
        }
        self.add_local(name)
    }

    /// Adds a local slot even if the name exists (for positional parameters).
    pub fn add_local(&mut self, name: SymId) -> u32 {
        let i = self.local_names.len() as u32;
        self.local_names.push(name);
        self.local_index.entry(name).or_insert(i);
        i
    }

    /// Index of a hidden local (exception holders, loop temporaries).
    pub fn hidden_local(&mut self, hidden_name: SymId) -> u32 {
        self.hidden_counter += 1;
        let i = self.local_names.len() as u32;
        self.local_names.push(hidden_name);
        i
    }

    // ---- emitting ----

    pub fn emit(&mut self, insn: Insn) -> usize {
        let (pops, pushes) = self.effect(&insn);
        self.depth -= pops;
        self.depth += pushes;
        if self.depth > self.max_depth {
            self.max_depth = self.depth;
        }
        self.code.push(insn);
        self.lines.push(self.line);
        self.code.len() - 1
    }

    pub fn pc(&self) -> u32 {
        self.code.len() as u32
    }

    pub fn new_label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    pub fn place(&mut self, l: Label) {
        self.labels[l.0] = Some(self.code.len() as u32);
    }

    pub fn label_pc(&self, l: Label) -> Option<u32> {
        self.labels[l.0]
    }

    fn emit_jump_like(&mut self, make: fn(u32) -> Insn, l: Label) {
        let at = self.emit(make(0));
        self.fixups.push((at, l.0));
    }

    /// `Once` for a new cache slot, jumping to `l` when the slot is filled; returns the slot.
    pub fn once(&mut self, l: Label) -> u32 {
        let slot = self.once_count;
        self.once_count += 1;
        let at = self.emit(Insn::Once(0, slot));
        self.fixups.push((at, l.0));
        slot
    }

    pub fn jump(&mut self, l: Label) {
        self.emit_jump_like(Insn::Jump, l);
    }
    pub fn branch_if(&mut self, l: Label) {
        self.emit_jump_like(Insn::BranchIf, l);
    }
    pub fn branch_unless(&mut self, l: Label) {
        self.emit_jump_like(Insn::BranchUnless, l);
    }
    pub fn branch_nil(&mut self, l: Label) {
        self.emit_jump_like(Insn::BranchNil, l);
    }

    /// Emits an instruction whose first operand is a jump target.
    pub fn emit_with_target(&mut self, insn: Insn, l: Label) {
        let at = self.emit(insn);
        self.fixups.push((at, l.0));
    }

    pub fn literal(&mut self, v: Value) -> u32 {
        if let Some(i) = self.literals.iter().position(|&x| x == v) {
            return i as u32;
        }
        self.literals.push(v);
        (self.literals.len() - 1) as u32
    }

    /// A literal that must not be shared with another equal-looking slot (strings).
    pub fn unique_literal(&mut self, v: Value) -> u32 {
        self.literals.push(v);
        (self.literals.len() - 1) as u32
    }

    pub fn child(&mut self, iseq: Value) -> u32 {
        self.children.push(iseq);
        (self.children.len() - 1) as u32
    }

    pub fn call_info(&mut self, mid: SymId, argc: u32, flags: u32, block: Option<u32>) -> u32 {
        self.calls.push(CallInfo { mid, argc, flags, block: block.unwrap_or(u32::MAX), kw_keys: Box::default(), cache: CallCache::default() });
        (self.calls.len() - 1) as u32
    }

    pub fn ivar_cache(&mut self) -> u32 {
        self.ivar_cache_count += 1;
        self.ivar_cache_count - 1
    }

    pub fn const_cache(&mut self) -> u32 {
        self.const_cache_count += 1;
        self.const_cache_count - 1
    }

    pub fn catch(&mut self, kind: CatchKind, start: Label, end: Label, handler: Label, depth: i32, local: u32) {
        // Labels are resolved at finish; store label ids temporarily in the pcs.
        self.catch_table.push(CatchEntry { kind, start: start.0 as u32, end: end.0 as u32, handler: handler.0 as u32, depth: depth.max(0) as u32, local });
    }

    /// Resolves labels; returns the final code.
    pub fn finish(&mut self) {
        for &(at, l) in &self.fixups {
            let target = self.labels[l].unwrap_or(self.code.len() as u32);
            self.code[at] = match self.code[at] {
                Insn::Jump(_) => Insn::Jump(target),
                Insn::BranchIf(_) => Insn::BranchIf(target),
                Insn::BranchUnless(_) => Insn::BranchUnless(target),
                Insn::BranchNil(_) => Insn::BranchNil(target),
                Insn::BranchIfSet(local, _) => Insn::BranchIfSet(local, target),
                Insn::Deconstruct(_) => Insn::Deconstruct(target),
                Insn::DeconstructKeys(_) => Insn::DeconstructKeys(target),
                Insn::Once(_, slot) => Insn::Once(target, slot),
                other => other,
            };
        }
        let resolve = |labels: &Vec<Option<u32>>, l: u32, len: usize| labels[l as usize].unwrap_or(len as u32);
        let len = self.code.len();
        for c in &mut self.catch_table {
            c.start = resolve(&self.labels, c.start, len);
            c.end = resolve(&self.labels, c.end, len);
            c.handler = resolve(&self.labels, c.handler, len);
        }
        self.settle_block_proxy();
    }

    /// Decides, once the body is compiled, whether a method's `&block` parameter is a
    /// proxy (`Params::block_proxy`): only a method whose body passes it on as `&blk` and
    /// does nothing else with it. Otherwise the `GetBlockParamProxy` reads become plain
    /// local reads of the Proc bound on entry.
    fn settle_block_proxy(&mut self) {
        let p = &mut self.params;
        if self.kind == IseqKind::Method && p.block && !p.forwarding && !self.block_param_used && self.simple_but_block {
            p.block_proxy = true;
            p.simple = true;
            return;
        }
        for insn in &mut self.code {
            if let Insn::GetBlockParamProxy(i) = *insn {
                *insn = Insn::GetLocal(i);
            }
        }
    }

    pub fn make_caches<T: Default>(n: u32) -> Vec<T> {
        (0..n).map(|_| T::default()).collect()
    }

    pub fn ivar_caches(&self) -> Vec<(Cell<u64>, Cell<u32>)> {
        (0..self.ivar_cache_count).map(|_| (Cell::new(0), Cell::new(0))).collect()
    }

    pub fn const_caches(&self) -> Vec<(Cell<u64>, Cell<Value>, Cell<Value>)> {
        (0..self.const_cache_count).map(|_| (Cell::new(0), Cell::new(Value::NIL), Cell::new(Value::NIL))).collect()
    }

    fn effect(&self, insn: &Insn) -> (i32, i32) {
        stack_effect(insn, &self.calls)
    }
}

/// Stack effect (pops, pushes) of an instruction along its fall-through path (also how
/// `bytecode::verify` checks loaded code). Call indexes must be within `calls`.
pub fn stack_effect(insn: &Insn, calls: &[CallInfo]) -> (i32, i32) {
    use Insn::*;
    let call = |ci: u32| -> i32 { calls[ci as usize].arg_slots() as i32 };
    match *insn {
        Nop | Jump(_) | Checkpoint | Unreachable => (0, 0),
        PutNil | PutTrue | PutFalse | PutSelf | PutInt(_) | PutLit(_) | PutString(_) => (0, 1),
        Pop => (1, 0),
        Dup => (1, 2),
        DupN(n) => (n as i32, 2 * n as i32),
        Swap => (2, 2),
        TopN(_) => (0, 1),
        SetN(_) => (1, 1),
        AdjustStack(n) => (n as i32, 0),
        GetLocal(_) | GetBlockParamProxy(_) | GetLocalUp(..) | GetIvar(..) | GetCvar(_) | GetGlobal(_) | GetConst(..) | GetConstTop(_) | GetSpecial(_) | GetLastLine => (0, 1),
        SetLocal(_) | SetLocalUp(..) | SetIvar(..) | SetCvar(_) | SetGlobal(_) | SetLastLine => (1, 0),
        GetConstUnder(_) => (1, 1),
        SetConst(_) => (2, 0),
        BranchIf(_) | BranchUnless(_) | BranchNil(_) | BranchIfPoll(_) | BranchUnlessPoll(_) => (1, 0),
        JumpPoll(_) => (0, 0),
        OptPlusLI(..) | OptMinusLI(..) | OptLtLI(..) | OptLeLI(..) | OptGtLI(..) | OptGeLI(..) | OptEqLI(..) => (0, 1),
        OptPlusLL(..) | OptMinusLL(..) | OptMultLL(..) | OptLtLL(..) | OptLeLL(..) | OptGtLL(..) | OptGeLL(..) | OptEqLL(..) => (0, 1),
        BranchIfSet(..) | JumpIfLI(..) | JumpIfLL(..) | AddLocalLI(..) | AddIvarI(..) => (0, 0),
        Send(ci) | OptPlus(ci) | OptMinus(ci) | OptMult(ci) | OptDiv(ci) | OptMod(ci) | OptEq(ci) | OptNeq(ci) | OptLt(ci) | OptLe(ci) | OptGt(ci) | OptGe(ci) | OptLtLt(ci) | OptAnd(ci) | OptOr(ci) | OptAref(ci) | OptAset(ci) | OptNot(ci) | OptLength(ci) | OptSize(ci) | OptEmptyP(ci) | OptSucc(ci) | OptCmp(ci) | InvokeSuper(ci) => (call(ci) + 1, 1),
        Yield(ci) => (call(ci), 1),
        Leave | ThrowBreak | ThrowReturn | ThrowNext => (1, 0),
        Reraise(_) => (0, 0),
        NewArray(n) => (n as i32, 1),
        SplatArray(_) => (1, 1),
        ConcatArray => (2, 1),
        ArrayAppend => (2, 1),
        ExpandArray(n, flags) => (1, n as i32 + (flags & 1) as i32 + (flags >> 8) as i32),
        NewHash(n) => (n as i32, 1),
        HashMergeKw => (2, 1),
        NewRange(_) => (2, 1),
        ToS(_) => (1, 1),
        ConcatStrings(n) => (n as i32, 1),
        Intern => (1, 1),
        ToRegexp(n, _) => (n as i32, 1),
        Once(..) => (0, 0),
        SetOnce(_) => (0, 0),
        DefineMethod(..) => (0, 1),
        DefineSMethod(..) => (1, 1),
        DefineClass(_, _, flags) => {
            let pops = if flags & 8 != 0 { 1 } else { 1 + (flags & 1) as i32 };
            (pops, 1)
        }
        Defined(kind, _) => {
            if kind == crate::interp::ops::DEF_CONST_FROM || kind == crate::interp::ops::DEF_METHOD {
                (1, 1)
            } else {
                (0, 1)
            }
        }
        CheckMatch(_) => (2, 1),
        BlockArg | BlockGiven | GetErrinfo | Lambda(_) => (0, 1),
        PatternError(_) | SetErrinfo => (1, 0),
        Alias(_) => (2, 1),
        Undef => (1, 0),
        Deconstruct(_) => (1, 1),
        DeconstructKeys(_) => (2, 1),
        FlipFlop(..) => (1, 1),
    }
}
