//! One decoder and encoder per encoding: bytes -> Unicode codepoints -> bytes.
//!
//! Invariants:
//! - Every conversion goes through Unicode: `decode` reads one character (or one invalid
//!   sequence) at a byte offset, `encode` writes one codepoint. Stateful encodings
//!   (ISO-2022-JP, the BOM of UTF-16/UTF-32) keep their state in `DecState`/`EncState`,
//!   owned by the conversion in progress.
//! - `decode` never reads past the buffer: when a character may continue beyond the end
//!   and more input can come, it answers `Incomplete` and consumes nothing.
//! - Invalid sequences follow CRuby's transcoders: the erroneous bytes are the maximal
//!   prefix that could start a character; the byte that broke it is "read again" (it
//!   starts the next character), reported as `readagain`.

use super::tables::{self, Table};
use super::{Kind, BINARY, UTF_8};

#[derive(Clone, Copy)]
pub enum Codec {
    Utf8,
    /// UTF-8 with supplementary characters as two encoded surrogates.
    Cesu8,
    Utf16 { le: bool, bom: bool },
    Utf32 { le: bool, bom: bool },
    Ascii,
    Binary,
    /// A table-driven encoding; `enc` gives its byte structure.
    Table(&'static Table, u8),
    Gb18030(&'static Table, u8),
    /// ISO-2022-JP and Microsoft's CP50220/CP50221 (JIS X 0208 through the EUC-JP or
    /// CP51932 table, plus half-width katakana for the CP5022x).
    Iso2022Jp(&'static Table, Kana),
    /// stateless-ISO-2022-JP: ASCII, and 0x92 followed by a JIS X 0208 character's EUC-JP bytes.
    StatelessJp(&'static Table),
    /// No conversion: bytes pass as they are (a converter with decorators only).
    Bytes,
}

/// What an ISO-2022-JP variant does with half-width katakana.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kana {
    /// ISO-2022-JP: none.
    None,
    /// CP50221: `ESC ( I` (and SO/SI when reading).
    Escape,
    /// CP50220: read like CP50221, written as full-width katakana.
    FullWidth,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    Char(u32, usize),
    /// Bytes that are no character (a BOM, an escape sequence).
    Skip(usize),
    /// A well-formed character with no Unicode mapping.
    Undefined(usize),
    Invalid { len: usize, readagain: usize },
    /// Truncated at the end of the buffer: `len` bytes are a valid prefix.
    Incomplete(usize),
}

#[derive(Default, Clone, Copy)]
pub struct DecState {
    /// Byte order decided by a BOM (for UTF-16/UTF-32 without an explicit one).
    pub le: Option<bool>,
    /// ISO-2022-JP: whether the two-byte JIS X 0208 set is designated.
    pub kanji: bool,
    /// CP5022x: whether half-width katakana are designated (`ESC ( I` or SO).
    pub kana: bool,
}

#[derive(Default, Clone, Copy)]
pub struct EncState {
    pub bom_written: bool,
    pub kanji: bool,
    pub kana: bool,
}

impl Codec {
    /// The codec for encoding `enc`; `None` when Carmine cannot convert from or to it.
    pub fn of(enc: u8) -> Option<Codec> {
        let name = super::name(enc);
        // The dummy UTF-16/UTF-32 are byte-wise as strings but convert with a BOM.
        match name {
            "UTF-16" => return Some(Codec::Utf16 { le: false, bom: true }),
            "UTF-32" => return Some(Codec::Utf32 { le: false, bom: true }),
            _ => {}
        }
        Some(match super::kind(enc) {
            Kind::Utf8 => Codec::Utf8,
            Kind::Cesu8 => Codec::Cesu8,
            Kind::Utf16Be => Codec::Utf16 { le: false, bom: false },
            Kind::Utf16Le => Codec::Utf16 { le: true, bom: false },
            Kind::Utf32Be => Codec::Utf32 { le: false, bom: false },
            Kind::Utf32Le => Codec::Utf32 { le: true, bom: false },
            Kind::Ascii => Codec::Ascii,
            _ if enc == BINARY => Codec::Binary,
            Kind::Gb18030 => Codec::Gb18030(tables::table(name)?, enc),
            _ if name == "ISO-2022-JP" => Codec::Iso2022Jp(tables::table("EUC-JP")?, Kana::None),
            _ if name == "CP50221" => Codec::Iso2022Jp(tables::table("CP51932")?, Kana::Escape),
            _ if name == "CP50220" => Codec::Iso2022Jp(tables::table("CP51932")?, Kana::FullWidth),
            _ if name == "stateless-ISO-2022-JP" => Codec::StatelessJp(tables::table("EUC-JP")?),
            _ => Codec::Table(tables::table(name)?, enc),
        })
    }

    pub fn can_encode(&self) -> bool {
        match self {
            Codec::Table(t, _) | Codec::Gb18030(t, _) => t.can_encode(),
            _ => true,
        }
    }

    fn structure(&self) -> u8 {
        match *self {
            Codec::Utf8 => UTF_8,
            Codec::Cesu8 => super::find("CESU-8").unwrap_or(UTF_8),
            Codec::Ascii => super::US_ASCII,
            Codec::Table(_, e) | Codec::Gb18030(_, e) => e,
            _ => BINARY,
        }
    }

    /// Decodes the character at `b[i..]`. `at_end`: no more input follows `b`.
    pub fn decode(&self, st: &mut DecState, b: &[u8], i: usize, at_end: bool) -> Decoded {
        let rest = b.len() - i;
        match *self {
            Codec::Utf16 { le, bom } => {
                if rest < 2 {
                    return truncated(rest, at_end);
                }
                if bom && st.le.is_none() {
                    match (b[i], b[i + 1]) {
                        (0xFE, 0xFF) => {
                            st.le = Some(false);
                            return Decoded::Skip(2);
                        }
                        (0xFF, 0xFE) => {
                            st.le = Some(true);
                            return Decoded::Skip(2);
                        }
                        // Without a byte order mark nothing can be read.
                        _ => return Decoded::Invalid { len: 2, readagain: 0 },
                    }
                }
                let le = st.le.unwrap_or(le);
                let w = |k: usize| if le { u16::from_le_bytes([b[k], b[k + 1]]) } else { u16::from_be_bytes([b[k], b[k + 1]]) } as u32;
                let u = w(i);
                match u {
                    0xD800..=0xDBFF => {
                        if rest < 4 {
                            return truncated(rest, at_end);
                        }
                        let lo = w(i + 2);
                        if (0xDC00..=0xDFFF).contains(&lo) {
                            Decoded::Char(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00), 4)
                        } else {
                            Decoded::Invalid { len: 2, readagain: 2 }
                        }
                    }
                    0xDC00..=0xDFFF => Decoded::Invalid { len: 2, readagain: 0 },
                    _ => Decoded::Char(u, 2),
                }
            }
            Codec::Utf32 { le, bom } => {
                if rest < 4 {
                    // A prefix of a character: the bytes read so far keep it <= U+10FFFF.
                    let possible = match st.le.unwrap_or(le) {
                        false => b[i] == 0 && (rest < 2 || b[i + 1] <= 0x10),
                        true => rest < 3 || b[i + 2] <= 0x10,
                    };
                    return if possible || bom && st.le.is_none() { truncated(rest, at_end) } else { Decoded::Invalid { len: rest, readagain: 0 } };
                }
                let q = [b[i], b[i + 1], b[i + 2], b[i + 3]];
                if bom && st.le.is_none() {
                    if q == [0, 0, 0xFE, 0xFF] {
                        st.le = Some(false);
                        return Decoded::Skip(4);
                    }
                    if q == [0xFF, 0xFE, 0, 0] {
                        st.le = Some(true);
                        return Decoded::Skip(4);
                    }
                    return Decoded::Invalid { len: 4, readagain: 0 };
                }
                let cp = if st.le.unwrap_or(le) { u32::from_le_bytes(q) } else { u32::from_be_bytes(q) };
                if cp > 0x10FFFF || (0xD800..=0xDFFF).contains(&cp) {
                    Decoded::Invalid { len: 4, readagain: 0 }
                } else {
                    Decoded::Char(cp, 4)
                }
            }
            Codec::Binary => {
                if b[i] < 0x80 {
                    Decoded::Char(b[i] as u32, 1)
                } else {
                    Decoded::Undefined(1)
                }
            }
            Codec::Iso2022Jp(t, kana) => decode_iso2022jp(t, kana != Kana::None, st, b, i, at_end),
            Codec::StatelessJp(t) => match b[i] {
                0x00..=0x7F => Decoded::Char(b[i] as u32, 1),
                0x92 if rest < 3 => truncated(rest, at_end),
                0x92 if b[i + 1] >= 0xA1 && b[i + 2] >= 0xA1 => match t.decode(((b[i + 1] as u32) << 8) | b[i + 2] as u32) {
                    Some(cp) => Decoded::Char(cp, 3),
                    None => Decoded::Undefined(3),
                },
                _ => Decoded::Invalid { len: 1, readagain: 0 },
            },
            Codec::Bytes => Decoded::Char(b[i] as u32, 1),
            _ => {
                let enc = self.structure();
                match structured_len(enc, b, i) {
                    Ok(n) => {
                        let seq = b[i..i + n].iter().fold(0u32, |a, &x| (a << 8) | x as u32);
                        let cp = match *self {
                            Codec::Utf8 => return Decoded::Char(super::codepoint_at(UTF_8, b, i).0, n),
                            Codec::Cesu8 if n == 6 => {
                                let hi = ((b[i + 1] as u32 & 0x0F) << 6) | (b[i + 2] as u32 & 0x3F);
                                let lo = ((b[i + 4] as u32 & 0x0F) << 6) | (b[i + 5] as u32 & 0x3F);
                                return Decoded::Char(0x10000 + (hi << 10) + lo, 6);
                            }
                            Codec::Cesu8 => return Decoded::Char(super::codepoint_at(UTF_8, b, i).0, n),
                            Codec::Ascii => Some(b[i] as u32),
                            Codec::Gb18030(_, _) if n == 4 => {
                                let idx = (((b[i] as u32 - 0x81) * 10 + (b[i + 1] as u32 - 0x30)) * 126 + (b[i + 2] as u32 - 0x81)) * 10 + (b[i + 3] as u32 - 0x30);
                                tables::gb18030_four_decode(idx)
                            }
                            Codec::Table(t, _) | Codec::Gb18030(t, _) => t.decode(seq),
                            _ => None,
                        };
                        match cp {
                            Some(cp) => Decoded::Char(cp, n),
                            None => Decoded::Undefined(n),
                        }
                    }
                    Err(Broken::Truncated(n)) => truncated(n, at_end),
                    Err(Broken::Invalid(n, readagain)) => Decoded::Invalid { len: n, readagain },
                }
            }
        }
    }

    /// Appends codepoint `cp`; false when the encoding has no character for it.
    pub fn encode(&self, st: &mut EncState, cp: u32, out: &mut Vec<u8>) -> bool {
        match *self {
            Codec::Utf8 => match char::from_u32(cp) {
                Some(ch) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    true
                }
                None => false,
            },
            Codec::Cesu8 => match char::from_u32(cp) {
                Some(ch) if cp >= 0x10000 => {
                    let mut units = [0u16; 2];
                    for u in ch.encode_utf16(&mut units) {
                        let u = *u as u32;
                        out.extend_from_slice(&[0xE0 | (u >> 12) as u8, 0x80 | ((u >> 6) & 0x3F) as u8, 0x80 | (u & 0x3F) as u8]);
                    }
                    true
                }
                Some(ch) => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    true
                }
                None => false,
            },
            Codec::Utf16 { le, bom } => match char::from_u32(cp) {
                Some(ch) => {
                    if bom && !st.bom_written {
                        st.bom_written = true;
                        out.extend_from_slice(&[0xFE, 0xFF]);
                    }
                    let mut buf = [0u16; 2];
                    for u in ch.encode_utf16(&mut buf) {
                        out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
                    }
                    true
                }
                None => false,
            },
            Codec::Utf32 { le, bom } => {
                if char::from_u32(cp).is_none() {
                    return false;
                }
                if bom && !st.bom_written {
                    st.bom_written = true;
                    out.extend_from_slice(&[0, 0, 0xFE, 0xFF]);
                }
                out.extend_from_slice(&if le { cp.to_le_bytes() } else { cp.to_be_bytes() });
                true
            }
            Codec::Bytes => {
                out.push(cp as u8);
                cp < 0x100
            }
            Codec::Ascii | Codec::Binary => {
                if cp < 0x80 {
                    out.push(cp as u8);
                    true
                } else {
                    false
                }
            }
            Codec::Table(t, _) => match t.encode(cp) {
                Some(seq) => {
                    push_seq(seq, out);
                    true
                }
                None => false,
            },
            Codec::Gb18030(t, _) => {
                if let Some(seq) = t.encode(cp) {
                    push_seq(seq, out);
                    return true;
                }
                if (0xD800..=0xDFFF).contains(&cp) {
                    return false;
                }
                match tables::gb18030_four_encode(cp) {
                    Some(mut idx) => {
                        let b4 = idx % 10;
                        idx /= 10;
                        let b3 = idx % 126;
                        idx /= 126;
                        let b2 = idx % 10;
                        let b1 = idx / 10;
                        out.extend_from_slice(&[(b1 + 0x81) as u8, (b2 + 0x30) as u8, (b3 + 0x81) as u8, (b4 + 0x30) as u8]);
                        true
                    }
                    None => false,
                }
            }
            Codec::StatelessJp(t) => {
                if cp < 0x80 {
                    out.push(cp as u8);
                    return true;
                }
                match t.encode(cp) {
                    Some(seq) if (0xA1A1..=0xFEFE).contains(&seq) && seq & 0xFF >= 0xA1 => {
                        out.extend_from_slice(&[0x92, (seq >> 8) as u8, seq as u8]);
                        true
                    }
                    _ => false,
                }
            }
            Codec::Iso2022Jp(t, kana) => {
                if cp < 0x80 {
                    if st.kanji || st.kana {
                        out.extend_from_slice(b"\x1b(B");
                        st.kanji = false;
                        st.kana = false;
                    }
                    out.push(cp as u8);
                    return true;
                }
                let cp = if kana == Kana::FullWidth { full_width_kana(cp).unwrap_or(cp) } else { cp };
                match t.encode(cp) {
                    Some(seq) if (0xA1A1..=0xFEFE).contains(&seq) && seq & 0xFF >= 0xA1 => {
                        if !st.kanji {
                            out.extend_from_slice(b"\x1b$B");
                            st.kanji = true;
                            st.kana = false;
                        }
                        out.extend_from_slice(&[(seq >> 8) as u8 & 0x7F, seq as u8 & 0x7F]);
                        true
                    }
                    Some(seq) if kana == Kana::Escape && seq >> 8 == 0x8E => {
                        if !st.kana {
                            out.extend_from_slice(b"\x1b(I");
                            st.kana = true;
                            st.kanji = false;
                        }
                        out.push(seq as u8 & 0x7F);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// For the ISO-2022-JP family: the bytes `cp` has in the intermediate EUC-JP/CP51932
    /// step when that step has it but the ISO-2022-JP side cannot write it (JIS X 0212,
    /// half-width katakana), so the error names that step as CRuby does.
    pub fn intermediate(&self, cp: u32) -> Option<Vec<u8>> {
        let t = match *self {
            Codec::Iso2022Jp(t, _) | Codec::StatelessJp(t) => t,
            _ => return None,
        };
        let seq = t.encode(cp)?;
        let mut out = Vec::new();
        push_seq(seq, &mut out);
        Some(out)
    }

    /// Output that ends the conversion (returning a stateful encoding to its initial state).
    pub fn finish(&self, st: &mut EncState, out: &mut Vec<u8>) {
        if let Codec::Iso2022Jp(..) = self {
            if st.kanji || st.kana {
                out.extend_from_slice(b"\x1b(B");
                st.kanji = false;
                st.kana = false;
            }
        }
    }
}

fn push_seq(seq: u32, out: &mut Vec<u8>) {
    let bytes = seq.to_be_bytes();
    let skip = bytes.iter().take(3).take_while(|&&x| x == 0).count();
    out.extend_from_slice(&bytes[skip..]);
}

fn truncated(n: usize, at_end: bool) -> Decoded {
    if at_end {
        Decoded::Invalid { len: n, readagain: 0 }
    } else {
        Decoded::Incomplete(n)
    }
}

enum Broken {
    /// The buffer ends inside a possible character of `n` bytes so far.
    Truncated(usize),
    /// `n` bytes cannot start a character; the next `readagain` bytes start the next one.
    Invalid(usize, usize),
}

/// Whether `prefix` (invalid as a whole) is the beginning of some valid character.
fn is_prefix(enc: u8, prefix: &[u8]) -> bool {
    let mut probe = prefix.to_vec();
    probe.push(0);
    let last = probe.len() - 1;
    (0..=255u8).any(|x| {
        probe[last] = x;
        match super::precise_char_len(enc, &probe, 0) {
            Ok(_) => true,
            Err(m) => m > prefix.len(),
        }
    })
}

fn structured_len(enc: u8, b: &[u8], i: usize) -> Result<usize, Broken> {
    // CRuby's Big5 converters read leads 0x81-0xA0 too (user-defined and HKSCS rows).
    if super::kind(enc) == Kind::Big5 && (0x81..=0xA0).contains(&b[i]) {
        return match b.get(i + 1) {
            None => Err(Broken::Truncated(1)),
            Some(0x40..=0x7E | 0xA1..=0xFE) => Ok(2),
            Some(_) => Err(Broken::Invalid(1, 1)),
        };
    }
    match super::precise_char_len(enc, b, i) {
        Ok(n) => Ok(n),
        Err(n) => {
            if i + n == b.len() && is_prefix(enc, &b[i..]) {
                Err(Broken::Truncated(n))
            } else if i + n < b.len() && is_prefix(enc, &b[i..i + n]) {
                Err(Broken::Invalid(n, 1))
            } else {
                Err(Broken::Invalid(n, 0))
            }
        }
    }
}

/// The full-width katakana (or punctuation) for a half-width one (CP50220 writes no
/// half-width katakana).
fn full_width_kana(cp: u32) -> Option<u32> {
    const FULL: [u16; 63] = [
        0x3002, 0x300C, 0x300D, 0x3001, 0x30FB, 0x30F2, 0x30A1, 0x30A3, 0x30A5, 0x30A7, 0x30A9, 0x30E3, 0x30E5, 0x30E7, 0x30C3, 0x30FC,
        0x30A2, 0x30A4, 0x30A6, 0x30A8, 0x30AA, 0x30AB, 0x30AD, 0x30AF, 0x30B1, 0x30B3, 0x30B5, 0x30B7, 0x30B9, 0x30BB, 0x30BD, 0x30BF,
        0x30C1, 0x30C4, 0x30C6, 0x30C8, 0x30CA, 0x30CB, 0x30CC, 0x30CD, 0x30CE, 0x30CF, 0x30D2, 0x30D5, 0x30D8, 0x30DB, 0x30DE, 0x30DF,
        0x30E0, 0x30E1, 0x30E2, 0x30E4, 0x30E6, 0x30E8, 0x30E9, 0x30EA, 0x30EB, 0x30EC, 0x30ED, 0x30EF, 0x30F3, 0x309B, 0x309C,
    ];
    (0xFF61..=0xFF9F).contains(&cp).then(|| FULL[(cp - 0xFF61) as usize] as u32)
}

fn decode_iso2022jp(t: &Table, kana_ok: bool, st: &mut DecState, b: &[u8], i: usize, at_end: bool) -> Decoded {
    let rest = b.len() - i;
    let c = b[i];
    if kana_ok && (c == 0x0E || c == 0x0F) {
        st.kana = c == 0x0E;
        return Decoded::Skip(1);
    }
    if c == 0x1B {
        let Some(&c1) = b.get(i + 1) else { return truncated(1, at_end) };
        if c1 != b'(' && c1 != b'$' {
            return Decoded::Invalid { len: 1, readagain: 1 };
        }
        let Some(&c2) = b.get(i + 2) else { return truncated(2, at_end) };
        return match (c1, c2) {
            (b'(', b'B') | (b'(', b'J') => {
                st.kanji = false;
                st.kana = false;
                Decoded::Skip(3)
            }
            (b'(', b'I') if kana_ok => {
                st.kanji = false;
                st.kana = true;
                Decoded::Skip(3)
            }
            (b'$', b'@') | (b'$', b'B') => {
                st.kanji = true;
                st.kana = false;
                Decoded::Skip(3)
            }
            _ => Decoded::Invalid { len: 2, readagain: 1 },
        };
    }
    // The CP5022x also read 8-bit half-width katakana.
    if kana_ok && (0xA1..=0xDF).contains(&c) {
        return match t.decode(0x8E00 | c as u32) {
            Some(cp) => Decoded::Char(cp, 1),
            None => Decoded::Undefined(1),
        };
    }
    if c >= 0x80 {
        return Decoded::Invalid { len: 1, readagain: 0 };
    }
    if st.kana && (0x21..=0x5F).contains(&c) {
        return match t.decode(0x8E00 | (c as u32 | 0x80)) {
            Some(cp) => Decoded::Char(cp, 1),
            None => Decoded::Undefined(1),
        };
    }
    if !st.kanji || c < 0x21 || c == 0x7F {
        return Decoded::Char(c as u32, 1);
    }
    if rest < 2 {
        return truncated(1, at_end);
    }
    let c2 = b[i + 1];
    if !(0x21..=0x7E).contains(&c2) {
        return Decoded::Invalid { len: 1, readagain: 1 };
    }
    match t.decode(((c as u32 | 0x80) << 8) | (c2 as u32 | 0x80)) {
        Some(cp) => Decoded::Char(cp, 2),
        None => Decoded::Undefined(2),
    }
}
