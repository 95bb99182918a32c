//! Fiber (the Ruby class) and external iteration of enumerators.

use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// `Enumerator#next`/`#peek`: runs the enumerator in a fiber.
pub fn enumerator_next(ctx: &mut Ctx, _e: Value, _peek: bool) -> Result<Value> {
    Err(ctx.not_implemented("Enumerator#next (external iteration needs fibers)"))
}

fn s_new(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.not_implemented("Fiber"))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().fiber;
    crate::methods!(ctx, c, [("new", s_new, [0..], Unsafe, Singleton, Kw)]);
}
