//! Classes and modules: representation, method tables, ancestry and method lookup.
//!
//! Invariants:
//! - Every class and module is an `RClass` whose `body` is owned by the slot.
//! - `ancestors(C)` is the method resolution order: C's prepended modules (newest first),
//!   C, C's included modules (newest first, each with its own ancestry), then the
//!   superclass's ancestors; a module already in the superclass's ancestors is skipped.
//! - Any change to a method table or to the module graph bumps the VM's `method_epoch`,
//!   which invalidates every inline and per-class method cache at once.
//! - A `MethodEntry` is immutable; redefinition replaces the `Arc` in the table.
//! - The Ruby-visible methods of Module and Class are in `module_methods.rs`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use crate::heap::Marker;
use crate::object::{basic, RBasic, FL_USER0};
use crate::symbol::{SymId, SymMap};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Visibility {
    Public,
    Private,
    Protected,
    /// `module_function` mode in a module body: defines a private instance method and a
    /// public singleton method.
    ModuleFunction,
}

/// What `Class#allocate` creates for instances of a class (inherited by subclasses).
#[derive(Copy, Clone, Debug)]
pub enum AllocKind {
    Object,
    /// The class cannot be instantiated with `new`/`allocate` (Integer, Symbol, …).
    None,
    String,
    Array,
    Hash,
    Range,
    Proc,
    Class,
    Module,
    /// A Data object built by the function registered for the class.
    Data(fn(&mut Ctx, Value) -> Result<Value>),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ClassKind {
    Class,
    Module,
    Singleton,
}

/// Number of arguments a builtin accepts: `min..=max`, `max == None` for unbounded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Arity {
    pub min: u8,
    pub max: Option<u8>,
}

impl Arity {
    pub const fn exact(n: u8) -> Arity {
        Arity { min: n, max: Some(n) }
    }
    pub const fn range(min: u8, max: u8) -> Arity {
        Arity { min, max: Some(max) }
    }
    pub const fn rest(min: u8) -> Arity {
        Arity { min, max: None }
    }
    /// CRuby's `Method#arity` number.
    pub fn ruby_arity(&self) -> i64 {
        match self.max {
            Some(max) if max == self.min => self.min as i64,
            _ => -(self.min as i64) - 1,
        }
    }
}

/// Whether a builtin may run without the giant lock (seed 003).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ThreadSafety {
    /// Runs in parallel with Ruby code on other threads.
    Safe,
    /// Must hold the giant lock.
    Unsafe,
}

pub type BuiltinFn = fn(&mut Ctx, Value, &crate::interp::Args<'_>) -> Result<Value>;

#[derive(Clone)]
pub enum MethodBody {
    Iseq { iseq: Value, cref: Value },
    Builtin { f: BuiltinFn, arity: Arity, safety: ThreadSafety, kw: bool },
    AttrReader(SymId),
    AttrWriter(SymId),
    /// `define_method` with a block or proc: the proc runs with self = receiver.
    Proc(Value),
    /// `define_method` with a Method/UnboundMethod: its entry is called.
    Alias(Arc<MethodEntry>),
    /// `undef_method`: lookup stops here and fails.
    Undefined,
    /// A method made visible by `public :m`/`private :m` in a subclass: calls super.
    ZSuper,
}

pub struct MethodEntry {
    pub name: SymId,
    pub original_name: SymId,
    /// The class or module whose table defined this method (for `super` and `owner`).
    pub owner: Value,
    pub visibility: Visibility,
    pub body: MethodBody,
}

impl MethodEntry {
    pub fn mark(&self, m: &mut Marker<'_>) {
        m.mark(self.owner);
        match &self.body {
            MethodBody::Iseq { iseq, cref } => {
                m.mark(*iseq);
                m.mark(*cref);
            }
            MethodBody::Proc(p) => m.mark(*p),
            MethodBody::Alias(me) => me.mark(m),
            _ => {}
        }
    }

    pub fn is_undefined(&self) -> bool {
        matches!(self.body, MethodBody::Undefined)
    }

    /// Whether this entry runs builtin `f` (a fast path may then do `f`'s work in place).
    pub fn is_builtin(&self, f: BuiltinFn) -> bool {
        matches!(self.body, MethodBody::Builtin { f: g, .. } if std::ptr::fn_addr_eq(g, f))
    }
}

#[derive(Clone)]
pub struct ConstEntry {
    pub value: Value,
    pub private: bool,
    pub deprecated: bool,
    /// `autoload` path, while the constant has not been loaded.
    pub autoload: Option<Value>,
    /// Where Ruby code assigned it (none for the VM's own constants).
    pub location: Option<(std::sync::Arc<str>, u32)>,
}

pub struct ClassBody {
    /// Permanent name (`"A::B"`), set when first assigned to a constant.
    pub name: Option<Value>,
    /// `name` is temporary ("#<Module:0x...>::B", set under an anonymous
    /// module): it is replaced when the outer module gets a permanent name.
    pub temporary_name: bool,
    /// The temporary name was given by `set_temporary_name`: assigning the module to a
    /// constant of an anonymous module keeps it (a permanent name still replaces it).
    pub name_set_by_user: bool,
    pub superclass: Value,
    pub kind: ClassKind,
    /// For singleton classes: the object they belong to.
    pub attached: Value,
    pub methods: Arc<SymMap<Arc<MethodEntry>>>,
    pub consts: Arc<Vec<(SymId, ConstEntry)>>,
    pub const_index: SymMap<usize>,
    pub cvars: Vec<(SymId, Value)>,
    /// The class object's own instance variables.
    pub ivars: Vec<(SymId, Value)>,
    /// Instance variable layout of instances (RObject slots).
    pub iv_index: SymMap<u32>,
    pub iv_names: Vec<SymId>,
    /// Modules included directly, in inclusion order.
    pub includes: Vec<Value>,
    /// Modules prepended directly, in order.
    pub prepends: Vec<Value>,
    pub alloc: AllocKind,
    pub lexical_parent: Value,
    /// Direct subclasses (for `Class#subclasses`); not a GC root.
    pub subclasses: Vec<Value>,
    pub ancestors_cache: RefCell<Option<(u64, Rc<Vec<Value>>)>>,
    pub method_cache: RefCell<SymMap<(u64, Option<Arc<MethodEntry>>)>>,
    /// This module is a refinement (`Module#refine` made it).
    pub refined: bool,
    /// For a refinement: the class or module it refines, and the module whose `refine`
    /// made it; nil otherwise.
    pub refined_class: Value,
    pub refinement_owner: Value,
    /// The refinements this module defines, as a flat Array `[refined class, refinement,
    /// …]` in definition order (nil until the first `refine`).
    pub refinements: Value,
    /// A class made by `Class.allocate` that `initialize` has not given a superclass yet:
    /// it has no instances and no superclass.
    pub uninitialized: bool,
}

#[repr(C)]
pub struct RClass {
    pub basic: RBasic,
    pub body: Box<ClassBody>,
}

/// Set on an `RClass` that is a module.
pub const FL_MODULE: u32 = FL_USER0;

impl ClassBody {
    /// The method table, to change: the table is shared with the isolation baseline
    /// (`runtime::isolation`) until then, and copied on this first change.
    pub fn methods_mut(&mut self) -> &mut SymMap<Arc<MethodEntry>> {
        Arc::make_mut(&mut self.methods)
    }

    /// The constants, to change (shared with the isolation baseline like the methods).
    pub fn consts_mut(&mut self) -> &mut Vec<(SymId, ConstEntry)> {
        Arc::make_mut(&mut self.consts)
    }

    pub fn new(kind: ClassKind, superclass: Value, alloc: AllocKind) -> ClassBody {
        ClassBody {
            name: None,
            temporary_name: false,
            name_set_by_user: false,
            superclass,
            kind,
            attached: Value::NIL,
            methods: Arc::default(),
            consts: Arc::default(),
            const_index: SymMap::default(),
            cvars: Vec::new(),
            ivars: Vec::new(),
            iv_index: SymMap::default(),
            iv_names: Vec::new(),
            includes: Vec::new(),
            prepends: Vec::new(),
            alloc,
            lexical_parent: Value::NIL,
            subclasses: Vec::new(),
            ancestors_cache: RefCell::new(None),
            method_cache: RefCell::new(SymMap::default()),
            refined: false,
            refined_class: Value::NIL,
            refinement_owner: Value::NIL,
            refinements: Value::NIL,
            uninitialized: false,
        }
    }

    pub fn const_get(&self, name: SymId) -> Option<&ConstEntry> {
        self.const_index.get(&name).map(|&i| &self.consts[i].1)
    }

    pub fn const_set(&mut self, name: SymId, value: Value) {
        self.const_set_at(name, value, None);
    }

    /// Sets a constant, recording where it was assigned.
    pub fn const_set_at(&mut self, name: SymId, value: Value, location: Option<(std::sync::Arc<str>, u32)>) {
        if let Some(&i) = self.const_index.get(&name) {
            let e = &mut self.consts_mut()[i].1;
            e.value = value;
            e.autoload = None;
            e.location = location;
        } else {
            self.const_index.insert(name, self.consts.len());
            self.consts_mut().push((name, ConstEntry { value, private: false, deprecated: false, autoload: None, location }));
        }
    }

    pub fn const_remove(&mut self, name: SymId) -> Option<ConstEntry> {
        let i = self.const_index.remove(&name)?;
        let (_, e) = self.consts_mut().remove(i);
        for (_, idx) in self.const_index.iter_mut() {
            if *idx > i {
                *idx -= 1;
            }
        }
        Some(e)
    }

    /// Index of instance variable `name` in instances' layout, adding it if new.
    pub fn ivar_slot(&mut self, name: SymId) -> u32 {
        if let Some(&i) = self.iv_index.get(&name) {
            return i;
        }
        let i = self.iv_names.len() as u32;
        self.iv_names.push(name);
        self.iv_index.insert(name, i);
        i
    }

    pub fn is_module(&self) -> bool {
        self.kind == ClassKind::Module
    }

    pub fn is_singleton(&self) -> bool {
        self.kind == ClassKind::Singleton
    }
}

/// The body of a class or module value. The caller guarantees `v` is an `RClass`.
#[inline(always)]
pub fn body<'a>(v: Value) -> &'a mut ClassBody {
    debug_assert!(crate::object::is_type(v, crate::object::ObjType::Class));
    // SAFETY: v is an RClass whose body Box lives as long as the slot.
    unsafe { &mut (*v.as_ptr::<RClass>()).body }
}

/// The class path of `k` as far as it can be told without running Ruby code (for the
/// allocator, which records it in allocation sites): its name, `#<Class:Name>` for the
/// metaclass of a named module, an address description otherwise; None for nil.
pub fn static_path(k: Value) -> Option<Arc<str>> {
    if !is_class_or_module(k) {
        return None;
    }
    let b = body(k);
    if let Some(n) = b.name {
        return Some(Arc::from(crate::core::string::to_rust_string_lossy(n)));
    }
    let desc = match b.kind {
        ClassKind::Singleton => match static_path(b.attached) {
            Some(inner) => format!("#<Class:{inner}>"),
            None => format!("#<Class:0x{:016x}>", b.attached.raw()),
        },
        ClassKind::Module => format!("#<Module:0x{:016x}>", k.raw()),
        ClassKind::Class => format!("#<Class:0x{:016x}>", k.raw()),
    };
    Some(Arc::from(desc))
}

pub fn is_class_or_module(v: Value) -> bool {
    crate::object::is_type(v, crate::object::ObjType::Class)
}

pub fn is_module(v: Value) -> bool {
    is_class_or_module(v) && body(v).kind == ClassKind::Module
}

pub fn is_class(v: Value) -> bool {
    is_class_or_module(v) && body(v).kind != ClassKind::Module
}

pub fn mark_class(v: Value, m: &mut Marker<'_>) {
    let b = body(v);
    m.mark(b.name.unwrap_or(Value::NIL));
    m.mark(b.superclass);
    m.mark(b.attached);
    m.mark(b.lexical_parent);
    m.mark(b.refined_class);
    m.mark(b.refinement_owner);
    m.mark(b.refinements);
    for me in b.methods.values() {
        me.mark(m);
    }
    for (_, c) in b.consts.iter() {
        m.mark(c.value);
        if let Some(a) = c.autoload {
            m.mark(a);
        }
    }
    for (_, v) in &b.cvars {
        m.mark(*v);
    }
    for (_, v) in &b.ivars {
        m.mark(*v);
    }
    m.mark_all(&b.includes);
    m.mark_all(&b.prepends);
    // Cached entries may be stale; their values are kept alive while cached.
    for (_, me) in b.method_cache.borrow().values() {
        if let Some(me) = me {
            me.mark(m);
        }
    }
}

/// # Safety
/// `p` is a dead RClass slot.
pub unsafe fn finalize_class(p: *mut RBasic) {
    std::ptr::drop_in_place(&mut (*(p as *mut RClass)).body);
}

// ---- ancestry ----

/// The method resolution order of `klass` (see the module invariants).
pub fn ancestors(ctx: &Ctx, klass: Value) -> Rc<Vec<Value>> {
    let epoch = ctx.vm().method_epoch();
    let b = body(klass);
    if let Some((e, list)) = &*b.ancestors_cache.borrow() {
        if *e == epoch {
            return list.clone();
        }
    }
    let sup = if b.superclass.is_nil() { None } else { Some(ancestors(ctx, b.superclass)) };
    let mut own = Vec::new();
    linearize(klass, &mut own);
    let mut list: Vec<Value> = Vec::with_capacity(own.len() + sup.as_ref().map_or(0, |s| s.len()));
    // Prepended modules (before `klass` itself) stay even when the superclass has them too,
    // as in CRuby; an included module the superclass already has is skipped.
    let mut prepended = true;
    for m in own {
        prepended &= m != klass;
        let in_super = sup.as_ref().is_some_and(|s| s.contains(&m));
        if m == klass || prepended || !in_super {
            list.push(m);
        }
    }
    if let Some(s) = sup {
        list.extend(s.iter().copied());
    }
    let list = Rc::new(list);
    *b.ancestors_cache.borrow_mut() = Some((epoch, list.clone()));
    list
}

/// prepends (newest first, each linearized), the module itself, includes (newest first).
fn linearize(m: Value, out: &mut Vec<Value>) {
    let b = body(m);
    for &p in b.prepends.iter().rev() {
        let mut sub = Vec::new();
        linearize(p, &mut sub);
        for x in sub {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
    if !out.contains(&m) {
        out.push(m);
    }
    for &i in b.includes.iter().rev() {
        let mut sub = Vec::new();
        linearize(i, &mut sub);
        for x in sub {
            if !out.contains(&x) {
                out.push(x);
            }
        }
    }
}

/// Finds the method `mid` for instances of `klass`, or `None` (also for undefined ones).
pub fn find_method(ctx: &Ctx, klass: Value, mid: SymId) -> Option<Arc<MethodEntry>> {
    let epoch = ctx.vm().method_epoch();
    let b = body(klass);
    if let Some((e, me)) = b.method_cache.borrow().get(&mid) {
        if *e == epoch {
            return me.clone();
        }
    }
    let found = find_method_uncached(ctx, klass, mid);
    b.method_cache.borrow_mut().insert(mid, (epoch, found.clone()));
    found
}

/// `find_method` without the reference-count traffic of cloning the `Arc` (two atomic
/// operations): the entry stays owned by `klass`'s method cache. The reference is valid only
/// until that cache changes, so the caller must be done with it before any Ruby code runs or
/// any method is defined.
pub fn find_method_ref<'a>(ctx: &Ctx, klass: Value, mid: SymId) -> Option<&'a MethodEntry> {
    let epoch = ctx.vm().method_epoch();
    let b = body(klass);
    let hit = b.method_cache.borrow().get(&mid).and_then(|(e, me)| if *e == epoch { Some(me.as_ref().map(Arc::as_ptr)) } else { None });
    let p = match hit {
        Some(p) => p,
        None => {
            find_method(ctx, klass, mid)?;
            b.method_cache.borrow().get(&mid).and_then(|(_, me)| me.as_ref().map(Arc::as_ptr))
        }
    }?;
    // SAFETY: the cache owns an `Arc` to the entry; see the lifetime rule above.
    Some(unsafe { &*p })
}

pub fn find_method_uncached(ctx: &Ctx, klass: Value, mid: SymId) -> Option<Arc<MethodEntry>> {
    let anc = ancestors(ctx, klass);
    for &m in anc.iter() {
        if let Some(me) = body(m).methods.get(&mid) {
            if me.is_undefined() {
                return None;
            }
            if matches!(me.body, MethodBody::ZSuper) {
                // Visibility changed in a subclass: the body is found further up.
                let inner = find_super_method(ctx, klass, m, mid)?;
                return Some(Arc::new(MethodEntry {
                    name: me.name,
                    original_name: inner.original_name,
                    owner: inner.owner,
                    visibility: me.visibility,
                    body: inner.body.clone(),
                }));
            }
            return Some(me.clone());
        }
    }
    None
}

/// The method `mid` found after `owner` in `klass`'s ancestors (for `super`).
pub fn find_super_method(ctx: &Ctx, klass: Value, owner: Value, mid: SymId) -> Option<Arc<MethodEntry>> {
    find_super_method_at(ctx, klass, owner, 0, mid).map(|(me, _)| me)
}

/// The method `super` finds for `mid` above occurrence `skip` (0 = the first) of `owner`
/// in `klass`'s ancestors, with the occurrence of its own owner it was found at.
pub fn find_super_method_at(ctx: &Ctx, klass: Value, owner: Value, skip: u32, mid: SymId) -> Option<(Arc<MethodEntry>, u32)> {
    let anc = ancestors(ctx, klass);
    let start = match anc.iter().enumerate().filter(|(_, &m)| m == owner).nth(skip as usize) {
        Some((i, _)) => i + 1,
        // A module's method bound (`UnboundMethod#bind`) to an object whose class does
        // not include the module: `super` goes on as if the module sat just below the
        // object's class.
        None if skip == 0 && is_module(owner) => 0,
        None => return None,
    };
    for (i, &m) in anc.iter().enumerate().skip(start) {
        if let Some(me) = body(m).methods.get(&mid) {
            if me.is_undefined() {
                return None;
            }
            // `public :m` in a class: the method itself is further up.
            if matches!(me.body, MethodBody::ZSuper) {
                continue;
            }
            let occurrence = anc[..i].iter().filter(|&&x| x == me.owner).count() as u32;
            return Some((me.clone(), occurrence));
        }
    }
    None
}

/// Methods of a class or module (not a singleton class) that are private however they are
/// defined (`def`, `define_method`, `alias_method`).
pub fn always_private(ctx: &Ctx, klass: Value, name: SymId) -> bool {
    body(klass).kind != ClassKind::Singleton
        && matches!(&*ctx.sym_name(name), b"initialize" | b"initialize_copy" | b"initialize_clone" | b"initialize_dup" | b"respond_to_missing?")
}

/// Adds or replaces a method entry and invalidates caches.
pub fn add_method(ctx: &Ctx, klass: Value, me: MethodEntry) {
    let name = me.name;
    body(klass).methods_mut().insert(name, Arc::new(me));
    ctx.vm().bump_method_epoch();
}

/// Defines a builtin method (the one way builtins are registered).
pub fn define_builtin(ctx: &Ctx, klass: Value, name: &str, f: BuiltinFn, arity: Arity, safety: ThreadSafety, visibility: Visibility, kw: bool) {
    let mid = ctx.intern(name);
    add_method(
        ctx,
        klass,
        MethodEntry { name: mid, original_name: mid, owner: klass, visibility, body: MethodBody::Builtin { f, arity, safety, kw } },
    );
}

/// True if `module` is `klass` or among its ancestors.
pub fn includes_module(ctx: &Ctx, klass: Value, module: Value) -> bool {
    if klass == module {
        return true;
    }
    // A class is among another's ancestors only as one of its superclasses (classes are
    // never mixed in): the superclass chain is shorter than the ancestors and needs no
    // cache.
    if is_class_or_module(klass) && is_class_or_module(module) && body(module).kind == ClassKind::Class {
        let mut k = body(klass).superclass;
        while is_class_or_module(k) {
            if k == module {
                return true;
            }
            k = body(k).superclass;
        }
        return false;
    }
    ancestors(ctx, klass).contains(&module)
}

/// `klass`'s own part of its ancestors: its prepended modules, itself and the modules it
/// includes that its superclass does not have.
pub fn own_ancestors(ctx: &Ctx, klass: Value) -> Vec<Value> {
    let sup = body(klass).superclass;
    let own = ancestors(ctx, klass);
    let rest = if sup.is_nil() { 0 } else { ancestors(ctx, sup).len() };
    own[..own.len().saturating_sub(rest)].to_vec()
}

/// The nearest non-singleton class (skipping singleton classes).
pub fn real_class(mut klass: Value) -> Value {
    while is_class_or_module(klass) && body(klass).kind == ClassKind::Singleton {
        klass = body(klass).superclass;
    }
    klass
}

/// Marks `v` as a module (set at creation).
pub fn set_module_flag(v: Value) {
    basic(v).flags |= FL_MODULE;
}
