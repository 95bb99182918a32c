//! Time: instants with nanosecond precision and a UTC offset.

use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn s_now(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.not_implemented("Time.now"))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().time;
    crate::methods!(ctx, c, [("now", s_now, [0..], Safe, Singleton, Kw)]);
}
