//! Reading an IO by bytes, characters and codepoints, and pushing data back:
//! `getc`, `getbyte`, `readchar`, `readbyte`, `ungetc`, `ungetbyte`, `each_char`,
//! `each_byte`, `each_codepoint`.
//!
//! Invariants: everything reads from the IO's read buffer (`IoObj::rbuf[rpos..]`), filling
//! it as needed, so these mix freely with `gets`/`read`; pushed-back bytes go in front of
//! the unread part of the buffer. A character is as long as its encoding says (the read
//! encoding of the IO); an incomplete one at the end of the file is returned as it is.

use crate::core::encoding;
use crate::core::io::{check_readable, eof_error, fill, get_io, io_ref, read_encoding, read_string, IoObj};
use crate::core::{integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Makes at least `n` unread bytes available if the file has them; false at the end.
fn ensure(ctx: &mut Ctx, io: &mut IoObj, n: usize) -> Result<bool> {
    while io.rbuf.len() - io.rpos < n {
        if !fill(ctx, io)? {
            return Ok(io.rbuf.len() > io.rpos);
        }
    }
    Ok(true)
}

/// The next character's bytes, or None at the end of the file.
fn next_char(ctx: &mut Ctx, v: Value) -> Result<Option<Vec<u8>>> {
    check_readable(ctx, v)?;
    let io = io_ref(v).expect("io");
    if !ensure(ctx, io, 1)? {
        return Ok(None);
    }
    let enc = read_encoding(ctx, io);
    // A character cut off by the end of the buffer (its invalid prefix reaches the end)
    // may complete with more input: read more only then, so a lone character does not
    // wait for input that is not coming.
    let n = loop {
        let avail = &io.rbuf[io.rpos..];
        let have = avail.len();
        match encoding::precise_char_len(enc, avail, 0) {
            Ok(n) => break n,
            Err(n) if n >= have && have < 4 => {
                if !fill(ctx, io)? {
                    break have;
                }
            }
            Err(n) => break n.max(1),
        }
    };
    let avail = &io.rbuf[io.rpos..];
    let n = n.min(avail.len());
    let out = avail[..n].to_vec();
    io.rpos += n;
    Ok(Some(out))
}

fn next_byte(ctx: &mut Ctx, v: Value) -> Result<Option<u8>> {
    check_readable(ctx, v)?;
    let io = io_ref(v).expect("io");
    if !ensure(ctx, io, 1)? {
        return Ok(None);
    }
    let b = io.rbuf[io.rpos];
    io.rpos += 1;
    Ok(Some(b))
}

fn m_getc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match next_char(ctx, recv)? {
        Some(c) => read_string(ctx, recv, c),
        None => Ok(Value::NIL),
    }
}

fn m_readchar(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match next_char(ctx, recv)? {
        Some(c) => read_string(ctx, recv, c),
        None => Err(eof_error(ctx)),
    }
}

fn m_getbyte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(next_byte(ctx, recv)?.map_or(Value::NIL, |b| Value::fixnum(b as i64)))
}

fn m_readbyte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match next_byte(ctx, recv)? {
        Some(b) => Ok(Value::fixnum(b as i64)),
        None => Err(eof_error(ctx)),
    }
}

/// Puts `bytes` back in front of the unread input.
fn unget(io: &mut IoObj, bytes: &[u8]) {
    if io.rpos >= bytes.len() {
        io.rpos -= bytes.len();
        io.rbuf[io.rpos..io.rpos + bytes.len()].copy_from_slice(bytes);
    } else {
        let mut v = bytes.to_vec();
        v.extend_from_slice(&io.rbuf[io.rpos..]);
        io.rbuf = v;
        io.rpos = 0;
    }
    io.eof = false;
}

fn check_unget(ctx: &mut Ctx, v: Value) -> Result<()> {
    let io = get_io(ctx, v)?;
    if io.closed {
        return Err(ctx.raise(ctx.c().io_error, "closed stream"));
    }
    if !io.readable {
        return Err(ctx.raise(ctx.c().io_error, "not opened for reading"));
    }
    Ok(())
}

/// `ungetc(string_or_codepoint)`: an Integer is a codepoint in the read encoding.
fn m_ungetc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_unget(ctx, recv)?;
    let v = args.pos[0];
    if v.is_nil() {
        return Ok(Value::NIL);
    }
    let bytes = if integer::is_integer(v) {
        let enc = read_encoding(ctx, io_ref(recv).expect("io"));
        let cp = integer::to_i64_arg(ctx, v)?;
        let encoded = u32::try_from(cp).ok().and_then(|c| encoding::encode_codepoint(enc, c));
        match encoded {
            Some(b) => b,
            None => return Err(ctx.raise(ctx.c().range_error, &format!("{cp} out of char range"))),
        }
    } else {
        let s = string::to_str_arg(ctx, v)?;
        string::bytes(s).to_vec()
    };
    unget(io_ref(recv).expect("io"), &bytes);
    Ok(Value::NIL)
}

/// `ungetbyte(string_or_byte)`: an Integer pushes back its low byte.
fn m_ungetbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_unget(ctx, recv)?;
    let v = args.pos[0];
    if v.is_nil() {
        return Ok(Value::NIL);
    }
    let bytes = if integer::is_integer(v) {
        let n = if let Some(n) = v.as_fixnum() { n } else { integer::to_i64_arg(ctx, v).unwrap_or(0) };
        vec![(n & 0xff) as u8]
    } else {
        let s = string::to_str_arg(ctx, v)?;
        string::bytes(s).to_vec()
    };
    unget(io_ref(recv).expect("io"), &bytes);
    Ok(Value::NIL)
}

fn m_each_char(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_char", &[], None);
    };
    while let Some(c) = next_char(ctx, recv)? {
        let s = read_string(ctx, recv, c)?;
        ctx.yield1(&b, s)?;
    }
    Ok(recv)
}

fn m_each_byte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_byte", &[], None);
    };
    while let Some(byte) = next_byte(ctx, recv)? {
        ctx.yield1(&b, Value::fixnum(byte as i64))?;
    }
    Ok(recv)
}

/// `each_codepoint`: an invalid byte sequence raises ArgumentError, as CRuby.
fn m_each_codepoint(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_codepoint", &[], None);
    };
    while let Some(c) = next_char(ctx, recv)? {
        let enc = read_encoding(ctx, io_ref(recv).expect("io"));
        if encoding::precise_char_len(enc, &c, 0) != Ok(c.len()) {
            return Err(ctx.arg_error(&format!("invalid byte sequence in {}", encoding::name(enc))));
        }
        let (cp, _) = encoding::codepoint_at(enc, &c, 0);
        ctx.yield1(&b, Value::fixnum(cp as i64))?;
    }
    Ok(recv)
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    crate::methods!(ctx, io, [
        ("getc", m_getc, [0], Unsafe),
        ("readchar", m_readchar, [0], Unsafe),
        ("getbyte", m_getbyte, [0], Unsafe),
        ("readbyte", m_readbyte, [0], Unsafe),
        ("ungetc", m_ungetc, [1], Unsafe),
        ("ungetbyte", m_ungetbyte, [1], Unsafe),
        ("each_char", m_each_char, [0], Unsafe),
        ("each_byte", m_each_byte, [0], Unsafe),
        ("each_codepoint", m_each_codepoint, [0], Unsafe),
    ]);
}
