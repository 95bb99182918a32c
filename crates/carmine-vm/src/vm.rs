//! The VM: one Ruby world (heap, symbols, classes, globals). Several VMs may live in one
//! process and run in parallel; nothing here is process-global.
//!
//! Invariants:
//! - A `Vm` is created by `Vm::new`, which boots the core classes on the calling thread,
//!   and is only dropped when no thread runs in it.
//! - `c` (the core classes) is written once during boot and read-only afterwards.
//! - Every Ruby value the VM holds outside the heap (globals, roots, generic ivars, core
//!   classes) is marked by `gc::mark_vm_roots`.
//! - `method_epoch` increases on every change that can alter method lookup; `const_epoch`
//!   on every constant definition or removal. Inline caches compare against them.
//! - `globals_epoch` increases on every change to the `globals` table (a value set, an
//!   entry added, a trace or alias changed): all of them go through `core::globals`,
//!   whose writers bump it. The embedding's per-run isolation compares it to know whether
//!   a run touched any global without walking the table.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use crate::heap::Heap;
use crate::symbol::{SymId, SymMap, SymbolTable};
use crate::value::Value;

macro_rules! core_classes {
    ($($field:ident),* $(,)?) => {
        /// The builtin classes and modules, by role.
        #[derive(Clone)]
        pub struct CoreClasses { $(pub $field: Value),* }
        impl CoreClasses {
            pub fn empty() -> CoreClasses { CoreClasses { $($field: Value::NIL),* } }
            pub fn each(&self, f: &mut dyn FnMut(Value)) { $(f(self.$field);)* }
        }
    };
}

core_classes! {
    basic_object, object, module, class, kernel, comparable, enumerable,
    nil, true_, false_, numeric, integer, float, rational, complex, string, symbol, array, hash,
    range, proc_, method, unbound_method, binding, regexp, match_data, struct_, time, random,
    io, file, dir, encoding, enumerator, lazy, yielder, generator, arith_seq, chain,
    math, gc, object_space, process, signal, marshal, set, fiber, thread, mutex, queue,
    sized_queue, condition_variable, thread_group, data, errno, file_test, weakmap, stat,
    // exceptions
    exception, no_memory_error, script_error, load_error, not_implemented_error, syntax_error,
    security_error, signal_exception, interrupt, standard_error, argument_error,
    uncaught_throw_error, encoding_error, compatibility_error, invalid_byte_sequence_error,
    undefined_conversion_error, converter_not_found_error, fiber_error, io_error, eof_error,
    index_error, key_error, stop_iteration, closed_queue_error, local_jump_error, name_error,
    no_method_error, range_error, float_domain_error, regexp_error, runtime_error,
    frozen_error, system_call_error, thread_error, type_error, zero_division_error,
    system_exit, system_stack_error, no_matching_pattern_error, no_matching_pattern_key_error,
    math_domain_error, fatal,
}

/// A global variable: a plain value, or one computed/validated by hooks.
#[derive(Clone)]
pub struct GlobalEntry {
    pub value: Value,
    pub getter: Option<fn(&mut crate::thread::Ctx) -> crate::Result<Value>>,
    pub setter: Option<fn(&mut crate::thread::Ctx, Value) -> crate::Result<()>>,
    /// `alias $new $old` target.
    pub alias_of: Option<SymId>,
    /// `trace_var` commands (Procs or Strings), newest first, run after each assignment.
    pub traces: Vec<Value>,
}

pub struct Vm {
    pub heap: Heap,
    pub symbols: SymbolTable,
    pub c: CoreClasses,
    method_epoch: AtomicU64,
    const_epoch: AtomicU64,
    /// Counts collections that freed a class (or module): instance-variable caches keyed
    /// by a class's address check it, since a new class may take a freed class's slot.
    class_epoch: std::sync::atomic::AtomicU32,
    /// `class_epoch`'s low 16 bits shifted to bits 48..64 (`class_key_bits`).
    class_key: std::sync::atomic::AtomicU64,
    pub globals: RefCell<SymMap<GlobalEntry>>,
    /// Bumped by every change to `globals` (see the module invariants).
    pub globals_epoch: Cell<u64>,
    /// Set when bytes go into an IO's write buffer, cleared by `io::flush_stdout`: while
    /// clear, no standard stream holds buffered output and the flush at the end of an
    /// embedded run has nothing to look at.
    pub io_buffered: AtomicBool,
    /// Instance variables of objects that are not plain `RObject`s, by address.
    pub generic_ivars: RefCell<HashMap<usize, Vec<(SymId, Value)>>>,
    /// Values that must live as long as the VM (cached procs, literal tables …).
    pub roots: RefCell<Vec<Value>>,
    /// The frozen Strings `nil.to_s`, `true.to_s` and `false.to_s` return (also in `roots`).
    pub literal_to_s: Cell<[Value; 3]>,
    pub main_obj: Cell<Value>,
    pub top_cref: Cell<Value>,
    /// TOPLEVEL_BINDING (also a root), which the main script's locals join.
    pub toplevel_binding: Cell<Value>,
    pub gc_disabled: AtomicBool,
    pub gc_stress: AtomicBool,
    pub hash_seed: u64,
    /// `Regexp.timeout` as f64 bits (0: no limit).
    regexp_timeout: AtomicU64,
    /// `at_exit` blocks, run in reverse order.
    pub at_exit: RefCell<Vec<Value>>,
    /// Features already required (absolute paths), mirrored in `$LOADED_FEATURES`.
    pub loaded: RefCell<std::collections::HashSet<String>>,
    /// Features being required now, by the serial of the thread loading each: another
    /// thread requiring one waits until it is loaded.
    pub loading: RefCell<std::collections::HashMap<String, usize>>,
    /// Whether `-w` was given (warnings on), `$VERBOSE` mirrors it.
    pub script_name: RefCell<String>,
    /// Output buffer for `$stdout` when it is the process's standard output.
    pub stdout_buf: RefCell<Vec<u8>>,
    /// Interrupt word polled at safepoints (signals, timer, GC requests).
    pub interrupt: std::sync::atomic::AtomicU32,
    pub object_id_seq: AtomicU64,
    /// Source of `IoObj::serial`: a number no other descriptor opening in this VM had.
    pub io_serial: AtomicU64,
    pub object_ids: RefCell<HashMap<usize, u64>>,
    pub frozen_string_literals: Cell<bool>,
    /// `--backtrace-limit` (-1: none): error reports show at most this many "from" lines.
    pub backtrace_limit: Cell<i64>,
    /// Methods (iseq) and call sites already warned about an unused block.
    pub unused_block_warned: RefCell<std::collections::HashSet<(usize, usize)>>,
    /// `Encoding.default_external` / `default_internal` (encoding indexes).
    pub default_external: Cell<u8>,
    pub default_internal: Cell<Option<u8>>,
    pub lock: Mutex<()>,
    /// Core classes whose operators were redefined (`interp::ops::REDEF_*` bits).
    pub redefined: std::sync::atomic::AtomicU32,
    /// Set once the core classes are defined; redefinition tracking starts then.
    pub booted: Cell<bool>,
    /// The giant lock (see `thread::gl`): held by the thread running Ruby code.
    pub gl: crate::thread::gl::GiantLock,
    /// Threads started and not finished (see `thread::sched`).
    pub threads: RefCell<Vec<crate::thread::sched::Entry>>,
    pub main_thread: Cell<Value>,
    /// Threads blocked with no deadline (deadlock detection).
    pub forever_sleepers: Cell<usize>,
    /// `Thread.report_on_exception` / `Thread.abort_on_exception`.
    pub report_on_exception: Cell<bool>,
    pub abort_on_exception: Cell<bool>,
    /// `Thread.ignore_deadlock`.
    pub ignore_deadlock: Cell<bool>,
    /// Identity of the next thread context (fibers record their thread's).
    pub next_thread_serial: std::sync::atomic::AtomicUsize,
    /// Signals received for this VM, not yet handled (see `thread::signal`).
    pub signals: std::sync::Arc<crate::thread::signal::Inbox>,
    /// `Signal.trap` handlers: a Hash from signal number to Proc or command (a root).
    pub traps: Cell<Value>,
    /// Fibers waiting in a fiber scheduler's `block` hook (see `fiber::scheduler`).
    pub blocked_fibers: RefCell<Vec<crate::fiber::scheduler::Blocked>>,
    /// Enabled TracePoints, and whether there are any (see `core::tracepoint`).
    pub tracepoints: RefCell<Vec<Value>>,
    pub tracing: AtomicBool,
    /// The `Coverage` measurement, from `Coverage.setup` to its final `result`.
    pub coverage: RefCell<Option<Box<crate::stdlib::coverage::State>>>,
    /// Weak tables and finalizers (see `weak`).
    pub objspace: crate::weak::ObjSpace,
    /// Allocation sites recorded by `ObjectSpace.trace_object_allocations`.
    pub alloc_trace: crate::heap::alloc_trace::AllocTrace,
    /// What an embedding host added: host methods, limits (see `runtime::host`).
    pub host: crate::runtime::host::HostState,
}

impl Vm {
    pub(crate) fn bare() -> Vm {
        Vm {
            heap: Heap::new(),
            symbols: SymbolTable::new(),
            c: CoreClasses::empty(),
            method_epoch: AtomicU64::new(1),
            const_epoch: AtomicU64::new(1),
            class_epoch: std::sync::atomic::AtomicU32::new(1),
            class_key: std::sync::atomic::AtomicU64::new(1 << 48),
            globals: RefCell::new(SymMap::default()),
            globals_epoch: Cell::new(1),
            io_buffered: AtomicBool::new(false),
            generic_ivars: RefCell::new(HashMap::new()),
            roots: RefCell::new(Vec::new()),
            literal_to_s: Cell::new([Value::NIL; 3]),
            main_obj: Cell::new(Value::NIL),
            top_cref: Cell::new(Value::NIL),
            toplevel_binding: Cell::new(Value::NIL),
            gc_disabled: AtomicBool::new(false),
            gc_stress: AtomicBool::new(false),
            hash_seed: seed_from_os(),
            regexp_timeout: AtomicU64::new(0),
            at_exit: RefCell::new(Vec::new()),
            loaded: RefCell::new(std::collections::HashSet::new()),
            loading: RefCell::new(std::collections::HashMap::new()),
            script_name: RefCell::new(String::from("-")),
            stdout_buf: RefCell::new(Vec::with_capacity(8192)),
            interrupt: std::sync::atomic::AtomicU32::new(0),
            object_id_seq: AtomicU64::new(16),
            io_serial: AtomicU64::new(1),
            object_ids: RefCell::new(HashMap::new()),
            frozen_string_literals: Cell::new(false),
            backtrace_limit: Cell::new(-1),
            unused_block_warned: RefCell::new(std::collections::HashSet::new()),
            default_external: Cell::new(crate::core::encoding::UTF_8),
            default_internal: Cell::new(None),
            lock: Mutex::new(()),
            redefined: std::sync::atomic::AtomicU32::new(0),
            booted: Cell::new(false),
            gl: crate::thread::gl::GiantLock::held(),
            threads: RefCell::new(Vec::new()),
            main_thread: Cell::new(Value::NIL),
            forever_sleepers: Cell::new(0),
            report_on_exception: Cell::new(true),
            abort_on_exception: Cell::new(false),
            ignore_deadlock: Cell::new(false),
            next_thread_serial: std::sync::atomic::AtomicUsize::new(1),
            signals: std::sync::Arc::new(crate::thread::signal::Inbox::default()),
            traps: Cell::new(Value::NIL),
            blocked_fibers: RefCell::new(Vec::new()),
            tracepoints: RefCell::new(Vec::new()),
            tracing: AtomicBool::new(false),
            coverage: RefCell::new(None),
            objspace: crate::weak::ObjSpace::default(),
            alloc_trace: Default::default(),
            host: Default::default(),
        }
    }

    #[inline(always)]
    pub fn method_epoch(&self) -> u64 {
        self.method_epoch.load(Ordering::Relaxed)
    }

    /// `method_epoch` less the bumps made by dying classes (`class_freed`): it moves only
    /// when a method table or the module graph changed (embedding isolation compares it).
    pub fn definition_epoch(&self) -> u64 {
        self.method_epoch().wrapping_sub(self.class_epoch.load(Ordering::Relaxed) as u64)
    }

    pub fn bump_method_epoch(&self) {
        self.method_epoch.fetch_add(1, Ordering::Relaxed);
    }

    /// `Regexp.timeout`: the default match time limit in seconds.
    pub fn regexp_timeout(&self) -> Option<f64> {
        let bits = self.regexp_timeout.load(Ordering::Relaxed);
        (bits != 0).then(|| f64::from_bits(bits))
    }

    pub fn set_regexp_timeout(&self, t: Option<f64>) {
        self.regexp_timeout.store(t.map_or(0, f64::to_bits), Ordering::Relaxed);
    }

    #[inline(always)]
    pub fn const_epoch(&self) -> u64 {
        self.const_epoch.load(Ordering::Relaxed)
    }

    /// The low 16 bits of the class epoch in bits 48..64, above a class's address (user-space
    /// addresses fit in 48 bits): instance-variable caches key a class by `address | this`,
    /// so one compare checks both.
    #[inline(always)]
    pub fn class_key_bits(&self) -> u64 {
        self.class_key.load(Ordering::Relaxed)
    }

    /// A class died: caches keyed by class addresses must not match a class that takes
    /// its slot (instance-variable caches check the class epoch, method caches the method
    /// epoch).
    pub fn class_freed(&self) {
        let epoch = self.class_epoch.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        self.class_key.store(((epoch & 0xFFFF) as u64) << 48, Ordering::Relaxed);
        self.bump_method_epoch();
    }

    pub fn bump_const_epoch(&self) {
        self.const_epoch.fetch_add(1, Ordering::Relaxed);
    }

    pub fn add_root(&self, v: Value) {
        self.roots.borrow_mut().push(v);
    }

    /// In the child of a `fork`: only the forking thread exists, and it holds the GL.
    pub(crate) fn reset_threads_after_fork(&mut self, me: Value) {
        crate::thread::gl::GiantLock::replace_after_fork(&mut self.gl);
        for e in self.threads.get_mut().iter().filter(|e| e.obj != me) {
            let d = crate::thread::sched::td(e.obj);
            d.status = crate::thread::sched::Status::Dead;
            d.ctx = std::ptr::null_mut();
        }
        self.threads.get_mut().retain(|e| e.obj == me);
        self.forever_sleepers.set(0);
        if !me.is_nil() {
            self.main_thread.set(me);
        }
    }
}

fn seed_from_os() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most buf.len() bytes into buf.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr() as *mut libc::c_void, 8, 0) };
    if n == 8 {
        u64::from_ne_bytes(buf)
    } else {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        t ^ (std::process::id() as u64).rotate_left(32)
    }
}
