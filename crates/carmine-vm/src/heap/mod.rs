//! The object heap of one VM: slot pages, free lists handed to per-thread allocation
//! caches, and the mark & sweep machinery.
//!
//! Invariants:
//! - Non-moving: an object's address is fixed for its life.
//! - Every page is in `page_bases`; a word is a candidate object pointer iff its page base
//!   is there and it falls on an object slot whose type is not `Free` (see `live_object_at`).
//! - A free list is owned by exactly one party: the heap (`ready`) or one thread's cache.
//!   Before a sweep every thread cache is emptied (its slots are `Free` and get relinked).
//! - Roots are supplied by the collector driver (`crate::gc`); this module knows nothing of
//!   frames or threads.

pub mod alloc_trace;
pub mod page;
pub mod stack_scan;
pub mod stats;

use std::collections::HashSet;
use std::sync::Mutex;

use crate::object::{self, ObjType, RBasic};
use crate::value::Value;
use page::{FreeSlot, Page, HEADER_SLOTS, OBJECT_SLOTS, PAGE_SIZE, SLOTS_PER_PAGE, SLOT_SIZE};

pub struct Heap {
    pub(crate) inner: Mutex<HeapInner>,
}

pub use stats::GcStats;

/// Hashes a page base (a multiple of `PAGE_SIZE`) with one multiplication: conservative
/// stack scanning looks up every word of every stack, which SipHash made the bulk of a
/// collection with deep native stacks.
#[derive(Default, Clone, Copy)]
pub struct PageHasher(u64);

impl std::hash::Hasher for PageHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_usize(&mut self, n: usize) {
        // Fibonacci hashing of the page number; hashbrown takes its top 7 bits as the tag
        // and the low bits as the bucket, both well mixed by the multiplication.
        self.0 = ((n >> PAGE_SIZE.trailing_zeros()) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(32);
    }
}

impl std::hash::BuildHasher for PageHasher {
    type Hasher = PageHasher;
    fn build_hasher(&self) -> PageHasher {
        PageHasher(0)
    }
}

pub struct HeapInner {
    pages: Vec<Page>,
    page_bases: HashSet<usize, PageHasher>,
    ready: Vec<(*mut FreeSlot, usize)>,
    pub stats: GcStats,
    /// Bytes of out-of-line storage allocated since the last collection (approximate).
    pub malloc_increase: usize,
    pub malloc_limit: usize,
}

// SAFETY: raw free-list pointers are only touched under the heap mutex or by their owner.
unsafe impl Send for HeapInner {}

const INITIAL_PAGES: usize = 16;
const MALLOC_LIMIT_MIN: usize = 16 * 1024 * 1024;

impl Default for Heap {
    fn default() -> Self {
        Self::new()
    }
}

impl Heap {
    pub fn new() -> Heap {
        Heap {
            inner: Mutex::new(HeapInner {
                pages: Vec::new(),
                page_bases: HashSet::default(),
                ready: Vec::new(),
                stats: GcStats::default(),
                malloc_increase: 0,
                malloc_limit: MALLOC_LIMIT_MIN,
            }),
        }
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, HeapInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl HeapInner {
    /// Hands out one free list (for a thread's allocation cache), if any is ready: a whole
    /// page's, or at most `limit` slots of it (the rest stays ready) so that many threads
    /// that each allocate a little do not each hold a page of free slots.
    pub fn take_free_list(&mut self, limit: usize) -> Option<*mut FreeSlot> {
        let (head, count) = self.ready.pop()?;
        if count > limit && limit > 0 {
            let mut last = head;
            // SAFETY: the list has `count` > `limit` slots, all owned by the heap.
            unsafe {
                for _ in 1..limit {
                    last = (*last).next;
                }
                let rest = (*last).next;
                (*last).next = std::ptr::null_mut();
                self.ready.push((rest, count - limit));
            }
        }
        Some(head)
    }

    /// Takes back a free list a thread's cache no longer needs.
    pub fn give_back(&mut self, head: *mut FreeSlot) {
        let mut count = 0;
        let mut p = head;
        while !p.is_null() {
            count += 1;
            // SAFETY: the list's slots are free and owned by the caller until now.
            p = unsafe { (*p).next };
        }
        self.ready.push((head, count));
    }

    pub fn page_count(&self) -> usize {
        self.pages.len()
    }

    /// True when a collection should run before the heap grows.
    pub fn wants_collection(&self) -> bool {
        self.pages.len() >= INITIAL_PAGES
    }

    /// Adds `n` pages; returns false if memory is exhausted.
    pub fn grow(&mut self, n: usize) -> bool {
        let pages = Page::new_batch(n);
        if pages.is_empty() {
            return !self.ready.is_empty();
        }
        for page in pages {
            let (head, count) = page.collect_free();
            self.page_bases.insert(page.base());
            self.pages.push(page);
            self.ready.push((head, count));
            self.stats.total_allocated_pages += 1;
        }
        true
    }

    pub fn total_slots(&self) -> usize {
        self.pages.len() * OBJECT_SLOTS
    }

    pub fn free_slots(&self) -> usize {
        self.ready.iter().map(|&(_, n)| n).sum()
    }

    /// Calls `f` with every object slot that is not free (dead objects not yet swept
    /// included: with immediate sweeping there are none outside a collection).
    pub fn for_each_object(&self, f: &mut dyn FnMut(*mut RBasic)) {
        for page in &self.pages {
            for i in HEADER_SLOTS..SLOTS_PER_PAGE {
                let p = page.slot(i) as *mut RBasic;
                // SAFETY: p is an object slot of this page; the caller holds the heap lock.
                if unsafe { (*p).obj_type() } != ObjType::Free {
                    f(p);
                }
            }
        }
    }

    /// Calls `f` with every object slot and whether it holds an object.
    pub fn for_each_slot(&self, f: &mut dyn FnMut(*mut RBasic, bool)) {
        for page in &self.pages {
            for i in HEADER_SLOTS..SLOTS_PER_PAGE {
                let p = page.slot(i) as *mut RBasic;
                // SAFETY: p is an object slot of this page; the caller holds the heap lock.
                f(p, unsafe { (*p).obj_type() } != ObjType::Free);
            }
        }
    }

    /// Slots holding an object now (free slots in threads' allocation caches are not).
    pub fn live_slots(&self) -> usize {
        let mut n = 0;
        self.for_each_object(&mut |_| n += 1);
        n
    }

    /// The object whose slot contains `addr` (interior pointers included), if it is live.
    #[inline]
    pub fn live_object_at(&self, addr: usize) -> Option<Value> {
        let base = addr & !(PAGE_SIZE - 1);
        if !self.page_bases.contains(&base) {
            return None;
        }
        let idx = (addr - base) / SLOT_SIZE;
        if idx < HEADER_SLOTS {
            return None;
        }
        let slot = (base + idx * SLOT_SIZE) as *const RBasic;
        // SAFETY: slot lies inside a page of this heap.
        if unsafe { (*slot).obj_type() } == ObjType::Free {
            return None;
        }
        Some(Value::from_ptr(slot))
    }

    /// Frees every unmarked object, clears mark bits and rebuilds the free lists.
    /// `finalize` runs for each dead object before its slot is reused.
    /// Returns the number of live objects.
    pub fn sweep(&mut self, finalize: &mut dyn FnMut(*mut RBasic)) -> usize {
        self.ready.clear();
        let mut live = 0;
        let mut freed = 0u64;
        for page in &self.pages {
            for i in HEADER_SLOTS..SLOTS_PER_PAGE {
                let p = page.slot(i) as *mut RBasic;
                // SAFETY: p is an object slot of this page; the world is stopped.
                unsafe {
                    if (*p).obj_type() == ObjType::Free {
                        continue;
                    }
                    if page::is_marked(p) {
                        live += 1;
                    } else {
                        finalize(p);
                        object::finalize(p);
                        (*p).flags = ObjType::Free as u32;
                        freed += 1;
                    }
                }
            }
            // SAFETY: header at page base; clearing marks ends this collection for the page.
            unsafe { (*page.header()).mark_bits = [0; SLOTS_PER_PAGE / 64] };
            let (head, count) = page.collect_free();
            if count > 0 {
                self.ready.push((head, count));
            }
        }
        self.stats.total_freed_objects += freed;
        self.stats.live_after_last_gc = live as u64;
        self.malloc_increase = 0;
        live
    }

    /// Grows the heap after a collection so that a healthy fraction of slots is free.
    pub fn grow_after_collection(&mut self, live: usize) {
        let total = self.total_slots().max(1);
        let free = total - live.min(total);
        // Keep at least 40% of the slots free after a collection (as CRuby's default
        // free-slots goal), growing by 80% of the heap at a time: fewer collections of a
        // growing live set, each of which marks all of it.
        if free * 10 < total * 4 {
            let want_pages = (self.pages.len() * 4 / 5).max(4);
            self.grow(want_pages);
        }
        self.malloc_limit = (self.malloc_limit.max(MALLOC_LIMIT_MIN)).min(256 * 1024 * 1024);
    }
}

/// Marks objects transitively from the roots it is given.
pub struct Marker<'a> {
    heap: &'a HeapInner,
    stack: Vec<Value>,
    /// Instance variables of non-`RObject` objects, by address (see `FL_EXIVAR`).
    pub exivars: Option<&'a std::collections::HashMap<usize, Vec<(crate::symbol::SymId, Value)>>>,
}

impl<'a> Marker<'a> {
    pub fn new(heap: &'a HeapInner) -> Marker<'a> {
        Marker { heap, stack: Vec::with_capacity(1024), exivars: None }
    }

    /// Marks a value known to be valid (immediates are ignored).
    #[inline]
    pub fn mark(&mut self, v: Value) {
        if v.is_heap() {
            // SAFETY: precise roots and object fields only hold valid object pointers.
            if !unsafe { page::test_and_set_mark(v) } {
                self.stack.push(v);
            }
        }
    }

    /// Whether `v` survives this collection so far (immediates always do).
    #[inline]
    pub fn is_marked(&self, v: Value) -> bool {
        // SAFETY: heap values passed here are objects of this heap (weak tables and
        // finalizer entries only hold objects that were live before this collection).
        !v.is_heap() || unsafe { page::is_marked(v.as_ptr::<RBasic>()) }
    }

    pub fn mark_all(&mut self, vs: &[Value]) {
        for &v in vs {
            self.mark(v);
        }
    }

    /// Marks whatever live object `word` points into, if any (conservative roots).
    #[inline]
    pub fn mark_conservative(&mut self, word: usize) {
        if word < PAGE_SIZE {
            return;
        }
        if let Some(v) = self.heap.live_object_at(word) {
            self.mark(v);
        }
    }

    /// Marks every word in `[lo, hi)` conservatively.
    ///
    /// # Safety
    /// The range must be readable memory.
    pub unsafe fn mark_range_conservative(&mut self, lo: usize, hi: usize) {
        let mut p = (lo + 7) & !7;
        while p + 8 <= hi {
            let word = std::ptr::read_volatile(p as *const usize);
            self.mark_conservative(word);
            p += 8;
        }
    }

    /// Values held in non-heap slots of the VM (validated like conservative words, since a
    /// stale stack slot may point to a slot that has been freed).
    pub fn mark_maybe(&mut self, v: Value) {
        if v.is_heap() {
            self.mark_conservative(v.raw() as usize);
        }
    }

    /// Ends a marking that only gathers references instead of collecting
    /// (`ObjectSpace.reachable_objects_from`): the objects marked since the marker was
    /// made, in marking order, with their mark bits cleared again. Outside a collection
    /// no mark bit is set, so every reference is gathered once; nothing may allocate
    /// between the marking and this call.
    pub fn take_gathered(&mut self) -> Vec<Value> {
        let gathered = std::mem::take(&mut self.stack);
        for &v in &gathered {
            // SAFETY: `mark` pushed only heap objects of this heap.
            unsafe { page::clear_mark(v) };
        }
        gathered
    }

    /// Traces everything reachable from what has been marked so far.
    pub fn drain(&mut self) {
        while let Some(v) = self.stack.pop() {
            object::mark_children(v, self);
            if object::basic(v).has(object::FL_EXIVAR) {
                if let Some(ivars) = self.exivars.and_then(|t| t.get(&(v.raw() as usize))) {
                    for &(_, iv) in ivars {
                        self.mark(iv);
                    }
                }
            }
        }
    }
}
