//! `String#unpack` / `#unpack1`: CRuby's template directives decoded over a byte string.
//!
//! Templates are parsed by `pack::parse_template` and decoded with `pack.rs`'s codecs, so
//! pack and unpack agree on directives, layouts and errors.
//!
//! Invariants: the subject's bytes are copied before decoding (a block may run between
//! results); results are collected in a Ruby Array as they are made. The read position
//! follows CRuby's `pack_unpack_internal`: a `*` count means "the rest of the string" for
//! every directive, and a count beyond the end yields nils for fixed-size items.

use crate::core::encoding::{BINARY, US_ASCII};
use crate::core::pack::{self, Count};
use crate::core::{array, bignum, float, integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Decodes one UTF-8 character for `U` (CRuby's `utf8_to_uv` errors).
fn utf8_char(ctx: &mut Ctx, b: &[u8]) -> Result<(u32, usize)> {
    let c = b[0];
    if c < 0x80 {
        return Ok((c as u32, 1));
    }
    let (n, init) = match c {
        0xc0..=0xdf => (2, (c & 0x1f) as u32),
        0xe0..=0xef => (3, (c & 0x0f) as u32),
        0xf0..=0xf7 => (4, (c & 0x07) as u32),
        0xf8..=0xfb => (5, (c & 0x03) as u32),
        0xfc..=0xfd => (6, (c & 0x01) as u32),
        _ => return Err(ctx.arg_error("malformed UTF-8 character")),
    };
    if b.len() < n {
        return Err(ctx.arg_error(&format!("malformed UTF-8 character (expected {n} bytes, given {} bytes)", b.len())));
    }
    let mut v = init;
    for &cc in &b[1..n] {
        if cc & 0xc0 != 0x80 {
            return Err(ctx.arg_error("malformed UTF-8 character"));
        }
        v = (v << 6) | (cc & 0x3f) as u32;
    }
    let min = [0, 0, 0x80, 0x800, 0x10000, 0x200000, 0x4000000][n];
    if v < min {
        return Err(ctx.arg_error("redundant UTF-8 sequence"));
    }
    Ok((v, n))
}

/// What the decoded values go to: an Array, or (unpack1) only the first value.
struct Sink {
    out: Value,
    single: bool,
}

impl Sink {
    fn push(&self, ctx: &mut Ctx, v: Value) {
        array::push(ctx, self.out, v);
    }

    fn done(&self) -> bool {
        self.single && array::len(self.out) > 0
    }
}

/// Fixed-size items (integers, floats): `len` items of `size` bytes from `p`, and nils for
/// the requested items past the end (not with `*`, nor for unpack1).
fn fixed_items(ctx: &mut Ctx, sink: &Sink, b: &[u8], p: &mut usize, len: usize, star: bool, size: usize, decode: &dyn Fn(&mut Ctx, &[u8]) -> Value) {
    let avail = (b.len() - *p) / size;
    let n = len.min(avail);
    for _ in 0..n {
        let v = decode(ctx, &b[*p..*p + size]);
        sink.push(ctx, v);
        *p += size;
        if sink.done() {
            return;
        }
    }
    if !star && len > avail && !sink.single {
        for _ in avail..len {
            sink.push(ctx, Value::NIL);
        }
    }
}

/// Unpacks `b` from byte `offset` with template `fmt`, collecting results into a new Array.
fn unpack_bytes(ctx: &mut Ctx, recv: Value, b: &[u8], fmt: &[u8], offset: usize, single: bool) -> Result<Value> {
    let dirs = pack::parse_template(ctx, fmt, "unpack")?;
    let sink = Sink { out: array::new(ctx), single };
    let mut p = offset;
    for d in dirs {
        if sink.done() {
            break;
        }
        let rest = b.len() - p;
        let star = d.count == Count::Star;
        // CRuby: `*` is the remaining length; without a count, 1 (0 for `@`).
        let len = match d.count {
            Count::Star => rest,
            Count::N(n) => n,
        };
        match d.kind {
            b'a' | b'A' | b'Z' => {
                let len = len.min(rest);
                let piece = &b[p..p + len];
                let (piece, adv) = match d.kind {
                    b'A' => {
                        let e = piece.iter().rposition(|&c| c != b' ' && c != 0).map_or(0, |e| e + 1);
                        (&piece[..e], len)
                    }
                    b'Z' => match piece.iter().position(|&c| c == 0) {
                        Some(z) => (&piece[..z], if star { z + 1 } else { len }),
                        None => (piece, len),
                    },
                    _ => (piece, len),
                };
                let v = string::new_with_enc(ctx, piece.to_vec(), BINARY);
                sink.push(ctx, v);
                p += adv;
            }
            b'b' | b'B' => {
                let bits = if star { rest * 8 } else { len.min(rest * 8) };
                let s: Vec<u8> = (0..bits)
                    .map(|i| {
                        let byte = b[p + i / 8];
                        let bit = if d.kind == b'b' { (byte >> (i % 8)) & 1 } else { (byte >> (7 - i % 8)) & 1 };
                        b'0' + bit
                    })
                    .collect();
                let v = string::new_with_enc(ctx, s, US_ASCII);
                sink.push(ctx, v);
                p += bits.div_ceil(8);
            }
            b'h' | b'H' => {
                let nibbles = if star { rest * 2 } else { len.min(rest * 2) };
                let s: Vec<u8> = (0..nibbles)
                    .map(|i| {
                        let byte = b[p + i / 2];
                        let nib = if (d.kind == b'h') == (i % 2 == 0) { byte & 0xf } else { byte >> 4 };
                        b"0123456789abcdef"[nib as usize]
                    })
                    .collect();
                let v = string::new_with_enc(ctx, s, US_ASCII);
                sink.push(ctx, v);
                p += nibbles.div_ceil(2);
            }
            b'U' => {
                let mut k = len.min(rest);
                while k > 0 && p < b.len() && !sink.done() {
                    let (cp, n) = utf8_char(ctx, &b[p..])?;
                    sink.push(ctx, Value::fixnum(cp as i64));
                    p += n;
                    k -= 1;
                }
            }
            b'w' => {
                let mut k = len;
                while k > 0 && !sink.done() {
                    let Some((n, used)) = pack::ber_decode(&b[p..]) else { break };
                    let v = bignum::normalize(ctx, n);
                    sink.push(ctx, v);
                    p += used;
                    k -= 1;
                }
            }
            b'm' => {
                let (v, used) = if d.count == Count::N(0) {
                    match pack::b64_decode_strict(&b[p..]) {
                        Some(v) => (v, rest),
                        None => return Err(ctx.arg_error("invalid base64")),
                    }
                } else {
                    pack::b64_decode_prefix(&b[p..])
                };
                let s = string::new_with_enc(ctx, v, BINARY);
                sink.push(ctx, s);
                p += used;
            }
            b'M' => {
                let v = pack::qp_decode(&b[p..]);
                let s = string::new_with_enc(ctx, v, BINARY);
                sink.push(ctx, s);
                p = b.len();
            }
            b'u' => {
                let (v, used) = pack::uu_decode_prefix(&b[p..]);
                let s = string::new_with_enc(ctx, v, BINARY);
                sink.push(ctx, s);
                p += used;
            }
            b'x' => {
                if len > rest {
                    return Err(ctx.arg_error("x outside of string"));
                }
                p += len;
            }
            b'X' => {
                if len > p {
                    return Err(ctx.arg_error("X outside of string"));
                }
                p -= len;
            }
            b'@' => {
                // Absolute, from the start of the string (not from `offset:`).
                if len > b.len() {
                    return Err(ctx.arg_error("@ outside of string"));
                }
                p = len;
            }
            b'P' => {
                const PTR: usize = std::mem::size_of::<usize>();
                if rest >= PTR {
                    let addr = read_pointer(&b[p..p + PTR]);
                    p += PTR;
                    let v = if addr == 0 {
                        Value::NIL
                    } else {
                        // The whole string is the associated object itself; a part of
                        // it is a new binary string.
                        let s = associated(ctx, recv, addr)?;
                        let bytes = string::bytes(s);
                        if len >= bytes.len() {
                            s
                        } else {
                            let piece = bytes[..len].to_vec();
                            string::new_with_enc(ctx, piece, BINARY)
                        }
                    };
                    sink.push(ctx, v);
                }
            }
            b'p' => {
                const PTR: usize = std::mem::size_of::<usize>();
                let mut k = len.min(rest / PTR);
                while k > 0 && !sink.done() {
                    let addr = read_pointer(&b[p..p + PTR]);
                    p += PTR;
                    let v = if addr == 0 { Value::NIL } else { associated(ctx, recv, addr)? };
                    sink.push(ctx, v);
                    k -= 1;
                }
            }
            _ => {
                if let Some((size, big)) = pack::float_layout(&d) {
                    fixed_items(ctx, &sink, b, &mut p, len, star, size, &|ctx, c| {
                        let f = if size == 8 {
                            let a: [u8; 8] = c.try_into().unwrap_or([0; 8]);
                            if big {
                                f64::from_be_bytes(a)
                            } else {
                                f64::from_le_bytes(a)
                            }
                        } else {
                            let a: [u8; 4] = c.try_into().unwrap_or([0; 4]);
                            (if big { f32::from_be_bytes(a) } else { f32::from_le_bytes(a) }) as f64
                        };
                        float::new(ctx, f)
                    });
                } else if let Some(layout) = pack::int_layout(&d) {
                    fixed_items(ctx, &sink, b, &mut p, len, star, layout.size, &|ctx, c| bignum::from_i128(ctx, pack::decode_int(c, layout)));
                }
            }
        }
    }
    Ok(sink.out)
}

fn read_pointer(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    let n = b.len().min(8);
    a[..n].copy_from_slice(&b[..n]);
    u64::from_ne_bytes(a)
}

/// The String a `p`/`P` pointer in `packed` refers to (see `pack::associated_string`).
fn associated(ctx: &mut Ctx, packed: Value, addr: u64) -> Result<Value> {
    match pack::associated_string(ctx, packed, addr) {
        Some(s) => Ok(s),
        None => Err(ctx.arg_error("no associated pointer")),
    }
}

fn offset_arg(ctx: &mut Ctx, args: &Args, len: usize) -> Result<usize> {
    match args.kwarg(ctx, "offset") {
        Some(o) => {
            let o = integer::to_i64_arg(ctx, o)?;
            if o < 0 {
                return Err(ctx.arg_error("offset can't be negative"));
            }
            if o as u64 > len as u64 {
                return Err(ctx.arg_error("offset outside of string"));
            }
            Ok(o as usize)
        }
        None => Ok(0),
    }
}

fn unpack(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fmt = string::to_str_arg(ctx, args.pos[0])?;
    let fb = string::bytes(fmt).to_vec();
    let b = string::bytes(recv).to_vec();
    let off = offset_arg(ctx, args, b.len())?;
    let out = unpack_bytes(ctx, recv, &b, &fb, off, false)?;
    if let Some(blk) = args.block {
        let mut i = 0;
        while i < array::len(out) {
            let v = array::get(out, i);
            ctx.yield1(&blk, v)?;
            i += 1;
        }
        return Ok(Value::NIL);
    }
    Ok(out)
}

fn unpack1(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let fmt = string::to_str_arg(ctx, args.pos[0])?;
    let fb = string::bytes(fmt).to_vec();
    let b = string::bytes(recv).to_vec();
    let off = offset_arg(ctx, args, b.len())?;
    let out = unpack_bytes(ctx, recv, &b, &fb, off, true)?;
    Ok(if array::len(out) > 0 { array::get(out, 0) } else { Value::NIL })
}

pub fn init(ctx: &mut Ctx) {
    let c = ctx.c().string;
    crate::methods!(ctx, c, [
        ("unpack", unpack, [1], Unsafe, Kw),
        ("unpack1", unpack1, [1], Safe, Kw),
    ]);
}
