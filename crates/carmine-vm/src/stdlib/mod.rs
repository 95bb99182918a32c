//! The native parts of the standard library: what CRuby implements in C extensions,
//! written in Rust under the same feature names (one file or folder per library, named
//! after its feature), so that the pure-Ruby parts of the real standard library load on
//! top of them.
//!
//! Invariants:
//! - A native feature is listed once in `NATIVE_FEATURES`; `require "name"` (or
//!   `"name.so"`) runs its init function once per VM and records `"name.so"` in
//!   `$LOADED_FEATURES`. An init that fails leaves the feature unloaded.
//! - Init functions define classes and methods only in the VM they are given (no
//!   process-global state), with honest `Safe`/`Unsafe` thread-safety flags.
//! - Ruby code that belongs to a library lives in `lib/` (Carmine's own) or comes from the
//!   installed CRuby standard library; an init may `require` it.

pub mod psych;

use crate::thread::Ctx;
use crate::Result;

/// Features implemented in Rust, by feature name (without `.so`). A name spelled with
/// `.so` is the C half of a Ruby library of the same name (`psych.rb` requires
/// `"psych.so"`): only `require "name.so"` finds it, so the plain name loads the Ruby file.
pub const NATIVE_FEATURES: &[(&str, fn(&mut Ctx) -> Result<()>)] = &[
    ("socket", crate::socket::init),
    ("carmine/scheduler", crate::event_loop::init),
    ("psych.so", psych::init),
];
