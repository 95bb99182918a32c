//! The GC module and GC::Profiler: control of the collector and its statistics.
//!
//! Invariants:
//! - `GC.start` sweeps at once; other collections leave the sweep to the allocator
//!   (`crate::heap`), and `GC.latest_gc_info(:state)` is `:sweeping` until it ends.
//! - Objects never move. `GC.compact` is a full collection that moves nothing (compaction
//!   is an optimisation no program can observe but through these numbers), so programs
//!   that compact before forking work unchanged.

use crate::core::{float, hash, module_methods, string};
use crate::heap::page::SLOT_SIZE;
use crate::heap::stats::{GcReason, GcRecord};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn sym(ctx: &mut Ctx, name: &str) -> Value {
    Value::symbol(ctx.intern(name))
}

fn gc_start(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::gc::collect_for(ctx, GcReason::Method);
    // As CRuby's GC.start, run the finalizers of what was freed before returning.
    crate::weak::run_pending(ctx);
    Ok(Value::NIL)
}

/// `GC.compact`: a full collection; nothing moves (see the module invariants).
fn gc_compact(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::gc::collect_for(ctx, GcReason::Method);
    latest_compact_info(ctx)
}

/// `GC.latest_compact_info`: what the last compaction considered and moved (nothing).
fn latest_compact_info(ctx: &mut Ctx) -> Result<Value> {
    let h = hash::new(ctx);
    for k in ["considered", "moved", "moved_up", "moved_down"] {
        let key = sym(ctx, k);
        let v = hash::new(ctx);
        hash::aset(ctx, h, key, v)?;
    }
    Ok(h)
}

fn gc_latest_compact_info(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    latest_compact_info(ctx)
}

fn gc_auto_compact(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().heap.lock().stats.auto_compact))
}

fn gc_set_auto_compact(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    ctx.vm().heap.lock().stats.auto_compact = args.pos[0].truthy();
    Ok(args.pos[0])
}

fn gc_enable(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let was = ctx.vm().gc_disabled.swap(false, std::sync::atomic::Ordering::Relaxed);
    Ok(Value::bool(was))
}

fn gc_disable(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let was = ctx.vm().gc_disabled.swap(true, std::sync::atomic::Ordering::Relaxed);
    Ok(Value::bool(was))
}

fn gc_count(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(ctx.vm().heap.lock().stats.count as i64))
}

fn gc_stress(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().gc_stress.load(std::sync::atomic::Ordering::Relaxed)))
}

fn gc_set_stress(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    ctx.set_gc_stress(args.pos[0].truthy());
    Ok(args.pos[0])
}

fn gc_total_time(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(ctx.vm().heap.lock().stats.time_ns as i64))
}

fn gc_measure_total_time(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().heap.lock().stats.measure_total_time))
}

fn gc_set_measure_total_time(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    ctx.vm().heap.lock().stats.measure_total_time = args.pos[0].truthy();
    Ok(args.pos[0])
}

/// The numbers of `GC.stat`, in CRuby 3.4's order.
fn stat_entries(ctx: &mut Ctx) -> Vec<(&'static str, i64)> {
    let h = ctx.vm().heap.lock();
    let st = &h.stats;
    let total = h.total_slots() as i64;
    let live = h.live_slots() as i64;
    let pages = h.page_count() as i64;
    let freed = st.total_freed_objects as i64;
    let weak = ctx.vm().objspace.tables.borrow().len() as i64;
    let ms = |ns: u64| (ns / 1_000_000) as i64;
    vec![
        ("count", st.count as i64),
        ("time", ms(st.time_ns)),
        ("marking_time", ms(st.mark_ns)),
        ("sweeping_time", ms(st.sweep_ns)),
        ("heap_allocated_pages", pages),
        ("heap_empty_pages", 0),
        ("heap_allocatable_slots", 0),
        ("heap_available_slots", total),
        ("heap_live_slots", live),
        ("heap_free_slots", total - live),
        ("heap_final_slots", 0),
        ("heap_marked_slots", st.live_after_last_gc as i64),
        ("heap_eden_pages", pages),
        ("total_allocated_pages", st.total_allocated_pages as i64),
        ("total_freed_pages", st.total_freed_pages as i64),
        ("total_allocated_objects", freed + live),
        ("total_freed_objects", freed),
        ("malloc_increase_bytes", h.malloc_increase as i64),
        ("malloc_increase_bytes_limit", h.malloc_limit as i64),
        ("minor_gc_count", (st.count - st.major_count) as i64),
        ("major_gc_count", st.major_count as i64),
        ("compact_count", 0),
        ("read_barrier_faults", 0),
        ("total_moved_objects", 0),
        ("remembered_wb_unprotected_objects", h.remembered_count() as i64),
        ("remembered_wb_unprotected_objects_limit", 0),
        ("old_objects", h.old_objects as i64),
        ("old_objects_limit", h.old_limit as i64),
        ("oldmalloc_increase_bytes", h.major_malloc_increase as i64),
        ("oldmalloc_increase_bytes_limit", h.malloc_limit as i64),
        ("weak_references_count", weak),
        ("retained_weak_references_count", weak),
    ]
}

/// The argument forms shared by `GC.stat` and `GC.latest_gc_info`: none or nil (a new
/// Hash), a Hash (filled in and returned), or a Symbol (that one value).
fn answer(ctx: &mut Ctx, arg: Option<Value>, entries: Vec<(&'static str, Value)>) -> Result<Value> {
    let target = match arg {
        None | Some(Value::NIL) => hash::new(ctx),
        Some(k) if k.is_symbol() => {
            let name = ctx.sym_str(k.as_symbol().unwrap_or_default());
            return match entries.iter().find(|(n, _)| *n == name) {
                Some(&(_, v)) => Ok(v),
                None => Err(ctx.arg_error(&format!("unknown key: {name}"))),
            };
        }
        Some(h) if hash::is_hash(h) => h,
        Some(_) => return Err(ctx.type_error("non-hash or symbol given")),
    };
    for (n, v) in entries {
        let key = sym(ctx, n);
        hash::aset(ctx, target, key, v)?;
    }
    Ok(target)
}

fn gc_stat(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let entries = stat_entries(ctx).into_iter().map(|(n, v)| (n, Value::fixnum(v))).collect();
    answer(ctx, args.pos.first().copied(), entries)
}

/// `GC.latest_gc_info`: why the last collection ran (before the first: a collection
/// for allocation, as CRuby reports at boot).
fn gc_latest_gc_info(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (latest, sweeping) = {
        let heap = ctx.vm().heap.lock();
        (heap.stats.latest, heap.is_sweeping())
    };
    let rec = latest.unwrap_or(GcRecord { reason: GcReason::NewObj, major: true, have_finalizer: false, gc_time: 0.0, invoke_time: 0.0, heap_use_size: 0, heap_total_size: 0, heap_total_objects: 0 });
    let weak = ctx.vm().objspace.tables.borrow().len() as i64;
    let entries = vec![
        ("major_by", if latest.is_some() && rec.major { sym(ctx, rec.reason.major_by()) } else { Value::NIL }),
        ("need_major_by", Value::NIL),
        ("gc_by", sym(ctx, rec.reason.gc_by())),
        ("have_finalizer", Value::bool(rec.have_finalizer)),
        ("immediate_sweep", Value::bool(rec.immediate_sweep())),
        ("state", sym(ctx, if sweeping { "sweeping" } else { "none" })),
        ("weak_references_count", Value::fixnum(weak)),
        ("retained_weak_references_count", Value::fixnum(weak)),
    ];
    answer(ctx, args.pos.first().copied(), entries)
}

/// `GC.config`: Carmine's collector has no settings to change; the Hash names it.
fn config_hash(ctx: &mut Ctx, with_implementation: bool) -> Result<Value> {
    let h = hash::new(ctx);
    if with_implementation {
        let k = sym(ctx, "implementation");
        let v = string::new_utf8(ctx, "carmine");
        hash::aset(ctx, h, k, v)?;
    }
    Ok(h)
}

fn gc_config(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    match args.pos.first().copied() {
        None | Some(Value::NIL) => config_hash(ctx, true),
        Some(h) if hash::is_hash(h) => {
            let k = sym(ctx, "implementation");
            if hash::lookup(ctx, h, k)?.is_some() {
                return Err(ctx.arg_error("Attempting to set read-only key \"Implementation\""));
            }
            config_hash(ctx, false)
        }
        Some(_) => Err(ctx.arg_error("GC.config: argument must be a Hash")),
    }
}

// ---- GC::Profiler ----

fn profiler_enabled(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.vm().heap.lock().stats.profiling))
}

fn profiler_enable(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    ctx.vm().heap.lock().stats.profiling = true;
    Ok(Value::NIL)
}

fn profiler_disable(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    ctx.vm().heap.lock().stats.profiling = false;
    Ok(Value::NIL)
}

fn profiler_clear(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    ctx.vm().heap.lock().stats.records.clear();
    Ok(Value::NIL)
}

fn profiler_raw_data(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let records = ctx.vm().heap.lock().stats.records.clone();
    let out = crate::core::array::new(ctx);
    for r in records {
        let h = hash::new(ctx);
        let flags = hash::new(ctx);
        let flag_entries = [
            ("major_by", if r.major { sym(ctx, r.reason.major_by()) } else { Value::NIL }),
            ("gc_by", sym(ctx, r.reason.gc_by())),
            ("have_finalizer", Value::bool(r.have_finalizer)),
            ("immediate_sweep", Value::bool(r.immediate_sweep())),
        ];
        for (k, v) in flag_entries {
            let k = sym(ctx, k);
            hash::aset(ctx, flags, k, v)?;
        }
        let k = sym(ctx, "GC_FLAGS");
        hash::aset(ctx, h, k, flags)?;
        let gc_time = float::new(ctx, r.gc_time);
        let invoke = float::new(ctx, r.invoke_time);
        let entries = [
            ("GC_TIME", gc_time),
            ("GC_INVOKE_TIME", invoke),
            ("HEAP_USE_SIZE", Value::fixnum(r.heap_use_size as i64)),
            ("HEAP_TOTAL_SIZE", Value::fixnum(r.heap_total_size as i64)),
            ("HEAP_TOTAL_OBJECTS", Value::fixnum(r.heap_total_objects as i64)),
            ("MOVED_OBJECTS", Value::fixnum(0)),
            ("GC_IS_MARKED", Value::TRUE),
        ];
        for (k, v) in entries {
            let k = sym(ctx, k);
            hash::aset(ctx, h, k, v)?;
        }
        crate::core::array::push(ctx, out, h);
    }
    Ok(out)
}

/// The table `GC::Profiler.result` and `report` print (empty when nothing was recorded).
fn result_text(ctx: &mut Ctx) -> String {
    let h = ctx.vm().heap.lock();
    if h.stats.records.is_empty() {
        return String::new();
    }
    let mut s = format!("GC {} invokes.\n", h.stats.count);
    s.push_str("Index    Invoke Time(sec)       Use Size(byte)     Total Size(byte)         Total Object                    GC Time(ms)\n");
    for (i, r) in h.stats.records.iter().enumerate() {
        s.push_str(&format!(
            "{:5} {:19.3} {:20} {:20} {:20} {:30.20}\n",
            i + 1,
            r.invoke_time,
            r.heap_use_size,
            r.heap_total_size,
            r.heap_total_objects,
            r.gc_time * 1000.0
        ));
    }
    s
}

fn profiler_result(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let s = result_text(ctx);
    Ok(string::new_utf8(ctx, &s))
}

fn profiler_report(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let out = match args.pos.first() {
        Some(&io) => io,
        None => crate::core::globals::get(ctx, crate::symbol::sym::DOLLAR_STDOUT)?,
    };
    let s = result_text(ctx);
    let s = string::new_utf8(ctx, &s);
    ctx.call_str(out, "write", &[s])?;
    Ok(Value::NIL)
}

fn profiler_total_time(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let t: f64 = ctx.vm().heap.lock().stats.records.iter().map(|r| r.gc_time).sum();
    Ok(float::new(ctx, t))
}

pub fn init(ctx: &mut Ctx) {
    let g = ctx.c().gc;
    crate::methods!(ctx, g, [
        ("start", gc_start, [0], Unsafe, Singleton, Kw),
        ("garbage_collect", gc_start, [0], Unsafe, Kw),
        ("compact", gc_compact, [0], Unsafe, Singleton),
        ("verify_compaction_references", gc_compact, [0], Unsafe, Singleton, Kw),
        ("latest_compact_info", gc_latest_compact_info, [0], Unsafe, Singleton),
        ("auto_compact", gc_auto_compact, [0], Unsafe, Singleton),
        ("auto_compact=", gc_set_auto_compact, [1], Unsafe, Singleton),
        ("enable", gc_enable, [0], Unsafe, Singleton),
        ("disable", gc_disable, [0], Unsafe, Singleton),
        ("count", gc_count, [0], Unsafe, Singleton),
        ("stress", gc_stress, [0], Safe, Singleton),
        ("stress=", gc_set_stress, [1], Unsafe, Singleton),
        ("stat", gc_stat, [0..=1], Unsafe, Singleton),
        ("latest_gc_info", gc_latest_gc_info, [0..=1], Unsafe, Singleton),
        ("total_time", gc_total_time, [0], Unsafe, Singleton),
        ("measure_total_time", gc_measure_total_time, [0], Unsafe, Singleton),
        ("measure_total_time=", gc_set_measure_total_time, [1], Unsafe, Singleton),
        ("config", gc_config, [0..=1], Unsafe, Singleton),
    ]);
    define_constants(ctx, g);
    let profiler = module_methods::define_module_under(ctx, g, "Profiler");
    crate::methods!(ctx, profiler, [
        ("enabled?", profiler_enabled, [0], Unsafe, Singleton),
        ("enable", profiler_enable, [0], Unsafe, Singleton),
        ("disable", profiler_disable, [0], Unsafe, Singleton),
        ("clear", profiler_clear, [0], Unsafe, Singleton),
        ("raw_data", profiler_raw_data, [0], Unsafe, Singleton),
        ("result", profiler_result, [0], Unsafe, Singleton),
        ("report", profiler_report, [0..=1], Unsafe, Singleton),
        ("total_time", profiler_total_time, [0], Unsafe, Singleton),
    ]);
}

/// `GC::INTERNAL_CONSTANTS` (the heap's geometry, which memory tools read) and `GC::OPTS`.
fn define_constants(ctx: &mut Ctx, g: Value) {
    use crate::heap::page::{SizeClass, PAGE_SIZE, SMALL_SLOT_SIZE};
    let h = hash::new(ctx);
    let entries: [(&str, Value); 10] = [
        ("DEBUG", Value::FALSE),
        ("BASE_SLOT_SIZE", Value::fixnum(SMALL_SLOT_SIZE as i64)),
        ("RVALUE_OVERHEAD", Value::fixnum(0)),
        ("RVALUE_SIZE", Value::fixnum(SMALL_SLOT_SIZE as i64)),
        ("HEAP_PAGE_OBJ_LIMIT", Value::fixnum(SizeClass::Small.object_slots() as i64)),
        ("HEAP_PAGE_BITMAP_SIZE", Value::fixnum((PAGE_SIZE / SMALL_SLOT_SIZE).div_ceil(64) as i64 * 8)),
        ("HEAP_PAGE_SIZE", Value::fixnum(PAGE_SIZE as i64)),
        ("HEAP_COUNT", Value::fixnum(crate::heap::page::SIZE_CLASSES.len() as i64)),
        ("RVARGC_MAX_ALLOCATE_SIZE", Value::fixnum(SLOT_SIZE as i64)),
        ("RVALUE_OLD_AGE", Value::fixnum(0)),
    ];
    for (k, v) in entries {
        let k = sym(ctx, k);
        let _ = hash::aset(ctx, h, k, v);
    }
    crate::core::object::freeze(h);
    let opts = crate::core::array::new(ctx);
    crate::core::object::freeze(opts);
    let id = ctx.intern("INTERNAL_CONSTANTS");
    crate::core::module::body(g).const_set(id, h);
    let id = ctx.intern("OPTS");
    crate::core::module::body(g).const_set(id, opts);
}
