//! `String#unpack` / `#unpack1`: CRuby's template directives decoded over a byte string.
//!
//! Note: this module parses templates itself because the shared pack/unpack template code
//! (`pack.rs`, written for `Array#pack`) was not on main when String#unpack was needed;
//! once it is, the directive parser and the base64/uu/quoted-printable/BER decoders here
//! should be replaced by the shared ones.
//!
//! Invariants: the subject's bytes are copied before decoding (a block may run between
//! results); results are collected in a Ruby Array as they are made.

use num_bigint::BigInt;

use crate::core::encoding::{BINARY, US_ASCII};
use crate::core::{array, bignum, float, integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Count {
    One,
    N(usize),
    Star,
}

#[derive(Clone, Copy, Debug)]
struct Directive {
    kind: u8,
    count: Count,
    native: bool,
    endian: u8,
}

fn parse(ctx: &mut Ctx, fmt: &[u8]) -> Result<Vec<Directive>> {
    let mut out = Vec::new();
    let mut p = 0;
    while p < fmt.len() {
        let kind = fmt[p];
        p += 1;
        if kind.is_ascii_whitespace() || kind == 0 {
            continue;
        }
        if kind == b'#' {
            while p < fmt.len() && fmt[p] != b'\n' {
                p += 1;
            }
            continue;
        }
        if !b"aAZbBhHcCsSiIlLqQjJnNvVUwdDfFeEgGmMuxX@pP".contains(&kind) {
            let shown = String::from_utf8_lossy(fmt).into_owned();
            return Err(ctx.arg_error(&format!("unknown unpack directive '{}' in '{shown}'", kind as char)));
        }
        let mut native = false;
        let mut endian = 0u8;
        while p < fmt.len() {
            match fmt[p] {
                m @ (b'_' | b'!') => {
                    if !b"sSiIlLqQjJ".contains(&kind) {
                        return Err(ctx.arg_error(&format!("'{}' allowed only after types sSiIlLqQjJ", m as char)));
                    }
                    native = true;
                }
                m @ (b'<' | b'>') => {
                    if !b"sSiIlLqQjJ".contains(&kind) {
                        return Err(ctx.arg_error(&format!("'{}' allowed only after types sSiIlLqQjJ", m as char)));
                    }
                    endian = m;
                }
                _ => break,
            }
            p += 1;
        }
        let count = if fmt.get(p) == Some(&b'*') {
            p += 1;
            Count::Star
        } else if fmt.get(p).is_some_and(u8::is_ascii_digit) {
            let s = p;
            while p < fmt.len() && fmt[p].is_ascii_digit() {
                p += 1;
            }
            Count::N(std::str::from_utf8(&fmt[s..p]).ok().and_then(|t| t.parse().ok()).unwrap_or(usize::MAX))
        } else {
            Count::One
        };
        out.push(Directive { kind, count, native, endian });
    }
    Ok(out)
}

/// (size, signed, big-endian) of an integer directive.
fn int_layout(d: &Directive) -> Option<(usize, bool, bool)> {
    let be = d.endian == b'>';
    Some(match d.kind {
        b'c' => (1, true, false),
        b'C' => (1, false, false),
        b's' => (2, true, be),
        b'S' => (2, false, be),
        b'i' => (4, true, be),
        b'I' => (4, false, be),
        b'l' => (if d.native { 8 } else { 4 }, true, be),
        b'L' => (if d.native { 8 } else { 4 }, false, be),
        b'q' | b'j' => (8, true, be),
        b'Q' | b'J' => (8, false, be),
        b'n' => (2, false, true),
        b'N' => (4, false, true),
        b'v' => (2, false, false),
        b'V' => (4, false, false),
        _ => return None,
    })
}

fn b64_value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => (c - b'A') as u32,
        b'a'..=b'z' => (c - b'a' + 26) as u32,
        b'0'..=b'9' => (c - b'0' + 52) as u32,
        b'+' | b'-' => 62,
        b'/' | b'_' => 63,
        _ => return None,
    })
}

fn b64_decode(s: &[u8], strict: bool) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    let mut pad = 0;
    for (i, &c) in s.iter().enumerate() {
        if c == b'=' {
            if strict {
                // Padding only at the end, completing the last quantum.
                if s[i..].iter().any(|&x| x != b'=') || s.len() % 4 != 0 {
                    return None;
                }
                pad += 1;
                continue;
            }
            break;
        }
        match b64_value(c) {
            Some(v) if !(strict && (c == b'-' || c == b'_')) => {
                acc = (acc << 6) | v;
                bits += 6;
                if bits >= 8 {
                    bits -= 8;
                    out.push((acc >> bits) as u8);
                }
            }
            _ => {
                if strict {
                    return None;
                }
            }
        }
    }
    if strict {
        if (s.len() - pad) % 4 == 1 || (pad > 0 && bits > 0 && acc & ((1 << bits) - 1) != 0) || (pad == 0 && s.len() % 4 != 0) {
            return None;
        }
        if bits > 0 && acc & ((1 << bits) - 1) != 0 {
            return None;
        }
    }
    Some(out)
}

fn uu_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in s.split(|&c| c == b'\n') {
        if line.is_empty() {
            continue;
        }
        let n = ((line[0].wrapping_sub(b' ')) & 0x3f) as usize;
        if n == 0 {
            continue;
        }
        let data: Vec<u8> = line[1..].iter().map(|&c| (c.wrapping_sub(b' ')) & 0x3f).collect();
        let mut bytes = Vec::new();
        for chunk in data.chunks(4) {
            let g = |i: usize| *chunk.get(i).unwrap_or(&0) as u32;
            let v = (g(0) << 18) | (g(1) << 12) | (g(2) << 6) | g(3);
            bytes.extend_from_slice(&[(v >> 16) as u8, (v >> 8) as u8, v as u8]);
        }
        bytes.truncate(n);
        out.extend_from_slice(&bytes);
    }
    out
}

fn qp_decode(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    let hex = |c: u8| (c as char).to_digit(16);
    while i < s.len() {
        if s[i] == b'=' {
            if s.get(i + 1) == Some(&b'\n') {
                i += 2;
                continue;
            }
            if s.get(i + 1) == Some(&b'\r') && s.get(i + 2) == Some(&b'\n') {
                i += 3;
                continue;
            }
            if let (Some(a), Some(b)) = (s.get(i + 1).and_then(|&c| hex(c)), s.get(i + 2).and_then(|&c| hex(c))) {
                out.push((a * 16 + b) as u8);
                i += 3;
                continue;
            }
        }
        out.push(s[i]);
        i += 1;
    }
    out
}

/// Decodes one UTF-8 character for `U` (CRuby's `utf8_to_uv` errors).
fn utf8_char(ctx: &mut Ctx, b: &[u8]) -> Result<(u32, usize)> {
    let c = b[0];
    if c < 0x80 {
        return Ok((c as u32, 1));
    }
    let (n, init) = match c {
        0xc0..=0xdf => (2, (c & 0x1f) as u32),
        0xe0..=0xef => (3, (c & 0x0f) as u32),
        0xf0..=0xf7 => (4, (c & 0x07) as u32),
        0xf8..=0xfb => (5, (c & 0x03) as u32),
        0xfc..=0xfd => (6, (c & 0x01) as u32),
        _ => return Err(ctx.arg_error("malformed UTF-8 character")),
    };
    if b.len() < n {
        return Err(ctx.arg_error(&format!("malformed UTF-8 character (expected {n} bytes, given {} bytes)", b.len())));
    }
    let mut v = init;
    for &cc in &b[1..n] {
        if cc & 0xc0 != 0x80 {
            return Err(ctx.arg_error("malformed UTF-8 character"));
        }
        v = (v << 6) | (cc & 0x3f) as u32;
    }
    let min = [0, 0, 0x80, 0x800, 0x10000, 0x200000, 0x4000000][n];
    if v < min {
        return Err(ctx.arg_error("redundant UTF-8 sequence"));
    }
    Ok((v, n))
}

/// Unpacks `b` from byte `offset` with template `fmt`, pushing results into a new Array.
fn unpack_bytes(ctx: &mut Ctx, b: &[u8], fmt: &[u8], offset: usize, single: bool) -> Result<Value> {
    let dirs = parse(ctx, fmt)?;
    let out = array::new(ctx);
    let mut p = offset;
    let push = |ctx: &mut Ctx, v: Value| array::push(ctx, out, v);
    for d in dirs {
        if single && array::len(out) > 0 {
            break;
        }
        let rest = b.len().saturating_sub(p);
        let n = match d.count {
            Count::One => 1,
            Count::N(n) => n,
            Count::Star => usize::MAX,
        };
        match d.kind {
            b'a' | b'A' | b'Z' => {
                let len = if d.count == Count::Star { rest } else { n.min(rest) };
                let mut piece = &b[p..p + len];
                let mut adv = len;
                match d.kind {
                    b'A' => {
                        let mut e = piece.len();
                        while e > 0 && (piece[e - 1] == b' ' || piece[e - 1] == 0) {
                            e -= 1;
                        }
                        piece = &piece[..e];
                    }
                    b'Z' => {
                        if let Some(z) = piece.iter().position(|&c| c == 0) {
                            piece = &piece[..z];
                            if d.count == Count::Star {
                                adv = z + 1;
                            }
                        }
                    }
                    _ => {}
                }
                let v = string::new_with_enc(ctx, piece.to_vec(), BINARY);
                push(ctx, v);
                p += adv;
            }
            b'b' | b'B' => {
                let bits = if d.count == Count::Star { rest * 8 } else { n.min(rest * 8) };
                let mut s = Vec::with_capacity(bits);
                for i in 0..bits {
                    let byte = b[p + i / 8];
                    let bit = if d.kind == b'b' { (byte >> (i % 8)) & 1 } else { (byte >> (7 - i % 8)) & 1 };
                    s.push(b'0' + bit);
                }
                let v = string::new_with_enc(ctx, s, US_ASCII);
                push(ctx, v);
                p += bits.div_ceil(8);
            }
            b'h' | b'H' => {
                let nibbles = if d.count == Count::Star { rest * 2 } else { n.min(rest * 2) };
                let mut s = Vec::with_capacity(nibbles);
                for i in 0..nibbles {
                    let byte = b[p + i / 2];
                    let nib = if (d.kind == b'h') == (i % 2 == 0) { byte & 0xf } else { byte >> 4 };
                    s.push(b"0123456789abcdef"[nib as usize]);
                }
                let v = string::new_with_enc(ctx, s, US_ASCII);
                push(ctx, v);
                p += nibbles.div_ceil(2);
            }
            b'U' => {
                let mut k = 0;
                while k < n && p < b.len() {
                    let (cp, len) = utf8_char(ctx, &b[p..])?;
                    push(ctx, Value::fixnum(cp as i64));
                    p += len;
                    k += 1;
                }
            }
            b'w' => {
                let mut k = 0;
                while k < n && p < b.len() {
                    let mut v = BigInt::from(0);
                    let mut done = false;
                    while p < b.len() {
                        let c = b[p];
                        p += 1;
                        v = (v << 7) | BigInt::from(c & 0x7f);
                        if c & 0x80 == 0 {
                            done = true;
                            break;
                        }
                    }
                    if !done {
                        break;
                    }
                    let iv = bignum::normalize(ctx, v);
                    push(ctx, iv);
                    k += 1;
                }
            }
            b'd' | b'D' | b'E' | b'G' | b'f' | b'F' | b'e' | b'g' => {
                let size = if matches!(d.kind, b'd' | b'D' | b'E' | b'G') { 8 } else { 4 };
                let be = matches!(d.kind, b'G' | b'g');
                let items = if d.count == Count::Star { rest / size } else { n };
                for _ in 0..items {
                    if b.len().saturating_sub(p) < size {
                        push(ctx, Value::NIL);
                        continue;
                    }
                    let chunk = &b[p..p + size];
                    let f = if size == 8 {
                        let a: [u8; 8] = chunk.try_into().unwrap_or([0; 8]);
                        if be {
                            f64::from_be_bytes(a)
                        } else {
                            f64::from_le_bytes(a)
                        }
                    } else {
                        let a: [u8; 4] = chunk.try_into().unwrap_or([0; 4]);
                        (if be { f32::from_be_bytes(a) } else { f32::from_le_bytes(a) }) as f64
                    };
                    let v = float::new(ctx, f);
                    push(ctx, v);
                    p += size;
                }
            }
            b'm' => {
                let strict = d.count == Count::N(0);
                match b64_decode(&b[p..], strict) {
                    Some(v) => {
                        let s = string::new_with_enc(ctx, v, BINARY);
                        push(ctx, s);
                    }
                    None => return Err(ctx.arg_error("invalid base64")),
                }
                p = b.len();
            }
            b'M' => {
                let v = qp_decode(&b[p..]);
                let s = string::new_with_enc(ctx, v, BINARY);
                push(ctx, s);
                p = b.len();
            }
            b'u' => {
                let v = uu_decode(&b[p..]);
                let s = string::new_with_enc(ctx, v, BINARY);
                push(ctx, s);
                p = b.len();
            }
            b'x' => {
                let k = if d.count == Count::Star { 0 } else { n };
                if k > rest {
                    return Err(ctx.arg_error("x outside of string"));
                }
                p += k;
            }
            b'X' => {
                let k = if d.count == Count::Star { 0 } else { n };
                if k > p - offset.min(p) && k > p {
                    return Err(ctx.arg_error("X outside of string"));
                }
                if k > p {
                    return Err(ctx.arg_error("X outside of string"));
                }
                p -= k;
            }
            b'@' => {
                let k = match d.count {
                    Count::One => 0,
                    Count::N(k) => k,
                    Count::Star => rest,
                };
                let target = offset.saturating_add(k);
                if target > b.len() {
                    return Err(ctx.arg_error("@ outside of string"));
                }
                p = target;
            }
            b'p' | b'P' => {
                let items = if d.count == Count::Star { rest / 8 } else { n.min(if d.kind == b'P' { 1 } else { usize::MAX }) };
                for _ in 0..items {
                    if b.len().saturating_sub(p) < 8 {
                        break;
                    }
                    push(ctx, Value::NIL);
                    p += 8;
                }
            }
            _ => {
                let Some((size, signed, be)) = int_layout(&d) else { continue };
                let items = if d.count == Count::Star { rest / size } else { n };
                for _ in 0..items {
                    if b.len().saturating_sub(p) < size {
                        if d.count == Count::Star {
                            break;
                        }
                        push(ctx, Value::NIL);
                        continue;
                    }
                    let mut raw: u64 = 0;
                    for k in 0..size {
                        let byte = if be { b[p + k] } else { b[p + size - 1 - k] };
                        raw = (raw << 8) | byte as u64;
                    }
                    let v: i128 = if signed {
                        let shift = 64 - size * 8;
                        (((raw << shift) as i64) >> shift) as i128
                    } else {
                        raw as i128
                    };
                    let iv = bignum::from_i128(ctx, v);
                    push(ctx, iv);
                    p += size;
                }
            }
        }
    }
    Ok(out)
}

fn offset_arg(ctx: &mut Ctx, args: &Args, len: usize) -> Result<usize> {
    match args.kwarg(ctx, "offset") {
        Some(o) => {
            let o = integer::to_i64_arg(ctx, o)?;
            if o < 0 || o as usize > len {
                return Err(ctx.arg_error("offset outside of string"));
            }
            Ok(o as usize)
        }
        None => Ok(0),
    }
}

fn unpack(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fmt = string::to_str_arg(ctx, args.pos[0])?;
    let fb = string::bytes(fmt).to_vec();
    let b = string::bytes(recv).to_vec();
    let off = offset_arg(ctx, args, b.len())?;
    let out = unpack_bytes(ctx, &b, &fb, off, false)?;
    if let Some(blk) = args.block {
        let mut i = 0;
        while i < array::len(out) {
            let v = array::get(out, i);
            ctx.yield1(&blk, v)?;
            i += 1;
        }
        return Ok(Value::NIL);
    }
    Ok(out)
}

fn unpack1(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fmt = string::to_str_arg(ctx, args.pos[0])?;
    let fb = string::bytes(fmt).to_vec();
    let b = string::bytes(recv).to_vec();
    let off = offset_arg(ctx, args, b.len())?;
    let out = unpack_bytes(ctx, &b, &fb, off, true)?;
    Ok(if array::len(out) > 0 { array::get(out, 0) } else { Value::NIL })
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("unpack", unpack, [1], Unsafe, Kw),
        ("unpack1", unpack1, [1], Safe, Kw),
    ]);
}

#[cfg(test)]
mod tests {
    use super::{b64_decode, qp_decode, uu_decode};

    #[test]
    fn codecs() {
        assert_eq!(b64_decode(b"aGVsbG8=", false).unwrap(), b"hello");
        assert_eq!(b64_decode(b"aGVsbG8", false).unwrap(), b"hello");
        assert!(b64_decode(b"aGVsbG8", true).is_none());
        assert_eq!(b64_decode(b"aGVsbG8=", true).unwrap(), b"hello");
        assert_eq!(qp_decode(b"=41=\nb"), b"Ab");
        assert_eq!(uu_decode(b"#86)C\n"), b"abc");
    }
}
