//! The low-level Socket class: `Socket.new(domain, type, protocol)`, `bind`, `listen`,
//! `accept` (returning `[socket, addrinfo]`), `connect`, their `_nonblock` forms,
//! `sysaccept`, `recvfrom`, `Socket.pair`, and the `Socket.tcp`/`unix` helpers.
//!
//! Invariants: addresses are packed sockaddr Strings or Addrinfo objects; domain and type
//! arguments accept Integers and CRuby's Symbols/Strings (`:INET`, `"SOCK_STREAM"`).

use super::addrinfo::{new_addrinfo, AddrinfoObj};
use super::basic::recv_bytes;
use super::inet::{accept_fd, connect_fd};
use super::{class, fd_of, last_errno, new_socket, sys_error};
use crate::core::{array, integer, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A packed sockaddr from a String or an Addrinfo.
pub fn addr_bytes(ctx: &mut Ctx, v: Value) -> Result<Vec<u8>> {
    if let Some(a) = data_ref::<AddrinfoObj>(v) {
        return Ok(a.addr.clone());
    }
    let s = string::to_str_arg(ctx, v)?;
    Ok(string::bytes(s).to_vec())
}

/// `Socket.new(domain, socktype, protocol = 0)`.
fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() < 2 || args.pos.len() > 3 {
        return Err(ctx.arity_error(args.pos.len(), 2, Some(3)));
    }
    let domain = super::named_const(ctx, args.pos[0], &["AF_", "PF_"], "domain")?;
    let ty = super::named_const(ctx, args.pos[1], &["SOCK_"], "type")?;
    let proto = match args.pos.get(2) {
        Some(&p) => super::named_const(ctx, p, &["IPPROTO_"], "protocol")?,
        None => 0,
    };
    // SAFETY: socket(2) has no memory preconditions.
    let fd = unsafe { libc::socket(domain, ty | libc::SOCK_CLOEXEC, proto) };
    if fd < 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "socket(2) - domain"));
    }
    Ok(new_socket(ctx, recv, fd))
}

fn s_bind(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = addr_bytes(ctx, args.pos[0])?;
    let fd = fd_of(ctx, recv)?;
    // SAFETY: a is a packed sockaddr of its length.
    if unsafe { libc::bind(fd, a.as_ptr() as *const libc::sockaddr, a.len() as libc::socklen_t) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "bind(2)"));
    }
    Ok(Value::fixnum(0))
}

fn s_connect(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = addr_bytes(ctx, args.pos[0])?;
    let fd = fd_of(ctx, recv)?;
    match connect_fd(ctx, fd, &a) {
        Ok(()) => Ok(Value::fixnum(0)),
        Err(libc::EISCONN) => Ok(Value::fixnum(0)),
        Err(e) => {
            let ai = new_addrinfo(ctx, a, 0, 0);
            let shown = data_ref::<AddrinfoObj>(ai).map(|o| super::addrinfo::sockaddr_text(o)).unwrap_or_default();
            Err(sys_error(ctx, e, &format!("connect(2) for {shown}")))
        }
    }
}

/// `connect_nonblock(addr, exception: true)`: EINPROGRESS as `IO::EINPROGRESSWaitWritable`.
fn s_connect_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = addr_bytes(ctx, args.pos[0])?;
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    crate::core::io::sys::set_nonblock(fd);
    // SAFETY: a is a packed sockaddr of its length.
    if unsafe { libc::connect(fd, a.as_ptr() as *const libc::sockaddr, a.len() as libc::socklen_t) } == 0 {
        return Ok(Value::fixnum(0));
    }
    match last_errno() {
        libc::EISCONN if !raise => Ok(Value::fixnum(0)),
        libc::EINPROGRESS if !raise => Ok(Value::symbol(ctx.intern("wait_writable"))),
        libc::EINPROGRESS => Err(crate::core::io::sys::wait_error(ctx, "EINPROGRESSWaitWritable", "Operation now in progress - connect(2) would block")?),
        e => Err(sys_error(ctx, e, "connect(2)")),
    }
}

fn accepted(ctx: &mut Ctx, c: i32) -> Result<Value> {
    let k = class(ctx, "Socket");
    let s = new_socket(ctx, k, c);
    let addr = super::basic::sockname(ctx, c, true).unwrap_or_default();
    let mut st: i32 = 0;
    let mut len = 4 as libc::socklen_t;
    // SAFETY: st is a valid int out-value.
    unsafe { libc::getsockopt(c, libc::SOL_SOCKET, libc::SO_TYPE, &mut st as *mut i32 as *mut libc::c_void, &mut len) };
    let ai = new_addrinfo(ctx, addr, st, 0);
    Ok(array::from_vec(ctx, vec![s, ai]))
}

fn s_accept(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, true)? {
        Ok(c) => accepted(ctx, c),
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

fn s_accept_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, false)? {
        Ok(c) => accepted(ctx, c),
        Err(libc::EAGAIN) if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        Err(libc::EAGAIN) => Err(crate::core::io::sys::wait_error(ctx, "EAGAINWaitReadable", "accept(2) would block")?),
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

fn s_sysaccept(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, true)? {
        Ok(c) => {
            let addr = super::basic::sockname(ctx, c, true).unwrap_or_default();
            let ai = new_addrinfo(ctx, addr, libc::SOCK_STREAM, 0);
            Ok(array::from_vec(ctx, vec![Value::fixnum(c as i64), ai]))
        }
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

/// `recvfrom(maxlen, flags = 0)` / `recvfrom_nonblock`: `[data, addrinfo]`.
fn recvfrom_common(ctx: &mut Ctx, recv: Value, args: &Args, blocking: bool) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?.max(0) as usize;
    let flags = match args.pos.get(1) {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)?,
        _ => 0,
    };
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    match recv_bytes(ctx, fd, n, flags, blocking)? {
        Ok((data, from)) => {
            let d = string::new_binary(ctx, &data);
            let st = libc::SOCK_DGRAM;
            let ai = if from.len() >= 2 { new_addrinfo(ctx, from, st, 0) } else { Value::NIL };
            Ok(array::from_vec(ctx, vec![d, ai]))
        }
        Err(libc::EAGAIN) if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        Err(libc::EAGAIN) => Err(crate::core::io::sys::wait_error(ctx, "EAGAINWaitReadable", "recvfrom(2) would block")?),
        Err(e) => Err(sys_error(ctx, e, "recvfrom(2)")),
    }
}

fn s_recvfrom(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    recvfrom_common(ctx, recv, args, true)
}

fn s_recvfrom_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    recvfrom_common(ctx, recv, args, false)
}

/// `Socket.pair(domain, type, protocol = 0)`.
fn s_pair(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let domain = super::named_const(ctx, args.pos[0], &["AF_", "PF_"], "domain")?;
    let ty = super::named_const(ctx, args.pos[1], &["SOCK_"], "type")?;
    let proto = match args.pos.get(2) {
        Some(&p) => super::named_const(ctx, p, &["IPPROTO_"], "protocol")?,
        None => 0,
    };
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::socketpair(domain, ty | libc::SOCK_CLOEXEC, proto, fds.as_mut_ptr()) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "socketpair(2)"));
    }
    let a = new_socket(ctx, recv, fds[0]);
    let b = new_socket(ctx, recv, fds[1]);
    Ok(array::from_vec(ctx, vec![a, b]))
}


/// Helpers CRuby writes in Ruby (socket.rb), written in Ruby here too.
const HELPERS_RB: &str = r##"
class Socket
  def self.tcp(host, port, local_host = nil, local_port = nil, connect_timeout: nil, resolv_timeout: nil, &block)
    yield_closing(TCPSocket.new(host, port, local_host, local_port), &block)
  end

  def self.unix(path, &block)
    yield_closing(UNIXSocket.new(path), &block)
  end

  # With a block: the block's value, the socket closed afterwards; else the socket.
  def self.yield_closing(sock)
    return sock unless block_given?
    begin
      yield sock
    ensure
      sock.close unless sock.closed?
    end
  end
  private_class_method :yield_closing

  def self.unix_server_socket(path)
    sock = UNIXServer.new(path)
    return sock unless block_given?
    begin
      yield sock
    ensure
      sock.close unless sock.closed?
      File.unlink(path) rescue nil
    end
  end

  class << self
    alias socketpair pair
  end
end

class UDPSocket
  def recvfrom_nonblock(len, flag = 0, outbuf = nil, exception: true)
    data, addr = recvfrom_nonblock_raw(len, flag, exception)
    return data if data.is_a?(Symbol) || data.nil?
    outbuf ? outbuf.replace(data) : nil
    [outbuf || data, ["AF_INET", addr.ip_port, addr.ip_address, addr.ip_address]]
  end
end
"##;

pub fn init(ctx: &mut Ctx) {
    let s = class(ctx, "Socket");
    crate::methods!(ctx, s, [
        ("new", s_new, [0..], Unsafe, Singleton),
        ("open", s_new, [0..], Unsafe, Singleton),
        ("pair", s_pair, [2..=3], Unsafe, Singleton),
        ("bind", s_bind, [1], Unsafe),
        ("listen", super::inet::s_listen, [1], Unsafe),
        ("connect", s_connect, [1], Unsafe),
        ("connect_nonblock", s_connect_nonblock, [1], Unsafe, Kw),
        ("accept", s_accept, [0], Unsafe),
        ("accept_nonblock", s_accept_nonblock, [0], Unsafe, Kw),
        ("sysaccept", s_sysaccept, [0], Unsafe),
        ("recvfrom", s_recvfrom, [1..=2], Unsafe),
        ("recvfrom_nonblock", s_recvfrom_nonblock, [1..=3], Unsafe, Kw),
    ]);
    let udp = class(ctx, "UDPSocket");
    crate::methods!(ctx, udp, [("recvfrom_nonblock_raw", udp_recvfrom_raw, [3], Unsafe, Private)]);
    let src = string::new_utf8(ctx, HELPERS_RB);
    let main = ctx.vm().main_obj.get();
    let _ = ctx.call_str(main, "eval", &[src]);
}

/// The native half of `UDPSocket#recvfrom_nonblock`: `[data, addrinfo]` or a Symbol.
fn udp_recvfrom_raw(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let raise = args.pos[2].truthy();
    let fd = fd_of(ctx, recv)?;
    let n = integer::to_i64_arg(ctx, args.pos[0])?.max(0) as usize;
    let flags = integer::to_int_arg(ctx, args.pos[1])?;
    match recv_bytes(ctx, fd, n, flags, false)? {
        Ok((data, from)) => {
            let d = string::new_binary(ctx, &data);
            let ai = new_addrinfo(ctx, from, libc::SOCK_DGRAM, 0);
            Ok(array::from_vec(ctx, vec![d, ai]))
        }
        Err(libc::EAGAIN) if !raise => {
            let w = Value::symbol(ctx.intern("wait_readable"));
            Ok(array::from_vec(ctx, vec![w, Value::NIL]))
        }
        Err(libc::EAGAIN) => Err(crate::core::io::sys::wait_error(ctx, "EAGAINWaitReadable", "recvfrom(2) would block")?),
        Err(e) => Err(sys_error(ctx, e, "recvfrom(2)")),
    }
}
