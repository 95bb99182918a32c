//! `pathname.so`: the core of Pathname that CRuby's pathname.rb builds on (cleanpath,
//! join, relative_path_from … are Ruby there): construction, comparison, `sub`, and the
//! methods that hand the path to File, Dir and FileTest.
//!
//! Invariants:
//! - A Pathname keeps its path in `@path` (pathname.rb reads it directly): a String of
//!   its own (a copy of the argument) without NUL bytes.
//! - Methods that return paths return instances of the receiver's class.

use crate::core::{array, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn path_of(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let id = ctx.intern("@path");
    let p = object::ivar_get(ctx, recv, id);
    if !string::is_string(p) {
        let cname = object::class_name_of(ctx, recv);
        return Err(ctx.type_error(&format!("unexpected @path for {cname}")));
    }
    Ok(p)
}

fn constant(ctx: &mut Ctx, name: &str) -> Value {
    let obj = ctx.c().object;
    let id = ctx.intern(name);
    crate::core::module::body(obj).const_get(id).map(|e| e.value).unwrap_or(Value::NIL)
}

/// A new instance of `recv`'s class for path `s`.
fn wrap(ctx: &mut Ctx, recv: Value, s: Value) -> Result<Value> {
    let k = object::real_class_of(ctx, recv);
    let new = ctx.intern("new");
    ctx.call(k, new, &[s])
}

fn is_pathname(ctx: &mut Ctx, v: Value) -> bool {
    let k = constant(ctx, "Pathname");
    v.is_heap() && crate::core::module::is_class_or_module(k) && object::is_a(ctx, v, k)
}

fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut arg = args.pos[0];
    let to_path = ctx.intern("to_path");
    if !string::is_string(arg) && ctx.respond_to(arg, to_path, true) {
        arg = ctx.call(arg, to_path, &[])?;
    }
    let s = string::to_str_arg(ctx, arg)?;
    if string::bytes(s).contains(&0) {
        return Err(ctx.arg_error("pathname contains null byte"));
    }
    let copy = ctx.call_str(s, "dup", &[])?;
    let id = ctx.intern("@path");
    object::ivar_set(ctx, recv, id, copy)?;
    Ok(Value::NIL)
}

fn m_freeze(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    object::freeze(p);
    Ok(object::freeze(recv))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    ctx.call_str(p, "dup", &[])
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if !is_pathname(ctx, other) {
        return Ok(Value::FALSE);
    }
    let (a, b) = (path_of(ctx, recv)?, path_of(ctx, other)?);
    Ok(Value::bool(string::bytes(a) == string::bytes(b)))
}

/// Compares byte-wise with '/' sorting before every other byte, so that a directory's
/// entries follow it directly ("a", "a/b", "a-b").
fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if !is_pathname(ctx, other) {
        return Ok(Value::NIL);
    }
    let (a, b) = (path_of(ctx, recv)?, path_of(ctx, other)?);
    let key = |c: &u8| if *c == b'/' { 0 } else { *c };
    let ord = string::bytes(a).iter().map(key).cmp(string::bytes(b).iter().map(key));
    Ok(Value::fixnum(ord as i64))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    ctx.call_str(p, "hash", &[])
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let cname = object::class_name_of(ctx, recv);
    let s = format!("#<{cname}:{}>", string::to_rust_string_lossy(p));
    Ok(string::new_utf8(ctx, &s))
}

fn m_sub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let sub = ctx.intern("sub");
    let s = ctx.call_kw(p, sub, args.pos, None, args.block)?;
    wrap(ctx, recv, s)
}

/// `sub_ext(repl)`: the path with its extension (as File.extname sees it) replaced.
fn m_sub_ext(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let repl = string::to_str_arg(ctx, args.pos[0])?;
    let p = path_of(ctx, recv)?;
    let file = ctx.c().file;
    let ext = ctx.call_str(file, "extname", &[p])?;
    let stem_len = string::bytes(p).len() - string::bytes(ext).len();
    let mut bytes = string::bytes(p)[..stem_len].to_vec();
    bytes.extend_from_slice(string::bytes(repl));
    let s = string::new_from_bytes(ctx, &bytes);
    let enc = ctx.call_str(p, "encoding", &[])?;
    ctx.call_str(s, "force_encoding", &[enc])?;
    wrap(ctx, recv, s)
}

/// How a delegated method passes the path and treats the answer.
#[derive(Clone, Copy, PartialEq)]
enum Shape {
    /// `Target.m(path, *args)`, answer as is.
    First,
    /// `Target.m(path, *args)`, answer wrapped as a Pathname.
    FirstWrap,
    /// `Target.m(*args, path)`, answer as is.
    Last,
}

fn delegate(ctx: &mut Ctx, recv: Value, args: &Args, target: &str, meth: &str, shape: Shape) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let t = constant(ctx, target);
    let mut v = Vec::with_capacity(args.pos.len() + 1);
    if shape == Shape::Last {
        v.extend_from_slice(args.pos);
        v.push(p);
    } else {
        v.push(p);
        v.extend_from_slice(args.pos);
    }
    let id = ctx.intern(meth);
    let r = ctx.call_kw(t, id, &v, args.kw, args.block)?;
    if shape == Shape::FirstWrap {
        return wrap(ctx, recv, r);
    }
    Ok(r)
}

/// Defines `fn $f` as a delegation of the path to `$target.$meth`.
macro_rules! delegations {
    ($( $f:ident => $target:literal . $meth:literal, $shape:ident; )*) => {
        $(
            fn $f(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
                delegate(ctx, recv, args, $target, $meth, Shape::$shape)
            }
        )*
    };
}

delegations! {
    m_realpath => "File"."realpath", FirstWrap;
    m_realdirpath => "File"."realdirpath", FirstWrap;
    m_each_line => "File"."foreach", First;
    m_read => "File"."read", First;
    m_binread => "File"."binread", First;
    m_readlines => "File"."readlines", First;
    m_write => "File"."write", First;
    m_binwrite => "File"."binwrite", First;
    m_sysopen => "File"."sysopen", First;
    m_atime => "File"."atime", First;
    m_birthtime => "File"."birthtime", First;
    m_ctime => "File"."ctime", First;
    m_mtime => "File"."mtime", First;
    m_chmod => "File"."chmod", Last;
    m_lchmod => "File"."lchmod", Last;
    m_chown => "File"."chown", Last;
    m_lchown => "File"."lchown", Last;
    m_ftype => "File"."ftype", First;
    m_make_link => "File"."link", Last;
    m_open => "File"."open", First;
    m_readlink => "File"."readlink", FirstWrap;
    m_rename => "File"."rename", First;
    m_stat => "File"."stat", First;
    m_lstat => "File"."lstat", First;
    m_make_symlink => "File"."symlink", Last;
    m_truncate => "File"."truncate", First;
    m_utime => "File"."utime", Last;
    m_basename => "File"."basename", FirstWrap;
    m_dirname => "File"."dirname", FirstWrap;
    m_extname => "File"."extname", First;
    m_expand_path => "File"."expand_path", FirstWrap;
    m_blockdev_p => "FileTest"."blockdev?", First;
    m_chardev_p => "FileTest"."chardev?", First;
    m_executable_p => "FileTest"."executable?", First;
    m_executable_real_p => "FileTest"."executable_real?", First;
    m_exist_p => "FileTest"."exist?", First;
    m_grpowned_p => "FileTest"."grpowned?", First;
    m_directory_p => "FileTest"."directory?", First;
    m_file_p => "FileTest"."file?", First;
    m_pipe_p => "FileTest"."pipe?", First;
    m_socket_p => "FileTest"."socket?", First;
    m_owned_p => "FileTest"."owned?", First;
    m_readable_p => "FileTest"."readable?", First;
    m_world_readable_p => "File"."world_readable?", First;
    m_readable_real_p => "FileTest"."readable_real?", First;
    m_setuid_p => "FileTest"."setuid?", First;
    m_setgid_p => "FileTest"."setgid?", First;
    m_size => "FileTest"."size", First;
    m_size_p => "FileTest"."size?", First;
    m_sticky_p => "FileTest"."sticky?", First;
    m_symlink_p => "FileTest"."symlink?", First;
    m_writable_p => "FileTest"."writable?", First;
    m_world_writable_p => "File"."world_writable?", First;
    m_writable_real_p => "FileTest"."writable_real?", First;
    m_zero_p => "FileTest"."zero?", First;
    m_mkdir => "Dir"."mkdir", First;
    m_rmdir => "Dir"."rmdir", First;
    m_opendir => "Dir"."open", First;
}

/// `fnmatch(pattern, flags = 0)`: File.fnmatch(pattern, path, flags).
fn m_fnmatch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let mut v = vec![args.pos[0], p];
    v.extend_from_slice(&args.pos[1..]);
    let file = ctx.c().file;
    ctx.call_str(file, "fnmatch", &v)
}

/// `split`: [dirname, basename] as Pathnames.
fn m_split(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let file = ctx.c().file;
    let pair = ctx.call_str(file, "split", &[p])?;
    let mark = ctx.protect(pair);
    let r = (|| {
        let d = wrap(ctx, recv, array::get(pair, 0))?;
        ctx.protect(d);
        let b = wrap(ctx, recv, array::get(pair, 1))?;
        Ok(array::from_slice(ctx, &[d, b]))
    })();
    ctx.unprotect(mark);
    r
}

/// `empty?`: an empty directory, or an empty file.
fn m_empty_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let ft = ctx.c().file_test;
    if ctx.call_str(ft, "directory?", &[p])?.truthy() {
        let dir = ctx.c().dir;
        return ctx.call_str(dir, "empty?", &[p]);
    }
    ctx.call_str(ft, "empty?", &[p])
}

/// `unlink`/`delete`: removes a directory with Dir.unlink, anything else with File.unlink.
fn m_unlink(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let is_dir = std::fs::symlink_metadata(string::to_rust_string_lossy(p)).is_ok_and(|m| m.is_dir());
    if is_dir {
        let dir = ctx.c().dir;
        ctx.call_str(dir, "unlink", &[p])
    } else {
        let file = ctx.c().file;
        ctx.call_str(file, "unlink", &[p])
    }
}

/// Wraps each String of `list` as an instance of `klass` (a new Array).
fn wrap_all(ctx: &mut Ctx, klass: Value, list: Value) -> Result<Value> {
    let mark = ctx.protect(list);
    let out = array::new(ctx);
    ctx.protect(out);
    let new = ctx.intern("new");
    let mut r = Ok(out);
    for i in 0..array::len(list) {
        match ctx.call(klass, new, &[array::get(list, i)]) {
            Ok(p) => array::push(ctx, out, p),
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    ctx.unprotect(mark);
    r
}

/// Yields each element of `list`, or returns it without a block (nil with one).
fn yield_each_or_return(ctx: &mut Ctx, list: Value, args: &Args) -> Result<Value> {
    let Some(b) = &args.block else { return Ok(list) };
    let mark = ctx.protect(list);
    let mut r = Ok(Value::NIL);
    for i in 0..array::len(list) {
        if let Err(e) = ctx.yield1(b, array::get(list, i)) {
            r = Err(e);
            break;
        }
    }
    ctx.unprotect(mark);
    r
}

fn m_entries(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let dir = ctx.c().dir;
    let names = ctx.call_str(dir, "entries", &[p])?;
    let k = object::real_class_of(ctx, recv);
    wrap_all(ctx, k, names)
}

fn m_each_entry(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let list = m_entries(ctx, recv, &Args::new(&[]))?;
    yield_each_or_return(ctx, list, args)?;
    Ok(Value::NIL)
}

/// `Pathname.glob(pattern, flags = 0, base: nil)`: Dir.glob's matches as Pathnames.
fn s_glob(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(kw) = args.kw {
        let base = ctx.intern("base");
        if let Some((k, _)) = crate::core::hash::pairs(kw).into_iter().find(|(k, _)| k.as_symbol() != Some(base)) {
            let name = crate::core::object::inspect_string(ctx, k)?;
            return Err(ctx.arg_error(&format!("unknown keyword: {name}")));
        }
    }
    let dir = ctx.c().dir;
    let glob = ctx.intern("glob");
    let names = ctx.call_kw(dir, glob, args.pos, args.kw, None)?;
    let list = wrap_all(ctx, recv, names)?;
    yield_each_or_return(ctx, list, args)
}

/// `Pathname#glob(pattern, flags = 0)`: matches under this directory, as `self + match`.
fn m_glob(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = path_of(ctx, recv)?;
    let kw = crate::core::hash::new(ctx);
    let mark = ctx.protect(kw);
    let base = ctx.intern("base");
    crate::core::hash::aset(ctx, kw, Value::symbol(base), p)?;
    let dir = ctx.c().dir;
    let glob = ctx.intern("glob");
    let names = ctx.call_kw(dir, glob, args.pos, Some(kw), None);
    ctx.unprotect(mark);
    let names = names?;
    let mark = ctx.protect(names);
    let out = array::new(ctx);
    ctx.protect(out);
    let plus = ctx.intern("+");
    let mut r = Ok(out);
    for i in 0..array::len(names) {
        match ctx.call(recv, plus, &[array::get(names, i)]) {
            Ok(v) => array::push(ctx, out, v),
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    ctx.unprotect(mark);
    let list = r?;
    yield_each_or_return(ctx, list, args)
}

fn s_getwd(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let dir = ctx.c().dir;
    let cwd = ctx.call_str(dir, "getwd", &[])?;
    let new = ctx.intern("new");
    ctx.call(recv, new, &[cwd])
}

/// `Kernel#Pathname(arg)`: `arg` itself when it is a Pathname, else Pathname.new(arg).
fn k_pathname(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let arg = args.pos[0];
    let k = constant(ctx, "Pathname");
    if object::real_class_of(ctx, arg) == k {
        return Ok(arg);
    }
    let new = ctx.intern("new");
    ctx.call(k, new, &[arg])
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let k = crate::core::module_methods::define_class_under(ctx, obj, "Pathname", obj);
    crate::methods!(ctx, k, [
        ("initialize", m_initialize, [1], Unsafe, Private),
        ("freeze", m_freeze, [0], Unsafe),
        ("to_s", m_to_s, [0], Unsafe),
        ("to_path", m_to_s, [0], Unsafe),
        ("==", m_eq, [1], Unsafe),
        ("===", m_eq, [1], Unsafe),
        ("eql?", m_eq, [1], Unsafe),
        ("<=>", m_cmp, [1], Unsafe),
        ("hash", m_hash, [0], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
        ("sub", m_sub, [0..], Unsafe),
        ("sub_ext", m_sub_ext, [1], Unsafe),
        ("realpath", m_realpath, [0..=1], Unsafe),
        ("realdirpath", m_realdirpath, [0..=1], Unsafe),
        ("each_line", m_each_line, [0..], Unsafe, Kw),
        ("read", m_read, [0..], Unsafe, Kw),
        ("binread", m_binread, [0..=2], Unsafe),
        ("readlines", m_readlines, [0..], Unsafe, Kw),
        ("write", m_write, [0..], Unsafe, Kw),
        ("binwrite", m_binwrite, [0..], Unsafe, Kw),
        ("sysopen", m_sysopen, [0..=2], Unsafe),
        ("atime", m_atime, [0], Unsafe),
        ("birthtime", m_birthtime, [0], Unsafe),
        ("ctime", m_ctime, [0], Unsafe),
        ("mtime", m_mtime, [0], Unsafe),
        ("chmod", m_chmod, [1], Unsafe),
        ("lchmod", m_lchmod, [1], Unsafe),
        ("chown", m_chown, [2], Unsafe),
        ("lchown", m_lchown, [2], Unsafe),
        ("fnmatch", m_fnmatch, [1..=2], Unsafe),
        ("fnmatch?", m_fnmatch, [1..=2], Unsafe),
        ("ftype", m_ftype, [0], Unsafe),
        ("make_link", m_make_link, [1], Unsafe),
        ("open", m_open, [0..], Unsafe, Kw),
        ("readlink", m_readlink, [0], Unsafe),
        ("rename", m_rename, [1], Unsafe),
        ("stat", m_stat, [0], Unsafe),
        ("lstat", m_lstat, [0], Unsafe),
        ("make_symlink", m_make_symlink, [1], Unsafe),
        ("truncate", m_truncate, [1], Unsafe),
        ("utime", m_utime, [2], Unsafe),
        ("basename", m_basename, [0..=1], Unsafe),
        ("dirname", m_dirname, [0], Unsafe),
        ("extname", m_extname, [0], Unsafe),
        ("expand_path", m_expand_path, [0..=1], Unsafe),
        ("split", m_split, [0], Unsafe),
        ("blockdev?", m_blockdev_p, [0], Unsafe),
        ("chardev?", m_chardev_p, [0], Unsafe),
        ("executable?", m_executable_p, [0], Unsafe),
        ("executable_real?", m_executable_real_p, [0], Unsafe),
        ("exist?", m_exist_p, [0], Unsafe),
        ("grpowned?", m_grpowned_p, [0], Unsafe),
        ("directory?", m_directory_p, [0], Unsafe),
        ("file?", m_file_p, [0], Unsafe),
        ("pipe?", m_pipe_p, [0], Unsafe),
        ("socket?", m_socket_p, [0], Unsafe),
        ("owned?", m_owned_p, [0], Unsafe),
        ("readable?", m_readable_p, [0], Unsafe),
        ("world_readable?", m_world_readable_p, [0], Unsafe),
        ("readable_real?", m_readable_real_p, [0], Unsafe),
        ("setuid?", m_setuid_p, [0], Unsafe),
        ("setgid?", m_setgid_p, [0], Unsafe),
        ("size", m_size, [0], Unsafe),
        ("size?", m_size_p, [0], Unsafe),
        ("sticky?", m_sticky_p, [0], Unsafe),
        ("symlink?", m_symlink_p, [0], Unsafe),
        ("writable?", m_writable_p, [0], Unsafe),
        ("world_writable?", m_world_writable_p, [0], Unsafe),
        ("writable_real?", m_writable_real_p, [0], Unsafe),
        ("zero?", m_zero_p, [0], Unsafe),
        ("empty?", m_empty_p, [0], Unsafe),
        ("glob", m_glob, [1..=2], Unsafe),
        ("entries", m_entries, [0], Unsafe),
        ("mkdir", m_mkdir, [0..=1], Unsafe),
        ("rmdir", m_rmdir, [0], Unsafe),
        ("opendir", m_opendir, [0], Unsafe),
        ("each_entry", m_each_entry, [0], Unsafe),
        ("unlink", m_unlink, [0], Unsafe),
        ("delete", m_unlink, [0], Unsafe),
    ]);
    let meta = object::singleton_class(ctx, k)?;
    crate::methods!(ctx, meta, [
        ("glob", s_glob, [1..=2], Unsafe, Kw),
        ("getwd", s_getwd, [0], Unsafe),
        ("pwd", s_getwd, [0], Unsafe),
    ]);
    let kernel = ctx.c().kernel;
    crate::methods!(ctx, kernel, [
        ("Pathname", k_pathname, [1], Unsafe, ModuleFunction),
    ]);
    let eqt = ctx.intern("=~");
    crate::core::module_methods::undef_method(ctx, k, eqt)?;
    Ok(())
}
