//! Enumerator::Chain (`Enumerable#chain`, `Enumerator#+`): iterates its enumerables one
//! after the other.
//!
//! Invariants:
//! - A chain is an Enumerator whose native generator has the state Array
//!   `[enums, last]`: the (frozen) Array of enumerables and the index of the last one
//!   whose `each` was called (-1 before any), which `rewind` walks back over.
//! - `Enumerator::Chain.allocate` is uninitialized until `initialize` sets the payload.

use crate::core::enumerator::{self, EnumObj, NativeGen, SizeFn};
use crate::core::{array, float, object, string};
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The chain's state Array, or None for an uninitialized chain.
fn state(v: Value) -> Option<Value> {
    let e = data_ref::<EnumObj>(v)?;
    data_ref::<NativeGen>(e.generator).map(|g| g.state)
}

fn state_or_raise(ctx: &mut Ctx, v: Value) -> Result<Value> {
    state(v).ok_or_else(|| ctx.arg_error("uninitialized chain"))
}

/// Gives `chain` (allocated, maybe uninitialized) the enumerables `enums` (an Array).
fn set_enums(ctx: &mut Ctx, chain: Value, enums: Value) {
    object::freeze(enums);
    let st = array::from_slice(ctx, &[enums, Value::fixnum(-1)]);
    let gk = ctx.c().generator;
    let gen = object::new_data(ctx, gk, Box::new(NativeGen { state: st, f: run_state }));
    let empty = array::new(ctx);
    crate::object::set_data(chain, Box::new(EnumObj { recv: chain, meth: sym::EACH, args: empty, kw: Value::NIL, size: SizeFn::Native(size_of_chain), generator: gen, cursor: Value::NIL }));
}

/// A new chain of the enumerables in the Array `enums`.
pub fn new(ctx: &mut Ctx, enums: Value) -> Result<Value> {
    let klass = ctx.c().chain;
    let chain = crate::object::alloc_uninitialized(ctx, klass)?;
    let enums = array::dup(ctx, enums);
    set_enums(ctx, chain, enums);
    Ok(chain)
}

/// Calls `each(*args)` of each enumerable in turn with `block`.
fn iterate(ctx: &mut Ctx, st: Value, args: &[Value], block: &Block) -> Result<()> {
    let enums = array::get(st, 0);
    for i in 0..array::len(enums) {
        array::set(st, 1, Value::fixnum(i as i64));
        ctx.call_with_block(array::get(enums, i), sym::EACH, args, Some(*block))?;
    }
    Ok(())
}

/// The native generator's step (`Enumerator#next`, `with_index` … on a chain).
fn run_state(ctx: &mut Ctx, st: Value, block: &Block) -> Result<Value> {
    iterate(ctx, st, &[], block)?;
    Ok(Value::NIL)
}

fn size_of_chain(ctx: &mut Ctx, chain: Value, _args: Value) -> Result<Value> {
    ctx.call(chain, sym::SIZE, &[])
}

fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let enums = array::from_slice(ctx, args.pos);
    set_enums(ctx, recv, enums);
    Ok(recv)
}

fn m_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if other == recv {
        return Ok(recv);
    }
    ctx.check_frozen(recv)?;
    if object::real_class_of(ctx, other) != object::real_class_of(ctx, recv) {
        return Err(ctx.type_error("initialize_copy should take same class object"));
    }
    let st = state_or_raise(ctx, other)?;
    let enums = array::dup(ctx, array::get(st, 0));
    set_enums(ctx, recv, enums);
    Ok(recv)
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let st = state_or_raise(ctx, recv)?;
    let Some(b) = args.block else {
        return enumerator::enum_for_sized(ctx, recv, "each", args.pos, SizeFn::Native(size_of_chain));
    };
    iterate(ctx, st, args.pos, &b)?;
    Ok(recv)
}

/// The sum of the sizes; the first size that is nil or not finite is the answer.
fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let enums = array::get(state_or_raise(ctx, recv)?, 0);
    let mut total = Value::fixnum(0);
    for i in 0..array::len(enums) {
        let s = ctx.call(array::get(enums, i), sym::SIZE, &[])?;
        if s.is_nil() || (float::is_float(s) && !float::get(s).is_finite()) {
            return Ok(s);
        }
        total = ctx.call(total, sym::PLUS, &[s])?;
    }
    Ok(total)
}

/// Rewinds the enumerables iterated so far, last first.
fn m_rewind(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = state_or_raise(ctx, recv)?;
    let enums = array::get(st, 0);
    let rewind = ctx.intern("rewind");
    while let Some(i) = array::get(st, 1).as_fixnum().filter(|&i| i >= 0) {
        let e = array::get(enums, i as usize);
        if ctx.respond_to(e, rewind, true) {
            ctx.call(e, rewind, &[])?;
        }
        array::set(st, 1, Value::fixnum(i - 1));
    }
    Ok(recv)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let Some(st) = state(recv) else {
        return Ok(string::new_utf8(ctx, &format!("#<{cname}: uninitialized>")));
    };
    let shown = object::guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let s = array::inspect_array(ctx, array::get(st, 0))?;
        Ok(Some(string::to_rust_string_lossy(s)))
    })?;
    let text = match shown {
        Some(s) => format!("#<{cname}: {s}>"),
        None => format!("#<{cname}: ...>"),
    };
    Ok(string::new_utf8(ctx, &text))
}

/// `Enumerable#chain(*enums)`.
fn e_chain(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enums = array::from_slice(ctx, &[recv]);
    for &a in args.pos {
        array::push(ctx, enums, a);
    }
    new(ctx, enums)
}

/// `Enumerator#+(enum)`.
fn e_plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enums = array::from_slice(ctx, &[recv, args.pos[0]]);
    new(ctx, enums)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().chain;
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, c, [
        ("initialize", m_initialize, [0..], Safe, Private),
        ("initialize_copy", m_initialize_copy, [1], Safe, Private),
        ("each", m_each, [0..], Safe),
        ("size", m_size, [0], Safe),
        ("rewind", m_rewind, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_s", m_inspect, [0], Safe),
    ]);
    // External iteration is not offered on chains, as in CRuby.
    for name in ["feed", "next_values", "next", "peek_values", "peek"] {
        let id = ctx.intern(name);
        let _ = crate::core::module_methods::undef_method(ctx, c, id);
    }
    let enumerable = ctx.c().enumerable;
    crate::methods!(ctx, enumerable, [("chain", e_chain, [0..], Safe)]);
    let enumerator = ctx.c().enumerator;
    crate::methods!(ctx, enumerator, [("+", e_plus, [1], Safe)]);
}
