//! File::Stat and the stat(2) family: `File.stat`/`lstat`, `File#stat`/`lstat`, `IO#stat`,
//! the time and size queries of File, and the permission logic the predicates share.
//!
//! Invariants:
//! - A File::Stat holds one `libc::stat` taken when it was made; it never refreshes.
//! - Anything that names a file is either a path (String or `to_path`, as bytes without NUL)
//!   or an IO, which is asked through its descriptor (fstat) — `FileRef` is that choice.

use std::ffi::CString;

use crate::core::io::io_ref;
use crate::core::{bignum, object, string, time};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct StatObj(pub libc::stat);

crate::data_obj!(StatObj);

/// What a file argument names.
pub enum FileRef {
    Path(CString),
    Fd(i32),
}

impl FileRef {
    pub fn display(&self) -> String {
        match self {
            FileRef::Path(c) => String::from_utf8_lossy(c.as_bytes()).into_owned(),
            FileRef::Fd(fd) => format!("fd {fd}"),
        }
    }
}

/// A path argument as a C string: a String, or an object with `to_path`/`to_str`;
/// "string contains null byte" for an embedded NUL, as CRuby.
pub fn cpath_arg(ctx: &mut Ctx, v: Value) -> Result<CString> {
    let s = if string::is_string(v) {
        v
    } else if v.is_heap() && ctx.respond_to(v, crate::symbol::sym::TO_PATH, true) {
        let p = ctx.call(v, crate::symbol::sym::TO_PATH, &[])?;
        string::to_str_arg(ctx, p)?
    } else {
        string::to_str_arg(ctx, v)?
    };
    match CString::new(string::bytes(s).to_vec()) {
        Ok(c) => Ok(c),
        Err(_) => Err(ctx.arg_error("string contains null byte")),
    }
}

/// A file argument: an IO (asked through its descriptor) or a path.
pub fn file_ref(ctx: &mut Ctx, v: Value) -> Result<FileRef> {
    if let Some(io) = io_ref(v) {
        if io.closed {
            return Err(ctx.raise(ctx.c().io_error, "closed stream"));
        }
        return Ok(FileRef::Fd(io.fd));
    }
    Ok(FileRef::Path(cpath_arg(ctx, v)?))
}

/// stat(2) (`follow`) or lstat(2) of a file reference.
pub fn stat_ref(r: &FileRef, follow: bool) -> std::result::Result<libc::stat, i32> {
    // SAFETY: an all-zero stat is a valid value of this plain C struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the path is NUL-terminated and `st` is a valid out-pointer.
    let rc = unsafe {
        match r {
            FileRef::Path(c) if follow => libc::stat(c.as_ptr(), &mut st),
            FileRef::Path(c) => libc::lstat(c.as_ptr(), &mut st),
            FileRef::Fd(fd) => libc::fstat(*fd, &mut st),
        }
    };
    if rc == 0 {
        Ok(st)
    } else {
        Err(crate::core::process::last_errno())
    }
}

/// The stat of `v`, raising `Errno::*` named after CRuby's function `func`.
pub fn stat_arg(ctx: &mut Ctx, v: Value, follow: bool, func: &str) -> Result<libc::stat> {
    let r = file_ref(ctx, v)?;
    stat_ref(&r, follow).map_err(|e| crate::core::process::errno_error(ctx, e, &format!("{func} - {}", r.display())))
}

/// The stat of `v`, or None when the file cannot be stat'ed (the predicates' view).
pub fn try_stat(ctx: &mut Ctx, v: Value, follow: bool) -> Result<Option<libc::stat>> {
    let r = file_ref(ctx, v)?;
    Ok(stat_ref(&r, follow).ok())
}

pub fn new_stat(ctx: &mut Ctx, st: libc::stat) -> Value {
    let k = ctx.c().stat;
    object::new_data(ctx, k, Box::new(StatObj(st)))
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a libc::stat> {
    match data_ref::<StatObj>(v) {
        Some(s) => Ok(&s.0),
        None => Err(ctx.type_error("uninitialized File::Stat")),
    }
}

/// A local Time for seconds and nanoseconds since the epoch.
pub fn time_at(ctx: &mut Ctx, sec: i64, nsec: i64) -> Value {
    let num = num_bigint::BigInt::from(sec) * 1_000_000_000i64 + nsec;
    let k = ctx.c().time;
    time::new_time(ctx, k, num, num_bigint::BigInt::from(1_000_000_000i64), time::Zone::Local)
}

// ---- the permission logic shared with FileTest ----

fn is_type(st: &libc::stat, t: libc::mode_t) -> bool {
    st.st_mode & libc::S_IFMT == t
}

fn in_groups(gid: libc::gid_t) -> bool {
    // SAFETY: getegid has no preconditions.
    if gid == unsafe { libc::getegid() } {
        return true;
    }
    // SAFETY: a zero-length query returns the count; the buffer then holds that many ids.
    let n = unsafe { libc::getgroups(0, std::ptr::null_mut()) };
    if n <= 0 {
        return false;
    }
    let mut groups = vec![0 as libc::gid_t; n as usize];
    // SAFETY: `groups` has room for n ids.
    let n = unsafe { libc::getgroups(n, groups.as_mut_ptr()) };
    n > 0 && groups[..n as usize].contains(&gid)
}

/// Whether `st` grants `bit` (4 read, 2 write, 1 execute) to the effective (or, with
/// `real`, the real) user, judged from its mode bits like CRuby's File::Stat predicates.
pub fn permits(st: &libc::stat, bit: u32, real: bool) -> bool {
    // SAFETY: these id queries have no preconditions.
    let (uid, gid_ok) = unsafe { if real { (libc::getuid(), st.st_gid == libc::getgid()) } else { (libc::geteuid(), in_groups(st.st_gid)) } };
    let mode = st.st_mode as u32;
    if uid == 0 {
        // root reads and writes anything, and executes what someone may execute.
        return bit != 1 || mode & 0o111 != 0 || is_type(st, libc::S_IFDIR);
    }
    if st.st_uid == uid {
        return mode & (bit << 6) != 0;
    }
    if gid_ok {
        return mode & (bit << 3) != 0;
    }
    mode & bit != 0
}

pub fn ftype_name(st: &libc::stat) -> &'static str {
    match st.st_mode & libc::S_IFMT {
        libc::S_IFREG => "file",
        libc::S_IFDIR => "directory",
        libc::S_IFCHR => "characterSpecial",
        libc::S_IFBLK => "blockSpecial",
        libc::S_IFIFO => "fifo",
        libc::S_IFLNK => "link",
        libc::S_IFSOCK => "socket",
        _ => "unknown",
    }
}

/// The type and permission predicates by name, over one stat: what FileTest, File and
/// File::Stat answer alike.
pub fn predicate(st: &libc::stat, name: &str) -> bool {
    // SAFETY: id queries have no preconditions.
    let euid = unsafe { libc::geteuid() };
    match name {
        "file?" => is_type(st, libc::S_IFREG),
        "directory?" => is_type(st, libc::S_IFDIR),
        "symlink?" => is_type(st, libc::S_IFLNK),
        "pipe?" => is_type(st, libc::S_IFIFO),
        "socket?" => is_type(st, libc::S_IFSOCK),
        "blockdev?" => is_type(st, libc::S_IFBLK),
        "chardev?" => is_type(st, libc::S_IFCHR),
        "setuid?" => st.st_mode & libc::S_ISUID != 0,
        "setgid?" => st.st_mode & libc::S_ISGID != 0,
        "sticky?" => st.st_mode & libc::S_ISVTX != 0,
        "owned?" => st.st_uid == euid,
        "grpowned?" => in_groups(st.st_gid),
        "zero?" | "empty?" => st.st_size == 0,
        "readable?" => permits(st, 4, false),
        "readable_real?" => permits(st, 4, true),
        "writable?" => permits(st, 2, false),
        "writable_real?" => permits(st, 2, true),
        "executable?" => permits(st, 1, false),
        "executable_real?" => permits(st, 1, true),
        _ => false,
    }
}

/// `world_readable?`/`world_writable?`: the permission bits when others have `bit`, else nil.
pub fn world(st: &libc::stat, bit: u32) -> Value {
    let mode = st.st_mode as u32;
    if mode & bit != 0 {
        Value::fixnum((mode & 0o777) as i64)
    } else {
        Value::NIL
    }
}

// ---- File.stat and friends ----

fn f_s_stat(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, args.pos[0], true, "rb_file_s_stat")?;
    Ok(new_stat(ctx, st))
}

fn f_s_lstat(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, args.pos[0], false, "rb_file_s_lstat")?;
    Ok(new_stat(ctx, st))
}

/// `IO#stat`: fstat of the descriptor.
fn io_stat(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, recv, true, "rb_io_stat")?;
    Ok(new_stat(ctx, st))
}

/// `File#lstat`: lstat of the file's path.
fn f_lstat(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let path = opened_path(ctx, recv)?;
    let p = string::new_binary(ctx, path.as_bytes());
    let st = stat_arg(ctx, p, false, "rb_file_lstat")?;
    Ok(new_stat(ctx, st))
}

/// The path of an open File (IOError when closed).
pub fn opened_path(ctx: &mut Ctx, f: Value) -> Result<String> {
    match io_ref(f) {
        Some(io) if io.closed => Err(ctx.raise(ctx.c().io_error, "closed stream")),
        Some(io) => Ok(io.path.clone().unwrap_or_default()),
        None => Err(ctx.raise(ctx.c().io_error, "uninitialized stream")),
    }
}

fn time_field(ctx: &mut Ctx, st: &libc::stat, which: u8) -> Value {
    let (s, ns) = match which {
        b'a' => (st.st_atime, st.st_atime_nsec),
        b'm' => (st.st_mtime, st.st_mtime_nsec),
        _ => (st.st_ctime, st.st_ctime_nsec),
    };
    time_at(ctx, s, ns)
}

fn f_s_atime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, args.pos[0], true, "rb_file_s_atime")?;
    Ok(time_field(ctx, &st, b'a'))
}

fn f_s_mtime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, args.pos[0], true, "rb_file_s_mtime")?;
    Ok(time_field(ctx, &st, b'm'))
}

fn f_s_ctime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, args.pos[0], true, "rb_file_s_ctime")?;
    Ok(time_field(ctx, &st, b'c'))
}

/// statx(2)'s birth time of a path or descriptor; NotImplementedError when the file system
/// does not record it, with CRuby's message.
fn birthtime_of(ctx: &mut Ctx, v: Value, func: &str) -> Result<Value> {
    let r = file_ref(ctx, v)?;
    // SAFETY: an all-zero statx is a valid value of this plain C struct.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    let empty = CString::default();
    // SAFETY: the paths are NUL-terminated and `sx` is a valid out-pointer.
    let rc = unsafe {
        match &r {
            FileRef::Path(c) => libc::statx(libc::AT_FDCWD, c.as_ptr(), 0, libc::STATX_BTIME, &mut sx),
            FileRef::Fd(fd) => libc::statx(*fd, empty.as_ptr(), libc::AT_EMPTY_PATH, libc::STATX_BTIME, &mut sx),
        }
    };
    if rc != 0 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, &format!("{func} - {}", r.display())));
    }
    if sx.stx_mask & libc::STATX_BTIME == 0 {
        return Err(ctx.raise(ctx.c().not_implemented_error, "birthtime is unimplemented on this filesystem"));
    }
    Ok(time_at(ctx, sx.stx_btime.tv_sec, sx.stx_btime.tv_nsec as i64))
}

fn f_s_birthtime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    birthtime_of(ctx, args.pos[0], "rb_file_s_birthtime")
}

fn f_birthtime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    birthtime_of(ctx, recv, "rb_file_birthtime")
}

fn f_atime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, recv, true, "rb_file_atime")?;
    Ok(time_field(ctx, &st, b'a'))
}

fn f_mtime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, recv, true, "rb_file_mtime")?;
    Ok(time_field(ctx, &st, b'm'))
}

fn f_ctime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let st = stat_arg(ctx, recv, true, "rb_file_ctime")?;
    Ok(time_field(ctx, &st, b'c'))
}

/// `File#size`: the size of the open file, after flushing what is buffered.
fn f_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::io::flush_value(ctx, recv)?;
    let st = stat_arg(ctx, recv, true, "rb_file_size")?;
    Ok(Value::fixnum(st.st_size))
}

fn f_s_ftype(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    let r = FileRef::Path(c);
    let st = stat_ref(&r, false).map_err(|e| crate::core::process::errno_error(ctx, e, &format!("rb_file_s_ftype - {}", r.display())))?;
    Ok(string::new_utf8(ctx, ftype_name(&st)))
}

// ---- File::Stat ----

/// `File::Stat.new(path)`.
fn st_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let c = cpath_arg(ctx, args.pos[0])?;
    let r = FileRef::Path(c);
    let st = stat_ref(&r, true).map_err(|e| crate::core::process::errno_error(ctx, e, &format!("rb_file_s_stat - {}", r.display())))?;
    let fresh = new_stat(ctx, st);
    crate::object::move_data(recv, fresh);
    Ok(Value::NIL)
}

fn st_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let st = *get(ctx, args.pos[0])?;
    let fresh = new_stat(ctx, st);
    crate::object::move_data(recv, fresh);
    Ok(recv)
}

macro_rules! stat_int_fields {
    ($($fname:ident => |$s:ident| $e:expr;)*) => {
        $(fn $fname(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
            let $s = get(ctx, recv)?;
            Ok(bignum::from_i128(ctx, ($e) as i128))
        })*
    };
}

stat_int_fields! {
    st_dev => |s| s.st_dev;
    st_dev_major => |s| libc::major(s.st_dev);
    st_dev_minor => |s| libc::minor(s.st_dev);
    st_ino => |s| s.st_ino;
    st_mode => |s| s.st_mode;
    st_nlink => |s| s.st_nlink;
    st_uid => |s| s.st_uid;
    st_gid => |s| s.st_gid;
    st_rdev => |s| s.st_rdev;
    st_rdev_major => |s| libc::major(s.st_rdev);
    st_rdev_minor => |s| libc::minor(s.st_rdev);
    st_size => |s| s.st_size;
    st_blksize => |s| s.st_blksize;
    st_blocks => |s| s.st_blocks;
}

fn st_size_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = get(ctx, recv)?;
    Ok(if s.st_size == 0 { Value::NIL } else { Value::fixnum(s.st_size) })
}

fn st_atime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = *get(ctx, recv)?;
    Ok(time_field(ctx, &s, b'a'))
}

fn st_mtime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = *get(ctx, recv)?;
    Ok(time_field(ctx, &s, b'm'))
}

fn st_ctime(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = *get(ctx, recv)?;
    Ok(time_field(ctx, &s, b'c'))
}

fn st_birthtime(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.raise(ctx.c().not_implemented_error, "birthtime() function is unimplemented on this machine"))
}

fn st_ftype(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = get(ctx, recv)?;
    Ok(string::new_utf8(ctx, ftype_name(s)))
}

/// The File::Stat predicates: one builtin per name, answering from `predicate`.
macro_rules! stat_predicates {
    ($($fname:ident => $name:expr;)*) => {
        $(fn $fname(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
            let s = get(ctx, recv)?;
            Ok(Value::bool(predicate(s, $name)))
        })*
    };
}

stat_predicates! {
    st_file_p => "file?";
    st_directory_p => "directory?";
    st_symlink_p => "symlink?";
    st_pipe_p => "pipe?";
    st_socket_p => "socket?";
    st_blockdev_p => "blockdev?";
    st_chardev_p => "chardev?";
    st_setuid_p => "setuid?";
    st_setgid_p => "setgid?";
    st_sticky_p => "sticky?";
    st_owned_p => "owned?";
    st_grpowned_p => "grpowned?";
    st_zero_p => "zero?";
    st_readable_p => "readable?";
    st_readable_real_p => "readable_real?";
    st_writable_p => "writable?";
    st_writable_real_p => "writable_real?";
    st_executable_p => "executable?";
    st_executable_real_p => "executable_real?";
}

fn st_world_readable(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = get(ctx, recv)?;
    Ok(world(s, libc::S_IROTH))
}

fn st_world_writable(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = get(ctx, recv)?;
    Ok(world(s, libc::S_IWOTH))
}

/// `<=>` compares modification times; nil for a non-Stat.
fn st_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let Some(b) = data_ref::<StatObj>(args.pos[0]) else { return Ok(Value::NIL) };
    let ord = (a.st_mtime, a.st_mtime_nsec).cmp(&(b.0.st_mtime, b.0.st_mtime_nsec));
    Ok(Value::fixnum(ord as i64))
}

fn st_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = *get(ctx, recv)?;
    let mut parts = vec![
        format!("dev=0x{:x}", s.st_dev),
        format!("ino={}", s.st_ino),
        format!("mode=0{:o}", s.st_mode),
        format!("nlink={}", s.st_nlink),
        format!("uid={}", s.st_uid),
        format!("gid={}", s.st_gid),
        format!("rdev=0x{:x}", s.st_rdev),
        format!("size={}", s.st_size),
        format!("blksize={}", s.st_blksize),
        format!("blocks={}", s.st_blocks),
    ];
    for (name, which) in [("atime", b'a'), ("mtime", b'm'), ("ctime", b'c')] {
        let t = time_field(ctx, &s, which);
        let shown = ctx.call(t, crate::symbol::sym::INSPECT, &[])?;
        parts.push(format!("{name}={}", string::to_rust_string_lossy(shown)));
    }
    Ok(string::new_utf8(ctx, &format!("#<File::Stat {}>", parts.join(", "))))
}

pub fn init(ctx: &mut Ctx) {
    let f = ctx.c().file;
    crate::methods!(ctx, f, [
        ("stat", f_s_stat, [1], Unsafe, Singleton),
        ("lstat", f_s_lstat, [1], Unsafe, Singleton),
        ("atime", f_s_atime, [1], Unsafe, Singleton),
        ("mtime", f_s_mtime, [1], Unsafe, Singleton),
        ("ctime", f_s_ctime, [1], Unsafe, Singleton),
        ("birthtime", f_s_birthtime, [1], Unsafe, Singleton),
        ("ftype", f_s_ftype, [1], Unsafe, Singleton),
        ("lstat", f_lstat, [0], Unsafe),
        ("atime", f_atime, [0], Unsafe),
        ("mtime", f_mtime, [0], Unsafe),
        ("ctime", f_ctime, [0], Unsafe),
        ("birthtime", f_birthtime, [0], Unsafe),
        ("size", f_size, [0], Unsafe),
    ]);
    let io = ctx.c().io;
    crate::methods!(ctx, io, [("stat", io_stat, [0], Unsafe)]);
    let st = ctx.c().stat;
    crate::core::module::body(st).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    let comparable = ctx.c().comparable;
    crate::core::module::body(st).includes.push(comparable);
    crate::methods!(ctx, st, [
        ("initialize", st_initialize, [1], Unsafe, Private),
        ("initialize_copy", st_initialize_copy, [1], Safe, Private),
        ("dev", st_dev, [0], Safe),
        ("dev_major", st_dev_major, [0], Safe),
        ("dev_minor", st_dev_minor, [0], Safe),
        ("ino", st_ino, [0], Safe),
        ("mode", st_mode, [0], Safe),
        ("nlink", st_nlink, [0], Safe),
        ("uid", st_uid, [0], Safe),
        ("gid", st_gid, [0], Safe),
        ("rdev", st_rdev, [0], Safe),
        ("rdev_major", st_rdev_major, [0], Safe),
        ("rdev_minor", st_rdev_minor, [0], Safe),
        ("size", st_size, [0], Safe),
        ("size?", st_size_p, [0], Safe),
        ("blksize", st_blksize, [0], Safe),
        ("blocks", st_blocks, [0], Safe),
        ("atime", st_atime, [0], Unsafe),
        ("mtime", st_mtime, [0], Unsafe),
        ("ctime", st_ctime, [0], Unsafe),
        ("birthtime", st_birthtime, [0], Safe),
        ("ftype", st_ftype, [0], Safe),
        ("file?", st_file_p, [0], Safe),
        ("directory?", st_directory_p, [0], Safe),
        ("symlink?", st_symlink_p, [0], Safe),
        ("pipe?", st_pipe_p, [0], Safe),
        ("socket?", st_socket_p, [0], Safe),
        ("blockdev?", st_blockdev_p, [0], Safe),
        ("chardev?", st_chardev_p, [0], Safe),
        ("setuid?", st_setuid_p, [0], Safe),
        ("setgid?", st_setgid_p, [0], Safe),
        ("sticky?", st_sticky_p, [0], Safe),
        ("owned?", st_owned_p, [0], Safe),
        ("grpowned?", st_grpowned_p, [0], Safe),
        ("zero?", st_zero_p, [0], Safe),
        ("readable?", st_readable_p, [0], Safe),
        ("readable_real?", st_readable_real_p, [0], Safe),
        ("writable?", st_writable_p, [0], Safe),
        ("writable_real?", st_writable_real_p, [0], Safe),
        ("executable?", st_executable_p, [0], Safe),
        ("executable_real?", st_executable_real_p, [0], Safe),
        ("world_readable?", st_world_readable, [0], Safe),
        ("world_writable?", st_world_writable, [0], Safe),
        ("<=>", st_cmp, [1], Safe),
        ("inspect", st_inspect, [0], Unsafe),
    ]);
}
