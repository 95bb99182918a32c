//! `require "zlib"`: the Zlib module over zlib-rs (a zlib written in Rust, used through
//! its zlib-compatible C API in `libz-rs-sys`): constants, the error classes, checksums,
//! `Zlib.deflate/inflate`, and the streams (`zstream.rs`). The gzip file classes
//! (GzipFile, GzipReader, GzipWriter, `Zlib.gzip/gunzip`) are Ruby code on top of them,
//! `lib/carmine/zlib/gzip.rb`, which the init requires.
//!
//! Invariants:
//! - zlib errors become CRuby's classes (`Zlib::DataError` for Z_DATA_ERROR …) with
//!   zlib's own message ("incorrect header check") or zError's text when it has none.
//! - Error classes are found by constant lookup under `Zlib` when raised; nothing is
//!   cached outside the VM.

pub mod zstream;

use crate::core::{array, integer, load, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::stdlib::{class_under, const_of, module_under};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
use libz_rs_sys as z;

/// The `Zlib` module.
pub fn zlib_module(ctx: &mut Ctx) -> Value {
    let obj = ctx.c().object;
    module_under(ctx, obj, "Zlib")
}

/// An exception of `Zlib::<name>` (a path such as `GzipFile::Error` is allowed).
pub fn error(ctx: &mut Ctx, name: &str, msg: &str) -> Unwind {
    let mut k = zlib_module(ctx);
    for part in name.split("::") {
        k = const_of(ctx, k, part).unwrap_or(ctx.c().standard_error);
    }
    ctx.raise(k, msg)
}

/// The exception for zlib's return code `code`, with zlib's message `msg` if it set one.
pub fn zlib_error(ctx: &mut Ctx, code: i32, msg: Option<String>) -> Unwind {
    let (name, default) = match code {
        z::Z_STREAM_END => ("StreamEnd", "stream end"),
        z::Z_NEED_DICT => ("NeedDict", "need dictionary"),
        z::Z_STREAM_ERROR => ("StreamError", "stream error"),
        z::Z_DATA_ERROR => ("DataError", "data error"),
        z::Z_BUF_ERROR => ("BufError", "buffer error"),
        z::Z_VERSION_ERROR => ("VersionError", "incompatible version"),
        z::Z_MEM_ERROR => ("MemError", "insufficient memory"),
        z::Z_ERRNO => ("Error", "file error"),
        _ => ("Error", "unknown zlib error"),
    };
    let msg = msg.unwrap_or_else(|| default.to_string());
    error(ctx, name, &msg)
}

/// The unsigned 32-bit value of a checksum argument.
fn checksum_arg(ctx: &mut Ctx, v: Value) -> Result<u32> {
    let v = integer::to_integer_arg(ctx, v)?;
    if let Some(i) = v.as_fixnum() {
        return Ok(i as u32);
    }
    // CRuby's NUM2ULONG: anything in -2**63 ... 2**64 wraps, the rest is out of range.
    let big = crate::core::bignum::to_big(v);
    let fits = big >= num_bigint::BigInt::from(i64::MIN) && big < (num_bigint::BigInt::from(1u8) << 64);
    if !fits {
        return Err(ctx.range_error("bignum too big to convert into 'unsigned long'"));
    }
    Ok(crate::core::bignum::low_u64_any(v) as u32)
}

/// `Zlib.crc32(str = nil, crc = 0)` / `Zlib.adler32(str = nil, adler = 1)`.
fn checksum(ctx: &mut Ctx, args: &Args, adler: bool) -> Result<Value> {
    let init = if adler { 1 } else { 0 };
    let start = match args.pos.get(1) {
        Some(&v) => checksum_arg(ctx, v)?,
        None => init,
    };
    let Some(&s) = args.pos.first().filter(|v| !v.is_nil()) else {
        return Ok(Value::fixnum(init as i64));
    };
    let s = string::to_str_arg(ctx, s)?;
    let b = string::bytes(s);
    let sum = if adler { adler32(start, b) } else { crc32(start, b) };
    Ok(Value::fixnum(sum as i64))
}

pub fn crc32(start: u32, b: &[u8]) -> u32 {
    // SAFETY: the pointer and length describe `b`.
    unsafe { z::crc32_z(start as _, b.as_ptr(), b.len()) as u32 }
}

pub fn adler32(start: u32, b: &[u8]) -> u32 {
    // SAFETY: the pointer and length describe `b`.
    unsafe { z::adler32_z(start as _, b.as_ptr(), b.len()) as u32 }
}

fn s_crc32(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    checksum(ctx, args, false)
}

fn s_adler32(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    checksum(ctx, args, true)
}

fn combine_args(ctx: &mut Ctx, args: &Args) -> Result<(u32, u32, i64)> {
    Ok((checksum_arg(ctx, args.pos[0])?, checksum_arg(ctx, args.pos[1])?, integer::to_i64_arg(ctx, args.pos[2])?))
}

fn s_crc32_combine(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (a, b, n) = combine_args(ctx, args)?;
    Ok(Value::fixnum(z::crc32_combine64(a as _, b as _, n) as i64))
}

fn s_adler32_combine(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (a, b, n) = combine_args(ctx, args)?;
    Ok(Value::fixnum(z::adler32_combine64(a as _, b as _, n) as i64))
}

fn s_crc_table(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: get_crc_table returns a pointer to a static table of 256 entries.
    let table = unsafe { &*z::get_crc_table() };
    let items: Vec<Value> = table.iter().map(|&x| Value::fixnum(x as i64)).collect();
    Ok(array::from_vec(ctx, items))
}

/// zlib's version text.
pub fn version() -> String {
    // SAFETY: zlibVersion returns a static NUL-terminated string.
    let p = unsafe { std::ffi::CStr::from_ptr(z::zlibVersion()) };
    let v = p.to_string_lossy();
    // "1.3.0-zlib-rs-0.5.5": the zlib API level comes first.
    v.split('-').next().unwrap_or("1.3.0").to_string()
}

fn s_zlib_version(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_us_ascii(ctx, &version()))
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let zlib = zlib_module(ctx);
    let std_err = ctx.c().standard_error;
    let error = class_under(ctx, zlib, "Error", std_err);
    for name in ["StreamEnd", "NeedDict", "DataError", "StreamError", "MemError", "BufError", "VersionError", "InProgressError"] {
        class_under(ctx, zlib, name, error);
    }
    let ver = string::new_us_ascii(ctx, "2.1.1");
    let zv = string::new_us_ascii(ctx, &version());
    let consts: &[(&str, Value)] = &[
        ("VERSION", crate::core::object::freeze(ver)),
        ("ZLIB_VERSION", crate::core::object::freeze(zv)),
        ("BINARY", Value::fixnum(z::Z_BINARY as i64)),
        ("ASCII", Value::fixnum(z::Z_TEXT as i64)),
        ("TEXT", Value::fixnum(z::Z_TEXT as i64)),
        ("UNKNOWN", Value::fixnum(z::Z_UNKNOWN as i64)),
        ("NO_COMPRESSION", Value::fixnum(0)),
        ("BEST_SPEED", Value::fixnum(1)),
        ("BEST_COMPRESSION", Value::fixnum(9)),
        ("DEFAULT_COMPRESSION", Value::fixnum(-1)),
        ("FILTERED", Value::fixnum(z::Z_FILTERED as i64)),
        ("HUFFMAN_ONLY", Value::fixnum(z::Z_HUFFMAN_ONLY as i64)),
        ("RLE", Value::fixnum(z::Z_RLE as i64)),
        ("FIXED", Value::fixnum(z::Z_FIXED as i64)),
        ("DEFAULT_STRATEGY", Value::fixnum(0)),
        ("MAX_WBITS", Value::fixnum(15)),
        ("DEF_MEM_LEVEL", Value::fixnum(8)),
        ("MAX_MEM_LEVEL", Value::fixnum(9)),
        ("NO_FLUSH", Value::fixnum(z::Z_NO_FLUSH as i64)),
        ("SYNC_FLUSH", Value::fixnum(z::Z_SYNC_FLUSH as i64)),
        ("FULL_FLUSH", Value::fixnum(z::Z_FULL_FLUSH as i64)),
        ("FINISH", Value::fixnum(z::Z_FINISH as i64)),
        ("OS_CODE", Value::fixnum(3)),
        ("OS_MSDOS", Value::fixnum(0)),
        ("OS_AMIGA", Value::fixnum(1)),
        ("OS_VMS", Value::fixnum(2)),
        ("OS_UNIX", Value::fixnum(3)),
        ("OS_VMCMS", Value::fixnum(4)),
        ("OS_ATARI", Value::fixnum(5)),
        ("OS_OS2", Value::fixnum(6)),
        ("OS_MACOS", Value::fixnum(7)),
        ("OS_ZSYSTEM", Value::fixnum(8)),
        ("OS_CPM", Value::fixnum(9)),
        ("OS_TOPS20", Value::fixnum(10)),
        ("OS_WIN32", Value::fixnum(11)),
        ("OS_QDOS", Value::fixnum(12)),
        ("OS_RISCOS", Value::fixnum(13)),
        ("OS_UNKNOWN", Value::fixnum(255)),
    ];
    for &(name, v) in consts {
        let id = ctx.intern(name);
        crate::core::module::body(zlib).const_set(id, v);
    }
    crate::methods!(ctx, zlib, [
        ("crc32", s_crc32, [0..=2], Safe, ModuleFunction),
        ("adler32", s_adler32, [0..=2], Safe, ModuleFunction),
        ("crc32_combine", s_crc32_combine, [3], Safe, ModuleFunction),
        ("adler32_combine", s_adler32_combine, [3], Safe, ModuleFunction),
        ("crc_table", s_crc_table, [0], Safe, ModuleFunction),
        ("zlib_version", s_zlib_version, [0], Safe, ModuleFunction),
    ]);
    zstream::init(ctx, zlib);
    load::require(ctx, "carmine/zlib/gzip")?;
    Ok(())
}
