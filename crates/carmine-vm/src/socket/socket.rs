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
        Some(&p) => integer::to_int_arg(ctx, p)?,
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
    let buf = crate::core::io::buffer_arg(ctx, args.pos.get(2))?;
    let fd = fd_of(ctx, recv)?;
    match recv_bytes(ctx, fd, n, flags, blocking)? {
        // The end of a stream reads as nil.
        Ok((data, _)) if data.is_empty() && n > 0 && super::basic::is_stream(fd) => Ok(Value::NIL),
        Ok((data, from)) => {
            let d = crate::core::io::into_buffer(ctx, buf, &data);
            let out = array::new(ctx);
            array::push(ctx, out, d);
            let st = super::basic::socktype(fd);
            let ai = if from.len() >= 2 { new_addrinfo(ctx, from, st, 0) } else { Value::NIL };
            array::push(ctx, out, ai);
            Ok(out)
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
  # A Socket connected to `host`/`port` (from `local_host`/`local_port` when given),
  # trying each address in turn; the last error is raised when none connects.
  def self.tcp(host, port, local_host = nil, local_port = nil, connect_timeout: nil, resolv_timeout: nil, &block)
    locals = local_host || local_port ? Addrinfo.getaddrinfo(local_host, local_port, nil, :STREAM, nil) : nil
    last_error = nil
    Addrinfo.getaddrinfo(host, port, nil, :STREAM).each do |ai|
      local = locals && locals.find { |l| l.afamily == ai.afamily }
      next if locals && local.nil?
      begin
        sock = local ? ai.connect_from(local, timeout: connect_timeout) : ai.connect(timeout: connect_timeout)
      rescue SystemCallError => e
        last_error = e
        next
      end
      return yield_closing(sock, &block)
    end
    raise last_error if last_error
    raise SocketError, "no appropriate local address"
  end

  def self.unix(path, &block)
    yield_closing(Addrinfo.unix(path).connect, &block)
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

  # A listening socket on `path` (a stale socket file of ours is removed first); with a
  # block, the block's value, the socket closed and its file removed afterwards.
  def self.unix_server_socket(path)
    st = File.lstat(path) rescue nil
    File.unlink(path) if st&.socket? && st.owned?
    sock = Addrinfo.unix(path).listen
    return sock unless block_given?
    begin
      yield sock
    ensure
      sock.close unless sock.closed?
      File.unlink(path) rescue nil
    end
  end

  def self.unix_server_loop(path, &block)
    unix_server_socket(path) { |server| accept_loop(server, &block) }
  end

  def ipv6only!
    setsockopt(:IPV6, :V6ONLY, 1)
  end

  # Sockets bound to every address `host` (all local ones when nil) resolves to for
  # `port`; with port 0 the first socket's port is used for the others.
  def self.__server_sockets(host, port, socktype)
    sockets = []
    last_error = nil
    chosen = nil
    begin
      Addrinfo.getaddrinfo(host, port, nil, socktype, nil, Socket::AI_PASSIVE).each do |ai|
        ai = Addrinfo.new(Socket.sockaddr_in(chosen, ai.ip_address), ai.pfamily, ai.socktype, ai.protocol) if chosen
        sock = Socket.new(ai.pfamily, ai.socktype, ai.protocol)
        begin
          sock.setsockopt(:SOCKET, :REUSEADDR, 1)
          sock.ipv6only! if ai.ipv6?
          sock.bind(ai)
          sock.listen(Socket::SOMAXCONN) if socktype == :STREAM
        rescue SystemCallError => e
          last_error = e
          sock.close
          next
        end
        chosen ||= sock.local_address.ip_port if Integer(port) == 0
        sockets << sock
      end
      raise last_error if sockets.empty? && last_error
    rescue Exception
      sockets.each(&:close)
      raise
    end
    return sockets unless block_given?
    begin
      yield sockets
    ensure
      sockets.each { |s| s.close unless s.closed? }
    end
  end
  private_class_method :__server_sockets

  def self.tcp_server_sockets(host = nil, port, &block)
    __server_sockets(host, port, :STREAM, &block)
  end

  def self.udp_server_sockets(host = nil, port, &block)
    __server_sockets(host, port, :DGRAM, &block)
  end

  # Accepts on any of `sockets` forever, yielding each connection and its address.
  def self.accept_loop(*sockets)
    sockets = sockets.flatten
    raise ArgumentError, "no sockets" if sockets.empty?
    loop do
      readable, = IO.select(sockets)
      readable.each do |r|
        sock, addr = r.accept_nonblock(exception: false)
        next if sock == :wait_readable
        yield sock, addr
      end
    end
  end

  def self.tcp_server_loop(host = nil, port, &block)
    tcp_server_sockets(host, port) { |sockets| accept_loop(sockets, &block) }
  end

  # Receives one datagram from each readable socket that has one, yielding the message
  # and a Socket::UDPSource to reply through.
  def self.udp_server_recv(sockets)
    sockets.each do |s|
      msg, sender, = s.recvmsg_nonblock(exception: false)
      next if msg == :wait_readable || msg.nil?
      local = s.local_address
      yield msg, Socket::UDPSource.new(sender, local) { |reply| s.send(reply, 0, sender) }
    end
  end

  def self.udp_server_loop_on(sockets, &block)
    loop do
      readable, = IO.select(sockets)
      udp_server_recv(readable, &block)
    end
  end

  def self.udp_server_loop(host = nil, port, &block)
    udp_server_sockets(host, port) { |sockets| udp_server_loop_on(sockets, &block) }
  end

  # Where a datagram came from and how to answer it (given to udp_server_loop blocks).
  class UDPSource
    attr_reader :remote_address, :local_address

    def initialize(remote_address, local_address, &reply_proc)
      @remote_address, @local_address, @reply_proc = remote_address, local_address, reply_proc
    end

    def reply(msg)
      @reply_proc.call(msg)
    end

    def inspect
      "#<#{self.class}: #{@remote_address.inspect_sockaddr} to #{@local_address.inspect_sockaddr}>"
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
        ("open", crate::socket::s_open, [0..], Unsafe, Singleton, Kw),
        ("pair", s_pair, [2..=3], Unsafe, Singleton),
        ("bind", s_bind, [1], Unsafe),
        ("listen", super::inet::s_listen, [1], Unsafe),
        ("connect", s_connect, [1], Unsafe),
        ("connect_nonblock", s_connect_nonblock, [1], Unsafe, Kw),
        ("accept", s_accept, [0], Unsafe),
        ("accept_nonblock", s_accept_nonblock, [0], Unsafe, Kw),
        ("sysaccept", s_sysaccept, [0], Unsafe),
        ("recvfrom", s_recvfrom, [1..=3], Unsafe),
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
