//! Literals: a tag byte, then the value. Only what the compiler puts in `literals`:
//! nil/true/false, Integers, Floats, Symbols, frozen Strings (with encoding and chilled
//! state), Regexps, Ranges of Integers, Rationals, the Encoding of `__ENCODING__` and
//! named classes (`rescue` without a class names StandardError). Encodings and classes
//! are written by name, so the file holds no VM-specific index.

use num_bigint::BigInt;

use super::read::{Reader, R};
use super::write::Writer;
use crate::core::encoding::{self, EncodingObj};
use crate::core::regexp::{self, RegexpObj};
use crate::core::{bignum, float, module, object as obj, range, rational, string};
use crate::object::{basic, data_ref, FL_CHILLED, FL_CHILLED_SYMBOL};
use crate::value::Value;
use crate::Result;

const NIL: u8 = 0;
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const FIXNUM: u8 = 3;
const BIGNUM: u8 = 4;
const FLOAT: u8 = 5;
const SYMBOL: u8 = 6;
const STRING: u8 = 7;
const REGEXP: u8 = 8;
const RANGE: u8 = 9;
const RATIONAL: u8 = 10;
const CLASS: u8 = 11;
const ENCODING: u8 = 12;

/// String flags.
const STR_CHILLED: u64 = 1;
const STR_CHILLED_SYMBOL: u64 = 2;

pub(super) fn write(w: &mut Writer<'_>, v: Value) -> Result<()> {
    match v {
        Value::NIL => w.byte(NIL),
        Value::TRUE => w.byte(TRUE),
        Value::FALSE => w.byte(FALSE),
        _ if v.is_fixnum() => {
            w.byte(FIXNUM);
            w.sleb(v.fixnum_unchecked());
        }
        _ if bignum::is_bignum(v) => {
            w.byte(BIGNUM);
            w.bytes(&bignum::get(v).to_signed_bytes_le());
        }
        _ if float::is_float(v) => {
            w.byte(FLOAT);
            w.out.extend_from_slice(&float::get(v).to_bits().to_le_bytes());
        }
        _ if v.is_symbol() => {
            w.byte(SYMBOL);
            w.sym(v.as_symbol().unwrap_or(crate::symbol::SymId(0)));
        }
        _ if string::is_string(v) => {
            w.byte(STRING);
            w.bytes(encoding::name(string::encoding(v)).as_bytes());
            let f = basic(v).flags;
            w.uleb(if f & FL_CHILLED != 0 { STR_CHILLED } else { 0 } | if f & FL_CHILLED_SYMBOL != 0 { STR_CHILLED_SYMBOL } else { 0 });
            w.bytes(string::bytes(v));
        }
        _ if data_ref::<RegexpObj>(v).is_some() => {
            let (source, opts, enc) = match data_ref::<RegexpObj>(v) {
                Some(r) => (r.source.clone(), r.opts, r.enc),
                None => return Ok(()),
            };
            w.byte(REGEXP);
            w.bytes(&source);
            w.uleb(opts as u64);
            w.bytes(encoding::name(enc).as_bytes());
        }
        _ if range::is_range(v) && is_integer_or_nil(range::begin(v)) && is_integer_or_nil(range::end(v)) => {
            w.byte(RANGE);
            w.flag(range::excl(v));
            write(w, range::begin(v))?;
            write(w, range::end(v))?;
        }
        _ if rational::is_rational(v) => {
            let (n, d) = rational::parts(v);
            w.byte(RATIONAL);
            w.bytes(&n.to_signed_bytes_le());
            w.bytes(&d.to_signed_bytes_le());
        }
        _ if module::is_class_or_module(v) && module::body(v).name.is_some() => {
            w.byte(CLASS);
            let path = crate::core::module_methods::class_path(w.ctx, v);
            w.bytes(path.as_bytes());
        }
        _ if data_ref::<EncodingObj>(v).is_some() => {
            let index = data_ref::<EncodingObj>(v).map_or(0, |e| e.index);
            w.byte(ENCODING);
            w.bytes(encoding::name(index).as_bytes());
        }
        _ => {
            let class = crate::core::module_methods::class_path(w.ctx, crate::interp::class_of(w.ctx, v));
            return Err(w.ctx.type_error(&format!("bytecode: can't write a literal of class {class}")));
        }
    }
    Ok(())
}

fn is_integer_or_nil(v: Value) -> bool {
    v.is_nil() || v.is_fixnum() || bignum::is_bignum(v)
}

fn encoding_named(r: &mut Reader<'_>) -> R<u8> {
    let name = r.str()?;
    encoding::find(&name).ok_or_else(|| format!("unknown encoding {name}"))
}

fn big(r: &mut Reader<'_>) -> R<BigInt> {
    Ok(BigInt::from_signed_bytes_le(r.bytes()?))
}

/// Reads a literal; `integer_only` for the ends of a Range.
pub(super) fn read(r: &mut Reader<'_>, integer_only: bool) -> R<Value> {
    let tag = r.byte()?;
    if integer_only && !matches!(tag, NIL | FIXNUM | BIGNUM) {
        return Err("a Range literal of other than Integers".into());
    }
    Ok(match tag {
        NIL => Value::NIL,
        TRUE => Value::TRUE,
        FALSE => Value::FALSE,
        FIXNUM => {
            let i = r.i64()?;
            Value::try_fixnum(i).ok_or("Integer literal out of Fixnum range")?
        }
        BIGNUM => {
            let n = big(r)?;
            bignum::normalize(r.ctx, n)
        }
        FLOAT => {
            let f = f64::from_bits(u64::from_le_bytes(r.fixed::<8>()?));
            float::new(r.ctx, f)
        }
        SYMBOL => Value::symbol(r.sym()?),
        STRING => {
            let enc = encoding_named(r)?;
            let flags = r.uleb()?;
            let bytes = r.bytes()?.to_vec();
            let s = string::new_with_enc(r.ctx, bytes, enc);
            if flags & STR_CHILLED != 0 {
                string::chill(s, flags & STR_CHILLED_SYMBOL != 0);
            }
            obj::freeze(s)
        }
        REGEXP => {
            let source = r.bytes()?.to_vec();
            let opts = r.u32()?;
            let enc = encoding_named(r)?;
            let klass = r.ctx.c().regexp;
            let v = regexp::new_regexp(r.ctx, klass, &source, opts, enc).map_err(|_| "invalid Regexp literal".to_string())?;
            if let Some(re) = data_ref::<RegexpObj>(v) {
                re.literal = true;
            }
            obj::freeze(v)
        }
        RANGE => {
            let excl = r.byte()? != 0;
            let b = read(r, true)?;
            let keep = r.ctx.protect(b);
            let e = read(r, true);
            r.ctx.unprotect(keep);
            let e = e?;
            let v = range::new_checked(r.ctx, b, e, excl).map_err(|_| "invalid Range literal".to_string())?;
            obj::freeze(v)
        }
        RATIONAL => {
            let n = big(r)?;
            let d = big(r)?;
            if d == BigInt::from(0) {
                return Err("Rational literal with a zero denominator".into());
            }
            rational::reduce(r.ctx, n, d).map_err(|_| "invalid Rational literal".to_string())?
        }
        CLASS => {
            let path = r.str()?;
            let mut v = r.ctx.c().object;
            for seg in path.split("::") {
                let id = r.ctx.intern(seg);
                v = match module::body(v).const_get(id) {
                    Some(e) if module::is_class_or_module(e.value) => e.value,
                    _ => return Err(format!("no class {path}")),
                };
            }
            v
        }
        ENCODING => {
            let enc = encoding_named(r)?;
            let v = encoding::encoding_object(r.ctx, enc);
            if v.is_nil() {
                return Err("unknown encoding".into());
            }
            v
        }
        _ => return Err(format!("unknown literal tag {tag}")),
    })
}
