//! Regexp, compiled by Oniguruma (the `onig` crate) from Ruby's syntax as rewritten by
//! `regexp_syntax`. MatchData is in `matchdata.rs`, the String methods that take a
//! pattern in `string_pattern.rs`; docs/regexp.md describes the whole.
//!
//! Invariants:
//! - A Regexp is compiled once; its source and options never change. A regexp not fixed
//!   to an encoding keeps one compiled pattern per subject encoding it has met (`others`).
//! - Subjects are checked for valid encoding before Oniguruma sees them (invalid UTF-8
//!   raises `ArgumentError`, as in CRuby), and every search goes through `run_limited`,
//!   which reports Oniguruma's errors as exceptions and enforces the match time limit.

use onig::{EncodedBytes, MatchParam, Regex, RegexOptions, Region, SearchOptions};

use crate::core::matchdata::{m_get, md_aref, new_match};
use crate::core::{array, encoding, hash, integer, object, regexp_syntax, string};
pub use crate::core::string_pattern::{match_at_start, split, string_aref, string_aset, string_index, string_rindex};
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
    /// This regexp's match time limit in seconds (`timeout:`), overriding `Regexp.timeout`.
    pub timeout: Option<f64>,
}

crate::data_obj!(RegexpObj);

pub fn is_regexp(v: Value) -> bool {
    data_ref::<RegexpObj>(v).is_some()
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
    Ok(object::new_data(ctx, klass, Box::new(RegexpObj { regex: None, others: Vec::new(), source: Vec::new(), opts: 0, enc: encoding::BINARY, literal: false, timeout: None })))
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
pub fn new_literal(ctx: &mut Ctx, source: &[u8], opts: u32, source_enc: u8, at: (std::sync::Arc<str>, u32)) -> Result<Value> {
    let (opts, enc) = literal_opts(opts, source_enc);
    let klass = ctx.c().regexp;
    match new_regexp(ctx, klass, source, opts, enc) {
        Ok(v) => {
            warn_nested_repeats(ctx, source, opts, Some(at));
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

/// Onigmo's warnings about nested repeat operators in a pattern compiled at `at` (the
/// calling Ruby line when None).
fn warn_nested_repeats(ctx: &mut Ctx, source: &[u8], opts: u32, at: Option<(std::sync::Arc<str>, u32)>) {
    let warnings = regexp_syntax::nested_repeat_warnings(source, opts & EXTENDED != 0);
    if warnings.is_empty() {
        return;
    }
    let (path, line) = at.unwrap_or_else(|| crate::core::kernel::caller_location(ctx));
    let shown = String::from_utf8_lossy(source).into_owned();
    for w in warnings {
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: {w}: /{shown}/\n"));
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
    let re = new_regexp(ctx, klass, &src, opts, enc)?;
    warn_nested_repeats(ctx, &src, opts, None);
    Ok(re)
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
    search_reusing(ctx, re, s, start, reverse, &mut Region::new())
}

/// `search` with a caller-owned Oniguruma region, for loops over many matches (`scan`,
/// `gsub`): the region's arrays are allocated once instead of at every search.
pub fn search_reusing(ctx: &mut Ctx, re: Value, s: Value, start: usize, reverse: bool, region: &mut Region) -> Result<Option<Vec<Option<(usize, usize)>>>> {
    get(ctx, re)?;
    let Some(r) = data_ref::<RegexpObj>(re) else { return Err(ctx.type_error("uninitialized Regexp")) };
    let enc = prepare_encoding(ctx, r, s)?;
    let b = string::bytes(s);
    if start > b.len() {
        return Ok(None);
    }
    let oenc = onig_encoding(enc);
    let timeout = r.timeout.or_else(|| ctx.vm().regexp_timeout());
    let regex = regex_for(ctx, r, oenc)?;
    let (from, to) = if reverse { (start, 0) } else { (start, b.len()) };
    let found = run_limited(ctx, timeout, |mp| {
        let chars = EncodedBytes::from_parts(b, oenc);
        regex.search_with_param(chars, from, to, SearchOptions::SEARCH_OPTION_NONE, Some(&mut *region), mp)
    })?;
    Ok(found.map(|_| (0..region.len()).map(|i| region.pos(i)).collect()))
}

/// Runs one Oniguruma search or match under a time limit in seconds (Regexp::TimeoutError
/// when it is exceeded). Oniguruma has no clock: the run is bounded by a budget of
/// backtracking steps instead, and when the budget runs out before the time limit has
/// passed the run starts over with twice the budget, so the work done stays under twice
/// that of the last run. Without a limit Oniguruma's own step limit applies
/// (a RegexpError when reached).
fn run_limited<T>(ctx: &mut Ctx, timeout: Option<f64>, mut run: impl FnMut(MatchParam) -> std::result::Result<Option<T>, onig::Error>) -> Result<Option<T>> {
    let Some(limit) = timeout else {
        return run(MatchParam::default()).map_err(|e| ctx.raise(ctx.c().regexp_error, e.description()));
    };
    let started = std::time::Instant::now();
    let mut budget: std::os::raw::c_ulong = 100_000;
    loop {
        let mp = MatchParam::default();
        // SAFETY: `as_raw` is the OnigMatchParam `mp` owns, alive until `mp` is dropped.
        unsafe {
            onig_sys::onig_set_retry_limit_in_match_of_match_param(mp.as_raw(), 0);
            onig_sys::onig_set_retry_limit_in_search_of_match_param(mp.as_raw(), budget);
        }
        match run(mp) {
            Err(e) if e.code() == onig_sys::ONIGERR_RETRY_LIMIT_IN_SEARCH_OVER || e.code() == onig_sys::ONIGERR_RETRY_LIMIT_IN_MATCH_OVER => {
                if started.elapsed().as_secs_f64() >= limit {
                    let klass = timeout_error_class(ctx);
                    return Err(ctx.raise(klass, "regexp match timeout"));
                }
                budget = budget.saturating_mul(2);
            }
            Err(e) => return Err(ctx.raise(ctx.c().regexp_error, e.description())),
            Ok(found) => return Ok(found),
        }
    }
}

/// `Regexp::TimeoutError`.
fn timeout_error_class(ctx: &mut Ctx) -> Value {
    let c = ctx.c().regexp;
    let id = ctx.intern("TimeoutError");
    crate::core::module::body(c).const_get(id).map_or(ctx.c().regexp_error, |e| e.value)
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
    let timeout = r.timeout.or_else(|| ctx.vm().regexp_timeout());
    let regex = regex_for(ctx, r, oenc)?;
    let mut region = Region::new();
    let found = run_limited(ctx, timeout, |mp| {
        let chars = EncodedBytes::from_parts(b, oenc);
        if anchored {
            regex.match_with_param(chars, at, SearchOptions::SEARCH_OPTION_NONE, Some(&mut region), mp).map(|m| m.map(|_| ()))
        } else {
            regex.search_with_param(chars, at, b.len(), SearchOptions::SEARCH_OPTION_NONE, Some(&mut region), mp).map(|m| m.map(|_| ()))
        }
    })?;
    Ok(found.map(|()| (0..region.len()).map(|i| region.pos(i).map(|(x, y)| (x + base, y + base))).collect()))
}

/// The named groups of a regexp: each name with its group numbers.
pub fn group_names(re: Value) -> Vec<(String, Vec<usize>)> {
    data_ref::<RegexpObj>(re).map(|r| names_of(r)).unwrap_or_default()
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

/// The named groups of a compiled pattern in the order they are defined (a name used
/// twice is listed once, where it first appears).
pub(crate) fn names_of(r: &RegexpObj) -> Vec<(String, Vec<usize>)> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    if let Some(re) = &r.regex {
        re.foreach_name(|name, groups| {
            out.push((name.to_string(), groups.iter().map(|&g| g as usize).collect()));
            true
        });
    }
    out.sort_by_key(|(_, groups)| groups.iter().min().copied().unwrap_or(usize::MAX));
    out
}

/// The option letter of a Ruby option bit.
fn option_bit(c: u8) -> u32 {
    match c {
        b'm' => MULTILINE,
        b'i' => IGNORECASE,
        b'x' => EXTENDED,
        _ => 0,
    }
}

/// `Regexp#to_s` (CRuby's `rb_reg_to_s`): the `(?on-off:src)` form. Leading option groups
/// that cover the whole pattern (`(?i)...`, `(?i:...)`) are folded into the outer options
/// when the group's body is a valid pattern on its own.
pub fn to_s_bytes(re: Value) -> Vec<u8> {
    let Some(r) = data_ref::<RegexpObj>(re) else { return Vec::new() };
    let src = &r.source[..];
    let mut opts = r.opts & (MULTILINE | IGNORECASE | EXTENDED);
    let mut body = src;
    let ascii_src = encoding::is_ascii_compatible(r.enc);
    while ascii_src && body.len() >= 4 && body.starts_with(b"(?") {
        let mut o = opts;
        let mut p = &body[2..];
        while let Some(&c) = p.first().filter(|&&c| option_bit(c) != 0) {
            o |= option_bit(c);
            p = &p[1..];
        }
        if p.len() > 1 && p[0] == b'-' {
            p = &p[1..];
            while let Some(&c) = p.first().filter(|&&c| option_bit(c) != 0) {
                o &= !option_bit(c);
                p = &p[1..];
            }
        }
        if p.first() == Some(&b')') {
            opts = o;
            body = &p[1..];
            continue;
        }
        let inner = (p.first() == Some(&b':') && p.last() == Some(&b')')).then(|| &p[1..p.len() - 1]);
        match inner.filter(|inner| compile_regex(inner, o, onig_encoding(r.enc)).is_ok()) {
            Some(inner) => {
                opts = o;
                body = inner;
            }
            // Anything else keeps the pattern as written (earlier folds included).
            None => {
                opts = r.opts & (MULTILINE | IGNORECASE | EXTENDED);
                body = src;
            }
        }
        break;
    }
    let mut on = String::new();
    let mut off = String::new();
    for (bit, c) in [(MULTILINE, 'm'), (IGNORECASE, 'i'), (EXTENDED, 'x')] {
        if opts & bit != 0 {
            on.push(c);
        } else {
            off.push(c);
        }
    }
    let mut head = format!("(?{on}");
    if !off.is_empty() {
        head.push('-');
        head.push_str(&off);
    }
    head.push(':');
    let mut out = ascii_in(r.enc, head.as_bytes());
    out.extend_from_slice(body);
    out.extend(ascii_in(r.enc, b")"));
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

/// The escape of ASCII character `c` in a quoted pattern (None: `c` stands for itself).
fn quoted_ascii(c: u8) -> Option<&'static [u8]> {
    Some(match c {
        b'.' => b"\\.",
        b'*' => b"\\*",
        b'?' => b"\\?",
        b'+' => b"\\+",
        b'^' => b"\\^",
        b'$' => b"\\$",
        b'|' => b"\\|",
        b'(' => b"\\(",
        b')' => b"\\)",
        b'[' => b"\\[",
        b']' => b"\\]",
        b'{' => b"\\{",
        b'}' => b"\\}",
        b'\\' => b"\\\\",
        b'-' => b"\\-",
        b'#' => b"\\#",
        b' ' => b"\\ ",
        b'\n' => b"\\n",
        b'\t' => b"\\t",
        b'\r' => b"\\r",
        0x0c => b"\\f",
        0x0b => b"\\v",
        _ => return None,
    })
}

/// `Regexp.escape` of `b` in encoding `enc`, character by character (so a multibyte
/// character's bytes are never escaped, and escapes of an ASCII-incompatible encoding
/// are written in that encoding).
pub fn quote(b: &[u8], enc: u8) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len() + 8);
    let ascii_compatible = encoding::is_ascii_compatible(enc);
    let mut i = 0;
    while i < b.len() {
        let (cp, n) = if ascii_compatible {
            (b[i] as u32, encoding::char_len(enc, b, i).max(1).min(b.len() - i))
        } else {
            let (cp, n) = encoding::codepoint_at(enc, b, i);
            (cp, n.max(1).min(b.len() - i))
        };
        let single = if ascii_compatible { n == 1 } else { cp < 0x80 };
        match quoted_ascii(cp as u8).filter(|_| single && cp < 0x80) {
            Some(esc) if ascii_compatible => out.extend_from_slice(esc),
            Some(esc) => {
                for &e in esc {
                    out.extend(encoding::encode_codepoint(enc, e as u32).unwrap_or_else(|| vec![e]));
                }
            }
            None => out.extend_from_slice(&b[i..i + n]),
        }
        i += n;
    }
    out
}

/// The encoding of `Regexp.escape`'s result: US-ASCII for ASCII-only text in an
/// ASCII-compatible encoding, otherwise the string's.
fn quote_encoding(s: Value) -> u8 {
    let enc = string::encoding(s);
    if encoding::is_ascii_compatible(enc) && string::is_7bit(s) {
        encoding::US_ASCII
    } else {
        enc
    }
}

/// The quoted form of String or Symbol `v` as a new String.
fn quote_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let s = if v.is_symbol() { crate::core::symbol::to_string(ctx, v) } else { string::to_str_arg(ctx, v)? };
    let out = quote(string::bytes(s), string::encoding(s));
    let enc = quote_encoding(s);
    Ok(string::new_with_enc(ctx, out, enc))
}

/// Converts a pattern argument: Regexp as is, String as a literal pattern.
pub fn pattern_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_regexp(v) {
        return Ok(v);
    }
    let s = string::to_str_arg(ctx, v)?;
    let enc = string::encoding(s);
    let esc = quote(string::bytes(s), enc);
    let klass = ctx.c().regexp;
    new_regexp(ctx, klass, &esc, 0, enc)
}

// ---- Regexp methods ----

/// A warning at the calling Ruby line; `verbose_only` ones need `$VERBOSE` true.
fn warn(ctx: &mut Ctx, msg: &str, verbose_only: bool) {
    if verbose_only && crate::core::globals::verbose_level(ctx) < 2 {
        return;
    }
    let (path, line) = crate::core::kernel::caller_location(ctx);
    crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: {msg}\n"));
}

/// The options argument of `Regexp.new`: an Integer of option bits, a String of option
/// letters, or any other object as a truth value for `/i` (nil and false: none; `true`
/// silently, anything else with a verbose-mode warning).
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
        Some(v) => {
            if v != Value::TRUE {
                let shown = object::inspect_string(ctx, v)?;
                warn(ctx, &format!("expected true or false as ignorecase: {shown}"), true);
            }
            IGNORECASE
        }
    })
}

/// A match time limit in seconds from a `timeout` value (nil: none); CRuby's `set_timeout`.
fn timeout_arg(ctx: &mut Ctx, v: Value) -> Result<Option<f64>> {
    if v.is_nil() {
        return Ok(None);
    }
    let t = crate::core::numeric::to_f64(ctx, v)?;
    if !(t > 0.0) {
        let shown = object::inspect_string(ctx, v)?;
        return Err(ctx.arg_error(&format!("invalid timeout: {shown}")));
    }
    Ok(Some(t))
}

/// `Regexp#initialize(source, options = nil, timeout: nil)`: a Regexp copies another's
/// pattern, options and encoding (options given with it are ignored, with a warning).
fn re_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if data_ref::<RegexpObj>(recv).is_some_and(|r| r.regex.is_some()) {
        return Err(ctx.type_error("already initialized regexp"));
    }
    crate::core::numeric::check_keywords(ctx, args, &["timeout"])?;
    let timeout = match args.kwarg(ctx, "timeout") {
        Some(t) => timeout_arg(ctx, t)?,
        None => None,
    };
    let src = args.pos[0];
    if is_regexp(src) {
        if args.pos.len() > 1 {
            warn(ctx, "flags ignored", false);
        }
        let r = get(ctx, src)?;
        let (s, o, e) = (r.source.clone(), r.opts, r.enc);
        let o = if o & NOENCODING != 0 { o & !FIXEDENCODING } else { o };
        init_regexp(ctx, recv, &s, o, e)?;
    } else {
        let s = string::to_str_arg(ctx, src)?;
        let o = opts_arg(ctx, args.pos.get(1).copied())?;
        let bytes = string::bytes(s).to_vec();
        let enc = string::encoding(s);
        let enc = if o & NOENCODING != 0 { encoding::BINARY } else { enc };
        init_regexp(ctx, recv, &bytes, o, enc)?;
        warn_nested_repeats(ctx, &bytes, o, None);
    }
    if let Some(r) = data_ref::<RegexpObj>(recv) {
        r.timeout = timeout;
    }
    Ok(Value::NIL)
}

/// `initialize_copy` (dup/clone): the copy shares nothing but the pattern text.
fn re_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = get(ctx, args.pos[0])?;
    let (s, o, e, t) = (r.source.clone(), r.opts, r.enc, r.timeout);
    if let Some(me) = data_ref::<RegexpObj>(recv) {
        me.regex = None;
    }
    let o = if o & NOENCODING != 0 { o & !FIXEDENCODING } else { o };
    init_regexp(ctx, recv, &s, o, e)?;
    if let Some(me) = data_ref::<RegexpObj>(recv) {
        me.timeout = t;
    }
    Ok(recv)
}

fn re_s_compile(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.call_kw(recv, sym::NEW, args.pos, args.kw, args.block)
}

fn timeout_value(ctx: &mut Ctx, t: Option<f64>) -> Value {
    t.map_or(Value::NIL, |t| crate::core::float::new(ctx, t))
}

fn re_s_timeout(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let t = ctx.vm().regexp_timeout();
    Ok(timeout_value(ctx, t))
}

fn re_s_set_timeout(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let t = timeout_arg(ctx, args.pos[0])?;
    ctx.vm().set_regexp_timeout(t);
    Ok(args.pos[0])
}

fn re_timeout(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let t = get(ctx, recv)?.timeout;
    Ok(timeout_value(ctx, t))
}

/// `Regexp.linear_time?(re)`: whether matching `re` takes time linear in the subject's
/// length with Carmine's backtracking engine (see `regexp_syntax::is_linear_time`). A
/// String is compiled with the given options first; options given with a Regexp are
/// ignored, with a warning.
fn re_s_linear_time(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    // `timeout:` is accepted as by Regexp.new; it has no bearing on the answer.
    crate::core::numeric::check_keywords(ctx, args, &["timeout"])?;
    let v = args.pos[0];
    let re = match check_regexp(ctx, v)? {
        Some(r) => {
            if args.pos.len() > 1 {
                warn(ctx, "flags ignored", false);
            }
            r
        }
        None => {
            let s = string::to_str_arg(ctx, v)?;
            let o = opts_arg(ctx, args.pos.get(1).copied())?;
            let klass = ctx.c().regexp;
            let bytes = string::bytes(s).to_vec();
            new_regexp(ctx, klass, &bytes, o, string::encoding(s))?
        }
    };
    let r = get(ctx, re)?;
    let (src, opts) = (r.source.clone(), r.opts);
    Ok(Value::bool(regexp_syntax::is_linear_time(&src, opts & EXTENDED != 0)))
}

fn re_s_escape(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    quote_value(ctx, args.pos[0])
}

/// `v.to_regexp` if `v` is a Regexp or converts to one (nil when it does not respond).
fn check_regexp(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if is_regexp(v) {
        return Ok(Some(v));
    }
    let id = ctx.intern("to_regexp");
    if !v.is_heap() || !ctx.respond_to(v, id, true) {
        return Ok(None);
    }
    let r = ctx.call(v, id, &[])?;
    if !is_regexp(r) {
        let cname = object::class_name_of(ctx, v);
        let rname = object::class_name_of(ctx, r);
        return Err(ctx.type_error(&format!("can't convert {cname} into Regexp ({cname}#to_regexp gives {rname})")));
    }
    Ok(Some(r))
}

fn re_s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(check_regexp(ctx, args.pos[0])?.unwrap_or(Value::NIL))
}

/// How the parts of a `Regexp.union` constrain its encoding (CRuby's `rb_reg_s_union`):
/// at most one ASCII-incompatible encoding, at most one fixed ASCII-compatible one, and
/// never an ASCII-incompatible part together with another kind.
#[derive(Default)]
struct UnionEncoding {
    incompatible: Option<u8>,
    fixed: Option<u8>,
    ascii_only: bool,
}

impl UnionEncoding {
    fn add(&mut self, ctx: &mut Ctx, enc: u8, fixed: bool) -> Result<()> {
        let conflict = |ctx: &mut Ctx, a: u8, b: u8| ctx.arg_error(&format!("incompatible encodings: {} and {}", encoding::name(a), encoding::name(b)));
        if !encoding::is_ascii_compatible(enc) {
            match self.incompatible {
                Some(e) if e != enc => return Err(conflict(ctx, e, enc)),
                _ => self.incompatible = Some(enc),
            }
        } else if fixed {
            match self.fixed {
                Some(e) if e != enc => return Err(conflict(ctx, e, enc)),
                _ => self.fixed = Some(enc),
            }
        } else {
            self.ascii_only = true;
        }
        if let Some(inc) = self.incompatible {
            if self.ascii_only {
                return Err(ctx.arg_error(&format!("ASCII incompatible encoding: {}", encoding::name(inc))));
            }
            if let Some(f) = self.fixed {
                return Err(conflict(ctx, inc, f));
            }
        }
        Ok(())
    }
}

/// Transcodes ASCII text to ASCII-incompatible `enc` (the `|` and `(?-mix:` of a union).
fn ascii_in(enc: u8, text: &[u8]) -> Vec<u8> {
    if encoding::is_ascii_compatible(enc) {
        return text.to_vec();
    }
    text.iter().flat_map(|&c| encoding::encode_codepoint(enc, c as u32).unwrap_or_else(|| vec![c])).collect()
}

fn re_s_union(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut items: Vec<Value> = args.pos.to_vec();
    if items.len() == 1 {
        if let Some(a) = array::try_to_ary(ctx, items[0])? {
            items = array::to_vec(a);
        }
    }
    if items.is_empty() {
        return new_regexp(ctx, recv, b"(?!)", 0, encoding::US_ASCII);
    }
    if items.len() == 1 {
        if let Some(r) = check_regexp(ctx, items[0])? {
            return Ok(r);
        }
        let q = quote_value(ctx, items[0])?;
        let enc = string::encoding(q);
        let src = string::bytes(q).to_vec();
        return new_regexp(ctx, recv, &src, 0, enc);
    }
    let mut parts: Vec<(Vec<u8>, u8)> = Vec::with_capacity(items.len());
    let mut encs = UnionEncoding::default();
    for &it in &items {
        if let Some(r) = check_regexp(ctx, it)? {
            let ro = get(ctx, r)?;
            let (enc, fixed) = (ro.enc, ro.opts & FIXEDENCODING != 0);
            encs.add(ctx, enc, fixed)?;
            parts.push((to_s_bytes(r), enc));
        } else {
            let s = string::to_str_arg(ctx, it)?;
            let enc = string::encoding(s);
            let ascii_only = encoding::is_ascii_compatible(enc) && string::is_7bit(s);
            encs.add(ctx, enc, !ascii_only)?;
            parts.push((quote(string::bytes(s), enc), enc));
        }
    }
    let enc = encs.incompatible.or(encs.fixed).unwrap_or(encoding::BINARY);
    let mut src = Vec::new();
    for (i, (bytes, part_enc)) in parts.iter().enumerate() {
        if i > 0 {
            src.extend(ascii_in(enc, b"|"));
        }
        // The checks above leave only parts in `enc` or ASCII-only parts of an
        // ASCII-compatible `enc`.
        debug_assert!(*part_enc == enc || encoding::is_ascii_compatible(enc));
        src.extend_from_slice(bytes);
    }
    new_regexp(ctx, recv, &src, 0, enc)
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

pub(crate) fn re_match(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
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

pub(crate) fn re_match_op(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
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

/// `Regexp#==`: the same source, options and encoding.
pub fn same_pattern(a: Value, b: Value) -> bool {
    let (Some(a), Some(b)) = (data_ref::<RegexpObj>(a), data_ref::<RegexpObj>(b)) else { return false };
    let flags = IGNORECASE | EXTENDED | MULTILINE | FIXEDENCODING;
    a.source == b.source && a.opts & flags == b.opts & flags && a.enc == b.enc
}

/// The hash of a regexp's source and `/imx` options (`/n` and the encoding do not count).
pub fn pattern_hash(ctx: &mut Ctx, re: Value) -> u64 {
    let Some(r) = data_ref::<RegexpObj>(re) else { return 0 };
    let opts = r.opts & (IGNORECASE | EXTENDED | MULTILINE);
    crate::core::hash::hash_bytes(ctx.vm().hash_seed ^ opts as u64, &r.source)
}

fn re_eq(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(same_pattern(recv, args.pos[0])))
}

fn re_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    get(ctx, recv)?;
    let h = pattern_hash(ctx, recv);
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

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().regexp;
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(alloc_regexp);
    for (n, v) in [("IGNORECASE", IGNORECASE), ("EXTENDED", EXTENDED), ("MULTILINE", MULTILINE), ("FIXEDENCODING", FIXEDENCODING), ("NOENCODING", NOENCODING)] {
        let id = ctx.intern(n);
        crate::core::module::body(c).const_set(id, Value::fixnum(v as i64));
    }
    let regexp_error = ctx.c().regexp_error;
    crate::core::module_methods::define_class_under(ctx, c, "TimeoutError", regexp_error);
    crate::methods!(ctx, c, [
        ("compile", re_s_compile, [0..], Unsafe, Singleton, Kw),
        ("initialize", re_initialize, [1..=2], Unsafe, Private, Kw),
        ("initialize_copy", re_initialize_copy, [1], Unsafe, Private),
        ("escape", re_s_escape, [1], Safe, Singleton),
        ("quote", re_s_escape, [1], Safe, Singleton),
        ("union", re_s_union, [0..], Unsafe, Singleton),
        ("try_convert", re_s_try_convert, [1], Unsafe, Singleton),
        ("linear_time?", re_s_linear_time, [1..=2], Unsafe, Singleton, Kw),
        ("timeout", re_s_timeout, [0], Safe, Singleton),
        ("timeout=", re_s_set_timeout, [1], Safe, Singleton),
        ("timeout", re_timeout, [0], Safe),
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
}
