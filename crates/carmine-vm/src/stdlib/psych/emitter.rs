//! `Psych::Emitter` (< `Psych::Handler`): the handler protocol's events printed as YAML by
//! libyaml's emitter, written to `@io` with `io.write(string)`.
//!
//! Invariants:
//! - Each Emitter object owns one initialized libyaml emitter (unicode on, indent 2) in a
//!   stable heap allocation, deleted when the object is freed; the object never moves
//!   (non-moving GC), so the emitter's output handler may point at the payload.
//! - libyaml calls the output handler only inside `yaml_emitter_emit`; `emit` stores the
//!   current `Ctx` and receiver in the payload for exactly that call, and the handler's Ruby
//!   exception (from `io.write`) is carried back through `pending` and re-raised.
//! - Event strings are copied to NUL-terminated UTF-8 buffers; libyaml copies them again
//!   into the event, so no Ruby string is referenced after a method returns.
//! - A libyaml failure raises RuntimeError with libyaml's problem text, as CRuby's psych.

use std::mem::MaybeUninit;

use super::class_under;
use crate::core::module::{body, AllocKind};
use crate::core::{array, encoding, integer, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The state the output handler needs while one `emit` runs.
struct WriteState {
    ctx: *mut Ctx,
    emitter_obj: Value,
    pending: Option<Unwind>,
}

struct EmitterObj {
    emitter: Box<MaybeUninit<unsafe_libyaml::yaml_emitter_t>>,
    write: Box<WriteState>,
    /// The settings as libyaml's setters store them (its fields are private).
    canonical: bool,
    indent: i32,
    width: i32,
}

impl EmitterObj {
    fn set_indent(&mut self, n: i32) {
        self.indent = if 1 < n && n < 10 { n } else { 2 };
        // SAFETY: the payload's emitter is initialized.
        unsafe { unsafe_libyaml::yaml_emitter_set_indent(self.emitter.as_mut_ptr(), n) };
    }

    fn set_width(&mut self, n: i32) {
        self.width = if n >= 0 { n } else { -1 };
        // SAFETY: the payload's emitter is initialized.
        unsafe { unsafe_libyaml::yaml_emitter_set_width(self.emitter.as_mut_ptr(), n) };
    }

    fn set_canonical(&mut self, b: bool) {
        self.canonical = b;
        // SAFETY: the payload's emitter is initialized.
        unsafe { unsafe_libyaml::yaml_emitter_set_canonical(self.emitter.as_mut_ptr(), b) };
    }
}

crate::data_obj!(EmitterObj);

impl Drop for EmitterObj {
    fn drop(&mut self) {
        // SAFETY: the emitter was initialized when the payload was made (`alloc_emitter`).
        unsafe { unsafe_libyaml::yaml_emitter_delete(self.emitter.as_mut_ptr()) }
    }
}

/// libyaml's output handler: `@io.write(chunk)` on the emitter object being driven.
///
/// SAFETY (caller): `data` is the `WriteState` of a live EmitterObj whose `ctx` was set
/// by `emit` for the current call, and `buffer` holds `size` bytes.
unsafe fn write_handler(data: *mut std::ffi::c_void, buffer: *mut u8, size: u64) -> i32 {
    let st = &mut *(data as *mut WriteState);
    if st.ctx.is_null() {
        return 0;
    }
    let ctx = &mut *st.ctx;
    let bytes = std::slice::from_raw_parts(buffer, size as usize).to_vec();
    let chunk = string::new_with_enc(ctx, bytes, encoding::UTF_8);
    let id = ctx.intern("@io");
    let io = object::ivar_get(ctx, st.emitter_obj, id);
    match ctx.call_str(io, "write", &[chunk]) {
        Ok(_) => 1,
        Err(u) => {
            st.pending = Some(u);
            0
        }
    }
}

fn alloc_emitter(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let mut emitter = Box::new(MaybeUninit::<unsafe_libyaml::yaml_emitter_t>::uninit());
    let mut write = Box::new(WriteState {
        ctx: std::ptr::null_mut(),
        emitter_obj: Value::NIL,
        pending: None,
    });
    let e = emitter.as_mut_ptr();
    // SAFETY: `e` points to writable storage for an emitter; after a successful initialize
    // the setters act on an initialized emitter. The WriteState box outlives the emitter
    // (both are dropped together with the payload, the emitter first by `Drop`).
    unsafe {
        if unsafe_libyaml::yaml_emitter_initialize(e).fail {
            return Err(ctx.no_memory_error());
        }
        unsafe_libyaml::yaml_emitter_set_unicode(e, true);
        unsafe_libyaml::yaml_emitter_set_indent(e, 2);
        unsafe_libyaml::yaml_emitter_set_output(
            e,
            write_handler,
            &mut *write as *mut WriteState as *mut std::ffi::c_void,
        );
    }
    Ok(object::new_data(
        ctx,
        klass,
        Box::new(EmitterObj {
            emitter,
            write,
            canonical: false,
            indent: 2,
            width: 0,
        }),
    ))
}

fn emitter_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut EmitterObj> {
    match crate::object::data_ref::<EmitterObj>(v) {
        Some(o) => Ok(o),
        None => Err(ctx.type_error("wrong argument type (expected Psych::Emitter)")),
    }
}

/// Emits the event `init` builds (`init` returns libyaml's success); returns `recv`.
fn emit(
    ctx: &mut Ctx,
    recv: Value,
    init: impl FnOnce(*mut unsafe_libyaml::yaml_event_t) -> bool,
) -> Result<Value> {
    let o = emitter_of(ctx, recv)?;
    let mut ev = MaybeUninit::<unsafe_libyaml::yaml_event_t>::uninit();
    if !init(ev.as_mut_ptr()) {
        return Err(ctx.runtime_error("invalid event (strings must be UTF-8)"));
    }
    o.write.ctx = ctx as *mut Ctx;
    o.write.emitter_obj = recv;
    // SAFETY: the emitter is initialized and `ev` was initialized by `init`; emit takes
    // ownership of the event's memory in every case.
    let failed =
        unsafe { unsafe_libyaml::yaml_emitter_emit(o.emitter.as_mut_ptr(), ev.as_mut_ptr()) }.fail;
    o.write.ctx = std::ptr::null_mut();
    if let Some(u) = o.write.pending.take() {
        return Err(u);
    }
    if failed {
        // SAFETY: after a failure the emitter's problem is a static C string or null.
        let problem = unsafe { o.emitter.assume_init_ref() }.problem;
        let msg = if problem.is_null() {
            String::from("emitter error")
        } else {
            // SAFETY: non-null problem strings are NUL-terminated literals.
            unsafe { std::ffi::CStr::from_ptr(problem) }
                .to_string_lossy()
                .into_owned()
        };
        return Err(ctx.runtime_error(&msg));
    }
    Ok(recv)
}

/// The NUL-terminated UTF-8 bytes of a String argument (CRuby's `Check_Type` then export
/// to UTF-8); None for nil when `nil_ok`.
fn utf8_arg(ctx: &mut Ctx, v: Value, nil_ok: bool) -> Result<Option<Vec<u8>>> {
    if v.is_nil() && nil_ok {
        return Ok(None);
    }
    if !string::is_string(v) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
    }
    let enc = string::encoding(v);
    let mut bytes =
        if enc == encoding::UTF_8 || enc == encoding::BINARY || enc == encoding::US_ASCII {
            string::bytes(v).to_vec()
        } else {
            let utf8 = string::new_utf8(ctx, "UTF-8");
            match ctx.call_str(v, "encode", &[utf8]) {
                Ok(c) if string::is_string(c) => string::bytes(c).to_vec(),
                _ => string::bytes(v).to_vec(),
            }
        };
    bytes.push(0);
    Ok(Some(bytes))
}

fn opt_ptr(b: &Option<Vec<u8>>) -> *const u8 {
    b.as_ref().map_or(std::ptr::null(), |v| v.as_ptr())
}

fn encoding_arg(n: i32) -> unsafe_libyaml::yaml_encoding_t {
    match n {
        1 => unsafe_libyaml::YAML_UTF8_ENCODING,
        2 => unsafe_libyaml::YAML_UTF16LE_ENCODING,
        3 => unsafe_libyaml::YAML_UTF16BE_ENCODING,
        _ => unsafe_libyaml::YAML_ANY_ENCODING,
    }
}

/// `Emitter#initialize(io, options = nil)`: options answer `line_width`, `indentation`
/// and `canonical` (a `Psych::Handler::DumperOptions`).
fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let io = args.get(0);
    if args.len() > 1 {
        let opts = args.get(1);
        let lw = ctx.call_str(opts, "line_width", &[])?;
        let width = integer::to_int_arg(ctx, lw)?;
        let ind = ctx.call_str(opts, "indentation", &[])?;
        let indent = integer::to_int_arg(ctx, ind)?;
        let canonical = ctx.call_str(opts, "canonical", &[])? == Value::TRUE;
        let o = emitter_of(ctx, recv)?;
        o.set_width(width);
        o.set_indent(indent);
        o.set_canonical(canonical);
    }
    let id = ctx.intern("@io");
    object::ivar_set_raw(ctx, recv, id, io);
    Ok(recv)
}

fn start_stream(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_int_arg(ctx, args.get(0))?;
    let enc = encoding_arg(n);
    // SAFETY: `ev` is event storage handed over by `emit`.
    emit(
        ctx,
        recv,
        |ev| unsafe { unsafe_libyaml::yaml_stream_start_event_initialize(ev, enc) }.ok,
    )
}

fn end_stream(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: as in `start_stream`.
    emit(
        ctx,
        recv,
        |ev| unsafe { unsafe_libyaml::yaml_stream_end_event_initialize(ev) }.ok,
    )
}

/// `start_document(version, tag_directives, implicit)`: version is `[]` or
/// `[major, minor]`, tag directives `[[handle, prefix], …]` or nil.
fn start_document(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (version, tags, imp) = (args.get(0), args.get(1), args.get(2).truthy());
    if !array::is_array(version) {
        let cname = object::class_name_of(ctx, version);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Array)")));
    }
    let mut vd = None;
    if array::len(version) > 0 {
        let major = integer::to_int_arg(ctx, array::get(version, 0))?;
        let minor = integer::to_int_arg(
            ctx,
            if array::len(version) > 1 {
                array::get(version, 1)
            } else {
                Value::NIL
            },
        )?;
        vd = Some((major, minor));
    }
    let mut strings: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    if tags.truthy() {
        if !array::is_array(tags) {
            let cname = object::class_name_of(ctx, tags);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Array)")));
        }
        for t in array::to_vec(tags) {
            if !array::is_array(t) {
                let cname = object::class_name_of(ctx, t);
                return Err(
                    ctx.type_error(&format!("wrong argument type {cname} (expected Array)"))
                );
            }
            if array::len(t) < 2 {
                return Err(ctx.runtime_error("tag tuple must be of length 2"));
            }
            let h = string::to_str_arg(ctx, array::get(t, 0))?;
            let p = string::to_str_arg(ctx, array::get(t, 1))?;
            let h = utf8_arg(ctx, h, false)?.unwrap_or_default();
            let p = utf8_arg(ctx, p, false)?.unwrap_or_default();
            strings.push((h, p));
        }
    }
    let mut directives: Vec<unsafe_libyaml::yaml_tag_directive_t> =
        Vec::with_capacity(strings.len());
    for (h, p) in &strings {
        // SAFETY: the directive struct is plain pointers; zeroed then filled.
        let mut d: unsafe_libyaml::yaml_tag_directive_t = unsafe { std::mem::zeroed() };
        d.handle = h.as_ptr() as *mut u8;
        d.prefix = p.as_ptr() as *mut u8;
        directives.push(d);
    }
    emit(ctx, recv, |ev| {
        // SAFETY: the version and tag directive pointers are valid for this call (libyaml
        // copies them into the event); start..end bounds the directive array.
        unsafe {
            let mut v: unsafe_libyaml::yaml_version_directive_t = std::mem::zeroed();
            let vp = match vd {
                Some((major, minor)) => {
                    v.major = major;
                    v.minor = minor;
                    &mut v as *mut unsafe_libyaml::yaml_version_directive_t
                }
                None => std::ptr::null_mut(),
            };
            let (start, end) = if directives.is_empty() {
                (std::ptr::null_mut(), std::ptr::null_mut())
            } else {
                let s = directives.as_mut_ptr();
                (s, s.add(directives.len()))
            };
            unsafe_libyaml::yaml_document_start_event_initialize(ev, vp, start, end, imp).ok
        }
    })
}

fn end_document(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let imp = args.get(0).truthy();
    // SAFETY: as in `start_stream`.
    emit(
        ctx,
        recv,
        |ev| unsafe { unsafe_libyaml::yaml_document_end_event_initialize(ev, imp) }.ok,
    )
}

fn scalar_style(n: i32) -> unsafe_libyaml::yaml_scalar_style_t {
    match n {
        1 => unsafe_libyaml::YAML_PLAIN_SCALAR_STYLE,
        2 => unsafe_libyaml::YAML_SINGLE_QUOTED_SCALAR_STYLE,
        3 => unsafe_libyaml::YAML_DOUBLE_QUOTED_SCALAR_STYLE,
        4 => unsafe_libyaml::YAML_LITERAL_SCALAR_STYLE,
        5 => unsafe_libyaml::YAML_FOLDED_SCALAR_STYLE,
        _ => unsafe_libyaml::YAML_ANY_SCALAR_STYLE,
    }
}

/// `scalar(value, anchor, tag, plain, quoted, style)`.
fn scalar(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let value = utf8_arg(ctx, args.get(0), false)?.unwrap_or_default();
    let anchor = utf8_arg(ctx, args.get(1), true)?;
    let tag = utf8_arg(ctx, args.get(2), true)?;
    let (plain, quoted) = (args.get(3).truthy(), args.get(4).truthy());
    let style = scalar_style(integer::to_int_arg(ctx, args.get(5))?);
    let len = (value.len() - 1) as i32;
    // SAFETY: the strings are NUL-terminated (value also carries its length) and live
    // across the call; libyaml copies them.
    emit(ctx, recv, |ev| unsafe {
        unsafe_libyaml::yaml_scalar_event_initialize(
            ev,
            opt_ptr(&anchor),
            opt_ptr(&tag),
            value.as_ptr(),
            len,
            plain,
            quoted,
            style,
        )
        .ok
    })
}

/// `start_sequence(anchor, tag, implicit, style)`.
fn start_sequence(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let anchor = utf8_arg(ctx, args.get(0), true)?;
    let tag = utf8_arg(ctx, args.get(1), true)?;
    let imp = args.get(2).truthy();
    let style = match integer::to_int_arg(ctx, args.get(3))? {
        1 => unsafe_libyaml::YAML_BLOCK_SEQUENCE_STYLE,
        2 => unsafe_libyaml::YAML_FLOW_SEQUENCE_STYLE,
        _ => unsafe_libyaml::YAML_ANY_SEQUENCE_STYLE,
    };
    // SAFETY: as in `scalar`.
    emit(ctx, recv, |ev| unsafe { unsafe_libyaml::yaml_sequence_start_event_initialize(ev, opt_ptr(&anchor), opt_ptr(&tag), imp, style) }.ok)
}

fn end_sequence(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: as in `start_stream`.
    emit(
        ctx,
        recv,
        |ev| unsafe { unsafe_libyaml::yaml_sequence_end_event_initialize(ev) }.ok,
    )
}

/// `start_mapping(anchor, tag, implicit, style)`.
fn start_mapping(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let anchor = utf8_arg(ctx, args.get(0), true)?;
    let tag = utf8_arg(ctx, args.get(1), true)?;
    let imp = args.get(2).truthy();
    let style = match integer::to_int_arg(ctx, args.get(3))? {
        1 => unsafe_libyaml::YAML_BLOCK_MAPPING_STYLE,
        2 => unsafe_libyaml::YAML_FLOW_MAPPING_STYLE,
        _ => unsafe_libyaml::YAML_ANY_MAPPING_STYLE,
    };
    // SAFETY: as in `scalar`.
    emit(ctx, recv, |ev| unsafe { unsafe_libyaml::yaml_mapping_start_event_initialize(ev, opt_ptr(&anchor), opt_ptr(&tag), imp, style) }.ok)
}

fn end_mapping(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    // SAFETY: as in `start_stream`.
    emit(
        ctx,
        recv,
        |ev| unsafe { unsafe_libyaml::yaml_mapping_end_event_initialize(ev) }.ok,
    )
}

/// `alias(anchor)`: the anchor is a String (libyaml asserts it is not null, which aborts
/// CRuby; here nil is a TypeError).
fn alias(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let anchor = utf8_arg(ctx, args.get(0), false)?;
    // SAFETY: as in `scalar`.
    emit(
        ctx,
        recv,
        |ev| unsafe { unsafe_libyaml::yaml_alias_event_initialize(ev, opt_ptr(&anchor)) }.ok,
    )
}

fn canonical(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(emitter_of(ctx, recv)?.canonical))
}

fn set_canonical(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    emitter_of(ctx, recv)?.set_canonical(args.get(0) == Value::TRUE);
    Ok(args.get(0))
}

fn indentation(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(emitter_of(ctx, recv)?.indent as i64))
}

fn set_indentation(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_int_arg(ctx, args.get(0))?;
    emitter_of(ctx, recv)?.set_indent(n);
    Ok(args.get(0))
}

fn line_width(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(emitter_of(ctx, recv)?.width as i64))
}

fn set_line_width(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_int_arg(ctx, args.get(0))?;
    emitter_of(ctx, recv)?.set_width(n);
    Ok(args.get(0))
}

pub fn init(ctx: &mut Ctx, psych: Value, handler: Value) {
    let emitter = class_under(ctx, psych, "Emitter", handler);
    body(emitter).alloc = AllocKind::Data(alloc_emitter);
    crate::methods!(
        ctx,
        emitter,
        [
            ("initialize", initialize, [1..=2], Unsafe, Private),
            ("start_stream", start_stream, [1], Unsafe),
            ("end_stream", end_stream, [0], Unsafe),
            ("start_document", start_document, [3], Unsafe),
            ("end_document", end_document, [1], Unsafe),
            ("scalar", scalar, [6], Unsafe),
            ("start_sequence", start_sequence, [4], Unsafe),
            ("end_sequence", end_sequence, [0], Unsafe),
            ("start_mapping", start_mapping, [4], Unsafe),
            ("end_mapping", end_mapping, [0], Unsafe),
            ("alias", alias, [1], Unsafe),
            ("canonical", canonical, [0], Unsafe),
            ("canonical=", set_canonical, [1], Unsafe),
            ("indentation", indentation, [0], Unsafe),
            ("indentation=", set_indentation, [1], Unsafe),
            ("line_width", line_width, [0], Unsafe),
            ("line_width=", set_line_width, [1], Unsafe),
        ]
    );
}
