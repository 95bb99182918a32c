//! Teleporter (seed 004): object transfer between Ruby processes (and VMs) through shared
//! memory. `require "teleporter"` defines the Ruby API (`init`).
//!
//! - `format`: the copy format, a compact binary encoding of an object graph that
//!   `Tunnel#send`/`#recv` put on the wire (and `Teleporter.dump`/`.load` expose, for tests
//!   and debugging). Documented in `docs/teleporter.md`.
//!
//! - `shm`, `segment`, `lock`, `alloc`, `queue`: the shared memory a tunnel lives in (a
//!   mapping, its layout and process slots, robust locks and futexes, the per-process-arena
//!   allocator, the ring), and `tunnel`: the Ruby class `Teleporter::Tunnel` over them.
//!   Their invariants are at the top of each file; the layout and the crash recovery are
//!   documented in `docs/teleporter.md`. `handoff` hands a tunnel to another VM of the same
//!   process (embedding); every VM that uses a tunnel takes its own process slot in it.
//!
//! - `shared/`: `Teleporter::SharedString`, `SharedArray`, `SharedHash` (object graphs as
//!   images in a tunnel's memory, read in place) and the share/move transfers
//!   (`Tunnel#share_send`, `#move_send`, …); invariants in `shared/mod.rs`.
//!
//! Invariants of the copy format (`format.rs`):
//! - `format::dump` only appends to the `out` it is given and never runs Ruby code: it
//!   reads objects directly (no `marshal_dump`, `_dump`, `respond_to?`, `hash`), so the
//!   graph cannot change under it and no collection can run during a dump (it allocates
//!   no Ruby object before an error). Object identity is tracked by address.
//! - An immediate (Fixnum, flonum, nil, true, false, Symbol) at the top encodes and decodes
//!   without allocating a Ruby object and without heap allocation besides `out` growing.
//! - `format::load` accepts any bytes: malformed input raises `Teleporter::Error` (never a
//!   panic, never an out-of-bounds read, never an allocation sized by an unchecked length);
//!   objects it builds stay rooted on the thread's protect stack until the load ends.
//! - Both directions recurse on the native stack (one Rust frame per nesting level) and
//!   raise `SystemStackError` before it runs out.

pub mod alloc;
pub mod format;
pub mod handoff;
pub mod lock;
pub mod queue;
pub mod segment;
pub mod shared;
pub mod shm;
pub mod tunnel;

use crate::core::module_methods::{define_class_under, define_module_under};
use crate::core::string;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The module `Teleporter`, defined when missing.
pub fn teleporter_module(ctx: &mut Ctx) -> Value {
    let obj = ctx.c().object;
    match crate::stdlib::const_of(ctx, obj, "Teleporter") {
        Some(m) if crate::core::module::is_module(m) => m,
        _ => define_module_under(ctx, obj, "Teleporter"),
    }
}

/// `Teleporter::Error`, defined when missing (so the format can raise it even when used
/// from Rust before `require "teleporter"`).
pub fn error_class(ctx: &mut Ctx) -> Value {
    let m = teleporter_module(ctx);
    match crate::stdlib::const_of(ctx, m, "Error") {
        Some(k) if crate::core::module::is_class(k) => k,
        _ => {
            let se = ctx.c().standard_error;
            define_class_under(ctx, m, "Error", se)
        }
    }
}

/// `Teleporter.dump(obj)`: the copy-format encoding of `obj`, a binary String. For tests and
/// debugging; a Tunnel encodes straight into its buffer.
fn s_dump(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut out = Vec::with_capacity(64);
    format::dump(ctx, args.pos[0], &mut out)?;
    Ok(string::new_with_enc(ctx, out, crate::core::encoding::BINARY))
}

/// `Teleporter.load(str)`: the object `str` (a copy-format encoding) describes.
fn s_load(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = args.pos[0];
    let Some(s) = string::try_to_str(ctx, s)? else {
        let name = crate::core::object::class_name_of(ctx, s);
        return Err(ctx.type_error(&format!("no implicit conversion of {name} into String")));
    };
    // The bytes are copied: Ruby code run by the load (a key's `hash`) could change `s`.
    let bytes = string::bytes(s).to_vec();
    format::load(ctx, &bytes)
}

/// `require "teleporter"`: module Teleporter, Teleporter::Error, Teleporter.dump/.load.
pub fn init(ctx: &mut Ctx) -> Result<()> {
    let m = teleporter_module(ctx);
    error_class(ctx);
    tunnel::init(ctx)?;
    shared::init(ctx)?;
    crate::methods!(ctx, m, [
        ("dump", s_dump, [1], Unsafe, Singleton),
        ("load", s_load, [1], Unsafe, Singleton),
    ]);
    Ok(())
}
