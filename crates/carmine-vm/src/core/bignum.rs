//! Bignum: Integers outside the Fixnum range, boxed around `num_bigint::BigInt`.
//!
//! Invariant: a Bignum value never fits in a Fixnum (`normalize` demotes), so an Integer
//! has exactly one representation and `==` on Fixnums stays a word compare.

use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};

use crate::heap::page::SLOT_SIZE;
use crate::object::{is_type, ObjType, RBasic};
use crate::thread::Ctx;
use crate::value::Value;

#[repr(C)]
pub struct RBignum {
    pub basic: RBasic,
    pub value: BigInt,
}

const _: () = assert!(std::mem::size_of::<RBignum>() <= SLOT_SIZE);

#[inline]
pub fn is_bignum(v: Value) -> bool {
    is_type(v, ObjType::Bignum)
}

/// The BigInt of a Bignum value.
pub fn get<'a>(v: Value) -> &'a BigInt {
    // SAFETY: callers pass a Bignum value; its BigInt is immutable.
    unsafe { &(*v.as_ptr::<RBignum>()).value }
}

/// An Integer (Fixnum or Bignum) as a BigInt.
pub fn to_big(v: Value) -> BigInt {
    match v.as_fixnum() {
        Some(i) => BigInt::from(i),
        None => get(v).clone(),
    }
}

/// The Integer for `n`: a Fixnum when it fits, else a new Bignum.
pub fn normalize(ctx: &mut Ctx, n: BigInt) -> Value {
    if let Some(i) = n.to_i64() {
        if let Some(v) = Value::try_fixnum(i) {
            return v;
        }
    }
    let bytes = n.bits() as usize / 8;
    if bytes > 4096 {
        ctx.note_malloc(bytes);
    }
    let klass = ctx.c().integer;
    let p = ctx.alloc_slot(ObjType::Bignum, klass) as *mut RBignum;
    // SAFETY: fresh Bignum slot.
    unsafe {
        std::ptr::write(&mut (*p).value, n);
        (*p).basic.flags |= crate::object::FL_FROZEN;
    }
    Value::from_ptr(p)
}

/// a * b as an Integer. The bytes the product allocates and frees (NTT buffers) are noted
/// like the result's, as CRuby counts its temporary buffers: products left as garbage then
/// trigger collections in proportion to the memory they churn, not only to their results.
pub fn mul(ctx: &mut Ctx, a: &BigInt, b: &BigInt) -> Value {
    let r = crate::core::bigmul::mul(a, b);
    ctx.note_malloc(crate::core::bigmul::scratch_bytes(a.iter_u64_digits().len(), b.iter_u64_digits().len()));
    normalize(ctx, r)
}

pub fn from_bigint(ctx: &mut Ctx, n: BigInt) -> Value {
    normalize(ctx, n)
}

pub fn from_i128(ctx: &mut Ctx, n: i128) -> Value {
    if let Ok(i) = i64::try_from(n) {
        if let Some(v) = Value::try_fixnum(i) {
            return v;
        }
    }
    normalize(ctx, BigInt::from(n))
}

/// Low 64 bits (for hashing).
pub fn low_u64(v: Value) -> u64 {
    let b = get(v);
    let (sign, digits) = b.to_u64_digits();
    let low = digits.first().copied().unwrap_or(0);
    if sign == Sign::Minus {
        low.wrapping_neg()
    } else {
        low
    }
}

pub fn is_zero(v: Value) -> bool {
    get(v).is_zero()
}

/// # Safety
/// `p` is a dead Bignum slot.
pub unsafe fn finalize(p: *mut RBasic) {
    std::ptr::drop_in_place(&mut (*(p as *mut RBignum)).value);
}

pub fn init(_ctx: &mut Ctx) {}

/// Low 64 bits of any Integer (for seeding).
pub fn low_u64_any(v: Value) -> u64 {
    match v.as_fixnum() {
        Some(i) => i as u64,
        None => low_u64(v),
    }
}
