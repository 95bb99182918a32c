//! Binding: a frame's self, lexical scope and local variables, for `eval`.
//!
//! Invariants: `env` is a heap environment whose `vals` match `names[0]`, its outer env
//! matches `names[1]`, and so on. A frame whose locals live on the stack is captured as
//! a snapshot (later writes through the binding do not reach the frame). Variables that
//! `eval` or `local_variable_set` create are added as a new innermost layer.

use crate::compile::iseq::{iseq_of, IseqKind};
use crate::compile::CompileOptions;
use crate::core::{array, object, string, symbol};
use crate::interp::env;
use crate::interp::frame::{Block, Captured, FrameKind};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct BindingObj {
    pub self_: Value,
    pub env: Value,
    pub cref: Value,
    pub names: Vec<Vec<SymId>>,
    pub owner: Value,
    pub mid: Option<SymId>,
    pub block: Option<Block>,
    pub path: String,
    pub line: u32,
    /// The backtrace label of the frame the binding was taken from, if known.
    pub label: Option<String>,
}

crate::data_obj!(BindingObj, |s, m| {
    m.mark(s.self_);
    m.mark(s.env);
    m.mark(s.cref);
    m.mark(s.owner);
    match s.block {
        Some(Block::Proc(p)) => m.mark(p),
        Some(Block::Captured(c)) => {
            m.mark(c.iseq);
            m.mark(c.self_);
            m.mark(c.env);
            m.mark(c.cref);
        }
        None => {}
    }
});

pub fn is_binding(v: Value) -> bool {
    data_ref::<BindingObj>(v).is_some()
}

fn new_binding(ctx: &mut Ctx, b: BindingObj) -> Value {
    let klass = ctx.c().binding;
    object::new_data(ctx, klass, Box::new(b))
}

/// A copy of a Binding (`dup`/`clone`): it sees the same variables, and variables that
/// `eval` creates in one copy stay in that copy (ERB evaluates in TOPLEVEL_BINDING.dup).
pub fn dup(ctx: &mut Ctx, v: Value) -> Option<Value> {
    let b = data_ref::<BindingObj>(v)?;
    let copy = BindingObj {
        self_: b.self_,
        env: b.env,
        cref: b.cref,
        names: b.names.clone(),
        owner: b.owner,
        mid: b.mid,
        block: b.block,
        path: b.path.clone(),
        line: b.line,
        label: b.label.clone(),
    };
    let klass = object::real_class_of(ctx, v);
    Some(object::new_data(ctx, klass, Box::new(copy)))
}

/// The binding of frame `fi`.
pub fn from_frame(ctx: &mut Ctx, fi: usize) -> Result<Value> {
    let (self_, fenv, outer, cref, owner, mid, block, iseq_val, bp, nlocals, path, line, info) = {
        let f = &ctx.stacks.frames[fi];
        let iseq = f.iseq();
        (f.self_, f.env, f.outer, f.cref, f.owner, f.mid, f.block(&ctx.stacks.frames), f.iseq_val, f.bp, iseq.local_count(), iseq.path.to_string(), f.line(), crate::core::exception::FrameInfo::of(f))
    };
    let label = Some(crate::core::exception::frame_label(ctx, info));
    let iseq = iseq_of(iseq_val);
    let mut names = vec![iseq.local_names.clone()];
    if matches!(iseq.kind, IseqKind::Block | IseqKind::Eval) {
        names.extend(iseq.outer_local_names.iter().cloned());
    }
    let env_v = if fenv.is_nil() {
        let vals: Box<[Value]> = ctx.stacks.stack[bp..bp + nlocals].into();
        crate::interp::call::new_env(ctx, vals, outer)
    } else {
        fenv
    };
    names.truncate(reachable_scopes(env_v, names.len()));
    Ok(new_binding(ctx, BindingObj { self_, env: env_v, cref, names, owner, mid, block, path, line, label }))
}

/// The binding of a Method's proc: the receiver as self, the method's lexical scope
/// (the top level for a builtin), no variables.
pub fn for_method(ctx: &mut Ctx, self_: Value, me: &crate::core::module::MethodEntry) -> Value {
    let cref = match &me.body {
        crate::core::module::MethodBody::Iseq { cref, .. } if !cref.is_nil() => *cref,
        _ => ctx.vm().top_cref.get(),
    };
    let (path, line) = match &me.body {
        crate::core::module::MethodBody::Iseq { iseq, .. } => {
            let is = iseq_of(*iseq);
            (is.path.to_string(), is.first_line)
        }
        _ => (String::from("<main>"), 0),
    };
    new_binding(ctx, BindingObj { self_, env: Value::NIL, cref, names: Vec::new(), owner: Value::NIL, mid: None, block: None, path, line, label: None })
}

/// TOPLEVEL_BINDING: main's self and top-level scope, with no variables until
/// `local_variable_set` adds some or the main script starts (`attach_main`).
pub fn new_toplevel(ctx: &mut Ctx) -> Value {
    let self_ = ctx.vm().main_obj.get();
    let cref = ctx.vm().top_cref.get();
    new_binding(ctx, BindingObj { self_, env: Value::NIL, cref, names: Vec::new(), owner: Value::NIL, mid: None, block: None, path: String::from("<main>"), line: 0, label: None })
}

/// The environment TOPLEVEL_BINDING's variables are in (the main script's frame
/// environment is created over it).
pub fn toplevel_env(ctx: &mut Ctx) -> Value {
    let tb = ctx.vm().toplevel_binding.get();
    data_ref::<BindingObj>(tb).map_or(Value::NIL, |b| b.env)
}

/// Makes the main script's frame environment `env` (created over `toplevel_env`) with its
/// local `names` the innermost layer of TOPLEVEL_BINDING, so the binding sees the
/// script's variables as they change.
pub fn attach_main(ctx: &mut Ctx, env: Value, names: Vec<SymId>) {
    let tb = ctx.vm().toplevel_binding.get();
    if let Some(b) = data_ref::<BindingObj>(tb) {
        if !env.is_nil() {
            b.env = env;
            b.names.insert(0, names);
        }
    }
}

/// The binding of a proc's creation point.
pub fn from_captured(ctx: &mut Ctx, c: &Captured) -> Result<Value> {
    let iseq = iseq_of(c.iseq);
    let mut names: Vec<Vec<SymId>> = iseq.outer_local_names.clone();
    names.truncate(reachable_scopes(c.env, names.len()));
    let path = iseq.path.to_string();
    let line = iseq.first_line;
    Ok(new_binding(ctx, BindingObj { self_: c.self_, env: c.env, cref: c.cref, names, owner: Value::NIL, mid: None, block: None, path, line, label: None }))
}

/// How many of `scopes` scopes have an environment on the chain from `env`. Only the
/// scopes whose locals live in heap environments are reachable: a scope that kept its
/// locals in its frame (no block used them) ends the chain, and its names (and those of
/// the scopes around it) are not visible through a binding (reading them would read a
/// frame that may be gone, or no environment at all).
fn reachable_scopes(env: Value, scopes: usize) -> usize {
    let mut reachable = 0;
    let mut e = env;
    while reachable < scopes && !e.is_nil() {
        reachable += 1;
        e = env::env(e).outer;
    }
    reachable
}

fn get<'a>(ctx: &mut Ctx, b: Value) -> Result<&'a mut BindingObj> {
    match data_ref::<BindingObj>(b) {
        Some(o) => Ok(o),
        None => Err(ctx.type_error("wrong argument type (expected binding)")),
    }
}

/// (depth, index) of a local in the binding (depth 0 = `env`).
fn find_local(b: &BindingObj, name: SymId) -> Option<(usize, usize)> {
    for (d, names) in b.names.iter().enumerate() {
        if let Some(i) = names.iter().position(|&n| n == name) {
            return Some((d, i));
        }
    }
    None
}

fn env_at(start: Value, depth: usize) -> Value {
    let mut e = start;
    for _ in 0..depth {
        if e.is_nil() {
            return e;
        }
        e = env::env(e).outer;
    }
    e
}

pub fn eval_in(ctx: &mut Ctx, b: Value, src: Value, file: Option<String>, line: Option<i32>) -> Result<Value> {
    let (self_, cref) = {
        let o = get(ctx, b)?;
        (o.self_, o.cref)
    };
    run_eval(ctx, b, src, file, line, self_, cref)
}

/// Runs `src` with `self_` in binding `b`; `cref_class` is the class constants resolve in
/// and `def` defines into (`class_eval`), `EvalScope::Singleton` that of `instance_eval`.
/// The scope a string eval runs in (see `eval_with_self`).
#[derive(Clone, Copy)]
pub enum EvalScope {
    /// The binding's own scope.
    Binding,
    /// `class_eval`: constants and `def` in the class.
    Class(Value),
    /// `instance_eval`: constants in the given class, `def` in self's singleton class.
    Singleton(Value),
}

pub fn eval_with_self(ctx: &mut Ctx, b: Value, src: Value, file: Option<String>, line: Option<i32>, self_: Value, cref_class: EvalScope) -> Result<Value> {
    let parent = get(ctx, b)?.cref;
    let cref = match cref_class {
        EvalScope::Class(k) => crate::interp::exec::new_cref(ctx, k, parent, false),
        EvalScope::Singleton(k) => {
            let c = crate::interp::exec::new_cref(ctx, k, parent, false);
            crate::object::basic(c).flags |= crate::interp::env::CREF_SINGLETON;
            c
        }
        EvalScope::Binding => parent,
    };
    run_eval(ctx, b, src, file, line, self_, cref)
}

fn run_eval(ctx: &mut Ctx, b: Value, src: Value, file: Option<String>, line: Option<i32>, self_: Value, cref: Value) -> Result<Value> {
    let (names, envv, owner, mid, block, bpath, bline, eval_label) = {
        let o = get(ctx, b)?;
        (o.names.clone(), o.env, o.owner, o.mid, o.block, o.path.clone(), o.line, o.label.clone())
    };
    let path = file.unwrap_or_else(|| format!("(eval at {bpath}:{bline})"));
    let default_encoding = Some(string::encoding(src));
    let opts = CompileOptions { path, line: line.unwrap_or(1), kind: IseqKind::Eval, eval_scopes: names.clone(), frozen_string_literal: ctx.vm().frozen_string_literals.get().then_some(true), top_label: String::from("<main>"), default_encoding, eval_in_method: mid.is_some(), eval_label, realpath: None };
    let bytes = string::bytes(src).to_vec();
    let iseq = crate::compile::compile(ctx, &bytes, &opts)?;
    let keep = ctx.protect(iseq);
    if crate::core::tracepoint::tracing(ctx) {
        if let Err(e) = crate::core::tracepoint::script_compiled(ctx, src) {
            ctx.unprotect(keep);
            return Err(e);
        }
    }
    let r = crate::interp::call::run_iseq_frame(ctx, iseq, FrameKind::Eval, self_, cref, envv, owner, mid, block);
    ctx.unprotect(keep);
    let (v, new_env) = r?;
    let new_names = iseq_of(iseq).local_names.clone();
    if !new_names.is_empty() && !new_env.is_nil() {
        let o = get(ctx, b)?;
        o.env = new_env;
        o.names.insert(0, new_names);
    }
    Ok(v)
}

pub fn local_variables(ctx: &mut Ctx, b: Value) -> Result<Value> {
    let names = get(ctx, b)?.names.clone();
    let mut out = Vec::new();
    for layer in names {
        for n in layer {
            let s = ctx.sym_name(n);
            let visible = s.first().is_some_and(|&c| c == b'_' || c.is_ascii_lowercase() || c >= 0x80);
            if visible && !out.contains(&Value::symbol(n)) {
                out.push(Value::symbol(n));
            }
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn local_name_arg(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    let id = symbol::to_sym_id(ctx, v)?;
    let s = ctx.sym_name(id);
    let ok = s.first().is_some_and(|&c| c == b'_' || c.is_ascii_lowercase() || c >= 0x80) && s.iter().all(|&c| c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80);
    if !ok {
        let n = String::from_utf8_lossy(&s).into_owned();
        return Err(ctx.name_error(&format!("wrong local variable name '{n}' for {}", "#<Binding>"), id, Value::NIL));
    }
    Ok(id)
}

fn b_local_variable_get(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = local_name_arg(ctx, args.pos[0])?;
    let o = get(ctx, recv)?;
    match find_local(o, id) {
        Some((d, i)) => {
            let e = env_at(o.env, d);
            Ok(if e.is_nil() { Value::NIL } else { env::env(e).vals.get(i).copied().unwrap_or(Value::NIL) })
        }
        None => {
            let n = ctx.sym_str(id);
            Err(ctx.name_error(&format!("local variable '{n}' is not defined for {}", "#<Binding>"), id, recv))
        }
    }
}

fn b_local_variable_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = local_name_arg(ctx, args.pos[0])?;
    let v = args.pos[1];
    let (found, envv) = {
        let o = get(ctx, recv)?;
        (find_local(o, id), o.env)
    };
    match found {
        Some((d, i)) => {
            let e = env_at(envv, d);
            if !e.is_nil() {
                if let Some(slot) = env::env(e).vals.get_mut(i) {
                    *slot = v;
                }
            }
        }
        None => {
            let ne = crate::interp::call::new_env(ctx, Box::new([v]), envv);
            let o = get(ctx, recv)?;
            o.env = ne;
            o.names.insert(0, vec![id]);
        }
    }
    Ok(v)
}

fn b_local_variable_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = local_name_arg(ctx, args.pos[0])?;
    let o = get(ctx, recv)?;
    Ok(Value::bool(find_local(o, id).is_some()))
}

fn b_local_variables(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    local_variables(ctx, recv)
}

fn b_receiver(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(get(ctx, recv)?.self_)
}

fn b_eval(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = string::to_str_arg(ctx, args.pos[0])?;
    let file = match args.pos.get(1) {
        Some(&f) => Some(string::str_arg(ctx, f)?),
        None => None,
    };
    let line = match args.pos.get(2) {
        Some(&l) => Some(crate::core::integer::to_i64_arg(ctx, l)? as i32),
        None => None,
    };
    eval_in(ctx, recv, src, file, line)
}

fn b_source_location(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (p, l) = {
        let o = get(ctx, recv)?;
        (o.path.clone(), o.line)
    };
    let ps = string::new_utf8(ctx, &p);
    Ok(array::from_slice(ctx, &[ps, Value::fixnum(l as i64)]))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().binding;
    crate::methods!(ctx, c, [
        ("local_variable_get", b_local_variable_get, [1], Unsafe),
        ("local_variable_set", b_local_variable_set, [2], Unsafe),
        ("local_variable_defined?", b_local_variable_defined, [1], Unsafe),
        ("local_variables", b_local_variables, [0], Unsafe),
        ("receiver", b_receiver, [0], Safe),
        ("eval", b_eval, [1..=3], Unsafe),
        ("source_location", b_source_location, [0], Safe),
    ]);
}
