//! Ruby's regexp syntax (Onigmo's) on top of Oniguruma, and what a pattern's characters
//! and escapes say about its encoding.
//!
//! Carmine compiles patterns with Oniguruma (the `onig` crate), which differs from the
//! Onigmo that CRuby uses in a few places. `translate` rewrites a pattern so Oniguruma
//! reads it as Onigmo would; the result is used only for compiling (`Regexp#source`
//! keeps the user's text). The rewrite never changes what a pattern matches:
//! - A quantified anchor or look-around (`^?`, `\b*`, `(?=a)+`) and an alternative that is
//!   a lone anchor (`(?:(?=a)|a)*`) are rejected by Oniguruma; they are wrapped in an
//!   atomic group, `(?>^)?`, which matches exactly what the zero-width item does.
//! - Ruby's `\w \d \s` (and `\W \D \S`) are ASCII-only unless `(?u)`: they are spelled
//!   out as ASCII brackets. `(?a)` (also `\b` and POSIX brackets ASCII-only) becomes
//!   Oniguruma's `W`/`D`/`S`/`P` options (enabled by `syntax()`); `(?d)` and `(?u)` turn
//!   those off.
//! - In a UTF-8 pattern, `\xHH` escapes of bytes >= 0x80 must form whole characters
//!   ("invalid multibyte escape" otherwise), and `\x` needs a hex digit.

use onig::Syntax;

/// Ruby's syntax plus the Oniguruma option letters `translate` produces.
pub fn syntax() -> Syntax {
    // SAFETY: OnigSyntaxRuby is an immutable static table of plain integers; we copy it.
    let mut raw: onig_sys::OnigSyntaxType = unsafe { *(&raw const onig_sys::OnigSyntaxRuby) };
    raw.op2 |= onig_sys::ONIG_SYN_OP2_OPTION_ONIGURUMA;
    // SAFETY: `Syntax` is `repr(transparent)` over `OnigSyntaxType`.
    unsafe { std::mem::transmute::<onig_sys::OnigSyntaxType, Syntax>(raw) }
}

/// What a pattern's text requires of its encoding.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EncodingNeeds {
    /// A raw non-ASCII byte, or an escape of a byte >= 0x80 (`\xHH`, octal).
    pub non_ascii: bool,
    /// A `\u` escape (the pattern is then UTF-8).
    pub unicode_escape: bool,
}

/// Scans a pattern for what fixes its encoding (CRuby's `rb_reg_preprocess`).
pub fn encoding_needs(src: &[u8]) -> EncodingNeeds {
    let mut needs = EncodingNeeds::default();
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        if c >= 0x80 {
            needs.non_ascii = true;
            i += 1;
            continue;
        }
        if c != b'\\' {
            i += 1;
            continue;
        }
        match src.get(i + 1) {
            Some(b'x') => {
                let (v, n) = hex_digits(src, i + 2, 2);
                if n > 0 && v >= 0x80 {
                    needs.non_ascii = true;
                }
                i += 2 + n;
            }
            Some(b'u') => {
                // Only a non-ASCII character makes the pattern UTF-8; `\u{41}` is plain `A`.
                let (codes, n) = unicode_escape_codes(src, i);
                if codes.iter().any(|&c| c >= 0x80) {
                    needs.unicode_escape = true;
                }
                i += n.max(2);
            }
            Some(d @ b'0'..=b'7') => {
                // Three octal digits name a byte (fewer may be a back-reference).
                let digits = src[i + 1..].iter().take(3).take_while(|b| (b'0'..=b'7').contains(b)).count();
                if digits == 3 || *d == b'0' {
                    let v = src[i + 1..i + 1 + digits].iter().fold(0u32, |a, b| a * 8 + (b - b'0') as u32);
                    if v >= 0x80 {
                        needs.non_ascii = true;
                    }
                }
                i += 1 + digits;
            }
            Some(_) => i += 2,
            None => i += 1,
        }
    }
    needs
}

/// The code points of the `\u` escape at `i` (`\uHHHH` or `\u{H HHHH ...}`) and its
/// length; a malformed escape yields what could be read (compiling reports the error).
fn unicode_escape_codes(src: &[u8], i: usize) -> (Vec<u32>, usize) {
    if src.get(i + 2) != Some(&b'{') {
        let (v, d) = hex_digits(src, i + 2, 4);
        return (if d == 4 { vec![v] } else { Vec::new() }, 2 + d);
    }
    let mut codes = Vec::new();
    let mut j = i + 3;
    loop {
        while src.get(j).is_some_and(|b| *b == b' ' || *b == b'\t') {
            j += 1;
        }
        let (v, d) = hex_digits(src, j, 8);
        if d == 0 {
            let end = if src.get(j) == Some(&b'}') { j + 1 } else { j };
            return (codes, end - i);
        }
        codes.push(v);
        j += d;
    }
}

/// Whether a (valid) pattern always matches in time linear in the subject's length with a
/// backtracking engine such as Oniguruma (`Regexp.linear_time?`). Oniguruma does not
/// memoize as CRuby's Onigmo does, so the sound test is that every match attempt does a
/// bounded amount of work: no unbounded repetition (`*`, `+`, `{n,}`, `\X`, the absent
/// operator), no back-references, and no subexpression call that could recurse (a call
/// from inside a group, or of the whole pattern). A search then costs O(n) attempts of
/// bounded cost. Anything the scan is unsure about counts as not linear.
pub fn is_linear_time(src: &[u8], extended: bool) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while i < src.len() {
        match src[i] {
            b'\\' => {
                match src.get(i + 1) {
                    Some(b'1'..=b'9' | b'k' | b'X') => return false,
                    Some(b'g') => {
                        let whole = matches!(src.get(i + 3..i + 5), Some(b"0>" | b"0'"));
                        if depth > 0 || whole {
                            return false;
                        }
                    }
                    _ => {}
                }
                i += 2;
            }
            // In extended mode a `[` may sit in a comment; scanning the class text as
            // pattern text can only find more to object to.
            b'[' if !extended => i = skip_class(src, i),
            b'(' => {
                if src[i + 1..].starts_with(b"?#") {
                    while i < src.len() && src[i] != b')' {
                        i += if src[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                    continue;
                }
                if src[i + 1..].starts_with(b"?~") {
                    return false;
                }
                depth += 1;
                i += 1;
            }
            b')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'*' | b'+' => return false,
            b'{' => match interval_upper_bound(src, i) {
                Some((bounded, len)) => {
                    if !bounded {
                        return false;
                    }
                    i += len;
                }
                None => i += 1,
            },
            _ => i += 1,
        }
    }
    true
}

/// The six "popular" quantifiers Onigmo folds when one directly repeats another:
/// `?`, `*`, `+` and their lazy forms, in Onigmo's order.
const POPULAR_QUANTIFIERS: [&str; 6] = ["?", "*", "+", "??", "*?", "+?"];

/// What Onigmo makes of quantifier `outer` applied to a node quantified by `inner`
/// (indexes into POPULAR_QUANTIFIERS): None when it keeps both, Some(None) when `outer`
/// is redundant, Some(Some(text)) when the pair is replaced by `text`.
fn nested_repeat_reduction(inner: usize, outer: usize) -> Option<Option<&'static str>> {
    const ASIS: u8 = 0;
    const DEL: u8 = 1;
    const A: u8 = 2;
    const AQ: u8 = 3;
    const QQ: u8 = 4;
    const P_QQ: u8 = 5;
    const TABLE: [[u8; 6]; 6] = [
        [DEL, A, A, QQ, AQ, ASIS],
        [DEL, DEL, DEL, P_QQ, P_QQ, DEL],
        [A, A, DEL, ASIS, P_QQ, DEL],
        [DEL, AQ, AQ, DEL, AQ, AQ],
        [DEL, DEL, DEL, DEL, DEL, DEL],
        // Onigmo's table has PQ_Q and DEL for `*` and `+` over `+?`, but CRuby neither
        // warns about nor folds `a+?*` and `a+?+`.
        [ASIS, ASIS, ASIS, AQ, AQ, DEL],
    ];
    match TABLE[inner][outer] {
        ASIS => None,
        DEL => Some(None),
        A => Some(Some("*")),
        AQ => Some(Some("*?")),
        QQ => Some(Some("??")),
        _ => Some(Some("+ and ??")),
    }
}

/// The popular quantifier that results from reducing `outer` over `inner` (the top
/// quantifier of the node afterwards), as Onigmo's `onig_reduce_nested_quantifier`.
fn reduced_quantifier(inner: usize, outer: usize) -> Option<usize> {
    match nested_repeat_reduction(inner, outer) {
        None => Some(outer),
        Some(None) => Some(inner),
        Some(Some("*")) => Some(1),
        Some(Some("*?")) => Some(4),
        Some(Some("??")) => Some(3),
        Some(Some(_)) => Some(3),
    }
}

/// A quantifier token at `i`: (popular index if it is one, possessive, length). The
/// `+` after an interval is not possessive in Ruby's syntax: it is another quantifier.
fn quantifier_at(src: &[u8], i: usize) -> Option<(Option<usize>, bool, usize)> {
    let (lower, upper, mut len, interval) = match src.get(i)? {
        b'?' => (0, Some(1), 1, false),
        b'*' => (0, None, 1, false),
        b'+' => (1, None, 1, false),
        b'{' => {
            let end = i + src[i..].iter().position(|&b| b == b'}')?;
            let body = &src[i + 1..end];
            let num = |d: &[u8]| -> Option<Option<u64>> {
                if d.is_empty() {
                    Some(None)
                } else if d.iter().all(u8::is_ascii_digit) {
                    std::str::from_utf8(d).ok()?.parse().ok().map(Some)
                } else {
                    None
                }
            };
            let (lo, hi) = match body.iter().position(|&b| b == b',') {
                Some(c) => (num(&body[..c])?, num(&body[c + 1..])?),
                None => {
                    let n = num(body)??;
                    (Some(n), Some(n))
                }
            };
            if lo.is_none() && hi.is_none() {
                return None;
            }
            (lo.unwrap_or(0), hi, end + 1 - i, true)
        }
        _ => return None,
    };
    // `{n}?` is `{n}` repeated by `?` in Ruby's syntax, not a lazy `{n}`.
    let fixed = interval && !src[i..i + len].contains(&b',');
    let lazy = !fixed && src.get(i + len) == Some(&b'?');
    if lazy {
        len += 1;
    }
    let possessive = !lazy && !interval && src.get(i + len) == Some(&b'+');
    if possessive {
        len += 1;
    }
    let popular = match (lower, upper) {
        (0, Some(1)) => Some(0),
        (0, None) => Some(1),
        (1, None) => Some(2),
        _ => None,
    };
    Some((popular.map(|p| if lazy { p + 3 } else { p }), possessive, len))
}

/// Onigmo's warnings about a quantifier that directly repeats a quantified item
/// (`a**`, `(?:a+)?`, `a{0,1}+`), which Onigmo folds into one quantifier; each without
/// the `: /source/` suffix. Capturing and option groups keep the two apart, as in Onigmo.
pub fn nested_repeat_warnings(src: &[u8], extended: bool) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut i = 0;
    nested_repeat_sequence(src, &mut i, extended, &mut warnings);
    warnings
}

/// Scans alternatives up to the `)` closing the current group (or the end). Returns the
/// top quantifier of the group's content when it is one quantified item, which a plain
/// `(?:...)` passes on to a quantifier after it.
fn nested_repeat_sequence(src: &[u8], i: &mut usize, extended: bool, warnings: &mut Vec<String>) -> Option<usize> {
    let mut items = 0;
    let mut alternatives = 1;
    let mut last: Option<usize> = None;
    while *i < src.len() {
        let c = src[*i];
        if extended && (c.is_ascii_whitespace() || c == b'#') {
            skip_extended_space(src, i);
            continue;
        }
        // The item at *i, and the quantifier it carries into what follows.
        let carried: Option<usize> = match c {
            b')' => {
                *i += 1;
                return if alternatives == 1 && items == 1 { last } else { None };
            }
            b'|' => {
                alternatives += 1;
                items = 0;
                *i += 1;
                continue;
            }
            b'\\' => {
                *i += 2;
                None
            }
            b'[' => {
                *i = skip_class(src, *i);
                None
            }
            b'(' => {
                let rest = &src[*i + 1..];
                if rest.starts_with(b"?#") {
                    while *i < src.len() && src[*i] != b')' {
                        *i += if src[*i] == b'\\' { 2 } else { 1 };
                    }
                    *i += 1;
                    continue;
                }
                let plain = rest.starts_with(b"?:");
                let opt_len = rest.iter().skip(1).take_while(|b| b"imxadu-".contains(b)).count();
                let inline_options = rest.first() == Some(&b'?') && opt_len > 0 && rest.get(1 + opt_len) == Some(&b')');
                *i += if plain { 3 } else { 1 };
                if inline_options {
                    *i += opt_len + 1;
                    continue;
                }
                let inner = nested_repeat_sequence(src, i, extended, warnings);
                if plain { inner } else { None }
            }
            _ => {
                *i += if c >= 0x80 { utf8_len(c) } else { 1 };
                None
            }
        };
        items += 1;
        let mut top = carried;
        // Quantifiers after the item, each repeating the result of the previous ones.
        loop {
            let mut j = *i;
            if extended {
                skip_extended_space(src, &mut j);
            }
            let Some((popular, possessive, len)) = quantifier_at(src, j) else { break };
            *i = j + len;
            // A possessive quantifier is folded like any other and then becomes an
            // atomic group, which nothing after it folds into.
            top = match (top, popular) {
                (Some(inner), Some(outer)) => {
                    match nested_repeat_reduction(inner, outer) {
                        None => {}
                        Some(None) => warnings.push(format!("regular expression has redundant nested repeat operator '{}'", POPULAR_QUANTIFIERS[inner])),
                        Some(Some(to)) => warnings.push(format!(
                            "nested repeat operator '{}' and '{}' was replaced with '{}' in regular expression",
                            POPULAR_QUANTIFIERS[inner], POPULAR_QUANTIFIERS[outer], to
                        )),
                    }
                    reduced_quantifier(inner, outer)
                }
                (_, p) => p,
            };
            if possessive {
                top = None;
            }
        }
        last = top;
    }
    None
}

/// Skips whitespace and `#` comments of an extended pattern.
fn skip_extended_space(src: &[u8], i: &mut usize) {
    while *i < src.len() {
        match src[*i] {
            b'#' => {
                while *i < src.len() && src[*i] != b'\n' {
                    *i += 1;
                }
            }
            c if c.is_ascii_whitespace() => *i += 1,
            _ => return,
        }
    }
}

/// The end of the bracket expression starting at `i` (nested brackets and escapes
/// included).
fn skip_class(src: &[u8], mut i: usize) -> usize {
    let mut level = 0usize;
    let start = i;
    while i < src.len() {
        match src[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b'[' => level += 1,
            // A `]` right after the opening `[` or `[^` is a literal.
            b']' if i == start + 1 || (i == start + 2 && src[start + 1] == b'^') => {}
            b']' => {
                level -= 1;
                if level == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    src.len()
}

/// An interval quantifier at `i` (`{n}`, `{n,m}`, `{,m}`, `{n,}`): whether it has an
/// upper bound, and its length. None when the `{` is a literal.
fn interval_upper_bound(src: &[u8], i: usize) -> Option<(bool, usize)> {
    let end = i + src[i..].iter().position(|&b| b == b'}')?;
    let body = &src[i + 1..end];
    let (lo, hi) = match body.iter().position(|&b| b == b',') {
        Some(c) => (&body[..c], Some(&body[c + 1..])),
        None => (body, None),
    };
    let digits = |d: &[u8]| d.iter().all(u8::is_ascii_digit);
    if !digits(lo) || !hi.is_none_or(digits) || (lo.is_empty() && hi.is_none_or(<[u8]>::is_empty)) {
        return None;
    }
    let bounded = hi.is_none_or(|h| !h.is_empty());
    Some((bounded, end + 1 - i))
}

/// Reads up to `max` hex digits at `at`: (value, digits read).
fn hex_digits(src: &[u8], at: usize, max: usize) -> (u32, usize) {
    let mut v = 0u32;
    let mut n = 0;
    while n < max {
        match src.get(at + n).and_then(|&b| (b as char).to_digit(16)) {
            Some(d) => v = v * 16 + d,
            None => break,
        }
        n += 1;
    }
    (v, n)
}

/// Length of the UTF-8 sequence a lead byte starts (1 for anything else, so the
/// translator always makes progress).
fn utf8_len(b: u8) -> usize {
    match b {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    }
}

/// One open group (or the whole pattern) while translating.
struct Frame {
    /// Output offset of the group's `(`.
    start: usize,
    /// A look-around group: zero-width once closed.
    lookaround: bool,
    /// Options in effect inside the group.
    mode: Mode,
    /// The group has a `|` (its alternatives are an alternation).
    alternation: bool,
    /// Items in the current alternative.
    items: usize,
    /// Output offset of the last item and whether it is zero-width (unquantified).
    last: Option<(usize, bool)>,
}

impl Frame {
    fn new(start: usize, lookaround: bool, mode: Mode) -> Frame {
        Frame { start, lookaround, mode, alternation: false, items: 0, last: None }
    }
}

/// The inline options the translation depends on.
#[derive(Clone, Copy)]
struct Mode {
    /// `x`: whitespace and `#` comments are not pattern characters.
    extended: bool,
    /// `\w \d \s` (and negations) are ASCII-only: Ruby's default and `(?a)`/`(?d)`;
    /// `(?u)` makes them Unicode. Oniguruma's are Unicode, so they are spelled out.
    ascii_classes: bool,
    /// POSIX brackets are Unicode (Ruby's default, `(?d)` and `(?u)`; not `(?a)`).
    unicode_posix: bool,
}

/// Wraps `out[at..]` in an atomic group.
fn wrap_atomic(out: &mut Vec<u8>, at: usize) {
    out.splice(at..at, b"(?>".iter().copied());
    out.push(b')');
}

/// Ends the current alternative of `f`: a lone zero-width item in an alternation is
/// wrapped (Oniguruma rejects quantifying such an alternation).
fn end_alternative(f: &mut Frame, out: &mut Vec<u8>) {
    if f.alternation && f.items == 1 {
        if let Some((at, true)) = f.last {
            wrap_atomic(out, at);
        }
    }
}

/// The length of an interval quantifier (`{n}`, `{n,}`, `{,m}`, `{n,m}`) at `i`, if any.
fn interval_len(src: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let lo = src[j..].iter().take_while(|b| b.is_ascii_digit()).count();
    j += lo;
    let mut hi = 0;
    let comma = src.get(j) == Some(&b',');
    if comma {
        j += 1;
        hi = src[j..].iter().take_while(|b| b.is_ascii_digit()).count();
        j += hi;
    }
    if src.get(j) != Some(&b'}') || (lo == 0 && hi == 0) {
        return None;
    }
    Some(j + 1 - i)
}

/// Rewrites a Ruby pattern for Oniguruma (see the module comment). `utf8`: the pattern
/// is compiled as UTF-8. Errors are CRuby's messages, without the `/pattern/` suffix.
pub fn translate(src: &[u8], utf8: bool, extended: bool) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(src.len() + 8);
    let mut stack = vec![Frame::new(0, false, Mode { extended, ascii_classes: true, unicode_posix: true })];
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        let at = out.len();
        let top = stack.len() - 1;
        match c {
            b'\\' => {
                let n = escape(src, i, utf8, stack[top].mode.ascii_classes, false, &mut out)?;
                let zero_width = matches!(src.get(i + 1), Some(b'A' | b'z' | b'Z' | b'b' | b'B' | b'G'));
                i += n;
                item(&mut stack[top], at, zero_width);
            }
            b'^' | b'$' => {
                out.push(c);
                i += 1;
                item(&mut stack[top], at, true);
            }
            b'[' => {
                i = char_class(src, i, utf8, stack[top].mode, &mut out)?;
                item(&mut stack[top], at, false);
            }
            b'(' => match absent_literal(src, i, utf8, stack[top].mode.extended) {
                Some((n, rewritten)) => {
                    out.extend_from_slice(&rewritten);
                    i += n;
                    item(&mut stack[top], at, false);
                }
                None => i = open_group(src, i, &mut out, &mut stack)?,
            },
            b')' if stack.len() > 1 => {
                let mut f = stack.pop().expect("open group");
                end_alternative(&mut f, &mut out);
                out.push(b')');
                i += 1;
                let parent = stack.len() - 1;
                item(&mut stack[parent], f.start, f.lookaround);
            }
            b'|' => {
                let f = &mut stack[top];
                f.alternation = true;
                end_alternative(f, &mut out);
                f.items = 0;
                f.last = None;
                out.push(b'|');
                i += 1;
            }
            b'?' | b'*' | b'+' => {
                quantify(&mut stack[top], &mut out);
                out.push(c);
                i += 1;
            }
            b'{' if interval_len(src, i).is_some() => {
                let n = interval_len(src, i).unwrap_or(1);
                quantify(&mut stack[top], &mut out);
                out.extend_from_slice(&src[i..i + n]);
                i += n;
            }
            b'#' if stack[top].mode.extended => {
                while i < src.len() && src[i] != b'\n' {
                    out.push(src[i]);
                    i += 1;
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c if stack[top].mode.extended => {
                out.push(c);
                i += 1;
            }
            _ => {
                let n = if utf8 { utf8_len(c).min(src.len() - i) } else { 1 };
                out.extend_from_slice(&src[i..i + n]);
                i += n;
                item(&mut stack[top], at, false);
            }
        }
    }
    if stack.len() == 1 {
        end_alternative(&mut stack[0], &mut out);
    }
    Ok(out)
}

/// Records an item of the current alternative starting at output offset `at`.
fn item(f: &mut Frame, at: usize, zero_width: bool) {
    f.items += 1;
    f.last = Some((at, zero_width));
}

/// Before a quantifier: a zero-width target is wrapped so Oniguruma accepts it.
fn quantify(f: &mut Frame, out: &mut Vec<u8>) {
    if let Some((at, true)) = f.last {
        wrap_atomic(out, at);
        f.last = Some((at, false));
    }
}

/// ASCII spellings of `\w \d \s` (Ruby's defaults), as the inside of a bracket.
fn ascii_class(letter: u8) -> Option<&'static [u8]> {
    match letter.to_ascii_lowercase() {
        b'w' => Some(b"a-zA-Z0-9_"),
        b'd' => Some(b"0-9"),
        b's' => Some(b" \\t\\n\\v\\f\\r"),
        _ => None,
    }
}

/// Copies the escape at `i` (checking `\x`); returns the input length consumed.
/// `ascii_classes`: `\w \d \s` are ASCII-only; `in_class`: inside a bracket.
fn escape(src: &[u8], i: usize, utf8: bool, ascii_classes: bool, in_class: bool, out: &mut Vec<u8>) -> Result<usize, String> {
    let Some(&n) = src.get(i + 1) else { return Err("too short escape sequence".into()) };
    if n == b'x' {
        let (v, digits) = hex_digits(src, i + 2, 2);
        if digits == 0 {
            if src.get(i + 2) == Some(&b'{') {
                out.extend_from_slice(b"\\x");
                return Ok(2);
            }
            return Err("invalid hex escape".into());
        }
        if utf8 && v >= 0x80 {
            return multibyte_escape(src, i, out);
        }
        out.extend_from_slice(&src[i..i + 2 + digits]);
        return Ok(2 + digits);
    }
    if n == b'u' {
        return unicode_escape(src, i, out);
    }
    if let Some(set) = ascii_class(n).filter(|_| ascii_classes) {
        let negated = n.is_ascii_uppercase();
        match (in_class, negated) {
            (true, false) => out.extend_from_slice(set),
            _ => {
                out.extend_from_slice(if negated { b"[^" } else { b"[" });
                out.extend_from_slice(set);
                out.push(b']');
            }
        }
        return Ok(2);
    }
    if matches!(n, b'y' | b'Y' | b'O') {
        // Oniguruma's text-segment and any-character escapes; in Ruby the letter itself.
        out.push(n);
        return Ok(2);
    }
    let len = if utf8 { utf8_len(n).min(src.len() - i - 1) } else { 1 };
    out.extend_from_slice(&src[i..i + 1 + len]);
    Ok(1 + len)
}

/// `\uHHHH` and `\u{H HHHH ...}` become the characters' UTF-8 bytes (ASCII ones as `\xHH`,
/// so a metacharacter stays literal), as CRuby's preprocessing does: Oniguruma's Ruby
/// syntax has no `\u{}`.
fn unicode_escape(src: &[u8], i: usize, out: &mut Vec<u8>) -> Result<usize, String> {
    let push = |code: u32, out: &mut Vec<u8>| -> Result<(), String> {
        let ch = char::from_u32(code).ok_or_else(|| "invalid Unicode range".to_string())?;
        if code < 0x80 {
            out.extend_from_slice(format!("\\x{code:02X}").as_bytes());
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        Ok(())
    };
    if src.get(i + 2) == Some(&b'{') {
        let mut j = i + 3;
        let mut any = false;
        loop {
            while src.get(j).is_some_and(|b| *b == b' ' || *b == b'\t') {
                j += 1;
            }
            match src.get(j) {
                Some(b'}') if any => return Ok(j + 1 - i),
                _ => {}
            }
            let (v, d) = hex_digits(src, j, 8);
            if d == 0 {
                return Err("invalid Unicode list".into());
            }
            if d > 6 {
                return Err("invalid Unicode range".into());
            }
            push(v, out)?;
            any = true;
            j += d;
        }
    }
    let (v, d) = hex_digits(src, i + 2, 4);
    if d != 4 {
        return Err("invalid Unicode escape".into());
    }
    push(v, out)?;
    Ok(6)
}

/// A run of `\xHH` escapes in a UTF-8 pattern that must spell one character.
fn multibyte_escape(src: &[u8], i: usize, out: &mut Vec<u8>) -> Result<usize, String> {
    let mut bytes = Vec::new();
    let mut j = i;
    let (lead, _) = hex_digits(src, i + 2, 2);
    let want = utf8_len(lead as u8);
    while bytes.len() < want && src.get(j) == Some(&b'\\') && src.get(j + 1) == Some(&b'x') {
        let (v, d) = hex_digits(src, j + 2, 2);
        if d == 0 {
            break;
        }
        bytes.push(v as u8);
        j += 2 + d;
    }
    if want == 1 || bytes.len() != want || std::str::from_utf8(&bytes).is_err() {
        return Err("invalid multibyte escape".into());
    }
    out.extend_from_slice(&src[i..j]);
    Ok(j - i)
}

/// Copies a bracket expression starting at `i`; returns the index after it.
fn char_class(src: &[u8], i: usize, utf8: bool, mode: Mode, out: &mut Vec<u8>) -> Result<usize, String> {
    let ascii_classes = mode.ascii_classes;
    let mut j = i + 1;
    out.push(b'[');
    if src.get(j) == Some(&b'^') {
        out.push(b'^');
        j += 1;
    }
    if src.get(j) == Some(&b']') {
        out.push(b']');
        j += 1;
    }
    let mut depth = 1;
    while j < src.len() {
        match src[j] {
            b'\\' => j += escape(src, j, utf8, ascii_classes, true, out)?,
            b'[' if src.get(j + 1) == Some(&b':') => {
                let end = src[j + 2..].windows(2).position(|w| w == b":]").map(|p| j + 2 + p + 2);
                match end {
                    Some(e) => {
                        out.extend_from_slice(&src[j..e]);
                        // Onigmo's Unicode word characters include the join controls
                        // (ZWNJ, ZWJ); Oniguruma's do not.
                        if utf8 && mode.unicode_posix && &src[j..e] == b"[:word:]" {
                            out.extend_from_slice("\u{200C}\u{200D}".as_bytes());
                        }
                        j = e;
                    }
                    None => {
                        out.push(b'[');
                        j += 1;
                    }
                }
            }
            b'[' => {
                depth += 1;
                out.push(b'[');
                j += 1;
                if src.get(j) == Some(&b'^') {
                    out.push(b'^');
                    j += 1;
                }
            }
            b']' => {
                depth -= 1;
                out.push(b']');
                j += 1;
                if depth == 0 {
                    return Ok(j);
                }
            }
            c => {
                let n = if utf8 { utf8_len(c).min(src.len() - j) } else { 1 };
                out.extend_from_slice(&src[j..j + n]);
                j += n;
            }
        }
    }
    Ok(j)
}

/// The absent operator `(?~lit)` over a plain literal, at `i`: its length and an
/// equivalent pattern. Onigmo's `(?~X)` matches any text that does not contain a match
/// of X; Oniguruma's also stops before an X that would only end past the text. For a
/// literal the two agree on: characters where no `lit` starts, then at most a proper
/// prefix of `lit` (where the first `lit` starts). Other contents are left to Oniguruma.
fn absent_literal(src: &[u8], i: usize, utf8: bool, extended: bool) -> Option<(usize, Vec<u8>)> {
    let rest = src.get(i..)?;
    if !rest.starts_with(b"(?~") || rest.get(3) == Some(&b'|') {
        return None;
    }
    let body_len = rest[3..].iter().position(|&b| b == b')')?;
    let body = &rest[3..3 + body_len];
    let special = |b: &u8| b"\\^$.|?*+()[]{}".contains(b) || (extended && (b.is_ascii_whitespace() || *b == b'#'));
    if body.is_empty() || body.iter().any(special) {
        return None;
    }
    let mut chars = Vec::new();
    let mut j = 0;
    while j < body.len() {
        let n = if utf8 { utf8_len(body[j]).min(body.len() - j) } else { 1 };
        chars.push(j + n);
        j += n;
    }
    let mut out = b"(?:(?:(?!".to_vec();
    out.extend_from_slice(body);
    out.extend_from_slice(b")(?m:.))*");
    if chars.len() > 1 {
        out.extend_from_slice(b"(?:");
        for (k, &end) in chars[..chars.len() - 1].iter().rev().enumerate() {
            if k > 0 {
                out.push(b'|');
            }
            out.extend_from_slice(&body[..end]);
        }
        out.extend_from_slice(b")?");
    }
    out.push(b')');
    Some((3 + body_len + 1, out))
}

/// Handles `(` at `i`: comments and option groups are copied (options translated),
/// other groups pushed on `stack`. Returns the index after the group's opening.
fn open_group(src: &[u8], i: usize, out: &mut Vec<u8>, stack: &mut Vec<Frame>) -> Result<usize, String> {
    let at = out.len();
    let top = stack.len() - 1;
    let mode = stack[top].mode;
    if src.get(i + 1) != Some(&b'?') {
        out.push(b'(');
        stack.push(Frame::new(at, false, mode));
        return Ok(i + 1);
    }
    let rest = &src[i + 2..];
    if rest.first() == Some(&b'#') {
        let mut j = i + 3;
        while j < src.len() && src[j] != b')' {
            j += if src[j] == b'\\' { 2 } else { 1 };
        }
        let end = (j + 1).min(src.len());
        out.extend_from_slice(&src[i..end]);
        return Ok(end);
    }
    let lookaround = rest.starts_with(b"=") || rest.starts_with(b"!") || rest.starts_with(b"<=") || rest.starts_with(b"<!");
    // Options: (?imxadu-imx) or (?imxadu-imx: ... )
    let opt_len = rest.iter().take_while(|b| b"imxadu-".contains(b)).count();
    if opt_len > 0 && matches!(rest.get(opt_len), Some(b')' | b':')) {
        let letters = &rest[..opt_len];
        let mut on = Vec::new();
        let mut off = Vec::new();
        let mut neg = false;
        let mut new_mode = mode;
        for &l in letters {
            match (l, neg) {
                (b'-', _) => neg = true,
                (b'a', false) => {
                    on.extend_from_slice(b"WDSP");
                    new_mode.ascii_classes = true;
                    new_mode.unicode_posix = false;
                }
                (b'd', false) => {
                    off.extend_from_slice(b"WDSP");
                    new_mode.ascii_classes = true;
                    new_mode.unicode_posix = true;
                }
                (b'u', false) => {
                    off.extend_from_slice(b"WDSP");
                    new_mode.ascii_classes = false;
                    new_mode.unicode_posix = true;
                }
                (b'a' | b'd' | b'u', true) => return Err("undefined group option".into()),
                (l, false) => {
                    if l == b'x' {
                        new_mode.extended = true;
                    }
                    on.push(l)
                }
                (l, true) => {
                    if l == b'x' {
                        new_mode.extended = false;
                    }
                    off.push(l)
                }
            }
        }
        out.extend_from_slice(b"(?");
        out.extend_from_slice(&on);
        if !off.is_empty() || (neg && on.is_empty()) {
            out.push(b'-');
            out.extend_from_slice(&off);
        }
        let close = rest[opt_len];
        out.push(close);
        let next = i + 2 + opt_len + 1;
        if close == b')' {
            // Applies to the rest of the enclosing group.
            stack[top].mode = new_mode;
        } else {
            stack.push(Frame::new(at, false, new_mode));
        }
        return Ok(next);
    }
    let head = match rest.first() {
        _ if lookaround => if rest[0] == b'<' { 4 } else { 3 },
        Some(b':' | b'>' | b'~') => 3,
        // A conditional's condition is a group number or a quoted name.
        Some(b'(') if !matches!(rest.get(1), Some(b'0'..=b'9' | b'<' | b'\'' | b'-' | b'+')) => {
            return Err("invalid conditional pattern".into());
        }
        // A group name, or a conditional's condition.
        Some(&open @ (b'<' | b'\'' | b'(')) => {
            let close = match open {
                b'<' => b'>',
                b'(' => b')',
                _ => b'\'',
            };
            rest[1..].iter().position(|&b| b == close).map_or(2, |p| 2 + 1 + p + 1)
        }
        _ => 2,
    };
    out.extend_from_slice(&src[i..i + head]);
    stack.push(Frame::new(at, lookaround, mode));
    Ok(i + head)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> String {
        String::from_utf8(translate(s.as_bytes(), true, false).unwrap()).unwrap()
    }

    #[test]
    fn wraps_quantified_zero_width_items() {
        assert_eq!(t("a^?b"), "a(?>^)?b");
        assert_eq!(t(r"\b*x"), r"(?>\b)*x");
        assert_eq!(t("(?=a)+"), "(?>(?=a))+");
        assert_eq!(t("(?:(?=a)|a)*"), "(?:(?>(?=a))|a)*");
        assert_eq!(t("a|^"), "a|(?>^)");
        assert_eq!(t("^a$"), "^a$");
        assert_eq!(t("a{2}?"), "a{2}?");
        assert_eq!(t("[?^]*"), "[?^]*");
        assert_eq!(t(r"\^?"), r"\^?");
        assert_eq!(t(r"(?<n>^|a)*"), r"(?<n>(?>^)|a)*");
        assert_eq!(t(r"\y\O"), "yO");
        assert!(translate(b"(?<a>a)(?(a)a|b)", true, false).is_err());
        assert!(translate(b"(?<a>a)(?(<a>)a|b)", true, false).is_ok());
    }

    #[test]
    fn translates_charset_options() {
        assert_eq!(t("(?a)x"), "(?WDSP)x");
        assert_eq!(t(r"(?u:\w)\w"), r"(?-WDSP:\w)[a-zA-Z0-9_]");
        assert_eq!(t("(?di-x)x"), "(?i-WDSPx)x");
        assert_eq!(t(r"[\w\D-]\S"), r"[a-zA-Z0-9_[^0-9]-][^ \t\n\v\f\r]");
        assert!(translate(b"(?-a)", true, false).is_err());
    }

    #[test]
    fn checks_hex_escapes() {
        assert_eq!(t(r"\xE3\x81\x82"), r"\xE3\x81\x82");
        assert_eq!(translate(br"\xAA", true, false), Err("invalid multibyte escape".to_string()));
        assert!(translate(br"\xAA", false, false).is_ok());
        assert_eq!(translate(br"\xG", true, false), Err("invalid hex escape".to_string()));
    }

    #[test]
    fn expands_unicode_escapes() {
        assert_eq!(t(r"\u3042\u{61 3044}"), "あ\\x61い");
        assert_eq!(t(r"[\u{2a}]"), r"[\x2A]");
        assert!(translate(br"\u{}", true, false).is_err());
        assert!(translate(br"\u12", true, false).is_err());
    }

    #[test]
    fn finds_what_fixes_the_encoding() {
        assert_eq!(encoding_needs(b"abc"), EncodingNeeds::default());
        assert!(encoding_needs(br"\xff").non_ascii);
        assert!(!encoding_needs(br"\\xff").non_ascii);
        assert!(encoding_needs(br"\u3042").unicode_escape);
        assert!(encoding_needs("é".as_bytes()).non_ascii);
        assert!(encoding_needs(br"\377").non_ascii);
        assert!(!encoding_needs(br"\1").non_ascii);
    }
}
