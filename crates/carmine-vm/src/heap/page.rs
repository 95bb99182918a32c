//! Heap pages: fixed-size slots in 64 KiB-aligned blocks, one slot size per page.
//!
//! Invariants:
//! - A page is `PAGE_SIZE` bytes aligned to `PAGE_SIZE`, so the page of any interior
//!   pointer is `addr & !(PAGE_SIZE - 1)`.
//! - A page in use has one size class (`SizeClass`), written into its `PageHeader` when it
//!   is first used (`Page::init`); a zeroed page (fresh or released) has none
//!   (`slot_size == 0`) and may become either class.
//! - The `PageHeader` (mark bitmap and geometry) fills the page's first `first_slot` slots;
//!   object slots are `first_slot..slot_count`, at `base + i * slot_size`. The bytes after
//!   the last slot (less than one slot) are unused. A slot's index is computed with a
//!   multiplication by `recip` (exact for every offset inside a page).
//! - A slot is free iff its type tag is `ObjType::Free`; free slots link through their
//!   `klass` word.
//! - Mark bits are set by a collection's marking and cleared by the page's sweep, which
//!   may come later (see `crate::heap` on lazy sweeping): until then they tell which
//!   slots hold live objects. Bits of header slots and of indexes past `slot_count` are
//!   never set.
//! - An old bit (`old_bits`) is set only for a slot holding a live object that the
//!   collector promoted (see `crate::heap` on minor collections), together with the
//!   object's `FL_OLD` flag; a major sweep clears the old bits of the objects it frees, so
//!   a reused slot never starts old.
//! - A remembered bit (`remember_bits`) is set only for an old object: one that may
//!   reference young objects (a write barrier saw a store into it, or a collection found
//!   a young child), or one whose type has no write barriers (traced by every minor
//!   collection while it lives).

use crate::object::{ObjType, RBasic};
use crate::value::Value;

pub const PAGE_SIZE: usize = 64 * 1024;
/// The slot size of most objects (the `Large` class): every object struct fits in it.
pub const SLOT_SIZE: usize = 64;
/// The slot size of the `Small` class: Strings, Floats and plain objects of classes with
/// few instance variables (a header and 24 bytes, as CRuby 3.1's 40-byte RVALUE).
pub const SMALL_SLOT_SIZE: usize = 40;
pub const SLOTS_PER_PAGE: usize = PAGE_SIZE / SLOT_SIZE;
/// Slot indexes a page of the smallest class has (the mark bitmap's length in bits).
const MAX_SLOTS: usize = PAGE_SIZE / SMALL_SLOT_SIZE;
const BITMAP_WORDS: usize = MAX_SLOTS.div_ceil(64);
pub const HEADER_SLOTS: usize = std::mem::size_of::<PageHeader>().div_ceil(SLOT_SIZE);
/// Object slots of a `Large` page.
pub const OBJECT_SLOTS: usize = SLOTS_PER_PAGE - HEADER_SLOTS;

/// The slot sizes of the heap. Which one an object gets is fixed by its type when it is
/// allocated (objects never move, so never change class).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum SizeClass {
    Small = 0,
    Large = 1,
}

pub const SIZE_CLASSES: [SizeClass; 2] = [SizeClass::Small, SizeClass::Large];

impl SizeClass {
    #[inline]
    pub const fn slot_size(self) -> usize {
        match self {
            SizeClass::Small => SMALL_SLOT_SIZE,
            SizeClass::Large => SLOT_SIZE,
        }
    }

    /// The index of the first object slot (the header comes first).
    pub const fn first_slot(self) -> usize {
        std::mem::size_of::<PageHeader>().div_ceil(self.slot_size())
    }

    /// One past the last object slot.
    pub const fn slot_count(self) -> usize {
        PAGE_SIZE / self.slot_size()
    }

    pub const fn object_slots(self) -> usize {
        self.slot_count() - self.first_slot()
    }
}

// Zeroed memory must read as a free slot (see `Page::new_batch`).
const _: () = assert!(ObjType::Free as u32 == 0);

#[repr(C)]
pub struct PageHeader {
    pub mark_bits: [u64; BITMAP_WORDS],
    /// Promoted (old) objects: marked from the start of a minor collection.
    pub old_bits: [u64; BITMAP_WORDS],
    /// Old objects that minor collections trace (the remembered set).
    pub remember_bits: [u64; BITMAP_WORDS],
    /// Free slots counted at the last sweep.
    pub free_count: u32,
    /// 0 while the page is unused; else its class's slot size.
    slot_size: u32,
    /// `ceil(2^32 / slot_size)`: `(offset * recip) >> 32` is the slot index of an offset.
    recip: u64,
    first_slot: u16,
    slot_count: u16,
    class: u8,
}

const _: () = assert!(SizeClass::Small.first_slot() * SMALL_SLOT_SIZE >= std::mem::size_of::<PageHeader>());
// The reciprocal is exact: for every offset below PAGE_SIZE the rounding error of
// `recip` (< 1 per 2^32) times the offset stays below the distance to the next multiple.
const fn recip(size: usize) -> u64 {
    (1u64 << 32).div_ceil(size as u64)
}
const _: () = assert!((recip(SMALL_SLOT_SIZE) * SMALL_SLOT_SIZE as u64 - (1u64 << 32)) * (PAGE_SIZE as u64) < 1u64 << 32);
const _: () = assert!((recip(SLOT_SIZE) * SLOT_SIZE as u64 - (1u64 << 32)) * (PAGE_SIZE as u64) < 1u64 << 32);

/// A free slot: its header says `Free` and its second word links to the next free slot.
#[repr(C)]
pub struct FreeSlot {
    pub flags: u32,
    pub aux: u32,
    pub next: *mut FreeSlot,
}

pub struct Page {
    base: *mut u8,
}

// SAFETY: a page is plain memory owned by one heap; access is synchronised by the heap.
unsafe impl Send for Page {}

impl Page {
    /// `n` fresh pages from one mapping (one kernel mapping per heap growth, not per page:
    /// the number of mappings a process may have is limited). Their memory is zero, which
    /// reads as free slots and an empty mark bitmap, and is left untouched (so it takes no
    /// RAM) until the page is first used.
    pub fn new_batch(n: usize) -> Vec<Page> {
        let Some(base) = map_aligned_pages(n) else { return Vec::new() };
        (0..n).map(|k| Page { base: (base + k * PAGE_SIZE) as *mut u8 }).collect()
    }

    /// Gives the page's memory back to the kernel; it reads as zero (all slots free) again.
    /// The caller must hold no free list into it.
    pub fn release_memory(&self) {
        // SAFETY: the page is a private anonymous mapping of PAGE_SIZE bytes owned by this
        // heap; discarding its contents leaves it zeroed, a valid state for an unused page.
        unsafe { libc::madvise(self.base as *mut libc::c_void, PAGE_SIZE, libc::MADV_DONTNEED) };
    }

    #[inline]
    pub fn base(&self) -> usize {
        self.base as usize
    }

    #[inline]
    pub fn header(&self) -> *mut PageHeader {
        self.base as *mut PageHeader
    }

    /// Makes an unused (zeroed) page a page of `class`: writes its geometry.
    pub fn init(&self, class: SizeClass) {
        let h = self.header();
        // SAFETY: the header lies at the page base; the page is owned by the heap.
        unsafe {
            (*h).slot_size = class.slot_size() as u32;
            (*h).recip = recip(class.slot_size());
            (*h).first_slot = class.first_slot() as u16;
            (*h).slot_count = class.slot_count() as u16;
            (*h).class = class as u8;
        }
    }

    /// The class of a page in use.
    #[inline]
    pub fn class(&self) -> SizeClass {
        // SAFETY: the header lies at the page base.
        if unsafe { (*self.header()).class } == SizeClass::Small as u8 { SizeClass::Small } else { SizeClass::Large }
    }

    /// The object slot indexes of a page in use.
    #[inline]
    pub fn slot_range(&self) -> std::ops::Range<usize> {
        let c = self.class();
        c.first_slot()..c.slot_count()
    }

    #[inline]
    pub fn slot(&self, i: usize) -> *mut FreeSlot {
        debug_assert!(self.slot_range().contains(&i));
        // SAFETY: i < slot_count keeps the pointer inside the page.
        unsafe { self.base.add(i * self.class().slot_size()) as *mut FreeSlot }
    }

    /// Frees the page's unmarked objects (`dead` sees each first), links every
    /// free slot into a list and clears the marks. Returns (list head, free slots, live
    /// objects, objects freed). Marked slots are not read: a page full of survivors costs
    /// a few bitmap words.
    ///
    /// # Safety
    /// The page's marking is complete and it has not been swept since; no free list into
    /// this page is held; the caller holds the heap lock.
    pub unsafe fn sweep(&self, dead: &mut impl super::SweepHook) -> (*mut FreeSlot, usize, usize, usize) {
        let header = self.header();
        // A minor collection frees no old object (they start marked); a major one forgets
        // the dead ones.
        for w in 0..BITMAP_WORDS {
            (*header).old_bits[w] &= (*header).mark_bits[w];
            (*header).remember_bits[w] &= (*header).mark_bits[w];
        }
        let range = self.slot_range();
        let size = self.class().slot_size();
        let (mut head, mut free, mut live, mut freed) = (std::ptr::null_mut::<FreeSlot>(), 0, 0, 0);
        for w in (0..range.end.div_ceil(64)).rev() {
            let bits = (*header).mark_bits[w];
            if bits == !0 {
                live += 64;
                continue;
            }
            for b in (0..64).rev() {
                let i = w * 64 + b;
                if !range.contains(&i) {
                    continue;
                }
                if bits & (1 << b) != 0 {
                    live += 1;
                    continue;
                }
                // Dead slots are read in descending order: ask for the one a few slots
                // further early (each read here is otherwise a cache miss).
                if i >= range.start + SWEEP_PREFETCH {
                    prefetch(self.base.add((i - SWEEP_PREFETCH) * size));
                }
                let s = self.base.add(i * size) as *mut FreeSlot;
                let obj = s as *mut RBasic;
                if (*obj).obj_type() != ObjType::Free {
                    dead.freeing(obj);
                    crate::object::finalize(obj);
                    (*s).flags = ObjType::Free as u32;
                    freed += 1;
                }
                (*s).next = head;
                head = s;
                free += 1;
            }
        }
        (*header).mark_bits = [0; BITMAP_WORDS];
        (*header).free_count = free as u32;
        (head, free, live, freed)
    }

    /// Slots marked by the last marking (before the page's sweep: its live objects).
    pub fn marked_count(&self) -> usize {
        // SAFETY: the header lies at the page base.
        unsafe { (*self.header()).mark_bits.iter().map(|w| w.count_ones() as usize).sum() }
    }

    /// Old objects that the last marking found alive (before the page's sweep, which
    /// forgets the dead ones).
    pub fn marked_old_count(&self) -> usize {
        let h = self.header();
        // SAFETY: the header lies at the page base.
        unsafe { (0..BITMAP_WORDS).map(|w| ((*h).old_bits[w] & (*h).mark_bits[w]).count_ones() as usize).sum() }
    }

    /// Whether slot `i`'s mark bit is set.
    #[inline]
    pub fn is_marked_slot(&self, i: usize) -> bool {
        // SAFETY: the header lies at the page base; i is below the bitmap's length.
        unsafe { (*self.header()).mark_bits[i / 64] & (1u64 << (i % 64)) != 0 }
    }

    /// Starts a minor collection on this page: its old objects count as marked.
    pub fn mark_old(&self) {
        // SAFETY: the header lies at the page base; the world is stopped.
        unsafe { (*self.header()).mark_bits = (*self.header()).old_bits };
    }

    /// Calls `f` with every remembered object of this page and clears their bits (a
    /// collection sets them again for the objects that stay remembered).
    pub fn take_remembered(&self, f: &mut dyn FnMut(Value)) {
        let h = self.header();
        let size = self.class().slot_size();
        for w in 0..BITMAP_WORDS {
            // SAFETY: the header lies at the page base; the world is stopped.
            let mut bits = unsafe { std::mem::replace(&mut (*h).remember_bits[w], 0) };
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                f(Value::from_ptr(self.base.wrapping_add(i * size) as *const RBasic));
            }
        }
    }

    /// Clears the remembered bits (a major collection rebuilds the set).
    pub fn clear_remembered(&self) {
        // SAFETY: the header lies at the page base; the world is stopped.
        unsafe { (*self.header()).remember_bits = [0; BITMAP_WORDS] };
    }

    /// Remembered objects on this page.
    pub fn remembered_count(&self) -> usize {
        // SAFETY: the header lies at the page base.
        unsafe { (*self.header()).remember_bits.iter().map(|w| w.count_ones() as usize).sum() }
    }

    /// Makes a page a sweep left without objects a page of `class` (possibly another
    /// class than before, so slots lie elsewhere): every slot is marked free and linked.
    /// Returns (head, count).
    pub fn reset(&self, class: SizeClass) -> (*mut FreeSlot, usize) {
        // SAFETY: the header lies at the page base; the page holds no object and no free
        // list into it is held, so its bits and slots may be rewritten.
        unsafe {
            (*self.header()).old_bits = [0; BITMAP_WORDS];
            (*self.header()).remember_bits = [0; BITMAP_WORDS];
            (*self.header()).mark_bits = [0; BITMAP_WORDS];
        }
        self.init(class);
        let mut head: *mut FreeSlot = std::ptr::null_mut();
        let range = self.slot_range();
        for i in range.clone().rev() {
            let s = self.slot(i);
            // SAFETY: s is a slot of this page.
            unsafe {
                (*s).flags = ObjType::Free as u32;
                (*s).next = head;
            }
            head = s;
        }
        // SAFETY: header lies at the page base.
        unsafe { (*self.header()).free_count = range.len() as u32 };
        (head, range.len())
    }

    /// Links every free slot into a list; returns (head, count).
    pub fn collect_free(&self) -> (*mut FreeSlot, usize) {
        let mut head: *mut FreeSlot = std::ptr::null_mut();
        let mut count = 0;
        for i in self.slot_range().rev() {
            let s = self.slot(i);
            // SAFETY: s is a slot of this page.
            unsafe {
                if (*s).flags & 0x1f == ObjType::Free as u32 {
                    (*s).next = head;
                    head = s;
                    count += 1;
                }
            }
        }
        // SAFETY: header lies at the page base.
        unsafe { (*self.header()).free_count = count as u32 };
        (head, count)
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: base..base+PAGE_SIZE is this page's part of a mapping made by
        // `map_aligned_pages`, no longer used; unmapping part of a mapping is allowed.
        unsafe { libc::munmap(self.base as *mut libc::c_void, PAGE_SIZE) };
    }
}

/// A fresh, zeroed, `PAGE_SIZE`-aligned mapping of `n` pages, or None. Mapped directly (one
/// page more, then trimmed to the alignment) rather than through the allocator: fresh
/// anonymous memory is already zero, whereas an aligned `alloc_zeroed` clears it again,
/// which cost a 64 KiB memset per page.
fn map_aligned_pages(n: usize) -> Option<usize> {
    let want = n.checked_mul(PAGE_SIZE)?;
    let len = want.checked_add(PAGE_SIZE)?;
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let aligned = (start + PAGE_SIZE - 1) & !(PAGE_SIZE - 1);
    let head = aligned - start;
    let tail = len - head - want;
    // SAFETY: both ranges lie inside the mapping just made and outside the aligned pages.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((aligned + want) as *mut libc::c_void, tail);
        }
    }
    Some(aligned)
}

/// How many slots ahead of the one it reads the sweep prefetches (far enough to cover a
/// memory access on a loaded machine: 6 left the sweep waiting on most dead slots).
const SWEEP_PREFETCH: usize = 24;

/// Starts loading the cache line at `p` (a hint; no effect on other architectures).
#[inline(always)]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The page base and slot index of an address inside a page in use (an index below the
/// first object slot or past the last when the address is not in an object slot).
///
/// # Safety
/// `addr` lies inside a page in use.
#[inline(always)]
pub unsafe fn slot_index(addr: usize) -> (usize, usize) {
    let base = addr & !(PAGE_SIZE - 1);
    let recip = (*(base as *const PageHeader)).recip;
    (base, (((addr - base) as u64 * recip) >> 32) as usize)
}

/// The slot at index `idx` of the page in use at `base`, if it is an object slot.
///
/// # Safety
/// `base` is the base of a page in use.
#[inline]
pub unsafe fn object_slot(base: usize, idx: usize) -> Option<*const RBasic> {
    let h = base as *const PageHeader;
    if idx < (*h).first_slot as usize || idx >= (*h).slot_count as usize {
        return None;
    }
    Some((base + idx * (*h).slot_size as usize) as *const RBasic)
}

/// The slot size of the object at `p`.
///
/// # Safety
/// `p` points into a page in use.
#[inline]
pub unsafe fn slot_size_of(p: *const RBasic) -> usize {
    (*((p as usize & !(PAGE_SIZE - 1)) as *const PageHeader)).slot_size as usize
}

/// Sets the mark bit of the object at `v`; returns true if it was already set.
///
/// # Safety
/// `v` must point to an object slot of a live page.
#[inline]
pub unsafe fn test_and_set_mark(v: Value) -> bool {
    test_and_set_mark_old(v).0
}

/// Sets the mark bit of the object at `v`; returns whether it was set already and whether
/// the object is old (its old bit, which agrees with its `FL_OLD` flag).
///
/// # Safety
/// `v` must point to an object slot of a live page.
#[inline]
pub unsafe fn test_and_set_mark_old(v: Value) -> (bool, bool) {
    let (base, idx) = slot_index(v.raw() as usize);
    let header = base as *mut PageHeader;
    let (w, bit) = (idx / 64, 1u64 << (idx % 64));
    let was = (*header).mark_bits[w] & bit != 0;
    (*header).mark_bits[w] |= bit;
    (was, (*header).old_bits[w] & bit != 0)
}

/// Makes the object at `v` old (it is marked from the start of every minor collection).
///
/// # Safety
/// `v` must point to a live object in a page in use.
#[inline]
pub unsafe fn set_old(v: Value) {
    let (base, idx) = slot_index(v.raw() as usize);
    (*(base as *mut PageHeader)).old_bits[idx / 64] |= 1u64 << (idx % 64);
}

/// Puts the (old) object at `v` into the remembered set.
///
/// # Safety
/// `v` must point to a live old object in a page in use.
#[inline(always)]
pub unsafe fn set_remembered(v: Value) {
    let (base, idx) = slot_index(v.raw() as usize);
    (*(base as *mut PageHeader)).remember_bits[idx / 64] |= 1u64 << (idx % 64);
}

/// Clears the mark bit of the object at `v`.
///
/// # Safety
/// `v` must point to an object slot of a live page.
#[inline]
pub unsafe fn clear_mark(v: Value) {
    let (base, idx) = slot_index(v.raw() as usize);
    let header = base as *mut PageHeader;
    (*header).mark_bits[idx / 64] &= !(1u64 << (idx % 64));
}

/// # Safety
/// `p` must point to an object slot of a live page.
#[inline]
pub unsafe fn is_marked(p: *const RBasic) -> bool {
    let (base, idx) = slot_index(p as usize);
    let header = base as *const PageHeader;
    (*header).mark_bits[idx / 64] & (1u64 << (idx % 64)) != 0
}
