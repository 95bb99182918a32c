//! The Rust embedding API: a VM with its first thread, running programs and reporting
//! their outcome like the `ruby` command does, and (for hosts such as libcarmine) running
//! compiled scripts as isolated units under limits.
//!
//! Invariants of the host side:
//! - A `Runtime` is used by one native thread at a time; `bind_thread` moves it to the
//!   calling thread (the collector scans the native stack of the thread it is bound to).
//! - A `Script` is a compiled program kept alive through `Vm::roots` until `free_script`.
//! - An isolated `run_script` undoes what the run changed (see `isolation`) and disarms
//!   the limits before it returns, whatever the run's outcome.
//! - `settled` is true only while the VM is exactly as `snapshot` and `baseline` record
//!   because the last run to end was isolated from that snapshot, and no run started
//!   since. Whatever the host does between runs is outside what the runtime sees: a run
//!   started with `Isolation::HostIdle` skips checking the VM against the snapshot only
//!   when both hold (the host's word for the time between runs, `settled` for the end of
//!   the last run).

pub mod host;
pub mod isolation;
pub mod limits;
pub mod task;

use crate::core::{array, exception, object, string};
use crate::error::Unwind;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::vm::Vm;

/// Value-stack slots of a thread's root fiber (touched lazily by the OS).
pub const ROOT_STACK_SLOTS: usize = 4 << 20;
/// Frames before `SystemStackError`.
pub const MAX_FRAMES: usize = 200_000;

/// `$VERBOSE` as set by `-W0` (nil), the default or `-W1` (false), and `-w`/`-v` (true).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Verbosity {
    Silent,
    #[default]
    Medium,
    Verbose,
}

/// A VM and the context of the thread that created it.
pub struct Runtime {
    ctx: Box<Ctx>,
    vm: Box<Vm>,
    /// `-n`/`-p`/`-a`/`-l`: how the main program is wrapped.
    command_line: crate::compile::CommandLine,
    /// The classes as the host left them, for undoing isolated runs.
    baseline: Option<isolation::Baseline>,
    /// The native thread the context is bound to.
    thread: libc::pthread_t,
    /// Stack bounds of the threads the context was bound to lately (thread, low, high):
    /// a server hands a VM from thread to thread, and asking the C library for a
    /// thread's bounds (`pthread_getattr_np`) costs hundreds of instructions and a malloc.
    /// An entry is used only while the stack pointer lies inside it.
    stack_bounds: [(libc::pthread_t, usize, usize); STACK_BOUNDS_CACHED],
    /// Depth of `run_script` calls in progress (a host method may not start another).
    running: u32,
    /// Fibers of finished tasks, ready for new ones (VM roots; see `task`).
    idle_runners: Vec<Value>,
    /// The state isolated runs start from, reused while it is current (see `isolation`).
    snapshot: Option<std::rc::Rc<isolation::RunSnapshot>>,
    /// The last run to end put the VM back as `snapshot` and `baseline` record (see the
    /// module invariants).
    settled: bool,
    /// The last tag given to an isolated run (see `Ctx::run_tag`).
    last_tag: u64,
    /// Suspended runs whose threads are alive (see `task::Parked`).
    parked: Vec<task::Parked>,
    /// The one of them `host_leave` made current, until `host_enter`.
    current_parked: Option<u64>,
}

/// How a run of `run_script` or `start_task` relates to the runs after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// What the run defines stays (setup code).
    Shared,
    /// Everything the run changes is undone when it ends (see `isolation`).
    Isolated,
    /// As `Isolated`, and the host vouches that nothing used the VM since the last run
    /// ended (no call into it, no Ruby code of its run): when that run was isolated and
    /// ended last, the VM is as the snapshot it started from records, and the new run
    /// starts from that snapshot without comparing the VM with it.
    HostIdle,
}

/// Threads whose stack bounds a runtime remembers (`Runtime::stack_bounds`).
const STACK_BOUNDS_CACHED: usize = 64;
/// Slots, from its hash on, where a thread's entry is looked for first.
const STACK_BOUNDS_PROBES: usize = 4;

/// A compiled program, run as many times as wanted (see `Runtime::compile`).
pub struct Script {
    iseq: Value,
}

/// An exception (or other non-local exit) that ended a host call, as data.
#[derive(Debug, Clone)]
pub struct ErrorInfo {
    /// "ZeroDivisionError"
    pub class_name: String,
    pub message: String,
    /// "file:line:in 'label'" lines, innermost first.
    pub backtrace: Vec<String>,
    /// The report `ruby` prints for it.
    pub report: String,
    /// The exception object (nil for `exit!`).
    pub exception: Value,
    /// The status of `exit`, `exit!` or `abort`.
    pub exit_status: Option<i32>,
}

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Ran to the end or called `exit` with this status.
    Exit(i32),
    /// Ended by an uncaught SignalException: a process then dies of that signal
    /// (`die_of_signal`), as CRuby does.
    Signal(i32),
}

impl Outcome {
    /// The exit status a process reports for this outcome (128 + signal number).
    pub fn status(self) -> i32 {
        match self {
            Outcome::Exit(c) => c,
            Outcome::Signal(n) => 128 + n,
        }
    }
}

/// Ends the process by signal `n` with its default action (after output is flushed).
pub fn die_of_signal(n: i32) -> ! {
    // SAFETY: resetting a handler and signalling ourselves have no memory effects; if the
    // signal does not end the process (it is ignored or caught elsewhere), exit instead.
    unsafe {
        libc::signal(n, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, n);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), n);
    }
    std::process::exit(128 + n)
}

impl Default for Runtime {
    fn default() -> Self {
        Self::new()
    }
}

impl Runtime {
    pub fn new() -> Runtime {
        let mut vm = Box::new(Vm::bare());
        let vm_ptr: *mut Vm = &mut *vm;
        // SAFETY: the VM is boxed (stable address) and outlives the context, which is
        // dropped first (field order) and used only on this thread.
        let ctx = Box::new(unsafe { Ctx::new(vm_ptr, ROOT_STACK_SLOTS, MAX_FRAMES) });
        // SAFETY: pthread_self has no preconditions.
        let thread = unsafe { libc::pthread_self() };
        let mut rt = Runtime { ctx, vm, command_line: crate::compile::CommandLine::default(), baseline: None, thread, stack_bounds: [(0, 0, 0); STACK_BOUNDS_CACHED], running: 0, idle_runners: Vec::new(), snapshot: None, settled: false, last_tag: 0, parked: Vec::new(), current_parked: None };
        crate::boot::boot(&mut rt.ctx);
        if std::env::var_os("CARMINE_GC_STRESS").is_some_and(|v| v == "1") {
            rt.ctx.set_gc_stress(true);
        }
        rt
    }

    pub fn ctx(&mut self) -> &mut Ctx {
        &mut self.ctx
    }

    pub fn vm(&self) -> &Vm {
        &self.vm
    }

    /// Sets `$0`, `ARGV`, `$VERBOSE` and the load path before running a script.
    /// `--enable-frozen-string-literal`: string literals of every file and eval without a
    /// `frozen_string_literal` magic comment are frozen.
    /// Catches the signals that Ruby turns into exceptions (SIGINT → Interrupt, SIGTERM …
    /// → SignalException), as the `ruby` command does; an embedding application may leave
    /// the process's handlers alone by not calling this.
    pub fn install_signal_handlers(&mut self) {
        crate::core::signal::install_ruby_defaults(self.ctx());
    }

    /// The `-n`, `-p`, `-a` and `-l` switches (also shown by `$-p`, `$-a`, `$-l`).
    pub fn set_command_line(&mut self, l: crate::compile::CommandLine, line_mode: bool) {
        self.command_line = l;
        if l.each_line || l.print {
            crate::core::kernel::define_line_loop_methods(&mut self.ctx);
        }
        for (name, on) in [("$-p", l.print), ("$-a", l.split), ("$-l", line_mode)] {
            let id = self.ctx.intern(name);
            crate::core::globals::set_raw(&self.ctx, id, Value::bool(on));
        }
    }

    /// `$/` (`-0`) or `$\` (`-l`): a separator String, or nil.
    pub fn set_record_separator(&mut self, output: bool, sep: Option<&[u8]>) -> Result<(), Outcome> {
        let v = match sep {
            Some(b) => string::new_binary(&mut self.ctx, b),
            None => Value::NIL,
        };
        let id = if output { sym::DOLLAR_BACKSLASH } else { sym::DOLLAR_SLASH };
        crate::core::globals::set(&mut self.ctx, id, v).map_err(|e| self.report(e))
    }

    /// `-Fpattern`: `$;` becomes the Regexp of the pattern.
    pub fn set_field_separator(&mut self, pattern: &[u8]) -> Result<(), Outcome> {
        let ctx = &mut *self.ctx;
        let src = string::new_from_bytes(ctx, pattern);
        let regexp = ctx.c().regexp;
        let r = ctx.call_str(regexp, "new", &[src]).and_then(|re| crate::core::globals::set(ctx, sym::DOLLAR_SEMICOLON, re));
        r.map_err(|e| self.report(e))
    }

    /// Lets `Process.setproctitle` and `$0 =` rewrite the command line `ps` shows (the
    /// process's argv strings): for the `carmine` command, not for an embedding host.
    pub fn own_process_title(&mut self) {
        crate::core::process::own_process_title();
    }

    /// `-d`: `$DEBUG` (and `$-d`).
    pub fn set_debug(&mut self, on: bool) {
        crate::core::globals::set_raw(&self.ctx, sym::DOLLAR_DEBUG, Value::bool(on));
    }

    /// `-s`: a global variable named on the command line (`$name`), a String or true.
    pub fn set_switch_variable(&mut self, name: &str, value: Option<&[u8]>) {
        let v = match value {
            Some(b) => string::new_from_bytes(&mut self.ctx, b),
            None => Value::TRUE,
        };
        let id = self.ctx.intern(name);
        // A name the VM defines with a check of its own (`-stdout`) keeps its value.
        let _ = crate::core::globals::set(&mut self.ctx, id, v);
    }

    /// `-i[ext]`: ARGF edits the files it reads in place, keeping backups named with
    /// `ext` appended (none when it is empty).
    pub fn set_inplace_mode(&mut self, ext: &[u8]) -> Result<(), Outcome> {
        crate::core::io::argf::set_inplace_mode(&mut self.ctx, ext).map_err(|e| self.report(e))
    }

    pub fn set_frozen_string_literals(&mut self, on: bool) {
        self.ctx.vm().frozen_string_literals.set(on);
    }

    /// `--backtrace-limit`: how many "from" lines error reports show (-1: all).
    pub fn set_backtrace_limit(&mut self, limit: i64) {
        self.ctx.vm().backtrace_limit.set(limit);
    }

    pub fn configure(&mut self, script_name: &str, argv: &[Vec<u8>], load_path: &[String], verbose: Verbosity) {
        let ctx = &mut self.ctx;
        let name = string::new_utf8(ctx, script_name);
        crate::core::globals::set_raw(ctx, sym::DOLLAR_ZERO, object::freeze(name));
        *ctx.vm().script_name.borrow_mut() = script_name.to_string();
        let id = ctx.intern("ARGV");
        let av = crate::core::module::body(ctx.c().object).const_get(id).map(|e| e.value).unwrap_or(Value::NIL);
        if array::is_array(av) {
            for a in argv {
                let s = string::new_from_bytes(ctx, a);
                array::push(ctx, av, s);
            }
        }
        let lp = crate::core::globals::raw(ctx, sym::DOLLAR_LOAD_PATH);
        if array::is_array(lp) {
            for d in load_path {
                let s = string::new_utf8(ctx, d);
                array::push(ctx, lp, s);
            }
            let std = crate::core::load::stdlib_dir();
            let s = string::new_utf8(ctx, &std);
            array::push(ctx, lp, s);
            if let Some(rstd) = crate::core::load::ruby_stdlib_dir() {
                let s = string::new_utf8(ctx, rstd);
                array::push(ctx, lp, s);
            }
        }
        let v = match verbose {
            Verbosity::Silent => Value::NIL,
            Verbosity::Medium => Value::FALSE,
            Verbosity::Verbose => Value::TRUE,
        };
        if verbose == Verbosity::Verbose {
            crate::core::warning::set_enabled(ctx, "deprecated", true);
        }
        crate::core::globals::set_raw(ctx, sym::DOLLAR_VERBOSE, v);
    }

    /// `require` a library before the script (`-r`).
    pub fn require(&mut self, name: &str) -> Result<(), Outcome> {
        let r = crate::core::load::require(&mut self.ctx, name);
        match r {
            Ok(_) => Ok(()),
            Err(e) => Err(self.report(e)),
        }
    }

    /// The bytecode of a program, as text (for `--dump=insns`); `source` may be a
    /// bytecode file (`compile::bytecode`), shown as loaded.
    pub fn dump_insns(&mut self, source: &[u8], path: &str) -> Result<String, String> {
        let opts = crate::compile::CompileOptions::main(path);
        let compiled = if crate::compile::bytecode::is_bytecode(source) {
            crate::compile::bytecode::load(&mut self.ctx, source).map(|l| l.iseq)
        } else {
            crate::compile::compile_program_with(&mut self.ctx, source, &opts, self.command_line).map(|(iseq, _)| iseq)
        };
        match compiled {
            Ok(iseq) => Ok(crate::compile::iseq::disasm(&self.ctx, iseq)),
            Err(Unwind::Raise(e)) => Err(exception::message_string(&mut self.ctx, e)),
            Err(_) => Err(String::from("compilation failed")),
        }
    }

    /// Compiles only (for `-c`); returns the error report if the syntax is invalid.
    pub fn check_syntax(&mut self, source: &[u8], path: &str) -> Result<(), String> {
        let opts = crate::compile::CompileOptions::main(path);
        match crate::compile::compile_program_with(&mut self.ctx, source, &opts, self.command_line).map(|(iseq, _)| iseq) {
            Ok(_) => Ok(()),
            Err(Unwind::Raise(e)) => Err(exception::message_string(&mut self.ctx, e)),
            Err(_) => Err(String::from("syntax check failed")),
        }
    }

    /// Runs a program as the main script, then `at_exit` handlers; reports an uncaught
    /// exception on stderr in CRuby's format.
    pub fn run_main(&mut self, source: &[u8], path: &str) -> Outcome {
        let r = crate::core::kernel::run_program_with(&mut self.ctx, source, path, true, self.command_line);
        finish(&mut self.ctx, r)
    }

    /// Compiles a program as the main script and writes it as bytecode
    /// (`carmine --compile`; see `compile::bytecode`). The path is recorded as given
    /// (`__FILE__`, backtraces), with its real path (`require_relative`); the switches
    /// that change compilation (`-n`/`-p`/`-a`/`-l`, frozen string literals) apply.
    /// Returns the error report (as `-c` prints it) if the program does not compile.
    pub fn compile_to_bytecode(&mut self, source: &[u8], path: &str) -> Result<Vec<u8>, String> {
        let ctx = &mut *self.ctx;
        let opts = crate::core::kernel::program_compile_options(ctx, path, true);
        let r = crate::compile::compile_program_with(ctx, source, &opts, self.command_line).and_then(|(iseq, data)| {
            let keep = ctx.protect(iseq);
            let r = crate::compile::bytecode::dump(ctx, iseq, data.map(|at| &source[at.min(source.len())..]));
            ctx.unprotect(keep);
            // The file is loaded back once: code the loader would reject (a compiler bug)
            // fails here, when it is written, not on the server that loads it.
            let bytes = r?;
            crate::compile::bytecode::load(ctx, &bytes)?;
            Ok(bytes)
        });
        r.map_err(|e| match e {
            Unwind::Raise(e) => exception::message_string(&mut self.ctx, e),
            _ => String::from("compilation failed"),
        })
    }

    /// Loads a bytecode program (for running it more than once with `run_loaded`). The
    /// iseq is not rooted: the host keeps it alive (protects it, or holds it in an object
    /// the collector sees). Invalid bytes raise `LoadError`.
    pub fn load_bytecode(&mut self, bytes: &[u8]) -> Result<crate::compile::bytecode::Loaded, Unwind> {
        crate::compile::bytecode::load(&mut self.ctx, bytes)
    }

    /// Runs a loaded program at top level and returns its value. Each run is a new
    /// top-level frame with locals of its own, as a required file's (they are not
    /// attached to `TOPLEVEL_BINDING`, so a program run many times leaves nothing there);
    /// what it defines (methods, constants, globals) stays in the VM.
    pub fn run_loaded(&mut self, program: &crate::compile::bytecode::Loaded) -> Result<Value, Unwind> {
        crate::core::kernel::run_compiled_program(&mut self.ctx, program.iseq, false, None)
    }

    /// Runs a bytecode program as the main script, like `run_main` runs source: it sees
    /// the source path recorded at compile time as `__FILE__` and `$0`, and `DATA` reads
    /// its data section from `file` (the bytecode file the bytes came from, if any).
    pub fn run_bytecode_main(&mut self, bytes: &[u8], file: Option<&str>) -> Outcome {
        let ctx = &mut *self.ctx;
        let loaded = match crate::compile::bytecode::load(ctx, bytes) {
            Ok(l) => l,
            Err(e) => return finish(ctx, Err(e)),
        };
        let keep = ctx.protect(loaded.iseq);
        let name = string::new_utf8(ctx, &loaded.path);
        crate::core::globals::set_raw(ctx, sym::DOLLAR_ZERO, object::freeze(name));
        *ctx.vm().script_name.borrow_mut() = loaded.path.clone();
        let data = file.zip(loaded.data_offset);
        let r = crate::core::kernel::run_compiled_program(ctx, loaded.iseq, true, data);
        ctx.unprotect(keep);
        finish(ctx, r)
    }

    /// Evaluates a string at top level and returns its value (for embedding and tests).
    pub fn eval(&mut self, source: &str) -> Result<Value, Unwind> {
        crate::core::kernel::run_program(&mut self.ctx, source.as_bytes(), "(eval)", false)
    }

    /// The `inspect` text of a value.
    pub fn inspect(&mut self, v: Value) -> String {
        match object::inspect(&mut self.ctx, v) {
            Ok(s) => string::to_rust_string_lossy(s),
            Err(_) => String::from("#<inspect failed>"),
        }
    }

    /// Prints an uncaught unwind and returns the exit status it implies.
    pub fn report(&mut self, e: Unwind) -> Outcome {
        report(&mut self.ctx, e)
    }
    // ---- hosts (libcarmine) ----

    /// Binds the context to the calling native thread (the collector scans that thread's
    /// stack, and stack-depth checks use its bounds). Cheap when already bound.
    #[inline]
    pub fn bind_thread(&mut self) {
        // SAFETY: pthread_self has no preconditions.
        let me = unsafe { libc::pthread_self() };
        // pthread_t is an address with glibc and musl: equal threads are equal words
        // (pthread_equal is a call into the C library on every entry otherwise).
        if me != self.thread {
            self.bind_new_thread(me);
        }
    }

    #[inline(never)]
    fn bind_new_thread(&mut self, me: libc::pthread_t) {
        self.thread = me;
        let sp = crate::heap::stack_scan::approximate_sp();
        // pthread_t is the address of the thread's descriptor, at the top of its stack:
        // multiples of the stack size apart, so hashed with all its bits. A thread's entry
        // is looked for in the STACK_BOUNDS_PROBES slots from its hash, then in the rest of
        // the table (a miss costs pthread_getattr_np, far more than the scan); a new entry
        // takes the first free slot in that order, and replaces the hashed slot only when
        // the table is full, so a server's few dozen threads never evict each other.
        let home = ((me as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % STACK_BOUNDS_CACHED;
        let order = (0..STACK_BOUNDS_CACHED).map(|i| (home + i) % STACK_BOUNDS_CACHED);
        // SAFETY: pthread_equal has no preconditions.
        let mine = |&(t, lo, hi): &(libc::pthread_t, usize, usize)| unsafe { libc::pthread_equal(t, me) } != 0 && (lo..hi).contains(&sp);
        let found = order.clone().take(STACK_BOUNDS_PROBES).map(|i| self.stack_bounds[i]).find(mine).or_else(|| order.clone().skip(STACK_BOUNDS_PROBES).map(|i| self.stack_bounds[i]).find(mine));
        let (lo, hi) = match found {
            Some((_, lo, hi)) => (lo, hi),
            None => {
                let (lo, hi) = crate::heap::stack_scan::current_thread_stack_bounds();
                let free = order.clone().find(|&i| self.stack_bounds[i].2 == 0).unwrap_or(home);
                self.stack_bounds[free] = (me, lo, hi);
                (lo, hi)
            }
        };
        self.ctx.native_stack_lo = lo;
        self.ctx.native_stack_hi = hi;
        self.ctx.native_limit = lo + crate::thread::NATIVE_STACK_RESERVE;
    }

    /// Compiles a program for `run_script` (path: for backtraces and `__FILE__`).
    pub fn compile(&mut self, source: &[u8], path: &str) -> Result<Script, Unwind> {
        self.bind_thread();
        compile_script(&mut self.ctx, source, path)
    }

    pub fn free_script(&mut self, script: Script) {
        free_script(&self.ctx, script)
    }

    /// Whether a `run_script` is in progress (a host method is running inside it).
    pub fn is_running(&self) -> bool {
        self.running > 0
    }

    /// Runs a script at top level under the limits. Isolated (see `Isolation`): everything
    /// the run changed is undone afterwards (see `isolation`), its `at_exit` blocks run at
    /// its end and the threads it started are stopped; shared: what it defines stays.
    pub fn run_script(&mut self, script: &Script, isolation: Isolation) -> Result<Value, Unwind> {
        self.bind_thread();
        self.running += 1;
        let snapshot = self.start_snapshot(isolation);
        let tag = self.run_tag(snapshot.is_some());
        self.make_current(tag);
        limits::arm(&self.vm);
        let r = run_top(&mut self.ctx, script.iseq, snapshot.as_ref().map(|s| s.at_exit_len()));
        let r = self.end_run(snapshot, tag, r);
        self.make_current(0);
        limits::disarm(&self.vm);
        self.running -= 1;
        r
    }

    /// The tag of a run that starts (see `Ctx::run_tag`): a new one for an isolated run,
    /// 0 for a shared one (its threads outlive it and belong to no run).
    fn run_tag(&mut self, isolated: bool) -> u64 {
        if !isolated {
            return 0;
        }
        self.last_tag += 1;
        self.last_tag
    }

    /// The end of a run (tagged `tag`) that ended with `r`, on the thread's root fiber:
    /// stops the threads it started, flushes output and (isolated: `snapshot`) undoes
    /// what it changed.
    fn end_run(&mut self, snapshot: Option<std::rc::Rc<isolation::RunSnapshot>>, tag: u64, r: Result<Value, Unwind>) -> Result<Value, Unwind> {
        let ctx = &mut *self.ctx;
        let Some(snapshot) = snapshot else {
            crate::core::io::flush_stdout(ctx);
            return r;
        };
        let current = self.snapshot.as_ref().is_some_and(|s| std::rc::Rc::ptr_eq(s, &snapshot));
        let keep = r.as_ref().map_or(Value::NIL, |&v| v);
        let mark = ctx.protect(keep);
        if let Err(Unwind::Raise(e)) = r {
            ctx.protect(e);
        }
        crate::thread::sched::terminate_run(ctx, tag);
        crate::core::io::flush_stdout(ctx);
        snapshot.restore(ctx);
        isolation::RunSnapshot::release(ctx, snapshot);
        if let Some(b) = self.baseline.as_mut() {
            b.restore(&mut self.ctx);
        }
        self.ctx.unprotect(mark);
        self.settled = current;
        r
    }

    /// Runs `f` (a host call into Ruby outside a run: a method call, a conversion) under
    /// the limits when no run is in progress.
    pub fn with_limits<T>(&mut self, f: impl FnOnce(&mut Ctx) -> T) -> T {
        self.bind_thread();
        if self.running > 0 {
            return f(&mut self.ctx);
        }
        limits::arm(&self.vm);
        let r = f(&mut self.ctx);
        limits::disarm(&self.vm);
        r
    }

    /// The snapshot a run starts from (None for a shared run). A run is starting: the VM
    /// is no longer settled.
    fn start_snapshot(&mut self, isolation: Isolation) -> Option<std::rc::Rc<isolation::RunSnapshot>> {
        let settled = std::mem::take(&mut self.settled);
        match isolation {
            Isolation::Shared => None,
            Isolation::HostIdle if settled => self.snapshot.clone().or_else(|| Some(self.take_snapshot())),
            _ => Some(self.take_snapshot()),
        }
    }

    fn take_snapshot(&mut self) -> std::rc::Rc<isolation::RunSnapshot> {
        let stale = self.baseline.as_ref().is_none_or(|b| !b.is_current(&self.ctx));
        if stale {
            if let Some(old) = self.baseline.take() {
                old.release(&self.ctx);
            }
            self.baseline = Some(isolation::Baseline::take(&mut self.ctx));
        }
        if let Some(s) = self.snapshot.as_ref().filter(|s| s.is_current(&self.ctx)) {
            return s.clone();
        }
        if let Some(old) = self.snapshot.take() {
            isolation::RunSnapshot::release(&self.ctx, old);
        }
        let s = std::rc::Rc::new(isolation::RunSnapshot::take(&mut self.ctx));
        self.snapshot = Some(s.clone());
        s
    }

    /// Whether a limit (timeout, memory cap) ended the last run or call.
    pub fn limit_tripped(&self) -> bool {
        self.vm.host.limits.tripped()
    }

    pub fn set_timeout(&mut self, t: Option<std::time::Duration>) -> std::io::Result<()> {
        if t.is_some() {
            // Defined now, by the host, so that no run's isolation removes it.
            limits::timeout_error_class(&mut self.ctx);
        }
        limits::set_timeout(&self.vm, t)
    }

    pub fn set_memory_limit(&mut self, bytes: usize) {
        limits::set_memory_cap(&self.vm, bytes);
    }

    /// Bytes of new out-of-line buffers (String, Array, Hash storage) after which the
    /// heap collects (0: the default, 16 MiB). A server that keeps many VMs lowers it so
    /// that each VM holds little garbage between its collections.
    pub fn set_gc_malloc_limit(&mut self, bytes: usize) {
        self.vm.heap.set_malloc_limit_min(bytes);
    }

    /// Sets the function called when the sweep of a major collection ends to give memory
    /// the allocator holds, freed, back to the kernel (the `carmine` command's mimalloc
    /// otherwise keeps the buffers a major collection frees resident for a while). It runs
    /// with the heap locked and must not call into the VM.
    pub fn set_release_memory_hook(&mut self, f: fn()) {
        self.vm.host.release_memory.set(Some(f));
    }

    /// Bytes the VM's heap uses now.
    pub fn memory_usage(&self) -> usize {
        limits::memory_usage(&self.vm)
    }

    /// The exception (or other exit) `e` as data.
    pub fn error_info(&mut self, e: Unwind) -> ErrorInfo {
        error_info(&mut self.ctx, e)
    }

    /// Stops the VM's threads and frees everything it owns: every object (running the
    /// free functions of host data), its pages and stacks. The process-wide immutable
    /// tables (encodings, the fiber stack pool's statics) stay.
    pub fn close(mut self) {
        self.bind_thread();
        self.host_enter();
        crate::thread::sched::terminate_all(&mut self.ctx);
        if let Some(b) = self.baseline.take() {
            b.release(&self.ctx);
        }
        if let Some(s) = self.snapshot.take() {
            isolation::RunSnapshot::release(&self.ctx, s);
        }
        self.ctx.drop_alloc_cache();
        // Dead objects not swept yet are finalized by their sweep, live ones here.
        crate::gc::finish_sweep(&self.vm);
        let heap = self.vm.heap.lock();
        heap.for_each_object(&mut |p| {
            // SAFETY: nothing runs in the VM any more; each live object is finalized once
            // and its slot marked free, so no finalizer sees a finalized object as live.
            unsafe {
                crate::object::finalize(p);
                (*p).flags = crate::object::ObjType::Free as u32;
            }
        });
        drop(heap);
    }
}

/// Takes `vm`'s giant lock for an embedding host coming back into the VM after
/// `Runtime::host_leave` (before it uses its `Runtime` again: a thread of the VM holds
/// the lock meanwhile), ahead of the threads waiting for it.
pub fn host_take_gl(vm: &Vm) {
    vm.gl.acquire_first(&vm.interrupt);
}

/// Gives `vm`'s giant lock up when `Runtime::host_leave` says so, once the host no longer
/// uses its `Runtime`.
pub fn host_release_gl(vm: &Vm) {
    vm.gl.release();
}

/// A script at top level (a frame of its own, `main` as self), then for an isolated run
/// (`at_exit_len`: the `at_exit` blocks registered before it) the blocks it registered, last
/// first, and the closing of a fiber scheduler it set. The first error of those ends the
/// run when the script itself did not fail.
fn run_top(ctx: &mut Ctx, iseq: Value, at_exit_len: Option<usize>) -> Result<Value, Unwind> {
    let main_obj = ctx.vm().main_obj.get();
    let cref = ctx.vm().top_cref.get();
    let mut r = crate::interp::call::run_iseq_frame(ctx, iseq, crate::interp::frame::FrameKind::Top, main_obj, cref, Value::NIL, Value::NIL, None, None).map(|(v, _)| v);
    std::hint::black_box(iseq);
    let Some(at_exit_len) = at_exit_len else { return r };
    // Most runs leave nothing to do here: no `at_exit` block, no scheduler.
    if ctx.vm().at_exit.borrow().len() <= at_exit_len && ctx.scheduler.is_nil() {
        return r;
    }
    let keep = r.as_ref().map_or(Value::NIL, |&v| v);
    let mark = ctx.protect(keep);
    if let Err(Unwind::Raise(e)) = r {
        ctx.protect(e);
    }
    for p in isolation::take_at_exit_after(ctx, at_exit_len) {
        if let Err(e) = ctx.call_proc(p, &[], None) {
            if r.is_ok() {
                r = Err(e);
                if let Err(Unwind::Raise(e)) = r {
                    ctx.protect(e);
                }
            }
        }
    }
    if let Err(e) = crate::fiber::scheduler::close_current(ctx) {
        if r.is_ok() {
            r = Err(e);
        }
    }
    ctx.unprotect(mark);
    r
}

/// Compiles a program for `Runtime::run_script`; the script keeps its code alive (as a VM
/// root) until `free_script`.
pub fn compile_script(ctx: &mut Ctx, source: &[u8], path: &str) -> Result<Script, Unwind> {
    let opts = crate::compile::CompileOptions { top_label: "<main>".into(), frozen_string_literal: ctx.vm().frozen_string_literals.get().then_some(true), ..crate::compile::CompileOptions::required(path) };
    let (iseq, _) = crate::compile::compile_program(ctx, source, &opts)?;
    host::gc_register(ctx, iseq);
    Ok(Script { iseq })
}

/// A program compiled ahead of time (`carmine --compile`, see `compile::bytecode`) as a
/// script for `Runtime::run_script`: loaded and verified, not parsed. A bad file is a
/// `LoadError`.
pub fn load_script(ctx: &mut Ctx, bytes: &[u8]) -> Result<Script, Unwind> {
    let loaded = crate::compile::bytecode::load(ctx, bytes)?;
    host::gc_register(ctx, loaded.iseq);
    Ok(Script { iseq: loaded.iseq })
}

/// Lets the code of a script be collected (once no method or proc it made is alive).
pub fn free_script(ctx: &Ctx, script: Script) {
    host::gc_unregister(ctx, script.iseq);
}

/// The exception (or other exit) `e` as data (runs `message`: call it under limits).
pub fn error_info(ctx: &mut Ctx, e: Unwind) -> ErrorInfo {
    match e {
        Unwind::Raise(exc) => {
            let mark = ctx.protect(exc);
            let class_name = object::class_name_of(ctx, exc);
            let message = exception::message_string(ctx, exc);
            let bt = exception::backtrace(ctx, exc);
            let backtrace = if array::is_array(bt) { array::to_vec(bt).into_iter().filter(|&l| string::is_string(l)).map(string::to_rust_string_lossy).collect() } else { Vec::new() };
            let report = match crate::core::exception_report::report(ctx, exc, false, false, None) {
                Ok(b) => String::from_utf8_lossy(&b).trim_end_matches('\n').to_string(),
                Err(_) => format!("{message} ({class_name})"),
            };
            let exit_status = if object::is_a(ctx, exc, ctx.c().system_exit) { Some(object::ivar_get(ctx, exc, sym::STATUS).as_fixnum().unwrap_or(0) as i32) } else { None };
            ctx.unprotect(mark);
            ErrorInfo { class_name, message, backtrace, report, exception: exc, exit_status }
        }
        Unwind::Exit(code) => ErrorInfo { class_name: "SystemExit".into(), message: "exit".into(), backtrace: Vec::new(), report: "exit".into(), exception: Value::NIL, exit_status: Some(code) },
        other => {
            // throw, break or return with nowhere to go: the UncaughtThrowError or
            // LocalJumpError Ruby would raise.
            let (class, message) = match other {
                Unwind::Throw { tag, .. } => (ctx.c().uncaught_throw_error, format!("uncaught throw {}", object::inspect_string(ctx, tag).unwrap_or_default())),
                Unwind::Break { .. } => (ctx.c().local_jump_error, "break from proc-closure".to_string()),
                _ => (ctx.c().local_jump_error, "unexpected return".to_string()),
            };
            let exc = ctx.new_error(class, &message);
            error_info(ctx, Unwind::Raise(exc))
        }
    }
}

/// Ends a program (the main script, or the block of a forked child) the way `ruby` does:
/// runs the `at_exit` handlers with `$!` set to an uncaught exception, then reports that
/// exception, unless the program left by `exit!`. A handler that calls `exit` sets the
/// status; one that raises is reported at once.
pub(crate) fn finish(ctx: &mut Ctx, r: Result<Value, Unwind>) -> Outcome {
    let pending = match r {
        Ok(_) => None,
        Err(Unwind::Exit(code)) => {
            crate::core::io::flush_stdout(ctx);
            if crate::thread::sched::others_running(ctx) {
                // `exit!` runs nothing more: other threads are not stopped but end with the
                // process, before the VM they run in could be freed under them.
                std::process::exit(code);
            }
            return Outcome::Exit(code);
        }
        Err(e) => Some(e),
    };
    let mut outcome = pending.map_or(Outcome::Exit(0), |e| outcome_of(ctx, e));
    if let Some(Unwind::Raise(exc)) = pending {
        ctx.stacks.errinfo = exc;
    }
    // The main thread's fiber scheduler runs its fibers to the end first (CRuby's teardown).
    if let Err(e) = crate::fiber::scheduler::close_current(ctx) {
        outcome = report(ctx, e);
    }
    let (handlers_outcome, exit_bang) = run_at_exit(ctx);
    if let Some(o) = handlers_outcome {
        outcome = o;
    }
    if let Some(e) = pending.filter(|_| !exit_bang) {
        print_report(ctx, e);
    }
    crate::thread::sched::terminate_all(ctx);
    if !exit_bang {
        crate::weak::run_all_at_exit(ctx);
    }
    crate::core::io::flush_stdout(ctx);
    outcome
}

/// Runs the `at_exit` handlers, last registered first; an exception in one is reported
/// and its status becomes the outcome. A handler calling `exit!` ends it all at once:
/// no more handlers, and (true in the result) no report of the exception that ended
/// the program.
pub(crate) fn run_at_exit(ctx: &mut Ctx) -> (Option<Outcome>, bool) {
    let mut outcome = None;
    // `trap("EXIT")` runs first (it is registered as the last of the exit handlers).
    if let Some(h) = crate::core::signal::exit_handler(ctx) {
        match ctx.call_str(h, "call", &[Value::fixnum(0)]) {
            Ok(_) => {}
            Err(Unwind::Exit(code)) => return (Some(Outcome::Exit(code)), true),
            Err(e) => outcome = Some(report(ctx, e)),
        }
    }
    loop {
        let next = ctx.vm().at_exit.borrow_mut().pop();
        let Some(p) = next else { break };
        match ctx.call_proc(p, &[], None) {
            Ok(_) => {}
            Err(Unwind::Exit(code)) => {
                ctx.vm().at_exit.borrow_mut().clear();
                return (Some(Outcome::Exit(code)), true);
            }
            Err(e) => {
                // The handlers after it see its exception as `$!`.
                if let Unwind::Raise(exc) = e {
                    ctx.stacks.errinfo = exc;
                }
                outcome = Some(report(ctx, e));
            }
        }
    }
    (outcome, false)
}

/// Prints an uncaught unwind and returns the exit status it implies.
pub(crate) fn report(ctx: &mut Ctx, e: Unwind) -> Outcome {
    print_report(ctx, e);
    outcome_of(ctx, e)
}

/// How the process ends for an uncaught unwind.
fn outcome_of(ctx: &mut Ctx, e: Unwind) -> Outcome {
    match e {
        Unwind::Exit(code) => Outcome::Exit(code),
        Unwind::Raise(exc) => {
            if object::is_a(ctx, exc, ctx.c().system_exit) {
                let s = object::ivar_get(ctx, exc, sym::STATUS);
                return Outcome::Exit(s.as_fixnum().unwrap_or(0) as i32);
            }
            match crate::core::process::uncaught_signal(ctx, exc) {
                Some(n) => Outcome::Signal(n),
                None => Outcome::Exit(1),
            }
        }
        Unwind::Throw { tag, .. } if crate::fiber::is_kill_tag(ctx, tag) => Outcome::Exit(0),
        Unwind::Return { .. } => Outcome::Exit(0),
        Unwind::Throw { .. } | Unwind::Break { .. } => Outcome::Exit(1),
        Unwind::Suspend => Outcome::Exit(70),
    }
}

/// Writes the report of an uncaught unwind to `$stderr` (as `ruby` does, a failed write is
/// ignored: the process is ending anyway).
fn print_report(ctx: &mut Ctx, e: Unwind) {
    crate::core::io::flush_stdout(ctx);
    let text = match e {
        Unwind::Exit(_) | Unwind::Return { .. } => return,
        Unwind::Raise(exc) => {
            if object::is_a(ctx, exc, ctx.c().system_exit) {
                return;
            }
            // Only an Interrupt is reported; other signals end the process silently.
            let signal = crate::core::process::uncaught_signal(ctx, exc);
            if signal.is_some() && signal != Some(libc::SIGINT) {
                return;
            }
            exception::full_message(ctx, exc)
        }
        // The main thread's root fiber was killed (`Fiber#kill`): the thread ends quietly.
        Unwind::Throw { tag, .. } if crate::fiber::is_kill_tag(ctx, tag) => return,
        Unwind::Throw { tag, .. } => {
            let s = object::inspect_string(ctx, tag).unwrap_or_default();
            format!("{}: uncaught throw {s} (UncaughtThrowError)", ctx.vm().script_name.borrow())
        }
        Unwind::Break { .. } => format!("{}: break from proc-closure (LocalJumpError)", ctx.vm().script_name.borrow()),
        Unwind::Suspend => "[BUG] Carmine internal error: a fiber suspension reached the top level".to_string(),
    };
    let mut bytes = text.into_bytes();
    bytes.push(b'\n');
    crate::core::io::write_error_message(ctx, &bytes);
}
