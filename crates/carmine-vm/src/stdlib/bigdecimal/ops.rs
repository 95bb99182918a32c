//! BigDecimal's arithmetic as CRuby computes it, on values (no Ruby objects): the results
//! of operations on NaN and infinities with their exception modes, sums and products under
//! BigDecimal.limit, `/` and `div(x, n)` on CRuby's word grid with its rounding digit, and
//! divmod's fixed-size intermediates.

use super::*;

/// CRuby's VpIsDefOP: the result of an operation on NaN or infinities (None when both
/// operands are finite), raising in the exception modes that ask for it.
pub(super) fn special_op(ctx: &mut Ctx, a: &Dec, b: &Dec, op: u8) -> Result<Option<Dec>> {
    let sign_neg = |x: &Dec, y: &Dec| x.neg != y.neg;
    let r = if a.is_nan() || b.is_nan() {
        Dec::nan()
    } else if a.is_inf() {
        if b.is_inf() {
            match op {
                b'+' if a.neg == b.neg => Dec::inf(a.neg),
                b'-' if a.neg != b.neg => Dec::inf(a.neg),
                b'*' => Dec::inf(sign_neg(a, b)),
                _ => Dec::nan(),
            }
        } else {
            match op {
                b'+' | b'-' => Dec::inf(a.neg),
                b'*' if b.is_zero() => Dec::nan(),
                _ => Dec::inf(sign_neg(a, b)),
            }
        }
    } else if b.is_inf() {
        match op {
            b'+' => Dec::inf(b.neg),
            b'-' => Dec::inf(!b.neg),
            b'*' if a.is_zero() => Dec::nan(),
            b'*' => Dec::inf(sign_neg(a, b)),
            _ => Dec::zero(sign_neg(a, b)),
        }
    } else {
        return Ok(None);
    };
    if r.is_nan() {
        vp_exception(ctx, EXC_NAN, "Computation results to 'NaN'")?;
    } else if r.is_inf() && !r.neg {
        vp_exception(ctx, EXC_INFINITY, "Computation results to 'Infinity'")?;
    } else {
        vp_exception(ctx, EXC_INFINITY, "Computation results to '-Infinity'")?;
    }
    Ok(Some(r))
}

pub(super) fn add_values(ctx: &mut Ctx, a: &Dec, b: &Dec, op: u8) -> Result<Dec> {
    if let Some(r) = special_op(ctx, a, b, op)? {
        return Ok(r);
    }
    let b = if op == b'-' { b.negate() } else { b.clone() };
    check_digits(ctx, a.sum_digits(&b))?;
    let limit = precision_limit(ctx);
    if limit == 0 {
        return Ok(a.add(&b));
    }
    // Under a limit CRuby sums into a result of at most limit + 2 words.
    let mx = a.prec_words().max(b.prec_words()) + (a.word_exp() - b.word_exp()).abs();
    let words = arith::ceil_div(mx * (BASE_FIG + 1), BASE_FIG).min(arith::ceil_div(limit, BASE_FIG) + 2);
    let mode = rounding_mode(ctx);
    let r = a.add_window(&b, words, mode);
    Ok(limited(ctx, r))
}

pub(super) fn mul_values(ctx: &mut Ctx, a: &Dec, b: &Dec) -> Result<Dec> {
    if let Some(r) = special_op(ctx, a, b, b'*')? {
        return Ok(r);
    }
    let r = a.mul(b);
    Ok(limited(ctx, r))
}

/// Division's cases where no digits are computed: None when both are finite and the
/// divisor is nonzero and the dividend nonzero.
pub(super) fn div_special(ctx: &mut Ctx, a: &Dec, b: &Dec) -> Result<Option<Dec>> {
    if let Some(r) = special_op(ctx, a, b, b'/')? {
        return Ok(Some(r));
    }
    let neg = a.neg != b.neg;
    if a.is_zero() && b.is_zero() {
        vp_exception(ctx, EXC_NAN, "Computation results to 'NaN'")?;
        return Ok(Some(Dec::nan()));
    }
    if b.is_zero() {
        vp_exception(ctx, EXC_ZERODIVIDE, "Divide by zero")?;
        return Ok(Some(Dec::inf(neg)));
    }
    if a.is_zero() {
        return Ok(Some(Dec::zero(neg)));
    }
    Ok(None)
}

/// The words CRuby gives a quotient: room for the larger precision (at least
/// 2 × double_fig digits) plus two words.
pub(super) fn quotient_words(a: &Dec, b: &Dec) -> i64 {
    let mx = a.precision().max(b.precision()).max(2 * DOUBLE_FIG);
    arith::ceil_div(mx + 2 * BASE_FIG, BASE_FIG)
}

/// `a / b` (BigDecimal#/ and #quo): the quotient on CRuby's word grid, its last digit
/// rounded in the current mode from the next digit; or rounded to the limit.
pub(super) fn slash(ctx: &mut Ctx, a: &Dec, b: &Dec) -> Result<Dec> {
    if let Some(r) = div_special(ctx, a, b)? {
        return Ok(r);
    }
    if b.m == num_bigint::BigUint::from(1u32) && b.exp == 0 {
        return Ok(if b.neg { a.negate() } else { a.clone() });
    }
    let words = quotient_words(a, b);
    check_digits(ctx, words * BASE_FIG)?;
    let (q, _, _) = a.div_words(b, words);
    let mode = rounding_mode(ctx);
    let limit = precision_limit(ctx);
    if limit > 0 && arith::ceil_div(limit, BASE_FIG) <= q.prec_words() {
        return Ok(q.round_sig(limit, mode));
    }
    if q.kind != Kind::Finite {
        return Ok(q);
    }
    let v = cruby_next_digit(a, b, &q);
    if v == 0 {
        return Ok(q);
    }
    // The parity CRuby looks at is that of the quotient's last nonzero word.
    let last_odd = q.exp.rem_euclid(BASE_FIG) == 0 && q.m.bit(0);
    let up = match mode {
        arith::ROUND_DOWN => false,
        arith::ROUND_UP => true,
        arith::ROUND_HALF_UP => v >= 5,
        arith::ROUND_HALF_DOWN => v >= 6,
        arith::ROUND_CEILING => !q.neg,
        arith::ROUND_FLOOR => q.neg,
        _ => v > 5 || (v == 5 && last_odd),
    };
    if !up {
        return Ok(q);
    }
    // CRuby adds one to the last nonzero word.
    let unit = BASE_FIG * arith::floor_div(q.exp, BASE_FIG);
    let step = Dec::new(q.neg, num_bigint::BigUint::from(1u32), unit);
    Ok(q.add(&step))
}

/// The digit CRuby rounds a quotient's last place with: the first digit of
/// `BASE × r₀ / b₀` kept in 32 bits, where r₀ and b₀ are the leading words of the
/// remainder and of the divisor. (It is the true next digit when b₀ is large; for small
/// b₀ CRuby's estimate is what decides, and results must match CRuby's.)
pub(super) fn cruby_next_digit(a: &Dec, b: &Dec, q: &Dec) -> u32 {
    let r = a.abs().sub(&q.abs().mul(&b.abs()));
    if r.kind != Kind::Finite || r.neg {
        return 0;
    }
    let (r0, b0) = (r.leading_word(), b.leading_word());
    if b0 == 0 {
        return 0;
    }
    let est = (1_000_000_000u64 * r0 / b0) as u32;
    est / 100_000_000
}

/// `a.div(b, n)` for n > 0: the quotient with n significant digits.
pub(super) fn div_digits(ctx: &mut Ctx, a: &Dec, b: &Dec, n: i64) -> Result<Dec> {
    let mode = rounding_mode(ctx);
    if let Some(r) = div_special(ctx, a, b)? {
        return Ok(r);
    }
    check_digits(ctx, n)?;
    let words = arith::ceil_div(n + 3 * BASE_FIG, BASE_FIG);
    let (q, _, _) = a.div_words(b, words);
    Ok(q.round_sig(n, mode))
}

/// BigDecimal's divmod (CRuby's BigDecimal_DoDivmod): the floored quotient and the
/// modulus, for two operands already converted.
pub(super) fn divmod_values(ctx: &mut Ctx, a: &Dec, b: &Dec) -> Result<(Dec, Dec)> {
    if a.is_nan() || b.is_nan() || (a.is_inf() && b.is_inf()) {
        return Ok((Dec::nan(), Dec::nan()));
    }
    if b.is_zero() {
        return Err(ctx.zero_division());
    }
    if a.is_inf() {
        return Ok((Dec::inf(a.neg != b.neg), Dec::nan()));
    }
    if b.is_inf() {
        return Ok((Dec::zero(false), a.clone()));
    }
    if a.is_zero() {
        return Ok((Dec::zero(false), Dec::zero(false)));
    }
    let mut words = quotient_words(a, b);
    check_digits(ctx, words * BASE_FIG)?;
    let limit = precision_limit(ctx);
    if limit > 0 {
        words = words.min(arith::ceil_div(limit, BASE_FIG) + 2);
    }
    let (q, _, _) = a.div_words(b, words);
    let d = q.fix();
    let mode = rounding_mode(ctx);
    // CRuby's intermediate results have fixed sizes in words; see Dec::add_window.
    let db = limited(ctx, d.mul(b));
    let m = limited(ctx, a.add_window(&db.negate(), words, mode));
    if !m.is_zero() && a.neg != b.neg {
        let d_words = q.prec_words().max(2);
        let d1 = limited(ctx, d.add_window(&Dec::one().negate(), d_words, mode));
        let m1 = limited(ctx, m.add(b));
        Ok((d1, m1))
    } else {
        Ok((d, m))
    }
}
