//! `IO::Buffer`: a block of bytes with typed access, read and written from IOs; the buffer
//! a fiber scheduler's `io_read`/`io_write` hooks fill and drain.
//!
//! Invariants:
//! - A buffer's bytes live in exactly one `Store`: its own vector (internal, or "mapped"
//!   when PAGE_SIZE or more was asked for), a String (`IO::Buffer.for`: read-only over a
//!   frozen copy, or writable over the caller's string inside the block), a file mapping
//!   (`IO::Buffer.map`, munmap'd when freed), or a window of another buffer (`slice`),
//!   which resolves its parent's bytes at every access and is invalid once they no longer
//!   cover the window. Nothing holds a raw pointer into a String or another buffer
//!   across Ruby code.
//! - `free` and `transfer` leave a null buffer behind; a locked buffer can be neither
//!   freed, resized nor transferred.

use crate::core::module_methods::define_class_under;
use crate::core::{array, integer, object, string};
use crate::interp::Args;
use crate::object::data_ref;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

const EXTERNAL: i64 = 1;
const INTERNAL: i64 = 2;
const MAPPED: i64 = 4;
const SHARED: i64 = 8;
const LOCKED: i64 = 32;
const PRIVATE: i64 = 64;
const READONLY: i64 = 128;
const LITTLE_ENDIAN: i64 = 4;
const BIG_ENDIAN: i64 = 8;
const DEFAULT_SIZE: usize = 64 * 1024;

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

enum Store {
    Null,
    Own(Vec<u8>),
    Str(Value),
    Map { ptr: *mut u8, len: usize },
    Slice { parent: Value, offset: usize, len: usize },
}

pub struct IoBuffer {
    store: Store,
    flags: i64,
}

crate::data_obj!(IoBuffer, |b, m| {
    match b.store {
        Store::Str(s) => m.mark(s),
        Store::Slice { parent, .. } => m.mark(parent),
        _ => {}
    }
});

impl IoBuffer {
    /// The bytes, or None when a slice's parent no longer covers it.
    fn bytes(&mut self) -> Option<&mut [u8]> {
        match &mut self.store {
            Store::Null => Some(&mut []),
            Store::Own(v) => Some(v.as_mut_slice()),
            Store::Str(s) => Some(&mut string::bytes_mut(*s)[..]),
            // SAFETY: the mapping of len bytes lives until `unmap`.
            Store::Map { ptr, len } => Some(unsafe { std::slice::from_raw_parts_mut(*ptr, *len) }),
            Store::Slice { parent, offset, len } => {
                let (offset, len) = (*offset, *len);
                let p = data_ref::<IoBuffer>(*parent)?;
                p.bytes()?.get_mut(offset..offset + len)
            }
        }
    }

    fn unmap(&mut self) {
        if let Store::Map { ptr, len } = self.store {
            // SAFETY: the mapping made by `map`, unmapped once (the store is replaced).
            unsafe { libc::munmap(ptr as *mut libc::c_void, len) };
        }
        self.store = Store::Null;
    }
}

impl Drop for IoBuffer {
    fn drop(&mut self) {
        self.unmap();
    }
}

// ---- errors and arguments ----

fn error_class(ctx: &mut Ctx, name: &str) -> Value {
    let io = ctx.c().io;
    let buffer = ctx.intern("Buffer");
    let b = crate::core::module::body(io).const_get(buffer).map_or(ctx.c().standard_error, |e| e.value);
    let id = ctx.intern(name);
    crate::core::module::body(b).const_get(id).map_or(ctx.c().standard_error, |e| e.value)
}

fn buffer_error(ctx: &mut Ctx, class: &str, msg: &str) -> crate::error::Unwind {
    let c = error_class(ctx, class);
    ctx.raise(c, msg)
}

fn get<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut IoBuffer> {
    data_ref::<IoBuffer>(v).ok_or_else(|| {
        let name = crate::core::object::type_name_for_error(ctx, v);
        ctx.type_error(&format!("wrong argument type {name} (expected IO::Buffer)"))
    })
}

/// The bytes of buffer `v`, raising for an invalidated slice.
fn bytes_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut [u8]> {
    let b = get(ctx, v)?;
    match b.bytes() {
        // SAFETY: the slice lives in the buffer's store, which outlives this call's use.
        Some(s) => Ok(unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr(), s.len()) }),
        None => Err(buffer_error(ctx, "InvalidatedError", "Buffer has been invalidated!")),
    }
}

fn writable_bytes<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a mut [u8]> {
    if get(ctx, v)?.flags & READONLY != 0 {
        return Err(buffer_error(ctx, "AccessError", "Buffer is not writable!"));
    }
    bytes_of(ctx, v)
}

/// A size or offset argument: an Integer ≥ 0 (`what` names it in the negative message).
fn size_arg(ctx: &mut Ctx, v: Value, what: &str) -> Result<usize> {
    if !integer::is_integer(v) {
        return Err(ctx.type_error("not an Integer"));
    }
    let n = integer::to_i64_arg(ctx, v)?;
    if n < 0 {
        return Err(ctx.arg_error(&format!("{what} can't be negative!")));
    }
    Ok(n as usize)
}

fn opt_size(ctx: &mut Ctx, v: Option<&Value>, what: &str) -> Result<Option<usize>> {
    match v {
        Some(&v) if !v.is_nil() => size_arg(ctx, v, what).map(Some),
        _ => Ok(None),
    }
}

/// `offset` and `length` (defaulting to the rest) checked against `size`.
fn range(ctx: &mut Ctx, size: usize, offset: usize, length: Option<usize>) -> Result<std::ops::Range<usize>> {
    if offset > size {
        return Err(ctx.arg_error("Specified offset exceeds buffer size!"));
    }
    let len = length.unwrap_or(size - offset);
    if offset + len > size {
        return Err(ctx.arg_error("Specified offset+length is bigger than the buffer size!"));
    }
    Ok(offset..offset + len)
}

fn new_buffer(ctx: &mut Ctx, store: Store, flags: i64) -> Value {
    let io = ctx.c().io;
    let id = ctx.intern("Buffer");
    let klass = crate::core::module::body(io).const_get(id).expect("IO::Buffer").value;
    object::new_data(ctx, klass, Box::new(IoBuffer { store, flags }))
}

/// A new internal buffer holding `bytes` (for the scheduler hooks).
pub fn from_bytes(ctx: &mut Ctx, bytes: Vec<u8>) -> Value {
    new_buffer(ctx, Store::Own(bytes), INTERNAL)
}

/// The bytes of a buffer made by `from_bytes` (empty for anything else).
pub fn contents<'a>(v: Value) -> &'a [u8] {
    match data_ref::<IoBuffer>(v).and_then(|b| b.bytes()) {
        // SAFETY: as in `bytes_of`.
        Some(s) => unsafe { std::slice::from_raw_parts(s.as_ptr(), s.len()) },
        None => &[],
    }
}

// ---- construction ----

fn m_initialize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let size = match args.pos.first() {
        Some(&v) => size_arg(ctx, v, "Size")?,
        None => DEFAULT_SIZE,
    };
    let flags = match args.pos.get(1) {
        Some(&v) => {
            if !integer::is_integer(v) {
                return Err(ctx.type_error("not an Integer"));
            }
            let f = integer::to_i64_arg(ctx, v)?;
            if f < 0 {
                return Err(ctx.arg_error("Flags can't be negative!"));
            }
            if size > 0 && f & (INTERNAL | MAPPED) == 0 {
                return Err(buffer_error(ctx, "AllocationError", "Could not allocate buffer!"));
            }
            f
        }
        None if size >= page_size() => MAPPED,
        None => INTERNAL,
    };
    let store = if size == 0 { Store::Null } else { Store::Own(vec![0; size]) };
    let fresh = new_buffer(ctx, store, if size == 0 { 0 } else { flags & !(EXTERNAL | LOCKED) });
    crate::object::move_data(recv, fresh);
    Ok(recv)
}

/// `IO::Buffer.for(string)`: read-only over a frozen copy; with a block, writable over the
/// string itself for the block's duration (its result is returned).
fn s_for(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    match args.block {
        None => {
            let copy = string::new_with_enc(ctx, string::bytes(s).to_vec(), string::encoding(s));
            object::freeze(copy);
            Ok(new_buffer(ctx, Store::Str(copy), EXTERNAL | READONLY))
        }
        Some(b) => {
            let frozen = object::is_frozen(s);
            if !frozen {
                string::modify(ctx, s)?;
            }
            let buf = new_buffer(ctx, Store::Str(s), EXTERNAL | if frozen { READONLY } else { 0 });
            let r = ctx.yield1(&b, buf);
            if let Some(bb) = data_ref::<IoBuffer>(buf) {
                bb.store = Store::Null;
                bb.flags = 0;
            }
            r
        }
    }
}

/// `IO::Buffer.string(length) { |buffer| }`: a new binary String of `length` zero bytes,
/// filled through the buffer.
fn s_string(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let Some(b) = args.block else {
        return Err(ctx.raise(ctx.c().local_jump_error, "no block given"));
    };
    let n = integer::to_i64_arg(ctx, args.pos[0])?;
    if n < 0 || n > isize::MAX as i64 {
        return Err(ctx.arg_error("negative string size (or size too big)"));
    }
    let s = string::new_binary(ctx, &vec![0; n as usize]);
    let buf = new_buffer(ctx, Store::Str(s), EXTERNAL);
    let r = ctx.yield1(&b, buf);
    if let Some(bb) = data_ref::<IoBuffer>(buf) {
        bb.store = Store::Null;
        bb.flags = 0;
    }
    r?;
    Ok(s)
}

/// `IO::Buffer.map(file, size = nil, offset = 0, flags = READONLY)`.
fn s_map(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let io = args.pos[0];
    let fd = crate::core::io::io_ref(io).map(|o| o.fd).ok_or_else(|| ctx.type_error("expected an IO"))?;
    // SAFETY: fstat into a zeroed buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, "fstat"));
    }
    let file_size = st.st_size as usize;
    let size = match args.pos.get(1) {
        Some(&v) if !v.is_nil() => {
            let n = size_arg(ctx, v, "Size")?;
            if n == 0 {
                return Err(ctx.arg_error("Size can't be zero!"));
            }
            if n > file_size && st.st_mode & libc::S_IFMT == libc::S_IFREG {
                return Err(ctx.arg_error(&format!("Size ({n}) can't be larger than file size ({file_size})")));
            }
            n
        }
        _ => {
            if file_size == 0 {
                return Err(ctx.arg_error("Invalid negative or zero file size!"));
            }
            file_size
        }
    };
    let offset = match args.pos.get(2) {
        Some(&v) => {
            let o = integer::to_i64_arg(ctx, v)?;
            if o < 0 {
                return Err(ctx.arg_error(&format!("Offset ({o}) can't be negative!")));
            }
            o as usize
        }
        None => 0,
    };
    let flags = match args.pos.get(3) {
        Some(&v) => integer::to_i64_arg(ctx, v)?,
        None if crate::core::io::io_ref(io).is_some_and(|o| o.writable) => 0,
        None => READONLY,
    };
    let prot = if flags & READONLY != 0 { libc::PROT_READ } else { libc::PROT_READ | libc::PROT_WRITE };
    let share = if flags & PRIVATE != 0 { libc::MAP_PRIVATE } else { libc::MAP_SHARED };
    // SAFETY: a fresh mapping of `size` bytes of the file; failure is checked.
    let ptr = unsafe { libc::mmap(std::ptr::null_mut(), size, prot, share, fd, offset as libc::off_t) };
    if ptr == libc::MAP_FAILED {
        let e = crate::core::process::last_errno();
        return Err(crate::core::process::errno_error(ctx, e, "mmap"));
    }
    let kind = if flags & PRIVATE != 0 { PRIVATE } else { EXTERNAL | SHARED };
    Ok(new_buffer(ctx, Store::Map { ptr: ptr as *mut u8, len: size }, MAPPED | kind | (flags & READONLY)))
}

// ---- state ----

fn flag_p(ctx: &mut Ctx, recv: Value, bit: i64) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.flags & bit != 0))
}

fn m_external_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, EXTERNAL)
}
fn m_internal_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, INTERNAL)
}
fn m_mapped_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, MAPPED)
}
fn m_shared_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, SHARED)
}
fn m_private_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, PRIVATE)
}
fn m_locked_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, LOCKED)
}
fn m_readonly_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    flag_p(ctx, recv, READONLY)
}

fn m_null_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    let b = get(ctx, recv)?;
    let null = match b.store {
        Store::Null => true,
        // A window onto nothing has no memory either.
        Store::Slice { parent, len: 0, .. } => data_ref::<IoBuffer>(parent).is_some_and(|p| matches!(p.store, Store::Null)),
        _ => false,
    };
    Ok(Value::bool(null))
}

fn m_empty_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.bytes().is_none_or(|b| b.is_empty())))
}

fn m_valid_p(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    Ok(Value::bool(get(ctx, recv)?.bytes().is_some()))
}

fn m_size(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    let b = get(ctx, recv)?;
    let n = match &b.store {
        Store::Slice { len, .. } => *len,
        _ => b.bytes().map_or(0, |s| s.len()),
    };
    Ok(Value::fixnum(n as i64))
}

fn m_free(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    let b = get(ctx, recv)?;
    if b.flags & LOCKED != 0 {
        return Err(buffer_error(ctx, "LockedError", "Buffer is locked!"));
    }
    b.unmap();
    b.flags = 0;
    Ok(recv)
}

fn m_locked(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let b = get(ctx, recv)?;
    if b.flags & LOCKED != 0 {
        return Err(buffer_error(ctx, "LockedError", "Buffer already locked!"));
    }
    b.flags |= LOCKED;
    let r = match args.block {
        Some(blk) => ctx.yield1(&blk, recv),
        None => Err(ctx.raise(ctx.c().local_jump_error, "no block given")),
    };
    if let Some(b) = data_ref::<IoBuffer>(recv) {
        b.flags &= !LOCKED;
    }
    r
}

fn m_resize(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let size = size_arg(ctx, args.pos[0], "Size")?;
    let b = get(ctx, recv)?;
    if b.flags & LOCKED != 0 {
        return Err(buffer_error(ctx, "LockedError", "Cannot resize locked buffer!"));
    }
    match &mut b.store {
        Store::Own(v) => v.resize(size, 0),
        Store::Null => {
            b.store = Store::Own(vec![0; size]);
            b.flags = if size >= page_size() { MAPPED } else { INTERNAL };
        }
        Store::Map { .. } if b.flags & PRIVATE != 0 => {
            let mut bytes = b.bytes().map(|s| s.to_vec()).unwrap_or_default();
            bytes.resize(size, 0);
            b.unmap();
            b.store = Store::Own(bytes);
            b.flags = MAPPED;
        }
        _ => return Err(buffer_error(ctx, "AccessError", "Cannot resize external buffer!")),
    }
    if size == 0 {
        b.store = Store::Null;
    }
    Ok(recv)
}

/// `transfer`: a new buffer takes this one's bytes; this one becomes null.
fn m_transfer(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    let b = get(ctx, recv)?;
    if b.flags & LOCKED != 0 {
        return Err(buffer_error(ctx, "LockedError", "Cannot transfer ownership of locked buffer!"));
    }
    let store = std::mem::replace(&mut b.store, Store::Null);
    let flags = std::mem::replace(&mut b.flags, 0);
    Ok(new_buffer(ctx, store, flags))
}

fn m_slice(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let size = bytes_of(ctx, recv)?.len();
    let offset = opt_size(ctx, args.pos.first(), "Offset")?.unwrap_or(0);
    let length = opt_size(ctx, args.pos.get(1), "Length")?;
    let r = range(ctx, size, offset, length)?;
    let flags = get(ctx, recv)?.flags & READONLY;
    Ok(new_buffer(ctx, Store::Slice { parent: recv, offset: r.start, len: r.len() }, EXTERNAL | flags))
}

// ---- contents ----

fn m_get_string(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let bytes = bytes_of(ctx, recv)?;
    let offset = opt_size(ctx, args.pos.first(), "Offset")?.unwrap_or(0);
    let length = opt_size(ctx, args.pos.get(1), "Length")?;
    let r = range(ctx, bytes.len(), offset, length)?;
    let enc = match args.pos.get(2) {
        Some(&e) => crate::core::encoding::encoding_arg(ctx, e)?,
        None => crate::core::encoding::BINARY,
    };
    Ok(string::new_with_enc(ctx, bytes[r].to_vec(), enc))
}

/// Copies `src` (from argument 3, the source offset, for argument 2 bytes, default the
/// rest) into the buffer at argument 1; the count.
fn copy_in(ctx: &mut Ctx, recv: Value, src: &[u8], args: &Args) -> Result<Value> {
    let offset = opt_size(ctx, args.pos.get(1), "Offset")?.unwrap_or(0);
    let src_offset = opt_size(ctx, args.pos.get(3), "Offset")?.unwrap_or(0);
    if src_offset > src.len() {
        return Err(ctx.arg_error("Specified source offset exceeds source size!"));
    }
    let length = opt_size(ctx, args.pos.get(2), "Length")?.unwrap_or(src.len() - src_offset);
    if src_offset + length > src.len() {
        return Err(ctx.arg_error("Specified source offset+length exceeds source size!"));
    }
    let dst = writable_bytes(ctx, recv)?;
    let r = range(ctx, dst.len(), offset, Some(length))?;
    dst[r].copy_from_slice(&src[src_offset..src_offset + length]);
    Ok(Value::fixnum(length as i64))
}

/// `set_string(string, offset = 0, length = string.bytesize, source_offset = 0)`.
fn m_set_string(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let s = string::to_str_arg(ctx, args.pos[0])?;
    let src = string::bytes(s).to_vec();
    copy_in(ctx, recv, &src, args)
}

/// `copy(source_buffer, offset = 0, length = source.size, source_offset = 0)`.
fn m_copy(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let src = bytes_of(ctx, args.pos[0])?.to_vec();
    copy_in(ctx, recv, &src, args)
}

/// `clear(value = 0, offset = 0, length = nil)`.
fn m_clear(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let value = match args.pos.first() {
        Some(&v) => integer::to_i64_arg(ctx, v)? as u8,
        None => 0,
    };
    let offset = opt_size(ctx, args.pos.get(1), "Offset")?.unwrap_or(0);
    let length = opt_size(ctx, args.pos.get(2), "Length")?;
    let dst = writable_bytes(ctx, recv)?;
    let r = range(ctx, dst.len(), offset, length)?;
    dst[r].fill(value);
    Ok(recv)
}

// ---- typed values ----

#[derive(Clone, Copy)]
enum Kind {
    Int { size: usize, signed: bool, big: bool },
    Float { size: usize, big: bool },
}

fn kind_of(ctx: &mut Ctx, v: Value) -> Result<Kind> {
    let name = match v.as_symbol() {
        Some(id) => String::from_utf8_lossy(&ctx.sym_name(id)).into_owned(),
        None => return Err(ctx.arg_error("Invalid type name!")),
    };
    let big = name.chars().next().is_some_and(|c| c.is_ascii_uppercase()) && name != "U8" && name != "S8";
    let k = match name.as_str() {
        "U8" => Kind::Int { size: 1, signed: false, big: false },
        "S8" => Kind::Int { size: 1, signed: true, big: false },
        "u16" | "U16" => Kind::Int { size: 2, signed: false, big },
        "s16" | "S16" => Kind::Int { size: 2, signed: true, big },
        "u32" | "U32" => Kind::Int { size: 4, signed: false, big },
        "s32" | "S32" => Kind::Int { size: 4, signed: true, big },
        "u64" | "U64" => Kind::Int { size: 8, signed: false, big },
        "s64" | "S64" => Kind::Int { size: 8, signed: true, big },
        "f32" | "F32" => Kind::Float { size: 4, big },
        "f64" | "F64" => Kind::Float { size: 8, big },
        _ => return Err(ctx.arg_error(&format!("Invalid type name: {name}!"))),
    };
    Ok(k)
}

fn kind_size(k: Kind) -> usize {
    match k {
        Kind::Int { size, .. } | Kind::Float { size, .. } => size,
    }
}

fn read_value(ctx: &mut Ctx, k: Kind, b: &[u8]) -> Value {
    let mut raw = [0u8; 8];
    let n = kind_size(k);
    raw[..n].copy_from_slice(&b[..n]);
    let big = matches!(k, Kind::Int { big: true, .. } | Kind::Float { big: true, .. });
    if big {
        raw[..n].reverse();
    }
    let bits = u64::from_le_bytes(raw);
    match k {
        Kind::Int { size, signed: true, .. } => {
            let shift = 64 - size * 8;
            Value::fixnum(((bits << shift) as i64) >> shift)
        }
        Kind::Int { size: 8, signed: false, .. } => crate::core::bignum::from_i128(ctx, bits as i128),
        Kind::Int { .. } => Value::fixnum(bits as i64),
        Kind::Float { size: 4, .. } => crate::core::float::new(ctx, f32::from_bits(bits as u32) as f64),
        Kind::Float { .. } => crate::core::float::new(ctx, f64::from_bits(bits)),
    }
}

fn write_value(ctx: &mut Ctx, k: Kind, dst: &mut [u8], v: Value) -> Result<()> {
    let n = kind_size(k);
    let (bits, big) = match k {
        Kind::Int { big, .. } => ({ if !integer::is_integer(v) { return Err(ctx.type_error("not an Integer")); } crate::core::bignum::low_u64_any(v) }, big),
        Kind::Float { size: 4, big } => ((crate::core::numeric::to_f64(ctx, v)? as f32).to_bits() as u64, big),
        Kind::Float { big, .. } => (crate::core::numeric::to_f64(ctx, v)?.to_bits(), big),
    };
    let mut raw = bits.to_le_bytes();
    if big {
        raw[..n].reverse();
    }
    dst[..n].copy_from_slice(&raw[..n]);
    Ok(())
}

fn m_get_value(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let k = kind_of(ctx, args.pos[0])?;
    let offset = size_arg(ctx, args.pos[1], "Offset")?;
    let bytes = bytes_of(ctx, recv)?;
    let r = range(ctx, bytes.len(), offset, Some(kind_size(k)))?;
    Ok(read_value(ctx, k, &bytes[r]))
}

fn m_set_value(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let k = kind_of(ctx, args.pos[0])?;
    let offset = size_arg(ctx, args.pos[1], "Offset")?;
    let bytes = writable_bytes(ctx, recv)?;
    let r = range(ctx, bytes.len(), offset, Some(kind_size(k)))?;
    write_value(ctx, k, &mut bytes[r.clone()], args.pos[2])?;
    Ok(Value::fixnum(r.end as i64))
}

/// `each(type = :U8, offset = 0, count = nil) { |offset, value| }`.
fn m_each(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let k = match args.pos.first() {
        Some(&t) => kind_of(ctx, t)?,
        None => Kind::Int { size: 1, signed: false, big: false },
    };
    let Some(blk) = args.block else {
        return crate::core::enumerator::enum_for(ctx, recv, "each", &args.pos, None);
    };
    let mut offset = opt_size(ctx, args.pos.get(1), "Offset")?.unwrap_or(0);
    let mut count = opt_size(ctx, args.pos.get(2), "Count")?;
    let step = kind_size(k);
    loop {
        if count == Some(0) {
            break;
        }
        let bytes = bytes_of(ctx, recv)?;
        if offset + step > bytes.len() {
            break;
        }
        let v = read_value(ctx, k, &bytes[offset..offset + step]);
        ctx.yield_block(&blk, &[Value::fixnum(offset as i64), v])?;
        offset += step;
        count = count.map(|c| c - 1);
    }
    Ok(recv)
}

fn m_values(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let k = match args.pos.first() {
        Some(&t) => kind_of(ctx, t)?,
        None => Kind::Int { size: 1, signed: false, big: false },
    };
    let offset = opt_size(ctx, args.pos.get(1), "Offset")?.unwrap_or(0);
    let count = opt_size(ctx, args.pos.get(2), "Count")?;
    let step = kind_size(k);
    let out = array::new(ctx);
    let bytes = bytes_of(ctx, recv)?;
    let avail = bytes.len().saturating_sub(offset) / step;
    let n = count.unwrap_or(avail);
    if n > avail {
        return Err(ctx.arg_error("Specified offset+length is bigger than the buffer size!"));
    }
    for i in 0..n {
        let at = offset + i * step;
        let v = read_value(ctx, k, &bytes[at..at + step]);
        array::push(ctx, out, v);
    }
    Ok(out)
}

// ---- bitwise operators ----

fn mask_of<'a>(ctx: &mut Ctx, v: Value) -> Result<&'a [u8]> {
    let m = bytes_of(ctx, v)?;
    if m.is_empty() {
        return Err(buffer_error(ctx, "MaskError", "Zero-length mask given!"));
    }
    Ok(m)
}

fn binary_op(ctx: &mut Ctx, recv: Value, mask: Value, in_place: bool, f: fn(u8, u8) -> u8) -> Result<Value> {
    let m = mask_of(ctx, mask)?.to_vec();
    let out = if in_place {
        recv
    } else {
        let bytes = bytes_of(ctx, recv)?.to_vec();
        from_bytes(ctx, bytes)
    };
    let dst = writable_bytes(ctx, out)?;
    for (i, b) in dst.iter_mut().enumerate() {
        *b = f(*b, m[i % m.len()]);
    }
    Ok(out)
}

fn m_and(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    binary_op(ctx, recv, args.pos[0], false, |a, b| a & b)
}
fn m_or(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    binary_op(ctx, recv, args.pos[0], false, |a, b| a | b)
}
fn m_xor(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    binary_op(ctx, recv, args.pos[0], false, |a, b| a ^ b)
}
fn m_and_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    binary_op(ctx, recv, args.pos[0], true, |a, b| a & b)
}
fn m_or_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    binary_op(ctx, recv, args.pos[0], true, |a, b| a | b)
}
fn m_xor_bang(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    binary_op(ctx, recv, args.pos[0], true, |a, b| a ^ b)
}

fn m_not(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    let bytes: Vec<u8> = bytes_of(ctx, recv)?.iter().map(|b| !b).collect();
    Ok(from_bytes(ctx, bytes))
}

fn m_not_bang(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    for b in writable_bytes(ctx, recv)?.iter_mut() {
        *b = !*b;
    }
    Ok(recv)
}

fn m_cmp(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let a = bytes_of(ctx, recv)?;
    let b = bytes_of(ctx, args.pos[0])?;
    Ok(Value::fixnum((*a).cmp(&*b) as i64))
}

fn m_to_s(ctx: &mut Ctx, recv: Value, _a: &Args) -> Result<Value> {
    let b = get(ctx, recv)?;
    let flags = b.flags;
    let (addr, size, valid) = match b.bytes() {
        Some(s) => (s.as_ptr() as usize, s.len(), true),
        None => (0, 0, false),
    };
    let mut s = format!("#<IO::Buffer 0x{addr:016x}+{size}");
    for (bit, name) in [(EXTERNAL, "EXTERNAL"), (INTERNAL, "INTERNAL"), (MAPPED, "MAPPED"), (SHARED, "SHARED"), (LOCKED, "LOCKED"), (PRIVATE, "PRIVATE"), (READONLY, "READONLY")] {
        if flags & bit != 0 {
            s.push(' ');
            s.push_str(name);
        }
    }
    if matches!(b.store, Store::Null) {
        s.push_str(" NULL");
    }
    if !valid {
        s.push_str(" INVALID");
    }
    s.push('>');
    Ok(string::new_utf8(ctx, &s))
}

// ---- IO ----

fn nonblocking(fd: i32) -> bool {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    unsafe { libc::fcntl(fd, libc::F_GETFL) & libc::O_NONBLOCK != 0 }
}

/// A system call's count, or after a failure the count so far (else the errno negated),
/// as IO::Buffer's IO methods return them.
fn count_or_errno(total: usize, errno: i32) -> Value {
    Value::fixnum(if total > 0 { total as i64 } else { -(errno as i64) })
}

/// Bytes read from `io` into the buffer at `offset`: at least `length` unless the end
/// comes first (0 = one read of whatever is there); the count, or -errno. A non-blocking
/// fiber's scheduler does it if it has `io_read`; a descriptor in O_NONBLOCK mode answers
/// -EAGAIN instead of waiting. `at`: pread(2) from that file position.
fn transfer_in(ctx: &mut Ctx, recv: Value, io: Value, length: usize, offset: usize, at: Option<i64>) -> Result<Value> {
    let size = writable_bytes(ctx, recv)?.len();
    let r = range(ctx, size, offset, None)?;
    if length > r.len() {
        return Err(ctx.arg_error("Specified offset+length is bigger than the buffer size!"));
    }
    crate::core::io::check_readable(ctx, io)?;
    if at.is_none() {
        if let Some((s, hook)) = crate::core::io::scheduler_with_hook(ctx, "io_read") {
            return ctx.call(s, hook, &[io, recv, Value::fixnum(length as i64), Value::fixnum(offset as i64)]);
        }
    }
    let fd = crate::core::io::io_ref(io).map_or(-1, |o| o.fd);
    let mut total = 0;
    loop {
        let want = r.len() - total;
        if at.is_none() {
            let o = crate::core::io::io_ref(io).expect("io");
            let buffered = crate::core::io::take_buffered(o, want);
            if !buffered.is_empty() {
                let dst = bytes_of(ctx, recv)?;
                dst[r.start + total..r.start + total + buffered.len()].copy_from_slice(&buffered);
                total += buffered.len();
                if total >= length.max(1) || total == r.len() {
                    return Ok(Value::fixnum(total as i64));
                }
                continue;
            }
            if !nonblocking(fd) {
                crate::thread::sched::wait_readable(ctx, fd)?;
            }
        }
        let dst = bytes_of(ctx, recv)?;
        let slot = &mut dst[r.start + total..r.end];
        // SAFETY: slot is writable for slot.len() bytes.
        let n = unsafe {
            match at {
                Some(pos) => libc::pread(fd, slot.as_mut_ptr() as *mut libc::c_void, slot.len(), pos + total as i64),
                None => libc::read(fd, slot.as_mut_ptr() as *mut libc::c_void, slot.len()),
            }
        };
        if n < 0 {
            match crate::core::process::last_errno() {
                libc::EINTR => continue,
                e => return Ok(count_or_errno(total, e)),
            }
        }
        total += n as usize;
        if n == 0 || total >= length.max(1) || total == r.len() {
            return Ok(Value::fixnum(total as i64));
        }
    }
}

fn m_read(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let length = opt_size(ctx, args.pos.get(1), "Length")?.unwrap_or(0);
    let offset = opt_size(ctx, args.pos.get(2), "Offset")?.unwrap_or(0);
    transfer_in(ctx, recv, args.pos[0], length, offset, None)
}

fn m_pread(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let from = integer::to_i64_arg(ctx, args.pos[1])?;
    let length = opt_size(ctx, args.pos.get(2), "Length")?.unwrap_or(0);
    let offset = opt_size(ctx, args.pos.get(3), "Offset")?.unwrap_or(0);
    transfer_in(ctx, recv, args.pos[0], length, offset, Some(from))
}

/// `length` bytes (default: the rest) from `offset` written to `io`; the count, or -errno.
/// As `transfer_in`: the scheduler's `io_write` if it has one; -EAGAIN from a descriptor
/// in O_NONBLOCK mode that is full.
fn transfer_out(ctx: &mut Ctx, recv: Value, io: Value, length: Option<usize>, offset: usize, at: Option<i64>) -> Result<Value> {
    let size = bytes_of(ctx, recv)?.len();
    let r = range(ctx, size, offset, length)?;
    if crate::core::io::io_ref(io).is_none_or(|o| o.closed || !o.writable) {
        let e = ctx.c().io_error;
        return Err(ctx.raise(e, if crate::core::io::io_ref(io).is_some_and(|o| o.closed) { "closed stream" } else { "not opened for writing" }));
    }
    crate::core::io::flush_value(ctx, io)?;
    if at.is_none() {
        if let Some((s, hook)) = crate::core::io::scheduler_with_hook(ctx, "io_write") {
            return ctx.call(s, hook, &[io, recv, Value::fixnum(r.len() as i64), Value::fixnum(offset as i64)]);
        }
    }
    let fd = crate::core::io::io_ref(io).map_or(-1, |o| o.fd);
    let mut done = 0;
    while done < r.len() {
        if at.is_none() && !nonblocking(fd) {
            crate::thread::sched::wait_writable(ctx, fd)?;
        }
        let data = &bytes_of(ctx, recv)?[r.start + done..r.end];
        // SAFETY: data is readable for its length.
        let n = unsafe {
            match at {
                Some(pos) => libc::pwrite(fd, data.as_ptr() as *const libc::c_void, data.len(), pos + done as i64),
                None => libc::write(fd, data.as_ptr() as *const libc::c_void, data.len()),
            }
        };
        if n < 0 {
            match crate::core::process::last_errno() {
                libc::EINTR => continue,
                e => return Ok(count_or_errno(done, e)),
            }
        }
        done += n as usize;
    }
    Ok(Value::fixnum(done as i64))
}

fn m_write(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let length = opt_size(ctx, args.pos.get(1), "Length")?;
    let offset = opt_size(ctx, args.pos.get(2), "Offset")?.unwrap_or(0);
    transfer_out(ctx, recv, args.pos[0], length, offset, None)
}

fn m_pwrite(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let from = integer::to_i64_arg(ctx, args.pos[1])?;
    let length = opt_size(ctx, args.pos.get(2), "Length")?;
    let offset = opt_size(ctx, args.pos.get(3), "Offset")?.unwrap_or(0);
    transfer_out(ctx, recv, args.pos[0], length, offset, Some(from))
}

pub fn init(ctx: &mut Ctx) {
    let io = ctx.c().io;
    let obj = ctx.c().object;
    let b = define_class_under(ctx, io, "Buffer", obj);
    crate::core::module::body(b).alloc = crate::core::module::AllocKind::Data(crate::object::alloc_uninitialized);
    let comparable = ctx.c().comparable;
    crate::core::module::body(b).includes.push(comparable);
    let little = cfg!(target_endian = "little");
    for (name, v) in [
        ("EXTERNAL", EXTERNAL),
        ("INTERNAL", INTERNAL),
        ("MAPPED", MAPPED),
        ("SHARED", SHARED),
        ("LOCKED", LOCKED),
        ("PRIVATE", PRIVATE),
        ("READONLY", READONLY),
        ("LITTLE_ENDIAN", LITTLE_ENDIAN),
        ("BIG_ENDIAN", BIG_ENDIAN),
        ("HOST_ENDIAN", if little { LITTLE_ENDIAN } else { BIG_ENDIAN }),
        ("NETWORK_ENDIAN", BIG_ENDIAN),
        ("PAGE_SIZE", page_size() as i64),
        ("DEFAULT_SIZE", DEFAULT_SIZE as i64),
    ] {
        let id = ctx.intern(name);
        crate::core::module::body(b).const_set(id, Value::fixnum(v));
    }
    let std_err = ctx.c().standard_error;
    for name in ["LockedError", "AllocationError", "AccessError", "InvalidatedError", "MaskError"] {
        let base = if name == "AllocationError" { ctx.c().no_memory_error } else { std_err };
        define_class_under(ctx, b, name, base);
    }
    crate::methods!(ctx, b, [
        ("for", s_for, [1], Safe, Singleton),
        ("string", s_string, [1], Safe, Singleton),
        ("map", s_map, [1..=4], Unsafe, Singleton),
        ("initialize", m_initialize, [0..=2], Safe, Private),
        ("external?", m_external_p, [0], Safe),
        ("internal?", m_internal_p, [0], Safe),
        ("mapped?", m_mapped_p, [0], Safe),
        ("shared?", m_shared_p, [0], Safe),
        ("private?", m_private_p, [0], Safe),
        ("locked?", m_locked_p, [0], Safe),
        ("readonly?", m_readonly_p, [0], Safe),
        ("null?", m_null_p, [0], Safe),
        ("empty?", m_empty_p, [0], Safe),
        ("valid?", m_valid_p, [0], Safe),
        ("size", m_size, [0], Safe),
        ("free", m_free, [0], Safe),
        ("locked", m_locked, [0], Safe),
        ("resize", m_resize, [1], Safe),
        ("transfer", m_transfer, [0], Safe),
        ("slice", m_slice, [0..=2], Safe),
        ("get_string", m_get_string, [0..=3], Safe),
        ("set_string", m_set_string, [1..=4], Safe),
        ("copy", m_copy, [1..=4], Safe),
        ("clear", m_clear, [0..=3], Safe),
        ("get_value", m_get_value, [2], Safe),
        ("set_value", m_set_value, [3], Safe),
        ("each", m_each, [0..=3], Safe),
        ("values", m_values, [0..=3], Safe),
        ("&", m_and, [1], Safe),
        ("|", m_or, [1], Safe),
        ("^", m_xor, [1], Safe),
        ("~", m_not, [0], Safe),
        ("and!", m_and_bang, [1], Safe),
        ("or!", m_or_bang, [1], Safe),
        ("xor!", m_xor_bang, [1], Safe),
        ("not!", m_not_bang, [0], Safe),
        ("<=>", m_cmp, [1], Safe),
        ("to_s", m_to_s, [0], Safe),
        ("inspect", m_to_s, [0], Safe),
        ("read", m_read, [1..=3], Unsafe),
        ("pread", m_pread, [2..=4], Unsafe),
        ("write", m_write, [1..=3], Unsafe),
        ("pwrite", m_pwrite, [2..=4], Unsafe),
    ]);
}
