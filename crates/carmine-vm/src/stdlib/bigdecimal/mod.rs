//! `bigdecimal.so`: the native half of the `bigdecimal` gem (3.1.1, Ruby 3.1), under
//! CRuby's pure-Ruby `bigdecimal.rb`, `bigdecimal/util.rb` and `bigdecimal/math.rb`.
//!
//! Invariants:
//! - Representation (`arith::Dec`): a BigDecimal is NaN, ±Infinity, ±0, or
//!   `±m × 10**exp` with `m` a nonzero big unsigned integer that has no trailing zero
//!   digit. Values are immutable (and frozen); every operation makes a new object.
//! - Precision rules follow CRuby, which keeps digits in words of 9 (BASE 10**9):
//!   `+ - *` are exact; `/` truncates the quotient on the word grid after
//!   `ceil((max(precision(a), precision(b), 32) + 18) / 9)` words and rounds the last
//!   digit with the first digit below it; `div(x, n)` / `add(x, n)` / `sub` / `mult`
//!   round the result to `n` significant digits; `sqrt(n)` and negative powers keep the
//!   words CRuby allocates for them. `BigDecimal.limit(n)` (n > 0) rounds the results of
//!   arithmetic to `n` significant digits.
//! - Rounding modes are CRuby's numbers: UP 1, DOWN 2, HALF_UP 3 (default), HALF_DOWN 4,
//!   CEILING 5, FLOOR 6, HALF_EVEN 7; `BigDecimal.mode(ROUND_MODE)` sets the current one.
//!   Exception modes (INFINITY 1, NaN 2, UNDERFLOW 4, ZERODIVIDE 0x10) make results that
//!   are NaN or infinite raise FloatDomainError instead.
//! - The rounding mode, exception mode and limit are per thread (fiber-local `Thread#[]`
//!   entries named as in CRuby), so threads and VMs never see each other's settings.
//!
//! Files: `arith.rs` the value and its exact arithmetic and rounding, `format.rs` parsing
//! and printing, `ops.rs` the operations with CRuby's precision rules and exception modes,
//! `bigmath.rs` BigMath.exp/log; this file the Ruby-facing methods and their table.

pub mod arith;
mod bigmath;
pub mod format;
mod ops;

use crate::core::{array, bignum, float, integer, object, rational, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
use arith::{Dec, Kind, BASE_FIG, DOUBLE_FIG};
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use bigmath::*;
use ops::*;

pub struct BigDecimalData {
    d: Dec,
}

crate::data_obj!(BigDecimalData);

const EXC_INFINITY: u16 = 0x01;
const EXC_NAN: u16 = 0x02;
const EXC_UNDERFLOW: u16 = 0x04;
const EXC_ZERODIVIDE: u16 = 0x10;
const EXC_ALL: u16 = 0xff;
const ROUND_MODE: i64 = 0x100;

// ---- objects and conversions ----

fn class(ctx: &mut Ctx) -> Value {
    let obj = ctx.c().object;
    crate::core::module::body(obj).const_get(sym::BIGDECIMAL).map_or(obj, |e| e.value)
}

fn dec_of(v: Value) -> Option<Dec> {
    data_ref::<BigDecimalData>(v).map(|b| b.d.clone())
}

/// The value of a BigDecimal receiver (values never change, so a reference is enough).
fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a Dec> {
    match data_ref::<BigDecimalData>(v) {
        Some(b) => Ok(&b.d),
        None => {
            let name = object::class_name_of(ctx, v);
            Err(ctx.type_error(&format!("wrong argument type {name} (expected BigDecimal)")))
        }
    }
}

fn wrap(ctx: &mut Ctx, d: Dec) -> Value {
    let k = class(ctx);
    object::freeze(object::new_data(ctx, k, Box::new(BigDecimalData { d })))
}

/// CRuby's VpCheckException: a NaN or infinite result raises when its exception mode
/// is on (or `always`).
fn check_exception(ctx: &mut Ctx, d: &Dec, always: bool) -> Result<()> {
    let mode = exception_mode(ctx);
    let msg = match d.kind {
        Kind::NaN if always || mode & EXC_NAN != 0 => "Computation results in 'NaN' (Not a Number)",
        Kind::Inf if always || mode & EXC_INFINITY != 0 => {
            if d.neg {
                "Computation results in '-Infinity'"
            } else {
                "Computation results in 'Infinity'"
            }
        }
        _ => return Ok(()),
    };
    Err(ctx.float_domain_error(msg))
}

/// A result: checked against the exception mode, then wrapped.
fn ret(ctx: &mut Ctx, d: Dec) -> Result<Value> {
    check_exception(ctx, &d, false)?;
    Ok(wrap(ctx, d))
}

/// Raises FloatDomainError `msg` when exception flag `flag` is on.
fn vp_exception(ctx: &mut Ctx, flag: u16, msg: &str) -> Result<()> {
    if exception_mode(ctx) & flag != 0 {
        return Err(ctx.float_domain_error(msg));
    }
    Ok(())
}

/// The most digits one result may have. CRuby allocates whatever the operands ask for;
/// past this Carmine raises NoMemoryError rather than spend minutes and gigabytes.
const MAX_DIGITS: i64 = 20_000_000;

fn check_digits(ctx: &mut Ctx, digits: i64) -> Result<()> {
    if digits > MAX_DIGITS {
        return Err(ctx.no_memory_error());
    }
    Ok(())
}

// ---- per-thread modes ----

fn mode_key(ctx: &mut Ctx, name: &str) -> Value {
    Value::symbol(ctx.intern(name))
}

/// The three per-thread settings, under the `Thread#[]` keys CRuby uses.
#[derive(Clone, Copy)]
enum Mode {
    Exception,
    Rounding,
    Limit,
}

impl Mode {
    fn key(self) -> Value {
        Value::symbol(match self {
            Mode::Exception => sym::BIGDECIMAL_EXCEPTION_MODE,
            Mode::Rounding => sym::BIGDECIMAL_ROUNDING_MODE,
            Mode::Limit => sym::BIGDECIMAL_PRECISION_LIMIT,
        })
    }
    fn default(self) -> i64 {
        match self {
            Mode::Rounding => arith::ROUND_HALF_UP as i64,
            _ => 0,
        }
    }
}

fn thread_int(ctx: &mut Ctx, mode: Mode) -> i64 {
    crate::core::thread::current_local_get(ctx, mode.key()).as_fixnum().unwrap_or(mode.default())
}

fn set_thread_int(ctx: &mut Ctx, mode: Mode, v: i64) -> Result<()> {
    crate::core::thread::current_local_set(ctx, mode.key(), Value::fixnum(v))?;
    Ok(())
}

fn exception_mode(ctx: &mut Ctx) -> u16 {
    thread_int(ctx, Mode::Exception) as u16
}

fn rounding_mode(ctx: &mut Ctx) -> u8 {
    thread_int(ctx, Mode::Rounding) as u8
}

fn precision_limit(ctx: &mut Ctx) -> i64 {
    thread_int(ctx, Mode::Limit)
}

/// Rounds an arithmetic result to BigDecimal.limit significant digits, when set.
fn limited(ctx: &mut Ctx, d: Dec) -> Dec {
    let limit = precision_limit(ctx);
    if limit > 0 {
        let mode = rounding_mode(ctx);
        d.round_sig(limit, mode)
    } else {
        d
    }
}

/// A rounding mode given as a Symbol or Integer (`check_rounding_mode`).
fn rounding_mode_arg(ctx: &mut Ctx, v: Value) -> Result<u8> {
    if let Some(id) = v.as_symbol() {
        return match ctx.sym_str(id).as_str() {
            "up" => Ok(arith::ROUND_UP),
            "down" | "truncate" => Ok(arith::ROUND_DOWN),
            "half_up" | "default" => Ok(arith::ROUND_HALF_UP),
            "half_down" => Ok(arith::ROUND_HALF_DOWN),
            "half_even" | "banker" => Ok(arith::ROUND_HALF_EVEN),
            "ceiling" | "ceil" => Ok(arith::ROUND_CEILING),
            "floor" => Ok(arith::ROUND_FLOOR),
            _ => Err(ctx.arg_error("invalid rounding mode")),
        };
    }
    let n = integer::to_i64_arg(ctx, v)?;
    if (1..=7).contains(&n) {
        Ok(n as u8)
    } else {
        Err(ctx.arg_error("invalid rounding mode"))
    }
}

/// The `half:` option of `round` (`check_rounding_mode_option`).
fn half_option(ctx: &mut Ctx, opts: Value) -> Result<u8> {
    let key = mode_key(ctx, "half");
    let Some(mode) = crate::core::hash::get(opts, key).filter(|v| !v.is_nil()) else { return Ok(rounding_mode(ctx)) };
    let s = if let Some(id) = mode.as_symbol() {
        Some(ctx.sym_str(id))
    } else {
        string::try_to_str(ctx, mode)?.map(string::to_rust_string_lossy)
    };
    match s.as_deref().map(|s| s.to_ascii_lowercase()) {
        Some(m) if m == "up" => Ok(arith::ROUND_HALF_UP),
        Some(m) if m == "even" => Ok(arith::ROUND_HALF_EVEN),
        Some(m) if m == "down" => Ok(arith::ROUND_HALF_DOWN),
        Some(m) => Err(ctx.arg_error(&format!("invalid rounding mode: {m}"))),
        None => {
            let s = object::inspect_string(ctx, mode)?;
            Err(ctx.arg_error(&format!("invalid rounding mode: {s}")))
        }
    }
}

/// A digit count argument: an Integer (to_int), not negative.
fn precision_arg(ctx: &mut Ctx, v: Value) -> Result<i64> {
    let n = integer::to_int_arg(ctx, v)? as i64;
    if n < 0 {
        return Err(ctx.arg_error("negative precision"));
    }
    Ok(n)
}

fn int_to_dec(v: Value) -> Dec {
    if let Some(i) = v.as_fixnum() {
        Dec::from_i64(i)
    } else {
        Dec::from_bigint(bignum::get(v))
    }
}

/// Rational → BigDecimal with `digs` significant digits (0: as `/` does).
fn rational_to_dec(ctx: &mut Ctx, v: Value, digs: i64) -> Result<Dec> {
    let (n, d) = rational::parts(v);
    let (n, d) = (Dec::from_bigint(&n), Dec::from_bigint(&d));
    if digs == 0 {
        slash(ctx, &n, &d)
    } else {
        div_digits(ctx, &n, &d, digs)
    }
}

/// The other operand of an arithmetic operation as a BigDecimal value (Floats keep their
/// shortest digits, Rationals get `rational_digs`); None when it must be coerced.
fn operand(ctx: &mut Ctx, v: Value, rational_digs: i64) -> Result<Option<Dec>> {
    if let Some(d) = dec_of(v) {
        return Ok(Some(d));
    }
    if integer::is_integer(v) {
        return Ok(Some(int_to_dec(v)));
    }
    if float::is_float(v) {
        let d = format::from_f64(float::get(v), 0);
        check_exception(ctx, &d, false)?;
        return Ok(Some(d));
    }
    if rational::is_rational(v) {
        return Ok(Some(rational_to_dec(ctx, v, rational_digs)?));
    }
    Ok(None)
}

fn cannot_coerce(ctx: &mut Ctx, v: Value) -> crate::error::Unwind {
    let desc = if v.is_nil() || v == Value::TRUE || v == Value::FALSE || v.is_fixnum() { object::inspect_string(ctx, v).unwrap_or_default() } else { object::class_name_of(ctx, v) };
    ctx.type_error(&format!("{desc} can't be coerced into BigDecimal"))
}

fn coerce_op(ctx: &mut Ctx, recv: Value, other: Value, op: &str) -> Result<Value> {
    let id = ctx.intern(op);
    crate::core::numeric::coerce_bin(ctx, recv, other, id, false)
}

// ---- Kernel#BigDecimal and class methods ----

fn exception_opt(ctx: &mut Ctx, kw: Option<Value>) -> Result<bool> {
    let Some(kw) = kw else { return Ok(true) };
    let key = mode_key(ctx, "exception");
    match crate::core::hash::get(kw, key) {
        None | Some(Value::TRUE) => Ok(true),
        Some(Value::FALSE) => Ok(false),
        Some(v) => {
            let s = object::inspect_string(ctx, v)?;
            Err(ctx.arg_error(&format!("expected true or false as exception: {s}")))
        }
    }
}

/// `BigDecimal(value, digits = omitted, exception: true)`; `digs` -1 when omitted.
fn convert(ctx: &mut Ctx, v: Value, digs: i64, exc: bool) -> Result<Value> {
    match v {
        Value::NIL | Value::TRUE | Value::FALSE => {
            if !exc {
                return Ok(Value::NIL);
            }
            let name = if v.is_nil() { "nil" } else if v == Value::TRUE { "true" } else { "false" };
            return Err(ctx.type_error(&format!("can't convert {name} into BigDecimal")));
        }
        _ => {}
    }
    if let Some(d) = dec_of(v) {
        check_exception(ctx, &d, false)?;
        return Ok(if digs < 0 { v } else { wrap(ctx, d) });
    }
    if integer::is_integer(v) {
        return Ok(wrap(ctx, int_to_dec(v)));
    }
    if float::is_float(v) {
        let f = float::get(v);
        if f.is_finite() && f != 0.0 {
            if digs < 0 {
                if !exc {
                    return Ok(Value::NIL);
                }
                return Err(ctx.arg_error("can't omit precision for a Float."));
            }
            if digs > DOUBLE_FIG {
                if !exc {
                    return Ok(Value::NIL);
                }
                return Err(ctx.arg_error("precision too large."));
            }
        }
        let d = format::from_f64(f, digs.max(0) as usize);
        return ret(ctx, d);
    }
    if rational::is_rational(v) {
        if digs < 0 {
            if !exc {
                return Ok(Value::NIL);
            }
            return Err(ctx.arg_error("can't omit precision for a Rational."));
        }
        let d = rational_to_dec(ctx, v, digs)?;
        return ret(ctx, d);
    }
    if crate::core::complex::is_complex(v) {
        let im = ctx.call_str(v, "imaginary", &[])?;
        let zero = ctx.call_str(im, "zero?", &[])?;
        if !zero.truthy() {
            return Err(ctx.arg_error("Unable to make a BigDecimal from non-zero imaginary number"));
        }
        let re = ctx.call_str(v, "real", &[])?;
        return convert(ctx, re, digs, exc);
    }
    let s = if string::is_string(v) { Some(v) } else { string::try_to_str(ctx, v)? };
    let Some(s) = s else {
        if !exc {
            return Ok(Value::NIL);
        }
        let name = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("can't convert {name} into BigDecimal")));
    };
    if string::bytes(s).contains(&0) {
        return Err(ctx.arg_error("string contains null byte"));
    }
    let text = string::to_rust_string_lossy(s);
    match format::parse(&text, true) {
        Some(d) => ret(ctx, d),
        None if !exc => Ok(Value::NIL),
        None => Err(ctx.arg_error(&format!("invalid value for BigDecimal(): \"{text}\""))),
    }
}

fn f_bigdecimal(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let exc = exception_opt(ctx, args.kw)?;
    let mut digs = -1;
    if args.pos.len() > 1 {
        let n = integer::to_integer_arg(ctx, args.pos[1])?;
        let neg = match n.as_fixnum() {
            Some(i) => i < 0,
            None => bignum::get(n).is_negative(),
        };
        if neg {
            if !exc {
                return Ok(Value::NIL);
            }
            return Err(ctx.arg_error("negative precision"));
        }
        digs = n.as_fixnum().unwrap_or(i64::MAX);
    }
    convert(ctx, args.pos[0], digs, exc)
}

fn s_interpret_loosely(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let text = string::to_rust_string_lossy(s);
    let d = format::parse(&text, false).unwrap_or_else(|| Dec::zero(false));
    ret(ctx, d)
}

fn s_mode(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let which = integer::to_int_arg(ctx, args.pos[0])? as i64;
    let val = args.pos.get(1).copied().unwrap_or(Value::NIL);
    if which & EXC_ALL as i64 != 0 {
        let mut mode = exception_mode(ctx);
        if val.is_nil() {
            return Ok(Value::fixnum(mode as i64));
        }
        if val != Value::TRUE && val != Value::FALSE {
            return Err(ctx.arg_error("second argument must be true or false"));
        }
        for flag in [EXC_INFINITY, EXC_NAN, EXC_UNDERFLOW, EXC_ZERODIVIDE] {
            if which & flag as i64 != 0 {
                if val == Value::TRUE {
                    mode |= flag;
                } else {
                    mode &= !flag;
                }
            }
        }
        set_thread_int(ctx, Mode::Exception, mode as i64)?;
        return Ok(Value::fixnum(mode as i64));
    }
    if which == ROUND_MODE {
        if val.is_nil() {
            return Ok(Value::fixnum(rounding_mode(ctx) as i64));
        }
        let m = rounding_mode_arg(ctx, val)?;
        set_thread_int(ctx, Mode::Rounding, m as i64)?;
        return Ok(Value::fixnum(m as i64));
    }
    Err(ctx.type_error("first argument for BigDecimal.mode invalid"))
}

fn s_limit(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let cur = precision_limit(ctx);
    if let Some(&n) = args.pos.first() {
        if n.is_nil() {
            return Ok(Value::fixnum(cur));
        }
        let n = integer::to_int_arg(ctx, n)?;
        if n < 0 {
            return Err(ctx.arg_error("argument must be positive"));
        }
        set_thread_int(ctx, Mode::Limit, n as i64)?;
    }
    Ok(Value::fixnum(cur))
}

fn s_double_fig(_ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(DOUBLE_FIG))
}

/// Runs the block, then puts the thread's mode `name` back as it was.
fn save_mode(ctx: &mut Ctx, args: &Args, mode: Mode) -> Result<Value> {
    let saved = thread_int(ctx, mode);
    let Some(block) = args.block else { return Err(ctx.raise(ctx.c().local_jump_error, "no block given (yield)")) };
    let r = ctx.yield_block(&block, &[]);
    set_thread_int(ctx, mode, saved)?;
    r
}

fn s_save_exception_mode(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    save_mode(ctx, args, Mode::Exception)
}

fn s_save_rounding_mode(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    save_mode(ctx, args, Mode::Rounding)
}

fn s_save_limit(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    save_mode(ctx, args, Mode::Limit)
}

fn s_load(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let text = string::to_rust_string_lossy(s);
    let body = match text.split_once(':') {
        Some((prec, body)) => {
            if !prec.bytes().all(|c| c.is_ascii_digit()) {
                return Err(ctx.type_error("load failed: invalid character in the marshaled string"));
            }
            body
        }
        None => text.as_str(),
    };
    match format::parse(body, true) {
        Some(d) => ret(ctx, d),
        None => Err(ctx.arg_error(&format!("invalid value for BigDecimal(): \"{body}\""))),
    }
}

// ---- instance methods ----

fn m_add(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_op(ctx, recv, args.pos[0], b'+')
}

fn m_sub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_op(ctx, recv, args.pos[0], b'-')
}

fn m_mul(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_op(ctx, recv, args.pos[0], b'*')
}

fn m_div(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_op(ctx, recv, args.pos[0], b'/')
}

fn arith_op(ctx: &mut Ctx, recv: Value, other: Value, op: u8) -> Result<Value> {
    let a = get(ctx, recv)?;
    let Some(b) = operand(ctx, other, a.prec_words() * BASE_FIG)? else {
        return coerce_op(ctx, recv, other, &(op as char).to_string());
    };
    let r = match op {
        b'+' | b'-' => add_values(ctx, a, &b, op)?,
        b'*' => mul_values(ctx, a, &b)?,
        _ => slash(ctx, a, &b)?,
    };
    ret(ctx, r)
}

/// add/sub/mult with a digit count: the exact result rounded to `n` significant digits
/// (n == 0: as the operator).
fn arith_digits(ctx: &mut Ctx, recv: Value, args: &Args, op: u8) -> Result<Value> {
    let n = precision_arg(ctx, args.pos[1])?;
    if n == 0 {
        return arith_op(ctx, recv, args.pos[0], op);
    }
    let a = get(ctx, recv)?;
    let other = args.pos[0];
    let Some(b) = operand(ctx, other, a.prec_words() * BASE_FIG)? else {
        return coerce_op(ctx, recv, other, &(op as char).to_string());
    };
    if op != b'*' {
        check_digits(ctx, a.sum_digits(&b))?;
    }
    let r = match op {
        b'*' => special_op(ctx, a, &b, op)?.unwrap_or_else(|| a.mul(&b)),
        b'-' => special_op(ctx, a, &b, op)?.unwrap_or_else(|| a.sub(&b)),
        _ => special_op(ctx, a, &b, op)?.unwrap_or_else(|| a.add(&b)),
    };
    let mode = rounding_mode(ctx);
    ret(ctx, r.round_sig(n, mode))
}

fn m_add2(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_digits(ctx, recv, args, b'+')
}

fn m_sub2(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_digits(ctx, recv, args, b'-')
}

fn m_mult2(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    arith_digits(ctx, recv, args, b'*')
}

/// The divisor of `div(x, n)`: Floats keep at most double_fig digits, Rationals n.
fn divisor_with_digits(ctx: &mut Ctx, v: Value, n: i64) -> Result<Option<Dec>> {
    if float::is_float(v) {
        let d = format::from_f64(float::get(v), n.min(DOUBLE_FIG) as usize);
        return Ok(Some(d));
    }
    if rational::is_rational(v) {
        return Ok(Some(rational_to_dec(ctx, v, n)?));
    }
    operand(ctx, v, n)
}

fn m_div3(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    match args.pos.get(1) {
        None | Some(&Value::NIL) => {
            let a = get(ctx, recv)?;
            let Some(b) = operand(ctx, other, a.prec_words() * BASE_FIG)? else { return coerce_op(ctx, recv, other, "div") };
            let (d, _) = divmod_values(ctx, a, &b)?;
            check_exception(ctx, &d, false)?;
            to_integer(ctx, &d)
        }
        Some(&n) => {
            let n = precision_arg(ctx, n)?;
            if n == 0 {
                return arith_op(ctx, recv, other, b'/');
            }
            let a = get(ctx, recv)?;
            let Some(b) = divisor_with_digits(ctx, other, n)? else { return Err(cannot_coerce(ctx, other)) };
            let r = div_digits(ctx, a, &b, n)?;
            ret(ctx, r)
        }
    }
}

fn m_quo(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let Some(&n) = args.pos.get(1) {
        let n = precision_arg(ctx, n)?;
        if n > 0 {
            let a = get(ctx, recv)?;
            let other = args.pos[0];
            let Some(b) = divisor_with_digits(ctx, other, n)? else { return Err(cannot_coerce(ctx, other)) };
            let r = div_digits(ctx, a, &b, n)?;
            return ret(ctx, r);
        }
    }
    arith_op(ctx, recv, args.pos[0], b'/')
}

fn m_mod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let other = args.pos[0];
    let Some(b) = operand(ctx, other, a.prec_words() * BASE_FIG)? else { return coerce_op(ctx, recv, other, "%") };
    let (_, m) = divmod_values(ctx, a, &b)?;
    ret(ctx, m)
}

fn m_divmod(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let other = args.pos[0];
    let Some(b) = operand(ctx, other, a.prec_words() * BASE_FIG)? else { return coerce_op(ctx, recv, other, "divmod") };
    let (d, m) = divmod_values(ctx, a, &b)?;
    let d = ret(ctx, d)?;
    let m = ret(ctx, m)?;
    Ok(array::from_vec(ctx, vec![d, m]))
}

/// `x.remainder(y)`: `x - y * (x / y).truncate`.
fn m_remainder(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let other = args.pos[0];
    let Some(b) = operand(ctx, other, a.prec_words() * BASE_FIG)? else { return coerce_op(ctx, recv, other, "remainder") };
    if a.is_nan() || b.is_nan() || a.is_inf() || b.is_inf() || b.is_zero() {
        return ret(ctx, Dec::nan());
    }
    if a.is_zero() {
        return ret(ctx, Dec::zero(a.neg && !b.neg));
    }
    if a.exponent10() < b.exponent10() {
        // |a| < |b|: the quotient truncates to zero.
        return ret(ctx, a.clone());
    }
    check_digits(ctx, a.exponent10() - b.exponent10())?;
    check_digits(ctx, a.sum_digits(&b))?;
    let (q, _, _) = a.div_trunc(&b, 0);
    let r = a.sub(&q.mul(&b));
    // A zero remainder keeps the dividend's sign, as CRuby's does.
    ret(ctx, if r.is_zero() { Dec::zero(a.neg) } else { r })
}

fn m_uplus(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_neg(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let r = limited(ctx, a.negate());
    ret(ctx, r)
}

fn m_abs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let r = limited(ctx, a.abs());
    ret(ctx, r)
}

fn m_sqrt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let n = precision_arg(ctx, args.pos[0])?;
    if a.is_zero() || (a.is_inf() && !a.neg) {
        check_exception(ctx, a, false)?;
        return Ok(recv);
    }
    if a.is_nan() {
        return Err(ctx.float_domain_error("sqrt of 'NaN'(Not a Number)"));
    }
    if a.neg {
        return Err(ctx.float_domain_error("sqrt of negative value"));
    }
    let mut digits = (a.prec_words() * (BASE_FIG + 1)).max(n + DOUBLE_FIG + BASE_FIG);
    let limit = precision_limit(ctx);
    if limit > 0 {
        digits = digits.min((arith::ceil_div(limit, BASE_FIG) + 2) * BASE_FIG);
    }
    check_digits(ctx, digits)?;
    let words = arith::ceil_div(digits, BASE_FIG);
    let r = limited(ctx, a.sqrt(words));
    ret(ctx, r)
}

/// `x ** n` for an Integer n (CRuby's VpPowerByInt and the words it allocates).
fn power_int(ctx: &mut Ctx, a: &Dec, n: &BigInt) -> Result<Dec> {
    let Some(n) = n.to_i64().filter(|n| n.unsigned_abs() < (1u64 << 40)) else {
        // |n| beyond what any finite result could hold.
        let abs = a.abs();
        let one = Dec::one();
        let even = !n.bit(0);
        let neg_n = n.is_negative();
        return Ok(match abs.compare(&one) {
            Some(Ordering::Equal) => {
                if a.neg && !even {
                    a.clone()
                } else {
                    one
                }
            }
            Some(Ordering::Less) => {
                if neg_n {
                    Dec::inf(a.neg && !even)
                } else {
                    Dec::zero(a.neg && !even)
                }
            }
            _ => {
                if neg_n {
                    Dec::zero(a.neg && !even)
                } else {
                    Dec::inf(a.neg && !even)
                }
            }
        });
    };
    if a.kind != Kind::Finite || n == 0 {
        return Ok(a.powi(n));
    }
    check_digits(ctx, a.n_digits().saturating_mul(n.abs()))?;
    let ma = n.unsigned_abs().max(1) as i64;
    let mut words = arith::ceil_div(a.prec_words() * (BASE_FIG + 1) * (ma + 1), BASE_FIG);
    let limit = precision_limit(ctx);
    if limit > 0 {
        words = words.min(arith::ceil_div(limit, BASE_FIG) + 2);
    }
    let p = if limit > 0 {
        // Under a limit CRuby rounds every product of its square-and-multiply loop.
        let base = limited(ctx, a.abs());
        let mut y = base.clone();
        let mut k = n.unsigned_abs() - 1;
        while k > 0 {
            let mut w = base.clone();
            let mut s = 1u64;
            while s + s <= k {
                w = limited(ctx, w.mul(&w));
                s += s;
            }
            k -= s;
            y = limited(ctx, y.mul(&w));
        }
        if a.neg && n % 2 != 0 {
            y.negate()
        } else {
            y
        }
    } else {
        a.powi(n.abs())
    };
    if p.kind != Kind::Finite {
        return Ok(if n < 0 { if p.is_inf() { Dec::zero(p.neg) } else { Dec::inf(p.neg) } } else { p });
    }
    let mode = rounding_mode(ctx);
    let r = if n >= 0 {
        p
    } else if p.m == num_bigint::BigUint::from(1u32) {
        Dec::new(p.neg, p.m.clone(), -p.exp)
    } else {
        let (q, _, _) = Dec::one().div_words(&p, words + 2);
        q
    };
    // The result has the words of y.
    let r = if r.prec_words() > words { r.round_at(BASE_FIG * (r.word_exp() - words), mode) } else { r };
    Ok(limited(ctx, r))
}

fn m_power(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let mut e = args.pos[0];
    let prec = args.pos.get(1).copied().filter(|v| !v.is_nil());
    if a.is_nan() {
        return ret(ctx, Dec::nan());
    }
    if float::is_float(e) {
        let f = float::get(e);
        if f.is_nan() {
            return ret(ctx, Dec::nan());
        }
        if f == f.round() {
            // An infinite Float fails here, as CRuby's conversion to Integer does.
            e = float::to_integer(ctx, f)?;
        }
    } else if rational::is_rational(e) {
        let (n, d) = rational::parts(e);
        if d == BigInt::from(1) || n.is_zero() {
            e = bignum::normalize(ctx, n.magnitude().clone().into());
            if n.is_negative() {
                e = integer::negate(ctx, e)?;
            }
        }
    } else if let Some(d) = dec_of(e) {
        // CRuby rounds the exponent to see whether it is integral: NaN and infinities fail.
        check_exception(ctx, &d, true)?;
        if d.frac().is_zero() {
            // An exponent past 10**30 only says "overflow or underflow" (and is even).
            let n = if d.exponent10() > 30 { BigInt::from(if d.neg { -1i64 } else { 1 }) << 100 } else { d.to_bigint() };
            e = bignum::normalize(ctx, n);
        }
    } else if !integer::is_integer(e) {
        let name = object::class_name_of(ctx, e);
        return Err(ctx.type_error(&format!("wrong argument type {name} (expected scalar Numeric)")));
    }
    if !integer::is_integer(e) {
        return power_fractional(ctx, a, e, prec);
    }
    let n = if let Some(i) = e.as_fixnum() { BigInt::from(i) } else { bignum::get(e).clone() };
    if a.is_zero() {
        // Zero to a positive power is +0; to a negative one, an infinity signed like
        // the base to an odd power.
        let r = match n.sign() {
            num_bigint::Sign::NoSign => Dec::one(),
            num_bigint::Sign::Plus => Dec::zero(false),
            num_bigint::Sign::Minus => Dec::inf(a.neg && n.bit(0)),
        };
        return ret(ctx, r);
    }
    if n == BigInt::from(1) {
        return Ok(recv);
    }
    let mut r = power_int(ctx, a, &n)?;
    if let Some(p) = prec {
        if r.kind == Kind::Finite {
            let digits = integer::to_i64_arg(ctx, p)?;
            let mode = rounding_mode(ctx);
            r = r.round_at(digits.saturating_neg(), mode);
        }
    }
    ret(ctx, r)
}

/// `x ** y` for a non-integral y: exp(y log x) through BigMath, as CRuby does.
fn power_fractional(ctx: &mut Ctx, a: &Dec, e: Value, prec: Option<Value>) -> Result<Value> {
    let mut n = match prec {
        Some(p) => integer::to_i64_arg(ctx, p)?,
        None => a.prec_words() * BASE_FIG,
    };
    check_digits(ctx, n)?;
    let e_neg = ctx.call_str(e, "<", &[Value::fixnum(0)])?.truthy();
    if a.is_zero() {
        return ret(ctx, if e_neg { Dec::inf(false) } else { Dec::zero(false) });
    }
    if a.is_inf() {
        if e_neg {
            return ret(ctx, Dec::zero(a.neg));
        }
        if a.neg {
            let c = ctx.c().math_domain_error;
            return Err(ctx.raise(c, "a non-integral exponent for a negative base"));
        }
        return ret(ctx, Dec::inf(false));
    }
    let exp = if float::is_float(e) {
        if prec.is_none() {
            n += DOUBLE_FIG;
        }
        format::from_f64(float::get(e), 0)
    } else if rational::is_rational(e) {
        let d = rational_to_dec(ctx, e, n)?;
        if prec.is_none() {
            n += n;
        }
        d
    } else {
        let d = get(ctx, e)?;
        if prec.is_none() {
            n += d.prec_words() * BASE_FIG;
        }
        d.clone()
    };
    if a.neg {
        let c = ctx.c().math_domain_error;
        // CRuby's power goes through BigMath.log, which refuses the base.
        return Err(ctx.raise(c, "Zero or negative argument for log"));
    }
    check_digits(ctx, n)?;
    if n < 0 {
        return Err(ctx.arg_error("Zero or negative precision for exp"));
    }
    let log_x = series_log(ctx, a, n + 1)?;
    let prod = mult_digits(ctx, &exp, &log_x, n + 1);
    series_exp(ctx, &prod, n)
}

fn cmp_op(ctx: &mut Ctx, recv: Value, other: Value, op: &str) -> Result<Value> {
    let a = get(ctx, recv)?;
    let b = if let Some(d) = dec_of(other) {
        Some(d)
    } else if integer::is_integer(other) {
        Some(int_to_dec(other))
    } else if float::is_float(other) {
        Some(format::from_f64(float::get(other), 0))
    } else if rational::is_rational(other) {
        Some(rational_to_dec(ctx, other, a.prec_words() * BASE_FIG)?)
    } else {
        None
    };
    let Some(b) = b else {
        return match op {
            "<=>" => match crate::core::numeric::coerce_cmp(ctx, recv, other)? {
                Some(o) => Ok(Value::fixnum(o as i64)),
                None => Ok(Value::NIL),
            },
            "==" => match crate::core::numeric::do_coerce(ctx, recv, other, true)? {
                Some((x, y)) => Ok(Value::bool(ctx.call_str(x, "==", &[y])?.truthy())),
                None => Ok(Value::FALSE),
            },
            _ => {
                let id = ctx.intern(op);
                crate::core::numeric::coerce_bin(ctx, recv, other, id, true)
            }
        };
    };
    let o = a.compare(&b);
    Ok(match op {
        "<=>" => o.map_or(Value::NIL, |o| Value::fixnum(o as i64)),
        "==" => Value::bool(o == Some(Ordering::Equal)),
        "<" => Value::bool(o == Some(Ordering::Less)),
        "<=" => Value::bool(matches!(o, Some(Ordering::Less | Ordering::Equal))),
        ">" => Value::bool(o == Some(Ordering::Greater)),
        _ => Value::bool(matches!(o, Some(Ordering::Greater | Ordering::Equal))),
    })
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    cmp_op(ctx, recv, args.pos[0], "<=>")
}
fn m_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    cmp_op(ctx, recv, args.pos[0], "==")
}
fn m_lt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    cmp_op(ctx, recv, args.pos[0], "<")
}
fn m_le(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    cmp_op(ctx, recv, args.pos[0], "<=")
}
fn m_gt(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    cmp_op(ctx, recv, args.pos[0], ">")
}
fn m_ge(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    cmp_op(ctx, recv, args.pos[0], ">=")
}

fn m_coerce(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let other = args.pos[0];
    let b = if float::is_float(other) {
        let d = format::from_f64(float::get(other), 0);
        ret(ctx, d)?
    } else if rational::is_rational(other) {
        let d = rational_to_dec(ctx, other, a.prec_words() * BASE_FIG)?;
        wrap(ctx, d)
    } else if dec_of(other).is_some() {
        other
    } else if integer::is_integer(other) {
        wrap(ctx, int_to_dec(other))
    } else {
        return Err(cannot_coerce(ctx, other));
    };
    Ok(array::from_vec(ctx, vec![b, recv]))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    use std::hash::{Hash, Hasher};
    let a = get(ctx, recv)?;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    // -0 == +0, so they hash alike.
    (a.kind as u8, a.neg && !a.is_zero(), a.exp).hash(&mut h);
    a.m.hash(&mut h);
    Ok(Value::fixnum((h.finish() >> 2) as i64))
}

fn to_integer(ctx: &mut Ctx, d: &Dec) -> Result<Value> {
    check_exception(ctx, d, true)?;
    // Integer#** answers Infinity past 32 Mi bits, which CRuby's to_i turns into this.
    if d.exponent10() as f64 * std::f64::consts::LOG2_10 > (32 * 1024 * 1024) as f64 {
        return Err(ctx.float_domain_error("Infinity"));
    }
    let n = d.to_bigint();
    Ok(bignum::normalize(ctx, n))
}

fn m_to_i(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    to_integer(ctx, a)
}

fn m_to_f(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let f = a.to_f64();
    if a.kind == Kind::Finite {
        if f.is_infinite() {
            vp_exception(ctx, EXC_INFINITY, "BigDecimal to Float conversion")?;
        } else if f == 0.0 {
            vp_exception(ctx, EXC_UNDERFLOW, "BigDecimal to Float conversion")?;
        }
    }
    Ok(float::new(ctx, f))
}

fn m_to_r(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    check_exception(ctx, a, true)?;
    check_digits(ctx, a.exp.abs())?;
    let (n, d) = a.to_ratio();
    rational::reduce(ctx, n, d)
}

fn m_split(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let (sign, digits) = match a.kind {
        Kind::NaN => (0, "NaN".to_string()),
        Kind::Inf => (if a.neg { -1 } else { 1 }, "Infinity".to_string()),
        Kind::Zero => (if a.neg { -1 } else { 1 }, "0".to_string()),
        Kind::Finite => (if a.neg { -1 } else { 1 }, a.m.to_string()),
    };
    let s = string::new_utf8(ctx, &digits);
    let e = Value::fixnum(a.exponent10());
    Ok(array::from_vec(ctx, vec![Value::fixnum(sign), s, Value::fixnum(10), e]))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let (mut fmt_f, mut plus, mut grouping) = (false, 0u8, 0usize);
    if let Some(&f) = args.pos.first() {
        if string::is_string(f) {
            let b = string::bytes(f).to_vec();
            let mut i = 0;
            if b.first() == Some(&b' ') {
                plus = 1;
                i = 1;
            } else if b.first() == Some(&b'+') {
                plus = 2;
                i = 1;
            }
            while i < b.len() {
                let c = b[i];
                i += 1;
                if c.is_ascii_whitespace() {
                    continue;
                }
                if !c.is_ascii_digit() {
                    fmt_f = c == b'F' || c == b'f';
                    break;
                }
                grouping = grouping.saturating_mul(10).saturating_add((c - b'0') as usize);
            }
        } else {
            let n = integer::to_int_arg(ctx, f)?;
            if n <= 0 {
                return Err(ctx.arg_error("argument must be positive"));
            }
            grouping = n as usize;
        }
    }
    if fmt_f {
        check_digits(ctx, a.exponent10().abs().max(a.exp.abs()))?;
    }
    let s = if fmt_f { format::to_f_string(a, grouping, plus) } else { format::to_e_string(a, grouping, plus) };
    Ok(ascii_string(ctx, s))
}

/// A US-ASCII String, as CRuby's to_s and inspect return.
fn ascii_string(ctx: &mut Ctx, s: String) -> Value {
    string::new_with_enc(ctx, s.into_bytes(), crate::core::encoding::US_ASCII)
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let s = format::to_e_string(a, 0, 0);
    Ok(ascii_string(ctx, s))
}

fn m_dump(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let digits = if a.is_zero() { 1 } else { a.n_digits() };
    let s = format!("{}:{}", (arith::ceil_div(digits, BASE_FIG) + 1) * BASE_FIG, format::to_e_string(a, 0, 0));
    Ok(string::new_utf8(ctx, &s))
}

fn m_precs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    if crate::core::warning::enabled(ctx, "deprecated") {
        crate::core::warning::emit(ctx, "BigDecimal#precs is deprecated and will be removed in the future; use BigDecimal#precision instead.\n", Some("deprecated"))?;
    }
    let p = a.prec_words() * BASE_FIG;
    Ok(array::from_vec(ctx, vec![Value::fixnum(p), Value::fixnum(p + BASE_FIG)]))
}

fn m_precision(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.precision()))
}

fn m_scale(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.scale()))
}

fn m_precision_scale(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    Ok(array::from_vec(ctx, vec![Value::fixnum(a.precision()), Value::fixnum(a.scale())]))
}

fn m_n_significant_digits(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.n_digits()))
}

fn m_exponent(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(get(ctx, recv)?.exponent10()))
}

fn m_sign(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    let s = match a.kind {
        Kind::NaN => 0,
        Kind::Zero => 1,
        Kind::Finite => 2,
        Kind::Inf => 3,
    };
    Ok(Value::fixnum(if a.neg { -s } else { s }))
}

fn m_nan_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.is_nan()))
}

fn m_infinite_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    Ok(if a.is_inf() { Value::fixnum(if a.neg { -1 } else { 1 }) } else { Value::NIL })
}

fn m_finite_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.is_finite()))
}

fn m_zero_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.is_zero()))
}

fn m_nonzero_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(if get(ctx, recv)?.is_zero() { Value::NIL } else { recv })
}

fn m_fix(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    ret(ctx, a.fix())
}

fn m_frac(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let a = get(ctx, recv)?;
    ret(ctx, a.frac())
}

/// round/floor/ceil/truncate: `digits` after the point (negative: before it); without
/// digits the result is an Integer.
fn round_to(ctx: &mut Ctx, recv: Value, digits: Option<Value>, mode: u8) -> Result<Value> {
    let a = get(ctx, recv)?;
    let n = match digits {
        Some(v) => integer::to_int_arg(ctx, v)? as i64,
        None => 0,
    };
    let r = a.round_at(-n, mode);
    if digits.is_none() {
        check_exception(ctx, &r, false)?;
        return to_integer(ctx, &r);
    }
    ret(ctx, r)
}

fn m_round(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut mode = rounding_mode(ctx);
    let mut digits = None;
    let mut to_int = false;
    match args.pos {
        [] => to_int = true,
        [v] => {
            if crate::core::hash::is_hash(*v) {
                mode = half_option(ctx, *v)?;
            } else {
                let n = integer::to_int_arg(ctx, *v)?;
                if n < 1 {
                    to_int = true;
                }
                digits = Some(*v);
            }
        }
        [v, m, ..] => {
            integer::to_int_arg(ctx, *v)?;
            digits = Some(*v);
            mode = if crate::core::hash::is_hash(*m) { half_option(ctx, *m)? } else { rounding_mode_arg(ctx, *m)? };
        }
    }
    let a = get(ctx, recv)?;
    let n = match digits {
        Some(v) => integer::to_int_arg(ctx, v)? as i64,
        None => 0,
    };
    let r = a.round_at(-n, mode);
    if to_int {
        check_exception(ctx, &r, false)?;
        return to_integer(ctx, &r);
    }
    ret(ctx, r)
}

fn m_truncate(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args.pos.first().copied(), arith::ROUND_DOWN)
}

fn m_floor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args.pos.first().copied(), arith::ROUND_FLOOR)
}

fn m_ceil(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    round_to(ctx, recv, args.pos.first().copied(), arith::ROUND_CEILING)
}

fn m_clone(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

// ---- registration ----

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let obj = ctx.c().object;
    let numeric = ctx.c().numeric;
    let k = super::class_under(ctx, obj, "BigDecimal", numeric);
    // Values come only from Kernel#BigDecimal and operations: no allocator, no `new`.
    crate::core::module::body(k).alloc = crate::core::module::AllocKind::None;
    let meta = object::singleton_class(ctx, k)?;
    let _ = crate::core::module_methods::undef_method(ctx, meta, sym::NEW);

    let kernel = ctx.c().kernel;
    crate::methods!(ctx, kernel, [
        ("BigDecimal", f_bigdecimal, [1..=2], Unsafe, ModuleFunction, Kw),
    ]);

    let consts: &[(&str, i64)] = &[
        ("BASE", 1_000_000_000),
        ("EXCEPTION_ALL", EXC_ALL as i64),
        ("EXCEPTION_NaN", EXC_NAN as i64),
        ("EXCEPTION_INFINITY", EXC_INFINITY as i64),
        ("EXCEPTION_UNDERFLOW", EXC_UNDERFLOW as i64),
        ("EXCEPTION_OVERFLOW", EXC_INFINITY as i64),
        ("EXCEPTION_ZERODIVIDE", EXC_ZERODIVIDE as i64),
        ("ROUND_MODE", ROUND_MODE),
        ("ROUND_UP", arith::ROUND_UP as i64),
        ("ROUND_DOWN", arith::ROUND_DOWN as i64),
        ("ROUND_HALF_UP", arith::ROUND_HALF_UP as i64),
        ("ROUND_HALF_DOWN", arith::ROUND_HALF_DOWN as i64),
        ("ROUND_CEILING", arith::ROUND_CEILING as i64),
        ("ROUND_FLOOR", arith::ROUND_FLOOR as i64),
        ("ROUND_HALF_EVEN", arith::ROUND_HALF_EVEN as i64),
        ("SIGN_NaN", 0),
        ("SIGN_POSITIVE_ZERO", 1),
        ("SIGN_NEGATIVE_ZERO", -1),
        ("SIGN_POSITIVE_FINITE", 2),
        ("SIGN_NEGATIVE_FINITE", -2),
        ("SIGN_POSITIVE_INFINITE", 3),
        ("SIGN_NEGATIVE_INFINITE", -3),
    ];
    for &(name, v) in consts {
        let id = ctx.intern(name);
        crate::core::module::body(k).const_set(id, Value::fixnum(v));
    }
    let version = string::new_utf8(ctx, "3.1.1");
    let version = object::freeze(version);
    let inf = wrap(ctx, Dec::inf(false));
    let nan = wrap(ctx, Dec::nan());
    for (name, v) in [("VERSION", version), ("INFINITY", inf), ("NAN", nan)] {
        let id = ctx.intern(name);
        crate::core::module::body(k).const_set(id, v);
    }

    crate::methods!(ctx, k, [
        ("interpret_loosely", s_interpret_loosely, [1], Unsafe, Singleton),
        ("mode", s_mode, [1..=2], Unsafe, Singleton),
        ("limit", s_limit, [0..=1], Unsafe, Singleton),
        ("double_fig", s_double_fig, [0], Safe, Singleton),
        ("_load", s_load, [1], Unsafe, Singleton),
        ("save_exception_mode", s_save_exception_mode, [0], Unsafe, Singleton),
        ("save_rounding_mode", s_save_rounding_mode, [0], Unsafe, Singleton),
        ("save_limit", s_save_limit, [0], Unsafe, Singleton),
        ("precs", m_precs, [0], Unsafe),
        ("precision", m_precision, [0], Safe),
        ("scale", m_scale, [0], Safe),
        ("precision_scale", m_precision_scale, [0], Safe),
        ("n_significant_digits", m_n_significant_digits, [0], Safe),
        ("add", m_add2, [2], Unsafe),
        ("sub", m_sub2, [2], Unsafe),
        ("mult", m_mult2, [2], Unsafe),
        ("div", m_div3, [1..=2], Unsafe),
        ("hash", m_hash, [0], Safe),
        ("to_s", m_to_s, [0..=1], Unsafe),
        ("to_i", m_to_i, [0], Unsafe),
        ("to_int", m_to_i, [0], Unsafe),
        ("to_r", m_to_r, [0], Unsafe),
        ("split", m_split, [0], Safe),
        ("+", m_add, [1], Unsafe),
        ("-", m_sub, [1], Unsafe),
        ("+@", m_uplus, [0], Safe),
        ("-@", m_neg, [0], Unsafe),
        ("*", m_mul, [1], Unsafe),
        ("/", m_div, [1], Unsafe),
        ("quo", m_quo, [1..=2], Unsafe),
        ("%", m_mod, [1], Unsafe),
        ("modulo", m_mod, [1], Unsafe),
        ("remainder", m_remainder, [1], Unsafe),
        ("divmod", m_divmod, [1], Unsafe),
        ("clone", m_clone, [0], Safe),
        ("dup", m_clone, [0], Safe),
        ("to_f", m_to_f, [0], Unsafe),
        ("abs", m_abs, [0], Unsafe),
        ("sqrt", m_sqrt, [1], Unsafe),
        ("fix", m_fix, [0], Unsafe),
        ("round", m_round, [0..=2], Unsafe),
        ("frac", m_frac, [0], Unsafe),
        ("floor", m_floor, [0..=1], Unsafe),
        ("ceil", m_ceil, [0..=1], Unsafe),
        ("power", m_power, [1..=2], Unsafe),
        ("**", m_power, [1], Unsafe),
        ("<=>", m_cmp, [1], Unsafe),
        ("==", m_eq, [1], Unsafe),
        ("===", m_eq, [1], Unsafe),
        ("eql?", m_eq, [1], Unsafe),
        ("<", m_lt, [1], Unsafe),
        ("<=", m_le, [1], Unsafe),
        (">", m_gt, [1], Unsafe),
        (">=", m_ge, [1], Unsafe),
        ("zero?", m_zero_p, [0], Safe),
        ("nonzero?", m_nonzero_p, [0], Safe),
        ("coerce", m_coerce, [1], Unsafe),
        ("inspect", m_inspect, [0], Safe),
        ("exponent", m_exponent, [0], Safe),
        ("sign", m_sign, [0], Safe),
        ("nan?", m_nan_p, [0], Safe),
        ("infinite?", m_infinite_p, [0], Safe),
        ("finite?", m_finite_p, [0], Safe),
        ("truncate", m_truncate, [0..=1], Unsafe),
        ("_dump", m_dump, [0..=1], Safe),
    ]);

    let big_math = super::module_under(ctx, obj, "BigMath");
    crate::methods!(ctx, big_math, [
        ("exp", bigmath_exp, [2], Unsafe, ModuleFunction),
        ("log", bigmath_log, [2], Unsafe, ModuleFunction),
    ]);
    Ok(())
}
