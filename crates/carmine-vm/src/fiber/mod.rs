//! Native fiber stacks and context switching (seed 000). Until fibers exist, there are no
//! suspended stacks to scan.

use crate::heap::Marker;
use crate::thread::Ctx;

/// Marks the stacks of suspended fibers (none yet).
pub fn mark_suspended(_ctx: &Ctx, _m: &mut Marker<'_>) {}
