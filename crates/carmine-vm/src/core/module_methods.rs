//! The Ruby-visible methods of Module and Class, and the helpers that create, name and
//! reopen classes (representation and lookup are in `module.rs`).

use std::sync::Arc;

use crate::core::module::{self, body, AllocKind, ClassBody, ClassKind, MethodBody, MethodEntry, Visibility};
use crate::core::{array, object, string, symbol};
use crate::interp::{ops, Args, Block};
use crate::object::{basic, FL_FROZEN};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

// ---- creation and naming ----

/// A new class with a metaclass, subclass of `superclass`.
pub fn new_class(ctx: &mut Ctx, superclass: Value, name: Option<&str>) -> Value {
    let alloc = if superclass.is_nil() { AllocKind::Object } else { body(superclass).alloc };
    let class_class = ctx.c().class;
    let b = ClassBody::new(ClassKind::Class, superclass, alloc);
    let k = object::new_class_object(ctx, class_class, b);
    if let Some(n) = name {
        let s = string::new_utf8(ctx, n);
        body(k).name = Some(object::freeze(s));
    }
    if !superclass.is_nil() {
        body(superclass).subclasses.push(k);
        let _ = object::singleton_class(ctx, k);
    }
    k
}

/// `Class.allocate`: a class without a superclass until `initialize` gives it one.
pub fn new_uninitialized_class(ctx: &mut Ctx) -> Value {
    let object = ctx.c().object;
    let k = new_class(ctx, object, None);
    body(object).subclasses.retain(|&c| c != k);
    body(k).uninitialized = true;
    k
}

pub fn new_module(ctx: &mut Ctx, name: Option<&str>) -> Value {
    let module_class = ctx.c().module;
    let b = ClassBody::new(ClassKind::Module, Value::NIL, AllocKind::None);
    let m = object::new_class_object(ctx, module_class, b);
    if let Some(n) = name {
        let s = string::new_utf8(ctx, n);
        body(m).name = Some(object::freeze(s));
    }
    m
}

/// Defines `name` under `outer` (a constant), creating a class.
pub fn define_class_under(ctx: &mut Ctx, outer: Value, name: &str, superclass: Value) -> Value {
    let full = if outer == ctx.c().object { name.to_string() } else { format!("{}::{}", class_path(ctx, outer), name) };
    let k = new_class(ctx, superclass, Some(&full));
    let id = ctx.intern(name);
    body(outer).const_set(id, k);
    k
}

pub fn define_module_under(ctx: &mut Ctx, outer: Value, name: &str) -> Value {
    let full = if outer == ctx.c().object { name.to_string() } else { format!("{}::{}", class_path(ctx, outer), name) };
    let m = new_module(ctx, Some(&full));
    let id = ctx.intern(name);
    body(outer).const_set(id, m);
    m
}

/// The full name of a class or module, or its anonymous description.
pub fn class_path(ctx: &mut Ctx, k: Value) -> String {
    if !module::is_class_or_module(k) {
        return String::from("?");
    }
    let b = body(k);
    if let Some(n) = b.name {
        return string::to_rust_string_lossy(n);
    }
    if b.kind == ClassKind::Singleton {
        let att = b.attached;
        if module::is_class_or_module(att) {
            return format!("#<Class:{}>", class_path(ctx, att));
        }
        let inner = match object::inspect_string(ctx, att) {
            Ok(s) if !s.is_empty() => s,
            _ => format!("#<{}:0x{:016x}>", class_path(ctx, object::real_class_of(ctx, att)), att.raw()),
        };
        return format!("#<Class:{inner}>");
    }
    if b.refined {
        return crate::core::refinement::inspect_name(ctx, k);
    }
    let kind = if b.kind == ClassKind::Module { "Module" } else { "Class" };
    format!("#<{}:0x{:016x}>", kind, k.raw())
}

fn valid_const_name(name: &[u8]) -> bool {
    name.first().is_some_and(|c| c.is_ascii_uppercase() || (*c >= 0x80 && std::str::from_utf8(name).ok().and_then(|s| s.chars().next()).is_some_and(|ch| ch.is_uppercase())))
        && name.iter().all(|&c| c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80)
}

/// `target::Name = v`: names anonymous classes, warns on reassignment.
pub fn const_set_checked(ctx: &mut Ctx, target: Value, id: SymId, v: Value) -> Result<()> {
    if basic(target).has(FL_FROZEN) {
        return Err(ctx.frozen_error(target));
    }
    let renamed = module::is_class_or_module(v) && (body(v).name.is_none() || body(v).temporary_name) && body(v).kind != ClassKind::Singleton;
    let permanent = target == ctx.c().object || (body(target).name.is_some() && !body(target).temporary_name);
    if renamed && (permanent || !body(v).name_set_by_user) {
        let n = ctx.sym_str(id);
        let full = if target == ctx.c().object { n } else { format!("{}::{}", class_path(ctx, target), n) };
        let s = string::new_utf8(ctx, &full);
        body(v).name = Some(object::freeze(s));
        body(v).temporary_name = !permanent;
        body(v).name_set_by_user = false;
        if permanent {
            name_nested(ctx, v);
        }
    }
    if let Some(e) = body(target).const_get(id) {
        if !e.value.is_undef() {
            let verbose = crate::core::globals::verbose_level(ctx);
            if verbose >= 1 {
                let n = ctx.sym_str(id);
                let full = if target == ctx.c().object { n } else { format!("{}::{}", class_path(ctx, target), n) };
                let (path, line) = crate::core::kernel::caller_location(ctx);
                crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: already initialized constant {full}\n"));
            }
        }
    }
    let location = ops::caller_ruby_frame(ctx).map(|fi| {
        let f = &ctx.stacks.frames[fi];
        (f.iseq().path.clone(), f.line())
    });
    body(target).const_set_at(id, v, location);
    ctx.vm().bump_const_epoch();
    const_added(ctx, target, id)
}

/// Calls `target.const_added(name)` (a hook; the default does nothing).
pub fn const_added(ctx: &mut Ctx, target: Value, id: SymId) -> Result<()> {
    if !ctx.vm().booted.get() {
        return Ok(());
    }
    let hook = ctx.intern("const_added");
    let klass = crate::interp::class_of(ctx, target);
    let is_default = module::find_method(ctx, klass, hook).is_some_and(|me| matches!(me.body, MethodBody::Builtin { f, .. } if f as usize == m_hook_noop as *const () as usize));
    if !is_default {
        ctx.call(target, hook, &[Value::symbol(id)])?;
    }
    Ok(())
}

/// "X is not a class" for `class X` over a constant that is not one, with
/// where the constant was defined when that is known.
fn not_a_error(ctx: &mut Ctx, cbase: Value, name: SymId, what: &str) -> crate::error::Unwind {
    let n = ctx.sym_str(name);
    let mut msg = format!("{n} is not a {what}");
    if let Some((path, line)) = body(cbase).const_get(name).and_then(|e| e.location.clone()) {
        msg.push_str(&format!("\n{path}:{line}: previous definition of {n} was here"));
    }
    ctx.type_error(&msg)
}

/// Names constants of a newly named module that hold anonymous modules.
fn name_nested(ctx: &mut Ctx, m: Value) {
    let consts: Vec<(SymId, Value)> = body(m).consts.iter().map(|(n, e)| (*n, e.value)).collect();
    for (n, v) in consts {
        if module::is_class_or_module(v) && (body(v).name.is_none() || body(v).temporary_name) && body(v).kind != ClassKind::Singleton {
            let full = format!("{}::{}", class_path(ctx, m), ctx.sym_str(n));
            let s = string::new_utf8(ctx, &full);
            body(v).name = Some(object::freeze(s));
            body(v).temporary_name = false;
            body(v).name_set_by_user = false;
            name_nested(ctx, v);
        }
    }
}

/// Whether `s` reads as a constant path ("A", "A::B", "::A"), which a temporary name
/// must not look like.
fn is_constant_path(s: &[u8]) -> bool {
    let s = s.strip_prefix(b"::").unwrap_or(s);
    !s.is_empty() && s.split(|&b| b == b':').collect::<Vec<_>>().chunks(2).all(|c| match c {
        [seg, sep] => sep.is_empty() && valid_const_name(seg),
        [seg] => valid_const_name(seg),
        _ => false,
    })
}

/// Renames the constants of `m` whose names derive from `old` (temporary names of
/// nested modules) to start with `new`, or clears them when `new` is None.
fn rename_nested(ctx: &mut Ctx, m: Value, old: &str, new: Option<&str>) {
    let consts: Vec<(SymId, Value)> = body(m).consts.iter().map(|(n, e)| (*n, e.value)).collect();
    for (n, v) in consts {
        if !module::is_class_or_module(v) || !body(v).temporary_name || body(v).name_set_by_user {
            continue;
        }
        let Some(cur) = body(v).name.map(string::to_rust_string_lossy) else { continue };
        let expected = format!("{old}::{}", ctx.sym_str(n));
        if cur != expected {
            continue;
        }
        match new {
            Some(p) => {
                let full = format!("{p}::{}", ctx.sym_str(n));
                let s = string::new_utf8(ctx, &full);
                body(v).name = Some(object::freeze(s));
                rename_nested(ctx, v, &cur, Some(&full));
            }
            None => {
                body(v).name = None;
                body(v).temporary_name = false;
                rename_nested(ctx, v, &cur, None);
            }
        }
    }
}

/// `Module#set_temporary_name(name)`: a name for a module without a permanent one
/// (nil removes it).
fn m_set_temporary_name(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if body(recv).name.is_some() && !body(recv).temporary_name {
        return Err(ctx.raise(ctx.c().runtime_error, "can't change permanent name"));
    }
    let arg = args.pos[0];
    let old = class_path(ctx, recv);
    if arg.is_nil() {
        body(recv).name = None;
        body(recv).temporary_name = false;
        body(recv).name_set_by_user = false;
        rename_nested(ctx, recv, &old, None);
        return Ok(recv);
    }
    let s = string::to_str_arg(ctx, arg)?;
    let bytes = string::bytes(s).to_vec();
    if bytes.is_empty() {
        return Err(ctx.arg_error("empty class/module name"));
    }
    if is_constant_path(&bytes) {
        return Err(ctx.arg_error("the temporary name must not be a constant path to avoid confusion"));
    }
    let name = string::new_with_enc(ctx, bytes, string::encoding(s));
    let new = string::to_rust_string_lossy(name);
    body(recv).name = Some(object::freeze(name));
    body(recv).temporary_name = true;
    body(recv).name_set_by_user = true;
    rename_nested(ctx, recv, &old, Some(&new));
    Ok(recv)
}

/// `module Name` in `cbase`.
pub fn open_module(ctx: &mut Ctx, cbase: Value, name: SymId) -> Result<Value> {
    if let Some(v) = ops::const_own(ctx, cbase, name)? {
        if module::is_module(v) {
            return Ok(v);
        }
        return Err(not_a_error(ctx, cbase, name, "module"));
    }
    let m = new_module(ctx, None);
    body(m).lexical_parent = cbase;
    const_set_checked(ctx, cbase, name, m)?;
    Ok(m)
}

/// `class Name < superclass` in `cbase`.
pub fn open_class(ctx: &mut Ctx, cbase: Value, name: SymId, superclass: Option<Value>) -> Result<Value> {
    if let Some(sup) = superclass {
        if !module::is_class(sup) {
            let cname = object::class_name_of(ctx, sup);
            return Err(ctx.type_error(&format!("superclass must be an instance of Class (given an instance of {cname})")));
        }
    }
    if let Some(v) = ops::const_own(ctx, cbase, name)? {
        if !module::is_class(v) {
            return Err(not_a_error(ctx, cbase, name, "class"));
        }
        if let Some(sup) = superclass {
            if module::real_class(body(v).superclass) != sup {
                let n = ctx.sym_str(name);
                return Err(ctx.type_error(&format!("superclass mismatch for class {n}")));
            }
        }
        return Ok(v);
    }
    let sup = superclass.unwrap_or(ctx.c().object);
    if body(sup).kind == ClassKind::Singleton {
        return Err(ctx.type_error("can't make subclass of singleton class"));
    }
    if sup == ctx.c().class {
        return Err(ctx.type_error("can't make subclass of Class"));
    }
    let k = new_class(ctx, sup, None);
    body(k).lexical_parent = cbase;
    const_set_checked(ctx, cbase, name, k)?;
    ctx.call(sup, sym::INHERITED, &[k])?;
    Ok(k)
}

pub fn copy_class(ctx: &mut Ctx, k: Value) -> Result<Value> {
    let src = body(k);
    if src.kind == ClassKind::Singleton {
        return Err(ctx.type_error("can't copy singleton class"));
    }
    if src.kind == ClassKind::Class && src.superclass.is_nil() {
        return Err(ctx.type_error("can't copy the root class"));
    }
    let klass = basic(k).klass;
    let mut b = ClassBody::new(src.kind, src.superclass, src.alloc);
    b.methods = src.methods.iter().map(|(n, me)| {
        let m = MethodEntry { name: me.name, original_name: me.original_name, owner: Value::NIL, visibility: me.visibility, body: me.body.clone() };
        (*n, Arc::new(m))
    }).collect::<crate::symbol::SymMap<_>>().into();
    b.consts = src.consts.clone();
    b.const_index = src.const_index.clone();
    b.cvars = src.cvars.clone();
    b.includes = src.includes.clone();
    b.prepends = src.prepends.clone();
    b.iv_index = src.iv_index.clone();
    b.iv_names = src.iv_names.clone();
    let copy_klass = if module::is_class_or_module(klass) && body(klass).kind == ClassKind::Singleton { ctx.c().class } else { klass };
    let c = object::new_class_object(ctx, if src.kind == ClassKind::Module { ctx.c().module } else { copy_klass }, b);
    // Re-own the copied methods.
    let entries: Vec<(SymId, Arc<MethodEntry>)> = body(c).methods.iter().map(|(n, m)| (*n, m.clone())).collect();
    for (n, me) in entries {
        let fixed = MethodEntry { name: me.name, original_name: me.original_name, owner: c, visibility: me.visibility, body: me.body.clone() };
        body(c).methods_mut().insert(n, Arc::new(fixed));
    }
    // The copy gets its own singleton class with the original's singleton methods and
    // extended modules (a class always has one; a module when the original had one).
    let has_meta = module::is_class_or_module(klass) && body(klass).kind == ClassKind::Singleton;
    if body(c).kind != ClassKind::Module || has_meta {
        let meta = object::singleton_class(ctx, c)?;
        if has_meta {
            let ms: Vec<(SymId, Arc<MethodEntry>)> = body(klass).methods.iter().map(|(n, m)| (*n, m.clone())).collect();
            for (n, me) in ms {
                let owned = MethodEntry { name: me.name, original_name: me.original_name, owner: meta, visibility: me.visibility, body: me.body.clone() };
                body(meta).methods_mut().insert(n, Arc::new(owned));
            }
            body(meta).includes = body(klass).includes.clone();
            body(meta).consts = body(klass).consts.clone();
            body(meta).const_index = body(klass).const_index.clone();
        }
    }
    ctx.vm().bump_method_epoch();
    Ok(c)
}

// ---- method table changes ----

/// The class whose fast paths a change to `target`'s methods concerns: a refinement's
/// methods stand for the refined class's in the scopes that use it, and the dispatch loop's
/// fast paths do not look at scopes.
fn fast_path_class(target: Value) -> Value {
    if body(target).refined { body(target).refined_class } else { target }
}

fn note_redefinition(ctx: &Ctx, target: Value, name: SymId) {
    if !ctx.vm().booted.get() {
        return;
    }
    let target = fast_path_class(target);
    let c = ctx.c();
    let n = &*ctx.sym_name(name);
    if target == c.nil && matches!(n, b"to_a" | b"respond_to?" | b"method_missing") {
        ctx.vm().redefined.fetch_or(ops::REDEF_NIL_TO_A, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    let op = matches!(n, b"+" | b"-" | b"*" | b"/" | b"%" | b"==" | b"!=" | b"<" | b"<=" | b">" | b">=" | b"<=>" | b"<<" | b"&" | b"|" | b"[]" | b"[]=" | b"length" | b"size" | b"empty?" | b"succ" | b"!" | b"===" | b"hash" | b"eql?" | b"each");
    if !op {
        return;
    }
    let bit = if target == c.integer || target == c.numeric || target == c.comparable {
        ops::REDEF_INTEGER | ops::REDEF_FLOAT
    } else if target == c.float {
        ops::REDEF_FLOAT
    } else if target == c.string {
        ops::REDEF_STRING
    } else if target == c.array {
        ops::REDEF_ARRAY
    } else if target == c.hash {
        ops::REDEF_HASH
    } else if target == c.symbol {
        ops::REDEF_SYMBOL
    } else if target == c.nil || target == c.true_ || target == c.false_ {
        if n == b"==" { ops::REDEF_SPECIAL_EQ } else { 0 }
    } else if target == c.object || target == c.basic_object || target == c.kernel {
        if n == b"!" || n == b"==" || n == b"!=" {
            ops::REDEF_NOT | ops::REDEF_INTEGER | ops::REDEF_FLOAT | ops::REDEF_STRING | ops::REDEF_SYMBOL | ops::REDEF_SPECIAL_EQ
        } else {
            0
        }
    } else {
        0
    };
    if n == b"!" {
        ctx.vm().redefined.fetch_or(ops::REDEF_NOT, std::sync::atomic::Ordering::Relaxed);
    }
    if bit != 0 {
        ctx.vm().redefined.fetch_or(bit, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Adds a method and runs the `method_added`/`singleton_method_added` hook.
/// FrozenError for changing the methods of a frozen class or module, worded
/// as CRuby does: "can't modify frozen class: X", "... module: ...", or for a
/// singleton class the object it belongs to ("... object: #<Object ...>").
pub fn check_class_modifiable(ctx: &mut Ctx, klass: Value) -> Result<()> {
    if !basic(klass).has(FL_FROZEN) {
        return Ok(());
    }
    let (desc, shown_obj) = if body(klass).kind == ClassKind::Singleton {
        let att = body(klass).attached;
        let desc = if module::is_module(att) {
            "Module"
        } else if module::is_class_or_module(att) {
            "Class"
        } else {
            "object"
        };
        (desc, att)
    } else if module::is_module(klass) {
        ("module", klass)
    } else {
        ("class", klass)
    };
    let shown = object::inspect_string(ctx, shown_obj)?;
    let e = ctx.new_error(ctx.c().frozen_error, &format!("can't modify frozen {desc}: {shown}"));
    object::ivar_set_raw(ctx, e, sym::RECEIVER, shown_obj);
    Err(crate::error::Unwind::Raise(e))
}

pub fn add_method_with_hooks(ctx: &mut Ctx, target: Value, me: MethodEntry) -> Result<()> {
    let name = me.name;
    check_class_modifiable(ctx, target)?;
    note_redefinition(ctx, target, name);
    module::add_method(ctx, target, me);
    if !ctx.vm().booted.get() {
        return Ok(());
    }
    if body(target).kind == ClassKind::Singleton {
        let att = body(target).attached;
        ctx.call(att, sym::SINGLETON_METHOD_ADDED, &[Value::symbol(name)])?;
    } else {
        ctx.call(target, sym::METHOD_ADDED, &[Value::symbol(name)])?;
    }
    Ok(())
}

fn undefined_method_error(ctx: &mut Ctx, target: Value, name: SymId) -> crate::error::Unwind {
    let n = ctx.sym_str(name);
    let kind = if module::is_module(target) { "module" } else { "class" };
    let cname = class_path(ctx, target);
    ctx.name_error(&format!("undefined method '{n}' for {kind} '{cname}'"), name, target)
}

pub fn alias_method(ctx: &mut Ctx, target: Value, new: SymId, old: SymId) -> Result<()> {
    // In a refinement, a method not refined there is the refined class's own.
    let found = module::find_method(ctx, target, old)
        .or_else(|| if body(target).refined { module::find_method(ctx, body(target).refined_class, old) } else { None })
        .or_else(|| if module::is_module(target) { module::find_method(ctx, ctx.c().object, old) } else { None });
    let Some(me) = found else {
        return Err(undefined_method_error(ctx, target, old));
    };
    let visibility = if module::always_private(ctx, target, new) { Visibility::Private } else { me.visibility };
    let entry = MethodEntry { name: new, original_name: me.original_name, owner: me.owner, visibility, body: me.body.clone() };
    let entry = if me.owner != target {
        MethodEntry { body: MethodBody::Alias(me.clone()), owner: target, ..entry }
    } else {
        entry
    };
    add_method_with_hooks(ctx, target, entry)
}

pub fn undef_method(ctx: &mut Ctx, target: Value, name: SymId) -> Result<()> {
    if module::find_method(ctx, target, name).is_none() {
        return Err(undefined_method_error(ctx, target, name));
    }
    module::add_method(ctx, target, MethodEntry { name, original_name: name, owner: target, visibility: Visibility::Public, body: MethodBody::Undefined });
    if ctx.vm().booted.get() {
        if body(target).kind == ClassKind::Singleton {
            let att = body(target).attached;
            let hook = ctx.intern("singleton_method_undefined");
            ctx.call(att, hook, &[Value::symbol(name)])?;
        } else {
            ctx.call(target, sym::METHOD_UNDEFINED, &[Value::symbol(name)])?;
        }
    }
    Ok(())
}

/// Method names visible on `klass` matching `want`.
pub fn method_list(ctx: &mut Ctx, klass: Value, inherit: bool, want: impl Fn(Visibility) -> bool) -> Vec<Value> {
    let mods: Vec<Value> = if inherit { module::ancestors(ctx, klass).to_vec() } else { vec![klass] };
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for m in mods {
        let mut names: Vec<(SymId, Arc<MethodEntry>)> = body(m).methods.iter().map(|(n, me)| (*n, me.clone())).collect();
        names.sort_by_key(|(n, _)| n.0);
        for (n, me) in names {
            if !seen.insert(n) {
                continue;
            }
            if me.is_undefined() {
                continue;
            }
            if want(me.visibility) {
                out.push(Value::symbol(n));
            }
        }
    }
    out
}

/// `define_method(name, body = nil, &block)` on `target`.
pub fn define_method_impl(ctx: &mut Ctx, target: Value, args: &Args) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    let bodyv = match (args.pos.get(1), args.block) {
        (Some(&b), _) => b,
        (None, Some(b)) => crate::core::proc::from_block(ctx, &b)?,
        (None, None) => return Err(ctx.arg_error("tried to create Proc object without a block")),
    };
    let scope_vis = scope_visibility(ctx, target);
    let module_function = scope_vis == Visibility::ModuleFunction;
    let vis = if module_function || module::always_private(ctx, target, name) { Visibility::Private } else { scope_vis };
    let me = if crate::core::proc::is_proc(bodyv) {
        let p = if crate::core::proc::is_lambda(bodyv) {
            bodyv
        } else {
            let d = crate::core::proc::dup(ctx, bodyv);
            crate::object::basic(d).aux |= crate::core::proc::LAMBDA;
            d
        };
        MethodEntry { name, original_name: name, owner: target, visibility: vis, body: MethodBody::Proc(p) }
    } else if let Some(inner) = crate::core::method::method_entry_of(bodyv) {
        let owner_ok = module::is_class_or_module(inner.owner) && (module::is_module(inner.owner) || module::includes_module(ctx, target, inner.owner));
        if !owner_ok {
            if module::is_class_or_module(inner.owner) && body(inner.owner).kind == ClassKind::Singleton {
                return Err(ctx.type_error("can't bind singleton method to a different class"));
            }
            let oname = class_path(ctx, inner.owner);
            return Err(ctx.type_error(&format!("bind argument must be a subclass of {oname}")));
        }
        // A copy of the method's definition that belongs to `target`, as in CRuby: `super`
        // in it searches from `target`'s ancestors (for the original name).
        let mut def = &inner;
        while let MethodBody::Alias(i) = &def.body {
            def = i;
        }
        MethodEntry { name, original_name: def.original_name, owner: target, visibility: vis, body: def.body.clone() }
    } else {
        let cname = object::class_name_of(ctx, bodyv);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Proc/Method/UnboundMethod)")));
    };
    // Under `module_function`, the module's singleton gets a public copy.
    let single_copy = if module_function {
        let single = object::singleton_class(ctx, target)?;
        Some((single, MethodEntry { name, original_name: me.original_name, owner: single, visibility: Visibility::Public, body: me.body.clone() }))
    } else {
        None
    };
    add_method_with_hooks(ctx, target, me)?;
    if let Some((single, me)) = single_copy {
        add_method_with_hooks(ctx, single, me)?;
    }
    Ok(Value::symbol(name))
}

// ---- Module methods ----

fn m_name(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(body(recv).name.unwrap_or(Value::NIL))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = class_path(ctx, recv);
    Ok(string::new_utf8(ctx, &s))
}

fn m_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(object::is_a(ctx, args.pos[0], recv)))
}

fn m_eq(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv == args.pos[0]))
}

fn relation(ctx: &mut Ctx, a: Value, b: Value) -> Result<Option<std::cmp::Ordering>> {
    if !module::is_class_or_module(b) {
        return Err(ctx.type_error("compared with non class/module"));
    }
    if a == b {
        return Ok(Some(std::cmp::Ordering::Equal));
    }
    if module::includes_module(ctx, a, b) {
        return Ok(Some(std::cmp::Ordering::Less));
    }
    if module::includes_module(ctx, b, a) {
        return Ok(Some(std::cmp::Ordering::Greater));
    }
    Ok(None)
}

fn m_lt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(match relation(ctx, recv, args.pos[0])? {
        Some(std::cmp::Ordering::Less) => Value::TRUE,
        Some(_) => Value::FALSE,
        None => Value::NIL,
    })
}

fn m_le(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(match relation(ctx, recv, args.pos[0])? {
        Some(std::cmp::Ordering::Greater) => Value::FALSE,
        Some(_) => Value::TRUE,
        None => Value::NIL,
    })
}

fn m_gt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(match relation(ctx, recv, args.pos[0])? {
        Some(std::cmp::Ordering::Greater) => Value::TRUE,
        Some(_) => Value::FALSE,
        None => Value::NIL,
    })
}

fn m_ge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(match relation(ctx, recv, args.pos[0])? {
        Some(std::cmp::Ordering::Less) => Value::FALSE,
        Some(_) => Value::TRUE,
        None => Value::NIL,
    })
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !module::is_class_or_module(args.pos[0]) {
        return Ok(Value::NIL);
    }
    Ok(match relation(ctx, recv, args.pos[0])? {
        Some(o) => Value::fixnum(o as i64),
        None => Value::NIL,
    })
}

fn m_ancestors(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = module::ancestors(ctx, recv).to_vec();
    let a: Vec<Value> = a.into_iter().filter(|&m| body(m).kind != ClassKind::Singleton || m == recv).collect();
    Ok(array::from_vec(ctx, a))
}

fn check_module(ctx: &mut Ctx, m: Value) -> Result<()> {
    if !module::is_module(m) {
        let cname = object::class_name_of(ctx, m);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Module)")));
    }
    Ok(())
}

fn m_include(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    for &m in args.pos {
        check_module(ctx, m)?;
        if module::is_class_or_module(m) && body(m).refined {
            return Err(ctx.type_error("Cannot include refinement"));
        }
    }
    for &m in args.pos.iter().rev() {
        let append = ctx.intern("append_features");
        ctx.call(m, append, &[recv])?;
        ctx.call(m, sym::INCLUDED, &[recv])?;
    }
    Ok(recv)
}

/// The checks of CRuby's `ensure_includable`, in its order: the target must be a class or
/// module (`append_features` is also reachable with any argument through `send` or a
/// rebound UnboundMethod), not frozen, and the receiver a module (a Class receiver comes
/// from `Module.instance_method(...).bind(SomeClass)`).
fn check_includable(ctx: &mut Ctx, recv: Value, target: Value) -> Result<()> {
    if !module::is_class_or_module(target) {
        // Check_Type names the special constants by their literals.
        let cname = match target {
            Value::NIL => "nil".to_string(),
            Value::TRUE => "true".to_string(),
            Value::FALSE => "false".to_string(),
            _ => object::class_name_of(ctx, target),
        };
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Class)")));
    }
    ctx.check_frozen(target)?;
    check_module(ctx, recv)
}

fn m_append_features(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let target = args.pos[0];
    check_includable(ctx, recv, target)?;
    if module::includes_module(ctx, recv, target) && recv != target || module::ancestors(ctx, recv).contains(&target) {
        return Err(ctx.arg_error("cyclic include detected"));
    }
    if !module::includes_module(ctx, target, recv) {
        body(target).includes.push(recv);
        note_module_mixin(ctx, target);
        ctx.vm().bump_method_epoch();
        ctx.vm().bump_const_epoch();
    }
    Ok(recv)
}

fn note_module_mixin(ctx: &Ctx, target: Value) {
    if !ctx.vm().booted.get() {
        return;
    }
    let target = fast_path_class(target);
    let c = ctx.c();
    let bit = if target == c.integer || target == c.numeric || target == c.comparable || target == c.kernel || target == c.object {
        ops::REDEF_INTEGER | ops::REDEF_FLOAT
    } else if target == c.float {
        ops::REDEF_FLOAT
    } else if target == c.string {
        ops::REDEF_STRING
    } else if target == c.array {
        ops::REDEF_ARRAY
    } else if target == c.hash {
        ops::REDEF_HASH
    } else {
        0
    };
    if bit != 0 {
        ctx.vm().redefined.fetch_or(bit, std::sync::atomic::Ordering::Relaxed);
    }
}

fn m_prepend(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    for &m in args.pos {
        check_module(ctx, m)?;
        if body(m).refined {
            return Err(ctx.type_error("Cannot prepend refinement"));
        }
    }
    for &m in args.pos.iter().rev() {
        let pf = ctx.intern("prepend_features");
        ctx.call(m, pf, &[recv])?;
        ctx.call(m, sym::PREPENDED, &[recv])?;
    }
    Ok(recv)
}

fn m_prepend_features(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let target = args.pos[0];
    check_includable(ctx, recv, target)?;
    if module::ancestors(ctx, recv).contains(&target) {
        return Err(ctx.arg_error("cyclic prepend detected"));
    }
    if !body(target).prepends.contains(&recv) {
        body(target).prepends.push(recv);
        note_module_mixin(ctx, target);
        ctx.vm().bump_method_epoch();
    }
    Ok(recv)
}

fn m_extend_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = object::singleton_class(ctx, args.pos[0])?;
    check_includable(ctx, recv, s)?;
    if !module::includes_module(ctx, s, recv) {
        body(s).includes.push(recv);
        ctx.vm().bump_method_epoch();
    }
    Ok(args.pos[0])
}

fn m_hook_noop(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

fn m_include_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_module(ctx, args.pos[0])?;
    Ok(Value::bool(recv != args.pos[0] && module::ancestors(ctx, recv).contains(&args.pos[0])))
}

fn m_included_modules(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a: Vec<Value> = module::ancestors(ctx, recv).iter().copied().filter(|&m| module::is_module(m)).collect();
    Ok(array::from_vec(ctx, a))
}

fn instance_methods_impl(ctx: &mut Ctx, recv: Value, args: &Args, want: fn(Visibility) -> bool) -> Result<Value> {
    let inherit = args.pos.first().is_none_or(|v| v.truthy());
    // Without inherited ones, only the class's own table: not its prepended modules'.
    let list = method_list(ctx, recv, inherit, want);
    Ok(array::from_vec(ctx, list))
}

fn m_instance_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    instance_methods_impl(ctx, recv, args, |v| v != Visibility::Private)
}
fn m_public_instance_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    instance_methods_impl(ctx, recv, args, |v| v == Visibility::Public)
}
fn m_private_instance_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    instance_methods_impl(ctx, recv, args, |v| v == Visibility::Private)
}
fn m_protected_instance_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    instance_methods_impl(ctx, recv, args, |v| v == Visibility::Protected)
}

fn method_defined_impl(ctx: &mut Ctx, recv: Value, args: &Args, want: fn(Visibility) -> bool) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    let inherit = args.pos.get(1).is_none_or(|v| v.truthy());
    let me = if inherit {
        module::find_method(ctx, recv, name)
    } else {
        body(recv).methods.get(&name).cloned().filter(|m| !m.is_undefined())
    };
    Ok(Value::bool(me.is_some_and(|m| want(m.visibility))))
}

fn m_method_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    method_defined_impl(ctx, recv, args, |v| v != Visibility::Private)
}
fn m_public_method_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    method_defined_impl(ctx, recv, args, |v| v == Visibility::Public)
}
fn m_private_method_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    method_defined_impl(ctx, recv, args, |v| v == Visibility::Private)
}
fn m_protected_method_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    method_defined_impl(ctx, recv, args, |v| v == Visibility::Protected)
}

fn const_name_arg(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    let id = symbol::to_sym_id(ctx, v)?;
    let name = ctx.sym_name(id);
    if !valid_const_name(&name) {
        let s = String::from_utf8_lossy(&name).into_owned();
        return Err(ctx.name_error(&format!("wrong constant name {s}"), id, Value::NIL));
    }
    Ok(id)
}

fn m_const_get(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let inherit = args.pos.get(1).is_none_or(|v| v.truthy());
    let a = args.pos[0];
    if string::is_string(a) && string::bytes(a).windows(2).any(|w| w == b"::") {
        let path = string::to_rust_string_lossy(a);
        let mut cur = recv;
        let mut parts = path.split("::").peekable();
        if path.starts_with("::") {
            cur = ctx.c().object;
            parts.next();
        }
        for p in parts {
            if p.is_empty() {
                let cname = class_path(ctx, recv);
                return Err(ctx.name_error(&format!("wrong constant name {path}"), sym::EMPTY, cname.is_empty().then_some(Value::NIL).unwrap_or(Value::NIL)));
            }
            let s = string::new_utf8(ctx, p);
            if !module::is_class_or_module(cur) {
                let sv = object::inspect_string(ctx, cur)?;
                return Err(ctx.type_error(&format!("{sv} does not refer to class/module")));
            }
            cur = m_const_get(ctx, cur, &Args::new(&[s, Value::bool(inherit)]))?;
        }
        return Ok(cur);
    }
    let id = const_name_arg(ctx, a)?;
    let found = if inherit {
        let mut r = ops::const_in_ancestors(ctx, recv, id, false)?;
        if r.is_none() && module::is_module(recv) {
            let obj = ctx.c().object;
            r = ops::const_in_ancestors(ctx, obj, id, false)?;
        }
        r
    } else {
        ops::const_own(ctx, recv, id)?
    };
    match found {
        Some(v) => Ok(v),
        None => ops::const_missing(ctx, recv, id),
    }
}

fn m_const_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = const_name_arg(ctx, args.pos[0])?;
    const_set_checked(ctx, recv, id, args.pos[1])?;
    Ok(args.pos[1])
}

fn m_const_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let inherit = args.pos.get(1).is_none_or(|v| v.truthy());
    let a = args.pos[0];
    if string::is_string(a) && string::bytes(a).windows(2).any(|w| w == b"::") {
        let path = string::to_rust_string_lossy(a);
        let mut cur = if path.starts_with("::") { ctx.c().object } else { recv };
        for p in path.trim_start_matches("::").split("::") {
            let s = string::new_utf8(ctx, p);
            if !module::is_class_or_module(cur) || !m_const_defined(ctx, cur, &Args::new(&[s, Value::bool(inherit)]))?.truthy() {
                return Ok(Value::FALSE);
            }
            cur = m_const_get(ctx, cur, &Args::new(&[s, Value::bool(inherit)]))?;
        }
        return Ok(Value::TRUE);
    }
    let id = const_name_arg(ctx, a)?;
    let has = |m: Value| body(m).const_get(id).is_some();
    if !inherit {
        return Ok(Value::bool(has(recv)));
    }
    let anc = module::ancestors(ctx, recv);
    if anc.iter().any(|&m| has(m)) {
        return Ok(Value::TRUE);
    }
    if module::is_module(recv) {
        let obj = ctx.c().object;
        let anc = module::ancestors(ctx, obj);
        return Ok(Value::bool(anc.iter().any(|&m| has(m))));
    }
    Ok(Value::FALSE)
}

fn m_constants(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let inherit = args.pos.first().is_none_or(|v| v.truthy());
    let mut out = Vec::new();
    let mods: Vec<Value> = if inherit { module::ancestors(ctx, recv).to_vec() } else { vec![recv] };
    let object = ctx.c().object;
    for m in mods {
        if inherit && m == object && recv != object {
            break;
        }
        for (n, e) in body(m).consts.iter() {
            if !e.private && !out.contains(&Value::symbol(*n)) {
                out.push(Value::symbol(*n));
            }
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn m_remove_const(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = const_name_arg(ctx, args.pos[0])?;
    ctx.check_frozen(recv)?;
    match body(recv).const_remove(id) {
        Some(e) => {
            ctx.vm().bump_const_epoch();
            if e.deprecated {
                let owner = if recv == ctx.c().object { String::new() } else { class_path(ctx, recv) };
                let n = ctx.sym_str(id);
                crate::core::warning::deprecated(ctx, &format!("constant {owner}::{n}"))?;
            }
            Ok(if e.value.is_undef() { Value::NIL } else { e.value })
        }
        None => {
            let n = ctx.sym_str(id);
            let cname = class_path(ctx, recv);
            Err(ctx.name_error(&format!("constant {cname}::{n} not defined"), id, recv))
        }
    }
}

fn m_const_missing(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = symbol::to_sym_id(ctx, args.pos[0])?;
    let n = ctx.sym_str(id);
    let msg = if recv == ctx.c().object {
        format!("uninitialized constant {n}")
    } else {
        // The scope is shown by its (possibly redefined) #name, or #inspect
        // when anonymous.
        let name = ctx.call_str(recv, "name", &[])?;
        let shown = if string::is_string(name) { name } else { object::inspect(ctx, recv)? };
        format!("uninitialized constant {}::{}", string::to_rust_string_lossy(shown), n)
    };
    let e = ctx.name_error(&msg, id, recv);
    if let crate::error::Unwind::Raise(ev) = &e {
        crate::core::exception::capture_backtrace_from_caller(ctx, *ev);
    }
    Err(e)
}

fn m_private_constant(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_const_visibility(ctx, recv, args, true)
}

fn m_public_constant(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    set_const_visibility(ctx, recv, args, false)
}

fn set_const_visibility(ctx: &mut Ctx, recv: Value, args: &Args, private: bool) -> Result<Value> {
    for &a in args.pos {
        let id = symbol::to_sym_id(ctx, a)?;
        let b = body(recv);
        match b.const_index.get(&id) {
            Some(&i) => b.consts_mut()[i].1.private = private,
            None => {
                let n = ctx.sym_str(id);
                let cname = class_path(ctx, recv);
                return Err(ctx.name_error(&format!("constant {cname}::{n} not defined"), id, recv));
            }
        }
    }
    ctx.vm().bump_const_epoch();
    Ok(Value::NIL)
}

/// `deprecate_constant(*names)`: a later reference warns (category deprecated).
fn m_deprecate_constant(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let id = symbol::to_sym_id(ctx, a)?;
        let b = body(recv);
        match b.const_index.get(&id) {
            Some(&i) => b.consts_mut()[i].1.deprecated = true,
            None => {
                let n = ctx.sym_str(id);
                let cname = class_path(ctx, recv);
                return Err(ctx.name_error(&format!("constant {cname}::{n} not defined"), id, recv));
            }
        }
    }
    // Cached lookups must come back through the warning.
    ctx.vm().bump_const_epoch();
    Ok(recv)
}

fn cvar_name_arg(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    let id = symbol::to_sym_id(ctx, v)?;
    let n = ctx.sym_name(id);
    if !(n.len() > 2 && n.starts_with(b"@@") && !n[2].is_ascii_digit()) {
        let s = String::from_utf8_lossy(&n).into_owned();
        return Err(ctx.name_error(&format!("'{s}' is not allowed as a class variable name"), id, Value::NIL));
    }
    Ok(id)
}

fn m_cvar_get(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = cvar_name_arg(ctx, args.pos[0])?;
    ops::cvar_get(ctx, recv, id)
}

fn m_cvar_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = cvar_name_arg(ctx, args.pos[0])?;
    ops::cvar_set(ctx, recv, id, args.pos[1])?;
    Ok(args.pos[1])
}

fn m_cvar_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = cvar_name_arg(ctx, args.pos[0])?;
    let anc = module::ancestors(ctx, recv);
    Ok(Value::bool(anc.iter().any(|&m| body(m).cvars.iter().any(|(n, _)| *n == id))))
}

fn m_class_variables(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let anc = module::ancestors(ctx, recv);
    let mut out = Vec::new();
    for &m in anc.iter() {
        for (n, _) in &body(m).cvars {
            if !out.contains(&Value::symbol(*n)) {
                out.push(Value::symbol(*n));
            }
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn m_remove_class_variable(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = cvar_name_arg(ctx, args.pos[0])?;
    let b = body(recv);
    match b.cvars.iter().position(|(n, _)| *n == id) {
        Some(p) => Ok(b.cvars.remove(p).1),
        None => {
            let n = ctx.sym_str(id);
            let cname = class_path(ctx, recv);
            Err(ctx.name_error(&format!("class variable {n} not defined for {cname}"), id, recv))
        }
    }
}

fn m_class_eval(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.block {
        Some(b) => {
            if !args.pos.is_empty() {
                return Err(ctx.arity_error(args.pos.len(), 0, Some(0)));
            }
            ctx.yield_with_self(&b, recv, &[recv], Some(recv))
        }
        None => {
            if args.pos.is_empty() {
                return Err(ctx.arity_error(0, 1, Some(3)));
            }
            crate::core::kernel::eval_string_with_self(ctx, args.pos[0], recv, crate::core::binding::EvalScope::Class(recv), args.pos.get(1).copied(), args.pos.get(2).copied())
        }
    }
}

fn m_class_exec(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    ctx.yield_with_self(&b, recv, args.pos, Some(recv))
}

fn m_define_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() || args.pos.len() > 2 {
        return Err(ctx.arity_error(args.pos.len(), 1, Some(2)));
    }
    define_method_impl(ctx, recv, args)
}

fn m_alias_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let new = symbol::to_sym_id(ctx, args.pos[0])?;
    let old = symbol::to_sym_id(ctx, args.pos[1])?;
    alias_method(ctx, recv, new, old)?;
    Ok(Value::symbol(new))
}

fn m_remove_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let name = symbol::to_sym_id(ctx, a)?;
        ctx.check_frozen(recv)?;
        // An undefined entry stays (the method remains undefined), as in CRuby.
        let defined = body(recv).methods.get(&name).is_some_and(|m| !m.is_undefined());
        if defined {
            body(recv).methods_mut().remove(&name);
        } else {
            let n = ctx.sym_str(name);
            let cname = class_path(ctx, recv);
            return Err(ctx.name_error(&format!("method '{n}' not defined in {cname}"), name, recv));
        }
        ctx.vm().bump_method_epoch();
        if body(recv).kind == ClassKind::Singleton {
            let att = body(recv).attached;
            let hook = ctx.intern("singleton_method_removed");
            ctx.call(att, hook, &[Value::symbol(name)])?;
        } else {
            ctx.call(recv, sym::METHOD_REMOVED, &[Value::symbol(name)])?;
        }
    }
    Ok(recv)
}

fn m_undef_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let name = symbol::to_sym_id(ctx, a)?;
        undef_method(ctx, recv, name)?;
    }
    Ok(recv)
}

fn attr_name(ctx: &mut Ctx, v: Value) -> Result<(SymId, SymId)> {
    let id = symbol::to_sym_id(ctx, v)?;
    let name = ctx.sym_name(id);
    let ok = !name.is_empty() && (name[0] == b'_' || name[0].is_ascii_alphabetic() || name[0] >= 0x80) && name.iter().all(|&c| c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80);
    if !ok {
        let s = String::from_utf8_lossy(&name).into_owned();
        return Err(ctx.name_error(&format!("invalid attribute name '{s}'"), id, Value::NIL));
    }
    let mut iv = b"@".to_vec();
    iv.extend_from_slice(&name);
    let ivar = ctx.intern_bytes(&iv);
    Ok((id, ivar))
}

/// The visibility `define_method`/`attr_*` give a method of `target`: the scope's
/// (`private` with no arguments before it, in a class body or a block run by the class)
/// when called from `target`'s own scope, public otherwise.
fn scope_visibility(ctx: &Ctx, target: Value) -> Visibility {
    use crate::interp::frame::FrameKind;
    let Some(fi) = ops::caller_ruby_frame(ctx) else { return Visibility::Public };
    let f = &ctx.stacks.frames[fi];
    if f.self_ != target {
        return Visibility::Public;
    }
    match f.kind {
        FrameKind::Class => f.visibility,
        FrameKind::Block | FrameKind::Lambda => ops::block_scope_visibility(ctx, fi),
        _ => Visibility::Public,
    }
}

fn define_attr(ctx: &mut Ctx, recv: Value, args: &Args, reader: bool, writer: bool) -> Result<Value> {
    let vis = match scope_visibility(ctx, recv) {
        Visibility::ModuleFunction => Visibility::Private,
        v => v,
    };
    let mut out = Vec::new();
    for &a in args.pos {
        let (id, ivar) = attr_name(ctx, a)?;
        if reader {
            add_method_with_hooks(ctx, recv, MethodEntry { name: id, original_name: id, owner: recv, visibility: vis, body: MethodBody::AttrReader(ivar) })?;
            out.push(Value::symbol(id));
        }
        if writer {
            let mut w = ctx.sym_name(id).to_vec();
            w.push(b'=');
            let wid = ctx.intern_bytes(&w);
            add_method_with_hooks(ctx, recv, MethodEntry { name: wid, original_name: wid, owner: recv, visibility: vis, body: MethodBody::AttrWriter(ivar) })?;
            out.push(Value::symbol(wid));
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn m_attr_reader(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    define_attr(ctx, recv, args, true, false)
}
fn m_attr_writer(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    define_attr(ctx, recv, args, false, true)
}
fn m_attr_accessor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    define_attr(ctx, recv, args, true, true)
}
fn m_attr(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() == 2 && (args.pos[1] == Value::TRUE || args.pos[1] == Value::FALSE) {
        let w = args.pos[1] == Value::TRUE;
        return define_attr(ctx, recv, &Args::new(&args.pos[..1]), true, w);
    }
    define_attr(ctx, recv, args, true, false)
}

/// Changes the visibility of named methods in `target` (copying inherited ones).
pub fn set_visibility(ctx: &mut Ctx, target: Value, names: &[Value], vis: Visibility) -> Result<()> {
    let mut list: Vec<Value> = Vec::new();
    for &n in names {
        if array::is_array(n) {
            list.extend(array::to_vec(n));
        } else {
            list.push(n);
        }
    }
    for n in list {
        let name = symbol::to_sym_id(ctx, n)?;
        let me = module::find_method(ctx, target, name).or_else(|| if module::is_module(target) { module::find_method(ctx, ctx.c().object, name) } else { None });
        let Some(me) = me else {
            return Err(undefined_method_error(ctx, target, name));
        };
        if me.visibility == vis {
            continue;
        }
        let entry = if me.owner == target {
            MethodEntry { name, original_name: me.original_name, owner: target, visibility: vis, body: me.body.clone() }
        } else {
            MethodEntry { name, original_name: me.original_name, owner: target, visibility: vis, body: MethodBody::ZSuper }
        };
        module::add_method(ctx, target, entry);
    }
    Ok(())
}

fn visibility_method(ctx: &mut Ctx, recv: Value, args: &Args, vis: Visibility) -> Result<Value> {
    if args.pos.is_empty() {
        if let Some(fi) = ops::caller_ruby_frame(ctx) {
            ctx.stacks.frames[fi].visibility = vis;
        }
        return Ok(Value::NIL);
    }
    set_visibility(ctx, recv, args.pos, vis)?;
    Ok(if args.pos.len() == 1 { args.pos[0] } else { array::from_slice(ctx, args.pos) })
}

fn m_public(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    visibility_method(ctx, recv, args, Visibility::Public)
}
fn m_private(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    visibility_method(ctx, recv, args, Visibility::Private)
}
fn m_protected(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    visibility_method(ctx, recv, args, Visibility::Protected)
}

fn m_module_function(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if module::is_class(recv) {
        return Err(ctx.type_error("module_function must be called for modules"));
    }
    if args.pos.is_empty() {
        if let Some(fi) = ops::caller_ruby_frame(ctx) {
            ctx.stacks.frames[fi].visibility = Visibility::ModuleFunction;
        }
        return Ok(Value::NIL);
    }
    let single = object::singleton_class(ctx, recv)?;
    for &n in args.pos {
        let name = symbol::to_sym_id(ctx, n)?;
        let Some(me) = module::find_method(ctx, recv, name) else {
            return Err(undefined_method_error(ctx, recv, name));
        };
        let copy = MethodEntry { name, original_name: me.original_name, owner: single, visibility: Visibility::Public, body: me.body.clone() };
        module::add_method(ctx, single, copy);
    }
    set_visibility(ctx, recv, args.pos, Visibility::Private)?;
    Ok(if args.pos.len() == 1 { args.pos[0] } else { array::from_slice(ctx, args.pos) })
}

fn m_private_class_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = object::singleton_class(ctx, recv)?;
    set_visibility(ctx, s, args.pos, Visibility::Private)?;
    Ok(Value::NIL)
}

fn m_public_class_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = object::singleton_class(ctx, recv)?;
    set_visibility(ctx, s, args.pos, Visibility::Public)?;
    Ok(Value::NIL)
}

fn m_instance_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    crate::core::method::unbound_method(ctx, recv, name, false)
}

fn m_public_instance_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    crate::core::method::unbound_method(ctx, recv, name, true)
}

fn m_freeze(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let _ = ctx;
    Ok(object::freeze(recv))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum((object::identity_hash(ctx, recv) >> 2) as i64))
}

fn m_nesting(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let mut out = Vec::new();
    if let Some(fi) = ops::caller_ruby_frame(ctx) {
        let mut c = ctx.stacks.frames[fi].cref;
        while !c.is_nil() {
            let cr = crate::interp::env::cref(c);
            if cr.parent.is_nil() {
                break;
            }
            if !basic(c).has(crate::interp::env::CREF_EVAL) {
                out.push(cr.klass);
            }
            c = cr.parent;
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn m_module_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = new_module(ctx, None);
    basic(m).klass = recv;
    ctx.call_kw(m, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(m)
}

fn m_module_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(b) = args.block {
        ctx.yield_with_self(&b, recv, &[recv], Some(recv))?;
    }
    Ok(Value::NIL)
}

fn m_singleton_class_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(body(recv).kind == ClassKind::Singleton))
}

fn m_attached_object(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if body(recv).kind != ClassKind::Singleton {
        let s = class_path(ctx, recv);
        return Err(ctx.type_error(&format!("'{s}' is not a singleton class")));
    }
    Ok(body(recv).attached)
}

fn m_autoload(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = const_name_arg(ctx, args.pos[0])?;
    // A path object's `to_path` counts, as for `require`.
    let mut path = args.pos[1];
    if !string::is_string(path) && path.is_heap() && ctx.respond_to(path, crate::symbol::sym::TO_PATH, true) {
        path = ctx.call(path, crate::symbol::sym::TO_PATH, &[])?;
    }
    let path = string::to_str_arg(ctx, path)?;
    if string::len(path) == 0 {
        return Err(ctx.arg_error("empty file name"));
    }
    crate::core::load::register_autoload(ctx, recv, id, path)?;
    Ok(Value::NIL)
}

fn m_autoload_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = symbol::to_sym_id(ctx, args.pos[0])?;
    let pending = |m: Value| body(m).const_get(id).and_then(|e| e.autoload.filter(|_| e.value.is_undef()));
    // With `inherit` (the default) the ancestors' autoloads count too.
    if args.pos.get(1).is_none_or(|v| v.truthy()) {
        let list = crate::core::module::ancestors(ctx, recv);
        return Ok(list.iter().find_map(|&m| pending(m)).unwrap_or(Value::NIL));
    }
    Ok(pending(recv).unwrap_or(Value::NIL))
}

/// `Module#ruby2_keywords(*names)`: flags methods defined in this module (see
/// `iseq::set_ruby2_keywords`); a method taking keywords or no `*rest` is skipped
/// with a warning, as in CRuby.
fn m_ruby2_keywords(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &n in args.pos {
        let name = crate::core::symbol::to_sym_id(ctx, n)?;
        let Some(me) = body(recv).methods.get(&name).cloned() else {
            return Err(undefined_method_error(ctx, recv, name));
        };
        let iseq = match &me.body {
            MethodBody::Iseq { iseq, .. } => Some(*iseq),
            MethodBody::Proc(p) => crate::core::proc::captured(*p).map(|c| c.iseq),
            _ => None,
        };
        match iseq {
            Some(i) if crate::compile::iseq::set_ruby2_keywords(i) => {}
            Some(_) => {
                let n = ctx.sym_str(name);
                crate::core::kernel::write_warning(ctx, &format!("Skipping set of ruby2_keywords flag for {n} (method accepts keywords or method does not accept argument splat)\n"));
            }
            None => {
                let n = ctx.sym_str(name);
                crate::core::kernel::write_warning(ctx, &format!("Skipping set of ruby2_keywords flag for {n} (method not defined in Ruby)\n"));
            }
        }
    }
    Ok(Value::NIL)
}

/// `const_source_location(name, inherit = true)`: [path, line] of the
/// assignment, [] for a constant the VM defines, nil when not found.
fn m_const_source_location(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let inherit = args.pos.get(1).is_none_or(|v| v.truthy());
    let path = if let Some(id) = args.pos[0].as_symbol() { ctx.sym_str(id) } else { string::to_rust_string_lossy(string::to_str_arg(ctx, args.pos[0])?) };
    let mut scope = recv;
    let parts: Vec<&str> = path.split("::").collect();
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() && i == 0 {
            scope = ctx.c().object;
            continue;
        }
        let id = ctx.intern(part);
        let mut chain = if inherit { module::ancestors(ctx, scope).to_vec() } else { vec![scope] };
        if inherit && module::is_module(scope) {
            chain.push(ctx.c().object);
        }
        let Some(owner) = chain.into_iter().find(|&m| body(m).const_get(id).is_some()) else {
            return Ok(Value::NIL);
        };
        let (value, location) = {
            let e = body(owner).const_get(id).expect("found above");
            (e.value, e.location.clone())
        };
        if i + 1 == parts.len() {
            return Ok(match location {
                Some((p, l)) => {
                    let ps = string::new_utf8(ctx, &p);
                    array::from_vec(ctx, vec![ps, Value::fixnum(l as i64)])
                }
                None => array::new(ctx),
            });
        }
        if !module::is_class_or_module(value) {
            let s = object::inspect_string(ctx, value)?;
            return Err(ctx.type_error(&format!("{s} is not a class/module")));
        }
        scope = value;
    }
    Ok(Value::NIL)
}

// ---- Class methods ----

fn c_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = object::allocate(ctx, recv)?;
    ctx.call_kw(o, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(o)
}

fn c_allocate(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if body(recv).kind == ClassKind::Singleton {
        return Err(ctx.type_error("can't create instance of singleton class"));
    }
    object::allocate(ctx, recv)
}

fn c_superclass(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if body(recv).uninitialized {
        return Err(ctx.type_error("uninitialized class"));
    }
    let mut s = body(recv).superclass;
    while module::is_class_or_module(s) && body(s).kind == ClassKind::Singleton && body(recv).kind != ClassKind::Singleton {
        s = body(s).superclass;
    }
    Ok(s)
}

fn c_subclasses(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let subs: Vec<Value> = body(recv).subclasses.iter().rev().copied().collect();
    Ok(array::from_vec(ctx, subs))
}

/// Checks that `sup` may be the superclass of a new class.
fn check_inheritable(ctx: &mut Ctx, sup: Value) -> Result<()> {
    if !module::is_class(sup) {
        let cname = object::class_name_of(ctx, sup);
        return Err(ctx.type_error(&format!("superclass must be an instance of Class (given an instance of {cname})")));
    }
    if body(sup).kind == ClassKind::Singleton {
        return Err(ctx.type_error("can't make subclass of singleton class"));
    }
    if sup == ctx.c().class {
        return Err(ctx.type_error("can't make subclass of Class"));
    }
    if body(sup).uninitialized {
        return Err(ctx.type_error("can't inherit uninitialized class"));
    }
    Ok(())
}

fn c_class_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let sup = args.pos.first().copied().unwrap_or(ctx.c().object);
    check_inheritable(ctx, sup)?;
    let k = new_class(ctx, sup, None);
    if recv != ctx.c().class {
        basic(k).klass = recv;
    }
    ctx.call(sup, sym::INHERITED, &[k])?;
    if let Some(b) = args.block {
        ctx.yield_with_self(&b, k, &[k], Some(k))?;
    }
    Ok(k)
}

/// `Class#initialize(superclass = Object)`: completes a class made by `Class.allocate`.
fn c_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !body(recv).uninitialized {
        return Err(ctx.type_error("already initialized class"));
    }
    let sup = args.pos.first().copied().unwrap_or(ctx.c().object);
    check_inheritable(ctx, sup)?;
    let b = body(recv);
    b.superclass = sup;
    b.alloc = body(sup).alloc;
    b.uninitialized = false;
    body(sup).subclasses.push(recv);
    // The metaclass follows: class methods of `sup` become the new class's.
    let meta = basic(recv).klass;
    if module::is_class_or_module(meta) && body(meta).kind == ClassKind::Singleton && body(meta).attached == recv {
        body(meta).superclass = object::singleton_class(ctx, sup)?;
    }
    ctx.vm().bump_method_epoch();
    ctx.call(sup, sym::INHERITED, &[recv])?;
    if let Some(blk) = args.block {
        ctx.yield_with_self(&blk, recv, &[recv], Some(recv))?;
    }
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let m = ctx.c().module;
    crate::methods!(ctx, m, [
        ("new", m_module_new, [0], Unsafe, Singleton, Kw),
        ("nesting", m_nesting, [0], Safe, Singleton),
        ("initialize", m_module_initialize, [0], Unsafe, Private),
        ("name", m_name, [0], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_to_s, [0], Safe),
        ("===", m_eqq, [1], Safe),
        ("==", m_eq, [1], Safe),
        ("<", m_lt, [1], Safe),
        ("<=", m_le, [1], Safe),
        (">", m_gt, [1], Safe),
        (">=", m_ge, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("ancestors", m_ancestors, [0], Safe),
        ("include", m_include, [0..], Unsafe),
        ("prepend", m_prepend, [0..], Unsafe),
        ("append_features", m_append_features, [1], Unsafe, Private),
        ("prepend_features", m_prepend_features, [1], Unsafe, Private),
        ("extend_object", m_extend_object, [1], Unsafe, Private),
        ("included", m_hook_noop, [1], Safe, Private),
        ("extended", m_hook_noop, [1], Safe, Private),
        ("prepended", m_hook_noop, [1], Safe, Private),
        ("method_added", m_hook_noop, [1], Safe, Private),
        ("method_removed", m_hook_noop, [1], Safe, Private),
        ("method_undefined", m_hook_noop, [1], Safe, Private),
        ("const_added", m_hook_noop, [1], Safe, Private),
        ("include?", m_include_p, [1], Safe),
        ("included_modules", m_included_modules, [0], Safe),
        ("instance_methods", m_instance_methods, [0..=1], Safe),
        ("public_instance_methods", m_public_instance_methods, [0..=1], Safe),
        ("private_instance_methods", m_private_instance_methods, [0..=1], Safe),
        ("protected_instance_methods", m_protected_instance_methods, [0..=1], Safe),
        ("method_defined?", m_method_defined, [1..=2], Safe),
        ("public_method_defined?", m_public_method_defined, [1..=2], Safe),
        ("private_method_defined?", m_private_method_defined, [1..=2], Safe),
        ("protected_method_defined?", m_protected_method_defined, [1..=2], Safe),
        ("instance_method", m_instance_method, [1], Safe),
        ("public_instance_method", m_public_instance_method, [1], Safe),
        ("const_get", m_const_get, [1..=2], Safe),
        ("const_set", m_const_set, [2], Unsafe),
        ("const_defined?", m_const_defined, [1..=2], Safe),
        ("constants", m_constants, [0..=1], Safe),
        ("remove_const", m_remove_const, [1], Unsafe, Private),
        ("const_missing", m_const_missing, [1], Safe),
        ("const_source_location", m_const_source_location, [1..=2], Safe),
        ("private_constant", m_private_constant, [0..], Unsafe),
        ("public_constant", m_public_constant, [0..], Unsafe),
        ("deprecate_constant", m_deprecate_constant, [0..], Unsafe),
        ("class_variable_get", m_cvar_get, [1], Safe),
        ("class_variable_set", m_cvar_set, [2], Unsafe),
        ("class_variable_defined?", m_cvar_defined, [1], Safe),
        ("class_variables", m_class_variables, [0..=1], Safe),
        ("remove_class_variable", m_remove_class_variable, [1], Unsafe),
        ("class_eval", m_class_eval, [0..=3], Unsafe),
        ("module_eval", m_class_eval, [0..=3], Unsafe),
        ("class_exec", m_class_exec, [0..], Unsafe, Kw),
        ("module_exec", m_class_exec, [0..], Unsafe, Kw),
        ("define_method", m_define_method, [0..], Unsafe),
        ("alias_method", m_alias_method, [2], Unsafe),
        ("remove_method", m_remove_method, [0..], Unsafe),
        ("undef_method", m_undef_method, [0..], Unsafe),
        ("attr", m_attr, [0..], Unsafe),
        ("attr_reader", m_attr_reader, [0..], Unsafe),
        ("attr_writer", m_attr_writer, [0..], Unsafe),
        ("attr_accessor", m_attr_accessor, [0..], Unsafe),
        ("public", m_public, [0..], Unsafe),
        ("private", m_private, [0..], Unsafe),
        ("protected", m_protected, [0..], Unsafe),
        ("module_function", m_module_function, [0..], Unsafe),
        ("private_class_method", m_private_class_method, [0..], Unsafe),
        ("public_class_method", m_public_class_method, [0..], Unsafe),
        ("freeze", m_freeze, [0], Unsafe),
        ("hash", m_hash, [0], Safe),
        ("singleton_class?", m_singleton_class_p, [0], Safe),
        ("autoload", m_autoload, [2], Unsafe),
        ("autoload?", m_autoload_p, [1..=2], Safe),
        ("ruby2_keywords", m_ruby2_keywords, [0..], Unsafe, Private),
        ("set_temporary_name", m_set_temporary_name, [1], Unsafe),
    ]);
    let c = ctx.c().class;
    crate::methods!(ctx, c, [
        ("new", c_class_new, [0..=1], Unsafe, Singleton),
        ("new", c_new, [0..], Unsafe, Kw),
        ("allocate", c_allocate, [0], Unsafe),
        ("superclass", c_superclass, [0], Safe),
        ("subclasses", c_subclasses, [0], Safe),
        ("attached_object", m_attached_object, [0], Safe),
        ("inherited", m_hook_noop, [1], Safe, Private),
        ("initialize", c_initialize, [0..=1], Unsafe, Private),
    ]);
    let _ = Block::Proc;
}
