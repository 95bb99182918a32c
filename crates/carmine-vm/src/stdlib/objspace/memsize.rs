//! Memory sizes of heap objects for `ObjectSpace.memsize_of` and friends: the object's
//! slot plus the out-of-line buffers it owns (the capacity of each, not its length), as
//! Carmine's heap lays them out. Shared structures (an `Arc`ed method entry defined by
//! another class, a frozen literal) are counted by their owner only.

use std::collections::HashMap;
use std::mem::size_of;

use crate::core::module::{self, body};
use crate::object::{basic, ObjType, RData, RObject, FL_EXIVAR};
use crate::thread::Ctx;
use crate::value::Value;

fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}

/// A hash map's table: hashbrown keeps one control byte per bucket next to each entry.
fn map_bytes<K, V, S>(m: &HashMap<K, V, S>) -> usize {
    if m.capacity() == 0 {
        0
    } else {
        (m.capacity() + 1).next_power_of_two() * (size_of::<(K, V)>() + 1)
    }
}

/// The bytes `v` occupies: 0 for immediates, else its slot and what it owns.
pub fn memsize_of(ctx: &Ctx, v: Value) -> usize {
    if !v.is_heap() {
        return 0;
    }
    // SAFETY: v is a heap object, in a page in use.
    let mut n = unsafe { crate::heap::page::slot_size_of(v.as_ptr()) } + owned_bytes(v);
    if basic(v).has(FL_EXIVAR) {
        if let Some(ivars) = ctx.vm().generic_ivars.borrow().get(&(v.raw() as usize)) {
            n += vec_bytes(ivars);
        }
    }
    n
}

/// The out-of-line bytes owned by heap object `v`.
pub fn owned_bytes(v: Value) -> usize {
    // SAFETY (all arms): the type tag says which struct occupies the slot.
    unsafe {
        match basic(v).obj_type() {
            ObjType::Free | ObjType::Float | ObjType::Range | ObjType::Proc | ObjType::Cref => 0,
            ObjType::Object => (*v.as_ptr::<RObject>()).ext_bytes(),
            ObjType::String => crate::core::string::heap_bytes(v),
            ObjType::Array => crate::core::array::rarray(v).items().heap_bytes(),
            ObjType::Hash => {
                let h = &*v.as_ptr::<crate::core::hash::RHash>();
                vec_bytes(&h.entries) + h.index.as_ref().map_or(0, |ix| ix.len() * size_of::<u32>())
            }
            ObjType::Bignum => (crate::core::bignum::get(v).bits() as usize).div_ceil(64) * 8,
            ObjType::Class => class_bytes(v),
            ObjType::Env => (&*v.as_ptr::<crate::interp::env::REnv>()).vals.len() * size_of::<Value>(),
            ObjType::Iseq => {
                let i = crate::compile::iseq::iseq_of(v);
                size_of::<crate::compile::iseq::Iseq>()
                    + i.name.capacity()
                    + vec_bytes(&i.code)
                    + vec_bytes(&i.lines)
                    + vec_bytes(&i.literals)
                    + vec_bytes(&i.calls)
                    + vec_bytes(&i.children)
                    + vec_bytes(&i.catch_table)
                    + vec_bytes(&i.local_names)
                    + vec_bytes(&i.ivar_caches)
            }
            ObjType::Data => std::mem::size_of_val(&*(*v.as_ptr::<RData>()).data),
        }
    }
}

/// A class or module: its body and tables, and the method entries it defined.
fn class_bytes(k: Value) -> usize {
    let b = body(k);
    let own_entries = b.methods.values().filter(|me| me.owner == k).count();
    size_of::<module::ClassBody>()
        + map_bytes(&b.methods)
        + own_entries * (size_of::<module::MethodEntry>() + 2 * size_of::<usize>())
        + vec_bytes(&b.consts)
        + map_bytes(&b.const_index)
        + vec_bytes(&b.cvars)
        + vec_bytes(&b.ivars)
        + map_bytes(&b.iv_index)
        + vec_bytes(&b.iv_names)
        + vec_bytes(&b.includes)
        + vec_bytes(&b.prepends)
        + vec_bytes(&b.subclasses)
        + map_bytes(&b.method_cache.borrow())
}
