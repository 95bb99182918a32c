//! File operations that change files or ask the system about names: permissions and
//! owners, times, truncation, links, FIFOs, the umask, `flock`, `File::Constants`, and
//! `split`/`realdirpath`/`File.path`.
//!
//! Invariants: operations over several files (`chmod`, `chown`, `utime`, …) stop at the
//! first failure and raise `Errno::*` with CRuby's function name "apply2files" and that
//! path; otherwise they return the number of files.

use std::ffi::CString;

use super::stat::{cpath_arg, opened_path};
use crate::core::process::{errno_error, last_errno};
use crate::core::{array, integer, numeric, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn shown(c: &CString) -> String {
    String::from_utf8_lossy(c.as_bytes()).into_owned()
}

/// Runs `op` on every path in `files`, raising for the first that fails (as CRuby's
/// apply2files); the count of files.
fn apply2files(ctx: &mut Ctx, files: &[Value], mut op: impl FnMut(&CString) -> i32) -> Result<Value> {
    let mut paths = Vec::with_capacity(files.len());
    for &f in files {
        paths.push(cpath_arg(ctx, f)?);
    }
    for p in &paths {
        if op(p) != 0 {
            let e = last_errno();
            return Err(errno_error(ctx, e, &format!("apply2files - {}", shown(p))));
        }
    }
    Ok(Value::fixnum(paths.len() as i64))
}

fn mode_arg(ctx: &mut Ctx, v: Value) -> Result<libc::mode_t> {
    Ok(integer::to_i64_arg(ctx, v)? as libc::mode_t)
}

/// An owner or group argument: nil or -1 leave it unchanged.
fn id_arg(ctx: &mut Ctx, v: Value) -> Result<u32> {
    if v.is_nil() {
        return Ok(u32::MAX);
    }
    Ok(integer::to_i64_arg(ctx, v)? as u32)
}

fn f_s_chmod(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mode = mode_arg(ctx, args.pos[0])?;
    // SAFETY: p is NUL-terminated.
    apply2files(ctx, &args.pos[1..], |p| unsafe { libc::chmod(p.as_ptr(), mode) })
}

fn f_s_lchmod(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.raise(ctx.c().not_implemented_error, "lchmod() function is unimplemented on this machine"))
}

fn f_s_chown(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (uid, gid) = (id_arg(ctx, args.pos[0])?, id_arg(ctx, args.pos[1])?);
    // SAFETY: p is NUL-terminated.
    apply2files(ctx, &args.pos[2..], |p| unsafe { libc::chown(p.as_ptr(), uid, gid) })
}

fn f_s_lchown(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (uid, gid) = (id_arg(ctx, args.pos[0])?, id_arg(ctx, args.pos[1])?);
    // SAFETY: p is NUL-terminated.
    apply2files(ctx, &args.pos[2..], |p| unsafe { libc::lchown(p.as_ptr(), uid, gid) })
}

/// An `atime`/`mtime` argument of `utime`: nil is now, a Time or a number of seconds.
fn timespec_arg(ctx: &mut Ctx, v: Value) -> Result<libc::timespec> {
    if v.is_nil() {
        return Ok(libc::timespec { tv_sec: 0, tv_nsec: libc::UTIME_NOW });
    }
    if crate::core::time::is_time(v) {
        let s = ctx.call(v, sym::TO_I, &[])?;
        let nsec = ctx.intern("nsec");
        let ns = ctx.call(v, nsec, &[])?;
        return Ok(libc::timespec { tv_sec: integer::to_i64_arg(ctx, s)?, tv_nsec: integer::to_i64_arg(ctx, ns)? });
    }
    if let Some(n) = v.as_fixnum() {
        return Ok(libc::timespec { tv_sec: n, tv_nsec: 0 });
    }
    let f = numeric::to_f64(ctx, v)?;
    let sec = f.floor();
    Ok(libc::timespec { tv_sec: sec as i64, tv_nsec: ((f - sec) * 1e9) as i64 })
}

fn utime_common(ctx: &mut Ctx, args: &Args, flags: i32) -> Result<Value> {
    let times = [timespec_arg(ctx, args.pos[0])?, timespec_arg(ctx, args.pos[1])?];
    // SAFETY: p is NUL-terminated and `times` holds two timespecs.
    apply2files(ctx, &args.pos[2..], |p| unsafe { libc::utimensat(libc::AT_FDCWD, p.as_ptr(), times.as_ptr(), flags) })
}

fn f_s_utime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    utime_common(ctx, args, 0)
}

fn f_s_lutime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    utime_common(ctx, args, libc::AT_SYMLINK_NOFOLLOW)
}

fn f_s_truncate(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = cpath_arg(ctx, args.pos[0])?;
    let len = integer::to_i64_arg(ctx, args.pos[1])?;
    // SAFETY: p is NUL-terminated.
    if unsafe { libc::truncate(p.as_ptr(), len) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("rb_file_s_truncate - {}", shown(&p))));
    }
    Ok(Value::fixnum(0))
}

fn f_s_link(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let a = cpath_arg(ctx, args.pos[0])?;
    let b = cpath_arg(ctx, args.pos[1])?;
    // SAFETY: both paths are NUL-terminated.
    if unsafe { libc::link(a.as_ptr(), b.as_ptr()) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("rb_file_s_link - ({}, {})", shown(&a), shown(&b))));
    }
    Ok(Value::fixnum(0))
}

fn f_s_mkfifo(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = cpath_arg(ctx, args.pos[0])?;
    let mode = match args.pos.get(1) {
        Some(&m) => mode_arg(ctx, m)?,
        None => 0o666,
    };
    // SAFETY: p is NUL-terminated.
    if unsafe { libc::mkfifo(p.as_ptr(), mode) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("rb_file_s_mkfifo - {}", shown(&p))));
    }
    Ok(Value::fixnum(0))
}

/// `File.umask(mask = nil)`: the previous mask; without an argument it is left unchanged.
fn f_s_umask(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let old = match args.pos.first() {
        Some(&m) => {
            let m = mode_arg(ctx, m)?;
            // SAFETY: umask has no preconditions.
            unsafe { libc::umask(m) }
        }
        // SAFETY: set and restore: the only way to read the mask.
        None => unsafe {
            let old = libc::umask(0);
            libc::umask(old);
            old
        },
    };
    Ok(Value::fixnum(old as i64))
}

/// `File.split(path)`: `[dirname, basename]`.
fn f_s_split(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = super::path_arg(ctx, args.pos[0])?;
    let ps = string::new_utf8(ctx, &p);
    let dirname = ctx.intern("dirname");
    let basename = ctx.intern("basename");
    let d = ctx.call(recv, dirname, &[ps])?;
    let b = ctx.call(recv, basename, &[ps])?;
    Ok(array::from_vec(ctx, vec![d, b]))
}

/// `File.path(obj)`: the path of a String or a `to_path` object.
fn f_s_path(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    let s = string::new_binary(ctx, c.as_bytes());
    let src = if string::is_string(args.pos[0]) { args.pos[0] } else { ctx.call(args.pos[0], sym::TO_PATH, &[])? };
    if string::is_string(src) {
        string::set_encoding(s, string::encoding(src));
    }
    Ok(s)
}

/// `File.realdirpath(path, dir = nil)`: like `realpath`, but the last component need not
/// exist.
fn f_s_realdirpath(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = super::path_arg(ctx, args.pos[0])?;
    let base = match args.pos.get(1) {
        Some(&d) if !d.is_nil() => Some(super::path_arg(ctx, d)?),
        _ => None,
    };
    let abs = super::expand_path(&p, base.as_deref());
    let resolved = match std::fs::canonicalize(&abs) {
        Ok(r) => r.to_string_lossy().into_owned(),
        Err(_) => {
            let (dir, last) = abs.rsplit_once('/').unwrap_or(("", abs.as_str()));
            let dir = if dir.is_empty() { "/" } else { dir };
            match std::fs::canonicalize(dir) {
                Ok(d) if d.as_os_str() == "/" => format!("/{last}"),
                Ok(d) => format!("{}/{last}", d.to_string_lossy()),
                Err(e) => return Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &format!("rb_check_realpath_internal - {dir}"))),
            }
        }
    };
    Ok(string::new_utf8(ctx, &resolved))
}

// ---- instance methods ----

fn open_fd(ctx: &mut Ctx, f: Value) -> Result<i32> {
    opened_path(ctx, f)?;
    Ok(crate::core::io::io_ref(f).map_or(-1, |io| io.fd))
}

fn f_chmod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mode = mode_arg(ctx, args.pos[0])?;
    let fd = open_fd(ctx, recv)?;
    // SAFETY: fchmod on an open descriptor.
    if unsafe { libc::fchmod(fd, mode) } != 0 {
        let e = last_errno();
        let p = opened_path(ctx, recv)?;
        return Err(errno_error(ctx, e, &format!("rb_file_chmod - {p}")));
    }
    Ok(Value::fixnum(0))
}

fn f_chown(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (uid, gid) = (id_arg(ctx, args.pos[0])?, id_arg(ctx, args.pos[1])?);
    let fd = open_fd(ctx, recv)?;
    // SAFETY: fchown on an open descriptor.
    if unsafe { libc::fchown(fd, uid, gid) } != 0 {
        let e = last_errno();
        let p = opened_path(ctx, recv)?;
        return Err(errno_error(ctx, e, &format!("rb_file_chown - {p}")));
    }
    Ok(Value::fixnum(0))
}

fn f_truncate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let len = integer::to_i64_arg(ctx, args.pos[0])?;
    let fd = open_fd(ctx, recv)?;
    crate::core::io::flush_value(ctx, recv)?;
    if crate::core::io::io_ref(recv).is_some_and(|io| !io.writable) {
        return Err(ctx.raise(ctx.c().io_error, "not opened for writing"));
    }
    // SAFETY: ftruncate on an open descriptor.
    if unsafe { libc::ftruncate(fd, len) } != 0 {
        let e = last_errno();
        let p = opened_path(ctx, recv)?;
        return Err(errno_error(ctx, e, &format!("rb_file_truncate - {p}")));
    }
    Ok(Value::fixnum(0))
}

/// `File#flock(op)`: false when `LOCK_NB` is given and the lock is held elsewhere; a
/// blocking request waits, polling every 10 ms.
fn f_flock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let op = integer::to_int_arg(ctx, args.pos[0])?;
    let fd = open_fd(ctx, recv)?;
    crate::core::io::flush_value(ctx, recv)?;
    loop {
        // SAFETY: flock on an open descriptor. A blocking request is made as repeated
        // non-blocking attempts with sleeps between them, so the thread sleeps like any
        // blocked thread (status "sleep", Thread#kill and #raise reach it).
        let rc = unsafe { libc::flock(fd, op | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(Value::fixnum(0));
        }
        match last_errno() {
            libc::EWOULDBLOCK if op & libc::LOCK_NB != 0 => return Ok(Value::FALSE),
            libc::EWOULDBLOCK => {
                let deadline = std::time::Instant::now() + std::time::Duration::from_millis(10);
                crate::thread::sched::wait_until(ctx, Some(deadline), |_| Ok(false))?;
            }
            libc::EINTR => crate::thread::sched::check_pending(ctx)?,
            e => {
                let p = opened_path(ctx, recv)?;
                return Err(errno_error(ctx, e, &format!("rb_file_flock - {p}")));
            }
        }
    }
}

/// `File::Constants`: open flags, lock operations, fnmatch flags, NULL; included in IO
/// (so `IO::RDONLY` and `File::RDONLY` both work).
fn define_constants(ctx: &mut Ctx) {
    let obj = ctx.c().file;
    let consts = crate::core::module_methods::define_module_under(ctx, obj, "Constants");
    let ints: &[(&str, i64)] = &[
        ("RDONLY", libc::O_RDONLY as i64),
        ("WRONLY", libc::O_WRONLY as i64),
        ("RDWR", libc::O_RDWR as i64),
        ("APPEND", libc::O_APPEND as i64),
        ("CREAT", libc::O_CREAT as i64),
        ("EXCL", libc::O_EXCL as i64),
        ("NONBLOCK", libc::O_NONBLOCK as i64),
        ("TRUNC", libc::O_TRUNC as i64),
        ("NOCTTY", libc::O_NOCTTY as i64),
        ("BINARY", 0),
        ("SHARE_DELETE", 0),
        ("SYNC", libc::O_SYNC as i64),
        ("DSYNC", libc::O_DSYNC as i64),
        ("RSYNC", libc::O_RSYNC as i64),
        ("NOFOLLOW", libc::O_NOFOLLOW as i64),
        ("NOATIME", libc::O_NOATIME as i64),
        ("DIRECT", libc::O_DIRECT as i64),
        ("TMPFILE", libc::O_TMPFILE as i64),
        ("DIRECTORY", libc::O_DIRECTORY as i64),
        ("LOCK_SH", libc::LOCK_SH as i64),
        ("LOCK_EX", libc::LOCK_EX as i64),
        ("LOCK_UN", libc::LOCK_UN as i64),
        ("LOCK_NB", libc::LOCK_NB as i64),
        ("FNM_SYSCASE", 0),
        ("FNM_NOESCAPE", super::fnmatch::FNM_NOESCAPE as i64),
        ("FNM_PATHNAME", super::fnmatch::FNM_PATHNAME as i64),
        ("FNM_DOTMATCH", super::fnmatch::FNM_DOTMATCH as i64),
        ("FNM_CASEFOLD", super::fnmatch::FNM_CASEFOLD as i64),
        ("FNM_EXTGLOB", super::fnmatch::FNM_EXTGLOB as i64),
        ("FNM_SHORTNAME", 0),
    ];
    for &(name, v) in ints {
        let id = ctx.intern(name);
        crate::core::module::body(consts).const_set(id, Value::fixnum(v));
    }
    let null = string::new_utf8(ctx, "/dev/null");
    let id = ctx.intern("NULL");
    crate::core::module::body(consts).const_set(id, null);
    let io = ctx.c().io;
    crate::core::module::body(io).includes.push(consts);
    let alt = ctx.intern("ALT_SEPARATOR");
    crate::core::module::body(obj).const_set(alt, Value::NIL);
}

pub fn init(ctx: &mut Ctx) {
    define_constants(ctx);
    let f = ctx.c().file;
    crate::methods!(ctx, f, [
        ("chmod", f_s_chmod, [1..], Unsafe, Singleton),
        ("lchmod", f_s_lchmod, [1..], Unsafe, Singleton),
        ("chown", f_s_chown, [2..], Unsafe, Singleton),
        ("lchown", f_s_lchown, [2..], Unsafe, Singleton),
        ("utime", f_s_utime, [2..], Unsafe, Singleton),
        ("lutime", f_s_lutime, [2..], Unsafe, Singleton),
        ("truncate", f_s_truncate, [2], Unsafe, Singleton),
        ("link", f_s_link, [2], Unsafe, Singleton),
        ("mkfifo", f_s_mkfifo, [1..=2], Unsafe, Singleton),
        ("umask", f_s_umask, [0..=1], Unsafe, Singleton),
        ("split", f_s_split, [1], Unsafe, Singleton),
        ("path", f_s_path, [1], Unsafe, Singleton),
        ("realdirpath", f_s_realdirpath, [1..=2], Unsafe, Singleton),
        ("chmod", f_chmod, [1], Unsafe),
        ("chown", f_chown, [2], Unsafe),
        ("truncate", f_truncate, [1], Unsafe),
        ("flock", f_flock, [1], Unsafe),
    ]);
}
