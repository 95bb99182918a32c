//! The element storage of an Array: a `Vec<Value>` whose first `head` slots have been
//! shifted out, so that `shift` and `unshift` cost O(1) amortized (a queue built with
//! `push`/`shift`, or a list with `unshift`, is linear instead of quadratic).
//!
//! Invariants:
//! - The elements are `vec[head..]`; this type derefs to exactly that slice, and the GC
//!   marks only it.
//! - Slots before `head` hold `Value::NIL` (a shifted element is never kept alive by them).
//! - Operations whose Vec semantics need the elements at index 0 (`drain`, `splice`,
//!   `retain`, `vec_mut`) first move them there (`compact`): O(n) once after a run of
//!   shifts, never per element.
//! - `push` compacts instead of growing when the buffer is full and `head` > 0, so a queue's
//!   buffer stays within twice its longest length.

use std::ops::{Deref, DerefMut, RangeBounds};

use crate::value::Value;

#[derive(Default)]
pub struct Items {
    vec: Vec<Value>,
    head: usize,
}

impl From<Vec<Value>> for Items {
    #[inline]
    fn from(vec: Vec<Value>) -> Items {
        Items { vec, head: 0 }
    }
}

impl Deref for Items {
    type Target = [Value];
    #[inline(always)]
    fn deref(&self) -> &[Value] {
        // SAFETY: head <= vec.len() always holds.
        unsafe { self.vec.get_unchecked(self.head..) }
    }
}

impl DerefMut for Items {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [Value] {
        // SAFETY: head <= vec.len() always holds.
        unsafe { self.vec.get_unchecked_mut(self.head..) }
    }
}

impl Clone for Items {
    fn clone(&self) -> Items {
        Items::from(self.to_vec())
    }
}

impl Extend<Value> for Items {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, iter: I) {
        self.vec.extend(iter)
    }
}

impl<'a> Extend<&'a Value> for Items {
    fn extend<I: IntoIterator<Item = &'a Value>>(&mut self, iter: I) {
        self.vec.extend(iter)
    }
}

impl Items {
    pub const fn new() -> Items {
        Items { vec: Vec::new(), head: 0 }
    }

    /// Moves the elements to the start of the buffer.
    fn compact(&mut self) {
        if self.head > 0 {
            self.vec.drain(..self.head);
            self.head = 0;
        }
    }

    /// The elements as a Vec (for the operations this type does not offer).
    pub fn vec_mut(&mut self) -> &mut Vec<Value> {
        self.compact();
        &mut self.vec
    }

    pub fn into_vec(mut self) -> Vec<Value> {
        self.compact();
        self.vec
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.vec.len() - self.head
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.vec.len() == self.head
    }

    /// The buffer's size in elements (for malloc accounting).
    #[inline]
    pub fn capacity(&self) -> usize {
        self.vec.capacity()
    }

    /// Bytes of the buffer (for `ObjectSpace.memsize_of`).
    pub fn heap_bytes(&self) -> usize {
        self.vec.capacity() * std::mem::size_of::<Value>()
    }

    #[inline]
    pub fn push(&mut self, v: Value) {
        if self.head > 0 && self.vec.len() == self.vec.capacity() {
            self.compact();
        }
        self.vec.push(v);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        let v = self.vec.pop();
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
        let v = std::mem::replace(&mut self.vec[self.head], Value::NIL);
        self.head += 1;
        if self.is_empty() {
            self.clear();
        }
        Some(v)
    }

    /// Removes and returns the first `k` elements (k <= len) without moving the rest.
    pub fn shift_n(&mut self, k: usize) -> Vec<Value> {
        let out = self[..k].to_vec();
        self.vec[self.head..self.head + k].fill(Value::NIL);
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
        self.vec.remove(self.head + i)
    }

    pub fn insert(&mut self, i: usize, v: Value) {
        if i == 0 {
            self.prepend(&[v]);
        } else {
            self.vec.insert(self.head + i, v);
        }
    }

    /// Inserts `vals` before the first element, O(len(vals)) amortized: the buffer keeps
    /// room in front after it has to grow there.
    pub fn prepend(&mut self, vals: &[Value]) {
        let k = vals.len();
        if k == 0 {
            return;
        }
        if self.head < k {
            let len = self.len();
            let room = k + (len / 2).max(4);
            let mut v = Vec::with_capacity(room + len + len / 2);
            v.resize(room, Value::NIL);
            v.extend_from_slice(&self.vec[self.head..]);
            self.vec = v;
            self.head = room;
        }
        self.head -= k;
        self.vec[self.head..self.head + k].copy_from_slice(vals);
    }

    pub fn split_off(&mut self, at: usize) -> Vec<Value> {
        self.vec.split_off(self.head + at)
    }

    pub fn extend_from_slice(&mut self, s: &[Value]) {
        self.vec.extend_from_slice(s);
    }

    pub fn truncate(&mut self, n: usize) {
        self.vec.truncate(self.head + n);
        if self.is_empty() {
            self.clear();
        }
    }

    pub fn clear(&mut self) {
        self.vec.clear();
        self.head = 0;
    }

    pub fn resize(&mut self, n: usize, v: Value) {
        self.vec.resize(self.head + n, v);
    }

    pub fn reserve(&mut self, n: usize) {
        self.vec.reserve(n);
    }

    pub fn shrink_to_fit(&mut self) {
        self.compact();
        self.vec.shrink_to_fit();
    }

    pub fn retain(&mut self, f: impl FnMut(&Value) -> bool) {
        self.compact();
        self.vec.retain(f);
    }

    pub fn drain<R: RangeBounds<usize>>(&mut self, r: R) -> std::vec::Drain<'_, Value> {
        self.compact();
        self.vec.drain(r)
    }

    pub fn splice<R: RangeBounds<usize>, I: IntoIterator<Item = Value>>(&mut self, r: R, with: I) -> std::vec::Splice<'_, I::IntoIter> {
        self.compact();
        self.vec.splice(r, with)
    }
}
