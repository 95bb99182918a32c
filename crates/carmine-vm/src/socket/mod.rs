//! `require "socket"`: BasicSocket and its subclasses, implemented over the IO object
//! (`core::io::IoObj`), so `read`, `gets`, `write`, `close` and `IO.select` work on sockets.
//!
//! Invariants:
//! - A socket object owns its descriptor like any IO; sockets are `sync` (no write buffer).
//! - Every blocking call (accept, connect, recv, send) first waits for the descriptor
//!   through `thread::sched::wait_readable/wait_writable` (the giant lock is left while
//!   other threads run; the fiber scheduler hooks there), then makes the system call.
//! - Errors are CRuby's: `Errno::*` naming the call ("connect(2) for \"host\" port 80"),
//!   `SocketError`/`Socket::ResolutionError` with getaddrinfo's message.
//! - The classes are defined on the first `require "socket"` (a native feature, see
//!   `core::load`); this module holds no process-global state.

pub mod addrinfo;
pub mod basic;
pub mod inet;
pub mod socket;
pub mod unix;

use crate::core::module_methods::{define_class_under, define_module_under};
pub use crate::core::process::last_errno;
use crate::core::process::errno_error;
use crate::core::{io, module};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The class named `name` under Object (defined by `init`).
pub fn class(ctx: &mut Ctx, name: &str) -> Value {
    let id = ctx.intern(name);
    module::body(ctx.c().object).const_get(id).map_or(Value::NIL, |e| e.value)
}

/// A socket object of `klass` owning `fd`.
pub fn new_socket(ctx: &mut Ctx, klass: Value, fd: i32) -> Value {
    let s = io::new_io(ctx, klass, fd, true, true, None);
    if let Some(o) = io::io_ref(s) {
        o.sync = true;
    }
    s
}

/// The descriptor of an open socket (IOError "closed stream" after close).
pub fn fd_of(ctx: &mut Ctx, v: Value) -> Result<i32> {
    match io::io_ref(v) {
        Some(o) if o.closed => Err(ctx.raise(ctx.c().io_error, "closed stream")),
        Some(o) => Ok(o.fd),
        None => Err(ctx.raise(ctx.c().io_error, "uninitialized stream")),
    }
}

/// `SocketError` (or `Socket::ResolutionError` for a getaddrinfo failure) with `msg`.
pub fn socket_error(ctx: &mut Ctx, msg: &str, resolution: bool) -> crate::error::Unwind {
    let mut k = class(ctx, "SocketError");
    if resolution {
        let sock = class(ctx, "Socket");
        let id = ctx.intern("ResolutionError");
        if let Some(e) = module::body(sock).const_get(id) {
            k = e.value;
        }
    }
    ctx.raise(k, msg)
}

/// `Errno::*` for a failed socket call, with CRuby's detail text.
pub fn sys_error(ctx: &mut Ctx, errno: i32, detail: &str) -> crate::error::Unwind {
    errno_error(ctx, errno, detail)
}

/// Constants shared by `Socket` and `Socket::Constants`.
pub const CONSTANTS: &[(&str, i64)] = &[
    ("AF_INET", libc::AF_INET as i64),
    ("AF_INET6", libc::AF_INET6 as i64),
    ("AF_UNIX", libc::AF_UNIX as i64),
    ("AF_LOCAL", libc::AF_UNIX as i64),
    ("AF_UNSPEC", libc::AF_UNSPEC as i64),
    ("PF_INET", libc::PF_INET as i64),
    ("PF_INET6", libc::PF_INET6 as i64),
    ("PF_UNIX", libc::PF_UNIX as i64),
    ("PF_LOCAL", libc::PF_UNIX as i64),
    ("PF_UNSPEC", libc::PF_UNSPEC as i64),
    ("SOCK_STREAM", libc::SOCK_STREAM as i64),
    ("SOCK_DGRAM", libc::SOCK_DGRAM as i64),
    ("SOCK_RAW", libc::SOCK_RAW as i64),
    ("SOCK_SEQPACKET", libc::SOCK_SEQPACKET as i64),
    ("IPPROTO_IP", libc::IPPROTO_IP as i64),
    ("IPPROTO_TCP", libc::IPPROTO_TCP as i64),
    ("IPPROTO_UDP", libc::IPPROTO_UDP as i64),
    ("IPPROTO_IPV6", libc::IPPROTO_IPV6 as i64),
    ("IPPROTO_ICMP", libc::IPPROTO_ICMP as i64),
    ("SOL_SOCKET", libc::SOL_SOCKET as i64),
    ("SO_REUSEADDR", libc::SO_REUSEADDR as i64),
    ("SO_REUSEPORT", libc::SO_REUSEPORT as i64),
    ("SO_KEEPALIVE", libc::SO_KEEPALIVE as i64),
    ("SO_BROADCAST", libc::SO_BROADCAST as i64),
    ("SO_LINGER", libc::SO_LINGER as i64),
    ("SO_RCVBUF", libc::SO_RCVBUF as i64),
    ("SO_SNDBUF", libc::SO_SNDBUF as i64),
    ("SO_TYPE", libc::SO_TYPE as i64),
    ("SO_ERROR", libc::SO_ERROR as i64),
    ("SO_OOBINLINE", libc::SO_OOBINLINE as i64),
    ("SO_RCVTIMEO", libc::SO_RCVTIMEO as i64),
    ("SO_SNDTIMEO", libc::SO_SNDTIMEO as i64),
    ("TCP_NODELAY", libc::TCP_NODELAY as i64),
    ("TCP_KEEPIDLE", libc::TCP_KEEPIDLE as i64),
    ("TCP_KEEPINTVL", libc::TCP_KEEPINTVL as i64),
    ("TCP_KEEPCNT", libc::TCP_KEEPCNT as i64),
    ("TCP_CORK", libc::TCP_CORK as i64),
    ("IPV6_V6ONLY", libc::IPV6_V6ONLY as i64),
    ("SHUT_RD", libc::SHUT_RD as i64),
    ("SHUT_WR", libc::SHUT_WR as i64),
    ("SHUT_RDWR", libc::SHUT_RDWR as i64),
    ("MSG_PEEK", libc::MSG_PEEK as i64),
    ("MSG_OOB", libc::MSG_OOB as i64),
    ("MSG_DONTWAIT", libc::MSG_DONTWAIT as i64),
    ("MSG_WAITALL", libc::MSG_WAITALL as i64),
    ("MSG_NOSIGNAL", libc::MSG_NOSIGNAL as i64),
    ("SOMAXCONN", libc::SOMAXCONN as i64),
    ("INADDR_ANY", libc::INADDR_ANY as i64),
    ("INADDR_LOOPBACK", libc::INADDR_LOOPBACK as i64),
    ("AI_PASSIVE", libc::AI_PASSIVE as i64),
    ("AI_CANONNAME", libc::AI_CANONNAME as i64),
    ("AI_NUMERICHOST", libc::AI_NUMERICHOST as i64),
    ("AI_NUMERICSERV", libc::AI_NUMERICSERV as i64),
    ("NI_NUMERICHOST", libc::NI_NUMERICHOST as i64),
    ("NI_NUMERICSERV", libc::NI_NUMERICSERV as i64),
    ("EAI_NONAME", libc::EAI_NONAME as i64),
];

/// Defines the socket classes (the native part of `require "socket"`).
pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let io_class = ctx.c().io;
    let std_err = ctx.c().standard_error;
    let socket_error = define_class_under(ctx, obj, "SocketError", std_err);
    let basic = define_class_under(ctx, obj, "BasicSocket", io_class);
    let ip = define_class_under(ctx, obj, "IPSocket", basic);
    let tcp = define_class_under(ctx, obj, "TCPSocket", ip);
    define_class_under(ctx, obj, "TCPServer", tcp);
    define_class_under(ctx, obj, "UDPSocket", ip);
    let unix = define_class_under(ctx, obj, "UNIXSocket", basic);
    define_class_under(ctx, obj, "UNIXServer", unix);
    let socket = define_class_under(ctx, obj, "Socket", basic);
    define_class_under(ctx, socket, "ResolutionError", socket_error);
    let consts = define_module_under(ctx, socket, "Constants");
    for &(name, v) in CONSTANTS {
        let id = ctx.intern(name);
        module::body(consts).const_set(id, Value::fixnum(v));
        module::body(socket).const_set(id, Value::fixnum(v));
    }
    basic::init(ctx);
    inet::init(ctx);
    unix::init(ctx);
    addrinfo::init(ctx);
    socket::init(ctx);
    Ok(())
}
