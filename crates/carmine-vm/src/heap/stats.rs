//! What the heap remembers about its collections: counters behind `GC.stat`, the cause
//! of the last collection (`GC.latest_gc_info`) and the records of `GC::Profiler`.
//!
//! Invariants:
//! - `count` counts all collections, `major_count` the major ones (the rest are minor:
//!   see `crate::heap`). `GC.start`'s and the other major collections (but `GC.stress`'s)
//!   sweep at once; the others leave pages to the allocator (`GcRecord::immediate_sweep`).
//! - Counters only grow; `GC::Profiler.clear` empties the records, not the counters.

/// Why a collection ran (CRuby's `gc_by` / `major_by`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub enum GcReason {
    /// The heap ran out of free slots.
    #[default]
    NewObj,
    /// Out-of-line storage grew past its limit (`malloc_limit`): a major collection.
    Malloc,
    /// Out-of-line storage grew past `HeapInner::young_malloc_limit`: a minor collection
    /// (major only when one is due anyway, as for `NewObj`).
    YoungMalloc,
    /// `GC.start` / `ObjectSpace.garbage_collect`.
    Method,
    /// `GC.stress`: every allocation collects.
    Stress,
}

impl GcReason {
    /// The `gc_by` symbol's name.
    pub fn gc_by(self) -> &'static str {
        match self {
            GcReason::NewObj | GcReason::Stress => "newobj",
            GcReason::Malloc | GcReason::YoungMalloc => "malloc",
            GcReason::Method => "method",
        }
    }

    /// The `major_by` symbol's name (for a major collection): why it was major.
    pub fn major_by(self) -> &'static str {
        match self {
            GcReason::NewObj | GcReason::YoungMalloc => "nofree",
            GcReason::Malloc => "oldmalloc",
            GcReason::Method => "force",
            GcReason::Stress => "stress",
        }
    }
}

impl GcRecord {
    /// Whether the collection sweeps every page before it returns (else the allocator
    /// sweeps them as it needs slots): `GC.start`, and the major collections, which are
    /// the ones that free old objects and their buffers (see `crate::gc::collect_for`).
    /// `GC.stress`'s stay lazy, so that stress runs go through the allocator's sweep.
    pub fn immediate_sweep(&self) -> bool {
        self.reason == GcReason::Method || (self.major && self.reason != GcReason::Stress)
    }
}

/// One collection, as `GC::Profiler.raw_data` shows it.
#[derive(Copy, Clone, Debug)]
pub struct GcRecord {
    pub reason: GcReason,
    /// A major collection (else minor: old objects neither traced nor freed).
    pub major: bool,
    pub have_finalizer: bool,
    /// Seconds the collection took.
    pub gc_time: f64,
    /// Seconds since the VM started, when the collection began.
    pub invoke_time: f64,
    /// Bytes of slots in use, and of all slots, after the collection.
    pub heap_use_size: u64,
    pub heap_total_size: u64,
    /// Slots in the heap.
    pub heap_total_objects: u64,
}

#[derive(Clone, Debug)]
pub struct GcStats {
    pub count: u64,
    pub major_count: u64,
    pub total_allocated_pages: u64,
    /// Pages whose memory was given back to the kernel.
    pub total_freed_pages: u64,
    pub total_freed_objects: u64,
    pub live_after_last_gc: u64,
    /// Nanoseconds spent collecting (while `measure_total_time` is on).
    pub time_ns: u64,
    pub mark_ns: u64,
    pub sweep_ns: u64,
    pub measure_total_time: bool,
    /// The last collection (None before the first).
    pub latest: Option<GcRecord>,
    /// `GC::Profiler`: on or off, and its records since the last `clear`.
    pub profiling: bool,
    pub records: Vec<GcRecord>,
    /// When the VM started (`GC_INVOKE_TIME` counts from it).
    pub started: std::time::Instant,
    /// `GC.auto_compact` (kept, never acted on: objects do not move).
    pub auto_compact: bool,
}

impl Default for GcStats {
    fn default() -> Self {
        GcStats {
            count: 0,
            major_count: 0,
            total_allocated_pages: 0,
            total_freed_pages: 0,
            total_freed_objects: 0,
            live_after_last_gc: 0,
            time_ns: 0,
            mark_ns: 0,
            sweep_ns: 0,
            measure_total_time: true,
            latest: None,
            profiling: false,
            records: Vec::new(),
            started: std::time::Instant::now(),
            auto_compact: false,
        }
    }
}
