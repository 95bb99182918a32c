//! Array methods beyond the basics in `array.rs`: searching, sorting, set operations,
//! slicing, combinatorics, packing.

use crate::thread::Ctx;

pub fn init(ctx: &mut Ctx) {
    let _ = ctx;
}
