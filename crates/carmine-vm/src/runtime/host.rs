//! What an embedding host adds to a VM: methods implemented by host closures (the C API's
//! C functions), objects wrapping host pointers, and output sinks for `$stdout`/`$stderr`.
//!
//! Invariants:
//! - A host method is an ordinary builtin entry whose function is `host_method_trampoline`;
//!   the closure it runs is found in `HostState::methods` by the (owner, name) of the
//!   builtin frame the call pushed, so aliases, `super`, `send` and `Method` objects work
//!   like for any builtin. Every owner in that table is also a VM root (pushed to
//!   `Vm::roots` once), so an address in the table never names a recycled class.
//! - `HostState::recent` holds copies of entries of `methods` (never of a closure found
//!   another way) and is emptied whenever `methods` changes.
//! - `HostState` is per VM and touched only by the thread running in that VM; the
//!   closures are never called without a `Ctx` of the same VM.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::core::module::{self, Arity, ThreadSafety, Visibility};
use crate::core::{object, string};
use crate::interp::Args;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The body of a host method: receiver, arguments (with the block) in, result out.
pub type HostFn = dyn Fn(&mut Ctx, Value, &Args<'_>) -> Result<Value>;

/// Slots of `HostState::recent`.
const RECENT_HOST_FNS: usize = 8;

/// An entry of `HostState::methods`: its key and its closure.
struct RecentHostFn {
    owner: u64,
    mid: SymId,
    f: Rc<HostFn>,
}

/// The slot of `HostState::recent` for (owner, name). Owners are aligned addresses.
fn recent_slot(owner: u64, mid: SymId) -> usize {
    (mid.0 as usize ^ (owner >> 4) as usize) % RECENT_HOST_FNS
}

/// Per-VM state of the embedding API.
#[derive(Default)]
pub struct HostState {
    /// Host methods by (owner's address, name): looked up on every call of one, with the
    /// VM's integer hasher (keys are addresses and symbol ids, not input).
    methods: RefCell<HashMap<(u64, SymId), Rc<HostFn>, std::hash::BuildHasherDefault<crate::symbol::SymHasher>>>,
    /// The entries of `methods` called lately, one per slot of (owner, name): a host
    /// method called again finds its closure here without hashing into `methods` (a
    /// request handler calls the same few on every run).
    recent: RefCell<[Option<RecentHostFn>; RECENT_HOST_FNS]>,
    /// Limits of the current run (see `limits`).
    pub limits: super::limits::Limits,
    /// NUL-terminated copies of symbol names handed to C (symbols live as long as the VM).
    c_names: RefCell<crate::symbol::SymMap<std::ffi::CString>>,
    /// Host methods running now (a run cannot suspend under one: the host's own frames
    /// are on the stack).
    pub calls: std::cell::Cell<u32>,
    /// Suspendable runs (`runtime::task`).
    pub tasks: super::task::TaskState,
    /// Called when the sweep of a major collection (which frees most out-of-line buffers)
    /// ends, so that the host's allocator can give freed memory back to the kernel
    /// (`Runtime::set_release_memory_hook`).
    pub release_memory: std::cell::Cell<Option<fn()>>,
}

impl HostState {
    /// The name of symbol `id` as a C string that lives as long as the VM.
    pub fn c_name(&self, id: SymId, name: &[u8]) -> *const std::ffi::c_char {
        let mut names = self.c_names.borrow_mut();
        let s = names.entry(id).or_insert_with(|| std::ffi::CString::new(name.iter().map(|&b| if b == 0 { b'?' } else { b }).collect::<Vec<u8>>()).unwrap_or_default());
        s.as_ptr()
    }
}

/// Defines `klass#name` (or a singleton method when `klass` is a singleton class) as a
/// host method with the given arity.
pub fn define_host_method(ctx: &mut Ctx, klass: Value, name: &str, arity: Arity, visibility: Visibility, f: Rc<HostFn>) {
    let mid = ctx.intern(name);
    let fresh_owner = {
        let mut methods = ctx.vm().host.methods.borrow_mut();
        let fresh = !methods.keys().any(|&(o, _)| o == klass.raw());
        methods.insert((klass.raw(), mid), f);
        *ctx.vm().host.recent.borrow_mut() = Default::default();
        fresh
    };
    if fresh_owner {
        ctx.vm().roots.borrow_mut().push(klass);
    }
    // Host methods call back into the host, which keeps its own locks: they hold the GL.
    module::define_builtin(ctx, klass, name, host_method_trampoline, arity, ThreadSafety::Unsafe, visibility, false);
}

/// The builtin behind every host method: finds the closure for the running frame.
fn host_method_trampoline(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (owner, mid) = match ctx.stacks.frames.last() {
        Some(f) => (f.owner, f.mid),
        None => (Value::NIL, None),
    };
    let f = mid.and_then(|mid| lookup(ctx, owner, mid, recv));
    match f {
        Some(f) => {
            let calls = &ctx.vm().host.calls;
            calls.set(calls.get() + 1);
            let r = f(ctx, recv, args);
            let calls = &ctx.vm().host.calls;
            calls.set(calls.get() - 1);
            r
        }
        None => Err(ctx.raise(ctx.c().not_implemented_error, "host method not found")),
    }
}

fn lookup(ctx: &Ctx, owner: Value, mid: SymId, recv: Value) -> Option<Rc<HostFn>> {
    let host = &ctx.vm().host;
    let slot = recent_slot(owner.raw(), mid);
    if let Some(r) = host.recent.borrow()[slot].as_ref().filter(|r| r.owner == owner.raw() && r.mid == mid) {
        return Some(r.f.clone());
    }
    let methods = host.methods.borrow();
    if let Some(f) = methods.get(&(owner.raw(), mid)) {
        host.recent.borrow_mut()[slot] = Some(RecentHostFn { owner: owner.raw(), mid, f: f.clone() });
        return Some(f.clone());
    }
    // An alias or a copy (`alias_method`, `module_function`): the entry the receiver's
    // class resolves names the original.
    let candidates = [owner, crate::interp::class_of(ctx, recv)];
    for k in candidates.into_iter().filter(|&k| module::is_class_or_module(k)) {
        if let Some(me) = module::find_method(ctx, k, mid) {
            if let Some(f) = methods.get(&(me.owner.raw(), me.original_name)) {
                return Some(f.clone());
            }
            let orig = me.original_name;
            if let Some((_, f)) = methods.iter().find(|((_, n), _)| *n == orig) {
                return Some(f.clone());
            }
        }
    }
    None
}

// ---- roots ----

/// Keeps `v` alive until a matching `gc_unregister` (counted: each registration is one
/// entry of `Vm::roots`).
pub fn gc_register(ctx: &Ctx, v: Value) {
    if v.is_heap() {
        ctx.vm().roots.borrow_mut().push(v);
    }
}

pub fn gc_unregister(ctx: &Ctx, v: Value) {
    let mut roots = ctx.vm().roots.borrow_mut();
    if let Some(i) = roots.iter().rposition(|&r| r == v) {
        roots.swap_remove(i);
    }
}

// ---- host data ----

/// A host pointer wrapped in a Ruby object, with the function that frees it.
pub struct HostData {
    pub ptr: usize,
    pub free: Option<Box<dyn FnMut(usize)>>,
}

crate::data_obj!(HostData);

impl Drop for HostData {
    fn drop(&mut self) {
        if let Some(mut f) = self.free.take() {
            f(self.ptr);
        }
    }
}

/// An instance of `klass` wrapping `data`.
pub fn new_host_data(ctx: &mut Ctx, klass: Value, data: HostData) -> Value {
    object::new_data(ctx, klass, Box::new(data))
}

/// The pointer of a host data object.
pub fn host_data_ptr(v: Value) -> Option<usize> {
    crate::object::data_ref::<HostData>(v).map(|d| d.ptr)
}

pub fn is_host_data(v: Value) -> bool {
    crate::object::data_ref::<HostData>(v).is_some()
}

// ---- output sinks ----

/// Where a host sends what Ruby writes to `$stdout` or `$stderr`.
pub type Sink = dyn FnMut(&[u8]);

struct OutputSink {
    write: Box<Sink>,
}

crate::data_obj!(OutputSink);

/// An object for `$stdout`/`$stderr` that passes every write to `sink`: an instance of
/// `Carmine::Output` (`write`, `print`, `puts`, `<<`, `flush`, `sync`, `fileno` …).
pub fn new_output(ctx: &mut Ctx, sink: Box<Sink>) -> Value {
    let klass = output_class(ctx);
    object::new_data(ctx, klass, Box::new(OutputSink { write: sink }))
}

fn output_class(ctx: &mut Ctx) -> Value {
    let carmine = carmine_module(ctx);
    let id = ctx.intern("Output");
    if let Some(e) = module::body(carmine).const_get(id) {
        return e.value;
    }
    let object = ctx.c().object;
    let k = crate::core::module_methods::define_class_under(ctx, carmine, "Output", object);
    module::body(k).alloc = module::AllocKind::None;
    use ThreadSafety::Unsafe;
    use Visibility::Public;
    module::define_builtin(ctx, k, "write", output_write, Arity::rest(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "print", output_print, Arity::rest(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "puts", output_puts, Arity::rest(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "<<", output_append, Arity::exact(1), Unsafe, Public, false);
    module::define_builtin(ctx, k, "flush", output_self, Arity::exact(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "sync", output_true, Arity::exact(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "sync=", output_first, Arity::exact(1), Unsafe, Public, false);
    module::define_builtin(ctx, k, "tty?", output_false, Arity::exact(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "isatty", output_false, Arity::exact(0), Unsafe, Public, false);
    module::define_builtin(ctx, k, "fileno", output_nil, Arity::exact(0), Unsafe, Public, false);
    ctx.vm().bump_const_epoch();
    k
}

/// The `Carmine` module (made on first use).
pub fn carmine_module(ctx: &mut Ctx) -> Value {
    let object = ctx.c().object;
    let id = ctx.intern("Carmine");
    if let Some(e) = module::body(object).const_get(id) {
        return e.value;
    }
    let m = crate::core::module_methods::define_module_under(ctx, object, "Carmine");
    ctx.vm().bump_const_epoch();
    m
}

fn emit(ctx: &mut Ctx, recv: Value, bytes: &[u8]) -> Result<()> {
    match crate::object::data_ref::<OutputSink>(recv) {
        Some(s) => {
            (s.write)(bytes);
            Ok(())
        }
        None => Err(ctx.type_error("not a Carmine::Output")),
    }
}

fn output_write(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut n = 0;
    for &a in args.pos {
        let s = string::to_s(ctx, a)?;
        n += string::len(s);
        emit(ctx, recv, string::bytes(s))?;
    }
    Ok(Value::fixnum(n as i64))
}

fn output_print(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = crate::core::io::print_bytes(ctx, args.pos)?;
    emit(ctx, recv, &b)?;
    Ok(Value::NIL)
}

fn output_puts(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut b = Vec::new();
    crate::core::io::puts_bytes(ctx, args.pos, &mut b)?;
    emit(ctx, recv, &b)?;
    Ok(Value::NIL)
}

fn output_append(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    output_write(ctx, recv, args)?;
    Ok(recv)
}

fn output_self(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn output_true(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::TRUE)
}

fn output_false(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::FALSE)
}

fn output_nil(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::NIL)
}

fn output_first(_ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(args.pos[0])
}
