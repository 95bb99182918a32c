//! `Psych::Parser#parse(yaml, path = nil)` and `#mark`: libyaml's event parser driving a
//! Ruby handler (`Psych::Handler`'s protocol).
//!
//! Invariants:
//! - The libyaml parser and the input bytes it reads live in this call's Rust frame and
//!   are freed on every exit (a handler's exception included) by `ParserGuard`. An IO is
//!   read with `read(size)` while parsing, so events arrive before the end of the input.
//! - Before each event the handler gets `event_location(start_line, start_column,
//!   end_line, end_column)` (0-based), then the event method with CRuby's arguments:
//!   strings are new UTF-8 Strings, absent anchors and tags are nil, styles are Integers.
//! - A Parser object's payload only records where the last event ended, for `#mark`.
//! - A libyaml failure raises `Psych::SyntaxError.new(path, line, column, offset, problem,
//!   context)` with the context mark's 1-based line and column, as CRuby's psych does.

use std::cell::Cell;
use std::mem::MaybeUninit;

use super::{class_under, psych_const};
use crate::core::module::{body, AllocKind};
use crate::core::{array, encoding, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A Parser object's payload: where the last event ended (libyaml keeps its scanner's own
/// position private).
#[derive(Default)]
struct ParserObj {
    mark: Cell<(u64, u64, u64)>,
}

crate::data_obj!(ParserObj);

fn alloc_parser(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    Ok(object::new_data(ctx, klass, Box::new(ParserObj::default())))
}

/// Where the parser reads: a copy of a String's bytes, or an IO-like object read with
/// `read(size)` as libyaml asks for more.
enum Input {
    Bytes(Vec<u8>),
    Io(Value),
}

/// What the read handler needs while one `yaml_parser_parse` runs: the `Ctx` (set only
/// for that call) and the IO; an exception from `read` waits in `pending`.
struct ReadState {
    ctx: *mut Ctx,
    io: Value,
    pending: Option<Unwind>,
}

/// libyaml's read handler for IO input: `io.read(size)`, nil or "" at the end.
///
/// SAFETY (caller): `data` is the `ReadState` of a live `ParserGuard` whose `ctx` was set
/// for the current parse call, and `buffer` has room for `size` bytes.
unsafe fn read_handler(
    data: *mut std::ffi::c_void,
    buffer: *mut u8,
    size: u64,
    size_read: *mut u64,
) -> i32 {
    let st = &mut *(data as *mut ReadState);
    *size_read = 0;
    if st.ctx.is_null() {
        return 0;
    }
    let ctx = &mut *st.ctx;
    let chunk = match ctx.call_str(st.io, "read", &[Value::fixnum(size as i64)]) {
        Ok(c) => c,
        Err(u) => {
            st.pending = Some(u);
            return 0;
        }
    };
    if chunk.is_nil() {
        return 1;
    }
    let chunk = match string::to_str_arg(ctx, chunk) {
        Ok(c) => c,
        Err(u) => {
            st.pending = Some(u);
            return 0;
        }
    };
    let bytes = string::bytes(chunk);
    let n = bytes.len().min(size as usize);
    std::ptr::copy_nonoverlapping(bytes.as_ptr(), buffer, n);
    *size_read = n as u64;
    1
}

/// An initialized libyaml parser, deleted when dropped; its input outlives it.
struct ParserGuard {
    parser: Box<MaybeUninit<unsafe_libyaml::yaml_parser_t>>,
    bytes: Vec<u8>,
    reader: Box<ReadState>,
}

impl ParserGuard {
    fn new(input: Input, enc: unsafe_libyaml::yaml_encoding_t) -> Option<ParserGuard> {
        let (bytes, io) = match input {
            Input::Bytes(b) => (b, None),
            Input::Io(io) => (Vec::new(), Some(io)),
        };
        let reader = Box::new(ReadState {
            ctx: std::ptr::null_mut(),
            io: io.unwrap_or(Value::NIL),
            pending: None,
        });
        let mut g = ParserGuard {
            parser: Box::new(MaybeUninit::uninit()),
            bytes,
            reader,
        };
        let p = g.parser.as_mut_ptr();
        // SAFETY: `p` points to writable memory the size of a parser; initialize fills it.
        if unsafe { unsafe_libyaml::yaml_parser_initialize(p) }.fail {
            return None;
        }
        // SAFETY: `p` is initialized; the bytes and the ReadState are owned by the guard
        // (their heap buffers do not move with it), so they stay valid as long as the
        // parser.
        unsafe {
            unsafe_libyaml::yaml_parser_set_encoding(p, enc);
            if io.is_some() {
                let data = &mut *g.reader as *mut ReadState as *mut std::ffi::c_void;
                unsafe_libyaml::yaml_parser_set_input(p, read_handler, data);
            } else {
                let bytes = &g.bytes;
                unsafe_libyaml::yaml_parser_set_input_string(p, bytes.as_ptr(), bytes.len() as u64);
            }
        }
        Some(g)
    }

    fn ptr(&mut self) -> *mut unsafe_libyaml::yaml_parser_t {
        self.parser.as_mut_ptr()
    }
}

impl Drop for ParserGuard {
    fn drop(&mut self) {
        // SAFETY: the parser was initialized in `new` (a guard exists only then).
        unsafe { unsafe_libyaml::yaml_parser_delete(self.parser.as_mut_ptr()) }
    }
}

/// One parsed event, deleted when dropped.
struct EventGuard(MaybeUninit<unsafe_libyaml::yaml_event_t>);

impl Drop for EventGuard {
    fn drop(&mut self) {
        // SAFETY: an EventGuard is kept only after yaml_parser_parse filled the event.
        unsafe { unsafe_libyaml::yaml_event_delete(self.0.as_mut_ptr()) }
    }
}

/// A UTF-8 String of the NUL-terminated libyaml string `p`, nil for a null pointer.
fn cstr_value(ctx: &mut Ctx, p: *const u8) -> Value {
    if p.is_null() {
        return Value::NIL;
    }
    // SAFETY: libyaml's event strings are NUL-terminated and live as long as the event.
    let bytes = unsafe { std::ffi::CStr::from_ptr(p as *const std::ffi::c_char) }.to_bytes();
    string::new_with_enc(ctx, bytes.to_vec(), encoding::UTF_8)
}

fn encoding_number(e: unsafe_libyaml::yaml_encoding_t) -> i64 {
    match e {
        unsafe_libyaml::YAML_UTF8_ENCODING => 1,
        unsafe_libyaml::YAML_UTF16LE_ENCODING => 2,
        unsafe_libyaml::YAML_UTF16BE_ENCODING => 3,
        _ => 0,
    }
}

fn scalar_style_number(s: unsafe_libyaml::yaml_scalar_style_t) -> i64 {
    match s {
        unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE => 1,
        unsafe_libyaml::YAML_SINGLE_QUOTED_SCALAR_STYLE => 2,
        unsafe_libyaml::YAML_DOUBLE_QUOTED_SCALAR_STYLE => 3,
        unsafe_libyaml::YAML_LITERAL_SCALAR_STYLE => 4,
        unsafe_libyaml::YAML_FOLDED_SCALAR_STYLE => 5,
        _ => 0,
    }
}

fn sequence_style_number(s: unsafe_libyaml::yaml_sequence_style_t) -> i64 {
    match s {
        unsafe_libyaml::YAML_BLOCK_SEQUENCE_STYLE => 1,
        unsafe_libyaml::YAML_FLOW_SEQUENCE_STYLE => 2,
        _ => 0,
    }
}

fn mapping_style_number(s: unsafe_libyaml::yaml_mapping_style_t) -> i64 {
    match s {
        unsafe_libyaml::YAML_BLOCK_MAPPING_STYLE => 1,
        unsafe_libyaml::YAML_FLOW_MAPPING_STYLE => 2,
        _ => 0,
    }
}

/// The input and the encoding libyaml is told it has: UTF-8 and UTF-16 strings as they
/// are, other strings converted to UTF-8 when they can be (else their bytes, left to
/// libyaml's detection); an object with `read` (not a String) is read as libyaml asks.
fn input_of(ctx: &mut Ctx, yaml_src: Value) -> Result<(Input, unsafe_libyaml::yaml_encoding_t)> {
    let read = ctx.intern("read");
    if !string::is_string(yaml_src) && ctx.respond_to(yaml_src, read, false) {
        // The IO's external encoding says how to read it, as in CRuby's psych: US-ASCII
        // counts as UTF-8; anything but UTF-8 and UTF-16 is left to libyaml's detection.
        let ext = ctx.call_str(yaml_src, "external_encoding", &[])?;
        let name = if ext.is_nil() {
            String::new()
        } else {
            string::to_rust_string_lossy(string::to_s(ctx, ext)?)
        };
        let enc = match name.as_str() {
            "UTF-8" | "US-ASCII" => unsafe_libyaml::YAML_UTF8_ENCODING,
            "UTF-16LE" => unsafe_libyaml::YAML_UTF16LE_ENCODING,
            "UTF-16BE" => unsafe_libyaml::YAML_UTF16BE_ENCODING,
            _ => unsafe_libyaml::YAML_ANY_ENCODING,
        };
        return Ok((Input::Io(yaml_src), enc));
    }
    let src = string::to_str_arg(ctx, yaml_src)?;
    let (bytes, enc) = string_input(ctx, src)?;
    Ok((Input::Bytes(bytes), enc))
}

fn string_input(ctx: &mut Ctx, src: Value) -> Result<(Vec<u8>, unsafe_libyaml::yaml_encoding_t)> {
    let enc = string::encoding(src);
    match encoding::name(enc) {
        "UTF-8" => {
            return Ok((
                string::bytes(src).to_vec(),
                unsafe_libyaml::YAML_UTF8_ENCODING,
            ))
        }
        "UTF-16LE" => {
            return Ok((
                string::bytes(src).to_vec(),
                unsafe_libyaml::YAML_UTF16LE_ENCODING,
            ))
        }
        "UTF-16BE" => {
            return Ok((
                string::bytes(src).to_vec(),
                unsafe_libyaml::YAML_UTF16BE_ENCODING,
            ))
        }
        _ => {}
    }
    if enc != encoding::BINARY && enc != encoding::US_ASCII {
        let utf8 = string::new_utf8(ctx, "UTF-8");
        let m = ctx.protect(src);
        let converted = ctx.call_str(src, "encode", &[utf8]);
        ctx.unprotect(m);
        if let Ok(c) = converted {
            if string::is_string(c) {
                return Ok((string::bytes(c).to_vec(), unsafe_libyaml::YAML_ANY_ENCODING));
            }
        }
    }
    Ok((
        string::bytes(src).to_vec(),
        unsafe_libyaml::YAML_ANY_ENCODING,
    ))
}

/// `Psych::SyntaxError` for the parser's failure.
fn syntax_error(ctx: &mut Ctx, p: *mut unsafe_libyaml::yaml_parser_t, path: Value) -> Unwind {
    // SAFETY: `p` is an initialized parser whose last call failed; its problem and context
    // are static C strings or null.
    let r: &unsafe_libyaml::yaml_parser_t = unsafe { &*p };
    let (line, column, offset, problem, context) = (
        r.context_mark.line + 1,
        r.context_mark.column + 1,
        r.problem_offset,
        r.problem,
        r.context,
    );
    let problem = cstr_value(ctx, problem as *const u8);
    let context = cstr_value(ctx, context as *const u8);
    let k = psych_const(ctx, "SyntaxError");
    let args = [
        path,
        Value::fixnum(line as i64),
        Value::fixnum(column as i64),
        Value::fixnum(offset as i64),
        problem,
        context,
    ];
    match ctx.call_str(k, "new", &args) {
        Ok(e) => {
            crate::core::exception::capture_backtrace(ctx, e);
            Unwind::Raise(e)
        }
        Err(u) => u,
    }
}

fn bool_value(b: bool) -> Value {
    Value::bool(b)
}

/// The handler's event methods, interned once per parse.
struct Events {
    start_stream: SymId,
    start_document: SymId,
    end_document: SymId,
    alias: SymId,
    scalar: SymId,
    start_sequence: SymId,
    end_sequence: SymId,
    start_mapping: SymId,
    end_mapping: SymId,
    end_stream: SymId,
    empty: SymId,
    event_location: SymId,
}

impl Events {
    fn new(ctx: &Ctx) -> Events {
        Events {
            start_stream: ctx.intern("start_stream"),
            start_document: ctx.intern("start_document"),
            end_document: ctx.intern("end_document"),
            alias: ctx.intern("alias"),
            scalar: ctx.intern("scalar"),
            start_sequence: ctx.intern("start_sequence"),
            end_sequence: ctx.intern("end_sequence"),
            start_mapping: ctx.intern("start_mapping"),
            end_mapping: ctx.intern("end_mapping"),
            end_stream: ctx.intern("end_stream"),
            empty: ctx.intern("empty"),
            event_location: ctx.intern("event_location"),
        }
    }
}

/// Calls the handler method for `ev` (already past `event_location`); true at stream end.
fn deliver(
    ctx: &mut Ctx,
    handler: Value,
    ev_ids: &Events,
    ev: &unsafe_libyaml::yaml_event_t,
) -> Result<bool> {
    // SAFETY (each union read below): `type_` says which member of `data` libyaml filled.
    match ev.type_ {
        unsafe_libyaml::YAML_STREAM_START_EVENT => {
            let enc = encoding_number(unsafe { ev.data.stream_start.encoding });
            ctx.call(handler, ev_ids.start_stream, &[Value::fixnum(enc)])?;
        }
        unsafe_libyaml::YAML_DOCUMENT_START_EVENT => {
            let d = unsafe { ev.data.document_start };
            let version = array::new(ctx);
            if !d.version_directive.is_null() {
                // SAFETY: non-null version directives point into the event.
                let v = unsafe { *d.version_directive };
                array::push(ctx, version, Value::fixnum(v.major as i64));
                array::push(ctx, version, Value::fixnum(v.minor as i64));
            }
            let tags = array::new(ctx);
            let mut t = d.tag_directives.start;
            while !t.is_null() && t < d.tag_directives.end {
                // SAFETY: `t` walks the event's tag directive array, start..end.
                let td = unsafe { *t };
                let handle = cstr_value(ctx, td.handle);
                let m = ctx.protect(handle);
                let prefix = cstr_value(ctx, td.prefix);
                let pair = array::from_slice(ctx, &[handle, prefix]);
                ctx.unprotect(m);
                array::push(ctx, tags, pair);
                // SAFETY: still within start..end after the bound check above.
                t = unsafe { t.add(1) };
            }
            ctx.call(
                handler,
                ev_ids.start_document,
                &[version, tags, bool_value(d.implicit)],
            )?;
        }
        unsafe_libyaml::YAML_DOCUMENT_END_EVENT => {
            let imp = unsafe { ev.data.document_end.implicit };
            ctx.call(handler, ev_ids.end_document, &[bool_value(imp)])?;
        }
        unsafe_libyaml::YAML_ALIAS_EVENT => {
            let anchor = cstr_value(ctx, unsafe { ev.data.alias.anchor });
            ctx.call(handler, ev_ids.alias, &[anchor])?;
        }
        unsafe_libyaml::YAML_SCALAR_EVENT => {
            let s = unsafe { ev.data.scalar };
            // SAFETY: `value` holds `length` bytes (it may contain NULs).
            let bytes = unsafe { std::slice::from_raw_parts(s.value, s.length as usize) }.to_vec();
            let value = string::new_with_enc(ctx, bytes, encoding::UTF_8);
            let m = ctx.protect(value);
            let anchor = cstr_value(ctx, s.anchor);
            ctx.protect(anchor);
            let tag = cstr_value(ctx, s.tag);
            ctx.protect(tag);
            let args = [
                value,
                anchor,
                tag,
                bool_value(s.plain_implicit),
                bool_value(s.quoted_implicit),
                Value::fixnum(scalar_style_number(s.style)),
            ];
            let r = ctx.call(handler, ev_ids.scalar, &args);
            ctx.unprotect(m);
            r?;
        }
        unsafe_libyaml::YAML_SEQUENCE_START_EVENT => {
            let s = unsafe { ev.data.sequence_start };
            let anchor = cstr_value(ctx, s.anchor);
            let m = ctx.protect(anchor);
            let tag = cstr_value(ctx, s.tag);
            ctx.protect(tag);
            let args = [
                anchor,
                tag,
                bool_value(s.implicit),
                Value::fixnum(sequence_style_number(s.style)),
            ];
            let r = ctx.call(handler, ev_ids.start_sequence, &args);
            ctx.unprotect(m);
            r?;
        }
        unsafe_libyaml::YAML_SEQUENCE_END_EVENT => {
            ctx.call(handler, ev_ids.end_sequence, &[])?;
        }
        unsafe_libyaml::YAML_MAPPING_START_EVENT => {
            let s = unsafe { ev.data.mapping_start };
            let anchor = cstr_value(ctx, s.anchor);
            let m = ctx.protect(anchor);
            let tag = cstr_value(ctx, s.tag);
            ctx.protect(tag);
            let args = [
                anchor,
                tag,
                bool_value(s.implicit),
                Value::fixnum(mapping_style_number(s.style)),
            ];
            let r = ctx.call(handler, ev_ids.start_mapping, &args);
            ctx.unprotect(m);
            r?;
        }
        unsafe_libyaml::YAML_MAPPING_END_EVENT => {
            ctx.call(handler, ev_ids.end_mapping, &[])?;
        }
        unsafe_libyaml::YAML_STREAM_END_EVENT => {
            ctx.call(handler, ev_ids.end_stream, &[])?;
            return Ok(true);
        }
        _ => {
            ctx.call(handler, ev_ids.empty, &[])?;
        }
    }
    Ok(false)
}

/// `Parser#parse(yaml, path = yaml.path or "<unknown>")`: feeds every event of `yaml` (a
/// String or an object with `read`) to the handler; returns self.
fn parse(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = args.get(0);
    let path = if args.len() > 1 {
        args.get(1)
    } else {
        let pid = ctx.intern("path");
        if !string::is_string(src) && ctx.respond_to(src, pid, false) {
            ctx.call(src, pid, &[])?
        } else {
            string::new_utf8(ctx, "<unknown>")
        }
    };
    let pm = ctx.protect(path);
    let r = run(ctx, recv, src, path);
    ctx.unprotect(pm);
    r?;
    Ok(recv)
}

fn run(ctx: &mut Ctx, recv: Value, src: Value, path: Value) -> Result<()> {
    let hid = ctx.intern("@handler");
    let handler = object::ivar_get(ctx, recv, hid);
    let (input, enc) = input_of(ctx, src)?;
    let Some(mut guard) = ParserGuard::new(input, enc) else {
        return Err(ctx.raise(ctx.c().no_memory_error, "failed to allocate memory"));
    };
    let p = guard.ptr();
    let ev_ids = Events::new(ctx);
    loop {
        let mut ev = EventGuard(MaybeUninit::uninit());
        guard.reader.ctx = ctx as *mut Ctx;
        // SAFETY: `p` is an initialized parser and `ev` writable event storage; the read
        // handler's Ctx is set for exactly this call.
        let failed = unsafe { unsafe_libyaml::yaml_parser_parse(p, ev.0.as_mut_ptr()) }.fail;
        guard.reader.ctx = std::ptr::null_mut();
        if let Some(u) = guard.reader.pending.take() {
            std::mem::forget(ev);
            return Err(u);
        }
        if failed {
            std::mem::forget(ev);
            return Err(syntax_error(ctx, p, path));
        }
        // SAFETY: parse succeeded, so the event is initialized.
        let e = unsafe { ev.0.assume_init_ref() };
        let mark = e.end_mark;
        if let Some(o) = crate::object::data_ref::<ParserObj>(recv) {
            o.mark.set((mark.index, mark.line, mark.column));
        }
        let loc = [
            Value::fixnum(e.start_mark.line as i64),
            Value::fixnum(e.start_mark.column as i64),
            Value::fixnum(e.end_mark.line as i64),
            Value::fixnum(e.end_mark.column as i64),
        ];
        ctx.call(handler, ev_ids.event_location, &loc)?;
        if deliver(ctx, handler, &ev_ids, e)? {
            return Ok(());
        }
    }
}

/// `Parser#mark`: a `Psych::Parser::Mark` (index, line, column) of the scanner position.
fn mark(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (index, line, column) =
        crate::object::data_ref::<ParserObj>(recv).map_or((0, 0, 0), |o| o.mark.get());
    let parser = psych_const(ctx, "Parser");
    let id = ctx.intern("Mark");
    let k = body(parser).const_get(id).map_or(Value::NIL, |e| e.value);
    ctx.call_str(
        k,
        "new",
        &[
            Value::fixnum(index as i64),
            Value::fixnum(line as i64),
            Value::fixnum(column as i64),
        ],
    )
}

pub fn init(ctx: &mut Ctx, psych: Value) {
    let obj = ctx.c().object;
    let parser = class_under(ctx, psych, "Parser", obj);
    body(parser).alloc = AllocKind::Data(alloc_parser);
    for (name, v) in [("ANY", 0), ("UTF8", 1), ("UTF16LE", 2), ("UTF16BE", 3)] {
        let id = ctx.intern(name);
        body(parser).const_set(id, Value::fixnum(v));
    }
    crate::methods!(
        ctx,
        parser,
        [
            ("parse", parse, [1..=2], Unsafe),
            ("mark", mark, [0], Unsafe),
        ]
    );
}
