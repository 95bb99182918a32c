//! Addrinfo: a socket address with its protocol family, socket type and protocol, and the
//! `Socket` class functions that pack and unpack addresses (`sockaddr_in`,
//! `unpack_sockaddr_in`, `sockaddr_un`, `getaddrinfo`), plus `BasicSocket#local_address`,
//! `remote_address` and `connect_address`.
//!
//! Invariants: an Addrinfo holds the packed sockaddr bytes exactly as the system uses
//! them; every accessor derives from those bytes, so `to_sockaddr` round-trips.

use super::inet::{numeric, resolve, resolve_hinted};
use super::unix::{sockaddr_un, unpack_path};
use super::{class, fd_of, last_errno, new_socket, socket_error, sys_error};
use crate::core::{array, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct AddrinfoObj {
    pub addr: Vec<u8>,
    pub pfamily: i32,
    pub socktype: i32,
    pub protocol: i32,
    pub canonname: Option<String>,
}

crate::data_obj!(AddrinfoObj);

fn family_of(addr: &[u8]) -> i32 {
    if addr.len() < 2 {
        return libc::AF_UNSPEC;
    }
    u16::from_ne_bytes([addr[0], addr[1]]) as i32
}

pub fn new_addrinfo(ctx: &mut Ctx, addr: Vec<u8>, socktype: i32, protocol: i32) -> Value {
    let k = class(ctx, "Addrinfo");
    let pfamily = family_of(&addr);
    object::new_data(ctx, k, Box::new(AddrinfoObj { addr, pfamily, socktype, protocol, canonname: None }))
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut AddrinfoObj> {
    match data_ref::<AddrinfoObj>(v) {
        Some(a) => Ok(a),
        None => Err(ctx.type_error("uninitialized Addrinfo")),
    }
}

/// A packed sockaddr_in/in6 for a numeric or resolved host and a port.
fn pack_inet(ctx: &mut Ctx, host: Option<&str>, port: Option<&str>, socktype: i32, flags: i32) -> Result<Vec<u8>> {
    let list = resolve(ctx, host, port, libc::AF_UNSPEC, socktype, flags)?;
    match list.into_iter().next() {
        Some(r) => Ok(r.addr),
        None => Err(socket_error(ctx, "getaddrinfo: Name or service not known", true)),
    }
}

fn opt_str(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<String>> {
    match v {
        Some(&s) if !s.is_nil() => {
            if let Some(n) = s.as_fixnum() {
                return Ok(Some(n.to_string()));
            }
            let s = string::to_str_arg(ctx, s)?;
            Ok(Some(string::to_rust_string_lossy(s)))
        }
        _ => Ok(None),
    }
}

fn inet_addrinfo(ctx: &mut Ctx, args: &Args, socktype: i32, protocol: i32) -> Result<Value> {
    let host = opt_str(ctx, args.pos.first())?;
    let port = opt_str(ctx, args.pos.get(1))?;
    let host = host.map(|h| if h.is_empty() { "0.0.0.0".to_string() } else { h });
    let list = resolve(ctx, host.as_deref(), port.as_deref().or(Some("0")), libc::AF_UNSPEC, if socktype == 0 { libc::SOCK_STREAM } else { socktype }, 0)?;
    let Some(r) = list.into_iter().next() else { return Err(socket_error(ctx, "getaddrinfo: Name or service not known", true)) };
    Ok(new_addrinfo(ctx, r.addr, socktype, protocol))
}

fn ai_s_tcp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    inet_addrinfo(ctx, args, libc::SOCK_STREAM, libc::IPPROTO_TCP)
}

fn ai_s_udp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    inet_addrinfo(ctx, args, libc::SOCK_DGRAM, libc::IPPROTO_UDP)
}

fn ai_s_ip(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let a = inet_addrinfo(ctx, args, 0, 0)?;
    Ok(a)
}

/// A socket type: an Integer, or a Symbol/String (`:STREAM`, `"SOCK_DGRAM"`); nil is 0.
pub fn socktype_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<i32> {
    match v {
        Some(&t) => super::named_const(ctx, t, &["SOCK_"], "type"),
        None => Ok(0),
    }
}

/// An address or protocol family: an Integer, or a Symbol/String (`:INET`, `"AF_INET6"`);
/// nil is AF_UNSPEC.
pub fn family_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<i32> {
    match v {
        Some(&f) => super::named_const(ctx, f, &["AF_", "PF_"], "domain"),
        None => Ok(libc::AF_UNSPEC),
    }
}

fn ai_s_unix(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = crate::core::file::stat::cpath_arg(ctx, args.pos[0])?;
    let st = match args.pos.get(1) {
        Some(_) => socktype_arg(ctx, args.pos.get(1))?,
        None => libc::SOCK_STREAM,
    };
    let mut addr = sockaddr_un(ctx, c.as_bytes())?;
    // The whole sockaddr_un, zero-padded (what `to_sockaddr` answers in CRuby).
    addr.resize(std::mem::size_of::<libc::sockaddr_un>(), 0);
    Ok(new_addrinfo(ctx, addr, st, 0))
}

/// `Addrinfo.new(sockaddr, family = nil, socktype = nil, protocol = nil)`: `sockaddr` is a
/// packed String or an array such as `["AF_INET", 80, "host", "127.0.0.1"]`, whose numeric
/// address is checked by getaddrinfo(3) against the given family, type and protocol (so an
/// impossible combination is a SocketError, as in CRuby).
fn ai_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let sa = args.pos[0];
    let pf = family_arg(ctx, args.pos.get(1))?;
    let st = socktype_arg(ctx, args.pos.get(2))?;
    let proto = match args.pos.get(3) {
        Some(&p) if !p.is_nil() => integer::to_int_arg(ctx, p)?,
        _ => 0,
    };
    let (addr, pfamily) = if array::is_array(sa) {
        let af_name = array::get(sa, 0);
        let af_name = string::to_str_arg(ctx, af_name)?;
        let af = family_arg(ctx, Some(&af_name)).map_err(|_| {
            let n = string::to_rust_string_lossy(af_name);
            socket_error(ctx, &format!("unknown address family: {n}"), false)
        })?;
        match af {
            libc::AF_INET | libc::AF_INET6 => {
                let port = integer::to_int_arg(ctx, array::get(sa, 1))?;
                let node = array::get(sa, 3);
                let node = string::to_str_arg(ctx, node)?;
                let node = match string::to_rust_string_lossy(node) {
                    n if n.is_empty() || n == "<any>" => "0.0.0.0".to_string(),
                    n if n == "<broadcast>" => "255.255.255.255".to_string(),
                    n => n,
                };
                let fam = if pf != 0 { pf } else { af };
                // CRuby's "socktype hack": a numeric port without a type asks for datagrams.
                let hint_st = if st == 0 { libc::SOCK_DGRAM } else { st };
                let list = resolve_hinted(ctx, Some(&node), Some(&port.to_string()), fam, hint_st, proto, libc::AI_NUMERICHOST | libc::AI_NUMERICSERV)?;
                let Some(r) = list.into_iter().next() else { return Err(socket_error(ctx, "getaddrinfo: Name or service not known", true)) };
                (r.addr, fam)
            }
            libc::AF_UNIX => {
                let path = array::get(sa, 1);
                let path = string::to_str_arg(ctx, path)?;
                let bytes = string::bytes(path).to_vec();
                (sockaddr_un(ctx, &bytes)?, pf)
            }
            _ => return Err(socket_error(ctx, "unexpected address family", false)),
        }
    } else {
        let s = string::to_str_arg(ctx, sa)?;
        (string::bytes(s).to_vec(), pf)
    };
    let fresh = new_addrinfo(ctx, addr, st, proto);
    if let Some(o) = data_ref::<AddrinfoObj>(fresh) {
        o.pfamily = pfamily;
    }
    crate::object::move_data(recv, fresh);
    Ok(Value::NIL)
}

/// The arguments `(node, service, family = nil, socktype = nil, protocol = nil, flags = nil)`
/// of `Addrinfo.getaddrinfo` and `Socket.getaddrinfo`.
#[allow(clippy::type_complexity)]
fn getaddrinfo_args(ctx: &mut Ctx, args: &Args) -> Result<(Option<String>, Option<String>, i32, i32, i32)> {
    let node = opt_str(ctx, args.pos.first())?;
    let service = opt_str(ctx, args.pos.get(1))?;
    let fam = family_arg(ctx, args.pos.get(2))?;
    let st = socktype_arg(ctx, args.pos.get(3))?;
    let flags = match args.pos.get(5) {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)?,
        _ => 0,
    };
    Ok((node, service, fam, st, flags))
}

/// `Addrinfo.getaddrinfo(node, service, family = nil, socktype = nil, protocol = nil, flags = nil)`:
/// one Addrinfo per entry getaddrinfo(3) answers, with its family, type and protocol.
fn ai_s_getaddrinfo(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (node, service, fam, st, flags) = getaddrinfo_args(ctx, args)?;
    let proto = match args.pos.get(4) {
        Some(&p) if !p.is_nil() => integer::to_int_arg(ctx, p)?,
        _ => 0,
    };
    let list = resolve_hinted(ctx, node.as_deref(), service.as_deref(), fam, st, proto, flags)?;
    // Built as it goes: a Rust Vec of fresh objects is no GC root.
    let out = array::new(ctx);
    for r in list {
        let family = r.family;
        let ai = new_addrinfo(ctx, r.addr, r.socktype, r.protocol);
        if let Some(o) = data_ref::<AddrinfoObj>(ai) {
            o.pfamily = family;
            o.canonname = r.canonname;
        }
        array::push(ctx, out, ai);
    }
    Ok(out)
}

fn ai_afamily(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(family_of(&get(ctx, recv)?.addr) as i64))
}

fn ai_pfamily(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.pfamily as i64))
}

fn ai_socktype(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.socktype as i64))
}

fn ai_protocol(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.protocol as i64))
}

fn ai_to_sockaddr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?.addr.clone();
    Ok(string::new_binary(ctx, &a))
}

fn ai_canonname(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let c = get(ctx, recv)?.canonname.clone();
    Ok(c.map_or(Value::NIL, |c| string::new_utf8(ctx, &c)))
}

fn fam(ctx: &mut Ctx, recv: Value) -> Result<i32> {
    Ok(family_of(&get(ctx, recv)?.addr))
}

fn ai_ip_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let f = fam(ctx, recv)?;
    Ok(Value::bool(f == libc::AF_INET || f == libc::AF_INET6))
}

fn ai_ipv4_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(fam(ctx, recv)? == libc::AF_INET))
}

fn ai_ipv6_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(fam(ctx, recv)? == libc::AF_INET6))
}

fn ai_unix_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(fam(ctx, recv)? == libc::AF_UNIX))
}

fn need_ip(ctx: &mut Ctx, recv: Value) -> Result<(String, u16)> {
    let a = get(ctx, recv)?;
    let f = family_of(&a.addr);
    if f != libc::AF_INET && f != libc::AF_INET6 {
        return Err(socket_error(ctx, "need IPv4 or IPv6 address", false));
    }
    let (ip, port, _) = numeric(&a.addr);
    Ok((ip, port))
}

fn ai_ip_address(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (ip, _) = need_ip(ctx, recv)?;
    Ok(string::new_utf8(ctx, &ip))
}

fn ai_ip_port(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, port) = need_ip(ctx, recv)?;
    Ok(Value::fixnum(port as i64))
}

fn ai_ip_unpack(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (ip, port) = need_ip(ctx, recv)?;
    let s = string::new_utf8(ctx, &ip);
    Ok(array::from_vec(ctx, vec![s, Value::fixnum(port as i64)]))
}

fn ai_unix_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    if family_of(&a.addr) != libc::AF_UNIX {
        return Err(socket_error(ctx, "need AF_UNIX address", false));
    }
    let p = unpack_path(&a.addr);
    Ok(string::new_from_bytes(ctx, &p))
}

fn v4_octets(a: &AddrinfoObj) -> Option<[u8; 4]> {
    (family_of(&a.addr) == libc::AF_INET && a.addr.len() >= 8).then(|| [a.addr[4], a.addr[5], a.addr[6], a.addr[7]])
}

fn v6_addr(a: &AddrinfoObj) -> Option<std::net::Ipv6Addr> {
    (family_of(&a.addr) == libc::AF_INET6 && a.addr.len() >= 24).then(|| {
        let mut o = [0u8; 16];
        o.copy_from_slice(&a.addr[8..24]);
        std::net::Ipv6Addr::from(o)
    })
}

macro_rules! ip_predicates {
    ($($fname:ident => |$a:ident| $e:expr;)*) => {
        $(fn $fname(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
            let $a = get(ctx, recv)?;
            Ok(Value::bool($e))
        })*
    };
}

ip_predicates! {
    ai_ipv4_loopback => |a| v4_octets(a).is_some_and(|o| o[0] == 127);
    ai_ipv4_private => |a| v4_octets(a).is_some_and(|o| o[0] == 10 || (o[0] == 172 && (16..32).contains(&o[1])) || (o[0] == 192 && o[1] == 168));
    ai_ipv4_multicast => |a| v4_octets(a).is_some_and(|o| (224..240).contains(&o[0]));
    ai_ipv6_loopback => |a| v6_addr(a).is_some_and(|v| v.is_loopback());
    ai_ipv6_unspecified => |a| v6_addr(a).is_some_and(|v| v.is_unspecified());
    ai_ipv6_multicast => |a| v6_addr(a).is_some_and(|v| v.is_multicast());
    ai_ipv6_linklocal => |a| v6_addr(a).is_some_and(|v| v.segments()[0] & 0xffc0 == 0xfe80);
    ai_ipv6_sitelocal => |a| v6_addr(a).is_some_and(|v| v.segments()[0] & 0xffc0 == 0xfec0);
    ai_ipv6_unique_local => |a| v6_addr(a).is_some_and(|v| v.segments()[0] & 0xfe00 == 0xfc00);
    ai_ipv6_v4mapped => |a| v6_addr(a).is_some_and(|v| v.to_ipv4_mapped().is_some());
    ai_ipv6_v4compat => |a| v6_addr(a).is_some_and(|v| { let s = v.segments(); s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1) });
}

/// The address part of `inspect`: "1.2.3.4:80", "[::1]:80", "/path", "1.2.3.4".
pub fn sockaddr_text(a: &AddrinfoObj) -> String {
    if a.addr.is_empty() {
        return "empty-sockaddr".into();
    }
    match family_of(&a.addr) {
        libc::AF_INET | libc::AF_INET6 => {
            let (ip, port, f) = numeric(&a.addr);
            let host = if f == libc::AF_INET6 { format!("[{ip}]") } else { ip.clone() };
            if port == 0 { if f == libc::AF_INET6 { ip } else { host } } else { format!("{host}:{port}") }
        }
        libc::AF_UNIX => {
            let p = unpack_path(&a.addr);
            match p.first() {
                None => "empty-path".into(),
                Some(b'/') => String::from_utf8_lossy(&p).into_owned(),
                Some(_) => format!("UNIX {}", String::from_utf8_lossy(&p)),
            }
        }
        f => format!("unknown address family {f}"),
    }
}

fn ai_inspect_sockaddr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = sockaddr_text(get(ctx, recv)?);
    Ok(string::new_utf8(ctx, &t))
}

fn ai_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let mut s = format!("#<Addrinfo: {}", sockaddr_text(a));
    let ip = matches!(family_of(&a.addr), libc::AF_INET | libc::AF_INET6);
    let const_name = |prefix: &str, v: i32| super::CONSTANTS.iter().find(|(n, c)| n.starts_with(prefix) && *c == v as i64).map(|(n, _)| n.to_string());
    match (a.socktype, a.protocol) {
        (libc::SOCK_STREAM, p) if ip && (p == 0 || p == libc::IPPROTO_TCP) => s.push_str(" TCP"),
        (libc::SOCK_DGRAM, p) if ip && (p == 0 || p == libc::IPPROTO_UDP) => s.push_str(" UDP"),
        (st, p) => {
            if st != 0 {
                s.push(' ');
                s.push_str(&const_name("SOCK_", st).unwrap_or_else(|| format!("UNKNOWN_SOCKTYPE({st})")));
            }
            if p != 0 {
                s.push(' ');
                s.push_str(&const_name("IPPROTO_", p).filter(|_| ip).unwrap_or_else(|| format!("UNKNOWN_PROTOCOL({p})")));
            }
        }
    }
    if let Some(c) = &a.canonname {
        s.push_str(&format!(" ({c})"));
    }
    s.push('>');
    Ok(string::new_utf8(ctx, &s))
}

fn new_socket_for(ctx: &mut Ctx, a: &AddrinfoObj) -> Result<i32> {
    let st = if a.socktype == 0 { libc::SOCK_STREAM } else { a.socktype };
    // SAFETY: socket(2) has no memory preconditions.
    let fd = unsafe { libc::socket(family_of(&a.addr), st | libc::SOCK_CLOEXEC, a.protocol) };
    if fd < 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "socket(2)"));
    }
    Ok(fd)
}

/// With a block: yields the new socket and closes it afterwards (the block's value);
/// without one, the socket.
fn yield_and_close(ctx: &mut Ctx, s: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return Ok(s) };
    let r = ctx.yield1(&b, s);
    let _ = crate::core::io::close(ctx, s);
    r
}

fn ai_bind(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let addr = a.addr.clone();
    let fd = new_socket_for(ctx, a)?;
    let one: i32 = 1;
    // SAFETY: a valid int option; bind with a packed sockaddr of its length.
    let rc = unsafe {
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, &one as *const i32 as *const libc::c_void, 4);
        libc::bind(fd, addr.as_ptr() as *const libc::sockaddr, addr.len() as libc::socklen_t)
    };
    if rc != 0 {
        let e = last_errno();
        // SAFETY: closing the descriptor made above.
        unsafe { libc::close(fd) };
        return Err(sys_error(ctx, e, "bind(2)"));
    }
    let k = class(ctx, "Socket");
    let s = new_socket(ctx, k, fd);
    yield_and_close(ctx, s, args)
}

fn ai_listen(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let backlog = match args.pos.first() {
        Some(&b) => integer::to_int_arg(ctx, b)?,
        None => libc::SOMAXCONN,
    };
    let s = ai_bind(ctx, recv, &Args::new(&[]))?;
    let fd = fd_of(ctx, s)?;
    // SAFETY: listen on a bound socket.
    if unsafe { libc::listen(fd, backlog) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "listen(2)"));
    }
    yield_and_close(ctx, s, args)
}

/// An Addrinfo for a socket's own (`peer` false) or peer address.
fn socket_address(ctx: &mut Ctx, recv: Value, peer: bool) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let addr = super::basic::sockname(ctx, fd, peer)?;
    let mut st: i32 = 0;
    let mut len = 4 as libc::socklen_t;
    // SAFETY: st is a valid int out-value.
    unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_TYPE, &mut st as *mut i32 as *mut libc::c_void, &mut len) };
    Ok(new_addrinfo(ctx, addr, st, 0))
}

fn bs_local_address(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    socket_address(ctx, recv, false)
}

fn bs_remote_address(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    socket_address(ctx, recv, true)
}

/// `connect_address`: the local address, with an unspecified IP replaced by the loopback
/// one (what a client on this host connects to).
fn bs_connect_address(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = socket_address(ctx, recv, false)?;
    let o = get(ctx, a)?;
    let f = family_of(&o.addr);
    if (f == libc::AF_INET || f == libc::AF_INET6) && o.addr.get(2..4) == Some(&[0, 0]) {
        let v = if f == libc::AF_INET { "IPv4" } else { "IPv6" };
        return Err(socket_error(ctx, &format!("unbound {v} socket"), false));
    }
    match f {
        libc::AF_INET if o.addr[4..8] == [0, 0, 0, 0] => o.addr[4..8].copy_from_slice(&[127, 0, 0, 1]),
        libc::AF_INET6 if o.addr[8..24].iter().all(|&b| b == 0) => o.addr[23] = 1,
        libc::AF_UNIX if unpack_path(&o.addr).is_empty() => return Err(socket_error(ctx, "unbound Unix socket", false)),
        _ => {}
    }
    Ok(a)
}

// ---- Socket class functions over addresses ----

/// `Socket.sockaddr_in(port, host)` / `pack_sockaddr_in`.
fn s_sockaddr_in(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let port = opt_str(ctx, args.pos.first())?;
    let host = opt_str(ctx, args.pos.get(1))?.map(|h| if h.is_empty() { "0.0.0.0".to_string() } else { h });
    let a = pack_inet(ctx, host.as_deref(), port.as_deref(), libc::SOCK_STREAM, 0)?;
    Ok(string::new_binary(ctx, &a))
}

/// `Socket.unpack_sockaddr_in(sockaddr)`: `[port, ip]`.
fn s_unpack_sockaddr_in(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let b = super::socket::addr_bytes(ctx, args.pos[0])?;
    let f = family_of(&b);
    if f != libc::AF_INET && f != libc::AF_INET6 {
        return Err(ctx.arg_error("not an AF_INET/AF_INET6 sockaddr"));
    }
    let (ip, port, _) = numeric(&b);
    let s = string::new_utf8(ctx, &ip);
    Ok(array::from_vec(ctx, vec![Value::fixnum(port as i64), s]))
}

fn s_sockaddr_un(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = crate::core::file::stat::cpath_arg(ctx, args.pos[0])?;
    let mut a = sockaddr_un(ctx, c.as_bytes())?;
    // CRuby returns the whole sockaddr_un (110 bytes), zero-padded.
    a.resize(std::mem::size_of::<libc::sockaddr_un>(), 0);
    Ok(string::new_binary(ctx, &a))
}

fn s_unpack_sockaddr_un(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let b = super::socket::addr_bytes(ctx, args.pos[0])?;
    if family_of(&b) != libc::AF_UNIX {
        return Err(ctx.arg_error("not an AF_UNIX sockaddr"));
    }
    Ok(string::new_from_bytes(ctx, &unpack_path(&b)))
}

/// `Socket.getaddrinfo(host, port, family = nil, socktype = nil, protocol = nil, flags = nil)`:
/// arrays `[afamily, port, host, ip, family, socktype, protocol]`.
fn s_getaddrinfo(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (node, service, fam, st, flags) = getaddrinfo_args(ctx, args)?;
    // The host names are looked up again from the addresses when asked (`reverse_lookup`
    // true, or nil while `BasicSocket.do_not_reverse_lookup` is false).
    let reverse = match args.pos.get(6) {
        Some(&r) if r == Value::TRUE || r == Value::FALSE => r.truthy(),
        Some(&r) if r.as_symbol().is_some() => match ctx.sym_str(r.as_symbol().unwrap_or_default()).as_str() {
            "hostname" => true,
            "numeric" => false,
            other => return Err(ctx.type_error(&format!("invalid reverse_lookup flag: :{other}"))),
        },
        Some(&r) if !r.is_nil() => return Err(ctx.type_error("invalid reverse_lookup flag")),
        _ => {
            let b = class(ctx, "BasicSocket");
            !ctx.call_str(b, "do_not_reverse_lookup", &[])?.truthy()
        }
    };
    let socktypes: Vec<i32> = if st == 0 { vec![libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_RAW] } else { vec![st] };
    let out = array::new(ctx);
    for t in socktypes {
        let Ok(list) = resolve(ctx, node.as_deref(), service.as_deref(), fam, t, flags) else {
            if array::len(out) == 0 && t == libc::SOCK_STREAM {
                resolve(ctx, node.as_deref(), service.as_deref(), fam, t, flags)?;
            }
            continue;
        };
        for r in list {
            let (ip, port, f) = numeric(&r.addr);
            let proto = match t {
                libc::SOCK_STREAM => libc::IPPROTO_TCP,
                libc::SOCK_DGRAM => libc::IPPROTO_UDP,
                _ => 0,
            };
            let name = if f == libc::AF_INET6 { "AF_INET6" } else { "AF_INET" };
            let host = if reverse { super::netdb::name_info(ctx, &r.addr, 0).map(|(h, _)| h).unwrap_or_else(|_| ip.clone()) } else { ip.clone() };
            let entry = array::new(ctx);
            array::push(ctx, out, entry);
            for item in [Some(name.to_string()), None, Some(host), Some(ip.clone())] {
                let v = match item {
                    Some(text) => string::new_utf8(ctx, &text),
                    None => Value::fixnum(port as i64),
                };
                array::push(ctx, entry, v);
            }
            for n in [f, t, proto] {
                array::push(ctx, entry, Value::fixnum(n as i64));
            }
        }
    }
    Ok(out)
}

/// The parts of Addrinfo CRuby writes in Ruby: connecting from/to, family_addrinfo, the
/// IPv6 multicast scopes, ipv6_to_ipv4, marshal_dump/marshal_load and foreach.
const ADDRINFO_RB: &str = r##"
class Addrinfo
  def self.foreach(nodename, service, family = nil, socktype = nil, protocol = nil, flags = nil, timeout: nil, &block)
    getaddrinfo(nodename, service, family, socktype, protocol, flags).each(&block)
  end

  # An Addrinfo of this one's kind for `args` (host and port, or a path), or the given one.
  def family_addrinfo(*args)
    raise ArgumentError, "no address specified" if args.empty?
    if args.first.is_a?(Addrinfo)
      raise ArgumentError, "too many arguments" unless args.size == 1
      other = args.first
      raise ArgumentError, "Addrinfo type mismatch" if pfamily != other.pfamily || socktype != other.socktype
      return other
    end
    if ip?
      raise ArgumentError, "IP address needs host and port but #{args.size} arguments given" unless args.size == 2
      Addrinfo.getaddrinfo(args[0], args[1], pfamily, socktype, protocol)[0]
    elsif unix?
      raise ArgumentError, "UNIX socket needs single path argument but #{args.size} arguments given" unless args.size == 1
      Addrinfo.unix(args[0])
    else
      raise ArgumentError, "unexpected family"
    end
  end

  def connect(timeout: nil, &block)
    __connect_from(nil, timeout, &block)
  end

  def connect_from(*args, timeout: nil, &block)
    __connect_from(family_addrinfo(*args), timeout, &block)
  end

  def connect_to(*args, timeout: nil, &block)
    family_addrinfo(*args).__connect_from(self, timeout, &block)
  end

  # A new socket connected to this address (bound to `local` first when given); with a
  # block, the block's value, the socket closed afterwards.
  def __connect_from(local, timeout)
    sock = Socket.new(pfamily, socktype, protocol)
    begin
      sock.setsockopt(:IPV6, :V6ONLY, 1) if ipv6?
      sock.bind(local) if local
      if timeout
        loop do
          r = sock.connect_nonblock(self, exception: false)
          break if r == 0
          raise Errno::ETIMEDOUT, "user specified timeout" unless sock.wait_writable(timeout)
        end
      else
        sock.connect(self)
      end
    rescue Exception
      sock.close
      raise
    end
    return sock unless block_given?
    begin
      yield sock
    ensure
      sock.close
    end
  end
  protected :__connect_from

  def __multicast_scope
    ipv6_multicast? ? to_sockaddr.getbyte(9) & 0x0f : nil
  end
  private :__multicast_scope

  def ipv6_mc_nodelocal? = __multicast_scope == 1
  def ipv6_mc_linklocal? = __multicast_scope == 2
  def ipv6_mc_sitelocal? = __multicast_scope == 5
  def ipv6_mc_orglocal? = __multicast_scope == 8
  def ipv6_mc_global? = __multicast_scope == 14

  # The IPv4 address inside an IPv4-mapped or IPv4-compatible IPv6 address, else nil.
  def ipv6_to_ipv4
    return nil unless ipv6? && (ipv6_v4mapped? || ipv6_v4compat?)
    sa = [Socket::AF_INET].pack("S") + to_sockaddr.byteslice(2, 2) + to_sockaddr.byteslice(20, 4) + "\0" * 8
    Addrinfo.new(sa, Socket::PF_INET, socktype, protocol)
  end

  def self.__constant_name(prefix, value)
    name = Socket::Constants.constants.find do |c|
      c.start_with?(prefix) && !c.end_with?("_LOCAL") && Socket::Constants.const_get(c) == value
    end
    name ? name.to_s : value
  end

  def marshal_dump
    af = Addrinfo.__constant_name("AF_", afamily)
    addr = if ip?
      host, port = getnameinfo(Socket::NI_NUMERICHOST | Socket::NI_NUMERICSERV)
      [host, port]
    elsif unix?
      unix_path
    else
      to_sockaddr
    end
    proto = ip? ? Addrinfo.__constant_name("IPPROTO_", protocol) : protocol
    [af, addr, Addrinfo.__constant_name("PF_", pfamily), Addrinfo.__constant_name("SOCK_", socktype), proto, canonname, nil]
  end

  def marshal_load(ary)
    af, addr, pf, st, proto, _canonname, _inspectname = ary
    value = ->(v) { v.is_a?(String) ? Socket::Constants.const_get(v) : v }
    afamily = value.(af)
    sockaddr = if afamily == Socket::AF_UNIX
      Socket.sockaddr_un(addr)
    elsif afamily == Socket::AF_INET || afamily == Socket::AF_INET6
      [af, Integer(addr[1]), addr[0], addr[0]]
    else
      addr
    end
    __send__(:initialize, sockaddr, value.(pf), value.(st), value.(proto))
    self
  end
end
"##;

pub fn init(ctx: &mut Ctx) {
    let obj = ctx.c().object;
    let ai = crate::core::module_methods::define_class_under(ctx, obj, "Addrinfo", obj);
    crate::core::module::body(ai).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, ai, [
        ("initialize", ai_initialize, [1..=4], Unsafe, Private),
        ("tcp", ai_s_tcp, [2], Unsafe, Singleton),
        ("udp", ai_s_udp, [2], Unsafe, Singleton),
        ("ip", ai_s_ip, [1], Unsafe, Singleton),
        ("unix", ai_s_unix, [1..=2], Unsafe, Singleton),
        ("getaddrinfo", ai_s_getaddrinfo, [2..=6], Unsafe, Singleton, Kw),
        ("afamily", ai_afamily, [0], Unsafe),
        ("pfamily", ai_pfamily, [0], Unsafe),
        ("socktype", ai_socktype, [0], Unsafe),
        ("protocol", ai_protocol, [0], Unsafe),
        ("to_sockaddr", ai_to_sockaddr, [0], Unsafe),
        ("to_s", ai_to_sockaddr, [0], Unsafe),
        ("canonname", ai_canonname, [0], Unsafe),
        ("ip?", ai_ip_p, [0], Unsafe),
        ("ipv4?", ai_ipv4_p, [0], Unsafe),
        ("ipv6?", ai_ipv6_p, [0], Unsafe),
        ("unix?", ai_unix_p, [0], Unsafe),
        ("ip_address", ai_ip_address, [0], Unsafe),
        ("ip_port", ai_ip_port, [0], Unsafe),
        ("ip_unpack", ai_ip_unpack, [0], Unsafe),
        ("unix_path", ai_unix_path, [0], Unsafe),
        ("ipv4_loopback?", ai_ipv4_loopback, [0], Unsafe),
        ("ipv4_private?", ai_ipv4_private, [0], Unsafe),
        ("ipv4_multicast?", ai_ipv4_multicast, [0], Unsafe),
        ("ipv6_loopback?", ai_ipv6_loopback, [0], Unsafe),
        ("ipv6_unspecified?", ai_ipv6_unspecified, [0], Unsafe),
        ("ipv6_multicast?", ai_ipv6_multicast, [0], Unsafe),
        ("ipv6_linklocal?", ai_ipv6_linklocal, [0], Unsafe),
        ("ipv6_sitelocal?", ai_ipv6_sitelocal, [0], Unsafe),
        ("ipv6_unique_local?", ai_ipv6_unique_local, [0], Unsafe),
        ("ipv6_v4mapped?", ai_ipv6_v4mapped, [0], Unsafe),
        ("ipv6_v4compat?", ai_ipv6_v4compat, [0], Unsafe),
        ("inspect_sockaddr", ai_inspect_sockaddr, [0], Unsafe),
        ("inspect", ai_inspect, [0], Unsafe),
        ("bind", ai_bind, [0], Unsafe),
        ("listen", ai_listen, [0..=1], Unsafe),
    ]);
    let b = class(ctx, "BasicSocket");
    crate::methods!(ctx, b, [
        ("local_address", bs_local_address, [0], Unsafe),
        ("remote_address", bs_remote_address, [0], Unsafe),
        ("connect_address", bs_connect_address, [0], Unsafe),
    ]);
    let s = class(ctx, "Socket");
    crate::methods!(ctx, s, [
        ("sockaddr_in", s_sockaddr_in, [2], Unsafe, Singleton),
        ("pack_sockaddr_in", s_sockaddr_in, [2], Unsafe, Singleton),
        ("unpack_sockaddr_in", s_unpack_sockaddr_in, [1], Unsafe, Singleton),
        ("sockaddr_un", s_sockaddr_un, [1], Unsafe, Singleton),
        ("pack_sockaddr_un", s_sockaddr_un, [1], Unsafe, Singleton),
        ("unpack_sockaddr_un", s_unpack_sockaddr_un, [1], Unsafe, Singleton),
        ("getaddrinfo", s_getaddrinfo, [2..=7], Unsafe, Singleton),
    ]);
    let src = string::new_utf8(ctx, ADDRINFO_RB);
    let main = ctx.vm().main_obj.get();
    let _ = ctx.call_str(main, "eval", &[src]);
}
