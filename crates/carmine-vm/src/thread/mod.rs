//! The per-thread runtime context `Ctx`, passed explicitly to everything that runs Ruby.
//!
//! Invariants:
//! - A `Ctx` belongs to one native thread and one VM; it is never shared.
//! - `stacks` are the value and frame stacks of the fiber currently running on this thread;
//!   switching fibers swaps them.
//! - The allocation caches (`free_lists`, one per heap size class) are lists of `Free`
//!   slots owned by this thread; the collector empties them before sweeping.
//! - `native_limit` is the lowest native stack address Rust code may grow to before
//!   `SystemStackError` is raised (checked in software; the guard page is only a backstop).

pub mod gl;
pub mod sched;
pub mod signal;

use crate::fiber::stack::ValueStack;
use crate::fiber::ThreadFibers;
use crate::heap::page::{FreeSlot, SizeClass};
use crate::interp::frame::Frame;
use crate::object::{ObjType, RBasic};
use crate::symbol::SymId;
use crate::value::Value;
use crate::vm::Vm;

/// The execution state of one fiber (or of a thread's root fiber): its value and frame
/// stacks and the other state that belongs to the running code, not to the thread.
pub struct Stacks {
    pub stack: ValueStack,
    pub sp: usize,
    pub frames: Vec<Frame>,
    /// Maximum frame count before `SystemStackError`.
    pub max_frames: usize,
    /// `$!`: the exception being handled.
    pub errinfo: Value,
    /// Objects currently being inspected/compared (recursion guards), by operation. Keys are
    /// symbol ids and object addresses, not chosen by input, so the cheap hasher serves.
    pub recursion: std::collections::HashSet<(SymId, Value, Value), std::hash::BuildHasherDefault<crate::symbol::SymHasher>>,
    /// Depth of nested `exec::run` invocations (each one recurses on the native stack).
    pub exec_depth: u32,
    /// Values kept alive for the duration of a Rust computation (see `Ctx::protect`).
    pub protected: Vec<Value>,
    /// Tags of the `catch` blocks currently running, innermost last.
    pub catch_tags: Vec<Value>,
    /// The method-level environment of the block this thread or fiber was started with
    /// (nil otherwise): `$~`/`$_` of that scope are this execution's own (`root_svar`), as
    /// CRuby keeps them per thread and per fiber.
    pub root_env: Value,
    pub root_svar: Value,
}

impl Stacks {
    /// Stacks over `stack`, with room for `max_frames` frames.
    pub fn new(stack: ValueStack, max_frames: usize) -> Stacks {
        Stacks { stack, sp: 0, frames: Vec::with_capacity(4.min(max_frames)), max_frames, errinfo: Value::NIL, recursion: Default::default(), exec_depth: 0, protected: Vec::new(), catch_tags: Vec::new(), root_env: Value::NIL, root_svar: Value::NIL }
    }

    /// Empties the state for reuse by another fiber (keeps the value stack and capacities).
    pub fn reset(&mut self) {
        self.sp = 0;
        self.frames.clear();
        self.errinfo = Value::NIL;
        self.recursion.clear();
        self.exec_depth = 0;
        self.protected.clear();
        self.catch_tags.clear();
        self.root_env = Value::NIL;
        self.root_svar = Value::NIL;
    }

    /// Makes `$~`/`$_` of proc `p`'s method-level scope this execution's own.
    pub fn set_root_proc(&mut self, p: Value) {
        if let Some(c) = crate::core::proc::captured(p) {
            if !c.env.is_nil() {
                self.root_env = crate::interp::ops::outermost_env(c.env);
            }
        }
    }

    /// Stacks with no room at all (the placeholder of a fiber that is running or finished).
    pub fn empty() -> Stacks {
        Stacks::new(ValueStack::empty(), 0)
    }
}

/// Native stack kept free below `native_limit` for Rust code that has no check (prism,
/// formatting, the collector's own frames).
pub const NATIVE_STACK_RESERVE: usize = 256 * 1024;

pub struct Ctx {
    vm: *mut Vm,
    pub(crate) free_lists: [*mut FreeSlot; 2],
    /// `GC.stress`: every allocation takes the slow path and collects.
    pub(crate) gc_stress: bool,
    /// `ObjectSpace.trace_object_allocations`: every allocation takes the slow path and
    /// records its site.
    pub(crate) trace_alloc: bool,
    /// `gc_stress || trace_alloc`: the one flag the allocation fast path tests.
    pub(crate) alloc_hooked: bool,
    /// Boxed so that a fiber switch exchanges one pointer, not the whole struct.
    pub stacks: Box<Stacks>,
    pub frame_serial: u64,
    pub native_stack_lo: usize,
    pub native_stack_hi: usize,
    pub native_limit: usize,
    /// The Ruby Thread object of this thread (nil until threads are created).
    pub thread_obj: Value,
    /// The running fiber's object (nil for the root fiber).
    pub fiber_obj: Value,
    /// This thread's fibers: the root fiber, switch messages, stack pools.
    pub fibers: ThreadFibers,
    /// The payload of a Data object being allocated: its values are reachable only from the
    /// Rust heap until the slot exists, so a collection during that allocation marks them
    /// through here.
    pub(crate) pending_data: Option<*const dyn crate::object::DataObj>,
    /// Likewise the elements of an Array being allocated (moved into its buffer already).
    pub(crate) pending_values: (*const Value, usize),
    /// While this thread is outside the GL (a safe region): the stack pointer below its
    /// spilled registers, where the collector starts scanning its native stack; else 0.
    pub(crate) safe_sp: usize,
    /// This context's identity among the VM's threads (never reused).
    pub serial: usize,
    /// `$?`: the status of the last child this thread waited for.
    pub last_status: Value,
    /// How many TracePoint hooks of this thread are running (events are not reported
    /// while one is).
    pub trace_hook_depth: u32,
    /// Set by the dispatch loop when it returns only to switch between its traced and
    /// untraced instances.
    pub trace_switch: bool,
    /// The exception last reported to `:raise` hooks (reported once while it unwinds).
    pub trace_raised: Value,
    /// `Fiber.scheduler` of this thread (nil: none; see `fiber::scheduler`).
    pub scheduler: Value,
    /// The fiber of an embedding host's suspendable run while it runs (nil otherwise):
    /// its blocking operations go to `host_scheduler` (see `runtime::task`).
    pub host_fiber: Value,
    /// The object whose hooks suspend a host's run (made at the first such run).
    pub host_scheduler: Value,
    /// The embedding host's run this thread's code belongs to (0: none): a run's own
    /// thread context while it runs, and every thread it starts (see `sched::wait_turn`).
    pub run_tag: u64,
}

impl Ctx {
    /// A context for the calling thread in `vm`.
    ///
    /// # Safety
    /// `vm` must outlive the context, and the context must stay on the calling thread.
    pub unsafe fn new(vm: *mut Vm, stack_slots: usize, max_frames: usize) -> Ctx {
        let stack = ValueStack::mapped(stack_slots).unwrap_or_else(|| crate::error::fatal_out_of_memory());
        Ctx::with_stack(vm, stack, max_frames)
    }

    /// A context for the calling thread in `vm` on a value stack mapped by the caller (a
    /// `Thread.new` maps it before spawning, so that no address space is a ThreadError
    /// there instead of a fatal error in the new thread).
    ///
    /// # Safety
    /// As `new`.
    pub unsafe fn with_stack(vm: *mut Vm, stack: ValueStack, max_frames: usize) -> Ctx {
        let (lo, hi) = crate::heap::stack_scan::current_thread_stack_bounds();
        let serial = (*vm).next_thread_serial.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ctx {
            vm,
            free_lists: [std::ptr::null_mut(); 2],
            gc_stress: false,
            trace_alloc: false,
            alloc_hooked: false,
            stacks: Box::new(Stacks::new(stack, max_frames)),
            // Frame serials identify a block's home frame; blocks may run on other threads,
            // so each thread numbers its frames in a range of its own.
            frame_serial: (serial as u64) << 40,
            native_stack_lo: lo,
            native_stack_hi: hi,
            native_limit: lo + NATIVE_STACK_RESERVE,
            thread_obj: Value::NIL,
            fiber_obj: Value::NIL,
            fibers: ThreadFibers::default(),
            pending_data: None,
            pending_values: (std::ptr::null(), 0),
            safe_sp: 0,
            serial,
            last_status: Value::NIL,
            trace_hook_depth: 0,
            trace_switch: false,
            trace_raised: Value::NIL,
            scheduler: Value::NIL,
            host_fiber: Value::NIL,
            host_scheduler: Value::NIL,
            run_tag: 0,
        }
    }

    #[inline(always)]
    pub fn vm(&self) -> &Vm {
        // SAFETY: the VM outlives every context created for it.
        unsafe { &*self.vm }
    }

    /// Mutable access to the VM, only during boot (no other borrow exists then).
    #[allow(clippy::mut_from_ref)]
    pub(crate) fn vm_mut(&self) -> &mut Vm {
        // SAFETY: used only while booting, when this context is the VM's only user.
        unsafe { &mut *self.vm }
    }

    pub fn vm_ptr(&self) -> *mut Vm {
        self.vm
    }

    #[inline(always)]
    pub fn c(&self) -> &crate::vm::CoreClasses {
        &self.vm().c
    }

    #[inline]
    pub fn intern(&self, name: &str) -> SymId {
        self.vm().symbols.intern(name.as_bytes())
    }

    #[inline]
    pub fn intern_bytes(&self, name: &[u8]) -> SymId {
        self.vm().symbols.intern(name)
    }

    pub fn sym_name(&self, id: SymId) -> std::sync::Arc<[u8]> {
        self.vm().symbols.name(id)
    }

    /// The symbol's name as (lossy) UTF-8 text, for messages.
    pub fn sym_str(&self, id: SymId) -> String {
        String::from_utf8_lossy(&self.sym_name(id)).into_owned()
    }

    // ---- allocation ----

    /// A fresh slot with header `(ty, klass)`; the rest of the slot is uninitialised and
    /// must be written by the caller before the next allocation.
    #[inline(always)]
    pub fn alloc_slot(&mut self, ty: ObjType, klass: Value) -> *mut RBasic {
        self.alloc_slot_in(SizeClass::Large, ty, klass)
    }

    /// A fresh slot of the given size class (see `alloc_slot`); only the types that fit
    /// in `SMALL_SLOT_SIZE` bytes ask for `SizeClass::Small`.
    #[inline(always)]
    pub fn alloc_slot_in(&mut self, class: SizeClass, ty: ObjType, klass: Value) -> *mut RBasic {
        let c = class as usize;
        let mut slot = self.free_lists[c];
        if slot.is_null() || self.alloc_hooked {
            slot = self.alloc_slow(class);
        }
        // SAFETY: slot is a Free slot owned by this thread's cache.
        unsafe {
            // (No prefetch a few allocations ahead here: it raised havlak's peak RSS from
            // 33 to 43 MB and gc_alloc_live_heap was no faster on a quiet machine.)
            self.free_lists[c] = (*slot).next;
            let b = slot as *mut RBasic;
            (*b).flags = ty as u32;
            (*b).aux = 0;
            (*b).klass = klass;
            b
        }
    }

    /// Turns `GC.stress` on or off for this thread and its VM.
    pub fn set_gc_stress(&mut self, on: bool) {
        self.gc_stress = on;
        self.alloc_hooked = self.gc_stress || self.trace_alloc;
        self.vm().gc_stress.store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Turns allocation-site recording on or off for this thread (threads started later
    /// follow `Vm::alloc_trace`).
    pub fn set_trace_alloc(&mut self, on: bool) {
        self.trace_alloc = on;
        self.alloc_hooked = self.gc_stress || self.trace_alloc;
    }

    /// Takes this thread's per-VM flags from the VM (a thread that starts).
    pub(crate) fn inherit_alloc_flags(&mut self) {
        let vm = self.vm();
        let stress = vm.gc_stress.load(std::sync::atomic::Ordering::Relaxed);
        let trace = vm.alloc_trace.is_on();
        self.gc_stress = stress;
        self.set_trace_alloc(trace);
    }

    #[cold]
    #[inline(never)]
    fn alloc_slow(&mut self, class: SizeClass) -> *mut FreeSlot {
        let slot = self.refill_alloc_cache(class);
        if self.trace_alloc {
            // A thread that started while tracing was on stops when another turns it off.
            if self.vm().alloc_trace.is_on() {
                self.record_alloc_site(slot as usize);
            } else {
                self.set_trace_alloc(false);
            }
        }
        slot
    }

    /// Records where the object about to be made at `addr` is allocated: the innermost
    /// Ruby frame's file and line, and the running method (a builtin's, when the
    /// allocation happens inside one). Runs no Ruby code and allocates no object.
    fn record_alloc_site(&self, addr: usize) {
        let frames = &self.stacks.frames;
        let Some(ruby) = frames.iter().rposition(|f| f.is_ruby()) else { return };
        let f = &frames[ruby];
        let (path, line) = (f.iseq().path.clone(), f.line());
        // `Class#new` is not a frame of its own when `initialize` is Ruby code (the
        // dispatch loop runs allocate + initialize in the caller's frame); its builtin
        // frame is skipped here too, so `Foo.new` reports its caller either way.
        let class = self.c().class;
        let running = frames.iter().rev().find(|r| r.is_ruby() || r.mid != Some(crate::symbol::sym::NEW) || r.owner != class).unwrap_or(f);
        let method_id = running.mid;
        let class_path = if method_id.is_some() { crate::core::module::static_path(running.owner) } else { None };
        let generation = self.vm().heap.lock().stats.count;
        let site = crate::heap::alloc_trace::AllocSite { path, line, class_path, method_id, generation };
        self.vm().alloc_trace.lock().sites.insert(addr, site);
    }

    /// Makes sure the allocation cache has a slot, refilling it (collecting or growing the
    /// heap as needed), and returns its first slot.
    fn refill_alloc_cache(&mut self, class: SizeClass) -> *mut FreeSlot {
        /// Slots a thread's cache takes at a time while other threads exist.
        const SHARED_CACHE_SLOTS: usize = 128;
        let vm = self.vm();
        let disabled = vm.gc_disabled.load(std::sync::atomic::Ordering::Relaxed);
        if vm.gc_stress.load(std::sync::atomic::Ordering::Relaxed) && !disabled {
            crate::gc::collect_for(self, crate::heap::stats::GcReason::Stress);
        }
        loop {
            let c = class as usize;
            if !self.free_lists[c].is_null() {
                return self.free_lists[c];
            }
            // With other threads, take a small batch of slots rather than a page's worth.
            let limit = if self.vm().threads.borrow().len() > 1 { SHARED_CACHE_SLOTS } else { usize::MAX };
            if let Some(list) = self.take_free_list(class, limit) {
                self.free_lists[c] = list;
                continue;
            }
            let mut heap = self.vm().heap.lock();
            let collect = heap.wants_collection() && !disabled;
            if collect {
                heap.wanted_class = Some(class);
            }
            drop(heap);
            if collect {
                crate::gc::collect(self);
                match self.take_free_list(class, limit) {
                    Some(list) => self.free_lists[c] = list,
                    None => {
                        self.vm().heap.lock().grow(4);
                    }
                }
                continue;
            } else {
                let mut heap = self.vm().heap.lock();
                let n = heap.page_count().max(4) / 2;
                if !heap.grow(n.max(1)) {
                    drop(heap);
                    crate::error::fatal_out_of_memory();
                }
            }
        }
    }

    /// A free list from the heap (sweeping a page for it if need be), if it has free slots.
    fn take_free_list(&self, class: SizeClass, limit: usize) -> Option<*mut FreeSlot> {
        let vm = self.vm();
        let mut heap = vm.heap.lock();
        crate::gc::sweeping(vm, &mut heap, |heap, dead| heap.take_free_list(class, limit, dead))
    }

    /// Records `bytes` of out-of-line storage; collects when a limit is exceeded: a major
    /// collection past `malloc_limit` (or the host's cap), a minor one past
    /// `young_malloc_limit`.
    #[inline]
    pub fn note_malloc(&mut self, bytes: usize) {
        use crate::heap::stats::GcReason;
        let (over, young) = {
            let mut heap = self.vm().heap.lock();
            heap.malloc_increase += bytes;
            heap.major_malloc_increase += bytes;
            (heap.major_malloc_increase > heap.malloc_limit, heap.malloc_increase > heap.young_malloc_limit())
        };
        let reason = if over || crate::runtime::limits::wants_collection_for_cap(self.vm()) {
            GcReason::Malloc
        } else if young {
            GcReason::YoungMalloc
        } else {
            return;
        };
        if !self.vm().gc_disabled.load(std::sync::atomic::Ordering::Relaxed) {
            crate::gc::collect_for(self, reason);
        }
    }

    /// Drops this thread's allocation caches (before a sweep rebuilds all free lists).
    pub(crate) fn drop_alloc_cache(&mut self) {
        self.free_lists = [std::ptr::null_mut(); 2];
    }

    /// Gives this thread's unused free slots back to the heap (a thread that ends).
    pub(crate) fn return_alloc_cache(&mut self) {
        for class in crate::heap::page::SIZE_CLASSES {
            let head = std::mem::replace(&mut self.free_lists[class as usize], std::ptr::null_mut());
            if !head.is_null() {
                self.vm().heap.lock().give_back(class, head);
            }
        }
    }

    // ---- native stack ----

    /// True when the native stack is too deep to safely call further into Ruby.
    #[inline(always)]
    pub fn native_stack_exhausted(&self) -> bool {
        crate::heap::stack_scan::approximate_sp() < self.native_limit
    }

    /// Keeps `v` alive until the matching `unprotect` (for values held only in Rust heap
    /// memory across a call that may collect).
    pub fn protect(&mut self, v: Value) -> usize {
        self.stacks.protected.push(v);
        self.stacks.protected.len() - 1
    }

    pub fn unprotect(&mut self, mark: usize) {
        self.stacks.protected.truncate(mark);
    }
}
