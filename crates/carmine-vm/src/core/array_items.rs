//! The Array object and its element storage: a few elements inside the object's slot (no
//! allocation of their own), more in a `Vec<Value>` whose first `head` slots have been
//! shifted out, so that `shift` and `unshift` cost O(1) amortized (a queue built with
//! `push`/`shift`, or a list with `unshift`, is linear instead of quadratic).
//!
//! Invariants:
//! - An Array takes a 40-byte slot (`SMALL_SLOT_SIZE`: 3 words after the header) unless it
//!   was made with 4 to `EMBED_LARGE` elements, which take a 64-byte slot (6 words);
//!   `LARGE` in `aux` says which. The struct declares the small slot's words only, so
//!   that a reference to it never claims bytes past a 40-byte slot; a 64-byte slot's
//!   further words are reached through `inline_ptr`.
//! - `aux` says the form: with `EMBEDDED` set, the elements are the first `aux & LOW`
//!   words of the slot; otherwise `store.vec` (three words, in any slot) holds the buffer
//!   and the elements are `vec[head..]`, `head` being `aux & LOW`. `RArray` derefs to
//!   exactly the elements, and the GC marks only them.
//! - Heap form: slots before `head` hold `Value::NIL` (a shifted element is never kept
//!   alive by them); `head` stays below `LOW` (a longer run of shifts compacts).
//!   Operations whose Vec semantics need the elements at index 0 (`drain`, `splice`,
//!   `retain`, `vec_mut`) first move them there (`compact`, which also moves embedded
//!   elements into a Vec): O(n) once after a run of shifts, never per element.
//! - `push` compacts instead of growing when the buffer is full and `head` > 0, so a queue's
//!   buffer stays within twice its longest length.
//! - Content moves from the embedded form to the heap form when it outgrows the slot (or a
//!   Vec operation needs it) and back only through `replace_vec` / `clear`.
//! - Stores into an Array outside `core::array` go through `RArray::items_mut`, whose guard
//!   runs the collector's write barrier (see `crate::core::array`).

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut, RangeBounds};

use crate::heap::page::{SLOT_SIZE, SMALL_SLOT_SIZE};
use crate::object::RBasic;
use crate::value::Value;

/// Elements a 40-byte slot holds inside (what it has beside the header).
pub const EMBED_SMALL: usize = (SMALL_SLOT_SIZE - std::mem::size_of::<RBasic>()) / 8;
/// Elements a 64-byte slot holds inside.
pub const EMBED_LARGE: usize = (SLOT_SIZE - std::mem::size_of::<RBasic>()) / 8;
const EMBEDDED: u32 = 1 << 31;
const LARGE: u32 = 1 << 30;
const LOW: u32 = LARGE - 1;

#[repr(C)]
union Store {
    vec: ManuallyDrop<Vec<Value>>,
    inline: [Value; EMBED_SMALL],
}

#[repr(C)]
pub struct RArray {
    pub basic: RBasic,
    store: Store,
}

const _: () = assert!(std::mem::size_of::<Store>() == EMBED_SMALL * 8);
const _: () = assert!(std::mem::size_of::<RArray>() == SMALL_SLOT_SIZE);

impl Deref for RArray {
    type Target = [Value];
    #[inline(always)]
    fn deref(&self) -> &[Value] {
        let aux = self.basic.aux;
        // SAFETY: `aux` says which form is initialised (see the module's invariants): an
        // embedded length is within the slot's words, a heap head <= vec.len().
        unsafe {
            if aux & EMBEDDED != 0 {
                std::slice::from_raw_parts(self.inline_ptr(), (aux & LOW) as usize)
            } else {
                self.store.vec.get_unchecked((aux & LOW) as usize..)
            }
        }
    }
}

impl DerefMut for RArray {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Value] {
        let aux = self.basic.aux;
        // SAFETY: as in `deref`.
        unsafe {
            if aux & EMBEDDED != 0 {
                std::slice::from_raw_parts_mut(self.inline_ptr(), (aux & LOW) as usize)
            } else {
                (*self.store.vec).get_unchecked_mut((aux & LOW) as usize..)
            }
        }
    }
}

impl Extend<Value> for RArray {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        self.heap_vec().extend(iter)
    }
}

impl<'a> Extend<&'a Value> for RArray {
    fn extend<I: IntoIterator<Item = &'a Value>>(&mut self, iter: I) {
        self.heap_vec().extend(iter)
    }
}

impl RArray {
    /// Initialises a fresh slot's storage with a copy of `s` (`s.len()` at most the
    /// slot's embedded capacity).
    ///
    /// # Safety
    /// `p` is a fresh Array slot, 64 bytes when `large`.
    #[inline]
    pub unsafe fn init_slice(p: *mut RArray, s: &[Value], large: bool) {
        debug_assert!(s.len() <= if large { EMBED_LARGE } else { EMBED_SMALL });
        (*p).basic.aux = EMBEDDED | if large { LARGE } else { 0 } | s.len() as u32;
        std::ptr::copy_nonoverlapping(s.as_ptr(), (*p).inline_ptr(), s.len());
    }

    /// Initialises a fresh small slot's storage with `v`'s elements (embedded, and `v`
    /// freed, when they fit and no room is reserved beyond the slot's).
    ///
    /// # Safety
    /// `p` is a fresh Array slot of 40 bytes.
    #[inline]
    pub unsafe fn init_vec(p: *mut RArray, v: Vec<Value>) {
        if v.capacity() <= EMBED_SMALL {
            Self::init_slice(p, &v, false);
        } else {
            (*p).basic.aux = 0;
            std::ptr::addr_of_mut!((*p).store).write(Store { vec: ManuallyDrop::new(v) });
        }
    }

    /// The first word after the header (the embedded elements).
    #[inline(always)]
    fn inline_ptr(&self) -> *mut Value {
        std::ptr::addr_of!(self.store) as *mut Value
    }

    #[inline(always)]
    fn embed_cap(&self) -> usize {
        if self.basic.aux & LARGE != 0 { EMBED_LARGE } else { EMBED_SMALL }
    }

    #[inline(always)]
    fn is_embedded(&self) -> bool {
        self.basic.aux & EMBEDDED != 0
    }

    /// Heap form: the index of the first element in the Vec.
    #[inline(always)]
    fn head(&self) -> usize {
        (self.basic.aux & LOW) as usize
    }

    #[inline(always)]
    fn set_low(&mut self, n: usize) {
        debug_assert!(n <= LOW as usize);
        self.basic.aux = (self.basic.aux & !LOW) | n as u32;
    }

    /// Heap form: the Vec.
    #[inline(always)]
    fn vec(&mut self) -> &mut Vec<Value> {
        debug_assert!(!self.is_embedded());
        // SAFETY: heap form (callers check).
        unsafe { &mut self.store.vec }
    }

    /// The heap form's Vec (the elements are `[head..]`), moving embedded elements into
    /// one first.
    fn heap_vec(&mut self) -> &mut Vec<Value> {
        if self.is_embedded() {
            // A power of two, as a Vec grown from empty has: an Array grown by `push` to a
            // million elements then has the same buffer (2^20, not 1.25 * 2^20).
            let mut v = Vec::with_capacity((2 * self.embed_cap()).next_power_of_two());
            v.extend_from_slice(self);
            // SAFETY: the store's three words take the Vec (in either slot size).
            unsafe { std::ptr::addr_of_mut!(self.store).write(Store { vec: ManuallyDrop::new(v) }) };
            self.basic.aux &= LARGE;
        }
        self.vec()
    }

    /// Moves the elements to the start of a Vec buffer.
    fn compact(&mut self) -> &mut Vec<Value> {
        let embedded = self.is_embedded();
        let head = self.head();
        let v = self.heap_vec();
        if !embedded && head > 0 {
            v.drain(..head);
        }
        self.set_low(0);
        self.vec()
    }

    /// Sets the heap form's head, compacting when it would not fit in `aux`.
    #[inline]
    fn set_head(&mut self, h: usize) {
        if h >= LOW as usize {
            let v = self.vec();
            let k = h.min(v.len());
            v.drain(..k);
            self.set_low(0);
        } else {
            self.set_low(h);
        }
    }

    /// The elements as a Vec (for the operations this type does not offer).
    pub fn vec_mut(&mut self) -> &mut Vec<Value> {
        self.compact()
    }

    /// Takes the elements out, leaving the Array empty.
    pub fn take_vec(&mut self) -> Vec<Value> {
        let v = std::mem::take(self.compact());
        self.clear();
        v
    }

    /// Replaces the elements by `v`'s (embedded when they fit and `v` reserves no more
    /// room than the slot has).
    pub fn replace_vec(&mut self, v: Vec<Value>) {
        self.free_heap();
        let large = self.basic.aux & LARGE;
        if v.capacity() <= self.embed_cap() {
            self.basic.aux = EMBEDDED | large | v.len() as u32;
            // SAFETY: the slot has room for v.len() <= embed_cap() values.
            unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), self.inline_ptr(), v.len()) };
        } else {
            self.basic.aux = large;
            // SAFETY: the store's three words take the Vec.
            unsafe { std::ptr::addr_of_mut!(self.store).write(Store { vec: ManuallyDrop::new(v) }) };
        }
    }

    /// Frees the heap form's buffer (the storage is then uninitialised until rewritten).
    fn free_heap(&mut self) {
        if !self.is_embedded() {
            // SAFETY: heap form: the Vec is owned here and dropped once; callers rewrite
            // the form before it is read again.
            unsafe { ManuallyDrop::drop(&mut self.store.vec) };
            self.basic.aux = EMBEDDED | (self.basic.aux & LARGE);
        }
    }

    /// Frees the storage of a dead Array.
    ///
    /// # Safety
    /// `p` is a dead Array slot, not used as an object again.
    pub unsafe fn finalize(p: *mut RArray) {
        (*p).free_heap();
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        let aux = self.basic.aux;
        if aux & EMBEDDED != 0 {
            (aux & LOW) as usize
        } else {
            // SAFETY: heap form.
            unsafe { self.store.vec.len() - (aux & LOW) as usize }
        }
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer's size in elements (for malloc accounting).
    #[inline]
    pub fn capacity(&self) -> usize {
        // SAFETY: heap form when not embedded.
        if self.is_embedded() { self.embed_cap() } else { unsafe { self.store.vec.capacity() } }
    }

    /// Bytes of the buffer (for `ObjectSpace.memsize_of`; 0 when embedded).
    pub fn heap_bytes(&self) -> usize {
        if self.is_embedded() { 0 } else { self.capacity() * std::mem::size_of::<Value>() }
    }

    /// Appends `v` when the buffer has room for it (no allocation, no move); false otherwise.
    #[inline(always)]
    pub fn push_in_place(&mut self, v: Value) -> bool {
        if self.is_embedded() {
            let n = (self.basic.aux & LOW) as usize;
            if n < self.embed_cap() {
                // SAFETY: embedded form with room.
                unsafe { self.inline_ptr().add(n).write(v) };
                self.basic.aux += 1;
                return true;
            }
            return false;
        }
        let vec = self.vec();
        let n = vec.len();
        if n < vec.capacity() {
            // SAFETY: within the capacity; the slot is initialized before the length covers it.
            unsafe {
                vec.as_mut_ptr().add(n).write(v);
                vec.set_len(n + 1);
            }
            return true;
        }
        false
    }

    #[inline]
    pub fn push(&mut self, v: Value) {
        if self.push_in_place(v) {
            return;
        }
        if !self.is_embedded() && self.head() > 0 {
            // A full heap buffer with free room before its head: move the elements down.
            self.compact();
        }
        self.heap_vec().push(v);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        if self.is_embedded() {
            self.basic.aux -= 1;
            // SAFETY: embedded form; the new length indexes the last element.
            return Some(unsafe { *self.inline_ptr().add((self.basic.aux & LOW) as usize) });
        }
        let v = self.vec().pop();
        if self.is_empty() {
            self.clear();
        }
        v
    }

    /// Removes and returns the first element in O(1).
    #[inline]
    pub fn pop_front(&mut self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        if self.is_embedded() {
            let v = self[0];
            self.remove_embedded(0..1);
            return Some(v);
        }
        let h = self.head();
        let v = std::mem::replace(&mut self.vec()[h], Value::NIL);
        self.set_head(h + 1);
        if self.is_empty() {
            self.clear();
        }
        Some(v)
    }

    /// Removes `r` from embedded elements.
    fn remove_embedded(&mut self, r: std::ops::Range<usize>) {
        let n = (self.basic.aux & LOW) as usize;
        let p = self.inline_ptr();
        // SAFETY: embedded form; r lies within the first n elements.
        unsafe {
            std::ptr::copy(p.add(r.end), p.add(r.start), n - r.end);
            for k in n - r.len()..n {
                p.add(k).write(Value::NIL);
            }
        }
        self.basic.aux -= r.len() as u32;
    }

    /// Removes and returns the first `k` elements (k <= len) without moving the rest.
    pub fn shift_n(&mut self, k: usize) -> Vec<Value> {
        let out = self[..k].to_vec();
        if self.is_embedded() {
            self.remove_embedded(0..k);
            return out;
        }
        let h = self.head();
        self.vec()[h..h + k].fill(Value::NIL);
        self.set_head(h + k);
        if self.is_empty() {
            self.clear();
        }
        out
    }

    pub fn remove(&mut self, i: usize) -> Value {
        if i == 0 {
            if let Some(v) = self.pop_front() {
                return v;
            }
        }
        if self.is_embedded() {
            let v = self[i];
            self.remove_embedded(i..i + 1);
            return v;
        }
        let h = self.head();
        self.vec().remove(h + i)
    }

    pub fn insert(&mut self, i: usize, v: Value) {
        if i == 0 {
            self.prepend(&[v]);
        } else {
            self.heap_vec();
            let h = self.head();
            self.vec().insert(h + i, v);
        }
    }

    /// Inserts `vals` before the first element, O(len(vals)) amortized: the buffer keeps
    /// room in front after it has to grow there.
    pub fn prepend(&mut self, vals: &[Value]) {
        let k = vals.len();
        if k == 0 {
            return;
        }
        if self.is_embedded() || self.head() < k {
            let len = self.len();
            let room = (k + (len / 2).max(4)).min(LOW as usize - 1);
            if room < k {
                self.compact().splice(0..0, vals.iter().copied());
                return;
            }
            let mut v = Vec::with_capacity(room + len + len / 2);
            v.resize(room, Value::NIL);
            v.extend_from_slice(self);
            self.free_heap();
            // SAFETY: the store's three words take the Vec.
            unsafe { std::ptr::addr_of_mut!(self.store).write(Store { vec: ManuallyDrop::new(v) }) };
            self.basic.aux &= LARGE;
            self.set_low(room);
        }
        let h = self.head() - k;
        self.set_low(h);
        self.vec()[h..h + k].copy_from_slice(vals);
    }

    pub fn split_off(&mut self, at: usize) -> Vec<Value> {
        if self.is_embedded() {
            let tail = self[at..].to_vec();
            self.truncate(at);
            return tail;
        }
        let h = self.head();
        let tail = self.vec().split_off(h + at);
        if self.is_empty() {
            self.clear();
        }
        tail
    }

    pub fn extend_from_slice(&mut self, s: &[Value]) {
        let n = self.len();
        if self.is_embedded() && n + s.len() <= self.embed_cap() {
            // SAFETY: embedded form with room for s.
            unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), self.inline_ptr().add(n), s.len()) };
            self.basic.aux += s.len() as u32;
            return;
        }
        self.heap_vec().extend_from_slice(s);
    }

    pub fn truncate(&mut self, n: usize) {
        if self.is_embedded() {
            let len = (self.basic.aux & LOW) as usize;
            if n < len {
                self.remove_embedded(n..len);
            }
            return;
        }
        let h = self.head();
        self.vec().truncate(h + n);
        if self.is_empty() {
            self.clear();
        }
    }

    pub fn clear(&mut self) {
        if self.is_embedded() {
            self.basic.aux &= !LOW;
        } else {
            self.vec().clear();
            self.set_low(0);
        }
    }

    pub fn resize(&mut self, n: usize, v: Value) {
        if self.is_embedded() && n <= self.embed_cap() {
            let len = (self.basic.aux & LOW) as usize;
            if n > len {
                for k in len..n {
                    // SAFETY: embedded form; k < n <= the slot's capacity.
                    unsafe { self.inline_ptr().add(k).write(v) };
                }
                self.set_low(n);
            } else {
                self.truncate(n);
            }
            return;
        }
        self.heap_vec();
        let h = self.head();
        self.vec().resize(h + n, v);
    }

    pub fn reserve(&mut self, n: usize) {
        if self.is_embedded() && self.len() + n <= self.embed_cap() {
            return;
        }
        self.heap_vec().reserve(n);
    }

    pub fn shrink_to_fit(&mut self) {
        if !self.is_embedded() {
            self.compact().shrink_to_fit();
        }
    }

    pub fn retain(&mut self, f: impl FnMut(&Value) -> bool) {
        self.compact().retain(f);
    }

    pub fn drain<R: RangeBounds<usize>>(&mut self, r: R) -> std::vec::Drain<'_, Value> {
        self.compact().drain(r)
    }

    pub fn splice<R: RangeBounds<usize>, I: IntoIterator<Item = Value>>(&mut self, r: R, with: I) -> std::vec::Splice<'_, I::IntoIter> {
        self.compact().splice(r, with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-byte, 8-aligned buffer standing in for a slot.
    #[repr(C, align(8))]
    struct Slot([u8; SLOT_SIZE]);

    fn ints(a: &RArray) -> Vec<i64> {
        a.iter().map(|v| v.as_fixnum().unwrap()).collect()
    }

    fn make<'a>(slot: &'a mut Slot, vals: &[i64], large: bool) -> &'a mut RArray {
        let p = slot as *mut Slot as *mut RArray;
        let vals: Vec<Value> = vals.iter().map(|&i| Value::fixnum(i)).collect();
        // SAFETY: the buffer is a zeroed 64-byte slot.
        unsafe {
            RArray::init_slice(p, &vals, large);
            &mut *p
        }
    }

    #[test]
    fn embedded_until_full_then_heap() {
        let mut slot = Slot([0; SLOT_SIZE]);
        let a = make(&mut slot, &[], false);
        for i in 0..EMBED_SMALL as i64 {
            a.push(Value::fixnum(i));
        }
        assert!(a.is_embedded());
        assert_eq!(a.heap_bytes(), 0);
        a.push(Value::fixnum(99));
        assert!(!a.is_embedded());
        assert_eq!(a.len(), EMBED_SMALL + 1);
        assert_eq!(a.pop_front().and_then(|v| v.as_fixnum()), Some(0));
        a.prepend(&[Value::fixnum(-1)]);
        assert_eq!(ints(a), vec![-1, 1, 2, 99]);
        assert_eq!(a.remove(1).as_fixnum(), Some(1));
        a.insert(1, Value::fixnum(5));
        assert_eq!(ints(a), vec![-1, 5, 2, 99]);
        a.replace_vec(vec![Value::fixnum(7)]);
        assert!(a.is_embedded());
        assert_eq!(ints(a), vec![7]);
        // SAFETY: the slot is not used again.
        unsafe { RArray::finalize(a) };
    }

    #[test]
    fn large_slot_embeds_six() {
        let mut slot = Slot([0; SLOT_SIZE]);
        let a = make(&mut slot, &[1, 2, 3, 4, 5], true);
        a.push(Value::fixnum(6));
        assert!(a.is_embedded());
        assert_eq!(ints(a), vec![1, 2, 3, 4, 5, 6]);
        a.push(Value::fixnum(7));
        assert!(!a.is_embedded());
        assert_eq!(ints(a), vec![1, 2, 3, 4, 5, 6, 7]);
        // SAFETY: the slot is not used again.
        unsafe { RArray::finalize(a) };
    }

    #[test]
    fn embedded_operations() {
        let mut slot = Slot([0; SLOT_SIZE]);
        let a = make(&mut slot, &[1, 2, 3], false);
        assert!(a.is_embedded());
        assert_eq!(a.pop_front().and_then(|v| v.as_fixnum()), Some(1));
        assert_eq!(ints(a), vec![2, 3]);
        a.extend_from_slice(&[Value::fixnum(4)]);
        assert_eq!(ints(a), vec![2, 3, 4]);
        a.resize(5, Value::fixnum(0));
        assert_eq!(ints(a), vec![2, 3, 4, 0, 0]);
        assert_eq!(a.shift_n(2).len(), 2);
        assert_eq!(ints(a), vec![4, 0, 0]);
        assert_eq!(a.split_off(1).len(), 2);
        assert_eq!(ints(a), vec![4]);
        a.insert(1, Value::fixnum(7));
        assert_eq!(ints(a), vec![4, 7]);
        let d: Vec<Value> = a.drain(..1).collect();
        assert_eq!(d.len(), 1);
        assert_eq!(ints(a), vec![7]);
        assert_eq!(a.pop().and_then(|v| v.as_fixnum()), Some(7));
        assert!(a.is_empty());
        // SAFETY: the slot is not used again.
        unsafe { RArray::finalize(a) };
    }
}
