//! The shared-memory allocator: per-process arenas of size-class pages, large blocks as runs
//! of pages, and reference counts kept as holder bits in each block's header.
//!
//! Invariants:
//! - Every block starts with a 16-byte `BlockHeader`. `holders` has bit `s` set while
//!   process slot `s` holds the block and bit 63 (`QUEUED`) while the ring does; 0 means
//!   free. Whoever clears the last bit frees the block; nobody sets a bit on a free block
//!   (only its arena's owner, when it allocates it).
//! - Small blocks (up to 16 KiB with their header) are carved from pages that belong to one
//!   process slot's arena; only that process, under its own `arena_lock` (uncontended but
//!   for reclaimers), allocates from them, formats blocks (`bump`) and keeps their free
//!   lists. Frees take no lock at all: other processes clear holder bits and bump the page's
//!   `freed_hint`, and the owner rebuilds the page's free list from the headers (`sweep`)
//!   when it runs out, so allocation never contends with the processes that free, and the
//!   allocator scales with the number of workers.
//! - Large blocks are runs of whole pages taken from the pool under the pool lock; their
//!   last holder frees them under the same lock, so "a large block nobody holds" under the
//!   pool lock only ever means one whose freer died (and `repair_pool` frees it).
//! - `link` is the free-list link while a small block is free, and the number of ring
//!   entries naming the block while it is allocated (changed under the queue lock).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::lock::Locked;
use super::segment::{Segment, FREED_RUNS, PAGE, PAGE_FREE, PAGE_LARGE, PAGE_ORPHAN};

/// Block sizes of the small classes, header included.
pub const CLASSES: [u32; 9] = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
pub const BLOCK_HEADER: usize = 16;
/// Pages of an arena's class list tried for freed blocks before a new page is taken.
const PAGES_TRIED: usize = 8;

#[repr(C)]
pub struct BlockHeader {
    pub holders: AtomicU64,
    /// Free: next free block (index + 1). Allocated: ring entries naming the block.
    pub link: AtomicU32,
    /// Free for the user of the block (share/move state).
    pub flags: AtomicU32,
}

/// The small class for a block of `len` bytes, header included.
fn class_for(len: usize) -> Option<usize> {
    CLASSES.iter().position(|&c| len <= c as usize)
}

fn per_page(class: usize) -> usize {
    PAGE / CLASSES[class] as usize
}

/// Heap statistics (`Segment::heap_stats`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct HeapStats {
    /// Blocks somebody holds.
    pub used_blocks: usize,
    /// Bytes of those blocks, headers included.
    pub used_bytes: usize,
    /// Pages in the pool.
    pub free_pages: usize,
    /// Pages of processes that are gone, still holding blocks others hold.
    pub orphan_pages: usize,
}

impl Segment {
    pub fn block(&self, off: usize) -> &BlockHeader {
        // SAFETY: `off` is a block offset in the heap (from `alloc` or a ring entry written
        // by an allocator); block headers are 16-byte aligned.
        unsafe { &*(self.at(off) as *const BlockHeader) }
    }

    pub fn block_holders(&self, off: usize) -> &AtomicU64 {
        &self.block(off).holders
    }

    /// Where the bytes of block `off` start.
    pub fn payload(&self, off: usize) -> *mut u8 {
        self.at(off + BLOCK_HEADER)
    }

    /// Whether `off` can be a block of this segment (for offsets read from shared memory).
    pub fn valid_block(&self, off: usize) -> bool {
        let heap = self.header().heap_off as usize;
        if off < heap || off >= heap + self.heap_len() || off % BLOCK_HEADER != 0 {
            return false;
        }
        let p = self.page_of(off);
        let info = self.page(p);
        match info.owner.load(Ordering::Acquire) {
            PAGE_FREE => false,
            PAGE_LARGE => off == self.page_offset(p) && info.class_or_run.load(Ordering::Relaxed) != 0,
            _ => {
                let c = info.class_or_run.load(Ordering::Relaxed) as usize;
                c < CLASSES.len() && (off - self.page_offset(p)) % CLASSES[c] as usize == 0
            }
        }
    }

    /// Bytes block `off` can hold after its header.
    pub fn block_capacity(&self, off: usize) -> usize {
        let p = self.page_of(off);
        let info = self.page(p);
        let v = info.class_or_run.load(Ordering::Relaxed) as usize;
        if info.owner.load(Ordering::Acquire) == PAGE_LARGE {
            v.clamp(1, self.page_count() - p) * PAGE - BLOCK_HEADER
        } else {
            CLASSES[v.min(CLASSES.len() - 1)] as usize - BLOCK_HEADER
        }
    }

    /// Offset of block `b` of small page `p`.
    pub fn small_block(&self, p: usize, b: usize) -> usize {
        let c = self.page(p).class_or_run.load(Ordering::Relaxed) as usize;
        self.page_offset(p) + b * CLASSES[c.min(CLASSES.len() - 1)] as usize
    }

    /// Blocks formatted in small page `p` (`bump`, bounded by what the page can hold even if
    /// the segment was written by something else).
    pub fn formatted(&self, p: usize) -> usize {
        let info = self.page(p);
        let c = (info.class_or_run.load(Ordering::Relaxed) as usize).min(CLASSES.len() - 1);
        (info.bump.load(Ordering::Acquire) as usize).min(per_page(c))
    }

    /// Whether every formatted block of small page `p` is free.
    pub fn page_is_empty(&self, p: usize) -> bool {
        let bump = self.formatted(p);
        (0..bump).all(|b| self.block_holders(self.small_block(p, b)).load(Ordering::Acquire) == 0)
    }

    /// A block of at least `len` bytes held by slot `s` (only its bit set): its offset, or
    /// None when the heap has no room.
    pub fn alloc(&self, s: usize, len: usize) -> Option<usize> {
        let total = len.checked_add(BLOCK_HEADER)?;
        match class_for(total) {
            Some(c) => self.alloc_small(s, c),
            None => self.alloc_large(s, total).or_else(|| {
                // Pages this arena, then other arenas, no longer use go back to the pool.
                let slot = self.slot(s);
                if let Ok(how) = slot.arena_lock.lock() {
                    self.return_empty_pages(s);
                    slot.arena_lock.unlock(how);
                }
                self.alloc_large(s, total).or_else(|| {
                    self.steal_empty_pages(s);
                    self.alloc_large(s, total)
                })
            }),
        }
    }

    /// Gives the empty pages of other live arenas back to the pool, for those whose lock is
    /// free right now (a try-lock, so two processes doing this at once never deadlock);
    /// how many.
    fn steal_empty_pages(&self, me: usize) -> usize {
        let mut n = 0;
        for (s, slot) in self.header().procs.iter().enumerate() {
            if s == me || slot.owner.load(Ordering::Acquire) == 0 {
                continue;
            }
            if let Ok(Some(how)) = slot.arena_lock.try_lock() {
                if how == Locked::Recovered {
                    // Its process died in it: leave that to reclaim.
                    slot.arena_lock.unlock(how);
                    continue;
                }
                n += self.return_empty_pages(s);
                slot.arena_lock.unlock(how);
            }
        }
        n
    }

    fn alloc_small(&self, s: usize, c: usize) -> Option<usize> {
        let slot = self.slot(s);
        let how = slot.arena_lock.lock().ok()?;
        if how == Locked::Recovered {
            // Only this process takes its own arena's lock outside reclaim: a thread of ours
            // died in it. Every free list is rebuilt from the headers.
            for cl in 0..CLASSES.len() {
                self.each_arena_page(s, cl, |p| self.sweep(p));
            }
        }
        let r = self.alloc_small_locked(s, c);
        slot.arena_lock.unlock(how);
        r
    }

    fn each_arena_page(&self, s: usize, c: usize, mut f: impl FnMut(usize)) {
        let mut p = self.slot(s).class_head[c].load(Ordering::Relaxed) as usize;
        let mut guard = 0;
        while p != 0 && guard <= self.page_count() {
            f(p - 1);
            p = self.page(p - 1).next.load(Ordering::Relaxed) as usize;
            guard += 1;
        }
    }

    fn alloc_small_locked(&self, s: usize, c: usize) -> Option<usize> {
        let head = &self.slot(s).class_head[c];
        // 1. The first pages of the class list, sweeping those others freed blocks of.
        let mut prev = 0usize;
        let mut p = head.load(Ordering::Relaxed) as usize;
        let mut tried = 0;
        while p != 0 && tried < PAGES_TRIED {
            let info = self.page(p - 1);
            let mut got = self.take_block(p - 1, s, c);
            if got.is_none() && info.freed_hint.load(Ordering::Acquire) > 0 {
                self.sweep(p - 1);
                got = self.take_block(p - 1, s, c);
            }
            if let Some(off) = got {
                self.move_to_front(s, c, prev, p);
                return Some(off);
            }
            prev = p;
            p = info.next.load(Ordering::Relaxed) as usize;
            tried += 1;
        }
        // 2. A fresh page from the pool.
        if let Some(np) = self.take_page(s, c) {
            return self.take_block(np, s, c);
        }
        // 3. Every page of the class, swept; then pages of other classes given back.
        for round in 0..2 {
            let mut prev = 0usize;
            let mut p = head.load(Ordering::Relaxed) as usize;
            let mut guard = 0;
            while p != 0 && guard <= self.page_count() {
                self.sweep(p - 1);
                if let Some(off) = self.take_block(p - 1, s, c) {
                    self.move_to_front(s, c, prev, p);
                    return Some(off);
                }
                prev = p;
                p = self.page(p - 1).next.load(Ordering::Relaxed) as usize;
                guard += 1;
            }
            if round == 0 && self.return_empty_pages(s) + self.steal_empty_pages(s) > 0 {
                if let Some(np) = self.take_page(s, c) {
                    return self.take_block(np, s, c);
                }
            }
        }
        None
    }

    /// Moves page `p` (index + 1, after `prev`) to the front of slot `s`'s class list.
    fn move_to_front(&self, s: usize, c: usize, prev: usize, p: usize) {
        if prev == 0 {
            return;
        }
        let head = &self.slot(s).class_head[c];
        let next = self.page(p - 1).next.load(Ordering::Relaxed);
        self.page(prev - 1).next.store(next, Ordering::Relaxed);
        self.page(p - 1).next.store(head.load(Ordering::Relaxed), Ordering::Relaxed);
        head.store(p as u32, Ordering::Relaxed);
    }

    /// A block of small page `p` (arena lock held): from its free list, else a new one.
    fn take_block(&self, p: usize, s: usize, c: usize) -> Option<usize> {
        let info = self.page(p);
        let mut fh = info.free_head.load(Ordering::Relaxed) as usize;
        if fh > per_page(c) {
            // Not a link this allocator wrote: drop the list (the next sweep rebuilds it).
            info.free_head.store(0, Ordering::Relaxed);
            fh = 0;
        }
        let off = if fh != 0 {
            let off = self.page_offset(p) + (fh - 1) * CLASSES[c] as usize;
            let b = self.block(off);
            info.free_head.store(b.link.load(Ordering::Relaxed), Ordering::Relaxed);
            off
        } else {
            let bump = info.bump.load(Ordering::Relaxed) as usize;
            if bump >= per_page(c) {
                return None;
            }
            let off = self.page_offset(p) + bump * CLASSES[c] as usize;
            // Raw memory (a fresh page or one another class used): format the header before
            // `bump` makes it visible to scans.
            self.block(off).holders.store(0, Ordering::Relaxed);
            info.bump.store(bump as u32 + 1, Ordering::Release);
            off
        };
        let b = self.block(off);
        b.link.store(0, Ordering::Relaxed);
        b.flags.store(0, Ordering::Relaxed);
        b.holders.store(1 << s, Ordering::Release);
        Some(off)
    }

    /// Rebuilds small page `p`'s free list from its headers (arena lock held).
    fn sweep(&self, p: usize) {
        let info = self.page(p);
        info.freed_hint.store(0, Ordering::Release);
        let c = (info.class_or_run.load(Ordering::Relaxed) as usize).min(CLASSES.len() - 1);
        let mut head = 0u32;
        for b in (0..self.formatted(p)).rev() {
            let off = self.page_offset(p) + b * CLASSES[c] as usize;
            let blk = self.block(off);
            if blk.holders.load(Ordering::Acquire) == 0 {
                blk.link.store(head, Ordering::Relaxed);
                head = b as u32 + 1;
            }
        }
        info.free_head.store(head, Ordering::Relaxed);
    }

    /// Gives slot `s`'s pages whose blocks are all free back to the pool (arena lock held);
    /// how many.
    fn return_empty_pages(&self, s: usize) -> usize {
        let h = self.header();
        let Ok(pool) = h.pool.lock.lock() else { return 0 };
        if pool == Locked::Recovered {
            self.repair_pool();
        }
        let mut n = 0;
        for c in 0..CLASSES.len() {
            let head = &self.slot(s).class_head[c];
            let mut prev = 0usize;
            let mut p = head.load(Ordering::Relaxed) as usize;
            let mut guard = 0;
            while p != 0 && guard <= self.page_count() {
                let next = self.page(p - 1).next.load(Ordering::Relaxed);
                if self.page_is_empty(p - 1) {
                    if prev == 0 {
                        head.store(next, Ordering::Relaxed);
                    } else {
                        self.page(prev - 1).next.store(next, Ordering::Relaxed);
                    }
                    self.free_run(p - 1, 1);
                    n += 1;
                } else {
                    prev = p;
                }
                p = next as usize;
                guard += 1;
            }
        }
        h.pool.lock.unlock(pool);
        n
    }

    /// Takes a page from the pool for slot `s`'s class `c` list (arena lock held): its index.
    fn take_page(&self, s: usize, c: usize) -> Option<usize> {
        let h = self.header();
        let how = h.pool.lock.lock().ok()?;
        if how == Locked::Recovered {
            self.repair_pool();
        }
        let found = self.find_run(1);
        if let Some(p) = found {
            let info = self.page(p);
            info.class_or_run.store(c as u32, Ordering::Relaxed);
            info.bump.store(0, Ordering::Relaxed);
            info.free_head.store(0, Ordering::Relaxed);
            info.freed_hint.store(0, Ordering::Relaxed);
            let head = &self.slot(s).class_head[c];
            info.next.store(head.load(Ordering::Relaxed), Ordering::Relaxed);
            info.owner.store(s as u32 + 1, Ordering::Release);
            head.store(p as u32 + 1, Ordering::Relaxed);
            h.pool.free_pages.fetch_sub(1, Ordering::Relaxed);
        }
        h.pool.lock.unlock(how);
        found
    }

    /// The first run of `n` free pages (pool lock held), collecting empty orphan pages
    /// when there is none. A failure costs one scan until a page is freed (`no_run`).
    fn find_run(&self, n: usize) -> Option<usize> {
        let pool = &self.header().pool;
        let count = self.page_count();
        for round in 0..2 {
            let known_absent = matches!(pool.no_run.load(Ordering::Relaxed) as usize, m if m != 0 && n >= m);
            if pool.free_pages.load(Ordering::Relaxed) as usize >= n && !known_absent {
                let hint = (pool.hint.load(Ordering::Relaxed) as usize).min(count);
                // From the hint to the end, then from the start.
                for (from, to) in [(hint, count), (0, (hint + n).min(count))] {
                    let mut run = 0;
                    let mut p = from;
                    while p < to {
                        let info = self.page(p);
                        match info.owner.load(Ordering::Relaxed) {
                            PAGE_FREE => {
                                run += 1;
                                if run == n {
                                    let first = p + 1 - n;
                                    pool.hint.store((first + n) as u32, Ordering::Relaxed);
                                    return Some(first);
                                }
                                p += 1;
                            }
                            owner => {
                                run = 0;
                                // A large block's head: its run is taken as a whole.
                                let len = info.class_or_run.load(Ordering::Relaxed) as usize;
                                p += if owner == PAGE_LARGE && len > 0 { len } else { 1 };
                            }
                        }
                    }
                }
                pool.no_run.store(n as u32, Ordering::Relaxed);
            }
            if round == 0 && self.collect_orphans() == 0 {
                break;
            }
        }
        None
    }

    /// Returns orphan pages whose blocks are all free to the pool (pool lock held).
    fn collect_orphans(&self) -> usize {
        let pool = &self.header().pool;
        if pool.orphans.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let (mut n, mut left) = (0, 0);
        for p in 0..self.page_count() {
            if self.page(p).owner.load(Ordering::Relaxed) == PAGE_ORPHAN {
                if self.page_is_empty(p) {
                    self.free_run(p, 1);
                    n += 1;
                } else {
                    left += 1;
                }
            }
        }
        pool.orphans.store(left, Ordering::Relaxed);
        n
    }

    fn alloc_large(&self, s: usize, total: usize) -> Option<usize> {
        let n = total.div_ceil(PAGE);
        if n > self.page_count() {
            return None;
        }
        let h = self.header();
        let how = h.pool.lock.lock().ok()?;
        if how == Locked::Recovered {
            self.repair_pool();
        }
        let found = self.own_freed_run(s, n).or_else(|| self.find_run(n));
        if let Some(p) = found {
            // Continuations first, the header, then the head: a holder that dies half-way
            // leaves pages `repair_pool` recognises as free.
            for q in p + 1..p + n {
                self.page(q).class_or_run.store(0, Ordering::Relaxed);
                self.page(q).owner.store(PAGE_LARGE, Ordering::Relaxed);
            }
            let off = self.page_offset(p);
            let b = self.block(off);
            b.link.store(0, Ordering::Relaxed);
            b.flags.store(0, Ordering::Relaxed);
            b.holders.store(1 << s, Ordering::Release);
            self.page(p).class_or_run.store(n as u32, Ordering::Relaxed);
            self.page(p).writer.store(s as u32 + 1, Ordering::Relaxed);
            self.page(p).owner.store(PAGE_LARGE, Ordering::Release);
            h.pool.free_pages.fetch_sub(n as u32, Ordering::Relaxed);
        }
        h.pool.lock.unlock(how);
        // Before the block's first write (its header's page aside): a run other processes
        // wrote last is not in this process's page tables (a forked worker inherits none of
        // a shared mapping's), and each write fault maps one page, each read fault up to 16.
        // Outside the pool lock, which the other writers wait for.
        found.map(|p| {
            let off = self.page_offset(p);
            self.map.touch(off, n * PAGE);
            off
        })
    }

    /// One of the runs of large blocks slot `s` wrote and that were freed since, if it is
    /// still free and has `n` pages (pool lock held). A forked process does not inherit a
    /// shared mapping's page tables: writing into pages another process wrote last faults
    /// each of them in, and workers whose replies fill the heap, taking whatever run was
    /// freed first, faulted on nearly every page they wrote (11 faults per 44 KB reply).
    fn own_freed_run(&self, s: usize, n: usize) -> Option<usize> {
        let count = self.page_count();
        for r in self.slot(s).freed_runs.iter() {
            let Some(p) = (r.load(Ordering::Relaxed) as usize).checked_sub(1) else { continue };
            if p + n <= count && (p..p + n).all(|q| self.page(q).owner.load(Ordering::Relaxed) == PAGE_FREE) {
                r.store(0, Ordering::Relaxed);
                return Some(p);
            }
        }
        None
    }

    /// Remembers freed run `p` of a large block for the slot that wrote it (pool lock held).
    fn remember_freed_run(&self, p: usize) {
        let writer = self.page(p).writer.load(Ordering::Relaxed) as usize;
        if let Some(slot) = writer.checked_sub(1).and_then(|w| self.header().procs.get(w)) {
            let i = slot.freed_next.load(Ordering::Relaxed) as usize % FREED_RUNS;
            slot.freed_runs[i].store(p as u32 + 1, Ordering::Relaxed);
            slot.freed_next.store((i + 1) as u32, Ordering::Relaxed);
        }
    }

    fn is_large(&self, off: usize) -> bool {
        self.page(self.page_of(off)).owner.load(Ordering::Acquire) == PAGE_LARGE
    }

    /// Clears `bits` from block `off`'s holders; frees it if they were the last. Returns
    /// whether this call freed it.
    pub fn release(&self, off: usize, bits: u64) -> bool {
        if self.is_large(off) {
            let h = self.header();
            let Ok(how) = h.pool.lock.lock() else { return false };
            if how == Locked::Recovered {
                self.repair_pool();
            }
            let writer = self.page(self.page_of(off)).writer.load(Ordering::Relaxed) as usize;
            let freed = self.clear_large_locked(off, bits);
            h.pool.lock.unlock(how);
            if freed {
                self.wake_one_sender(writer.checked_sub(1));
            }
            freed
        } else {
            let freed = self.clear_small(off, bits);
            if freed {
                self.wake_senders();
            }
            freed
        }
    }

    /// Clears `bits` of small block `off` (no lock): whether it became free.
    pub fn clear_small(&self, off: usize, bits: u64) -> bool {
        let prior = self.block_holders(off).fetch_and(!bits, Ordering::AcqRel);
        let freed = prior & bits != 0 && prior & !bits == 0;
        if freed {
            self.page(self.page_of(off)).freed_hint.fetch_add(1, Ordering::Release);
        }
        freed
    }

    /// Clears `bits` of large block `off` (pool lock held), returning its pages to the pool
    /// if they were the last: whether it became free.
    pub fn clear_large_locked(&self, off: usize, bits: u64) -> bool {
        let prior = self.block_holders(off).fetch_and(!bits, Ordering::AcqRel);
        let freed = prior & bits != 0 && prior & !bits == 0;
        if freed {
            let p = self.page_of(off);
            let run = self.page(p).class_or_run.load(Ordering::Relaxed) as usize;
            self.free_run(p, run.clamp(1, self.page_count() - p));
            self.remember_freed_run(p);
        }
        freed
    }

    /// What the heap holds now (a scan of the page table and block headers).
    pub fn heap_stats(&self) -> HeapStats {
        let mut st = HeapStats::default();
        let n = self.page_count();
        let mut p = 0;
        while p < n {
            let info = self.page(p);
            match info.owner.load(Ordering::Acquire) {
                PAGE_FREE => st.free_pages += 1,
                PAGE_LARGE => {
                    let run = info.class_or_run.load(Ordering::Relaxed) as usize;
                    if run != 0 {
                        if self.block_holders(self.page_offset(p)).load(Ordering::Acquire) != 0 {
                            st.used_blocks += 1;
                            st.used_bytes += run * PAGE;
                        }
                        p += run;
                        continue;
                    }
                }
                owner => {
                    if owner == PAGE_ORPHAN {
                        st.orphan_pages += 1;
                    }
                    let c = info.class_or_run.load(Ordering::Relaxed) as usize;
                    for b in 0..self.formatted(p) {
                        if self.block_holders(self.small_block(p, b)).load(Ordering::Acquire) != 0 {
                            st.used_blocks += 1;
                            st.used_bytes += CLASSES[c.min(CLASSES.len() - 1)] as usize;
                        }
                    }
                }
            }
            p += 1;
        }
        st
    }

    /// Blocks somebody holds.
    pub fn used_blocks(&self) -> usize {
        self.heap_stats().used_blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(cap: usize) -> Segment {
        Segment::anonymous(cap, None).unwrap()
    }

    #[test]
    fn blocks_of_every_size_are_disjoint_and_freed() {
        let seg = seg(8 << 20);
        let s = seg.attach().unwrap();
        let mut blocks = Vec::new();
        for (i, len) in [1usize, 40, 48, 100, 500, 1000, 4000, 8000, 16000, 20000, 100_000].iter().cycle().take(200).enumerate() {
            let off = seg.alloc(s, *len).unwrap();
            assert!(seg.valid_block(off));
            assert!(seg.block_capacity(off) >= *len);
            // SAFETY: the block holds `len` bytes.
            unsafe { std::ptr::write_bytes(seg.payload(off), i as u8, *len) };
            blocks.push((off, *len, i as u8));
        }
        for &(off, len, fill) in &blocks {
            // SAFETY: as above.
            let bytes = unsafe { std::slice::from_raw_parts(seg.payload(off), len) };
            assert!(bytes.iter().all(|&b| b == fill), "block at {off} was overwritten");
        }
        assert_eq!(seg.used_blocks(), blocks.len());
        for &(off, ..) in &blocks {
            assert!(seg.release(off, 1 << s));
        }
        let st = seg.heap_stats();
        assert_eq!(st.used_blocks, 0);
        seg.detach(s);
        assert_eq!(seg.heap_stats().free_pages, seg.page_count());
    }

    #[test]
    fn freed_blocks_are_reused_not_leaked() {
        let seg = seg(1 << 20);
        let s = seg.attach().unwrap();
        // Far more than the heap holds, freed as it goes (another slot frees half of them).
        let other = seg.attach().unwrap();
        for i in 0..50_000 {
            let len = [10, 200, 3000, 20_000][i % 4];
            let off = seg.alloc(s, len).expect("heap exhausted: freed blocks not reused");
            seg.block_holders(off).fetch_or(1 << other, Ordering::AcqRel);
            assert!(!seg.release(off, 1 << s));
            assert!(seg.release(off, 1 << other));
        }
        assert_eq!(seg.used_blocks(), 0);
    }

    #[test]
    fn a_freed_large_block_goes_back_to_the_slot_that_wrote_it() {
        let seg = seg(1 << 20);
        let (a, b) = (seg.attach().unwrap(), seg.attach().unwrap());
        let len = 2 * PAGE;
        let x = seg.alloc(a, len).unwrap();
        let y = seg.alloc(b, len).unwrap();
        assert!(x < y);
        assert!(seg.release(x, 1 << a));
        assert!(seg.release(y, 1 << b));
        // The lowest free run is the one `a` wrote: `b` takes its own instead.
        assert_eq!(seg.alloc(b, len), Some(y));
        assert_eq!(seg.alloc(a, len), Some(x));
    }

    #[test]
    fn exhaustion_is_reported_and_recovered_from() {
        let seg = seg(1 << 20);
        let s = seg.attach().unwrap();
        assert!(seg.alloc(s, 2 << 20).is_none());
        let mut held = Vec::new();
        while let Some(off) = seg.alloc(s, 1000) {
            held.push(off);
        }
        assert!(held.len() > 500);
        assert!(seg.alloc(s, 100_000).is_none());
        for off in held.drain(..) {
            seg.release(off, 1 << s);
        }
        // Pages of the 1 KiB class are given back for a large block.
        assert!(seg.alloc(s, 200_000).is_some());
    }

    #[test]
    fn a_failed_search_is_remembered_until_a_page_is_freed() {
        let seg = seg(1 << 20);
        let s = seg.attach().unwrap();
        let two = PAGE + PAGE / 2;
        let mut held = Vec::new();
        while let Some(off) = seg.alloc(s, two) {
            held.push(off);
        }
        // Every other two-page block freed: many free pages, no run of three.
        for off in held.iter().step_by(2) {
            assert!(seg.release(*off, 1 << s));
        }
        let three = 2 * PAGE + PAGE / 2;
        assert!(seg.header().pool.free_pages.load(Ordering::Relaxed) as usize >= 3);
        assert!(seg.alloc(s, three).is_none());
        assert_eq!(seg.header().pool.no_run.load(Ordering::Relaxed), 3);
        assert!(seg.alloc(s, 4 * PAGE).is_none(), "a longer run is known absent too");
        // A shorter run is still searched for, and found; taking it frees nothing.
        seg.alloc(s, two).expect("a two-page run is free");
        assert_eq!(seg.header().pool.no_run.load(Ordering::Relaxed), 3);
        // Freeing a block between two free runs (one of them, at least, still free) makes
        // a run of three or more: searched for again, and found.
        assert!(seg.release(held[1], 1 << s));
        assert_eq!(seg.header().pool.no_run.load(Ordering::Relaxed), 0);
        assert!(seg.alloc(s, three).is_some());
    }

    #[test]
    fn arenas_of_many_processes_allocate_concurrently() {
        let seg = seg(16 << 20);
        let mut pids = Vec::new();
        for w in 0..8 {
            // SAFETY: the children only use the segment and exit.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let s = seg.attach().unwrap();
                let mut ok = true;
                let mut held: Vec<(usize, u8)> = Vec::new();
                for i in 0..20_000usize {
                    let len = 16 + (i * 37 + w * 11) % 3000;
                    match seg.alloc(s, len) {
                        Some(off) => {
                            unsafe { *seg.payload(off) = (i % 251) as u8 };
                            held.push((off, (i % 251) as u8));
                        }
                        None => ok = false,
                    }
                    if held.len() > 50 {
                        for (off, tag) in held.drain(..25) {
                            ok &= unsafe { *seg.payload(off) } == tag;
                            seg.release(off, 1 << s);
                        }
                    }
                }
                for (off, _) in held {
                    seg.release(off, 1 << s);
                }
                seg.detach(s);
                unsafe { libc::_exit(if ok { 0 } else { 1 }) };
            }
            pids.push(pid);
        }
        for pid in pids {
            let mut status = 0;
            unsafe { libc::waitpid(pid, &mut status, 0) };
            assert_eq!(libc::WEXITSTATUS(status), 0);
        }
        assert_eq!(seg.used_blocks(), 0);
        assert_eq!(seg.attached(), 0);
    }
}
