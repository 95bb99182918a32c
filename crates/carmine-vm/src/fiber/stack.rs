//! Memory for fibers: native (machine) stacks and VM value stacks.
//!
//! Invariants:
//! - A `NativeStack` is one private anonymous mapping: a `PROT_NONE` guard page at the low
//!   end, then the usable stack. Pages are committed by the kernel only when touched, so a
//!   pooled stack costs address space, not memory, beyond what fibers actually used.
//! - A `ValueStack` is a fixed-size, never-moving array of `Value`s (frames and builtins hold
//!   raw pointers into it). The root stack of a thread is its own mapping; fiber stacks are
//!   slots carved from shared chunk mappings, so a million suspended fibers need a few
//!   thousand mappings, not a million (the kernel's `vm.max_map_count` is 65530 by default).
//! - Slots freed to the `ValueStackPool` are reused LIFO (warm); beyond `WARM_SLOTS` free
//!   slots, a freed slot's pages are given back to the kernel with `MADV_DONTNEED`.
//! - Fresh or given-back pages read as zero, which is the `Value` `false`; slots above a
//!   stack's `sp` are never read before being written.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::value::Value;

const PAGE: usize = 4096;

fn map_anonymous(len: usize) -> Option<NonNull<u8>> {
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0) };
    if p == libc::MAP_FAILED {
        None
    } else {
        NonNull::new(p as *mut u8)
    }
}

/// A native stack for running a fiber, with a guard page below it.
pub struct NativeStack {
    base: NonNull<u8>,
    /// Length of the whole mapping, guard page included.
    len: usize,
    /// The pool's count of stacks handed out, while this one is.
    held: Option<Arc<AtomicUsize>>,
}

impl NativeStack {
    /// Maps a stack with `size` usable bytes (rounded up to pages) and a guard page.
    pub fn new(size: usize) -> Option<NativeStack> {
        let size = size.div_ceil(PAGE) * PAGE;
        let len = size + PAGE;
        let base = map_anonymous(len)?;
        // SAFETY: the first page of our own mapping becomes inaccessible.
        let r = unsafe { libc::mprotect(base.as_ptr() as *mut libc::c_void, PAGE, libc::PROT_NONE) };
        let s = NativeStack { base, len, held: None };
        if r != 0 {
            return None;
        }
        Some(s)
    }

    /// Lowest usable address (just above the guard page).
    pub fn lo(&self) -> usize {
        self.base.as_ptr() as usize + PAGE
    }

    /// One past the highest usable address (stacks grow down from here).
    pub fn hi(&self) -> usize {
        self.base.as_ptr() as usize + self.len
    }
}

impl NativeStack {
    fn unhold(&mut self) {
        if let Some(c) = self.held.take() {
            c.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for NativeStack {
    fn drop(&mut self) {
        self.unhold();
        // SAFETY: unmaps exactly the mapping this value owns; nothing runs on it any more.
        unsafe { libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len) };
    }
}

// SAFETY: a NativeStack is plain memory; which thread uses it is managed by the fiber code.
unsafe impl Send for NativeStack {}

/// Native stacks of finished fibers kept for reuse by one thread (most recently used first),
/// and the count of stacks currently handed out (held by fibers, wherever they end up).
#[derive(Default)]
pub struct NativeStackPool {
    free: Vec<NativeStack>,
    held: Arc<AtomicUsize>,
}

/// How many idle native stacks a thread keeps mapped.
const POOLED_NATIVE_STACKS: usize = 64;

impl NativeStackPool {
    pub fn take(&mut self, size: usize) -> Option<NativeStack> {
        let mut s = match self.free.pop() {
            Some(s) => s,
            None => NativeStack::new(size)?,
        };
        self.held.fetch_add(1, Ordering::Relaxed);
        s.held = Some(self.held.clone());
        Some(s)
    }

    pub fn give(&mut self, mut s: NativeStack) {
        s.unhold();
        if self.free.len() < POOLED_NATIVE_STACKS {
            self.free.push(s);
        }
    }

    /// Stacks handed out and not yet given back or dropped.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }
}

/// Where a value stack's memory came from.
enum Origin {
    /// No memory (a placeholder).
    Empty,
    /// Its own mapping (a thread's root stack).
    Mapping { len: usize },
    /// A slot of a pool chunk, returned on drop.
    Pool(Arc<ValueStackPool>),
}

/// A fixed array of values that never moves; dereferences to `[Value]`.
pub struct ValueStack {
    ptr: NonNull<Value>,
    slots: usize,
    origin: Origin,
}

impl ValueStack {
    /// A stack of no slots.
    pub fn empty() -> ValueStack {
        ValueStack { ptr: NonNull::dangling(), slots: 0, origin: Origin::Empty }
    }

    /// A stack of `slots` values in its own (lazily committed) mapping.
    pub fn mapped(slots: usize) -> Option<ValueStack> {
        let len = (slots * std::mem::size_of::<Value>()).div_ceil(PAGE) * PAGE;
        let p = map_anonymous(len)?;
        Some(ValueStack { ptr: p.cast(), slots, origin: Origin::Mapping { len } })
    }
}

impl std::ops::Deref for ValueStack {
    type Target = [Value];
    #[inline(always)]
    fn deref(&self) -> &[Value] {
        // SAFETY: `ptr` addresses `slots` initialised values (zero pages are `false`) that this
        // stack owns exclusively.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.slots) }
    }
}

impl std::ops::DerefMut for ValueStack {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Value] {
        // SAFETY: as for deref; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.slots) }
    }
}

impl Drop for ValueStack {
    fn drop(&mut self) {
        match &self.origin {
            Origin::Empty => {}
            Origin::Mapping { len } => {
                // SAFETY: unmaps the mapping this stack owns.
                unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, *len) };
            }
            Origin::Pool(pool) => pool.give_back(self.ptr),
        }
    }
}

// SAFETY: the memory is exclusively owned; the pool is internally synchronised.
unsafe impl Send for ValueStack {}

/// Value stacks for fibers, carved from chunk mappings shared by many fibers.
pub struct ValueStackPool {
    inner: Mutex<PoolInner>,
    slots: usize,
}

struct PoolInner {
    /// Chunk mappings (base, length); never unmapped while the pool lives.
    chunks: Vec<(usize, usize)>,
    /// Free slots, most recently freed last.
    free: Vec<NonNull<Value>>,
}

// SAFETY: the raw pointers are addresses of pool memory, only handed out under the mutex.
unsafe impl Send for PoolInner {}

/// Slots per chunk mapping.
const CHUNK_SLOTS: usize = 64;
/// Freed slots kept with their memory; further ones are given back to the kernel.
const WARM_SLOTS: usize = 256;

impl ValueStackPool {
    /// A pool of stacks of `slots` values each.
    pub fn new(slots: usize) -> Arc<ValueStackPool> {
        let slots = (slots * std::mem::size_of::<Value>()).div_ceil(PAGE) * PAGE / std::mem::size_of::<Value>();
        Arc::new(ValueStackPool { inner: Mutex::new(PoolInner { chunks: Vec::new(), free: Vec::new() }), slots })
    }

    fn slot_bytes(&self) -> usize {
        self.slots * std::mem::size_of::<Value>()
    }

    /// A stack from the pool, or `None` when no memory can be mapped.
    pub fn take(self: &Arc<Self>) -> Option<ValueStack> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.free.is_empty() {
            let len = self.slot_bytes() * CHUNK_SLOTS;
            let base = map_anonymous(len)?;
            inner.chunks.push((base.as_ptr() as usize, len));
            for i in (0..CHUNK_SLOTS).rev() {
                // SAFETY: i * slot_bytes is within the fresh chunk.
                let p = unsafe { base.as_ptr().add(i * self.slot_bytes()) };
                inner.free.push(NonNull::new(p as *mut Value)?);
            }
        }
        let ptr = inner.free.pop()?;
        Some(ValueStack { ptr, slots: self.slots, origin: Origin::Pool(self.clone()) })
    }

    fn give_back(&self, ptr: NonNull<Value>) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.free.len() >= WARM_SLOTS {
            // SAFETY: the slot belongs to this pool and nobody uses it any more; its pages read
            // as zero afterwards.
            unsafe { libc::madvise(ptr.as_ptr() as *mut libc::c_void, self.slot_bytes(), libc::MADV_DONTNEED) };
        }
        inner.free.push(ptr);
    }
}

impl Drop for ValueStackPool {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        for &(base, len) in &inner.chunks {
            // SAFETY: every stack holds an Arc to the pool, so no slot is in use any more.
            unsafe { libc::munmap(base as *mut libc::c_void, len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_stack_has_usable_memory_above_the_guard() {
        let s = NativeStack::new(64 * 1024).expect("map");
        assert_eq!(s.hi() - s.lo(), 64 * 1024);
        // SAFETY: the top word of the usable range.
        unsafe { *((s.hi() - 8) as *mut usize) = 7 };
    }

    #[test]
    fn pooled_value_stacks_are_zeroed_reused_and_distinct() {
        let pool = ValueStackPool::new(1000);
        let mut a = pool.take().expect("a");
        let b = pool.take().expect("b");
        assert_ne!(a.as_ptr(), b.as_ptr());
        assert!(a.iter().all(|v| *v == Value::FALSE));
        a[3] = Value::NIL;
        let pa = a.as_ptr();
        drop(a);
        let c = pool.take().expect("c");
        assert_eq!(c.as_ptr(), pa, "the last freed slot is reused first");
        assert_eq!(c.len(), 1024, "slots round up to whole pages");
    }

    #[test]
    fn many_stacks_use_few_mappings() {
        let pool = ValueStackPool::new(32 * 1024);
        let stacks: Vec<_> = (0..200).map(|_| pool.take().expect("take")).collect();
        assert_eq!(pool.inner.lock().expect("lock").chunks.len(), 200usize.div_ceil(CHUNK_SLOTS));
        drop(stacks);
    }
}
