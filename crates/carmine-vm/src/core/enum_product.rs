//! Enumerator::Product (`Enumerator.product`): the Cartesian product of enumerables,
//! iterated with their `each_entry`, the last one fastest.
//!
//! Invariants:
//! - A product is an Enumerator whose native generator has the state Array `[enums]`
//!   (the frozen Array of enumerables); `Enumerator::Product.allocate` is uninitialized
//!   until `initialize` sets the payload.
//! - An inner enumerable is iterated again for each combination of the outer ones, so a
//!   consuming one yields only for the first.

use crate::core::enumerator::{self, EnumObj, NativeGen, SizeFn};
use crate::core::{array, float, hash, integer, object, string};
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn product_class(ctx: &mut Ctx) -> Value {
    let e = ctx.c().enumerator;
    let id = ctx.intern("Product");
    crate::core::module::body(e).const_get(id).map_or(Value::NIL, |c| c.value)
}

/// The Array of enumerables, or None for an uninitialized product.
fn enums_of(v: Value) -> Option<Value> {
    let e = data_ref::<EnumObj>(v)?;
    data_ref::<NativeGen>(e.generator).map(|g| array::get(g.state, 0))
}

fn enums_or_raise(ctx: &mut Ctx, v: Value) -> Result<Value> {
    enums_of(v).ok_or_else(|| ctx.arg_error("uninitialized product"))
}

fn set_enums(ctx: &mut Ctx, product: Value, enums: Value) {
    object::freeze(enums);
    let st = array::from_slice(ctx, &[enums]);
    let gk = ctx.c().generator;
    let gen = object::new_data(ctx, gk, Box::new(NativeGen { state: st, f: run_state }));
    let empty = array::new(ctx);
    crate::object::set_data(product, Box::new(EnumObj { recv: product, meth: sym::EACH, args: empty, kw: Value::NIL, size: SizeFn::Native(size_of_product), generator: gen, cursor: Value::NIL }));
}

/// Yields every combination that extends `prefix` (the elements chosen from the first
/// `prefix.len()` enumerables) to `block`.
fn iterate(ctx: &mut Ctx, enums: Value, prefix: Value, block: &Block) -> Result<()> {
    let depth = array::len(prefix);
    if depth == array::len(enums) {
        let combination = array::dup(ctx, prefix);
        ctx.yield1(block, combination)?;
        return Ok(());
    }
    let each_entry = ctx.intern("each_entry");
    crate::core::proc::with_native_block(
        ctx,
        &mut |ctx, vals| {
            let v = crate::core::enumerable::pack(ctx, vals);
            let next = array::dup(ctx, prefix);
            array::push(ctx, next, v);
            iterate(ctx, enums, next, block)?;
            Ok(Value::NIL)
        },
        |ctx, blk| ctx.call_with_block(array::get(enums, depth), each_entry, &[], Some(blk)),
    )?;
    Ok(())
}

fn run_state(ctx: &mut Ctx, st: Value, block: &Block) -> Result<Value> {
    let prefix = array::new(ctx);
    iterate(ctx, array::get(st, 0), prefix, block)?;
    Ok(Value::NIL)
}

fn size_of_product(ctx: &mut Ctx, product: Value, _args: Value) -> Result<Value> {
    ctx.call(product, sym::SIZE, &[])
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
    let enums = enums_or_raise(ctx, other)?;
    let enums = array::dup(ctx, enums);
    set_enums(ctx, recv, enums);
    Ok(recv)
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enums = enums_or_raise(ctx, recv)?;
    let Some(b) = args.block else {
        return enumerator::enum_for_sized(ctx, recv, "each", &[], SizeFn::Native(size_of_product));
    };
    let prefix = array::new(ctx);
    iterate(ctx, enums, prefix, &b)?;
    Ok(recv)
}

/// The product of the sizes: 0 if any is 0; else nil or infinity if any is; nil if
/// any is not an Integer.
fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let enums = enums_or_raise(ctx, recv)?;
    let sizes = array::new(ctx);
    for i in 0..array::len(enums) {
        let e = array::get(enums, i);
        let s = match crate::core::convert::check_funcall(ctx, e, sym::SIZE, &[])? {
            Some(s) => s,
            None => Value::NIL,
        };
        if s == Value::fixnum(0) {
            return Ok(s);
        }
        array::push(ctx, sizes, s);
    }
    let mut total = Value::fixnum(1);
    for i in 0..array::len(sizes) {
        let s = array::get(sizes, i);
        if s.is_nil() || (float::is_float(s) && float::get(s).is_infinite()) {
            return Ok(s);
        }
        if !integer::is_integer(s) {
            return Ok(Value::NIL);
        }
        total = ctx.call(total, sym::MUL, &[s])?;
    }
    Ok(total)
}

/// Rewinds each enumerable that can be, first to last.
fn m_rewind(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let enums = enums_or_raise(ctx, recv)?;
    let rewind = ctx.intern("rewind");
    for i in 0..array::len(enums) {
        let e = array::get(enums, i);
        if ctx.respond_to(e, rewind, true) {
            ctx.call(e, rewind, &[])?;
        }
    }
    Ok(recv)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let Some(enums) = enums_of(recv) else {
        return Ok(string::new_utf8(ctx, &format!("#<{cname}: uninitialized>")));
    };
    let shown = object::guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let s = array::inspect_array(ctx, enums)?;
        Ok(Some(string::to_rust_string_lossy(s)))
    })?;
    let text = match shown {
        Some(s) => format!("#<{cname}: {s}>"),
        None => format!("#<{cname}: ...>"),
    };
    Ok(string::new_utf8(ctx, &text))
}

/// `Enumerator.product(*enums) { |combination| … }`: a Product, or nil after iterating
/// it when a block is given. Keywords are refused (CRuby reserves them).
fn s_product(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if let Some(kw) = args.kw.filter(|&k| hash::len(k) > 0) {
        let mut names = Vec::new();
        for (k, _) in hash::pairs(kw) {
            names.push(object::inspect_string(ctx, k)?);
        }
        return Err(ctx.arg_error(&format!("unknown keywords: {}", names.join(", "))));
    }
    let klass = product_class(ctx);
    let p = crate::object::alloc_uninitialized(ctx, klass)?;
    let enums = array::from_slice(ctx, args.pos);
    set_enums(ctx, p, enums);
    match args.block {
        Some(b) => {
            let prefix = array::new(ctx);
            iterate(ctx, enums, prefix, &b)?;
            Ok(Value::NIL)
        }
        None => Ok(p),
    }
}

pub fn init(ctx: &mut Ctx) {
    let e = ctx.c().enumerator;
    let c = crate::core::module_methods::define_class_under(ctx, e, "Product", e);
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, c, [
        ("initialize", m_initialize, [0..], Safe, Private),
        ("initialize_copy", m_initialize_copy, [1], Safe, Private),
        ("each", m_each, [0], Safe),
        ("size", m_size, [0], Safe),
        ("rewind", m_rewind, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
    ]);
    // External iteration is not offered on products, as in CRuby.
    for name in ["feed", "next_values", "next", "peek_values", "peek"] {
        let id = ctx.intern(name);
        let _ = crate::core::module_methods::undef_method(ctx, c, id);
    }
    crate::methods!(ctx, e, [("product", s_product, [0..], Safe, Singleton, Kw)]);
}
