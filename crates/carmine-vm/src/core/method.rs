//! Method and UnboundMethod: a method entry, optionally bound to a receiver; also the
//! curried callables made by `Proc#curry`/`Method#curry`.

use std::sync::Arc;

use crate::core::module::{self, MethodBody, MethodEntry, Visibility};
use crate::core::{array, object, string, symbol};
use crate::interp::{call, class_of, Args};
use crate::object::data_ref;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct MethodObj {
    /// The receiver, or `UNDEF` for an UnboundMethod.
    pub recv: Value,
    pub me: Arc<MethodEntry>,
    /// The class the method was looked up in (for `inspect` and `bind` checks).
    pub klass: Value,
    pub name: SymId,
    /// The class whose `public :m`/`private :m` made the inherited method found its own
    /// (`owner` reports it); nil otherwise.
    pub zsuper_owner: Value,
}

crate::data_obj!(MethodObj, |s, m| {
    m.mark(s.recv);
    m.mark(s.klass);
    m.mark(s.zsuper_owner);
    s.me.mark(m);
});

/// The method entry behind a Method/UnboundMethod value.
pub fn method_entry_of(v: Value) -> Option<Arc<MethodEntry>> {
    data_ref::<MethodObj>(v).map(|m| m.me.clone())
}

fn name_error_for(ctx: &mut Ctx, recv: Value, name: SymId, unbound: bool) -> crate::error::Unwind {
    let n = ctx.sym_str(name);
    if unbound {
        let cname = crate::core::module_methods::class_path(ctx, recv);
        let kind = if module::is_module(recv) { "module" } else { "class" };
        return ctx.name_error(&format!("undefined method '{n}' for {kind} '{cname}'"), name, recv);
    }
    let desc = object::describe_for_error(ctx, recv);
    ctx.name_error(&format!("undefined method '{n}' for {desc}"), name, recv)
}

/// `obj.method(:name)`.
pub fn method_object(ctx: &mut Ctx, recv: Value, name: SymId) -> Result<Value> {
    method_object_of(ctx, recv, name, true)
}

/// A Method for `recv.name`; a method only `respond_to_missing?(name, include_all)`
/// answers for forwards to `method_missing`.
fn method_object_of(ctx: &mut Ctx, recv: Value, name: SymId, include_all: bool) -> Result<Value> {
    let klass = class_of(ctx, recv);
    let me = match crate::core::refinement::find_method_seen(ctx, klass, name) {
        Some(me) => me,
        None => {
            // `method` asks `respond_to_missing?(name, true)`, `public_method` with false.
            let rtm = sym::RESPOND_TO_MISSING;
            if ctx.respond_to(recv, rtm, true) && ctx.call(recv, rtm, &[Value::symbol(name), Value::bool(include_all)])?.truthy() {
                // respond_to_missing?: a method that forwards to method_missing.
                Arc::new(MethodEntry { name, original_name: name, owner: klass, visibility: Visibility::Public, body: MethodBody::Undefined })
            } else {
                return Err(name_error_for(ctx, recv, name, false));
            }
        }
    };
    let mc = ctx.c().method;
    let zsuper_owner = zsuper_owner(ctx, klass, name);
    Ok(object::new_data(ctx, mc, Box::new(MethodObj { recv, me, klass, name, zsuper_owner })))
}

pub fn unbound_method(ctx: &mut Ctx, klass: Value, name: SymId, public_only: bool) -> Result<Value> {
    let me = crate::core::refinement::find_method_seen(ctx, klass, name).filter(|m| !public_only || m.visibility == Visibility::Public);
    let Some(me) = me else {
        return Err(name_error_for(ctx, klass, name, true));
    };
    let uc = ctx.c().unbound_method;
    let zsuper_owner = zsuper_owner(ctx, klass, name);
    Ok(object::new_data(ctx, uc, Box::new(MethodObj { recv: Value::UNDEF, me, klass, name, zsuper_owner })))
}

/// The class whose visibility change (`public :m` of an inherited method) lookup of
/// `name` from `klass` stops at first, or nil.
fn zsuper_owner(ctx: &Ctx, klass: Value, name: SymId) -> Value {
    if !module::is_class_or_module(klass) {
        return Value::NIL;
    }
    let anc = module::ancestors(ctx, klass);
    match anc.iter().find_map(|&m| module::body(m).methods.get(&name).map(|e| (m, matches!(e.body, MethodBody::ZSuper)))) {
        Some((m, true)) => m,
        _ => Value::NIL,
    }
}

/// A copy of a Method/UnboundMethod (`dup`/`clone`): same receiver, entry and lookup class.
pub fn dup(ctx: &mut Ctx, v: Value) -> Option<Value> {
    let m = data_ref::<MethodObj>(v)?;
    let copy = MethodObj { recv: m.recv, me: m.me.clone(), klass: m.klass, name: m.name, zsuper_owner: m.zsuper_owner };
    let klass = object::real_class_of(ctx, v);
    Some(object::new_data(ctx, klass, Box::new(copy)))
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a MethodObj> {
    match data_ref::<MethodObj>(v) {
        Some(m) => Ok(m),
        None => Err(ctx.type_error("uninitialized method")),
    }
}

fn m_call(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (r, me, name) = {
        let m = get(ctx, recv)?;
        (m.recv, m.me.clone(), m.name)
    };
    if me.is_undefined() {
        let mut a = vec![Value::symbol(name)];
        a.extend_from_slice(args.pos);
        return ctx.call_kw(r, sym::METHOD_MISSING, &a, args.kw, args.block);
    }
    call::invoke_from_rust(ctx, r, &me, args.pos, args.kw, args.block)
}

fn m_to_proc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(crate::core::proc::method_proc(ctx, recv))
}

pub fn arity_of_entry(me: &MethodEntry) -> i64 {
    match &me.body {
        MethodBody::Builtin { arity, .. } => arity.ruby_arity(),
        MethodBody::Iseq { iseq, .. } => {
            let (min, max) = crate::core::proc::iseq_min_max(*iseq);
            if max == Some(min) {
                min
            } else {
                -min - 1
            }
        }
        MethodBody::AttrReader(_) => 0,
        MethodBody::AttrWriter(_) => 1,
        MethodBody::Proc(p) => match crate::core::proc::captured(*p) {
            Some(c) => {
                let (min, max) = crate::core::proc::iseq_min_max(c.iseq);
                if max == Some(min) {
                    min
                } else {
                    -min - 1
                }
            }
            None => -1,
        },
        MethodBody::Alias(inner) => arity_of_entry(inner),
        _ => -1,
    }
}

/// (required, maximum or `None` when unbounded) positional arguments of a method.
pub fn min_max_of_entry(me: &MethodEntry) -> (i64, Option<i64>) {
    match resolved_body(me) {
        MethodBody::Builtin { arity, .. } => (arity.min as i64, arity.max.map(|m| m as i64)),
        MethodBody::Iseq { iseq, .. } => crate::core::proc::iseq_min_max(*iseq),
        MethodBody::AttrReader(_) => (0, Some(0)),
        MethodBody::AttrWriter(_) => (1, Some(1)),
        MethodBody::Proc(p) => crate::core::proc::min_max(*p),
        _ => (0, None),
    }
}

fn m_arity(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let me = get(ctx, recv)?.me.clone();
    Ok(Value::fixnum(arity_of_entry(&me)))
}

/// The body that runs for `me`: through the entries `define_method(name, method)` wraps.
fn resolved_body(me: &MethodEntry) -> &MethodBody {
    let mut def = me;
    while let MethodBody::Alias(inner) = &def.body {
        def = inner;
    }
    &def.body
}

/// `Method#parameters` of an entry.
fn parameters_of_entry(ctx: &mut Ctx, me: &MethodEntry) -> Value {
    let kind = |ctx: &mut Ctx, k: &str| {
        let k = Value::symbol(ctx.intern(k));
        array::from_slice(ctx, &[k])
    };
    match resolved_body(me) {
        MethodBody::Iseq { iseq, .. } => crate::core::proc::parameters_of(ctx, *iseq, true),
        MethodBody::Proc(p) => match crate::core::proc::captured(*p) {
            Some(c) => crate::core::proc::parameters_of(ctx, c.iseq, true),
            None => array::new(ctx),
        },
        MethodBody::AttrWriter(_) => {
            let p = kind(ctx, "req");
            array::from_slice(ctx, &[p])
        }
        // A method `respond_to_missing?` answers for takes anything.
        MethodBody::Undefined => {
            let p = kind(ctx, "rest");
            array::from_slice(ctx, &[p])
        }
        MethodBody::Builtin { arity, .. } => {
            let arity = *arity;
            let out = array::new(ctx);
            for _ in 0..arity.min {
                let p = kind(ctx, "req");
                array::push(ctx, out, p);
            }
            match arity.max {
                Some(max) => {
                    for _ in arity.min..max {
                        let p = kind(ctx, "opt");
                        array::push(ctx, out, p);
                    }
                }
                None => {
                    let p = kind(ctx, "rest");
                    array::push(ctx, out, p);
                }
            }
            out
        }
        _ => array::new(ctx),
    }
}

fn m_parameters(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let me = get(ctx, recv)?.me.clone();
    Ok(parameters_of_entry(ctx, &me))
}

/// The entry an alias made in another class stands for (`alias_method` of an inherited
/// method, `define_method(name, method)`).
fn aliased_entry(me: &Arc<MethodEntry>) -> &Arc<MethodEntry> {
    let mut def = me;
    while let MethodBody::Alias(inner) = &def.body {
        def = inner;
    }
    def
}

fn m_owner(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = get(ctx, recv)?;
    Ok(if m.zsuper_owner.is_nil() { m.me.owner } else { m.zsuper_owner })
}

fn m_receiver(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(get(ctx, recv)?.recv)
}

fn m_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::symbol(get(ctx, recv)?.name))
}

fn m_original_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::symbol(get(ctx, recv)?.me.original_name))
}

fn m_unbind(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (me, klass, name, zsuper_owner) = {
        let m = get(ctx, recv)?;
        (m.me.clone(), m.klass, m.name, m.zsuper_owner)
    };
    let uc = ctx.c().unbound_method;
    Ok(object::new_data(ctx, uc, Box::new(MethodObj { recv: Value::UNDEF, me, klass, name, zsuper_owner })))
}

fn check_bind(ctx: &mut Ctx, me: &MethodEntry, target: Value) -> Result<()> {
    let owner = me.owner;
    if module::is_module(owner) {
        return Ok(());
    }
    let k = class_of(ctx, target);
    if module::includes_module(ctx, k, owner) {
        return Ok(());
    }
    // A singleton method binds only to its object (or, for a class's, its subclasses).
    let singleton = module::is_class_or_module(owner) && module::body(owner).kind == module::ClassKind::Singleton;
    if singleton {
        return Err(ctx.type_error("singleton method called for a different object"));
    }
    let oname = crate::core::module_methods::class_path(ctx, owner);
    Err(ctx.type_error(&format!("bind argument must be an instance of {oname}")))
}

fn u_bind(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (me, klass, name, zsuper_owner) = {
        let m = get(ctx, recv)?;
        (m.me.clone(), m.klass, m.name, m.zsuper_owner)
    };
    let target = args.pos[0];
    check_bind(ctx, &me, target)?;
    let mc = ctx.c().method;
    Ok(object::new_data(ctx, mc, Box::new(MethodObj { recv: target, me, klass, name, zsuper_owner })))
}

fn u_bind_call(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let me = get(ctx, recv)?.me.clone();
    let Some((&target, rest)) = args.pos.split_first() else {
        return Err(ctx.arity_error(0, 1, None));
    };
    check_bind(ctx, &me, target)?;
    call::invoke_from_rust(ctx, target, &me, rest, args.kw, args.block)
}

/// `[path, line]` of a method written in Ruby, `nil` for a builtin.
pub fn source_location_of_entry(ctx: &mut Ctx, me: &MethodEntry) -> Value {
    let iseq = match resolved_body(me) {
        MethodBody::Iseq { iseq, .. } => Some(*iseq),
        MethodBody::Proc(p) => crate::core::proc::captured(*p).map(|c| c.iseq),
        _ => None,
    };
    match iseq {
        Some(i) => {
            let is = crate::compile::iseq::iseq_of(i);
            let p = string::new_utf8(ctx, &is.path);
            array::from_slice(ctx, &[p, Value::fixnum(is.first_line as i64)])
        }
        None => Value::NIL,
    }
}

fn m_source_location(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let me = get(ctx, recv)?.me.clone();
    Ok(source_location_of_entry(ctx, &me))
}

/// The parameter list `inspect` shows, from `parameters`: `(a, b=..., *c, d:, e: ..., **f,
/// &g)`; unnamed ones read `_`, and `*, **, &` together (or a lone `&`) read `...`.
fn signature_of(ctx: &mut Ctx, params: Value) -> String {
    let pairs: Vec<(String, Option<String>)> = array::to_vec(params)
        .into_iter()
        .map(|pair| {
            let v = array::to_vec(pair);
            let kind = v.first().and_then(|k| k.as_symbol()).map(|k| ctx.sym_str(k).to_string()).unwrap_or_default();
            let name = v.get(1).and_then(|n| n.as_symbol()).map(|n| ctx.sym_str(n).to_string());
            (kind, name)
        })
        .collect();
    let named = |i: usize, kind: &str, name: &str| pairs.get(i).is_some_and(|(k, n)| k == kind && n.as_deref() == Some(name));
    let forwarding = pairs.len() >= 3 && {
        let n = pairs.len();
        named(n - 3, "rest", "*") && named(n - 2, "keyrest", "**") && named(n - 1, "block", "&")
    };
    let mut parts: Vec<String> = Vec::new();
    for (i, (kind, name)) in pairs.iter().enumerate() {
        if forwarding && i + 3 >= pairs.len() {
            if i + 3 == pairs.len() {
                parts.push("...".into());
            }
            continue;
        }
        let name = name.as_deref();
        let part = match (kind.as_str(), name) {
            ("req", n) => n.unwrap_or("_").to_string(),
            ("opt", n) => format!("{}=...", n.unwrap_or("_")),
            ("keyreq", n) => format!("{}:", n.unwrap_or("_")),
            ("key", n) => format!("{}: ...", n.unwrap_or("_")),
            ("rest", Some("*")) | ("rest", None) => "*".into(),
            ("rest", Some(n)) => format!("*{n}"),
            ("keyrest", Some("**")) | ("keyrest", None) => "**".into(),
            ("keyrest", Some(n)) => format!("**{n}"),
            // CRuby shows an anonymous block parameter as `...` too.
            ("block", Some("&")) => "...".into(),
            ("block", n) => format!("&{}", n.unwrap_or("block")),
            ("nokey", _) => "**nil".into(),
            (_, n) => n.unwrap_or("_").to_string(),
        };
        parts.push(part);
    }
    format!("({})", parts.join(", "))
}

/// `Method#inspect` as Ruby 3.4 writes it: `#<Method: Receiver(Owner)#name(original)(params)
/// path:line>`; a singleton method reads `recv.name`, an UnboundMethod names its owner.
fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (r, me, klass, name) = {
        let m = get(ctx, recv)?;
        (m.recv, m.me.clone(), m.klass, m.name)
    };
    let cname = object::class_name_of(ctx, recv);
    // An alias of an inherited method shows where the aliased method is defined.
    let owner = aliased_entry(&me).owner;
    let mut s = format!("#<{cname}: ");
    let mut sharp = "#";
    let is_singleton = |k: Value| module::is_class_or_module(k) && module::body(k).kind == module::ClassKind::Singleton;
    if r.is_undef() {
        s.push_str(&object::inspect_string(ctx, owner)?);
    } else if is_singleton(owner) {
        let attached = module::body(owner).attached;
        sharp = ".";
        if attached == r {
            s.push_str(&object::inspect_string(ctx, r)?);
        } else {
            s.push_str(&object::inspect_string(ctx, r)?);
            s.push('(');
            s.push_str(&object::inspect_string(ctx, attached)?);
            s.push(')');
        }
    } else {
        // The receiver's class; a plain object's singleton class shows as its class.
        let mut shown = klass;
        if is_singleton(shown) && !module::is_class_or_module(module::body(shown).attached) {
            shown = module::real_class(shown);
        }
        s.push_str(&object::inspect_string(ctx, shown)?);
        if shown != owner {
            s.push('(');
            s.push_str(&object::inspect_string(ctx, owner)?);
            s.push(')');
        }
    }
    s.push_str(sharp);
    s.push_str(&ctx.sym_str(name));
    if me.original_name != name {
        s.push('(');
        s.push_str(&ctx.sym_str(me.original_name));
        s.push(')');
    }
    let params = parameters_of_entry(ctx, &me);
    s.push_str(&signature_of(ctx, params));
    let loc = source_location_of_entry(ctx, &me);
    if !loc.is_nil() {
        let v = array::to_vec(loc);
        let path = string::to_rust_string_lossy(v[0]);
        s.push_str(&format!(" {}:{}", path, v[1].as_fixnum().unwrap_or(0)));
    }
    s.push('>');
    Ok(string::new_utf8(ctx, &s))
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    let Some(b) = data_ref::<MethodObj>(o) else { return Ok(Value::FALSE) };
    let a = get(ctx, recv)?;
    if object::real_class_of(ctx, recv) != object::real_class_of(ctx, o) {
        return Ok(Value::FALSE);
    }
    if a.recv != b.recv {
        return Ok(Value::FALSE);
    }
    // One Ruby definition is the same method under any name or owner (an alias in a
    // subclass included); builtins are told apart by the owner of their definition too.
    if let (Some(x), Some(y)) = (ruby_definition(&a.me), ruby_definition(&b.me)) {
        return Ok(Value::bool(x == y));
    }
    let (x, y) = (aliased_entry(&a.me), aliased_entry(&b.me));
    Ok(Value::bool(x.owner == y.owner && (Arc::ptr_eq(x, y) || definition_key(x) == definition_key(y))))
}

/// The instruction sequence of a method written in Ruby, through aliases.
fn ruby_definition(me: &MethodEntry) -> Option<Value> {
    let mut def = me;
    while let MethodBody::Alias(inner) = &def.body {
        def = inner;
    }
    match &def.body {
        MethodBody::Iseq { iseq, .. } => Some(*iseq),
        _ => None,
    }
}

/// What identifies a method's definition for `==`/`hash`: the function of a builtin (as
/// CRuby compares cfuncs, so builtins registered under two names are equal, like its
/// aliases), otherwise the original name.
fn definition_key(me: &MethodEntry) -> u64 {
    match &me.body {
        MethodBody::Builtin { f, .. } => *f as usize as u64,
        _ => me.original_name.0 as u64,
    }
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = get(ctx, recv)?;
    let key = match ruby_definition(&m.me) {
        Some(iseq) => iseq.raw(),
        None => {
            let def = aliased_entry(&m.me);
            definition_key(def) ^ def.owner.raw()
        }
    };
    let h = crate::core::hash::mix(crate::core::hash::mix(ctx.vm().hash_seed, m.recv.raw()), key);
    Ok(Value::fixnum((h >> 2) as i64))
}

fn m_super_method(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (r, me) = {
        let m = get(ctx, recv)?;
        (m.recv, m.me.clone())
    };
    let klass = if r.is_undef() { get(ctx, recv)?.klass } else { class_of(ctx, r) };
    // An alias looks above the method it stands for, by that method's name.
    let def = aliased_entry(&me);
    match module::find_super_method(ctx, klass, def.owner, def.original_name) {
        Some(sme) => {
            let mc = object::real_class_of(ctx, recv);
            let name = sme.name;
            Ok(object::new_data(ctx, mc, Box::new(MethodObj { recv: r, me: sme, klass, name, zsuper_owner: Value::NIL })))
        }
        None => Ok(Value::NIL),
    }
}

fn m_curry(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = crate::core::proc::method_proc(ctx, recv);
    let n = crate::core::proc::curry_arity(ctx, p, args.pos.first().copied())?;
    make_curry(ctx, p, n, true)
}

// ---- curry ----

struct CurryObj {
    target: Value,
    arity: i64,
    args: Value,
    lambda: bool,
}

crate::data_obj!(CurryObj, |s, m| {
    m.mark(s.target);
    m.mark(s.args);
});

/// A curried proc of `target` expecting `arity` arguments.
pub fn make_curry(ctx: &mut Ctx, target: Value, arity: i64, lambda: bool) -> Result<Value> {
    let args = array::new(ctx);
    let klass = curry_class(ctx);
    let c = object::new_data(ctx, klass, Box::new(CurryObj { target, arity, args, lambda }));
    let p = crate::core::proc::method_proc(ctx, c);
    if !lambda {
        crate::object::basic(p).aux &= !crate::core::proc::LAMBDA;
    }
    Ok(p)
}

fn curry_class(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("__curry_class__");
    crate::core::module::body(ctx.c().object).const_get(id).map_or(ctx.c().object, |e| e.value)
}

fn curry_call(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (target, arity, prev, lambda) = match data_ref::<CurryObj>(recv) {
        Some(c) => (c.target, c.arity, c.args, c.lambda),
        None => return Ok(Value::NIL),
    };
    let mut all = array::to_vec(prev);
    all.extend_from_slice(args.pos);
    if all.len() as i64 >= arity {
        return ctx.call_proc(target, &all, args.block);
    }
    let na = array::from_vec(ctx, all);
    let klass = curry_class(ctx);
    let c = object::new_data(ctx, klass, Box::new(CurryObj { target, arity, args: na, lambda }));
    let p = crate::core::proc::method_proc(ctx, c);
    if !lambda {
        crate::object::basic(p).aux &= !crate::core::proc::LAMBDA;
    }
    Ok(p)
}

// ---- composition ----

/// `f << g` / `f >> g`: calls `first` with the arguments (and block), then `second`
/// with the result.
struct ComposeObj {
    first: Value,
    second: Value,
}

crate::data_obj!(ComposeObj, |s, m| {
    m.mark(s.first);
    m.mark(s.second);
});

fn compose_call(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (first, second) = match data_ref::<ComposeObj>(recv) {
        Some(c) => (c.first, c.second),
        None => return Ok(Value::NIL),
    };
    let mid = ctx.intern("call");
    let r = ctx.call_kw(first, mid, args.pos, args.kw, args.block)?;
    ctx.call(second, mid, &[r])
}

/// The Proc composing `first` then `second`; `lambda` as CRuby decides it (the
/// receiver's for `>>`, the argument's for `<<`).
pub fn compose(ctx: &mut Ctx, first: Value, second: Value, lambda: bool) -> Result<Value> {
    let id = ctx.intern("__compose_class__");
    let klass = crate::core::module::body(ctx.c().object).const_get(id).map_or(ctx.c().object, |e| e.value);
    let c = object::new_data(ctx, klass, Box::new(ComposeObj { first, second }));
    let p = crate::core::proc::method_proc(ctx, c);
    if !lambda {
        crate::object::basic(p).aux &= !crate::core::proc::LAMBDA;
    }
    Ok(p)
}

/// The argument of `<<`/`>>`: a Proc, a Method or anything responding to `call`.
pub fn callable_arg(ctx: &mut Ctx, g: Value) -> Result<()> {
    let call = ctx.intern("call");
    if crate::core::proc::is_proc(g) || data_ref::<MethodObj>(g).is_some() || ctx.respond_to(g, call, true) {
        return Ok(());
    }
    Err(ctx.type_error("callable object is expected"))
}

/// Whether `g` makes a composition a lambda (a Proc's lambda-ness; other callables do).
pub fn composes_as_lambda(g: Value) -> bool {
    !crate::core::proc::is_proc(g) || crate::core::proc::is_lambda(g)
}

fn m_compose_left(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let g = args.pos[0];
    callable_arg(ctx, g)?;
    let lambda = composes_as_lambda(g);
    compose(ctx, g, recv, lambda)
}

fn m_compose_right(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let g = args.pos[0];
    callable_arg(ctx, g)?;
    compose(ctx, recv, g, true)
}

fn k_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    method_object(ctx, recv, name)
}

fn k_public_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    let m = method_object_of(ctx, recv, name, false)?;
    if get(ctx, m)?.me.visibility != Visibility::Public {
        return Err(name_error_for(ctx, recv, name, false));
    }
    Ok(m)
}

fn k_singleton_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let name = symbol::to_sym_id(ctx, args.pos[0])?;
    if recv.is_heap() {
        let k = crate::object::basic(recv).klass;
        if module::is_class_or_module(k) && module::body(k).kind == module::ClassKind::Singleton {
            // The singleton class and the modules it includes or prepends (Ruby 3.4).
            let found = module::own_ancestors(ctx, k).iter().find_map(|&m| module::body(m).methods.get(&name).cloned());
            if let Some(me) = found.filter(|me| !me.is_undefined()) {
                let mc = ctx.c().method;
                return Ok(object::new_data(ctx, mc, Box::new(MethodObj { recv, me, klass: k, name, zsuper_owner: Value::NIL })));
            }
        }
    }
    let n = ctx.sym_str(name);
    let s = object::inspect_string(ctx, recv)?;
    Err(ctx.name_error(&format!("undefined singleton method '{n}' for {s}"), name, recv))
}

pub fn init(ctx: &mut Ctx) {
    let m = ctx.c().method;
    crate::methods!(ctx, m, [
        ("call", m_call, [0..], Unsafe, Kw),
        ("()", m_call, [0..], Unsafe, Kw),
        ("[]", m_call, [0..], Unsafe, Kw),
        ("===", m_call, [0..], Unsafe, Kw),
        ("to_proc", m_to_proc, [0], Safe),
        ("arity", m_arity, [0], Safe),
        ("parameters", m_parameters, [0], Safe),
        ("owner", m_owner, [0], Safe),
        ("receiver", m_receiver, [0], Safe),
        ("name", m_name, [0], Safe),
        ("original_name", m_original_name, [0], Safe),
        ("unbind", m_unbind, [0], Safe),
        ("source_location", m_source_location, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_s", m_inspect, [0], Safe),
        ("==", m_eq, [1], Safe),
        ("eql?", m_eq, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("super_method", m_super_method, [0], Safe),
        ("curry", m_curry, [0..=1], Safe),
        ("<<", m_compose_left, [1], Unsafe),
        (">>", m_compose_right, [1], Unsafe),
    ]);
    let u = ctx.c().unbound_method;
    crate::methods!(ctx, u, [
        ("bind", u_bind, [1], Safe),
        ("bind_call", u_bind_call, [1..], Unsafe, Kw),
        ("arity", m_arity, [0], Safe),
        ("parameters", m_parameters, [0], Safe),
        ("owner", m_owner, [0], Safe),
        ("name", m_name, [0], Safe),
        ("original_name", m_original_name, [0], Safe),
        ("source_location", m_source_location, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_s", m_inspect, [0], Safe),
        ("==", m_eq, [1], Safe),
        ("eql?", m_eq, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("super_method", m_super_method, [0], Safe),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("method", k_method, [1], Safe),
        ("public_method", k_public_method, [1], Safe),
        ("singleton_method", k_singleton_method, [1], Safe),
    ]);
    let obj = ctx.c().object;
    let cc = crate::core::module_methods::new_class(ctx, obj, Some("Proc::Curry"));
    let id = ctx.intern("__curry_class__");
    crate::core::module::body(obj).const_set(id, cc);
    crate::methods!(ctx, cc, [("call", curry_call, [0..], Unsafe)]);
    let comp = crate::core::module_methods::new_class(ctx, obj, Some("Proc::Composition"));
    let id = ctx.intern("__compose_class__");
    crate::core::module::body(obj).const_set(id, comp);
    crate::methods!(ctx, comp, [("call", compose_call, [0..], Unsafe, Kw)]);
}
