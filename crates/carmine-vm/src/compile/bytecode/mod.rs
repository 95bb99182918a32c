//! Precompiled bytecode files: a compiled program written to bytes (`carmine --compile`)
//! and loaded back without parsing, for hosts that run the same script many times
//! (seed 002: mod_mruby compiles a handler to bytecode once at server start).
//!
//! Format (version `VERSION`; every integer little-endian whatever the host, `uleb`/`sleb`
//! are LEB128 unsigned/zigzag-signed varints of at most 10 bytes):
//!
//! ```text
//! header  magic      8 bytes  "\x89CMB\r\n\x1a\n"  (binary-safe: mangled line ends show)
//!         version    u32      VERSION
//!         isa        u64      ISA_HASH: hash of the instruction-set definition
//!         flags      u32      bit 0: a data section (`__END__`) follows the payload
//!         length     u64      payload bytes
//!         checksum   u64      FNV-1a 64 of the payload
//!         data_at    u64      offset of the data section from the file start (0: none)
//! payload symbols    uleb n, n × (uleb len, bytes)       every Symbol/name the code uses
//!         path       bytes    the source path as given to the compiler (`__FILE__`)
//!         realpath   0 | 1 bytes  its canonical path then (`require_relative` base)
//!         iseq       the top-level instruction sequence, children nested in it
//! data    the bytes after `__END__` (to the end of the file); `DATA` reads them
//! ```
//!
//! An iseq: kind, name, method name, first line, local names, parameters, flags, block
//! depth, outer local names, cache counts, then the code (opcode byte + operands, see
//! `insn`), the line table (deltas), literals (tagged, see `literal`), call sites, the
//! catch table, and last its children (nested iseqs, recursively). Symbols and names are
//! indexes into the symbol table, interned again on load, so `SymId`s never leave a VM.
//!
//! Invariants:
//! - A file from another build of the instruction set is rejected before decoding:
//!   `ISA_HASH` hashes the sources that define what the code means (`iseq.rs`, the stack
//!   effects in `builder.rs`, the opcode table in `insn.rs`) together with `VERSION`.
//! - Inline caches (call, ivar, const, `once`) are never written: only their counts; they
//!   are rebuilt empty on load. `stack_max` is not trusted either: `verify` computes it.
//! - Loading never panics and never runs unchecked code: every index an instruction holds
//!   (local, literal, call, child, cache slot, jump target) is checked, every path's stack
//!   depth is computed (no underflow, one depth per pc, catch handlers at their recorded
//!   depth), outer-local accesses are checked against the enclosing iseqs, and child kinds
//!   against their use. Any failure is a `LoadError` ("invalid bytecode: …") — a file
//!   that is not Carmine bytecode, of another version, truncated or corrupted, all end the
//!   same way, as a Ruby exception the host can rescue.
//! - Loaded iseqs are ordinary heap iseqs: the collector frees them when the program that
//!   holds them is gone, as for parsed code.

mod insn;
mod literal;
mod read;
mod verify;
mod write;

use crate::error::Unwind;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const MAGIC: &[u8; 8] = b"\x89CMB\r\n\x1a\n";
pub const VERSION: u32 = 1;
/// Header bytes before the payload.
pub const HEADER_LEN: usize = 8 + 4 + 8 + 4 + 8 + 8 + 8;
const FLAG_DATA: u32 = 1;

/// FNV-1a 64 of `bytes`, from `seed`.
pub const fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = seed;
    let mut i = 0;
    while i < bytes.len() {
        h ^= bytes[i] as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
        i += 1;
    }
    h
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Hash of the instruction-set definition (see the module invariants).
pub const ISA_HASH: u64 = {
    let h = fnv1a(FNV_OFFSET, &VERSION.to_le_bytes());
    let h = fnv1a(h, include_bytes!("../iseq.rs"));
    let h = fnv1a(h, include_bytes!("../builder.rs"));
    fnv1a(h, include_bytes!("insn.rs"))
};

/// The checksum the header holds for a payload.
pub fn checksum(payload: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, payload)
}

/// Whether `bytes` start like a bytecode file (the CLI's test before parsing a script).
pub fn is_bytecode(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// A program loaded from bytecode.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The top-level iseq (an `RIseq`). Like the result of `compile`, it is not rooted:
    /// protect it before the next allocation.
    pub iseq: Value,
    /// The source path recorded at compile time (`__FILE__`, backtraces).
    pub path: String,
    /// Offset of the `__END__` data within the loaded bytes, if the program has some.
    pub data_offset: Option<usize>,
}

/// Writes a compiled top-level program (from `compile::compile_program*`) and the bytes
/// after its `__END__` (if any) as a bytecode file. Fails (TypeError) only for a literal
/// the format cannot hold, which the compiler does not produce.
pub fn dump(ctx: &mut Ctx, iseq: Value, data: Option<&[u8]>) -> Result<Vec<u8>> {
    write::dump(ctx, iseq, data)
}

/// Loads a bytecode file written by `dump` (by any build with the same `ISA_HASH`).
/// Invalid input of any kind raises `LoadError` ("invalid bytecode: <reason>").
pub fn load(ctx: &mut Ctx, bytes: &[u8]) -> Result<Loaded> {
    read::load(ctx, bytes)
}

/// The `LoadError` for invalid input.
pub(crate) fn invalid(ctx: &mut Ctx, why: &str) -> Unwind {
    let e = ctx.new_error(ctx.c().load_error, &format!("invalid bytecode: {why}"));
    Unwind::Raise(e)
}

#[cfg(test)]
mod tests;
