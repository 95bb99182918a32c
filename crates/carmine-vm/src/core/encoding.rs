//! Encodings: the table of known encodings, character boundaries, and the Encoding class.
//!
//! Invariants:
//! - An encoding is an index into `ENCODINGS` (an immutable table); strings store it in
//!   `RBasic::aux`. Index 0 is ASCII-8BIT (BINARY), 1 UTF-8, 2 US-ASCII.
//! - Character boundaries are computed for UTF-8 and single-byte encodings; other
//!   multibyte encodings are treated byte-wise (documented limitation).
//! - Encoding objects are created once per VM and kept in `Encoding::LIST` order as
//!   constants under `Encoding`.

use crate::core::{array, string};
use crate::interp::Args;
use crate::object::{data_ref, DataObj};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const BINARY: u8 = 0;
pub const UTF_8: u8 = 1;
pub const US_ASCII: u8 = 2;

pub struct EncodingInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// Bytes per character for fixed-width encodings; 0 for variable (UTF-8) handling.
    pub unit: u8,
    pub ascii_compatible: bool,
    pub dummy: bool,
}

pub static ENCODINGS: &[EncodingInfo] = &[
    EncodingInfo { name: "ASCII-8BIT", aliases: &["BINARY"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "UTF-8", aliases: &["CP65001"], unit: 0, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "US-ASCII", aliases: &["ASCII", "ANSI_X3.4-1968", "646"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-1", aliases: &["ISO8859-1"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-2", aliases: &["ISO8859-2"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-15", aliases: &["ISO8859-15"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1252", aliases: &["CP1252"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1251", aliases: &["CP1251"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Shift_JIS", aliases: &[], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "EUC-JP", aliases: &["eucJP"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-31J", aliases: &["CP932", "csWindows31J", "SJIS", "PCK"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "UTF-16LE", aliases: &[], unit: 2, ascii_compatible: false, dummy: false },
    EncodingInfo { name: "UTF-16BE", aliases: &["UCS-2BE"], unit: 2, ascii_compatible: false, dummy: false },
    EncodingInfo { name: "UTF-32LE", aliases: &["UCS-4LE"], unit: 4, ascii_compatible: false, dummy: false },
    EncodingInfo { name: "UTF-32BE", aliases: &["UCS-4BE"], unit: 4, ascii_compatible: false, dummy: false },
    EncodingInfo { name: "UTF-16", aliases: &[], unit: 2, ascii_compatible: false, dummy: true },
    EncodingInfo { name: "UTF-32", aliases: &[], unit: 4, ascii_compatible: false, dummy: true },
    EncodingInfo { name: "UTF-7", aliases: &["CP65000"], unit: 1, ascii_compatible: false, dummy: true },
    EncodingInfo { name: "EUC-KR", aliases: &["eucKR"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Big5", aliases: &["CP950"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "GB18030", aliases: &[], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM437", aliases: &["CP437"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "KOI8-R", aliases: &["CP878"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "UTF8-MAC", aliases: &["UTF-8-MAC", "UTF-8-HFS"], unit: 0, ascii_compatible: true, dummy: false },
    // More single-byte encodings (character boundaries only; no transcoding tables).
    EncodingInfo { name: "ISO-8859-3", aliases: &["ISO8859-3"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-4", aliases: &["ISO8859-4"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-5", aliases: &["ISO8859-5"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-6", aliases: &["ISO8859-6"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-7", aliases: &["ISO8859-7"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-8", aliases: &["ISO8859-8"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-9", aliases: &["ISO8859-9"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-10", aliases: &["ISO8859-10"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-11", aliases: &["ISO8859-11"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-13", aliases: &["ISO8859-13"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-14", aliases: &["ISO8859-14"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "ISO-8859-16", aliases: &["ISO8859-16"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM737", aliases: &["CP737"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM775", aliases: &["CP775"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM850", aliases: &["CP850"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM852", aliases: &["CP852"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM855", aliases: &["CP855"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM857", aliases: &["CP857"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM860", aliases: &["CP860"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM861", aliases: &["CP861"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM862", aliases: &["CP862"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM863", aliases: &["CP863"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM864", aliases: &["CP864"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM865", aliases: &["CP865"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM866", aliases: &["CP866"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "IBM869", aliases: &["CP869"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1250", aliases: &["CP1250"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1253", aliases: &["CP1253"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1254", aliases: &["CP1254"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1255", aliases: &["CP1255"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1256", aliases: &["CP1256"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "Windows-1257", aliases: &["CP1257"], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "KOI8-U", aliases: &[], unit: 1, ascii_compatible: true, dummy: false },
    EncodingInfo { name: "macRoman", aliases: &[], unit: 1, ascii_compatible: true, dummy: false },
];

/// Finds an encoding by (case-insensitive) name or alias.
pub fn find(name: &str) -> Option<u8> {
    let n = name.to_ascii_uppercase();
    ENCODINGS.iter().position(|e| e.name.to_ascii_uppercase() == n || e.aliases.iter().any(|a| a.to_ascii_uppercase() == n)).map(|i| i as u8)
}

pub fn name(enc: u8) -> &'static str {
    ENCODINGS.get(enc as usize).map_or("ASCII-8BIT", |e| e.name)
}

pub fn is_utf8(enc: u8) -> bool {
    enc == UTF_8 || enc == UTF8_MAC
}

/// Index of UTF8-MAC (a UTF-8 variant).
pub const UTF8_MAC: u8 = 23;

/// UTF-8, UTF-16/32 and their variants: encodings whose codepoints are Unicode.
pub fn is_unicode(enc: u8) -> bool {
    is_utf8(enc) || ENCODINGS.get(enc as usize).is_some_and(|e| e.name.starts_with("UTF-"))
}

pub fn is_ascii_compatible(enc: u8) -> bool {
    ENCODINGS.get(enc as usize).is_none_or(|e| e.ascii_compatible)
}

/// One byte per character (so character and byte indexes coincide).
pub fn is_single_byte(enc: u8) -> bool {
    ENCODINGS.get(enc as usize).is_some_and(|e| e.unit == 1)
}

/// The name used in error messages: `BINARY (ASCII-8BIT)` for the binary encoding.
pub fn inspect_name(enc: u8) -> &'static str {
    if enc == BINARY {
        "BINARY (ASCII-8BIT)"
    } else {
        name(enc)
    }
}

fn is_little_endian(enc: u8) -> bool {
    ENCODINGS.get(enc as usize).is_some_and(|e| e.name.ends_with("LE"))
}

/// Length of the character starting at `i` (at least 1; invalid bytes count as one).
#[inline]
pub fn char_len(enc: u8, b: &[u8], i: usize) -> usize {
    if is_utf8(enc) {
        return utf8_char_len(b, i);
    }
    match precise_char_len(enc, b, i) {
        Ok(n) => n,
        Err(_) => 1,
    }
}

/// Length of a valid character at `i`, or `Err(n)` where `n` is the length of the
/// maximal invalid subsequence starting there (what `scrub` replaces as one unit).
pub fn precise_char_len(enc: u8, b: &[u8], i: usize) -> std::result::Result<usize, usize> {
    if is_utf8(enc) {
        return utf8_precise_len(b, i);
    }
    let rest = b.len() - i;
    let unit = ENCODINGS.get(enc as usize).map_or(1, |e| e.unit.max(1)) as usize;
    if enc == US_ASCII {
        return if b[i] < 0x80 { Ok(1) } else { Err(1) };
    }
    if unit == 1 {
        return Ok(1);
    }
    if rest < unit {
        return Err(rest);
    }
    if unit == 2 {
        let w = |k: usize| if is_little_endian(enc) { u16::from_le_bytes([b[k], b[k + 1]]) } else { u16::from_be_bytes([b[k], b[k + 1]]) };
        let u = w(i);
        return match u {
            0xD800..=0xDBFF => {
                if rest >= 4 && (0xDC00..=0xDFFF).contains(&w(i + 2)) {
                    Ok(4)
                } else {
                    Err(2)
                }
            }
            0xDC00..=0xDFFF => Err(2),
            _ => Ok(2),
        };
    }
    let cp = if is_little_endian(enc) { u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) } else { u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) };
    if cp > 0x10FFFF || (0xD800..=0xDFFF).contains(&cp) {
        Err(4)
    } else {
        Ok(4)
    }
}

/// Length of a valid UTF-8 sequence at `i`, or 1 for an invalid byte.
#[inline]
pub fn utf8_char_len(b: &[u8], i: usize) -> usize {
    if b[i] < 0x80 {
        return 1;
    }
    utf8_precise_len(b, i).unwrap_or(1)
}

/// A valid UTF-8 sequence's length, or the length of the maximal subpart of an
/// ill-formed sequence (Unicode's "substitution of maximal subparts").
pub fn utf8_precise_len(b: &[u8], i: usize) -> std::result::Result<usize, usize> {
    let c = b[i];
    if c < 0x80 {
        return Ok(1);
    }
    let (n, lo, hi) = match c {
        0xc2..=0xdf => (2, 0x80, 0xbf),
        0xe0 => (3, 0xa0, 0xbf),
        0xe1..=0xec | 0xee..=0xef => (3, 0x80, 0xbf),
        0xed => (3, 0x80, 0x9f),
        0xf0 => (4, 0x90, 0xbf),
        0xf1..=0xf3 => (4, 0x80, 0xbf),
        0xf4 => (4, 0x80, 0x8f),
        _ => return Err(1),
    };
    for k in 1..n {
        let Some(&cc) = b.get(i + k) else { return Err(k) };
        let (l, h) = if k == 1 { (lo, hi) } else { (0x80, 0xbf) };
        if cc < l || cc > h {
            return Err(k);
        }
    }
    Ok(n)
}

/// Whether `b` is valid in `enc`.
pub fn valid(enc: u8, b: &[u8]) -> bool {
    if is_utf8(enc) {
        return std::str::from_utf8(b).is_ok();
    }
    if enc == US_ASCII {
        return b.is_ascii();
    }
    if is_single_byte(enc) {
        return true;
    }
    let mut i = 0;
    while i < b.len() {
        match precise_char_len(enc, b, i) {
            Ok(n) => i += n,
            Err(_) => return false,
        }
    }
    true
}

/// Number of characters in `b`.
pub fn char_count(enc: u8, b: &[u8]) -> usize {
    if is_single_byte(enc) || (b.is_ascii() && is_ascii_compatible(enc)) {
        return b.len();
    }
    let mut i = 0;
    let mut n = 0;
    while i < b.len() {
        i += char_len(enc, b, i);
        n += 1;
    }
    n
}

/// Byte offsets of each character start, plus the end.
pub fn char_offsets(enc: u8, b: &[u8]) -> Vec<usize> {
    let mut v = Vec::with_capacity(b.len() + 1);
    let mut i = 0;
    while i < b.len() {
        v.push(i);
        i += char_len(enc, b, i);
    }
    v.push(b.len());
    v
}

/// Encodes codepoint `cp` in `enc`; `None` when `enc` cannot represent it.
pub fn encode_codepoint(enc: u8, cp: u32) -> Option<Vec<u8>> {
    if is_utf8(enc) {
        return char::from_u32(cp).map(|c| c.to_string().into_bytes());
    }
    let info = ENCODINGS.get(enc as usize)?;
    match info.unit {
        2 => {
            let c = char::from_u32(cp)?;
            let mut buf = [0u16; 2];
            let units = c.encode_utf16(&mut buf);
            let le = is_little_endian(enc);
            Some(units.iter().flat_map(|u| if le { u.to_le_bytes() } else { u.to_be_bytes() }).collect())
        }
        4 => {
            char::from_u32(cp)?;
            Some(if is_little_endian(enc) { cp.to_le_bytes().to_vec() } else { cp.to_be_bytes().to_vec() })
        }
        _ => {
            if enc == US_ASCII && cp >= 0x80 {
                return None;
            }
            (cp < 0x100).then(|| vec![cp as u8])
        }
    }
}

/// The codepoint at `i` (the byte for invalid or non-Unicode single bytes) and its length.
pub fn codepoint_at(enc: u8, b: &[u8], i: usize) -> (u32, usize) {
    let n = char_len(enc, b, i);
    if is_utf8(enc) {
        if n == 1 {
            return (b[i] as u32, 1);
        }
        let s = std::str::from_utf8(&b[i..i + n]).ok().and_then(|s| s.chars().next());
        return (s.map_or(b[i] as u32, |c| c as u32), n);
    }
    if n == 1 {
        return (b[i] as u32, 1);
    }
    let le = is_little_endian(enc);
    let unit = |k: usize| -> u32 {
        if le {
            u16::from_le_bytes([b[k], b[k + 1]]) as u32
        } else {
            u16::from_be_bytes([b[k], b[k + 1]]) as u32
        }
    };
    let unit_size = ENCODINGS.get(enc as usize).map_or(1, |e| e.unit) as usize;
    if unit_size == 2 && n >= 2 {
        let hi = unit(i);
        if n == 4 {
            let lo = unit(i + 2);
            return (0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00), 4);
        }
        return (hi, n);
    }
    let mut cp = 0u32;
    if le {
        for k in (0..n).rev() {
            cp = (cp << 8) | b[i + k] as u32;
        }
    } else {
        for k in 0..n {
            cp = (cp << 8) | b[i + k] as u32;
        }
    }
    (cp, n)
}

/// CRuby's code range of a string: 7bit (ASCII only in an ASCII-compatible encoding),
/// valid, or broken.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CodeRange {
    SevenBit,
    Valid,
    Broken,
}

pub fn code_range(enc: u8, b: &[u8]) -> CodeRange {
    if is_ascii_compatible(enc) && b.is_ascii() {
        CodeRange::SevenBit
    } else if valid(enc, b) {
        CodeRange::Valid
    } else {
        CodeRange::Broken
    }
}

/// The encoding of a result made from two strings (CRuby's `enc_compatible_latter`);
/// `None` when incompatible.
pub fn compatible(a_enc: u8, a: &[u8], b_enc: u8, b: &[u8]) -> Option<u8> {
    if a_enc == b_enc {
        return Some(a_enc);
    }
    if b.is_empty() {
        return Some(a_enc);
    }
    if a.is_empty() {
        return Some(if is_ascii_compatible(a_enc) && is_ascii_compatible(b_enc) && b.is_ascii() { a_enc } else { b_enc });
    }
    if !is_ascii_compatible(a_enc) || !is_ascii_compatible(b_enc) {
        return None;
    }
    let cr1 = code_range(a_enc, a);
    let cr2 = code_range(b_enc, b);
    if cr1 != cr2 {
        if cr1 == CodeRange::SevenBit {
            return Some(b_enc);
        }
        if cr2 == CodeRange::SevenBit {
            return Some(a_enc);
        }
    }
    if cr2 == CodeRange::SevenBit {
        return Some(a_enc);
    }
    None
}

// ---- Encoding objects ----

pub struct EncodingObj {
    pub index: u8,
}

crate::data_obj!(EncodingObj);

/// The Encoding object for index `enc`.
pub fn encoding_object(ctx: &mut Ctx, enc: u8) -> Value {
    let list = ctx.c().encoding;
    let id = ctx.intern("__list__");
    let arr = crate::core::object::ivar_get(ctx, list, id);
    if array::is_array(arr) {
        let v = array::get(arr, enc as usize);
        if !v.is_nil() {
            return v;
        }
    }
    Value::NIL
}

/// The encoding index of an Encoding object or name.
pub fn encoding_arg(ctx: &mut Ctx, v: Value) -> Result<u8> {
    if let Some(e) = data_ref::<EncodingObj>(v) {
        return Ok(e.index);
    }
    let s = string::to_str_arg(ctx, v)?;
    let name = string::to_rust_string_lossy(s);
    match find(&name) {
        Some(e) => Ok(e),
        // The special names: Carmine's locale and filesystem encodings are UTF-8.
        None if ["locale", "filesystem"].iter().any(|n| name.eq_ignore_ascii_case(n)) => Ok(UTF_8),
        None if name.eq_ignore_ascii_case("external") => Ok(default_external(ctx)),
        None if name.eq_ignore_ascii_case("internal") && default_internal(ctx).is_some() => Ok(default_internal(ctx).unwrap_or(UTF_8)),
        None => Err(ctx.arg_error(&format!("unknown encoding name - {name}"))),
    }
}

fn enc_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let i = data_ref::<EncodingObj>(recv).map_or(0, |e| e.index);
    Ok(string::new_us_ascii(ctx, name(i)))
}

fn enc_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let i = data_ref::<EncodingObj>(recv).map_or(0, |e| e.index);
    let info = &ENCODINGS[i as usize];
    let s = if i == BINARY {
        "#<Encoding:BINARY (ASCII-8BIT)>".to_string()
    } else if info.dummy {
        format!("#<Encoding:{} (dummy)>", info.name)
    } else {
        format!("#<Encoding:{}>", info.name)
    };
    Ok(string::new_us_ascii(ctx, &s))
}

fn enc_names(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let i = data_ref::<EncodingObj>(recv).map_or(0, |e| e.index);
    let info = &ENCODINGS[i as usize];
    let mut v = vec![string::new_utf8(ctx, info.name)];
    for a in info.aliases {
        let s = string::new_utf8(ctx, a);
        v.push(s);
    }
    Ok(array::from_vec(ctx, v))
}

fn enc_ascii_compatible(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let i = data_ref::<EncodingObj>(recv).map_or(0, |e| e.index);
    Ok(Value::bool(ENCODINGS[i as usize].ascii_compatible))
}

fn enc_dummy(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let i = data_ref::<EncodingObj>(recv).map_or(0, |e| e.index);
    Ok(Value::bool(ENCODINGS[i as usize].dummy))
}

fn enc_s_find(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if data_ref::<EncodingObj>(args.pos[0]).is_some() {
        return Ok(args.pos[0]);
    }
    let i = encoding_arg(ctx, args.pos[0])?;
    Ok(encoding_object(ctx, i))
}

fn enc_s_list(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let list = ctx.c().encoding;
    let id = ctx.intern("__list__");
    let arr = crate::core::object::ivar_get(ctx, list, id);
    Ok(array::dup(ctx, arr))
}

/// `Encoding.default_external`: what input is tagged with when nothing else is said
/// (UTF-8 until a program changes it; Carmine's locale is UTF-8).
pub fn default_external(ctx: &Ctx) -> u8 {
    ctx.vm().default_external.get()
}

/// `Encoding.default_internal`: what input is transcoded to, if anything.
pub fn default_internal(ctx: &Ctx) -> Option<u8> {
    ctx.vm().default_internal.get()
}

fn enc_s_default_external(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let e = default_external(ctx);
    Ok(encoding_object(ctx, e))
}

fn enc_s_default_internal(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(match default_internal(ctx) {
        Some(e) => encoding_object(ctx, e),
        None => Value::NIL,
    })
}

fn enc_s_set_default_external(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if v.is_nil() {
        return Err(ctx.arg_error("default external can not be nil"));
    }
    let e = encoding_arg(ctx, v)?;
    ctx.vm().default_external.set(e);
    Ok(v)
}

fn enc_s_set_default_internal(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let e = if v.is_nil() { None } else { Some(encoding_arg(ctx, v)?) };
    ctx.vm().default_internal.set(e);
    Ok(v)
}

fn enc_s_compatible(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (a, b) = (args.pos[0], args.pos[1]);
    let enc_of = |ctx: &mut Ctx, v: Value| -> Option<(u8, Vec<u8>)> {
        if string::is_string(v) {
            Some((string::encoding(v), string::bytes(v).to_vec()))
        } else if let Some(e) = data_ref::<EncodingObj>(v) {
            Some((e.index, Vec::new()))
        } else if v.is_symbol() {
            let s = crate::core::symbol::to_string(ctx, v);
            Some((string::encoding(s), string::bytes(s).to_vec()))
        } else {
            None
        }
    };
    let (Some((ea, ba)), Some((eb, bb))) = (enc_of(ctx, a), enc_of(ctx, b)) else { return Ok(Value::NIL) };
    match compatible(ea, &ba, eb, &bb) {
        Some(e) => Ok(encoding_object(ctx, e)),
        None => Ok(Value::NIL),
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().encoding;
    let mut objs = Vec::new();
    let list_arr = array::new(ctx);
    let id = ctx.intern("__list__");
    crate::core::object::ivar_set_raw(ctx, c, id, list_arr);
    for (i, info) in ENCODINGS.iter().enumerate() {
        let o = crate::core::object::new_data(ctx, c, Box::new(EncodingObj { index: i as u8 }));
        crate::core::object::freeze(o);
        array::push(ctx, list_arr, o);
        objs.push(o);
        for n in std::iter::once(&info.name).chain(info.aliases.iter()) {
            let cname: String = n.replace('-', "_").to_ascii_uppercase();
            if cname.chars().next().is_some_and(|ch| ch.is_ascii_alphabetic()) {
                let id = ctx.intern(&cname);
                crate::core::module::body(c).const_set(id, o);
            }
            let mixed: String = n.replace('-', "_");
            if mixed.chars().next().is_some_and(|ch| ch.is_ascii_uppercase()) {
                let id = ctx.intern(&mixed);
                crate::core::module::body(c).const_set(id, o);
            }
        }
    }
    crate::methods!(ctx, c, [
        ("to_s", enc_to_s, [0], Safe),
        ("name", enc_to_s, [0], Safe),
        ("inspect", enc_inspect, [0], Safe),
        ("names", enc_names, [0], Safe),
        ("ascii_compatible?", enc_ascii_compatible, [0], Safe),
        ("dummy?", enc_dummy, [0], Safe),
        ("find", enc_s_find, [1], Safe, Singleton),
        ("list", enc_s_list, [0], Safe, Singleton),
        ("default_external", enc_s_default_external, [0], Safe, Singleton),
        ("default_internal", enc_s_default_internal, [0], Safe, Singleton),
        ("default_external=", enc_s_set_default_external, [1], Unsafe, Singleton),
        ("default_internal=", enc_s_set_default_internal, [1], Unsafe, Singleton),
        ("compatible?", enc_s_compatible, [2], Safe, Singleton),
    ]);
    let _: Option<&dyn DataObj> = None;
}
