//! BasicObject and Object: allocation, instance variables, freezing, singleton classes,
//! identity, and the methods every object has.
//!
//! Invariants:
//! - Immediates (nil, true, false, Integer, Float, Symbol) are always frozen and have no
//!   instance variables.
//! - A plain `RObject` keeps ivars in its slots (layout from its real class); every other
//!   heap object keeps them in the VM's generic ivar table, flagged with `FL_EXIVAR`.

use crate::core::module::{self, body, AllocKind, ClassBody, ClassKind, RClass};
use crate::core::{array, hash, string};
use crate::interp::{class_of, Args};
use crate::heap::page::SizeClass;
use crate::object::{basic, DataObj, ObjType, RData, RObject, FL_EXIVAR, FL_FROZEN, OBJECT_WORDS, SMALL_OBJECT_IVARS, SMALL_OBJECT_WORDS};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

// ---- allocation ----

/// A plain object of `klass`: in a 40-byte slot when instances of its class have had one
/// to `SMALL_OBJECT_IVARS` instance variables (most small classes), else a 64-byte one. A
/// class none of whose instances has set a variable yet (its first instance, often one
/// that lives long and is used much) gets 64 bytes: a 40-byte object that outgrows its
/// slot reaches its later variables through the malloc'd block.
pub fn new_object(ctx: &mut Ctx, klass: Value) -> Value {
    let real = module::real_class(klass);
    let small = module::is_class_or_module(real) && (1..=SMALL_OBJECT_IVARS).contains(&body(real).iv_names.len());
    let (class, words) = if small { (SizeClass::Small, SMALL_OBJECT_WORDS) } else { (SizeClass::Large, OBJECT_WORDS) };
    let p = ctx.alloc_slot_in(class, ObjType::Object, klass) as *mut RObject;
    // SAFETY: fresh Object slot of `words` words; initialised before the next allocation.
    unsafe { RObject::init(p, words) };
    Value::from_ptr(p)
}

pub fn new_data(ctx: &mut Ctx, klass: Value, data: Box<dyn DataObj>) -> Value {
    let type_id = <dyn std::any::Any as std::any::Any>::type_id(data.as_any());
    let outer = ctx.pending_data.replace(&*data as *const dyn DataObj);
    let p = ctx.alloc_slot(ObjType::Data, klass) as *mut RData;
    ctx.pending_data = outer;
    // SAFETY: fresh Data slot.
    unsafe {
        std::ptr::write(&mut (*p).data, data);
        std::ptr::write(&mut (*p).type_id, type_id);
    }
    Value::from_ptr(p)
}

/// A new class object (without metaclass; see `module_methods::new_class`).
pub fn new_class_object(ctx: &mut Ctx, klass: Value, b: ClassBody) -> Value {
    let is_module = b.kind == ClassKind::Module;
    let boxed = Box::new(b);
    let p = ctx.alloc_slot(ObjType::Class, klass) as *mut RClass;
    // SAFETY: fresh Class slot.
    unsafe { std::ptr::write(&mut (*p).body, boxed) };
    let v = Value::from_ptr(p);
    if is_module {
        module::set_module_flag(v);
    }
    v
}

/// `Class#allocate`: an uninitialised instance of `klass`.
pub fn allocate(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    if body(klass).uninitialized {
        return Err(ctx.type_error("can't instantiate uninitialized class"));
    }
    let kind = body(klass).alloc;
    Ok(match kind {
        AllocKind::Object => new_object(ctx, klass),
        AllocKind::String => {
            let s = string::new_utf8(ctx, "");
            basic(s).klass = klass;
            s
        }
        AllocKind::Array => {
            let a = array::new(ctx);
            basic(a).klass = klass;
            a
        }
        AllocKind::Hash => {
            let h = hash::new(ctx);
            basic(h).klass = klass;
            h
        }
        AllocKind::Range => crate::core::range::allocate(ctx, klass),
        AllocKind::Data(f) => f(ctx, klass)?,
        AllocKind::Class => crate::core::module_methods::new_uninitialized_class(ctx),
        AllocKind::Module => crate::core::module_methods::new_module(ctx, None),
        AllocKind::Proc | AllocKind::None => {
            let name = crate::core::module_methods::class_path(ctx, klass);
            return Err(ctx.type_error(&format!("allocator undefined for {name}")));
        }
    })
}

// ---- identity, classes ----

#[inline]
pub fn is_frozen(v: Value) -> bool {
    !v.is_heap() || basic(v).has(FL_FROZEN)
}

pub fn freeze(v: Value) -> Value {
    if v.is_heap() {
        basic(v).flags |= FL_FROZEN;
        // The object's singleton class (a class's metaclass included) freezes with it.
        let k = basic(v).klass;
        if k.is_heap() && module::is_class_or_module(k) && body(k).kind == ClassKind::Singleton && body(k).attached == v {
            basic(k).flags |= FL_FROZEN;
        }
    }
    v
}

pub fn real_class_of(ctx: &Ctx, v: Value) -> Value {
    module::real_class(class_of(ctx, v))
}

pub fn class_name_of(ctx: &mut Ctx, v: Value) -> String {
    let c = real_class_of(ctx, v);
    crate::core::module_methods::class_path(ctx, c)
}

pub fn is_a(ctx: &Ctx, v: Value, klass: Value) -> bool {
    let c = class_of(ctx, v);
    module::includes_module(ctx, c, klass) || is_a_virtual_metaclass(v, c, klass)
}

/// Metaclasses are made on demand: a class that has none yet is still an instance of
/// its superclasses' metaclasses (`Class.new(a).is_a?(a.singleton_class)`).
fn is_a_virtual_metaclass(v: Value, c: Value, klass: Value) -> bool {
    if !module::is_class_or_module(klass) || body(klass).kind != ClassKind::Singleton || !module::is_class_or_module(v) {
        return false;
    }
    if module::is_class_or_module(c) && body(c).kind == ClassKind::Singleton {
        return false;
    }
    let target = body(klass).attached;
    let mut k = v;
    while module::is_class_or_module(k) && body(k).kind == ClassKind::Class {
        if k == target {
            return true;
        }
        k = body(k).superclass;
    }
    false
}

/// The singleton class of `v`, creating it if needed.
pub fn singleton_class(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if !v.is_heap() {
        let c = ctx.c();
        return match v {
            Value::NIL => Ok(c.nil),
            Value::TRUE => Ok(c.true_),
            Value::FALSE => Ok(c.false_),
            _ => Err(ctx.type_error("can't define singleton")),
        };
    }
    let klass = basic(v).klass;
    if module::is_class_or_module(klass) && body(klass).kind == ClassKind::Singleton && body(klass).attached == v {
        return Ok(klass);
    }
    if string::is_chilled(v) {
        // Making a singleton class counts as mutating a chilled String.
        string::chilled_mutation(ctx, v)?;
    }
    if matches!(basic(v).obj_type(), ObjType::Float | ObjType::Bignum) {
        return Err(ctx.type_error("can't define singleton"));
    }
    let superclass = if module::is_class_or_module(v) && body(v).kind != ClassKind::Module {
        let sup = body(v).superclass;
        if body(v).kind == ClassKind::Singleton {
            // The metaclass of a metaclass inherits from the superclass's metaclass.
            if sup.is_nil() {
                ctx.c().class
            } else {
                singleton_class(ctx, sup)?
            }
        } else if sup.is_nil() {
            ctx.c().class
        } else {
            singleton_class(ctx, sup)?
        }
    } else {
        klass
    };
    let mut b = ClassBody::new(ClassKind::Singleton, superclass, AllocKind::None);
    b.attached = v;
    // An object's singleton class is itself an instance of the metaclass of
    // the object's class, so `obj.singleton_class.a_class_method` works.
    let meta_klass = if module::is_class_or_module(v) {
        ctx.c().class
    } else {
        let real = module::real_class(klass);
        let meta = basic(real).klass;
        if module::is_class_or_module(meta) && body(meta).kind == ClassKind::Singleton && body(meta).attached == real {
            meta
        } else {
            ctx.c().class
        }
    };
    let s = new_class_object(ctx, meta_klass, b);
    if is_frozen(v) {
        basic(s).flags |= FL_FROZEN;
    }
    basic(v).klass = s;
    crate::heap::write_barrier(v, s);
    ctx.vm().bump_method_epoch();
    Ok(s)
}

/// `#<Foo>`-style default `to_s`: `#<Foo:0x000055d5c5a1e2f8>`.
pub fn any_to_s(ctx: &mut Ctx, v: Value) -> Value {
    let name = class_name_of(ctx, v);
    let s = format!("#<{}:0x{:016x}>", name, v.raw());
    string::new_utf8(ctx, &s)
}

pub fn inspect(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let r = ctx.call(v, sym::INSPECT, &[])?;
    // rb_inspect: a non-String result goes through `to_s`, then `any_to_s` (never a panic
    // in the callers, which read the bytes).
    string::to_s(ctx, r)
}

pub fn inspect_string(ctx: &mut Ctx, v: Value) -> Result<String> {
    let s = inspect(ctx, v)?;
    Ok(string::to_rust_string_lossy(s))
}

/// How NoMethodError describes a receiver (CRuby 3.4): "an instance of Foo", "nil",
/// "class Foo", "module Bar", "main".
pub fn describe_for_error(ctx: &mut Ctx, v: Value) -> String {
    match v {
        Value::NIL => return "nil".into(),
        Value::TRUE => return "true".into(),
        Value::FALSE => return "false".into(),
        _ => {}
    }
    if v == ctx.vm().main_obj.get() {
        return "main".into();
    }
    if module::is_class_or_module(v) {
        let name = crate::core::module_methods::class_path(ctx, v);
        return if module::is_module(v) { format!("module {name}") } else { format!("class {name}") };
    }
    let name = class_name_of(ctx, v);
    format!("an instance of {name}")
}

/// The class name used in "no implicit conversion of X into Y".
pub fn type_name_for_error(ctx: &mut Ctx, v: Value) -> String {
    match v {
        Value::NIL => "nil".into(),
        Value::TRUE => "true".into(),
        Value::FALSE => "false".into(),
        _ => class_name_of(ctx, v),
    }
}

pub fn object_id(ctx: &mut Ctx, v: Value) -> Value {
    if !v.is_heap() {
        // An immediate's id is its bits, as in CRuby (`ObjectSpace._id2ref` decodes it).
        return crate::core::bignum::from_i128(ctx, v.raw() as i64 as i128);
    }
    let addr = v.raw() as usize;
    let vm = ctx.vm();
    let mut ids = vm.object_ids.borrow_mut();
    let id = *ids.entry(addr).or_insert_with(|| vm.object_id_seq.fetch_add(8, std::sync::atomic::Ordering::Relaxed));
    Value::fixnum(id as i64)
}

// ---- instance variables ----

pub fn ivar_get(ctx: &Ctx, obj: Value, name: SymId) -> Value {
    if !obj.is_heap() {
        return Value::NIL;
    }
    match basic(obj).obj_type() {
        ObjType::Object => {
            let real = module::real_class(basic(obj).klass);
            match body(real).iv_index.get(&name) {
                Some(&i) => {
                    // SAFETY: type checked.
                    let v = unsafe { (*obj.as_ptr::<RObject>()).ivar(i as usize) };
                    if v.is_undef() {
                        Value::NIL
                    } else {
                        v
                    }
                }
                None => Value::NIL,
            }
        }
        ObjType::Class => body(obj).ivars.iter().find(|(n, _)| *n == name).map_or(Value::NIL, |(_, v)| *v),
        _ => {
            if !basic(obj).has(FL_EXIVAR) {
                return Value::NIL;
            }
            let t = ctx.vm().generic_ivars.borrow();
            t.get(&(obj.raw() as usize)).and_then(|l| l.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)).unwrap_or(Value::NIL)
        }
    }
}

pub fn ivar_defined(ctx: &Ctx, obj: Value, name: SymId) -> bool {
    ivar_list(ctx, obj).iter().any(|(n, _)| *n == name)
}

/// Sets an ivar, raising FrozenError on frozen objects.
pub fn ivar_set(ctx: &mut Ctx, obj: Value, name: SymId, v: Value) -> Result<()> {
    ctx.check_frozen(obj)?;
    ivar_set_raw(ctx, obj, name, v);
    Ok(())
}

/// Sets an ivar without the frozen check (internal state such as exception fields).
pub fn ivar_set_raw(ctx: &mut Ctx, obj: Value, name: SymId, v: Value) {
    if !obj.is_heap() {
        return;
    }
    match basic(obj).obj_type() {
        ObjType::Object => {
            let real = module::real_class(basic(obj).klass);
            let i = body(real).ivar_slot(name);
            // SAFETY: type checked.
            unsafe { (*obj.as_ptr::<RObject>()).set_ivar(i as usize, v) };
        }
        ObjType::Class => {
            let b = body(obj);
            match b.ivars.iter_mut().find(|(n, _)| *n == name) {
                Some(e) => e.1 = v,
                None => b.ivars.push((name, v)),
            }
        }
        _ => {
            let mut t = ctx.vm().generic_ivars.borrow_mut();
            let list = t.entry(obj.raw() as usize).or_default();
            match list.iter_mut().find(|(n, _)| *n == name) {
                Some(e) => e.1 = v,
                None => list.push((name, v)),
            }
            basic(obj).flags |= FL_EXIVAR;
        }
    }
}

/// The object's instance variables in definition order.
pub fn ivar_list(ctx: &Ctx, obj: Value) -> Vec<(SymId, Value)> {
    if !obj.is_heap() {
        return Vec::new();
    }
    match basic(obj).obj_type() {
        ObjType::Object => {
            let real = module::real_class(basic(obj).klass);
            let names = body(real).iv_names.clone();
            // SAFETY: type checked.
            let o = unsafe { &*obj.as_ptr::<RObject>() };
            names.iter().enumerate().filter_map(|(i, &n)| {
                let v = o.ivar(i);
                (!v.is_undef()).then_some((n, v))
            }).collect()
        }
        ObjType::Class => body(obj).ivars.clone(),
        _ => {
            if !basic(obj).has(FL_EXIVAR) {
                return Vec::new();
            }
            ctx.vm().generic_ivars.borrow().get(&(obj.raw() as usize)).cloned().unwrap_or_default()
        }
    }
}

/// Whether the object's instance variables are exactly `expected` (as `ivar_list` lists
/// them), without making the list for a plain object (checked on every isolated run).
pub fn ivars_are(ctx: &Ctx, obj: Value, expected: &[(SymId, Value)]) -> bool {
    if !obj.is_heap() || basic(obj).obj_type() != ObjType::Object {
        return ivar_list(ctx, obj) == expected;
    }
    let real = module::real_class(basic(obj).klass);
    // SAFETY: type checked.
    let o = unsafe { &*obj.as_ptr::<RObject>() };
    let mut want = expected.iter();
    for (i, &n) in body(real).iv_names.iter().enumerate() {
        let v = o.ivar(i);
        if !v.is_undef() && want.next() != Some(&(n, v)) {
            return false;
        }
    }
    want.next().is_none()
}

pub fn ivar_remove(ctx: &mut Ctx, obj: Value, name: SymId) -> Option<Value> {
    if !obj.is_heap() {
        return None;
    }
    match basic(obj).obj_type() {
        ObjType::Object => {
            let real = module::real_class(basic(obj).klass);
            let i = *body(real).iv_index.get(&name)?;
            // SAFETY: type checked.
            let o = unsafe { &mut *obj.as_ptr::<RObject>() };
            let v = o.ivar(i as usize);
            if v.is_undef() {
                return None;
            }
            o.set_ivar(i as usize, Value::UNDEF);
            Some(v)
        }
        ObjType::Class => {
            let b = body(obj);
            let pos = b.ivars.iter().position(|(n, _)| *n == name)?;
            Some(b.ivars.remove(pos).1)
        }
        _ => {
            let mut t = ctx.vm().generic_ivars.borrow_mut();
            let list = t.get_mut(&(obj.raw() as usize))?;
            let pos = list.iter().position(|(n, _)| *n == name)?;
            Some(list.remove(pos).1)
        }
    }
}

/// Copies instance variables from `src` to `dst` (for dup/clone).
pub fn copy_ivars(ctx: &mut Ctx, dst: Value, src: Value) {
    for (n, v) in ivar_list(ctx, src) {
        ivar_set_raw(ctx, dst, n, v);
    }
}

/// Validates an instance variable name given as Symbol/String (`@foo`).
pub fn ivar_name_arg(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    let id = crate::core::symbol::to_sym_id(ctx, v)?;
    let name = ctx.sym_name(id);
    let valid = name.len() >= 2 && name[0] == b'@' && name[1] != b'@' && !name[1].is_ascii_digit();
    if !valid {
        let s = String::from_utf8_lossy(&name).into_owned();
        return Err(ctx.name_error(&format!("'{s}' is not allowed as an instance variable name"), id, Value::NIL));
    }
    Ok(id)
}

// ---- equality and hashing used by core collections ----

/// `a == b` with fast paths.
pub fn equal(ctx: &mut Ctx, a: Value, b: Value) -> Result<bool> {
    if a == b {
        return Ok(true);
    }
    if let Some(r) = crate::interp::ops::fast_eq(ctx, a, b) {
        return Ok(r);
    }
    Ok(ctx.call(a, sym::EQ, &[b])?.truthy())
}

/// `a.eql?(b)` with fast paths.
pub fn eql(ctx: &mut Ctx, a: Value, b: Value) -> Result<bool> {
    match fast_eql(a, b) {
        Some(r) => Ok(r),
        None => Ok(ctx.call(a, sym::EQL, &[b])?.truthy()),
    }
}

/// `a.eql?(b)` when it is decided without calling Ruby code.
#[inline]
pub fn fast_eql(a: Value, b: Value) -> Option<bool> {
    if a == b {
        return Some(true);
    }
    if a.is_fixnum() || b.is_fixnum() || a.is_symbol() || b.is_symbol() || !a.is_heap() && !b.is_heap() {
        if a.is_flonum() && b.is_flonum() {
            return Some(a.flonum_unchecked() == b.flonum_unchecked());
        }
        return Some(false);
    }
    if string::is_string(a) && string::is_string(b) {
        return Some(string::eql(a, b));
    }
    None
}

/// `v.hash` as a u64, with fast paths for core types.
pub fn hash_of(ctx: &mut Ctx, v: Value) -> Result<u64> {
    let seed = ctx.vm().hash_seed;
    if v.is_fixnum() || v.is_symbol() || !v.is_heap() {
        return Ok(crate::core::hash::immediate_hash(seed, v));
    }
    match basic(v).obj_type() {
        ObjType::String if string::is_plain_string(v) => return Ok(string::hash_bytes(seed, v)),
        ObjType::Float => return Ok(crate::core::float::hash_f64(seed, crate::core::float::get(v))),
        _ => {}
    }
    let h = ctx.call(v, sym::HASH, &[])?;
    if let Some(i) = h.as_fixnum() {
        return Ok(i as u64);
    }
    if crate::object::is_type(h, ObjType::Bignum) {
        return Ok(crate::core::bignum::low_u64(h));
    }
    Err(ctx.type_error("can't convert to Integer (hash must return Integer)"))
}

/// Identity hash (`Kernel#hash` default).
pub fn identity_hash(ctx: &Ctx, v: Value) -> u64 {
    crate::core::hash::mix(ctx.vm().hash_seed, v.raw())
}

// ---- recursion guard for inspect/==/hash on self-referencing structures ----

/// Runs `f` unless `(op, a, b)` is already being processed on this thread; then returns
/// `on_recursion`. Every recursive walk of nested data goes through here, so this is also
/// where such a walk meets the native stack limit (SystemStackError, as in CRuby).
pub fn guard_recursion<T>(ctx: &mut Ctx, op: SymId, a: Value, b: Value, on_recursion: T, f: impl FnOnce(&mut Ctx) -> Result<T>) -> Result<T> {
    if ctx.native_stack_exhausted() {
        return Err(crate::interp::call::stack_overflow(ctx));
    }
    if !ctx.stacks.recursion.insert((op, a, b)) {
        return Ok(on_recursion);
    }
    let r = f(ctx);
    ctx.stacks.recursion.remove(&(op, a, b));
    r
}

// ---- methods ----

pub(crate) fn basic_eq(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv == args.pos[0]))
}

fn basic_not(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(!recv.truthy()))
}

fn basic_neq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(!equal(ctx, recv, args.pos[0])?))
}

fn basic_initialize(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

/// Whether `f` is BasicObject's `initialize` (`Class#new` skips calling it).
pub fn is_default_initialize(f: crate::core::module::BuiltinFn) -> bool {
    std::ptr::fn_addr_eq(f, basic_initialize as crate::core::module::BuiltinFn)
}

fn basic_id(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(object_id(ctx, recv))
}

fn basic_method_missing(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(mid) = args.pos.first().and_then(|v| v.as_symbol()) else {
        return Err(ctx.arg_error("no method name given"));
    };
    let rest = &args.pos[1..];
    Err(crate::interp::call::no_method_error(ctx, recv, mid, rest, crate::interp::call::MissingKind::Normal))
}

/// The class `def`/`alias` define into under `instance_eval`/`instance_exec`:
/// the receiver's singleton class, or nil for an Integer, Symbol or Float,
/// which makes those definitions raise "can't define singleton".
fn instance_eval_definee(ctx: &mut Ctx, recv: Value) -> Option<Value> {
    Some(singleton_class(ctx, recv).unwrap_or(Value::NIL))
}

fn basic_instance_eval(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.block {
        Some(b) => {
            let single = instance_eval_definee(ctx, recv);
            if !args.pos.is_empty() {
                return Err(ctx.arity_error(args.pos.len(), 0, Some(0)));
            }
            ctx.yield_with_self(&b, recv, &[recv], single)
        }
        None => {
            if args.pos.is_empty() {
                return Err(ctx.arity_error(0, 1, Some(3)));
            }
            // Constants resolve in the receiver's class, or its singleton class if it has
            // one (CRuby's CLASS_OF); `def` makes a singleton method all the same.
            let scope = if recv.is_heap() { basic(recv).klass } else { real_class_of(ctx, recv) };
            let scope = crate::core::binding::EvalScope::Singleton(scope);
            crate::core::kernel::eval_string_with_self(ctx, args.pos[0], recv, scope, args.pos.get(1).copied(), args.pos.get(2).copied())
        }
    }
}

fn basic_instance_exec(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    let single = instance_eval_definee(ctx, recv);
    ctx.yield_with_self(&b, recv, args.pos, single)
}

/// Which `send` a builtin is: `Some(false)` for `send`/`__send__`, `Some(true)` for
/// `public_send`. The dispatch loop runs these calls in place (`ops::send_in_place`).
#[inline]
pub fn send_kind(f: crate::core::module::BuiltinFn) -> Option<bool> {
    if std::ptr::fn_addr_eq(f, basic_send as crate::core::module::BuiltinFn) {
        Some(false)
    } else if std::ptr::fn_addr_eq(f, obj_public_send as crate::core::module::BuiltinFn) {
        Some(true)
    } else {
        None
    }
}

fn basic_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(&name) = args.pos.first() else {
        return Err(ctx.arg_error("no method name given"));
    };
    let mid = crate::core::symbol::to_sym_id(ctx, name)?;
    if let Some(r) = crate::core::refinement::send_refined(ctx, recv, mid, args, false) {
        return r;
    }
    ctx.call_kw(recv, mid, &args.pos[1..], args.kw, args.block)
}

fn obj_public_send(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(&name) = args.pos.first() else {
        return Err(ctx.arg_error("no method name given"));
    };
    let mid = crate::core::symbol::to_sym_id(ctx, name)?;
    if let Some(r) = crate::core::refinement::send_refined(ctx, recv, mid, args, true) {
        return r;
    }
    // One lookup: a public method is invoked with the entry found here; protected ones are
    // refused whoever calls (CRuby's public_send); private or missing ones take the general
    // path (NoMethodError or method_missing).
    let klass = class_of(ctx, recv);
    match module::find_method(ctx, klass, mid) {
        Some(me) if me.visibility == module::Visibility::Public => crate::interp::call::invoke_from_rust(ctx, recv, &me, &args.pos[1..], args.kw, args.block),
        Some(me) if me.visibility == module::Visibility::Protected => Err(crate::interp::call::method_visibility_error(ctx, recv, mid, me.visibility)),
        _ => ctx.call_public(recv, mid, &args.pos[1..], args.kw, args.block),
    }
}

pub(crate) fn obj_class(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(real_class_of(ctx, recv))
}

fn obj_singleton_class(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    exposed_singleton_class(ctx, recv)
}

/// The singleton class as Ruby code sees it (`singleton_class`, `class << x`):
/// for a class, its singleton class gets its own singleton class too, so that
/// methods of the superclass's meta-metaclass are found (as in CRuby).
pub fn exposed_singleton_class(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let s = singleton_class(ctx, v)?;
    if module::is_class_or_module(v) && body(v).kind != ClassKind::Module {
        singleton_class(ctx, s)?;
    }
    Ok(s)
}

pub(crate) fn obj_frozen_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(is_frozen(recv)))
}

fn obj_freeze(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(freeze(recv))
}

pub(crate) fn obj_nil_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(recv.is_nil()))
}

fn obj_eqq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(equal(ctx, recv, args.pos[0])?))
}

/// `Object#=~`: nil. Ruby 3.2 removed it, but the standard library Carmine runs (CRuby
/// 3.1's: delegate.rb, pathname) still undefines it by name, so it stays.
fn obj_match(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

fn obj_nmatch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let r = ctx.call(recv, sym::MATCH, &[args.pos[0]])?;
    Ok(Value::bool(!r.truthy()))
}

fn obj_eql(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv == args.pos[0]))
}

fn obj_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum((identity_hash(ctx, recv) >> 2) as i64))
}

fn obj_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if recv == args.pos[0] || equal(ctx, recv, args.pos[0])? {
        Ok(Value::fixnum(0))
    } else {
        Ok(Value::NIL)
    }
}

fn check_module_arg(ctx: &mut Ctx, v: Value) -> Result<()> {
    if !module::is_class_or_module(v) {
        return Err(ctx.type_error("class or module required"));
    }
    Ok(())
}

pub(crate) fn obj_is_a(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_module_arg(ctx, args.pos[0])?;
    Ok(Value::bool(is_a(ctx, recv, args.pos[0])))
}

pub(crate) fn obj_instance_of(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    check_module_arg(ctx, args.pos[0])?;
    Ok(Value::bool(real_class_of(ctx, recv) == args.pos[0]))
}

fn obj_respond_to(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mid = crate::core::symbol::to_sym_id(ctx, args.pos[0])?;
    let include_private = args.pos.get(1).is_some_and(|v| v.truthy());
    // Protected methods, like private ones, count only with `include_all`; otherwise
    // `respond_to_missing?` decides, as for methods that do not exist.
    let klass = crate::interp::class_of(ctx, recv);
    if let Some(me) = module::find_method(ctx, klass, mid) {
        if !me.is_undefined() && (include_private || me.visibility == module::Visibility::Public) {
            return Ok(Value::TRUE);
        }
    }
    if crate::core::refinement::refined_method_for(ctx, recv, mid).is_some_and(|me| include_private || me.visibility == module::Visibility::Public) {
        return Ok(Value::TRUE);
    }
    // (Kernel#respond_to? bound to a BasicObject has no respond_to_missing? to ask.)
    let r = ctx.call_if_responds(recv, sym::RESPOND_TO_MISSING, &[Value::symbol(mid), Value::bool(include_private)])?;
    Ok(Value::bool(r.is_some_and(|r| r.truthy())))
}

fn obj_respond_to_missing(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::FALSE)
}

fn obj_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(any_to_s(ctx, recv))
}

fn obj_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let ivars = ivar_list(ctx, recv);
    if ivars.is_empty() {
        return Ok(any_to_s(ctx, recv));
    }
    let name = class_name_of(ctx, recv);
    let head = format!("#<{}:0x{:016x}", name, recv.raw());
    guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let mut out = head.clone().into_bytes();
        for (i, (n, v)) in ivars.iter().enumerate() {
            out.extend_from_slice(if i == 0 { b" " } else { b", " });
            out.extend_from_slice(&ctx.sym_name(*n));
            out.push(b'=');
            let s = inspect(ctx, *v)?;
            out.extend_from_slice(&string::bytes(s));
        }
        out.push(b'>');
        Ok(Some(out))
    })
    .map(|r| match r {
        Some(bytes) => string::new_from_bytes(ctx, &bytes),
        None => string::new_utf8(ctx, &format!("{head} ...>")),
    })
}

fn obj_instance_variables(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let names: Vec<Value> = ivar_list(ctx, recv).into_iter().filter(|(n, _)| ctx.sym_name(*n).first() == Some(&b'@')).map(|(n, _)| Value::symbol(n)).collect();
    Ok(array::from_vec(ctx, names))
}

fn obj_ivar_get(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = ivar_name_arg(ctx, args.pos[0])?;
    Ok(ivar_get(ctx, recv, id))
}

fn obj_ivar_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = ivar_name_arg(ctx, args.pos[0])?;
    ivar_set(ctx, recv, id, args.pos[1])?;
    Ok(args.pos[1])
}

fn obj_ivar_defined(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = ivar_name_arg(ctx, args.pos[0])?;
    Ok(Value::bool(ivar_defined(ctx, recv, id)))
}

fn obj_remove_ivar(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let id = ivar_name_arg(ctx, args.pos[0])?;
    ctx.check_frozen(recv)?;
    match ivar_remove(ctx, recv, id) {
        Some(v) => Ok(v),
        None => {
            let name = ctx.sym_str(id);
            let desc = describe_for_error(ctx, recv);
            Err(ctx.name_error(&format!("instance variable {name} not defined for {desc}"), id, recv))
        }
    }
}

/// `dup`/`clone` of any object: a shallow copy with ivars; `clone` keeps frozen state and
/// the singleton class.
pub fn copy_object(ctx: &mut Ctx, recv: Value, clone: bool, freeze_kw: Option<bool>) -> Result<Value> {
    if !recv.is_heap() {
        return Ok(recv);
    }
    let klass = real_class_of(ctx, recv);
    let copy = match basic(recv).obj_type() {
        ObjType::Object => new_object(ctx, klass),
        ObjType::String => string::dup_with_class(ctx, recv, klass),
        ObjType::Array => array::dup_with_class(ctx, recv, klass),
        ObjType::Hash => hash::dup_with_class(ctx, recv, klass),
        ObjType::Range => crate::core::range::dup(ctx, recv),
        ObjType::Class => crate::core::module_methods::copy_class(ctx, recv)?,
        ObjType::Proc => crate::core::proc::dup(ctx, recv),
        ObjType::Float | ObjType::Bignum => return Ok(recv),
        ObjType::Data => match crate::core::kernel::dup_data(ctx, recv)? {
            Some(v) => v,
            // A class with a Data allocator copies its state in `initialize_copy`.
            None if matches!(body(klass).alloc, AllocKind::Data(_)) => allocate(ctx, klass)?,
            None => {
                let name = class_name_of(ctx, recv);
                return Err(ctx.type_error(&format!("can't copy {name}")));
            }
        },
        _ => return Err(ctx.type_error("can't copy internal object")),
    };
    copy_ivars(ctx, copy, recv);
    crate::weak::copy_finalizers(ctx, copy, recv);
    if clone {
        let k = basic(recv).klass;
        if module::is_class_or_module(k) && body(k).kind == ClassKind::Singleton && !module::is_class_or_module(recv) {
            let s = singleton_class(ctx, copy)?;
            let src = body(k);
            let methods: Vec<_> = src.methods.iter().map(|(k, v)| (*k, v.clone())).collect();
            for (name, me) in methods {
                body(s).methods_mut().insert(name, me);
            }
            body(s).includes = src.includes.clone();
            // Constants of the singleton class come along too.
            let consts: Vec<(crate::symbol::SymId, Value)> = body(k).consts.iter().map(|(n, e)| (*n, e.value)).collect();
            for (n, v) in consts {
                body(s).const_set(n, v);
            }
            ctx.vm().bump_method_epoch();
            ctx.vm().bump_const_epoch();
        }
        let init = if clone { sym::INITIALIZE_CLONE } else { sym::INITIALIZE_DUP };
        match freeze_kw {
            Some(f) => {
                let h = hash::new(ctx);
                let key = Value::symbol(sym::FREEZE);
                hash::aset(ctx, h, key, Value::bool(f))?;
                ctx.call_kw(copy, init, &[recv], Some(h), None)?;
            }
            None => {
                ctx.call(copy, init, &[recv])?;
            }
        }
        let frozen = freeze_kw.unwrap_or_else(|| is_frozen(recv));
        if frozen {
            freeze(copy);
        }
        // A clone of a chilled String is chilled too.
        if string::is_chilled(recv) && freeze_kw.is_none() {
            basic(copy).flags |= basic(recv).flags & (crate::object::FL_CHILLED | crate::object::FL_CHILLED_SYMBOL);
        }
    } else if !(basic(recv).obj_type() == ObjType::Array && array_dup_is_done(ctx, klass)) {
        ctx.call(copy, sym::INITIALIZE_DUP, &[recv])?;
    }
    Ok(copy)
}

/// Whether the `dup` of an Array of class `klass` is complete without its `initialize_dup`
/// call: that and the `initialize_copy` it calls are the builtins (`Kernel#initialize_dup`,
/// `Array#initialize_copy`), which would only copy into the copy the elements it has
/// already, and no TracePoint wants their events.
fn array_dup_is_done(ctx: &Ctx, klass: Value) -> bool {
    let is = |mid, f: module::BuiltinFn| module::find_method(ctx, klass, mid).is_some_and(|me| me.is_builtin(f));
    !crate::core::tracepoint::tracing(ctx) && is(sym::INITIALIZE_DUP, obj_init_dup) && is(sym::INITIALIZE_COPY, array::replace)
}

fn obj_dup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    copy_object(ctx, recv, false, None)
}

fn obj_clone(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut freeze_kw = None;
    if let Some(f) = args.kwarg(ctx, "freeze") {
        if !f.is_nil() && f != Value::TRUE && f != Value::FALSE {
            let s = class_name_of(ctx, f);
            return Err(ctx.arg_error(&format!("unexpected value for freeze: {s}")));
        }
        if !f.is_nil() {
            freeze_kw = Some(f.truthy());
        }
    }
    if !recv.is_heap() {
        if freeze_kw == Some(false) {
            let name = class_name_of(ctx, recv);
            return Err(ctx.arg_error(&format!("can't unfreeze {name}")));
        }
        return Ok(recv);
    }
    copy_object(ctx, recv, true, freeze_kw)
}

fn obj_init_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = args.pos[0];
    if recv == src {
        return Ok(recv);
    }
    ctx.check_frozen(recv)?;
    if real_class_of(ctx, recv) != real_class_of(ctx, src) {
        return Err(ctx.type_error("initialize_copy should take same class object"));
    }
    Ok(recv)
}

fn obj_init_dup(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.call(recv, sym::INITIALIZE_COPY, &[args.pos[0]])?;
    Ok(recv)
}

fn obj_init_clone(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.call(recv, sym::INITIALIZE_COPY, &[args.pos[0]])?;
    Ok(recv)
}

fn obj_tap(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = args.need_block(ctx)?;
    ctx.yield1(&b, recv)?;
    Ok(recv)
}

fn obj_then(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match args.block {
        Some(b) => ctx.yield1(&b, recv),
        None => crate::core::enumerator::enum_for(ctx, recv, "then", &[], None),
    }
}

fn obj_itself(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn obj_extend(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.is_empty() {
        return Err(ctx.arity_error(0, 1, None));
    }
    for &m in args.pos.iter().rev() {
        if !module::is_module(m) {
            let cname = class_name_of(ctx, m);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Module)")));
        }
        if body(m).refined {
            return Err(ctx.type_error("Cannot extend object with refinement"));
        }
    }
    for &m in args.pos.iter().rev() {
        let extend_object = ctx.intern("extend_object");
        ctx.call(m, extend_object, &[recv])?;
        ctx.call(m, sym::EXTENDED, &[recv])?;
    }
    Ok(recv)
}

fn obj_singleton_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let all = args.pos.first().is_none_or(|v| v.truthy());
    let mut out = Vec::new();
    if recv.is_heap() {
        let k = basic(recv).klass;
        if module::is_class_or_module(k) && body(k).kind == ClassKind::Singleton {
            // With `all`, the modules it extends and, for a class, its superclasses'
            // singleton classes count too: the ancestors up to the first ordinary class.
            let mut mods = vec![k];
            let mut cur = k;
            while all && module::is_class_or_module(cur) && body(cur).kind == ClassKind::Singleton {
                mods.extend(module::own_ancestors(ctx, cur));
                cur = body(cur).superclass;
            }
            let mut seen = std::collections::HashSet::new();
            for m in mods {
                for (name, me) in body(m).methods.iter() {
                    // The nearest definition of a name decides (a private one hides it).
                    if seen.insert(*name) && me.visibility != module::Visibility::Private && !me.is_undefined() {
                        out.push(Value::symbol(*name));
                    }
                }
            }
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn obj_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.first().is_some_and(|v| !v.truthy()) {
        return obj_singleton_methods(ctx, recv, &Args::new(&[]));
    }
    let k = class_of(ctx, recv);
    let list = crate::core::module_methods::method_list(ctx, k, true, |v| v != module::Visibility::Private);
    Ok(array::from_vec(ctx, list))
}

/// The methods of `recv` whose visibility passes `keep`: with `all` (the default) every
/// ancestor's; otherwise those of its singleton classes and their modules, and of its
/// first ordinary class (CRuby's `class_instance_method_list` for an object).
fn obj_method_list(ctx: &mut Ctx, recv: Value, args: &Args, keep: fn(module::Visibility) -> bool) -> Result<Value> {
    let k = class_of(ctx, recv);
    if args.pos.first().is_none_or(|v| v.truthy()) {
        let list = crate::core::module_methods::method_list(ctx, k, true, keep);
        return Ok(array::from_vec(ctx, list));
    }
    let mut mods = Vec::new();
    let mut cur = k;
    while module::is_class_or_module(cur) && body(cur).kind == ClassKind::Singleton {
        mods.extend(module::own_ancestors(ctx, cur));
        cur = body(cur).superclass;
    }
    if module::is_class_or_module(cur) {
        mods.push(cur);
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for m in mods {
        for (name, me) in body(m).methods.iter() {
            // The nearest definition of a name decides.
            if seen.insert(*name) && !me.is_undefined() && keep(me.visibility) {
                out.push(Value::symbol(*name));
            }
        }
    }
    Ok(array::from_vec(ctx, out))
}

fn obj_private_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    obj_method_list(ctx, recv, args, |v| v == module::Visibility::Private)
}

fn obj_protected_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    obj_method_list(ctx, recv, args, |v| v == module::Visibility::Protected)
}

fn obj_public_methods(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    obj_method_list(ctx, recv, args, |v| v == module::Visibility::Public)
}

fn obj_define_singleton_method(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = singleton_class(ctx, recv)?;
    crate::core::module_methods::define_method_impl(ctx, s, args)
}

fn obj_display(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let out = match args.pos.first() {
        Some(&o) => o,
        None => crate::core::globals::get(ctx, sym::DOLLAR_STDOUT)?,
    };
    let write = ctx.intern("write");
    ctx.call(out, write, &[recv])?;
    Ok(Value::NIL)
}

fn obj_enum_for(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (meth, rest) = match args.pos.first() {
        Some(&m) => (m, &args.pos[1..]),
        None => (Value::symbol(sym::EACH), &args.pos[..]),
    };
    let mid = crate::core::symbol::to_sym_id(ctx, meth)?;
    let name = ctx.sym_str(mid);
    let size_fn = args.block.map(|b| crate::core::proc::from_block(ctx, &b)).transpose()?;
    crate::core::enumerator::enum_for_kw(ctx, recv, &name, rest, args.kw, size_fn)
}

pub fn init(ctx: &mut Ctx) {
    let bo = ctx.c().basic_object;
    crate::methods!(ctx, bo, [
        ("==", basic_eq, [1], Safe),
        ("equal?", basic_eq, [1], Safe),
        ("!", basic_not, [0], Safe),
        ("!=", basic_neq, [1], Safe),
        ("initialize", basic_initialize, [0], Safe, Private),
        ("__id__", basic_id, [0], Safe),
        ("__send__", basic_send, [0..], Unsafe, Kw),
        ("instance_eval", basic_instance_eval, [0..=3], Unsafe),
        ("instance_exec", basic_instance_exec, [0..], Unsafe, Kw),
        ("method_missing", basic_method_missing, [1..], Safe, Private),
        ("singleton_method_added", basic_initialize, [1], Safe, Private),
        ("singleton_method_removed", basic_initialize, [1], Safe, Private),
        ("singleton_method_undefined", basic_initialize, [1], Safe, Private),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("send", basic_send, [0..], Unsafe, Kw),
        ("public_send", obj_public_send, [0..], Unsafe, Kw),
        ("object_id", basic_id, [0], Safe),
        ("class", obj_class, [0], Safe),
        ("singleton_class", obj_singleton_class, [0], Unsafe),
        ("frozen?", obj_frozen_p, [0], Safe),
        ("freeze", obj_freeze, [0], Unsafe),
        ("nil?", obj_nil_p, [0], Safe),
        ("===", obj_eqq, [1], Safe),
        ("=~", obj_match, [1], Safe),
        ("!~", obj_nmatch, [1], Safe),
        ("eql?", obj_eql, [1], Safe),
        ("hash", obj_hash, [0], Safe),
        ("<=>", obj_cmp, [1], Safe),
        ("is_a?", obj_is_a, [1], Safe),
        ("kind_of?", obj_is_a, [1], Safe),
        ("instance_of?", obj_instance_of, [1], Safe),
        ("respond_to?", obj_respond_to, [1..=2], Safe),
        ("respond_to_missing?", obj_respond_to_missing, [2], Safe, Private),
        ("to_s", obj_to_s, [0], Safe),
        ("inspect", obj_inspect, [0], Safe),
        ("instance_variables", obj_instance_variables, [0], Safe),
        ("instance_variable_get", obj_ivar_get, [1], Safe),
        ("instance_variable_set", obj_ivar_set, [2], Unsafe),
        ("instance_variable_defined?", obj_ivar_defined, [1], Safe),
        ("remove_instance_variable", obj_remove_ivar, [1], Unsafe),
        ("dup", obj_dup, [0], Unsafe),
        ("clone", obj_clone, [0], Unsafe, Kw),
        ("initialize_copy", obj_init_copy, [1], Unsafe, Private),
        ("initialize_dup", obj_init_dup, [1], Unsafe, Private),
        ("initialize_clone", obj_init_clone, [1], Unsafe, Private, Kw),
        ("tap", obj_tap, [0], Safe),
        ("then", obj_then, [0], Safe),
        ("yield_self", obj_then, [0], Safe),
        ("itself", obj_itself, [0], Safe),
        ("extend", obj_extend, [0..], Unsafe),
        ("singleton_methods", obj_singleton_methods, [0..=1], Safe),
        ("methods", obj_methods, [0..=1], Safe),
        ("public_methods", obj_public_methods, [0..=1], Safe),
        ("private_methods", obj_private_methods, [0..=1], Safe),
        ("protected_methods", obj_protected_methods, [0..=1], Safe),
        ("define_singleton_method", obj_define_singleton_method, [1..=2], Unsafe),
        ("display", obj_display, [0..=1], Unsafe),
        ("enum_for", obj_enum_for, [0..], Safe, Kw),
        ("to_enum", obj_enum_for, [0..], Safe, Kw),
    ]);
}
