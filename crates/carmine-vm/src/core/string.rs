//! String: a byte vector with an encoding.
//!
//! Invariants:
//! - `RString::bytes` owns the content; the encoding index lives in `RBasic::aux`.
//! - Mutating methods check `FL_FROZEN` first (`ctx.check_frozen`).
//! - Borrowed byte slices (`bytes`) must not be held across a call into Ruby or any
//!   mutation of the same string.

use crate::core::encoding::{self, BINARY, US_ASCII, UTF_8};
use crate::core::{array, object};
use crate::heap::page::SLOT_SIZE;
use crate::interp::Args;
use crate::object::{basic, is_type, ObjType, RBasic};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[repr(C)]
pub struct RString {
    pub basic: RBasic,
    pub bytes: Vec<u8>,
}

const _: () = assert!(std::mem::size_of::<RString>() <= SLOT_SIZE);

#[inline(always)]
fn rstring<'a>(v: Value) -> &'a mut RString {
    debug_assert!(is_string(v));
    // SAFETY: callers pass a String value.
    unsafe { &mut *v.as_ptr::<RString>() }
}

// ---- construction ----

pub fn new_with_enc(ctx: &mut Ctx, bytes: Vec<u8>, enc: u8) -> Value {
    if bytes.capacity() > 256 {
        ctx.note_malloc(bytes.capacity());
    }
    let klass = ctx.c().string;
    let p = ctx.alloc_slot(ObjType::String, klass) as *mut RString;
    // SAFETY: fresh String slot.
    unsafe {
        std::ptr::write(&mut (*p).bytes, bytes);
        (*p).basic.aux = enc as u32;
    }
    Value::from_ptr(p)
}

pub fn new_utf8(ctx: &mut Ctx, s: &str) -> Value {
    new_with_enc(ctx, s.as_bytes().to_vec(), UTF_8)
}

pub fn new_from_bytes(ctx: &mut Ctx, b: &[u8]) -> Value {
    new_with_enc(ctx, b.to_vec(), UTF_8)
}

pub fn new_binary(ctx: &mut Ctx, b: &[u8]) -> Value {
    new_with_enc(ctx, b.to_vec(), BINARY)
}

pub fn new_us_ascii(ctx: &mut Ctx, s: &str) -> Value {
    new_with_enc(ctx, s.as_bytes().to_vec(), US_ASCII)
}

/// A string literal from source (UTF-8 source files).
pub fn new_from_source(ctx: &mut Ctx, b: &[u8]) -> Value {
    new_with_enc(ctx, b.to_vec(), UTF_8)
}

/// A new mutable copy of a (frozen) literal.
pub fn dup_literal(ctx: &mut Ctx, lit: Value) -> Value {
    let enc = encoding(lit);
    let b = bytes(lit).to_vec();
    new_with_enc(ctx, b, enc)
}

pub fn dup_with_class(ctx: &mut Ctx, v: Value, klass: Value) -> Value {
    let s = dup_literal(ctx, v);
    basic(s).klass = klass;
    s
}

// ---- access ----

#[inline]
pub fn is_string(v: Value) -> bool {
    is_type(v, ObjType::String)
}

/// A String whose class is exactly String (so its operators are the builtin ones).
#[inline]
pub fn is_plain_string(v: Value) -> bool {
    is_string(v) && basic(basic(v).klass).has(crate::object::FL_USER1)
}

/// Marks the String class so `is_plain_string` can recognise it without a VM.
pub fn mark_core_class(k: Value) {
    basic(k).flags |= crate::object::FL_USER1;
}

#[inline]
pub fn bytes<'a>(v: Value) -> &'a [u8] {
    &rstring(v).bytes
}

#[inline]
pub fn bytes_mut<'a>(v: Value) -> &'a mut Vec<u8> {
    &mut rstring(v).bytes
}

#[inline]
pub fn encoding(v: Value) -> u8 {
    (basic(v).aux & 0xff) as u8
}

pub fn set_encoding(v: Value, enc: u8) {
    basic(v).aux = (basic(v).aux & !0xff) | enc as u32;
}

pub fn len(v: Value) -> usize {
    rstring(v).bytes.len()
}

pub fn to_rust_string_lossy(v: Value) -> String {
    if !is_string(v) {
        return String::new();
    }
    String::from_utf8_lossy(bytes(v)).into_owned()
}

pub fn eq(a: Value, b: Value) -> bool {
    let (x, y) = (bytes(a), bytes(b));
    x == y && (encoding(a) == encoding(b) || x.is_ascii() || encoding::compatible(encoding(a), x, encoding(b), y).is_some())
}

pub fn eql(a: Value, b: Value) -> bool {
    eq(a, b)
}

pub fn hash_bytes(seed: u64, v: Value) -> u64 {
    let b = bytes(v);
    let mut h = crate::core::hash::hash_bytes(seed, b);
    if !b.is_ascii() {
        h ^= encoding(v) as u64;
    }
    h
}

/// Appends bytes, checking nothing (callers check frozen state).
pub fn append(v: Value, b: &[u8]) {
    rstring(v).bytes.extend_from_slice(b);
}

/// Appends a Ruby string with encoding negotiation.
pub fn append_str(ctx: &mut Ctx, dst: Value, src: Value) -> Result<()> {
    let (de, se) = (encoding(dst), encoding(src));
    if de != se {
        match encoding::compatible(de, bytes(dst), se, bytes(src)) {
            Some(e) => set_encoding(dst, e),
            None => {
                return Err(ctx.raise(ctx.c().compatibility_error, &format!("incompatible character encodings: {} and {}", encoding::name(de), encoding::name(se))));
            }
        }
    }
    let extra = bytes(src).to_vec();
    rstring(dst).bytes.extend_from_slice(&extra);
    Ok(())
}

/// Concatenates interpolation parts into a new String.
pub fn concat_parts(ctx: &mut Ctx, parts: &[Value]) -> Result<Value> {
    let total: usize = parts.iter().map(|&p| len(p)).sum();
    let mut enc = parts.first().map_or(UTF_8, |&p| encoding(p));
    let mut out = Vec::with_capacity(total);
    for (i, &p) in parts.iter().enumerate() {
        let b = bytes(p);
        if i > 0 && encoding(p) != enc {
            match encoding::compatible(enc, &out, encoding(p), b) {
                Some(e) => enc = e,
                None => {
                    return Err(ctx.raise(ctx.c().compatibility_error, &format!("incompatible character encodings: {} and {}", encoding::name(enc), encoding::name(encoding(p)))));
                }
            }
        }
        out.extend_from_slice(b);
    }
    Ok(new_with_enc(ctx, out, enc))
}

pub fn intern(ctx: &mut Ctx, s: Value) -> Value {
    let id = ctx.intern_bytes(bytes(s));
    Value::symbol(id)
}

/// # Safety
/// `p` is a dead String slot.
pub unsafe fn finalize(p: *mut RBasic) {
    std::ptr::drop_in_place(&mut (*(p as *mut RString)).bytes);
}

/// Implicit conversion to String (`to_str`), CRuby's `StringValue`.
pub fn to_str_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_string(v) {
        return Ok(v);
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
        let r = ctx.call(v, sym::TO_STR, &[])?;
        if is_string(r) {
            return Ok(r);
        }
        let cname = object::class_name_of(ctx, v);
        let rname = object::class_name_of(ctx, r);
        return Err(ctx.type_error(&format!("can't convert {cname} to String ({cname}#to_str gives {rname})")));
    }
    Err(ctx.conversion_error(v, "String"))
}

/// `to_str` conversion returning a Rust string (lossy).
pub fn str_arg(ctx: &mut Ctx, v: Value) -> Result<String> {
    let s = to_str_arg(ctx, v)?;
    Ok(to_rust_string_lossy(s))
}

/// `String(x)` / `#{x}`-style conversion via `to_s`.
pub fn to_s(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_string(v) {
        return Ok(v);
    }
    let r = ctx.call(v, sym::TO_S, &[])?;
    if is_string(r) {
        Ok(r)
    } else {
        Ok(object::any_to_s(ctx, v))
    }
}

/// Ruby's `String#inspect` of raw bytes in an encoding.
pub fn inspect_bytes(b: &[u8], enc: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push(b'"');
    let mut i = 0;
    let unicode = encoding::is_utf8(enc);
    while i < b.len() {
        let c = b[i];
        let n = encoding::char_len(enc, b, i);
        if unicode && n > 1 {
            let ch = std::str::from_utf8(&b[i..i + n]).ok().and_then(|s| s.chars().next());
            match ch {
                Some(ch) if !ch.is_control() && !is_unicode_nonprintable(ch) => out.extend_from_slice(&b[i..i + n]),
                Some(ch) => out.extend_from_slice(format!("\\u{:04X}", ch as u32).as_bytes()),
                None => {
                    for &x in &b[i..i + n] {
                        out.extend_from_slice(format!("\\x{x:02X}").as_bytes());
                    }
                }
            }
            i += n;
            continue;
        }
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x1b => out.extend_from_slice(b"\\e"),
            b'#' => {
                let next = b.get(i + 1).copied();
                if matches!(next, Some(b'{') | Some(b'$') | Some(b'@')) {
                    out.extend_from_slice(b"\\#");
                } else {
                    out.push(b'#');
                }
            }
            0x20..=0x7e => out.push(c),
            _ => {
                if unicode && c < 0x80 {
                    out.extend_from_slice(format!("\\u{:04X}", c).as_bytes());
                } else if c < 0x80 && c != 0x7f {
                    out.extend_from_slice(format!("\\x{c:02X}").as_bytes());
                } else if unicode || enc == BINARY || enc == US_ASCII {
                    out.extend_from_slice(format!("\\x{c:02X}").as_bytes());
                } else {
                    out.extend_from_slice(format!("\\x{c:02X}").as_bytes());
                }
            }
        }
        i += n.max(1);
    }
    out.push(b'"');
    out
}

fn is_unicode_nonprintable(ch: char) -> bool {
    matches!(ch as u32, 0x200b..=0x200f | 0x2028..=0x202e | 0xfeff | 0xfff9..=0xfffb | 0xe000..=0xf8ff | 0xf0000..=0x10ffff | 0x85 | 0xa0 | 0xad)
        && !matches!(ch as u32, 0xa0)
}

/// Character index → byte offset (None when out of range).
pub fn char_to_byte(v: Value, idx: usize) -> Option<usize> {
    let b = bytes(v);
    let enc = encoding(v);
    if b.is_ascii() || !encoding::is_utf8(enc) && encoding::ENCODINGS.get(enc as usize).is_some_and(|e| e.unit == 1) {
        return (idx <= b.len()).then_some(idx);
    }
    let mut i = 0;
    let mut n = 0;
    while n < idx {
        if i >= b.len() {
            return None;
        }
        i += encoding::char_len(enc, b, i);
        n += 1;
    }
    Some(i)
}

pub fn char_length(v: Value) -> usize {
    encoding::char_count(encoding(v), bytes(v))
}

/// A substring by character index and length (CRuby's `str[start, len]` semantics).
pub fn substr(ctx: &mut Ctx, v: Value, start: i64, count: i64) -> Option<Value> {
    let clen = char_length(v) as i64;
    let start = if start < 0 { start + clen } else { start };
    if start < 0 || start > clen || count < 0 {
        return None;
    }
    let end = (start + count).min(clen);
    let bs = char_to_byte(v, start as usize)?;
    let be = char_to_byte(v, end as usize)?;
    let enc = encoding(v);
    let piece = bytes(v)[bs..be].to_vec();
    let s = new_with_enc(ctx, piece, enc);
    Some(s)
}

// ---- methods ----

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = object::allocate(ctx, recv)?;
    ctx.call_kw(s, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(s)
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&src) = args.pos.first() {
        ctx.check_frozen(recv)?;
        let src = to_str_arg(ctx, src)?;
        let b = bytes(src).to_vec();
        *bytes_mut(recv) = b;
        set_encoding(recv, encoding(src));
    }
    if let Some(e) = args.kwarg(ctx, "encoding") {
        let enc = encoding::encoding_arg(ctx, e)?;
        set_encoding(recv, enc);
    }
    Ok(Value::NIL)
}

fn plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = to_str_arg(ctx, args.pos[0])?;
    let (ea, eb) = (encoding(recv), encoding(other));
    let enc = match encoding::compatible(ea, bytes(recv), eb, bytes(other)) {
        Some(e) => e,
        None => return Err(ctx.raise(ctx.c().compatibility_error, &format!("incompatible character encodings: {} and {}", encoding::name(ea), encoding::name(eb)))),
    };
    let mut v = Vec::with_capacity(len(recv) + len(other));
    v.extend_from_slice(bytes(recv));
    v.extend_from_slice(bytes(other));
    Ok(new_with_enc(ctx, v, enc))
}

fn mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative argument"));
    }
    let b = bytes(recv);
    if (b.len() as u128) * (n as u128) > (1u128 << 34) {
        return Err(ctx.arg_error("argument too big"));
    }
    let out = b.repeat(n as usize);
    let enc = encoding(recv);
    Ok(new_with_enc(ctx, out, enc))
}

fn format_op(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    let list: Vec<Value> = if array::is_array(a) { array::to_vec(a) } else { vec![a] };
    crate::core::kernel::format_impl(ctx, recv, &list)
}

fn op_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if is_string(o) {
        return Ok(Value::bool(eq(recv, o)));
    }
    if o.is_heap() && ctx.respond_to(o, sym::TO_STR, true) {
        let r = ctx.call(o, sym::EQ, &[recv])?;
        return Ok(Value::bool(r.truthy()));
    }
    Ok(Value::FALSE)
}

fn op_eql(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    Ok(Value::bool(is_string(o) && eql(recv, o)))
}

fn op_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let h = hash_bytes(ctx.vm().hash_seed, recv);
    Ok(Value::fixnum((h >> 2) as i64))
}

fn op_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_string(o) {
        if o.is_heap() && ctx.respond_to(o, sym::TO_STR, true) && ctx.respond_to(o, sym::CMP, true) {
            let r = ctx.call(o, sym::CMP, &[recv])?;
            if let Some(i) = r.as_fixnum() {
                return Ok(Value::fixnum(-i));
            }
            return Ok(Value::NIL);
        }
        return Ok(Value::NIL);
    }
    Ok(Value::fixnum(match bytes(recv).cmp(bytes(o)) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    }))
}

fn length(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(char_length(recv) as i64))
}

fn bytesize(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(len(recv) as i64))
}

fn empty_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(len(recv) == 0))
}

fn to_s_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if basic(recv).klass == ctx.c().string {
        return Ok(recv);
    }
    Ok(dup_literal(ctx, recv))
}

fn inspect_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = inspect_bytes(bytes(recv), encoding(recv));
    Ok(new_with_enc(ctx, out, UTF_8))
}

fn dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let b = bytes(recv);
    let mut out = vec![b'"'];
    for &c in b {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x1b => out.extend_from_slice(b"\\e"),
            b'#' => out.push(b'#'),
            0x20..=0x7e => out.push(c),
            _ => out.extend_from_slice(format!("\\x{c:02X}").as_bytes()),
        }
    }
    out.push(b'"');
    Ok(new_with_enc(ctx, out, encoding(recv)))
}

fn to_sym(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(intern(ctx, recv))
}

fn to_i(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let base = match args.pos.first() {
        Some(&b) => crate::core::integer::to_i64_arg(ctx, b)?,
        None => 10,
    };
    if base < 0 || base == 1 || base > 36 {
        return Err(ctx.arg_error(&format!("invalid radix {base}")));
    }
    let s = to_rust_string_lossy(recv);
    crate::core::integer::parse_lenient(ctx, &s, base as u32)
}

fn to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = to_rust_string_lossy(recv);
    Ok(crate::core::float::new(ctx, crate::core::float::parse_lenient(&s)))
}

fn case_map(ctx: &mut Ctx, recv: Value, f: fn(&str) -> String, ascii: fn(&mut [u8])) -> Value {
    let enc = encoding(recv);
    let b = bytes(recv);
    let out = if encoding::is_utf8(enc) {
        match std::str::from_utf8(b) {
            Ok(s) => f(s).into_bytes(),
            Err(_) => {
                let mut v = b.to_vec();
                ascii(&mut v);
                v
            }
        }
    } else {
        let mut v = b.to_vec();
        ascii(&mut v);
        v
    };
    new_with_enc(ctx, out, enc)
}

fn upcase(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(case_map(ctx, recv, |s| s.to_uppercase(), |v| v.make_ascii_uppercase()))
}

fn downcase(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(case_map(ctx, recv, |s| s.to_lowercase(), |v| v.make_ascii_lowercase()))
}

fn capitalize_str(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + &c.as_str().to_lowercase(),
        None => String::new(),
    }
}

fn capitalize_ascii(v: &mut [u8]) {
    v.make_ascii_lowercase();
    if let Some(f) = v.first_mut() {
        f.make_ascii_uppercase();
    }
}

fn capitalize(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(case_map(ctx, recv, capitalize_str, capitalize_ascii))
}

fn swapcase_str(s: &str) -> String {
    s.chars().flat_map(|c| if c.is_uppercase() { c.to_lowercase().collect::<Vec<_>>() } else { c.to_uppercase().collect::<Vec<_>>() }).collect()
}

fn swapcase_ascii(v: &mut [u8]) {
    for c in v {
        if c.is_ascii_uppercase() {
            c.make_ascii_lowercase();
        } else if c.is_ascii_lowercase() {
            c.make_ascii_uppercase();
        }
    }
}

fn swapcase(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(case_map(ctx, recv, swapcase_str, swapcase_ascii))
}

/// Defines `name!` from a non-bang transform: replaces content, returns nil if unchanged.
fn bang(ctx: &mut Ctx, recv: Value, args: &Args, f: fn(&mut Ctx, Value, &Args) -> Result<Value>) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let r = f(ctx, recv, args)?;
    if bytes(r) == bytes(recv) {
        return Ok(Value::NIL);
    }
    let nb = bytes(r).to_vec();
    *bytes_mut(recv) = nb;
    Ok(recv)
}

fn upcase_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, upcase)
}
fn downcase_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, downcase)
}
fn capitalize_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, capitalize)
}
fn swapcase_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, swapcase)
}

fn reverse(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let enc = encoding(recv);
    let b = bytes(recv);
    let offs = encoding::char_offsets(enc, b);
    let mut out = Vec::with_capacity(b.len());
    for w in offs.windows(2).rev() {
        out.extend_from_slice(&b[w[0]..w[1]]);
    }
    Ok(new_with_enc(ctx, out, enc))
}

fn reverse_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let r = reverse(ctx, recv, args)?;
    let nb = bytes(r).to_vec();
    *bytes_mut(recv) = nb;
    Ok(recv)
}

fn find_bytes(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if needle.is_empty() {
        return (from <= hay.len()).then_some(from);
    }
    if from > hay.len() {
        return None;
    }
    hay[from..].windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

fn include_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_str_arg(ctx, args.pos[0])?;
    Ok(Value::bool(find_bytes(bytes(recv), bytes(o), 0).is_some()))
}

fn start_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        if crate::core::regexp::is_regexp(a) {
            if crate::core::regexp::match_at_start(ctx, a, recv)? {
                return Ok(Value::TRUE);
            }
            continue;
        }
        let o = to_str_arg(ctx, a)?;
        if bytes(recv).starts_with(bytes(o)) {
            return Ok(Value::TRUE);
        }
    }
    Ok(Value::FALSE)
}

fn end_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let o = to_str_arg(ctx, a)?;
        if bytes(recv).ends_with(bytes(o)) {
            return Ok(Value::TRUE);
        }
    }
    Ok(Value::FALSE)
}

fn byte_to_char_index(v: Value, byte: usize) -> usize {
    encoding::char_count(encoding(v), &bytes(v)[..byte])
}

fn index_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let start = match args.pos.get(1) {
        Some(&s) => crate::core::integer::to_i64_arg(ctx, s)?,
        None => 0,
    };
    let clen = char_length(recv) as i64;
    let start = if start < 0 { start + clen } else { start };
    if start < 0 || start > clen {
        return Ok(Value::NIL);
    }
    let bstart = char_to_byte(recv, start as usize).unwrap_or(len(recv));
    if crate::core::regexp::is_regexp(args.pos[0]) {
        return crate::core::regexp::string_index(ctx, recv, args.pos[0], bstart);
    }
    let o = to_str_arg(ctx, args.pos[0])?;
    match find_bytes(bytes(recv), bytes(o), bstart) {
        Some(p) => Ok(Value::fixnum(byte_to_char_index(recv, p) as i64)),
        None => Ok(Value::NIL),
    }
}

fn rindex_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let clen = char_length(recv) as i64;
    let start = match args.pos.get(1) {
        Some(&s) => {
            let s = crate::core::integer::to_i64_arg(ctx, s)?;
            if s < 0 {
                s + clen
            } else {
                s.min(clen)
            }
        }
        None => clen,
    };
    if start < 0 {
        return Ok(Value::NIL);
    }
    if crate::core::regexp::is_regexp(args.pos[0]) {
        let bstart = char_to_byte(recv, start as usize).unwrap_or(len(recv));
        return crate::core::regexp::string_rindex(ctx, recv, args.pos[0], bstart);
    }
    let o = to_str_arg(ctx, args.pos[0])?;
    let hay = bytes(recv);
    let needle = bytes(o);
    let bstart = char_to_byte(recv, start as usize).unwrap_or(hay.len());
    let mut p = bstart.min(hay.len().saturating_sub(needle.len()));
    if needle.len() > hay.len() {
        return Ok(Value::NIL);
    }
    loop {
        if hay[p..].starts_with(needle) {
            return Ok(Value::fixnum(byte_to_char_index(recv, p) as i64));
        }
        if p == 0 {
            return Ok(Value::NIL);
        }
        p -= 1;
    }
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn strip_range(b: &[u8], left: bool, right: bool) -> (usize, usize) {
    let mut s = 0;
    let mut e = b.len();
    if left {
        while s < e && (is_space(b[s]) || b[s] == 0) {
            s += 1;
        }
    }
    if right {
        while e > s && (is_space(b[e - 1]) || b[e - 1] == 0) {
            e -= 1;
        }
    }
    (s, e)
}

fn strip_impl(ctx: &mut Ctx, recv: Value, left: bool, right: bool) -> Value {
    let (s, e) = strip_range(bytes(recv), left, right);
    let enc = encoding(recv);
    let piece = bytes(recv)[s..e].to_vec();
    new_with_enc(ctx, piece, enc)
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
fn strip_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, strip)
}
fn lstrip_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, lstrip)
}
fn rstrip_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, rstrip)
}

fn chomp_len(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<usize> {
    let b = bytes(recv);
    match args.pos.first() {
        None => {
            if b.ends_with(b"\r\n") {
                Ok(b.len() - 2)
            } else if b.ends_with(b"\n") || b.ends_with(b"\r") {
                Ok(b.len() - 1)
            } else {
                Ok(b.len())
            }
        }
        Some(&sep) if sep.is_nil() => Ok(b.len()),
        Some(&sep) => {
            let sep = to_str_arg(ctx, sep)?;
            let sb = bytes(sep);
            if sb.is_empty() {
                let mut e = b.len();
                while e > 0 && b[e - 1] == b'\n' {
                    e -= 1;
                    if e > 0 && b[e - 1] == b'\r' {
                        e -= 1;
                    }
                }
                Ok(e)
            } else if sb == b"\n" {
                chomp_len(ctx, recv, &Args::new(&[]))
            } else if b.ends_with(sb) {
                Ok(b.len() - sb.len())
            } else {
                Ok(b.len())
            }
        }
    }
}

fn chomp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = chomp_len(ctx, recv, args)?;
    let enc = encoding(recv);
    let piece = bytes(recv)[..n].to_vec();
    Ok(new_with_enc(ctx, piece, enc))
}

fn chomp_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let n = chomp_len(ctx, recv, args)?;
    if n == len(recv) {
        return Ok(Value::NIL);
    }
    bytes_mut(recv).truncate(n);
    Ok(recv)
}

fn chop(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let b = bytes(recv);
    let enc = encoding(recv);
    let n = if b.ends_with(b"\r\n") {
        b.len() - 2
    } else {
        let offs = encoding::char_offsets(enc, b);
        offs.get(offs.len().saturating_sub(2)).copied().unwrap_or(0)
    };
    let piece = b[..n].to_vec();
    Ok(new_with_enc(ctx, piece, enc))
}

fn chop_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if len(recv) == 0 {
        return Ok(Value::NIL);
    }
    let r = chop(ctx, recv, args)?;
    let nb = bytes(r).to_vec();
    *bytes_mut(recv) = nb;
    Ok(recv)
}

fn chars_vec(ctx: &mut Ctx, recv: Value) -> Vec<Value> {
    let enc = encoding(recv);
    let b = bytes(recv).to_vec();
    let offs = encoding::char_offsets(enc, &b);
    let mut out = Vec::with_capacity(offs.len());
    for w in offs.windows(2) {
        let s = new_with_enc(ctx, b[w[0]..w[1]].to_vec(), enc);
        out.push(s);
    }
    out
}

fn chars(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let arr = array::new(ctx);
    let enc = encoding(recv);
    let b = bytes(recv).to_vec();
    let offs = encoding::char_offsets(enc, &b);
    for w in offs.windows(2) {
        let s = new_with_enc(ctx, b[w[0]..w[1]].to_vec(), enc);
        array::push(ctx, arr, s);
    }
    Ok(arr)
}

fn each_char(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_char", &[], None);
    };
    let enc = encoding(recv);
    let b = bytes(recv).to_vec();
    let offs = encoding::char_offsets(enc, &b);
    for w in offs.windows(2) {
        let s = new_with_enc(ctx, b[w[0]..w[1]].to_vec(), enc);
        ctx.yield1(&blk, s)?;
    }
    let _ = chars_vec;
    Ok(recv)
}

fn bytes_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v: Vec<Value> = bytes(recv).iter().map(|&b| Value::fixnum(b as i64)).collect();
    Ok(array::from_vec(ctx, v))
}

fn each_byte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_byte", &[], None);
    };
    let mut i = 0;
    while i < len(recv) {
        let b = bytes(recv)[i];
        ctx.yield1(&blk, Value::fixnum(b as i64))?;
        i += 1;
    }
    Ok(recv)
}

/// Splits into lines keeping separators (`each_line` / `lines`).
fn line_pieces(recv: Value, sep: Option<&[u8]>, chomp: bool) -> Vec<Vec<u8>> {
    let b = bytes(recv);
    let mut out = Vec::new();
    let Some(sep) = sep else {
        if !b.is_empty() {
            out.push(b.to_vec());
        }
        return out;
    };
    let paragraph = sep.is_empty();
    let sep: &[u8] = if paragraph { b"\n\n" } else { sep };
    let mut start = 0;
    while start < b.len() {
        match find_bytes(b, sep, start) {
            Some(p) => {
                let mut end = p + sep.len();
                if paragraph {
                    while end < b.len() && b[end] == b'\n' {
                        end += 1;
                    }
                }
                let piece_end = if chomp { p } else { end };
                let mut piece = b[start..piece_end].to_vec();
                if paragraph && !chomp {
                    piece.truncate(p + 2 - start);
                }
                out.push(piece);
                start = end;
            }
            None => {
                out.push(b[start..].to_vec());
                break;
            }
        }
    }
    out
}

fn line_args(ctx: &mut Ctx, args: &Args) -> Result<(Option<Vec<u8>>, bool)> {
    let chomp = args.kwarg(ctx, "chomp").is_some_and(|v| v.truthy());
    let sep = match args.pos.first() {
        None => Some(b"\n".to_vec()),
        Some(&v) if v.is_nil() => None,
        Some(&v) => {
            let s = to_str_arg(ctx, v)?;
            Some(bytes(s).to_vec())
        }
    };
    Ok((sep, chomp))
}

fn lines(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (sep, chomp) = line_args(ctx, args)?;
    let enc = encoding(recv);
    let pieces = line_pieces(recv, sep.as_deref(), chomp);
    let arr = array::new(ctx);
    for p in pieces {
        let s = new_with_enc(ctx, p, enc);
        array::push(ctx, arr, s);
    }
    if let Some(blk) = args.block {
        for i in 0..array::len(arr) {
            ctx.yield1(&blk, array::get(arr, i))?;
        }
        return Ok(recv);
    }
    Ok(arr)
}

fn each_line(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_none() {
        return crate::core::enumerator::enum_for_kw(ctx, recv, "each_line", args.pos, args.kw, None);
    }
    lines(ctx, recv, args)
}

fn split(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let limit = match args.pos.get(1) {
        Some(&l) => crate::core::integer::to_i64_arg(ctx, l)?,
        None => 0,
    };
    let pat = args.pos.first().copied().unwrap_or(Value::NIL);
    let enc = encoding(recv);
    let result = if crate::core::regexp::is_regexp(pat) {
        crate::core::regexp::split(ctx, recv, pat, limit)?
    } else {
        let b = bytes(recv).to_vec();
        let sep: Option<Vec<u8>> = if pat.is_nil() {
            let fs = crate::core::globals::get(ctx, sym::DOLLAR_SEMICOLON)?;
            if fs.is_nil() {
                None
            } else {
                let s = to_str_arg(ctx, fs)?;
                Some(bytes(s).to_vec())
            }
        } else {
            let s = to_str_arg(ctx, pat)?;
            Some(bytes(s).to_vec())
        };
        let mut parts: Vec<Vec<u8>> = Vec::new();
        match sep.as_deref() {
            None | Some(b" ") => {
                // Awk-style: split on runs of whitespace, ignoring leading whitespace.
                let mut i = 0;
                while i < b.len() && is_space(b[i]) {
                    i += 1;
                }
                while i < b.len() {
                    if limit > 0 && parts.len() as i64 == limit - 1 {
                        parts.push(b[i..].to_vec());
                        i = b.len();
                        break;
                    }
                    let s = i;
                    while i < b.len() && !is_space(b[i]) {
                        i += 1;
                    }
                    parts.push(b[s..i].to_vec());
                    while i < b.len() && is_space(b[i]) {
                        i += 1;
                    }
                }
                let _ = i;
            }
            Some(sep) if sep.is_empty() => {
                let offs = encoding::char_offsets(enc, &b);
                for (k, w) in offs.windows(2).enumerate() {
                    if limit > 0 && k as i64 == limit - 1 {
                        parts.push(b[w[0]..].to_vec());
                        break;
                    }
                    parts.push(b[w[0]..w[1]].to_vec());
                }
            }
            Some(sep) => {
                let mut start = 0;
                loop {
                    if limit > 0 && parts.len() as i64 == limit - 1 {
                        parts.push(b[start..].to_vec());
                        break;
                    }
                    match find_bytes(&b, sep, start) {
                        Some(p) => {
                            parts.push(b[start..p].to_vec());
                            start = p + sep.len();
                        }
                        None => {
                            parts.push(b[start..].to_vec());
                            break;
                        }
                    }
                }
            }
        }
        if limit == 0 {
            while parts.last().is_some_and(|p| p.is_empty()) {
                parts.pop();
            }
        }
        let arr = array::new(ctx);
        for p in parts {
            let s = new_with_enc(ctx, p, enc);
            array::push(ctx, arr, s);
        }
        arr
    };
    if let Some(blk) = args.block {
        for i in 0..array::len(result) {
            ctx.yield1(&blk, array::get(result, i))?;
        }
        return Ok(recv);
    }
    Ok(result)
}

fn concat_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let items: Vec<Value> = args.pos.to_vec();
    for a in items {
        if let Some(i) = a.as_fixnum() {
            append_codepoint(ctx, recv, i)?;
        } else {
            let s = to_str_arg(ctx, a)?;
            let s = if s == recv { dup_literal(ctx, s) } else { s };
            append_str(ctx, recv, s)?;
        }
    }
    Ok(recv)
}

pub fn append_codepoint(ctx: &mut Ctx, recv: Value, i: i64) -> Result<()> {
    let enc = encoding(recv);
    if i < 0 {
        return Err(ctx.range_error(&format!("{i} out of char range")));
    }
    if encoding::is_utf8(enc) {
        match char::from_u32(i as u32).filter(|_| i <= 0x10ffff) {
            Some(c) => {
                let mut buf = [0u8; 4];
                append(recv, c.encode_utf8(&mut buf).as_bytes());
            }
            None => return Err(ctx.range_error(&format!("invalid codepoint 0x{i:X} in UTF-8"))),
        }
    } else if i < 256 {
        if enc == US_ASCII && i >= 128 {
            set_encoding(recv, BINARY);
        }
        append(recv, &[i as u8]);
    } else {
        return Err(ctx.range_error(&format!("{i} out of char range")));
    }
    Ok(())
}

fn lshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    concat_m(ctx, recv, args)
}

fn replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let s = to_str_arg(ctx, args.pos[0])?;
    let nb = bytes(s).to_vec();
    *bytes_mut(recv) = nb;
    set_encoding(recv, encoding(s));
    Ok(recv)
}

fn clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    bytes_mut(recv).clear();
    Ok(recv)
}

fn aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = args.pos[0];
    if args.pos.len() == 2 {
        if crate::core::regexp::is_regexp(a) {
            return crate::core::regexp::string_aref(ctx, recv, a, Some(args.pos[1]));
        }
        let start = crate::core::integer::to_i64_arg(ctx, a)?;
        let count = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
        return Ok(substr(ctx, recv, start, count).unwrap_or(Value::NIL));
    }
    if let Some(i) = a.as_fixnum() {
        return Ok(substr(ctx, recv, i, 1).filter(|s| len(*s) > 0).unwrap_or(Value::NIL));
    }
    if is_string(a) {
        return Ok(if find_bytes(bytes(recv), bytes(a), 0).is_some() { dup_literal(ctx, a) } else { Value::NIL });
    }
    if crate::core::regexp::is_regexp(a) {
        return crate::core::regexp::string_aref(ctx, recv, a, None);
    }
    if crate::core::range::is_range(a) {
        let clen = char_length(recv) as i64;
        return match crate::core::range::resolve_bounds(ctx, a, clen)? {
            Some((s, n)) => Ok(substr(ctx, recv, s, n).unwrap_or(Value::NIL)),
            None => Ok(Value::NIL),
        };
    }
    let i = crate::core::integer::to_i64_arg(ctx, a)?;
    Ok(substr(ctx, recv, i, 1).filter(|s| len(*s) > 0).unwrap_or(Value::NIL))
}

/// Replaces characters `[start, start+count)` with `repl`.
fn splice(ctx: &mut Ctx, recv: Value, start: i64, count: i64, repl: Value) -> Result<()> {
    let clen = char_length(recv) as i64;
    let s = if start < 0 { start + clen } else { start };
    if s < 0 || s > clen {
        return Err(ctx.index_error(&format!("index {start} out of string")));
    }
    if count < 0 {
        return Err(ctx.index_error(&format!("negative length {count}")));
    }
    let e = (s + count).min(clen);
    let bs = char_to_byte(recv, s as usize).unwrap_or(len(recv));
    let be = char_to_byte(recv, e as usize).unwrap_or(len(recv));
    let r = bytes(repl).to_vec();
    bytes_mut(recv).splice(bs..be, r);
    Ok(())
}

fn aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let val = *args.pos.last().expect("value");
    let repl = to_str_arg(ctx, val)?;
    if args.pos.len() == 3 {
        let s = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
        let n = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
        splice(ctx, recv, s, n, repl)?;
        return Ok(val);
    }
    let a = args.pos[0];
    if is_string(a) {
        match find_bytes(bytes(recv), bytes(a), 0) {
            Some(p) => {
                let r = bytes(repl).to_vec();
                let n = len(a);
                bytes_mut(recv).splice(p..p + n, r);
                return Ok(val);
            }
            None => return Err(ctx.index_error("string not matched")),
        }
    }
    if crate::core::regexp::is_regexp(a) {
        crate::core::regexp::string_aset(ctx, recv, a, repl)?;
        return Ok(val);
    }
    if crate::core::range::is_range(a) {
        let clen = char_length(recv) as i64;
        match crate::core::range::resolve_bounds(ctx, a, clen)? {
            Some((s, n)) => splice(ctx, recv, s, n, repl)?,
            None => return Err(ctx.range_error("range out of string")),
        }
        return Ok(val);
    }
    let i = crate::core::integer::to_i64_arg(ctx, a)?;
    let clen = char_length(recv) as i64;
    if i >= clen || i < -clen {
        return Err(ctx.index_error(&format!("index {i} out of string")));
    }
    splice(ctx, recv, i, 1, repl)?;
    Ok(val)
}

fn ord(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let b = bytes(recv);
    if b.is_empty() {
        return Err(ctx.arg_error("empty string"));
    }
    let enc = encoding(recv);
    let n = encoding::char_len(enc, b, 0);
    if encoding::is_utf8(enc) && n == 1 && b[0] >= 0x80 {
        return Err(ctx.arg_error("invalid byte sequence in UTF-8"));
    }
    let (cp, _) = encoding::codepoint_at(enc, b, 0);
    Ok(Value::fixnum(cp as i64))
}

fn freeze_m(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object::freeze(recv))
}

fn uplus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if object::is_frozen(recv) {
        Ok(dup_literal(ctx, recv))
    } else {
        Ok(recv)
    }
}

fn uminus(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if object::is_frozen(recv) {
        Ok(recv)
    } else {
        let s = dup_literal(ctx, recv);
        Ok(object::freeze(s))
    }
}

fn encoding_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = encoding(recv);
    Ok(encoding::encoding_object(ctx, e))
}

fn force_encoding(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let e = encoding::encoding_arg(ctx, args.pos[0])?;
    set_encoding(recv, e);
    Ok(recv)
}

fn valid_encoding(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(encoding::valid(encoding(recv), bytes(recv))))
}

fn ascii_only(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(bytes(recv).is_ascii()))
}

fn b_m(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let b = bytes(recv).to_vec();
    Ok(new_with_enc(ctx, b, BINARY))
}

fn count_chars(set: &[u8], b: &[u8]) -> usize {
    let table = crate::core::string_tr::build_set(set);
    b.iter().filter(|&&c| table[c as usize]).count()
}

fn count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    let mut total: Option<Vec<bool>> = None;
    for &a in args.pos {
        let s = to_str_arg(ctx, a)?;
        let t = crate::core::string_tr::build_set(bytes(s));
        total = Some(match total {
            None => t,
            Some(prev) => prev.iter().zip(t.iter()).map(|(a, b)| *a && *b).collect(),
        });
    }
    let t = total.unwrap_or_default();
    let _ = count_chars;
    Ok(Value::fixnum(bytes(recv).iter().filter(|&&c| t[c as usize]).count() as i64))
}

fn delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    let s = to_str_arg(ctx, args.pos[0])?;
    let t = crate::core::string_tr::build_set(bytes(s));
    let out: Vec<u8> = bytes(recv).iter().copied().filter(|&c| !t[c as usize]).collect();
    let enc = encoding(recv);
    Ok(new_with_enc(ctx, out, enc))
}

fn delete_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, delete)
}

fn squeeze(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let t = match args.pos.first() {
        Some(&a) => {
            let s = to_str_arg(ctx, a)?;
            Some(crate::core::string_tr::build_set(bytes(s)))
        }
        None => None,
    };
    let mut out: Vec<u8> = Vec::new();
    for &c in bytes(recv) {
        if out.last() == Some(&c) && t.as_ref().is_none_or(|t| t[c as usize]) {
            continue;
        }
        out.push(c);
    }
    let enc = encoding(recv);
    Ok(new_with_enc(ctx, out, enc))
}

fn squeeze_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, squeeze)
}

fn tr(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let from = to_str_arg(ctx, args.pos[0])?;
    let to = to_str_arg(ctx, args.pos[1])?;
    let out = crate::core::string_tr::translate(bytes(recv), encoding(recv), bytes(from), bytes(to), false);
    let enc = encoding(recv);
    Ok(new_with_enc(ctx, out, enc))
}

fn tr_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    bang(ctx, recv, args, tr)
}

fn tr_s(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let from = to_str_arg(ctx, args.pos[0])?;
    let to = to_str_arg(ctx, args.pos[1])?;
    let out = crate::core::string_tr::translate(bytes(recv), encoding(recv), bytes(from), bytes(to), true);
    let enc = encoding(recv);
    Ok(new_with_enc(ctx, out, enc))
}

fn justify(ctx: &mut Ctx, recv: Value, args: &Args, mode: u8) -> Result<Value> {
    let width = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let pad: Vec<u8> = match args.pos.get(1) {
        Some(&p) => {
            let p = to_str_arg(ctx, p)?;
            bytes(p).to_vec()
        }
        None => b" ".to_vec(),
    };
    if pad.is_empty() {
        return Err(ctx.arg_error("zero width padding"));
    }
    let clen = char_length(recv) as i64;
    let enc = encoding(recv);
    if width <= clen {
        return Ok(dup_literal(ctx, recv));
    }
    let total = (width - clen) as usize;
    let (left, right) = match mode {
        b'l' => (0, total),
        b'r' => (total, 0),
        _ => (total / 2, total - total / 2),
    };
    let pad_chars: Vec<&[u8]> = {
        let offs = encoding::char_offsets(enc, &pad);
        offs.windows(2).map(|w| &pad[w[0]..w[1]]).collect()
    };
    let make = |n: usize| -> Vec<u8> { (0..n).flat_map(|i| pad_chars[i % pad_chars.len()].iter().copied()).collect() };
    let mut out = make(left);
    out.extend_from_slice(bytes(recv));
    out.extend(make(right));
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

/// `String#succ`: the next string in "alphanumeric odometer" order.
pub fn succ_bytes(b: &[u8]) -> Vec<u8> {
    if b.is_empty() {
        return Vec::new();
    }
    let mut v = b.to_vec();
    let has_alnum = v.iter().any(|c| c.is_ascii_alphanumeric());
    if !has_alnum {
        let mut i = v.len();
        loop {
            if i == 0 {
                v.insert(0, 1);
                return v;
            }
            i -= 1;
            if v[i] == 0xff {
                v[i] = 0;
            } else {
                v[i] += 1;
                return v;
            }
        }
    }
    let mut i = v.len();
    let mut last_alnum = None;
    while i > 0 {
        i -= 1;
        let c = v[i];
        if !c.is_ascii_alphanumeric() {
            if last_alnum.is_some() {
                // keep scanning left only through alnums separated by non-alnums
                let more = v[..i].iter().any(|c| c.is_ascii_alphanumeric());
                if !more {
                    break;
                }
            }
            continue;
        }
        last_alnum = Some(i);
        match c {
            b'z' => v[i] = b'a',
            b'Z' => v[i] = b'A',
            b'9' => v[i] = b'0',
            _ => {
                v[i] += 1;
                return v;
            }
        }
    }
    let pos = last_alnum.unwrap_or(0);
    let ins = match v[pos] {
        b'a' => b'a',
        b'A' => b'A',
        _ => b'1',
    };
    v.insert(pos, ins);
    v
}

fn succ(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = succ_bytes(bytes(recv));
    let enc = encoding(recv);
    Ok(new_with_enc(ctx, out, enc))
}

fn succ_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let r = succ(ctx, recv, args)?;
    let nb = bytes(r).to_vec();
    *bytes_mut(recv) = nb;
    Ok(recv)
}

/// Iterates `recv.upto(last)`; `f` returns false to stop.
pub fn upto_each(ctx: &mut Ctx, recv: Value, last: Value, excl: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let lb = bytes(last).to_vec();
    let mut cur = bytes(recv).to_vec();
    let enc = encoding(recv);
    // Both numeric: iterate numerically.
    if !cur.is_empty() && cur.iter().all(u8::is_ascii_digit) && lb.iter().all(u8::is_ascii_digit) && !lb.is_empty() {
        let (a, b): (i64, i64) = (String::from_utf8_lossy(&cur).parse().unwrap_or(0), String::from_utf8_lossy(&lb).parse().unwrap_or(0));
        let width = cur.len();
        let mut i = a;
        while i < b || (!excl && i == b) {
            let s = new_utf8(ctx, &format!("{i:0width$}"));
            if !f(ctx, s)? {
                return Ok(());
            }
            i += 1;
        }
        return Ok(());
    }
    if cur.len() > lb.len() {
        return Ok(());
    }
    loop {
        let done = cur == lb;
        if done && excl {
            break;
        }
        let s = new_with_enc(ctx, cur.clone(), enc);
        if !f(ctx, s)? {
            return Ok(());
        }
        if done {
            break;
        }
        cur = succ_bytes(&cur);
        if cur.len() > lb.len() {
            break;
        }
    }
    Ok(())
}

fn upto(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(blk) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "upto", args.pos, None);
    };
    let last = to_str_arg(ctx, args.pos[0])?;
    let excl = args.pos.get(1).is_some_and(|v| v.truthy());
    upto_each(ctx, recv, last, excl, &mut |ctx, s| {
        ctx.yield1(&blk, s)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn insert(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let idx = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let s = to_str_arg(ctx, args.pos[1])?;
    let clen = char_length(recv) as i64;
    let pos = if idx < 0 { idx + clen + 1 } else { idx };
    if pos < 0 || pos > clen {
        return Err(ctx.index_error(&format!("index {idx} out of string")));
    }
    splice(ctx, recv, pos, 0, s)?;
    Ok(recv)
}

fn prepend(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let mut pre = Vec::new();
    for &a in args.pos {
        let s = to_str_arg(ctx, a)?;
        pre.extend_from_slice(bytes(s));
    }
    bytes_mut(recv).splice(0..0, pre);
    Ok(recv)
}

fn hex(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = to_rust_string_lossy(recv);
    crate::core::integer::parse_lenient(ctx, &s, 16)
}

fn oct(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = to_rust_string_lossy(recv);
    let t = s.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = t.to_ascii_lowercase();
    let (base, digits) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0d") {
        (10, r.to_string())
    } else {
        (8, lower.clone())
    };
    let v = crate::core::integer::parse_lenient(ctx, &digits, base)?;
    if neg {
        return crate::core::integer::negate(ctx, v);
    }
    Ok(v)
}

fn crypt_unsupported(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.not_implemented("String#crypt"))
}

fn sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let bits = match args.pos.first() {
        Some(&b) => crate::core::integer::to_i64_arg(ctx, b)?,
        None => 16,
    };
    let total: u64 = bytes(recv).iter().map(|&b| b as u64).sum();
    let r = if bits > 0 && bits < 64 { total & ((1u64 << bits) - 1) } else { total };
    Ok(Value::fixnum(r as i64))
}

fn getbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let n = len(recv) as i64;
    let i = if i < 0 { i + n } else { i };
    if i < 0 || i >= n {
        return Ok(Value::NIL);
    }
    Ok(Value::fixnum(bytes(recv)[i as usize] as i64))
}

fn setbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let b = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
    let n = len(recv) as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 || j >= n {
        return Err(ctx.index_error(&format!("index {i} out of string")));
    }
    bytes_mut(recv)[j as usize] = b as u8;
    Ok(args.pos[1])
}

fn byteslice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = len(recv) as i64;
    let (s, c) = if args.pos.len() == 2 {
        (crate::core::integer::to_i64_arg(ctx, args.pos[0])?, crate::core::integer::to_i64_arg(ctx, args.pos[1])?)
    } else if crate::core::range::is_range(args.pos[0]) {
        match crate::core::range::resolve_bounds(ctx, args.pos[0], n)? {
            Some(x) => x,
            None => return Ok(Value::NIL),
        }
    } else {
        (crate::core::integer::to_i64_arg(ctx, args.pos[0])?, 1)
    };
    let s = if s < 0 { s + n } else { s };
    if s < 0 || s > n || c < 0 || (args.pos.len() == 1 && !crate::core::range::is_range(args.pos[0]) && s == n) {
        return Ok(Value::NIL);
    }
    let e = (s + c).min(n);
    let enc = encoding(recv);
    let piece = bytes(recv)[s as usize..e as usize].to_vec();
    Ok(new_with_enc(ctx, piece, enc))
}

fn codepoints(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let enc = encoding(recv);
    let b = bytes(recv);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (cp, n) = encoding::codepoint_at(enc, b, i);
        if encoding::is_utf8(enc) && n == 1 && b[i] >= 0x80 {
            return Err(ctx.arg_error("invalid byte sequence in UTF-8"));
        }
        out.push(Value::fixnum(cp as i64));
        i += n;
    }
    Ok(array::from_vec(ctx, out))
}

fn unicode_normalize(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if is_string(v) {
        return Ok(v);
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
        return to_str_arg(ctx, v);
    }
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    mark_core_class(c);
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Unsafe, Singleton, Kw),
        ("try_convert", s_try_convert, [1], Safe, Singleton),
        ("initialize", initialize, [0..=1], Unsafe, Private, Kw),
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
        ("inspect", inspect_m, [0], Safe),
        ("dump", dump, [0], Safe),
        ("to_sym", to_sym, [0], Safe),
        ("intern", to_sym, [0], Safe),
        ("to_i", to_i, [0..=1], Safe),
        ("to_f", to_f, [0], Safe),
        ("upcase", upcase, [0..], Safe),
        ("downcase", downcase, [0..], Safe),
        ("capitalize", capitalize, [0..], Safe),
        ("swapcase", swapcase, [0..], Safe),
        ("upcase!", upcase_bang, [0..], Unsafe),
        ("downcase!", downcase_bang, [0..], Unsafe),
        ("capitalize!", capitalize_bang, [0..], Unsafe),
        ("swapcase!", swapcase_bang, [0..], Unsafe),
        ("reverse", reverse, [0], Safe),
        ("reverse!", reverse_bang, [0], Unsafe),
        ("include?", include_p, [1], Safe),
        ("start_with?", start_with, [0..], Safe),
        ("end_with?", end_with, [0..], Safe),
        ("index", index_m, [1..=2], Safe),
        ("rindex", rindex_m, [1..=2], Safe),
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
        ("chars", chars, [0], Safe),
        ("each_char", each_char, [0], Safe),
        ("bytes", bytes_m, [0], Safe),
        ("each_byte", each_byte, [0], Safe),
        ("lines", lines, [0..=1], Safe, Kw),
        ("each_line", each_line, [0..=1], Safe, Kw),
        ("split", split, [0..=2], Safe),
        ("concat", concat_m, [0..], Unsafe),
        ("<<", lshift, [1], Unsafe),
        ("replace", replace, [1], Unsafe),
        ("initialize_copy", replace, [1], Unsafe, Private),
        ("clear", clear, [0], Unsafe),
        ("[]", aref, [1..=2], Safe),
        ("slice", aref, [1..=2], Safe),
        ("[]=", aset, [2..=3], Unsafe),
        ("ord", ord, [0], Safe),
        ("freeze", freeze_m, [0], Unsafe),
        ("+@", uplus, [0], Safe),
        ("-@", uminus, [0], Safe),
        ("dedup", uminus, [0], Safe),
        ("encoding", encoding_m, [0], Safe),
        ("force_encoding", force_encoding, [1], Unsafe),
        ("valid_encoding?", valid_encoding, [0], Safe),
        ("ascii_only?", ascii_only, [0], Safe),
        ("b", b_m, [0], Safe),
        ("count", count, [0..], Safe),
        ("delete", delete, [0..], Safe),
        ("delete!", delete_bang, [0..], Unsafe),
        ("squeeze", squeeze, [0..=1], Safe),
        ("squeeze!", squeeze_bang, [0..=1], Unsafe),
        ("tr", tr, [2], Safe),
        ("tr!", tr_bang, [2], Unsafe),
        ("tr_s", tr_s, [2], Safe),
        ("center", center, [1..=2], Safe),
        ("ljust", ljust, [1..=2], Safe),
        ("rjust", rjust, [1..=2], Safe),
        ("succ", succ, [0], Safe),
        ("next", succ, [0], Safe),
        ("succ!", succ_bang, [0], Unsafe),
        ("next!", succ_bang, [0], Unsafe),
        ("upto", upto, [1..=2], Safe),
        ("insert", insert, [2], Unsafe),
        ("prepend", prepend, [0..], Unsafe),
        ("hex", hex, [0], Safe),
        ("oct", oct, [0], Safe),
        ("crypt", crypt_unsupported, [1], Safe),
        ("sum", sum, [0..=1], Safe),
        ("getbyte", getbyte, [1], Safe),
        ("setbyte", setbyte, [2], Unsafe),
        ("byteslice", byteslice, [1..=2], Safe),
        ("codepoints", codepoints, [0], Safe),
        ("unicode_normalize", unicode_normalize, [0..=1], Safe),
    ]);
}
