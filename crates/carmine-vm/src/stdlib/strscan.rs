//! `strscan`: StringScanner, lexical scanning over a String (strscan 3.1.3, Ruby 3.4).
//!
//! Invariants:
//! - `curr` is a byte offset into `string`; it may exceed the string's length only after
//!   the string shrank under the scanner (every method then treats the scanner as at its
//!   end).
//! - After a successful match `matched` is true, `groups` holds the byte ranges of the
//!   match and its groups (absolute offsets into `string`; a getch/get_byte "match" has
//!   one range), `regexp` the pattern when it was a Regexp (for named groups, else nil),
//!   and `prev` the position before the match (unscan goes back to it). A failed match
//!   clears `matched`.
//! - Without fixed_anchor, a pattern sees the rest of the string as its whole subject
//!   (`\A`, `^` and lookbehind stop at `curr`); with fixed_anchor, the whole string.

use crate::core::{array, encoding, hash, object, regexp, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct Scanner {
    string: Value,
    curr: usize,
    prev: usize,
    matched: bool,
    groups: Vec<Option<(usize, usize)>>,
    regexp: Value,
    fixed_anchor: bool,
    initialized: bool,
}

crate::data_obj!(Scanner, |s, m| {
    m.mark(s.string);
    m.mark(s.regexp);
});

fn alloc(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let sc = Scanner { string: Value::NIL, curr: 0, prev: 0, matched: false, groups: Vec::new(), regexp: Value::NIL, fixed_anchor: false, initialized: false };
    Ok(object::new_data(ctx, klass, Box::new(sc)))
}

fn sc<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut Scanner> {
    match data_ref::<Scanner>(v) {
        Some(s) if s.initialized => Ok(s),
        Some(_) => Err(ctx.arg_error("uninitialized StringScanner object")),
        None => {
            let cname = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {cname} (expected StringScanner)")))
        }
    }
}

impl Scanner {
    fn len(&self) -> usize {
        string::len(self.string)
    }
    fn eos(&self) -> bool {
        self.curr >= self.len()
    }
    fn clear_match(&mut self) {
        self.matched = false;
    }
    fn set_match(&mut self, from: usize, to: usize) {
        self.matched = true;
        self.prev = from;
        self.groups = vec![Some((from, to))];
        self.regexp = Value::NIL;
    }
    fn match_range(&self) -> Option<(usize, usize)> {
        if self.matched {
            self.groups.first().copied().flatten()
        } else {
            None
        }
    }
}

/// A new String of the scanned string's encoding from bytes `from..to` (clamped).
fn substr(ctx: &mut Ctx, s: Value, from: usize, to: usize) -> Value {
    let b = string::bytes(s);
    let to = to.min(b.len());
    let from = from.min(to);
    let piece = b[from..to].to_vec();
    string::new_with_enc(ctx, piece, string::encoding(s))
}

fn scan_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    let obj = ctx.c().object;
    let id = ctx.intern("StringScanner");
    let k = crate::core::module::body(obj).const_get(id).map(|e| e.value).unwrap_or(Value::NIL);
    let eid = ctx.intern("Error");
    let e = crate::core::module::body(k).const_get(eid).map(|e| e.value).unwrap_or(ctx.c().standard_error);
    ctx.raise(e, msg)
}

fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let mut fixed = false;
    if let Some(kw) = args.kw {
        let id = ctx.intern("fixed_anchor");
        fixed = hash::get(kw, Value::symbol(id)).is_some_and(|v| v.truthy());
    }
    let Some(d) = data_ref::<Scanner>(recv) else { return Err(ctx.type_error("wrong argument type (expected StringScanner)")) };
    *d = Scanner { string: s, curr: 0, prev: 0, matched: false, groups: Vec::new(), regexp: Value::NIL, fixed_anchor: fixed, initialized: true };
    Ok(Value::NIL)
}

fn m_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if other == recv {
        return Ok(recv);
    }
    let o = sc(ctx, other)?;
    let copy = Scanner { string: o.string, curr: o.curr, prev: o.prev, matched: o.matched, groups: o.groups.clone(), regexp: o.regexp, fixed_anchor: o.fixed_anchor, initialized: true };
    let Some(d) = data_ref::<Scanner>(recv) else { return Err(ctx.type_error("wrong argument type (expected StringScanner)")) };
    *d = copy;
    Ok(recv)
}

/// What a scanning method does with a match: move past it, and answer the string
/// (from the old position to the match's end) or its length.
#[derive(Clone, Copy)]
struct Mode {
    advance: bool,
    get_string: bool,
    head_only: bool,
}

fn scan(ctx: &mut Ctx, recv: Value, pattern: Value, mode: Mode) -> Result<Value> {
    let d = sc(ctx, recv)?;
    d.clear_match();
    if d.curr > d.len() {
        return Ok(Value::NIL);
    }
    let (s, curr, fixed) = (d.string, d.curr, d.fixed_anchor);
    let (groups, re) = if regexp::is_regexp(pattern) {
        let base = if fixed { 0 } else { curr };
        match regexp::match_in(ctx, pattern, s, base, curr, mode.head_only)? {
            Some(g) => (g, pattern),
            None => return Ok(Value::NIL),
        }
    } else {
        let p = string::to_str_arg(ctx, pattern)?;
        string::check_compatible(ctx, s, p)?;
        let (hay, needle) = (&string::bytes(s)[curr..], string::bytes(p));
        let at = if mode.head_only {
            hay.starts_with(needle).then_some(0)
        } else {
            hay.windows(needle.len().max(1)).position(|w| w == needle).or((needle.is_empty()).then_some(0))
        };
        match at {
            Some(i) => (vec![Some((curr + i, curr + i + needle.len()))], Value::NIL),
            None => return Ok(Value::NIL),
        }
    };
    let end = groups[0].map(|g| g.1).unwrap_or(curr);
    let d = sc(ctx, recv)?;
    d.matched = true;
    d.prev = curr;
    d.groups = groups;
    d.regexp = re;
    if mode.advance {
        d.curr = end;
    }
    if mode.get_string {
        Ok(substr(ctx, s, curr, end))
    } else {
        Ok(Value::fixnum((end - curr) as i64))
    }
}

macro_rules! scanning {
    ($( $f:ident: $advance:expr, $get:expr, $head:expr; )*) => {
        $(
            fn $f(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
                scan(ctx, recv, args.pos[0], Mode { advance: $advance, get_string: $get, head_only: $head })
            }
        )*
    };
}

scanning! {
    m_scan: true, true, true;
    m_match_p: false, false, true;
    m_skip: true, false, true;
    m_check: false, true, true;
    m_scan_until: true, true, false;
    m_exist_p: false, false, false;
    m_skip_until: true, false, false;
    m_check_until: false, true, false;
}

/// `scan_full(pattern, advance, return_string)`.
fn m_scan_full(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    scan(ctx, recv, args.pos[0], Mode { advance: args.pos[1].truthy(), get_string: args.pos[2].truthy(), head_only: true })
}

/// `search_full(pattern, advance, return_string)`.
fn m_search_full(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    scan(ctx, recv, args.pos[0], Mode { advance: args.pos[1].truthy(), get_string: args.pos[2].truthy(), head_only: false })
}

fn m_getch(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    d.clear_match();
    if d.eos() {
        return Ok(Value::NIL);
    }
    let s = d.string;
    let n = encoding::char_len(string::encoding(s), string::bytes(s), d.curr).max(1).min(d.len() - d.curr);
    let from = d.curr;
    d.set_match(from, from + n);
    d.curr += n;
    Ok(substr(ctx, s, from, from + n))
}

fn m_get_byte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    d.clear_match();
    if d.eos() {
        return Ok(Value::NIL);
    }
    let (s, from) = (d.string, d.curr);
    d.set_match(from, from + 1);
    d.curr += 1;
    Ok(substr(ctx, s, from, from + 1))
}

fn m_scan_byte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    d.clear_match();
    if d.eos() {
        return Ok(Value::NIL);
    }
    let from = d.curr;
    let byte = string::bytes(d.string)[from];
    d.set_match(from, from + 1);
    d.curr += 1;
    Ok(Value::fixnum(byte as i64))
}

fn m_peek_byte(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    Ok(string::bytes(d.string).get(d.curr).map_or(Value::NIL, |&b| Value::fixnum(b as i64)))
}

/// `scan_integer(base: 10)`: an optionally signed decimal or hexadecimal (an optional
/// "0x") integer at the current position.
fn m_scan_integer(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut base = 10;
    if let Some(kw) = args.kw {
        let id = ctx.intern("base");
        if let Some(v) = hash::get(kw, Value::symbol(id)) {
            base = crate::core::integer::to_i64_arg(ctx, v)?;
        }
    }
    if base != 10 && base != 16 {
        return Err(ctx.arg_error(&format!("Unsupported integer base: {base}, expected 10 or 16")));
    }
    let d = sc(ctx, recv)?;
    let s = d.string;
    let enc = string::encoding(s);
    if !encoding::is_ascii_compatible(enc) {
        let msg = format!("ASCII incompatible encoding: {}", encoding::name(enc));
        return Err(ctx.raise(ctx.c().compatibility_error, &msg));
    }
    d.clear_match();
    let b = string::bytes(s);
    let start = d.curr;
    let mut i = start;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let sign_end = i;
    if base == 16 && b.len() >= i + 3 && b[i] == b'0' && (b[i + 1] == b'x' || b[i + 1] == b'X') && b[i + 2].is_ascii_hexdigit() {
        i += 2;
    }
    let digits_start = i;
    let is_digit = |c: u8| if base == 16 { c.is_ascii_hexdigit() } else { c.is_ascii_digit() };
    while i < b.len() && is_digit(b[i]) {
        i += 1;
    }
    if i == digits_start {
        return Ok(Value::NIL);
    }
    let mut text: Vec<u8> = b[start..sign_end].to_vec();
    text.extend_from_slice(&b[digits_start..i]);
    d.set_match(start, i);
    d.curr = i;
    let t = string::new_from_bytes(ctx, &text);
    ctx.call_str(t, "to_i", &[Value::fixnum(base)])
}

fn m_peek(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative string size (or size too big)"));
    }
    let d = sc(ctx, recv)?;
    let (s, from) = (d.string, d.curr);
    Ok(substr(ctx, s, from, from.saturating_add(n as usize)))
}

fn m_unscan(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    if !d.matched {
        return Err(scan_error(ctx, "unscan error: not scanned yet"));
    }
    d.curr = d.prev;
    d.clear_match();
    Ok(recv)
}

fn m_pos(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(sc(ctx, recv)?.curr as i64))
}

fn m_set_pos(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let d = sc(ctx, recv)?;
    let len = d.len() as i64;
    if i < 0 {
        i += len;
    }
    if i < 0 || i > len {
        let c = ctx.c().range_error;
        return Err(ctx.raise(c, "index out of range"));
    }
    d.curr = i as usize;
    Ok(Value::fixnum(i))
}

fn m_charpos(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    let b = string::bytes(d.string);
    let n = encoding::char_count(string::encoding(d.string), &b[..d.curr.min(b.len())]);
    Ok(Value::fixnum(n as i64))
}

fn m_reset(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    d.curr = 0;
    d.clear_match();
    Ok(recv)
}

fn m_terminate(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    d.curr = d.len();
    d.clear_match();
    Ok(recv)
}

fn m_string(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(sc(ctx, recv)?.string)
}

fn m_set_string(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let d = sc(ctx, recv)?;
    d.string = s;
    d.curr = 0;
    d.clear_match();
    Ok(s)
}

fn m_concat(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let add = string::to_str_arg(ctx, args.pos[0])?;
    let s = sc(ctx, recv)?.string;
    ctx.call_str(s, "concat", &[add])?;
    Ok(recv)
}

fn m_eos_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(sc(ctx, recv)?.eos()))
}

fn m_rest_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(!sc(ctx, recv)?.eos()))
}

fn m_rest(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    let (s, from, to) = (d.string, d.curr, d.len());
    Ok(substr(ctx, s, from, to))
}

fn m_rest_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    Ok(Value::fixnum(d.len().saturating_sub(d.curr) as i64))
}

fn m_bol_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    if d.curr > d.len() {
        return Ok(Value::NIL);
    }
    Ok(Value::bool(d.curr == 0 || string::bytes(d.string)[d.curr - 1] == b'\n'))
}

fn m_fixed_anchor_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(sc(ctx, recv)?.fixed_anchor))
}

fn m_matched_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(sc(ctx, recv)?.matched))
}

fn m_matched(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    let s = d.string;
    match d.match_range() {
        Some((a, b)) => Ok(substr(ctx, s, a, b)),
        None => Ok(Value::NIL),
    }
}

fn m_matched_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(sc(ctx, recv)?.match_range().map_or(Value::NIL, |(a, b)| Value::fixnum((b - a) as i64)))
}

fn m_pre_match(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    let s = d.string;
    match d.match_range() {
        Some((a, _)) => Ok(substr(ctx, s, 0, a)),
        None => Ok(Value::NIL),
    }
}

fn m_post_match(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    let (s, len) = (d.string, d.len());
    match d.match_range() {
        Some((_, b)) => Ok(substr(ctx, s, b, len)),
        None => Ok(Value::NIL),
    }
}

fn group_value(ctx: &mut Ctx, d: &Scanner, i: usize) -> Value {
    match d.groups.get(i).copied().flatten() {
        Some((a, b)) => substr(ctx, d.string, a, b),
        None => Value::NIL,
    }
}

/// The group number of a `[]` argument: an Integer (negative from the end), or a
/// group name (String or Symbol). None: no such group (nil).
fn group_index(ctx: &mut Ctx, d: &Scanner, key: Value) -> Result<Option<usize>> {
    if key.is_symbol() || string::is_string(key) {
        let name = match key.as_symbol() {
            Some(id) => String::from_utf8_lossy(&ctx.sym_name(id)).into_owned(),
            None => string::to_rust_string_lossy(key),
        };
        let found = if d.regexp.is_nil() { None } else { regexp::group_names(d.regexp).into_iter().find(|(n, _)| *n == name) };
        let Some((_, nums)) = found else {
            let c = ctx.c().index_error;
            return Err(ctx.raise(c, &format!("undefined group name reference: {name}")));
        };
        // The last group of that name that took part in the match.
        let g = nums.iter().rev().find(|&&g| d.groups.get(g).copied().flatten().is_some()).or(nums.last());
        return Ok(g.copied());
    }
    let mut i = crate::core::integer::to_i64_arg(ctx, key)?;
    let n = d.groups.len() as i64;
    if i < 0 {
        i += n;
    }
    Ok((0..n).contains(&i).then_some(i as usize))
}

fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    if !d.matched {
        return Ok(Value::NIL);
    }
    match group_index(ctx, d, args.pos[0])? {
        Some(i) => Ok(group_value(ctx, d, i)),
        None => Ok(Value::NIL),
    }
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    Ok(if d.matched { Value::fixnum(d.groups.len() as i64) } else { Value::NIL })
}

fn m_captures(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    if !d.matched {
        return Ok(Value::NIL);
    }
    let out = array::new(ctx);
    let mark = ctx.protect(out);
    for i in 1..d.groups.len() {
        let v = group_value(ctx, d, i);
        array::push(ctx, out, v);
    }
    ctx.unprotect(mark);
    Ok(out)
}

fn m_values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    if !d.matched {
        return Ok(Value::NIL);
    }
    let out = array::new(ctx);
    let mark = ctx.protect(out);
    let mut r = Ok(out);
    for &k in args.pos {
        match group_index(ctx, d, k) {
            Ok(i) => {
                let v = i.map_or(Value::NIL, |i| group_value(ctx, d, i));
                array::push(ctx, out, v);
            }
            Err(e) => {
                r = Err(e);
                break;
            }
        }
    }
    ctx.unprotect(mark);
    r
}

fn m_named_captures(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = sc(ctx, recv)?;
    let h = hash::new(ctx);
    if !d.matched || d.regexp.is_nil() {
        return Ok(h);
    }
    let mark = ctx.protect(h);
    let mut r = Ok(h);
    for (name, nums) in regexp::group_names(d.regexp) {
        let g = nums.iter().rev().find(|&&g| d.groups.get(g).copied().flatten().is_some()).or(nums.last()).copied();
        let k = string::new_utf8(ctx, &name);
        ctx.protect(k);
        let v = g.map_or(Value::NIL, |g| group_value(ctx, d, g));
        if let Err(e) = hash::aset(ctx, h, k, v) {
            r = Err(e);
            break;
        }
    }
    ctx.unprotect(mark);
    r
}

/// "#<StringScanner 4/14 \"This\" @ \" is a...\">": up to five bytes either side.
fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let Some(d) = data_ref::<Scanner>(recv).filter(|d| d.initialized) else {
        return Ok(string::new_utf8(ctx, &format!("#<{cname} (uninitialized)>")));
    };
    if d.eos() {
        return Ok(string::new_utf8(ctx, &format!("#<{cname} fin>")));
    }
    let b = string::bytes(d.string);
    let enc = string::encoding(d.string);
    let show = |bytes: Vec<u8>| String::from_utf8_lossy(&string::inspect_bytes(&bytes, enc)).into_owned();
    let after = {
        let rest = &b[d.curr..];
        let mut v = rest[..rest.len().min(5)].to_vec();
        if rest.len() > 5 {
            v.extend_from_slice(b"...");
        }
        show(v)
    };
    let s = if d.curr == 0 {
        format!("#<{cname} {}/{} @ {after}>", d.curr, b.len())
    } else {
        let mut v = Vec::new();
        if d.curr > 5 {
            v.extend_from_slice(b"...");
        }
        v.extend_from_slice(&b[d.curr.saturating_sub(5)..d.curr]);
        format!("#<{cname} {}/{} {} @ {after}>", d.curr, b.len(), show(v))
    };
    Ok(string::new_utf8(ctx, &s))
}

fn s_must_c_version(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let k = crate::core::module_methods::define_class_under(ctx, obj, "StringScanner", obj);
    crate::core::module::body(k).alloc = crate::core::module::AllocKind::Data(alloc);
    let std_err = ctx.c().standard_error;
    let err = crate::core::module_methods::define_class_under(ctx, k, "Error", std_err);
    let scan_error = ctx.intern("ScanError");
    if crate::core::module::body(obj).const_get(scan_error).is_none() {
        crate::core::module::body(obj).const_set(scan_error, err);
    }
    for (name, value) in [("Version", "3.1.3"), ("Id", "$Id$")] {
        let v = string::new_utf8(ctx, value);
        let v = object::freeze(v);
        let id = ctx.intern(name);
        crate::core::module::body(k).const_set(id, v);
    }
    crate::methods!(ctx, k, [
        ("initialize", m_initialize, [1..=2], Unsafe, Private, Kw),
        ("initialize_copy", m_initialize_copy, [1], Unsafe, Private),
        ("scan", m_scan, [1], Unsafe),
        ("match?", m_match_p, [1], Unsafe),
        ("skip", m_skip, [1], Unsafe),
        ("check", m_check, [1], Unsafe),
        ("scan_full", m_scan_full, [3], Unsafe),
        ("scan_until", m_scan_until, [1], Unsafe),
        ("exist?", m_exist_p, [1], Unsafe),
        ("skip_until", m_skip_until, [1], Unsafe),
        ("check_until", m_check_until, [1], Unsafe),
        ("search_full", m_search_full, [3], Unsafe),
        ("getch", m_getch, [0], Unsafe),
        ("get_byte", m_get_byte, [0], Unsafe),
        ("getbyte", m_get_byte, [0], Unsafe),
        ("scan_byte", m_scan_byte, [0], Unsafe),
        ("peek_byte", m_peek_byte, [0], Unsafe),
        ("scan_integer", m_scan_integer, [0], Unsafe, Kw),
        ("peek", m_peek, [1], Unsafe),
        ("peep", m_peek, [1], Unsafe),
        ("unscan", m_unscan, [0], Unsafe),
        ("pos", m_pos, [0], Unsafe),
        ("pointer", m_pos, [0], Unsafe),
        ("pos=", m_set_pos, [1], Unsafe),
        ("pointer=", m_set_pos, [1], Unsafe),
        ("charpos", m_charpos, [0], Unsafe),
        ("reset", m_reset, [0], Unsafe),
        ("terminate", m_terminate, [0], Unsafe),
        ("clear", m_terminate, [0], Unsafe),
        ("string", m_string, [0], Unsafe),
        ("string=", m_set_string, [1], Unsafe),
        ("concat", m_concat, [1], Unsafe),
        ("<<", m_concat, [1], Unsafe),
        ("eos?", m_eos_p, [0], Unsafe),
        ("empty?", m_eos_p, [0], Unsafe),
        ("rest?", m_rest_p, [0], Unsafe),
        ("rest", m_rest, [0], Unsafe),
        ("rest_size", m_rest_size, [0], Unsafe),
        ("restsize", m_rest_size, [0], Unsafe),
        ("beginning_of_line?", m_bol_p, [0], Unsafe),
        ("bol?", m_bol_p, [0], Unsafe),
        ("fixed_anchor?", m_fixed_anchor_p, [0], Unsafe),
        ("matched?", m_matched_p, [0], Unsafe),
        ("matched", m_matched, [0], Unsafe),
        ("matched_size", m_matched_size, [0], Unsafe),
        ("pre_match", m_pre_match, [0], Unsafe),
        ("post_match", m_post_match, [0], Unsafe),
        ("[]", m_aref, [1], Unsafe),
        ("size", m_size, [0], Unsafe),
        ("captures", m_captures, [0], Unsafe),
        ("values_at", m_values_at, [0..], Unsafe),
        ("named_captures", m_named_captures, [0], Unsafe),
        ("inspect", m_inspect, [0], Unsafe),
    ]);
    let meta = object::singleton_class(ctx, k)?;
    crate::methods!(ctx, meta, [
        ("must_C_version", s_must_c_version, [0], Unsafe),
    ]);
    Ok(())
}
