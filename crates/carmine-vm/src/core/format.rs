//! `format`/`sprintf`/`String#%`: CRuby's format directives.

use num_bigint::{BigInt, Sign};
use num_traits::{Signed, Zero};

use crate::core::{bignum, float, hash, integer, numeric, object, string};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    zero: bool,
    sharp: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

fn pad(spec: &Spec, body: String, sign: &str, numeric: bool) -> String {
    let len = body.chars().count() + sign.len();
    let width = spec.width.unwrap_or(0);
    if len >= width {
        return format!("{sign}{body}");
    }
    let fill = width - len;
    if spec.minus {
        format!("{sign}{body}{}", " ".repeat(fill))
    } else if spec.zero && numeric {
        format!("{sign}{}{body}", "0".repeat(fill))
    } else {
        format!("{}{sign}{body}", " ".repeat(fill))
    }
}

fn int_arg(ctx: &mut Ctx, v: Value) -> Result<BigInt> {
    if integer::is_integer(v) {
        return Ok(bignum::to_big(v));
    }
    if float::is_float(v) {
        let f = float::get(v);
        let i = float::to_integer(ctx, f.floor())?;
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
    if v.is_nil() {
        return Err(ctx.type_error("can't convert nil into Integer"));
    }
    let i = integer::to_integer_arg(ctx, v)?;
    Ok(bignum::to_big(i))
}

/// Two's-complement digits of a negative number in base 2/8/16, CRuby's "..f01" form.
fn negative_radix(n: &BigInt, base: u32) -> String {
    let bits_per = match base {
        2 => 1,
        8 => 3,
        _ => 4,
    };
    let nbits = n.bits() as usize + 1;
    let digits = nbits.div_ceil(bits_per) + 1;
    let modulus = BigInt::from(1) << (digits * bits_per);
    let v = modulus + n;
    let s = v.to_str_radix(base);
    let top = match base {
        2 => '1',
        8 => '7',
        _ => 'f',
    };
    let trimmed = s.trim_start_matches(top);
    format!("..{top}{trimmed}")
}

fn format_float(spec: &Spec, f: f64, conv: char) -> (String, String) {
    let sign = if f.is_sign_negative() && !(f == 0.0 && !f.is_sign_negative()) && !f.is_nan() {
        "-"
    } else if spec.plus {
        "+"
    } else if spec.space {
        " "
    } else {
        ""
    };
    let a = f.abs();
    if a.is_infinite() {
        return ("Inf".into(), sign.into());
    }
    if f.is_nan() {
        return ("NaN".into(), sign.into());
    }
    let prec = spec.prec.unwrap_or(6);
    let body = match conv {
        'f' => format!("{a:.prec$}"),
        'e' | 'E' => {
            let s = format!("{a:.prec$e}");
            let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
            let e: i32 = e.parse().unwrap_or(0);
            let r = format!("{}e{}{:02}", m, if e < 0 { '-' } else { '+' }, e.abs());
            if conv == 'E' {
                r.to_uppercase()
            } else {
                r
            }
        }
        'g' | 'G' => {
            let p = if prec == 0 { 1 } else { prec };
            let exp = if a == 0.0 { 0 } else { a.log10().floor() as i32 };
            let r = if exp < -4 || exp >= p as i32 {
                let s = format!("{:.*e}", p - 1, a);
                let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                let e: i32 = e.parse().unwrap_or(0);
                let m = if spec.sharp || !m.contains('.') { m.to_string() } else { m.trim_end_matches('0').trim_end_matches('.').to_string() };
                format!("{}e{}{:02}", m, if e < 0 { '-' } else { '+' }, e.abs())
            } else {
                let decimals = (p as i32 - 1 - exp).max(0) as usize;
                let s = format!("{a:.decimals$}");
                if spec.sharp || !s.contains('.') {
                    s
                } else {
                    s.trim_end_matches('0').trim_end_matches('.').to_string()
                }
            };
            if conv == 'G' {
                r.to_uppercase()
            } else {
                r
            }
        }
        'a' | 'A' => {
            let r = hex_float(a, spec.prec);
            if conv == 'A' {
                r.to_uppercase().replace("0X", "0X")
            } else {
                r
            }
        }
        _ => format!("{a}"),
    };
    (body, sign.into())
}

fn hex_float(a: f64, prec: Option<usize>) -> String {
    if a == 0.0 {
        return "0x0p+0".into();
    }
    let bits = a.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = bits & 0xf_ffff_ffff_ffff;
    let (lead, e) = if exp == 0 { (0, -1022) } else { (1, exp - 1023) };
    let mut frac = format!("{mant:013x}");
    match prec {
        Some(p) => frac.truncate(p),
        None => frac = frac.trim_end_matches('0').to_string(),
    }
    if frac.is_empty() {
        format!("0x{lead}p{}{}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        format!("0x{lead}.{frac}p{}{}", if e < 0 { '-' } else { '+' }, e.abs())
    }
}

/// Formats `fmt` with `args`.
pub fn sprintf(ctx: &mut Ctx, fmt: Value, args: &[Value]) -> Result<Value> {
    let f = string::bytes(fmt).to_vec();
    let enc = string::encoding(fmt);
    let mut out: Vec<u8> = Vec::with_capacity(f.len() + 16);
    let mut argi = 0usize;
    let mut used_positional = false;
    let mut used_named = false;
    let hash_arg = |ctx: &mut Ctx| -> Result<Value> {
        match args.first() {
            Some(&h) if args.len() == 1 && hash::is_hash(h) => Ok(h),
            _ => Err(ctx.arg_error("one hash required")),
        }
    };
    let mut i = 0;
    while i < f.len() {
        let c = f[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        i += 1;
        if i >= f.len() {
            return Err(ctx.arg_error("incomplete format specifier; use %% (double %) instead"));
        }
        if f[i] == b'%' {
            out.push(b'%');
            i += 1;
            continue;
        }
        let mut spec = Spec::default();
        let mut value: Option<Value> = None;
        // flags, width, precision, names
        loop {
            if i >= f.len() {
                return Err(ctx.arg_error("malformed format string - %"));
            }
            match f[i] {
                b'-' => spec.minus = true,
                b'+' => spec.plus = true,
                b' ' => spec.space = true,
                b'0' => spec.zero = true,
                b'#' => spec.sharp = true,
                b'<' | b'{' => {
                    let close = if f[i] == b'<' { b'>' } else { b'}' };
                    let end = match f[i + 1..].iter().position(|&b| b == close) {
                        Some(p) => i + 1 + p,
                        None => return Err(ctx.arg_error("malformed name - unmatched parenthesis")),
                    };
                    let name = ctx.intern_bytes(&f[i + 1..end]);
                    let h = hash_arg(ctx)?;
                    used_named = true;
                    let key = Value::symbol(name);
                    let v = match hash::lookup(ctx, h, key)? {
                        Some(v) => v,
                        None => {
                            let d = hash::default_for(ctx, h, key)?;
                            if d.is_nil() && !crate::object::basic(h).has(crate::core::hash::FL_DEFAULT_PROC) {
                                let n = String::from_utf8_lossy(&f[i + 1..end]).into_owned();
                                return Err(ctx.key_error(&format!("key<{n}> not found"), h, key));
                            }
                            d
                        }
                    };
                    if close == b'}' {
                        let s = string::to_s(ctx, v)?;
                        let body = string::to_rust_string_lossy(s);
                        out.extend_from_slice(pad(&spec, body, "", false).as_bytes());
                        i = end + 1;
                        value = Some(Value::UNDEF);
                        break;
                    }
                    value = Some(v);
                    i = end;
                }
                b'*' => {
                    let w = args.get(argi).copied().ok_or_else(|| ctx.arg_error("too few arguments"))?;
                    argi += 1;
                    let w = integer::to_i64_arg(ctx, w)?;
                    if w < 0 {
                        spec.minus = true;
                    }
                    spec.width = Some(w.unsigned_abs() as usize);
                }
                b'1'..=b'9' => {
                    let s = i;
                    while i < f.len() && f[i].is_ascii_digit() {
                        i += 1;
                    }
                    let n: usize = std::str::from_utf8(&f[s..i]).ok().and_then(|t| t.parse().ok()).unwrap_or(0);
                    if i < f.len() && f[i] == b'$' {
                        if used_named {
                            return Err(ctx.arg_error("numbered after named"));
                        }
                        used_positional = true;
                        value = Some(args.get(n - 1).copied().ok_or_else(|| ctx.arg_error("too few arguments"))?);
                    } else {
                        spec.width = Some(n);
                        continue;
                    }
                }
                b'.' => {
                    i += 1;
                    if i < f.len() && f[i] == b'*' {
                        let p = args.get(argi).copied().ok_or_else(|| ctx.arg_error("too few arguments"))?;
                        argi += 1;
                        spec.prec = Some(integer::to_i64_arg(ctx, p)?.max(0) as usize);
                        i += 1;
                    } else {
                        let s = i;
                        while i < f.len() && f[i].is_ascii_digit() {
                            i += 1;
                        }
                        spec.prec = Some(std::str::from_utf8(&f[s..i]).ok().and_then(|t| t.parse().ok()).unwrap_or(0));
                    }
                    continue;
                }
                _ => break,
            }
            i += 1;
        }
        if value == Some(Value::UNDEF) {
            continue;
        }
        if i >= f.len() {
            return Err(ctx.arg_error("malformed format string - %"));
        }
        let conv = f[i] as char;
        i += 1;
        let mut next_arg = |ctx: &mut Ctx| -> Result<Value> {
            if let Some(v) = value {
                return Ok(v);
            }
            if used_positional {
                return Err(ctx.arg_error("unnumbered(1) mixed with numbered"));
            }
            let v = args.get(argi).copied().ok_or_else(|| ctx.arg_error("too few arguments"))?;
            argi += 1;
            Ok(v)
        };
        match conv {
            'd' | 'i' | 'u' => {
                let v = next_arg(ctx)?;
                let n = int_arg(ctx, v)?;
                let sign = if n.is_negative() { "-" } else if spec.plus { "+" } else if spec.space { " " } else { "" };
                let mut body = n.abs().to_string();
                if let Some(p) = spec.prec {
                    if body.len() < p {
                        body = format!("{}{}", "0".repeat(p - body.len()), body);
                    }
                    spec.zero = false;
                }
                out.extend_from_slice(pad(&spec, body, sign, true).as_bytes());
            }
            'x' | 'X' | 'o' | 'b' | 'B' => {
                let v = next_arg(ctx)?;
                let n = int_arg(ctx, v)?;
                let base = match conv {
                    'x' | 'X' => 16,
                    'o' => 8,
                    _ => 2,
                };
                let (mut body, sign) = if n.is_negative() && !spec.plus && !spec.space {
                    (negative_radix(&n, base), String::new())
                } else {
                    let sign = if n.is_negative() { "-" } else if spec.plus { "+" } else if spec.space { " " } else { "" };
                    (n.abs().to_str_radix(base), sign.to_string())
                };
                if let Some(p) = spec.prec {
                    if body.len() < p {
                        let fillc = if body.starts_with("..") { body.chars().nth(2).unwrap_or('0') } else { '0' };
                        body = format!("{}{}", fillc.to_string().repeat(p - body.len()), body);
                    }
                }
                let prefix = if spec.sharp && !n.is_zero() {
                    match conv {
                        'x' => "0x",
                        'X' => "0X",
                        'o' => "0",
                        'b' => "0b",
                        _ => "0B",
                    }
                } else {
                    ""
                };
                if conv == 'X' {
                    body = body.to_uppercase();
                }
                let full_sign = format!("{sign}{prefix}");
                out.extend_from_slice(pad(&spec, body, &full_sign, true).as_bytes());
            }
            'f' | 'e' | 'E' | 'g' | 'G' | 'a' | 'A' => {
                let v = next_arg(ctx)?;
                let x = if string::is_string(v) {
                    match float::parse_float(string::bytes(v), true) {
                        Some(x) => x,
                        None => {
                            let q = String::from_utf8_lossy(&string::inspect_bytes(string::bytes(v), string::encoding(v))).into_owned();
                            return Err(ctx.arg_error(&format!("invalid value for Float(): {q}")));
                        }
                    }
                } else if v.is_nil() {
                    return Err(ctx.type_error("can't convert nil into Float"));
                } else {
                    numeric::to_f64(ctx, v)?
                };
                let (body, sign) = format_float(&spec, x, conv);
                let numeric = x.is_finite();
                out.extend_from_slice(pad(&spec, body, &sign, numeric).as_bytes());
            }
            's' | 'p' => {
                let v = next_arg(ctx)?;
                let s = if conv == 's' { string::to_s(ctx, v)? } else { object::inspect(ctx, v)? };
                let mut body = string::to_rust_string_lossy(s);
                if let Some(p) = spec.prec {
                    body = body.chars().take(p).collect();
                }
                out.extend_from_slice(pad(&spec, body, "", false).as_bytes());
            }
            'c' => {
                let v = next_arg(ctx)?;
                let body = if string::is_string(v) {
                    string::to_rust_string_lossy(v).chars().next().map(String::from).unwrap_or_default()
                } else {
                    let n = integer::to_i64_arg(ctx, v)?;
                    match char::from_u32(n as u32) {
                        Some(ch) => ch.to_string(),
                        None => return Err(ctx.range_error(&format!("{n} out of char range"))),
                    }
                };
                out.extend_from_slice(pad(&spec, body, "", false).as_bytes());
            }
            '\n' | '\0' => {
                out.push(b'%');
                out.push(conv as u8);
            }
            _ => {
                return Err(ctx.arg_error(&format!("malformed format string - %{conv}")));
            }
        }
    }
    if argi < args.len() && !used_positional && !used_named && crate::core::globals::verbose_level(ctx) >= 2 {
        let _ = sym::DOLLAR_DEBUG;
    }
    let _ = Sign::Plus;
    Ok(string::new_with_enc(ctx, out, enc))
}
