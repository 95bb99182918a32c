//! Symbol: interned names (see `crate::symbol` for the table).

use crate::core::{array, encoding, string};
use crate::interp::Args;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// A method/constant name argument: a Symbol or a String (`to_str`).
pub fn to_sym_id(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    if let Some(s) = v.as_symbol() {
        return Ok(s);
    }
    if string::is_string(v) {
        return Ok(ctx.intern_bytes(string::bytes(v)));
    }
    if v.is_heap() && ctx.respond_to(v, sym::TO_STR, true) {
        let s = string::to_str_arg(ctx, v)?;
        return Ok(ctx.intern_bytes(string::bytes(s)));
    }
    let s = crate::core::object::inspect_string(ctx, v)?;
    Err(ctx.type_error(&format!("{s} is not a symbol nor a string")))
}

/// The symbol's name as a new String.
pub fn to_string(ctx: &mut Ctx, v: Value) -> Value {
    let id = v.as_symbol().unwrap_or(sym::EMPTY);
    let name = ctx.sym_name(id);
    let ascii = name.is_ascii();
    let s = string::new_with_enc_from_slice(ctx, &name, if ascii { encoding::US_ASCII } else { encoding::UTF_8 });
    if ascii {
        string::set_7bit(s);
    }
    s
}

fn is_ident_start(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphabetic() || c >= 0x80
}

fn is_ident_char(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80
}

/// Whether `:name` can be written without quotes.
pub fn is_simple_symbol(name: &[u8]) -> bool {
    const OPS: &[&[u8]] = &[b"+", b"-", b"*", b"/", b"%", b"**", b"==", b"===", b"!=", b"<", b"<=", b">", b">=", b"<=>", b"<<", b">>", b"&", b"|", b"^", b"~", b"!", b"+@", b"-@", b"[]", b"[]=", b"=~", b"!~", b"`"];
    if OPS.contains(&name) {
        return true;
    }
    let body = if let Some(r) = name.strip_prefix(b"@@") {
        r
    } else if let Some(r) = name.strip_prefix(b"@") {
        r
    } else if let Some(r) = name.strip_prefix(b"$") {
        if r.len() == 1 && b"~*$?!@/\\;,.=:<>\"&`'+0".contains(&r[0]) {
            return true;
        }
        if !r.is_empty() && r.iter().all(u8::is_ascii_digit) {
            return true;
        }
        if r.len() == 2 && r[0] == b'-' && is_ident_char(r[1]) && r[1] < 0x80 {
            return true;
        }
        r
    } else {
        let n = name.len();
        if n > 1 && matches!(name[n - 1], b'?' | b'!' | b'=') {
            let b = &name[..n - 1];
            return !b.is_empty() && is_ident_start(b[0]) && b.iter().all(|&c| is_ident_char(c)) && std::str::from_utf8(name).is_ok();
        }
        name
    };
    !body.is_empty() && is_ident_start(body[0]) && body.iter().all(|&c| is_ident_char(c)) && std::str::from_utf8(name).is_ok() && !(name.starts_with(b"@") && body[0].is_ascii_digit())
}

pub fn inspect_name(name: &[u8]) -> Vec<u8> {
    let mut out = vec![b':'];
    if is_simple_symbol(name) {
        out.extend_from_slice(name);
    } else {
        // An ASCII-only symbol is US-ASCII, whose inspect shows "\x00", not "\u0000".
        let enc = if name.is_ascii() { encoding::US_ASCII } else { encoding::UTF_8 };
        out.extend(string::inspect_bytes(name, enc));
    }
    out
}

/// `Symbol#to_s`: a new chilled String (Ruby 3.4 warns when it is mutated).
fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = to_string(ctx, recv);
    string::chill(s, true);
    Ok(s)
}

/// `Symbol#name`: the same frozen String for every call (interned like `-str`).
fn m_name(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let s = to_string(ctx, recv);
    crate::core::string_methods::fstring(ctx, s)
}

fn m_to_sym(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(recv)
}

fn m_to_proc(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let id = recv.as_symbol().unwrap_or(sym::EMPTY);
    Ok(crate::core::proc::symbol_proc(ctx, id))
}

fn m_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let name = ctx.sym_name(recv.as_symbol().unwrap_or(sym::EMPTY));
    let out = inspect_name(&name);
    let enc = if out.is_ascii() { encoding::US_ASCII } else { encoding::UTF_8 };
    Ok(string::new_with_enc(ctx, out, enc))
}

fn m_eq(_ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(recv == args.pos[0]))
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let Some(o) = args.pos[0].as_symbol() else { return Ok(Value::NIL) };
    let a = ctx.sym_name(recv.as_symbol().unwrap_or(sym::EMPTY));
    let b = ctx.sym_name(o);
    Ok(Value::fixnum(a.cmp(&b) as i64))
}

fn delegate(ctx: &mut Ctx, recv: Value, args: &Args, name: &str, to_sym: bool) -> Result<Value> {
    let s = to_string(ctx, recv);
    let mid = ctx.intern(name);
    let r = ctx.call_kw(s, mid, args.pos, args.kw, args.block)?;
    if to_sym && string::is_string(r) {
        return Ok(string::intern(ctx, r));
    }
    Ok(r)
}

fn m_length(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let name = ctx.sym_name(recv.as_symbol().unwrap_or(sym::EMPTY));
    Ok(Value::fixnum(encoding::char_count(encoding::UTF_8, &name) as i64))
}

fn m_upcase(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "upcase", true)
}
fn m_downcase(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "downcase", true)
}
fn m_capitalize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "capitalize", true)
}
fn m_swapcase(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "swapcase", true)
}
fn m_succ(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "succ", true)
}
fn m_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "[]", false)
}
fn m_start_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "start_with?", false)
}
fn m_end_with(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "end_with?", false)
}
fn m_casecmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !args.pos[0].is_symbol() {
        return Ok(Value::NIL);
    }
    let other = to_string(ctx, args.pos[0]);
    let s = to_string(ctx, recv);
    ctx.call_str(s, "casecmp", &[other])
}

fn m_casecmp_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if !args.pos[0].is_symbol() {
        return Ok(Value::NIL);
    }
    let other = to_string(ctx, args.pos[0]);
    let s = to_string(ctx, recv);
    ctx.call_str(s, "casecmp?", &[other])
}

fn m_match(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "=~", false)
}
fn m_match_m(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "match", false)
}
fn m_match_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    delegate(ctx, recv, args, "match?", false)
}

fn m_empty(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(ctx.sym_name(recv.as_symbol().unwrap_or(sym::EMPTY)).is_empty()))
}

fn m_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let name = ctx.sym_name(recv.as_symbol().unwrap_or(sym::EMPTY));
    let e = if name.is_ascii() { encoding::US_ASCII } else { encoding::UTF_8 };
    Ok(encoding::encoding_object(ctx, e))
}

fn s_all_symbols(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let n = ctx.vm().symbols.len();
    let v: Vec<Value> = (0..n as u32).map(|i| Value::symbol(SymId(i))).collect();
    Ok(array::from_vec(ctx, v))
}

fn m_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum((crate::core::hash::mix(ctx.vm().hash_seed, recv.raw()) >> 2) as i64))
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().symbol;
    crate::methods!(ctx, c, [
        ("all_symbols", s_all_symbols, [0], Safe, Singleton),
        ("to_s", m_to_s, [0], Safe),
        ("id2name", m_to_s, [0], Safe),
        ("name", m_name, [0], Safe),
        ("to_sym", m_to_sym, [0], Safe),
        ("intern", m_to_sym, [0], Safe),
        ("to_proc", m_to_proc, [0], Safe),
        ("inspect", m_inspect, [0], Safe),
        ("==", m_eq, [1], Safe),
        ("===", m_eq, [1], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("casecmp", m_casecmp, [1], Safe),
        ("casecmp?", m_casecmp_p, [1], Safe),
        ("length", m_length, [0], Safe),
        ("size", m_length, [0], Safe),
        ("upcase", m_upcase, [0..], Safe),
        ("downcase", m_downcase, [0..], Safe),
        ("capitalize", m_capitalize, [0..], Safe),
        ("swapcase", m_swapcase, [0..], Safe),
        ("succ", m_succ, [0], Safe),
        ("next", m_succ, [0], Safe),
        ("[]", m_aref, [1..=2], Safe),
        ("slice", m_aref, [1..=2], Safe),
        ("start_with?", m_start_with, [0..], Safe),
        ("end_with?", m_end_with, [0..], Safe),
        ("=~", m_match, [1], Safe),
        ("match", m_match_m, [1..=2], Safe),
        ("match?", m_match_p, [1..=2], Safe),
        ("empty?", m_empty, [0], Safe),
        ("encoding", m_encoding, [0], Safe),
        ("hash", m_hash, [0], Safe),
    ]);
    // Instances come from literals and conversions only (CRuby undefines `new`).
    let single = crate::core::object::singleton_class(ctx, ctx.c().symbol).expect("singleton class of a builtin class");
    let _ = crate::core::module_methods::undef_method(ctx, single, sym::NEW);
}
