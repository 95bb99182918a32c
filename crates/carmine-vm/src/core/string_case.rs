//! String case mapping: `upcase`/`downcase`/`capitalize`/`swapcase` (and bang forms) with
//! CRuby's options (`:ascii`, `:turkic`, `:lithuanian`, `:fold`), and `casecmp`/`casecmp?`.
//!
//! Invariants:
//! - Unicode encodings map per character (never per string, so Greek final sigma is not
//!   context-sensitive, as in CRuby); ISO-8859-1-like encodings map Latin-1 letters;
//!   other encodings map ASCII letters only.
//! - A string that is invalid in its encoding raises `ArgumentError: input string invalid`.

use crate::core::encoding::{self, UTF_8};
use crate::core::string::{self, bytes, encoding, modify, new_like, to_str_arg};
use crate::core::unicode;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Up,
    Down,
    Capitalize,
    Swap,
}

#[derive(Clone, Copy, Default)]
struct Options {
    ascii: bool,
    turkic: bool,
    fold: bool,
}

/// CRuby's `check_case_options`.
fn parse_options(ctx: &mut Ctx, args: &[Value], mode: Mode) -> Result<Options> {
    let mut o = Options::default();
    if args.is_empty() {
        return Ok(o);
    }
    if args.len() > 2 {
        return Err(ctx.arg_error("too many options"));
    }
    let name = |ctx: &mut Ctx, v: Value| v.as_symbol().map(|s| ctx.sym_str(s)).unwrap_or_default();
    let first = name(ctx, args[0]);
    match first.as_str() {
        "turkic" | "lithuanian" => {
            o.turkic = first == "turkic";
            if let Some(&second) = args.get(1) {
                let s = name(ctx, second);
                let partner = if first == "turkic" { "lithuanian" } else { "turkic" };
                if s != partner {
                    return Err(ctx.arg_error("invalid second option"));
                }
                o.turkic = true;
            }
        }
        _ if args.len() > 1 => return Err(ctx.arg_error("too many options")),
        "ascii" => o.ascii = true,
        "fold" if mode == Mode::Down => o.fold = true,
        "fold" => return Err(ctx.arg_error("option :fold only allowed for downcasing")),
        _ => return Err(ctx.arg_error("invalid option")),
    }
    Ok(o)
}

fn is_latin1_like(enc: u8) -> bool {
    matches!(encoding::name(enc), "ISO-8859-1" | "ISO-8859-15" | "Windows-1252")
}

fn map_upper(c: char, o: Options, out: &mut String) {
    if o.turkic && c == 'i' {
        out.push('\u{130}');
    } else {
        out.extend(c.to_uppercase());
    }
}

fn map_lower(c: char, o: Options, out: &mut String) {
    if o.turkic && c == 'I' {
        out.push('\u{131}');
    } else if o.turkic && c == '\u{130}' {
        out.push('i');
    } else if o.fold {
        unicode::fold_case(c, out);
    } else {
        out.extend(c.to_lowercase());
    }
}

fn map_title(c: char, o: Options, out: &mut String) {
    if o.turkic && c == 'i' {
        out.push('\u{130}');
    } else {
        unicode::to_titlecase(c, out);
    }
}

/// Swapcase of a titlecase digraph: lower first letter, upper second (`ǅ` → `dŽ`).
fn swap_titlecase(c: char) -> Option<&'static str> {
    match c as u32 {
        0x01C5 => Some("d\u{017D}"),
        0x01C8 => Some("lJ"),
        0x01CB => Some("nJ"),
        0x01F2 => Some("dZ"),
        _ => None,
    }
}

fn map_unicode(s: &str, mode: Mode, o: Options) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if o.ascii && !c.is_ascii() {
            out.push(c);
            continue;
        }
        match mode {
            Mode::Up => map_upper(c, o, &mut out),
            Mode::Down => map_lower(c, o, &mut out),
            Mode::Capitalize => {
                if i == 0 {
                    map_title(c, o, &mut out)
                } else {
                    map_lower(c, o, &mut out)
                }
            }
            Mode::Swap => {
                if let Some(t) = swap_titlecase(c) {
                    out.push_str(t);
                } else if c.is_uppercase() {
                    map_lower(c, o, &mut out)
                } else if c.is_lowercase() {
                    map_upper(c, o, &mut out)
                } else {
                    out.push(c)
                }
            }
        }
    }
    out
}

/// Maps bytes of a single-byte encoding: ASCII letters, plus Latin-1 letters when
/// `latin1` (byte value = codepoint).
fn map_bytes(b: &[u8], mode: Mode, ascii_only: bool, latin1: bool) -> Vec<u8> {
    let map1 = |c: u8, up: bool| -> u8 {
        if c.is_ascii() {
            return if up { c.to_ascii_uppercase() } else { c.to_ascii_lowercase() };
        }
        if ascii_only || !latin1 || c == 0xd7 || c == 0xf7 || c == 0xdf || c == 0xff {
            return c;
        }
        match (c, up) {
            (0xe0..=0xfe, true) => c - 0x20,
            (0xc0..=0xde, false) => c + 0x20,
            _ => c,
        }
    };
    let is_upper = |c: u8| c.is_ascii_uppercase() || (latin1 && !ascii_only && (0xc0..=0xde).contains(&c) && c != 0xd7);
    let is_lower = |c: u8| c.is_ascii_lowercase() || (latin1 && !ascii_only && (0xdf..=0xfe).contains(&c) && c != 0xf7);
    b.iter()
        .enumerate()
        .map(|(i, &c)| match mode {
            Mode::Up => map1(c, true),
            Mode::Down => map1(c, false),
            Mode::Capitalize => map1(c, i == 0),
            Mode::Swap => {
                if is_upper(c) {
                    map1(c, false)
                } else if is_lower(c) {
                    map1(c, true)
                } else {
                    c
                }
            }
        })
        .collect()
}

/// The case-mapped bytes of `recv`.
fn mapped(ctx: &mut Ctx, recv: Value, args: &Args, mode: Mode) -> Result<Vec<u8>> {
    let o = parse_options(ctx, args.pos, mode)?;
    let enc = encoding(recv);
    let b = bytes(recv);
    if encoding::is_utf8(enc) {
        if b.is_ascii() && !o.turkic {
            return Ok(map_bytes(b, mode, true, false));
        }
        let Ok(s) = std::str::from_utf8(b) else { return Err(ctx.arg_error("input string invalid")) };
        return Ok(map_unicode(s, mode, o).into_bytes());
    }
    if encoding::is_unicode(enc) {
        // UTF-16/32: decode, map, re-encode.
        if !encoding::valid(enc, b) {
            return Err(ctx.arg_error("input string invalid"));
        }
        let mut s = String::new();
        let mut i = 0;
        while i < b.len() {
            let (cp, n) = encoding::codepoint_at(enc, b, i);
            s.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
            i += n;
        }
        let m = map_unicode(&s, mode, o);
        let mut out = Vec::new();
        for c in m.chars() {
            out.extend(encoding::encode_codepoint(enc, c as u32).unwrap_or_default());
        }
        return Ok(out);
    }
    Ok(map_bytes(b, mode, o.ascii, is_latin1_like(enc)))
}

fn case_new(ctx: &mut Ctx, recv: Value, args: &Args, mode: Mode) -> Result<Value> {
    let out = mapped(ctx, recv, args, mode)?;
    Ok(new_like(ctx, recv, out))
}

fn case_bang(ctx: &mut Ctx, recv: Value, args: &Args, mode: Mode) -> Result<Value> {
    modify(ctx, recv)?;
    let out = mapped(ctx, recv, args, mode)?;
    if out == bytes(recv) {
        return Ok(Value::NIL);
    }
    string::set_bytes(recv, out);
    Ok(recv)
}

fn upcase(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_new(ctx, recv, args, Mode::Up)
}
fn downcase(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_new(ctx, recv, args, Mode::Down)
}
fn capitalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_new(ctx, recv, args, Mode::Capitalize)
}
fn swapcase(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_new(ctx, recv, args, Mode::Swap)
}
fn upcase_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_bang(ctx, recv, args, Mode::Up)
}
fn downcase_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_bang(ctx, recv, args, Mode::Down)
}
fn capitalize_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_bang(ctx, recv, args, Mode::Capitalize)
}
fn swapcase_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    case_bang(ctx, recv, args, Mode::Swap)
}

/// `casecmp`: ASCII-insensitive byte comparison; nil for non-strings or incompatible
/// encodings.
fn casecmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(o) = string::try_to_str(ctx, args.pos[0])? else { return Ok(Value::NIL) };
    if string::compatible(recv, o).is_none() {
        return Ok(Value::NIL);
    }
    let a = bytes(recv).iter().map(|c| c.to_ascii_lowercase());
    let b = bytes(o).iter().map(|c| c.to_ascii_lowercase());
    Ok(Value::fixnum(match a.cmp(b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }))
}

fn folded(v: Value) -> Option<String> {
    let enc = encoding(v);
    let b = bytes(v);
    if encoding::is_utf8(enc) || (b.is_ascii() && encoding::is_ascii_compatible(enc)) {
        let s = std::str::from_utf8(b).ok()?;
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            unicode::fold_case(c, &mut out);
        }
        return Some(out);
    }
    None
}

/// `casecmp?`: Unicode case-folded equality; nil for incompatible encodings.
fn casecmp_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(o) = string::try_to_str(ctx, args.pos[0])? else { return Ok(Value::NIL) };
    if string::compatible(recv, o).is_none() {
        return Ok(Value::NIL);
    }
    match (folded(recv), folded(o)) {
        (Some(a), Some(b)) => Ok(Value::bool(a == b)),
        _ => {
            let a: Vec<u8> = bytes(recv).iter().map(|c| c.to_ascii_lowercase()).collect();
            let b: Vec<u8> = bytes(o).iter().map(|c| c.to_ascii_lowercase()).collect();
            Ok(Value::bool(a == b))
        }
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("upcase", upcase, [0..], Safe),
        ("downcase", downcase, [0..], Safe),
        ("capitalize", capitalize, [0..], Safe),
        ("swapcase", swapcase, [0..], Safe),
        ("upcase!", upcase_bang, [0..], Unsafe),
        ("downcase!", downcase_bang, [0..], Unsafe),
        ("capitalize!", capitalize_bang, [0..], Unsafe),
        ("swapcase!", swapcase_bang, [0..], Unsafe),
        ("casecmp", casecmp, [1], Safe),
        ("casecmp?", casecmp_p, [1], Safe),
    ]);
    let _ = (to_str_arg, UTF_8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unicode_mapping() {
        let o = Options::default();
        assert_eq!(map_unicode("ΑΣ", Mode::Down, o), "ασ");
        assert_eq!(map_unicode("ǆa", Mode::Capitalize, o), "ǅa");
        assert_eq!(map_unicode("ǅ", Mode::Swap, o), "dŽ");
        assert_eq!(map_unicode("straße", Mode::Up, o), "STRASSE");
        let t = Options { turkic: true, ..o };
        assert_eq!(map_unicode("iI", Mode::Up, t), "İI");
        assert_eq!(map_unicode("iI", Mode::Down, t), "iı");
    }
}
