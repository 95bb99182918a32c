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
pub mod ancdata;
pub mod basic;
pub mod constants;
pub mod inet;
pub mod netdb;
pub mod socket;
pub mod unix;

use crate::core::module_methods::{define_class_under, define_module_under};
pub use crate::core::process::last_errno;
pub use constants::CONSTANTS;
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
        // Sockets are binary, as CRuby's (ASCII-8BIT, no conversion).
        o.sync = true;
        o.ext_enc = Some(crate::core::encoding::BINARY);
    }
    // A new socket takes `BasicSocket.do_not_reverse_lookup` as it is now.
    let id = ctx.intern("@do_not_reverse_lookup");
    let b = class(ctx, "BasicSocket");
    let global = crate::core::object::ivar_get(ctx, b, id);
    if !global.is_nil() {
        crate::core::object::ivar_set_raw(ctx, s, id, global);
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

/// The name in a Symbol, a String or an object with `to_str`; None for anything else.
pub fn const_name_arg(ctx: &mut Ctx, v: Value) -> Result<Option<String>> {
    if let Some(id) = v.as_symbol() {
        return Ok(Some(ctx.sym_str(id)));
    }
    Ok(crate::core::string::try_to_str(ctx, v)?.map(crate::core::string::to_rust_string_lossy))
}

/// `Socket::ResolutionError` for a failed getaddrinfo(3)/getnameinfo(3) (`func`), with the
/// system's message and `error_code`.
pub fn resolution_error(ctx: &mut Ctx, func: &str, code: i32) -> crate::error::Unwind {
    let msg = format!("{func}: {}", inet::gai_message(code));
    let sock = class(ctx, "Socket");
    let id = ctx.intern("ResolutionError");
    let Some(k) = module::body(sock).const_get(id).map(|e| e.value) else { return socket_error(ctx, &msg, true) };
    let m = crate::core::string::new_utf8(ctx, &msg);
    match ctx.call_str(k, "new", &[m]) {
        Ok(e) => {
            let id = ctx.intern("@error_code");
            crate::core::object::ivar_set_raw(ctx, e, id, Value::fixnum(code as i64));
            crate::core::exception::capture_backtrace(ctx, e);
            crate::error::Unwind::Raise(e)
        }
        Err(u) => u,
    }
}

/// A constant given as an Integer, or as a Symbol/String naming it with or without one of
/// `prefixes` (`:INET`, `"AF_INET"`); nil is 0. An unknown name is a SocketError
/// "unknown socket <what>: <name>".
pub fn named_const(ctx: &mut Ctx, v: Value, prefixes: &[&str], what: &str) -> Result<i32> {
    if v.is_nil() {
        return Ok(0);
    }
    let Some(name) = const_name_arg(ctx, v)? else { return crate::core::integer::to_int_arg(ctx, v) };
    for p in std::iter::once(&"").chain(prefixes) {
        let full = format!("{p}{name}");
        if let Some(&(_, n)) = CONSTANTS.iter().find(|(c, _)| *c == full) {
            return Ok(n as i32);
        }
    }
    Err(socket_error(ctx, &format!("unknown socket {what}: {name}"), false))
}

/// `Errno::*` for a failed socket call, with CRuby's detail text.
pub fn sys_error(ctx: &mut Ctx, errno: i32, detail: &str) -> crate::error::Unwind {
    errno_error(ctx, errno, detail)
}


/// Defines the socket classes (the native part of `require "socket"`).
/// `open(*args) { |sock| ... }` of every socket class: `new(*args)`, and with a block,
/// yields the socket and closes it after the block (IO.open's protocol).
pub fn s_open(ctx: &mut Ctx, recv: Value, args: &crate::interp::Args) -> Result<Value> {
    let new = ctx.intern("new");
    let sock = ctx.call_kw(recv, new, args.pos, args.kw, None)?;
    let Some(b) = args.block else { return Ok(sock) };
    let r = ctx.yield1(&b, sock);
    let c = crate::core::file::close_after_block(ctx, sock);
    let v = r?;
    c?;
    Ok(v)
}

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
    ancdata::init(ctx);
    netdb::init(ctx);
    Ok(())
}
