//! String: a byte vector with an encoding. This file holds the representation and the
//! helpers every String method (and the rest of the VM) builds on: construction, encoding
//! negotiation, character indexing, conversions and `inspect`/`dump`. The methods live in
//! `string_methods.rs` (core operations), `string_case.rs`, `string_iter.rs`,
//! `string_conv.rs`, `string_tr.rs` and `string_encode.rs`.
//!
//! Invariants:
//! - `RString::bytes` owns the content (embedded in the slot when short, see
//!   `string_buf`); the encoding index lives in `RBasic::aux`.
//! - Content may be invalid in its encoding ("broken"); every character walk treats an
//!   invalid byte as a one-byte character, as CRuby does.
//! - Mutating methods call `modify` (frozen check) before touching the bytes.
//! - Borrowed byte slices (`bytes`) must not be held across a call into Ruby or any
//!   mutation of the same string.

use crate::core::encoding::{self, BINARY, US_ASCII, UTF_8};
use crate::core::object;
use crate::core::string_buf::StrBuf;
use crate::error::Unwind;
use crate::heap::page::{SizeClass, SMALL_SLOT_SIZE};
use crate::interp::Args;
use crate::object::{basic, is_type, ObjType, RBasic};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[repr(C)]
pub struct RString {
    pub basic: RBasic,
    pub bytes: StrBuf,
}

const _: () = assert!(std::mem::size_of::<RString>() <= SMALL_SLOT_SIZE);

#[inline(always)]
fn rstring<'a>(v: Value) -> &'a mut RString {
    debug_assert!(is_string(v));
    // SAFETY: callers pass a String value.
    unsafe { &mut *v.as_ptr::<RString>() }
}

pub use crate::core::string_conv::upto_each;

// ---- construction ----

/// A new String owning `bytes` (embedded, and the Vec freed, when it is short).
pub fn new_with_enc(ctx: &mut Ctx, bytes: Vec<u8>, enc: u8) -> Value {
    new_from_buf(ctx, StrBuf::from_vec(bytes), enc)
}

/// A new String with a copy of `b` (no allocation besides the slot when `b` is short).
pub fn new_with_enc_from_slice(ctx: &mut Ctx, b: &[u8], enc: u8) -> Value {
    new_from_buf(ctx, StrBuf::from_slice(b), enc)
}

/// Bytes of `v`'s out-of-line buffer (0 when its content is inside the slot).
pub fn heap_bytes(v: Value) -> usize {
    rstring(v).bytes.heap_capacity()
}

#[inline]
fn new_from_buf(ctx: &mut Ctx, buf: StrBuf, enc: u8) -> Value {
    let cap = buf.heap_capacity();
    if cap > 256 {
        ctx.note_malloc(cap);
    }
    let klass = ctx.c().string;
    let p = ctx.alloc_slot_in(SizeClass::Small, ObjType::String, klass) as *mut RString;
    // SAFETY: fresh String slot.
    unsafe {
        std::ptr::write(&mut (*p).bytes, buf);
        (*p).basic.aux = enc as u32;
    }
    Value::from_ptr(p)
}

pub fn new_utf8(ctx: &mut Ctx, s: &str) -> Value {
    new_with_enc_from_slice(ctx, s.as_bytes(), UTF_8)
}

pub fn new_from_bytes(ctx: &mut Ctx, b: &[u8]) -> Value {
    new_with_enc_from_slice(ctx, b, UTF_8)
}

pub fn new_binary(ctx: &mut Ctx, b: &[u8]) -> Value {
    new_with_enc_from_slice(ctx, b, BINARY)
}

pub fn new_us_ascii(ctx: &mut Ctx, s: &str) -> Value {
    new_with_enc_from_slice(ctx, s.as_bytes(), US_ASCII)
}

/// A string literal from source (UTF-8 source files).
pub fn new_from_source(ctx: &mut Ctx, b: &[u8]) -> Value {
    new_with_enc_from_slice(ctx, b, UTF_8)
}

/// What `PutString` pushes: a new copy of the literal, chilled when the literal is.
pub fn new_from_literal(ctx: &mut Ctx, lit: Value) -> Value {
    let s = dup_literal(ctx, lit);
    let chill = basic(lit).flags & (crate::object::FL_CHILLED | crate::object::FL_CHILLED_SYMBOL);
    basic(s).flags |= chill;
    s
}

/// Marks `s` chilled (Ruby 3.4): its first mutation warns when deprecation warnings are
/// on; `from_symbol` for `Symbol#to_s` results.
pub fn chill(s: Value, from_symbol: bool) {
    basic(s).flags |= crate::object::FL_CHILLED | if from_symbol { crate::object::FL_CHILLED_SYMBOL } else { 0 };
}

pub fn is_chilled(v: Value) -> bool {
    is_string(v) && basic(v).flags & crate::object::FL_CHILLED != 0
}

/// The first mutation of a chilled String: it becomes an ordinary one, with a warning in
/// the `deprecated` category.
pub fn chilled_mutation(ctx: &mut Ctx, v: Value) -> Result<()> {
    let from_symbol = basic(v).flags & crate::object::FL_CHILLED_SYMBOL != 0;
    basic(v).flags &= !(crate::object::FL_CHILLED | crate::object::FL_CHILLED_SYMBOL);
    if !crate::core::warning::enabled(ctx, "deprecated") || crate::core::globals::verbose_level(ctx) == 0 {
        return Ok(());
    }
    let (path, line) = crate::core::kernel::caller_location(ctx);
    let what = if from_symbol {
        let name = crate::core::symbol::inspect_name(bytes(v));
        format!("string returned by :{}.to_s will be frozen in the future", String::from_utf8_lossy(&name).trim_start_matches(':'))
    } else {
        "literal string will be frozen in the future (run with --debug-frozen-string-literal for more information)".to_string()
    };
    crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: {what}\n"), Some("deprecated"))
}

/// A new mutable copy of a (frozen) literal.
pub fn dup_literal(ctx: &mut Ctx, lit: Value) -> Value {
    let n = len(lit);
    // The same bytes in the same encoding: the literal's code range (scanned once, then
    // cached on the literal) holds for the copy, so no copy's encoding check scans it.
    let cr = coderange(lit);
    let s = substr_shared(ctx, lit, 0..n);
    basic(s).aux |= cr << CR_SHIFT;
    s
}

/// A new String of `src`'s bytes in `range`, with its encoding: embedded when short, else
/// viewing `src`'s buffer until either changes (see `string_buf`).
pub fn substr_shared(ctx: &mut Ctx, src: Value, range: std::ops::Range<usize>) -> Value {
    let enc = encoding(src);
    let buf = rstring(src).bytes.share_range(range);
    new_from_buf(ctx, buf, enc)
}

pub fn dup_with_class(ctx: &mut Ctx, v: Value, klass: Value) -> Value {
    let s = dup_literal(ctx, v);
    basic(s).klass = klass;
    s
}

/// A new String of `recv`'s class-independent kind (plain String) with `recv`'s encoding.
pub fn new_like(ctx: &mut Ctx, recv: Value, b: Vec<u8>) -> Value {
    let enc = encoding(recv);
    new_with_enc(ctx, b, enc)
}

/// `new_like` with a copy of `b` (no malloc when it fits in the slot).
pub fn new_like_from_slice(ctx: &mut Ctx, recv: Value, b: &[u8]) -> Value {
    let enc = encoding(recv);
    new_with_enc_from_slice(ctx, b, enc)
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

/// The content for writing (`StrBuf` offers Vec's in-place operations, and the Vec itself
/// through `vec_mut`); forgets the cached code range (so the caller must not keep the
/// reference past its change).
#[inline]
pub fn bytes_mut<'a>(v: Value) -> &'a mut StrBuf {
    forget_coderange(v);
    &mut rstring(v).bytes
}

#[inline]
pub fn encoding(v: Value) -> u8 {
    (basic(v).aux & 0xff) as u8
}

pub fn set_encoding(v: Value, enc: u8) {
    basic(v).aux = (basic(v).aux & !(0xff | CACHE_MASK)) | enc as u32;
}

// The code range (CRuby's ENC_CODERANGE) is cached in bits 8-9 of `aux`: scanning a long
// string for validity at every regexp search would make `scan`/`gsub` quadratic. Every
// change of bytes or encoding goes through this file and clears it.
const CR_SHIFT: u32 = 8;
const CR_MASK: u32 = 3 << CR_SHIFT;
const CR_7BIT: u32 = 1;
const CR_VALID: u32 = 2;
const CR_BROKEN: u32 = 3;
/// Bit 10: the hidden `SNAPSHOT_IVAR` holds a frozen copy of the current content.
const SNAPSHOT_VALID: u32 = 1 << 10;
const CACHE_MASK: u32 = CR_MASK | SNAPSHOT_VALID;
const SNAPSHOT_IVAR: &str = "__snapshot__";
/// Shorter strings are simply copied for each snapshot.
const SNAPSHOT_MIN_LEN: usize = 128;

/// Records that `v`, in an ASCII-compatible encoding, holds only ASCII bytes, which its
/// creator has just checked: its first encoding check does not scan it again.
#[inline]
pub fn set_7bit(v: Value) {
    basic(v).aux = (basic(v).aux & !CR_MASK) | (CR_7BIT << CR_SHIFT);
}

/// Forgets what was cached about the content (code range, snapshot): called by every
/// change of bytes.
#[inline]
fn forget_coderange(v: Value) {
    basic(v).aux &= !CACHE_MASK;
}

/// A frozen String with `v`'s current content and encoding, as a MatchData keeps: `v`
/// itself when frozen, otherwise a copy shared by every caller until `v` changes (so
/// matching a long string again and again does not copy it each time).
pub fn frozen_snapshot(ctx: &mut Ctx, v: Value) -> Value {
    if object::is_frozen(v) {
        return v;
    }
    if len(v) < SNAPSHOT_MIN_LEN {
        return object::freeze(dup_literal(ctx, v));
    }
    let id = ctx.intern(SNAPSHOT_IVAR);
    if basic(v).aux & SNAPSHOT_VALID != 0 {
        let snap = object::ivar_get(ctx, v, id);
        if is_string(snap) {
            return snap;
        }
    }
    let snap = object::freeze(dup_literal(ctx, v));
    object::ivar_set_raw(ctx, v, id, snap);
    basic(v).aux |= SNAPSHOT_VALID;
    snap
}

/// The content's code range: 7bit (ASCII only in an ASCII-compatible encoding), valid or
/// broken, computed once per content.
#[inline]
fn coderange(v: Value) -> u32 {
    let cached = (basic(v).aux & CR_MASK) >> CR_SHIFT;
    if cached != 0 {
        return cached;
    }
    let (enc, b) = (encoding(v), bytes(v));
    let cr = if encoding::is_ascii_compatible(enc) && b.is_ascii() {
        CR_7BIT
    } else if encoding::valid(enc, b) {
        CR_VALID
    } else {
        CR_BROKEN
    };
    basic(v).aux |= cr << CR_SHIFT;
    cr
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

/// Checks that `v` may be modified (`FrozenError` otherwise).
#[inline]
pub fn modify(ctx: &mut Ctx, v: Value) -> Result<()> {
    ctx.check_frozen(v)
}

/// Replaces the content (callers have called `modify`).
pub fn set_bytes(v: Value, b: Vec<u8>) {
    forget_coderange(v);
    rstring(v).bytes.set(b);
}

/// Whether the content is valid in its encoding (CRuby's coderange is not BROKEN).
pub fn is_valid(v: Value) -> bool {
    coderange(v) != CR_BROKEN
}

/// Whether the string is "7bit": ASCII only in an ASCII-compatible encoding.
pub fn is_7bit(v: Value) -> bool {
    coderange(v) == CR_7BIT
}

// ---- equality and hashing ----

/// `String#==` for two Strings: same bytes and comparable encodings.
pub fn eq(a: Value, b: Value) -> bool {
    let (x, y) = (bytes(a), bytes(b));
    x == y && (encoding(a) == encoding(b) || compatible(a, b).is_some())
}

pub fn eql(a: Value, b: Value) -> bool {
    eq(a, b)
}

pub fn hash_bytes(seed: u64, v: Value) -> u64 {
    let b = bytes(v);
    let mut h = crate::core::hash::hash_bytes(seed, b);
    if !is_7bit(v) {
        h ^= encoding(v) as u64;
    }
    h
}

// ---- encoding negotiation ----

/// The encoding of a result combining `a` and `b` (CRuby's `rb_enc_compatible` for two
/// Strings); `None` when they are incompatible.
pub fn compatible(a: Value, b: Value) -> Option<u8> {
    // Each side's code range is read from its cache: appending to a long string must not
    // rescan it every time.
    encoding::compatible_by(encoding(a), len(a) == 0, || coderange(a) == CR_7BIT, encoding(b), len(b) == 0, || coderange(b) == CR_7BIT)
}

/// `Encoding::CompatibilityError: incompatible character encodings: A and B`.
pub fn incompatible_error(ctx: &mut Ctx, a: u8, b: u8) -> Unwind {
    let msg = format!("incompatible character encodings: {} and {}", encoding::inspect_name(a), encoding::inspect_name(b));
    ctx.raise(ctx.c().compatibility_error, &msg)
}

/// The encoding for combining `a` and `b`, or `Encoding::CompatibilityError`.
pub fn check_compatible(ctx: &mut Ctx, a: Value, b: Value) -> Result<u8> {
    match compatible(a, b) {
        Some(e) => Ok(e),
        None => Err(incompatible_error(ctx, encoding(a), encoding(b))),
    }
}

/// Appends bytes, checking nothing (callers check frozen state).
pub fn append(v: Value, b: &[u8]) {
    forget_coderange(v);
    rstring(v).bytes.extend_from_slice(b);
}

/// Appends a Ruby string with encoding negotiation.
pub fn append_str(ctx: &mut Ctx, dst: Value, src: Value) -> Result<()> {
    let enc = check_compatible(ctx, dst, src)?;
    append_in(dst, src, enc);
    Ok(())
}

/// `append_str` when the encodings are compatible (true); nothing changed otherwise.
#[inline]
pub fn try_append_str(dst: Value, src: Value) -> bool {
    match compatible(dst, src) {
        Some(enc) => {
            append_in(dst, src, enc);
            true
        }
        None => false,
    }
}

/// Appends `src`'s content to `dst`, the result in encoding `enc` (their compatible one).
fn append_in(dst: Value, src: Value, enc: u8) {
    // ASCII appended to known ASCII stays ASCII: keep the cached code range.
    let stays_7bit = basic(dst).aux & CR_MASK == CR_7BIT << CR_SHIFT && coderange(src) == CR_7BIT;
    set_encoding(dst, enc);
    if stays_7bit && encoding::is_ascii_compatible(enc) {
        basic(dst).aux |= CR_7BIT << CR_SHIFT;
    }
    if dst == src {
        // A slice of the destination may not be passed along with `&mut` to it (aliasing).
        let copy = bytes(src).to_vec();
        rstring(dst).bytes.extend_from_slice(&copy);
    } else {
        let s: &[u8] = &rstring(src).bytes;
        rstring(dst).bytes.extend_from_slice(s);
    }
}

/// Concatenates interpolation parts into a new String.
pub fn concat_parts(ctx: &mut Ctx, parts: &[Value]) -> Result<Value> {
    let total: usize = parts.iter().map(|&p| len(p)).sum();
    let mut enc = parts.first().map_or(UTF_8, |&p| encoding(p));
    let mut out = StrBuf::with_capacity(total);
    for (i, &p) in parts.iter().enumerate() {
        let b = bytes(p);
        if i > 0 && encoding(p) != enc {
            match encoding::compatible(enc, &out, encoding(p), b) {
                Some(e) => enc = e,
                None => return Err(incompatible_error(ctx, enc, encoding(p))),
            }
        }
        out.extend_from_slice(b);
    }
    Ok(new_from_buf(ctx, out, enc))
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

// ---- conversions ----

/// Implicit conversion to String (`to_str`), CRuby's `StringValue`: `to_str` is found
/// like `rb_check_funcall` does (a user `respond_to?`, `method_missing`).
pub fn to_str_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    match convert_to_str(ctx, v)? {
        Some(r) if is_string(r) => Ok(r),
        Some(r) => Err(mismatch(ctx, v, r)),
        None => Err(ctx.conversion_error(v, "String")),
    }
}

/// `v.to_str` if `v` answers it (a String itself otherwise).
fn convert_to_str(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if is_string(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() {
        return Ok(None);
    }
    crate::core::convert::check_funcall(ctx, v, sym::TO_STR, &[])
}

fn mismatch(ctx: &mut Ctx, v: Value, r: Value) -> Unwind {
    let cname = object::class_name_of(ctx, v);
    let rname = object::class_name_of(ctx, r);
    ctx.type_error(&format!("can't convert {cname} into String ({cname}#to_str gives {rname})"))
}

/// `to_str` conversion that answers `None` for objects without `to_str` or whose
/// `to_str` gives nil (CRuby's `rb_check_string_type`).
pub fn try_to_str(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    match convert_to_str(ctx, v)? {
        Some(r) if is_string(r) => Ok(Some(r)),
        Some(r) if r.is_nil() => Ok(None),
        Some(r) => Err(mismatch(ctx, v, r)),
        None => Ok(None),
    }
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

// ---- characters ----

/// Character index → byte offset (None when out of range).
pub fn char_to_byte(v: Value, idx: usize) -> Option<usize> {
    let b = bytes(v);
    let enc = encoding(v);
    if encoding::is_single_byte(enc) || is_7bit(v) {
        return (idx <= b.len()).then_some(idx);
    }
    if is_valid_utf8(v) {
        return utf8_char_to_byte(b, idx);
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

/// Byte offset → number of characters before it.
pub fn byte_to_char_index(v: Value, byte: usize) -> usize {
    let b = bytes(v);
    let head = &b[..byte.min(b.len())];
    if is_7bit(v) {
        return head.len();
    }
    if is_valid_utf8(v) {
        return utf8_count(head);
    }
    encoding::char_count(encoding(v), head)
}

pub fn char_length(v: Value) -> usize {
    byte_to_char_index(v, usize::MAX)
}

/// Valid UTF-8 content, whose characters can be counted by their lead bytes.
fn is_valid_utf8(v: Value) -> bool {
    encoding::is_utf8(encoding(v)) && coderange(v) == CR_VALID
}

/// Characters in valid UTF-8: every byte that is not a continuation byte starts one.
fn utf8_count(b: &[u8]) -> usize {
    b.iter().filter(|&&x| (x as i8) >= -0x40).count()
}

/// The byte offset of character `idx` of valid UTF-8 (None past the end); whole blocks
/// are skipped by counting their lead bytes.
fn utf8_char_to_byte(b: &[u8], idx: usize) -> Option<usize> {
    const BLOCK: usize = 64;
    let (mut i, mut n) = (0, 0);
    while i + BLOCK <= b.len() {
        let c = utf8_count(&b[i..i + BLOCK]);
        if n + c > idx {
            break;
        }
        n += c;
        i += BLOCK;
    }
    while n < idx {
        if i >= b.len() {
            return None;
        }
        i += 1;
        while i < b.len() && (b[i] as i8) < -0x40 {
            i += 1;
        }
        n += 1;
    }
    Some(i)
}

/// Byte range of characters `[start, start + count)` with CRuby's `str[start, len]`
/// clamping; `None` when `start` is out of range or `count` negative.
pub fn char_range(v: Value, start: i64, count: i64) -> Option<(usize, usize)> {
    if count < 0 {
        return None;
    }
    let enc = encoding(v);
    let b = bytes(v);
    if encoding::is_single_byte(enc) || is_7bit(v) {
        let n = b.len() as i64;
        let s = if start < 0 { start + n } else { start };
        if s < 0 || s > n {
            return None;
        }
        let e = s.saturating_add(count).min(n);
        return Some((s as usize, e as usize));
    }
    let clen = encoding::char_count(enc, b) as i64;
    let s = if start < 0 { start + clen } else { start };
    if s < 0 || s > clen {
        return None;
    }
    let e = s.saturating_add(count).min(clen);
    let bs = char_to_byte(v, s as usize)?;
    let mut be = bs;
    for _ in s..e {
        be += encoding::char_len(enc, b, be);
    }
    Some((bs, be))
}

/// A substring by character index and length (CRuby's `str[start, len]` semantics).
pub fn substr(ctx: &mut Ctx, v: Value, start: i64, count: i64) -> Option<Value> {
    let (bs, be) = char_range(v, start, count)?;
    Some(substr_shared(ctx, v, bs..be))
}

// ---- inspect / dump ----

/// Appends CRuby's escape for a character that is not shown as is.
fn push_escaped_char(out: &mut Vec<u8>, c: u32, unicode: bool) {
    let s = if unicode {
        if c < 0x7f && (0x20..0x7f).contains(&c) {
            (c as u8 as char).to_string()
        } else if c < 0x10000 {
            format!("\\u{c:04X}")
        } else {
            format!("\\u{{{c:X}}}")
        }
    } else if c < 0x100 {
        format!("\\x{c:02X}")
    } else {
        format!("\\x{{{c:X}}}")
    };
    out.extend_from_slice(s.as_bytes());
}

/// Ruby's `String#inspect` of raw bytes in an encoding (the result is UTF-8).
pub fn inspect_bytes(b: &[u8], enc: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 2);
    out.push(b'"');
    let unicode = encoding::is_unicode(enc);
    let ascii_compat = encoding::is_ascii_compatible(enc);
    let utf8 = encoding::is_utf8(enc);
    let mut i = 0;
    while i < b.len() {
        let n = match encoding::precise_char_len(enc, b, i) {
            Ok(n) => n,
            Err(_) => {
                out.extend_from_slice(format!("\\x{:02X}", b[i]).as_bytes());
                i += 1;
                continue;
            }
        };
        let (c, _) = encoding::codepoint_at(enc, b, i);
        let next_is_interp = || {
            let j = i + n;
            if j >= b.len() {
                return false;
            }
            let (nc, _) = encoding::codepoint_at(enc, b, j);
            nc == '$' as u32 || nc == '@' as u32 || nc == '{' as u32
        };
        if (ascii_compat || unicode) && (c == '"' as u32 || c == '\\' as u32 || (c == '#' as u32 && next_is_interp())) {
            out.push(b'\\');
            out.push(c as u8);
        } else if c < 0x80 && matches!(c as u8, b'\n' | b'\r' | b'\t' | 0x0c | 0x0b | 0x08 | 0x07 | 0x1b) {
            let e = match c as u8 {
                b'\n' => b'n',
                b'\r' => b'r',
                b'\t' => b't',
                0x0c => b'f',
                0x0b => b'v',
                0x08 => b'b',
                0x07 => b'a',
                _ => b'e',
            };
            out.push(b'\\');
            out.push(e);
        } else if (utf8 && crate::core::unicode::is_printable(c)) || (ascii_compat && (0x20..0x7f).contains(&c)) {
            out.extend_from_slice(&encode_char_utf8(c, &b[i..i + n], utf8));
        } else {
            push_escaped_char(&mut out, c, unicode);
        }
        i += n;
    }
    out.push(b'"');
    out
}

fn encode_char_utf8(c: u32, raw: &[u8], utf8: bool) -> Vec<u8> {
    if utf8 {
        return raw.to_vec();
    }
    let mut buf = [0u8; 4];
    char::from_u32(c).map_or_else(|| raw.to_vec(), |ch| ch.encode_utf8(&mut buf).as_bytes().to_vec())
}

/// `inspect` of a String value, with a `.force_encoding`-free result in UTF-8.
pub fn inspect(ctx: &mut Ctx, v: Value) -> Value {
    let out = inspect_bytes(bytes(v), encoding(v));
    new_with_enc(ctx, out, UTF_8)
}

/// `String#dump`: an ASCII-only literal that `undump` turns back into the string.
pub fn dump_bytes(b: &[u8], enc: u8) -> Vec<u8> {
    let mut out = vec![b'"'];
    let utf8 = encoding::is_utf8(enc);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'"' | b'\\' => {
                out.push(b'\\');
                out.push(c);
            }
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x1b => out.extend_from_slice(b"\\e"),
            b'#' => {
                if matches!(b.get(i + 1), Some(b'$' | b'@' | b'{')) {
                    out.push(b'\\');
                }
                out.push(b'#');
            }
            0x20..=0x7e => out.push(c),
            _ if utf8 && c >= 0x80 => match encoding::precise_char_len(enc, b, i) {
                Ok(n) if n > 1 => {
                    let (cp, _) = encoding::codepoint_at(enc, b, i);
                    if cp < 0x10000 {
                        out.extend_from_slice(format!("\\u{cp:04X}").as_bytes());
                    } else {
                        out.extend_from_slice(format!("\\u{{{cp:X}}}").as_bytes());
                    }
                    i += n;
                    continue;
                }
                _ => out.extend_from_slice(format!("\\x{c:02X}").as_bytes()),
            },
            _ => out.extend_from_slice(format!("\\x{c:02X}").as_bytes()),
        }
        i += 1;
    }
    out.push(b'"');
    if !encoding::is_ascii_compatible(enc) {
        out.extend_from_slice(format!(".dup.force_encoding(\"{}\")", encoding::name(enc)).as_bytes());
    }
    out
}

/// `String#undump`: parses the output of `dump`. Errors are `RuntimeError` messages.
pub fn undump_bytes(b: &[u8]) -> std::result::Result<(Vec<u8>, Option<String>), &'static str> {
    const NOT_WRAPPED: &str = "invalid dumped string; not wrapped with '\"' nor '\"...\".force_encoding(\"...\")' form";
    if b.len() < 2 || b[0] != b'"' {
        return Err(NOT_WRAPPED);
    }
    let mut out = Vec::new();
    let mut i = 1;
    let mut seen_u = false;
    let mut seen_x = false;
    loop {
        if i >= b.len() {
            return Err("unterminated dumped string");
        }
        let c = b[i];
        if c == b'"' {
            i += 1;
            break;
        }
        if c == b'\\' {
            i += 1;
            let Some(&e) = b.get(i) else { return Err("invalid escape") };
            i += 1;
            match e {
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'f' => out.push(0x0c),
                b'v' => out.push(0x0b),
                b'b' => out.push(0x08),
                b'a' => out.push(0x07),
                b'e' => out.push(0x1b),
                b'"' | b'\\' | b'#' => out.push(e),
                b'u' => {
                    if seen_x {
                        return Err("hex escape and Unicode escape are mixed");
                    }
                    seen_u = true;
                    let (cp, used) = if b.get(i) == Some(&b'{') {
                        let end = b[i..].iter().position(|&x| x == b'}').ok_or("unterminated Unicode escape")?;
                        let hex = std::str::from_utf8(&b[i + 1..i + end]).map_err(|_| "invalid Unicode escape")?;
                        (u32::from_str_radix(hex, 16).map_err(|_| "invalid Unicode escape")?, end + 1)
                    } else {
                        let hex = b.get(i..i + 4).ok_or("invalid Unicode escape")?;
                        let hex = std::str::from_utf8(hex).map_err(|_| "invalid Unicode escape")?;
                        (u32::from_str_radix(hex, 16).map_err(|_| "invalid Unicode escape")?, 4)
                    };
                    let ch = char::from_u32(cp).ok_or("invalid Unicode codepoint")?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    i += used;
                }
                b'x' => {
                    let hex = b.get(i..i + 2).ok_or("invalid hex escape")?;
                    let v = std::str::from_utf8(hex).ok().and_then(|h| u8::from_str_radix(h, 16).ok()).ok_or("invalid hex escape")?;
                    if seen_u {
                        return Err("hex escape and Unicode escape are mixed");
                    }
                    seen_x = true;
                    out.push(v);
                    i += 2;
                }
                _ => {
                    out.push(b'\\');
                    out.push(e);
                }
            }
            continue;
        }
        out.push(c);
        i += 1;
    }
    let rest = &b[i..];
    if rest.is_empty() {
        return Ok((out, None));
    }
    let rest = std::str::from_utf8(rest).map_err(|_| NOT_WRAPPED)?;
    let name = rest
        .strip_prefix(".force_encoding(\"")
        .or_else(|| rest.strip_prefix(".dup.force_encoding(\""))
        .and_then(|r| r.strip_suffix("\")"))
        .ok_or(NOT_WRAPPED)?;
    Ok((out, Some(name.to_string())))
}

// ---- the methods defined here ----

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(inspect(ctx, recv))
}

fn m_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = dump_bytes(bytes(recv), encoding(recv));
    let enc = encoding(recv);
    let enc = if encoding::is_ascii_compatible(enc) { enc } else { BINARY };
    Ok(new_with_enc(ctx, out, enc))
}

fn m_undump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !bytes(recv).is_ascii() {
        return Err(ctx.runtime_error("non-ASCII character detected"));
    }
    if bytes(recv).contains(&0) {
        return Err(ctx.runtime_error("string contains null byte"));
    }
    match undump_bytes(bytes(recv)) {
        Ok((out, None)) => {
            let enc = encoding(recv);
            Ok(new_with_enc(ctx, out, enc))
        }
        Ok((out, Some(name))) => match encoding::find(&name) {
            Some(e) => Ok(new_with_enc(ctx, out, e)),
            None => Err(ctx.arg_error(&format!("unknown encoding name - {name}"))),
        },
        Err(msg) => Err(ctx.runtime_error(msg)),
    }
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    mark_core_class(c);
    crate::methods!(ctx, c, [
        ("inspect", m_inspect, [0], Safe),
        ("dump", m_dump, [0], Safe),
        ("undump", m_undump, [0], Safe),
    ]);
    crate::core::string_methods::init(ctx);
    crate::core::string_case::init(ctx);
    crate::core::string_iter::init(ctx);
    crate::core::string_conv::init(ctx);
    crate::core::string_tr::init(ctx);
    crate::core::string_encode::init(ctx);
    crate::core::unpack::init(ctx);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspect_escapes() {
        let f = |b: &[u8], e: u8| String::from_utf8(inspect_bytes(b, e)).unwrap();
        assert_eq!(f(b"a\"b\\", UTF_8), "\"a\\\"b\\\\\"");
        assert_eq!(f(b"\n\x1b\x01\x7f", UTF_8), "\"\\n\\e\\u0001\\u007F\"");
        assert_eq!(f("é".as_bytes(), UTF_8), "\"é\"");
        assert_eq!(f("é".as_bytes(), BINARY), "\"\\xC3\\xA9\"");
        assert_eq!(f(b"\xff", UTF_8), "\"\\xFF\"");
        assert_eq!(f(b"#{a}#b", UTF_8), "\"\\#{a}#b\"");
        assert_eq!(f("\u{2028}".as_bytes(), UTF_8), "\"\\u2028\"");
    }

    #[test]
    fn dump_round_trip() {
        let src = "é\n\u{1F600}".as_bytes().to_vec();
        let d = dump_bytes(&src, UTF_8);
        assert_eq!(String::from_utf8(d.clone()).unwrap(), "\"\\u00E9\\n\\u{1F600}\"");
        let (back, enc) = undump_bytes(&d).unwrap_or_default();
        assert_eq!(back, src);
        assert!(enc.is_none());
    }
}
