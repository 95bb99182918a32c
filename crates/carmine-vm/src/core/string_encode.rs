//! String encoding methods: `encoding`, `force_encoding`, `valid_encoding?`,
//! `ascii_only?`, `b`, `encode`/`encode!` (transcoding with CRuby's options and error
//! classes), `scrub`, `unicode_normalize`, `append_as_bytes`.
//!
//! Invariants:
//! - Transcoding goes through Unicode codepoints: a source decoder yields codepoints (or
//!   invalid byte runs), a destination encoder maps them back. Supported: the UTF-8/16/32
//!   family, US-ASCII, ASCII-8BIT, ISO-8859-1/15 and Windows-1252; other pairs raise
//!   `Encoding::ConverterNotFoundError`.
//! - Conversion errors carry their details in hidden instance variables read by the
//!   `Encoding::UndefinedConversionError` / `InvalidByteSequenceError` accessors.

use unicode_normalization::UnicodeNormalization;

use crate::core::encoding::{self, BINARY, US_ASCII, UTF_8};
use crate::core::string::{self, bytes, encoding, modify, new_with_enc, set_encoding, to_str_arg};
use crate::core::{hash, object, proc};
use crate::error::Unwind;
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

// ---- codecs ----

/// One unit of decoded input.
enum Unit {
    Char(u32, usize),
    /// Invalid bytes: length, and whether the sequence was merely cut short by the end.
    Invalid(usize, bool),
}

fn latin_table(name: &str) -> Option<&'static [(u8, u32)]> {
    // Differences from ISO-8859-1 (byte -> codepoint); None for unknown tables.
    static ISO_8859_15: &[(u8, u32)] = &[(0xA4, 0x20AC), (0xA6, 0x160), (0xA8, 0x161), (0xB4, 0x17D), (0xB8, 0x17E), (0xBC, 0x152), (0xBD, 0x153), (0xBE, 0x178)];
    static WINDOWS_1252: &[(u8, u32)] = &[
        (0x80, 0x20AC), (0x82, 0x201A), (0x83, 0x192), (0x84, 0x201E), (0x85, 0x2026), (0x86, 0x2020), (0x87, 0x2021), (0x88, 0x2C6),
        (0x89, 0x2030), (0x8A, 0x160), (0x8B, 0x2039), (0x8C, 0x152), (0x8E, 0x17D), (0x91, 0x2018), (0x92, 0x2019), (0x93, 0x201C),
        (0x94, 0x201D), (0x95, 0x2022), (0x96, 0x2013), (0x97, 0x2014), (0x98, 0x2DC), (0x99, 0x2122), (0x9A, 0x161), (0x9B, 0x203A),
        (0x9C, 0x153), (0x9E, 0x17E), (0x9F, 0x178),
    ];
    match name {
        "ISO-8859-1" => Some(&[]),
        "ISO-8859-15" => Some(ISO_8859_15),
        "Windows-1252" => Some(WINDOWS_1252),
        _ => None,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Codec {
    Utf8,
    Utf16 { le: bool, bom: bool },
    Utf32 { le: bool, bom: bool },
    Ascii,
    Binary,
    Latin(&'static [(u8, u32)], bool),
}

fn codec(enc: u8) -> Option<Codec> {
    let name = encoding::name(enc);
    Some(match name {
        _ if encoding::is_utf8(enc) => Codec::Utf8,
        "UTF-16LE" => Codec::Utf16 { le: true, bom: false },
        "UTF-16BE" => Codec::Utf16 { le: false, bom: false },
        "UTF-16" => Codec::Utf16 { le: false, bom: true },
        "UTF-32LE" => Codec::Utf32 { le: true, bom: false },
        "UTF-32BE" => Codec::Utf32 { le: false, bom: false },
        "UTF-32" => Codec::Utf32 { le: false, bom: true },
        "US-ASCII" => Codec::Ascii,
        "ASCII-8BIT" => Codec::Binary,
        "Windows-1252" => Codec::Latin(latin_table(name)?, true),
        _ => Codec::Latin(latin_table(name)?, false),
    })
}

fn decode_at(c: Codec, b: &[u8], i: usize, le_state: &mut bool) -> Unit {
    let rest = b.len() - i;
    match c {
        Codec::Utf8 => match encoding::utf8_precise_len(b, i) {
            Ok(n) => {
                let (cp, _) = encoding::codepoint_at(UTF_8, b, i);
                Unit::Char(cp, n)
            }
            Err(n) => Unit::Invalid(n, i + n == b.len() && b[i] >= 0xc2 && b[i] <= 0xf4),
        },
        Codec::Utf16 { .. } => {
            if rest < 2 {
                return Unit::Invalid(rest, true);
            }
            let w = |k: usize| if *le_state { u16::from_le_bytes([b[k], b[k + 1]]) } else { u16::from_be_bytes([b[k], b[k + 1]]) } as u32;
            let u = w(i);
            match u {
                0xD800..=0xDBFF => {
                    if rest < 4 {
                        return Unit::Invalid(rest, true);
                    }
                    let lo = w(i + 2);
                    if (0xDC00..=0xDFFF).contains(&lo) {
                        Unit::Char(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), 4)
                    } else {
                        Unit::Invalid(2, false)
                    }
                }
                0xDC00..=0xDFFF => Unit::Invalid(2, false),
                _ => Unit::Char(u, 2),
            }
        }
        Codec::Utf32 { .. } => {
            if rest < 4 {
                return Unit::Invalid(rest, true);
            }
            let q = [b[i], b[i + 1], b[i + 2], b[i + 3]];
            let cp = if *le_state { u32::from_le_bytes(q) } else { u32::from_be_bytes(q) };
            if cp > 0x10FFFF || (0xD800..=0xDFFF).contains(&cp) {
                Unit::Invalid(4, false)
            } else {
                Unit::Char(cp, 4)
            }
        }
        Codec::Ascii => {
            if b[i] < 0x80 {
                Unit::Char(b[i] as u32, 1)
            } else {
                Unit::Invalid(1, false)
            }
        }
        Codec::Binary => Unit::Char(b[i] as u32 | if b[i] >= 0x80 { 0x8000_0000 } else { 0 }, 1),
        Codec::Latin(table, cp1252) => {
            let x = b[i];
            match table.iter().find(|&&(k, _)| k == x) {
                Some(&(_, cp)) => Unit::Char(cp, 1),
                None if cp1252 && matches!(x, 0x81 | 0x8D | 0x8F | 0x90 | 0x9D) => Unit::Char(x as u32 | 0x8000_0000, 1),
                None => Unit::Char(x as u32, 1),
            }
        }
    }
}

/// Encodes `cp`; `None` when the destination cannot represent it.
fn encode_cp(c: Codec, cp: u32, out: &mut Vec<u8>) -> bool {
    match c {
        Codec::Utf8 => match char::from_u32(cp) {
            Some(ch) => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                true
            }
            None => false,
        },
        Codec::Utf16 { le, .. } => match char::from_u32(cp) {
            Some(ch) => {
                let mut buf = [0u16; 2];
                for u in ch.encode_utf16(&mut buf) {
                    out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
                }
                true
            }
            None => false,
        },
        Codec::Utf32 { le, .. } => {
            if char::from_u32(cp).is_none() {
                return false;
            }
            out.extend_from_slice(&if le { cp.to_le_bytes() } else { cp.to_be_bytes() });
            true
        }
        Codec::Ascii => {
            if cp < 0x80 {
                out.push(cp as u8);
                true
            } else {
                false
            }
        }
        Codec::Binary => {
            if cp < 0x80 {
                out.push(cp as u8);
                true
            } else {
                false
            }
        }
        Codec::Latin(table, _) => {
            if let Some(&(k, _)) = table.iter().find(|&&(_, v)| v == cp) {
                out.push(k);
                return true;
            }
            if cp < 0x100 && !table.iter().any(|&(k, _)| k as u32 == cp) {
                out.push(cp as u8);
                return true;
            }
            false
        }
    }
}

// ---- options ----

#[derive(Default)]
struct EncodeOpts {
    invalid_replace: bool,
    undef_replace: bool,
    replace: Option<Value>,
    fallback: Option<Value>,
    xml: Option<u8>,
    newline: Option<&'static str>,
}

fn parse_opts(ctx: &mut Ctx, h: Option<Value>) -> Result<EncodeOpts> {
    let mut o = EncodeOpts::default();
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
    o.invalid_replace = sym_is(ctx, inv, "replace");
    let und = get(ctx, "undef");
    o.undef_replace = sym_is(ctx, und, "replace");
    o.replace = get(ctx, "replace").filter(|v| !v.is_nil());
    if let Some(r) = o.replace {
        o.replace = Some(to_str_arg(ctx, r)?);
    }
    o.fallback = get(ctx, "fallback").filter(|v| !v.is_nil());
    let xml = get(ctx, "xml");
    if sym_is(ctx, xml, "text") {
        o.xml = Some(b't');
    } else if sym_is(ctx, xml, "attr") {
        o.xml = Some(b'a');
    } else if xml.is_some_and(|v| !v.is_nil()) {
        let s = object::inspect_string(ctx, xml.unwrap_or(Value::NIL))?;
        return Err(ctx.arg_error(&format!("unexpected value for xml option: {s}")));
    }
    for (k, v) in [("universal_newline", "universal"), ("crlf_newline", "crlf"), ("cr_newline", "cr"), ("lf_newline", "lf")] {
        if get(ctx, k).is_some_and(|x| x.truthy()) {
            o.newline = Some(v);
        }
    }
    if let Some(n) = get(ctx, "newline").and_then(|v| v.as_symbol()) {
        o.newline = match ctx.sym_str(n).as_str() {
            "universal" => Some("universal"),
            "crlf" => Some("crlf"),
            "cr" => Some("cr"),
            "lf" => Some("lf"),
            other => return Err(ctx.arg_error(&format!("unexpected value for newline option: {other}"))),
        };
    }
    Ok(o)
}

// ---- errors ----

fn hex_bytes(b: &[u8]) -> String {
    b.iter().map(|x| format!("\\x{x:02X}")).collect()
}

fn set_err_info(ctx: &mut Ctx, e: Value, pairs: &[(&str, Value)]) {
    for (k, v) in pairs {
        let id = ctx.intern(k);
        object::ivar_set_raw(ctx, e, id, *v);
    }
}

fn undefined_error(ctx: &mut Ctx, src: u8, dst: u8, ch: &[u8], cp: Option<u32>) -> Unwind {
    let msg = match cp {
        Some(cp) if encoding::is_unicode(src) => format!("U+{cp:04X} from {} to {}", encoding::name(src), encoding::name(dst)),
        Some(cp) => format!("U+{cp:04X} to {} in conversion from {} to UTF-8 to {}", encoding::name(dst), encoding::name(src), encoding::name(dst)),
        None => format!("\"{}\" from {} to {}", hex_bytes(ch), encoding::name(src), encoding::name(dst)),
    };
    let e = ctx.new_error(ctx.c().undefined_conversion_error, &msg);
    let ec = new_with_enc(ctx, ch.to_vec(), src);
    let se = encoding::encoding_object(ctx, src);
    let de = encoding::encoding_object(ctx, dst);
    set_err_info(ctx, e, &[("__error_char", ec), ("__source_encoding", se), ("__destination_encoding", de)]);
    Unwind::Raise(e)
}

fn invalid_error(ctx: &mut Ctx, src: u8, dst: u8, bad: &[u8], following: &[u8], incomplete: bool) -> Unwind {
    let msg = if incomplete {
        format!("incomplete \"{}\" on {}", hex_bytes(bad), encoding::name(src))
    } else if !following.is_empty() {
        format!("\"{}\" followed by \"{}\" on {}", hex_bytes(bad), String::from_utf8_lossy(following).escape_default(), encoding::name(src))
    } else {
        format!("\"{}\" on {}", hex_bytes(bad), encoding::name(src))
    };
    let e = ctx.new_error(ctx.c().invalid_byte_sequence_error, &msg);
    let eb = string::new_binary(ctx, bad);
    let rb = string::new_binary(ctx, following);
    let se = encoding::encoding_object(ctx, src);
    let de = encoding::encoding_object(ctx, dst);
    set_err_info(ctx, e, &[("__error_bytes", eb), ("__readagain_bytes", rb), ("__source_encoding", se), ("__destination_encoding", de), ("__incomplete", Value::bool(incomplete))]);
    Unwind::Raise(e)
}

fn not_found_error(ctx: &mut Ctx, src: u8, dst: u8) -> Unwind {
    let msg = format!("code converter not found ({} to {})", encoding::name(src), encoding::name(dst));
    ctx.raise(ctx.c().converter_not_found_error, &msg)
}

// ---- transcoding ----

fn apply_newline(b: &[u8], mode: Option<&str>) -> Vec<u8> {
    match mode {
        Some("universal") => {
            let mut out = Vec::with_capacity(b.len());
            let mut i = 0;
            while i < b.len() {
                if b[i] == b'\r' {
                    out.push(b'\n');
                    if b.get(i + 1) == Some(&b'\n') {
                        i += 1;
                    }
                } else {
                    out.push(b[i]);
                }
                i += 1;
            }
            out
        }
        Some("crlf") => b.iter().flat_map(|&c| if c == b'\n' { vec![b'\r', b'\n'] } else { vec![c] }).collect(),
        Some("cr") => b.iter().map(|&c| if c == b'\n' { b'\r' } else { c }).collect(),
        _ => b.to_vec(),
    }
}

/// The default replacement for a destination encoding.
fn default_replacement(dst: u8) -> (Vec<u32>, bool) {
    if encoding::is_unicode(dst) {
        (vec![0xFFFD], true)
    } else {
        (vec!['?' as u32], false)
    }
}

/// Converts `src` (content of a string in `from`) to `to`.
fn transcode(ctx: &mut Ctx, src: &[u8], from: u8, to: u8, o: &EncodeOpts) -> Result<Vec<u8>> {
    let (Some(dc), Some(ec)) = (codec(from), codec(to)) else {
        return Err(not_found_error(ctx, from, to));
    };
    let src = if o.newline == Some("universal") { apply_newline(src, o.newline) } else { src.to_vec() };
    let mut out = Vec::with_capacity(src.len());
    let mut le = matches!(dc, Codec::Utf16 { le: true, .. } | Codec::Utf32 { le: true, .. });
    let mut i = 0;
    // BOM handling for the endian-neutral UTF-16/UTF-32.
    match dc {
        Codec::Utf16 { bom: true, .. } if src.len() >= 2 => {
            if src[0] == 0xFF && src[1] == 0xFE {
                le = true;
                i = 2;
            } else if src[0] == 0xFE && src[1] == 0xFF {
                i = 2;
            }
        }
        Codec::Utf32 { bom: true, .. } if src.len() >= 4 => {
            if src[..4] == [0xFF, 0xFE, 0, 0] {
                le = true;
                i = 4;
            } else if src[..4] == [0, 0, 0xFE, 0xFF] {
                i = 4;
            }
        }
        _ => {}
    }
    match ec {
        Codec::Utf16 { bom: true, .. } => out.extend_from_slice(&[0xFE, 0xFF]),
        Codec::Utf32 { bom: true, .. } => out.extend_from_slice(&[0, 0, 0xFE, 0xFF]),
        _ => {}
    }
    let replacement = |ctx: &mut Ctx| -> Result<Vec<u32>> {
        match o.replace {
            Some(r) => {
                let rb = bytes(r).to_vec();
                let re = encoding(r);
                let mut cps = Vec::new();
                let mut k = 0;
                let mut st = matches!(codec(re), Some(Codec::Utf16 { le: true, .. } | Codec::Utf32 { le: true, .. }));
                let Some(rc) = codec(re) else { return Err(not_found_error(ctx, re, to)) };
                while k < rb.len() {
                    match decode_at(rc, &rb, k, &mut st) {
                        Unit::Char(cp, n) => {
                            cps.push(cp);
                            k += n;
                        }
                        Unit::Invalid(n, _) => k += n,
                    }
                }
                Ok(cps)
            }
            None => Ok(default_replacement(to).0),
        }
    };
    let push_cps = |ctx: &mut Ctx, cps: &[u32], out: &mut Vec<u8>| -> Result<()> {
        for &c in cps {
            if !encode_cp(ec, c & 0x7FFF_FFFF, out) {
                return Err(undefined_error(ctx, UTF_8, to, &[], Some(c)));
            }
        }
        Ok(())
    };
    while i < src.len() {
        match decode_at(dc, &src, i, &mut le) {
            Unit::Char(cp, n) => {
                let raw = cp & 0x8000_0000 != 0;
                let cp = cp & 0x7FFF_FFFF;
                if let Some(x) = o.xml {
                    let esc: Option<&str> = match cp {
                        0x26 => Some("&amp;"),
                        0x3C => Some("&lt;"),
                        0x3E => Some("&gt;"),
                        0x22 if x == b'a' => Some("&quot;"),
                        0x27 if x == b'a' => Some("&apos;"),
                        _ => None,
                    };
                    if let Some(e) = esc {
                        out.extend_from_slice(e.as_bytes());
                        i += n;
                        continue;
                    }
                }
                if raw || !encode_cp(ec, cp, &mut out) {
                    let ch = src[i..i + n].to_vec();
                    if let Some(fb) = o.fallback {
                        let key = new_with_enc(ctx, ch.clone(), from);
                        let r = if hash::is_hash(fb) {
                            hash::aref(ctx, fb, key)?
                        } else if proc::is_proc(fb) {
                            ctx.call_str(fb, "call", &[key])?
                        } else {
                            ctx.call_str(fb, "[]", &[key])?
                        };
                        if r.is_nil() {
                            return Err(undefined_error(ctx, from, to, &ch, (!raw).then_some(cp)));
                        }
                        let r = to_str_arg(ctx, r)?;
                        let rb = bytes(r).to_vec();
                        let conv = transcode(ctx, &rb, encoding(r), to, &EncodeOpts::default())?;
                        out.extend_from_slice(&conv);
                    } else if o.xml.is_some() && !raw {
                        out.extend_from_slice(format!("&#x{cp:X};").as_bytes());
                    } else if o.undef_replace {
                        let r = replacement(ctx)?;
                        push_cps(ctx, &r, &mut out)?;
                    } else {
                        return Err(undefined_error(ctx, from, to, &ch, (!raw).then_some(cp)));
                    }
                }
                i += n;
            }
            Unit::Invalid(n, incomplete) => {
                if o.invalid_replace {
                    let r = replacement(ctx)?;
                    push_cps(ctx, &r, &mut out)?;
                    i += n;
                    continue;
                }
                let bad = src[i..i + n].to_vec();
                let following: Vec<u8> = if !incomplete && matches!(dc, Codec::Utf8) && n > 1 { src.get(i + n..i + n + 1).map(<[u8]>::to_vec).unwrap_or_default() } else { Vec::new() };
                return Err(invalid_error(ctx, from, to, &bad, &following, incomplete));
            }
        }
    }
    if o.newline.is_some_and(|m| m != "universal") {
        out = apply_newline(&out, o.newline);
    }
    if o.xml == Some(b'a') {
        let mut q = Vec::with_capacity(out.len() + 2);
        encode_cp(ec, '"' as u32, &mut q);
        q.extend_from_slice(&out);
        encode_cp(ec, '"' as u32, &mut q);
        out = q;
    }
    Ok(out)
}

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
    let to = match pos.first() {
        Some(&v) => Some(encoding::encoding_arg(ctx, v)?),
        None => None,
    };
    let from = match pos.get(1) {
        Some(&v) => encoding::encoding_arg(ctx, v)?,
        None => encoding(recv),
    };
    Ok((to, from, opts))
}

/// The converted bytes and encoding for `recv.encode(*args)`.
fn encoded(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<(Vec<u8>, u8)> {
    let (to, from, opts) = encode_args(ctx, recv, args)?;
    let o = parse_opts(ctx, opts)?;
    let src = bytes(recv).to_vec();
    let Some(to) = to else {
        // No destination: only the newline/xml options apply.
        let mut out = apply_newline(&src, o.newline);
        if o.xml.is_some() {
            out = transcode(ctx, &out, from, from, &o)?;
        }
        return Ok((out, encoding(recv)));
    };
    let same = to == from || (encoding::is_ascii_compatible(to) && encoding::is_ascii_compatible(from) && src.is_ascii() && to != BINARY && from != BINARY && o.xml.is_none());
    if same && o.xml.is_none() {
        let mut out = if o.invalid_replace && !encoding::valid(from, &src) {
            let (r, _) = default_replacement(to);
            let rep: Vec<u8> = match o.replace {
                Some(r) => bytes(r).to_vec(),
                None => r.iter().flat_map(|&c| encoding::encode_codepoint(to, c).unwrap_or_default()).collect(),
            };
            scrub_bytes(&src, from, &mut |_| Ok(rep.clone()))?
        } else {
            src
        };
        out = apply_newline(&out, o.newline);
        return Ok((out, to));
    }
    if to == BINARY && src.is_ascii() || (from == BINARY && to == BINARY) {
        return Ok((apply_newline(&src, o.newline), to));
    }
    let out = transcode(ctx, &src, from, to, &o)?;
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
    let (r, _) = default_replacement(enc);
    let rep: Vec<u8> = r.iter().flat_map(|&c| encoding::encode_codepoint(enc, c).unwrap_or_default()).collect();
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
    let utf8 = if encoding::is_utf8(enc) { bytes(recv).to_vec() } else { transcode(ctx, bytes(recv), enc, UTF_8, &EncodeOpts::default())? };
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
        transcode(ctx, out.as_bytes(), UTF_8, enc, &EncodeOpts::default())
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
    let e = err_ivar(ctx, recv, "__source_encoding");
    if e.is_nil() {
        return Ok(e);
    }
    ctx.call_str(e, "name", &[])
}
fn e_destination_encoding_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = err_ivar(ctx, recv, "__destination_encoding");
    if e.is_nil() {
        return Ok(e);
    }
    ctx.call_str(e, "name", &[])
}
fn e_incomplete_input(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(err_ivar(ctx, recv, "__incomplete").truthy()))
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
