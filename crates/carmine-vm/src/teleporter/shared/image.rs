//! The image of a shared object graph: one position-independent byte area (a block of a
//! tunnel's segment, or process memory before the graph is first sent) holding records
//! that refer to each other by offsets from the image's start.
//!
//! ```text
//! 0   magic u32, flags u32 (FROZEN), used u64 (bytes taken), cap u64 (bytes there), root u64
//! 32… records, 8-aligned, bump-allocated up to `used`:
//!     STR  kind, enc | name_rec, len, cap, data_off       (bytes in a region at data_off)
//!     ARR  kind, len, cap, cells_off                       (cap 16-byte cells)
//!     HASH kind, len (live), used, cap, ents_off, default cell, index_off, index_slots
//!          (entries: hash, key, value; index: u32 slots, entry number + 1, 0 = empty)
//!     SYM  kind, len, bytes            BLOB kind, len, bytes (a copy-format encoding)
//! cell: tag u64 (NIL TRUE FALSE FIX FLO REF DELETED), payload u64 (value, bits, record)
//! ```
//!
//! Invariants:
//! - An image is read only within `cap`; every offset read from it is checked before use,
//!   so a corrupt image gives `None` (a Teleporter::Error for the caller), never a read
//!   outside it.
//! - Records never move: growing a string, array or hash allocates a new region at the end
//!   of the image and points the record at it (the old region is garbage until the image
//!   is copied). So record offsets are stable names for the objects of a graph.
//! - Only the owner of a graph writes it (a graph is written while no other process holds
//!   it: it is process memory, or an image moved to this process); once FROZEN it is never
//!   written again.
//! - Hash keys are stored by value (a String key is a STR record nobody writes; keys other
//!   than immediates, Strings and Symbols are BLOBs), with a hash of their canonical bytes
//!   (`key_hash`) that every process computes the same way, so lookups run no Ruby code.
//! - A HASH record's index is an open-addressing table (linear probing) of `index_slots`
//!   (a power of two, at least twice the entries' capacity, so at most half full) naming
//!   every entry in `0..used` by its key hash, deleted ones included (a lookup passes
//!   over them). It is rebuilt whenever the entries move (growth compacts them) and
//!   emptied with them (`clear`); it holds no address and no per-process seed, so every
//!   process reads it as written. A lookup probes at most `index_slots` slots and checks
//!   every entry number against `used`, so a corrupt index cannot loop or read outside.

pub const MAGIC: u32 = 0x4853_5054; // "TPSH"
pub const FROZEN: u32 = 1;
pub const HEADER: usize = 32;

pub const R_STR: u64 = 1;
pub const R_ARR: u64 = 2;
pub const R_HASH: u64 = 3;
pub const R_SYM: u64 = 4;
pub const R_BLOB: u64 = 5;

pub const C_NIL: u64 = 0;
pub const C_TRUE: u64 = 1;
pub const C_FALSE: u64 = 2;
pub const C_FIX: u64 = 3;
pub const C_FLO: u64 = 4;
pub const C_REF: u64 = 5;
pub const C_DELETED: u64 = 6;

pub const STR_SIZE: usize = 40;
pub const ARR_SIZE: usize = 32;
pub const HASH_SIZE: usize = 72;
/// Byte offsets in a HASH record of the default-value cell and the index's two words.
pub const HASH_DEFAULT: usize = 40;
pub const HASH_INDEX: usize = 56;
pub const HASH_INDEX_SLOTS: usize = 64;
pub const CELL: usize = 16;
pub const ENTRY: usize = 40;

/// Encoding field of a STR record: an encoding index below this, else a SYM record naming it.
pub const ENC_NAMED: u64 = 1 << 32;

/// A cell: tag and payload.
pub type Cell = (u64, u64);

/// A view of an image: its start and the bytes it may use.
#[derive(Clone, Copy)]
pub struct Img {
    pub p: *mut u8,
    pub cap: usize,
}

/// The words an image is read and written in (u64 fields and cells, u32 index slots).
pub trait Word: Copy {}
impl Word for u64 {}
impl Word for u32 {}

impl Img {
    /// Whether a `T` at `off` is inside the image and aligned (images are 8-aligned).
    #[inline]
    fn fits<T: Word>(&self, off: usize) -> bool {
        let n = std::mem::size_of::<T>();
        off % n == 0 && off.checked_add(n).is_some_and(|end| end <= self.cap)
    }

    #[inline]
    fn load<T: Word>(&self, off: usize) -> Option<T> {
        // SAFETY: in bounds and aligned (checked).
        self.fits::<T>(off).then(|| unsafe { std::ptr::read(self.p.add(off) as *const T) })
    }

    /// Writes a word (callers write only inside what `alloc` gave them; nothing outside).
    #[inline]
    fn store<T: Word>(&self, off: usize, v: T) {
        if self.fits::<T>(off) {
            // SAFETY: in bounds and aligned (checked).
            unsafe { std::ptr::write(self.p.add(off) as *mut T, v) }
        }
    }

    #[inline]
    pub fn u64_at(&self, off: usize) -> Option<u64> {
        self.load(off)
    }

    #[inline]
    pub fn set_u64(&self, off: usize, v: u64) {
        self.store(off, v)
    }

    #[inline]
    pub fn u32_at(&self, off: usize) -> Option<u32> {
        self.load(off)
    }

    #[inline]
    pub fn set_u32(&self, off: usize, v: u32) {
        self.store(off, v)
    }

    /// Zeroes `len` bytes at `off` (nothing if they are not all inside).
    pub fn zero(&self, off: usize, len: usize) {
        if off.checked_add(len).is_some_and(|end| end <= self.cap) {
            // SAFETY: in bounds (checked).
            unsafe { std::ptr::write_bytes(self.p.add(off), 0, len) }
        }
    }

    pub fn bytes(&self, off: usize, len: usize) -> Option<&[u8]> {
        if off.checked_add(len)? > self.cap {
            return None;
        }
        // SAFETY: in bounds (checked).
        Some(unsafe { std::slice::from_raw_parts(self.p.add(off), len) })
    }

    pub fn put_bytes(&self, off: usize, b: &[u8]) {
        if off.checked_add(b.len()).is_some_and(|end| end <= self.cap) {
            // SAFETY: in bounds (checked); `b` never points into the image region written.
            unsafe { std::ptr::copy(b.as_ptr(), self.p.add(off), b.len()) }
        }
    }

    pub fn flags(&self) -> u32 {
        self.u64_at(0).map(|w| (w >> 32) as u32).unwrap_or(0)
    }

    pub fn is_frozen(&self) -> bool {
        self.flags() & FROZEN != 0
    }

    pub fn set_frozen(&self) {
        self.set_u64(0, MAGIC as u64 | ((self.flags() | FROZEN) as u64) << 32);
    }

    pub fn clear_frozen(&self) {
        self.set_u64(0, MAGIC as u64 | ((self.flags() & !FROZEN) as u64) << 32);
    }

    pub fn used(&self) -> usize {
        self.u64_at(8).unwrap_or(0) as usize
    }

    pub fn root(&self) -> usize {
        self.u64_at(24).unwrap_or(0) as usize
    }

    /// Whether the header is an image's.
    pub fn valid(&self) -> bool {
        self.u64_at(0).map(|w| w as u32 == MAGIC).unwrap_or(false) && self.used() <= self.cap && self.used() >= HEADER
    }

    pub fn kind(&self, rec: usize) -> Option<u64> {
        if rec < HEADER || rec >= self.used() {
            return None;
        }
        self.u64_at(rec).map(|w| w & 0xffff_ffff)
    }

    pub fn field(&self, rec: usize, i: usize) -> Option<u64> {
        self.u64_at(rec.checked_add(8 * i)?)
    }

    pub fn cell(&self, off: usize) -> Option<Cell> {
        Some((self.u64_at(off)?, self.u64_at(off + 8)?))
    }

    pub fn set_cell(&self, off: usize, c: Cell) {
        self.set_u64(off, c.0);
        self.set_u64(off + 8, c.1);
    }

    /// (len, bytes) of a SYM or BLOB record.
    pub fn blob(&self, rec: usize) -> Option<&[u8]> {
        let len = self.field(rec, 1)? as usize;
        self.bytes(rec + 16, len)
    }

    /// A STR record's bytes and encoding field.
    pub fn str_bytes(&self, rec: usize) -> Option<&[u8]> {
        if self.kind(rec)? != R_STR {
            return None;
        }
        let len = self.field(rec, 2)? as usize;
        let data = self.field(rec, 4)? as usize;
        if len == 0 {
            return Some(&[]);
        }
        self.bytes(data, len)
    }

    /// Array length and cells offset.
    pub fn arr(&self, rec: usize) -> Option<(usize, usize)> {
        if self.kind(rec)? != R_ARR {
            return None;
        }
        let len = self.field(rec, 1)? as usize;
        let cells = self.field(rec, 3)? as usize;
        if len > self.field(rec, 2)? as usize || cells.checked_add(len.checked_mul(CELL)?)? > self.cap {
            return None;
        }
        Some((len, cells))
    }

    /// Hash (live entries, used entries, entries offset).
    pub fn hash(&self, rec: usize) -> Option<(usize, usize, usize)> {
        if self.kind(rec)? != R_HASH {
            return None;
        }
        let len = self.field(rec, 1)? as usize;
        let used = self.field(rec, 2)? as usize;
        let ents = self.field(rec, 4)? as usize;
        if used > self.field(rec, 3)? as usize || ents.checked_add(used.checked_mul(ENTRY)?)? > self.cap {
            return None;
        }
        Some((len, used, ents))
    }

    /// A HASH record's index: (offset, slots), checked to lie inside the image.
    pub fn hash_index(&self, rec: usize) -> Option<(usize, usize)> {
        let off = self.u64_at(rec.checked_add(HASH_INDEX)?)? as usize;
        let slots = self.u64_at(rec + HASH_INDEX_SLOTS)? as usize;
        if !slots.is_power_of_two() || off % 4 != 0 || off.checked_add(slots.checked_mul(4)?)? > self.cap {
            return None;
        }
        Some((off, slots))
    }

    /// Adds entry number `i` with key hash `h` to the index of HASH record `rec`.
    pub fn index_insert(&self, rec: usize, h: u64, i: usize) -> Option<()> {
        let (idx, slots) = self.hash_index(rec)?;
        let mut at = h as usize & (slots - 1);
        for _ in 0..slots {
            if self.u32_at(idx + 4 * at)? == 0 {
                self.set_u32(idx + 4 * at, u32::try_from(i + 1).ok()?);
                return Some(());
            }
            at = (at + 1) & (slots - 1);
        }
        None
    }

    /// The entries of HASH record `rec` whose key hash is `h`, in probe order (the caller
    /// compares their keys): offsets of entries in `0..used`, deleted ones left out.
    pub fn index_probe(&self, rec: usize, h: u64) -> IndexProbe<'_> {
        let found = self.hash(rec).zip(self.hash_index(rec));
        let ((_, used, ents), (idx, slots)) = found.unwrap_or(((0, 0, 0), (0, 0)));
        IndexProbe { img: self, h, used, ents, idx, mask: slots.wrapping_sub(1), at: h as usize & slots.wrapping_sub(1), left: slots }
    }
}

/// The walk `Img::index_probe` makes.
pub struct IndexProbe<'a> {
    img: &'a Img,
    h: u64,
    used: usize,
    ents: usize,
    idx: usize,
    mask: usize,
    at: usize,
    left: usize,
}

impl Iterator for IndexProbe<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        while self.left > 0 {
            self.left -= 1;
            let slot = self.img.u32_at(self.idx + 4 * self.at)? as usize;
            self.at = (self.at + 1) & self.mask;
            if slot == 0 {
                self.left = 0;
                return None;
            }
            let i = slot - 1;
            if i >= self.used {
                continue;
            }
            let e = self.ents + i * ENTRY;
            if self.img.u64_at(e)? == self.h && self.img.u64_at(e + 8)? != C_DELETED {
                return Some(e);
            }
        }
        None
    }
}

/// The index size for a hash of `cap` entries: a power of two at least twice `cap`.
pub fn index_slots(cap: usize) -> usize {
    cap.max(4).saturating_mul(2).checked_next_power_of_two().unwrap_or(usize::MAX / 2 + 1)
}

/// Writes a fresh header for an image of `cap` bytes with `used` taken.
pub fn init_header(img: &Img, used: usize, root: usize) {
    img.set_u64(0, MAGIC as u64);
    img.set_u64(8, used as u64);
    img.set_u64(16, img.cap as u64);
    img.set_u64(24, root as u64);
}

pub fn set_used(img: &Img, used: usize) {
    img.set_u64(8, used as u64);
}

pub fn set_root(img: &Img, root: usize) {
    img.set_u64(24, root as u64);
}

// ---- key hashing: the same in every process ----

/// FNV-1a over a tag and bytes, finished with a mixer.
pub fn key_hash(tag: u8, b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ tag as u64;
    h = h.wrapping_mul(0x100_0000_01b3);
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// Float bits as a key: -0.0 is 0.0 (they are eql?).
pub fn float_key_bits(f: f64) -> u64 {
    if f == 0.0 {
        0
    } else {
        f.to_bits()
    }
}

pub const KEY_STR: u8 = b'S';
pub const KEY_SYM: u8 = b'Y';
pub const KEY_BLOB: u8 = b'B';

/// The key hash of an immediate cell.
pub fn cell_key_hash(c: Cell) -> u64 {
    let payload = if c.0 == C_FLO { float_key_bits(f64::from_bits(c.1)) } else { c.1 };
    key_hash(c.0 as u8, &payload.to_le_bytes())
}

/// The key hash of the cell `c` of image `img` (a REF to a STR, SYM or BLOB, or an
/// immediate).
pub fn stored_key_hash(img: &Img, c: Cell) -> Option<u64> {
    if c.0 != C_REF {
        return Some(cell_key_hash(c));
    }
    let rec = c.1 as usize;
    Some(match img.kind(rec)? {
        R_STR => key_hash(KEY_STR, img.str_bytes(rec)?),
        R_SYM => key_hash(KEY_SYM, img.blob(rec)?),
        _ => key_hash(KEY_BLOB, img.blob(rec)?),
    })
}

/// Whether two images' byte areas may hold an ASCII-compatible equal string.
pub fn utf8_char_count(b: &[u8]) -> usize {
    b.iter().filter(|&&x| (x as i8) >= -0x40).count()
}

/// Byte offset of character `idx` of UTF-8 bytes `b` (`b.len()` at the end, None past it).
pub fn utf8_offset(b: &[u8], idx: usize) -> Option<usize> {
    let mut n = 0;
    for (i, &x) in b.iter().enumerate() {
        if (x as i8) >= -0x40 {
            if n == idx {
                return Some(i);
            }
            n += 1;
        }
    }
    (n == idx).then_some(b.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounded() {
        let mut buf = vec![0u64; 8];
        let img = Img { p: buf.as_mut_ptr() as *mut u8, cap: 64 };
        init_header(&img, 40, 32);
        assert!(img.valid());
        assert_eq!(img.u64_at(64), None);
        assert_eq!(img.u64_at(3), None);
        assert!(img.bytes(60, 8).is_none());
        assert_eq!(img.kind(48), None);
        img.set_frozen();
        assert!(img.is_frozen() && img.valid());
    }

    #[test]
    fn index_probes_find_entries_and_end_on_a_corrupt_index() {
        let mut buf = vec![0u64; 64];
        let img = Img { p: buf.as_mut_ptr() as *mut u8, cap: 512 };
        init_header(&img, 512, 32);
        let (rec, slots) = (32, 8);
        let ents = rec + HASH_SIZE;
        let idx = ents + 2 * ENTRY;
        for (i, w) in [R_HASH, 2, 2, 2, ents as u64, C_NIL, 0, idx as u64, slots as u64].into_iter().enumerate() {
            img.set_u64(rec + 8 * i, w);
        }
        for (i, h) in [7u64, 15].into_iter().enumerate() {
            img.set_u64(ents + i * ENTRY, h);
            img.set_cell(ents + i * ENTRY + 8, (C_FIX, i as u64));
            img.index_insert(rec, h, i).unwrap();
        }
        // 7 and 15 share slot 7: the second goes to the next free slot (0).
        assert_eq!(img.index_probe(rec, 7).collect::<Vec<_>>(), vec![ents]);
        assert_eq!(img.index_probe(rec, 15).collect::<Vec<_>>(), vec![ents + ENTRY]);
        assert_eq!(img.index_probe(rec, 3).count(), 0);
        // A deleted entry keeps its slot and is passed over.
        img.set_u64(ents + 8, C_DELETED);
        assert_eq!(img.index_probe(rec, 7).count(), 0);
        assert_eq!(img.index_probe(rec, 15).count(), 1);
        // Every slot taken and naming entries past `used`: the probe still ends.
        for i in 0..slots {
            img.set_u32(idx + 4 * i, 9);
        }
        assert_eq!(img.index_probe(rec, 15).count(), 0);
        assert!(img.index_insert(rec, 1, 1).is_none());
        // Slots that are not a power of two, or an index past the image: no index at all.
        img.set_u64(rec + HASH_INDEX_SLOTS, 6);
        assert!(img.hash_index(rec).is_none());
        img.set_u64(rec + HASH_INDEX_SLOTS, 1 << 20);
        assert!(img.hash_index(rec).is_none());
        assert_eq!(img.index_probe(rec, 15).count(), 0);
    }

    #[test]
    fn key_hashes_agree_for_eql_floats() {
        assert_eq!(cell_key_hash((C_FLO, 0.0f64.to_bits())), cell_key_hash((C_FLO, (-0.0f64).to_bits())));
        assert_ne!(cell_key_hash((C_FIX, 1)), cell_key_hash((C_FLO, 1.0f64.to_bits())));
        assert_eq!(utf8_offset("aé b".as_bytes(), 2), Some(3));
        assert_eq!(utf8_offset(b"ab", 2), Some(2));
        assert_eq!(utf8_offset(b"ab", 3), None);
    }
}
