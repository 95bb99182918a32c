//! FileTest: the file predicates, defined as FileTest module functions and as singleton
//! methods of File.
//!
//! Invariants: a predicate never raises for a file that does not exist or cannot be
//! reached (it answers false/nil); it raises only for a bad argument (TypeError,
//! ArgumentError for a NUL byte, IOError for a closed IO). An IO argument is asked through
//! its descriptor. The access predicates (`readable?` …) ask access(2)/eaccess(2), as
//! CRuby does, so ACLs and read-only mounts count.

use super::stat::{cpath_arg, predicate, stat_arg, try_stat, world};
use crate::core::module::{Arity, BuiltinFn, ThreadSafety};
use crate::core::DefFlag;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Predicates answered from stat(2) (or lstat(2) for `symlink?`).
macro_rules! stat_tests {
    ($($fname:ident => $name:expr;)*) => {
        $(fn $fname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
            let st = try_stat(ctx, args.pos[0], $name != "symlink?")?;
            Ok(Value::bool(st.is_some_and(|st| predicate(&st, $name))))
        })*
    };
}

stat_tests! {
    t_file => "file?";
    t_directory => "directory?";
    t_symlink => "symlink?";
    t_pipe => "pipe?";
    t_socket => "socket?";
    t_blockdev => "blockdev?";
    t_chardev => "chardev?";
    t_setuid => "setuid?";
    t_setgid => "setgid?";
    t_sticky => "sticky?";
    t_owned => "owned?";
    t_grpowned => "grpowned?";
    t_zero => "zero?";
}

/// access(2) (`real`) or eaccess(2) of a path argument for `mode`.
fn access_test(ctx: &mut Ctx, v: Value, mode: i32, real: bool) -> Result<Value> {
    let c = cpath_arg(ctx, v)?;
    // SAFETY: c is a valid NUL-terminated path.
    let ok = unsafe { if real { libc::access(c.as_ptr(), mode) } else { libc::eaccess(c.as_ptr(), mode) } } == 0;
    Ok(Value::bool(ok))
}

fn t_readable(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    access_test(ctx, args.pos[0], libc::R_OK, false)
}

fn t_readable_real(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    access_test(ctx, args.pos[0], libc::R_OK, true)
}

fn t_writable(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    access_test(ctx, args.pos[0], libc::W_OK, false)
}

fn t_writable_real(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    access_test(ctx, args.pos[0], libc::W_OK, true)
}

fn t_executable(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    access_test(ctx, args.pos[0], libc::X_OK, false)
}

fn t_executable_real(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    access_test(ctx, args.pos[0], libc::X_OK, true)
}

fn t_exist(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(try_stat(ctx, args.pos[0], true)?.is_some()))
}

fn t_world_readable(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(try_stat(ctx, args.pos[0], true)?.map_or(Value::NIL, |st| world(&st, libc::S_IROTH)))
}

fn t_world_writable(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(try_stat(ctx, args.pos[0], true)?.map_or(Value::NIL, |st| world(&st, libc::S_IWOTH)))
}

/// `size?`: the size, or nil for a missing or empty file.
fn t_size_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(match try_stat(ctx, args.pos[0], true)? {
        Some(st) if st.st_size > 0 => Value::fixnum(st.st_size),
        _ => Value::NIL,
    })
}

/// `size`: the size, raising `Errno::*` for a missing file.
fn t_size(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    crate::core::io::flush_value(ctx, args.pos[0])?;
    let st = stat_arg(ctx, args.pos[0], true, "rb_file_s_size")?;
    Ok(Value::fixnum(st.st_size))
}

/// `identical?(a, b)`: both exist and are the same file (device and inode).
fn t_identical(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let a = try_stat(ctx, args.pos[0], true)?;
    let b = try_stat(ctx, args.pos[1], true)?;
    Ok(Value::bool(matches!((a, b), (Some(a), Some(b)) if a.st_dev == b.st_dev && a.st_ino == b.st_ino)))
}

/// Every predicate with its arity, shared by FileTest and File.
const TESTS: &[(&str, BuiltinFn, u8)] = &[
    ("exist?", t_exist, 1),
    ("file?", t_file, 1),
    ("directory?", t_directory, 1),
    ("symlink?", t_symlink, 1),
    ("pipe?", t_pipe, 1),
    ("socket?", t_socket, 1),
    ("blockdev?", t_blockdev, 1),
    ("chardev?", t_chardev, 1),
    ("setuid?", t_setuid, 1),
    ("setgid?", t_setgid, 1),
    ("sticky?", t_sticky, 1),
    ("owned?", t_owned, 1),
    ("grpowned?", t_grpowned, 1),
    ("zero?", t_zero, 1),
    ("empty?", t_zero, 1),
    ("readable?", t_readable, 1),
    ("readable_real?", t_readable_real, 1),
    ("writable?", t_writable, 1),
    ("writable_real?", t_writable_real, 1),
    ("executable?", t_executable, 1),
    ("executable_real?", t_executable_real, 1),
    ("world_readable?", t_world_readable, 1),
    ("world_writable?", t_world_writable, 1),
    ("size?", t_size_p, 1),
    ("size", t_size, 1),
    ("identical?", t_identical, 2),
];

pub fn init(ctx: &mut Ctx) {
    let ft = ctx.c().file_test;
    let f = ctx.c().file;
    for &(name, func, arity) in TESTS {
        crate::core::define(ctx, ft, name, func, Arity::exact(arity), ThreadSafety::Unsafe, &[DefFlag::ModuleFunction]);
        crate::core::define(ctx, f, name, func, Arity::exact(arity), ThreadSafety::Unsafe, &[DefFlag::Singleton]);
    }
}
