//! The collector driver: finds the roots of one VM and runs mark & sweep.
//!
//! Roots:
//! - the VM's tables (`mark_vm_roots`),
//! - each thread's value stack below `sp` and its frames (validated, since a slot may be
//!   stale), `$!`, recursion guards and `protected` values,
//! - each thread's native stack and callee-saved registers, conservatively,
//! - suspended fibers' VM and native stacks, through their Fiber objects (reachable from
//!   the running fiber's resumer chain, the root fiber, or Ruby references).
//!
//! - finalizers' callables (`weak`; weak tables are settled after marking),
//! - other threads' contexts and native stacks: they are in safe regions (outside the
//!   giant lock), with their stack tops recorded (`Ctx::safe_sp`).
//!
//! Invariant: the world is stopped during a collection: the collector runs on the thread
//! holding the giant lock, and every other thread of the VM is outside it. Sweeping is
//! lazy (see `crate::heap`): pages are swept by the allocator, under the giant lock too,
//! and always through `sweeping`, which keeps the VM's tables keyed by address in step.

use crate::heap::stack_scan::with_registers_spilled;
use std::time::Instant;

use crate::heap::page::PAGE_SIZE;
use crate::heap::stats::{GcReason, GcRecord};
use crate::heap::{HeapInner, Marker, SweepHook};
use std::collections::HashMap;
use crate::interp::frame::Frame;
use crate::object::{basic, ObjType, RBasic, FL_EXIVAR};
use crate::thread::{Ctx, Stacks};
use crate::vm::Vm;

/// A collection because the heap needs slots.
pub fn collect(ctx: &mut Ctx) {
    collect_for(ctx, GcReason::NewObj);
}

/// One collection: finish the last one's sweep, mark, settle weak references and
/// finalizers, then leave the pages to be swept as the allocator needs them (`GC.start`
/// and major collections sweep them all at once). Minor (old objects are neither traced nor freed, see
/// `crate::heap`) when the heap needs slots and the old objects are within their limit,
/// and on every other `GC.stress` collection; major otherwise.
pub fn collect_for(ctx: &mut Ctx, reason: GcReason) {
    ctx.drop_alloc_cache();
    let vm: &Vm = ctx.vm();
    let mut heap = vm.heap.lock();
    // The last collection's sweep, timed as such (`sweeping`), not as this one's.
    sweeping(vm, &mut heap, |heap, dead| heap.finish_sweep(dead));
    let start = std::time::Instant::now();
    let major = match reason {
        GcReason::NewObj | GcReason::YoungMalloc => heap.wants_major(),
        GcReason::Stress => heap.stats.count % 2 == 0 || heap.wants_major(),
        GcReason::Malloc | GcReason::Method => true,
    };
    let remembered = if major {
        heap.start_major();
        Vec::new()
    } else {
        heap.start_minor()
    };
    let queued_finalizers;
    let promoted;
    {
        let exivars = vm.generic_ivars.borrow();
        let c = &vm.c;
        let mut m = Marker::for_collection(&heap, [c.string, c.float, c.integer]);
        m.exivars = Some(&exivars);
        if !major {
            // Old objects are not traced: generic ivars are roots.
            for ivars in exivars.values() {
                for &(_, iv) in ivars {
                    m.mark(iv);
                }
            }
            m.trace_remembered(&remembered);
        }
        mark_vm_roots(vm, &mut m);
        mark_thread(ctx, &mut m);
        mark_other_threads(ctx, &mut m);
        let hi = ctx.native_stack_hi;
        with_registers_spilled(&mut |sp| {
            // SAFETY: [sp, hi) is the live part of this thread's native stack.
            unsafe { m.mark_range_conservative(sp, hi) };
        });
        m.drain();
        if !major && verify_enabled() {
            let bad = m.verify_old();
            if bad > 0 {
                eprintln!("[BUG] GC verify: {bad} references from old objects to unmarked objects (collection {})", heap.stats.count);
                std::process::abort();
            }
        }
        queued_finalizers = vm.objspace.after_mark(&mut m);
        promoted = m.promoted;
    }
    heap.old_objects += promoted;
    let marked = std::time::Instant::now();
    // Freed buffers go back to the kernel after a major collection, but not under
    // `GC.stress` (which collects at every allocation), nor when buffers were what filled
    // up: a program that allocates buffers that fast takes the freed ones again at once,
    // and each page given back would fault in anew (a forked worker building 44 KB
    // Strings faulted 12 times per String).
    // Buffers allocated since the last collection outweigh the slot pages: the dead ones
    // are most of the memory the program churns through, and a lazy sweep would keep
    // them allocated through the next cycle, which then allocates its own in fresh
    // memory (a forked worker building a 44 KB String per line faulted in about two
    // cycles' worth of them instead of one). Sweeping now costs the same page walk.
    let buffers_dominate = reason != GcReason::Stress && heap.malloc_increase > heap.page_count() * PAGE_SIZE;
    if major || reason != GcReason::YoungMalloc {
        heap.major_malloc_increase = 0;
    }
    let (_, live_bytes) = heap.start_sweep(major, major && !matches!(reason, GcReason::Stress | GcReason::Malloc | GcReason::YoungMalloc));
    let pages_before = heap.page_count();
    let wanted = heap.wanted_class;
    heap.resize_after_collection(live_bytes, major);
    if trace_enabled() {
        eprintln!(
            "gc {:4} {} {:?} live {:6.1} MB pages {} -> {} old {} promoted {} remembered {} need_major {} wanted {:?} classes {:?}",
            heap.stats.count,
            if major { "MAJOR" } else { "minor" },
            reason,
            live_bytes as f64 / 1e6,
            pages_before,
            heap.page_count(),
            heap.old_objects,
            promoted,
            remembered.len(),
            heap.need_major,
            wanted,
            heap.class_use_mb()
        );
    }
    let have_finalizer = queued_finalizers || !vm.objspace.pending.borrow().is_empty();
    record(&mut heap, reason, major, have_finalizer, start, marked, live_bytes);
    if buffers_dominate || heap.stats.latest.is_some_and(|r| r.immediate_sweep()) {
        // As CRuby's `GC.start` (`immediate_sweep: true`), everything dead is freed now.
        // So are a major collection's dead: only a major collection frees old objects,
        // the ones that hold big buffers (a String or Array that lived through minor
        // collections), and a lazy sweep kept those allocated, and the release hook
        // waiting, while the program went on to allocate the next ones (peak RSS of
        // bench/programs/str_build and json_parser, docs/benchmarks.md). Major
        // collections are few, so what lazy sweeping saves is kept for the others.
        sweeping(vm, &mut heap, |heap, dead| heap.finish_sweep(dead));
    }
    drop(heap);
    crate::runtime::limits::after_collection(vm);
    if have_finalizer {
        vm.interrupt.fetch_or(crate::interp::ops::INTERRUPT_FINALIZE, std::sync::atomic::Ordering::AcqRel);
    }
}

/// What the sweep does for each object it frees (`SweepHook`): it forgets the object's
/// generic instance variables, object id and allocation site, and notes a dying class.
pub struct DeadObjects<'a> {
    exivars: std::cell::RefMut<'a, HashMap<usize, Vec<(crate::symbol::SymId, crate::value::Value)>>>,
    ids: std::cell::RefMut<'a, HashMap<usize, u64>>,
    alloc_trace: std::sync::MutexGuard<'a, crate::heap::alloc_trace::AllocTraceState>,
    forget_sites: bool,
    class_died: bool,
}

impl SweepHook for DeadObjects<'_> {
    #[inline(always)]
    fn freeing(&mut self, p: *mut RBasic) {
        // SAFETY: p is a dead object slot; its header is still intact.
        let (flags, ty) = unsafe { ((*p).flags, (*p).obj_type()) };
        self.class_died |= ty == ObjType::Class;
        if flags & FL_EXIVAR != 0 {
            self.exivars.remove(&(p as usize));
        }
        if !self.ids.is_empty() {
            self.ids.remove(&(p as usize));
        }
        if self.forget_sites {
            self.alloc_trace.sites.remove(&(p as usize));
        }
    }
}

/// Runs `f`, which may sweep pages, with the `DeadObjects` its sweep needs. A dying class
/// makes caches keyed by class addresses miss (`Vm::class_freed`) before its slot can be
/// reused; when `f` ends the sweep of a major collection, the host's allocator gives
/// freed buffers back (the release hook, called with the heap locked). Time spent
/// sweeping counts in `GC.stat`'s `time` and `sweeping_time`.
pub fn sweeping<R>(vm: &Vm, heap: &mut HeapInner, f: impl FnOnce(&mut HeapInner, &mut DeadObjects<'_>) -> R) -> R {
    let start = (heap.is_sweeping() && heap.stats.measure_total_time).then(Instant::now);
    let alloc_trace = vm.alloc_trace.lock();
    let mut dead = DeadObjects {
        exivars: vm.generic_ivars.borrow_mut(),
        ids: vm.object_ids.borrow_mut(),
        forget_sites: !alloc_trace.keep_freed && !alloc_trace.sites.is_empty(),
        alloc_trace,
        class_died: false,
    };
    let r = f(heap, &mut dead);
    if dead.class_died {
        vm.class_freed();
    }
    if heap.take_release_request() {
        if let Some(release) = vm.host.release_memory.get() {
            release();
        }
    }
    if let Some(start) = start {
        let ns = start.elapsed().as_nanos() as u64;
        heap.stats.time_ns += ns;
        heap.stats.sweep_ns += ns;
    }
    r
}

/// Sweeps what the last collection left unswept: for whatever needs dead objects gone
/// (their object ids, `ObjectSpace._id2ref`), or mark bits clear (a marking outside a
/// collection, `ObjectSpace.reachable_objects_from`).
pub fn finish_sweep(vm: &Vm) {
    let mut heap = vm.heap.lock();
    sweeping(vm, &mut heap, |heap, dead| heap.finish_sweep(dead));
}

/// `CARMINE_GC_VERIFY=1`: after the marking of every minor collection, check that every
/// object an old object references is marked (a missing write barrier shows up here as
/// an abort instead of a use after free).
fn verify_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("CARMINE_GC_VERIFY").is_some_and(|v| v != "0"))
}

/// `CARMINE_GC_TRACE=1`: a line on stderr per collection (development aid).
fn trace_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("CARMINE_GC_TRACE").is_some_and(|v| v != "0"))
}

/// Updates the statistics and the profiler's records after a collection.
fn record(heap: &mut HeapInner, reason: GcReason, major: bool, have_finalizer: bool, start: Instant, marked: Instant, live_bytes: usize) {
    let end = Instant::now();
    let st = &mut heap.stats;
    st.count += 1;
    if major {
        st.major_count += 1;
    }
    if st.measure_total_time {
        st.time_ns += (end - start).as_nanos() as u64;
        st.mark_ns += (marked - start).as_nanos() as u64;
        st.sweep_ns += (end - marked).as_nanos() as u64;
    }
    let total = heap.total_slots() as u64;
    let rec = GcRecord {
        reason,
        major,
        have_finalizer,
        gc_time: (end - start).as_secs_f64(),
        invoke_time: (start - heap.stats.started).as_secs_f64(),
        heap_use_size: live_bytes as u64,
        heap_total_size: (heap.page_count() * PAGE_SIZE) as u64,
        heap_total_objects: total,
    };
    heap.stats.latest = Some(rec);
    if heap.stats.profiling {
        heap.stats.records.push(rec);
    }
}

pub fn mark_vm_roots(vm: &Vm, m: &mut Marker<'_>) {
    vm.c.each(&mut |v| m.mark(v));
    for g in vm.globals.borrow().values() {
        m.mark(g.value);
        m.mark_all(&g.traces);
    }
    m.mark_all(&vm.roots.borrow());
    m.mark_all(&vm.at_exit.borrow());
    m.mark(vm.main_obj.get());
    m.mark(vm.top_cref.get());
    m.mark_all(&vm.tracepoints.borrow());
    vm.objspace.mark_roots(m);
    crate::fiber::scheduler::mark_blocked(&vm.blocked_fibers.borrow(), m);
}

/// Marks the threads other than `ctx`'s (each stopped in a safe region) and empties their
/// allocation caches, which the sweep rebuilds.
fn mark_other_threads(ctx: &Ctx, m: &mut Marker<'_>) {
    let me = ctx as *const Ctx;
    for e in ctx.vm().threads.borrow().iter() {
        m.mark(e.obj);
        if e.ctx.is_null() || e.ctx as *const Ctx == me {
            continue;
        }
        // SAFETY: a listed context belongs to a live thread, which is outside the giant
        // lock (this thread holds it) and touches neither its context nor the heap.
        let other = unsafe { &mut *e.ctx };
        other.drop_alloc_cache();
        mark_thread(other, m);
        if other.safe_sp != 0 {
            // SAFETY: [safe_sp, hi) is the live part of that thread's native stack,
            // spilled registers included.
            unsafe { m.mark_range_conservative(other.safe_sp, other.native_stack_hi) };
        }
    }
}

pub fn mark_thread(ctx: &Ctx, m: &mut Marker<'_>) {
    mark_stacks(&ctx.stacks, m);
    m.mark(ctx.thread_obj);
    m.mark(ctx.fiber_obj);
    m.mark(ctx.last_status);
    m.mark(ctx.trace_raised);
    m.mark(ctx.scheduler);
    m.mark(ctx.host_fiber);
    m.mark(ctx.host_scheduler);
    ctx.fibers.mark(m);
    if let Some(d) = ctx.pending_data {
        // SAFETY: set by `new_data` for the duration of one allocation; the box is alive.
        unsafe { (*d).mark(m) };
    }
    let (p, n) = ctx.pending_values;
    if n > 0 {
        // SAFETY: set by `array::from_vec` for the duration of one allocation; the buffer
        // is alive and holds `n` values.
        for &v in unsafe { std::slice::from_raw_parts(p, n) } {
            m.mark_maybe(v);
        }
    }
}

/// Marks a fiber's execution state: values below `sp`, frames, `$!`, recursion guards,
/// protected values and catch tags.
pub fn mark_stacks(st: &Stacks, m: &mut Marker<'_>) {
    let sp = st.sp.min(st.stack.len());
    for &v in &st.stack[..sp] {
        m.mark_maybe(v);
    }
    for f in &st.frames {
        mark_frame(f, m);
    }
    m.mark(st.errinfo);
    for &(_, a, b) in &st.recursion {
        m.mark_maybe(a);
        m.mark_maybe(b);
    }
    m.mark_all(&st.protected);
    m.mark_all(&st.catch_tags);
    m.mark(st.root_env);
    m.mark(st.root_svar);
}

fn mark_frame(f: &Frame, m: &mut Marker<'_>) {
    m.mark(f.self_);
    m.mark(f.env);
    m.mark(f.outer);
    m.mark(f.cref);
    m.mark(f.iseq_val);
    m.mark(f.owner);
    m.mark(f.svar);
    m.mark(f.block.v);
}

/// Sets or clears the generic-ivar flag of `v` (objects other than RObject).
pub fn set_exivar_flag(v: crate::value::Value, on: bool) {
    basic(v).set(FL_EXIVAR, on);
}
