//! The name services: `Socket.getnameinfo`, `Addrinfo#getnameinfo`, `Socket.gethostbyname`,
//! `TCPSocket.gethostbyname`, `Socket.gethostbyaddr`, `Socket.getservbyname`/`getservbyport`
//! and `Socket.getifaddrs` (with `Socket::Ifaddr` and `Socket.ip_address_list`).
//!
//! Invariants: lookups that may wait on the network (getaddrinfo, getnameinfo,
//! gethostbyaddr) run outside the giant lock; the non-reentrant netdb calls
//! (getservbyname/port) run under it, which serialises them within the VM. Failures are
//! `SocketError`, or `Socket::ResolutionError` with `error_code` for the getaddrinfo family.

use std::ffi::{CStr, CString};

use super::addrinfo::AddrinfoObj;
use super::inet::{numeric, resolve, resolve_hinted};
use super::{class, socket_error};
use crate::core::{array, integer, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

extern "C" {
    fn gethostbyaddr(addr: *const libc::c_void, len: libc::socklen_t, family: libc::c_int) -> *mut libc::hostent;
}

/// getnameinfo(3) outside the giant lock: `(host, service)`.
pub fn name_info(ctx: &mut Ctx, addr: &[u8], flags: i32) -> Result<(String, String)> {
    let a = addr.to_vec();
    let (rc, host, serv) = crate::thread::sched::without_gl(ctx, || {
        let mut host = [0 as libc::c_char; 1025];
        let mut serv = [0 as libc::c_char; 32];
        // SAFETY: a is a packed sockaddr of its length; the buffers hold their lengths.
        let rc = unsafe { libc::getnameinfo(a.as_ptr() as *const libc::sockaddr, a.len() as libc::socklen_t, host.as_mut_ptr(), host.len() as libc::socklen_t, serv.as_mut_ptr(), serv.len() as libc::socklen_t, flags) };
        // SAFETY: getnameinfo NUL-terminates what it writes (the buffers start zeroed).
        let text = |b: &[libc::c_char]| unsafe { CStr::from_ptr(b.as_ptr()) }.to_string_lossy().into_owned();
        (rc, text(&host), text(&serv))
    });
    if rc != 0 {
        return Err(super::resolution_error(ctx, "getnameinfo", rc));
    }
    Ok((host, serv))
}

fn pair(ctx: &mut Ctx, a: &str, b: &str) -> Value {
    let out = array::new(ctx);
    let x = string::new_utf8(ctx, a);
    array::push(ctx, out, x);
    let y = string::new_utf8(ctx, b);
    array::push(ctx, out, y);
    out
}

fn text_arg(ctx: &mut Ctx, v: Value) -> Result<Option<String>> {
    if v.is_nil() {
        return Ok(None);
    }
    if let Some(n) = v.as_fixnum() {
        return Ok(Some(n.to_string()));
    }
    let s = string::to_str_arg(ctx, v)?;
    Ok(Some(string::to_rust_string_lossy(s)))
}

/// `Socket.getnameinfo(sockaddr, flags = 0)`: `sockaddr` is packed, or
/// `[family, port, host]` / `[family, port, host, numeric_ip]`.
fn s_getnameinfo(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let flags = match args.pos.get(1) {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)?,
        _ => 0,
    };
    let sa = args.pos[0];
    let addr = if let Some(ary) = array::try_to_ary(ctx, sa)? {
        let n = array::len(ary);
        let (host, numeric_host) = match n {
            3 => (array::get(ary, 2), false),
            n if n >= 4 => {
                let ip = array::get(ary, 3);
                if ip.is_nil() { (array::get(ary, 2), false) } else { (ip, true) }
            }
            n => return Err(ctx.arg_error(&format!("array size should be 3 or 4, {n} given"))),
        };
        let family = super::addrinfo::family_arg(ctx, Some(&array::get(ary, 0)))?;
        let port = text_arg(ctx, array::get(ary, 1))?;
        let host = text_arg(ctx, host)?;
        let socktype = if flags & libc::NI_DGRAM != 0 { libc::SOCK_DGRAM } else { libc::SOCK_STREAM };
        let hint_flags = if numeric_host { libc::AI_NUMERICHOST } else { 0 };
        let list = resolve_hinted(ctx, host.as_deref(), port.as_deref(), family, socktype, 0, hint_flags)?;
        match list.into_iter().next() {
            Some(r) => r.addr,
            None => return Err(super::resolution_error(ctx, "getaddrinfo", libc::EAI_NONAME)),
        }
    } else if let Some(a) = data_ref::<AddrinfoObj>(sa) {
        a.addr.clone()
    } else {
        let s = string::to_str_arg(ctx, sa)?;
        string::bytes(s).to_vec()
    };
    if addr.len() < 2 {
        return Err(socket_error(ctx, "too short sockaddr", false));
    }
    let (host, serv) = name_info(ctx, &addr, flags)?;
    Ok(pair(ctx, &host, &serv))
}

/// `Addrinfo#getnameinfo(flags = 0)`: `[host, service]`.
fn ai_getnameinfo(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut flags = match args.pos.first() {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)?,
        _ => 0,
    };
    let Some(a) = data_ref::<AddrinfoObj>(recv) else { return Err(ctx.type_error("uninitialized Addrinfo")) };
    let addr = a.addr.clone();
    if a.socktype == libc::SOCK_DGRAM {
        flags |= libc::NI_DGRAM;
    }
    let (host, serv) = name_info(ctx, &addr, flags)?;
    Ok(pair(ctx, &host, &serv))
}

/// The host of gethostbyname: "<any>"/"" and "<broadcast>" name the wildcard and the
/// broadcast address; an Integer is an IPv4 address in host order.
fn hostent_host(ctx: &mut Ctx, v: Value) -> Result<String> {
    if let Some(n) = v.as_fixnum() {
        return Ok(std::net::Ipv4Addr::from(n as u32).to_string());
    }
    let s = string::to_str_arg(ctx, v)?;
    let h = string::to_rust_string_lossy(s);
    Ok(match h.as_str() {
        "" | "<any>" => "0.0.0.0".into(),
        "<broadcast>" => "255.255.255.255".into(),
        _ => h,
    })
}

/// `[name, aliases, family, addr, ...]` for a host, each address made by `addr_value`.
fn hostent(ctx: &mut Ctx, host_v: Value, addr_value: fn(&mut Ctx, &[u8]) -> Value) -> Result<Value> {
    let host = hostent_host(ctx, host_v)?;
    let list = resolve(ctx, Some(&host), None, libc::AF_UNSPEC, libc::SOCK_STREAM, libc::AI_CANONNAME)?;
    let Some(first) = list.first() else { return Err(super::resolution_error(ctx, "getaddrinfo", libc::EAI_NONAME)) };
    let out = array::new(ctx);
    let name = first.canonname.clone().unwrap_or_else(|| host.clone());
    let n = string::new_utf8(ctx, &name);
    array::push(ctx, out, n);
    let aliases = array::new(ctx);
    array::push(ctx, out, aliases);
    array::push(ctx, out, Value::fixnum(first.family as i64));
    for r in &list {
        let v = addr_value(ctx, &r.addr);
        array::push(ctx, out, v);
    }
    Ok(out)
}

/// The raw address bytes (in_addr / in6_addr) of a packed sockaddr_in/in6.
fn raw_address(addr: &[u8]) -> &[u8] {
    match addr.get(..2).map(|f| u16::from_ne_bytes([f[0], f[1]]) as i32) {
        Some(libc::AF_INET) if addr.len() >= 8 => &addr[4..8],
        Some(libc::AF_INET6) if addr.len() >= 24 => &addr[8..24],
        _ => &[],
    }
}

fn packed_address(ctx: &mut Ctx, addr: &[u8]) -> Value {
    string::new_binary(ctx, raw_address(addr))
}

fn numeric_address(ctx: &mut Ctx, addr: &[u8]) -> Value {
    let (ip, _, _) = numeric(addr);
    string::new_utf8(ctx, &ip)
}

/// `Socket.gethostbyname(host)`: addresses as packed Strings.
fn s_gethostbyname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    hostent(ctx, args.pos[0], packed_address)
}

/// `TCPSocket.gethostbyname(host)`: addresses as numeric Strings.
fn tcp_s_gethostbyname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    hostent(ctx, args.pos[0], numeric_address)
}

/// `Socket.gethostbyaddr(address, family = AF_INET or AF_INET6 by length)`.
fn s_gethostbyaddr(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let addr = string::bytes(s).to_vec();
    let family = match args.pos.get(1) {
        Some(&f) if !f.is_nil() => super::addrinfo::family_arg(ctx, Some(&f))?,
        _ if addr.len() == 16 => libc::AF_INET6,
        _ => libc::AF_INET,
    };
    let found = crate::thread::sched::without_gl(ctx, || {
        // SAFETY: addr is a buffer of its length; the hostent is read before any other
        // netdb call of this VM (the giant lock is taken back only afterwards).
        unsafe {
            let h = gethostbyaddr(addr.as_ptr() as *const libc::c_void, addr.len() as libc::socklen_t, family);
            if h.is_null() {
                return None;
            }
            let h = &*h;
            let name = CStr::from_ptr(h.h_name).to_string_lossy().into_owned();
            let mut aliases = Vec::new();
            let mut p = h.h_aliases;
            while !p.is_null() && !(*p).is_null() {
                aliases.push(CStr::from_ptr(*p).to_string_lossy().into_owned());
                p = p.add(1);
            }
            let mut addrs = Vec::new();
            let mut p = h.h_addr_list;
            while !p.is_null() && !(*p).is_null() {
                addrs.push(std::slice::from_raw_parts(*p as *const u8, h.h_length as usize).to_vec());
                p = p.add(1);
            }
            Some((name, aliases, h.h_addrtype, addrs))
        }
    });
    let Some((name, aliases, addrtype, addrs)) = found else {
        return Err(socket_error(ctx, "host not found", false));
    };
    let out = array::new(ctx);
    let n = string::new_utf8(ctx, &name);
    array::push(ctx, out, n);
    let al = array::new(ctx);
    array::push(ctx, out, al);
    for a in &aliases {
        let v = string::new_utf8(ctx, a);
        array::push(ctx, al, v);
    }
    array::push(ctx, out, Value::fixnum(addrtype as i64));
    for a in &addrs {
        let v = string::new_binary(ctx, a);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn proto_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<CString> {
    let p = match v {
        Some(&p) if !p.is_nil() => {
            let s = string::to_str_arg(ctx, p)?;
            string::to_rust_string_lossy(s)
        }
        _ => "tcp".into(),
    };
    CString::new(p).map_err(|_| ctx.arg_error("string contains null byte"))
}

/// `Socket.getservbyname(name, proto = "tcp")`: the port (a numeric name is its number).
fn s_getservbyname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let name = string::to_rust_string_lossy(s);
    let proto = proto_arg(ctx, args.pos.get(1))?;
    let cname = CString::new(name.clone()).map_err(|_| ctx.arg_error("string contains null byte"))?;
    // SAFETY: both strings are NUL-terminated; the servent is read at once, under the lock.
    let port = unsafe {
        let sp = libc::getservbyname(cname.as_ptr(), proto.as_ptr());
        (!sp.is_null()).then(|| u16::from_be((*sp).s_port as u16))
    };
    match port {
        Some(p) => Ok(Value::fixnum(p as i64)),
        None => match name.parse::<u64>() {
            Ok(n) => Ok(Value::fixnum(n as i64)),
            Err(_) => Err(socket_error(ctx, &format!("no such service {name}/{}", proto.to_string_lossy()), false)),
        },
    }
}

/// `Socket.getservbyport(port, proto = "tcp")`: the service name.
fn s_getservbyport(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let port = integer::to_i64_arg(ctx, args.pos[0])?;
    if !(0..=0xffff).contains(&port) {
        return Err(ctx.raise(ctx.c().range_error, &format!("can't convert {port} into uint16_t")));
    }
    let proto = proto_arg(ctx, args.pos.get(1))?;
    // SAFETY: proto is NUL-terminated; the servent is read at once, under the lock.
    let name = unsafe {
        let sp = libc::getservbyport((port as u16).to_be() as libc::c_int, proto.as_ptr());
        (!sp.is_null()).then(|| CStr::from_ptr((*sp).s_name).to_string_lossy().into_owned())
    };
    match name {
        Some(n) => Ok(string::new_utf8(ctx, &n)),
        None => Err(socket_error(ctx, &format!("no such service for port {port}/{}", proto.to_string_lossy()), false)),
    }
}

/// The packed bytes of a sockaddr from getifaddrs, or None.
///
/// # Safety
/// `sa` is null or points at a sockaddr of its family's size.
unsafe fn ifaddr_bytes(sa: *const libc::sockaddr) -> Option<Vec<u8>> {
    if sa.is_null() {
        return None;
    }
    let len = match (*sa).sa_family as i32 {
        libc::AF_INET => std::mem::size_of::<libc::sockaddr_in>(),
        libc::AF_INET6 => std::mem::size_of::<libc::sockaddr_in6>(),
        libc::AF_PACKET => std::mem::size_of::<libc::sockaddr_ll>(),
        libc::AF_UNIX => std::mem::size_of::<libc::sockaddr_un>(),
        _ => std::mem::size_of::<libc::sockaddr>(),
    };
    Some(std::slice::from_raw_parts(sa as *const u8, len).to_vec())
}

/// `Socket.__getifaddrs`: `[[name, ifindex, flags, addr, netmask, broadaddr, dstaddr], ...]`
/// with the addresses as packed Strings or nil (`Socket.getifaddrs` wraps them).
fn s_getifaddrs_raw(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: head receives a list freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        let e = super::last_errno();
        return Err(super::sys_error(ctx, e, "getifaddrs"));
    }
    let mut rows = Vec::new();
    let mut p = head;
    while !p.is_null() {
        // SAFETY: p walks the list getifaddrs returned.
        unsafe {
            let a = &*p;
            let name = CStr::from_ptr(a.ifa_name).to_string_lossy().into_owned();
            let index = libc::if_nametoindex(a.ifa_name);
            let broad = a.ifa_flags & libc::IFF_BROADCAST as u32 != 0;
            let point = a.ifa_flags & libc::IFF_POINTOPOINT as u32 != 0;
            let ifu = ifaddr_bytes(a.ifa_ifu);
            rows.push((name, index, a.ifa_flags, ifaddr_bytes(a.ifa_addr), ifaddr_bytes(a.ifa_netmask), if broad { ifu.clone() } else { None }, if point { ifu } else { None }));
            p = a.ifa_next;
        }
    }
    // SAFETY: head came from getifaddrs.
    unsafe { libc::freeifaddrs(head) };
    let out = array::new(ctx);
    for (name, index, flags, addr, mask, broad, dst) in rows {
        let row = array::new(ctx);
        array::push(ctx, out, row);
        let n = string::new_utf8(ctx, &name);
        array::push(ctx, row, n);
        array::push(ctx, row, Value::fixnum(index as i64));
        array::push(ctx, row, Value::fixnum(flags as i64));
        for a in [addr, mask, broad, dst] {
            let v = match a {
                Some(b) => string::new_binary(ctx, &b),
                None => Value::NIL,
            };
            array::push(ctx, row, v);
        }
    }
    Ok(out)
}

/// Socket::Ifaddr and the helpers over getifaddrs, written in Ruby.
const NETDB_RB: &str = r##"
class Socket::Ifaddr
  attr_reader :name, :ifindex, :flags, :addr, :netmask, :broadaddr, :dstaddr

  def initialize(name, ifindex, flags, addr, netmask, broadaddr, dstaddr)
    @name, @ifindex, @flags = name, ifindex, flags
    @addr, @netmask, @broadaddr, @dstaddr = addr, netmask, broadaddr, dstaddr
  end
  private_class_method :new

  def inspect
    s = +"#<Socket::Ifaddr #{@name}"
    s << " #{@addr.inspect_sockaddr}" if @addr
    s << " netmask=#{@netmask.inspect_sockaddr}" if @netmask
    s << " broadcast=#{@broadaddr.inspect_sockaddr}" if @broadaddr
    s << " dstaddr=#{@dstaddr.inspect_sockaddr}" if @dstaddr
    s << ">"
  end
end

class Socket
  def self.getifaddrs
    __getifaddrs.map do |name, index, flags, *addrs|
      ais = addrs.map { |a| a && Addrinfo.new(a) }
      Socket::Ifaddr.send(:new, name, index, flags, *ais)
    end
  end

  def self.ip_address_list
    getifaddrs.filter_map { |i| i.addr if i.addr&.ip? }
  end
end
"##;

pub fn init(ctx: &mut Ctx) {
    let sock = class(ctx, "Socket");
    let obj = ctx.c().object;
    crate::core::module_methods::define_class_under(ctx, sock, "Ifaddr", obj);
    crate::methods!(ctx, sock, [
        ("getnameinfo", s_getnameinfo, [1..=2], Unsafe, Singleton),
        ("gethostbyname", s_gethostbyname, [1], Unsafe, Singleton),
        ("gethostbyaddr", s_gethostbyaddr, [1..=2], Unsafe, Singleton),
        ("getservbyname", s_getservbyname, [1..=2], Unsafe, Singleton),
        ("getservbyport", s_getservbyport, [1..=2], Unsafe, Singleton),
        ("__getifaddrs", s_getifaddrs_raw, [0], Unsafe, Singleton),
    ]);
    let tcp = class(ctx, "TCPSocket");
    crate::methods!(ctx, tcp, [("gethostbyname", tcp_s_gethostbyname, [1], Unsafe, Singleton)]);
    let ai = class(ctx, "Addrinfo");
    crate::methods!(ctx, ai, [("getnameinfo", ai_getnameinfo, [0..=1], Unsafe)]);
    let res = {
        let id = ctx.intern("ResolutionError");
        crate::core::module::body(sock).const_get(id).map(|e| e.value)
    };
    if let Some(r) = res {
        let id = ctx.intern("error_code");
        let _ = ctx.call_str(r, "attr_reader", &[Value::symbol(id)]);
    }
    let src = string::new_utf8(ctx, NETDB_RB);
    let main = ctx.vm().main_obj.get();
    let _ = ctx.call_str(main, "eval", &[src]);
}
