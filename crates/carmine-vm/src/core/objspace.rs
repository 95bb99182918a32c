//! The ObjectSpace module: walking the heap (`each_object`, `count_objects`), finalizers
//! and object ids. WeakMap and WeakKeyMap are in `weak_map.rs` and `weak_key_map.rs`; the
//! collector's side of finalizers in `crate::weak`.
//!
//! Invariants:
//! - Heap walks copy the objects they find into a Ruby Array before running any Ruby code:
//!   a collection during the walk's callbacks cannot free what is still to be yielded.
//! - Internal objects (environments, instruction sequences, crefs, objects without a
//!   class) and metaclasses nobody asked for are never handed to Ruby code.

use crate::core::module::{self, body, ClassKind};
use crate::core::{array, bignum, hash, integer, object};
use crate::heap::stats::GcReason;
use crate::interp::Args;
use crate::object::{basic, ObjType, RBasic};
use crate::thread::Ctx;
use crate::value::Value;
use crate::weak::Finalizer;
use crate::Result;

/// Whether a heap object may be shown to Ruby code.
pub(crate) fn is_visible(v: Value) -> bool {
    let b = basic(v);
    if b.klass.is_nil() {
        return false;
    }
    match b.obj_type() {
        ObjType::Free | ObjType::Env | ObjType::Iseq | ObjType::Cref => false,
        ObjType::Class => !is_hidden_metaclass(v),
        _ => true,
    }
}

/// A metaclass (the singleton class of a class or module) that has no metaclass of its
/// own is an implementation detail, as CRuby's hidden metaclasses are.
fn is_hidden_metaclass(c: Value) -> bool {
    let b = body(c);
    if b.kind != ClassKind::Singleton || !module::is_class_or_module(b.attached) {
        return false;
    }
    let k = basic(c).klass;
    !(module::is_class_or_module(k) && body(k).kind == ClassKind::Singleton && body(k).attached == c)
}

/// The objects of the heap that Ruby code may see and that are kinds of `of` (any when
/// nil), in a new Array.
fn visible_objects(ctx: &mut Ctx, of: Value) -> Value {
    let mut found: Vec<Value> = Vec::new();
    ctx.vm().heap.lock().for_each_object(&mut |p: *mut RBasic| {
        let v = Value::from_ptr(p);
        if is_visible(v) {
            found.push(v);
        }
    });
    // Nothing allocates between the walk and `from_vec`, which keeps its elements alive
    // while it allocates the Array.
    if !of.is_nil() {
        found.retain(|&v| object::is_a(ctx, v, of));
    }
    array::from_vec(ctx, found)
}

fn os_each_object(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let of = args.pos.first().copied().unwrap_or(Value::NIL);
    if !of.is_nil() && !module::is_class_or_module(of) {
        return Err(ctx.type_error("class or module required"));
    }
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each_object", args.pos, None);
    };
    let objs = visible_objects(ctx, of);
    let n = array::len(objs);
    for i in 0..n {
        ctx.yield1(&b, array::get(objs, i))?;
    }
    Ok(Value::fixnum(n as i64))
}

/// The `T_*` name CRuby would count a heap object under.
pub(crate) fn type_name(ctx: &Ctx, v: Value) -> &'static str {
    let b = basic(v);
    match b.obj_type() {
        ObjType::Free => "FREE",
        ObjType::Object => "T_OBJECT",
        ObjType::Class if body(v).kind == ClassKind::Module => "T_MODULE",
        ObjType::Class => "T_CLASS",
        ObjType::String => "T_STRING",
        ObjType::Array => "T_ARRAY",
        ObjType::Hash => "T_HASH",
        ObjType::Float => "T_FLOAT",
        ObjType::Bignum => "T_BIGNUM",
        ObjType::Range => "T_STRUCT",
        ObjType::Proc => "T_DATA",
        ObjType::Env | ObjType::Iseq | ObjType::Cref => "T_IMEMO",
        ObjType::Data => {
            let c = ctx.c();
            let k = module::real_class(b.klass);
            if k.is_nil() {
                return "T_DATA";
            }
            if k == c.regexp {
                "T_REGEXP"
            } else if k == c.match_data {
                "T_MATCH"
            } else if k == c.rational {
                "T_RATIONAL"
            } else if k == c.complex {
                "T_COMPLEX"
            } else if module::includes_module(ctx, k, c.io) {
                "T_FILE"
            } else {
                "T_DATA"
            }
        }
    }
}

pub(crate) const TYPE_ORDER: [&str; 17] = [
    "T_OBJECT", "T_CLASS", "T_MODULE", "T_FLOAT", "T_STRING", "T_REGEXP", "T_ARRAY", "T_HASH", "T_STRUCT", "T_BIGNUM", "T_FILE", "T_DATA", "T_MATCH",
    "T_COMPLEX", "T_RATIONAL", "T_SYMBOL", "T_IMEMO",
];

/// `ObjectSpace.count_objects(result_hash = {})`: slots by type, with `:TOTAL` and `:FREE`.
fn os_count_objects(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let target = match args.pos.first() {
        None => hash::new(ctx),
        Some(&h) if hash::is_hash(h) => h,
        Some(_) => return Err(ctx.type_error("non-hash given")),
    };
    let mut counts = [0i64; TYPE_ORDER.len()];
    let total = {
        let heap = ctx.vm().heap.lock();
        let ctx_ref: &Ctx = ctx;
        heap.for_each_object(&mut |p| {
            let name = type_name(ctx_ref, Value::from_ptr(p));
            if let Some(i) = TYPE_ORDER.iter().position(|&n| n == name) {
                counts[i] += 1;
            }
        });
        heap.total_slots() as i64
    };
    let live: i64 = counts.iter().sum();
    // Keys the caller's Hash had are zeroed first, as CRuby does.
    for (k, _) in hash::pairs(target) {
        hash::aset(ctx, target, k, Value::fixnum(0))?;
    }
    let put = |ctx: &mut Ctx, name: &str, n: i64| -> Result<()> {
        let k = Value::symbol(ctx.intern(name));
        hash::aset(ctx, target, k, Value::fixnum(n))
    };
    put(ctx, "TOTAL", total)?;
    put(ctx, "FREE", total - live)?;
    for (i, &name) in TYPE_ORDER.iter().enumerate() {
        if counts[i] > 0 {
            put(ctx, name, counts[i])?;
        }
    }
    Ok(target)
}

fn os_garbage_collect(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::gc::collect_for(ctx, GcReason::Method);
    // As CRuby's GC.start, run the finalizers of what was freed before returning.
    crate::weak::run_pending(ctx);
    Ok(Value::NIL)
}

/// Raises unless a finalizer may be attached to `obj`: immediates cannot have one, frozen
/// objects cannot change theirs.
fn check_finalizable(ctx: &mut Ctx, obj: Value) -> Result<()> {
    if !obj.is_heap() {
        let cname = object::class_name_of(ctx, obj);
        return Err(ctx.arg_error(&format!("cannot define finalizer for {cname}")));
    }
    ctx.check_frozen(obj)
}

/// The receiver a callable runs with (a Proc's self, a Method's receiver).
fn callable_receiver(v: Value) -> Value {
    if !v.is_heap() {
        return Value::UNDEF;
    }
    if crate::core::proc::is_proc(v) {
        return crate::core::proc::captured(v).map_or(Value::UNDEF, |c| c.self_);
    }
    if let Some(m) = crate::object::data_ref::<crate::core::method::MethodObj>(v) {
        return m.recv;
    }
    Value::UNDEF
}

/// `ObjectSpace.define_finalizer(obj, callable = proc)`: returns `[0, callable]` (the
/// callable already defined for `obj` when an equal one is).
fn os_define_finalizer(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = args.pos[0];
    let callable = match args.pos.get(1) {
        Some(&c) => c,
        None => match args.block {
            Some(b) => crate::core::proc::from_block(ctx, &b)?,
            None => return Err(ctx.arg_error("tried to create Proc object without a block")),
        },
    };
    check_finalizable(ctx, obj)?;
    if !ctx.respond_to(callable, crate::symbol::sym::CALL, true) {
        let cname = object::class_name_of(ctx, callable);
        return Err(ctx.arg_error(&format!("wrong type argument {cname} (should be callable)")));
    }
    if callable_receiver(callable) == obj {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: finalizer references object to be finalized\n"));
    }
    let addr = obj.raw() as usize;
    let existing: Vec<Value> = ctx.vm().objspace.finalizers.borrow().get(&addr).map(|f| f.callables.clone()).unwrap_or_default();
    let existing = array::from_vec(ctx, existing);
    let mut chosen = None;
    for i in 0..array::len(existing) {
        let c = array::get(existing, i);
        if object::equal(ctx, c, callable)? {
            chosen = Some(c);
            break;
        }
    }
    let chosen = match chosen {
        Some(c) => c,
        None => {
            let id = object::object_id(ctx, obj);
            let os = &ctx.vm().objspace;
            let mut fins = os.finalizers.borrow_mut();
            fins.entry(addr).or_insert_with(|| Finalizer { id, callables: Vec::new() }).callables.push(callable);
            callable
        }
    };
    Ok(array::from_slice(ctx, &[Value::fixnum(0), chosen]))
}

fn os_undefine_finalizer(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = args.pos[0];
    if obj.is_heap() {
        ctx.check_frozen(obj)?;
        ctx.vm().objspace.finalizers.borrow_mut().remove(&(obj.raw() as usize));
    }
    Ok(obj)
}

/// `ObjectSpace._id2ref(id)`: immediates decode from their id; heap objects are found
/// among those whose id was asked for.
fn os_id2ref(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let id = integer::to_integer_arg(ctx, args.pos[0])?;
    let raw: Option<u64> = match id.as_fixnum() {
        Some(i) => Some(i as u64),
        None => num_traits::ToPrimitive::to_i64(bignum::get(id)).map(|i| i as u64).or_else(|| num_traits::ToPrimitive::to_u64(bignum::get(id))),
    };
    let not_id = |ctx: &mut Ctx| {
        let s = integer::to_s_base(id, 10);
        ctx.range_error(&format!("\"{s}\" is not id value"))
    };
    let Some(raw) = raw else { return Err(not_id(ctx)) };
    let v = Value::from_raw(raw);
    if !v.is_heap() {
        let valid = v.is_fixnum() || v.is_flonum() || v == Value::NIL || v == Value::TRUE || v == Value::FALSE || v.as_symbol().is_some_and(|s| (s.0 as usize) < ctx.vm().symbols.len());
        return if valid { Ok(v) } else { Err(not_id(ctx)) };
    }
    // A dead object keeps its id until its page is swept.
    crate::gc::finish_sweep(ctx.vm());
    let found = ctx.vm().object_ids.borrow().iter().find(|(_, &i)| i == raw).map(|(&a, _)| a);
    if let Some(addr) = found {
        let obj = Value::from_raw(addr as u64);
        if is_visible(obj) {
            return Ok(obj);
        }
        return Err(not_id(ctx));
    }
    if raw % 8 == 0 && raw < ctx.vm().object_id_seq.load(std::sync::atomic::Ordering::Relaxed) {
        let s = integer::to_s_base(id, 10);
        return Err(ctx.range_error(&format!("\"{s}\" is recycled object")));
    }
    Err(not_id(ctx))
}

pub fn init(ctx: &mut Ctx) {
    let os = ctx.c().object_space;
    crate::methods!(ctx, os, [
        ("count_objects", os_count_objects, [0..=1], Unsafe, ModuleFunction),
        ("garbage_collect", os_garbage_collect, [0], Unsafe, ModuleFunction, Kw),
        ("each_object", os_each_object, [0..=1], Unsafe, ModuleFunction),
        ("define_finalizer", os_define_finalizer, [1..=2], Unsafe, ModuleFunction),
        ("undefine_finalizer", os_undefine_finalizer, [1], Unsafe, ModuleFunction),
        ("_id2ref", os_id2ref, [1], Unsafe, ModuleFunction),
    ]);
}
