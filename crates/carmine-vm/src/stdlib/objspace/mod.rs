//! `objspace.so`, the native half of the `objspace` library (CRuby's ext/objspace):
//! memory sizes, object counts by kind, the references the collector follows, allocation
//! sites, and JSON heap dumps (`dump.rs`). The installed `objspace.rb` wraps `_dump` and
//! `_dump_all`; `objspace/trace.rb` uses the allocation sites.
//!
//! Invariants:
//! - References are found by the collector's own marking of one object's children
//!   (`object::mark_children`, gathered with `Marker::take_gathered`), so they are exactly
//!   what keeps an object's referents alive.
//! - Internal objects (environments, instruction sequences, crefs, hidden metaclasses) are
//!   never handed to Ruby code bare: they are wrapped in an `InternalObjectWrapper`.
//! - The allocation-site table (`heap::alloc_trace`) is never locked while Ruby objects are
//!   allocated: a collection started by the allocation would lock it again.

mod dump;
pub mod memsize;

use crate::core::module::{self, body};
use crate::core::objspace::{is_visible, type_name, TYPE_ORDER};
use crate::core::{array, hash, object, string};
use crate::heap::Marker;
use crate::interp::Args;
use crate::object::{basic, ObjType, RBasic, FL_EXIVAR};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub use memsize::memsize_of;

// ---- references ----

/// The objects `obj` (a heap object) references, each once, as the collector marks them.
pub(crate) fn references(ctx: &Ctx, obj: Value) -> Vec<Value> {
    let vm = ctx.vm();
    crate::gc::finish_sweep(vm);
    let heap = vm.heap.lock();
    let exivars = vm.generic_ivars.borrow();
    let mut m = Marker::new(&heap);
    crate::object::mark_children(obj, &mut m);
    if basic(obj).has(FL_EXIVAR) {
        if let Some(ivars) = exivars.get(&(obj.raw() as usize)) {
            for &(_, v) in ivars {
                m.mark(v);
            }
        }
    }
    m.take_gathered()
}

/// The collector's roots of this VM as seen from the current thread, by category: the
/// VM's tables, this thread's VM stack and state, and its native stack (conservatively).
/// Other threads run in parallel and are not walked.
pub(crate) fn root_references(ctx: &Ctx) -> Vec<(&'static str, Vec<Value>)> {
    let vm = ctx.vm();
    crate::gc::finish_sweep(vm);
    let heap = vm.heap.lock();
    let mut out = Vec::new();
    let mut m = Marker::new(&heap);
    crate::gc::mark_vm_roots(vm, &mut m);
    out.push(("vm", m.take_gathered()));
    crate::gc::mark_thread(ctx, &mut m);
    out.push(("thread", m.take_gathered()));
    let hi = ctx.native_stack_hi;
    crate::heap::stack_scan::with_registers_spilled(&mut |sp| {
        // SAFETY: [sp, hi) is the live part of this thread's native stack.
        unsafe { m.mark_range_conservative(sp, hi) };
    });
    out.push(("machine_context", m.take_gathered()));
    out
}

/// `ObjectSpace::InternalObjectWrapper`: what Ruby code sees of an internal object.
struct InternalObject(Value);
crate::data_obj!(InternalObject, |s, m| { m.mark(s.0) });

/// `v` itself if Ruby code may see it, else a wrapper around it.
fn wrap_internal(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if !v.is_heap() || is_visible(v) {
        return Ok(v);
    }
    let os = ctx.c().object_space;
    let Some(k) = crate::stdlib::const_of(ctx, os, "InternalObjectWrapper") else {
        return Err(ctx.runtime_error("ObjectSpace::InternalObjectWrapper is not defined"));
    };
    Ok(object::new_data(ctx, k, Box::new(InternalObject(v))))
}

/// A new Array of `objs`, internal ones wrapped.
fn wrapped_array(ctx: &mut Ctx, objs: Vec<Value>) -> Result<Value> {
    // The Array holds the bare objects while their wrappers are allocated.
    let ary = array::from_vec(ctx, objs);
    for i in 0..array::len(ary) {
        let v = array::get(ary, i);
        if v.is_heap() && !is_visible(v) {
            let w = wrap_internal(ctx, v)?;
            array::set(ary, i, w);
        }
    }
    Ok(ary)
}

/// `ObjectSpace.reachable_objects_from(obj)`: nil for immediates.
fn os_reachable_objects_from(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = args.pos[0];
    if !obj.is_heap() {
        return Ok(Value::NIL);
    }
    let refs = references(ctx, obj);
    wrapped_array(ctx, refs)
}

/// `ObjectSpace.reachable_objects_from_root`: `{category => [objects]}`.
fn os_reachable_objects_from_root(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let roots = root_references(ctx);
    // Every root is on a root list or the stack while the Arrays are built.
    let h = hash::new(ctx);
    for (name, objs) in roots {
        let k = string::new_utf8(ctx, name);
        let v = wrapped_array(ctx, objs)?;
        hash::aset(ctx, h, k, v)?;
    }
    Ok(h)
}

fn internal(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    match crate::object::data_ref::<InternalObject>(recv) {
        Some(w) => Ok(w.0),
        None => Err(ctx.type_error("wrong argument type (expected ObjectSpace::InternalObjectWrapper)")),
    }
}

fn iow_type(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = internal(ctx, recv)?;
    let name = type_name(ctx, v);
    Ok(Value::symbol(ctx.intern(name)))
}

fn iow_internal_object_id(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = internal(ctx, recv)?;
    Ok(object::object_id(ctx, v))
}

fn iow_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = internal(ctx, recv)?;
    let s = format!("#<InternalObject:0x{:016x} {}>", v.raw(), type_name(ctx, v));
    Ok(string::new_utf8(ctx, &s))
}

/// `ObjectSpace.internal_class_of(obj)`: the class in the object's header (a singleton
/// class when it has one).
fn os_internal_class_of(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut obj = args.pos[0];
    if let Some(w) = crate::object::data_ref::<InternalObject>(obj) {
        obj = w.0;
    }
    if !obj.is_heap() {
        return Ok(crate::interp::class_of(ctx, obj));
    }
    let k = basic(obj).klass;
    if k.is_nil() {
        return Ok(Value::NIL);
    }
    wrap_internal(ctx, k)
}

/// `ObjectSpace.internal_super_of(klass)`: the superclass link of a class or module.
fn os_internal_super_of(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut k = args.pos[0];
    if let Some(w) = crate::object::data_ref::<InternalObject>(k) {
        k = w.0;
    }
    if !module::is_class_or_module(k) {
        return Err(ctx.arg_error("class or module is expected"));
    }
    let sup = body(k).superclass;
    if sup.is_nil() {
        return Ok(Value::NIL);
    }
    wrap_internal(ctx, sup)
}

// ---- sizes and counts ----

fn os_memsize_of(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::fixnum(memsize_of(ctx, args.pos[0]) as i64))
}

/// Every object of the heap (internal ones included), copied out under the heap lock.
fn all_objects(ctx: &Ctx) -> Vec<Value> {
    let mut found = Vec::new();
    ctx.vm().heap.lock().for_each_object(&mut |p: *mut RBasic| found.push(Value::from_ptr(p)));
    found
}

/// `ObjectSpace.memsize_of_all(klass = nil)`: of every object, or of the kinds of `klass`.
fn os_memsize_of_all(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let of = args.pos.first().copied().unwrap_or(Value::NIL);
    if !of.is_nil() && !module::is_class_or_module(of) {
        return Err(ctx.type_error("class or module required"));
    }
    let mut total = 0usize;
    for v in all_objects(ctx) {
        if of.is_nil() || (is_visible(v) && object::is_a(ctx, v, of)) {
            total += memsize_of(ctx, v);
        }
    }
    Ok(Value::fixnum(total as i64))
}

/// The Hash a counting method fills: the caller's (values zeroed first) or a new one.
fn result_hash(ctx: &mut Ctx, args: &Args) -> Result<Value> {
    match args.pos.first() {
        None => Ok(hash::new(ctx)),
        Some(&h) if hash::is_hash(h) => {
            ctx.check_frozen(h)?;
            for (k, _) in hash::pairs(h) {
                hash::aset(ctx, h, k, Value::fixnum(0))?;
            }
            Ok(h)
        }
        Some(_) => Err(ctx.type_error("non-hash given")),
    }
}

fn put_sym(ctx: &mut Ctx, h: Value, name: &str, n: usize) -> Result<()> {
    let k = Value::symbol(ctx.intern(name));
    hash::aset(ctx, h, k, Value::fixnum(n as i64))
}

/// `ObjectSpace.count_objects_size(result = {})`: bytes by `T_*` type, and `:TOTAL`.
fn os_count_objects_size(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let h = result_hash(ctx, args)?;
    let mut sizes = [0usize; TYPE_ORDER.len()];
    let mut total = 0;
    for v in all_objects(ctx) {
        let n = memsize_of(ctx, v);
        total += n;
        if let Some(i) = TYPE_ORDER.iter().position(|&t| t == type_name(ctx, v)) {
            sizes[i] += n;
        }
    }
    for (i, &name) in TYPE_ORDER.iter().enumerate() {
        if sizes[i] > 0 {
            put_sym(ctx, h, name, sizes[i])?;
        }
    }
    put_sym(ctx, h, "TOTAL", total)?;
    Ok(h)
}

/// `ObjectSpace.count_tdata_objects(result = {})`: objects with a Rust payload (CRuby's
/// `T_DATA`), by class.
fn os_count_tdata_objects(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let h = result_hash(ctx, args)?;
    let mut counts: Vec<(Value, usize)> = Vec::new();
    for v in all_objects(ctx) {
        if !is_visible(v) || type_name(ctx, v) != "T_DATA" {
            continue;
        }
        let k = module::real_class(basic(v).klass);
        match counts.iter_mut().find(|(c, _)| *c == k) {
            Some(e) => e.1 += 1,
            None => counts.push((k, 1)),
        }
    }
    for (k, n) in counts {
        hash::aset(ctx, h, k, Value::fixnum(n as i64))?;
    }
    Ok(h)
}

/// `ObjectSpace.count_imemo_objects(result = {})`: Carmine's internal objects by kind
/// (`:imemo_env` heap environments, `:imemo_iseq` instruction sequences, `:imemo_cref`
/// lexical scopes).
fn os_count_imemo_objects(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let h = result_hash(ctx, args)?;
    let mut counts = [0usize; 3];
    for v in all_objects(ctx) {
        match basic(v).obj_type() {
            ObjType::Env => counts[0] += 1,
            ObjType::Iseq => counts[1] += 1,
            ObjType::Cref => counts[2] += 1,
            _ => {}
        }
    }
    for (name, n) in [("imemo_env", counts[0]), ("imemo_iseq", counts[1]), ("imemo_cref", counts[2])] {
        if n > 0 {
            put_sym(ctx, h, name, n)?;
        }
    }
    Ok(h)
}

/// `ObjectSpace.count_nodes(result = {})`: syntax tree nodes alive in the heap. Carmine
/// compiles Prism's tree to instruction sequences and drops it, so there are none.
fn os_count_nodes(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    result_hash(ctx, args)
}

// ---- allocation tracing ----

fn trace_start(ctx: &mut Ctx, keep_freed: bool) {
    {
        let mut st = ctx.vm().alloc_trace.lock();
        st.depth += 1;
        st.keep_freed |= keep_freed;
    }
    ctx.vm().alloc_trace.on.store(true, std::sync::atomic::Ordering::Relaxed);
    ctx.set_trace_alloc(true);
}

fn trace_stop(ctx: &mut Ctx) {
    let off = {
        let mut st = ctx.vm().alloc_trace.lock();
        st.depth = st.depth.saturating_sub(1);
        st.depth == 0
    };
    if off {
        ctx.vm().alloc_trace.on.store(false, std::sync::atomic::Ordering::Relaxed);
        ctx.set_trace_alloc(false);
    }
}

/// `ObjectSpace.trace_object_allocations { }`: records allocation sites while the block runs.
fn os_trace_object_allocations(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        let c = ctx.c().local_jump_error;
        return Err(ctx.raise(c, "no block given (yield)"));
    };
    trace_start(ctx, false);
    let r = ctx.yield_block(&b, &[]);
    trace_stop(ctx);
    r
}

fn os_trace_object_allocations_start(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    trace_start(ctx, false);
    Ok(Value::NIL)
}

/// `trace_object_allocations_debug_start`: tracing that also keeps the sites of objects
/// that have been freed (until their slot is reused by a traced allocation).
fn os_trace_object_allocations_debug_start(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    trace_start(ctx, true);
    Ok(Value::NIL)
}

fn os_trace_object_allocations_stop(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    trace_stop(ctx);
    Ok(Value::NIL)
}

fn os_trace_object_allocations_clear(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    ctx.vm().alloc_trace.lock().sites.clear();
    Ok(Value::NIL)
}

/// The recorded allocation site of `obj`, if any.
pub(crate) fn site_of(ctx: &Ctx, obj: Value) -> Option<crate::heap::alloc_trace::AllocSite> {
    if !obj.is_heap() {
        return None;
    }
    ctx.vm().alloc_trace.lock().sites.get(&(obj.raw() as usize)).cloned()
}

fn os_allocation_sourcefile(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(match site_of(ctx, args.pos[0]) {
        Some(s) => string::new_utf8(ctx, &s.path),
        None => Value::NIL,
    })
}

fn os_allocation_sourceline(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(site_of(ctx, args.pos[0]).map_or(Value::NIL, |s| Value::fixnum(s.line as i64)))
}

fn os_allocation_class_path(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(match site_of(ctx, args.pos[0]).and_then(|s| s.class_path) {
        Some(p) => string::new_utf8(ctx, &p),
        None => Value::NIL,
    })
}

fn os_allocation_method_id(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(site_of(ctx, args.pos[0]).and_then(|s| s.method_id).map_or(Value::NIL, Value::symbol))
}

fn os_allocation_generation(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(site_of(ctx, args.pos[0]).map_or(Value::NIL, |s| Value::fixnum(s.generation as i64)))
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let os = ctx.c().object_space;
    crate::methods!(ctx, os, [
        ("memsize_of", os_memsize_of, [1], Unsafe, ModuleFunction),
        ("memsize_of_all", os_memsize_of_all, [0..=1], Unsafe, ModuleFunction),
        ("count_objects_size", os_count_objects_size, [0..=1], Unsafe, ModuleFunction),
        ("count_tdata_objects", os_count_tdata_objects, [0..=1], Unsafe, ModuleFunction),
        ("count_imemo_objects", os_count_imemo_objects, [0..=1], Unsafe, ModuleFunction),
        ("count_nodes", os_count_nodes, [0..=1], Unsafe, ModuleFunction),
        ("reachable_objects_from", os_reachable_objects_from, [1], Unsafe, ModuleFunction),
        ("reachable_objects_from_root", os_reachable_objects_from_root, [0], Unsafe, ModuleFunction),
        ("internal_class_of", os_internal_class_of, [1], Unsafe, ModuleFunction),
        ("internal_super_of", os_internal_super_of, [1], Unsafe, ModuleFunction),
        ("trace_object_allocations", os_trace_object_allocations, [0], Unsafe, ModuleFunction),
        ("trace_object_allocations_start", os_trace_object_allocations_start, [0], Unsafe, ModuleFunction),
        ("trace_object_allocations_stop", os_trace_object_allocations_stop, [0], Unsafe, ModuleFunction),
        ("trace_object_allocations_clear", os_trace_object_allocations_clear, [0], Unsafe, ModuleFunction),
        ("trace_object_allocations_debug_start", os_trace_object_allocations_debug_start, [0], Unsafe, ModuleFunction),
        ("allocation_sourcefile", os_allocation_sourcefile, [1], Unsafe, ModuleFunction),
        ("allocation_sourceline", os_allocation_sourceline, [1], Unsafe, ModuleFunction),
        ("allocation_class_path", os_allocation_class_path, [1], Unsafe, ModuleFunction),
        ("allocation_method_id", os_allocation_method_id, [1], Unsafe, ModuleFunction),
        ("allocation_generation", os_allocation_generation, [1], Unsafe, ModuleFunction),
        ("_dump", dump::os_dump, [2], Unsafe, ModuleFunction),
        ("_dump_all", dump::os_dump_all, [1..=4], Unsafe, ModuleFunction),
    ]);
    let object = ctx.c().object;
    let iow = crate::stdlib::class_under(ctx, os, "InternalObjectWrapper", object);
    body(iow).alloc = module::AllocKind::None;
    crate::methods!(ctx, iow, [
        ("type", iow_type, [0], Safe),
        ("internal_object_id", iow_internal_object_id, [0], Unsafe),
        ("inspect", iow_inspect, [0], Unsafe),
    ]);
    Ok(())
}
