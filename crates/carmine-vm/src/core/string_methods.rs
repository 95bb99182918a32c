//! String's core methods: construction, comparison, concatenation, indexing and slicing,
//! searching, whitespace trimming, justification and freezing.
//!
//! Invariants (see `string.rs` for the representation):
//! - Character positions are converted to byte offsets with `string::char_range` /
//!   `char_to_byte`; invalid bytes count as one character each.
//! - Every mutator calls `string::modify` before its first change, and converts its
//!   arguments (which may run Ruby code) before reading the receiver's bytes.
//! - Results combining two strings take their encoding from `string::check_compatible`.

use crate::core::encoding::{self, BINARY, US_ASCII};
use crate::core::string::{self, bytes, bytes_mut, encoding, len, modify, new_like, new_like_from_slice, new_with_enc, set_encoding, to_str_arg};
use crate::core::{array, hash, integer, object, range, regexp};
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

// ---- helpers ----

/// First occurrence of `needle` in `hay` at or after `from`.
pub fn find_bytes(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from > hay.len() {
        return None;
    }
    if needle.is_empty() {
        return Some(from);
    }
    if needle.len() == 1 {
        return memchr::memchr(needle[0], &hay[from..]).map(|p| p + from);
    }
    memchr::memmem::find(&hay[from..], needle).map(|p| p + from)
}

/// Whether byte offset `off` starts a character of `v`.
pub fn is_char_boundary(v: Value, off: usize) -> bool {
    let b = bytes(v);
    let enc = encoding(v);
    if off == 0 || off == b.len() {
        return true;
    }
    if off > b.len() {
        return false;
    }
    if encoding::is_single_byte(enc) {
        return true;
    }
    if encoding::is_utf8(enc) {
        // Step back to the start of the character containing `off`.
        let mut s = off;
        while s > 0 && off - s < 3 && (b[s] & 0xc0) == 0x80 {
            s -= 1;
        }
        if s == off {
            return true;
        }
        let n = encoding::char_len(enc, b, s);
        return s + n <= off;
    }
    let mut i = 0;
    while i < off {
        i += encoding::char_len(enc, b, i);
    }
    i == off
}

/// Byte offset of the first `needle` match at a character boundary, from `from`.
fn find_at_boundary(v: Value, needle: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let p = find_bytes(bytes(v), needle, from)?;
        if is_char_boundary(v, p) {
            return Some(p);
        }
        from = p + 1;
    }
}

fn i64_arg(ctx: &mut Ctx, v: Value) -> Result<i64> {
    integer::to_i64_arg(ctx, v)
}

// ---- construction ----

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = object::allocate(ctx, recv)?;
    if string::is_string(s) {
        set_encoding(s, BINARY);
    }
    ctx.call_kw(s, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(s)
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enc = match args.kwarg(ctx, "encoding") {
        Some(e) => Some(encoding::encoding_arg(ctx, e)?),
        None => None,
    };
    let cap = match args.kwarg(ctx, "capacity") {
        Some(c) => Some(i64_arg(ctx, c)?),
        None => None,
    };
    if let Some(&src) = args.pos.first() {
        let src = to_str_arg(ctx, src)?;
        modify(ctx, recv)?;
        if src != recv {
            let b = bytes(src).to_vec();
            string::set_bytes(recv, b);
            set_encoding(recv, encoding(src));
        }
    } else if enc.is_some() || cap.is_some() {
        modify(ctx, recv)?;
    }
    if let Some(e) = enc {
        set_encoding(recv, e);
    }
    if let Some(c) = cap {
        if c > 0 {
            let extra = (c as usize).min(1 << 30);
            bytes_mut(recv).reserve(extra);
        }
    }
    Ok(Value::NIL)
}

fn s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(string::try_to_str(ctx, args.pos[0])?.unwrap_or(Value::NIL))
}

fn initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    replace(ctx, recv, args)
}

// ---- operators ----

pub(crate) fn plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = to_str_arg(ctx, args.pos[0])?;
    let enc = string::check_compatible(ctx, recv, other)?;
    Ok(joined(ctx, recv, other, enc))
}

/// A new String of `a`'s content followed by `b`'s, in encoding `enc`.
pub(crate) fn joined(ctx: &mut Ctx, a: Value, b: Value, enc: u8) -> Value {
    let mut v = Vec::with_capacity(len(a) + len(b));
    v.extend_from_slice(bytes(a));
    v.extend_from_slice(bytes(b));
    new_with_enc(ctx, v, enc)
}

fn mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative argument"));
    }
    let b = bytes(recv);
    if (b.len() as u128) * (n as u128) >= (1u128 << 40) {
        return Err(ctx.arg_error("argument too big"));
    }
    if b.is_empty() {
        return Ok(new_like(ctx, recv, Vec::new()));
    }
    let mut out = Vec::new();
    ctx.try_reserve(&mut out, b.len() * n as usize)?;
    for _ in 0..n {
        out.extend_from_slice(bytes(recv));
    }
    Ok(new_like(ctx, recv, out))
}

fn format_op(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    match array::try_to_ary(ctx, a)? {
        Some(list) => {
            let items = array::to_vec(list);
            // The items stay reachable through `list` while formatting runs.
            let r = crate::core::format::sprintf(ctx, recv, &items);
            let _keep = list;
            r
        }
        None => crate::core::format::sprintf(ctx, recv, &[a]),
    }
}

fn op_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if string::is_string(o) {
        return Ok(Value::bool(string::eq(recv, o)));
    }
    if o.is_heap() && ctx.respond_to(o, sym::TO_STR, true) {
        let r = ctx.call(o, sym::EQ, &[recv])?;
        return Ok(Value::bool(r.truthy()));
    }
    Ok(Value::FALSE)
}

fn op_eql(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    Ok(Value::bool(string::is_string(o) && string::eql(recv, o)))
}

fn op_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = string::hash_bytes(ctx.vm().hash_seed, recv);
    Ok(Value::fixnum((h >> 2) as i64))
}

/// CRuby's `rb_str_cmp`: bytewise, then by length, then by encoding index.
pub fn compare(a: Value, b: Value) -> i64 {
    match bytes(a).cmp(bytes(b)) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Equal => {
            if encoding(a) == encoding(b) || string::compatible(a, b).is_some() {
                0
            } else if encoding(a) > encoding(b) {
                1
            } else {
                -1
            }
        }
    }
}

fn op_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if string::is_string(o) {
        return Ok(Value::fixnum(compare(recv, o)));
    }
    if let Some(s) = string::try_to_str(ctx, o)? {
        return Ok(Value::fixnum(compare(recv, s)));
    }
    if o.is_heap() && ctx.respond_to(o, sym::CMP, true) {
        let r = ctx.call(o, sym::CMP, &[recv])?;
        if r.is_nil() {
            return Ok(Value::NIL);
        }
        return integer::negate(ctx, r);
    }
    Ok(Value::NIL)
}

pub(crate) fn length(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(string::char_length(recv) as i64))
}

pub(crate) fn bytesize(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(len(recv) as i64))
}

fn empty_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(len(recv) == 0))
}

fn to_s_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if object::real_class_of(ctx, recv) == ctx.c().string {
        return Ok(recv);
    }
    Ok(string::dup_literal(ctx, recv))
}

// ---- concatenation ----

/// Appends codepoint `code` to `recv` (`str << 0x3042`), CRuby's rules and messages.
pub fn append_codepoint(ctx: &mut Ctx, recv: Value, code_v: Value) -> Result<()> {
    let code = match code_v.as_fixnum() {
        Some(c) if c >= 0 && c <= u32::MAX as i64 => c as u32,
        Some(c) => return Err(ctx.range_error(&format!("{c} out of char range"))),
        None => return Err(ctx.range_error("bignum out of char range")),
    };
    let enc = encoding(recv);
    if enc == BINARY || enc == US_ASCII {
        if code > 0xff {
            return Err(ctx.range_error(&format!("{code} out of char range")));
        }
        if enc == US_ASCII && code > 0x7f {
            set_encoding(recv, BINARY);
        }
        string::append(recv, &[code as u8]);
        return Ok(());
    }
    match encoding::encode_codepoint(enc, code) {
        Some(b) => {
            string::append(recv, &b);
            Ok(())
        }
        None if encoding::is_unicode(enc) => Err(ctx.range_error(&format!("invalid codepoint 0x{code:X} in {}", encoding::name(enc)))),
        None => Err(ctx.range_error(&format!("{code} out of char range"))),
    }
}

fn append_value(ctx: &mut Ctx, recv: Value, a: Value) -> Result<()> {
    if integer::is_integer(a) {
        return append_codepoint(ctx, recv, a);
    }
    let s = to_str_arg(ctx, a)?;
    string::append_str(ctx, recv, s)
}

fn concat_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    if args.pos.len() == 1 {
        append_value(ctx, recv, args.pos[0])?;
        return Ok(recv);
    }
    // With several arguments the receiver's original content is used for each `self`.
    let orig = string::dup_literal(ctx, recv);
    for &a in args.pos {
        let a = if a == recv { orig } else { a };
        append_value(ctx, recv, a)?;
    }
    Ok(recv)
}

pub(crate) fn lshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    append_value(ctx, recv, args.pos[0])?;
    Ok(recv)
}

fn prepend(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let pre = string::new_like(ctx, recv, Vec::new());
    for &a in args.pos {
        let s = to_str_arg(ctx, a)?;
        let s = if s == recv { string::dup_literal(ctx, s) } else { s };
        string::append_str(ctx, pre, s)?;
    }
    let enc = string::check_compatible(ctx, pre, recv)?;
    let mut out = bytes(pre).to_vec();
    out.extend_from_slice(bytes(recv));
    string::set_bytes(recv, out);
    set_encoding(recv, enc);
    Ok(recv)
}

/// Replaces bytes `bs..be` of `recv` with `repl`'s content (encodings negotiated).
pub fn splice_bytes(ctx: &mut Ctx, recv: Value, bs: usize, be: usize, repl: Value) -> Result<()> {
    let enc = string::check_compatible(ctx, recv, repl)?;
    // `repl` may be `recv` itself: a slice of it may not be passed along with `&mut` to it.
    let copy = (repl == recv).then(|| bytes(repl).to_vec());
    bytes_mut(recv).splice(bs..be, copy.as_deref().unwrap_or_else(|| bytes(repl)));
    set_encoding(recv, enc);
    Ok(())
}

/// Replaces characters `[start, start + count)` with `repl` (`rb_str_update`).
fn splice_chars(ctx: &mut Ctx, recv: Value, start: i64, count: i64, repl: Value) -> Result<()> {
    if count < 0 {
        return Err(ctx.index_error(&format!("negative length {count}")));
    }
    let clen = string::char_length(recv) as i64;
    let s = if start < 0 { start + clen } else { start };
    if s < 0 || s > clen {
        return Err(ctx.index_error(&format!("index {start} out of string")));
    }
    let Some((bs, be)) = string::char_range(recv, s, count) else {
        return Err(ctx.index_error(&format!("index {start} out of string")));
    };
    splice_bytes(ctx, recv, bs, be, repl)
}

fn insert(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let idx = i64_arg(ctx, args.pos[0])?;
    let s = to_str_arg(ctx, args.pos[1])?;
    modify(ctx, recv)?;
    if idx == -1 {
        string::append_str(ctx, recv, s)?;
        return Ok(recv);
    }
    let pos = if idx < 0 { idx + 1 } else { idx };
    splice_chars(ctx, recv, pos, 0, s)?;
    Ok(recv)
}

fn replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = to_str_arg(ctx, args.pos[0])?;
    modify(ctx, recv)?;
    if s != recv {
        let nb = bytes(s).to_vec();
        string::set_bytes(recv, nb);
        set_encoding(recv, encoding(s));
    }
    Ok(recv)
}

fn clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    bytes_mut(recv).clear();
    Ok(recv)
}

// ---- indexing ----

fn aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    if args.pos.len() == 2 {
        if regexp::is_regexp(a) {
            return regexp::string_aref(ctx, recv, a, Some(args.pos[1]));
        }
        let start = i64_arg(ctx, a)?;
        let count = i64_arg(ctx, args.pos[1])?;
        return Ok(string::substr(ctx, recv, start, count).unwrap_or(Value::NIL));
    }
    if let Some(i) = a.as_fixnum() {
        return Ok(char_at(ctx, recv, i));
    }
    if regexp::is_regexp(a) {
        return regexp::string_aref(ctx, recv, a, None);
    }
    if string::is_string(a) {
        return Ok(if find_at_boundary(recv, bytes(a), 0).is_some() { string::dup_literal(ctx, a) } else { Value::NIL });
    }
    if range::is_range(a) {
        let clen = string::char_length(recv) as i64;
        return match range::resolve_bounds(ctx, a, clen)? {
            Some((s, n)) => Ok(string::substr(ctx, recv, s, n).unwrap_or(Value::NIL)),
            None => Ok(Value::NIL),
        };
    }
    let i = i64_arg(ctx, a)?;
    Ok(char_at(ctx, recv, i))
}

fn char_at(ctx: &mut Ctx, recv: Value, i: i64) -> Value {
    match string::char_range(recv, i, 1) {
        Some((bs, be)) if be > bs => {
            new_like_from_slice(ctx, recv, &bytes(recv)[bs..be])
        }
        _ => Value::NIL,
    }
}

fn aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let val = args.pos[args.pos.len() - 1];
    let a = args.pos[0];
    if args.pos.len() == 3 {
        if regexp::is_regexp(a) {
            let repl = to_str_arg(ctx, val)?;
            modify(ctx, recv)?;
            return aset_regexp_group(ctx, recv, a, args.pos[1], repl).map(|_| val);
        }
        let s = i64_arg(ctx, a)?;
        let n = i64_arg(ctx, args.pos[1])?;
        let repl = to_str_arg(ctx, val)?;
        modify(ctx, recv)?;
        splice_chars(ctx, recv, s, n, repl)?;
        return Ok(val);
    }
    if regexp::is_regexp(a) {
        let repl = to_str_arg(ctx, val)?;
        modify(ctx, recv)?;
        regexp::string_aset(ctx, recv, a, repl)?;
        return Ok(val);
    }
    if string::is_string(a) {
        let repl = to_str_arg(ctx, val)?;
        modify(ctx, recv)?;
        return match find_at_boundary(recv, bytes(a), 0) {
            Some(p) => {
                let n = len(a);
                splice_bytes(ctx, recv, p, p + n, repl)?;
                Ok(val)
            }
            None => Err(ctx.index_error("string not matched")),
        };
    }
    if range::is_range(a) {
        let clen = string::char_length(recv) as i64;
        let repl = to_str_arg(ctx, val)?;
        modify(ctx, recv)?;
        match range::resolve_bounds(ctx, a, clen)? {
            Some((s, n)) => splice_chars(ctx, recv, s, n, repl)?,
            None => {
                let s = object::inspect_string(ctx, a)?;
                return Err(ctx.range_error(&format!("{s} out of range")));
            }
        }
        return Ok(val);
    }
    let i = i64_arg(ctx, a)?;
    let repl = to_str_arg(ctx, val)?;
    modify(ctx, recv)?;
    let clen = string::char_length(recv) as i64;
    if i >= clen || i < -clen {
        return Err(ctx.index_error(&format!("index {i} out of string")));
    }
    splice_chars(ctx, recv, i, 1, repl)?;
    Ok(val)
}

fn aset_regexp_group(ctx: &mut Ctx, recv: Value, re: Value, group: Value, repl: Value) -> Result<()> {
    let m = regexp::match_at(ctx, re, recv, 0)?;
    if m.is_nil() {
        return Err(ctx.index_error("regexp not matched"));
    }
    let begin = ctx.call_str(m, "byteoffset", &[group])?;
    let (bs, be) = (array::get(begin, 0), array::get(begin, 1));
    match (bs.as_fixnum(), be.as_fixnum()) {
        (Some(s), Some(e)) => splice_bytes(ctx, recv, s as usize, e as usize, repl),
        _ => {
            let g = object::inspect_string(ctx, group)?;
            Err(ctx.index_error(&format!("regexp group {g} not matched")))
        }
    }
}

fn byteslice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = len(recv) as i64;
    let (s, c) = if args.pos.len() == 2 {
        (i64_arg(ctx, args.pos[0])?, i64_arg(ctx, args.pos[1])?)
    } else if range::is_range(args.pos[0]) {
        match range::resolve_bounds(ctx, args.pos[0], n)? {
            Some(x) => x,
            None => return Ok(Value::NIL),
        }
    } else {
        let i = i64_arg(ctx, args.pos[0])?;
        let i = if i < 0 { i + n } else { i };
        if i < 0 || i >= n {
            return Ok(Value::NIL);
        }
        (i, 1)
    };
    let s = if s < 0 { s + n } else { s };
    if s < 0 || s > n || c < 0 {
        return Ok(Value::NIL);
    }
    let e = s.saturating_add(c).min(n);
    Ok(new_like_from_slice(ctx, recv, &bytes(recv)[s as usize..e as usize]))
}

/// Resolves a byte range argument of `bytesplice` to `(start, len)`.
fn byte_span(ctx: &mut Ctx, v: Value, rng: Value) -> Result<(usize, usize)> {
    let n = len(v) as i64;
    match range::resolve_bounds(ctx, rng, n)? {
        Some((s, c)) => Ok((s as usize, c as usize)),
        None => {
            let s = object::inspect_string(ctx, rng)?;
            Err(ctx.range_error(&format!("{s} out of range")))
        }
    }
}

fn byte_start_len(ctx: &mut Ctx, v: Value, start: Value, count: Value) -> Result<(usize, usize)> {
    let s = i64_arg(ctx, start)?;
    let c = i64_arg(ctx, count)?;
    let n = len(v) as i64;
    if c < 0 {
        return Err(ctx.index_error(&format!("negative length {c}")));
    }
    let st = if s < 0 { s + n } else { s };
    if st < 0 || st > n {
        return Err(ctx.index_error(&format!("index {s} out of string")));
    }
    Ok((st as usize, (c.min(n - st)) as usize))
}

fn check_byte_boundary(ctx: &mut Ctx, v: Value, off: usize) -> Result<()> {
    if !is_char_boundary(v, off) {
        return Err(ctx.index_error(&format!("offset {off} does not land on character boundary")));
    }
    Ok(())
}

fn bytesplice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = args.pos;
    let (span, src, src_span) = match p.len() {
        2 if range::is_range(p[0]) => {
            let src = to_str_arg(ctx, p[1])?;
            (byte_span(ctx, recv, p[0])?, src, None)
        }
        3 if range::is_range(p[0]) => {
            let src = to_str_arg(ctx, p[1])?;
            if !range::is_range(p[2]) {
                return Err(ctx.type_error("wrong argument type Integer (expected Range)"));
            }
            let ss = byte_span(ctx, src, p[2])?;
            (byte_span(ctx, recv, p[0])?, src, Some(ss))
        }
        3 => {
            let src = to_str_arg(ctx, p[2])?;
            (byte_start_len(ctx, recv, p[0], p[1])?, src, None)
        }
        5 => {
            let src = to_str_arg(ctx, p[2])?;
            let ss = byte_start_len(ctx, src, p[3], p[4])?;
            (byte_start_len(ctx, recv, p[0], p[1])?, src, Some(ss))
        }
        2 => return Err(ctx.type_error("wrong argument type Integer (expected Range)")),
        n => return Err(ctx.arity_error(n, 2, Some(5))),
    };
    modify(ctx, recv)?;
    let (s, l) = span;
    check_byte_boundary(ctx, recv, s)?;
    check_byte_boundary(ctx, recv, s + l)?;
    let (ss, sl) = src_span.unwrap_or((0, len(src)));
    check_byte_boundary(ctx, src, ss)?;
    check_byte_boundary(ctx, src, ss + sl)?;
    let piece_v = new_like_from_slice(ctx, src, &bytes(src)[ss..ss + sl]);
    splice_bytes(ctx, recv, s, s + l, piece_v)?;
    Ok(recv)
}

pub(crate) fn getbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(byte_at(recv, i64_arg(ctx, args.pos[0])?))
}

/// `str.getbyte(i)` once `i` is an integer: the byte (counting from the end when `i` is
/// negative), or nil out of range.
#[inline]
pub(crate) fn byte_at(recv: Value, i: i64) -> Value {
    let b = bytes(recv);
    let i = if i < 0 { i.wrapping_add(b.len() as i64) } else { i };
    match usize::try_from(i).ok().and_then(|i| b.get(i)) {
        Some(&x) => Value::fixnum(x as i64),
        None => Value::NIL,
    }
}

fn setbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = i64_arg(ctx, args.pos[0])?;
    let b = integer::to_integer_arg(ctx, args.pos[1])?;
    let byte = match b.as_fixnum() {
        Some(x) => x as u8,
        None => crate::core::bignum::low_u64_any(b) as u8,
    };
    modify(ctx, recv)?;
    let n = len(recv) as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return Err(ctx.index_error(&format!("index {i} out of string")));
    }
    bytes_mut(recv)[j as usize] = byte;
    Ok(args.pos[1])
}

// ---- searching ----

fn include_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_str_arg(ctx, args.pos[0])?;
    string::check_compatible(ctx, recv, o)?;
    Ok(Value::bool(find_at_boundary(recv, bytes(o), 0).is_some()))
}

fn start_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        if regexp::is_regexp(a) {
            if regexp::match_at_start(ctx, a, recv)? {
                return Ok(Value::TRUE);
            }
            continue;
        }
        let o = to_str_arg(ctx, a)?;
        string::check_compatible(ctx, recv, o)?;
        if bytes(recv).starts_with(bytes(o)) && is_char_boundary(recv, len(o)) {
            return Ok(Value::TRUE);
        }
    }
    Ok(Value::FALSE)
}

fn end_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let o = to_str_arg(ctx, a)?;
        string::check_compatible(ctx, recv, o)?;
        if bytes(recv).ends_with(bytes(o)) && is_char_boundary(recv, len(recv) - len(o)) {
            return Ok(Value::TRUE);
        }
    }
    Ok(Value::FALSE)
}

fn index_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let start = match args.pos.get(1) {
        Some(&s) => i64_arg(ctx, s)?,
        None => 0,
    };
    let clen = string::char_length(recv) as i64;
    let start = if start < 0 { start + clen } else { start };
    if start < 0 || start > clen {
        if regexp::is_regexp(args.pos[0]) {
            crate::interp::ops::set_last_match(ctx, Value::NIL);
        }
        return Ok(Value::NIL);
    }
    let bstart = string::char_to_byte(recv, start as usize).unwrap_or(len(recv));
    if regexp::is_regexp(args.pos[0]) {
        return regexp::string_index(ctx, recv, args.pos[0], bstart);
    }
    let o = to_str_arg(ctx, args.pos[0])?;
    string::check_compatible(ctx, recv, o)?;
    match find_at_boundary(recv, bytes(o), bstart) {
        Some(p) => Ok(Value::fixnum(string::byte_to_char_index(recv, p) as i64)),
        None => Ok(Value::NIL),
    }
}

/// Last byte offset `<= limit` where `needle` occurs at a character boundary.
fn rfind_at_boundary(v: Value, needle: &[u8], limit: usize) -> Option<usize> {
    let hay = bytes(v);
    if needle.len() > hay.len() {
        return None;
    }
    let mut p = limit.min(hay.len() - needle.len());
    loop {
        if hay[p..].starts_with(needle) && is_char_boundary(v, p) {
            return Some(p);
        }
        if p == 0 {
            return None;
        }
        p -= 1;
    }
}

fn rindex_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let clen = string::char_length(recv) as i64;
    let start = match args.pos.get(1) {
        Some(&s) => {
            let s = i64_arg(ctx, s)?;
            if s < 0 {
                s + clen
            } else {
                s.min(clen)
            }
        }
        None => clen,
    };
    if start < 0 {
        if regexp::is_regexp(args.pos[0]) {
            crate::interp::ops::set_last_match(ctx, Value::NIL);
        }
        return Ok(Value::NIL);
    }
    let bstart = string::char_to_byte(recv, start as usize).unwrap_or(len(recv));
    if regexp::is_regexp(args.pos[0]) {
        return regexp::string_rindex(ctx, recv, args.pos[0], bstart);
    }
    let o = to_str_arg(ctx, args.pos[0])?;
    string::check_compatible(ctx, recv, o)?;
    match rfind_at_boundary(recv, bytes(o), bstart) {
        Some(p) => Ok(Value::fixnum(string::byte_to_char_index(recv, p) as i64)),
        None => Ok(Value::NIL),
    }
}

fn byteindex(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = len(recv) as i64;
    let start = match args.pos.get(1) {
        Some(&s) => i64_arg(ctx, s)?,
        None => 0,
    };
    let start = if start < 0 { start + n } else { start };
    if start < 0 || start > n {
        if regexp::is_regexp(args.pos[0]) {
            crate::interp::ops::set_last_match(ctx, Value::NIL);
        }
        return Ok(Value::NIL);
    }
    check_byte_boundary(ctx, recv, start as usize)?;
    if regexp::is_regexp(args.pos[0]) {
        let m = regexp::match_at(ctx, args.pos[0], recv, start as usize)?;
        if m.is_nil() {
            return Ok(Value::NIL);
        }
        let off = ctx.call_str(m, "byteoffset", &[Value::fixnum(0)])?;
        return Ok(array::get(off, 0));
    }
    let o = to_str_arg(ctx, args.pos[0])?;
    string::check_compatible(ctx, recv, o)?;
    Ok(match find_at_boundary(recv, bytes(o), start as usize) {
        Some(p) => Value::fixnum(p as i64),
        None => Value::NIL,
    })
}

fn byterindex(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = len(recv) as i64;
    let start = match args.pos.get(1) {
        Some(&s) => {
            let s = i64_arg(ctx, s)?;
            if s < 0 {
                s + n
            } else {
                s.min(n)
            }
        }
        None => n,
    };
    if start < 0 {
        if regexp::is_regexp(args.pos[0]) {
            crate::interp::ops::set_last_match(ctx, Value::NIL);
        }
        return Ok(Value::NIL);
    }
    check_byte_boundary(ctx, recv, start as usize)?;
    if regexp::is_regexp(args.pos[0]) {
        let r = regexp::string_rindex(ctx, recv, args.pos[0], start as usize)?;
        if r.is_nil() {
            return Ok(r);
        }
        let ci = r.as_fixnum().unwrap_or(0) as usize;
        return Ok(Value::fixnum(string::char_to_byte(recv, ci).unwrap_or(0) as i64));
    }
    let o = to_str_arg(ctx, args.pos[0])?;
    string::check_compatible(ctx, recv, o)?;
    Ok(match rfind_at_boundary(recv, bytes(o), start as usize) {
        Some(p) => Value::fixnum(p as i64),
        None => Value::NIL,
    })
}

// ---- trimming ----

fn is_strip_space(c: u32) -> bool {
    matches!(c, 0 | 0x09..=0x0d | 0x20)
}

/// Byte range left after stripping whitespace (and NULs) from the chosen ends.
fn strip_range(v: Value, left: bool, right: bool) -> (usize, usize) {
    let b = bytes(v);
    let enc = encoding(v);
    let mut s = 0;
    let mut e = b.len();
    if encoding::is_ascii_compatible(enc) {
        if left {
            while s < e && is_strip_space(b[s] as u32) {
                s += 1;
            }
        }
        if right {
            while e > s && is_strip_space(b[e - 1] as u32) {
                e -= 1;
            }
        }
        return (s, e);
    }
    let offs = encoding::char_offsets(enc, b);
    let cp = |i: usize| encoding::codepoint_at(enc, b, offs[i]).0;
    let (mut lo, mut hi) = (0, offs.len() - 1);
    if left {
        while lo < hi && is_strip_space(cp(lo)) {
            lo += 1;
        }
    }
    if right {
        while hi > lo && is_strip_space(cp(hi - 1)) {
            hi -= 1;
        }
    }
    (offs[lo], offs[hi])
}

fn strip_impl(ctx: &mut Ctx, recv: Value, left: bool, right: bool) -> Value {
    let (s, e) = strip_range(recv, left, right);
    new_like_from_slice(ctx, recv, &bytes(recv)[s..e])
}

fn strip_bang_impl(ctx: &mut Ctx, recv: Value, left: bool, right: bool) -> Result<Value> {
    modify(ctx, recv)?;
    let (s, e) = strip_range(recv, left, right);
    if s == 0 && e == len(recv) {
        return Ok(Value::NIL);
    }
    let piece = bytes(recv)[s..e].to_vec();
    string::set_bytes(recv, piece);
    Ok(recv)
}

fn strip(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(strip_impl(ctx, recv, true, true))
}
fn lstrip(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(strip_impl(ctx, recv, true, false))
}
fn rstrip(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(strip_impl(ctx, recv, false, true))
}
fn strip_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    strip_bang_impl(ctx, recv, true, true)
}
fn lstrip_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    strip_bang_impl(ctx, recv, true, false)
}
fn rstrip_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    strip_bang_impl(ctx, recv, false, true)
}

/// Length of `recv` after `chomp(args)`.
fn chomp_len(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<usize> {
    let sep = match args.pos.first() {
        None => {
            let rs = crate::core::globals::get(ctx, sym::DOLLAR_SLASH)?;
            if rs.is_nil() {
                return Ok(len(recv));
            }
            Some(to_str_arg(ctx, rs)?)
        }
        Some(&s) if s.is_nil() => return Ok(len(recv)),
        Some(&s) => Some(to_str_arg(ctx, s)?),
    };
    let b = bytes(recv);
    let sb: &[u8] = sep.map_or(b"\n", bytes);
    let enc = encoding(recv);
    if sb == b"\n" && !encoding::is_ascii_compatible(enc) {
        return Ok(without_newline(enc, b));
    }
    if sb == b"\n" {
        return Ok(if b.ends_with(b"\r\n") {
            b.len() - 2
        } else if b.ends_with(b"\n") || b.ends_with(b"\r") {
            b.len() - 1
        } else {
            b.len()
        });
    }
    if sb.is_empty() {
        let mut e = b.len();
        while e > 0 && b[e - 1] == b'\n' {
            e -= 1;
            if e > 0 && b[e - 1] == b'\r' {
                e -= 1;
            }
        }
        return Ok(e);
    }
    if b.ends_with(sb) && is_char_boundary(recv, b.len() - sb.len()) {
        return Ok(b.len() - sb.len());
    }
    Ok(b.len())
}

fn chomp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = chomp_len(ctx, recv, args)?;
    Ok(new_like_from_slice(ctx, recv, &bytes(recv)[..n]))
}

fn chomp_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let n = chomp_len(ctx, recv, args)?;
    if n == len(recv) {
        return Ok(Value::NIL);
    }
    bytes_mut(recv).truncate(n);
    Ok(recv)
}

/// The length of `b` (in a non-ASCII-compatible encoding) without a final CR LF, LF or
/// CR character.
fn without_newline(enc: u8, b: &[u8]) -> usize {
    let offs = encoding::char_offsets(enc, b);
    let n = offs.len() - 1;
    let cp = |k: usize| encoding::codepoint_at(enc, b, offs[k]).0;
    if n == 0 {
        return b.len();
    }
    match cp(n - 1) {
        0x0A if n >= 2 && cp(n - 2) == 0x0D => offs[n - 2],
        0x0A | 0x0D => offs[n - 1],
        _ => b.len(),
    }
}

fn chop_len(v: Value) -> usize {
    let b = bytes(v);
    if b.is_empty() {
        return 0;
    }
    let enc = encoding(v);
    if !encoding::is_ascii_compatible(enc) && encoding::is_unicode(enc) {
        let offs = encoding::char_offsets(enc, b);
        let n = offs.len() - 1;
        if n >= 2 && encoding::codepoint_at(enc, b, offs[n - 1]).0 == 0x0A && encoding::codepoint_at(enc, b, offs[n - 2]).0 == 0x0D {
            return offs[n - 2];
        }
        return offs[n - 1];
    }
    if b.ends_with(b"\r\n") {
        return b.len() - 2;
    }
    let enc = encoding(v);
    if encoding::is_single_byte(enc) {
        return b.len() - 1;
    }
    let offs = encoding::char_offsets(enc, b);
    offs[offs.len() - 2]
}

fn chop(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let n = chop_len(recv);
    Ok(new_like_from_slice(ctx, recv, &bytes(recv)[..n]))
}

fn chop_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    if len(recv) == 0 {
        return Ok(Value::NIL);
    }
    let n = chop_len(recv);
    bytes_mut(recv).truncate(n);
    Ok(recv)
}

fn prefix_len(ctx: &mut Ctx, recv: Value, arg: Value) -> Result<usize> {
    let p = to_str_arg(ctx, arg)?;
    string::check_compatible(ctx, recv, p)?;
    Ok(if bytes(recv).starts_with(bytes(p)) && is_char_boundary(recv, len(p)) { len(p) } else { 0 })
}

fn suffix_len(ctx: &mut Ctx, recv: Value, arg: Value) -> Result<usize> {
    let p = to_str_arg(ctx, arg)?;
    string::check_compatible(ctx, recv, p)?;
    Ok(if bytes(recv).ends_with(bytes(p)) && is_char_boundary(recv, len(recv) - len(p)) { len(p) } else { 0 })
}

fn delete_prefix(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = prefix_len(ctx, recv, args.pos[0])?;
    Ok(new_like_from_slice(ctx, recv, &bytes(recv)[n..]))
}

fn delete_prefix_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let n = prefix_len(ctx, recv, args.pos[0])?;
    if n == 0 {
        return Ok(Value::NIL);
    }
    bytes_mut(recv).remove_prefix(n);
    Ok(recv)
}

fn delete_suffix(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = suffix_len(ctx, recv, args.pos[0])?;
    Ok(new_like_from_slice(ctx, recv, &bytes(recv)[..len(recv) - n]))
}

fn delete_suffix_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let n = suffix_len(ctx, recv, args.pos[0])?;
    if n == 0 {
        return Ok(Value::NIL);
    }
    let l = len(recv);
    bytes_mut(recv).truncate(l - n);
    Ok(recv)
}

// ---- justification ----

fn justify(ctx: &mut Ctx, recv: Value, args: &Args, mode: u8) -> Result<Value> {
    let width = i64_arg(ctx, args.pos[0])?;
    let pad = match args.pos.get(1) {
        Some(&p) => to_str_arg(ctx, p)?,
        None => string::new_us_ascii(ctx, " "),
    };
    let enc = string::check_compatible(ctx, recv, pad)?;
    let pb = bytes(pad).to_vec();
    if pb.is_empty() {
        return Err(ctx.arg_error("zero width padding"));
    }
    let clen = string::char_length(recv) as i64;
    if width <= clen {
        let copy = bytes(recv).to_vec();
        return Ok(new_with_enc(ctx, copy, enc));
    }
    let total = (width - clen) as usize;
    if total as u128 * pb.len() as u128 >= 1u128 << 40 {
        return Err(ctx.arg_error("argument too big"));
    }
    let (left, right) = match mode {
        b'l' => (0, total),
        b'r' => (total, 0),
        _ => (total / 2, total - total / 2),
    };
    let offs = encoding::char_offsets(encoding(pad), &pb);
    let pad_chars: Vec<&[u8]> = offs.windows(2).map(|w| &pb[w[0]..w[1]]).collect();
    // `n` pad characters: whole copies of the pad string by doubling (widths reach the
    // billions), then the first characters of one more copy.
    let make = |n: usize, out: &mut Vec<u8>| {
        let whole = (n / pad_chars.len()) * pb.len();
        let start = out.len();
        if whole > 0 {
            out.extend_from_slice(&pb);
            while out.len() - start < whole {
                let have = out.len() - start;
                out.extend_from_within(start..start + have.min(whole - have));
            }
        }
        for c in &pad_chars[..n % pad_chars.len()] {
            out.extend_from_slice(c);
        }
    };
    let mut out = Vec::new();
    ctx.try_reserve(&mut out, len(recv) + total * pb.len())?;
    make(left, &mut out);
    out.extend_from_slice(bytes(recv));
    make(right, &mut out);
    Ok(new_with_enc(ctx, out, enc))
}

fn center(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    justify(ctx, recv, args, b'c')
}
fn ljust(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    justify(ctx, recv, args, b'l')
}
fn rjust(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    justify(ctx, recv, args, b'r')
}

// ---- misc ----

fn reversed(v: Value) -> Vec<u8> {
    let enc = encoding(v);
    let b = bytes(v);
    if encoding::is_single_byte(enc) || string::is_7bit(v) {
        let mut out = b.to_vec();
        out.reverse();
        return out;
    }
    let offs = encoding::char_offsets(enc, b);
    let mut out = Vec::with_capacity(b.len());
    for w in offs.windows(2).rev() {
        out.extend_from_slice(&b[w[0]..w[1]]);
    }
    out
}

fn reverse(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = reversed(recv);
    Ok(new_like(ctx, recv, out))
}

fn reverse_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let out = reversed(recv);
    string::set_bytes(recv, out);
    Ok(recv)
}

fn freeze_m(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object::freeze(recv))
}

fn uplus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if object::is_frozen(recv) || string::is_chilled(recv) {
        Ok(string::dup_literal(ctx, recv))
    } else {
        Ok(recv)
    }
}

/// `-str` / `dedup`: the VM-wide frozen copy of an equal string (CRuby's fstring table,
/// kept as a Hash in a hidden instance variable of String).
fn uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    fstring(ctx, recv)
}

/// The interned frozen String equal to `recv` (registering `recv` or a frozen copy).
pub fn fstring(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let klass = ctx.c().string;
    let id = ctx.intern("__fstrings__");
    let mut table = object::ivar_get(ctx, klass, id);
    if !hash::is_hash(table) {
        table = hash::new(ctx);
        object::ivar_set_raw(ctx, klass, id, table);
    }
    let plain = object::real_class_of(ctx, recv) == klass;
    if plain {
        if let Some(v) = hash::lookup(ctx, table, recv)? {
            if string::encoding(v) == string::encoding(recv) {
                return Ok(v);
            }
        }
    }
    let f = if object::is_frozen(recv) && plain && !string::is_chilled(recv) {
        recv
    } else {
        let s = string::dup_literal(ctx, recv);
        object::freeze(s)
    };
    hash::insert_raw(ctx, table, f, f)?;
    Ok(f)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Unsafe, Singleton, Kw),
        ("try_convert", s_try_convert, [1], Safe, Singleton),
        ("initialize", initialize, [0..=1], Unsafe, Private, Kw),
        ("initialize_copy", initialize_copy, [1], Unsafe, Private),
        ("+", plus, [1], Safe),
        ("*", mul, [1], Safe),
        ("%", format_op, [1], Unsafe),
        ("==", op_eq, [1], Safe),
        ("===", op_eq, [1], Safe),
        ("eql?", op_eql, [1], Safe),
        ("hash", op_hash, [0], Safe),
        ("<=>", op_cmp, [1], Safe),
        ("length", length, [0], Safe),
        ("size", length, [0], Safe),
        ("bytesize", bytesize, [0], Safe),
        ("empty?", empty_p, [0], Safe),
        ("to_s", to_s_m, [0], Safe),
        ("to_str", to_s_m, [0], Safe),
        ("concat", concat_m, [0..], Unsafe),
        ("<<", lshift, [1], Unsafe),
        ("prepend", prepend, [0..], Unsafe),
        ("insert", insert, [2], Unsafe),
        ("replace", replace, [1], Unsafe),
        ("clear", clear, [0], Unsafe),
        ("[]", aref, [1..=2], Safe),
        ("slice", aref, [1..=2], Safe),
        ("[]=", aset, [2..=3], Unsafe),
        ("byteslice", byteslice, [1..=2], Safe),
        ("bytesplice", bytesplice, [0..], Unsafe),
        ("getbyte", getbyte, [1], Safe),
        ("setbyte", setbyte, [2], Unsafe),
        ("include?", include_p, [1], Safe),
        ("start_with?", start_with, [0..], Safe),
        ("end_with?", end_with, [0..], Safe),
        ("index", index_m, [1..=2], Safe),
        ("rindex", rindex_m, [1..=2], Safe),
        ("byteindex", byteindex, [1..=2], Safe),
        ("byterindex", byterindex, [1..=2], Safe),
        ("strip", strip, [0], Safe),
        ("lstrip", lstrip, [0], Safe),
        ("rstrip", rstrip, [0], Safe),
        ("strip!", strip_bang, [0], Unsafe),
        ("lstrip!", lstrip_bang, [0], Unsafe),
        ("rstrip!", rstrip_bang, [0], Unsafe),
        ("chomp", chomp, [0..=1], Safe),
        ("chomp!", chomp_bang, [0..=1], Unsafe),
        ("chop", chop, [0], Safe),
        ("chop!", chop_bang, [0], Unsafe),
        ("delete_prefix", delete_prefix, [1], Safe),
        ("delete_prefix!", delete_prefix_bang, [1], Unsafe),
        ("delete_suffix", delete_suffix, [1], Safe),
        ("delete_suffix!", delete_suffix_bang, [1], Unsafe),
        ("center", center, [1..=2], Safe),
        ("ljust", ljust, [1..=2], Safe),
        ("rjust", rjust, [1..=2], Safe),
        ("reverse", reverse, [0], Safe),
        ("reverse!", reverse_bang, [0], Unsafe),
        ("freeze", freeze_m, [0], Unsafe),
        ("+@", uplus, [0], Safe),
        ("-@", uminus, [0], Unsafe),
        ("dedup", uminus, [0], Unsafe),
    ]);
}
