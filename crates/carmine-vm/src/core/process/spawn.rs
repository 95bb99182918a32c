//! Starting programs: `Process.spawn`/`Kernel#spawn`, `exec` and `system`, with CRuby's
//! command forms (a shell command line, a program and arguments, `[program, argv0]`), an
//! environment Hash, and the options (redirections, `chdir:`, `umask:`, `pgroup:`,
//! `unsetenv_others:`, `close_others:`, `rlimit_*:`).
//!
//! Invariants:
//! - Everything the child needs (paths, argv, environment, the redirection plan) is made
//!   before fork(2); between fork and exec the child makes only system calls, because other
//!   threads of the parent may hold locks the child would inherit.
//! - A child that cannot exec writes its errno to a close-on-exec pipe and exits 127; the
//!   parent reads the pipe and raises `Errno::*` with the command in the message, as CRuby.

use std::ffi::CString;

use crate::core::process::errno_error;
use crate::core::{array, hash, integer, io, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// One redirection in the child: make `child_fd` a copy of `source`.
enum Source {
    Fd(i32),
    /// `[:child, fd]`: the child's descriptor after the other redirections.
    Child(i32),
    /// Open a file (path, flags, perm) in the child.
    Path(CString, i32, u32),
    Close,
}

struct Plan {
    /// The program to execute (already searched in PATH) and its argv.
    prog: CString,
    argv: Vec<CString>,
    env: Option<Vec<CString>>,
    redirects: Vec<(i32, Source)>,
    chdir: Option<CString>,
    umask: Option<libc::mode_t>,
    pgroup: Option<libc::pid_t>,
    rlimits: Vec<(i32, libc::rlimit)>,
    close_others: bool,
    /// What error messages name ("ls", or the whole command line).
    shown: String,
}

const SHELL_META: &[u8] = b"*?{}[]<>()~&|\\$;'`\"\n#=%";

fn cstring(ctx: &mut Ctx, b: &[u8]) -> Result<CString> {
    CString::new(b.to_vec()).map_err(|_| ctx.arg_error("string contains null byte"))
}

fn str_bytes(ctx: &mut Ctx, v: Value) -> Result<Vec<u8>> {
    let s = string::to_str_arg(ctx, v)?;
    let b = string::bytes(s);
    if b.contains(&0) {
        return Err(ctx.arg_error("string contains null byte"));
    }
    Ok(b.to_vec())
}

/// `rb_check_convert_type`: `v` converted with `conv` (to_hash, to_ary, to_io) when it
/// answers it, checked with `is`; None when it does not (or gives nil).
fn check_convert(ctx: &mut Ctx, v: Value, conv: crate::symbol::SymId, target: &str, is: fn(Value) -> bool) -> Result<Option<Value>> {
    if is(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() || string::is_string(v) {
        return Ok(None);
    }
    match crate::core::convert::check_funcall(ctx, v, conv, &[])? {
        None => Ok(None),
        Some(r) if r.is_nil() => Ok(None),
        Some(r) if is(r) => Ok(Some(r)),
        Some(r) => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            let m = ctx.sym_str(conv);
            Err(ctx.type_error(&format!("can't convert {cname} to {target} ({cname}#{m} gives {rname})")))
        }
    }
}

fn is_io(v: Value) -> bool {
    io::io_ref(v).is_some()
}

/// The environment a child starts from: this VM's `ENV` (each VM keeps its own), or the
/// process's when `ENV` is not a Hash.
pub(crate) fn base_environment(ctx: &mut Ctx) -> Vec<(Vec<u8>, Vec<u8>)> {
    let id = ctx.intern("ENV");
    let env = crate::core::module::body(ctx.c().object).const_get(id).map_or(Value::NIL, |e| e.value);
    if !hash::is_hash(env) {
        return std::env::vars_os().map(|(k, v)| (k.into_encoded_bytes(), v.into_encoded_bytes())).collect();
    }
    hash::pairs(env).into_iter().filter(|(k, v)| string::is_string(*k) && string::is_string(*v)).map(|(k, v)| (string::bytes(k).to_vec(), string::bytes(v).to_vec())).collect()
}

/// Searches PATH for a program name without a slash (None: not found).
fn search_path(name: &[u8], env_path: Option<&[u8]>) -> Option<Vec<u8>> {
    if name.contains(&b'/') {
        return Some(name.to_vec());
    }
    let path = env_path.map(|p| p.to_vec()).or_else(|| std::env::var_os("PATH").map(|p| p.into_encoded_bytes())).unwrap_or_else(|| b"/usr/local/bin:/usr/bin:/bin".to_vec());
    for dir in path.split(|&b| b == b':') {
        let dir = if dir.is_empty() { b".".as_slice() } else { dir };
        let mut full = dir.to_vec();
        full.push(b'/');
        full.extend_from_slice(name);
        if let Ok(c) = CString::new(full.clone()) {
            // SAFETY: c is NUL-terminated.
            if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
                use std::os::unix::ffi::OsStrExt;
                let is_dir = std::fs::metadata(std::ffi::OsStr::from_bytes(&full)).is_ok_and(|m| m.is_dir());
                if !is_dir {
                    return Some(full);
                }
            }
        }
    }
    None
}

/// A redirection target key: `:in`/`:out`/`:err`, an Integer, or an IO.
fn fd_key(ctx: &mut Ctx, k: Value) -> Result<Option<i32>> {
    if let Some(id) = k.as_symbol() {
        return Ok(match ctx.sym_str(id).as_str() {
            "in" => Some(0),
            "out" => Some(1),
            "err" => Some(2),
            _ => None,
        });
    }
    if let Some(n) = k.as_fixnum() {
        return Ok(Some(n as i32));
    }
    if let Some(o) = io::io_ref(k) {
        return Ok(Some(o.fd));
    }
    Ok(None)
}

/// A redirection source for child descriptor `child`.
fn source(ctx: &mut Ctx, child: i32, v: Value) -> Result<Source> {
    if let Some(id) = v.as_symbol() {
        return Ok(match ctx.sym_str(id).as_str() {
            "close" => Source::Close,
            "in" => Source::Fd(0),
            "out" => Source::Fd(1),
            "err" => Source::Fd(2),
            other => return Err(ctx.arg_error(&format!("wrong exec redirect symbol: {other}"))),
        });
    }
    if let Some(n) = v.as_fixnum() {
        return Ok(Source::Fd(n as i32));
    }
    let v = if array::is_array(v) { v } else { check_convert(ctx, v, crate::symbol::sym::TO_IO, "IO", is_io)?.unwrap_or(v) };
    if let Some(o) = io::io_ref(v) {
        io::flush_value(ctx, v)?;
        return Ok(Source::Fd(o.fd));
    }
    let default_flags = if child == 0 { libc::O_RDONLY } else { libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC };
    if array::is_array(v) {
        let items = array::to_vec(v);
        if items.first().and_then(|f| f.as_symbol()).is_some_and(|id| ctx.sym_str(id) == "child") {
            let fd = match items.get(1) {
                Some(&t) => fd_key(ctx, t)?.unwrap_or(-1),
                None => -1,
            };
            return Ok(Source::Child(fd));
        }
        let path = match items.first() {
            Some(&p) => crate::core::file::stat::cpath_arg(ctx, p)?,
            None => return Err(ctx.arg_error("wrong exec redirect action")),
        };
        let flags = match items.get(1) {
            Some(&m) => crate::core::io::open_mode::mode_arg(ctx, m)?.flags,
            None => libc::O_RDONLY,
        };
        let perm = match items.get(2) {
            Some(&p) => integer::to_int_arg(ctx, p)? as u32,
            None => 0o644,
        };
        return Ok(Source::Path(path, flags, perm));
    }
    let path = crate::core::file::stat::cpath_arg(ctx, v)?;
    Ok(Source::Path(path, default_flags, 0o644))
}

/// A boolean spawn option: true, false or nil, else CRuby's ArgumentError.
fn bool_option(ctx: &mut Ctx, name: &str, v: Value) -> Result<bool> {
    if v == Value::TRUE || v == Value::FALSE || v.is_nil() {
        return Ok(v.truthy());
    }
    let shown = object::inspect_string(ctx, v)?;
    Err(ctx.arg_error(&format!("expected true or false as {name}: {shown}")))
}

fn parse_options(ctx: &mut Ctx, opts: Value, plan: &mut Plan, unsetenv: &mut bool) -> Result<()> {
    for (k, v) in hash::pairs(opts) {
        if let Some(fd) = fd_key(ctx, k)? {
            let src = source(ctx, fd, v)?;
            plan.redirects.push((fd, src));
            continue;
        }
        if array::is_array(k) {
            let src = source(ctx, 1, v)?;
            // A file is opened once, for the first descriptor; the others share it.
            let mut first: Option<i32> = None;
            for t in array::to_vec(k) {
                if let Some(fd) = fd_key(ctx, t)? {
                    let s = match (&src, first) {
                        (Source::Path(..), Some(f)) => Source::Child(f),
                        (Source::Path(p, fl, m), None) => Source::Path(p.clone(), *fl, *m),
                        (Source::Fd(n), _) => Source::Fd(*n),
                        (Source::Child(n), _) => Source::Child(*n),
                        (Source::Close, _) => Source::Close,
                    };
                    first.get_or_insert(fd);
                    plan.redirects.push((fd, s));
                }
            }
            continue;
        }
        let Some(id) = k.as_symbol() else {
            let shown = object::inspect_string(ctx, k)?;
            return Err(ctx.arg_error(&format!("wrong exec option: {shown}")));
        };
        let name = ctx.sym_str(id);
        match name.as_str() {
            "chdir" => plan.chdir = Some(crate::core::file::stat::cpath_arg(ctx, v)?),
            "umask" => plan.umask = Some(integer::to_int_arg(ctx, v)? as libc::mode_t),
            "pgroup" => {
                plan.pgroup = if v == Value::TRUE {
                    Some(0)
                } else if v.is_nil() || v == Value::FALSE {
                    None
                } else {
                    let n = integer::to_int_arg(ctx, v)?;
                    if n < 0 {
                        return Err(ctx.arg_error(&format!("negative process group ID : {n}")));
                    }
                    Some(n)
                }
            }
            "unsetenv_others" => *unsetenv = bool_option(ctx, "unsetenv_others", v)?,
            "close_others" => plan.close_others = bool_option(ctx, "close_others", v)?,
            "new_pgroup" => return Err(ctx.arg_error("new_pgroup option specified for non-Windows")),
            "exception" => {}
            r if r.starts_with("rlimit_") => {
                let res_name = string::new_utf8(ctx, &r["rlimit_".len()..].to_uppercase());
                let res = crate::core::process::ids::rlimit_resource(ctx, res_name)?;
                let (cur, max) = if array::is_array(v) {
                    let items = array::to_vec(v);
                    let cur = integer::to_i64_arg(ctx, items.first().copied().unwrap_or(Value::fixnum(0)))? as u64;
                    let max = match items.get(1) {
                        Some(&m) => integer::to_i64_arg(ctx, m)? as u64,
                        None => cur,
                    };
                    (cur, max)
                } else {
                    let n = integer::to_i64_arg(ctx, v)? as u64;
                    (n, n)
                };
                plan.rlimits.push((res, libc::rlimit { rlim_cur: cur, rlim_max: max }));
            }
            _ => {
                let shown = object::inspect_string(ctx, k)?;
                return Err(ctx.arg_error(&format!("wrong exec option symbol: {}", shown.trim_start_matches(':'))));
            }
        }
    }
    Ok(())
}

/// Builds the child's plan from spawn/exec/system arguments.
fn plan_of(ctx: &mut Ctx, args: &Args) -> Result<Plan> {
    let mut pos: Vec<Value> = args.pos.to_vec();
    let mut opts = args.kw;
    if opts.is_none() && pos.len() > 1 {
        let last = *pos.last().expect("two or more");
        if let Some(h) = check_convert(ctx, last, crate::symbol::sym::TO_HASH, "Hash", hash::is_hash)? {
            pos.pop();
            opts = Some(h);
        }
    }
    let mut env_pairs: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
    if let Some(&first) = pos.first() {
        if let Some(first) = check_convert(ctx, first, crate::symbol::sym::TO_HASH, "Hash", hash::is_hash)? {
            for (k, v) in hash::pairs(first) {
                let name = str_bytes(ctx, k)?;
                if name.contains(&b'=') {
                    return Err(ctx.arg_error(&format!("environment name contains a equal : {}", String::from_utf8_lossy(&name))));
                }
                let value = if v.is_nil() { None } else { Some(str_bytes(ctx, v)?) };
                env_pairs.push((name, value));
            }
            pos.remove(0);
        }
    }
    if pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    let mut plan = Plan { prog: CString::default(), argv: Vec::new(), env: None, redirects: Vec::new(), chdir: None, umask: None, pgroup: None, rlimits: Vec::new(), close_others: false, shown: String::new() };
    let mut unsetenv = false;
    if let Some(o) = opts {
        parse_options(ctx, o, &mut plan, &mut unsetenv)?;
    }
    // The environment the child gets.
    let base_path;
    {
        let mut vars: Vec<(Vec<u8>, Vec<u8>)> = if unsetenv { Vec::new() } else { base_environment(ctx) };
        base_path = vars.iter().find(|(k, _)| k == b"PATH").map(|(_, v)| v.clone());
        for (k, v) in &env_pairs {
            vars.retain(|(n, _)| n != k);
            if let Some(v) = v {
                vars.push((k.clone(), v.clone()));
            }
        }
        let mut list = Vec::new();
        for (k, v) in vars {
            let mut e = k;
            e.push(b'=');
            e.extend_from_slice(&v);
            list.push(cstring(ctx, &e)?);
        }
        plan.env = Some(list);
    }
    let env_path = env_pairs.iter().find(|(k, _)| k == b"PATH").and_then(|(_, v)| v.clone()).or(base_path);
    // The program: [prog, argv0] or a name, then arguments; one String alone is a command
    // line, run by the shell when it needs one.
    let command = check_convert(ctx, pos[0], crate::symbol::sym::TO_ARY, "Array", array::is_array)?;
    let (prog, argv0) = if let Some(command) = command {
        let pair = array::to_vec(command);
        if pair.len() != 2 {
            return Err(ctx.arg_error("wrong first argument"));
        }
        (str_bytes(ctx, pair[0])?, Some(str_bytes(ctx, pair[1])?))
    } else {
        (str_bytes(ctx, pos[0])?, None)
    };
    let mut argv: Vec<Vec<u8>> = Vec::new();
    let prog = if pos.len() == 1 && argv0.is_none() {
        plan.shown = String::from_utf8_lossy(&prog).into_owned();
        let needs_shell = prog.iter().any(|b| SHELL_META.contains(b)) || prog.split(|b| b.is_ascii_whitespace()).next().is_some_and(|w| matches!(w, b"exit" | b"exec" | b"cd" | b"export" | b"set" | b"." | b"source" | b"ulimit" | b"umask" | b"wait" | b"alias" | b"unset"));
        if needs_shell {
            argv = vec![b"sh".to_vec(), b"-c".to_vec(), prog.clone()];
            b"/bin/sh".to_vec()
        } else {
            argv = prog.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()).map(|w| w.to_vec()).collect();
            if argv.is_empty() {
                crate::core::process::set_last_status(ctx, -1, 127 << 8);
                let empty = string::new_utf8(ctx, "");
                return Err(crate::core::process::errno_new(ctx, libc::ENOENT, empty, Value::NIL));
            }
            argv[0].clone()
        }
    } else {
        plan.shown = String::from_utf8_lossy(&prog).into_owned();
        argv.push(argv0.unwrap_or_else(|| prog.clone()));
        for &a in &pos[1..] {
            argv.push(str_bytes(ctx, a)?);
        }
        prog
    };
    let resolved = match search_path(&prog, env_path.as_deref()) {
        Some(p) => p,
        None => {
            // As if a child had failed to exec: `$?` says 127.
            crate::core::process::set_last_status(ctx, -1, 127 << 8);
            return Err(errno_error(ctx, libc::ENOENT, &plan.shown));
        }
    };
    plan.prog = cstring(ctx, &resolved)?;
    for a in argv {
        let c = cstring(ctx, &a)?;
        plan.argv.push(c);
    }
    Ok(plan)
}

/// In the child: applies the plan and execs; on failure writes errno to `err_fd` and exits.
/// Only system calls here (see the module invariants).
unsafe fn child_exec(plan: &Plan, argv: &[*const libc::c_char], envp: Option<&[*const libc::c_char]>, sh_argv: &[*const libc::c_char], err_fd: i32) -> ! {
    // errno, then the step that failed (1 = chdir), for the parent's message.
    let fail_at = |e: i32, step: u8| -> ! {
        let b = e.to_ne_bytes();
        let msg = [b[0], b[1], b[2], b[3], step];
        libc::write(err_fd, msg.as_ptr() as *const libc::c_void, 5);
        libc::_exit(127)
    };
    let fail = |e: i32| -> ! { fail_at(e, 0) };
    // Signals the parent caught are default again in the program.
    for s in 1..32 {
        if s != libc::SIGKILL && s != libc::SIGSTOP {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(s, std::ptr::null(), &mut old);
            if old.sa_sigaction != libc::SIG_IGN && old.sa_sigaction != libc::SIG_DFL {
                libc::signal(s, libc::SIG_DFL);
            }
        }
    }
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    if let Some(pg) = plan.pgroup {
        if libc::setpgid(0, pg) != 0 {
            fail(*libc::__errno_location());
        }
    }
    for (res, lim) in &plan.rlimits {
        if libc::setrlimit(*res as libc::__rlimit_resource_t, lim) != 0 {
            fail(*libc::__errno_location());
        }
    }
    if let Some(m) = plan.umask {
        libc::umask(m);
    }
    // Sources are first copied above all child descriptors, so that a plan like
    // {out: :err, err: :out} swaps rather than overwrites.
    let mut staged: Vec<(i32, i32)> = Vec::new();
    for (child, src) in &plan.redirects {
        match src {
            Source::Fd(fd) => {
                let copy = libc::fcntl(*fd, libc::F_DUPFD_CLOEXEC, 256);
                if copy < 0 {
                    fail(*libc::__errno_location());
                }
                staged.push((*child, copy));
            }
            Source::Path(p, flags, perm) => {
                let fd = libc::open(p.as_ptr(), *flags | libc::O_CLOEXEC, *perm);
                if fd < 0 {
                    fail(*libc::__errno_location());
                }
                staged.push((*child, fd));
            }
            Source::Close => staged.push((*child, -1)),
            Source::Child(_) => {}
        }
    }
    for (child, fd) in staged {
        if fd < 0 {
            libc::close(child);
        } else if libc::dup2(fd, child) < 0 {
            fail(*libc::__errno_location());
        }
    }
    for (child, src) in &plan.redirects {
        if let Source::Child(from) = src {
            if libc::dup2(*from, *child) < 0 {
                fail(*libc::__errno_location());
            }
        }
    }
    if let Some(dir) = &plan.chdir {
        if libc::chdir(dir.as_ptr()) != 0 {
            fail_at(*libc::__errno_location(), 1);
        }
    }
    if plan.close_others {
        for fd in 3..1024 {
            if fd != err_fd && !plan.redirects.iter().any(|(c, _)| *c == fd) {
                libc::close(fd);
            }
        }
    }
    // Descriptors 0-2 and redirect targets must survive exec.
    for fd in 0..3 {
        let fl = libc::fcntl(fd, libc::F_GETFD);
        if fl >= 0 && fl & libc::FD_CLOEXEC != 0 {
            libc::fcntl(fd, libc::F_SETFD, fl & !libc::FD_CLOEXEC);
        }
    }
    for (child, _) in &plan.redirects {
        let fl = libc::fcntl(*child, libc::F_GETFD);
        if fl >= 0 {
            libc::fcntl(*child, libc::F_SETFD, fl & !libc::FD_CLOEXEC);
        }
    }
    exec_program(plan, argv, envp, sh_argv);
    fail(*libc::__errno_location())
}

/// execve(2) of the plan's program; a file the kernel cannot execute (a script without
/// `#!`) runs with /bin/sh instead, as execvp(3) and CRuby do. Returns only on failure.
unsafe fn exec_program(plan: &Plan, argv: &[*const libc::c_char], envp: Option<&[*const libc::c_char]>, sh_argv: &[*const libc::c_char]) {
    match envp {
        Some(e) => libc::execve(plan.prog.as_ptr(), argv.as_ptr(), e.as_ptr()),
        None => libc::execv(plan.prog.as_ptr(), argv.as_ptr()),
    };
    if *libc::__errno_location() == libc::ENOEXEC {
        match envp {
            Some(e) => libc::execve(c"/bin/sh".as_ptr(), sh_argv.as_ptr(), e.as_ptr()),
            None => libc::execv(c"/bin/sh".as_ptr(), sh_argv.as_ptr()),
        };
        *libc::__errno_location() = libc::ENOEXEC;
    }
}

/// The argv of running the plan's program as a shell script: sh, the program, its
/// arguments (NULL-terminated).
fn sh_argv(plan: &Plan) -> Vec<*const libc::c_char> {
    let mut v: Vec<*const libc::c_char> = vec![c"sh".as_ptr(), plan.prog.as_ptr()];
    v.extend(plan.argv.iter().skip(1).map(|a| a.as_ptr()));
    v.push(std::ptr::null());
    v
}

/// Forks and execs a plan; the child's pid, or the exec failure raised as `Errno::*`.
fn start(ctx: &mut Ctx, plan: &Plan) -> Result<libc::pid_t> {
    crate::core::io::flush_stdout(ctx);
    let argv: Vec<*const libc::c_char> = plan.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let envp: Option<Vec<*const libc::c_char>> = plan.env.as_ref().map(|e| e.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect());
    let sh = sh_argv(plan);
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        let e = crate::core::process::last_errno();
        return Err(errno_error(ctx, e, "pipe"));
    }
    // SAFETY: the child runs only `child_exec`, which makes system calls and never returns.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: in the child; see above.
        unsafe {
            libc::close(fds[0]);
            child_exec(plan, &argv, envp.as_deref(), &sh, fds[1]);
        }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    if pid < 0 {
        // SAFETY: closing the read end.
        unsafe { libc::close(fds[0]) };
        let e = crate::core::process::last_errno();
        return Err(errno_error(ctx, e, "fork(2)"));
    }
    let mut buf = [0u8; 5];
    let n = crate::thread::sched::without_gl(ctx, || loop {
        // SAFETY: buf is valid for 5 bytes.
        let n = unsafe { libc::read(fds[0], buf.as_mut_ptr() as *mut libc::c_void, 5) };
        if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        break n;
    });
    // SAFETY: closing the read end.
    unsafe { libc::close(fds[0]) };
    if n == 5 {
        let mut status = 0;
        // SAFETY: reaping the child that failed to exec.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        crate::core::process::set_last_status(ctx, pid as i64, status);
        let e = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
        let shown = match (buf[4], &plan.chdir) {
            (1, Some(dir)) => String::from_utf8_lossy(dir.as_bytes()).into_owned(),
            _ => plan.shown.clone(),
        };
        return Err(errno_error(ctx, e, &shown));
    }
    Ok(pid)
}

/// `Process.spawn` / `Kernel#spawn`: the child's pid.
pub fn p_spawn(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let plan = plan_of(ctx, args)?;
    let pid = start(ctx, &plan)?;
    Ok(Value::fixnum(pid as i64))
}

/// `` `command` ``: the command's standard output, in the default external encoding;
/// run like `system` (through the shell only when the line needs one), so a missing
/// program raises `Errno::ENOENT`. `$?` is set.
pub fn k_backtick(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let cmd = string::to_str_arg(ctx, args.pos[0])?;
    if crate::fiber::scheduler::active(ctx).is_some() {
        // In a non-blocking fiber the output is read and the child waited for through the
        // fiber scheduler's hooks, as `IO.popen(cmd).read` and `close` do.
        let io_class = ctx.c().io;
        let io = ctx.call_str(io_class, "popen", &[cmd])?;
        let out = ctx.call_str(io, "read", &[]);
        let closed = ctx.call_str(io, "close", &[]);
        let out = out?;
        closed?;
        return Ok(out);
    }
    // The command converted once (`to_str` is called one time, as in CRuby).
    let mut plan = plan_of(ctx, &Args::new(&[cmd]))?;
    let mut fds = [0; 2];
    // SAFETY: fds has room for two descriptors.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        let e = crate::core::process::last_errno();
        return Err(errno_error(ctx, e, "pipe"));
    }
    plan.redirects.push((1, Source::Fd(fds[1])));
    let started = start(ctx, &plan);
    // SAFETY: the parent's copy of the write end; the child has its own.
    unsafe { libc::close(fds[1]) };
    let pid = match started {
        Ok(pid) => pid,
        Err(e) => {
            // SAFETY: closing the read end.
            unsafe { libc::close(fds[0]) };
            return Err(e);
        }
    };
    let mut out = Vec::new();
    let read = read_all_from(ctx, fds[0], &mut out);
    // SAFETY: closing the read end.
    unsafe { libc::close(fds[0]) };
    read?;
    crate::core::process::wait_for(ctx, pid)?;
    let enc = crate::core::encoding::default_external(ctx);
    Ok(string::new_with_enc(ctx, out, enc))
}

/// Everything until end of file from a pipe, waiting outside the GL.
fn read_all_from(ctx: &mut Ctx, fd: i32, out: &mut Vec<u8>) -> Result<()> {
    let mut buf = [0u8; 8192];
    loop {
        crate::thread::sched::wait_readable(ctx, fd)?;
        // SAFETY: buf is a valid writable buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
        match n {
            0 => return Ok(()),
            n if n > 0 => out.extend_from_slice(&buf[..n as usize]),
            _ => {
                let e = crate::core::process::last_errno();
                if e != libc::EINTR && e != libc::EAGAIN {
                    return Err(errno_error(ctx, e, "read"));
                }
            }
        }
    }
}

/// `Kernel#system`: true/false by the exit status, nil when the command could not run
/// (or raises with `exception: true`); `$?` is set.
pub fn k_system(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = match args.kw {
        Some(k) => {
            let key = Value::symbol(ctx.intern("exception"));
            match hash::get(k, key) {
                Some(v) => bool_option(ctx, "exception", v)?,
                None => false,
            }
        }
        None => false,
    };
    let started = plan_of(ctx, args).and_then(|plan| start(ctx, &plan).map(|pid| (pid, plan.shown)));
    let (pid, shown) = match started {
        Ok(x) => x,
        Err(e) if raise => return Err(e),
        Err(crate::error::Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().system_call_error) => {
            crate::core::process::set_last_status(ctx, -1, 127 << 8);
            return Ok(Value::NIL);
        }
        Err(e) => return Err(e),
    };
    let st = crate::core::process::wait_for(ctx, pid)?;
    let status = crate::object::data_ref::<crate::core::process::StatusObj>(st).map_or(0, |s| s.status);
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    if !ok && raise {
        let msg = if libc::WIFEXITED(status) { format!("Command failed with exit {}: {shown}", libc::WEXITSTATUS(status)) } else { format!("Command failed with signal {}: {shown}", libc::WTERMSIG(status)) };
        return Err(ctx.raise(ctx.c().runtime_error, &msg));
    }
    Ok(Value::bool(ok))
}

/// `Kernel#exec` / `Process.exec`: replaces this process; returns only by raising.
pub fn k_exec(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let plan = plan_of(ctx, args)?;
    crate::core::io::flush_stdout(ctx);
    let argv: Vec<*const libc::c_char> = plan.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let envp: Option<Vec<*const libc::c_char>> = plan.env.as_ref().map(|e| e.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect());
    // `fd => fd` keeps a descriptor open across exec; as in CRuby that is done in this
    // process before anything can fail.
    for (child, src) in &plan.redirects {
        if matches!(src, Source::Fd(fd) if fd == child) {
            // SAFETY: F_GETFD/F_SETFD on a descriptor number; a bad one just fails.
            unsafe {
                let fl = libc::fcntl(*child, libc::F_GETFD);
                if fl >= 0 {
                    libc::fcntl(*child, libc::F_SETFD, fl & !libc::FD_CLOEXEC);
                }
            }
        }
    }
    // `child_exec` never returns (on failure it exits 127), so what can be checked here
    // is checked first and raised as CRuby does.
    if let Some(dir) = &plan.chdir {
        // SAFETY: dir is NUL-terminated.
        if unsafe { libc::access(dir.as_ptr(), libc::X_OK) } != 0 {
            let e = crate::core::process::last_errno();
            return Err(errno_error(ctx, e, &String::from_utf8_lossy(dir.as_bytes())));
        }
    }
    // SAFETY: prog is NUL-terminated.
    if unsafe { libc::access(plan.prog.as_ptr(), libc::X_OK) } != 0 {
        let e = crate::core::process::last_errno();
        return Err(errno_error(ctx, e, &plan.shown));
    }
    use std::os::unix::ffi::OsStrExt;
    if std::fs::metadata(std::ffi::OsStr::from_bytes(plan.prog.as_bytes())).is_ok_and(|m| m.is_dir()) {
        return Err(errno_error(ctx, libc::EACCES, &plan.shown));
    }
    let simple = plan.redirects.is_empty() && plan.chdir.is_none() && plan.umask.is_none() && plan.pgroup.is_none() && plan.rlimits.is_empty() && !plan.close_others;
    let sh = sh_argv(&plan);
    if simple {
        // SAFETY: argv, envp and sh are NULL-terminated arrays of C strings that outlive
        // the call.
        unsafe { exec_program(&plan, &argv, envp.as_deref(), &sh) };
        let e = crate::core::process::last_errno();
        return Err(errno_error(ctx, e, &plan.shown));
    }
    let mut efd = [0; 2];
    // SAFETY: efd has room for two descriptors.
    unsafe { libc::pipe2(efd.as_mut_ptr(), libc::O_CLOEXEC) };
    // SAFETY: replaces the process image (or exits 127 after reporting the errno).
    unsafe { child_exec(&plan, &argv, envp.as_deref(), &sh, efd[1]) }
}
