//! Writing a compiled program (see the format in `mod.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use super::{checksum, insn, literal, FLAG_DATA, HEADER_LEN, ISA_HASH, MAGIC, VERSION};
use crate::compile::iseq::{iseq_of, CatchKind, Iseq, IseqKind};
use crate::object::{self, ObjType};
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// An output buffer with the file's symbol table being built.
pub(super) struct Writer<'c> {
    pub ctx: &'c mut Ctx,
    pub out: Vec<u8>,
    sym_index: HashMap<SymId, u32>,
    sym_names: Vec<Arc<[u8]>>,
}

impl<'c> Writer<'c> {
    pub fn byte(&mut self, b: u8) {
        self.out.push(b);
    }

    pub fn uleb(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.out.push(b);
                return;
            }
            self.out.push(b | 0x80);
        }
    }

    pub fn sleb(&mut self, v: i64) {
        self.uleb(((v << 1) ^ (v >> 63)) as u64);
    }

    pub fn len(&mut self, n: usize) {
        self.uleb(n as u64);
    }

    pub fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.out.extend_from_slice(b);
    }

    pub fn flag(&mut self, b: bool) {
        self.byte(b as u8);
    }

    pub fn sym(&mut self, s: SymId) {
        let i = match self.sym_index.get(&s) {
            Some(&i) => i,
            None => {
                let i = self.sym_names.len() as u32;
                self.sym_names.push(self.ctx.sym_name(s));
                self.sym_index.insert(s, i);
                i
            }
        };
        self.uleb(i as u64);
    }

    fn opt_sym(&mut self, s: Option<SymId>) {
        match s {
            Some(s) => {
                self.byte(1);
                self.sym(s);
            }
            None => self.byte(0),
        }
    }

    fn syms(&mut self, list: &[SymId]) {
        self.len(list.len());
        for &s in list {
            self.sym(s);
        }
    }
}

pub(super) fn kind_code(k: IseqKind) -> u8 {
    match k {
        IseqKind::Top => 0,
        IseqKind::Main => 1,
        IseqKind::Method => 2,
        IseqKind::Block => 3,
        IseqKind::Class => 4,
        IseqKind::Eval => 5,
    }
}

pub(super) fn catch_code(k: CatchKind) -> u8 {
    match k {
        CatchKind::Rescue => 0,
        CatchKind::Ensure => 1,
    }
}

pub(super) fn dump(ctx: &mut Ctx, iseq: Value, data: Option<&[u8]>) -> Result<Vec<u8>> {
    if !object::is_type(iseq, ObjType::Iseq) {
        return Err(ctx.type_error("bytecode: not an instruction sequence"));
    }
    let top = iseq_of(iseq);
    if !matches!(top.kind, IseqKind::Main | IseqKind::Top) {
        return Err(ctx.type_error("bytecode: only a whole program (not eval'd code) can be written"));
    }
    let mut w = Writer { ctx, out: Vec::new(), sym_index: HashMap::new(), sym_names: Vec::new() };
    w.bytes(top.path.as_bytes());
    match &top.realpath {
        Some(p) => {
            w.byte(1);
            w.bytes(p.as_bytes());
        }
        None => w.byte(0),
    }
    write_iseq(&mut w, iseq)?;
    let body = std::mem::take(&mut w.out);
    let names = std::mem::take(&mut w.sym_names);
    w.len(names.len());
    for n in &names {
        w.bytes(n);
    }
    let mut payload = std::mem::take(&mut w.out);
    payload.extend_from_slice(&body);

    let mut file = Vec::with_capacity(HEADER_LEN + payload.len() + data.map_or(0, |d| d.len()));
    file.extend_from_slice(MAGIC);
    file.extend_from_slice(&VERSION.to_le_bytes());
    file.extend_from_slice(&ISA_HASH.to_le_bytes());
    file.extend_from_slice(&(if data.is_some() { FLAG_DATA } else { 0 }).to_le_bytes());
    file.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    file.extend_from_slice(&checksum(&payload).to_le_bytes());
    let data_at = if data.is_some() { HEADER_LEN + payload.len() } else { 0 };
    file.extend_from_slice(&(data_at as u64).to_le_bytes());
    file.extend_from_slice(&payload);
    if let Some(d) = data {
        file.extend_from_slice(d);
    }
    Ok(file)
}

/// One iseq; its children last (see `read::read_iseq` for the order).
fn write_iseq(w: &mut Writer<'_>, v: Value) -> Result<()> {
    let is: &Iseq = iseq_of(v);
    w.byte(kind_code(is.kind));
    w.bytes(is.name.as_bytes());
    w.opt_sym(is.method_name);
    w.uleb(is.first_line as u64);
    w.syms(&is.local_names);
    let p = &is.params;
    w.uleb(p.lead as u64);
    w.uleb(p.opt as u64);
    w.len(p.opt_pcs.len());
    for &pc in &p.opt_pcs {
        w.uleb(pc as u64);
    }
    w.uleb(p.post as u64);
    w.len(p.kw.len());
    for k in &p.kw {
        w.sym(k.name);
        w.flag(k.required);
    }
    let pflags = [p.rest, p.kwrest, p.no_kw, p.block, p.forwarding, p.trailing_comma, p.simple, p.implicit_it, p.ruby2_keywords, p.block_proxy, p.opt_simple];
    w.uleb(pflags.iter().enumerate().fold(0u64, |acc, (i, &b)| acc | (b as u64) << i));
    let flags = [is.locals_on_heap, is.uses_block, is.sees_block];
    w.uleb(flags.iter().enumerate().fold(0u64, |acc, (i, &b)| acc | (b as u64) << i));
    w.uleb(is.block_depth as u64);
    w.len(is.outer_local_names.len());
    for names in &is.outer_local_names {
        w.syms(names);
    }
    w.len(is.ivar_caches.len());
    w.len(is.const_caches.len());
    w.len(is.once_caches.len());

    w.len(is.code.len());
    for i in &is.code {
        insn::encode(i, w);
    }
    // Lines as deltas from the previous instruction's (most are 0 or small).
    let mut prev = is.first_line as i64;
    for pc in 0..is.code.len() {
        let l = is.line_at(pc);
        w.sleb(l as i64 - prev);
        prev = l as i64;
    }
    w.len(is.literals.len());
    for &lit in &is.literals {
        literal::write(w, lit)?;
    }
    w.len(is.calls.len());
    for c in &is.calls {
        w.sym(c.mid);
        w.uleb(c.argc as u64);
        w.uleb(c.flags as u64);
        // The block child index, +1 (0: no literal block).
        w.uleb(if c.block == u32::MAX { 0 } else { c.block as u64 + 1 });
        w.len(c.kw_keys.len());
        for &k in c.kw_keys.iter() {
            w.sym(k);
        }
    }
    w.len(is.catch_table.len());
    for e in &is.catch_table {
        w.byte(catch_code(e.kind));
        for x in [e.start, e.end, e.handler, e.depth, e.local] {
            w.uleb(x as u64);
        }
    }
    w.len(is.children.len());
    for &c in &is.children {
        if !object::is_type(c, ObjType::Iseq) {
            return Err(w.ctx.type_error("bytecode: a child of an iseq is not an iseq"));
        }
        write_iseq(w, c)?;
    }
    Ok(())
}
