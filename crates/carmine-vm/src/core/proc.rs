//! Proc: a captured block, a lambda, or a proc made from a Symbol or Method.
//!
//! Invariants:
//! - A Proc made from a block literal holds the block's `Captured` (iseq, self, env, cref,
//!   home frame); its environment lives on the heap, so it may outlive the frame.
//! - `RBasic::aux` bits: `LAMBDA`, `SYMBOL` (`cap.self_` is the Symbol), `METHOD`
//!   (`cap.self_` is a Method object). Only plain procs have an iseq.

use crate::compile::iseq::iseq_of;
use crate::core::{array, object, string};
use crate::heap::page::SLOT_SIZE;
use crate::heap::Marker;
use crate::interp::{Args, Block, Captured};
use crate::object::{basic, is_type, ObjType, RBasic};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[repr(C)]
pub struct RProc {
    pub basic: RBasic,
    pub cap: Captured,
}

const _: () = assert!(std::mem::size_of::<RProc>() <= SLOT_SIZE);

pub const LAMBDA: u32 = 1;
pub const SYMBOL: u32 = 2;
pub const METHOD: u32 = 4;
/// A block implemented by a Rust closure for the duration of one call (see `with_native_block`).
pub const NATIVE: u32 = 8;

#[inline]
fn rproc<'a>(v: Value) -> &'a mut RProc {
    // SAFETY: callers pass a Proc value.
    unsafe { &mut *v.as_ptr::<RProc>() }
}

#[inline]
pub fn is_proc(v: Value) -> bool {
    is_type(v, ObjType::Proc)
}

pub fn is_lambda(p: Value) -> bool {
    basic(p).aux & LAMBDA != 0
}

/// True for a proc made by `with_native_block`.
#[inline(always)]
pub fn is_native(p: Value) -> bool {
    basic(p).aux & NATIVE != 0
}

/// Calls the Rust closure behind a native proc (keywords are not passed to Rust closures).
#[inline(always)]
pub fn call_native(ctx: &mut Ctx, p: Value, args: &[Value]) -> Result<Value> {
    let f = crate::object::data_ref::<NativeBlock>(rproc(p).cap.self_).and_then(|n| n.f);
    let Some(f) = f else {
        return Err(ctx.local_jump_error("block called after the method that received it returned", sym::EMPTY, Value::NIL));
    };
    // SAFETY: `f` is live: `with_native_block` clears it before the closure's frame ends.
    unsafe { (*f)(ctx, args) }
}

/// The captured block of an iseq proc.
pub fn captured(p: Value) -> Option<Captured> {
    if basic(p).aux & (SYMBOL | METHOD | NATIVE) != 0 {
        None
    } else {
        Some(rproc(p).cap)
    }
}

pub fn mark(v: Value, m: &mut Marker<'_>) {
    let c = &rproc(v).cap;
    m.mark(c.iseq);
    m.mark(c.self_);
    m.mark(c.env);
    m.mark(c.cref);
}

fn alloc(ctx: &mut Ctx, cap: Captured, flags: u32) -> Value {
    let klass = ctx.c().proc_;
    let p = ctx.alloc_slot(ObjType::Proc, klass) as *mut RProc;
    // SAFETY: fresh Proc slot.
    unsafe {
        (*p).cap = cap;
        (*p).basic.aux = flags;
    }
    Value::from_ptr(p)
}

pub fn new_from_captured(ctx: &mut Ctx, cap: &Captured, lambda: bool) -> Value {
    let p = alloc(ctx, *cap, if lambda { LAMBDA } else { 0 });
    if iseq_of(cap.iseq).sees_block {
        record_home(ctx, p, cap);
    }
    p
}

/// Hidden ivar of a Proc whose block yields or calls super: [owner, method name, block]
/// of the method it was made in.
const HOME_IVAR: &str = "__home__";

/// Keeps the method context (owner, name, block) of a proc's home frame with the proc,
/// so `yield` and `super` in it still work when it runs after that frame is gone: on
/// another thread or fiber, or after the method returned.
fn record_home(ctx: &mut Ctx, p: Value, cap: &Captured) {
    let Some(h) = ctx.stacks.frames.get(cap.home_index as usize).filter(|h| h.serial == cap.home_serial) else { return };
    let (owner, mid, block) = (h.owner, h.mid, h.block);
    if owner.is_nil() && !block.is_some() {
        return;
    }
    let block = match block.get(&ctx.stacks.frames) {
        Some(Block::Proc(b)) => b,
        Some(Block::Captured(c)) => new_from_captured(ctx, &c, false),
        None => Value::NIL,
    };
    let mid = mid.map(Value::symbol).unwrap_or(Value::NIL);
    let info = array::from_vec(ctx, vec![owner, mid, block]);
    let id = ctx.intern(HOME_IVAR);
    object::ivar_set_raw(ctx, p, id, info);
}

/// After a block frame was pushed for proc `p`: when the proc's home frame is gone, gives
/// the frame the method context `record_home` kept.
#[inline]
pub fn restore_home(ctx: &mut Ctx, p: Value) {
    let Some(f) = ctx.stacks.frames.last() else { return };
    if !f.owner.is_nil() || f.block.is_some() || !basic(p).has(crate::object::FL_EXIVAR) {
        return;
    }
    restore_home_slow(ctx, p);
}

#[cold]
fn restore_home_slow(ctx: &mut Ctx, p: Value) {
    let id = ctx.intern(HOME_IVAR);
    let info = object::ivar_get(ctx, p, id);
    if !array::is_array(info) {
        return;
    }
    let v = array::to_vec(info);
    if let (Some(f), [owner, mid, block]) = (ctx.stacks.frames.last_mut(), v.as_slice()) {
        f.owner = *owner;
        f.mid = mid.as_symbol();
        f.block = crate::interp::frame::BlockRef::from_block((!block.is_nil()).then_some(Block::Proc(*block)));
    }
}

fn empty_cap(self_: Value) -> Captured {
    Captured { iseq: Value::NIL, self_, env: Value::NIL, cref: Value::NIL, home_serial: 0, home_index: 0, _pad: 0 }
}

/// `:sym.to_proc`.
pub fn symbol_proc(ctx: &mut Ctx, s: SymId) -> Value {
    alloc(ctx, empty_cap(Value::symbol(s)), SYMBOL | LAMBDA)
}

/// The method name of Symbol proc `p` made outside any refinement scope (`:name.to_proc`,
/// `&:name`), or `None` for any other proc.
pub fn plain_symbol(p: Value) -> Option<SymId> {
    let r = rproc(p);
    if basic(p).aux & SYMBOL == 0 || !r.cap.cref.is_nil() {
        return None;
    }
    r.cap.self_.as_symbol()
}

/// Makes Symbol proc `p` call through the refinements of scope `cref` (`&:sym` written
/// where `using` is active).
pub fn set_symbol_scope(p: Value, cref: Value) {
    rproc(p).cap.cref = cref;
}

/// `method(:m).to_proc`.
pub fn method_proc(ctx: &mut Ctx, method: Value) -> Value {
    alloc(ctx, empty_cap(method), METHOD | LAMBDA)
}

/// A Proc for a block argument (the same Proc when the block is one).
pub fn from_block(ctx: &mut Ctx, b: &Block) -> Result<Value> {
    match b {
        Block::Proc(p) => Ok(*p),
        Block::Captured(c) => Ok(new_from_captured(ctx, c, false)),
    }
}

pub fn dup(ctx: &mut Ctx, p: Value) -> Value {
    let cap = rproc(p).cap;
    let flags = basic(p).aux;
    let n = alloc(ctx, cap, flags);
    // The singleton class stays with the original (`clone` copies its methods itself).
    basic(n).klass = object::real_class_of(ctx, p);
    object::copy_ivars(ctx, n, p);
    n
}

/// The method a Symbol proc for `s` calls on `recv` (refinements aside), with one lookup:
/// a public method's entry; an error for a protected one (a Symbol proc has no calling self
/// that could be allowed it: CRuby's rb_funcall_with_block); `None` for the general path
/// (private or missing: NoMethodError or method_missing).
pub fn symbol_target(ctx: &mut Ctx, recv: Value, s: SymId) -> Result<Option<std::sync::Arc<crate::core::module::MethodEntry>>> {
    let klass = crate::interp::class_of(ctx, recv);
    match crate::core::module::find_method(ctx, klass, s) {
        Some(me) if me.visibility == crate::core::module::Visibility::Public => Ok(Some(me)),
        Some(me) if me.visibility == crate::core::module::Visibility::Protected => Err(crate::interp::call::method_visibility_error(ctx, recv, s, me.visibility)),
        _ => Ok(None),
    }
}

/// `symbol_target` when it is a public Ruby method (the common case, which callers push as
/// a frame), without the reference counting of an `Arc`: the entry is borrowed from the
/// class's method cache, valid until Ruby code runs or a method is defined.
pub fn symbol_ruby_target<'a>(ctx: &Ctx, recv: Value, s: SymId) -> Option<(&'a crate::core::module::MethodEntry, Value, Value)> {
    let me = crate::core::module::find_method_ref(ctx, crate::interp::class_of(ctx, recv), s)?;
    match me.body {
        crate::core::module::MethodBody::Iseq { iseq, cref } if me.visibility == crate::core::module::Visibility::Public => Some((me, iseq, cref)),
        _ => None,
    }
}

/// Calls a Symbol or Method proc.
pub fn call_special(ctx: &mut Ctx, p: Value, args: &[Value], kw: Option<Value>, block: Option<Block>) -> Result<Value> {
    let flags = basic(p).aux;
    let target = rproc(p).cap.self_;
    if flags & SYMBOL != 0 {
        let Some(s) = target.as_symbol() else { return Ok(Value::NIL) };
        let Some((&recv, rest)) = args.split_first() else {
            return Err(ctx.arg_error("no receiver given"));
        };
        let klass = crate::interp::class_of(ctx, recv);
        let scope = rproc(p).cap.cref;
        if !scope.is_nil() {
            let active = crate::interp::env::cref(scope).refinements;
            if let Some(me) = crate::core::refinement::find_method_refined(ctx, klass, s, active) {
                if crate::core::module::body(me.owner).refined {
                    return crate::interp::call::invoke_from_rust(ctx, recv, &me, rest, kw, block);
                }
            }
        }
        return match symbol_target(ctx, recv, s)? {
            Some(me) => crate::interp::call::invoke_from_rust(ctx, recv, &me, rest, kw, block),
            None => crate::interp::call::call_method(ctx, recv, s, rest, kw, block, false),
        };
    }
    if flags & METHOD != 0 {
        return ctx.call_kw(target, sym::CALL, args, kw, block);
    }
    if flags & NATIVE != 0 {
        return call_native(ctx, p, args);
    }
    Ok(Value::NIL)
}

type NativeFn = dyn FnMut(&mut Ctx, &[Value]) -> Result<Value>;

/// The closure behind a `NATIVE` proc; `None` once the call that created it returned.
pub struct NativeBlock {
    f: Option<*mut NativeFn>,
}

crate::data_obj!(NativeBlock);

/// Runs `body` with a block that calls `f` (values yielded to it arrive as a slice).
pub fn with_native_block<R>(ctx: &mut Ctx, f: &mut dyn FnMut(&mut Ctx, &[Value]) -> Result<Value>, body: impl FnOnce(&mut Ctx, Block) -> Result<R>) -> Result<R> {
    // SAFETY: the lifetime is erased only while `body` runs; the pointer is cleared before
    // `f` goes out of scope, and a cleared pointer is never called.
    let raw: *mut NativeFn = unsafe { std::mem::transmute::<*mut (dyn FnMut(&mut Ctx, &[Value]) -> Result<Value> + '_), *mut NativeFn>(f as *mut _) };
    let holder = object::new_data(ctx, Value::NIL, Box::new(NativeBlock { f: Some(raw) }));
    let p = alloc(ctx, empty_cap(holder), NATIVE);
    let r = body(ctx, Block::Proc(p));
    if let Some(n) = crate::object::data_ref::<NativeBlock>(holder) {
        n.f = None;
    }
    std::hint::black_box(holder);
    r
}

/// (min, max) positional arity of an iseq as CRuby counts it (a keyword parameter counts
/// as one optional argument, a required keyword as one required argument).
pub fn iseq_min_max(iseq_v: Value) -> (i64, Option<i64>) {
    let p = &iseq_of(iseq_v).params;
    let has_kw = !p.kw.is_empty() || p.kwrest;
    let min = (p.lead + p.post) as i64 + p.kw.iter().any(|k| k.required) as i64;
    let max = if p.rest || p.forwarding { None } else { Some((p.lead + p.opt + p.post) as i64 + has_kw as i64) };
    (min, max)
}

/// (required, maximum or `None` when unbounded) positional arguments of a proc, as
/// `curry` checks a lambda's arity against them.
pub fn min_max(p: Value) -> (i64, Option<i64>) {
    let flags = basic(p).aux;
    if flags & SYMBOL != 0 {
        return (1, None);
    }
    if flags & METHOD != 0 {
        return match crate::core::method::method_entry_of(rproc(p).cap.self_) {
            Some(me) => crate::core::method::min_max_of_entry(&me),
            None => (0, None),
        };
    }
    if flags & NATIVE != 0 {
        return (0, None);
    }
    iseq_min_max(rproc(p).cap.iseq)
}

/// CRuby's `Proc#arity`.
pub fn arity_of(_ctx: &Ctx, p: Value) -> i64 {
    let flags = basic(p).aux;
    if flags & SYMBOL != 0 {
        return -2;
    }
    if flags & METHOD != 0 {
        // A Method's proc has the method's arity.
        return match crate::core::method::method_entry_of(rproc(p).cap.self_) {
            Some(me) => crate::core::method::arity_of_entry(&me),
            None => -1,
        };
    }
    if flags & NATIVE != 0 {
        return -1;
    }
    let (min, max) = iseq_min_max(rproc(p).cap.iseq);
    let exact = if flags & LAMBDA != 0 { max == Some(min) } else { max.is_some() };
    if exact {
        min
    } else {
        -min - 1
    }
}

/// `Proc#parameters` / `Method#parameters` for an iseq.
pub fn parameters_of(ctx: &mut Ctx, iseq_v: Value, lambda: bool) -> Value {
    let iseq = iseq_of(iseq_v);
    let p = &iseq.params;
    let names = &iseq.local_names;
    let out = array::new(ctx);
    // Hidden locals (a destructured parameter) have no name: a proc's positional
    // parameter then reads `[:opt, nil]`, a lambda's `[:req]`. Anonymous `*`, `**` and
    // `&` keep their marks as names (Ruby 3.2+).
    let push = |ctx: &mut Ctx, kind: &str, name: Option<SymId>, nil_if_hidden: bool| {
        let k = Value::symbol(ctx.intern(kind));
        let pair = match name {
            Some(n) if !ctx.sym_name(n).starts_with(b"\0") => array::from_slice(ctx, &[k, Value::symbol(n)]),
            _ if nil_if_hidden => array::from_slice(ctx, &[k, Value::NIL]),
            _ => array::from_slice(ctx, &[k]),
        };
        array::push(ctx, out, pair);
    };
    let req = if lambda { "req" } else { "opt" };
    if p.implicit_it && !lambda {
        // `proc { it }.parameters` is [[:opt, nil]] before Ruby 4.0.
        let k = Value::symbol(ctx.intern("opt"));
        let pair = array::from_slice(ctx, &[k, Value::NIL]);
        array::push(ctx, out, pair);
        return out;
    }
    for i in 0..p.lead {
        push(ctx, req, names.get(i as usize).copied(), !lambda);
    }
    for i in 0..p.opt {
        push(ctx, "opt", names.get((p.lead + i) as usize).copied(), false);
    }
    if p.rest {
        push(ctx, "rest", names.get(p.rest_index() as usize).copied(), false);
    }
    for i in 0..p.post {
        push(ctx, req, names.get((p.post_start() + i) as usize).copied(), !lambda);
    }
    for k in &p.kw {
        push(ctx, if k.required { "keyreq" } else { "key" }, Some(k.name), false);
    }
    if p.kwrest {
        push(ctx, "keyrest", names.get(p.kwrest_index() as usize).copied(), false);
    }
    if p.no_kw {
        push(ctx, "nokey", None, false);
    }
    if p.block {
        push(ctx, "block", names.get(p.block_index() as usize).copied(), false);
    }
    out
}

// ---- methods ----

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(ctx.arg_error("tried to create Proc object without a block"));
    };
    // A proc of exactly this class is returned itself; otherwise a copy of this class.
    let p = match b {
        Block::Proc(p) if basic(p).klass == recv => p,
        Block::Proc(p) => dup(ctx, p),
        Block::Captured(c) => new_from_captured(ctx, &c, false),
    };
    basic(p).klass = recv;
    ctx.call_kw(p, sym::INITIALIZE, args.pos, args.kw, None)?;
    Ok(p)
}

/// True when `f` is the builtin behind `Proc#call` and its aliases, which the dispatch loop
/// runs in place for procs made from Ruby blocks (`ops::push_proc_call`).
#[inline(always)]
pub fn is_call(f: crate::core::module::BuiltinFn) -> bool {
    std::ptr::fn_addr_eq(f, call as crate::core::module::BuiltinFn)
}

fn call(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    crate::interp::call::call_block(ctx, &Block::Proc(recv), args.pos, args.kw, args.block, None)
}

fn to_proc(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn lambda_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(is_lambda(recv)))
}

fn arity(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(arity_of(ctx, recv)))
}

fn parameters(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let flags = basic(recv).aux;
    if flags & SYMBOL != 0 {
        let a = array::from_slice(ctx, &[Value::symbol(ctx.intern("req"))]);
        let b = array::from_slice(ctx, &[Value::symbol(ctx.intern("rest"))]);
        return Ok(array::from_slice(ctx, &[a, b]));
    }
    if flags & METHOD != 0 {
        let m = rproc(recv).cap.self_;
        if crate::core::method::method_entry_of(m).is_some() {
            let params = ctx.intern("parameters");
            return ctx.call(m, params, &[]);
        }
        // A curried or composed proc takes any arguments.
        let rest = Value::symbol(ctx.intern("rest"));
        let a = array::from_slice(ctx, &[rest]);
        return Ok(array::from_slice(ctx, &[a]));
    }
    let lambda = match args.kwarg(ctx, "lambda") {
        Some(v) if !v.is_nil() => v.truthy(),
        _ => is_lambda(recv),
    };
    Ok(parameters_of(ctx, rproc(recv).cap.iseq, lambda))
}

fn source_location(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if basic(recv).aux & METHOD != 0 {
        // A Method's proc is where the method is.
        return Ok(match crate::core::method::method_entry_of(rproc(recv).cap.self_) {
            Some(me) => crate::core::method::source_location_of_entry(ctx, &me),
            None => Value::NIL,
        });
    }
    if captured(recv).is_none() {
        return Ok(Value::NIL);
    }
    let iseq = iseq_of(rproc(recv).cap.iseq);
    let path = string::new_utf8(ctx, &iseq.path);
    Ok(array::from_slice(ctx, &[path, Value::fixnum(iseq.first_line as i64)]))
}

fn inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = object::class_name_of(ctx, recv);
    let mut s = format!("#<{}:0x{:016x}", cname, recv.raw());
    if let Some(c) = captured(recv) {
        let iseq = iseq_of(c.iseq);
        s.push_str(&format!(" {}:{}", iseq.path, iseq.first_line));
    } else if basic(recv).aux & SYMBOL != 0 {
        if let Some(sy) = rproc(recv).cap.self_.as_symbol() {
            s.push_str(&format!("(&:{})", ctx.sym_str(sy)));
        }
    }
    if is_lambda(recv) {
        s.push_str(" (lambda)");
    }
    s.push('>');
    // CRuby builds it as a binary string.
    Ok(string::new_binary(ctx, s.as_bytes()))
}

fn eq(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if recv == o {
        return Ok(Value::TRUE);
    }
    if !is_proc(o) || basic(o).aux != basic(recv).aux {
        return Ok(Value::FALSE);
    }
    let (a, b) = (rproc(recv).cap, rproc(o).cap);
    // Same code, self and variables; a block whose home keeps no heap environment
    // is told apart by the call it was made in.
    Ok(Value::bool(a.iseq == b.iseq && a.self_ == b.self_ && a.env == b.env && a.home_serial == b.home_serial))
}

fn hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let c = rproc(recv).cap;
    let h = crate::core::hash::mix(crate::core::hash::mix(ctx.vm().hash_seed, c.iseq.raw()), c.env.raw() ^ c.home_serial as u64);
    Ok(Value::fixnum((h >> 2) as i64))
}

/// The number of arguments `curry(arity)` collects: `arity`, or the required count; a
/// lambda's `arity` must be one it accepts.
pub fn curry_arity(ctx: &mut Ctx, p: Value, arity: Option<Value>) -> Result<i64> {
    let (min, max) = min_max(p);
    let Some(n) = arity else { return Ok(min) };
    let n = crate::core::integer::to_i64_arg(ctx, n)?;
    if is_lambda(p) && (n < min || max.is_some_and(|m| n > m)) {
        return Err(ctx.arity_error(n.max(0) as usize, min as usize, max.map(|m| m as usize)));
    }
    Ok(n)
}

fn curry(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = curry_arity(ctx, recv, args.pos.first().copied())?;
    crate::core::method::make_curry(ctx, recv, n, is_lambda(recv))
}

/// `f << g`: a proc calling g, then f with its result; a lambda when g is one.
fn compose_left(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let g = args.pos[0];
    crate::core::method::callable_arg(ctx, g)?;
    let lambda = crate::core::method::composes_as_lambda(g);
    crate::core::method::compose(ctx, g, recv, lambda)
}

/// `f >> g`: a proc calling f, then g with its result; a lambda when f is one.
fn compose_right(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let g = args.pos[0];
    crate::core::method::callable_arg(ctx, g)?;
    crate::core::method::compose(ctx, recv, g, is_lambda(recv))
}

/// `Proc#ruby2_keywords`: flags the block's code (see `iseq::set_ruby2_keywords`).
fn ruby2_keywords(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if let Some(c) = captured(recv) {
        if !crate::compile::iseq::set_ruby2_keywords(c.iseq) {
            crate::core::kernel::write_warning(ctx, "Skipping set of ruby2_keywords flag for proc (proc accepts keywords or proc does not accept argument splat)\n");
        }
    }
    Ok(recv)
}

fn binding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if let Some(c) = captured(recv) {
        return crate::core::kernel::binding_from_captured(ctx, &c);
    }
    // A Method's proc: the method's receiver, no variables.
    if basic(recv).aux & METHOD != 0 {
        if let Some(m) = crate::object::data_ref::<crate::core::method::MethodObj>(rproc(recv).cap.self_) {
            let (self_, me) = (m.recv, m.me.clone());
            if !self_.is_undef() {
                return Ok(crate::core::binding::for_method(ctx, self_, &me));
            }
        }
    }
    Err(ctx.arg_error("Can't create Binding from C level function"))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().proc_;
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Safe, Singleton, Kw),
        ("call", call, [0..], Safe, Kw),
        ("()", call, [0..], Safe, Kw),
        ("yield", call, [0..], Safe, Kw),
        ("===", call, [0..], Safe, Kw),
        ("[]", call, [0..], Safe, Kw),
        ("to_proc", to_proc, [0], Safe),
        ("lambda?", lambda_p, [0], Safe),
        ("arity", arity, [0], Safe),
        ("parameters", parameters, [0], Safe, Kw),
        ("source_location", source_location, [0], Safe),
        ("inspect", inspect, [0], Safe),
        ("to_s", inspect, [0], Safe),
        ("==", eq, [1], Safe),
        ("eql?", eq, [1], Safe),
        ("hash", hash, [0], Safe),
        ("curry", curry, [0..=1], Safe),
        ("<<", compose_left, [1], Unsafe),
        (">>", compose_right, [1], Unsafe),
        ("ruby2_keywords", ruby2_keywords, [0], Safe),
        ("binding", binding, [0], Safe),
    ]);
}
