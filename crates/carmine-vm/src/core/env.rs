//! ENV's writers. ENV is each VM's own Hash of Strings (children start from it; see
//! docs/architecture.md); these singleton methods give its assignment CRuby's rules.
//!
//! Invariants: ENV holds only String names and values; assigning nil deletes the name
//! (a name that cannot exist is then no error);
//! stored values are frozen copies (a caller's later change to its String does not reach
//! ENV); a name that is empty or has "=" or a NUL byte is Errno::EINVAL, as setenv(3).

use crate::core::{hash, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// `ENV[name] = value` and `ENV.store(name, value)`.
fn env_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = string::to_str_arg(ctx, args.pos[0])?;
    let value = args.pos[1];
    if value.is_nil() {
        hash::delete(ctx, recv, name)?;
        return Ok(Value::NIL);
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
    let key = string::new_with_enc(ctx, string::bytes(name).to_vec(), string::encoding(name));
    let key = object::freeze(key);
    let mark = ctx.protect(key);
    let copy = string::new_with_enc(ctx, string::bytes(v).to_vec(), string::encoding(v));
    let copy = object::freeze(copy);
    let r = hash::aset(ctx, recv, key, copy);
    ctx.unprotect(mark);
    r?;
    Ok(value)
}

/// Gives the ENV Hash its writers.
pub fn init(ctx: &mut Ctx, env: Value) -> Result<()> {
    let meta = object::singleton_class(ctx, env)?;
    crate::methods!(ctx, meta, [
        ("[]=", env_aset, [2], Unsafe),
        ("store", env_aset, [2], Unsafe),
    ]);
    Ok(())
}
