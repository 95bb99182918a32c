//! Messages with ancillary data: `BasicSocket#sendmsg`/`recvmsg` (and their `_nonblock`
//! forms) over sendmsg(2)/recvmsg(2), and `Socket::AncillaryData`, the control messages
//! they carry (file descriptors with SCM_RIGHTS, IP_PKTINFO, integers …).
//!
//! Invariants:
//! - `Socket::AncillaryData` is written in Ruby (a value holder whose constructors pack
//!   the system structures); the native half only moves bytes: `__sendmsg` takes controls
//!   already reduced to `[level, type, data]` triples, `__recvmsg` answers
//!   `[mesg, sender_addrinfo, rflags, *controls]`.
//! - Descriptors received with SCM_RIGHTS become IO objects only with `scm_rights: true`;
//!   otherwise they are closed at once, as CRuby does.
//! - Blocking calls wait through the scheduler funnel (interruptibly), then ask the kernel
//!   without blocking, so no system call holds the giant lock while it waits.

use super::addrinfo::new_addrinfo;
use super::{class, fd_of, last_errno, sys_error};
use crate::core::{array, integer, io, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn int_or(ctx: &mut Ctx, v: Value, default: i32) -> Result<i32> {
    if v.is_nil() {
        Ok(default)
    } else {
        integer::to_int_arg(ctx, v)
    }
}

fn size_arg(ctx: &mut Ctx, v: Value, what: &str) -> Result<Option<usize>> {
    if v.is_nil() {
        return Ok(None);
    }
    let n = integer::to_i64_arg(ctx, v)?;
    if n < 0 {
        return Err(ctx.arg_error(&format!("negative {what} given")));
    }
    Ok(Some(n as usize))
}

fn socktype_of(fd: i32) -> i32 {
    let mut st: i32 = 0;
    let mut len = 4 as libc::socklen_t;
    // SAFETY: st is a valid int out-value.
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_TYPE, &mut st as *mut i32 as *mut libc::c_void, &mut len) };
    st
}

/// A control-message buffer: u64 words so that every cmsghdr in it is aligned.
fn control_buffer(bytes: usize) -> Vec<u64> {
    vec![0u64; bytes.div_ceil(8)]
}

/// `__sendmsg(mesg, flags, dest, controls, nonblock, exception)`: the number of bytes sent.
fn bs_sendmsg_raw(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mesg = string::to_str_arg(ctx, args.pos[0])?;
    let data = string::bytes(mesg).to_vec();
    let flags = int_or(ctx, args.pos[1], 0)?;
    let dest = match args.pos[2] {
        d if d.is_nil() => None,
        d => Some(super::socket::addr_bytes(ctx, d)?),
    };
    let (nonblock, raise) = (args.pos[4].truthy(), args.pos[5].truthy());
    let mut controls: Vec<(i32, i32, Vec<u8>)> = Vec::new();
    for c in array::to_vec(args.pos[3]) {
        let level = integer::to_int_arg(ctx, array::get(c, 0))?;
        let ty = integer::to_int_arg(ctx, array::get(c, 1))?;
        let d = string::to_str_arg(ctx, array::get(c, 2))?;
        controls.push((level, ty, string::bytes(d).to_vec()));
    }
    let fd = fd_of(ctx, recv)?;
    // SAFETY: CMSG_SPACE is pure arithmetic.
    let space: usize = controls.iter().map(|(_, _, d)| unsafe { libc::CMSG_SPACE(d.len() as u32) } as usize).sum();
    let mut cbuf = control_buffer(space);
    let mut dest = dest.unwrap_or_default();
    let mut payload = data;
    let stream = super::basic::is_stream(fd);
    // A blocking send on a stream goes on until every byte is out (what a blocking
    // sendmsg(2) does), waiting interruptibly between partial sends; the control
    // messages travel with the first part.
    let mut sent = 0usize;
    loop {
        if !nonblock {
            crate::thread::sched::wait_writable(ctx, fd)?;
        }
        let first = sent == 0;
        let rest = &mut payload[sent..];
        let mut iov = libc::iovec { iov_base: rest.as_mut_ptr() as *mut libc::c_void, iov_len: rest.len() };
        // SAFETY: an all-zero msghdr is valid; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        if !dest.is_empty() {
            msg.msg_name = dest.as_mut_ptr() as *mut libc::c_void;
            msg.msg_namelen = dest.len() as libc::socklen_t;
        }
        if space > 0 && first {
            msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = space as _;
            // SAFETY: the control buffer holds CMSG_SPACE bytes for every message.
            unsafe {
                let mut h = libc::CMSG_FIRSTHDR(&msg);
                for (level, ty, d) in &controls {
                    (*h).cmsg_level = *level;
                    (*h).cmsg_type = *ty;
                    (*h).cmsg_len = libc::CMSG_LEN(d.len() as u32) as _;
                    std::ptr::copy_nonoverlapping(d.as_ptr(), libc::CMSG_DATA(h), d.len());
                    h = libc::CMSG_NXTHDR(&msg, h);
                }
            }
        }
        // SAFETY: msg and the buffers it points to live on this frame during the call.
        let n = unsafe { libc::sendmsg(fd, &msg, flags | libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT) };
        if n >= 0 {
            sent += n as usize;
            if nonblock || !stream || sent >= payload.len() {
                break;
            }
            continue;
        }
        match last_errno() {
            libc::EINTR => continue,
            libc::EAGAIN if nonblock && !raise => return Ok(Value::symbol(ctx.intern("wait_writable"))),
            libc::EAGAIN if nonblock => return Err(io::sys::wait_error(ctx, "EAGAINWaitWritable", "sendmsg(2) would block")?),
            libc::EAGAIN => continue,
            e => return Err(sys_error(ctx, e, "sendmsg(2)")),
        }
    }
    Ok(Value::fixnum(sent as i64))
}

/// An IO object for a descriptor received with SCM_RIGHTS: a Socket for a socket, else
/// an IO opened with the descriptor's access mode.
fn received_io(ctx: &mut Ctx, fd: i32) -> Value {
    // SAFETY: an all-zero stat is valid; fstat fills it.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let is_sock = unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFSOCK;
    if is_sock {
        let k = class(ctx, "Socket");
        return super::new_socket(ctx, k, fd);
    }
    // SAFETY: fcntl on a descriptor this process now owns.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    let acc = fl & libc::O_ACCMODE;
    let k = ctx.c().io;
    io::new_io(ctx, k, fd, acc != libc::O_WRONLY, acc != libc::O_RDONLY, None)
}

/// `__recvmsg(maxdatalen, flags, maxcontrollen, scm_rights, nonblock, exception)`.
fn bs_recvmsg_raw(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let dlen = size_arg(ctx, args.pos[0], "buffer size")?;
    let flags = int_or(ctx, args.pos[1], 0)?;
    let clen = size_arg(ctx, args.pos[2], "control buffer size")?;
    let (scm_rights, nonblock, raise) = (args.pos[3].truthy(), args.pos[4].truthy(), args.pos[5].truthy());
    let fd = fd_of(ctx, recv)?;
    let socktype = socktype_of(fd);
    let ccap = clen.unwrap_or(4096);
    let mut cbuf = control_buffer(ccap);
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut name: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let (buf, n, msg_flags, namelen, controllen) = loop {
        if !nonblock {
            crate::thread::sched::wait_readable(ctx, fd)?;
        }
        let cap = match dlen {
            Some(n) => n,
            // Without a length, a datagram is read whole (its size is peeked first).
            None if socktype != libc::SOCK_STREAM => {
                // SAFETY: a zero-length peek with MSG_TRUNC reports the datagram's size.
                let r = unsafe { libc::recv(fd, std::ptr::null_mut(), 0, libc::MSG_PEEK | libc::MSG_TRUNC | libc::MSG_DONTWAIT) };
                if r > 0 { r as usize } else { 4096 }
            }
            None => 4096,
        };
        let mut buf = vec![0u8; cap];
        let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: cap };
        // SAFETY: an all-zero msghdr is valid; the buffers it points to outlive the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_name = &mut name as *mut _ as *mut libc::c_void;
        msg.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = ccap as _;
        // SAFETY: as above.
        let r = unsafe { libc::recvmsg(fd, &mut msg, flags | libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
        if r >= 0 {
            break (buf, r as usize, msg.msg_flags, msg.msg_namelen as usize, msg.msg_controllen as usize);
        }
        match last_errno() {
            libc::EINTR => continue,
            libc::EAGAIN if !nonblock => continue,
            libc::EAGAIN if !raise => return Ok(Value::symbol(ctx.intern("wait_readable"))),
            libc::EAGAIN => return Err(io::sys::wait_error(ctx, "EAGAINWaitReadable", "recvmsg(2) would block")?),
            e => return Err(sys_error(ctx, e, "recvmsg(2)")),
        }
    };
    // The end of a stream (the peer shut down) reads as nil.
    if n == 0 && socktype == libc::SOCK_STREAM && !buf.is_empty() {
        return Ok(Value::NIL);
    }
    let out = array::new(ctx);
    let mesg = string::new_binary(ctx, &buf[..n.min(buf.len())]);
    array::push(ctx, out, mesg);
    // SAFETY: the kernel filled namelen bytes of name.
    let from = unsafe { std::slice::from_raw_parts(&name as *const _ as *const u8, namelen.min(std::mem::size_of::<libc::sockaddr_storage>())) }.to_vec();
    let ai = new_addrinfo(ctx, from, socktype, 0);
    array::push(ctx, out, ai);
    array::push(ctx, out, Value::fixnum(msg_flags as i64));
    let family = super::basic::socket_family(fd);
    let anc_class = {
        let sock = class(ctx, "Socket");
        let id = ctx.intern("AncillaryData");
        crate::core::module::body(sock).const_get(id).map_or(Value::NIL, |e| e.value)
    };
    // SAFETY: an all-zero msghdr is valid; only its control fields are read by CMSG_*.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = controllen as _;
    // SAFETY: the kernel wrote controllen bytes of well-formed control messages.
    let mut h = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    while !h.is_null() {
        // SAFETY: h points at a control message inside cbuf.
        let (level, ty, data) = unsafe {
            let len = (*h).cmsg_len as usize - libc::CMSG_LEN(0) as usize;
            ((*h).cmsg_level, (*h).cmsg_type, std::slice::from_raw_parts(libc::CMSG_DATA(h), len).to_vec())
        };
        let rights: Vec<i32> = if level == libc::SOL_SOCKET && ty == libc::SCM_RIGHTS {
            data.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
        } else {
            Vec::new()
        };
        let d = string::new_binary(ctx, &data);
        let anc = ctx.call_str(anc_class, "new", &[Value::fixnum(family as i64), Value::fixnum(level as i64), Value::fixnum(ty as i64), d])?;
        array::push(ctx, out, anc);
        if scm_rights && !rights.is_empty() {
            let ios = array::new(ctx);
            let id = ctx.intern("@unix_rights");
            object::ivar_set_raw(ctx, anc, id, ios);
            for fd in rights {
                let io = received_io(ctx, fd);
                array::push(ctx, ios, io);
            }
        } else {
            for fd in rights {
                // SAFETY: closing a descriptor received and not handed out.
                unsafe { libc::close(fd) };
            }
        }
        // SAFETY: h is inside the control buffer described by msg.
        h = unsafe { libc::CMSG_NXTHDR(&msg, h) };
    }
    Ok(out)
}

/// Socket::AncillaryData and the Ruby halves of sendmsg/recvmsg (argument handling).
const ANCDATA_RB: &str = r##"
class Socket::AncillaryData
  attr_reader :family, :level, :type, :data

  # Reads a constant given as an Integer or as a name, with or without `prefix`.
  def self.__constant(arg, prefixes, message)
    name = arg.is_a?(Symbol) ? arg.to_s : String.try_convert(arg)
    return Integer === arg ? arg : arg.to_int if name.nil?
    prefixes.each do |prefix|
      full = name.start_with?(prefix) ? name : prefix + name
      return Socket::Constants.const_get(full) if full.match?(/\A[A-Z][A-Z0-9_]*\z/) && Socket::Constants.const_defined?(full)
    end
    raise SocketError, "#{message}: #{name}"
  end

  def self.__family(family)
    __constant(family, ["AF_", "PF_"], "unknown socket domain")
  end

  def self.__ip_family?(family)
    family == Socket::AF_INET || family == Socket::AF_INET6
  end

  def self.__level(family, level)
    if __ip_family?(family)
      name = level.is_a?(Symbol) ? level.to_s : String.try_convert(level)
      return Socket::SOL_SOCKET if name == "SOCKET"
      __constant(level, ["SOL_", "IPPROTO_"], "unknown protocol level")
    else
      name = level.is_a?(Symbol) ? level.to_s : String.try_convert(level)
      return level.to_int if name.nil?
      return Socket::SOL_SOCKET if name == "SOCKET" || name == "SOL_SOCKET"
      raise SocketError, "unknown protocol level: #{name}"
    end
  end

  def self.__type(family, level, type)
    if level == Socket::SOL_SOCKET
      return __constant(type, ["SCM_"], "unknown UNIX control message")
    end
    if __ip_family?(family)
      case level
      when Socket::IPPROTO_IP then return __constant(type, ["IP_"], "unknown IP control message")
      when Socket::IPPROTO_IPV6 then return __constant(type, ["IPV6_"], "unknown IPv6 control message")
      when Socket::IPPROTO_TCP then return __constant(type, ["TCP_"], "unknown TCP control message")
      when Socket::IPPROTO_UDP then return __constant(type, ["UDP_"], "unknown UDP control message")
      end
    end
    raise TypeError, "no implicit conversion of #{type.class} into Integer" unless type.respond_to?(:to_int)
    type.to_int
  end

  # `[level, type, data]` for sendmsg from an AncillaryData or an array.
  def self.__control(family, control)
    ary = Array.try_convert(control)
    level, type, data = ary ? ary : [control.level, control.type, control.data]
    level = __level(family, level)
    [level, __type(family, level, type), String(data.to_str)]
  end

  def initialize(family, level, type, data)
    @family = Socket::AncillaryData.__family(family)
    @level = Socket::AncillaryData.__level(@family, level)
    @type = Socket::AncillaryData.__type(@family, @level, type)
    @data = data.to_str
  end

  def self.int(family, level, type, integer)
    new(family, level, type, [Integer(integer)].pack("I"))
  end

  def int
    unless @data.bytesize == 4
      raise TypeError, "size differ.  expected as sizeof(int)=4 but #{@data.bytesize}"
    end
    @data.unpack1("i")
  end

  def self.unix_rights(*ios)
    fds = ios.map do |io|
      raise TypeError, "IO expected" unless io.is_a?(IO)
      io.fileno
    end
    anc = new(:UNIX, :SOCKET, :RIGHTS, fds.pack("i*"))
    anc.instance_variable_set(:@unix_rights, ios)
    anc
  end

  def unix_rights
    unless @level == Socket::SOL_SOCKET && @type == Socket::SCM_RIGHTS
      raise TypeError, "SCM_RIGHTS ancillary data expected"
    end
    @unix_rights
  end

  def cmsg_is?(level, type)
    level = Socket::AncillaryData.__level(@family, level)
    type = Socket::AncillaryData.__type(@family, level, type)
    @level == level && @type == type
  end

  def self.__in_addr(addr)
    sa = addr.is_a?(Addrinfo) ? addr.to_sockaddr : addr.to_str
    raise ArgumentError, "IPv4 address expected" unless sa.bytesize >= 8 && sa.unpack1("S") == Socket::AF_INET
    sa.byteslice(4, 4)
  end

  def self.__in6_addr(addr)
    sa = addr.is_a?(Addrinfo) ? addr.to_sockaddr : addr.to_str
    raise ArgumentError, "IPv6 address expected" unless sa.bytesize >= 24 && sa.unpack1("S") == Socket::AF_INET6
    sa.byteslice(8, 16)
  end

  def self.ip_pktinfo(addr, ifindex, spec_dst = nil)
    spec_dst ||= addr
    new(:INET, :IP, :PKTINFO, [ifindex].pack("I") + __in_addr(spec_dst) + __in_addr(addr))
  end

  def ip_pktinfo
    unless @level == Socket::IPPROTO_IP && @type == Socket::IP_PKTINFO && @data.bytesize == 12
      raise TypeError, "IP_PKTINFO ancillary data expected"
    end
    ifindex = @data.unpack1("I")
    to_ai = ->(bytes) { Addrinfo.new([Socket::AF_INET, 0].pack("Sn") + bytes + "\0" * 8, :INET) }
    [to_ai.(@data.byteslice(8, 4)), ifindex, to_ai.(@data.byteslice(4, 4))]
  end

  def self.ipv6_pktinfo(addr, ifindex)
    new(:INET6, :IPV6, :PKTINFO, __in6_addr(addr) + [ifindex].pack("I"))
  end

  def ipv6_pktinfo
    unless @level == Socket::IPPROTO_IPV6 && @type == Socket::IPV6_PKTINFO && @data.bytesize == 20
      raise TypeError, "IPV6_PKTINFO ancillary data expected"
    end
    sa = [Socket::AF_INET6, 0, 0].pack("SnN") + @data.byteslice(0, 16) + "\0" * 4
    [Addrinfo.new(sa, :INET6), @data.byteslice(16, 4).unpack1("I")]
  end

  def ipv6_pktinfo_addr = ipv6_pktinfo[0]
  def ipv6_pktinfo_ifindex = ipv6_pktinfo[1]

  def inspect
    name = ->(prefix, value) do
      c = Socket::Constants.constants.find { |n| n.start_with?(prefix) && n != :AF_LOCAL && Socket::Constants.const_get(n) == value }
      c ? c.to_s.delete_prefix(prefix) : value.to_s
    end
    level = @level == Socket::SOL_SOCKET ? "SOCKET" : name.("IPPROTO_", @level)
    type_prefix = { Socket::SOL_SOCKET => "SCM_", Socket::IPPROTO_IP => "IP_", Socket::IPPROTO_IPV6 => "IPV6_", Socket::IPPROTO_TCP => "TCP_", Socket::IPPROTO_UDP => "UDP_" }[@level]
    type = type_prefix ? name.(type_prefix, @type) : @type.to_s
    body = @level == Socket::SOL_SOCKET && @type == Socket::SCM_RIGHTS ? @data.unpack("i*").join(" ") : @data.inspect
    "#<Socket::AncillaryData: #{name.("AF_", @family)} #{level} #{type} #{body}>"
  end
end

class BasicSocket
  def sendmsg(mesg, flags = 0, dest_sockaddr = nil, *controls)
    __sendmsg(mesg, flags, dest_sockaddr, __controls(controls), false, true)
  end

  def sendmsg_nonblock(mesg, flags = 0, dest_sockaddr = nil, *controls, exception: true)
    __sendmsg(mesg, flags, dest_sockaddr, __controls(controls), true, exception)
  end

  def recvmsg(dlen = nil, flags = 0, clen = nil, scm_rights: false)
    __recvmsg(dlen, flags, clen, scm_rights, false, true)
  end

  def recvmsg_nonblock(dlen = nil, flags = 0, clen = nil, scm_rights: false, exception: true)
    __recvmsg(dlen, flags, clen, scm_rights, true, exception)
  end

  private def __controls(controls)
    return controls if controls.empty?
    family = local_address.afamily
    controls.map { |c| Socket::AncillaryData.__control(family, c) }
  end
end

class UNIXSocket
  # `[data, ["AF_UNIX", path]]`, the path of the sender ("" when it has none).
  def recvfrom(maxlen, flags = 0, outbuf = nil)
    data, from = recvmsg(maxlen, flags)
    path = from && from.afamily == Socket::AF_UNIX ? from.unix_path : ""
    data = outbuf.replace(data.force_encoding(outbuf.encoding)) if outbuf && data
    [data, ["AF_UNIX", path]]
  end

  # Passes the descriptor of `io` (an IO or an Integer) to the peer.
  def send_io(io)
    fd = io.is_a?(Integer) ? io : io.to_io.fileno
    sendmsg("\0", 0, nil, [Socket::SOL_SOCKET, Socket::SCM_RIGHTS, [fd].pack("i")])
    nil
  end

  # A descriptor passed by the peer, as an instance of `klass` (the Integer for nil).
  def recv_io(klass = IO, mode = nil)
    _, _, _, *ctls = recvmsg(1, 0, nil, scm_rights: true)
    ctl = ctls.find { |c| c.level == Socket::SOL_SOCKET && c.type == Socket::SCM_RIGHTS }
    raise SocketError, "file descriptor was not passed" unless ctl && ctl.unix_rights
    io = ctl.unix_rights.first
    return io if klass == IO && mode.nil? && io.instance_of?(IO)
    io.autoclose = false
    fd = io.fileno
    return fd if klass.nil?
    mode ? klass.for_fd(fd, mode) : klass.for_fd(fd)
  end
end
"##;

pub fn init(ctx: &mut Ctx) {
    let sock = class(ctx, "Socket");
    let obj = ctx.c().object;
    crate::core::module_methods::define_class_under(ctx, sock, "AncillaryData", obj);
    let b = class(ctx, "BasicSocket");
    crate::methods!(ctx, b, [
        ("__sendmsg", bs_sendmsg_raw, [6], Unsafe, Private),
        ("__recvmsg", bs_recvmsg_raw, [6], Unsafe, Private),
    ]);
    let src = string::new_utf8(ctx, ANCDATA_RB);
    let main = ctx.vm().main_obj.get();
    let _ = ctx.call_str(main, "eval", &[src]);
}
