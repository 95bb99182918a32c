//! The element storage of an Array: up to `EMBED` elements inside the object's slot (no
//! allocation of their own), more in a `Vec<Value>` whose first `head` slots have been
//! shifted out, so that `shift` and `unshift` cost O(1) amortized (a queue built with
//! `push`/`shift`, or a list with `unshift`, is linear instead of quadratic).
//!
//! Invariants:
//! - `head` says the form: with `EMBEDDED` set, the elements are `inline[..head & LEN]`;
//!   otherwise `vec` holds the buffer and the elements are `vec[head..]`. This type derefs
//!   to exactly the elements, and the GC marks only them.
//! - Heap form: slots before `head` hold `Value::NIL` (a shifted element is never kept
//!   alive by them). Operations whose Vec semantics need the elements at index 0 (`drain`,
//!   `splice`, `retain`, `vec_mut`) first move them there (`compact`, which also moves
//!   embedded elements into a Vec): O(n) once after a run of shifts, never per element.
//! - `push` compacts instead of growing when the buffer is full and `head` > 0, so a queue's
//!   buffer stays within twice its longest length.
//! - Content moves from the embedded form to the heap form when it outgrows `EMBED` (or a
//!   Vec operation needs it) and never back, except through `From<Vec>` / `clear`.

use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut, RangeBounds};

use crate::value::Value;

/// Elements kept inside the slot: what an `RArray` slot has beside the header and `head`.
pub const EMBED: usize = 5;
const EMBEDDED: usize = 1 << (usize::BITS - 1);
const LEN: usize = EMBEDDED - 1;

#[repr(C)]
union Store {
    vec: ManuallyDrop<Vec<Value>>,
    inline: [Value; EMBED],
}

pub struct Items {
    store: Store,
    head: usize,
}

impl Default for Items {
    fn default() -> Items {
        Items::new()
    }
}

impl From<Vec<Value>> for Items {
    /// Embeds short content unless the Vec has room reserved for more.
    #[inline]
    fn from(vec: Vec<Value>) -> Items {
        if vec.capacity() <= EMBED {
            return Items::from_slice(&vec);
        }
        Items { store: Store { vec: ManuallyDrop::new(vec) }, head: 0 }
    }
}

impl Deref for Items {
    type Target = [Value];
    #[inline(always)]
    fn deref(&self) -> &[Value] {
        // SAFETY: `head` says which form is initialised (see the module's invariants);
        // an embedded length is <= EMBED, a heap head <= vec.len().
        unsafe {
            if self.head & EMBEDDED != 0 {
                self.store.inline.get_unchecked(..self.head & LEN)
            } else {
                self.store.vec.get_unchecked(self.head..)
            }
        }
    }
}

impl DerefMut for Items {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Value] {
        // SAFETY: as in `deref`.
        unsafe {
            if self.head & EMBEDDED != 0 {
                self.store.inline.get_unchecked_mut(..self.head & LEN)
            } else {
                let h = self.head;
                (*self.store.vec).get_unchecked_mut(h..)
            }
        }
    }
}

impl Drop for Items {
    fn drop(&mut self) {
        if !self.is_embedded() {
            // SAFETY: heap form: the Vec is owned here and dropped once.
            unsafe { ManuallyDrop::drop(&mut self.store.vec) }
        }
    }
}

impl Clone for Items {
    fn clone(&self) -> Items {
        Items::from_slice(self)
    }
}

impl Extend<Value> for Items {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        self.heap_vec().extend(iter)
    }
}

impl<'a> Extend<&'a Value> for Items {
    fn extend<I: IntoIterator<Item = &'a Value>>(&mut self, iter: I) {
        self.heap_vec().extend(iter)
    }
}

impl Items {
    pub const fn new() -> Items {
        Items { store: Store { inline: [Value::NIL; EMBED] }, head: EMBEDDED }
    }

    /// A copy of `s`: embedded when it fits.
    #[inline]
    pub fn from_slice(s: &[Value]) -> Items {
        if s.len() <= EMBED {
            let mut inline = [Value::NIL; EMBED];
            inline[..s.len()].copy_from_slice(s);
            Items { store: Store { inline }, head: EMBEDDED | s.len() }
        } else {
            Items { store: Store { vec: ManuallyDrop::new(s.to_vec()) }, head: 0 }
        }
    }

    #[inline(always)]
    fn is_embedded(&self) -> bool {
        self.head & EMBEDDED != 0
    }

    /// The heap form's Vec (the elements are `[head..]`), moving embedded elements into
    /// one first.
    fn heap_vec(&mut self) -> &mut Vec<Value> {
        if self.is_embedded() {
            // A power of two, as a Vec grown from empty has: an Array grown by `push` to a
            // million elements then has the same buffer (2^20, not 1.25 * 2^20).
            let mut v = Vec::with_capacity((2 * EMBED).next_power_of_two());
            v.extend_from_slice(self);
            self.store = Store { vec: ManuallyDrop::new(v) };
            self.head = 0;
        }
        // SAFETY: heap form now.
        unsafe { &mut self.store.vec }
    }

    /// Moves the elements to the start of a Vec buffer.
    fn compact(&mut self) -> &mut Vec<Value> {
        let head = self.head;
        let v = self.heap_vec();
        if head > 0 && head & EMBEDDED == 0 {
            v.drain(..head);
        }
        self.head = 0;
        // SAFETY: heap form (made by `heap_vec`).
        unsafe { &mut self.store.vec }
    }

    /// The elements as a Vec (for the operations this type does not offer).
    pub fn vec_mut(&mut self) -> &mut Vec<Value> {
        self.compact()
    }

    pub fn into_vec(mut self) -> Vec<Value> {
        std::mem::take(self.compact())
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        if self.is_embedded() {
            self.head & LEN
        } else {
            // SAFETY: heap form.
            unsafe { self.store.vec.len() - self.head }
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
        if self.is_embedded() { EMBED } else { unsafe { self.store.vec.capacity() } }
    }

    /// Bytes of the buffer (for `ObjectSpace.memsize_of`; 0 when embedded).
    pub fn heap_bytes(&self) -> usize {
        if self.is_embedded() { 0 } else { self.capacity() * std::mem::size_of::<Value>() }
    }

    #[inline]
    pub fn push(&mut self, v: Value) {
        if self.is_embedded() {
            let n = self.head & LEN;
            if n < EMBED {
                // SAFETY: embedded form with room.
                unsafe { self.store.inline[n] = v };
                self.head += 1;
                return;
            }
        } else if self.head > 0 {
            // SAFETY: heap form.
            let full = unsafe { self.store.vec.len() == self.store.vec.capacity() };
            if full {
                self.compact();
            }
        }
        self.heap_vec().push(v);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        if self.is_embedded() {
            self.head -= 1;
            // SAFETY: embedded form; the new length indexes the last element.
            return Some(unsafe { self.store.inline[self.head & LEN] });
        }
        let v = self.heap_vec().pop();
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
        let h = self.head;
        let v = std::mem::replace(&mut self.heap_vec()[h], Value::NIL);
        self.head += 1;
        if self.is_empty() {
            self.clear();
        }
        Some(v)
    }

    /// Removes `r` from embedded elements.
    fn remove_embedded(&mut self, r: std::ops::Range<usize>) {
        let n = self.head & LEN;
        // SAFETY: embedded form; r lies within the first n elements.
        unsafe {
            self.store.inline.copy_within(r.end..n, r.start);
            self.store.inline[n - r.len()..n].fill(Value::NIL);
        }
        self.head -= r.len();
    }

    /// Removes and returns the first `k` elements (k <= len) without moving the rest.
    pub fn shift_n(&mut self, k: usize) -> Vec<Value> {
        let out = self[..k].to_vec();
        if self.is_embedded() {
            self.remove_embedded(0..k);
            return out;
        }
        let h = self.head;
        self.heap_vec()[h..h + k].fill(Value::NIL);
        self.head += k;
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
        self.heap_vec();
        let h = self.head;
        self.heap_vec().remove(h + i)
    }

    pub fn insert(&mut self, i: usize, v: Value) {
        if i == 0 {
            self.prepend(&[v]);
        } else {
            self.heap_vec();
            let h = self.head;
            self.heap_vec().insert(h + i, v);
        }
    }

    /// Inserts `vals` before the first element, O(len(vals)) amortized: the buffer keeps
    /// room in front after it has to grow there.
    pub fn prepend(&mut self, vals: &[Value]) {
        let k = vals.len();
        if k == 0 {
            return;
        }
        if self.is_embedded() || self.head < k {
            let len = self.len();
            let room = k + (len / 2).max(4);
            let mut v = Vec::with_capacity(room + len + len / 2);
            v.resize(room, Value::NIL);
            v.extend_from_slice(self);
            *self = Items { store: Store { vec: ManuallyDrop::new(v) }, head: room };
        }
        self.head -= k;
        let h = self.head;
        self.heap_vec()[h..h + k].copy_from_slice(vals);
    }

    pub fn split_off(&mut self, at: usize) -> Vec<Value> {
        if self.is_embedded() {
            let tail = self[at..].to_vec();
            self.truncate(at);
            return tail;
        }
        let h = self.head;
        self.heap_vec().split_off(h + at)
    }

    pub fn extend_from_slice(&mut self, s: &[Value]) {
        let n = self.len();
        if self.is_embedded() && n + s.len() <= EMBED {
            // SAFETY: embedded form with room for s.
            unsafe { self.store.inline[n..n + s.len()].copy_from_slice(s) };
            self.head += s.len();
            return;
        }
        self.heap_vec().extend_from_slice(s);
    }

    pub fn truncate(&mut self, n: usize) {
        if self.is_embedded() {
            let len = self.head & LEN;
            if n < len {
                self.remove_embedded(n..len);
            }
            return;
        }
        let h = self.head;
        self.heap_vec().truncate(h + n);
        if self.is_empty() {
            self.clear();
        }
    }

    pub fn clear(&mut self) {
        if self.is_embedded() {
            *self = Items::new();
        } else {
            self.heap_vec().clear();
            self.head = 0;
        }
    }

    pub fn resize(&mut self, n: usize, v: Value) {
        if self.is_embedded() && n <= EMBED {
            let len = self.head & LEN;
            if n > len {
                // SAFETY: embedded form; n <= EMBED.
                unsafe { self.store.inline[len..n].fill(v) };
                self.head = EMBEDDED | n;
            } else {
                self.truncate(n);
            }
            return;
        }
        self.heap_vec();
        let h = self.head;
        self.heap_vec().resize(h + n, v);
    }

    pub fn reserve(&mut self, n: usize) {
        if self.is_embedded() && self.len() + n <= EMBED {
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

    fn ints(items: &Items) -> Vec<i64> {
        items.iter().map(|v| v.as_fixnum().unwrap()).collect()
    }

    #[test]
    fn embedded_until_full_then_heap() {
        let mut a = Items::new();
        for i in 0..EMBED as i64 {
            a.push(Value::fixnum(i));
        }
        assert!(a.is_embedded());
        assert_eq!(a.heap_bytes(), 0);
        a.push(Value::fixnum(99));
        assert!(!a.is_embedded());
        assert_eq!(a.len(), EMBED + 1);
        assert_eq!(a.pop_front().and_then(|v| v.as_fixnum()), Some(0));
        a.prepend(&[Value::fixnum(-1)]);
        assert_eq!(ints(&a), vec![-1, 1, 2, 3, 4, 99]);
    }

    #[test]
    fn embedded_operations() {
        let mut a = Items::from_slice(&[Value::fixnum(1), Value::fixnum(2), Value::fixnum(3)]);
        assert!(a.is_embedded());
        assert_eq!(a.pop_front().and_then(|v| v.as_fixnum()), Some(1));
        assert_eq!(ints(&a), vec![2, 3]);
        a.extend_from_slice(&[Value::fixnum(4)]);
        a.resize(5, Value::fixnum(0));
        assert_eq!(ints(&a), vec![2, 3, 4, 0, 0]);
        assert_eq!(a.shift_n(2).len(), 2);
        assert_eq!(ints(&a), vec![4, 0, 0]);
        assert_eq!(a.split_off(1).len(), 2);
        assert_eq!(ints(&a), vec![4]);
        a.insert(1, Value::fixnum(7));
        assert_eq!(ints(&a), vec![4, 7]);
        let d: Vec<Value> = a.drain(..1).collect();
        assert_eq!(d.len(), 1);
        assert_eq!(ints(&a), vec![7]);
        assert_eq!(a.pop().and_then(|v| v.as_fixnum()), Some(7));
        assert!(a.is_empty());
    }
}
