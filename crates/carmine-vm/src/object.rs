//! The common object header and per-type dispatch for the collector.
//!
//! Invariants:
//! - Every heap object starts with `RBasic`; the low 5 bits of `flags` are its `ObjType`,
//!   which never changes while the object lives (except `Free` <-> a type at alloc/sweep).
//! - `klass` is the object's class, possibly a singleton class; never nil for a live,
//!   Ruby-visible object. Internal objects (Env, Iseq, Cref) have klass nil.
//! - Each type's struct is `#[repr(C)]`, starts with `RBasic`, and fits in one slot.
//! - References stored into objects go through setters in each type's module so a write
//!   barrier can be added in one place.

use std::any::Any;

use crate::heap::page::SLOT_SIZE;
use crate::heap::Marker;
use crate::value::Value;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum ObjType {
    Free = 0,
    Object = 1,
    Class = 2,
    String = 3,
    Array = 4,
    Hash = 5,
    Float = 6,
    Bignum = 7,
    Range = 8,
    Proc = 9,
    Env = 10,
    Iseq = 11,
    Cref = 12,
    Data = 13,
}

impl ObjType {
    #[inline]
    fn from_bits(b: u32) -> ObjType {
        match b & TYPE_MASK {
            1 => ObjType::Object,
            2 => ObjType::Class,
            3 => ObjType::String,
            4 => ObjType::Array,
            5 => ObjType::Hash,
            6 => ObjType::Float,
            7 => ObjType::Bignum,
            8 => ObjType::Range,
            9 => ObjType::Proc,
            10 => ObjType::Env,
            11 => ObjType::Iseq,
            12 => ObjType::Cref,
            13 => ObjType::Data,
            _ => ObjType::Free,
        }
    }
}

pub const TYPE_MASK: u32 = 0x1f;
/// The object may not be modified.
pub const FL_FROZEN: u32 = 1 << 5;
/// The object has instance variables in the VM's generic ivar table.
pub const FL_EXIVAR: u32 = 1 << 6;
/// An object that one collection has marked already (see `crate::heap`).
pub const FL_SURVIVED: u32 = 1 << 7;
/// An object that two collections have marked already (the next promotes it).
pub const FL_SURVIVED2: u32 = 1 << 14;
/// An old (promoted) object: mirrors its page's old bit, so that a write barrier tests
/// the header it is writing to anyway (see `crate::heap`).
pub const FL_OLD: u32 = 1 << 13;
/// The collector's bits, which belong to one slot and are never copied to another object.
pub const FL_GC_BITS: u32 = FL_SURVIVED | FL_SURVIVED2 | FL_OLD;
/// Type-specific flags start here.
pub const FL_USER0: u32 = 1 << 8;
pub const FL_USER1: u32 = 1 << 9;
pub const FL_USER2: u32 = 1 << 10;
pub const FL_USER3: u32 = 1 << 11;
pub const FL_USER4: u32 = 1 << 12;
/// A chilled String (Ruby 3.4): a string literal or `Symbol#to_s` result that warns on its
/// first mutation. Only Strings carry it; `FL_CHILLED_SYMBOL` (with it) marks the
/// `Symbol#to_s` kind.
pub const FL_CHILLED: u32 = FL_USER4;
pub const FL_CHILLED_SYMBOL: u32 = FL_USER3;

#[repr(C)]
pub struct RBasic {
    pub flags: u32,
    /// Type-specific small field (string encoding, hash size, proc flags …).
    pub aux: u32,
    pub klass: Value,
}

impl RBasic {
    #[inline(always)]
    pub fn obj_type(&self) -> ObjType {
        ObjType::from_bits(self.flags)
    }

    #[inline(always)]
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    #[inline(always)]
    pub fn set(&mut self, flag: u32, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }
}

/// The header of a heap value. The caller guarantees `v.is_heap()`.
#[inline(always)]
pub fn basic<'a>(v: Value) -> &'a mut RBasic {
    debug_assert!(v.is_heap());
    // SAFETY: heap values point at a slot that starts with RBasic.
    unsafe { &mut *v.as_ptr::<RBasic>() }
}

#[inline(always)]
pub fn obj_type(v: Value) -> Option<ObjType> {
    if v.is_heap() {
        Some(basic(v).obj_type())
    } else {
        None
    }
}

#[inline(always)]
pub fn is_type(v: Value, t: ObjType) -> bool {
    v.is_heap() && basic(v).obj_type() == t
}

/// Words an `RObject` has after its header in a 64-byte slot and in a 40-byte one.
pub const OBJECT_WORDS: usize = (SLOT_SIZE - std::mem::size_of::<RBasic>()) / 8;
pub const SMALL_OBJECT_WORDS: usize = (crate::heap::page::SMALL_SLOT_SIZE - std::mem::size_of::<RBasic>()) / 8;
/// Instances of a class with at most this many instance variables (so far) get a 40-byte
/// slot: all of them fit inline.
pub const SMALL_OBJECT_IVARS: usize = SMALL_OBJECT_WORDS;

/// The instance variables past the inline ones: null, or one malloc'd block holding its
/// length followed by that many values (`UNDEF` where unset). One pointer instead of a
/// `Vec`'s three words leaves room for more inline variables.
pub struct IvarExt(*mut usize);

impl IvarExt {
    pub const EMPTY: IvarExt = IvarExt(std::ptr::null_mut());

    fn layout(n: usize) -> std::alloc::Layout {
        std::alloc::Layout::array::<usize>(n + 1).expect("ivar block size")
    }

    #[inline]
    pub fn as_slice(&self) -> &[Value] {
        if self.0.is_null() {
            return &[];
        }
        // SAFETY: a non-null block starts with its length, followed by that many values.
        unsafe { std::slice::from_raw_parts(self.0.add(1) as *const Value, *self.0) }
    }

    /// The address of value `i`, when the block has that index.
    #[inline(always)]
    fn slot(&self, i: usize) -> Option<*mut Value> {
        // SAFETY: a non-null block starts with its length, followed by that many values.
        (i < self.as_slice().len()).then(|| unsafe { (self.0.add(1) as *mut Value).add(i) })
    }

    /// Bytes of the malloc'd block (0 when there is none).
    pub fn heap_bytes(&self) -> usize {
        if self.0.is_null() { 0 } else { (self.as_slice().len() + 1) * std::mem::size_of::<usize>() }
    }

    /// Stores `v` at `i`, growing the block (to at least `i + 1` and twice its length).
    fn set(&mut self, i: usize, v: Value) {
        let len = self.as_slice().len();
        if i >= len {
            let n = (i + 1).max(len * 2).max(2);
            // SAFETY: a fresh block of n + 1 words; the old one's values are copied over and
            // it is freed with the layout it was allocated with.
            unsafe {
                let p = std::alloc::alloc(Self::layout(n)) as *mut usize;
                if p.is_null() {
                    std::alloc::handle_alloc_error(Self::layout(n));
                }
                *p = n;
                let vals = p.add(1) as *mut Value;
                std::ptr::copy_nonoverlapping(self.as_slice().as_ptr(), vals, len);
                for k in len..n {
                    vals.add(k).write(Value::UNDEF);
                }
                self.free();
                self.0 = p;
            }
        }
        if let Some(slot) = self.slot(i) {
            // SAFETY: `slot` is value i of the block (its length is above i now).
            unsafe { *slot = v };
        }
    }

    fn free(&mut self) {
        if !self.0.is_null() {
            // SAFETY: allocated by `set` with this length's layout.
            unsafe { std::alloc::dealloc(self.0 as *mut u8, Self::layout(*self.0)) };
            self.0 = std::ptr::null_mut();
        }
    }
}

impl Drop for IvarExt {
    fn drop(&mut self) {
        self.free();
    }
}

/// A plain object (instances of user classes, exceptions, …).
///
/// Instance variables are laid out by the object's real class (see
/// `ClassBody::ivar_index`). The slot is 40 or 64 bytes (`SMALL_OBJECT_WORDS` or
/// `OBJECT_WORDS` words after the header, chosen at allocation by the class's ivar count);
/// `aux` holds the number of inline variables (`n`, the low byte) and `OBJ_EXT`. Without
/// `OBJ_EXT` every word of the slot is an ivar (`n` is the slot's word count); with it,
/// word `n` (the slot's last) points to an `IvarExt` holding index `i >= n` at `i - n`.
/// Unset variables hold `UNDEF`.
///
/// The struct declares the small slot's words only, so that a reference to it never
/// claims bytes past a 40-byte slot; the words of a 64-byte slot are reached through
/// `word`.
#[repr(C)]
pub struct RObject {
    pub basic: RBasic,
    words: [Value; SMALL_OBJECT_WORDS],
}

/// `RObject`'s `aux` flag: the word after the inline variables points to an `IvarExt`.
const OBJ_EXT: u32 = 1 << 8;
const OBJ_INLINE: u32 = 0xff;

const _: () = assert!(std::mem::size_of::<RObject>() == crate::heap::page::SMALL_SLOT_SIZE);
const _: () = assert!(std::mem::size_of::<IvarExt>() == std::mem::size_of::<Value>());

impl RObject {
    /// Initialises a fresh slot of `words` words after the header: every ivar unset.
    ///
    /// # Safety
    /// `p` is a freshly allocated Object slot with room for `words` words.
    pub unsafe fn init(p: *mut RObject, words: usize) {
        (*p).basic.aux = words as u32;
        let w = std::ptr::addr_of_mut!((*p).words) as *mut Value;
        for i in 0..words {
            w.add(i).write(Value::UNDEF);
        }
    }

    /// Word `i` after the header; `i` is below the slot's word count.
    #[inline(always)]
    fn word(&self, i: usize) -> *mut Value {
        // SAFETY: the slot has at least `i + 1` words after the header (callers keep `i`
        // below the inline count or at the `OBJ_EXT` word).
        unsafe { (std::ptr::addr_of!(self.words) as *mut Value).add(i) }
    }

    #[inline(always)]
    fn inline_len(&self) -> usize {
        (self.basic.aux & OBJ_INLINE) as usize
    }

    #[inline(always)]
    fn ext(&self) -> Option<&mut IvarExt> {
        // SAFETY: with OBJ_EXT the word after the inline ones holds an IvarExt.
        (self.basic.aux & OBJ_EXT != 0).then(|| unsafe { &mut *(self.word(self.inline_len()) as *mut IvarExt) })
    }

    /// The inline variables.
    pub fn inline(&self) -> &[Value] {
        // SAFETY: the first `inline_len` words are ivars.
        unsafe { std::slice::from_raw_parts(self.word(0), self.inline_len()) }
    }

    /// The variables past the inline ones.
    pub fn ext_ivars(&self) -> &[Value] {
        self.ext().map_or(&[], |e| e.as_slice())
    }

    /// Bytes of the malloc'd ivar block (0 when there is none).
    pub fn ext_bytes(&self) -> usize {
        self.ext().map_or(0, |e| e.heap_bytes())
    }

    #[inline]
    pub fn ivar(&self, idx: usize) -> Value {
        let n = self.inline_len();
        if idx < n {
            // SAFETY: idx is an inline word.
            unsafe { *self.word(idx) }
        } else {
            self.ext_ivars().get(idx - n).copied().unwrap_or(Value::UNDEF)
        }
    }

    #[inline]
    pub fn set_ivar(&mut self, idx: usize, v: Value) {
        let n = self.inline_len();
        if idx < n {
            // SAFETY: idx is an inline word.
            unsafe { *self.word(idx) = v };
        } else if let Some(slot) = self.ext_slot(idx - n) {
            // SAFETY: the block has a value at that index.
            unsafe { *slot = v };
        } else {
            self.set_ext_ivar(idx, v);
        }
        if self.basic.flags & FL_OLD != 0 {
            crate::heap::remember_young(Value::from_ptr(self as *const RObject), v);
        }
    }

    /// The address of variable `n + i` in the ivar block, when the block has that index.
    #[inline(always)]
    fn ext_slot(&self, i: usize) -> Option<*mut Value> {
        self.ext()?.slot(i)
    }

    #[inline(never)]
    fn set_ext_ivar(&mut self, idx: usize, v: Value) {
        if self.basic.aux & OBJ_EXT == 0 {
            // The last word becomes the pointer to the block; its variable moves there.
            let n = self.inline_len() - 1;
            // SAFETY: word n is the slot's last ivar word.
            let last = unsafe { *self.word(n) };
            let mut ext = IvarExt::EMPTY;
            ext.set(0, last);
            // SAFETY: word n now holds the block (OBJ_EXT says so).
            unsafe { (self.word(n) as *mut IvarExt).write(ext) };
            self.basic.aux = n as u32 | OBJ_EXT;
        }
        let n = self.inline_len();
        if let Some(ext) = self.ext() {
            ext.set(idx - n, v);
        }
    }

    pub fn ivar_capacity(&self) -> usize {
        self.inline_len() + self.ext_ivars().len()
    }

    /// Frees the ivar block of a dead object.
    ///
    /// # Safety
    /// `p` is a dead Object slot, not used as an object again.
    pub unsafe fn finalize(p: *mut RObject) {
        if let Some(ext) = (*p).ext() {
            std::ptr::drop_in_place(ext);
        }
    }
}

/// A Rust value wrapped as a Ruby object (Time, Regexp, Enumerator, …).
pub trait DataObj: Any {
    /// Marks the Ruby values this payload holds.
    fn mark(&self, _m: &mut Marker<'_>) {}
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

/// Implements the `as_any` boilerplate of `DataObj` for a type whose payload holds no
/// Ruby values (or lists the fields to mark).
#[macro_export]
macro_rules! data_obj {
    ($t:ty) => {
        impl $crate::object::DataObj for $t {
            fn as_any(&self) -> &dyn std::any::Any { self }
            fn as_any_mut(&mut self) -> &mut dyn std::any::Any { self }
        }
    };
    ($t:ty, |$s:ident, $m:ident| $body:block) => {
        impl $crate::object::DataObj for $t {
            fn mark(&self, $m: &mut $crate::heap::Marker<'_>) { let $s = self; $body }
            fn as_any(&self) -> &dyn std::any::Any { self }
            fn as_any_mut(&mut self) -> &mut dyn std::any::Any { self }
        }
    };
}

#[repr(C)]
pub struct RData {
    pub basic: RBasic,
    pub data: Box<dyn DataObj>,
    /// The payload's concrete type, recorded at creation so that `data_ref` checks it with
    /// an inline compare instead of a virtual `type_id` call (builtins downcast their
    /// receiver on every call).
    pub type_id: std::any::TypeId,
}

/// The payload of a Data object if it has type `T`.
#[inline]
pub fn data_ref<'a, T: 'static>(v: Value) -> Option<&'a mut T> {
    if !is_type(v, ObjType::Data) {
        return None;
    }
    // SAFETY: type checked above.
    let d = unsafe { &mut *v.as_ptr::<RData>() };
    if d.type_id != std::any::TypeId::of::<T>() {
        return None;
    }
    // SAFETY: `type_id` is the payload's concrete type (set with it in `new_data`), so the
    // box's data pointer points at a `T`.
    Some(unsafe { &mut *(&mut *d.data as *mut dyn DataObj as *mut T) })
}

/// Replaces the payload of Data object `v` (for `initialize` of classes whose allocator
/// makes a placeholder payload); the old payload is dropped.
pub fn set_data(v: Value, data: Box<dyn DataObj>) {
    debug_assert!(is_type(v, ObjType::Data));
    let type_id = <dyn Any as Any>::type_id(data.as_any());
    // SAFETY: callers pass a Data object (checked by their `data_ref` of the placeholder);
    // payload and type id are replaced together.
    let d = unsafe { &mut *v.as_ptr::<RData>() };
    d.data = data;
    d.type_id = type_id;
}

/// The payload `allocate` gives instances of builtin Data classes (Time, Random, Fiber,
/// File, Enumerator): no method but `initialize` finds its payload type, so each raises
/// its "uninitialized ..." error until `initialize` replaces it (`move_data`).
pub struct Uninitialized;
crate::data_obj!(Uninitialized);

/// `AllocKind::Data` allocator of an uninitialized instance (see `Uninitialized`).
pub fn alloc_uninitialized(ctx: &mut crate::thread::Ctx, klass: Value) -> crate::Result<Value> {
    Ok(crate::core::object::new_data(ctx, klass, Box::new(Uninitialized)))
}

/// Moves the payload of the Data object `src` (just built by a builtin constructor) into
/// the Data object `dst` (made by `allocate`): how a builtin `initialize` fills in its
/// receiver while `new` stays allocate + initialize. `src` keeps `dst`'s old payload.
pub fn move_data(dst: Value, src: Value) {
    debug_assert!(is_type(dst, ObjType::Data) && is_type(src, ObjType::Data));
    // SAFETY: both are Data objects (callers allocate `dst` with a Data allocator and build
    // `src` with `new_data`); payload and type id move together.
    unsafe {
        let (d, s) = (&mut *dst.as_ptr::<RData>(), &mut *src.as_ptr::<RData>());
        std::mem::swap(&mut d.data, &mut s.data);
        std::mem::swap(&mut d.type_id, &mut s.type_id);
    }
}

const _: () = assert!(std::mem::size_of::<RObject>() <= SLOT_SIZE);
const _: () = assert!(std::mem::size_of::<RData>() <= SLOT_SIZE);

/// Whether every store of a reference into objects of type `t` goes through a write
/// barrier (`crate::heap::write_barrier`, `RObject::set_ivar`, Array's `ItemsMut`), so that
/// an old one needs tracing by a minor collection only after such a store. Old objects of
/// the other types are traced by every minor collection.
#[inline]
pub fn wb_protected(t: ObjType) -> bool {
    matches!(t, ObjType::String | ObjType::Float | ObjType::Bignum | ObjType::Array | ObjType::Object)
}

/// Marks what object `v` references. Called by the marker for each newly marked object.
pub fn mark_children(v: Value, m: &mut Marker<'_>) {
    let b = basic(v);
    m.mark(b.klass);
    // SAFETY (all arms): the type tag says which struct occupies the slot.
    unsafe {
        match b.obj_type() {
            ObjType::Free | ObjType::Float | ObjType::Bignum => {}
            ObjType::Object => {
                let o = &*v.as_ptr::<RObject>();
                m.mark_all(o.inline());
                m.mark_all(o.ext_ivars());
            }
            ObjType::Class => crate::core::module::mark_class(v, m),
            ObjType::String => {}
            ObjType::Array => crate::core::array::mark(v, m),
            ObjType::Hash => crate::core::hash::mark(v, m),
            ObjType::Range => crate::core::range::mark(v, m),
            ObjType::Proc => crate::core::proc::mark(v, m),
            ObjType::Env => crate::interp::env::mark_env(v, m),
            ObjType::Cref => crate::interp::env::mark_cref(v, m),
            ObjType::Iseq => crate::compile::iseq::mark(v, m),
            ObjType::Data => (*v.as_ptr::<RData>()).data.mark(m),
        }
    }
}

/// Releases a dead object's out-of-line storage. The slot itself is reused by the heap.
///
/// # Safety
/// `p` must be a dead object slot that is not `Free`; it is not used again as an object.
pub unsafe fn finalize(p: *mut RBasic) {
    match (*p).obj_type() {
        ObjType::Free | ObjType::Float | ObjType::Range | ObjType::Proc | ObjType::Cref => {}
        ObjType::Object => RObject::finalize(p as *mut RObject),
        ObjType::Class => crate::core::module::finalize_class(p),
        ObjType::String => crate::core::string::finalize(p),
        ObjType::Array => crate::core::array::finalize(p),
        ObjType::Hash => crate::core::hash::finalize(p),
        ObjType::Bignum => crate::core::bignum::finalize(p),
        ObjType::Env => crate::interp::env::finalize_env(p),
        ObjType::Iseq => crate::compile::iseq::finalize(p),
        ObjType::Data => std::ptr::drop_in_place(&mut (*(p as *mut RData)).data),
    }
}
