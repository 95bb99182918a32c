//! The object heap of one VM: slot pages, free lists handed to per-thread allocation
//! caches, and the mark & sweep machinery.
//!
//! Invariants:
//! - Non-moving: an object's address is fixed for its life.
//! - A page is in use (`pages`, and its base in `page_bases`), empty (`empty`: a sweep
//!   found no live object on it; its memory is touched but holds nothing), fresh (`fresh`:
//!   counted in the heap's size but never handed out, so zero and untouched, taking no
//!   RAM), or released (`released`: its memory given back to the kernel, not counted,
//!   reused first when the heap grows). Only pages in use hold objects or free lists.
//! - Each page in use has one size class (`page::SizeClass`: 40-byte slots for Strings,
//!   Floats and small plain objects, 64-byte slots for everything else); empty, fresh and released pages have none
//!   and take the class of the first allocation that needs a page (empty pages first, as
//!   their memory is already resident). Free lists never mix classes: `ready[class]` and
//!   each thread's `free_lists[class]`.
//! - A word is a candidate object pointer iff its page base is in `page_bases` and it falls
//!   on an object slot of that page (by the page's slot size) whose type is not `Free`
//!   (see `live_object_at`).
//! - Sizing (`resize_after_collection`) counts bytes, so that both classes share one
//!   policy: after a collection the heap grows when less than `MIN_FREE_PERCENT` of its
//!   pages' bytes are free, to `GOAL_FREE_PERCENT` free, at most `MAX_GROWTH_PERCENT` at a
//!   time; it releases empty pages when more than `MAX_FREE_PERCENT` are free. A class
//!   whose allocation started the collection and whose own pages have less than
//!   `MIN_FREE_PERCENT` free also grows the heap (by fresh pages) to its goal, counting the
//!   empty and fresh pages as its room, and then none are released. Pages are taken from
//!   `empty` and `fresh` only when the swept pages' free lists of the class are used up, so
//!   the heap's memory follows what is used, not its size.
//! - A free list is owned by exactly one party: the heap (`ready`) or one thread's cache.
//!   Before a sweep every thread cache is emptied (its slots are `Free` and get relinked).
//! - Roots are supplied by the collector driver (`crate::gc`); this module knows nothing of
//!   frames or threads.
//! - Minor collections (generational, without write barriers): only *leaf* objects are
//!   ever promoted — Strings, Floats and Bignums, which reference nothing but their class
//!   and their generic instance variables. A leaf is promoted (its page's old bit set) when
//!   a collection marks it a second time (`FL_SURVIVED` records the first) and its class
//!   is its core class (a VM root, so it needs no marking). A minor collection starts with
//!   the old objects marked (`Page::mark_old`) and so never traces or frees them; it marks
//!   every generic-ivar table entry as a root (an old leaf's ivars are not traced). Nothing
//!   else can make an old leaf reference a young object, except a change of its class:
//!   whoever stores a class into an existing object calls `forget_old` first
//!   (`singleton_class`, Marshal). Old objects die only in major collections, which run
//!   for `GC.start`, malloc growth, and when the old objects outgrow `old_limit`.

pub mod alloc_trace;
pub mod page;
pub mod stack_scan;
pub mod stats;

use std::collections::HashSet;
use std::sync::Mutex;

use crate::object::{self, ObjType, RBasic};
use crate::value::Value;
use page::{FreeSlot, Page, SizeClass, OBJECT_SLOTS, PAGE_SIZE, SIZE_CLASSES};

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
    empty: Vec<Page>,
    fresh: Vec<Page>,
    released: Vec<Page>,
    page_bases: HashSet<usize, PageHasher>,
    /// Free lists (head, length) of swept pages, by size class.
    ready: [Vec<(*mut FreeSlot, usize)>; 2],
    pub stats: GcStats,
    /// Bytes of out-of-line storage allocated since the last collection (approximate).
    pub malloc_increase: usize,
    pub malloc_limit: usize,
    /// Per size class, at the last sweep: pages in use and the bytes of their live objects.
    class_use: [(usize, usize); SIZE_CLASSES.len()],
    /// The size class whose allocation found no free slot and started the collection.
    pub wanted_class: Option<SizeClass>,
    /// Old (promoted) objects, and how many there may be before a major collection.
    pub old_objects: usize,
    pub old_limit: usize,
}

// SAFETY: raw free-list pointers are only touched under the heap mutex or by their owner.
unsafe impl Send for HeapInner {}

const INITIAL_PAGES: usize = 16;
/// Free-slot shares after a collection (percent of the heap's slots): below the minimum the
/// heap grows to the goal; above the maximum empty pages are released down to the goal.
/// CRuby's 20/40 took the least memory but made binary_trees run 2.8% more instructions
/// (more collections of a mid-sized live set); 30/50 is within 1.4% of the old policy's
/// instructions everywhere measured (docs/benchmarks.md, issue 13).
const MIN_FREE_PERCENT: usize = 30;
const GOAL_FREE_PERCENT: usize = 50;
const MAX_FREE_PERCENT: usize = 65;
/// The most the heap grows at once (percent of its size).
const MAX_GROWTH_PERCENT: usize = 80;
const MALLOC_LIMIT_MIN: usize = 16 * 1024 * 1024;
/// Old objects allowed before the first major collection; after one, twice the survivors.
const OLD_LIMIT_MIN: usize = 100_000;

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
                empty: Vec::new(),
                fresh: Vec::new(),
                released: Vec::new(),
                page_bases: HashSet::default(),
                ready: [Vec::new(), Vec::new()],
                stats: GcStats::default(),
                malloc_increase: 0,
                malloc_limit: MALLOC_LIMIT_MIN,
                class_use: Default::default(),
                wanted_class: None,
                old_objects: 0,
                old_limit: OLD_LIMIT_MIN,
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
    pub fn take_free_list(&mut self, class: SizeClass, limit: usize) -> Option<*mut FreeSlot> {
        let (head, count) = match self.ready[class as usize].pop() {
            Some(list) => list,
            None => self.use_unused_page(class)?,
        };
        if count > limit && limit > 0 {
            let mut last = head;
            // SAFETY: the list has `count` > `limit` slots, all owned by the heap.
            unsafe {
                for _ in 1..limit {
                    last = (*last).next;
                }
                let rest = (*last).next;
                (*last).next = std::ptr::null_mut();
                self.ready[class as usize].push((rest, count - limit));
            }
        }
        Some(head)
    }

    /// Takes back a free list a thread's cache no longer needs.
    pub fn give_back(&mut self, class: SizeClass, head: *mut FreeSlot) {
        let mut count = 0;
        let mut p = head;
        while !p.is_null() {
            count += 1;
            // SAFETY: the list's slots are free and owned by the caller until now.
            p = unsafe { (*p).next };
        }
        self.ready[class as usize].push((head, count));
    }

    /// Pages in the heap (in use, empty or fresh).
    pub fn page_count(&self) -> usize {
        self.pages.len() + self.empty.len() + self.fresh.len()
    }

    /// Pages that hold no object and may take either class.
    fn unused_pages(&self) -> usize {
        self.empty.len() + self.fresh.len()
    }

    /// True when a collection should run before the heap grows.
    pub fn wants_collection(&self) -> bool {
        self.page_count() >= INITIAL_PAGES
    }

    /// Puts an empty page (resident already) or else a fresh one (its first touch) in use
    /// for `class`: writes its header and links its slots.
    fn use_unused_page(&mut self, class: SizeClass) -> Option<(*mut FreeSlot, usize)> {
        let (page, list) = if let Some(page) = self.empty.pop() {
            let list = page.reset(class);
            (page, list)
        } else {
            let page = self.fresh.pop()?;
            page.init(class);
            let list = page.collect_free();
            (page, list)
        };
        self.page_bases.insert(page.base());
        self.pages.push(page);
        Some(list)
    }

    /// Adds `n` pages (released ones first, then new mappings); returns false if memory
    /// is exhausted.
    pub fn grow(&mut self, n: usize) -> bool {
        let reuse = n.min(self.released.len());
        let at = self.released.len() - reuse;
        self.fresh.extend(self.released.drain(at..));
        if n > reuse {
            let pages = Page::new_batch(n - reuse);
            if pages.is_empty() {
                return reuse > 0 || self.ready.iter().any(|r| !r.is_empty()) || self.unused_pages() > 0;
            }
            self.stats.total_allocated_pages += pages.len() as u64;
            self.fresh.extend(pages);
        }
        true
    }

    /// Object slots of the pages in use, and of the unused pages counted as 64-byte pages.
    pub fn total_slots(&self) -> usize {
        self.pages.iter().map(|p| p.class().object_slots()).sum::<usize>() + self.unused_pages() * OBJECT_SLOTS
    }

    pub fn free_slots(&self) -> usize {
        self.ready.iter().flatten().map(|&(_, n)| n).sum::<usize>() + self.unused_pages() * OBJECT_SLOTS
    }

    /// Calls `f` with every object slot that is not free (dead objects not yet swept
    /// included: with immediate sweeping there are none outside a collection).
    pub fn for_each_object(&self, f: &mut dyn FnMut(*mut RBasic)) {
        for page in &self.pages {
            for i in page.slot_range() {
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
            for i in page.slot_range() {
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
        // SAFETY: `base` is a page in use of this heap (in `page_bases`).
        let Some(slot) = (unsafe { page::object_slot(base, page::slot_index(addr).1) }) else { return None };
        // SAFETY: slot is an object slot of a page of this heap.
        if unsafe { (*slot).obj_type() } == ObjType::Free {
            return None;
        }
        Some(Value::from_ptr(slot))
    }

    /// Frees every unmarked object, clears mark bits and rebuilds the free lists.
    /// `finalize` runs for each dead object before its slot is reused.
    /// Returns the number of live objects and the bytes of their slots.
    pub fn sweep(&mut self, major: bool, finalize: &mut dyn FnMut(*mut RBasic)) -> (usize, usize) {
        for r in &mut self.ready {
            r.clear();
        }
        let (mut live, mut live_bytes) = (0, 0);
        let mut freed = 0u64;
        self.class_use = Default::default();
        let mut i = 0;
        while i < self.pages.len() {
            let page = &self.pages[i];
            // SAFETY: the world is stopped, marking is done and the threads' caches were
            // dropped before the collection.
            let (head, count, l, f) = unsafe { page.sweep(major, finalize) };
            freed += f as u64;
            if l == 0 {
                // Either class may use it next (see the module's invariants).
                let page = self.pages.swap_remove(i);
                self.page_bases.remove(&page.base());
                self.empty.push(page);
                continue;
            }
            live += l;
            live_bytes += l * page.class().slot_size();
            let u = &mut self.class_use[page.class() as usize];
            u.0 += 1;
            u.1 += l * page.class().slot_size();
            if count > 0 {
                self.ready[page.class() as usize].push((head, count));
            }
            i += 1;
        }
        if major {
            self.old_objects = self.pages.iter().map(|p| p.old_count()).sum();
            self.old_limit = (self.old_objects * 2).max(OLD_LIMIT_MIN);
        }
        self.stats.total_freed_objects += freed;
        self.stats.live_after_last_gc = live as u64;
        self.malloc_increase = 0;
        (live, live_bytes)
    }

    /// Whether the next collection for want of slots should be a major one.
    pub fn wants_major(&self) -> bool {
        self.old_objects > self.old_limit
    }

    /// Starts a minor collection: every old object counts as marked.
    pub fn start_minor(&mut self) {
        for page in &self.pages {
            page.mark_old();
        }
    }

    /// Sizes the heap after a collection (see the module's invariants): fewer free slots
    /// mean more frequent collections, each of which marks all live objects; more mean
    /// more memory.
    pub fn resize_after_collection(&mut self, live_bytes: usize) {
        let total = (self.page_count() * PAGE_SIZE).max(1);
        let free = total - live_bytes.min(total);
        // Free slots of one class are no room for the other's objects: when the class whose
        // allocation ran out of slots is short of free bytes in its own pages, it asks for
        // fresh pages to reach the goal on its own. (Only that class: growing for a class
        // that no longer allocates hands its fresh pages to the other.)
        let wanted = self.wanted_class.take();
        let short: usize = SIZE_CLASSES
            .iter()
            .filter(|&&c| wanted == Some(c))
            .map(|&c| {
                let (pages, live) = self.class_use[c as usize];
                let bytes = pages * PAGE_SIZE;
                if bytes > 0 && (bytes - live.min(bytes)) * 100 < bytes * MIN_FREE_PERCENT {
                    (live * 100 / (100 - GOAL_FREE_PERCENT)).div_ceil(PAGE_SIZE).saturating_sub(pages)
                } else {
                    0
                }
            })
            .sum();
        if free * 100 < total * MIN_FREE_PERCENT {
            let goal = live_bytes * 100 / (100 - GOAL_FREE_PERCENT);
            let max = total * (100 + MAX_GROWTH_PERCENT) / 100;
            let want = goal.min(max).div_ceil(PAGE_SIZE);
            self.grow(want.saturating_sub(self.page_count()).max(4));
        } else if short > self.unused_pages() {
            let max = self.page_count() * MAX_GROWTH_PERCENT / 100;
            self.grow((short - self.unused_pages()).min(max).max(4));
        } else if short == 0 && free * 100 > total * MAX_FREE_PERCENT && self.page_count() > INITIAL_PAGES {
            let goal = (live_bytes * 100 / (100 - GOAL_FREE_PERCENT)).div_ceil(PAGE_SIZE).max(INITIAL_PAGES);
            self.release_pages(self.page_count().saturating_sub(goal));
        }
        self.malloc_limit = (self.malloc_limit.max(MALLOC_LIMIT_MIN)).min(256 * 1024 * 1024);
    }

    /// Releases up to `n` pages: empty ones first (their memory goes back to the kernel),
    /// then fresh ones.
    fn release_pages(&mut self, n: usize) {
        let from_empty = n.min(self.empty.len());
        let at = self.empty.len() - from_empty;
        for page in self.empty.drain(at..) {
            page.release_memory();
            self.stats.total_freed_pages += 1;
            self.released.push(page);
        }
        let from_fresh = (n - from_empty).min(self.fresh.len());
        let at = self.fresh.len() - from_fresh;
        self.released.extend(self.fresh.drain(at..));
    }
}

/// Makes `v` young again before a class is stored into it (see the module's invariants):
/// an old object is not traced by minor collections.
pub fn forget_old(v: Value) {
    if v.is_heap() {
        // SAFETY: heap values point into pages in use.
        unsafe { page::clear_old(v) };
    }
}

/// Marks objects transitively from the roots it is given.
pub struct Marker<'a> {
    heap: &'a HeapInner,
    stack: Vec<Value>,
    /// Set by the collector (not by `reachable_objects_from`): leaves are visited as they
    /// are marked instead of going through the stack, and promoted.
    collecting: bool,
    /// The core classes of the leaf types: a leaf of one of these classes may be promoted.
    leaf_classes: [Value; 3],
    /// Leaves promoted by this marking.
    pub promoted: usize,
    /// Instance variables of non-`RObject` objects, by address (see `FL_EXIVAR`).
    pub exivars: Option<&'a std::collections::HashMap<usize, Vec<(crate::symbol::SymId, Value)>>>,
}

impl<'a> Marker<'a> {
    pub fn new(heap: &'a HeapInner) -> Marker<'a> {
        Marker { heap, stack: Vec::with_capacity(1024), collecting: false, leaf_classes: [Value::NIL; 3], promoted: 0, exivars: None }
    }

    /// A marker for a collection that promotes leaves of the given core classes.
    pub fn for_collection(heap: &'a HeapInner, leaf_classes: [Value; 3]) -> Marker<'a> {
        Marker { collecting: true, leaf_classes, ..Marker::new(heap) }
    }

    /// Marks a value known to be valid (immediates are ignored).
    #[inline(always)]
    pub fn mark(&mut self, v: Value) {
        if v.is_heap() {
            // SAFETY: precise roots and object fields only hold valid object pointers.
            if !unsafe { page::test_and_set_mark(v) } {
                self.visit(v);
            }
        }
    }

    /// A newly marked object: a leaf is done at once (its class marked, its age or
    /// promotion recorded), so that an Array of a million Strings does not put a million
    /// entries on the stack; anything else is traced later by `drain`.
    #[inline(never)]
    fn visit(&mut self, v: Value) {
        let b = object::basic(v);
        if !self.collecting || !matches!(b.obj_type(), ObjType::String | ObjType::Float | ObjType::Bignum) {
            self.stack.push(v);
            return;
        }
        let klass = b.klass;
        if klass == self.leaf_classes[0] && b.flags & (object::FL_EXIVAR | object::FL_SURVIVED) == 0 {
            // The common case, a young plain String seen for the first time.
            b.flags |= object::FL_SURVIVED;
            return;
        }
        if b.has(object::FL_SURVIVED) {
            if self.leaf_classes.contains(&klass) {
                // SAFETY: v is a live leaf object of this heap.
                unsafe { page::set_old(v) };
                self.promoted += 1;
            }
        } else {
            b.flags |= object::FL_SURVIVED;
        }
        let exivar = b.has(object::FL_EXIVAR);
        self.mark(klass);
        if exivar {
            self.mark_exivars(v);
        }
    }

    fn mark_exivars(&mut self, v: Value) {
        if let Some(ivars) = self.exivars.and_then(|t| t.get(&(v.raw() as usize))) {
            for &(_, iv) in ivars {
                self.mark(iv);
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
                self.mark_exivars(v);
            }
        }
    }
}
