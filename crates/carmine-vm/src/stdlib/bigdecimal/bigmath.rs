//! BigMath.exp and BigMath.log, and the series they sum: the same working digits and
//! per-term precisions as CRuby's, so that results (and fractional powers, which go
//! through them) agree digit for digit.

use super::*;

pub(super) fn bigmath_prec(ctx: &mut Ctx, v: Value) -> Result<i64> {
    let n = integer::to_i64_arg(ctx, v)?;
    if n <= 0 {
        return Err(ctx.arg_error("Zero or negative precision for exp"));
    }
    check_digits(ctx, n)?;
    Ok(n)
}

/// The argument of BigMath.exp/log as a BigDecimal value; anything else is an
/// ArgumentError there.
pub(super) fn bigmath_arg(ctx: &mut Ctx, v: Value, n: i64) -> Result<Dec> {
    if float::is_float(v) {
        return Ok(format::from_f64(float::get(v), 0));
    }
    if rational::is_rational(v) {
        return rational_to_dec(ctx, v, n);
    }
    match operand(ctx, v, n)? {
        Some(d) => Ok(d),
        None => {
            let desc = if v.is_nil() || v == Value::TRUE || v == Value::FALSE { object::inspect_string(ctx, v)? } else { object::class_name_of(ctx, v) };
            Err(ctx.arg_error(&format!("{desc} can't be coerced into BigDecimal")))
        }
    }
}

pub(super) fn bigmath_exp(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let n = bigmath_prec(ctx, args.pos[1])?;
    let x = bigmath_arg(ctx, args.pos[0], n)?;
    let r = match x.kind {
        Kind::NaN => Dec::nan(),
        Kind::Inf => {
            if x.neg {
                Dec::zero(false)
            } else {
                Dec::inf(false)
            }
        }
        Kind::Zero => Dec::one(),
        Kind::Finite => return series_exp(ctx, &x, n),
    };
    ret(ctx, r)
}

pub(super) fn bigmath_log(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (v, nv) = (args.pos[0], args.pos[1]);
    if !integer::is_integer(nv) {
        return Err(ctx.arg_error("precision must be an Integer"));
    }
    let n = bigmath_prec(ctx, nv)?;
    if crate::core::complex::is_complex(v) {
        let c = ctx.c().math_domain_error;
        return Err(ctx.raise(c, "Complex argument for BigMath.log"));
    }
    let x = bigmath_arg(ctx, v, n)?;
    if x.is_zero() || (x.neg && !x.is_nan()) {
        let c = ctx.c().math_domain_error;
        return Err(ctx.raise(c, "Zero or negative argument for log"));
    }
    let r = match x.kind {
        Kind::NaN => Dec::nan(),
        Kind::Inf => Dec::inf(false),
        _ => series_log(ctx, &x, n)?,
    };
    ret(ctx, r)
}

/// `a.mult(b, n)`: the exact product rounded to `n` significant digits.
pub(super) fn mult_digits(ctx: &mut Ctx, a: &Dec, b: &Dec, n: i64) -> Dec {
    let mode = rounding_mode(ctx);
    a.mul(b).round_sig(n, mode)
}

/// The number of digits a term of a series keeps: the working digits `n` less the
/// distance between the sum's and the term's exponents, at least double_fig; None when
/// the term no longer reaches the sum.
pub(super) fn term_digits(n: i64, sum: &Dec, term: &Dec) -> Option<i64> {
    let m = n - (sum.exponent10() - term.exponent10()).abs();
    (m > 0).then_some(m.max(DOUBLE_FIG))
}

/// BigMath.exp(x, prec) as CRuby evaluates it, so that the digits agree: the Taylor
/// series of e**|x| with prec + double_fig working digits, each term divided to the
/// digits it can still contribute; a negative x takes the reciprocal to prec digits, a
/// positive one is rounded to prec significant digits (an Integer when they do not
/// reach the decimal point).
pub(super) fn series_exp(ctx: &mut Ctx, x: &Dec, prec: i64) -> Result<Value> {
    match x.kind {
        Kind::NaN => return ret(ctx, Dec::nan()),
        Kind::Inf => return ret(ctx, if x.neg { Dec::zero(false) } else { x.clone() }),
        _ => {}
    }
    let n = prec + DOUBLE_FIG;
    let ax = x.abs();
    let one = Dec::one();
    let mut y = one.clone();
    let mut d = one.clone();
    let mut i: u64 = 1;
    if x.exponent10() > 3 {
        // |x| >= 1000: the series would take e·|x| terms. Its truncated terms leave
        // errors far below the digits kept, so e**|x| computed another way rounds alike.
        y = ax.exp_abs(n);
        d = Dec::zero(false);
        if y.is_inf() {
            return ret(ctx, if x.neg { Dec::zero(false) } else { y });
        }
    }
    while !d.is_zero() {
        let Some(m) = term_digits(n, &y, &d) else { break };
        crate::thread::sched::poll_interrupts(ctx)?;
        d = mul_values(ctx, &d, &ax)?;
        d = div_digits(ctx, &d, &Dec::new(false, i.into(), 0), m)?;
        y = add_values(ctx, &y, &d, b'+')?;
        i += 1;
    }
    if x.neg {
        let r = div_digits(ctx, &one, &y, prec)?;
        return ret(ctx, r);
    }
    let digits = prec - y.exponent10();
    let mode = rounding_mode(ctx);
    let r = y.round_at(-digits, mode);
    if digits < 1 {
        check_exception(ctx, &r, false)?;
        return to_integer(ctx, &r);
    }
    ret(ctx, r)
}

/// BigMath.log(x, prec) as CRuby evaluates it (x positive and finite): x scaled by a
/// power of ten into [1, 1000), then 2 atanh((x-1)/(x+1)) by its series with
/// prec + double_fig working digits, plus the exponent times log(10).
pub(super) fn series_log(ctx: &mut Ctx, x: &Dec, prec: i64) -> Result<Dec> {
    if x.kind != Kind::Finite {
        return Ok(if x.is_zero() { Dec::inf(true) } else { x.clone() });
    }
    let n = prec + DOUBLE_FIG;
    let one = Dec::one();
    let mut expo = x.exponent10();
    let x = if !(0..3).contains(&expo) {
        mult_digits(ctx, x, &Dec::new(false, 1u32.into(), -expo), n)
    } else {
        expo = 0;
        x.clone()
    };
    let w = add_values(ctx, &x, &one, b'-')?;
    let xp1 = add_values(ctx, &x, &one, b'+')?;
    let mut t = div_digits(ctx, &w, &xp1, n)?;
    let t2 = mult_digits(ctx, &t, &t, n);
    let mut y = t.clone();
    let mut d = y.clone();
    let mut i: u64 = 1;
    while !d.is_zero() {
        let Some(m) = term_digits(n, &y, &d) else { break };
        crate::thread::sched::poll_interrupts(ctx)?;
        t = mult_digits(ctx, &t2, &t, n);
        i += 2;
        d = div_digits(ctx, &t, &Dec::new(false, i.into(), 0), m)?;
        y = add_values(ctx, &y, &d, b'+')?;
    }
    y = mul_values(ctx, &y, &Dec::new(false, 2u32.into(), 0))?;
    if expo != 0 {
        let log10 = series_log(ctx, &Dec::new(false, 1u32.into(), 1), prec)?;
        let dy = mul_values(ctx, &log10, &Dec::from_i64(expo))?;
        y = add_values(ctx, &y, &dy, b'+')?;
    }
    Ok(y)
}
