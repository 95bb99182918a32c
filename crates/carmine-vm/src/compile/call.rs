//! Compiling calls: arguments, blocks, operators, attribute and index assignment,
//! `yield`, `super`, and `defined?`.

use ruby_prism::{ArgumentsNode, Node};

use super::iseq::{IseqKind, call_flags as cf, CatchKind, Insn};
use super::Compiler;
use crate::interp::ops;
use crate::symbol::{sym, SymId};
use crate::value::Value;

/// What a call site passes besides positional arguments.
pub(crate) struct ArgInfo {
    pub argc: u32,
    pub flags: u32,
    pub block: Option<u32>,
    /// Keys of `KW_ARGS` keywords.
    pub kw_keys: Vec<SymId>,
}

impl ArgInfo {
    /// `argc` positional arguments and flags, nothing else.
    pub fn positional(argc: u32, flags: u32) -> ArgInfo {
        ArgInfo { argc, flags, block: None, kw_keys: Vec::new() }
    }
}

impl<'c, 'pr> Compiler<'c, 'pr> {
    /// Pushes arguments (and a `&block` value); returns their shape. Keywords go as one Hash.
    pub fn compile_args(&mut self, args: Option<ArgumentsNode<'pr>>, block: Option<Node<'pr>>) -> ArgInfo {
        self.compile_args_as(args, block, false)
    }

    /// The Symbol keys of keywords `k: v, …` that can be passed as `KW_ARGS` (literal
    /// Symbols, each once, nothing splatted), or `None`.
    fn literal_kw_keys(&mut self, elems: &[Node<'pr>]) -> Option<Vec<SymId>> {
        let mut keys = Vec::with_capacity(elems.len());
        for e in elems {
            let a = e.as_assoc_node()?;
            let id = self.intern(a.key().as_symbol_node()?.unescaped());
            if keys.contains(&id) {
                return None;
            }
            keys.push(id);
        }
        Some(keys)
    }

    /// `compile_args`; with `kw_args`, literal keywords are pushed as values (`KW_ARGS`).
    pub fn compile_args_as(&mut self, args: Option<ArgumentsNode<'pr>>, block: Option<Node<'pr>>, kw_args: bool) -> ArgInfo {
        let mut info = ArgInfo::positional(0, 0);
        let list: Vec<Node<'pr>> = args.map(|a| a.arguments().iter().collect()).unwrap_or_default();
        let mut positional: Vec<Node<'pr>> = Vec::new();
        let mut kwhash: Option<Node<'pr>> = None;
        let mut forwarding = false;
        let mut block_arg: Option<Node<'pr>> = None;
        for (i, a) in list.iter().enumerate() {
            match a {
                Node::KeywordHashNode { .. } if i == list.len() - 1 => kwhash = Some(super::prism_copy(a)),
                Node::ForwardingArgumentsNode { .. } => forwarding = true,
                Node::BlockArgumentNode { .. } => block_arg = Some(super::prism_copy(a)),
                _ => positional.push(super::prism_copy(a)),
            }
        }
        let has_splat = forwarding || positional.iter().any(|a| matches!(a, Node::SplatNode { .. }));
        if has_splat {
            self.compile_array_elements(&positional);
            if forwarding {
                let star = self.intern(b"*");
                let d = self.anon_param_depth(star);
                self.emit_get_local(star, d);
                self.b().emit(Insn::SplatArray(0));
                self.b().emit(Insn::ConcatArray);
            }
            info.argc = 1;
            info.flags |= cf::SPLAT;
        } else {
            for a in &positional {
                self.compile(a, true);
            }
            info.argc = positional.len() as u32;
        }
        let kwhash = kwhash.and_then(|kw| {
            let elems: Vec<Node<'pr>> = kw.as_keyword_hash_node().expect("kwhash").elements().iter().collect();
            let keys = if kw_args && !forwarding { self.literal_kw_keys(&elems) } else { None };
            let Some(keys) = keys else { return Some(elems) };
            for e in &elems {
                self.compile(&e.as_assoc_node().expect("assoc").value(), true);
            }
            info.flags |= cf::KW_ARGS;
            info.kw_keys = keys;
            None
        });
        if let Some(elems) = kwhash {
            self.compile_hash_elements(&elems);
            info.flags |= cf::KW_HASH;
            if elems.iter().all(|e| matches!(e, Node::AssocNode { .. })) {
                info.flags |= cf::KW_LITERAL;
            }
            if forwarding {
                let dstar = self.intern(b"**");
                let d = self.anon_param_depth(dstar);
                self.emit_get_local(dstar, d);
                self.b().emit(Insn::HashMergeKw);
            }
        } else if forwarding {
            self.b().emit(Insn::NewHash(0));
            let dstar = self.intern(b"**");
            let d = self.anon_param_depth(dstar);
            self.emit_get_local(dstar, d);
            self.b().emit(Insn::HashMergeKw);
            info.flags |= cf::KW_HASH;
        }
        let block = block.or(block_arg);
        match block {
            Some(Node::BlockArgumentNode { .. }) => {
                let ba = block.as_ref().and_then(|b| b.as_block_argument_node()).expect("block arg");
                let amp = self.intern(b"&");
                let passed = match ba.expression() {
                    Some(Node::LocalVariableReadNode { .. }) => {
                        let n = ba.expression().and_then(|e| e.as_local_variable_read_node()).expect("lvar");
                        (n.depth() == 0).then(|| self.intern(n.name().as_slice()))
                    }
                    Some(_) => None,
                    None => (self.anon_param_depth(amp) == 0).then_some(amp),
                };
                match passed.and_then(|name| self.own_block_param(name)) {
                    Some(idx) => {
                        self.b().emit(Insn::GetBlockParamProxy(idx));
                    }
                    None => match ba.expression() {
                        Some(e) => self.compile(&e, true),
                        None => {
                            let d = self.anon_param_depth(amp);
                            self.emit_get_local(amp, d);
                        }
                    },
                }
                info.flags |= cf::BLOCK_ARG;
            }
            Some(Node::BlockNode { .. }) => {
                let bn = block.as_ref().and_then(|b| b.as_block_node()).expect("block");
                let child = self.compile_block_like(bn.parameters(), bn.body(), &bn.locals(), false);
                info.block = Some(self.b().child(child));
            }
            _ => {
                if forwarding {
                    let amp = self.intern(b"&");
                    let d = self.anon_param_depth(amp);
                    self.emit_get_local(amp, d);
                    info.flags |= cf::BLOCK_ARG;
                }
            }
        }
        info
    }

    /// Emits a send, using a specialised instruction for common operators.
    pub fn emit_send(&mut self, mid: SymId, info: &ArgInfo) {
        let ci = self.call_info_of(mid, info);
        let plain = info.block.is_none() && info.flags & (cf::SPLAT | cf::KW_HASH | cf::KW_ARGS | cf::BLOCK_ARG | cf::SAFE_NAV) == 0;
        let insn = if plain && info.argc == 1 {
            match mid {
                sym::PLUS => Insn::OptPlus(ci),
                sym::MINUS => Insn::OptMinus(ci),
                sym::MUL => Insn::OptMult(ci),
                sym::DIV => Insn::OptDiv(ci),
                sym::MOD => Insn::OptMod(ci),
                sym::EQ => Insn::OptEq(ci),
                sym::NEQ => Insn::OptNeq(ci),
                sym::LT => Insn::OptLt(ci),
                sym::LE => Insn::OptLe(ci),
                sym::GT => Insn::OptGt(ci),
                sym::GE => Insn::OptGe(ci),
                sym::CMP => Insn::OptCmp(ci),
                sym::LTLT => Insn::OptLtLt(ci),
                sym::AND => Insn::OptAnd(ci),
                sym::OR => Insn::OptOr(ci),
                sym::AREF => Insn::OptAref(ci),
                _ => Insn::Send(ci),
            }
        } else if plain && info.argc == 0 {
            match mid {
                sym::NOT => Insn::OptNot(ci),
                sym::LENGTH => Insn::OptLength(ci),
                sym::SIZE => Insn::OptSize(ci),
                sym::SUCC => Insn::OptSucc(ci),
                _ if mid == self.intern(b"empty?") => Insn::OptEmptyP(ci),
                _ => Insn::Send(ci),
            }
        } else if plain && info.argc == 2 && mid == sym::ASET {
            Insn::OptAset(ci)
        } else {
            Insn::Send(ci)
        };
        self.b().emit(insn);
    }

    /// The call info of a call to `mid` with arguments `info`.
    fn call_info_of(&mut self, mid: SymId, info: &ArgInfo) -> u32 {
        let ci = self.b().call_info(mid, info.argc, info.flags, info.block);
        if !info.kw_keys.is_empty() {
            self.b().calls[ci as usize].kw_keys = info.kw_keys.clone().into();
        }
        ci
    }

    pub fn compile_call(&mut self, n: &ruby_prism::CallNode<'pr>, used: bool) {
        let mid = self.intern(n.name().as_slice());
        if matches!(n.name().as_slice(), b"=~" | b"!~" | b"match" | b"scan" | b"sub" | b"gsub" | b"sub!" | b"gsub!" | b"gets") {
            self.share_special_vars();
        }
        let recv = n.receiver();
        if recv.is_none() {
            if mid == sym::BLOCK_GIVEN && n.arguments().is_none() && n.block().is_none() {
                self.mark_checks_block();
                self.b().emit(Insn::BlockGiven);
                self.pop_if_unused(used);
                return;
            }
            if n.name().as_slice() == b"iterator?" {
                // The deprecated alias of block_given? looks at this scope's block too.
                self.mark_checks_block();
            }
            if mid == sym::BINDING || mid == sym::EVAL || mid == sym::LOCAL_VARIABLES {
                self.escape_all_scopes();
            }
        }
        let attrasgn = n.is_attribute_write();
        if attrasgn && used {
            self.b().emit(Insn::PutNil);
        }
        let mut flags = 0;
        match &recv {
            None => {
                self.b().emit(Insn::PutSelf);
                flags |= cf::FCALL;
                if n.is_variable_call() {
                    flags |= cf::VCALL;
                }
            }
            Some(Node::SelfNode { .. }) => {
                self.b().emit(Insn::PutSelf);
                flags |= cf::SELF_RECV;
            }
            Some(r) => self.compile(r, true),
        }
        let nil_label = if n.is_safe_navigation() {
            let l = self.b().new_label();
            self.b().emit(Insn::Dup);
            self.b().branch_nil(l);
            Some(l)
        } else {
            None
        };
        let line = n.location().start_line();
        let mut info = self.compile_args_as(n.arguments(), n.block(), !attrasgn);
        if line > 0 {
            self.b().line = n.message_loc().map_or(line, |l| l.start_line()) as u32;
        }
        info.flags |= flags;
        if attrasgn && used {
            let extra = (info.flags & cf::KW_HASH != 0) as u32 + (info.flags & cf::BLOCK_ARG != 0) as u32;
            if info.flags & cf::SPLAT != 0 {
                // `a[*x] = v`: the value is the splatted array's last element; fetch it.
                self.b().emit(Insn::TopN(extra));
                let last = self.intern(b"last");
                let ci = self.b().call_info(last, 0, 0, None);
                self.b().emit(Insn::Send(ci));
                self.b().emit(Insn::SetN(info.argc + extra + 2));
                self.b().emit(Insn::Pop);
            } else {
                self.b().emit(Insn::TopN(extra));
                self.b().emit(Insn::SetN(info.argc + extra + 2));
                self.b().emit(Insn::Pop);
            }
        }
        self.emit_send(mid, &info);
        if attrasgn && used {
            self.b().emit(Insn::Pop);
        }
        if let Some(l) = nil_label {
            self.b().place(l);
        }
        self.pop_if_unused(used);
    }

    /// `a.b op= v`, `a.b ||= v`, `a.b &&= v`.
    pub fn compile_call_op_assign(&mut self, node: &Node<'pr>, used: bool) {
        let (recv, read, write, op, value, safe): (Option<Node<'pr>>, SymId, SymId, Option<SymId>, Node<'pr>, bool) = match node {
            Node::CallOperatorWriteNode { .. } => {
                let n = node.as_call_operator_write_node().expect("op asgn");
                (n.receiver(), self.intern(n.read_name().as_slice()), self.intern(n.write_name().as_slice()), Some(self.intern(n.binary_operator().as_slice())), n.value(), n.is_safe_navigation())
            }
            Node::CallOrWriteNode { .. } => {
                let n = node.as_call_or_write_node().expect("or asgn");
                (n.receiver(), self.intern(n.read_name().as_slice()), self.intern(n.write_name().as_slice()), Some(sym::OR_OR), n.value(), n.is_safe_navigation())
            }
            _ => {
                let n = node.as_call_and_write_node().expect("and asgn");
                (n.receiver(), self.intern(n.read_name().as_slice()), self.intern(n.write_name().as_slice()), Some(sym::AND_AND), n.value(), n.is_safe_navigation())
            }
        };
        let recv_flags = match &recv {
            None => {
                self.b().emit(Insn::PutSelf);
                cf::FCALL
            }
            Some(Node::SelfNode { .. }) => {
                self.b().emit(Insn::PutSelf);
                cf::SELF_RECV
            }
            Some(r) => {
                self.compile(r, true);
                0
            }
        };
        let nil_label = if safe {
            let l = self.b().new_label();
            self.b().emit(Insn::Dup);
            self.b().branch_nil(l);
            Some(l)
        } else {
            None
        };
        // Stack: recv
        self.b().emit(Insn::Dup);
        let ci = self.b().call_info(read, 0, recv_flags, None);
        self.b().emit(Insn::Send(ci));
        // Stack: recv, cur
        let op = op.unwrap_or(sym::PLUS);
        let end = self.b().new_label();
        if op == sym::OR_OR || op == sym::AND_AND {
            let keep = self.b().new_label();
            self.b().emit(Insn::Dup);
            if op == sym::OR_OR {
                self.b().branch_if(keep);
            } else {
                self.b().branch_unless(keep);
            }
            self.b().emit(Insn::Pop);
            self.compile(&value, true);
            self.emit_attr_write(write, recv_flags, used);
            self.b().jump(end);
            self.b().place(keep);
            // Stack here: recv, cur (the other path left `used` values).
            self.b().depth += 2 - used as i32;
            if used {
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::Pop);
            } else {
                self.b().emit(Insn::AdjustStack(2));
            }
        } else {
            self.compile(&value, true);
            self.emit_send(op, &ArgInfo::positional(1, 0));
            self.emit_attr_write(write, recv_flags, used);
        }
        self.b().place(end);
        if let Some(l) = nil_label {
            if !used {
                // nil receiver path left the receiver; drop it to match.
                let after = self.b().new_label();
                self.b().jump(after);
                self.b().place(l);
                self.b().emit(Insn::Pop);
                self.b().place(after);
            } else {
                self.b().place(l);
            }
        }
    }

    /// Stack: recv, value → calls `recv.write(value)`; leaves value when used.
    fn emit_attr_write(&mut self, write: SymId, recv_flags: u32, used: bool) {
        if used {
            self.b().emit(Insn::Swap);
            self.b().emit(Insn::TopN(1));
        }
        let ci = self.b().call_info(write, 1, recv_flags | cf::ATTRASGN, None);
        self.b().emit(Insn::Send(ci));
        self.b().emit(Insn::Pop);
    }

    /// `a[i] op= v`, `a[i] ||= v`, `a[i] &&= v`.
    pub fn compile_index_op_assign(&mut self, node: &Node<'pr>, used: bool) {
        let (recv, args, op, value) = match node {
            Node::IndexOperatorWriteNode { .. } => {
                let n = node.as_index_operator_write_node().expect("index op");
                (n.receiver(), n.arguments(), self.intern(n.binary_operator().as_slice()), n.value())
            }
            Node::IndexOrWriteNode { .. } => {
                let n = node.as_index_or_write_node().expect("index or");
                (n.receiver(), n.arguments(), sym::OR_OR, n.value())
            }
            _ => {
                let n = node.as_index_and_write_node().expect("index and");
                (n.receiver(), n.arguments(), sym::AND_AND, n.value())
            }
        };
        if used {
            self.b().emit(Insn::PutNil);
        }
        // `self[k] += v` may call private [] and []=.
        let self_flag = if matches!(recv, Some(Node::SelfNode { .. })) { cf::SELF_RECV } else { 0 };
        self.compile_opt(recv, true);
        let info = self.compile_args(args, None);
        if info.flags & !(cf::SPLAT) != 0 || info.block.is_some() {
            self.fail("unsupported index assignment with keywords or block");
            return;
        }
        let argc = info.argc;
        // `h[k] += 1` with one plain index reads and writes through the operator
        // instructions' Array and Hash paths.
        let opt = argc == 1 && info.flags == 0 && self_flag == 0;
        self.b().emit(Insn::DupN(argc + 1));
        let ci = self.b().call_info(sym::AREF, argc, info.flags | self_flag, None);
        self.b().emit(if opt { Insn::OptAref(ci) } else { Insn::Send(ci) });
        // Stack: [nil], recv, args, cur
        let end = self.b().new_label();
        let aset_flags = (info.flags & cf::SPLAT) | self_flag;
        if op == sym::OR_OR || op == sym::AND_AND {
            let keep = self.b().new_label();
            self.b().emit(Insn::Dup);
            if op == sym::OR_OR {
                self.b().branch_if(keep);
            } else {
                self.b().branch_unless(keep);
            }
            self.b().emit(Insn::Pop);
            self.compile(&value, true);
            self.emit_index_write(argc, aset_flags, used);
            self.b().jump(end);
            self.b().place(keep);
            // Stack here: [placeholder], recv, args, cur.
            self.b().depth += argc as i32 + 2;
            if used {
                self.b().emit(Insn::SetN(argc + 2));
            }
            self.b().emit(Insn::AdjustStack(argc + 2));
            if !used {
                // nothing left
            }
        } else {
            self.compile(&value, true);
            self.emit_send(op, &ArgInfo::positional(1, 0));
            self.emit_index_write(argc, aset_flags, used);
        }
        self.b().place(end);
        if used {
            // result is in the placeholder
        }
    }

    /// Stack: [nil], recv, args, value → `recv[args] = value`.
    fn emit_index_write(&mut self, argc: u32, flags: u32, used: bool) {
        if used {
            self.b().emit(Insn::SetN(argc + 2));
        }
        if flags & cf::SPLAT != 0 {
            // recv, argsarray, value → recv, argsarray + [value]
            self.b().emit(Insn::NewArray(1));
            self.b().emit(Insn::ConcatArray);
            let ci = self.b().call_info(sym::ASET, 1, flags, None);
            self.b().emit(Insn::Send(ci));
        } else {
            let ci = self.b().call_info(sym::ASET, argc + 1, flags, None);
            self.b().emit(if argc == 1 && flags == 0 { Insn::OptAset(ci) } else { Insn::Send(ci) });
        }
        self.b().emit(Insn::Pop);
    }

    pub fn compile_yield(&mut self, n: &ruby_prism::YieldNode<'pr>, used: bool) {
        // A class body (`class << obj` inside a method included) has no block
        // to yield to.
        let in_class = self.scopes.iter().rev().take_while(|s| s.b.kind != IseqKind::Method).any(|s| s.b.kind == IseqKind::Class);
        // Outside any method (a block at the top level of an eval, say) there is no
        // block to yield to either; prism catches this only in whole files.
        let in_method = self.scopes.iter().any(|s| s.b.kind == IseqKind::Method) || (self.scopes.first().is_some_and(|s| s.b.kind == IseqKind::Eval) && self.eval_in_method);
        if in_class || !in_method {
            self.fail("Invalid yield");
            return;
        }
        self.mark_uses_block();
        let info = self.compile_args(n.arguments(), None);
        let ci = self.b().call_info(sym::YIELD, info.argc, info.flags, None);
        self.b().emit(Insn::Yield(ci));
        self.pop_if_unused(used);
    }

    pub fn compile_super(&mut self, n: &ruby_prism::SuperNode<'pr>, used: bool) {
        self.mark_uses_block();
        self.b().emit(Insn::PutSelf);
        let mut info = self.compile_args_as(n.arguments(), n.block(), true);
        info.flags |= cf::FCALL;
        let ci = self.call_info_of(sym::SUPER, &info);
        self.b().emit(Insn::InvokeSuper(ci));
        self.pop_if_unused(used);
    }

    /// `super` without arguments: passes the current method's parameters.
    pub fn compile_zsuper(&mut self, n: &ruby_prism::ForwardingSuperNode<'pr>, used: bool) {
        self.mark_uses_block();
        self.b().emit(Insn::PutSelf);
        let method_scope = self.scopes.iter().rposition(|s| s.is_method);
        let mut info = ArgInfo::positional(0, cf::FCALL | cf::ZSUPER);
        if let Some(m) = method_scope {
            let params = self.scopes[m].b.params.clone();
            let depth = (self.scopes.len() - 1 - m) as u32;
            if depth > 0 {
                let top = self.scopes.len() - 1;
                for s in &mut self.scopes[m..top] {
                    s.b.locals_on_heap = true;
                }
            }
            let get = |c: &mut Self, idx: u32| {
                if depth == 0 {
                    c.b().emit(Insn::GetLocal(idx));
                } else {
                    c.b().emit(Insn::GetLocalUp(idx, depth));
                }
            };
            let npos = params.lead + params.opt;
            if params.rest || params.post > 0 {
                for i in 0..npos {
                    get(self, i);
                }
                self.b().emit(Insn::NewArray(npos));
                if params.rest {
                    get(self, params.rest_index());
                    self.b().emit(Insn::SplatArray(0));
                    self.b().emit(Insn::ConcatArray);
                }
                for i in 0..params.post {
                    get(self, params.post_start() + i);
                }
                self.b().emit(Insn::NewArray(params.post));
                self.b().emit(Insn::ConcatArray);
                info.argc = 1;
                info.flags |= cf::SPLAT;
            } else {
                for i in 0..npos {
                    get(self, i);
                }
                info.argc = npos;
            }
            if !params.kw.is_empty() && !params.kwrest {
                // The method's keywords, passed on as values.
                for i in 0..params.kw.len() as u32 {
                    get(self, params.kw_start() + i);
                }
                info.flags |= cf::KW_ARGS;
                info.kw_keys = params.kw.iter().map(|k| k.name).collect();
            } else if params.accepts_kw() {
                for (i, k) in params.kw.iter().enumerate() {
                    self.put_literal(Value::symbol(k.name));
                    get(self, params.kw_start() + i as u32);
                }
                self.b().emit(Insn::NewHash(params.kw.len() as u32 * 2));
                if params.kwrest {
                    get(self, params.kwrest_index());
                    self.b().emit(Insn::HashMergeKw);
                }
                info.flags |= cf::KW_HASH;
            }
            if params.block && n.block().is_none() {
                get(self, params.block_index());
                info.flags |= cf::BLOCK_ARG;
            }
        }
        if let Some(bn) = n.block() {
            let child = self.compile_block_like(bn.parameters(), bn.body(), &bn.locals(), false);
            info.block = Some(self.b().child(child));
        }
        let ci = self.call_info_of(sym::SUPER, &info);
        self.b().emit(Insn::InvokeSuper(ci));
        self.pop_if_unused(used);
    }

    // ---- defined? ----

    fn defined_str(&mut self, s: &str) {
        self.compile_string_literal(s.as_bytes(), true, crate::core::encoding::US_ASCII);
    }

    /// Pushes the `defined?` string of `node` (or nil).
    pub fn compile_defined(&mut self, node: &Node<'pr>) {
        match node {
            Node::LocalVariableReadNode { .. } | Node::ItLocalVariableReadNode { .. } => self.defined_str("local-variable"),
            Node::InstanceVariableReadNode { .. } => {
                let id = self.intern(node.as_instance_variable_read_node().expect("ivar").name().as_slice());
                self.b().emit(Insn::Defined(ops::DEF_IVAR, id.0));
            }
            Node::GlobalVariableReadNode { .. } => {
                let id = self.intern(node.as_global_variable_read_node().expect("gvar").name().as_slice());
                self.b().emit(Insn::Defined(ops::DEF_GVAR, id.0));
            }
            Node::ClassVariableReadNode { .. } => {
                let id = self.intern(node.as_class_variable_read_node().expect("cvar").name().as_slice());
                self.b().emit(Insn::Defined(ops::DEF_CVAR, id.0));
            }
            Node::ConstantReadNode { .. } => {
                let id = self.intern(node.as_constant_read_node().expect("const").name().as_slice());
                self.b().emit(Insn::Defined(ops::DEF_CONST, id.0));
            }
            Node::ConstantPathNode { .. } => {
                let n = node.as_constant_path_node().expect("cpath");
                let id = self.intern(n.name().map(|c| c.as_slice()).unwrap_or(b""));
                match n.parent() {
                    None => {
                        let obj = self.ctx.c().object;
                        self.put_literal(obj);
                        self.b().emit(Insn::Defined(ops::DEF_CONST_FROM, id.0));
                    }
                    Some(p) => {
                        let (nil_l, end) = (self.b().new_label(), self.b().new_label());
                        self.compile_defined(&p);
                        self.b().branch_nil(nil_l);
                        self.compile_or_jump_on_exception(&p, nil_l);
                        self.b().emit(Insn::Defined(ops::DEF_CONST_FROM, id.0));
                        self.b().jump(end);
                        self.b().place(nil_l);
                        self.b().emit(Insn::PutNil);
                        self.b().depth -= 1;
                        self.b().place(end);
                    }
                }
            }
            Node::CallNode { .. } => {
                let n = node.as_call_node().expect("call");
                let mid = self.intern(n.name().as_slice());
                match n.receiver() {
                    None => self.b().emit_defined(ops::DEF_FUNC, mid),
                    Some(r) => {
                        let (nil_l, end) = (self.b().new_label(), self.b().new_label());
                        self.compile_defined(&r);
                        self.b().branch_nil(nil_l);
                        self.compile_or_jump_on_exception(&r, nil_l);
                        self.b().emit(Insn::Defined(ops::DEF_METHOD, mid.0));
                        self.b().jump(end);
                        self.b().place(nil_l);
                        self.b().emit(Insn::PutNil);
                        self.b().depth -= 1;
                        self.b().place(end);
                    }
                }
            }
            Node::YieldNode { .. } => {
                self.b().emit(Insn::Defined(ops::DEF_YIELD, 0));
            }
            Node::SuperNode { .. } | Node::ForwardingSuperNode { .. } => {
                self.b().emit(Insn::Defined(ops::DEF_ZSUPER, 0));
            }
            Node::SelfNode { .. } => self.defined_str("self"),
            Node::NilNode { .. } => self.defined_str("nil"),
            Node::TrueNode { .. } => self.defined_str("true"),
            Node::FalseNode { .. } => self.defined_str("false"),
            Node::BackReferenceReadNode { .. } => {
                let n = node.as_back_reference_read_node().expect("backref");
                let kind = match n.name().as_slice() {
                    b"$&" => 1,
                    b"$`" => 2,
                    b"$'" => 3,
                    _ => 4,
                };
                self.share_special_vars();
                self.b().emit(Insn::Defined(ops::DEF_REF, kind));
            }
            Node::NumberedReferenceReadNode { .. } => {
                let n = node.as_numbered_reference_read_node().expect("nthref");
                self.share_special_vars();
                self.b().emit(Insn::Defined(ops::DEF_REF, 16 + n.number().min(1 << 20)));
            }
            Node::ParenthesesNode { .. } => {
                let n = node.as_parentheses_node().expect("parens");
                match n.body() {
                    Some(b) => {
                        let stmts: Vec<Node<'pr>> = match &b {
                            Node::StatementsNode { .. } => b.as_statements_node().expect("stmts").body().iter().collect(),
                            _ => vec![super::prism_copy(&b)],
                        };
                        if stmts.len() == 1 {
                            self.compile_defined(&stmts[0]);
                        } else {
                            self.defined_str("expression");
                        }
                    }
                    None => self.defined_str("nil"),
                }
            }
            Node::LocalVariableWriteNode { .. }
            | Node::InstanceVariableWriteNode { .. }
            | Node::GlobalVariableWriteNode { .. }
            | Node::ClassVariableWriteNode { .. }
            | Node::ConstantWriteNode { .. }
            | Node::ConstantPathWriteNode { .. }
            | Node::MultiWriteNode { .. }
            | Node::LocalVariableOperatorWriteNode { .. }
            | Node::LocalVariableOrWriteNode { .. }
            | Node::LocalVariableAndWriteNode { .. }
            | Node::InstanceVariableOperatorWriteNode { .. }
            | Node::InstanceVariableOrWriteNode { .. }
            | Node::InstanceVariableAndWriteNode { .. }
            | Node::GlobalVariableOperatorWriteNode { .. }
            | Node::GlobalVariableOrWriteNode { .. }
            | Node::GlobalVariableAndWriteNode { .. }
            | Node::ClassVariableOperatorWriteNode { .. }
            | Node::ClassVariableOrWriteNode { .. }
            | Node::ClassVariableAndWriteNode { .. }
            | Node::ConstantOperatorWriteNode { .. }
            | Node::ConstantOrWriteNode { .. }
            | Node::ConstantAndWriteNode { .. }
            | Node::ConstantPathOperatorWriteNode { .. }
            | Node::ConstantPathOrWriteNode { .. }
            | Node::ConstantPathAndWriteNode { .. }
            | Node::CallOperatorWriteNode { .. }
            | Node::CallOrWriteNode { .. }
            | Node::CallAndWriteNode { .. }
            | Node::IndexOperatorWriteNode { .. }
            | Node::IndexOrWriteNode { .. }
            | Node::IndexAndWriteNode { .. } => self.defined_str("assignment"),
            Node::ArrayNode { .. } => {
                // An array literal is defined when all its elements are.
                let elems: Vec<Node<'pr>> = node.as_array_node().expect("array").elements().iter().collect();
                let (nil_l, end) = (self.b().new_label(), self.b().new_label());
                for e in &elems {
                    let e = match e {
                        Node::SplatNode { .. } => match e.as_splat_node().and_then(|s| s.expression()) {
                            Some(x) => x,
                            None => continue,
                        },
                        _ => super::prism_copy(e),
                    };
                    self.compile_defined(&e);
                    self.b().branch_nil(nil_l);
                }
                self.defined_str("expression");
                self.b().jump(end);
                self.b().place(nil_l);
                self.b().depth -= 1;
                self.b().emit(Insn::PutNil);
                self.b().place(end);
            }
            _ => self.defined_str("expression"),
        }
    }

    /// Evaluates `node`; an exception jumps to `target` (with the stack as
    /// before `node`) instead.
    fn compile_or_jump_on_exception(&mut self, node: &Node<'pr>, target: super::builder::Label) {
        let err = self.hidden_local();
        let (start, end, handler, done) = (self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label());
        let depth = self.b().depth;
        self.b().place(start);
        self.compile(node, true);
        self.b().place(end);
        self.b().jump(done);
        self.b().place(handler);
        self.b().depth = depth;
        self.b().jump(target);
        self.b().place(done);
        self.b().depth = depth + 1;
        self.b().catch(CatchKind::Rescue, start, end, handler, depth, err);
    }
}

impl super::builder::Builder {
    pub fn emit_defined(&mut self, kind: u32, id: SymId) {
        self.emit(Insn::Defined(kind, id.0));
    }
}
