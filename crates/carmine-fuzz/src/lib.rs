//! Carmine's panic-freedom check (issue #2): the compiler and the VM are run over a corpus
//! of Ruby files and over random mutations of them; a Rust panic, a fatal signal or a
//! `[BUG]` report is a failure, a Ruby exception is not. See docs/panic-freedom.md.
//!
//! - `rng`: the seedable PRNG every random choice comes from.
//! - `mutate`: the source mutations.
//! - `exec`: one `carmine` subprocess with a timeout, and crash detection.
//! - `bytecode`: mutations of compiled bytecode files, loaded in-process.
//! - `harness`: the corpus walk, in-process compiles under `catch_unwind`, the parallel
//!   workers, failure files and the summary.

pub mod bytecode;
pub mod exec;
pub mod harness;
pub mod mutate;
pub mod rng;

/// The spec-DSL prelude shipped with the harness (`describe`/`it`/`should`… that run every
/// block and swallow every exception, so that spec files execute their code).
pub fn default_prelude() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("prelude.rb")
}
