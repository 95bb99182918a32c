//! Random: xoshiro256** generators; the VM's default generator backs `Kernel#rand`.

use crate::core::{float, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct RandomObj {
    state: [u64; 4],
    seed: Value,
}

crate::data_obj!(RandomObj, |s, m| {
    m.mark(s.seed);
});

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl RandomObj {
    fn seeded(seed: u64, seed_v: Value) -> RandomObj {
        let mut s = seed;
        RandomObj { state: [splitmix(&mut s), splitmix(&mut s), splitmix(&mut s), splitmix(&mut s)], seed: seed_v }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, n).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let r = self.next_u64();
            if r < zone {
                return r % n;
            }
        }
    }
}

fn new_seed() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: buf is valid for 8 bytes.
    unsafe { libc::getrandom(buf.as_mut_ptr() as *mut libc::c_void, 8, 0) };
    u64::from_ne_bytes(buf)
}

fn default_gen(ctx: &mut Ctx) -> Value {
    let id = ctx.intern("__default__");
    let c = ctx.c().random;
    crate::core::module::body(c).const_get(id).map_or(Value::NIL, |e| e.value)
}

/// `rand(max)` semantics on generator `g`.
fn rand_with(ctx: &mut Ctx, g: Value, arg: Option<Value>) -> Result<Value> {
    let Some(r) = data_ref::<RandomObj>(g) else { return Err(ctx.type_error("uninitialized Random")) };
    match arg {
        None => Ok(float::new(ctx, r.next_f64())),
        Some(a) if a.is_nil() || a == Value::FALSE => Ok(float::new(ctx, r.next_f64())),
        Some(a) if float::is_float(a) => {
            let m = float::get(a);
            if m == 0.0 {
                return Ok(float::new(ctx, r.next_f64()));
            }
            Ok(float::new(ctx, r.next_f64() * m.abs()))
        }
        Some(a) if crate::core::range::is_range(a) => {
            let (b, e) = (crate::core::range::begin(a), crate::core::range::end(a));
            if float::is_float(b) || float::is_float(e) {
                let lo = crate::core::numeric::to_f64(ctx, b)?;
                let hi = crate::core::numeric::to_f64(ctx, e)?;
                return Ok(float::new(ctx, lo + r.next_f64() * (hi - lo)));
            }
            let lo = integer::to_i64_arg(ctx, b)?;
            let hi = integer::to_i64_arg(ctx, e)?;
            let hi = if crate::core::range::excl(a) { hi - 1 } else { hi };
            if hi < lo {
                return Ok(Value::NIL);
            }
            let span = (hi - lo) as u64 + 1;
            Ok(Value::fixnum(lo + r.below(span) as i64))
        }
        Some(a) => {
            let m = integer::to_i64_arg(ctx, a)?;
            if m == 0 {
                return Ok(float::new(ctx, r.next_f64()));
            }
            Ok(Value::fixnum(r.below(m.unsigned_abs()) as i64))
        }
    }
}

fn k_rand(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    let a = args.pos.first().copied();
    if let Some(v) = a {
        if integer::is_integer(v) && v.as_fixnum().is_some_and(|x| x < 0) {
            let m = v.fixnum_unchecked().abs();
            return rand_with(ctx, g, Some(Value::fixnum(m)));
        }
    }
    rand_with(ctx, g, a)
}

fn k_srand(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    let old = data_ref::<RandomObj>(g).map_or(Value::fixnum(0), |r| r.seed);
    let seed = match args.pos.first() {
        Some(&s) => integer::to_integer_arg(ctx, s)?,
        None => Value::fixnum((new_seed() >> 2) as i64),
    };
    let raw = crate::core::bignum::low_u64_any(seed);
    if let Some(r) = data_ref::<RandomObj>(g) {
        *r = RandomObj::seeded(raw, seed);
    }
    Ok(old)
}

fn r_new(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let seed = match args.pos.first() {
        Some(&s) => integer::to_integer_arg(ctx, s)?,
        None => Value::fixnum((new_seed() >> 2) as i64),
    };
    let raw = crate::core::bignum::low_u64_any(seed);
    Ok(object::new_data(ctx, recv, Box::new(RandomObj::seeded(raw, seed))))
}

fn r_rand(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&a) = args.pos.first() {
        if let Some(m) = a.as_fixnum() {
            if m <= 0 {
                let s = object::inspect_string(ctx, a)?;
                return Err(ctx.arg_error(&format!("invalid argument - {s}")));
            }
        }
        if float::is_float(a) && float::get(a) <= 0.0 {
            let s = object::inspect_string(ctx, a)?;
            return Err(ctx.arg_error(&format!("invalid argument - {s}")));
        }
    }
    rand_with(ctx, recv, args.pos.first().copied())
}

fn r_s_rand(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    r_rand(ctx, g, args)
}

fn r_seed(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let _ = ctx;
    Ok(data_ref::<RandomObj>(recv).map_or(Value::NIL, |r| r.seed))
}

fn r_bytes(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = integer::to_i64_arg(ctx, args.pos[0])?.max(0) as usize;
    let Some(r) = data_ref::<RandomObj>(recv) else { return Ok(Value::NIL) };
    let v: Vec<u8> = (0..n).map(|_| r.next_u64() as u8).collect();
    Ok(string::new_binary(ctx, &v))
}

fn r_s_new_seed(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let a = new_seed() as u128;
    let b = new_seed() as u128;
    Ok(crate::core::bignum::normalize(ctx, num_bigint::BigInt::from((a << 64) | b)))
}

fn r_s_bytes(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let g = default_gen(ctx);
    r_bytes(ctx, g, args)
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().random;
    let seed = new_seed();
    let g = object::new_data(ctx, c, Box::new(RandomObj::seeded(seed, Value::fixnum((seed >> 2) as i64))));
    let id = ctx.intern("__default__");
    crate::core::module::body(c).const_set(id, g);
    crate::methods!(ctx, c, [
        ("new", r_new, [0..=1], Unsafe, Singleton),
        ("rand", r_s_rand, [0..=1], Unsafe, Singleton),
        ("new_seed", r_s_new_seed, [0], Safe, Singleton),
        ("bytes", r_s_bytes, [1], Unsafe, Singleton),
        ("rand", r_rand, [0..=1], Unsafe),
        ("seed", r_seed, [0], Safe),
        ("bytes", r_bytes, [1], Unsafe),
    ]);
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("rand", k_rand, [0..=1], Unsafe, ModuleFunction),
        ("srand", k_srand, [0..=1], Unsafe, ModuleFunction),
    ]);
}
