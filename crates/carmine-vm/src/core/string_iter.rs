//! String enumeration: characters, bytes, codepoints, grapheme clusters, lines, and
//! `split`.
//!
//! Invariants:
//! - Pieces are pushed into a Ruby Array as they are made (never held in a Rust `Vec`
//!   across an allocation), so the collector always sees them.
//! - Iterators with a block re-read the receiver's length and bytes at every step, since
//!   the block may mutate the string.

use unicode_segmentation::UnicodeSegmentation;

use crate::core::encoding;
use crate::core::enumerator;
use crate::core::string::{self, bytes, encoding, len, new_like, to_str_arg};
use crate::core::string_methods::{find_bytes, is_char_boundary};
use crate::core::{array, integer, regexp};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Yields each element of `arr` to the block, or returns `arr` without one; with a block the
/// result is `recv`.
fn yield_or_array(ctx: &mut Ctx, recv: Value, arr: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else { return Ok(arr) };
    let mut i = 0;
    while i < array::len(arr) {
        let v = array::get(arr, i);
        ctx.yield1(&blk, v)?;
        i += 1;
    }
    Ok(recv)
}

// ---- characters and bytes ----

fn chars_array(ctx: &mut Ctx, recv: Value) -> Value {
    let arr = array::new(ctx);
    let mut i = 0;
    while i < len(recv) {
        let n = encoding::char_len(encoding(recv), bytes(recv), i);
        let piece = bytes(recv)[i..i + n].to_vec();
        let s = new_like(ctx, recv, piece);
        array::push(ctx, arr, s);
        i += n;
    }
    arr
}

fn chars(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let arr = chars_array(ctx, recv);
    yield_or_array(ctx, recv, arr, args)
}

fn each_char(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        let n = Value::fixnum(string::char_length(recv) as i64);
        return enumerator::enum_for(ctx, recv, "each_char", &[], Some(n));
    };
    let mut i = 0;
    while i < len(recv) {
        let n = encoding::char_len(encoding(recv), bytes(recv), i);
        let piece = bytes(recv)[i..i + n].to_vec();
        let s = new_like(ctx, recv, piece);
        ctx.yield1(&blk, s)?;
        i += n;
    }
    Ok(recv)
}

fn bytes_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let arr = array::with_capacity(ctx, len(recv));
    let mut i = 0;
    while i < len(recv) {
        array::push(ctx, arr, Value::fixnum(bytes(recv)[i] as i64));
        i += 1;
    }
    yield_or_array(ctx, recv, arr, args)
}

fn each_byte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        let n = Value::fixnum(len(recv) as i64);
        return enumerator::enum_for(ctx, recv, "each_byte", &[], Some(n));
    };
    let mut i = 0;
    while i < len(recv) {
        let b = bytes(recv)[i];
        ctx.yield1(&blk, Value::fixnum(b as i64))?;
        i += 1;
    }
    Ok(recv)
}

/// The codepoint at byte `i`, raising for an invalid character.
fn codepoint_checked(ctx: &mut Ctx, v: Value, i: usize) -> Result<(u32, usize)> {
    let enc = encoding(v);
    let b = bytes(v);
    if encoding::precise_char_len(enc, b, i).is_err() {
        return Err(ctx.arg_error(&format!("invalid byte sequence in {}", encoding::name(enc))));
    }
    Ok(encoding::codepoint_at(enc, b, i))
}

fn codepoints(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let arr = array::new(ctx);
    let mut i = 0;
    while i < len(recv) {
        let (cp, n) = codepoint_checked(ctx, recv, i)?;
        array::push(ctx, arr, Value::fixnum(cp as i64));
        i += n;
    }
    yield_or_array(ctx, recv, arr, args)
}

fn each_codepoint(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        let n = Value::fixnum(string::char_length(recv) as i64);
        return enumerator::enum_for(ctx, recv, "each_codepoint", &[], Some(n));
    };
    let mut i = 0;
    while i < len(recv) {
        let (cp, n) = codepoint_checked(ctx, recv, i)?;
        ctx.yield1(&blk, Value::fixnum(cp as i64))?;
        i += n;
    }
    Ok(recv)
}

/// Byte spans of the extended grapheme clusters (characters for non-UTF-8 strings and
/// for the invalid parts of broken UTF-8).
fn grapheme_spans(v: Value) -> Vec<(usize, usize)> {
    let b = bytes(v);
    let enc = encoding(v);
    let mut spans = Vec::new();
    if encoding::is_utf8(enc) {
        let mut i = 0;
        while i < b.len() {
            let valid_end = match std::str::from_utf8(&b[i..]) {
                Ok(_) => b.len(),
                Err(e) => i + e.valid_up_to(),
            };
            if valid_end > i {
                let s = std::str::from_utf8(&b[i..valid_end]).unwrap_or("");
                for (off, g) in s.grapheme_indices(true) {
                    spans.push((i + off, i + off + g.len()));
                }
                i = valid_end;
            } else {
                spans.push((i, i + 1));
                i += 1;
            }
        }
        return spans;
    }
    let offs = encoding::char_offsets(enc, b);
    if encoding::is_unicode(enc) {
        // UTF-16/32: segment the decoded text, then map characters back to byte spans.
        let chars: Option<Vec<char>> = offs.windows(2).map(|w| char::from_u32(encoding::codepoint_at(enc, b, w[0]).0)).collect();
        if let Some(chars) = chars {
            let text: String = chars.iter().collect();
            let mut char_index = 0;
            for g in text.graphemes(true) {
                let n = g.chars().count();
                spans.push((offs[char_index], offs[char_index + n]));
                char_index += n;
            }
            return spans;
        }
    }
    offs.windows(2).map(|w| (w[0], w[1])).collect()
}

fn grapheme_clusters(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let spans = grapheme_spans(recv);
    let arr = array::with_capacity(ctx, spans.len());
    for (s, e) in spans {
        let piece = bytes(recv)[s..e].to_vec();
        let g = new_like(ctx, recv, piece);
        array::push(ctx, arr, g);
    }
    yield_or_array(ctx, recv, arr, args)
}

fn each_grapheme_cluster(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_none() {
        let n = Value::fixnum(grapheme_spans(recv).len() as i64);
        return enumerator::enum_for(ctx, recv, "each_grapheme_cluster", &[], Some(n));
    }
    grapheme_clusters(ctx, recv, args)
}

// ---- lines ----

/// Byte spans `(start, end, chomped_end)` of the lines of `b` separated by `sep`
/// (`None`: the whole string; empty: paragraph mode).
fn line_spans(b: &[u8], sep: Option<&[u8]>) -> Vec<(usize, usize, usize)> {
    let mut out = Vec::new();
    let Some(sep) = sep else {
        if !b.is_empty() {
            out.push((0, b.len(), b.len()));
        }
        return out;
    };
    let chomp_newline = |s: usize, e: usize| -> usize {
        if e > s && b[e - 1] == b'\n' {
            if e - 1 > s && b[e - 2] == b'\r' {
                e - 2
            } else {
                e - 1
            }
        } else {
            e
        }
    };
    let mut start = 0;
    if sep.is_empty() {
        // Paragraph mode: a line ends at two or more newlines ("\r\n" counts as one).
        let mut search = 0;
        while start < b.len() {
            let Some(p) = find_bytes(b, b"\n", search) else { break };
            let after = if b.get(p + 1) == Some(&b'\n') {
                p + 2
            } else if b.get(p + 1) == Some(&b'\r') && b.get(p + 2) == Some(&b'\n') {
                p + 3
            } else {
                search = p + 1;
                continue;
            };
            let line_end = after;
            let mut next = after;
            loop {
                if b.get(next) == Some(&b'\n') {
                    next += 1;
                } else if b.get(next) == Some(&b'\r') && b.get(next + 1) == Some(&b'\n') {
                    next += 2;
                } else {
                    break;
                }
            }
            // `chomp: true` drops the whole separator (Ruby 3.4), not just one newline.
            let chomped = if p > start && b[p - 1] == b'\r' { p - 1 } else { p };
            out.push((start, line_end, chomped));
            start = next;
            search = next;
        }
        if start < b.len() {
            out.push((start, b.len(), b.len()));
        }
        return out;
    }
    let newline = sep == b"\n";
    while start < b.len() {
        match find_bytes(b, sep, start) {
            Some(p) => {
                let end = p + sep.len();
                let chomped = if newline { chomp_newline(start, end) } else { p };
                out.push((start, end, chomped));
                start = end;
            }
            None => {
                out.push((start, b.len(), b.len()));
                break;
            }
        }
    }
    out
}

fn line_args(ctx: &mut Ctx, args: &Args) -> Result<(Option<Value>, bool)> {
    let chomp = args.kwarg(ctx, "chomp").is_some_and(|v| v.truthy());
    let sep = match args.pos.first() {
        None => {
            let rs = crate::core::globals::get(ctx, sym::DOLLAR_SLASH)?;
            if rs.is_nil() {
                None
            } else {
                Some(to_str_arg(ctx, rs)?)
            }
        }
        Some(&v) if v.is_nil() => None,
        Some(&v) => Some(to_str_arg(ctx, v)?),
    };
    Ok((sep, chomp))
}

fn lines_array(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (mut sep, chomp) = line_args(ctx, args)?;
    let enc = string::encoding(recv);
    // The default separator of a string in an ASCII-incompatible encoding is "\n"
    // converted to that encoding (CRuby; for the dummy UTF-16 that includes a BOM).
    if args.pos.is_empty() && sep.is_some_and(|s| bytes(s) == b"\n") && !crate::core::encoding::is_ascii_compatible(enc) && !bytes(recv).is_empty() {
        let nl = crate::core::encoding::converter::transcode_string(ctx, b"\n", crate::core::encoding::US_ASCII, enc, &Default::default())?;
        sep = Some(string::new_with_enc(ctx, nl, enc));
    }
    if let Some(s) = sep {
        string::check_compatible(ctx, recv, s)?;
    }
    let spans = line_spans(bytes(recv), sep.map(bytes));
    let arr = array::with_capacity(ctx, spans.len());
    for (s, e, ce) in spans {
        let end = if chomp { ce } else { e };
        let l = string::substr_shared(ctx, recv, s..end);
        array::push(ctx, arr, l);
    }
    Ok(arr)
}

fn lines(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let arr = lines_array(ctx, recv, args)?;
    yield_or_array(ctx, recv, arr, args)
}

fn each_line(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_none() {
        return enumerator::enum_for_kw(ctx, recv, "each_line", args.pos, args.kw, None);
    }
    let arr = lines_array(ctx, recv, args)?;
    yield_or_array(ctx, recv, arr, args)
}

// ---- split ----

fn is_awk_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn push_piece(ctx: &mut Ctx, recv: Value, arr: Value, s: usize, e: usize) {
    let p = string::substr_shared(ctx, recv, s..e);
    array::push(ctx, arr, p);
}

/// CRuby's `rb_str_split_m` for non-Regexp patterns. `limit` is `None` for "no limit"
/// and `lim` the raw limit (0 drops trailing empty fields).
fn split_plain(ctx: &mut Ctx, recv: Value, sep: Option<Value>, limit: Option<i64>, lim: i64) -> Result<Value> {
    let arr = array::new(ctx);
    let total = len(recv);
    let mut i: i64 = 1;
    let mut beg = 0usize;
    match sep {
        None => {
            let mut skip = true;
            let mut end = 0usize;
            let mut p = 0usize;
            while p < len(recv) {
                let c = bytes(recv)[p];
                p += 1;
                if skip {
                    if is_awk_space(c) {
                        beg = p;
                    } else {
                        end = p;
                        skip = false;
                        if limit.is_some_and(|l| l <= i) {
                            break;
                        }
                    }
                } else if is_awk_space(c) {
                    push_piece(ctx, recv, arr, beg, end);
                    skip = true;
                    beg = p;
                    if limit.is_some() {
                        i += 1;
                    }
                } else {
                    end = p;
                }
            }
        }
        Some(sv) if len(sv) == 0 => {
            let mut p = 0usize;
            while p < len(recv) {
                let n = encoding::char_len(encoding(recv), bytes(recv), p);
                push_piece(ctx, recv, arr, p, p + n);
                p += n;
                i += 1;
                if limit.is_some_and(|l| l <= i) {
                    break;
                }
            }
            beg = p;
        }
        Some(sv) => {
            let sb = bytes(sv).to_vec();
            let mut p = 0usize;
            while p < len(recv) {
                let Some(hit) = find_bytes(bytes(recv), &sb, p) else { break };
                if !is_char_boundary(recv, hit) {
                    p = hit + 1;
                    continue;
                }
                push_piece(ctx, recv, arr, p, hit);
                p = hit + sb.len();
                i += 1;
                if limit.is_some_and(|l| l <= i) {
                    break;
                }
            }
            beg = p;
        }
    }
    if total > 0 && (limit.is_some() || total > beg || lim < 0) {
        let b = beg.min(total);
        push_piece(ctx, recv, arr, b, total);
    }
    if limit.is_none() && lim == 0 {
        while array::len(arr) > 0 && len(array::get(arr, array::len(arr) - 1)) == 0 {
            array::rarray(arr).items_mut().pop();
        }
    }
    Ok(arr)
}

/// `split` with a Regexp (CRuby's algorithm: an empty match splits after the next
/// character; captures are inserted; unmatched groups are skipped).
fn split_regexp(ctx: &mut Ctx, recv: Value, re: Value, limit: Option<i64>, lim: i64) -> Result<Value> {
    let arr = array::new(ctx);
    let mut i: i64 = 1;
    let mut beg = 0usize;
    let mut start = 0usize;
    let mut last_null = false;
    while start <= len(recv) {
        let Some(groups) = regexp::search(ctx, re, recv, start, false)? else { break };
        let Some((ms, me)) = groups.first().copied().flatten() else { break };
        if start == ms && ms == me {
            if len(recv) == 0 {
                push_piece(ctx, recv, arr, 0, 0);
                break;
            } else if last_null {
                let n = encoding::char_len(encoding(recv), bytes(recv), beg);
                push_piece(ctx, recv, arr, beg, (beg + n).min(len(recv)));
                beg = start;
            } else {
                start += if start >= len(recv) { 1 } else { encoding::char_len(encoding(recv), bytes(recv), start) };
                last_null = true;
                continue;
            }
        } else {
            push_piece(ctx, recv, arr, beg, ms);
            beg = me;
            start = me;
        }
        last_null = false;
        for g in groups.iter().skip(1) {
            if let Some((gs, ge)) = *g {
                push_piece(ctx, recv, arr, gs, ge);
            }
        }
        i += 1;
        if limit.is_some_and(|l| l <= i) {
            break;
        }
    }
    let total = len(recv);
    if total > 0 && (limit.is_some() || total > beg || lim < 0) {
        push_piece(ctx, recv, arr, beg.min(total), total);
    }
    if limit.is_none() && lim == 0 {
        while array::len(arr) > 0 && len(array::get(arr, array::len(arr) - 1)) == 0 {
            array::rarray(arr).items_mut().pop();
        }
    }
    Ok(arr)
}

fn split(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (limit, lim) = match args.pos.get(1) {
        Some(&l) => {
            let l = integer::to_i64_arg(ctx, l)?;
            if l <= 0 {
                (None, l)
            } else {
                (Some(l), l)
            }
        }
        None => (None, 0),
    };
    if limit == Some(1) {
        let arr = array::new(ctx);
        if len(recv) > 0 {
            let s = string::dup_literal(ctx, recv);
            crate::object::basic(s).klass = ctx.c().string;
            array::push(ctx, arr, s);
        }
        return yield_or_array(ctx, recv, arr, args);
    }
    let mut pat = args.pos.first().copied().unwrap_or(Value::NIL);
    if pat.is_nil() {
        pat = crate::core::globals::get(ctx, sym::DOLLAR_SEMICOLON)?;
    }
    let result = if regexp::is_regexp(pat) {
        split_regexp(ctx, recv, pat, limit, lim)?
    } else {
        let sep = if pat.is_nil() {
            None
        } else {
            let s = to_str_arg(ctx, pat)?;
            string::check_compatible(ctx, recv, s)?;
            if bytes(s) == b" " {
                None
            } else {
                Some(s)
            }
        };
        split_plain(ctx, recv, sep, limit, lim)?
    };
    yield_or_array(ctx, recv, result, args)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("chars", chars, [0], Safe),
        ("each_char", each_char, [0], Safe),
        ("bytes", bytes_m, [0], Safe),
        ("each_byte", each_byte, [0], Safe),
        ("codepoints", codepoints, [0], Safe),
        ("each_codepoint", each_codepoint, [0], Safe),
        ("grapheme_clusters", grapheme_clusters, [0], Safe),
        ("each_grapheme_cluster", each_grapheme_cluster, [0], Safe),
        ("lines", lines, [0..=1], Safe, Kw),
        ("each_line", each_line, [0..=1], Safe, Kw),
        ("split", split, [0..=2], Safe),
    ]);
}

#[cfg(test)]
mod tests {
    use super::line_spans;

    #[test]
    fn paragraph_lines() {
        let b = b"a\n\n\nb\n\nc";
        let spans = line_spans(b, Some(b""));
        let lines: Vec<&[u8]> = spans.iter().map(|&(s, e, _)| &b[s..e]).collect();
        assert_eq!(lines, vec![&b"a\n\n"[..], &b"b\n\n"[..], &b"c"[..]]);
        let chomped: Vec<&[u8]> = spans.iter().map(|&(s, _, c)| &b[s..c]).collect();
        assert_eq!(chomped, vec![&b"a"[..], &b"b"[..], &b"c"[..]]);
    }
}
