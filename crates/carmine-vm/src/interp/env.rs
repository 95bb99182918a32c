//! Heap environments (captured locals) and crefs (lexical class scope).
//!
//! Invariants:
//! - An `REnv` holds the locals of one frame whose iseq has `locals_on_heap`; `outer` is
//!   the environment of the lexically enclosing scope (for blocks), or nil.
//! - A method-level env (outer nil) holds its scope's `$~`/`$_` in `svar`; see
//!   `interp::ops::svar_frame`.
//! - `vals` never changes length after creation, so a frame may keep a raw pointer into it
//!   while the frame keeps the env alive.
//! - An `RCref` links a class or module (the target of constant lookup and of `def`) to
//!   the enclosing cref; the top cref holds Object and has a nil parent.

use crate::heap::Marker;
use crate::object::{RBasic, FL_USER0, FL_USER1, FL_USER2};
use crate::value::Value;

#[repr(C)]
pub struct REnv {
    pub basic: RBasic,
    pub vals: Box<[Value]>,
    pub outer: Value,
    /// `$~`/`$_` of the method-level scope this env belongs to (nil or a 2-element
    /// Array): blocks reach it through `outer` even after the scope's frame returned.
    pub svar: Value,
}

#[repr(C)]
pub struct RCref {
    pub basic: RBasic,
    pub klass: Value,
    pub parent: Value,
    /// The refinements active in this scope (`using`), a flat Array `[refined class,
    /// refinement, …]` in activation order (later pairs win), or nil. Shared, never
    /// mutated: `using` makes a new cref with a new Array.
    pub refinements: Value,
}

/// Set on the env of a method-level frame (not a block's): where the scope's `$~`/`$_`
/// live, and where a block's walk out through `outer` for them stops.
pub const ENV_SCOPE_ROOT: u32 = FL_USER1;

/// Set on a cref made by `instance_eval`/`class_eval` with a block: constants still resolve
/// through the parent (the block's lexical scope) but `def` targets `klass`.
pub const CREF_EVAL: u32 = FL_USER0;

/// Set on the cref of `instance_eval(string)`: constants resolve in `klass` (the receiver's
/// class, or its singleton class when it has one, as in CRuby) but `def` defines into the
/// receiver's singleton class, made when first needed.
pub const CREF_SINGLETON: u32 = FL_USER2;

#[inline(always)]
pub fn env<'a>(v: Value) -> &'a mut REnv {
    // SAFETY: callers pass an REnv value.
    unsafe { &mut *v.as_ptr::<REnv>() }
}

#[inline(always)]
pub fn cref<'a>(v: Value) -> &'a mut RCref {
    // SAFETY: callers pass an RCref value.
    unsafe { &mut *v.as_ptr::<RCref>() }
}

pub fn mark_env(v: Value, m: &mut Marker<'_>) {
    let e = env(v);
    m.mark_all(&e.vals);
    m.mark(e.outer);
    m.mark(e.svar);
}

pub fn mark_cref(v: Value, m: &mut Marker<'_>) {
    let c = cref(v);
    m.mark(c.klass);
    m.mark(c.parent);
    m.mark(c.refinements);
}

/// # Safety
/// `p` is a dead REnv slot.
pub unsafe fn finalize_env(p: *mut RBasic) {
    std::ptr::drop_in_place(&mut (*(p as *mut REnv)).vals);
}

/// Walks `depth` environments out from `start`.
#[inline]
pub fn env_at_depth(start: Value, depth: u32) -> Value {
    let mut e = start;
    for _ in 1..depth {
        e = env(e).outer;
    }
    e
}
