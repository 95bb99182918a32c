//! File-system operations beyond opening files (io.rs): `Kernel#test`, `Kernel#open`,
//! `File.symlink`/`rename`/`readlink`.
//!
//! Errors are `Errno::*` exceptions named after the CRuby function that failed, as
//! `process::errno_error` formats them ("No such file or directory @ rb_file_s_rename - a").

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use crate::core::string;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;


fn sys_err(ctx: &mut Ctx, e: std::io::Error, func: &str, detail: &str) -> crate::error::Unwind {
    crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &format!("{func} - {detail}"))
}

/// access(2) with the real (`real`) or effective ids.
fn accessible(path: &str, mode: i32, real: bool) -> bool {
    let Ok(c) = std::ffi::CString::new(path) else { return false };
    // SAFETY: c is a valid NUL-terminated path.
    unsafe {
        if real {
            libc::access(c.as_ptr(), mode) == 0
        } else {
            libc::eaccess(c.as_ptr(), mode) == 0
        }
    }
}

/// `test(cmd, file1, file2 = nil)`: the one-letter file tests of CRuby's Kernel#test.
fn k_test(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let cmd = args.pos[0];
    let c = if let Some(n) = cmd.as_fixnum() {
        n as u8 as char
    } else {
        let s = string::to_str_arg(ctx, cmd)?;
        match string::bytes(s).first() {
            Some(&b) => b as char,
            None => return Err(ctx.arg_error("wrong test command")),
        }
    };
    if args.pos.len() < 2 {
        return Err(ctx.arity_error(args.pos.len(), 2, Some(3)));
    }
    let p = crate::core::file::path_arg(ctx, args.pos[1])?;
    let meta = std::fs::metadata(&p);
    let lmeta = std::fs::symlink_metadata(&p);
    let two = matches!(c, '=' | '<' | '>' | '-');
    if two {
        let Some(&other) = args.pos.get(2) else { return Err(ctx.arity_error(2, 3, Some(3))) };
        let q = crate::core::file::path_arg(ctx, other)?;
        let (a, b) = match (std::fs::metadata(&p), std::fs::metadata(&q)) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) => return Err(sys_err(ctx, e, "rb_f_test", &p)),
            (_, Err(e)) => return Err(sys_err(ctx, e, "rb_f_test", &q)),
        };
        return Ok(Value::bool(match c {
            '=' => a.mtime() == b.mtime() && a.mtime_nsec() == b.mtime_nsec(),
            '<' => (a.mtime(), a.mtime_nsec()) < (b.mtime(), b.mtime_nsec()),
            '>' => (a.mtime(), a.mtime_nsec()) > (b.mtime(), b.mtime_nsec()),
            _ => a.dev() == b.dev() && a.ino() == b.ino(),
        }));
    }
    let mode = |m: &std::io::Result<std::fs::Metadata>| m.as_ref().map(|m| m.permissions().mode()).unwrap_or(0);
    let ft = |m: &std::io::Result<std::fs::Metadata>| m.as_ref().ok().map(|m| m.file_type());
    use std::os::unix::fs::FileTypeExt;
    Ok(match c {
        'e' => Value::bool(meta.is_ok()),
        'f' => Value::bool(ft(&meta).is_some_and(|t| t.is_file())),
        'd' => Value::bool(ft(&meta).is_some_and(|t| t.is_dir())),
        'l' => Value::bool(ft(&lmeta).is_some_and(|t| t.is_symlink())),
        'p' => Value::bool(ft(&meta).is_some_and(|t| t.is_fifo())),
        'S' => Value::bool(ft(&meta).is_some_and(|t| t.is_socket())),
        'b' => Value::bool(ft(&meta).is_some_and(|t| t.is_block_device())),
        'c' => Value::bool(ft(&meta).is_some_and(|t| t.is_char_device())),
        'r' => Value::bool(accessible(&p, libc::R_OK, false)),
        'R' => Value::bool(accessible(&p, libc::R_OK, true)),
        'w' => Value::bool(accessible(&p, libc::W_OK, false)),
        'W' => Value::bool(accessible(&p, libc::W_OK, true)),
        'x' => Value::bool(accessible(&p, libc::X_OK, false)),
        'X' => Value::bool(accessible(&p, libc::X_OK, true)),
        'u' => Value::bool(mode(&meta) & libc::S_ISUID != 0),
        'g' => Value::bool(mode(&meta) & libc::S_ISGID != 0),
        'k' => Value::bool(mode(&meta) & libc::S_ISVTX != 0),
        // SAFETY: geteuid/getuid cannot fail.
        'o' => Value::bool(meta.as_ref().is_ok_and(|m| m.uid() == unsafe { libc::geteuid() })),
        'O' => Value::bool(meta.as_ref().is_ok_and(|m| m.uid() == unsafe { libc::getuid() })),
        'G' => Value::bool(meta.as_ref().is_ok_and(|m| m.gid() == unsafe { libc::getegid() })),
        'z' => Value::bool(meta.as_ref().is_ok_and(|m| m.len() == 0)),
        's' => match &meta {
            Ok(m) if m.len() > 0 => Value::fixnum(m.len() as i64),
            _ => Value::NIL,
        },
        'M' | 'A' | 'C' => {
            let m = match meta {
                Ok(m) => m,
                Err(e) => return Err(sys_err(ctx, e, "rb_f_test", &p)),
            };
            let (secs, nsec) = match c {
                'M' => (m.mtime(), m.mtime_nsec()),
                'A' => (m.atime(), m.atime_nsec()),
                _ => (m.ctime(), m.ctime_nsec()),
            };
            let t = ctx.c().time;
            let at = ctx.intern("at");
            let s = Value::fixnum(secs);
            let ns = Value::fixnum(nsec);
            let unit = Value::symbol(ctx.intern("nanosecond"));
            ctx.call(t, at, &[s, ns, unit])?
        }
        other => return Err(ctx.arg_error(&format!("unknown command '{other}'"))),
    })
}

/// `Kernel#open(path, *rest, **opts, &block)`: an object's `to_open`, a `"|cmd"` pipe
/// (IO.popen) or `File.open`.
fn k_open(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(&first) = args.pos.first() else { return Err(ctx.arity_error(0, 1, Some(3))) };
    let to_open = ctx.intern("to_open");
    if first.is_heap() && !string::is_string(first) && ctx.respond_to(first, to_open, true) {
        let r = ctx.call_kw(first, to_open, &args.pos[1..], args.kw, None)?;
        return match args.block {
            Some(b) => ctx.yield1(&b, r),
            None => Ok(r),
        };
    }
    let path = crate::core::file::path_arg(ctx, first)?;
    let (target, mid, mut pos) = match path.strip_prefix('|') {
        Some(cmd) => {
            let c = string::new_utf8(ctx, cmd);
            (ctx.c().io, ctx.intern("popen"), vec![c])
        }
        None => (ctx.c().file, ctx.intern("open"), vec![first]),
    };
    pos.extend_from_slice(&args.pos[1..]);
    ctx.call_kw(target, mid, &pos, args.kw, args.block)
}

fn f_symlink(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = (crate::core::file::path_arg(ctx, args.pos[0])?, crate::core::file::path_arg(ctx, args.pos[1])?);
    match std::os::unix::fs::symlink(&a, &b) {
        Ok(()) => Ok(Value::fixnum(0)),
        Err(e) => Err(sys_err(ctx, e, "rb_file_s_symlink", &format!("({a}, {b})"))),
    }
}

fn f_readlink(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = crate::core::file::path_arg(ctx, args.pos[0])?;
    match std::fs::read_link(&p) {
        Ok(t) => Ok(string::new_utf8(ctx, &t.to_string_lossy())),
        Err(e) => Err(sys_err(ctx, e, "rb_readlink", &p)),
    }
}

fn f_rename(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = (crate::core::file::path_arg(ctx, args.pos[0])?, crate::core::file::path_arg(ctx, args.pos[1])?);
    match std::fs::rename(&a, &b) {
        Ok(()) => Ok(Value::fixnum(0)),
        Err(e) => Err(sys_err(ctx, e, "rb_file_s_rename", &format!("({a}, {b})"))),
    }
}


pub fn init(ctx: &mut Ctx) {
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("test", k_test, [2..=3], Unsafe, ModuleFunction),
        ("open", k_open, [1..], Unsafe, ModuleFunction, Kw),
    ]);
    let f = ctx.c().file;
    crate::methods!(ctx, f, [
        ("symlink", f_symlink, [2], Unsafe, Singleton),
        ("readlink", f_readlink, [1], Unsafe, Singleton),
        ("rename", f_rename, [2], Unsafe, Singleton),
    ]);
}
