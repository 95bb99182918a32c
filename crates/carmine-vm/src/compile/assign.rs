//! Compiling assignments: operator assignment to variables and constants, multiple
//! assignment, and assignment targets (also used by `for`, rescue `=> e`, parameters).

use ruby_prism::Node;

use super::call::ArgInfo;
use super::iseq::{call_flags as cf, Insn};
use super::Compiler;
use crate::symbol::{sym, SymId};

/// How a variable is read and written for `op=`.
enum VarKind {
    Local(SymId, u32),
    Ivar(SymId),
    Cvar(SymId),
    Gvar(SymId),
    Const(SymId),
}

impl<'c, 'pr> Compiler<'c, 'pr> {
    fn emit_var_get(&mut self, k: &VarKind) {
        match *k {
            VarKind::Local(id, d) => self.emit_get_local(id, d),
            VarKind::Ivar(id) => {
                let c = self.b().ivar_cache();
                self.b().emit(Insn::GetIvar(id, c));
            }
            VarKind::Cvar(id) => {
                self.b().emit(Insn::GetCvar(id));
            }
            VarKind::Gvar(id) => {
                self.b().emit(Insn::GetGlobal(id));
            }
            VarKind::Const(id) => {
                let c = self.b().const_cache();
                self.b().emit(Insn::GetConst(id, c));
            }
        }
    }

    /// Pops the top value into the variable.
    fn emit_var_set(&mut self, k: &VarKind) {
        match *k {
            VarKind::Local(id, d) => self.emit_set_local(id, d),
            VarKind::Ivar(id) => {
                let c = self.b().ivar_cache();
                self.b().emit(Insn::SetIvar(id, c));
            }
            VarKind::Cvar(id) => {
                self.b().emit(Insn::SetCvar(id));
            }
            VarKind::Gvar(id) => {
                self.b().emit(Insn::SetGlobal(id));
            }
            VarKind::Const(id) => {
                self.b().emit(Insn::PutNil);
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::SetConst(id));
            }
        }
    }

    /// `x op= v`, `x ||= v`, `x &&= v` for locals, ivars, cvars, globals and constants.
    pub fn compile_var_op_assign(&mut self, node: &Node<'pr>, used: bool) {
        macro_rules! parts {
            ($as:ident, $kind:expr, $op:expr) => {{
                let n = node.$as().expect("op assign");
                let name = self.intern(n.name().as_slice());
                (($kind)(name, &n), $op(&n, &mut *self), n.value())
            }};
        }
        let (kind, op, value): (VarKind, SymId, Node<'pr>) = match node {
            Node::LocalVariableOperatorWriteNode { .. } => parts!(as_local_variable_operator_write_node, |id, n: &ruby_prism::LocalVariableOperatorWriteNode<'pr>| VarKind::Local(id, n.depth()), |n: &ruby_prism::LocalVariableOperatorWriteNode<'pr>, c: &mut Self| c.intern(n.binary_operator().as_slice())),
            Node::LocalVariableOrWriteNode { .. } => parts!(as_local_variable_or_write_node, |id, n: &ruby_prism::LocalVariableOrWriteNode<'pr>| VarKind::Local(id, n.depth()), |_n, _c| sym::OR_OR),
            Node::LocalVariableAndWriteNode { .. } => parts!(as_local_variable_and_write_node, |id, n: &ruby_prism::LocalVariableAndWriteNode<'pr>| VarKind::Local(id, n.depth()), |_n, _c| sym::AND_AND),
            Node::InstanceVariableOperatorWriteNode { .. } => parts!(as_instance_variable_operator_write_node, |id, _n| VarKind::Ivar(id), |n: &ruby_prism::InstanceVariableOperatorWriteNode<'pr>, c: &mut Self| c.intern(n.binary_operator().as_slice())),
            Node::InstanceVariableOrWriteNode { .. } => parts!(as_instance_variable_or_write_node, |id, _n| VarKind::Ivar(id), |_n, _c| sym::OR_OR),
            Node::InstanceVariableAndWriteNode { .. } => parts!(as_instance_variable_and_write_node, |id, _n| VarKind::Ivar(id), |_n, _c| sym::AND_AND),
            Node::ClassVariableOperatorWriteNode { .. } => parts!(as_class_variable_operator_write_node, |id, _n| VarKind::Cvar(id), |n: &ruby_prism::ClassVariableOperatorWriteNode<'pr>, c: &mut Self| c.intern(n.binary_operator().as_slice())),
            Node::ClassVariableOrWriteNode { .. } => parts!(as_class_variable_or_write_node, |id, _n| VarKind::Cvar(id), |_n, _c| sym::OR_OR),
            Node::ClassVariableAndWriteNode { .. } => parts!(as_class_variable_and_write_node, |id, _n| VarKind::Cvar(id), |_n, _c| sym::AND_AND),
            Node::GlobalVariableOperatorWriteNode { .. } => parts!(as_global_variable_operator_write_node, |id, _n| VarKind::Gvar(id), |n: &ruby_prism::GlobalVariableOperatorWriteNode<'pr>, c: &mut Self| c.intern(n.binary_operator().as_slice())),
            Node::GlobalVariableOrWriteNode { .. } => parts!(as_global_variable_or_write_node, |id, _n| VarKind::Gvar(id), |_n, _c| sym::OR_OR),
            Node::GlobalVariableAndWriteNode { .. } => parts!(as_global_variable_and_write_node, |id, _n| VarKind::Gvar(id), |_n, _c| sym::AND_AND),
            Node::ConstantOperatorWriteNode { .. } => parts!(as_constant_operator_write_node, |id, _n| VarKind::Const(id), |n: &ruby_prism::ConstantOperatorWriteNode<'pr>, c: &mut Self| c.intern(n.binary_operator().as_slice())),
            Node::ConstantOrWriteNode { .. } => parts!(as_constant_or_write_node, |id, _n| VarKind::Const(id), |_n, _c| sym::OR_OR),
            Node::ConstantAndWriteNode { .. } => parts!(as_constant_and_write_node, |id, _n| VarKind::Const(id), |_n, _c| sym::AND_AND),
            _ => {
                self.compile_const_path_op_assign(node, used);
                return;
            }
        };
        let end = self.b().new_label();
        let base = self.b().depth;
        if op == sym::OR_OR || op == sym::AND_AND {
            // `@@x ||= v` and `X ||= v` must not fail when the variable is undefined.
            let guard = match kind {
                VarKind::Cvar(id) => Some(Insn::Defined(crate::interp::ops::DEF_CVAR, id.0)),
                VarKind::Const(id) if op == sym::OR_OR => Some(Insn::Defined(crate::interp::ops::DEF_CONST, id.0)),
                VarKind::Gvar(id) if op == sym::OR_OR => Some(Insn::Defined(crate::interp::ops::DEF_GVAR, id.0)),
                _ => None,
            };
            let assign = self.b().new_label();
            if let Some(g) = guard {
                self.b().emit(g);
                self.b().branch_nil(assign);
            }
            self.emit_var_get(&kind);
            if used {
                self.b().emit(Insn::Dup);
            }
            if op == sym::OR_OR {
                self.b().branch_if(end);
            } else {
                self.b().branch_unless(end);
            }
            if used {
                self.b().emit(Insn::Pop);
            }
            self.b().place(assign);
            self.b().depth = base;
            self.compile(&value, true);
            if used {
                self.b().emit(Insn::Dup);
            }
            self.emit_var_set(&kind);
        } else {
            self.emit_var_get(&kind);
            self.compile(&value, true);
            self.emit_send(op, &ArgInfo::positional(1, 0));
            if used {
                self.b().emit(Insn::Dup);
            }
            self.emit_var_set(&kind);
        }
        self.b().place(end);
        self.b().depth = base + used as i32;
    }

    fn compile_const_path_op_assign(&mut self, node: &Node<'pr>, used: bool) {
        let (target, op, value) = match node {
            Node::ConstantPathOperatorWriteNode { .. } => {
                let n = node.as_constant_path_operator_write_node().expect("cpath op");
                let op = self.intern(n.binary_operator().as_slice());
                (n.target(), op, n.value())
            }
            Node::ConstantPathOrWriteNode { .. } => {
                let n = node.as_constant_path_or_write_node().expect("cpath or");
                (n.target(), sym::OR_OR, n.value())
            }
            _ => {
                let n = node.as_constant_path_and_write_node().expect("cpath and");
                (n.target(), sym::AND_AND, n.value())
            }
        };
        let name = self.intern(target.name().map(|c| c.as_slice()).unwrap_or(b""));
        match target.parent() {
            Some(p) => self.compile(&p, true),
            None => {
                let obj = self.ctx.c().object;
                self.put_literal(obj);
            }
        }
        let base = self.b().depth;
        let end = self.b().new_label();
        // Stack: scope
        if op == sym::OR_OR || op == sym::AND_AND {
            let assign = self.b().new_label();
            if op == sym::OR_OR {
                self.b().emit(Insn::Dup);
                self.b().emit(Insn::Defined(crate::interp::ops::DEF_CONST_FROM, name.0));
                self.b().branch_nil(assign);
            }
            self.b().emit(Insn::Dup);
            self.b().emit(Insn::GetConstUnder(name));
            self.b().emit(Insn::Dup);
            if op == sym::OR_OR {
                self.b().branch_if(end);
            } else {
                self.b().branch_unless(end);
            }
            self.b().emit(Insn::Pop);
            self.b().place(assign);
            self.b().depth = base;
            self.compile(&value, true);
            if used {
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::TopN(1));
            }
            self.b().emit(Insn::SetConst(name));
            let done = self.b().new_label();
            self.b().jump(done);
            self.b().place(end);
            // Stack: scope, current
            self.b().depth = base + 1;
            self.b().emit(Insn::Swap);
            self.b().emit(Insn::Pop);
            if !used {
                self.b().emit(Insn::Pop);
            }
            self.b().place(done);
            self.b().depth = base - 1 + used as i32;
        } else {
            self.b().emit(Insn::Dup);
            self.b().emit(Insn::GetConstUnder(name));
            self.compile(&value, true);
            self.emit_send(op, &ArgInfo::positional(1, 0));
            if used {
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::TopN(1));
            }
            self.b().emit(Insn::SetConst(name));
        }
    }

    // ---- multiple assignment ----

    /// `a.x, b[i], C::D, e = rhs`. As in CRuby, the receivers and arguments of
    /// the targets are evaluated left to right before the right-hand side;
    /// they stay on the stack (below the value) until every target is assigned.
    pub fn compile_multi_write(&mut self, n: &ruby_prism::MultiWriteNode<'pr>, used: bool) {
        let lefts: Vec<Node<'pr>> = n.lefts().iter().collect();
        let rights: Vec<Node<'pr>> = n.rights().iter().collect();
        let rest = n.rest();
        let mut all: Vec<Node<'pr>> = lefts.iter().map(|t| super::prism_copy(t)).collect();
        if let Some(r) = &rest {
            all.push(super::prism_copy(r));
        }
        all.extend(rights.iter().map(|t| super::prism_copy(t)));
        // `a, b = b, a` as a statement: the two values are pushed and swapped, with no Array.
        let pair = (!used && rest.is_none() && rights.is_empty() && lefts.len() == 2)
            .then(|| n.value().as_array_node())
            .flatten()
            .filter(|a| a.elements().iter().count() == 2 && !a.elements().iter().any(|e| matches!(e, Node::SplatNode { .. })));
        if !all.iter().any(target_needs_prefix) {
            match &pair {
                Some(a) => self.push_swapped_pair(a),
                None => {
                    self.compile(&n.value(), true);
                    if used {
                        self.b().emit(Insn::Dup);
                    }
                    self.b().emit(expand_insn(lefts.len(), rest.as_ref(), rights.len()));
                }
            }
            self.assign_expanded(&lefts, rest, &rights);
            return;
        }
        if used {
            // The expression's value, filled in once the right side is known.
            self.b().emit(Insn::PutNil);
        }
        let outer = std::mem::take(&mut self.masgn_prefixes);
        let start = self.b().depth;
        for t in &all {
            self.push_target_prefix(t);
        }
        let count = self.b().depth - start;
        let mine = std::mem::replace(&mut self.masgn_prefixes, outer);
        match &pair {
            Some(a) => self.push_swapped_pair(a),
            None => {
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::SetN(count as u32 + 1));
                }
                self.b().emit(expand_insn(lefts.len(), rest.as_ref(), rights.len()));
            }
        }
        let outer = std::mem::replace(&mut self.masgn_prefixes, mine);
        self.assign_expanded(&lefts, rest, &rights);
        self.masgn_prefixes = outer;
        if count > 0 {
            self.b().emit(Insn::AdjustStack(count as u32));
        }
    }

    /// Evaluates what target `t` needs before the right-hand side (see
    /// `compile_multi_write`) and records where it is on the stack.
    fn push_target_prefix(&mut self, t: &Node<'pr>) {
        match t {
            Node::CallTargetNode { .. } => {
                let n = t.as_call_target_node().expect("call target");
                let base = self.b().depth;
                match n.receiver() {
                    Node::SelfNode { .. } => {
                        self.b().emit(Insn::PutSelf);
                    }
                    r => self.compile(&r, true),
                }
                self.masgn_prefixes.push_back((base, 0, 0));
            }
            Node::IndexTargetNode { .. } => {
                let n = t.as_index_target_node().expect("index target");
                let base = self.b().depth;
                self.compile(&n.receiver(), true);
                let info = self.compile_args(n.arguments(), None);
                if info.flags & !cf::SPLAT != 0 {
                    self.fail("unsupported index target");
                    return;
                }
                self.masgn_prefixes.push_back((base, info.argc, info.flags));
            }
            Node::ConstantPathTargetNode { .. } => {
                let n = t.as_constant_path_target_node().expect("cpath target");
                let base = self.b().depth;
                match n.parent() {
                    Some(p) => self.compile(&p, true),
                    None => {
                        let obj = self.ctx.c().object;
                        self.put_literal(obj);
                    }
                }
                self.masgn_prefixes.push_back((base, 0, 0));
            }
            Node::MultiTargetNode { .. } => {
                let n = t.as_multi_target_node().expect("mlhs");
                for l in n.lefts().iter() {
                    self.push_target_prefix(&l);
                }
                if let Some(r) = n.rest() {
                    self.push_target_prefix(&r);
                }
                for r in n.rights().iter() {
                    self.push_target_prefix(&r);
                }
            }
            Node::SplatNode { .. } => {
                if let Some(e) = t.as_splat_node().and_then(|s| s.expression()) {
                    self.push_target_prefix(&e);
                }
            }
            _ => {}
        }
    }

    /// Distance from the top of the stack to the absolute position `base`.
    fn stack_offset(&mut self, base: i32) -> u32 {
        (self.b().depth - 1 - base) as u32
    }

    /// With a value on top: spreads it and assigns the targets (pops the value).
    pub fn compile_multi_target_from_stack(&mut self, node: &Node<'pr>) {
        let n = node.as_multi_target_node().expect("mlhs");
        let lefts: Vec<Node<'pr>> = n.lefts().iter().collect();
        let rights: Vec<Node<'pr>> = n.rights().iter().collect();
        self.expand_and_assign(&lefts, n.rest(), &rights);
    }

    fn expand_and_assign(&mut self, lefts: &[Node<'pr>], rest: Option<Node<'pr>>, rights: &[Node<'pr>]) {
        self.b().emit(expand_insn(lefts.len(), rest.as_ref(), rights.len()));
        self.assign_expanded(lefts, rest, rights);
    }

    /// Pushes the two elements of `a`, the first on top: what `ExpandArray(2)` leaves.
    fn push_swapped_pair(&mut self, a: &ruby_prism::ArrayNode<'pr>) {
        for e in a.elements().iter() {
            self.compile(&e, true);
        }
        self.b().emit(Insn::Swap);
    }

    /// With the values `ExpandArray` leaves on the stack (the first target's on top),
    /// assigns the targets.
    fn assign_expanded(&mut self, lefts: &[Node<'pr>], rest: Option<Node<'pr>>, rights: &[Node<'pr>]) {
        let splat = matches!(rest, Some(Node::SplatNode { .. }));
        for t in lefts {
            self.compile_target_from_stack(t);
        }
        if splat {
            let s = rest.as_ref().and_then(|r| r.as_splat_node()).expect("splat");
            match s.expression() {
                Some(t) => self.compile_target_from_stack(&t),
                None => {
                    self.b().emit(Insn::Pop);
                }
            }
        }
        for t in rights {
            self.compile_target_from_stack(t);
        }
    }

    /// Pops the top value into an assignment target.
    pub fn compile_target_from_stack(&mut self, t: &Node<'pr>) {
        match t {
            Node::LocalVariableTargetNode { .. } => {
                let n = t.as_local_variable_target_node().expect("lvar target");
                let id = self.intern(n.name().as_slice());
                self.emit_set_local(id, n.depth());
            }
            Node::RequiredParameterNode { .. } => {
                let n = t.as_required_parameter_node().expect("param target");
                let id = self.intern(n.name().as_slice());
                self.emit_set_local(id, 0);
            }
            Node::InstanceVariableTargetNode { .. } => {
                let n = t.as_instance_variable_target_node().expect("ivar target");
                let id = self.intern(n.name().as_slice());
                let c = self.b().ivar_cache();
                self.b().emit(Insn::SetIvar(id, c));
            }
            Node::ClassVariableTargetNode { .. } => {
                let n = t.as_class_variable_target_node().expect("cvar target");
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::SetCvar(id));
            }
            Node::GlobalVariableTargetNode { .. } => {
                let n = t.as_global_variable_target_node().expect("gvar target");
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::SetGlobal(id));
            }
            Node::ConstantTargetNode { .. } => {
                let n = t.as_constant_target_node().expect("const target");
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::PutNil);
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::SetConst(id));
            }
            Node::ConstantPathTargetNode { .. } if !self.masgn_prefixes.is_empty() => {
                let n = t.as_constant_path_target_node().expect("cpath target");
                let id = self.intern(n.name().map(|c| c.as_slice()).unwrap_or(b""));
                let (base, _, _) = self.masgn_prefixes.pop_front().expect("prefix");
                let off = self.stack_offset(base);
                self.b().emit(Insn::TopN(off));
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::SetConst(id));
            }
            Node::ConstantPathTargetNode { .. } => {
                let n = t.as_constant_path_target_node().expect("cpath target");
                let id = self.intern(n.name().map(|c| c.as_slice()).unwrap_or(b""));
                match n.parent() {
                    Some(p) => self.compile(&p, true),
                    None => {
                        let obj = self.ctx.c().object;
                        self.put_literal(obj);
                    }
                }
                self.b().emit(Insn::Swap);
                self.b().emit(Insn::SetConst(id));
            }
            Node::CallTargetNode { .. } if !self.masgn_prefixes.is_empty() => {
                let n = t.as_call_target_node().expect("call target");
                let mid = self.intern(n.name().as_slice());
                let (base, _, _) = self.masgn_prefixes.pop_front().expect("prefix");
                let flags = if matches!(n.receiver(), Node::SelfNode { .. }) { cf::SELF_RECV } else { 0 };
                let off = self.stack_offset(base);
                self.b().emit(Insn::TopN(off));
                self.b().emit(Insn::Swap);
                let ci = self.b().call_info(mid, 1, flags | cf::ATTRASGN | if n.is_safe_navigation() { cf::SAFE_NAV } else { 0 }, None);
                self.b().emit(Insn::Send(ci));
                self.b().emit(Insn::Pop);
            }
            Node::CallTargetNode { .. } => {
                let n = t.as_call_target_node().expect("call target");
                let mid = self.intern(n.name().as_slice());
                let flags = match n.receiver() {
                    Node::SelfNode { .. } => {
                        self.b().emit(Insn::PutSelf);
                        cf::SELF_RECV
                    }
                    r => {
                        self.compile(&r, true);
                        0
                    }
                };
                self.b().emit(Insn::Swap);
                let ci = self.b().call_info(mid, 1, flags | cf::ATTRASGN | if n.is_safe_navigation() { cf::SAFE_NAV } else { 0 }, None);
                self.b().emit(Insn::Send(ci));
                self.b().emit(Insn::Pop);
            }
            Node::IndexTargetNode { .. } if !self.masgn_prefixes.is_empty() => {
                let (base, argc, flags) = self.masgn_prefixes.pop_front().expect("prefix");
                // Copy receiver and arguments above the value, then the value.
                let off = self.stack_offset(base);
                for _ in 0..argc + 1 {
                    self.b().emit(Insn::TopN(off));
                }
                self.b().emit(Insn::TopN(argc + 1));
                if flags & cf::SPLAT != 0 {
                    self.b().emit(Insn::NewArray(1));
                    self.b().emit(Insn::ConcatArray);
                    let ci = self.b().call_info(sym::ASET, 1, cf::SPLAT | cf::ATTRASGN, None);
                    self.b().emit(Insn::Send(ci));
                } else {
                    let ci = self.b().call_info(sym::ASET, argc + 1, cf::ATTRASGN, None);
                    self.b().emit(if argc == 1 { Insn::OptAset(ci) } else { Insn::Send(ci) });
                }
                self.b().emit(Insn::Pop);
                self.b().emit(Insn::Pop);
            }
            Node::IndexTargetNode { .. } => {
                let n = t.as_index_target_node().expect("index target");
                self.compile(&n.receiver(), true);
                let info = self.compile_args(n.arguments(), None);
                if info.flags != 0 {
                    self.fail("unsupported index target");
                    return;
                }
                self.b().emit(Insn::TopN(info.argc + 1));
                let ci = self.b().call_info(sym::ASET, info.argc + 1, cf::ATTRASGN, None);
                self.b().emit(if info.argc == 1 { Insn::OptAset(ci) } else { Insn::Send(ci) });
                self.b().emit(Insn::Pop);
                self.b().emit(Insn::Pop);
            }
            Node::MultiTargetNode { .. } => self.compile_multi_target_from_stack(t),
            Node::SplatNode { .. } => {
                let s = t.as_splat_node().expect("splat target");
                match s.expression() {
                    Some(e) => {
                        self.b().emit(Insn::SplatArray(1));
                        self.compile_target_from_stack(&e);
                    }
                    None => {
                        self.b().emit(Insn::Pop);
                    }
                }
            }
            Node::ImplicitRestNode { .. } => {
                self.b().emit(Insn::Pop);
            }
            _ => {
                self.b().emit(Insn::Pop);
                self.fail("unsupported assignment target");
            }
        }
    }
}

/// Whether a multiple-assignment target evaluates something (a receiver,
/// index arguments or a constant scope) before the right-hand side.
fn target_needs_prefix(t: &Node<'_>) -> bool {
    match t {
        Node::CallTargetNode { .. } | Node::IndexTargetNode { .. } | Node::ConstantPathTargetNode { .. } => true,
        Node::MultiTargetNode { .. } => {
            let n = t.as_multi_target_node().expect("mlhs");
            n.lefts().iter().any(|l| target_needs_prefix(&l))
                || n.rest().is_some_and(|r| target_needs_prefix(&r))
                || n.rights().iter().any(|r| target_needs_prefix(&r))
        }
        Node::SplatNode { .. } => t.as_splat_node().and_then(|s| s.expression()).is_some_and(|e| target_needs_prefix(&e)),
        _ => false,
    }
}

/// The `ExpandArray` that spreads a value over `lefts` targets, a `rest` and `rights` ones.
fn expand_insn(lefts: usize, rest: Option<&Node<'_>>, rights: usize) -> Insn {
    let splat = matches!(rest, Some(Node::SplatNode { .. }));
    Insn::ExpandArray(lefts as u32, (splat as u32) | ((rights as u32) << 8))
}
