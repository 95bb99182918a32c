//! Instruction sequences: the compiled form of one method, block, class body or script.
//!
//! Invariants:
//! - An `Iseq` is immutable after compilation except for its inline caches.
//! - It lives in a heap object (`RIseq`) so that the collector frees code nobody can run
//!   any more (a method redefined, an embedded script finished) and marks its literals.
//! - Locals are laid out parameters first: lead, optional, rest, post, keywords, keyword
//!   rest, block; then the other locals. `local_names.len()` is the frame's local count.
//! - Jump targets and catch-table pcs are indices into `code`.

use std::cell::Cell;
use std::sync::Arc;

use crate::core::module::MethodEntry;
use crate::heap::Marker;
use crate::object::{ObjType, RBasic};
use crate::symbol::SymId;
use crate::value::Value;

/// Comparison of a fused compare-and-branch. Each discriminant is the set of orderings
/// for which it holds (bit 0: less, bit 1: equal, bit 2: greater), so `eval` is a shift.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CmpOp {
    Lt = 0b001,
    Le = 0b011,
    Gt = 0b100,
    Ge = 0b110,
    Eq = 0b010,
    Ne = 0b101,
}

impl CmpOp {
    /// Every comparison, in the order the bytecode file numbers them.
    pub const ALL: [CmpOp; 6] = [CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne];

    pub fn negate(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
        }
    }

    #[inline(always)]
    pub fn eval(self, a: i64, b: i64) -> bool {
        eval_cmp(self as u32, a, b)
    }

    fn from_bits(bits: u32) -> CmpOp {
        CmpOp::ALL.into_iter().find(|&c| c as u32 == bits).expect("a CmpLocal holds a CmpOp")
    }
}

/// Whether the comparison whose orderings are the bits `op` (`CmpOp`'s discriminants)
/// holds for `a` and `b`.
#[inline(always)]
fn eval_cmp(op: u32, a: i64, b: i64) -> bool {
    // 0: less, 1: equal, 2: greater.
    let ordering = (a >= b) as u32 + (a > b) as u32;
    (op >> ordering) & 1 != 0
}

/// A local's index and the comparison to make on it, as one operand of `JumpIfLI` and
/// `JumpIfLL`. (The comparison as a field of its own was a byte at its own offset, which
/// the dispatch loop loaded for every instruction.)
#[derive(Copy, Clone, PartialEq, Eq)]
pub struct CmpLocal(u32);

impl CmpLocal {
    /// The largest local index a `CmpLocal` holds.
    pub const MAX_LOCAL: u32 = u32::MAX >> 3;

    /// None when `local` is above `MAX_LOCAL`.
    pub fn new(op: CmpOp, local: u32) -> Option<CmpLocal> {
        (local <= Self::MAX_LOCAL).then_some(CmpLocal(local << 3 | op as u32))
    }

    #[inline(always)]
    pub fn local(self) -> u32 {
        self.0 >> 3
    }

    pub fn op(self) -> CmpOp {
        CmpOp::from_bits(self.0 & 7)
    }

    /// `op().eval(a, b)`.
    #[inline(always)]
    pub fn eval(self, a: i64, b: i64) -> bool {
        eval_cmp(self.0 & 7, a, b)
    }
}

impl std::fmt::Debug for CmpLocal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}, {}", self.op(), self.local())
    }
}

// Instructions are copied out of the code array on every dispatch: keep them two words, with
// operands only in the u32 words at offsets 4, 8 and 12 (`interp::exec`'s dispatch loads
// every such field, and sign-extends a signed one, for every instruction). `PutInt`'s i32 is
// the exception that measured free: LLVM extends it in its own arm.
const _: () = assert!(std::mem::size_of::<Insn>() == 16);

/// One instruction. Operands are inline; larger data lives in the iseq's side tables
/// (`literals`, `calls`, `children`), referenced by index.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Insn {
    Nop,
    PutNil,
    PutTrue,
    PutFalse,
    PutSelf,
    PutInt(i32),
    /// Push `literals[i]` as is (immutable literals: symbols, numbers, frozen strings, ranges).
    PutLit(u32),
    /// Push a new mutable copy of the string literal `literals[i]`.
    PutString(u32),
    Pop,
    Dup,
    /// Duplicate the top n values.
    DupN(u32),
    Swap,
    /// Push a copy of the value n below the top (0 = top).
    TopN(u32),
    /// Overwrite the value n below the top with the top (which stays).
    SetN(u32),
    /// Pop n values.
    AdjustStack(u32),

    GetLocal(u32),
    SetLocal(u32),
    /// Local `idx` of the environment `depth` levels out.
    GetLocalUp(u32, u32),
    SetLocalUp(u32, u32),
    GetIvar(SymId, u32),
    SetIvar(SymId, u32),
    GetCvar(SymId),
    SetCvar(SymId),
    GetGlobal(SymId),
    SetGlobal(SymId),
    /// Lexical constant lookup (cref chain, then ancestors); operand 2 is a cache slot.
    GetConst(SymId, u32),
    /// `recv::Name`: pops the scope.
    GetConstUnder(SymId),
    /// `::Name`
    GetConstTop(SymId),
    /// Pops value and scope (scope below value); `nil` scope means the lexical cref.
    SetConst(SymId),
    /// `$~`-derived specials: 0 = `$~`, 1 = `$&`, 2 = `` $` ``, 3 = `$'`, 4 = `$+`, n+16 = `$n`.
    GetSpecial(u32),
    /// `$_` read/write.
    GetLastLine,
    SetLastLine,

    Jump(u32),
    BranchIf(u32),
    BranchUnless(u32),
    /// Backward (loop) jumps: poll the interrupt word, then jump.
    JumpPoll(u32),
    BranchIfPoll(u32),
    BranchUnlessPoll(u32),
    BranchNil(u32),
    /// Pop; jump if the value is not `UNDEF` (used for keyword defaults).
    BranchIfSet(u32, u32),

    /// Method call described by `calls[i]`.
    Send(u32),
    /// Fast paths for operators on builtin types, falling back to `Send(i)`.
    OptPlus(u32),
    OptMinus(u32),
    OptMult(u32),
    OptDiv(u32),
    OptMod(u32),
    OptEq(u32),
    OptNeq(u32),
    OptLt(u32),
    OptLe(u32),
    OptGt(u32),
    OptGe(u32),
    OptLtLt(u32),
    OptAnd(u32),
    OptOr(u32),
    OptAref(u32),
    OptAset(u32),
    OptNot(u32),
    OptLength(u32),
    OptSize(u32),
    OptEmptyP(u32),
    OptSucc(u32),
    /// `a <=> b`: Fixnums and Floats compared in place, anything else sent.
    OptCmp(u32),
    /// Fused `GetLocal(l); PutInt(k); Opt*(ci)` (see `compile::peephole`), for `k >= 0`.
    /// (Immediates of these instructions are never negative: a signed operand here was
    /// sign-extended on every dispatch; an unsigned one is zero-extended by its load.)
    OptPlusLI(u32, u32, u32),
    OptMinusLI(u32, u32, u32),
    OptLtLI(u32, u32, u32),
    OptLeLI(u32, u32, u32),
    OptGtLI(u32, u32, u32),
    OptGeLI(u32, u32, u32),
    OptEqLI(u32, u32, u32),
    /// Fused `GetLocal(a); GetLocal(b); Opt*(ci)` (see `compile::peephole`).
    OptPlusLL(u32, u32, u32),
    OptMinusLL(u32, u32, u32),
    OptMultLL(u32, u32, u32),
    OptLtLL(u32, u32, u32),
    OptLeLL(u32, u32, u32),
    OptGtLL(u32, u32, u32),
    OptGeLL(u32, u32, u32),
    OptEqLL(u32, u32, u32),
    /// `JumpIfLI` comparing two locals `a <op> b` (the first operand holds `op` and `a`):
    /// when both are Fixnums, jump to `t` (polling) if it holds, else skip the fused compare
    /// and branch that follow.
    JumpIfLL(CmpLocal, u32, u32),
    /// Fixnum fast path of the fused compare-and-branch that follows it (the first operand
    /// holds `op` and `l`): when local `l` is a Fixnum (and Integer is not redefined), jump
    /// to `t` (polling) if `l <op> k` holds, else skip the two instructions after this one;
    /// otherwise fall through to them.
    JumpIfLI(CmpLocal, u32, u32),
    /// Fixnum fast path of the `OptPlusLI(l, k); SetLocal(l)` that follows it (`l += k`):
    /// updates the local and skips both, or falls through to them.
    AddLocalLI(u32, u32),
    /// Fixnum fast path of the `GetIvar(id, _); PutInt(k); OptPlus(_); SetIvar(id, c)` that
    /// follows it (`@id += k` as a statement): when `self`'s layout is in ivar cache `c`, the
    /// variable holds a Fixnum and Integer is not redefined, updates it and skips the four;
    /// otherwise falls through to them. `k >= 0`, as for `OptPlusLI`.
    AddIvarI(SymId, u32, u32),
    /// `yield` with `calls[i]` describing the arguments.
    Yield(u32),
    /// `super` / `super(...)` with `calls[i]`; zsuper passes the current arguments.
    InvokeSuper(u32),

    Leave,
    /// `break` out of a block: returns from the method the block was given to.
    ThrowBreak,
    /// `return` from inside a block: returns from the enclosing method or lambda.
    ThrowReturn,
    /// `next` in a class body inside a block: ends the block's current call.
    ThrowNext,
    /// Re-raise the unwind stored in local `idx` (end of an ensure/rescue handler).
    Reraise(u32),

    NewArray(u32),
    /// Convert top to an array for splatting (`*x`); operand 1 = dup the result.
    SplatArray(u32),
    /// Pop two arrays, push their concatenation (a new array).
    ConcatArray,
    /// Append top to the array below it (in place; the array was created by the compiler).
    ArrayAppend,
    /// Multiple assignment: pop value, push `n` elements (last first) with rest/post layout.
    /// Operand 2 bits: 1 = has splat, post count in bits 8.. .
    ExpandArray(u32, u32),
    NewHash(u32),
    /// Merge a `**h` (top) into the hash below it.
    HashMergeKw,
    NewRange(u32),
    /// Convert top to a String for interpolation (calls `to_s` unless it is a String).
    ToS(u32),
    ConcatStrings(u32),
    /// Intern the string on top as a Symbol.
    Intern,
    /// Build a Regexp from n strings; operand 2 = option flags (bit 31 = once).
    ToRegexp(u32, u32),
    /// `/#{x}/o`: push the regexp cached in slot operand 2 and jump to operand 1, if the
    /// regexp was built already.
    Once(u32, u32),
    /// Cache the regexp on top of the stack (kept there) in a `Once` slot.
    SetOnce(u32),

    /// Define method `name` from `children[i]` on the current definee.
    DefineMethod(SymId, u32),
    /// Pop an object; define singleton method `name` from `children[i]` on it.
    DefineSMethod(SymId, u32),
    /// Pop superclass and cbase; open/create class `name` and run `children[i]`.
    /// Flags: 1 = has superclass, 2 = scoped (`A::B`), 4 = module, 8 = singleton (`class << x`).
    DefineClass(SymId, u32, u32),
    /// `defined?` check: kind and operand; pushes a string or nil.
    Defined(u32, u32),
    /// Pattern `===` for `when`/`rescue`: pops pattern and target, pushes bool.
    /// Operand: 0 = when, 1 = rescue, 2 = case/in.
    CheckMatch(u32),
    /// Push the current block as a Proc (or nil).
    BlockArg,
    /// `&blk` passed on, where `blk` (local operand) is the running method's block
    /// parameter in a method that never reads it otherwise (`Params::block_proxy`): pushes
    /// nil when the method has no block, else `Value::BLOCK_PARAM_PROXY`, which the call
    /// turns back into the method's block without making a Proc.
    GetBlockParamProxy(u32),
    BlockGiven,
    /// Push `$!`.
    GetErrinfo,
    /// Pop into `$!`.
    SetErrinfo,
    /// Create a lambda from `children[i]` (for `->`).
    Lambda(u32),
    /// Safepoint poll at loop back edges.
    Checkpoint,
    /// Pop and raise a `NoMatchingPattern(Key)Error` for `case/in` (operand: 1 = key error).
    PatternError(u32),
    /// `alias` of methods (pops new, old symbols) or globals (operand 1).
    Alias(u32),
    /// `undef` (pops symbol).
    Undef,
    /// Check a value for `deconstruct`/`deconstruct_keys` and push the result or jump.
    Deconstruct(u32),
    DeconstructKeys(u32),
    /// Flip-flop state in local slot (for `a..b` in conditions).
    FlipFlop(u32, u32),
    /// Push a frozen copy of nothing special — reserved.
    Unreachable,
}

/// How arguments are passed at a call site.
pub mod call_flags {
    /// The last positional argument is an array to splat (`f(*a)`).
    pub const SPLAT: u32 = 1;
    /// The value after the positional arguments is a keyword hash (`f(k: 1)`, `f(**h)`).
    pub const KW_HASH: u32 = 2;
    /// A block argument (`&b`) is on top of the stack.
    pub const BLOCK_ARG: u32 = 4;
    /// Receiver-less call (`foo()`): private methods are visible.
    pub const FCALL: u32 = 8;
    /// A bare identifier that could have been a local (`foo`), for NameError wording.
    pub const VCALL: u32 = 16;
    /// `recv&.m`: nil receiver returns nil.
    pub const SAFE_NAV: u32 = 32;
    /// Zero-argument `super` that forwards the current method's arguments.
    pub const ZSUPER: u32 = 64;
    /// Attribute assignment `a.b = v`: returns the assigned value.
    pub const ATTRASGN: u32 = 128;
    /// The keyword hash was built by the call site (`f(k: 1)`), so the callee may keep it.
    pub const KW_LITERAL: u32 = 256;
    /// `...` forwarding.
    pub const FORWARDING: u32 = 512;
    /// Call from `self.foo` (private setters allowed).
    pub const SELF_RECV: u32 = 1024;
    /// Keywords with literal Symbol keys (`f(a: 1, b: x)`), passed as their values after the
    /// positional arguments, one slot each, in the order of `CallInfo::kw_keys`. A callee
    /// with keyword parameters binds them without a Hash (`call::bind_args`); any other
    /// callee gets the Hash built from them (`ops::prepare_args`).
    pub const KW_ARGS: u32 = 2048;
}

/// Receiver classes one call site remembers (a polymorphic inline cache).
pub const PIC_SIZE: usize = 8;

/// Inline method cache of one call site: up to `PIC_SIZE` receiver classes and the entries
/// found for them, all valid for one method epoch. Entry 0 is the first class seen, so a
/// monomorphic site hits on the first compare; later classes take the other entries in
/// turn.
///
/// An `InvokeSuper` site keeps the methods its `super` found (`interp::ops::super_method`)
/// in the same entries, by receiver class, all found from the method `sym_mid` of the
/// owner `sym_klass` (raw) at that owner's occurrence `fast_pc` among the ancestors.
pub struct CallCache {
    pub epoch: Cell<u64>,
    /// Raw class values (0: empty entry).
    pub klass: [Cell<u64>; PIC_SIZE],
    /// The entry found for each class (null: none), each owning one strong count of its
    /// `Arc` (`Arc::into_raw`), given back when it is replaced, cleared or dropped. (One
    /// word per entry: a call site holds `PIC_SIZE` of them.)
    me: [Cell<*const MethodEntry>; PIC_SIZE],
    /// The entry the next new class replaces.
    pub next: Cell<u8>,
    /// For an attribute reader or writer: the instance variable's slot, as a `GetIvar`
    /// cache holds it (class, epoch and index).
    pub ivar: (Cell<u64>, Cell<u32>),
    /// A cached Ruby method the dispatch loop enters directly (`interp::ops::fast_target`):
    /// its receiver class (raw; 0: none) and entry (held by `me`). Valid while `epoch` is
    /// the VM's method epoch.
    pub fast_klass: Cell<u64>,
    pub fast_me: Cell<*const MethodEntry>,
    /// For a Ruby method at `fast_me`: the pc its frame starts at for this site's argument
    /// count (past the defaults of the optional parameters the site gives).
    pub fast_pc: Cell<u32>,
    /// For a builtin at `fast_me`: its `interp::leaf::Cond` as a byte, and its `LeafFn`.
    pub fast_leaf: Cell<u8>,
    pub leaf_fn: Cell<Option<crate::interp::leaf::LeafFn>>,
    /// For a call given `&:name` that runs as an iterator frame (`interp::iter`): the public
    /// Ruby method `name` last found on the elements' class `sym_klass` (raw; 0: none), held
    /// by `sym_keep`. For a `send`/`public_send` (which never takes that path: it has a
    /// positional argument), the entry of the method named `sym_mid` last sent to on
    /// `sym_klass`. Valid while `epoch` is the VM's method epoch.
    pub sym_klass: Cell<u64>,
    pub sym_mid: Cell<SymId>,
    pub sym_me: Cell<*const MethodEntry>,
    pub sym_keep: std::cell::RefCell<Option<Arc<MethodEntry>>>,
}

impl CallCache {
    /// Entry `i`, or None when empty.
    #[inline(always)]
    pub fn entry(&self, i: usize) -> Option<&MethodEntry> {
        // SAFETY: a non-null entry holds a strong count, so it lives while it is here; it is
        // only replaced by a later lookup at this call site (see `interp::ops::cache_hit`).
        unsafe { self.me[i].get().as_ref() }
    }

    /// Entry `i` as a new `Arc`.
    pub fn entry_arc(&self, i: usize) -> Option<Arc<MethodEntry>> {
        let p = self.me[i].get();
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` came from `Arc::into_raw` and holds a strong count (see `me`).
        unsafe {
            Arc::increment_strong_count(p);
            Some(Arc::from_raw(p))
        }
    }

    /// Makes `me` entry `i`, giving back the entry it replaces.
    fn set_entry(&self, i: usize, me: Option<Arc<MethodEntry>>) {
        let old = self.me[i].replace(me.map_or(std::ptr::null(), Arc::into_raw));
        if !old.is_null() {
            // SAFETY: `old` came from `Arc::into_raw` and owned one strong count.
            drop(unsafe { Arc::from_raw(old) });
        }
    }

    /// The entry index remembered for class `klass` (raw), if any.
    #[inline]
    pub fn position(&self, klass: u64) -> Option<usize> {
        self.klass.iter().position(|k| k.get() == klass)
    }

    /// Empties every entry and makes the cache belong to method epoch `epoch`.
    pub fn clear_entries(&self, epoch: u64) {
        for i in 0..PIC_SIZE {
            self.klass[i].set(0);
            self.set_entry(i, None);
        }
        self.next.set(0);
        self.epoch.set(epoch);
    }

    /// Remembers `me` for class `klass` (raw) in the next entry in turn; the class that
    /// entry held before (0: none).
    pub fn add_entry(&self, klass: u64, me: Option<Arc<MethodEntry>>) -> u64 {
        let i = self.next.get() as usize;
        self.next.set(((i + 1) % PIC_SIZE) as u8);
        let replaced = self.klass[i].replace(klass);
        self.set_entry(i, me);
        replaced
    }
}

impl Drop for CallCache {
    fn drop(&mut self) {
        self.clear_entries(0);
    }
}

impl Default for CallCache {
    fn default() -> Self {
        CallCache {
            epoch: Cell::new(u64::MAX),
            klass: Default::default(),
            me: Default::default(),
            next: Cell::new(0),
            ivar: Default::default(),
            fast_klass: Cell::new(0),
            fast_me: Cell::new(std::ptr::null()),
            fast_pc: Cell::new(0),
            fast_leaf: Cell::new(0),
            leaf_fn: Cell::new(None),
            sym_klass: Cell::new(0),
            sym_mid: Cell::new(SymId(0)),
            sym_me: Cell::new(std::ptr::null()),
            sym_keep: Default::default(),
        }
    }
}

pub struct CallInfo {
    pub mid: SymId,
    /// Positional arguments on the stack (a splat counts as one).
    pub argc: u32,
    pub flags: u32,
    /// Index into `children` of a literal block, or `u32::MAX`.
    pub block: u32,
    /// The keys of `KW_ARGS` keywords (distinct), in the order their values are pushed.
    pub kw_keys: Box<[SymId]>,
    pub cache: CallCache,
}

impl CallInfo {
    #[inline]
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Only plain positional arguments on the stack (no `&blk`, keywords, splat or `&.`):
    /// the shape the inline-cache fast paths handle.
    #[inline(always)]
    pub fn plain(&self) -> bool {
        self.flags & (call_flags::BLOCK_ARG | call_flags::KW_HASH | call_flags::KW_ARGS | call_flags::SPLAT | call_flags::SAFE_NAV) == 0
    }

    /// Stack slots the call's arguments occupy (not the receiver): positional arguments (a
    /// splat counts as one), the keyword Hash or `KW_ARGS` values, and a `&block` value.
    #[inline]
    pub fn arg_slots(&self) -> usize {
        self.argc as usize + self.has(call_flags::KW_HASH) as usize + self.kw_keys.len() + self.has(call_flags::BLOCK_ARG) as usize
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum CatchKind {
    /// Catches Ruby exceptions (and nothing else); the handler tests the classes itself.
    Rescue,
    /// Catches every unwind (exceptions, break, return, throw) and re-raises it at the end.
    Ensure,
}

#[derive(Copy, Clone, Debug)]
pub struct CatchEntry {
    pub kind: CatchKind,
    pub start: u32,
    pub end: u32,
    pub handler: u32,
    /// Operand stack depth (above the locals) to restore before jumping to the handler.
    pub depth: u32,
    /// Local that receives the exception (or the boxed unwind for ensure).
    pub local: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IseqKind {
    Top,
    Main,
    Method,
    Block,
    Class,
    Eval,
}

#[derive(Clone, Debug, Default)]
pub struct KwParam {
    pub name: SymId,
    pub required: bool,
}

/// Parameter layout of a method or block.
#[derive(Clone, Debug, Default)]
pub struct Params {
    pub lead: u32,
    pub opt: u32,
    /// Start pc for each number of optionals given (0..=opt).
    pub opt_pcs: Vec<u32>,
    pub rest: bool,
    /// `*` without a name (anonymous rest, forwarding it with `*`).
    pub post: u32,
    pub kw: Vec<KwParam>,
    pub kwrest: bool,
    /// `**nil`: keywords are rejected.
    pub no_kw: bool,
    pub block: bool,
    /// `...`: forward everything.
    pub forwarding: bool,
    /// Block with exactly one parameter and a trailing comma (`|a,|`) splats like two.
    pub trailing_comma: bool,
    /// Only required positionals: the fast calling path applies. Also with a `&block`
    /// parameter that is a `block_proxy`.
    pub simple: bool,
    /// The `&block` parameter is only ever passed on as `&blk` (`GetBlockParamProxy`): it is
    /// not bound to a Proc on entry, and its local stays nil.
    pub block_proxy: bool,
    /// Only required parameters (none destructured) and at least one optional one: a call
    /// with `lead..=lead + opt` arguments places them in locals and starts at `opt_pcs`,
    /// with no other binding (`ops::fast_target`).
    pub opt_simple: bool,
    /// The block uses `it` / `_1`: one implicit parameter.
    pub implicit_it: bool,
    /// `ruby2_keywords`: keywords bound into the rest parameter become a flagged Hash.
    pub ruby2_keywords: bool,
}

impl Params {
    pub fn kw_start(&self) -> u32 {
        self.lead + self.opt + self.rest as u32 + self.post
    }
    pub fn rest_index(&self) -> u32 {
        self.lead + self.opt
    }
    pub fn post_start(&self) -> u32 {
        self.lead + self.opt + self.rest as u32
    }
    pub fn kwrest_index(&self) -> u32 {
        self.kw_start() + self.kw.len() as u32
    }
    /// Required positionals and a `&block` parameter, nothing else.
    pub fn lead_and_block(&self) -> bool {
        self.block && self.opt == 0 && !self.rest && self.post == 0 && self.kw.is_empty() && !self.kwrest && !self.forwarding
    }
    pub fn block_index(&self) -> u32 {
        self.kwrest_index() + self.kwrest as u32
    }
    pub fn accepts_kw(&self) -> bool {
        !self.kw.is_empty() || self.kwrest
    }
    /// Required positionals and keyword parameters only (no optional, rest, post, `**`,
    /// block or `...` parameter), at least one keyword.
    pub fn kw_only(&self) -> bool {
        self.opt == 0 && !self.rest && self.post == 0 && !self.kw.is_empty() && !self.kwrest && !self.no_kw && !self.block && !self.forwarding
    }
    /// Positional arity: required count, and the maximum or `None` when unbounded.
    pub fn positional_range(&self) -> (u32, Option<u32>) {
        let min = self.lead + self.post;
        if self.rest || self.forwarding {
            (min, None)
        } else {
            (min, Some(min + self.opt))
        }
    }
}

pub struct Iseq {
    pub kind: IseqKind,
    /// The name used in backtraces ("foo", "block in foo", "<class:Foo>", "<main>").
    pub name: String,
    /// For method iseqs, the method name.
    pub method_name: Option<SymId>,
    pub path: Arc<str>,
    /// The canonical absolute path of the file the code was loaded from (symlinks
    /// resolved when it was loaded); None for eval'd code and `-e`.
    pub realpath: Option<Arc<str>>,
    pub first_line: u32,
    pub code: Vec<Insn>,
    /// Source line of each instruction (same length as `code`).
    pub lines: Vec<u32>,
    pub literals: Vec<Value>,
    pub calls: Vec<CallInfo>,
    pub children: Vec<Value>,
    pub catch_table: Vec<CatchEntry>,
    pub local_names: Vec<SymId>,
    pub params: Params,
    /// Locals live in a heap environment because a block or `binding` may capture them.
    pub locals_on_heap: bool,
    /// A method that takes `&block`/`...`, yields or calls super: a block passed to any
    /// other Ruby method "may be ignored" (Ruby 3.4's unused-block warning).
    pub uses_block: bool,
    /// `uses_block`, or the code calls `block_given?`/`iterator?` (which Ruby 3.4 does not
    /// count as using the block for the warning): a proc of such a block keeps the block of
    /// the scope it was written in (for `define_method` bodies).
    pub sees_block: bool,
    /// Maximum operand stack depth.
    pub stack_max: u32,
    /// Inline caches for instance variables: (class, index).
    pub ivar_caches: Vec<(Cell<u64>, Cell<u32>)>,
    /// Inline caches for constants: (epoch, value, cref the value was found from).
    pub const_caches: Vec<(Cell<u64>, Cell<Value>, Cell<Value>)>,
    /// Cached values for `once` regexps.
    pub once_caches: Vec<Cell<Value>>,
    /// Depth of lexical block nesting (0 for methods/top).
    pub block_depth: u32,
    /// `local_variables` of enclosing scopes, for eval/binding (outermost last).
    pub outer_local_names: Vec<Vec<SymId>>,
}

impl Iseq {
    pub fn line_at(&self, pc: usize) -> u32 {
        self.lines.get(pc).copied().or_else(|| self.lines.last().copied()).unwrap_or(self.first_line)
    }

    /// The line that starts at instruction `pc`, if one does: an instruction whose line
    /// differs from the previous instruction's (where TracePoint's `:line` fires and what
    /// Coverage counts).
    #[inline]
    pub fn line_start(&self, pc: usize) -> Option<u32> {
        let line = self.lines.get(pc).copied().filter(|&l| l != 0)?;
        (pc == 0 || self.lines[pc - 1] != line).then_some(line)
    }

    pub fn local_count(&self) -> usize {
        self.local_names.len()
    }
}

#[repr(C)]
pub struct RIseq {
    pub basic: RBasic,
    pub iseq: Box<Iseq>,
}

/// The iseq inside an `RIseq` value.
#[inline(always)]
pub fn iseq_of<'a>(v: Value) -> &'a Iseq {
    debug_assert!(crate::object::is_type(v, ObjType::Iseq));
    // SAFETY: v is an RIseq; its Box is never replaced while the object lives.
    unsafe { &(*v.as_ptr::<RIseq>()).iseq }
}

/// Marks a method or block iseq as `ruby2_keywords`: keywords it receives into its rest
/// parameter arrive as a flagged Hash, which a later `*args` splat passes on as keywords.
/// Returns false (and changes nothing) unless it takes `*rest` and no keywords.
pub fn set_ruby2_keywords(v: Value) -> bool {
    let p = &iseq_of(v).params;
    if !p.rest || p.accepts_kw() {
        return false;
    }
    // SAFETY: v is an RIseq; the flag is a plain bool read only when binding arguments,
    // and no reference to the params is held across this write.
    unsafe { (*v.as_ptr::<RIseq>()).iseq.params.ruby2_keywords = true };
    true
}

pub fn mark(v: Value, m: &mut Marker<'_>) {
    let iseq = iseq_of(v);
    m.mark_all(&iseq.literals);
    m.mark_all(&iseq.children);
    for (_, c, cref) in &iseq.const_caches {
        m.mark(c.get());
        m.mark(cref.get());
    }
    for c in &iseq.once_caches {
        m.mark(c.get());
    }
}

/// # Safety
/// `p` is a dead RIseq slot.
pub unsafe fn finalize(p: *mut RBasic) {
    std::ptr::drop_in_place(&mut (*(p as *mut RIseq)).iseq);
}

const _: () = assert!(std::mem::size_of::<Insn>() <= 16);

/// Text listing of an iseq and its children (`carmine --dump=insns`): one instruction per
/// line with its pc and source line; call sites show their method name and argument count.
pub fn disasm(ctx: &crate::thread::Ctx, iseq_val: Value) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut todo = vec![iseq_val];
    while let Some(v) = todo.pop() {
        let is = iseq_of(v);
        let locals: Vec<String> = is.local_names.iter().map(|&n| ctx.sym_str(n)).collect();
        let _ = writeln!(out, "== {} ({}:{}) locals: [{}]{}", is.name, is.path, is.first_line, locals.join(", "), if is.locals_on_heap { " (heap)" } else { "" });
        for (pc, insn) in is.code.iter().enumerate() {
            let _ = write!(out, "{pc:04} {:>5}  {insn:?}", is.line_at(pc));
            let ci = match *insn {
                Insn::Send(ci) | Insn::OptPlus(ci) | Insn::OptMinus(ci) | Insn::OptLt(ci) | Insn::OptLe(ci) | Insn::OptGt(ci) | Insn::OptGe(ci) | Insn::OptEq(ci) => Some(ci),
                _ => None,
            };
            if let Some(c) = ci.and_then(|c| is.calls.get(c as usize)) {
                let _ = write!(out, "  <{}, argc:{}, flags:{:#x}{}>", ctx.sym_str(c.mid), c.argc, c.flags, if c.block != u32::MAX { ", block" } else { "" });
            }
            out.push('\n');
        }
        for e in &is.catch_table {
            let _ = writeln!(out, "  catch {:?} {}..{} -> {} (depth {})", e.kind, e.start, e.end, e.handler, e.depth);
        }
        out.push('\n');
        todo.extend(is.children.iter().rev().copied().filter(|c| c.is_heap() && crate::object::basic(*c).obj_type() == ObjType::Iseq));
    }
    out
}
