//! Per-run isolation for embedding (seed 002, made automatic): what one run of a script
//! changes in the VM is undone when it ends, so that the next run sees the state the
//! host left.
//!
//! Invariants:
//! - A `Baseline` records every class and module alive when it was taken (their method
//!   tables, constants, included and prepended modules) and the method and constant
//!   epochs then. It stays valid while those epochs do not move outside runs; a run that
//!   moves them is undone against it, after which the epochs it records are the current
//!   ones again. A host change between runs (a method defined from C, a shared run)
//!   moves an epoch, and the next run takes a new baseline.
//! - A `RunSnapshot` records what has no class epoch: global variables, the loaded
//!   features, `main`'s class and instance variables, Object's class variables and the
//!   `at_exit` list. An isolated run puts the VM back exactly as its snapshot records, so
//!   the runtime keeps one snapshot and reuses it for the next run while it is still
//!   `is_current` (nothing outside runs changed those parts: `Vm::globals_epoch` is the
//!   one it last saw, the rest compares equal), instead of copying the VM's state per run.
//!   Its `globals_epoch` is the epoch at which the globals table was last known to equal
//!   the snapshot: an unchanged epoch at the end of a run means the run set no global.
//!   A snapshot is shared (`Rc`) by the runs started from it; whoever drops the last
//!   reference releases it (`release`).
//! - Every value either record holds is kept alive by one Array of its own in
//!   `Vm::roots` (an overwritten constant's old value may have no other reference).
//! - Undoing never runs Ruby code except `at_exit` blocks the run registered (run at its
//!   end, as its program's exit handlers) and `remove_instance_variable` on `main`.
//! - A run that suspends (`runtime::task`) while others use the VM has its changes moved
//!   out of the VM (`RunSnapshot::swap_out`: the VM is put back as at the snapshot, the
//!   changes kept in a `Swapped`) and back in when it resumes (`Swapped::swap_in`), so
//!   between two steps of any runs the VM is always as the host left it and each run
//!   sees only its own changes.

use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use crate::core::module::{body, ConstEntry, MethodBody, MethodEntry};
use crate::core::{array, object};
use crate::object::ObjType;
use crate::symbol::{sym, SymId, SymMap};
use crate::vm::GlobalEntry;
use crate::thread::Ctx;
use crate::value::Value;

struct ClassState {
    klass: Value,
    methods: Arc<SymMap<Arc<MethodEntry>>>,
    consts: Arc<Vec<(SymId, ConstEntry)>>,
    includes: Vec<Value>,
    prepends: Vec<Value>,
    /// `subclasses` is not a GC root (nor pruned when a class dies): the classes a run
    /// made are taken off it again here.
    subclasses: Vec<Value>,
}

/// The classes and modules of the VM as the host left them.
pub struct Baseline {
    definition_epoch: u64,
    const_epoch: u64,
    classes: Vec<ClassState>,
    holder: Value,
}

/// What one run may change that no class epoch tracks.
pub struct RunSnapshot {
    /// `Vm::globals_epoch` when the table last equalled `globals`.
    globals_epoch: Cell<u64>,
    globals: Vec<(SymId, Value, usize)>,
    /// How many features were loaded (`Vm::loaded` mirrors `$LOADED_FEATURES`).
    loaded_len: usize,
    /// The `$LOADED_FEATURES` and `$LOAD_PATH` Arrays (read-only globals: replacing one
    /// moves `globals_epoch`), and their elements in `loaded_features` / `load_path`.
    feature_list: Value,
    path_list: Value,
    loaded_features: Vec<Value>,
    load_path: Vec<Value>,
    main_klass: Value,
    main_ivars: Vec<(SymId, Value)>,
    object_cvars: Vec<(SymId, Value)>,
    at_exit_len: usize,
    holder: Value,
}

fn root(ctx: &mut Ctx, values: Vec<Value>) -> Value {
    let a = array::from_vec(ctx, values);
    super::host::gc_register(ctx, a);
    a
}

fn unroot(ctx: &Ctx, holder: Value) {
    super::host::gc_unregister(ctx, holder);
}

/// The values a method entry references (what `MethodEntry::mark` marks): an entry held
/// only by these records (a method the run replaced, or one it defined and that is
/// swapped out) must keep its code alive.
fn method_values(me: &MethodEntry, out: &mut Vec<Value>) {
    out.push(me.owner);
    match &me.body {
        MethodBody::Iseq { iseq, cref } => {
            out.push(*iseq);
            out.push(*cref);
        }
        MethodBody::Proc(p) => out.push(*p),
        MethodBody::Alias(me) => method_values(me, out),
        _ => {}
    }
}

impl ClassState {
    /// `k` as it is now.
    fn of(k: Value) -> ClassState {
        let b = body(k);
        ClassState { klass: k, methods: b.methods.clone(), consts: b.consts.clone(), includes: b.includes.clone(), prepends: b.prepends.clone(), subclasses: b.subclasses.clone() }
    }

    fn values(&self, out: &mut Vec<Value>) {
        out.push(self.klass);
        for me in self.methods.values() {
            method_values(me, out);
        }
        for (_, e) in self.consts.iter() {
            out.push(e.value);
            if let Some(a) = e.autoload {
                out.push(a);
            }
        }
        out.extend(&self.includes);
        out.extend(&self.prepends);
        out.extend(&self.subclasses);
    }

    /// Whether the class's methods, ancestry or constants differ from this record (its
    /// subclasses do not count: they change with every class made).
    fn differs(&self) -> (bool, bool, bool) {
        let b = body(self.klass);
        let methods = !Arc::ptr_eq(&b.methods, &self.methods) && !(b.methods.len() == self.methods.len() && b.methods.iter().all(|(k, me)| self.methods.get(k).is_some_and(|old| Arc::ptr_eq(old, me))));
        let ancestry = b.includes != self.includes || b.prepends != self.prepends;
        let consts = !Arc::ptr_eq(&b.consts, &self.consts) && !(b.consts.len() == self.consts.len() && b.consts.iter().zip(self.consts.iter()).all(|((n1, e1), (n2, e2))| n1 == n2 && e1.value == e2.value && e1.autoload == e2.autoload && e1.private == e2.private));
        (methods, ancestry, consts)
    }

    /// Puts the class back as recorded; (methods or ancestry changed, constants changed).
    fn apply(&self) -> (bool, bool) {
        let (methods, ancestry, consts) = self.differs();
        let b = body(self.klass);
        if methods {
            b.methods = self.methods.clone();
        }
        if ancestry {
            b.includes = self.includes.clone();
            b.prepends = self.prepends.clone();
        }
        if b.subclasses != self.subclasses {
            b.subclasses = self.subclasses.clone();
        }
        if consts {
            b.consts = self.consts.clone();
            b.const_index = b.consts.iter().enumerate().map(|(i, (n, _))| (*n, i)).collect();
        }
        (methods || ancestry, consts)
    }
}

impl Baseline {
    /// Whether the VM's classes may differ from this baseline for reasons outside runs.
    pub fn is_current(&self, ctx: &Ctx) -> bool {
        self.definition_epoch == ctx.vm().definition_epoch() && self.const_epoch == ctx.vm().const_epoch()
    }

    pub fn take(ctx: &mut Ctx) -> Baseline {
        let mut klasses = Vec::new();
        ctx.vm().heap.lock().for_each_object(&mut |p| {
            // SAFETY: p is a live object slot; the heap lock is held.
            if unsafe { (*p).obj_type() } == ObjType::Class {
                klasses.push(Value::from_ptr(p));
            }
        });
        let mut keep = Vec::new();
        let classes: Vec<ClassState> = klasses
            .into_iter()
            .map(|k| {
                let st = ClassState::of(k);
                st.values(&mut keep);
                st
            })
            .collect();
        let holder = root(ctx, keep);
        Baseline { definition_epoch: ctx.vm().definition_epoch(), const_epoch: ctx.vm().const_epoch(), classes, holder }
    }

    pub fn release(self, ctx: &Ctx) {
        unroot(ctx, self.holder);
    }

    /// Puts every recorded class back as recorded, if a run moved an epoch.
    pub fn restore(&mut self, ctx: &mut Ctx) {
        if self.is_current(ctx) {
            return;
        }
        let (mut methods_changed, mut consts_changed) = (false, false);
        for st in &self.classes {
            let (m, c) = st.apply();
            methods_changed |= m;
            consts_changed |= c;
        }
        if methods_changed {
            ctx.vm().bump_method_epoch();
        }
        if consts_changed {
            ctx.vm().bump_const_epoch();
        }
        self.definition_epoch = ctx.vm().definition_epoch();
        self.const_epoch = ctx.vm().const_epoch();
    }

    /// The recorded classes whose state a run changed, as they are now (nothing when no
    /// epoch moved).
    fn changes(&self, ctx: &Ctx) -> Vec<ClassState> {
        if self.is_current(ctx) {
            return Vec::new();
        }
        self.classes
            .iter()
            .filter(|st| {
                let (m, a, c) = st.differs();
                m || a || c || body(st.klass).subclasses != st.subclasses
            })
            .map(|st| ClassState::of(st.klass))
            .collect()
    }
}

/// What a suspended run changed, out of the VM until it resumes (see the module
/// invariants). Each field is None (or empty) when the run left that part alone.
pub struct Swapped {
    globals: Option<SymMap<GlobalEntry>>,
    loaded_features: Option<Vec<Value>>,
    load_path: Option<Vec<Value>>,
    loaded: Option<HashSet<String>>,
    main_klass: Option<Value>,
    main_ivars: Option<Vec<(SymId, Value)>>,
    object_cvars: Option<Vec<(SymId, Value)>>,
    /// `at_exit` blocks the run registered, oldest first.
    at_exit: Vec<Value>,
    classes: Vec<ClassState>,
    last_status: Value,
    holder: Value,
}

/// Whether Array `a` (anything else counts as unchanged) no longer holds `before`.
fn array_differs(a: Value, before: &[Value]) -> bool {
    array::is_array(a) && **array::rarray(a).items() != *before
}

fn array_changed(ctx: &Ctx, id: SymId, before: &[Value]) -> Option<Vec<Value>> {
    let a = crate::core::globals::raw(ctx, id);
    if array_differs(a, before) {
        Some(array::to_vec(a))
    } else {
        None
    }
}

fn replace_array(ctx: &mut Ctx, id: SymId, with: &[Value]) {
    let a = crate::core::globals::raw(ctx, id);
    if array::is_array(a) {
        let v = array::from_vec(ctx, with.to_vec());
        let _ = ctx.call_str(a, "replace", &[v]);
    }
}

impl Swapped {
    /// Puts the run's changes back into the VM (which is as at the run's snapshot).
    pub fn swap_in(self, ctx: &mut Ctx) {
        if let Some(g) = self.globals {
            *ctx.vm().globals.borrow_mut() = g;
            crate::core::globals::changed(ctx);
        }
        if let Some(f) = &self.loaded_features {
            replace_array(ctx, sym::DOLLAR_LOADED_FEATURES, f);
        }
        if let Some(p) = &self.load_path {
            replace_array(ctx, sym::DOLLAR_LOAD_PATH, p);
        }
        if let Some(l) = self.loaded {
            *ctx.vm().loaded.borrow_mut() = l;
        }
        let main = ctx.vm().main_obj.get();
        if let Some(k) = self.main_klass {
            crate::object::basic(main).klass = k;
            crate::heap::write_barrier(main, k);
            ctx.vm().bump_method_epoch();
        }
        if let Some(ivars) = &self.main_ivars {
            set_ivars(ctx, main, ivars);
        }
        if let Some(c) = self.object_cvars {
            body(ctx.c().object).cvars = c;
        }
        ctx.vm().at_exit.borrow_mut().extend(self.at_exit.iter().copied());
        if !self.classes.is_empty() {
            for st in &self.classes {
                st.apply();
            }
            ctx.vm().bump_method_epoch();
            ctx.vm().bump_const_epoch();
        }
        ctx.last_status = self.last_status;
        unroot(ctx, self.holder);
    }
}

/// The `at_exit` blocks registered after the first `len`, last first (taken off the VM's
/// list).
pub fn take_at_exit_after(ctx: &Ctx, len: usize) -> Vec<Value> {
    let mut list = ctx.vm().at_exit.borrow_mut();
    if list.len() <= len {
        return Vec::new();
    }
    let mut mine = list.split_off(len);
    mine.reverse();
    mine
}

/// Makes `obj`'s instance variables exactly `ivars`.
fn set_ivars(ctx: &mut Ctx, obj: Value, ivars: &[(SymId, Value)]) {
    if object::ivars_are(ctx, obj, ivars) {
        return;
    }
    let now = object::ivar_list(ctx, obj);
    for (id, _) in now {
        if !ivars.iter().any(|(n, _)| *n == id) {
            let _ = ctx.call_str(obj, "remove_instance_variable", &[Value::symbol(id)]);
        }
    }
    for &(id, v) in ivars {
        let _ = object::ivar_set(ctx, obj, id, v);
    }
}

impl RunSnapshot {
    pub fn take(ctx: &mut Ctx) -> RunSnapshot {
        let features = crate::core::globals::raw(ctx, sym::DOLLAR_LOADED_FEATURES);
        let loaded_features = if array::is_array(features) { array::to_vec(features) } else { Vec::new() };
        let path = crate::core::globals::raw(ctx, sym::DOLLAR_LOAD_PATH);
        let load_path = if array::is_array(path) { array::to_vec(path) } else { Vec::new() };
        let (globals, mut keep) = {
            let g = ctx.vm().globals.borrow();
            let mut keep = Vec::with_capacity(g.len() + loaded_features.len() + load_path.len() + 8);
            let globals: Vec<(SymId, Value, usize)> = g
                .iter()
                .map(|(&id, e)| {
                    keep.push(e.value);
                    (id, e.value, e.traces.len())
                })
                .collect();
            (globals, keep)
        };
        keep.extend(&loaded_features);
        keep.extend(&load_path);
        let main = ctx.vm().main_obj.get();
        let main_klass = crate::object::basic(main).klass;
        let main_ivars = object::ivar_list(ctx, main);
        keep.extend(main_ivars.iter().map(|i| i.1));
        let object_cvars = body(ctx.c().object).cvars.clone();
        keep.extend(object_cvars.iter().map(|c| c.1));
        keep.push(main_klass);
        let loaded_len = ctx.vm().loaded.borrow().len();
        let at_exit_len = ctx.vm().at_exit.borrow().len();
        let holder = root(ctx, keep);
        let globals_epoch = Cell::new(ctx.vm().globals_epoch.get());
        RunSnapshot { globals_epoch, globals, loaded_len, feature_list: features, path_list: path, loaded_features, load_path, main_klass, main_ivars, object_cvars, at_exit_len, holder }
    }

    /// Whether the VM is (still) as this snapshot records it, so that a new run may start
    /// from it. Allocates nothing.
    pub fn is_current(&self, ctx: &Ctx) -> bool {
        let vm = ctx.vm();
        let main = vm.main_obj.get();
        self.globals_epoch.get() == vm.globals_epoch.get()
            && vm.loaded.borrow().len() == self.loaded_len
            && vm.at_exit.borrow().len() == self.at_exit_len
            && crate::object::basic(main).klass == self.main_klass
            && !array_differs(self.feature_list, &self.loaded_features)
            && !array_differs(self.path_list, &self.load_path)
            && body(ctx.c().object).cvars == self.object_cvars
            && object::ivars_are(ctx, main, &self.main_ivars)
    }

    /// Lets the values the snapshot holds be collected (when `s` is its last reference).
    #[inline]
    pub fn release(ctx: &Ctx, s: Rc<RunSnapshot>) {
        // The runtime usually keeps the snapshot for the next run.
        if Rc::strong_count(&s) > 1 {
            return;
        }
        if let Ok(s) = Rc::try_unwrap(s) {
            unroot(ctx, s.holder);
        }
    }

    /// How many `at_exit` blocks were registered when the snapshot was taken.
    pub fn at_exit_len(&self) -> usize {
        self.at_exit_len
    }

    /// Puts the VM back as the snapshot records it, at the end of a run.
    pub fn restore(&self, ctx: &mut Ctx) {
        self.reset(ctx);
        ctx.stacks.errinfo = Value::NIL;
        ctx.stacks.root_svar = Value::NIL;
        ctx.last_status = Value::NIL;
    }

    /// Puts back what the snapshot records (globals, features, `main`, Object's class
    /// variables).
    fn reset(&self, ctx: &mut Ctx) {
        if self.globals_epoch.get() != ctx.vm().globals_epoch.get() {
            self.reset_globals(ctx);
        }
        for (id, a, before) in [(sym::DOLLAR_LOADED_FEATURES, self.feature_list, &self.loaded_features), (sym::DOLLAR_LOAD_PATH, self.path_list, &self.load_path)] {
            if array_differs(a, before) {
                replace_array(ctx, id, before);
            }
        }
        if ctx.vm().loaded.borrow().len() != self.loaded_len {
            // The features the run required are forgotten with their constants, so a later
            // run that requires them loads them again.
            let names: HashSet<String> = self.loaded_features.iter().filter(|&&f| crate::core::string::is_string(f)).map(|&f| crate::core::string::to_rust_string_lossy(f)).collect();
            ctx.vm().loaded.borrow_mut().retain(|f| names.contains(f));
        }
        let main = ctx.vm().main_obj.get();
        if crate::object::basic(main).klass != self.main_klass {
            crate::object::basic(main).klass = self.main_klass;
            crate::heap::write_barrier(main, self.main_klass);
            ctx.vm().bump_method_epoch();
        }
        set_ivars(ctx, main, &self.main_ivars);
        let object_body = body(ctx.c().object);
        if object_body.cvars != self.object_cvars {
            object_body.cvars = self.object_cvars.clone();
        }
    }

    /// Puts the globals table back as recorded (a run changed it).
    fn reset_globals(&self, ctx: &mut Ctx) {
        {
            let mut g = ctx.vm().globals.borrow_mut();
            // Fast path: a table of the same size iterates in the snapshot's order (nothing
            // was inserted or removed); the values are compared and put back in one pass.
            let same_order = g.len() == self.globals.len() && g.iter_mut().zip(&self.globals).all(|((&id, e), &(sid, v, traces))| {
                if id != sid {
                    return false;
                }
                e.value = v;
                e.traces.truncate(traces);
                true
            });
            if !same_order {
                if g.len() != self.globals.len() {
                    // Ruby cannot remove a global variable: a run that made new ones grew the
                    // table.
                    let before: HashSet<SymId> = self.globals.iter().map(|g| g.0).collect();
                    g.retain(|id, _| before.contains(id));
                }
                for &(id, v, traces) in &self.globals {
                    if let Some(e) = g.get_mut(&id) {
                        e.value = v;
                        e.traces.truncate(traces);
                    }
                }
            }
        }
        crate::core::globals::changed(ctx);
        self.globals_epoch.set(ctx.vm().globals_epoch.get());
    }

    /// At a suspension of the run: moves what it changed out of the VM, which is left as
    /// at this snapshot (and its classes as in `baseline`). None when it changed nothing.
    pub fn swap_out(&self, ctx: &mut Ctx, baseline: Option<&mut Baseline>) -> Option<Swapped> {
        let globals = {
            let g = ctx.vm().globals.borrow();
            let changed = self.globals_epoch.get() != ctx.vm().globals_epoch.get() && (g.len() != self.globals.len() || self.globals.iter().any(|&(id, v, t)| g.get(&id).is_none_or(|e| e.value != v || e.traces.len() != t)));
            changed.then(|| g.clone())
        };
        let loaded_features = array_changed(ctx, sym::DOLLAR_LOADED_FEATURES, &self.loaded_features);
        let load_path = array_changed(ctx, sym::DOLLAR_LOAD_PATH, &self.load_path);
        let loaded = (ctx.vm().loaded.borrow().len() != self.loaded_len).then(|| ctx.vm().loaded.borrow().clone());
        let main = ctx.vm().main_obj.get();
        let klass = crate::object::basic(main).klass;
        let main_klass = (klass != self.main_klass).then_some(klass);
        let ivars = object::ivar_list(ctx, main);
        let main_ivars = (ivars != self.main_ivars).then_some(ivars);
        let cvars = &body(ctx.c().object).cvars;
        let object_cvars = (*cvars != self.object_cvars).then(|| cvars.clone());
        let at_exit = {
            let mut list = ctx.vm().at_exit.borrow_mut();
            let n = self.at_exit_len.min(list.len());
            list.split_off(n)
        };
        let classes = baseline.as_ref().map(|b| b.changes(ctx)).unwrap_or_default();
        let last_status = ctx.last_status;
        let clean = globals.is_none() && loaded_features.is_none() && load_path.is_none() && loaded.is_none() && main_klass.is_none() && main_ivars.is_none() && object_cvars.is_none() && at_exit.is_empty() && classes.is_empty() && last_status.is_nil();
        if clean {
            return None;
        }
        let mut keep = Vec::new();
        if let Some(g) = &globals {
            for e in g.values() {
                keep.push(e.value);
                keep.extend(&e.traces);
            }
        }
        keep.extend(loaded_features.iter().flatten());
        keep.extend(load_path.iter().flatten());
        keep.extend(main_klass);
        keep.extend(main_ivars.iter().flatten().map(|i| i.1));
        keep.extend(object_cvars.iter().flatten().map(|c| c.1));
        keep.extend(&at_exit);
        for st in &classes {
            st.values(&mut keep);
        }
        keep.push(last_status);
        let holder = root(ctx, keep);
        self.reset(ctx);
        if let Some(b) = baseline {
            b.restore(ctx);
        }
        ctx.last_status = Value::NIL;
        Some(Swapped { globals, loaded_features, load_path, loaded, main_klass, main_ivars, object_cvars, at_exit, classes, last_status, holder })
    }
}
