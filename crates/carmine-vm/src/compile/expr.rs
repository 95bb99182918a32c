//! Compiling expressions: literals, variables, strings, arrays, hashes, definitions.
//!
//! Convention: `compile(node, used)` leaves exactly one value on the stack when `used`,
//! and nothing otherwise.

use ruby_prism::Node;

use super::iseq::{Insn, IseqKind};
use super::Compiler;
use crate::core::{bignum, float, string};
use crate::interp::ops;
use crate::symbol::sym;
use crate::value::Value;

impl<'c, 'pr> Compiler<'c, 'pr> {
    /// Keeps a compile-time value alive until the compiled iseq owns it.
    pub fn keep(&mut self, v: Value) -> Value {
        if v.is_heap() {
            self.ctx.stacks.protected.push(v);
        }
        v
    }

    pub fn put_literal(&mut self, v: Value) {
        let v = self.keep(v);
        if let Some(i) = v.as_fixnum() {
            if let Ok(i) = i32::try_from(i) {
                self.b().emit(Insn::PutInt(i));
                return;
            }
        }
        match v {
            Value::NIL => {
                self.b().emit(Insn::PutNil);
            }
            Value::TRUE => {
                self.b().emit(Insn::PutTrue);
            }
            Value::FALSE => {
                self.b().emit(Insn::PutFalse);
            }
            _ => {
                let i = self.b().literal(v);
                self.b().emit(Insn::PutLit(i));
            }
        }
    }

    pub fn pop_if_unused(&mut self, used: bool) {
        if !used {
            self.b().emit(Insn::Pop);
        }
    }

    pub fn compile_statements(&mut self, stmts: Option<ruby_prism::StatementsNode<'pr>>, used: bool) {
        let Some(stmts) = stmts else {
            if used {
                self.b().emit(Insn::PutNil);
            }
            return;
        };
        let body: Vec<Node<'pr>> = stmts.body().iter().filter(|n| !matches!(n, Node::PreExecutionNode { .. })).collect();
        if body.is_empty() {
            if used {
                self.b().emit(Insn::PutNil);
            }
            return;
        }
        let last = body.len() - 1;
        for (i, n) in body.iter().enumerate() {
            self.compile(n, used && i == last);
        }
    }

    pub fn compile_opt(&mut self, node: Option<Node<'pr>>, used: bool) {
        match node {
            Some(n) => self.compile(&n, used),
            None => {
                if used {
                    self.b().emit(Insn::PutNil);
                }
            }
        }
    }

    pub fn compile(&mut self, node: &Node<'pr>, used: bool) {
        if self.error.is_some() {
            return;
        }
        if self.ctx.native_stack_exhausted() {
            self.fail("expression nests too deeply");
            return;
        }
        self.set_line(node);
        match node {
            Node::NilNode { .. } => {
                if used {
                    self.b().emit(Insn::PutNil);
                }
            }
            Node::TrueNode { .. } => {
                if used {
                    self.b().emit(Insn::PutTrue);
                }
            }
            Node::FalseNode { .. } => {
                if used {
                    self.b().emit(Insn::PutFalse);
                }
            }
            Node::SelfNode { .. } => {
                if used {
                    self.b().emit(Insn::PutSelf);
                }
            }
            Node::IntegerNode { .. } => {
                if used {
                    let n = node.as_integer_node().expect("integer");
                    let v = self.integer_value(&n.value());
                    self.put_literal(v);
                }
            }
            Node::FloatNode { .. } => {
                if used {
                    let f = node.as_float_node().expect("float").value();
                    let v = float::new(self.ctx, f);
                    self.put_literal(v);
                }
            }
            Node::RationalNode { .. } => {
                if used {
                    let n = node.as_rational_node().expect("rational");
                    let num = self.integer_value(&n.numerator());
                    let den = self.integer_value(&n.denominator());
                    match crate::core::rational::new_literal(self.ctx, num, den) {
                        Ok(v) => self.put_literal(v),
                        Err(e) => self.error = Some(e),
                    }
                }
            }
            Node::ImaginaryNode { .. } => {
                if used {
                    let n = node.as_imaginary_node().expect("imaginary");
                    self.compile(&n.numeric(), true);
                    let mid = self.ctx.intern("__imaginary_literal__");
                    let ci = self.b().call_info(mid, 0, 0, None);
                    self.b().emit(Insn::Send(ci));
                }
            }
            Node::StringNode { .. } => {
                if used {
                    let n = node.as_string_node().expect("string");
                    let enc = self.literal_encoding(n.is_forced_binary_encoding(), n.is_forced_utf8_encoding());
                    self.compile_string_literal_chilled(n.unescaped(), n.is_frozen(), !n.is_frozen() && !n.is_mutable(), enc);
                }
            }
            Node::XStringNode { .. } => {
                let n = node.as_x_string_node().expect("xstring");
                self.b().emit(Insn::PutSelf);
                // The command string is passed frozen (a redefined ` sees it).
                let enc = self.literal_encoding(false, false);
                self.compile_string_literal(n.unescaped(), true, enc);
                let bq = self.ctx.intern("`");
                let ci = self.b().call_info(bq, 1, super::iseq::call_flags::FCALL, None);
                self.b().emit(Insn::Send(ci));
                self.pop_if_unused(used);
            }
            Node::InterpolatedXStringNode { .. } => {
                let n = node.as_interpolated_x_string_node().expect("ixstring");
                self.b().emit(Insn::PutSelf);
                self.compile_parts(&n.parts());
                let bq = self.ctx.intern("`");
                let ci = self.b().call_info(bq, 1, super::iseq::call_flags::FCALL, None);
                self.b().emit(Insn::Send(ci));
                self.pop_if_unused(used);
            }
            Node::InterpolatedStringNode { .. } => {
                let n = node.as_interpolated_string_node().expect("istring");
                self.compile_parts(&n.parts());
                if n.is_frozen() {
                    let ci = self.b().call_info(sym::FREEZE, 0, 0, None);
                    self.b().emit(Insn::Send(ci));
                }
                self.pop_if_unused(used);
            }
            Node::SymbolNode { .. } => {
                if used {
                    let n = node.as_symbol_node().expect("symbol");
                    let id = self.intern(n.unescaped());
                    self.put_literal(Value::symbol(id));
                }
            }
            Node::InterpolatedSymbolNode { .. } => {
                let n = node.as_interpolated_symbol_node().expect("isymbol");
                self.compile_parts(&n.parts());
                self.b().emit(Insn::Intern);
                self.pop_if_unused(used);
            }
            Node::RegularExpressionNode { .. } => {
                if used {
                    let n = node.as_regular_expression_node().expect("regexp");
                    let opts = regexp_options(n.is_ignore_case(), n.is_extended(), n.is_multi_line(), n.is_ascii_8bit(), n.is_euc_jp(), n.is_windows_31j(), n.is_utf_8());
                    let at = (self.path.clone(), node.location().start_line() as u32);
                    match crate::core::regexp::new_literal(self.ctx, n.unescaped(), opts, self.source_encoding, at) {
                        Ok(v) => self.put_literal(v),
                        Err(e) => self.error = Some(e),
                    }
                }
            }
            Node::InterpolatedRegularExpressionNode { .. } => {
                let n = node.as_interpolated_regular_expression_node().expect("iregexp");
                let opts = regexp_options(n.is_ignore_case(), n.is_extended(), n.is_multi_line(), n.is_ascii_8bit(), n.is_euc_jp(), n.is_windows_31j(), n.is_utf_8());
                self.compile_dregexp(&n.parts(), opts, n.is_once());
                self.pop_if_unused(used);
            }
            Node::MatchLastLineNode { .. } => {
                let n = node.as_match_last_line_node().expect("match last line");
                let opts = regexp_options(n.is_ignore_case(), n.is_extended(), n.is_multi_line(), n.is_ascii_8bit(), n.is_euc_jp(), n.is_windows_31j(), n.is_utf_8());
                let at = (self.path.clone(), node.location().start_line() as u32);
                match crate::core::regexp::new_literal(self.ctx, n.unescaped(), opts, self.source_encoding, at) {
                    Ok(v) => self.put_literal(v),
                    Err(e) => self.error = Some(e),
                }
                self.b().emit(Insn::GetLastLine);
                let ci = self.b().call_info(sym::MATCH, 1, 0, None);
                self.b().emit(Insn::Send(ci));
                self.pop_if_unused(used);
            }
            Node::InterpolatedMatchLastLineNode { .. } => {
                let n = node.as_interpolated_match_last_line_node().expect("imatch");
                let opts = regexp_options(n.is_ignore_case(), n.is_extended(), n.is_multi_line(), n.is_ascii_8bit(), n.is_euc_jp(), n.is_windows_31j(), n.is_utf_8());
                self.compile_dregexp(&n.parts(), opts, n.is_once());
                self.b().emit(Insn::GetLastLine);
                let ci = self.b().call_info(sym::MATCH, 1, 0, None);
                self.b().emit(Insn::Send(ci));
                self.pop_if_unused(used);
            }
            Node::ArrayNode { .. } => {
                let n = node.as_array_node().expect("array");
                let elems: Vec<Node<'pr>> = n.elements().iter().collect();
                if !used && !elems.iter().any(|e| matches!(e, Node::SplatNode { .. })) {
                    for e in &elems {
                        self.compile(e, false);
                    }
                    return;
                }
                self.compile_array_elements(&elems);
                self.pop_if_unused(used);
            }
            Node::HashNode { .. } => {
                let n = node.as_hash_node().expect("hash");
                let elems: Vec<Node<'pr>> = n.elements().iter().collect();
                self.compile_hash_elements(&elems);
                self.pop_if_unused(used);
            }
            Node::KeywordHashNode { .. } => {
                let n = node.as_keyword_hash_node().expect("kwhash");
                let elems: Vec<Node<'pr>> = n.elements().iter().collect();
                self.compile_hash_elements(&elems);
                self.pop_if_unused(used);
            }
            Node::RangeNode { .. } => {
                let n = node.as_range_node().expect("range");
                let excl = n.is_exclude_end();
                let lit = |x: &Option<Node<'pr>>| x.as_ref().map_or(true, |x| matches!(x, Node::IntegerNode { .. } | Node::NilNode { .. }));
                if lit(&n.left()) && lit(&n.right()) && used {
                    let l = n.left().map(|x| match x {
                        Node::IntegerNode { .. } => self.integer_value(&x.as_integer_node().expect("int").value()),
                        _ => Value::NIL,
                    }).unwrap_or(Value::NIL);
                    let r = n.right().map(|x| match x {
                        Node::IntegerNode { .. } => self.integer_value(&x.as_integer_node().expect("int").value()),
                        _ => Value::NIL,
                    }).unwrap_or(Value::NIL);
                    if l.is_fixnum() || r.is_fixnum() {
                        match crate::core::range::new_checked(self.ctx, l, r, excl) {
                            Ok(v) => {
                                crate::core::object::freeze(v);
                                self.put_literal(v);
                                return;
                            }
                            Err(e) => {
                                self.error = Some(e);
                                return;
                            }
                        }
                    }
                }
                self.compile_opt(n.left(), true);
                self.compile_opt(n.right(), true);
                self.b().emit(Insn::NewRange(excl as u32));
                self.pop_if_unused(used);
            }
            Node::ParenthesesNode { .. } => {
                let n = node.as_parentheses_node().expect("parens");
                self.compile_opt(n.body(), used);
            }
            Node::StatementsNode { .. } => {
                let n = node.as_statements_node().expect("statements");
                self.compile_statements(Some(n), used);
            }
            Node::BeginNode { .. } => {
                let n = node.as_begin_node().expect("begin");
                self.compile_begin(&n, used);
            }

            // ---- variables ----
            Node::LocalVariableReadNode { .. } => {
                if used {
                    let n = node.as_local_variable_read_node().expect("lvar");
                    let id = self.intern(n.name().as_slice());
                    self.emit_get_local(id, n.depth());
                }
            }
            Node::ItLocalVariableReadNode { .. } => {
                if used {
                    self.b().emit(Insn::GetLocal(0));
                }
            }
            Node::LocalVariableWriteNode { .. } => {
                let n = node.as_local_variable_write_node().expect("lvasgn");
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                let id = self.intern(n.name().as_slice());
                self.emit_set_local(id, n.depth());
            }
            Node::InstanceVariableReadNode { .. } => {
                if used {
                    let n = node.as_instance_variable_read_node().expect("ivar");
                    let id = self.intern(n.name().as_slice());
                    let c = self.b().ivar_cache();
                    self.b().emit(Insn::GetIvar(id, c));
                }
            }
            Node::InstanceVariableWriteNode { .. } => {
                let n = node.as_instance_variable_write_node().expect("ivasgn");
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                let id = self.intern(n.name().as_slice());
                let c = self.b().ivar_cache();
                self.b().emit(Insn::SetIvar(id, c));
            }
            Node::ClassVariableReadNode { .. } => {
                let n = node.as_class_variable_read_node().expect("cvar");
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::GetCvar(id));
                self.pop_if_unused(used);
            }
            Node::ClassVariableWriteNode { .. } => {
                let n = node.as_class_variable_write_node().expect("cvasgn");
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::SetCvar(id));
            }
            Node::GlobalVariableReadNode { .. } => {
                let n = node.as_global_variable_read_node().expect("gvar");
                if matches!(n.name().as_slice(), b"$~" | b"$_") {
                    self.share_special_vars();
                }
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::GetGlobal(id));
                self.pop_if_unused(used);
            }
            Node::GlobalVariableWriteNode { .. } => {
                let n = node.as_global_variable_write_node().expect("gvasgn");
                if matches!(n.name().as_slice(), b"$~" | b"$_") {
                    self.share_special_vars();
                }
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::SetGlobal(id));
            }
            Node::BackReferenceReadNode { .. } => {
                let n = node.as_back_reference_read_node().expect("backref");
                let kind = match n.name().as_slice() {
                    b"$&" => 1,
                    b"$`" => 2,
                    b"$'" => 3,
                    _ => 4,
                };
                self.share_special_vars();
                self.b().emit(Insn::GetSpecial(kind));
                self.pop_if_unused(used);
            }
            Node::NumberedReferenceReadNode { .. } => {
                let n = node.as_numbered_reference_read_node().expect("nthref");
                self.share_special_vars();
                self.b().emit(Insn::GetSpecial(16 + n.number().min(1 << 20)));
                self.pop_if_unused(used);
            }
            Node::ConstantReadNode { .. } => {
                let n = node.as_constant_read_node().expect("const");
                let id = self.intern(n.name().as_slice());
                let c = self.b().const_cache();
                self.b().emit(Insn::GetConst(id, c));
                self.pop_if_unused(used);
            }
            Node::ConstantPathNode { .. } => {
                let n = node.as_constant_path_node().expect("colon2");
                let name = n.name().map(|c| c.as_slice()).unwrap_or(b"");
                let id = self.intern(name);
                match n.parent() {
                    Some(p) => {
                        self.compile(&p, true);
                        self.b().emit(Insn::GetConstUnder(id));
                    }
                    None => {
                        self.b().emit(Insn::GetConstTop(id));
                    }
                }
                self.pop_if_unused(used);
            }
            Node::ConstantWriteNode { .. } => {
                let n = node.as_constant_write_node().expect("cdecl");
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                self.b().emit(Insn::PutNil);
                self.b().emit(Insn::Swap);
                let id = self.intern(n.name().as_slice());
                self.b().emit(Insn::SetConst(id));
            }
            Node::ConstantPathWriteNode { .. } => {
                let n = node.as_constant_path_write_node().expect("cdecl path");
                let t = n.target();
                match t.parent() {
                    Some(p) => self.compile(&p, true),
                    None => {
                        let obj = self.ctx.c().object;
                        self.put_literal(obj);
                    }
                }
                self.compile(&n.value(), true);
                if used {
                    self.b().emit(Insn::Swap);
                    self.b().emit(Insn::TopN(1));
                }
                let id = self.intern(t.name().map(|c| c.as_slice()).unwrap_or(b""));
                self.b().emit(Insn::SetConst(id));
            }
            Node::LocalVariableOperatorWriteNode { .. }
            | Node::LocalVariableOrWriteNode { .. }
            | Node::LocalVariableAndWriteNode { .. }
            | Node::InstanceVariableOperatorWriteNode { .. }
            | Node::InstanceVariableOrWriteNode { .. }
            | Node::InstanceVariableAndWriteNode { .. }
            | Node::ClassVariableOperatorWriteNode { .. }
            | Node::ClassVariableOrWriteNode { .. }
            | Node::ClassVariableAndWriteNode { .. }
            | Node::GlobalVariableOperatorWriteNode { .. }
            | Node::GlobalVariableOrWriteNode { .. }
            | Node::GlobalVariableAndWriteNode { .. }
            | Node::ConstantOperatorWriteNode { .. }
            | Node::ConstantOrWriteNode { .. }
            | Node::ConstantAndWriteNode { .. }
            | Node::ConstantPathOperatorWriteNode { .. }
            | Node::ConstantPathOrWriteNode { .. }
            | Node::ConstantPathAndWriteNode { .. } => self.compile_var_op_assign(node, used),
            Node::MultiWriteNode { .. } => {
                let n = node.as_multi_write_node().expect("masgn");
                self.compile_multi_write(&n, used);
            }

            // ---- control flow ----
            Node::AndNode { .. } => {
                let n = node.as_and_node().expect("and");
                let end = self.b().new_label();
                self.compile(&n.left(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                self.b().branch_unless(end);
                if used {
                    self.b().emit(Insn::Pop);
                }
                self.compile(&n.right(), used);
                self.b().place(end);
            }
            Node::OrNode { .. } => {
                let n = node.as_or_node().expect("or");
                let end = self.b().new_label();
                self.compile(&n.left(), true);
                if used {
                    self.b().emit(Insn::Dup);
                }
                self.b().branch_if(end);
                if used {
                    self.b().emit(Insn::Pop);
                }
                self.compile(&n.right(), used);
                self.b().place(end);
            }
            Node::IfNode { .. } => self.compile_if(node, used),
            Node::UnlessNode { .. } => self.compile_unless(node, used),
            Node::ElseNode { .. } => {
                let n = node.as_else_node().expect("else");
                self.compile_statements(n.statements(), used);
            }
            Node::WhileNode { .. } | Node::UntilNode { .. } => self.compile_while(node, used),
            Node::ForNode { .. } => self.compile_for(node, used),
            Node::CaseNode { .. } => self.compile_case(node, used),
            Node::CaseMatchNode { .. } => self.compile_case_match(node, used),
            Node::MatchPredicateNode { .. } => {
                let n = node.as_match_predicate_node().expect("match?");
                self.compile_match_predicate(&n.value(), &n.pattern(), used);
            }
            Node::MatchRequiredNode { .. } => {
                let n = node.as_match_required_node().expect("match!");
                self.compile_match_required(&n.value(), &n.pattern(), used);
            }
            // Jumps never fall through; the code after them is dead, and its nominal stack
            // depth is that of an expression that pushed a value only if one is used (an
            // unused `break` counted as a value left the depth one too high after it, and
            // a later `break`'s SetN wrote below the operand stack, into a local).
            Node::BreakNode { .. } | Node::NextNode { .. } | Node::RedoNode { .. } | Node::RetryNode { .. } | Node::ReturnNode { .. } => {
                let d0 = self.b().depth;
                match node {
                    Node::BreakNode { .. } => self.compile_break(node),
                    Node::NextNode { .. } => self.compile_next(node),
                    Node::RedoNode { .. } => self.compile_redo(),
                    Node::RetryNode { .. } => self.compile_retry(),
                    _ => self.compile_return(node),
                }
                self.b().depth = d0 + used as i32;
            }
            Node::RescueModifierNode { .. } => self.compile_rescue_modifier(node, used),

            // ---- calls ----
            Node::CallNode { .. } => {
                let n = node.as_call_node().expect("call");
                self.compile_call(&n, used);
            }
            Node::CallOperatorWriteNode { .. } | Node::CallOrWriteNode { .. } | Node::CallAndWriteNode { .. } => self.compile_call_op_assign(node, used),
            Node::IndexOperatorWriteNode { .. } | Node::IndexOrWriteNode { .. } | Node::IndexAndWriteNode { .. } => self.compile_index_op_assign(node, used),
            Node::YieldNode { .. } => {
                let n = node.as_yield_node().expect("yield");
                self.compile_yield(&n, used);
            }
            Node::SuperNode { .. } => {
                let n = node.as_super_node().expect("super");
                self.compile_super(&n, used);
            }
            Node::ForwardingSuperNode { .. } => {
                let n = node.as_forwarding_super_node().expect("zsuper");
                self.compile_zsuper(&n, used);
            }
            Node::MatchWriteNode { .. } => {
                let n = node.as_match_write_node().expect("match write");
                self.compile_call(&n.call(), true);
                for t in n.targets().iter() {
                    let t = t.as_local_variable_target_node().expect("match target");
                    let name = t.name().as_slice().to_vec();
                    let s = self.ctx.vm().symbols.intern(&name);
                    let lit = Value::symbol(s);
                    let li = self.b().literal(lit);
                    self.b().emit(Insn::GetSpecial(1 << 24 | li));
                    let id = self.intern(&name);
                    self.emit_set_local(id, t.depth());
                }
                self.pop_if_unused(used);
            }

            // ---- definitions ----
            Node::DefNode { .. } => {
                let n = node.as_def_node().expect("def");
                self.compile_def(&n, used);
            }
            Node::ClassNode { .. } | Node::ModuleNode { .. } | Node::SingletonClassNode { .. } => self.compile_class(node, used),
            Node::LambdaNode { .. } => {
                let n = node.as_lambda_node().expect("lambda");
                self.keep_locals_for_lambda();
                let child = self.compile_block_like(n.parameters(), n.body(), &n.locals(), true);
                let ci = self.b().child(child);
                self.b().emit(Insn::Lambda(ci));
                self.pop_if_unused(used);
            }
            Node::AliasMethodNode { .. } => {
                let n = node.as_alias_method_node().expect("alias");
                self.compile(&n.new_name(), true);
                self.compile(&n.old_name(), true);
                self.b().emit(Insn::Alias(0));
                self.pop_if_unused(used);
            }
            Node::AliasGlobalVariableNode { .. } => {
                let n = node.as_alias_global_variable_node().expect("valias");
                let new = self.intern(n.new_name().location().as_slice());
                let old = self.intern(n.old_name().location().as_slice());
                self.put_literal(Value::symbol(new));
                self.put_literal(Value::symbol(old));
                self.b().emit(Insn::Alias(1));
                self.pop_if_unused(used);
            }
            Node::UndefNode { .. } => {
                let n = node.as_undef_node().expect("undef");
                for name in n.names().iter() {
                    self.compile(&name, true);
                    self.b().emit(Insn::Undef);
                }
                if used {
                    self.b().emit(Insn::PutNil);
                }
            }
            Node::DefinedNode { .. } => {
                // In a void context nothing is evaluated (not even receivers).
                if used {
                    let n = node.as_defined_node().expect("defined");
                    self.compile_defined(&n.value());
                }
            }
            Node::SourceFileNode { .. } => {
                if used {
                    let n = node.as_source_file_node().expect("__FILE__");
                    self.compile_string_literal(n.filepath(), n.is_frozen(), crate::core::encoding::UTF_8);
                }
            }
            Node::SourceLineNode { .. } => {
                if used {
                    let line = node.location().start_line();
                    self.put_literal(Value::fixnum(line as i64));
                }
            }
            Node::SourceEncodingNode { .. } => {
                if used {
                    let enc = crate::core::encoding::encoding_object(self.ctx, self.source_encoding);
                    self.put_literal(enc);
                }
            }
            Node::PreExecutionNode { .. } => {
                if used {
                    self.b().emit(Insn::PutNil);
                }
            }
            Node::PostExecutionNode { .. } => {
                let n = node.as_post_execution_node().expect("END");
                let child = self.compile_end_block(n.statements());
                let ci_child = self.b().child(child);
                let mid = self.intern(b"__register_end_block__");
                let ci = self.b().call_info(mid, 0, super::iseq::call_flags::FCALL, Some(ci_child));
                self.b().emit(Insn::PutSelf);
                self.b().emit(Insn::Send(ci));
                self.pop_if_unused(used);
            }
            Node::ShareableConstantNode { .. } => {
                let n = node.as_shareable_constant_node().expect("shareable");
                self.compile(&n.write(), used);
            }
            Node::ImplicitNode { .. } => {
                let n = node.as_implicit_node().expect("implicit");
                self.compile(&n.value(), used);
            }
            Node::FlipFlopNode { .. } => self.compile_flip_flop(node, used),
            Node::EmbeddedStatementsNode { .. } => {
                let n = node.as_embedded_statements_node().expect("embedded");
                self.compile_statements(n.statements(), used);
            }
            Node::SplatNode { .. } => {
                let n = node.as_splat_node().expect("splat");
                self.compile_splat_value(&n);
                self.pop_if_unused(used);
            }
            _ => {
                let kind = format!("{node:?}");
                let name = kind.split_whitespace().next().unwrap_or("node").to_string();
                self.fail(&format!("unsupported syntax: {name}"));
            }
        }
    }

    /// Pushes the value of a `*x` for splatting.
    pub fn compile_splat_value(&mut self, n: &ruby_prism::SplatNode<'pr>) {
        match n.expression() {
            Some(e) => self.compile(&e, true),
            None => {
                let star = self.intern(b"*");
                let d = self.anon_param_depth(star);
                self.emit_get_local(star, d);
            }
        }
        self.b().emit(Insn::SplatArray(1));
    }

    /// Depth (in prism's terms) of an anonymous parameter like `*`, `**`, `&`.
    pub fn anon_param_depth(&mut self, name: crate::symbol::SymId) -> u32 {
        let mut depth = 0;
        for s in self.scopes.iter().rev() {
            if s.transparent {
                continue;
            }
            if s.b.local_index.contains_key(&name) {
                return depth;
            }
            depth += 1;
        }
        // An eval's enclosing method (`def m(*) = eval("n(*)")`).
        if let Some(k) = self.eval_outer.iter().position(|names| names.contains(&name)) {
            return depth + k as u32;
        }
        0
    }

    pub fn integer_value(&mut self, i: &ruby_prism::Integer<'pr>) -> Value {
        let (neg, digits) = i.to_u32_digits();
        if digits.len() <= 2 {
            let mut v: u64 = 0;
            for (k, d) in digits.iter().enumerate() {
                v |= (*d as u64) << (32 * k);
            }
            if v <= i64::MAX as u64 {
                let s = if neg { -(v as i64) } else { v as i64 };
                if Value::fits_fixnum(s) {
                    return Value::fixnum(s);
                }
            }
        }
        let big = num_bigint::BigInt::from_slice(if neg { num_bigint::Sign::Minus } else { num_bigint::Sign::Plus }, digits);
        bignum::from_bigint(self.ctx, big)
    }

    /// The encoding of a string literal: the source file's (its magic
    /// comment), unless escapes forced binary or UTF-8.
    pub fn literal_encoding(&self, forced_binary: bool, forced_utf8: bool) -> u8 {
        if forced_binary {
            crate::core::encoding::BINARY
        } else if forced_utf8 {
            crate::core::encoding::UTF_8
        } else {
            self.source_encoding
        }
    }

    pub fn compile_string_literal(&mut self, bytes: &[u8], frozen: bool, enc: u8) {
        self.compile_string_literal_chilled(bytes, frozen, false, enc)
    }

    /// A string literal; `chilled` (Ruby 3.4: no `frozen_string_literal` comment) makes
    /// the pushed copies warn on their first mutation.
    pub fn compile_string_literal_chilled(&mut self, bytes: &[u8], frozen: bool, chilled: bool, enc: u8) {
        let s = string::new_with_enc(self.ctx, bytes.to_vec(), enc);
        self.keep(s);
        if chilled {
            string::chill(s, false);
        }
        if frozen {
            // Frozen literals with equal content are one object (CRuby's fstring table).
            crate::core::object::freeze(s);
            let s = crate::core::string_methods::fstring(self.ctx, s).unwrap_or(s);
            self.keep(s);
            let i = self.b().unique_literal(s);
            self.b().emit(Insn::PutLit(i));
        } else {
            crate::core::object::freeze(s);
            let i = self.b().unique_literal(s);
            self.b().emit(Insn::PutString(i));
        }
    }

    /// Compiles interpolation parts into one String on the stack.
    pub fn compile_parts(&mut self, parts: &ruby_prism::NodeList<'pr>) {
        let n = self.compile_parts_raw(parts);
        if n == 0 {
            let enc = self.literal_encoding(false, false);
            self.compile_string_literal(b"", false, enc);
        } else {
            self.b().emit(Insn::ConcatStrings(n));
        }
    }

    /// Pushes each part as a String; returns how many.
    pub fn compile_parts_raw(&mut self, parts: &ruby_prism::NodeList<'pr>) -> u32 {
        let mut count = 0;
        for p in parts.iter() {
            match p {
                Node::StringNode { .. } => {
                    let s = p.as_string_node().expect("part");
                    let enc = self.literal_encoding(s.is_forced_binary_encoding(), s.is_forced_utf8_encoding());
                    self.compile_string_literal(s.unescaped(), true, enc);
                }
                Node::EmbeddedStatementsNode { .. } => {
                    let e = p.as_embedded_statements_node().expect("embedded");
                    self.compile_statements(e.statements(), true);
                    let ci = self.b().call_info(sym::TO_S, 0, 0, None);
                    self.b().emit(Insn::ToS(ci));
                }
                Node::EmbeddedVariableNode { .. } => {
                    let e = p.as_embedded_variable_node().expect("embedded var");
                    self.compile(&e.variable(), true);
                    let ci = self.b().call_info(sym::TO_S, 0, 0, None);
                    self.b().emit(Insn::ToS(ci));
                }
                Node::InterpolatedStringNode { .. } => {
                    let s = p.as_interpolated_string_node().expect("nested");
                    self.compile_parts(&s.parts());
                }
                other => {
                    self.compile(&other, true);
                    let ci = self.b().call_info(sym::TO_S, 0, 0, None);
                    self.b().emit(Insn::ToS(ci));
                }
            }
            count += 1;
        }
        count
    }

    /// Builds an array from elements that may contain splats.
    pub fn compile_array_elements(&mut self, elems: &[Node<'pr>]) {
        let mut pending = 0u32;
        let mut have_array = false;
        for e in elems {
            match e {
                Node::SplatNode { .. } => {
                    let s = e.as_splat_node().expect("splat");
                    if pending > 0 || !have_array {
                        self.b().emit(Insn::NewArray(pending));
                        if have_array {
                            self.b().emit(Insn::ConcatArray);
                        }
                        have_array = true;
                        pending = 0;
                    }
                    self.compile_splat_value(&s);
                    self.b().emit(Insn::ConcatArray);
                }
                Node::KeywordHashNode { .. } => {
                    self.compile(e, true);
                    pending += 1;
                }
                _ => {
                    self.compile(e, true);
                    pending += 1;
                }
            }
        }
        if !have_array {
            self.b().emit(Insn::NewArray(pending));
        } else if pending > 0 {
            self.b().emit(Insn::NewArray(pending));
            self.b().emit(Insn::ConcatArray);
        }
    }

    /// Builds a hash from `key => value` pairs and `**splat`s.
    pub fn compile_hash_elements(&mut self, elems: &[Node<'pr>]) {
        let mut pending = 0u32;
        let mut have_hash = false;
        for e in elems {
            match e {
                Node::AssocNode { .. } => {
                    let a = e.as_assoc_node().expect("assoc");
                    self.compile(&a.key(), true);
                    self.compile(&a.value(), true);
                    pending += 2;
                }
                Node::AssocSplatNode { .. } => {
                    let a = e.as_assoc_splat_node().expect("assoc splat");
                    if !have_hash || pending > 0 {
                        self.b().emit(Insn::NewHash(pending));
                        if have_hash {
                            self.b().emit(Insn::HashMergeKw);
                        }
                        have_hash = true;
                        pending = 0;
                    }
                    match a.value() {
                        Some(v) => self.compile(&v, true),
                        None => {
                            let dstar = self.intern(b"**");
                            let d = self.anon_param_depth(dstar);
                            self.emit_get_local(dstar, d);
                        }
                    }
                    self.b().emit(Insn::HashMergeKw);
                }
                _ => {
                    self.compile(e, true);
                    pending += 1;
                }
            }
        }
        if !have_hash {
            self.b().emit(Insn::NewHash(pending));
        } else if pending > 0 {
            self.b().emit(Insn::NewHash(pending));
            self.b().emit(Insn::HashMergeKw);
        }
    }

    // ---- definitions ----

    fn compile_def(&mut self, n: &ruby_prism::DefNode<'pr>, used: bool) {
        let name = self.intern(n.name().as_slice());
        let name_str = String::from_utf8_lossy(n.name().as_slice()).into_owned();
        let line = n.location().start_line().max(0) as u32;
        self.method_names.push(name_str.clone());
        self.push_scope(IseqKind::Method, name_str, line);
        self.b().method_name = Some(name);
        let params = n.parameters();
        self.declare_params(params.as_ref(), &n.locals(), false);
        self.compile_param_prologue(params.as_ref());
        self.compile_opt(n.body(), true);
        self.b().emit(Insn::Leave);
        let scope = self.scopes.pop().expect("def scope");
        self.method_names.pop();
        let outer = self.outer_names();
        let iseq = self.finish_scope(scope, outer);
        self.keep(iseq);
        let child = self.b().child(iseq);
        match n.receiver() {
            Some(r) => {
                self.compile(&r, true);
                self.b().emit(Insn::DefineSMethod(name, child));
            }
            None => {
                self.b().emit(Insn::DefineMethod(name, child));
            }
        }
        self.pop_if_unused(used);
    }

    fn compile_class(&mut self, node: &Node<'pr>, used: bool) {
        let (name, flags, body, locals, label): (crate::symbol::SymId, u32, Option<Node<'pr>>, ruby_prism::ConstantList<'pr>, String) = match node {
            Node::ClassNode { .. } => {
                let n = node.as_class_node().expect("class");
                let (name, scoped) = self.push_cbase(&n.constant_path());
                let mut flags = if scoped { ops::DEFCLASS_SCOPED } else { 0 };
                if let Some(sup) = n.superclass() {
                    self.compile(&sup, true);
                    flags |= ops::DEFCLASS_HAS_SUPER;
                }
                let label = format!("<class:{}>", self.ctx.sym_str(name));
                (name, flags, n.body(), n.locals(), label)
            }
            Node::ModuleNode { .. } => {
                let n = node.as_module_node().expect("module");
                let (name, scoped) = self.push_cbase(&n.constant_path());
                let flags = ops::DEFCLASS_MODULE | if scoped { ops::DEFCLASS_SCOPED } else { 0 };
                let label = format!("<module:{}>", self.ctx.sym_str(name));
                (name, flags, n.body(), n.locals(), label)
            }
            _ => {
                let n = node.as_singleton_class_node().expect("sclass");
                self.compile(&n.expression(), true);
                (crate::symbol::sym::EMPTY, ops::DEFCLASS_SINGLETON, n.body(), n.locals(), "singleton class".to_string())
            }
        };
        let line = node.location().start_line().max(0) as u32;
        self.push_scope(IseqKind::Class, label, line);
        for l in locals.iter() {
            let id = self.intern(l.as_slice());
            self.b().local(id);
        }
        self.compile_opt(body, true);
        self.b().emit(Insn::Leave);
        let scope = self.scopes.pop().expect("class scope");
        let iseq = self.finish_scope(scope, Vec::new());
        self.keep(iseq);
        let child = self.b().child(iseq);
        self.b().emit(Insn::DefineClass(name, child, flags));
        self.pop_if_unused(used);
    }

    /// Pushes the scope for `class A::B` (or nil for a plain name); returns (name, scoped).
    fn push_cbase(&mut self, path: &Node<'pr>) -> (crate::symbol::SymId, bool) {
        match path {
            Node::ConstantPathNode { .. } => {
                let p = path.as_constant_path_node().expect("cpath");
                let name = self.intern(p.name().map(|c| c.as_slice()).unwrap_or(b""));
                match p.parent() {
                    Some(parent) => self.compile(&parent, true),
                    None => {
                        let obj = self.ctx.c().object;
                        self.put_literal(obj);
                    }
                }
                (name, true)
            }
            _ => {
                let name = self.intern(path.location().as_slice());
                self.b().emit(Insn::PutNil);
                (name, false)
            }
        }
    }

    /// Compiles a block or lambda body into a child iseq.
    pub fn compile_block_like(&mut self, params: Option<Node<'pr>>, body: Option<Node<'pr>>, locals: &ruby_prism::ConstantList<'pr>, is_lambda: bool) -> Value {
        let label = self.block_label();
        let line = self.b().line;
        self.push_scope(IseqKind::Block, label, line);
        let _ = is_lambda;
        match params {
            Some(Node::BlockParametersNode { .. }) => {
                let bp = params.as_ref().and_then(|p| p.as_block_parameters_node()).expect("block params");
                let pn = bp.parameters();
                self.declare_params(pn.as_ref(), locals, true);
                let redo = self.b().new_label();
                self.compile_param_prologue(pn.as_ref());
                self.b().place(redo);
                self.scope().block_redo = Some(redo);
            }
            Some(Node::NumberedParametersNode { .. }) => {
                let max = params.as_ref().and_then(|p| p.as_numbered_parameters_node()).map_or(1, |n| n.maximum());
                for i in 1..=max {
                    let id = self.intern(format!("_{i}").as_bytes());
                    self.b().add_local(id);
                }
                self.b().params.lead = max as u32;
                self.b().params.simple = true;
                for name in locals.iter() {
                    let id = self.intern(name.as_slice());
                    self.b().local(id);
                }
                let redo = self.b().new_label();
                self.b().place(redo);
                self.scope().block_redo = Some(redo);
            }
            Some(Node::ItParametersNode { .. }) => {
                // A hidden name: `it` is no local variable for binding.
                let it = self.intern(b"\0it");
                self.b().add_local(it);
                self.b().params.lead = 1;
                self.b().params.simple = true;
                self.b().params.implicit_it = true;
                for name in locals.iter() {
                    let id = self.intern(name.as_slice());
                    self.b().local(id);
                }
                let redo = self.b().new_label();
                self.b().place(redo);
                self.scope().block_redo = Some(redo);
            }
            _ => {
                self.declare_params(None, locals, true);
                let redo = self.b().new_label();
                self.b().place(redo);
                self.scope().block_redo = Some(redo);
            }
        }
        self.compile_opt(body, true);
        self.b().emit(Insn::Leave);
        let scope = self.scopes.pop().expect("block scope");
        let outer = self.outer_names();
        let iseq = self.finish_scope(scope, outer);
        self.keep(iseq)
    }

    fn compile_end_block(&mut self, stmts: Option<ruby_prism::StatementsNode<'pr>>) -> Value {
        let label = self.block_label();
        let line = self.b().line;
        self.push_scope(IseqKind::Block, label, line);
        self.b().params.simple = true;
        self.compile_statements(stmts, true);
        self.b().emit(Insn::Leave);
        let scope = self.scopes.pop().expect("END scope");
        let outer = self.outer_names();
        let iseq = self.finish_scope(scope, outer);
        self.keep(iseq)
    }

    /// One end of a flip-flop; an Integer literal there means `n == $.` (as `-n` uses it).
    fn compile_flip_flop_end(&mut self, end: Option<Node<'pr>>) {
        let is_int = matches!(end, Some(Node::IntegerNode { .. }));
        self.compile_opt(end, true);
        if is_int {
            let lineno = self.intern(b"$.");
            self.b().emit(Insn::GetGlobal(lineno));
            let ci = self.b().call_info(sym::EQ, 1, 0, None);
            self.b().emit(Insn::OptEq(ci));
        }
    }

    fn compile_flip_flop(&mut self, node: &Node<'pr>, used: bool) {
        // State lives in a hidden local of the method-level scope.
        let n = node.as_flip_flop_node().expect("flip-flop");
        let (depth, state) = self.method_level_hidden_local();
        let (get, set) = if depth == 0 { (Insn::GetLocal(state), Insn::SetLocal(state)) } else { (Insn::GetLocalUp(state, depth), Insn::SetLocalUp(state, depth)) };
        let (on, off, end) = (self.b().new_label(), self.b().new_label(), self.b().new_label());
        self.b().emit(get);
        self.b().branch_if(on);
        self.compile_flip_flop_end(n.left());
        self.b().branch_unless(off);
        self.b().emit(Insn::PutTrue);
        self.b().emit(set);
        if n.is_exclude_end() {
            self.b().emit(Insn::PutTrue);
            self.b().jump(end);
        }
        self.b().place(on);
        self.compile_flip_flop_end(n.right());
        let still = self.b().new_label();
        self.b().branch_unless(still);
        self.b().emit(Insn::PutFalse);
        self.b().emit(set);
        self.b().place(still);
        self.b().emit(Insn::PutTrue);
        self.b().jump(end);
        self.b().place(off);
        self.b().emit(Insn::PutFalse);
        self.b().place(end);
        // The stack effect of the two paths is the same (one boolean).
        self.b().depth -= if n.is_exclude_end() { 2 } else { 1 };
        self.pop_if_unused(used);
    }
}

impl<'a, 'pr> Compiler<'a, 'pr> {
    /// An interpolated regexp; with `/o` it is built the first time only.
    fn compile_dregexp(&mut self, parts: &ruby_prism::NodeList<'pr>, opts: u32, once: bool) {
        let done = self.b().new_label();
        let slot = once.then(|| self.b().once(done));
        let count = self.compile_parts_raw(parts);
        self.b().emit(Insn::ToRegexp(count, opts));
        if let Some(slot) = slot {
            self.b().emit(Insn::SetOnce(slot));
        }
        self.b().place(done);
    }
}

/// Regexp option bits as Onigmo/CRuby number them (`/n` is NOENCODING); `/e`, `/s` and
/// `/u` name an encoding (see `regexp::forced_encoding_opts`).
pub fn regexp_options(i: bool, x: bool, m: bool, n: bool, euc_jp: bool, windows_31j: bool, utf8: bool) -> u32 {
    let mut o = 0;
    if i {
        o |= crate::core::regexp::IGNORECASE;
    }
    if x {
        o |= crate::core::regexp::EXTENDED;
    }
    if m {
        o |= crate::core::regexp::MULTILINE;
    }
    let forced = if euc_jp {
        Some("EUC-JP")
    } else if windows_31j {
        Some("Windows-31J")
    } else if utf8 {
        Some("UTF-8")
    } else {
        None
    };
    match forced.and_then(crate::core::encoding::find) {
        Some(e) => o |= crate::core::regexp::forced_encoding_opts(e),
        None if n => o |= crate::core::regexp::NOENCODING,
        None => {}
    }
    o
}
