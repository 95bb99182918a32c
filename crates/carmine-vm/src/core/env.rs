//! ENV's own methods. ENV is each VM's own Hash of Strings (children start from it; see
//! docs/architecture.md); these singleton methods give it CRuby's rules where they
//! differ from a Hash's: names and values are converted with `to_str`, writes are
//! checked as setenv(3) checks them, and ENV cannot be copied as an object.
//!
//! Invariants: ENV holds only String names and values, in the locale encoding
//! (UTF-8); assigning nil deletes the name (a name that cannot exist is then no error);
//! stored values are frozen copies (a caller's later change to its String does not reach
//! ENV); a name that is empty or has "=" or a NUL byte is Errno::EINVAL, as setenv(3).

use crate::core::encoding::UTF_8;
use crate::core::{array, hash, module, object, string};
use crate::interp::{Args, Block};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Calls Hash's own method `name` on ENV (the behaviour ENV shares with a Hash once its
/// arguments are converted).
fn hash_method(ctx: &mut Ctx, env: Value, name: &str, args: &[Value], block: Option<Block>) -> Result<Value> {
    let mid = ctx.intern(name);
    let klass = ctx.c().hash;
    match module::find_method(ctx, klass, mid) {
        Some(me) => crate::interp::call::invoke_from_rust(ctx, env, &me, args, None, block),
        None => Err(ctx.runtime_error(&format!("Hash#{name} is missing"))),
    }
}

/// A String read out of ENV as CRuby hands it out: transcoded to
/// `Encoding.default_internal` when that is set (left as it is if it cannot be).
fn export_str(ctx: &mut Ctx, s: Value) -> Value {
    match crate::core::encoding::default_internal(ctx) {
        Some(enc) if enc != string::encoding(s) => {
            let target = crate::core::encoding::encoding_object(ctx, enc);
            let encode = ctx.intern("encode");
            ctx.call(s, encode, &[target]).unwrap_or(s)
        }
        _ => s,
    }
}

/// The frozen locale-encoded copy of a name or value that ENV stores.
fn stored_copy(ctx: &mut Ctx, s: Value) -> Value {
    let copy = string::new_with_enc(ctx, string::bytes(s).to_vec(), UTF_8);
    object::freeze(copy)
}

/// A name and value checked as `setenv` checks them: (name, Some(value)), or
/// (name, None) to delete.
fn checked_pair(ctx: &mut Ctx, name: Value, value: Value) -> Result<(Value, Option<Value>)> {
    let name = string::to_str_arg(ctx, name)?;
    if value.is_nil() {
        return Ok((name, None));
    }
    let nb = string::bytes(name);
    if nb.is_empty() || nb.contains(&b'=') || nb.contains(&0) {
        let detail = format!("setenv({})", string::to_rust_string_lossy(name));
        return Err(crate::core::process::errno_error(ctx, libc::EINVAL, &detail));
    }
    let v = string::to_str_arg(ctx, value)?;
    if string::bytes(v).contains(&0) {
        return Err(ctx.arg_error("bad environment variable value: contains null byte"));
    }
    Ok((name, Some(v)))
}

/// Stores a checked pair (see `checked_pair`).
fn store_pair(ctx: &mut Ctx, env: Value, name: Value, value: Option<Value>) -> Result<()> {
    let Some(v) = value else {
        hash::delete(ctx, env, name)?;
        return Ok(());
    };
    let key = stored_copy(ctx, name);
    let mark = ctx.protect(key);
    let copy = stored_copy(ctx, v);
    let r = hash::aset(ctx, env, key, copy);
    ctx.unprotect(mark);
    r
}

/// `ENV[name] = value` and `ENV.store(name, value)`.
fn env_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (name, value) = checked_pair(ctx, args.pos[0], args.pos[1])?;
    store_pair(ctx, recv, name, value)?;
    Ok(args.pos[1])
}

/// `ENV[name]`.
fn env_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = string::to_str_arg(ctx, args.pos[0])?;
    match hash::get(recv, name) {
        Some(v) => Ok(export_str(ctx, v)),
        None => Ok(Value::NIL),
    }
}

/// `ENV.fetch(name [, default]) { |name| … }`.
fn env_fetch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = string::to_str_arg(ctx, args.pos[0])?;
    let mut rest = vec![name];
    rest.extend_from_slice(&args.pos[1..]);
    let v = hash_method(ctx, recv, "fetch", &rest, args.block)?;
    if hash::get(recv, name) == Some(v) {
        return Ok(export_str(ctx, v));
    }
    Ok(v)
}

/// Methods taking one name: it is converted with `to_str` first.
fn with_name(ctx: &mut Ctx, recv: Value, args: &Args, method: &str) -> Result<Value> {
    let name = string::to_str_arg(ctx, args.pos[0])?;
    hash_method(ctx, recv, method, &[name], args.block)
}

fn env_assoc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_name(ctx, recv, args, "assoc")
}
fn env_delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_name(ctx, recv, args, "delete")
}
fn env_include(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_name(ctx, recv, args, "include?")
}
/// `ENV.key(value)`: the value is converted with `to_str`.
fn env_key(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_name(ctx, recv, args, "key")
}

/// `ENV.rassoc(value)` / `ENV.value?(value)`: nil for a value that is no String and
/// cannot become one.
fn with_value(ctx: &mut Ctx, recv: Value, args: &Args, method: &str) -> Result<Value> {
    match string::try_to_str(ctx, args.pos[0])? {
        Some(v) => hash_method(ctx, recv, method, &[v], None),
        None => Ok(Value::NIL),
    }
}
fn env_rassoc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_value(ctx, recv, args, "rassoc")
}
fn env_value_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    with_value(ctx, recv, args, "value?")
}

/// `ENV.values_at(*names)`.
fn env_values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    for &n in args.pos {
        let name = string::to_str_arg(ctx, n)?;
        let v = hash::get(recv, name).unwrap_or(Value::NIL);
        array::push(ctx, out, v);
    }
    Ok(out)
}

/// `ENV.slice(*names)`: a Hash keyed by the names as given.
fn env_slice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = hash::new(ctx);
    for &n in args.pos {
        let name = string::to_str_arg(ctx, n)?;
        if let Some(v) = hash::get(recv, name) {
            hash::aset(ctx, out, n, v)?;
        }
    }
    Ok(out)
}

/// `ENV.update(*hashes) { |name, old, new| … }`: pairs are stored one by one, so the
/// ones before a bad pair stay stored.
fn env_update(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &h in args.pos {
        let h = hash::to_hash_arg(ctx, h)?;
        for (k, v) in hash::pairs(h) {
            let mut v = v;
            if let Some(b) = args.block {
                let name = string::to_str_arg(ctx, k)?;
                if let Some(old) = hash::get(recv, name) {
                    v = ctx.yield_block(&b, &[name, old, v])?;
                }
            }
            let (name, value) = checked_pair(ctx, k, v)?;
            store_pair(ctx, recv, name, value)?;
        }
    }
    Ok(recv)
}

/// `ENV.replace(hash)`: as CRuby, the pairs are stored one by one (a bad pair stops
/// there, the ones before it stay stored), and only when all are stored are the other
/// names removed.
fn env_replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = hash::to_hash_arg(ctx, args.pos[0])?;
    if h == recv {
        return Ok(recv);
    }
    let mut kept = Vec::new();
    for (k, v) in hash::pairs(h) {
        let (name, value) = checked_pair(ctx, k, v)?;
        store_pair(ctx, recv, name, value)?;
        kept.push(string::bytes(name).to_vec());
    }
    for (k, _) in hash::pairs(recv) {
        if !kept.iter().any(|n| n.as_slice() == string::bytes(k)) {
            hash::delete(ctx, recv, k)?;
        }
    }
    Ok(recv)
}

/// `ENV.to_hash` / `ENV.to_h` without a block: a plain Hash copy.
fn env_to_hash(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_some() {
        return hash_method(ctx, recv, "to_h", &[], args.block);
    }
    let klass = ctx.c().hash;
    Ok(hash::dup_with_class(ctx, recv, klass))
}

/// `ENV.shift`: the first pair, transcoded as `ENV[]` transcodes.
fn env_shift(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let pair = hash_method(ctx, recv, "shift", &[], None)?;
    if pair.is_nil() {
        return Ok(pair);
    }
    let items = array::to_vec(pair);
    let k = export_str(ctx, items[0]);
    let v = export_str(ctx, items[1]);
    Ok(array::from_slice(ctx, &[k, v]))
}

/// `ENV.each_pair`/`ENV.each`: Hash's, except that with `Encoding.default_internal` set the
/// names and values are transcoded as `ENV[]` transcodes them.
fn env_each_pair(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block.filter(|_| crate::core::encoding::default_internal(ctx).is_some()) else {
        return hash_method(ctx, recv, "each_pair", &[], args.block);
    };
    for (k, v) in hash::pairs(recv) {
        let k = export_str(ctx, k);
        let v = export_str(ctx, v);
        let pair = array::from_slice(ctx, &[k, v]);
        ctx.yield_block(&b, &[pair])?;
    }
    Ok(recv)
}

fn env_to_s(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_utf8(ctx, "ENV"))
}

/// `ENV.rehash`: nothing to do (ENV keeps no hash of its own to rebuild).
fn env_rehash(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

fn env_clone(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if let Some(kw) = args.kw {
        for (k, v) in hash::pairs(kw) {
            let freeze = ctx.intern("freeze");
            if k != Value::symbol(freeze) {
                let ks = crate::core::object::inspect_string(ctx, k)?;
                return Err(ctx.arg_error(&format!("unknown keyword: {ks}")));
            }
            if !(v.is_nil() || v == Value::TRUE || v == Value::FALSE) {
                let vs = crate::core::object::inspect_string(ctx, v)?;
                return Err(ctx.arg_error(&format!("unexpected value for freeze: {vs}")));
            }
        }
    }
    Err(ctx.type_error("Cannot clone ENV, use ENV.to_h to get a copy of ENV as a hash"))
}

fn env_dup(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.type_error("Cannot dup ENV, use ENV.to_h to get a copy of ENV as a hash"))
}

/// Gives the ENV Hash its writers.
pub fn init(ctx: &mut Ctx, env: Value) -> Result<()> {
    let meta = object::singleton_class(ctx, env)?;
    crate::methods!(ctx, meta, [
        ("[]=", env_aset, [2], Unsafe),
        ("store", env_aset, [2], Unsafe),
        ("[]", env_aref, [1], Unsafe),
        ("fetch", env_fetch, [1..=2], Unsafe),
        ("assoc", env_assoc, [1], Unsafe),
        ("delete", env_delete, [1], Unsafe),
        ("include?", env_include, [1], Unsafe),
        ("has_key?", env_include, [1], Unsafe),
        ("key?", env_include, [1], Unsafe),
        ("member?", env_include, [1], Unsafe),
        ("key", env_key, [1], Unsafe),
        ("rassoc", env_rassoc, [1], Unsafe),
        ("value?", env_value_p, [1], Unsafe),
        ("has_value?", env_value_p, [1], Unsafe),
        ("values_at", env_values_at, [0..], Unsafe),
        ("slice", env_slice, [0..], Unsafe),
        ("update", env_update, [0..], Unsafe),
        ("merge!", env_update, [0..], Unsafe),
        ("replace", env_replace, [1], Unsafe),
        ("to_hash", env_to_hash, [0], Unsafe),
        ("to_h", env_to_hash, [0], Unsafe),
        ("to_s", env_to_s, [0], Safe),
        ("shift", env_shift, [0], Unsafe),
        ("each_pair", env_each_pair, [0], Unsafe),
        ("each", env_each_pair, [0], Unsafe),
        ("rehash", env_rehash, [0], Safe),
        ("clone", env_clone, [0], Unsafe, Kw),
        ("dup", env_dup, [0], Safe),
    ]);
    Ok(())
}
