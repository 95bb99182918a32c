//! `Array#pack` and the template machinery shared with `String#unpack`: directive parsing,
//! integer/float layouts, and the pure byte codecs (base64, uuencode, quoted-printable,
//! BER-compressed integers) in both directions.
//!
//! Invariants:
//! - `parse_template` is the only template parser; it reports CRuby's errors (unknown
//!   directives, misplaced modifiers) with the mode ("pack"/"unpack") in the message.
//! - Codec functions are pure Rust over byte slices (unit-tested here); the Ruby-facing
//!   code converts arguments first and never holds a string's bytes across a Ruby call.

use num_bigint::{BigInt, Sign};

use crate::core::{array, bignum, float, hash, integer, numeric, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A directive's repeat count.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Count {
    /// An explicit or default (1; 0 for unpack's `@`) count.
    N(usize),
    /// `*`.
    Star,
}

/// One parsed template directive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// The directive letter (`b'C'`, `b'a'`, …).
    pub kind: u8,
    pub count: Count,
    /// `_` or `!`: the platform's native size (for `s S i I l L q Q j J`).
    pub native: bool,
    /// `b'<'`, `b'>'`, or 0 for the platform's byte order.
    pub endian: u8,
}

const NATIVE_TYPES: &[u8] = b"sSiIlLqQjJ";
const KNOWN: &[u8] = b"aAZbBhHcCsSiIlLqQjJnNvVUwdDfFeEgGmMuxX@pP";

fn quoted_template(fmt: &[u8]) -> String {
    if fmt.iter().all(|&b| (0x20..0x7f).contains(&b) || b == b'\n' || b == b'\t') {
        String::from_utf8_lossy(fmt).into_owned()
    } else {
        let s = string::inspect_bytes(fmt, crate::core::encoding::BINARY);
        let s = String::from_utf8_lossy(&s).into_owned();
        s[1..s.len() - 1].to_string()
    }
}

/// Parses a pack/unpack template (`mode` is "pack" or "unpack", used in messages).
pub fn parse_template(ctx: &mut Ctx, fmt: &[u8], mode: &str) -> Result<Vec<Directive>> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < fmt.len() {
        let kind = fmt[p];
        p += 1;
        if kind.is_ascii_whitespace() || kind == 0x0b {
            continue;
        }
        if kind == b'#' {
            while p < fmt.len() && fmt[p] != b'\n' {
                p += 1;
            }
            continue;
        }
        let mut native = false;
        let mut endian = 0u8;
        while p < fmt.len() {
            match fmt[p] {
                m @ (b'_' | b'!') => {
                    if !NATIVE_TYPES.contains(&kind) {
                        return Err(ctx.arg_error(&format!("'{}' allowed only after types sSiIlLqQjJ", m as char)));
                    }
                    native = true;
                    p += 1;
                }
                m @ (b'<' | b'>') => {
                    if !NATIVE_TYPES.contains(&kind) {
                        return Err(ctx.arg_error(&format!("'{}' allowed only after types sSiIlLqQjJ", m as char)));
                    }
                    if endian != 0 {
                        return Err(ctx.range_error("Can't use both '<' and '>'"));
                    }
                    endian = m;
                    p += 1;
                }
                _ => break,
            }
        }
        let count = if p < fmt.len() && fmt[p] == b'*' {
            p += 1;
            Count::Star
        } else if p < fmt.len() && fmt[p].is_ascii_digit() {
            let start = p;
            while p < fmt.len() && fmt[p].is_ascii_digit() {
                p += 1;
            }
            let digits = std::str::from_utf8(&fmt[start..p]).unwrap_or("0");
            match digits.parse::<usize>() {
                Ok(n) if n <= i64::MAX as usize => Count::N(n),
                _ => return Err(ctx.range_error("pack length too big")),
            }
        } else {
            // CRuby's default count: 1, but unpack's `@` (an absolute position) is 0.
            Count::N(usize::from(kind != b'@' || mode == "pack"))
        };
        if kind == b'%' {
            return Err(ctx.arg_error("% is not supported"));
        }
        if !KNOWN.contains(&kind) {
            let shown = if (0x20..0x7f).contains(&kind) { (kind as char).to_string() } else { format!("\\x{kind:02x}") };
            let t = quoted_template(fmt);
            return Err(ctx.arg_error(&format!("unknown {mode} directive '{shown}' in '{t}'")));
        }
        out.push(Directive { kind, count, native, endian });
    }
    Ok(out)
}

/// Byte layout of an integer directive.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IntLayout {
    pub size: usize,
    pub signed: bool,
    pub big_endian: bool,
}

/// The layout of integer directive `d`, or `None` for other directives.
pub fn int_layout(d: &Directive) -> Option<IntLayout> {
    let native_big = cfg!(target_endian = "big");
    let (size, signed, big) = match d.kind {
        b'c' => (1, true, native_big),
        b'C' => (1, false, native_big),
        b's' => (2, true, native_big),
        b'S' => (2, false, native_big),
        b'i' => (4, true, native_big),
        b'I' => (4, false, native_big),
        b'l' => (if d.native { 8 } else { 4 }, true, native_big),
        b'L' => (if d.native { 8 } else { 4 }, false, native_big),
        b'q' | b'j' => (8, true, native_big),
        b'Q' | b'J' => (8, false, native_big),
        b'n' => (2, false, true),
        b'N' => (4, false, true),
        b'v' => (2, false, false),
        b'V' => (4, false, false),
        _ => return None,
    };
    let big = match d.endian {
        b'>' => true,
        b'<' => false,
        _ => big,
    };
    Some(IntLayout { size, signed, big_endian: big })
}

/// (size in bytes, big endian) of float directive `d`, or `None`.
pub fn float_layout(d: &Directive) -> Option<(usize, bool)> {
    let native_big = cfg!(target_endian = "big");
    Some(match d.kind {
        b'd' | b'D' => (8, native_big),
        b'f' | b'F' => (4, native_big),
        b'E' => (8, false),
        b'e' => (4, false),
        b'G' => (8, true),
        b'g' => (4, true),
        _ => return None,
    })
}

/// Appends the low `layout.size` bytes of the two's-complement `bits`.
pub fn encode_int(out: &mut Vec<u8>, bits: u64, layout: IntLayout) {
    let le = bits.to_le_bytes();
    let b = &le[..layout.size];
    if layout.big_endian {
        out.extend(b.iter().rev());
    } else {
        out.extend_from_slice(b);
    }
}

/// Reads an integer of `layout` from `b` (which holds at least `layout.size` bytes).
pub fn decode_int(b: &[u8], layout: IntLayout) -> i128 {
    let mut v: u64 = 0;
    for k in 0..layout.size {
        let byte = if layout.big_endian { b[k] } else { b[layout.size - 1 - k] };
        v = (v << 8) | byte as u64;
    }
    if layout.signed && layout.size < 8 {
        let shift = 64 - 8 * layout.size as u32;
        ((v << shift) as i64 >> shift) as i128
    } else if layout.signed {
        v as i64 as i128
    } else {
        v as i128
    }
}

const B64_TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const UU_TABLE: &[u8; 64] = b"`!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_";

/// CRuby's `encodes`: one base64 (`m`) or uuencoded (`u`) line of `s`.
fn encode_line(out: &mut Vec<u8>, s: &[u8], uu: bool, tail_lf: bool) {
    let (table, pad) = if uu { (UU_TABLE, b'`') } else { (B64_TABLE, b'=') };
    if uu {
        out.push(s.len() as u8 + b' ');
    }
    let mut chunks = s.chunks_exact(3);
    for c in &mut chunks {
        out.push(table[(c[0] >> 2) as usize]);
        out.push(table[(((c[0] << 4) & 0o60) | ((c[1] >> 4) & 0o17)) as usize]);
        out.push(table[(((c[1] << 2) & 0o74) | ((c[2] >> 6) & 0o3)) as usize]);
        out.push(table[(c[2] & 0o77) as usize]);
    }
    match chunks.remainder() {
        [a, b] => {
            out.push(table[(a >> 2) as usize]);
            out.push(table[(((a << 4) & 0o60) | ((b >> 4) & 0o17)) as usize]);
            out.push(table[((b << 2) & 0o74) as usize]);
            out.push(pad);
        }
        [a] => {
            out.push(table[(a >> 2) as usize]);
            out.push(table[((a << 4) & 0o60) as usize]);
            out.push(pad);
            out.push(pad);
        }
        _ => {}
    }
    if tail_lf {
        out.push(b'\n');
    }
}

/// Base64 as `pack("m<count>")` writes it: lines of `count / 3 * 3` input bytes (45 when
/// `count` ≤ 2), each ending in a newline; `count == 0` writes one line without newline.
pub fn b64_encode(out: &mut Vec<u8>, s: &[u8], count: usize) {
    if count == 0 {
        encode_line(out, s, false, false);
        return;
    }
    let line = if count <= 2 { 45 } else { count / 3 * 3 };
    for chunk in s.chunks(line) {
        encode_line(out, chunk, false, true);
    }
}

/// uuencode as `pack("u<count>")` writes it.
pub fn uu_encode(out: &mut Vec<u8>, s: &[u8], count: usize) {
    let line = if count <= 2 {
        45
    } else if count > 63 {
        63
    } else {
        count / 3 * 3
    };
    for chunk in s.chunks(line) {
        encode_line(out, chunk, true, true);
    }
}

fn b64_value(c: u8) -> i32 {
    match c {
        b'A'..=b'Z' => (c - b'A') as i32,
        b'a'..=b'z' => (c - b'a') as i32 + 26,
        b'0'..=b'9' => (c - b'0') as i32 + 52,
        b'+' => 62,
        b'/' => 63,
        _ => -1,
    }
}

/// Lenient base64 decoding (`unpack("m")`): skips invalid characters, stops at `=`.
pub fn b64_decode(s: &[u8]) -> Vec<u8> {
    b64_decode_prefix(s).0
}

/// `b64_decode`, also returning how many bytes of `s` it consumed (where CRuby's decoder
/// leaves the read position for the next directive: at a stopping `=`, else the end).
pub fn b64_decode_prefix(s: &[u8]) -> (Vec<u8>, usize) {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let n = s.len();
    let mut i = 0;
    let (mut a, mut b, mut c) = (-1, -1, -1);
    while i < n {
        b = -1;
        c = -1;
        loop {
            a = b64_value(at(i));
            if a != -1 || i >= n {
                break;
            }
            i += 1;
        }
        if i >= n {
            break;
        }
        i += 1;
        loop {
            b = b64_value(at(i));
            if b != -1 || i >= n {
                break;
            }
            i += 1;
        }
        if i >= n {
            break;
        }
        i += 1;
        loop {
            c = b64_value(at(i));
            if c != -1 || i >= n || at(i) == b'=' {
                break;
            }
            i += 1;
        }
        if at(i) == b'=' || i >= n {
            break;
        }
        i += 1;
        let mut d;
        loop {
            d = b64_value(at(i));
            if d != -1 || i >= n || at(i) == b'=' {
                break;
            }
            i += 1;
        }
        if at(i) == b'=' || i >= n {
            break;
        }
        i += 1;
        out.push(((a << 2) | (b >> 4)) as u8);
        out.push(((b << 4) | (c >> 2)) as u8);
        out.push(((c << 6) | d) as u8);
        a = -1;
    }
    if a != -1 && b != -1 {
        out.push(((a << 2) | (b >> 4)) as u8);
        if c != -1 {
            out.push(((b << 4) | (c >> 2)) as u8);
        }
    }
    (out, i.min(n))
}

/// Strict base64 decoding (`unpack("m0")`, RFC 4648); `None` means "invalid base64".
pub fn b64_decode_strict(s: &[u8]) -> Option<Vec<u8>> {
    if s.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for (k, q) in s.chunks_exact(4).enumerate() {
        let last = k == s.len() / 4 - 1;
        let a = b64_value(q[0]);
        let b = b64_value(q[1]);
        if a < 0 || b < 0 {
            return None;
        }
        if q[2] == b'=' {
            if !last || q[3] != b'=' || b & 0xf != 0 {
                return None;
            }
            out.push(((a << 2) | (b >> 4)) as u8);
            break;
        }
        let c = b64_value(q[2]);
        if c < 0 {
            return None;
        }
        if q[3] == b'=' {
            if !last || c & 0x3 != 0 {
                return None;
            }
            out.push(((a << 2) | (b >> 4)) as u8);
            out.push(((b << 4) | (c >> 2)) as u8);
            break;
        }
        let d = b64_value(q[3]);
        if d < 0 {
            return None;
        }
        out.push(((a << 2) | (b >> 4)) as u8);
        out.push(((b << 4) | (c >> 2)) as u8);
        out.push(((c << 6) | d) as u8);
    }
    Some(out)
}

/// uudecoding (`unpack("u")`).
pub fn uu_decode(s: &[u8]) -> Vec<u8> {
    uu_decode_prefix(s).0
}

/// `uu_decode`, also returning how many bytes of `s` the decoded lines took.
pub fn uu_decode_prefix(s: &[u8]) -> (Vec<u8>, usize) {
    let n = s.len();
    let cap = n * 3 / 4;
    let mut out = Vec::with_capacity(cap);
    let mut i = 0;
    let mut total = 0usize;
    let uu = |c: u8| -> bool { (b' '..b'a').contains(&c) };
    while i < n && s[i] > b' ' && s[i] < b'a' {
        let mut len = ((s[i] - b' ') & 0o77) as usize;
        i += 1;
        total += len;
        if total > cap {
            len -= total - cap;
            total = cap;
        }
        while len > 0 {
            let mlen = len.min(3);
            let mut q = [0u8; 4];
            for slot in &mut q {
                if i < n && uu(s[i]) {
                    *slot = (s[i] - b' ') & 0o77;
                    i += 1;
                }
            }
            let hunk = [(q[0] << 2) | (q[1] >> 4), (q[1] << 4) | (q[2] >> 2), (q[2] << 6) | q[3]];
            out.extend_from_slice(&hunk[..mlen]);
            len -= mlen;
        }
        if i < n && s[i] != b'\r' && s[i] != b'\n' {
            i += 1;
        }
        if i < n && s[i] == b'\r' {
            i += 1;
        }
        if i < n && s[i] == b'\n' {
            i += 1;
        }
    }
    out.truncate(total);
    (out, i)
}

/// Quoted-printable encoding (`pack("M<count>")`), lines of at most `count` (72 when
/// `count` ≤ 1) characters.
pub fn qp_encode(out: &mut Vec<u8>, s: &[u8], count: usize) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let len = if count <= 1 { 72 } else { count };
    let mut n = 0usize;
    let mut prev: Option<u8> = None;
    for &c in s {
        if c > 126 || (c < 32 && c != b'\n' && c != b'\t') || c == b'=' {
            out.push(b'=');
            out.push(HEX[(c >> 4) as usize]);
            out.push(HEX[(c & 0xf) as usize]);
            n += 3;
            prev = None;
        } else if c == b'\n' {
            if prev == Some(b' ') || prev == Some(b'\t') {
                out.push(b'=');
                out.push(c);
            }
            out.push(c);
            n = 0;
            prev = Some(c);
        } else {
            out.push(c);
            n += 1;
            prev = Some(c);
        }
        if n > len {
            out.push(b'=');
            out.push(b'\n');
            n = 0;
            prev = Some(b'\n');
        }
    }
    if n > 0 {
        out.push(b'=');
        out.push(b'\n');
    }
}

/// Quoted-printable decoding (`unpack("M")`).
pub fn qp_decode(s: &[u8]) -> Vec<u8> {
    let hex = |c: u8| -> Option<u8> { (c as char).to_digit(16).map(|d| d as u8) };
    let n = s.len();
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    let mut tail = 0;
    while i < n {
        if s[i] == b'=' {
            i += 1;
            if i == n {
                break;
            }
            if i + 1 < n && s[i] == b'\r' && s[i + 1] == b'\n' {
                i += 1;
            }
            if s[i] != b'\n' {
                let Some(c1) = hex(s[i]) else { break };
                i += 1;
                if i == n {
                    break;
                }
                let Some(c2) = hex(s[i]) else { break };
                out.push((c1 << 4) | c2);
            }
        } else {
            out.push(s[i]);
        }
        i += 1;
        tail = i;
    }
    out.extend_from_slice(&s[tail.min(n)..]);
    out
}

/// BER-compressed integer (`pack("w")`) of a non-negative integer.
pub fn ber_encode(out: &mut Vec<u8>, n: &BigInt) {
    let (_, mut digits) = n.to_radix_le(128);
    if digits.is_empty() {
        digits.push(0);
    }
    let last = digits.len() - 1;
    for (k, d) in digits.iter().rev().enumerate() {
        out.push(if k < last { d | 0x80 } else { *d });
    }
}

/// Decodes one BER-compressed integer at the start of `b`: (value, bytes used), or `None`
/// when `b` ends before the integer does.
pub fn ber_decode(b: &[u8]) -> Option<(BigInt, usize)> {
    let end = b.iter().position(|&x| x & 0x80 == 0)?;
    let digits: Vec<u8> = b[..=end].iter().rev().map(|x| x & 0x7f).collect();
    Some((BigInt::from_radix_le(Sign::Plus, &digits, 128).unwrap_or_default(), end + 1))
}

/// Appends the UTF-8-style encoding of `cp` as `pack("U")` does (up to 6 bytes, 31 bits).
pub fn utf8_encode(out: &mut Vec<u8>, cp: u32) {
    if cp < 0x80 {
        out.push(cp as u8);
        return;
    }
    let (n, first) = match cp {
        0..=0x7ff => (2, 0xc0),
        0x800..=0xffff => (3, 0xe0),
        0x1_0000..=0x1f_ffff => (4, 0xf0),
        0x20_0000..=0x3ff_ffff => (5, 0xf8),
        _ => (6, 0xfc),
    };
    let mut buf = [0u8; 6];
    let mut v = cp;
    for k in (1..n).rev() {
        buf[k] = 0x80 | (v & 0x3f) as u8;
        v >>= 6;
    }
    buf[0] = first | v as u8;
    out.extend_from_slice(&buf[..n]);
}

fn grow(out: &mut Vec<u8>, n: usize) {
    out.resize(out.len() + n, 0);
}

/// Integer bits for integer directives (two's complement, wrapping like CRuby's pack).
fn int_bits(ctx: &mut Ctx, v: Value) -> Result<u64> {
    let i = integer::to_integer_arg(ctx, v)?;
    Ok(bignum::low_u64_any(i))
}

/// `ary.pack(fmt, buffer: nil)`.
pub fn array_pack(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut buffer = Value::NIL;
    if let Some(kw) = args.kw {
        let key = Value::symbol(ctx.intern("buffer"));
        for (k, v) in hash::pairs(kw) {
            if k == key {
                buffer = v;
            } else {
                let s = object::inspect_string(ctx, k)?;
                return Err(ctx.arg_error(&format!("unknown keyword: {s}")));
            }
        }
    }
    if !buffer.is_nil() && !string::is_string(buffer) {
        let cname = object::class_name_of(ctx, buffer);
        return Err(ctx.type_error(&format!("buffer must be String, not {cname}")));
    }
    let fmt = string::to_str_arg(ctx, args.pos[0])?;
    let fmt_bytes = string::bytes(fmt).to_vec();
    let dirs = parse_template(ctx, &fmt_bytes, "pack")?;
    if !buffer.is_nil() {
        ctx.check_frozen(buffer)?;
    }
    let mut out: Vec<u8> = if buffer.is_nil() { Vec::new() } else { string::bytes(buffer).to_vec() };
    let associates = array::new(ctx);
    // 1: US-ASCII so far, 2: UTF-8 (`U` first), 0: binary.
    let mut enc_info = 1u8;
    let mut idx = 0usize;
    for d in &dirs {
        match d.kind {
            b'U' => {
                if enc_info == 1 {
                    enc_info = 2;
                }
            }
            b'm' | b'M' | b'u' => {}
            _ => enc_info = 0,
        }
        // Directives whose count is a size in bytes (or bits, digits): the room is reserved
        // fallibly, so a huge count is a NoMemoryError rather than an aborted allocation.
        if let Count::N(n) = d.count {
            let grows = match d.kind {
                b'x' | b'a' | b'A' | b'Z' => n,
                b'@' => n.saturating_sub(out.len()),
                b'b' | b'B' => n / 8,
                b'h' | b'H' => n / 2,
                _ => 0,
            };
            ctx.try_reserve(&mut out, grows)?;
        }
        let remaining = array::len(recv).saturating_sub(idx);
        let mut next_item = |ctx: &mut Ctx| -> Result<Value> {
            if idx < array::len(recv) {
                idx += 1;
                Ok(array::get(recv, idx - 1))
            } else {
                Err(ctx.arg_error("too few arguments"))
            }
        };
        match d.kind {
            b'a' | b'A' | b'Z' | b'b' | b'B' | b'h' | b'H' => {
                let from = next_item(ctx)?;
                let data: Vec<u8> = if from.is_nil() {
                    Vec::new()
                } else {
                    let s = string::to_str_arg(ctx, from)?;
                    string::bytes(s).to_vec()
                };
                pack_string_like(&mut out, d, &data);
            }
            b'c' | b'C' | b's' | b'S' | b'i' | b'I' | b'l' | b'L' | b'q' | b'Q' | b'j' | b'J' | b'n' | b'N' | b'v' | b'V' => {
                let layout = int_layout(d).expect("integer directive");
                let n = match d.count {
                    Count::Star => remaining,
                    Count::N(n) => n,
                };
                for _ in 0..n {
                    let v = next_item(ctx)?;
                    let bits = int_bits(ctx, v)?;
                    encode_int(&mut out, bits, layout);
                }
            }
            b'd' | b'D' | b'f' | b'F' | b'e' | b'E' | b'g' | b'G' => {
                let (size, big) = float_layout(d).expect("float directive");
                let n = match d.count {
                    Count::Star => remaining,
                    Count::N(n) => n,
                };
                for _ in 0..n {
                    let v = next_item(ctx)?;
                    let f = if float::is_float(v) { float::get(v) } else { numeric::to_f64(ctx, v)? };
                    if size == 8 {
                        let b = if big { f.to_be_bytes() } else { f.to_le_bytes() };
                        out.extend_from_slice(&b);
                    } else {
                        let g = f as f32;
                        let b = if big { g.to_be_bytes() } else { g.to_le_bytes() };
                        out.extend_from_slice(&b);
                    }
                }
            }
            b'U' => {
                let n = match d.count {
                    Count::Star => remaining,
                    Count::N(n) => n,
                };
                for _ in 0..n {
                    let v = next_item(ctx)?;
                    let i = integer::to_integer_arg(ctx, v)?;
                    let l = match i.as_fixnum() {
                        Some(l) => l,
                        None => return Err(ctx.range_error("pack(U): value out of range")),
                    };
                    if !(0..=0x7fff_ffff).contains(&l) {
                        return Err(ctx.range_error("pack(U): value out of range"));
                    }
                    utf8_encode(&mut out, l as u32);
                }
            }
            b'w' => {
                let n = match d.count {
                    Count::Star => remaining,
                    Count::N(n) => n,
                };
                for _ in 0..n {
                    let v = next_item(ctx)?;
                    let i = integer::to_integer_arg(ctx, v)?;
                    let big = bignum::to_big(i);
                    if big.sign() == Sign::Minus {
                        return Err(ctx.arg_error("can't compress negative numbers"));
                    }
                    ber_encode(&mut out, &big);
                }
            }
            b'm' | b'u' => {
                let from = next_item(ctx)?;
                let s = string::to_str_arg(ctx, from)?;
                let data = string::bytes(s).to_vec();
                let count = match d.count {
                    Count::Star => 1,
                    Count::N(n) => n,
                };
                if d.kind == b'm' {
                    b64_encode(&mut out, &data, count);
                } else {
                    uu_encode(&mut out, &data, count);
                }
            }
            b'M' => {
                let from = next_item(ctx)?;
                let s = if string::is_string(from) { from } else { string::to_s(ctx, from)? };
                let data = string::bytes(s).to_vec();
                let count = match d.count {
                    Count::Star => 1,
                    Count::N(n) => n,
                };
                qp_encode(&mut out, &data, count);
            }
            b'x' => {
                if let Count::N(n) = d.count {
                    grow(&mut out, n);
                }
            }
            b'X' => {
                if let Count::N(n) = d.count {
                    if out.len() < n {
                        return Err(ctx.arg_error("X outside of string"));
                    }
                    out.truncate(out.len() - n);
                }
            }
            b'@' => {
                let pos = match d.count {
                    Count::Star => 0,
                    Count::N(n) => n,
                };
                if pos > out.len() {
                    let extra = pos - out.len();
                    grow(&mut out, extra);
                } else {
                    out.truncate(pos);
                }
            }
            b'p' | b'P' => {
                // A pointer to the string's bytes; the string is remembered on the result
                // (CRuby's "associates") so that unpack can map the pointer back safely.
                let n = match (d.kind, d.count) {
                    (b'P', _) => 1,
                    (_, Count::Star) => remaining,
                    (_, Count::N(n)) => n,
                };
                for _ in 0..n {
                    let from = next_item(ctx)?;
                    let addr = if from.is_nil() {
                        0u64
                    } else {
                        let s = string::to_str_arg(ctx, from)?;
                        array::push(ctx, associates, s);
                        string::bytes(s).as_ptr() as u64
                    };
                    out.extend_from_slice(&addr.to_ne_bytes());
                }
            }
            _ => unreachable!("parse_template accepts only known directives"),
        }
    }
    let enc = match enc_info {
        1 => crate::core::encoding::US_ASCII,
        2 => crate::core::encoding::UTF_8,
        _ => crate::core::encoding::BINARY,
    };
    let result = if buffer.is_nil() {
        string::new_with_enc(ctx, out, enc)
    } else {
        string::set_bytes(buffer, out);
        if enc_info != 0 {
            string::set_encoding(buffer, enc);
        }
        buffer
    };
    if array::len(associates) > 0 {
        let id = ctx.intern(ASSOCIATES);
        let prev = object::ivar_get(ctx, result, id);
        if array::is_array(prev) {
            let mut i = 0;
            while i < array::len(prev) {
                array::push(ctx, associates, array::get(prev, i));
                i += 1;
            }
        }
        object::ivar_set_raw(ctx, result, id, associates);
    }
    Ok(result)
}

/// The hidden instance variable listing the strings `p`/`P` pointers of a packed String
/// refer to.
pub const ASSOCIATES: &str = "__pack_associates__";

/// For `unpack("p")`/`unpack("P")`: the String that pointer `addr` in `packed` was made
/// from, or `None` when `packed` carries no such pointer (CRuby's "no associated pointer").
pub fn associated_string(ctx: &mut Ctx, packed: Value, addr: u64) -> Option<Value> {
    let id = ctx.intern(ASSOCIATES);
    let list = object::ivar_get(ctx, packed, id);
    if !array::is_array(list) {
        return None;
    }
    (0..array::len(list)).map(|i| array::get(list, i)).find(|&s| string::is_string(s) && string::bytes(s).as_ptr() as u64 == addr)
}

/// `a A Z b B h H` for one string argument, following CRuby's padding rules.
fn pack_string_like(out: &mut Vec<u8>, d: &Directive, data: &[u8]) {
    let plen = data.len();
    let star = d.count == Count::Star;
    let mut len = match d.count {
        Count::Star => plen,
        Count::N(n) => n,
    };
    match d.kind {
        b'a' | b'A' | b'Z' => {
            if plen >= len {
                out.extend_from_slice(&data[..len]);
                if star && d.kind == b'Z' {
                    out.push(0);
                }
            } else {
                out.extend_from_slice(data);
                let pad = if d.kind == b'A' { b' ' } else { 0 };
                out.resize(out.len() + (len - plen), pad);
            }
        }
        b'b' | b'B' => {
            let mut extra = 0;
            if len > plen {
                extra = (len - plen).div_ceil(2);
                len = plen;
            }
            let mut byte: u32 = 0;
            for (i, &c) in data[..len].iter().enumerate() {
                let i = i + 1;
                if d.kind == b'b' {
                    if c & 1 != 0 {
                        byte |= 128;
                    }
                    if i & 7 != 0 {
                        byte >>= 1;
                    } else {
                        out.push(byte as u8);
                        byte = 0;
                    }
                } else {
                    byte |= (c & 1) as u32;
                    if i & 7 != 0 {
                        byte <<= 1;
                    } else {
                        out.push(byte as u8);
                        byte = 0;
                    }
                }
            }
            if len & 7 != 0 {
                if d.kind == b'b' {
                    byte >>= 7 - (len & 7);
                } else {
                    byte <<= 7 - (len & 7);
                }
                out.push(byte as u8);
            }
            grow(out, extra);
        }
        _ => {
            let mut extra = 0;
            if len > plen {
                extra = (len + 1) / 2 - (plen + 1) / 2;
                len = plen;
            }
            let mut byte: u32 = 0;
            for (i, &c) in data[..len].iter().enumerate() {
                let i = i + 1;
                let nib = if c.is_ascii_alphabetic() { ((c & 15) as u32 + 9) & 15 } else { (c & 15) as u32 };
                if d.kind == b'h' {
                    byte |= nib << 4;
                    if i & 1 != 0 {
                        byte >>= 4;
                    } else {
                        out.push(byte as u8);
                        byte = 0;
                    }
                } else {
                    byte |= nib;
                    if i & 1 != 0 {
                        byte <<= 4;
                    } else {
                        out.push(byte as u8);
                        byte = 0;
                    }
                }
            }
            if len & 1 != 0 {
                out.push(byte as u8);
            }
            grow(out, extra);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        let mut out = Vec::new();
        b64_encode(&mut out, b"abc", 1);
        assert_eq!(out, b"YWJj\n");
        out.clear();
        b64_encode(&mut out, b"ab", 0);
        assert_eq!(out, b"YWI=");
        assert_eq!(b64_decode(b"YWJj\nYWI="), b"abcab");
        assert_eq!(b64_decode(b"Y W\nJj"), b"abc");
        assert_eq!(b64_decode_strict(b"YWI="), Some(b"ab".to_vec()));
        assert_eq!(b64_decode_strict(b"YQ=="), Some(b"a".to_vec()));
        assert_eq!(b64_decode_strict(b"YWJj\n"), None);
        assert_eq!(b64_decode_strict(b"YR=="), None);
        assert_eq!(b64_decode_prefix(b"YWI=abc"), (b"ab".to_vec(), 3));
        assert_eq!(b64_decode_prefix(b"YWJj"), (b"abc".to_vec(), 4));
    }

    #[test]
    fn uu_and_qp() {
        let mut out = Vec::new();
        uu_encode(&mut out, b"a", 1);
        assert_eq!(out, b"!80``\n");
        assert_eq!(uu_decode(b"!80``\n"), b"a");
        assert_eq!(uu_decode_prefix(b"#86)C\nabc"), (b"abc".to_vec(), 6));
        out.clear();
        qp_encode(&mut out, "h\u{e9}llo = x \n".as_bytes(), 1);
        assert_eq!(out, b"h=C3=A9llo =3D x =\n\n");
        assert_eq!(qp_decode(b"h=C3=A9llo =3D x =\n\n"), "h\u{e9}llo = x \n".as_bytes());
    }

    #[test]
    fn ber_and_utf8() {
        let mut out = Vec::new();
        ber_encode(&mut out, &BigInt::from(300));
        assert_eq!(out, b"\x82,");
        assert_eq!(ber_decode(b"\x82,rest"), Some((BigInt::from(300), 2)));
        assert_eq!(ber_decode(b"\x82"), None);
        out.clear();
        utf8_encode(&mut out, 0x20ac);
        assert_eq!(out, "\u{20ac}".as_bytes());
    }

    #[test]
    fn integer_layouts() {
        let d = Directive { kind: b's', count: Count::N(1), native: false, endian: b'>' };
        let l = int_layout(&d).unwrap();
        let mut out = Vec::new();
        encode_int(&mut out, (-2i64) as u64, l);
        assert_eq!(out, [0xff, 0xfe]);
        assert_eq!(decode_int(&out, l), -2);
        let d = Directive { kind: b'L', count: Count::N(1), native: true, endian: 0 };
        assert_eq!(int_layout(&d).unwrap().size, 8);
    }
}
