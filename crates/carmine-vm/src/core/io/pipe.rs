//! IO.popen and IO.pipe: IO objects connected to a child process or to each other.
//!
//! Invariants:
//! - A popen IO owns its descriptor like any IO and records the child's pid
//!   (`IoObj::child`); closing it waits for the child and sets `$?`.
//! - For a read-write popen ("r+") the descriptor is one end of a socketpair whose other
//!   end is the child's stdin and stdout, so `close_write` can half-close it.

use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};
use std::os::unix::process::CommandExt;

use crate::core::{array, hash, io, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// What to run: through `/bin/sh -c` (a String command) or directly (an Array).
enum Program {
    Shell(std::ffi::OsString),
    Exec(Vec<std::ffi::OsString>),
}

/// A command and the options given with it (environment, `err:`, `chdir:`).
struct Spawn {
    program: Program,
    env: Vec<(String, Option<String>)>,
    err_to_out: bool,
    err_path: Option<String>,
    chdir: Option<String>,
    /// `unsetenv_others: true`: the child gets only the given environment.
    unsetenv_others: bool,
}

fn str_of(ctx: &mut Ctx, v: Value) -> Result<String> {
    let s = string::to_str_arg(ctx, v)?;
    Ok(string::to_rust_string_lossy(s))
}

/// A command-line argument: the String's bytes, whatever their encoding.
fn arg_of(ctx: &mut Ctx, v: Value) -> Result<std::ffi::OsString> {
    use std::os::unix::ffi::OsStringExt;
    let s = string::to_str_arg(ctx, v)?;
    Ok(std::ffi::OsString::from_vec(string::bytes(s).to_vec()))
}

/// Reads an environment Hash ({"NAME" => "value" or nil}).
fn env_pairs(ctx: &mut Ctx, h: Value) -> Result<Vec<(String, Option<String>)>> {
    let mut out = Vec::new();
    for (k, v) in hash::pairs(h) {
        let k = str_of(ctx, k)?;
        let v = if v.is_nil() { None } else { Some(str_of(ctx, v)?) };
        out.push((k, v));
    }
    Ok(out)
}

/// Reads spawn options (`err:`, `chdir:`); other keys are not supported yet.
fn apply_options(ctx: &mut Ctx, sp: &mut Spawn, opts: Value) -> Result<()> {
    for (k, v) in hash::pairs(opts) {
        let key = match k.as_symbol() {
            Some(s) => ctx.sym_str(s).to_string(),
            None => continue,
        };
        match key.as_str() {
            "err" => {
                if array::is_array(v) {
                    let items = array::to_vec(v);
                    let child_out = items.len() == 2 && items.iter().filter_map(|x| x.as_symbol()).map(|s| ctx.sym_str(s).to_string()).collect::<Vec<_>>() == ["child", "out"];
                    if !child_out {
                        return Err(ctx.not_implemented("IO.popen err: redirection other than [:child, :out]"));
                    }
                    sp.err_to_out = true;
                } else if v.as_symbol().is_some_and(|s| &*ctx.sym_str(s) == "out") {
                    sp.err_to_out = true;
                } else {
                    sp.err_path = Some(str_of(ctx, v)?);
                }
            }
            "chdir" => {
                let c = crate::core::file::stat::cpath_arg(ctx, v)?;
                sp.chdir = Some(String::from_utf8_lossy(c.as_bytes()).into_owned());
            }
            // Descriptors Ruby opens are close-on-exec, so only the standard ones (and
            // those the program made inheritable) reach the child either way.
            "unsetenv_others" | "close_others" => {
                if !(v.is_nil() || v == Value::TRUE || v == Value::FALSE) {
                    let shown = crate::core::object::inspect_string(ctx, v)?;
                    return Err(ctx.arg_error(&format!("expected true or false as {key}: {shown}")));
                }
                if key == "unsetenv_others" {
                    sp.unsetenv_others = v.truthy();
                }
            }
            "mode" | "external_encoding" | "internal_encoding" | "encoding" | "binmode" | "textmode" => {}
            other => return Err(ctx.not_implemented(&format!("IO.popen option {other}:"))),
        }
    }
    Ok(())
}

/// Parses the command argument of `IO.popen`.
fn parse_command(ctx: &mut Ctx, cmd: Value) -> Result<Spawn> {
    let mut sp = Spawn { program: Program::Shell(std::ffi::OsString::new()), env: Vec::new(), err_to_out: false, err_path: None, chdir: None, unsetenv_others: false };
    if let Some(a) = array::try_to_ary(ctx, cmd)? {
        let mut items = array::to_vec(a);
        if items.first().is_some_and(|&v| hash::is_hash(v)) {
            sp.env = env_pairs(ctx, items.remove(0))?;
        }
        if items.last().is_some_and(|&v| hash::is_hash(v)) {
            let opts = items.pop().unwrap_or(Value::NIL);
            apply_options(ctx, &mut sp, opts)?;
        }
        if items.is_empty() {
            return Err(ctx.arg_error("wrong number of arguments"));
        }
        let mut argv = Vec::new();
        for (i, v) in items.into_iter().enumerate() {
            // [command, argv0] names the program and its argv[0]; only the command is used.
            if i == 0 && array::is_array(v) {
                let pair = array::to_vec(v);
                match pair.first() {
                    Some(&c) => argv.push(arg_of(ctx, c)?),
                    None => return Err(ctx.arg_error("wrong first argument")),
                }
                continue;
            }
            argv.push(arg_of(ctx, v)?);
        }
        sp.program = Program::Exec(argv);
        return Ok(sp);
    }
    let s = arg_of(ctx, cmd)?;
    if s == "-" {
        return Err(ctx.not_implemented("IO.popen(\"-\")"));
    }
    sp.program = Program::Shell(s);
    Ok(sp)
}

/// Starts the child with `stdin`/`stdout` set up by the caller; returns its pid.
fn start(ctx: &mut Ctx, sp: &Spawn, stdin: Option<OwnedFd>, stdout: Option<OwnedFd>) -> Result<i32> {
    let (mut c, name) = match &sp.program {
        Program::Shell(s) => {
            let mut c = std::process::Command::new("/bin/sh");
            c.arg("-c").arg(s);
            (c, s.to_string_lossy().into_owned())
        }
        Program::Exec(argv) => {
            let mut c = std::process::Command::new(&argv[0]);
            c.args(&argv[1..]);
            (c, argv[0].to_string_lossy().into_owned())
        }
    };
    // The child starts from this VM's ENV (nothing with unsetenv_others), as spawn's
    // children do.
    c.env_clear();
    if !sp.unsetenv_others {
        use std::os::unix::ffi::OsStrExt;
        let base = crate::core::process::spawn::base_environment(ctx);
        c.envs(base.iter().map(|(k, v)| (std::ffi::OsStr::from_bytes(k), std::ffi::OsStr::from_bytes(v))));
    }
    for (k, v) in &sp.env {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    if let Some(d) = &sp.chdir {
        c.current_dir(d);
    }
    if let Some(fd) = stdin {
        c.stdin(std::process::Stdio::from(fd));
    }
    if let Some(fd) = stdout {
        c.stdout(std::process::Stdio::from(fd));
    }
    if let Some(p) = &sp.err_path {
        match std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(p) {
            Ok(f) => {
                c.stderr(std::process::Stdio::from(f));
            }
            Err(e) => return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), p)),
        }
    }
    if sp.err_to_out {
        // SAFETY: dup2 is async-signal-safe; the closure runs in the child between fork
        // and exec and touches no other state.
        unsafe {
            c.pre_exec(|| {
                if libc::dup2(1, 2) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    io::flush_stdout(ctx);
    match c.spawn() {
        Ok(child) => Ok(child.id() as i32),
        Err(e) => Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &name)),
    }
}

/// Two connected descriptors (a pipe, or a socketpair for both directions), close-on-exec.
fn pipe_fds(ctx: &mut Ctx, duplex: bool) -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds has room for the two descriptors the calls return.
    let r = unsafe {
        if duplex {
            libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr())
        } else {
            libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC)
        }
    };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EMFILE), if duplex { "socketpair" } else { "pipe" }));
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// `IO.popen([env,] cmd, mode = "r", opts = {}) { |io| ... }`.
fn s_popen(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut pos: Vec<Value> = args.pos.to_vec();
    let mut env = Vec::new();
    if pos.len() > 1 && hash::is_hash(pos[0]) {
        env = env_pairs(ctx, pos.remove(0))?;
    }
    let Some(&cmd) = pos.first() else { return Err(ctx.arity_error(0, 1, None)) };
    let mut sp = parse_command(ctx, cmd)?;
    sp.env.extend(env);
    let mut mode = String::from("r");
    for &v in &pos[1..] {
        if hash::is_hash(v) {
            apply_options(ctx, &mut sp, v)?;
        } else {
            mode = str_of(ctx, v)?;
        }
    }
    if let Some(kw) = args.kw {
        apply_options(ctx, &mut sp, kw)?;
        if let Some(m) = args.kwarg(ctx, "mode") {
            mode = str_of(ctx, m)?;
        }
    }
    let access = mode.split(':').next().unwrap_or("r").replace(['b', 't'], "");
    let (readable, writable) = match access.as_str() {
        "r" => (true, false),
        "w" => (false, true),
        "r+" | "w+" => (true, true),
        other => return Err(ctx.arg_error(&format!("invalid access mode {other}"))),
    };
    let (ours, theirs) = pipe_fds(ctx, readable && writable)?;
    let (ours, pid) = if readable && writable {
        let theirs2 = theirs.try_clone().map_err(|e| crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EMFILE), "dup"))?;
        let pid = start(ctx, &sp, Some(theirs), Some(theirs2))?;
        (ours, pid)
    } else if readable {
        // fds: [read end, write end]; the child writes.
        let pid = start(ctx, &sp, None, Some(theirs))?;
        (ours, pid)
    } else {
        let pid = start(ctx, &sp, Some(ours), None)?;
        (theirs, pid)
    };
    let fd = ours.into_raw_fd();
    let v = io::new_io(ctx, recv, fd, readable, writable, None);
    if let Some(o) = io::io_ref(v) {
        o.child = Some(pid);
        o.sync = writable;
    }
    // The encodings of the mode string ("r:ext:int") and of the IO options.
    let m = io::open_mode::parse_mode_string(ctx, &mode)?;
    io::set_io_encodings(ctx, v, &m)?;
    let mut opts = args.kw;
    for &h in &pos[1..] {
        if hash::is_hash(h) {
            opts = Some(h);
        }
    }
    if opts.is_some() {
        io::apply_encoding_kwargs(ctx, v, &Args { pos: &[], kw: opts, block: None })?;
    }
    match args.block {
        Some(b) => {
            let r = ctx.yield1(&b, v);
            let c = io::close(ctx, v);
            let out = r?;
            c?;
            Ok(out)
        }
        None => Ok(v),
    }
}

/// A new IO of class `klass` over `fd` made by allocate + `initialize` (a redefined
/// `new` is not called, a redefined `initialize` is).
fn io_over_fd(ctx: &mut Ctx, klass: Value, fd: OwnedFd, mode: &str) -> Result<Value> {
    let v = crate::core::object::allocate(ctx, klass)?;
    let m = string::new_utf8(ctx, mode);
    let raw = fd.into_raw_fd();
    if let Err(e) = ctx.call(v, crate::symbol::sym::INITIALIZE, &[Value::fixnum(raw as i64), m]) {
        // SAFETY: the descriptor was not taken over by an IO.
        if io::io_ref(v).is_none_or(|o| o.fd != raw) {
            unsafe { libc::close(raw) };
        }
        return Err(e);
    }
    Ok(v)
}

/// `IO.pipe(ext_enc = nil, int_enc = nil, **opts) { |r, w| ... }`: a connected reader and
/// writer; the encodings (as `set_encoding` takes them) are the read end's.
fn s_pipe(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (r, w) = pipe_fds(ctx, false)?;
    let rv = io_over_fd(ctx, recv, r, "r")?;
    let wv = io_over_fd(ctx, recv, w, "w")?;
    if let Some(o) = io::io_ref(wv) {
        o.sync = true;
    }
    let mut pos = args.pos.to_vec();
    let mut kw = args.kw;
    if kw.is_none() && pos.last().is_some_and(|&h| hash::is_hash(h)) {
        kw = pos.pop();
    }
    if !pos.is_empty() {
        let set_encoding = ctx.intern("set_encoding");
        ctx.call_kw(rv, set_encoding, &pos, kw, None)?;
    } else if kw.is_some() {
        io::apply_encoding_kwargs(ctx, rv, &Args { pos: &[], kw, block: None })?;
    }
    let pair = array::from_slice(ctx, &[rv, wv]);
    match args.block {
        Some(b) => {
            let res = ctx.yield_block(&b, &[rv, wv]);
            let c1 = io::close(ctx, rv);
            let c2 = io::close(ctx, wv);
            let out = res?;
            c1?;
            c2?;
            Ok(out)
        }
        None => Ok(pair),
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().io;
    crate::methods!(ctx, c, [
        ("popen", s_popen, [1..], Unsafe, Singleton, Kw),
        ("pipe", s_pipe, [0..=3], Unsafe, Singleton, Kw),
    ]);
}
