//! Global variables, including the special ones backed by VM or frame state.
//!
//! Invariants: `$~` and `$_` are frame-local (see `interp::ops::svar_frame`); `$!` is the
//! thread's `errinfo`; every other global is an entry in `Vm::globals`, possibly an alias.
//! Every change to that table is made here and bumps `Vm::globals_epoch` (`changed`).

use crate::core::{array, object, string};
use crate::interp::ops;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::vm::GlobalEntry;
use crate::Result;

fn resolve(ctx: &Ctx, mut id: SymId) -> SymId {
    for _ in 0..16 {
        match ctx.vm().globals.borrow().get(&id).and_then(|e| e.alias_of) {
            Some(t) => id = t,
            None => break,
        }
    }
    id
}

/// Records a change to the globals table (`Vm::globals_epoch`); every writer calls it.
pub fn changed(ctx: &Ctx) {
    let e = &ctx.vm().globals_epoch;
    e.set(e.get() + 1);
}

pub fn get(ctx: &mut Ctx, id: SymId) -> Result<Value> {
    let id = resolve(ctx, id);
    match id {
        sym::DOLLAR_TILDE => return Ok(ops::get_last_match(ctx)),
        sym::DOLLAR_UNDERSCORE => return Ok(ops::get_caller_last_line(ctx)),
        sym::DOLLAR_BANG => return Ok(ctx.stacks.errinfo),
        sym::DOLLAR_AT => {
            let e = ctx.stacks.errinfo;
            if e.is_nil() {
                return Ok(Value::NIL);
            }
            return ctx.call(e, sym::BACKTRACE, &[]);
        }
        sym::DOLLAR_DOLLAR => return Ok(Value::fixnum(std::process::id() as i64)),
        // Per thread (and fiber), as in CRuby.
        sym::DOLLAR_QUESTION => return Ok(ctx.last_status),
        _ => {}
    }
    let (value, getter) = match ctx.vm().globals.borrow().get(&id) {
        Some(e) => (e.value, e.getter),
        None => (Value::UNDEF, None),
    };
    if let Some(g) = getter {
        return g(ctx);
    }
    if value.is_undef() {
        // The back-references ($&, $`, $', $+, $1 …) reached through an alias
        // (`alias $MATCH $&`, English.rb): read from $~ like the compiled forms.
        let name = ctx.sym_str(id);
        let kind = match &*name {
            "$&" => Some(1),
            "$`" => Some(2),
            "$'" => Some(3),
            "$+" => Some(4),
            n => n.strip_prefix('$').and_then(|d| d.parse::<u32>().ok()).filter(|&d| d > 0).map(|d| d + 16),
        };
        if let Some(kind) = kind {
            let md = ops::get_last_match(ctx);
            if md.is_nil() {
                return Ok(Value::NIL);
            }
            return crate::core::matchdata::match_special(ctx, md, kind);
        }
        if verbose_level(ctx) == 2 {
            let (path, line) = crate::core::kernel::caller_location(ctx);
            let name = ctx.sym_str(id);
            crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: global variable '{name}' not initialized\n"), None)?;
        }
        return Ok(Value::NIL);
    }
    Ok(value)
}

pub fn set(ctx: &mut Ctx, id: SymId, v: Value) -> Result<()> {
    let named = id;
    let id = resolve(ctx, id);
    match id {
        // Separators: a String or nil (no conversion); anything else set is
        // deprecated. Messages name the variable as written ($-0 for $/).
        sym::DOLLAR_SLASH | sym::DOLLAR_BACKSLASH | sym::DOLLAR_COMMA | sym::DOLLAR_SEMICOLON => {
            let name = ctx.sym_str(named);
            let regexp_ok = id == sym::DOLLAR_SEMICOLON;
            if !v.is_nil() && !string::is_string(v) && !(regexp_ok && crate::core::regexp::is_regexp(v)) {
                let want = if regexp_ok { "String or Regexp" } else { "String" };
                return Err(ctx.type_error(&format!("value of {name} must be {want}")));
            }
            if !v.is_nil() {
                crate::core::warning::deprecated(ctx, &format!("'{name}'"))?;
            }
            set_raw(ctx, id, v);
            return Ok(());
        }
        sym::DOLLAR_TILDE => {
            if !v.is_nil() && !crate::core::matchdata::is_match_data(v) {
                let cname = object::class_name_of(ctx, v);
                return Err(ctx.type_error(&format!("wrong argument type {cname} (expected MatchData)")));
            }
            ops::set_last_match(ctx, v);
            return Ok(());
        }
        sym::DOLLAR_UNDERSCORE => {
            ops::set_caller_last_line(ctx, v);
            return Ok(());
        }
        sym::DOLLAR_AT => {
            // `$@ = bt` sets the backtrace of the exception being handled.
            let e = ctx.stacks.errinfo;
            if e.is_nil() {
                return Err(ctx.arg_error("$! not set"));
            }
            ctx.call(e, sym::SET_BACKTRACE, &[v])?;
            return Ok(());
        }
        sym::DOLLAR_BANG | sym::DOLLAR_DOLLAR | sym::DOLLAR_LOAD_PATH | sym::DOLLAR_LOADED_FEATURES | sym::DOLLAR_LT | sym::DOLLAR_FILENAME | sym::DOLLAR_QUESTION => {
            let n = ctx.sym_str(named);
            return Err(ctx.name_error(&format!("{n} is a read-only variable"), named, Value::NIL));
        }
        _ if matches!(ctx.sym_str(id).as_str(), "$&" | "$`" | "$'" | "$+" | "$-a" | "$-l" | "$-p") => {
            let n = ctx.sym_str(named);
            return Err(ctx.name_error(&format!("{n} is a read-only variable"), named, Value::NIL));
        }
        _ => {}
    }
    let setter = ctx.vm().globals.borrow().get(&id).and_then(|e| e.setter);
    changed(ctx);
    if let Some(s) = setter {
        s(ctx, v)?;
    } else {
        let mut g = ctx.vm().globals.borrow_mut();
        match g.get_mut(&id) {
            Some(e) => e.value = v,
            None => {
                g.insert(id, GlobalEntry { value: v, getter: None, setter: None, alias_of: None, traces: Vec::new() });
            }
        }
    }
    run_traces(ctx, id, v)
}

/// Runs the `trace_var` commands of global `id` after it was set to `v`.
fn run_traces(ctx: &mut Ctx, id: SymId, v: Value) -> Result<()> {
    let traces = match ctx.vm().globals.borrow().get(&id) {
        Some(e) if !e.traces.is_empty() => e.traces.clone(),
        _ => return Ok(()),
    };
    // Kept alive while they run (a command may untrace the others).
    let list = array::from_vec(ctx, traces.clone());
    let mark = ctx.protect(list);
    let mut r = Ok(());
    for cmd in traces {
        r = if string::is_string(cmd) {
            // A String command is evaluated at the top level, as CRuby does.
            let tb = ctx.intern("TOPLEVEL_BINDING");
            let b = crate::core::module::body(ctx.c().object).const_get(tb).map_or(Value::NIL, |e| e.value);
            ctx.call_str(b, "eval", &[cmd]).map(|_| ())
        } else {
            ctx.call_str(cmd, "call", &[v]).map(|_| ())
        };
        if r.is_err() {
            break;
        }
    }
    ctx.unprotect(mark);
    r
}

/// The global variable name argument of `trace_var`/`untrace_var` (resolving aliases).
fn gvar_name_arg(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    let id = crate::core::symbol::to_sym_id(ctx, v)?;
    Ok(resolve(ctx, id))
}

/// `trace_var(name, cmd)` / `trace_var(name) { |value| ... }`: runs the command after
/// each assignment to the global; without either, the same as `untrace_var(name)`.
pub fn trace_var(ctx: &mut Ctx, args: &crate::interp::Args) -> Result<Value> {
    let id = gvar_name_arg(ctx, args.pos[0])?;
    let cmd = match (args.pos.get(1), args.block) {
        (Some(&c), _) if c.is_nil() => return untrace_var(ctx, args),
        (Some(&c), _) => c,
        (None, Some(b)) => crate::core::proc::from_block(ctx, &b)?,
        (None, None) => return Err(ctx.arg_error("tried to create Proc object without a block")),
    };
    changed(ctx);
    let mut g = ctx.vm().globals.borrow_mut();
    let e = g.entry(id).or_insert(GlobalEntry { value: Value::UNDEF, getter: None, setter: None, alias_of: None, traces: Vec::new() });
    e.traces.insert(0, cmd);
    Ok(Value::NIL)
}

/// `untrace_var(name, cmd = nil)`: removes that command, or all of them; returns an
/// Array of the removed ones.
pub fn untrace_var(ctx: &mut Ctx, args: &crate::interp::Args) -> Result<Value> {
    let id = gvar_name_arg(ctx, args.pos[0])?;
    changed(ctx);
    let removed = {
        let mut g = ctx.vm().globals.borrow_mut();
        match g.get_mut(&id) {
            None => None,
            Some(e) => Some(match args.pos.get(1) {
                Some(&c) => {
                    let before = e.traces.len();
                    e.traces.retain(|&t| t != c);
                    if e.traces.len() < before { vec![c] } else { Vec::new() }
                }
                None => std::mem::take(&mut e.traces),
            }),
        }
    };
    match removed {
        Some(list) => Ok(array::from_vec(ctx, list)),
        None => {
            let n = ctx.sym_str(id);
            Err(ctx.name_error(&format!("undefined global variable {n}"), id, Value::NIL))
        }
    }
}

/// Defines a plain global (used at boot).
pub fn define(ctx: &Ctx, name: SymId, value: Value) {
    changed(ctx);
    ctx.vm().globals.borrow_mut().insert(name, GlobalEntry { value, getter: None, setter: None, alias_of: None, traces: Vec::new() });
}

pub fn define_hooked(ctx: &Ctx, name: SymId, value: Value, getter: Option<fn(&mut Ctx) -> Result<Value>>, setter: Option<fn(&mut Ctx, Value) -> Result<()>>) {
    changed(ctx);
    ctx.vm().globals.borrow_mut().insert(name, GlobalEntry { value, getter, setter, alias_of: None, traces: Vec::new() });
}

/// Reads a global's stored value without hooks (for the VM's own use).
pub fn raw(ctx: &Ctx, name: SymId) -> Value {
    ctx.vm().globals.borrow().get(&name).map_or(Value::NIL, |e| e.value)
}

pub fn set_raw(ctx: &Ctx, name: SymId, v: Value) {
    changed(ctx);
    if let Some(e) = ctx.vm().globals.borrow_mut().get_mut(&name) {
        e.value = v;
    }
}

pub fn is_defined(ctx: &mut Ctx, id: SymId) -> bool {
    let id = resolve(ctx, id);
    if matches!(id, sym::DOLLAR_BANG | sym::DOLLAR_AT | sym::DOLLAR_TILDE | sym::DOLLAR_UNDERSCORE | sym::DOLLAR_DOLLAR) {
        return true;
    }
    ctx.vm().globals.borrow().get(&id).is_some_and(|e| !e.value.is_undef() || e.getter.is_some())
}

pub fn alias(ctx: &mut Ctx, new: SymId, old: SymId) {
    let target = resolve(ctx, old);
    if target == new {
        return;
    }
    changed(ctx);
    ctx.vm().globals.borrow_mut().insert(new, GlobalEntry { value: Value::NIL, getter: None, setter: None, alias_of: Some(target), traces: Vec::new() });
}

/// `$VERBOSE`: nil → 0, false → 1, true → 2.
pub fn verbose_level(ctx: &mut Ctx) -> u8 {
    let v = raw(ctx, sym::DOLLAR_VERBOSE);
    if v.is_nil() {
        0
    } else if v.truthy() {
        2
    } else {
        1
    }
}

pub fn names(ctx: &mut Ctx) -> Value {
    let mut list: Vec<SymId> = ctx.vm().globals.borrow().keys().copied().collect();
    for s in [sym::DOLLAR_BANG, sym::DOLLAR_AT, sym::DOLLAR_TILDE, sym::DOLLAR_UNDERSCORE, sym::DOLLAR_DOLLAR] {
        if !list.contains(&s) {
            list.push(s);
        }
    }
    list.sort_by_key(|s| s.0);
    let v: Vec<Value> = list.into_iter().map(Value::symbol).collect();
    array::from_vec(ctx, v)
}

fn set_verbose(ctx: &mut Ctx, v: Value) -> Result<()> {
    let v = if v.is_nil() { Value::NIL } else { Value::bool(v.truthy()) };
    set_raw(ctx, sym::DOLLAR_VERBOSE, v);
    Ok(())
}

fn get_verbose(ctx: &mut Ctx) -> Result<Value> {
    Ok(raw(ctx, sym::DOLLAR_VERBOSE))
}

fn set_separator(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !v.is_nil() && !string::is_string(v) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("value of $/ must be String, {cname} given").replace("$/", "$/")));
    }
    set_raw(ctx, sym::DOLLAR_SLASH, v);
    Ok(())
}

fn set_field_sep(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !v.is_nil() && !string::is_string(v) && !crate::core::regexp::is_regexp(v) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("value of $; must be String or Regexp, {cname} given")));
    }
    set_raw(ctx, sym::DOLLAR_SEMICOLON, v);
    Ok(())
}

fn set_output_sep(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !v.is_nil() && !string::is_string(v) {
        let cname = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("value of $, must be String, {cname} given")));
    }
    set_raw(ctx, sym::DOLLAR_COMMA, v);
    Ok(())
}

fn set_program_name(ctx: &mut Ctx, v: Value) -> Result<()> {
    let s = string::to_str_arg(ctx, v)?;
    let f = object::freeze(string::dup_literal(ctx, s));
    set_raw(ctx, sym::DOLLAR_ZERO, f);
    crate::core::process::set_process_title(string::bytes(s).to_vec());
    Ok(())
}

fn get_program_name(ctx: &mut Ctx) -> Result<Value> {
    Ok(raw(ctx, sym::DOLLAR_ZERO))
}

fn get_ignorecase(ctx: &mut Ctx) -> Result<Value> {
    deprecated_category_warning(ctx, "variable $= is no longer effective")?;
    Ok(Value::FALSE)
}

fn set_ignorecase(ctx: &mut Ctx, _v: Value) -> Result<()> {
    deprecated_category_warning(ctx, "variable $= is no longer effective; ignored")
}

fn deprecated_category_warning(ctx: &mut Ctx, msg: &str) -> Result<()> {
    if !crate::core::warning::enabled(ctx, "deprecated") || verbose_level(ctx) == 0 {
        return Ok(());
    }
    let (path, line) = crate::core::kernel::caller_location(ctx);
    crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: {msg}\n"), Some("deprecated"))
}

/// `$.`: converted with to_int.
fn set_lineno(ctx: &mut Ctx, v: Value) -> Result<()> {
    let n = crate::core::integer::to_i64_arg(ctx, v)?;
    set_raw(ctx, sym::DOLLAR_DOT, Value::fixnum(n));
    Ok(())
}

pub fn init(ctx: &mut Ctx) {
    define_hooked(ctx, sym::DOLLAR_VERBOSE, Value::FALSE, Some(get_verbose), Some(set_verbose));
    define(ctx, sym::DOLLAR_DEBUG, Value::FALSE);
    define(ctx, sym::DOLLAR_COMMA, Value::NIL);
    define_hooked(ctx, sym::DOLLAR_COMMA, Value::NIL, None, Some(set_output_sep));
    let nl = string::new_utf8(ctx, "\n");
    let nl = object::freeze(nl);
    define_hooked(ctx, sym::DOLLAR_SLASH, nl, None, Some(set_separator));
    define_hooked(ctx, sym::DOLLAR_SEMICOLON, Value::NIL, None, Some(set_field_sep));
    define(ctx, sym::DOLLAR_BACKSLASH, Value::NIL);
    let name = string::new_utf8(ctx, "-");
    define_hooked(ctx, sym::DOLLAR_ZERO, name, Some(get_program_name), Some(set_program_name));
    alias(ctx, sym::DOLLAR_PROGRAM_NAME, sym::DOLLAR_ZERO);
    alias(ctx, sym::DOLLAR_W, sym::DOLLAR_VERBOSE);
    alias(ctx, sym::DOLLAR_V, sym::DOLLAR_VERBOSE);
    alias(ctx, sym::DOLLAR_0, sym::DOLLAR_SLASH);
    let lp = array::new(ctx);
    define(ctx, sym::DOLLAR_LOAD_PATH, lp);
    alias(ctx, sym::DOLLAR_COLON, sym::DOLLAR_LOAD_PATH);
    let i = ctx.intern("$-I");
    alias(ctx, i, sym::DOLLAR_LOAD_PATH);
    let lf = array::new(ctx);
    define(ctx, sym::DOLLAR_LOADED_FEATURES, lf);
    alias(ctx, sym::DOLLAR_DQUOTE, sym::DOLLAR_LOADED_FEATURES);
    for name in ["$-a", "$-l", "$-p"] {
        let id = ctx.intern(name);
        define(ctx, id, Value::FALSE);
    }
    let dash_d = ctx.intern("$-d");
    alias(ctx, dash_d, sym::DOLLAR_DEBUG);
    let eq = ctx.intern("$=");
    define_hooked(ctx, eq, Value::FALSE, Some(get_ignorecase), Some(set_ignorecase));
    if ctx.vm().globals.borrow().get(&sym::DOLLAR_DOT).is_none() {
        define_hooked(ctx, sym::DOLLAR_DOT, Value::fixnum(0), None, Some(set_lineno));
    }
}
