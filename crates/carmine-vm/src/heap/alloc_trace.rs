//! Allocation sites for `ObjectSpace.trace_object_allocations` (library `objspace`): where
//! each object allocated while tracing is on was made.
//!
//! Invariants:
//! - While tracing is off nothing here runs on allocation: a thread's allocation fast path
//!   tests one flag it already tests for `GC.stress` (`Ctx::alloc_hooked`), and only the
//!   slow path records a site (`Ctx::record_alloc_site`).
//! - Sites are keyed by slot address. The sweep forgets the site of each object it frees
//!   (unless `keep_freed`, set by `trace_object_allocations_debug_start`), so a reused slot
//!   does not report an earlier object's site.
//! - The table holds no Ruby values (paths and class paths are Rust strings), so it is not
//!   a GC root and needs no marking.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::symbol::SymId;

/// Where one object was allocated.
#[derive(Clone)]
pub struct AllocSite {
    pub path: Arc<str>,
    pub line: u32,
    /// The class path of the method running at the allocation (a builtin's owner for an
    /// allocation inside a builtin), if any.
    pub class_path: Option<Arc<str>>,
    pub method_id: Option<SymId>,
    /// `GC.count` at the allocation.
    pub generation: u64,
}

#[derive(Default)]
pub struct AllocTraceState {
    /// Nesting depth of `trace_object_allocations_start` (0: not tracing).
    pub depth: usize,
    /// Keep the sites of freed objects (`trace_object_allocations_debug_start`).
    pub keep_freed: bool,
    pub sites: HashMap<usize, AllocSite>,
}

#[derive(Default)]
pub struct AllocTrace {
    /// Tracing is on: threads started now record allocation sites too.
    pub on: AtomicBool,
    state: Mutex<AllocTraceState>,
}

impl AllocTrace {
    pub fn lock(&self) -> MutexGuard<'_, AllocTraceState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn is_on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }
}
