//! MatchData: the result of a successful Regexp match.
//!
//! Invariants:
//! - A MatchData is created only by a match (`MatchData.allocate` is undefined); it keeps
//!   the regexp, a frozen copy of the subject and the byte range of each group, and never
//!   changes afterwards.
//! - Group ranges are byte offsets into `string`; character offsets (`begin`, `end`,
//!   `offset`) are computed from them on demand.
//! - A group name that several groups share refers to the last of them that participated
//!   in the match (or the last one when none did), as in Onigmo's
//!   `onig_name_to_backref_number`.

use crate::core::regexp::{self, RegexpObj};
use crate::core::{array, array_methods, hash, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub struct MatchObj {
    pub regexp: Value,
    pub string: Value,
    /// Byte ranges of each group (None when the group did not participate).
    pub groups: Vec<Option<(usize, usize)>>,
}

crate::data_obj!(MatchObj, |s, m| {
    m.mark(s.regexp);
    m.mark(s.string);
});

pub fn is_match_data(v: Value) -> bool {
    data_ref::<MatchObj>(v).is_some()
}

/// A new MatchData of `re` on (a frozen snapshot of) `s`.
pub fn new_match(ctx: &mut Ctx, re: Value, s: Value, groups: Vec<Option<(usize, usize)>>) -> Value {
    let frozen = string::frozen_snapshot(ctx, s);
    let klass = ctx.c().match_data;
    object::new_data(ctx, klass, Box::new(MatchObj { regexp: re, string: frozen, groups }))
}

/// A copy of MatchData `v` (`dup`/`clone`) as an instance of `klass`.
pub fn dup(ctx: &mut Ctx, v: Value, klass: Value) -> Option<Value> {
    let m = data_ref::<MatchObj>(v)?;
    let copy = MatchObj { regexp: m.regexp, string: m.string, groups: m.groups.clone() };
    Some(object::new_data(ctx, klass, Box::new(copy)))
}

pub fn m_get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a MatchObj> {
    match data_ref::<MatchObj>(v) {
        Some(m) => Ok(m),
        None => Err(ctx.type_error("uninitialized MatchData")),
    }
}

/// The text of group `i`, or nil when it did not participate (or does not exist).
pub fn group_str(ctx: &mut Ctx, m: &MatchObj, i: usize) -> Value {
    match m.groups.get(i).copied().flatten() {
        Some((s, e)) => {
            string::substr_shared(ctx, m.string, s..e)
        }
        None => Value::NIL,
    }
}

fn names(m: &MatchObj) -> Vec<(String, Vec<usize>)> {
    data_ref::<RegexpObj>(m.regexp).map(|r| regexp::names_of(r)).unwrap_or_default()
}

/// The group number `name` refers to (see the module invariants), if the name exists.
fn name_to_group(m: &MatchObj, name: &str) -> Option<usize> {
    let (_, groups) = names(m).into_iter().find(|(n, _)| n == name)?;
    let participating = groups.iter().rev().find(|&&g| m.groups.get(g).copied().flatten().is_some());
    participating.or(groups.last()).copied()
}

/// The text of the group called `name` (None when there is no such name).
pub fn named_group(ctx: &mut Ctx, m: &MatchObj, name: &str) -> Result<Option<Value>> {
    Ok(name_to_group(m, name).map(|g| group_str(ctx, m, g)))
}

/// The name in a String or Symbol group reference.
fn group_name_arg(ctx: &mut Ctx, a: Value) -> Option<String> {
    if let Some(s) = a.as_symbol() {
        Some(ctx.sym_str(s))
    } else if string::is_string(a) {
        Some(string::to_rust_string_lossy(a))
    } else {
        None
    }
}

/// `$&`, `` $` ``, `$'`, `$+`, `$n`, named captures (for `GetSpecial`).
pub fn match_special(ctx: &mut Ctx, md: Value, kind: u32) -> Result<Value> {
    let m = m_get(ctx, md)?;
    let b = string::bytes(m.string);
    let enc = string::encoding(m.string);
    Ok(match kind {
        1 => group_str(ctx, m, 0),
        2 => {
            let s = m.groups[0].map_or(0, |g| g.0);
            string::new_with_enc(ctx, b[..s].to_vec(), enc)
        }
        3 => {
            let e = m.groups[0].map_or(b.len(), |g| g.1);
            string::new_with_enc(ctx, b[e..].to_vec(), enc)
        }
        4 => {
            let last = (1..m.groups.len()).rev().find(|&i| m.groups[i].is_some());
            match last {
                Some(i) => group_str(ctx, m, i),
                None => Value::NIL,
            }
        }
        k if k >= 1 << 24 => {
            let li = (k - (1 << 24)) as usize;
            let frame_lits = ctx.stacks.frames.last().and_then(|f| f.iseq().literals.get(li).copied());
            let name = frame_lits.and_then(|v| v.as_symbol()).map(|s| ctx.sym_str(s)).unwrap_or_default();
            named_group(ctx, m, &name)?.unwrap_or(Value::NIL)
        }
        k => group_str(ctx, m, (k - 16) as usize),
    })
}

// ---- methods ----

/// `md[i]`, `md[name]`, `md[start, len]`, `md[range]`.
pub fn md_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let a = args.pos[0];
    if args.pos.len() == 2 {
        let all = md_to_a(ctx, recv, &Args::new(&[]))?;
        let aref = ctx.intern("[]");
        return ctx.call(all, aref, args.pos);
    }
    if let Some(i) = a.as_fixnum() {
        // rb_reg_nth_match: a negative index never reaches the whole match (group 0).
        let n = m.groups.len() as i64;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n || (j == 0 && i < 0) {
            return Ok(Value::NIL);
        }
        return Ok(group_str(ctx, m, j as usize));
    }
    if let Some(name) = group_name_arg(ctx, a) {
        return match named_group(ctx, m, &name)? {
            Some(v) => Ok(v),
            None => Err(ctx.index_error(&format!("undefined group name reference: {name}"))),
        };
    }
    if crate::core::range::is_range(a) {
        let all = md_to_a(ctx, recv, &Args::new(&[]))?;
        let aref = ctx.intern("[]");
        return ctx.call(all, aref, &[a]);
    }
    let i = integer::to_i64_arg(ctx, a)?;
    md_aref(ctx, recv, &Args::new(&[Value::fixnum(i)]))
}

fn md_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let out = array::new(ctx);
    for i in 0..m.groups.len() {
        let v = group_str(ctx, m, i);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_captures(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let out = array::new(ctx);
    for i in 1..m.groups.len() {
        let v = group_str(ctx, m, i);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_named_captures(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let symbolize = args.kwarg(ctx, "symbolize_names").is_some_and(|v| v.truthy());
    named_captures_hash(ctx, recv, symbolize)
}

fn named_captures_hash(ctx: &mut Ctx, recv: Value, symbolize: bool) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let h = hash::new(ctx);
    for (n, _) in names(m) {
        let v = named_group(ctx, m, &n)?.unwrap_or(Value::NIL);
        let k = if symbolize { Value::symbol(ctx.intern(&n)) } else { string::new_utf8(ctx, &n) };
        hash::aset(ctx, h, k, v)?;
    }
    Ok(h)
}

/// `deconstruct_keys(keys)` for pattern matching: nil means every named group; otherwise
/// the Symbol keys in order, stopping at the first that names no group.
fn md_deconstruct_keys(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let keys = args.pos[0];
    if keys.is_nil() {
        return named_captures_hash(ctx, recv, true);
    }
    if !array::is_array(keys) {
        let cname = object::class_name_of(ctx, keys);
        return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Array)")));
    }
    let m = m_get(ctx, recv)?;
    let h = hash::new(ctx);
    if names(m).len() < array::len(keys) {
        return Ok(h);
    }
    for key in array::to_vec(keys) {
        let Some(id) = key.as_symbol() else {
            let cname = object::class_name_of(ctx, key);
            return Err(ctx.type_error(&format!("wrong argument type {cname} (expected Symbol)")));
        };
        let name = ctx.sym_str(id);
        let Some(g) = name_to_group(m, &name) else { break };
        let v = group_str(ctx, m, g);
        hash::aset(ctx, h, key, v)?;
    }
    Ok(h)
}

fn md_names(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let out = array::new(ctx);
    for (n, _) in names(m) {
        let v = string::new_utf8(ctx, &n);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_pre_match(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match_special(ctx, recv, 2)
}

fn md_post_match(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    match_special(ctx, recv, 3)
}

/// The group an index or name argument designates; IndexError when there is none.
fn group_index(ctx: &mut Ctx, m: &MatchObj, a: Value) -> Result<usize> {
    if let Some(name) = group_name_arg(ctx, a) {
        return match name_to_group(m, &name) {
            Some(g) => Ok(g),
            None => Err(ctx.index_error(&format!("undefined group name reference: {name}"))),
        };
    }
    let i = integer::to_i64_arg(ctx, a)?;
    if i < 0 || i as usize >= m.groups.len() {
        return Err(ctx.index_error(&format!("index {i} out of matches")));
    }
    Ok(i as usize)
}

/// The byte range of the group `a` designates (None when it did not participate).
fn group_range(ctx: &mut Ctx, recv: Value, a: Value) -> Result<(&'static MatchObj, Option<(usize, usize)>)> {
    let m: &'static MatchObj = m_get(ctx, recv)?;
    let i = group_index(ctx, m, a)?;
    Ok((m, m.groups[i]))
}

fn md_begin(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (m, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(g.map_or(Value::NIL, |(s, _)| Value::fixnum(string::byte_to_char_index(m.string, s) as i64)))
}

fn md_end(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (m, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(g.map_or(Value::NIL, |(_, e)| Value::fixnum(string::byte_to_char_index(m.string, e) as i64)))
}

fn md_bytebegin(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (_, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(g.map_or(Value::NIL, |(s, _)| Value::fixnum(s as i64)))
}

fn md_byteend(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (_, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(g.map_or(Value::NIL, |(_, e)| Value::fixnum(e as i64)))
}

fn md_offset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = md_begin(ctx, recv, args)?;
    let e = md_end(ctx, recv, args)?;
    Ok(array::from_slice(ctx, &[b, e]))
}

fn md_byteoffset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (_, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(match g {
        Some((s, e)) => array::from_slice(ctx, &[Value::fixnum(s as i64), Value::fixnum(e as i64)]),
        None => array::from_slice(ctx, &[Value::NIL, Value::NIL]),
    })
}

/// `match(n)`: the text of group `n` (an index or a name), nil if it did not participate.
fn md_match(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (m, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(match g {
        Some((s, e)) => {
            string::substr_shared(ctx, m.string, s..e)
        }
        None => Value::NIL,
    })
}

/// `match_length(n)`: the length in characters of group `n`, nil if it did not participate.
fn md_match_length(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (m, g) = group_range(ctx, recv, args.pos[0])?;
    Ok(g.map_or(Value::NIL, |(s, e)| {
        let chars = string::byte_to_char_index(m.string, e) - string::byte_to_char_index(m.string, s);
        Value::fixnum(chars as i64)
    }))
}

fn md_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::fixnum(m_get(ctx, recv)?.groups.len() as i64))
}

fn md_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    Ok(group_str(ctx, m, 0))
}

fn md_string(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(m_get(ctx, recv)?.string)
}

fn md_regexp(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(m_get(ctx, recv)?.regexp)
}

/// `values_at(*indexes)`: integers and names as `[]`; an integer Range selects groups
/// like `Array#values_at` (nil past the last group, RangeError when it starts too far
/// before the first).
fn md_values_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let n = m_get(ctx, recv)?.groups.len() as i64;
    let out = array::new(ctx);
    for &a in args.pos {
        if !a.is_fixnum() && crate::core::range::is_range(a) {
            if let Some((beg, len)) = array_methods::range_beg_len(ctx, a, n, 1)? {
                array_methods::check_alloc_len(ctx, len)?;
                for j in beg..beg + len {
                    let v = if j < n { md_aref(ctx, recv, &Args::new(&[Value::fixnum(j)]))? } else { Value::NIL };
                    array::push(ctx, out, v);
                }
            }
            continue;
        }
        let v = md_aref(ctx, recv, &Args::new(&[a]))?;
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn md_inspect(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let names = names(m);
    let mut out = b"#<MatchData ".to_vec();
    for i in 0..m.groups.len() {
        if i > 0 {
            out.push(b' ');
            let label = names.iter().find(|(_, g)| g.contains(&i)).map(|(n, _)| n.clone()).unwrap_or_else(|| i.to_string());
            out.extend_from_slice(label.as_bytes());
            out.push(b':');
        }
        let g = group_str(ctx, m, i);
        if g.is_nil() {
            out.extend_from_slice(b"nil");
        } else {
            out.extend(string::inspect_bytes(string::bytes(g), string::encoding(g)));
        }
    }
    out.push(b'>');
    Ok(string::new_from_bytes(ctx, &out))
}

/// `==`: same subject text, equal regexps (`Regexp#==`) and the same group ranges.
fn md_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let other = args.pos[0];
    if recv == other {
        return Ok(Value::TRUE);
    }
    let (Some(a), Some(b)) = (data_ref::<MatchObj>(recv), data_ref::<MatchObj>(other)) else { return Ok(Value::FALSE) };
    let same = string::eq(a.string, b.string) && regexp::same_pattern(a.regexp, b.regexp) && a.groups == b.groups;
    let _ = ctx;
    Ok(Value::bool(same))
}

fn md_hash(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let m = m_get(ctx, recv)?;
    let mut bytes = string::bytes(m.string).to_vec();
    for g in &m.groups {
        let (s, e) = g.map_or((usize::MAX, usize::MAX), |g| g);
        bytes.extend_from_slice(&s.to_le_bytes());
        bytes.extend_from_slice(&e.to_le_bytes());
    }
    let seed = ctx.vm().hash_seed ^ regexp::pattern_hash(ctx, m.regexp);
    let h = crate::core::hash::hash_bytes(seed, &bytes);
    Ok(Value::fixnum((h >> 2) as i64))
}

pub fn init(ctx: &mut Ctx) {
    let m = ctx.c().match_data;
    crate::methods!(ctx, m, [
        ("[]", md_aref, [1..=2], Safe),
        ("to_a", md_to_a, [0], Safe),
        ("captures", md_captures, [0], Safe),
        ("deconstruct", md_captures, [0], Safe),
        ("named_captures", md_named_captures, [0], Safe, Kw),
        ("deconstruct_keys", md_deconstruct_keys, [1], Safe),
        ("names", md_names, [0], Safe),
        ("pre_match", md_pre_match, [0], Safe),
        ("post_match", md_post_match, [0], Safe),
        ("begin", md_begin, [1], Safe),
        ("end", md_end, [1], Safe),
        ("bytebegin", md_bytebegin, [1], Safe),
        ("byteend", md_byteend, [1], Safe),
        ("offset", md_offset, [1], Safe),
        ("byteoffset", md_byteoffset, [1], Safe),
        ("match", md_match, [1], Safe),
        ("match_length", md_match_length, [1], Safe),
        ("size", md_size, [0], Safe),
        ("length", md_size, [0], Safe),
        ("to_s", md_to_s, [0], Safe),
        ("string", md_string, [0], Safe),
        ("regexp", md_regexp, [0], Safe),
        ("values_at", md_values_at, [0..], Safe),
        ("inspect", md_inspect, [0], Safe),
        ("==", md_eq, [1], Safe),
        ("eql?", md_eq, [1], Safe),
        ("hash", md_hash, [0], Safe),
    ]);
    // Instances come from matches only (CRuby undefines the allocator, Feature #16294).
    let single = object::singleton_class(ctx, m).expect("singleton class of a builtin class");
    for name in ["new", "allocate"] {
        let id = ctx.intern(name);
        let _ = crate::core::module_methods::undef_method(ctx, single, id);
    }
}
