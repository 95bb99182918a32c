//! Process clocks and CPU times: `Process.clock_gettime`, `clock_getres` (with CRuby's
//! emulated clocks such as `:GETTIMEOFDAY_BASED_CLOCK_REALTIME`), the `CLOCK_*`
//! constants, and `Process.times` / `Process::Tms`.
//!
//! Invariants: a clock is a `CLOCK_*` Integer or one of CRuby's emulation Symbols; a unit
//! is one of CRuby's unit Symbols (`:float_second` by default); an unknown clock raises
//! `Errno::EINVAL` and an unknown unit ArgumentError, as CRuby.

use crate::core::process::errno_error;
use crate::core::{bignum, float, object};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const CLOCKS: &[(&str, libc::clockid_t)] = &[
    ("CLOCK_REALTIME", libc::CLOCK_REALTIME),
    ("CLOCK_MONOTONIC", libc::CLOCK_MONOTONIC),
    ("CLOCK_PROCESS_CPUTIME_ID", libc::CLOCK_PROCESS_CPUTIME_ID),
    ("CLOCK_THREAD_CPUTIME_ID", libc::CLOCK_THREAD_CPUTIME_ID),
    ("CLOCK_MONOTONIC_RAW", libc::CLOCK_MONOTONIC_RAW),
    ("CLOCK_REALTIME_COARSE", libc::CLOCK_REALTIME_COARSE),
    ("CLOCK_MONOTONIC_COARSE", libc::CLOCK_MONOTONIC_COARSE),
    ("CLOCK_BOOTTIME", libc::CLOCK_BOOTTIME),
    ("CLOCK_REALTIME_ALARM", libc::CLOCK_REALTIME_ALARM),
    ("CLOCK_BOOTTIME_ALARM", libc::CLOCK_BOOTTIME_ALARM),
    ("CLOCK_TAI", libc::CLOCK_TAI),
];

/// A time in nanoseconds and the clock's resolution.
fn read_clock(ctx: &mut Ctx, clock: Value, res: bool) -> Result<i128> {
    if let Some(id) = clock.as_symbol() {
        let name = ctx.sym_str(id);
        let (base, resolution) = match name.as_str() {
            "GETTIMEOFDAY_BASED_CLOCK_REALTIME" => (libc::CLOCK_REALTIME, 1_000),
            "TIME_BASED_CLOCK_REALTIME" => (libc::CLOCK_REALTIME, 1_000_000_000),
            "GETRUSAGE_BASED_CLOCK_PROCESS_CPUTIME_ID" | "TIMES_BASED_CLOCK_PROCESS_CPUTIME_ID" => (libc::CLOCK_PROCESS_CPUTIME_ID, 1_000),
            "CLOCK_BASED_CLOCK_PROCESS_CPUTIME_ID" => (libc::CLOCK_PROCESS_CPUTIME_ID, 1_000),
            "TIMES_BASED_CLOCK_MONOTONIC" => (libc::CLOCK_MONOTONIC, 10_000_000),
            _ => return Err(errno_error(ctx, libc::EINVAL, "")),
        };
        if res {
            return Ok(resolution);
        }
        let ns = read_clock(ctx, Value::fixnum(base as i64), false)?;
        return Ok(ns - ns % resolution);
    }
    let id = crate::core::integer::to_int_arg(ctx, clock)? as libc::clockid_t;
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid out-pointer.
    let rc = unsafe { if res { libc::clock_getres(id, &mut ts) } else { libc::clock_gettime(id, &mut ts) } };
    if rc != 0 {
        let e = crate::core::process::last_errno();
        return Err(errno_error(ctx, e, if res { "clock_getres" } else { "clock_gettime" }));
    }
    Ok(ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128)
}

fn in_unit(ctx: &mut Ctx, ns: i128, unit: Option<&Value>) -> Result<Value> {
    let name = match unit {
        None => "float_second".to_string(),
        Some(&u) if u.is_nil() => "float_second".to_string(),
        Some(&u) => match u.as_symbol() {
            Some(id) => ctx.sym_str(id),
            None => {
                let shown = object::inspect_string(ctx, u)?;
                return Err(ctx.arg_error(&format!("unexpected unit: {shown}")));
            }
        },
    };
    Ok(match name.as_str() {
        "nanosecond" => bignum::from_i128(ctx, ns),
        "microsecond" => bignum::from_i128(ctx, ns.div_euclid(1000)),
        "millisecond" => bignum::from_i128(ctx, ns.div_euclid(1_000_000)),
        "second" => bignum::from_i128(ctx, ns.div_euclid(1_000_000_000)),
        "float_microsecond" => float::new(ctx, ns as f64 / 1e3),
        "float_millisecond" => float::new(ctx, ns as f64 / 1e6),
        "float_second" => float::new(ctx, ns as f64 / 1e9),
        other => return Err(ctx.arg_error(&format!("unexpected unit: {other}"))),
    })
}

/// `Process.clock_gettime(clock_id, unit = :float_second)`.
pub fn p_clock_gettime(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let ns = read_clock(ctx, args.pos[0], false)?;
    in_unit(ctx, ns, args.pos.get(1))
}

/// `Process.clock_getres(clock_id, unit = :float_second)`.
fn p_clock_getres(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let ns = read_clock(ctx, args.pos[0], true)?;
    in_unit(ctx, ns, args.pos.get(1))
}

/// `Process.times`: user and system CPU seconds of this process and its waited children.
fn p_times(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    // SAFETY: zeroed rusage structs are valid out-values.
    let (me, kids) = unsafe {
        let mut me: libc::rusage = std::mem::zeroed();
        let mut kids: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut me);
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut kids);
        (me, kids)
    };
    let vals = [secs(me.ru_utime), secs(me.ru_stime), secs(kids.ru_utime), secs(kids.ru_stime)];
    let p = ctx.c().process;
    let id = ctx.intern("Tms");
    let tms = crate::core::module::body(p).const_get(id).map(|e| e.value).unwrap_or(Value::NIL);
    let fields: Vec<Value> = vals.iter().map(|&f| float::new(ctx, f)).collect();
    ctx.call_str(tms, "new", &fields)
}

pub fn init(ctx: &mut Ctx) {
    let p = ctx.c().process;
    for &(name, v) in CLOCKS {
        let id = ctx.intern(name);
        crate::core::module::body(p).const_set(id, Value::fixnum(v as i64));
    }
    crate::methods!(ctx, p, [
        ("clock_gettime", p_clock_gettime, [1..=2], Safe, ModuleFunction),
        ("clock_getres", p_clock_getres, [1..=2], Safe, ModuleFunction),
        ("times", p_times, [0], Safe, ModuleFunction),
    ]);
    // Process::Tms is a Struct, as in CRuby.
    let st = ctx.c().struct_;
    let names: Vec<Value> = ["utime", "stime", "cutime", "cstime"].iter().map(|n| Value::symbol(ctx.intern(n))).collect();
    if let Ok(tms) = ctx.call_str(st, "new", &names) {
        let name = Value::symbol(ctx.intern("Tms"));
        let _ = ctx.call_str(p, "const_set", &[name, tms]);
    }
}
