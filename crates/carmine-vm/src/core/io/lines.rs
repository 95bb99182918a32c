//! Line reading on IO: `gets`, `readline`, `each_line`, `readlines`, with CRuby's argument
//! forms (separator, limit, both, `chomp:`), paragraph mode (`""`) and whole-rest mode (nil).
//!
//! Invariants:
//! - A limit counts bytes but never splits a character of the read encoding: up to 16
//!   more bytes are read to complete the last one (as CRuby's `rb_io_getline_0`).
//! - In paragraph mode newlines before a paragraph and after its `"\n\n"` are skipped.
//! - Every line read bumps the IO's `lineno` and sets `$.` to it.

use crate::core::io::{check_readable, fill, io_ref, read_encoding, read_string, IoObj};
use crate::core::{array, integer, string};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// How one line is cut: by `sep` (None = the whole rest), at most `limit` bytes.
pub(crate) struct LineSpec {
    pub sep: Option<Vec<u8>>,
    pub paragraph: bool,
    pub limit: Option<usize>,
    /// A limit of 0 was given (gets answers "", the iterators raise).
    pub zero_limit: bool,
    pub chomp: bool,
}

fn limit_value(ctx: &mut Ctx, v: Value) -> Result<(Option<usize>, bool)> {
    let n = integer::to_i64_arg(ctx, v)?;
    Ok(match n {
        0 => (None, true),
        n if n < 0 => (None, false),
        n => (Some(n as usize), false),
    })
}

/// Reads the `(sep = $/, limit = nil, chomp: false)` arguments the CRuby way: a single
/// argument is a separator if it converts with `to_str`, else a limit.
pub(crate) fn line_spec(ctx: &mut Ctx, pos: &[Value], chomp: bool) -> Result<LineSpec> {
    let default_sep = crate::core::globals::get(ctx, sym::DOLLAR_SLASH)?;
    let (sep, limit) = match pos {
        [] => (default_sep, Value::NIL),
        [a] if a.is_nil() => (Value::NIL, Value::NIL),
        [a] => match string::try_to_str(ctx, *a)? {
            Some(s) => (s, Value::NIL),
            None => (default_sep, *a),
        },
        [a, l, ..] => {
            let s = if a.is_nil() { Value::NIL } else { string::to_str_arg(ctx, *a)? };
            (s, *l)
        }
    };
    let (limit, zero_limit) = if limit.is_nil() { (None, false) } else { limit_value(ctx, limit)? };
    let (sep, paragraph) = if sep.is_nil() {
        (None, false)
    } else {
        let b = string::bytes(sep).to_vec();
        if b.is_empty() {
            (Some(b"\n\n".to_vec()), true)
        } else {
            (Some(b), false)
        }
    };
    Ok(LineSpec { sep, paragraph, limit, zero_limit, chomp })
}

fn spec_from_args(ctx: &mut Ctx, args: &Args) -> Result<LineSpec> {
    let chomp = args.kwarg(ctx, "chomp").is_some_and(|v| v.truthy());
    line_spec(ctx, args.pos, chomp)
}

/// Skips newlines at the read position (paragraph mode).
fn swallow_newlines(ctx: &mut Ctx, io: &mut IoObj) -> Result<()> {
    loop {
        while io.rpos < io.rbuf.len() && io.rbuf[io.rpos] == b'\n' {
            io.rpos += 1;
        }
        if io.rpos < io.rbuf.len() || !fill(ctx, io)? {
            return Ok(());
        }
    }
}

/// Bytes still needed to complete the character that `line` ends inside (0 if it ends
/// on a boundary or the tail is no valid prefix).
fn bytes_to_complete(enc: u8, line: &[u8]) -> usize {
    let mut i = 0;
    while i < line.len() {
        let last = i;
        match crate::core::encoding::precise_char_len(enc, line, i) {
            Ok(n) => i += n,
            Err(n) => {
                if i + n >= line.len() {
                    // The tail is cut; how long would the character be?
                    return needed_len(enc, &line[last..]).saturating_sub(line.len() - last);
                }
                i += n;
            }
        }
    }
    0
}

/// The full length of the character whose first bytes are `head` (0 if unknown).
fn needed_len(enc: u8, head: &[u8]) -> usize {
    if crate::core::encoding::is_utf8(enc) {
        let n = match head[0] {
            0xc2..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf4 => 4,
            _ => return 0,
        };
        // Only a well-formed prefix is worth completing.
        let mut probe = head.to_vec();
        probe.resize(n, 0x80);
        if head.len() >= 2 {
            probe[1] = head[1];
        }
        return match crate::core::encoding::utf8_precise_len(&probe, 0) {
            Err(k) if k < head.len() => 0,
            _ => n,
        };
    }
    let unit = crate::core::encoding::ENCODINGS.get(enc as usize).map_or(1, |e| e.unit.max(1)) as usize;
    if unit > 1 {
        unit
    } else {
        0
    }
}

/// Reads one line; None at end of file.
pub(crate) fn read_line(ctx: &mut Ctx, v: Value, spec: &LineSpec) -> Result<Option<Vec<u8>>> {
    check_readable(ctx, v)?;
    let io = io_ref(v).expect("io");
    if spec.paragraph {
        swallow_newlines(ctx, io)?;
    }
    let mut searched: usize = 0;
    let (mut end, by_sep) = loop {
        let avail = &io.rbuf[io.rpos..];
        let found = match &spec.sep {
            Some(s) => {
                let from = searched.saturating_sub(s.len() - 1);
                find_bytes(&avail[from..], s).map(|p| from + p + s.len())
            }
            None => None,
        };
        searched = avail.len();
        match (found, spec.limit) {
            (Some(e), Some(l)) if l < e => break (l, false),
            (Some(e), _) => break (e, true),
            (None, Some(l)) if avail.len() >= l => break (l, false),
            _ => {}
        }
        if !fill(ctx, io)? {
            if io.rpos >= io.rbuf.len() {
                return Ok(None);
            }
            break (io.rbuf.len() - io.rpos, false);
        }
    };
    if !by_sep && spec.limit == Some(end) {
        let enc = read_encoding(ctx, io);
        let mut extra = 16;
        loop {
            let need = bytes_to_complete(enc, &io.rbuf[io.rpos..io.rpos + end]);
            if need == 0 || extra == 0 {
                break;
            }
            while io.rbuf.len() - io.rpos < end + need {
                if !fill(ctx, io)? {
                    break;
                }
            }
            let more = need.min(io.rbuf.len() - io.rpos - end).min(extra);
            if more == 0 {
                break;
            }
            end += more;
            extra -= more;
        }
    }
    let line = io.rbuf[io.rpos..io.rpos + end].to_vec();
    io.rpos += end;
    if spec.paragraph && by_sep {
        swallow_newlines(ctx, io)?;
    }
    io.lineno += 1;
    let n = io.lineno;
    crate::core::globals::set(ctx, sym::DOLLAR_DOT, Value::fixnum(n))?;
    Ok(Some(chomp(line, spec)))
}

/// The first position of `needle` (not empty) in `hay`, through memchr(3) on its first byte
/// (a byte-by-byte window compare was most of `File.foreach`'s time).
fn find_bytes(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    while from + needle.len() <= hay.len() {
        let rest = &hay[from..];
        // SAFETY: `rest` is a valid slice of rest.len() bytes.
        let p = unsafe { libc::memchr(rest.as_ptr() as *const libc::c_void, needle[0] as i32, rest.len()) };
        if p.is_null() {
            return None;
        }
        let at = from + (p as usize - rest.as_ptr() as usize);
        if hay.len() - at >= needle.len() && &hay[at..at + needle.len()] == needle {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn chomp(mut line: Vec<u8>, spec: &LineSpec) -> Vec<u8> {
    // Without a separator nothing is chomped (the rest is returned as is).
    let Some(sep) = spec.sep.as_deref().filter(|_| spec.chomp) else { return line };
    if line.ends_with(sep) {
        line.truncate(line.len() - sep.len());
        if sep == b"\n" && line.ends_with(b"\r") {
            line.pop();
        }
    }
    line
}

/// One line as a String (nil at end of file), `gets`'s answer.
pub(crate) fn gets_value(ctx: &mut Ctx, recv: Value, spec: &LineSpec) -> Result<Value> {
    if spec.zero_limit {
        check_readable(ctx, recv)?;
        return read_string(ctx, recv, Vec::new());
    }
    match read_line(ctx, recv, spec)? {
        Some(l) => read_string(ctx, recv, l),
        None => Ok(Value::NIL),
    }
}

fn m_gets(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let spec = spec_from_args(ctx, args)?;
    let v = gets_value(ctx, recv, &spec)?;
    crate::interp::ops::set_caller_last_line(ctx, v);
    Ok(v)
}

fn m_readline(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let spec = spec_from_args(ctx, args)?;
    let v = gets_value(ctx, recv, &spec)?;
    if v.is_nil() {
        return Err(crate::core::io::eof_error(ctx));
    }
    crate::interp::ops::set_caller_last_line(ctx, v);
    Ok(v)
}

fn no_zero_limit(ctx: &mut Ctx, spec: &LineSpec, method: &str) -> Result<()> {
    if spec.zero_limit {
        return Err(ctx.arg_error(&format!("invalid limit: 0 for {method}")));
    }
    Ok(())
}

fn m_each_line(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_kw(ctx, recv, "each_line", args.pos, args.kw, None);
    };
    let spec = spec_from_args(ctx, args)?;
    no_zero_limit(ctx, &spec, "each_line")?;
    while let Some(l) = read_line(ctx, recv, &spec)? {
        let s = read_string(ctx, recv, l)?;
        ctx.yield1(&b, s)?;
    }
    Ok(recv)
}

fn m_readlines(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let spec = spec_from_args(ctx, args)?;
    no_zero_limit(ctx, &spec, "readlines")?;
    let out = array::new(ctx);
    while let Some(l) = read_line(ctx, recv, &spec)? {
        let s = read_string(ctx, recv, l)?;
        array::push(ctx, out, s);
    }
    Ok(out)
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [
        ("gets", m_gets, [0..=2], Unsafe, Kw),
        ("readline", m_readline, [0..=2], Unsafe, Kw),
        ("each_line", m_each_line, [0..=2], Unsafe, Kw),
        ("each", m_each_line, [0..=2], Unsafe, Kw),
        ("readlines", m_readlines, [0..=2], Unsafe, Kw),
    ]);
}
