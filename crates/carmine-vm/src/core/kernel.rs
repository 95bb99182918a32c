//! Kernel: the module functions every object sees (output, conversions, raise, loop,
//! catch/throw, eval, exit, warnings, caller).

use std::sync::Arc;

use crate::compile::iseq::IseqKind;
use crate::compile::CompileOptions;
use crate::core::{array, binding, exception, float, hash, integer, io, object, string};
use crate::error::Unwind;
use crate::interp::frame::FrameKind;
use crate::interp::{ops, Args};
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Writes a warning to `$stderr` (unless `$VERBOSE` is nil).
pub fn write_warning(ctx: &mut Ctx, msg: &str) {
    if crate::core::globals::verbose_level(ctx) == 0 {
        return;
    }
    let _ = crate::core::warning::emit(ctx, msg, None);
}

/// (path, line) of the Ruby code that called the running builtin.
pub fn caller_location(ctx: &Ctx) -> (Arc<str>, u32) {
    match ops::caller_ruby_frame(ctx) {
        Some(fi) => {
            let f = &ctx.stacks.frames[fi];
            (f.iseq().path.clone(), f.line())
        }
        None => (Arc::from("-"), 0),
    }
}

/// The canonical path of the file the calling Ruby code was loaded from (None in eval'd
/// code and `-e`).
pub fn caller_realpath(ctx: &Ctx) -> Option<Arc<str>> {
    ops::caller_ruby_frame(ctx).and_then(|fi| ctx.stacks.frames[fi].iseq().realpath.clone())
}

// ---- output ----

/// `puts` is `$stdout.puts` (written directly while that is IO's own `puts`).
fn k_puts(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let out = crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?;
    let puts = ctx.intern("puts");
    let k = crate::interp::class_of(ctx, out);
    let builtin = crate::core::module::find_method(ctx, k, puts).is_some_and(|me| matches!(me.body, crate::core::module::MethodBody::Builtin { .. }));
    if !builtin {
        return ctx.call(out, puts, args.pos);
    }
    io::puts_to(ctx, out, args.pos)?;
    Ok(Value::NIL)
}

fn k_print(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let out = crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?;
    if args.pos.is_empty() {
        let line = ops::get_caller_last_line(ctx);
        if !line.is_nil() {
            io::print_to(ctx, out, &[line])?;
        }
        return Ok(Value::NIL);
    }
    io::print_to(ctx, out, args.pos)?;
    Ok(Value::NIL)
}

fn k_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let out = crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?;
    for &a in args.pos {
        let s = object::inspect(ctx, a)?;
        let mut b = string::bytes(s).to_vec();
        b.push(b'\n');
        io::write_bytes_to(ctx, out, &b)?;
    }
    // As CRuby, `p` flushes `$stdout` when it is an IO such as a File (the process's
    // standard output keeps its buffer, which is flushed at exit and before forks).
    if crate::core::io::io_ref(out).is_some_and(|io| io.fd != 1) {
        ctx.call_str(out, "flush", &[])?;
    }
    Ok(match args.pos.len() {
        0 => Value::NIL,
        1 => args.pos[0],
        _ => array::from_slice(ctx, args.pos),
    })
}

/// `pp(*objs)`: as in CRuby, loads the pp library (which redefines Kernel#pp) and calls
/// it; without the standard library, prints like `p`.
fn k_pp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let loaded = match crate::core::load::require(ctx, "pp") {
        Ok(_) => true,
        Err(crate::error::Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().load_error) => false,
        Err(e) => return Err(e),
    };
    let pp = ctx.intern("pp");
    let k = ctx.c().kernel;
    let replaced = crate::core::module::find_method(ctx, k, pp).is_some_and(|me| !matches!(me.body, crate::core::module::MethodBody::Builtin { .. }));
    if loaded && replaced {
        return ctx.call_kw(recv, pp, args.pos, args.kw, args.block);
    }
    k_p(ctx, recv, args)
}

fn k_putc(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let out = crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?;
    let putc = ctx.intern("putc");
    ctx.call(out, putc, args.pos)
}

fn k_printf(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Ok(Value::NIL);
    }
    let (out, rest) = if string::is_string(args.pos[0]) {
        (crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?, args.pos)
    } else {
        (args.pos[0], &args.pos[1..])
    };
    if rest.is_empty() {
        return Ok(Value::NIL);
    }
    let s = format_impl(ctx, rest[0], &rest[1..])?;
    io::write_bytes_to(ctx, out, string::bytes(s))?;
    Ok(Value::NIL)
}

fn k_format(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    format_impl(ctx, args.pos[0], &args.pos[1..])
}

/// `format(fmt, *args)`.
pub fn format_impl(ctx: &mut Ctx, fmt: Value, args: &[Value]) -> Result<Value> {
    let f = string::to_str_arg(ctx, fmt)?;
    crate::core::format::sprintf(ctx, f, args)
}

// ---- conversions ----

fn exception_kw(ctx: &mut Ctx, args: &Args) -> Result<bool> {
    match args.kwarg(ctx, "exception") {
        None => Ok(true),
        Some(v) if v == Value::TRUE => Ok(true),
        Some(v) if v == Value::FALSE => Ok(false),
        Some(v) => {
            let s = object::inspect_string(ctx, v)?;
            Err(ctx.arg_error(&format!("expected true or false as exception: {s}")))
        }
    }
}

fn k_integer(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = exception_kw(ctx, args)?;
    let r = integer_conv(ctx, args);
    match r {
        Ok(v) => Ok(v),
        Err(Unwind::Raise(_)) if !raise => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

fn integer_conv(ctx: &mut Ctx, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    let base = match args.pos.get(1) {
        Some(&b) if !b.is_nil() => Some(integer::to_i64_arg(ctx, b)?),
        _ => None,
    };
    if let Some(b) = base {
        if !string::is_string(v) {
            if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
                let s = string::to_str_arg(ctx, v)?;
                return integer_conv(ctx, &Args::new(&[s, Value::fixnum(b)]));
            }
            return Err(ctx.arg_error("base specified for non string value"));
        }
        if b < 0 || b == 1 || b > 36 {
            return Err(ctx.arg_error(&format!("invalid radix {b}")));
        }
    }
    if string::is_string(v) {
        if string::bytes(v).contains(&0) {
            return Err(ctx.arg_error("string contains null byte"));
        }
        return match integer::parse_int(string::bytes(v), base.unwrap_or(0) as i32, true) {
            Some(n) => Ok(crate::core::bignum::normalize(ctx, n)),
            None => {
                let q = string::to_rust_string_lossy(string::new_from_bytes(ctx, &string::inspect_bytes(string::bytes(v), string::encoding(v))));
                Err(ctx.arg_error(&format!("invalid value for Integer(): {q}")))
            }
        };
    }
    if integer::is_integer(v) {
        return Ok(v);
    }
    if float::is_float(v) {
        let f = float::get(v);
        return float::to_integer(ctx, f.trunc());
    }
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Integer"));
    }
    if ctx.respond_to(v, sym::TO_INT, true) {
        let r = ctx.call(v, sym::TO_INT, &[])?;
        if integer::is_integer(r) {
            return Ok(r);
        }
    }
    if ctx.respond_to(v, sym::TO_I, true) {
        let r = ctx.call(v, sym::TO_I, &[])?;
        if integer::is_integer(r) {
            return Ok(r);
        }
        let cname = object::class_name_of(ctx, v);
        let rname = object::class_name_of(ctx, r);
        return Err(ctx.type_error(&format!("can't convert {cname} into Integer ({cname}#to_i gives {rname})")));
    }
    Err(ctx.conversion_error(v, "Integer"))
}

fn k_float(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let raise = exception_kw(ctx, args)?;
    let v = args.pos[0];
    let r = (|| -> Result<Value> {
        if string::is_string(v) {
            if string::bytes(v).contains(&0) {
                return Err(ctx.arg_error("string for Float contains null byte"));
            }
            return match float::parse_float(string::bytes(v), true) {
                Some(f) => {
                    if f.is_infinite() {
                        float::warn_out_of_range(ctx, string::bytes(v));
                    }
                    Ok(float::new(ctx, f))
                }
                None => {
                    let q = String::from_utf8_lossy(&string::inspect_bytes(string::bytes(v), string::encoding(v))).into_owned();
                    Err(ctx.arg_error(&format!("invalid value for Float(): {q}")))
                }
            };
        }
        if float::is_float(v) {
            return Ok(v);
        }
        if v.is_nil() {
            return Err(ctx.type_error("can't convert nil into Float"));
        }
        let f = crate::core::numeric::to_f64(ctx, v)?;
        Ok(float::new(ctx, f))
    })();
    match r {
        Ok(v) => Ok(v),
        Err(Unwind::Raise(_)) if !raise => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

/// `String(v)` (CRuby's `rb_String`): `to_str`, else `to_s`, each found as
/// `rb_check_funcall` finds methods (a user `respond_to?` and `method_missing` count).
fn k_string(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if string::is_string(v) {
        return Ok(v);
    }
    if let Some(s) = string::try_to_str(ctx, v)? {
        return Ok(s);
    }
    let cname = object::type_name_for_error(ctx, v);
    match crate::core::convert::check_funcall(ctx, v, sym::TO_S, &[])? {
        Some(r) if string::is_string(r) => Ok(r),
        Some(r) => {
            let rname = object::type_name_for_error(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} into String ({cname}#to_s gives {rname})")))
        }
        None => Err(ctx.type_error(&format!("can't convert {cname} into String"))),
    }
}

fn k_array(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if v.is_nil() {
        return Ok(array::new(ctx));
    }
    if let Some(a) = array::try_to_ary(ctx, v)? {
        return Ok(a);
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_A, true) {
        let r = ctx.call(v, sym::TO_A, &[])?;
        if array::is_array(r) {
            return Ok(r);
        }
        if !r.is_nil() {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            return Err(ctx.type_error(&format!("can't convert {cname} into Array ({cname}#to_a gives {rname})")));
        }
    }
    Ok(array::from_slice(ctx, &[v]))
}

fn k_hash(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let v = args.pos[0];
    if v.is_nil() || (array::is_array(v) && array::len(v) == 0) {
        return Ok(hash::new(ctx));
    }
    hash::to_hash_arg(ctx, v)
}

// ---- exceptions and control ----

/// Builds the exception object for `raise args`.
pub fn make_exception(ctx: &mut Ctx, args: &[Value]) -> Result<Value> {
    if args.is_empty() {
        let cur = ctx.stacks.errinfo;
        if !cur.is_nil() {
            return Ok(cur);
        }
        // No backtrace yet: raise records the caller's, without its own frame.
        // An empty message (reported as "unhandled exception" if uncaught).
        let e = crate::core::exception::allocate(ctx, ctx.c().runtime_error);
        let m = string::new_utf8(ctx, "");
        crate::core::exception::set_message(ctx, e, m);
        return Ok(e);
    }
    let first = args[0];
    if string::is_string(first) && args.len() == 1 {
        let e = crate::core::exception::allocate(ctx, ctx.c().runtime_error);
        crate::core::exception::set_message(ctx, e, first);
        return Ok(e);
    }
    if args.len() > 3 {
        return Err(ctx.arity_error(args.len(), 0, Some(3)));
    }
    if !ctx.respond_to(first, sym::EXCEPTION, true) {
        return Err(ctx.type_error("exception class/object expected"));
    }
    let e = if args.len() >= 2 { ctx.call(first, sym::EXCEPTION, &[args[1]])? } else { ctx.call(first, sym::EXCEPTION, &[])? };
    if !object::is_a(ctx, e, ctx.c().exception) {
        return Err(ctx.type_error("exception object expected"));
    }
    if let Some(&bt) = args.get(2) {
        ctx.call(e, sym::SET_BACKTRACE, &[bt])?;
    }
    Ok(e)
}

fn k_raise(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let cause_kw = args.kwarg(ctx, "cause");
    if cause_kw.is_some() && args.pos.is_empty() {
        return Err(ctx.arg_error("only cause is given with no arguments"));
    }
    // Keywords other than `cause:` go to `exception` as a Hash (CRuby's compatibility).
    let mut pos = args.pos.to_vec();
    if let Some(kw) = args.kw.filter(|&k| hash::len(k) > 0) {
        let extra = hash::new(ctx);
        for (k, v) in hash::pairs(kw) {
            if k != Value::symbol(ctx.intern("cause")) {
                hash::aset(ctx, extra, k, v)?;
            }
        }
        if hash::len(extra) > 0 {
            pos.push(extra);
        }
    }
    let pos = array::from_vec(ctx, pos);
    let e = make_exception(ctx, &array::to_vec(pos))?;
    if object::ivar_get(ctx, e, sym::BT).is_nil() {
        exception::capture_backtrace_from_caller(ctx, e);
    }
    match cause_kw {
        // An exception is never its own cause (the keyword is ignored then).
        Some(c) if c == e => {}
        Some(c) => {
            if !c.is_nil() && !object::is_a(ctx, c, ctx.c().exception) {
                return Err(ctx.type_error("exception object expected"));
            }
            let mut cur = c;
            while !cur.is_nil() {
                if cur == e {
                    return Err(ctx.arg_error("circular causes"));
                }
                cur = object::ivar_get(ctx, cur, sym::CAUSE);
            }
            object::ivar_set_raw(ctx, e, sym::CAUSE, c);
        }
        None => {
            // `$!` becomes the cause, unless that would make a cycle (re-raising an
            // exception that is already the cause of `$!`).
            let cur = ctx.stacks.errinfo;
            if !cur.is_nil() && cur != e && !object::ivar_defined(ctx, e, sym::CAUSE) {
                let mut c = cur;
                let mut circular = false;
                while !c.is_nil() && !circular {
                    circular = c == e;
                    c = object::ivar_get(ctx, c, sym::CAUSE);
                }
                if !circular {
                    object::ivar_set_raw(ctx, e, sym::CAUSE, cur);
                }
            }
        }
    }
    Err(Unwind::Raise(e))
}

fn k_loop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        let inf = float::new(ctx, f64::INFINITY);
        return crate::core::enumerator::enum_for(ctx, recv, "loop", &[], Some(inf));
    };
    loop {
        match ctx.yield_block(&b, &[]) {
            Ok(_) => {}
            Err(Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().stop_iteration) => {
                return Ok(object::ivar_get(ctx, e, sym::RESULT));
            }
            Err(e) => return Err(e),
        }
    }
}

fn k_catch(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let tag = match args.pos.first() {
        Some(&t) => t,
        None => object::new_object(ctx, ctx.c().object),
    };
    let b = args.need_block(ctx)?;
    ctx.stacks.catch_tags.push(tag);
    let r = ctx.yield1(&b, tag);
    ctx.stacks.catch_tags.pop();
    match r {
        Err(Unwind::Throw { tag: t, value }) if t == tag => Ok(value),
        other => other,
    }
}

fn k_throw(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let tag = args.pos[0];
    let value = args.pos.get(1).copied().unwrap_or(Value::NIL);
    if !ctx.stacks.catch_tags.contains(&tag) {
        return Err(uncaught_throw(ctx, tag, value));
    }
    Err(Unwind::Throw { tag, value })
}

/// `UncaughtThrowError: uncaught throw :tag`, with its `tag` and `value`.
pub fn uncaught_throw(ctx: &mut Ctx, tag: Value, value: Value) -> Unwind {
    let s = match object::inspect_string(ctx, tag) {
        Ok(s) => s,
        Err(e) => return e,
    };
    let e = ctx.new_error(ctx.c().uncaught_throw_error, &format!("uncaught throw {s}"));
    let t = ctx.intern("@tag");
    let v = ctx.intern("@value");
    object::ivar_set_raw(ctx, e, t, tag);
    object::ivar_set_raw(ctx, e, v, value);
    Unwind::Raise(e)
}

fn k_block_given(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(match ops::caller_ruby_frame(ctx) {
        Some(fi) => ctx.stacks.frames[fi].block(&ctx.stacks.frames).is_some(),
        None => false,
    }))
}

fn k_lambda(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    match args.block {
        Some(crate::interp::Block::Captured(c)) => Ok(crate::core::proc::new_from_captured(ctx, &c, true)),
        // Ruby 3.3: a non-lambda Proc cannot become a lambda.
        Some(crate::interp::Block::Proc(p)) if crate::core::proc::is_lambda(p) => Ok(p),
        Some(crate::interp::Block::Proc(_)) => Err(ctx.arg_error("the lambda method requires a literal block")),
        None => Err(ctx.arg_error("tried to create Proc object without a block")),
    }
}

fn k_proc(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    match args.block {
        Some(b) => crate::core::proc::from_block(ctx, &b),
        None => Err(ctx.arg_error("tried to create Proc object without a block")),
    }
}

/// An exit status argument: true is 0, false 1, else an Integer (`to_int`, a Float
/// truncated).
fn exit_status_code(ctx: &mut Ctx, v: Option<Value>) -> Result<i32> {
    match v {
        None => Ok(0),
        Some(v) if v == Value::TRUE => Ok(0),
        Some(v) if v == Value::FALSE => Ok(1),
        Some(v) => Ok(integer::to_int_arg(ctx, v)?),
    }
}

pub(crate) fn k_exit(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let status = Value::fixnum(exit_status_code(ctx, args.pos.first().copied())? as i64);
    let e = object::allocate(ctx, ctx.c().system_exit)?;
    let msg = string::new_utf8(ctx, "exit");
    ctx.call(e, sym::INITIALIZE, &[status, msg])?;
    exception::ensure_backtrace(ctx, e);
    Err(Unwind::Raise(e))
}

pub(crate) fn k_exit_bang(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let code = match args.pos.first() {
        None => 1,
        Some(&v) => exit_status_code(ctx, Some(v))?,
    };
    Err(Unwind::Exit(code))
}

pub(crate) fn k_abort(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let msg = match args.pos.first() {
        Some(&m) => {
            let s = string::to_str_arg(ctx, m)?;
            let mut b = string::bytes(s).to_vec();
            b.push(b'\n');
            let sv = string::new_from_bytes(ctx, &b);
            io::write_to_stderr_object(ctx, sv)?;
            s
        }
        None => string::new_utf8(ctx, "exit"),
    };
    let e = object::allocate(ctx, ctx.c().system_exit)?;
    ctx.call(e, sym::INITIALIZE, &[Value::FALSE, msg])?;
    exception::ensure_backtrace(ctx, e);
    Err(Unwind::Raise(e))
}

fn k_at_exit(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(ctx.arg_error("called without a block"));
    };
    let p = crate::core::proc::from_block(ctx, &b)?;
    ctx.vm().at_exit.borrow_mut().push(p);
    Ok(p)
}

fn k_register_end_block(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(crate::interp::Block::Captured(c)) = args.block else { return Ok(Value::NIL) };
    // An END block registers once, however often its statement runs.
    let already = ctx.vm().at_exit.borrow().iter().any(|&p| crate::core::proc::captured(p).is_some_and(|pc| pc.iseq == c.iseq));
    if !already {
        let p = crate::core::proc::new_from_captured(ctx, &c, false);
        ctx.vm().at_exit.borrow_mut().push(p);
    }
    Ok(Value::NIL)
}

fn k_warn(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if crate::core::globals::verbose_level(ctx) == 0 {
        return Ok(Value::NIL);
    }
    let uplevel = match args.kwarg(ctx, "uplevel") {
        Some(v) if !v.is_nil() => {
            let n = integer::to_i64_arg(ctx, v)?;
            if n < 0 {
                return Err(ctx.arg_error(&format!("negative level ({n})")));
            }
            Some(n as usize)
        }
        _ => None,
    };
    // category: a Symbol, String or to_str-convertible name of a known category.
    let category = match args.kwarg(ctx, "category") {
        Some(cat) if !cat.is_nil() => {
            // rb_to_symbol_type: a Symbol or String, or anything with to_sym.
            let to_sym = ctx.intern("to_sym");
            let cat = if cat.is_symbol() || string::is_string(cat) || !ctx.respond_to(cat, to_sym, true) { cat } else { ctx.call(cat, to_sym, &[])? };
            let id = crate::core::symbol::to_sym_id(ctx, cat)?;
            let name = ctx.sym_str(id).to_string();
            if !matches!(name.as_str(), "deprecated" | "experimental" | "performance" | "strict_unused_block") {
                return Err(ctx.arg_error(&format!("unknown category: {name}")));
            }
            Some(name)
        }
        _ => None,
    };
    let mut msgs: Vec<Value> = Vec::new();
    for &a in args.pos {
        if array::is_array(a) {
            msgs.extend(array::to_vec(a));
        } else {
            msgs.push(a);
        }
    }
    if msgs.is_empty() {
        return Ok(Value::NIL);
    }
    let mut out = Vec::new();
    if let Some(up) = uplevel {
        let bt = exception::current_backtrace(ctx, 1);
        let ruby_frames: Vec<_> = bt.frames.iter().filter(|f| &*f.path != "<internal>").collect();
        if let Some(f) = ruby_frames.get(up) {
            out.extend_from_slice(format!("{}:{}: warning: ", f.path, f.line).as_bytes());
        } else {
            out.extend_from_slice(b"warning: ");
        }
    }
    for m in msgs {
        let s = string::to_s(ctx, m)?;
        out.extend_from_slice(string::bytes(s));
        if !out.ends_with(b"\n") {
            out.push(b'\n');
        }
    }
    let s = string::new_from_bytes(ctx, &out);
    // Warning#warn calling super lands here with self = Warning: write it out directly
    // (calling Warning.warn again would recurse).
    let w = crate::core::warning::warning_module(ctx);
    if !w.is_nil() && recv == w {
        io::write_to_stderr_object(ctx, s)?;
        return Ok(Value::NIL);
    }
    if category.as_deref().is_some_and(|c| !crate::core::warning::enabled(ctx, c)) {
        return Ok(Value::NIL);
    }
    crate::core::warning::emit_from_warn(ctx, s, category.as_deref())?;
    Ok(Value::NIL)
}

fn k_sleep(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let start = std::time::Instant::now();
    if let Some(s) = crate::fiber::scheduler::active(ctx) {
        // The duration goes to the scheduler as given (CRuby's `kernel_sleep(*args)`).
        crate::fiber::scheduler::kernel_sleep(ctx, s, args.pos)?;
        return Ok(Value::fixnum(start.elapsed().as_secs_f64().round() as i64));
    }
    let secs = sleep_seconds(ctx, args.pos)?;
    crate::core::thread::sleep(ctx, secs)?;
    Ok(Value::fixnum(start.elapsed().as_secs_f64().round() as i64))
}

/// The duration of `sleep(*args)` in seconds (None: forever), checked as `Kernel#sleep`
/// checks it.
pub fn sleep_seconds(ctx: &mut Ctx, args: &[Value]) -> Result<Option<f64>> {
    match args.first() {
        Some(&v) if !v.is_nil() => {
            let divmod = ctx.intern("divmod");
            let secs = if integer::is_integer(v) || float::is_float(v) || crate::core::rational::is_rational(v) {
                crate::core::numeric::to_f64(ctx, v)?
            } else if let Some(a) = crate::core::convert::check_funcall(ctx, v, divmod, &[Value::fixnum(1)])?.filter(|a| crate::core::array::is_array(*a)) {
                // Any object with `divmod` (Ruby 3.3): whole seconds and the fraction.
                let parts = crate::core::array::to_vec(a);
                let whole = crate::core::numeric::to_f64(ctx, parts.first().copied().unwrap_or(Value::fixnum(0)))?;
                let frac = crate::core::numeric::to_f64(ctx, parts.get(1).copied().unwrap_or(Value::fixnum(0)))?;
                whole + frac
            } else {
                let cname = object::class_name_of(ctx, v);
                return Err(ctx.type_error(&format!("can't convert {cname} into time interval")));
            };
            if secs < 0.0 {
                return Err(ctx.arg_error("time interval must not be negative"));
            }
            Ok(Some(secs))
        }
        _ => Ok(None),
    }
}


fn k_method_name(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let Some(fi) = ops::caller_ruby_frame(ctx) else { return Ok(Value::NIL) };
    let f = &ctx.stacks.frames[fi];
    let mid = f.mid;
    let owner = f.owner;
    match mid {
        Some(m) if !owner.is_nil() => {
            let orig = crate::core::module::find_method(ctx, owner, m).map_or(m, |me| me.original_name);
            Ok(Value::symbol(orig))
        }
        _ => Ok(Value::NIL),
    }
}

/// `__callee__`: the name the running method was called by (an alias's own name).
fn k_callee(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let Some(fi) = ops::caller_ruby_frame(ctx) else { return Ok(Value::NIL) };
    let f = &ctx.stacks.frames[fi];
    Ok(match f.mid {
        Some(m) if !f.owner.is_nil() => Value::symbol(m),
        _ => Value::NIL,
    })
}

fn k_dir(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    if let Some(real) = caller_realpath(ctx) {
        let dir = std::path::Path::new(&*real).parent().map_or_else(|| "/".into(), |d| d.to_string_lossy().into_owned());
        return Ok(string::new_utf8(ctx, &dir));
    }
    let (path, _) = caller_location(ctx);
    if path.starts_with('(') || &*path == "-" {
        return Ok(Value::NIL);
    }
    let p = std::path::Path::new(&*path);
    // A file name given to `eval` is taken as it is; a script's path is expanded.
    let in_eval = ops::caller_ruby_frame(ctx).is_some_and(|fi| ctx.stacks.frames[fi].iseq().kind == crate::compile::iseq::IseqKind::Eval);
    if in_eval {
        let dir = p.parent().map(|d| d.to_string_lossy().into_owned()).filter(|d| !d.is_empty()).unwrap_or_else(|| ".".into());
        return Ok(string::new_utf8(ctx, &dir));
    }
    let abs = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().unwrap_or_default().join(p) };
    // The real path, as CRuby's `rb_current_realfilepath` (`..` and symlinks resolved).
    let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
    let dir = abs.parent().map(|d| d.to_string_lossy().into_owned()).unwrap_or_else(|| ".".into());
    Ok(string::new_utf8(ctx, &dir))
}

fn k_caller(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (start, len) = caller_range(ctx, args)?;
    let bt = exception::current_backtrace(ctx, 1);
    let len = len.map(|l| l.count(start, bt.frames.len()));
    let frames: Vec<String> = bt.frames.iter().skip(start).take(len.unwrap_or(usize::MAX)).map(exception::BtFrame::to_line).collect();
    if start > bt.frames.len() {
        return Ok(Value::NIL);
    }
    let out = array::new(ctx);
    for f in frames {
        let s = string::new_utf8(ctx, &f);
        array::push(ctx, out, s);
    }
    Ok(out)
}

/// How many frames `caller`/`caller_locations` return.
#[derive(Copy, Clone)]
enum CallerLen {
    Count(usize),
    /// A range ending this many frames before the last one (`0..-1`: 0), inclusive.
    FromEnd(usize),
}

impl CallerLen {
    fn count(self, start: usize, total: usize) -> usize {
        match self {
            CallerLen::Count(n) => n,
            CallerLen::FromEnd(k) => total.saturating_sub(k).saturating_sub(start),
        }
    }
}

fn caller_range(ctx: &mut Ctx, args: &Args) -> Result<(usize, Option<CallerLen>)> {
    match (args.pos.first(), args.pos.get(1)) {
        (None, _) => Ok((1, None)),
        (Some(&a), None) if crate::core::range::is_range(a) => {
            let b = crate::core::range::begin(a);
            let e = crate::core::range::end(a);
            let s = if b.is_nil() { 0 } else { integer::to_i64_arg(ctx, b)? };
            let excl = crate::core::range::excl(a);
            let len = if e.is_nil() { None } else {
                let e = integer::to_i64_arg(ctx, e)?;
                if e < 0 {
                    // -1 is the last frame: stop |e| - 1 frames before the end (one more
                    // when the range excludes its end).
                    Some(CallerLen::FromEnd((-e - 1) as usize + usize::from(excl)))
                } else {
                    Some(CallerLen::Count(((e - s) + if excl { 0 } else { 1 }).max(0) as usize))
                }
            };
            Ok((s.max(0) as usize, len))
        }
        (Some(&a), l) => {
            let s = integer::to_i64_arg(ctx, a)?;
            if s < 0 {
                return Err(ctx.arg_error(&format!("negative level ({s})")));
            }
            let len = match l {
                Some(&l) if !l.is_nil() => {
                    let l = integer::to_i64_arg(ctx, l)?;
                    if l < 0 {
                        return Err(ctx.arg_error(&format!("negative size ({l})")));
                    }
                    Some(CallerLen::Count(l as usize))
                }
                _ => None,
            };
            Ok((s as usize, len))
        }
    }
}

fn k_caller_locations(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (start, len) = caller_range(ctx, args)?;
    let bt = exception::current_backtrace(ctx, 1);
    if start > bt.frames.len() {
        return Ok(Value::NIL);
    }
    let len = len.map(|l| l.count(start, bt.frames.len()));
    let frames: Vec<_> = bt.frames.iter().skip(start).take(len.unwrap_or(usize::MAX)).cloned().collect();
    locations_array(ctx, &frames)
}

/// A `Thread::Backtrace::Location`.
pub struct Location {
    pub frame: exception::BtFrame,
}

crate::data_obj!(Location);

pub fn is_location(v: Value) -> bool {
    data_ref::<Location>(v).is_some()
}

pub fn locations_array(ctx: &mut Ctx, frames: &[exception::BtFrame]) -> Result<Value> {
    let klass = location_class(ctx);
    let out = array::new(ctx);
    for f in frames {
        let loc = object::new_data(ctx, klass, Box::new(Location { frame: f.clone() }));
        array::push(ctx, out, loc);
    }
    Ok(out)
}

/// `Thread::Backtrace.limit`: the `--backtrace-limit` given, or -1.
fn bt_limit(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(ctx.vm().backtrace_limit.get()))
}

fn location_class(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("__location_class__");
    crate::core::module::body(ctx.c().object).const_get(id).map_or(ctx.c().object, |e| e.value)
}

pub fn location_frame(recv: Value) -> Option<&'static exception::BtFrame> {
    data_ref::<Location>(recv).map(|l| &l.frame)
}

fn loc_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let p = location_frame(recv).map(|f| f.path.clone()).unwrap_or_else(|| Arc::from(""));
    Ok(string::new_utf8(ctx, &p))
}
/// `absolute_path`: the canonical path of the frame's file, nil for eval'd code.
fn loc_absolute_path(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match location_frame(recv).and_then(|f| f.realpath.clone()) {
        Some(p) => Ok(string::new_utf8(ctx, &p)),
        None => Ok(Value::NIL),
    }
}
fn loc_lineno(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(location_frame(recv).map_or(0, |f| f.line) as i64))
}
fn loc_label(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let l = location_frame(recv).map(|f| f.label.clone()).unwrap_or_default();
    Ok(string::new_utf8(ctx, &l))
}
fn loc_base_label(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let l = location_frame(recv).map(|f| f.label.clone()).unwrap_or_default();
    let base = l.rsplit(" in ").next().unwrap_or(&l).to_string();
    let base = base.rsplit(['#', '.']).next().unwrap_or(&base).to_string();
    Ok(string::new_utf8(ctx, &base))
}
fn loc_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = location_frame(recv).map(exception::BtFrame::to_line).unwrap_or_default();
    Ok(string::new_utf8(ctx, &s))
}
fn loc_inspect(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = loc_to_s(ctx, recv, args)?;
    let q = string::inspect_bytes(string::bytes(s), string::encoding(s));
    Ok(string::new_from_bytes(ctx, &q))
}

// ---- eval and binding ----

fn k_binding(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    match ops::caller_ruby_frame(ctx) {
        Some(fi) => binding::from_frame(ctx, fi),
        None => Err(ctx.runtime_error("no Ruby frame for binding")),
    }
}

pub fn binding_from_captured(ctx: &mut Ctx, c: &crate::interp::Captured) -> Result<Value> {
    binding::from_captured(ctx, c)
}

fn k_eval(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let src = string::to_str_arg(ctx, args.pos[0])?;
    let b = match args.pos.get(1) {
        Some(&b) if !b.is_nil() => {
            if !binding::is_binding(b) {
                let cname = object::class_name_of(ctx, b);
                return Err(ctx.type_error(&format!("wrong argument type {cname} (expected binding)")));
            }
            b
        }
        _ => match ops::caller_ruby_frame(ctx) {
            Some(fi) => binding::from_frame(ctx, fi)?,
            None => return Err(ctx.runtime_error("no Ruby frame for eval")),
        },
    };
    let file = match args.pos.get(2) {
        Some(&f) => Some(string::str_arg(ctx, f)?),
        None => None,
    };
    let line = match args.pos.get(3) {
        Some(&l) => Some(integer::to_i64_arg(ctx, l)? as i32),
        None => None,
    };
    binding::eval_in(ctx, b, src, file, line)
}

/// `instance_eval(string)` / `class_eval(string)`.
pub fn eval_string_with_self(ctx: &mut Ctx, src: Value, self_: Value, cref_class: binding::EvalScope, file: Option<Value>, line: Option<Value>) -> Result<Value> {
    let src = string::to_str_arg(ctx, src)?;
    let file = match file {
        Some(f) => Some(string::str_arg(ctx, f)?),
        None => None,
    };
    let line = match line {
        Some(l) => Some(integer::to_i64_arg(ctx, l)? as i32),
        None => None,
    };
    let b = match ops::caller_ruby_frame(ctx) {
        Some(fi) => binding::from_frame(ctx, fi)?,
        None => return Err(ctx.runtime_error("no Ruby frame for eval")),
    };
    binding::eval_with_self(ctx, b, src, file, line, self_, cref_class)
}

fn k_local_variables(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    match ops::caller_ruby_frame(ctx) {
        Some(fi) => {
            let b = binding::from_frame(ctx, fi)?;
            binding::local_variables(ctx, b)
        }
        None => Ok(array::new(ctx)),
    }
}

/// `set_trace_func(nil)` (no hook installed) is accepted; installing a hook needs the
/// interpreter's event hooks, which come with TracePoint.
fn k_set_trace_func(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if args.pos[0].is_nil() {
        return Ok(Value::NIL);
    }
    Err(ctx.not_implemented("set_trace_func with a hook (event hooks come with TracePoint)"))
}

/// `syscall(num, *args)`: Integers pass as machine words, Strings as pointers to their
/// bytes (which the call may fill in).
fn k_syscall(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() > 7 {
        return Err(ctx.arg_error("too many arguments for syscall"));
    }
    let num = integer::to_i64_arg(ctx, args.pos[0])?;
    let mut words = [0 as libc::c_long; 6];
    for (i, &a) in args.pos[1..].iter().enumerate() {
        words[i] = if string::is_string(a) {
            string::modify(ctx, a)?;
            string::bytes_mut(a).heap_mut_ptr() as libc::c_long
        } else {
            integer::to_i64_arg(ctx, a)? as libc::c_long
        };
    }
    // SAFETY: the caller asked for this system call with these arguments; pointers given
    // are to String buffers that stay alive (they are arguments) during the call.
    let r = unsafe { libc::syscall(num as libc::c_long, words[0], words[1], words[2], words[3], words[4], words[5]) };
    if r == -1 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, ""));
    }
    Ok(Value::fixnum(r as i64))
}

fn k_trace_var(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    crate::core::globals::trace_var(ctx, args)
}

fn k_untrace_var(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    crate::core::globals::untrace_var(ctx, args)
}

fn k_global_variables(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(crate::core::globals::names(ctx))
}

/// Compiles and runs a whole program as the main script or a required file.
pub fn run_program(ctx: &mut Ctx, source: &[u8], path: &str, main: bool) -> Result<Value> {
    run_program_with(ctx, source, path, main, crate::compile::CommandLine::default())
}

/// `run_program`, the main program wrapped in a `gets` loop by `-n`/`-p`.
pub fn run_program_with(ctx: &mut Ctx, source: &[u8], path: &str, main: bool, command_line: crate::compile::CommandLine) -> Result<Value> {
    let opts = program_compile_options(ctx, path, main);
    let (iseq, data) = crate::compile::compile_program_with(ctx, source, &opts, command_line)?;
    if crate::core::tracepoint::tracing(ctx) {
        let keep = ctx.protect(iseq);
        let r = crate::core::tracepoint::script_compiled(ctx, Value::NIL);
        ctx.unprotect(keep);
        r?;
    }
    crate::stdlib::coverage::register(ctx, path, iseq, source);
    run_compiled_program(ctx, iseq, main, data.map(|offset| (path, offset)))
}

/// How a program file is compiled: as the main script or a required file, with
/// `--enable-frozen-string-literal`, and its real path.
pub fn program_compile_options(ctx: &mut Ctx, path: &str, main: bool) -> CompileOptions {
    let opts = if main { CompileOptions::main(path) } else { CompileOptions::required(path) };
    // The file's real path is taken now: the file may be moved or removed while it runs.
    let realpath = if path == "-e" || path == "-" { None } else { std::fs::canonicalize(path).ok().map(|p| p.to_string_lossy().into_owned()) };
    CompileOptions { frozen_string_literal: ctx.vm().frozen_string_literals.get().then_some(true), realpath, ..opts }
}

/// Runs a compiled top-level program (parsed just now, or loaded from bytecode) at top
/// level: as the main script (its locals are `TOPLEVEL_BINDING`'s) or as a required file.
/// `data`: the file `DATA` reads and the offset where the bytes after `__END__` start.
pub fn run_compiled_program(ctx: &mut Ctx, iseq: Value, main: bool, data: Option<(&str, usize)>) -> Result<Value> {
    let keep = ctx.protect(iseq);
    let main_obj = ctx.vm().main_obj.get();
    let cref = ctx.vm().top_cref.get();
    if !main {
        let r = crate::interp::call::run_iseq_frame(ctx, iseq, FrameKind::Top, main_obj, cref, Value::NIL, Value::NIL, None, None);
        ctx.unprotect(keep);
        return Ok(r?.0);
    }
    if let Some((file, offset)) = data {
        // DATA reads the script file itself (absent for -e and stdin programs).
        if std::path::Path::new(file).is_file() {
            if let Err(e) = crate::core::file::define_data(ctx, file, offset) {
                ctx.unprotect(keep);
                return Err(e);
            }
        }
    }
    let names = crate::compile::iseq::iseq_of(iseq).local_names.clone();
    let outer = crate::core::binding::toplevel_env(ctx);
    let mut attach = |ctx: &mut Ctx, env: Value| crate::core::binding::attach_main(ctx, env, names.clone());
    let r = crate::interp::call::run_iseq_frame_hooked(ctx, iseq, FrameKind::Top, main_obj, cref, outer, Value::NIL, None, None, Some(&mut attach));
    ctx.unprotect(keep);
    Ok(r?.0)
}

/// Copies a Data object for `dup`/`clone` if its type supports it.
pub fn dup_data(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    let klass = object::real_class_of(ctx, v);
    if io::io_ref(v).is_some() {
        return io::dup_io(ctx, v, klass).map(Some);
    }
    if let Some(r) = data_ref::<crate::core::rational::RationalObj>(v) {
        let (n, d) = (r.num, r.den);
        let _ = klass;
        return Ok(Some(crate::core::rational::new_reduced(ctx, n, d)?));
    }
    if let Some(b) = crate::core::binding::dup(ctx, v) {
        return Ok(Some(b));
    }
    if let Some(m) = crate::core::matchdata::dup(ctx, v, klass) {
        return Ok(Some(m));
    }
    if let Some(m) = crate::core::method::dup(ctx, v) {
        return Ok(Some(m));
    }
    crate::core::struct_::dup_data(ctx, v, klass)
}

fn k_encoding(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(crate::core::encoding::encoding_object(ctx, crate::core::encoding::UTF_8))
}

fn k_frozen_literal_stub(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

/// `chomp`/`chop` of `-n`/`-p` programs: `$_` replaced by `$_.chomp(*args)`/`$_.chop`.
fn last_line_edit(ctx: &mut Ctx, meth: &str, args: &[Value]) -> Result<Value> {
    let line = ops::get_caller_last_line(ctx);
    if !crate::core::string::is_string(line) {
        return Err(ctx.conversion_error(line, "String"));
    }
    let edited = ctx.call_str(line, meth, args)?;
    ops::set_caller_last_line(ctx, edited);
    Ok(edited)
}

fn k_chomp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    last_line_edit(ctx, "chomp", args.pos)
}

fn k_chop(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    last_line_edit(ctx, "chop", &[])
}

/// The Kernel methods that exist only in `-n`/`-p` programs (as in CRuby).
pub fn define_line_loop_methods(ctx: &mut Ctx) {
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("chomp", k_chomp, [0..=1], Unsafe, ModuleFunction),
        ("chop", k_chop, [0], Unsafe, ModuleFunction),
    ]);
}

pub fn init(ctx: &mut Ctx) {
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("puts", k_puts, [0..], Unsafe, ModuleFunction),
        ("print", k_print, [0..], Unsafe, ModuleFunction),
        ("p", k_p, [0..], Unsafe, ModuleFunction),
        ("pp", k_pp, [0..], Unsafe, ModuleFunction),
        ("putc", k_putc, [1], Unsafe, ModuleFunction),
        ("printf", k_printf, [0..], Unsafe, ModuleFunction),
        ("format", k_format, [0..], Safe, ModuleFunction),
        ("sprintf", k_format, [0..], Safe, ModuleFunction),
        ("Integer", k_integer, [1..=2], Safe, ModuleFunction, Kw),
        ("Float", k_float, [1], Safe, ModuleFunction, Kw),
        ("String", k_string, [1], Safe, ModuleFunction),
        ("Array", k_array, [1], Safe, ModuleFunction),
        ("Hash", k_hash, [1], Safe, ModuleFunction),
        ("raise", k_raise, [0..], Safe, ModuleFunction, Kw),
        ("fail", k_raise, [0..], Safe, ModuleFunction, Kw),
        ("loop", k_loop, [0], Safe, ModuleFunction),
        ("catch", k_catch, [0..=1], Safe, ModuleFunction),
        ("throw", k_throw, [1..=2], Safe, ModuleFunction),
        ("block_given?", k_block_given, [0], Safe, ModuleFunction),
        ("iterator?", k_block_given, [0], Safe, ModuleFunction),
        ("lambda", k_lambda, [0], Safe, ModuleFunction),
        ("proc", k_proc, [0], Safe, ModuleFunction),
        ("exit", k_exit, [0..=1], Safe, ModuleFunction),
        ("exit!", k_exit_bang, [0..=1], Safe, ModuleFunction),
        ("abort", k_abort, [0..=1], Unsafe, ModuleFunction),
        ("at_exit", k_at_exit, [0], Unsafe, ModuleFunction),
        ("__register_end_block__", k_register_end_block, [0], Unsafe, ModuleFunction),
        ("warn", k_warn, [0..], Unsafe, ModuleFunction, Kw),
        ("sleep", k_sleep, [0..=1], Safe, ModuleFunction),
        ("__method__", k_method_name, [0], Safe, ModuleFunction),
        ("__callee__", k_callee, [0], Safe, ModuleFunction),
        ("__dir__", k_dir, [0], Safe, ModuleFunction),
        ("caller", k_caller, [0..=2], Safe, ModuleFunction),
        ("caller_locations", k_caller_locations, [0..=2], Safe, ModuleFunction),
        ("binding", k_binding, [0], Safe, ModuleFunction),
        ("eval", k_eval, [1..=4], Unsafe, ModuleFunction),
        ("local_variables", k_local_variables, [0], Safe, ModuleFunction),
        ("global_variables", k_global_variables, [0], Safe, ModuleFunction),
        ("trace_var", k_trace_var, [1..=2], Unsafe, ModuleFunction),
        ("syscall", k_syscall, [1..], Unsafe, ModuleFunction),
        ("set_trace_func", k_set_trace_func, [1], Unsafe, ModuleFunction),
        ("untrace_var", k_untrace_var, [1..=2], Unsafe, ModuleFunction),
        ("__ENCODING__", k_encoding, [0], Safe, ModuleFunction),
    ]);
    let _ = k_frozen_literal_stub;
    let _ = IseqKind::Eval;
    // Thread::Backtrace::Location
    let obj = ctx.c().object;
    let thread = ctx.c().thread;
    let backtrace = crate::core::module_methods::define_class_under(ctx, thread, "Backtrace", obj);
    let loc = crate::core::module_methods::define_class_under(ctx, backtrace, "Location", obj);
    crate::methods!(ctx, backtrace, [("limit", bt_limit, [0], Safe, Singleton)]);
    let id = ctx.intern("__location_class__");
    crate::core::module::body(obj).const_set(id, loc);
    crate::methods!(ctx, loc, [
        ("path", loc_path, [0], Safe),
        ("absolute_path", loc_absolute_path, [0], Safe),
        ("lineno", loc_lineno, [0], Safe),
        ("label", loc_label, [0], Safe),
        ("base_label", loc_base_label, [0], Safe),
        ("to_s", loc_to_s, [0], Safe),
        ("inspect", loc_inspect, [0], Safe),
    ]);
}
