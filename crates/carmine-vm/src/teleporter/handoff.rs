//! Handing a tunnel from one VM to another VM of the same process (embedding): `export`
//! takes a Tunnel object of one VM and gives a plain Rust value that the host moves to
//! another thread, where `import` makes it a Tunnel object of that thread's VM. A named
//! tunnel can also simply be opened by name in each VM; this is how an anonymous one
//! (`Tunnel.new`) reaches another VM.
//!
//! Invariants:
//! - An `Exported` owns its own mapping of the segment (a second mapping of the same pages,
//!   `Mapping::duplicate`), so it outlives the VM and the Tunnel object it came from, and
//!   dropping it unmaps only that mapping.
//! - It takes no process slot. The VM that imports it takes its own slot (its own holder
//!   bit and arena) at its first operation, as a forked child does: two VMs of one process
//!   are two users of a tunnel, each giving its slot back when its last Tunnel object of
//!   that mapping is collected (or its VM closed), never sharing one.
//! - Nothing here is process-global: what two VMs share is the segment, and only through
//!   its atomics and process-shared locks.

use super::segment::{OpenError, Segment};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A tunnel on its way from one VM to another of the same process.
pub struct Exported {
    seg: Segment,
    name: Option<String>,
}

// SAFETY: an Exported owns a mapping of shared memory that nothing else refers to, and the
// segment in it is only ever changed through atomics and the process-shared locks it holds,
// which any thread of the process may use.
unsafe impl Send for Exported {}

impl Exported {
    /// The tunnel's name (None for an anonymous one).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

/// The tunnel `tunnel` (a `Teleporter::Tunnel`) ready to be imported into another VM of this
/// process. TypeError for anything else; SystemCallError if the memory cannot be mapped
/// again.
pub fn export(ctx: &mut Ctx, tunnel: Value) -> Result<Exported> {
    let h = super::tunnel::handle(ctx, tunnel)?;
    match h.seg.duplicate() {
        Ok(seg) => Ok(Exported { seg, name: h.name.clone() }),
        Err(OpenError::Io(e)) => Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EIO), "mremap")),
        Err(_) => Err(crate::core::process::errno_error(ctx, libc::EINVAL, "mremap")),
    }
}

/// A `Teleporter::Tunnel` of this VM for the exported tunnel (`require "teleporter"` is done
/// first if the program has not).
pub fn import(ctx: &mut Ctx, tunnel: Exported) -> Result<Value> {
    crate::core::load::require(ctx, "teleporter")?;
    let m = super::teleporter_module(ctx);
    let Some(k) = crate::stdlib::const_of(ctx, m, "Tunnel").filter(|&k| crate::core::module::is_class(k)) else {
        return Err(ctx.type_error("Teleporter::Tunnel is not a class"));
    };
    Ok(super::tunnel::wrap(ctx, k, tunnel.seg, tunnel.name))
}
