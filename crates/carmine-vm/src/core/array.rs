//! Array: a growable vector of values.
//!
//! Invariants:
//! - `RArray` (`array_items.rs`) owns the elements; it is marked element by element.
//!   Outside this module it is read through `items()` and changed through `items_mut()`, a
//!   guard that runs the collector's write barrier (see `crate::heap`): an old Array is
//!   remembered when the guard is made and when it is dropped. This module's own stores
//!   (`push`, `set`) call `write_barrier` after the store instead.
//! - A block called while iterating may change the array: iteration re-reads the length and
//!   the element on every step and never holds a borrow of `items` across a call.
//! - Mutators check `FL_FROZEN` (`ctx.check_frozen`).
//! - The Ruby-visible methods beyond the basics are in `array_methods.rs`.

pub use crate::core::array_items::RArray;
use crate::core::array_items::{EMBED_LARGE, EMBED_SMALL};
use crate::core::object;
use crate::heap::page::SizeClass;
use crate::heap::Marker;
use crate::interp::Args;
use crate::object::{basic, is_type, ObjType, RBasic};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

impl RArray {
    /// The elements, to read.
    #[inline(always)]
    pub fn items(&self) -> &RArray {
        self
    }

    /// The elements, to change (see the module's invariants).
    #[inline]
    pub fn items_mut(&mut self) -> ItemsMut<'_> {
        crate::heap::remember_if_old(Value::from_ptr(self as *const RArray));
        crate::heap::guard_enter();
        ItemsMut { arr: self }
    }

    /// Replaces the elements.
    pub fn set_items(&mut self, items: Vec<Value>) {
        self.items_mut().replace_vec(items);
    }
}

/// A mutable borrow of an Array's elements that runs the write barrier (see the module's
/// invariants); it derefs to the `RArray`'s storage operations.
pub struct ItemsMut<'a> {
    arr: &'a mut RArray,
}

impl std::ops::Deref for ItemsMut<'_> {
    type Target = RArray;
    #[inline(always)]
    fn deref(&self) -> &RArray {
        self.arr
    }
}

impl std::ops::DerefMut for ItemsMut<'_> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut RArray {
        self.arr
    }
}

impl Drop for ItemsMut<'_> {
    #[inline]
    fn drop(&mut self) {
        crate::heap::guard_exit();
        crate::heap::remember_if_old(Value::from_ptr(self.arr as *const RArray));
    }
}

#[inline(always)]
pub fn rarray<'a>(v: Value) -> &'a mut RArray {
    debug_assert!(is_array(v));
    // SAFETY: callers pass an Array value.
    unsafe { &mut *v.as_ptr::<RArray>() }
}

#[inline]
pub fn is_array(v: Value) -> bool {
    is_type(v, ObjType::Array)
}

/// An Array whose class is exactly Array.
#[inline]
pub fn is_plain_array(v: Value) -> bool {
    is_array(v) && basic(basic(v).klass).has(crate::object::FL_USER1)
}

pub fn from_vec(ctx: &mut Ctx, items: Vec<Value>) -> Value {
    if items.len() > EMBED_SMALL && items.capacity() <= EMBED_LARGE {
        return from_slice(ctx, &items);
    }
    if items.capacity() > 64 {
        ctx.note_malloc(items.capacity() * 8);
    }
    let p = alloc_holding(ctx, &items, SizeClass::Small);
    // SAFETY: fresh 40-byte Array slot.
    unsafe { RArray::init_vec(p, items) };
    Value::from_ptr(p)
}

/// A fresh Array slot (its items still to be written). The elements may be held only by
/// `vals` now (the compiler moves values straight into a buffer), so a collection during
/// the slot allocation marks them from there.
#[inline]
fn alloc_holding(ctx: &mut Ctx, vals: &[Value], class: SizeClass) -> *mut RArray {
    let klass = ctx.c().array;
    let outer = std::mem::replace(&mut ctx.pending_values, (vals.as_ptr(), vals.len()));
    let p = ctx.alloc_slot_in(class, ObjType::Array, klass) as *mut RArray;
    ctx.pending_values = outer;
    p
}

/// A new Array of copies of `items`: inside a 40-byte slot when there are at most
/// `EMBED_SMALL`, a 64-byte one when at most `EMBED_LARGE`.
pub fn from_slice(ctx: &mut Ctx, items: &[Value]) -> Value {
    if items.len() > EMBED_LARGE {
        return from_vec(ctx, items.to_vec());
    }
    let large = items.len() > EMBED_SMALL;
    let p = alloc_holding(ctx, items, if large { SizeClass::Large } else { SizeClass::Small });
    // SAFETY: fresh Array slot of the size asked for.
    unsafe { RArray::init_slice(p, items, large) };
    Value::from_ptr(p)
}

pub fn new(ctx: &mut Ctx) -> Value {
    from_vec(ctx, Vec::new())
}

pub fn with_capacity(ctx: &mut Ctx, n: usize) -> Value {
    from_vec(ctx, Vec::with_capacity(n.min(1 << 20)))
}

#[inline]
pub fn len(v: Value) -> usize {
    rarray(v).items().len()
}

/// Element `i`, or nil when out of range.
#[inline]
pub fn get(v: Value, i: usize) -> Value {
    rarray(v).items().get(i).copied().unwrap_or(Value::NIL)
}

/// A copy of the elements (for iteration that must not observe mutation).
pub fn to_vec(v: Value) -> Vec<Value> {
    rarray(v).items().to_vec()
}

pub fn slice_to_vec(v: Value, start: usize, n: usize) -> Vec<Value> {
    let items = rarray(v).items();
    let s = start.min(items.len());
    let e = (start + n).min(items.len());
    items[s..e].to_vec()
}

#[inline]
pub fn push(ctx: &mut Ctx, a: Value, v: Value) {
    if !push_in_place(a, v) {
        push_grown(ctx, a, v);
    }
}

/// `push` when the buffer has room (nothing is allocated); false, having changed nothing,
/// when it must grow.
#[inline(always)]
pub fn push_in_place(a: Value, v: Value) -> bool {
    if !rarray(a).push_in_place(v) {
        return false;
    }
    crate::heap::write_barrier(a, v);
    true
}

/// `push` when `push_in_place` found no room: the buffer grows (or moves its elements down
/// first), and the growth of a large buffer counts towards the malloc limit.
#[inline(never)]
pub fn push_grown(ctx: &mut Ctx, a: Value, v: Value) {
    let items = rarray(a);
    let cap = items.capacity();
    items.push(v);
    if cap >= 64 && items.capacity() != cap {
        let grown = (items.capacity() - cap) * 8;
        ctx.note_malloc(grown);
    }
    crate::heap::write_barrier(a, v);
}

pub fn set(a: Value, i: usize, v: Value) {
    let items = rarray(a);
    if i >= items.len() {
        items.resize(i + 1, Value::NIL);
    }
    items[i] = v;
    crate::heap::write_barrier(a, v);
}

pub fn dup(ctx: &mut Ctx, a: Value) -> Value {
    let v = to_vec(a);
    from_vec(ctx, v)
}

pub fn dup_with_class(ctx: &mut Ctx, a: Value, klass: Value) -> Value {
    let r = dup(ctx, a);
    basic(r).klass = klass;
    r
}

#[inline]
pub fn aref_fix(a: Value, i: i64) -> Value {
    let items = rarray(a).items();
    let n = items.len() as i64;
    let i = if i < 0 { i + n } else { i };
    if i < 0 || i >= n {
        Value::NIL
    } else {
        items[i as usize]
    }
}

/// `a[i] = v` for a Fixnum index: in place when `i` is an element of an unfrozen `a`, the
/// common case of a loop over an Array (no growth, no error to build). Out of line: the
/// dispatch loop's `OptAset` calls it when `aset_in_place` could not store.
#[inline(never)]
pub fn aset_fix(ctx: &mut Ctx, a: Value, i: i64, v: Value) -> Result<()> {
    // (Only Strings are ever chilled.)
    if !basic(a).has(crate::object::FL_FROZEN) && aset_in_place(a, i, v) {
        return Ok(());
    }
    aset_fix_general(ctx, a, i, v)
}

/// `aset_fix` of an index from 0 to below the length of a receiver known not to be frozen:
/// a store and nothing else (nothing allocated, nothing raised); false, having changed
/// nothing, for any other index.
#[inline(always)]
pub fn aset_in_place(a: Value, i: i64, v: Value) -> bool {
    match rarray(a).get_mut(i as usize) {
        Some(slot) if i >= 0 => {
            *slot = v;
            crate::heap::write_barrier(a, v);
            true
        }
        _ => false,
    }
}

/// `aset_fix` for a negative index, one past the end, or a frozen receiver.
#[inline(never)]
fn aset_fix_general(ctx: &mut Ctx, a: Value, i: i64, v: Value) -> Result<()> {
    ctx.check_frozen(a)?;
    let n = len(a) as i64;
    let j = if i < 0 { i + n } else { i };
    if j < 0 {
        return Err(ctx.index_error(&format!("index {} too small for array; minimum: -{}", i, n)));
    }
    if j > (1 << 40) {
        return Err(ctx.index_error(&format!("index {j} too big")));
    }
    reserve_up_to(ctx, a, j as usize + 1)?;
    set(a, j as usize, v);
    Ok(())
}

/// Makes room for `n` elements, raising NoMemoryError when a size chosen by Ruby code
/// cannot be allocated (instead of aborting).
pub fn reserve_up_to(ctx: &mut Ctx, a: Value, n: usize) -> Result<()> {
    let cur = len(a);
    if n > cur {
        ctx.try_reserve(rarray(a).items_mut().vec_mut(), n - cur)?;
    }
    Ok(())
}

pub fn mark(v: Value, m: &mut Marker<'_>) {
    m.mark_all(rarray(v));
}

/// # Safety
/// `p` is a dead Array slot.
pub unsafe fn finalize(p: *mut RBasic) {
    RArray::finalize(p as *mut RArray);
}

/// `*x`: an Array from `x` (`to_a` if it responds, else `[x]`); `dup` copies arrays.
pub fn splat(ctx: &mut Ctx, v: Value, dup_it: bool) -> Result<Value> {
    if is_array(v) {
        return Ok(if dup_it { dup(ctx, v) } else { v });
    }
    if v.is_nil() && ctx.vm().redefined.load(std::sync::atomic::Ordering::Relaxed) & crate::interp::ops::REDEF_NIL_TO_A == 0 {
        return Ok(new(ctx));
    }
    // CRuby's rb_check_to_array: a user respond_to? and method_missing are honoured.
    if v.is_heap() || v.is_nil() {
        if let Some(r) = crate::core::convert::check_funcall(ctx, v, sym::TO_A, &[])? {
            if is_array(r) {
                return Ok(r);
            }
            if !r.is_nil() {
                let cname = object::class_name_of(ctx, v);
                let rname = object::class_name_of(ctx, r);
                return Err(ctx.type_error(&format!("can't convert {cname} into Array ({cname}#to_a gives {rname})")));
            }
        }
    }
    Ok(from_slice(ctx, &[v]))
}

/// `[*a, *b]`: a new array (the compiler's arrays may be extended in place).
pub fn concat_for_splat(ctx: &mut Ctx, a: Value, b: Value) -> Result<Value> {
    let b = splat(ctx, b, false)?;
    let mut v = to_vec(a);
    v.extend_from_slice(rarray(b).items());
    Ok(from_vec(ctx, v))
}

/// Implicit conversion to Array (`to_ary`), CRuby's `rb_convert_type`.
pub fn to_ary_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_array(v) {
        return Ok(v);
    }
    let r = if v.is_heap() { crate::core::convert::check_funcall(ctx, v, sym::TO_ARY, &[])? } else { None };
    match r {
        None => Err(ctx.conversion_error(v, "Array")),
        Some(r) if is_array(r) => Ok(r),
        Some(r) => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} into Array ({cname}#to_ary gives {rname})")))
        }
    }
}

/// `to_ary` if the object answers it, else `None` (CRuby's `rb_check_array_type`).
pub fn try_to_ary(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if is_array(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() {
        return Ok(None);
    }
    match crate::core::convert::check_funcall(ctx, v, sym::TO_ARY, &[])? {
        None => Ok(None),
        Some(r) if r.is_nil() => Ok(None),
        Some(r) if is_array(r) => Ok(Some(r)),
        Some(r) => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} into Array ({cname}#to_ary gives {rname})")))
        }
    }
}

// ---- core methods (the rest are in array_methods.rs) ----

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = object::allocate(ctx, recv)?;
    ctx.call_kw(a, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(a)
}

fn s_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = object::allocate(ctx, recv)?;
    rarray(a).set_items(args.pos.to_vec());
    Ok(a)
}

fn s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(try_to_ary(ctx, args.pos[0])?.unwrap_or(Value::NIL))
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    rarray(recv).items_mut().clear();
    let Some(&first) = args.pos.first() else {
        if args.block.is_some() {
            let (path, line) = crate::core::kernel::caller_location(ctx);
            crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: given block not used\n"));
        }
        return Ok(recv);
    };
    if args.pos.len() == 1 && !first.is_fixnum() {
        if let Some(a) = try_to_ary(ctx, first)? {
            let items = to_vec(a);
            rarray(recv).set_items(items);
            return Ok(recv);
        }
    }
    let n = crate::core::integer::to_i64_arg(ctx, first)?;
    if n < 0 {
        return Err(ctx.arg_error("negative array size"));
    }
    if n > (1 << 32) {
        return Err(ctx.arg_error("array size too big"));
    }
    if args.block.is_some() && args.pos.len() == 2 {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: block supersedes default value argument\n"));
    }
    match args.block {
        Some(b) => {
            for i in 0..n {
                let v = ctx.yield1(&b, Value::fixnum(i))?;
                push(ctx, recv, v);
            }
        }
        None => {
            let fill = args.pos.get(1).copied().unwrap_or(Value::NIL);
            reserve_up_to(ctx, recv, n as usize)?;
            rarray(recv).items_mut().resize(n as usize, fill);
        }
    }
    Ok(recv)
}

fn length(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(len(recv) as i64))
}

fn empty_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(len(recv) == 0))
}

pub(crate) fn push_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    for &v in args.pos {
        push(ctx, recv, v);
    }
    Ok(recv)
}

pub(crate) fn lshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    push(ctx, recv, args.pos[0]);
    Ok(recv)
}

/// Removes and returns the last element (nil when empty); the caller checked it is not frozen.
pub fn pop_item(a: Value) -> Value {
    rarray(a).items_mut().pop().unwrap_or(Value::NIL)
}

/// Removes and returns the first element (nil when empty); the caller checked it is not frozen.
pub fn shift_item(a: Value) -> Value {
    let mut items = rarray(a).items_mut();
    if items.is_empty() {
        Value::NIL
    } else {
        items.remove(0)
    }
}

/// The last element, or nil when empty.
#[inline]
pub fn last_item(a: Value) -> Value {
    rarray(a).items().last().copied().unwrap_or(Value::NIL)
}

pub(crate) fn pop(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match args.pos.first() {
        None => Ok(pop_item(recv)),
        Some(&n) => {
            let n = crate::core::integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error("negative array size"));
            }
            let tail = {
                let mut items = rarray(recv).items_mut();
                let at = items.len() - (n as usize).min(items.len());
                items.split_off(at)
            };
            Ok(from_vec(ctx, tail))
        }
    }
}

pub(crate) fn shift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match args.pos.first() {
        None => Ok(shift_item(recv)),
        Some(&n) => {
            let n = crate::core::integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error("negative array size"));
            }
            let head = {
                let mut items = rarray(recv).items_mut();
                let k = (n as usize).min(items.len());
                items.shift_n(k)
            };
            Ok(from_vec(ctx, head))
        }
    }
}

fn unshift(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let mut items = rarray(recv).items_mut();
    items.prepend(args.pos);
    Ok(recv)
}

/// Resolves `ary[start, len]`/`ary[range]` to (start, len) within `n`, CRuby's rules.
fn resolve_start_len(n: i64, start: i64, count: i64) -> Option<(usize, usize)> {
    let s = if start < 0 { start + n } else { start };
    if s < 0 || s > n || count < 0 {
        return None;
    }
    let e = (s + count).min(n);
    Some((s as usize, (e - s) as usize))
}

pub fn aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = len(recv) as i64;
    if args.pos.len() == 2 {
        let s = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
        let c = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
        return Ok(match resolve_start_len(n, s, c) {
            Some((s, c)) => {
                let v = slice_to_vec(recv, s, c);
                from_vec(ctx, v)
            }
            None => Value::NIL,
        });
    }
    let a = args.pos[0];
    if let Some(i) = a.as_fixnum() {
        return Ok(aref_fix(recv, i));
    }
    if crate::core::range::is_range(a) {
        return Ok(match crate::core::range::resolve_bounds(ctx, a, n)? {
            Some((s, c)) => match resolve_start_len(n, s, c) {
                Some((s, c)) => {
                    let v = slice_to_vec(recv, s, c);
                    from_vec(ctx, v)
                }
                None => Value::NIL,
            },
            None => Value::NIL,
        });
    }
    if crate::core::arith_seq::is_arith_seq(a) {
        return crate::core::arith_seq::array_aref(ctx, recv, a);
    }
    let i = crate::core::integer::to_i64_arg(ctx, a)?;
    Ok(aref_fix(recv, i))
}

fn splice(ctx: &mut Ctx, recv: Value, start: i64, count: i64, repl: Value) -> Result<()> {
    let n = len(recv) as i64;
    let s = if start < 0 { start + n } else { start };
    if s < 0 {
        return Err(ctx.index_error(&format!("index {} too small for array; minimum: -{}", start, n)));
    }
    if count < 0 {
        return Err(ctx.index_error(&format!("negative length ({count})")));
    }
    let new_items: Vec<Value> = if is_array(repl) { to_vec(repl) } else { vec![repl] };
    if s > (1 << 40) {
        return Err(ctx.index_error(&format!("index {s} too big")));
    }
    reserve_up_to(ctx, recv, s as usize + new_items.len())?;
    let mut items = rarray(recv).items_mut();
    if s as usize > items.len() {
        items.resize(s as usize, Value::NIL);
    }
    let s = s as usize;
    let e = s.saturating_add(count as usize).min(items.len());
    items.splice(s..e, new_items);
    Ok(())
}

fn aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if args.pos.len() == 3 {
        let s = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
        let c = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
        let v = args.pos[2];
        let repl = try_to_ary(ctx, v)?.unwrap_or(v);
        splice(ctx, recv, s, c, repl)?;
        return Ok(v);
    }
    let (a, v) = (args.pos[0], args.pos[1]);
    if crate::core::range::is_range(a) {
        let n = len(recv) as i64;
        let (s, c) = match crate::core::range::resolve_bounds_for_write(ctx, a, n)? {
            Some(x) => x,
            None => {
                let s = crate::core::object::inspect_string(ctx, a)?;
                return Err(ctx.range_error(&format!("{s} out of range")));
            }
        };
        let repl = try_to_ary(ctx, v)?.unwrap_or(v);
        splice(ctx, recv, s, c.max(0), repl)?;
        return Ok(v);
    }
    let i = crate::core::integer::to_i64_arg(ctx, a)?;
    aset_fix(ctx, recv, i, v)?;
    Ok(v)
}

pub(crate) fn first(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.pos.first() {
        None => Ok(get(recv, 0)),
        Some(&n) => {
            let n = crate::core::integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error("negative array size"));
            }
            let v = slice_to_vec(recv, 0, n as usize);
            Ok(from_vec(ctx, v))
        }
    }
}

pub(crate) fn last(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let l = len(recv);
    match args.pos.first() {
        None => Ok(last_item(recv)),
        Some(&n) => {
            let n = crate::core::integer::to_i64_arg(ctx, n)?;
            if n < 0 {
                return Err(ctx.arg_error("negative array size"));
            }
            let k = (n as usize).min(l);
            let v = slice_to_vec(recv, l - k, k);
            Ok(from_vec(ctx, v))
        }
    }
}

fn each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "each", &[], crate::core::enumerator::SizeFn::ArrayLen);
    };
    let mut i = 0;
    while i < len(recv) {
        let v = get(recv, i);
        ctx.yield1(&b, v)?;
        i += 1;
    }
    Ok(recv)
}

fn each_index(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "each_index", &[], crate::core::enumerator::SizeFn::ArrayLen);
    };
    let mut i = 0;
    while i < len(recv) {
        ctx.yield1(&b, Value::fixnum(i as i64))?;
        i += 1;
    }
    Ok(recv)
}

fn map(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "map", &[], crate::core::enumerator::SizeFn::ArrayLen);
    };
    let out = with_capacity(ctx, len(recv));
    let mut i = 0;
    while i < len(recv) {
        let v = get(recv, i);
        let r = ctx.yield1(&b, v)?;
        push(ctx, out, r);
        i += 1;
    }
    Ok(out)
}

fn map_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "map!", &[], crate::core::enumerator::SizeFn::ArrayLen);
    };
    ctx.check_frozen(recv)?;
    let mut i = 0;
    while i < len(recv) {
        let v = get(recv, i);
        let r = ctx.yield1(&b, v)?;
        ctx.check_frozen(recv)?;
        if i < len(recv) {
            rarray(recv).items_mut()[i] = r;
        }
        i += 1;
    }
    Ok(recv)
}

fn select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "select", &[], crate::core::enumerator::SizeFn::ArrayLen);
    };
    let out = new(ctx);
    let mut i = 0;
    while i < len(recv) {
        // As in CRuby, the element as it is after the block (nil when the block shrank the
        // Array).
        if ctx.yield1(&b, get(recv, i))?.truthy() {
            let v = get(recv, i);
            push(ctx, out, v);
        }
        i += 1;
    }
    Ok(out)
}

fn reject(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "reject", &[], crate::core::enumerator::SizeFn::ArrayLen);
    };
    let out = new(ctx);
    let mut i = 0;
    while i < len(recv) {
        let v = get(recv, i);
        if !ctx.yield1(&b, v)?.truthy() {
            push(ctx, out, v);
        }
        i += 1;
    }
    Ok(out)
}

/// An element's `inspect` as a String (CRuby's `rb_inspect`: a non-String result is
/// converted with `to_s`, and an object's default `to_s` when even that is not a String).
pub fn inspect_elem(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let s = object::inspect(ctx, v)?;
    if crate::core::string::is_string(s) {
        return Ok(s);
    }
    Ok(object::any_to_s(ctx, s))
}

pub fn inspect_array(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    if len(recv) == 0 {
        return Ok(crate::core::string::new_utf8(ctx, "[]"));
    }
    let r = object::guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let mut out: Vec<u8> = vec![b'['];
        let mut enc = crate::core::encoding::UTF_8;
        let mut i = 0;
        while i < len(recv) {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            let s = inspect_elem(ctx, get(recv, i))?;
            let e = crate::core::string::encoding(s);
            if !crate::core::string::bytes(s).is_ascii() && e != enc && out.is_ascii() {
                enc = e;
            }
            out.extend_from_slice(crate::core::string::bytes(s));
            i += 1;
        }
        out.push(b']');
        Ok(Some((out, enc)))
    })?;
    Ok(match r {
        Some((b, enc)) => crate::core::string::new_with_enc(ctx, b, enc),
        None => crate::core::string::new_utf8(ctx, "[...]"),
    })
}

fn inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    inspect_array(ctx, recv)
}

pub fn equal_arrays(ctx: &mut Ctx, a: Value, b: Value, eql: bool) -> Result<bool> {
    if a == b {
        return Ok(true);
    }
    if len(a) != len(b) {
        return Ok(false);
    }
    // Pairs decided without running Ruby code cannot lead back here, so the recursion guard
    // is entered only at the first pair that needs a `==`/`eql?` call.
    let mut i = 0;
    while i < len(a) {
        let (x, y) = (get(a, i), get(b, i));
        let decided = if x == y {
            Some(true)
        } else if eql {
            object::fast_eql(x, y)
        } else {
            crate::interp::ops::fast_eq(ctx, x, y)
        };
        match decided {
            Some(true) => i += 1,
            Some(false) => return Ok(false),
            None => break,
        }
    }
    if i == len(a) {
        return Ok(true);
    }
    let op = if eql { sym::EQL } else { sym::EQ };
    object::guard_recursion(ctx, op, a, b, true, |ctx| {
        while i < len(a) && i < len(b) {
            let (x, y) = (get(a, i), get(b, i));
            let same = if eql { object::eql(ctx, x, y)? } else { object::equal(ctx, x, y)? };
            if !same {
                return Ok(false);
            }
            i += 1;
        }
        Ok(len(a) == len(b))
    })
}

fn op_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_array(o) {
        if o.is_heap() && ctx.respond_to_dynamic(o, sym::TO_ARY)? {
            let r = ctx.call(o, sym::EQ, &[recv])?;
            return Ok(Value::bool(r.truthy()));
        }
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(equal_arrays(ctx, recv, o, false)?))
}

fn op_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_array(o) {
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(equal_arrays(ctx, recv, o, true)?))
}

fn op_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let seed = ctx.vm().hash_seed;
    let rec = crate::core::hash::RECURSIVE_HASH;
    let h = object::guard_recursion(ctx, sym::HASH, recv, Value::NIL, None, |ctx| {
        let mut h = crate::core::hash::mix(seed, len(recv) as u64);
        let mut i = 0;
        while i < len(recv) {
            let e = object::hash_of(ctx, get(recv, i))?;
            if e == rec as u64 {
                return Ok(None);
            }
            h = crate::core::hash::mix(h, e);
            i += 1;
        }
        Ok(Some(h))
    })?;
    Ok(Value::fixnum(match h {
        Some(h) => (h >> 2) as i64,
        None => rec,
    }))
}

fn to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if basic(recv).klass == ctx.c().array {
        return Ok(recv);
    }
    Ok(dup(ctx, recv))
}

fn to_ary(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

pub(crate) fn replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let o = to_ary_arg(ctx, args.pos[0])?;
    let v = to_vec(o);
    rarray(recv).set_items(v);
    Ok(recv)
}

fn clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    rarray(recv).items_mut().clear();
    Ok(recv)
}

fn concat(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let mut extra = Vec::new();
    for &a in args.pos {
        let a = to_ary_arg(ctx, a)?;
        extra.extend(to_vec(a));
    }
    rarray(recv).items_mut().extend(extra);
    Ok(recv)
}

fn plus(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = to_ary_arg(ctx, args.pos[0])?;
    let mut v = to_vec(recv);
    v.extend_from_slice(rarray(o).items());
    Ok(from_vec(ctx, v))
}

fn include_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let x = args.pos[0];
    let mut i = 0;
    while i < len(recv) {
        if object::equal(ctx, get(recv, i), x)? {
            return Ok(Value::TRUE);
        }
        i += 1;
    }
    Ok(Value::FALSE)
}

fn join(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let sep = match args.pos.first() {
        Some(&s) if !s.is_nil() => s,
        _ => crate::core::globals::get(ctx, sym::DOLLAR_COMMA)?,
    };
    join_with(ctx, recv, sep)
}

/// `rb_str_check_type`: `to_str` when the object has it (nil otherwise).
fn check_str(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    use crate::core::string;
    if string::is_string(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() {
        return Ok(None);
    }
    match crate::core::convert::check_funcall(ctx, v, sym::TO_STR, &[])? {
        None => Ok(None),
        Some(r) if r.is_nil() => Ok(None),
        Some(r) if string::is_string(r) => Ok(Some(r)),
        Some(r) => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} into String ({cname}#to_str gives {rname})")))
        }
    }
}

/// `Array#join` (CRuby's `rb_ary_join`): elements are converted with `to_str`, `to_ary`
/// (recursively joined) or `to_s`; the result takes the first element's encoding and
/// appending checks encoding compatibility.
pub fn join_with(ctx: &mut Ctx, recv: Value, sep: Value) -> Result<Value> {
    use crate::core::string;
    if len(recv) == 0 {
        return Ok(string::new_us_ascii(ctx, ""));
    }
    let sep = if sep.is_nil() { sep } else { string::to_str_arg(ctx, sep)? };
    let result = string::new_us_ascii(ctx, "");
    let mut first = true;
    join_into(ctx, recv, sep, result, &mut first)?;
    Ok(result)
}

fn join_into(ctx: &mut Ctx, a: Value, sep: Value, result: Value, first: &mut bool) -> Result<()> {
    use crate::core::string;
    let mut i = 0;
    while i < len(a) {
        if i > 0 && !sep.is_nil() {
            string::append_str(ctx, result, sep)?;
        }
        let v = get(a, i);
        let piece = if string::is_string(v) {
            Some(v)
        } else if is_array(v) {
            join_nested(ctx, v, sep, result, first)?;
            None
        } else if let Some(s) = check_str(ctx, v)? {
            Some(s)
        } else if let Some(arr) = try_to_ary(ctx, v)? {
            join_nested(ctx, arr, sep, result, first)?;
            None
        } else {
            Some(string::to_s(ctx, v)?)
        };
        if let Some(s) = piece {
            if *first {
                string::set_encoding(result, string::encoding(s));
                *first = false;
            }
            string::append_str(ctx, result, s)?;
        }
        i += 1;
    }
    Ok(())
}

fn join_nested(ctx: &mut Ctx, v: Value, sep: Value, result: Value, first: &mut bool) -> Result<()> {
    *first = false;
    let recursive = object::guard_recursion(ctx, sym::TO_S, v, Value::NIL, true, |ctx| {
        join_into(ctx, v, sep, result, first)?;
        Ok(false)
    })?;
    if recursive {
        return Err(ctx.arg_error("recursive array join"));
    }
    Ok(())
}

fn reverse(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let mut v = to_vec(recv);
    v.reverse();
    Ok(from_vec(ctx, v))
}

fn reverse_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    rarray(recv).items_mut().reverse();
    Ok(recv)
}

fn frozen_check_freeze(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object::freeze(recv))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().array;
    basic(c).flags |= crate::object::FL_USER1;
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Unsafe, Singleton, Kw),
        ("[]", s_aref, [0..], Safe, Singleton),
        ("try_convert", s_try_convert, [1], Safe, Singleton),
        ("initialize", initialize, [0..=2], Unsafe, Private),
        ("length", length, [0], Safe),
        ("empty?", empty_p, [0], Safe),
        ("push", push_m, [0..], Unsafe),
        ("<<", lshift, [1], Unsafe),
        ("pop", pop, [0..=1], Unsafe),
        ("shift", shift, [0..=1], Unsafe),
        ("unshift", unshift, [0..], Unsafe),
        ("[]", aref, [1..=2], Safe),
        ("[]=", aset, [2..=3], Unsafe),
        ("first", first, [0..=1], Safe),
        ("last", last, [0..=1], Safe),
        ("each", each, [0], Safe),
        ("each_index", each_index, [0], Safe),
        ("map", map, [0], Safe),
        ("map!", map_bang, [0], Unsafe),
        ("select", select, [0], Safe),
        ("reject", reject, [0], Safe),
        ("inspect", inspect, [0], Safe),
        ("==", op_eq, [1], Safe),
        ("eql?", op_eql, [1], Safe),
        ("hash", op_hash, [0], Safe),
        ("to_a", to_a, [0], Safe),
        ("to_ary", to_ary, [0], Safe),
        ("replace", replace, [1], Unsafe),
        ("initialize_copy", replace, [1], Unsafe, Private),
        ("clear", clear, [0], Unsafe),
        ("concat", concat, [0..], Unsafe),
        ("+", plus, [1], Safe),
        ("include?", include_p, [1], Safe),
        ("join", join, [0..=1], Safe),
        ("reverse", reverse, [0], Safe),
        ("reverse!", reverse_bang, [0], Unsafe),
        ("freeze", frozen_check_freeze, [0], Unsafe),
    ]);
    crate::core::define_alias(ctx, c, "size", "length");
    crate::core::define_alias(ctx, c, "append", "push");
    crate::core::define_alias(ctx, c, "prepend", "unshift");
    crate::core::define_alias(ctx, c, "slice", "[]");
    crate::core::define_alias(ctx, c, "collect", "map");
    crate::core::define_alias(ctx, c, "collect!", "map!");
    crate::core::define_alias(ctx, c, "filter", "select");
    crate::core::define_alias(ctx, c, "to_s", "inspect");
    crate::core::array_methods::init(ctx);
}
