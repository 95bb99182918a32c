//! `cgi/escape`: CGI::Escape, the fast URL and HTML escaping that CRuby's cgi/util.rb
//! prepends to CGI::Util (and extends CGI with) when it can load it.
//!
//! Invariants:
//! - Arguments convert with `to_str` (TypeError for nil, as CRuby's C version).
//! - Strings in an ASCII-compatible encoding are escaped here, byte by byte, and the
//!   result keeps the argument's encoding; other encodings (UTF-16 …) go to the Ruby
//!   methods of CGI::Util behind CGI::Escape (cgi/util.rb's).

use crate::core::{encoding, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn constant(ctx: &mut Ctx, outer: Value, name: &str) -> Option<Value> {
    let id = ctx.intern(name);
    crate::core::module::body(outer).const_get(id).map(|e| e.value).filter(|v| !v.is_undef())
}

/// CGI::Util's own (Ruby) definition of `name`, behind CGI::Escape: what `super` would
/// call from a method of CGI::Escape.
fn ruby_fallback(ctx: &mut Ctx, recv: Value, name: &str, args: &[Value]) -> Result<Value> {
    let obj = ctx.c().object;
    let util = constant(ctx, obj, "CGI").and_then(|cgi| constant(ctx, cgi, "Util"));
    let sym = Value::symbol(ctx.intern(name));
    let m = match util {
        Some(u) => ctx.call_str(u, "instance_method", &[sym])?,
        None => Value::NIL,
    };
    let m = if m.is_nil() { m } else { ctx.call_str(m, "super_method", &[])? };
    if m.is_nil() {
        let c = ctx.c().not_implemented_error;
        return Err(ctx.raise(c, &format!("{name} is not implemented for this encoding without cgi/util")));
    }
    let mut v = vec![recv];
    v.extend_from_slice(args);
    ctx.call_str(m, "bind_call", &v)
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'~')
}

fn percent_encode(b: &[u8], space_as_plus: bool) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        if is_unreserved(c) {
            out.push(c);
        } else if c == b' ' && space_as_plus {
            out.push(b'+');
        } else {
            out.extend_from_slice(&[b'%', HEX[(c >> 4) as usize], HEX[(c & 15) as usize]]);
        }
    }
    out
}

fn percent_decode(b: &[u8], plus_as_space: bool) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(if c == b'+' && plus_as_space { b' ' } else { c });
        i += 1;
    }
    out
}

/// A new String of `bytes` in encoding `enc`.
fn with_encoding(ctx: &mut Ctx, bytes: Vec<u8>, enc: u8) -> Value {
    string::new_with_enc(ctx, bytes, enc)
}

fn escape_with(ctx: &mut Ctx, recv: Value, args: &Args, name: &str, space_as_plus: bool) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let enc = string::encoding(s);
    if !encoding::is_ascii_compatible(enc) {
        return ruby_fallback(ctx, recv, name, &[s]);
    }
    let out = percent_encode(string::bytes(s), space_as_plus);
    Ok(with_encoding(ctx, out, enc))
}

fn m_escape(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    escape_with(ctx, recv, args, "escape", true)
}

fn m_escape_uri_component(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    escape_with(ctx, recv, args, "escapeURIComponent", false)
}

/// Decodes, then tags the bytes with `encoding` (default CGI::Util's @@accept_charset),
/// or with the argument's own encoding when they are invalid in it.
fn unescape_with(ctx: &mut Ctx, recv: Value, args: &Args, name: &str, plus_as_space: bool) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let enc = string::encoding(s);
    if !encoding::is_ascii_compatible(enc) {
        let mut v = vec![s];
        v.extend_from_slice(&args.pos[1..]);
        return ruby_fallback(ctx, recv, name, &v);
    }
    let target = match args.pos.get(1) {
        Some(&e) => e,
        None => {
            let obj = ctx.c().object;
            let util = constant(ctx, obj, "CGI").and_then(|cgi| constant(ctx, cgi, "Util"));
            let cvar = Value::symbol(ctx.intern("@@accept_charset"));
            match util {
                Some(u) if ctx.call_str(u, "class_variable_defined?", &[cvar])?.truthy() => ctx.call_str(u, "class_variable_get", &[cvar])?,
                _ => encoding::encoding_object(ctx, encoding::UTF_8),
            }
        }
    };
    let out = percent_decode(string::bytes(s), plus_as_space);
    let r = with_encoding(ctx, out, encoding::BINARY);
    let mark = ctx.protect(r);
    let tagged = ctx.call_str(r, "force_encoding", &[target]);
    ctx.unprotect(mark);
    tagged?;
    if !string::is_valid(r) {
        string::set_encoding(r, enc);
    }
    Ok(r)
}

fn m_unescape(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    unescape_with(ctx, recv, args, "unescape", true)
}

fn m_unescape_uri_component(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    unescape_with(ctx, recv, args, "unescapeURIComponent", false)
}

/// `escapeHTML(str)`: ' & " < > as &#39; &amp; &quot; &lt; &gt;.
fn m_escape_html(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let enc = string::encoding(s);
    if !encoding::is_ascii_compatible(enc) {
        return ruby_fallback(ctx, recv, "escapeHTML", &[s]);
    }
    let b = string::bytes(s);
    let mut out = Vec::with_capacity(b.len() + b.len() / 8);
    for &c in b {
        match c {
            b'\'' => out.extend_from_slice(b"&#39;"),
            b'&' => out.extend_from_slice(b"&amp;"),
            b'"' => out.extend_from_slice(b"&quot;"),
            b'<' => out.extend_from_slice(b"&lt;"),
            b'>' => out.extend_from_slice(b"&gt;"),
            _ => out.push(c),
        }
    }
    Ok(with_encoding(ctx, out, enc))
}

/// `unescapeHTML(str)`: the five named entities and numeric ones (`&#99;`, `&#x63;`)
/// below the encoding's limit (UTF-8: all of Unicode, ISO-8859-1: 256, others: ASCII);
/// anything else stays as written.
fn m_unescape_html(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let enc = string::encoding(s);
    if !encoding::is_ascii_compatible(enc) {
        return ruby_fallback(ctx, recv, "unescapeHTML", &[s]);
    }
    let limit: u32 = if encoding::is_utf8(enc) {
        0x10ffff
    } else if encoding::name(enc) == "ISO-8859-1" {
        256
    } else {
        128
    };
    let b = string::bytes(s);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'&' {
            if let Some(len) = b[i + 1..].iter().take(16).position(|&c| c == b';') {
                let name = &b[i + 1..i + 1 + len];
                let named: Option<&[u8]> = match name {
                    b"apos" => Some(b"'"),
                    b"amp" => Some(b"&"),
                    b"quot" => Some(b"\""),
                    b"gt" => Some(b">"),
                    b"lt" => Some(b"<"),
                    _ => None,
                };
                let numeric = match name {
                    [b'#', b'x' | b'X', hex @ ..] if !hex.is_empty() && hex.iter().all(u8::is_ascii_hexdigit) => Some(u32::from_str_radix(std::str::from_utf8(hex).unwrap_or(""), 16).unwrap_or(u32::MAX)),
                    [b'#', dec @ ..] if !dec.is_empty() && dec.iter().all(u8::is_ascii_digit) => Some(std::str::from_utf8(dec).unwrap_or("").parse::<u32>().unwrap_or(u32::MAX)),
                    _ => None,
                };
                let decoded = match (named, numeric) {
                    (Some(t), _) => Some(t.to_vec()),
                    (None, Some(n)) if n < limit => encoding::encode_codepoint(enc, n),
                    _ => None,
                };
                if let Some(d) = decoded {
                    out.extend_from_slice(&d);
                    i += len + 2;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    Ok(with_encoding(ctx, out, enc))
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let cgi = match constant(ctx, obj, "CGI") {
        Some(c) => c,
        None => crate::core::module_methods::define_class_under(ctx, obj, "CGI", obj),
    };
    let escape = crate::core::module_methods::define_module_under(ctx, cgi, "Escape");
    crate::methods!(ctx, escape, [
        ("escape", m_escape, [1], Unsafe),
        ("unescape", m_unescape, [1..=2], Unsafe),
        ("escapeURIComponent", m_escape_uri_component, [1], Unsafe),
        ("unescapeURIComponent", m_unescape_uri_component, [1..=2], Unsafe),
        ("escapeHTML", m_escape_html, [1], Unsafe),
        ("unescapeHTML", m_unescape_html, [1], Unsafe),
        ("escape_html", m_escape_html, [1], Unsafe),
        ("unescape_html", m_unescape_html, [1], Unsafe),
    ]);
    // As CRuby's extension: CGI::Escape goes in front of CGI::Util (made here when
    // cgi/util.rb has not run yet; its Ruby methods are then defined behind us).
    let util = match constant(ctx, cgi, "Util") {
        Some(u) => u,
        None => crate::core::module_methods::define_module_under(ctx, cgi, "Util"),
    };
    ctx.call_str(util, "prepend", &[escape])?;
    ctx.call_str(cgi, "extend", &[escape])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{percent_decode, percent_encode};

    #[test]
    fn percent_encoding_keeps_unreserved_bytes() {
        assert_eq!(percent_encode(b"a-Z_0.~", true), b"a-Z_0.~");
        assert_eq!(percent_encode(b"a b/\xC3\xA9", true), b"a+b%2F%C3%A9");
        assert_eq!(percent_encode(b"a b", false), b"a%20b");
    }

    #[test]
    fn percent_decoding_leaves_malformed_escapes() {
        assert_eq!(percent_decode(b"a+b%20c", true), b"a b c");
        assert_eq!(percent_decode(b"a+b", false), b"a+b");
        assert_eq!(percent_decode(b"%zz%4%", true), b"%zz%4%");
        assert_eq!(percent_decode(b"%c3%A9", true), b"\xC3\xA9");
    }
}
