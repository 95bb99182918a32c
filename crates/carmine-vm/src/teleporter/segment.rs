//! The layout of a tunnel's shared-memory segment, the process slots that use it, the page
//! pool, and the recovery of what dead processes left behind.
//!
//! ```text
//! offset 0      Header: magic, geometry, closed flag, queue state (lock, head, tail,
//!               pending block), futex words, pool state (lock), recovery lock,
//!               63 process slots (identity, arena lock, per-class page lists)
//! ring_off      ring: `ring_slots` entries of 64 bytes (queue.rs)
//! pages_off     page table: one PageInfo (32 bytes) per heap page
//! heap_off      heap: `page_count` pages of PAGE bytes (alloc.rs)
//! ```
//!
//! Invariants:
//! - Only offsets from the segment's base are stored in it; every process maps it anywhere.
//! - A process slot's `owner` is the identity (pid + start time, `shm::process_identity`) of
//!   the process using it, or 0. A process takes a free slot with one compare-and-swap and
//!   gives it back when its tunnel is dropped; a slot whose process is gone (killed, or
//!   exited without dropping the tunnel) is reclaimed by any survivor (`reclaim_dead`).
//! - Block `holders` words have bit `s` set while process slot `s` holds the block, and bit
//!   63 (`QUEUED`) while the queue does. Clearing the last bit frees the block; a slot's bits
//!   are cleared by its process, or by the reclaimer once the process is dead, before the
//!   slot can be reused, so a bit never outlives its holder.
//! - Locks are taken in one order: recovery → queue → arena (a slot's) → pool. Whoever gets
//!   a lock whose holder died repairs what it protects before unlocking: the queue from its
//!   pending-block journal (queue.rs), the pool by recounting the page table, a dead slot's
//!   arena by reclaiming the whole slot.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::lock::{Locked, RobustMutex};
use super::shm::{self, Mapping, Opened};

/// "TELEPRT1" (and a layout version below it): the creator stores it last.
pub const MAGIC: u64 = 0x3154_5250_454c_4554;
pub const VERSION: u32 = 3;
/// Process slots per segment (bit 63 of a holders word is the queue's).
pub const MAX_PROCS: usize = 63;
/// The queue's bit in a block's holders word.
pub const QUEUED: u64 = 1 << 63;
/// Heap page size.
pub const PAGE: usize = 16 * 1024;
/// Bytes of one ring entry.
pub const RING_ENTRY: usize = 64;
/// How much of the ring a process maps in when it takes its slot (`populate_ring`): all of
/// it up to 65,536 entries (the ring of a tunnel of 256 MiB); the rest of a larger ring
/// faults in as it is used.
const POPULATE_RING: usize = 4 << 20;
/// The smallest segment accepted (header, a small ring and a few pages).
pub const MIN_CAPACITY: usize = 128 * 1024;
/// The largest segment accepted.
pub const MAX_CAPACITY: usize = 1 << 40;

/// `PageInfo::owner` of a page in the pool.
pub const PAGE_FREE: u32 = 0;
/// `PageInfo::owner` of a page of a large block (head or continuation).
pub const PAGE_LARGE: u32 = u32::MAX - 1;
/// `PageInfo::owner` of a page of small blocks whose arena's process is gone.
pub const PAGE_ORPHAN: u32 = u32::MAX - 2;
// Other values: slot + 1 of the arena that carves the page into small blocks.

#[repr(C, align(64))]
pub struct QueueState {
    pub lock: RobustMutex,
    /// Index of the next entry to receive (written under `lock`).
    pub head: AtomicU64,
    /// Index of the next entry to send (written under `lock`).
    pub tail: AtomicU64,
    /// Offset of the block whose holders word the lock holder is changing (0: none): the
    /// journal that lets a successor repair the block's counts if the holder dies.
    pub pending: AtomicU64,
    /// Bytes of the messages held in blocks that queued entries name (under `lock`; a
    /// successor of a dead holder recounts them): what senders have put ahead of the
    /// receivers (`queue::Segment::held_back`).
    pub queued_bytes: AtomicU64,
    /// The slot (+ 1) that received last (under `lock`; 0: nobody yet).
    pub receiver: AtomicU32,
}

#[repr(C, align(64))]
pub struct WaitWords {
    /// Bumped (and woken) when the queue gets an entry or closes.
    pub recv_seq: AtomicU32,
    pub recv_waiters: AtomicU32,
    /// Bumped (and woken) when an entry or heap memory is freed, or the queue closes
    /// (`wake_senders`, `wake_one_sender`).
    pub send_seq: AtomicU32,
    pub send_waiters: AtomicU32,
    /// Who sent last: `(slot + 1) << 32 | (cpu + 1)` of the process that committed the
    /// latest push and the CPU it ran on then (0: nobody yet). A hint for waiters, written
    /// without the lock (`queue::Segment::sender_shares_cpu`).
    pub sender: AtomicU64,
    /// Bumped (and the waiters woken) when a receive leaves the queue's blocks below half
    /// the flow limit, or the queue closes (`queue::Segment::wait_for_flow`).
    pub flow_seq: AtomicU32,
    pub flow_waiters: AtomicU32,
}

#[repr(C, align(64))]
pub struct PoolState {
    pub lock: RobustMutex,
    /// Pages whose owner is PAGE_FREE (under `lock`).
    pub free_pages: AtomicU32,
    /// Where the next search for free pages starts (under `lock`).
    pub hint: AtomicU32,
    /// Pages whose owner is PAGE_ORPHAN (under `lock`): a failed search looks for empty
    /// orphans only when there are some.
    pub orphans: AtomicU32,
    /// 0, or n when a search found no run of n free pages and nothing was freed since
    /// (under `lock`): searches for n pages or more fail at once until a page is freed.
    /// Without it, every blocked sender woken by one free scanned the whole page table
    /// again and again under the pool lock.
    pub no_run: AtomicU32,
}

#[repr(C, align(64))]
pub struct ProcSlot {
    /// Identity of the process using this slot, 0 when free.
    pub owner: AtomicU64,
    /// Held while the slot's arena is changed: by its process when it allocates, by a
    /// reclaimer once the process is dead.
    pub arena_lock: RobustMutex,
    /// Per size class, the first page (index + 1; 0: none) of the arena's list of pages of
    /// that class, linked through `PageInfo::next` (under `arena_lock`).
    pub class_head: [AtomicU32; super::alloc::CLASSES.len()],
    /// The latest runs of large blocks this slot wrote that were freed (page index + 1;
    /// 0: none), and where the next one goes (under the pool lock; hints, checked before
    /// use). The slot's next large block takes one of them if it is still free and long
    /// enough: its process has those pages mapped (`alloc::Segment::alloc_large`).
    pub freed_runs: [AtomicU32; FREED_RUNS],
    pub freed_next: AtomicU32,
}

/// Freed runs of large blocks remembered per slot (`ProcSlot::freed_runs`).
pub const FREED_RUNS: usize = 7;

#[repr(C, align(64))]
pub struct RecoveryState {
    pub lock: RobustMutex,
    /// Dead slots reclaimed over the segment's life (statistics).
    pub reclaimed: AtomicU64,
}

#[repr(C, align(64))]
pub struct Header {
    pub magic: AtomicU64,
    pub version: u32,
    pub ring_slots: u32,
    pub total_len: u64,
    pub ring_off: u64,
    pub pages_off: u64,
    pub heap_off: u64,
    pub page_count: u32,
    /// 1 once `Tunnel#close` ran.
    pub closed: AtomicU32,
    pub queue: QueueState,
    pub wait: WaitWords,
    pub pool: PoolState,
    pub recovery: RecoveryState,
    pub procs: [ProcSlot; MAX_PROCS],
}

/// One heap page's entry in the page table.
#[repr(C)]
pub struct PageInfo {
    /// PAGE_FREE, PAGE_LARGE, PAGE_ORPHAN or slot + 1 (changed under the pool lock).
    pub owner: AtomicU32,
    /// Small pages: the size class. Large heads: the run's length in pages. Large
    /// continuations: 0.
    pub class_or_run: AtomicU32,
    /// Small pages: blocks formatted so far (blocks at and past it are raw memory).
    pub bump: AtomicU32,
    /// Small pages: first free block (index + 1; 0: none) of the owner's free list.
    pub free_head: AtomicU32,
    /// Small pages: next page of the same class in the owner's list (index + 1).
    pub next: AtomicU32,
    /// Small pages: blocks freed since the owner last swept the page (a hint).
    pub freed_hint: AtomicU32,
    /// Large heads: the slot (+ 1) that allocated the run, kept after it is freed (a hint).
    pub writer: AtomicU32,
    pub _pad: u32,
}

const _: () = assert!(std::mem::size_of::<PageInfo>() == 32);
const _: () = assert!(std::mem::size_of::<Header>() < 16 * 1024);

/// The futex bit slot `s`'s senders wait with (`wait_for_room`, `wake_one_sender`); slots
/// 32 apart share one, and the one of them woken for the other's pages merely faults them.
pub fn slot_bit(s: usize) -> u32 {
    1 << (s % 32)
}

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The geometry of a segment of `capacity` bytes with `slots` ring entries (None: chosen from
/// the capacity): (ring_off, ring_slots, pages_off, page_count, heap_off, total).
pub fn geometry(capacity: usize, slots: Option<usize>) -> Option<(usize, usize, usize, usize, usize, usize)> {
    if !(MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
        return None;
    }
    let slots = match slots {
        Some(s) if (2..=1 << 20).contains(&s) => s.next_power_of_two(),
        Some(_) => return None,
        None => (capacity / 4096).clamp(64, 65536).next_power_of_two(),
    };
    let ring_off = round_up(std::mem::size_of::<Header>(), 4096);
    let pages_off = ring_off + slots * RING_ENTRY;
    let rest = capacity.checked_sub(pages_off)?;
    let mut page_count = rest / (PAGE + std::mem::size_of::<PageInfo>());
    loop {
        if page_count < 4 || page_count > u32::MAX as usize / 2 {
            return None;
        }
        let heap_off = round_up(pages_off + page_count * std::mem::size_of::<PageInfo>(), PAGE);
        let total = heap_off + page_count * PAGE;
        if total <= capacity {
            return Some((ring_off, slots, pages_off, page_count, heap_off, total));
        }
        page_count -= 1;
    }
}

/// Why a segment could not be made or opened.
#[derive(Debug)]
pub enum OpenError {
    Io(std::io::Error),
    /// The capacity or slot count is out of range.
    BadSize,
    /// The named segment is not a tunnel (or of another layout version), or its creator
    /// died before initialising it.
    NotATunnel,
    /// A process-shared lock could not be initialised (errno).
    Lock(i32),
}

/// A mapped segment.
pub struct Segment {
    pub(super) map: Mapping,
}

impl Segment {
    /// A new anonymous segment (shared with children forked later).
    pub fn anonymous(capacity: usize, slots: Option<usize>) -> Result<Segment, OpenError> {
        let g = geometry(capacity, slots).ok_or(OpenError::BadSize)?;
        let map = Mapping::anonymous(g.5).map_err(OpenError::Io)?;
        let seg = Segment { map };
        seg.initialise(g)?;
        Ok(seg)
    }

    /// The named segment `name`, created with `capacity` if it does not exist yet.
    pub fn named(name: &str, capacity: usize, slots: Option<usize>) -> Result<(Segment, Opened), OpenError> {
        let g = geometry(capacity, slots).ok_or(OpenError::BadSize)?;
        let (map, how) = Mapping::named(name, g.5).map_err(OpenError::Io)?;
        let seg = Segment { map };
        if how == Opened::Created {
            if let Err(e) = seg.initialise(g) {
                let _ = shm::unlink(name);
                return Err(e);
            }
            return Ok((seg, how));
        }
        // Wait (up to 2 s) for the creator to finish initialising.
        for _ in 0..4000 {
            if seg.map.len() >= std::mem::size_of::<Header>() && seg.header().magic.load(Ordering::Acquire) == MAGIC {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(500));
        }
        if seg.map.len() < std::mem::size_of::<Header>() || seg.header().magic.load(Ordering::Acquire) != MAGIC {
            return Err(OpenError::NotATunnel);
        }
        let h = seg.header();
        let (ring_off, pages_off, heap_off, pages, slots) = (h.ring_off as usize, h.pages_off as usize, h.heap_off as usize, h.page_count as usize, h.ring_slots as usize);
        let consistent = h.version == VERSION
            && h.total_len as usize == seg.map.len()
            && slots.is_power_of_two()
            && ring_off >= std::mem::size_of::<Header>()
            && pages_off == ring_off + slots * RING_ENTRY
            && heap_off >= pages_off + pages * std::mem::size_of::<PageInfo>()
            && heap_off % PAGE == 0
            && heap_off + pages * PAGE == seg.map.len();
        if !consistent {
            return Err(OpenError::NotATunnel);
        }
        Ok((seg, how))
    }

    fn initialise(&self, g: (usize, usize, usize, usize, usize, usize)) -> Result<(), OpenError> {
        let (ring_off, slots, pages_off, page_count, heap_off, total) = g;
        let base = self.map.base();
        // SAFETY: the mapping is fresh, zeroed and at least `total` bytes long; no other
        // process uses it before `magic` is stored (named openers wait for it, anonymous
        // segments are not yet shared).
        unsafe {
            let h = base as *mut Header;
            (*h).version = VERSION;
            (*h).ring_slots = slots as u32;
            (*h).total_len = total as u64;
            (*h).ring_off = ring_off as u64;
            (*h).pages_off = pages_off as u64;
            (*h).heap_off = heap_off as u64;
            (*h).page_count = page_count as u32;
            let mut locks: Vec<*mut RobustMutex> = vec![&mut (*h).queue.lock, &mut (*h).pool.lock, &mut (*h).recovery.lock];
            for s in (*h).procs.iter_mut() {
                locks.push(&mut s.arena_lock);
            }
            for l in locks {
                RobustMutex::init(l).map_err(|e| OpenError::Lock(e.0))?;
            }
            (*h).pool.free_pages.store(page_count as u32, Ordering::Relaxed);
            (*h).magic.store(MAGIC, Ordering::Release);
        }
        Ok(())
    }

    /// Another mapping of this segment in this process (for another VM: `handoff`).
    pub fn duplicate(&self) -> Result<Segment, OpenError> {
        Ok(Segment { map: self.map.duplicate().map_err(OpenError::Io)? })
    }

    pub fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a Header (checked or written at open) and lives as
        // long as `self`.
        unsafe { &*(self.map.base() as *const Header) }
    }

    pub fn base(&self) -> *mut u8 {
        self.map.base()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn page_count(&self) -> usize {
        self.header().page_count as usize
    }

    pub fn page(&self, p: usize) -> &PageInfo {
        debug_assert!(p < self.page_count());
        // SAFETY: the page table holds `page_count` entries at `pages_off` (checked at open).
        unsafe { &*(self.map.base().add(self.header().pages_off as usize) as *const PageInfo).add(p) }
    }

    /// Offset of heap page `p`.
    pub fn page_offset(&self, p: usize) -> usize {
        self.header().heap_off as usize + p * PAGE
    }

    /// The page holding heap offset `off`.
    pub fn page_of(&self, off: usize) -> usize {
        (off - self.header().heap_off as usize) / PAGE
    }

    /// Bytes the heap holds.
    pub fn heap_len(&self) -> usize {
        self.page_count() * PAGE
    }

    /// A pointer `off` bytes into the segment.
    pub fn at(&self, off: usize) -> *mut u8 {
        debug_assert!(off < self.map.len());
        // SAFETY: in bounds (callers pass offsets of the layout).
        unsafe { self.map.base().add(off) }
    }

    pub fn slot(&self, s: usize) -> &ProcSlot {
        &self.header().procs[s]
    }

    /// Takes a free process slot for this process (reclaiming dead processes' slots when none
    /// is free); None if all MAX_PROCS slots belong to live processes.
    pub fn attach(&self) -> Option<usize> {
        let me = shm::process_identity(shm::my_pid())?;
        for round in 0..2 {
            for (s, slot) in self.header().procs.iter().enumerate() {
                if slot.owner.load(Ordering::Relaxed) == 0 && slot.owner.compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                    self.populate_ring();
                    return Some(s);
                }
            }
            if round == 0 {
                self.reclaim_dead(None);
            }
        }
        None
    }

    /// Maps the ring's pages into this process (up to `POPULATE_RING` bytes of it) when it
    /// takes its slot. Every entry is written and read by the processes in turn, so in a
    /// fresh segment each page of the ring otherwise costs every process a page fault
    /// (microseconds here) in the middle of a transfer, one per 64 messages, until the
    /// ring has wrapped once; a shared mapping's page-table entries are not inherited
    /// across fork, so a child pays them again.
    fn populate_ring(&self) {
        let h = self.header();
        let len = (h.ring_slots as usize * RING_ENTRY).min(POPULATE_RING);
        self.map.populate(h.ring_off as usize, len);
    }

    /// Gives slot `s` (this process's) back: the blocks it holds are released and its pages
    /// handed to the pool or orphaned.
    pub fn detach(&self, s: usize) {
        self.reclaim_slot(s, self.slot(s).owner.load(Ordering::Acquire));
    }

    /// Reclaims the slots of processes that are gone (`except`: the caller's own slot, never
    /// checked). Returns how many were reclaimed.
    pub fn reclaim_dead(&self, except: Option<usize>) -> usize {
        let mut n = 0;
        for (s, slot) in self.header().procs.iter().enumerate() {
            let id = slot.owner.load(Ordering::Acquire);
            if id == 0 || Some(s) == except || shm::alive(id) {
                continue;
            }
            if self.reclaim_slot(s, id) {
                n += 1;
            }
        }
        n
    }

    /// Releases everything slot `s` holds if it still belongs to identity `id`: clears its
    /// bit from every block, orphans its pages, frees the slot. Idempotent, so a reclaimer
    /// that dies half-way leaves the work to the next one.
    fn reclaim_slot(&self, s: usize, id: u64) -> bool {
        let h = self.header();
        let Ok(rec) = h.recovery.lock.lock() else { return false };
        let slot = self.slot(s);
        if slot.owner.load(Ordering::Acquire) != id || id == 0 {
            h.recovery.lock.unlock(rec);
            return false;
        }
        let arena = slot.arena_lock.lock();
        let pool = h.pool.lock.lock();
        if let Ok(p) = pool {
            if p == Locked::Recovered {
                self.repair_pool();
            }
            let bit = 1u64 << s;
            let mut orphans = 0;
            for p in 0..self.page_count() {
                let info = self.page(p);
                match info.owner.load(Ordering::Acquire) {
                    PAGE_FREE => {}
                    PAGE_LARGE => {
                        if info.class_or_run.load(Ordering::Relaxed) != 0 {
                            self.clear_large_locked(self.page_offset(p), bit);
                        }
                    }
                    owner => {
                        for b in 0..self.formatted(p) {
                            self.clear_small(self.small_block(p, b), bit);
                        }
                        // The slot's pages, and orphans, go back to the pool once empty.
                        if owner == s as u32 + 1 || owner == PAGE_ORPHAN {
                            if self.page_is_empty(p) {
                                self.free_run(p, 1);
                            } else {
                                info.owner.store(PAGE_ORPHAN, Ordering::Release);
                                orphans += 1;
                            }
                        }
                    }
                }
            }
            // Every orphan page of the heap was seen by the loop above.
            h.pool.orphans.store(orphans, Ordering::Relaxed);
            h.pool.lock.unlock(p);
        }
        for c in slot.class_head.iter() {
            c.store(0, Ordering::Relaxed);
        }
        slot.owner.store(0, Ordering::Release);
        if let Ok(a) = arena {
            slot.arena_lock.unlock(a);
        }
        h.recovery.reclaimed.fetch_add(1, Ordering::Relaxed);
        h.recovery.lock.unlock(rec);
        // Memory may have been freed: let blocked senders retry.
        self.wake_senders();
        true
    }

    /// Bumps the senders' futex word and wakes every blocked sender (they re-check queue
    /// and heap): for room that only some of them can use (a small block serves its own
    /// arena's process only) or that may serve many (a dead process's memory).
    pub fn wake_senders(&self) {
        if self.bump_send_seq() {
            super::lock::futex_wake(&self.header().wait.send_seq, i32::MAX);
        }
    }

    /// Wakes one blocked sender: for room any sender can use and one message fills (a
    /// large block's pages back in the pool). Waking them all made every waiter (one per
    /// worker of a master/worker queue whose replies fill the heap) run, fail and sleep
    /// again for each reply received: a context switch each, taken from the receiver the
    /// workers wait for, so the throughput fell as workers were added. A woken sender that
    /// finds room left after its own wakes the next (`pass_room`).
    ///
    /// Slot `prefer` (the process that wrote the freed pages) is woken if it waits: it has
    /// those pages mapped, where any other process faults each of them in (a forked process
    /// does not inherit a shared mapping's page tables). Workers whose replies fill the heap
    /// otherwise each end up writing into pages the others wrote last: a fault per page
    /// written, 11 per 44 KB reply, which made the throughput fall as workers were added.
    pub fn wake_one_sender(&self, prefer: Option<usize>) {
        if self.bump_send_seq() {
            let seq = &self.header().wait.send_seq;
            if prefer.is_none_or(|s| super::lock::futex_wake_bits(seq, 1, slot_bit(s)) == 0) {
                super::lock::futex_wake(seq, 1);
            }
        }
    }

    /// When a sender waits for room: bumps the senders' futex word, so that one about to
    /// sleep on its old value does not, and returns true (a wake is then due).
    fn bump_send_seq(&self) -> bool {
        let w = &self.header().wait;
        if w.send_waiters.load(Ordering::SeqCst) == 0 {
            return false;
        }
        w.send_seq.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// After a send that had waited for room succeeded: wakes the next blocked sender when
    /// room is left (pages in the pool and a free ring slot), so a release that made room
    /// for several messages wakes as many senders, one after another.
    pub fn pass_room(&self) {
        let h = self.header();
        if h.wait.send_waiters.load(Ordering::SeqCst) > 0 && h.pool.free_pages.load(Ordering::Relaxed) > 0 && self.queued() < self.ring_slots() {
            self.wake_one_sender(None);
        }
    }

    /// After the pool lock's holder died (pool lock held): recounts free pages, frees runs of
    /// large blocks that lost their head and large blocks nobody holds.
    pub fn repair_pool(&self) {
        let n = self.page_count();
        let mut p = 0;
        while p < n {
            let info = self.page(p);
            if info.owner.load(Ordering::Acquire) == PAGE_LARGE {
                let run = info.class_or_run.load(Ordering::Relaxed) as usize;
                if run == 0 {
                    // A continuation without a head: its allocation died half-way.
                    info.owner.store(PAGE_FREE, Ordering::Release);
                    p += 1;
                    continue;
                }
                let run = run.min(n - p);
                if self.block_holders(self.page_offset(p)).load(Ordering::Acquire) == 0 {
                    self.free_run(p, run);
                }
                p += run;
                continue;
            }
            p += 1;
        }
        let count = |which: u32| (0..n).filter(|&p| self.page(p).owner.load(Ordering::Relaxed) == which).count() as u32;
        let pool = &self.header().pool;
        pool.free_pages.store(count(PAGE_FREE), Ordering::Relaxed);
        pool.orphans.store(count(PAGE_ORPHAN), Ordering::Relaxed);
        pool.no_run.store(0, Ordering::Relaxed);
    }

    /// Returns pages `p .. p + run` to the pool (pool lock held).
    pub fn free_run(&self, p: usize, run: usize) {
        for q in p..p + run {
            let info = self.page(q);
            info.class_or_run.store(0, Ordering::Relaxed);
            info.owner.store(PAGE_FREE, Ordering::Release);
        }
        let pool = &self.header().pool;
        pool.free_pages.fetch_add(run as u32, Ordering::Relaxed);
        pool.no_run.store(0, Ordering::Relaxed);
        if (p as u32) < pool.hint.load(Ordering::Relaxed) {
            pool.hint.store(p as u32, Ordering::Relaxed);
        }
    }

    /// Pages in the pool now (a hint: read without the pool lock).
    pub fn free_pages(&self) -> usize {
        self.header().pool.free_pages.load(Ordering::Relaxed) as usize
    }

    /// Processes attached now (slots in use).
    pub fn attached(&self) -> usize {
        self.header().procs.iter().filter(|s| s.owner.load(Ordering::Relaxed) != 0).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_fits_the_capacity() {
        for cap in [MIN_CAPACITY, 1 << 20, 32 << 20, (32 << 20) + 12345] {
            let (ring_off, slots, pages_off, pages, heap_off, total) = geometry(cap, None).unwrap();
            assert!(total <= cap, "{cap}: {total}");
            assert!(slots.is_power_of_two() && slots >= 64);
            assert_eq!(pages_off, ring_off + slots * RING_ENTRY);
            assert!(heap_off >= pages_off + pages * 32 && heap_off % PAGE == 0);
        }
        assert!(geometry(MIN_CAPACITY - 1, None).is_none());
        assert!(geometry(1 << 20, Some(0)).is_none());
    }

    #[test]
    fn a_slot_is_reclaimed_when_its_process_dies() {
        let seg = Segment::anonymous(1 << 20, None).unwrap();
        let mine = seg.attach().unwrap();
        // SAFETY: the child attaches and dies without detaching.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let s = seg.attach().unwrap();
            let ok = s != mine && seg.alloc(s, 100).is_some();
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(libc::WEXITSTATUS(status), 0);
        assert_eq!(seg.attached(), 2);
        assert_eq!(seg.used_blocks(), 1);
        assert_eq!(seg.reclaim_dead(Some(mine)), 1);
        assert_eq!(seg.attached(), 1);
        assert_eq!(seg.used_blocks(), 0);
        seg.detach(mine);
        assert_eq!(seg.attached(), 0);
    }
}
