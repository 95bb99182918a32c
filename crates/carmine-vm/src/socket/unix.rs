//! UNIX-domain sockets: UNIXSocket (`new`, `pair`/`socketpair`, `path`, `addr`,
//! `peeraddr`, `recvfrom`) and UNIXServer (`new`, `accept`, `accept_nonblock`, `listen`).
//!
//! Invariants: a path longer than sockaddr_un can hold is an ArgumentError ("too long
//! unix socket path"), as CRuby; `path` is the path the socket was made with ("" for
//! clients, accepted and paired sockets).

use super::inet::{accept_fd, accept_nonblock_common, connect_fd, s_listen};
use super::{class, fd_of, last_errno, new_socket, sys_error};
use crate::core::{array, integer, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A packed sockaddr_un for `path`.
pub fn sockaddr_un(ctx: &mut Ctx, path: &[u8]) -> Result<Vec<u8>> {
    // SAFETY: an all-zero sockaddr_un is valid.
    let sun: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if path.len() >= sun.sun_path.len() {
        return Err(ctx.arg_error(&format!("too long unix socket path ({} bytes given but {} bytes max)", path.len(), sun.sun_path.len() - 1)));
    }
    let mut out = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
    out.extend_from_slice(path);
    out.push(0);
    Ok(out)
}

/// The path inside a packed sockaddr_un.
pub fn unpack_path(addr: &[u8]) -> Vec<u8> {
    let p = addr.get(2..).unwrap_or(&[]);
    let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
    p[..end].to_vec()
}

fn path_of(ctx: &mut Ctx, v: Value) -> Result<Vec<u8>> {
    let c = crate::core::file::stat::cpath_arg(ctx, v)?;
    Ok(c.as_bytes().to_vec())
}

fn set_path(ctx: &mut Ctx, s: Value, path: &[u8]) {
    let id = ctx.intern("@path");
    let p = string::new_from_bytes(ctx, path);
    object::ivar_set_raw(ctx, s, id, p);
}

fn new_unix_fd(ctx: &mut Ctx) -> Result<i32> {
    // SAFETY: socket(2) has no memory preconditions.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "socket(2)"));
    }
    Ok(fd)
}

/// `UNIXSocket.new(path)`: connected to the server at `path`.
fn us_s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let path = path_of(ctx, args.pos[0])?;
    let addr = sockaddr_un(ctx, &path)?;
    let fd = new_unix_fd(ctx)?;
    if let Err(e) = connect_fd(ctx, fd, &addr) {
        // SAFETY: closing the descriptor made above.
        unsafe { libc::close(fd) };
        return Err(sys_error(ctx, e, &format!("connect(2) for {}", String::from_utf8_lossy(&path))));
    }
    // A client's own address is unbound: its `path` is "".
    Ok(new_socket(ctx, recv, fd))
}

/// `UNIXServer.new(path)`: bound to `path` and listening.
fn usrv_s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let path = path_of(ctx, args.pos[0])?;
    let addr = sockaddr_un(ctx, &path)?;
    let fd = new_unix_fd(ctx)?;
    // SAFETY: addr is a packed sockaddr_un of its length.
    if unsafe { libc::bind(fd, addr.as_ptr() as *const libc::sockaddr, addr.len() as libc::socklen_t) } != 0 {
        let e = last_errno();
        // SAFETY: closing the descriptor made above.
        unsafe { libc::close(fd) };
        return Err(sys_error(ctx, e, &format!("bind(2) for {}", String::from_utf8_lossy(&path))));
    }
    // SAFETY: listen on a bound socket.
    if unsafe { libc::listen(fd, libc::SOMAXCONN) } != 0 {
        let e = last_errno();
        // SAFETY: as above.
        unsafe { libc::close(fd) };
        return Err(sys_error(ctx, e, "listen(2)"));
    }
    let s = new_socket(ctx, recv, fd);
    set_path(ctx, s, &path);
    Ok(s)
}

/// `UNIXSocket.pair(type = :STREAM, protocol = 0)`: two connected sockets.
fn us_s_pair(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let ty = match args.pos.first() {
        Some(&t) if t.as_symbol().is_some() || string::is_string(t) => {
            let name = if let Some(id) = t.as_symbol() { ctx.sym_str(id) } else { string::to_rust_string_lossy(t) };
            match name.trim_start_matches("SOCK_") {
                "STREAM" => libc::SOCK_STREAM,
                "DGRAM" => libc::SOCK_DGRAM,
                "SEQPACKET" => libc::SOCK_SEQPACKET,
                other => return Err(super::socket_error(ctx, &format!("unknown socket type: {other}"), false)),
            }
        }
        Some(&t) if !t.is_nil() => integer::to_int_arg(ctx, t)?,
        _ => libc::SOCK_STREAM,
    };
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::socketpair(libc::AF_UNIX, ty | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        let e = last_errno();
        return Err(sys_error(ctx, e, "socketpair(2)"));
    }
    let a = new_socket(ctx, recv, fds[0]);
    let b = new_socket(ctx, recv, fds[1]);
    Ok(array::from_vec(ctx, vec![a, b]))
}

fn us_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    fd_of(ctx, recv)?;
    let id = ctx.intern("@path");
    let p = object::ivar_get(ctx, recv, id);
    Ok(if p.is_nil() { string::new_utf8(ctx, "") } else { p })
}

fn unix_addr(ctx: &mut Ctx, recv: Value, peer: bool) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    let a = super::basic::sockname(ctx, fd, peer)?;
    let fam = string::new_utf8(ctx, "AF_UNIX");
    let p = string::new_from_bytes(ctx, &unpack_path(&a));
    Ok(array::from_vec(ctx, vec![fam, p]))
}

fn us_addr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    unix_addr(ctx, recv, false)
}

fn us_peeraddr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    unix_addr(ctx, recv, true)
}

fn usrv_accept(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    super::inet::accept_as(ctx, recv, "UNIXSocket")
}

fn usrv_accept_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    accept_nonblock_common(ctx, recv, args, "UNIXSocket")
}

fn usrv_sysaccept(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let fd = fd_of(ctx, recv)?;
    match accept_fd(ctx, fd, true)? {
        Ok(c) => Ok(Value::fixnum(c as i64)),
        Err(e) => Err(sys_error(ctx, e, "accept(2)")),
    }
}

pub fn init(ctx: &mut Ctx) {
    let us = class(ctx, "UNIXSocket");
    crate::methods!(ctx, us, [
        ("new", us_s_new, [1], Unsafe, Singleton),
        ("open", crate::socket::s_open, [0..], Unsafe, Singleton, Kw),
        ("pair", us_s_pair, [0..=2], Unsafe, Singleton),
        ("socketpair", us_s_pair, [0..=2], Unsafe, Singleton),
        ("path", us_path, [0], Unsafe),
        ("addr", us_addr, [0], Unsafe),
        ("peeraddr", us_peeraddr, [0], Unsafe),
    ]);
    let srv = class(ctx, "UNIXServer");
    crate::methods!(ctx, srv, [
        ("new", usrv_s_new, [1], Unsafe, Singleton),
        ("open", crate::socket::s_open, [0..], Unsafe, Singleton, Kw),
        ("accept", usrv_accept, [0], Unsafe),
        ("accept_nonblock", usrv_accept_nonblock, [0], Unsafe, Kw),
        ("sysaccept", usrv_sysaccept, [0], Unsafe),
        ("listen", s_listen, [1], Unsafe),
    ]);
}
