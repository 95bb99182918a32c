//! Process identities and limits: user and group ids (`Process.uid`, `euid=`, `groups`,
//! `Process::UID`/`GID`/`Sys`), process groups and sessions, priorities, and resource limits.
//!
//! Invariants: every setter raises `Errno::*` from the failing system call and returns what
//! CRuby returns (the id set, or nil for the `Process::Sys` setters); ids are read fresh on
//! every call, never cached, since a setter or `fork` may change them.

use crate::core::process::{errno_error, last_errno};
use crate::core::{array, integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A system call's result: the errno as `Errno::*` when it is -1.
fn check(ctx: &mut Ctx, rc: i64, func: &str) -> Result<i64> {
    if rc == -1 {
        let e = last_errno();
        return Err(errno_error(ctx, e, func));
    }
    Ok(rc)
}

fn id_of(ctx: &mut Ctx, v: Value) -> Result<u32> {
    Ok(integer::to_i64_arg(ctx, v)? as u32)
}

/// A user id, or the name of a user (looked up in the password database).
fn uid_of(ctx: &mut Ctx, v: Value) -> Result<u32> {
    let Some(name) = check_string(ctx, v)? else { return id_of(ctx, v) };
    let shown = string::to_rust_string_lossy(name);
    let Ok(c) = std::ffi::CString::new(string::bytes(name).to_vec()) else {
        return Err(ctx.arg_error("string contains null byte"));
    };
    // SAFETY: getpwnam reads a NUL-terminated name; the entry is copied out at once (the
    // VM's builtins run one at a time under the GL).
    let pw = unsafe { libc::getpwnam(c.as_ptr()) };
    if pw.is_null() {
        return Err(ctx.arg_error(&format!("can't find user for {shown}")));
    }
    // SAFETY: pw points at a valid passwd entry.
    Ok(unsafe { (*pw).pw_uid })
}

/// A group id, or the name of a group (looked up in the group database).
fn gid_of(ctx: &mut Ctx, v: Value) -> Result<u32> {
    let Some(name) = check_string(ctx, v)? else { return id_of(ctx, v) };
    let shown = string::to_rust_string_lossy(name);
    let Ok(c) = std::ffi::CString::new(string::bytes(name).to_vec()) else {
        return Err(ctx.arg_error("string contains null byte"));
    };
    // SAFETY: as in `uid_of`, with getgrnam.
    let gr = unsafe { libc::getgrnam(c.as_ptr()) };
    if gr.is_null() {
        return Err(ctx.arg_error(&format!("can't find group for {shown}")));
    }
    // SAFETY: gr points at a valid group entry.
    Ok(unsafe { (*gr).gr_gid })
}

macro_rules! id_getters {
    ($($fname:ident => $call:ident;)*) => {
        // SAFETY: the id getters have no preconditions.
        $(fn $fname(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
            Ok(Value::fixnum(unsafe { libc::$call() } as i64))
        })*
    };
}

id_getters! {
    p_uid => getuid;
    p_gid => getgid;
    p_euid => geteuid;
    p_egid => getegid;
    p_getpgrp => getpgrp;
}

/// `Process.uid = id` sets the real user id only (setresuid(id, -1, -1), as CRuby),
/// which a process may do to its effective id without privileges.
fn p_set_uid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let id = uid_of(ctx, args.pos[0])?;
    // SAFETY: setresuid has no memory preconditions.
    check(ctx, unsafe { libc::setresuid(id, u32::MAX, u32::MAX) } as i64, "setresuid")?;
    Ok(Value::fixnum(id as i64))
}

fn p_set_gid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let id = gid_of(ctx, args.pos[0])?;
    // SAFETY: setresgid has no memory preconditions.
    check(ctx, unsafe { libc::setresgid(id, u32::MAX, u32::MAX) } as i64, "setresgid")?;
    Ok(Value::fixnum(id as i64))
}

fn p_set_euid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let id = uid_of(ctx, args.pos[0])?;
    // SAFETY: seteuid has no memory preconditions.
    check(ctx, unsafe { libc::seteuid(id) } as i64, "seteuid")?;
    Ok(Value::fixnum(id as i64))
}

fn p_set_egid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let id = gid_of(ctx, args.pos[0])?;
    // SAFETY: setegid has no memory preconditions.
    check(ctx, unsafe { libc::setegid(id) } as i64, "setegid")?;
    Ok(Value::fixnum(id as i64))
}

fn p_groups(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: a zero-length query returns the count; the buffer then holds that many ids.
    let n = check(ctx, unsafe { libc::getgroups(0, std::ptr::null_mut()) } as i64, "getgroups")?;
    let mut groups = vec![0 as libc::gid_t; n as usize];
    // SAFETY: `groups` has room for n ids.
    let n = check(ctx, unsafe { libc::getgroups(n as i32, groups.as_mut_ptr()) } as i64, "getgroups")?;
    let items = groups[..n as usize].iter().map(|&g| Value::fixnum(g as i64)).collect();
    Ok(array::from_vec(ctx, items))
}

fn p_set_groups(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let list = array::to_ary_arg(ctx, args.pos[0])?;
    let mut ids = Vec::new();
    for v in array::to_vec(list) {
        ids.push(id_of(ctx, v)?);
    }
    // SAFETY: `ids` holds ids.len() group ids.
    check(ctx, unsafe { libc::setgroups(ids.len(), ids.as_ptr()) } as i64, "setgroups")?;
    p_groups(ctx, Value::NIL, args)
}

/// The most group ids `Process.groups=` takes (CRuby's cap).
const MAX_GROUPS: i64 = 65536;

/// `Process.maxgroups`: the system's NGROUPS_MAX, or what `maxgroups=` set (kept on the
/// Process module, per VM).
fn p_maxgroups(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let p = ctx.c().process;
    let id = ctx.intern("__maxgroups");
    let set = crate::core::object::ivar_get(ctx, p, id);
    if set.is_fixnum() {
        return Ok(set);
    }
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NGROUPS_MAX) } as i64;
    Ok(Value::fixnum(if n > 0 { n.min(MAX_GROUPS) } else { MAX_GROUPS }))
}

fn p_set_maxgroups(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_int_arg(ctx, args.pos[0])? as i64;
    if n <= 0 {
        return Err(ctx.arg_error(&format!("maxgroups {n} should be positive")));
    }
    let p = ctx.c().process;
    let id = ctx.intern("__maxgroups");
    crate::core::object::ivar_set_raw(ctx, p, id, Value::fixnum(n.min(MAX_GROUPS)));
    Ok(args.pos[0])
}

fn p_getpgid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pid = integer::to_int_arg(ctx, args.pos[0])?;
    // SAFETY: getpgid has no memory preconditions.
    Ok(Value::fixnum(check(ctx, unsafe { libc::getpgid(pid) } as i64, "getpgid")?))
}

fn p_setpgid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pid = integer::to_int_arg(ctx, args.pos[0])?;
    let pg = integer::to_int_arg(ctx, args.pos[1])?;
    // SAFETY: setpgid has no memory preconditions.
    check(ctx, unsafe { libc::setpgid(pid, pg) } as i64, "setpgid")?;
    Ok(Value::fixnum(0))
}

fn p_setpgrp(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: setpgid has no memory preconditions.
    check(ctx, unsafe { libc::setpgid(0, 0) } as i64, "setpgrp")?;
    Ok(Value::fixnum(0))
}

fn p_getsid(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pid = match args.pos.first() {
        Some(&v) if !v.is_nil() => integer::to_int_arg(ctx, v)?,
        _ => 0,
    };
    // SAFETY: getsid has no memory preconditions.
    Ok(Value::fixnum(check(ctx, unsafe { libc::getsid(pid) } as i64, "getsid")?))
}

fn p_setsid(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: setsid has no memory preconditions.
    Ok(Value::fixnum(check(ctx, unsafe { libc::setsid() } as i64, "setsid")?))
}

fn p_getpriority(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let which = integer::to_int_arg(ctx, args.pos[0])?;
    let who = integer::to_int_arg(ctx, args.pos[1])?;
    // getpriority may return -1 legitimately: errno tells.
    // SAFETY: errno is thread-local; getpriority has no memory preconditions.
    unsafe { *libc::__errno_location() = 0 };
    // SAFETY: as above.
    let n = unsafe { libc::getpriority(which as libc::__priority_which_t, who as libc::id_t) };
    if n == -1 && last_errno() != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, "getpriority"));
    }
    Ok(Value::fixnum(n as i64))
}

fn p_setpriority(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let which = integer::to_int_arg(ctx, args.pos[0])?;
    let who = integer::to_int_arg(ctx, args.pos[1])?;
    let prio = integer::to_int_arg(ctx, args.pos[2])?;
    // SAFETY: setpriority has no memory preconditions.
    check(ctx, unsafe { libc::setpriority(which as libc::__priority_which_t, who as libc::id_t, prio) } as i64, "setpriority")?;
    Ok(Value::fixnum(0))
}

// ---- resource limits ----

const RLIMITS: &[(&str, i32)] = &[
    ("AS", libc::RLIMIT_AS as i32),
    ("CORE", libc::RLIMIT_CORE as i32),
    ("CPU", libc::RLIMIT_CPU as i32),
    ("DATA", libc::RLIMIT_DATA as i32),
    ("FSIZE", libc::RLIMIT_FSIZE as i32),
    ("MEMLOCK", libc::RLIMIT_MEMLOCK as i32),
    ("MSGQUEUE", libc::RLIMIT_MSGQUEUE as i32),
    ("NICE", libc::RLIMIT_NICE as i32),
    ("NOFILE", libc::RLIMIT_NOFILE as i32),
    ("NPROC", libc::RLIMIT_NPROC as i32),
    ("RSS", libc::RLIMIT_RSS as i32),
    ("RTPRIO", libc::RLIMIT_RTPRIO as i32),
    ("RTTIME", libc::RLIMIT_RTTIME as i32),
    ("SIGPENDING", libc::RLIMIT_SIGPENDING as i32),
    ("STACK", libc::RLIMIT_STACK as i32),
];

/// `rb_check_string_type`: `v` itself if a String, else what its `to_str` gives; None
/// when it has none or it gives nil.
fn check_string(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if string::is_string(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() || v.as_symbol().is_some() {
        return Ok(None);
    }
    match crate::core::convert::check_funcall(ctx, v, crate::symbol::sym::TO_STR, &[])? {
        None => Ok(None),
        Some(r) if r.is_nil() => Ok(None),
        Some(r) if string::is_string(r) => Ok(Some(r)),
        Some(r) => {
            let cname = crate::core::object::class_name_of(ctx, v);
            let rname = crate::core::object::class_name_of(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} to String ({cname}#to_str gives {rname})")))
        }
    }
}

/// The name a Symbol, or something that converts to a String, gives.
fn limit_name(ctx: &mut Ctx, v: Value) -> Result<Option<String>> {
    if let Some(id) = v.as_symbol() {
        return Ok(Some(ctx.sym_str(id).to_string()));
    }
    Ok(check_string(ctx, v)?.map(string::to_rust_string_lossy))
}

/// A resource argument: an Integer, or a Symbol/String naming it (`:NOFILE`, "CORE").
pub fn rlimit_resource(ctx: &mut Ctx, v: Value) -> Result<i32> {
    let Some(name) = limit_name(ctx, v)? else {
        return integer::to_int_arg(ctx, v);
    };
    match RLIMITS.iter().find(|(n, _)| *n == name) {
        Some(&(_, r)) => Ok(r),
        None => Err(ctx.arg_error(&format!("invalid resource name: {name}"))),
    }
}

/// A limit value: an Integer (as C's `rlim_t`, so RLIM_INFINITY's 2**64-1 fits), or
/// `:INFINITY`/`:SAVED_MAX`/`:SAVED_CUR` (and their Strings).
fn rlimit_value(ctx: &mut Ctx, v: Value) -> Result<u64> {
    match limit_name(ctx, v)?.as_deref() {
        None => {
            let i = integer::to_integer_arg(ctx, v)?;
            if let Some(n) = i.as_fixnum() {
                return Ok(n as u64);
            }
            use num_traits::ToPrimitive as _;
            let b = crate::core::bignum::get(i);
            match b.to_u64().or_else(|| b.to_i64().map(|n| n as u64)) {
                Some(n) => Ok(n),
                None => Err(ctx.range_error("bignum out of range of unsigned long long")),
            }
        }
        Some("INFINITY" | "SAVED_MAX" | "SAVED_CUR") => Ok(libc::RLIM_INFINITY),
        Some(other) => Err(ctx.arg_error(&format!("invalid resource value: {other}"))),
    }
}

fn limit_value(ctx: &mut Ctx, n: u64) -> Value {
    crate::core::bignum::from_i128(ctx, n as i128)
}

fn p_getrlimit(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let r = rlimit_resource(ctx, args.pos[0])?;
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid out-pointer.
    check(ctx, unsafe { libc::getrlimit(r as libc::__rlimit_resource_t, &mut lim) } as i64, "getrlimit")?;
    let out = array::new(ctx);
    let cur = limit_value(ctx, lim.rlim_cur);
    array::push(ctx, out, cur);
    let max = limit_value(ctx, lim.rlim_max);
    array::push(ctx, out, max);
    Ok(out)
}

fn p_setrlimit(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let r = rlimit_resource(ctx, args.pos[0])?;
    let cur = rlimit_value(ctx, args.pos[1])?;
    let max = match args.pos.get(2) {
        Some(&m) => rlimit_value(ctx, m)?,
        None => cur,
    };
    let lim = libc::rlimit { rlim_cur: cur, rlim_max: max };
    // SAFETY: `lim` is a valid rlimit.
    check(ctx, unsafe { libc::setrlimit(r as libc::__rlimit_resource_t, &lim) } as i64, "setrlimit")?;
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let p = ctx.c().process;
    crate::methods!(ctx, p, [
        ("uid", p_uid, [0], Safe, ModuleFunction),
        ("gid", p_gid, [0], Safe, ModuleFunction),
        ("euid", p_euid, [0], Safe, ModuleFunction),
        ("egid", p_egid, [0], Safe, ModuleFunction),
        ("uid=", p_set_uid, [1], Unsafe, ModuleFunction),
        ("gid=", p_set_gid, [1], Unsafe, ModuleFunction),
        ("euid=", p_set_euid, [1], Unsafe, ModuleFunction),
        ("egid=", p_set_egid, [1], Unsafe, ModuleFunction),
        ("groups", p_groups, [0], Safe, ModuleFunction),
        ("groups=", p_set_groups, [1], Unsafe, ModuleFunction),
        ("maxgroups=", p_set_maxgroups, [1], Unsafe, ModuleFunction),
        ("maxgroups", p_maxgroups, [0], Safe, ModuleFunction),
        ("getpgrp", p_getpgrp, [0], Safe, ModuleFunction),
        ("getpgid", p_getpgid, [1], Safe, ModuleFunction),
        ("setpgid", p_setpgid, [2], Unsafe, ModuleFunction),
        ("setpgrp", p_setpgrp, [0], Unsafe, ModuleFunction),
        ("getsid", p_getsid, [0..=1], Safe, ModuleFunction),
        ("setsid", p_setsid, [0], Unsafe, ModuleFunction),
        ("getpriority", p_getpriority, [2], Safe, ModuleFunction),
        ("setpriority", p_setpriority, [3], Unsafe, ModuleFunction),
        ("getrlimit", p_getrlimit, [1], Safe, ModuleFunction),
        ("setrlimit", p_setrlimit, [2..=3], Unsafe, ModuleFunction),
    ]);
    let mut consts: Vec<(String, Value)> = RLIMITS.iter().map(|&(n, r)| (format!("RLIMIT_{n}"), Value::fixnum(r as i64))).collect();
    let inf = limit_value(ctx, libc::RLIM_INFINITY);
    consts.push(("RLIM_INFINITY".into(), inf));
    consts.push(("RLIM_SAVED_MAX".into(), inf));
    consts.push(("RLIM_SAVED_CUR".into(), inf));
    for (name, v) in [("PRIO_PROCESS", libc::PRIO_PROCESS), ("PRIO_PGRP", libc::PRIO_PGRP), ("PRIO_USER", libc::PRIO_USER)] {
        consts.push((name.into(), Value::fixnum(v as i64)));
    }
    for (name, v) in consts {
        let id = ctx.intern(&name);
        crate::core::module::body(p).const_set(id, v);
    }
    // Process::UID, GID and Sys: the same operations under CRuby's other names.
    let uid = crate::core::module_methods::define_module_under(ctx, p, "UID");
    crate::methods!(ctx, uid, [
        ("rid", p_uid, [0], Safe, ModuleFunction),
        ("eid", p_euid, [0], Safe, ModuleFunction),
        ("change_privilege", p_set_uid, [1], Unsafe, ModuleFunction),
        ("grant_privilege", p_set_euid, [1], Unsafe, ModuleFunction),
        ("eid=", p_set_euid, [1], Unsafe, ModuleFunction),
    ]);
    let gid = crate::core::module_methods::define_module_under(ctx, p, "GID");
    crate::methods!(ctx, gid, [
        ("rid", p_gid, [0], Safe, ModuleFunction),
        ("eid", p_egid, [0], Safe, ModuleFunction),
        ("change_privilege", p_set_gid, [1], Unsafe, ModuleFunction),
        ("grant_privilege", p_set_egid, [1], Unsafe, ModuleFunction),
        ("eid=", p_set_egid, [1], Unsafe, ModuleFunction),
    ]);
    let sys = crate::core::module_methods::define_module_under(ctx, p, "Sys");
    crate::methods!(ctx, sys, [
        ("getuid", p_uid, [0], Safe, ModuleFunction),
        ("getgid", p_gid, [0], Safe, ModuleFunction),
        ("geteuid", p_euid, [0], Safe, ModuleFunction),
        ("getegid", p_egid, [0], Safe, ModuleFunction),
    ]);
}
