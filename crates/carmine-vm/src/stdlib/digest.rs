//! `digest.so` and the algorithm features (`digest/md5`, `digest/sha1`, `digest/sha2.so`,
//! `digest/rmd160`, `digest/bubblebabble`) over the RustCrypto hashes, so that CRuby's
//! `digest.rb` and `digest/sha2.rb` load on top.
//!
//! Invariants:
//! - `Digest::Instance` is the generic protocol, written in terms of calls to `update`,
//!   `finish` and `reset` (so Ruby classes that include it work, as in CRuby);
//!   `Digest::Base` implements those natively for the algorithm classes.
//! - An algorithm class records its algorithm in the class ivar `__digest_algo__`; an
//!   instance of it (or of a subclass) is a Data object holding the running hash state.
//! - `digest` answers binary Strings, `hexdigest` US-ASCII ones.

use crate::core::encoding::{BINARY, US_ASCII};
use crate::core::module::{body, AllocKind};
use crate::core::{load, module, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::stdlib::{class_under, const_of, module_under};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
use sha2::Digest as _;

#[derive(Clone)]
enum Algo {
    Md5(md5::Md5),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
    Sha384(sha2::Sha384),
    Sha512(sha2::Sha512),
    Rmd160(ripemd::Ripemd160),
}

impl Algo {
    fn new(id: i64) -> Option<Algo> {
        Some(match id {
            0 => Algo::Md5(md5::Md5::new()),
            1 => Algo::Sha1(sha1::Sha1::new()),
            2 => Algo::Sha256(sha2::Sha256::new()),
            3 => Algo::Sha384(sha2::Sha384::new()),
            4 => Algo::Sha512(sha2::Sha512::new()),
            5 => Algo::Rmd160(ripemd::Ripemd160::new()),
            _ => return None,
        })
    }

    fn update(&mut self, b: &[u8]) {
        match self {
            Algo::Md5(h) => h.update(b),
            Algo::Sha1(h) => h.update(b),
            Algo::Sha256(h) => h.update(b),
            Algo::Sha384(h) => h.update(b),
            Algo::Sha512(h) => h.update(b),
            Algo::Rmd160(h) => h.update(b),
        }
    }

    /// The digest of what was fed so far (the state is left as it was).
    fn result(&self) -> Vec<u8> {
        match self.clone() {
            Algo::Md5(h) => h.finalize().to_vec(),
            Algo::Sha1(h) => h.finalize().to_vec(),
            Algo::Sha256(h) => h.finalize().to_vec(),
            Algo::Sha384(h) => h.finalize().to_vec(),
            Algo::Sha512(h) => h.finalize().to_vec(),
            Algo::Rmd160(h) => h.finalize().to_vec(),
        }
    }

    fn reset(&mut self) {
        match self {
            Algo::Md5(h) => h.reset(),
            Algo::Sha1(h) => h.reset(),
            Algo::Sha256(h) => h.reset(),
            Algo::Sha384(h) => h.reset(),
            Algo::Sha512(h) => h.reset(),
            Algo::Rmd160(h) => h.reset(),
        }
    }

    fn digest_length(&self) -> usize {
        match self {
            Algo::Md5(_) => 16,
            Algo::Sha1(_) | Algo::Rmd160(_) => 20,
            Algo::Sha256(_) => 32,
            Algo::Sha384(_) => 48,
            Algo::Sha512(_) => 64,
        }
    }

    fn block_length(&self) -> usize {
        match self {
            Algo::Sha384(_) | Algo::Sha512(_) => 128,
            _ => 64,
        }
    }
}

pub struct DigestObj {
    algo: Algo,
}

crate::data_obj!(DigestObj);

const ALGO_IVAR: &str = "__digest_algo__";

fn digest_module(ctx: &mut Ctx) -> Value {
    let obj = ctx.c().object;
    module_under(ctx, obj, "Digest")
}

/// `Digest::Base.allocate` for an algorithm class (or a subclass of one).
fn alloc_base(ctx: &mut Ctx, klass: Value) -> Result<Value> {
    let id = ctx.intern(ALGO_IVAR);
    let mut k = klass;
    while k.is_heap() && module::is_class(k) {
        if let Some(algo) = object::ivar_get(ctx, k, id).as_fixnum().and_then(Algo::new) {
            return Ok(object::new_data(ctx, klass, Box::new(DigestObj { algo })));
        }
        k = body(k).superclass;
    }
    let dm = digest_module(ctx);
    if const_of(ctx, dm, "Base") == Some(klass) {
        return Err(ctx.raise(ctx.c().not_implemented_error, "Digest::Base is an abstract class"));
    }
    Err(ctx.runtime_error("Digest::Base cannot be directly inherited in Ruby"))
}

fn algo_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut Algo> {
    match data_ref::<DigestObj>(v) {
        Some(d) => Ok(&mut d.algo),
        None => Err(ctx.type_error("wrong argument type (expected Digest::Base)")),
    }
}

fn hexencode_bytes(b: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(b.len() * 2);
    for &c in b {
        out.push(HEX[(c >> 4) as usize]);
        out.push(HEX[(c & 15) as usize]);
    }
    out
}

fn hexencode_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let s = string::to_str_arg(ctx, v)?;
    let hex = hexencode_bytes(string::bytes(s));
    Ok(string::new_with_enc(ctx, hex, US_ASCII))
}

fn s_hexencode(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    hexencode_value(ctx, args.pos[0])
}

// ---- Digest::Instance ----

fn unimplemented(ctx: &mut Ctx, recv: Value, method: &str) -> crate::error::Unwind {
    let k = object::real_class_of(ctx, recv);
    let name = crate::core::module_methods::class_path(ctx, k);
    ctx.runtime_error(&format!("{name} does not implement {method}()"))
}

fn inst_update(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Err(unimplemented(ctx, recv, "update"))
}

fn inst_finish(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Err(unimplemented(ctx, recv, "finish"))
}

fn inst_reset(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Err(unimplemented(ctx, recv, "reset"))
}

fn inst_block_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Err(unimplemented(ctx, recv, "block_length"))
}

fn call_finish(ctx: &mut Ctx, v: Value) -> Result<Value> {
    ctx.call_str(v, "finish", &[])
}

fn inst_new(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let copy = ctx.call_str(recv, "clone", &[])?;
    ctx.call_str(copy, "reset", &[])?;
    Ok(copy)
}

/// `digest(str = nil)`: of `str` alone (the state is reset before and after), or of the
/// data so far (on a copy, so the state goes on).
fn instance_digest(ctx: &mut Ctx, recv: Value, str: Option<Value>) -> Result<Value> {
    match str {
        Some(s) => {
            ctx.call_str(recv, "reset", &[])?;
            ctx.call_str(recv, "update", &[s])?;
            let v = call_finish(ctx, recv)?;
            ctx.call_str(recv, "reset", &[])?;
            Ok(v)
        }
        None => {
            let copy = ctx.call_str(recv, "clone", &[])?;
            call_finish(ctx, copy)
        }
    }
}

fn inst_digest(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    instance_digest(ctx, recv, args.pos.first().copied())
}

fn inst_digest_bang(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let v = call_finish(ctx, recv)?;
    ctx.call_str(recv, "reset", &[])?;
    Ok(v)
}

fn inst_hexdigest(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = instance_digest(ctx, recv, args.pos.first().copied())?;
    hexencode_value(ctx, d)
}

fn inst_hexdigest_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = inst_digest_bang(ctx, recv, args)?;
    hexencode_value(ctx, d)
}

fn inst_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.call_str(recv, "hexdigest", &[])
}

fn inst_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let k = object::real_class_of(ctx, recv);
    let name = crate::core::module_methods::class_path(ctx, k);
    let hex = ctx.call_str(recv, "hexdigest", &[])?;
    let hex = string::to_s(ctx, hex)?;
    let mut out = format!("#<{name}: ").into_bytes();
    out.extend_from_slice(string::bytes(hex));
    out.push(b'>');
    Ok(string::new_from_bytes(ctx, &out))
}

fn inst_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    let dm = digest_module(ctx);
    let inst = const_of(ctx, dm, "Instance").unwrap_or(Value::NIL);
    let (a, b) = if inst.truthy() && object::is_a(ctx, other, inst) {
        (instance_digest(ctx, recv, None)?, instance_digest(ctx, other, None)?)
    } else {
        let Some(b) = string::try_to_str(ctx, other)? else { return Ok(Value::FALSE) };
        (ctx.call_str(recv, "to_s", &[])?, b)
    };
    let a = string::to_str_arg(ctx, a)?;
    let b = string::to_str_arg(ctx, b)?;
    Ok(Value::bool(string::bytes(a) == string::bytes(b)))
}

fn inst_digest_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = instance_digest(ctx, recv, None)?;
    let d = string::to_str_arg(ctx, d)?;
    Ok(Value::fixnum(string::len(d) as i64))
}

fn inst_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    ctx.call_str(recv, "digest_length", &[])
}

// ---- Digest::Class ----

fn class_initialize(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

/// `Klass.digest(str, *args)`: `Klass.new(*args).digest(str)`.
fn s_class_digest(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some((&s, rest)) = args.pos.split_first() else {
        return Err(ctx.arg_error("no data given"));
    };
    let s = string::to_str_arg(ctx, s)?;
    let obj = ctx.call(recv, crate::symbol::sym::NEW, rest)?;
    ctx.call_str(obj, "digest", &[s])
}

fn s_class_hexdigest(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = ctx.call_str(recv, "digest", args.pos)?;
    hexencode_value(ctx, d)
}

// ---- Digest::Base ----

fn base_reset(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    algo_of(ctx, recv)?.reset();
    Ok(recv)
}

fn base_update(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let b = string::bytes(s);
    algo_of(ctx, recv)?.update(b);
    Ok(recv)
}

fn base_finish(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = algo_of(ctx, recv)?.result();
    Ok(string::new_with_enc(ctx, d, BINARY))
}

fn base_digest_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(algo_of(ctx, recv)?.digest_length() as i64))
}

fn base_block_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(algo_of(ctx, recv)?.block_length() as i64))
}

fn base_initialize_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if recv == args.pos[0] {
        return Ok(recv);
    }
    let src = algo_of(ctx, args.pos[0])?.clone();
    let dst = algo_of(ctx, recv)?;
    if std::mem::discriminant(dst) != std::mem::discriminant(&src) {
        return Err(ctx.type_error("different algorithms"));
    }
    *dst = src;
    Ok(recv)
}

pub fn init_digest(ctx: &mut Ctx) -> Result<()> {
    let dm = digest_module(ctx);
    crate::methods!(ctx, dm, [("hexencode", s_hexencode, [1], Safe, ModuleFunction)]);
    let inst = module_under(ctx, dm, "Instance");
    crate::methods!(ctx, inst, [
        ("update", inst_update, [1], Unsafe),
        ("finish", inst_finish, [0], Unsafe, Private),
        ("reset", inst_reset, [0], Unsafe),
        ("new", inst_new, [0], Unsafe),
        ("digest", inst_digest, [0..=1], Unsafe),
        ("digest!", inst_digest_bang, [0], Unsafe),
        ("hexdigest", inst_hexdigest, [0..=1], Unsafe),
        ("hexdigest!", inst_hexdigest_bang, [0], Unsafe),
        ("to_s", inst_to_s, [0], Unsafe),
        ("inspect", inst_inspect, [0], Unsafe),
        ("==", inst_eq, [1], Unsafe),
        ("length", inst_length, [0], Unsafe),
        ("digest_length", inst_digest_length, [0], Unsafe),
        ("block_length", inst_block_length, [0], Unsafe),
    ]);
    crate::core::define_alias(ctx, inst, "<<", "update");
    crate::core::define_alias(ctx, inst, "size", "length");
    let obj = ctx.c().object;
    let class = class_under(ctx, dm, "Class", obj);
    ctx.call_str(class, "include", &[inst])?;
    crate::methods!(ctx, class, [
        ("initialize", class_initialize, [0], Safe, Private),
        ("digest", s_class_digest, [0..], Unsafe, Singleton),
        ("hexdigest", s_class_hexdigest, [0..], Unsafe, Singleton),
    ]);
    let base = class_under(ctx, dm, "Base", class);
    body(base).alloc = AllocKind::Data(alloc_base);
    crate::methods!(ctx, base, [
        ("initialize_copy", base_initialize_copy, [1], Unsafe, Private),
        ("reset", base_reset, [0], Unsafe),
        ("update", base_update, [1], Unsafe),
        ("finish", base_finish, [0], Unsafe, Private),
        ("digest_length", base_digest_length, [0], Safe),
        ("block_length", base_block_length, [0], Safe),
    ]);
    crate::core::define_alias(ctx, base, "<<", "update");
    Ok(())
}

/// Loads `digest.rb` (which loads `digest.so`), or `digest.so` alone without CRuby's
/// standard library.
fn require_digest(ctx: &mut Ctx) -> Result<()> {
    if load::resolve(ctx, "digest")?.is_some() {
        load::require(ctx, "digest")?;
    } else {
        load::require(ctx, "digest.so")?;
    }
    Ok(())
}

fn define_algorithm(ctx: &mut Ctx, name: &str, id: i64) -> Result<()> {
    require_digest(ctx)?;
    let dm = digest_module(ctx);
    let base = const_of(ctx, dm, "Base").unwrap_or(ctx.c().object);
    let k = class_under(ctx, dm, name, base);
    let ivar = ctx.intern(ALGO_IVAR);
    object::ivar_set_raw(ctx, k, ivar, Value::fixnum(id));
    Ok(())
}

pub fn init_md5(ctx: &mut Ctx) -> Result<()> {
    define_algorithm(ctx, "MD5", 0)
}

pub fn init_sha1(ctx: &mut Ctx) -> Result<()> {
    define_algorithm(ctx, "SHA1", 1)
}

pub fn init_sha2(ctx: &mut Ctx) -> Result<()> {
    define_algorithm(ctx, "SHA256", 2)?;
    define_algorithm(ctx, "SHA384", 3)?;
    define_algorithm(ctx, "SHA512", 4)
}

pub fn init_rmd160(ctx: &mut Ctx) -> Result<()> {
    define_algorithm(ctx, "RMD160", 5)
}

// ---- bubblebabble ----

/// The Bubble Babble encoding of `d` (Antti Huima's, as used by ssh-keygen).
fn bubblebabble_bytes(d: &[u8]) -> Vec<u8> {
    const VOWELS: &[u8; 6] = b"aeiouy";
    const CONSONANTS: &[u8; 17] = b"bcdfghklmnprstvzx";
    let mut out = vec![b'x'];
    let mut seed: usize = 1;
    let rounds = d.len() / 2 + 1;
    for i in 0..rounds {
        if i + 1 < rounds || !d.len().is_multiple_of(2) {
            let b1 = d[2 * i] as usize;
            out.push(VOWELS[(((b1 >> 6) & 3) + seed) % 6]);
            out.push(CONSONANTS[(b1 >> 2) & 15]);
            out.push(VOWELS[((b1 & 3) + seed / 6) % 6]);
            if i + 1 < rounds {
                let b2 = d[2 * i + 1] as usize;
                out.push(CONSONANTS[(b2 >> 4) & 15]);
                out.push(b'-');
                out.push(CONSONANTS[b2 & 15]);
                seed = (seed * 5 + b1 * 7 + b2) % 36;
            }
        } else {
            out.push(VOWELS[seed % 6]);
            out.push(CONSONANTS[16]);
            out.push(VOWELS[seed / 6]);
        }
    }
    out.push(b'x');
    out
}

fn bubblebabble_value(ctx: &mut Ctx, v: Value) -> Result<Value> {
    let s = string::to_str_arg(ctx, v)?;
    let b = bubblebabble_bytes(string::bytes(s));
    Ok(string::new_with_enc(ctx, b, US_ASCII))
}

fn s_bubblebabble(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    bubblebabble_value(ctx, args.pos[0])
}

fn inst_bubblebabble(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let d = instance_digest(ctx, recv, None)?;
    bubblebabble_value(ctx, d)
}

fn s_class_bubblebabble(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let d = ctx.call_str(recv, "digest", args.pos)?;
    bubblebabble_value(ctx, d)
}

pub fn init_bubblebabble(ctx: &mut Ctx) -> Result<()> {
    require_digest(ctx)?;
    let dm = digest_module(ctx);
    crate::methods!(ctx, dm, [("bubblebabble", s_bubblebabble, [1], Safe, ModuleFunction)]);
    let inst = module_under(ctx, dm, "Instance");
    crate::methods!(ctx, inst, [("bubblebabble", inst_bubblebabble, [0], Unsafe)]);
    let obj = ctx.c().object;
    let class = class_under(ctx, dm, "Class", obj);
    crate::methods!(ctx, class, [("bubblebabble", s_class_bubblebabble, [0..], Unsafe, Singleton)]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::bubblebabble_bytes;

    #[test]
    fn bubblebabble_matches_the_reference_vectors() {
        assert_eq!(bubblebabble_bytes(b""), b"xexax");
        assert_eq!(bubblebabble_bytes(b"1234567890"), b"xesef-disof-gytuf-katof-movif-baxux");
        assert_eq!(bubblebabble_bytes(b"foo"), b"xinik-zorox");
    }
}
