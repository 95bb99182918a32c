//! The interpreter: frames, the dispatch loop, calls, blocks and unwinding.
//!
//! Ruby-to-Ruby calls push a frame and stay in the same `exec::run` loop; the native stack
//! grows only when Rust calls back into Ruby (a builtin yielding, `method_missing` from
//! Rust, …). This module holds the Rust-facing API for such calls.

pub mod borrowed;
pub mod call;
pub mod env;
pub mod exec;
pub mod frame;
pub mod iter;
pub mod leaf;
pub mod ops;

use crate::core::module::{self, MethodBody};
use crate::object::basic;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
pub use frame::{Block, Captured};

/// Arguments passed to a builtin method.
pub struct Args<'a> {
    pub pos: &'a [Value],
    /// Keywords, for builtins registered as accepting them (otherwise they arrive as a
    /// trailing positional Hash).
    pub kw: Option<Value>,
    pub block: Option<Block>,
}

impl<'a> Args<'a> {
    pub fn new(pos: &'a [Value]) -> Args<'a> {
        Args { pos, kw: None, block: None }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    /// Positional argument `i`, or `UNDEF` when absent (for optional parameters).
    #[inline]
    pub fn get(&self, i: usize) -> Value {
        self.pos.get(i).copied().unwrap_or(Value::UNDEF)
    }

    /// Positional argument `i` or nil.
    #[inline]
    pub fn get_or_nil(&self, i: usize) -> Value {
        self.pos.get(i).copied().unwrap_or(Value::NIL)
    }

    /// The block, or `LocalJumpError: no block given (yield)`.
    pub fn need_block(&self, ctx: &mut Ctx) -> Result<Block> {
        match self.block {
            Some(b) => Ok(b),
            None => Err(ctx.local_jump_error("no block given (yield)", crate::symbol::sym::NOT, Value::NIL)),
        }
    }

    /// Keyword argument `name`, if given.
    pub fn kwarg(&self, ctx: &mut Ctx, name: &str) -> Option<Value> {
        let kw = self.kw?;
        let key = Value::symbol(ctx.intern(name));
        crate::core::hash::get(kw, key)
    }
}

/// The class used for method lookup on `v` (its singleton class if it has one).
#[inline(always)]
pub fn class_of(ctx: &Ctx, v: Value) -> Value {
    if v.is_heap() {
        return basic(v).klass;
    }
    let c = ctx.c();
    if v.is_fixnum() {
        c.integer
    } else if v.is_flonum() {
        c.float
    } else if v.is_symbol() {
        c.symbol
    } else if v == Value::NIL {
        c.nil
    } else if v == Value::TRUE {
        c.true_
    } else {
        c.false_
    }
}

impl Ctx {
    /// Calls `recv.mid(*args)` ignoring visibility (like `rb_funcall`).
    pub fn call(&mut self, recv: Value, mid: SymId, args: &[Value]) -> Result<Value> {
        call::call_method(self, recv, mid, args, None, None, true)
    }

    pub fn call_with_block(&mut self, recv: Value, mid: SymId, args: &[Value], block: Option<Block>) -> Result<Value> {
        call::call_method(self, recv, mid, args, None, block, true)
    }

    pub fn call_kw(&mut self, recv: Value, mid: SymId, args: &[Value], kw: Option<Value>, block: Option<Block>) -> Result<Value> {
        call::call_method(self, recv, mid, args, kw, block, true)
    }

    /// `recv.public_send(mid, *args)`: private methods raise NoMethodError.
    pub fn call_public(&mut self, recv: Value, mid: SymId, args: &[Value], kw: Option<Value>, block: Option<Block>) -> Result<Value> {
        call::call_method(self, recv, mid, args, kw, block, false)
    }

    /// Calls by name (for builtins written against Ruby names).
    pub fn call_str(&mut self, recv: Value, name: &str, args: &[Value]) -> Result<Value> {
        let mid = self.intern(name);
        self.call(recv, mid, args)
    }

    /// Yields `args` to `block` (proc semantics unless the block is a lambda).
    pub fn yield_block(&mut self, block: &Block, args: &[Value]) -> Result<Value> {
        call::call_block(self, block, args, None, None, None)
    }

    /// Yields a single value.
    #[inline]
    pub fn yield1(&mut self, block: &Block, v: Value) -> Result<Value> {
        call::call_block(self, block, std::slice::from_ref(&v), None, None, None)
    }

    /// Calls a Proc object with arguments and an optional block.
    pub fn call_proc(&mut self, proc_: Value, args: &[Value], block: Option<Block>) -> Result<Value> {
        call::call_block(self, &Block::Proc(proc_), args, None, block, None)
    }

    /// Runs `block` with `self` replaced (instance_eval/instance_exec/class_eval).
    pub fn yield_with_self(&mut self, block: &Block, self_: Value, args: &[Value], cref_class: Option<Value>) -> Result<Value> {
        call::call_block(self, block, args, None, None, Some((self_, cref_class)))
    }

    /// Whether `recv` has a method `mid` (public only unless `include_private`).
    pub fn respond_to(&mut self, recv: Value, mid: SymId, include_private: bool) -> bool {
        let klass = class_of(self, recv);
        match module::find_method(self, klass, mid) {
            Some(me) => include_private || me.visibility != module::Visibility::Private,
            None => false,
        }
    }

    /// Like `respond_to`, but honours a user-defined `respond_to?`.
    pub fn respond_to_dynamic(&mut self, recv: Value, mid: SymId) -> Result<bool> {
        let klass = class_of(self, recv);
        let rt = module::find_method(self, klass, crate::symbol::sym::RESPOND_TO);
        if let Some(me) = rt {
            if !matches!(me.body, MethodBody::Builtin { .. }) {
                let r = self.call(recv, crate::symbol::sym::RESPOND_TO, &[Value::symbol(mid), Value::TRUE])?;
                return Ok(r.truthy());
            }
        }
        if self.respond_to(recv, mid, false) {
            return Ok(true);
        }
        let rtm = module::find_method(self, klass, crate::symbol::sym::RESPOND_TO_MISSING);
        if let Some(me) = rtm {
            if !matches!(me.body, MethodBody::Builtin { .. }) {
                let r = self.call(recv, crate::symbol::sym::RESPOND_TO_MISSING, &[Value::symbol(mid), Value::FALSE])?;
                return Ok(r.truthy());
            }
        }
        Ok(false)
    }

    /// Calls `recv.mid` if it responds to it (including private), else returns `None`.
    pub fn call_if_responds(&mut self, recv: Value, mid: SymId, args: &[Value]) -> Result<Option<Value>> {
        if self.respond_to(recv, mid, true) {
            Ok(Some(self.call(recv, mid, args)?))
        } else {
            Ok(None)
        }
    }
}
