//! Enumerable: everything built on `each`.
//!
//! Invariants:
//! - Elements are collected into Ruby Arrays (never only into Rust vectors) while Ruby
//!   code may run, so the collector sees them.
//! - `each_value` packs multiple yielded values into one Array, like CRuby's
//!   `enum_yield`; early exit uses a private `throw` tag.
//! - Enumerators returned without a block get CRuby's size function (`enum_size`: the
//!   receiver's `size` when it has one).
//! - `chunk`, `slice_before/after/when` and `chunk_while` return enumerators over a native
//!   generator, so they stay lazy like CRuby's (an infinite source works with `first`).

use crate::core::enumerator::{enum_for_this, SizeFn};
use crate::core::{array, comparable, hash, integer, object, proc as rproc};
use crate::error::Unwind;
use crate::interp::{Args, Block};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Packs the values given to a block into one (CRuby's `rb_enum_values_pack`).
pub fn pack(ctx: &mut Ctx, args: &[Value]) -> Value {
    match args.len() {
        0 => Value::NIL,
        1 => args[0],
        _ => array::from_slice(ctx, args),
    }
}

/// Iterates `recv.each`, calling `f` with each (packed) element; `f` returns false to stop.
pub fn each_value(ctx: &mut Ctx, recv: Value, f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    each_value_with(ctx, recv, sym::EACH, &[], f)
}

/// Like `each_value` over `recv.meth(*args)`.
pub fn each_value_with(ctx: &mut Ctx, recv: Value, meth: crate::symbol::SymId, margs: &[Value], f: &mut dyn FnMut(&mut Ctx, Value) -> Result<bool>) -> Result<()> {
    if meth == sym::EACH && margs.is_empty() && array::is_plain_array(recv) && !ctx.vm_redefined(crate::interp::ops::REDEF_ARRAY) {
        let mut i = 0;
        while i < array::len(recv) {
            if !f(ctx, array::get(recv, i))? {
                return Ok(());
            }
            i += 1;
        }
        return Ok(());
    }
    if meth == sym::EACH && margs.is_empty() && hash::is_plain_hash(recv) && !ctx.vm_redefined(crate::interp::ops::REDEF_HASH) {
        // Hash#each yields `[key, value]` pairs.
        return hash::each_pair(ctx, recv, &mut |ctx, k, v| {
            let pair = array::from_slice(ctx, &[k, v]);
            f(ctx, pair)
        });
    }
    if meth == sym::EACH && margs.is_empty() && crate::core::range::is_range(recv) {
        // `Range#each` itself (not a subclass's): its elements straight to `f`, without a
        // block and a call per element.
        let klass = crate::interp::class_of(ctx, recv);
        if crate::core::module::find_method_ref(ctx, klass, sym::EACH).is_some_and(|me| me.is_builtin(crate::core::range_iter::m_each)) {
            return crate::core::range_iter::each_value(ctx, recv, f);
        }
    }
    let tag = object::new_object(ctx, Value::NIL);
    let r = rproc::with_native_block(
        ctx,
        &mut |ctx, args| {
            let v = pack(ctx, args);
            if f(ctx, v)? {
                Ok(Value::NIL)
            } else {
                Err(Unwind::Throw { tag, value: Value::NIL })
            }
        },
        |ctx, blk| ctx.call_with_block(recv, meth, margs, Some(blk)),
    );
    std::hint::black_box(tag);
    match r {
        Ok(_) => Ok(()),
        Err(Unwind::Throw { tag: t, .. }) if t == tag => Ok(()),
        Err(e) => Err(e),
    }
}

/// Iterates `recv.each`, calling `f` with the values of each yield unpacked (for the
/// methods CRuby implements with `rb_yield_values2`: a block `{ |e| }` then sees the first
/// of several yielded values, `{ |*a| }` all of them).
pub fn each_args(ctx: &mut Ctx, recv: Value, f: &mut dyn FnMut(&mut Ctx, &[Value]) -> Result<bool>) -> Result<()> {
    each_args_with(ctx, recv, &[], f)
}

/// `each_args` over `recv.each(*margs)`.
pub fn each_args_with(ctx: &mut Ctx, recv: Value, margs: &[Value], f: &mut dyn FnMut(&mut Ctx, &[Value]) -> Result<bool>) -> Result<()> {
    each_args_with_meth(ctx, recv, sym::EACH, margs, f)
}

/// `each_args` over `recv.meth(*margs)`.
pub fn each_args_with_meth(ctx: &mut Ctx, recv: Value, meth: crate::symbol::SymId, margs: &[Value], f: &mut dyn FnMut(&mut Ctx, &[Value]) -> Result<bool>) -> Result<()> {
    each_args_call(ctx, recv, meth, margs, f).map(|_| ())
}

/// Like `each_args_with_meth`, returning what `recv.meth` returned (nil when `f` stopped
/// the iteration).
pub fn each_args_call(ctx: &mut Ctx, recv: Value, meth: crate::symbol::SymId, margs: &[Value], f: &mut dyn FnMut(&mut Ctx, &[Value]) -> Result<bool>) -> Result<Value> {
    if meth == sym::EACH && margs.is_empty() && array::is_plain_array(recv) && !ctx.vm_redefined(crate::interp::ops::REDEF_ARRAY) {
        let mut i = 0;
        while i < array::len(recv) {
            let v = array::get(recv, i);
            if !f(ctx, std::slice::from_ref(&v))? {
                return Ok(Value::NIL);
            }
            i += 1;
        }
        return Ok(recv);
    }
    let tag = object::new_object(ctx, Value::NIL);
    let r = rproc::with_native_block(
        ctx,
        &mut |ctx, args| {
            if f(ctx, args)? {
                Ok(Value::NIL)
            } else {
                Err(Unwind::Throw { tag, value: Value::NIL })
            }
        },
        |ctx, blk| ctx.call_with_block(recv, meth, margs, Some(blk)),
    );
    std::hint::black_box(tag);
    match r {
        Ok(v) => Ok(v),
        Err(Unwind::Throw { tag: t, .. }) if t == tag => Ok(Value::NIL),
        Err(e) => Err(e),
    }
}

/// All elements as a new Array.
pub fn to_array(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn yield_packed(ctx: &mut Ctx, b: &Block, v: Value) -> Result<Value> {
    ctx.yield1(b, v)
}

/// Calls an Enumerable method by name on an object whose class overrides it.
pub fn call_enumerable(ctx: &mut Ctx, recv: Value, name: &str, args: &Args) -> Result<Value> {
    let e = ctx.c().enumerable;
    let mid = ctx.intern(name);
    match crate::core::module::body(e).methods.get(&mid).cloned() {
        Some(me) => crate::interp::call::invoke_from_rust(ctx, recv, &me, args.pos, args.kw, args.block),
        None => Err(ctx.not_implemented(&format!("Enumerable#{name}"))),
    }
}

/// CRuby's `enum_size`: the receiver's `size` if it has one, else nil.
pub fn enum_size(ctx: &mut Ctx, recv: Value, _args: Value) -> Result<Value> {
    if ctx.respond_to(recv, sym::SIZE, true) {
        return ctx.call(recv, sym::SIZE, &[]);
    }
    Ok(Value::NIL)
}

fn sized_enum(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value]) -> Result<Value> {
    enum_for_this(ctx, recv, meth, args, SizeFn::Native(enum_size))
}

fn unsized_enum(ctx: &mut Ctx, recv: Value, meth: &str, args: &[Value]) -> Result<Value> {
    enum_for_this(ctx, recv, meth, args, SizeFn::None)
}

fn warn_block_unused(ctx: &mut Ctx) {
    let (path, line) = crate::core::kernel::caller_location(ctx);
    crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: given block not used\n"));
}

fn e_to_a(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    each_value_with(ctx, recv, sym::EACH, args.pos, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn e_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "map", &[]) };
    let out = array::new(ctx);
    each_args(ctx, recv, &mut |ctx, vals| {
        let r = ctx.yield_block(&b, vals)?;
        array::push(ctx, out, r);
        Ok(true)
    })?;
    Ok(out)
}

fn e_flat_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "flat_map", &[]) };
    let out = array::new(ctx);
    each_args(ctx, recv, &mut |ctx, vals| {
        let r = ctx.yield_block(&b, vals)?;
        match array::try_to_ary(ctx, r)? {
            Some(a) => {
                let mut i = 0;
                while i < array::len(a) {
                    array::push(ctx, out, array::get(a, i));
                    i += 1;
                }
            }
            None => array::push(ctx, out, r),
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "select", &[]) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if yield_packed(ctx, &b, v)?.truthy() {
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_filter_map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "filter_map", &[]) };
    let out = array::new(ctx);
    each_args(ctx, recv, &mut |ctx, vals| {
        let r = ctx.yield_block(&b, vals)?;
        if r.truthy() {
            array::push(ctx, out, r);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_reject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "reject", &[]) };
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if !yield_packed(ctx, &b, v)?.truthy() {
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_find(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return unsized_enum(ctx, recv, "find", args.pos) };
    let mut found = None;
    each_value(ctx, recv, &mut |ctx, v| {
        if yield_packed(ctx, &b, v)?.truthy() {
            found = Some(v);
            return Ok(false);
        }
        Ok(true)
    })?;
    match found {
        Some(v) => Ok(v),
        None => match args.pos.first() {
            Some(&ifnone) if !ifnone.is_nil() => ctx.call(ifnone, sym::CALL, &[]),
            _ => Ok(Value::NIL),
        },
    }
}

fn e_find_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let target = args.pos.first().copied();
    if target.is_none() && args.block.is_none() {
        return unsized_enum(ctx, recv, "find_index", &[]);
    }
    if target.is_some() && args.block.is_some() {
        warn_block_unused(ctx);
    }
    let mut idx = 0i64;
    let mut found = None;
    each_args(ctx, recv, &mut |ctx, vals| {
        let hit = match (target, args.block) {
            (Some(t), _) => {
                let v = pack(ctx, vals);
                object::equal(ctx, v, t)?
            }
            (None, Some(b)) => ctx.yield_block(&b, vals)?.truthy(),
            (None, None) => false,
        };
        if hit {
            found = Some(idx);
            return Ok(false);
        }
        idx += 1;
        Ok(true)
    })?;
    Ok(found.map_or(Value::NIL, Value::fixnum))
}

fn e_include(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = args.pos[0];
    let mut found = false;
    each_value(ctx, recv, &mut |ctx, v| {
        if object::equal(ctx, v, x)? {
            found = true;
            return Ok(false);
        }
        Ok(true)
    })?;
    Ok(Value::bool(found))
}

/// The operator of `inject(sym)`: a Symbol, or a String naming one.
fn inject_op(ctx: &mut Ctx, v: Value) -> Result<crate::symbol::SymId> {
    if let Some(s) = v.as_symbol() {
        return Ok(s);
    }
    if crate::core::string::is_string(v) {
        return crate::core::symbol::to_sym_id(ctx, v);
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
        let s = crate::core::string::to_str_arg(ctx, v)?;
        return crate::core::symbol::to_sym_id(ctx, s);
    }
    let s = object::inspect_string(ctx, v)?;
    Err(ctx.type_error(&format!("{s} is not a symbol nor a string")))
}

/// `acc.op(v)` as `inject(:op)` calls it (public call, Integer `+` fast path).
fn inject_apply(ctx: &mut Ctx, acc: Value, op: crate::symbol::SymId, v: Value) -> Result<Value> {
    if op == sym::PLUS && acc.is_fixnum() && v.is_fixnum() && !ctx.vm_redefined(crate::interp::ops::REDEF_INTEGER) {
        return integer::add(ctx, acc, v);
    }
    ctx.call_public(acc, op, &[v], None, None)
}

fn e_inject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (init, op) = match (args.pos.len(), args.block) {
        (0, _) => (Value::UNDEF, None),
        (1, Some(_)) => (args.pos[0], None),
        (1, None) => (Value::UNDEF, Some(inject_op(ctx, args.pos[0])?)),
        _ => {
            if args.block.is_some() {
                warn_block_unused(ctx);
            }
            (args.pos[0], Some(inject_op(ctx, args.pos[1])?))
        }
    };
    let mut acc = init;
    let keep = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if acc.is_undef() {
            acc = v;
        } else {
            acc = match op {
                Some(mid) => inject_apply(ctx, acc, mid, v)?,
                None => match args.block {
                    Some(b) => ctx.yield_block(&b, &[acc, v])?,
                    None => return Err(ctx.local_jump_error("no block given", sym::NOT, Value::NIL)),
                },
            };
        }
        array::set(keep, 0, acc);
        Ok(true)
    })?;
    Ok(if acc.is_undef() { Value::NIL } else { acc })
}

/// The running state of `sum`, shared by Array#sum and Enumerable#sum: exact while
/// Integers and Rationals come, then Kahan-Babuska compensated while Floats come (as CRuby
/// does), then plain `+`.
pub struct Summer {
    /// The exact Integer part, or the generic accumulator once generic.
    v: Value,
    /// The Rational part (UNDEF while none).
    r: Value,
    mode: SumMode,
}

#[derive(Copy, Clone)]
enum SumMode {
    Exact,
    Float { f: f64, c: f64 },
    Generic,
}

fn is_rational(v: Value) -> bool {
    crate::core::rational::is_rational(v)
}

impl Summer {
    pub fn new(ctx: &mut Ctx, init: Value) -> Summer {
        let _ = ctx;
        if integer::is_integer(init) || is_rational(init) {
            Summer { v: init, r: Value::UNDEF, mode: SumMode::Exact }
        } else if crate::core::float::is_float(init) {
            Summer { v: init, r: Value::UNDEF, mode: SumMode::Float { f: crate::core::float::get(init), c: 0.0 } }
        } else {
            Summer { v: init, r: Value::UNDEF, mode: SumMode::Generic }
        }
    }

    /// The exact part as one value (Integer + Rational).
    fn exact_value(&mut self, ctx: &mut Ctx) -> Result<Value> {
        if !self.r.is_undef() {
            let r = self.r;
            self.r = Value::UNDEF;
            self.v = ctx.call(r, sym::PLUS, &[self.v])?;
        }
        Ok(self.v)
    }

    pub fn add(&mut self, ctx: &mut Ctx, e: Value) -> Result<()> {
        loop {
            match self.mode {
                SumMode::Exact => {
                    if integer::is_integer(e) {
                        self.v = if integer::is_integer(self.v) { integer::add(ctx, self.v, e)? } else { ctx.call(self.v, sym::PLUS, &[e])? };
                        return Ok(());
                    }
                    if is_rational(e) {
                        self.r = if self.r.is_undef() { e } else { ctx.call(self.r, sym::PLUS, &[e])? };
                        return Ok(());
                    }
                    let v = self.exact_value(ctx)?;
                    if crate::core::float::is_float(e) {
                        let f = crate::core::numeric::to_f64(ctx, v)?;
                        self.mode = SumMode::Float { f, c: 0.0 };
                    } else {
                        self.mode = SumMode::Generic;
                    }
                }
                SumMode::Float { mut f, mut c } => {
                    let x = if crate::core::float::is_float(e) {
                        crate::core::float::get(e)
                    } else if integer::is_integer(e) {
                        integer::to_f64(e)
                    } else if is_rational(e) {
                        crate::core::rational::to_f64(e)
                    } else {
                        self.v = crate::core::float::new(ctx, f + c);
                        self.mode = SumMode::Generic;
                        continue;
                    };
                    if f.is_nan() {
                    } else if x.is_nan() {
                        f = x;
                    } else if x.is_infinite() {
                        f = if f.is_infinite() && x.is_sign_negative() != f.is_sign_negative() { f64::NAN } else { x };
                    } else if f.is_infinite() {
                    } else {
                        let t = f + x;
                        if f.abs() >= x.abs() {
                            c += (f - t) + x;
                        } else {
                            c += (x - t) + f;
                        }
                        f = t;
                    }
                    self.mode = SumMode::Float { f, c };
                    return Ok(());
                }
                SumMode::Generic => {
                    self.v = ctx.call(self.v, sym::PLUS, &[e])?;
                    return Ok(());
                }
            }
        }
    }

    pub fn finish(mut self, ctx: &mut Ctx) -> Result<Value> {
        match self.mode {
            SumMode::Exact => self.exact_value(ctx),
            SumMode::Float { f, c } => Ok(crate::core::float::new(ctx, f + c)),
            SumMode::Generic => Ok(self.v),
        }
    }
}

/// `sum(init = 0) { … }` over any Enumerable.
pub fn sum_impl(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let init = args.pos.first().copied().unwrap_or(Value::fixnum(0));
    let mut acc = Summer::new(ctx, init);
    each_value(ctx, recv, &mut |ctx, v| {
        let v = match args.block {
            Some(b) => yield_packed(ctx, &b, v)?,
            None => v,
        };
        acc.add(ctx, v)?;
        Ok(true)
    })?;
    acc.finish(ctx)
}

fn e_sum(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    sum_impl(ctx, recv, args)
}

pub fn count_impl(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut n = 0i64;
    let target = args.pos.first().copied();
    if target.is_some() && args.block.is_some() {
        warn_block_unused(ctx);
    }
    each_args(ctx, recv, &mut |ctx, vals| {
        let hit = match (target, args.block) {
            (Some(t), _) => {
                let v = pack(ctx, vals);
                object::equal(ctx, v, t)?
            }
            (None, Some(b)) => ctx.yield_block(&b, vals)?.truthy(),
            (None, None) => true,
        };
        if hit {
            n += 1;
        }
        Ok(true)
    })?;
    Ok(Value::fixnum(n))
}

fn e_count(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    count_impl(ctx, recv, args)
}

fn take_n(ctx: &mut Ctx, recv: Value, n: Value) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, n)?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to take negative size"));
    }
    let out = array::new(ctx);
    if n == 0 {
        return Ok(out);
    }
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, out, v);
        Ok((array::len(out) as i64) < n)
    })?;
    Ok(out)
}

fn e_first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.pos.first() {
        None => {
            let mut first = Value::NIL;
            each_value(ctx, recv, &mut |_ctx, v| {
                first = v;
                Ok(false)
            })?;
            Ok(first)
        }
        Some(&n) => take_n(ctx, recv, n),
    }
}

fn e_take(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    take_n(ctx, recv, args.pos[0])
}

fn e_take_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return unsized_enum(ctx, recv, "take_while", &[]) };
    let out = array::new(ctx);
    each_args(ctx, recv, &mut |ctx, vals| {
        if !ctx.yield_block(&b, vals)?.truthy() {
            return Ok(false);
        }
        let v = pack(ctx, vals);
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

fn e_drop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("attempt to drop negative size"));
    }
    let out = array::new(ctx);
    let mut i = 0;
    each_value(ctx, recv, &mut |ctx, v| {
        if i >= n {
            array::push(ctx, out, v);
        }
        i += 1;
        Ok(true)
    })?;
    Ok(out)
}

fn e_drop_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return unsized_enum(ctx, recv, "drop_while", &[]) };
    let out = array::new(ctx);
    let mut dropping = true;
    each_value(ctx, recv, &mut |ctx, v| {
        if dropping && yield_packed(ctx, &b, v)?.truthy() {
            return Ok(true);
        }
        dropping = false;
        array::push(ctx, out, v);
        Ok(true)
    })?;
    Ok(out)
}

/// `all?`/`any?`/`none?`/`one?` (`kind` a/y/n/o): pattern (`===`), block, or truthiness.
pub fn quantifier(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    let pattern = args.pos.first().copied();
    let mut hits = 0usize;
    let mut result = matches!(kind, b'a' | b'n');
    each_args(ctx, recv, &mut |ctx, vals| {
        let t = match (pattern, args.block) {
            (Some(p), _) => {
                let v = pack(ctx, vals);
                crate::interp::ops::case_eq(ctx, p, v)?
            }
            (None, Some(b)) => ctx.yield_block(&b, vals)?.truthy(),
            (None, None) => pack(ctx, vals).truthy(),
        };
        match kind {
            b'a' if !t => {
                result = false;
                return Ok(false);
            }
            b'y' if t => {
                result = true;
                return Ok(false);
            }
            b'n' if t => {
                result = false;
                return Ok(false);
            }
            b'o' if t => {
                hits += 1;
                if hits > 1 {
                    result = false;
                    return Ok(false);
                }
                result = true;
            }
            _ => {}
        }
        Ok(true)
    })?;
    Ok(Value::bool(result))
}

fn e_quantifier(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    if !args.pos.is_empty() && args.block.is_some() {
        warn_block_unused(ctx);
    }
    quantifier(ctx, recv, args, kind)
}

fn e_all(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    e_quantifier(ctx, recv, args, b'a')
}
fn e_any(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    e_quantifier(ctx, recv, args, b'y')
}
fn e_none(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    e_quantifier(ctx, recv, args, b'n')
}
fn e_one(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    e_quantifier(ctx, recv, args, b'o')
}

/// Stable merge sort with a fallible comparator. The caller keeps the values reachable.
pub fn sort_values(ctx: &mut Ctx, v: &mut Vec<Value>, cmp: &mut dyn FnMut(&mut Ctx, Value, Value) -> Result<i64>) -> Result<()> {
    let n = v.len();
    if n < 2 {
        return Ok(());
    }
    // Insertion sort for short runs, then bottom-up merging.
    const RUN: usize = 16;
    let mut i = 0;
    while i < n {
        let end = (i + RUN).min(n);
        for j in i + 1..end {
            let mut k = j;
            while k > i && cmp(ctx, v[k - 1], v[k])? > 0 {
                v.swap(k - 1, k);
                k -= 1;
            }
        }
        i = end;
    }
    let mut width = RUN;
    let mut buf = v.clone();
    while width < n {
        let mut lo = 0;
        while lo < n {
            let mid = (lo + width).min(n);
            let hi = (lo + 2 * width).min(n);
            let (mut a, mut b, mut k) = (lo, mid, lo);
            while a < mid && b < hi {
                if cmp(ctx, v[a], v[b])? <= 0 {
                    buf[k] = v[a];
                    a += 1;
                } else {
                    buf[k] = v[b];
                    b += 1;
                }
                k += 1;
            }
            while a < mid {
                buf[k] = v[a];
                a += 1;
                k += 1;
            }
            while b < hi {
                buf[k] = v[b];
                b += 1;
                k += 1;
            }
            lo = hi;
        }
        std::mem::swap(v, &mut buf);
        width *= 2;
    }
    Ok(())
}

/// Sorts an Array's elements into a new Array (with an optional comparison block).
pub fn sort_array(ctx: &mut Ctx, src: Value, block: Option<Block>) -> Result<Value> {
    let keep = array::dup(ctx, src);
    let mut items = array::to_vec(keep);
    sort_values(ctx, &mut items, &mut |ctx, a, b| match block {
        Some(blk) => {
            let r = ctx.yield_block(&blk, &[a, b])?;
            comparable::cmp_result(ctx, r, a, b)
        }
        None => comparable::compare(ctx, a, b),
    })?;
    array::rarray(keep).set_items(items);
    Ok(keep)
}

fn e_sort(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = to_array(ctx, recv)?;
    sort_array(ctx, a, args.block)
}

/// Sorts `items` by keys computed with `key` (keys kept in a Ruby array while sorting).
pub fn sort_by_values(ctx: &mut Ctx, items: Value, block: &Block) -> Result<Value> {
    let n = array::len(items);
    let keys = array::with_capacity(ctx, n);
    for i in 0..n {
        let k = ctx.yield1(block, array::get(items, i))?;
        array::push(ctx, keys, k);
    }
    let mut idx: Vec<Value> = (0..n.min(array::len(keys)) as i64).map(Value::fixnum).collect();
    sort_values(ctx, &mut idx, &mut |ctx, a, b| {
        let ka = array::get(keys, a.fixnum_unchecked() as usize);
        let kb = array::get(keys, b.fixnum_unchecked() as usize);
        comparable::compare(ctx, ka, kb)
    })?;
    let out: Vec<Value> = idx.iter().map(|i| array::get(items, i.fixnum_unchecked() as usize)).collect();
    Ok(array::from_vec(ctx, out))
}

fn e_sort_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "sort_by", &[]) };
    let items = to_array(ctx, recv)?;
    sort_by_values(ctx, items, &b)
}

/// `min`/`max`/`min_by`/`max_by`, with an optional count (`min(2)`) and block.
pub fn minmax_generic(ctx: &mut Ctx, recv: Value, args: &Args, want_max: bool, by: bool) -> Result<Value> {
    if by && args.block.is_none() {
        let name = if want_max { "max_by" } else { "min_by" };
        return sized_enum(ctx, recv, name, args.pos);
    }
    if let Some(&n) = args.pos.first() {
        if !n.is_nil() {
            let n = integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error(&format!("negative size ({n})")));
            }
            let items = to_array(ctx, recv)?;
            let sorted = if by {
                sort_by_values(ctx, items, args.block.as_ref().expect("block"))?
            } else {
                sort_array(ctx, items, args.block)?
            };
            let mut v = array::to_vec(sorted);
            if want_max {
                v.reverse();
            }
            v.truncate(n as usize);
            return Ok(array::from_vec(ctx, v));
        }
    }
    let mut best = Value::UNDEF;
    let mut best_key = Value::UNDEF;
    let keep = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let key = if by { yield_packed(ctx, args.block.as_ref().expect("block"), v)? } else { v };
        if best.is_undef() {
            best = v;
            best_key = key;
        } else {
            let c = if !by && args.block.is_some() {
                let r = ctx.yield_block(args.block.as_ref().expect("block"), &[key, best_key])?;
                comparable::cmp_result(ctx, r, key, best_key)?
            } else {
                comparable::compare(ctx, key, best_key)?
            };
            if (want_max && c > 0) || (!want_max && c < 0) {
                best = v;
                best_key = key;
            }
        }
        array::set(keep, 0, best);
        array::set(keep, 1, best_key);
        Ok(true)
    })?;
    Ok(if best.is_undef() { Value::NIL } else { best })
}

fn e_min(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, false, false)
}
fn e_max(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, true, false)
}
fn e_min_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, false, true)
}
fn e_max_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_generic(ctx, recv, args, true, true)
}

/// `[min, max]` in one pass, comparing with the block when given.
pub fn minmax_pair(ctx: &mut Ctx, recv: Value, block: Option<Block>) -> Result<Value> {
    let (mut lo, mut hi) = (Value::UNDEF, Value::UNDEF);
    let keep = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if lo.is_undef() {
            lo = v;
            hi = v;
        } else {
            let cmp = |ctx: &mut Ctx, a: Value, b: Value| -> Result<i64> {
                match block {
                    Some(blk) => {
                        let r = ctx.yield_block(&blk, &[a, b])?;
                        comparable::cmp_result(ctx, r, a, b)
                    }
                    None => comparable::compare(ctx, a, b),
                }
            };
            if cmp(ctx, v, lo)? < 0 {
                lo = v;
            }
            if cmp(ctx, v, hi)? > 0 {
                hi = v;
            }
        }
        array::set(keep, 0, lo);
        array::set(keep, 1, hi);
        Ok(true)
    })?;
    if lo.is_undef() {
        return Ok(array::from_slice(ctx, &[Value::NIL, Value::NIL]));
    }
    Ok(array::from_slice(ctx, &[lo, hi]))
}

fn e_minmax(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    minmax_pair(ctx, recv, args.block)
}

fn e_minmax_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "minmax_by", &[]) };
    // keep = [min, min_key, max, max_key]
    let keep = array::from_slice(ctx, &[Value::UNDEF, Value::UNDEF, Value::UNDEF, Value::UNDEF]);
    let mut first = true;
    each_value(ctx, recv, &mut |ctx, v| {
        let k = yield_packed(ctx, &b, v)?;
        if first {
            first = false;
            array::rarray(keep).set_items(vec![v, k, v, k]);
            return Ok(true);
        }
        if comparable::compare(ctx, k, array::get(keep, 1))? < 0 {
            array::set(keep, 0, v);
            array::set(keep, 1, k);
        }
        if comparable::compare(ctx, k, array::get(keep, 3))? > 0 {
            array::set(keep, 2, v);
            array::set(keep, 3, k);
        }
        Ok(true)
    })?;
    if first {
        return Ok(array::from_slice(ctx, &[Value::NIL, Value::NIL]));
    }
    let (lo, hi) = (array::get(keep, 0), array::get(keep, 2));
    Ok(array::from_slice(ctx, &[lo, hi]))
}

fn e_group_by(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "group_by", &[]) };
    let h = hash::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        let k = yield_packed(ctx, &b, v)?;
        match hash::lookup(ctx, h, k)? {
            Some(list) => array::push(ctx, list, v),
            None => {
                let list = array::from_slice(ctx, &[v]);
                hash::aset(ctx, h, k, list)?;
            }
        }
        Ok(true)
    })?;
    Ok(h)
}

fn e_partition(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "partition", &[]) };
    let yes = array::new(ctx);
    let no = array::new(ctx);
    let pair = array::from_slice(ctx, &[yes, no]);
    each_value(ctx, recv, &mut |ctx, v| {
        if yield_packed(ctx, &b, v)?.truthy() {
            array::push(ctx, yes, v);
        } else {
            array::push(ctx, no, v);
        }
        Ok(true)
    })?;
    Ok(pair)
}

fn e_each_with_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "each_with_index", args.pos) };
    let mut i = 0i64;
    each_value_with(ctx, recv, sym::EACH, args.pos, &mut |ctx, v| {
        ctx.yield_block(&b, &[v, Value::fixnum(i)])?;
        i += 1;
        Ok(true)
    })?;
    Ok(recv)
}

fn e_each_with_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let memo = args.pos[0];
    let Some(b) = args.block else { return sized_enum(ctx, recv, "each_with_object", args.pos) };
    each_value(ctx, recv, &mut |ctx, v| {
        ctx.yield_block(&b, &[v, memo])?;
        Ok(true)
    })?;
    Ok(memo)
}

fn slice_count_arg(ctx: &mut Ctx, args: Value) -> Result<i64> {
    integer::to_i64_arg(ctx, array::get(args, 0))
}

fn each_slice_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let n = slice_count_arg(ctx, args)?;
    if n <= 0 {
        return Err(ctx.arg_error("invalid slice size"));
    }
    let size = enum_size(ctx, recv, args)?;
    if size.is_nil() {
        return Ok(size);
    }
    if let Some(s) = size.as_fixnum() {
        return Ok(Value::fixnum((s + n - 1) / n));
    }
    // A Float (Infinity) or a Bignum: compute with Ruby arithmetic.
    let nv = Value::fixnum(n);
    let t = ctx.call(size, sym::PLUS, &[Value::fixnum(n - 1)])?;
    ctx.call(t, sym::DIV, &[nv])
}

fn each_cons_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let n = slice_count_arg(ctx, args)?;
    if n <= 0 {
        return Err(ctx.arg_error("invalid size"));
    }
    let size = enum_size(ctx, recv, args)?;
    if size.is_nil() {
        return Ok(size);
    }
    if let Some(s) = size.as_fixnum() {
        return Ok(Value::fixnum((s - n + 1).max(0)));
    }
    let t = ctx.call(size, sym::MINUS, &[Value::fixnum(n - 1)])?;
    let neg = ctx.call(t, sym::LT, &[Value::fixnum(0)])?;
    Ok(if neg.truthy() { Value::fixnum(0) } else { t })
}

fn e_each_slice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n <= 0 {
        return Err(ctx.arg_error("invalid slice size"));
    }
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "each_slice", args.pos, SizeFn::Native(each_slice_size)) };
    let holder = array::new(ctx);
    let mut cur = array::new(ctx);
    array::set(holder, 0, cur);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, cur, v);
        if array::len(cur) as i64 == n {
            let full = cur;
            cur = array::new(ctx);
            array::set(holder, 0, cur);
            ctx.yield1(&b, full)?;
        }
        Ok(true)
    })?;
    if array::len(cur) > 0 {
        ctx.yield1(&b, cur)?;
    }
    Ok(recv)
}

fn e_each_cons(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n <= 0 {
        return Err(ctx.arg_error("invalid size"));
    }
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "each_cons", args.pos, SizeFn::Native(each_cons_size)) };
    let window = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, window, v);
        if array::len(window) as i64 > n {
            array::rarray(window).items_mut().remove(0);
        }
        if array::len(window) as i64 == n {
            let w = array::dup(ctx, window);
            ctx.yield1(&b, w)?;
        }
        Ok(true)
    })?;
    Ok(recv)
}

fn e_zip(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    // The receiver is read first, then as many elements of each argument as it has (CRuby
    // interleaves with external enumerators; the results are the same).
    let items = to_array(ctx, recv)?;
    crate::core::array_order::zip_values(ctx, items, args.pos, args.block, true)
}

fn e_tally(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = match args.pos.first() {
        Some(&given) => {
            let h = hash::to_hash_arg(ctx, given)?;
            ctx.check_frozen(h)?;
            h
        }
        None => hash::new(ctx),
    };
    each_value(ctx, recv, &mut |ctx, v| {
        let next = match hash::lookup(ctx, h, v)? {
            None => Value::fixnum(1),
            Some(n) if integer::is_integer(n) => integer::add(ctx, n, Value::fixnum(1))?,
            Some(n) => {
                let cname = object::class_name_of(ctx, n);
                return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Integer)")));
            }
        };
        ctx.check_frozen(h)?;
        hash::aset(ctx, h, v, next)?;
        Ok(true)
    })?;
    Ok(h)
}

fn e_uniq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let seen = hash::new(ctx);
    let out = array::new(ctx);
    each_args(ctx, recv, &mut |ctx, vals| {
        let v = pack(ctx, vals);
        let k = match args.block {
            Some(b) => ctx.yield_block(&b, vals)?,
            None => v,
        };
        if hash::lookup(ctx, seen, k)?.is_none() {
            hash::insert_raw(ctx, seen, k, Value::TRUE)?;
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn e_to_h(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = hash::new(ctx);
    each_args_with(ctx, recv, args.pos, &mut |ctx, vals| {
        let pair = match args.block {
            Some(b) => ctx.yield_block(&b, vals)?,
            None => pack(ctx, vals),
        };
        let Some(p) = array::try_to_ary(ctx, pair)? else {
            let cname = object::class_name_of(ctx, pair);
            return Err(ctx.type_error(&format!("wrong element type {cname} (expected array)")));
        };
        if array::len(p) != 2 {
            return Err(ctx.arg_error(&format!("element has wrong array length (expected 2, was {})", array::len(p))));
        }
        hash::aset(ctx, h, array::get(p, 0), array::get(p, 1))?;
        Ok(true)
    })?;
    Ok(h)
}

fn e_to_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (klass, rest) = match args.pos.first() {
        Some(&k) => (k, &args.pos[1..]),
        None => (ctx.c().set, &args.pos[..0]),
    };
    let mut call_args = vec![recv];
    call_args.extend_from_slice(rest);
    ctx.call_kw(klass, sym::NEW, &call_args, args.kw, args.block)
}

fn e_reverse_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "reverse_each", args.pos) };
    let items = array::new(ctx);
    each_value_with(ctx, recv, sym::EACH, args.pos, &mut |ctx, v| {
        array::push(ctx, items, v);
        Ok(true)
    })?;
    let mut i = array::len(items);
    while i > 0 {
        i -= 1;
        ctx.yield1(&b, array::get(items, i))?;
    }
    Ok(recv)
}

fn e_each_entry(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "each_entry", args.pos) };
    each_value_with(ctx, recv, sym::EACH, args.pos, &mut |ctx, v| {
        ctx.yield1(&b, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn cycle_size(ctx: &mut Ctx, recv: Value, args: Value) -> Result<Value> {
    let n = array::get(args, 0);
    let size = enum_size(ctx, recv, args)?;
    if size.is_nil() || size == Value::fixnum(0) {
        return Ok(size);
    }
    if n.is_nil() {
        return Ok(crate::core::float::new(ctx, f64::INFINITY));
    }
    let k = integer::to_i64_arg(ctx, n)?;
    if k <= 0 {
        return Ok(Value::fixnum(0));
    }
    ctx.call(size, sym::MUL, &[Value::fixnum(k)])
}

fn e_cycle(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "cycle", args.pos, SizeFn::Native(cycle_size)) };
    let times = match args.pos.first() {
        Some(&n) if !n.is_nil() => Some(integer::to_i64_arg(ctx, n)?),
        _ => None,
    };
    if times.is_some_and(|t| t <= 0) {
        return Ok(Value::NIL);
    }
    // The first round yields while recording; later rounds replay the recording.
    let items = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        array::push(ctx, items, v);
        ctx.yield1(&b, v)?;
        Ok(true)
    })?;
    if array::len(items) == 0 {
        return Ok(Value::NIL);
    }
    let mut round = 1;
    loop {
        if let Some(t) = times {
            if round >= t {
                break;
            }
        }
        let mut i = 0;
        while i < array::len(items) {
            ctx.yield1(&b, array::get(items, i))?;
            i += 1;
        }
        round += 1;
    }
    Ok(Value::NIL)
}

fn e_lazy(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    crate::core::lazy::lazy_new(ctx, recv)
}

fn e_compact(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let out = array::new(ctx);
    each_value(ctx, recv, &mut |ctx, v| {
        if !v.is_nil() {
            array::push(ctx, out, v);
        }
        Ok(true)
    })?;
    Ok(out)
}

fn grep_impl(ctx: &mut Ctx, recv: Value, args: &Args, invert: bool) -> Result<Value> {
    let pattern = args.pos[0];
    let out = array::new(ctx);
    // Without a block, CRuby's grep leaves `$~` as it was.
    let saved = if args.block.is_none() { Some(crate::interp::ops::get_last_match(ctx)) } else { None };
    let keep = array::from_slice(ctx, &[saved.unwrap_or(Value::NIL)]);
    each_value(ctx, recv, &mut |ctx, v| {
        let hit = crate::interp::ops::case_eq(ctx, pattern, v)?;
        if let Some(m) = saved {
            crate::interp::ops::set_last_match(ctx, m);
        }
        if hit != invert {
            let r = match args.block {
                Some(b) => ctx.yield1(&b, v)?,
                None => v,
            };
            array::push(ctx, out, r);
        }
        Ok(true)
    })?;
    std::hint::black_box(keep);
    Ok(out)
}

fn e_grep(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    grep_impl(ctx, recv, args, false)
}

fn e_grep_v(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    grep_impl(ctx, recv, args, true)
}

// ---- chunking: lazy enumerators over a native generator ----
//
// Each generator's state is an Array `[source, predicate, pattern]`; the predicate is a
// Proc (or nil when a pattern is used).

const CHUNK: u8 = 0;
const SLICE_BEFORE: u8 = 1;
const SLICE_AFTER: u8 = 2;
const SLICE_WHEN: u8 = 3;
const CHUNK_WHILE: u8 = 4;

fn chunk_state(ctx: &mut Ctx, source: Value, pred: Value, pattern: Value, kind: u8) -> Value {
    array::from_slice(ctx, &[source, pred, pattern, Value::fixnum(kind as i64)])
}

fn chunk_run(ctx: &mut Ctx, state: Value, out: &Block) -> Result<Value> {
    let (source, pred, pattern) = (array::get(state, 0), array::get(state, 1), array::get(state, 2));
    let kind = array::get(state, 3).as_fixnum().unwrap_or(0) as u8;
    // cur = [prev_key_or_elt, prev_elts]; prev_elts nil means "no chunk open".
    let cur = array::from_slice(ctx, &[Value::UNDEF, Value::NIL]);
    let alone = Value::symbol(ctx.intern("_alone"));
    let separator = Value::symbol(ctx.intern("_separator"));
    each_value(ctx, source, &mut |ctx, v| {
        match kind {
            CHUNK => {
                let key = ctx.call_proc(pred, &[v], None)?;
                let (prev, elts) = (array::get(cur, 0), array::get(cur, 1));
                if key == alone {
                    if !elts.is_nil() {
                        let pair = array::from_slice(ctx, &[prev, elts]);
                        array::set(cur, 1, Value::NIL);
                        ctx.yield1(out, pair)?;
                    }
                    let single = array::from_slice(ctx, &[v]);
                    let pair = array::from_slice(ctx, &[key, single]);
                    ctx.yield1(out, pair)?;
                } else if key.is_nil() || key == separator {
                    if !elts.is_nil() {
                        let pair = array::from_slice(ctx, &[prev, elts]);
                        array::set(cur, 1, Value::NIL);
                        ctx.yield1(out, pair)?;
                    }
                } else if key.as_symbol().is_some_and(|s| ctx.sym_name(s).first() == Some(&b'_')) {
                    return Err(ctx.runtime_error("symbols beginning with an underscore are reserved"));
                } else if elts.is_nil() {
                    let e = array::from_slice(ctx, &[v]);
                    array::set(cur, 0, key);
                    array::set(cur, 1, e);
                } else if object::equal(ctx, prev, key)? {
                    array::push(ctx, elts, v);
                } else {
                    let pair = array::from_slice(ctx, &[prev, elts]);
                    let e = array::from_slice(ctx, &[v]);
                    array::set(cur, 0, key);
                    array::set(cur, 1, e);
                    ctx.yield1(out, pair)?;
                }
            }
            SLICE_BEFORE => {
                let header = if pred.is_nil() { crate::interp::ops::case_eq(ctx, pattern, v)? } else { ctx.call_proc(pred, &[v], None)?.truthy() };
                let elts = array::get(cur, 1);
                if header {
                    let e = array::from_slice(ctx, &[v]);
                    array::set(cur, 1, e);
                    if !elts.is_nil() {
                        ctx.yield1(out, elts)?;
                    }
                } else if elts.is_nil() {
                    let e = array::from_slice(ctx, &[v]);
                    array::set(cur, 1, e);
                } else {
                    array::push(ctx, elts, v);
                }
            }
            SLICE_AFTER => {
                let mut elts = array::get(cur, 1);
                if elts.is_nil() {
                    elts = array::from_slice(ctx, &[v]);
                    array::set(cur, 1, elts);
                } else {
                    array::push(ctx, elts, v);
                }
                let split = if pred.is_nil() { crate::interp::ops::case_eq(ctx, pattern, v)? } else { ctx.call_proc(pred, &[v], None)?.truthy() };
                if split {
                    array::set(cur, 1, Value::NIL);
                    ctx.yield1(out, elts)?;
                }
            }
            _ => {
                let prev = array::get(cur, 0);
                if prev.is_undef() {
                    let e = array::from_slice(ctx, &[v]);
                    array::set(cur, 0, v);
                    array::set(cur, 1, e);
                } else {
                    let mut split = ctx.call_proc(pred, &[prev, v], None)?.truthy();
                    if kind == CHUNK_WHILE {
                        split = !split;
                    }
                    array::set(cur, 0, v);
                    if split {
                        let elts = array::get(cur, 1);
                        let e = array::from_slice(ctx, &[v]);
                        array::set(cur, 1, e);
                        ctx.yield1(out, elts)?;
                    } else {
                        let elts = array::get(cur, 1);
                        array::push(ctx, elts, v);
                    }
                }
            }
        }
        Ok(true)
    })?;
    let (prev, elts) = (array::get(cur, 0), array::get(cur, 1));
    if !elts.is_nil() {
        let last = if kind == CHUNK { array::from_slice(ctx, &[prev, elts]) } else { elts };
        ctx.yield1(out, last)?;
    }
    Ok(Value::NIL)
}

fn block_proc(ctx: &mut Ctx, args: &Args) -> Result<Value> {
    match args.block {
        Some(b) => rproc::from_block(ctx, &b),
        None => Err(ctx.arg_error("tried to create Proc object without a block")),
    }
}

fn e_chunk(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return sized_enum(ctx, recv, "chunk", &[]) };
    let p = rproc::from_block(ctx, &b)?;
    let st = chunk_state(ctx, recv, p, Value::NIL, CHUNK);
    Ok(crate::core::enumerator::from_native_generator(ctx, st, chunk_run, SizeFn::None))
}

fn slice_pattern_or_block(ctx: &mut Ctx, recv: Value, args: &Args, kind: u8) -> Result<Value> {
    let st = match args.block {
        Some(b) => {
            if !args.pos.is_empty() {
                return Err(ctx.arity_error(args.pos.len(), 0, Some(0)));
            }
            let p = rproc::from_block(ctx, &b)?;
            chunk_state(ctx, recv, p, Value::NIL, kind)
        }
        None => {
            if args.pos.len() != 1 {
                return Err(ctx.arity_error(args.pos.len(), 1, Some(1)));
            }
            chunk_state(ctx, recv, Value::NIL, args.pos[0], kind)
        }
    };
    Ok(crate::core::enumerator::from_native_generator(ctx, st, chunk_run, SizeFn::None))
}

fn e_slice_before(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    slice_pattern_or_block(ctx, recv, args, SLICE_BEFORE)
}

fn e_slice_after(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    slice_pattern_or_block(ctx, recv, args, SLICE_AFTER)
}

fn e_slice_when(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args)?;
    let st = chunk_state(ctx, recv, p, Value::NIL, SLICE_WHEN);
    Ok(crate::core::enumerator::from_native_generator(ctx, st, chunk_run, SizeFn::None))
}

fn e_chunk_while(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let p = block_proc(ctx, args)?;
    let st = chunk_state(ctx, recv, p, Value::NIL, CHUNK_WHILE);
    Ok(crate::core::enumerator::from_native_generator(ctx, st, chunk_run, SizeFn::None))
}

impl Ctx {
    /// Whether a core class's operator fast paths were disabled by a redefinition.
    pub fn vm_redefined(&self, bit: u32) -> bool {
        self.vm().redefined.load(std::sync::atomic::Ordering::Relaxed) & bit != 0
    }
}

pub fn init(ctx: &mut Ctx) {
    let e = ctx.c().enumerable;
    crate::methods!(ctx, e, [
        ("to_a", e_to_a, [0..], Safe),
        ("map", e_map, [0], Safe),
        ("flat_map", e_flat_map, [0], Safe),
        ("select", e_select, [0], Safe),
        ("filter_map", e_filter_map, [0], Safe),
        ("reject", e_reject, [0], Safe),
        ("find", e_find, [0..=1], Safe),
        ("find_index", e_find_index, [0..=1], Safe),
        ("include?", e_include, [1], Safe),
        ("inject", e_inject, [0..=2], Safe),
        ("sum", e_sum, [0..=1], Safe),
        ("count", e_count, [0..=1], Safe),
        ("first", e_first, [0..=1], Safe),
        ("take", e_take, [1], Safe),
        ("take_while", e_take_while, [0], Safe),
        ("drop", e_drop, [1], Safe),
        ("drop_while", e_drop_while, [0], Safe),
        ("all?", e_all, [0..=1], Safe),
        ("any?", e_any, [0..=1], Safe),
        ("none?", e_none, [0..=1], Safe),
        ("one?", e_one, [0..=1], Safe),
        ("sort", e_sort, [0], Safe),
        ("sort_by", e_sort_by, [0], Safe),
        ("min", e_min, [0..=1], Safe),
        ("max", e_max, [0..=1], Safe),
        ("min_by", e_min_by, [0..=1], Safe),
        ("max_by", e_max_by, [0..=1], Safe),
        ("minmax", e_minmax, [0], Safe),
        ("minmax_by", e_minmax_by, [0], Safe),
        ("group_by", e_group_by, [0], Safe),
        ("partition", e_partition, [0], Safe),
        ("each_with_index", e_each_with_index, [0..], Safe),
        ("each_with_object", e_each_with_object, [1], Safe),
        ("each_slice", e_each_slice, [1], Safe),
        ("each_cons", e_each_cons, [1], Safe),
        ("zip", e_zip, [0..], Safe),
        ("tally", e_tally, [0..=1], Safe),
        ("uniq", e_uniq, [0], Safe),
        ("to_h", e_to_h, [0..], Safe),
        ("to_set", e_to_set, [0..], Safe, Kw),
        ("reverse_each", e_reverse_each, [0..], Safe),
        ("each_entry", e_each_entry, [0..], Safe),
        ("cycle", e_cycle, [0..=1], Safe),
        ("lazy", e_lazy, [0], Safe),
        ("compact", e_compact, [0], Safe),
        ("grep", e_grep, [1], Safe),
        ("grep_v", e_grep_v, [1], Safe),
        ("chunk", e_chunk, [0], Safe),
        ("slice_before", e_slice_before, [0..], Safe),
        ("slice_after", e_slice_after, [0..], Safe),
        ("slice_when", e_slice_when, [0], Safe),
        ("chunk_while", e_chunk_while, [0], Safe),
    ]);
    crate::core::define_alias(ctx, e, "entries", "to_a");
    crate::core::define_alias(ctx, e, "collect", "map");
    crate::core::define_alias(ctx, e, "collect_concat", "flat_map");
    crate::core::define_alias(ctx, e, "filter", "select");
    crate::core::define_alias(ctx, e, "find_all", "select");
    crate::core::define_alias(ctx, e, "detect", "find");
    crate::core::define_alias(ctx, e, "member?", "include?");
    crate::core::define_alias(ctx, e, "reduce", "inject");
}
