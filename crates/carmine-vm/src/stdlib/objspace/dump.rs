//! `ObjectSpace._dump(obj, out)` and `_dump_all(out, full, since, shapes)`: objects as
//! JSON, one line each, in the shape of CRuby's dumps (`address`, `type`, `class`,
//! type-specific fields, `references`, the allocation site when traced, `memsize`).
//!
//! Invariants:
//! - `out` is a String (appended to) or an IO (written to with `write`); a dump is
//!   built in a byte buffer and flushed in chunks, since writing runs Ruby code.
//! - While a heap dump runs, the objects to dump are held by a Ruby Array, so writing
//!   (which may collect) cannot free a slot that is still to be dumped.

use std::io::Write as _;

use super::{memsize_of, references, root_references, site_of};
use crate::core::module::{body, ClassKind};
use crate::core::objspace::type_name;
use crate::core::{array, float, hash, object, string};
use crate::interp::Args;
use crate::object::{basic, ObjType};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Bytes buffered before a heap dump writes to its output.
const FLUSH_AT: usize = 64 * 1024;

fn json_str(out: &mut Vec<u8>, b: &[u8]) {
    out.push(b'"');
    for &c in b {
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0..=0x1f | 0x7f => {
                let _ = write!(out, "\\u{:04x}", c);
            }
            _ => out.push(c),
        }
    }
    out.push(b'"');
}

fn addr(out: &mut Vec<u8>, v: Value) {
    let _ = write!(out, "\"0x{:x}\"", v.raw());
}

/// Appends one dump of `v`: a JSON literal for immediates, an object line otherwise.
fn dump_value(ctx: &mut Ctx, v: Value, out: &mut Vec<u8>) {
    if v.is_nil() {
        out.extend_from_slice(b"null");
    } else if v == Value::TRUE {
        out.extend_from_slice(b"true");
    } else if v == Value::FALSE {
        out.extend_from_slice(b"false");
    } else if let Some(i) = v.as_fixnum() {
        let _ = write!(out, "{i}");
    } else if let Some(id) = v.as_symbol() {
        out.extend_from_slice(b"{\"type\":\"SYMBOL\", \"value\":");
        let name = ctx.sym_name(id);
        json_str(out, &name);
        out.push(b'}');
    } else if v.is_flonum() {
        let s = float::to_s(float::get(v));
        out.extend_from_slice(s.as_bytes());
    } else if v.is_heap() {
        dump_object(ctx, v, out);
    } else {
        out.extend_from_slice(b"null");
    }
}

/// The dump line of heap object `v` (without the newline).
fn dump_object(ctx: &mut Ctx, v: Value, out: &mut Vec<u8>) {
    let b = basic(v);
    let ty = b.obj_type();
    out.extend_from_slice(b"{\"address\":");
    addr(out, v);
    let tname = type_name(ctx, v);
    let _ = write!(out, ", \"type\":\"{}\"", tname.trim_start_matches("T_"));
    if !b.klass.is_nil() {
        out.extend_from_slice(b", \"class\":");
        addr(out, b.klass);
    }
    if object::is_frozen(v) {
        out.extend_from_slice(b", \"frozen\":true");
    }
    match ty {
        ObjType::String => {
            let bytes = string::bytes(v);
            let _ = write!(out, ", \"bytesize\":{}, \"value\":", bytes.len());
            json_str(out, bytes);
            let enc = crate::core::encoding::name(string::encoding(v));
            let _ = write!(out, ", \"encoding\":\"{enc}\"");
        }
        ObjType::Array => {
            let _ = write!(out, ", \"length\":{}", array::len(v));
        }
        ObjType::Hash => {
            let _ = write!(out, ", \"size\":{}", hash::pairs(v).len());
        }
        ObjType::Float => {
            let _ = write!(out, ", \"value\":\"{}\"", float::to_s(float::get(v)));
        }
        ObjType::Object => {
            // SAFETY: the type tag says the slot is an RObject.
            let o = unsafe { &*v.as_ptr::<crate::object::RObject>() };
            let _ = write!(out, ", \"ivars\":{}", o.ivar_capacity());
        }
        ObjType::Class => {
            let cb = body(v);
            if !cb.superclass.is_nil() {
                out.extend_from_slice(b", \"superclass\":");
                addr(out, cb.superclass);
            }
            if let Some(n) = cb.name {
                out.extend_from_slice(b", \"name\":");
                json_str(out, string::bytes(n));
            }
            if cb.kind == ClassKind::Singleton {
                out.extend_from_slice(b", \"singleton\":true");
            }
        }
        ObjType::Iseq => {
            let i = crate::compile::iseq::iseq_of(v);
            out.extend_from_slice(b", \"imemo_type\":\"iseq\", \"name\":");
            json_str(out, i.name.as_bytes());
        }
        ObjType::Env => out.extend_from_slice(b", \"imemo_type\":\"env\""),
        ObjType::Cref => out.extend_from_slice(b", \"imemo_type\":\"cref\""),
        _ => {}
    }
    // The class is a field of its own, not a reference (as in CRuby's dumps).
    let mut refs = references(ctx, v);
    refs.retain(|&r| r != b.klass);
    if !refs.is_empty() {
        out.extend_from_slice(b", \"references\":[");
        for (i, &r) in refs.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            addr(out, r);
        }
        out.push(b']');
    }
    if let Some(site) = site_of(ctx, v) {
        out.extend_from_slice(b", \"file\":");
        json_str(out, site.path.as_bytes());
        let _ = write!(out, ", \"line\":{}", site.line);
        if let Some(m) = site.method_id {
            out.extend_from_slice(b", \"method\":");
            json_str(out, &ctx.sym_name(m));
        }
        let _ = write!(out, ", \"generation\":{}", site.generation);
    }
    let _ = write!(out, ", \"memsize\":{}", memsize_of(ctx, v));
    if b.has(crate::object::FL_EXIVAR) {
        out.extend_from_slice(b", \"flags\":{\"exivar\":true}");
    }
    out.push(b'}');
}

/// Appends `bytes` to `out` (a String) or writes them to it (an IO).
fn emit(ctx: &mut Ctx, out: Value, bytes: &[u8]) -> Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    if string::is_string(out) {
        string::modify(ctx, out)?;
        string::append(out, bytes);
        return Ok(());
    }
    let s = string::new_binary(ctx, bytes);
    let write = ctx.intern("write");
    ctx.call(out, write, &[s])?;
    Ok(())
}

/// `_dump(obj, out)`: returns `out`.
pub fn os_dump(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let (obj, out) = (args.pos[0], args.pos[1]);
    let mut buf = Vec::new();
    dump_value(ctx, obj, &mut buf);
    emit(ctx, out, &buf)?;
    Ok(out)
}

/// `_dump_all(out, full = false, since = nil, shapes = true)`: the roots, then every
/// object (with `full`, free slots too); with `since`, only traced objects of that
/// generation or later. Returns `out`.
pub fn os_dump_all(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let out = args.pos[0];
    let full = args.pos.get(1).is_some_and(|v| v.truthy());
    let since = match args.pos.get(2).copied() {
        None => None,
        Some(v) if v.is_nil() => None,
        Some(v) => {
            let n = crate::core::integer::to_integer_arg(ctx, v)?;
            match n.as_fixnum() {
                Some(n) if n >= 0 => Some(n as u64),
                _ => return Err(ctx.arg_error("since must be a non-negative integer or nil")),
            }
        }
    };
    let mut buf = Vec::new();
    if since.is_none() {
        for (name, refs) in root_references(ctx) {
            let _ = write!(buf, "{{\"type\":\"ROOT\", \"root\":\"{name}\", \"references\":[");
            for (i, &r) in refs.iter().enumerate() {
                if i > 0 {
                    buf.extend_from_slice(b", ");
                }
                addr(&mut buf, r);
            }
            buf.extend_from_slice(b"]}\n");
        }
    }
    let mut objs = Vec::new();
    let mut free = Vec::new();
    ctx.vm().heap.lock().for_each_slot(&mut |p, live| {
        if live {
            objs.push(Value::from_ptr(p));
        } else if full {
            free.push(p as usize);
        }
    });
    // Held by the Array (see the module invariants).
    let held = array::from_vec(ctx, objs);
    for i in 0..array::len(held) {
        let v = array::get(held, i);
        if let Some(g) = since {
            if site_of(ctx, v).is_none_or(|s| s.generation < g) {
                continue;
            }
        }
        dump_object(ctx, v, &mut buf);
        buf.push(b'\n');
        if buf.len() >= FLUSH_AT {
            emit(ctx, out, &buf)?;
            buf.clear();
        }
    }
    for p in free {
        let _ = writeln!(buf, "{{\"address\":\"0x{p:x}\", \"type\":\"NONE\"}}");
    }
    emit(ctx, out, &buf)?;
    Ok(out)
}
