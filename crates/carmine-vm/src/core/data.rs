//! Data (Ruby 3.2+): immutable value classes made by `Data.define`.
//!
//! Invariants:
//! - Instances share Struct's representation (`struct_::StructObj`) and member list; only
//!   readers are defined, and an instance is frozen once `initialize` has run.
//! - `new`/`[]` turn positional arguments into keywords and call `initialize(**kw)`, so a
//!   user-defined `initialize(a:, b:)` that calls `super` works as in CRuby.

use crate::core::struct_::{self, members_of, members_of_class, values};
use crate::core::{array, hash, object, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn s_define(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let members = struct_::make_members(ctx, args.pos, "data")?;
    let klass = crate::core::module_methods::new_class(ctx, recv, None);
    struct_::setup_class(ctx, klass, members, false);
    let single = object::singleton_class(ctx, klass)?;
    crate::methods!(ctx, single, [
        ("new", c_new, [0..], Unsafe, Kw),
        ("[]", c_new, [0..], Unsafe, Kw),
        ("members", c_members, [0], Safe),
    ]);
    if let Some(b) = args.block {
        ctx.yield_with_self(&b, klass, &[klass], Some(klass))?;
    }
    Ok(klass)
}

/// `"missing keyword: :a"` / `"unknown keywords: :a, :b"`.
fn keyword_error(ctx: &mut Ctx, what: &str, keys: &[Value]) -> crate::error::Unwind {
    let mut shown = Vec::new();
    for &k in keys {
        match object::inspect_string(ctx, k) {
            Ok(s) => shown.push(s),
            Err(e) => return e,
        }
    }
    let plural = if keys.len() == 1 { "" } else { "s" };
    ctx.arg_error(&format!("{what} keyword{plural}: {}", shown.join(", ")))
}

fn c_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let members = match members_of_class(ctx, recv) {
        Some(m) => m,
        None => return Err(ctx.type_error("uninitialized data")),
    };
    let kw = args.kw.filter(|h| hash::len(*h) > 0);
    let h = match kw {
        Some(h) => {
            if !args.pos.is_empty() {
                return Err(ctx.arity_error(args.pos.len() + 1, 0, Some(0)));
            }
            h
        }
        None => {
            let n = array::len(members);
            if args.pos.len() > n {
                return Err(ctx.arity_error(args.pos.len(), 0, Some(n)));
            }
            let h = hash::new(ctx);
            for (i, &v) in args.pos.iter().enumerate() {
                hash::aset(ctx, h, array::get(members, i), v)?;
            }
            h
        }
    };
    let o = object::allocate(ctx, recv)?;
    ctx.call_kw(o, sym::INITIALIZE, &[], Some(h), args.block)?;
    Ok(o)
}

fn c_members(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match members_of_class(ctx, recv) {
        Some(m) => Ok(array::dup(ctx, m)),
        None => Err(ctx.type_error("uninitialized data")),
    }
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let members = members_of(ctx, recv)?;
    let n = array::len(members);
    let vals = values(ctx, recv)?;
    let h = match (args.pos, args.kw) {
        ([], None) => None,
        ([], Some(h)) => Some(h),
        ([h], None) if hash::is_hash(*h) => Some(*h),
        (p, kw) => return Err(ctx.arity_error(p.len() + kw.is_some() as usize, 0, Some(0))),
    };
    let Some(h) = h.filter(|h| hash::len(*h) > 0 || n == 0) else {
        if n > 0 {
            let all = array::to_vec(members);
            return Err(keyword_error(ctx, "missing", &all));
        }
        object::freeze(recv);
        return Ok(Value::NIL);
    };
    if hash::len(h) < n {
        let given: Vec<Value> = hash::pairs(h).into_iter().map(|(k, _)| k).collect();
        let missing: Vec<Value> = array::to_vec(members).into_iter().filter(|m| !given.contains(m)).collect();
        return Err(keyword_error(ctx, "missing", &missing));
    }
    for i in 0..n {
        array::set(vals, i, Value::NIL);
    }
    let mut unknown = Vec::new();
    for (k, v) in hash::pairs(h) {
        let name = if let Some(s) = k.as_symbol() {
            Some(s)
        } else if string::is_string(k) {
            Some(ctx.intern_bytes(string::bytes(k)))
        } else {
            None
        };
        match name.and_then(|s| (0..n).find(|&i| array::get(members, i).as_symbol() == Some(s))) {
            Some(i) => array::set(vals, i, v),
            None => unknown.push(k),
        }
    }
    object::freeze(recv);
    if !unknown.is_empty() {
        return Err(keyword_error(ctx, "unknown", &unknown));
    }
    Ok(Value::NIL)
}

fn initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let orig = args.pos[0];
    if recv != orig {
        if object::real_class_of(ctx, recv) != object::real_class_of(ctx, orig) || !struct_::is_struct_obj(orig) {
            return Err(ctx.type_error("initialize_copy should take same class object"));
        }
        let src = values(ctx, orig)?;
        let copy = array::dup(ctx, src);
        if let Some(o) = crate::object::data_ref::<struct_::StructObj>(recv) {
            o.values = copy;
        }
    }
    Ok(object::freeze(recv))
}

fn m_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !args.pos.is_empty() {
        return Err(ctx.arity_error(args.pos.len(), 0, Some(0)));
    }
    let Some(kw) = args.kw.filter(|h| hash::len(*h) > 0) else { return Ok(recv) };
    let h = struct_::to_h_with(ctx, recv, None)?;
    for (k, v) in hash::pairs(kw) {
        hash::aset(ctx, h, k, v)?;
    }
    // Like CRuby's rb_class_new_instance_kw: allocate and initialize, bypassing `new`.
    let klass = object::real_class_of(ctx, recv);
    let o = object::allocate(ctx, klass)?;
    ctx.call_kw(o, sym::INITIALIZE, &[], Some(h), None)?;
    Ok(o)
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(struct_::equal_with(ctx, recv, args.pos[0], false)?))
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(struct_::equal_with(ctx, recv, args.pos[0], true)?))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    struct_::hash_with(ctx, recv)
}

fn m_to_h(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    struct_::to_h_with(ctx, recv, args.block)
}

fn m_members(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = members_of(ctx, recv)?;
    Ok(array::dup(ctx, m))
}

fn m_deconstruct(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = values(ctx, recv)?;
    Ok(array::dup(ctx, v))
}

fn m_deconstruct_keys(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    struct_::deconstruct_keys_with(ctx, recv, args.pos[0], false)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    struct_::inspect_with(ctx, recv, "data")
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().data;
    crate::methods!(ctx, c, [
        ("define", s_define, [0..], Unsafe, Singleton),
        ("initialize", initialize, [0..], Unsafe, Private, Kw),
        ("initialize_copy", initialize_copy, [1], Unsafe, Private),
        ("with", m_with, [0..], Unsafe, Kw),
        ("==", m_eq, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("to_h", m_to_h, [0], Safe),
        ("members", m_members, [0], Safe),
        ("deconstruct", m_deconstruct, [0], Safe),
        ("deconstruct_keys", m_deconstruct_keys, [1], Safe),
        ("inspect", m_inspect, [0], Safe),
    ]);
    crate::core::define_alias(ctx, c, "to_s", "inspect");
    // `Data.new` does not exist; only defined classes construct instances.
    if let Ok(single) = object::singleton_class(ctx, c) {
        let id = ctx.intern("new");
        crate::core::module::add_method(
            ctx,
            single,
            crate::core::module::MethodEntry { name: id, original_name: id, owner: single, visibility: crate::core::module::Visibility::Public, body: crate::core::module::MethodBody::Undefined },
        );
    }
}
