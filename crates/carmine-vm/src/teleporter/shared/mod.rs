//! Shared objects: `Teleporter::SharedString`, `SharedArray` and `SharedHash`, whose data
//! lives in a tunnel's shared memory and is read in place, and the `share_send`/`move_send`
//! transfers that pass them between processes without copying (seed 004, section 5).
//!
//! Invariants:
//! - A graph of shared objects is one *image* (`image.rs`) held by a `Root`: process memory
//!   until it is first sent, then one block of a tunnel's segment. A wrapper (the Ruby
//!   object) is a root and the offset of one record in its image; every wrapper of a graph
//!   in this process shares one `Rc<Root>`, so moving or growing the image is seen by all.
//! - A block's holder bit for this process is set while at least one `Root` of this process
//!   holds it: `Handle::holds` counts them per block, and the last `Root` dropped (when the
//!   collector frees its wrappers) releases the bit; the block is freed when no process and
//!   no queued message holds it, by the allocator's rules, also when a holder is killed.
//! - States: an *owned* root is writable by this process alone (created here, or received
//!   with `move_recv`); a *frozen* root's image has the FROZEN flag and is never written
//!   again (it was shared: every process reads it in place); a *moved* root was given away
//!   with `move_send` and every use of its wrappers raises `Teleporter::MovedError`.
//! - A root in a segment belongs to the process that received or placed it; a forked
//!   child that inherits the wrapper neither reads nor releases it (it raises).
//! - Converting Ruby objects into an image runs no Ruby code and allocates no Ruby object
//!   (so object addresses are stable identities during the walk). Reading builds Ruby
//!   objects from the image and re-reads the image after anything that can grow it or run
//!   Ruby code; `unshare` keeps what it builds on the protect stack until it returns.

pub mod image;
mod methods;

use std::cell::{Cell as StdCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use self::image::*;
use super::queue::Entry;
use super::tunnel::Handle;
use crate::core::{array, encoding, float, hash, module, object, string};
use crate::error::Unwind;
use crate::object::{basic, data_ref, ObjType, FL_EXIVAR};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub use methods::init;

/// Where a graph's image is.
pub enum Store {
    /// Process memory (8-aligned), before the graph is first sent.
    Local(Vec<u64>),
    /// A block of a tunnel's segment, held by `slot` of process `pid`.
    Seg { h: Rc<Handle>, off: usize, slot: usize, pid: u32 },
    /// Given away (moved).
    Gone,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum State {
    Owned,
    Frozen,
    Moved,
}

/// One graph of shared objects as seen by this process.
pub struct Root {
    pub store: RefCell<Store>,
    pub state: StdCell<State>,
}

impl Drop for Root {
    fn drop(&mut self) {
        if let Store::Seg { h, off, slot, pid } = &*self.store.borrow() {
            if *pid == h.mark.pid() {
                unhold(h, *slot, *off);
            }
        }
    }
}

/// The blocks a process holds and how many of its `Root`s hold each (`Handle::holds`):
/// keyed by block offsets, which the allocator makes, with the VM's integer hasher.
pub type Holds = HashMap<usize, u32, std::hash::BuildHasherDefault<crate::symbol::SymHasher>>;

/// A frozen root per block received with a share (`Handle::frozen_roots`), by block offset.
pub type FrozenRoots = HashMap<usize, std::rc::Weak<Root>, std::hash::BuildHasherDefault<crate::symbol::SymHasher>>;

/// Counts one more `Root` of this process holding block `off` (whose bit is set).
pub fn hold(h: &Handle, off: usize) {
    let n = {
        let mut holds = h.holds.borrow_mut();
        let n = holds.entry(off).or_insert(0);
        *n += 1;
        *n
    };
    if n == 1 {
        h.held_bytes.set(h.held_bytes.get() + h.seg.block_capacity(off));
    }
}

/// Counts one `Root` less holding block `off`; the last one releases this process's bit.
pub fn unhold(h: &Handle, slot: usize, off: usize) {
    let last = {
        let mut holds = h.holds.borrow_mut();
        match holds.get_mut(&off) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                holds.remove(&off);
                h.frozen_roots.borrow_mut().remove(&off);
                true
            }
            None => false,
        }
    };
    if last {
        h.held_bytes.set(h.held_bytes.get().saturating_sub(h.seg.block_capacity(off)));
        h.seg.release(off, 1 << slot);
    }
}

/// Forgets this process's hold of block `off` without releasing its bit (the ring took
/// the bit over: a move).
pub fn give_up(h: &Handle, off: usize) {
    if h.holds.borrow_mut().remove(&off).is_some() {
        h.held_bytes.set(h.held_bytes.get().saturating_sub(h.seg.block_capacity(off)));
    }
}

/// The payload of a SharedString, SharedArray or SharedHash.
pub struct SharedObj {
    pub root: Rc<Root>,
    pub rec: usize,
}
crate::data_obj!(SharedObj);

pub fn shared_obj<'a>(v: Value) -> Option<&'a mut SharedObj> {
    data_ref::<SharedObj>(v)
}

fn tp_error(ctx: &mut Ctx, msg: &str) -> Unwind {
    let c = super::error_class(ctx);
    ctx.raise(c, msg)
}

/// `Teleporter::MovedError`, a `Teleporter::Error`.
pub fn moved_error_class(ctx: &mut Ctx) -> Value {
    let m = super::teleporter_module(ctx);
    match crate::stdlib::const_of(ctx, m, "MovedError") {
        Some(k) if module::is_class(k) => k,
        _ => {
            let err = super::error_class(ctx);
            crate::core::module_methods::define_class_under(ctx, m, "MovedError", err)
        }
    }
}

pub fn corrupt(ctx: &mut Ctx) -> Unwind {
    tp_error(ctx, "corrupt shared object (its image is not one Teleporter wrote)")
}

impl Root {
    pub fn local(img_bytes: usize) -> Root {
        let words = img_bytes.div_ceil(8).max(HEADER / 8);
        let mut v = vec![0u64; words];
        let img = Img { p: v.as_mut_ptr() as *mut u8, cap: words * 8 };
        init_header(&img, HEADER, 0);
        Root { store: RefCell::new(Store::Local(v)), state: StdCell::new(State::Owned) }
    }

    /// The image as it is now (valid until the next growth or move of this root).
    pub fn img(&self) -> Option<Img> {
        match &mut *self.store.borrow_mut() {
            Store::Local(v) => Some(Img { p: v.as_mut_ptr() as *mut u8, cap: v.len() * 8 }),
            Store::Seg { h, off, .. } => Some(Img { p: h.seg.payload(*off), cap: h.seg.block_capacity(*off) & !7 }),
            Store::Gone => None,
        }
    }

    /// The image, if this process may use it: MovedError once moved, Teleporter::Error for
    /// a segment image inherited across fork. `obj` (a wrapper of this root, or the object
    /// being sent) names the class in those errors.
    pub fn check(&self, ctx: &mut Ctx, obj: Value) -> Result<Img> {
        if self.state.get() == State::Moved {
            let what = object::class_name_of(ctx, obj);
            let c = moved_error_class(ctx);
            return Err(ctx.raise(c, &format!("this {what} was moved to another process with move_send and can no longer be used here")));
        }
        let foreign = match &*self.store.borrow() {
            Store::Seg { h, pid, .. } => (*pid != h.mark.pid()).then_some(*pid),
            _ => None,
        };
        if let Some(pid) = foreign {
            let what = object::class_name_of(ctx, obj);
            return Err(tp_error(ctx, &format!("this {what} belongs to process {pid} (inherited across fork): send it through a tunnel instead")));
        }
        match self.img() {
            Some(img) if img.valid() => Ok(img),
            _ => Err(corrupt(ctx)),
        }
    }

    /// Room for `extra` more bytes in the image, growing it (doubling) if needed.
    fn reserve(&self, ctx: &mut Ctx, extra: usize) -> Result<Img> {
        let img = self.img().ok_or_else(|| corrupt(ctx))?;
        let used = img.used();
        let need = used.checked_add(extra).filter(|&n| n <= isize::MAX as usize / 2).ok_or_else(|| tp_error(ctx, "shared object too large"))?;
        if need <= img.cap {
            return Ok(img);
        }
        let new_cap = need.max(img.cap * 2).next_multiple_of(8);
        let mut store = self.store.borrow_mut();
        match &mut *store {
            Store::Local(v) => {
                if v.try_reserve(new_cap / 8 - v.len()).is_err() {
                    drop(store);
                    return Err(ctx.raise(ctx.c().no_memory_error, "failed to allocate memory"));
                }
                v.resize(new_cap / 8, 0);
            }
            Store::Seg { h, off, slot, .. } => {
                let Some(noff) = h.seg.alloc(*slot, new_cap) else {
                    let st = h.seg.heap_stats();
                    drop(store);
                    return Err(tp_error(ctx, &format!("tunnel memory exhausted: {new_cap} bytes wanted for a shared object, {} bytes in use by {} blocks", st.used_bytes, st.used_blocks)));
                };
                // SAFETY: both blocks hold at least `used` bytes; the new one is ours alone.
                unsafe { std::ptr::copy_nonoverlapping(h.seg.payload(*off), h.seg.payload(noff), used) };
                hold(h, noff);
                let old = std::mem::replace(off, noff);
                unhold(h, *slot, old);
            }
            Store::Gone => {
                drop(store);
                return Err(corrupt(ctx));
            }
        }
        drop(store);
        let img = self.img().ok_or_else(|| corrupt(ctx))?;
        img.set_u64(16, img.cap as u64);
        Ok(img)
    }

    /// `n` bytes (rounded up to 8) at the end of the image: the image and their offset.
    pub fn alloc(&self, ctx: &mut Ctx, n: usize) -> Result<(Img, usize)> {
        let n = n.next_multiple_of(8);
        let img = self.reserve(ctx, n)?;
        let off = img.used();
        set_used(&img, off + n);
        Ok((img, off))
    }
}

// ---- building images from Ruby objects ----

/// Converts Ruby objects into records of `root`'s image.
pub struct Builder<'r> {
    root: &'r Root,
    root_ptr: *const Root,
    /// Ruby objects converted so far (by address): their records.
    seen: HashMap<u64, usize>,
    syms: HashMap<u32, usize>,
    /// Records of other graphs copied so far: (root, record) to record.
    copied: HashMap<(usize, usize), usize>,
}

fn is_exact(v: Value, base: Value) -> bool {
    basic(v).klass == base && !basic(v).has(FL_EXIVAR)
}

impl<'r> Builder<'r> {
    pub fn new(root: &'r Rc<Root>) -> Builder<'r> {
        Builder { root, root_ptr: Rc::as_ptr(root), seen: HashMap::new(), syms: HashMap::new(), copied: HashMap::new() }
    }

    pub fn root_img(&self) -> Option<Img> {
        self.root.img()
    }

    fn immediate(v: Value) -> Option<Cell> {
        match v {
            Value::NIL => Some((C_NIL, 0)),
            Value::TRUE => Some((C_TRUE, 0)),
            Value::FALSE => Some((C_FALSE, 0)),
            _ => {
                if let Some(i) = v.as_fixnum() {
                    Some((C_FIX, i as u64))
                } else if v.is_flonum() {
                    Some((C_FLO, v.flonum_unchecked().to_bits()))
                } else if v.is_heap() && basic(v).obj_type() == ObjType::Float {
                    Some((C_FLO, float::get(v).to_bits()))
                } else {
                    None
                }
            }
        }
    }

    /// A SYM or BLOB record holding `b`.
    fn bytes_record(&mut self, ctx: &mut Ctx, kind: u64, b: &[u8]) -> Result<usize> {
        let (img, rec) = self.root.alloc(ctx, 16 + b.len())?;
        img.set_u64(rec, kind);
        img.set_u64(rec + 8, b.len() as u64);
        img.put_bytes(rec + 16, b);
        Ok(rec)
    }

    fn symbol(&mut self, ctx: &mut Ctx, id: crate::symbol::SymId) -> Result<usize> {
        if let Some(&r) = self.syms.get(&id.0) {
            return Ok(r);
        }
        let name = ctx.sym_name(id);
        let r = self.bytes_record(ctx, R_SYM, &name)?;
        self.syms.insert(id.0, r);
        Ok(r)
    }

    /// A STR record with `b` in encoding `enc` (room for `cap` bytes).
    pub fn string(&mut self, ctx: &mut Ctx, b: &[u8], enc: u8) -> Result<usize> {
        let enc_field = match enc {
            encoding::BINARY | encoding::UTF_8 | encoding::US_ASCII => enc as u64,
            _ => {
                let name = encoding::name(enc).as_bytes().to_vec();
                self.bytes_record(ctx, R_SYM, &name)? as u64
            }
        };
        let (_, rec) = self.root.alloc(ctx, STR_SIZE)?;
        let (img, data) = self.root.alloc(ctx, b.len().max(8))?;
        img.put_bytes(data, b);
        for (i, w) in [R_STR, enc_field, b.len() as u64, b.len().max(8) as u64, data as u64].into_iter().enumerate() {
            img.set_u64(rec + 8 * i, w);
        }
        Ok(rec)
    }

    fn blob(&mut self, ctx: &mut Ctx, v: Value) -> Result<usize> {
        let mut out = Vec::new();
        super::format::dump(ctx, v, &mut out)?;
        self.bytes_record(ctx, R_BLOB, &out)
    }

    /// The cell for `v` in this image (records written for it as needed).
    pub fn put(&mut self, ctx: &mut Ctx, v: Value) -> Result<Cell> {
        if let Some(c) = Self::immediate(v) {
            return Ok(c);
        }
        if let Some(id) = v.as_symbol() {
            return Ok((C_REF, self.symbol(ctx, id)? as u64));
        }
        if !v.is_heap() {
            return Err(ctx.type_error("can't share an internal value"));
        }
        if let Some(&r) = self.seen.get(&v.raw()) {
            return Ok((C_REF, r as u64));
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        if let Some(w) = shared_obj(v) {
            if Rc::as_ptr(&w.root) == self.root_ptr {
                return Ok((C_REF, w.rec as u64));
            }
            let (src_root, rec) = (w.root.clone(), w.rec);
            let src = src_root.check(ctx, v)?;
            return Ok((C_REF, self.copy_record(ctx, &src, Rc::as_ptr(&src_root) as usize, rec)? as u64));
        }
        let c = ctx.c();
        let (cs, ca, ch) = (c.string, c.array, c.hash);
        let ty = basic(v).obj_type();
        let rec = if ty == ObjType::String && is_exact(v, cs) {
            let b = string::bytes(v).to_vec();
            let r = self.string(ctx, &b, string::encoding(v))?;
            self.seen.insert(v.raw(), r);
            r
        } else if ty == ObjType::Array && is_exact(v, ca) {
            let n = array::len(v);
            let r = self.array_record(ctx, n)?;
            self.seen.insert(v.raw(), r);
            for i in 0..n.min(array::len(v)) {
                let e = array::get(v, i);
                let cell = self.put(ctx, e)?;
                let img = self.root.img().ok_or_else(|| corrupt(ctx))?;
                let cells = img.field(r, 3).unwrap_or(0) as usize;
                img.set_cell(cells + i * CELL, cell);
                img.set_u64(r + 8, i as u64 + 1);
            }
            r
        } else if ty == ObjType::Hash && is_exact(v, ch) {
            check_shareable_hash(ctx, v)?;
            let pairs = hash::pairs(v);
            let r = self.hash_record(ctx, pairs.len())?;
            self.seen.insert(v.raw(), r);
            let default = hash::rhash(v).default;
            let dc = self.put(ctx, default)?;
            let img = self.root.img().ok_or_else(|| corrupt(ctx))?;
            img.set_cell(r + HASH_DEFAULT, dc);
            for (k, val) in pairs {
                self.hash_append(ctx, r, k, val)?;
            }
            r
        } else {
            // Bignum, Rational, Complex, Range, Struct/Data, user objects, subclasses and
            // objects with instance variables: stored in the copy format, read as copies.
            let r = self.blob(ctx, v)?;
            self.seen.insert(v.raw(), r);
            r
        };
        Ok((C_REF, rec as u64))
    }

    pub fn array_record(&mut self, ctx: &mut Ctx, cap: usize) -> Result<usize> {
        let (_, r) = self.root.alloc(ctx, ARR_SIZE)?;
        let (img, cells) = self.root.alloc(ctx, cap.saturating_mul(CELL))?;
        for (i, w) in [R_ARR, 0, cap as u64, cells as u64].into_iter().enumerate() {
            img.set_u64(r + 8 * i, w);
        }
        Ok(r)
    }

    pub fn hash_record(&mut self, ctx: &mut Ctx, cap: usize) -> Result<usize> {
        let cap = cap.max(1);
        let (_, r) = self.root.alloc(ctx, HASH_SIZE)?;
        let (_, ents) = self.root.alloc(ctx, cap.saturating_mul(ENTRY))?;
        let slots = index_slots(cap);
        let (img, idx) = self.root.alloc(ctx, slots.saturating_mul(4))?;
        img.zero(idx, slots * 4);
        for (i, w) in [R_HASH, 0, 0, cap as u64, ents as u64, C_NIL, 0, idx as u64, slots as u64].into_iter().enumerate() {
            img.set_u64(r + 8 * i, w);
        }
        Ok(r)
    }

    /// A key stored by value: its cell and key hash.
    pub fn put_key(&mut self, ctx: &mut Ctx, k: Value) -> Result<(Cell, u64)> {
        if let Some(c) = Self::immediate(k) {
            return Ok((c, cell_key_hash(c)));
        }
        if let Some(id) = k.as_symbol() {
            let r = self.symbol(ctx, id)?;
            return Ok(((C_REF, r as u64), key_hash(KEY_SYM, &ctx.sym_name(id))));
        }
        match probe(ctx, k)? {
            Probe::Str(b, enc) => {
                let r = self.string(ctx, &b, enc)?;
                Ok(((C_REF, r as u64), key_hash(KEY_STR, &b)))
            }
            Probe::Blob(b) => {
                let r = self.bytes_record(ctx, R_BLOB, &b)?;
                Ok(((C_REF, r as u64), key_hash(KEY_BLOB, &b)))
            }
            _ => Err(corrupt(ctx)),
        }
    }

    /// Sets `k => val` in hash record `r` (replacing the value of an equal key).
    pub fn hash_insert(&mut self, ctx: &mut Ctx, r: usize, k: Value, val: Value) -> Result<()> {
        let p = probe(ctx, k)?;
        let img = self.root.img().ok_or_else(|| corrupt(ctx))?;
        if let Some(e) = find_entry(&img, r, &p) {
            let c = self.put(ctx, val)?;
            let img = self.root.img().ok_or_else(|| corrupt(ctx))?;
            img.set_cell(e + 24, c);
            return Ok(());
        }
        self.hash_append(ctx, r, k, val)
    }

    /// Appends `k => val` to hash record `r`, whose keys are known to differ from `k` (the
    /// keys of a Hash being converted).
    pub fn hash_append(&mut self, ctx: &mut Ctx, r: usize, k: Value, val: Value) -> Result<()> {
        let (kc, kh) = self.put_key(ctx, k)?;
        let vc = self.put(ctx, val)?;
        self.push_entry(ctx, r, kh, kc, vc)
    }

    /// Writes the entry (key hash, key, value) after the last of hash record `r`.
    fn push_entry(&mut self, ctx: &mut Ctx, r: usize, kh: u64, kc: Cell, vc: Cell) -> Result<()> {
        let img = self.reserve_entry(ctx, r)?;
        let (len, used, ents) = img.hash(r).ok_or_else(|| corrupt(ctx))?;
        let e = ents + used * ENTRY;
        img.set_u64(e, kh);
        img.set_cell(e + 8, kc);
        img.set_cell(e + 24, vc);
        img.index_insert(r, kh, used).ok_or_else(|| corrupt(ctx))?;
        img.set_u64(r + 8, len as u64 + 1);
        img.set_u64(r + 16, used as u64 + 1);
        Ok(())
    }

    /// Room for one more entry in hash record `r` (live entries compacted into a region
    /// twice as large when it is full, with a new index).
    fn reserve_entry(&mut self, ctx: &mut Ctx, r: usize) -> Result<Img> {
        let img = self.root.img().ok_or_else(|| corrupt(ctx))?;
        let (_, used, _) = img.hash(r).ok_or_else(|| corrupt(ctx))?;
        let cap = img.field(r, 3).unwrap_or(0) as usize;
        if used < cap {
            return Ok(img);
        }
        let new_cap = cap.saturating_mul(2).max(4);
        let slots = index_slots(new_cap);
        let (_, nents) = self.root.alloc(ctx, new_cap.saturating_mul(ENTRY))?;
        let (img, idx) = self.root.alloc(ctx, slots.saturating_mul(4))?;
        img.zero(idx, slots * 4);
        let (_, used, ents) = img.hash(r).ok_or_else(|| corrupt(ctx))?;
        img.set_u64(r + HASH_INDEX, idx as u64);
        img.set_u64(r + HASH_INDEX_SLOTS, slots as u64);
        let mut n = 0;
        for i in 0..used {
            let e = ents + i * ENTRY;
            if img.u64_at(e + 8) == Some(C_DELETED) {
                continue;
            }
            let src = img.bytes(e, ENTRY).ok_or_else(|| corrupt(ctx))?.to_vec();
            img.put_bytes(nents + n * ENTRY, &src);
            img.index_insert(r, img.u64_at(e).unwrap_or(0), n).ok_or_else(|| corrupt(ctx))?;
            n += 1;
        }
        img.set_u64(r + 16, n as u64);
        img.set_u64(r + 24, new_cap as u64);
        img.set_u64(r + 32, nents as u64);
        Ok(img)
    }

    /// Copies record `rec` of another graph's image `src` (and what it refers to) into this
    /// image: the new record.
    fn copy_record(&mut self, ctx: &mut Ctx, src: &Img, src_id: usize, rec: usize) -> Result<usize> {
        if let Some(&r) = self.copied.get(&(src_id, rec)) {
            return Ok(r);
        }
        if ctx.native_stack_exhausted() {
            return Err(crate::interp::call::stack_overflow(ctx));
        }
        let r = match src.kind(rec) {
            Some(R_STR) => {
                let b = src.str_bytes(rec).ok_or_else(|| corrupt(ctx))?.to_vec();
                let enc = str_encoding(src, rec).ok_or_else(|| corrupt(ctx))?;
                self.string(ctx, &b, enc)?
            }
            Some(k @ (R_SYM | R_BLOB)) => {
                let b = src.blob(rec).ok_or_else(|| corrupt(ctx))?.to_vec();
                self.bytes_record(ctx, k, &b)?
            }
            Some(R_ARR) => {
                let (len, cells) = src.arr(rec).ok_or_else(|| corrupt(ctx))?;
                let r = self.array_record(ctx, len)?;
                self.copied.insert((src_id, rec), r);
                for i in 0..len {
                    let c = self.copy_cell(ctx, src, src_id, cells + i * CELL)?;
                    let img = self.root.img().ok_or_else(|| corrupt(ctx))?;
                    let dcells = img.field(r, 3).unwrap_or(0) as usize;
                    img.set_cell(dcells + i * CELL, c);
                    img.set_u64(r + 8, i as u64 + 1);
                }
                r
            }
            Some(R_HASH) => {
                let (len, used, ents) = src.hash(rec).ok_or_else(|| corrupt(ctx))?;
                let r = self.hash_record(ctx, len)?;
                self.copied.insert((src_id, rec), r);
                let dc = self.copy_cell(ctx, src, src_id, rec + HASH_DEFAULT)?;
                self.root.img().ok_or_else(|| corrupt(ctx))?.set_cell(r + HASH_DEFAULT, dc);
                for i in 0..used {
                    let e = ents + i * ENTRY;
                    if src.u64_at(e + 8) == Some(C_DELETED) {
                        continue;
                    }
                    let kh = src.u64_at(e).ok_or_else(|| corrupt(ctx))?;
                    let kc = self.copy_cell(ctx, src, src_id, e + 8)?;
                    let vc = self.copy_cell(ctx, src, src_id, e + 24)?;
                    self.push_entry(ctx, r, kh, kc, vc)?;
                }
                r
            }
            _ => return Err(corrupt(ctx)),
        };
        self.copied.insert((src_id, rec), r);
        Ok(r)
    }

    fn copy_cell(&mut self, ctx: &mut Ctx, src: &Img, src_id: usize, off: usize) -> Result<Cell> {
        let c = src.cell(off).ok_or_else(|| corrupt(ctx))?;
        if c.0 == C_REF {
            Ok((C_REF, self.copy_record(ctx, src, src_id, c.1 as usize)? as u64))
        } else {
            Ok(c)
        }
    }
}

/// A STR record's encoding.
pub fn str_encoding(img: &Img, rec: usize) -> Option<u8> {
    let f = img.field(rec, 1)?;
    if f < 3 {
        return Some(f as u8);
    }
    if img.kind(f as usize)? != R_SYM {
        return None;
    }
    let name = img.blob(f as usize)?;
    encoding::find(std::str::from_utf8(name).ok()?)
}

// ---- hash keys ----

/// A key as compared with stored keys: an immediate cell, a string's bytes and encoding, a
/// symbol's name, or any other key's copy-format encoding.
pub enum Probe {
    Imm(Cell),
    Str(Vec<u8>, u8),
    Sym(Vec<u8>),
    Blob(Vec<u8>),
}

impl Probe {
    fn hash(&self) -> u64 {
        match self {
            Probe::Imm(c) => cell_key_hash(*c),
            Probe::Str(b, _) => key_hash(KEY_STR, b),
            Probe::Sym(b) => key_hash(KEY_SYM, b),
            Probe::Blob(b) => key_hash(KEY_BLOB, b),
        }
    }
}

pub fn probe(ctx: &mut Ctx, k: Value) -> Result<Probe> {
    if let Some(c) = Builder::immediate(k) {
        return Ok(Probe::Imm(c));
    }
    if let Some(id) = k.as_symbol() {
        return Ok(Probe::Sym(ctx.sym_name(id).to_vec()));
    }
    if k.is_heap() && basic(k).obj_type() == ObjType::String {
        return Ok(Probe::Str(string::bytes(k).to_vec(), string::encoding(k)));
    }
    if let Some(w) = shared_obj(k) {
        let root = w.root.clone();
        let rec = w.rec;
        let img = root.check(ctx, k)?;
        if img.kind(rec) == Some(R_STR) {
            let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?.to_vec();
            let enc = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
            return Ok(Probe::Str(b, enc));
        }
        let name = object::class_name_of(ctx, k);
        return Err(ctx.type_error(&format!("a {name} can't be a key of a shared Hash (use #unshare)")));
    }
    let mut out = Vec::new();
    super::format::dump(ctx, k, &mut out)?;
    Ok(Probe::Blob(out))
}

/// The entry of hash record `r` whose key equals `p`: found through the record's index
/// by the key's hash, so the time does not grow with the hash's size.
pub fn find_entry(img: &Img, r: usize, p: &Probe) -> Option<usize> {
    for e in img.index_probe(r, p.hash()) {
        let kc = img.cell(e + 8)?;
        let same = match p {
            Probe::Imm(c) => kc.0 == c.0 && (kc.1 == c.1 || (c.0 == C_FLO && f64::from_bits(kc.1) == f64::from_bits(c.1))),
            _ if kc.0 != C_REF => false,
            Probe::Str(b, enc) => {
                let rec = kc.1 as usize;
                img.kind(rec) == Some(R_STR) && img.str_bytes(rec) == Some(b.as_slice()) && (str_encoding(img, rec) == Some(*enc) || b.is_ascii())
            }
            Probe::Sym(b) => img.kind(kc.1 as usize) == Some(R_SYM) && img.blob(kc.1 as usize) == Some(b.as_slice()),
            Probe::Blob(b) => img.kind(kc.1 as usize) == Some(R_BLOB) && img.blob(kc.1 as usize) == Some(b.as_slice()),
        };
        if same {
            return Some(e);
        }
    }
    None
}

// ---- reading ----

/// The (key, value) cells of the live entries of hash record `rec`, in insertion order.
pub fn live_entries(img: &Img, rec: usize) -> Option<Vec<(Cell, Cell)>> {
    let (len, used, ents) = img.hash(rec)?;
    let mut out = Vec::with_capacity(len.min(used));
    for i in 0..used {
        let e = ents + i * ENTRY;
        let kc = img.cell(e + 8)?;
        if kc.0 != C_DELETED {
            out.push((kc, img.cell(e + 24)?));
        }
    }
    Some(out)
}

/// SharedString, SharedArray and SharedHash, in the order of `R_STR`, `R_ARR`, `R_HASH`.
const CLASS_NAMES: [&str; 3] = ["SharedString", "SharedArray", "SharedHash"];

/// The three shared classes of this VM: cached in the tunnel's handle `h` once looked up,
/// so receiving an object does not look up a constant by name. Each class cached is a VM
/// root (shared::init makes the originals roots; one found in their place after a
/// constant was reassigned is made one here), so a cached class is never collected.
fn classes(ctx: &mut Ctx, h: Option<&Handle>) -> Result<[Value; 3]> {
    if let Some(c) = h.and_then(|h| h.classes.get()) {
        return Ok(c);
    }
    let m = super::teleporter_module(ctx);
    let mut out = [Value::NIL; 3];
    for (slot, name) in out.iter_mut().zip(CLASS_NAMES) {
        *slot = match crate::stdlib::const_of(ctx, m, name) {
            Some(k) if module::is_class(k) => k,
            _ => return Err(ctx.type_error(&format!("Teleporter::{name} is not a class"))),
        };
    }
    if let Some(h) = h {
        for k in out {
            if !ctx.vm().roots.borrow().contains(&k) {
                ctx.vm().add_root(k);
            }
        }
        h.classes.set(Some(out));
    }
    Ok(out)
}

/// Makes the shared classes VM roots (at `require "teleporter"`).
pub(crate) fn root_classes(ctx: &mut Ctx, ks: [Value; 3]) {
    for k in ks {
        ctx.vm().add_root(k);
    }
}

/// A wrapper for record `rec` of `root` (frozen if `freeze`).
pub fn wrap(ctx: &mut Ctx, root: &Rc<Root>, rec: usize, kind: u64, freeze: bool) -> Result<Value> {
    let h = match &*root.store.borrow() {
        Store::Seg { h, .. } => Some(h.clone()),
        _ => None,
    };
    let ks = classes(ctx, h.as_deref())?;
    let k = match kind {
        R_STR => ks[0],
        R_ARR => ks[1],
        _ => ks[2],
    };
    let v = object::new_data(ctx, k, Box::new(SharedObj { root: root.clone(), rec }));
    if freeze {
        object::freeze(v);
    }
    Ok(v)
}

/// How values read from an image come out.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// From a frozen (shared) graph: wrappers and copies frozen.
    Frozen,
    /// From an owned graph: wrappers writable; copies (Bignum, Rational, Complex, Range,
    /// Struct, Data, user objects, stored in the copy format) frozen, because each read
    /// decodes a new copy and a change made to it would never reach the graph: the error
    /// says so, and `graph[i] = changed_copy` stores a change.
    Owned,
    /// Out of any graph (a deep `unshare`, a value deleted from a graph, a moved object
    /// received at the top): copies writable.
    Private,
}

/// The Ruby value of cell `c` of `root`'s image `img`: immediates as they are, strings,
/// arrays and hashes as wrappers (frozen when `how` is `Read::Frozen`), symbols interned,
/// copy-format records loaded (frozen unless `how` is `Read::Private`).
pub fn cell_value(ctx: &mut Ctx, root: &Rc<Root>, img: &Img, c: Cell, how: Read) -> Result<Value> {
    Ok(match c.0 {
        C_NIL => Value::NIL,
        C_TRUE => Value::TRUE,
        C_FALSE => Value::FALSE,
        C_FIX => Value::fixnum(c.1 as i64),
        C_FLO => float::new(ctx, f64::from_bits(c.1)),
        C_REF => {
            let rec = c.1 as usize;
            match img.kind(rec) {
                Some(k @ (R_STR | R_ARR | R_HASH)) => wrap(ctx, root, rec, k, how == Read::Frozen)?,
                Some(R_SYM) => {
                    let b = img.blob(rec).ok_or_else(|| corrupt(ctx))?;
                    Value::symbol(ctx.intern_bytes(b))
                }
                Some(R_BLOB) => {
                    let b = img.blob(rec).ok_or_else(|| corrupt(ctx))?.to_vec();
                    let v = super::format::load(ctx, &b)?;
                    if how != Read::Private {
                        object::freeze(v);
                    }
                    v
                }
                _ => return Err(corrupt(ctx)),
            }
        }
        _ => return Err(corrupt(ctx)),
    })
}

/// A Hash key as Ruby reads it: a String key is a frozen String (as a Hash's keys are),
/// so the keys of a SharedHash work as keys of a Hash; other keys as `cell_value`.
pub fn key_value(ctx: &mut Ctx, root: &Rc<Root>, img: &Img, c: Cell) -> Result<Value> {
    if c.0 == C_REF && img.kind(c.1 as usize) == Some(R_STR) {
        let rec = c.1 as usize;
        let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
        let e = str_encoding(img, rec).ok_or_else(|| corrupt(ctx))?;
        let s = string::new_with_enc_from_slice(ctx, b, e);
        return Ok(object::freeze(s));
    }
    cell_value(ctx, root, img, c, Read::Frozen)
}

/// TypeError for a Hash whose behaviour a shared Hash cannot keep: a default proc (code)
/// or compare_by_identity (addresses of one process).
pub fn check_shareable_hash(ctx: &mut Ctx, v: Value) -> Result<()> {
    if basic(v).has(hash::FL_DEFAULT_PROC) || basic(v).has(hash::FL_IDENTITY) {
        let what = if basic(v).has(hash::FL_IDENTITY) { "a compare_by_identity Hash" } else { "Hash with a default proc" };
        return Err(ctx.type_error(&format!("can't share {what}")));
    }
    Ok(())
}

/// A plain copy of the shared object `v` and everything it reaches, as `unshare` answers:
/// what a copy (`Tunnel#send`, `Teleporter.dump`) of a shared object carries.
/// Teleporter::MovedError once it was moved, Teleporter::Error if it was inherited across
/// fork.
pub fn plain_copy(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let Some((root, rec)) = shared_obj(v).map(|w| (w.root.clone(), w.rec)) else { return Err(corrupt(ctx)) };
    root.check(ctx, v)?;
    unshare(ctx, &root, rec)
}

/// A plain Ruby copy of record `rec` and everything it reaches (identity and cycles kept).
pub fn unshare(ctx: &mut Ctx, root: &Rc<Root>, rec: usize) -> Result<Value> {
    let mark = ctx.stacks.protected.len();
    let mut done = HashMap::new();
    let r = unshare_cell(ctx, root, (C_REF, rec as u64), &mut done);
    ctx.unprotect(mark);
    r
}

fn unshare_cell(ctx: &mut Ctx, root: &Rc<Root>, c: Cell, done: &mut HashMap<usize, Value>) -> Result<Value> {
    if c.0 != C_REF {
        let img = root.img().ok_or_else(|| corrupt(ctx))?;
        return cell_value(ctx, root, &img, c, Read::Private);
    }
    let rec = c.1 as usize;
    if let Some(&v) = done.get(&rec) {
        return Ok(v);
    }
    if ctx.native_stack_exhausted() {
        return Err(crate::interp::call::stack_overflow(ctx));
    }
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    let v = match img.kind(rec) {
        Some(R_STR) => {
            let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
            let enc = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
            string::new_with_enc_from_slice(ctx, b, enc)
        }
        Some(R_ARR) => {
            let (len, cells) = img.arr(rec).ok_or_else(|| corrupt(ctx))?;
            let a = array::with_capacity(ctx, len);
            ctx.protect(a);
            done.insert(rec, a);
            for i in 0..len {
                let img = root.img().ok_or_else(|| corrupt(ctx))?;
                let ec = img.cell(cells + i * CELL).ok_or_else(|| corrupt(ctx))?;
                let e = unshare_cell(ctx, root, ec, done)?;
                array::push(ctx, a, e);
            }
            return Ok(a);
        }
        Some(R_HASH) => {
            let h = hash::new(ctx);
            ctx.protect(h);
            done.insert(rec, h);
            let dc = img.cell(rec + HASH_DEFAULT).ok_or_else(|| corrupt(ctx))?;
            let d = unshare_cell(ctx, root, dc, done)?;
            hash::rhash(h).default = d;
            for (kc, vc) in live_entries(&img, rec).ok_or_else(|| corrupt(ctx))? {
                let k = unshare_cell(ctx, root, kc, done)?;
                ctx.protect(k);
                let v = unshare_cell(ctx, root, vc, done)?;
                ctx.protect(v);
                hash::aset(ctx, h, k, v)?;
            }
            return Ok(h);
        }
        _ => cell_value(ctx, root, &img, c, Read::Private)?,
    };
    ctx.protect(v);
    done.insert(rec, v);
    Ok(v)
}

// ---- transfer ----

/// How an object goes through a tunnel.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Share,
    Move,
}

/// A graph made from the plain object `v` (in process memory): its root and the record of `v`.
pub fn convert(ctx: &mut Ctx, v: Value) -> Result<(Rc<Root>, usize)> {
    let root = Rc::new(Root::local(4096));
    let rec = {
        let mut b = Builder::new(&root);
        let c = b.put(ctx, v)?;
        c.1 as usize
    };
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    set_root(&img, rec);
    Ok((root, rec))
}

/// Puts `root`'s image into a block of tunnel `h` for slot `me` (copying it there unless it
/// is there already); `alloc` gets the block. Returns the block's offset.
pub fn place(ctx: &mut Ctx, root: &Rc<Root>, h: &Rc<Handle>, me: usize, alloc: &mut dyn FnMut(&mut Ctx, usize) -> Result<Option<usize>>) -> Result<Option<usize>> {
    if let Store::Seg { h: sh, off, .. } = &*root.store.borrow() {
        if Rc::ptr_eq(sh, h) {
            return Ok(Some(*off));
        }
    }
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    let used = img.used();
    let Some(off) = alloc(ctx, used)? else { return Ok(None) };
    // SAFETY: the block holds `used` bytes and is ours alone; `img` is valid for `used`.
    unsafe { std::ptr::copy_nonoverlapping(img.p, h.seg.payload(off), used) };
    hold(h, off);
    let old = std::mem::replace(&mut *root.store.borrow_mut(), Store::Seg { h: h.clone(), off, slot: me, pid: h.mark.pid() });
    if let Store::Seg { h: oh, off: ooff, slot, pid } = old {
        if pid == oh.mark.pid() {
            unhold(&oh, slot, ooff);
        }
    }
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    img.set_u64(16, img.cap as u64);
    Ok(Some(off))
}

/// The ring entry naming record `rec` of the image in block `off`.
pub fn entry_for(kind: u32, off: usize, used: usize, rec: usize) -> Entry {
    let mut e = Entry::block(kind, off, used);
    e.data[8..16].copy_from_slice(&(rec as u64).to_ne_bytes());
    e
}

/// A live frozen root of this process (slot `me`) reading block `off` of tunnel `h`.
fn frozen_root(h: &Rc<Handle>, me: usize, off: usize) -> Option<Rc<Root>> {
    let root = h.frozen_roots.borrow().get(&off)?.upgrade()?;
    let same = match &*root.store.borrow() {
        Store::Seg { h: rh, off: roff, slot, pid } => Rc::ptr_eq(rh, h) && *roff == off && *slot == me && *pid == h.mark.pid(),
        _ => false,
    };
    (same && root.state.get() == State::Frozen).then_some(root)
}

/// The object a share/move entry names, received by slot `me` (which now holds its block)
/// with `want` (None: as it was sent).
pub fn receive(ctx: &mut Ctx, h: &Rc<Handle>, me: usize, e: &Entry, moved: bool, want: Option<Mode>) -> Result<Value> {
    let Some(off) = e.block_offset() else { return Err(corrupt(ctx)) };
    let mut w = [0u8; 8];
    w.copy_from_slice(&e.data[8..16]);
    let rec = u64::from_ne_bytes(w) as usize;
    let shared = !moved || want == Some(Mode::Share);
    let mut new_block = false;
    let root = match frozen_root(h, me, off).filter(|_| shared) {
        // This process holds the block already, through a root that outlives this call:
        // the bit the ring handed over is that root's, and the wrapper is all that is new.
        Some(root) => root,
        None => {
            new_block = true;
            hold(h, off);
            let root = Rc::new(Root { store: RefCell::new(Store::Seg { h: h.clone(), off, slot: me, pid: h.mark.pid() }), state: StdCell::new(State::Frozen) });
            if shared {
                h.frozen_roots.borrow_mut().insert(off, Rc::downgrade(&root));
            }
            root
        }
    };
    if !moved && want == Some(Mode::Move) {
        return Err(tp_error(ctx, "this message was sent with share_send: receive it with share_recv (a shared object never becomes writable again)"));
    }
    let img = match root.img() {
        Some(img) if img.valid() && img.kind(rec).is_some() => img,
        _ => return Err(corrupt(ctx)),
    };
    if moved && want != Some(Mode::Share) {
        if img.is_frozen() {
            return Err(corrupt(ctx));
        }
        root.state.set(State::Owned);
    } else if !img.is_frozen() {
        img.set_frozen();
    }
    let how = if root.state.get() == State::Frozen { Read::Frozen } else { Read::Private };
    let v = cell_value(ctx, &root, &img, (C_REF, rec as u64), how)?;
    if new_block {
        account(ctx, h, h.seg.block_capacity(off));
    }
    Ok(v)
}

/// Collects when this process may hold much of the tunnel's memory through dead objects:
/// a block is freed only when the collector frees its last wrapper, and a process that
/// receives shared objects in a loop allocates little else, so without this the tunnel's
/// heap filled up with blocks of dead wrappers and the senders got "tunnel memory
/// exhausted". It collects when the tunnel has less than a quarter of its pages free, the
/// blocks it held before this one (`bytes`, just received) are an eighth of the heap or
/// more, and it received an eighth of the heap since it last collected for this reason
/// (so a process that does hold that much, alive, collects once per eighth received).
/// The blocks are not counted as out-of-line memory: a moved object passed back and forth
/// would then collect every few receives of a large image, for memory it gives away.
fn account(ctx: &mut Ctx, h: &Rc<Handle>, bytes: usize) {
    let taken = h.received_since_gc.get().saturating_add(bytes);
    h.received_since_gc.set(taken);
    let eighth = h.seg.heap_len() / 8;
    let low = h.seg.free_pages() * 4 < h.seg.page_count();
    if low && taken >= eighth && h.held_bytes.get().saturating_sub(bytes) >= eighth && !ctx.vm().gc_disabled.load(std::sync::atomic::Ordering::Relaxed) {
        h.received_since_gc.set(0);
        crate::gc::collect_for(ctx, crate::heap::stats::GcReason::Malloc);
    }
}
