//! Dir: directory objects (`Dir.open`, `read`, `each`, `tell`/`seek` …), the working
//! directory, directory creation and removal, and listings; glob is in `glob`.
//!
//! Invariants:
//! - A Dir object owns one open directory stream (`DIR*`) until `close` or collection; its
//!   entries are read once when it opens, so `tell`/`seek`/`rewind` are indexes into that
//!   snapshot. Every method but `close`/`closed?`/`path`/`inspect` raises IOError
//!   "closed directory" after `close`.
//! - Entry names are Strings in the directory's encoding (`encoding:`, else the default
//!   external encoding), as CRuby gives them.

pub mod glob;

use crate::core::file::stat::cpath_arg;
use crate::core::process::{errno_error, last_errno};
use crate::core::{array, encoding, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct DirObj {
    dir: *mut libc::DIR,
    path: Value,
    entries: Vec<Vec<u8>>,
    pos: usize,
    enc: u8,
}

impl Drop for DirObj {
    fn drop(&mut self) {
        if !self.dir.is_null() {
            // SAFETY: the stream is owned by this object and still open.
            unsafe { libc::closedir(self.dir) };
        }
    }
}

// SAFETY: the DIR* is used only by the GL holder (all Dir methods are Unsafe).
unsafe impl Send for DirObj {}

crate::data_obj!(DirObj, |d, m| { m.mark(d.path); });

fn shown(c: &std::ffi::CStr) -> String {
    String::from_utf8_lossy(c.to_bytes()).into_owned()
}

/// Opens a directory stream and reads its entries (with "." and ".."), in the order the
/// system returns them.
fn read_entries(ctx: &mut Ctx, c: &std::ffi::CStr, func: &str) -> Result<(*mut libc::DIR, Vec<Vec<u8>>)> {
    // SAFETY: c is NUL-terminated.
    let dir = unsafe { libc::opendir(c.as_ptr()) };
    if dir.is_null() {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("{func} - {}", shown(c))));
    }
    let mut entries = Vec::new();
    loop {
        // SAFETY: dir is an open stream; the entry is valid until the next readdir.
        let ent = unsafe { libc::readdir(dir) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        entries.push(name.to_bytes().to_vec());
    }
    Ok((dir, entries))
}

fn enc_kw(ctx: &mut Ctx, args: &Args) -> Result<u8> {
    match args.kwarg(ctx, "encoding").filter(|v| !v.is_nil()) {
        Some(e) => encoding::encoding_arg(ctx, e),
        None => Ok(encoding::default_external(ctx)),
    }
}

fn name_value(ctx: &mut Ctx, name: &[u8], enc: u8) -> Value {
    string::new_with_enc(ctx, name.to_vec(), enc)
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut DirObj> {
    match data_ref::<DirObj>(v) {
        Some(d) if !d.dir.is_null() => Ok(d),
        Some(_) => Err(ctx.raise(ctx.c().io_error, "closed directory")),
        None => Err(ctx.type_error("uninitialized Dir")),
    }
}

// ---- Dir objects ----

fn dir_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    let enc = enc_kw(ctx, args)?;
    let (dir, entries) = read_entries(ctx, &c, "dir_initialize")?;
    let path = if string::is_string(args.pos[0]) { string::dup_literal(ctx, args.pos[0]) } else { string::new_with_enc(ctx, c.to_bytes().to_vec(), enc) };
    let k = object::real_class_of(ctx, recv);
    let fresh = object::new_data(ctx, k, Box::new(DirObj { dir, path, entries, pos: 0, enc }));
    crate::object::move_data(recv, fresh);
    Ok(Value::NIL)
}

fn new_dir(ctx: &mut Ctx, klass: Value, args: &Args) -> Result<Value> {
    let d = object::allocate(ctx, klass)?;
    ctx.call_kw(d, crate::symbol::sym::INITIALIZE, args.pos, args.kw, None)?;
    Ok(d)
}

fn close_dir(d: &mut DirObj) {
    if !d.dir.is_null() {
        // SAFETY: the stream is open and owned.
        unsafe { libc::closedir(d.dir) };
        d.dir = std::ptr::null_mut();
    }
}

/// `Dir.open(path, encoding: nil) { |dir| }`: with a block, the block's value and the
/// directory closed afterwards.
fn s_open(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = new_dir(ctx, recv, args)?;
    let Some(b) = args.block else { return Ok(d) };
    let r = ctx.yield1(&b, d);
    if let Some(o) = data_ref::<DirObj>(d) {
        close_dir(o);
    }
    r
}

fn dir_read(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let Some(name) = d.entries.get(d.pos).cloned() else { return Ok(Value::NIL) };
    d.pos += 1;
    let enc = d.enc;
    Ok(name_value(ctx, &name, enc))
}

fn each_entry(ctx: &mut Ctx, recv: Value, args: &Args, children: bool, meth: &str) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, meth, &[], None);
    };
    // Like CRuby, iteration starts from the first entry whatever was read before.
    get(ctx, recv)?.pos = 0;
    loop {
        let d = get(ctx, recv)?;
        let Some(name) = d.entries.get(d.pos).cloned() else { break };
        d.pos += 1;
        if children && matches!(name.as_slice(), b"." | b"..") {
            continue;
        }
        let enc = d.enc;
        let s = name_value(ctx, &name, enc);
        ctx.yield1(&b, s)?;
    }
    Ok(recv)
}

fn dir_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_entry(ctx, recv, args, false, "each")
}

fn dir_each_child(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_entry(ctx, recv, args, true, "each_child")
}

/// An Array of file names as Strings in `enc`. Each String goes into the array as soon as
/// it is made: a Rust Vec of fresh Values is not a GC root, so the next allocation could
/// free the earlier ones.
fn names_array<'a>(ctx: &mut Ctx, names: impl Iterator<Item = &'a [u8]>, enc: u8) -> Value {
    let out = array::new(ctx);
    for n in names {
        let v = name_value(ctx, n, enc);
        array::push(ctx, out, v);
    }
    out
}

/// `Dir#children`: every entry but . and .., from the first (the position ends at the end).
fn dir_children(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    let (names, enc): (Vec<Vec<u8>>, u8) = (d.entries.iter().filter(|n| !matches!(n.as_slice(), b"." | b"..")).cloned().collect(), d.enc);
    d.pos = d.entries.len();
    Ok(names_array(ctx, names.iter().map(|n| n.as_slice()), enc))
}

fn dir_close(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if let Some(d) = data_ref::<DirObj>(recv) {
        close_dir(d);
    }
    Ok(Value::NIL)
}

fn dir_tell(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    Ok(Value::fixnum(d.pos as i64))
}

fn dir_seek(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    let d = get(ctx, recv)?;
    d.pos = n.clamp(0, d.entries.len() as i64) as usize;
    Ok(recv)
}

fn dir_set_pos(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    dir_seek(ctx, recv, args)?;
    Ok(args.pos[0])
}

fn dir_rewind(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    get(ctx, recv)?.pos = 0;
    Ok(recv)
}

fn dir_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match data_ref::<DirObj>(recv) {
        Some(d) => Ok(d.path),
        None => Err(ctx.type_error("uninitialized Dir")),
    }
}

fn dir_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = data_ref::<DirObj>(recv).map(|d| string::to_rust_string_lossy(d.path)).unwrap_or_default();
    let cname = object::class_name_of(ctx, recv);
    Ok(string::new_utf8(ctx, &format!("#<{cname}:{p}>")))
}

fn dir_fileno(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = get(ctx, recv)?;
    // SAFETY: the stream is open.
    Ok(Value::fixnum(unsafe { libc::dirfd(d.dir) } as i64))
}

/// `Dir#chdir { }`: changes to this directory (by descriptor), as `Dir.chdir` does.
fn dir_chdir(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let path = dir_path(ctx, recv, args)?;
    let chdir = ctx.intern("chdir");
    let dir_class = ctx.c().dir;
    ctx.call_with_block(dir_class, chdir, &[path], args.block)
}

// ---- class methods ----

fn s_entries(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    let enc = enc_kw(ctx, args)?;
    let (dir, entries) = read_entries(ctx, &c, "dir_initialize")?;
    // SAFETY: opened just above and not shared.
    unsafe { libc::closedir(dir) };
    Ok(names_array(ctx, entries.iter().map(|n| n.as_slice()), enc))
}

fn s_children(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let all = s_entries(ctx, recv, args)?;
    // Filtered in place: a Rust Vec of the names would not keep them alive.
    array::rarray(all).items_mut().retain(|&s| !matches!(string::bytes(s), b"." | b".."));
    Ok(all)
}

/// Yields each name of `names` (kept alive while the block runs).
fn yield_names(ctx: &mut Ctx, names: Value, b: &crate::interp::Block) -> Result<Value> {
    let mark = ctx.protect(names);
    let mut r = Ok(Value::NIL);
    for i in 0..array::len(names) {
        if let Err(e) = ctx.yield1(b, array::get(names, i)) {
            r = Err(e);
            break;
        }
    }
    ctx.unprotect(mark);
    r
}

fn s_foreach(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_kw(ctx, recv, "foreach", args.pos, args.kw, None);
    };
    let all = s_entries(ctx, recv, args)?;
    yield_names(ctx, all, &b)
}

fn s_each_child(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_kw(ctx, recv, "each_child", args.pos, args.kw, None);
    };
    let all = s_children(ctx, recv, args)?;
    yield_names(ctx, all, &b)
}

fn s_exist(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let st = crate::core::file::stat::try_stat(ctx, args.pos[0], true)?;
    Ok(Value::bool(st.is_some_and(|st| st.st_mode & libc::S_IFMT == libc::S_IFDIR)))
}

/// `Dir.empty?(path)`: a directory with no entries but "." and "..".
fn s_empty(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    // SAFETY: c is NUL-terminated.
    let dir = unsafe { libc::opendir(c.as_ptr()) };
    if dir.is_null() {
        return match last_errno() {
            libc::ENOTDIR => Ok(Value::FALSE),
            e => Err(errno_error(ctx, e, &format!("rb_dir_s_empty_p - {}", shown(&c)))),
        };
    }
    let mut empty = true;
    loop {
        // SAFETY: dir is open; the entry is valid until the next readdir.
        let ent = unsafe { libc::readdir(dir) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        if !matches!(name.to_bytes(), b"." | b"..") {
            empty = false;
            break;
        }
    }
    // SAFETY: opened above.
    unsafe { libc::closedir(dir) };
    Ok(Value::bool(empty))
}

fn s_mkdir(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    let mode = match args.pos.get(1) {
        Some(&m) => integer::to_int_arg(ctx, m)? as libc::mode_t,
        None => 0o777,
    };
    // SAFETY: c is NUL-terminated.
    if unsafe { libc::mkdir(c.as_ptr(), mode) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("dir_s_mkdir - {}", shown(&c))));
    }
    Ok(Value::fixnum(0))
}

fn s_rmdir(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    // SAFETY: c is NUL-terminated.
    if unsafe { libc::rmdir(c.as_ptr()) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("rb_dir_s_rmdir - {}", shown(&c))));
    }
    Ok(Value::fixnum(0))
}

fn s_pwd(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    match std::env::current_dir() {
        Ok(d) => {
            let enc = encoding::default_external(ctx);
            Ok(string::new_with_enc(ctx, d.as_os_str().as_encoded_bytes().to_vec(), enc))
        }
        Err(e) => Err(errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), "getcwd")),
    }
}

fn chdir_to(ctx: &mut Ctx, c: &std::ffi::CStr) -> Result<()> {
    // SAFETY: c is NUL-terminated.
    if unsafe { libc::chdir(c.as_ptr()) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("dir_chdir0 - {}", shown(c))));
    }
    Ok(())
}

/// `Dir.chdir(path = $HOME) { |path| }`: with a block the previous directory is restored
/// afterwards (also when the block raises); a chdir inside another thread's chdir block
/// warns, as CRuby.
fn s_chdir(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let pv = match args.pos.first() {
        Some(&p) => p,
        None => {
            let h = match crate::core::file::env_var(ctx, "HOME")? {
                Some(h) => Some(h),
                None => crate::core::file::env_var(ctx, "LOGDIR")?,
            };
            match h {
                Some(h) => string::new_utf8(ctx, &h),
                None => return Err(ctx.arg_error("HOME/LOGDIR not set")),
            }
        }
    };
    let c = cpath_arg(ctx, pv)?;
    let Some(b) = args.block else {
        chdir_to(ctx, &c)?;
        return Ok(Value::fixnum(0));
    };
    let previous = std::env::current_dir().map_err(|e| errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), "getcwd"))?;
    chdir_to(ctx, &c)?;
    let shown_path = if string::is_string(pv) { pv } else { string::new_from_bytes(ctx, c.to_bytes()) };
    let r = ctx.yield1(&b, shown_path);
    let back = std::ffi::CString::new(previous.as_os_str().as_encoded_bytes().to_vec()).unwrap_or_default();
    let back = chdir_to(ctx, &back);
    let v = r?;
    back?;
    Ok(v)
}

/// `Dir.fchdir(fd) { }`: changes to the directory open on a descriptor.
fn s_fchdir(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let fd = integer::to_int_arg(ctx, args.pos[0])?;
    let previous = std::env::current_dir().ok();
    // SAFETY: fchdir has no memory preconditions.
    if unsafe { libc::fchdir(fd) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, "fchdir"));
    }
    let Some(b) = args.block else { return Ok(Value::fixnum(0)) };
    let r = ctx.yield1(&b, Value::NIL);
    if let Some(p) = previous {
        let _ = std::env::set_current_dir(p);
    }
    r
}

fn s_chroot(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    // SAFETY: c is NUL-terminated.
    if unsafe { libc::chroot(c.as_ptr()) } != 0 {
        let e = last_errno();
        return Err(errno_error(ctx, e, &format!("rb_dir_s_chroot - {}", shown(&c))));
    }
    Ok(Value::fixnum(0))
}

/// `Dir.home(user = nil)`: $HOME, or the user's home directory from the password file.
fn s_home(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let user = match args.pos.first() {
        Some(&u) if !u.is_nil() => {
            let s = string::to_str_arg(ctx, u)?;
            Some(string::to_rust_string_lossy(s))
        }
        _ => None,
    };
    let home = match user {
        None => match crate::core::file::env_var(ctx, "HOME")? {
            Some(h) => h,
            None => crate::core::file::user_home(None).ok_or_else(|| ctx.arg_error("couldn't find login name -- expanding '~'"))?,
        },
        Some(u) => crate::core::file::user_home(Some(&u)).ok_or_else(|| ctx.arg_error(&format!("user {u} doesn't exist")))?,
    };
    let enc = encoding::default_external(ctx);
    Ok(string::new_with_enc(ctx, home.into_bytes(), enc))
}

/// `Dir.glob(patterns, flags = 0, base: nil, sort: true) { |path| }`.
fn s_glob(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut pats = Vec::new();
    let a = args.pos[0];
    let list = if array::is_array(a) { array::to_vec(a) } else { vec![a] };
    for p in list {
        let c = if string::is_string(p) && string::bytes(p).contains(&0) {
            return Err(ctx.arg_error("nul-separated glob pattern is deprecated"));
        } else {
            cpath_arg(ctx, p)?
        };
        pats.push(String::from_utf8_lossy(c.to_bytes()).into_owned());
    }
    let flags = match args.pos.get(1) {
        Some(&f) if !f.is_nil() => integer::to_int_arg(ctx, f)? as u32,
        _ => match args.kwarg(ctx, "flags") {
            Some(f) if !f.is_nil() => integer::to_int_arg(ctx, f)? as u32,
            _ => 0,
        },
    };
    let base = match args.kwarg(ctx, "base").filter(|v| !v.is_nil()) {
        Some(b) => {
            let c = cpath_arg(ctx, b)?;
            String::from_utf8_lossy(c.to_bytes()).into_owned()
        }
        None => String::new(),
    };
    let sort = match args.kwarg(ctx, "sort") {
        None => true,
        Some(v) if v == Value::TRUE => true,
        Some(v) if v == Value::FALSE => false,
        Some(v) => {
            let shown = ctx.call(v, crate::symbol::sym::INSPECT, &[])?;
            return Err(ctx.arg_error(&format!("expected true or false as sort: {}", string::to_rust_string_lossy(shown))));
        }
    };
    let mut g = glob::Glob::new(flags, &base, sort);
    for p in &pats {
        g.pattern(p);
    }
    let enc = encoding::default_external(ctx);
    let items = names_array(ctx, g.out.iter().map(|s| s.as_bytes()), enc);
    if let Some(b) = args.block {
        let mut i = 0;
        while i < array::len(items) {
            ctx.yield1(&b, array::get(items, i))?;
            i += 1;
        }
        return Ok(Value::NIL);
    }
    Ok(items)
}

/// `Dir[*patterns, base: nil, sort: true]`.
fn s_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let list = array::from_vec(ctx, args.pos.to_vec());
    let pos = [list];
    s_glob(ctx, recv, &Args { pos: &pos, kw: args.kw, block: None })
}

pub fn init(ctx: &mut Ctx) {
    let d = ctx.c().dir;
    crate::core::module::body(d).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    let enumerable = ctx.c().enumerable;
    crate::core::module::body(d).includes.push(enumerable);
    crate::methods!(ctx, d, [
        ("open", s_open, [1], Unsafe, Singleton, Kw),
        ("initialize", dir_initialize, [1], Unsafe, Private, Kw),
        ("read", dir_read, [0], Unsafe),
        ("each", dir_each, [0], Unsafe),
        ("each_child", dir_each_child, [0], Unsafe),
        ("children", dir_children, [0], Unsafe),
        ("close", dir_close, [0], Unsafe),
        ("tell", dir_tell, [0], Unsafe),
        ("pos", dir_tell, [0], Unsafe),
        ("seek", dir_seek, [1], Unsafe),
        ("pos=", dir_set_pos, [1], Unsafe),
        ("rewind", dir_rewind, [0], Unsafe),
        ("path", dir_path, [0], Unsafe),
        ("to_path", dir_path, [0], Unsafe),
        ("inspect", dir_inspect, [0], Unsafe),
        ("fileno", dir_fileno, [0], Unsafe),
        ("chdir", dir_chdir, [0], Unsafe),
        ("entries", s_entries, [1], Unsafe, Singleton, Kw),
        ("children", s_children, [1], Unsafe, Singleton, Kw),
        ("foreach", s_foreach, [1], Unsafe, Singleton, Kw),
        ("each_child", s_each_child, [1], Unsafe, Singleton, Kw),
        ("exist?", s_exist, [1], Unsafe, Singleton),
        ("empty?", s_empty, [1], Unsafe, Singleton),
        ("mkdir", s_mkdir, [1..=2], Unsafe, Singleton),
        ("rmdir", s_rmdir, [1], Unsafe, Singleton),
        ("delete", s_rmdir, [1], Unsafe, Singleton),
        ("unlink", s_rmdir, [1], Unsafe, Singleton),
        ("pwd", s_pwd, [0], Unsafe, Singleton),
        ("getwd", s_pwd, [0], Unsafe, Singleton),
        ("chdir", s_chdir, [0..=1], Unsafe, Singleton),
        ("fchdir", s_fchdir, [1], Unsafe, Singleton),
        ("chroot", s_chroot, [1], Unsafe, Singleton),
        ("home", s_home, [0..=1], Unsafe, Singleton),
        ("glob", s_glob, [1..=2], Unsafe, Singleton, Kw),
        ("[]", s_aref, [0..], Unsafe, Singleton, Kw),
    ]);
}
