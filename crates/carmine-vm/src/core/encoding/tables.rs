//! Transcoding tables: byte sequences <-> Unicode codepoints for the table-driven encodings.
//!
//! Invariants:
//! - The tables are immutable data compiled into the binary (`tables/*.bin`, written by
//!   `tables/gen.rb`; the format is described there). A table's decode half is sorted by
//!   sequence, its encode half (exceptions to the inverse of decoding) by codepoint.
//! - The inverse maps are built at most once per process (`OnceLock`): they are immutable
//!   after construction, so sharing them between VMs and threads is safe.

use std::collections::HashMap;
use std::sync::OnceLock;

pub struct Table {
    data: &'static [u8],
    n_decode: usize,
    /// `None`: the encoding can be decoded but not encoded.
    n_encode: Option<usize>,
    inverse: OnceLock<HashMap<u32, u32>>,
}

const UNDEFINED: u32 = 0xFFFF_FFFF;

fn u32_at(d: &[u8], k: usize) -> u32 {
    u32::from_le_bytes([d[k], d[k + 1], d[k + 2], d[k + 3]])
}

impl Table {
    const fn new(data: &'static [u8]) -> Table {
        let n_decode = u32::from_le_bytes([data[4], data[5], data[6], data[7]]) as usize;
        let ne = u32::from_le_bytes([data[8], data[9], data[10], data[11]]);
        Table { data, n_decode, n_encode: if ne == UNDEFINED { None } else { Some(ne as usize) }, inverse: OnceLock::new() }
    }

    fn decode_pair(&self, k: usize) -> (u32, u32) {
        let o = 12 + k * 8;
        (u32_at(self.data, o), u32_at(self.data, o + 4))
    }

    fn encode_pair(&self, k: usize) -> (u32, u32) {
        let o = 12 + self.n_decode * 8 + k * 8;
        (u32_at(self.data, o), u32_at(self.data, o + 4))
    }

    /// The codepoint of the character whose bytes (read big-endian) are `seq`.
    pub fn decode(&self, seq: u32) -> Option<u32> {
        let (mut lo, mut hi) = (0, self.n_decode);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (k, v) = self.decode_pair(mid);
            match k.cmp(&seq) {
                std::cmp::Ordering::Equal => return Some(v),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        None
    }

    pub fn can_encode(&self) -> bool {
        self.n_encode.is_some()
    }

    /// The byte sequence (big-endian in a u32) for codepoint `cp`, if the encoding has one.
    pub fn encode(&self, cp: u32) -> Option<u32> {
        let ne = self.n_encode?;
        let (mut lo, mut hi) = (0, ne);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let (k, v) = self.encode_pair(mid);
            match k.cmp(&cp) {
                std::cmp::Ordering::Equal => return (v != UNDEFINED).then_some(v),
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
            }
        }
        let inv = self.inverse.get_or_init(|| {
            let mut m = HashMap::with_capacity(self.n_decode);
            for k in 0..self.n_decode {
                let (seq, cp) = self.decode_pair(k);
                m.entry(cp).or_insert(seq);
            }
            m
        });
        inv.get(&cp).copied()
    }
}

/// The names are a table of their own, apart from the tables' bytes: every encoding's name
/// is read when a VM starts, and a name stored next to its table would bring that table's
/// neighbourhood of the binary into memory with it (the kernel maps a page's 64 KiB
/// window on each fault; a dozen names did that for 768 KB of tables).
macro_rules! tables {
    ($($name:literal => $file:literal),* $(,)?) => {
        static TABLE_NAMES: [&str; [$($name),*].len()] = [$($name),*];
        static TABLES: [Table; [$($name),*].len()] = [$(Table::new(include_bytes!(concat!("tables/", $file, ".bin")))),*];
    };
}

tables! {
    "ISO-8859-1" => "iso-8859-1", "ISO-8859-2" => "iso-8859-2", "ISO-8859-3" => "iso-8859-3",
    "ISO-8859-4" => "iso-8859-4", "ISO-8859-5" => "iso-8859-5", "ISO-8859-6" => "iso-8859-6",
    "ISO-8859-7" => "iso-8859-7", "ISO-8859-8" => "iso-8859-8", "ISO-8859-9" => "iso-8859-9",
    "ISO-8859-10" => "iso-8859-10", "ISO-8859-11" => "iso-8859-11", "ISO-8859-13" => "iso-8859-13",
    "ISO-8859-14" => "iso-8859-14", "ISO-8859-15" => "iso-8859-15", "ISO-8859-16" => "iso-8859-16",
    "Windows-874" => "windows-874", "Windows-1250" => "windows-1250", "Windows-1251" => "windows-1251",
    "Windows-1252" => "windows-1252", "Windows-1253" => "windows-1253", "Windows-1254" => "windows-1254",
    "Windows-1255" => "windows-1255", "Windows-1256" => "windows-1256", "Windows-1257" => "windows-1257",
"IBM437" => "ibm437", "IBM720" => "ibm720", "IBM737" => "ibm737",
    "IBM775" => "ibm775", "CP850" => "cp850", "IBM852" => "ibm852", "CP852" => "cp852",
    "IBM855" => "ibm855", "CP855" => "cp855", "IBM857" => "ibm857", "IBM860" => "ibm860",
    "IBM861" => "ibm861", "IBM862" => "ibm862", "IBM863" => "ibm863", "IBM865" => "ibm865",
    "IBM866" => "ibm866", "IBM869" => "ibm869", "KOI8-R" => "koi8-r", "KOI8-U" => "koi8-u",
    "TIS-620" => "tis-620", "macCroatian" => "maccroatian", "macCyrillic" => "maccyrillic",
    "macGreek" => "macgreek", "macIceland" => "maciceland", "macRoman" => "macroman",
    "macRomania" => "macromania", "macTurkish" => "macturkish", "macUkraine" => "macukraine",
    "IBM037" => "ibm037",
    "Shift_JIS" => "shift_jis", "Windows-31J" => "windows-31j", "EUC-JP" => "euc-jp",
    "eucJP-ms" => "eucjp-ms", "CP51932" => "cp51932", "EUC-KR" => "euc-kr", "CP949" => "cp949",
    "Big5" => "big5", "CP950" => "cp950", "CP951" => "cp951", "Big5-HKSCS" => "big5-hkscs",
    "Big5-UAO" => "big5-uao", "GBK" => "gbk", "GB2312" => "gb2312", "GB12345" => "gb12345",
    "GB18030" => "gb18030", "EUC-JIS-2004" => "euc-jis-2004", "SJIS-DoCoMo" => "sjis-docomo",
    "SJIS-KDDI" => "sjis-kddi", "SJIS-SoftBank" => "sjis-softbank",
}

/// The table of the encoding named `name` (CRuby's canonical name), if it has one.
pub fn table(name: &str) -> Option<&'static Table> {
    TABLE_NAMES.iter().position(|n| *n == name).map(|i| &TABLES[i])
}

static GB18030_RANGES: &[u8] = include_bytes!("tables/gb18030_ranges.bin");

fn gb_range(k: usize) -> (u32, u32, u32) {
    let o = k * 12;
    (u32_at(GB18030_RANGES, o), u32_at(GB18030_RANGES, o + 4), u32_at(GB18030_RANGES, o + 8))
}

/// GB18030's four-byte sequences: linear index (0 for 0x81308130) -> codepoint.
pub fn gb18030_four_decode(index: u32) -> Option<u32> {
    const SUPPLEMENTARY: u32 = 189_000; // index of 0x90308130, which is U+10000
    if index >= SUPPLEMENTARY {
        let cp = index - SUPPLEMENTARY + 0x10000;
        return (cp <= 0x10FFFF).then_some(cp);
    }
    let n = GB18030_RANGES.len() / 12;
    (0..n).map(gb_range).find(|&(start, _, len)| index >= start && index < start + len).map(|(start, cp, _)| cp + (index - start))
}

/// The linear four-byte index of codepoint `cp` in GB18030 (for codepoints not in the
/// one- and two-byte table).
pub fn gb18030_four_encode(cp: u32) -> Option<u32> {
    if cp >= 0x10000 {
        return (cp <= 0x10FFFF).then_some(cp - 0x10000 + 189_000);
    }
    let n = GB18030_RANGES.len() / 12;
    (0..n).map(gb_range).find(|&(_, c, len)| cp >= c && cp < c + len).map(|(start, c, _)| start + (cp - c))
}
