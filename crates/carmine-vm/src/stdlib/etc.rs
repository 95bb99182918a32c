//! `etc`: the user and group databases (through the C library, so NSS sources such as
//! LDAP are seen), system configuration (sysconf, confstr, pathconf, uname,
//! nprocessors) and the system's directories.
//!
//! Invariants:
//! - Entries are Etc::Passwd / Etc::Group Structs of Strings and Integers, built from
//!   the C library's reentrant lookups (`getpwnam_r` …); the enumeration functions
//!   (`getpwent` …) are not reentrant and run under the GL (Unsafe).
//! - `Etc.passwd {}` and `Etc.group {}` rewind the database, iterate, and close it; a
//!   nested iteration of the same database raises RuntimeError (flag: a hidden instance
//!   variable of Etc).

use crate::core::{array, hash, integer, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
use std::ffi::{CStr, CString};

fn etc_module(ctx: &mut Ctx) -> Value {
    let obj = ctx.c().object;
    let id = ctx.intern("Etc");
    crate::core::module::body(obj).const_get(id).map(|e| e.value).unwrap_or(Value::NIL)
}

fn etc_const(ctx: &mut Ctx, name: &str) -> Value {
    let etc = etc_module(ctx);
    let id = ctx.intern(name);
    crate::core::module::body(etc).const_get(id).map(|e| e.value).unwrap_or(Value::NIL)
}

fn cstr_value(ctx: &mut Ctx, p: *const libc::c_char) -> Value {
    if p.is_null() {
        return Value::NIL;
    }
    // SAFETY: a non-null field of a passwd/group entry is a NUL-terminated string that
    // lives until the next lookup, and is copied here at once.
    let b = unsafe { CStr::from_ptr(p) }.to_bytes();
    string::new_from_bytes(ctx, b)
}

/// An Etc::Passwd from a C passwd entry.
fn passwd_value(ctx: &mut Ctx, pw: &libc::passwd) -> Result<Value> {
    let mark = ctx.stacks.protected.len();
    let mut fields = Vec::with_capacity(7);
    for p in [pw.pw_name, pw.pw_passwd] {
        let v = cstr_value(ctx, p);
        ctx.protect(v);
        fields.push(v);
    }
    fields.push(Value::fixnum(pw.pw_uid as i64));
    fields.push(Value::fixnum(pw.pw_gid as i64));
    for p in [pw.pw_gecos, pw.pw_dir, pw.pw_shell] {
        let v = cstr_value(ctx, p);
        ctx.protect(v);
        fields.push(v);
    }
    let k = etc_const(ctx, "Passwd");
    let r = ctx.call_str(k, "new", &fields);
    ctx.unprotect(mark);
    r
}

/// An Etc::Group from a C group entry.
fn group_value(ctx: &mut Ctx, gr: &libc::group) -> Result<Value> {
    let mark = ctx.stacks.protected.len();
    let name = cstr_value(ctx, gr.gr_name);
    ctx.protect(name);
    let pw = cstr_value(ctx, gr.gr_passwd);
    ctx.protect(pw);
    let mem = array::new(ctx);
    ctx.protect(mem);
    let mut p = gr.gr_mem;
    while !p.is_null() {
        // SAFETY: gr_mem is a NULL-terminated array of C strings.
        let m = unsafe { *p };
        if m.is_null() {
            break;
        }
        let s = cstr_value(ctx, m);
        array::push(ctx, mem, s);
        // SAFETY: still inside the array (the terminator was not reached).
        p = unsafe { p.add(1) };
    }
    let k = etc_const(ctx, "Group");
    let r = ctx.call_str(k, "new", &[name, pw, Value::fixnum(gr.gr_gid as i64), mem]);
    ctx.unprotect(mark);
    r
}

/// Runs a reentrant `get*_r` lookup with a growing buffer; Ok(None) when not found.
fn lookup<T: Copy>(mut f: impl FnMut(*mut T, *mut libc::c_char, usize, *mut *mut T) -> libc::c_int) -> Option<(T, Vec<u8>)> {
    let mut size = 1024;
    loop {
        let mut buf = vec![0u8; size];
        // SAFETY: a zeroed C struct (plain data) for the lookup to fill.
        let mut entry: T = unsafe { std::mem::zeroed() };
        let mut out: *mut T = std::ptr::null_mut();
        let rc = f(&mut entry, buf.as_mut_ptr() as *mut libc::c_char, size, &mut out);
        if rc == libc::ERANGE && size < (1 << 22) {
            size *= 4;
            continue;
        }
        if rc != 0 || out.is_null() {
            return None;
        }
        // The entry's strings point into `buf`, which is returned with it.
        return Some((entry, buf));
    }
}

fn uid_arg(ctx: &mut Ctx, v: Value) -> Result<u32> {
    if !v.is_fixnum() && !crate::core::bignum::is_bignum(v) {
        let name = object::type_name_for_error(ctx, v);
        return Err(ctx.type_error(&format!("no implicit conversion of {name} into Integer")));
    }
    Ok(integer::to_i64_arg(ctx, v)? as u32)
}

fn s_getpwuid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    // SAFETY: getuid cannot fail.
    let uid = match args.pos.first() {
        Some(&v) => uid_arg(ctx, v)?,
        None => unsafe { libc::getuid() },
    };
    // SAFETY: the callback passes getpwuid_r buffers owned by `lookup`.
    match lookup(|e, b, n, o| unsafe { libc::getpwuid_r(uid, e, b, n, o) }) {
        Some((pw, _buf)) => passwd_value(ctx, &pw),
        None => Err(ctx.arg_error(&format!("can't find user for {uid}"))),
    }
}

fn s_getpwnam(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let name = string::to_rust_string_lossy(s);
    let c = CString::new(name.clone()).map_err(|_| ctx.arg_error("string contains null byte"))?;
    // SAFETY: as in getpwuid; `c` outlives the call.
    match lookup(|e, b, n, o| unsafe { libc::getpwnam_r(c.as_ptr(), e, b, n, o) }) {
        Some((pw, _buf)) => passwd_value(ctx, &pw),
        None => Err(ctx.arg_error(&format!("can't find user for {name}"))),
    }
}

fn s_getgrgid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    // SAFETY: getgid cannot fail.
    let gid = match args.pos.first() {
        Some(&v) => uid_arg(ctx, v)?,
        None => unsafe { libc::getgid() },
    };
    // SAFETY: the callback passes getgrgid_r buffers owned by `lookup`.
    match lookup(|e, b, n, o| unsafe { libc::getgrgid_r(gid, e, b, n, o) }) {
        Some((gr, _buf)) => group_value(ctx, &gr),
        None => Err(ctx.arg_error(&format!("can't find group for {gid}"))),
    }
}

fn s_getgrnam(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let name = string::to_rust_string_lossy(s);
    let c = CString::new(name.clone()).map_err(|_| ctx.arg_error("string contains null byte"))?;
    // SAFETY: as in getgrgid; `c` outlives the call.
    match lookup(|e, b, n, o| unsafe { libc::getgrnam_r(c.as_ptr(), e, b, n, o) }) {
        Some((gr, _buf)) => group_value(ctx, &gr),
        None => Err(ctx.arg_error(&format!("can't find group for {name}"))),
    }
}

/// `getlogin`: the login name of the controlling terminal's session, else $USER.
fn s_getlogin(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: getlogin returns a static string or NULL; copied at once.
    let p = unsafe { libc::getlogin() };
    if !p.is_null() {
        return Ok(cstr_value(ctx, p));
    }
    match std::env::var_os("USER") {
        Some(u) => Ok(string::new_from_bytes(ctx, u.as_encoded_bytes())),
        None => Ok(Value::NIL),
    }
}

fn s_getpwent(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: getpwent's entry is valid until the next call; converted at once.
    let p = unsafe { libc::getpwent() };
    if p.is_null() {
        return Ok(Value::NIL);
    }
    // SAFETY: non-null entry from getpwent.
    passwd_value(ctx, unsafe { &*p })
}

fn s_getgrent(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: getgrent's entry is valid until the next call; converted at once.
    let p = unsafe { libc::getgrent() };
    if p.is_null() {
        return Ok(Value::NIL);
    }
    // SAFETY: non-null entry from getgrent.
    group_value(ctx, unsafe { &*p })
}

fn s_setpwent(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: rewinds the C library's passwd enumeration.
    unsafe { libc::setpwent() };
    Ok(Value::NIL)
}

fn s_endpwent(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: closes the C library's passwd enumeration.
    unsafe { libc::endpwent() };
    Ok(Value::NIL)
}

fn s_setgrent(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: rewinds the C library's group enumeration.
    unsafe { libc::setgrent() };
    Ok(Value::NIL)
}

fn s_endgrent(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: closes the C library's group enumeration.
    unsafe { libc::endgrent() };
    Ok(Value::NIL)
}

/// Iterates a database with a block (rewound first, closed after, no nesting), or
/// returns its next entry.
fn iterate(ctx: &mut Ctx, args: &Args, flag: &str, kind: &str, rewind: fn(), close: fn(), next: fn(&mut Ctx, Value, &Args) -> Result<Value>) -> Result<Value> {
    let etc = etc_module(ctx);
    let Some(b) = args.block else {
        return next(ctx, etc, args);
    };
    let id = ctx.intern(flag);
    if object::ivar_get(ctx, etc, id).truthy() {
        let c = ctx.c().runtime_error;
        return Err(ctx.raise(c, &format!("parallel {kind} iteration")));
    }
    object::ivar_set_raw(ctx, etc, id, Value::TRUE);
    rewind();
    let mut r = Ok(Value::NIL);
    loop {
        match next(ctx, etc, args) {
            Ok(v) if v.is_nil() => break,
            Ok(v) => {
                if let Err(e) = ctx.yield1(&b, v) {
                    r = Err(e);
                    break;
                }
            }
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    close();
    object::ivar_set_raw(ctx, etc, id, Value::FALSE);
    r
}

fn s_passwd(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    // SAFETY (both closures): the C library's enumeration calls, under the GL.
    iterate(ctx, args, "__passwd_iterating__", "passwd", || unsafe { libc::setpwent() }, || unsafe { libc::endpwent() }, s_getpwent)
}

fn s_group(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    // SAFETY (both closures): the C library's enumeration calls, under the GL.
    iterate(ctx, args, "__group_iterating__", "group", || unsafe { libc::setgrent() }, || unsafe { libc::endgrent() }, s_getgrent)
}

fn errno_fail(ctx: &mut Ctx, what: &str) -> crate::error::Unwind {
    let code = crate::core::process::last_errno();
    crate::core::process::errno_error(ctx, code, what)
}

/// `sysconf(name)`: an Integer, or nil for an unlimited or indeterminate value.
fn s_sysconf(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let name = integer::to_int_arg(ctx, args.pos[0])?;
    // SAFETY: errno is thread-local; cleared to tell "no limit" (-1, errno 0) from errors.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: sysconf reads a configuration value.
    let v = unsafe { libc::sysconf(name) };
    if v == -1 {
        // SAFETY: reading this thread's errno.
        if unsafe { *libc::__errno_location() } == 0 {
            return Ok(Value::NIL);
        }
        return Err(errno_fail(ctx, "sysconf"));
    }
    Ok(Value::fixnum(v as i64))
}

/// `confstr(name)`: a String, or nil when the variable has no value.
fn s_confstr(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let name = integer::to_int_arg(ctx, args.pos[0])?;
    // SAFETY: errno as in sysconf; a size query with no buffer.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: with a null buffer, confstr only returns the needed size.
    let n = unsafe { libc::confstr(name, std::ptr::null_mut(), 0) };
    if n == 0 {
        // SAFETY: reading this thread's errno.
        if unsafe { *libc::__errno_location() } == 0 {
            return Ok(Value::NIL);
        }
        return Err(errno_fail(ctx, "confstr"));
    }
    let mut buf = vec![0u8; n];
    // SAFETY: `buf` holds `n` bytes, the size confstr asked for.
    unsafe { libc::confstr(name, buf.as_mut_ptr() as *mut libc::c_char, n) };
    let len = buf.iter().position(|&b| b == 0).unwrap_or(n);
    Ok(string::new_from_bytes(ctx, &buf[..len]))
}

/// `IO#pathconf(name)`.
fn io_pathconf(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = integer::to_int_arg(ctx, args.pos[0])?;
    let fd = ctx.call_str(recv, "fileno", &[])?;
    let fd = integer::to_int_arg(ctx, fd)?;
    // SAFETY: errno as in sysconf.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: fpathconf reads a limit of an open descriptor.
    let v = unsafe { libc::fpathconf(fd, name) };
    if v == -1 {
        // SAFETY: reading this thread's errno.
        if unsafe { *libc::__errno_location() } == 0 {
            return Ok(Value::NIL);
        }
        return Err(errno_fail(ctx, "fpathconf"));
    }
    Ok(Value::fixnum(v as i64))
}

/// `nprocessors`: the CPUs this process may run on.
fn s_nprocessors(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    match std::thread::available_parallelism() {
        Ok(n) => Ok(Value::fixnum(n.get() as i64)),
        Err(_) => Err(errno_fail(ctx, "sched_getaffinity")),
    }
}

fn s_uname(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: utsname is plain data that uname fills.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return Err(errno_fail(ctx, "uname"));
    }
    let h = hash::new(ctx);
    let mark = ctx.protect(h);
    let fields: [(&str, &[libc::c_char]); 5] = [("sysname", &u.sysname), ("nodename", &u.nodename), ("release", &u.release), ("version", &u.version), ("machine", &u.machine)];
    let mut r = Ok(h);
    for (k, f) in fields {
        let v = cstr_value(ctx, f.as_ptr());
        ctx.protect(v);
        let key = ctx.intern(k);
        if let Err(e) = hash::aset(ctx, h, Value::symbol(key), v) {
            r = Err(e);
            break;
        }
    }
    ctx.unprotect(mark);
    r
}

fn s_sysconfdir(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_utf8(ctx, "/etc"))
}

fn s_systmpdir(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_utf8(ctx, "/tmp"))
}

/// The sysconf, confstr and pathconf names Etc defines (Linux values from libc).
const CONSTANTS: &[(&str, i64)] = &[
    ("SC_ARG_MAX", libc::_SC_ARG_MAX as i64),
    ("SC_CHILD_MAX", libc::_SC_CHILD_MAX as i64),
    ("SC_CLK_TCK", libc::_SC_CLK_TCK as i64),
    ("SC_NGROUPS_MAX", libc::_SC_NGROUPS_MAX as i64),
    ("SC_OPEN_MAX", libc::_SC_OPEN_MAX as i64),
    ("SC_STREAM_MAX", libc::_SC_STREAM_MAX as i64),
    ("SC_TZNAME_MAX", libc::_SC_TZNAME_MAX as i64),
    ("SC_JOB_CONTROL", libc::_SC_JOB_CONTROL as i64),
    ("SC_SAVED_IDS", libc::_SC_SAVED_IDS as i64),
    ("SC_VERSION", libc::_SC_VERSION as i64),
    ("SC_PAGESIZE", libc::_SC_PAGESIZE as i64),
    ("SC_PAGE_SIZE", libc::_SC_PAGESIZE as i64),
    ("SC_RE_DUP_MAX", libc::_SC_RE_DUP_MAX as i64),
    ("SC_LINE_MAX", libc::_SC_LINE_MAX as i64),
    ("SC_HOST_NAME_MAX", libc::_SC_HOST_NAME_MAX as i64),
    ("SC_LOGIN_NAME_MAX", libc::_SC_LOGIN_NAME_MAX as i64),
    ("SC_SYMLOOP_MAX", libc::_SC_SYMLOOP_MAX as i64),
    ("SC_TTY_NAME_MAX", libc::_SC_TTY_NAME_MAX as i64),
    ("SC_NPROCESSORS_CONF", libc::_SC_NPROCESSORS_CONF as i64),
    ("SC_NPROCESSORS_ONLN", libc::_SC_NPROCESSORS_ONLN as i64),
    ("SC_PHYS_PAGES", libc::_SC_PHYS_PAGES as i64),
    ("SC_GETPW_R_SIZE_MAX", libc::_SC_GETPW_R_SIZE_MAX as i64),
    ("SC_GETGR_R_SIZE_MAX", libc::_SC_GETGR_R_SIZE_MAX as i64),
    ("SC_IOV_MAX", libc::_SC_IOV_MAX as i64),
    ("SC_THREADS", libc::_SC_THREADS as i64),
    ("SC_MONOTONIC_CLOCK", libc::_SC_MONOTONIC_CLOCK as i64),
    ("CS_PATH", libc::_CS_PATH as i64),
    ("PC_LINK_MAX", libc::_PC_LINK_MAX as i64),
    ("PC_MAX_CANON", libc::_PC_MAX_CANON as i64),
    ("PC_MAX_INPUT", libc::_PC_MAX_INPUT as i64),
    ("PC_NAME_MAX", libc::_PC_NAME_MAX as i64),
    ("PC_PATH_MAX", libc::_PC_PATH_MAX as i64),
    ("PC_PIPE_BUF", libc::_PC_PIPE_BUF as i64),
    ("PC_CHOWN_RESTRICTED", libc::_PC_CHOWN_RESTRICTED as i64),
    ("PC_NO_TRUNC", libc::_PC_NO_TRUNC as i64),
    ("PC_VDISABLE", libc::_PC_VDISABLE as i64),
];

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let etc = crate::core::module_methods::define_module_under(ctx, obj, "Etc");
    let v = string::new_utf8(ctx, "1.4.5");
    let v = object::freeze(v);
    let id = ctx.intern("VERSION");
    crate::core::module::body(etc).const_set(id, v);
    for &(name, v) in CONSTANTS {
        let id = ctx.intern(name);
        crate::core::module::body(etc).const_set(id, Value::fixnum(v));
    }
    // Etc::Passwd and Etc::Group: Structs named through const_set, as Ruby code would.
    let struct_class = ctx.c().struct_;
    for (name, members) in [("Passwd", &["name", "passwd", "uid", "gid", "gecos", "dir", "shell"][..]), ("Group", &["name", "passwd", "gid", "mem"][..])] {
        let syms: Vec<Value> = members.iter().map(|m| Value::symbol(ctx.intern(m))).collect();
        let k = ctx.call_str(struct_class, "new", &syms)?;
        let mark = ctx.protect(k);
        let cname = Value::symbol(ctx.intern(name));
        let r = ctx.call_str(etc, "const_set", &[cname, k]);
        ctx.unprotect(mark);
        r?;
        // Each class enumerates its database too (`Etc::Passwd.each`).
        let enumerable = ctx.c().enumerable;
        ctx.call_str(k, "extend", &[enumerable])?;
        let meta = object::singleton_class(ctx, k)?;
        if name == "Passwd" {
            crate::methods!(ctx, meta, [("each", s_passwd, [0], Unsafe)]);
        } else {
            crate::methods!(ctx, meta, [("each", s_group, [0], Unsafe)]);
        }
    }
    let meta = object::singleton_class(ctx, etc)?;
    crate::methods!(ctx, meta, [
        ("getlogin", s_getlogin, [0], Unsafe),
        ("getpwuid", s_getpwuid, [0..=1], Unsafe),
        ("getpwnam", s_getpwnam, [1], Unsafe),
        ("getgrgid", s_getgrgid, [0..=1], Unsafe),
        ("getgrnam", s_getgrnam, [1], Unsafe),
        ("getpwent", s_getpwent, [0], Unsafe),
        ("getgrent", s_getgrent, [0], Unsafe),
        ("setpwent", s_setpwent, [0], Unsafe),
        ("endpwent", s_endpwent, [0], Unsafe),
        ("setgrent", s_setgrent, [0], Unsafe),
        ("endgrent", s_endgrent, [0], Unsafe),
        ("passwd", s_passwd, [0], Unsafe),
        ("group", s_group, [0], Unsafe),
        ("sysconf", s_sysconf, [1], Unsafe),
        ("confstr", s_confstr, [1], Unsafe),
        ("nprocessors", s_nprocessors, [0], Unsafe),
        ("uname", s_uname, [0], Unsafe),
        ("sysconfdir", s_sysconfdir, [0], Unsafe),
        ("systmpdir", s_systmpdir, [0], Unsafe),
    ]);
    // Etc's functions are module functions: private instance methods too.
    crate::methods!(ctx, etc, [
        ("getlogin", s_getlogin, [0], Unsafe, Private),
        ("getpwuid", s_getpwuid, [0..=1], Unsafe, Private),
        ("getpwnam", s_getpwnam, [1], Unsafe, Private),
        ("getgrgid", s_getgrgid, [0..=1], Unsafe, Private),
        ("getgrnam", s_getgrnam, [1], Unsafe, Private),
        ("passwd", s_passwd, [0], Unsafe, Private),
        ("group", s_group, [0], Unsafe, Private),
    ]);
    let io = ctx.c().io;
    crate::methods!(ctx, io, [("pathconf", io_pathconf, [1], Unsafe)]);
    Ok(())
}
