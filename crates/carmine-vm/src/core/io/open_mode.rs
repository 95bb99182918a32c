//! Open modes: the `mode`/`perm` arguments and keywords of `File.new`, `File.open`,
//! `IO.new`, `IO.for_fd` and `IO.sysopen`, turned into open(2) flags, access directions and
//! encodings the way CRuby's `rb_io_extract_modeenc` does.
//!
//! Invariants: a mode is given once (positionally or as `mode:`); `flags:` is OR-ed into
//! it; binmode and textmode exclude each other; the resulting `OpenMode` is what the IO
//! records (readable/writable follow the O_ACCMODE bits, never the string alone).

use crate::core::io::{parse_encoding_spec, IntEnc};
use crate::core::{integer, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

#[derive(Clone, Copy, Debug, Default)]
pub struct OpenMode {
    pub flags: i32,
    pub binary: bool,
    pub text: bool,
    pub ext_enc: Option<u8>,
    pub int_enc: IntEnc,
    /// "r:BOM|utf-8": the encoding comes from a byte-order mark when there is one.
    pub bom: bool,
    /// The mode string named encodings.
    pub has_enc: bool,
}

impl OpenMode {
    pub fn readable(&self) -> bool {
        self.flags & libc::O_ACCMODE != libc::O_WRONLY
    }

    pub fn writable(&self) -> bool {
        self.flags & libc::O_ACCMODE != libc::O_RDONLY
    }
}

/// Parses "r", "w+", "ab", "r:ext:int", "rb:BOM|utf-8", "wx" …
pub fn parse_mode_string(ctx: &mut Ctx, mode: &str) -> Result<OpenMode> {
    let (access, encs) = match mode.split_once(':') {
        Some((a, e)) => (a, Some(e)),
        None => (mode, None),
    };
    let invalid = |ctx: &mut Ctx| ctx.arg_error(&format!("invalid access mode {access}"));
    let mut chars = access.chars();
    let mut m = OpenMode::default();
    m.flags = match chars.next() {
        Some('r') => libc::O_RDONLY,
        Some('w') => libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
        Some('a') => libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND,
        _ => return Err(invalid(ctx)),
    };
    for c in chars {
        match c {
            'b' if !m.binary && !m.text => m.binary = true,
            't' if !m.binary && !m.text => m.text = true,
            '+' if m.flags & libc::O_ACCMODE != libc::O_RDWR => m.flags = (m.flags & !libc::O_ACCMODE) | libc::O_RDWR,
            'x' if access.starts_with('w') => m.flags |= libc::O_EXCL,
            _ => return Err(invalid(ctx)),
        }
    }
    if let Some(spec) = encs {
        let (e, i, bom) = parse_encoding_spec(ctx, spec)?;
        m.ext_enc = e;
        m.int_enc = i;
        m.bom = bom;
        m.has_enc = true;
    } else if m.binary {
        m.ext_enc = Some(crate::core::encoding::BINARY);
    }
    Ok(m)
}

/// The open(2) flags of an Integer mode.
pub fn mode_from_flags(flags: i32) -> OpenMode {
    OpenMode { flags, ..OpenMode::default() }
}

/// A positional or keyword mode: nil (read-only), an Integer, or a String.
pub fn mode_arg(ctx: &mut Ctx, v: Value) -> Result<OpenMode> {
    if v.is_nil() {
        return Ok(mode_from_flags(libc::O_RDONLY));
    }
    if let Some(n) = v.as_fixnum() {
        return Ok(mode_from_flags(n as i32));
    }
    if !string::is_string(v) && integer::is_integer(v) {
        return Ok(mode_from_flags(integer::to_int_arg(ctx, v)?));
    }
    let s = string::to_str_arg(ctx, v)?;
    let s = string::to_rust_string_lossy(s);
    parse_mode_string(ctx, &s)
}

/// The mode and permission of an open call: positional `mode`/`perm` (either may be
/// absent) and the keywords `mode:`, `flags:`, `perm:`, `binmode:`, `textmode:` and the
/// encoding keywords (applied later by `apply_encoding_kwargs`).
pub fn extract(ctx: &mut Ctx, mode: Option<Value>, perm: Option<Value>, args: &Args) -> Result<(OpenMode, u32)> {
    let kw_mode = args.kwarg(ctx, "mode").filter(|v| !v.is_nil());
    if mode.is_some_and(|m| !m.is_nil()) && kw_mode.is_some() {
        return Err(ctx.arg_error("mode specified twice"));
    }
    let mut m = match mode.filter(|m| !m.is_nil()).or(kw_mode) {
        Some(v) => mode_arg(ctx, v)?,
        None => mode_from_flags(libc::O_RDONLY),
    };
    if m.has_enc && args.kwarg(ctx, "encoding").is_some_and(|v| !v.is_nil()) {
        return Err(ctx.arg_error("encoding specified twice"));
    }
    if let Some(f) = args.kwarg(ctx, "flags").filter(|v| !v.is_nil()) {
        m.flags |= integer::to_int_arg(ctx, f)?;
    }
    if let Some(b) = args.kwarg(ctx, "binmode").filter(|v| !v.is_nil()) {
        if m.binary {
            return Err(ctx.arg_error("binmode specified twice"));
        }
        if b.truthy() && m.text {
            return Err(ctx.arg_error("both textmode and binmode specified"));
        }
        if b.truthy() {
            m.binary = true;
            m.ext_enc = m.ext_enc.or(Some(crate::core::encoding::BINARY));
        }
    }
    if let Some(t) = args.kwarg(ctx, "textmode").filter(|v| !v.is_nil()) {
        if m.text {
            return Err(ctx.arg_error("textmode specified twice"));
        }
        if t.truthy() && m.binary {
            return Err(ctx.arg_error("both textmode and binmode specified"));
        }
        m.text = t.truthy();
    }
    let perm = match perm.filter(|p| !p.is_nil()).or_else(|| args.kwarg(ctx, "perm").filter(|v| !v.is_nil())) {
        Some(p) => integer::to_int_arg(ctx, p)? as u32,
        None => 0o666,
    };
    Ok((m, perm))
}
