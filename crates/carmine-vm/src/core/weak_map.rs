//! ObjectSpace::WeakMap: a map compared by identity whose entries vanish when their key
//! or their value is collected.
//!
//! Invariants:
//! - The payload is a `weak::WeakTable` registered in the VM's weak table list at
//!   allocation; the collector removes dead entries (see `crate::weak`).
//! - Methods that run Ruby code (blocks, `inspect`) first copy the entries into a Ruby
//!   Array: a collection meanwhile may remove entries, never free what is being shown.

use crate::core::{array, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::weak::WeakTable;
use crate::Result;

/// Allocates a weak table object (identity-compared or not) and registers it with the
/// collector.
pub fn alloc_table(ctx: &mut Ctx, klass: Value, by_identity: bool) -> Value {
    let t = object::new_data(ctx, klass, Box::new(WeakTable::new(by_identity)));
    ctx.vm().objspace.tables.borrow_mut().push(t);
    t
}

fn alloc(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(alloc_table(ctx, klass, true))
}

fn table<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut WeakTable> {
    match data_ref::<WeakTable>(v) {
        Some(t) => Ok(t),
        None => Err(ctx.type_error("wrong argument type (expected ObjectSpace::WeakMap)")),
    }
}

fn find(t: &mut WeakTable, key: Value) -> Option<Value> {
    t.get_mut(key.raw(), key).map(|e| e.value)
}

fn m_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (key, value) = (args.pos[0], args.pos[1]);
    table(ctx, recv)?.insert(key.raw(), key, value);
    Ok(value)
}

fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let t = table(ctx, recv)?;
    Ok(find(t, args.pos[0]).unwrap_or(Value::NIL))
}

fn m_has_key(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let t = table(ctx, recv)?;
    Ok(Value::bool(find(t, args.pos[0]).is_some()))
}

fn m_delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    match table(ctx, recv)?.remove(key.raw(), key) {
        Some(v) => Ok(v),
        None => match args.block {
            Some(b) => ctx.yield1(&b, key),
            None => Ok(Value::NIL),
        },
    }
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(table(ctx, recv)?.len() as i64))
}

/// The entries as a flat Array `[k0, v0, k1, v1, …]`, which keeps them alive.
fn snapshot(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let flat: Vec<Value> = table(ctx, recv)?.entries().into_iter().flat_map(|e| [e.key, e.value]).collect();
    Ok(array::from_vec(ctx, flat))
}

/// Shared by `each`, `each_key`, `each_value`: a block is required unless the map is
/// empty (CRuby yields lazily and so only notices the missing block at the first entry).
fn each_with(ctx: &mut Ctx, recv: Value, args: &Args, pick: fn(Value, Value) -> Option<Value>) -> Result<Value> {
    let snap = snapshot(ctx, recv)?;
    let n = array::len(snap) / 2;
    if n == 0 {
        return Ok(recv);
    }
    let b = args.need_block(ctx)?;
    for i in 0..n {
        let (k, v) = (array::get(snap, 2 * i), array::get(snap, 2 * i + 1));
        match pick(k, v) {
            Some(one) => ctx.yield1(&b, one)?,
            None => ctx.yield_block(&b, &[k, v])?,
        };
    }
    Ok(recv)
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_with(ctx, recv, args, |_, _| None)
}

fn m_each_key(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_with(ctx, recv, args, |k, _| Some(k))
}

fn m_each_value(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_with(ctx, recv, args, |_, v| Some(v))
}

fn m_keys(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let keys: Vec<Value> = table(ctx, recv)?.entries().into_iter().map(|e| e.key).collect();
    Ok(array::from_vec(ctx, keys))
}

fn m_values(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let values: Vec<Value> = table(ctx, recv)?.entries().into_iter().map(|e| e.value).collect();
    Ok(array::from_vec(ctx, values))
}

/// An entry's side as `inspect` shows it: immediates inspected, objects by class and
/// address (never calling their `inspect`, which a BasicObject does not have).
fn shown(ctx: &mut Ctx, v: Value) -> Result<String> {
    if v.is_heap() {
        let s = object::any_to_s(ctx, v);
        Ok(string::to_rust_string_lossy(s))
    } else {
        object::inspect_string(ctx, v)
    }
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let mut s = format!("#<{cname}:0x{:016x}", recv.raw());
    let snap = snapshot(ctx, recv)?;
    for i in 0..array::len(snap) / 2 {
        let k = shown(ctx, array::get(snap, 2 * i))?;
        let v = shown(ctx, array::get(snap, 2 * i + 1))?;
        s.push_str(if i == 0 { ": " } else { ", " });
        s.push_str(&format!("{k} => {v}"));
    }
    s.push('>');
    Ok(string::new_utf8(ctx, &s))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().weakmap;
    let enumerable = ctx.c().enumerable;
    crate::core::module::body(c).includes.push(enumerable);
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(alloc);
    crate::methods!(ctx, c, [
        ("[]=", m_aset, [2], Unsafe),
        ("[]", m_aref, [1], Unsafe),
        ("include?", m_has_key, [1], Unsafe),
        ("delete", m_delete, [1], Unsafe),
        ("size", m_size, [0], Unsafe),
        ("each", m_each, [0], Unsafe),
        ("each_key", m_each_key, [0], Unsafe),
        ("each_value", m_each_value, [0], Unsafe),
        ("keys", m_keys, [0], Unsafe),
        ("values", m_values, [0], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
    ]);
    crate::core::define_alias(ctx, c, "key?", "include?");
    crate::core::define_alias(ctx, c, "member?", "include?");
    crate::core::define_alias(ctx, c, "length", "size");
    crate::core::define_alias(ctx, c, "each_pair", "each");
}
