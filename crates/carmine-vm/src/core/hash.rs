//! Hash: an insertion-ordered hash table with Ruby's `hash`/`eql?` key semantics.
//!
//! Invariants:
//! - `entries` keeps insertion order; a deleted entry has key `UNDEF` and stays until the
//!   next compaction. `RBasic::aux` holds the number of live entries.
//! - With more than `LINEAR_MAX` entries, `index` is an open-addressing table of
//!   `entry index + 1` (0 = empty), capacity a power of two at least twice the entries.
//!   Slots may point at deleted entries; probing skips them.
//! - Keys whose `hash`/`eql?` are user-defined are hashed by calling Ruby; the table is
//!   never borrowed across such a call (hash first, then probe).
//! - String keys are copied and frozen on insertion (unless compare_by_identity).
//! - While a block iterates a hash (`each_pair` and everything built on it), the hash's
//!   iteration level (flag bits `ITER_SHIFT..`) is positive; adding a new key then raises
//!   "can't add a new key into hash during iteration", as in CRuby. Deleting is allowed:
//!   iteration walks `entries` by position and skips deleted slots.

use crate::core::{array, object, string};
use crate::heap::page::SLOT_SIZE;
use crate::heap::Marker;
use crate::interp::Args;
use crate::object::{basic, is_type, ObjType, RBasic, FL_USER0, FL_USER2, FL_USER3};
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy)]
pub struct Entry {
    pub hash: u64,
    pub key: Value,
    pub value: Value,
}

#[repr(C)]
pub struct RHash {
    pub basic: RBasic,
    pub entries: Vec<Entry>,
    pub index: Option<Box<[u32]>>,
    /// Default value, or default proc when `FL_DEFAULT_PROC` is set.
    pub default: Value,
}

const _: () = assert!(std::mem::size_of::<RHash>() <= SLOT_SIZE);

/// Keys compare by identity (`compare_by_identity`).
pub const FL_IDENTITY: u32 = FL_USER0;
/// `default` holds a Proc.
pub const FL_DEFAULT_PROC: u32 = FL_USER2;
/// The hash was flagged by `ruby2_keywords` (a splatted trailing hash becomes keywords).
pub const FL_RUBY2_KEYWORDS: u32 = FL_USER3;

const LINEAR_MAX: usize = 8;

/// The iteration level lives in the high bits of `flags`.
const ITER_SHIFT: u32 = 20;
const ITER_MAX: u32 = (u32::MAX >> ITER_SHIFT) as u32;

#[inline(always)]
pub fn rhash<'a>(v: Value) -> &'a mut RHash {
    debug_assert!(is_hash(v));
    // SAFETY: callers pass a Hash value.
    unsafe { &mut *v.as_ptr::<RHash>() }
}

#[inline]
pub fn is_hash(v: Value) -> bool {
    is_type(v, ObjType::Hash)
}

#[inline]
pub fn is_plain_hash(v: Value) -> bool {
    is_hash(v) && basic(basic(v).klass).has(crate::object::FL_USER1)
}

pub fn is_ruby2_keywords(v: Value) -> bool {
    basic(v).has(FL_RUBY2_KEYWORDS)
}

// ---- hashing ----

/// The hash of a Fixnum, a Symbol or another immediate value under `seed` (what
/// `object::hash_of` gives them: no method is called).
#[inline]
pub fn immediate_hash(seed: u64, v: Value) -> u64 {
    mix(seed, v.raw())
}

#[inline]
pub fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn hash_bytes(seed: u64, b: &[u8]) -> u64 {
    let mut h = seed ^ (b.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h ^ w).wrapping_mul(0x5851_f42d_4c95_7f2d).rotate_left(29);
    }
    let rem = chunks.remainder();
    if !rem.is_empty() {
        let mut buf = [0u8; 8];
        buf[..rem.len()].copy_from_slice(rem);
        h = (h ^ u64::from_le_bytes(buf)).wrapping_mul(0x5851_f42d_4c95_7f2d).rotate_left(29);
    }
    mix(h, 0)
}

/// The hash of a key for table `h`.
fn key_hash(ctx: &mut Ctx, h: Value, key: Value) -> Result<u64> {
    if basic(h).has(FL_IDENTITY) {
        return Ok(object::identity_hash(ctx, key));
    }
    object::hash_of(ctx, key)
}

fn keys_equal(ctx: &mut Ctx, h: Value, a: Value, b: Value) -> Result<bool> {
    if a == b {
        return Ok(true);
    }
    if basic(h).has(FL_IDENTITY) {
        return Ok(false);
    }
    object::eql(ctx, a, b)
}

// ---- construction ----

pub fn new(ctx: &mut Ctx) -> Value {
    let klass = ctx.c().hash;
    let p = ctx.alloc_slot(ObjType::Hash, klass) as *mut RHash;
    // SAFETY: fresh Hash slot.
    unsafe {
        std::ptr::write(&mut (*p).entries, Vec::new());
        std::ptr::write(&mut (*p).index, None);
        (*p).default = Value::NIL;
    }
    Value::from_ptr(p)
}

pub fn mark(v: Value, m: &mut Marker<'_>) {
    let h = rhash(v);
    for e in &h.entries {
        m.mark(e.key);
        m.mark(e.value);
    }
    m.mark(h.default);
}

/// # Safety
/// `p` is a dead Hash slot.
pub unsafe fn finalize(p: *mut RBasic) {
    let h = p as *mut RHash;
    std::ptr::drop_in_place(&mut (*h).entries);
    std::ptr::drop_in_place(&mut (*h).index);
}

#[inline]
pub fn len(h: Value) -> usize {
    basic(h).aux as usize
}

fn set_len(h: Value, n: usize) {
    basic(h).aux = n as u32;
}

/// A new Hash of the Symbol keys `keys` (distinct: the caller checked) and the values on
/// the VM stack from `at`, in that order: the entries made at once, without a lookup or a
/// table growth per key (keyword arguments handed to a builtin, `interp::call::kw_hash`).
pub fn from_distinct_symbols(ctx: &mut Ctx, keys: &[SymId], at: usize) -> Value {
    let seed = ctx.vm().hash_seed;
    let vals = &ctx.stacks.stack[at..at + keys.len()];
    let entries: Vec<Entry> = keys
        .iter()
        .zip(vals)
        .map(|(&k, &value)| {
            let key = Value::symbol(k);
            Entry { hash: immediate_hash(seed, key), key, value }
        })
        .collect();
    let n = entries.len();
    let h = new(ctx);
    let r = rhash(h);
    r.entries = entries;
    rebuild_index(r);
    set_len(h, n);
    h
}

/// Whether a block is iterating over `h`.
#[inline]
pub fn iterating(h: Value) -> bool {
    basic(h).flags >> ITER_SHIFT != 0
}

/// Runs `f` with `h` marked as being iterated. Levels saturate; a saturated level is never
/// decremented, so the hash then stays "iterating" (as CRuby does past its limit).
pub fn with_iteration<R>(ctx: &mut Ctx, h: Value, f: impl FnOnce(&mut Ctx) -> Result<R>) -> Result<R> {
    let lev = basic(h).flags >> ITER_SHIFT;
    let counted = lev < ITER_MAX;
    if counted {
        basic(h).flags += 1 << ITER_SHIFT;
    }
    let r = f(ctx);
    if counted {
        basic(h).flags -= 1 << ITER_SHIFT;
    }
    r
}

/// Calls `f(key, value)` for each live entry, in order, with the hash marked as iterated.
/// Entries added or deleted by `f` are handled like CRuby: iteration goes by position.
pub fn each_pair(ctx: &mut Ctx, h: Value, f: &mut dyn FnMut(&mut Ctx, Value, Value) -> Result<bool>) -> Result<()> {
    with_iteration(ctx, h, |ctx| {
        let mut i = 0;
        while let Some(e) = entry_at(h, i) {
            if let Some((k, v)) = e {
                if !f(ctx, k, v)? {
                    break;
                }
            }
            i += 1;
        }
        Ok(())
    })
}

// ---- table operations ----

fn rebuild_index(h: &mut RHash) {
    if h.entries.len() <= LINEAR_MAX {
        h.index = None;
        return;
    }
    let cap = (h.entries.len() * 2).next_power_of_two().max(16);
    let mut idx = vec![0u32; cap].into_boxed_slice();
    let mask = cap - 1;
    for (i, e) in h.entries.iter().enumerate() {
        if e.key.is_undef() {
            continue;
        }
        let mut p = (e.hash as usize) & mask;
        while idx[p] != 0 {
            p = (p + 1) & mask;
        }
        idx[p] = i as u32 + 1;
    }
    h.index = Some(idx);
}

fn compact(h: &mut RHash) {
    h.entries.retain(|e| !e.key.is_undef());
    rebuild_index(h);
}

/// Position of `key` (with precomputed hash) in `entries`.
fn find(ctx: &mut Ctx, hv: Value, key: Value, hash: u64) -> Result<Option<usize>> {
    let has_index = rhash(hv).index.is_some();
    if !has_index {
        let mut i = 0;
        while i < rhash(hv).entries.len() {
            let e = rhash(hv).entries[i];
            if !e.key.is_undef() && e.hash == hash && keys_equal(ctx, hv, key, e.key)? {
                return Ok(Some(i));
            }
            i += 1;
        }
        return Ok(None);
    }
    let cap = rhash(hv).index.as_ref().map_or(0, |x| x.len());
    let mask = cap - 1;
    let mut p = (hash as usize) & mask;
    for _ in 0..cap {
        let slot = match &rhash(hv).index {
            Some(idx) => idx[p],
            None => return find(ctx, hv, key, hash),
        };
        if slot == 0 {
            return Ok(None);
        }
        let i = (slot - 1) as usize;
        let e = rhash(hv).entries[i];
        if !e.key.is_undef() && e.hash == hash && keys_equal(ctx, hv, key, e.key)? {
            return Ok(Some(i));
        }
        p = (p + 1) & mask;
    }
    Ok(None)
}

/// Looks up without calling Ruby: for immediate and String keys (keyword arguments).
pub fn get(hv: Value, key: Value) -> Option<Value> {
    rhash(hv).entries.iter().find(|e| !e.key.is_undef() && (e.key == key || (string::is_string(key) && string::is_string(e.key) && string::eq(key, e.key)))).map(|e| e.value)
}

pub fn lookup(ctx: &mut Ctx, hv: Value, key: Value) -> Result<Option<Value>> {
    if len(hv) == 0 {
        return Ok(None);
    }
    let hash = key_hash(ctx, hv, key)?;
    Ok(find(ctx, hv, key, hash)?.map(|i| rhash(hv).entries[i].value))
}

/// `h[k] = v` without the frozen check and without copying string keys.
pub fn insert_raw(ctx: &mut Ctx, hv: Value, key: Value, value: Value) -> Result<()> {
    let hash = key_hash(ctx, hv, key)?;
    if let Some(i) = find(ctx, hv, key, hash)? {
        rhash(hv).entries[i].value = value;
        return Ok(());
    }
    push_new(ctx, hv, key, value, hash)
}

/// Appends an entry for `key`, which the caller has just looked up (with hash `hash`) and
/// not found.
fn push_new(ctx: &mut Ctx, hv: Value, key: Value, value: Value, hash: u64) -> Result<()> {
    if iterating(hv) {
        return Err(ctx.runtime_error("can't add a new key into hash during iteration"));
    }
    let h = rhash(hv);
    let cap = h.entries.capacity();
    h.entries.push(Entry { hash, key, value });
    let n = len(hv) + 1;
    set_len(hv, n);
    let h = rhash(hv);
    if h.entries.len() > LINEAR_MAX {
        let need_rebuild = match &h.index {
            None => true,
            Some(idx) => h.entries.len() * 2 > idx.len(),
        };
        if need_rebuild {
            if h.entries.len() > 2 * n + 8 {
                compact(h);
            } else {
                rebuild_index(h);
            }
        } else if let Some(idx) = &mut h.index {
            let mask = idx.len() - 1;
            let mut p = (hash as usize) & mask;
            while idx[p] != 0 {
                p = (p + 1) & mask;
            }
            idx[p] = h.entries.len() as u32;
        }
    }
    if h.entries.capacity() != cap && cap >= 32 {
        ctx.note_malloc((h.entries.capacity() - cap) * std::mem::size_of::<Entry>());
    }
    Ok(())
}

/// `h[k] = v` with Ruby's semantics (string keys are copied and frozen).
pub fn aset(ctx: &mut Ctx, hv: Value, key: Value, value: Value) -> Result<()> {
    let key = if string::is_string(key) && !object::is_frozen(key) && !basic(hv).has(FL_IDENTITY) {
        let hash = key_hash(ctx, hv, key)?;
        if let Some(i) = find(ctx, hv, key, hash)? {
            rhash(hv).entries[i].value = value;
            return Ok(());
        }
        let k = object::freeze(string::dup_literal(ctx, key));
        if string::is_plain_string(key) {
            // The copy hashes like `key` (no Ruby code ran since the lookup), so the table
            // needs no second lookup.
            return push_new(ctx, hv, k, value, hash);
        }
        k
    } else {
        key
    };
    insert_raw(ctx, hv, key, value)
}

/// `h[k] = v` from compiled code (frozen check included).
pub fn aset_from_code(ctx: &mut Ctx, hv: Value, key: Value, value: Value) -> Result<()> {
    ctx.check_frozen(hv)?;
    aset(ctx, hv, key, value)
}

pub fn delete(ctx: &mut Ctx, hv: Value, key: Value) -> Result<Option<Value>> {
    if len(hv) == 0 {
        return Ok(None);
    }
    let hash = key_hash(ctx, hv, key)?;
    match find(ctx, hv, key, hash)? {
        Some(i) => {
            let h = rhash(hv);
            let v = h.entries[i].value;
            h.entries[i].key = Value::UNDEF;
            h.entries[i].value = Value::NIL;
            let n = len(hv) - 1;
            set_len(hv, n);
            let h = rhash(hv);
            if n == 0 {
                h.entries.clear();
                h.index = None;
            } else if h.entries.len() > 32 && h.entries.len() > 2 * n && !iterating(hv) {
                // Not while iterated: iteration goes by position, and compacting moves
                // the entries after the hole (Hash#select deleting from its copy skipped
                // entries).
                compact(h);
            }
            Ok(Some(v))
        }
        None => Ok(None),
    }
}

pub fn clear(hv: Value) {
    let h = rhash(hv);
    h.entries.clear();
    h.index = None;
    set_len(hv, 0);
}

/// Live (key, value) pairs in order (a snapshot).
pub fn pairs(hv: Value) -> Vec<(Value, Value)> {
    rhash(hv).entries.iter().filter(|e| !e.key.is_undef()).map(|e| (e.key, e.value)).collect()
}

/// The live entry at position `i` of `entries`, for iteration that tolerates mutation.
pub fn entry_at(hv: Value, i: usize) -> Option<Option<(Value, Value)>> {
    let e = rhash(hv).entries.get(i)?;
    Some(if e.key.is_undef() { None } else { Some((e.key, e.value)) })
}

pub fn dup(ctx: &mut Ctx, hv: Value) -> Value {
    let n = new(ctx);
    copy_into(n, hv);
    n
}

fn copy_into(dst: Value, src: Value) {
    let s = rhash(src);
    let entries: Vec<Entry> = s.entries.iter().filter(|e| !e.key.is_undef()).copied().collect();
    let default = s.default;
    let flags = basic(src).flags & (FL_IDENTITY | FL_DEFAULT_PROC);
    let d = rhash(dst);
    d.entries = entries;
    d.default = default;
    basic(dst).flags = (basic(dst).flags & !(FL_IDENTITY | FL_DEFAULT_PROC)) | flags;
    let n = rhash(dst).entries.len();
    set_len(dst, n);
    rebuild_index(rhash(dst));
}

pub fn dup_with_class(ctx: &mut Ctx, hv: Value, klass: Value) -> Value {
    let n = dup(ctx, hv);
    basic(n).klass = klass;
    n
}

/// `{k1 => v1, …}` from a flat slice of keys and values.
pub fn from_pairs_slice(ctx: &mut Ctx, items: &[Value]) -> Result<Value> {
    let h = new(ctx);
    for kv in items.chunks(2) {
        aset(ctx, h, kv[0], kv[1])?;
    }
    Ok(h)
}

/// `**src` merged into `dst` (which the compiler created).
pub fn merge_kwsplat(ctx: &mut Ctx, dst: Value, src: Value) -> Result<()> {
    if src.is_nil() {
        return Ok(());
    }
    let src = to_hash_arg(ctx, src)?;
    for (k, v) in pairs(src) {
        aset(ctx, dst, k, v)?;
    }
    Ok(())
}

/// Implicit conversion to Hash (`to_hash`), CRuby's `rb_convert_type`.
pub fn to_hash_arg(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if is_hash(v) {
        return Ok(v);
    }
    let r = if v.is_heap() { crate::core::convert::check_funcall(ctx, v, sym::TO_HASH, &[])? } else { None };
    match r {
        None => Err(ctx.conversion_error(v, "Hash")),
        Some(r) if is_hash(r) => Ok(r),
        Some(r) => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} into Hash ({cname}#to_hash gives {rname})")))
        }
    }
}

/// `to_hash` if the object answers it (nil result included), else `None`
/// (CRuby's `rb_check_hash_type`).
pub fn try_to_hash(ctx: &mut Ctx, v: Value) -> Result<Option<Value>> {
    if is_hash(v) {
        return Ok(Some(v));
    }
    if !v.is_heap() {
        return Ok(None);
    }
    match crate::core::convert::check_funcall(ctx, v, sym::TO_HASH, &[])? {
        None => Ok(None),
        Some(r) if r.is_nil() => Ok(None),
        Some(r) if is_hash(r) => Ok(Some(r)),
        Some(r) => {
            let cname = object::class_name_of(ctx, v);
            let rname = object::class_name_of(ctx, r);
            Err(ctx.type_error(&format!("can't convert {cname} into Hash ({cname}#to_hash gives {rname})")))
        }
    }
}

/// `h[k]` including the default value/proc.
pub fn aref(ctx: &mut Ctx, hv: Value, key: Value) -> Result<Value> {
    if let Some(v) = lookup(ctx, hv, key)? {
        return Ok(v);
    }
    default_for(ctx, hv, key)
}

pub fn default_for(ctx: &mut Ctx, hv: Value, key: Value) -> Result<Value> {
    if !is_plain_hash(hv) {
        return ctx.call(hv, sym::DEFAULT, &[key]);
    }
    let h = rhash(hv);
    if basic(hv).has(FL_DEFAULT_PROC) {
        let p = h.default;
        return ctx.call_proc(p, &[hv, key], None);
    }
    Ok(h.default)
}

// ---- core methods (the rest are in hash_methods.rs) ----

fn s_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = object::allocate(ctx, recv)?;
    // Hash's own `initialize` with at most a default value (no block, no keywords) can
    // neither raise nor run Ruby code, so nothing can see the frame it would have: it is
    // done here (`allocate` left the default nil), without a lookup by name and a call.
    if args.block.is_none() && args.kw.is_none() && args.pos.len() <= 1 {
        let klass = crate::interp::class_of(ctx, h);
        let own = crate::core::module::find_method_ref(ctx, klass, sym::INITIALIZE).is_some_and(|me| me.is_builtin(initialize));
        if own {
            if let Some(&d) = args.pos.first() {
                rhash(h).default = d;
            }
            return Ok(h);
        }
    }
    ctx.call_kw(h, sym::INITIALIZE, args.pos, args.kw, args.block)?;
    Ok(h)
}

fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    rhash(recv).default = Value::NIL;
    basic(recv).flags &= !FL_DEFAULT_PROC;
    if let Some(b) = args.block {
        if !args.pos.is_empty() {
            return Err(ctx.arity_error(args.pos.len(), 0, Some(0)));
        }
        let p = crate::core::proc::from_block(ctx, &b)?;
        if crate::core::proc::is_lambda(p) {
            let ar = crate::core::proc::arity_of(ctx, p);
            if ar != 2 && !(ar < 0 && ar >= -3) {
                return Err(ctx.type_error(&format!("default proc takes two arguments (2 for {ar})")));
            }
        }
        rhash(recv).default = p;
        basic(recv).flags |= FL_DEFAULT_PROC;
    } else if let Some(&d) = args.pos.first() {
        rhash(recv).default = d;
    }
    if let Some(kw) = args.kw {
        let cap_key = Value::symbol(ctx.intern("capacity"));
        for (k, v) in pairs(kw) {
            if k == cap_key {
                let _ = crate::core::integer::to_i64_arg(ctx, v)?;
            } else {
                let s = object::inspect_string(ctx, k)?;
                return Err(ctx.arg_error(&format!("unknown keyword: {s}")));
            }
        }
    }
    Ok(recv)
}

fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    aref(ctx, recv, args.pos[0])
}

fn m_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    aset(ctx, recv, args.pos[0], args.pos[1])?;
    Ok(args.pos[1])
}

pub(crate) fn m_length(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(len(recv) as i64))
}

fn m_empty(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(len(recv) == 0))
}

fn m_key_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(lookup(ctx, recv, args.pos[0])?.is_some()))
}

fn m_fetch(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let key = args.pos[0];
    if args.block.is_some() && args.pos.len() == 2 {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: block supersedes default value argument\n"));
    }
    if let Some(v) = lookup(ctx, recv, key)? {
        return Ok(v);
    }
    if let Some(b) = args.block {
        return ctx.yield1(&b, key);
    }
    if let Some(&d) = args.pos.get(1) {
        return Ok(d);
    }
    let s = object::inspect_string(ctx, key)?;
    Err(ctx.key_error(&format!("key not found: {s}"), recv, key))
}

fn m_delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match delete(ctx, recv, args.pos[0])? {
        Some(v) => Ok(v),
        None => match args.block {
            Some(b) => ctx.yield1(&b, args.pos[0]),
            None => Ok(Value::NIL),
        },
    }
}

fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "each", &[], crate::core::enumerator::SizeFn::HashLen);
    };
    if crate::interp::call::takes_pair_as_two(&b) {
        each_pair(ctx, recv, &mut |ctx, k, v| {
            ctx.yield_block(&b, &[k, v])?;
            Ok(true)
        })?;
        return Ok(recv);
    }
    each_pair(ctx, recv, &mut |ctx, k, v| {
        let pair = array::from_slice(ctx, &[k, v]);
        ctx.yield1(&b, pair)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn m_each_pair(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(_) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "each_pair", &[], crate::core::enumerator::SizeFn::HashLen);
    };
    m_each(ctx, recv, args)
}

fn m_each_key(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "each_key", &[], crate::core::enumerator::SizeFn::HashLen);
    };
    each_pair(ctx, recv, &mut |ctx, k, _| {
        ctx.yield1(&b, k)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn m_each_value(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return crate::core::enumerator::enum_for_this(ctx, recv, "each_value", &[], crate::core::enumerator::SizeFn::HashLen);
    };
    each_pair(ctx, recv, &mut |ctx, _, v| {
        ctx.yield1(&b, v)?;
        Ok(true)
    })?;
    Ok(recv)
}

fn m_keys(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v: Vec<Value> = pairs(recv).into_iter().map(|(k, _)| k).collect();
    Ok(array::from_vec(ctx, v))
}

fn m_values(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v: Vec<Value> = pairs(recv).into_iter().map(|(_, v)| v).collect();
    Ok(array::from_vec(ctx, v))
}

/// Whether a Symbol key is written `"name": v` rather than `name: v` (CRuby 3.4's
/// `symbol_key_needs_quote`): not a plain symbol name, or starting with `@ $ !`, or ending
/// in an operator character.
fn symbol_key_needs_quote(name: &[u8]) -> bool {
    if name.is_empty() || !crate::core::symbol::is_simple_symbol(name) {
        return true;
    }
    if matches!(name[0], b'@' | b'$' | b'!') {
        return true;
    }
    matches!(name[name.len() - 1], b'+' | b'-' | b'*' | b'/' | b'`' | b'%' | b'^' | b'&' | b'|' | b']' | b'<' | b'=' | b'>' | b'~' | b'@')
}

pub fn inspect_hash(ctx: &mut Ctx, recv: Value) -> Result<Value> {
    if len(recv) == 0 {
        return Ok(string::new_utf8(ctx, "{}"));
    }
    let r = object::guard_recursion(ctx, sym::INSPECT, recv, Value::NIL, None, |ctx| {
        let mut out: Vec<u8> = vec![b'{'];
        let mut first = true;
        let mut i = 0;
        while let Some(e) = entry_at(recv, i) {
            i += 1;
            let Some((k, v)) = e else { continue };
            if !first {
                out.extend_from_slice(b", ");
            }
            first = false;
            if let Some(s) = k.as_symbol() {
                let name = ctx.sym_name(s);
                if !symbol_key_needs_quote(&name) {
                    out.extend_from_slice(&name);
                } else {
                    let ks = array::inspect_elem(ctx, k)?;
                    let b = string::bytes(ks);
                    if b.get(1) == Some(&b'"') {
                        out.extend_from_slice(&b[1..]);
                    } else {
                        // `:!` → `"!"`
                        out.push(b'"');
                        out.extend_from_slice(&b[1..]);
                        out.push(b'"');
                    }
                }
                out.extend_from_slice(b": ");
            } else {
                let ks = array::inspect_elem(ctx, k)?;
                out.extend_from_slice(string::bytes(ks));
                out.extend_from_slice(b" => ");
            }
            let vs = array::inspect_elem(ctx, v)?;
            out.extend_from_slice(string::bytes(vs));
        }
        out.push(b'}');
        Ok(Some(out))
    })?;
    Ok(match r {
        Some(b) => string::new_from_bytes(ctx, &b),
        None => string::new_utf8(ctx, "{...}"),
    })
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    inspect_hash(ctx, recv)
}

fn m_to_h(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(b) = args.block {
        let out = new(ctx);
        for (k, v) in pairs(recv) {
            let r = ctx.yield_block(&b, &[k, v])?;
            set_pair(ctx, out, r)?;
        }
        return Ok(out);
    }
    if basic(recv).klass == ctx.c().hash {
        return Ok(recv);
    }
    let d = dup(ctx, recv);
    basic(d).klass = ctx.c().hash;
    Ok(d)
}

/// Stores a `[key, value]` pair produced by a block (`to_h { }`), with CRuby's errors.
pub fn set_pair(ctx: &mut Ctx, h: Value, pair: Value) -> Result<()> {
    let Some(r) = array::try_to_ary(ctx, pair)? else {
        let cname = object::class_name_of(ctx, pair);
        return Err(ctx.type_error(&format!("wrong element type {cname} (expected array)")));
    };
    if array::len(r) != 2 {
        return Err(ctx.arg_error(&format!("element has wrong array length (expected 2, was {})", array::len(r))));
    }
    aset(ctx, h, array::get(r, 0), array::get(r, 1))
}

fn m_to_hash(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

pub fn hashes_equal(ctx: &mut Ctx, a: Value, b: Value, eql: bool) -> Result<bool> {
    if a == b {
        return Ok(true);
    }
    if len(a) != len(b) {
        return Ok(false);
    }
    if len(a) > 0 && basic(a).has(FL_IDENTITY) != basic(b).has(FL_IDENTITY) {
        return Ok(false);
    }
    let op = if eql { sym::EQL } else { sym::EQ };
    object::guard_recursion(ctx, op, a, b, true, |ctx| {
        for (k, v) in pairs(a) {
            match lookup(ctx, b, k)? {
                Some(w) => {
                    let same = if eql { object::eql(ctx, v, w)? } else { object::equal(ctx, v, w)? };
                    if !same {
                        return Ok(false);
                    }
                }
                None => return Ok(false),
            }
        }
        Ok(true)
    })
}

fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if !is_hash(o) {
        if o.is_heap() && ctx.respond_to(o, sym::TO_HASH, true) {
            let r = ctx.call(o, sym::EQ, &[recv])?;
            return Ok(Value::bool(r.truthy()));
        }
        return Ok(Value::FALSE);
    }
    Ok(Value::bool(hashes_equal(ctx, recv, o, false)?))
}

fn m_eql(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    Ok(Value::bool(is_hash(o) && hashes_equal(ctx, recv, o, true)?))
}

/// The `hash` of any Array or Hash that contains itself (directly or not). CRuby gives all
/// recursive structures one hash (its `rb_exec_recursive_outer`), so that `h.eql?({x: h})`
/// implies equal hashes; the value propagates outwards from the recursion point.
pub const RECURSIVE_HASH: i64 = 0x2bad_c0de_5eed;

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let seed = ctx.vm().hash_seed;
    let h = object::guard_recursion(ctx, sym::HASH, recv, Value::NIL, None, |ctx| {
        let mut acc = mix(seed, len(recv) as u64);
        for (k, v) in pairs(recv) {
            let kh = object::hash_of(ctx, k)?;
            let vh = object::hash_of(ctx, v)?;
            if kh == RECURSIVE_HASH as u64 || vh == RECURSIVE_HASH as u64 {
                return Ok(None);
            }
            acc = acc.wrapping_add(mix(kh, vh));
        }
        Ok(Some(acc))
    })?;
    Ok(Value::fixnum(match h {
        Some(h) => (h >> 2) as i64,
        None => RECURSIVE_HASH,
    }))
}

fn m_default(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if basic(recv).has(FL_DEFAULT_PROC) {
        return match args.pos.first() {
            Some(&k) => {
                let p = rhash(recv).default;
                ctx.call_proc(p, &[recv, k], None)
            }
            None => Ok(Value::NIL),
        };
    }
    Ok(rhash(recv).default)
}

fn m_set_default(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    rhash(recv).default = args.pos[0];
    basic(recv).flags &= !FL_DEFAULT_PROC;
    Ok(args.pos[0])
}

fn m_default_proc(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if basic(recv).has(FL_DEFAULT_PROC) {
        Ok(rhash(recv).default)
    } else {
        Ok(Value::NIL)
    }
}

fn m_set_default_proc(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let p = args.pos[0];
    if p.is_nil() {
        rhash(recv).default = Value::NIL;
        basic(recv).flags &= !FL_DEFAULT_PROC;
        return Ok(p);
    }
    let pv = if crate::core::proc::is_proc(p) {
        p
    } else {
        match crate::core::convert::check_funcall(ctx, p, sym::TO_PROC, &[])? {
            Some(c) if crate::core::proc::is_proc(c) => c,
            _ => {
                let cname = object::class_name_of(ctx, p);
                return Err(ctx.type_error(&format!("wrong default_proc type {cname} (expected Proc)")));
            }
        }
    };
    if crate::core::proc::is_lambda(pv) {
        let ar = crate::core::proc::arity_of(ctx, pv);
        if ar != 2 && !(ar < 0 && ar >= -3) {
            return Err(ctx.type_error(&format!("default_proc takes two arguments (2 for {ar})")));
        }
    }
    rhash(recv).default = pv;
    basic(recv).flags |= FL_DEFAULT_PROC;
    Ok(p)
}

fn m_replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    if iterating(recv) {
        return Err(ctx.runtime_error("can't replace hash during iteration"));
    }
    let o = to_hash_arg(ctx, args.pos[0])?;
    if o != recv {
        copy_into(recv, o);
    }
    Ok(recv)
}

fn m_clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    clear(recv);
    Ok(recv)
}

fn m_compare_by_identity(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if basic(recv).has(FL_IDENTITY) {
        return Ok(recv);
    }
    ctx.check_frozen(recv)?;
    if iterating(recv) {
        return Err(ctx.runtime_error("compare_by_identity during iteration"));
    }
    let items = pairs(recv);
    clear(recv);
    basic(recv).flags |= FL_IDENTITY;
    for (k, v) in items {
        insert_raw(ctx, recv, k, v)?;
    }
    Ok(recv)
}

fn m_compare_by_identity_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(basic(recv).has(FL_IDENTITY)))
}

fn m_rehash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    if iterating(recv) {
        return Err(ctx.runtime_error("rehash during iteration"));
    }
    ctx.check_frozen(recv)?;
    let items = pairs(recv);
    clear(recv);
    for (k, v) in items {
        insert_raw(ctx, recv, k, v)?;
    }
    Ok(recv)
}

fn s_ruby2_keywords_hash_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let h = args.pos[0];
    if !is_hash(h) {
        let cname = object::type_name_for_error(ctx, h);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Hash)")));
    }
    Ok(Value::bool(is_ruby2_keywords(h)))
}

fn s_ruby2_keywords_hash(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let h = args.pos[0];
    if !is_hash(h) {
        let cname = object::type_name_for_error(ctx, h);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Hash)")));
    }
    let klass = object::real_class_of(ctx, h);
    let d = dup_with_class(ctx, h, klass);
    object::copy_ivars(ctx, d, h);
    basic(d).flags |= FL_RUBY2_KEYWORDS;
    Ok(d)
}

fn s_try_convert(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    Ok(try_to_hash(ctx, args.pos[0])?.unwrap_or(Value::NIL))
}

fn s_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let h = object::allocate(ctx, recv)?;
    if args.pos.len() == 1 {
        let a = args.pos[0];
        if let Some(src) = try_to_hash(ctx, a)? {
            for (k, v) in pairs(src) {
                aset(ctx, h, k, v)?;
            }
            return Ok(h);
        }
        if let Some(arr) = array::try_to_ary(ctx, a)? {
            let mut i = 0;
            while i < array::len(arr) {
                let item = array::get(arr, i);
                let Some(pair) = array::try_to_ary(ctx, item)? else {
                    let cname = object::type_name_for_error(ctx, item);
                    return Err(ctx.arg_error(&format!("wrong element type {cname} at {i} (expected array)")));
                };
                i += 1;
                match array::len(pair) {
                    1 => aset(ctx, h, array::get(pair, 0), Value::NIL)?,
                    2 => aset(ctx, h, array::get(pair, 0), array::get(pair, 1))?,
                    n => return Err(ctx.arg_error(&format!("invalid number of elements ({n} for 1..2)"))),
                }
            }
            return Ok(h);
        }
    }
    if args.pos.len() % 2 == 1 {
        return Err(ctx.arg_error("odd number of arguments for Hash"));
    }
    for kv in args.pos.chunks(2) {
        aset(ctx, h, kv[0], kv[1])?;
    }
    Ok(h)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().hash;
    basic(c).flags |= crate::object::FL_USER1;
    crate::methods!(ctx, c, [
        ("new", s_new, [0..], Unsafe, Singleton, Kw),
        ("[]", s_aref, [0..], Unsafe, Singleton),
        ("try_convert", s_try_convert, [1], Safe, Singleton),
        ("ruby2_keywords_hash?", s_ruby2_keywords_hash_p, [1], Safe, Singleton),
        ("ruby2_keywords_hash", s_ruby2_keywords_hash, [1], Safe, Singleton),
        ("initialize", initialize, [0..=1], Unsafe, Private, Kw),
        ("[]", m_aref, [1], Safe),
        ("[]=", m_aset, [2], Unsafe),
        ("size", m_length, [0], Safe),
        ("empty?", m_empty, [0], Safe),
        ("include?", m_key_p, [1], Safe),
        ("fetch", m_fetch, [1..=2], Safe),
        ("delete", m_delete, [1], Unsafe),
        ("each_pair", m_each_pair, [0], Safe),
        ("each_key", m_each_key, [0], Safe),
        ("each_value", m_each_value, [0], Safe),
        ("keys", m_keys, [0], Safe),
        ("values", m_values, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("to_h", m_to_h, [0], Safe),
        ("to_hash", m_to_hash, [0], Safe),
        ("==", m_eq, [1], Safe),
        ("eql?", m_eql, [1], Safe),
        ("hash", m_hash, [0], Safe),
        ("default", m_default, [0..=1], Safe),
        ("default=", m_set_default, [1], Unsafe),
        ("default_proc", m_default_proc, [0], Safe),
        ("default_proc=", m_set_default_proc, [1], Unsafe),
        ("replace", m_replace, [1], Unsafe),
        ("initialize_copy", m_replace, [1], Unsafe, Private),
        ("clear", m_clear, [0], Unsafe),
        ("compare_by_identity", m_compare_by_identity, [0], Unsafe),
        ("compare_by_identity?", m_compare_by_identity_p, [0], Safe),
        ("rehash", m_rehash, [0], Unsafe),
    ]);
    crate::core::define_alias(ctx, c, "length", "size");
    crate::core::define_alias(ctx, c, "store", "[]=");
    crate::core::define_alias(ctx, c, "each", "each_pair");
    crate::core::define_alias(ctx, c, "has_key?", "include?");
    crate::core::define_alias(ctx, c, "key?", "include?");
    crate::core::define_alias(ctx, c, "member?", "include?");
    crate::core::define_alias(ctx, c, "to_s", "inspect");
    crate::core::hash_methods::init(ctx);
}
