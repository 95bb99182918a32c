//! Hash methods beyond the basics in `hash.rs`: filtering, transformation, merging,
//! searching and conversion.

use crate::thread::Ctx;

pub fn init(ctx: &mut Ctx) {
    let _ = ctx;
}
