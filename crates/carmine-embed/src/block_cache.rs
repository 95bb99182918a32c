//! libcarmine's allocator: the system's `malloc`, with the blocks a VM frees kept by that
//! VM for its own next allocations rather than by the thread that freed them.
//!
//! Why: glibc keeps the small chunks a thread frees in that thread's cache (tcache, up to
//! 7 per size) and serves each thread from an arena it picked once. A server's VM moves
//! between the worker threads of its process (Apache's event MPM: 25 per process), and
//! its collections run on whichever thread ran the request; so every thread's cache, and
//! every arena, ends up holding chunks of the VM's buffers, pinning pages among live data
//! that `malloc_trim` cannot give back. The process's memory then creeps up for tens of
//! thousands of requests, until every thread has had its share (docs/benchmarks.md,
//! "Session 28"). Kept by the VM, the blocks its runs free are what its next runs
//! allocate, whichever thread runs them, and glibc's per-thread state sees only misses.
//!
//! Invariants:
//! - Every block this allocator hands out with an alignment of at most 16 comes from
//!   `malloc` (or `realloc`), and every block it frees goes to `free`, or into a cache
//!   until then: a cached block is an ordinary malloc chunk that the cache owns, so any
//!   block may go into any VM's cache, and a block allocated by one VM may be freed by
//!   another, or by no VM, or after its VM closed. Larger alignments go to `System`, both
//!   ways, and are never cached.
//! - A block is filed by its real capacity (`malloc_usable_size`), under the largest class
//!   bound it covers (`class_floor`); an allocation of `n` bytes takes from the smallest
//!   class whose bound is at least `n` (`class_ceil`). So a cached block always fits.
//! - The allocator uses the cache current on the calling thread (`Current`, set by each
//!   entry into a VM, restored when it returns), and only while it holds the cache's
//!   `busy` flag: a thread that finds the flag taken (another thread of the same VM, a
//!   Ruby thread running beside the host's) uses `malloc`/`free` directly instead of
//!   waiting. Without a current cache this is `System`.
//! - A cache holds at most `CACHED_BYTES` (by class bound); the blocks freed beyond that
//!   go to `free`. `BlockCache::flush` (at `carmine_close`) frees them all;
//!   `BlockCache::release_pages`, after a collection made between runs, gives back the
//!   pages inside the larger ones, as `malloc_trim` does for free chunks.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, Ordering};

/// The largest block a cache keeps: larger buffers are rare in a request, and glibc maps
/// those of 128 KiB and more on their own, giving them back when freed.
const MAX_CACHED: usize = 32 << 10;
/// Bytes (by class bound) a VM keeps cached at most: about what a server's VM allocates
/// between two collections (servers/common/carmine_host.h: a collection once a run
/// leaves 256 KiB of new buffers, or at 1 MiB).
const CACHED_BYTES: usize = 1 << 20;
/// Classes of up to 1,016 bytes, one per glibc chunk size (16 bytes apart); then 8 per
/// doubling up to MAX_CACHED.
const SMALL_CLASSES: usize = 64;
const CLASSES: usize = SMALL_CLASSES + 8 * 5 + 1;
/// The classes `release_pages` skips: blocks of less than 4 KiB never contain a whole
/// page.
const KEEP_CLASSES: usize = SMALL_CLASSES + 16;

/// The capacity every block of class `k` has at least.
const fn class_bound(k: usize) -> usize {
    if k < SMALL_CLASSES {
        16 * k + 8
    } else {
        let j = k - SMALL_CLASSES;
        (1024 << (j / 8)) + (j % 8) * (128 << (j / 8))
    }
}

/// The smallest class whose blocks hold `n` bytes (n <= MAX_CACHED).
fn class_ceil(n: usize) -> usize {
    if n <= class_bound(SMALL_CLASSES - 1) {
        return ((n.saturating_sub(8) + 15) / 16).max(1);
    }
    if n <= 1024 {
        return SMALL_CLASSES;
    }
    let d = (usize::BITS - 1 - (n - 1).leading_zeros()) as usize - 10;
    let step = 128 << d;
    let m = (n - (1024 << d)).div_ceil(step);
    SMALL_CLASSES + 8 * d + m
}

/// The class a block of capacity `usable` is filed under, None when it is too large to
/// keep (or smaller than any class).
fn class_floor(usable: usize) -> Option<usize> {
    if usable < class_bound(1) {
        return None;
    }
    if usable < 1024 {
        return Some((usable - 8) / 16);
    }
    if usable > MAX_CACHED + MAX_CACHED / 8 {
        return None;
    }
    let d = ((usize::BITS - 1 - usable.leading_zeros()) as usize - 10).min(5);
    let m = ((usable - (1024 << d)) / (128 << d)).min(7);
    Some((SMALL_CLASSES + 8 * d + m).min(CLASSES - 1))
}

/// A free block in a cache: the next block of its class.
struct FreeBlock {
    next: *mut FreeBlock,
    /// Its whole pages were given back (`release_pages`) since it was cached.
    released: bool,
}

/// The blocks one VM freed, by class.
pub struct BlockCache {
    busy: AtomicBool,
    lists: UnsafeCell<Lists>,
}

struct Lists {
    heads: [*mut FreeBlock; CLASSES],
    bytes: usize,
}

// SAFETY: the lists are only touched by the thread that holds `busy`.
unsafe impl Sync for BlockCache {}
// SAFETY: the blocks are plain malloc chunks, freeable from any thread.
unsafe impl Send for BlockCache {}

impl BlockCache {
    pub const fn new() -> BlockCache {
        BlockCache { busy: AtomicBool::new(false), lists: UnsafeCell::new(Lists { heads: [std::ptr::null_mut(); CLASSES], bytes: 0 }) }
    }

    /// Runs `f` on the lists if no other thread is using them.
    #[inline]
    fn try_with<T>(&self, f: impl FnOnce(&mut Lists) -> T) -> Option<T> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        // SAFETY: `busy` is ours: no other reference to the lists exists until we clear it.
        let r = f(unsafe { &mut *self.lists.get() });
        self.busy.store(false, Ordering::Release);
        Some(r)
    }

    /// Gives back to the system the whole pages inside the cached blocks of the classes
    /// from `KEEP_CLASSES` on (after a collection between runs, when the host also calls
    /// `malloc_trim`): the blocks stay cached, where the VM's next runs find them, and
    /// their pages are mapped again, zeroed, when written. Between collections the VM's
    /// memory grows by what its runs allocate and drops back after each, as with
    /// `malloc` alone; keeping the reused blocks resident instead made a server's RSS no
    /// flatter, only larger (docs/benchmarks.md, "Session 28").
    pub fn release_pages(&self) {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let _ = self.try_with(|lists| {
            for k in KEEP_CLASSES..CLASSES {
                let mut b = lists.heads[k];
                while !b.is_null() {
                    // SAFETY: a cached block (see flush).
                    let block = unsafe { &mut *b };
                    if !block.released {
                        block.released = true;
                        let start = (b as usize + std::mem::size_of::<FreeBlock>()).next_multiple_of(page);
                        let end = (b as usize + usable_size(b.cast())) & !(page - 1);
                        if end > start {
                            // SAFETY: whole pages inside a block the cache owns, after its
                            // FreeBlock (malloc's own data lies before the block and after
                            // its usable size); nothing reads them before writing them.
                            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
                        }
                    }
                    b = block.next;
                }
            }
        });
    }

    /// Frees every cached block.
    pub fn flush(&self) {
        while self.busy.swap(true, Ordering::Acquire) {
            std::hint::spin_loop();
        }
        // SAFETY: `busy` is ours.
        let lists = unsafe { &mut *self.lists.get() };
        for head in lists.heads.iter_mut() {
            let mut b = std::mem::replace(head, std::ptr::null_mut());
            while !b.is_null() {
                // SAFETY: a cached block: a malloc chunk the cache owns, its first word
                // the link written when it was cached.
                unsafe {
                    let next = (*b).next;
                    libc::free(b.cast());
                    b = next;
                }
            }
        }
        lists.bytes = 0;
        self.busy.store(false, Ordering::Release);
    }
}

impl Default for BlockCache {
    fn default() -> Self {
        Self::new()
    }
}

impl Lists {
    fn pop(&mut self, k: usize) -> *mut u8 {
        let b = self.heads[k];
        if !b.is_null() {
            // SAFETY: a cached block (see flush).
            self.heads[k] = unsafe { (*b).next };
            self.bytes -= class_bound(k);
        }
        b.cast()
    }

    /// Caches `p` (capacity `usable`); false when it is not kept.
    fn push(&mut self, p: *mut u8, usable: usize) -> bool {
        let Some(k) = class_floor(usable) else { return false };
        if self.bytes + class_bound(k) > CACHED_BYTES {
            return false;
        }
        let b = p.cast::<FreeBlock>();
        // SAFETY: a freed malloc chunk of at least 24 bytes, 16-aligned: ours now.
        unsafe { b.write(FreeBlock { next: self.heads[k], released: false }) };
        self.heads[k] = b;
        self.bytes += class_bound(k);
        true
    }
}

thread_local! {
    /// The cache of the VM this thread is inside (null: none).
    static CURRENT: Cell<*const BlockCache> = const { Cell::new(std::ptr::null()) };
}

/// Makes a VM's cache the calling thread's until dropped (then the previous one again).
pub struct Current {
    previous: *const BlockCache,
}

impl Current {
    #[inline]
    pub fn enter(cache: &BlockCache) -> Current {
        Current { previous: CURRENT.with(|c| c.replace(cache)) }
    }
}

impl Drop for Current {
    #[inline]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

#[inline]
fn current() -> Option<&'static BlockCache> {
    // SAFETY: a cache is current only while its VM is entered, and a VM's cache outlives
    // every entry into it (carmine_close needs the VM free of callers).
    CURRENT.with(|c| unsafe { c.get().as_ref() })
}

#[inline]
fn usable_size(p: *mut u8) -> usize {
    // SAFETY: p is a live block from malloc.
    unsafe { libc::malloc_usable_size(p.cast()) }
}

pub struct VmAllocator;

// SAFETY: every block comes from malloc (or System for large alignments) and is returned
// to free (or System), or kept in a cache meanwhile; see the module's invariants.
unsafe impl GlobalAlloc for VmAllocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() > 16 {
            return System.alloc(layout);
        }
        let n = layout.size();
        if n <= MAX_CACHED {
            if let Some(cache) = current() {
                let k = class_ceil(n);
                if let Some(p) = cache.try_with(|l| l.pop(k)) {
                    if !p.is_null() {
                        return p;
                    }
                    // Made to its class's size, so that it is filed there when freed.
                    return libc::malloc(class_bound(k)).cast();
                }
            }
        }
        libc::malloc(n).cast()
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() > 16 || layout.size() > MAX_CACHED || current().is_none() {
            return if layout.align() > 16 { System.alloc_zeroed(layout) } else { libc::calloc(1, layout.size()).cast() };
        }
        let p = self.alloc(layout);
        if !p.is_null() {
            std::ptr::write_bytes(p, 0, layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        if layout.align() > 16 {
            return System.dealloc(p, layout);
        }
        if let Some(cache) = current() {
            let usable = usable_size(p);
            if cache.try_with(|l| l.push(p, usable)) == Some(true) {
                return;
            }
        }
        libc::free(p.cast());
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() > 16 {
            return System.realloc(p, layout, new_size);
        }
        if current().is_none() {
            return libc::realloc(p.cast(), new_size).cast();
        }
        let usable = usable_size(p);
        if new_size <= usable && new_size >= usable / 2 {
            return p;
        }
        if usable > MAX_CACHED && new_size > MAX_CACHED {
            return libc::realloc(p.cast(), new_size).cast();
        }
        // SAFETY: the caller's new size with the block's alignment is a valid layout.
        let q = self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(p, q, layout.size().min(new_size));
            self.dealloc(p, layout);
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_are_consistent() {
        for k in 1..CLASSES {
            assert!(class_bound(k) > class_bound(k - 1), "class {k}");
            assert_eq!(class_ceil(class_bound(k)), k, "ceil of bound {k}");
            assert_eq!(class_floor(class_bound(k)), Some(k), "floor of bound {k}");
        }
        assert_eq!(class_bound(CLASSES - 1), MAX_CACHED);
        assert_eq!(class_bound(KEEP_CLASSES), 4096);
        for n in 1..=MAX_CACHED {
            let k = class_ceil(n);
            assert!(class_bound(k) >= n && (k == 0 || class_bound(k - 1) < n || k == 1), "ceil {n}");
            // A block made for class k (malloc of its bound) is filed under k.
            assert_eq!(class_floor(class_bound(k)), Some(k));
        }
        for u in 24..=MAX_CACHED + MAX_CACHED / 8 {
            let k = class_floor(u).unwrap();
            assert!(class_bound(k) <= u, "floor {u}");
            assert!(k == CLASSES - 1 || class_bound(k + 1) > u, "floor {u} not the largest");
        }
    }

    #[test]
    fn blocks_freed_in_a_vm_come_back_in_it() {
        let cache = BlockCache::new();
        let a;
        {
            let _c = Current::enter(&cache);
            let v: Vec<u8> = Vec::with_capacity(1000);
            a = v.as_ptr() as usize;
            drop(v);
            let w: Vec<u8> = Vec::with_capacity(990);
            assert_eq!(w.as_ptr() as usize, a, "the block just freed is reused");
            let big: Vec<u64> = Vec::with_capacity(1000);
            drop(big);
            let again: Vec<u64> = Vec::with_capacity(1000);
            drop(again);
        }
        {
            let _c = Current::enter(&cache);
            let v: Vec<u8> = vec![7; 20_000];
            let at = v.as_ptr();
            drop(v);
            cache.release_pages();
            // SAFETY: the block is cached (the cache owns it, nothing else uses it); its
            // page was given back, so it reads as zero.
            assert_eq!(unsafe { *at.add(12_000) }, 0, "released");
            let mut v: Vec<u8> = Vec::with_capacity(20_000);
            assert_eq!(v.as_ptr(), at);
            v.resize(20_000, 1);
            assert!(v.iter().all(|&b| b == 1));
        }
        cache.flush();
        // SAFETY: the cache was flushed: its lists are empty.
        assert!(unsafe { (*cache.lists.get()).heads.iter().all(|h| h.is_null()) });
    }
}
