//! How exceptions are described: `Exception#detailed_message`, `#full_message` and the
//! report of an uncaught exception, in CRuby 3.4's format (error.c `rb_decorate_message`,
//! eval_error.c `rb_error_write`).
//!
//! The message shown is the one `detailed_message(highlight:)` returns (a user may
//! redefine it); causes follow the exception, each shown once.

use crate::core::{array, exception, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const BOLD: &str = "\x1b[1m";
const UNDERLINE: &str = "\x1b[1;4m";
const RESET: &str = "\x1b[m";

/// `Exception.to_tty?`: whether the error output is a terminal (highlighting's default).
pub fn to_tty() -> bool {
    // SAFETY: isatty(2) on a descriptor number only reads its state.
    unsafe { libc::isatty(2) == 1 }
}

/// The `highlight:` keyword: nil (default), true or false.
fn highlight_kw(ctx: &mut Ctx, args: &Args) -> Result<Option<bool>> {
    match args.kwarg(ctx, "highlight") {
        None => Ok(None),
        Some(v) if v.is_nil() => Ok(None),
        Some(v) if v == Value::TRUE => Ok(Some(true)),
        Some(v) if v == Value::FALSE => Ok(Some(false)),
        Some(v) => {
            let s = object::inspect_string(ctx, v)?;
            Err(ctx.arg_error(&format!("expected true or false as highlight: {s}")))
        }
    }
}

/// CRuby's `rb_decorate_message`: the message with the class name after its first
/// line, "unhandled exception" for an empty RuntimeError, highlighted on request.
pub fn decorate(ctx: &mut Ctx, e: Value, msg: Value, highlight: bool) -> Vec<u8> {
    let klass = object::real_class_of(ctx, e);
    let text: Vec<u8> = if string::is_string(msg) { string::bytes(msg).to_vec() } else { Vec::new() };
    let mut out = Vec::new();
    let push = |out: &mut Vec<u8>, s: &str| out.extend_from_slice(s.as_bytes());
    if klass == ctx.c().runtime_error && text.is_empty() {
        if highlight {
            push(&mut out, UNDERLINE);
        }
        push(&mut out, "unhandled exception");
        if highlight {
            push(&mut out, RESET);
        }
        return out;
    }
    let path = crate::core::module_methods::class_path(ctx, klass);
    if text.is_empty() {
        if highlight {
            push(&mut out, UNDERLINE);
        }
        push(&mut out, &path);
        if highlight {
            push(&mut out, RESET);
        }
        return out;
    }
    // An anonymous class (`#<Class:0x...>`) is not named after the message.
    let named = !path.starts_with('#');
    let (first, rest) = match text.iter().position(|&b| b == b'\n') {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (&text[..], None),
    };
    if highlight {
        push(&mut out, BOLD);
    }
    out.extend_from_slice(first);
    if named {
        push(&mut out, " (");
        if highlight {
            push(&mut out, UNDERLINE);
        }
        push(&mut out, &path);
        if highlight {
            push(&mut out, RESET);
            push(&mut out, BOLD);
        }
        push(&mut out, ")");
    }
    if highlight {
        push(&mut out, RESET);
    }
    if let Some(rest) = rest.filter(|r| !r.is_empty()) {
        if highlight {
            // Each further line is highlighted on its own.
            for line in rest.split_inclusive(|&b| b == b'\n') {
                let (body, nl) = match line.strip_suffix(b"\n") {
                    Some(b) => (b, true),
                    None => (line, false),
                };
                push(&mut out, "\n");
                push(&mut out, BOLD);
                out.extend_from_slice(body);
                push(&mut out, RESET);
                if nl && line.len() == rest.len() {
                    push(&mut out, "\n");
                }
            }
        } else {
            push(&mut out, "\n");
            out.extend_from_slice(rest);
        }
    }
    out
}

/// `Exception#detailed_message(highlight: false, **)`.
pub fn detailed_message(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let hl = highlight_kw(ctx, args)?.unwrap_or(false);
    let m = ctx.call(recv, sym::MESSAGE, &[])?;
    let m = if string::is_string(m) { m } else { string::to_s(ctx, m)? };
    let out = decorate(ctx, recv, m, hl);
    let enc = if string::is_string(m) && out.is_ascii() { crate::core::encoding::US_ASCII } else { string::encoding(m) };
    Ok(string::new_with_enc(ctx, out, enc))
}

/// The decorated message of `e` through its (maybe redefined) `detailed_message`;
/// `extra` are further keywords passed on. A nil result is the class name; anything
/// else is converted with `to_str` (or `to_s`).
fn message_of(ctx: &mut Ctx, e: Value, highlight: bool, extra: Option<Value>) -> Result<Vec<u8>> {
    let kw = crate::core::hash::new(ctx);
    if let Some(x) = extra {
        crate::core::hash::merge_kwsplat(ctx, kw, x)?;
    }
    let key = Value::symbol(ctx.intern("highlight"));
    crate::core::hash::aset(ctx, kw, key, Value::bool(highlight))?;
    let r = if ctx.respond_to(e, sym::DETAILED_MESSAGE, true) { ctx.call_kw(e, sym::DETAILED_MESSAGE, &[], Some(kw), None)? } else { Value::NIL };
    if r.is_nil() {
        let klass = object::real_class_of(ctx, e);
        let name = crate::core::module_methods::class_path(ctx, klass);
        return Ok(if highlight { format!("{UNDERLINE}{name}{RESET}") } else { name }.into_bytes());
    }
    let s = match crate::core::string::try_to_str(ctx, r)? {
        Some(s) => s,
        None => string::to_s(ctx, r)?,
    };
    Ok(string::bytes(s).to_vec())
}

/// The backtrace lines of `e`, or None.
fn backtrace_lines(ctx: &mut Ctx, e: Value) -> Result<Option<Vec<Vec<u8>>>> {
    let bt = ctx.call(e, sym::BACKTRACE, &[])?;
    if !array::is_array(bt) {
        return Ok(None);
    }
    let mut out = Vec::new();
    for v in array::to_vec(bt) {
        let s = if string::is_string(v) { v } else { string::to_s(ctx, v)? };
        out.push(string::bytes(s).to_vec());
    }
    Ok(Some(out))
}

/// Appends the first line: "where: message\n" (the current location when `e` has no
/// backtrace).
fn write_errinfo(ctx: &mut Ctx, out: &mut Vec<u8>, e: Value, bt: &Option<Vec<Vec<u8>>>, msg: &[u8], highlight: bool) {
    match bt.as_ref().and_then(|b| b.first()) {
        Some(first) => out.extend_from_slice(first),
        None => {
            // Where full_message was called from (not the builtin's own frame).
            let here = exception::current_backtrace(ctx, 1);
            if let Some(f) = here.frames.first() {
                out.extend_from_slice(f.to_line().as_bytes());
            }
        }
    }
    out.extend_from_slice(b": ");
    if msg.is_empty() {
        let klass = object::real_class_of(ctx, e);
        let name = if klass == ctx.c().runtime_error { "unhandled exception".to_string() } else { crate::core::module_methods::class_path(ctx, klass) };
        if highlight {
            out.extend_from_slice(UNDERLINE.as_bytes());
        }
        out.extend_from_slice(name.as_bytes());
        if highlight {
            out.extend_from_slice(RESET.as_bytes());
        }
    } else {
        out.extend_from_slice(msg);
    }
    out.push(b'\n');
}

/// The "from" lines after the first; with `--backtrace-limit=N` only N of them, then
/// "... K levels..." for the K left out.
fn write_backtrace(out: &mut Vec<u8>, bt: &Option<Vec<Vec<u8>>>, reverse: bool, limit: i64) {
    let Some(lines) = bt else { return };
    let len = lines.len();
    if len <= 1 {
        return;
    }
    let shown = if limit >= 0 && len as i64 > limit + 2 { limit as usize + 1 } else { len };
    let skipped = len - shown;
    let width = ((len - 1) as f64).log10() as usize + 1;
    if reverse {
        if skipped > 0 {
            out.extend_from_slice(format!("\t ... {skipped} levels...\n").as_bytes());
        }
        for i in (1..shown).rev() {
            out.extend_from_slice(format!("\t{:>width$}: from ", i).as_bytes());
            out.extend_from_slice(&lines[i]);
            out.push(b'\n');
        }
    } else {
        for line in &lines[1..shown] {
            out.extend_from_slice(b"\tfrom ");
            out.extend_from_slice(line);
            out.push(b'\n');
        }
        if skipped > 0 {
            out.extend_from_slice(format!("\t ... {skipped} levels...\n").as_bytes());
        }
    }
}

/// CRuby's `rb_error_write`: one exception and its causes (each once).
fn write_error(ctx: &mut Ctx, out: &mut Vec<u8>, e: Value, highlight: bool, reverse: bool, extra: Option<Value>, shown: Value) -> Result<()> {
    array::push(ctx, shown, e);
    let msg = message_of(ctx, e, highlight, extra)?;
    let bt = backtrace_lines(ctx, e)?;
    if reverse {
        if highlight {
            out.extend_from_slice(format!("{BOLD}Traceback{RESET} (most recent call last):\n").as_bytes());
        } else {
            out.extend_from_slice(b"Traceback (most recent call last):\n");
        }
        write_cause(ctx, out, e, highlight, reverse, extra, shown)?;
        write_backtrace(out, &bt, true, ctx.vm().backtrace_limit.get());
        write_errinfo(ctx, out, e, &bt, &msg, highlight);
    } else {
        write_errinfo(ctx, out, e, &bt, &msg, highlight);
        write_backtrace(out, &bt, false, ctx.vm().backtrace_limit.get());
        write_cause(ctx, out, e, highlight, reverse, extra, shown)?;
    }
    Ok(())
}

fn write_cause(ctx: &mut Ctx, out: &mut Vec<u8>, e: Value, highlight: bool, reverse: bool, extra: Option<Value>, shown: Value) -> Result<()> {
    let cause = object::ivar_get(ctx, e, sym::CAUSE);
    if cause.is_nil() || !object::is_a(ctx, cause, ctx.c().exception) || array::to_vec(shown).contains(&cause) {
        return Ok(());
    }
    write_error(ctx, out, cause, highlight, reverse, extra, shown)
}

/// The full report of `e` (message, backtrace, causes).
pub fn report(ctx: &mut Ctx, e: Value, highlight: bool, reverse: bool, extra: Option<Value>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let shown = array::new(ctx);
    write_error(ctx, &mut out, e, highlight, reverse, extra, shown)?;
    Ok(out)
}

/// The report printed for an uncaught exception (never fails: a broken
/// `detailed_message` falls back to the plain message).
pub fn uncaught_report(ctx: &mut Ctx, e: Value) -> String {
    let hl = to_tty();
    match report(ctx, e, hl, false, None) {
        Ok(b) => {
            let mut s = String::from_utf8_lossy(&b).into_owned();
            if s.ends_with('\n') {
                s.pop();
            }
            s
        }
        Err(_) => {
            let m = exception::message_string(ctx, e);
            let c = object::class_name_of(ctx, e);
            format!("{m} ({c})")
        }
    }
}

/// `Exception#full_message(highlight: to_tty?, order: :top, **)`.
pub fn full_message(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let hl = highlight_kw(ctx, args)?.unwrap_or_else(to_tty);
    let mut reverse = false;
    if let Some(o) = args.kwarg(ctx, "order") {
        match o.as_symbol().map(|s| ctx.sym_str(s).to_string()).as_deref() {
            _ if o.is_nil() => {}
            Some("top") => {}
            Some("bottom") => reverse = true,
            _ => {
                let s = object::inspect_string(ctx, o)?;
                return Err(ctx.arg_error(&format!("expected :top or :bottom as order: {s}")));
            }
        }
    }
    // Other keywords go on to detailed_message (not order:).
    let extra = match args.kw {
        Some(kw) => {
            let h = crate::core::hash::dup(ctx, kw);
            let key = Value::symbol(ctx.intern("order"));
            crate::core::hash::delete(ctx, h, key)?;
            let key = Value::symbol(ctx.intern("highlight"));
            crate::core::hash::delete(ctx, h, key)?;
            Some(h)
        }
        None => None,
    };
    let out = report(ctx, recv, hl, reverse, extra)?;
    Ok(string::new_from_bytes(ctx, &out))
}

fn s_to_tty(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(to_tty()))
}

pub fn init(ctx: &mut Ctx) {
    let e = ctx.c().exception;
    crate::methods!(ctx, e, [
        ("detailed_message", detailed_message, [0], Unsafe, Kw),
        ("full_message", full_message, [0], Unsafe, Kw),
        ("to_tty?", s_to_tty, [0], Safe, Singleton),
    ]);
    let _: Option<Unwind> = None;
}
