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
use std::collections::{HashMap, VecDeque};

use crate::heap::Marker;
use crate::thread::Ctx;
use crate::value::Value;

/// One entry of a weak table; `seq` orders the entries as they were added.
#[derive(Copy, Clone)]
pub struct WeakEntry {
    pub key: Value,
    pub value: Value,
    seq: u64,
}

/// A WeakMap (keys compared by identity; key and value both weak) or a WeakKeyMap (keys
/// compared by `eql?`/`hash`; keys weak, values ephemerons). The table only finds keys
/// by hash and identity; callers compare with `eql?` themselves (it runs Ruby code).
pub struct WeakTable {
    pub by_identity: bool,
    /// Entries grouped by hash: a key's bits for identity tables, `key.hash` otherwise.
    buckets: HashMap<u64, Vec<WeakEntry>>,
    len: usize,
    next_seq: u64,
}

// The entries are deliberately not marked: this is what makes them weak.
crate::data_obj!(WeakTable);

impl WeakTable {
    pub fn new(by_identity: bool) -> WeakTable {
        WeakTable { by_identity, buckets: HashMap::new(), len: 0, next_seq: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> Vec<WeakEntry> {
        let mut all: Vec<WeakEntry> = self.buckets.values().flatten().copied().collect();
        all.sort_by_key(|e| e.seq);
        all
    }

    /// The keys stored under hash `h`.
    pub fn keys_with_hash(&self, h: u64) -> Vec<Value> {
        self.buckets.get(&h).map_or(Vec::new(), |b| b.iter().map(|e| e.key).collect())
    }

    /// The entry whose key is `key` itself, under hash `h`.
    pub fn get_mut(&mut self, h: u64, key: Value) -> Option<&mut WeakEntry> {
        self.buckets.get_mut(&h).and_then(|b| b.iter_mut().find(|e| e.key == key))
    }

    /// Sets the value of the entry whose key is `key` itself, or adds an entry.
    pub fn insert(&mut self, h: u64, key: Value, value: Value) {
        if let Some(e) = self.get_mut(h, key) {
            e.value = value;
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.buckets.entry(h).or_default().push(WeakEntry { key, value, seq });
        self.len += 1;
    }

    /// Removes the entry whose key is `key` itself; returns its value.
    pub fn remove(&mut self, h: u64, key: Value) -> Option<Value> {
        let b = self.buckets.get_mut(&h)?;
        let i = b.iter().position(|e| e.key == key)?;
        let e = b.remove(i);
        if b.is_empty() {
            self.buckets.remove(&h);
        }
        self.len -= 1;
        Some(e.value)
    }

    pub fn clear(&mut self) {
        self.buckets.clear();
        self.len = 0;
    }

    /// Drops the entries whose key (or, in a WeakMap, value) did not survive marking.
    fn prune(&mut self, m: &Marker<'_>) {
        let by_identity = self.by_identity;
        let mut len = 0;
        self.buckets.retain(|_, b| {
            b.retain(|e| m.is_marked(e.key) && (!by_identity || m.is_marked(e.value)));
            len += b.len();
            !b.is_empty()
        });
        self.len = len;
    }

    /// Marks the values of a WeakKeyMap whose keys are marked; true if any was new.
    fn mark_ephemerons(&self, m: &mut Marker<'_>) -> bool {
        let mut progress = false;
        for e in self.buckets.values().flatten() {
            if m.is_marked(e.key) && !m.is_marked(e.value) {
                m.mark(e.value);
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
    pub pending: RefCell<VecDeque<Finalizer>>,
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
                    pending.push_back(f);
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

/// Gives `copy` the finalizers of `orig` (`dup` and `clone` copy them, as in CRuby).
pub fn copy_finalizers(ctx: &mut Ctx, copy: Value, orig: Value) {
    let callables = match ctx.vm().objspace.finalizers.borrow().get(&(orig.raw() as usize)) {
        Some(f) => f.callables.clone(),
        None => return,
    };
    // `object_id` may allocate (a Bignum id): the callables stay rooted through `orig`'s entry.
    let id = crate::core::object::object_id(ctx, copy);
    ctx.vm().objspace.finalizers.borrow_mut().insert(copy.raw() as usize, Finalizer { id, callables });
}

/// Calls the finalizers of collected objects (at a safepoint, after `GC.start`).
pub fn run_pending(ctx: &mut Ctx) {
    let os = &ctx.vm().objspace;
    if os.running.get() || os.pending.borrow().is_empty() {
        return;
    }
    os.running.set(true);
    loop {
        // Taken out of `pending` (a root) and protected by `call_finalizer` before anything
        // can allocate.
        let next = ctx.vm().objspace.pending.borrow_mut().pop_front();
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
