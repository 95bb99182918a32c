//! The byte storage of a String: up to `INLINE_CAP` bytes live inside the object's heap
//! slot ("embedded", no allocation of their own); longer content lives in a buffer from
//! the global allocator.
//!
//! Invariants:
//! - The storage is `SIZE` bytes, exactly what a 40-byte slot (`SMALL_SLOT_SIZE`) has
//!   left after `RBasic`. Its last byte is the tag: `0..=INLINE_CAP` is the length of
//!   embedded content held in the bytes before it; `HEAP` means the heap form.
//! - The heap form is a `Vec<u8>` taken apart: pointer, length and capacity words, the
//!   capacity in the low 56 bits of the last word (little-endian, so its top byte is the
//!   tag). The buffer was allocated as a `Vec<u8>`'s, so `Vec::from_raw_parts` may take it
//!   back (`with_vec`, `drop`); the capacity is never 0.
//! - Creating a String from a slice, appending while the result fits, truncating and
//!   removing a prefix keep embedded content embedded; only `heap_mut_ptr` (and growth past
//!   `INLINE_CAP`) moves content to the heap, where it stays until it is replaced (`set`).
//! - The shared form (tag `SHARED`) views bytes of a buffer owned by a reference-counted
//!   `Shared` block (pointer in the low bits of the last word): the pointer and length
//!   words describe the content as in the heap form, so reading is the same. Substrings
//!   of at least `INLINE_CAP + 1` bytes share their source's buffer (`share_range`, which
//!   turns the source itself into the shared form); any change first copies the content
//!   into a buffer of its own (`unshare`), except `truncate` and `remove_prefix`, which
//!   only narrow the view. The block and its buffer are freed with its last String.
//! - Embedded bytes move with nothing (the heap is non-moving) but die with their slot: a
//!   borrowed slice must not outlive the String, as with the heap form's buffer.
//! - A slice of this same storage must never be passed to `extend_from_slice`/`splice`
//!   together with `&mut self` (that aliasing is undefined behaviour, and release builds do
//!   miscompile it): callers copy first when the source String is the destination.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut, Range};

use crate::heap::page::SMALL_SLOT_SIZE;
use crate::object::RBasic;

#[cfg(not(target_endian = "little"))]
compile_error!("StrBuf keeps its tag in the top byte of the capacity word (little-endian)");

const SIZE: usize = SMALL_SLOT_SIZE - std::mem::size_of::<RBasic>();
/// The longest content kept inside the slot.
pub const INLINE_CAP: usize = SIZE - 1;
const TAG: usize = SIZE - 1;
const HEAP: u8 = 0xff;
const SHARED: u8 = 0xfe;
const SHARED_TAG: usize = (SHARED as usize) << CAP_BITS;
const CAP_BITS: u32 = 56;
const CAP_MASK: usize = (1 << CAP_BITS) - 1;
const HEAP_TAG: usize = (HEAP as usize) << CAP_BITS;

const _: () = assert!(INLINE_CAP < SHARED as usize);

/// A buffer shared by Strings (see the module's invariants): the parts of the `Vec<u8>`
/// it was, and how many Strings view it.
struct Shared {
    refs: std::sync::atomic::AtomicUsize,
    ptr: *mut u8,
    len: usize,
    cap: usize,
}
const _: () = assert!(std::mem::size_of::<HeapForm>() == SIZE);

#[repr(C)]
#[derive(Copy, Clone)]
struct HeapForm {
    ptr: *mut u8,
    len: usize,
    /// Capacity, with `HEAP` in the top byte.
    cap_tag: usize,
}

#[repr(C)]
union Repr {
    inline: [u8; SIZE],
    heap: HeapForm,
}

#[repr(C)]
pub struct StrBuf {
    repr: Repr,
}

const _: () = assert!(std::mem::size_of::<StrBuf>() == SIZE);

impl StrBuf {
    #[inline(always)]
    pub const fn new() -> StrBuf {
        StrBuf { repr: Repr { inline: [0; SIZE] } }
    }

    #[inline(always)]
    fn tag(&self) -> u8 {
        // SAFETY: the tag byte is initialised in both forms (the capacity word's top byte).
        unsafe { self.repr.inline[TAG] }
    }

    /// Whether the content is embedded in the slot.
    #[inline(always)]
    pub fn is_embedded(&self) -> bool {
        self.tag() as usize <= INLINE_CAP
    }

    /// Whether the content is a view of a shared buffer.
    #[inline(always)]
    pub fn is_shared(&self) -> bool {
        self.tag() == SHARED
    }

    #[inline(always)]
    fn shared_block(&self) -> *const Shared {
        debug_assert!(self.is_shared());
        // SAFETY: shared form: the last word holds the block's address under the tag.
        unsafe { (self.repr.heap.cap_tag & CAP_MASK) as *const Shared }
    }

    /// A String of `self[range]`: embedded when short, else a view of this buffer, which
    /// becomes shared (see the module's invariants).
    pub fn share_range(&mut self, range: Range<usize>) -> StrBuf {
        if range.len() <= INLINE_CAP || self.is_embedded() {
            return StrBuf::from_slice(&self[range]);
        }
        if !self.is_shared() {
            // SAFETY: heap form: its Vec's parts move into a block this String now views.
            unsafe {
                let h = self.repr.heap;
                let block = Box::into_raw(Box::new(Shared { refs: std::sync::atomic::AtomicUsize::new(1), ptr: h.ptr, len: h.len, cap: h.cap_tag & CAP_MASK }));
                assert!((block as usize) <= CAP_MASK, "address too large for a shared String");
                self.repr.heap.cap_tag = block as usize | SHARED_TAG;
            }
        }
        let block = self.shared_block();
        // SAFETY: the block lives while this String views it; the new view counts.
        unsafe {
            (*block).refs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let h = self.repr.heap;
            StrBuf { repr: Repr { heap: HeapForm { ptr: h.ptr.add(range.start), len: range.len(), cap_tag: h.cap_tag } } }
        }
    }

    /// Gives up a view of a shared buffer (the storage is then to be rewritten).
    ///
    /// # Safety
    /// Shared form; the storage is not read as a view again.
    unsafe fn release_shared(&mut self) {
        let block = self.shared_block() as *mut Shared;
        if (*block).refs.fetch_sub(1, std::sync::atomic::Ordering::AcqRel) == 1 {
            let b = Box::from_raw(block);
            drop(Vec::from_raw_parts(b.ptr, b.len, b.cap));
        }
    }

    /// Copies shared content into a buffer of its own with room for `extra` more bytes.
    #[cold]
    fn unshare(&mut self, extra: usize) {
        let mut v = Vec::with_capacity(self.len() + extra);
        v.extend_from_slice(self);
        // SAFETY: shared form; the storage is rewritten next.
        unsafe { self.release_shared() };
        self.repr = StrBuf::heap(v).into_repr();
    }

    /// The storage, not dropped.
    fn into_repr(self) -> Repr {
        let s = ManuallyDrop::new(self);
        // SAFETY: the Repr is moved out of a value that is never dropped.
        unsafe { std::ptr::read(&s.repr) }
    }

    #[inline]
    pub fn from_slice(b: &[u8]) -> StrBuf {
        if b.len() <= INLINE_CAP {
            let mut s = StrBuf::new();
            // SAFETY: inline form; b.len() <= INLINE_CAP fits before the tag.
            unsafe {
                s.repr.inline[..b.len()].copy_from_slice(b);
                s.repr.inline[TAG] = b.len() as u8;
            }
            s
        } else {
            StrBuf::heap(b.to_vec())
        }
    }

    /// Empty, with room for `n` bytes (in the slot when they fit there).
    #[inline]
    pub fn with_capacity(n: usize) -> StrBuf {
        if n <= INLINE_CAP { StrBuf::new() } else { StrBuf::heap(Vec::with_capacity(n)) }
    }

    /// Takes `v`'s content: embedded (and `v` freed) when it is short enough.
    #[inline]
    pub fn from_vec(v: Vec<u8>) -> StrBuf {
        if v.len() <= INLINE_CAP {
            StrBuf::from_slice(&v)
        } else {
            StrBuf::heap(v)
        }
    }

    /// The heap form owning `v`'s buffer (embedded when `v` has no buffer).
    #[inline]
    fn heap(v: Vec<u8>) -> StrBuf {
        if v.capacity() == 0 {
            return StrBuf::new();
        }
        assert!(v.capacity() <= CAP_MASK, "String capacity too large");
        let mut v = ManuallyDrop::new(v);
        StrBuf { repr: Repr { heap: HeapForm { ptr: v.as_mut_ptr(), len: v.len(), cap_tag: v.capacity() | HEAP_TAG } } }
    }

    /// Runs `f` on the heap form's buffer as a Vec (which may grow or shrink it).
    ///
    /// # Safety
    /// The storage is in the heap form.
    #[inline]
    unsafe fn with_vec<R>(&mut self, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let h = self.repr.heap;
        // SAFETY: the heap form holds a Vec<u8>'s parts (see the module's invariants). The
        // Vec is not dropped: if `f` unwinds, the buffer leaks instead of being freed twice.
        let mut v = ManuallyDrop::new(Vec::from_raw_parts(h.ptr, h.len, h.cap_tag & CAP_MASK));
        let r = f(&mut v);
        self.repr.heap = HeapForm { ptr: v.as_mut_ptr(), len: v.len(), cap_tag: v.capacity() | HEAP_TAG };
        r
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        let t = self.tag();
        if t as usize <= INLINE_CAP {
            t as usize
        } else {
            // SAFETY: heap form.
            unsafe { self.repr.heap.len }
        }
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of out-of-line storage of its own (0 when embedded or shared), for malloc
    /// accounting.
    #[inline]
    pub fn heap_capacity(&self) -> usize {
        // SAFETY: heap form when the tag says so.
        if self.tag() == HEAP { unsafe { self.repr.heap.cap_tag & CAP_MASK } } else { 0 }
    }

    /// The address of the content in an out-of-line buffer (embedded content moves there
    /// first), which stays put while the String is not resized: for system calls that
    /// fill a String in.
    pub fn heap_mut_ptr(&mut self) -> *mut u8 {
        if self.is_embedded() {
            self.move_to_heap(0);
        } else if self.is_shared() {
            self.unshare(0);
        }
        // SAFETY: heap form now.
        unsafe { self.repr.heap.ptr }
    }

    /// Moves embedded content into a Vec with room for `extra` more bytes.
    #[cold]
    fn move_to_heap(&mut self, extra: usize) {
        let cur: &[u8] = self;
        let mut v = Vec::with_capacity((cur.len() + extra).max(2 * SIZE));
        v.extend_from_slice(cur);
        *self = StrBuf::heap(v);
    }

    /// Replaces the content.
    #[inline]
    pub fn set(&mut self, v: Vec<u8>) {
        *self = StrBuf::from_vec(v);
    }

    #[inline]
    pub fn extend_from_slice(&mut self, b: &[u8]) {
        if self.is_shared() {
            // `b` may be a view of this buffer: copy it before the view goes.
            let copy = b.to_vec();
            self.unshare(copy.len());
            return self.extend_from_slice(&copy);
        }
        let t = self.tag();
        if t != HEAP {
            let (len, n) = (t as usize, b.len());
            if len + n <= INLINE_CAP {
                // SAFETY: inline form with room; `copy` allows `b` to point into this
                // storage (it then lies in [0, len), before the destination).
                unsafe {
                    let base = self.repr.inline.as_mut_ptr();
                    std::ptr::copy(b.as_ptr(), base.add(len), n);
                    self.repr.inline[TAG] = (len + n) as u8;
                }
                return;
            }
            // Build the whole new buffer before the storage is overwritten: `b` may point
            // into it.
            let mut v = Vec::with_capacity((len + n).max(2 * SIZE));
            v.extend_from_slice(&self[..]);
            v.extend_from_slice(b);
            *self = StrBuf::heap(v);
            return;
        }
        // SAFETY: heap form. A `b` inside this buffer is copied first: growing the buffer
        // would free it.
        unsafe {
            self.with_vec(|v| {
                let start = v.as_ptr() as usize;
                if (start..start + v.capacity()).contains(&(b.as_ptr() as usize)) {
                    let copy = b.to_vec();
                    v.extend_from_slice(&copy);
                } else {
                    v.extend_from_slice(b);
                }
            })
        }
    }

    #[inline]
    pub fn push(&mut self, byte: u8) {
        self.extend_from_slice(&[byte]);
    }

    /// Makes room for `extra` more bytes (the content moves to the heap when it will not
    /// fit in the slot).
    pub fn reserve(&mut self, extra: usize) {
        if self.is_embedded() {
            if self.len() + extra > INLINE_CAP {
                self.move_to_heap(extra);
            }
        } else if self.is_shared() {
            self.unshare(extra);
        } else {
            // SAFETY: heap form.
            unsafe { self.with_vec(|v| v.reserve(extra)) }
        }
    }

    /// The content followed by a NUL byte, for C callers: the NUL is written in spare room
    /// (embedded bytes past the length, or the heap buffer's spare capacity), never in the
    /// content or the tag.
    pub fn as_c_ptr(&mut self) -> *const u8 {
        let n = self.len();
        if self.is_embedded() && n < INLINE_CAP {
            // SAFETY: embedded form; n < INLINE_CAP = TAG, so the byte is not the tag.
            unsafe {
                self.repr.inline[n] = 0;
                return self.repr.inline.as_ptr();
            }
        }
        if self.is_shared() {
            self.unshare(1);
        }
        self.reserve(1);
        // SAFETY: heap form now (reserve moved full embedded content out, a shared view
        // was copied), with capacity past n.
        unsafe {
            let p = self.repr.heap.ptr;
            *p.add(n) = 0;
            p
        }
    }

    pub fn truncate(&mut self, n: usize) {
        if self.is_embedded() {
            if n < self.len() {
                // SAFETY: inline form; n < len <= INLINE_CAP.
                unsafe { self.repr.inline[TAG] = n as u8 };
            }
        } else if n < self.len() {
            // Heap or shared form (writing a field of a union is safe); n is below the
            // length.
            self.repr.heap.len = n;
        }
    }

    pub fn clear(&mut self) {
        self.truncate(0);
    }

    /// Removes the first `n` bytes (n <= len).
    pub fn remove_prefix(&mut self, n: usize) {
        if self.is_embedded() {
            let len = self.len();
            debug_assert!(n <= len);
            // SAFETY: inline form; n <= len <= INLINE_CAP.
            unsafe {
                self.repr.inline.copy_within(n..len, 0);
                self.repr.inline[TAG] = (len - n) as u8;
            }
        } else if self.is_shared() {
            // SAFETY: shared form: the view narrows to bytes it had (n <= len).
            unsafe {
                self.repr.heap.ptr = self.repr.heap.ptr.add(n);
                self.repr.heap.len -= n;
            }
        } else {
            // SAFETY: heap form.
            unsafe { self.with_vec(|v| drop(v.drain(..n))) };
        }
    }

    /// Replaces the bytes in `range` with `with` (which may point into this storage).
    pub fn splice(&mut self, range: Range<usize>, with: &[u8]) {
        let len = self.len();
        let new_len = len - range.len() + with.len();
        if self.is_embedded() && new_len <= INLINE_CAP {
            let mut tmp = [0u8; INLINE_CAP];
            tmp[..range.start].copy_from_slice(&self[..range.start]);
            tmp[range.start..range.start + with.len()].copy_from_slice(with);
            tmp[range.start + with.len()..new_len].copy_from_slice(&self[range.end..len]);
            *self = StrBuf::from_slice(&tmp[..new_len]);
            return;
        }
        let mut v = Vec::with_capacity(new_len);
        v.extend_from_slice(&self[..range.start]);
        v.extend_from_slice(with);
        v.extend_from_slice(&self[range.end..]);
        self.set(v);
    }
}

impl Default for StrBuf {
    fn default() -> StrBuf {
        StrBuf::new()
    }
}

impl Drop for StrBuf {
    #[inline]
    fn drop(&mut self) {
        if self.is_shared() {
            // SAFETY: shared form, dropped once.
            unsafe { self.release_shared() };
        } else if !self.is_embedded() {
            // SAFETY: heap form: the buffer is owned here and freed once, as the Vec it was.
            unsafe {
                let h = self.repr.heap;
                drop(Vec::from_raw_parts(h.ptr, h.len, h.cap_tag & CAP_MASK));
            }
        }
    }
}

impl Deref for StrBuf {
    type Target = [u8];
    #[inline(always)]
    fn deref(&self) -> &[u8] {
        let t = self.tag();
        // SAFETY: the tag says which form is initialised; an inline length is <= INLINE_CAP,
        // a heap or shared form's pointer and length describe its content.
        unsafe {
            if t as usize <= INLINE_CAP {
                self.repr.inline.get_unchecked(..t as usize)
            } else {
                std::slice::from_raw_parts(self.repr.heap.ptr, self.repr.heap.len)
            }
        }
    }
}

impl DerefMut for StrBuf {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [u8] {
        if self.is_shared() {
            self.unshare(0);
        }
        let t = self.tag();
        // SAFETY: as in `deref` (not shared now).
        unsafe {
            if t != HEAP {
                self.repr.inline.get_unchecked_mut(..t as usize)
            } else {
                std::slice::from_raw_parts_mut(self.repr.heap.ptr, self.repr.heap.len)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_content_stays_embedded() {
        let mut s = StrBuf::from_slice(b"hello");
        assert!(s.is_embedded());
        s.extend_from_slice(b", world");
        assert_eq!(&s[..], b"hello, world");
        assert!(s.is_embedded());
        s.truncate(5);
        s.remove_prefix(1);
        assert_eq!(&s[..], b"ello");
        s.splice(1..3, b"XYZ");
        assert_eq!(&s[..], b"eXYZo");
        assert!(s.is_embedded());
        assert_eq!(s.heap_capacity(), 0);
    }

    #[test]
    fn growth_moves_to_heap() {
        let mut s = StrBuf::from_slice(&[b'a'; INLINE_CAP]);
        assert!(s.is_embedded());
        s.push(b'b');
        assert!(!s.is_embedded());
        assert_eq!(s.len(), INLINE_CAP + 1);
        assert_eq!(s[INLINE_CAP], b'b');
        s.set(b"short".to_vec());
        assert!(s.is_embedded());
        assert_eq!(&s[..], b"short");
    }

    #[test]
    fn append_own_content_in_both_forms() {
        // Callers pass a copy of the String's own bytes (see the module's invariants).
        let mut s = StrBuf::from_slice(b"abc");
        let copy = s.to_vec();
        s.extend_from_slice(&copy);
        assert_eq!(&s[..], b"abcabc");
        for _ in 0..5 {
            let copy = s.to_vec();
            s.extend_from_slice(&copy);
        }
        assert_eq!(s.len(), 6 * 32);
        assert!(s[..].chunks(3).all(|c| c == b"abc"));
        let copy = s[1..4].to_vec();
        s.splice(0..s.len(), &copy);
        assert_eq!(&s[..], b"bca");
    }

    #[test]
    fn shared_views_copy_on_change() {
        let text: Vec<u8> = (0..100u8).collect();
        let mut src = StrBuf::from_slice(&text);
        let mut a = src.share_range(10..60);
        let b = src.share_range(0..5);
        assert!(src.is_shared() && a.is_shared() && b.is_embedded());
        assert_eq!(&a[..], &text[10..60]);
        assert_eq!(src.heap_capacity(), 0);
        // Narrowing keeps the view; a change copies.
        a.remove_prefix(5);
        a.truncate(30);
        assert!(a.is_shared());
        assert_eq!(&a[..], &text[15..45]);
        let mut c = a.share_range(0..30);
        a.push(b'!');
        assert!(!a.is_shared());
        assert_eq!(&a[..30], &text[15..45]);
        assert_eq!(a[30], b'!');
        c[0] = 0xff;
        assert!(!c.is_shared());
        assert_eq!(src[15], 15);
        drop(src);
        let own = c.to_vec();
        assert_eq!(own[1..], text[16..45]);
        let mut d = StrBuf::from_slice(&text);
        let e = d.share_range(0..100);
        drop(e);
        let p = d.as_c_ptr();
        assert!(!d.is_shared());
        // SAFETY: as_c_ptr wrote a NUL after the content.
        assert_eq!(unsafe { *p.add(100) }, 0);
    }

    #[test]
    fn heap_form_keeps_content() {
        let mut s = StrBuf::from_slice(b"xy");
        let p = s.heap_mut_ptr();
        assert!(!s.is_embedded());
        assert_eq!(p as *const u8, s.as_ptr());
        s.extend_from_slice(b"z");
        assert_eq!(&s[..], b"xyz");
        s.remove_prefix(1);
        assert_eq!(&s[..], b"yz");
        s.reserve(100);
        s.truncate(1);
        assert_eq!(&s[..], b"y");
        assert!(s.heap_capacity() >= 101);
    }
}
