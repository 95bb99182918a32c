//! Regexp (Onigmo through the `onig` crate) and MatchData, plus the String methods that
//! take a pattern (scan, gsub/sub, split, index, []).
//!
//! Invariants:
//! - A Regexp is compiled once; its source and options never change.
//! - Subjects are checked for valid encoding before Onigmo sees them (invalid UTF-8 raises
//!   `ArgumentError`, as in CRuby), and searches use `search_with_param`, which reports
//!   errors instead of panicking.
//! - MatchData keeps a frozen copy of the subject and byte offsets of each group.

use onig::{EncodedBytes, MatchParam, Regex, RegexOptions, Region, SearchOptions};

use crate::core::{array, encoding, hash, integer, object, regexp_syntax, string};
use crate::error::Unwind;
use crate::interp::{ops, Args};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const IGNORECASE: u32 = 1;
pub const EXTENDED: u32 = 2;
pub const MULTILINE: u32 = 4;
pub const FIXEDENCODING: u32 = 16;
pub const NOENCODING: u32 = 32;

pub struct RegexpObj {
    /// The pattern compiled for `enc` (None until `initialize`).
    pub regex: Option<Regex>,
    /// The pattern compiled for other subject encodings, keyed by Oniguruma encoding: a
    /// regexp not fixed to an encoding adapts to each subject's (CRuby recompiles too).
    others: Vec<(usize, Regex)>,
    pub source: Vec<u8>,
    /// Ruby-visible options, FIXEDENCODING and NOENCODING included.
    pub opts: u32,
    pub enc: u8,
    pub literal: bool,
}

crate::data_obj!(RegexpObj);

pub struct MatchObj {
    pub regexp: Value,
    pub string: Value,
    /// Byte ranges of each group (None when the group did not participate).
    pub groups: Vec<Option<(usize, usize)>>,
}

crate::data_obj!(MatchObj, |s, m| {
    m.mark(s.regexp);
    m.mark(s.string);
});

pub fn is_regexp(v: Value) -> bool {
    data_ref::<RegexpObj>(v).is_some()
}

pub fn is_match_data(v: Value) -> bool {
    data_ref::<MatchObj>(v).is_some()
}

/// The Oniguruma encoding a pattern or subject in `enc` is compiled/searched with.
/// US-ASCII patterns are compiled as UTF-8: on ASCII text the two agree, and a
/// non-fixed ASCII pattern is mostly matched against UTF-8 strings.
fn onig_encoding(enc: u8) -> onig_sys::OnigEncoding {
    use onig_sys as o;
    match encoding::name(enc) {
        "UTF-8" | "US-ASCII" | "UTF8-MAC" => &raw mut o::OnigEncodingUTF8,
        "EUC-JP" => &raw mut o::OnigEncodingEUC_JP,
        "Shift_JIS" | "Windows-31J" => &raw mut o::OnigEncodingSJIS,
        "EUC-KR" => &raw mut o::OnigEncodingEUC_KR,
        "Big5" => &raw mut o::OnigEncodingBIG5,
        "GB18030" => &raw mut o::OnigEncodingGB18030,
        "KOI8-R" => &raw mut o::OnigEncodingKOI8_R,
        "Windows-1251" => &raw mut o::OnigEncodingCP1251,
        "ISO-8859-1" | "Windows-1252" => &raw mut o::OnigEncodingISO_8859_1,
        "ISO-8859-2" => &raw mut o::OnigEncodingISO_8859_2,
        "ISO-8859-15" => &raw mut o::OnigEncodingISO_8859_15,
        "UTF-16LE" => &raw mut o::OnigEncodingUTF16_LE,
        "UTF-16BE" => &raw mut o::OnigEncodingUTF16_BE,
        "UTF-32LE" => &raw mut o::OnigEncodingUTF32_LE,
        "UTF-32BE" => &raw mut o::OnigEncodingUTF32_BE,
        _ => &raw mut o::OnigEncodingASCII,
    }
}

/// Compiles a Ruby pattern for Oniguruma encoding `oenc`; errors are CRuby's messages
/// without the `: /source/` suffix.
fn compile_regex(source: &[u8], opts: u32, oenc: onig_sys::OnigEncoding) -> std::result::Result<Regex, String> {
    let mut o = RegexOptions::REGEX_OPTION_NONE;
    if opts & IGNORECASE != 0 {
        o |= RegexOptions::REGEX_OPTION_IGNORECASE;
    }
    if opts & EXTENDED != 0 {
        o |= RegexOptions::REGEX_OPTION_EXTEND;
    }
    if opts & MULTILINE != 0 {
        o |= RegexOptions::REGEX_OPTION_MULTILINE;
    }
    let utf8 = std::ptr::eq(oenc, &raw mut onig_sys::OnigEncodingUTF8);
    let pattern = regexp_syntax::translate(source, utf8, opts & EXTENDED != 0)?;
    let pat = EncodedBytes::from_parts(&pattern, oenc);
    Regex::with_options_and_encoding(pat, o, &regexp_syntax::syntax()).map_err(|e| e.description().to_string())
}

/// The encoding and encoding flags of a new regexp from `source` in `str_enc` with
/// `opts` (CRuby's `rb_reg_initialize`): ASCII-only patterns are US-ASCII and adapt to
/// their subjects; non-ASCII characters or escapes fix the encoding (`\u` to UTF-8);
/// `/n` makes a non-ASCII pattern BINARY.
fn choose_encoding(source: &[u8], opts: u32, str_enc: u8) -> (u8, u32) {
    if !encoding::is_ascii_compatible(str_enc) {
        return (str_enc, FIXEDENCODING);
    }
    let needs = regexp_syntax::encoding_needs(source);
    if opts & NOENCODING != 0 {
        return if needs.non_ascii { (encoding::BINARY, FIXEDENCODING | NOENCODING) } else { (encoding::US_ASCII, NOENCODING) };
    }
    if needs.unicode_escape {
        return (encoding::UTF_8, FIXEDENCODING);
    }
    if opts & FIXEDENCODING != 0 || needs.non_ascii {
        return (str_enc, FIXEDENCODING);
    }
    (encoding::US_ASCII, 0)
}

/// A RegexpError "`msg`: /source/".
fn regexp_error(ctx: &mut Ctx, msg: &str, source: &[u8]) -> Unwind {
    let s = String::from_utf8_lossy(source).into_owned();
    ctx.raise(ctx.c().regexp_error, &format!("{msg}: /{s}/"))
}

/// Fills an allocated Regexp (`Regexp#initialize`).
fn init_regexp(ctx: &mut Ctx, re: Value, source: &[u8], opts: u32, str_enc: u8) -> Result<()> {
    if encoding::ENCODINGS.get(str_enc as usize).is_some_and(|e| e.dummy) {
        return Err(regexp_error(ctx, "can't make regexp with dummy encoding", source));
    }
    let (enc, enc_flags) = choose_encoding(source, opts, str_enc);
    let regex = match compile_regex(source, opts, onig_encoding(enc)) {
        Ok(r) => r,
        Err(msg) => return Err(regexp_error(ctx, &msg, source)),
    };
    let Some(r) = data_ref::<RegexpObj>(re) else { return Err(ctx.type_error("wrong argument type (expected Regexp)")) };
    r.regex = Some(regex);
    r.others.clear();
    r.source = source.to_vec();
    r.opts = (opts & (IGNORECASE | EXTENDED | MULTILINE)) | enc_flags;
    r.enc = enc;
    Ok(())
}

fn alloc_regexp(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(RegexpObj { regex: None, others: Vec::new(), source: Vec::new(), opts: 0, enc: encoding::BINARY, literal: false })))
}

/// A new Regexp of class `klass` from `source` in encoding `enc`.
pub fn new_regexp(ctx: &mut Ctx, klass: Value, source: &[u8], opts: u32, enc: u8) -> Result<Value> {
    let v = alloc_regexp(ctx, klass)?;
    init_regexp(ctx, v, source, opts, enc)?;
    Ok(v)
}

/// Regexp option bits for a literal's `/e`, `/s` and `/u` (an encoding index + 1 in bits
/// 8..16 of the options the compiler passes; CRuby's options never use those bits).
pub fn forced_encoding_opts(enc: u8) -> u32 {
    ((enc as u32) + 1) << 8
}

/// Splits the compiler's options into Ruby options and the string encoding to use.
fn literal_opts(opts: u32, source_enc: u8) -> (u32, u8) {
    let forced = (opts >> 8) & 0xff;
    let base = opts & (IGNORECASE | EXTENDED | MULTILINE | NOENCODING);
    if forced > 0 {
        (base | FIXEDENCODING, (forced - 1) as u8)
    } else if opts & NOENCODING != 0 {
        (base, encoding::BINARY)
    } else {
        (base, source_enc)
    }
}

/// A regexp literal (compile-time; a bad pattern is a SyntaxError). `source_enc` is the
/// source file's encoding.
pub fn new_literal(ctx: &mut Ctx, source: &[u8], opts: u32, source_enc: u8) -> Result<Value> {
    let (opts, enc) = literal_opts(opts, source_enc);
    let klass = ctx.c().regexp;
    match new_regexp(ctx, klass, source, opts, enc) {
        Ok(v) => {
            if let Some(r) = data_ref::<RegexpObj>(v) {
                r.literal = true;
            }
            Ok(object::freeze(v))
        }
        Err(Unwind::Raise(e)) => {
            let msg = crate::core::exception::message_string(ctx, e);
            Err(ctx.raise(ctx.c().syntax_error, &msg))
        }
        Err(e) => Err(e),
    }
}

/// An interpolated regexp literal. Strings and regexps that fix an encoding (non-ASCII
/// content) must agree on it (CRuby's `rb_reg_preprocess_dregexp`).
pub fn from_parts(ctx: &mut Ctx, parts: &[Value], opts: u32) -> Result<Value> {
    let (opts, forced) = literal_opts(opts & !(1 << 31), encoding::UTF_8);
    let mut src = Vec::new();
    let mut fixed: Option<u8> = None;
    for &p in parts {
        let (bytes, enc) = if is_regexp(p) {
            let Some(r) = data_ref::<RegexpObj>(p) else { continue };
            let enc = if r.opts & FIXEDENCODING != 0 { Some(r.enc) } else { None };
            (to_s_bytes(p), enc)
        } else {
            let b = string::bytes(p).to_vec();
            let needs = regexp_syntax::encoding_needs(&b);
            let mut enc = string::encoding(p);
            if opts & NOENCODING != 0 && enc != encoding::BINARY {
                if !b.is_ascii() {
                    return Err(regexp_error(ctx, "/.../n has a non escaped non ASCII character in non ASCII-8BIT script", &b));
                }
                enc = encoding::BINARY;
            }
            let fixes = !b.is_ascii() || needs.non_ascii || !encoding::is_ascii_compatible(enc);
            (b, if needs.unicode_escape { Some(encoding::UTF_8) } else if fixes { Some(enc) } else { None })
        };
        if let Some(e) = enc {
            if let Some(f) = fixed.filter(|&f| f != e) {
                let msg = format!("encoding mismatch in dynamic regexp : {} and {}", encoding::name(f), encoding::name(e));
                return Err(ctx.raise(ctx.c().regexp_error, &msg));
            }
            fixed = Some(e);
        }
        src.extend_from_slice(&bytes);
    }
    let klass = ctx.c().regexp;
    let enc = if opts & FIXEDENCODING != 0 { forced } else { fixed.unwrap_or(forced) };
    let opts = if fixed.is_some() && opts & NOENCODING == 0 { opts | FIXEDENCODING } else { opts };
    new_regexp(ctx, klass, &src, opts, enc)
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a RegexpObj> {
    match data_ref::<RegexpObj>(v) {
        Some(r) if r.regex.is_some() => Ok(r),
        _ => Err(ctx.type_error("uninitialized Regexp")),
    }
}

/// The encoding to match `s` with (CRuby's `rb_reg_prepare_enc`): the string's, unless
/// the regexp's encoding is fixed; incompatible pairs raise Encoding::CompatibilityError.
fn prepare_encoding(ctx: &mut Ctx, r: &RegexpObj, s: Value) -> Result<u8> {
    let senc = string::encoding(s);
    if !string::is_valid(s) {
        return Err(ctx.arg_error(&format!("invalid byte sequence in {}", encoding::name(senc))));
    }
    let seven_bit = string::is_7bit(s);
    if r.enc == senc {
        return Ok(senc);
    }
    if seven_bit && r.enc == encoding::US_ASCII {
        return Ok(r.enc);
    }
    let incompatible = !encoding::is_ascii_compatible(senc) || (r.opts & FIXEDENCODING != 0 && (!encoding::is_ascii_compatible(r.enc) || !seven_bit));
    if incompatible {
        let msg = format!("incompatible encoding regexp match ({} regexp with {} string)", encoding::name(r.enc), encoding::name(senc));
        return Err(ctx.raise(ctx.c().compatibility_error, &msg));
    }
    if r.opts & FIXEDENCODING != 0 {
        return Ok(r.enc);
    }
    if r.opts & NOENCODING != 0 && senc != encoding::BINARY && !seven_bit {
        crate::core::kernel::write_warning(ctx, &format!("historical binary regexp match /.../n against {} string", encoding::name(senc)));
    }
    Ok(senc)
}

/// The pattern compiled for Oniguruma encoding `oenc` (compiled on first use).
fn regex_for<'a>(ctx: &mut Ctx, r: &'a mut RegexpObj, oenc: onig_sys::OnigEncoding) -> Result<&'a Regex> {
    let key = oenc as usize;
    let primary = onig_encoding(r.enc) as usize;
    if key == primary {
        return match r.regex.as_ref() {
            Some(re) => Ok(re),
            None => Err(ctx.type_error("uninitialized Regexp")),
        };
    }
    let at = match r.others.iter().position(|(k, _)| *k == key) {
        Some(at) => at,
        None => match compile_regex(&r.source, r.opts, oenc) {
            Ok(re) => {
                r.others.push((key, re));
                r.others.len() - 1
            }
            Err(msg) => {
                let src = r.source.clone();
                return Err(regexp_error(ctx, &msg, &src));
            }
        },
    };
    Ok(&r.others[at].1)
}

/// Searches `s` from byte `start`; returns the group ranges of the first match.
pub fn search(ctx: &mut Ctx, re: Value, s: Value, start: usize, reverse: bool) -> Result<Option<Vec<Option<(usize, usize)>>>> {
    get(ctx, re)?;
    let Some(r) = data_ref::<RegexpObj>(re) else { return Err(ctx.type_error("uninitialized Regexp")) };
    let enc = prepare_encoding(ctx, r, s)?;
    let b = string::bytes(s);
    if start > b.len() {
        return Ok(None);
    }
    let oenc = onig_encoding(enc);
    let regex = regex_for(ctx, r, oenc)?;
    let mut region = Region::new();
    let chars = EncodedBytes::from_parts(b, oenc);
    let (from, to) = if reverse { (start, 0) } else { (start, b.len()) };
    let res = regex.search_with_param(chars, from, to, SearchOptions::SEARCH_OPTION_NONE, Some(&mut region), MatchParam::default());
    match res {
        Ok(Some(_)) => {
            let groups = (0..region.len()).map(|i| region.pos(i)).collect();
            Ok(Some(groups))
        }
        Ok(None) => Ok(None),
        Err(e) => Err(ctx.raise(ctx.c().regexp_error, e.description())),
    }
}

/// Matches `re` against the bytes of `s` from `base` on (the pattern sees them as the
/// whole subject: `\A` and `^` match at `base`), starting at `start` (>= base): anchored
/// there (`onig_match`) or searching forward. Group ranges are offsets into all of `s`.
/// For scanners (StringScanner); `$~` is not touched.
pub fn match_in(ctx: &mut Ctx, re: Value, s: Value, base: usize, start: usize, anchored: bool) -> Result<Option<Vec<Option<(usize, usize)>>>> {
    get(ctx, re)?;
    let Some(r) = data_ref::<RegexpObj>(re) else { return Err(ctx.type_error("uninitialized Regexp")) };
    let enc = prepare_encoding(ctx, r, s)?;
    let all = string::bytes(s);
    if base > start || start > all.len() {
        return Ok(None);
    }
    let b = &all[base..];
    let at = start - base;
    let oenc = onig_encoding(enc);
    let regex = regex_for(ctx, r, oenc)?;
    let mut region = Region::new();
    let chars = EncodedBytes::from_parts(b, oenc);
    let res = if anchored {
        regex.match_with_param(chars, at, SearchOptions::SEARCH_OPTION_NONE, Some(&mut region), MatchParam::default()).map(|m| m.map(|_| ()))
    } else {
        regex.search_with_param(chars, at, b.len(), SearchOptions::SEARCH_OPTION_NONE, Some(&mut region), MatchParam::default()).map(|m| m.map(|_| ()))
    };
    match res {
        Ok(Some(())) => Ok(Some((0..region.len()).map(|i| region.pos(i).map(|(x, y)| (x + base, y + base))).collect())),
        Ok(None) => Ok(None),
        Err(e) => Err(ctx.raise(ctx.c().regexp_error, e.description())),
    }
}

/// The named groups of a regexp: each name with its group numbers.
pub fn group_names(re: Value) -> Vec<(String, Vec<usize>)> {
    data_ref::<RegexpObj>(re).map(|r| names_of(r)).unwrap_or_default()
}

fn new_match(ctx: &mut Ctx, re: Value, s: Value, groups: Vec<Option<(usize, usize)>>) -> Value {
    let frozen = string::frozen_snapshot(ctx, s);
    let klass = ctx.c().match_data;
    object::new_data(ctx, klass, Box::new(MatchObj { regexp: re, string: frozen, groups }))
}

/// `re =~ s` style matching that sets `$~`; returns the MatchData or nil.
pub fn match_at(ctx: &mut Ctx, re: Value, s: Value, start: usize) -> Result<Value> {
    match search(ctx, re, s, start, false)? {
        Some(groups) => {
            let m = new_match(ctx, re, s, groups);
            ops::set_last_match(ctx, m);
            Ok(m)
        }
        None => {
            ops::set_last_match(ctx, Value::NIL);
            Ok(Value::NIL)
        }
    }
}

fn m_get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a MatchObj> {
    match data_ref::<MatchObj>(v) {
        Some(m) => Ok(m),
        None => Err(ctx.type_error("uninitialized MatchData")),
    }
}

fn group_str(ctx: &mut Ctx, m: &MatchObj, i: usize) -> Value {
    match m.groups.get(i).copied().flatten() {
        Some((s, e)) => {
            let enc = string::encoding(m.string);
            let piece = string::bytes(m.string)[s..e].to_vec();
            string::new_with_enc(ctx, piece, enc)
        }
        None => Value::NIL,
    }
}

fn names_of(r: &RegexpObj) -> Vec<(String, Vec<usize>)> {
    let mut out = Vec::new();
    if let Some(re) = &r.regex {
        re.foreach_name(|name, groups| {
            out.push((name.to_string(), groups.iter().map(|&g| g as usize).collect()));
            true
        });
    }
    out
}

fn named_group(ctx: &mut Ctx, m: &MatchObj, name: &str) -> Result<Option<Value>> {
    let Some(r) = data_ref::<RegexpObj>(m.regexp) else { return Ok(None) };
    for (n, groups) in names_of(r) {
        if n == name {
            for &g in groups.iter().rev() {
                if m.groups.get(g).copied().flatten().is_some() {
                    return Ok(Some(group_str(ctx, m, g)));
                }
            }
            return Ok(Some(Value::NIL));
        }
    }
    Ok(None)
}

/// `$&`, `` $` ``, `$'`, `$+`, `$n`, named captures (for `GetSpecial`).
pub fn match_special(ctx: &mut Ctx, md: Value, kind: u32) -> Result<Value> {
    let m = m_get(ctx, md)?;
    let b = string::bytes(m.string);
    let enc = string::encoding(m.string);
    Ok(match kind {
        1 => group_str(ctx, m, 0),
        2 => {
            let s = m.groups[0].map_or(0, |g| g.0);
            string::new_with_enc(ctx, b[..s].to_vec(), enc)
        }
        3 => {
            let e = m.groups[0].map_or(b.len(), |g| g.1);
            string::new_with_enc(ctx, b[e..].to_vec(), enc)
        }
        4 => {
            let last = (1..m.groups.len()).rev().find(|&i| m.groups[i].is_some());
            match last {
                Some(i) => group_str(ctx, m, i),
                None => Value::NIL,
            }
        }
        k if k >= 1 << 24 => {
            let li = (k - (1 << 24)) as usize;
            let frame_lits = ctx.stacks.frames.last().map(|f| f.iseq().literals.get(li).copied()).flatten();
            let name = frame_lits.and_then(|v| v.as_symbol()).map(|s| ctx.sym_str(s)).unwrap_or_default();
            named_group(ctx, m, &name)?.unwrap_or(Value::NIL)
        }
        k => group_str(ctx, m, (k - 16) as usize),
    })
}

/// The `(?-mix:src)` form.
pub fn to_s_bytes(re: Value) -> Vec<u8> {
    let Some(r) = data_ref::<RegexpObj>(re) else { return Vec::new() };
    let mut on = String::new();
    let mut off = String::new();
    for (bit, c) in [(MULTILINE, 'm'), (IGNORECASE, 'i'), (EXTENDED, 'x')] {
        if r.opts & bit != 0 {
            on.push(c);
        } else {
            off.push(c);
        }
    }
    let mut out = format!("(?{on}").into_bytes();
    if !off.is_empty() {
        out.push(b'-');
        out.extend_from_slice(off.as_bytes());
    }
    out.push(b':');
    out.extend_from_slice(&r.source);
    out.push(b')');
    out
}

/// `Regexp#inspect` (CRuby's `rb_reg_desc`): `/` is escaped, escapes are kept, control
/// characters other than whitespace and bytes that are not characters of the regexp's
/// encoding (any non-ASCII byte of a BINARY or US-ASCII regexp) are shown as `\xHH`.
fn inspect_bytes(r: &RegexpObj) -> Vec<u8> {
    let mut out = vec![b'/'];
    let mut i = 0;
    let s = &r.source;
    let utf8 = encoding::is_utf8(r.enc);
    let single_byte = r.enc == encoding::BINARY || r.enc == encoding::US_ASCII;
    let hex = |out: &mut Vec<u8>, b: u8| out.extend_from_slice(format!("\\x{b:02X}").as_bytes());
    while i < s.len() {
        let c = s[i];
        let len = if c < 0x80 || single_byte {
            1
        } else if utf8 {
            encoding::precise_char_len(encoding::UTF_8, s, i).unwrap_or(0)
        } else {
            1
        };
        match c {
            b'\\' if i + 1 < s.len() => {
                let next = if utf8 { encoding::char_len(encoding::UTF_8, s, i + 1) } else { 1 };
                out.extend_from_slice(&s[i..(i + 1 + next).min(s.len())]);
                i += 1 + next;
                continue;
            }
            b'/' => out.extend_from_slice(b"\\/"),
            0x20..=0x7e | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' => out.push(c),
            _ if c < 0x80 || single_byte => hex(&mut out, c),
            _ if utf8 && len == 0 => {
                hex(&mut out, c);
                i += 1;
                continue;
            }
            _ => out.extend_from_slice(&s[i..(i + len).min(s.len())]),
        }
        i += len;
    }
    out.push(b'/');
    for (bit, c) in [(MULTILINE, b'm'), (IGNORECASE, b'i'), (EXTENDED, b'x')] {
        if r.opts & bit != 0 {
            out.push(c);
        }
    }
    if r.opts & NOENCODING != 0 {
        out.push(b'n');
    }
    out
}

/// `Regexp.escape`.
pub fn escape_bytes(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        match c {
            b'.' | b'*' | b'?' | b'+' | b'^' | b'$' | b'|' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'\\' | b'/' | b'-' | b'#' => {
                if c != b'/' {
                    out.push(b'\\');
                }
                out.push(c);
            }
            b' ' => out.extend_from_slice(b"\\ "),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x0b => out.extend_from_slice(b"\\v"),
            _ => out.push(c),
        }
    }
    out
}

/// Converts a pattern argument: Regexp as is, String as a literal pattern.
pub fn pattern_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_regexp(v) {
        return Ok(v);
    }
    let s = string::to_str_arg(ctx, v)?;
    let esc = escape_bytes(string::bytes(s));
    let klass = ctx.c().regexp;
    new_regexp(ctx, klass, &esc, 0, string::encoding(s))
}

// ---- String integration ----

pub fn match_at_start(ctx: &mut Ctx, re: Value, s: Value) -> Result<bool> {
    match search(ctx, re, s, 0, false)? {
        Some(g) if g[0].is_some_and(|(st, _)| st == 0) => {
            let m = new_match(ctx, re, s, g);
            ops::set_last_match(ctx, m);
            Ok(true)
        }
        _ => {
            // A failed `start_with?(re)` clears $~ (rb_reg_start_with_p).
            ops::set_last_match(ctx, Value::NIL);
            Ok(false)
        }
    }
}

pub fn string_index(ctx: &mut Ctx, s: Value, re: Value, bstart: usize) -> Result<Value> {
    let m = match_at(ctx, re, s, bstart)?;
    if m.is_nil() {
        return Ok(Value::NIL);
    }
    let st = m_get(ctx, m)?.groups[0].map_or(0, |g| g.0);
    Ok(Value::fixnum(string::byte_to_char_index(s, st) as i64))
}

pub fn string_rindex(ctx: &mut Ctx, s: Value, re: Value, bstart: usize) -> Result<Value> {
    match search(ctx, re, s, bstart, true)? {
        Some(g) => {
            let st = g[0].map_or(0, |x| x.0);
            let m = new_match(ctx, re, s, g);
            ops::set_last_match(ctx, m);
            Ok(Value::fixnum(string::byte_to_char_index(s, st) as i64))
        }
        None => {
            ops::set_last_match(ctx, Value::NIL);
            Ok(Value::NIL)
        }
    }
}

pub fn string_aref(ctx: &mut Ctx, s: Value, re: Value, group: Option<Value>) -> Result<Value> {
    let m = match_at(ctx, re, s, 0)?;
    if m.is_nil() {
        return Ok(Value::NIL);
    }
    match group {
        None => {
            let mo = m_get(ctx, m)?;
            Ok(group_str(ctx, mo, 0))
        }
        Some(g) => md_aref(ctx, m, &Args::new(&[g])),
    }
}

pub fn string_aset(ctx: &mut Ctx, s: Value, re: Value, repl: Value) -> Result<()> {
    match search(ctx, re, s, 0, false)? {
        Some(g) => {
            let (st, en) = g[0].expect("group 0");
            let r = string::bytes(repl).to_vec();
            string::bytes_mut(s).splice(st..en, r);
            Ok(())
        }
        None => Err(ctx.index_error("regexp not matched")),
    }
}

/// `String#split` with a Regexp.
pub fn split(ctx: &mut Ctx, s: Value, re: Value, limit: i64) -> Result<Value> {
    let enc = string::encoding(s);
    let b = string::bytes(s).to_vec();
    let out = array::new(ctx);
    let mut start = 0usize;
    let mut search_at = 0usize;
    let mut count = 0i64;
    while search_at <= b.len() {
        if limit > 0 && count == limit - 1 {
            break;
        }
        let Some(groups) = search(ctx, re, s, search_at, false)? else { break };
        let (ms, me) = groups[0].expect("group 0");
        if me == ms {
            if ms >= b.len() {
                break;
            }
            if ms == start {
                search_at = ms + encoding::char_len(enc, &b, ms);
                if ms == 0 {
                    continue;
                }
                let piece = b[start..search_at].to_vec();
                let p = string::new_with_enc(ctx, piece, enc);
                array::push(ctx, out, p);
                start = search_at;
                count += 1;
                continue;
            }
        }
        let piece = b[start..ms].to_vec();
        let p = string::new_with_enc(ctx, piece, enc);
        array::push(ctx, out, p);
        count += 1;
        for g in groups.iter().skip(1) {
            let v = match g {
                Some((gs, ge)) => string::new_with_enc(ctx, b[*gs..*ge].to_vec(), enc),
                None => Value::NIL,
            };
            if !v.is_nil() {
                array::push(ctx, out, v);
            }
        }
        start = me;
        search_at = if me == ms { me + encoding::char_len(enc, &b, me) } else { me };
    }
    let tail = b[start.min(b.len())..].to_vec();
    let t = string::new_with_enc(ctx, tail, enc);
    array::push(ctx, out, t);
    if limit == 0 {
        while array::len(out) > 0 && string::len(array::get(out, array::len(out) - 1)) == 0 {
            array::rarray(out).items.pop();
        }
    }
    Ok(out)
}

/// Expands `\1`, `\k<name>`, `\0`/`\&`, `` \` ``, `\'`, `\\` in a replacement.
fn expand_replacement(ctx: &mut Ctx, repl: &[u8], m: &MatchObj) -> Result<Vec<u8>> {
    let subj = string::bytes(m.string);
    let mut out = Vec::with_capacity(repl.len());
    let mut i = 0;
    while i < repl.len() {
        let c = repl[i];
        if c != b'\\' || i + 1 >= repl.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = repl[i + 1];
        i += 2;
        let range = match n {
            b'0'..=b'9' => m.groups.get((n - b'0') as usize).copied().flatten(),
            b'&' => m.groups[0],
            // `\+`: the last group that took part in the match.
            b'+' => m.groups.iter().skip(1).rev().find(|g| g.is_some()).copied().flatten(),
            b'`' => Some((0, m.groups[0].map_or(0, |g| g.0))),
            b'\'' => Some((m.groups[0].map_or(0, |g| g.1), subj.len())),
            b'\\' => {
                out.push(b'\\');
                continue;
            }
            b'k' if i < repl.len() && repl[i] == b'<' => {
                let end = repl[i..].iter().position(|&x| x == b'>').map(|p| i + p);
                match end {
                    Some(e) => {
                        let name = String::from_utf8_lossy(&repl[i + 1..e]).into_owned();
                        i = e + 1;
                        let v = named_group(ctx, m, &name)?;
                        match v {
                            Some(v) if !v.is_nil() => out.extend_from_slice(string::bytes(v)),
                            Some(_) => {}
                            None => return Err(ctx.index_error(&format!("undefined group name reference: {name}"))),
                        }
                        continue;
                    }
                    None => {
                        out.extend_from_slice(b"\\k");
                        continue;
                    }
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
                continue;
            }
        };
        if let Some((s, e)) = range {
            out.extend_from_slice(&subj[s..e]);
        }
    }
    Ok(out)
}

/// `sub`/`gsub` core: returns the new bytes, or None if nothing matched.
fn substitute(ctx: &mut Ctx, s: Value, args: &Args, global: bool) -> Result<Option<(Vec<u8>, u8)>> {
    let pat = args.pos[0];
    let re = pattern_arg(ctx, pat)?;
    let repl = args.pos.get(1).copied();
    let hash_repl = repl.filter(|&r| hash::is_hash(r));
    let str_repl = match repl {
        Some(r) if hash_repl.is_none() => Some(string::to_str_arg(ctx, r)?),
        _ => None,
    };
    if repl.is_none() && args.block.is_none() {
        return Err(ctx.arity_error(1, 2, Some(2)));
    }
    let subject = string::dup_literal(ctx, s);
    object::freeze(subject);
    let enc = string::encoding(s);
    let b = string::bytes(subject).to_vec();
    let mut out = Vec::with_capacity(b.len());
    let mut pos = 0usize;
    let mut last_end = 0usize;
    let mut any = false;
    while pos <= b.len() {
        let Some(groups) = search(ctx, re, subject, pos, false)? else { break };
        let (ms, me) = groups[0].expect("group 0");
        any = true;
        out.extend_from_slice(&b[last_end..ms]);
        let md = new_match(ctx, re, subject, groups);
        let piece: Vec<u8> = if let Some(h) = hash_repl {
            let mo = m_get(ctx, md)?;
            let matched = group_str(ctx, mo, 0);
            let v = hash::aref(ctx, h, matched)?;
            let v = string::to_s(ctx, v)?;
            string::bytes(v).to_vec()
        } else if let Some(r) = str_repl {
            let rb = string::bytes(r).to_vec();
            let m = m_get(ctx, md)?;
            expand_replacement(ctx, &rb, m)?
        } else {
            ops::set_last_match(ctx, md);
            let mo = m_get(ctx, md)?;
            let matched = group_str(ctx, mo, 0);
            let blk = args.block.expect("block");
            let v = ctx.yield1(&blk, matched)?;
            let v = string::to_s(ctx, v)?;
            string::bytes(v).to_vec()
        };
        out.extend_from_slice(&piece);
        ops::set_last_match(ctx, md);
        last_end = me;
        if !global {
            break;
        }
        if me == ms {
            if me < b.len() {
                let n = encoding::char_len(enc, &b, me);
                out.extend_from_slice(&b[me..me + n]);
                last_end = me + n;
            }
            if me >= b.len() {
                break;
            }
            pos = last_end;
        } else {
            pos = me;
        }
    }
    if !any {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(None);
    }
    if last_end < b.len() {
        out.extend_from_slice(&b[last_end..]);
    }
    Ok(Some((out, enc)))
}

fn s_sub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match substitute(ctx, recv, args, false)? {
        Some((b, e)) => Ok(string::new_with_enc(ctx, b, e)),
        None => Ok(string::dup_literal(ctx, recv)),
    }
}

fn s_gsub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() == 1 && args.block.is_none() {
        return crate::core::enumerator::enum_for(ctx, recv, "gsub", args.pos, None);
    }
    match substitute(ctx, recv, args, true)? {
        Some((b, e)) => Ok(string::new_with_enc(ctx, b, e)),
        None => Ok(string::dup_literal(ctx, recv)),
    }
}

fn s_sub_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match substitute(ctx, recv, args, false)? {
        Some((b, _)) => {
            ctx.check_frozen(recv)?;
            *string::bytes_mut(recv) = b;
            Ok(recv)
        }
        None => Ok(Value::NIL),
    }
}

fn s_gsub_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match substitute(ctx, recv, args, true)? {
        Some((b, _)) => {
            ctx.check_frozen(recv)?;
            *string::bytes_mut(recv) = b;
            Ok(recv)
        }
        None => Ok(Value::NIL),
    }
}

fn s_scan(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let re = pattern_arg(ctx, args.pos[0])?;
    let subject = object::freeze(string::dup_literal(ctx, recv));
    let enc = string::encoding(recv);
    let b = string::bytes(subject).to_vec();
    let out = array::new(ctx);
    let mut pos = 0usize;
    while pos <= b.len() {
        let Some(groups) = search(ctx, re, subject, pos, false)? else { break };
        let (ms, me) = groups[0].expect("group 0");
        let md = new_match(ctx, re, subject, groups.clone());
        let item = if groups.len() > 1 {
            let caps = array::new(ctx);
            for g in groups.iter().skip(1) {
                let v = match *g {
                    Some((s, e)) => string::new_with_enc(ctx, b[s..e].to_vec(), enc),
                    None => Value::NIL,
                };
                array::push(ctx, caps, v);
            }
            caps
        } else {
            string::new_with_enc(ctx, b[ms..me].to_vec(), enc)
        };
        ops::set_last_match(ctx, md);
        match args.block {
            Some(blk) => {
                ctx.yield1(&blk, item)?;
                ops::set_last_match(ctx, md);
            }
            None => array::push(ctx, out, item),
        }
        pos = if me == ms { me + if me < b.len() { encoding::char_len(enc, &b, me) } else { 1 } } else { me };
    }
    if args.block.is_some() {
        return Ok(recv);
    }
    Ok(out)
}

fn s_match_op(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if string::is_string(o) {
        return Err(ctx.type_error("wrong argument type String (expected Regexp)"));
    }
    if is_regexp(o) {
        return re_match_op(ctx, o, &Args::new(&[recv]));
    }
    ctx.call(o, sym::MATCH, &[recv])
}

fn s_match(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let re = pattern_arg(ctx, args.pos[0])?;
    let mut rest = vec![recv];
    rest.extend_from_slice(&args.pos[1..]);
    re_match(ctx, re, &Args { pos: &rest, kw: None, block: args.block })
}

fn s_match_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let re = pattern_arg(ctx, args.pos[0])?;
    let start = match args.pos.get(1) {
        Some(&p) => integer::to_i64_arg(ctx, p)?,
        None => 0,
    };
    let bs = if start < 0 { (string::char_length(recv) as i64 + start).max(0) } else { start };
    let Some(b) = string::char_to_byte(recv, bs as usize) else { return Ok(Value::FALSE) };
    Ok(Value::bool(search(ctx, re, recv, b, false)?.is_some()))
}

fn s_partition(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enc = string::encoding(recv);
    let b = string::bytes(recv).to_vec();
    let range = if is_regexp(args.pos[0]) {
        search(ctx, args.pos[0], recv, 0, false)?.and_then(|g| g[0])
    } else {
        let p = string::to_str_arg(ctx, args.pos[0])?;
        let pb = string::bytes(p).to_vec();
        b.windows(pb.len().max(1)).position(|w| w == &pb[..]).map(|i| (i, i + pb.len())).filter(|_| !pb.is_empty() || b.is_empty())
    };
    let parts = match range {
        Some((s, e)) => [b[..s].to_vec(), b[s..e].to_vec(), b[e..].to_vec()],
        None => [b.clone(), Vec::new(), Vec::new()],
    };
    // Each piece goes into the Array as it is made, so the collector always sees it.
    let out = array::new(ctx);
    for p in parts {
        let v = string::new_with_enc(ctx, p, enc);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn s_rpartition(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enc = string::encoding(recv);
    let b = string::bytes(recv).to_vec();
    let range = if is_regexp(args.pos[0]) {
        search(ctx, args.pos[0], recv, b.len(), true)?.and_then(|g| g[0])
    } else {
        let p = string::to_str_arg(ctx, args.pos[0])?;
        let pb = string::bytes(p).to_vec();
        if pb.len() > b.len() {
            None
        } else {
            (0..=b.len() - pb.len()).rev().find(|&i| b[i..].starts_with(&pb)).map(|i| (i, i + pb.len()))
        }
    };
    let parts = match range {
        Some((s, e)) => [b[..s].to_vec(), b[s..e].to_vec(), b[e..].to_vec()],
        None => [Vec::new(), Vec::new(), b.clone()],
    };
    // Each piece goes into the Array as it is made, so the collector always sees it.
    let out = array::new(ctx);
    for p in parts {
        let v = string::new_with_enc(ctx, p, enc);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn s_slice_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let aref = ctx.intern("[]");
    let piece = ctx.call(recv, aref, args.pos)?;
    if piece.is_nil() {
        return Ok(Value::NIL);
    }
    let mut a: Vec<Value> = args.pos.to_vec();
    let empty = string::new_utf8(ctx, "");
    a.push(empty);
    let aset = ctx.intern("[]=");
    ctx.call(recv, aset, &a)?;
    Ok(piece)
}

// ---- Regexp methods ----

fn opts_arg(ctx: &mut Ctx, v: Option<Value>) -> Result<u32> {
    Ok(match v {
        None => 0,
        Some(v) if v.is_nil() || v == Value::FALSE => 0,
        Some(v) if v.is_fixnum() => v.fixnum_unchecked() as u32,
        Some(v) if string::is_string(v) => {
            let mut o = 0;
            for c in string::to_rust_string_lossy(v).chars() {
                match c {
                    'i' => o |= IGNORECASE,
                    'x' => o |= EXTENDED,
                    'm' => o |= MULTILINE,
                    _ => return Err(ctx.arg_error(&format!("unknown regexp option: {}", string::to_rust_string_lossy(v)))),
                }
            }
            o
        }
        Some(_) => IGNORECASE,
    })
}

/// `Regexp#initialize(source, options = nil)`: a Regexp copies another's pattern,
/// options and encoding (a second argument is then ignored, with a warning in CRuby).
fn re_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if data_ref::<RegexpObj>(recv).is_some_and(|r| r.regex.is_some()) {
        return Err(ctx.type_error("already initialized regexp"));
    }
    let src = args.pos[0];
    if is_regexp(src) {
        let r = get(ctx, src)?;
        let (s, o, e) = (r.source.clone(), r.opts, r.enc);
        let o = if o & NOENCODING != 0 { o & !FIXEDENCODING } else { o };
        init_regexp(ctx, recv, &s, o, e)?;
        return Ok(Value::NIL);
    }
    let s = string::to_str_arg(ctx, src)?;
    let o = opts_arg(ctx, args.pos.get(1).copied())?;
    let bytes = string::bytes(s).to_vec();
    let enc = string::encoding(s);
    let enc = if o & NOENCODING != 0 { encoding::BINARY } else { enc };
    init_regexp(ctx, recv, &bytes, o, enc)?;
    Ok(Value::NIL)
}

/// `initialize_copy` (dup/clone): the copy shares nothing but the pattern text.
fn re_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = get(ctx, args.pos[0])?;
    let (s, o, e) = (r.source.clone(), r.opts, r.enc);
    if let Some(me) = data_ref::<RegexpObj>(recv) {
        me.regex = None;
    }
    let o = if o & NOENCODING != 0 { o & !FIXEDENCODING } else { o };
    init_regexp(ctx, recv, &s, o, e)?;
    Ok(recv)
}

fn re_s_compile(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.call_with_block(recv, sym::NEW, args.pos, args.block)
}

fn re_s_escape(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let s = if v.is_symbol() { crate::core::symbol::to_string(ctx, v) } else { string::to_str_arg(ctx, v)? };
    let out = escape_bytes(string::bytes(s));
    let enc = string::encoding(s);
    Ok(string::new_with_enc(ctx, out, enc))
}

fn re_s_union(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut items: Vec<Value> = args.pos.to_vec();
    if items.len() == 1 {
        if let Some(a) = array::try_to_ary(ctx, items[0])? {
            items = array::to_vec(a);
        }
    }
    if items.is_empty() {
        return new_regexp(ctx, recv, b"(?!)", 0, encoding::UTF_8);
    }
    if items.len() == 1 && is_regexp(items[0]) {
        return Ok(items[0]);
    }
    let mut src = Vec::new();
    for (i, &it) in items.iter().enumerate() {
        if i > 0 {
            src.push(b'|');
        }
        if is_regexp(it) {
            src.extend(to_s_bytes(it));
        } else {
            let s = string::to_str_arg(ctx, it)?;
            src.extend(escape_bytes(string::bytes(s)));
        }
    }
    new_regexp(ctx, recv, &src, 0, encoding::UTF_8)
}

fn re_s_last_match(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let m = ops::get_last_match(ctx);
    match args.pos.first() {
        Some(&i) if !m.is_nil() => md_aref(ctx, m, &Args::new(&[i])),
        _ => Ok(m),
    }
}

fn subject_arg(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if v.is_nil() {
        return Ok(None);
    }
    if v.is_symbol() {
        return Ok(Some(crate::core::symbol::to_string(ctx, v)));
    }
    Ok(Some(string::to_str_arg(ctx, v)?))
}

fn re_match(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(s) = subject_arg(ctx, args.pos[0])? else {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(Value::NIL);
    };
    let start = match args.pos.get(1) {
        Some(&p) => integer::to_i64_arg(ctx, p)?,
        None => 0,
    };
    let cs = if start < 0 { string::char_length(s) as i64 + start } else { start };
    if cs < 0 {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(Value::NIL);
    }
    let Some(bs) = string::char_to_byte(s, cs as usize) else {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(Value::NIL);
    };
    let m = match_at(ctx, recv, s, bs)?;
    if !m.is_nil() {
        if let Some(b) = args.block {
            return ctx.yield1(&b, m);
        }
    }
    Ok(m)
}

fn re_match_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(s) = subject_arg(ctx, args.pos[0])? else { return Ok(Value::FALSE) };
    let start = match args.pos.get(1) {
        Some(&p) => integer::to_i64_arg(ctx, p)?,
        None => 0,
    };
    let cs = if start < 0 { string::char_length(s) as i64 + start } else { start };
    let Some(bs) = (cs >= 0).then(|| string::char_to_byte(s, cs as usize)).flatten() else { return Ok(Value::FALSE) };
    Ok(Value::bool(search(ctx, recv, s, bs, false)?.is_some()))
}

fn re_match_op(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(s) = subject_arg(ctx, args.pos[0])? else {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(Value::NIL);
    };
    let m = match_at(ctx, recv, s, 0)?;
    if m.is_nil() {
        return Ok(Value::NIL);
    }
    let st = m_get(ctx, m)?.groups[0].map_or(0, |g| g.0);
    Ok(Value::fixnum(string::byte_to_char_index(s, st) as i64))
}

fn re_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let s = if string::is_string(v) {
        v
    } else if v.is_symbol() {
        crate::core::symbol::to_string(ctx, v)
    } else if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
        string::to_str_arg(ctx, v)?
    } else {
        return Ok(Value::FALSE);
    };
    let m = match_at(ctx, recv, s, 0)?;
    Ok(Value::bool(!m.is_nil()))
}

fn re_tilde(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let line = ops::get_caller_last_line(ctx);
    if !string::is_string(line) {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(Value::NIL);
    }
    re_match_op(ctx, recv, &Args::new(&[line]))
}

fn re_source(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    let (s, e) = (r.source.clone(), r.enc);
    let v = string::new_with_enc(ctx, s, e);
    Ok(object::freeze(v))
}

fn re_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    get(ctx, recv)?;
    let b = to_s_bytes(recv);
    Ok(string::new_from_bytes(ctx, &b))
}

fn re_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    let b = inspect_bytes(r);
    Ok(string::new_from_bytes(ctx, &b))
}

fn re_options(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    Ok(Value::fixnum(r.opts as i64))
}

fn re_casefold(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.opts & IGNORECASE != 0))
}

fn re_names(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let names = names_of(get(ctx, recv)?);
    let out = array::new(ctx);
    for (n, _) in names {
        let v = string::new_utf8(ctx, &n);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn re_named_captures(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let names = names_of(get(ctx, recv)?);
    let h = hash::new(ctx);
    for (n, groups) in names {
        let k = string::new_utf8(ctx, &n);
        let vals: Vec<Value> = groups.iter().map(|&g| Value::fixnum(g as i64)).collect();
        let a = array::from_vec(ctx, vals);
        hash::aset(ctx, h, k, a)?;
    }
    Ok(h)
}

fn re_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    let (Some(a), Some(b)) = (data_ref::<RegexpObj>(recv), data_ref::<RegexpObj>(o)) else { return Ok(Value::FALSE) };
    let _ = ctx;
    let flags = IGNORECASE | EXTENDED | MULTILINE | FIXEDENCODING;
    Ok(Value::bool(a.source == b.source && a.opts & flags == b.opts & flags && a.enc == b.enc))
}

fn re_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    let h = crate::core::hash::hash_bytes(ctx.vm().hash_seed ^ r.opts as u64, &r.source);
    Ok(Value::fixnum((h >> 2) as i64))
}

fn re_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let e = data_ref::<RegexpObj>(recv).map_or(encoding::BINARY, |r| r.enc);
    Ok(encoding::encoding_object(ctx, e))
}

fn re_fixed_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    Ok(Value::bool(r.opts & FIXEDENCODING != 0))
}

// ---- MatchData methods ----

fn md_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let a = args.pos[0];
    if args.pos.len() == 2 {
        let all = md_to_a(ctx, recv, &Args::new(&[]))?;
        let aref = ctx.intern("[]");
        return ctx.call(all, aref, args.pos);
    }
    if let Some(i) = a.as_fixnum() {
        // rb_reg_nth_match: a negative index never reaches the whole match (group 0).
        let n = m.groups.len() as i64;
        let i = if i < 0 { i + n } else { i };
        if i < 0 || i >= n || (i == 0 && a.as_fixnum().is_some_and(|x| x < 0)) {
            return Ok(Value::NIL);
        }
        return Ok(group_str(ctx, m, i as usize));
    }
    if string::is_string(a) || a.is_symbol() {
        let name = if a.is_symbol() { ctx.sym_str(a.as_symbol().expect("sym")) } else { string::to_rust_string_lossy(a) };
        return match named_group(ctx, m, &name)? {
            Some(v) => Ok(v),
            None => Err(ctx.index_error(&format!("undefined group name reference: {name}"))),
        };
    }
    if crate::core::range::is_range(a) {
        let all = md_to_a(ctx, recv, &Args::new(&[]))?;
        let aref = ctx.intern("[]");
        return ctx.call(all, aref, &[a]);
    }
    let i = integer::to_i64_arg(ctx, a)?;
    md_aref(ctx, recv, &Args::new(&[Value::fixnum(i)]))
}

fn md_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let out = array::new(ctx);
    for i in 0..m.groups.len() {
        let v = group_str(ctx, m, i);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_captures(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let out = array::new(ctx);
    for i in 1..m.groups.len() {
        let v = group_str(ctx, m, i);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_named_captures(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let symbolize = args.kwarg(ctx, "symbolize_names").is_some_and(|v| v.truthy());
    let names = data_ref::<RegexpObj>(m.regexp).map(|r| names_of(r)).unwrap_or_default();
    let h = hash::new(ctx);
    for (n, _) in names {
        let v = named_group(ctx, m, &n)?.unwrap_or(Value::NIL);
        let k = if symbolize { Value::symbol(ctx.intern(&n)) } else { string::new_utf8(ctx, &n) };
        hash::aset(ctx, h, k, v)?;
    }
    Ok(h)
}

fn md_names(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let re = m_get(ctx, recv)?.regexp;
    re_names(ctx, re, &Args::new(&[]))
}

fn md_pre_match(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match_special(ctx, recv, 2)
}

fn md_post_match(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match_special(ctx, recv, 3)
}

fn group_index(ctx: &mut Ctx, m: &MatchObj, a: Value) -> Result<usize> {
    if string::is_string(a) || a.is_symbol() {
        let name = if a.is_symbol() { ctx.sym_str(a.as_symbol().expect("sym")) } else { string::to_rust_string_lossy(a) };
        let names = data_ref::<RegexpObj>(m.regexp).map(|r| names_of(r)).unwrap_or_default();
        return match names.into_iter().find(|(n, _)| *n == name) {
            Some((_, g)) => Ok(*g.last().unwrap_or(&0)),
            None => Err(ctx.index_error(&format!("undefined group name reference: {name}"))),
        };
    }
    let i = integer::to_i64_arg(ctx, a)?;
    if i < 0 || i as usize >= m.groups.len() {
        return Err(ctx.index_error(&format!("index {i} out of matches")));
    }
    Ok(i as usize)
}

fn md_begin(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let i = group_index(ctx, m, args.pos[0])?;
    Ok(match m.groups[i] {
        Some((s, _)) => Value::fixnum(string::byte_to_char_index(m.string, s) as i64),
        None => Value::NIL,
    })
}

fn md_end(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let i = group_index(ctx, m, args.pos[0])?;
    Ok(match m.groups[i] {
        Some((_, e)) => Value::fixnum(string::byte_to_char_index(m.string, e) as i64),
        None => Value::NIL,
    })
}

fn md_offset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = md_begin(ctx, recv, args)?;
    let e = md_end(ctx, recv, args)?;
    Ok(array::from_slice(ctx, &[b, e]))
}

fn md_byteoffset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let i = group_index(ctx, m, args.pos[0])?;
    Ok(match m.groups[i] {
        Some((s, e)) => array::from_slice(ctx, &[Value::fixnum(s as i64), Value::fixnum(e as i64)]),
        None => array::from_slice(ctx, &[Value::NIL, Value::NIL]),
    })
}

fn md_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(m_get(ctx, recv)?.groups.len() as i64))
}

fn md_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    Ok(group_str(ctx, m, 0))
}

fn md_string(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(m_get(ctx, recv)?.string)
}

fn md_regexp(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(m_get(ctx, recv)?.regexp)
}

fn md_values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    for &a in args.pos {
        let v = md_aref(ctx, recv, &Args::new(&[a]))?;
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let names = data_ref::<RegexpObj>(m.regexp).map(|r| names_of(r)).unwrap_or_default();
    let mut out = b"#<MatchData ".to_vec();
    for i in 0..m.groups.len() {
        if i > 0 {
            out.push(b' ');
            let label = names.iter().find(|(_, g)| g.contains(&i)).map(|(n, _)| n.clone()).unwrap_or_else(|| i.to_string());
            out.extend_from_slice(label.as_bytes());
            out.push(b':');
        }
        let g = group_str(ctx, m, i);
        if g.is_nil() {
            out.extend_from_slice(b"nil");
        } else {
            out.extend(string::inspect_bytes(string::bytes(g), string::encoding(g)));
        }
    }
    out.push(b'>');
    Ok(string::new_from_bytes(ctx, &out))
}

fn md_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (Some(a), Some(b)) = (data_ref::<MatchObj>(recv), data_ref::<MatchObj>(args.pos[0])) else { return Ok(Value::FALSE) };
    let _ = ctx;
    Ok(Value::bool(a.regexp == b.regexp && string::eq(a.string, b.string) && a.groups == b.groups))
}

fn md_deconstruct_keys(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let kw_h = hash::new(ctx);
    let kw = Some(kw_h);
    let sym_true = Value::symbol(ctx.intern("symbolize_names"));
    hash::aset(ctx, kw_h, sym_true, Value::TRUE)?;
    md_named_captures(ctx, recv, &Args { pos: &[], kw, block: None })
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().regexp;
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(alloc_regexp);
    for (n, v) in [("IGNORECASE", IGNORECASE), ("EXTENDED", EXTENDED), ("MULTILINE", MULTILINE), ("FIXEDENCODING", FIXEDENCODING), ("NOENCODING", NOENCODING)] {
        let id = ctx.intern(n);
        crate::core::module::body(c).const_set(id, Value::fixnum(v as i64));
    }
    crate::methods!(ctx, c, [
        ("compile", re_s_compile, [0..], Unsafe, Singleton),
        ("initialize", re_initialize, [1..=3], Unsafe, Private),
        ("initialize_copy", re_initialize_copy, [1], Unsafe, Private),
        ("escape", re_s_escape, [1], Safe, Singleton),
        ("quote", re_s_escape, [1], Safe, Singleton),
        ("union", re_s_union, [0..], Unsafe, Singleton),
        ("last_match", re_s_last_match, [0..=1], Safe, Singleton),
        ("match", re_match, [1..=2], Safe),
        ("match?", re_match_p, [1..=2], Safe),
        ("=~", re_match_op, [1], Safe),
        ("===", re_eqq, [1], Safe),
        ("~", re_tilde, [0], Safe),
        ("source", re_source, [0], Safe),
        ("to_s", re_to_s, [0], Safe),
        ("inspect", re_inspect, [0], Safe),
        ("options", re_options, [0], Safe),
        ("casefold?", re_casefold, [0], Safe),
        ("names", re_names, [0], Safe),
        ("named_captures", re_named_captures, [0], Safe),
        ("==", re_eq, [1], Safe),
        ("eql?", re_eq, [1], Safe),
        ("hash", re_hash, [0], Safe),
        ("encoding", re_encoding, [0], Safe),
        ("fixed_encoding?", re_fixed_encoding, [0], Safe),
    ]);
    let m = ctx.c().match_data;
    crate::methods!(ctx, m, [
        ("[]", md_aref, [1..=2], Safe),
        ("to_a", md_to_a, [0], Safe),
        ("captures", md_captures, [0], Safe),
        ("deconstruct", md_captures, [0], Safe),
        ("named_captures", md_named_captures, [0], Safe, Kw),
        ("deconstruct_keys", md_deconstruct_keys, [1], Safe),
        ("names", md_names, [0], Safe),
        ("pre_match", md_pre_match, [0], Safe),
        ("post_match", md_post_match, [0], Safe),
        ("begin", md_begin, [1], Safe),
        ("end", md_end, [1], Safe),
        ("offset", md_offset, [1], Safe),
        ("byteoffset", md_byteoffset, [1], Safe),
        ("size", md_size, [0], Safe),
        ("length", md_size, [0], Safe),
        ("to_s", md_to_s, [0], Safe),
        ("string", md_string, [0], Safe),
        ("regexp", md_regexp, [0], Safe),
        ("values_at", md_values_at, [0..], Safe),
        ("inspect", md_inspect, [0], Safe),
        ("==", md_eq, [1], Safe),
        ("eql?", md_eq, [1], Safe),
    ]);
    let s = ctx.c().string;
    crate::methods!(ctx, s, [
        ("sub", s_sub, [1..=2], Unsafe),
        ("gsub", s_gsub, [1..=2], Unsafe),
        ("sub!", s_sub_bang, [1..=2], Unsafe),
        ("gsub!", s_gsub_bang, [1..=2], Unsafe),
        ("scan", s_scan, [1], Unsafe),
        ("=~", s_match_op, [1], Unsafe),
        ("match", s_match, [1..=2], Unsafe),
        ("match?", s_match_p, [1..=2], Safe),
        ("partition", s_partition, [1], Unsafe),
        ("rpartition", s_rpartition, [1], Unsafe),
        ("slice!", s_slice_bang, [1..=2], Unsafe),
    ]);
}
