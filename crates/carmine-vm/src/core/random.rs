//! Random: CRuby-compatible Mersenne Twister (MT19937) generators, so a seeded sequence
//! (`Random.new(42).rand(100)`, `srand(1); rand`) matches CRuby value for value. The VM's
//! default generator backs `Kernel#rand`/`srand` and `Random.rand`.
//!
//! Invariants:
//! - Seeding follows `rand_init`: the seed's absolute value as 32-bit words,
//!   `init_genrand` for one word, `init_by_array` otherwise.
//! - Floats are 53-bit (`genrand_res53`; inclusive ranges use the inclusive variant),
//!   bounded integers use CRuby's `limited_rand`/`limited_big_rand` rejection sampling.
//! - The default generator lives in a hidden constant of Random, per VM.

use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};

use crate::core::{bignum, float, integer, numeric, object, range, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const N: usize = 624;
const M: usize = 397;

#[derive(Clone)]
pub struct Mt {
    state: Box<[u32; N]>,
    index: usize,
}

impl Mt {
    fn init_genrand(s: u32) -> Mt {
        let mut st = Box::new([0u32; N]);
        st[0] = s;
        for j in 1..N {
            st[j] = 1812433253u32.wrapping_mul(st[j - 1] ^ (st[j - 1] >> 30)).wrapping_add(j as u32);
        }
        Mt { state: st, index: N }
    }

    fn init_by_array(key: &[u32]) -> Mt {
        let mut mt = Mt::init_genrand(19650218);
        let st = &mut mt.state;
        let (mut i, mut j) = (1usize, 0usize);
        let mut k = N.max(key.len());
        while k > 0 {
            st[i] = (st[i] ^ (st[i - 1] ^ (st[i - 1] >> 30)).wrapping_mul(1664525)).wrapping_add(key[j]).wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                st[0] = st[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
            k -= 1;
        }
        k = N - 1;
        while k > 0 {
            st[i] = (st[i] ^ (st[i - 1] ^ (st[i - 1] >> 30)).wrapping_mul(1566083941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                st[0] = st[N - 1];
                i = 1;
            }
            k -= 1;
        }
        st[0] = 0x8000_0000;
        mt.index = N;
        mt
    }

    /// A generator seeded like CRuby's `rand_init` with Integer `seed`.
    fn seeded(seed: &BigInt) -> Mt {
        let (_, mut words) = seed.abs().to_u32_digits();
        if words.is_empty() {
            words.push(0);
        }
        // A top word of 1 is `new_seed`'s leading-zero guard, dropped as CRuby does.
        if words.len() > 1 && words[words.len() - 1] == 1 {
            words.pop();
        }
        if words.len() <= 1 {
            Mt::init_genrand(words[0])
        } else {
            Mt::init_by_array(&words)
        }
    }

    fn next_state(&mut self) {
        let st = &mut self.state;
        for kk in 0..N {
            let y = (st[kk] & 0x8000_0000) | (st[(kk + 1) % N] & 0x7fff_ffff);
            let mut v = st[(kk + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                v ^= 0x9908_b0df;
            }
            st[kk] = v;
        }
        self.index = 0;
    }

    pub fn genrand_int32(&mut self) -> u32 {
        if self.index >= N {
            self.next_state();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// A double in [0, 1) with 53 random bits.
    pub fn genrand_real(&mut self) -> f64 {
        let a = (self.genrand_int32() >> 5) as f64;
        let b = (self.genrand_int32() >> 6) as f64;
        (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
    }

    /// A double in [0, 1] (for inclusive float ranges).
    fn genrand_real_inclusive(&mut self) -> f64 {
        let a = self.genrand_int32();
        let b = self.genrand_int32();
        int_pair_to_real_inclusive(a, b)
    }

    /// Uniform in [0, limit] (CRuby's `limited_rand`).
    fn limited(&mut self, limit: u64) -> u64 {
        if limit == 0 {
            return 0;
        }
        let mask = u64::MAX >> limit.leading_zeros();
        loop {
            if limit > 0xffff_ffff {
                let mut val: u64 = 0;
                let mut ok = true;
                for i in (0..2).rev() {
                    if (mask >> (i * 32)) & 0xffff_ffff != 0 {
                        val |= (self.genrand_int32() as u64) << (i * 32);
                        val &= mask;
                        if limit < val {
                            ok = false;
                            break;
                        }
                    }
                }
                if ok {
                    return val;
                }
                continue;
            }
            let val = self.genrand_int32() as u64 & mask;
            if val <= limit {
                return val;
            }
        }
    }

    /// Uniform in [0, limit] for a big limit (CRuby's `limited_big_rand`).
    fn limited_big(&mut self, limit: &BigInt) -> BigInt {
        let (_, lim) = limit.to_u32_digits();
        let len = lim.len();
        'retry: loop {
            let mut out = vec![0u32; len];
            let mut mask: u32 = 0;
            let mut boundary = true;
            for i in (0..len).rev() {
                let l = lim[i];
                mask = if mask != 0 { 0xffff_ffff } else if l == 0 { 0 } else { u32::MAX >> l.leading_zeros() };
                let mut r = 0;
                if mask != 0 {
                    r = self.genrand_int32() & mask;
                    if boundary {
                        if l < r {
                            continue 'retry;
                        }
                        if r < l {
                            boundary = false;
                        }
                    }
                }
                out[i] = r;
            }
            return BigInt::from_slice(num_bigint::Sign::Plus, &out);
        }
    }

    /// `n` random bytes; `None` when they cannot be allocated.
    fn bytes(&mut self, n: usize) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        out.try_reserve_exact(n).ok()?;
        while out.len() + 4 <= n {
            out.extend_from_slice(&self.genrand_int32().to_le_bytes());
        }
        if out.len() < n {
            let r = self.genrand_int32().to_le_bytes();
            let need = n - out.len();
            out.extend_from_slice(&r[..need]);
        }
        Some(out)
    }
}

/// [0, 1] from two 32-bit outputs (CRuby's 128-bit `int_pair_to_real_inclusive`).
fn int_pair_to_real_inclusive(a: u32, b: u32) -> f64 {
    let m: u128 = (1u128 << 53) | 1;
    let x: u128 = ((a as u128) << 32) | b as u128;
    let r = ((x * m) >> 64) as u64 as f64;
    r * (1.0 / 9007199254740992.0)
}

pub struct RandomObj {
    mt: Mt,
    seed: Value,
}

crate::data_obj!(RandomObj, |s, m| {
    m.mark(s.seed);
});

/// 128 bits from the system's entropy source, as CRuby's `Random.new_seed`.
fn entropy_seed() -> BigInt {
    let mut buf = [0u8; 16];
    // SAFETY: getrandom writes at most 16 bytes into `buf`.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr() as *mut libc::c_void, 16, 0) };
    if n != 16 {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime fills our timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        buf[..8].copy_from_slice(&(ts.tv_nsec as u64 ^ (ts.tv_sec as u64).rotate_left(20)).to_le_bytes());
        buf[8..].copy_from_slice(&(std::process::id() as u64).to_le_bytes());
    }
    BigInt::from_bytes_le(num_bigint::Sign::Plus, &buf)
}

fn default_gen(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("__default__");
    let c = ctx.c().random;
    crate::core::module::body(c).const_get(id).map_or(Value::NIL, |e| e.value)
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut RandomObj> {
    match data_ref::<RandomObj>(v) {
        Some(r) => Ok(r),
        None => Err(ctx.type_error("uninitialized Random")),
    }
}

/// `Errno::EDOM`, as CRuby raises for infinite or NaN limits.
fn domain_error(ctx: &mut Ctx) -> crate::error::Unwind {
    crate::core::process::errno_error(ctx, libc::EDOM, "")
}

fn invalid_argument(ctx: &mut Ctx, v: Value) -> crate::error::Unwind {
    let s = match string::to_s(ctx, v) {
        Ok(s) => string::to_rust_string_lossy(s),
        Err(e) => return e,
    };
    ctx.arg_error(&format!("invalid argument - {s}"))
}

/// A random Integer in [0, max] (max >= 0).
fn int_upto(ctx: &mut Ctx, g: Value, max: &BigInt) -> Result<Value> {
    let r = get(ctx, g)?;
    let v = match max.to_u64() {
        Some(m) => BigInt::from(r.mt.limited(m)),
        None => r.mt.limited_big(max),
    };
    Ok(bignum::normalize(ctx, v))
}

fn real(ctx: &mut Ctx, g: Value, inclusive: bool) -> Result<f64> {
    let r = get(ctx, g)?;
    Ok(if inclusive { r.mt.genrand_real_inclusive() } else { r.mt.genrand_real() })
}

/// `rand(range)`: `None` for an empty range.
fn rand_range(ctx: &mut Ctx, g: Value, rng: Value) -> Result<Option<Value>> {
    let (b, e, excl) = (range::begin(rng), range::end(rng), range::excl(rng));
    if b.is_nil() || e.is_nil() {
        return Err(domain_error(ctx));
    }
    let numeric_ends = |ctx: &mut Ctx, v: Value| integer::is_integer(v) || float::is_float(v) || numeric::is_numeric(ctx, v);
    if !numeric_ends(ctx, b) || !numeric_ends(ctx, e) {
        return Err(ctx.conversion_error(rng, "Integer"));
    }
    if !float::is_float(b) && !float::is_float(e) && integer::is_integer(b) && integer::is_integer(e) {
        let span: BigInt = bignum::to_big(e) - bignum::to_big(b) - if excl { 1 } else { 0 };
        if span.is_negative() {
            return Ok(None);
        }
        let v = int_upto(ctx, g, &span)?;
        return integer::add(ctx, b, v).map(Some);
    }
    let lo = numeric::to_f64(ctx, b)?;
    let hi = numeric::to_f64(ctx, e)?;
    let mut max = hi - lo;
    let mut mid = 0.5;
    let mut scale = 1.0;
    if max.is_infinite() {
        let min = lo / 2.0;
        max = hi / 2.0;
        scale = 2.0;
        mid = max + min;
        max -= min;
    } else if max.is_nan() {
        return Err(domain_error(ctx));
    }
    if max > 0.0 {
        let r = real(ctx, g, !excl)?;
        if scale > 1.0 {
            return Ok(Some(float::new(ctx, (r - 0.5) * max * scale + mid)));
        }
        return Ok(Some(float::new(ctx, lo + r * max)));
    }
    if max == 0.0 && !excl {
        return Ok(Some(float::new(ctx, lo)));
    }
    Ok(None)
}

/// `Random#rand(max)` semantics on generator `g` (`kernel`: Kernel#rand's lenient rules).
fn rand_with(ctx: &mut Ctx, g: Value, arg: Option<Value>, kernel: bool) -> Result<Value> {
    let Some(a) = arg else {
        let f = real(ctx, g, false)?;
        return Ok(float::new(ctx, f));
    };
    if a.is_nil() {
        if kernel {
            let f = real(ctx, g, false)?;
            return Ok(float::new(ctx, f));
        }
        return Err(invalid_argument(ctx, a));
    }
    if range::is_range(a) {
        return match rand_range(ctx, g, a)? {
            Some(v) => Ok(v),
            None if kernel => Ok(Value::NIL),
            None => Err(invalid_argument(ctx, a)),
        };
    }
    if float::is_float(a) && !kernel {
        let m = float::get(a);
        if m.is_nan() || m.is_infinite() {
            return Err(domain_error(ctx));
        }
        if m < 0.0 {
            return Err(invalid_argument(ctx, a));
        }
        let f = real(ctx, g, false)?;
        return Ok(float::new(ctx, if m > 0.0 { f * m } else { f }));
    }
    let max = integer::to_integer_arg(ctx, a)?;
    let mut m = bignum::to_big(max);
    if kernel {
        m = m.abs();
    }
    if m.is_zero() {
        if kernel {
            let f = real(ctx, g, false)?;
            return Ok(float::new(ctx, f));
        }
        return Err(invalid_argument(ctx, a));
    }
    if m.is_negative() {
        return Err(invalid_argument(ctx, a));
    }
    int_upto(ctx, g, &(m - 1))
}

fn seed_value(ctx: &mut Ctx, v: Option<Value>) -> Result<(Value, BigInt)> {
    match v {
        Some(s) => {
            let s = integer::to_integer_arg(ctx, s)?;
            Ok((s, bignum::to_big(s)))
        }
        None => {
            let b = entropy_seed();
            let v = bignum::normalize(ctx, b.clone());
            Ok((v, b))
        }
    }
}

/// In a forked child: the default generator (`Kernel#rand`, `Random.rand`) starts again
/// from a fresh seed, as CRuby's does, so parent and child do not draw the same numbers.
/// Generators made with `Random.new` keep their state.
pub fn reseed_default_after_fork(ctx: &mut Ctx) {
    let g = default_gen(ctx);
    let Some(r) = data_ref::<RandomObj>(g) else { return };
    let big = entropy_seed();
    let seed = bignum::normalize(ctx, big.clone());
    *r = RandomObj { mt: Mt::seeded(&big), seed };
}

/// `Random.allocate`: a generator seeded from entropy, as CRuby seeds one whose
/// `initialize` did not run (an `initialize` redefined without `super`).
fn alloc_random(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let (seed, big) = seed_value(ctx, None)?;
    Ok(object::new_data(ctx, klass, Box::new(RandomObj { mt: Mt::seeded(&big), seed })))
}

/// `Random#initialize(seed = Random.new_seed)`; `Random.new` is allocate + initialize.
fn initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (seed, big) = seed_value(ctx, args.pos.first().copied())?;
    let r = get(ctx, recv)?;
    *r = RandomObj { mt: Mt::seeded(&big), seed };
    Ok(Value::NIL)
}

fn r_rand(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    rand_with(ctx, recv, args.pos.first().copied(), false)
}

/// `random_number(n = 0)`: like `rand`, but invalid limits give a float in [0, 1).
fn r_random_number(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&a) = args.pos.first() {
        let ok = if range::is_range(a) {
            true
        } else if float::is_float(a) {
            float::get(a) > 0.0
        } else if integer::is_integer(a) {
            !bignum::to_big(a).is_negative() && !bignum::to_big(a).is_zero()
        } else {
            !a.is_nil()
        };
        if ok {
            return rand_with(ctx, recv, Some(a), false);
        }
    }
    let f = real(ctx, recv, false)?;
    Ok(float::new(ctx, f))
}

fn r_seed(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(get(ctx, recv)?.seed)
}

fn r_bytes(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative string size (or size too big)"));
    }
    let r = get(ctx, recv)?;
    let Some(v) = r.mt.bytes(n as usize) else { return Err(ctx.no_memory_error()) };
    Ok(string::new_binary(ctx, &v))
}

fn r_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    let Some(b) = data_ref::<RandomObj>(o) else { return Ok(Value::FALSE) };
    if object::real_class_of(ctx, recv) != object::real_class_of(ctx, o) {
        return Ok(Value::FALSE);
    }
    let a = get(ctx, recv)?;
    let same_seed = object::equal(ctx, a.seed, b.seed)?;
    let a = get(ctx, recv)?;
    Ok(Value::bool(same_seed && a.mt.index == b.mt.index && a.mt.state[..] == b.mt.state[..]))
}

/// `Random#marshal_dump` (private): `[state, left, seed]` as CRuby writes them, the 624
/// state words as one Integer (first word least significant) and `left` one more than
/// the words not yet used.
fn r_marshal_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    let mut bytes = Vec::with_capacity(N * 4);
    for w in r.mt.state.iter() {
        bytes.extend_from_slice(&w.to_le_bytes());
    }
    let left = (N + 1 - r.mt.index.min(N)) as i64;
    let seed = r.seed;
    let state = bignum::normalize(ctx, BigInt::from_bytes_le(num_bigint::Sign::Plus, &bytes));
    Ok(crate::core::array::from_slice(ctx, &[state, Value::fixnum(left), seed]))
}

/// `Random#marshal_load` (private): the inverse of `marshal_dump`.
fn r_marshal_load(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let a = crate::core::array::to_ary_arg(ctx, args.pos[0])?;
    if crate::core::array::len(a) != 3 {
        return Err(ctx.arg_error("wrong dump data"));
    }
    let (state, left, seed) = (crate::core::array::get(a, 0), crate::core::array::get(a, 1), crate::core::array::get(a, 2));
    if !integer::is_integer(state) {
        return Err(ctx.conversion_error(state, "Integer"));
    }
    let left = integer::to_i64_arg(ctx, left)?;
    if !(1..=N as i64).contains(&left) {
        return Err(ctx.arg_error("wrong value"));
    }
    let (_, mut bytes) = bignum::to_big(state).to_bytes_le();
    bytes.resize(N * 4, 0);
    let r = get(ctx, recv)?;
    for (i, w) in bytes.chunks_exact(4).take(N).enumerate() {
        r.mt.state[i] = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
    }
    r.mt.index = N + 1 - left as usize;
    r.seed = seed;
    Ok(recv)
}

fn r_dup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let r = get(ctx, recv)?;
    let copy = RandomObj { mt: r.mt.clone(), seed: r.seed };
    let klass = object::real_class_of(ctx, recv);
    Ok(object::new_data(ctx, klass, Box::new(copy)))
}

fn s_rand(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    rand_with(ctx, g, args.pos.first().copied(), false)
}

fn s_random_number(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    r_random_number(ctx, g, args)
}

fn s_new_seed(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(bignum::normalize(ctx, entropy_seed()))
}

fn s_seed(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    r_seed(ctx, g, &Args::new(&[]))
}

fn s_bytes(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    r_bytes(ctx, g, args)
}

fn s_urandom(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 {
        return Err(ctx.arg_error("negative string size (or size too big)"));
    }
    let mut buf = Vec::new();
    ctx.try_reserve(&mut buf, n as usize)?;
    buf.resize(n as usize, 0);
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: getrandom writes into the unfilled tail of `buf`.
        let r = unsafe { libc::getrandom(buf[filled..].as_mut_ptr() as *mut libc::c_void, buf.len() - filled, 0) };
        if r <= 0 {
            return Ok(Value::NIL);
        }
        filled += r as usize;
    }
    Ok(string::new_binary(ctx, &buf))
}

fn k_rand(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    rand_with(ctx, g, args.pos.first().copied(), true)
}

fn k_srand(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    let old = get(ctx, g)?.seed;
    let (seed, big) = seed_value(ctx, args.pos.first().copied())?;
    let r = get(ctx, g)?;
    *r = RandomObj { mt: Mt::seeded(&big), seed };
    Ok(old)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().random;
    let seed = entropy_seed();
    let seed_v = bignum::normalize(ctx, seed.clone());
    let g = object::new_data(ctx, c, Box::new(RandomObj { mt: Mt::seeded(&seed), seed: seed_v }));
    let id = ctx.intern("__default__");
    crate::core::module::body(c).const_set(id, g);
    crate::core::module::body(c).alloc = crate::core::module::AllocKind::Data(alloc_random);
    crate::methods!(ctx, c, [
        ("initialize", initialize, [0..=1], Unsafe, Private),
        ("rand", s_rand, [0..=1], Unsafe, Singleton),
        ("random_number", s_random_number, [0..=1], Unsafe, Singleton),
        ("new_seed", s_new_seed, [0], Safe, Singleton),
        ("seed", s_seed, [0], Unsafe, Singleton),
        ("bytes", s_bytes, [1], Unsafe, Singleton),
        ("urandom", s_urandom, [1], Safe, Singleton),
        ("srand", k_srand, [0..=1], Unsafe, Singleton),
        ("rand", r_rand, [0..=1], Unsafe),
        ("random_number", r_random_number, [0..=1], Unsafe),
        ("seed", r_seed, [0], Safe),
        ("bytes", r_bytes, [1], Unsafe),
        ("==", r_eq, [1], Unsafe),
        ("marshal_dump", r_marshal_dump, [0], Unsafe, Private),
        ("marshal_load", r_marshal_load, [1], Unsafe, Private),
        ("dup", r_dup, [0], Unsafe),
        ("clone", r_dup, [0], Unsafe),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("rand", k_rand, [0..=1], Unsafe, ModuleFunction),
        ("srand", k_srand, [0..=1], Unsafe, ModuleFunction),
    ]);
}

#[cfg(test)]
mod tests {
    use super::Mt;
    use num_bigint::BigInt;

    #[test]
    fn matches_cruby_sequences() {
        let mut m = Mt::seeded(&BigInt::from(42));
        assert_eq!(m.genrand_int32(), 1608637542);
        assert_eq!(m.genrand_int32(), 3421126067);
        let mut m = Mt::seeded(&BigInt::from(42));
        assert_eq!(m.genrand_real(), 0.3745401188473625);
        let mut m = Mt::seeded(&BigInt::from(1u64 << 40));
        assert_eq!(m.genrand_int32(), 445128065);
        let mut m = Mt::seeded(&BigInt::from(42));
        assert_eq!(m.bytes(6).unwrap(), vec![102, 220, 225, 95, 179, 61]);
        let mut m = Mt::seeded(&BigInt::from(42));
        assert_eq!(m.limited(99), 51);
    }
}
