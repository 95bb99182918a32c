//! Compiling control flow: conditionals, loops, case/when, begin/rescue/ensure, and the
//! jumps out of them (break, next, redo, retry, return).

use ruby_prism::Node;

use super::iseq::{CatchKind, Insn, IseqKind};
use super::{Compiler, EnsureItem, LoopCtx};
use crate::interp::ops;
use crate::symbol::sym;

impl<'c, 'pr> Compiler<'c, 'pr> {
    /// Compiles `node` as a branch condition: jumps to `target` when its truthiness is
    /// `jump_if`, falls through otherwise, and leaves nothing on the stack. `&&`, `||` and
    /// parentheses around one expression become chains of branches, without the value
    /// copies (`Dup`/`Pop`) that their value needs elsewhere.
    pub fn compile_cond(&mut self, node: &Node<'pr>, jump_if: bool, target: super::builder::Label) {
        if self.error.is_some() || self.ctx.native_stack_exhausted() {
            self.compile(node, true);
            return;
        }
        match node {
            Node::AndNode { .. } | Node::OrNode { .. } => {
                self.set_line(node);
                let (left, right, and) = match node.as_and_node() {
                    Some(n) => (n.left(), n.right(), true),
                    None => {
                        let n = node.as_or_node().expect("or");
                        (n.left(), n.right(), false)
                    }
                };
                // `a && b` is false as soon as `a` is; `a || b` true as soon as `a` is.
                if jump_if != and {
                    self.compile_cond(&left, jump_if, target);
                } else {
                    let skip = self.b().new_label();
                    self.compile_cond(&left, !jump_if, skip);
                    self.compile_cond(&right, jump_if, target);
                    self.b().place(skip);
                    return;
                }
                self.compile_cond(&right, jump_if, target);
            }
            Node::ParenthesesNode { .. } => {
                let n = node.as_parentheses_node().expect("parens");
                match n.body().and_then(|b| b.as_statements_node()) {
                    Some(st) if st.body().iter().count() == 1 => {
                        self.set_line(node);
                        let only = st.body().iter().next().expect("one statement");
                        self.compile_cond(&only, jump_if, target);
                    }
                    _ => self.cond_branch(node, jump_if, target),
                }
            }
            _ => self.cond_branch(node, jump_if, target),
        }
    }

    fn cond_branch(&mut self, node: &Node<'pr>, jump_if: bool, target: super::builder::Label) {
        self.compile(node, true);
        if jump_if {
            self.b().branch_if(target);
        } else {
            self.b().branch_unless(target);
        }
    }

    pub fn compile_if(&mut self, node: &Node<'pr>, used: bool) {
        let n = node.as_if_node().expect("if");
        let base = self.b().depth;
        let (else_l, end) = (self.b().new_label(), self.b().new_label());
        self.compile_cond(&n.predicate(), false, else_l);
        self.compile_statements(n.statements(), used);
        self.b().jump(end);
        self.b().place(else_l);
        self.b().depth = base;
        self.compile_opt(n.subsequent(), used);
        self.b().place(end);
    }

    pub fn compile_unless(&mut self, node: &Node<'pr>, used: bool) {
        let n = node.as_unless_node().expect("unless");
        let base = self.b().depth;
        let (else_l, end) = (self.b().new_label(), self.b().new_label());
        self.compile_cond(&n.predicate(), true, else_l);
        self.compile_statements(n.statements(), used);
        self.b().jump(end);
        self.b().place(else_l);
        self.b().depth = base;
        match n.else_clause() {
            Some(e) => self.compile_statements(e.statements(), used),
            None => {
                if used {
                    self.b().emit(Insn::PutNil);
                }
            }
        }
        self.b().place(end);
    }

    pub fn compile_while(&mut self, node: &Node<'pr>, used: bool) {
        let (until, begin_mod, pred, stmts) = match node {
            Node::WhileNode { .. } => {
                let n = node.as_while_node().expect("while");
                (false, n.is_begin_modifier(), n.predicate(), n.statements())
            }
            _ => {
                let n = node.as_until_node().expect("until");
                (true, n.is_begin_modifier(), n.predicate(), n.statements())
            }
        };
        let base = self.b().depth;
        let (body, cond, end) = (self.b().new_label(), self.b().new_label(), self.b().new_label());
        if !begin_mod {
            self.b().jump(cond);
        }
        self.b().place(body);
        let ensure_len = self.scope().ensures.len();
        self.scope().loops.push(LoopCtx { brk: end, next: cond, redo: body, depth: base, ensure_len });
        if std::mem::take(&mut self.chomp_loop_body) {
            let (last_line, chomp) = (self.intern(b"$_"), self.intern(b"chomp!"));
            self.b().emit(Insn::GetGlobal(last_line));
            let ci = self.b().call_info(chomp, 0, 0, None);
            self.b().emit(Insn::Send(ci));
            self.b().emit(Insn::Pop);
        }
        self.compile_statements(stmts, false);
        self.scope().loops.pop();
        self.b().place(cond);
        self.b().emit(Insn::Checkpoint);
        self.compile_cond(&pred, !until, body);
        self.b().emit(Insn::PutNil);
        self.b().place(end);
        self.pop_if_unused(used);
    }

    pub fn compile_for(&mut self, node: &Node<'pr>, used: bool) {
        let n = node.as_for_node().expect("for");
        self.compile(&n.collection(), true);
        let label = self.block_label();
        let line = self.b().line;
        self.push_scope(IseqKind::Block, label, line);
        self.scope().transparent = true;
        let tmp = self.intern(b"\0for");
        self.b().add_local(tmp);
        self.b().params.simple = false;
        let multi = matches!(n.index(), Node::MultiTargetNode { .. });
        if multi {
            // `for a, b in …` takes all the yielded values (`|*tmp|`); one
            // yielded value is itself spread over the targets.
            self.b().params.rest = true;
        } else {
            self.b().params.lead = 1;
        }
        self.b().emit(Insn::GetLocal(0));
        if multi {
            let spread = self.b().new_label();
            self.b().emit(Insn::Dup);
            let size = self.intern(b"size");
            let ci = self.b().call_info(size, 0, 0, None);
            self.b().emit(Insn::Send(ci));
            self.b().emit(Insn::PutInt(1));
            let ci = self.b().call_info(sym::EQ, 1, 0, None);
            self.b().emit(Insn::Send(ci));
            self.b().branch_unless(spread);
            let first = self.intern(b"first");
            let ci = self.b().call_info(first, 0, 0, None);
            self.b().emit(Insn::Send(ci));
            self.b().place(spread);
        }
        self.compile_target_from_stack(&n.index());
        // `redo` runs the body again without assigning the loop variable afresh.
        let redo = self.b().new_label();
        self.b().place(redo);
        self.scope().block_redo = Some(redo);
        self.compile_statements(n.statements(), true);
        self.b().emit(Insn::Leave);
        let scope = self.scopes.pop().expect("for scope");
        let outer = self.outer_names();
        let iseq = self.finish_scope(scope, outer);
        self.keep(iseq);
        let child = self.b().child(iseq);
        let ci = self.b().call_info(sym::EACH, 0, 0, Some(child));
        self.b().emit(Insn::Send(ci));
        self.pop_if_unused(used);
    }

    /// Runs the ensure bodies between the current position and `keep` enclosing ensures.
    fn inline_ensures(&mut self, keep: usize) {
        let saved = std::mem::take(&mut self.scope().ensures);
        let mut holes = std::mem::take(&mut self.scope().ensure_holes);
        for depth in (keep..saved.len()).rev() {
            // While an ensure body runs, only the ensures outside it are active.
            self.scope().ensures = saved[..depth].iter().map(super::prism_copy).collect();
            self.scope().ensure_holes = holes[..depth].to_vec();
            let (from, to) = (self.b().new_label(), self.b().new_label());
            self.b().place(from);
            match &saved[depth] {
                EnsureItem::Body(body) => {
                    let body = super::prism_copy(body);
                    self.compile_statements(body, false);
                }
                EnsureItem::RestoreErrinfo(local) => {
                    self.b().emit(Insn::GetLocal(*local));
                    self.b().emit(Insn::SetErrinfo);
                }
            }
            self.b().place(to);
            // Jumps inside the copy may have made holes in the outer ensures.
            let inner = std::mem::take(&mut self.scope().ensure_holes);
            holes[..depth].clone_from_slice(&inner);
            for h in &mut holes[depth..] {
                h.push((from, to));
            }
        }
        self.scope().ensures = saved;
        self.scope().ensure_holes = holes;
    }

    /// Pushes an item on `ensures` (with its hole list).
    fn push_ensure(&mut self, item: EnsureItem<'pr>) {
        self.scope().ensures.push(item);
        self.scope().ensure_holes.push(Vec::new());
    }

    /// Pops the innermost item of `ensures`, returning its holes.
    fn pop_ensure(&mut self) -> Vec<(super::builder::Label, super::builder::Label)> {
        self.scope().ensures.pop();
        self.scope().ensure_holes.pop().unwrap_or_default()
    }

    pub fn compile_break(&mut self, node: &Node<'pr>) {
        let n = node.as_break_node().expect("break");
        let value = n.arguments().map(|a| a.arguments().iter().collect::<Vec<_>>()).unwrap_or_default();
        let d0 = self.b().depth;
        if let Some(lp) = self.scope().loops.last() {
            let (brk, depth, ensure_len) = (lp.brk, lp.depth, lp.ensure_len);
            self.compile_jump_value(&value);
            self.drop_to_depth(depth);
            self.inline_ensures(ensure_len);
            self.b().jump(brk);
            self.b().depth = d0 + 1;
            return;
        }
        if self.b().kind == IseqKind::Block || self.in_class_body_in_block() {
            self.compile_jump_value(&value);
            self.b().emit(Insn::ThrowBreak);
            self.b().depth += 1;
            return;
        }
        self.fail("Invalid break");
    }

    pub fn compile_next(&mut self, node: &Node<'pr>) {
        let n = node.as_next_node().expect("next");
        let value = n.arguments().map(|a| a.arguments().iter().collect::<Vec<_>>()).unwrap_or_default();
        if let Some(lp) = self.scope().loops.last() {
            let (next, depth, ensure_len) = (lp.next, lp.depth, lp.ensure_len);
            let d0 = self.b().depth;
            if !value.is_empty() {
                self.compile_jump_value(&value);
                self.b().emit(Insn::Pop);
            }
            let extra = self.b().depth - depth;
            if extra > 0 {
                self.b().emit(Insn::AdjustStack(extra as u32));
            }
            self.inline_ensures(ensure_len);
            self.b().jump(next);
            self.b().depth = d0 + 1;
            return;
        }
        if self.b().kind == IseqKind::Block {
            let d0 = self.b().depth;
            self.compile_jump_value(&value);
            self.inline_ensures(0);
            self.b().emit(Insn::Leave);
            self.b().depth = d0 + 1;
            return;
        }
        if self.in_class_body_in_block() {
            let d0 = self.b().depth;
            self.compile_jump_value(&value);
            self.b().emit(Insn::ThrowNext);
            self.b().depth = d0 + 1;
            return;
        }
        self.fail("Invalid next");
    }

    /// Whether this is a class, module or singleton class body written (possibly inside
    /// other such bodies) directly in a block: `break` and `next` there act on the block.
    fn in_class_body_in_block(&self) -> bool {
        for s in self.scopes.iter().rev() {
            match s.b.kind {
                IseqKind::Class if s.loops.is_empty() => continue,
                IseqKind::Block => return s.loops.is_empty(),
                _ => return false,
            }
        }
        false
    }

    pub fn compile_redo(&mut self) {
        let d0 = self.b().depth;
        if let Some(lp) = self.scope().loops.last() {
            let (redo, depth, ensure_len) = (lp.redo, lp.depth, lp.ensure_len);
            let extra = self.b().depth - depth;
            if extra > 0 {
                self.b().emit(Insn::AdjustStack(extra as u32));
            }
            self.inline_ensures(ensure_len);
            self.b().jump(redo);
            self.b().depth = d0 + 1;
            return;
        }
        if let Some(redo) = self.scope().block_redo {
            self.b().emit(Insn::AdjustStack(d0.max(0) as u32));
            self.inline_ensures(0);
            self.b().jump(redo);
            self.b().depth = d0 + 1;
            return;
        }
        self.fail("Invalid redo");
    }

    pub fn compile_retry(&mut self) {
        let d0 = self.b().depth;
        match self.scope().retries.last().copied() {
            Some(l) => {
                self.b().jump(l);
                self.b().depth = d0 + 1;
            }
            None => self.fail("Invalid retry"),
        }
    }

    pub fn compile_return(&mut self, node: &Node<'pr>) {
        let n = node.as_return_node().expect("return");
        let value: Vec<Node<'pr>> = n.arguments().map(|a| a.arguments().iter().collect()).unwrap_or_default();
        if !value.is_empty() && matches!(self.b().kind, IseqKind::Main | IseqKind::Top) {
            let line = node.location().start_line();
            let msg = format!("{}:{line}: warning: argument of top-level return is ignored\n", self.path);
            crate::core::kernel::write_warning(self.ctx, &msg);
        }
        let d0 = self.b().depth;
        self.compile_jump_value(&value);
        match self.b().kind {
            // In a class body (inside a method; at the top level it is a syntax error) the
            // return leaves the method that runs the definition.
            IseqKind::Block | IseqKind::Class => {
                self.b().emit(Insn::ThrowReturn);
            }
            _ => {
                self.inline_ensures(0);
                self.b().emit(Insn::Leave);
            }
        }
        self.b().depth = d0 + 1;
    }

    /// Pushes the value of `break v`/`next v`/`return v` (nil, one value, or an array).
    fn compile_jump_value(&mut self, values: &[Node<'pr>]) {
        match values.len() {
            0 => {
                self.b().emit(Insn::PutNil);
            }
            1 if !matches!(values[0], Node::SplatNode { .. }) => self.compile(&values[0], true),
            _ => self.compile_array_elements(values),
        }
    }

    /// With a value on top, drops what lies between `depth` and it.
    fn drop_to_depth(&mut self, depth: i32) {
        let extra = self.b().depth - 1 - depth;
        if extra > 0 {
            self.b().emit(Insn::SetN(extra as u32));
            self.b().emit(Insn::AdjustStack(extra as u32));
        }
    }

    pub fn compile_case(&mut self, node: &Node<'pr>, used: bool) {
        let n = node.as_case_node().expect("case");
        let base = self.b().depth;
        let end = self.b().new_label();
        let whens: Vec<Node<'pr>> = n.conditions().iter().collect();
        let mut bodies = Vec::new();
        let has_subject = n.predicate().is_some();
        if let Some(p) = n.predicate() {
            self.compile(&p, true);
        }
        for w in &whens {
            let wn = w.as_when_node().expect("when");
            let body = self.b().new_label();
            for cond in wn.conditions().iter() {
                self.set_line(&cond);
                if has_subject {
                    self.b().emit(Insn::Dup);
                    match cond {
                        Node::SplatNode { .. } => {
                            let s = cond.as_splat_node().expect("splat");
                            self.compile_splat_value(&s);
                            self.b().emit(Insn::CheckMatch(ops::MATCH_WHEN_SPLAT));
                        }
                        _ => {
                            self.compile(&cond, true);
                            self.b().emit(Insn::CheckMatch(ops::MATCH_WHEN));
                        }
                    }
                } else {
                    match cond {
                        Node::SplatNode { .. } => {
                            let s = cond.as_splat_node().expect("splat");
                            self.compile_splat_value(&s);
                            let any = self.intern(b"any?");
                            let ci = self.b().call_info(any, 0, 0, None);
                            self.b().emit(Insn::Send(ci));
                        }
                        _ => self.compile(&cond, true),
                    }
                }
                self.b().branch_if(body);
            }
            bodies.push((body, wn.statements()));
        }
        if has_subject {
            self.b().emit(Insn::Pop);
        }
        match n.else_clause() {
            Some(e) => self.compile_statements(e.statements(), used),
            None => {
                if used {
                    self.b().emit(Insn::PutNil);
                }
            }
        }
        self.b().jump(end);
        for (label, stmts) in bodies {
            self.b().place(label);
            self.b().depth = base + has_subject as i32;
            if has_subject {
                self.b().emit(Insn::Pop);
            }
            self.compile_statements(stmts, used);
            self.b().jump(end);
        }
        self.b().place(end);
        self.b().depth = base + used as i32;
    }

    // ---- begin / rescue / ensure ----

    pub fn compile_begin(&mut self, n: &ruby_prism::BeginNode<'pr>, used: bool) {
        if n.rescue_clause().is_none() && n.ensure_clause().is_none() {
            if let Some(e) = n.else_clause() {
                self.compile_statements(n.statements(), false);
                self.compile_statements(e.statements(), used);
            } else {
                self.compile_statements(n.statements(), used);
            }
            return;
        }
        match n.ensure_clause() {
            Some(ens) => {
                let err = self.hidden_local();
                let base = self.b().depth;
                let (start, end, handler, after) = (self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label());
                self.push_ensure(EnsureItem::Body(ens.statements()));
                self.b().place(start);
                self.compile_rescue_part(n, used);
                self.b().place(end);
                let holes = self.pop_ensure();
                self.compile_statements(ens.statements(), false);
                self.b().jump(after);
                self.b().place(handler);
                self.b().depth = base;
                // While an exception passes through, the ensure body sees it as `$!`.
                let not_exception = self.b().new_label();
                self.b().emit(Insn::GetLocal(err));
                self.b().emit(Insn::PutNil);
                self.b().emit(Insn::CheckMatch(ops::MATCH_EXCEPTION));
                self.b().branch_unless(not_exception);
                self.b().emit(Insn::GetLocal(err));
                self.b().emit(Insn::SetErrinfo);
                self.b().place(not_exception);
                self.compile_statements(ens.statements(), false);
                self.b().emit(Insn::Reraise(err));
                self.b().place(after);
                self.b().depth = base + used as i32;
                // The protected range, less the inline copies of this body.
                let mut from = start;
                for (hole_start, hole_end) in holes {
                    self.b().catch(CatchKind::Ensure, from, hole_start, handler, base, err);
                    from = hole_end;
                }
                self.b().catch(CatchKind::Ensure, from, end, handler, base, err);
            }
            None => self.compile_rescue_part(n, used),
        }
    }

    fn compile_rescue_part(&mut self, n: &ruby_prism::BeginNode<'pr>, used: bool) {
        let Some(rescue) = n.rescue_clause() else {
            self.compile_statements(n.statements(), used);
            if let Some(e) = n.else_clause() {
                if used {
                    self.b().emit(Insn::Pop);
                }
                self.compile_statements(e.statements(), used);
            }
            return;
        };
        let err = self.hidden_local();
        let saved_errinfo = self.hidden_local();
        let base = self.b().depth;
        let (retry, start, end, handler, after) = (self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label());
        self.b().emit(Insn::GetErrinfo);
        self.b().emit(Insn::SetLocal(saved_errinfo));
        self.b().place(retry);
        self.b().place(start);
        self.compile_statements(n.statements(), used);
        self.b().place(end);
        if let Some(e) = n.else_clause() {
            if used {
                self.b().emit(Insn::Pop);
            }
            self.compile_statements(e.statements(), used);
        }
        self.b().jump(after);
        self.b().place(handler);
        self.b().depth = base;
        // Find the clause whose classes match.
        let mut clauses = Vec::new();
        let mut cur = Some(rescue);
        while let Some(r) = cur {
            let body = self.b().new_label();
            let exceptions: Vec<Node<'pr>> = r.exceptions().iter().collect();
            if exceptions.is_empty() {
                self.b().emit(Insn::GetLocal(err));
                let se = self.ctx.c().standard_error;
                self.put_literal(se);
                self.b().emit(Insn::CheckMatch(ops::MATCH_RESCUE));
                self.b().branch_if(body);
            }
            for e in &exceptions {
                self.b().emit(Insn::GetLocal(err));
                match e {
                    Node::SplatNode { .. } => {
                        let s = e.as_splat_node().expect("splat");
                        self.compile_splat_value(&s);
                        self.b().emit(Insn::CheckMatch(ops::MATCH_RESCUE_SPLAT));
                    }
                    _ => {
                        self.compile(e, true);
                        self.b().emit(Insn::CheckMatch(ops::MATCH_RESCUE));
                    }
                }
                self.b().branch_if(body);
            }
            clauses.push((body, r.reference(), r.statements()));
            cur = r.subsequent();
        }
        self.b().emit(Insn::Reraise(err));
        self.scope().retries.push(retry);
        // Leaving a clause by any way restores `$!`: inline for jumps within
        // this frame, through an ensure entry for unwinding.
        let unwinding = self.hidden_local();
        for (label, reference, stmts) in clauses {
            self.b().place(label);
            self.b().depth = base;
            let (cstart, cend, chandler) = (self.b().new_label(), self.b().new_label(), self.b().new_label());
            self.b().place(cstart);
            if let Some(target) = reference {
                self.b().emit(Insn::GetLocal(err));
                self.compile_target_from_stack(&target);
            }
            self.push_ensure(EnsureItem::RestoreErrinfo(saved_errinfo));
            self.compile_statements(stmts, used);
            self.pop_ensure();
            self.b().place(cend);
            self.b().emit(Insn::GetLocal(saved_errinfo));
            self.b().emit(Insn::SetErrinfo);
            self.b().jump(after);
            self.b().place(chandler);
            self.b().depth = base;
            // An exception leaving the clause becomes `$!`; other unwinding
            // (break, return, throw) restores the saved one.
            let propagate = self.b().new_label();
            self.b().emit(Insn::GetLocal(unwinding));
            self.b().emit(Insn::PutNil);
            self.b().emit(Insn::CheckMatch(ops::MATCH_EXCEPTION));
            self.b().branch_if(propagate);
            self.b().emit(Insn::GetLocal(saved_errinfo));
            self.b().emit(Insn::SetErrinfo);
            self.b().emit(Insn::Reraise(unwinding));
            self.b().place(propagate);
            self.b().emit(Insn::GetLocal(unwinding));
            self.b().emit(Insn::SetErrinfo);
            self.b().emit(Insn::Reraise(unwinding));
            self.b().catch(CatchKind::Ensure, cstart, cend, chandler, base, unwinding);
        }
        self.scope().retries.pop();
        self.b().place(after);
        self.b().depth = base + used as i32;
        self.b().catch(CatchKind::Rescue, start, end, handler, base, err);
    }

    pub fn compile_rescue_modifier(&mut self, node: &Node<'pr>, used: bool) {
        let n = node.as_rescue_modifier_node().expect("rescue mod");
        let err = self.hidden_local();
        let base = self.b().depth;
        let (start, end, handler, after, matched) = (self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label(), self.b().new_label());
        self.b().place(start);
        self.compile(&n.expression(), true);
        self.b().place(end);
        self.b().jump(after);
        self.b().place(handler);
        self.b().depth = base;
        self.b().emit(Insn::GetLocal(err));
        let se = self.ctx.c().standard_error;
        self.put_literal(se);
        self.b().emit(Insn::CheckMatch(ops::MATCH_RESCUE));
        self.b().branch_if(matched);
        self.b().emit(Insn::Reraise(err));
        self.b().place(matched);
        self.compile(&n.rescue_expression(), true);
        self.b().place(after);
        self.b().depth = base + 1;
        self.b().catch(CatchKind::Rescue, start, end, handler, base, err);
        self.pop_if_unused(used);
    }
}
