//! `IO.copy_stream(src, dst, copy_length = nil, src_offset = nil)`.
//!
//! Invariants:
//! - A source or destination is a path (opened here and closed before returning), an IO
//!   (used as it is and left open), or any object with `readpartial`/`read` (source) or
//!   `write` (destination).
//! - Between two descriptors the bytes move in the kernel (copy_file_range, else sendfile,
//!   else read/write through one buffer), without the giant lock; a source IO's buffered
//!   input is written first, a destination's buffered output is flushed first.
//! - With `src_offset` the source is read with pread and its position does not move.

use crate::core::io::{check_readable, close, flush_value, io_ref, IoObj};
use crate::core::process::{errno_error, last_errno};
use crate::core::{integer, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const CHUNK: usize = 1 << 16;

/// One end of the copy.
enum End {
    /// An IO object; `owned` when opened here from a path.
    Io { v: Value, owned: bool },
    Object(Value),
}

fn is_path(ctx: &mut Ctx, v: Value) -> bool {
    string::is_string(v) || (v.is_heap() && ctx.respond_to(v, crate::symbol::sym::TO_PATH, true))
}

fn open_end(ctx: &mut Ctx, v: Value, write: bool) -> Result<End> {
    if io_ref(v).is_some() {
        return Ok(End::Io { v, owned: false });
    }
    if is_path(ctx, v) {
        let c = crate::core::file::stat::cpath_arg(ctx, v)?;
        let m = crate::core::io::open_mode::mode_from_flags(if write { libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC } else { libc::O_RDONLY });
        let file = ctx.c().file;
        let f = crate::core::file::open_path(ctx, file, &c, m, 0o666)?;
        return Ok(End::Io { v: f, owned: true });
    }
    let to_io = ctx.intern("to_io");
    if v.is_heap() && ctx.respond_to(v, to_io, true) {
        let io = ctx.call(v, to_io, &[])?;
        if io_ref(io).is_some() {
            return Ok(End::Io { v: io, owned: false });
        }
    }
    Ok(End::Object(v))
}

fn opt_int(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<i64>> {
    match v {
        Some(&v) if !v.is_nil() => Ok(Some(integer::to_i64_arg(ctx, v)?)),
        _ => Ok(None),
    }
}

/// Writes all of `b` to a destination.
fn put(ctx: &mut Ctx, dst: &End, b: &[u8]) -> Result<()> {
    match dst {
        End::Io { v, .. } => write_all_fd(ctx, io_ref(*v).expect("io").fd, b),
        End::Object(o) => {
            let s = string::new_binary(ctx, b);
            ctx.call(*o, crate::symbol::sym::WRITE, &[s])?;
            Ok(())
        }
    }
}

fn write_all_fd(ctx: &mut Ctx, fd: i32, mut b: &[u8]) -> Result<()> {
    while !b.is_empty() {
        let n = crate::thread::sched::without_gl(ctx, || {
            // SAFETY: b is a valid buffer.
            unsafe { libc::write(fd, b.as_ptr() as *const libc::c_void, b.len()) }
        });
        if n < 0 {
            match last_errno() {
                libc::EINTR => continue,
                libc::EAGAIN => {
                    crate::thread::sched::wait_writable(ctx, fd)?;
                    continue;
                }
                e => return Err(errno_error(ctx, e, "")),
            }
        }
        b = &b[n as usize..];
    }
    Ok(())
}

/// Moves up to `left` bytes (None: to the end) from `sfd` to `dfd` in the kernel, or by
/// read/write when the kernel cannot; the count moved.
fn copy_fds(ctx: &mut Ctx, sfd: i32, dfd: i32, mut left: Option<u64>, mut offset: Option<i64>) -> Result<u64> {
    let mut total = 0u64;
    let mut kernel = true;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let want = left.map_or(CHUNK * 16, |l| (l as usize).min(CHUNK * 16));
        if want == 0 {
            return Ok(total);
        }
        let n = if kernel {
            let off_ptr = offset.as_mut().map_or(std::ptr::null_mut(), |o| o as *mut i64) as usize;
            let r = crate::thread::sched::without_gl(ctx, || {
                // SAFETY: descriptors are open; off_ptr is null or points at a live i64.
                unsafe { libc::copy_file_range(sfd, off_ptr as *mut i64, dfd, std::ptr::null_mut(), want, 0) }
            });
            if r < 0 && matches!(last_errno(), libc::EXDEV | libc::EINVAL | libc::ENOSYS | libc::EBADF | libc::EOPNOTSUPP) {
                kernel = false;
                continue;
            }
            r
        } else {
            let len = want.min(buf.len());
            let r = crate::thread::sched::without_gl(ctx, || match offset {
                // SAFETY: buf holds len writable bytes.
                Some(o) => unsafe { libc::pread(sfd, buf.as_mut_ptr() as *mut libc::c_void, len, o) },
                // SAFETY: as above.
                None => unsafe { libc::read(sfd, buf.as_mut_ptr() as *mut libc::c_void, len) },
            });
            if r > 0 {
                write_all_fd(ctx, dfd, &buf[..r as usize])?;
                if let Some(o) = offset.as_mut() {
                    *o += r as i64;
                }
            }
            r
        };
        if n < 0 {
            match last_errno() {
                libc::EINTR => continue,
                libc::EAGAIN => {
                    crate::thread::sched::wait_readable(ctx, sfd)?;
                    continue;
                }
                e => return Err(errno_error(ctx, e, "")),
            }
        }
        if n == 0 {
            return Ok(total);
        }
        total += n as u64;
        if let Some(l) = left.as_mut() {
            *l -= n as u64;
        }
        crate::thread::sched::check_pending(ctx)?;
    }
}

/// Reads a chunk from a non-IO source through `readpartial` (or `read`); None at the end.
fn read_object(ctx: &mut Ctx, src: Value, n: usize) -> Result<Option<Vec<u8>>> {
    let readpartial = ctx.intern("readpartial");
    // The caller's buffer argument is passed, as CRuby does (sources may require it).
    let len = Value::fixnum(n as i64);
    let buf = string::new_binary(ctx, b"");
    let r = if ctx.respond_to(src, readpartial, true) {
        match ctx.call(src, readpartial, &[len, buf]) {
            Ok(v) => v,
            Err(crate::error::Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().eof_error) => return Ok(None),
            Err(e) => return Err(e),
        }
    } else {
        ctx.call(src, crate::symbol::sym::READ, &[len, buf])?
    };
    if r.is_nil() {
        return Ok(None);
    }
    let s = string::to_str_arg(ctx, r)?;
    let b = string::bytes(s).to_vec();
    Ok(if b.is_empty() { None } else { Some(b) })
}

fn copy(ctx: &mut Ctx, src: &End, dst: &End, len: Option<i64>, offset: Option<i64>) -> Result<u64> {
    let mut left = len.map(|l| l.max(0) as u64);
    if left == Some(0) {
        return Ok(0);
    }
    if let End::Io { v, .. } = dst {
        let io = io_ref(*v).expect("io");
        if io.closed {
            return Err(ctx.raise(ctx.c().io_error, "closed stream"));
        }
        if !io.writable {
            return Err(ctx.raise(ctx.c().io_error, "not opened for writing"));
        }
        flush_value(ctx, *v)?;
    }
    let mut total = 0u64;
    match src {
        End::Io { v, .. } => {
            check_readable(ctx, *v)?;
            let io: &mut IoObj = io_ref(*v).expect("io");
            if offset.is_none() && io.rpos < io.rbuf.len() {
                let take = left.map_or(io.rbuf.len() - io.rpos, |l| (l as usize).min(io.rbuf.len() - io.rpos));
                let bytes = io.rbuf[io.rpos..io.rpos + take].to_vec();
                io.rpos += take;
                put(ctx, dst, &bytes)?;
                total += take as u64;
                if let Some(l) = left.as_mut() {
                    *l -= take as u64;
                    if *l == 0 {
                        return Ok(total);
                    }
                }
            }
            let sfd = io_ref(*v).expect("io").fd;
            // pread needs a seekable source (ESPIPE otherwise, as in CRuby).
            // SAFETY: lseek with SEEK_CUR only queries the position.
            if offset.is_some() && unsafe { libc::lseek(sfd, 0, libc::SEEK_CUR) } < 0 {
                let e = last_errno();
                return Err(errno_error(ctx, e, ""));
            }
            match dst {
                End::Io { v: d, .. } => {
                    let dfd = io_ref(*d).expect("io").fd;
                    total += copy_fds(ctx, sfd, dfd, left, offset)?;
                }
                End::Object(_) => {
                    let mut off = offset;
                    let mut buf = vec![0u8; CHUNK];
                    loop {
                        let want = left.map_or(CHUNK, |l| (l as usize).min(CHUNK));
                        if want == 0 {
                            break;
                        }
                        crate::thread::sched::wait_readable(ctx, sfd)?;
                        let r = match off {
                            // SAFETY: buf holds `want` writable bytes.
                            Some(o) => unsafe { libc::pread(sfd, buf.as_mut_ptr() as *mut libc::c_void, want, o) },
                            // SAFETY: as above.
                            None => unsafe { libc::read(sfd, buf.as_mut_ptr() as *mut libc::c_void, want) },
                        };
                        if r < 0 {
                            match last_errno() {
                                libc::EINTR => continue,
                                e => return Err(errno_error(ctx, e, "")),
                            }
                        }
                        if r == 0 {
                            break;
                        }
                        put(ctx, dst, &buf[..r as usize])?;
                        total += r as u64;
                        if let Some(o) = off.as_mut() {
                            *o += r as i64;
                        }
                        if let Some(l) = left.as_mut() {
                            *l -= r as u64;
                        }
                    }
                }
            }
        }
        End::Object(o) => {
            if offset.is_some() {
                return Err(ctx.arg_error("cannot specify src_offset for non-IO"));
            }
            loop {
                let want = left.map_or(CHUNK, |l| (l as usize).min(CHUNK));
                if want == 0 {
                    break;
                }
                let Some(b) = read_object(ctx, *o, want)? else { break };
                put(ctx, dst, &b)?;
                total += b.len() as u64;
                if let Some(l) = left.as_mut() {
                    *l = l.saturating_sub(b.len() as u64);
                }
            }
        }
    }
    Ok(total)
}

fn s_copy_stream(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let len = opt_int(ctx, args.pos.get(2))?;
    let offset = opt_int(ctx, args.pos.get(3))?;
    let src = open_end(ctx, args.pos[0], false)?;
    let dst = match open_end(ctx, args.pos[1], true) {
        Ok(d) => d,
        Err(e) => {
            if let End::Io { v, owned: true } = src {
                let _ = close(ctx, v);
            }
            return Err(e);
        }
    };
    let r = copy(ctx, &src, &dst, len, offset);
    for end in [&src, &dst] {
        if let End::Io { v, owned: true } = end {
            let _ = close(ctx, *v);
        }
    }
    Ok(Value::fixnum(r? as i64))
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [("copy_stream", s_copy_stream, [2..=4], Unsafe, Singleton)]);
}
