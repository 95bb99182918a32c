//! `coverage.so`: line coverage (`Coverage.setup/start/resume/suspend/result/peek_result`)
//! in the legacy form (`{path => [counts]}`) and the `lines:` / `oneshot_lines:` modes.
//!
//! Invariants:
//! - `Vm::coverage` holds the measurement from `setup` until `result(stop: true)`. Files
//!   compiled while it exists are registered with a count of 0 for each line where a line
//!   event can happen (the first instruction of a line, as `TracePoint`'s `:line`) and nil
//!   elsewhere.
//! - While it runs, `Vm::tracing` is on, so the traced dispatch loop reports every line
//!   start to `hit`; suspended, nothing is counted.
//! - Branch and method coverage are not measured: asking for them raises
//!   NotImplementedError, and `supported?` says false.

use std::collections::HashMap;

use crate::core::{array, hash, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    /// `Coverage.start` without modes: results are bare Arrays.
    Legacy,
    Lines,
    OneshotLines,
}

pub struct State {
    mode: Mode,
    running: bool,
    /// Per file, in registration order: its path and the count of each line (None: no code).
    files: Vec<(String, Vec<Option<u64>>)>,
    index: HashMap<String, usize>,
}

/// Whether coverage is being counted (the dispatch loop must run traced).
pub fn running(ctx: &Ctx) -> bool {
    ctx.vm().coverage.borrow().as_ref().is_some_and(|s| s.running)
}

fn collect_lines(iseq: Value, out: &mut Vec<u32>) {
    let i = crate::compile::iseq::iseq_of(iseq);
    out.extend((0..i.lines.len()).filter_map(|pc| i.line_start(pc)));
    for &c in &i.children {
        collect_lines(c, out);
    }
}

/// A file compiled to `iseq` from `source`: measured if coverage is set up.
pub fn register(ctx: &Ctx, path: &str, iseq: Value, source: &[u8]) {
    let mut cov = ctx.vm().coverage.borrow_mut();
    let Some(state) = cov.as_mut() else { return };
    let n = source.split(|&b| b == b'\n').count() - usize::from(source.ends_with(b"\n"));
    let mut counts = vec![None; n];
    let mut lines = Vec::new();
    collect_lines(iseq, &mut lines);
    for l in lines {
        if let Some(c) = counts.get_mut(l as usize - 1) {
            *c = Some(0);
        }
    }
    match state.index.get(path) {
        Some(&i) => state.files[i].1 = counts,
        None => {
            state.index.insert(path.to_string(), state.files.len());
            state.files.push((path.to_string(), counts));
        }
    }
}

/// Line `line` of `path` starts executing.
pub fn hit(ctx: &Ctx, path: &str, line: u32) {
    let mut cov = ctx.vm().coverage.borrow_mut();
    let Some(state) = cov.as_mut().filter(|s| s.running) else { return };
    let Some(&i) = state.index.get(path) else { return };
    if let Some(Some(c)) = state.files[i].1.get_mut(line as usize - 1) {
        *c += 1;
    }
}

fn not_enabled(ctx: &mut Ctx) -> crate::error::Unwind {
    ctx.raise(ctx.c().runtime_error, "coverage measurement is not enabled")
}

/// The mode a `setup`/`start` argument asks for.
fn mode_of(ctx: &mut Ctx, args: &Args) -> Result<Mode> {
    let Some(&opt) = args.pos.first() else {
        return Ok(Mode::Legacy);
    };
    if opt.is_nil() {
        return Ok(Mode::Legacy);
    }
    let unsupported = |ctx: &mut Ctx, what: &str| ctx.raise(ctx.c().not_implemented_error, &format!("{what} coverage is not supported by Carmine (only lines and oneshot_lines)"));
    if let Some(id) = opt.as_symbol() {
        return if ctx.sym_str(id) == "all" { Err(unsupported(ctx, "branch and method")) } else { Err(ctx.type_error("no implicit conversion of Symbol into Hash")) };
    }
    if !hash::is_hash(opt) {
        let name = crate::core::object::type_name_for_error(ctx, opt);
        return Err(ctx.type_error(&format!("no implicit conversion of {name} into Hash")));
    }
    let flag = |ctx: &mut Ctx, k: &str| {
        let key = Value::symbol(ctx.intern(k));
        hash::get(opt, key).is_some_and(|v| v.truthy())
    };
    if flag(ctx, "branches") {
        return Err(unsupported(ctx, "branch"));
    }
    if flag(ctx, "methods") {
        return Err(unsupported(ctx, "method"));
    }
    let lines = flag(ctx, "lines");
    let oneshot = flag(ctx, "oneshot_lines");
    if lines && oneshot {
        return Err(ctx.raise(ctx.c().runtime_error, "cannot enable lines and oneshot_lines simultaneously"));
    }
    Ok(if oneshot { Mode::OneshotLines } else { Mode::Lines })
}

fn s_setup(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mode = mode_of(ctx, args)?;
    let mut cov = ctx.vm().coverage.borrow_mut();
    if cov.is_some() {
        drop(cov);
        return Err(ctx.raise(ctx.c().runtime_error, "coverage measurement is already setup"));
    }
    *cov = Some(Box::new(State { mode, running: false, files: Vec::new(), index: HashMap::new() }));
    Ok(Value::NIL)
}

fn set_running(ctx: &mut Ctx, on: bool) -> Result<()> {
    let mut cov = ctx.vm().coverage.borrow_mut();
    match cov.as_mut() {
        None => {
            drop(cov);
            let msg = if on { "coverage measurement is not set up yet" } else { "coverage measurement is not running" };
            Err(ctx.raise(ctx.c().runtime_error, msg))
        }
        Some(s) if !on && !s.running => {
            drop(cov);
            Err(ctx.raise(ctx.c().runtime_error, "coverage measurement is not running"))
        }
        Some(s) if on && s.running => {
            drop(cov);
            Err(ctx.raise(ctx.c().runtime_error, "coverage measurement is already running"))
        }
        Some(s) => {
            s.running = on;
            drop(cov);
            crate::core::tracepoint::refresh(ctx);
            Ok(())
        }
    }
}

fn s_start(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    s_setup(ctx, recv, args)?;
    set_running(ctx, true)?;
    Ok(Value::NIL)
}

fn s_resume(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    set_running(ctx, true)?;
    Ok(Value::NIL)
}

fn s_suspend(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    set_running(ctx, false)?;
    Ok(Value::NIL)
}

fn s_running_p(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(running(ctx)))
}

fn s_supported_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(id) = args.pos[0].as_symbol() else {
        let name = crate::core::object::type_name_for_error(ctx, args.pos[0]);
        return Err(ctx.type_error(&format!("wrong argument type {name} (expected Symbol)")));
    };
    Ok(Value::bool(matches!(ctx.sym_str(id).as_str(), "lines" | "oneshot_lines")))
}

/// The measurement as CRuby reports it.
fn snapshot(ctx: &mut Ctx) -> Result<Value> {
    let taken = ctx.vm().coverage.borrow().as_ref().map(|s| (s.mode, s.files.clone()));
    let Some((mode, files)) = taken else { return Err(not_enabled(ctx)) };
    let out = hash::new(ctx);
    for (path, counts) in files {
        let arr = array::new(ctx);
        match mode {
            Mode::OneshotLines => {
                for (i, c) in counts.iter().enumerate() {
                    if c.is_some_and(|c| c > 0) {
                        array::push(ctx, arr, Value::fixnum(i as i64 + 1));
                    }
                }
            }
            _ => {
                for c in &counts {
                    array::push(ctx, arr, c.map_or(Value::NIL, |c| Value::fixnum(c as i64)));
                }
            }
        }
        let v = if mode == Mode::Legacy {
            arr
        } else {
            let h = hash::new(ctx);
            let key = Value::symbol(ctx.intern(if mode == Mode::Lines { "lines" } else { "oneshot_lines" }));
            hash::aset(ctx, h, key, arr)?;
            h
        };
        let p = string::new_utf8(ctx, &path);
        hash::aset(ctx, out, p, v)?;
    }
    Ok(out)
}

fn s_peek_result(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    snapshot(ctx)
}

/// `result(stop: true, clear: true)`: with options, a missing one is false.
fn s_result(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let given = args.kw.is_some();
    let stop = if given { args.kwarg(ctx, "stop").is_some_and(|v| v.truthy()) } else { true };
    let mut clear = if given { args.kwarg(ctx, "clear").is_some_and(|v| v.truthy()) } else { true };
    if stop && !clear {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::warning::emit(ctx, &format!("{path}:{line}: warning: stop implies clear\n"), None)?;
        clear = true;
    }
    let r = snapshot(ctx)?;
    if stop {
        *ctx.vm().coverage.borrow_mut() = None;
        crate::core::tracepoint::refresh(ctx);
    } else if clear {
        if let Some(s) = ctx.vm().coverage.borrow_mut().as_mut() {
            for (_, counts) in s.files.iter_mut() {
                for c in counts.iter_mut().flatten() {
                    *c = 0;
                }
            }
        }
    }
    Ok(r)
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let m = crate::core::module_methods::define_module_under(ctx, obj, "Coverage");
    crate::methods!(ctx, m, [
        ("setup", s_setup, [0..=1], Unsafe, Singleton),
        ("start", s_start, [0..=1], Unsafe, Singleton),
        ("resume", s_resume, [0], Unsafe, Singleton),
        ("suspend", s_suspend, [0], Unsafe, Singleton),
        ("running?", s_running_p, [0], Safe, Singleton),
        ("supported?", s_supported_p, [1], Safe, Singleton),
        ("peek_result", s_peek_result, [0], Unsafe, Singleton),
        ("result", s_result, [0], Unsafe, Singleton, Kw),
    ]);
    Ok(())
}
