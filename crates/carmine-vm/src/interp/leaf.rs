//! Leaf builtins: builtins a call site whose inline cache holds them calls without a builtin
//! frame or the arity check (`obj.nil?`, `str.getbyte(i)`, `ary.last`, `ary << x`, …;
//! `interp::ops::leaf_call`). A builtin call's frame and checks cost some 50 instructions of
//! the ~280 a cached builtin call took (`a.last`: 359 → 307 instructions per call).
//!
//! Invariants:
//! - A builtin is listed here only with a `Cond` under which it can neither raise nor run Ruby
//!   code (no conversion method, no `==`/`hash` of user objects, no block): then nothing can
//!   observe the frame it does not have (no backtrace, `caller`, `block_given?` or `super`
//!   sees the builtin). The call site checks the `Cond` on every call; when it fails, the
//!   general path runs with its frame.
//! - The site's argument count is checked against the `Cond` once, when the cache is filled
//!   (`cond`), so a `Cond` never meets an argument count its builtin does not take.
//! - The receiver's class is the cached one, so the builtin sees the object type it expects.
//! - Every leaf call goes through `call`: when builtins marked `ThreadSafety::Unsafe` come to
//!   take the giant lock, `call` is the one place the leaf path must take it too.

use crate::core::module::BuiltinFn;
use crate::interp::Args;
use crate::object::{basic, FL_FROZEN};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// What a leaf call needs of its receiver and arguments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Cond {
    /// Not a leaf: the general path.
    No = 0,
    /// Any receiver and arguments.
    Any,
    /// The one argument is a Fixnum.
    Fixnum,
    /// The one argument is a class or module.
    Module,
    /// The one argument is a Fixnum ≥ 0.
    FixnumNonNeg,
    /// The receiver is not frozen (it is changed in place).
    Mutable,
}

/// `Cond` for `f` called with `argc` positional arguments (and no block, keywords or splat).
pub fn cond(f: BuiltinFn, argc: usize) -> Cond {
    use crate::core::{array, float, hash, integer, nil_true_false as ntf, object, string_methods as s};
    let table: [(BuiltinFn, usize, Cond); 27] = [
        (object::obj_nil_p, 0, Cond::Any),
        (ntf::nil_nil_p, 0, Cond::Any),
        (object::obj_class, 0, Cond::Any),
        (object::obj_frozen_p, 0, Cond::Any),
        (object::basic_eq, 1, Cond::Any),
        (object::obj_is_a, 1, Cond::Module),
        (object::obj_instance_of, 1, Cond::Module),
        (s::length, 0, Cond::Any),
        (s::bytesize, 0, Cond::Any),
        (s::getbyte, 1, Cond::Fixnum),
        (array::first, 0, Cond::Any),
        (array::last, 0, Cond::Any),
        (array::lshift, 1, Cond::Mutable),
        (array::push_m, 1, Cond::Mutable),
        (array::pop, 0, Cond::Mutable),
        (array::shift, 0, Cond::Mutable),
        (integer::m_cmp, 1, Cond::Fixnum),
        (integer::m_xor, 1, Cond::Fixnum),
        (integer::m_rshift, 1, Cond::FixnumNonNeg),
        (integer::m_zero, 0, Cond::Any),
        (integer::m_even, 0, Cond::Any),
        (integer::m_odd, 0, Cond::Any),
        (integer::m_uminus, 0, Cond::Any),
        (integer::m_abs, 0, Cond::Any),
        (float::m_uminus, 0, Cond::Any),
        (float::m_abs, 0, Cond::Any),
        (hash::m_length, 0, Cond::Any),
    ];
    if let Some(writer) = crate::core::struct_::positional_accessor(f) {
        return match (writer, argc) {
            (false, 0) => Cond::Any,
            (true, 1) => Cond::Mutable,
            _ => Cond::No,
        };
    }
    table.iter().find(|(g, n, _)| std::ptr::fn_addr_eq(*g, f) && *n == argc).map_or(Cond::No, |e| e.2)
}

/// Whether a call with receiver `recv` and arguments `args` meets `c` (a `Cond` as a byte).
#[inline(always)]
pub fn allows(c: u8, recv: Value, args: &[Value]) -> bool {
    match c {
        x if x == Cond::Any as u8 => true,
        x if x == Cond::Fixnum as u8 => args[0].is_fixnum(),
        x if x == Cond::FixnumNonNeg as u8 => args[0].as_fixnum().is_some_and(|n| n >= 0),
        x if x == Cond::Module as u8 => crate::core::module::is_class_or_module(args[0]),
        x if x == Cond::Mutable as u8 => recv.is_heap() && basic(recv).flags & FL_FROZEN == 0,
        _ => false,
    }
}

/// Calls leaf builtin `f` (whose `Cond` `allows` this call) without a frame.
#[inline(always)]
pub fn call(ctx: &mut Ctx, f: BuiltinFn, recv: Value, args: &[Value]) -> Result<Value> {
    f(ctx, recv, &Args { pos: args, kw: None, block: None })
}
