//! The native parts of the standard library: what CRuby implements in C extensions,
//! written in Rust under the same feature names (one file or folder per library, named
//! after its feature), so that the pure-Ruby parts of the real standard library load on
//! top of them.
//!
//! Invariants:
//! - A native feature is listed once in `NATIVE_FEATURES`; `require "name"` (or
//!   `"name.so"`) runs its init function once per VM and records `"name.so"` in
//!   `$LOADED_FEATURES`. An init that fails leaves the feature unloaded. A feature listed
//!   *with* `.so` (`"digest.so"`) answers only `require "digest.so"`: a plain
//!   `require "digest"` loads the Ruby file of that name, which requires the `.so`.
//! - Init functions define classes and methods only in the VM they are given (no
//!   process-global state), with honest `Safe`/`Unsafe` thread-safety flags.
//! - Ruby code that belongs to a library lives in `lib/` (Carmine's own) or comes from the
//!   installed CRuby standard library; an init may `require` it.

pub mod bigdecimal;
pub mod cgi_escape;
pub mod coverage;
pub mod date;
pub mod digest;
pub mod etc;
pub mod io_console;
pub mod json;
pub mod monitor;
pub mod objspace;
pub mod pathname;
pub mod psych;
pub mod racc_cparse;
pub mod strscan;
pub mod zlib;

use crate::core::module::{self, body};
use crate::core::module_methods::{define_class_under, define_module_under};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The function that defines a native feature in a VM.
pub type NativeInit = fn(&mut Ctx) -> Result<()>;

/// Features implemented in Rust, by feature name: "x" answers `require "x"` and
/// `require "x.so"`; "x.so" only the latter, for the C half of a standard library's
/// x.rb that requires it (`require "monitor"` loads monitor.rb, which loads monitor.so).
pub const NATIVE_FEATURES: &[(&str, NativeInit)] = &[
    ("socket", crate::socket::init),
    ("carmine/scheduler", crate::event_loop::init),
    ("date_core", date::init),
    ("coverage.so", coverage::init),
    ("json/ext/parser", json::init_parser),
    ("json/ext/generator", json::init_generator),
    ("zlib", zlib::init),
    ("digest.so", digest::init_digest),
    ("digest/md5", digest::init_md5),
    ("digest/sha1", digest::init_sha1),
    ("digest/sha2.so", digest::init_sha2),
    ("digest/rmd160", digest::init_rmd160),
    ("digest/bubblebabble", digest::init_bubblebabble),
    ("monitor.so", monitor::init),
    ("objspace.so", objspace::init),
    ("pathname.so", pathname::init),
    ("strscan", strscan::init),
    ("io/console", io_console::init),
    ("etc", etc::init),
    ("cgi/escape", cgi_escape::init),
    ("psych.so", psych::init),
    ("racc/cparse", racc_cparse::init),
    ("bigdecimal.so", bigdecimal::init),
    ("teleporter", crate::teleporter::init),
];

/// The native feature `require name` loads (`name` without `.rb`), and the name it is
/// recorded under in `$LOADED_FEATURES`.
pub fn find_native(name: &str) -> Option<(NativeInit, String)> {
    NATIVE_FEATURES.iter().find_map(|&(n, init)| {
        let key = if n.ends_with(".so") { n.to_string() } else { format!("{n}.so") };
        (name == n || name == key).then_some((init, key))
    })
}

/// The constant `name` of `outer`, if defined.
pub fn const_of(ctx: &mut Ctx, outer: Value, name: &str) -> Option<Value> {
    let id = ctx.intern(name);
    body(outer).const_get(id).map(|e| e.value)
}

/// The module `outer::name`, defined when missing.
pub fn module_under(ctx: &mut Ctx, outer: Value, name: &str) -> Value {
    match const_of(ctx, outer, name) {
        Some(m) if module::is_class_or_module(m) => m,
        _ => define_module_under(ctx, outer, name),
    }
}

/// The class `outer::name`, defined when missing.
pub fn class_under(ctx: &mut Ctx, outer: Value, name: &str, superclass: Value) -> Value {
    match const_of(ctx, outer, name) {
        Some(k) if module::is_class(k) => k,
        _ => define_class_under(ctx, outer, name, superclass),
    }
}
