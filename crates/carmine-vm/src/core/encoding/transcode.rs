//! The conversion engine behind `String#encode` and `Encoding::Converter`: a source decoder,
//! decorators (newlines, XML escapes) on the codepoint stream, a destination encoder, and
//! CRuby's error reporting.
//!
//! Invariants:
//! - A `Transcoder` is fed input in pieces (`run`); bytes it has taken but not yet
//!   converted (a truncated character, bytes to read again after an error) stay in
//!   `pending` and are converted before the next piece.
//! - Output accumulates in `out` until the caller takes it; the caller decides how much
//!   it can take (`primitive_convert`'s destination size).
//! - Errors are reported per conversion step as CRuby names them: a conversion between
//!   two non-UTF-8 encodings goes "A to UTF-8 to B" (except CRuby's direct pairs), and
//!   the step where an error happens is what `primitive_errinfo` and the exceptions show.

use super::codec::{Codec, DecState, Decoded, EncState, Kana};
use super::{name, UTF_8};

pub const INVALID_MASK: u32 = 0x0f;
pub const INVALID_REPLACE: u32 = 0x02;
pub const UNDEF_MASK: u32 = 0xf0;
pub const UNDEF_REPLACE: u32 = 0x20;
pub const UNDEF_HEX_CHARREF: u32 = 0x30;
pub const PARTIAL_INPUT: u32 = 0x10000;
pub const AFTER_OUTPUT: u32 = 0x20000;
pub const UNIVERSAL_NEWLINE_DECORATOR: u32 = 0x100;
pub const CRLF_NEWLINE_DECORATOR: u32 = 0x1000;
pub const CR_NEWLINE_DECORATOR: u32 = 0x2000;
pub const LF_NEWLINE_DECORATOR: u32 = 0x4000_0000;
pub const XML_TEXT_DECORATOR: u32 = 0x4000;
pub const XML_ATTR_CONTENT_DECORATOR: u32 = 0x8000;
pub const XML_ATTR_QUOTE_DECORATOR: u32 = 0x100000;
pub const DECORATORS: u32 = UNIVERSAL_NEWLINE_DECORATOR | CRLF_NEWLINE_DECORATOR | CR_NEWLINE_DECORATOR | LF_NEWLINE_DECORATOR | XML_TEXT_DECORATOR | XML_ATTR_CONTENT_DECORATOR | XML_ATTR_QUOTE_DECORATOR;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Res {
    SourceBufferEmpty,
    DestinationBufferFull,
    InvalidByteSequence,
    UndefinedConversion,
    IncompleteInput,
    Finished,
    AfterOutput,
}

impl Res {
    pub fn symbol_name(self) -> &'static str {
        match self {
            Res::SourceBufferEmpty => "source_buffer_empty",
            Res::DestinationBufferFull => "destination_buffer_full",
            Res::InvalidByteSequence => "invalid_byte_sequence",
            Res::UndefinedConversion => "undefined_conversion",
            Res::IncompleteInput => "incomplete_input",
            Res::Finished => "finished",
            Res::AfterOutput => "after_output",
        }
    }
}

/// What went wrong in the last run (CRuby's `primitive_errinfo`).
#[derive(Clone)]
pub struct ErrInfo {
    pub res: Res,
    /// The conversion step where the error happened (encoding names).
    pub step: Option<(&'static str, &'static str)>,
    pub error_bytes: Vec<u8>,
    pub readagain: Vec<u8>,
    /// The undefined character's codepoint when the step's source is UTF-8.
    pub codepoint: Option<u32>,
}

impl ErrInfo {
    fn none(res: Res) -> ErrInfo {
        ErrInfo { res, step: None, error_bytes: Vec::new(), readagain: Vec::new(), codepoint: None }
    }
}

/// CRuby's conversion path between two encodings: the encodings visited in order.
pub fn path(src: u8, dst: u8) -> Vec<&'static str> {
    encodings_path(src, dst).into_iter().map(transcoder_name).collect()
}

/// The name CRuby's converter for an encoding goes by, where it differs from the
/// encoding's name (the Windows and Mac code pages are registered in upper case); errors
/// name conversion steps this way.
fn transcoder_name(n: &'static str) -> &'static str {
    const UPPER: &[(&str, &str)] = &[
        ("Windows-874", "WINDOWS-874"), ("Windows-1250", "WINDOWS-1250"), ("Windows-1251", "WINDOWS-1251"),
        ("Windows-1252", "WINDOWS-1252"), ("Windows-1253", "WINDOWS-1253"), ("Windows-1254", "WINDOWS-1254"),
        ("Windows-1255", "WINDOWS-1255"), ("Windows-1256", "WINDOWS-1256"), ("Windows-1257", "WINDOWS-1257"),
        ("macCroatian", "MACCROATIAN"), ("macCyrillic", "MACCYRILLIC"), ("macGreek", "MACGREEK"),
        ("macIceland", "MACICELAND"), ("macRoman", "MACROMAN"), ("macRomania", "MACROMANIA"),
        ("macTurkish", "MACTURKISH"), ("macUkraine", "MACUKRAINE"),
    ];
    UPPER.iter().find(|(k, _)| *k == n).map_or(n, |(_, v)| v)
}

/// The encodings a conversion from `src` to `dst` goes through, by encoding name.
fn encodings_path(src: u8, dst: u8) -> Vec<&'static str> {
    let (s, d) = (name(src), name(dst));
    let direct = |a: &str, b: &str| matches!((a, b), ("EUC-JP", "Shift_JIS") | ("Shift_JIS", "EUC-JP"));
    let mut p = vec![s];
    // Microsoft's ISO-2022-JP variants go through CP51932.
    let ms = |e: &str| e == "CP50220" || e == "CP50221";
    if ms(s) {
        p.push("CP51932");
        if d != "CP51932" {
            if d != "UTF-8" {
                p.push("UTF-8");
            }
            p.push(d);
        }
        return p;
    }
    if ms(d) {
        if s != "CP51932" {
            if s != "UTF-8" {
                p.push("UTF-8");
            }
            p.push("CP51932");
        }
        p.push(d);
        return p;
    }
    if s == "stateless-ISO-2022-JP" && d != "ISO-2022-JP" {
        p.push("EUC-JP");
        if d != "EUC-JP" {
            p.push("UTF-8");
            if d != "UTF-8" {
                p.push(d);
            }
        }
        return p;
    }
    if d == "stateless-ISO-2022-JP" && s != "ISO-2022-JP" {
        if s != "EUC-JP" {
            if s != "UTF-8" && !direct(s, "EUC-JP") {
                p.push("UTF-8");
            }
            p.push("EUC-JP");
        }
        p.push(d);
        return p;
    }
    let jp = |e: &str| e == "ISO-2022-JP";
    if jp(s) {
        p.extend(["stateless-ISO-2022-JP", "EUC-JP"]);
        if d != "EUC-JP" {
            p.push("UTF-8");
            if d != "UTF-8" {
                p.push(d);
            }
        }
        return p;
    }
    if jp(d) {
        if s != "EUC-JP" {
            if direct(s, "EUC-JP") {
                p.push("EUC-JP");
            } else {
                if s != "UTF-8" {
                    p.push("UTF-8");
                }
                p.push("EUC-JP");
            }
        }
        p.extend(["stateless-ISO-2022-JP", "ISO-2022-JP"]);
        return p;
    }
    if s != "UTF-8" && d != "UTF-8" && !direct(s, d) {
        p.push("UTF-8");
    }
    p.push(d);
    p
}

pub struct Transcoder {
    pub src: u8,
    pub dst: u8,
    dec: Codec,
    enc: Codec,
    pub flags: u32,
    /// The replacement string's bytes and encoding; `None`: CRuby's default for `dst`.
    pub replacement: Option<(Vec<u8>, u8)>,
    dstate: DecState,
    estate: EncState,
    pub pending: Vec<u8>,
    pub out: Vec<u8>,
    cr_seen: bool,
    quote_open: bool,
    pub finished: bool,
    pub last: ErrInfo,
    /// How many bytes at the end of `pending` are read-again bytes `putback` can return.
    readagain_left: usize,
    /// Shift_JIS <-> EUC-JP convert directly by JIS row and cell, not through Unicode
    /// (as CRuby's direct converter does): `Some(true)` from Shift_JIS.
    direct_jp: Option<bool>,
    /// No encodings, decorators only (`Converter.new("", "", ...)`).
    pub passthrough: bool,
}

impl Transcoder {
    /// A converter that only applies the decorators in `flags` to bytes.
    pub fn passthrough(flags: u32) -> Transcoder {
        let mut t = Transcoder::new(super::BINARY, super::BINARY, flags).expect("binary codec");
        t.dec = Codec::Bytes;
        t.enc = Codec::Bytes;
        t.passthrough = true;
        t
    }

    /// A transcoder from `src` to `dst`, or `None` when no converter exists.
    pub fn new(src: u8, dst: u8, flags: u32) -> Option<Transcoder> {
        let dec = Codec::of(src)?;
        let enc = Codec::of(dst)?;
        if !enc.can_encode() {
            return None;
        }
        Some(Transcoder { src, dst, dec, enc, flags, replacement: None, dstate: DecState::default(), estate: EncState::default(), pending: Vec::new(), out: Vec::new(), cr_seen: false, quote_open: false, finished: false, last: ErrInfo::none(Res::SourceBufferEmpty), readagain_left: 0, direct_jp: match (name(src), name(dst)) {
            ("Shift_JIS", "EUC-JP") => Some(true),
            ("EUC-JP", "Shift_JIS") => Some(false),
            _ => None,
        }, passthrough: false })
    }

    /// Whether the destination is a Unicode encoding (its default replacement is U+FFFD).
    pub fn unicode_dst(&self) -> bool {
        matches!(self.enc, Codec::Utf8 | Codec::Cesu8 | Codec::Utf16 { .. } | Codec::Utf32 { .. })
    }

    fn unicode_src(&self) -> bool {
        super::is_unicode(self.src)
    }

    /// The step names for an error while decoding (`decoding`) or encoding.
    fn step(&self, decoding: bool) -> (&'static str, &'static str) {
        let p = path(self.src, self.dst);
        if decoding {
            return (p[0], p[1]);
        }
        // Characters become undefined on the way out of Unicode.
        match p.iter().position(|&e| e == "UTF-8").filter(|&k| k + 1 < p.len()) {
            Some(k) => (p[k], p[k + 1]),
            None => (p[0], p[1]),
        }
    }

    /// The default or configured replacement, as bytes of `dst`.
    pub fn replacement_bytes(&self) -> Vec<u8> {
        match &self.replacement {
            Some((b, e)) if *e == self.dst => b.clone(),
            Some((b, e)) => convert_fragment(b, *e, self.dst).unwrap_or_default(),
            None => {
                let mut out = Vec::new();
                let mut st = EncState { bom_written: true, ..EncState::default() };
                if !(self.unicode_dst() && self.enc.encode(&mut st, 0xFFFD, &mut out)) {
                    out.clear();
                    self.enc.encode(&mut st, '?' as u32, &mut out);
                }
                out
            }
        }
    }

    /// Encodes `cp` after the newline and XML decorators; Err(()) when undefined.
    fn put(&mut self, cp: u32) -> Result<(), ()> {
        let f = self.flags;
        if f & XML_ATTR_QUOTE_DECORATOR != 0 && !self.quote_open {
            self.quote_open = true;
            self.enc.encode(&mut self.estate, '"' as u32, &mut self.out);
        }
        if f & UNIVERSAL_NEWLINE_DECORATOR != 0 {
            if cp == '\n' as u32 && self.cr_seen {
                self.cr_seen = false;
                return Ok(());
            }
            self.cr_seen = cp == '\r' as u32;
            if self.cr_seen {
                return self.put_raw('\n' as u32);
            }
        }
        if f & (XML_TEXT_DECORATOR | XML_ATTR_CONTENT_DECORATOR) != 0 {
            let esc = match cp {
                0x26 => Some("&amp;"),
                0x3C => Some("&lt;"),
                0x3E => Some("&gt;"),
                0x22 if f & XML_ATTR_CONTENT_DECORATOR != 0 => Some("&quot;"),
                0x27 if f & XML_ATTR_CONTENT_DECORATOR != 0 => Some("&apos;"),
                _ => None,
            };
            if let Some(e) = esc {
                for ch in e.chars() {
                    self.put_raw(ch as u32)?;
                }
                return Ok(());
            }
        }
        if cp == '\n' as u32 {
            if f & CRLF_NEWLINE_DECORATOR != 0 {
                self.put_raw('\r' as u32)?;
            } else if f & CR_NEWLINE_DECORATOR != 0 {
                return self.put_raw('\r' as u32);
            }
        }
        self.put_raw(cp)
    }

    fn put_raw(&mut self, cp: u32) -> Result<(), ()> {
        if self.enc.encode(&mut self.estate, cp, &mut self.out) {
            Ok(())
        } else {
            Err(())
        }
    }

    fn put_replacement(&mut self) {
        // A stateful destination first writes what precedes any character (its BOM).
        let mut scratch = Vec::new();
        if self.enc.encode(&mut self.estate, 'a' as u32, &mut scratch) {
            scratch.pop();
            if matches!(self.enc, Codec::Utf16 { .. }) {
                scratch.pop();
            } else if matches!(self.enc, Codec::Utf32 { .. }) {
                scratch.truncate(scratch.len().saturating_sub(3));
            }
            self.out.extend_from_slice(&scratch);
        }
        let r = self.replacement_bytes();
        self.out.extend_from_slice(&r);
    }

    fn put_ascii(&mut self, s: &str) {
        for ch in s.chars() {
            self.enc.encode(&mut self.estate, ch as u32, &mut self.out);
        }
    }

    /// Converts `input` (after anything pending). Returns the result and how many bytes of
    /// `input` were taken (taken bytes that are not yet converted move to `pending`).
    /// `out_limit`: stop with `DestinationBufferFull` once `out` holds that many bytes.
    pub fn run(&mut self, input: &[u8], out_limit: Option<usize>) -> (Res, usize) {
        let plen = self.pending.len();
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(input);
        let partial = self.flags & PARTIAL_INPUT != 0;
        let after_output = self.flags & AFTER_OUTPUT != 0;
        let mut pos = 0;
        let finish = |t: &mut Transcoder, buf: &[u8], pos: usize, keep: usize, res: Res| -> (Res, usize) {
            // Bytes [pos, pos + keep) are taken but not converted: they wait in `pending`,
            // and so do pending bytes from an earlier call that were not reached.
            let end = (pos + keep).max(plen);
            t.pending = buf[pos..end].to_vec();
            t.readagain_left = if res == Res::InvalidByteSequence { keep } else { 0 };
            let taken = end - plen;
            if !matches!(res, Res::InvalidByteSequence | Res::UndefinedConversion | Res::IncompleteInput) {
                t.last = ErrInfo::none(res);
            }
            (res, taken)
        };
        loop {
            if let Some(limit) = out_limit {
                if self.out.len() > limit {
                    return finish(self, &buf, pos, 0, Res::DestinationBufferFull);
                }
            }
            if pos >= buf.len() {
                if partial {
                    return finish(self, &buf, pos, 0, Res::SourceBufferEmpty);
                }
                if !self.finished {
                    self.finished = true;
                    if self.quote_open || self.flags & XML_ATTR_QUOTE_DECORATOR != 0 {
                        if !self.quote_open {
                            self.quote_open = true;
                            self.put_ascii("\"");
                        }
                        self.put_ascii("\"");
                    }
                    self.enc.finish(&mut self.estate, &mut self.out);
                    if let Some(limit) = out_limit {
                        if self.out.len() > limit {
                            return finish(self, &buf, pos, 0, Res::DestinationBufferFull);
                        }
                    }
                }
                return finish(self, &buf, pos, 0, Res::Finished);
            }
            let before = self.out.len();
            let mut decoded = None;
            if let Some(from_sjis) = self.direct_jp {
                if buf[pos] >= 0x80 {
                    if let Ok(n) = super::precise_char_len(self.src, &buf, pos) {
                        match direct_jp(from_sjis, &buf[pos..pos + n]) {
                            Some(bytes) => {
                                self.out.extend_from_slice(&bytes);
                                decoded = Some(Decoded::Skip(n));
                            }
                            None => decoded = Some(Decoded::Undefined(n)),
                        }
                    }
                }
            }
            let decoded = match decoded {
                Some(d) => d,
                None => self.dec.decode(&mut self.dstate, &buf, pos, !partial),
            };
            match decoded {
                Decoded::Char(cp, n) => {
                    if self.put(cp).is_err() {
                        let ch = &buf[pos..pos + n];
                        if self.flags & UNDEF_MASK == UNDEF_HEX_CHARREF {
                            self.put_ascii(&format!("&#x{cp:X};"));
                        } else if self.flags & UNDEF_MASK == UNDEF_REPLACE {
                            self.put_replacement();
                        } else if let Some(mid) = self.enc.intermediate(cp) {
                            let p = path(self.src, self.dst);
                            let k = p.len().saturating_sub(if matches!(self.enc, Codec::Iso2022Jp(_, Kana::None)) { 3 } else { 2 });
                            self.last = ErrInfo { res: Res::UndefinedConversion, step: Some((p[k], p[k + 1])), error_bytes: mid, readagain: Vec::new(), codepoint: None };
                            return finish(self, &buf, pos + n, 0, Res::UndefinedConversion);
                        } else {
                            let (eb, cpo) = if self.unicode_src() && self.src == UTF_8 || path(self.src, self.dst).len() == 2 {
                                (ch.to_vec(), super::is_unicode(self.src).then_some(cp))
                            } else {
                                (char::from_u32(cp).map(|c| c.to_string().into_bytes()).unwrap_or_default(), Some(cp))
                            };
                            self.last = ErrInfo { res: Res::UndefinedConversion, step: Some(self.step(false)), error_bytes: eb, readagain: Vec::new(), codepoint: cpo };
                            return finish(self, &buf, pos + n, 0, Res::UndefinedConversion);
                        }
                    }
                    pos += n;
                }
                Decoded::Skip(n) => pos += n,
                Decoded::Undefined(n) => {
                    if self.flags & UNDEF_MASK == UNDEF_REPLACE {
                        self.put_replacement();
                        pos += n;
                    } else {
                        self.last = ErrInfo { res: Res::UndefinedConversion, step: Some(self.step(true)), error_bytes: buf[pos..pos + n].to_vec(), readagain: Vec::new(), codepoint: None };
                        return finish(self, &buf, pos + n, 0, Res::UndefinedConversion);
                    }
                }
                Decoded::Invalid { len, readagain } => {
                    if self.flags & INVALID_MASK == INVALID_REPLACE {
                        self.put_replacement();
                        pos += len;
                    } else {
                        let incomplete = readagain == 0 && pos + len == buf.len() && !partial && is_truncation(&self.dec, &buf[pos..]);
                        let res = if incomplete { Res::IncompleteInput } else { Res::InvalidByteSequence };
                        self.last = ErrInfo { res, step: Some(self.step(true)), error_bytes: buf[pos..pos + len].to_vec(), readagain: buf[pos + len..pos + len + readagain].to_vec(), codepoint: None };
                        return finish(self, &buf, pos + len, readagain, res);
                    }
                }
                Decoded::Incomplete(n) => {
                    return finish(self, &buf, pos, n, Res::SourceBufferEmpty);
                }
            }
            if after_output && self.out.len() > before && pos < buf.len() {
                return finish(self, &buf, pos, 0, Res::AfterOutput);
            }
        }
    }

    /// Takes back up to `n` of the bytes waiting to be read again (all when `None`).
    pub fn putback(&mut self, n: Option<usize>) -> Vec<u8> {
        let avail = self.readagain_left.min(self.pending.len());
        let n = n.unwrap_or(avail).min(avail);
        let cut = self.pending.len() - n;
        self.readagain_left -= n;
        self.pending.split_off(cut)
    }
}

/// One non-ASCII character converted between Shift_JIS and EUC-JP through its JIS
/// X 0208 row and cell; `None` when the other encoding has no such character.
fn direct_jp(from_sjis: bool, c: &[u8]) -> Option<Vec<u8>> {
    if from_sjis {
        match *c {
            [k] => Some(vec![0x8E, k]),
            [s1, s2] => {
                let base = match s1 {
                    0x81..=0x9F => (s1 - 0x81) * 2,
                    0xE0..=0xEF => (s1 - 0xE0) * 2 + 62,
                    _ => return None,
                };
                let (row, cell) = if s2 >= 0x9F { (base + 2, s2 - 0x9E) } else { (base + 1, s2 - 0x3F - u8::from(s2 >= 0x80)) };
                Some(vec![row + 0xA0, cell + 0xA0])
            }
            _ => None,
        }
    } else {
        match *c {
            [0x8E, k] => Some(vec![k]),
            [e1, e2] if e1 >= 0xA1 && e2 >= 0xA1 => {
                let (row, cell) = (e1 - 0xA0, e2 - 0xA0);
                let s1 = row.div_ceil(2) + if row <= 62 { 0x80 } else { 0xC0 };
                let s2 = if row % 2 == 1 { cell + 0x3F + u8::from(cell >= 64) } else { cell + 0x9E };
                Some(vec![s1, s2])
            }
            _ => None,
        }
    }
}

/// Whether an invalid sequence at the very end of the input is a truncated character.
fn is_truncation(dec: &Codec, tail: &[u8]) -> bool {
    let mut st = DecState::default();
    matches!(dec.decode(&mut st, tail, 0, false), Decoded::Incomplete(_))
}

/// Converts `b` from `src` to `dst` with no options; `None` on any error.
pub fn convert_simple(b: &[u8], src: u8, dst: u8) -> Option<Vec<u8>> {
    if src == dst {
        return Some(b.to_vec());
    }
    let mut t = Transcoder::new(src, dst, 0)?;
    match t.run(b, None) {
        (Res::Finished, _) => Some(t.out),
        _ => None,
    }
}

/// Converts a piece of text to be inserted into `dst` output (a replacement): with no
/// options and no byte order mark of its own; `None` on any error.
pub fn convert_fragment(b: &[u8], src: u8, dst: u8) -> Option<Vec<u8>> {
    if src == dst {
        return Some(b.to_vec());
    }
    let mut t = Transcoder::new(src, dst, 0)?;
    t.estate.bom_written = true;
    match t.run(b, None) {
        (Res::Finished, _) => Some(t.out),
        _ => None,
    }
}

/// Bytes as CRuby shows them in conversion error messages: printable ASCII as is,
/// everything else as `\xHH`.
pub fn dump_bytes(b: &[u8]) -> String {
    let mut s = String::new();
    for &x in b {
        let esc = match x {
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x0C => Some("\\f"),
            0x0B => Some("\\v"),
            0x08 => Some("\\b"),
            0x07 => Some("\\a"),
            0x1B => Some("\\e"),
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            _ => None,
        };
        if let Some(e) = esc {
            s.push_str(e);
        } else if (0x20..0x7F).contains(&x) {
            s.push(x as char);
        } else {
            s.push_str(&format!("\\x{x:02X}"));
        }
    }
    s
}

/// The message of the exception for the last error of `t`.
pub fn error_message(t: &Transcoder) -> String {
    let e = &t.last;
    let (s, d) = e.step.unwrap_or((name(t.src), name(t.dst)));
    let p = path(t.src, t.dst);
    // The path as CRuby prints it: the source as given, then each step's destination.
    let whole = std::iter::once(name(t.src)).chain(p[1..].iter().copied()).collect::<Vec<_>>().join(" to ");
    let single = (s, d) == (name(t.src), name(t.dst));
    match e.res {
        Res::UndefinedConversion => {
            let what = match e.codepoint {
                Some(cp) if s == "UTF-8" => format!("U+{cp:04X}"),
                _ => format!("\"{}\"", dump_bytes(&e.error_bytes)),
            };
            if single {
                format!("{what} from {s} to {d}")
            } else {
                format!("{what} to {d} in conversion from {whole}")
            }
        }
        Res::IncompleteInput => format!("incomplete \"{}\" on {s}", dump_bytes(&e.error_bytes)),
        _ => {
            if e.readagain.is_empty() {
                format!("\"{}\" on {s}", dump_bytes(&e.error_bytes))
            } else {
                format!("\"{}\" followed by \"{}\" on {s}", dump_bytes(&e.error_bytes), dump_bytes(&e.readagain))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::encoding::find;

    fn enc(n: &str) -> u8 {
        find(n).expect("known encoding")
    }

    #[test]
    fn paths_follow_cruby() {
        assert_eq!(path(enc("Shift_JIS"), enc("EUC-JP")), ["Shift_JIS", "EUC-JP"]);
        assert_eq!(path(enc("ISO-8859-1"), enc("EUC-JP")), ["ISO-8859-1", "UTF-8", "EUC-JP"]);
        assert_eq!(path(enc("UTF-8"), enc("ISO-2022-JP")), ["UTF-8", "EUC-JP", "stateless-ISO-2022-JP", "ISO-2022-JP"]);
        assert_eq!(path(enc("UTF-8"), enc("CP50221")), ["UTF-8", "CP51932", "CP50221"]);
    }

    #[test]
    fn direct_jp_round_trips_every_jis_x_0208_cell() {
        for row in 0xA1..=0xFEu8 {
            for cell in 0xA1..=0xFEu8 {
                let sjis = direct_jp(false, &[row, cell]).expect("EUC-JP pair maps");
                assert_eq!(direct_jp(true, &sjis), Some(vec![row, cell]));
            }
        }
    }

    #[test]
    fn streaming_keeps_truncated_characters() {
        let mut t = Transcoder::new(UTF_8, enc("UTF-16BE"), PARTIAL_INPUT).expect("converter");
        assert_eq!(t.run(b"a\xE3\x81", None), (Res::SourceBufferEmpty, 3));
        assert_eq!(t.pending, b"\xE3\x81");
        t.flags = 0;
        assert_eq!(t.run(b"\x82", None), (Res::Finished, 1));
        assert_eq!(t.out, [0, b'a', 0x30, 0x42]);
    }

    #[test]
    fn invalid_bytes_report_read_again_bytes() {
        let mut t = Transcoder::new(UTF_8, enc("ISO-8859-1"), 0).expect("converter");
        assert_eq!(t.run(b"\xF1abc", None).0, Res::InvalidByteSequence);
        assert_eq!(t.last.error_bytes, b"\xF1");
        assert_eq!(t.last.readagain, b"a");
        assert_eq!(error_message(&t), "\"\\xF1\" followed by \"a\" on UTF-8");
    }

    #[test]
    fn gb18030_four_byte_sequences() {
        let mut t = Transcoder::new(UTF_8, enc("GB18030"), 0).expect("converter");
        t.run("\u{80}\u{10000}".as_bytes(), None);
        assert_eq!(t.out, [0x81, 0x30, 0x81, 0x30, 0x90, 0x30, 0x81, 0x30]);
    }
}
