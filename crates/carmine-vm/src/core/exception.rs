//! Exception and its hierarchy: messages, backtraces (captured compactly at raise time,
//! turned into strings on demand), causes, and CRuby's error report format.
//!
//! Invariants: exception state lives in hidden instance variables (names without `@`):
//! `mesg`, `bt` (Backtrace data or an Array of Strings), `cause`, and `bt_locations`:
//! the Backtrace data once `bt` has been turned into Strings, then the Array that
//! `backtrace_locations` returned (the same Array each time). An exception whose
//! backtrace was set as Strings has no `bt_locations`.

use std::sync::Arc;

use crate::core::module::{self, ClassKind};
use crate::core::{array, object, string};
use crate::interp::frame::{Frame, FrameKind};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A captured backtrace, innermost frame first.
pub struct Backtrace {
    pub frames: Vec<BtFrame>,
}

/// One frame of a backtrace. A builtin's frame has the location of the Ruby code that
/// called it.
#[derive(Clone)]
pub struct BtFrame {
    pub path: Arc<str>,
    pub line: u32,
    pub label: String,
    /// The canonical path of the frame's file (`Iseq::realpath`).
    pub realpath: Option<Arc<str>>,
}

impl BtFrame {
    /// The frame as a line of `Exception#backtrace` ("path:line:in 'label'").
    pub fn to_line(&self) -> String {
        format_location(&self.path, self.line, &self.label)
    }
}

crate::data_obj!(Backtrace);

pub fn allocate(ctx: &mut Ctx, class: Value) -> Value {
    object::new_object(ctx, class)
}

pub fn set_message(ctx: &mut Ctx, e: Value, msg: Value) {
    object::ivar_set_raw(ctx, e, sym::MESG, msg);
}

pub fn message_raw(ctx: &Ctx, e: Value) -> Value {
    object::ivar_get(ctx, e, sym::MESG)
}

/// What a backtrace needs of a frame.
#[derive(Clone, Copy)]
pub struct FrameInfo {
    pub kind: FrameKind,
    pub owner: Value,
    pub mid: Option<crate::symbol::SymId>,
    pub iseq: *const crate::compile::iseq::Iseq,
    pub flags: u8,
}

impl FrameInfo {
    pub fn of(f: &Frame) -> FrameInfo {
        FrameInfo { kind: f.kind, owner: f.owner, mid: f.mid, iseq: f.iseq, flags: f.flags }
    }

    fn iseq(&self) -> &crate::compile::iseq::Iseq {
        // SAFETY: taken from a live Ruby frame, which keeps its iseq alive.
        unsafe { &*self.iseq }
    }
}

pub fn method_label(ctx: &mut Ctx, owner: Value, mid: Option<crate::symbol::SymId>) -> Option<String> {
    let mid = mid?;
    let name = ctx.sym_str(mid);
    if !module::is_class_or_module(owner) {
        return Some(name);
    }
    let b = module::body(owner);
    if b.kind == ClassKind::Singleton {
        let att = b.attached;
        if module::is_class_or_module(att) && module::body(att).name.is_some() {
            let cname = crate::core::module_methods::class_path(ctx, att);
            return Some(format!("{cname}.{name}"));
        }
        return Some(name);
    }
    if b.name.is_some() {
        let cname = crate::core::module_methods::class_path(ctx, owner);
        return Some(format!("{cname}#{name}"));
    }
    Some(name)
}

/// The method-qualified label of a frame ("Foo#bar", "Foo.bar", "block in Foo#bar", …).
pub fn frame_label(ctx: &mut Ctx, f: FrameInfo) -> String {
    match f.kind {
        FrameKind::Builtin => method_label(ctx, f.owner, f.mid).unwrap_or_default(),
        // An alias's frame is labelled with the name the method was defined with.
        FrameKind::Method => method_label(ctx, f.owner, f.iseq().method_name.or(f.mid)).unwrap_or_else(|| f.iseq().name.clone()),
        FrameKind::Block | FrameKind::Lambda => {
            let base = match method_label(ctx, f.owner, f.mid) {
                Some(m) if f.flags & crate::interp::frame::FRAME_BMETHOD != 0 => return m,
                Some(m) => m,
                None => {
                    let n = &f.iseq().name;
                    match n.find(" in ") {
                        Some(p) => n[p + 4..].to_string(),
                        None => n.clone(),
                    }
                }
            };
            let depth = f.iseq().block_depth;
            if depth <= 1 {
                format!("block in {base}")
            } else {
                format!("block ({depth} levels) in {base}")
            }
        }
        _ => f.iseq().name.clone(),
    }
}

/// Captures the current frames as a compact backtrace.
pub fn current_backtrace(ctx: &mut Ctx, skip: usize) -> Backtrace {
    let infos = frame_infos(&ctx.stacks.frames);
    backtrace_from(ctx, infos, skip)
}

/// The backtrace of another thread's frames (that thread is stopped outside the giant
/// lock, so its frames do not change while they are read).
pub fn backtrace_of_frames(ctx: &mut Ctx, frames: &[crate::interp::frame::Frame], skip: usize) -> Backtrace {
    let infos = frame_infos(frames);
    backtrace_from(ctx, infos, skip)
}

/// A frame's path, line and real path.
type SourcePos = (Arc<str>, u32, Option<Arc<str>>);
type FrameInfos = Vec<(FrameInfo, Option<SourcePos>)>;

fn frame_infos(frames: &[crate::interp::frame::Frame]) -> FrameInfos {
    frames.iter().map(|f| (FrameInfo::of(f), if f.is_ruby() { Some((f.iseq().path.clone(), f.line(), f.iseq().realpath.clone())) } else { None })).collect()
}

/// `Proc#call` and its aliases run the block in place of their own frame, as in CRuby:
/// backtraces go from the block straight to the code that called the proc.
fn hidden_from_backtraces(ctx: &Ctx, f: &FrameInfo) -> bool {
    f.kind == FrameKind::Builtin && f.owner == ctx.c().proc_ && matches!(f.mid, Some(m) if m == sym::CALL || m == sym::YIELD || m == sym::AREF || m == sym::EQQ)
}

fn backtrace_from(ctx: &mut Ctx, mut infos: FrameInfos, skip: usize) -> Backtrace {
    infos.retain(|(f, _)| !hidden_from_backtraces(ctx, f));
    // Builtin frames report the location of the Ruby code that called them.
    let mut caller_loc: Vec<Option<SourcePos>> = Vec::with_capacity(infos.len());
    let mut last: Option<SourcePos> = None;
    for (_, l) in &infos {
        if l.is_some() {
            last = l.clone();
        }
        caller_loc.push(last.clone());
    }
    let mut out = Vec::with_capacity(infos.len());
    for (i, (info, loc)) in infos.iter().enumerate().rev() {
        let (path, line, realpath) = loc.clone().or_else(|| caller_loc[i].clone()).unwrap_or((Arc::from("<internal>"), 0, None));
        let label = frame_label(ctx, *info);
        out.push(BtFrame { path, line, label, realpath });
    }
    if skip > 0 {
        out.drain(..skip.min(out.len()));
    }
    Backtrace { frames: out }
}

pub fn capture_backtrace(ctx: &mut Ctx, e: Value) {
    let bt = current_backtrace(ctx, 0);
    set_backtrace_data(ctx, e, bt);
}

/// Makes `bt` the backtrace of `e` (replacing Strings or locations it had).
fn set_backtrace_data(ctx: &mut Ctx, e: Value, bt: Backtrace) {
    let d = object::new_data(ctx, Value::NIL, Box::new(bt));
    object::ivar_set_raw(ctx, e, sym::BT, d);
    let locs = ctx.intern("bt_locations");
    object::ivar_set_raw(ctx, e, locs, Value::NIL);
}

/// Captures the backtrace without the innermost frame when it is a builtin's
/// (`Kernel#raise`, `Module#const_missing`): CRuby does not show those.
pub fn capture_backtrace_from_caller(ctx: &mut Ctx, e: Value) {
    let skip = usize::from(ctx.stacks.frames.last().is_some_and(|f| !f.is_ruby()));
    let bt = current_backtrace(ctx, skip);
    set_backtrace_data(ctx, e, bt);
}

/// Sets the backtrace unless one is already set.
pub fn ensure_backtrace(ctx: &mut Ctx, e: Value) {
    let bt = object::ivar_get(ctx, e, sym::BT);
    if bt.is_nil() && object::is_a(ctx, e, ctx.c().exception) {
        capture_backtrace(ctx, e);
    }
}

pub fn format_location(path: &str, line: u32, label: &str) -> String {
    format!("{path}:{line}:in '{label}'")
}

/// The backtrace as an Array of Strings (or nil); made once, then the same Array.
pub fn backtrace(ctx: &mut Ctx, e: Value) -> Value {
    let bt = object::ivar_get(ctx, e, sym::BT);
    if let Some(b) = data_ref::<Backtrace>(bt) {
        let lines: Vec<String> = b.frames.iter().map(BtFrame::to_line).collect();
        let arr = array::new(ctx);
        for l in lines {
            let s = string::new_utf8(ctx, &l);
            array::push(ctx, arr, s);
        }
        // The frames stay for `backtrace_locations`.
        let locs = ctx.intern("bt_locations");
        if object::ivar_get(ctx, e, locs).is_nil() {
            object::ivar_set_raw(ctx, e, locs, bt);
        }
        object::ivar_set_raw(ctx, e, sym::BT, arr);
        return arr;
    }
    bt
}

/// The message of an exception as Rust text (calling `message`).
pub fn message_string(ctx: &mut Ctx, e: Value) -> String {
    match ctx.call(e, sym::MESSAGE, &[]) {
        Ok(m) if string::is_string(m) => string::to_rust_string_lossy(m),
        Ok(m) => match string::to_s(ctx, m) {
            Ok(s) => string::to_rust_string_lossy(s),
            Err(_) => String::new(),
        },
        Err(_) => String::new(),
    }
}

/// CRuby's report of an uncaught exception (see `exception_report`).
pub fn full_message(ctx: &mut Ctx, e: Value) -> String {
    crate::core::exception_report::uncaught_report(ctx, e)
}

// ---- methods ----

fn s_exception(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = object::allocate(ctx, recv)?;
    ctx.call_kw(e, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(e)
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_message(ctx, recv, args.pos.first().copied().unwrap_or(Value::NIL));
    Ok(Value::NIL)
}

fn to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = message_raw(ctx, recv);
    if m.is_nil() {
        let name = object::class_name_of(ctx, recv);
        return Ok(string::new_utf8(ctx, &name));
    }
    string::to_s(ctx, m)
}

fn message(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.call(recv, sym::TO_S, &[])
}

fn inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let m = ctx.call(recv, sym::TO_S, &[])?;
    let ms = string::to_rust_string_lossy(m);
    if ms.is_empty() {
        return Ok(string::new_utf8(ctx, &cname));
    }
    if ms.contains('\n') {
        let q = string::inspect_bytes(string::bytes(m), string::encoding(m));
        let mut out = format!("#<{cname}:").into_bytes();
        out.extend(q);
        out.push(b'>');
        return Ok(string::new_from_bytes(ctx, &out));
    }
    Ok(string::new_utf8(ctx, &format!("#<{cname}: {ms}>")))
}

fn m_backtrace(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(backtrace(ctx, recv))
}

fn set_backtrace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let bt = if string::is_string(v) {
        array::from_slice(ctx, &[v])
    } else if v.is_nil() || (array::is_array(v) && array::to_vec(v).iter().all(|&x| string::is_string(x))) {
        v
    } else if array::is_array(v) && array::to_vec(v).iter().all(|&x| crate::core::kernel::is_location(x)) {
        let frames = array::to_vec(v).iter().filter_map(|&l| crate::core::kernel::location_frame(l).cloned()).collect();
        set_backtrace_data(ctx, recv, Backtrace { frames });
        return Ok(v);
    } else {
        return Err(ctx.type_error("backtrace must be an Array of String or an Array of Thread::Backtrace::Location"));
    };
    object::ivar_set_raw(ctx, recv, sym::BT, bt);
    let locs = ctx.intern("bt_locations");
    object::ivar_set_raw(ctx, recv, locs, Value::NIL);
    Ok(bt)
}

fn backtrace_locations(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let locs = ctx.intern("bt_locations");
    let cached = object::ivar_get(ctx, recv, locs);
    if array::is_array(cached) {
        return Ok(cached);
    }
    let data = if cached.is_nil() { object::ivar_get(ctx, recv, sym::BT) } else { cached };
    let Some(b) = data_ref::<Backtrace>(data) else { return Ok(Value::NIL) };
    let frames = b.frames.clone();
    let arr = crate::core::kernel::locations_array(ctx, &frames)?;
    object::ivar_set_raw(ctx, recv, locs, arr);
    Ok(arr)
}

fn cause(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object::ivar_get(ctx, recv, sym::CAUSE))
}

fn eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if recv == o {
        return Ok(Value::TRUE);
    }
    if object::real_class_of(ctx, recv) != object::real_class_of(ctx, o) {
        return Ok(Value::FALSE);
    }
    let a = ctx.call(recv, sym::MESSAGE, &[])?;
    let b = ctx.call(o, sym::MESSAGE, &[])?;
    if !object::equal(ctx, a, b)? {
        return Ok(Value::FALSE);
    }
    let ba = ctx.call(recv, sym::BACKTRACE, &[])?;
    let bb = ctx.call(o, sym::BACKTRACE, &[])?;
    Ok(Value::bool(object::equal(ctx, ba, bb)?))
}

fn exception_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.pos.first() {
        None => Ok(recv),
        Some(&m) if m == recv => Ok(recv),
        Some(&m) => {
            let c = object::copy_object(ctx, recv, true, None)?;
            crate::object::basic(c).flags &= !crate::object::FL_FROZEN;
            set_message(ctx, c, m);
            Ok(c)
        }
    }
}

fn name_error_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_message(ctx, recv, args.pos.first().copied().unwrap_or(Value::NIL));
    let name = args.pos.get(1).copied().unwrap_or(Value::NIL);
    object::ivar_set_raw(ctx, recv, sym::NAME, name);
    if let Some(r) = args.kwarg(ctx, "receiver") {
        object::ivar_set_raw(ctx, recv, sym::RECEIVER, r);
    }
    Ok(Value::NIL)
}

fn name_error_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object::ivar_get(ctx, recv, sym::NAME))
}

fn name_error_receiver(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !object::ivar_defined(ctx, recv, sym::RECEIVER) {
        return Err(ctx.arg_error("no receiver is available"));
    }
    Ok(object::ivar_get(ctx, recv, sym::RECEIVER))
}

fn no_method_error_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    name_error_initialize(ctx, recv, args)?;
    let a = args.pos.get(2).copied().unwrap_or(Value::NIL);
    let a = if a.is_nil() { array::new(ctx) } else { a };
    object::ivar_set_raw(ctx, recv, sym::ARGS, a);
    Ok(Value::NIL)
}

fn no_method_error_args(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = object::ivar_get(ctx, recv, sym::ARGS);
    if a.is_nil() {
        return Ok(array::new(ctx));
    }
    Ok(a)
}

fn key_error_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_message(ctx, recv, args.pos.first().copied().unwrap_or(Value::NIL));
    if let Some(r) = args.kwarg(ctx, "receiver") {
        object::ivar_set_raw(ctx, recv, sym::RECEIVER, r);
    }
    if let Some(k) = args.kwarg(ctx, "key") {
        object::ivar_set_raw(ctx, recv, sym::KEY, k);
    }
    Ok(Value::NIL)
}

fn key_error_key(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if !object::ivar_defined(ctx, recv, sym::KEY) {
        return Err(ctx.arg_error("no key is available"));
    }
    Ok(object::ivar_get(ctx, recv, sym::KEY))
}

fn frozen_error_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_message(ctx, recv, args.pos.first().copied().unwrap_or(Value::NIL));
    if let Some(r) = args.kwarg(ctx, "receiver") {
        object::ivar_set_raw(ctx, recv, sym::RECEIVER, r);
    }
    Ok(Value::NIL)
}

fn stop_iteration_result(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object::ivar_get(ctx, recv, sym::RESULT))
}

fn local_jump_reason(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@reason");
    Ok(object::ivar_get(ctx, recv, id))
}

fn local_jump_exit_value(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@exit_value");
    Ok(object::ivar_get(ctx, recv, id))
}

fn system_exit_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut status = Value::fixnum(0);
    let mut rest = args.pos;
    if let Some(&first) = args.pos.first() {
        if first == Value::TRUE {
            status = Value::fixnum(0);
            rest = &args.pos[1..];
        } else if first == Value::FALSE {
            status = Value::fixnum(1);
            rest = &args.pos[1..];
        } else if first.is_fixnum() {
            status = first;
            rest = &args.pos[1..];
        }
    }
    set_message(ctx, recv, rest.first().copied().unwrap_or(Value::NIL));
    object::ivar_set_raw(ctx, recv, sym::STATUS, status);
    Ok(Value::NIL)
}

fn system_exit_status(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = object::ivar_get(ctx, recv, sym::STATUS);
    Ok(if s.is_nil() { Value::fixnum(0) } else { s })
}

fn system_exit_success(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = object::ivar_get(ctx, recv, sym::STATUS);
    Ok(Value::bool(s.is_nil() || s == Value::fixnum(0)))
}

fn uncaught_throw_tag(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@tag");
    Ok(object::ivar_get(ctx, recv, id))
}

fn uncaught_throw_value(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@value");
    Ok(object::ivar_get(ctx, recv, id))
}

fn syscall_errno(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@errno");
    Ok(object::ivar_get(ctx, recv, id))
}

/// The errno a class stands for: its (inherited) `Errno` constant.
fn class_errno(ctx: &mut Ctx, klass: Value) -> Option<Value> {
    let id = ctx.intern("Errno");
    let stop = ctx.c().system_call_error;
    let mut k = klass;
    // Only classes below SystemCallError (Object's `Errno` is the module).
    while !k.is_nil() && k != stop {
        if let Some(e) = module::body(k).const_get(id).filter(|e| crate::core::integer::is_integer(e.value)) {
            return Some(e.value);
        }
        k = module::body(k).superclass;
    }
    None
}

/// An errno argument: an Integer, or something converting to one (a Float truncates, a
/// real Complex works); nil is "unknown".
fn errno_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if v.is_nil() || v.is_fixnum() {
        return Ok(v);
    }
    crate::core::integer::to_integer_arg(ctx, v)
}

/// `SystemCallError#initialize(msg = nil, errno = nil, func = nil)`; an `Errno::EXXX`
/// takes `(msg = nil, func = nil)`. The message is CRuby's
/// "strerror @ func - msg"; an unknown errno reads "Unknown error N".
fn errno_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let (msg, code, func) = match class_errno(ctx, klass) {
        Some(code) => {
            if args.pos.len() > 2 {
                return Err(ctx.arity_error(args.pos.len(), 0, Some(2)));
            }
            (args.pos.first().copied().unwrap_or(Value::NIL), code, args.pos.get(1).copied().unwrap_or(Value::NIL))
        }
        None => {
            let exact = klass == ctx.c().system_call_error;
            if args.pos.len() > 3 || (exact && args.pos.is_empty()) {
                return Err(ctx.arity_error(args.pos.len(), 1, Some(3)));
            }
            let (msg, code) = match args.pos {
                [] => (Value::NIL, Value::NIL),
                [one] if !string::is_string(*one) && !one.is_nil() && !one.is_symbol() => (Value::NIL, *one),
                [m] => (*m, Value::NIL),
                [m, c, ..] => (*m, *c),
            };
            let code = errno_arg(ctx, code)?;
            // SystemCallError.new(msg, EINVAL) is an Errno::EINVAL.
            if exact {
                if let Some(k) = code.as_fixnum().and_then(|c| errno_class(ctx, c as i32)) {
                    crate::object::basic(recv).klass = k;
                    crate::heap::write_barrier(recv, k);
                }
            }
            (msg, code, args.pos.get(2).copied().unwrap_or(Value::NIL))
        }
    };
    let mut text = match code.as_fixnum() {
        Some(c) => errno_description(c as i32),
        None => "unknown error".to_string(),
    };
    if !func.is_nil() {
        let f = string::to_s(ctx, func)?;
        text.push_str(" @ ");
        text.push_str(&string::to_rust_string_lossy(f));
    }
    if !msg.is_nil() {
        let m = string::to_str_arg(ctx, msg)?;
        text.push_str(" - ");
        text.push_str(&string::to_rust_string_lossy(m));
    }
    let mv = string::new_utf8(ctx, &text);
    set_message(ctx, recv, mv);
    let id = ctx.intern("@errno");
    object::ivar_set_raw(ctx, recv, id, code);
    Ok(Value::NIL)
}

/// The `Errno::EXXX` class of an errno, if there is one.
pub fn errno_class(ctx: &mut Ctx, code: i32) -> Option<Value> {
    let errno = ctx.c().errno;
    let name = ERRNO_NAMES.iter().find(|(_, c)| *c == code).map(|(n, _)| *n)?;
    let id = ctx.intern(name);
    module::body(errno).const_get(id).map(|e| e.value)
}

/// `Errno::EXXX === e`: a SystemCallError (or anything with `errno`) with the same errno.
fn syscall_s_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let sce = ctx.c().system_call_error;
    if !object::is_a(ctx, v, sce) {
        let id = ctx.intern("errno");
        if !ctx.respond_to(v, id, true) {
            return Ok(Value::FALSE);
        }
    } else if recv == sce {
        return Ok(Value::TRUE);
    }
    if object::is_a(ctx, v, recv) {
        return Ok(Value::TRUE);
    }
    let id = ctx.intern("errno");
    let theirs = ctx.call(v, id, &[])?;
    let mine = class_errno(ctx, recv).unwrap_or(Value::NIL);
    Ok(Value::bool(!mine.is_nil() && theirs == mine))
}

fn load_error_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = ctx.intern("@path");
    Ok(object::ivar_get(ctx, recv, id))
}

pub fn errno_description(code: i32) -> String {
    // SAFETY: strerror returns a pointer to a NUL-terminated static or thread-local string.
    let s = unsafe { std::ffi::CStr::from_ptr(libc::strerror(code)) };
    s.to_string_lossy().into_owned()
}

/// The errno constants defined as `Errno::NAME` classes.
pub const ERRNO_NAMES: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM), ("ENOENT", libc::ENOENT), ("ESRCH", libc::ESRCH), ("EINTR", libc::EINTR),
    ("EIO", libc::EIO), ("ENXIO", libc::ENXIO), ("E2BIG", libc::E2BIG), ("ENOEXEC", libc::ENOEXEC),
    ("EBADF", libc::EBADF), ("ECHILD", libc::ECHILD), ("EAGAIN", libc::EAGAIN), ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES), ("EFAULT", libc::EFAULT), ("EBUSY", libc::EBUSY), ("EEXIST", libc::EEXIST),
    ("EXDEV", libc::EXDEV), ("ENODEV", libc::ENODEV), ("ENOTDIR", libc::ENOTDIR), ("EISDIR", libc::EISDIR),
    ("EINVAL", libc::EINVAL), ("ENFILE", libc::ENFILE), ("EMFILE", libc::EMFILE), ("ENOTTY", libc::ENOTTY),
    ("EFBIG", libc::EFBIG), ("ENOSPC", libc::ENOSPC), ("ESPIPE", libc::ESPIPE), ("EROFS", libc::EROFS),
    ("EMLINK", libc::EMLINK), ("EPIPE", libc::EPIPE), ("EDOM", libc::EDOM), ("ERANGE", libc::ERANGE),
    ("EDEADLK", libc::EDEADLK), ("ENAMETOOLONG", libc::ENAMETOOLONG), ("ENOTEMPTY", libc::ENOTEMPTY),
    ("ELOOP", libc::ELOOP), ("ECONNREFUSED", libc::ECONNREFUSED), ("ECONNRESET", libc::ECONNRESET),
    ("EADDRINUSE", libc::EADDRINUSE), ("ETIMEDOUT", libc::ETIMEDOUT), ("ENOTCONN", libc::ENOTCONN),
    ("ENOTSUP", libc::ENOTSUP), ("EWOULDBLOCK", libc::EWOULDBLOCK),
    ("EDESTADDRREQ", libc::EDESTADDRREQ), ("EISCONN", libc::EISCONN), ("EINPROGRESS", libc::EINPROGRESS), ("EALREADY", libc::EALREADY), ("EADDRNOTAVAIL", libc::EADDRNOTAVAIL), ("EAFNOSUPPORT", libc::EAFNOSUPPORT), ("EPROTONOSUPPORT", libc::EPROTONOSUPPORT), ("ENETUNREACH", libc::ENETUNREACH), ("EHOSTUNREACH", libc::EHOSTUNREACH), ("EMSGSIZE", libc::EMSGSIZE), ("ENOTSOCK", libc::ENOTSOCK), ("EPROTOTYPE", libc::EPROTOTYPE), ("ENOPROTOOPT", libc::ENOPROTOOPT), ("ESOCKTNOSUPPORT", libc::ESOCKTNOSUPPORT), ("EPFNOSUPPORT", libc::EPFNOSUPPORT), ("ENETDOWN", libc::ENETDOWN), ("ECONNABORTED", libc::ECONNABORTED), ("ESHUTDOWN", libc::ESHUTDOWN), ("ENOBUFS", libc::ENOBUFS),
];

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().exception;
    crate::methods!(ctx, c, [
        ("exception", s_exception, [0..], Safe, Singleton, Kw),
        ("initialize", initialize, [0..=1], Safe, Private),
        ("to_s", to_s, [0], Safe),
        ("message", message, [0], Safe),
        ("inspect", inspect, [0], Safe),
        ("backtrace", m_backtrace, [0], Safe),
        ("set_backtrace", set_backtrace, [1], Safe),
        ("backtrace_locations", backtrace_locations, [0], Safe),
        ("cause", cause, [0], Safe),
        ("==", eq, [1], Safe),
        ("exception", exception_m, [0..=1], Safe),
    ]);
    let ne = ctx.c().name_error;
    crate::methods!(ctx, ne, [
        ("initialize", name_error_initialize, [0..=2], Safe, Private, Kw),
        ("name", name_error_name, [0], Safe),
        ("receiver", name_error_receiver, [0], Safe),
    ]);
    let nme = ctx.c().no_method_error;
    crate::methods!(ctx, nme, [
        ("initialize", no_method_error_initialize, [0..=4], Safe, Private, Kw),
        ("args", no_method_error_args, [0], Safe),
    ]);
    let ke = ctx.c().key_error;
    crate::methods!(ctx, ke, [
        ("initialize", key_error_initialize, [0..=1], Safe, Private, Kw),
        ("key", key_error_key, [0], Safe),
        ("receiver", name_error_receiver, [0], Safe),
    ]);
    let fe = ctx.c().frozen_error;
    crate::methods!(ctx, fe, [
        ("initialize", frozen_error_initialize, [0..=1], Safe, Private, Kw),
        ("receiver", name_error_receiver, [0], Safe),
    ]);
    let si = ctx.c().stop_iteration;
    crate::methods!(ctx, si, [("result", stop_iteration_result, [0], Safe)]);
    let lj = ctx.c().local_jump_error;
    crate::methods!(ctx, lj, [
        ("reason", local_jump_reason, [0], Safe),
        ("exit_value", local_jump_exit_value, [0], Safe),
    ]);
    let se = ctx.c().system_exit;
    crate::methods!(ctx, se, [
        ("initialize", system_exit_initialize, [0..=2], Safe, Private),
        ("status", system_exit_status, [0], Safe),
        ("success?", system_exit_success, [0], Safe),
    ]);
    let ut = ctx.c().uncaught_throw_error;
    crate::methods!(ctx, ut, [
        ("tag", uncaught_throw_tag, [0], Safe),
        ("value", uncaught_throw_value, [0], Safe),
    ]);
    let sc = ctx.c().system_call_error;
    crate::methods!(ctx, sc, [
        ("initialize", errno_initialize, [0..], Safe, Private),
        ("errno", syscall_errno, [0], Safe),
        ("===", syscall_s_eqq, [1], Unsafe, Singleton),
    ]);
    for k in [ctx.c().load_error, ctx.c().syntax_error] {
        crate::methods!(ctx, k, [("path", load_error_path, [0], Safe)]);
    }
    let nmk = ctx.c().no_matching_pattern_key_error;
    crate::methods!(ctx, nmk, [
        ("initialize", key_error_initialize, [0..=1], Safe, Private, Kw),
        ("key", key_error_key, [0], Safe),
    ]);
}
