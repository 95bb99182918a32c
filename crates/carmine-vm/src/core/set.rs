//! Set: a collection of unique values backed by a Hash.

use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn s_new(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.not_implemented("Set.new"))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().set;
    crate::methods!(ctx, c, [("new", s_new, [0..], Unsafe, Singleton)]);
}
