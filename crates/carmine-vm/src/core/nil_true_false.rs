//! NilClass, TrueClass and FalseClass.

use crate::core::{array, hash, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The frozen String `to_s` of nil, true and false always returns (one per VM, made at
/// boot and kept in `Vm::roots`).
fn fixed_to_s(ctx: &mut Ctx, which: usize, text: &str) -> Value {
    let cached = ctx.vm().literal_to_s.get()[which];
    if !cached.is_nil() {
        return cached;
    }
    let s = string::new_us_ascii(ctx, text);
    crate::core::object::freeze(s);
    ctx.vm().roots.borrow_mut().push(s);
    let mut all = ctx.vm().literal_to_s.get();
    all[which] = s;
    ctx.vm().literal_to_s.set(all);
    s
}

fn nil_to_s(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(fixed_to_s(ctx, 0, ""))
}
fn nil_to_a(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(array::new(ctx))
}
fn nil_to_h(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(hash::new(ctx))
}
fn nil_to_i(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(0))
}
fn nil_to_f(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(crate::core::float::new(ctx, 0.0))
}
fn nil_inspect(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_us_ascii(ctx, "nil"))
}
pub(crate) fn nil_nil_p(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::TRUE)
}
fn and_m(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv.truthy() && args.pos[0].truthy()))
}
fn or_m(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv.truthy() || args.pos[0].truthy()))
}
fn xor_m(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv.truthy() != args.pos[0].truthy()))
}
fn bool_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(if recv.truthy() { fixed_to_s(ctx, 1, "true") } else { fixed_to_s(ctx, 2, "false") })
}
fn nil_to_c(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let complex = ctx.c().complex;
    ctx.call_str(complex, "rect", &[Value::fixnum(0), Value::fixnum(0)])
}
fn nil_to_r(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::core::rational::from_integer(ctx, Value::fixnum(0))
}
fn nil_rationalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    nil_to_r(ctx, recv, args)
}

/// `nil =~ other`: never matches (Object#=~ is gone since Ruby 3.2; nil keeps one).
fn nil_match(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let n = ctx.c().nil;
    crate::methods!(ctx, n, [
        ("=~", nil_match, [1], Safe),
        ("to_s", nil_to_s, [0], Safe),
        ("to_a", nil_to_a, [0], Safe),
        ("to_h", nil_to_h, [0], Safe),
        ("to_i", nil_to_i, [0], Safe),
        ("to_f", nil_to_f, [0], Safe),
        ("to_r", nil_to_r, [0], Safe),
        ("to_c", nil_to_c, [0], Safe),
        ("rationalize", nil_rationalize, [0..=1], Safe),
        ("inspect", nil_inspect, [0], Safe),
        ("nil?", nil_nil_p, [0], Safe),
        ("&", and_m, [1], Safe),
        ("|", or_m, [1], Safe),
        ("^", xor_m, [1], Safe),
    ]);
    for c in [ctx.c().true_, ctx.c().false_] {
        crate::methods!(ctx, c, [
            ("to_s", bool_to_s, [0], Safe),
            ("&", and_m, [1], Safe),
            ("|", or_m, [1], Safe),
            ("^", xor_m, [1], Safe),
        ]);
    }
    // Aliases as CRuby defines them (`method(:inspect) == method(:to_s)`).
    let (inspect, to_s, caret, bar) = (ctx.intern("inspect"), ctx.intern("to_s"), ctx.intern("^"), ctx.intern("|"));
    for c in [ctx.c().true_, ctx.c().false_] {
        let _ = crate::core::module_methods::alias_method(ctx, c, inspect, to_s);
    }
    for c in [ctx.c().nil, ctx.c().false_] {
        let _ = crate::core::module_methods::alias_method(ctx, c, caret, bar);
    }
    // nil, true and false are the only instances: no `new` (NoMethodError, as CRuby).
    let new = ctx.intern("new");
    for c in [ctx.c().nil, ctx.c().true_, ctx.c().false_] {
        if let Ok(meta) = crate::core::object::singleton_class(ctx, c) {
            crate::core::module::add_method(ctx, meta, crate::core::module::MethodEntry { name: new, original_name: new, owner: meta, visibility: crate::core::module::Visibility::Public, body: crate::core::module::MethodBody::Undefined });
        }
    }
}
