//! Reading a bytecode file back into heap iseqs (see the format in `mod.rs`). Every read
//! is bounds-checked; a failure is a message that `load` turns into a `LoadError`.

use std::cell::Cell;
use std::sync::Arc;

use super::verify::{self, Outer};
use super::{checksum, insn, invalid, literal, Loaded, FLAG_DATA, HEADER_LEN, ISA_HASH, MAGIC, VERSION};
use crate::compile::iseq::{CallCache, CallInfo, CatchEntry, CatchKind, Iseq, IseqKind, KwParam, Params};
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub(super) type R<T> = std::result::Result<T, String>;

/// How deeply iseqs may nest (blocks in methods in classes …): bounds the loader's
/// recursion whatever the file says.
const MAX_NESTING: usize = 256;

pub(super) struct Reader<'a> {
    pub ctx: &'a mut Ctx,
    buf: &'a [u8],
    pos: usize,
    syms: Vec<SymId>,
    path: Arc<str>,
    realpath: Option<Arc<str>>,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len()).ok_or_else(|| format!("truncated at byte {}", self.pos))?;
        let s = &self.buf[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn byte(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }

    pub fn fixed<const N: usize>(&mut self) -> R<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub fn uleb(&mut self) -> R<u64> {
        let mut v: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err("varint overflow".into());
            }
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("varint overflow".into())
    }

    pub fn i64(&mut self) -> R<i64> {
        let u = self.uleb()?;
        Ok((u >> 1) as i64 ^ -((u & 1) as i64))
    }

    pub fn u32(&mut self) -> R<u32> {
        u32::try_from(self.uleb()?).map_err(|_| "operand out of range".to_string())
    }

    pub fn i32(&mut self) -> R<i32> {
        i32::try_from(self.i64()?).map_err(|_| "operand out of range".to_string())
    }

    /// A count of items that each take at least one byte: never more than the bytes left
    /// (so a hostile count cannot make the loader reserve huge vectors).
    fn count(&mut self) -> R<usize> {
        let n = self.uleb()?;
        if n > (self.buf.len() - self.pos) as u64 {
            return Err(format!("count {n} past the end of the file"));
        }
        Ok(n as usize)
    }

    pub fn bytes(&mut self) -> R<&'a [u8]> {
        let n = self.count()?;
        self.take(n)
    }

    pub fn str(&mut self) -> R<String> {
        let b = self.bytes()?;
        String::from_utf8(b.to_vec()).map_err(|_| "a name that is not UTF-8".to_string())
    }

    fn flag(&mut self) -> R<bool> {
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("bad flag byte {b}")),
        }
    }

    pub fn sym(&mut self) -> R<SymId> {
        let i = self.uleb()?;
        self.syms.get(i as usize).copied().ok_or_else(|| format!("symbol index {i} out of range"))
    }

    fn syms(&mut self) -> R<Vec<SymId>> {
        let n = self.count()?;
        (0..n).map(|_| self.sym()).collect()
    }
}

pub(super) fn load(ctx: &mut Ctx, bytes: &[u8]) -> Result<Loaded> {
    let mark = ctx.stacks.protected.len();
    let r = load_inner(ctx, bytes);
    ctx.stacks.protected.truncate(mark);
    r.map_err(|why| invalid(ctx, &why))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

fn load_inner(ctx: &mut Ctx, bytes: &[u8]) -> R<Loaded> {
    if !bytes.starts_with(MAGIC) {
        return Err("not a Carmine bytecode file (bad magic)".into());
    }
    if bytes.len() < HEADER_LEN {
        return Err("truncated header".into());
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(format!("format version {version}, this build reads version {VERSION}"));
    }
    if u64_at(bytes, 12) != ISA_HASH {
        return Err("compiled by a build with another instruction set (recompile it with this carmine --compile)".into());
    }
    let flags = u32_at(bytes, 20);
    let len = u64_at(bytes, 24);
    let sum = u64_at(bytes, 32);
    let data_at = u64_at(bytes, 40);
    if flags & !FLAG_DATA != 0 {
        return Err(format!("unknown flags {flags:#x}"));
    }
    let end = (HEADER_LEN as u64).checked_add(len).filter(|&e| e <= bytes.len() as u64).ok_or("truncated payload")? as usize;
    let data_offset = if flags & FLAG_DATA != 0 {
        if data_at != end as u64 {
            return Err("data section not after the payload".into());
        }
        Some(end)
    } else {
        if data_at != 0 || end != bytes.len() {
            return Err("bytes after the payload".into());
        }
        None
    };
    let payload = &bytes[HEADER_LEN..end];
    if checksum(payload) != sum {
        return Err("checksum mismatch (the file is corrupted)".into());
    }
    let mut r = Reader { ctx, buf: payload, pos: 0, syms: Vec::new(), path: Arc::from(""), realpath: None };
    let n = r.count()?;
    let mut syms = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.bytes()?;
        syms.push(r.ctx.intern_bytes(name));
    }
    r.syms = syms;
    let path = r.str()?;
    r.path = Arc::from(path.as_str());
    r.realpath = if r.flag()? { Some(Arc::from(r.str()?.as_str())) } else { None };
    let iseq = read_iseq(&mut r, &mut Vec::new())?;
    if r.pos != payload.len() {
        return Err("bytes after the program".into());
    }
    Ok(Loaded { iseq, path, data_offset })
}

fn kind_of(code: u8) -> R<IseqKind> {
    Ok(match code {
        0 => IseqKind::Top,
        1 => IseqKind::Main,
        2 => IseqKind::Method,
        3 => IseqKind::Block,
        4 => IseqKind::Class,
        _ => return Err(format!("bad iseq kind {code}")),
    })
}

/// Reads one iseq and, recursively, its children; `outer` describes the enclosing iseqs
/// (innermost last) for the checks of `verify`.
fn read_iseq(r: &mut Reader<'_>, outer: &mut Vec<Outer>) -> R<Value> {
    if outer.len() >= MAX_NESTING {
        return Err("iseqs nested too deeply".into());
    }
    let kind = kind_of(r.byte()?)?;
    let name = r.str()?;
    let method_name = if r.flag()? { Some(r.sym()?) } else { None };
    let first_line = r.u32()?;
    let local_names = r.syms()?;
    let lead = r.u32()?;
    let opt = r.u32()?;
    let n = r.count()?;
    let opt_pcs = (0..n).map(|_| r.u32()).collect::<R<Vec<u32>>>()?;
    let post = r.u32()?;
    let n = r.count()?;
    let mut kw = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.sym()?;
        let required = r.flag()?;
        kw.push(KwParam { name, required });
    }
    let pf = r.uleb()?;
    if pf >> 11 != 0 {
        return Err("unknown parameter flags".into());
    }
    let bit = |i: u32| pf & (1 << i) != 0;
    let params = Params { lead, opt, opt_pcs, rest: bit(0), post, kw, kwrest: bit(1), no_kw: bit(2), block: bit(3), forwarding: bit(4), trailing_comma: bit(5), simple: bit(6), implicit_it: bit(7), ruby2_keywords: bit(8), block_proxy: bit(9), opt_simple: bit(10) };
    let f = r.uleb()?;
    if f >> 3 != 0 {
        return Err("unknown iseq flags".into());
    }
    let (locals_on_heap, uses_block, sees_block) = (f & 1 != 0, f & 2 != 0, f & 4 != 0);
    let block_depth = r.u32()?;
    let n = r.count()?;
    let outer_local_names = (0..n).map(|_| r.syms()).collect::<R<Vec<_>>>()?;
    let n_ivar = r.count()?;
    let n_const = r.count()?;
    let n_once = r.count()?;

    let n = r.count()?;
    let mut code = Vec::with_capacity(n);
    for _ in 0..n {
        code.push(insn::decode(r)?);
    }
    let mut lines = Vec::with_capacity(n);
    let mut prev = first_line as i64;
    for _ in 0..n {
        prev = prev.checked_add(r.i64()?).ok_or("line out of range")?;
        lines.push(u32::try_from(prev).map_err(|_| "line out of range")?);
    }
    let n = r.count()?;
    let mut literals = Vec::with_capacity(n);
    for _ in 0..n {
        let v = literal::read(r, false)?;
        r.ctx.protect(v);
        literals.push(v);
    }
    let n = r.count()?;
    let mut calls = Vec::with_capacity(n);
    for _ in 0..n {
        let mid = r.sym()?;
        let argc = r.u32()?;
        let flags = r.u32()?;
        let block = r.u32()?.checked_sub(1).unwrap_or(u32::MAX);
        let nkw = r.count()?;
        let kw_keys = (0..nkw).map(|_| r.sym()).collect::<R<Box<[SymId]>>>()?;
        calls.push(CallInfo { mid, argc, flags, block, kw_keys, cache: CallCache::default() });
    }
    let n = r.count()?;
    let mut catch_table = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = match r.byte()? {
            0 => CatchKind::Rescue,
            1 => CatchKind::Ensure,
            b => return Err(format!("bad catch kind {b}")),
        };
        let (start, end, handler, depth, local) = (r.u32()?, r.u32()?, r.u32()?, r.u32()?, r.u32()?);
        catch_table.push(CatchEntry { kind, start, end, handler, depth, local });
    }

    outer.push(Outer { kind, local_names: local_names.clone(), locals_on_heap });
    let n = r.count()?;
    let mut children = Vec::with_capacity(n);
    let mut child_kinds = Vec::with_capacity(n);
    for _ in 0..n {
        let c = read_iseq(r, outer);
        let c = match c {
            Ok(c) => c,
            Err(e) => {
                outer.pop();
                return Err(e);
            }
        };
        r.ctx.protect(c);
        child_kinds.push(crate::compile::iseq::iseq_of(c).kind);
        children.push(c);
    }
    outer.pop();

    let mut iseq = Iseq {
        kind,
        name,
        method_name,
        path: r.path.clone(),
        realpath: r.realpath.clone(),
        first_line,
        code,
        lines,
        literals,
        calls,
        children,
        catch_table,
        local_names,
        params,
        locals_on_heap,
        uses_block,
        sees_block,
        stack_max: 0,
        ivar_caches: (0..n_ivar).map(|_| (Cell::new(0), Cell::new(0))).collect(),
        const_caches: (0..n_const).map(|_| (Cell::new(0), Cell::new(Value::NIL), Cell::new(Value::NIL))).collect(),
        once_caches: (0..n_once).map(|_| Cell::new(Value::UNDEF)).collect(),
        block_depth,
        outer_local_names,
    };
    iseq.stack_max = verify::verify(&iseq, &child_kinds, outer, outer.is_empty())? + 4;
    intern_frozen_literals(r.ctx, &mut iseq);
    Ok(crate::compile::new_iseq_value(r.ctx, iseq))
}

/// Frozen String literals pushed as they are (`PutLit`) are one object per content, as
/// the compiler makes them (CRuby's fstring table); templates copied by `PutString` are not.
fn intern_frozen_literals(ctx: &mut Ctx, iseq: &mut Iseq) {
    for insn in &iseq.code {
        if let crate::compile::iseq::Insn::PutLit(i) = *insn {
            let v = iseq.literals[i as usize];
            if crate::core::string::is_string(v) && !crate::core::string::is_chilled(v) {
                if let Ok(s) = crate::core::string_methods::fstring(ctx, v) {
                    ctx.protect(s);
                    iseq.literals[i as usize] = s;
                }
            }
        }
    }
}
