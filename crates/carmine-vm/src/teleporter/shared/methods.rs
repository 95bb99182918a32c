//! The native methods of `Teleporter::SharedString`, `SharedArray` and `SharedHash`: the
//! primitives that read and write an image in place. The rest of their API (Enumerable,
//! inspect, the String/Array methods that answer from a copy) is Ruby, in
//! `lib/carmine/teleporter/shared.rb`, over these.

use std::rc::Rc;

use super::image::*;
use super::{cell_value, corrupt, Read, shared_obj, str_encoding, unshare, wrap, Builder, Root, State};
use crate::core::{array, encoding, hash, object, string};
use crate::interp::Args;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// The receiver's root, record and image (raising if it was moved).
fn this(ctx: &mut Ctx, recv: Value) -> Result<(Rc<Root>, usize, Img)> {
    let Some(w) = shared_obj(recv) else {
        let name = object::class_name_of(ctx, recv);
        return Err(ctx.type_error(&format!("wrong argument type {name} (expected a Teleporter shared object)")));
    };
    let (root, rec) = (w.root.clone(), w.rec);
    let img = root.check(ctx, recv)?;
    Ok((root, rec, img))
}

fn frozen(root: &Root, recv: Value) -> bool {
    root.state.get() == State::Frozen || object::is_frozen(recv)
}

/// As `this`, for a method that writes: FrozenError unless the graph is owned here.
fn writable(ctx: &mut Ctx, recv: Value) -> Result<(Rc<Root>, usize, Img)> {
    let (root, rec, img) = this(ctx, recv)?;
    if frozen(&root, recv) {
        return Err(ctx.frozen_error(recv));
    }
    Ok((root, rec, img))
}

fn freeze_reads(root: &Root) -> Read {
    if root.state.get() == State::Frozen { Read::Frozen } else { Read::Owned }
}

/// A new graph (in process memory) whose root record `build` writes.
fn new_graph(ctx: &mut Ctx, klass_kind: u64, build: impl FnOnce(&mut Ctx, &mut Builder) -> Result<usize>) -> Result<Value> {
    let root = Rc::new(Root::local(4096));
    let rec = {
        let mut b = Builder::new(&root);
        build(ctx, &mut b)?
    };
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    set_root(&img, rec);
    wrap(ctx, &root, rec, klass_kind, false)
}

// ---- common ----

fn m_frozen_p(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, ..) = this(ctx, recv)?;
    Ok(Value::bool(frozen(&root, recv)))
}

/// `moved?`: whether this object was given away with `move_send` (the one question a
/// moved object still answers).
fn m_moved_p(_ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    Ok(Value::bool(shared_obj(recv).map(|w| w.root.state.get() == State::Moved).unwrap_or(false)))
}

/// `unshare`: a plain String/Array/Hash copy of this object and all it reaches.
fn m_unshare(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, _) = this(ctx, recv)?;
    unshare(ctx, &root, rec)
}

/// `dup`: a writable copy of this object's graph, in this process's memory.
fn m_dup(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    let kind = img.kind(rec).ok_or_else(|| corrupt(ctx))?;
    new_graph(ctx, kind, |ctx, b| Ok(b.put(ctx, recv)?.1 as usize))
}

/// `__id`: the same Integer for every wrapper of one object of one graph (what `equal?`
/// cannot tell, since each read makes a new wrapper).
fn m_id(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, _) = this(ctx, recv)?;
    let p = Rc::as_ptr(&root) as usize as i64;
    Ok(Value::fixnum((p.wrapping_mul(1_000_003) ^ rec as i64) & ((1 << 61) - 1)))
}

// ---- SharedString ----

/// Bytes and encoding of a String or SharedString argument (or one converted with to_str).
fn str_arg(ctx: &mut Ctx, v: Value) -> Result<(Vec<u8>, u8)> {
    if let Some(w) = shared_obj(v) {
        let (root, rec) = (w.root.clone(), w.rec);
        let img = root.check(ctx, v)?;
        if let (Some(b), Some(e)) = (img.str_bytes(rec), str_encoding(&img, rec)) {
            return Ok((b.to_vec(), e));
        }
    }
    let Some(s) = string::try_to_str(ctx, v)? else {
        let name = object::class_name_of(ctx, v);
        return Err(ctx.type_error(&format!("no implicit conversion of {name} into String")));
    };
    Ok((string::bytes(s).to_vec(), string::encoding(s)))
}

fn s_string_new(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (b, enc) = match args.pos.first() {
        Some(&v) => str_arg(ctx, v)?,
        None => (Vec::new(), encoding::UTF_8),
    };
    new_graph(ctx, R_STR, |ctx, bl| bl.string(ctx, &b, enc))
}

fn str_parts(ctx: &mut Ctx, img: &Img, rec: usize) -> Result<(Vec<u8>, u8)> {
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?.to_vec();
    let e = str_encoding(img, rec).ok_or_else(|| corrupt(ctx))?;
    Ok((b, e))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
    let e = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
    Ok(string::new_with_enc_from_slice(ctx, b, e))
}

fn m_bytesize(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    Ok(Value::fixnum(img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?.len() as i64))
}

fn char_count(b: &[u8], enc: u8) -> usize {
    match enc {
        encoding::BINARY | encoding::US_ASCII => b.len(),
        encoding::UTF_8 => utf8_char_count(b),
        _ => encoding::char_count(enc, b),
    }
}

fn m_str_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
    let e = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
    Ok(Value::fixnum(char_count(b, e) as i64))
}

fn m_encoding(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    let e = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
    Ok(encoding::encoding_object(ctx, e))
}

fn m_getbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let (_, rec, img) = this(ctx, recv)?;
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
    let i = if i < 0 { i + b.len() as i64 } else { i };
    Ok(usize::try_from(i).ok().and_then(|i| b.get(i)).map(|&x| Value::fixnum(x as i64)).unwrap_or(Value::NIL))
}

/// Calls String method `name` on a copy of the receiver (the forms the in-place paths do
/// not cover).
fn on_copy(ctx: &mut Ctx, recv: Value, name: &str, args: &Args) -> Result<Value> {
    let s = m_to_s(ctx, recv, args)?;
    ctx.call_str(s, name, args.pos)
}

/// `[]`: an Integer index or (start, length) read in place for UTF-8, US-ASCII and BINARY
/// strings; other forms (ranges, regexps, strings) answer from a copy.
fn m_str_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let ints: Option<Vec<i64>> = args.pos.iter().map(|v| v.as_fixnum()).collect();
    let (_, rec, img) = this(ctx, recv)?;
    let e = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
    let simple = matches!(e, encoding::UTF_8 | encoding::US_ASCII | encoding::BINARY);
    let (Some(ints), true, 1..=2) = (ints, simple, args.pos.len()) else {
        return on_copy(ctx, recv, "[]", args);
    };
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
    let single = e != encoding::UTF_8 || b.is_ascii();
    let n = if single { b.len() } else { utf8_char_count(b) } as i64;
    let start = if ints[0] < 0 { ints[0] + n } else { ints[0] };
    let len = if ints.len() == 2 { ints[1] } else { 1 };
    if start < 0 || start > n || len < 0 || (ints.len() == 1 && start >= n) {
        return Ok(Value::NIL);
    }
    let end = start.saturating_add(len).min(n);
    let at = |i: i64| if single { Some(i as usize) } else { utf8_offset(b, i as usize) };
    let (Some(from), Some(to)) = (at(start), at(end)) else { return Err(corrupt(ctx)) };
    let piece = b[from..to].to_vec();
    Ok(string::new_with_enc(ctx, piece, e))
}

fn m_byteslice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let ints: Option<Vec<i64>> = args.pos.iter().map(|v| v.as_fixnum()).collect();
    let Some(ints) = ints else { return on_copy(ctx, recv, "byteslice", args) };
    let (_, rec, img) = this(ctx, recv)?;
    let e = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
    let n = b.len() as i64;
    let start = if ints[0] < 0 { ints[0] + n } else { ints[0] };
    let len = ints.get(1).copied().unwrap_or(1);
    if start < 0 || start > n || len < 0 || (ints.len() == 1 && start >= n) {
        return Ok(Value::NIL);
    }
    let end = start.saturating_add(len).min(n);
    let piece = b[start as usize..end as usize].to_vec();
    Ok(string::new_with_enc(ctx, piece, e))
}

/// Whether strings (bytes, encoding) are equal as String#== decides (same bytes, and the
/// same encoding or ASCII-only content).
fn same_string(a: &[u8], ea: u8, b: &[u8], eb: u8) -> bool {
    a == b && (ea == eb || (a.is_ascii() && encoding::is_ascii_compatible(ea) && encoding::is_ascii_compatible(eb)))
}

fn m_str_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let o = args.pos[0];
    let is_str = (o.is_heap() && string::is_string(o)) || shared_obj(o).is_some();
    if !is_str {
        return Ok(Value::FALSE);
    }
    let (_, rec, img) = this(ctx, recv)?;
    let (a, ea) = str_parts(ctx, &img, rec)?;
    let Ok((b, eb)) = str_arg(ctx, o) else { return Ok(Value::FALSE) };
    Ok(Value::bool(same_string(&a, ea, &b, eb)))
}

/// `==` of a SharedArray (`conv` is `to_ary`) or SharedHash (`to_hash`), deciding as
/// Array#== and Hash#== do before any element is read: the same object is equal; an
/// immediate, or an object that does not convert with `conv`, is not. Only then are the
/// contents compared, by the Ruby half's `__eq` (on copies, guarded against cycles). So
/// the common test against a Symbol or nil (`x == :stop`) allocates nothing and runs no
/// Ruby code.
fn container_eq(ctx: &mut Ctx, recv: Value, o: Value, conv: SymId) -> Result<Value> {
    if o == recv {
        return Ok(Value::TRUE);
    }
    if !o.is_heap() || !ctx.respond_to_dynamic(o, conv)? {
        return Ok(Value::FALSE);
    }
    ctx.call_str(recv, "__eq", &[o])
}

fn m_arr_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    container_eq(ctx, recv, args.pos[0], sym::TO_ARY)
}

fn m_hash_eq(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    container_eq(ctx, recv, args.pos[0], sym::TO_HASH)
}

fn m_str_hash(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    on_copy(ctx, recv, "hash", args)
}

fn m_str_include_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (needle, _) = str_arg(ctx, args.pos[0])?;
    let (_, rec, img) = this(ctx, recv)?;
    let b = img.str_bytes(rec).ok_or_else(|| corrupt(ctx))?;
    Ok(Value::bool(needle.is_empty() || b.windows(needle.len()).any(|w| w == needle.as_slice())))
}

/// Sets STR record `rec` to `len` bytes with room for `need`, moving its data to a new
/// region (with the first `keep` bytes) when it has less room: the image and data offset.
fn str_room(ctx: &mut Ctx, root: &Root, rec: usize, need: usize, keep: usize) -> Result<(Img, usize)> {
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    let cap = img.field(rec, 3).ok_or_else(|| corrupt(ctx))? as usize;
    let data = img.field(rec, 4).ok_or_else(|| corrupt(ctx))? as usize;
    if need <= cap {
        return Ok((img, data));
    }
    let new_cap = need.max(cap * 2).max(8);
    let (img, nd) = root.alloc(ctx, new_cap)?;
    let old = img.bytes(data, keep).ok_or_else(|| corrupt(ctx))?.to_vec();
    img.put_bytes(nd, &old);
    img.set_u64(rec + 24, new_cap as u64);
    img.set_u64(rec + 32, nd as u64);
    Ok((img, nd))
}

fn set_str_encoding(ctx: &mut Ctx, root: &Rc<Root>, rec: usize, enc: u8) -> Result<()> {
    let field = match enc {
        encoding::BINARY | encoding::UTF_8 | encoding::US_ASCII => enc as u64,
        _ => {
            let mut b = Builder::new(root);
            let name = encoding::name(enc).as_bytes().to_vec();
            // A throwaway STR names the encoding through its own field.
            let tmp = b.string(ctx, &name, enc)?;
            root.img().ok_or_else(|| corrupt(ctx))?.field(tmp, 1).ok_or_else(|| corrupt(ctx))?
        }
    };
    root.img().ok_or_else(|| corrupt(ctx))?.set_u64(rec + 8, field);
    Ok(())
}

/// `<<` / `concat`: appends a String (or SharedString) in place.
fn m_str_append(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &a in args.pos {
        let (b, eb) = str_arg(ctx, a)?;
        let (root, rec, img) = writable(ctx, recv)?;
        let len = img.field(rec, 2).ok_or_else(|| corrupt(ctx))? as usize;
        let ea = str_encoding(&img, rec).ok_or_else(|| corrupt(ctx))?;
        let (img, data) = str_room(ctx, &root, rec, len + b.len(), len)?;
        img.put_bytes(data + len, &b);
        img.set_u64(rec + 16, (len + b.len()) as u64);
        if ea == encoding::US_ASCII && !b.is_ascii() && eb != ea {
            set_str_encoding(ctx, &root, rec, eb)?;
        }
    }
    Ok(recv)
}

fn m_str_replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (b, eb) = str_arg(ctx, args.pos[0])?;
    let (root, rec, _) = writable(ctx, recv)?;
    let (img, data) = str_room(ctx, &root, rec, b.len(), 0)?;
    img.put_bytes(data, &b);
    img.set_u64(rec + 16, b.len() as u64);
    set_str_encoding(ctx, &root, rec, eb)?;
    Ok(recv)
}

fn m_str_clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = writable(ctx, recv)?;
    img.set_u64(rec + 16, 0);
    Ok(recv)
}

fn m_setbyte(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let x = crate::core::integer::to_i64_arg(ctx, args.pos[1])?;
    let (_, rec, img) = writable(ctx, recv)?;
    let len = img.field(rec, 2).ok_or_else(|| corrupt(ctx))? as i64;
    let data = img.field(rec, 4).ok_or_else(|| corrupt(ctx))? as usize;
    let j = if i < 0 { i + len } else { i };
    if j < 0 || j >= len {
        return Err(ctx.index_error(&format!("index {i} out of string")));
    }
    img.put_bytes(data + j as usize, &[x as u8]);
    Ok(args.pos[1])
}

// ---- SharedArray ----

fn s_array_new(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let src = match args.pos.first() {
        Some(&v) => array::to_ary_arg(ctx, v)?,
        None => array::new(ctx),
    };
    new_graph(ctx, R_ARR, |ctx, b| fill_array(ctx, b, src))
}

/// A new ARR record holding (converted) the elements of Array `src`.
fn fill_array(ctx: &mut Ctx, b: &mut Builder, src: Value) -> Result<usize> {
    let n = array::len(src);
    let r = b.array_record(ctx, n)?;
    for i in 0..n.min(array::len(src)) {
        let e = array::get(src, i);
        let c = b.put(ctx, e)?;
        let img = b_img(ctx, b)?;
        let cells = img.field(r, 3).unwrap_or(0) as usize;
        img.set_cell(cells + i * CELL, c);
        img.set_u64(r + 8, i as u64 + 1);
    }
    Ok(r)
}

fn b_img(ctx: &mut Ctx, b: &Builder) -> Result<Img> {
    b.root_img().ok_or_else(|| corrupt(ctx))
}

fn arr(ctx: &mut Ctx, img: &Img, rec: usize) -> Result<(usize, usize)> {
    img.arr(rec).ok_or_else(|| corrupt(ctx))
}

fn m_arr_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    Ok(Value::fixnum(arr(ctx, &img, rec)?.0 as i64))
}

fn elem(ctx: &mut Ctx, root: &Rc<Root>, img: &Img, rec: usize, i: i64) -> Result<Value> {
    let (len, cells) = arr(ctx, img, rec)?;
    let i = if i < 0 { i + len as i64 } else { i };
    if i < 0 || i >= len as i64 {
        return Ok(Value::NIL);
    }
    let c = img.cell(cells + i as usize * CELL).ok_or_else(|| corrupt(ctx))?;
    cell_value(ctx, root, img, c, freeze_reads(root))
}

/// `[]` / `at`: one Integer index read in place; other forms answer from `to_a`.
fn m_arr_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    if let (1, Some(i)) = (args.pos.len(), args.pos.first().and_then(|v| v.as_fixnum())) {
        let (root, rec, img) = this(ctx, recv)?;
        return elem(ctx, &root, &img, rec, i);
    }
    let a = m_to_a(ctx, recv, args)?;
    ctx.call_str(a, "[]", args.pos)
}

fn m_at(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let (root, rec, img) = this(ctx, recv)?;
    elem(ctx, &root, &img, rec, i)
}

/// `to_a` / `to_ary` / `entries`: an Array of the elements (shared objects as wrappers).
fn m_to_a(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, img) = this(ctx, recv)?;
    let (len, _) = arr(ctx, &img, rec)?;
    let out = array::with_capacity(ctx, len);
    for i in 0..len {
        let img = root.img().ok_or_else(|| corrupt(ctx))?;
        let e = elem(ctx, &root, &img, rec, i as i64)?;
        array::push(ctx, out, e);
    }
    Ok(out)
}

/// Room for `need` cells in ARR record `rec` (its cells moved to a region twice as large
/// when full): the image and cells offset.
fn arr_room(ctx: &mut Ctx, root: &Root, rec: usize, need: usize) -> Result<(Img, usize)> {
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    let (len, cells) = arr(ctx, &img, rec)?;
    let cap = img.field(rec, 2).ok_or_else(|| corrupt(ctx))? as usize;
    if need <= cap {
        return Ok((img, cells));
    }
    let new_cap = need.max(cap * 2).max(4);
    let (img, nc) = root.alloc(ctx, new_cap.saturating_mul(CELL))?;
    let old = img.bytes(cells, len * CELL).ok_or_else(|| corrupt(ctx))?.to_vec();
    img.put_bytes(nc, &old);
    img.set_u64(rec + 16, new_cap as u64);
    img.set_u64(rec + 24, nc as u64);
    Ok((img, nc))
}

fn m_push(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    for &v in args.pos {
        let (root, rec, _) = writable(ctx, recv)?;
        let c = Builder::new(&root).put(ctx, v)?;
        let img = root.img().ok_or_else(|| corrupt(ctx))?;
        let (len, _) = arr(ctx, &img, rec)?;
        let (img, cells) = arr_room(ctx, &root, rec, len + 1)?;
        img.set_cell(cells + len * CELL, c);
        img.set_u64(rec + 8, len as u64 + 1);
    }
    Ok(recv)
}

/// `[]=` with an Integer index (other forms are Ruby, over `replace`).
fn m_arr_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let i = crate::core::integer::to_i64_arg(ctx, args.pos[0])?;
    let v = args.pos[1];
    let (root, rec, img) = writable(ctx, recv)?;
    let (len, _) = arr(ctx, &img, rec)?;
    let j = if i < 0 { i + len as i64 } else { i };
    if j < 0 {
        return Err(ctx.index_error(&format!("index {i} too small for array; minimum: -{len}")));
    }
    let j = j as usize;
    if j > 1 << 40 {
        return Err(ctx.index_error(&format!("index {i} too big")));
    }
    let c = Builder::new(&root).put(ctx, v)?;
    let (img, cells) = arr_room(ctx, &root, rec, (j + 1).max(len))?;
    let (len, _) = arr(ctx, &img, rec)?;
    for k in len..j {
        img.set_cell(cells + k * CELL, (C_NIL, 0));
    }
    img.set_cell(cells + j * CELL, c);
    if j >= len {
        img.set_u64(rec + 8, j as u64 + 1);
    }
    Ok(v)
}

fn m_pop(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, img) = writable(ctx, recv)?;
    let (len, _) = arr(ctx, &img, rec)?;
    if len == 0 {
        return Ok(Value::NIL);
    }
    let v = elem(ctx, &root, &img, rec, len as i64 - 1)?;
    root.img().ok_or_else(|| corrupt(ctx))?.set_u64(rec + 8, len as u64 - 1);
    Ok(v)
}

fn m_shift(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, img) = writable(ctx, recv)?;
    let (len, _) = arr(ctx, &img, rec)?;
    if len == 0 {
        return Ok(Value::NIL);
    }
    let v = elem(ctx, &root, &img, rec, 0)?;
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    let (len, cells) = arr(ctx, &img, rec)?;
    let rest = img.bytes(cells + CELL, (len - 1) * CELL).ok_or_else(|| corrupt(ctx))?.to_vec();
    img.put_bytes(cells, &rest);
    img.set_u64(rec + 8, len as u64 - 1);
    Ok(v)
}

fn m_arr_clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = writable(ctx, recv)?;
    img.set_u64(rec + 8, 0);
    Ok(recv)
}

/// `replace(array)`: the elements of `array` (shared objects of this graph kept as they
/// are, anything else converted).
fn m_arr_replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = array::to_ary_arg(ctx, args.pos[0])?;
    let (root, rec, _) = writable(ctx, recv)?;
    let n = array::len(src);
    let mut cells = Vec::with_capacity(n);
    {
        let mut b = Builder::new(&root);
        for i in 0..n.min(array::len(src)) {
            cells.push(b.put(ctx, array::get(src, i))?);
        }
    }
    let (img, off) = arr_room(ctx, &root, rec, cells.len())?;
    for (i, c) in cells.iter().enumerate() {
        img.set_cell(off + i * CELL, *c);
    }
    img.set_u64(rec + 8, cells.len() as u64);
    Ok(recv)
}

// ---- SharedHash ----

fn s_hash_new(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let src = match args.pos.first() {
        Some(&v) => hash::to_hash_arg(ctx, v)?,
        None => hash::new(ctx),
    };
    new_graph(ctx, R_HASH, |ctx, b| Ok(b.put(ctx, src)?.1 as usize)).and_then(|v| {
        // `put` converted a plain Hash into a HASH record; a subclass would have become a
        // copy-format record.
        let (_, rec, img) = this(ctx, v)?;
        if img.kind(rec) != Some(R_HASH) {
            return Err(ctx.type_error("SharedHash.new needs a Hash"));
        }
        Ok(v)
    })
}

fn m_hash_size(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = this(ctx, recv)?;
    Ok(Value::fixnum(img.hash(rec).ok_or_else(|| corrupt(ctx))?.0 as i64))
}

fn lookup(ctx: &mut Ctx, recv: Value, k: Value) -> Result<Option<(Rc<Root>, Img, usize)>> {
    let p = super::probe(ctx, k)?;
    let (root, rec, img) = this(ctx, recv)?;
    Ok(super::find_entry(&img, rec, &p).map(|e| (root, img, e)))
}

fn m_hash_aref(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    match lookup(ctx, recv, args.pos[0])? {
        Some((root, img, e)) => {
            let c = img.cell(e + 24).ok_or_else(|| corrupt(ctx))?;
            cell_value(ctx, &root, &img, c, freeze_reads(&root))
        }
        None => m_default(ctx, recv, args),
    }
}

fn m_default(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, img) = this(ctx, recv)?;
    let c = img.cell(rec + HASH_DEFAULT).ok_or_else(|| corrupt(ctx))?;
    cell_value(ctx, &root, &img, c, freeze_reads(&root))
}

fn m_key_p(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    Ok(Value::bool(lookup(ctx, recv, args.pos[0])?.is_some()))
}

fn m_hash_aset(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let (root, rec, _) = writable(ctx, recv)?;
    Builder::new(&root).hash_insert(ctx, rec, args.pos[0], args.pos[1])?;
    Ok(args.pos[1])
}

fn m_hash_delete(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    writable(ctx, recv)?;
    let Some((root, img, e)) = lookup(ctx, recv, args.pos[0])? else { return Ok(Value::NIL) };
    let c = img.cell(e + 24).ok_or_else(|| corrupt(ctx))?;
    let v = cell_value(ctx, &root, &img, c, Read::Private)?;
    let img = root.img().ok_or_else(|| corrupt(ctx))?;
    let rec = shared_obj(recv).map(|w| w.rec).unwrap_or(0);
    let (len, ..) = img.hash(rec).ok_or_else(|| corrupt(ctx))?;
    img.set_u64(e + 8, C_DELETED);
    img.set_u64(rec + 8, len.saturating_sub(1) as u64);
    Ok(v)
}

fn m_hash_clear(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (_, rec, img) = writable(ctx, recv)?;
    let (idx, slots) = img.hash_index(rec).ok_or_else(|| corrupt(ctx))?;
    img.zero(idx, slots * 4);
    img.set_u64(rec + 8, 0);
    img.set_u64(rec + 16, 0);
    Ok(recv)
}

/// `replace(hash)`: the entries and the default value of `hash` (as Hash#replace).
fn m_hash_replace(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = hash::to_hash_arg(ctx, args.pos[0])?;
    super::check_shareable_hash(ctx, src)?;
    m_hash_clear(ctx, recv, args)?;
    let (root, rec, _) = writable(ctx, recv)?;
    let mut b = Builder::new(&root);
    let dc = b.put(ctx, hash::rhash(src).default)?;
    root.img().ok_or_else(|| corrupt(ctx))?.set_cell(rec + HASH_DEFAULT, dc);
    for (k, v) in hash::pairs(src) {
        b.hash_append(ctx, rec, k, v)?;
    }
    Ok(recv)
}

/// `__pairs`: an Array of [key, value] Arrays in insertion order (keys frozen).
fn m_pairs(ctx: &mut Ctx, recv: Value, _args: &Args) -> Result<Value> {
    let (root, rec, img) = this(ctx, recv)?;
    let cells = super::live_entries(&img, rec).ok_or_else(|| corrupt(ctx))?;
    let out = array::with_capacity(ctx, cells.len());
    let fr = freeze_reads(&root);
    for (kc, vc) in cells {
        let img = root.img().ok_or_else(|| corrupt(ctx))?;
        let k = super::key_value(ctx, &root, &img, kc)?;
        let v = cell_value(ctx, &root, &img, vc, fr)?;
        let pair = array::from_slice(ctx, &[k, v]);
        array::push(ctx, out, pair);
    }
    Ok(out)
}

/// Defines the three classes and their native methods, then loads their Ruby half.
pub fn init(ctx: &mut Ctx) -> Result<()> {
    let m = super::super::teleporter_module(ctx);
    super::moved_error_class(ctx);
    let obj = ctx.c().object;
    let def = crate::core::module_methods::define_class_under;
    let ks = def(ctx, m, "SharedString", obj);
    let ka = def(ctx, m, "SharedArray", obj);
    let kh = def(ctx, m, "SharedHash", obj);
    super::root_classes(ctx, [ks, ka, kh]);
    for k in [ks, ka, kh] {
        crate::methods!(ctx, k, [
            ("frozen?", m_frozen_p, [0], Unsafe),
            ("moved?", m_moved_p, [0], Unsafe),
            ("unshare", m_unshare, [0], Unsafe),
            ("dup", m_dup, [0], Unsafe),
            ("__id", m_id, [0], Unsafe),
        ]);
    }
    crate::methods!(ctx, ks, [
        ("new", s_string_new, [0..=1], Unsafe, Singleton),
        ("to_s", m_to_s, [0], Unsafe),
        ("to_str", m_to_s, [0], Unsafe),
        ("bytesize", m_bytesize, [0], Unsafe),
        ("size", m_str_size, [0], Unsafe),
        ("length", m_str_size, [0], Unsafe),
        ("encoding", m_encoding, [0], Unsafe),
        ("getbyte", m_getbyte, [1], Unsafe),
        ("byteslice", m_byteslice, [1..=2], Unsafe),
        ("[]", m_str_aref, [1..=2], Unsafe),
        ("slice", m_str_aref, [1..=2], Unsafe),
        ("==", m_str_eq, [1], Unsafe),
        ("===", m_str_eq, [1], Unsafe),
        ("eql?", m_str_eq, [1], Unsafe),
        ("hash", m_str_hash, [0], Unsafe),
        ("include?", m_str_include_p, [1], Unsafe),
        ("<<", m_str_append, [1], Unsafe),
        ("concat", m_str_append, [0..], Unsafe),
        ("replace", m_str_replace, [1], Unsafe),
        ("clear", m_str_clear, [0], Unsafe),
        ("setbyte", m_setbyte, [2], Unsafe),
    ]);
    crate::methods!(ctx, ka, [
        ("new", s_array_new, [0..=1], Unsafe, Singleton),
        ("size", m_arr_size, [0], Unsafe),
        ("length", m_arr_size, [0], Unsafe),
        ("[]", m_arr_aref, [1..=2], Unsafe),
        ("slice", m_arr_aref, [1..=2], Unsafe),
        ("at", m_at, [1], Unsafe),
        ("==", m_arr_eq, [1], Unsafe),
        ("to_a", m_to_a, [0], Unsafe),
        ("to_ary", m_to_a, [0], Unsafe),
        ("entries", m_to_a, [0], Unsafe),
        ("<<", m_push, [1], Unsafe),
        ("push", m_push, [0..], Unsafe),
        ("append", m_push, [0..], Unsafe),
        ("__aset", m_arr_aset, [2], Unsafe),
        ("pop", m_pop, [0], Unsafe),
        ("shift", m_shift, [0], Unsafe),
        ("clear", m_arr_clear, [0], Unsafe),
        ("replace", m_arr_replace, [1], Unsafe),
    ]);
    crate::methods!(ctx, kh, [
        ("new", s_hash_new, [0..=1], Unsafe, Singleton),
        ("size", m_hash_size, [0], Unsafe),
        ("length", m_hash_size, [0], Unsafe),
        ("[]", m_hash_aref, [1], Unsafe),
        ("==", m_hash_eq, [1], Unsafe),
        ("default", m_default, [0], Unsafe),
        ("key?", m_key_p, [1], Unsafe),
        ("has_key?", m_key_p, [1], Unsafe),
        ("include?", m_key_p, [1], Unsafe),
        ("member?", m_key_p, [1], Unsafe),
        ("[]=", m_hash_aset, [2], Unsafe),
        ("store", m_hash_aset, [2], Unsafe),
        ("delete", m_hash_delete, [1], Unsafe),
        ("clear", m_hash_clear, [0], Unsafe),
        ("replace", m_hash_replace, [1], Unsafe),
        ("__pairs", m_pairs, [0], Unsafe),
    ]);
    crate::core::load::require(ctx, "carmine/teleporter/shared")?;
    Ok(())
}
