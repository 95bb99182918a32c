//! Weak references and finalizers: what the collector does with objects it does not keep
//! alive on their own account (`ObjectSpace::WeakMap`, `ObjectSpace::WeakKeyMap`,
//! `ObjectSpace.define_finalizer`).
//!
//! Invariants:
//! - A weak table's entries live in Rust memory, invisible to marking. `tables` lists
//!   every weak table object (it is not a root). After marking, a collection drops the
//!   tables that died from the list and removes from the others every entry whose key
//!   (or, in a WeakMap, value) died, before the sweep frees those objects: a table never
//!   holds a freed object.
//! - WeakKeyMap values are ephemerons: marked only once their key is marked (so a value
//!   that refers to its own key does not keep the entry alive).
//! - `finalizers` maps an object's address to its object id and callables. The callables
//!   are roots, the object is not. When the object dies its entry moves to `pending` (a
//!   root too) and its callables are called later, at a safepoint or at exit, with the
//!   object id — never with the object, which is gone by then.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

use crate::heap::Marker;
use crate::thread::Ctx;
use crate::value::Value;

/// A WeakMap (keys compared by identity; key and value both weak) or a WeakKeyMap (keys
/// compared by `eql?`/`hash`; keys weak, values ephemerons).
pub struct WeakTable {
    pub by_identity: bool,
    /// Entries grouped by hash: a key's bits for identity tables, `key.hash` otherwise.
    pub buckets: HashMap<u64, Vec<(Value, Value)>>,
    pub len: usize,
}

// The entries are deliberately not marked: this is what makes them weak.
crate::data_obj!(WeakTable);

impl WeakTable {
    pub fn new(by_identity: bool) -> WeakTable {
        WeakTable { by_identity, buckets: HashMap::new(), len: 0 }
    }

    /// Every entry, in no particular order.
    pub fn entries(&self) -> Vec<(Value, Value)> {
        self.buckets.values().flatten().copied().collect()
    }

    /// Drops the entries whose key (or, in a WeakMap, value) did not survive marking.
    fn prune(&mut self, m: &Marker<'_>) {
        let by_identity = self.by_identity;
        let mut len = 0;
        self.buckets.retain(|_, b| {
            b.retain(|&(k, v)| m.is_marked(k) && (!by_identity || m.is_marked(v)));
            len += b.len();
            !b.is_empty()
        });
        self.len = len;
    }

    /// Marks the values of a WeakKeyMap whose keys are marked; true if any was new.
    fn mark_ephemerons(&self, m: &mut Marker<'_>) -> bool {
        let mut progress = false;
        for &(k, v) in self.buckets.values().flatten() {
            if m.is_marked(k) && !m.is_marked(v) {
                m.mark(v);
                progress = true;
            }
        }
        progress
    }
}

/// The callables to call with an object's id once the object is collected.
pub struct Finalizer {
    pub id: Value,
    pub callables: Vec<Value>,
}

#[derive(Default)]
pub struct ObjSpace {
    /// Weak table objects (see the module invariants).
    pub tables: RefCell<Vec<Value>>,
    /// Finalizers by object address.
    pub finalizers: RefCell<HashMap<usize, Finalizer>>,
    /// Finalizers of collected objects, to be called.
    pub pending: RefCell<Vec<Finalizer>>,
    /// Set while pending finalizers run (they are not run reentrantly).
    pub running: Cell<bool>,
}

impl ObjSpace {
    /// Marks what the finalizers hold (their callables and pending object ids).
    pub fn mark_roots(&self, m: &mut Marker<'_>) {
        for f in self.finalizers.borrow().values() {
            m.mark(f.id);
            m.mark_all(&f.callables);
        }
        for f in self.pending.borrow().iter() {
            m.mark(f.id);
            m.mark_all(&f.callables);
        }
    }

    /// Runs between marking and sweeping: marks ephemerons to a fixed point, queues the
    /// finalizers of objects that died and removes dead entries from weak tables.
    /// Returns true if finalizers were queued.
    pub fn after_mark(&self, m: &mut Marker<'_>) -> bool {
        let mut tables = self.tables.borrow_mut();
        loop {
            let mut progress = false;
            for &t in tables.iter() {
                if !m.is_marked(t) {
                    continue;
                }
                if let Some(w) = crate::object::data_ref::<WeakTable>(t) {
                    if !w.by_identity && w.mark_ephemerons(m) {
                        progress = true;
                    }
                }
            }
            if !progress {
                break;
            }
            m.drain();
        }
        let mut queued = false;
        {
            let mut fins = self.finalizers.borrow_mut();
            let dead: Vec<usize> = fins.keys().copied().filter(|&a| !m.is_marked(Value::from_raw(a as u64))).collect();
            let mut pending = self.pending.borrow_mut();
            for a in dead {
                if let Some(f) = fins.remove(&a) {
                    pending.push(f);
                    queued = true;
                }
            }
        }
        tables.retain(|&t| m.is_marked(t));
        for &t in tables.iter() {
            if let Some(w) = crate::object::data_ref::<WeakTable>(t) {
                w.prune(m);
            }
        }
        queued
    }
}

/// Calls the finalizers of collected objects (at a safepoint, after `GC.start`).
pub fn run_pending(ctx: &mut Ctx) {
    let os = &ctx.vm().objspace;
    if os.running.get() || os.pending.borrow().is_empty() {
        return;
    }
    os.running.set(true);
    loop {
        let next = {
            let mut p = ctx.vm().objspace.pending.borrow_mut();
            if p.is_empty() {
                None
            } else {
                Some(p.remove(0))
            }
        };
        let Some(f) = next else { break };
        call_finalizer(ctx, f);
    }
    ctx.vm().objspace.running.set(false);
}

/// At exit: calls every finalizer still defined, of live objects too, and those that
/// finalizers define meanwhile.
pub fn run_all_at_exit(ctx: &mut Ctx) {
    loop {
        {
            let os = &ctx.vm().objspace;
            let mut fins = os.finalizers.borrow_mut();
            let mut all: Vec<(usize, Finalizer)> = fins.drain().collect();
            // Oldest object ids first, as objects were made.
            all.sort_by_key(|(_, f)| f.id.as_fixnum().unwrap_or(i64::MAX));
            os.pending.borrow_mut().extend(all.into_iter().map(|(_, f)| f));
        }
        if ctx.vm().objspace.pending.borrow().is_empty() {
            break;
        }
        ctx.vm().objspace.running.set(false);
        run_pending(ctx);
    }
}

/// Calls one object's finalizers with its id. An exception in one is reported as a
/// warning (unless `$VERBOSE` is nil) and the next one still runs, as in CRuby.
fn call_finalizer(ctx: &mut Ctx, f: Finalizer) {
    let mark = ctx.protect(f.id);
    for &c in &f.callables {
        ctx.protect(c);
    }
    let saved_errinfo = ctx.stacks.errinfo;
    for &c in &f.callables {
        let e = match ctx.call_str(c, "call", &[f.id]) {
            Ok(_) => continue,
            Err(crate::error::Unwind::Raise(e)) => e,
            // `exit!`, `throw` and the like end nothing but this finalizer.
            Err(_) => continue,
        };
        if crate::core::globals::verbose_level(ctx) == 0 {
            continue;
        }
        let shown = crate::core::object::inspect_string(ctx, c).unwrap_or_default();
        let (path, line) = crate::core::kernel::caller_location(ctx);
        let at = if line == 0 { ctx.vm().script_name.borrow().clone() } else { format!("{path}:{line}") };
        crate::core::kernel::write_warning(ctx, &format!("{at}: warning: Exception in finalizer {shown}\n"));
        let report = crate::core::exception_report::uncaught_report(ctx, e);
        crate::core::io::flush_stdout(ctx);
        crate::core::io::write_stderr_fd(format!("{report}\n").as_bytes());
    }
    ctx.stacks.errinfo = saved_errinfo;
    ctx.unprotect(mark);
}
