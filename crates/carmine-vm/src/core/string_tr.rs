//! Character sets and transliteration: `String#tr`, `#tr_s`, `#delete`, `#squeeze`,
//! `#count` (and bang forms).
//!
//! Invariants:
//! - Sets are lists of inclusive codepoint ranges (never expanded, so `"\0-\u{10FFFF}"`
//!   costs nothing); `^` at the start of a spec longer than one character negates it and
//!   `\` escapes the next character.
//! - In `tr`, a character listed twice in the source maps to the target of its *last*
//!   occurrence; a short target repeats its last character (CRuby's rules).
//! - Strings are walked per character; a string invalid in its encoding raises
//!   `ArgumentError: invalid byte sequence in <enc>`.

use crate::core::encoding;
use crate::core::string::{self, bytes, encoding, modify, new_with_enc, to_str_arg};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A parsed set specification.
struct Spec {
    negated: bool,
    ranges: Vec<(u32, u32)>,
}

impl Spec {
    fn contains(&self, c: u32) -> bool {
        self.ranges.iter().any(|&(a, b)| a <= c && c <= b) != self.negated
    }

    /// Total number of characters listed (for positional mapping).
    fn count(&self) -> u64 {
        self.ranges.iter().map(|&(a, b)| (b - a) as u64 + 1).sum()
    }

    /// Position of the last listing of `c`.
    fn last_index(&self, c: u32) -> Option<u64> {
        let mut base = self.count();
        for &(a, b) in self.ranges.iter().rev() {
            base -= (b - a) as u64 + 1;
            if a <= c && c <= b {
                return Some(base + (c - a) as u64);
            }
        }
        None
    }

    /// The character at position `k` (the last one when `k` is past the end).
    fn at(&self, k: u64) -> Option<u32> {
        let mut base = 0u64;
        for &(a, b) in &self.ranges {
            let n = (b - a) as u64 + 1;
            if k < base + n {
                return Some(a + (k - base) as u32);
            }
            base += n;
        }
        self.ranges.last().map(|&(_, b)| b)
    }
}

/// Decodes `v` into codepoints, raising for invalid bytes.
fn codepoints(ctx: &mut Ctx, v: Value) -> Result<Vec<u32>> {
    let enc = encoding(v);
    let b = bytes(v);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if encoding::precise_char_len(enc, b, i).is_err() {
            return Err(ctx.arg_error(&format!("invalid byte sequence in {}", encoding::name(enc))));
        }
        let (cp, n) = encoding::codepoint_at(enc, b, i);
        out.push(cp);
        i += n;
    }
    Ok(out)
}

fn parse_spec(ctx: &mut Ctx, v: Value, allow_negation: bool) -> Result<Spec> {
    let chars = codepoints(ctx, v)?;
    let (negated, chars) = if allow_negation && chars.len() > 1 && chars[0] == '^' as u32 { (true, &chars[1..]) } else { (false, &chars[..]) };
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let mut c = chars[i];
        if c == '\\' as u32 && i + 1 < chars.len() {
            i += 1;
            c = chars[i];
            ranges.push((c, c));
            i += 1;
            continue;
        }
        if i + 2 < chars.len() && chars[i + 1] == '-' as u32 {
            let mut end = chars[i + 2];
            let mut used = 3;
            if end == '\\' as u32 && i + 3 < chars.len() {
                end = chars[i + 3];
                used = 4;
            }
            if end < c {
                let to_s = |x: u32| char::from_u32(x).map(String::from).unwrap_or_default();
                let msg = format!("invalid range \"{}-{}\" in string transliteration", to_s(c), to_s(end));
                return Err(ctx.arg_error(&msg));
            }
            ranges.push((c, end));
            i += used;
            continue;
        }
        ranges.push((c, c));
        i += 1;
    }
    Ok(Spec { negated, ranges })
}

fn encode_all(ctx: &mut Ctx, enc: u8, cps: &[u32]) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(cps.len());
    for &c in cps {
        match encoding::encode_codepoint(enc, c) {
            Some(b) => out.extend_from_slice(&b),
            None => return Err(ctx.range_error(&format!("{c} out of char range"))),
        }
    }
    Ok(out)
}

/// `tr`/`tr_s`: the translated content and its encoding.
fn translate(ctx: &mut Ctx, recv: Value, args: &Args, squeeze: bool) -> Result<(Vec<u8>, u8)> {
    let from = to_str_arg(ctx, args.pos[0])?;
    let to = to_str_arg(ctx, args.pos[1])?;
    let mut enc = string::check_compatible(ctx, recv, from)?;
    if string::len(to) > 0 {
        let tmp = new_with_enc(ctx, Vec::new(), enc);
        string::append(tmp, bytes(recv));
        enc = string::check_compatible(ctx, tmp, to)?;
    }
    let fs = parse_spec(ctx, from, true)?;
    let ts = parse_spec(ctx, to, false)?;
    let src = codepoints(ctx, recv)?;
    let delete = ts.ranges.is_empty();
    let last_to = ts.at(u64::MAX);
    let mut out = Vec::with_capacity(src.len());
    let mut last: Option<u32> = None;
    for c in src {
        let mapped = if fs.negated {
            if fs.contains(c) {
                // Negated spec: listed characters are the ones *not* translated.
                last_to
            } else {
                None
            }
        } else {
            fs.last_index(c).map(|k| ts.at(k).unwrap_or(c))
        };
        match mapped {
            Some(_) if delete => last = None,
            Some(m) => {
                if squeeze && last == Some(m) {
                    continue;
                }
                out.push(m);
                last = Some(m);
            }
            None => {
                out.push(c);
                last = None;
            }
        }
    }
    Ok((encode_all(ctx, enc, &out)?, enc))
}

fn tr(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (out, enc) = translate(ctx, recv, args, false)?;
    Ok(new_with_enc(ctx, out, enc))
}

fn tr_s(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (out, enc) = translate(ctx, recv, args, true)?;
    Ok(new_with_enc(ctx, out, enc))
}

fn apply_bang(ctx: &mut Ctx, recv: Value, out: Vec<u8>, enc: u8) -> Result<Value> {
    modify(ctx, recv)?;
    if out == bytes(recv) {
        return Ok(Value::NIL);
    }
    string::set_bytes(recv, out);
    string::set_encoding(recv, enc);
    Ok(recv)
}

fn tr_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let (out, enc) = translate(ctx, recv, args, false)?;
    apply_bang(ctx, recv, out, enc)
}

fn tr_s_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let (out, enc) = translate(ctx, recv, args, true)?;
    apply_bang(ctx, recv, out, enc)
}

/// The intersection of the sets given as arguments (at least one is required).
fn set_args(ctx: &mut Ctx, recv: Value, args: &[Value]) -> Result<Vec<Spec>> {
    let mut specs = Vec::with_capacity(args.len());
    for &a in args {
        let s = to_str_arg(ctx, a)?;
        string::check_compatible(ctx, recv, s)?;
        specs.push(parse_spec(ctx, s, true)?);
    }
    Ok(specs)
}

fn in_all(specs: &[Spec], c: u32) -> bool {
    specs.iter().all(|s| s.contains(c))
}

fn deleted(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Vec<u8>> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    let specs = set_args(ctx, recv, args.pos)?;
    let src = codepoints(ctx, recv)?;
    let kept: Vec<u32> = src.into_iter().filter(|&c| !in_all(&specs, c)).collect();
    encode_all(ctx, encoding(recv), &kept)
}

fn delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = deleted(ctx, recv, args)?;
    Ok(string::new_like(ctx, recv, out))
}

fn delete_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let out = deleted(ctx, recv, args)?;
    let enc = encoding(recv);
    apply_bang(ctx, recv, out, enc)
}

fn squeezed(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Vec<u8>> {
    let specs = set_args(ctx, recv, args.pos)?;
    let src = codepoints(ctx, recv)?;
    let mut out: Vec<u32> = Vec::with_capacity(src.len());
    for c in src {
        if out.last() == Some(&c) && in_all(&specs, c) {
            continue;
        }
        out.push(c);
    }
    encode_all(ctx, encoding(recv), &out)
}

fn squeeze(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = squeezed(ctx, recv, args)?;
    Ok(string::new_like(ctx, recv, out))
}

fn squeeze_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let out = squeezed(ctx, recv, args)?;
    let enc = encoding(recv);
    apply_bang(ctx, recv, out, enc)
}

fn count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    let specs = set_args(ctx, recv, args.pos)?;
    if string::is_7bit(recv) && encoding::is_ascii_compatible(encoding(recv)) {
        // Every byte is a character: count through a table instead of decoding.
        let table: [bool; 128] = std::array::from_fn(|c| in_all(&specs, c as u32));
        let n = string::bytes(recv).iter().filter(|&&b| table[b as usize & 0x7f]).count();
        return Ok(Value::fixnum(n as i64));
    }
    let src = codepoints(ctx, recv)?;
    Ok(Value::fixnum(src.into_iter().filter(|&c| in_all(&specs, c)).count() as i64))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("tr", tr, [2], Safe),
        ("tr!", tr_bang, [2], Unsafe),
        ("tr_s", tr_s, [2], Safe),
        ("tr_s!", tr_s_bang, [2], Unsafe),
        ("delete", delete, [0..], Safe),
        ("delete!", delete_bang, [0..], Unsafe),
        ("squeeze", squeeze, [0..], Safe),
        ("squeeze!", squeeze_bang, [0..], Unsafe),
        ("count", count, [0..], Safe),
    ]);
}

#[cfg(test)]
mod tests {
    use super::Spec;

    #[test]
    fn spec_positions() {
        let s = Spec { negated: false, ranges: vec![('a' as u32, 'c' as u32), ('x' as u32, 'x' as u32), ('a' as u32, 'a' as u32)] };
        assert_eq!(s.count(), 5);
        assert_eq!(s.last_index('a' as u32), Some(4));
        assert_eq!(s.last_index('b' as u32), Some(1));
        assert_eq!(s.at(3), Some('x' as u32));
        assert_eq!(s.at(99), Some('a' as u32));
    }
}
