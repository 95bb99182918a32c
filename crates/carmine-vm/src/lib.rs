//! Carmine: a Ruby implementation in Rust.
//!
//! The runtime model (see `shared/DESIGN.md` and `docs/architecture.md`): a process holds
//! any number of `Vm`s; a `Vm` is used by threads through their `Ctx`; nothing is
//! process-global except immutable tables. Start with `runtime::Runtime`.

pub mod boot;
pub mod compile;
pub mod core;
pub mod error;
pub mod event_loop;
pub mod fiber;
pub mod gc;
pub mod heap;
pub mod interp;
pub mod object;
pub mod runtime;
pub mod socket;
pub mod stdlib;
pub mod symbol;
pub mod teleporter;
pub mod thread;
pub mod value;
pub mod vm;
pub mod weak;

pub use error::{Result, Unwind};
pub use runtime::Runtime;
pub use value::Value;
