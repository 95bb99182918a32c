//! GC and ObjectSpace.

use crate::core::{array, hash, module, object};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn gc_start(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::gc::collect(ctx);
    Ok(Value::NIL)
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

fn gc_stat(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (count, pages, live, freed, total_slots, free_slots, time_ns) = {
        let h = ctx.vm().heap.lock();
        (h.stats.count, h.page_count(), h.stats.live_after_last_gc, h.stats.total_freed_objects, h.total_slots(), h.free_slots(), h.stats.time_ns)
    };
    let entries: [(&str, i64); 7] = [
        ("count", count as i64),
        ("heap_allocated_pages", pages as i64),
        ("heap_live_slots", live as i64),
        ("total_freed_objects", freed as i64),
        ("heap_available_slots", total_slots as i64),
        ("heap_free_slots", free_slots as i64),
        ("time", (time_ns / 1_000_000) as i64),
    ];
    if let Some(&k) = args.pos.first() {
        if let Some(s) = k.as_symbol() {
            let name = ctx.sym_str(s);
            return Ok(entries.iter().find(|(n, _)| *n == name).map_or(Value::NIL, |(_, v)| Value::fixnum(*v)));
        }
    }
    let h = hash::new(ctx);
    for (n, v) in entries {
        let key = Value::symbol(ctx.intern(n));
        hash::aset(ctx, h, key, Value::fixnum(v))?;
    }
    Ok(h)
}

fn os_count_objects(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let (total, free) = {
        let h = ctx.vm().heap.lock();
        (h.total_slots(), h.free_slots())
    };
    let h = hash::new(ctx);
    let t = Value::symbol(ctx.intern("TOTAL"));
    let f = Value::symbol(ctx.intern("FREE"));
    hash::aset(ctx, h, t, Value::fixnum(total as i64))?;
    hash::aset(ctx, h, f, Value::fixnum(free as i64))?;
    Ok(h)
}

fn os_garbage_collect(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    crate::gc::collect(ctx);
    Ok(Value::NIL)
}

fn os_each_object(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Err(ctx.not_implemented("ObjectSpace.each_object"))
}

pub fn init(ctx: &mut Ctx) {
    let g = ctx.c().gc;
    crate::methods!(ctx, g, [
        ("start", gc_start, [0..], Unsafe, ModuleFunction, Kw),
        ("enable", gc_enable, [0], Unsafe, Singleton),
        ("disable", gc_disable, [0], Unsafe, Singleton),
        ("count", gc_count, [0], Safe, Singleton),
        ("stress", gc_stress, [0], Safe, Singleton),
        ("stress=", gc_set_stress, [1], Unsafe, Singleton),
        ("stat", gc_stat, [0..=1], Unsafe, Singleton),
    ]);
    let os = ctx.c().object_space;
    crate::methods!(ctx, os, [
        ("count_objects", os_count_objects, [0..=1], Unsafe, ModuleFunction),
        ("garbage_collect", os_garbage_collect, [0..], Unsafe, ModuleFunction, Kw),
        ("each_object", os_each_object, [0..=1], Unsafe, ModuleFunction),
    ]);
    let _ = (array::new, module::body, object::new_object);
}
