//! ARGF (`$<`): the files named in ARGV read as one stream, or standard input when ARGV
//! is empty; `Kernel#gets`/`readline`/`readlines` read from it.
//!
//! Invariants:
//! - The object reads the Array it was made with (`ARGF.class.new(*files)`), or the
//!   `ARGV` constant itself for the global `ARGF` (so `ARGF.argv.equal?(ARGV)`); a file
//!   name is shifted off that Array when the file is opened, "-" meaning standard input.
//! - Reading goes through the current file's own IO methods (so separators, limits,
//!   `chomp:` and encodings behave as on an IO); at a file's end it is closed (unless it is
//!   standard input) and the next one opened, until the Array is empty.
//! - `lineno` counts lines across all files and is mirrored in `$.`.
//! - In-place editing (`-i`, `inplace_mode=`, `$-i`): opening a file moves it aside (to
//!   its backup name, or unlinks it), reads the old contents and makes a new file of the
//!   same name and mode the process's `$stdout`; opening the next one closes that output
//!   first. Standard input is never edited in place.

use crate::core::{array, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct ArgfObj {
    /// The file list, or nil for the `ARGV` constant.
    argv: Value,
    current: Value,
    filename: Value,
    lineno: i64,
    /// Whether a file (or standard input) has been opened yet.
    started: bool,
    binmode: bool,
    /// In-place editing: the backup extension (empty for no backup); None when off.
    inplace: Option<Vec<u8>>,
    /// The new file that the file being edited in place is written to (else nil).
    write_io: Value,
}

crate::data_obj!(ArgfObj, |a, m| {
    m.mark(a.argv);
    m.mark(a.current);
    m.mark(a.filename);
    m.mark(a.write_io);
});

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut ArgfObj> {
    match data_ref::<ArgfObj>(v) {
        Some(a) => Ok(a),
        None => Err(ctx.type_error("uninitialized ARGF")),
    }
}

fn argv_of(ctx: &mut Ctx, a: &ArgfObj) -> Value {
    if !a.argv.is_nil() {
        return a.argv;
    }
    let id = ctx.intern("ARGV");
    crate::core::module::body(ctx.c().object).const_get(id).map_or(Value::NIL, |e| e.value)
}

/// Makes sure a file is open for reading; false when every file has been read.
fn next_file(ctx: &mut Ctx, recv: Value) -> Result<bool> {
    let a = get(ctx, recv)?;
    if !a.current.is_nil() && crate::core::io::io_ref(a.current).is_some_and(|io| !io.closed) {
        if a.inplace.is_some() && no_more_files(argv_of(ctx, a)) && string::is_string(a.filename) && string::bytes(a.filename) == b"-" {
            // As CRuby, every read of standard input in place of files says so again.
            stdin_not_in_place(ctx)?;
        }
        return Ok(true);
    }
    loop {
        let a = get(ctx, recv)?;
        let argv = argv_of(ctx, a);
        let inplace = a.inplace.clone();
        if no_more_files(argv) {
            if a.started {
                return Ok(false);
            }
            a.started = true;
            let stdin = crate::core::globals::get(ctx, sym::DOLLAR_STDIN)?;
            let a = get(ctx, recv)?;
            a.current = stdin;
            a.filename = string::new_utf8(ctx, "-");
            if inplace.is_some() {
                stdin_not_in_place(ctx)?;
            }
            return Ok(true);
        }
        let name = array::rarray(argv).items_mut().remove(0);
        get(ctx, recv)?.started = true;
        let fname = string::to_str_arg(ctx, name)?;
        let io = if string::bytes(fname) == b"-" {
            if inplace.is_some() {
                warn(ctx, "Can't do inplace edit for stdio; skipping");
                continue;
            }
            crate::core::globals::get(ctx, sym::DOLLAR_STDIN)?
        } else {
            let file = ctx.c().file;
            let open = ctx.intern("open");
            let bin = get(ctx, recv)?.binmode;
            let mode = string::new_utf8(ctx, if bin { "rb" } else { "r" });
            let io = ctx.call(file, open, &[fname, mode])?;
            if let Some(ext) = inplace {
                if !edit_in_place(ctx, recv, io, fname, &ext)? {
                    crate::core::io::close(ctx, io)?;
                    continue;
                }
            }
            io
        };
        let a = get(ctx, recv)?;
        a.current = io;
        a.filename = fname;
        return Ok(true);
    }
}

/// Reading standard input while editing in place: a warning, and output goes to the
/// original standard output.
fn stdin_not_in_place(ctx: &mut Ctx) -> Result<()> {
    warn(ctx, "Can't do inplace edit for stdio");
    let orig = crate::core::module::body(ctx.c().object).const_get(ctx.intern("STDOUT")).map_or(Value::NIL, |e| e.value);
    crate::core::globals::set(ctx, sym::DOLLAR_STDOUT, orig)
}

/// `warning: …` at the Ruby caller's line (silenced when `$VERBOSE` is nil).
fn warn(ctx: &mut Ctx, msg: &str) {
    let (path, line) = crate::core::kernel::caller_location(ctx);
    crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: {msg}\n"));
}

/// Starts editing `fname` in place, its old contents open as `input`: moves the file to
/// its backup name (or unlinks it), creates a new one with the old mode and owner and
/// makes it `$stdout`. False (after a warning) when the file cannot be moved aside.
fn edit_in_place(ctx: &mut Ctx, recv: Value, input: Value, fname: Value, ext: &[u8]) -> Result<bool> {
    use std::os::unix::ffi::OsStrExt;
    let fd = crate::core::io::io_ref(input).map_or(-1, |io| io.fd);
    // SAFETY: fstat writes into a zeroed stat buffer.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        libc::fstat(fd, &mut st);
        st
    };
    // The output of the previous file is finished before the next one starts.
    let prev = crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?;
    let orig = crate::core::module::body(ctx.c().object).const_get(ctx.intern("STDOUT")).map_or(Value::NIL, |e| e.value);
    if prev != orig && object::is_a(ctx, prev, ctx.c().file) && crate::core::io::io_ref(prev).is_some_and(|io| !io.closed) {
        crate::core::io::close(ctx, prev)?;
    }
    let name = string::bytes(fname).to_vec();
    let shown = String::from_utf8_lossy(&name).into_owned();
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&name));
    if !ext.is_empty() {
        let mut backup = name.clone();
        backup.extend_from_slice(ext);
        let backup_path = std::path::Path::new(std::ffi::OsStr::from_bytes(&backup));
        if let Err(e) = std::fs::rename(path, backup_path) {
            let why = crate::core::exception::errno_description(e.raw_os_error().unwrap_or(libc::EIO));
            warn(ctx, &format!("Can't rename {shown} to {}: {why}, skipping file", String::from_utf8_lossy(&backup)));
            return Ok(false);
        }
    } else if let Err(e) = std::fs::remove_file(path) {
        let why = crate::core::exception::errno_description(e.raw_os_error().unwrap_or(libc::EIO));
        warn(ctx, &format!("Can't remove {shown}: {why}, skipping file"));
        return Ok(false);
    }
    let Ok(cpath) = std::ffi::CString::new(name.clone()) else {
        return Err(ctx.arg_error("string contains null byte"));
    };
    // SAFETY: cpath is a NUL-terminated path.
    let out = unsafe { libc::open(cpath.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC, 0o666) };
    if out < 0 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, &format!("rb_sysopen - {shown}")));
    }
    // SAFETY: out is the descriptor just opened; failures leave the defaults (as CRuby).
    unsafe {
        libc::fchmod(out, st.st_mode & 0o7777);
        if st.st_uid != libc::geteuid() || st.st_gid != libc::getegid() {
            libc::fchown(out, st.st_uid, st.st_gid);
        }
    }
    let file = ctx.c().file;
    let w = crate::core::io::new_io(ctx, file, out, false, true, Some(shown));
    get(ctx, recv)?.write_io = w;
    crate::core::globals::set(ctx, sym::DOLLAR_STDOUT, w)?;
    Ok(true)
}

fn m_inplace_mode(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(match get(ctx, recv)?.inplace.clone() {
        Some(ext) => string::new_from_bytes(ctx, &ext),
        None => Value::NIL,
    })
}

/// `inplace_mode = ext`: nil or false turns editing off, "" edits without a backup.
fn m_set_inplace_mode(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_inplace(ctx, recv, args.pos[0])?;
    Ok(args.pos[0])
}

fn set_inplace(ctx: &mut Ctx, recv: Value, v: Value) -> Result<()> {
    let mode = if v.truthy() {
        let s = string::to_str_arg(ctx, v)?;
        let b = string::bytes(s).to_vec();
        if b.contains(&0) {
            return Err(ctx.arg_error("string contains null byte"));
        }
        Some(b)
    } else {
        None
    };
    get(ctx, recv)?.inplace = mode;
    Ok(())
}

fn inplace_getter(ctx: &mut Ctx) -> Result<Value> {
    let argf = argf_object(ctx);
    m_inplace_mode(ctx, argf, &Args::new(&[]))
}

fn inplace_setter(ctx: &mut Ctx, v: Value) -> Result<()> {
    let argf = argf_object(ctx);
    set_inplace(ctx, argf, v)
}

/// Turns in-place editing on for the global ARGF (the `-i[ext]` switch).
pub fn set_inplace_mode(ctx: &mut Ctx, ext: &[u8]) -> Result<()> {
    let argf = argf_object(ctx);
    get(ctx, argf)?.inplace = Some(ext.to_vec());
    Ok(())
}

/// Where ARGF's writers go: the new file of the file being edited in place.
fn m_to_write_io(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    if a.current.is_nil() {
        return Err(ctx.raise(ctx.c().io_error, "not opened for writing"));
    }
    if !a.write_io.is_nil() {
        return Ok(a.write_io);
    }
    Ok(a.current)
}

macro_rules! writers {
    ($($fname:ident => $name:expr;)*) => {
        $(fn $fname(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
            let w = m_to_write_io(ctx, recv, args)?;
            ctx.call_str(w, $name, args.pos)
        })*
    };
}

writers! {
    m_write => "write";
    m_print => "print";
    m_puts => "puts";
    m_printf => "printf";
    m_putc => "putc";
}

/// At the end of the current file: moves on (closing it) when more files remain, true;
/// false when it was the last one, which stays current (as in CRuby, `file` and `eof?`
/// still answer for it).
fn advance(ctx: &mut Ctx, recv: Value) -> Result<bool> {
    let a = get(ctx, recv)?;
    let argv = argv_of(ctx, a);
    if no_more_files(argv) {
        return Ok(false);
    }
    finish_file(ctx, recv)?;
    Ok(true)
}

/// Finishes the current file (closing it unless it is standard input).
fn finish_file(ctx: &mut Ctx, recv: Value) -> Result<()> {
    let a = get(ctx, recv)?;
    let cur = std::mem::replace(&mut a.current, Value::NIL);
    a.write_io = Value::NIL;
    let stdin = crate::core::globals::get(ctx, sym::DOLLAR_STDIN)?;
    if !cur.is_nil() && cur != stdin && crate::core::io::io_ref(cur).is_some_and(|io| !io.closed) {
        crate::core::io::close(ctx, cur)?;
    }
    Ok(())
}

fn set_lineno(ctx: &mut Ctx, n: i64) -> Result<()> {
    crate::core::globals::set(ctx, sym::DOLLAR_DOT, Value::fixnum(n))
}

/// One line from the stream (None at the end of the last file).
fn read_line(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    loop {
        if !next_file(ctx, recv)? {
            return Ok(Value::NIL);
        }
        let cur = get(ctx, recv)?.current;
        let line = ctx.call_kw(cur, gets_id(ctx), args.pos, args.kw, None)?;
        if line.is_nil() {
            if advance(ctx, recv)? {
                continue;
            }
            return Ok(Value::NIL);
        }
        let a = get(ctx, recv)?;
        a.lineno += 1;
        let n = a.lineno;
        set_lineno(ctx, n)?;
        return Ok(line);
    }
}

/// No more file names: the list is nil or empty.
fn no_more_files(argv: Value) -> bool {
    argv.is_nil() || (array::is_array(argv) && array::len(argv) == 0)
}

fn gets_id(ctx: &Ctx) -> crate::symbol::SymId {
    ctx.intern("gets")
}

fn m_gets(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let line = read_line(ctx, recv, args)?;
    crate::interp::ops::set_caller_last_line(ctx, line);
    Ok(line)
}

fn m_readline(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let line = read_line(ctx, recv, args)?;
    if line.is_nil() {
        return Err(crate::core::io::eof_error(ctx));
    }
    crate::interp::ops::set_caller_last_line(ctx, line);
    Ok(line)
}

fn m_readlines(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    loop {
        let line = read_line(ctx, recv, args)?;
        if line.is_nil() {
            return Ok(out);
        }
        array::push(ctx, out, line);
    }
}

fn m_each_line(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_kw(ctx, recv, "each_line", args.pos, args.kw, None);
    };
    loop {
        let line = read_line(ctx, recv, args)?;
        if line.is_nil() {
            return Ok(recv);
        }
        ctx.yield1(&b, line)?;
    }
}

/// `read(length = nil, outbuf = nil)`: across file boundaries.
fn m_read(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let want = match args.pos.first() {
        Some(&n) if !n.is_nil() => Some(crate::core::integer::to_i64_arg(ctx, n)?.max(0) as usize),
        _ => None,
    };
    let mut out: Vec<u8> = Vec::new();
    let mut any = false;
    let mut enc_src = Value::NIL;
    loop {
        if want.is_some_and(|w| out.len() >= w) || !next_file(ctx, recv)? {
            break;
        }
        let cur = get(ctx, recv)?.current;
        let chunk = match want {
            Some(w) => ctx.call(cur, sym::READ, &[Value::fixnum((w - out.len()) as i64)])?,
            None => ctx.call(cur, sym::READ, &[])?,
        };
        if !chunk.is_nil() {
            any = true;
            out.extend_from_slice(string::bytes(chunk));
            enc_src = chunk;
        }
        if (chunk.is_nil() || want.is_none() || string::bytes(chunk).is_empty()) && !advance(ctx, recv)? {
            if want.is_none() {
                // Reading everything closes the last file too (it stays current, closed).
                finish_file(ctx, recv)?;
                get(ctx, recv)?.current = cur;
            }
            break;
        }
    }
    if want.is_some_and(|w| w > 0) && !any {
        return Ok(Value::NIL);
    }
    let s = string::new_binary(ctx, &out);
    if string::is_string(enc_src) && want.is_none() {
        string::set_encoding(s, string::encoding(enc_src));
    }
    if let Some(&buf) = args.pos.get(1).filter(|b| !b.is_nil()) {
        string::set_bytes(buf, out);
        return Ok(buf);
    }
    Ok(s)
}

/// Delegates a method to the current file, advancing past finished files for readers.
fn delegate(ctx: &mut Ctx, recv: Value, name: &str, args: &[Value]) -> Result<Value> {
    if !next_file(ctx, recv)? || current_closed(ctx, recv)? {
        return Err(ctx.raise(ctx.c().argument_error, "no stream"));
    }
    let cur = get(ctx, recv)?.current;
    ctx.call_str(cur, name, args)
}

/// getc/getbyte/readchar/readbyte: one unit, moving on to the next file at an end.
fn read_unit(ctx: &mut Ctx, recv: Value, name: &str, raise: bool) -> Result<Value> {
    loop {
        if !next_file(ctx, recv)? {
            return if raise { Err(crate::core::io::eof_error(ctx)) } else { Ok(Value::NIL) };
        }
        let cur = get(ctx, recv)?.current;
        let v = ctx.call_str(cur, name, &[])?;
        if !v.is_nil() {
            return Ok(v);
        }
        if !advance(ctx, recv)? {
            return if raise { Err(crate::core::io::eof_error(ctx)) } else { Ok(Value::NIL) };
        }
    }
}

fn m_getc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    read_unit(ctx, recv, "getc", false)
}

fn m_getbyte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    read_unit(ctx, recv, "getbyte", false)
}

fn m_readchar(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    read_unit(ctx, recv, "getc", true)
}

fn m_readbyte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    read_unit(ctx, recv, "getbyte", true)
}

fn each_unit(ctx: &mut Ctx, recv: Value, args: &Args, unit: &str, meth: &str) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, meth, &[], None);
    };
    loop {
        let v = read_unit(ctx, recv, unit, false)?;
        if v.is_nil() {
            return Ok(recv);
        }
        ctx.yield1(&b, v)?;
    }
}

fn m_each_char(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_unit(ctx, recv, args, "getc", "each_char")
}

fn m_each_byte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    each_unit(ctx, recv, args, "getbyte", "each_byte")
}

fn m_each_codepoint(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_codepoint", &[], None);
    };
    loop {
        let c = read_unit(ctx, recv, "getc", false)?;
        if c.is_nil() {
            return Ok(recv);
        }
        let cp = ctx.call_str(c, "ord", &[])?;
        ctx.yield1(&b, cp)?;
    }
}

fn m_eof(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !next_file(ctx, recv)? {
        if current_closed(ctx, recv)? && !get(ctx, recv)?.current.is_nil() {
            return Err(ctx.raise(ctx.c().io_error, "stream is closed"));
        }
        return Ok(Value::TRUE);
    }
    let cur = get(ctx, recv)?.current;
    ctx.call_str(cur, "eof?", &[])
}

fn m_file(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    next_file(ctx, recv)?;
    let cur = get(ctx, recv)?.current;
    Ok(if cur.is_nil() { crate::core::globals::get(ctx, sym::DOLLAR_STDIN)? } else { cur })
}

fn m_filename(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    next_file(ctx, recv)?;
    let f = get(ctx, recv)?.filename;
    Ok(if f.is_nil() { string::new_utf8(ctx, "-") } else { f })
}

fn filename_getter(ctx: &mut Ctx) -> Result<Value> {
    let argf = argf_object(ctx);
    m_filename(ctx, argf, &Args::new(&[]))
}

fn m_lineno(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.lineno))
}

fn m_set_lineno(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    get(ctx, recv)?.lineno = n;
    set_lineno(ctx, n)?;
    Ok(args.pos[0])
}

fn m_argv(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    Ok(argv_of(ctx, a))
}

/// `skip`: goes on to the next file (nothing when none is open).
fn m_skip(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !get(ctx, recv)?.current.is_nil() {
        finish_file(ctx, recv)?;
    }
    Ok(recv)
}

/// `close`: closes the current file (standard input stays open); the next read moves on.
fn m_close(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    next_file(ctx, recv)?;
    let cur = get(ctx, recv)?.current;
    finish_file(ctx, recv)?;
    let a = get(ctx, recv)?;
    a.current = cur;
    a.lineno = 0;
    Ok(recv)
}

fn current_closed(ctx: &mut Ctx, recv: Value) -> Result<bool> {
    let cur = get(ctx, recv)?.current;
    Ok(cur.is_nil() || crate::core::io::io_ref(cur).is_some_and(|io| io.closed))
}

fn m_closed(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !get(ctx, recv)?.started {
        next_file(ctx, recv)?;
    }
    Ok(Value::bool(current_closed(ctx, recv)?))
}

fn m_binmode(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    get(ctx, recv)?.binmode = true;
    let cur = get(ctx, recv)?.current;
    if !cur.is_nil() {
        ctx.call_str(cur, "binmode", &[])?;
    }
    Ok(recv)
}

fn m_binmode_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.binmode))
}

fn m_to_s(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_utf8(ctx, "ARGF"))
}

macro_rules! delegators {
    ($($fname:ident => $name:expr;)*) => {
        $(fn $fname(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
            delegate(ctx, recv, $name, args.pos)
        })*
    };
}

delegators! {
    m_pos => "pos";
    m_set_pos => "pos=";
    m_seek => "seek";
    m_rewind_cur => "rewind";
    m_fileno => "fileno";
    m_to_io => "to_io";
    m_external_encoding => "external_encoding";
    m_internal_encoding => "internal_encoding";
    m_set_encoding => "set_encoding";
}

/// `readpartial`/`read_nonblock`: from the current file; at the end of a file that is
/// not the last, "" (the next call reads the next file, as CRuby); EOFError (or nil with
/// `exception: false`) after the last one.
fn partial(ctx: &mut Ctx, recv: Value, args: &Args, name: &str) -> Result<Value> {
    let raise = match args.kwarg(ctx, "exception") {
        None => true,
        Some(v) if v == Value::TRUE || v == Value::FALSE => v.truthy(),
        Some(v) => {
            let shown = object::inspect_string(ctx, v)?;
            return Err(ctx.arg_error(&format!("expected true or false as exception: {shown}")));
        }
    };
    let mid = ctx.intern(name);
    if !next_file(ctx, recv)? {
        // The buffer is emptied even when nothing is left to read.
        if let Some(&buf) = args.pos.get(1).filter(|b| string::is_string(**b)) {
            string::set_bytes(buf, Vec::new());
        }
        return if raise { Err(crate::core::io::eof_error(ctx)) } else { Ok(Value::NIL) };
    }
    let cur = get(ctx, recv)?.current;
    match ctx.call_kw(cur, mid, args.pos, args.kw, None) {
        Ok(v) if v.is_nil() => {}
        Ok(v) => return Ok(v),
        Err(crate::error::Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().eof_error) => {}
        Err(e) => return Err(e),
    }
    if !advance(ctx, recv)? {
        return if raise { Err(crate::core::io::eof_error(ctx)) } else { Ok(Value::NIL) };
    }
    Ok(string::new_utf8(ctx, ""))
}

fn m_readpartial(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    partial(ctx, recv, args, "readpartial")
}

fn m_read_nonblock(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    partial(ctx, recv, args, "read_nonblock")
}

/// `rewind`: the current file from its start; the line count goes back by its lines.
fn m_rewind(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let cur_lines = {
        next_file(ctx, recv)?;
        let cur = get(ctx, recv)?.current;
        crate::core::io::io_ref(cur).map_or(0, |io| io.lineno)
    };
    m_rewind_cur(ctx, recv, args)?;
    let a = get(ctx, recv)?;
    a.lineno -= cur_lines;
    let n = a.lineno;
    set_lineno(ctx, n)?;
    Ok(Value::fixnum(0))
}

fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let list = array::from_vec(ctx, args.pos.to_vec());
    let k = object::real_class_of(ctx, recv);
    // The new list is reachable only from the Box until the object holds it.
    let keep = ctx.protect(list);
    let fresh = object::new_data(ctx, k, Box::new(ArgfObj { argv: list, current: Value::NIL, filename: Value::NIL, lineno: 0, started: false, binmode: false, inplace: None, write_io: Value::NIL }));
    ctx.unprotect(keep);
    crate::object::move_data(recv, fresh);
    Ok(Value::NIL)
}

/// `dup`/`clone`: the copy reads on from the same point, from its own copy of the file
/// list.
fn m_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = get(ctx, args.pos[0])?;
    let argv = argv_of(ctx, src);
    let list = if array::is_array(argv) { array::dup(ctx, argv) } else { array::new(ctx) };
    let src = get(ctx, args.pos[0])?;
    let copy = ArgfObj { argv: list, current: src.current, filename: src.filename, lineno: src.lineno, started: src.started, binmode: src.binmode, inplace: src.inplace.clone(), write_io: src.write_io };
    let k = object::real_class_of(ctx, recv);
    // The new list is reachable only from the Box until the object holds it.
    let keep = ctx.protect(list);
    let fresh = object::new_data(ctx, k, Box::new(copy));
    ctx.unprotect(keep);
    crate::object::move_data(recv, fresh);
    Ok(recv)
}

/// The global ARGF object.
pub fn argf_object(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("ARGF");
    crate::core::module::body(ctx.c().object).const_get(id).map_or(Value::NIL, |e| e.value)
}

fn k_gets(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let argf = argf_object(ctx);
    m_gets(ctx, argf, args)
}

fn k_readline(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let argf = argf_object(ctx);
    m_readline(ctx, argf, args)
}

fn k_readlines(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let argf = argf_object(ctx);
    m_readlines(ctx, argf, args)
}

pub fn init(ctx: &mut Ctx) {
    let obj = ctx.c().object;
    let k = crate::core::module_methods::new_class(ctx, obj, Some("ARGF.class"));
    let enumerable = ctx.c().enumerable;
    crate::core::module::body(k).includes.push(enumerable);
    crate::core::module::body(k).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    crate::methods!(ctx, k, [
        ("initialize", m_initialize, [0..], Unsafe, Private),
        ("initialize_copy", m_initialize_copy, [1], Unsafe, Private),
        ("gets", m_gets, [0..=2], Unsafe, Kw),
        ("readline", m_readline, [0..=2], Unsafe, Kw),
        ("readlines", m_readlines, [0..=2], Unsafe, Kw),
        ("to_a", m_readlines, [0..=2], Unsafe, Kw),
        ("each_line", m_each_line, [0..=2], Unsafe, Kw),
        ("each", m_each_line, [0..=2], Unsafe, Kw),
        ("read", m_read, [0..=2], Unsafe),
        ("readpartial", m_readpartial, [1..=2], Unsafe),
        ("read_nonblock", m_read_nonblock, [1..=2], Unsafe, Kw),
        ("getc", m_getc, [0], Unsafe),
        ("getbyte", m_getbyte, [0], Unsafe),
        ("readchar", m_readchar, [0], Unsafe),
        ("readbyte", m_readbyte, [0], Unsafe),
        ("each_char", m_each_char, [0], Unsafe),
        ("each_byte", m_each_byte, [0], Unsafe),
        ("each_codepoint", m_each_codepoint, [0], Unsafe),
        ("eof?", m_eof, [0], Unsafe),
        ("eof", m_eof, [0], Unsafe),
        ("file", m_file, [0], Unsafe),
        ("filename", m_filename, [0], Unsafe),
        ("path", m_filename, [0], Unsafe),
        ("lineno", m_lineno, [0], Unsafe),
        ("lineno=", m_set_lineno, [1], Unsafe),
        ("argv", m_argv, [0], Unsafe),
        ("skip", m_skip, [0], Unsafe),
        ("close", m_close, [0], Unsafe),
        ("closed?", m_closed, [0], Unsafe),
        ("binmode", m_binmode, [0], Unsafe),
        ("binmode?", m_binmode_p, [0], Unsafe),
        ("pos", m_pos, [0], Unsafe),
        ("tell", m_pos, [0], Unsafe),
        ("pos=", m_set_pos, [1], Unsafe),
        ("seek", m_seek, [1..=2], Unsafe),
        ("rewind", m_rewind, [0], Unsafe),
        ("fileno", m_fileno, [0], Unsafe),
        ("to_i", m_fileno, [0], Unsafe),
        ("to_io", m_to_io, [0], Unsafe),
        ("external_encoding", m_external_encoding, [0], Unsafe),
        ("internal_encoding", m_internal_encoding, [0], Unsafe),
        ("set_encoding", m_set_encoding, [1..=3], Unsafe),
        ("inplace_mode", m_inplace_mode, [0], Unsafe),
        ("inplace_mode=", m_set_inplace_mode, [1], Unsafe),
        ("to_write_io", m_to_write_io, [0], Unsafe),
        ("write", m_write, [0..], Unsafe),
        ("print", m_print, [0..], Unsafe),
        ("puts", m_puts, [0..], Unsafe),
        ("printf", m_printf, [1..], Unsafe),
        ("putc", m_putc, [1], Unsafe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_to_s, [0], Safe),
    ]);
    let argf = object::new_data(ctx, k, Box::new(ArgfObj { argv: Value::NIL, current: Value::NIL, filename: Value::NIL, lineno: 0, started: false, binmode: false, inplace: None, write_io: Value::NIL }));
    let id = ctx.intern("ARGF");
    crate::core::module::body(obj).const_set(id, argf);
    crate::core::globals::define(ctx, sym::DOLLAR_LT, argf);
    let fname = ctx.intern("$FILENAME");
    crate::core::globals::define_hooked(ctx, fname, Value::NIL, Some(filename_getter), None);
    let dash_i = ctx.intern("$-i");
    crate::core::globals::define_hooked(ctx, dash_i, Value::NIL, Some(inplace_getter), Some(inplace_setter));
    let kernel = ctx.c().kernel;
    crate::methods!(ctx, kernel, [
        ("gets", k_gets, [0..=2], Unsafe, ModuleFunction, Kw),
        ("readline", k_readline, [0..=2], Unsafe, ModuleFunction, Kw),
        ("readlines", k_readlines, [0..=2], Unsafe, ModuleFunction, Kw),
    ]);
}
