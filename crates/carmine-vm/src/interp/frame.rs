//! Control frames and blocks.
//!
//! Invariants:
//! - A thread (or fiber) has one value stack and one frame stack. A Ruby frame's locals
//!   are `stack[bp .. bp + local_count]` unless its iseq keeps locals on the heap, in which
//!   case `locals` points into `env`'s storage. The operand stack starts at `sp_base`.
//! - `serial` is unique per frame activation in a thread: a frame is "the same" as a
//!   recorded (index, serial) pair iff `frames[index].serial == serial`.
//! - A `Captured` block is only valid while its home frame is live, except through the
//!   fields it copies (self, env, cref), which is what a Proc keeps.
//! - Builtin frames exist only for backtraces (and, flagged `FRAME_ITER`, to hold the state
//!   of an iterator the dispatch loop drives); they have a null iseq.

use crate::compile::iseq::Iseq;
use crate::core::module::Visibility;
use crate::symbol::SymId;
use crate::value::Value;

/// A block literal captured at a call site: what a Proc is made of.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct Captured {
    /// The block's `RIseq`.
    pub iseq: Value,
    pub self_: Value,
    /// Environment of the frame that created the block (its locals), or nil.
    pub env: Value,
    pub cref: Value,
    /// Serial of the frame that created the block (the target of `break`).
    pub home_serial: u64,
    pub home_index: u32,
    pub _pad: u32,
}

/// A frame's block, compactly: `v` is nil (no block), a block `RIseq` captured from the
/// frame at `home` (which must still be that frame: `serial` checks it), or a Proc.
#[derive(Copy, Clone, Debug)]
#[repr(C)]
pub struct BlockRef {
    pub v: Value,
    pub serial: u64,
    pub home: u32,
}

impl BlockRef {
    pub const NONE: BlockRef = BlockRef { v: Value::NIL, home: 0, serial: 0 };

    #[inline]
    pub fn is_some(&self) -> bool {
        !self.v.is_nil()
    }

    #[inline]
    pub fn from_block(b: Option<Block>) -> BlockRef {
        match b {
            None => BlockRef::NONE,
            Some(Block::Proc(p)) => BlockRef { v: p, home: 0, serial: 0 },
            Some(Block::Captured(c)) => BlockRef { v: c.iseq, home: c.home_index, serial: c.home_serial },
        }
    }

    /// The block, rebuilt from its home frame.
    #[inline]
    pub fn get(&self, frames: &[Frame]) -> Option<Block> {
        if self.v.is_nil() {
            return None;
        }
        if crate::core::proc::is_proc(self.v) {
            return Some(Block::Proc(self.v));
        }
        let h = frames.get(self.home as usize).filter(|h| h.serial == self.serial)?;
        Some(Block::Captured(Captured { iseq: self.v, self_: h.self_, env: h.env, cref: h.cref, home_serial: h.serial, home_index: self.home, _pad: 0 }))
    }
}

/// The block given to a call.
#[derive(Copy, Clone, Debug)]
pub enum Block {
    Captured(Captured),
    /// A Proc object (from `&blk`, `proc`, `method(:m).to_proc`, `:sym.to_proc` …).
    Proc(Value),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameKind {
    Top,
    Method,
    Block,
    Lambda,
    Class,
    Eval,
    Builtin,
}

/// Frame flag: returning from this frame returns from the dispatch loop to Rust.
pub const FRAME_FINISH: u8 = 1;
/// The frame runs a `define_method` body (return acts as method return).
pub const FRAME_BMETHOD: u8 = 2;
/// The frame runs `initialize` for an inlined `Class#new`: leaving it yields the new object
/// (its self) instead of `initialize`'s result.
pub const FRAME_CTOR: u8 = 4;
/// A builtin frame that the dispatch loop drives (`interp::iter`): a block frame leaving
/// into it steps the iteration.
pub const FRAME_ITER: u8 = 8;
/// A block frame of an iterator frame, with its locals on the value stack: when it leaves
/// and the iteration goes on, the loop restarts it in place (`iter::restart`).
pub const FRAME_ITER_BLOCK: u8 = 16;
/// With `FRAME_ITER`: the iterator is `Kernel#loop` (no argument, ends at `StopIteration`).
pub const FRAME_ITER_LOOP: u8 = 32;
/// With `FRAME_ITER`: the iterator is `Array#each` (passes the elements of its self, until
/// past the array's current length).
pub const FRAME_ITER_EACH: u8 = 64;
/// With `FRAME_ITER`: the block is a Symbol (`each(&:name)`, the Symbol in `iseq_val`): each
/// iteration calls that method on the iteration's argument (`iter::push_iteration`).
pub const FRAME_ITER_SYM: u8 = 128;

/// A frame. The fields are in the order of what a call sets (first, as `push_frame_as`
/// stores them) and of what it leaves at its empty value: nil (`env`, `outer`, `svar`,
/// `block.v`), then zero (`block`'s home, `home_serial`, `owner_skip`, `home_index`), so
/// that the empty ones are stored a few words at a time.
#[repr(C)]
pub struct Frame {
    pub iseq: *const Iseq,
    pub pc: usize,
    /// Stack index of local 0 (also of the first argument).
    pub bp: usize,
    pub sp_base: usize,
    /// Stack index where the result goes when this frame returns (the receiver's slot).
    pub ret_sp: usize,
    pub locals: *mut Value,
    pub self_: Value,
    pub cref: Value,
    pub iseq_val: Value,
    /// The class or module that owns the running method (for `super`), or nil.
    pub owner: Value,
    /// Unique per frame activation in a thread (see the module comment).
    pub serial: u64,
    pub mid: Option<SymId>,
    pub kind: FrameKind,
    pub flags: u8,
    /// Default visibility for `def` in this (class body) frame.
    pub visibility: Visibility,
    /// This frame's own heap environment, or nil.
    pub env: Value,
    /// For blocks: the captured environment of the enclosing scope.
    pub outer: Value,
    /// `$~` and `$_` of this method-level frame: nil until first set, then a 2-element Array.
    pub svar: Value,
    /// The block given to this method (method frames), or the home's block (block frames).
    pub block: BlockRef,
    /// For block frames: the frame the block was created in.
    pub home_serial: u64,
    /// Which occurrence of `owner` in the receiver's ancestors the method was found at
    /// (0 = the first): a module prepended both to a class and to its superclass appears
    /// twice, and `super` must go on from the right one.
    pub owner_skip: u32,
    pub home_index: u32,
}

impl Frame {
    /// Every field empty: what `push_frame` starts a frame from.
    pub const BLANK: Frame = Frame {
        iseq: std::ptr::null(),
        pc: 0,
        bp: 0,
        sp_base: 0,
        ret_sp: 0,
        locals: std::ptr::null_mut(),
        self_: Value::NIL,
        cref: Value::NIL,
        iseq_val: Value::NIL,
        owner: Value::NIL,
        serial: 0,
        mid: None,
        kind: FrameKind::Builtin,
        flags: 0,
        visibility: Visibility::Public,
        env: Value::NIL,
        outer: Value::NIL,
        svar: Value::NIL,
        block: BlockRef::NONE,
        home_serial: 0,
        owner_skip: 0,
        home_index: 0,
    };

    #[inline(always)]
    pub fn iseq(&self) -> &Iseq {
        // SAFETY: Ruby frames keep `iseq_val` (their RIseq) alive and non-null.
        unsafe { &*self.iseq }
    }

    #[inline(always)]
    pub fn is_ruby(&self) -> bool {
        !self.iseq.is_null()
    }

    /// The frame's block.
    #[inline]
    pub fn block(&self, frames: &[Frame]) -> Option<Block> {
        self.block.get(frames)
    }

    pub fn line(&self) -> u32 {
        if self.is_ruby() {
            self.iseq().line_at(self.pc.saturating_sub(1))
        } else {
            0
        }
    }
}

/// What a block frame takes over from its home frame (the method frame that made the
/// block): the method's owner and `owner_skip` (for `super`), its name (`__method__`) and
/// its block (`yield` inside the block). Nothing when the home frame has returned.
#[derive(Copy, Clone)]
pub struct HomeMethod {
    pub owner: Value,
    pub owner_skip: u32,
    pub mid: Option<SymId>,
    pub block: BlockRef,
}

impl HomeMethod {
    pub const NONE: HomeMethod = HomeMethod { owner: Value::NIL, owner_skip: 0, mid: None, block: BlockRef::NONE };

    /// The method of `home`, already known to be the block's live home frame.
    #[inline(always)]
    pub fn of(home: &Frame) -> HomeMethod {
        HomeMethod { owner: home.owner, owner_skip: home.owner_skip, mid: home.mid, block: home.block }
    }

    /// The method of `h` if it is still the frame numbered `serial` (the block's home).
    #[inline(always)]
    pub fn of_serial(h: &Frame, serial: u64) -> HomeMethod {
        if h.serial == serial { HomeMethod::of(h) } else { HomeMethod::NONE }
    }

    /// The method of `cap`'s home frame, if that frame is still on `frames`.
    #[inline(always)]
    pub fn find(frames: &[Frame], cap: &Captured) -> HomeMethod {
        frames.get(cap.home_index as usize).map_or(HomeMethod::NONE, |h| HomeMethod::of_serial(h, cap.home_serial))
    }
}

// The dispatch loop pops a frame by shortening the frame stack (`exec`'s `Leave`).
const _: () = assert!(!std::mem::needs_drop::<Frame>());

/// Index of `$~` in a frame's `svar`.
pub const SVAR_LAST_MATCH: usize = 0;
/// Index of `$_` in a frame's `svar`.
pub const SVAR_LAST_LINE: usize = 1;
