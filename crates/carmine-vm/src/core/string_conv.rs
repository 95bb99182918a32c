//! String conversions and successor logic: `to_i`/`to_f`/`to_r`/`to_c`/`hex`/`oct`/`ord`/
//! `sum`/`to_sym`/`crypt`, and `succ`/`upto` (also used by String ranges).
//!
//! Invariants:
//! - Number parsing is shared with `Integer()`/`Float()`/`Rational()`/`Complex()`
//!   (`integer::parse_int`, `float::parse_float`, `rational::parse`, `complex::parse`);
//!   the lenient forms used here never raise for malformed text.
//! - `succ` follows CRuby's `str_succ`: the rightmost alphanumeric run is incremented with
//!   carry, an alphanumeric run separated by a non-alphanumeric of the other kind stops the
//!   carry, and a string without alphanumerics is incremented bytewise.

use crate::core::encoding::{self, US_ASCII};
use crate::core::string::{self, bytes, encoding, len, modify, new_like, new_with_enc, to_str_arg};
use crate::core::{bignum, float, integer, numeric_parse};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

// ---- numbers ----

fn to_i(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    must_ascii_compatible(ctx, recv)?;
    let base = match args.pos.first() {
        Some(&b) => integer::to_i64_arg(ctx, b)?,
        None => 10,
    };
    if base < 0 || base == 1 || base > 36 {
        return Err(ctx.arg_error(&format!("invalid radix {base}")));
    }
    let n = integer::parse_int(bytes(recv), base as i32, false).unwrap_or_default();
    Ok(bignum::normalize(ctx, n))
}

fn hex(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    must_ascii_compatible(ctx, recv)?;
    let n = integer::parse_int(bytes(recv), 16, false).unwrap_or_default();
    Ok(bignum::normalize(ctx, n))
}

fn oct(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    must_ascii_compatible(ctx, recv)?;
    let n = integer::parse_int(bytes(recv), -8, false).unwrap_or_default();
    Ok(bignum::normalize(ctx, n))
}

/// CRuby's `rb_must_asciicompat`: numbers are parsed only from ASCII-compatible strings.
fn must_ascii_compatible(ctx: &mut Ctx, recv: Value) -> Result<()> {
    let enc = string::encoding(recv);
    if crate::core::encoding::is_ascii_compatible(enc) {
        return Ok(());
    }
    let msg = format!("ASCII incompatible encoding: {}", crate::core::encoding::name(enc));
    Err(ctx.raise(ctx.c().compatibility_error, &msg))
}

fn to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    must_ascii_compatible(ctx, recv)?;
    let f = float::parse_float(bytes(recv), false).unwrap_or(0.0);
    if f.is_infinite() {
        float::warn_out_of_range(ctx, bytes(recv));
    }
    Ok(float::new(ctx, f))
}

fn to_r(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    must_ascii_compatible(ctx, recv)?;
    let b = bytes(recv).to_vec();
    numeric_parse::rational_value(ctx, &b, false).map(|r| r.unwrap_or(Value::NIL))
}

fn to_c(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    must_ascii_compatible(ctx, recv)?;
    let b = bytes(recv).to_vec();
    numeric_parse::complex_value(ctx, &b, false).map(|r| r.unwrap_or(Value::NIL))
}

fn ord(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let b = bytes(recv);
    if b.is_empty() {
        return Err(ctx.arg_error("empty string"));
    }
    let enc = encoding(recv);
    if encoding::precise_char_len(enc, b, 0).is_err() {
        return Err(ctx.arg_error(&format!("invalid byte sequence in {}", encoding::name(enc))));
    }
    let (cp, _) = encoding::codepoint_at(enc, b, 0);
    Ok(Value::fixnum(cp as i64))
}

/// `String#chr`: the first character (empty for an empty string).
fn chr(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match crate::core::string::substr(ctx, recv, 0, 1) {
        Some(v) => Ok(v),
        None => Ok(crate::core::string::new_like(ctx, recv, Vec::new())),
    }
}

fn sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let bits = match args.pos.first() {
        Some(&b) => integer::to_int_arg(ctx, b)? as i64,
        None => 16,
    };
    let total: u64 = bytes(recv).iter().map(|&b| b as u64).sum();
    let r = if bits > 0 && bits < 64 { total & ((1u64 << bits) - 1) } else { total };
    Ok(Value::fixnum(r as i64))
}

fn to_sym(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::intern(ctx, recv))
}

/// The system `crypt(3)`, loaded from libcrypt at first use (so the binary does not
/// depend on it being installed).
fn system_crypt() -> Option<unsafe extern "C" fn(*const libc::c_char, *const libc::c_char) -> *mut libc::c_char> {
    static CRYPT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let addr = *CRYPT.get_or_init(|| {
        // SAFETY: dlopen/dlsym with NUL-terminated names; a null result is handled.
        unsafe {
            let h = libc::dlopen(c"libcrypt.so.1".as_ptr(), libc::RTLD_LAZY);
            if h.is_null() {
                return 0;
            }
            libc::dlsym(h, c"crypt".as_ptr()) as usize
        }
    });
    // SAFETY: the symbol is libcrypt's `char *crypt(const char *, const char *)`.
    (addr != 0).then(|| unsafe { std::mem::transmute::<usize, unsafe extern "C" fn(*const libc::c_char, *const libc::c_char) -> *mut libc::c_char>(addr) })
}

fn crypt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let salt = to_str_arg(ctx, args.pos[0])?;
    if len(salt) < 2 {
        return Err(ctx.arg_error("salt too short (need >=2 bytes)"));
    }
    if bytes(recv).contains(&0) {
        return Err(ctx.arg_error("string contains null byte"));
    }
    if bytes(salt).contains(&0) {
        return Err(ctx.arg_error("string contains null byte"));
    }
    let Some(f) = system_crypt() else { return Err(ctx.not_implemented("String#crypt (libcrypt is not available)")) };
    let key = std::ffi::CString::new(bytes(recv).to_vec()).unwrap_or_default();
    let s = std::ffi::CString::new(bytes(salt).to_vec()).unwrap_or_default();
    // SAFETY: both arguments are NUL-terminated; crypt returns a static buffer (or null),
    // copied out before anything else can call crypt (the method holds the giant lock).
    let out = unsafe {
        let p = f(key.as_ptr(), s.as_ptr());
        if p.is_null() {
            None
        } else {
            Some(std::ffi::CStr::from_ptr(p).to_bytes().to_vec())
        }
    };
    match out {
        Some(b) if !b.starts_with(b"*") => Ok(string::new_binary(ctx, &b)),
        _ => Err(ctx.raise(ctx.c().system_call_error, "Invalid argument - crypt")),
    }
}

// ---- succ ----

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Alpha,
    Digit,
}

enum Neighbor {
    NotChar,
    Found(Vec<u8>),
    /// The wrapped character and the carry to insert to its left.
    Wrapped(Vec<u8>, Vec<u8>),
}

fn kind_of(enc: u8, cp: u32) -> Option<Kind> {
    if cp >= 0x80 && !encoding::is_unicode(enc) {
        return None;
    }
    let c = char::from_u32(cp)?;
    if c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric()) {
        Some(Kind::Digit)
    } else if c.is_alphabetic() {
        Some(Kind::Alpha)
    } else {
        None
    }
}

/// The next character after `cp` in `enc`, when it exists.
fn next_codepoint(enc: u8, cp: u32) -> Option<u32> {
    let mut n = cp + 1;
    if encoding::is_unicode(enc) && (0xD800..=0xDFFF).contains(&n) {
        n = 0xE000;
    }
    (n <= 0x10FFFF && encoding::encode_codepoint(enc, n).is_some()).then_some(n)
}

/// CRuby's `enc_succ_alnum_char` for the character `ch`.
fn succ_alnum_char(enc: u8, ch: &[u8]) -> Neighbor {
    let (cp, _) = encoding::codepoint_at(enc, ch, 0);
    let Some(kind) = kind_of(enc, cp) else { return Neighbor::NotChar };
    let enc_of = |c: u32| encoding::encode_codepoint(enc, c).unwrap_or_default();
    // Up to one gap may be skipped to find the next character of the same kind.
    let mut probe = cp;
    for _ in 0..2 {
        match next_codepoint(enc, probe) {
            Some(n) => {
                if kind_of(enc, n) == Some(kind) {
                    return Neighbor::Found(enc_of(n));
                }
                probe = n;
            }
            None => break,
        }
    }
    // Wrap to the first character of the contiguous run of this kind.
    let mut first = cp;
    while first > 0 && kind_of(enc, first - 1) == Some(kind) && encoding::encode_codepoint(enc, first - 1).is_some() {
        first -= 1;
    }
    if first == cp {
        return Neighbor::NotChar;
    }
    let carry = if kind == Kind::Digit { first + 1 } else { first };
    Neighbor::Wrapped(enc_of(first), enc_of(carry))
}

/// `String#succ` of `b` in encoding `enc`.
pub fn succ_bytes(b: &[u8], enc: u8) -> Vec<u8> {
    if b.is_empty() {
        return Vec::new();
    }
    let mut v = b.to_vec();
    let starts: Vec<(usize, usize, bool)> = {
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match encoding::precise_char_len(enc, b, i) {
                Ok(n) => {
                    out.push((i, n, true));
                    i += n;
                }
                Err(_) => {
                    out.push((i, 1, false));
                    i += 1;
                }
            }
        }
        out
    };
    // Phase 1: alphanumerics.
    let mut prev_not_char = false;
    let mut last_alnum: Option<u8> = None;
    let mut carry: Option<(usize, Vec<u8>)> = None;
    for &(s, n, ok) in starts.iter().rev() {
        if prev_not_char {
            if let Some(la) = last_alnum {
                let c = v[s];
                if (la.is_ascii_alphabetic() && c.is_ascii_digit()) || (la.is_ascii_digit() && c.is_ascii_alphabetic()) {
                    break;
                }
            }
        }
        if !ok {
            continue;
        }
        match succ_alnum_char(enc, &v[s..s + n]) {
            Neighbor::NotChar => {
                prev_not_char = true;
                continue;
            }
            Neighbor::Found(nb) => {
                v.splice(s..s + n, nb);
                return v;
            }
            Neighbor::Wrapped(nb, c) => {
                last_alnum = Some(v[s]);
                let wrapped_len = nb.len();
                v.splice(s..s + n, nb);
                debug_assert_eq!(wrapped_len, n);
                carry = Some((s, c));
                prev_not_char = false;
            }
        }
    }
    if let Some((pos, c)) = carry {
        v.splice(pos..pos, c);
        return v;
    }
    // Phase 2: no alphanumerics: increment the last character with bytewise carry.
    let mut carry_pos = 0;
    for &(s, n, _) in starts.iter().rev() {
        let mut k = s + n;
        let mut wrapped = true;
        while k > s {
            k -= 1;
            if v[k] == 0xff {
                v[k] = 0;
            } else {
                v[k] += 1;
                wrapped = false;
                break;
            }
        }
        if !wrapped {
            return v;
        }
        carry_pos = s;
    }
    v.insert(carry_pos, 1);
    v
}

fn succ(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = succ_bytes(bytes(recv), encoding(recv));
    Ok(new_like(ctx, recv, out))
}

fn succ_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    modify(ctx, recv)?;
    let out = succ_bytes(bytes(recv), encoding(recv));
    string::set_bytes(recv, out);
    Ok(recv)
}

/// Iterates `recv.upto(last, excl)` (CRuby's `rb_str_upto_each`); `f` returns false to stop.
pub fn upto_each(ctx: &mut Ctx, recv: Value, last: Value, excl: bool, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    let enc = string::check_compatible(ctx, recv, last)?;
    let ascii = string::is_7bit(recv) && string::is_7bit(last);
    let (b, e) = (bytes(recv).to_vec(), bytes(last).to_vec());
    if b.len() == 1 && e.len() == 1 && ascii {
        let (mut c, e) = (b[0], e[0]);
        if c > e || (excl && c == e) {
            return Ok(());
        }
        loop {
            let s = new_with_enc(ctx, vec![c], enc);
            if !f(ctx, s)? {
                return Ok(());
            }
            if !excl && c == e {
                break;
            }
            c += 1;
            if excl && c == e {
                break;
            }
        }
        return Ok(());
    }
    let all_digits = |x: &[u8]| !x.is_empty() && x.iter().all(u8::is_ascii_digit);
    if ascii && all_digits(&b) && all_digits(&e) {
        let width = b.len();
        let bi = integer::parse_int(&b, 10, false).unwrap_or_default();
        let ei = integer::parse_int(&e, 10, false).unwrap_or_default();
        let mut i = bi;
        while i <= ei {
            if excl && i == ei {
                break;
            }
            // Padded by hand: `format!` widths stop at u16::MAX and the width is the string's.
            let digits = i.to_string().into_bytes();
            let mut padded = vec![b'0'; width.saturating_sub(digits.len())];
            padded.extend_from_slice(&digits);
            let s = new_with_enc(ctx, padded, US_ASCII);
            if !f(ctx, s)? {
                return Ok(());
            }
            i += 1;
        }
        return Ok(());
    }
    let n = crate::core::string_methods::compare(recv, last);
    if n > 0 || (excl && n == 0) {
        return Ok(());
    }
    let after_end = succ_bytes(&e, encoding(last));
    let mut current = b;
    while current != after_end {
        let next = if excl || current != e { Some(succ_bytes(&current, enc)) } else { None };
        let s = new_with_enc(ctx, current.clone(), enc);
        if !f(ctx, s)? {
            break;
        }
        let Some(next) = next else { break };
        current = next;
        if excl && current == e {
            break;
        }
        if current.len() > e.len() || current.is_empty() {
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

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("to_i", to_i, [0..=1], Safe),
        ("to_f", to_f, [0], Safe),
        ("to_r", to_r, [0], Safe),
        ("to_c", to_c, [0], Safe),
        ("hex", hex, [0], Safe),
        ("oct", oct, [0], Safe),
        ("ord", ord, [0], Safe),
        ("chr", chr, [0], Safe),
        ("sum", sum, [0..=1], Safe),
        ("to_sym", to_sym, [0], Safe),
        ("intern", to_sym, [0], Safe),
        ("crypt", crypt, [1], Unsafe),
        ("succ", succ, [0], Safe),
        ("next", succ, [0], Safe),
        ("succ!", succ_bang, [0], Unsafe),
        ("next!", succ_bang, [0], Unsafe),
        ("upto", upto, [1..=2], Safe),
    ]);
}

#[cfg(test)]
mod tests {
    use super::succ_bytes;
    use crate::core::encoding::{BINARY, UTF_8};

    fn s(x: &str) -> String {
        String::from_utf8(succ_bytes(x.as_bytes(), UTF_8)).unwrap()
    }

    #[test]
    fn succ_cases() {
        assert_eq!(s("az"), "ba");
        assert_eq!(s("zz"), "aaa");
        assert_eq!(s("a9"), "b0");
        assert_eq!(s("Zz"), "AAa");
        assert_eq!(s("zz99"), "aaa00");
        assert_eq!(s("a-9"), "a-10");
        assert_eq!(s("1.9"), "2.0");
        assert_eq!(s("-9"), "-10");
        assert_eq!(s("***"), "**+");
        assert_eq!(s("<<koala>>"), "<<koalb>>");
        assert_eq!(s("1999zzz"), "2000aaa");
        assert_eq!(s("ZZZ9999"), "AAAA0000");
        assert_eq!(s("あ"), "ぃ");
        assert_eq!(succ_bytes(b"\xff", BINARY), b"\x01\x00");
    }
}
