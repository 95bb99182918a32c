//! The tunnel's queue: a bounded multi-producer multi-consumer ring of 64-byte entries in the
//! segment, under one robust lock, with futex waits for receivers and senders.
//!
//! Invariants:
//! - Entries `head .. tail` (mod `ring_slots`) are queued; `tail - head <= ring_slots`. Both
//!   counters change only under the queue lock, and each operation commits with its single
//!   store of `tail` (push) or `head` (pop): an entry written past `tail` by a sender that
//!   died is never seen.
//! - An entry either carries its message inline (up to `INLINE_MAX` bytes: immediates and
//!   small dumps need no heap block at all) or names a heap block (`KIND_BLOCK` set, the
//!   offset in the first 8 data bytes). While queued, such a block has the `QUEUED` bit and
//!   its `link` counts the entries naming it; a push sets the bit before committing, a pop
//!   gives the receiver its holder bit before clearing the queue's, so a queued or received
//!   block is never unheld.
//! - Before changing a block's holders under the lock, the holder records the block in
//!   `pending`; if it dies there, the next locker recounts that block's entries in the ring
//!   and fixes its `QUEUED` bit and count (`repair`).
//! - `closed` is set under the queue lock: no push commits after it; pops drain what is
//!   queued.
//! - Waiters announce themselves in `*_waiters` before re-checking and sleeping on the
//!   `*_seq` futex words; whoever makes progress possible bumps the word and wakes them,
//!   so no wake-up is lost (a waiter that died leaves its count behind: then wakes only
//!   cost a system call each).

use std::sync::atomic::{fence, Ordering};
use std::time::{Duration, Instant};

use super::lock::{futex_wait, futex_wait_bits, futex_wake, Locked};
use super::segment::{slot_bit, Segment, QUEUED, RING_ENTRY};

/// Bytes of a message an entry holds inline.
pub const INLINE_MAX: usize = RING_ENTRY - 8;
/// Kind bit of an entry that names a heap block.
pub const KIND_BLOCK: u32 = 1 << 31;
/// The longest a waiter spins (checking the ring) before it sleeps on the futex: long
/// enough to catch the reply of a peer running on another core that decodes and encodes
/// a message of a few thousand objects, short against a time slice. Callers adapt their
/// spin below it (`wait_for_entry`).
pub const SPIN: Duration = Duration::from_micros(150);
/// The smallest flow limit (`Segment::flow_limit`): a few messages of a page or more.
const FLOW_MIN: u64 = 256 << 10;

/// One ring entry.
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub struct Entry {
    /// What the message is (the tunnel's kinds), with `KIND_BLOCK` if it names a block.
    pub kind: u32,
    /// Bytes of the message (inline or in the block).
    pub len: u32,
    pub data: [u8; INLINE_MAX],
}

const _: () = assert!(std::mem::size_of::<Entry>() == RING_ENTRY);

impl Entry {
    pub fn new(kind: u32) -> Entry {
        Entry { kind, len: 0, data: [0; INLINE_MAX] }
    }

    /// An entry carrying `bytes` (at most INLINE_MAX) inline.
    pub fn inline(kind: u32, bytes: &[u8]) -> Entry {
        let mut e = Entry::new(kind);
        e.data[..bytes.len()].copy_from_slice(bytes);
        e.len = bytes.len() as u32;
        e
    }

    /// An entry naming block `off` that holds `len` bytes.
    pub fn block(kind: u32, off: usize, len: usize) -> Entry {
        let mut e = Entry::new(kind | KIND_BLOCK);
        e.data[..8].copy_from_slice(&(off as u64).to_ne_bytes());
        e.len = len as u32;
        e
    }

    pub fn block_offset(&self) -> Option<usize> {
        if self.kind & KIND_BLOCK == 0 {
            return None;
        }
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.data[..8]);
        Some(u64::from_ne_bytes(b) as usize)
    }

    /// The inline bytes (clamped to the entry, whatever `len` says).
    pub fn inline_bytes(&self) -> &[u8] {
        &self.data[..(self.len as usize).min(INLINE_MAX)]
    }
}

#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum PushError {
    Full,
    Closed,
    /// The queue lock could not be taken (errno).
    Lock(i32),
}

#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub enum PopError {
    Empty,
    Closed,
    Lock(i32),
    /// The entry named something that is not a block of this segment (the memory was
    /// written by something else than a tunnel); the entry is dropped.
    Corrupt,
}

/// A queue lock held; unlocking repairs nothing further (the repair ran when it was taken).
struct QueueGuard<'a> {
    seg: &'a Segment,
    how: Locked,
    /// The holder of the lock died: dead slots are reclaimed after unlocking.
    recovered: bool,
}

impl Drop for QueueGuard<'_> {
    fn drop(&mut self) {
        self.seg.header().queue.lock.unlock(self.how);
    }
}

impl Segment {
    fn lock_queue(&self) -> Result<QueueGuard<'_>, i32> {
        let how = self.header().queue.lock.lock().map_err(|e| e.0)?;
        if how == Locked::Recovered {
            self.repair_queue();
        }
        Ok(QueueGuard { seg: self, how, recovered: how == Locked::Recovered })
    }

    fn ring_entry(&self, i: u64) -> *mut Entry {
        let h = self.header();
        let idx = (i & (h.ring_slots as u64 - 1)) as usize;
        self.at(h.ring_off as usize + idx * RING_ENTRY) as *mut Entry
    }

    fn read_entry(&self, i: u64) -> Entry {
        // SAFETY: a ring slot in bounds; read under the queue lock (copied out, since the
        // slot is reused once `head` moves past it).
        unsafe { std::ptr::read(self.ring_entry(i)) }
    }

    /// After the queue lock's holder died (lock held): the block it was changing gets the
    /// `QUEUED` bit and count that the ring says it should have.
    fn repair_queue(&self) {
        let q = &self.header().queue;
        let slots = self.header().ring_slots as u64;
        let (head, tail) = (q.head.load(Ordering::Acquire), q.tail.load(Ordering::Acquire));
        if tail < head || tail - head > slots {
            // Not a state any operation leaves: keep what can be trusted.
            q.tail.store(head, Ordering::Release);
        }
        let queued = (head..q.tail.load(Ordering::Acquire)).map(|i| self.read_entry(i)).filter(|e| e.block_offset().is_some()).map(|e| e.len as u64).sum();
        q.queued_bytes.store(queued, Ordering::Relaxed);
        let off = q.pending.load(Ordering::Acquire) as usize;
        if off != 0 && self.valid_block(off) {
            let n = (head..q.tail.load(Ordering::Acquire)).filter(|&i| self.read_entry(i).block_offset() == Some(off)).count();
            self.block(off).link.store(n as u32, Ordering::Relaxed);
            if n > 0 {
                self.block_holders(off).fetch_or(QUEUED, Ordering::AcqRel);
            } else {
                self.release(off, QUEUED);
            }
        }
        q.pending.store(0, Ordering::Release);
    }

    /// After a lock holder died: the slots of dead processes are reclaimed (outside the queue
    /// lock, which comes after the recovery lock).
    fn after_guard(&self, recovered: bool, me: usize) {
        if recovered {
            self.reclaim_dead(Some(me));
        }
    }

    /// Queues `entry` for slot `s`. If it names a block (which `s` holds), the ring takes a
    /// reference, and `s` gives its own up unless `keep` (share mode: the sender's object
    /// still reads the block).
    pub fn push(&self, s: usize, entry: &Entry, keep: bool) -> Result<(), PushError> {
        let h = self.header();
        let q = &h.queue;
        let g = self.lock_queue().map_err(PushError::Lock)?;
        let recovered = g.recovered;
        let r = (|| {
            if h.closed.load(Ordering::Acquire) != 0 {
                return Err(PushError::Closed);
            }
            let (head, tail) = (q.head.load(Ordering::Relaxed), q.tail.load(Ordering::Relaxed));
            if tail - head >= h.ring_slots as u64 {
                return Err(PushError::Full);
            }
            let block = entry.block_offset();
            if let Some(off) = block {
                q.queued_bytes.fetch_add(entry.len as u64, Ordering::Relaxed);
                q.pending.store(off as u64, Ordering::Relaxed);
                let b = self.block(off);
                b.link.fetch_add(1, Ordering::Relaxed);
                b.holders.fetch_or(QUEUED, Ordering::AcqRel);
            }
            // SAFETY: slot `tail` is outside `head .. tail`, so nobody reads it now.
            unsafe { std::ptr::write(self.ring_entry(tail), *entry) };
            // Before the commit, so a waiter that sees the entry sees who sent it.
            h.wait.sender.store(((s as u64 + 1) << 32) | current_cpu() as u64, Ordering::Relaxed);
            q.tail.store(tail + 1, Ordering::Release);
            if let Some(off) = block {
                if !keep {
                    self.block_holders(off).fetch_and(!(1u64 << s), Ordering::AcqRel);
                }
                q.pending.store(0, Ordering::Relaxed);
            }
            Ok(())
        })();
        drop(g);
        self.after_guard(recovered, s);
        if r.is_ok() {
            let w = &h.wait;
            fence(Ordering::SeqCst);
            if w.recv_waiters.load(Ordering::SeqCst) > 0 {
                w.recv_seq.fetch_add(1, Ordering::SeqCst);
                futex_wake(&w.recv_seq, 1);
            }
        }
        r
    }

    /// Takes the oldest entry for slot `s`; if it names a block, `s` now holds the block.
    pub fn pop(&self, s: usize) -> Result<Entry, PopError> {
        let h = self.header();
        let q = &h.queue;
        let g = self.lock_queue().map_err(PopError::Lock)?;
        let recovered = g.recovered;
        let mut wake = false;
        let mut flow = false;
        let r = (|| {
            let (head, tail) = (q.head.load(Ordering::Relaxed), q.tail.load(Ordering::Relaxed));
            if head == tail {
                return Err(if h.closed.load(Ordering::Acquire) != 0 { PopError::Closed } else { PopError::Empty });
            }
            // Senders wait for a ring slot only while the ring is full, and one that waits
            // for memory with nothing queued must wake to raise "memory exhausted".
            wake = tail - head >= h.ring_slots as u64 || tail - head == 1;
            let e = self.read_entry(head);
            if let Some(off) = e.block_offset() {
                if !self.valid_block(off) || self.block_holders(off).load(Ordering::Acquire) & QUEUED == 0 {
                    q.head.store(head + 1, Ordering::Release);
                    return Err(PopError::Corrupt);
                }
                q.pending.store(off as u64, Ordering::Relaxed);
                let b = self.block(off);
                b.holders.fetch_or(1u64 << s, Ordering::AcqRel);
                let left = b.link.load(Ordering::Relaxed).saturating_sub(1);
                b.link.store(left, Ordering::Relaxed);
                if left == 0 {
                    b.holders.fetch_and(!QUEUED, Ordering::AcqRel);
                }
                let before = q.queued_bytes.load(Ordering::Relaxed);
                let after = before.saturating_sub(e.len as u64);
                q.queued_bytes.store(after, Ordering::Relaxed);
                // Only the receive that crosses half the limit can have senders to wake:
                // they sleep only at the limit or above (`wait_for_flow`), and the queue
                // comes down through half of it before their wait is over.
                let half = self.flow_limit() / 2;
                flow = before >= half && after < half;
                q.head.store(head + 1, Ordering::Release);
                q.pending.store(0, Ordering::Relaxed);
            } else {
                q.head.store(head + 1, Ordering::Release);
            }
            q.receiver.store(s as u32 + 1, Ordering::Relaxed);
            Ok(e)
        })();
        drop(g);
        self.after_guard(recovered, s);
        if r.is_ok() && wake {
            self.wake_senders();
        }
        if flow {
            self.wake_flow(i32::MAX);
        }
        r
    }

    /// Closes the queue: sends fail from now on, receivers drain what is queued and then
    /// get `Closed`. Wakes every waiter.
    pub fn close(&self) {
        let h = self.header();
        if let Ok(g) = self.lock_queue() {
            h.closed.store(1, Ordering::Release);
            drop(g);
        } else {
            h.closed.store(1, Ordering::Release);
        }
        let w = &h.wait;
        w.recv_seq.fetch_add(1, Ordering::SeqCst);
        w.send_seq.fetch_add(1, Ordering::SeqCst);
        futex_wake(&w.recv_seq, i32::MAX);
        futex_wake(&w.send_seq, i32::MAX);
        self.wake_flow(i32::MAX);
    }

    pub fn is_closed(&self) -> bool {
        self.header().closed.load(Ordering::Acquire) != 0
    }

    /// Entries queued now.
    pub fn queued(&self) -> usize {
        let q = &self.header().queue;
        let head = q.head.load(Ordering::Acquire);
        q.tail.load(Ordering::Acquire).saturating_sub(head) as usize
    }

    pub fn ring_slots(&self) -> usize {
        self.header().ring_slots as usize
    }

    fn has_entry(&self) -> bool {
        self.queued() > 0 || self.is_closed()
    }

    /// Waits up to `timeout` for an entry (or the close): spins for up to `spin`, then sleeps
    /// on the futex. May return early (spuriously); callers re-check with `pop`. Returns
    /// whether the spin saw the entry (callers spin less when spinning does not pay: on a
    /// loaded machine the peer is not running, and a spinning waiter only delays it).
    pub fn wait_for_entry(&self, timeout: Duration, spin: Duration) -> bool {
        let spin = spin.min(SPIN).min(timeout);
        if spin_until(|| self.has_entry(), spin) {
            return true;
        }
        let w = &self.header().wait;
        w.recv_waiters.fetch_add(1, Ordering::SeqCst);
        let seq = w.recv_seq.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !self.has_entry() && timeout > spin {
            futex_wait(&w.recv_seq, seq, timeout - spin);
        }
        w.recv_waiters.fetch_sub(1, Ordering::SeqCst);
        false
    }

    /// Whether the process that sent last on this queue (other than slot `me`) ran, when it
    /// sent, on the CPU this thread runs on now. Its next message then most likely needs
    /// this CPU to be computed: a waiter that spins only keeps it from running (each hop of
    /// a ping-pong whose two processes share a core would cost the whole spin), and one that
    /// sleeps on the futex at once hands the core over for the price of a context switch.
    pub fn sender_shares_cpu(&self, me: usize) -> bool {
        let v = self.header().wait.sender.load(Ordering::Relaxed);
        let (slot, cpu) = ((v >> 32) as usize, v as u32);
        slot != 0 && slot != me + 1 && cpu != 0 && cpu == current_cpu()
    }

    /// The senders' futex word now (read before re-trying a send that found no room).
    pub fn send_seq(&self) -> u32 {
        self.header().wait.send_seq.load(Ordering::SeqCst)
    }

    /// Waits up to `timeout` for room (an entry or a block freed, or the close) after a send
    /// of slot `me` found none when the senders' word was `seq`.
    pub fn wait_for_room(&self, me: usize, seq: u32, timeout: Duration) {
        let w = &self.header().wait;
        w.send_waiters.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !self.is_closed() {
            futex_wait_bits(&w.send_seq, seq, timeout, slot_bit(me));
        }
        w.send_waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Bytes of queued blocks past which a sender holds its next block back while another
    /// process receives (`held_back`): a sixteenth of the heap, at least `FLOW_MIN`.
    pub fn flow_limit(&self) -> u64 {
        (self.heap_len() as u64 / 16).max(FLOW_MIN)
    }

    /// Whether slot `me` should hold its next block back: the queue's blocks hold
    /// `flow_limit` bytes or more, and another process receives them, or nobody has
    /// received yet (a master still forking its workers). Senders that get ahead of their
    /// receivers gain nothing (the receivers set the pace), but every message queued ahead
    /// takes heap pages no process has touched yet, which each sender and receiver then
    /// faults in: 16 workers whose replies filled a 64 MiB heap spent a third of their
    /// time faulting in its pages. A process that received last is never held back (it
    /// cannot receive while it sends); one that sends to itself before any receive is
    /// held back once (`tunnel::hold_back`).
    pub fn held_back(&self, me: usize) -> bool {
        let q = &self.header().queue;
        q.receiver.load(Ordering::Relaxed) as usize != me + 1 && q.queued_bytes.load(Ordering::Relaxed) >= self.flow_limit()
    }

    /// Receives so far (the ring's head): a sender held back tells by it whether anybody
    /// receives at all.
    pub fn received(&self) -> u64 {
        self.header().queue.head.load(Ordering::Acquire)
    }

    /// Waits up to `timeout` for a receive that brings the queue's blocks below half the
    /// flow limit (or the close), after `held_back`. May return early; callers re-check.
    /// Half: a sender woken at every receive below the limit sent one message and waited
    /// again, a futex wake-up and a context switch per message (a thread queueing short
    /// tasks for a worker, or workers whose replies came one by one); woken at half, the
    /// senders that wait (each with a message ready) all go, and one alone sends half the
    /// limit's worth before it waits again.
    pub fn wait_for_flow(&self, me: usize, timeout: Duration) {
        let w = &self.header().wait;
        w.flow_waiters.fetch_add(1, Ordering::SeqCst);
        let seq = w.flow_seq.load(Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if self.held_back(me) && !self.is_closed() {
            futex_wait(&w.flow_seq, seq, timeout);
        }
        w.flow_waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes up to `n` senders held back by the flow limit.
    fn wake_flow(&self, n: i32) {
        let w = &self.header().wait;
        fence(Ordering::SeqCst);
        if w.flow_waiters.load(Ordering::SeqCst) > 0 {
            w.flow_seq.fetch_add(1, Ordering::SeqCst);
            futex_wake(&w.flow_seq, n);
        }
    }
}

/// The CPU this thread runs on now, plus one (0: unknown). `sched_getcpu` reads the
/// kernel's restartable-sequence area (or the vDSO): no system call.
fn current_cpu() -> u32 {
    // SAFETY: no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    if c < 0 { 0 } else { c as u32 + 1 }
}

/// Spins (with the CPU's pause hint) until `ready` or `limit` has passed: whether it got
/// ready. In the second half of the limit it also yields the CPU between looks, so a peer
/// waiting for this core (more processes than cores) gets to run and answer. Not sooner:
/// when the core is wanted by an unrelated busy process instead, a yield hands it a whole
/// time slice, which costs far more than the futex sleep that ends the spin.
fn spin_until(ready: impl Fn() -> bool, limit: Duration) -> bool {
    let start = Instant::now();
    let mut i = 0u32;
    loop {
        if ready() {
            return true;
        }
        std::hint::spin_loop();
        i = i.wrapping_add(1);
        if i % 64 == 0 {
            let spent = start.elapsed();
            if spent >= limit {
                return ready();
            }
            if spent >= limit / 2 {
                // SAFETY: no preconditions.
                unsafe { libc::sched_yield() };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_out_in_order_and_blocks_change_hands() {
        let seg = Segment::anonymous(1 << 20, Some(8)).unwrap();
        let a = seg.attach().unwrap();
        let b = seg.attach().unwrap();
        for i in 0..8u8 {
            seg.push(a, &Entry::inline(1, &[i; 3]), false).unwrap();
        }
        assert_eq!(seg.push(a, &Entry::new(1), false), Err(PushError::Full));
        for i in 0..8u8 {
            assert_eq!(seg.pop(b).unwrap().inline_bytes(), &[i; 3]);
        }
        assert_eq!(seg.pop(b).err(), Some(PopError::Empty));
        let off = seg.alloc(a, 1000).unwrap();
        seg.push(a, &Entry::block(2, off, 1000), false).unwrap();
        assert_eq!(seg.block_holders(off).load(Ordering::Relaxed), QUEUED);
        let e = seg.pop(b).unwrap();
        assert_eq!(e.block_offset(), Some(off));
        assert_eq!(seg.block_holders(off).load(Ordering::Relaxed), 1 << b);
        assert!(seg.release(off, 1 << b));
        // Shared: the same block queued twice while its sender keeps it.
        let off = seg.alloc(a, 100).unwrap();
        seg.push(a, &Entry::block(2, off, 100), true).unwrap();
        seg.push(a, &Entry::block(2, off, 100), true).unwrap();
        assert_eq!(seg.block(off).link.load(Ordering::Relaxed), 2);
        seg.pop(b).unwrap();
        assert!(!seg.release(off, 1 << b));
        seg.pop(b).unwrap();
        assert_eq!(seg.block_holders(off).load(Ordering::Relaxed), (1 << a) | (1 << b));
        assert!(!seg.release(off, 1 << a));
        assert!(seg.release(off, 1 << b));
        seg.close();
        assert_eq!(seg.push(a, &Entry::new(1), false), Err(PushError::Closed));
        assert_eq!(seg.pop(b).err(), Some(PopError::Closed));
        assert_eq!(seg.used_blocks(), 0);
    }

    #[test]
    fn a_sender_is_held_back_while_another_process_receives_and_woken_at_half_the_limit() {
        let seg = Segment::anonymous(16 << 20, None).unwrap();
        let (a, b) = (seg.attach().unwrap(), seg.attach().unwrap());
        let limit = seg.flow_limit();
        assert_eq!(limit, seg.heap_len() as u64 / 16);
        let len = 64 << 10;
        // Enough to reach the limit; one fewer is below it.
        let n = (limit as usize).div_ceil(len);
        let send = |s| {
            let off = seg.alloc(s, len).unwrap();
            seg.push(s, &Entry::block(2, off, len), false).unwrap();
        };
        // One message received by slot s and its block released.
        let recv = |s: usize| seg.pop(s).map(|e| seg.release(e.block_offset().unwrap(), 1 << s)).is_ok();
        for _ in 0..n {
            send(a);
        }
        assert_eq!(seg.header().queue.queued_bytes.load(Ordering::Relaxed), (n * len) as u64);
        assert!(seg.held_back(a), "nobody has received yet: somebody may be about to");
        assert!(seg.held_back(b));
        assert!(recv(b));
        assert!(!seg.held_back(a), "one receive brought the queue below the limit");
        send(a);
        assert!(seg.held_back(a), "over the limit while b receives");
        assert!(!seg.held_back(b), "b receives: it is never held back by its own queue");
        // A held-back sender wakes at the receive that brings the queue below the limit.
        // SAFETY: the child receives one message a moment later and exits at once.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // One receive leaves the queue below the limit but above half of it: no wake.
            std::thread::sleep(Duration::from_millis(50));
            let mut ok = recv(b);
            // Down to half the limit, where the held-back sender is woken.
            std::thread::sleep(Duration::from_millis(200));
            while seg.header().queue.queued_bytes.load(Ordering::Relaxed) >= limit / 2 {
                ok &= recv(b);
            }
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let t = Instant::now();
        seg.wait_for_flow(a, Duration::from_secs(10));
        let waited = t.elapsed();
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(libc::WEXITSTATUS(status), 0);
        assert!(waited >= Duration::from_millis(250), "woken only below half the limit: {waited:?}");
        assert!(waited < Duration::from_secs(5), "woken by the receive, not the timeout: {waited:?}");
        assert!(!seg.held_back(a));
        while recv(b) {}
        assert_eq!(seg.header().queue.queued_bytes.load(Ordering::Relaxed), 0);
        assert_eq!(seg.used_blocks(), 0);
    }

    #[test]
    fn the_last_sender_and_its_cpu_are_seen_by_other_slots_only() {
        let seg = Segment::anonymous(1 << 20, Some(8)).unwrap();
        let (a, b) = (seg.attach().unwrap(), seg.attach().unwrap());
        assert!(!seg.sender_shares_cpu(b), "nobody has sent yet");
        // Pin this thread to the CPU it runs on, so the push and the check see the same one.
        // SAFETY: plain affinity calls on this thread with a zeroed, then filled, set.
        let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        assert_eq!(unsafe { libc::sched_getaffinity(0, size, &mut old) }, 0);
        let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe { libc::CPU_SET(current_cpu() as usize - 1, &mut one) };
        assert_eq!(unsafe { libc::sched_setaffinity(0, size, &one) }, 0);
        seg.push(a, &Entry::new(1), false).unwrap();
        let (theirs, mine) = (seg.sender_shares_cpu(b), seg.sender_shares_cpu(a));
        unsafe { libc::sched_setaffinity(0, size, &old) };
        assert!(theirs, "b waits on the CPU a sent from");
        assert!(!mine, "a's own message says nothing about a peer");
        seg.pop(b).unwrap();
    }

    #[test]
    fn a_holder_dying_in_the_queue_lock_is_repaired() {
        let seg = Segment::anonymous(1 << 20, None).unwrap();
        let me = seg.attach().unwrap();
        // SAFETY: the child takes the queue lock half-way through a push and dies there.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let s = seg.attach().unwrap();
            let off = seg.alloc(s, 500).unwrap();
            let q = &seg.header().queue;
            let _ = q.lock.lock();
            q.pending.store(off as u64, Ordering::Relaxed);
            seg.block(off).link.fetch_add(1, Ordering::Relaxed);
            seg.block_holders(off).fetch_or(QUEUED, Ordering::AcqRel);
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(seg.used_blocks(), 1);
        // The next operation recovers the lock, drops the uncommitted entry's block and
        // reclaims the dead sender's slot.
        assert_eq!(seg.pop(me).err(), Some(PopError::Empty));
        assert_eq!(seg.used_blocks(), 0);
        assert_eq!(seg.attached(), 1);
        seg.push(me, &Entry::new(1), false).unwrap();
        assert!(seg.pop(me).is_ok());
    }

    #[test]
    fn many_senders_and_receivers_lose_and_duplicate_nothing() {
        let seg = Segment::anonymous(4 << 20, Some(64)).unwrap();
        let results = Segment::anonymous(4 << 20, None).unwrap();
        const SENDERS: u64 = 3;
        const RECEIVERS: usize = 3;
        const EACH: u64 = 3000;
        let mut pids = Vec::new();
        for w in 0..SENDERS {
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let s = seg.attach().unwrap();
                for i in 0..EACH {
                    let v = w * EACH + i;
                    let e = if i % 3 == 0 {
                        let off = loop {
                            if let Some(off) = seg.alloc(s, 2000) {
                                break off;
                            }
                            seg.wait_for_room(s, seg.send_seq(), Duration::from_millis(5));
                        };
                        unsafe { std::ptr::copy_nonoverlapping(v.to_ne_bytes().as_ptr(), seg.payload(off), 8) };
                        Entry::block(2, off, 8)
                    } else {
                        Entry::inline(1, &v.to_ne_bytes())
                    };
                    loop {
                        let seq = seg.send_seq();
                        match seg.push(s, &e, false) {
                            Ok(()) => break,
                            Err(PushError::Full) => seg.wait_for_room(s, seq, Duration::from_millis(5)),
                            Err(e) => panic!("{e:?}"),
                        }
                    }
                }
                unsafe { libc::_exit(0) };
            }
            pids.push(pid);
        }
        for _ in 0..RECEIVERS {
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let s = seg.attach().unwrap();
                let r = results.attach().unwrap();
                loop {
                    match seg.pop(s) {
                        Ok(e) => {
                            let v = match e.block_offset() {
                                Some(off) => {
                                    let mut b = [0u8; 8];
                                    unsafe { std::ptr::copy_nonoverlapping(seg.payload(off), b.as_mut_ptr(), 8) };
                                    seg.release(off, 1 << s);
                                    b
                                }
                                None => e.inline_bytes().try_into().unwrap(),
                            };
                            while results.push(r, &Entry::inline(1, &v), false).is_err() {
                                results.wait_for_room(r, results.send_seq(), Duration::from_millis(5));
                            }
                        }
                        Err(PopError::Empty) => {
                            seg.wait_for_entry(Duration::from_millis(50), SPIN);
                        }
                        Err(PopError::Closed) => break,
                        Err(e) => panic!("{e:?}"),
                    }
                }
                seg.detach(s);
                unsafe { libc::_exit(0) };
            }
            pids.push(pid);
        }
        let me = results.attach().unwrap();
        let mut seen = vec![false; (SENDERS * EACH) as usize];
        let mut got = 0;
        while got < seen.len() {
            match results.pop(me) {
                Ok(e) => {
                    let v = u64::from_ne_bytes(e.inline_bytes().try_into().unwrap()) as usize;
                    assert!(!seen[v], "{v} received twice");
                    seen[v] = true;
                    got += 1;
                }
                Err(_) => {
                    results.wait_for_entry(Duration::from_millis(50), SPIN);
                }
            }
        }
        seg.close();
        for pid in pids {
            let mut status = 0;
            unsafe { libc::waitpid(pid, &mut status, 0) };
            assert_eq!(libc::WEXITSTATUS(status), 0);
        }
        seg.reclaim_dead(None);
        assert_eq!(seg.used_blocks(), 0);
        assert_eq!(seg.attached(), 0);
    }
}
