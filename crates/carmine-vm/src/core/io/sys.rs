//! Descriptor-level IO methods that bypass or sidestep the buffers: `syswrite`, `sysseek`,
//! `pread`, `pwrite`, `write_nonblock`, `fcntl`, `ioctl`, `fsync`, `fdatasync`, `advise`,
//! `close_on_exec`, `autoclose`, `to_io`, `lineno=`.
//!
//! Invariants: `syswrite`/`sysseek` refuse to run over buffered data the way CRuby does
//! (a warning for pending writes, IOError "sysseek for buffered IO" for unread input);
//! `pread`/`pwrite` never move the file offset.

use crate::core::io::{check_readable, eof_error, flush_value, get_io, into_buffer, buffer_arg, io_ref, maxlen_arg, IoObj};
use crate::core::process::{errno_error, last_errno};
use crate::core::{integer, object, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn open_io<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut IoObj> {
    let io = get_io(ctx, v)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    Ok(io)
}

fn writable_io<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut IoObj> {
    let io = open_io(ctx, v)?;
    if !io.writable {
        return Err(ctx.raise(ctx.c().io_error, "not opened for writing"));
    }
    Ok(io)
}

fn data_arg(ctx: &mut Ctx, v: Value) -> Result<Vec<u8>> {
    let s = string::to_s(ctx, v)?;
    Ok(string::bytes(s).to_vec())
}

/// `IO#syswrite(data)`: one unbuffered write(2), all of it.
fn m_syswrite(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let data = data_arg(ctx, args.pos[0])?;
    let io = writable_io(ctx, recv)?;
    if !io.wbuf.is_empty() {
        crate::core::warning::emit(ctx, "warning: syswrite for buffered IO\n", None)?;
    }
    // One write(2), as CRuby's syswrite: a non-blocking descriptor may take part of it.
    let fd = io.fd;
    let done = loop {
        crate::thread::sched::wait_writable(ctx, fd)?;
        // SAFETY: data is a valid buffer.
        let n = unsafe { libc::write(fd, data.as_ptr() as *const libc::c_void, data.len()) };
        if n >= 0 {
            break n as usize;
        }
        match last_errno() {
            libc::EINTR => continue,
            libc::EAGAIN => return Err(wait_error(ctx, "EAGAINWaitWritable", "write would block")?),
            e => return Err(errno_error(ctx, e, "")),
        }
    };
    Ok(Value::fixnum(done as i64))
}

/// `IO#write_nonblock(data, exception: true)`: what one write(2) with O_NONBLOCK takes;
/// `IO::EAGAINWaitWritable` (or `:wait_writable`) when nothing can be written.
fn m_write_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let data = data_arg(ctx, args.pos[0])?;
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    flush_value(ctx, recv)?;
    let io = writable_io(ctx, recv)?;
    set_nonblock(io.fd);
    // SAFETY: data is a valid buffer.
    let n = unsafe { libc::write(io.fd, data.as_ptr() as *const libc::c_void, data.len()) };
    if n >= 0 {
        return Ok(Value::fixnum(n as i64));
    }
    match last_errno() {
        libc::EAGAIN if !raise => Ok(Value::symbol(ctx.intern("wait_writable"))),
        libc::EAGAIN => Err(wait_error(ctx, "EAGAINWaitWritable", "write would block")?),
        e => Err(errno_error(ctx, e, "")),
    }
}

pub fn set_nonblock(fd: i32) {
    // SAFETY: fcntl on a descriptor the caller owns.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        if fl >= 0 && fl & libc::O_NONBLOCK == 0 {
            libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
}

/// An `IO::EAGAINWait…` exception with CRuby's message.
pub fn wait_error(ctx: &mut Ctx, class: &str, what: &str) -> Result<crate::error::Unwind> {
    let id = ctx.intern(class);
    let Some(k) = crate::core::module::body(ctx.c().io).const_get(id).map(|e| e.value) else {
        return Ok(errno_error(ctx, libc::EAGAIN, what));
    };
    let msg = string::new_utf8(ctx, what);
    let e = object::allocate(ctx, k)?;
    ctx.call(e, sym::INITIALIZE, &[msg])?;
    crate::core::exception::capture_backtrace(ctx, e);
    Ok(crate::error::Unwind::Raise(e))
}

fn whence(ctx: &mut Ctx, v: Option<&Value>) -> Result<i32> {
    let Some(&v) = v else { return Ok(libc::SEEK_SET) };
    if let Some(id) = v.as_symbol() {
        return match ctx.sym_str(id).as_str() {
            "SET" => Ok(libc::SEEK_SET),
            "CUR" => Ok(libc::SEEK_CUR),
            "END" => Ok(libc::SEEK_END),
            "DATA" => Ok(libc::SEEK_DATA),
            "HOLE" => Ok(libc::SEEK_HOLE),
            other => Err(ctx.arg_error(&format!("unknown whence: {other}"))),
        };
    }
    integer::to_int_arg(ctx, v)
}

/// `IO#sysseek(offset, whence = SEEK_SET)`: the new offset.
fn m_sysseek(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let off = integer::to_i64_arg(ctx, args.pos[0])?;
    let wh = whence(ctx, args.pos.get(1))?;
    let io = open_io(ctx, recv)?;
    if io.rpos < io.rbuf.len() {
        return Err(ctx.raise(ctx.c().io_error, "sysseek for buffered IO"));
    }
    if !io.wbuf.is_empty() {
        crate::core::warning::emit(ctx, "warning: sysseek for buffered IO\n", None)?;
    }
    // SAFETY: lseek on an open descriptor.
    let r = unsafe { libc::lseek(io.fd, off, wh) };
    if r < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, ""));
    }
    Ok(Value::fixnum(r))
}

/// `IO#pread(maxlen, offset, outbuf = nil)`.
fn m_pread(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = maxlen_arg(ctx, args.pos[0])?;
    let off = integer::to_i64_arg(ctx, args.pos[1])?;
    let buf = buffer_arg(ctx, args.pos.get(2))?;
    check_readable(ctx, recv)?;
    if n == 0 {
        return Ok(into_buffer(ctx, buf, b""));
    }
    let fd = io_ref(recv).expect("io").fd;
    let mut out = vec![0u8; n];
    let r = loop {
        // SAFETY: out holds n writable bytes.
        let r = unsafe { libc::pread(fd, out.as_mut_ptr() as *mut libc::c_void, n, off) };
        if r < 0 && last_errno() == libc::EINTR {
            continue;
        }
        break r;
    };
    if r < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, ""));
    }
    if r == 0 {
        return Err(eof_error(ctx));
    }
    out.truncate(r as usize);
    Ok(into_buffer(ctx, buf, &out))
}

/// `IO#pwrite(data, offset)`: bytes written.
fn m_pwrite(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let data = data_arg(ctx, args.pos[0])?;
    let off = integer::to_i64_arg(ctx, args.pos[1])?;
    flush_value(ctx, recv)?;
    let io = writable_io(ctx, recv)?;
    // SAFETY: data is a valid buffer.
    let r = unsafe { libc::pwrite(io.fd, data.as_ptr() as *const libc::c_void, data.len(), off) };
    if r < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, ""));
    }
    Ok(Value::fixnum(r as i64))
}

/// `IO#fcntl(cmd, arg = 0)`: an Integer argument is passed as is; a String as a buffer
/// the call may fill.
fn m_fcntl(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let cmd = integer::to_int_arg(ctx, args.pos[0])?;
    let arg = match args.pos.get(1) {
        None => 0,
        Some(&v) if v.is_nil() || v == Value::FALSE => 0,
        Some(&v) if v == Value::TRUE => 1,
        Some(&v) if string::is_string(v) => return Err(ctx.not_implemented("IO#fcntl with a String argument")),
        Some(&v) => integer::to_i64_arg(ctx, v)?,
    };
    let io = open_io(ctx, recv)?;
    // SAFETY: an integer-argument fcntl on an open descriptor.
    let r = unsafe { libc::fcntl(io.fd, cmd, arg as libc::c_long) };
    if r < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, ""));
    }
    Ok(Value::fixnum(r as i64))
}

/// `IO#ioctl(cmd, arg = 0)` with an Integer argument.
fn m_ioctl(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let cmd = integer::to_i64_arg(ctx, args.pos[0])?;
    let arg = match args.pos.get(1) {
        Some(&v) if string::is_string(v) => return Err(ctx.not_implemented("IO#ioctl with a String argument")),
        Some(&v) if !v.is_nil() => integer::to_i64_arg(ctx, v)?,
        _ => 0,
    };
    let io = open_io(ctx, recv)?;
    // SAFETY: an integer-argument ioctl on an open descriptor.
    let r = unsafe { libc::ioctl(io.fd, cmd as libc::c_ulong, arg as libc::c_long) };
    if r < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, ""));
    }
    Ok(Value::fixnum(r as i64))
}

fn sync_common(ctx: &mut Ctx, recv: Value, data_only: bool) -> Result<Value> {
    flush_value(ctx, recv)?;
    let io = open_io(ctx, recv)?;
    let fd = io.fd;
    // SAFETY: fsync/fdatasync on an open descriptor.
    let r = crate::thread::sched::without_gl(ctx, || unsafe { if data_only { libc::fdatasync(fd) } else { libc::fsync(fd) } });
    if r < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, ""));
    }
    Ok(Value::fixnum(0))
}

fn m_fsync(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    sync_common(ctx, recv, false)
}

fn m_fdatasync(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    sync_common(ctx, recv, true)
}

/// `IO#advise(advice, offset = 0, len = 0)`: posix_fadvise with a Symbol advice.
fn m_advise(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    let Some(id) = a.as_symbol() else {
        let cname = object::class_name_of(ctx, a);
        return Err(ctx.type_error(&format!("no implicit conversion of {cname} into Symbol")));
    };
    let advice = match ctx.sym_str(id).as_str() {
        "normal" => libc::POSIX_FADV_NORMAL,
        "sequential" => libc::POSIX_FADV_SEQUENTIAL,
        "random" => libc::POSIX_FADV_RANDOM,
        "willneed" => libc::POSIX_FADV_WILLNEED,
        "dontneed" => libc::POSIX_FADV_DONTNEED,
        "noreuse" => libc::POSIX_FADV_NOREUSE,
        other => return Err(ctx.raise(ctx.c().not_implemented_error, &format!("Unsupported advice: :{other}"))),
    };
    let off = match args.pos.get(1) {
        Some(&v) => integer::to_i64_arg(ctx, v)?,
        None => 0,
    };
    let len = match args.pos.get(2) {
        Some(&v) => integer::to_i64_arg(ctx, v)?,
        None => 0,
    };
    let io = open_io(ctx, recv)?;
    // SAFETY: posix_fadvise on an open descriptor.
    let r = unsafe { libc::posix_fadvise(io.fd, off, len, advice) };
    if r != 0 && r != libc::ESPIPE {
        return Err(errno_error(ctx, r, ""));
    }
    Ok(Value::NIL)
}

fn m_close_on_exec_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = open_io(ctx, recv)?;
    // SAFETY: F_GETFD on an open descriptor.
    let fl = unsafe { libc::fcntl(io.fd, libc::F_GETFD) };
    Ok(Value::bool(fl >= 0 && fl & libc::FD_CLOEXEC != 0))
}

fn m_set_close_on_exec(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let on = args.pos[0].truthy();
    let io = open_io(ctx, recv)?;
    // SAFETY: F_GETFD/F_SETFD on an open descriptor.
    unsafe {
        let fl = libc::fcntl(io.fd, libc::F_GETFD);
        if fl >= 0 {
            libc::fcntl(io.fd, libc::F_SETFD, if on { fl | libc::FD_CLOEXEC } else { fl & !libc::FD_CLOEXEC });
        }
    }
    Ok(args.pos[0])
}

fn m_autoclose_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = open_io(ctx, recv)?;
    Ok(Value::bool(io.autoclose))
}

fn m_set_autoclose(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let io = open_io(ctx, recv)?;
    io.autoclose = args.pos[0].truthy();
    Ok(args.pos[0])
}

fn m_to_io(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_set_lineno(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_int_arg(ctx, args.pos[0])?;
    let io = open_io(ctx, recv)?;
    if !io.readable {
        return Err(ctx.raise(ctx.c().io_error, "not opened for reading"));
    }
    io.lineno = n as i64;
    Ok(args.pos[0])
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [
        ("syswrite", m_syswrite, [1], Unsafe),
        ("write_nonblock", m_write_nonblock, [1], Unsafe, Kw),
        ("sysseek", m_sysseek, [1..=2], Unsafe),
        ("pread", m_pread, [2..=3], Unsafe),
        ("pwrite", m_pwrite, [2], Unsafe),
        ("fcntl", m_fcntl, [1..=2], Unsafe),
        ("ioctl", m_ioctl, [1..=2], Unsafe),
        ("fsync", m_fsync, [0], Unsafe),
        ("fdatasync", m_fdatasync, [0], Unsafe),
        ("advise", m_advise, [1..=3], Unsafe),
        ("close_on_exec?", m_close_on_exec_p, [0], Unsafe),
        ("close_on_exec=", m_set_close_on_exec, [1], Unsafe),
        ("autoclose?", m_autoclose_p, [0], Unsafe),
        ("autoclose=", m_set_autoclose, [1], Unsafe),
        ("to_io", m_to_io, [0], Safe),
        ("lineno=", m_set_lineno, [1], Unsafe),
        ("reopen", m_reopen, [0..], Unsafe, Kw),
    ]);
}

/// Marks a descriptor close-on-exec, as every descriptor Ruby opens is, except the
/// standard streams (which children inherit).
fn set_cloexec_unless_stdio(fd: i32) {
    if fd > 2 {
        // SAFETY: fcntl(2) on an open descriptor.
        unsafe {
            let fl = libc::fcntl(fd, libc::F_GETFD);
            if fl >= 0 {
                libc::fcntl(fd, libc::F_SETFD, fl | libc::FD_CLOEXEC);
            }
        }
    }
}

/// `IO#reopen(other_io)` / `reopen(path, mode = nil, **opts)`: this IO's descriptor is
/// made a copy of the other one (dup2, so its number does not change), buffers dropped.
fn m_reopen(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() || args.pos.len() > 2 {
        return Err(ctx.arity_error(args.pos.len(), 1, Some(2)));
    }
    let target = args.pos[0];
    let other = if io_ref(target).is_some() {
        Some(target)
    } else {
        let to_io = ctx.intern("to_io");
        if !string::is_string(target) && target.is_heap() && ctx.respond_to(target, to_io, true) {
            let r = ctx.call(target, to_io, &[])?;
            if io_ref(r).is_none() {
                let (c, rc) = (object::class_name_of(ctx, target), object::class_name_of(ctx, r));
                return Err(ctx.type_error(&format!("can't convert {c} to IO ({c}#to_io gives {rc})")));
            }
            Some(r)
        } else {
            None
        }
    };
    if other.is_some() && get_io(ctx, recv)?.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    flush_value(ctx, recv)?;
    let me = get_io(ctx, recv)?;
    if let Some(o) = other {
        flush_value(ctx, o)?;
        let src = open_io(ctx, o)?;
        let (fd, r, w, path) = (src.fd, src.readable, src.writable, src.path.clone());
        // Where the other IO's reader is (its read-ahead not yet consumed).
        // SAFETY: lseek(2) with offset 0 only queries the position.
        let at = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
        let pos = if at >= 0 { Some(at - (src.rbuf.len() - src.rpos) as i64) } else { None };
        let (ext, int, bin) = (src.ext_enc, src.int_enc, src.binmode);
        let serial = crate::core::io::next_serial(ctx);
        let me = get_io(ctx, recv)?;
        me.serial = serial;
        me.not_socket = false;
        if me.fd != fd {
            // SAFETY: both descriptors are open.
            if unsafe { libc::dup2(fd, me.fd) } < 0 {
                let e = last_errno();
                return Err(errno_error(ctx, e, ""));
            }
        }
        set_cloexec_unless_stdio(me.fd);
        if let Some(p) = pos {
            // SAFETY: lseek(2) on a descriptor this object owns.
            unsafe { libc::lseek(me.fd, p, libc::SEEK_SET) };
        }
        me.readable = r;
        me.writable = w;
        me.path = path;
        me.ext_enc = ext;
        me.int_enc = int;
        me.binmode = bin;
        me.rbuf.clear();
        me.rpos = 0;
        me.eof = false;
        return Ok(recv);
    }
    let c = crate::core::file::stat::cpath_arg(ctx, target)?;
    let m = match args.pos.get(1) {
        Some(&mv) => crate::core::io::open_mode::mode_arg(ctx, mv)?,
        None if me.closed => crate::core::io::open_mode::mode_from_flags(libc::O_RDONLY),
        None => {
            // The mode the IO already has (a write stream reopens for writing).
            // SAFETY: F_GETFL only queries the descriptor.
            let append = unsafe { libc::fcntl(me.fd, libc::F_GETFL) } & libc::O_APPEND != 0;
            let write_flags = if append { libc::O_CREAT | libc::O_APPEND } else { libc::O_CREAT | libc::O_TRUNC };
            let flags = match (me.readable, me.writable) {
                (true, true) => libc::O_RDWR | if append { write_flags } else { 0 },
                (false, true) => libc::O_WRONLY | write_flags,
                _ => libc::O_RDONLY,
            };
            crate::core::io::open_mode::mode_from_flags(flags)
        }
    };
    // SAFETY: c is NUL-terminated.
    let fd = unsafe { libc::open(c.as_ptr(), m.flags | libc::O_CLOEXEC, 0o666) };
    if fd < 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("rb_sysopen - {}", String::from_utf8_lossy(c.as_bytes()))));
    }
    let serial = crate::core::io::next_serial(ctx);
    let me = get_io(ctx, recv)?;
    me.serial = serial;
    me.not_socket = false;
    if me.closed {
        me.fd = fd;
        me.closed = false;
    } else {
        // SAFETY: both descriptors are open; the temporary one is closed after.
        unsafe {
            libc::dup2(fd, me.fd);
            libc::close(fd);
        }
        set_cloexec_unless_stdio(me.fd);
    }
    me.readable = m.readable();
    me.writable = m.writable();
    me.path = Some(String::from_utf8_lossy(c.as_bytes()).into_owned());
    me.rbuf.clear();
    me.rpos = 0;
    me.eof = false;
    Ok(recv)
}
