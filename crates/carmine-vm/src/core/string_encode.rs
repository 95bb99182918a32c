//! String encoding methods: `encoding`, `force_encoding`, `valid_encoding?`,
//! `ascii_only?`, `b`, `encode`/`encode!` (transcoding with CRuby's options and error
//! classes), `scrub`, `unicode_normalize`, `append_as_bytes`.
//!
//! Invariants:
//! - Transcoding itself is `core::encoding::transcode` (the engine) and
//!   `core::encoding::converter` (options, fallback, exceptions); this file decides when a
//!   conversion is needed at all (same encoding, ASCII-only strings).
//! - Conversion errors carry their details in hidden instance variables read by the
//!   `Encoding::UndefinedConversionError` / `InvalidByteSequenceError` accessors.

use unicode_normalization::UnicodeNormalization;

use crate::core::encoding::{self, converter, transcode, BINARY, US_ASCII, UTF_8};
use crate::core::string::{self, bytes, encoding, modify, new_with_enc, set_encoding, to_str_arg};
use crate::core::{hash, object};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

// ---- simple methods ----

fn encoding_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = encoding(recv);
    Ok(encoding::encoding_object(ctx, e))
}

fn force_encoding(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = encoding::encoding_arg(ctx, args.pos[0])?;
    modify(ctx, recv)?;
    set_encoding(recv, e);
    Ok(recv)
}

fn valid_encoding(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(string::is_valid(recv)))
}

fn ascii_only(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(string::is_7bit(recv)))
}

fn b_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let b = bytes(recv).to_vec();
    Ok(new_with_enc(ctx, b, BINARY))
}

fn append_as_bytes(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    for &a in args.pos {
        if let Some(i) = a.as_fixnum() {
            string::append(recv, &[i as u8]);
        } else if crate::core::bignum::is_bignum(a) {
            string::append(recv, &[crate::core::bignum::low_u64_any(a) as u8]);
        } else if string::is_string(a) {
            let b = bytes(a).to_vec();
            string::append(recv, &b);
        } else {
            let cname = object::class_name_of(ctx, a);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String or Integer)")));
        }
    }
    Ok(recv)
}

// ---- transcoding ----

/// `encode`'s arguments: (destination, source, options hash).
fn encode_args(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<(Option<u8>, u8, Option<Value>)> {
    let mut pos: Vec<Value> = args.pos.to_vec();
    let mut opts = args.kw;
    if opts.is_none() && pos.last().is_some_and(|&v| hash::is_hash(v)) {
        opts = pos.pop();
    }
    if pos.len() > 2 {
        return Err(ctx.arity_error(pos.len(), 0, Some(2)));
    }
    let from = match pos.get(1) {
        Some(&v) => converter::conversion_encoding(ctx, v)?,
        None => Ok(encoding(recv)),
    };
    let to = match pos.first() {
        Some(&v) => Some(converter::conversion_encoding(ctx, v)?),
        None => None,
    };
    if from.is_err() || to.as_ref().is_some_and(|t| t.is_err()) {
        let to = to.unwrap_or(Err(String::new()));
        return Err(converter::not_found_by_name(ctx, &from, &to));
    }
    Ok((to.map(|t| t.unwrap_or(BINARY)), from.unwrap_or(BINARY), opts))
}

/// The default replacement for invalid bytes of a string in `enc` (scrub).
fn default_replacement_bytes(enc: u8) -> Vec<u8> {
    let cp = if encoding::is_unicode(enc) { 0xFFFD } else { '?' as u32 };
    encoding::encode_codepoint(enc, cp).unwrap_or_else(|| b"?".to_vec())
}

/// The converted bytes and encoding for `recv.encode(*args)`.
fn encoded(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<(Vec<u8>, u8)> {
    let (to, from, opts) = encode_args(ctx, recv, args)?;
    let o = converter::parse_opts(ctx, opts)?;
    let src = bytes(recv).to_vec();
    let decorated = o.flags & transcode::DECORATORS != 0;
    let to = match to.or_else(|| encoding::default_internal(ctx)) {
        Some(t) => t,
        None if o.flags & transcode::INVALID_MASK != 0 && !decorated => from,
        None if !decorated => return Ok((src, encoding(recv))),
        // No destination: only the decorators apply, within the string's own encoding.
        None => from,
    };
    let ascii_ok = encoding::is_ascii_compatible(to) && encoding::is_ascii_compatible(from) && src.is_ascii();
    if (to == from || (ascii_ok && to != BINARY)) && !decorated {
        let out = if o.flags & transcode::INVALID_MASK == transcode::INVALID_REPLACE && to == from && !encoding::valid(from, &src) {
            let rep = match o.replace {
                Some(r) => bytes(r).to_vec(),
                None => default_replacement_bytes(to),
            };
            scrub_bytes(&src, from, &mut |_| Ok(rep.clone()))?
        } else {
            src
        };
        return Ok((out, to));
    }
    if to == BINARY && (src.is_ascii() || from == BINARY) && !decorated {
        return Ok((src, to));
    }
    if to == from {
        // Decorators within one encoding: on the bytes themselves when the encoding is
        // ASCII-compatible, else through UTF-8.
        if encoding::is_ascii_compatible(from) {
            let mut t = transcode::Transcoder::passthrough(o.flags & transcode::DECORATORS);
            t.run(&src, None);
            return Ok((t.out, to));
        }
        let mid = converter::transcode_string(ctx, &src, from, UTF_8, &converter::Opts { flags: o.flags & !transcode::DECORATORS & !transcode::UNDEF_HEX_CHARREF, ..Default::default() })?;
        let out = converter::transcode_string(ctx, &mid, UTF_8, to, &o)?;
        return Ok((out, to));
    }
    let out = converter::transcode_string(ctx, &src, from, to, &o)?;
    Ok((out, to))
}

fn encode(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (out, enc) = encoded(ctx, recv, args)?;
    Ok(new_with_enc(ctx, out, enc))
}

fn encode_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let (out, enc) = encoded(ctx, recv, args)?;
    string::set_bytes(recv, out);
    set_encoding(recv, enc);
    Ok(recv)
}

// ---- scrub ----

/// Replaces each maximal invalid subsequence of `b` using `repl`.
fn scrub_bytes(b: &[u8], enc: u8, repl: &mut dyn FnMut(&[u8]) -> Result<Vec<u8>>) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match encoding::precise_char_len(enc, b, i) {
            Ok(n) => {
                out.extend_from_slice(&b[i..i + n]);
                i += n;
            }
            Err(n) => {
                // Consecutive invalid single bytes in non-UTF-8 encodings merge (CRuby).
                let n = n.max(1);
                let r = repl(&b[i..i + n])?;
                out.extend_from_slice(&r);
                i += n;
            }
        }
    }
    Ok(out)
}

fn scrubbed(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Option<Vec<u8>>> {
    let enc = encoding(recv);
    if string::is_valid(recv) {
        return Ok(None);
    }
    let src = bytes(recv).to_vec();
    if let Some(&r) = args.pos.first().filter(|v| !v.is_nil()) {
        let r = to_str_arg(ctx, r)?;
        if !string::is_valid(r) {
            let shown = String::from_utf8_lossy(&string::inspect_bytes(bytes(r), encoding(r))).into_owned();
            return Err(ctx.arg_error(&format!("replacement must be valid byte sequence '{shown}'")));
        }
        string::check_compatible(ctx, recv, r)?;
        let rb = bytes(r).to_vec();
        return scrub_bytes(&src, enc, &mut |_| Ok(rb.clone())).map(Some);
    }
    if let Some(blk) = args.block {
        let out = scrub_bytes(&src, enc, &mut |bad| {
            let s = new_with_enc(ctx, bad.to_vec(), enc);
            let r = ctx.yield1(&blk, s)?;
            let r = to_str_arg(ctx, r)?;
            if !string::is_valid(r) {
                let shown = String::from_utf8_lossy(&string::inspect_bytes(bytes(r), encoding(r))).into_owned();
                return Err(ctx.arg_error(&format!("replacement must be valid byte sequence '{shown}'")));
            }
            Ok(bytes(r).to_vec())
        })?;
        return Ok(Some(out));
    }
    let rep = default_replacement_bytes(enc);
    scrub_bytes(&src, enc, &mut |_| Ok(rep.clone())).map(Some)
}

fn scrub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = match scrubbed(ctx, recv, args)? {
        Some(o) => o,
        None => bytes(recv).to_vec(),
    };
    Ok(string::new_like(ctx, recv, out))
}

fn scrub_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    if let Some(out) = scrubbed(ctx, recv, args)? {
        string::set_bytes(recv, out);
    }
    Ok(recv)
}

// ---- Unicode normalization ----

fn normalized(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Vec<u8>> {
    let form = match args.pos.first() {
        Some(&f) => match f.as_symbol() {
            Some(s) => ctx.sym_str(s),
            None => {
                let s = object::inspect_string(ctx, f)?;
                return Err(ctx.arg_error(&format!("Invalid normalization form {s}.")));
            }
        },
        None => "nfc".to_string(),
    };
    if !matches!(form.as_str(), "nfc" | "nfd" | "nfkc" | "nfkd") {
        return Err(ctx.arg_error(&format!("Invalid normalization form {form}.")));
    }
    let enc = encoding(recv);
    if enc == US_ASCII || string::is_7bit(recv) && encoding::is_unicode(enc) {
        return Ok(bytes(recv).to_vec());
    }
    if !encoding::is_unicode(enc) {
        let msg = format!("Unicode Normalization not appropriate for {}", encoding::name(enc));
        return Err(ctx.raise(ctx.c().compatibility_error, &msg));
    }
    let utf8 = if encoding::is_utf8(enc) { bytes(recv).to_vec() } else { converter::transcode_string(ctx, bytes(recv), enc, UTF_8, &converter::Opts::default())? };
    let Ok(s) = std::str::from_utf8(&utf8) else {
        return Err(ctx.arg_error(&format!("invalid byte sequence in {}", encoding::name(enc))));
    };
    let out: String = match form.as_str() {
        "nfc" => s.nfc().collect(),
        "nfd" => s.nfd().collect(),
        "nfkc" => s.nfkc().collect(),
        _ => s.nfkd().collect(),
    };
    if encoding::is_utf8(enc) {
        Ok(out.into_bytes())
    } else {
        converter::transcode_string(ctx, out.as_bytes(), UTF_8, enc, &converter::Opts::default())
    }
}

fn unicode_normalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = normalized(ctx, recv, args)?;
    Ok(string::new_like(ctx, recv, out))
}

fn unicode_normalize_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let out = normalized(ctx, recv, args)?;
    string::set_bytes(recv, out);
    Ok(recv)
}

fn unicode_normalized_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = normalized(ctx, recv, args)?;
    Ok(Value::bool(out == bytes(recv)))
}

// ---- error accessors ----

fn err_ivar(ctx: &mut Ctx, recv: Value, name: &str) -> Value {
    let id = ctx.intern(name);
    object::ivar_get(ctx, recv, id)
}

fn e_error_char(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(err_ivar(ctx, recv, "__error_char"))
}
fn e_error_bytes(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(err_ivar(ctx, recv, "__error_bytes"))
}
fn e_readagain_bytes(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(err_ivar(ctx, recv, "__readagain_bytes"))
}
fn e_source_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(err_ivar(ctx, recv, "__source_encoding"))
}
fn e_destination_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(err_ivar(ctx, recv, "__destination_encoding"))
}
fn e_source_encoding_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let n = err_ivar(ctx, recv, "__source_encoding_name");
    if !n.is_nil() {
        return Ok(n);
    }
    let e = err_ivar(ctx, recv, "__source_encoding");
    if e.is_nil() {
        return Ok(e);
    }
    ctx.call_str(e, "name", &[])
}
fn e_destination_encoding_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let n = err_ivar(ctx, recv, "__destination_encoding_name");
    if !n.is_nil() {
        return Ok(n);
    }
    let e = err_ivar(ctx, recv, "__destination_encoding");
    if e.is_nil() {
        return Ok(e);
    }
    ctx.call_str(e, "name", &[])
}
fn e_incomplete_input(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(err_ivar(ctx, recv, "__incomplete"))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("encoding", encoding_m, [0], Safe),
        ("force_encoding", force_encoding, [1], Unsafe),
        ("valid_encoding?", valid_encoding, [0], Safe),
        ("ascii_only?", ascii_only, [0], Safe),
        ("b", b_m, [0], Safe),
        ("append_as_bytes", append_as_bytes, [0..], Unsafe),
        ("encode", encode, [0..], Unsafe, Kw),
        ("encode!", encode_bang, [0..], Unsafe, Kw),
        ("scrub", scrub, [0..=1], Unsafe),
        ("scrub!", scrub_bang, [0..=1], Unsafe),
        ("unicode_normalize", unicode_normalize, [0..=1], Safe),
        ("unicode_normalize!", unicode_normalize_bang, [0..=1], Unsafe),
        ("unicode_normalized?", unicode_normalized_p, [0..=1], Safe),
    ]);
    let u = ctx.c().undefined_conversion_error;
    crate::methods!(ctx, u, [
        ("error_char", e_error_char, [0], Safe),
        ("source_encoding", e_source_encoding, [0], Safe),
        ("destination_encoding", e_destination_encoding, [0], Safe),
        ("source_encoding_name", e_source_encoding_name, [0], Safe),
        ("destination_encoding_name", e_destination_encoding_name, [0], Safe),
    ]);
    let i = ctx.c().invalid_byte_sequence_error;
    crate::methods!(ctx, i, [
        ("error_bytes", e_error_bytes, [0], Safe),
        ("readagain_bytes", e_readagain_bytes, [0], Safe),
        ("incomplete_input?", e_incomplete_input, [0], Safe),
        ("source_encoding", e_source_encoding, [0], Safe),
        ("destination_encoding", e_destination_encoding, [0], Safe),
        ("source_encoding_name", e_source_encoding_name, [0], Safe),
        ("destination_encoding_name", e_destination_encoding_name, [0], Safe),
    ]);
}
