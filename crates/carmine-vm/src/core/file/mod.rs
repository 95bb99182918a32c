//! File and FileTest: opening files, path manipulation and file predicates.
//!
//! File objects are IO objects (`core::io::IoObj`) with a path; everything about their
//! descriptors and buffers is in `core::io`.

pub mod filetest;
pub mod fnmatch;
pub mod ops;
pub mod stat;

use crate::core::io::open_mode;
use crate::core::io::*;
use crate::core::{array, object, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub(crate) fn path_arg(ctx: &mut Ctx, v: Value) -> Result<String> {
    if string::is_string(v) {
        return Ok(string::to_rust_string_lossy(v));
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_PATH, true) {
        let p = ctx.call(v, sym::TO_PATH, &[])?;
        return string::str_arg(ctx, p);
    }
    string::str_arg(ctx, v)
}

/// Opens `path` with a Ruby mode string ("r", "w", "a", "r+", …).
pub fn open_file(ctx: &mut Ctx, klass: Value, path: &str, mode: &str) -> Result<Value> {
    let m = open_mode::parse_mode_string(ctx, mode)?;
    let c = std::ffi::CString::new(path).map_err(|_| ctx.arg_error("string contains null byte"))?;
    open_path(ctx, klass, &c, m, 0o666)
}

/// open(2) of `path` with an extracted mode and permission, as a new IO of `klass`.
pub fn open_path(ctx: &mut Ctx, klass: Value, path: &std::ffi::CStr, m: open_mode::OpenMode, perm: u32) -> Result<Value> {
    // open(2) of a FIFO blocks until the other end opens it, maybe from another Ruby
    // thread: with other threads about, the call is made outside the giant lock.
    let flags = m.flags | libc::O_CLOEXEC;
    // SAFETY: path is a valid NUL-terminated string that outlives the call.
    // errno is read before the giant lock is taken again (taking it may change errno).
    let open = || {
        let fd = unsafe { libc::open(path.as_ptr(), flags, perm) };
        (fd, if fd < 0 { crate::core::process::last_errno() } else { 0 })
    };
    let (fd, err) = if crate::thread::sched::others_running(ctx) { crate::thread::sched::without_gl(ctx, open) } else { open() };
    let shown = String::from_utf8_lossy(path.to_bytes()).into_owned();
    if fd < 0 {
        return Err(crate::core::process::errno_error(ctx, err, &format!("rb_sysopen - {shown}")));
    }
    let f = new_io(ctx, klass, fd, m.readable(), m.writable(), Some(shown));
    set_io_encodings(ctx, f, &m)?;
    Ok(f)
}

/// `File.open`: `File.new` (allocate + initialize, so a subclass's `initialize` runs),
/// then with a block, yields the file and closes it.
fn f_open(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let f = object::allocate(ctx, recv)?;
    ctx.call_kw(f, sym::INITIALIZE, args.pos, args.kw, None)?;
    match args.block {
        Some(b) => {
            let r = ctx.yield1(&b, f);
            let c = close_after_block(ctx, f);
            let v = r?;
            c?;
            Ok(v)
        }
        None => Ok(f),
    }
}

/// Closes the IO an `open` block was given, through its `close` method (which a subclass
/// may override); an IOError "closed stream" from it is ignored, as CRuby's io_close does.
pub fn close_after_block(ctx: &mut Ctx, f: Value) -> Result<()> {
    if io_ref(f).is_some_and(|io| io.closed) {
        return Ok(());
    }
    let close = ctx.intern("close");
    match ctx.call(f, close, &[]) {
        Ok(_) => Ok(()),
        Err(crate::error::Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().io_error) && crate::core::exception::message_string(ctx, e) == "closed stream" => Ok(()),
        Err(e) => Err(e),
    }
}

/// `File#initialize(path_or_fd, mode = "r", perm = 0666, **opts)`.
fn f_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() || args.pos.len() > 3 {
        return Err(ctx.arity_error(args.pos.len(), 1, Some(3)));
    }
    if args.block.is_some() {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        let cname = object::class_name_of(ctx, recv);
        crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: {cname}::new() does not take block; use {cname}::open() instead\n"), None)?;
    }
    let (m, perm) = open_mode::extract(ctx, args.pos.get(1).copied(), args.pos.get(2).copied(), args)?;
    let klass = object::real_class_of(ctx, recv);
    let f = if let Some(fd) = args.pos[0].as_fixnum() {
        io_for_fd(ctx, klass, fd as i32, args.pos.get(1).is_some_and(|v| !v.is_nil()).then_some(m))?
    } else {
        let c = crate::core::file::stat::cpath_arg(ctx, args.pos[0])?;
        open_path(ctx, klass, &c, m, perm)?
    };
    apply_encoding_kwargs(ctx, f, args)?;
    crate::object::move_data(recv, f);
    Ok(Value::NIL)
}

/// An IO of `klass` over an existing descriptor (EBADF when it is not open); without a
/// mode, the directions are the descriptor's own.
pub fn io_for_fd(ctx: &mut Ctx, klass: Value, fd: i32, m: Option<open_mode::OpenMode>) -> Result<Value> {
    // SAFETY: F_GETFL only queries the descriptor.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl < 0 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, ""));
    }
    let m = match m {
        Some(m) => {
            let acc = fl & libc::O_ACCMODE;
            let want = m.flags & libc::O_ACCMODE;
            if acc != libc::O_RDWR && want != acc {
                return Err(crate::core::process::errno_error(ctx, libc::EINVAL, ""));
            }
            m
        }
        None => open_mode::mode_from_flags(fl),
    };
    let f = new_io(ctx, klass, fd, m.readable(), m.writable(), None);
    set_io_encodings(ctx, f, &m)?;
    Ok(f)
}

/// Defines `DATA`: the main script `path` opened for reading, positioned at `offset`
/// (just after `__END__` and its newline).
pub fn define_data(ctx: &mut Ctx, path: &str, offset: usize) -> Result<()> {
    let file = ctx.c().file;
    let f = open_file(ctx, file, path, "r")?;
    seek_io(ctx, f, offset as i64, libc::SEEK_SET)?;
    let obj = ctx.c().object;
    let id = ctx.intern("DATA");
    crate::core::module::body(obj).const_set(id, f);
    Ok(())
}

fn f_delete(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let p = path_arg(ctx, a)?;
        if let Err(e) = std::fs::remove_file(&p) {
            return Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &format!("rb_file_s_unlink - {p}")));
        }
    }
    Ok(Value::fixnum(args.pos.len() as i64))
}

/// A user's home directory from the password database (the current user's for None).
pub fn user_home(user: Option<&str>) -> Option<String> {
    let mut buf = vec![0 as libc::c_char; 16384];
    // SAFETY: an all-zero passwd is a valid out-value.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut res: *mut libc::passwd = std::ptr::null_mut();
    let rc = match user {
        Some(u) => {
            let c = std::ffi::CString::new(u).ok()?;
            // SAFETY: all pointers are valid for the call; buf outlives the result's use.
            unsafe { libc::getpwnam_r(c.as_ptr(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut res) }
        }
        // SAFETY: as above.
        None => unsafe { libc::getpwuid_r(libc::getuid(), &mut pw, buf.as_mut_ptr(), buf.len(), &mut res) },
    };
    if rc != 0 || res.is_null() || pw.pw_dir.is_null() {
        return None;
    }
    // SAFETY: pw_dir points into buf, NUL-terminated.
    Some(unsafe { std::ffi::CStr::from_ptr(pw.pw_dir) }.to_string_lossy().into_owned())
}

/// `File.expand_path(path, dir = nil)`.
pub fn expand_path(path: &str, dir: Option<&str>) -> String {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/".into());
    let path = if path == "~" {
        home.clone()
    } else if let Some(r) = path.strip_prefix("~/") {
        format!("{home}/{r}")
    } else if let Some(user_path) = path.strip_prefix('~') {
        let (user, rest) = user_path.split_once('/').unwrap_or((user_path, ""));
        match user_home(Some(user)) {
            Some(h) if rest.is_empty() => h,
            Some(h) => format!("{h}/{rest}"),
            None => path.to_string(),
        }
    } else {
        path.to_string()
    };
    let base = if path.starts_with('/') {
        String::new()
    } else {
        let d = match dir {
            Some(d) => expand_path(d, None),
            None => std::env::current_dir().map(|p| p.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into()),
        };
        d
    };
    let joined = if base.is_empty() { path } else { format!("{base}/{path}") };
    let mut parts: Vec<&str> = Vec::new();
    for seg in joined.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// `ENV[name]` as Ruby code last set it (ENV may be changed without the process
/// environment following).
pub(crate) fn env_var(ctx: &mut Ctx, name: &str) -> Result<Option<String>> {
    let env_id = ctx.intern("ENV");
    let obj = ctx.c().object;
    let Some(env) = crate::core::module::body(obj).const_get(env_id).map(|e| e.value) else { return Ok(std::env::var(name).ok()) };
    let key = string::new_utf8(ctx, name);
    let aref = ctx.intern("[]");
    let v = ctx.call(env, aref, &[key])?;
    Ok(if v.is_nil() { None } else { Some(string::to_rust_string_lossy(v)) })
}

/// Replaces a leading `~` (ENV["HOME"], as Ruby code last set it) or `~user` (the password
/// database) of a path, raising ArgumentError as CRuby does for an unknown user or a
/// relative or empty home.
fn expand_tilde(ctx: &mut Ctx, p: String) -> Result<String> {
    let Some(rest) = p.strip_prefix('~') else { return Ok(p) };
    let (user, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let home = if user.is_empty() {
        match env_var(ctx, "HOME")? {
            Some(h) => h,
            None => match user_home(None) {
                Some(h) => h,
                None => return Err(ctx.arg_error("couldn't find login name -- expanding '~'")),
            },
        }
    } else {
        match user_home(Some(user)) {
            Some(h) => h,
            None => return Err(ctx.arg_error(&format!("user {user} doesn't exist"))),
        }
    };
    if !home.starts_with('/') {
        return Err(ctx.arg_error("non-absolute home"));
    }
    Ok(format!("{home}{tail}"))
}

/// `File.absolute_path(path, dir = nil)`: like `expand_path` but a `~` is an ordinary
/// file name.
fn f_absolute_path(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    let cwd = || std::env::current_dir().map(|d| d.to_string_lossy().into_owned()).unwrap_or_else(|_| "/".into());
    let base = match args.pos.get(1) {
        Some(&d) if !d.is_nil() => {
            let d = path_arg(ctx, d)?;
            if d.starts_with('/') { d } else { format!("{}/{d}", cwd()) }
        }
        _ => cwd(),
    };
    // An absolute path never reaches expand_path's `~` handling.
    let full = if p.starts_with('/') { p } else { format!("{base}/{p}") };
    Ok(string::new_utf8(ctx, &expand_path(&full, None)))
}

fn f_expand_path(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    let p = expand_tilde(ctx, p)?;
    let d = match args.pos.get(1) {
        Some(&d) if !d.is_nil() => {
            let d = path_arg(ctx, d)?;
            Some(expand_tilde(ctx, d)?)
        }
        _ => None,
    };
    Ok(string::new_utf8(ctx, &expand_path(&p, d.as_deref())))
}

fn f_join(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut parts: Vec<String> = Vec::new();
    // `open` holds the arrays being walked (all reachable from the arguments): an array
    // that contains itself is CRuby's "recursive array", and deep nesting is bounded by
    // the native stack check.
    fn collect(ctx: &mut Ctx, v: Value, parts: &mut Vec<String>, open: &mut Vec<Value>) -> Result<()> {
        if array::is_array(v) {
            if open.contains(&v) {
                return Err(ctx.arg_error("recursive array"));
            }
            if ctx.native_stack_exhausted() {
                return Err(crate::interp::call::stack_overflow(ctx));
            }
            open.push(v);
            let mut i = 0;
            while i < array::len(v) {
                collect(ctx, array::get(v, i), parts, open)?;
                i += 1;
            }
            open.pop();
            return Ok(());
        }
        parts.push(path_arg(ctx, v)?);
        Ok(())
    }
    let mut open = Vec::new();
    for &a in args.pos {
        collect(ctx, a, &mut parts, &mut open)?;
    }
    let mut out = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            out.push_str(p);
            continue;
        }
        match (out.ends_with('/'), p.starts_with('/')) {
            (true, true) => out.push_str(&p[1..]),
            (false, false) => {
                out.push('/');
                out.push_str(p);
            }
            _ => out.push_str(p),
        }
    }
    Ok(string::new_utf8(ctx, &out))
}

fn f_basename(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    let trimmed = p.trim_end_matches('/');
    let mut base = if trimmed.is_empty() && p.starts_with('/') { "/".to_string() } else { trimmed.rsplit('/').next().unwrap_or("").to_string() };
    if let Some(&suffix) = args.pos.get(1) {
        let sfx = string::str_arg(ctx, suffix)?;
        if sfx == ".*" {
            if let Some(dot) = base.rfind('.') {
                if dot > 0 {
                    base.truncate(dot);
                }
            }
        } else if base.ends_with(&sfx) && base != sfx {
            base.truncate(base.len() - sfx.len());
        }
    }
    Ok(string::new_utf8(ctx, &base))
}

/// One step of `dirname`: the path without its last component and trailing slashes;
/// repeated leading slashes count as one.
fn dirname_once(p: &str) -> String {
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return if p.is_empty() { ".".into() } else { "/".into() };
    }
    match t.rfind('/') {
        None => ".".into(),
        Some(i) => {
            let d = t[..i].trim_end_matches('/');
            if d.is_empty() {
                "/".into()
            } else if d.starts_with("//") {
                format!("/{}", d.trim_start_matches('/'))
            } else {
                d.to_string()
            }
        }
    }
}

/// `File.dirname(path, level = 1)`: `level` components removed; the result keeps the
/// path's encoding.
fn f_dirname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pv = args.pos[0];
    let p = path_arg(ctx, pv)?;
    let level = match args.pos.get(1) {
        Some(&l) => crate::core::integer::to_i64_arg(ctx, l)?,
        None => 1,
    };
    if level < 0 {
        return Err(ctx.arg_error(&format!("negative level: {level}")));
    }
    let mut d = p;
    for _ in 0..level {
        let next = dirname_once(&d);
        let done = next == d;
        d = next;
        if done {
            break;
        }
    }
    let enc = if string::is_string(pv) { string::encoding(pv) } else { crate::core::encoding::UTF_8 };
    Ok(string::new_with_enc(ctx, d.into_bytes(), enc))
}

fn f_extname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    let base = p.rsplit('/').next().unwrap_or("");
    let ext = match base.rfind('.') {
        Some(i) if i > 0 && i + 1 < base.len() => &base[i..],
        _ => "",
    };
    Ok(string::new_utf8(ctx, ext))
}

fn f_realpath(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    // A relative path is taken from the directory given as second argument.
    let p = match args.pos.get(1) {
        Some(&d) if !d.is_nil() && !p.starts_with('/') => {
            let d = path_arg(ctx, d)?;
            format!("{}/{p}", d.trim_end_matches('/'))
        }
        _ => p,
    };
    match std::fs::canonicalize(&p) {
        Ok(r) => Ok(string::new_utf8(ctx, &r.to_string_lossy())),
        Err(e) => Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &format!("rb_check_realpath_internal - {p}"))),
    }
}

fn f_absolute_path_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    Ok(Value::bool(p.starts_with('/')))
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [("open", f_open, [0..], Unsafe, Singleton, Kw)]);
    stat::init(ctx);
    filetest::init(ctx);
    fnmatch::init(ctx);
    ops::init(ctx);
    let f = ctx.c().file;
    crate::core::module::body(f).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    for (name, v) in [("SEPARATOR", "/"), ("Separator", "/"), ("PATH_SEPARATOR", ":")] {
        let id = ctx.intern(name);
        let s = string::new_utf8(ctx, v);
        crate::core::module::body(f).const_set(id, s);
    }
    crate::methods!(ctx, f, [
        ("initialize", f_initialize, [0..], Unsafe, Private, Kw),
        ("delete", f_delete, [0..], Unsafe, Singleton),
        ("unlink", f_delete, [0..], Unsafe, Singleton),
        ("expand_path", f_expand_path, [1..=2], Unsafe, Singleton),
        ("absolute_path", f_absolute_path, [1..=2], Unsafe, Singleton),
        ("join", f_join, [0..], Safe, Singleton),
        ("basename", f_basename, [1..=2], Safe, Singleton),
        ("dirname", f_dirname, [1..=2], Safe, Singleton),
        ("extname", f_extname, [1], Safe, Singleton),
        ("realpath", f_realpath, [1..=2], Unsafe, Singleton),
        ("absolute_path?", f_absolute_path_p, [1], Safe, Singleton),
    ]);
}
