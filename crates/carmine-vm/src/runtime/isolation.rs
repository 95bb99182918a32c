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
//! - A `RunSnapshot` records, per run, what has no epoch: global variables, the loaded
//!   features, `main`'s class and instance variables, Object's class variables and the
//!   `at_exit` list.
//! - Every value either record holds is kept alive by one Array of its own in
//!   `Vm::roots` (an overwritten constant's old value may have no other reference).
//! - Undoing never runs Ruby code except `at_exit` blocks the run registered (run at its
//!   end, as its program's exit handlers) and `remove_instance_variable` on `main`.

use std::collections::HashSet;
use std::sync::Arc;

use crate::core::module::{body, ConstEntry, MethodEntry};
use crate::core::{array, object};
use crate::object::ObjType;
use crate::symbol::{sym, SymId, SymMap};
use crate::thread::Ctx;
use crate::value::Value;

struct ClassState {
    klass: Value,
    methods: SymMap<Arc<MethodEntry>>,
    consts: Vec<(SymId, ConstEntry)>,
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

/// What one run may change that no epoch tracks.
pub struct RunSnapshot {
    globals: Vec<(SymId, Value, usize)>,
    /// How many features were loaded (`Vm::loaded` mirrors `$LOADED_FEATURES`).
    loaded_len: usize,
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
        let mut keep = klasses.clone();
        let classes: Vec<ClassState> = klasses
            .into_iter()
            .map(|k| {
                let b = body(k);
                keep.extend(b.consts.iter().map(|(_, e)| e.value));
                ClassState { klass: k, methods: b.methods.clone(), consts: b.consts.clone(), includes: b.includes.clone(), prepends: b.prepends.clone(), subclasses: b.subclasses.clone() }
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
            let b = body(st.klass);
            let same_methods = b.methods.len() == st.methods.len() && b.methods.iter().all(|(k, me)| st.methods.get(k).is_some_and(|old| Arc::ptr_eq(old, me)));
            if !same_methods {
                b.methods = st.methods.clone();
                methods_changed = true;
            }
            if b.includes != st.includes || b.prepends != st.prepends {
                b.includes = st.includes.clone();
                b.prepends = st.prepends.clone();
                methods_changed = true;
            }
            if b.subclasses != st.subclasses {
                b.subclasses = st.subclasses.clone();
            }
            let same_consts = b.consts.len() == st.consts.len() && b.consts.iter().zip(&st.consts).all(|((n1, e1), (n2, e2))| n1 == n2 && e1.value == e2.value && e1.autoload == e2.autoload && e1.private == e2.private);
            if !same_consts {
                b.consts = st.consts.clone();
                b.const_index = b.consts.iter().enumerate().map(|(i, (n, _))| (*n, i)).collect();
                consts_changed = true;
            }
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
}

impl RunSnapshot {
    pub fn take(ctx: &mut Ctx) -> RunSnapshot {
        let mut keep = Vec::new();
        let globals: Vec<(SymId, Value, usize)> = ctx.vm().globals.borrow().iter().map(|(&id, e)| (id, e.value, e.traces.len())).collect();
        keep.extend(globals.iter().map(|g| g.1));
        let features = crate::core::globals::raw(ctx, sym::DOLLAR_LOADED_FEATURES);
        let loaded_features = if array::is_array(features) { array::to_vec(features) } else { Vec::new() };
        let path = crate::core::globals::raw(ctx, sym::DOLLAR_LOAD_PATH);
        let load_path = if array::is_array(path) { array::to_vec(path) } else { Vec::new() };
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
        RunSnapshot { globals, loaded_len, loaded_features, load_path, main_klass, main_ivars, object_cvars, at_exit_len, holder }
    }

    /// The `at_exit` blocks the run registered, last first (taken off the VM's list).
    pub fn take_at_exit(&self, ctx: &Ctx) -> Vec<Value> {
        let mut list = ctx.vm().at_exit.borrow_mut();
        let n = self.at_exit_len.min(list.len());
        let mut mine = list.split_off(n);
        mine.reverse();
        mine
    }

    pub fn restore(mut self, ctx: &mut Ctx) {
        {
            let mut g = ctx.vm().globals.borrow_mut();
            // Ruby cannot remove a global variable: a run that made new ones grew the table.
            if g.len() != self.globals.len() {
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
        for (id, before) in [(sym::DOLLAR_LOADED_FEATURES, &self.loaded_features), (sym::DOLLAR_LOAD_PATH, &self.load_path)] {
            let a = crate::core::globals::raw(ctx, id);
            if array::is_array(a) && (array::len(a) != before.len() || (0..before.len()).any(|i| array::get(a, i) != before[i])) {
                let old = array::from_vec(ctx, before.clone());
                let _ = ctx.call_str(a, "replace", &[old]);
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
        let now = object::ivar_list(ctx, main);
        if now != self.main_ivars {
            for (id, _) in now {
                if !self.main_ivars.iter().any(|(n, _)| *n == id) {
                    let _ = ctx.call_str(main, "remove_instance_variable", &[Value::symbol(id)]);
                }
            }
            for &(id, v) in &self.main_ivars {
                let _ = object::ivar_set(ctx, main, id, v);
            }
        }
        let object_body = body(ctx.c().object);
        if object_body.cvars != self.object_cvars {
            object_body.cvars = std::mem::take(&mut self.object_cvars);
        }
        ctx.stacks.errinfo = Value::NIL;
        ctx.stacks.root_svar = Value::NIL;
        ctx.last_status = Value::NIL;
        unroot(ctx, self.holder);
    }
}
