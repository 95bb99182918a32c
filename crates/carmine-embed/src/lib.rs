//! libcarmine: the C ABI of Carmine (`include/carmine.h` is the contract), a thin layer
//! over `cvm::runtime`.
//!
//! Invariants:
//! - No Rust panic leaves an exported function: each body runs under `catch_unwind`
//!   (`api`). A caught panic poisons the VM: every later call on it returns `CARMINE_BUG`
//!   (or `CARMINE_UNDEF`, NULL, 0), except `carmine_close`, which frees what it can.
//! - One OS thread at a time owns a `carmine_vm` (`owner`, taken by compare-and-swap;
//!   the same thread may re-enter from a C method). A Ruby thread of the VM that calls a C
//!   method takes ownership for the call; it holds the VM's giant lock then, so no other
//!   thread runs in the VM. The context of the owner's innermost C method is `owner_ctx`;
//!   a thread whose C method is still running when another thread's C method takes the
//!   VM over is listed in `callbacks` until then (so its own calls find its context).
//! - Inside a C method, calls use the `Ctx` of the Ruby thread running it (the innermost
//!   callback of the calling OS thread); otherwise the runtime's own, bound to the
//!   calling thread when the thread takes ownership.
//! - The error data belongs to the handle: its strings stay until the next call that
//!   records or clears an error. The exception object it names is a VM root meanwhile.
//! - With a notify function (carmine_set_notify) the VM's threads run while the host is
//!   outside the VM: the outermost call gives the giant lock up when it returns, if other
//!   threads are alive (`gl_out`), after it gave up ownership; a call from outside takes
//!   the lock back before it takes ownership, so a thread's C method never finds the VM
//!   owned by a host waiting for the lock. A C method called by a thread while the host is
//!   outside raises ThreadError (the host's functions run only while it is inside), and a
//!   waker call on a thread other than the host's is queued (`woken`) and the host
//!   notified; carmine_deliver_wakes calls the waker for them on the host's thread.

#![allow(non_camel_case_types)]
#![allow(clippy::missing_safety_doc)]

extern crate carmine_vm as cvm;

mod block_cache;
mod code_pages;

use std::cell::{Cell, RefCell, UnsafeCell};
use std::collections::{HashMap, HashSet};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

use cvm::core::module::{self, Arity, Visibility};
use cvm::core::{array, bignum, float, globals, hash, module_methods, object, proc, string};
use cvm::interp::{frame::Block, Args};
use cvm::object::ObjType;
use cvm::runtime::{self, host, limits, ErrorInfo, Isolation, Script};
use cvm::thread::Ctx;
use cvm::{Runtime, Unwind, Value};

/// The VMs' freed blocks stay with their VM (see block_cache): glibc's per-thread caches
/// would otherwise scatter them over every thread that ever ran the VM.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: block_cache::VmAllocator = block_cache::VmAllocator;

pub type carmine_value = u64;
pub type carmine_status = c_int;

pub const CARMINE_OK: carmine_status = 0;
pub const CARMINE_EXCEPTION: carmine_status = 1;
pub const CARMINE_EXIT: carmine_status = 2;
pub const CARMINE_LIMIT: carmine_status = 3;
pub const CARMINE_BUSY: carmine_status = 4;
pub const CARMINE_INVALID: carmine_status = 5;
pub const CARMINE_BUG: carmine_status = 6;
pub const CARMINE_SUSPENDED: carmine_status = 7;

pub const CARMINE_READABLE: c_int = 1;
pub const CARMINE_WRITABLE: c_int = 4;

pub const CARMINE_UNDEF: carmine_value = Value::UNDEF.raw();

pub type carmine_type = c_int;
const T_UNDEF: carmine_type = 0;
const T_NIL: carmine_type = 1;
const T_FALSE: carmine_type = 2;
const T_TRUE: carmine_type = 3;
const T_INTEGER: carmine_type = 4;
const T_FLOAT: carmine_type = 5;
const T_SYMBOL: carmine_type = 6;
const T_STRING: carmine_type = 7;
const T_ARRAY: carmine_type = 8;
const T_HASH: carmine_type = 9;
const T_PROC: carmine_type = 10;
const T_CLASS: carmine_type = 11;
const T_MODULE: carmine_type = 12;
const T_DATA: carmine_type = 13;
const T_OBJECT: carmine_type = 14;

pub type carmine_func = unsafe extern "C" fn(vm: *mut carmine_vm, self_: carmine_value, argc: c_int, argv: *const carmine_value, block: carmine_value, data: *mut c_void) -> carmine_value;
pub type carmine_write_func = Option<unsafe extern "C" fn(data: *mut c_void, bytes: *const c_char, len: usize)>;
pub type carmine_free_func = Option<unsafe extern "C" fn(ptr: *mut c_void)>;

/// The error of the last failed call, as C strings.
struct CError {
    class: CString,
    message: CString,
    backtrace: Vec<CString>,
    report: CString,
    exception: Value,
    exit_status: c_int,
}

/// A VM as C sees it.
pub struct carmine_vm {
    rt: UnsafeCell<Option<Runtime>>,
    owner: AtomicU64,
    depth: AtomicU32,
    /// (OS thread, context) of C methods running on threads that are not the owner now
    /// (displaced by another thread's C method), innermost last.
    callbacks: Mutex<Vec<(u64, usize)>>,
    /// How many entries `callbacks` has (read without the lock: usually none).
    ncallbacks: AtomicU32,
    /// The context of the innermost C method running on the owner thread (0: none), set
    /// and restored with `owner` by each C method: an API call from the owner thread finds
    /// its context here without locking `callbacks`.
    owner_ctx: Cell<usize>,
    userdata: Cell<*mut c_void>,
    error: RefCell<Option<CError>>,
    /// What a C method returning CARMINE_UNDEF raises.
    pending: Cell<Option<Unwind>>,
    poisoned: Cell<bool>,
    scripts: RefCell<Handles>,
    /// The script handle found in `scripts` last (0: none): a server runs the same few
    /// scripts, and this one is checked without hashing. Cleared when it is freed.
    last_script: Cell<usize>,
    /// Suspended tasks (`carmine_task` addresses).
    tasks: RefCell<Handles>,
    /// Suspended tasks by their runner fiber (raw value -> `carmine_task` address): how
    /// the waker (carmine_set_waker) finds the handle of a task that may go on.
    runners: Rc<RefCell<HashMap<u64, usize, std::hash::BuildHasherDefault<::carmine_vm::symbol::SymHasher>>>>,
    /// carmine_set_gc_after_run: new buffer bytes after which a run ends with a full
    /// collection (0: never).
    gc_after_run: Cell<usize>,
    /// The blocks this VM freed, for its next allocations (current on a thread while it is
    /// inside the VM).
    blocks: block_cache::BlockCache,
    /// Calls that entered the VM so far (every exported function that reaches it).
    entries: Cell<u64>,
    /// `entries` when the last call that ran a script to its end returned with nothing
    /// done after the run (CARMINE_OK): when the next call is the next entry, the host did
    /// nothing with the VM in between (`Entered::isolation`).
    settled_at: Cell<u64>,
    /// The VM (for its giant lock, taken before ownership; see the module invariants).
    vm_raw: *const cvm::vm::Vm,
    /// The host's outermost call gave the giant lock up when it returned.
    gl_out: AtomicBool,
    /// The OS thread of the host's last outermost call.
    host_thread: AtomicU64,
    /// carmine_set_waker's function and data.
    waker: Cell<Option<(unsafe extern "C" fn(*mut c_void, *mut carmine_task), usize)>>,
    /// carmine_set_notify's function and data.
    notify: Cell<Option<(unsafe extern "C" fn(*mut c_void), usize)>>,
    /// Runners (raw values) woken on another thread than the host's, for carmine_deliver_wakes.
    woken: Mutex<Vec<u64>>,
}

/// Addresses of the handles a VM gave out (checked on every call that takes one; hashed
/// with the VM's integer hasher: addresses are not input).
type Handles = HashSet<usize, std::hash::BuildHasherDefault<::carmine_vm::symbol::SymHasher>>;

/// A suspended run (carmine_start).
pub struct carmine_task {
    task: Option<runtime::task::Task>,
    /// The host's pointer (carmine_task_set_data).
    data: *mut c_void,
}

/// What a suspended run waits for (see carmine.h).
#[repr(C)]
pub struct carmine_wait {
    pub events: c_int,
    pub fd: c_int,
    pub timeout_ms: i64,
}

/// A compiled script.
pub struct carmine_script {
    script: Option<Script>,
}

fn thread_id() -> u64 {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as u64 }
}

fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "\\0")).unwrap_or_default()
}

/// What an exported function returns when it cannot run (NULL handle, busy, poisoned,
/// panicked).
trait Fallback {
    fn fallback(status: carmine_status) -> Self;
}

impl Fallback for carmine_status {
    fn fallback(status: carmine_status) -> Self {
        status
    }
}
impl Fallback for carmine_value {
    fn fallback(_: carmine_status) -> Self {
        CARMINE_UNDEF
    }
}
impl Fallback for () {
    fn fallback(_: carmine_status) -> Self {}
}
impl Fallback for usize {
    fn fallback(_: carmine_status) -> Self {
        0
    }
}
impl<T> Fallback for *const T {
    fn fallback(_: carmine_status) -> Self {
        std::ptr::null()
    }
}
impl<T> Fallback for *mut T {
    fn fallback(_: carmine_status) -> Self {
        std::ptr::null_mut()
    }
}

/// The state of one entry into a VM.
struct Entered<'a> {
    h: &'a carmine_vm,
    /// This call took ownership (it is the outermost call of its thread).
    outermost: bool,
    /// This call counted itself in `depth`.
    counted: bool,
    ctx: *mut Ctx,
}

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        if self.counted && self.h.depth.fetch_sub(1, Ordering::AcqRel) == 1 {
            let release = !self.h.poisoned.get() && self.rt().is_some_and(|rt| rt.host_leave());
            // `gl_out` before ownership, the lock after it (see the module invariants): the
            // next call from outside waits for the lock before it uses the runtime.
            if release {
                self.h.gl_out.store(true, Ordering::Release);
            }
            self.h.owner.store(0, Ordering::Release);
            if release {
                // SAFETY: the VM outlives its handle's calls.
                runtime::host_release_gl(unsafe { &*self.h.vm_raw });
            }
        }
    }
}

impl Entered<'_> {
    fn ctx(&self) -> &mut Ctx {
        // SAFETY: the context of the runtime or of the running C method; this thread owns
        // the VM (or runs the callback) for the whole entry.
        unsafe { &mut *self.ctx }
    }

    /// The runtime, only for the outermost call (no Ruby code of this VM is running).
    fn rt(&self) -> Option<&mut Runtime> {
        if !self.outermost {
            return None;
        }
        // SAFETY: the outermost call owns the VM; nothing else borrows the runtime.
        unsafe { (*self.h.rt.get()).as_mut() }
    }

    /// Records `e` as the error and pending exception; CARMINE_UNDEF.
    fn fail(&self, e: Unwind) -> carmine_value {
        self.h.pending.set(Some(e));
        let info = self.under_limits(|ctx| runtime::error_info(ctx, e));
        self.set_error(Some(info));
        CARMINE_UNDEF
    }

    fn set_error(&self, info: Option<ErrorInfo>) {
        let ctx = self.ctx();
        let old = self.h.error.borrow_mut().take();
        if let Some(old) = old {
            host::gc_unregister(ctx, old.exception);
        }
        let Some(info) = info else { return };
        host::gc_register(ctx, info.exception);
        *self.h.error.borrow_mut() = Some(CError {
            class: cstring(&info.class_name),
            message: cstring(&info.message),
            backtrace: info.backtrace.iter().map(|l| cstring(l)).collect(),
            report: cstring(&info.report),
            exception: info.exception,
            exit_status: info.exit_status.unwrap_or(0),
        });
    }

    fn clear_error(&self) {
        self.h.pending.set(None);
        // Most calls follow a success: nothing to move out and drop.
        if self.h.error.borrow().is_some() {
            self.set_error(None);
        }
    }

    /// Runs Ruby code from the host: under the limits when no run is in progress.
    fn under_limits<T>(&self, f: impl FnOnce(&mut Ctx) -> T) -> T {
        let ctx = self.ctx();
        let armed = self.outermost && !self.rt().is_some_and(|rt| rt.is_running());
        if armed {
            limits::arm(ctx.vm());
        }
        let r = f(ctx);
        if armed {
            limits::disarm(self.ctx().vm());
        }
        r
    }

    /// How a run this call starts is isolated: the host did nothing with the VM since the
    /// last run call ended when this call is the next entry (see `settled_at`).
    fn isolation(&self) -> Isolation {
        if self.h.entries.get() == self.h.settled_at.get().wrapping_add(1) {
            Isolation::HostIdle
        } else {
            Isolation::Isolated
        }
    }

    /// The end of a run whose runtime part ended when `entries` was `mark`: the call
    /// returns `status` now, and nothing entered or ran Ruby code since (an error's data
    /// is made by calling its methods).
    fn ran(&self, mark: u64, status: carmine_status) {
        if status == CARMINE_OK && self.h.entries.get() == mark {
            self.h.settled_at.set(mark);
        }
    }

    /// A Ruby call's result as C gets it.
    fn value(&self, r: Result<Value, Unwind>) -> carmine_value {
        match r {
            Ok(v) => v.raw(),
            Err(e) => self.fail(e),
        }
    }

    fn status(&self, r: Result<(), Unwind>) -> carmine_status {
        match r {
            Ok(()) => CARMINE_OK,
            Err(e) => {
                self.fail(e);
                CARMINE_EXCEPTION
            }
        }
    }
}

/// A call from outside while the VM's threads run (the last outermost call gave the giant
/// lock up): takes the lock back, ahead of the threads. Whether it did.
#[inline]
fn take_gl_back(h: &carmine_vm) -> bool {
    if !h.gl_out.load(Ordering::Acquire) {
        return false;
    }
    // SAFETY: the VM outlives its handle's calls.
    runtime::host_take_gl(unsafe { &*h.vm_raw });
    h.gl_out.store(false, Ordering::Release);
    true
}

/// Gives the giant lock up to the VM's threads until the host's next call (which no
/// longer claims the VM).
fn give_gl_up(h: &carmine_vm) {
    h.gl_out.store(true, Ordering::Release);
    // SAFETY: the VM outlives its handle's calls.
    runtime::host_release_gl(unsafe { &*h.vm_raw });
}

/// Enters `vm` for one exported call and runs `f`, catching panics.
fn api<R: Fallback>(vm: *mut carmine_vm, f: impl FnOnce(&Entered) -> R) -> R {
    if vm.is_null() {
        return R::fallback(CARMINE_INVALID);
    }
    // SAFETY: a handle from carmine_open, not yet closed (the caller's promise).
    let h = unsafe { &*vm };
    let me = thread_id();
    let mut is_owner = false;
    let owned = h.owner.load(Ordering::Acquire) == me;
    let took_gl = !owned && take_gl_back(h);
    let (outermost, counted, ctx) = if owned {
        h.depth.fetch_add(1, Ordering::AcqRel);
        is_owner = true;
        (false, true, None)
    } else if h.owner.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        h.depth.store(1, Ordering::Release);
        (true, true, None)
    } else {
        match h.callbacks.lock().map(|c| c.iter().rev().find(|(t, _)| *t == me).map(|&(_, c)| c)) {
            Ok(Some(c)) => (false, false, Some(c as *mut Ctx)),
            _ => {
                if took_gl {
                    give_gl_up(h);
                }
                return R::fallback(CARMINE_BUSY);
            }
        }
    };
    let mut entered = Entered { h, outermost, counted, ctx: std::ptr::null_mut() };
    if h.poisoned.get() {
        return R::fallback(CARMINE_BUG);
    }
    h.entries.set(h.entries.get().wrapping_add(1));
    // The context of a C method running on this thread, if any.
    let own = if is_owner { Some(h.owner_ctx.get()).filter(|&c| c != 0).map(|c| c as *mut Ctx) } else { ctx };
    entered.ctx = match ctx.or(own) {
        Some(c) => c,
        None => {
            // SAFETY: this thread owns the VM and no C method of it runs on this thread:
            // nothing else uses the runtime now.
            let Some(rt) = (unsafe { (*h.rt.get()).as_mut() }) else { return R::fallback(CARMINE_INVALID) };
            if entered.outermost {
                h.host_thread.store(me, Ordering::Relaxed);
                rt.host_enter();
            }
            rt.bind_thread();
            rt.ctx() as *mut Ctx
        }
    };
    // The outermost call of a thread inside a C method is not outermost for the runtime.
    if own.is_some() {
        entered.outermost = false;
    }
    // A call nested in one of this thread's (an owner's call is inside the VM already)
    // finds the VM's cache current, or none on a Ruby thread of the VM (malloc then).
    let _blocks = (!is_owner).then(|| block_cache::Current::enter(&h.blocks));
    match catch_unwind(AssertUnwindSafe(|| f(&entered))) {
        Ok(r) => r,
        Err(_) => {
            h.poisoned.set(true);
            R::fallback(CARMINE_BUG)
        }
    }
}

unsafe fn opt_str<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        None
    } else {
        CStr::from_ptr(p).to_str().ok()
    }
}

unsafe fn bytes<'a>(p: *const c_char, len: usize) -> &'a [u8] {
    if p.is_null() || len == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p as *const u8, len)
    }
}

unsafe fn argv_values<'a>(argc: c_int, argv: *const carmine_value) -> Option<&'a [Value]> {
    if argc < 0 || (argc > 0 && argv.is_null()) {
        return None;
    }
    if argc == 0 {
        return Some(&[]);
    }
    // SAFETY: Value is a transparent u64 word; the caller passes argc values.
    Some(std::slice::from_raw_parts(argv as *const Value, argc as usize))
}

// ---- VM lifecycle ----

#[no_mangle]
pub extern "C" fn carmine_open() -> *mut carmine_vm {
    let rt = match catch_unwind(Runtime::new) {
        Ok(rt) => rt,
        Err(_) => return std::ptr::null_mut(),
    };
    let vm_raw = rt.vm() as *const cvm::vm::Vm;
    let h = Box::new(carmine_vm {
        rt: UnsafeCell::new(Some(rt)),
        owner: AtomicU64::new(0),
        depth: AtomicU32::new(0),
        callbacks: Mutex::new(Vec::new()),
        ncallbacks: AtomicU32::new(0),
        owner_ctx: Cell::new(0),
        userdata: Cell::new(std::ptr::null_mut()),
        error: RefCell::new(None),
        pending: Cell::new(None),
        poisoned: Cell::new(false),
        scripts: RefCell::new(Handles::default()),
        last_script: Cell::new(0),
        tasks: RefCell::new(Handles::default()),
        runners: Rc::default(),
        gc_after_run: Cell::new(0),
        blocks: block_cache::BlockCache::new(),
        entries: Cell::new(0),
        settled_at: Cell::new(u64::MAX),
        vm_raw,
        gl_out: AtomicBool::new(false),
        host_thread: AtomicU64::new(0),
        waker: Cell::new(None),
        notify: Cell::new(None),
        woken: Mutex::new(Vec::new()),
    });
    Box::into_raw(h)
}

#[no_mangle]
pub unsafe extern "C" fn carmine_close(vm: *mut carmine_vm) {
    if vm.is_null() {
        return;
    }
    let me = thread_id();
    let h = &*vm;
    let took_gl = take_gl_back(h);
    if h.owner.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire).is_err() {
        // In use (by another thread, or from inside one of its own C methods): a host bug
        // that must not free memory in use.
        if took_gl {
            give_gl_up(h);
        }
        return;
    }
    let h = Box::from_raw(vm);
    let poisoned = h.poisoned.get();
    let rt = (*h.rt.get()).take();
    for s in h.scripts.borrow_mut().drain() {
        drop(Box::from_raw(s as *mut carmine_script));
    }
    let tasks: Vec<usize> = h.tasks.borrow_mut().drain().collect();
    // The handles are being freed: no waker call may name one.
    h.runners.borrow_mut().clear();
    let mut rt = rt;
    if let (Some(rt), false) = (rt.as_mut(), poisoned) {
        rt.host_enter();
    }
    for t in tasks {
        let mut b = Box::from_raw(t as *mut carmine_task);
        // A suspended run is cancelled (its stack unwound, its ensure clauses run): its
        // fiber's frames own memory that only unwinding frees.
        if let (Some(task), Some(rt), false) = (b.task.take(), rt.as_mut(), poisoned) {
            if catch_unwind(AssertUnwindSafe(|| rt.cancel_task(task))).is_err() {
                h.poisoned.set(true);
            }
        }
    }
    let poisoned = h.poisoned.get();
    if let Some(rt) = rt {
        if poisoned {
            // Its state may be inconsistent: leak it rather than run finalizers over it.
            std::mem::forget(rt);
        } else if catch_unwind(AssertUnwindSafe(|| rt.close())).is_err() {
            // Whatever the panic left is leaked.
        }
    }
    h.blocks.flush();
}

#[no_mangle]
pub extern "C" fn carmine_release_code_pages() -> usize {
    catch_unwind(code_pages::release).unwrap_or(0)
}

static VERSION: &CStr = c"carmine 0.1.0 (Ruby 3.4 compatible)";

#[no_mangle]
pub extern "C" fn carmine_version() -> *const c_char {
    VERSION.as_ptr()
}

#[no_mangle]
pub extern "C" fn carmine_set_userdata(vm: *mut carmine_vm, userdata: *mut c_void) {
    api(vm, |e| e.h.userdata.set(userdata))
}

#[no_mangle]
pub extern "C" fn carmine_userdata(vm: *mut carmine_vm) -> *mut c_void {
    // Read without entering the VM: C methods ask for it on every call, and it is only
    // written by carmine_set_userdata, which enters the VM (exclusive).
    // SAFETY: a handle from carmine_open, not yet closed (the caller's promise).
    unsafe { vm.as_ref() }.map_or(std::ptr::null_mut(), |h| h.userdata.get())
}

// ---- scripts ----

/// A script handle for what `make` compiles or loads (NULL and the error recorded if it
/// fails).
fn new_script(e: &Entered, make: impl FnOnce(&mut Ctx) -> Result<Script, Unwind>) -> *mut carmine_script {
    e.clear_error();
    match e.under_limits(make) {
        Ok(s) => {
            let p = Box::into_raw(Box::new(carmine_script { script: Some(s) }));
            e.h.scripts.borrow_mut().insert(p as usize);
            p
        }
        Err(err) => {
            e.fail(err);
            std::ptr::null_mut()
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn carmine_compile(vm: *mut carmine_vm, src: *const c_char, len: usize, filename: *const c_char) -> *mut carmine_script {
    api(vm, |e| {
        if src.is_null() && len > 0 {
            return std::ptr::null_mut();
        }
        new_script(e, |ctx| runtime::compile_script(ctx, bytes(src, len), opt_str(filename).unwrap_or("(carmine)")))
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_compile_file(vm: *mut carmine_vm, path: *const c_char) -> *mut carmine_script {
    api(vm, |e| {
        let Some(p) = opt_str(path) else { return std::ptr::null_mut() };
        match read_file(e, p) {
            Some(src) => new_script(e, |ctx| runtime::compile_script(ctx, &src, p)),
            None => std::ptr::null_mut(),
        }
    })
}

/// The bytes of a file, or None with the Errno exception recorded.
fn read_file(e: &Entered, path: &str) -> Option<Vec<u8>> {
    match std::fs::read(path) {
        Ok(b) => Some(b),
        Err(err) => {
            e.clear_error();
            let errno = err.raw_os_error().unwrap_or(libc::ENOENT);
            let err = cvm::core::process::errno_error(e.ctx(), errno, path);
            e.fail(err);
            None
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn carmine_load_bytecode(vm: *mut carmine_vm, data: *const c_void, len: usize) -> *mut carmine_script {
    api(vm, |e| {
        if data.is_null() && len > 0 {
            return std::ptr::null_mut();
        }
        new_script(e, |ctx| runtime::load_script(ctx, bytes(data as *const c_char, len)))
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_load_bytecode_file(vm: *mut carmine_vm, path: *const c_char) -> *mut carmine_script {
    api(vm, |e| {
        let Some(p) = opt_str(path) else { return std::ptr::null_mut() };
        match read_file(e, p) {
            Some(b) => new_script(e, |ctx| runtime::load_script(ctx, &b)),
            None => std::ptr::null_mut(),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_script_free(vm: *mut carmine_vm, script: *mut carmine_script) {
    if script.is_null() {
        return;
    }
    api(vm, |e| {
        if !e.h.scripts.borrow_mut().remove(&(script as usize)) {
            return;
        }
        if e.h.last_script.get() == script as usize {
            e.h.last_script.set(0);
        }
        let mut b = Box::from_raw(script);
        if let Some(s) = b.script.take() {
            runtime::free_script(e.ctx(), s);
        }
    })
}

/// Runs a script and turns its outcome into a status (and the error data).
fn run(e: &Entered, script: &Script, isolated: bool, result: *mut carmine_value) -> carmine_status {
    let Some(rt) = e.rt() else { return CARMINE_BUSY };
    if rt.is_running() {
        return CARMINE_BUSY;
    }
    e.clear_error();
    let r = rt.run_script(script, if isolated { e.isolation() } else { Isolation::Shared });
    let mark = e.h.entries.get();
    let tripped = rt.limit_tripped();
    collect_after_run(e);
    let status = outcome(e, r, tripped, result);
    e.ran(mark, status);
    status
}

/// The collection carmine_set_gc_after_run asks for, at the end of a run (no Ruby code of
/// the VM running; the run's result is still in the caller's locals, which the collector
/// scans).
fn collect_after_run(e: &Entered) {
    let bytes = e.h.gc_after_run.get();
    if bytes == 0 {
        return;
    }
    let ctx = e.ctx();
    let grown = ctx.vm().heap.lock().malloc_increase;
    if grown >= bytes {
        cvm::gc::collect_for(ctx, cvm::heap::stats::GcReason::Method);
        e.h.blocks.release_pages();
        // What the collection freed goes back to the system, not only to malloc's lists.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim has no preconditions.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// The status (and error data, and *result) of a run that ended with `r`.
fn outcome(e: &Entered, r: Result<Value, Unwind>, tripped: bool, result: *mut carmine_value) -> carmine_status {
    let (status, v) = match r {
        Ok(v) => (CARMINE_OK, v.raw()),
        Err(err) => {
            e.fail(err);
            let exit = e.h.error.borrow().as_ref().is_some_and(|c| c.class.as_bytes() == b"SystemExit");
            (if tripped { CARMINE_LIMIT } else if exit { CARMINE_EXIT } else { CARMINE_EXCEPTION }, CARMINE_UNDEF)
        }
    };
    if !result.is_null() {
        // SAFETY: the caller passes a writable carmine_value or NULL.
        unsafe { *result = v };
    }
    status
}

/// The status of a task's step; a suspended task is (back) in its handle `slot` (made
/// now when None: a run that never suspends costs no handle), a finished one's handle is
/// freed. The handle of a suspended task.
unsafe fn task_step(e: &Entered, slot: Option<*mut carmine_task>, task: runtime::task::Task, step: runtime::task::Step, wait: *mut carmine_wait, result: *mut carmine_value) -> (carmine_status, *mut carmine_task) {
    let rt_tripped = e.rt().is_some_and(|rt| rt.limit_tripped());
    match step {
        runtime::task::Step::Suspended(w) => {
            let slot = slot.unwrap_or_else(|| {
                let slot = Box::into_raw(Box::new(carmine_task { task: None, data: std::ptr::null_mut() }));
                e.h.tasks.borrow_mut().insert(slot as usize);
                e.h.runners.borrow_mut().insert(task.runner().raw(), slot as usize);
                slot
            });
            (*slot).task = Some(task);
            if !wait.is_null() {
                *wait = carmine_wait {
                    events: w.events as c_int,
                    fd: w.fd,
                    timeout_ms: w.timeout.map_or(-1, |t| i64::try_from(t.as_nanos().div_ceil(1_000_000)).unwrap_or(i64::MAX)),
                };
            }
            if !result.is_null() {
                *result = CARMINE_UNDEF;
            }
            (CARMINE_SUSPENDED, slot)
        }
        runtime::task::Step::Done(r) => {
            let mark = e.h.entries.get();
            if let Some(slot) = slot {
                forget_task(e, slot, &task);
            }
            drop(task);
            if !wait.is_null() {
                *wait = carmine_wait { events: 0, fd: -1, timeout_ms: -1 };
            }
            collect_after_run(e);
            let status = outcome(e, r, rt_tripped, result);
            e.ran(mark, status);
            (status, std::ptr::null_mut())
        }
    }
}

/// Frees the handle of a task that ended.
unsafe fn forget_task(e: &Entered, slot: *mut carmine_task, task: &runtime::task::Task) {
    e.h.tasks.borrow_mut().remove(&(slot as usize));
    e.h.runners.borrow_mut().remove(&task.runner().raw());
    drop(Box::from_raw(slot));
}

/// Drops a queued wake of the task on `runner`, which is resumed or cancelled now: it
/// was for the wait it leaves (the runner may serve another task later).
fn forget_wake(h: &carmine_vm, runner: u64) {
    if h.notify.get().is_some() {
        if let Ok(mut w) = h.woken.lock() {
            w.retain(|&r| r != runner);
        }
    }
}

/// The task of a handle this VM made, taken out of it.
unsafe fn take_task(e: &Entered, task: *mut carmine_task) -> Option<runtime::task::Task> {
    if task.is_null() || !e.h.tasks.borrow().contains(&(task as usize)) {
        return None;
    }
    (*task).task.take()
}

#[no_mangle]
pub unsafe extern "C" fn carmine_start(vm: *mut carmine_vm, script: *mut carmine_script, task: *mut *mut carmine_task, wait: *mut carmine_wait, result: *mut carmine_value) -> carmine_status {
    api(vm, |e| {
        if task.is_null() {
            return CARMINE_INVALID;
        }
        *task = std::ptr::null_mut();
        let Some(s) = script_of(e, script) else { return CARMINE_INVALID };
        let Some(rt) = e.rt() else { return CARMINE_BUSY };
        if rt.is_running() {
            return CARMINE_BUSY;
        }
        e.clear_error();
        let (t, step) = rt.start_task(s, e.isolation());
        let (status, slot) = task_step(e, None, t, step, wait, result);
        *task = slot;
        status
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_resume(vm: *mut carmine_vm, task: *mut carmine_task, ready: c_int, wait: *mut carmine_wait, result: *mut carmine_value) -> carmine_status {
    api(vm, |e| {
        let Some(rt) = e.rt() else { return CARMINE_BUSY };
        if rt.is_running() {
            return CARMINE_BUSY;
        }
        let Some(mut t) = take_task(e, task) else { return CARMINE_INVALID };
        e.clear_error();
        forget_wake(e.h, t.runner().raw());
        let step = rt.resume_task(&mut t, (ready & (CARMINE_READABLE | CARMINE_WRITABLE)) as i64);
        task_step(e, Some(task), t, step, wait, result).0
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_cancel(vm: *mut carmine_vm, task: *mut carmine_task) -> carmine_status {
    api(vm, |e| {
        let Some(rt) = e.rt() else { return CARMINE_BUSY };
        if rt.is_running() {
            return CARMINE_BUSY;
        }
        let Some(t) = take_task(e, task) else { return CARMINE_INVALID };
        e.clear_error();
        let runner = t.runner().raw();
        forget_wake(e.h, runner);
        let r = rt.cancel_task(t);
        let tripped = rt.limit_tripped();
        e.h.tasks.borrow_mut().remove(&(task as usize));
        e.h.runners.borrow_mut().remove(&runner);
        drop(Box::from_raw(task));
        outcome(e, r, tripped, std::ptr::null_mut())
    })
}

/// What carmine_set_waker calls (see carmine.h).
pub type carmine_wake_func = Option<unsafe extern "C" fn(data: *mut c_void, task: *mut carmine_task)>;

#[no_mangle]
pub extern "C" fn carmine_set_waker(vm: *mut carmine_vm, wake: carmine_wake_func, data: *mut c_void) {
    api(vm, |e| {
        let Some(rt) = e.rt() else { return };
        e.h.waker.set(wake.map(|w| (w, data as usize)));
        let hp = vm as usize;
        let waker = wake.map(|_| {
            Box::new(move |runner: cvm::value::Value| {
                // SAFETY: the handle outlives its VM's runs.
                let h = unsafe { &*(hp as *const carmine_vm) };
                match h.notify.get() {
                    // A thread of the VM woke it while the host is elsewhere.
                    Some((notify, data)) if thread_id() != h.host_thread.load(Ordering::Relaxed) => {
                        if let Ok(mut w) = h.woken.lock() {
                            w.push(runner.raw());
                        }
                        // SAFETY: the host's function, callable from any thread.
                        unsafe { notify(data as *mut c_void) };
                    }
                    _ => wake_runner(h, runner.raw()),
                }
            }) as runtime::task::Waker
        });
        rt.set_waker(waker);
    })
}

/// Calls the host's waker for the task that runs on `runner`, if it is still suspended.
fn wake_runner(h: &carmine_vm, runner: u64) {
    let slot = h.runners.borrow().get(&runner).copied();
    if let (Some(slot), Some((wake, data))) = (slot, h.waker.get()) {
        // SAFETY: the host's function, given a handle of this VM that is alive (handles
        // leave `runners` when they are freed).
        unsafe { wake(data as *mut c_void, slot as *mut carmine_task) };
    }
}

/// What carmine_set_notify calls (see carmine.h).
pub type carmine_notify_func = Option<unsafe extern "C" fn(data: *mut c_void)>;

#[no_mangle]
pub extern "C" fn carmine_set_notify(vm: *mut carmine_vm, notify: carmine_notify_func, data: *mut c_void) {
    api(vm, |e| {
        let Some(rt) = e.rt() else { return };
        e.h.notify.set(notify.map(|n| (n, data as usize)));
        rt.set_threads_outside(notify.is_some());
    })
}

#[no_mangle]
pub extern "C" fn carmine_deliver_wakes(vm: *mut carmine_vm) -> usize {
    api(vm, |e| {
        let woken = e.h.woken.lock().map(|mut w| std::mem::take(&mut *w)).unwrap_or_default();
        for &runner in &woken {
            wake_runner(e.h, runner);
        }
        woken.len()
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_task_set_data(task: *mut carmine_task, data: *mut c_void) {
    if let Some(t) = task.as_mut() {
        t.data = data;
    }
}

#[no_mangle]
pub unsafe extern "C" fn carmine_task_data(task: *const carmine_task) -> *mut c_void {
    task.as_ref().map_or(std::ptr::null_mut(), |t| t.data)
}

#[no_mangle]
pub extern "C" fn carmine_task_count(vm: *mut carmine_vm) -> usize {
    api(vm, |e| e.h.tasks.borrow().len())
}

unsafe fn script_of<'a>(e: &Entered, script: *mut carmine_script) -> Option<&'a Script> {
    let addr = script as usize;
    if addr == 0 {
        return None;
    }
    if addr != e.h.last_script.get() {
        if !e.h.scripts.borrow().contains(&addr) {
            return None;
        }
        e.h.last_script.set(addr);
    }
    (*script).script.as_ref()
}

#[no_mangle]
pub unsafe extern "C" fn carmine_run(vm: *mut carmine_vm, script: *mut carmine_script, result: *mut carmine_value) -> carmine_status {
    api(vm, |e| match script_of(e, script) {
        Some(s) => run(e, s, true, result),
        None => CARMINE_INVALID,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_run_shared(vm: *mut carmine_vm, script: *mut carmine_script, result: *mut carmine_value) -> carmine_status {
    api(vm, |e| match script_of(e, script) {
        Some(s) => run(e, s, false, result),
        None => CARMINE_INVALID,
    })
}

unsafe fn eval(vm: *mut carmine_vm, src: *const c_char, len: usize, filename: *const c_char, result: *mut carmine_value, isolated: bool) -> carmine_status {
    api(vm, |e| {
        if src.is_null() && len > 0 {
            return CARMINE_INVALID;
        }
        if e.rt().is_none_or(|rt| rt.is_running()) {
            return CARMINE_BUSY;
        }
        e.clear_error();
        let path = opt_str(filename).unwrap_or("(eval)");
        let compiled = e.under_limits(|ctx| runtime::compile_script(ctx, bytes(src, len), path));
        match compiled {
            Ok(s) => {
                let status = run(e, &s, isolated, result);
                runtime::free_script(e.ctx(), s);
                status
            }
            Err(err) => {
                e.fail(err);
                if !result.is_null() {
                    *result = CARMINE_UNDEF;
                }
                CARMINE_EXCEPTION
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_eval(vm: *mut carmine_vm, src: *const c_char, len: usize, filename: *const c_char, result: *mut carmine_value) -> carmine_status {
    eval(vm, src, len, filename, result, true)
}

#[no_mangle]
pub unsafe extern "C" fn carmine_eval_shared(vm: *mut carmine_vm, src: *const c_char, len: usize, filename: *const c_char, result: *mut carmine_value) -> carmine_status {
    eval(vm, src, len, filename, result, false)
}

// ---- limits ----

#[no_mangle]
pub extern "C" fn carmine_set_timeout(vm: *mut carmine_vm, milliseconds: u64) {
    api(vm, |e| {
        let t = (milliseconds > 0).then(|| std::time::Duration::from_millis(milliseconds));
        if t.is_some() {
            limits::timeout_error_class(e.ctx());
        }
        let _ = limits::set_timeout(e.ctx().vm(), t);
    })
}

#[no_mangle]
pub extern "C" fn carmine_set_memory_limit(vm: *mut carmine_vm, bytes: usize) {
    api(vm, |e| limits::set_memory_cap(e.ctx().vm(), bytes))
}

#[no_mangle]
pub extern "C" fn carmine_set_gc_malloc_limit(vm: *mut carmine_vm, bytes: usize) {
    api(vm, |e| e.ctx().vm().heap.set_malloc_limit_min(bytes))
}

#[no_mangle]
pub extern "C" fn carmine_set_gc_after_run(vm: *mut carmine_vm, bytes: usize) {
    api(vm, |e| e.h.gc_after_run.set(bytes))
}

#[no_mangle]
pub extern "C" fn carmine_memory_usage(vm: *mut carmine_vm) -> usize {
    api(vm, |e| limits::memory_usage(e.ctx().vm()))
}

// ---- errors ----

fn error_str(vm: *mut carmine_vm, f: impl FnOnce(&CError) -> *const c_char) -> *const c_char {
    api(vm, |e| e.h.error.borrow().as_ref().map_or(std::ptr::null(), f))
}

#[no_mangle]
pub extern "C" fn carmine_error_class(vm: *mut carmine_vm) -> *const c_char {
    error_str(vm, |c| c.class.as_ptr())
}

#[no_mangle]
pub extern "C" fn carmine_error_message(vm: *mut carmine_vm) -> *const c_char {
    error_str(vm, |c| c.message.as_ptr())
}

#[no_mangle]
pub extern "C" fn carmine_error_report(vm: *mut carmine_vm) -> *const c_char {
    error_str(vm, |c| c.report.as_ptr())
}

#[no_mangle]
pub extern "C" fn carmine_error_backtrace_size(vm: *mut carmine_vm) -> usize {
    api(vm, |e| e.h.error.borrow().as_ref().map_or(0, |c| c.backtrace.len()))
}

#[no_mangle]
pub extern "C" fn carmine_error_backtrace(vm: *mut carmine_vm, i: usize) -> *const c_char {
    error_str(vm, |c| c.backtrace.get(i).map_or(std::ptr::null(), |l| l.as_ptr()))
}

#[no_mangle]
pub extern "C" fn carmine_error_value(vm: *mut carmine_vm) -> carmine_value {
    api(vm, |e| e.h.error.borrow().as_ref().map_or(Value::NIL, |c| c.exception).raw())
}

#[no_mangle]
pub extern "C" fn carmine_exit_status(vm: *mut carmine_vm) -> c_int {
    api(vm, |e| e.h.error.borrow().as_ref().map_or(0, |c| c.exit_status) as usize) as c_int
}

#[no_mangle]
pub extern "C" fn carmine_error_clear(vm: *mut carmine_vm) {
    api(vm, |e| e.clear_error())
}

#[no_mangle]
pub unsafe extern "C" fn carmine_raise(vm: *mut carmine_vm, exc_class: carmine_value, message: *const c_char) -> carmine_value {
    api(vm, |e| {
        let ctx = e.ctx();
        let mut class = Value::from_raw(exc_class);
        if !module::is_class(class) {
            class = ctx.c().runtime_error;
        }
        let msg = if message.is_null() { String::new() } else { CStr::from_ptr(message).to_string_lossy().into_owned() };
        let m = string::new_from_bytes(ctx, msg.as_bytes());
        let r = ctx.call_str(class, "new", &[m]);
        match r {
            Ok(exc) => {
                cvm::core::exception::ensure_backtrace(ctx, exc);
                e.fail(Unwind::Raise(exc))
            }
            Err(err) => e.fail(err),
        }
    })
}

// ---- output ----

fn set_output(vm: *mut carmine_vm, global: &str, constant: &str, write: carmine_write_func, data: *mut c_void) {
    api(vm, |e| {
        let ctx = e.ctx();
        let v = match write {
            Some(w) => {
                let data = data as usize;
                host::new_output(
                    ctx,
                    Box::new(move |b: &[u8]| {
                        // SAFETY: the host's write function, called with its own data pointer.
                        unsafe { w(data as *mut c_void, b.as_ptr() as *const c_char, b.len()) }
                    }),
                )
            }
            None => {
                let id = ctx.intern(constant);
                module::body(ctx.c().object).const_get(id).map_or(Value::NIL, |c| c.value)
            }
        };
        if !v.is_nil() {
            let id = ctx.intern(global);
            globals::set_raw(ctx, id, v);
        }
    })
}

#[no_mangle]
pub extern "C" fn carmine_set_stdout(vm: *mut carmine_vm, write: carmine_write_func, data: *mut c_void) {
    set_output(vm, "$stdout", "STDOUT", write, data)
}

#[no_mangle]
pub extern "C" fn carmine_set_stderr(vm: *mut carmine_vm, write: carmine_write_func, data: *mut c_void) {
    set_output(vm, "$stderr", "STDERR", write, data)
}

// ---- values ----

#[no_mangle]
pub extern "C" fn carmine_nil() -> carmine_value {
    Value::NIL.raw()
}

#[no_mangle]
pub extern "C" fn carmine_true() -> carmine_value {
    Value::TRUE.raw()
}

#[no_mangle]
pub extern "C" fn carmine_false() -> carmine_value {
    Value::FALSE.raw()
}

#[no_mangle]
pub extern "C" fn carmine_bool(b: c_int) -> carmine_value {
    Value::bool(b != 0).raw()
}

#[no_mangle]
pub extern "C" fn carmine_is_nil(v: carmine_value) -> c_int {
    (Value::from_raw(v) == Value::NIL) as c_int
}

#[no_mangle]
pub extern "C" fn carmine_truthy(v: carmine_value) -> c_int {
    let v = Value::from_raw(v);
    (v.truthy() && !v.is_undef()) as c_int
}

#[no_mangle]
pub extern "C" fn carmine_type_of(vm: *mut carmine_vm, v: carmine_value) -> carmine_type {
    api(vm, |_| type_of(Value::from_raw(v)) as usize) as carmine_type
}

fn type_of(v: Value) -> carmine_type {
    if v.is_undef() {
        return T_UNDEF;
    }
    if v == Value::NIL {
        return T_NIL;
    }
    if v == Value::FALSE {
        return T_FALSE;
    }
    if v == Value::TRUE {
        return T_TRUE;
    }
    if v.is_fixnum() || bignum::is_bignum(v) {
        return T_INTEGER;
    }
    if v.is_flonum() || float::is_float(v) {
        return T_FLOAT;
    }
    if v.is_symbol() {
        return T_SYMBOL;
    }
    if !v.is_heap() {
        return T_OBJECT;
    }
    match cvm::object::basic(v).obj_type() {
        ObjType::String => T_STRING,
        ObjType::Array => T_ARRAY,
        ObjType::Hash => T_HASH,
        ObjType::Proc => T_PROC,
        ObjType::Class if module::body(v).is_module() => T_MODULE,
        ObjType::Class => T_CLASS,
        ObjType::Data if host::is_host_data(v) => T_DATA,
        _ => T_OBJECT,
    }
}

fn int_value(ctx: &mut Ctx, i: i64) -> Value {
    Value::try_fixnum(i).unwrap_or_else(|| bignum::from_i128(ctx, i as i128))
}

#[no_mangle]
pub extern "C" fn carmine_int(vm: *mut carmine_vm, i: i64) -> carmine_value {
    match Value::try_fixnum(i) {
        Some(v) => v.raw(),
        None => api(vm, |e| int_value(e.ctx(), i).raw()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn carmine_to_int(vm: *mut carmine_vm, v: carmine_value, out: *mut i64) -> carmine_status {
    api(vm, |e| {
        let v = Value::from_raw(v);
        let ctx = e.ctx();
        let r = if v.is_fixnum() || bignum::is_bignum(v) {
            cvm::core::integer::to_i64_arg(ctx, v)
        } else {
            let cls = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("no implicit conversion of {cls} into Integer")))
        };
        match r {
            Ok(i) => {
                if !out.is_null() {
                    *out = i;
                }
                CARMINE_OK
            }
            Err(err) => {
                e.fail(err);
                CARMINE_EXCEPTION
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn carmine_float(vm: *mut carmine_vm, d: f64) -> carmine_value {
    match Value::try_flonum(d) {
        Some(v) => v.raw(),
        None => api(vm, |e| float::new(e.ctx(), d).raw()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn carmine_to_float(vm: *mut carmine_vm, v: carmine_value, out: *mut f64) -> carmine_status {
    api(vm, |e| {
        let v = Value::from_raw(v);
        let d = if v.is_flonum() || float::is_float(v) {
            Some(float::get(v))
        } else if v.is_fixnum() || bignum::is_bignum(v) {
            Some(cvm::core::integer::to_f64(v))
        } else {
            None
        };
        match d {
            Some(d) => {
                if !out.is_null() {
                    *out = d;
                }
                CARMINE_OK
            }
            None => {
                let ctx = e.ctx();
                let cls = object::class_name_of(ctx, v);
                let err = ctx.type_error(&format!("can't convert {cls} into Float"));
                e.fail(err);
                CARMINE_EXCEPTION
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_str(vm: *mut carmine_vm, b: *const c_char, len: usize) -> carmine_value {
    api(vm, |e| {
        if b.is_null() && len > 0 {
            return CARMINE_UNDEF;
        }
        string::new_from_bytes(e.ctx(), bytes(b, len)).raw()
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_cstr(vm: *mut carmine_vm, s: *const c_char) -> carmine_value {
    if s.is_null() {
        return CARMINE_UNDEF;
    }
    carmine_str(vm, s, CStr::from_ptr(s).to_bytes().len())
}

#[no_mangle]
pub unsafe extern "C" fn carmine_str_ptr(vm: *mut carmine_vm, v: carmine_value, len: *mut usize) -> *const c_char {
    api(vm, |_| {
        let v = Value::from_raw(v);
        if !string::is_string(v) {
            return std::ptr::null();
        }
        if !len.is_null() {
            *len = string::len(v);
        }
        string::bytes_mut(v).as_c_ptr() as *const c_char
    })
}

#[no_mangle]
pub extern "C" fn carmine_to_s(vm: *mut carmine_vm, v: carmine_value) -> carmine_value {
    api(vm, |e| {
        let r = e.under_limits(|ctx| string::to_s(ctx, Value::from_raw(v)));
        e.value(r)
    })
}

#[no_mangle]
pub extern "C" fn carmine_inspect(vm: *mut carmine_vm, v: carmine_value) -> carmine_value {
    api(vm, |e| {
        let r = e.under_limits(|ctx| object::inspect(ctx, Value::from_raw(v)));
        e.value(r)
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_sym(vm: *mut carmine_vm, name: *const c_char) -> carmine_value {
    if name.is_null() {
        return CARMINE_UNDEF;
    }
    api(vm, |e| Value::symbol(e.ctx().intern_bytes(CStr::from_ptr(name).to_bytes())).raw())
}

#[no_mangle]
pub unsafe extern "C" fn carmine_sym_name(vm: *mut carmine_vm, v: carmine_value, len: *mut usize) -> *const c_char {
    api(vm, |e| {
        let Some(id) = Value::from_raw(v).as_symbol() else { return std::ptr::null() };
        // Symbols live as long as the VM; their names are kept NUL-terminated here.
        let name = e.ctx().sym_name(id);
        if !len.is_null() {
            *len = name.len();
        }
        e.ctx().vm().host.c_name(id, &name)
    })
}

#[no_mangle]
pub extern "C" fn carmine_ary_new(vm: *mut carmine_vm) -> carmine_value {
    api(vm, |e| array::new(e.ctx()).raw())
}

/// The size of a collection of the kind `is` tests (0 for anything else).
fn size(vm: *mut carmine_vm, v: carmine_value, is: fn(Value) -> bool, len: fn(Value) -> usize) -> usize {
    api(vm, |_| {
        let v = Value::from_raw(v);
        if is(v) {
            len(v)
        } else {
            0
        }
    })
}

/// `recv.method(*args)` for a collection of the kind `is` tests: Ruby's own checks
/// (frozen, index range) apply.
fn mutate(vm: *mut carmine_vm, recv: carmine_value, is: fn(Value) -> bool, method: &str, args: impl FnOnce(&mut Ctx) -> Vec<Value>) -> carmine_status {
    api(vm, |e| {
        let recv = Value::from_raw(recv);
        if !is(recv) {
            return CARMINE_INVALID;
        }
        let r = e.under_limits(|ctx| {
            let args = args(ctx);
            ctx.call_str(recv, method, &args).map(|_| ())
        });
        e.status(r)
    })
}

#[no_mangle]
pub extern "C" fn carmine_ary_len(vm: *mut carmine_vm, a: carmine_value) -> usize {
    size(vm, a, array::is_array, array::len)
}

#[no_mangle]
pub extern "C" fn carmine_ary_get(vm: *mut carmine_vm, a: carmine_value, i: i64) -> carmine_value {
    api(vm, |_| {
        let a = Value::from_raw(a);
        if !array::is_array(a) {
            return CARMINE_UNDEF;
        }
        let n = array::len(a) as i64;
        let i = if i < 0 { i + n } else { i };
        if i < 0 || i >= n {
            Value::NIL.raw()
        } else {
            array::get(a, i as usize).raw()
        }
    })
}

#[no_mangle]
pub extern "C" fn carmine_ary_set(vm: *mut carmine_vm, a: carmine_value, i: i64, v: carmine_value) -> carmine_status {
    mutate(vm, a, array::is_array, "[]=", |ctx| vec![int_value(ctx, i), Value::from_raw(v)])
}

#[no_mangle]
pub extern "C" fn carmine_ary_push(vm: *mut carmine_vm, a: carmine_value, v: carmine_value) -> carmine_status {
    mutate(vm, a, array::is_array, "push", |_| vec![Value::from_raw(v)])
}

#[no_mangle]
pub extern "C" fn carmine_hash_new(vm: *mut carmine_vm) -> carmine_value {
    api(vm, |e| hash::new(e.ctx()).raw())
}

#[no_mangle]
pub extern "C" fn carmine_hash_size(vm: *mut carmine_vm, h: carmine_value) -> usize {
    size(vm, h, hash::is_hash, hash::len)
}

#[no_mangle]
pub extern "C" fn carmine_hash_get(vm: *mut carmine_vm, h: carmine_value, key: carmine_value) -> carmine_value {
    api(vm, |e| {
        let h = Value::from_raw(h);
        if !hash::is_hash(h) {
            return CARMINE_UNDEF;
        }
        match e.under_limits(|ctx| hash::lookup(ctx, h, Value::from_raw(key))) {
            Ok(Some(v)) => v.raw(),
            Ok(None) => CARMINE_UNDEF,
            Err(err) => e.fail(err),
        }
    })
}

#[no_mangle]
pub extern "C" fn carmine_hash_set(vm: *mut carmine_vm, h: carmine_value, key: carmine_value, v: carmine_value) -> carmine_status {
    mutate(vm, h, hash::is_hash, "[]=", |_| vec![Value::from_raw(key), Value::from_raw(v)])
}

#[no_mangle]
pub extern "C" fn carmine_hash_keys(vm: *mut carmine_vm, h: carmine_value) -> carmine_value {
    api(vm, |e| {
        let h = Value::from_raw(h);
        if !hash::is_hash(h) {
            return CARMINE_UNDEF;
        }
        let r = e.under_limits(|ctx| ctx.call_str(h, "keys", &[]));
        e.value(r)
    })
}

// ---- calling Ruby ----

unsafe fn call(vm: *mut carmine_vm, recv: carmine_value, method: *const c_char, argc: c_int, argv: *const carmine_value, block: carmine_value) -> carmine_value {
    api(vm, |e| {
        let (Some(name), Some(args)) = (opt_str(method), argv_values(argc, argv)) else { return CARMINE_UNDEF };
        let block = Value::from_raw(block);
        let block = (proc::is_proc(block)).then_some(Block::Proc(block));
        e.h.pending.set(None);
        let r = e.under_limits(|ctx| {
            let mid = ctx.intern(name);
            ctx.call_kw(Value::from_raw(recv), mid, args, None, block)
        });
        e.value(r)
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_call(vm: *mut carmine_vm, recv: carmine_value, method: *const c_char, argc: c_int, argv: *const carmine_value) -> carmine_value {
    call(vm, recv, method, argc, argv, Value::NIL.raw())
}

#[no_mangle]
pub unsafe extern "C" fn carmine_call_with_block(vm: *mut carmine_vm, recv: carmine_value, method: *const c_char, argc: c_int, argv: *const carmine_value, block: carmine_value) -> carmine_value {
    call(vm, recv, method, argc, argv, block)
}

#[no_mangle]
pub unsafe extern "C" fn carmine_yield(vm: *mut carmine_vm, block: carmine_value, argc: c_int, argv: *const carmine_value) -> carmine_value {
    api(vm, |e| {
        let Some(args) = argv_values(argc, argv) else { return CARMINE_UNDEF };
        let p = Value::from_raw(block);
        if !proc::is_proc(p) {
            let err = e.ctx().local_jump_error("no block given (yield)", cvm::symbol::sym::NOT, Value::NIL);
            return e.fail(err);
        }
        let r = e.under_limits(|ctx| ctx.call_proc(p, args, None));
        e.value(r)
    })
}

// ---- classes, modules, methods ----

#[no_mangle]
pub unsafe extern "C" fn carmine_class_get(vm: *mut carmine_vm, path: *const c_char) -> carmine_value {
    api(vm, |e| {
        let Some(path) = opt_str(path) else { return CARMINE_UNDEF };
        let r = e.under_limits(|ctx| {
            let s = string::new_utf8(ctx, path);
            let object = ctx.c().object;
            ctx.call_str(object, "const_get", &[s])
        });
        e.value(r)
    })
}

fn define_class(e: &Entered, outer: Value, name: &str, superclass: Value, module_kind: bool) -> carmine_value {
    let ctx = e.ctx();
    if !module::is_class_or_module(outer) {
        let err = ctx.type_error("outer is not a class or module");
        return e.fail(err);
    }
    let superclass = if superclass.is_undef() || superclass.is_nil() { ctx.c().object } else { superclass };
    if !module_kind && !module::is_class(superclass) {
        let err = ctx.type_error("superclass must be a Class");
        return e.fail(err);
    }
    let id = ctx.intern(name);
    if let Some(existing) = module::body(outer).const_get(id).map(|c| c.value) {
        let fits = if module_kind { module::is_class_or_module(existing) && module::body(existing).is_module() } else { module::is_class(existing) && module::real_class(module::body(existing).superclass) == superclass };
        if fits {
            return existing.raw();
        }
        let what = if module_kind { "module" } else { "class" };
        let err = ctx.type_error(&format!("{name} is already defined and is not a {what} of that kind"));
        return e.fail(err);
    }
    let k = if module_kind { module_methods::define_module_under(ctx, outer, name) } else { module_methods::define_class_under(ctx, outer, name, superclass) };
    ctx.vm().bump_const_epoch();
    k.raw()
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_class(vm: *mut carmine_vm, name: *const c_char, superclass: carmine_value) -> carmine_value {
    api(vm, |e| match opt_str(name) {
        Some(n) => define_class(e, e.ctx().c().object, n, Value::from_raw(superclass), false),
        None => CARMINE_UNDEF,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_class_under(vm: *mut carmine_vm, outer: carmine_value, name: *const c_char, superclass: carmine_value) -> carmine_value {
    api(vm, |e| match opt_str(name) {
        Some(n) => define_class(e, Value::from_raw(outer), n, Value::from_raw(superclass), false),
        None => CARMINE_UNDEF,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_module(vm: *mut carmine_vm, name: *const c_char) -> carmine_value {
    api(vm, |e| match opt_str(name) {
        Some(n) => define_class(e, e.ctx().c().object, n, Value::NIL, true),
        None => CARMINE_UNDEF,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_module_under(vm: *mut carmine_vm, outer: carmine_value, name: *const c_char) -> carmine_value {
    api(vm, |e| match opt_str(name) {
        Some(n) => define_class(e, Value::from_raw(outer), n, Value::NIL, true),
        None => CARMINE_UNDEF,
    })
}

/// The host closure behind a C method: calls `f` with the VM handle, taking over the
/// VM's ownership for the OS thread running it (a Ruby thread of the VM may call it).
fn c_method(vm: *mut carmine_vm, f: carmine_func, data: *mut c_void) -> Rc<host::HostFn> {
    let (vm, data) = (vm as usize, data as usize);
    Rc::new(move |ctx: &mut Ctx, recv: Value, args: &Args<'_>| {
        let h_ptr = vm as *mut carmine_vm;
        // SAFETY: the handle outlives its VM's methods (they die with the VM).
        let h = unsafe { &*h_ptr };
        let block = match &args.block {
            Some(b) => proc::from_block(ctx, b)?,
            None => Value::NIL,
        };
        let me = thread_id();
        if h.owner.load(Ordering::Acquire) == 0 && h.notify.get().is_some() {
            // A thread of the VM runs while the host is outside it: the host's functions
            // are not to be called then.
            let k = ctx.c().thread_error;
            return Err(ctx.raise(k, "a C method called from a thread while the host is outside the VM"));
        }
        // This thread holds the VM's giant lock: it may take the VM over while f runs.
        let prev_owner = h.owner.swap(me, Ordering::AcqRel);
        let prev_depth = h.depth.swap(1, Ordering::AcqRel);
        let prev_ctx = h.owner_ctx.replace(ctx as *mut Ctx as usize);
        // Another thread's C method is displaced: it finds its context in `callbacks`.
        let displaced = prev_owner != me && prev_owner != 0 && prev_ctx != 0;
        if displaced {
            if let Ok(mut c) = h.callbacks.lock() {
                c.push((prev_owner, prev_ctx));
                h.ncallbacks.store(c.len() as u32, Ordering::Release);
            }
        }
        h.pending.set(None);
        // SAFETY: the host's function, with arguments that live on the VM stack (scanned
        // precisely) for the whole call.
        let r = unsafe { f(h_ptr, recv.raw(), args.pos.len() as c_int, args.pos.as_ptr() as *const carmine_value, block.raw(), data as *mut c_void) };
        if displaced {
            if let Ok(mut c) = h.callbacks.lock() {
                if let Some(i) = c.iter().rposition(|&e| e == (prev_owner, prev_ctx)) {
                    c.remove(i);
                }
                h.ncallbacks.store(c.len() as u32, Ordering::Release);
            }
        }
        h.owner_ctx.set(prev_ctx);
        h.depth.store(prev_depth, Ordering::Release);
        h.owner.store(prev_owner, Ordering::Release);
        let pending = h.pending.take();
        if h.poisoned.get() {
            return Err(ctx.runtime_error("[BUG] internal error in a call from a C method"));
        }
        if r == CARMINE_UNDEF {
            return Err(pending.unwrap_or_else(|| ctx.runtime_error("C method returned CARMINE_UNDEF without an exception")));
        }
        Ok(Value::from_raw(r))
    })
}

fn arity(min_args: c_int, max_args: c_int) -> Option<Arity> {
    if !(0..=255).contains(&min_args) {
        return None;
    }
    match max_args {
        -1 => Some(Arity::rest(min_args as u8)),
        m if (min_args..=255).contains(&m) => Some(Arity::range(min_args as u8, m as u8)),
        _ => None,
    }
}

unsafe fn define_method(vm: *mut carmine_vm, target: carmine_value, name: *const c_char, f: Option<carmine_func>, min_args: c_int, max_args: c_int, data: *mut c_void, kind: u8) -> carmine_status {
    api(vm, |e| {
        let (Some(name), Some(f), Some(arity)) = (opt_str(name), f, arity(min_args, max_args)) else { return CARMINE_INVALID };
        let ctx = e.ctx();
        let target = Value::from_raw(target);
        let body = c_method(vm, f, data);
        match kind {
            0 => {
                if !module::is_class_or_module(target) {
                    return CARMINE_INVALID;
                }
                host::define_host_method(ctx, target, name, arity, Visibility::Public, body);
            }
            1 => {
                if !target.is_heap() {
                    return CARMINE_INVALID;
                }
                match object::singleton_class(ctx, target) {
                    Ok(s) => host::define_host_method(ctx, s, name, arity, Visibility::Public, body),
                    Err(err) => {
                        e.fail(err);
                        return CARMINE_EXCEPTION;
                    }
                }
            }
            _ => {
                if !module::is_class_or_module(target) {
                    return CARMINE_INVALID;
                }
                match object::singleton_class(ctx, target) {
                    Ok(s) => host::define_host_method(ctx, s, name, arity, Visibility::Public, body.clone()),
                    Err(err) => {
                        e.fail(err);
                        return CARMINE_EXCEPTION;
                    }
                }
                host::define_host_method(ctx, target, name, arity, Visibility::Private, body);
            }
        }
        CARMINE_OK
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_method(vm: *mut carmine_vm, klass: carmine_value, name: *const c_char, f: Option<carmine_func>, min_args: c_int, max_args: c_int, data: *mut c_void) -> carmine_status {
    define_method(vm, klass, name, f, min_args, max_args, data, 0)
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_singleton_method(vm: *mut carmine_vm, obj: carmine_value, name: *const c_char, f: Option<carmine_func>, min_args: c_int, max_args: c_int, data: *mut c_void) -> carmine_status {
    define_method(vm, obj, name, f, min_args, max_args, data, 1)
}

#[no_mangle]
pub unsafe extern "C" fn carmine_define_module_function(vm: *mut carmine_vm, module: carmine_value, name: *const c_char, f: Option<carmine_func>, min_args: c_int, max_args: c_int, data: *mut c_void) -> carmine_status {
    define_method(vm, module, name, f, min_args, max_args, data, 2)
}

#[no_mangle]
pub unsafe extern "C" fn carmine_new(vm: *mut carmine_vm, klass: carmine_value, argc: c_int, argv: *const carmine_value) -> carmine_value {
    api(vm, |e| {
        let Some(args) = argv_values(argc, argv) else { return CARMINE_UNDEF };
        let r = e.under_limits(|ctx| ctx.call_str(Value::from_raw(klass), "new", args));
        e.value(r)
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_data_new(vm: *mut carmine_vm, klass: carmine_value, ptr: *mut c_void, free_fn: carmine_free_func) -> carmine_value {
    api(vm, |e| {
        let klass = Value::from_raw(klass);
        if !module::is_class(klass) {
            return CARMINE_UNDEF;
        }
        let free: Option<Box<dyn FnMut(usize)>> = free_fn.map(|f| {
            Box::new(move |p: usize| {
                // SAFETY: the host's free function with the pointer it gave.
                unsafe { f(p as *mut c_void) }
            }) as Box<dyn FnMut(usize)>
        });
        host::new_host_data(e.ctx(), klass, host::HostData { ptr: ptr as usize, free }).raw()
    })
}

#[no_mangle]
pub extern "C" fn carmine_data_ptr(vm: *mut carmine_vm, v: carmine_value) -> *mut c_void {
    api(vm, |_| host::host_data_ptr(Value::from_raw(v)).map_or(std::ptr::null_mut(), |p| p as *mut c_void))
}

#[no_mangle]
pub unsafe extern "C" fn carmine_iv_get(vm: *mut carmine_vm, obj: carmine_value, name: *const c_char) -> carmine_value {
    api(vm, |e| match opt_str(name) {
        Some(n) => {
            let ctx = e.ctx();
            let id = ctx.intern(n);
            object::ivar_get(ctx, Value::from_raw(obj), id).raw()
        }
        None => CARMINE_UNDEF,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_iv_set(vm: *mut carmine_vm, obj: carmine_value, name: *const c_char, v: carmine_value) -> carmine_status {
    api(vm, |e| match opt_str(name) {
        Some(n) if n.starts_with('@') => {
            let ctx = e.ctx();
            let id = ctx.intern(n);
            let r = object::ivar_set(ctx, Value::from_raw(obj), id, Value::from_raw(v));
            e.status(r)
        }
        _ => CARMINE_INVALID,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_gv_get(vm: *mut carmine_vm, name: *const c_char) -> carmine_value {
    api(vm, |e| match opt_str(name) {
        Some(n) if n.starts_with('$') => {
            let r = e.under_limits(|ctx| {
                let id = ctx.intern(n);
                globals::get(ctx, id)
            });
            e.value(r)
        }
        _ => CARMINE_UNDEF,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_gv_set(vm: *mut carmine_vm, name: *const c_char, v: carmine_value) -> carmine_status {
    api(vm, |e| match opt_str(name) {
        Some(n) if n.starts_with('$') => {
            let r = e.under_limits(|ctx| {
                let id = ctx.intern(n);
                globals::set(ctx, id, Value::from_raw(v))
            });
            e.status(r)
        }
        _ => CARMINE_INVALID,
    })
}

#[no_mangle]
pub unsafe extern "C" fn carmine_const_set(vm: *mut carmine_vm, outer: carmine_value, name: *const c_char, v: carmine_value) -> carmine_status {
    api(vm, |e| match opt_str(name) {
        Some(n) => {
            let r = e.under_limits(|ctx| {
                let s = Value::symbol(ctx.intern(n));
                ctx.call_str(Value::from_raw(outer), "const_set", &[s, Value::from_raw(v)]).map(|_| ())
            });
            e.status(r)
        }
        None => CARMINE_INVALID,
    })
}

// ---- garbage collection ----

#[no_mangle]
pub extern "C" fn carmine_gc_register(vm: *mut carmine_vm, v: carmine_value) {
    api(vm, |e| host::gc_register(e.ctx(), Value::from_raw(v)))
}

#[no_mangle]
pub extern "C" fn carmine_gc_unregister(vm: *mut carmine_vm, v: carmine_value) {
    api(vm, |e| host::gc_unregister(e.ctx(), Value::from_raw(v)))
}

#[no_mangle]
pub extern "C" fn carmine_gc_start(vm: *mut carmine_vm) {
    api(vm, |e| {
        cvm::gc::collect_for(e.ctx(), cvm::heap::stats::GcReason::Method);
        e.h.blocks.release_pages();
    })
}

#[no_mangle]
pub extern "C" fn carmine_gc_if_grown(vm: *mut carmine_vm, bytes: usize) -> usize {
    api(vm, |e| {
        let grown = e.ctx().vm().heap.lock().malloc_increase;
        if grown >= bytes {
            cvm::gc::collect_for(e.ctx(), cvm::heap::stats::GcReason::Method);
            e.h.blocks.release_pages();
        }
        grown
    })
}
