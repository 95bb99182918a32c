//! `require "psych.so"`: the native half of Psych, Ruby's YAML library. The parsing and
//! emitting are libyaml's own code, through the `unsafe-libyaml` crate (a line-by-line
//! Rust translation of libyaml 0.2.5), so documents scan, fail and print exactly as under
//! CRuby; the pure-Ruby half (`psych.rb`, the tree builder and visitors) comes from the
//! installed CRuby standard library and loads on top of this.
//!
//! Invariants:
//! - `require "psych"` loads CRuby's `psych.rb`, which requires `"psych.so"`; the feature is
//!   registered under the `.so` name only, so the plain name still finds the Ruby file.
//! - The classes are defined (or reopened) under `Psych` with CRuby's superclasses, before
//!   the Ruby files reopen them: `Parser`, `Handler`, `Emitter < Handler`, `ClassLoader`,
//!   `Visitors::Visitor`, `Visitors::ToRuby < Visitor`.
//! - libyaml state lives only in Rust memory owned by one call (`Parser#parse`) or by one
//!   Emitter object; Ruby values reach it as copied bytes, never as pointers.
//! - No process-global state: everything is defined in the VM given to `init`.

mod emitter;
mod parser;

use crate::core::module::{self, body};
use crate::core::module_methods::{define_class_under, define_module_under};
use crate::core::{array, exception, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The constant `name` under `outer` when it is a class, or a new class of `superclass`.
fn class_under(ctx: &mut Ctx, outer: Value, name: &str, superclass: Value) -> Value {
    let id = ctx.intern(name);
    match body(outer).const_get(id) {
        Some(e) if module::is_class_or_module(e.value) => e.value,
        _ => define_class_under(ctx, outer, name, superclass),
    }
}

/// The module `name` under `outer`, created when absent.
fn module_under(ctx: &mut Ctx, outer: Value, name: &str) -> Value {
    let id = ctx.intern(name);
    match body(outer).const_get(id) {
        Some(e) if module::is_class_or_module(e.value) => e.value,
        _ => define_module_under(ctx, outer, name),
    }
}

/// The constant `path` under Psych (`"SyntaxError"`), nil when undefined.
fn psych_const(ctx: &mut Ctx, name: &str) -> Value {
    let obj = ctx.c().object;
    let pid = ctx.intern("Psych");
    let Some(p) = body(obj).const_get(pid) else {
        return Value::NIL;
    };
    let id = ctx.intern(name);
    body(p.value).const_get(id).map_or(Value::NIL, |e| e.value)
}

/// `Psych.libyaml_version`: the libyaml release unsafe-libyaml translates.
fn libyaml_version(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(array::from_slice(
        ctx,
        &[Value::fixnum(0), Value::fixnum(2), Value::fixnum(5)],
    ))
}

/// `ClassLoader#path2class(path)`: the class or module a `"A::B"` path names, as CRuby's
/// `rb_path_to_class` (ArgumentError "undefined class/module A::B" when missing).
fn path2class(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let path = string::str_arg(ctx, args.get(0))?;
    let mut cur = ctx.c().object;
    let mut seen = String::new();
    for part in path.split("::") {
        if !seen.is_empty() {
            seen.push_str("::");
        }
        seen.push_str(part);
        let id = ctx.intern(part);
        let found = if part.is_empty() {
            None
        } else {
            body(cur).const_get(id).map(|e| e.value)
        };
        match found {
            Some(v) if module::is_class_or_module(v) => cur = v,
            Some(_) => {
                return Err(ctx.type_error(&format!("{seen} does not refer to class/module")))
            }
            None => return Err(ctx.arg_error(&format!("undefined class/module {seen}"))),
        }
    }
    Ok(cur)
}

/// `ToRuby#build_exception(klass, message)`: an exception of `klass` allocated without
/// running `initialize`, holding `message`.
fn build_exception(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.call_str(args.get(0), "allocate", &[])?;
    exception::set_message(ctx, e, args.get(1));
    Ok(e)
}

/// Defines Psych's native classes and methods.
pub fn init(ctx: &mut Ctx) -> Result<()> {
    // The parser raises Psych::SyntaxError, defined in Ruby next to psych.rb; loaded
    // first, so that a failure leaves nothing half defined.
    crate::core::load::require(ctx, "psych/syntax_error")?;
    let obj = ctx.c().object;
    let psych = module_under(ctx, obj, "Psych");
    crate::methods!(
        ctx,
        psych,
        [("libyaml_version", libyaml_version, [0], Unsafe, Singleton)]
    );

    let handler = class_under(ctx, psych, "Handler", obj);
    parser::init(ctx, psych);
    emitter::init(ctx, psych, handler);

    let loader = class_under(ctx, psych, "ClassLoader", obj);
    crate::methods!(
        ctx,
        loader,
        [("path2class", path2class, [1], Unsafe, Private)]
    );

    let visitors = module_under(ctx, psych, "Visitors");
    let visitor = class_under(ctx, visitors, "Visitor", obj);
    let to_ruby = class_under(ctx, visitors, "ToRuby", visitor);
    crate::methods!(
        ctx,
        to_ruby,
        [("build_exception", build_exception, [2], Unsafe, Private)]
    );
    Ok(())
}
