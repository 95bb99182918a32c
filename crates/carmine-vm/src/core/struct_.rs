//! Struct: classes with named member slots, and the machinery Data (`data.rs`) shares.
//!
//! Invariants:
//! - An instance of a Struct or Data class is a Data object holding `StructObj`, whose
//!   `values` Array has exactly one slot per member of its class (it is never exposed).
//! - A generated class keeps its members as a frozen Array of Symbols in the hidden class
//!   ivar `__members__` (and Struct's `keyword_init:` in `__keyword_init__`); subclasses
//!   find them by walking up the superclass chain.
//! - Member accessors are builtins shared by all members: they find the member from the
//!   name they were called by (resolving same-class aliases through `original_name`).
//! - Mutators check `FL_FROZEN`; Data instances are frozen once initialized.
//! - `dup_data` is the hook `Kernel#dup`/`#clone` use to copy Data objects: Struct/Data
//!   instances and Sets are copied here.

use crate::core::enumerator::{enum_for_this, SizeFn};
use crate::core::module::{self, body, AllocKind};
use crate::core::{array, hash, integer, object, string};
use crate::interp::leaf::LeafFn;
use crate::interp::{Args, Block};
use crate::object::data_ref;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct StructObj {
    pub values: Value,
}

crate::data_obj!(StructObj, |s, m| {
    m.mark(s.values);
});

/// Allocates an instance of a generated Struct/Data class (all members nil).
pub fn alloc_struct(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let n = match members_of_class(ctx, klass) {
        Some(m) => array::len(m),
        None => {
            let name = crate::core::module_methods::class_path(ctx, klass);
            return Err(ctx.type_error(&format!("allocator undefined for {name}")));
        }
    };
    let values = array::from_vec(ctx, vec![Value::NIL; n]);
    Ok(object::new_data(ctx, klass, Box::new(StructObj { values })))
}

#[inline]
pub fn is_struct_obj(v: Value) -> bool {
    data_ref::<StructObj>(v).is_some()
}

/// The values Array of a Struct/Data instance.
#[inline]
pub fn values(ctx: &mut Ctx, v: Value) -> Result<Value> {
    match data_ref::<StructObj>(v) {
        Some(o) => Ok(o.values),
        None => Err(not_a_struct(ctx, v)),
    }
}

#[cold]
#[inline(never)]
fn not_a_struct(ctx: &mut Ctx, v: Value) -> crate::Unwind {
    let cname = object::class_name_of(ctx, v);
    ctx.type_error(&format!("wrong argument type {cname} (expected Struct)"))
}

fn members_id(_ctx: &Ctx) -> SymId {
    sym::STRUCT_MEMBERS
}

fn keyword_init_id(_ctx: &Ctx) -> SymId {
    sym::STRUCT_KEYWORD_INIT
}

/// The members Array of a generated class (or of its nearest generated ancestor).
pub fn members_of_class(ctx: &Ctx, klass: Value) -> Option<Value> {
    let id = members_id(ctx);
    let mut k = klass;
    while module::is_class_or_module(k) {
        let b = body(k);
        if let Some(&(_, v)) = b.ivars.iter().find(|(n, _)| *n == id) {
            return Some(v);
        }
        k = b.superclass;
    }
    None
}

/// The members Array of instance `v`'s class.
pub fn members_of(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let k = object::real_class_of(ctx, v);
    match members_of_class(ctx, k) {
        Some(m) => Ok(m),
        None => Err(ctx.type_error("uninitialized struct")),
    }
}

fn class_ivar(klass: Value, id: SymId) -> Option<Value> {
    let mut k = klass;
    while module::is_class_or_module(k) {
        let b = body(k);
        if let Some(&(_, v)) = b.ivars.iter().find(|(n, _)| *n == id) {
            return Some(v);
        }
        k = b.superclass;
    }
    None
}

/// The position of member `name` in `members`.
fn member_index(members: Value, name: SymId) -> Option<usize> {
    (0..array::len(members)).find(|&i| array::get(members, i).as_symbol() == Some(name))
}

/// A member name (Symbol or String, converted with `to_str`) as the `rb_struct_pos` key
/// rules allow; `None` for anything else.
fn member_key(ctx: &mut Ctx, key: Value) -> Result<Option<SymId>> {
    if let Some(s) = key.as_symbol() {
        return Ok(Some(s));
    }
    if string::is_string(key) {
        return Ok(Some(ctx.intern_bytes(string::bytes(key))));
    }
    Ok(None)
}

/// `rb_struct_pos` + CRuby's errors for `[]`/`[]=`: an Integer index (negative from the
/// end) or a member name.
fn index_for(ctx: &mut Ctx, s: Value, key: Value) -> Result<usize> {
    if let Some(i) = key.as_fixnum() {
        // The values Array has one slot per member.
        let n = array::len(values(ctx, s)?) as i64;
        if (0..n).contains(&i) {
            return Ok(i as usize);
        }
    }
    let members = members_of(ctx, s)?;
    let n = array::len(members) as i64;
    if let Some(name) = member_key(ctx, key)? {
        return match member_index(members, name) {
            Some(i) => Ok(i),
            None => {
                let shown = String::from_utf8_lossy(&ctx.sym_name(name)).into_owned();
                let e = ctx.name_error(&format!("no member '{shown}' in struct"), name, s);
                Err(e)
            }
        };
    }
    let i = integer::to_i64_arg(ctx, key)?;
    let j = if i < 0 { i + n } else { i };
    if j < 0 {
        return Err(ctx.index_error(&format!("offset {i} too small for struct(size:{n})")));
    }
    if j >= n {
        return Err(ctx.index_error(&format!("offset {i} too large for struct(size:{n})")));
    }
    Ok(j as usize)
}

/// Converts a member name argument (`Struct.new`/`Data.define`) to a Symbol.
pub fn member_name_arg(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    if let Some(s) = v.as_symbol() {
        return Ok(s);
    }
    if string::is_string(v) {
        return Ok(ctx.intern_bytes(string::bytes(v)));
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
        let s = string::to_str_arg(ctx, v)?;
        return Ok(ctx.intern_bytes(string::bytes(s)));
    }
    let shown = object::inspect_string(ctx, v)?;
    Err(ctx.type_error(&format!("{shown} is not a symbol nor a string")))
}

/// Checks and freezes the member list of a new Struct/Data class (`kind` is "struct" or
/// "data" for the error messages).
pub fn make_members(ctx: &mut Ctx, names: &[Value], kind: &str) -> Result<Value> {
    let list = array::new(ctx);
    for &n in names {
        let id = member_name_arg(ctx, n)?;
        let name = ctx.sym_name(id);
        let shown = String::from_utf8_lossy(&name).into_owned();
        if name.len() > 1 && name.ends_with(b"=") {
            return Err(ctx.arg_error(&format!("invalid {kind} member: {shown}")));
        }
        if member_index(list, id).is_some() {
            return Err(ctx.arg_error(&format!("duplicate member: {shown}")));
        }
        array::push(ctx, list, Value::symbol(id));
    }
    Ok(object::freeze(list))
}

/// Stores the members on a new class and defines its accessors (`writers` for Struct).
pub fn setup_class(ctx: &mut Ctx, klass: Value, members: Value, writers: bool) {
    let id = members_id(ctx);
    object::ivar_set_raw(ctx, klass, id, members);
    body(klass).alloc = AllocKind::Data(alloc_struct);
    let define = |ctx: &mut Ctx, name: SymId, f: module::BuiltinFn, arity: module::Arity, safety: crate::core::TS| {
        let body = module::MethodBody::Builtin { f, arity, safety, kw: false };
        module::add_method(ctx, klass, module::MethodEntry { name, original_name: name, owner: klass, visibility: module::Visibility::Public, body });
    };
    for i in 0..array::len(members) {
        let Some(m) = array::get(members, i).as_symbol() else { continue };
        define(ctx, m, MEMBER_GETTERS.get(i).copied().unwrap_or(member_get), crate::arity!(0), crate::core::TS::Safe);
        if writers {
            let mut wname = ctx.sym_name(m).to_vec();
            wname.push(b'=');
            let w = ctx.intern_bytes(&wname);
            define(ctx, w, MEMBER_SETTERS.get(i).copied().unwrap_or(member_set), crate::arity!(1), crate::core::TS::Unsafe);
        }
    }
}

macro_rules! member_accessors {
    ($f:ident) => {
        [$f::<0>, $f::<1>, $f::<2>, $f::<3>, $f::<4>, $f::<5>, $f::<6>, $f::<7>,
         $f::<8>, $f::<9>, $f::<10>, $f::<11>, $f::<12>, $f::<13>, $f::<14>, $f::<15>]
    };
}

/// Accessors of the first members know their position: members never change after the
/// class is made and subclasses keep them, so the position holds for every receiver the
/// method can be called on (aliases included). Later members find theirs by name.
const MEMBER_GETTERS: [module::BuiltinFn; 16] = member_accessors!(member_get_at);
const MEMBER_SETTERS: [module::BuiltinFn; 16] = member_accessors!(member_set_at);

/// For a Struct/Data member accessor that knows its position: whether it is a writer, and
/// its leaf form. Such an accessor is a leaf builtin (`interp::leaf`): its receiver, of the
/// class that defined it, always holds its `StructObj`, so a reader can neither raise nor
/// run Ruby code, and a writer only raises when the receiver is frozen.
pub fn positional_accessor(f: module::BuiltinFn) -> Option<(bool, LeafFn)> {
    let at = |table: &[module::BuiltinFn]| table.iter().position(|&g| std::ptr::fn_addr_eq(g, f));
    if let Some(i) = at(&MEMBER_GETTERS) {
        Some((false, LEAF_GETTERS[i]))
    } else {
        at(&MEMBER_SETTERS).map(|i| (true, LEAF_SETTERS[i]))
    }
}

const LEAF_GETTERS: [LeafFn; 16] = member_accessors!(leaf_get_at);
const LEAF_SETTERS: [LeafFn; 16] = member_accessors!(leaf_set_at);

fn leaf_get_at<const I: usize>(_ctx: &mut Ctx, recv: Value, _args: &[Value]) -> Value {
    data_ref::<StructObj>(recv).map_or(Value::NIL, |o| array::get(o.values, I))
}

fn leaf_set_at<const I: usize>(_ctx: &mut Ctx, recv: Value, args: &[Value]) -> Value {
    if let Some(o) = data_ref::<StructObj>(recv) {
        array::set(o.values, I, args[0]);
    }
    args[0]
}

fn member_get_at<const I: usize>(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = values(ctx, recv)?;
    Ok(array::get(v, I))
}

fn member_set_at<const I: usize>(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let v = values(ctx, recv)?;
    array::set(v, I, args.pos[0]);
    Ok(args.pos[0])
}

/// The member a generated accessor was called for.
fn called_member(ctx: &mut Ctx, recv: Value, writer: bool) -> Result<usize> {
    let members = members_of(ctx, recv)?;
    let called = ctx.stacks.frames.last().filter(|f| f.kind == crate::interp::frame::FrameKind::Builtin).and_then(|f| f.mid);
    let Some(called) = called else { return Err(ctx.runtime_error("struct accessor called without a frame")) };
    let strip = |ctx: &Ctx, id: SymId| -> SymId {
        if !writer {
            return id;
        }
        let n = ctx.sym_name(id);
        ctx.intern_bytes(n.strip_suffix(b"=").unwrap_or(&n))
    };
    let name = strip(ctx, called);
    if let Some(i) = member_index(members, name) {
        return Ok(i);
    }
    // Called through an alias defined in the same class: use the original name.
    let klass = crate::interp::class_of(ctx, recv);
    if let Some(me) = module::find_method(ctx, klass, called) {
        let orig = strip(ctx, me.original_name);
        if let Some(i) = member_index(members, orig) {
            return Ok(i);
        }
    }
    let shown = ctx.sym_str(name);
    Err(ctx.name_error(&format!("no member '{shown}' in struct"), name, recv))
}

fn member_get(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let i = called_member(ctx, recv, false)?;
    let v = values(ctx, recv)?;
    Ok(array::get(v, i))
}

fn member_set(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = called_member(ctx, recv, true)?;
    ctx.check_frozen(recv)?;
    let v = values(ctx, recv)?;
    array::set(v, i, args.pos[0]);
    Ok(args.pos[0])
}

// ---- shared instance behaviour (Struct and Data) ----

/// `#<struct Point x=1, y=2>` / `#<data Point x=1>`.
pub fn inspect_with(ctx: &mut Ctx, recv: Value, kind: &str) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let cname = crate::core::module_methods::class_path(ctx, klass);
    let named = !cname.starts_with('#');
    let r = object::guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let members = members_of(ctx, recv)?;
        let vals = values(ctx, recv)?;
        let mut out = format!("#<{kind} ").into_bytes();
        if named {
            out.extend_from_slice(cname.as_bytes());
        }
        for i in 0..array::len(members) {
            if i > 0 {
                out.extend_from_slice(b", ");
            } else if named {
                out.push(b' ');
            }
            let m = array::get(members, i);
            let name = m.as_symbol().map(|s| ctx.sym_name(s)).unwrap_or_default();
            if is_local_or_const(&name) {
                out.extend_from_slice(&name);
            } else {
                let s = array::inspect_elem(ctx, m)?;
                out.extend_from_slice(string::bytes(s));
            }
            out.push(b'=');
            let s = array::inspect_elem(ctx, array::get(vals, i))?;
            out.extend_from_slice(string::bytes(s));
        }
        out.push(b'>');
        Ok(Some(out))
    })?;
    Ok(match r {
        Some(b) => string::new_from_bytes(ctx, &b),
        None => string::new_utf8(ctx, &format!("#<{kind} {cname}:...>")),
    })
}

/// Whether a member prints bare in `inspect` (a local variable or constant name).
fn is_local_or_const(name: &[u8]) -> bool {
    let Some(&c) = name.first() else { return false };
    let start = c == b'_' || c.is_ascii_alphabetic() || c >= 0x80;
    start && name.iter().all(|&b| b == b'_' || b.is_ascii_alphanumeric() || b >= 0x80)
}

/// `==` (`eql` false) or `eql?` between two instances of the same class.
pub fn equal_with(ctx: &mut Ctx, a: Value, b: Value, eql: bool) -> Result<bool> {
    if a == b {
        return Ok(true);
    }
    if !is_struct_obj(b) || object::real_class_of(ctx, a) != object::real_class_of(ctx, b) {
        return Ok(false);
    }
    let (va, vb) = (values(ctx, a)?, values(ctx, b)?);
    array::equal_arrays(ctx, va, vb, eql)
}

pub fn hash_with(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    let klass = object::real_class_of(ctx, recv);
    let seed = crate::core::hash::mix(ctx.vm().hash_seed, object::identity_hash(ctx, klass));
    let rec = hash::RECURSIVE_HASH;
    let r = object::guard_recursion(ctx, sym::HASH, recv, Value::NIL, None, |ctx| {
        let vals = values(ctx, recv)?;
        let mut h = seed;
        let mut i = 0;
        while i < array::len(vals) {
            let e = object::hash_of(ctx, array::get(vals, i))?;
            if e == rec as u64 {
                return Ok(None);
            }
            h = hash::mix(h, e);
            i += 1;
        }
        Ok(Some(h))
    })?;
    Ok(Value::fixnum(match r {
        Some(h) => (h >> 2) as i64,
        None => rec,
    }))
}

/// `to_h { |name, value| … }`.
pub fn to_h_with(ctx: &mut Ctx, recv: Value, block: Option<Block>) -> Result<Value> {
    let members = members_of(ctx, recv)?;
    let vals = values(ctx, recv)?;
    let h = hash::new(ctx);
    for i in 0..array::len(members) {
        let (k, v) = (array::get(members, i), array::get(vals, i));
        match block {
            Some(b) => {
                let pair = ctx.yield_block(&b, &[k, v])?;
                hash::set_pair(ctx, h, pair)?;
            }
            None => hash::aset(ctx, h, k, v)?,
        }
    }
    Ok(h)
}

/// `deconstruct_keys(keys)`; `allow_index` accepts Integer keys (Struct) — Data raises
/// for them like for any non-name key.
pub fn deconstruct_keys_with(ctx: &mut Ctx, recv: Value, keys: Value, allow_index: bool) -> Result<Value> {
    if keys.is_nil() {
        return to_h_with(ctx, recv, None);
    }
    if !array::is_array(keys) {
        let cname = object::class_name_of(ctx, keys);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Array or nil)")));
    }
    let members = members_of(ctx, recv)?;
    let vals = values(ctx, recv)?;
    let h = hash::new(ctx);
    if array::len(members) < array::len(keys) {
        return Ok(h);
    }
    let mut i = 0;
    while i < array::len(keys) {
        let key = array::get(keys, i);
        let pos = if allow_index && !key.is_symbol() && !string::is_string(key) {
            // Struct (`rb_struct_pos`): anything but a name is an index via `to_int`.
            let n = array::len(members) as i64;
            let k = integer::to_i64_arg(ctx, key)?;
            let j = if k < 0 { k + n } else { k };
            (0..n).contains(&j).then_some(j as usize)
        } else {
            let name = if key.is_symbol() || string::is_string(key) {
                member_key(ctx, key)?
            } else if key.is_heap() && ctx.respond_to(key, sym::TO_STR, true) {
                let s = string::to_str_arg(ctx, key)?;
                Some(ctx.intern_bytes(string::bytes(s)))
            } else if allow_index {
                None
            } else {
                let shown = object::inspect_string(ctx, key)?;
                return Err(ctx.type_error(&format!("{shown} is not a symbol nor a string")));
            };
            name.and_then(|n| member_index(members, n))
        };
        let Some(pos) = pos else { return Ok(h) };
        hash::aset(ctx, h, key, array::get(vals, pos))?;
        i += 1;
    }
    Ok(h)
}

/// Copies a Struct/Data instance or a Set for dup/clone (`None` for other Data objects).
pub fn dup_data(ctx: &mut Ctx, v: Value, klass: Value) -> Result<Option<Value>> {
    if let Some(o) = data_ref::<StructObj>(v) {
        let vals = o.values;
        let copy = array::dup(ctx, vals);
        return Ok(Some(object::new_data(ctx, klass, Box::new(StructObj { values: copy }))));
    }
    crate::core::set::dup_set(ctx, v, klass)
}

// ---- Struct ----

fn keyword_init_of(ctx: &Ctx, klass: Value) -> Value {
    class_ivar(klass, keyword_init_id(ctx)).unwrap_or(Value::NIL)
}

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut pos = args.pos;
    let mut name = Value::NIL;
    if let Some(&first) = pos.first() {
        if !first.is_symbol() {
            name = first;
            pos = &pos[1..];
        }
    }
    let mut keyword_init = Value::NIL;
    if let Some(kw) = args.kw {
        let key = Value::symbol(sym::KEYWORD_INIT);
        for (k, v) in hash::pairs(kw) {
            if k == key {
                keyword_init = v;
            } else {
                let s = object::inspect_string(ctx, k)?;
                return Err(ctx.arg_error(&format!("unknown keyword: {s}")));
            }
        }
    }
    let members = make_members(ctx, pos, "struct")?;
    let klass = if name.is_nil() {
        crate::core::module_methods::new_class(ctx, recv, None)
    } else {
        let s = string::to_str_arg(ctx, name)?;
        let text = string::to_rust_string_lossy(s);
        if !text.chars().next().is_some_and(|c| c.is_ascii_uppercase()) || !text.chars().all(|c| c == '_' || c.is_alphanumeric()) {
            let id = ctx.intern(&text);
            return Err(ctx.name_error(&format!("identifier {text} needs to be constant"), id, recv));
        }
        let id = ctx.intern(&text);
        if body(recv).const_get(id).is_some() {
            let owner = crate::core::module_methods::class_path(ctx, recv);
            let (path, line) = crate::core::kernel::caller_location(ctx);
            crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: redefining constant {owner}::{text}\n"));
            body(recv).const_remove(id);
            ctx.vm().bump_const_epoch();
        }
        let k = crate::core::module_methods::define_class_under(ctx, recv, &text, recv);
        ctx.vm().bump_const_epoch();
        k
    };
    setup_class(ctx, klass, members, true);
    let kid = keyword_init_id(ctx);
    object::ivar_set_raw(ctx, klass, kid, keyword_init);
    define_class_methods(ctx, klass)?;
    if let Some(b) = args.block {
        ctx.yield_with_self(&b, klass, &[klass], Some(klass))?;
    }
    Ok(klass)
}

fn define_class_methods(ctx: &mut Ctx, klass: Value) -> Result<()> {
    let single = object::singleton_class(ctx, klass)?;
    crate::methods!(ctx, single, [
        ("new", c_new, [0..], Unsafe, Kw),
        ("[]", c_new, [0..], Unsafe, Kw),
        ("members", c_members, [0], Safe),
        ("keyword_init?", c_keyword_init_p, [0], Safe),
        ("inspect", c_inspect, [0], Safe),
    ]);
    Ok(())
}

fn c_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = object::allocate(ctx, recv)?;
    ctx.call_kw(o, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(o)
}

fn c_members(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match members_of_class(ctx, recv) {
        Some(m) => Ok(array::dup(ctx, m)),
        None => Err(ctx.type_error("uninitialized struct")),
    }
}

fn c_keyword_init_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = keyword_init_of(ctx, recv);
    Ok(if v.is_nil() { Value::NIL } else { Value::bool(v.truthy()) })
}

fn c_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let name = crate::core::module_methods::class_path(ctx, recv);
    let ki = keyword_init_of(ctx, recv);
    Ok(if ki.truthy() { string::new_utf8(ctx, &format!("{name}(keyword_init: true)")) } else { string::new_utf8(ctx, &name) })
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let members = members_of(ctx, recv)?;
    let n = array::len(members);
    let vals = values(ctx, recv)?;
    // Keywords arrive separately; CRuby sees them as one trailing Hash argument.
    let kw = args.kw.filter(|h| hash::len(*h) > 0 || args.pos.is_empty());
    let argc = args.pos.len() + kw.is_some() as usize;
    for i in 0..n {
        array::set(vals, i, Value::NIL);
    }
    if argc == 0 {
        return Ok(Value::NIL);
    }
    let klass = object::real_class_of(ctx, recv);
    let ki = keyword_init_of(ctx, klass);
    let single_hash = match (args.pos, kw) {
        ([], Some(h)) => Some(h),
        ([h], None) if hash::is_hash(*h) => Some(*h),
        _ => None,
    };
    let keyword_mode = if ki.truthy() {
        match single_hash {
            Some(_) => true,
            None => return Err(ctx.arity_error(argc, 0, Some(0))),
        }
    } else if ki == Value::FALSE {
        false
    } else {
        kw.is_some() && args.pos.is_empty()
    };
    if keyword_mode {
        let h = single_hash.unwrap_or(Value::NIL);
        // The Array of unknown keys is made only when there is one.
        let mut unknown = None;
        for (k, v) in hash::pairs(h) {
            let idx = match member_key(ctx, k)? {
                Some(name) => member_index(members, name),
                None => None,
            };
            match idx {
                Some(i) => array::set(vals, i, v),
                None => {
                    let u = *unknown.get_or_insert_with(|| array::new(ctx));
                    array::push(ctx, u, k);
                }
            }
        }
        if let Some(unknown) = unknown {
            let sep = string::new_utf8(ctx, ", ");
            let joined = ctx.call_str(unknown, "join", &[sep])?;
            let s = string::to_rust_string_lossy(joined);
            return Err(ctx.arg_error(&format!("unknown keywords: {s}")));
        }
        return Ok(Value::NIL);
    }
    if argc > n {
        return Err(ctx.arg_error("struct size differs"));
    }
    for (i, &v) in args.pos.iter().chain(kw.as_ref()).enumerate() {
        array::set(vals, i, v);
    }
    Ok(Value::NIL)
}

fn initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let orig = args.pos[0];
    if recv == orig {
        return Ok(recv);
    }
    ctx.check_frozen(recv)?;
    if object::real_class_of(ctx, recv) != object::real_class_of(ctx, orig) || !is_struct_obj(orig) {
        return Err(ctx.type_error("initialize_copy should take same class object"));
    }
    let src = values(ctx, orig)?;
    let copy = array::dup(ctx, src);
    if let Some(o) = data_ref::<StructObj>(recv) {
        o.values = copy;
    }
    Ok(recv)
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(equal_with(ctx, recv, args.pos[0], false)?))
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(equal_with(ctx, recv, args.pos[0], true)?))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    hash_with(ctx, recv)
}

fn m_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = values(ctx, recv)?;
    Ok(array::dup(ctx, v))
}

fn m_to_h(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    to_h_with(ctx, recv, args.block)
}

fn m_members(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = members_of(ctx, recv)?;
    Ok(array::dup(ctx, m))
}

fn m_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = values(ctx, recv)?;
    Ok(Value::fixnum(array::len(v) as i64))
}

fn size_fn(ctx: &mut Ctx, recv: Value, _args: Value) -> Result<Value> {
    let v = values(ctx, recv)?;
    Ok(Value::fixnum(array::len(v) as i64))
}

fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = index_for(ctx, recv, args.pos[0])?;
    let v = values(ctx, recv)?;
    Ok(array::get(v, i))
}

fn m_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = index_for(ctx, recv, args.pos[0])?;
    ctx.check_frozen(recv)?;
    let v = values(ctx, recv)?;
    array::set(v, i, args.pos[1]);
    Ok(args.pos[1])
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "each", &[], SizeFn::Native(size_fn)) };
    let mut i = 0;
    loop {
        let v = values(ctx, recv)?;
        if i >= array::len(v) {
            break;
        }
        ctx.yield1(&b, array::get(v, i))?;
        i += 1;
    }
    Ok(recv)
}

fn m_each_pair(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "each_pair", &[], SizeFn::Native(size_fn)) };
    let members = members_of(ctx, recv)?;
    let mut i = 0;
    while i < array::len(members) {
        let v = values(ctx, recv)?;
        let pair = array::from_slice(ctx, &[array::get(members, i), array::get(v, i)]);
        ctx.yield1(&b, pair)?;
        i += 1;
    }
    Ok(recv)
}

fn m_select(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else { return enum_for_this(ctx, recv, "select", &[], SizeFn::Native(size_fn)) };
    let out = array::new(ctx);
    let mut i = 0;
    loop {
        let v = values(ctx, recv)?;
        if i >= array::len(v) {
            break;
        }
        let x = array::get(v, i);
        if ctx.yield1(&b, x)?.truthy() {
            array::push(ctx, out, x);
        }
        i += 1;
    }
    Ok(out)
}

fn m_values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let vals = values(ctx, recv)?;
    let n = array::len(vals) as i64;
    let out = array::new(ctx);
    for &sel in args.pos {
        if !sel.is_fixnum() && crate::core::range::is_range(sel) {
            if let Some((beg, cnt)) = crate::core::array_methods::range_beg_len(ctx, sel, n, 1)? {
                for j in beg..beg + cnt {
                    let v = if j < n { array::get(vals, j as usize) } else { Value::NIL };
                    array::push(ctx, out, v);
                }
            }
            continue;
        }
        let i = integer::to_i64_arg(ctx, sel)?;
        let j = if i < 0 { i + n } else { i };
        if j < 0 {
            return Err(ctx.index_error(&format!("offset {i} too small for struct(size:{n})")));
        }
        if j >= n {
            return Err(ctx.index_error(&format!("offset {i} too large for struct(size:{n})")));
        }
        array::push(ctx, out, array::get(vals, j as usize));
    }
    Ok(out)
}

fn m_dig(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    let members = members_of(ctx, recv)?;
    let vals = values(ctx, recv)?;
    // `rb_struct_lookup`: a missing member is nil, not an error.
    let v = if let Some(name) = member_key(ctx, key)? {
        member_index(members, name).map_or(Value::NIL, |i| array::get(vals, i))
    } else {
        let n = array::len(vals) as i64;
        let i = integer::to_i64_arg(ctx, key)?;
        let j = if i < 0 { i + n } else { i };
        if (0..n).contains(&j) {
            array::get(vals, j as usize)
        } else {
            Value::NIL
        }
    };
    crate::core::array_methods::dig_rest(ctx, v, &args.pos[1..])
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    inspect_with(ctx, recv, "struct")
}

fn m_deconstruct_keys(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    deconstruct_keys_with(ctx, recv, args.pos[0], true)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().struct_;
    body(c).alloc = AllocKind::Data(alloc_struct);
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Unsafe, Singleton, Kw),
        ("initialize", initialize, [0..], Unsafe, Private, Kw),
        ("initialize_copy", initialize_copy, [1], Unsafe, Private),
        ("==", m_eq, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("to_a", m_to_a, [0], Safe),
        ("to_h", m_to_h, [0], Safe),
        ("members", m_members, [0], Safe),
        ("size", m_size, [0], Safe),
        ("[]", m_aref, [1], Safe),
        ("[]=", m_aset, [2], Unsafe),
        ("each", m_each, [0], Safe),
        ("each_pair", m_each_pair, [0], Safe),
        ("select", m_select, [0], Safe),
        ("values_at", m_values_at, [0..], Safe),
        ("dig", m_dig, [1..], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("deconstruct_keys", m_deconstruct_keys, [1], Safe),
    ]);
    crate::core::define_alias(ctx, c, "length", "size");
    crate::core::define_alias(ctx, c, "values", "to_a");
    crate::core::define_alias(ctx, c, "deconstruct", "to_a");
    crate::core::define_alias(ctx, c, "filter", "select");
    crate::core::define_alias(ctx, c, "to_s", "inspect");
    crate::core::data::init(ctx);
}
