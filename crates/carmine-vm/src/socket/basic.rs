//! BasicSocket: what every socket answers — `send`, `recv`, `recv_nonblock`, `shutdown`,
//! `setsockopt`/`getsockopt` (with `Socket::Option`), `getsockname`, `getpeername`,
//! `close_read`/`close_write` by shutdown, and the `do_not_reverse_lookup` switch.
//!
//! Invariants: see `socket` (blocking calls wait through the scheduler funnel first).

use super::{class, fd_of, last_errno, sys_error};
use crate::core::{integer, io, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn flags_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<i32> {
    match v {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f),
        _ => Ok(0),
    }
}

/// Sends all of `data` (or what one non-blocking send takes) on `fd`, to `dest` if given.
pub fn send_bytes(ctx: &mut Ctx, fd: i32, data: &[u8], flags: i32, dest: Option<&[u8]>) -> Result<usize> {
    loop {
        crate::thread::sched::wait_writable(ctx, fd)?;
        // SAFETY: data and dest are valid buffers for the call.
        let n = unsafe {
            match dest {
                Some(d) => libc::sendto(fd, data.as_ptr() as *const libc::c_void, data.len(), flags | libc::MSG_NOSIGNAL, d.as_ptr() as *const libc::sockaddr, d.len() as libc::socklen_t),
                None => libc::send(fd, data.as_ptr() as *const libc::c_void, data.len(), flags | libc::MSG_NOSIGNAL),
            }
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        match last_errno() {
            libc::EINTR => continue,
            libc::EAGAIN if flags & libc::MSG_DONTWAIT == 0 => continue,
            e => return Err(sys_error(ctx, e, if dest.is_some() { "sendto(2)" } else { "send(2)" })),
        }
    }
}

/// One recvfrom(2) of at most `n` bytes; the data and the sender's packed address.
pub fn recv_bytes(ctx: &mut Ctx, fd: i32, n: usize, flags: i32, blocking: bool) -> Result<std::result::Result<(Vec<u8>, Vec<u8>), i32>> {
    let mut buf = vec![0u8; n.max(1)];
    // A blocking receive shared with other threads or a fiber scheduler asks without
    // waiting first and waits (GL left, or through the scheduler) only when nothing is
    // there; alone it may block the thread.
    let shared = crate::thread::sched::others_running(ctx) || crate::fiber::scheduler::active(ctx).is_some();
    let dontwait = if !blocking || shared { libc::MSG_DONTWAIT } else { 0 };
    loop {
        // SAFETY: an all-zero sockaddr_storage is valid; buf holds n bytes.
        let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: as above.
        let r = unsafe { libc::recvfrom(fd, buf.as_mut_ptr() as *mut libc::c_void, n, flags | dontwait, &mut addr as *mut _ as *mut libc::sockaddr, &mut len) };
        if r < 0 {
            match last_errno() {
                libc::EINTR => continue,
                libc::EAGAIN if blocking => {
                    crate::thread::sched::wait_ready(ctx, fd, libc::POLLIN)?;
                    continue;
                }
                e => return Ok(Err(e)),
            }
        }
        buf.truncate(r as usize);
        // SAFETY: the kernel filled `len` bytes of addr.
        let packed = unsafe { std::slice::from_raw_parts(&addr as *const _ as *const u8, (len as usize).min(std::mem::size_of::<libc::sockaddr_storage>())) }.to_vec();
        return Ok(Ok((buf, packed)));
    }
}

/// `BasicSocket#send(mesg, flags, dest_sockaddr = nil)`.
fn bs_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let data = string::bytes(s).to_vec();
    let flags = flags_arg(ctx, args.pos.get(1))?;
    let dest = match args.pos.get(2) {
        Some(&d) if !d.is_nil() => Some(super::socket::addr_bytes(ctx, d)?),
        _ => None,
    };
    let fd = fd_of(ctx, recv)?;
    let n = send_bytes(ctx, fd, &data, flags, dest.as_deref())?;
    Ok(Value::fixnum(n as i64))
}

/// `BasicSocket#recv(maxlen, flags = 0, outbuf = nil)`: "" at the end of a stream.
fn bs_recv(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error(&format!("negative length {n} given")));
    }
    let flags = flags_arg(ctx, args.pos.get(1))?;
    let buf = io::buffer_arg(ctx, args.pos.get(2))?;
    let fd = fd_of(ctx, recv)?;
    if let Some(b) = buffered(ctx, recv, n as usize, buf) {
        return Ok(b);
    }
    match recv_bytes(ctx, fd, n as usize, flags, true)? {
        Ok((data, _)) if data.is_empty() && n > 0 && is_stream(fd) => Ok(Value::NIL),
        Ok((data, _)) => Ok(io::into_buffer(ctx, buf, &data)),
        Err(e) => Err(sys_error(ctx, e, "recvfrom(2)")),
    }
}

/// `BasicSocket#recv_nonblock(maxlen, flags = 0, buf = nil, exception: true)`.
fn bs_recv_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?.max(0) as usize;
    let flags = flags_arg(ctx, args.pos.get(1))?;
    let buf = io::buffer_arg(ctx, args.pos.get(2))?;
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    match recv_bytes(ctx, fd, n, flags, false)? {
        Ok((data, _)) if data.is_empty() && n > 0 && is_stream(fd) => Ok(Value::NIL),
        Ok((data, _)) => Ok(io::into_buffer(ctx, buf, &data)),
        Err(libc::EAGAIN) if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        Err(libc::EAGAIN) => Err(io::sys::wait_error(ctx, "EAGAINWaitReadable", "recvfrom(2) would block")?),
        Err(e) => Err(sys_error(ctx, e, "recvfrom(2)")),
    }
}

fn how_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<i32> {
    let Some(&v) = v else { return Ok(libc::SHUT_RDWR) };
    if let Some(name) = super::const_name_arg(ctx, v)? {
        return match name.strip_prefix("SHUT_").unwrap_or(&name) {
            "RD" => Ok(libc::SHUT_RD),
            "WR" => Ok(libc::SHUT_WR),
            "RDWR" => Ok(libc::SHUT_RDWR),
            _ => Err(super::socket_error(ctx, &format!("unknown shutdown argument: {name}"), false)),
        };
    }
    let n = integer::to_int_arg(ctx, v)?;
    if !(0..=2).contains(&n) {
        return Err(ctx.arg_error(&format!("invalid shutdown mode: {n}")));
    }
    Ok(n)
}

fn bs_shutdown(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let how = how_arg(ctx, args.pos.first())?;
    let fd = fd_of(ctx, recv)?;
    // SAFETY: shutdown on an open socket.
    if unsafe { libc::shutdown(fd, how) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "shutdown(2)"));
    }
    Ok(Value::fixnum(0))
}

/// `close_read`/`close_write` on a socket shut the direction down, and close the socket
/// when both are closed (as CRuby's).
fn half_close(ctx: &mut Ctx, recv: Value, read: bool) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    if !read {
        io::flush_value(ctx, recv)?;
    }
    // SAFETY: shutdown on an open socket.
    unsafe { libc::shutdown(fd, if read { libc::SHUT_RD } else { libc::SHUT_WR }) };
    let o = io::io_ref(recv).expect("io");
    if read {
        o.readable = false;
    } else {
        o.writable = false;
    }
    if !o.readable && !o.writable {
        io::close(ctx, recv)?;
    }
    Ok(Value::NIL)
}

fn bs_close_read(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    half_close(ctx, recv, true)
}

fn bs_close_write(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    half_close(ctx, recv, false)
}

/// A socket option level: an Integer, or a Symbol/String/`to_str` naming it
/// (`:SOCKET`, `"SOL_SOCKET"`, `:IP`, `:IPPROTO_TCP`).
fn level_arg(ctx: &mut Ctx, v: Value) -> Result<i32> {
    if let Some(name) = super::const_name_arg(ctx, v)? {
        if name == "SOCKET" {
            return Ok(libc::SOL_SOCKET);
        }
        return super::named_const(ctx, v, &["SOL_", "IPPROTO_"], "level").map_err(|_| super::socket_error(ctx, &format!("unknown protocol level: {name}"), false));
    }
    integer::to_int_arg(ctx, v)
}

/// An option name, read with the prefix of its level (`:REUSEADDR` at SOL_SOCKET is
/// SO_REUSEADDR, `:CORK` at IPPROTO_UDP is UDP_CORK).
fn optname_arg(ctx: &mut Ctx, level: i32, v: Value) -> Result<i32> {
    let prefix = match level {
        libc::SOL_SOCKET => "SO_",
        libc::IPPROTO_IP => "IP_",
        libc::IPPROTO_IPV6 => "IPV6_",
        libc::IPPROTO_TCP => "TCP_",
        libc::IPPROTO_UDP => "UDP_",
        _ => return integer::to_int_arg(ctx, v),
    };
    let Some(name) = super::const_name_arg(ctx, v)? else { return integer::to_int_arg(ctx, v) };
    let full = if name.starts_with(prefix) { name.clone() } else { format!("{prefix}{name}") };
    match super::CONSTANTS.iter().find(|(c, _)| *c == full) {
        Some(&(_, n)) => Ok(n as i32),
        None => Err(super::socket_error(ctx, &format!("unknown socket level or option: {name}"), false)),
    }
}

/// `setsockopt(level, optname, optval)` or `setsockopt(Socket::Option)`: an Integer,
/// true/false (as an int) or a packed String value.
fn bs_setsockopt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (level, name, val) = if args.pos.len() == 1 {
        let o = args.pos[0];
        let (l, n, d) = (ctx.call_str(o, "level", &[])?, ctx.call_str(o, "optname", &[])?, ctx.call_str(o, "data", &[])?);
        (l, n, d)
    } else if args.pos.len() == 3 {
        (args.pos[0], args.pos[1], args.pos[2])
    } else {
        return Err(ctx.arity_error(args.pos.len(), 3, Some(3)));
    };
    let level = level_arg(ctx, level)?;
    let name = optname_arg(ctx, level, name)?;
    let bytes = if val == Value::TRUE || val == Value::FALSE {
        (val.truthy() as i32).to_ne_bytes().to_vec()
    } else if string::is_string(val) {
        string::bytes(val).to_vec()
    } else {
        integer::to_int_arg(ctx, val)?.to_ne_bytes().to_vec()
    };
    let fd = fd_of(ctx, recv)?;
    // SAFETY: bytes is a valid buffer of its length.
    if unsafe { libc::setsockopt(fd, level, name, bytes.as_ptr() as *const libc::c_void, bytes.len() as libc::socklen_t) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "setsockopt(2)"));
    }
    Ok(Value::fixnum(0))
}

/// `getsockopt(level, optname)`: a `Socket::Option`.
fn bs_getsockopt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let level = level_arg(ctx, args.pos[0])?;
    let name = optname_arg(ctx, level, args.pos[1])?;
    let fd = fd_of(ctx, recv)?;
    let mut buf = [0u8; 256];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf holds len bytes.
    if unsafe { libc::getsockopt(fd, level, name, buf.as_mut_ptr() as *mut libc::c_void, &mut len) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "getsockopt(2)"));
    }
    let family = socket_family(fd);
    let data = string::new_binary(ctx, &buf[..len as usize]);
    let sock = class(ctx, "Socket");
    let opt = ctx.call_str(sock, "const_get", &[Value::symbol(ctx.intern("Option"))])?;
    ctx.call_str(opt, "new", &[Value::fixnum(family as i64), Value::fixnum(level as i64), Value::fixnum(name as i64), data])
}

/// The socket type (SO_TYPE) of `fd`.
pub fn socktype(fd: i32) -> i32 {
    let mut st: i32 = 0;
    let mut len = 4 as libc::socklen_t;
    // SAFETY: st is a valid int out-value.
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_TYPE, &mut st as *mut i32 as *mut libc::c_void, &mut len) };
    st
}

/// Whether `fd` is a SOCK_STREAM socket (where reading nothing means the end).
pub fn is_stream(fd: i32) -> bool {
    socktype(fd) == libc::SOCK_STREAM
}

pub fn socket_family(fd: i32) -> i32 {
    // SAFETY: an all-zero sockaddr_storage is valid; getsockname fills at most len bytes.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: as above.
    unsafe { libc::getsockname(fd, &mut addr as *mut _ as *mut libc::sockaddr, &mut len) };
    addr.ss_family as i32
}

/// getsockname(2) (`peer` false) or getpeername(2) as the packed sockaddr bytes.
pub fn sockname(ctx: &mut Ctx, fd: i32, peer: bool) -> Result<Vec<u8>> {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut addr: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: the call fills at most len bytes of addr.
    let rc = unsafe { if peer { libc::getpeername(fd, &mut addr as *mut _ as *mut libc::sockaddr, &mut len) } else { libc::getsockname(fd, &mut addr as *mut _ as *mut libc::sockaddr, &mut len) } };
    if rc != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, if peer { "getpeername(2)" } else { "getsockname(2)" }));
    }
    // SAFETY: the kernel filled `len` bytes.
    Ok(unsafe { std::slice::from_raw_parts(&addr as *const _ as *const u8, (len as usize).min(std::mem::size_of::<libc::sockaddr_storage>())) }.to_vec())
}

fn bs_getsockname(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let b = sockname(ctx, fd, false)?;
    Ok(string::new_binary(ctx, &b))
}

fn bs_getpeername(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let b = sockname(ctx, fd, true)?;
    Ok(string::new_binary(ctx, &b))
}

/// `do_not_reverse_lookup` of a socket or of BasicSocket itself (true unless set).
fn bs_do_not_reverse_lookup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@do_not_reverse_lookup");
    let v = crate::core::object::ivar_get(ctx, recv, id);
    Ok(if v.is_nil() { Value::TRUE } else { v })
}

/// `getpeereid`: the effective user and group ids of the peer of a UNIX socket.
fn bs_getpeereid(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    // SAFETY: an all-zero ucred is valid; getsockopt fills at most len bytes.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: as above.
    if unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_PEERCRED, &mut cred as *mut _ as *mut libc::c_void, &mut len) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "getsockopt(SO_PEERCRED)"));
    }
    let out = crate::core::array::new(ctx);
    crate::core::array::push(ctx, out, Value::fixnum(cred.uid as i64));
    crate::core::array::push(ctx, out, Value::fixnum(cred.gid as i64));
    Ok(out)
}

/// `read_nonblock(len, buf = nil, exception: true)` on a socket: one recv(2) with
/// MSG_DONTWAIT, leaving the descriptor's own blocking mode alone.
fn bs_read_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error(&format!("negative length {n} given")));
    }
    let buf = io::buffer_arg(ctx, args.pos.get(1))?;
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    if let Some(b) = buffered(ctx, recv, n as usize, buf) {
        return Ok(b);
    }
    if n == 0 {
        return Ok(io::into_buffer(ctx, buf, &[]));
    }
    match recv_bytes(ctx, fd, n as usize, 0, false)? {
        Ok((data, _)) if data.is_empty() => {
            if raise {
                Err(ctx.raise(ctx.c().eof_error, "end of file reached"))
            } else {
                Ok(Value::NIL)
            }
        }
        Ok((data, _)) => Ok(io::into_buffer(ctx, buf, &data)),
        Err(libc::EAGAIN) if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        Err(libc::EAGAIN) => Err(io::sys::wait_error(ctx, "EAGAINWaitReadable", "read would block")?),
        Err(e) => Err(sys_error(ctx, e, "read")),
    }
}

/// `write_nonblock(data, exception: true)` on a socket: one send(2) with MSG_DONTWAIT.
fn bs_write_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_s(ctx, args.pos[0])?;
    let data = string::bytes(s).to_vec();
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    io::flush_value(ctx, recv)?;
    // SAFETY: data is a valid buffer of its length.
    let n = unsafe { libc::send(fd, data.as_ptr() as *const libc::c_void, data.len(), libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) };
    if n >= 0 {
        return Ok(Value::fixnum(n as i64));
    }
    match last_errno() {
        libc::EAGAIN if !raise => Ok(Value::symbol(ctx.intern("wait_writable"))),
        libc::EAGAIN => Err(io::sys::wait_error(ctx, "EAGAINWaitWritable", "write would block")?),
        e => Err(sys_error(ctx, e, "write")),
    }
}

fn bs_set_do_not_reverse_lookup(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = ctx.intern("@do_not_reverse_lookup");
    crate::core::object::ivar_set_raw(ctx, recv, id, Value::bool(args.pos[0].truthy()));
    Ok(args.pos[0])
}

/// `BasicSocket.for_fd(fd)`.
fn bs_for_fd(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fd = integer::to_int_arg(ctx, args.pos[0])?;
    Ok(super::new_socket(ctx, recv, fd))
}

/// Socket::Option, written in Ruby: a value holder with CRuby's accessors.
const OPTION_RB: &str = r##"
class Socket::Option
  attr_reader :family, :level, :optname, :data

  # The option name at `level`, read with that level's prefix (SO_, IP_, IPV6_, TCP_, UDP_).
  def self.__optname(level, optname)
    prefix = { Socket::SOL_SOCKET => "SO_", Socket::IPPROTO_IP => "IP_", Socket::IPPROTO_IPV6 => "IPV6_",
               Socket::IPPROTO_TCP => "TCP_", Socket::IPPROTO_UDP => "UDP_" }[level]
    return optname.to_int unless prefix
    Socket::AncillaryData.__constant(optname, [prefix], "unknown socket level or option")
  end

  def initialize(family, level, optname, data)
    @family = Socket::AncillaryData.__family(family)
    @level = Socket::AncillaryData.__level(@family, level)
    @optname = Socket::Option.__optname(@level, optname)
    @data = data.to_str.b
  end

  def self.int(family, level, optname, i) = new(family, level, optname, [Integer(i)].pack("i"))
  def self.bool(family, level, optname, b) = new(family, level, optname, [b ? 1 : 0].pack("i"))

  def self.linger(onoff, secs)
    on = case onoff
         when true then 1
         when false, nil then 0
         else Integer(onoff)
         end
    new(:UNSPEC, :SOCKET, :LINGER, [on, Integer(secs)].pack("ii"))
  end

  def int
    raise TypeError, "size differ.  expected as sizeof(int)=4 but #{@data.bytesize}" unless @data.bytesize == 4
    @data.unpack1("i")
  end

  def bool
    raise TypeError, "size differ.  expected as sizeof(int)=4 but #{@data.bytesize}" unless [1, 4].include?(@data.bytesize)
    @data.bytesize == 1 ? @data.getbyte(0) != 0 : int != 0
  end

  def linger
    unless @level == Socket::SOL_SOCKET && @optname == Socket::SO_LINGER
      raise TypeError, "linger socket option expected"
    end
    raise TypeError, "size differ.  expected as sizeof(struct linger)=8 but #{@data.bytesize}" unless @data.bytesize == 8
    onoff, secs = @data.unpack("ii")
    [onoff == 0 ? false : (onoff == 1 ? true : onoff), secs]
  end

  def unpack(fmt) = @data.unpack(fmt)
  def to_s = @data

  def inspect
    name = ->(prefix, value) do
      c = Socket::Constants.constants.find { |n| n.start_with?(prefix) && !n.end_with?("_LOCAL") && Socket::Constants.const_get(n) == value }
      c ? c.to_s.delete_prefix(prefix) : value.to_s
    end
    level = @level == Socket::SOL_SOCKET ? "SOCKET" : name.("IPPROTO_", @level)
    prefix = { Socket::SOL_SOCKET => "SO_", Socket::IPPROTO_IP => "IP_", Socket::IPPROTO_IPV6 => "IPV6_",
               Socket::IPPROTO_TCP => "TCP_", Socket::IPPROTO_UDP => "UDP_" }[@level]
    opt = prefix ? name.(prefix, @optname) : @optname.to_s
    value = if @level == Socket::SOL_SOCKET && @optname == Socket::SO_LINGER && @data.bytesize == 8
      onoff, secs = @data.unpack("ii")
      "#{onoff == 0 ? "off" : "on"} #{secs}sec"
    elsif @data.bytesize == 4
      @data.unpack1("i").to_s
    else
      @data.inspect
    end
    "#<Socket::Option: #{name.("AF_", @family)} #{level} #{opt} #{value}>"
  end
end
"##;

pub fn init(ctx: &mut Ctx) {
    let b = class(ctx, "BasicSocket");
    crate::methods!(ctx, b, [
        ("send", bs_send, [2..=3], Unsafe),
        ("recv", bs_recv, [1..=3], Unsafe),
        ("recv_nonblock", bs_recv_nonblock, [1..=3], Unsafe, Kw),
        ("shutdown", bs_shutdown, [0..=1], Unsafe),
        ("close_read", bs_close_read, [0], Unsafe),
        ("close_write", bs_close_write, [0], Unsafe),
        ("setsockopt", bs_setsockopt, [1..=3], Unsafe),
        ("getsockopt", bs_getsockopt, [2], Unsafe),
        ("getsockname", bs_getsockname, [0], Unsafe),
        ("getpeername", bs_getpeername, [0], Unsafe),
        ("do_not_reverse_lookup", bs_do_not_reverse_lookup, [0], Unsafe),
        ("do_not_reverse_lookup=", bs_set_do_not_reverse_lookup, [1], Unsafe),
        ("do_not_reverse_lookup", bs_do_not_reverse_lookup, [0], Unsafe, Singleton),
        ("do_not_reverse_lookup=", bs_set_do_not_reverse_lookup, [1], Unsafe, Singleton),
        ("for_fd", bs_for_fd, [1], Unsafe, Singleton),
        ("getpeereid", bs_getpeereid, [0], Unsafe),
        ("read_nonblock", bs_read_nonblock, [1..=2], Unsafe, Kw),
        ("write_nonblock", bs_write_nonblock, [1], Unsafe, Kw),
    ]);
    let src = string::new_utf8(ctx, OPTION_RB);
    let main = ctx.vm().main_obj.get();
    let _ = ctx.call_str(main, "eval", &[src]);
}

/// What an earlier buffered read (`gets`, `read`) left in the socket's buffer, up to `n`
/// bytes, as `recv` returns it first (None when the buffer is empty).
fn buffered(ctx: &mut Ctx, sock: Value, n: usize, buf: Option<Value>) -> Option<Value> {
    let o = io::io_ref(sock)?;
    if o.rpos >= o.rbuf.len() {
        return None;
    }
    let bytes = io::take_buffered(o, n);
    Some(io::into_buffer(ctx, buf, &bytes))
}
