//! Refinements: `Module#refine`, `using` (`main.using`, `Module#using`), the `Refinement`
//! class, and method lookup through the refinements a scope has activated.
//!
//! Invariants:
//! - A refinement is an anonymous module of class `Refinement` with `refined` set and
//!   `refined_class`/`refinement_owner` naming what it refines and which module's
//!   `refine` made it; a module keeps its refinements in `refinements` (pairs, one
//!   refinement per refined class, made on the first `refine` of that class).
//! - Activation is lexical: each cref carries the Array of activated pairs; `using` gives
//!   the calling frame a new cref (the scope's code after `using` sees the refinements,
//!   methods defined before keep the old cref). A nested scope inherits its parent's
//!   pairs; the body of a refine block also sees all refinements of the module it is in.
//! - Lookup: walking the receiver class's ancestors, at each ancestor the latest active
//!   refinement of that ancestor that defines the method wins over the ancestor's own
//!   method. Only calls from Ruby code in a refined scope (call sites, `send`,
//!   `public_send`, `method`, `instance_method`, `&:sym`) look at refinements; `super` in a
//!   refined method goes on at the refined class itself.
//! - `using` bumps the method epoch: call-site caches made before it are dropped.

use std::sync::Arc;

use crate::core::module::{self, body, MethodBody, MethodEntry};
use crate::core::module_methods::new_module;
use crate::core::{array, object};
use crate::interp::frame::FrameKind;
use crate::interp::Args;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Pairs `[refined class, refinement, …]` of `pairs` (a flat Array, or nil). A pair
/// `[module, undef]` stands for all refinements `module` defines when asked (the scope of
/// a refine block sees its module's refinements, also those defined after it).
fn pairs_of(pairs: Value) -> Vec<(Value, Value)> {
    if pairs.is_nil() {
        return Vec::new();
    }
    let n = array::len(pairs);
    let mut out = Vec::with_capacity(n / 2);
    for i in 0..n / 2 {
        let (c, r) = (array::get(pairs, 2 * i), array::get(pairs, 2 * i + 1));
        if r.is_undef() {
            out.extend(pairs_of(body(c).refinements));
        } else {
            out.push((c, r));
        }
    }
    out
}

/// `base` with `more` appended, as a new flat Array (nil when both are empty).
fn concat(ctx: &mut Ctx, base: Value, more: &[(Value, Value)]) -> Value {
    if more.is_empty() {
        return base;
    }
    let out = array::new(ctx);
    let mut old = Vec::new();
    if !base.is_nil() {
        for i in 0..array::len(base) {
            old.push(array::get(base, i));
        }
    }
    for &v in &old {
        array::push(ctx, out, v);
    }
    for &(c, r) in more {
        array::push(ctx, out, c);
        array::push(ctx, out, r);
    }
    out
}

/// The refinements a new scope of `klass` sees, given its parent scope's.
pub fn scope_refinements(ctx: &mut Ctx, klass: Value, inherited: Value) -> Value {
    if !module::is_class_or_module(klass) || !body(klass).refined {
        return inherited;
    }
    let owner = body(klass).refinement_owner;
    concat(ctx, inherited, &[(owner, Value::UNDEF)])
}

/// The refinements active in frame `f`'s scope (nil when none).
pub fn frame_refinements(f: &crate::interp::frame::Frame) -> Value {
    if f.cref.is_nil() {
        Value::NIL
    } else {
        crate::interp::env::cref(f.cref).refinements
    }
}

/// The refinements active in the innermost Ruby frame (nil when none).
pub fn caller_refinements(ctx: &Ctx) -> Value {
    ctx.stacks.frames.iter().rev().find(|f| f.kind != FrameKind::Builtin).map_or(Value::NIL, frame_refinements)
}

/// Method `mid` of `klass` as seen by a scope with refinements `active`.
pub fn find_method_refined(ctx: &Ctx, klass: Value, mid: SymId, active: Value) -> Option<Arc<MethodEntry>> {
    let pairs = pairs_of(active);
    if pairs.is_empty() {
        return module::find_method(ctx, klass, mid);
    }
    let anc = module::ancestors(ctx, klass);
    for &m in anc.iter() {
        for &(target, refinement) in pairs.iter().rev() {
            if target != m {
                continue;
            }
            if let Some(me) = body(refinement).methods.get(&mid) {
                if me.is_undefined() {
                    return None;
                }
                return Some(me.clone());
            }
        }
        if body(m).methods.contains_key(&mid) {
            break;
        }
    }
    module::find_method(ctx, klass, mid)
}

/// Method `mid` of `klass` as the innermost Ruby frame sees it (`method`, `instance_method`).
pub fn find_method_seen(ctx: &Ctx, klass: Value, mid: SymId) -> Option<Arc<MethodEntry>> {
    find_method_refined(ctx, klass, mid, caller_refinements(ctx))
}

/// A method of a refinement active in the caller's scope (None when no refinement
/// defines `mid` for `recv`).
pub fn refined_method_for(ctx: &Ctx, recv: Value, mid: SymId) -> Option<Arc<MethodEntry>> {
    let active = caller_refinements(ctx);
    if active.is_nil() {
        return None;
    }
    let klass = crate::interp::class_of(ctx, recv);
    find_method_refined(ctx, klass, mid, active).filter(|me| body(me.owner).refined)
}

/// `send`/`public_send` of a method that a refinement active in the caller's scope
/// defines: its result, or None when no refinement applies (the plain call then runs).
pub fn send_refined(ctx: &mut Ctx, recv: Value, mid: SymId, args: &Args, public: bool) -> Option<Result<Value>> {
    let active = caller_refinements(ctx);
    if active.is_nil() {
        return None;
    }
    let klass = crate::interp::class_of(ctx, recv);
    let me = find_method_refined(ctx, klass, mid, active)?;
    if !body(me.owner).refined || (public && me.visibility != module::Visibility::Public) {
        return None;
    }
    Some(crate::interp::call::invoke_from_rust(ctx, recv, &me, &args.pos[1..], args.kw, args.block))
}

/// Where `super` goes from a method of refinement `owner`: the refined class's own method
/// (its ancestors from the refined class on, the class itself included).
pub fn super_of_refined(ctx: &Ctx, klass: Value, owner: Value, mid: SymId) -> Option<Arc<MethodEntry>> {
    let target = body(owner).refined_class;
    let anc = module::ancestors(ctx, klass);
    let start = anc.iter().position(|&m| m == target)?;
    for &m in &anc[start..] {
        if let Some(me) = body(m).methods.get(&mid) {
            if me.is_undefined() {
                return None;
            }
            if matches!(me.body, MethodBody::ZSuper) {
                continue;
            }
            return Some(me.clone());
        }
    }
    None
}

fn refinement_class(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("Refinement");
    body(ctx.c().object).const_get(id).map_or(ctx.c().module, |e| e.value)
}

/// `Module#refine(klass) { }`.
fn m_refine(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(block) = args.block else {
        return Err(ctx.arg_error("no block given"));
    };
    if matches!(block, crate::interp::frame::Block::Proc(_)) {
        return Err(ctx.arg_error("can't pass a Proc as a block to Module#refine"));
    }
    let target = args.pos[0];
    if !module::is_class_or_module(target) {
        let name = object::type_name_for_error(ctx, target);
        return Err(ctx.type_error(&format!("wrong argument type {name} (expected Class or Module)")));
    }
    if body(target).refined {
        return Err(ctx.type_error("can't refine refinement module"));
    }
    let existing = pairs_of(body(recv).refinements).into_iter().find(|&(c, _)| c == target).map(|(_, r)| r);
    let refinement = match existing {
        Some(r) => r,
        None => {
            let r = new_module(ctx, None);
            let klass = refinement_class(ctx);
            crate::object::basic(r).klass = klass;
            let b = body(r);
            b.refined = true;
            b.refined_class = target;
            b.refinement_owner = recv;
            let all = concat(ctx, body(recv).refinements, &[(target, r)]);
            body(recv).refinements = all;
            r
        }
    };
    ctx.vm().bump_method_epoch();
    ctx.yield_with_self(&block, refinement, &[], Some(refinement))?;
    Ok(refinement)
}

/// The pairs `using mod` activates: those of `mod` and of the modules it includes.
fn pairs_for_using(ctx: &mut Ctx, m: Value) -> Result<Vec<(Value, Value)>> {
    if !module::is_class_or_module(m) || body(m).kind != module::ClassKind::Module {
        let name = object::type_name_for_error(ctx, m);
        return Err(ctx.type_error(&format!("wrong argument type {name} (expected Module)")));
    }
    if body(m).refined {
        return Err(ctx.type_error("Cannot use refinement module"));
    }
    let anc = module::ancestors(ctx, m);
    Ok(anc.iter().rev().flat_map(|&a| pairs_of(body(a).refinements)).collect())
}

/// Activates `m`'s refinements for the rest of the calling frame's scope.
fn activate(ctx: &mut Ctx, fi: usize, m: Value) -> Result<()> {
    let pairs = pairs_for_using(ctx, m)?;
    let old = ctx.stacks.frames[fi].cref;
    let (klass, parent, flags, current) = if old.is_nil() {
        (ctx.c().object, Value::NIL, 0, Value::NIL)
    } else {
        let c = crate::interp::env::cref(old);
        (c.klass, c.parent, c.basic.flags, c.refinements)
    };
    let new = crate::interp::exec::new_cref(ctx, klass, parent, false);
    let merged = concat(ctx, current, &pairs);
    let c = crate::interp::env::cref(new);
    c.basic.flags = (c.basic.flags & crate::object::FL_GC_BITS) | (flags & !crate::object::FL_GC_BITS);
    c.refinements = merged;
    ctx.stacks.frames[fi].cref = new;
    ctx.vm().bump_method_epoch();
    Ok(())
}

/// The innermost Ruby frame (the one calling a builtin).
fn caller_frame(ctx: &Ctx) -> Option<usize> {
    ctx.stacks.frames.iter().rposition(|f| f.kind != FrameKind::Builtin)
}

/// Whether frame `fi` runs inside a method: a method or lambda frame, or a block whose
/// home is a method (it has the method's owner).
fn in_method(ctx: &Ctx, fi: usize) -> bool {
    let f = &ctx.stacks.frames[fi];
    match f.kind {
        FrameKind::Method | FrameKind::Lambda => true,
        FrameKind::Block => !f.owner.is_nil(),
        _ => false,
    }
}

/// `main.using(mod)`: only at the top level of a file (or an eval there).
pub fn main_using(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(fi) = caller_frame(ctx) else { return Ok(Value::NIL) };
    if !matches!(ctx.stacks.frames[fi].kind, FrameKind::Top | FrameKind::Eval) || in_method(ctx, fi) {
        return Err(ctx.raise(ctx.c().runtime_error, "main.using is permitted only at toplevel"));
    }
    activate(ctx, fi, args.pos[0])?;
    Ok(ctx.vm().main_obj.get())
}

/// `Module#using(mod)`: in a class or module body, for the rest of it.
fn m_using(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(fi) = caller_frame(ctx) else { return Ok(recv) };
    if in_method(ctx, fi) {
        return Err(ctx.raise(ctx.c().runtime_error, "Module#using is not permitted in methods"));
    }
    if ctx.stacks.frames[fi].self_ != recv {
        return Err(ctx.raise(ctx.c().runtime_error, "Module#using is not called on self"));
    }
    activate(ctx, fi, args.pos[0])?;
    Ok(recv)
}

/// `Module#refinements`: the refinements this module defines.
fn m_refinements(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    for (_, r) in pairs_of(body(recv).refinements) {
        array::push(ctx, out, r);
    }
    Ok(out)
}

/// `Module.used_modules`: the modules whose refinements the caller's scope uses.
fn s_used_modules(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    let mut seen = Vec::new();
    for (_, r) in pairs_of(caller_refinements(ctx)).into_iter().rev() {
        let owner = body(r).refinement_owner;
        if !seen.contains(&owner) {
            seen.push(owner);
            array::push(ctx, out, owner);
        }
    }
    Ok(out)
}

/// `Module.used_refinements`: the refinements active in the caller's scope.
fn s_used_refinements(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    let mut seen = Vec::new();
    for (_, r) in pairs_of(caller_refinements(ctx)).into_iter().rev() {
        if !seen.contains(&r) {
            seen.push(r);
            array::push(ctx, out, r);
        }
    }
    Ok(out)
}

/// `Refinement#target` (and the older `refined_class`).
fn r_target(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(body(recv).refined_class)
}

/// `Refinement#import_methods(*modules)`: copies the modules' Ruby-defined methods in.
fn r_import_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &m in args.pos {
        if !module::is_class_or_module(m) || body(m).kind != module::ClassKind::Module {
            let name = object::type_name_for_error(ctx, m);
            return Err(ctx.type_error(&format!("wrong argument type {name} (expected Module)")));
        }
    }
    for &m in args.pos {
        if module::ancestors(ctx, m).len() > 1 {
            let name = crate::core::module_methods::class_path(ctx, m);
            let (path, line) = crate::core::kernel::caller_location(ctx);
            crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: {name} has ancestors, but Refinement#import_methods doesn't import their methods\n"), None)?;
        }
        let mut entries: Vec<Arc<MethodEntry>> = body(m).methods.values().cloned().collect();
        entries.sort_by_key(|me| me.name);
        for me in entries {
            if !matches!(me.body, MethodBody::Iseq { .. }) {
                let mname = crate::core::module_methods::class_path(ctx, m);
                let meth = ctx.sym_str(me.name);
                return Err(ctx.arg_error(&format!("Can't import method which is not defined with Ruby code: {mname}#{meth}")));
            }
            // The copy runs in the refinement's scope: it sees the refinements of the module
            // that defines the refinement (the imported methods see each other).
            let body_copy = match me.body {
                MethodBody::Iseq { iseq, cref } => MethodBody::Iseq { iseq, cref: crate::interp::exec::new_cref(ctx, recv, cref, false) },
                ref other => other.clone(),
            };
            module::add_method(ctx, recv, MethodEntry { name: me.name, original_name: me.original_name, owner: recv, visibility: me.visibility, body: body_copy });
        }
    }
    Ok(recv)
}

fn r_include(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.type_error("Refinement#include has been removed"))
}

fn r_prepend(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.type_error("Refinement#prepend has been removed"))
}

/// `#<refinement:String@M>`.
pub fn inspect_name(ctx: &mut Ctx, r: Value) -> String {
    let target = body(r).refined_class;
    let owner = body(r).refinement_owner;
    let t = crate::core::module_methods::class_path(ctx, target);
    let o = crate::core::module_methods::class_path(ctx, owner);
    format!("#<refinement:{t}@{o}>")
}

pub fn init(ctx: &mut Ctx) {
    let module_class = ctx.c().module;
    let refinement = crate::core::module_methods::define_class_under(ctx, ctx.c().object, "Refinement", module_class);
    crate::methods!(ctx, refinement, [
        ("target", r_target, [0], Safe),
        ("import_methods", r_import_methods, [0..], Unsafe, Private),
        ("include", r_include, [0..], Safe, Private),
        ("prepend", r_prepend, [0..], Safe, Private),
    ]);
    // A refinement cannot be mixed into anything.
    for name in ["append_features", "prepend_features", "extend_object"] {
        let id = ctx.intern(name);
        module::add_method(ctx, refinement, MethodEntry { name: id, original_name: id, owner: refinement, visibility: module::Visibility::Private, body: MethodBody::Undefined });
    }
    crate::methods!(ctx, module_class, [
        ("refine", m_refine, [1], Unsafe, Private),
        ("using", m_using, [1], Unsafe, Private),
        ("refinements", m_refinements, [0], Safe),
        ("used_modules", s_used_modules, [0], Safe, Singleton),
        ("used_refinements", s_used_refinements, [0], Safe, Singleton),
    ]);
    // Classes cannot define refinements (`refine` is Module's, undefined for Class).
    let class_class = ctx.c().class;
    let id = ctx.intern("refine");
    module::add_method(ctx, class_class, MethodEntry { name: id, original_name: id, owner: class_class, visibility: module::Visibility::Public, body: MethodBody::Undefined });
}
