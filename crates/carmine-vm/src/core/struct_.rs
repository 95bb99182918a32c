//! Struct: classes with named member slots.

use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Copies a Struct instance for dup/clone (other Data objects are not copied here).
pub fn dup_data(_ctx: &mut Ctx, _v: Value, _klass: Value) -> Result<Option<Value>> {
    Ok(None)
}

fn s_new(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.not_implemented("Struct.new"))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().struct_;
    crate::methods!(ctx, c, [("new", s_new, [0..], Unsafe, Singleton, Kw)]);
}
