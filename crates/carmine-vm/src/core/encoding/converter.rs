//! `Encoding::Converter`, and the Ruby side of transcoding shared with `String#encode`:
//! option hashes to flags, `fallback:`, and the conversion exceptions.
//!
//! Invariants:
//! - A Converter's payload is a `Transcoder` (no Ruby values inside, so nothing to mark);
//!   the replacement string is kept as bytes plus encoding index.
//! - Every method that reads converter state that conversions change is registered
//!   Unsafe (runs under the giant lock); only the fixed source/destination are Safe.
//! - Conversion errors carry their details in hidden instance variables read by the
//!   `Encoding::UndefinedConversionError` / `InvalidByteSequenceError` accessors.

use super::transcode::{self, Res, Transcoder};
use super::{encoding_arg, encoding_object, find, name, BINARY, US_ASCII, UTF_8};
use crate::core::{array, hash, integer, object, proc, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::object::{data_ref, set_data};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Options of `String#encode` and `Encoding::Converter.new`.
#[derive(Default)]
pub struct Opts {
    pub flags: u32,
    pub replace: Option<Value>,
    pub fallback: Option<Value>,
}

/// Reads an options hash (`invalid:`, `undef:`, `replace:`, `fallback:`, `xml:`, newline
/// options) into flags.
pub fn parse_opts(ctx: &mut Ctx, h: Option<Value>) -> Result<Opts> {
    let mut o = Opts::default();
    let Some(h) = h else { return Ok(o) };
    if !hash::is_hash(h) {
        return Ok(o);
    }
    let get = |ctx: &mut Ctx, k: &str| {
        let key = Value::symbol(ctx.intern(k));
        hash::get(h, key)
    };
    let sym_is = |ctx: &mut Ctx, v: Option<Value>, name: &str| v.and_then(|v| v.as_symbol()).is_some_and(|s| ctx.sym_str(s) == name);
    let inv = get(ctx, "invalid");
    if sym_is(ctx, inv, "replace") {
        o.flags |= transcode::INVALID_REPLACE;
    }
    let und = get(ctx, "undef");
    if sym_is(ctx, und, "replace") {
        o.flags |= transcode::UNDEF_REPLACE;
    }
    if let Some(r) = get(ctx, "replace").filter(|v| !v.is_nil()) {
        o.replace = Some(string::to_str_arg(ctx, r)?);
    }
    o.fallback = get(ctx, "fallback").filter(|v| !v.is_nil());
    let xml = get(ctx, "xml");
    if sym_is(ctx, xml, "text") {
        o.flags |= transcode::XML_TEXT_DECORATOR | transcode::UNDEF_HEX_CHARREF;
    } else if sym_is(ctx, xml, "attr") {
        o.flags |= transcode::XML_ATTR_CONTENT_DECORATOR | transcode::XML_ATTR_QUOTE_DECORATOR | transcode::UNDEF_HEX_CHARREF;
    } else if let Some(x) = xml.filter(|v| !v.is_nil()) {
        let s = object::inspect_string(ctx, x)?;
        return Err(ctx.arg_error(&format!("unexpected value for xml option: {s}")));
    }
    if let Some(n) = get(ctx, "newline").filter(|v| !v.is_nil()) {
        let Some(sym) = n.as_symbol() else {
            let s = object::inspect_string(ctx, n)?;
            return Err(ctx.arg_error(&format!("unexpected value for newline option: {s}")));
        };
        o.flags |= match ctx.sym_str(sym).as_str() {
            "universal" => transcode::UNIVERSAL_NEWLINE_DECORATOR,
            "crlf" => transcode::CRLF_NEWLINE_DECORATOR,
            "cr" => transcode::CR_NEWLINE_DECORATOR,
            "lf" => transcode::LF_NEWLINE_DECORATOR,
            other => return Err(ctx.arg_error(&format!("unexpected value for newline option: {other}"))),
        };
    }
    for (k, f) in [("universal_newline", transcode::UNIVERSAL_NEWLINE_DECORATOR), ("crlf_newline", transcode::CRLF_NEWLINE_DECORATOR), ("cr_newline", transcode::CR_NEWLINE_DECORATOR), ("lf_newline", transcode::LF_NEWLINE_DECORATOR)] {
        if get(ctx, k).is_some_and(|x| x.truthy()) {
            o.flags |= f;
        }
    }
    for (k, f) in [("partial_input", transcode::PARTIAL_INPUT), ("after_output", transcode::AFTER_OUTPUT)] {
        if get(ctx, k).is_some_and(|x| x.truthy()) {
            o.flags |= f;
        }
    }
    Ok(o)
}

fn set_err_info(ctx: &mut Ctx, e: Value, pairs: &[(&str, Value)]) {
    for (k, v) in pairs {
        let id = ctx.intern(k);
        object::ivar_set_raw(ctx, e, id, *v);
    }
}

fn enc_named(ctx: &mut Ctx, n: &str) -> Value {
    match find(n) {
        Some(e) => encoding_object(ctx, e),
        None => Value::NIL,
    }
}

/// The exception for the last error of `t` (InvalidByteSequenceError or
/// UndefinedConversionError), with its details attached.
pub fn last_error_exception(ctx: &mut Ctx, t: &Transcoder) -> Option<Value> {
    let e = &t.last;
    let (s, d) = e.step?;
    let msg = transcode::error_message(t);
    let se = enc_named(ctx, s);
    let de = enc_named(ctx, d);
    let sn = string::new_utf8(ctx, s);
    let dn = string::new_utf8(ctx, d);
    match e.res {
        Res::UndefinedConversion => {
            let x = ctx.new_error(ctx.c().undefined_conversion_error, &msg);
            let ch_enc = find(s).unwrap_or(BINARY);
            let ch = string::new_with_enc(ctx, e.error_bytes.clone(), ch_enc);
            set_err_info(ctx, x, &[("__error_char", ch), ("__source_encoding", se), ("__destination_encoding", de), ("__source_encoding_name", sn), ("__destination_encoding_name", dn)]);
            Some(x)
        }
        Res::InvalidByteSequence | Res::IncompleteInput => {
            let x = ctx.new_error(ctx.c().invalid_byte_sequence_error, &msg);
            let eb = string::new_binary(ctx, &e.error_bytes);
            // CRuby leaves readagain_bytes nil when nothing is read again.
            let rb = if e.readagain.is_empty() { Value::NIL } else { string::new_binary(ctx, &e.readagain) };
            let inc = Value::bool(e.res == Res::IncompleteInput);
            set_err_info(ctx, x, &[("__error_bytes", eb), ("__readagain_bytes", rb), ("__source_encoding", se), ("__destination_encoding", de), ("__source_encoding_name", sn), ("__destination_encoding_name", dn), ("__incomplete", inc)]);
            Some(x)
        }
        _ => None,
    }
}

/// An encoding argument of a conversion: its index, or the unknown name (CRuby looks
/// converters up by name, so an unknown name is a missing converter, not an error).
pub fn conversion_encoding(ctx: &mut Ctx, v: Value) -> Result<std::result::Result<u8, String>> {
    if string::is_string(v) {
        let n = string::to_rust_string_lossy(v);
        if find(&n).is_none() && !["locale", "filesystem", "external", "internal"].iter().any(|s| n.eq_ignore_ascii_case(s)) {
            return Ok(Err(n));
        }
    }
    encoding_arg(ctx, v).map(Ok)
}

/// `ConverterNotFoundError` for a pair where either side may be an unknown name.
pub fn not_found_by_name(ctx: &mut Ctx, src: &std::result::Result<u8, String>, dst: &std::result::Result<u8, String>) -> Unwind {
    let n = |r: &std::result::Result<u8, String>| match r {
        Ok(e) => name(*e).to_string(),
        Err(s) => s.clone(),
    };
    let msg = format!("code converter not found ({} to {})", n(src), n(dst));
    ctx.raise(ctx.c().converter_not_found_error, &msg)
}

pub fn not_found_error(ctx: &mut Ctx, src: u8, dst: u8) -> Unwind {
    let msg = format!("code converter not found ({} to {})", name(src), name(dst));
    ctx.raise(ctx.c().converter_not_found_error, &msg)
}

/// Sets the replacement of `t` from a `replace:` string.
fn set_replacement(ctx: &mut Ctx, t: &mut Transcoder, r: Value) -> Result<()> {
    let r = string::to_str_arg(ctx, r)?;
    t.replacement = Some((string::bytes(r).to_vec(), string::encoding(r)));
    Ok(())
}

/// Converts `src` (bytes in `from`) to `to` as `String#encode` does, running `fallback:`
/// for undefined characters.
pub fn transcode_string(ctx: &mut Ctx, src: &[u8], from: u8, to: u8, o: &Opts) -> Result<Vec<u8>> {
    let flags = o.flags & !(transcode::PARTIAL_INPUT | transcode::AFTER_OUTPUT);
    let Some(mut t) = Transcoder::new(from, to, flags) else {
        return Err(not_found_error(ctx, from, to));
    };
    if let Some(r) = o.replace {
        set_replacement(ctx, &mut t, r)?;
        let (rb, re) = t.replacement.clone().unwrap_or_default();
        if re != to && transcode::convert_simple(&rb, re, to).is_none() && !rb.is_empty() {
            return Err(not_found_error(ctx, UTF_8, to));
        }
    }
    let mut input = src;
    loop {
        let (res, taken) = t.run(input, None);
        input = &input[taken..];
        match res {
            Res::Finished => return Ok(std::mem::take(&mut t.out)),
            Res::UndefinedConversion if o.fallback.is_some() => {
                let fb = o.fallback.unwrap_or(Value::NIL);
                let (s, _) = t.last.step.unwrap_or(("UTF-8", "UTF-8"));
                let key = string::new_with_enc(ctx, t.last.error_bytes.clone(), find(s).unwrap_or(from));
                let r = if hash::is_hash(fb) {
                    hash::aref(ctx, fb, key)?
                } else if proc::is_proc(fb) {
                    ctx.call_str(fb, "call", &[key])?
                } else if !ctx.respond_to(fb, ctx.intern("[]"), true) {
                    let x = last_error_exception(ctx, &t).unwrap_or(Value::NIL);
                    return Err(Unwind::Raise(x));
                } else {
                    ctx.call_str(fb, "[]", &[key])?
                };
                if r.is_nil() {
                    let x = last_error_exception(ctx, &t).unwrap_or(Value::NIL);
                    return Err(Unwind::Raise(x));
                }
                let r = string::to_str_arg(ctx, r)?;
                match transcode::convert_simple(string::bytes(r), string::encoding(r), to) {
                    Some(b) => t.out.extend_from_slice(&b),
                    None => return Err(ctx.arg_error("too big fallback string")),
                }
            }
            _ => {
                let x = last_error_exception(ctx, &t).unwrap_or(Value::NIL);
                return Err(Unwind::Raise(x));
            }
        }
    }
}

// ---- Encoding::Converter ----

pub struct ConverterObj {
    t: Option<Transcoder>,
}

crate::data_obj!(ConverterObj);

fn alloc_converter(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(ConverterObj { t: None })))
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut Transcoder> {
    match data_ref::<ConverterObj>(v).and_then(|c| c.t.as_mut()) {
        Some(t) => Ok(t),
        None => Err(ctx.type_error("uninitialized encoding converter")),
    }
}

fn flags_or_opts(ctx: &mut Ctx, v: Option<Value>) -> Result<Opts> {
    match v {
        None => Ok(Opts::default()),
        Some(v) if v.is_nil() => Ok(Opts::default()),
        Some(v) if integer::is_integer(v) => Ok(Opts { flags: integer::to_i64_arg(ctx, v)? as u32, ..Default::default() }),
        Some(v) => {
            let h = if hash::is_hash(v) { v } else { ctx.call_str(v, "to_hash", &[])? };
            parse_opts(ctx, Some(h))
        }
    }
}

fn c_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (src, dst) = (args.pos[0], args.pos[1]);
    let optv = args.pos.get(2).copied().or(args.kw);
    let o = flags_or_opts(ctx, optv)?;
    let empty = |v: Value| string::is_string(v) && string::bytes(v).is_empty();
    if empty(src) && empty(dst) {
        set_data(recv, Box::new(ConverterObj { t: Some(Transcoder::passthrough(o.flags & transcode::DECORATORS)) }));
        return Ok(Value::NIL);
    }
    if empty(src) || empty(dst) {
        let named = if empty(src) { dst } else { src };
        let e = encoding_arg(ctx, named)?;
        let msg = format!("code converter not found ({})", name(e));
        return Err(ctx.raise(ctx.c().converter_not_found_error, &msg));
    }
    let (from, to) = match (conversion_encoding(ctx, src)?, conversion_encoding(ctx, dst)?) {
        (Ok(f), Ok(t)) => (f, t),
        (f, t) => return Err(not_found_by_name(ctx, &f, &t)),
    };
    if from == to {
        return Err(not_found_error(ctx, from, to));
    }
    let Some(mut t) = Transcoder::new(from, to, o.flags) else {
        return Err(not_found_error(ctx, from, to));
    };
    if let Some(r) = o.replace {
        set_replacement(ctx, &mut t, r)?;
    }
    set_data(recv, Box::new(ConverterObj { t: Some(t) }));
    Ok(Value::NIL)
}

fn c_source_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if get(ctx, recv)?.passthrough {
        return Ok(Value::NIL);
    }
    let e = get(ctx, recv)?.src;
    Ok(encoding_object(ctx, e))
}

fn c_destination_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if get(ctx, recv)?.passthrough {
        return Ok(Value::NIL);
    }
    let e = get(ctx, recv)?.dst;
    Ok(encoding_object(ctx, e))
}

fn c_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let s = if t.passthrough {
        let d = decorator_names(t.flags);
        format!("#<Encoding::Converter: {}>", if d.is_empty() { "no-conversion".to_string() } else { d.join(", ") })
    } else {
        format!("#<Encoding::Converter: {} to {}>", name(t.src), name(t.dst))
    };
    Ok(string::new_binary(ctx, s.as_bytes()))
}

fn decorator_names(flags: u32) -> Vec<&'static str> {
    let mut v = Vec::new();
    if flags & transcode::XML_TEXT_DECORATOR != 0 {
        v.push("xml_text_escape");
    }
    if flags & transcode::XML_ATTR_CONTENT_DECORATOR != 0 {
        v.push("xml_attr_content_escape");
    }
    if flags & transcode::XML_ATTR_QUOTE_DECORATOR != 0 {
        v.push("xml_attr_quote");
    }
    if flags & transcode::UNIVERSAL_NEWLINE_DECORATOR != 0 {
        v.push("universal_newline");
    }
    if flags & transcode::CRLF_NEWLINE_DECORATOR != 0 {
        v.push("crlf_newline");
    }
    if flags & transcode::CR_NEWLINE_DECORATOR != 0 {
        v.push("cr_newline");
    }
    if flags & transcode::LF_NEWLINE_DECORATOR != 0 {
        v.push("lf_newline");
    }
    v
}

fn convpath_array(ctx: &mut Ctx, from: u8, to: u8, flags: u32, passthrough: bool) -> Value {
    let p = if passthrough { Vec::new() } else { transcode::path(from, to) };
    let out = array::new(ctx);
    for w in p.windows(2) {
        let a = enc_named(ctx, w[0]);
        let b = enc_named(ctx, w[1]);
        let pair = array::from_vec(ctx, vec![a, b]);
        array::push(ctx, out, pair);
    }
    for d in decorator_names(flags) {
        let s = string::new_utf8(ctx, d);
        array::push(ctx, out, s);
    }
    out
}

fn c_convpath(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let (s, d, f, pt) = (t.src, t.dst, t.flags, t.passthrough);
    Ok(convpath_array(ctx, s, d, f, pt))
}

fn c_s_search_convpath(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (from, to) = match (conversion_encoding(ctx, args.pos[0])?, conversion_encoding(ctx, args.pos[1])?) {
        (Ok(f), Ok(t)) => (f, t),
        (f, t) => return Err(not_found_by_name(ctx, &f, &t)),
    };
    let o = flags_or_opts(ctx, args.pos.get(2).copied().or(args.kw))?;
    if from == to || Transcoder::new(from, to, 0).is_none() {
        return Err(not_found_error(ctx, from, to));
    }
    Ok(convpath_array(ctx, from, to, o.flags, false))
}

fn c_s_asciicompat_encoding(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let enc = if data_ref::<super::EncodingObj>(v).is_some() {
        encoding_arg(ctx, v)?
    } else {
        let s = string::to_str_arg(ctx, v)?;
        match find(&string::to_rust_string_lossy(s)) {
            Some(e) => e,
            None => return Ok(Value::NIL),
        }
    };
    let n = name(enc);
    let r = match n {
        "ISO-2022-JP" => "stateless-ISO-2022-JP",
        "UTF-16BE" | "UTF-16LE" | "UTF-32BE" | "UTF-32LE" | "UTF-16" | "UTF-32" | "UTF-7" => "UTF-8",
        "CP50220" | "CP50221" => "CP51932",
        _ => return Ok(Value::NIL),
    };
    Ok(enc_named(ctx, r))
}

/// Moves up to `limit` bytes of the converter's output into `dst` at `start`.
fn deliver(t: &mut Transcoder, dst: Value, limit: Option<usize>) {
    let n = limit.map_or(t.out.len(), |l| l.min(t.out.len()));
    let rest = t.out.split_off(n);
    let chunk = std::mem::replace(&mut t.out, rest);
    string::append(dst, &chunk);
}

/// `primitive_convert(src, dst, dst_start = nil, dst_size = nil, opt = 0)`.
fn c_primitive_convert(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = args.pos[0];
    let dst = args.pos[1];
    let mut opt = args.pos.get(4).copied().or(args.kw);
    let mut start_v = args.pos.get(2).copied().unwrap_or(Value::NIL);
    let mut size_v = args.pos.get(3).copied().unwrap_or(Value::NIL);
    if args.kw.is_some() && args.pos.len() == 3 && hash::is_hash(start_v) {
        opt = Some(start_v);
        start_v = Value::NIL;
    }
    if args.kw.is_none() && args.pos.len() == 4 && hash::is_hash(size_v) {
        opt = Some(size_v);
        size_v = Value::NIL;
    }
    let extra = match opt {
        None => 0,
        Some(v) if v.is_nil() => 0,
        Some(v) if integer::is_integer(v) => integer::to_i64_arg(ctx, v)? as u32,
        Some(v) => {
            let h = if hash::is_hash(v) { v } else { ctx.call_str(v, "to_hash", &[])? };
            parse_opts(ctx, Some(h))?.flags & (transcode::PARTIAL_INPUT | transcode::AFTER_OUTPUT)
        }
    };
    let src = if src.is_nil() { None } else { Some(string::to_str_arg(ctx, src)?) };
    let dst = string::to_str_arg(ctx, dst)?;
    let start = if start_v.is_nil() { None } else { Some(integer::to_i64_arg(ctx, start_v)?) };
    let size = if size_v.is_nil() { None } else { Some(integer::to_i64_arg(ctx, size_v)?) };
    string::modify(ctx, dst)?;
    if let Some(s) = src {
        string::modify(ctx, s)?;
    }
    let dlen = string::bytes(dst).len() as i64;
    let start = start.unwrap_or(dlen);
    if start < 0 || start > dlen {
        return Err(ctx.arg_error("destination byte offset is out of range"));
    }
    if size.is_some_and(|s| s < 0) {
        return Err(ctx.arg_error("negative destination bytesize"));
    }
    let t = get(ctx, recv)?;
    let input = src.map(|s| string::bytes(s).to_vec()).unwrap_or_default();
    let keep = string::bytes(dst)[..start as usize].to_vec();
    string::set_bytes(dst, keep);
    let saved = t.flags;
    t.flags = (t.flags & !(transcode::PARTIAL_INPUT | transcode::AFTER_OUTPUT)) | extra;
    let limit = size.map(|s| s as usize);
    let (res, taken) = t.run(&input, limit);
    t.flags = saved;
    deliver(t, dst, limit);
    let res = if limit.is_some() && !t.out.is_empty() && matches!(res, Res::Finished | Res::SourceBufferEmpty | Res::AfterOutput) { Res::DestinationBufferFull } else { res };
    if res == Res::DestinationBufferFull {
        t.last = transcode::ErrInfo { res, step: None, error_bytes: Vec::new(), readagain: Vec::new(), codepoint: None };
    }
    string::set_encoding(dst, t.dst);
    if let Some(s) = src {
        string::set_bytes(s, input[taken..].to_vec());
    }
    Ok(Value::symbol(ctx.intern(res.symbol_name())))
}

fn raise_last(ctx: &mut Ctx, t: &Transcoder) -> Unwind {
    match last_error_exception(ctx, t) {
        Some(x) => Unwind::Raise(x),
        None => ctx.arg_error("conversion failed"),
    }
}

fn c_convert(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let input = string::bytes(s).to_vec();
    let t = get(ctx, recv)?;
    if t.finished {
        return Err(ctx.arg_error("converter already finished"));
    }
    let saved = t.flags;
    t.flags |= transcode::PARTIAL_INPUT;
    let (res, _) = t.run(&input, None);
    t.flags = saved;
    let out = std::mem::take(&mut t.out);
    match res {
        Res::SourceBufferEmpty | Res::Finished => {
            t.last = transcode::ErrInfo { res: Res::SourceBufferEmpty, step: None, error_bytes: Vec::new(), readagain: Vec::new(), codepoint: None };
            let dst = t.dst;
            Ok(string::new_with_enc(ctx, out, dst))
        }
        _ => Err(raise_last(ctx, t)),
    }
}

fn c_finish(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let (res, _) = t.run(&[], None);
    let out = std::mem::take(&mut t.out);
    match res {
        Res::Finished => {
            let dst = t.dst;
            Ok(string::new_with_enc(ctx, out, dst))
        }
        _ => Err(raise_last(ctx, t)),
    }
}

fn c_primitive_errinfo(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    let e = t.last.clone();
    let sym = Value::symbol(ctx.intern(e.res.symbol_name()));
    let out = array::from_vec(ctx, vec![sym]);
    match e.step {
        Some((s, d)) => {
            let sv = string::new_utf8(ctx, s);
            array::push(ctx, out, sv);
            let dv = string::new_utf8(ctx, d);
            array::push(ctx, out, dv);
            let eb = string::new_binary(ctx, &e.error_bytes);
            array::push(ctx, out, eb);
            let rb = string::new_binary(ctx, &e.readagain);
            array::push(ctx, out, rb);
        }
        None => {
            for _ in 0..4 {
                array::push(ctx, out, Value::NIL);
            }
        }
    }
    Ok(out)
}

fn c_last_error(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    Ok(last_error_exception(ctx, t).unwrap_or(Value::NIL))
}

fn c_putback(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = match args.pos.first() {
        Some(&v) if !v.is_nil() => Some(integer::to_i64_arg(ctx, v)?.max(0) as usize),
        _ => None,
    };
    let t = get(ctx, recv)?;
    let b = t.putback(n);
    let src = t.src;
    Ok(string::new_with_enc(ctx, b, src))
}

fn c_insert_output(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let (b, e) = (string::bytes(s).to_vec(), string::encoding(s));
    let t = get(ctx, recv)?;
    let conv = if e == t.dst || string::is_7bit(s) { Some(b) } else { transcode::convert_simple(&b, e, t.dst) };
    match conv {
        Some(c) => {
            t.out.extend_from_slice(&c);
            Ok(Value::NIL)
        }
        None => {
            let (from, to) = (e, t.dst);
            Err(not_found_error(ctx, from, to))
        }
    }
}

fn c_replacement(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?;
    if let Some((b, e)) = t.replacement.clone() {
        return Ok(string::new_with_enc(ctx, b, e));
    }
    let b = t.replacement_bytes();
    let enc = if t.unicode_dst() && b != b"?" { UTF_8 } else { US_ASCII };
    let b = if enc == UTF_8 { "\u{FFFD}".as_bytes().to_vec() } else { b };
    Ok(string::new_with_enc(ctx, b, enc))
}

/// `replacement=`: the string is converted to the destination encoding now (CRuby keeps
/// it that way), and a string that cannot be leaves the replacement as it was.
fn c_set_replacement(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = string::to_str_arg(ctx, args.pos[0])?;
    let (b, e) = (string::bytes(r).to_vec(), string::encoding(r));
    let t = get(ctx, recv)?;
    let dst = t.dst;
    let converted = transcode::convert_fragment(&b, e, dst);
    match converted {
        Some(c) => {
            t.replacement = Some((c, dst));
            Ok(args.pos[0])
        }
        None => Err(ctx.raise(ctx.c().undefined_conversion_error, "replacement character setup failed")),
    }
}

fn c_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    let Some(o) = data_ref::<ConverterObj>(other).and_then(|c| c.t.as_ref()) else { return Ok(Value::FALSE) };
    let (os, od, of, orp) = (o.src, o.dst, o.flags, o.replacement.clone());
    let t = get(ctx, recv)?;
    Ok(Value::bool(t.src == os && t.dst == od && t.flags == of && t.replacement == orp))
}

pub fn init(ctx: &mut Ctx) {
    let enc = ctx.c().encoding;
    let obj = ctx.c().object;
    let c = crate::core::module_methods::define_class_under(ctx, enc, "Converter", obj);
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(alloc_converter);
    for (n, v) in [
        ("INVALID_MASK", transcode::INVALID_MASK),
        ("INVALID_REPLACE", transcode::INVALID_REPLACE),
        ("UNDEF_MASK", transcode::UNDEF_MASK),
        ("UNDEF_REPLACE", transcode::UNDEF_REPLACE),
        ("UNDEF_HEX_CHARREF", transcode::UNDEF_HEX_CHARREF),
        ("PARTIAL_INPUT", transcode::PARTIAL_INPUT),
        ("AFTER_OUTPUT", transcode::AFTER_OUTPUT),
        ("UNIVERSAL_NEWLINE_DECORATOR", transcode::UNIVERSAL_NEWLINE_DECORATOR),
        ("CRLF_NEWLINE_DECORATOR", transcode::CRLF_NEWLINE_DECORATOR),
        ("CR_NEWLINE_DECORATOR", transcode::CR_NEWLINE_DECORATOR),
        ("XML_TEXT_DECORATOR", transcode::XML_TEXT_DECORATOR),
        ("XML_ATTR_CONTENT_DECORATOR", transcode::XML_ATTR_CONTENT_DECORATOR),
        ("XML_ATTR_QUOTE_DECORATOR", transcode::XML_ATTR_QUOTE_DECORATOR),
    ] {
        let id = ctx.intern(n);
        crate::core::module::body(c).const_set(id, Value::fixnum(v as i64));
    }
    crate::methods!(ctx, c, [
        ("initialize", c_initialize, [2..=3], Unsafe, Kw),
        ("source_encoding", c_source_encoding, [0], Safe),
        ("destination_encoding", c_destination_encoding, [0], Safe),
        ("inspect", c_inspect, [0], Unsafe),
        ("convpath", c_convpath, [0], Unsafe),
        ("primitive_convert", c_primitive_convert, [2..=5], Unsafe, Kw),
        ("convert", c_convert, [1], Unsafe),
        ("finish", c_finish, [0], Unsafe),
        ("primitive_errinfo", c_primitive_errinfo, [0], Unsafe),
        ("last_error", c_last_error, [0], Unsafe),
        ("putback", c_putback, [0..=1], Unsafe),
        ("insert_output", c_insert_output, [1], Unsafe),
        ("replacement", c_replacement, [0], Unsafe),
        ("replacement=", c_set_replacement, [1], Unsafe),
        ("==", c_eq, [1], Unsafe),
        ("search_convpath", c_s_search_convpath, [2..=3], Safe, Singleton, Kw),
        ("asciicompat_encoding", c_s_asciicompat_encoding, [1], Safe, Singleton),
    ]);
}
