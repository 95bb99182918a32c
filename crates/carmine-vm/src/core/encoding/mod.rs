//! Encodings: the table of known encodings, character boundaries, and the Encoding class.
//!
//! Invariants:
//! - An encoding is an index into `ENCODINGS` (an immutable table in CRuby's `Encoding.list`
//!   order); strings store it in `RBasic::aux`. Index 0 is ASCII-8BIT (BINARY), 1 UTF-8,
//!   2 US-ASCII.
//! - Character boundaries come from one function, `precise_char_len`, driven by each
//!   encoding's `Kind` (its byte structure); every other character-level operation
//!   (length, chars, valid_encoding?, scrub) goes through it.
//! - Encoding objects are created once per VM and kept in `Encoding::LIST` order as
//!   constants under `Encoding`.
//! - Transcoding lives in the submodules: `tables` (the byte <-> codepoint tables),
//!   `codec` (one decoder/encoder per encoding), `transcode` (the conversion engine with
//!   its options, decorators and errors) and `converter` (the `Encoding::Converter` class).

pub mod codec;
pub mod converter;
pub mod tables;
pub mod transcode;

use crate::core::{array, string};
use crate::interp::Args;
use crate::object::{data_ref, DataObj};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const BINARY: u8 = 0;
pub const UTF_8: u8 = 1;
pub const US_ASCII: u8 = 2;

/// The byte structure of an encoding's characters (what decides where a character ends).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// One byte per character, every byte valid.
    Single,
    /// One byte per character, bytes >= 0x80 invalid.
    Ascii,
    Utf8,
    /// UTF-8 that also allows encoded surrogates (six-byte supplementary characters).
    Cesu8,
    Utf16Be,
    Utf16Le,
    Utf32Be,
    Utf32Le,
    /// Shift_JIS family: 0xA1-0xDF single; lead 0x81-0x9F/0xE0-0xFC, trail 0x40-0x7E/0x80-0xFC.
    Sjis,
    /// EUC-JP family: 0xA1-0xFE pairs, 0x8E + one byte, 0x8F + two bytes.
    EucJp,
    /// EUC-KR, GB2312: 0xA1-0xFE pairs.
    EucKr,
    /// CP949 (Unified Hangul Code): lead 0x81-0xFE, trail 0x41-0x5A/0x61-0x7A/0x81-0xFE.
    Cp949,
    /// Big5 family: lead 0xA1-0xFE, trail 0x40-0x7E/0xA1-0xFE.
    Big5,
    /// GBK: lead 0x81-0xFE, trail 0x40-0x7E/0x80-0xFE.
    Gbk,
    /// GBK's pairs plus four-byte sequences (0x81-0xFE 0x30-0x39 0x81-0xFE 0x30-0x39).
    Gb18030,
    /// EUC-TW: 0xA1-0xFE pairs, 0x8E 0xA1-0xB0 + a pair.
    EucTw,
    /// Emacs-Mule (and the stateless ISO-2022-JP built on it): a leading byte 0x81-0x9D
    /// followed by one to three bytes 0xA0-0xFF.
    EmacsMule,
}

use Kind::*;

pub struct EncodingInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// Bytes per character for fixed-width encodings; 0 for variable-width ones.
    pub unit: u8,
    pub kind: Kind,
    pub ascii_compatible: bool,
    pub dummy: bool,
}

const fn enc(name: &'static str, aliases: &'static [&'static str], kind: Kind, ascii_compatible: bool, dummy: bool) -> EncodingInfo {
    let unit = match kind {
        Single | Ascii => 1,
        Utf16Be | Utf16Le => 2,
        Utf32Be | Utf32Le => 4,
        _ => 0,
    };
    EncodingInfo { name, aliases, unit, kind, ascii_compatible, dummy }
}

pub static ENCODINGS: &[EncodingInfo] = &[
    enc("ASCII-8BIT", &["BINARY"], Single, true, false),
    enc("UTF-8", &["CP65001"], Utf8, true, false),
    enc("US-ASCII", &["ASCII", "ANSI_X3.4-1968", "646"], Ascii, true, false),
    enc("UTF-16BE", &["UCS-2BE"], Utf16Be, false, false),
    enc("UTF-16LE", &[], Utf16Le, false, false),
    enc("UTF-32BE", &["UCS-4BE"], Utf32Be, false, false),
    enc("UTF-32LE", &["UCS-4LE"], Utf32Le, false, false),
    enc("UTF-16", &[], Single, false, true),
    enc("UTF-32", &[], Single, false, true),
    enc("UTF8-MAC", &["UTF-8-MAC", "UTF-8-HFS"], Utf8, true, false),
    enc("EUC-JP", &["eucJP"], EucJp, true, false),
    enc("Windows-31J", &["CP932", "csWindows31J", "SJIS", "PCK"], Sjis, true, false),
    enc("Big5", &[], Big5, true, false),
    enc("Big5-HKSCS", &["Big5-HKSCS:2008"], Big5, true, false),
    enc("Big5-UAO", &[], Big5, true, false),
    enc("CESU-8", &[], Cesu8, true, false),
    enc("CP949", &[], Cp949, true, false),
    enc("Emacs-Mule", &[], EmacsMule, true, false),
    enc("EUC-KR", &["eucKR"], EucKr, true, false),
    enc("EUC-TW", &["eucTW"], EucTw, true, false),
    enc("GB18030", &[], Gb18030, true, false),
    enc("GBK", &["CP936"], Gbk, true, false),
    enc("ISO-8859-1", &["ISO8859-1"], Single, true, false),
    enc("ISO-8859-2", &["ISO8859-2"], Single, true, false),
    enc("ISO-8859-3", &["ISO8859-3"], Single, true, false),
    enc("ISO-8859-4", &["ISO8859-4"], Single, true, false),
    enc("ISO-8859-5", &["ISO8859-5"], Single, true, false),
    enc("ISO-8859-6", &["ISO8859-6"], Single, true, false),
    enc("ISO-8859-7", &["ISO8859-7"], Single, true, false),
    enc("ISO-8859-8", &["ISO8859-8"], Single, true, false),
    enc("ISO-8859-9", &["ISO8859-9"], Single, true, false),
    enc("ISO-8859-10", &["ISO8859-10"], Single, true, false),
    enc("ISO-8859-11", &["ISO8859-11"], Single, true, false),
    enc("ISO-8859-13", &["ISO8859-13"], Single, true, false),
    enc("ISO-8859-14", &["ISO8859-14"], Single, true, false),
    enc("ISO-8859-15", &["ISO8859-15"], Single, true, false),
    enc("ISO-8859-16", &["ISO8859-16"], Single, true, false),
    enc("KOI8-R", &["CP878"], Single, true, false),
    enc("KOI8-U", &[], Single, true, false),
    enc("Shift_JIS", &[], Sjis, true, false),
    enc("Windows-1250", &["CP1250"], Single, true, false),
    enc("Windows-1251", &["CP1251"], Single, true, false),
    enc("Windows-1252", &["CP1252"], Single, true, false),
    enc("Windows-1253", &["CP1253"], Single, true, false),
    enc("Windows-1254", &["CP1254"], Single, true, false),
    enc("Windows-1257", &["CP1257"], Single, true, false),
    enc("IBM437", &["CP437"], Single, true, false),
    enc("IBM720", &["CP720"], Single, true, false),
    enc("IBM737", &["CP737"], Single, true, false),
    enc("IBM775", &["CP775"], Single, true, false),
    enc("CP850", &["IBM850"], Single, true, false),
    enc("IBM852", &[], Single, true, false),
    enc("CP852", &[], Single, true, false),
    enc("IBM855", &[], Single, true, false),
    enc("CP855", &[], Single, true, false),
    enc("IBM857", &["CP857"], Single, true, false),
    enc("IBM860", &["CP860"], Single, true, false),
    enc("IBM861", &["CP861"], Single, true, false),
    enc("IBM862", &["CP862"], Single, true, false),
    enc("IBM863", &["CP863"], Single, true, false),
    enc("IBM864", &["CP864"], Single, true, false),
    enc("IBM865", &["CP865"], Single, true, false),
    enc("IBM866", &["CP866"], Single, true, false),
    enc("IBM869", &["CP869"], Single, true, false),
    enc("Windows-1258", &["CP1258"], Single, true, false),
    enc("GB1988", &[], Single, true, false),
    enc("macCentEuro", &[], Single, true, false),
    enc("macCroatian", &[], Single, true, false),
    enc("macCyrillic", &[], Single, true, false),
    enc("macGreek", &[], Single, true, false),
    enc("macIceland", &[], Single, true, false),
    enc("macRoman", &[], Single, true, false),
    enc("macRomania", &[], Single, true, false),
    enc("macThai", &[], Single, true, false),
    enc("macTurkish", &[], Single, true, false),
    enc("macUkraine", &[], Single, true, false),
    enc("CP950", &[], Big5, true, false),
    enc("CP951", &[], Big5, true, false),
    enc("IBM037", &["ebcdic-cp-us"], Single, false, true),
    enc("stateless-ISO-2022-JP", &[], EmacsMule, true, false),
    enc("eucJP-ms", &["euc-jp-ms"], EucJp, true, false),
    enc("CP51932", &[], EucJp, true, false),
    enc("EUC-JIS-2004", &["EUC-JISX0213"], EucJp, true, false),
    enc("GB2312", &["EUC-CN", "eucCN"], EucKr, true, false),
    enc("GB12345", &[], EucKr, true, false),
    enc("ISO-2022-JP", &["ISO2022-JP"], Single, false, true),
    enc("ISO-2022-JP-2", &["ISO2022-JP2"], Single, false, true),
    enc("CP50220", &[], Single, false, true),
    enc("CP50221", &[], Single, false, true),
    enc("Windows-1256", &["CP1256"], Single, true, false),
    enc("Windows-1255", &["CP1255"], Single, true, false),
    enc("TIS-620", &[], Single, true, false),
    enc("Windows-874", &["CP874"], Single, true, false),
    enc("MacJapanese", &["MacJapan"], Sjis, true, false),
    enc("UTF-7", &["CP65000"], Single, false, true),
    enc("UTF8-DoCoMo", &[], Utf8, true, false),
    enc("SJIS-DoCoMo", &[], Sjis, true, false),
    enc("UTF8-KDDI", &[], Utf8, true, false),
    enc("SJIS-KDDI", &[], Sjis, true, false),
    enc("ISO-2022-JP-KDDI", &[], Single, false, true),
    enc("stateless-ISO-2022-JP-KDDI", &[], EmacsMule, true, false),
    enc("UTF8-SoftBank", &[], Utf8, true, false),
    enc("SJIS-SoftBank", &[], Sjis, true, false),
];

pub fn kind(enc: u8) -> Kind {
    ENCODINGS.get(enc as usize).map_or(Single, |e| e.kind)
}

/// Finds an encoding by (case-insensitive) name or alias.
pub fn find(name: &str) -> Option<u8> {
    let n = name.to_ascii_uppercase();
    ENCODINGS.iter().position(|e| e.name.to_ascii_uppercase() == n || e.aliases.iter().any(|a| a.to_ascii_uppercase() == n)).map(|i| i as u8)
}

pub fn name(enc: u8) -> &'static str {
    ENCODINGS.get(enc as usize).map_or("ASCII-8BIT", |e| e.name)
}

/// UTF-8 and its variants (UTF8-MAC, the mobile carriers' UTF-8): same byte structure.
pub fn is_utf8(enc: u8) -> bool {
    enc == UTF_8 || kind(enc) == Utf8
}

/// Index of UTF8-MAC (a UTF-8 variant).
pub const UTF8_MAC: u8 = 9;

/// UTF-8, UTF-16/32 and their variants: encodings whose codepoints are Unicode.
pub fn is_unicode(enc: u8) -> bool {
    matches!(kind(enc), Utf8 | Cesu8 | Utf16Be | Utf16Le | Utf32Be | Utf32Le)
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
    matches!(kind(enc), Utf16Le | Utf32Le)
}

/// Length of the character starting at `i` (at least 1; invalid bytes count as one).
#[inline]
pub fn char_len(enc: u8, b: &[u8], i: usize) -> usize {
    if is_utf8(enc) {
        return utf8_char_len(b, i);
    }
    match precise_char_len(enc, b, i) {
        Ok(n) => n,
        // An invalid code unit of UTF-16/32 still counts as one unit.
        Err(_) => (ENCODINGS.get(enc as usize).map_or(1, |e| e.unit.max(1)) as usize).min(b.len() - i),
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
    match kind(enc) {
        Ascii => return if b[i] < 0x80 { Ok(1) } else { Err(1) },
        Single => return Ok(1),
        Utf16Be | Utf16Le | Utf32Be | Utf32Le => {}
        k => return multibyte_len(k, b, i),
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
    // CRuby compares the unit as a signed number: units with the top bit set pass.
    if (cp as i32) > 0x10FFFF || (0xD800..=0xDFFF).contains(&cp) {
        Err(4)
    } else {
        Ok(4)
    }
}

/// `precise_char_len` for the multibyte East Asian encodings and the UTF-8 relatives.
fn multibyte_len(k: Kind, b: &[u8], i: usize) -> std::result::Result<usize, usize> {
    let c = b[i];
    // Each trailing byte must be in one of the ranges; `n` is the full length.
    let seq = |n: usize, trails: &[&[(u8, u8)]]| -> std::result::Result<usize, usize> {
        for k in 1..n {
            let Some(&t) = b.get(i + k) else { return Err(k) };
            if !trails[k - 1].iter().any(|&(lo, hi)| (lo..=hi).contains(&t)) {
                return Err(k);
            }
        }
        Ok(n)
    };
    const HI: &[(u8, u8)] = &[(0xA1, 0xFE)];
    match k {
        Utf8 => utf8_precise_len(b, i),
        Cesu8 => {
            if c == 0xED && b.get(i + 1).is_some_and(|&x| x >= 0xA0) {
                // A surrogate pair: high (ED A0-AF xx) then low (ED B0-BF xx).
                const CONT: &[(u8, u8)] = &[(0x80, 0xBF)];
                seq(6, &[&[(0xA0, 0xAF)], CONT, &[(0xED, 0xED)], &[(0xB0, 0xBF)], CONT])
            } else if c >= 0xF0 {
                Err(1)
            } else {
                utf8_precise_len(b, i)
            }
        }
        Sjis => match c {
            0x00..=0x7F | 0xA1..=0xDF => Ok(1),
            0x81..=0x9F | 0xE0..=0xFC => seq(2, &[&[(0x40, 0x7E), (0x80, 0xFC)]]),
            _ => Err(1),
        },
        EucJp => match c {
            0x00..=0x7F => Ok(1),
            0x8E | 0xA1..=0xFE => seq(2, &[HI]),
            0x8F => seq(3, &[HI, HI]),
            _ => Err(1),
        },
        EucKr => match c {
            0x00..=0x7F => Ok(1),
            0xA1..=0xFE => seq(2, &[HI]),
            _ => Err(1),
        },
        Cp949 => match c {
            0x00..=0x80 => Ok(1),
            0x81..=0xFE => seq(2, &[&[(0x41, 0x5A), (0x61, 0x7A), (0x81, 0xFE)]]),
            _ => Err(1),
        },
        Big5 => match c {
            0x00..=0x7F => Ok(1),
            0xA1..=0xFE => seq(2, &[&[(0x40, 0x7E), (0xA1, 0xFE)]]),
            _ => Err(1),
        },
        Gbk => match c {
            0x00..=0x80 => Ok(1),
            0x81..=0xFE => seq(2, &[&[(0x40, 0x7E), (0x80, 0xFE)]]),
            _ => Err(1),
        },
        Gb18030 => match c {
            0x00..=0x7F => Ok(1),
            0x81..=0xFE => match b.get(i + 1) {
                Some(0x30..=0x39) => seq(4, &[&[(0x30, 0x39)], &[(0x81, 0xFE)], &[(0x30, 0x39)]]),
                _ => seq(2, &[&[(0x40, 0x7E), (0x80, 0xFE)]]),
            },
            _ => Err(1),
        },
        EucTw => match c {
            0x00..=0x7F => Ok(1),
            0xA1..=0xFE => seq(2, &[HI]),
            0x8E => seq(4, &[&[(0xA1, 0xB0)], HI, HI]),
            _ => Err(1),
        },
        EmacsMule => match c {
            0x00..=0x7F => Ok(1),
            0x81..=0x8F => seq(2, &[&[(0xA0, 0xFF)]]),
            0x90..=0x99 => seq(3, &[&[(0xA0, 0xFF)], &[(0xA0, 0xFF)]]),
            0x9A..=0x9D => seq(4, &[&[(0xA0, 0xFF)], &[(0xA0, 0xFF)], &[(0xA0, 0xFF)]]),
            _ => Err(1),
        },
        _ => Ok(1),
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
    match kind(enc) {
        Ascii => return b.is_ascii(),
        Single => return true,
        _ => {}
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
        1 => {
            if kind(enc) == Ascii && cp >= 0x80 {
                return None;
            }
            (cp < 0x100).then(|| vec![cp as u8])
        }
        _ => {
            // Multibyte East Asian encodings: the codepoint is the character's bytes read
            // as a big-endian number (CRuby's convention for non-Unicode encodings).
            let bytes: Vec<u8> = cp.to_be_bytes().into_iter().skip_while(|&x| x == 0).collect();
            let bytes = if bytes.is_empty() { vec![0] } else { bytes };
            (precise_char_len(enc, &bytes, 0) == Ok(bytes.len())).then_some(bytes)
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
    let seven_bit = |enc, bytes| code_range(enc, bytes) == CodeRange::SevenBit;
    compatible_by(a_enc, a.is_empty(), || seven_bit(a_enc, a), b_enc, b.is_empty(), || seven_bit(b_enc, b))
}

/// The rules of `compatible`, given whether each side is empty and a way to learn whether
/// it is 7-bit (asked only when needed, so callers can answer from a cache).
pub fn compatible_by(a_enc: u8, a_empty: bool, a_7bit: impl FnOnce() -> bool, b_enc: u8, b_empty: bool, b_7bit: impl FnOnce() -> bool) -> Option<u8> {
    if a_enc == b_enc || b_empty {
        return Some(a_enc);
    }
    let both_ascii_compatible = is_ascii_compatible(a_enc) && is_ascii_compatible(b_enc);
    if a_empty {
        return Some(if both_ascii_compatible && b_7bit() { a_enc } else { b_enc });
    }
    if !both_ascii_compatible {
        return None;
    }
    if b_7bit() {
        Some(a_enc)
    } else if a_7bit() {
        Some(b_enc)
    } else {
        None
    }
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
        None if name.eq_ignore_ascii_case("locale") => Ok(UTF_8),
        // The filesystem encoding follows the default external one (CRuby on Unix).
        None if ["external", "filesystem"].iter().any(|n| name.eq_ignore_ascii_case(n)) => Ok(default_external(ctx)),
        None if name.eq_ignore_ascii_case("internal") => Ok(default_internal(ctx).unwrap_or(BINARY)),
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
    let out = array::new(ctx);
    for n in std::iter::once(&info.name).chain(info.aliases.iter()) {
        let s = string::new_us_ascii(ctx, n);
        array::push(ctx, out, s);
    }
    for (n, e) in special_names(ctx) {
        if e == i {
            let s = string::new_us_ascii(ctx, n);
            array::push(ctx, out, s);
        }
    }
    Ok(out)
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
    let s = string::to_str_arg(ctx, args.pos[0])?;
    if string::to_rust_string_lossy(s).eq_ignore_ascii_case("internal") && default_internal(ctx).is_none() {
        return Ok(Value::NIL);
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

/// `Encoding.compatible?(a, b)`: CRuby's rule for strings, regexps, symbols and
/// encodings. Only a String's contents are looked at; the others are represented by
/// their encoding alone.
fn enc_s_compatible(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let enc_of = |ctx: &mut Ctx, v: Value| -> Result<Option<(u8, Option<Vec<u8>>)>> {
        if string::is_string(v) {
            return Ok(Some((string::encoding(v), Some(string::bytes(v).to_vec()))));
        }
        if let Some(e) = data_ref::<EncodingObj>(v) {
            return Ok(Some((e.index, None)));
        }
        if v.is_symbol() {
            let s = crate::core::symbol::to_string(ctx, v);
            return Ok(Some((string::encoding(s), None)));
        }
        if crate::core::regexp::is_regexp(v) {
            let e = ctx.call_str(v, "encoding", &[])?;
            return Ok(data_ref::<EncodingObj>(e).map(|e| (e.index, None)));
        }
        Ok(None)
    };
    let (Some((e1, s1)), Some((e2, s2))) = (enc_of(ctx, args.pos[0])?, enc_of(ctx, args.pos[1])?) else { return Ok(Value::NIL) };
    let r = if e1 == e2 { Some(e1) } else { compatible_latter(e1, s1.as_deref(), e2, s2.as_deref()) };
    Ok(match r {
        Some(e) => encoding_object(ctx, e),
        None => Value::NIL,
    })
}

/// The encoding two different-encoding operands combine to; `None` for incompatible.
/// `s1`/`s2` are the contents of operands that are strings.
fn compatible_latter(e1: u8, s1: Option<&[u8]>, e2: u8, s2: Option<&[u8]>) -> Option<u8> {
    if s2.is_some_and(|b| b.is_empty()) {
        return Some(e1);
    }
    if let (Some(a), Some(b)) = (s1, s2) {
        if a.is_empty() {
            return Some(if is_ascii_compatible(e1) && is_ascii_compatible(e2) && b.is_ascii() { e1 } else { e2 });
        }
    }
    if !is_ascii_compatible(e1) || !is_ascii_compatible(e2) {
        return None;
    }
    if s2.is_none() && e2 == US_ASCII {
        return Some(e1);
    }
    if s1.is_none() && e1 == US_ASCII {
        return Some(e2);
    }
    // CRuby moves a String operand first but keeps returning the second operand's
    // encoding: `compatible?(regexp, ascii_string)` is the string's encoding.
    let (c1, s1, c2, s2) = if s1.is_none() { (e2, s2, e1, s1) } else { (e1, s1, e2, s2) };
    let a = s1?;
    if s2.is_none() {
        return (code_range(c1, a) == CodeRange::SevenBit).then_some(e2);
    }
    let (e1, e2) = (c1, c2);
    let cr1 = code_range(e1, a);
    if let Some(b) = s2 {
        let cr2 = code_range(e2, b);
        if cr1 != cr2 {
            if cr1 == CodeRange::SevenBit {
                return Some(e2);
            }
            if cr2 == CodeRange::SevenBit {
                return Some(e1);
            }
        }
        if cr2 == CodeRange::SevenBit {
            return Some(e1);
        }
    }
    (cr1 == CodeRange::SevenBit).then_some(e2)
}

/// The special names that `Encoding.find` accepts besides the table's names and aliases,
/// with what they currently stand for.
fn special_names(ctx: &Ctx) -> Vec<(&'static str, u8)> {
    let mut v = vec![("external", default_external(ctx)), ("locale", UTF_8), ("filesystem", default_external(ctx))];
    if let Some(i) = default_internal(ctx) {
        v.push(("internal", i));
    }
    v
}

/// `Encoding.locale_charmap`: the codeset of the C library's locale, from the
/// environment the process started with (LC_ALL, LC_CTYPE, LANG).
fn enc_s_locale_charmap(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].iter().filter_map(|k| std::env::var(k).ok()).find(|v| !v.is_empty()).unwrap_or_default();
    let charmap = match locale.split_once('.') {
        Some((_, cs)) => {
            let cs = cs.split('@').next().unwrap_or(cs);
            if cs.eq_ignore_ascii_case("utf8") || cs.eq_ignore_ascii_case("utf-8") {
                "UTF-8".to_string()
            } else {
                cs.to_string()
            }
        }
        None => "ANSI_X3.4-1968".to_string(),
    };
    Ok(string::new_us_ascii(ctx, &charmap))
}

fn enc_s_name_list(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    for info in ENCODINGS {
        for n in std::iter::once(&info.name).chain(info.aliases.iter()) {
            let s = string::new_us_ascii(ctx, n);
            array::push(ctx, out, s);
        }
    }
    for (n, _) in special_names(ctx) {
        let s = string::new_us_ascii(ctx, n);
        array::push(ctx, out, s);
    }
    Ok(out)
}

fn enc_s_aliases(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let h = crate::core::hash::new(ctx);
    for info in ENCODINGS {
        for a in info.aliases {
            let k = string::new_us_ascii(ctx, a);
            let v = string::new_us_ascii(ctx, info.name);
            crate::core::hash::aset(ctx, h, k, v)?;
        }
    }
    for (n, e) in special_names(ctx) {
        let k = string::new_us_ascii(ctx, n);
        let v = string::new_us_ascii(ctx, name(e));
        crate::core::hash::aset(ctx, h, k, v)?;
    }
    Ok(h)
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
            // CRuby's constant names: non-alphanumerics become '_', then the name in
            // upper case, and (for names with some capital letter) the name with its
            // first letter capitalized.
            let base: String = n.chars().map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '_' }).collect();
            if !base.starts_with(|ch: char| ch.is_ascii_alphabetic()) {
                continue;
            }
            let mut mixed = base.clone();
            mixed[..1].make_ascii_uppercase();
            let has_upper = n.chars().any(|ch| ch.is_ascii_uppercase());
            for cname in [has_upper.then_some(mixed), Some(base.to_ascii_uppercase())].into_iter().flatten() {
                let id = ctx.intern(&cname);
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
        ("name_list", enc_s_name_list, [0], Safe, Singleton),
        ("locale_charmap", enc_s_locale_charmap, [0], Safe, Singleton),
        ("aliases", enc_s_aliases, [0], Safe, Singleton),
    ]);
    converter::init(ctx);
    let _: Option<&dyn DataObj> = None;
}
