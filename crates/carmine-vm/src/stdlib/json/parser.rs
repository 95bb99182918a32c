//! `JSON::Ext::Parser`: a recursive-descent JSON parser building Ruby objects directly.
//!
//! Invariants:
//! - The parser keeps its own frozen UTF-8 copy of the source (`ParserObj::source`), so
//!   the bytes it walks cannot change while Ruby code (`object_class`, `json_create` …)
//!   runs during a parse; `source` answers a new copy of it.
//! - The grammar is json 2.6's: any value at top level, `/* */` and `//` comments wherever
//!   whitespace may stand, `NaN`/`Infinity`/`-Infinity` only with `allow_nan`, any
//!   character after a backslash except a control character, no validation of UTF-8.
//! - A value that fails to parse answers `Ok(None)`; who reports it, and where, follows
//!   json 2.6: arrays raise at the offending token (line 451), objects give up silently and
//!   their caller reports from the object's first byte, the top level raises at line 859.
//! - Containers under construction are held in Rust locals (the native stack is scanned
//!   conservatively); values are pushed into the Ruby Array/Hash as soon as they exist.

use super::error;
use crate::core::encoding::{BINARY, US_ASCII, UTF_8};
use crate::core::module::{body, AllocKind};
use crate::core::{array, bignum, float, hash, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct ParserObj {
    /// The private source copy, nil until `initialize`.
    source: Value,
    max_nesting: i64,
    allow_nan: bool,
    symbolize_names: bool,
    freeze: bool,
    create_additions: bool,
    create_id: Value,
    object_class: Value,
    array_class: Value,
    decimal_class: Value,
    match_string: Value,
}

crate::data_obj!(ParserObj, |s, m| {
    m.mark(s.source);
    m.mark(s.create_id);
    m.mark(s.object_class);
    m.mark(s.array_class);
    m.mark(s.decimal_class);
    m.mark(s.match_string);
});

fn alloc(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let p = ParserObj {
        source: Value::NIL,
        max_nesting: 100,
        allow_nan: false,
        symbolize_names: false,
        freeze: false,
        create_additions: false,
        create_id: Value::NIL,
        object_class: Value::NIL,
        array_class: Value::NIL,
        decimal_class: Value::NIL,
        match_string: Value::NIL,
    };
    Ok(object::new_data(ctx, klass, Box::new(p)))
}

fn parser_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut ParserObj> {
    match data_ref::<ParserObj>(v) {
        Some(p) => Ok(p),
        None => Err(ctx.type_error("wrong argument type (expected JSON/Parser)")),
    }
}

/// The option `name` of `opts`: `Some(value)` when the key is present.
fn option(ctx: &mut Ctx, opts: Value, name: &str) -> Result<Option<Value>> {
    if opts.is_nil() {
        return Ok(None);
    }
    let key = Value::symbol(ctx.intern(name));
    hash::lookup(ctx, opts, key)
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut opts = args.kw.unwrap_or(Value::NIL);
    if args.len() == 2 {
        if !args.pos[1].is_nil() {
            opts = hash::to_hash_arg(ctx, args.pos[1])?;
        }
    } else if args.len() != 1 {
        return Err(ctx.arity_error(args.len(), 1, Some(1)));
    }
    if parser_of(ctx, recv)?.source.truthy() {
        return Err(ctx.type_error("already initialized instance"));
    }
    let mut max_nesting = 100;
    if let Some(v) = option(ctx, opts, "max_nesting")? {
        max_nesting = if v.truthy() { integer::to_i64_arg(ctx, v)? } else { 0 };
    }
    let allow_nan = option(ctx, opts, "allow_nan")?.is_some_and(|v| v.truthy());
    let symbolize_names = option(ctx, opts, "symbolize_names")?.is_some_and(|v| v.truthy());
    let freeze = option(ctx, opts, "freeze")?.is_some_and(|v| v.truthy());
    let create_additions = option(ctx, opts, "create_additions")?.is_some_and(|v| v.truthy());
    if symbolize_names && create_additions {
        return Err(ctx.arg_error("options :symbolize_names and :create_additions cannot be  used in conjunction"));
    }
    let create_id = match option(ctx, opts, "create_id")? {
        Some(v) => v,
        None => {
            let json = super::json_module(ctx);
            ctx.call_str(json, "create_id", &[])?
        }
    };
    let object_class = option(ctx, opts, "object_class")?.unwrap_or(Value::NIL);
    let array_class = option(ctx, opts, "array_class")?.unwrap_or(Value::NIL);
    let decimal_class = option(ctx, opts, "decimal_class")?.unwrap_or(Value::NIL);
    let match_string = option(ctx, opts, "match_string")?.unwrap_or(Value::NIL);
    let src = string::to_str_arg(ctx, args.pos[0])?;
    let src = utf8_source(ctx, src)?;
    let p = parser_of(ctx, recv)?;
    *p = ParserObj { source: src, max_nesting, allow_nan, symbolize_names, freeze, create_additions, create_id, object_class, array_class, decimal_class, match_string };
    Ok(Value::NIL)
}

/// A frozen UTF-8 copy of `src`: binary sources are taken as UTF-8, others are encoded.
fn utf8_source(ctx: &mut Ctx, src: Value) -> Result<Value> {
    let enc = string::encoding(src);
    let src = if enc == BINARY || enc == UTF_8 || enc == US_ASCII || string::is_7bit(src) {
        src
    } else {
        let utf8 = string::new_us_ascii(ctx, "UTF-8");
        ctx.call_str(src, "encode", &[utf8])?
    };
    let copy = string::new_with_enc(ctx, string::bytes(src).to_vec(), UTF_8);
    Ok(object::freeze(copy))
}

fn source(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let src = parser_of(ctx, recv)?.source;
    if src.is_nil() {
        return Err(ctx.type_error("uninitialized instance"));
    }
    Ok(string::dup_literal(ctx, src))
}

fn parse(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = parser_of(ctx, recv)?;
    if p.source.is_nil() {
        return Err(ctx.type_error("uninitialized instance"));
    }
    let mut st = State {
        src: string::bytes(p.source),
        pos: 0,
        max_nesting: p.max_nesting,
        allow_nan: p.allow_nan,
        symbolize_names: p.symbolize_names,
        freeze: p.freeze,
        create_additions: p.create_additions,
        create_id: p.create_id,
        object_class: p.object_class,
        array_class: p.array_class,
        decimal_class: p.decimal_class,
        match_string: p.match_string,
        decimal: None,
        broken_tail: false,
        key_cache: vec![Value::NIL; KEY_CACHE],
        key_keep: array::new(ctx),
    };
    // The parser object (and with it the source) stays alive: `recv` is on the stack.
    st.parse_document(ctx)
}

/// One parse: the source and the options, copied out of the parser object.
struct State<'a> {
    src: &'a [u8],
    pos: usize,
    max_nesting: i64,
    allow_nan: bool,
    symbolize_names: bool,
    freeze: bool,
    create_additions: bool,
    create_id: Value,
    object_class: Value,
    array_class: Value,
    decimal_class: Value,
    match_string: Value,
    /// The receiver and method that turn decimal text into `decimal_class` objects.
    decimal: Option<(Value, crate::symbol::SymId)>,
    /// A comment after the last value was cut short (`self.pos` is where).
    broken_tail: bool,
    /// Object keys seen lately, by a hash of their bytes: repeated keys share one frozen
    /// String, as CRuby's deduplicated hash keys do. `key_keep` (a Ruby Array held by this
    /// State on the stack) keeps every cached String alive.
    key_cache: Vec<Value>,
    key_keep: Value,
}

/// Entries of `State::key_cache` (a power of two).
const KEY_CACHE: usize = 512;
/// Longer keys are not cached.
const KEY_CACHE_MAX_LEN: usize = 48;

#[inline]
fn is_digit(c: u8) -> bool {
    c.is_ascii_digit()
}

impl<'a> State<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    /// "LINE: unexpected token at 'REST'" where REST runs from `at` to the first NUL.
    fn unexpected(&self, ctx: &mut Ctx, line: u32, at: usize) -> crate::error::Unwind {
        let rest = &self.src[at.min(self.src.len())..];
        let rest = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
        let mut msg = format!("{line}: unexpected token at '").into_bytes();
        msg.extend_from_slice(rest);
        msg.push(b'\'');
        error(ctx, "ParserError", &msg)
    }

    /// Skips whitespace and comments. `Err(pos)`: a comment is malformed at `pos`.
    #[inline]
    fn skip_ignore(&mut self) -> std::result::Result<(), usize> {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.pos += 1,
                Some(b'/') => self.skip_comment()?,
                _ => return Ok(()),
            }
        }
    }

    fn skip_comment(&mut self) -> std::result::Result<(), usize> {
        let s = self.src;
        let p = self.pos + 1;
        match s.get(p) {
            Some(b'*') => {
                let mut i = p + 1;
                while i + 1 < s.len() {
                    if s[i] == b'*' && s[i + 1] == b'/' {
                        self.pos = i + 2;
                        return Ok(());
                    }
                    i += 1;
                }
                Err(s.len())
            }
            Some(b'/') => match s[p + 1..].iter().position(|&b| b == b'\n') {
                Some(n) => {
                    self.pos = p + 1 + n + 1;
                    Ok(())
                }
                None => Err(s.len()),
            },
            Some(_) => Err(p),
            None => Err(s.len()),
        }
    }

    fn parse_document(&mut self, ctx: &mut Ctx) -> Result<Value> {
        if let Err(at) = self.skip_ignore() {
            return Err(self.unexpected(ctx, 859, at));
        }
        let start = self.pos;
        let v = match self.parse_value(ctx, 0)? {
            Some(v) => v,
            None => return Err(self.unexpected(ctx, 859, start)),
        };
        if self.pos != self.src.len() || self.broken_tail {
            return Err(self.unexpected(ctx, 859, self.pos));
        }
        Ok(v)
    }

    /// A value at `self.pos` (after any leading whitespace), then trailing whitespace.
    fn parse_value(&mut self, ctx: &mut Ctx, depth: i64) -> Result<Option<Value>> {
        if self.skip_ignore().is_err() {
            return Ok(None);
        }
        let start = self.pos;
        let s = self.src;
        let Some(c) = self.peek() else { return Ok(None) };
        let v = match c {
            b'"' => match self.parse_string(ctx, false)? {
                Some(v) => v,
                None => return Ok(None),
            },
            b'[' => match self.parse_array(ctx, depth + 1)? {
                Some(v) => v,
                None => return Ok(None),
            },
            b'{' => match self.parse_object(ctx, depth + 1)? {
                Some(v) => v,
                None => return Ok(None),
            },
            b'n' if s[start..].starts_with(b"null") => {
                self.pos += 4;
                Value::NIL
            }
            b't' if s[start..].starts_with(b"true") => {
                self.pos += 4;
                Value::TRUE
            }
            b'f' if s[start..].starts_with(b"false") => {
                self.pos += 5;
                Value::FALSE
            }
            b'N' if s[start..].starts_with(b"NaN") => {
                if !self.allow_nan {
                    return Err(self.unexpected(ctx, 225, start));
                }
                self.pos += 3;
                float::new(ctx, f64::NAN)
            }
            b'I' if s[start..].starts_with(b"Infinity") => {
                if !self.allow_nan {
                    // json 2.6 reports from the byte before the token (nothing at offset 0).
                    let at = if start == 0 { s.len() } else { start - 1 };
                    return Err(self.unexpected(ctx, 232, at));
                }
                self.pos += 8;
                float::new(ctx, f64::INFINITY)
            }
            b'-' if s[start..].starts_with(b"-Infinity") => {
                if !self.allow_nan {
                    return Err(self.unexpected(ctx, 249, start));
                }
                self.pos += 9;
                float::new(ctx, f64::NEG_INFINITY)
            }
            b'-' | b'0'..=b'9' => match self.parse_number(ctx)? {
                Some(v) => v,
                None => return Ok(None),
            },
            _ => return Ok(None),
        };
        if let Err(at) = self.skip_ignore() {
            // A broken comment after the value: the caller reports from where it breaks.
            self.pos = at;
            self.broken_tail = true;
        }
        Ok(Some(if self.freeze { object::freeze(v) } else { v }))
    }

    fn parse_number(&mut self, ctx: &mut Ctx) -> Result<Option<Value>> {
        let s = self.src;
        let start = self.pos;
        let mut i = start;
        if s[i] == b'-' {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while i < s.len() && is_digit(s[i]) {
                    i += 1;
                }
            }
            _ => return Ok(None),
        }
        let int_end = i;
        // A fraction and/or an exponent make a Float, if complete and not followed by
        // another number character.
        let mut float_end = None;
        let mut j = int_end;
        let mut ok = true;
        let mut is_float = false;
        if s.get(j) == Some(&b'.') {
            is_float = true;
            j += 1;
            let d = j;
            while j < s.len() && is_digit(s[j]) {
                j += 1;
            }
            ok = j > d;
        }
        if ok && matches!(s.get(j), Some(b'e' | b'E')) {
            is_float = true;
            j += 1;
            if matches!(s.get(j), Some(b'+' | b'-')) {
                j += 1;
            }
            let d = j;
            while j < s.len() && is_digit(s[j]) {
                j += 1;
            }
            ok = j > d;
        }
        if is_float && ok && !matches!(s.get(j), Some(b'0'..=b'9' | b'e' | b'E' | b'.' | b'-')) {
            float_end = Some(j);
        }
        if let Some(end) = float_end {
            self.pos = end;
            return self.make_float(ctx, &s[start..end]).map(Some);
        }
        if matches!(s.get(int_end), Some(b'0'..=b'9')) {
            return Ok(None);
        }
        self.pos = int_end;
        let text = &s[start..int_end];
        if text.len() <= 18 {
            let (neg, digits) = if text[0] == b'-' { (true, &text[1..]) } else { (false, text) };
            let mut n: i64 = 0;
            for &d in digits {
                n = n * 10 + (d - b'0') as i64;
            }
            return Ok(Some(Value::fixnum(if neg { -n } else { n })));
        }
        let big = integer::parse_int(text, 10, true).unwrap_or_default();
        Ok(Some(bignum::normalize(ctx, big)))
    }

    fn make_float(&mut self, ctx: &mut Ctx, text: &[u8]) -> Result<Value> {
        if self.decimal_class.is_nil() {
            // SAFETY: the text matched the number grammar, which is ASCII.
            let t = unsafe { std::str::from_utf8_unchecked(text) };
            let f: f64 = t.parse().unwrap_or(0.0);
            return Ok(float::new(ctx, f));
        }
        let (recv, mid) = match self.decimal {
            Some(d) => d,
            None => {
                let d = self.decimal_converter(ctx)?;
                self.decimal = Some(d);
                d
            }
        };
        let t = string::new_from_bytes(ctx, text);
        ctx.call(recv, mid, &[t])
    }

    /// json 2.6's choice: `decimal_class.try_convert`, else `.new`, else the Kernel
    /// method named after the class (`BigDecimal("1.5")`, `Rational("1.5")`).
    fn decimal_converter(&mut self, ctx: &mut Ctx) -> Result<(Value, crate::symbol::SymId)> {
        let dc = self.decimal_class;
        let try_convert = ctx.intern("try_convert");
        if ctx.respond_to(dc, try_convert, false) {
            return Ok((dc, try_convert));
        }
        if ctx.respond_to(dc, sym::NEW, false) {
            return Ok((dc, sym::NEW));
        }
        let name = ctx.call_str(dc, "name", &[])?;
        let name = if string::is_string(name) { string::to_rust_string_lossy(name) } else { String::new() };
        match name.rfind("::") {
            Some(i) => {
                let path = string::new_utf8(ctx, &name[..i]);
                let obj = ctx.c().object;
                let m = ctx.call_str(obj, "const_get", &[path])?;
                Ok((m, ctx.intern(&name[i + 2..])))
            }
            None => Ok((ctx.c().kernel, ctx.intern(&name))),
        }
    }

    /// A string at `self.pos` (an opening quote). `name`: an object key.
    fn parse_string(&mut self, ctx: &mut Ctx, name: bool) -> Result<Option<Value>> {
        let s = self.src;
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            let Some(&c) = s.get(i) else { return Ok(None) };
            match c {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    let Some(&n) = s.get(i + 1) else { return Ok(None) };
                    if n < 0x20 {
                        return Ok(None);
                    }
                    if n == b'u' {
                        if i + 6 > s.len() || !s[i + 2..i + 6].iter().all(u8::is_ascii_hexdigit) {
                            return Ok(None);
                        }
                        i += 6;
                    } else {
                        i += 2;
                    }
                }
                0..=0x1f => return Ok(None),
                _ => i += 1,
            }
        }
        let end = i;
        self.pos = end + 1;
        if name && !escaped && !self.symbolize_names && end - start <= KEY_CACHE_MAX_LEN {
            return Ok(Some(self.cached_key(ctx, &s[start..end])));
        }
        let bytes = if escaped { self.unescape(ctx, start, end)? } else { s[start..end].to_vec() };
        let mut v = string::new_with_enc(ctx, bytes, UTF_8);
        if name {
            if self.symbolize_names {
                return Ok(Some(string::intern(ctx, v)));
            }
            return Ok(Some(object::freeze(v)));
        }
        if self.create_additions && self.match_string.truthy() {
            v = self.match_string_class(ctx, v)?;
        }
        Ok(Some(v))
    }

    /// The frozen key String for `b`, shared with earlier keys of the same bytes.
    fn cached_key(&mut self, ctx: &mut Ctx, b: &[u8]) -> Value {
        let mut h: u32 = 0x811c_9dc5;
        for &c in b {
            h = (h ^ c as u32).wrapping_mul(0x0100_0193);
        }
        let slot = (h as usize) & (KEY_CACHE - 1);
        let cached = self.key_cache[slot];
        if !cached.is_nil() && string::bytes(cached) == b {
            return cached;
        }
        let k = object::freeze(string::new_with_enc(ctx, b.to_vec(), UTF_8));
        array::push(ctx, self.key_keep, k);
        self.key_cache[slot] = k;
        k
    }

    /// With `match_string`, the first class whose pattern matches creates the value.
    fn match_string_class(&mut self, ctx: &mut Ctx, v: Value) -> Result<Value> {
        let ms = self.match_string;
        if !hash::is_hash(ms) {
            return Ok(v);
        }
        let mut found = Value::NIL;
        for (re, klass) in hash::pairs(ms) {
            let creatable = ctx.call_str(klass, "json_creatable?", &[])?;
            if creatable.truthy() && ctx.call_str(re, "match", &[v])?.truthy() {
                found = klass;
                break;
            }
        }
        if found.is_nil() {
            return Ok(v);
        }
        ctx.call_str(found, "json_create", &[v])
    }

    /// The bytes of the string body `start..end` with escapes resolved (json 2.6's rules,
    /// surrogate arithmetic included).
    fn unescape(&self, ctx: &mut Ctx, start: usize, end: usize) -> Result<Vec<u8>> {
        let s = self.src;
        let mut out = Vec::with_capacity(end - start);
        let mut i = start;
        while i < end {
            let c = s[i];
            if c != b'\\' {
                out.push(c);
                i += 1;
                continue;
            }
            let e = s[i + 1];
            match e {
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'u' => {
                    let mut ch = hex4(&s[i + 2..i + 6]);
                    let mut next = i + 6;
                    let mut replaced = false;
                    if ch & 0xFC00 == 0xD800 {
                        // The next six bytes must hold the low half; json 2.6 consumes
                        // one byte past the escape either way.
                        if next + 6 > end {
                            let rest = &s[i..];
                            let rest = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
                            let mut msg = b"521: incomplete surrogate pair at '".to_vec();
                            msg.extend_from_slice(rest);
                            msg.push(b'\'');
                            return Err(error(ctx, "ParserError", &msg));
                        }
                        if s[next] == b'\\' && s[next + 1] == b'u' && s[next + 2..next + 6].iter().all(u8::is_ascii_hexdigit) {
                            let sur = hex4(&s[next + 2..next + 6]);
                            ch = ((ch & 0x3F) << 10) | ((((ch >> 6) & 0xF) + 1) << 16) | (sur & 0x3FF);
                            next += 6;
                        } else {
                            replaced = true;
                            next += 1;
                        }
                    }
                    if replaced {
                        out.push(b'?');
                    } else {
                        push_utf8(&mut out, ch);
                    }
                    i = next;
                    continue;
                }
                other => out.push(other),
            }
            i += 2;
        }
        Ok(out)
    }

    fn parse_array(&mut self, ctx: &mut Ctx, depth: i64) -> Result<Option<Value>> {
        if self.max_nesting != 0 && depth > self.max_nesting {
            return Err(error(ctx, "NestingError", format!("nesting of {depth} is too deep").as_bytes()));
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        let custom = self.array_class.truthy();
        let ary = if custom { ctx.call(self.array_class, sym::NEW, &[])? } else { array::new(ctx) };
        self.pos += 1;
        if let Err(at) = self.skip_ignore() {
            return Err(self.unexpected(ctx, 451, at));
        }
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Some(ary));
        }
        loop {
            let at = self.pos;
            let Some(v) = self.parse_value(ctx, depth)? else {
                return Err(self.unexpected(ctx, 451, at));
            };
            if custom {
                ctx.call_str(ary, "<<", &[v])?;
            } else {
                array::push(ctx, ary, v);
            }
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    if let Err(at) = self.skip_ignore() {
                        return Err(self.unexpected(ctx, 451, at));
                    }
                    if !matches!(self.peek(), Some(b'"' | b'[' | b'{' | b'-' | b'0'..=b'9' | b'n' | b't' | b'f' | b'N' | b'I')) {
                        return Err(self.unexpected(ctx, 451, self.pos));
                    }
                }
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Some(ary));
                }
                _ => return Err(self.unexpected(ctx, 451, self.pos)),
            }
        }
    }

    fn parse_object(&mut self, ctx: &mut Ctx, depth: i64) -> Result<Option<Value>> {
        if self.max_nesting != 0 && depth > self.max_nesting {
            return Err(error(ctx, "NestingError", format!("nesting of {depth} is too deep").as_bytes()));
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        let custom = self.object_class.truthy();
        let obj = if custom { ctx.call(self.object_class, sym::NEW, &[])? } else { hash::new(ctx) };
        self.pos += 1;
        if self.skip_ignore().is_err() {
            return Ok(None);
        }
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                if self.peek() != Some(b'"') {
                    return Ok(None);
                }
                let Some(key) = self.parse_string(ctx, true)? else { return Ok(None) };
                if self.skip_ignore().is_err() || self.peek() != Some(b':') {
                    return Ok(None);
                }
                self.pos += 1;
                let Some(v) = self.parse_value(ctx, depth)? else { return Ok(None) };
                if custom {
                    ctx.call_str(obj, "[]=", &[key, v])?;
                } else {
                    hash::insert_raw(ctx, obj, key, v)?;
                }
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if self.skip_ignore().is_err() {
                            return Ok(None);
                        }
                    }
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Ok(None),
                }
            }
        }
        if self.create_additions {
            return self.create_addition(ctx, obj, custom).map(Some);
        }
        Ok(Some(obj))
    }

    /// `JSON.deep_const_get(obj[create_id]).json_create(obj)` when the class is creatable.
    fn create_addition(&mut self, ctx: &mut Ctx, obj: Value, custom: bool) -> Result<Value> {
        let id = self.create_id;
        let name = if custom { ctx.call_str(obj, "[]", &[id])? } else { hash::lookup(ctx, obj, id)?.unwrap_or(Value::NIL) };
        if name.is_nil() {
            return Ok(obj);
        }
        let json = super::json_module(ctx);
        let klass = ctx.call_str(json, "deep_const_get", &[name])?;
        if ctx.call_str(klass, "json_creatable?", &[])?.truthy() {
            return ctx.call_str(klass, "json_create", &[obj]);
        }
        Ok(obj)
    }
}

fn hex4(h: &[u8]) -> u32 {
    h.iter().fold(0, |acc, &c| acc * 16 + (c as char).to_digit(16).unwrap_or(0))
}

/// UTF-8 bytes of `ch`, surrogates included (json 2.6 does not check them).
fn push_utf8(out: &mut Vec<u8>, ch: u32) {
    if ch < 0x80 {
        out.push(ch as u8);
    } else if ch < 0x800 {
        out.extend_from_slice(&[0xC0 | (ch >> 6) as u8, 0x80 | (ch & 0x3F) as u8]);
    } else if ch < 0x10000 {
        out.extend_from_slice(&[0xE0 | (ch >> 12) as u8, 0x80 | ((ch >> 6) & 0x3F) as u8, 0x80 | (ch & 0x3F) as u8]);
    } else {
        out.extend_from_slice(&[0xF0 | ((ch >> 18) & 0x7) as u8, 0x80 | ((ch >> 12) & 0x3F) as u8, 0x80 | ((ch >> 6) & 0x3F) as u8, 0x80 | (ch & 0x3F) as u8]);
    }
}

pub fn init(ctx: &mut Ctx) {
    let json = super::json_module(ctx);
    let ext = super::module_under(ctx, json, "Ext");
    let obj = ctx.c().object;
    let parser = super::class_under(ctx, ext, "Parser", obj);
    body(parser).alloc = AllocKind::Data(alloc);
    crate::methods!(ctx, parser, [
        ("initialize", initialize, [1..=2], Unsafe, Private, Kw),
        ("parse", parse, [0], Unsafe),
        ("source", source, [0], Safe),
    ]);
}
