//! Heap pages: fixed-size slots in 64 KiB-aligned blocks.
//!
//! Invariants:
//! - A page is `PAGE_SIZE` bytes aligned to `PAGE_SIZE`, so the page of any interior
//!   pointer is `addr & !(PAGE_SIZE - 1)`.
//! - The first `HEADER_SLOTS` slots hold the `PageHeader` (mark bitmap); object slots
//!   follow. A slot is free iff its type tag is `ObjType::Free`; free slots link through
//!   their `klass` word.
//! - Mark bits are only meaningful during a collection and are all clear outside one.

use crate::object::{ObjType, RBasic};
use crate::value::Value;

pub const PAGE_SIZE: usize = 64 * 1024;
pub const SLOT_SIZE: usize = 64;
pub const SLOTS_PER_PAGE: usize = PAGE_SIZE / SLOT_SIZE;
pub const HEADER_SLOTS: usize = 4;
pub const OBJECT_SLOTS: usize = SLOTS_PER_PAGE - HEADER_SLOTS;

// Zeroed memory must read as a free slot (see `Page::new_batch`).
const _: () = assert!(ObjType::Free as u32 == 0);

#[repr(C)]
pub struct PageHeader {
    pub mark_bits: [u64; SLOTS_PER_PAGE / 64],
    /// Free slots counted at the last sweep.
    pub free_count: u32,
}

const _: () = assert!(std::mem::size_of::<PageHeader>() <= HEADER_SLOTS * SLOT_SIZE);

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

    #[inline]
    pub fn slot(&self, i: usize) -> *mut FreeSlot {
        debug_assert!((HEADER_SLOTS..SLOTS_PER_PAGE).contains(&i));
        // SAFETY: i < SLOTS_PER_PAGE keeps the pointer inside the allocation.
        unsafe { self.base.add(i * SLOT_SIZE) as *mut FreeSlot }
    }

    /// Frees the page's unmarked objects (`finalize` runs for each first), links every
    /// free slot into a list and clears the marks. Returns (list head, free slots, live
    /// objects, objects freed). Marked slots are not read: a page full of survivors costs
    /// a few bitmap words.
    ///
    /// # Safety
    /// The world is stopped and marking is complete; no free list into this page is held.
    pub unsafe fn sweep(&self, finalize: &mut dyn FnMut(*mut RBasic)) -> (*mut FreeSlot, usize, usize, usize) {
        let header = self.header();
        let (mut head, mut free, mut live, mut freed) = (std::ptr::null_mut::<FreeSlot>(), 0, 0, 0);
        for w in (0..SLOTS_PER_PAGE / 64).rev() {
            let bits = (*header).mark_bits[w];
            if bits == !0 {
                live += 64;
                continue;
            }
            for b in (0..64).rev() {
                let i = w * 64 + b;
                if i < HEADER_SLOTS {
                    continue;
                }
                if bits & (1 << b) != 0 {
                    live += 1;
                    continue;
                }
                let s = self.slot(i);
                let obj = s as *mut RBasic;
                if (*obj).obj_type() != ObjType::Free {
                    finalize(obj);
                    crate::object::finalize(obj);
                    (*s).flags = ObjType::Free as u32;
                    freed += 1;
                }
                (*s).next = head;
                head = s;
                free += 1;
            }
        }
        (*header).mark_bits = [0; SLOTS_PER_PAGE / 64];
        (*header).free_count = free as u32;
        (head, free, live, freed)
    }

    /// Links every free slot into a list; returns (head, count).
    pub fn collect_free(&self) -> (*mut FreeSlot, usize) {
        let mut head: *mut FreeSlot = std::ptr::null_mut();
        let mut count = 0;
        for i in (HEADER_SLOTS..SLOTS_PER_PAGE).rev() {
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

/// The page base and slot index of an address inside a page, if it falls on an object slot.
#[inline]
pub fn slot_index(addr: usize) -> (usize, usize) {
    let base = addr & !(PAGE_SIZE - 1);
    (base, (addr - base) / SLOT_SIZE)
}

/// Sets the mark bit of the object at `v`; returns true if it was already set.
///
/// # Safety
/// `v` must point to an object slot of a live page.
#[inline]
pub unsafe fn test_and_set_mark(v: Value) -> bool {
    let (base, idx) = slot_index(v.raw() as usize);
    let header = base as *mut PageHeader;
    let word = &mut (*header).mark_bits[idx / 64];
    let bit = 1u64 << (idx % 64);
    let was = *word & bit != 0;
    *word |= bit;
    was
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
