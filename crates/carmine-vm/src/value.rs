//! The tagged `Value` word.
//!
//! Invariants (CRuby's 64-bit encoding, so common values never allocate):
//! - `xxxx...xxx1`  Fixnum: a 63-bit signed integer shifted left by one.
//! - `xxxx...xx10`  flonum: a double whose exponent fits; bits rotated (see `from_f64`).
//! - `0x00` false, `0x08` nil, `0x14` true, `0x34` undef (an internal "no value"),
//!   `0x24` the block-parameter proxy (internal, see `BLOCK_PARAM_PROXY`).
//! - `(id << 8) | 0x0c`  a static Symbol with symbol-table index `id`.
//! - otherwise an 8-aligned pointer to a heap slot (see `heap`).
//!
//! A `Value` is a plain word: it does not keep its object alive. Objects are kept alive by
//! being reachable from a root (VM stacks, frames, globals, class tables) or by a word on a
//! native stack that points into them (conservative scanning).

use crate::symbol::SymId;

#[derive(Copy, Clone, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub struct Value(pub(crate) u64);

pub const FIXNUM_MAX: i64 = (1 << 62) - 1;
pub const FIXNUM_MIN: i64 = -(1 << 62);

const FLONUM_MASK: u64 = 0x03;
const FLONUM_FLAG: u64 = 0x02;
const SYMBOL_FLAG: u64 = 0x0c;

impl Value {
    pub const FALSE: Value = Value(0x00);
    pub const NIL: Value = Value(0x08);
    pub const TRUE: Value = Value(0x14);
    /// Marks "no value": an unset instance variable, a missing optional, an empty hash slot.
    pub const UNDEF: Value = Value(0x34);
    /// Stands for "the running method's block" between `GetBlockParamProxy` and the call
    /// that consumes it as its `&block` argument (`interp::ops::block_from_value`); it never
    /// reaches Ruby code, a variable or the heap.
    pub const BLOCK_PARAM_PROXY: Value = Value(0x24);

    #[inline(always)]
    pub const fn raw(self) -> u64 {
        self.0
    }

    #[inline(always)]
    pub const fn from_raw(raw: u64) -> Value {
        Value(raw)
    }

    #[inline(always)]
    pub const fn bool(b: bool) -> Value {
        if b {
            Value::TRUE
        } else {
            Value::FALSE
        }
    }

    /// Ruby truthiness: everything but `nil` and `false`.
    #[inline(always)]
    pub const fn truthy(self) -> bool {
        self.0 & !0x08 != 0
    }

    #[inline(always)]
    pub const fn is_nil(self) -> bool {
        self.0 == Value::NIL.0
    }

    #[inline(always)]
    pub const fn is_undef(self) -> bool {
        self.0 == Value::UNDEF.0
    }

    // ---- Fixnum ----

    #[inline(always)]
    pub const fn is_fixnum(self) -> bool {
        self.0 & 1 == 1
    }

    /// A Fixnum; the caller guarantees `i` is within `FIXNUM_MIN..=FIXNUM_MAX`.
    #[inline(always)]
    pub const fn fixnum(i: i64) -> Value {
        Value(((i as u64) << 1) | 1)
    }

    #[inline(always)]
    pub const fn fits_fixnum(i: i64) -> bool {
        i >= FIXNUM_MIN && i <= FIXNUM_MAX
    }

    /// Fixnum if it fits, else `None` (the caller promotes to Bignum).
    #[inline(always)]
    pub const fn try_fixnum(i: i64) -> Option<Value> {
        if Value::fits_fixnum(i) {
            Some(Value::fixnum(i))
        } else {
            None
        }
    }

    #[inline(always)]
    pub const fn as_fixnum(self) -> Option<i64> {
        if self.is_fixnum() {
            Some(self.fixnum_unchecked())
        } else {
            None
        }
    }

    #[inline(always)]
    pub const fn fixnum_unchecked(self) -> i64 {
        (self.0 as i64) >> 1
    }

    // ---- Flonum ----

    #[inline(always)]
    pub const fn is_flonum(self) -> bool {
        self.0 & FLONUM_MASK == FLONUM_FLAG
    }

    /// Encodes `d` inline when its exponent is in the flonum range; `None` means it must be
    /// boxed on the heap.
    #[inline(always)]
    pub fn try_flonum(d: f64) -> Option<Value> {
        let bits = d.to_bits();
        let top = ((bits >> 60) & 0x7) as i32;
        if bits != 0x3000_0000_0000_0000 && ((top - 3) & !0x01) == 0 {
            Some(Value((bits.rotate_left(3) & !0x01) | FLONUM_FLAG))
        } else if bits == 0 {
            Some(Value(0x8000_0000_0000_0002))
        } else {
            None
        }
    }

    #[inline(always)]
    pub fn flonum_unchecked(self) -> f64 {
        if self.0 == 0x8000_0000_0000_0002 {
            return 0.0;
        }
        let b63 = self.0 >> 63;
        let bits = ((2u64.wrapping_sub(b63)) | (self.0 & !0x03)).rotate_right(3);
        f64::from_bits(bits)
    }

    // ---- Symbol ----

    #[inline(always)]
    pub const fn is_symbol(self) -> bool {
        self.0 & 0xff == SYMBOL_FLAG
    }

    #[inline(always)]
    pub const fn symbol(id: SymId) -> Value {
        Value(((id.0 as u64) << 8) | SYMBOL_FLAG)
    }

    #[inline(always)]
    pub const fn as_symbol(self) -> Option<SymId> {
        if self.is_symbol() {
            Some(SymId((self.0 >> 8) as u32))
        } else {
            None
        }
    }

    // ---- heap pointers ----

    /// True for a pointer to a heap slot (anything that is not an immediate).
    #[inline(always)]
    pub const fn is_heap(self) -> bool {
        // Heap pointers are multiples of 8 other than `false` (0) and `nil` (8): with 16
        // subtracted, their low three bits and the sign bit are clear (user-space addresses
        // are far below 2^63), while 0 and 8 wrap to the sign bit. One test and branch.
        self.0.wrapping_sub(16) & 0x8000_0000_0000_0007 == 0
    }

    #[inline(always)]
    pub const fn is_immediate(self) -> bool {
        !self.is_heap()
    }

    #[inline(always)]
    pub fn from_ptr<T>(p: *const T) -> Value {
        Value(p as u64)
    }

    /// The slot this value points to. Only meaningful when `is_heap()`.
    #[inline(always)]
    pub fn as_ptr<T>(self) -> *mut T {
        self.0 as *mut T
    }
}

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(i) = self.as_fixnum() {
            write!(f, "Fixnum({i})")
        } else if self.is_flonum() {
            write!(f, "Flonum({})", self.flonum_unchecked())
        } else if *self == Value::NIL {
            write!(f, "nil")
        } else if *self == Value::TRUE {
            write!(f, "true")
        } else if *self == Value::FALSE {
            write!(f, "false")
        } else if *self == Value::UNDEF {
            write!(f, "undef")
        } else if let Some(s) = self.as_symbol() {
            write!(f, "Symbol({})", s.0)
        } else {
            write!(f, "Heap({:#x})", self.0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixnum_round_trip() {
        for i in [0i64, 1, -1, 42, FIXNUM_MAX, FIXNUM_MIN, 1 << 40, -(1 << 40)] {
            let v = Value::fixnum(i);
            assert!(v.is_fixnum() && !v.is_heap() && !v.is_flonum());
            assert_eq!(v.as_fixnum(), Some(i));
        }
        assert!(!Value::fits_fixnum(FIXNUM_MAX + 1));
        assert!(!Value::fits_fixnum(FIXNUM_MIN - 1));
    }

    #[test]
    fn flonum_round_trip() {
        for d in [0.0f64, 1.0, -1.5, 3.14159, 1e10, 1e-10, 123456.789, -0.1] {
            let v = Value::try_flonum(d).expect("in flonum range");
            assert!(v.is_flonum() && !v.is_heap() && !v.is_fixnum());
            assert_eq!(v.flonum_unchecked().to_bits(), d.to_bits());
        }
        // Out of the inline range: must be boxed.
        assert!(Value::try_flonum(1e300).is_none());
        assert!(Value::try_flonum(f64::NAN).is_none());
        assert!(Value::try_flonum(f64::INFINITY).is_none());
        assert!(Value::try_flonum(-0.0).is_none());
    }

    #[test]
    fn specials() {
        assert!(!Value::NIL.truthy() && !Value::FALSE.truthy());
        assert!(Value::TRUE.truthy() && Value::fixnum(0).truthy() && Value::UNDEF.truthy());
        for v in [Value::NIL, Value::FALSE, Value::TRUE, Value::UNDEF] {
            assert!(!v.is_heap() && !v.is_fixnum() && !v.is_flonum() && !v.is_symbol());
        }
        let s = Value::symbol(SymId(1234));
        assert!(s.is_symbol() && !s.is_heap());
        assert_eq!(s.as_symbol(), Some(SymId(1234)));
        let p = Value::from_raw(0x7f00_0000_1000);
        assert!(p.is_heap());
        // Every aligned address from 16 up is a heap pointer; misaligned words never are.
        for raw in [16u64, 24, 0x1000, 0x7fff_ffff_fff8] {
            assert!(Value::from_raw(raw).is_heap());
            assert!(!Value::from_raw(raw + 4).is_heap());
        }
        assert!(!Value::fixnum(-1).is_heap() && !Value::fixnum(i64::MIN / 4).is_heap());
    }
}
