//! IO's class methods that open a file, do one thing and close it (`IO.read`, `write`,
//! `binread`, `binwrite`, `readlines`, `foreach`), plus `IO.new`/`for_fd`/`open`/`sysopen`/
//! `try_convert`.
//!
//! Invariants: the whole-file methods open through `File.new` (so every open keyword and
//! error is File's) and read or write through the instance methods (so limits, separators,
//! encodings and `chomp:` behave exactly as on an open IO); the file is closed before they
//! return, also when they raise.

use crate::core::io::{close, io_ref, open_mode};
use crate::core::{hash, integer, object, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The keywords of `args` with `mode:` set to `mode` unless the caller gave one.
fn open_kw(ctx: &mut Ctx, args: &Args, mode: Value) -> Result<Value> {
    let kw = match args.kw {
        Some(k) => hash::dup(ctx, k),
        None => hash::new(ctx),
    };
    let key = Value::symbol(ctx.intern("mode"));
    if hash::get(kw, key).is_none() {
        hash::aset(ctx, kw, key, mode)?;
    }
    Ok(kw)
}

/// Opens `path` as a File with keywords `kw`, runs `f` on it and closes it.
/// With `open_args: [mode, perm, {opts}]` among the keywords, those arguments alone open
/// the file (the other keywords are disregarded).
fn with_file(ctx: &mut Ctx, path: Value, kw: Value, f: impl FnOnce(&mut Ctx, Value) -> Result<Value>) -> Result<Value> {
    // The path (made by `path_value`) and the keywords may live only in Rust locals and in
    // the argument vector below, which the collector does not see.
    let mark = ctx.protect(path);
    ctx.protect(kw);
    let r = open_and_run(ctx, path, kw, f);
    ctx.unprotect(mark);
    r
}

fn open_and_run(ctx: &mut Ctx, path: Value, kw: Value, f: impl FnOnce(&mut Ctx, Value) -> Result<Value>) -> Result<Value> {
    let file = ctx.c().file;
    let new = ctx.intern("new");
    let key = Value::symbol(ctx.intern("open_args"));
    let io = match hash::get(kw, key).filter(|v| !v.is_nil()) {
        Some(oa) => {
            let oa = crate::core::array::to_ary_arg(ctx, oa)?;
            let mut pos = vec![path];
            pos.extend(crate::core::array::to_vec(oa));
            let okw = match pos.last() {
                Some(&h) if pos.len() > 1 && hash::is_hash(h) => {
                    pos.pop();
                    Some(h)
                }
                _ => None,
            };
            ctx.call_kw(file, new, &pos, okw, None)?
        }
        None if string::bytes(path).starts_with(b"|") => {
            // "|command": the command's output or input, through IO.popen (deprecated).
            if crate::core::warning::enabled(ctx, "deprecated") {
                crate::core::warning::emit(ctx, "warning: IO process creation with a leading '|' is deprecated and will be removed in Ruby 4.0; use IO.popen instead\n", Some("deprecated"))?;
            }
            let cmd = string::new_from_bytes(ctx, &string::bytes(path)[1..]);
            let mkey = Value::symbol(ctx.intern("mode"));
            let mode = hash::get(kw, mkey).unwrap_or(Value::NIL);
            let mode = if string::is_string(mode) { mode } else { string::new_utf8(ctx, "r") };
            let io = ctx.c().io;
            ctx.call_str(io, "popen", &[cmd, mode])?
        }
        None => ctx.call_kw(file, new, &[path], Some(kw), None)?,
    };
    let r = f(ctx, io);
    let c = close(ctx, io);
    let v = r?;
    c?;
    Ok(v)
}

fn path_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if io_ref(v).is_some() || v.is_fixnum() {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("no implicit conversion of {cname} into String")));
    }
    let c = crate::core::file::stat::cpath_arg(ctx, v)?;
    Ok(string::new_from_bytes(ctx, c.as_bytes()))
}

fn offset_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<Option<i64>> {
    match v {
        Some(&o) if !o.is_nil() => {
            let n = integer::to_i64_arg(ctx, o)?;
            if n < 0 {
                return Err(ctx.arg_error(&format!("negative offset {n} given")));
            }
            Ok(Some(n))
        }
        _ => Ok(None),
    }
}

fn length_arg(ctx: &mut Ctx, v: Option<&Value>) -> Result<Value> {
    match v {
        Some(&l) if !l.is_nil() => {
            let n = integer::to_i64_arg(ctx, l)?;
            if n < 0 {
                return Err(ctx.arg_error(&format!("negative length {n} given")));
            }
            Ok(Value::fixnum(n))
        }
        _ => Ok(Value::NIL),
    }
}

fn read_common(ctx: &mut Ctx, args: &Args, mode: &str) -> Result<Value> {
    let path = path_value(ctx, args.pos[0])?;
    let len = length_arg(ctx, args.pos.get(1))?;
    let off = offset_arg(ctx, args.pos.get(2))?;
    let m = string::new_utf8(ctx, mode);
    let kw = open_kw(ctx, args, m)?;
    with_file(ctx, path, kw, |ctx, f| {
        if let Some(off) = off {
            ctx.call_str(f, "seek", &[Value::fixnum(off)])?;
        }
        if len.is_nil() {
            ctx.call_str(f, "read", &[])
        } else {
            ctx.call_str(f, "read", &[len])
        }
    })
}

/// `IO.read(path, length = nil, offset = nil, **opts)`.
fn s_read(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    read_common(ctx, args, "r")
}

/// `IO.binread(path, length = nil, offset = nil)`.
fn s_binread(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    read_common(ctx, args, "rb:ASCII-8BIT")
}

fn write_common(ctx: &mut Ctx, args: &Args, binary: bool) -> Result<Value> {
    let path = path_value(ctx, args.pos[0])?;
    let data = args.pos[1];
    let off = offset_arg(ctx, args.pos.get(2))?;
    // With an offset the file is not truncated (CRuby opens it "r+" and creates it).
    let mode = match off {
        Some(_) => Value::fixnum((libc::O_WRONLY | libc::O_CREAT) as i64),
        None => string::new_utf8(ctx, if binary { "wb" } else { "w" }),
    };
    let kw = open_kw(ctx, args, mode)?;
    if binary && off.is_some() {
        let key = Value::symbol(ctx.intern("binmode"));
        if hash::get(kw, key).is_none() {
            hash::aset(ctx, kw, key, Value::TRUE)?;
        }
    }
    with_file(ctx, path, kw, |ctx, f| {
        if let Some(off) = off {
            ctx.call_str(f, "seek", &[Value::fixnum(off)])?;
        }
        ctx.call(f, sym::WRITE, &[data])
    })
}

/// `IO.write(path, data, offset = nil, **opts)`.
fn s_write(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    write_common(ctx, args, false)
}

/// `IO.binwrite(path, data, offset = nil, **opts)`.
fn s_binwrite(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    write_common(ctx, args, true)
}

/// The keywords the line readers take (`chomp:`), separated from the open keywords.
fn line_kw(ctx: &mut Ctx, args: &Args) -> Result<Option<Value>> {
    let Some(c) = args.kwarg(ctx, "chomp") else { return Ok(None) };
    let kw = hash::new(ctx);
    let key = Value::symbol(ctx.intern("chomp"));
    hash::aset(ctx, kw, key, c)?;
    Ok(Some(kw))
}

/// `IO.readlines(path, sep = $/, limit = nil, chomp: false, **opts)`.
fn s_readlines(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let path = path_value(ctx, args.pos[0])?;
    let m = string::new_utf8(ctx, "r");
    let kw = open_kw(ctx, args, m)?;
    let lkw = line_kw(ctx, args)?;
    let rest = args.pos[1..].to_vec();
    let readlines = ctx.intern("readlines");
    with_file(ctx, path, kw, |ctx, f| ctx.call_kw(f, readlines, &rest, lkw, None))
}

/// `IO.foreach(path, sep = $/, limit = nil, chomp: false, **opts) { |line| }`; an
/// Enumerator without a block.
fn s_foreach(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(block) = args.block else {
        return crate::core::enumerator::enum_for_kw(ctx, recv, "foreach", args.pos, args.kw, None);
    };
    let path = path_value(ctx, args.pos[0])?;
    let m = string::new_utf8(ctx, "r");
    let kw = open_kw(ctx, args, m)?;
    let lkw = line_kw(ctx, args)?;
    let rest = args.pos[1..].to_vec();
    let each_line = ctx.intern("each_line");
    with_file(ctx, path, kw, |ctx, f| ctx.call_kw(f, each_line, &rest, lkw, Some(block)))?;
    Ok(Value::NIL)
}

/// `IO.sysopen(path, mode = "r", perm = 0666)`: the new descriptor.
fn s_sysopen(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let c = crate::core::file::stat::cpath_arg(ctx, args.pos[0])?;
    let (m, perm) = open_mode::extract(ctx, args.pos.get(1).copied(), args.pos.get(2).copied(), &Args::new(&[]))?;
    // SAFETY: c is NUL-terminated.
    let fd = unsafe { libc::open(c.as_ptr(), m.flags | libc::O_CLOEXEC, perm) };
    if fd < 0 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, &format!("rb_sysopen - {}", String::from_utf8_lossy(c.as_bytes()))));
    }
    Ok(Value::fixnum(fd as i64))
}

/// `IO.try_convert(obj)`: an IO, `obj.to_io`, or nil.
fn s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if io_ref(v).is_some() {
        return Ok(v);
    }
    let to_io = ctx.intern("to_io");
    if !ctx.respond_to(v, to_io, true) {
        return Ok(Value::NIL);
    }
    let r = ctx.call(v, to_io, &[])?;
    if !r.is_nil() && io_ref(r).is_none() {
        let (c, rc) = (object::class_name_of(ctx, v), object::class_name_of(ctx, r));
        return Err(ctx.type_error(&format!("can't convert {c} into IO ({c}#to_io gives {rc})")));
    }
    Ok(r)
}

/// `IO#initialize(fd, mode = nil, **opts)` (also `IO.for_fd`).
fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() || args.pos.len() > 2 {
        return Err(ctx.arity_error(args.pos.len(), 1, Some(2)));
    }
    if args.block.is_some() {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        let cname = object::class_name_of(ctx, recv);
        crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: {cname}::new() does not take block; use {cname}::open() instead\n"), None)?;
    }
    let fd = integer::to_int_arg(ctx, args.pos[0])?;
    let (m, _) = open_mode::extract(ctx, args.pos.get(1).copied(), None, args)?;
    let given = args.pos.get(1).is_some_and(|v| !v.is_nil()) || args.kwarg(ctx, "mode").is_some_and(|v| !v.is_nil());
    let klass = object::real_class_of(ctx, recv);
    let io = crate::core::file::io_for_fd(ctx, klass, fd, given.then_some(m))?;
    crate::core::io::apply_encoding_kwargs(ctx, io, args)?;
    if let (Some(a), Some(o)) = (args.kwarg(ctx, "autoclose"), io_ref(io)) {
        o.autoclose = a.truthy();
    }
    crate::object::move_data(recv, io);
    Ok(Value::NIL)
}

/// `IO.for_fd(fd, mode = nil, **opts)`: `new`.
fn s_for_fd(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let io = object::allocate(ctx, recv)?;
    ctx.call_kw(io, sym::INITIALIZE, args.pos, args.kw, None)?;
    Ok(io)
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::core::module::body(io).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, io, [
        ("read", s_read, [1..=3], Unsafe, Singleton, Kw),
        ("binread", s_binread, [1..=3], Unsafe, Singleton),
        ("write", s_write, [2..=3], Unsafe, Singleton, Kw),
        ("binwrite", s_binwrite, [2..=3], Unsafe, Singleton, Kw),
        ("readlines", s_readlines, [1..=3], Unsafe, Singleton, Kw),
        ("foreach", s_foreach, [1..=3], Unsafe, Singleton, Kw),
        ("sysopen", s_sysopen, [1..=3], Unsafe, Singleton),
        ("try_convert", s_try_convert, [1], Unsafe, Singleton),
        ("for_fd", s_for_fd, [1..=2], Unsafe, Singleton, Kw),
        ("initialize", m_initialize, [0..], Unsafe, Private, Kw),
    ]);
}
