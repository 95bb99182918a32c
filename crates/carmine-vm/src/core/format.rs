//! `format` / `sprintf` / `String#%`: CRuby's `rb_str_format`, directive by directive.
//!
//! Invariants:
//! - Argument access follows CRuby's three exclusive styles (sequential, numbered `1$`,
//!   named `%<a>`/`%{a}`) with its error messages; `posarg` is >0 after sequential use,
//!   -1 after numbered and -2 after named access.
//! - Floats are converted to digits by `dtoa` (CRuby's modes 2/3 with its rounding quirk)
//!   and laid out like BSD `vfprintf`; Integers and Rationals under `%f` are formatted
//!   exactly with big-integer arithmetic.
//! - The result's encoding starts as the format's and is renegotiated for every `%s`/`%p`
//!   argument, as `rb_enc_check` does.

use num_bigint::BigInt;
use num_integer::Integer as _;
use num_traits::{Pow, Signed, ToPrimitive, Zero};

use crate::core::dtoa;
use crate::core::encoding;
use crate::core::{bignum, float, hash, integer, object, rational, string};
use crate::error::Unwind;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const FSHARP: u32 = 1;
const FMINUS: u32 = 2;
const FPLUS: u32 = 4;
const FZERO: u32 = 8;
const FSPACE: u32 = 16;
const FWIDTH: u32 = 32;
const FPREC: u32 = 64;
const FPREC0: u32 = 128;

/// The argument cursor and its access-style bookkeeping.
struct ArgState<'a> {
    args: &'a [Value],
    nextarg: usize,
    posarg: i64,
    hash: Option<Value>,
}

impl<'a> ArgState<'a> {
    fn nth(&self, ctx: &mut Ctx, n: usize) -> Result<Value> {
        match n.checked_sub(1).and_then(|i| self.args.get(i)) {
            Some(&v) => Ok(v),
            None => Err(ctx.arg_error("too few arguments")),
        }
    }

    fn next(&mut self, ctx: &mut Ctx) -> Result<Value> {
        match self.posarg {
            -1 => return Err(ctx.arg_error(&format!("unnumbered({}) mixed with numbered", self.nextarg))),
            -2 => return Err(ctx.arg_error(&format!("unnumbered({}) mixed with named", self.nextarg))),
            _ => {}
        }
        let n = self.nextarg;
        self.posarg = n as i64;
        self.nextarg += 1;
        self.nth(ctx, n)
    }

    fn positional(&mut self, ctx: &mut Ctx, n: i64) -> Result<Value> {
        if self.posarg > 0 {
            return Err(ctx.arg_error(&format!("numbered({n}) after unnumbered({})", self.posarg)));
        }
        if self.posarg == -2 {
            return Err(ctx.arg_error(&format!("numbered({n}) after named")));
        }
        if n < 1 {
            return Err(ctx.arg_error(&format!("invalid index - {n}$")));
        }
        self.posarg = -1;
        self.nth(ctx, n as usize)
    }

    fn named(&mut self, ctx: &mut Ctx, name: &str) -> Result<Value> {
        if self.posarg > 0 {
            return Err(ctx.arg_error(&format!("named{name} after unnumbered({})", self.posarg)));
        }
        if self.posarg == -1 {
            return Err(ctx.arg_error(&format!("named{name} after numbered")));
        }
        self.posarg = -2;
        if let Some(h) = self.hash {
            return Ok(h);
        }
        if self.args.len() != 1 {
            return Err(ctx.arg_error("one hash required"));
        }
        let h = match hash::to_hash_arg(ctx, self.args[0]) {
            Ok(h) => h,
            Err(Unwind::Raise(_)) => return Err(ctx.arg_error("one hash required")),
            Err(e) => return Err(e),
        };
        self.hash = Some(h);
        Ok(h)
    }
}

/// Reads digits at `*p` into a number; reaching the end of the format is an error.
fn get_num(ctx: &mut Ctx, f: &[u8], p: &mut usize, what: &str) -> Result<i64> {
    let mut n: i64 = 0;
    while *p < f.len() && f[*p].is_ascii_digit() {
        n = n * 10 + (f[*p] - b'0') as i64;
        if n > i32::MAX as i64 {
            return Err(ctx.arg_error(&format!("{what} too big")));
        }
        *p += 1;
    }
    if *p >= f.len() {
        return Err(ctx.arg_error("malformed format string - %*[0-9]"));
    }
    Ok(n)
}

fn int_value_arg(ctx: &mut Ctx, v: Value) -> Result<i64> {
    integer::to_i64_arg(ctx, v)
}

/// Widths and precisions (up to a C `int` each) come from Ruby code: the room a directive
/// needs is reserved fallibly, so an impossible size is a NoMemoryError, not an abort. The
/// digit buffer a precision needs besides the output is probed the same way.
fn reserve_directive(ctx: &mut Ctx, out: &mut Vec<u8>, width: i64, prec: i64) -> Result<()> {
    let (w, p) = (width.max(0) as usize, prec.max(0) as usize);
    ctx.try_reserve(out, w + p + 32)?;
    if p > 4096 {
        let mut probe: Vec<u8> = Vec::new();
        ctx.try_reserve(&mut probe, p + 32)?;
    }
    Ok(())
}

/// The Integer an integer directive formats (CRuby's `bin_retry` conversions).
fn int_arg(ctx: &mut Ctx, v: Value) -> Result<BigInt> {
    if integer::is_integer(v) {
        return Ok(bignum::to_big(v));
    }
    if float::is_float(v) {
        let i = float::to_integer(ctx, float::get(v).trunc())?;
        return Ok(bignum::to_big(i));
    }
    if string::is_string(v) {
        return match integer::parse_int(string::bytes(v), 0, true) {
            Some(n) => Ok(n),
            None => {
                let q = String::from_utf8_lossy(&string::inspect_bytes(string::bytes(v), string::encoding(v))).into_owned();
                Err(ctx.arg_error(&format!("invalid value for Integer(): {q}")))
            }
        };
    }
    let i = crate::core::convert::integer_conv_value(ctx, v)?;
    Ok(bignum::to_big(i))
}

fn float_arg(ctx: &mut Ctx, v: Value) -> Result<f64> {
    if float::is_float(v) {
        return Ok(float::get(v));
    }
    let f = crate::core::convert::float_conv_value(ctx, v)?;
    Ok(float::get(f))
}

/// Digits of a non-negative `n` in `base` (lowercase).
fn digits_of(n: &BigInt, base: u32) -> Vec<u8> {
    crate::core::bigconv::to_str_radix(n, base).into_bytes()
}

/// Two's-complement digits of negative `n` in `base` (2, 8 or 16), with CRuby's digit
/// count: the top digit is the sign digit and the top two are never both sign digits.
fn complement_digits(n: &BigInt, base: u32) -> Vec<u8> {
    let bits_per = match base {
        2 => 1,
        8 => 3,
        _ => 4,
    };
    let a = n.abs();
    let abits = a.bits() as usize;
    let mut numdigits = abits.div_ceil(bits_per).max(1);
    let top_bits = abits - (numdigits - 1) * bits_per;
    let single_bit = a.trailing_zeros() == Some(abits as u64 - 1);
    if !(top_bits == 1 && single_bit) {
        numdigits += 1;
    }
    let modulus = BigInt::from(1) << (numdigits * bits_per);
    let v = modulus + n;
    let mut s = v.to_str_radix(base).into_bytes();
    while s.len() < numdigits {
        s.insert(0, b'0');
    }
    s
}

fn sign_char(base: u32, upper: bool) -> u8 {
    match base {
        16 => {
            if upper {
                b'F'
            } else {
                b'f'
            }
        }
        8 => b'7',
        2 => b'1',
        _ => b'.',
    }
}

/// The integer directives `d i u o x X b B`.
fn format_integer(out: &mut Vec<u8>, conv: u8, n: &BigInt, mut flags: u32, mut width: i64, mut prec: i64) {
    let base = match conv {
        b'o' => 8,
        b'x' | b'X' => 16,
        b'b' | b'B' => 2,
        _ => 10,
    };
    let sign = matches!(conv, b'd' | b'i' | b'u') || flags & (FPLUS | FSPACE) != 0;
    let mut prefix: Option<&str> = if flags & FSHARP != 0 {
        match conv {
            b'o' => Some("0"),
            b'x' => Some("0x"),
            b'X' => Some("0X"),
            b'b' => Some("0b"),
            b'B' => Some("0B"),
            _ => None,
        }
    } else {
        None
    };
    let mut sc: Option<u8> = None;
    let negative = n.is_negative();
    let mut dots = false;
    let mut s: Vec<u8>;
    if sign || base == 10 {
        s = digits_of(&n.abs(), base);
        if negative {
            sc = Some(b'-');
            width -= 1;
        } else if flags & FPLUS != 0 {
            sc = Some(b'+');
            width -= 1;
        } else if flags & FSPACE != 0 {
            sc = Some(b' ');
            width -= 1;
        }
    } else if negative {
        s = complement_digits(n, base);
        dots = true;
    } else {
        s = digits_of(n, base);
    }
    let mut len = s.len() as i64;
    if dots {
        prec -= 2;
        width -= 2;
    }
    if conv == b'X' {
        s.make_ascii_uppercase();
    }
    if prefix == Some("0") {
        if dots {
            prefix = None;
        } else if len == 1 && s[0] == b'0' {
            len = 0;
            if flags & FPREC != 0 {
                prec -= 1;
            }
        } else if flags & FPREC != 0 && prec > len {
            prefix = None;
        }
    } else if len == 1 && s[0] == b'0' {
        prefix = None;
    }
    if let Some(p) = prefix {
        width -= p.len() as i64;
    }
    if flags & (FZERO | FMINUS | FPREC) == FZERO {
        prec = width;
        width = 0;
    } else {
        if prec < len {
            if prefix.is_none() && prec == 0 && len == 1 && s[0] == b'0' {
                len = 0;
            }
            prec = len;
        }
        width -= prec;
    }
    if flags & FMINUS == 0 {
        while width > 0 {
            out.push(b' ');
            width -= 1;
        }
    }
    if let Some(c) = sc {
        out.push(c);
    }
    if let Some(p) = prefix {
        out.extend_from_slice(p.as_bytes());
    }
    if dots {
        out.extend_from_slice(b"..");
    }
    if !sign && negative {
        let c = sign_char(base, conv == b'X');
        while len < prec {
            out.push(c);
            prec -= 1;
        }
    } else if flags & (FMINUS | FPREC) != FMINUS {
        while len < prec {
            out.push(b'0');
            prec -= 1;
        }
    }
    out.extend_from_slice(&s[..len as usize]);
    while width > 0 {
        out.push(b' ');
        width -= 1;
    }
    flags &= !FPREC;
    let _ = flags;
}

/// `%f` of an Integer or Rational: exact decimal expansion (CRuby's rational path).
fn format_exact_f(out: &mut Vec<u8>, num: BigInt, den: BigInt, flags: u32, width: i64, prec: i64) {
    let prec = if flags & FPREC != 0 { prec } else { 6 };
    let mut sign: i32 = if flags & FPLUS != 0 { 1 } else { 0 };
    let mut num = num;
    if num.is_negative() {
        sign = -1;
        num = -num;
    }
    let mut zero = 0i64;
    if den != BigInt::from(1) || prec > 1 {
        let p10: BigInt = Pow::pow(BigInt::from(10), prec.max(0) as u64);
        let den2: BigInt = den.div_floor(&BigInt::from(2));
        num = (num * p10 + den2).div_floor(&den);
    } else if prec >= 0 {
        zero = prec;
    }
    let t = num.to_string().into_bytes();
    let mut body = Vec::new();
    let mut prefix = 0;
    if sign != 0 || flags & FSPACE != 0 {
        body.push(if sign > 0 {
            b'+'
        } else if sign < 0 {
            b'-'
        } else {
            b' '
        });
        prefix = 1;
    }
    let len = t.len() as i64 + zero;
    if len > prec {
        body.extend_from_slice(&t[..(len - prec).min(t.len() as i64) as usize]);
        if len - prec > t.len() as i64 {
            body.extend(std::iter::repeat_n(b'0', (len - prec - t.len() as i64) as usize));
        }
    } else {
        body.push(b'0');
    }
    if prec > 0 {
        body.push(b'.');
    }
    if zero > 0 {
        body.extend(std::iter::repeat_n(b'0', zero as usize));
    } else if prec > len {
        body.extend(std::iter::repeat_n(b'0', (prec - len) as usize));
        body.extend_from_slice(&t);
    } else if prec > 0 {
        body.extend_from_slice(&t[(len - prec) as usize..]);
    }
    let done = body.len() as i64;
    if flags & FWIDTH != 0 && width > done {
        let fill = width - done;
        if flags & FMINUS != 0 {
            out.extend_from_slice(&body);
            out.extend(std::iter::repeat_n(b' ', fill as usize));
        } else if flags & FZERO != 0 {
            out.extend_from_slice(&body[..prefix]);
            out.extend(std::iter::repeat_n(b'0', fill as usize));
            out.extend_from_slice(&body[prefix..]);
        } else {
            out.extend(std::iter::repeat_n(b' ', fill as usize));
            out.extend_from_slice(&body);
        }
    } else {
        out.extend_from_slice(&body);
    }
}

/// Fixed-point layout of dtoa digits with `prec` digits after the point.
fn lay_fixed(digits: &[u8], decpt: i32, prec: i64, alt: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if decpt <= 0 {
        out.push(b'0');
    } else {
        for i in 0..decpt as usize {
            out.push(*digits.get(i).unwrap_or(&b'0'));
        }
    }
    if prec > 0 || alt {
        out.push(b'.');
    }
    for i in 0..prec.max(0) {
        let idx = decpt as i64 + i;
        out.push(if idx >= 0 { *digits.get(idx as usize).unwrap_or(&b'0') } else { b'0' });
    }
    out
}

/// Exponential layout of dtoa digits with `prec` digits after the point.
fn lay_exp(digits: &[u8], decpt: i32, prec: i64, alt: bool, echar: u8) -> Vec<u8> {
    let mut out = vec![*digits.first().unwrap_or(&b'0')];
    if prec > 0 || alt {
        out.push(b'.');
    }
    for i in 0..prec.max(0) as usize {
        out.push(*digits.get(i + 1).unwrap_or(&b'0'));
    }
    let e = if digits.first() == Some(&b'0') { 0 } else { decpt - 1 };
    out.push(echar);
    out.push(if e < 0 { b'-' } else { b'+' });
    out.extend_from_slice(format!("{:02}", e.abs()).as_bytes());
    out
}

/// The float directives `f e E g G a A` for a finite or non-finite double.
fn format_float(out: &mut Vec<u8>, conv: u8, x: f64, flags: u32, width: i64, prec: i64) {
    let alt = flags & FSHARP != 0;
    let has_prec = flags & FPREC != 0;
    if !x.is_finite() {
        let expr: &[u8] = if x.is_nan() { b"NaN" } else { b"Inf" };
        let sign = if !x.is_nan() && x < 0.0 {
            Some(b'-')
        } else if flags & FPLUS != 0 {
            Some(b'+')
        } else if flags & FSPACE != 0 {
            Some(b' ')
        } else {
            None
        };
        let need = expr.len() as i64 + sign.is_some() as i64;
        let pad = if flags & FWIDTH != 0 && width > need { width - need } else { 0 };
        if flags & FMINUS != 0 {
            out.extend(sign);
            out.extend_from_slice(expr);
            out.extend(std::iter::repeat_n(b' ', pad as usize));
        } else {
            out.extend(std::iter::repeat_n(b' ', pad as usize));
            out.extend(sign);
            out.extend_from_slice(expr);
        }
        return;
    }
    let neg = x.is_sign_negative();
    let v = x.abs();
    let mut prefix: Vec<u8> = Vec::new();
    if neg {
        prefix.push(b'-');
    } else if flags & FPLUS != 0 {
        prefix.push(b'+');
    } else if flags & FSPACE != 0 {
        prefix.push(b' ');
    }
    let body = match conv {
        b'f' => {
            let p = if has_prec { prec } else { 6 };
            let (d, e) = dtoa::dtoa(v, 3, p as i32);
            lay_fixed(&d, e, p, alt)
        }
        b'e' | b'E' => {
            let p = if has_prec { prec } else { 6 };
            let (d, e) = dtoa::dtoa(v, 2, p as i32 + 1);
            lay_exp(&d, e, p, alt, conv)
        }
        b'g' | b'G' => {
            let mut p = if has_prec { prec } else { 6 };
            if p == 0 {
                p = 1;
            }
            let (d, e) = dtoa::dtoa(v, 2, p as i32);
            let ndig = d.len() as i64;
            let expt = e as i64;
            if expt > -4 && expt <= p {
                let fp = if alt { p - expt } else { ndig - expt }.max(0);
                lay_fixed(&d, e, fp, alt)
            } else {
                let ep = if alt { p - 1 } else { ndig - 1 };
                lay_exp(&d, e, ep, alt, if conv == b'g' { b'e' } else { b'E' })
            }
        }
        _ => {
            let upper = conv == b'A';
            prefix.extend_from_slice(if upper { b"0X" } else { b"0x" });
            let (d, e) = if v == 0.0 { (b"0".to_vec(), 1) } else { dtoa::hdtoa(v, if has_prec { prec as i32 + 1 } else { -1 }, upper) };
            let total = if has_prec { prec + 1 } else { d.len() as i64 };
            let mut b = vec![d[0]];
            if total > 1 || alt {
                b.push(b'.');
            }
            for i in 1..total.max(1) as usize {
                b.push(*d.get(i).unwrap_or(&b'0'));
            }
            let ex = if v == 0.0 { 0 } else { e - 1 };
            b.push(if upper { b'P' } else { b'p' });
            b.push(if ex < 0 { b'-' } else { b'+' });
            b.extend_from_slice(ex.abs().to_string().as_bytes());
            b
        }
    };
    let size = (prefix.len() + body.len()) as i64;
    let pad = if flags & FWIDTH != 0 && width > size { (width - size) as usize } else { 0 };
    if flags & FMINUS != 0 {
        out.extend_from_slice(&prefix);
        out.extend_from_slice(&body);
        out.extend(std::iter::repeat_n(b' ', pad));
    } else if flags & FZERO != 0 {
        out.extend_from_slice(&prefix);
        out.extend(std::iter::repeat_n(b'0', pad));
        out.extend_from_slice(&body);
    } else {
        out.extend(std::iter::repeat_n(b' ', pad));
        out.extend_from_slice(&prefix);
        out.extend_from_slice(&body);
    }
}

/// Pads and truncates a `%s`/`%p` string (width and precision count characters).
fn push_string(ctx: &mut Ctx, out: &mut Vec<u8>, enc: &mut u8, s: Value, flags: u32, width: i64, prec: i64) -> Result<()> {
    let se = string::encoding(s);
    let sb = string::bytes(s).to_vec();
    match encoding::compatible(*enc, out, se, &sb) {
        Some(e) => *enc = e,
        None => return Err(string::incompatible_error(ctx, *enc, se)),
    }
    let mut len = sb.len();
    if flags & (FPREC | FWIDTH) != 0 {
        let mut slen = encoding::char_count(*enc, &sb) as i64;
        if flags & FPREC != 0 && prec < slen {
            let offs = encoding::char_offsets(*enc, &sb);
            len = offs[prec.max(0) as usize];
            slen = prec;
        }
        if flags & FWIDTH != 0 && width > slen {
            let fill = (width - slen) as usize;
            if flags & FMINUS == 0 {
                out.extend(std::iter::repeat_n(b' ', fill));
            }
            out.extend_from_slice(&sb[..len]);
            if flags & FMINUS != 0 {
                out.extend(std::iter::repeat_n(b' ', fill));
            }
            return Ok(());
        }
    }
    out.extend_from_slice(&sb[..len]);
    Ok(())
}

/// `%c`: the first character of a String (none for an empty one) or a codepoint.
fn push_char(ctx: &mut Ctx, out: &mut Vec<u8>, enc: u8, v: Value, flags: u32, width: i64) -> Result<()> {
    let bytes = match string::try_to_str(ctx, v)? {
        Some(s) => {
            let b = string::bytes(s);
            let n = if b.is_empty() { 0 } else { encoding::char_len(string::encoding(s), b, 0) };
            b[..n].to_vec()
        }
        None => {
            let i = crate::core::integer::to_integer_arg(ctx, v)?;
            let c = int_value_arg(ctx, i)?;
            if c > u32::MAX as i64 || c < i32::MIN as i64 {
                return Err(ctx.range_error(&format!("integer {c} too big to convert to 'int'")));
            }
            let code = c as u32;
            if encoding::is_utf8(enc) && code >= 0xFFFF_FFFE {
                vec![if code == 0xFFFF_FFFF { 0xFF } else { 0xFE }]
            } else if encoding::is_single_byte(enc) && enc != encoding::US_ASCII {
                if code > 0xff {
                    return Err(ctx.range_error(&format!("{code} out of char range")));
                }
                vec![code as u8]
            } else {
                match encoding::encode_codepoint(enc, code) {
                    Some(b) => b,
                    None if enc == encoding::US_ASCII || (encoding::is_unicode(enc) && code > 0x10FFFF) => {
                        return Err(ctx.range_error(&format!("{code} out of char range")));
                    }
                    None => return Err(ctx.range_error(&format!("invalid codepoint 0x{code:X} in {}", encoding::name(enc)))),
                }
            }
        }
    };
    let nchars = i64::from(!bytes.is_empty());
    let pad = if flags & FWIDTH != 0 && width > nchars { (width - nchars) as usize } else { 0 };
    if flags & FMINUS != 0 {
        out.extend_from_slice(&bytes);
        out.extend(std::iter::repeat_n(b' ', pad));
    } else {
        out.extend(std::iter::repeat_n(b' ', pad));
        out.extend_from_slice(&bytes);
    }
    Ok(())
}

/// Formats `fmt` (a String) with `args`.
pub fn sprintf(ctx: &mut Ctx, fmt: Value, args: &[Value]) -> Result<Value> {
    let f = string::bytes(fmt).to_vec();
    let mut enc = string::encoding(fmt);
    let mut out: Vec<u8> = Vec::with_capacity(f.len() + 16);
    let mut st = ArgState { args, nextarg: 1, posarg: 0, hash: None };
    let mut p = 0usize;
    while p < f.len() {
        let start = p;
        while p < f.len() && f[p] != b'%' {
            p += 1;
        }
        out.extend_from_slice(&f[start..p]);
        if p >= f.len() {
            break;
        }
        p += 1;
        let start_of_directive = p;
        let mut flags = 0u32;
        let mut width: i64 = -1;
        let mut prec: i64 = -1;
        let mut nextvalue: Option<Value> = None;
        let mut named: Option<String> = None;
        let mut brace = false;
        macro_rules! check_for_width {
            () => {
                if flags & FWIDTH != 0 {
                    return Err(ctx.arg_error("width given twice"));
                }
                if flags & FPREC0 != 0 {
                    return Err(ctx.arg_error("width after precision"));
                }
            };
        }
        macro_rules! check_for_flags {
            () => {
                if flags & FWIDTH != 0 {
                    return Err(ctx.arg_error("flag after width"));
                }
                if flags & FPREC0 != 0 {
                    return Err(ctx.arg_error("flag after precision"));
                }
            };
        }
        let conv = loop {
            let Some(&c) = f.get(p) else {
                // Ruby 3.4: a lone `%` at the end is incomplete; a directive cut short
                // after flags, width or an argument number is malformed.
                if p == start_of_directive {
                    return Err(ctx.arg_error("incomplete format specifier; use %% (double %) instead"));
                }
                return Err(ctx.arg_error("malformed format string"));
            };
            match c {
                b' ' => {
                    check_for_flags!();
                    flags |= FSPACE;
                    p += 1;
                }
                b'#' => {
                    check_for_flags!();
                    flags |= FSHARP;
                    p += 1;
                }
                b'+' => {
                    check_for_flags!();
                    flags |= FPLUS;
                    p += 1;
                }
                b'-' => {
                    check_for_flags!();
                    flags |= FMINUS;
                    p += 1;
                }
                b'0' => {
                    check_for_flags!();
                    flags |= FZERO;
                    p += 1;
                }
                b'1'..=b'9' => {
                    let n = get_num(ctx, &f, &mut p, "width")?;
                    if f.get(p) == Some(&b'$') {
                        if nextvalue.is_some() {
                            return Err(ctx.arg_error(&format!("value given twice - {n}$")));
                        }
                        nextvalue = Some(st.positional(ctx, n)?);
                        p += 1;
                        continue;
                    }
                    check_for_width!();
                    width = n;
                    flags |= FWIDTH;
                }
                b'<' | b'{' => {
                    let term = if c == b'<' { b'>' } else { b'}' };
                    let s = p;
                    while p < f.len() && f[p] != term {
                        p += 1;
                    }
                    if p >= f.len() {
                        return Err(ctx.arg_error("malformed name - unmatched parenthesis"));
                    }
                    let whole = String::from_utf8_lossy(&f[s..=p]).into_owned();
                    if let Some(prev) = &named {
                        return Err(ctx.arg_error(&format!("named{whole} after <{prev}>")));
                    }
                    let h = st.named(ctx, &whole)?;
                    let name = String::from_utf8_lossy(&f[s + 1..p]).into_owned();
                    let key = Value::symbol(ctx.intern_bytes(&f[s + 1..p]));
                    let v = match hash::lookup(ctx, h, key)? {
                        Some(v) => v,
                        None => {
                            let d = hash::default_for(ctx, h, key)?;
                            if d.is_nil() {
                                return Err(ctx.key_error(&format!("key{whole} not found"), h, key));
                            }
                            d
                        }
                    };
                    named = Some(name);
                    nextvalue = Some(v);
                    if term == b'}' {
                        brace = true;
                        p += 1;
                        break b's';
                    }
                    p += 1;
                }
                b'*' => {
                    check_for_width!();
                    flags |= FWIDTH;
                    let t = p;
                    p += 1;
                    let n = get_num(ctx, &f, &mut p, "width")?;
                    let v = if f.get(p) == Some(&b'$') {
                        st.positional(ctx, n)?
                    } else {
                        p = t;
                        st.next(ctx)?
                    };
                    width = integer::to_int_arg(ctx, v)? as i64;
                    if width < 0 {
                        flags |= FMINUS;
                        width = -width;
                    }
                    p += 1;
                }
                b'.' => {
                    if flags & FPREC0 != 0 {
                        return Err(ctx.arg_error("precision given twice"));
                    }
                    flags |= FPREC | FPREC0;
                    p += 1;
                    if f.get(p) == Some(&b'*') {
                        let t = p;
                        p += 1;
                        let n = get_num(ctx, &f, &mut p, "precision")?;
                        let v = if f.get(p) == Some(&b'$') {
                            st.positional(ctx, n)?
                        } else {
                            p = t;
                            st.next(ctx)?
                        };
                        prec = integer::to_int_arg(ctx, v)? as i64;
                        if prec < 0 {
                            flags &= !FPREC;
                        }
                        p += 1;
                        continue;
                    }
                    prec = get_num(ctx, &f, &mut p, "precision")?;
                }
                b'%' => {
                    if flags != 0 {
                        return Err(ctx.arg_error("invalid format character - %"));
                    }
                    out.push(b'%');
                    p += 1;
                    break 0;
                }
                b'c' | b's' | b'p' | b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'b' | b'B' | b'f' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                    p += 1;
                    break c;
                }
                _ => {
                    if (0x20..0x7f).contains(&c) {
                        return Err(ctx.arg_error(&format!("malformed format string - %{}", c as char)));
                    }
                    return Err(ctx.arg_error("malformed format string"));
                }
            }
        };
        if conv == 0 {
            continue;
        }
        let _ = brace;
        let v = match nextvalue {
            Some(v) => v,
            None => st.next(ctx)?,
        };
        reserve_directive(ctx, &mut out, width, prec)?;
        match conv {
            b'c' => push_char(ctx, &mut out, enc, v, flags, width)?,
            b's' | b'p' => {
                let s = if conv == b'p' { object::inspect(ctx, v)? } else { string::to_s(ctx, v)? };
                push_string(ctx, &mut out, &mut enc, s, flags, width, prec)?;
            }
            b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'b' | b'B' => {
                let n = int_arg(ctx, v)?;
                format_integer(&mut out, conv, &n, flags, width, prec);
            }
            b'f' if integer::is_integer(v) || rational::is_rational(v) => {
                let (num, den) = if rational::is_rational(v) { rational::parts(v) } else { (bignum::to_big(v), BigInt::from(1)) };
                format_exact_f(&mut out, num, den, flags, width, prec);
            }
            _ => {
                let x = float_arg(ctx, v)?;
                format_float(&mut out, conv, x, flags, width, prec);
            }
        }
    }
    // A lone Hash argument (keywords) that no directive used is not "too many" (Ruby 3.4).
    let lone_hash = args.len() == 1 && crate::core::hash::is_hash(args[0]);
    let unused = st.posarg >= 0 && st.nextarg <= args.len() && !lone_hash;
    if unused && crate::core::globals::raw(ctx, crate::symbol::sym::DOLLAR_DEBUG).truthy() {
        return Err(ctx.arg_error("too many arguments for format string"));
    }
    if unused && crate::core::globals::verbose_level(ctx) >= 2 {
        let (path, line) = crate::core::kernel::caller_location(ctx);
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: too many arguments for format string\n"));
    }
    let _ = ToPrimitive::to_i64(&BigInt::zero());
    Ok(string::new_with_enc(ctx, out, enc))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fl(conv: u8, x: f64, flags: u32, width: i64, prec: i64) -> String {
        let mut out = Vec::new();
        format_float(&mut out, conv, x, flags, width, prec);
        String::from_utf8(out).unwrap()
    }

    fn int(conv: u8, n: i64, flags: u32, width: i64, prec: i64) -> String {
        let mut out = Vec::new();
        format_integer(&mut out, conv, &BigInt::from(n), flags, width, prec);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats() {
        assert_eq!(fl(b'f', 3.14159, 0, -1, -1), "3.141590");
        assert_eq!(fl(b'e', 12345.678, 0, -1, -1), "1.234568e+04");
        assert_eq!(fl(b'g', 0.0001234, 0, -1, -1), "0.0001234");
        assert_eq!(fl(b'g', 123456789.0, 0, -1, -1), "1.23457e+08");
        assert_eq!(fl(b'a', 1.0, 0, -1, -1), "0x1p+0");
        assert_eq!(fl(b'f', 0.35, FPREC, -1, 1), "0.4");
        assert_eq!(fl(b'f', -0.0, 0, -1, -1), "-0.000000");
    }

    #[test]
    fn integers() {
        assert_eq!(int(b'x', -255, 0, -1, -1), "..f01");
        assert_eq!(int(b'x', -256, 0, -1, -1), "..f00");
        assert_eq!(int(b'b', -5, 0, -1, -1), "..1011");
        assert_eq!(int(b'o', -8, 0, -1, -1), "..70");
        assert_eq!(int(b'd', 42, FZERO | FWIDTH, 5, -1), "00042");
        assert_eq!(int(b'x', -1, FZERO | FWIDTH, 8, -1), "..ffffff");
    }
}
