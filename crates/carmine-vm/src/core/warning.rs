//! The `Warning` module: warning categories and `Warning.warn`, through which
//! every warning (Kernel#warn and the VM's own) is written, so a program can
//! redefine it.
//!
//! Invariants: a category's switch is stored as a hidden instance variable of
//! the Warning module (no VM-global state); `deprecated`, `performance` and
//! `strict_unused_block` start off, `experimental` on, as in CRuby 3.4.

use crate::core::{array, io, module, object, string};
use crate::interp::Args;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Each category: its name, whether it is on at start, and the hidden ivar of `Warning`
/// holding its switch (predefined: calls that may warn read it).
const CATEGORIES: &[(&str, bool, SymId)] = &[
    ("deprecated", false, sym::WARNING_DEPRECATED),
    ("experimental", true, sym::WARNING_EXPERIMENTAL),
    ("performance", false, sym::WARNING_PERFORMANCE),
    ("strict_unused_block", false, sym::WARNING_STRICT_UNUSED_BLOCK),
];

pub fn warning_module(ctx: &mut Ctx) -> Value {
    let object = ctx.c().object;
    module::body(object).const_get(sym::WARNING).map_or(Value::NIL, |e| e.value)
}

/// The hidden ivar holding the switch of `category`, if it is one of `CATEGORIES`.
fn switch_ivar(category: &str) -> Option<SymId> {
    CATEGORIES.iter().find(|(c, _, _)| *c == category).map(|&(_, _, id)| id)
}

/// The hidden ivar holding a category's switch, or an ArgumentError.
fn category_ivar(ctx: &mut Ctx, cat: Value) -> Result<SymId> {
    let name = match cat.as_symbol() {
        Some(s) => ctx.sym_str(s),
        None => {
            let cname = object::class_name_of(ctx, cat);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Symbol)")));
        }
    };
    switch_ivar(&name).ok_or_else(|| ctx.arg_error(&format!("unknown category: {name}")))
}

/// Switches a category on or off (`-w` turns `deprecated` on, as in CRuby).
pub fn set_enabled(ctx: &mut Ctx, category: &str, on: bool) {
    let w = warning_module(ctx);
    if w.is_nil() {
        return;
    }
    if let Some(id) = switch_ivar(category) {
        object::ivar_set_raw(ctx, w, id, Value::bool(on));
    }
}

/// Whether warnings of `category` ("deprecated", ...) are enabled.
pub fn enabled(ctx: &mut Ctx, category: &str) -> bool {
    let w = warning_module(ctx);
    if w.is_nil() {
        return false;
    }
    switch_ivar(category).is_some_and(|id| object::ivar_get(ctx, w, id).truthy())
}

/// Emits `msg` (a complete line) through `Warning.warn`, with a category.
pub fn emit(ctx: &mut Ctx, msg: &str, category: Option<&str>) -> Result<()> {
    let s = string::new_utf8(ctx, msg);
    emit_value(ctx, s, category)
}

/// `Kernel#warn`'s call of `Warning.warn`: `category:` (nil when none) is passed to a
/// `warn` that takes keywords.
pub fn emit_from_warn(ctx: &mut Ctx, s: Value, category: Option<&str>) -> Result<()> {
    let w = warning_module(ctx);
    if w.is_nil() {
        return io::write_to_stderr_object(ctx, s);
    }
    let warn_id = ctx.intern("warn");
    let wk = crate::interp::class_of(ctx, w);
    let takes_kw = match module::find_method(ctx, wk, warn_id) {
        // A `warn(msg)` taking exactly one argument gets no keywords.
        Some(me) if !matches!(me.body, module::MethodBody::Builtin { .. }) => {
            let m = ctx.call_str(w, "method", &[Value::symbol(warn_id)])?;
            let arity = ctx.call_str(m, "arity", &[])?;
            arity.as_fixnum() != Some(1)
        }
        _ => true,
    };
    if !takes_kw {
        ctx.call_str(w, "warn", &[s])?;
        return Ok(());
    }
    let kw = crate::core::hash::new(ctx);
    let key = Value::symbol(ctx.intern("category"));
    let val = match category {
        Some(c) => Value::symbol(ctx.intern(c)),
        None => Value::NIL,
    };
    crate::core::hash::aset(ctx, kw, key, val)?;
    ctx.call_kw(w, warn_id, &[s], Some(kw), None)?;
    Ok(())
}

pub fn emit_value(ctx: &mut Ctx, s: Value, category: Option<&str>) -> Result<()> {
    let w = warning_module(ctx);
    if w.is_nil() {
        return io::write_to_stderr_object(ctx, s);
    }
    // A redefined Warning.warn taking only the message gets no category.
    let warn_id = ctx.intern("warn");
    let wk = crate::interp::class_of(ctx, w);
    let category = match (category, module::find_method(ctx, wk, warn_id)) {
        (Some(c), Some(me)) if !matches!(me.body, module::MethodBody::Builtin { .. }) => {
            let m = ctx.call_str(w, "method", &[Value::symbol(warn_id)])?;
            let arity = ctx.call_str(m, "arity", &[])?;
            if arity.as_fixnum() == Some(1) { None } else { Some(c) }
        }
        (c, _) => c,
    };
    match category {
        Some(c) => {
            let kw = crate::core::hash::new(ctx);
            let key = Value::symbol(ctx.intern("category"));
            let val = Value::symbol(ctx.intern(c));
            crate::core::hash::aset(ctx, kw, key, val)?;
            let warn = ctx.intern("warn");
            ctx.call_kw(w, warn, &[s], Some(kw), None)?;
        }
        None => {
            ctx.call_str(w, "warn", &[s])?;
        }
    }
    Ok(())
}

/// A deprecation warning ("warning: ... is deprecated"), if enabled.
pub fn deprecated(ctx: &mut Ctx, what: &str) -> Result<()> {
    if !enabled(ctx, "deprecated") || crate::core::globals::verbose_level(ctx) == 0 {
        return Ok(());
    }
    let (path, line) = crate::core::kernel::caller_location(ctx);
    emit(ctx, &format!("{path}:{line}: warning: {what} is deprecated\n"), Some("deprecated"))
}

/// A deprecation warning with CRuby's "will be removed" wording and a hint, if enabled.
pub fn deprecated_with(ctx: &mut Ctx, what: &str, hint: &str) -> Result<()> {
    if !enabled(ctx, "deprecated") {
        return Ok(());
    }
    let (path, line) = crate::core::kernel::caller_location(ctx);
    emit(ctx, &format!("{path}:{line}: warning: {what} is deprecated and will be removed in Ruby 3.5; {hint}\n"), Some("deprecated"))
}

fn w_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = category_ivar(ctx, args.pos[0])?;
    Ok(Value::bool(object::ivar_get(ctx, recv, id).truthy()))
}

fn w_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = category_ivar(ctx, args.pos[0])?;
    let v = Value::bool(args.pos[1].truthy());
    object::ivar_set_raw(ctx, recv, id, v);
    Ok(args.pos[1])
}

fn w_categories(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let list: Vec<Value> = CATEGORIES.iter().map(|(c, _, _)| Value::symbol(ctx.intern(c))).collect();
    Ok(array::from_vec(ctx, list))
}

/// `Warning.warn(msg, category: nil)`: writes the message to `$stderr`.
fn w_warn(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let msg = args.pos[0];
    if !string::is_string(msg) {
        let cname = object::class_name_of(ctx, msg);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected String)")));
    }
    if let Some(cat) = args.kwarg(ctx, "category") {
        if !cat.is_nil() {
            let id = category_ivar(ctx, cat)?;
            let w = warning_module(ctx);
            if !object::ivar_get(ctx, w, id).truthy() {
                return Ok(Value::NIL);
            }
        }
    }
    io::write_to_stderr_object(ctx, msg)?;
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let object = ctx.c().object;
    let w = crate::core::module_methods::define_module_under(ctx, object, "Warning");
    for &(_, on, id) in CATEGORIES {
        object::ivar_set_raw(ctx, w, id, Value::bool(on));
    }
    crate::methods!(ctx, w, [
        ("[]", w_aref, [1], Safe, Singleton),
        ("[]=", w_aset, [2], Unsafe, Singleton),
        ("categories", w_categories, [0], Safe, Singleton),
        ("warn", w_warn, [1], Unsafe, Kw),
    ]);
    // `Warning.warn` is the module's instance method, extended into itself.
    if let Ok(s) = crate::core::object::singleton_class(ctx, w) {
        module::body(s).includes.push(w);
        ctx.vm().bump_method_epoch();
    }
}
