//! `Zlib::ZStream`, `Zlib::Deflate` and `Zlib::Inflate`: one zlib stream each, with
//! CRuby's buffering rules.
//!
//! Invariants:
//! - `ZStreamObj::strm` is boxed (zlib's state points back at it, so it never moves) and
//!   is `None` before `initialize` and after `close`; methods on such a stream raise
//!   `Zlib::Error "stream is not ready"`. Dropping the object ends the zlib stream.
//! - Output accumulates in `out` until a method hands it over (`deflate`, `inflate`,
//!   `flush`, `finish`, `flush_next_out`) as a new binary String.
//! - Input zlib did not consume stays in `input` and is fed first next time; an Inflate
//!   that has reached the end of its stream drops it (CRuby does), and further data given
//!   to it is passed through to the output unchanged.
//! - A run calls zlib until the input is consumed and (for FINISH/flushes) the output is
//!   complete, growing `out`; Z_BUF_ERROR (no progress possible) is raised as
//!   `Zlib::BufError`, as CRuby does.

use super::zlib_error;
use crate::core::module::{body, AllocKind};
use crate::core::{hash, integer, object, string};
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
use libz_rs_sys as z;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Deflate,
    Inflate,
}

pub struct ZStreamObj {
    strm: Option<Box<z::z_stream>>,
    kind: Kind,
    out: Vec<u8>,
    input: Vec<u8>,
    finished: bool,
    /// `Inflate#add_dictionary`'s dictionaries by Adler-32 (a Hash, or nil).
    dictionaries: Value,
}

crate::data_obj!(ZStreamObj, |s, m| {
    m.mark(s.dictionaries);
});

impl Drop for ZStreamObj {
    fn drop(&mut self) {
        self.end();
    }
}

type ZResult<T> = std::result::Result<T, (i32, Option<String>)>;

impl ZStreamObj {
    fn new(kind: Kind) -> ZStreamObj {
        ZStreamObj { strm: None, kind, out: Vec::new(), input: Vec::new(), finished: false, dictionaries: Value::NIL }
    }

    fn end(&mut self) -> i32 {
        let Some(mut s) = self.strm.take() else { return z::Z_OK };
        // SAFETY: `s` was initialized by deflateInit2_/inflateInit2_ for this kind.
        unsafe {
            match self.kind {
                Kind::Deflate => z::deflateEnd(&mut *s),
                Kind::Inflate => z::inflateEnd(&mut *s),
            }
        }
    }

    fn message(s: &z::z_stream) -> Option<String> {
        if s.msg.is_null() {
            return None;
        }
        // SAFETY: zlib's messages are static NUL-terminated strings.
        Some(unsafe { std::ffi::CStr::from_ptr(s.msg) }.to_string_lossy().into_owned())
    }

    /// Feeds the pending input plus `src` to zlib with `flush`.
    fn run(&mut self, src: &[u8], flush: i32) -> ZResult<()> {
        self.run_limited(src, flush, None, false).map(|_| ())
    }

    /// `run`, stopping once `out` holds `limit` bytes (answering true then; the input
    /// left is kept). `continuation`: an earlier call of the same operation made progress,
    /// so finding nothing left to do is not an error.
    fn run_limited(&mut self, src: &[u8], flush: i32, limit: Option<usize>, continuation: bool) -> ZResult<bool> {
        let kind = self.kind;
        let mut input = std::mem::take(&mut self.input);
        let data: &[u8] = if input.is_empty() {
            src
        } else {
            input.extend_from_slice(src);
            &input
        };
        let strm = self.strm.as_mut().expect("run on a ready stream");
        let mut consumed = 0usize;
        let mut progressed = continuation;
        let mut full = false;
        let mut err;
        loop {
            let chunk = (data.len() - consumed).min(u32::MAX as usize);
            strm.next_in = if data.is_empty() { b"".as_ptr() } else { data[consumed..].as_ptr() };
            strm.avail_in = chunk as u32;
            if self.out.capacity() - self.out.len() < 4096 {
                let grow = self.out.len().clamp(16 * 1024, 64 << 20);
                self.out.reserve(grow);
            }
            let len = self.out.len();
            let mut room = (self.out.capacity() - len).min(u32::MAX as usize);
            if let Some(limit) = limit {
                room = room.min(limit.saturating_sub(len));
            }
            // SAFETY: `room` bytes past `len` are reserved in `out`.
            strm.next_out = unsafe { self.out.as_mut_ptr().add(len) };
            strm.avail_out = room as u32;
            // SAFETY: `strm` is an initialized stream of this kind; the buffers above stay
            // valid for the call.
            err = unsafe {
                match kind {
                    Kind::Deflate => z::deflate(&mut **strm, flush),
                    Kind::Inflate => z::inflate(&mut **strm, flush),
                }
            };
            let produced = room - strm.avail_out as usize;
            // SAFETY: zlib wrote `produced` bytes at `len`.
            unsafe { self.out.set_len(len + produced) };
            let used = chunk - strm.avail_in as usize;
            consumed += used;
            if err == z::Z_STREAM_END {
                self.finished = true;
                break;
            }
            if err == z::Z_NEED_DICT && kind == Kind::Inflate {
                if let Some(dict) = dictionary_for(self.dictionaries, strm.adler as u32) {
                    // SAFETY: `dict` is a live byte slice for the call.
                    let r = unsafe { z::inflateSetDictionary(&mut **strm, dict.as_ptr(), dict.len() as u32) };
                    if r == z::Z_OK {
                        continue;
                    }
                }
                break;
            }
            if err == z::Z_BUF_ERROR && produced == 0 && used == 0 && progressed && flush != z::Z_FINISH {
                // Nothing more to do after earlier calls made progress: not an error.
                err = z::Z_OK;
                break;
            }
            if err != z::Z_OK && err != z::Z_BUF_ERROR {
                break;
            }
            if strm.avail_out > 0 && (consumed == data.len() || err == z::Z_BUF_ERROR) {
                break;
            }
            progressed |= produced > 0 || used > 0;
            if limit.is_some_and(|l| self.out.len() >= l) {
                full = true;
                if err == z::Z_BUF_ERROR {
                    err = z::Z_OK;
                }
                break;
            }
        }
        self.input = data[consumed..].to_vec();
        if err != z::Z_OK && err != z::Z_STREAM_END {
            let msg = Self::message(strm);
            return Err((err, msg));
        }
        Ok(full)
    }

}

/// The dictionary registered for Adler-32 `adler` in `dicts` (a Hash or nil).
fn dictionary_for(dicts: Value, adler: u32) -> Option<&'static [u8]> {
    if !hash::is_hash(dicts) {
        return None;
    }
    let v = hash::get(dicts, Value::fixnum(adler as i64))?;
    string::is_string(v).then(|| string::bytes(v))
}

fn alloc_deflate(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(ZStreamObj::new(Kind::Deflate))))
}

fn alloc_inflate(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(ZStreamObj::new(Kind::Inflate))))
}

/// The stream of `v`, ready (initialized and not closed).
fn stream<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut ZStreamObj> {
    match data_ref::<ZStreamObj>(v) {
        Some(z) if z.strm.is_some() => Ok(z),
        _ => Err(super::error(ctx, "Error", "stream is not ready")),
    }
}

fn raise_run(ctx: &mut Ctx, r: ZResult<()>) -> Result<()> {
    r.map_err(|(code, msg)| zlib_error(ctx, code, msg))
}

/// Hands the output over as a new binary String.
fn detach(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let out = std::mem::take(&mut stream(ctx, recv)?.out);
    Ok(string::new_with_enc(ctx, out, crate::core::encoding::BINARY))
}

fn int_arg(ctx: &mut Ctx, args: &Args, i: usize, default: i32) -> Result<i32> {
    match args.pos.get(i) {
        Some(v) if !v.is_nil() => Ok(integer::to_i64_arg(ctx, *v)? as i32),
        _ => Ok(default),
    }
}

/// Output handed to a block goes in pieces of this size, as CRuby's.
const CHUNK: usize = 16 * 1024;

/// Runs the stream of `recv` over `src`; with a block, each `CHUNK` bytes of output are
/// yielded as they are produced.
fn run_stream(ctx: &mut Ctx, recv: Value, src: &[u8], flush: i32, block: Option<&Block>) -> Result<()> {
    let Some(b) = block else {
        let r = stream(ctx, recv)?.run(src, flush);
        return raise_run(ctx, r);
    };
    let mut first = true;
    loop {
        let z = stream(ctx, recv)?;
        let r = z.run_limited(if first { src } else { b"" }, flush, Some(CHUNK), !first);
        first = false;
        let full = r.map_err(|(code, msg)| zlib_error(ctx, code, msg))?;
        if !full {
            return Ok(());
        }
        let z = stream(ctx, recv)?;
        let out = std::mem::take(&mut z.out);
        let more = !z.input.is_empty() || (flush != z::Z_NO_FLUSH && !z.finished);
        let chunk = string::new_with_enc(ctx, out, crate::core::encoding::BINARY);
        ctx.yield1(b, chunk)?;
        if !more {
            return Ok(());
        }
    }
}

/// The output so far: answered, or with a block yielded once the stream has ended (a
/// stream in progress keeps it for later) and nil answered.
fn deliver(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = &args.block else {
        return detach(ctx, recv);
    };
    if !stream(ctx, recv)?.finished {
        return Ok(Value::NIL);
    }
    let out = detach(ctx, recv)?;
    if string::len(out) > 0 {
        ctx.yield1(b, out)?;
    }
    Ok(Value::NIL)
}

// ---- ZStream ----

fn avail_out(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let z = stream(ctx, recv)?;
    Ok(Value::fixnum((z.out.capacity() - z.out.len()).min(u32::MAX as usize) as i64))
}

fn set_avail_out(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?.max(0) as usize;
    let z = stream(ctx, recv)?;
    z.out.reserve(n);
    Ok(args.pos[0])
}

fn avail_in(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(stream(ctx, recv)?.input.len() as i64))
}

fn total_in(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(stream(ctx, recv)?.strm.as_ref().map_or(0, |s| s.total_in as i64)))
}

fn total_out(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(stream(ctx, recv)?.strm.as_ref().map_or(0, |s| s.total_out as i64)))
}

fn data_type(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(stream(ctx, recv)?.strm.as_ref().map_or(0, |s| s.data_type as i64)))
}

fn adler(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(stream(ctx, recv)?.strm.as_ref().map_or(0, |s| s.adler as u32 as i64)))
}

fn finished_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(stream(ctx, recv)?.finished))
}

fn closed_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(data_ref::<ZStreamObj>(recv).is_none_or(|z| z.strm.is_none())))
}

fn close(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let z = stream(ctx, recv)?;
    let err = z.end();
    if err != z::Z_OK {
        return Err(zlib_error(ctx, err, None));
    }
    Ok(Value::NIL)
}

fn reset(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let z = stream(ctx, recv)?;
    let kind = z.kind;
    let s = z.strm.as_mut().expect("ready");
    // SAFETY: an initialized stream of this kind.
    let err = unsafe {
        match kind {
            Kind::Deflate => z::deflateReset(&mut **s),
            Kind::Inflate => z::inflateReset(&mut **s),
        }
    };
    if err != z::Z_OK {
        let msg = ZStreamObj::message(s);
        return Err(zlib_error(ctx, err, msg));
    }
    z.out.clear();
    z.input.clear();
    z.finished = false;
    Ok(Value::NIL)
}

fn finish(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    stream(ctx, recv)?;
    run_stream(ctx, recv, b"", z::Z_FINISH, args.block.as_ref())?;
    deliver(ctx, recv, args)
}

fn flush_next_out(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    detach(ctx, recv)
}

fn flush_next_in(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let input = std::mem::take(&mut stream(ctx, recv)?.input);
    Ok(string::new_with_enc(ctx, input, crate::core::encoding::BINARY))
}

// ---- Deflate ----

fn deflate_init(ctx: &mut Ctx, recv: Value, level: i32, wbits: i32, memlevel: i32, strategy: i32) -> Result<()> {
    let Some(z) = data_ref::<ZStreamObj>(recv) else { return Err(ctx.type_error("not a Zlib::Deflate")) };
    z.end();
    let mut s = Box::new(z::z_stream::default());
    // SAFETY: `s` is a fresh, zeroed stream; the version and size are this library's.
    let err = unsafe { z::deflateInit2_(&mut *s, level, z::Z_DEFLATED, wbits, memlevel, strategy, z::zlibVersion(), std::mem::size_of::<z::z_stream>() as i32) };
    if err != z::Z_OK {
        return Err(zlib_error(ctx, err, None));
    }
    z.strm = Some(s);
    z.out.clear();
    z.input.clear();
    z.finished = false;
    Ok(())
}

fn deflate_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let level = int_arg(ctx, args, 0, z::Z_DEFAULT_COMPRESSION)?;
    let wbits = int_arg(ctx, args, 1, 15)?;
    let memlevel = int_arg(ctx, args, 2, 8)?;
    let strategy = int_arg(ctx, args, 3, z::Z_DEFAULT_STRATEGY)?;
    deflate_init(ctx, recv, level, wbits, memlevel, strategy)?;
    Ok(Value::NIL)
}

fn deflate_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = stream(ctx, args.pos[0])?;
    let mut s = Box::new(z::z_stream::default());
    let (out, input, finished) = (src.out.clone(), src.input.clone(), src.finished);
    let from = src.strm.as_mut().expect("ready");
    // SAFETY: `from` is an initialized deflate stream; `s` receives the copy.
    let err = unsafe { z::deflateCopy(&mut *s, &mut **from) };
    if err != z::Z_OK {
        return Err(zlib_error(ctx, err, None));
    }
    let Some(dst) = data_ref::<ZStreamObj>(recv) else { return Err(ctx.type_error("not a Zlib::Deflate")) };
    dst.end();
    dst.strm = Some(s);
    dst.out = out;
    dst.input = input;
    dst.finished = finished;
    Ok(recv)
}

/// `Deflate.deflate(src, level = DEFAULT_COMPRESSION)` (also `Zlib.deflate`).
fn s_deflate(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let src = string::to_str_arg(ctx, args.pos[0])?;
    let level = int_arg(ctx, args, 1, z::Z_DEFAULT_COMPRESSION)?;
    let zlib = super::zlib_module(ctx);
    let klass = crate::stdlib::const_of(ctx, zlib, "Deflate").unwrap_or(Value::NIL);
    let d = alloc_deflate(ctx, klass)?;
    deflate_init(ctx, d, level, 15, 8, z::Z_DEFAULT_STRATEGY)?;
    stream(ctx, d)?.out.reserve(string::len(src) / 3 + 64);
    let r = run_stream(ctx, d, string::bytes(src), z::Z_FINISH, args.block.as_ref()).and_then(|_| deliver(ctx, d, args));
    if let Some(z) = data_ref::<ZStreamObj>(d) {
        z.end();
    }
    r
}

fn do_deflate(ctx: &mut Ctx, recv: Value, src: Value, flush: i32, block: Option<&Block>) -> Result<()> {
    stream(ctx, recv)?;
    if src.is_nil() {
        return run_stream(ctx, recv, b"", z::Z_FINISH, block);
    }
    let src = string::to_str_arg(ctx, src)?;
    if flush != z::Z_NO_FLUSH || string::len(src) > 0 {
        run_stream(ctx, recv, string::bytes(src), flush, block)?;
    }
    Ok(())
}

fn deflate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let flush = int_arg(ctx, args, 1, z::Z_NO_FLUSH)?;
    do_deflate(ctx, recv, args.pos[0], flush, args.block.as_ref())?;
    deliver(ctx, recv, args)
}

fn deflate_append(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    do_deflate(ctx, recv, args.pos[0], z::Z_NO_FLUSH, None)?;
    Ok(recv)
}

fn deflate_flush(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let flush = int_arg(ctx, args, 0, z::Z_SYNC_FLUSH)?;
    stream(ctx, recv)?;
    if flush != z::Z_NO_FLUSH {
        run_stream(ctx, recv, b"", flush, args.block.as_ref())?;
    }
    deliver(ctx, recv, args)
}

fn params(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let level = int_arg(ctx, args, 0, z::Z_DEFAULT_COMPRESSION)?;
    let strategy = int_arg(ctx, args, 1, z::Z_DEFAULT_STRATEGY)?;
    let z = stream(ctx, recv)?;
    let s = z.strm.as_mut().expect("ready");
    loop {
        if z.out.capacity() - z.out.len() < 4096 {
            z.out.reserve(16 * 1024);
        }
        let len = z.out.len();
        let room = (z.out.capacity() - len).min(u32::MAX as usize);
        s.next_in = b"".as_ptr();
        s.avail_in = 0;
        // SAFETY: `room` bytes past `len` are reserved.
        s.next_out = unsafe { z.out.as_mut_ptr().add(len) };
        s.avail_out = room as u32;
        // SAFETY: an initialized deflate stream.
        let err = unsafe { z::deflateParams(&mut **s, level, strategy) };
        let produced = room - s.avail_out as usize;
        // SAFETY: zlib wrote `produced` bytes at `len`.
        unsafe { z.out.set_len(len + produced) };
        if err == z::Z_BUF_ERROR && s.avail_out == 0 {
            continue;
        }
        if err != z::Z_OK && err != z::Z_BUF_ERROR {
            let msg = ZStreamObj::message(s);
            return Err(zlib_error(ctx, err, msg));
        }
        return Ok(Value::NIL);
    }
}

fn set_dictionary(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let dict = string::to_str_arg(ctx, args.pos[0])?;
    let z = stream(ctx, recv)?;
    let kind = z.kind;
    let s = z.strm.as_mut().expect("ready");
    let b = string::bytes(dict);
    // SAFETY: an initialized stream; `b` is live for the call.
    let err = unsafe {
        match kind {
            Kind::Deflate => z::deflateSetDictionary(&mut **s, b.as_ptr(), b.len() as u32),
            Kind::Inflate => z::inflateSetDictionary(&mut **s, b.as_ptr(), b.len() as u32),
        }
    };
    if err != z::Z_OK {
        let msg = ZStreamObj::message(s);
        return Err(zlib_error(ctx, err, msg));
    }
    Ok(args.pos[0])
}

// ---- Inflate ----

fn inflate_init(ctx: &mut Ctx, z: &mut ZStreamObj, wbits: i32) -> Result<()> {
    z.end();
    let mut s = Box::new(z::z_stream::default());
    // SAFETY: `s` is a fresh, zeroed stream.
    let err = unsafe { z::inflateInit2_(&mut *s, wbits, z::zlibVersion(), std::mem::size_of::<z::z_stream>() as i32) };
    if err != z::Z_OK {
        return Err(zlib_error(ctx, err, None));
    }
    z.strm = Some(s);
    z.out.clear();
    z.input.clear();
    z.finished = false;
    Ok(())
}

fn inflate_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let wbits = int_arg(ctx, args, 0, 15)?;
    let Some(z) = data_ref::<ZStreamObj>(recv) else { return Err(ctx.type_error("not a Zlib::Inflate")) };
    inflate_init(ctx, z, wbits)?;
    Ok(Value::NIL)
}

/// `Inflate.inflate(src)` (also `Zlib.inflate`).
fn s_inflate(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let src = string::to_str_arg(ctx, args.pos[0])?;
    let mut z = ZStreamObj::new(Kind::Inflate);
    inflate_init(ctx, &mut z, 15)?;
    z.out.reserve(string::len(src) * 3 + 64);
    let r = z.run(string::bytes(src), z::Z_SYNC_FLUSH);
    raise_run(ctx, r)?;
    let r = z.run(b"", z::Z_FINISH);
    raise_run(ctx, r)?;
    let out = std::mem::take(&mut z.out);
    Ok(string::new_with_enc(ctx, out, crate::core::encoding::BINARY))
}

fn do_inflate(ctx: &mut Ctx, recv: Value, src: Value, block: Option<&Block>) -> Result<()> {
    let z = stream(ctx, recv)?;
    if z.finished {
        // Past the end of the stream, data passes through unchanged.
        if !src.is_nil() {
            let src = string::to_str_arg(ctx, src)?;
            stream(ctx, recv)?.out.extend_from_slice(string::bytes(src));
        }
        return Ok(());
    }
    if src.is_nil() {
        return run_stream(ctx, recv, b"", z::Z_SYNC_FLUSH, block);
    }
    let src = string::to_str_arg(ctx, src)?;
    if string::len(src) > 0 || !stream(ctx, recv)?.input.is_empty() {
        run_stream(ctx, recv, string::bytes(src), z::Z_SYNC_FLUSH, block)?;
    }
    Ok(())
}

/// After the end of the stream, the input left over passes through to the output.
fn passthrough(ctx: &mut Ctx, recv: Value) -> Result<()> {
    let z = stream(ctx, recv)?;
    if z.finished && !z.input.is_empty() {
        let input = std::mem::take(&mut z.input);
        z.out.extend_from_slice(&input);
    }
    Ok(())
}

fn inflate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    do_inflate(ctx, recv, args.pos[0], args.block.as_ref())?;
    let r = inflate_output(ctx, recv, args)?;
    passthrough(ctx, recv)?;
    Ok(r)
}

fn inflate_output(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let buffer = match args.kw {
        Some(kw) => {
            let key = Value::symbol(ctx.intern("buffer"));
            hash::lookup(ctx, kw, key)?.unwrap_or(Value::NIL)
        }
        None => Value::NIL,
    };
    if !buffer.is_nil() {
        let buf = string::to_str_arg(ctx, buffer)?;
        ctx.check_frozen(buf)?;
        let out = std::mem::take(&mut stream(ctx, recv)?.out);
        string::set_bytes(buf, out);
        string::set_encoding(buf, crate::core::encoding::BINARY);
        return Ok(buf);
    }
    deliver(ctx, recv, args)
}

fn inflate_append(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    do_inflate(ctx, recv, args.pos[0], None)?;
    passthrough(ctx, recv)?;
    Ok(recv)
}

fn add_dictionary(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let dict = string::to_str_arg(ctx, args.pos[0])?;
    let sum = super::adler32(1, string::bytes(dict));
    let z = stream(ctx, recv)?;
    if z.dictionaries.is_nil() {
        let h = hash::new(ctx);
        stream(ctx, recv)?.dictionaries = h;
    }
    let h = stream(ctx, recv)?.dictionaries;
    hash::aset(ctx, h, Value::fixnum(sum as i64), dict)?;
    Ok(recv)
}

fn sync(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = string::to_str_arg(ctx, args.pos[0])?;
    let z = stream(ctx, recv)?;
    z.input.extend_from_slice(string::bytes(src));
    let s = z.strm.as_mut().expect("ready");
    s.next_in = z.input.as_ptr();
    s.avail_in = z.input.len().min(u32::MAX as usize) as u32;
    // SAFETY: an initialized inflate stream; `input` is live for the call.
    let err = unsafe { z::inflateSync(&mut **s) };
    let rest = s.avail_in as usize;
    let n = z.input.len();
    z.input.drain(..n - rest);
    match err {
        z::Z_OK => Ok(Value::TRUE),
        z::Z_DATA_ERROR | z::Z_BUF_ERROR => Ok(Value::FALSE),
        _ => {
            let msg = ZStreamObj::message(s);
            Err(zlib_error(ctx, err, msg))
        }
    }
}

fn sync_point_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let z = stream(ctx, recv)?;
    let s = z.strm.as_mut().expect("ready");
    // SAFETY: an initialized inflate stream.
    let r = unsafe { z::inflateSyncPoint(&mut **s) };
    Ok(Value::bool(r != 0))
}

pub fn init(ctx: &mut Ctx, zlib: Value) {
    let obj = ctx.c().object;
    let zs = crate::stdlib::class_under(ctx, zlib, "ZStream", obj);
    crate::methods!(ctx, zs, [
        ("avail_out", avail_out, [0], Unsafe),
        ("avail_out=", set_avail_out, [1], Unsafe),
        ("avail_in", avail_in, [0], Unsafe),
        ("total_in", total_in, [0], Unsafe),
        ("total_out", total_out, [0], Unsafe),
        ("data_type", data_type, [0], Unsafe),
        ("adler", adler, [0], Unsafe),
        ("finished?", finished_p, [0], Unsafe),
        ("stream_end?", finished_p, [0], Unsafe),
        ("closed?", closed_p, [0], Unsafe),
        ("ended?", closed_p, [0], Unsafe),
        ("close", close, [0], Unsafe),
        ("end", close, [0], Unsafe),
        ("reset", reset, [0], Unsafe),
        ("finish", finish, [0], Unsafe),
        ("flush_next_in", flush_next_in, [0], Unsafe),
        ("flush_next_out", flush_next_out, [0], Unsafe),
    ]);
    let deflate_class = crate::stdlib::class_under(ctx, zlib, "Deflate", zs);
    body(deflate_class).alloc = AllocKind::Data(alloc_deflate);
    crate::methods!(ctx, deflate_class, [
        ("deflate", s_deflate, [1..=2], Unsafe, Singleton),
        ("initialize", deflate_initialize, [0..=4], Unsafe, Private),
        ("initialize_copy", deflate_initialize_copy, [1], Unsafe, Private),
        ("deflate", deflate, [1..=2], Unsafe),
        ("<<", deflate_append, [1], Unsafe),
        ("flush", deflate_flush, [0..=1], Unsafe),
        ("params", params, [2], Unsafe),
        ("set_dictionary", set_dictionary, [1], Unsafe),
    ]);
    let inflate_class = crate::stdlib::class_under(ctx, zlib, "Inflate", zs);
    body(inflate_class).alloc = AllocKind::Data(alloc_inflate);
    crate::methods!(ctx, inflate_class, [
        ("inflate", s_inflate, [1], Unsafe, Singleton),
        ("initialize", inflate_initialize, [0..=1], Unsafe, Private),
        ("inflate", inflate, [1], Unsafe, Kw),
        ("<<", inflate_append, [1], Unsafe),
        ("add_dictionary", add_dictionary, [1], Unsafe),
        ("sync", sync, [1], Unsafe),
        ("sync_point?", sync_point_p, [0], Unsafe),
        ("set_dictionary", set_dictionary, [1], Unsafe),
    ]);
    crate::methods!(ctx, zlib, [
        ("deflate", s_deflate, [1..=2], Unsafe, ModuleFunction),
        ("inflate", s_inflate, [1], Unsafe, ModuleFunction),
    ]);
    let _ = sym::NEW;
}
