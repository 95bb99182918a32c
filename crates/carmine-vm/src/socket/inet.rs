//! Internet sockets: name resolution (getaddrinfo), IPSocket (`addr`, `peeraddr`,
//! `recvfrom`, `IPSocket.getaddress`), TCPSocket, TCPServer and UDPSocket, plus
//! `Socket.gethostname`.
//!
//! Invariants: host names are resolved with getaddrinfo(3) outside the giant lock, and
//! each returned address is tried in order until one connects (or binds); the last error
//! is the one raised.

use std::ffi::CString;

use super::basic::{recv_bytes, send_bytes, sockname};
use super::{class, fd_of, last_errno, new_socket, socket_error, sys_error};
use crate::core::{array, integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A resolved address: family and the packed sockaddr.
pub struct Resolved {
    pub family: i32,
    pub addr: Vec<u8>,
    /// The canonical name getaddrinfo reported (with AI_CANONNAME, on the first entry).
    pub canonname: Option<String>,
    pub socktype: i32,
    pub protocol: i32,
}

fn host_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<String>> {
    match v {
        Some(&h) if !h.is_nil() => {
            let s = string::to_str_arg(ctx, h)?;
            let h = string::to_rust_string_lossy(s);
            Ok(Some(match h.as_str() {
                "" => "0.0.0.0".to_string(),
                "<any>" => "0.0.0.0".to_string(),
                "<broadcast>" => "255.255.255.255".to_string(),
                _ => h,
            }))
        }
        _ => Ok(None),
    }
}

fn port_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<String>> {
    match v {
        Some(&p) if !p.is_nil() => {
            if let Some(n) = p.as_fixnum() {
                return Ok(Some(n.to_string()));
            }
            if string::is_string(p) {
                return Ok(Some(string::to_rust_string_lossy(p)));
            }
            Ok(Some(integer::to_i64_arg(ctx, p)?.to_string()))
        }
        _ => Ok(None),
    }
}

/// getaddrinfo(3) for `host`/`port` with the given hints.
pub fn resolve(ctx: &mut Ctx, host: Option<&str>, port: Option<&str>, family: i32, socktype: i32, flags: i32) -> Result<Vec<Resolved>> {
    resolve_hinted(ctx, host, port, family, socktype, 0, flags)
}

/// CRuby's shortcut before getaddrinfo(3): a numeric host with a numeric (or no) port is
/// answered directly, one entry per matching (socktype, protocol) of TCP, UDP and raw
/// sockets; None when the shortcut does not apply (getaddrinfo decides then).
fn numeric_resolve(host: &str, port: Option<&str>, family: i32, socktype: i32, protocol: i32) -> Option<Vec<Resolved>> {
    let port: u16 = match port {
        None => 0,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        Some(_) => return None,
    };
    const KINDS: [(i32, i32); 3] = [(libc::SOCK_STREAM, libc::IPPROTO_TCP), (libc::SOCK_DGRAM, libc::IPPROTO_UDP), (libc::SOCK_RAW, 0)];
    let addr = if (family == libc::AF_UNSPEC || family == libc::AF_INET6) && host.bytes().all(|b| b.is_ascii_hexdigit() || b == b'.' || b == b':') && host.parse::<std::net::Ipv6Addr>().is_ok() {
        let ip: std::net::Ipv6Addr = host.parse().ok()?;
        // SAFETY: an all-zero sockaddr_in6 is valid.
        let mut sa: libc::sockaddr_in6 = unsafe { std::mem::zeroed() };
        sa.sin6_family = libc::AF_INET6 as libc::sa_family_t;
        sa.sin6_port = port.to_be();
        sa.sin6_addr.s6_addr = ip.octets();
        // SAFETY: sa is plain data of its size.
        (libc::AF_INET6, unsafe { std::slice::from_raw_parts(&sa as *const _ as *const u8, std::mem::size_of_val(&sa)) }.to_vec())
    } else if (family == libc::AF_UNSPEC || family == libc::AF_INET) && host.bytes().all(|b| b.is_ascii_digit() || b == b'.') && host.parse::<std::net::Ipv4Addr>().is_ok() {
        let ip: std::net::Ipv4Addr = host.parse().ok()?;
        // SAFETY: an all-zero sockaddr_in is valid.
        let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
        sa.sin_family = libc::AF_INET as libc::sa_family_t;
        sa.sin_port = port.to_be();
        sa.sin_addr.s_addr = u32::from_ne_bytes(ip.octets());
        // SAFETY: sa is plain data of its size.
        (libc::AF_INET, unsafe { std::slice::from_raw_parts(&sa as *const _ as *const u8, std::mem::size_of_val(&sa)) }.to_vec())
    } else {
        return None;
    };
    let out: Vec<Resolved> = KINDS
        .iter()
        .filter(|&&(st, pr)| (socktype == 0 || socktype == st) && (protocol == 0 || pr == 0 || protocol == pr))
        .map(|&(st, pr)| Resolved { family: addr.0, addr: addr.1.clone(), canonname: None, socktype: st, protocol: if protocol != 0 { protocol } else { pr } })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// getaddrinfo(3) with every hint, the protocol included.
pub fn resolve_hinted(ctx: &mut Ctx, host: Option<&str>, port: Option<&str>, family: i32, socktype: i32, protocol: i32, flags: i32) -> Result<Vec<Resolved>> {
    if let Some(list) = host.and_then(|h| numeric_resolve(h, port, family, socktype, protocol)) {
        return Ok(list);
    }
    // A non-blocking fiber resolves names through its scheduler's `address_resolve` (the
    // addresses it answers are then looked up numerically), as CRuby does.
    if let Some(h) = host.filter(|h| flags & libc::AI_NUMERICHOST == 0 && h.parse::<std::net::IpAddr>().is_err()) {
        if let Some(ips) = crate::fiber::scheduler::address_resolve(ctx, h)? {
            let mut out = Vec::new();
            for ip in &ips {
                out.extend(resolve_hinted(ctx, Some(ip), port, family, socktype, protocol, flags | libc::AI_NUMERICHOST)?);
            }
            if out.is_empty() {
                return Err(super::resolution_error(ctx, "getaddrinfo", libc::EAI_NONAME));
            }
            return Ok(out);
        }
    }
    let chost = host.map(|h| CString::new(h).map_err(|_| ctx.arg_error("string contains null byte"))).transpose()?;
    let cport = port.map(|p| CString::new(p).map_err(|_| ctx.arg_error("string contains null byte"))).transpose()?;
    let (rc, list) = crate::thread::sched::without_gl(ctx, || {
        // SAFETY: an all-zero addrinfo is a valid hints value.
        let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
        hints.ai_family = family;
        hints.ai_socktype = socktype;
        hints.ai_protocol = protocol;
        hints.ai_flags = flags;
        let mut res: *mut libc::addrinfo = std::ptr::null_mut();
        // SAFETY: the strings are NUL-terminated; res receives a list freed below.
        let rc = unsafe { libc::getaddrinfo(chost.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()), cport.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()), &hints, &mut res) };
        let mut out = Vec::new();
        let mut p = res;
        while !p.is_null() {
            // SAFETY: p walks the list getaddrinfo returned.
            unsafe {
                let a = &*p;
                let bytes = std::slice::from_raw_parts(a.ai_addr as *const u8, a.ai_addrlen as usize).to_vec();
                let canonname = (!a.ai_canonname.is_null()).then(|| std::ffi::CStr::from_ptr(a.ai_canonname).to_string_lossy().into_owned());
                out.push(Resolved { family: a.ai_family, addr: bytes, canonname, socktype: a.ai_socktype, protocol: a.ai_protocol });
                p = a.ai_next;
            }
        }
        if !res.is_null() {
            // SAFETY: res came from getaddrinfo.
            unsafe { libc::freeaddrinfo(res) };
        }
        (rc, out)
    });
    if rc != 0 {
        return Err(super::resolution_error(ctx, "getaddrinfo", rc));
    }
    Ok(list)
}

/// getaddrinfo's message for an error code.
pub fn gai_message(rc: i32) -> String {
    // SAFETY: gai_strerror returns a static string.
    unsafe { std::ffi::CStr::from_ptr(libc::gai_strerror(rc)) }.to_string_lossy().into_owned()
}

/// The numeric host and port of a packed sockaddr.
pub fn numeric(addr: &[u8]) -> (String, u16, i32) {
    if addr.len() < 2 {
        return (String::new(), 0, 0);
    }
    let family = u16::from_ne_bytes([addr[0], addr[1]]) as i32;
    match family {
        libc::AF_INET if addr.len() >= 8 => {
            let port = u16::from_be_bytes([addr[2], addr[3]]);
            (std::net::Ipv4Addr::new(addr[4], addr[5], addr[6], addr[7]).to_string(), port, family)
        }
        libc::AF_INET6 if addr.len() >= 24 => {
            let port = u16::from_be_bytes([addr[2], addr[3]]);
            let mut o = [0u8; 16];
            o.copy_from_slice(&addr[8..24]);
            (std::net::Ipv6Addr::from(o).to_string(), port, family)
        }
        _ => (String::new(), 0, family),
    }
}

fn family_name(f: i32) -> &'static str {
    match f {
        libc::AF_INET => "AF_INET",
        libc::AF_INET6 => "AF_INET6",
        libc::AF_UNIX => "AF_UNIX",
        _ => "AF_UNSPEC",
    }
}

/// `["AF_INET", port, host, ip]` for a packed address.
pub fn addr_array(ctx: &mut Ctx, addr: &[u8]) -> Value {
    let (ip, port, fam) = numeric(addr);
    let items = vec![string::new_utf8(ctx, family_name(fam)), Value::fixnum(port as i64), string::new_utf8(ctx, &ip), string::new_utf8(ctx, &ip)];
    array::from_vec(ctx, items)
}

fn new_fd(ctx: &mut Ctx, family: i32, socktype: i32) -> Result<i32> {
    // SAFETY: socket(2) has no memory preconditions.
    let fd = unsafe { libc::socket(family, socktype | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "socket(2)"));
    }
    Ok(fd)
}

/// connect(2) without the giant lock; Err(errno) on failure.
pub fn connect_fd(ctx: &mut Ctx, fd: i32, addr: &[u8]) -> std::result::Result<(), i32> {
    let a = addr.to_vec();
    crate::thread::sched::without_gl(ctx, || loop {
        // SAFETY: a holds a packed sockaddr of its length.
        let rc = unsafe { libc::connect(fd, a.as_ptr() as *const libc::sockaddr, a.len() as libc::socklen_t) };
        if rc == 0 {
            return Ok(());
        }
        match last_errno() {
            libc::EINTR => continue,
            e => return Err(e),
        }
    })
}

fn bind_fd(fd: i32, addr: &[u8]) -> std::result::Result<(), i32> {
    // SAFETY: addr holds a packed sockaddr of its length.
    if unsafe { libc::bind(fd, addr.as_ptr() as *const libc::sockaddr, addr.len() as libc::socklen_t) } != 0 {
        return Err(last_errno());
    }
    Ok(())
}

fn close_fd(fd: i32) {
    // SAFETY: closing a descriptor this code opened.
    unsafe { libc::close(fd) };
}

/// `TCPSocket.new(host, port, local_host = nil, local_port = nil, connect_timeout: nil)`.
fn tcp_s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() < 2 || args.pos.len() > 4 {
        return Err(ctx.arity_error(args.pos.len(), 2, Some(4)));
    }
    let host = host_arg(ctx, args.pos.first())?.unwrap_or_else(|| "localhost".into());
    let port = port_arg(ctx, args.pos.get(1))?;
    let local_host = host_arg(ctx, args.pos.get(2))?;
    let local_port = port_arg(ctx, args.pos.get(3))?;
    let addrs = resolve(ctx, Some(&host), port.as_deref(), libc::AF_UNSPEC, libc::SOCK_STREAM, 0)?;
    let mut last = libc::ECONNREFUSED;
    for a in &addrs {
        let fd = new_fd(ctx, a.family, libc::SOCK_STREAM)?;
        if local_host.is_some() || local_port.is_some() {
            let locals = resolve(ctx, local_host.as_deref(), local_port.as_deref(), a.family, libc::SOCK_STREAM, libc::AI_PASSIVE)?;
            if let Some(l) = locals.first() {
                if let Err(e) = bind_fd(fd, &l.addr) {
                    close_fd(fd);
                    return Err(sys_error(ctx, e, &format!("bind(2) for {:?} port {}", local_host.clone().unwrap_or_default(), local_port.clone().unwrap_or_default())));
                }
            }
        }
        match connect_fd(ctx, fd, &a.addr) {
            Ok(()) => return Ok(new_socket(ctx, recv, fd)),
            Err(e) => {
                close_fd(fd);
                last = e;
            }
        }
    }
    Err(sys_error(ctx, last, &format!("connect(2) for {host:?} port {}", port.unwrap_or_default())))
}

/// `TCPServer.new(host = nil, port)`: bound and listening (SO_REUSEADDR set, as CRuby).
fn tcps_s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (host, port) = match args.pos.len() {
        1 => (None, port_arg(ctx, args.pos.first())?),
        2 => (host_arg(ctx, args.pos.first())?, port_arg(ctx, args.pos.get(1))?),
        n => return Err(ctx.arity_error(n, 1, Some(2))),
    };
    let addrs = resolve(ctx, host.as_deref(), port.as_deref(), libc::AF_UNSPEC, libc::SOCK_STREAM, libc::AI_PASSIVE)?;
    let mut last = libc::EADDRNOTAVAIL;
    for a in addrs.iter().filter(|a| host.is_some() || a.family == libc::AF_INET).chain(addrs.iter().filter(|a| host.is_none() && a.family != libc::AF_INET)) {
        let fd = new_fd(ctx, a.family, libc::SOCK_STREAM)?;
        let one: i32 = 1;
        // SAFETY: one is a valid int option value.
        unsafe { libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const i32 as *const libc::c_void, 4) };
        if let Err(e) = bind_fd(fd, &a.addr) {
            close_fd(fd);
            last = e;
            continue;
        }
        // SAFETY: listen on a bound socket.
        if unsafe { libc::listen(fd, libc::SOMAXCONN) } != 0 {
            last = last_errno();
            close_fd(fd);
            continue;
        }
        return Ok(new_socket(ctx, recv, fd));
    }
    Err(sys_error(ctx, last, &format!("bind(2) for {:?} port {}", host.unwrap_or_default(), port.unwrap_or_default())))
}

/// accept(2) on a listening socket; the new descriptor (waiting when `blocking`).
pub fn accept_fd(ctx: &mut Ctx, fd: i32, blocking: bool) -> Result<std::result::Result<i32, i32>> {
    loop {
        if blocking {
            crate::thread::sched::wait_readable(ctx, fd)?;
        }
        let flags = libc::SOCK_CLOEXEC | if blocking { 0 } else { libc::SOCK_NONBLOCK };
        let c = if blocking {
            crate::thread::sched::without_gl(ctx, || {
                // SAFETY: accept4 without an address buffer.
                unsafe { libc::accept4(fd, std::ptr::null_mut(), std::ptr::null_mut(), flags) }
            })
        } else {
            // Non-blocking: the listening descriptor is asked once.
            crate::core::io::sys::set_nonblock(fd);
            // SAFETY: as above.
            unsafe { libc::accept4(fd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) }
        };
        if c >= 0 {
            if !blocking {
                // The accepted socket is blocking, as CRuby's accept_nonblock leaves it.
                // SAFETY: fcntl on the new descriptor.
                unsafe {
                    let fl = libc::fcntl(c, libc::F_GETFL);
                    libc::fcntl(c, libc::F_SETFL, fl & !libc::O_NONBLOCK);
                }
            }
            return Ok(Ok(c));
        }
        match last_errno() {
            libc::EINTR => continue,
            libc::EAGAIN if blocking => continue,
            e => return Ok(Err(e)),
        }
    }
}

/// `accept`: the connection as a socket of class `klass`.
pub fn accept_as(ctx: &mut Ctx, recv: Value, klass: &str) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, true)? {
        Ok(c) => {
            let k = class(ctx, klass);
            Ok(new_socket(ctx, k, c))
        }
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

fn tcps_accept(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    accept_as(ctx, recv, "TCPSocket")
}

/// `accept_nonblock(exception: true)`.
pub fn accept_nonblock_common(ctx: &mut Ctx, recv: Value, args: &Args, klass: &str) -> Result<Value> {
    let raise = args.kwarg(ctx, "exception").is_none_or(|v| v.truthy());
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, false)? {
        Ok(c) => {
            let k = class(ctx, klass);
            Ok(new_socket(ctx, k, c))
        }
        Err(libc::EAGAIN) if !raise => Ok(Value::symbol(ctx.intern("wait_readable"))),
        Err(libc::EAGAIN) => Err(crate::core::io::sys::wait_error(ctx, "EAGAINWaitReadable", "accept(2) would block")?),
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

fn tcps_accept_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    accept_nonblock_common(ctx, recv, args, "TCPSocket")
}

fn tcps_sysaccept(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, true)? {
        Ok(c) => Ok(Value::fixnum(c as i64)),
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

/// `listen(backlog)`.
pub fn s_listen(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_int_arg(ctx, args.pos[0])?;
    let fd = fd_of(ctx, recv)?;
    // SAFETY: listen on an open socket.
    if unsafe { libc::listen(fd, n) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "listen(2)"));
    }
    Ok(Value::fixnum(0))
}

fn ip_addr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let a = sockname(ctx, fd, false)?;
    Ok(addr_array(ctx, &a))
}

fn ip_peeraddr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let a = sockname(ctx, fd, true)?;
    Ok(addr_array(ctx, &a))
}

/// `recvfrom(maxlen, flags = 0)`: `[data, ["AF_INET", port, host, ip]]`.
fn ip_recvfrom(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?.max(0) as usize;
    let flags = match args.pos.get(1) {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)?,
        _ => 0,
    };
    let fd = fd_of(ctx, recv)?;
    match recv_bytes(ctx, fd, n, flags, true)? {
        Ok((data, from)) => {
            let d = string::new_binary(ctx, &data);
            let a = if from.len() >= 2 { addr_array(ctx, &from) } else { Value::NIL };
            Ok(array::from_vec(ctx, vec![d, a]))
        }
        Err(e) => Err(sys_error(ctx, e, "recvfrom(2)")),
    }
}

/// `IPSocket.getaddress(host)`: the first address as a String.
fn ip_s_getaddress(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let host = host_arg(ctx, args.pos.first())?.unwrap_or_default();
    let list = resolve(ctx, Some(&host), None, libc::AF_UNSPEC, libc::SOCK_STREAM, 0)?;
    let (ip, _, _) = list.first().map(|r| numeric(&r.addr)).unwrap_or_default();
    Ok(string::new_utf8(ctx, &ip))
}

/// `UDPSocket.new(family = AF_INET)`.
fn udp_s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let family = match args.pos.first() {
        Some(&f) if f.as_symbol().is_some() || string::is_string(f) => {
            let name = if let Some(id) = f.as_symbol() { ctx.sym_str(id) } else { string::to_rust_string_lossy(f) };
            match name.trim_start_matches("AF_").trim_start_matches("PF_") {
                "INET" => libc::AF_INET,
                "INET6" => libc::AF_INET6,
                other => return Err(socket_error(ctx, &format!("unknown socket domain: {other}"), false)),
            }
        }
        Some(&f) => integer::to_int_arg(ctx, f)?,
        None => libc::AF_INET,
    };
    let fd = new_fd(ctx, family, libc::SOCK_DGRAM)?;
    Ok(new_socket(ctx, recv, fd))
}

fn udp_target(ctx: &mut Ctx, fd: i32, host: Option<&Value>, port: Option<&Value>) -> Result<Vec<u8>> {
    let host = host_arg(ctx, host)?;
    let port = port_arg(ctx, port)?;
    let family = super::basic::socket_family(fd);
    let list = resolve(ctx, host.as_deref(), port.as_deref(), family, libc::SOCK_DGRAM, 0)?;
    match list.into_iter().next() {
        Some(r) => Ok(r.addr),
        None => Err(socket_error(ctx, "getaddrinfo: Name or service not known", true)),
    }
}

fn udp_bind(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let a = udp_target(ctx, fd, args.pos.first(), args.pos.get(1))?;
    if let Err(e) = bind_fd(fd, &a) {
        return Err(sys_error(ctx, e, "bind(2)"));
    }
    Ok(Value::fixnum(0))
}

fn udp_connect(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let a = udp_target(ctx, fd, args.pos.first(), args.pos.get(1))?;
    if let Err(e) = connect_fd(ctx, fd, &a) {
        return Err(sys_error(ctx, e, "connect(2)"));
    }
    Ok(Value::fixnum(0))
}

/// `UDPSocket#send(mesg, flags, host = nil, port = nil)` (or a packed sockaddr).
fn udp_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let data = string::bytes(s).to_vec();
    let flags = match args.pos.get(1) {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)?,
        _ => 0,
    };
    let fd = fd_of(ctx, recv)?;
    let dest = match args.pos.len() {
        4 => Some(udp_target(ctx, fd, args.pos.get(2), args.pos.get(3))?),
        3 => {
            let d = string::to_str_arg(ctx, args.pos[2])?;
            Some(string::bytes(d).to_vec())
        }
        _ => None,
    };
    let n = send_bytes(ctx, fd, &data, flags, dest.as_deref())?;
    Ok(Value::fixnum(n as i64))
}

fn s_gethostname(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let mut buf = [0u8; 256];
    // SAFETY: buf holds 256 bytes.
    if unsafe { libc::gethostname(buf.as_mut_ptr() as *mut libc::c_char, buf.len()) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "gethostname(3)"));
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(string::new_from_bytes(ctx, &buf[..end]))
}

pub fn init(ctx: &mut Ctx) {
    let ip = class(ctx, "IPSocket");
    crate::methods!(ctx, ip, [
        ("addr", ip_addr, [0..=1], Unsafe),
        ("peeraddr", ip_peeraddr, [0..=1], Unsafe),
        ("recvfrom", ip_recvfrom, [1..=2], Unsafe),
        ("getaddress", ip_s_getaddress, [1], Unsafe, Singleton),
    ]);
    let tcp = class(ctx, "TCPSocket");
    crate::methods!(ctx, tcp, [("new", tcp_s_new, [0..], Unsafe, Singleton, Kw), ("open", crate::socket::s_open, [0..], Unsafe, Singleton, Kw)]);
    let srv = class(ctx, "TCPServer");
    crate::methods!(ctx, srv, [
        ("new", tcps_s_new, [0..], Unsafe, Singleton),
        ("open", crate::socket::s_open, [0..], Unsafe, Singleton, Kw),
        ("accept", tcps_accept, [0], Unsafe),
        ("accept_nonblock", tcps_accept_nonblock, [0], Unsafe, Kw),
        ("sysaccept", tcps_sysaccept, [0], Unsafe),
        ("listen", s_listen, [1], Unsafe),
    ]);
    let udp = class(ctx, "UDPSocket");
    crate::methods!(ctx, udp, [
        ("new", udp_s_new, [0..=1], Unsafe, Singleton),
        ("open", crate::socket::s_open, [0..], Unsafe, Singleton, Kw),
        ("bind", udp_bind, [2], Unsafe),
        ("connect", udp_connect, [2], Unsafe),
        ("send", udp_send, [2..=4], Unsafe),
    ]);
    let sock = class(ctx, "Socket");
    crate::methods!(ctx, sock, [("gethostname", s_gethostname, [0], Unsafe, Singleton)]);
}
