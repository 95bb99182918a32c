//! IO: buffered file descriptors, the standard streams, reading and writing, encodings on
//! IO. File is in `core::file`, Dir in `core::dir`, pipes and popen in `pipe`.
//!
//! Invariants:
//! - An IO object owns its descriptor (except fds 0–2, which are never closed by GC).
//! - Writes to a non-sync IO go to its buffer; the buffer is flushed when it grows past
//!   `FLUSH_AT`, on `flush`, before reading from the same IO, before writing to stderr
//!   (so interleaved output keeps its order) and when the VM finishes.

pub mod argf;
pub mod buffer;
pub mod chars;
pub mod class_methods;
pub mod copy_stream;
pub mod lines;
pub mod open_mode;
pub mod pipe;
pub mod select;
pub mod sys;
pub mod wait;


use std::io::Write as _;

use crate::core::{array, hash, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const FLUSH_AT: usize = 64 * 1024;

pub struct IoObj {
    pub fd: i32,
    pub wbuf: Vec<u8>,
    pub rbuf: Vec<u8>,
    pub rpos: usize,
    pub closed: bool,
    pub sync: bool,
    pub eof: bool,
    pub path: Option<String>,
    pub lineno: i64,
    pub readable: bool,
    pub writable: bool,
    /// Encodings set by `set_encoding` or the open mode (`"r:ext:int"`); None = defaults.
    pub ext_enc: Option<u8>,
    pub int_enc: Option<u8>,
    /// Whether dropping the object closes the descriptor (`IO#autoclose=`).
    pub autoclose: bool,
    /// Binary mode (`"rb"`, `binmode`): no newline conversion.
    pub binmode: bool,
    /// What `"\n"` becomes on write (`newline: :crlf` / `:cr`); None = itself.
    pub newline_out: Option<&'static [u8]>,
    /// The child process of an `IO.popen` IO (waited for on close).
    pub child: Option<i32>,
    /// Set once send/recv on the descriptor answered ENOTSOCK: reads and writes shared with
    /// other threads or a fiber scheduler then poll before read(2)/write(2) (see `read_some`).
    pub not_socket: bool,
    /// Identifies this opening of the descriptor (new for every IO and at `reopen`): an
    /// epoll set that watched the same descriptor number for another file tells by it that
    /// the number was reused.
    pub serial: u64,
    /// The IO handed to a fiber scheduler's `io_wait` when this IO waits from inside
    /// Carmine (made once; shares the descriptor without closing it, and `serial`).
    pub waiter: Value,
}

impl Drop for IoObj {
    fn drop(&mut self) {
        if !self.wbuf.is_empty() {
            let _ = write_fd(self.fd, &self.wbuf);
        }
        if !self.closed && self.autoclose && self.fd > 2 {
            // SAFETY: the descriptor is owned by this object.
            unsafe { libc::close(self.fd) };
        }
    }
}

crate::data_obj!(IoObj, |io, m| {
    m.mark(io.waiter);
});

fn write_fd(fd: i32, mut b: &[u8]) -> std::io::Result<()> {
    while !b.is_empty() {
        // SAFETY: b is a valid buffer of b.len() bytes.
        let n = unsafe { libc::write(fd, b.as_ptr() as *const libc::c_void, b.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        b = &b[n as usize..];
    }
    Ok(())
}

pub fn io_ref<'a>(v: Value) -> Option<&'a mut IoObj> {
    data_ref::<IoObj>(v)
}

pub fn new_io(ctx: &mut Ctx, klass: Value, fd: i32, readable: bool, writable: bool, path: Option<String>) -> Value {
    let sync = fd == 2;
    let (ext_enc, int_enc) = ext_int_to_encs(ctx, None, IntEnc::Default, false);
    object::new_data(ctx, klass, Box::new(IoObj { fd, wbuf: Vec::new(), rbuf: Vec::new(), rpos: 0, closed: false, sync, eof: false, path, lineno: 0, readable, writable, ext_enc, int_enc, autoclose: true, binmode: false, newline_out: None, child: None, not_socket: false, serial: next_serial(ctx), waiter: Value::NIL }))
}

/// A serial for a new opening of a descriptor (`IoObj::serial`).
pub(crate) fn next_serial(ctx: &Ctx) -> u64 {
    ctx.vm().io_serial.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

pub(crate) fn sys_error(ctx: &mut Ctx, e: std::io::Error, detail: &str) -> crate::error::Unwind {
    let code = e.raw_os_error().unwrap_or(libc::EIO);
    crate::core::process::errno_error(ctx, code, detail)
}

/// Writes all of `b` to `io`'s descriptor from Ruby code. While other threads run, the GL
/// is left for each write and while the descriptor cannot take more (a full pipe, a slow
/// reader), and interrupts are taken between waits, as blocking reads do.
fn write_blocking(ctx: &mut Ctx, io: &mut IoObj, mut b: &[u8]) -> std::result::Result<(), std::result::Result<std::io::Error, crate::error::Unwind>> {
    let fd = io.fd;
    if let Some((s, hook)) = scheduler_with_hook(ctx, "io_write") {
        // The scheduler writes: `io_write(io, buffer, length, 0)` returns what it wrote (at
        // least `length` unless it failed) or a negated errno.
        let w = waiter_io(ctx, io);
        while !b.is_empty() {
            let buffer = buffer::from_bytes(ctx, b.to_vec());
            let r = ctx.call(s, hook, &[w, buffer, Value::fixnum(b.len() as i64), Value::fixnum(0)]).map_err(Err)?;
            let n = crate::core::integer::to_i64_arg(ctx, r).map_err(Err)?;
            if n < 0 {
                return Err(Ok(std::io::Error::from_raw_os_error((-n) as i32)));
            }
            b = &b[(n as usize).min(b.len())..];
            if n == 0 {
                return Err(Ok(std::io::Error::from_raw_os_error(libc::EIO)));
            }
        }
        return Ok(());
    }
    let threads = crate::thread::sched::others_running(ctx);
    // Alone (no other thread, no fiber scheduler) a write may block the thread.
    let shared = threads || crate::fiber::scheduler::active(ctx).is_some();
    // Shared, a socket is written with send(MSG_DONTWAIT): it takes what fits at once, and
    // the thread or fiber waits only when nothing fits (as CRuby's non-blocking sockets do;
    // polling before every write cost a system call per message).
    while shared && !io.not_socket && !b.is_empty() {
        // SAFETY: b is a valid buffer of b.len() bytes.
        let n = unsafe { libc::send(fd, b.as_ptr() as *const libc::c_void, b.len(), libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
        if n >= 0 {
            b = &b[n as usize..];
            continue;
        }
        let e = std::io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => {}
            Some(libc::EAGAIN) => wait_not_ready(ctx, io, libc::POLLOUT).map_err(Err)?,
            Some(libc::ENOTSOCK) => io.not_socket = true,
            _ => return Err(Ok(e)),
        }
    }
    // A pipe with room takes PIPE_BUF bytes without blocking; a regular file never waits.
    let chunk = if shared && !b.is_empty() && !is_regular_file(fd) { libc::PIPE_BUF } else { b.len() };
    while !b.is_empty() {
        if shared {
            crate::thread::sched::wait_writable(ctx, fd).map_err(Err)?;
        }
        let part = &b[..b.len().min(chunk)];
        // SAFETY: part is a valid buffer of part.len() bytes.
        let write = || unsafe { libc::write(fd, part.as_ptr() as *const libc::c_void, part.len()) };
        let n = if threads { crate::thread::sched::without_gl(ctx, write) } else { write() };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                // A non-blocking descriptor that is full: wait for room.
                Some(libc::EAGAIN) => wait_not_ready(ctx, io, libc::POLLOUT).map_err(Err)?,
                _ => return Err(Ok(e)),
            }
            continue;
        }
        b = &b[n as usize..];
    }
    Ok(())
}

/// Waits until `io` is ready for `events` (poll bits) after an operation on it found it
/// not ready (EAGAIN): through the fiber scheduler for a non-blocking fiber, which is
/// handed `io`'s waiter IO, else as `thread::sched::wait_ready`.
pub(crate) fn wait_not_ready(ctx: &mut Ctx, io: &mut IoObj, events: i16) -> Result<()> {
    let Some(s) = crate::fiber::scheduler::active(ctx) else {
        return crate::thread::sched::wait_ready(ctx, io.fd, events);
    };
    let w = waiter_io(ctx, io);
    crate::fiber::scheduler::wait_io(ctx, s, w, io.fd, events)
}

/// The IO a fiber scheduler's hooks are given for `io` (see `IoObj::waiter`).
fn waiter_io(ctx: &mut Ctx, io: &mut IoObj) -> Value {
    if io.waiter.is_nil() {
        io.waiter = new_io(ctx, ctx.c().io, io.fd, true, true, None);
    }
    let w = io.waiter;
    if let Some(o) = io_ref(w) {
        // The descriptor (and its serial) may have changed by `reopen` since the waiter was
        // made; a scheduler may have closed it.
        (o.fd, o.serial, o.closed, o.autoclose) = (io.fd, io.serial, false, false);
    }
    w
}

/// The scheduler of a non-blocking fiber if it defines hook `name` (`io_read`/`io_write`).
pub(crate) fn scheduler_with_hook(ctx: &mut Ctx, name: &str) -> Option<(Value, crate::symbol::SymId)> {
    let s = crate::fiber::scheduler::active(ctx)?;
    let id = ctx.intern(name);
    ctx.respond_to(s, id, true).then_some((s, id))
}

/// A scheduler's `io_read(io, buffer, 0, 0)`: at most `len` bytes into `buf` (the count, or
/// the errno the hook returned negated).
fn hook_read(ctx: &mut Ctx, io: &mut IoObj, s: Value, hook: crate::symbol::SymId, buf: *mut u8, len: usize) -> Result<std::result::Result<usize, i32>> {
    let w = waiter_io(ctx, io);
    let buffer = buffer::from_bytes(ctx, vec![0; len]);
    let r = ctx.call(s, hook, &[w, buffer, Value::fixnum(0), Value::fixnum(0)])?;
    let n = crate::core::integer::to_i64_arg(ctx, r)?;
    if n < 0 {
        return Ok(Err((-n) as i32));
    }
    let got = buffer::contents(buffer);
    let n = (n as usize).min(got.len()).min(len);
    // SAFETY: the caller's buf is writable for len bytes; n <= len.
    unsafe { std::ptr::copy_nonoverlapping(got.as_ptr(), buf, n) };
    Ok(Ok(n))
}

/// One read of at most `len` bytes into `buf` once input is there (`Ok(Err(errno))` for
/// a failed read). Alone, read(2) may block the thread. Shared with other threads or a
/// fiber scheduler, a socket is first asked with recv(MSG_DONTWAIT), and the thread or
/// fiber waits only when nothing is there (a busy server's reads mostly find data: one
/// system call instead of poll and read); other descriptors are polled first, the GL
/// left while waiting.
pub(crate) fn read_some(ctx: &mut Ctx, io: &mut IoObj, buf: *mut u8, len: usize) -> Result<std::result::Result<usize, i32>> {
    if let Some((s, hook)) = scheduler_with_hook(ctx, "io_read") {
        return hook_read(ctx, io, s, hook, buf, len);
    }
    let fd = io.fd;
    loop {
        let shared = crate::thread::sched::others_running(ctx) || crate::fiber::scheduler::active(ctx).is_some();
        let n = if shared && !io.not_socket {
            // SAFETY: the caller's buf is writable for len bytes.
            unsafe { libc::recv(fd, buf as *mut libc::c_void, len, libc::MSG_DONTWAIT) }
        } else {
            if shared {
                crate::thread::sched::wait_readable(ctx, fd)?;
                if io.closed {
                    let c = ctx.c().io_error;
                    return Err(ctx.raise(c, "stream closed in another thread"));
                }
            }
            // SAFETY: as above.
            unsafe { libc::read(fd, buf as *mut libc::c_void, len) }
        };
        if n >= 0 {
            return Ok(Ok(n as usize));
        }
        match crate::core::process::last_errno() {
            libc::EINTR => {}
            libc::ENOTSOCK => io.not_socket = true,
            // Nothing there yet (a socket asked first, or a descriptor in O_NONBLOCK mode).
            libc::EAGAIN => {
                wait_not_ready(ctx, io, libc::POLLIN)?;
                if io.closed {
                    let c = ctx.c().io_error;
                    return Err(ctx.raise(c, "stream closed in another thread"));
                }
            }
            e => return Ok(Err(e)),
        }
    }
}

fn is_regular_file(fd: i32) -> bool {
    // SAFETY: fstat writes into a zeroed stat buffer.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG
    }
}

/// Flushes an IO object's buffered output (nothing for a non-IO).
pub fn flush_value(ctx: &mut Ctx, v: Value) -> Result<()> {
    match io_ref(v) {
        Some(io) if !io.closed => flush_obj(ctx, io),
        _ => Ok(()),
    }
}

fn flush_obj(ctx: &mut Ctx, io: &mut IoObj) -> Result<()> {
    if io.wbuf.is_empty() {
        return Ok(());
    }
    let buf = std::mem::take(&mut io.wbuf);
    if let Err(e) = write_blocking(ctx, io, &buf) {
        let e = e?;
        let epipe = e.raw_os_error() == Some(libc::EPIPE);
        let err = sys_error(ctx, e, "");
        if io.fd <= 2 && epipe {
            // As CRuby's standard streams do: an uncaught EPIPE on them ends the process
            // silently by SIGPIPE (`head` closing a pipe is no error worth reporting).
            if let crate::error::Unwind::Raise(exc) = err {
                crate::core::process::mark_signal_on_exit(ctx, exc, libc::SIGPIPE);
            }
        }
        return Err(err);
    }
    Ok(())
}

/// Writes raw bytes to an IO object (buffered unless sync).
pub fn io_write(ctx: &mut Ctx, v: Value, b: &[u8]) -> Result<()> {
    let Some(io) = io_ref(v) else { return Err(ctx.type_error("not an IO")) };
    if io.closed || !io.writable {
        return Err(ctx.raise(ctx.c().io_error, if io.closed { "closed stream" } else { "not opened for writing" }));
    }
    if io.fd == 2 {
        flush_stdout(ctx);
    }
    let io = io_ref(v).expect("io");
    if io.rpos < io.rbuf.len() {
        // Input read ahead is given back, so the write lands where the reader is.
        let unread = (io.rbuf.len() - io.rpos) as libc::off_t;
        // SAFETY: lseek(2) on a descriptor this object owns.
        if unsafe { libc::lseek(io.fd, -unread, libc::SEEK_CUR) } >= 0 {
            io.rbuf.clear();
            io.rpos = 0;
        }
    }
    match io.newline_out {
        Some(nl) => {
            for &c in b {
                if c == b'\n' {
                    io.wbuf.extend_from_slice(nl);
                } else {
                    io.wbuf.push(c);
                }
            }
        }
        None => io.wbuf.extend_from_slice(b),
    }
    ctx.vm().io_buffered.store(true, std::sync::atomic::Ordering::Relaxed);
    if io.sync || io.wbuf.len() >= FLUSH_AT {
        flush_obj(ctx, io)?;
    }
    Ok(())
}

/// Flushes the process's standard output and error objects of this VM, and `$stdout`
/// and `$stderr` when they are other IOs (a file being edited in place, a redirection).
#[inline]
pub fn flush_stdout(ctx: &mut Ctx) {
    // Nothing was written to any IO since the last flush: the standard streams are empty.
    if ctx.vm().io_buffered.swap(false, std::sync::atomic::Ordering::Relaxed) {
        flush_std_streams(ctx);
    }
}

#[inline(never)]
fn flush_std_streams(ctx: &mut Ctx) {
    let object = ctx.c().object;
    let (out_id, err_id) = (sym::STDOUT, sym::STDERR);
    let out = crate::core::module::body(object).const_get(out_id).map(|e| e.value);
    let err = crate::core::module::body(object).const_get(err_id).map(|e| e.value);
    let current = [crate::core::globals::raw(ctx, sym::DOLLAR_STDOUT), crate::core::globals::raw(ctx, sym::DOLLAR_STDERR)];
    for v in [out, err, Some(current[0]), Some(current[1])].into_iter().flatten() {
        if let Some(io) = io_ref(v).filter(|io| !io.closed && !io.wbuf.is_empty()) {
            let buf = std::mem::take(&mut io.wbuf);
            let _ = write_fd(io.fd, &buf);
        }
    }
}

/// Writes bytes to any output object: IOs directly, others through `write`.
pub fn write_bytes_to(ctx: &mut Ctx, out: Value, b: &[u8]) -> Result<()> {
    if io_ref(out).is_some() && has_builtin_write(ctx, out) {
        return io_write(ctx, out, b);
    }
    let s = string::new_from_bytes(ctx, b);
    ctx.call(out, sym::WRITE, &[s])?;
    Ok(())
}

pub fn flush_if_stdout(_ctx: &mut Ctx, _out: Value) -> Result<()> {
    Ok(())
}

/// Writes a String to `$stderr` the way CRuby's `rb_write_error_str` does: straight to
/// descriptor 2 while `$stderr` is the process's standard error, ignoring a failed write
/// (a closed pipe must not turn a warning into an error), otherwise through `$stderr`'s
/// `write`, whose exceptions propagate.
pub fn write_to_stderr_object(ctx: &mut Ctx, s: Value) -> Result<()> {
    let err = crate::core::globals::get(ctx, sym::DOLLAR_STDERR)?;
    if io_ref(err).is_some_and(|io| io.fd == 2 && !io.closed && io.writable) {
        flush_stdout(ctx);
        let _ = write_fd(2, string::bytes(s));
        return Ok(());
    }
    if io_ref(err).is_some() {
        return io_write(ctx, err, string::bytes(s));
    }
    ctx.call(err, sym::WRITE, &[s])?;
    Ok(())
}

/// Writes the report of an error that ends a thread or the process to `$stderr`; nothing
/// that goes wrong while writing it is reported (there is nowhere left to report it).
pub fn write_error_message(ctx: &mut Ctx, b: &[u8]) {
    let s = string::new_from_bytes(ctx, b);
    if write_to_stderr_object(ctx, s).is_err() {
        write_stderr_fd(b);
    }
}

/// Writes bytes to descriptor 2 directly, ignoring errors: for messages printed where no
/// VM can run Ruby code (the command line, internal errors).
pub fn write_stderr_fd(b: &[u8]) {
    let _ = write_fd(2, b);
}

/// The bytes `puts` writes for `args`.
pub(crate) fn puts_bytes(ctx: &mut Ctx, args: &[Value], out: &mut Vec<u8>) -> Result<()> {
    if args.is_empty() {
        out.push(b'\n');
        return Ok(());
    }
    for &a in args {
        if string::is_string(a) {
            out.extend_from_slice(string::bytes(a));
            if !string::bytes(a).ends_with(b"\n") {
                out.push(b'\n');
            }
            continue;
        }
        if let Some(arr) = array::try_to_ary(ctx, a)? {
            let r = object::guard_recursion(ctx, sym::TO_S, arr, Value::NIL, true, |ctx| {
                let items = array::to_vec(arr);
                let tmp = array::from_vec(ctx, items.clone());
                for x in items {
                    puts_bytes(ctx, &[x], out)?;
                }
                std::hint::black_box(tmp);
                Ok(false)
            })?;
            if r {
                out.extend_from_slice(b"[...]\n");
            }
            continue;
        }
        let s = string::to_s(ctx, a)?;
        out.extend_from_slice(string::bytes(s));
        if !string::bytes(s).ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    Ok(())
}

/// Whether `v`'s `write` is IO's own (not redefined in a subclass or singleton), so
/// output may go straight to its buffer.
fn has_builtin_write(ctx: &Ctx, v: Value) -> bool {
    let klass = crate::interp::class_of(ctx, v);
    match crate::core::module::find_method(ctx, klass, sym::WRITE) {
        Some(m) => m.owner == ctx.c().io && matches!(m.body, crate::core::module::MethodBody::Builtin { .. }),
        None => false,
    }
}

/// `out.puts(*args)`.
pub fn puts_to(ctx: &mut Ctx, out: Value, args: &[Value]) -> Result<()> {
    if io_ref(out).is_some() {
        let mut b = Vec::new();
        puts_bytes(ctx, args, &mut b)?;
        if b.is_empty() {
            return Ok(());
        }
        return write_bytes_to(ctx, out, &b);
    }
    let puts = ctx.intern("puts");
    ctx.call(out, puts, args)?;
    Ok(())
}

pub(crate) fn print_bytes(ctx: &mut Ctx, args: &[Value]) -> Result<Vec<u8>> {
    let sep = crate::core::globals::get(ctx, sym::DOLLAR_COMMA)?;
    let term = crate::core::globals::get(ctx, sym::DOLLAR_BACKSLASH)?;
    let mut b = Vec::new();
    for (i, &a) in args.iter().enumerate() {
        if i > 0 && string::is_string(sep) {
            b.extend_from_slice(string::bytes(sep));
        }
        let s = string::to_s(ctx, a)?;
        b.extend_from_slice(string::bytes(s));
    }
    if string::is_string(term) {
        b.extend_from_slice(string::bytes(term));
    }
    Ok(b)
}

/// `out.print(*args)`.
pub fn print_to(ctx: &mut Ctx, out: Value, args: &[Value]) -> Result<()> {
    if io_ref(out).is_some() {
        let b = print_bytes(ctx, args)?;
        return write_bytes_to(ctx, out, &b);
    }
    // Any other object gets what print would write through its `write`, as CRuby's
    // rb_io_print does (calling its `print` could be Kernel#print again).
    let b = print_bytes(ctx, args)?;
    let s = string::new_from_bytes(ctx, &b);
    let write = ctx.intern("write");
    ctx.call(out, write, &[s])?;
    Ok(())
}

// ---- reading ----

pub(crate) fn fill(ctx: &mut Ctx, io: &mut IoObj) -> Result<bool> {
    if io.rpos >= io.rbuf.len() {
        io.rbuf.clear();
        io.rpos = 0;
    } else if io.rpos > 0 {
        // Keep only the unread part (a partial line): the buffer must not grow with the
        // whole stream.
        io.rbuf.drain(..io.rpos);
        io.rpos = 0;
    }
    // Not zeroed: read(2) writes the bytes that are then copied (a 64 KB memset per fill
    // was an eighth of a small-message echo server's time).
    let mut buf = std::mem::MaybeUninit::<[u8; 65536]>::uninit();
    match read_some(ctx, io, buf.as_mut_ptr() as *mut u8, 65536)? {
        Ok(0) => {
            io.eof = true;
            Ok(false)
        }
        Ok(n) => {
            // SAFETY: the read initialised the first n bytes.
            io.rbuf.extend_from_slice(unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, n) });
            Ok(true)
        }
        // A read-write popen's socket reports a child that exited without reading
        // everything as a reset; for the reader that is the end of its output.
        Err(libc::ECONNRESET) if io.child.is_some() => {
            io.eof = true;
            Ok(false)
        }
        Err(e) => Err(sys_error(ctx, std::io::Error::from_raw_os_error(e), "")),
    }
}

pub(crate) fn check_readable(ctx: &mut Ctx, v: Value) -> Result<()> {
    let Some(io) = io_ref(v) else { return Err(ctx.type_error("not an IO")) };
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    if !io.readable {
        return Err(ctx.raise(ctx.c().io_error, "not opened for reading"));
    }
    if io.fd == 0 {
        flush_stdout(ctx);
    }
    Ok(())
}

pub fn read_all(ctx: &mut Ctx, v: Value) -> Result<Vec<u8>> {
    check_readable(ctx, v)?;
    let io = io_ref(v).expect("io");
    let mut out = io.rbuf[io.rpos..].to_vec();
    io.rbuf.clear();
    io.rpos = 0;
    // The rest of a regular file has a known size: one buffer of that size (backed by huge
    // pages when large, so a gigabyte costs hundreds of page faults, not 262,144), filled by
    // read(2) directly, without the 64 KB staging buffer of `fill`.
    let fd = io.fd;
    let sized = regular_file_rest(fd).map(|rest| reserve_for_reading(&mut out, rest + 1)).is_some();
    loop {
        // A sized buffer grows only if the file grew (its last byte of room takes the read
        // that finds the end); others keep 64 KB of room.
        let spare = out.capacity() - out.len();
        if spare == 0 || (!sized && spare < 65536) {
            let grow = out.capacity().max(65536);
            reserve_for_reading(&mut out, grow);
        }
        crate::thread::sched::wait_readable(ctx, fd)?;
        if io.closed {
            let c = ctx.c().io_error;
            return Err(ctx.raise(c, "stream closed in another thread"));
        }
        let spare = out.spare_capacity_mut();
        // SAFETY: `spare` is writable memory of spare.len() bytes owned by `out`.
        let n = unsafe { libc::read(fd, spare.as_mut_ptr() as *mut libc::c_void, spare.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if e.raw_os_error() == Some(libc::EAGAIN) {
                crate::thread::sched::wait_ready(ctx, fd, libc::POLLIN)?;
                continue;
            }
            if io.child.is_some() && e.raw_os_error() == Some(libc::ECONNRESET) {
                break;
            }
            return Err(sys_error(ctx, e, ""));
        }
        if n == 0 {
            break;
        }
        // SAFETY: read(2) initialised the next n bytes.
        unsafe { out.set_len(out.len() + n as usize) };
    }
    io.eof = true;
    Ok(out)
}

/// The bytes between a regular file's offset and its end (None for other descriptors).
fn regular_file_rest(fd: i32) -> Option<usize> {
    // SAFETY: an all-zero stat is a valid out-value for fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fd is a descriptor and st a valid out-pointer; lseek only reads the offset.
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return None;
    }
    let pos = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) };
    (pos >= 0).then(|| (st.st_size as i64 - pos).max(0) as usize)
}

/// Reserves `extra` more bytes in `buf`; a large buffer is advised to use huge pages.
fn reserve_for_reading(buf: &mut Vec<u8>, extra: usize) {
    buf.reserve(extra);
    const HUGE: usize = 2 << 20;
    if buf.capacity() >= 4 * HUGE {
        let start = buf.as_mut_ptr() as usize;
        let aligned = (start + HUGE - 1) & !(HUGE - 1);
        let end = (start + buf.capacity()) & !(HUGE - 1);
        if end > aligned {
            // SAFETY: advice on pages inside the vector's own allocation; it changes no data.
            unsafe { libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE) };
        }
    }
}

// ---- IO methods ----

pub(crate) fn get_io<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut IoObj> {
    match io_ref(v) {
        Some(io) => Ok(io),
        None => Err(ctx.raise(ctx.c().io_error, "uninitialized stream")),
    }
}

/// The bytes `write` puts out for `s`: converted to the IO's external encoding when one
/// is set (other than BINARY) and the String is in another.
fn write_conv(ctx: &mut Ctx, recv: Value, s: Value) -> Result<Value> {
    let Some(io) = io_ref(recv) else { return Ok(s) };
    let target = match io.ext_enc {
        Some(e) if e != crate::core::encoding::BINARY => e,
        _ => return Ok(s),
    };
    let from = string::encoding(s);
    if from == target || (crate::core::encoding::is_ascii_compatible(target) && string::bytes(s).is_ascii() && crate::core::encoding::is_ascii_compatible(from)) {
        return Ok(s);
    }
    let to = crate::core::encoding::encoding_object(ctx, target);
    ctx.call_str(s, "encode", &[to])
}

fn m_write(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut total = 0;
    let mut buf = Vec::new();
    for &a in args.pos {
        let s = string::to_s(ctx, a)?;
        let s = write_conv(ctx, recv, s)?;
        buf.extend_from_slice(string::bytes(s));
        total += string::bytes(s).len();
    }
    if buf.is_empty() {
        check_open(ctx, recv)?;
        return Ok(Value::fixnum(0));
    }
    io_write(ctx, recv, &buf)?;
    Ok(Value::fixnum(total as i64))
}

fn m_lshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !has_builtin_write(ctx, recv) {
        ctx.call(recv, sym::WRITE, args.pos)?;
        return Ok(recv);
    }
    m_write(ctx, recv, args)?;
    Ok(recv)
}

fn m_puts(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    puts_to(ctx, recv, args.pos)?;
    Ok(Value::NIL)
}

fn m_print(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        let line = crate::interp::ops::get_caller_last_line(ctx);
        print_to(ctx, recv, &[line])?;
        return Ok(Value::NIL);
    }
    print_to(ctx, recv, args.pos)?;
    Ok(Value::NIL)
}

fn m_printf(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Ok(Value::NIL);
    }
    let s = crate::core::kernel::format_impl(ctx, args.pos[0], &args.pos[1..])?;
    write_bytes_to(ctx, recv, string::bytes(s))?;
    Ok(Value::NIL)
}

fn m_putc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    let b = if string::is_string(a) {
        string::bytes(a).first().copied().map(|c| vec![c]).unwrap_or_default()
    } else {
        vec![integer::to_i64_arg(ctx, a)? as u8]
    };
    write_bytes_to(ctx, recv, &b)?;
    Ok(a)
}

fn m_flush(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    let io = get_io(ctx, recv)?;
    flush_obj(ctx, io)?;
    Ok(recv)
}

fn m_sync(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    Ok(Value::bool(get_io(ctx, recv)?.sync))
}

fn m_set_sync(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    let io = get_io(ctx, recv)?;
    io.sync = args.pos[0].truthy();
    if io.sync {
        flush_obj(ctx, io)?;
    }
    Ok(args.pos[0])
}

fn m_fileno(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    Ok(Value::fixnum(io.fd as i64))
}

fn m_tty(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    // SAFETY: isatty only inspects the descriptor.
    Ok(Value::bool(unsafe { libc::isatty(io.fd) } == 1))
}

/// The encoding text read from `io` is in: its external encoding, else the default.
pub(crate) fn read_encoding(ctx: &Ctx, io: &IoObj) -> u8 {
    io.ext_enc.unwrap_or_else(|| crate::core::encoding::default_external(ctx))
}

/// A String of text read from `recv`, tagged with the read encoding and transcoded to
/// the internal encoding when one is set.
pub(crate) fn read_string(ctx: &mut Ctx, recv: Value, bytes: Vec<u8>) -> Result<Value> {
    let Some(io) = io_ref(recv) else { return Ok(string::new_with_enc(ctx, bytes, crate::core::encoding::UTF_8)) };
    let (ext, int) = (read_encoding(ctx, io), io.int_enc);
    let s = string::new_with_enc(ctx, bytes, ext);
    match int {
        Some(i) if i != ext => {
            let (to, from) = (crate::core::encoding::encoding_object(ctx, i), crate::core::encoding::encoding_object(ctx, ext));
            ctx.call_str(s, "encode", &[to, from])
        }
        _ => Ok(s),
    }
}

/// The caller's buffer argument of `read(n, buf)` and friends (nil means none).
pub(crate) fn buffer_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<Value>> {
    match v {
        Some(&b) if !b.is_nil() => {
            let b = string::to_str_arg(ctx, b)?;
            ctx.check_frozen(b)?;
            Ok(Some(b))
        }
        _ => Ok(None),
    }
}

/// Data read into the caller's buffer (its contents replaced, its encoding kept, as
/// CRuby's byte-counted reads leave it) or, without one, into a new binary String.
pub(crate) fn into_buffer(ctx: &mut Ctx, buf: Option<Value>, bytes: &[u8]) -> Value {
    match buf {
        Some(b) => {
            string::set_bytes(b, bytes.to_vec());
            b
        }
        None => string::new_binary(ctx, bytes),
    }
}

/// `IO#read(length = nil, outbuf = nil)`.
fn m_read(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let buf = buffer_arg(ctx, args.pos.get(1))?;
    match args.pos.first() {
        Some(&n) if !n.is_nil() => {
            let n = integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error(&format!("negative length {n} given")));
            }
            check_readable(ctx, recv)?;
            let io = io_ref(recv).expect("io");
            while io.rbuf.len() - io.rpos < n as usize {
                if !fill(ctx, io)? {
                    break;
                }
            }
            let avail = io.rbuf.len() - io.rpos;
            if avail == 0 && n > 0 {
                into_buffer(ctx, buf, b"");
                return Ok(Value::NIL);
            }
            let take = avail.min(n as usize);
            let bytes = io.rbuf[io.rpos..io.rpos + take].to_vec();
            io.rpos += take;
            Ok(into_buffer(ctx, buf, &bytes))
        }
        _ => {
            let b = read_all(ctx, recv)?;
            let s = read_string(ctx, recv, b)?;
            match buf {
                Some(out) => {
                    string::set_bytes(out, string::bytes(s).to_vec());
                    string::set_encoding(out, string::encoding(s));
                    Ok(out)
                }
                None => Ok(s),
            }
        }
    }
}

/// The `maxlen` argument of `readpartial`, `sysread` and `read_nonblock`.
pub(crate) fn maxlen_arg(ctx: &mut Ctx, v: Value) -> Result<usize> {
    let n = integer::to_i64_arg(ctx, v)?;
    if n < 0 {
        return Err(ctx.arg_error(&format!("negative length {n} given")));
    }
    Ok(n as usize)
}

pub(crate) fn eof_error(ctx: &mut Ctx) -> crate::error::Unwind {
    ctx.raise(ctx.c().eof_error, "end of file reached")
}

/// Takes up to `n` buffered bytes.
pub(crate) fn take_buffered(io: &mut IoObj, n: usize) -> Vec<u8> {
    let take = (io.rbuf.len() - io.rpos).min(n);
    let out = io.rbuf[io.rpos..io.rpos + take].to_vec();
    io.rpos += take;
    out
}

/// `IO#readpartial(maxlen, outbuf = nil)`: buffered data if there is some, else what one
/// read(2) returns after waiting for input; EOFError at the end.
fn m_readpartial(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = maxlen_arg(ctx, args.pos[0])?;
    let buf = buffer_arg(ctx, args.pos.get(1))?;
    check_readable(ctx, recv)?;
    if n == 0 {
        return Ok(into_buffer(ctx, buf, b""));
    }
    let io = io_ref(recv).expect("io");
    if io.rpos >= io.rbuf.len() && !fill(ctx, io)? {
        into_buffer(ctx, buf, b"");
        return Err(eof_error(ctx));
    }
    let bytes = take_buffered(io, n);
    Ok(into_buffer(ctx, buf, &bytes))
}

/// One read(2) of at most `n` bytes into a fresh vector (`Ok(None)` at end of file).
fn read_once(ctx: &mut Ctx, io: &mut IoObj, n: usize, blocking: bool) -> Result<std::result::Result<Option<Vec<u8>>, i32>> {
    let mut out = vec![0u8; n];
    let r = if blocking {
        read_some(ctx, io, out.as_mut_ptr(), n)?
    } else {
        loop {
            // SAFETY: out is a valid writable buffer of n bytes.
            let r = unsafe { libc::read(io.fd, out.as_mut_ptr() as *mut libc::c_void, n) };
            if r >= 0 {
                break Ok(r as usize);
            }
            match crate::core::process::last_errno() {
                libc::EINTR => {}
                e => break Err(e),
            }
        }
    };
    Ok(r.map(|r| {
        out.truncate(r);
        (r > 0).then_some(out)
    }))
}

/// `IO#sysread(maxlen, outbuf = nil)`: one unbuffered read(2).
fn m_sysread(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = maxlen_arg(ctx, args.pos[0])?;
    let buf = buffer_arg(ctx, args.pos.get(1))?;
    check_readable(ctx, recv)?;
    if n == 0 {
        return Ok(into_buffer(ctx, buf, b""));
    }
    let io = io_ref(recv).expect("io");
    if io.rpos < io.rbuf.len() {
        return Err(ctx.raise(ctx.c().io_error, "sysread for buffered IO"));
    }
    match read_once(ctx, io, n, true)? {
        Ok(Some(bytes)) => Ok(into_buffer(ctx, buf, &bytes)),
        Ok(None) => {
            into_buffer(ctx, buf, b"");
            Err(eof_error(ctx))
        }
        Err(errno) => Err(crate::core::process::errno_error(ctx, errno, "")),
    }
}

/// `IO#read_nonblock(maxlen, outbuf = nil, exception: true)`: buffered data, or one read(2)
/// with O_NONBLOCK set; `IO::EAGAINWaitReadable` (or `:wait_readable`) when nothing is there.
fn m_read_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = maxlen_arg(ctx, args.pos[0])?;
    let buf = buffer_arg(ctx, args.pos.get(1))?;
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    check_readable(ctx, recv)?;
    if n == 0 {
        return Ok(into_buffer(ctx, buf, b""));
    }
    let io = io_ref(recv).expect("io");
    if io.rpos < io.rbuf.len() {
        let bytes = take_buffered(io, n);
        return Ok(into_buffer(ctx, buf, &bytes));
    }
    // SAFETY: fcntl(2) on a descriptor this object owns.
    unsafe {
        let fl = libc::fcntl(io.fd, libc::F_GETFL);
        if fl >= 0 && fl & libc::O_NONBLOCK == 0 {
            libc::fcntl(io.fd, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
    }
    match read_once(ctx, io, n, false)? {
        Ok(Some(bytes)) => Ok(into_buffer(ctx, buf, &bytes)),
        Ok(None) if raise => {
            into_buffer(ctx, buf, b"");
            Err(eof_error(ctx))
        }
        Ok(None) => Ok(Value::NIL),
        Err(libc::EAGAIN) if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        Err(libc::EAGAIN) => Err(sys::wait_error(ctx, "EAGAINWaitReadable", "read would block")?),
        Err(errno) => Err(crate::core::process::errno_error(ctx, errno, "")),
    }
}

/// lseek(2) on the IO's descriptor, after flushing buffered writes and dropping buffered
/// input (so the descriptor's offset is the IO's position).
pub(crate) fn seek_io(ctx: &mut Ctx, recv: Value, offset: i64, whence: i32) -> Result<i64> {
    let io = get_io(ctx, recv)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    flush_obj(ctx, io)?;
    let unread = (io.rbuf.len() - io.rpos) as i64;
    let offset = if whence == libc::SEEK_CUR { offset - unread } else { offset };
    // SAFETY: lseek(2) on a descriptor this object owns.
    let r = unsafe { libc::lseek(io.fd, offset as libc::off_t, whence) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        let path = io.path.clone().unwrap_or_default();
        return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ESPIPE), &path));
    }
    io.rbuf.clear();
    io.rpos = 0;
    io.eof = false;
    Ok(r as i64)
}

fn whence_arg(ctx: &mut Ctx, v: Option<Value>) -> Result<i32> {
    let Some(v) = v else { return Ok(libc::SEEK_SET) };
    if let Some(s) = v.as_symbol() {
        return match ctx.sym_str(s).as_ref() {
            "SET" => Ok(libc::SEEK_SET),
            "CUR" => Ok(libc::SEEK_CUR),
            "END" => Ok(libc::SEEK_END),
            other => Err(ctx.arg_error(&format!("unknown whence: {other}"))),
        };
    }
    Ok(integer::to_i64_arg(ctx, v)? as i32)
}

fn m_seek(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let off = integer::to_i64_arg(ctx, args.pos[0])?;
    let whence = whence_arg(ctx, args.pos.get(1).copied())?;
    seek_io(ctx, recv, off, whence)?;
    Ok(Value::fixnum(0))
}

/// `IO#pos`: the descriptor's offset less input read ahead, plus output not yet written.
fn m_pos(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    // SAFETY: lseek(2) with offset 0 only queries the position.
    let r = unsafe { libc::lseek(io.fd, 0, libc::SEEK_CUR) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ESPIPE), ""));
    }
    Ok(Value::fixnum(r as i64 - (io.rbuf.len() - io.rpos) as i64 + io.wbuf.len() as i64))
}

fn m_set_pos(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let off = integer::to_i64_arg(ctx, args.pos[0])?;
    seek_io(ctx, recv, off, libc::SEEK_SET)?;
    Ok(args.pos[0])
}

fn m_rewind(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    seek_io(ctx, recv, 0, libc::SEEK_SET)?;
    if let Some(io) = io_ref(recv) {
        io.lineno = 0;
    }
    Ok(Value::fixnum(0))
}

fn m_eof(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_readable(ctx, recv)?;
    let io = io_ref(recv).expect("io");
    if io.rpos < io.rbuf.len() {
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(!fill(ctx, io)?))
}

/// `IO#dup`: a new IO on a dup(2) of the descriptor (buffered output is flushed first,
/// so both see the same position), with the same modes, encodings and path.
pub fn dup_io(ctx: &mut Ctx, v: Value, klass: Value) -> Result<Value> {
    let io = get_io(ctx, v)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    flush_obj(ctx, io)?;
    // SAFETY: duplicating a descriptor this object owns; the new one gets close-on-exec.
    let fd = unsafe { libc::fcntl(io.fd, libc::F_DUPFD_CLOEXEC, 3) };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EMFILE), "dup"));
    }
    let (r, w, path, ext, int, sync) = (io.readable, io.writable, io.path.clone(), io.ext_enc, io.int_enc, io.sync);
    let copy = new_io(ctx, klass, fd, r, w, path);
    if let Some(c) = io_ref(copy) {
        c.ext_enc = ext;
        c.int_enc = int;
        c.sync = sync;
    }
    Ok(copy)
}

/// Closes an IO (flushing it); a popen IO's child is waited for and becomes `$?`.
pub fn close(ctx: &mut Ctx, recv: Value) -> Result<()> {
    let io = get_io(ctx, recv)?;
    if io.closed {
        return Ok(());
    }
    flush_obj(ctx, io)?;
    if io.fd > 2 {
        // SAFETY: the descriptor is owned by this object and closed once.
        unsafe { libc::close(io.fd) };
    }
    io.closed = true;
    if let Some(pid) = io.child.take() {
        crate::core::process::wait_for(ctx, pid)?;
    }
    Ok(())
}

fn m_close(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    close(ctx, recv)?;
    Ok(Value::NIL)
}

/// `close_write`: a duplex IO (read-write popen) half-closes; a write-only one closes.
fn m_close_write(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    if io.closed {
        return Ok(Value::NIL);
    }
    if io.readable && io.writable {
        flush_obj(ctx, io)?;
        // SAFETY: shutdown(2) on a socket this object owns.
        unsafe { libc::shutdown(io.fd, libc::SHUT_WR) };
        io.writable = false;
        return Ok(Value::NIL);
    }
    if !io.writable {
        return Err(ctx.raise(ctx.c().io_error, "closing non-duplex IO for writing"));
    }
    close(ctx, recv)?;
    Ok(Value::NIL)
}

fn m_close_read(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    if io.closed {
        return Ok(Value::NIL);
    }
    if io.readable && io.writable {
        // SAFETY: shutdown(2) on a socket this object owns.
        unsafe { libc::shutdown(io.fd, libc::SHUT_RD) };
        io.readable = false;
        return Ok(Value::NIL);
    }
    if !io.readable {
        return Err(ctx.raise(ctx.c().io_error, "closing non-duplex IO for reading"));
    }
    close(ctx, recv)?;
    Ok(Value::NIL)
}

fn m_pid(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    Ok(io.child.map_or(Value::NIL, |p| Value::fixnum(p as i64)))
}

fn m_closed(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get_io(ctx, recv)?.closed))
}

fn m_lineno(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get_io(ctx, recv)?.lineno))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let io = get_io(ctx, recv)?;
    let desc = match &io.path {
        Some(p) => p.clone(),
        None => match io.fd {
            0 => "<STDIN>".into(),
            1 => "<STDOUT>".into(),
            2 => "<STDERR>".into(),
            fd => format!("fd {fd}"),
        },
    };
    let closed = if io.closed { " (closed)" } else { "" };
    Ok(string::new_utf8(ctx, &format!("#<{cname}:{desc}{closed}>")))
}

/// `IO#external_encoding`: the external encoding when text is transcoded; else the set
/// one, for an IO opened for writing nil when none is set (text is written as is), for a
/// read-only one `Encoding.default_external`.
fn m_external_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let io = get_io(ctx, recv)?;
    let enc = match io.ext_enc {
        Some(e) => Some(e),
        None if io.writable => None,
        None => Some(read_encoding(ctx, io)),
    };
    Ok(enc.map_or(Value::NIL, |e| crate::core::encoding::encoding_object(ctx, e)))
}

fn m_internal_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let int = get_io(ctx, recv)?.int_enc;
    Ok(int.map_or(Value::NIL, |e| crate::core::encoding::encoding_object(ctx, e)))
}

/// What an open mode or `set_encoding` says about the internal encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum IntEnc {
    /// Nothing: `Encoding.default_internal` applies.
    #[default]
    Default,
    /// `"ext:-"` or the same as the external one: no transcoding.
    Nil,
    Enc(u8),
}

/// CRuby's `rb_io_ext_int_to_encs`: the (external, internal) pair an IO records. An
/// unset external encoding stays None (it follows `Encoding.default_external`) unless
/// text is transcoded; a BINARY external encoding is never transcoded.
pub(crate) fn ext_int_to_encs(ctx: &Ctx, ext: Option<u8>, int: IntEnc, by_bom: bool) -> (Option<u8>, Option<u8>) {
    let default_ext = ext.is_none();
    let ext = ext.unwrap_or_else(|| crate::core::encoding::default_external(ctx));
    let int = if ext == crate::core::encoding::BINARY {
        None
    } else {
        match int {
            IntEnc::Default => crate::core::encoding::default_internal(ctx),
            IntEnc::Nil => None,
            IntEnc::Enc(e) => Some(e),
        }
    };
    match int {
        Some(i) if by_bom || i != ext => (Some(ext), Some(i)),
        _ => (if default_ext && int != Some(ext) { None } else { Some(ext) }, None),
    }
}

/// An encoding name of a mode string; an unknown one is ignored with a warning (as CRuby).
fn named_encoding(ctx: &mut Ctx, name: &str) -> Result<Option<u8>> {
    match crate::core::encoding::find(name) {
        Some(e) => Ok(Some(e)),
        None => {
            crate::core::warning::emit(ctx, &format!("warning: Unsupported encoding: {name} ignored\n"), None)?;
            Ok(None)
        }
    }
}

/// Parses `"ext"`, `"ext:int"`, `"ext:-"`, `"BOM|ext[:int]"` into the external encoding,
/// what is said of the internal one, and whether the BOM decides.
pub(crate) fn parse_encoding_spec(ctx: &mut Ctx, spec: &str) -> Result<(Option<u8>, IntEnc, bool)> {
    if spec.contains('\0') {
        return Err(ctx.arg_error("string contains null byte"));
    }
    let (ext, int) = match spec.split_once(':') {
        Some((e, i)) => (e, Some(i)),
        None => (spec, None),
    };
    let bom = ext.len() >= 4 && ext[..4].eq_ignore_ascii_case("bom|");
    let ext = if bom { &ext[4..] } else { ext };
    let e = if ext.is_empty() || ext == "-" { None } else { named_encoding(ctx, ext)? };
    let i = match int {
        None => IntEnc::Default,
        Some("-") => IntEnc::Nil,
        Some(n) => match named_encoding(ctx, n)? {
            Some(i) if Some(i) == e && !bom => IntEnc::Nil,
            Some(i) => IntEnc::Enc(i),
            None => IntEnc::Default,
        },
    };
    Ok((e, i, bom))
}

fn is_encoding_object(v: Value) -> bool {
    data_ref::<crate::core::encoding::EncodingObj>(v).is_some()
}

/// An Encoding or the name of one (`to_str`), as `set_encoding`'s arguments are read.
fn encoding_value(ctx: &mut Ctx, v: Value) -> Result<u8> {
    if is_encoding_object(v) {
        return crate::core::encoding::encoding_arg(ctx, v);
    }
    let s = string::to_str_arg(ctx, v)?;
    if string::bytes(s).contains(&0) {
        return Err(ctx.arg_error("string contains null byte"));
    }
    crate::core::encoding::encoding_arg(ctx, s)
}

/// The `newline:` option of `set_encoding` and the open methods.
/// Answers whether one was given, and what `"\n"` becomes on write.
fn newline_option(ctx: &mut Ctx, io: &IoObj, opts: Option<Value>) -> Result<Option<Option<&'static [u8]>>> {
    let Some(opts) = opts else { return Ok(None) };
    let key = Value::symbol(ctx.intern("newline"));
    let Some(v) = hash::get(opts, key).filter(|v| !v.is_nil()) else { return Ok(None) };
    let out: Option<&'static [u8]> = match v.as_symbol() {
        Some(s) => {
            let name = ctx.sym_str(s).to_string();
            match name.as_str() {
                "crlf" => Some(b"\r\n"),
                "cr" => Some(b"\r"),
                "universal" | "lf" => None,
                _ => return Err(ctx.arg_error(&format!("unexpected value for newline option: {name}"))),
            }
        }
        None => return Err(ctx.arg_error("unexpected value for newline option")),
    };
    if io.binmode {
        return Err(ctx.arg_error("newline decorator with binary mode"));
    }
    Ok(Some(out))
}

/// CRuby's `validate_enc_binmode`: text read without transcoding must be in an ASCII
/// compatible encoding unless the IO is in binary mode.
pub(crate) fn validate_enc_binmode(ctx: &mut Ctx, io: &IoObj, ext: Option<u8>, int: Option<u8>) -> Result<()> {
    let e = ext.unwrap_or_else(|| crate::core::encoding::default_external(ctx));
    if io.readable && int.is_none() && !io.binmode && !crate::core::encoding::is_ascii_compatible(e) {
        return Err(ctx.arg_error("ASCII incompatible encoding needs binmode"));
    }
    Ok(())
}

/// The `encoding:`, `external_encoding:`, `internal_encoding:` keywords of the open
/// methods, on top of what the mode string said.
pub(crate) fn apply_encoding_kwargs(ctx: &mut Ctx, f: Value, args: &Args) -> Result<()> {
    let Some(io) = io_ref(f) else { return Ok(()) };
    if let Some(nl) = newline_option(ctx, io, args.kw)? {
        io.newline_out = nl;
    }
    let io = io_ref(f).expect("io");
    let enc_kw = args.kwarg(ctx, "encoding").filter(|v| !v.is_nil());
    let ext_kw = args.kwarg(ctx, "external_encoding").filter(|v| !v.is_nil());
    let int_kw = args.kwarg(ctx, "internal_encoding").filter(|v| !v.is_nil());
    if enc_kw.is_none() && ext_kw.is_none() && int_kw.is_none() {
        return Ok(());
    }
    if let Some(e) = enc_kw.filter(|_| ext_kw.is_some() || int_kw.is_some()) {
        let shown = if string::is_string(e) { string::to_rust_string_lossy(e) } else { crate::core::object::inspect_string(ctx, e)? };
        let used = if ext_kw.is_some() { "external_encoding" } else { "internal_encoding" };
        crate::core::warning::emit(ctx, &format!("warning: Ignoring encoding parameter '{shown}': {used} is used\n"), None)?;
    }
    let (mut ext, mut int, mut bom) = (None, IntEnc::Default, false);
    if let Some(e) = enc_kw.filter(|_| ext_kw.is_none() && int_kw.is_none()) {
        (ext, int, bom) = if is_encoding_object(e) {
            (Some(encoding_value(ctx, e)?), IntEnc::Default, false)
        } else {
            let s = string::to_str_arg(ctx, e)?;
            let spec = string::to_rust_string_lossy(s);
            parse_encoding_spec(ctx, &spec)?
        };
    }
    if let Some(e) = ext_kw {
        (ext, bom) = if is_encoding_object(e) {
            (Some(encoding_value(ctx, e)?), false)
        } else {
            let s = string::to_str_arg(ctx, e)?;
            let spec = string::to_rust_string_lossy(s);
            let (x, _, b) = parse_encoding_spec(ctx, &spec)?;
            (x, b)
        };
    }
    if let Some(i) = int_kw {
        int = if string::is_string(i) && string::bytes(i) == b"-" { IntEnc::Nil } else { IntEnc::Enc(encoding_value(ctx, i)?) };
    }
    let (ext, int) = ext_int_to_encs(ctx, ext, int, bom);
    io.ext_enc = ext;
    io.int_enc = int;
    if bom && io.readable {
        set_encoding_by_bom(ctx, f)?;
    }
    Ok(())
}

/// Records an open mode's encodings on a new IO (defaults applied), and reads a BOM when
/// the mode asks for it.
pub(crate) fn set_io_encodings(ctx: &mut Ctx, f: Value, m: &open_mode::OpenMode) -> Result<()> {
    let Some(io) = io_ref(f) else { return Ok(()) };
    io.binmode = m.binary;
    let (ext, int) = ext_int_to_encs(ctx, m.ext_enc, m.int_enc, m.bom);
    validate_enc_binmode(ctx, io, ext, int)?;
    io.ext_enc = ext;
    io.int_enc = int;
    if m.bom && io.readable {
        set_encoding_by_bom(ctx, f)?;
    }
    Ok(())
}

/// `IO#set_encoding(ext, int = nil, **opts)`; `set_encoding("ext:int")`; nil resets to the
/// defaults of the moment.
fn m_set_encoding(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    let (v1, v2) = (args.pos[0], args.pos.get(1).copied().unwrap_or(Value::NIL));
    let (ext, int) = if !v2.is_nil() {
        let e = encoding_value(ctx, v1)?;
        let i = match string::try_to_str(ctx, v2)? {
            Some(s) if string::bytes(s) == b"-" => None,
            Some(s) => Some(encoding_value(ctx, s)?),
            None => Some(encoding_value(ctx, v2)?),
        };
        match i {
            Some(i) if i != e && e != crate::core::encoding::BINARY => (Some(e), Some(i)),
            _ => (Some(e), None),
        }
    } else if v1.is_nil() {
        ext_int_to_encs(ctx, None, IntEnc::Default, false)
    } else {
        match string::try_to_str(ctx, v1)? {
            Some(s) => {
                if !crate::core::encoding::is_ascii_compatible(string::encoding(s)) {
                    return Err(ctx.arg_error("invalid encoding name (non ASCII)"));
                }
                let spec = string::to_rust_string_lossy(s);
                let (e, i, _) = parse_encoding_spec(ctx, &spec)?;
                ext_int_to_encs(ctx, e, i, false)
            }
            None => {
                let e = encoding_value(ctx, v1)?;
                ext_int_to_encs(ctx, Some(e), IntEnc::Default, false)
            }
        }
    };
    let io = get_io(ctx, recv)?;
    let nl = newline_option(ctx, io, args.kw)?;
    validate_enc_binmode(ctx, io, ext, int)?;
    let io = get_io(ctx, recv)?;
    if let Some(nl) = nl {
        io.newline_out = nl;
    }
    io.ext_enc = ext;
    io.int_enc = int;
    Ok(recv)
}

/// Reads a byte-order mark at the read position: consumes it and answers its encoding,
/// or leaves the input as it was and answers None.
fn read_bom(ctx: &mut Ctx, io: &mut IoObj) -> Result<Option<u8>> {
    while io.rbuf.len() - io.rpos < 4 {
        if !fill(ctx, io)? {
            break;
        }
    }
    let b = &io.rbuf[io.rpos..];
    let find = |n: &str| crate::core::encoding::find(n).expect("known encoding");
    let (enc, len) = if b.starts_with(&[0xEF, 0xBB, 0xBF]) {
        (find("UTF-8"), 3)
    } else if b.starts_with(&[0xFE, 0xFF]) {
        (find("UTF-16BE"), 2)
    } else if b.starts_with(&[0xFF, 0xFE, 0, 0]) {
        (find("UTF-32LE"), 4)
    } else if b.starts_with(&[0xFF, 0xFE]) {
        (find("UTF-16LE"), 2)
    } else if b.starts_with(&[0, 0, 0xFE, 0xFF]) {
        (find("UTF-32BE"), 4)
    } else {
        return Ok(None);
    };
    io.rpos += len;
    Ok(Some(enc))
}

/// Sets the external encoding from a BOM at the read position (for "r:BOM|enc").
fn set_encoding_by_bom(ctx: &mut Ctx, f: Value) -> Result<Option<u8>> {
    let io = io_ref(f).expect("io");
    let found = read_bom(ctx, io)?;
    if let Some(e) = found {
        let io = io_ref(f).expect("io");
        let int = io.int_enc.map_or(IntEnc::Nil, IntEnc::Enc);
        let (ext, int) = ext_int_to_encs(ctx, Some(e), int, false);
        io.ext_enc = ext;
        io.int_enc = int;
    }
    Ok(found)
}

/// `IO#set_encoding_by_bom`: for a binary-mode IO without a set encoding.
fn m_set_encoding_by_bom(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    let io = get_io(ctx, recv)?;
    if !io.binmode {
        return Err(ctx.arg_error("ASCII incompatible encoding needs binmode"));
    }
    if io.int_enc.is_some() {
        return Err(ctx.arg_error("encoding conversion is set"));
    }
    if let Some(e) = io.ext_enc.filter(|&e| e != crate::core::encoding::BINARY) {
        return Err(ctx.arg_error(&format!("encoding is set to {} already", crate::core::encoding::name(e))));
    }
    if !io.readable {
        return Ok(Value::NIL);
    }
    Ok(match set_encoding_by_bom(ctx, recv)? {
        Some(e) => crate::core::encoding::encoding_object(ctx, e),
        None => Value::NIL,
    })
}

/// Raises IOError for a closed IO.
pub(crate) fn check_open(ctx: &mut Ctx, v: Value) -> Result<()> {
    if get_io(ctx, v)?.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    Ok(())
}

/// `IO#binmode`: no newline conversion, text read as BINARY.
fn m_binmode(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    let io = get_io(ctx, recv)?;
    io.binmode = true;
    io.ext_enc = Some(crate::core::encoding::BINARY);
    io.int_enc = None;
    Ok(recv)
}

fn m_binmode_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    check_open(ctx, recv)?;
    Ok(Value::bool(get_io(ctx, recv)?.binmode))
}

fn m_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = get_io(ctx, recv)?.path.clone();
    Ok(match p {
        Some(p) => string::new_utf8(ctx, &p),
        None => Value::NIL,
    })
}

fn stdout_setter(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !ctx.respond_to(v, sym::WRITE, true) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("$stdout must have write method, {cname} given")));
    }
    crate::core::globals::set_raw(ctx, sym::DOLLAR_STDOUT, v);
    Ok(())
}

fn stderr_setter(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !ctx.respond_to(v, sym::WRITE, true) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("$stderr must have write method, {cname} given")));
    }
    crate::core::globals::set_raw(ctx, sym::DOLLAR_STDERR, v);
    Ok(())
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    let stdin = new_io(ctx, io, 0, true, false, None);
    let stdout = new_io(ctx, io, 1, false, true, None);
    let stderr = new_io(ctx, io, 2, false, true, None);
    let obj = ctx.c().object;
    for (name, v) in [("STDIN", stdin), ("STDOUT", stdout), ("STDERR", stderr)] {
        let id = ctx.intern(name);
        crate::core::module::body(obj).const_set(id, v);
    }
    crate::core::globals::define(ctx, sym::DOLLAR_STDIN, stdin);
    crate::core::globals::define_hooked(ctx, sym::DOLLAR_STDOUT, stdout, None, Some(stdout_setter));
    crate::core::globals::define_hooked(ctx, sym::DOLLAR_STDERR, stderr, None, Some(stderr_setter));
    crate::core::globals::alias(ctx, sym::DOLLAR_GT, sym::DOLLAR_STDOUT);
    crate::methods!(ctx, io, [
        ("write", m_write, [0..], Unsafe),
        ("<<", m_lshift, [1], Unsafe),
        ("puts", m_puts, [0..], Unsafe),
        ("print", m_print, [0..], Unsafe),
        ("printf", m_printf, [0..], Unsafe),
        ("putc", m_putc, [1], Unsafe),
        ("flush", m_flush, [0], Unsafe),
        ("sync", m_sync, [0], Unsafe),
        ("sync=", m_set_sync, [1], Unsafe),
        ("fileno", m_fileno, [0], Unsafe),
        ("to_i", m_fileno, [0], Unsafe),
        ("tty?", m_tty, [0], Unsafe),
        ("isatty", m_tty, [0], Unsafe),
        ("read", m_read, [0..=2], Unsafe),
        ("readpartial", m_readpartial, [1..=2], Unsafe),
        ("sysread", m_sysread, [1..=2], Unsafe),
        ("read_nonblock", m_read_nonblock, [1..=2], Unsafe, Kw),
        ("eof?", m_eof, [0], Unsafe),
        ("eof", m_eof, [0], Unsafe),
        ("close", m_close, [0], Unsafe),
        ("closed?", m_closed, [0], Unsafe),
        ("lineno", m_lineno, [0], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
        ("path", m_path, [0], Unsafe),
        ("to_path", m_path, [0], Unsafe),
        ("external_encoding", m_external_encoding, [0], Unsafe),
        ("internal_encoding", m_internal_encoding, [0], Unsafe),
        ("set_encoding", m_set_encoding, [1..=2], Unsafe, Kw),
        ("set_encoding_by_bom", m_set_encoding_by_bom, [0], Unsafe),
        ("binmode", m_binmode, [0], Unsafe),
        ("binmode?", m_binmode_p, [0], Unsafe),
        ("seek", m_seek, [1..=2], Unsafe),
        ("pos", m_pos, [0], Unsafe),
        ("tell", m_pos, [0], Unsafe),
        ("pos=", m_set_pos, [1], Unsafe),
        ("rewind", m_rewind, [0], Unsafe),
        ("close_write", m_close_write, [0], Unsafe),
        ("close_read", m_close_read, [0], Unsafe),
        ("pid", m_pid, [0], Unsafe),
    ]);
    for (name, v) in [("SEEK_SET", libc::SEEK_SET), ("SEEK_CUR", libc::SEEK_CUR), ("SEEK_END", libc::SEEK_END)] {
        let id = ctx.intern(name);
        crate::core::module::body(io).const_set(id, Value::fixnum(v as i64));
    }
    let _ = hash::new;
    lines::init(ctx);
    let _ = std::io::stdout().flush();
}
