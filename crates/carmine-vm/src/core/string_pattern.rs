//! The String methods that take a pattern (`sub`/`gsub`, `scan`, `=~`, `match`,
//! `partition`, `slice!`, and the pattern forms of `index`, `[]`, `[]=`, `split` and
//! `start_with?` that String's own methods hand over here).
//!
//! Invariants:
//! - A String pattern means the literal text (`regexp::pattern_arg` quotes it).
//! - Every successful match sets `$~` in the caller's frame; a failed one clears it,
//!   except in `match?`, which never touches it.

use crate::core::matchdata::{group_str, m_get, md_aref, named_group, new_match, MatchObj};
use crate::core::regexp::{is_regexp, match_at, pattern_arg, re_match, re_match_op, search, search_reusing};
use crate::core::{array, encoding, hash, integer, object, string};
use crate::interp::{ops, Args};
use crate::symbol::sym;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
pub fn match_at_start(ctx: &mut Ctx, re: Value, s: Value) -> Result<bool> {
    match search(ctx, re, s, 0, false)? {
        Some(g) if g[0].is_some_and(|(st, _)| st == 0) => {
            let m = new_match(ctx, re, s, g);
            ops::set_last_match(ctx, m);
            Ok(true)
        }
        _ => {
            // A failed `start_with?(re)` clears $~ (rb_reg_start_with_p).
            ops::set_last_match(ctx, Value::NIL);
            Ok(false)
        }
    }
}

pub fn string_index(ctx: &mut Ctx, s: Value, re: Value, bstart: usize) -> Result<Value> {
    let m = match_at(ctx, re, s, bstart)?;
    if m.is_nil() {
        return Ok(Value::NIL);
    }
    let st = m_get(ctx, m)?.groups[0].map_or(0, |g| g.0);
    Ok(Value::fixnum(string::byte_to_char_index(s, st) as i64))
}

pub fn string_rindex(ctx: &mut Ctx, s: Value, re: Value, bstart: usize) -> Result<Value> {
    match search(ctx, re, s, bstart, true)? {
        Some(g) => {
            let st = g[0].map_or(0, |x| x.0);
            let m = new_match(ctx, re, s, g);
            ops::set_last_match(ctx, m);
            Ok(Value::fixnum(string::byte_to_char_index(s, st) as i64))
        }
        None => {
            ops::set_last_match(ctx, Value::NIL);
            Ok(Value::NIL)
        }
    }
}

pub fn string_aref(ctx: &mut Ctx, s: Value, re: Value, group: Option<Value>) -> Result<Value> {
    let m = match_at(ctx, re, s, 0)?;
    if m.is_nil() {
        return Ok(Value::NIL);
    }
    match group {
        None => {
            let mo = m_get(ctx, m)?;
            Ok(group_str(ctx, mo, 0))
        }
        Some(g) => md_aref(ctx, m, &Args::new(&[g])),
    }
}

pub fn string_aset(ctx: &mut Ctx, s: Value, re: Value, repl: Value) -> Result<()> {
    match search(ctx, re, s, 0, false)? {
        Some(g) => {
            let (st, en) = g[0].expect("group 0");
            // `repl` may be `s` itself: splice from a copy then (no aliasing of `&mut`).
            let copy = (repl == s).then(|| string::bytes(repl).to_vec());
            string::bytes_mut(s).splice(st..en, copy.as_deref().unwrap_or_else(|| string::bytes(repl)));
            Ok(())
        }
        None => Err(ctx.index_error("regexp not matched")),
    }
}

/// `String#split` with a Regexp.
pub fn split(ctx: &mut Ctx, s: Value, re: Value, limit: i64) -> Result<Value> {
    let enc = string::encoding(s);
    let b = string::bytes(s).to_vec();
    let out = array::new(ctx);
    let mut start = 0usize;
    let mut search_at = 0usize;
    let mut count = 0i64;
    while search_at <= b.len() {
        if limit > 0 && count == limit - 1 {
            break;
        }
        let Some(groups) = search(ctx, re, s, search_at, false)? else { break };
        let (ms, me) = groups[0].expect("group 0");
        if me == ms {
            if ms >= b.len() {
                break;
            }
            if ms == start {
                search_at = ms + encoding::char_len(enc, &b, ms);
                if ms == 0 {
                    continue;
                }
                let piece = b[start..search_at].to_vec();
                let p = string::new_with_enc(ctx, piece, enc);
                array::push(ctx, out, p);
                start = search_at;
                count += 1;
                continue;
            }
        }
        let piece = b[start..ms].to_vec();
        let p = string::new_with_enc(ctx, piece, enc);
        array::push(ctx, out, p);
        count += 1;
        for g in groups.iter().skip(1) {
            let v = match g {
                Some((gs, ge)) => string::new_with_enc(ctx, b[*gs..*ge].to_vec(), enc),
                None => Value::NIL,
            };
            if !v.is_nil() {
                array::push(ctx, out, v);
            }
        }
        start = me;
        search_at = if me == ms { me + encoding::char_len(enc, &b, me) } else { me };
    }
    let tail = b[start.min(b.len())..].to_vec();
    let t = string::new_with_enc(ctx, tail, enc);
    array::push(ctx, out, t);
    if limit == 0 {
        while array::len(out) > 0 && string::len(array::get(out, array::len(out) - 1)) == 0 {
            array::rarray(out).items_mut().pop();
        }
    }
    Ok(out)
}

/// Expands `\1`, `\k<name>`, `\0`/`\&`, `` \` ``, `\'`, `\\` in a replacement.
fn expand_replacement(ctx: &mut Ctx, repl: &[u8], m: &MatchObj) -> Result<Vec<u8>> {
    let subj = string::bytes(m.string);
    let mut out = Vec::with_capacity(repl.len());
    let mut i = 0;
    while i < repl.len() {
        let c = repl[i];
        if c != b'\\' || i + 1 >= repl.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let n = repl[i + 1];
        i += 2;
        let range = match n {
            b'0'..=b'9' => m.groups.get((n - b'0') as usize).copied().flatten(),
            b'&' => m.groups[0],
            // `\+`: the last group that took part in the match.
            b'+' => m.groups.iter().skip(1).rev().find(|g| g.is_some()).copied().flatten(),
            b'`' => Some((0, m.groups[0].map_or(0, |g| g.0))),
            b'\'' => Some((m.groups[0].map_or(0, |g| g.1), subj.len())),
            b'\\' => {
                out.push(b'\\');
                continue;
            }
            b'k' if i < repl.len() && repl[i] == b'<' => {
                let end = repl[i..].iter().position(|&x| x == b'>').map(|p| i + p);
                match end {
                    Some(e) => {
                        let name = String::from_utf8_lossy(&repl[i + 1..e]).into_owned();
                        i = e + 1;
                        let v = named_group(ctx, m, &name)?;
                        match v {
                            Some(v) if !v.is_nil() => out.extend_from_slice(string::bytes(v)),
                            Some(_) => {}
                            None => return Err(ctx.index_error(&format!("undefined group name reference: {name}"))),
                        }
                        continue;
                    }
                    None => {
                        out.extend_from_slice(b"\\k");
                        continue;
                    }
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
                continue;
            }
        };
        if let Some((s, e)) = range {
            out.extend_from_slice(&subj[s..e]);
        }
    }
    Ok(out)
}

/// `sub`/`gsub` core: returns the new bytes, or None if nothing matched. With `bang`, a
/// receiver that a block changed raises "string modified" (as `sub!`/`gsub!` do in CRuby;
/// `sub`/`gsub` work on their copy and let the block change the receiver).
fn substitute(ctx: &mut Ctx, s: Value, args: &Args, global: bool, bang: bool) -> Result<Option<(Vec<u8>, u8)>> {
    let pat = args.pos[0];
    let re = pattern_arg(ctx, pat)?;
    let repl = args.pos.get(1).copied();
    let hash_repl = repl.filter(|&r| hash::is_hash(r));
    let str_repl = match repl {
        Some(r) if hash_repl.is_none() => Some(string::to_str_arg(ctx, r)?),
        _ => None,
    };
    if repl.is_none() && args.block.is_none() {
        return Err(ctx.arity_error(1, 2, Some(2)));
    }
    let subject = string::dup_literal(ctx, s);
    object::freeze(subject);
    let enc = string::encoding(s);
    // `subject` is a frozen copy: its bytes cannot change while blocks run, so they are
    // read in place rather than copied once more.
    let subj = || string::bytes(subject);
    let total = subj().len();
    let mut region = onig::Region::new();
    // A replacement without backslashes is copied as it is: no MatchData is needed for it,
    // so only the last match gets one (for `$~`).
    let literal_repl = str_repl.map(|r| string::bytes(r).to_vec()).filter(|rb| !rb.contains(&b'\\'));
    let mut last_groups = None;
    let mut out = Vec::with_capacity(total);
    let mut pos = 0usize;
    let mut last_end = 0usize;
    let mut any = false;
    while pos <= total {
        let Some(groups) = search_reusing(ctx, re, subject, pos, false, &mut region)? else { break };
        let (ms, me) = groups[0].expect("group 0");
        any = true;
        out.extend_from_slice(&subj()[last_end..ms]);
        if let Some(rb) = &literal_repl {
            out.extend_from_slice(rb);
            last_groups = Some(groups);
        } else {
            let md = new_match(ctx, re, subject, groups);
            let piece: Vec<u8> = if let Some(h) = hash_repl {
                let mo = m_get(ctx, md)?;
                let matched = group_str(ctx, mo, 0);
                let v = hash::aref(ctx, h, matched)?;
                let v = string::to_s(ctx, v)?;
                string::bytes(v).to_vec()
            } else if let Some(r) = str_repl {
                let rb = string::bytes(r).to_vec();
                let m = m_get(ctx, md)?;
                expand_replacement(ctx, &rb, m)?
            } else {
                ops::set_last_match(ctx, md);
                let mo = m_get(ctx, md)?;
                let matched = group_str(ctx, mo, 0);
                let blk = args.block.expect("block");
                let v = ctx.yield1(&blk, matched)?;
                let v = string::to_s(ctx, v)?;
                string::bytes(v).to_vec()
            };
            out.extend_from_slice(&piece);
            ops::set_last_match(ctx, md);
        }
        last_end = me;
        if !global {
            break;
        }
        if me == ms {
            if me < total {
                let n = encoding::char_len(enc, subj(), me);
                out.extend_from_slice(&subj()[me..me + n]);
                last_end = me + n;
            }
            if me >= total {
                break;
            }
            pos = last_end;
        } else {
            pos = me;
        }
    }
    if !any {
        ops::set_last_match(ctx, Value::NIL);
        return Ok(None);
    }
    if let Some(groups) = last_groups {
        let md = new_match(ctx, re, subject, groups);
        ops::set_last_match(ctx, md);
    }
    if last_end < total {
        out.extend_from_slice(&subj()[last_end..]);
    }
    if bang && args.block.is_some() && string::bytes(s) != subj() {
        return Err(ctx.runtime_error("string modified"));
    }
    Ok(Some((out, enc)))
}

fn s_sub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match substitute(ctx, recv, args, false, false)? {
        Some((b, e)) => Ok(string::new_with_enc(ctx, b, e)),
        None => Ok(string::dup_literal(ctx, recv)),
    }
}

fn s_gsub(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if args.pos.len() == 1 && args.block.is_none() {
        return crate::core::enumerator::enum_for(ctx, recv, "gsub", args.pos, None);
    }
    match substitute(ctx, recv, args, true, false)? {
        Some((b, e)) => Ok(string::new_with_enc(ctx, b, e)),
        None => Ok(string::dup_literal(ctx, recv)),
    }
}

fn s_sub_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match substitute(ctx, recv, args, false, true)? {
        Some((b, _)) => {
            ctx.check_frozen(recv)?;
            string::set_bytes(recv, b);
            Ok(recv)
        }
        None => Ok(Value::NIL),
    }
}

fn s_gsub_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    match substitute(ctx, recv, args, true, true)? {
        Some((b, _)) => {
            ctx.check_frozen(recv)?;
            string::set_bytes(recv, b);
            Ok(recv)
        }
        None => Ok(Value::NIL),
    }
}

fn s_scan(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let re = pattern_arg(ctx, args.pos[0])?;
    let subject = object::freeze(string::dup_literal(ctx, recv));
    let enc = string::encoding(recv);
    // `subject` is a frozen copy: its bytes cannot change while blocks run, so they are
    // read in place rather than copied once more.
    let subj = || string::bytes(subject);
    let total = subj().len();
    let mut region = onig::Region::new();
    let out = array::new(ctx);
    let mut pos = 0usize;
    // Without a block `$~` is only seen after the scan: the last match's MatchData is built
    // then, not one per match.
    let mut last_groups = None;
    let mut any = false;
    while pos <= total {
        let Some(groups) = search_reusing(ctx, re, subject, pos, false, &mut region)? else { break };
        let (ms, me) = groups[0].expect("group 0");
        any = true;
        let item = if groups.len() > 1 {
            let caps = array::new(ctx);
            for g in groups.iter().skip(1) {
                let v = match *g {
                    Some((s, e)) => string::substr_shared(ctx, subject, s..e),
                    None => Value::NIL,
                };
                array::push(ctx, caps, v);
            }
            caps
        } else {
            string::substr_shared(ctx, subject, ms..me)
        };
        match args.block {
            Some(blk) => {
                let md = new_match(ctx, re, subject, groups);
                ops::set_last_match(ctx, md);
                ctx.yield1(&blk, item)?;
                ops::set_last_match(ctx, md);
            }
            None => {
                array::push(ctx, out, item);
                last_groups = Some(groups);
            }
        }
        pos = if me == ms { me + if me < total { encoding::char_len(enc, subj(), me) } else { 1 } } else { me };
    }
    if !any {
        ops::set_last_match(ctx, Value::NIL);
    }
    if args.block.is_some() {
        return Ok(recv);
    }
    let md = match last_groups {
        Some(groups) => new_match(ctx, re, subject, groups),
        None => Value::NIL,
    };
    ops::set_last_match(ctx, md);
    Ok(out)
}

fn s_match_op(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    if string::is_string(o) {
        return Err(ctx.type_error("wrong argument type String (expected Regexp)"));
    }
    if is_regexp(o) {
        return re_match_op(ctx, o, &Args::new(&[recv]));
    }
    ctx.call(o, sym::MATCH, &[recv])
}

fn s_match(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let re = pattern_arg(ctx, args.pos[0])?;
    let mut rest = vec![recv];
    rest.extend_from_slice(&args.pos[1..]);
    re_match(ctx, re, &Args { pos: &rest, kw: None, block: args.block })
}

fn s_match_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let re = pattern_arg(ctx, args.pos[0])?;
    let start = match args.pos.get(1) {
        Some(&p) => integer::to_i64_arg(ctx, p)?,
        None => 0,
    };
    let bs = if start < 0 { (string::char_length(recv) as i64 + start).max(0) } else { start };
    let Some(b) = string::char_to_byte(recv, bs as usize) else { return Ok(Value::FALSE) };
    Ok(Value::bool(search(ctx, re, recv, b, false)?.is_some()))
}

fn s_partition(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enc = string::encoding(recv);
    let b = string::bytes(recv).to_vec();
    let range = if is_regexp(args.pos[0]) {
        search(ctx, args.pos[0], recv, 0, false)?.and_then(|g| g[0])
    } else {
        let p = string::to_str_arg(ctx, args.pos[0])?;
        let pb = string::bytes(p).to_vec();
        b.windows(pb.len().max(1)).position(|w| w == &pb[..]).map(|i| (i, i + pb.len())).filter(|_| !pb.is_empty() || b.is_empty())
    };
    let parts = match range {
        Some((s, e)) => [b[..s].to_vec(), b[s..e].to_vec(), b[e..].to_vec()],
        None => [b.clone(), Vec::new(), Vec::new()],
    };
    // Each piece goes into the Array as it is made, so the collector always sees it.
    let out = array::new(ctx);
    for p in parts {
        let v = string::new_with_enc(ctx, p, enc);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn s_rpartition(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let enc = string::encoding(recv);
    let b = string::bytes(recv).to_vec();
    let range = if is_regexp(args.pos[0]) {
        search(ctx, args.pos[0], recv, b.len(), true)?.and_then(|g| g[0])
    } else {
        let p = string::to_str_arg(ctx, args.pos[0])?;
        let pb = string::bytes(p).to_vec();
        if pb.len() > b.len() {
            None
        } else {
            (0..=b.len() - pb.len()).rev().find(|&i| b[i..].starts_with(&pb)).map(|i| (i, i + pb.len()))
        }
    };
    let parts = match range {
        Some((s, e)) => [b[..s].to_vec(), b[s..e].to_vec(), b[e..].to_vec()],
        None => [Vec::new(), Vec::new(), b.clone()],
    };
    // Each piece goes into the Array as it is made, so the collector always sees it.
    let out = array::new(ctx);
    for p in parts {
        let v = string::new_with_enc(ctx, p, enc);
        array::push(ctx, out, v);
    }
    Ok(out)
}

fn s_slice_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    ctx.check_frozen(recv)?;
    let aref = ctx.intern("[]");
    let piece = ctx.call(recv, aref, args.pos)?;
    if piece.is_nil() {
        return Ok(Value::NIL);
    }
    let mut a: Vec<Value> = args.pos.to_vec();
    let empty = string::new_utf8(ctx, "");
    a.push(empty);
    let aset = ctx.intern("[]=");
    ctx.call(recv, aset, &a)?;
    Ok(piece)
}

pub fn init(ctx: &mut Ctx) {
    let s = ctx.c().string;
    crate::methods!(ctx, s, [
        ("sub", s_sub, [1..=2], Unsafe),
        ("gsub", s_gsub, [1..=2], Unsafe),
        ("sub!", s_sub_bang, [1..=2], Unsafe),
        ("gsub!", s_gsub_bang, [1..=2], Unsafe),
        ("scan", s_scan, [1], Unsafe),
        ("=~", s_match_op, [1], Unsafe),
        ("match", s_match, [1..=2], Unsafe),
        ("match?", s_match_p, [1..=2], Safe),
        ("partition", s_partition, [1], Unsafe),
        ("rpartition", s_rpartition, [1], Unsafe),
        ("slice!", s_slice_bang, [1..=2], Unsafe),
    ]);
}
