//! Enumerator::Lazy: a pipeline of operations over a source, run one element at a time.
//!
//! Invariants:
//! - A Lazy is an ordinary Enumerator (`EnumObj`) whose generator is a native generator
//!   over a `LazyState`; so `each`, `next`, `size`, `with_object` … work as for any
//!   enumerator. `EnumObj::recv` is the state object too (the size function reads it).
//! - A `LazyState` is immutable once built: each chained call copies the operation list
//!   and appends one operation. Per-run state (counters, `uniq` hashes, `zip` sources)
//!   is created when a run starts.
//! - Values travel through the stages in Ruby Arrays (the collector sees them), each with a
//!   "packed" flag: several values yielded at once travel as one Array, which stages that
//!   CRuby calls with `lazyenum_yield_values` (map, flat_map, filter_map, take_while,
//!   drop_while) splat back into arguments, while the others see the Array.

use crate::core::enumerator::{self, EnumObj, NativeGen, SizeFn};
use crate::core::{array, enumerable, hash, integer, object, proc as rproc, string};
use crate::error::Unwind;
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum LazyKind {
    Map,
    Select,
    Reject,
    TakeWhile,
    DropWhile,
    Take,
    Drop,
    FilterMap,
    FlatMap,
    /// arg is `[offset, proc or nil]`.
    WithIndex,
    Compact,
    Uniq,
    /// arg is `[pattern, proc or nil]`.
    Grep,
    GrepV,
    /// arg is the Array of the other arguments.
    Zip,
}

#[derive(Clone, Copy)]
struct Op {
    kind: LazyKind,
    arg: Value,
    /// The name the operation was called by and its arguments, for `inspect`.
    name: SymId,
    shown: Value,
}

pub struct LazyState {
    source: Value,
    meth: SymId,
    args: Value,
    /// The block of `Lazy.new(obj) { |yielder, *values| … }`, or nil.
    init: Value,
    /// The base size: UNDEF for "the source's size", else a value, Integer or Proc.
    size: Value,
    ops: Vec<Op>,
}

crate::data_obj!(LazyState, |s, m| {
    m.mark(s.source);
    m.mark(s.args);
    m.mark(s.init);
    m.mark(s.size);
    for op in &s.ops {
        m.mark(op.arg);
        m.mark(op.shown);
    }
});

fn state<'a>(ctx: &mut Ctx, lazy: Value) -> Result<&'a mut LazyState> {
    let st = data_ref::<EnumObj>(lazy).map_or(Value::NIL, |e| e.recv);
    match data_ref::<LazyState>(st) {
        Some(s) => Ok(s),
        None => Err(ctx.type_error("uninitialized lazy enumerator")),
    }
}

fn make(ctx: &mut Ctx, klass: Value, st: LazyState) -> Value {
    let state_obj = object::new_data(ctx, Value::NIL, Box::new(st));
    let gk = ctx.c().generator;
    let gen = object::new_data(ctx, gk, Box::new(NativeGen { state: state_obj, f: lazy_gen }));
    let empty = array::new(ctx);
    enumerator::new_enum(ctx, klass, EnumObj { recv: state_obj, meth: sym::EACH, args: empty, kw: Value::NIL, size: SizeFn::Native(lazy_size), generator: gen, cursor: Value::NIL })
}

/// `obj.lazy`: a Lazy over `obj.each`, sized like `obj`.
pub fn lazy_new(ctx: &mut Ctx, source: Value) -> Result<Value> {
    let args = array::new(ctx);
    let klass = ctx.c().lazy;
    Ok(make(ctx, klass, LazyState { source, meth: sym::EACH, args, init: Value::NIL, size: Value::UNDEF, ops: Vec::new() }))
}

/// The name the running builtin was called by.
fn called_name(ctx: &Ctx, fallback: &str) -> SymId {
    ctx.stacks.frames.last().filter(|f| f.kind == crate::interp::frame::FrameKind::Builtin).and_then(|f| f.mid).unwrap_or_else(|| ctx.intern(fallback))
}

fn chain(ctx: &mut Ctx, recv: Value, kind: LazyKind, arg: Value, shown: &[Value], fallback: &str) -> Result<Value> {
    let name = called_name(ctx, fallback);
    let shown = array::from_slice(ctx, shown);
    let st = state(ctx, recv)?;
    let mut ops = st.ops.clone();
    ops.push(Op { kind, arg, name, shown });
    let next = LazyState { source: st.source, meth: st.meth, args: st.args, init: st.init, size: st.size, ops };
    let klass = object::real_class_of(ctx, recv);
    Ok(make(ctx, klass, next))
}

// ---- running ----

/// Per-run pipeline state.
struct Pipe<'a> {
    ops: &'a [Op],
    counters: Vec<i64>,
    dropping: Vec<bool>,
    /// Per-op Ruby state (uniq Hash, zip sources) and the in-flight buffers.
    keep: Value,
    done: bool,
    sink: &'a mut dyn FnMut(&mut Ctx, Value, bool) -> Result<bool>,
}

fn call_splat(ctx: &mut Ctx, p: Value, v: Value, packed: bool) -> Result<Value> {
    if packed && array::is_array(v) {
        let a = array::to_vec(v);
        ctx.call_proc(p, &a, None)
    } else {
        ctx.call_proc(p, &[v], None)
    }
}

fn zip_value(ctx: &mut Ctx, src: Value, idx: i64) -> Result<Value> {
    if array::is_array(src) {
        return Ok(array::get(src, idx as usize));
    }
    let next = ctx.intern("next");
    match ctx.call(src, next, &[]) {
        Ok(v) => Ok(v),
        Err(Unwind::Raise(e)) if object::is_a(ctx, e, ctx.c().stop_iteration) => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

impl Pipe<'_> {
    /// Runs one source element through the stages; false stops the run.
    fn feed(&mut self, ctx: &mut Ctx, args: &[Value]) -> Result<bool> {
        let first = enumerable::pack(ctx, args);
        let mut vals = array::from_slice(ctx, &[first]);
        let mut flags = vec![args.len() > 1];
        let bufs = array::get(self.keep, 1);
        array::set(bufs, 0, vals);
        for (i, op) in self.ops.iter().enumerate() {
            let next = array::new(ctx);
            array::set(bufs, 1, next);
            let mut next_flags = Vec::new();
            let mut j = 0;
            while j < array::len(vals) {
                let (v, packed) = (array::get(vals, j), flags.get(j).copied().unwrap_or(false));
                j += 1;
                let mut emit = |ctx: &mut Ctx, x: Value, p: bool| {
                    array::push(ctx, next, x);
                    next_flags.push(p);
                };
                match op.kind {
                    LazyKind::Map => {
                        let r = call_splat(ctx, op.arg, v, packed)?;
                        emit(ctx, r, false);
                    }
                    LazyKind::Select => {
                        if ctx.call_proc(op.arg, &[v], None)?.truthy() {
                            emit(ctx, v, packed);
                        }
                    }
                    LazyKind::Reject => {
                        if !ctx.call_proc(op.arg, &[v], None)?.truthy() {
                            emit(ctx, v, packed);
                        }
                    }
                    LazyKind::FilterMap => {
                        let r = call_splat(ctx, op.arg, v, packed)?;
                        if r.truthy() {
                            emit(ctx, r, false);
                        }
                    }
                    LazyKind::FlatMap => {
                        let r = call_splat(ctx, op.arg, v, packed)?;
                        if let Some(a) = array::try_to_ary(ctx, r)? {
                            let mut k = 0;
                            while k < array::len(a) {
                                emit(ctx, array::get(a, k), false);
                                k += 1;
                            }
                        } else if r.is_heap() && ctx.respond_to(r, sym::EACH, false) && ctx.respond_to(r, ctx.intern("force"), false) {
                            let items = enumerable::to_array(ctx, r)?;
                            let mut k = 0;
                            while k < array::len(items) {
                                emit(ctx, array::get(items, k), false);
                                k += 1;
                            }
                        } else {
                            emit(ctx, r, false);
                        }
                    }
                    LazyKind::TakeWhile => {
                        if call_splat(ctx, op.arg, v, packed)?.truthy() {
                            emit(ctx, v, packed);
                        } else {
                            self.done = true;
                        }
                    }
                    LazyKind::DropWhile => {
                        if self.dropping[i] && call_splat(ctx, op.arg, v, packed)?.truthy() {
                            continue;
                        }
                        self.dropping[i] = false;
                        emit(ctx, v, packed);
                    }
                    LazyKind::Take => {
                        let n = op.arg.as_fixnum().unwrap_or(0);
                        if self.counters[i] < n {
                            self.counters[i] += 1;
                            emit(ctx, v, packed);
                            if self.counters[i] >= n {
                                self.done = true;
                            }
                        }
                    }
                    LazyKind::Drop => {
                        let n = op.arg.as_fixnum().unwrap_or(0);
                        if self.counters[i] < n {
                            self.counters[i] += 1;
                        } else {
                            emit(ctx, v, packed);
                        }
                    }
                    LazyKind::WithIndex => {
                        let (offset, p) = (array::get(op.arg, 0), array::get(op.arg, 1));
                        let idx = integer::add(ctx, offset, Value::fixnum(self.counters[i]))?;
                        self.counters[i] += 1;
                        if p.is_nil() {
                            let pair = array::from_slice(ctx, &[v, idx]);
                            emit(ctx, pair, true);
                        } else {
                            ctx.call_proc(p, &[v, idx], None)?;
                            emit(ctx, v, false);
                        }
                    }
                    LazyKind::Compact => {
                        if !v.is_nil() {
                            emit(ctx, v, packed);
                        }
                    }
                    LazyKind::Uniq => {
                        let seen = array::get(array::get(self.keep, 0), i);
                        let k = if op.arg.is_nil() { v } else { ctx.call_proc(op.arg, &[v], None)? };
                        if hash::lookup(ctx, seen, k)?.is_none() {
                            hash::insert_raw(ctx, seen, k, Value::TRUE)?;
                            emit(ctx, v, packed);
                        }
                    }
                    LazyKind::Grep | LazyKind::GrepV => {
                        let (pattern, blk) = (array::get(op.arg, 0), array::get(op.arg, 1));
                        let hit = crate::interp::ops::case_eq(ctx, pattern, v)?;
                        if hit == (op.kind == LazyKind::Grep) {
                            if blk.is_nil() {
                                emit(ctx, v, packed);
                            } else {
                                let r = ctx.call_proc(blk, &[v], None)?;
                                emit(ctx, r, false);
                            }
                        }
                    }
                    LazyKind::Zip => {
                        let sources = array::get(array::get(self.keep, 0), i);
                        let idx = self.counters[i];
                        self.counters[i] += 1;
                        let row = array::from_slice(ctx, &[v]);
                        let mut k = 0;
                        while k < array::len(sources) {
                            let x = zip_value(ctx, array::get(sources, k), idx)?;
                            array::push(ctx, row, x);
                            k += 1;
                        }
                        emit(ctx, row, false);
                    }
                }
            }
            vals = next;
            flags = next_flags;
            array::set(bufs, 0, vals);
            if array::len(vals) == 0 {
                break;
            }
        }
        let mut j = 0;
        while j < array::len(vals) {
            if !(self.sink)(ctx, array::get(vals, j), flags.get(j).copied().unwrap_or(false))? {
                return Ok(false);
            }
            j += 1;
        }
        Ok(!self.done)
    }
}

/// The per-run state of each operation (a Hash for `uniq`, the zip sources for `zip`).
fn run_state(ctx: &mut Ctx, ops: &[Op]) -> Result<Value> {
    let out = array::new(ctx);
    for op in ops {
        let st = match op.kind {
            LazyKind::Uniq => hash::new(ctx),
            LazyKind::Zip => {
                let srcs = array::new(ctx);
                let mut i = 0;
                while i < array::len(op.arg) {
                    let o = array::get(op.arg, i);
                    let src = match array::try_to_ary(ctx, o)? {
                        Some(a) => a,
                        None => {
                            let each = Value::symbol(sym::EACH);
                            ctx.call(o, sym::TO_ENUM, &[each])?
                        }
                    };
                    array::push(ctx, srcs, src);
                    i += 1;
                }
                srcs
            }
            _ => Value::NIL,
        };
        array::push(ctx, out, st);
    }
    Ok(out)
}

/// Runs the pipeline of the Lazy state object `st_obj`, passing `extra` to the source's
/// iteration method; `sink(value, packed)` returns false to stop.
fn run(ctx: &mut Ctx, st_obj: Value, extra: &[Value], sink: &mut dyn FnMut(&mut Ctx, Value, bool) -> Result<bool>) -> Result<Value> {
    let Some(st) = data_ref::<LazyState>(st_obj) else { return Err(ctx.type_error("uninitialized lazy enumerator")) };
    let (source, meth, args, init, ops) = (st.source, st.meth, st.args, st.init, st.ops.clone());
    if ops.iter().any(|op| op.kind == LazyKind::Take && op.arg.as_fixnum() == Some(0)) {
        return Ok(Value::NIL);
    }
    let per_op = run_state(ctx, &ops)?;
    let bufs = array::from_slice(ctx, &[Value::NIL, Value::NIL]);
    let keep = array::from_slice(ctx, &[per_op, bufs]);
    let mut margs = array::to_vec(args);
    margs.extend_from_slice(extra);
    let margs = array::from_vec(ctx, margs);
    let tag = object::new_object(ctx, Value::NIL);
    let mut pipe = Pipe { ops: &ops, counters: vec![0; ops.len()], dropping: vec![true; ops.len()], keep, done: false, sink };
    let margs_v = array::to_vec(margs);
    let r = enumerable::each_args_call(ctx, source, meth, &margs_v, &mut |ctx, vals| {
        if init.is_nil() {
            return pipe.feed(ctx, vals);
        }
        // `Lazy.new` block: it receives a yielder that feeds the pipeline.
        let mut go_on = true;
        rproc::with_native_block(
            ctx,
            &mut |ctx, yvals| {
                if !pipe.feed(ctx, yvals)? {
                    go_on = false;
                    return Err(Unwind::Throw { tag, value: Value::NIL });
                }
                Ok(Value::NIL)
            },
            |ctx, blk| {
                let y = enumerator::new_yielder(ctx, blk)?;
                let mut call_args = vec![y];
                call_args.extend_from_slice(vals);
                ctx.call_proc(init, &call_args, None)
            },
        )?;
        Ok(go_on)
    });
    std::hint::black_box((tag, keep, margs));
    match r {
        Ok(v) => Ok(v),
        Err(Unwind::Throw { tag: t, .. }) if t == tag => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

/// The native generator of a Lazy: yields each result to `block`.
fn lazy_gen(ctx: &mut Ctx, st_obj: Value, block: &Block) -> Result<Value> {
    let b = *block;
    // Without operations the source's values pass through as yielded (several values
    // stay several); after any operation each result is one (possibly packed) value.
    let no_ops = data_ref::<LazyState>(st_obj).is_some_and(|s| s.ops.is_empty());
    run(ctx, st_obj, &[], &mut |ctx, v, packed| {
        if no_ops && packed && array::is_array(v) {
            let a = array::to_vec(v);
            ctx.yield_block(&b, &a)?;
        } else {
            ctx.yield1(&b, v)?;
        }
        Ok(true)
    })
}

/// `Lazy#size`: the base size carried through the operations that keep or bound it.
fn lazy_size(ctx: &mut Ctx, st_obj: Value, _args: Value) -> Result<Value> {
    let Some(st) = data_ref::<LazyState>(st_obj) else { return Ok(Value::NIL) };
    let (source, base, ops) = (st.source, st.size, st.ops.clone());
    let mut size = if base.is_undef() {
        enumerable::enum_size(ctx, source, Value::NIL)?
    } else if rproc::is_proc(base) {
        ctx.call_proc(base, &[], None)?
    } else {
        base
    };
    for op in ops {
        size = match op.kind {
            LazyKind::Map | LazyKind::WithIndex | LazyKind::Zip => size,
            LazyKind::Take => {
                let n = op.arg.as_fixnum().unwrap_or(0);
                if size.is_nil() {
                    Value::NIL
                } else if size.as_fixnum().is_some_and(|s| s < n) {
                    size
                } else {
                    Value::fixnum(n)
                }
            }
            LazyKind::Drop => {
                let n = op.arg.as_fixnum().unwrap_or(0);
                match size.as_fixnum() {
                    _ if size.is_nil() => Value::NIL,
                    Some(s) => Value::fixnum((s - n).max(0)),
                    None => ctx.call(size, sym::MINUS, &[Value::fixnum(n)])?,
                }
            }
            _ => Value::NIL,
        };
    }
    Ok(size)
}

// ---- methods ----

fn block_proc(ctx: &mut Ctx, args: &Args, what: &str) -> Result<Value> {
    match args.block {
        Some(b) => rproc::from_block(ctx, &b),
        None => Err(ctx.arg_error(&format!("tried to call lazy {what} without a block"))),
    }
}

fn alloc_lazy(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let margs = array::new(ctx);
    Ok(make(ctx, klass, LazyState { source: Value::NIL, meth: sym::EACH, args: margs, init: Value::NIL, size: Value::NIL, ops: Vec::new() }))
}

/// `Lazy.new(obj, size = nil) { |yielder, *values| … }`.
fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let Some(b) = args.block else { return Err(ctx.arg_error("tried to call lazy new without a block")) };
    if args.pos.is_empty() || args.pos.len() > 2 {
        return Err(ctx.arity_error(args.pos.len(), 1, Some(2)));
    }
    let init = rproc::from_block(ctx, &b)?;
    let st = state(ctx, recv)?;
    st.source = args.pos[0];
    st.size = args.pos.get(1).copied().unwrap_or(Value::NIL);
    st.init = init;
    st.ops.clear();
    Ok(recv)
}

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = object::allocate(ctx, recv)?;
    ctx.call_kw(o, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(o)
}

/// Calls the builtin `name` of `owner` (Enumerable or Enumerator) on `recv`.
fn call_owner_method(ctx: &mut Ctx, recv: Value, owner: Value, name: &str, args: &Args) -> Result<Value> {
    let mid = ctx.intern(name);
    match crate::core::module::body(owner).methods.get(&mid).cloned() {
        Some(me) => crate::interp::call::invoke_from_rust(ctx, recv, &me, args.pos, args.kw, args.block),
        None => Err(ctx.not_implemented(&format!("{name} on Enumerator::Lazy"))),
    }
}

/// Methods that iterate with a block and, without one, return a Lazy over themselves
/// (CRuby gets this from Lazy#to_enum).
fn enumerating(ctx: &mut Ctx, recv: Value, args: &Args, owner: Value, name: &str) -> Result<Value> {
    if args.block.is_some() {
        return call_owner_method(ctx, recv, owner, name, args);
    }
    let meth = ctx.intern(name);
    let margs = array::from_slice(ctx, args.pos);
    let klass = object::real_class_of(ctx, recv);
    Ok(make(ctx, klass, LazyState { source: recv, meth, args: margs, init: Value::NIL, size: Value::NIL, ops: Vec::new() }))
}

fn l_each_with_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    enumerating(ctx, recv, args, e, "each_with_index")
}
fn l_each_with_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    enumerating(ctx, recv, args, e, "each_with_object")
}
fn l_with_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerator;
    enumerating(ctx, recv, args, e, "with_object")
}
fn l_each_slice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    enumerating(ctx, recv, args, e, "each_slice")
}
fn l_each_cons(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    enumerating(ctx, recv, args, e, "each_cons")
}
fn l_each_entry(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    enumerating(ctx, recv, args, e, "each_entry")
}
fn l_cycle(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    enumerating(ctx, recv, args, e, "cycle")
}

fn l_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "map")?;
    chain(ctx, recv, LazyKind::Map, p, &[], "map")
}

fn l_select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "select")?;
    chain(ctx, recv, LazyKind::Select, p, &[], "select")
}

fn l_reject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "reject")?;
    chain(ctx, recv, LazyKind::Reject, p, &[], "reject")
}

fn l_filter_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "filter_map")?;
    chain(ctx, recv, LazyKind::FilterMap, p, &[], "filter_map")
}

fn l_flat_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "flat_map")?;
    chain(ctx, recv, LazyKind::FlatMap, p, &[], "flat_map")
}

fn l_take_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "take_while")?;
    chain(ctx, recv, LazyKind::TakeWhile, p, &[], "take_while")
}

fn l_drop_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args, "drop_while")?;
    chain(ctx, recv, LazyKind::DropWhile, p, &[], "drop_while")
}

fn l_take(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to take negative size"));
    }
    chain(ctx, recv, LazyKind::Take, Value::fixnum(n), &[Value::fixnum(n)], "take")
}

fn l_drop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to drop negative size"));
    }
    chain(ctx, recv, LazyKind::Drop, Value::fixnum(n), &[Value::fixnum(n)], "drop")
}

fn l_with_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let offset = match args.pos.first() {
        Some(&o) if !o.is_nil() => integer::to_integer_arg(ctx, o)?,
        _ => Value::fixnum(0),
    };
    let p = match args.block {
        Some(b) => rproc::from_block(ctx, &b)?,
        None => Value::NIL,
    };
    let arg = array::from_slice(ctx, &[offset, p]);
    chain(ctx, recv, LazyKind::WithIndex, arg, args.pos, "with_index")
}

fn l_compact(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    chain(ctx, recv, LazyKind::Compact, Value::NIL, &[], "compact")
}

fn l_uniq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = match args.block {
        Some(b) => rproc::from_block(ctx, &b)?,
        None => Value::NIL,
    };
    chain(ctx, recv, LazyKind::Uniq, p, &[], "uniq")
}

fn grep_impl(ctx: &mut Ctx, recv: Value, args: &Args, kind: LazyKind, name: &str) -> Result<Value> {
    let blk = match args.block {
        Some(b) => rproc::from_block(ctx, &b)?,
        None => Value::NIL,
    };
    let arg = array::from_slice(ctx, &[args.pos[0], blk]);
    chain(ctx, recv, kind, arg, &[args.pos[0]], name)
}

fn l_grep(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    grep_impl(ctx, recv, args, LazyKind::Grep, "grep")
}

fn l_grep_v(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    grep_impl(ctx, recv, args, LazyKind::GrepV, "grep_v")
}

fn l_zip(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.block.is_some() {
        return enumerable::call_enumerable(ctx, recv, "zip", args);
    }
    for &o in args.pos {
        if !array::is_array(o) && !ctx.respond_to(o, sym::EACH, true) {
            let cname = object::class_name_of(ctx, o);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (must respond to :each)")));
        }
    }
    let others = array::from_slice(ctx, args.pos);
    chain(ctx, recv, LazyKind::Zip, others, args.pos, "zip")
}

/// `chunk`, `slice_*`, `chunk_while`: the Enumerable result, made lazy.
fn chunking(ctx: &mut Ctx, recv: Value, args: &Args, name: &str) -> Result<Value> {
    if name == "chunk" && args.block.is_none() {
        let e = ctx.c().enumerable;
        return enumerating(ctx, recv, args, e, name);
    }
    let e = enumerable::call_enumerable(ctx, recv, name, args)?;
    lazy_new(ctx, e)
}

fn l_chunk(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    chunking(ctx, recv, args, "chunk")
}
fn l_chunk_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    chunking(ctx, recv, args, "chunk_while")
}
fn l_slice_when(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    chunking(ctx, recv, args, "slice_when")
}
fn l_slice_before(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    chunking(ctx, recv, args, "slice_before")
}
fn l_slice_after(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    chunking(ctx, recv, args, "slice_after")
}

fn l_force(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let st_obj = data_ref::<EnumObj>(recv).map_or(Value::NIL, |e| e.recv);
    let out = array::new(ctx);
    run(ctx, st_obj, args.pos, &mut |ctx, v, _packed| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn l_eager(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let empty = array::new(ctx);
    let klass = ctx.c().enumerator;
    Ok(enumerator::new_enum(ctx, klass, EnumObj { recv, meth: sym::EACH, args: empty, kw: Value::NIL, size: SizeFn::Native(eager_size), generator: Value::NIL, cursor: Value::NIL }))
}

fn eager_size(ctx: &mut Ctx, recv: Value, _args: Value) -> Result<Value> {
    enumerator::size_of(ctx, recv)
}

fn l_lazy(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn l_to_enum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let meth = match args.pos.first() {
        Some(&m) => crate::core::symbol::to_sym_id(ctx, m)?,
        None => sym::EACH,
    };
    let rest = if args.pos.is_empty() { &args.pos[..0] } else { &args.pos[1..] };
    let margs = array::from_slice(ctx, rest);
    let size = match args.block {
        Some(b) => rproc::from_block(ctx, &b)?,
        None => Value::NIL,
    };
    // A method Lazy overrides iterates eagerly here, with the original (as CRuby does).
    let name = ctx.sym_str(meth);
    let meth = if EAGER_ORIGINALS.contains(&name.as_str()) { ctx.intern(&format!("_enumerable_{name}")) } else { meth };
    let klass = object::real_class_of(ctx, recv);
    Ok(make(ctx, klass, LazyState { source: recv, meth, args: margs, init: Value::NIL, size, ops: Vec::new() }))
}

/// Methods Lazy makes lazy whose eager originals `to_enum` uses, under `_enumerable_<name>`.
const EAGER_ORIGINALS: [&str; 18] = [
    "map", "collect", "flat_map", "collect_concat", "select", "find_all", "filter", "filter_map", "reject", "grep", "grep_v", "zip", "take", "take_while", "drop",
    "drop_while", "uniq", "with_index",
];

/// Defines the private `_enumerable_<name>` copies of the eager methods Lazy overrides.
fn define_eager_originals(ctx: &mut Ctx, lazy: Value) {
    use crate::core::module::{self, MethodEntry, Visibility};
    for name in EAGER_ORIGINALS {
        let id = ctx.intern(name);
        let from = if name == "with_index" { ctx.c().enumerator } else { ctx.c().enumerable };
        let Some(me) = module::body(from).methods.get(&id).cloned() else { continue };
        let new_id = ctx.intern(&format!("_enumerable_{name}"));
        module::add_method(ctx, lazy, MethodEntry { name: new_id, original_name: me.original_name, owner: me.owner, visibility: Visibility::Private, body: me.body.clone() });
    }
}

fn l_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let cname = {
        let k = object::real_class_of(ctx, recv);
        crate::core::module_methods::class_path(ctx, k)
    };
    let (source, meth, margs, ops, init) = {
        let st = state(ctx, recv)?;
        (st.source, st.meth, st.args, st.ops.clone(), st.init)
    };
    // `Lazy.allocate` without `initialize`: no source and no `Lazy.new` block.
    if source.is_nil() && init.is_nil() {
        return Ok(crate::core::string::new_utf8(ctx, &format!("#<{cname}: uninitialized>")));
    }
    let shown_args = |ctx: &mut Ctx, a: Value| -> Result<String> {
        if array::len(a) == 0 {
            return Ok(String::new());
        }
        let mut parts = Vec::new();
        for v in array::to_vec(a) {
            parts.push(object::inspect_string(ctx, v)?);
        }
        Ok(format!("({})", parts.join(", ")))
    };
    let src = object::inspect_string(ctx, source)?;
    let mut s = if meth == sym::EACH && array::len(margs) == 0 {
        format!("#<{cname}: {src}>")
    } else {
        let m = ctx.sym_str(meth);
        let a = shown_args(ctx, margs)?;
        format!("#<{cname}: {src}:{m}{a}>")
    };
    for op in ops {
        let m = ctx.sym_str(op.name);
        let a = shown_args(ctx, op.shown)?;
        s = format!("#<{cname}: {s}:{m}{a}>");
    }
    Ok(string::new_utf8(ctx, &s))
}

pub fn init(ctx: &mut Ctx) {
    let l = ctx.c().lazy;
    crate::core::module::body(l).alloc = crate::core::module::AllocKind::Data(alloc_lazy);
    define_eager_originals(ctx, l);
    crate::methods!(ctx, l, [
        ("new", s_new, [0..], Unsafe, Singleton),
        ("initialize", initialize, [0..], Unsafe, Private),
        ("each_with_index", l_each_with_index, [0], Unsafe),
        ("each_with_object", l_each_with_object, [1], Unsafe),
        ("with_object", l_with_object, [1], Unsafe),
        ("each_slice", l_each_slice, [1], Unsafe),
        ("each_cons", l_each_cons, [1], Unsafe),
        ("each_entry", l_each_entry, [0..], Unsafe),
        ("cycle", l_cycle, [0..=1], Unsafe),
        ("map", l_map, [0], Unsafe),
        ("select", l_select, [0], Unsafe),
        ("reject", l_reject, [0], Unsafe),
        ("filter_map", l_filter_map, [0], Unsafe),
        ("flat_map", l_flat_map, [0], Unsafe),
        ("take_while", l_take_while, [0], Unsafe),
        ("drop_while", l_drop_while, [0], Unsafe),
        ("take", l_take, [1], Unsafe),
        ("drop", l_drop, [1], Unsafe),
        ("with_index", l_with_index, [0..=1], Unsafe),
        ("compact", l_compact, [0], Unsafe),
        ("uniq", l_uniq, [0], Unsafe),
        ("grep", l_grep, [1], Unsafe),
        ("grep_v", l_grep_v, [1], Unsafe),
        ("zip", l_zip, [0..], Unsafe),
        ("chunk", l_chunk, [0], Unsafe),
        ("chunk_while", l_chunk_while, [0], Unsafe),
        ("slice_when", l_slice_when, [0], Unsafe),
        ("slice_before", l_slice_before, [0..], Unsafe),
        ("slice_after", l_slice_after, [0..], Unsafe),
        ("force", l_force, [0..], Unsafe),
        ("eager", l_eager, [0], Safe),
        ("lazy", l_lazy, [0], Safe),
        ("to_enum", l_to_enum, [0..], Safe),
        ("inspect", l_inspect, [0], Safe),
    ]);
    crate::core::define_alias(ctx, l, "collect", "map");
    crate::core::define_alias(ctx, l, "filter", "select");
    crate::core::define_alias(ctx, l, "find_all", "select");
    crate::core::define_alias(ctx, l, "collect_concat", "flat_map");
    crate::core::define_alias(ctx, l, "to_a", "force");
    crate::core::define_alias(ctx, l, "enum_for", "to_enum");
    crate::core::define_alias(ctx, l, "to_s", "inspect");
}
