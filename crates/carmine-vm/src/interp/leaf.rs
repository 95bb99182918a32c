//! Leaf builtins: builtins a call site whose inline cache holds them calls without a builtin
//! frame or the arity check (`obj.nil?`, `str.getbyte(i)`, `ary.last`, `ary << x`, …;
//! `interp::ops::leaf_call`). A builtin call's frame and checks cost some 50 instructions of
//! the ~280 a cached builtin call took (`a.last`: 359 → 307 instructions per call). The call
//! runs the builtin's `LeafFn`: what the builtin computes once its `Cond` holds, on the
//! argument slice and without a `Result` (no `Args` built, no error to pass back).
//!
//! Invariants:
//! - A builtin is listed here only with a `Cond` under which it can neither raise nor run Ruby
//!   code (no conversion method, no `==`/`hash` of user objects, no block): then nothing can
//!   observe the frame it does not have (no backtrace, `caller`, `block_given?` or `super`
//!   sees the builtin). The call site checks the `Cond` on every call; when it fails, the
//!   general path runs with its frame.
//! - The site's argument count is checked against the `Cond` once, when the cache is filled
//!   (`lookup`), so a `Cond` never meets an argument count its builtin does not take.
//! - The receiver's class is the cached one, so the builtin sees the object type it expects.
//! - A `LeafFn` computes what its builtin returns for every call its `Cond` allows, through
//!   the same helpers (`array::pop_item`, `string_methods::byte_at`, …), or declines by
//!   returning `Value::UNDEF` before it has changed anything (`str << other` with
//!   incompatible encodings): then the general path runs, and raises.
//! - Every leaf call goes through `call`: when builtins marked `ThreadSafety::Unsafe` come to
//!   take the giant lock, `call` is the one place the leaf path must take it too.

use crate::core::module::BuiltinFn;
use crate::object::{basic, FL_CHILLED, FL_FROZEN};
use crate::thread::Ctx;
use crate::value::Value;

/// A leaf builtin as the leaf call runs it: receiver and positional arguments, which meet
/// its `Cond`, in; the result out.
pub type LeafFn = fn(&mut Ctx, Value, &[Value]) -> Value;

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
    /// The receiver and the one argument are Fixnums.
    Fixnums,
    /// The receiver and the one argument are Fixnums, the argument ≥ 0.
    FixnumsNonNeg,
    /// The receiver is not frozen (it is changed in place).
    Mutable,
    /// The one argument is a String (its builtin declines when the encodings are not
    /// compatible).
    Str,
    /// `Str`, and the receiver neither frozen nor chilled (a chilled literal warns when
    /// changed).
    MutableStr,
}

/// The `Cond` and `LeafFn` of `f` called with `argc` positional arguments (and no block,
/// keywords or splat), when it is a leaf builtin.
pub fn lookup(f: BuiltinFn, argc: usize) -> Option<(Cond, LeafFn)> {
    use crate::core::{array, float, hash, integer, nil_true_false as ntf, object, string, string_methods as s};
    let table: [(BuiltinFn, usize, Cond, LeafFn); 29] = [
        (object::obj_nil_p, 0, Cond::Any, |_, r, _| Value::bool(r.is_nil())),
        (ntf::nil_nil_p, 0, Cond::Any, |_, _, _| Value::TRUE),
        (object::obj_class, 0, Cond::Any, |ctx, r, _| object::real_class_of(ctx, r)),
        (object::obj_frozen_p, 0, Cond::Any, |_, r, _| Value::bool(object::is_frozen(r))),
        (object::basic_eq, 1, Cond::Any, |_, r, a| Value::bool(r == a[0])),
        (object::obj_is_a, 1, Cond::Module, |ctx, r, a| Value::bool(object::is_a(ctx, r, a[0]))),
        (object::obj_instance_of, 1, Cond::Module, |ctx, r, a| Value::bool(object::real_class_of(ctx, r) == a[0])),
        (s::length, 0, Cond::Any, |_, r, _| Value::fixnum(string::char_length(r) as i64)),
        (s::bytesize, 0, Cond::Any, |_, r, _| Value::fixnum(string::len(r) as i64)),
        (s::getbyte, 1, Cond::Fixnum, |_, r, a| s::byte_at(r, a[0].fixnum_unchecked())),
        (s::lshift, 1, Cond::MutableStr, str_append),
        (s::plus, 1, Cond::Str, str_plus),
        (array::first, 0, Cond::Any, |_, r, _| array::get(r, 0)),
        (array::last, 0, Cond::Any, |_, r, _| array::last_item(r)),
        (array::lshift, 1, Cond::Mutable, push),
        (array::push_m, 1, Cond::Mutable, push),
        (array::pop, 0, Cond::Mutable, |_, r, _| array::pop_item(r)),
        (array::shift, 0, Cond::Mutable, |_, r, _| array::shift_item(r)),
        (integer::m_cmp, 1, Cond::Fixnums, |_, r, a| Value::fixnum(r.fixnum_unchecked().cmp(&a[0].fixnum_unchecked()) as i64)),
        (integer::m_xor, 1, Cond::Fixnums, |_, r, a| Value::fixnum(r.fixnum_unchecked() ^ a[0].fixnum_unchecked())),
        (integer::m_rshift, 1, Cond::FixnumsNonNeg, |_, r, a| Value::fixnum(r.fixnum_unchecked() >> a[0].fixnum_unchecked().min(63))),
        (integer::m_zero, 0, Cond::Any, |_, r, _| Value::bool(r == Value::fixnum(0))),
        (integer::m_even, 0, Cond::Any, |_, r, _| Value::bool(integer::is_even(r))),
        (integer::m_odd, 0, Cond::Any, |_, r, _| Value::bool(!integer::is_even(r))),
        (integer::m_uminus, 0, Cond::Any, |ctx, r, _| integer::negate_integer(ctx, r)),
        (integer::m_abs, 0, Cond::Any, |ctx, r, _| integer::abs_integer(ctx, r)),
        (float::m_uminus, 0, Cond::Any, |ctx, r, _| float::new(ctx, -float::get(r))),
        (float::m_abs, 0, Cond::Any, |ctx, r, _| float::new(ctx, float::get(r).abs())),
        (hash::m_length, 0, Cond::Any, |_, r, _| Value::fixnum(hash::len(r) as i64)),
    ];
    if let Some((writer, leaf)) = crate::core::struct_::positional_accessor(f) {
        return match (writer, argc) {
            (false, 0) => Some((Cond::Any, leaf)),
            (true, 1) => Some((Cond::Mutable, leaf)),
            _ => None,
        };
    }
    table.iter().find(|e| std::ptr::fn_addr_eq(e.0, f) && e.1 == argc).map(|e| (e.2, e.3))
}

/// `ary << x`, `ary.push(x)`.
fn push(ctx: &mut Ctx, recv: Value, args: &[Value]) -> Value {
    crate::core::array::push(ctx, recv, args[0]);
    recv
}

/// `str << other` (`Cond::MutableStr`); declines on incompatible encodings (the error).
fn str_append(_ctx: &mut Ctx, recv: Value, args: &[Value]) -> Value {
    if crate::core::string::try_append_str(recv, args[0]) {
        recv
    } else {
        Value::UNDEF
    }
}

/// `str + other` (`Cond::Str`); declines on incompatible encodings.
fn str_plus(ctx: &mut Ctx, recv: Value, args: &[Value]) -> Value {
    match crate::core::string::compatible(recv, args[0]) {
        Some(enc) => crate::core::string_methods::joined(ctx, recv, args[0], enc),
        None => Value::UNDEF,
    }
}

/// Whether a call with receiver `recv` and arguments `args` meets `c` (a `Cond` as a byte).
#[inline(always)]
pub fn allows(c: u8, recv: Value, args: &[Value]) -> bool {
    match c {
        x if x == Cond::Any as u8 => true,
        x if x == Cond::Fixnum as u8 => args[0].is_fixnum(),
        x if x == Cond::Module as u8 => crate::core::module::is_class_or_module(args[0]),
        x if x == Cond::Fixnums as u8 => recv.is_fixnum() && args[0].is_fixnum(),
        x if x == Cond::FixnumsNonNeg as u8 => recv.is_fixnum() && args[0].as_fixnum().is_some_and(|n| n >= 0),
        x if x == Cond::Mutable as u8 => recv.is_heap() && basic(recv).flags & FL_FROZEN == 0,
        x if x == Cond::Str as u8 => crate::core::string::is_string(args[0]),
        x if x == Cond::MutableStr as u8 => recv.is_heap() && basic(recv).flags & (FL_FROZEN | FL_CHILLED) == 0 && crate::core::string::is_string(args[0]),
        _ => false,
    }
}

/// Calls leaf builtin `f` (whose `Cond` `allows` this call) without a frame.
#[inline(always)]
pub fn call(ctx: &mut Ctx, f: LeafFn, recv: Value, args: &[Value]) -> Value {
    f(ctx, recv, args)
}
