//! The object heap of one VM: slot pages, free lists handed to per-thread allocation
//! caches, and the mark & sweep machinery.
//!
//! Invariants:
//! - Non-moving: an object's address is fixed for its life.
//! - A page is in use (swept, `pages`, or waiting for its sweep, `unswept`; the base of
//!   either is in `page_bases`), empty (`empty`: a sweep found no live object on it; its
//!   memory is touched but holds nothing), fresh (`fresh`: counted in the heap's size but
//!   never handed out, so zero and untouched, taking no RAM), or released (`released`:
//!   its memory given back to the kernel, not counted, reused first when the heap grows).
//!   Only pages in use hold objects, and only swept ones free lists.
//! - Sweeping is lazy. A collection ends with every page in use unswept (`start_sweep`);
//!   on an unswept page a slot holds a live object iff its mark bit is set (dead objects
//!   keep their header until swept). When the free lists of a class are used up, the
//!   allocator sweeps that class's next unswept page and allocates from it at once, while
//!   its lines are still in the cache (`take_free_list`). Whatever is left is swept before
//!   the next marking, by `GC.start` and major collections at once, and before anything
//!   that needs dead objects gone or mark bits clear (`finish_sweep`, through
//!   `crate::gc::finish_sweep`). Heap walks (`for_each_object`) need no sweep.
//! - Each page in use has one size class (`page::SizeClass`: 40-byte slots for Strings,
//!   Floats and small plain objects, 64-byte slots for everything else); empty, fresh and released pages have none
//!   and take the class of the first allocation that needs a page (empty pages first, as
//!   their memory is already resident). Free lists never mix classes: `ready[class]` and
//!   each thread's `free_lists[class]`.
//! - On a swept heap, a word is a candidate object pointer iff its page base is in
//!   `page_bases` and it falls on an object slot of that page (by the page's slot size)
//!   whose type is not `Free` (see `live_object_at`).
//! - Sizing (`resize_after_collection`) counts bytes, so that both classes share one
//!   policy (`tuning::Tuning`): after a collection the heap grows when less than `min_free`
//!   percent of its pages' bytes are free, to `goal_free` free, at most `max_growth` at a
//!   time; it releases empty pages when more than `max_free` are free (and, for the rest,
//!   the pages its sweep will find empty: `to_release`). A class
//!   whose allocation started the collection and whose own pages, with the empty and fresh
//!   ones, have less than `min_free` free also grows the heap (by fresh pages) to
//!   its goal, and then none are released. After a minor collection the heap grows only
//!   when a major one ran shortly before (or the old objects did not grow since); otherwise
//!   the next collection is major (`need_major`), since old garbage may be what fills it. Pages are taken from
//!   `empty` and `fresh` only when the swept pages' free lists of the class are used up, so
//!   the heap's memory follows what is used, not its size.
//! - A free list is owned by exactly one party: the heap (`ready`) or one thread's cache.
//!   Before a collection every thread cache is emptied (its slots are `Free` and get
//!   relinked by their page's sweep).
//! - Roots are supplied by the collector driver (`crate::gc`); this module knows nothing of
//!   frames or threads.
//! - Minor collections (generational). An object marked by a third collection
//!   (`FL_SURVIVED`, `FL_SURVIVED2` record the first two) is promoted: its page's old bit and its `FL_OLD`
//!   flag are set (both always agree). A leaf that an old object references is promoted
//!   by its second. A minor collection starts with the old objects marked
//!   (`Page::mark_old`), so it neither traces nor frees them, except the remembered ones
//!   (`remember_bits`), which it traces first. The invariant that makes this sound: at the
//!   start of a minor collection, every young object referenced by an old object is
//!   referenced by a remembered one, or by generic instance variables (all marked as roots
//!   by minor collections). It holds because
//!   - a store of a young reference into an old object of a write-barrier-protected type
//!     (`object::wb_protected`) remembers the object (`write_barrier`), and so does any
//!     change of an existing object's class;
//!   - a collection that traces an old object (a newly promoted one, a remembered one, or
//!     any in a major collection) remembers it when one of its children is still young
//!     after being marked, and always when its type is not protected;
//!   - Arrays are changed through `ItemsMut` guards, which remember an old Array when made
//!     and when dropped; while a guard is alive (`guards_alive`), a collection neither
//!     promotes nor forgets protected containers, so a store between two collections
//!     inside one guard's life is covered too.
//!   Old objects die only in major collections, which run for `GC.start`, malloc growth
//!   past `malloc_limit`, and when the old objects outgrow `old_limit`; they clear the
//!   remembered set and rebuild it while tracing. Buffer growth past the smaller
//!   `young_malloc_limit` runs a minor collection.

pub mod alloc_trace;
pub mod page;
pub mod stack_scan;
pub mod stats;
pub mod tuning;

use std::collections::HashSet;
use std::sync::Mutex;

use crate::object::{self, ObjType, RBasic};
use crate::value::Value;
use page::{FreeSlot, Page, SizeClass, OBJECT_SLOTS, PAGE_SIZE, SIZE_CLASSES};

pub struct Heap {
    pub(crate) inner: Mutex<HeapInner>,
}

/// What a sweep does for each object it frees besides freeing its buffers, before the
/// slot can be reused (the VM's tables keyed by address: `crate::gc::DeadObjects`).
/// A trait rather than a closure so that the sweep's loop calls it in line.
pub trait SweepHook {
    fn freeing(&mut self, obj: *mut RBasic);
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

struct EmptyPage {
    page: Page,
    class: SizeClass,
    list: (*mut FreeSlot, usize),
}

pub struct HeapInner {
    /// Swept pages in use.
    pages: Vec<Page>,
    /// Pages in use that the last collection marked and no sweep has reached yet, by size
    /// class.
    unswept: [Vec<Page>; 2],
    /// Unswept pages the last marking found without live objects.
    unswept_dead: usize,
    /// How many pages the sweep releases as it finds them empty (the sizing wanted more
    /// pages released than were empty when it ran).
    to_release: usize,
    /// The sweep in progress is a major collection's: when it ends, freed buffers are
    /// given back (`crate::gc::sweeping`).
    release_when_swept: bool,
    /// Pages a sweep left without objects, with the free list it linked (valid for the
    /// page's old class).
    empty: Vec<EmptyPage>,
    fresh: Vec<Page>,
    released: Vec<Page>,
    page_bases: HashSet<usize, PageHasher>,
    /// Free lists (head, length) of swept pages, by size class.
    ready: [Vec<(*mut FreeSlot, usize)>; 2],
    pub stats: GcStats,
    /// Bytes of out-of-line storage allocated since the last collection (approximate).
    pub malloc_increase: usize,
    /// The same since the last collection other than a minor one for buffers
    /// (`GcReason::YoungMalloc`): past `malloc_limit`, a major collection. Minor collections
    /// for buffers do not reset it, so that buffers which outlive them (old ones, which only
    /// a major collection frees) bring a major collection at the same pace as without them.
    pub major_malloc_increase: usize,
    pub malloc_limit: usize,
    /// The floor of `malloc_limit` (`MALLOC_LIMIT_MIN` unless an embedder lowered it, see
    /// `Runtime::set_gc_malloc_limit`: many VMs in one server process each hold up to this
    /// much garbage in buffers).
    pub malloc_limit_min: usize,
    /// Free-slot ratios and growth factor (`tuning::Tuning`).
    tuning: tuning::Tuning,
    /// Per size class, at the last marking: pages in use and the bytes of their live objects.
    class_use: [(usize, usize); SIZE_CLASSES.len()],
    /// The size class whose allocation found no free slot and started the collection.
    pub wanted_class: Option<SizeClass>,
    /// Old (promoted) objects, and how many there may be before a major collection.
    pub old_objects: usize,
    pub old_limit: usize,
    /// A minor collection left too few free slots: the next collection is major (the old
    /// objects may hold the garbage), and the heap grows only after that one.
    pub need_major: bool,
    /// `stats.count` at the last major collection, and the old objects it left.
    last_major: u64,
    old_at_major: usize,
}

// SAFETY: raw free-list pointers are only touched under the heap mutex or by their owner.
unsafe impl Send for HeapInner {}

const INITIAL_PAGES: usize = 16;
/// Buffers allocated since the last collection that start a minor one
/// (`young_malloc_limit`): this many times the slot pages' bytes, and at least
/// `YOUNG_MALLOC_MIN`.
const YOUNG_MALLOC_FACTOR: usize = 2;
const YOUNG_MALLOC_MIN: usize = 2 << 20;
/// After a minor collection the heap may grow only this many collections after a major
/// one (CRuby: 3); later, the next collection is major instead (`need_major`).
const GROW_AFTER_MAJOR: u64 = 3;
/// Old objects allowed before the first major collection; after one, the survivors times
/// `Tuning::old_limit_factor`.
const OLD_LIMIT_MIN: usize = 100_000;

impl Default for Heap {
    fn default() -> Self {
        Self::new()
    }
}

impl Heap {
    pub fn new() -> Heap {
        let tuning = tuning::Tuning::from_env();
        Heap {
            inner: Mutex::new(HeapInner {
                pages: Vec::new(),
                unswept: [Vec::new(), Vec::new()],
                unswept_dead: 0,
                to_release: 0,
                release_when_swept: false,
                empty: Vec::new(),
                fresh: Vec::new(),
                released: Vec::new(),
                page_bases: HashSet::default(),
                ready: [Vec::new(), Vec::new()],
                stats: GcStats::default(),
                malloc_increase: 0,
                major_malloc_increase: 0,
                malloc_limit: tuning.malloc_limit_min,
                malloc_limit_min: tuning.malloc_limit_min,
                tuning,
                class_use: Default::default(),
                wanted_class: None,
                old_objects: 0,
                old_limit: OLD_LIMIT_MIN,
                need_major: false,
                last_major: 0,
                old_at_major: 0,
            }),
        }
    }

    /// Sets the floor of the malloc limit (0: the default), effective at once.
    pub fn set_malloc_limit_min(&self, bytes: usize) {
        let mut heap = self.lock();
        let bytes = if bytes == 0 { heap.tuning.malloc_limit_min } else { bytes };
        heap.malloc_limit_min = bytes;
        heap.malloc_limit = bytes;
    }

    pub fn lock(&self) -> std::sync::MutexGuard<'_, HeapInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl HeapInner {
    /// Hands out one free list (for a thread's allocation cache): a whole page's, or at
    /// most `limit` slots of it (the rest stays ready) so that many threads that each
    /// allocate a little do not each hold a page of free slots. Swept pages' free slots
    /// come first, then those of the class's next unswept page (swept now, `dead` called for
    /// each object it frees), then empty, borrowed and fresh ones.
    pub fn take_free_list(&mut self, class: SizeClass, limit: usize, dead: &mut impl SweepHook) -> Option<*mut FreeSlot> {
        let (head, count) = match self.ready[class as usize].pop() {
            Some(list) => list,
            None => self
                .sweep_for(class, dead)
                .or_else(|| self.use_empty_page(class))
                .or_else(|| self.borrow_large(class))
                .or_else(|| self.use_fresh_page(class))?,
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
        self.pages.len() + self.unswept_count() + self.empty.len() + self.fresh.len()
    }

    fn unswept_count(&self) -> usize {
        self.unswept.iter().map(Vec::len).sum()
    }

    /// Whether pages are waiting for their sweep.
    #[inline]
    pub fn is_sweeping(&self) -> bool {
        self.unswept.iter().any(|u| !u.is_empty())
    }

    /// Pages in use, swept or not.
    fn pages_in_use(&self) -> impl Iterator<Item = &Page> {
        self.pages.iter().chain(self.unswept.iter().flatten())
    }

    /// Pages that hold no object and may take either class.
    fn unused_pages(&self) -> usize {
        self.empty.len() + self.fresh.len()
    }

    /// True when a collection should run before the heap grows.
    pub fn wants_collection(&self) -> bool {
        self.page_count() >= INITIAL_PAGES
    }

    /// Puts an empty page (resident already) in use for `class`: one of that class keeps
    /// the free list its sweep linked; another is relinked.
    fn use_empty_page(&mut self, class: SizeClass) -> Option<(*mut FreeSlot, usize)> {
        let i = self.empty.iter().rposition(|e| e.class == class).or_else(|| self.empty.len().checked_sub(1))?;
        let e = self.empty.swap_remove(i);
        let list = if e.class == class { e.list } else { e.page.reset(class) };
        self.page_bases.insert(e.page.base());
        self.pages.push(e.page);
        Some(list)
    }

    /// A free list of 64-byte slots for objects of the small class (which fit in them),
    /// when the small class has no free slot left and no empty page: the large class's
    /// free slots are resident memory, a fresh page is not yet.
    fn borrow_large(&mut self, class: SizeClass) -> Option<(*mut FreeSlot, usize)> {
        if class != SizeClass::Small {
            return None;
        }
        self.ready[SizeClass::Large as usize].pop()
    }

    /// Puts a fresh page (its first touch) in use for `class`.
    fn use_fresh_page(&mut self, class: SizeClass) -> Option<(*mut FreeSlot, usize)> {
        let page = self.fresh.pop()?;
        page.init(class);
        let list = page.collect_free();
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
                return reuse > 0 || self.ready.iter().any(|r| !r.is_empty()) || self.is_sweeping() || self.unused_pages() > 0;
            }
            self.stats.total_allocated_pages += pages.len() as u64;
            self.fresh.extend(pages);
        }
        true
    }

    /// Object slots of the pages in use, and of the unused pages counted as 64-byte pages.
    pub fn total_slots(&self) -> usize {
        self.pages_in_use().map(|p| p.class().object_slots()).sum::<usize>() + self.unused_pages() * OBJECT_SLOTS
    }

    /// Calls `f` with every live object.
    pub fn for_each_object(&self, f: &mut dyn FnMut(*mut RBasic)) {
        self.for_each_slot(&mut |p, live| {
            if live {
                f(p)
            }
        });
    }

    /// Calls `f` with every object slot and whether it holds a live object (on an unswept
    /// page: whether it is marked).
    pub fn for_each_slot(&self, f: &mut dyn FnMut(*mut RBasic, bool)) {
        for page in &self.pages {
            for i in page.slot_range() {
                let p = page.slot(i) as *mut RBasic;
                // SAFETY: p is an object slot of this page; the caller holds the heap lock.
                f(p, unsafe { (*p).obj_type() } != ObjType::Free);
            }
        }
        for page in self.unswept.iter().flatten() {
            for i in page.slot_range() {
                f(page.slot(i) as *mut RBasic, page.is_marked_slot(i));
            }
        }
    }

    /// Slots holding an object, dead ones not swept yet included (CRuby's
    /// `heap_live_slots`: an object counts until its slot is freed, so that allocated =
    /// freed + live holds at every moment).
    pub fn live_slots(&self) -> usize {
        let mut n = 0;
        for page in self.pages_in_use() {
            for i in page.slot_range() {
                // SAFETY: an object slot of a page in use; the caller holds the heap lock.
                n += usize::from(unsafe { (*(page.slot(i) as *mut RBasic)).obj_type() } != ObjType::Free);
            }
        }
        n
    }

    /// The object whose slot contains `addr` (interior pointers included), if it is live.
    /// The heap must be swept (on an unswept page a dead object still has its type).
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

    /// Ends a collection's marking: every page in use waits for its sweep (see the
    /// module's invariants), and the free lists that were ready are dropped (their slots
    /// get relinked by their page's sweep). `release_when_swept`: the sweep's end gives
    /// freed buffers back. Returns the number of live objects and the bytes of their slots.
    pub fn start_sweep(&mut self, major: bool, release_when_swept: bool) -> (usize, usize) {
        debug_assert!(!self.is_sweeping(), "a marking started before the last sweep ended");
        for r in &mut self.ready {
            r.clear();
        }
        let (mut live, mut live_bytes, mut old) = (0, 0, 0);
        self.class_use = Default::default();
        self.unswept_dead = 0;
        for page in std::mem::take(&mut self.pages) {
            let (class, l) = (page.class(), page.marked_count());
            live += l;
            live_bytes += l * class.slot_size();
            self.unswept_dead += usize::from(l == 0);
            let u = &mut self.class_use[class as usize];
            u.0 += 1;
            u.1 += l * class.slot_size();
            if major {
                old += page.marked_old_count();
            }
            self.unswept[class as usize].push(page);
        }
        if major {
            self.old_objects = old;
            self.old_limit = (self.old_objects * self.tuning.old_limit_factor / 100).max(OLD_LIMIT_MIN);
        }
        self.to_release = 0;
        self.release_when_swept = release_when_swept;
        self.stats.live_after_last_gc = live as u64;
        self.malloc_increase = 0;
        (live, live_bytes)
    }

    /// Sweeps `page` (an unswept one) and files it: a page left without objects is
    /// released when the sizing asked for that (`to_release`), made empty unless
    /// `for_alloc` (the caller allocates from it at once), and otherwise goes back in use.
    /// Returns the page's free list if it is in use and has free slots.
    fn sweep_page(&mut self, page: Page, for_alloc: bool, dead: &mut impl SweepHook) -> Option<(*mut FreeSlot, usize)> {
        // SAFETY: the page was marked by the last collection and not swept since (it was
        // in `unswept`), and no free list into it exists (`start_sweep` dropped them).
        let (head, count, live, freed) = unsafe { page.sweep(dead) };
        self.stats.total_freed_objects += freed as u64;
        if live == 0 && (self.to_release > 0 || !for_alloc) {
            self.page_bases.remove(&page.base());
            if self.to_release > 0 {
                self.to_release -= 1;
                page.release_memory();
                self.stats.total_freed_pages += 1;
                self.released.push(page);
            } else {
                // Either class may use it next (see the module's invariants).
                let class = page.class();
                self.empty.push(EmptyPage { page, class, list: (head, count) });
            }
            return None;
        }
        self.pages.push(page);
        (count > 0).then_some((head, count))
    }

    /// Sweeps unswept pages of `class` until one has free slots, and returns its free
    /// list. When the class has none left, the other class's pages are swept too: those
    /// that turn out empty may take this class (and small objects borrow 64-byte slots).
    fn sweep_for(&mut self, class: SizeClass, dead: &mut impl SweepHook) -> Option<(*mut FreeSlot, usize)> {
        while let Some(page) = self.unswept[class as usize].pop() {
            if let Some(list) = self.sweep_page(page, true, dead) {
                return Some(list);
            }
        }
        self.finish_sweep(dead);
        None
    }

    /// Sweeps every page still waiting for its sweep.
    pub fn finish_sweep(&mut self, dead: &mut impl SweepHook) {
        for class in SIZE_CLASSES {
            while let Some(page) = self.unswept[class as usize].pop() {
                if let Some(list) = self.sweep_page(page, false, dead) {
                    self.ready[class as usize].push(list);
                }
            }
        }
        self.to_release = 0;
    }

    /// Whether a major collection's sweep has just ended (once per such sweep): its freed
    /// buffers may go back to the kernel.
    pub fn take_release_request(&mut self) -> bool {
        let ended = self.release_when_swept && !self.is_sweeping();
        if ended {
            self.release_when_swept = false;
        }
        ended
    }

    /// Whether the next collection for want of slots should be a major one.
    pub fn wants_major(&self) -> bool {
        self.need_major || self.old_objects > self.old_limit
    }

    /// Starts a minor collection: every old object counts as marked. Returns the
    /// remembered set, whose bits are cleared (the collection sets them again for the
    /// objects that stay remembered).
    pub fn start_minor(&mut self) -> Vec<Value> {
        debug_assert!(!self.is_sweeping());
        let mut remembered = Vec::new();
        for page in &self.pages {
            page.mark_old();
            page.take_remembered(&mut |v| remembered.push(v));
        }
        remembered
    }

    /// Starts a major collection: the remembered set is rebuilt while tracing.
    pub fn start_major(&mut self) {
        debug_assert!(!self.is_sweeping());
        for page in &self.pages {
            page.clear_remembered();
        }
    }

    /// Pages in use and live MB per size class at the last marking (for `CARMINE_GC_TRACE`).
    pub fn class_use_mb(&self) -> Vec<(usize, f64)> {
        self.class_use.iter().map(|&(p, l)| (p, (l as f64 / 1e5).round() / 10.0)).collect()
    }

    /// Buffer bytes allocated since the last collection (`malloc_increase`) past which a
    /// minor collection runs (`GcReason::YoungMalloc`), while `malloc_limit` is still far:
    /// buffers are memory like slots, and most of those a program churns through die young
    /// (a String built per request or per line). Collected at twice the slot heap's bytes,
    /// they are reused by the next cycle, where a 16 MiB limit let a program (or a forked
    /// worker) fault in up to 16 MiB of fresh pages between collections. A heap larger
    /// than half of `malloc_limit` never reaches this limit first.
    pub fn young_malloc_limit(&self) -> usize {
        (self.page_count() * PAGE_SIZE * YOUNG_MALLOC_FACTOR).max(YOUNG_MALLOC_MIN)
    }

    /// Objects in the remembered set.
    pub fn remembered_count(&self) -> usize {
        self.pages_in_use().map(|p| p.remembered_count()).sum()
    }

    /// Sizes the heap after a collection (see the module's invariants): fewer free slots
    /// mean more frequent collections, each of which marks all live objects; more mean
    /// more memory.
    pub fn resize_after_collection(&mut self, live_bytes: usize, major: bool) {
        let t = self.tuning;
        let total = (self.page_count() * PAGE_SIZE).max(1);
        let free = total - live_bytes.min(total);
        if major {
            self.need_major = false;
            self.last_major = self.stats.count;
            self.old_at_major = self.old_objects;
        }
        // Free slots of one class are no room for the other's objects: when the class whose
        // allocation ran out of slots is short of free bytes in its own pages, it asks for
        // fresh pages to reach the goal on its own. (Only that class: growing for a class
        // that no longer allocates hands its fresh pages to the other.)
        let wanted = self.wanted_class.take();
        let unused = self.unused_pages();
        let short: usize = SIZE_CLASSES
            .iter()
            .filter(|&&c| wanted == Some(c))
            .map(|&c| {
                let (pages, live) = self.class_use[c as usize];
                // The small class also uses the large class's free slots (`borrow_large`).
                let (mut room, mut live) = (pages + unused, live);
                if c == SizeClass::Small {
                    let (large_pages, large_live) = self.class_use[SizeClass::Large as usize];
                    room += large_pages;
                    live += large_live;
                }
                let bytes = room * PAGE_SIZE;
                if pages > 0 && (bytes - live.min(bytes)) * 100 < bytes * t.min_free {
                    (live * 100 / (100 - t.goal_free)).div_ceil(PAGE_SIZE).saturating_sub(room)
                } else {
                    0
                }
            })
            .sum();
        let grows = free * 100 < total * t.min_free || short > 0;
        if grows && !major && self.stats.count >= self.last_major + GROW_AFTER_MAJOR && self.old_objects > self.old_at_major {
            // Old garbage may be what fills the heap: find out before growing it (the
            // slots this collection freed last until then). As CRuby, the heap grows
            // after a minor collection only when a major one ran shortly before.
            self.need_major = true;
        } else if free * 100 < total * t.min_free {
            let goal = live_bytes * 100 / (100 - t.goal_free);
            let max = total * (100 + t.max_growth) / 100;
            let want = goal.min(max).div_ceil(PAGE_SIZE);
            self.grow(want.saturating_sub(self.page_count()).max(4));
        } else if short > 0 {
            let max = self.page_count() * t.max_growth / 100;
            self.grow(short.min(max).max(4));
        } else if short == 0 && free * 100 > total * t.max_free && self.page_count() > INITIAL_PAGES {
            let goal = (live_bytes * 100 / (100 - t.goal_free)).div_ceil(PAGE_SIZE).max(INITIAL_PAGES);
            self.release_pages(self.page_count().saturating_sub(goal));
        }
        self.malloc_limit = (self.malloc_limit.max(self.malloc_limit_min)).min(256 * 1024 * 1024);
    }

    /// Releases up to `n` pages: empty ones first (their memory goes back to the kernel),
    /// then those the sweep will find empty (as it finds them), then fresh ones.
    fn release_pages(&mut self, n: usize) {
        let from_empty = n.min(self.empty.len());
        let at = self.empty.len() - from_empty;
        for EmptyPage { page, .. } in self.empty.drain(at..) {
            page.release_memory();
            self.stats.total_freed_pages += 1;
            self.released.push(page);
        }
        self.to_release = (n - from_empty).min(self.unswept_dead);
        let from_fresh = (n - from_empty - self.to_release).min(self.fresh.len());
        let at = self.fresh.len() - from_fresh;
        self.released.extend(self.fresh.drain(at..));
    }
}

/// Records a store of `child` into `parent` (see the module's invariants): an old parent
/// that may now reference a young object is remembered. Call it after the store, with no
/// allocation between the two. Entirely in line, with no call: it sits in the dispatch
/// loop's ivar and Array store paths, where a call (even one rarely taken) made the loop
/// keep more of its state in stack slots (a `while` loop +6 instructions per iteration).
#[inline(always)]
pub fn write_barrier(parent: Value, child: Value) {
    if parent.is_heap() && object::basic(parent).flags & object::FL_OLD != 0 {
        remember_young(parent, child);
    }
}

/// `write_barrier` for an old `parent`.
#[inline(always)]
pub fn remember_young(parent: Value, child: Value) {
    if child.is_heap() && object::basic(child).flags & object::FL_OLD == 0 {
        // SAFETY: parent is a live old object of a page in use.
        unsafe { page::set_remembered(parent) };
    }
}

/// Remembers `parent` if it is old, whatever it stores (for changes made through a
/// mutable borrow of its contents; see `ItemsMut`).
#[inline(always)]
pub fn remember_if_old(parent: Value) {
    if object::basic(parent).flags & object::FL_OLD != 0 {
        // SAFETY: parent is a live old object of a page in use.
        unsafe { page::set_remembered(parent) };
    }
}

thread_local! {
    /// Write guards (`ItemsMut`) alive on this thread.
    static GUARDS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A write guard starts.
#[inline(always)]
pub fn guard_enter() {
    GUARDS.with(|g| g.set(g.get() + 1));
}

/// A write guard ends.
#[inline(always)]
pub fn guard_exit() {
    GUARDS.with(|g| g.set(g.get() - 1));
}

/// Whether a write guard is alive on this thread (the collecting one: other threads are
/// stopped outside the giant lock, where no guard is held).
pub fn guards_alive() -> bool {
    GUARDS.with(|g| g.get() > 0)
}

/// Marks objects transitively from the roots it is given.
pub struct Marker<'a> {
    heap: &'a HeapInner,
    stack: Vec<Value>,
    /// Set by the collector (not by `reachable_objects_from`): objects age and are
    /// promoted as they are marked, and leaves are visited at once instead of going
    /// through the stack.
    collecting: bool,
    /// The core classes of the leaf types (VM roots, marked by every collection): a leaf
    /// of one of these classes needs no remembering for its class.
    leaf_classes: [Value; 3],
    /// Objects promoted by this marking.
    pub promoted: usize,
    /// Instance variables of non-`RObject` objects, by address (see `FL_EXIVAR`).
    pub exivars: Option<&'a std::collections::HashMap<usize, Vec<(crate::symbol::SymId, Value)>>>,
    /// Set while the children of an old object are marked: `mark` then records in
    /// `found_young` whether a child is still young once marked.
    checking: bool,
    found_young: bool,
    /// A write guard is alive: protected containers are neither promoted nor forgotten
    /// (see the module's invariants).
    hold: bool,
    /// Verification (`verify_old`): `mark` marks nothing and counts unmarked references.
    verify: bool,
    pub unmarked: usize,
}

impl<'a> Marker<'a> {
    /// A marker over a swept heap (mark bits clear but those it sets).
    pub fn new(heap: &'a HeapInner) -> Marker<'a> {
        debug_assert!(!heap.is_sweeping(), "marking needs a swept heap (crate::gc::finish_sweep)");
        Marker {
            heap,
            stack: Vec::with_capacity(1024),
            collecting: false,
            leaf_classes: [Value::NIL; 3],
            promoted: 0,
            exivars: None,
            checking: false,
            found_young: false,
            hold: false,
            verify: false,
            unmarked: 0,
        }
    }

    /// A marker for a collection; `leaf_classes` are the String, Float and Integer classes.
    pub fn for_collection(heap: &'a HeapInner, leaf_classes: [Value; 3]) -> Marker<'a> {
        Marker { collecting: true, leaf_classes, hold: guards_alive(), ..Marker::new(heap) }
    }

    /// Marks a value known to be valid (immediates are ignored).
    #[inline(always)]
    pub fn mark(&mut self, v: Value) {
        if v.is_heap() {
            if self.checking {
                self.mark_checked(v);
                return;
            }
            // SAFETY: precise roots and object fields only hold valid object pointers.
            if !unsafe { page::test_and_set_mark(v) } {
                self.visit(v);
            }
        }
    }

    /// `mark` of a child of an old object (or a verification).
    #[inline(never)]
    fn mark_checked(&mut self, v: Value) {
        if self.verify {
            // SAFETY: as in `mark`.
            if !unsafe { page::is_marked(v.as_ptr::<RBasic>()) } {
                self.unmarked += 1;
                if self.unmarked <= 10 {
                    eprintln!("[BUG] GC verify: unmarked {:?} {:#x} referenced by an old object", object::basic(v).obj_type(), v.raw());
                }
            }
            return;
        }
        // SAFETY: as in `mark`.
        let (was_marked, old) = unsafe { page::test_and_set_mark_old(v) };
        if !was_marked {
            self.visit(v);
            if object::basic(v).flags & object::FL_OLD == 0 {
                self.found_young = true;
            }
        } else if !old {
            // The page's old bit, not the object's `FL_OLD`: an old Array of a million old
            // Strings is checked without reading a million headers.
            self.found_young = true;
        }
    }

    /// A newly marked object: ages it (a second marking promotes it); a leaf is done at
    /// once (its class and generic ivars marked), so that an Array of a million Strings
    /// does not put a million entries on the stack; anything else is traced later by
    /// `drain`.
    #[inline(never)]
    fn visit(&mut self, v: Value) {
        let b = object::basic(v);
        if !self.collecting {
            self.stack.push(v);
            return;
        }
        let ty = b.obj_type();
        let leaf = matches!(ty, ObjType::String | ObjType::Float | ObjType::Bignum);
        let klass = b.klass;
        if leaf && klass == self.leaf_classes[0] && b.flags & (object::FL_EXIVAR | object::FL_SURVIVED | object::FL_OLD) == 0 {
            // The common case, a young plain String seen for the first time.
            b.flags |= object::FL_SURVIVED;
            return;
        }
        if b.flags & object::FL_OLD == 0 {
            if b.flags & object::FL_SURVIVED == 0 {
                b.flags |= object::FL_SURVIVED;
            } else if b.flags & object::FL_SURVIVED2 == 0 && !(leaf && self.checking) {
                // A leaf that an old object references is promoted at its second
                // marking, not its third: until then every minor collection traces
                // the old container again (an Array of a million Strings built
                // across collections: one full trace less).
                b.flags |= object::FL_SURVIVED2;
            } else if !(self.hold && !leaf && object::wb_protected(ty)) {
                b.flags |= object::FL_OLD;
                // SAFETY: v is a live object of this heap.
                unsafe { page::set_old(v) };
                self.promoted += 1;
            }
        }
        if !leaf {
            self.stack.push(v);
            return;
        }
        let outer = (self.checking, self.found_young);
        let old = b.flags & object::FL_OLD != 0;
        let exivar = b.has(object::FL_EXIVAR);
        self.checking = old && !self.leaf_classes.contains(&klass);
        self.found_young = false;
        self.mark(klass);
        if self.checking && self.found_young {
            // SAFETY: v is old (checking is only set for old objects).
            unsafe { page::set_remembered(v) };
        }
        self.checking = false;
        if exivar {
            self.mark_exivars(v);
        }
        (self.checking, self.found_young) = outer;
    }

    fn mark_exivars(&mut self, v: Value) {
        if let Some(ivars) = self.exivars.and_then(|t| t.get(&(v.raw() as usize))) {
            for &(_, iv) in ivars {
                self.mark(iv);
            }
        }
    }

    /// Traces an old object's children (`v` is marked already), remembering it when one
    /// of them is still young, when its type has no write barriers, or when it is a
    /// container held by a write guard.
    fn trace_old(&mut self, v: Value) {
        let b = object::basic(v);
        let ty = b.obj_type();
        let protected = object::wb_protected(ty);
        self.checking = protected;
        self.found_young = false;
        object::mark_children(v, self);
        self.checking = false;
        if !protected || self.found_young || (self.hold && !matches!(ty, ObjType::String | ObjType::Float | ObjType::Bignum)) {
            // SAFETY: v is a live old object of this heap.
            unsafe { page::set_remembered(v) };
        }
        if b.has(object::FL_EXIVAR) {
            self.mark_exivars(v);
        }
    }

    /// Traces the remembered set a minor collection starts with (see
    /// `HeapInner::take_remembered`).
    pub fn trace_remembered(&mut self, remembered: &[Value]) {
        for &v in remembered {
            self.trace_old(v);
        }
    }

    /// Checks that every object an old object references is marked (after the marking of
    /// a minor collection); returns how many references were not. The write barriers'
    /// test (`CARMINE_GC_VERIFY`).
    pub fn verify_old(&mut self) -> usize {
        self.verify = true;
        self.checking = true;
        let heap = self.heap;
        heap.for_each_object(&mut |p| {
            let v = Value::from_ptr(p);
            if object::basic(v).flags & object::FL_OLD != 0 {
                object::mark_children(v, self);
            }
        });
        self.checking = false;
        self.verify = false;
        self.unmarked
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
            if object::basic(v).flags & object::FL_OLD != 0 && self.collecting {
                self.trace_old(v);
                continue;
            }
            object::mark_children(v, self);
            if object::basic(v).has(object::FL_EXIVAR) {
                self.mark_exivars(v);
            }
        }
    }
}
