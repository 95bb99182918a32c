//! Compiling pattern matching (`case/in`, `expr => pat`, `expr in pat`).
//!
//! Convention of `compile_pattern(p, fail)`: the value to match is on top of the stack;
//! on success control falls through with the stack unchanged; on failure it jumps to
//! `fail`, also with the stack unchanged.

use ruby_prism::Node;

use super::builder::Label;
use super::iseq::Insn;
use super::Compiler;
use crate::interp::ops;
use crate::symbol::sym;
use crate::value::Value;

impl<'c, 'pr> Compiler<'c, 'pr> {
    pub fn compile_case_match(&mut self, node: &Node<'pr>, used: bool) {
        let n = node.as_case_match_node().expect("case/in");
        self.compile_opt(n.predicate(), true);
        let base = self.b().depth;
        let end = self.b().new_label();
        // The subject's #deconstruct result, shared by the top-level array
        // and find patterns of all branches (CRuby calls it once).
        let cache = self.hidden_local();
        self.b().emit(Insn::PutNil);
        self.b().emit(Insn::SetLocal(cache));
        for c in n.conditions().iter() {
            let inn = c.as_in_node().expect("in");
            self.set_line(&c);
            let next = self.b().new_label();
            let pat = inn.pattern();
            let (pattern, guard, unless) = match &pat {
                Node::IfNode { .. } => {
                    let g = pat.as_if_node().expect("guard");
                    let inner = g.statements().and_then(|s| s.body().iter().next());
                    (inner, Some(g.predicate()), false)
                }
                Node::UnlessNode { .. } => {
                    let g = pat.as_unless_node().expect("guard");
                    let inner = g.statements().and_then(|s| s.body().iter().next());
                    (inner, Some(g.predicate()), true)
                }
                _ => (Some(super::prism_copy(&pat)), None, false),
            };
            if let Some(p) = pattern {
                self.deconstruct_cache = Some(cache);
                self.compile_pattern(&p, next);
                self.deconstruct_cache = None;
            }
            if let Some(g) = guard {
                self.compile(&g, true);
                if unless {
                    self.b().branch_if(next);
                } else {
                    self.b().branch_unless(next);
                }
            }
            self.b().emit(Insn::Pop);
            self.compile_statements(inn.statements(), used);
            self.b().jump(end);
            self.b().place(next);
            self.b().depth = base;
        }
        match n.else_clause() {
            Some(e) => {
                self.b().emit(Insn::Pop);
                self.compile_statements(e.statements(), used);
            }
            None => {
                self.b().emit(Insn::PatternError(0));
                self.b().depth += used as i32;
            }
        }
        self.b().place(end);
        self.b().depth = base - 1 + used as i32;
    }

    pub fn compile_match_predicate(&mut self, value: &Node<'pr>, pattern: &Node<'pr>, used: bool) {
        self.compile(value, true);
        let base = self.b().depth;
        let (fail, end) = (self.b().new_label(), self.b().new_label());
        self.compile_pattern(pattern, fail);
        self.b().emit(Insn::Pop);
        self.b().emit(Insn::PutTrue);
        self.b().jump(end);
        self.b().place(fail);
        self.b().depth = base;
        self.b().emit(Insn::Pop);
        self.b().emit(Insn::PutFalse);
        self.b().place(end);
        self.pop_if_unused(used);
    }

    pub fn compile_match_required(&mut self, value: &Node<'pr>, pattern: &Node<'pr>, used: bool) {
        self.compile(value, true);
        let base = self.b().depth;
        let (fail, end) = (self.b().new_label(), self.b().new_label());
        self.compile_pattern(pattern, fail);
        self.b().emit(Insn::Pop);
        self.b().jump(end);
        self.b().place(fail);
        self.b().depth = base;
        let key_error = matches!(pattern, Node::HashPatternNode { .. });
        self.b().emit(Insn::PatternError(key_error as u32));
        self.b().place(end);
        self.b().depth = base - 1;
        if used {
            self.b().emit(Insn::PutNil);
        }
    }

    /// With the value on top, pushes its #deconstruct (jumping to `fail` with
    /// `false` pushed when it has none). The case's top-level pattern reuses
    /// the cached result; nested patterns deconstruct afresh.
    fn emit_deconstruct(&mut self, fail: Label) {
        let Some(cache) = self.deconstruct_cache.take() else {
            self.b().emit(Insn::Dup);
            self.b().emit_with_target(Insn::Deconstruct(0), fail);
            return;
        };
        let (compute, have) = (self.b().new_label(), self.b().new_label());
        let base = self.b().depth;
        self.b().emit(Insn::Dup);
        self.b().emit(Insn::GetLocal(cache));
        self.b().emit(Insn::Dup);
        self.b().branch_nil(compute);
        self.b().emit(Insn::Swap);
        self.b().emit(Insn::Pop);
        self.b().jump(have);
        self.b().place(compute);
        self.b().depth = base + 2;
        self.b().emit(Insn::Pop);
        self.b().emit_with_target(Insn::Deconstruct(0), fail);
        self.b().emit(Insn::Dup);
        self.b().emit(Insn::SetLocal(cache));
        self.b().place(have);
        self.b().depth = base + 1;
    }

    pub fn compile_pattern(&mut self, p: &Node<'pr>, fail: Label) {
        // Only a case's top-level array/find pattern uses the deconstruct cache.
        if !matches!(p, Node::ArrayPatternNode { .. } | Node::FindPatternNode { .. }) {
            self.deconstruct_cache = None;
        }
        match p {
            Node::LocalVariableTargetNode { .. } => {
                let n = p.as_local_variable_target_node().expect("binding");
                let id = self.intern(n.name().as_slice());
                if n.name().as_slice().starts_with(b"_") && n.name().as_slice().len() == 1 {
                    return;
                }
                self.b().emit(Insn::Dup);
                self.emit_set_local(id, n.depth());
            }
            Node::AlternationPatternNode { .. } => {
                let n = p.as_alternation_pattern_node().expect("alt");
                let (alt, ok) = (self.b().new_label(), self.b().new_label());
                let base = self.b().depth;
                self.compile_pattern(&n.left(), alt);
                self.b().jump(ok);
                self.b().place(alt);
                self.b().depth = base;
                self.compile_pattern(&n.right(), fail);
                self.b().place(ok);
            }
            Node::CapturePatternNode { .. } => {
                let n = p.as_capture_pattern_node().expect("capture");
                self.compile_pattern(&n.value(), fail);
                let t = n.target();
                let id = self.intern(t.name().as_slice());
                self.b().emit(Insn::Dup);
                self.emit_set_local(id, t.depth());
            }
            Node::PinnedVariableNode { .. } => {
                let n = p.as_pinned_variable_node().expect("pin");
                self.b().emit(Insn::Dup);
                self.compile(&n.variable(), true);
                self.emit_case_eq(fail);
            }
            Node::PinnedExpressionNode { .. } => {
                let n = p.as_pinned_expression_node().expect("pin expr");
                self.b().emit(Insn::Dup);
                self.compile(&n.expression(), true);
                self.emit_case_eq(fail);
            }
            Node::ArrayPatternNode { .. } => self.compile_array_pattern(p, fail),
            Node::FindPatternNode { .. } => self.compile_find_pattern(p, fail),
            Node::HashPatternNode { .. } => self.compile_hash_pattern(p, fail),
            Node::ParenthesesNode { .. } => {
                let n = p.as_parentheses_node().expect("paren pattern");
                if let Some(b) = n.body() {
                    let inner = match &b {
                        Node::StatementsNode { .. } => b.as_statements_node().and_then(|s| s.body().iter().next()),
                        _ => Some(super::prism_copy(&b)),
                    };
                    if let Some(i) = inner {
                        self.compile_pattern(&i, fail);
                    }
                }
            }
            Node::ImplicitNode { .. } => {
                let n = p.as_implicit_node().expect("implicit");
                self.compile_pattern(&n.value(), fail);
            }
            _ => {
                // Value pattern: pattern === value.
                self.b().emit(Insn::Dup);
                self.compile(p, true);
                self.emit_case_eq(fail);
            }
        }
    }

    /// Stack: v, v, pattern → v; jumps to fail unless `pattern === v`.
    fn emit_case_eq(&mut self, fail: Label) {
        self.b().emit(Insn::CheckMatch(ops::MATCH_WHEN));
        self.b().branch_unless(fail);
    }

    fn check_constant(&mut self, constant: Option<Node<'pr>>, fail: Label) {
        if let Some(c) = constant {
            self.b().emit(Insn::Dup);
            self.compile(&c, true);
            self.b().emit(Insn::CheckMatch(ops::MATCH_WHEN));
            self.b().branch_unless(fail);
        }
    }

    fn compile_array_pattern(&mut self, p: &Node<'pr>, fail: Label) {
        let n = p.as_array_pattern_node().expect("array pattern");
        self.check_constant(n.constant(), fail);
        let reqs: Vec<Node<'pr>> = n.requireds().iter().collect();
        let posts: Vec<Node<'pr>> = n.posts().iter().collect();
        let rest = n.rest();
        let (pre, post) = (reqs.len() as i32, posts.len() as i32);
        let base = self.b().depth;
        let (fail1, fail2, ok) = (self.b().new_label(), self.b().new_label(), self.b().new_label());
        self.emit_deconstruct(fail1);
        // Stack: v, arr
        self.b().emit(Insn::Dup);
        let len_ci = self.b().call_info(sym::LENGTH, 0, 0, None);
        self.b().emit(Insn::OptLength(len_ci));
        self.put_literal(Value::fixnum((pre + post) as i64));
        let cmp = if rest.is_some() { sym::GE } else { sym::EQ };
        self.emit_send(cmp, &super::call::ArgInfo::positional(1, 0));
        self.b().branch_unless(fail1);
        for (i, r) in reqs.iter().enumerate() {
            self.b().emit(Insn::Dup);
            self.put_literal(Value::fixnum(i as i64));
            let ci = self.b().call_info(sym::AREF, 1, 0, None);
            self.b().emit(Insn::OptAref(ci));
            self.compile_pattern(r, fail2);
            self.b().emit(Insn::Pop);
        }
        if let Some(Node::SplatNode { .. }) = &rest {
            let s = rest.as_ref().and_then(|r| r.as_splat_node()).expect("splat");
            if let Some(t) = s.expression() {
                // arr[pre, len - pre - post]
                self.b().emit(Insn::Dup);
                self.put_literal(Value::fixnum(pre as i64));
                self.b().emit(Insn::TopN(1));
                let ci = self.b().call_info(sym::LENGTH, 0, 0, None);
                self.b().emit(Insn::OptLength(ci));
                self.put_literal(Value::fixnum((pre + post) as i64));
                let ci = self.b().call_info(sym::MINUS, 1, 0, None);
                self.b().emit(Insn::OptMinus(ci));
                let ci = self.b().call_info(sym::AREF, 2, 0, None);
                self.b().emit(Insn::Send(ci));
                self.compile_pattern(&t, fail2);
                self.b().emit(Insn::Pop);
            }
        }
        for (j, r) in posts.iter().enumerate() {
            self.b().emit(Insn::Dup);
            self.put_literal(Value::fixnum(j as i64 - post as i64));
            let ci = self.b().call_info(sym::AREF, 1, 0, None);
            self.b().emit(Insn::OptAref(ci));
            self.compile_pattern(r, fail2);
            self.b().emit(Insn::Pop);
        }
        self.b().emit(Insn::Pop);
        self.b().jump(ok);
        self.b().place(fail2);
        self.b().depth = base + 2;
        self.b().emit(Insn::Pop);
        self.b().place(fail1);
        self.b().depth = base + 1;
        self.b().emit(Insn::Pop);
        self.b().jump(fail);
        self.b().place(ok);
        self.b().depth = base;
    }

    fn compile_find_pattern(&mut self, p: &Node<'pr>, fail: Label) {
        let n = p.as_find_pattern_node().expect("find pattern");
        self.check_constant(n.constant(), fail);
        let reqs: Vec<Node<'pr>> = n.requireds().iter().collect();
        let count = reqs.len() as i64;
        let base = self.b().depth;
        let idx = self.hidden_local();
        let (fail1, next_i, loop_l, ok) = (self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label());
        self.emit_deconstruct(fail1);
        self.put_literal(Value::fixnum(0));
        self.b().emit(Insn::SetLocal(idx));
        self.b().place(loop_l);
        // idx <= arr.length - count
        self.b().emit(Insn::GetLocal(idx));
        self.b().emit(Insn::TopN(1));
        let ci = self.b().call_info(sym::LENGTH, 0, 0, None);
        self.b().emit(Insn::OptLength(ci));
        self.put_literal(Value::fixnum(count));
        let ci = self.b().call_info(sym::MINUS, 1, 0, None);
        self.b().emit(Insn::OptMinus(ci));
        let ci = self.b().call_info(sym::LE, 1, 0, None);
        self.b().emit(Insn::OptLe(ci));
        self.b().branch_unless(fail1);
        for (k, r) in reqs.iter().enumerate() {
            self.b().emit(Insn::Dup);
            self.b().emit(Insn::GetLocal(idx));
            self.put_literal(Value::fixnum(k as i64));
            let ci = self.b().call_info(sym::PLUS, 1, 0, None);
            self.b().emit(Insn::OptPlus(ci));
            let ci = self.b().call_info(sym::AREF, 1, 0, None);
            self.b().emit(Insn::OptAref(ci));
            self.compile_pattern(r, next_i);
            self.b().emit(Insn::Pop);
        }
        // Bind the pre and post splats.
        if let Some(t) = n.left().expression() {
            self.b().emit(Insn::Dup);
            self.put_literal(Value::fixnum(0));
            self.b().emit(Insn::GetLocal(idx));
            let ci = self.b().call_info(sym::AREF, 2, 0, None);
            self.b().emit(Insn::Send(ci));
            self.compile_target_from_stack(&t);
        }
        {
            let s = n.right();
            if let Some(t) = s.expression() {
                self.b().emit(Insn::Dup);
                self.b().emit(Insn::GetLocal(idx));
                self.put_literal(Value::fixnum(count));
                let ci = self.b().call_info(sym::PLUS, 1, 0, None);
                self.b().emit(Insn::OptPlus(ci));
                self.put_literal(Value::fixnum(-1));
                self.b().emit(Insn::NewRange(0));
                let ci = self.b().call_info(sym::AREF, 1, 0, None);
                self.b().emit(Insn::OptAref(ci));
                self.compile_target_from_stack(&t);
            }
        }
        self.b().emit(Insn::Pop);
        self.b().jump(ok);
        self.b().place(next_i);
        self.b().depth = base + 2;
        self.b().emit(Insn::Pop);
        self.b().emit(Insn::GetLocal(idx));
        self.put_literal(Value::fixnum(1));
        let ci = self.b().call_info(sym::PLUS, 1, 0, None);
        self.b().emit(Insn::OptPlus(ci));
        self.b().emit(Insn::SetLocal(idx));
        self.b().jump(loop_l);
        self.b().place(fail1);
        self.b().depth = base + 1;
        self.b().emit(Insn::Pop);
        self.b().jump(fail);
        self.b().place(ok);
        self.b().depth = base;
    }

    fn compile_hash_pattern(&mut self, p: &Node<'pr>, fail: Label) {
        let n = p.as_hash_pattern_node().expect("hash pattern");
        self.check_constant(n.constant(), fail);
        let elems: Vec<Node<'pr>> = n.elements().iter().collect();
        let rest = n.rest();
        let named_rest = matches!(&rest, Some(Node::AssocSplatNode { .. })) && rest.as_ref().and_then(|r| r.as_assoc_splat_node()).and_then(|a| a.value()).is_some();
        let base = self.b().depth;
        let (fail1, fail2, ok) = (self.b().new_label(), self.b().new_label(), self.b().new_label());
        let mut keys = Vec::new();
        for e in &elems {
            if let Some(a) = e.as_assoc_node() {
                if let Some(s) = a.key().as_symbol_node() {
                    keys.push(Value::symbol(self.intern(s.unescaped())));
                }
            }
        }
        self.b().emit(Insn::Dup);
        if named_rest {
            self.b().emit(Insn::PutNil);
        } else {
            for k in &keys {
                self.put_literal(*k);
            }
            self.b().emit(Insn::NewArray(keys.len() as u32));
        }
        self.b().emit_with_target(Insn::DeconstructKeys(0), fail1);
        // Stack: v, h
        if elems.is_empty() && rest.is_none() {
            self.b().emit(Insn::Dup);
            let mid = self.ctx.intern("empty?");
            let ci = self.b().call_info(mid, 0, 0, None);
            self.b().emit(Insn::OptEmptyP(ci));
            self.b().branch_unless(fail1);
        }
        let key_p = self.intern(b"key?");
        for e in &elems {
            let Some(a) = e.as_assoc_node() else { continue };
            let Some(s) = a.key().as_symbol_node() else { continue };
            let key = Value::symbol(self.intern(s.unescaped()));
            self.b().emit(Insn::Dup);
            self.put_literal(key);
            let ci = self.b().call_info(key_p, 1, 0, None);
            self.b().emit(Insn::Send(ci));
            self.b().branch_unless(fail1);
            self.b().emit(Insn::Dup);
            self.put_literal(key);
            let ci = self.b().call_info(sym::AREF, 1, 0, None);
            self.b().emit(Insn::OptAref(ci));
            self.compile_pattern(&a.value(), fail2);
            self.b().emit(Insn::Pop);
        }
        match &rest {
            Some(Node::NoKeywordsParameterNode { .. }) => {
                self.b().emit(Insn::Dup);
                let ci = self.b().call_info(sym::SIZE, 0, 0, None);
                self.b().emit(Insn::OptSize(ci));
                self.put_literal(Value::fixnum(keys.len() as i64));
                let ci = self.b().call_info(sym::EQ, 1, 0, None);
                self.b().emit(Insn::OptEq(ci));
                self.b().branch_unless(fail1);
            }
            Some(Node::AssocSplatNode { .. }) => {
                let a = rest.as_ref().and_then(|r| r.as_assoc_splat_node()).expect("rest");
                if let Some(t) = a.value() {
                    // The rest: a copy without the matched keys.
                    self.b().emit(Insn::Dup);
                    let dup = self.intern(b"dup");
                    let ci = self.b().call_info(dup, 0, 0, None);
                    self.b().emit(Insn::Send(ci));
                    let delete = self.intern(b"delete");
                    for k in &keys {
                        self.b().emit(Insn::Dup);
                        self.put_literal(*k);
                        let ci = self.b().call_info(delete, 1, 0, None);
                        self.b().emit(Insn::Send(ci));
                        self.b().emit(Insn::Pop);
                    }
                    self.compile_pattern(&t, fail2);
                    self.b().emit(Insn::Pop);
                }
            }
            _ => {}
        }
        self.b().emit(Insn::Pop);
        self.b().jump(ok);
        self.b().place(fail2);
        self.b().depth = base + 2;
        self.b().emit(Insn::Pop);
        self.b().place(fail1);
        self.b().depth = base + 1;
        self.b().emit(Insn::Pop);
        self.b().jump(fail);
        self.b().place(ok);
        self.b().depth = base;
    }
}
