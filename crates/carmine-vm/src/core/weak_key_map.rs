//! ObjectSpace::WeakKeyMap: a map whose keys are compared by `eql?`/`hash` and held
//! weakly; a value lives as long as its key (an ephemeron, see `crate::weak`).
//!
//! Invariants:
//! - Keys are heap objects (immediates can never be collected and are refused).
//! - A lookup calls `key.hash` and then `key.eql?(stored)` for stored keys of the same
//!   hash: Ruby code that may collect. The candidates are copied into a Ruby Array first
//!   (which keeps them alive), and the table is looked up again afterwards, never held
//!   across a call.

use crate::core::{array, bignum, hash, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::weak::WeakTable;
use crate::Result;

fn alloc(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(crate::core::weak_map::alloc_table(ctx, klass, false))
}

fn table<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut WeakTable> {
    match data_ref::<WeakTable>(v) {
        Some(t) => Ok(t),
        None => Err(ctx.type_error("wrong argument type (expected ObjectSpace::WeakKeyMap)")),
    }
}

/// `key.hash` as a table hash (private `hash` methods count, as in CRuby).
fn key_hash(ctx: &mut Ctx, key: Value) -> Result<u64> {
    let h = ctx.call(key, crate::symbol::sym::HASH, &[])?;
    if let Some(i) = h.as_fixnum() {
        return Ok(i as u64);
    }
    if bignum::is_bignum(h) {
        let bytes = bignum::get(h).to_signed_bytes_le();
        return Ok(hash::hash_bytes(0, &bytes));
    }
    let i = crate::core::integer::to_i64_arg(ctx, h)?;
    Ok(i as u64)
}

/// The stored key equal to `key` (identical, or `key.eql?(stored)`) with its hash.
fn find_key(ctx: &mut Ctx, recv: Value, key: Value) -> Result<Option<(Value, u64)>> {
    let h = key_hash(ctx, key)?;
    let candidates = table(ctx, recv)?.keys_with_hash(h);
    if candidates.is_empty() {
        return Ok(None);
    }
    if candidates.contains(&key) {
        return Ok(Some((key, h)));
    }
    let candidates = array::from_vec(ctx, candidates);
    for i in 0..array::len(candidates) {
        let k = array::get(candidates, i);
        if ctx.call(key, crate::symbol::sym::EQL, &[k])?.truthy() {
            return Ok(Some((k, h)));
        }
    }
    Ok(None)
}

fn m_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (key, value) = (args.pos[0], args.pos[1]);
    if !key.is_heap() {
        return Err(ctx.arg_error("WeakKeyMap keys must be garbage collectable"));
    }
    // An equal key already there is replaced by this one, with the new value.
    match find_key(ctx, recv, key)? {
        Some((k, h)) => {
            let t = table(ctx, recv)?;
            t.remove(h, k);
            t.insert(h, key, value);
        }
        None => {
            let h = key_hash(ctx, key)?;
            table(ctx, recv)?.insert(h, key, value);
        }
    }
    Ok(value)
}

fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    if !key.is_heap() {
        return Ok(Value::NIL);
    }
    Ok(match find_key(ctx, recv, key)? {
        Some((k, h)) => table(ctx, recv)?.get_mut(h, k).map_or(Value::NIL, |e| e.value),
        None => Value::NIL,
    })
}

fn m_has_key(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    if !key.is_heap() {
        return Ok(Value::FALSE);
    }
    let found = match find_key(ctx, recv, key)? {
        Some((k, h)) => table(ctx, recv)?.get_mut(h, k).is_some(),
        None => false,
    };
    Ok(Value::bool(found))
}

fn m_getkey(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    if !key.is_heap() {
        return Ok(Value::NIL);
    }
    Ok(match find_key(ctx, recv, key)? {
        Some((k, h)) => table(ctx, recv)?.get_mut(h, k).map_or(Value::NIL, |e| e.key),
        None => Value::NIL,
    })
}

fn m_delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    let found = if key.is_heap() { find_key(ctx, recv, key)? } else { None };
    if let Some((k, h)) = found {
        if let Some(v) = table(ctx, recv)?.remove(h, k) {
            return Ok(v);
        }
    }
    match args.block {
        Some(b) => ctx.yield1(&b, key),
        None => Ok(Value::NIL),
    }
}

fn m_clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    table(ctx, recv)?.clear();
    Ok(recv)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let n = table(ctx, recv)?.len();
    Ok(string::new_utf8(ctx, &format!("#<{cname}:0x{:016x} size={n}>", recv.raw())))
}

pub fn init(ctx: &mut Ctx) {
    let os = ctx.c().object_space;
    let obj = ctx.c().object;
    let c = crate::core::module_methods::define_class_under(ctx, os, "WeakKeyMap", obj);
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(alloc);
    crate::methods!(ctx, c, [
        ("[]=", m_aset, [2], Unsafe),
        ("[]", m_aref, [1], Unsafe),
        ("key?", m_has_key, [1], Unsafe),
        ("getkey", m_getkey, [1], Unsafe),
        ("delete", m_delete, [1], Unsafe),
        ("clear", m_clear, [0], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
    ]);
}
