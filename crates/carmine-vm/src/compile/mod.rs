//! Prism AST -> instruction sequences.
//!
//! Invariants:
//! - One `Scope` (and one `Builder`) per method, block, class body or script; a `for`
//!   loop body is a *transparent* block scope that owns no prism-visible locals.
//! - Prism's local `depth` counts real scopes; `resolve_local` maps it to the env chain,
//!   counting transparent scopes too.
//! - A scope whose locals a nested block reads or writes (or that calls `binding`/`eval`)
//!   keeps its locals on the heap (`locals_on_heap`), as do the scopes in between.
//! - Jumps out of an `ensure` region (break/next/redo/return/retry) run the ensure bodies
//!   they leave, compiled inline.

pub mod builder;
pub mod bytecode;
mod call;
mod control;
mod expr;
pub mod iseq;
mod pattern;
mod peephole;
mod assign;

use std::sync::Arc;

use ruby_prism::{Node, ParametersNode};

use crate::error::Unwind;
use crate::object::ObjType;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;
use builder::{Builder, Label};
use iseq::{Insn, Iseq, IseqKind, KwParam, RIseq};

/// What kind of program is being compiled.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    pub path: String,
    pub line: i32,
    pub kind: IseqKind,
    /// For `eval`: local names of the enclosing scopes, innermost first.
    pub eval_scopes: Vec<Vec<SymId>>,
    /// `--enable-frozen-string-literal`.
    pub frozen_string_literal: Option<bool>,
    /// Script name shown in labels ("<main>" / "<top (required)>").
    pub top_label: String,
    /// The source's encoding without a magic comment (an eval'd String's own).
    pub default_encoding: Option<u8>,
    /// An eval whose binding is inside a method (where `yield` is valid).
    pub eval_in_method: bool,
    /// For `eval`: the label of the frame the binding was taken from, which the eval's
    /// frame shows in backtraces.
    pub eval_label: Option<String>,
    /// The canonical path of the file being compiled (see `Iseq::realpath`).
    pub realpath: Option<String>,
}

/// Switches of the `ruby` command that change how the main program parses: `-n` runs
/// it once for each line that `gets` reads, `-p` prints `$_` after each, `-a` sets
/// `$F = $_.split($;)` first (Prism rewrites the tree as CRuby's parser does) and `-l`
/// chomps each line first (`chomp_loop_body`); a program given with `-e` gets none of the warnings
/// meant for script files (a literal in a condition).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommandLine {
    pub each_line: bool,
    pub print: bool,
    pub split: bool,
    pub chomp: bool,
    pub inline_program: bool,
    /// `-x`: the program starts after the first `#!` line that mentions ruby.
    pub search_shebang: bool,
}

impl CommandLine {
    fn loops(self) -> bool {
        self.each_line || self.print
    }

    fn prism_flags(self) -> Vec<ruby_prism::CommandLineFlag> {
        use ruby_prism::CommandLineFlag as F;
        let mut v = Vec::new();
        if self.loops() {
            v.push(F::N);
        }
        if self.print {
            v.push(F::P);
        }
        if self.split {
            v.push(F::A);
        }
        if self.inline_program {
            v.push(F::E);
        }
        if self.search_shebang {
            v.push(F::X);
        }
        v
    }
}

impl CompileOptions {
    pub fn main(path: &str) -> CompileOptions {
        CompileOptions { path: path.to_string(), line: 1, kind: IseqKind::Main, eval_scopes: Vec::new(), frozen_string_literal: None, top_label: "<main>".into(), default_encoding: None, eval_in_method: false, eval_label: None, realpath: None }
    }
    pub fn required(path: &str) -> CompileOptions {
        CompileOptions { path: path.to_string(), line: 1, kind: IseqKind::Top, eval_scopes: Vec::new(), frozen_string_literal: None, top_label: "<top (required)>".into(), default_encoding: None, eval_in_method: false, eval_label: None, realpath: None }
    }
}

pub(crate) struct LoopCtx {
    pub brk: Label,
    pub next: Label,
    pub redo: Label,
    /// Stack depth at the loop's start (a `break` value replaces what is above).
    pub depth: i32,
    pub ensure_len: usize,
}

/// Code that a jump (break/next/redo/return) leaving a region runs inline.
pub(crate) enum EnsureItem<'pr> {
    /// An `ensure` body.
    Body(Option<ruby_prism::StatementsNode<'pr>>),
    /// Leaving a rescue clause: `$!` goes back to the value saved in this
    /// hidden local when the clause was entered.
    RestoreErrinfo(u32),
}

pub(crate) struct Scope<'pr> {
    pub b: Builder,
    pub transparent: bool,
    pub loops: Vec<LoopCtx>,
    /// What a jump out of the current position must run first (ensure bodies,
    /// restoring `$!` when leaving a rescue clause), innermost last.
    pub ensures: Vec<EnsureItem<'pr>>,
    /// Parallel to `ensures`: code ranges where a copy of that ensure body (or of one
    /// inside it) runs inline for a jump, which its own handler must not cover; an
    /// exception there would run the body a second time.
    pub ensure_holes: Vec<Vec<(Label, Label)>>,
    /// `retry` targets of enclosing rescue clauses, innermost last.
    pub retries: Vec<Label>,
    /// A block's `redo` target (start of the body).
    pub block_redo: Option<Label>,
    /// Whether this is a method body (return = leave).
    pub is_method: bool,
    pub hidden: u32,
}

pub(crate) struct Compiler<'c, 'pr> {
    pub ctx: &'c mut Ctx,
    pub path: Arc<str>,
    pub realpath: Option<Arc<str>>,
    pub scopes: Vec<Scope<'pr>>,
    pub top_label: String,
    /// Names of the enclosing method for block labels, innermost last.
    pub method_names: Vec<String>,
    pub error: Option<Unwind>,
    pub eval_outer: Vec<Vec<SymId>>,
    /// Multiple assignment: stack positions of the receivers/arguments of the
    /// attribute, index and scoped-constant targets, evaluated before the
    /// right-hand side, in the order the targets are assigned.
    pub masgn_prefixes: std::collections::VecDeque<(i32, u32, u32)>,
    /// The source's encoding (from its magic comment; UTF-8 by default).
    pub source_encoding: u8,
    /// While compiling a case/in branch's pattern: the hidden local caching
    /// the subject's #deconstruct (taken by the first array/find pattern).
    pub deconstruct_cache: Option<u32>,
    /// See `CompileOptions::eval_in_method`.
    pub eval_in_method: bool,
    /// `-l` with `-n`/`-p`: the next `while` compiled is the line loop, whose body starts
    /// with `$_.chomp!` (as CRuby's parser adds it).
    pub chomp_loop_body: bool,
}

/// Parses and compiles a program; a syntax error becomes a `SyntaxError`.
pub fn compile(ctx: &mut Ctx, source: &[u8], opts: &CompileOptions) -> Result<Value> {
    compile_program(ctx, source, opts).map(|(iseq, _)| iseq)
}

/// `compile`, also returning where the data after `__END__` starts (its line's newline
/// excluded), if the source has one.
pub fn compile_program(ctx: &mut Ctx, source: &[u8], opts: &CompileOptions) -> Result<(Value, Option<usize>)> {
    compile_program_with(ctx, source, opts, CommandLine::default())
}

/// `compile_program` for the main script run under `-n`/`-p` (see `CommandLine`).
pub fn compile_program_with(ctx: &mut Ctx, source: &[u8], opts: &CompileOptions, command_line: CommandLine) -> Result<(Value, Option<usize>)> {
    let mark = ctx.stacks.protected.len();
    let r = compile_program_protected(ctx, source, opts, command_line);
    // The values `Compiler::keep` protected while compiling are owned by the iseq now (the
    // caller holds the iseq): without this, every compilation (each `eval`, each embedded
    // run) would keep its code alive for as long as the thread runs.
    ctx.stacks.protected.truncate(mark);
    r
}

fn compile_program_protected(ctx: &mut Ctx, source: &[u8], opts: &CompileOptions, command_line: CommandLine) -> Result<(Value, Option<usize>)> {
    let mut po = ruby_prism::Options::default().filepath(&opts.path).line(opts.line).version(ruby_prism::Version::CRuby3_4);
    if let Some(f) = opts.frozen_string_literal {
        po = po.frozen_string_literal(Some(f));
    }
    if opts.kind == IseqKind::Main {
        po = po.main_script(true);
        if command_line != CommandLine::default() {
            po = po.command_line(command_line.prism_flags());
        }
    }
    for names in opts.eval_scopes.iter().rev() {
        let locals: Vec<Vec<u8>> = names.iter().map(|&s| ctx.sym_name(s).to_vec()).filter(|n| is_plain_local_name(n)).collect();
        // Anonymous parameters of the enclosing method may be forwarded from the eval.
        let has = |ctx: &mut Ctx, n: &[u8]| names.iter().any(|&s| &*ctx.sym_name(s) == n);
        let mut fwd = Vec::new();
        let (star, dstar, amp) = (has(ctx, b"*"), has(ctx, b"**"), has(ctx, b"&"));
        if star {
            fwd.push(ruby_prism::ScopeForwardingFlag::Positionals);
        }
        if dstar {
            fwd.push(ruby_prism::ScopeForwardingFlag::Keywords);
        }
        if amp {
            fwd.push(ruby_prism::ScopeForwardingFlag::Block);
        }
        if star && dstar && amp {
            fwd.push(ruby_prism::ScopeForwardingFlag::All);
        }
        po = po.scope(ruby_prism::Scope::default().locals(locals).forwarding(fwd));
    }
    if !opts.eval_scopes.is_empty() {
        // Prism uses the last given scope as the program's own: the eval's
        // new locals go into this empty one, the binding's are one level out.
        po = po.scope(ruby_prism::Scope::default());
    }
    let built = po.build();
    let result = ruby_prism::parse_with_options(source, &built);
    let errors: Vec<(i32, String)> = result.errors().map(|d| (d.location().start_line(), String::from_utf8_lossy(d.message()).into_owned())).collect();
    if !errors.is_empty() {
        let msg = format_syntax_errors(&opts.path, source, &result, &errors);
        let e = ctx.new_error(ctx.c().syntax_error, &msg);
        let path_sym = ctx.intern("@path");
        let path_v = crate::core::string::new_utf8(ctx, &opts.path);
        crate::core::object::ivar_set_raw(ctx, e, path_sym, path_v);
        return Err(Unwind::Raise(e));
    }
    emit_warnings(ctx, &opts.path, &result);
    let root = result.node();
    let program = root.as_program_node().expect("prism returns a program node");
    let mut c = Compiler {
        ctx,
        path: Arc::from(opts.path.as_str()),
        realpath: opts.realpath.as_deref().map(Arc::from),
        scopes: Vec::new(),
        top_label: opts.top_label.clone(),
        method_names: Vec::new(),
        error: None,
        eval_outer: opts.eval_scopes.clone(),
        masgn_prefixes: std::collections::VecDeque::new(),
        source_encoding: source_encoding(source, &result, opts.default_encoding.unwrap_or(crate::core::encoding::UTF_8)),
        deconstruct_cache: None,
        eval_in_method: opts.eval_in_method,
        chomp_loop_body: false,
    };
    let kind = opts.kind;
    let label = match kind {
        IseqKind::Eval => opts.eval_label.clone().unwrap_or_else(|| c.eval_label()),
        _ => opts.top_label.clone(),
    };
    c.push_scope(kind, label, opts.line.max(0) as u32);
    for name in program.locals().iter() {
        let id = c.intern(name.as_slice());
        c.b().local(id);
    }
    // BEGIN blocks run first.
    let stmts = program.statements();
    let mut top: Vec<Node> = stmts.body().iter().collect();
    if opts.kind == IseqKind::Main && command_line.loops() {
        // Under -n/-p the program is the body of the `while gets` loop; its BEGIN
        // blocks still run once, before the loop.
        let body = top.iter().find_map(|n| n.as_while_node()).and_then(|w| w.statements());
        top.extend(body.iter().flat_map(|b| b.body().iter()));
    }
    for n in top {
        if let Node::PreExecutionNode { .. } = n {
            let pre = n.as_pre_execution_node().expect("pre-execution");
            if let Some(s) = pre.statements() {
                c.compile_statements(Some(s), false);
            }
        }
    }
    c.chomp_loop_body = opts.kind == IseqKind::Main && command_line.loops() && command_line.chomp;
    c.compile_statements(Some(stmts), true);
    c.b().emit(Insn::Leave);
    if let Some(e) = c.error.take() {
        return Err(e);
    }
    let scope = c.scopes.pop().expect("top scope");
    let outer = c.eval_outer.clone();
    let iseq = c.finish_scope(scope, outer);
    let data = result.data_loc().map(|l| {
        let start = (l.as_slice().as_ptr() as usize).wrapping_sub(source.as_ptr() as usize).min(source.len());
        let after = (start + b"__END__".len()).min(source.len());
        match &source[after..] {
            [b'\r', b'\n', ..] => after + 2,
            [b'\n', ..] => after + 1,
            _ => after,
        }
    });
    Ok((iseq, data))
}

/// The encoding named by the source's `coding:`/`encoding:` magic comment.
/// It counts only in a comment that starts its line, on the first line or the
/// second after a shebang.
fn source_encoding(source: &[u8], result: &ruby_prism::ParseResult<'_>, default: u8) -> u8 {
    let base = source.as_ptr() as usize;
    for c in result.magic_comments() {
        let at = (c.key().as_ptr() as usize).wrapping_sub(base);
        if at > source.len() {
            continue;
        }
        let line_start = source[..at].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line_no = source[..line_start].iter().filter(|&&b| b == b'\n').count() + 1;
        if !(line_no == 1 || (line_no == 2 && source.starts_with(b"#!"))) {
            continue;
        }
        let before = &source[line_start..at];
        let Some(hash) = before.iter().position(|&b| b == b'#') else { continue };
        if !before[..hash].iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let key = String::from_utf8_lossy(c.key()).to_ascii_lowercase().replace('-', "_");
        if key == "encoding" || key == "coding" {
            let value = String::from_utf8_lossy(c.value()).into_owned();
            if let Some(e) = crate::core::encoding::find(&value) {
                return e;
            }
        }
    }
    // Other styles (`# vim: fileencoding=big5`): "coding" followed by `:` or
    // `=` in the comment on that line.
    let mut lines = source.split(|&b| b == b'\n');
    let mut line = lines.next().unwrap_or(b"");
    if line.starts_with(b"#!") {
        line = lines.next().unwrap_or(b"");
    }
    let trimmed = line.iter().position(|b| !b.is_ascii_whitespace()).map_or(&line[..0], |i| &line[i..]);
    if trimmed.starts_with(b"#") {
        if let Some(i) = trimmed.windows(6).position(|w| w.eq_ignore_ascii_case(b"coding")) {
            let rest = &trimmed[i + 6..];
            if let Some((&sep, rest)) = rest.split_first() {
                if sep == b':' || sep == b'=' {
                    let rest = &rest[rest.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len())..];
                    let end = rest.iter().position(|&b| !(b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')).unwrap_or(rest.len());
                    if let Some(e) = crate::core::encoding::find(&String::from_utf8_lossy(&rest[..end])) {
                        return e;
                    }
                }
            }
        }
    }
    default
}

fn is_plain_local_name(n: &[u8]) -> bool {
    n.first().is_some_and(|&b| b == b'_' || b.is_ascii_lowercase() || b >= 0x80)
}

/// CRuby 3.4's layout: `path:line: syntax errors found` followed by the offending lines.
fn format_syntax_errors(path: &str, source: &[u8], result: &ruby_prism::ParseResult<'_>, errors: &[(i32, String)]) -> String {
    let _ = result;
    let first_line = errors.first().map_or(1, |e| e.0);
    let count = errors.len();
    let mut out = format!("{path}:{first_line}: syntax error{} found\n", if count == 1 { "" } else { "s" });
    let lines: Vec<&[u8]> = source.split(|&b| b == b'\n').collect();
    let mut shown = std::collections::BTreeMap::new();
    for (line, msg) in errors {
        shown.entry(*line).or_insert_with(Vec::new).push(msg.clone());
    }
    let width = shown.keys().max().map_or(1, |l| l.to_string().len());
    for (line, msgs) in shown {
        let text = lines.get((line - 1).max(0) as usize).map(|l| String::from_utf8_lossy(l).into_owned()).unwrap_or_default();
        out.push_str(&format!("> {line:>width$} | {text}\n"));
        for m in msgs {
            out.push_str(&format!("  {:>width$} | ^ {m}\n", ""));
        }
    }
    while out.ends_with('\n') {
        out.pop();
    }
    out
}

/// Parser warnings: all of them when `$VERBOSE` is true, the default-level
/// ones (those `ruby -c` shows) when it is false.
fn emit_warnings(ctx: &mut Ctx, path: &str, result: &ruby_prism::ParseResult<'_>) {
    let verbose = crate::core::globals::verbose_level(ctx);
    if verbose == 0 {
        return;
    }
    for w in result.warnings() {
        let line = w.location().start_line();
        let msg = String::from_utf8_lossy(w.message()).into_owned();
        if verbose < 2 && !is_default_level_warning(&msg) {
            continue;
        }
        crate::core::kernel::write_warning(ctx, &format!("{path}:{line}: warning: {msg}\n"));
    }
}

/// Prism's default-level warnings, recognised by their text (the level
/// itself is not exposed by the bindings).
fn is_default_level_warning(msg: &str) -> bool {
    const PREFIXES: &[&str] = &["... at EOL", "found '= literal' in conditional", "found `= literal' in conditional", "END in method", "integer literal in flip-flop", "invalid character syntax", "regex literal in ", "string literal in ", "shebang line ending", "encountered \\r in middle of line"];
    PREFIXES.iter().any(|p| msg.starts_with(p)) || (msg.starts_with("key ") && msg.contains(" is duplicated and overwritten on line ")) || msg.ends_with(" is too big for a number variable, always nil")
}

impl<'c, 'pr> Compiler<'c, 'pr> {
    #[inline]
    pub fn b(&mut self) -> &mut Builder {
        &mut self.scopes.last_mut().expect("scope").b
    }

    pub fn scope(&mut self) -> &mut Scope<'pr> {
        self.scopes.last_mut().expect("scope")
    }

    pub fn intern(&mut self, name: &[u8]) -> SymId {
        self.ctx.intern_bytes(name)
    }

    pub fn set_line(&mut self, node: &Node<'pr>) {
        let line = node.location().start_line();
        if line > 0 {
            self.b().line = line as u32;
        }
    }

    pub fn fail(&mut self, msg: &str) {
        if self.error.is_none() {
            let line = self.scopes.last().map_or(0, |s| s.b.line);
            let full = format!("{}:{}: {}", self.path, line, msg);
            let e = self.ctx.new_error(self.ctx.c().syntax_error, &full);
            self.error = Some(Unwind::Raise(e));
        }
    }

    pub fn push_scope(&mut self, kind: IseqKind, name: String, line: u32) {
        let mut b = Builder::new(kind, name, line);
        b.block_depth = if kind == IseqKind::Block { self.scopes.last().map_or(0, |s| s.b.block_depth) + 1 } else { 0 };
        // An eval's new locals must outlive it: a later eval on the same
        // binding sees them (Binding keeps the eval's environment).
        // The main script's locals are TOPLEVEL_BINDING's, so they live on the heap too.
        b.locals_on_heap = kind == IseqKind::Eval || kind == IseqKind::Main;
        self.scopes.push(Scope { b, transparent: false, loops: Vec::new(), ensures: Vec::new(), ensure_holes: Vec::new(), retries: Vec::new(), block_redo: None, is_method: kind == IseqKind::Method, hidden: 0 });
    }

    /// A hidden local (not visible to `local_variables`).
    pub fn hidden_local(&mut self) -> u32 {
        let n = self.scope().hidden;
        self.scope().hidden += 1;
        let name = self.intern(format!("\u{0}tmp{n}").as_bytes());
        self.b().hidden_local(name)
    }

    /// A hidden local in the nearest method-level (non-block) scope, as
    /// (env depth from the current scope, index); the scopes in between keep
    /// their locals on the heap. Used for state shared by all calls of a
    /// block, like a flip-flop's.
    pub fn method_level_hidden_local(&mut self) -> (u32, u32) {
        let top = self.scopes.len() - 1;
        let mut i = top;
        while i > 0 && (self.scopes[i].transparent || self.scopes[i].b.kind == IseqKind::Block) {
            i -= 1;
        }
        let n = self.scopes[i].hidden;
        self.scopes[i].hidden += 1;
        let name = self.intern(format!("\u{0}tmp{n}").as_bytes());
        let idx = self.scopes[i].b.hidden_local(name);
        for s in &mut self.scopes[i..top] {
            s.b.locals_on_heap = true;
        }
        ((top - i) as u32, idx)
    }

    /// A lambda literal is a Proc that outlives the call, and its `binding` sees the
    /// locals around it: the scopes up to the enclosing method keep them on the heap.
    pub fn keep_locals_for_lambda(&mut self) {
        let top = self.scopes.len() - 1;
        let mut i = top;
        while i > 0 && (self.scopes[i].transparent || self.scopes[i].b.kind == IseqKind::Block) {
            i -= 1;
        }
        for s in &mut self.scopes[i..=top] {
            s.b.locals_on_heap = true;
        }
    }

    /// The label for a block nested in the current context.
    pub fn block_label(&self) -> String {
        let depth = self.scopes.last().map_or(0, |s| s.b.block_depth) + 1;
        let base = self.method_names.last().cloned().unwrap_or_else(|| self.top_label.clone());
        if depth <= 1 {
            format!("block in {base}")
        } else {
            format!("block ({depth} levels) in {base}")
        }
    }

    fn eval_label(&self) -> String {
        self.method_names.last().cloned().unwrap_or_else(|| self.top_label.clone())
    }

    /// (env depth, index) of a prism local, marking the scopes it crosses as heap-allocated.
    pub fn resolve_local(&mut self, name: SymId, prism_depth: u32) -> (u32, u32) {
        let top = self.scopes.len() - 1;
        let mut i = top;
        let mut skip = prism_depth;
        loop {
            if self.scopes[i].transparent {
                if i == 0 {
                    break;
                }
                i -= 1;
                continue;
            }
            if skip == 0 {
                break;
            }
            if i == 0 {
                // Beyond the compiled scopes: an eval's enclosing scope. Every compiled
                // scope the access crosses needs its env, as in the ordinary case below.
                let depth = (top - i) as u32 + skip;
                for s in &mut self.scopes[..top] {
                    s.b.locals_on_heap = true;
                }
                return (depth, self.eval_local_index(name, skip));
            }
            skip -= 1;
            i -= 1;
        }
        let depth = (top - i) as u32;
        for s in &mut self.scopes[i..top] {
            s.b.locals_on_heap = true;
        }
        let b = &mut self.scopes[i].b;
        let idx = b.local(name);
        if b.params.block && idx == b.params.block_index() {
            b.block_param_used = true;
        }
        (depth, idx)
    }

    fn eval_local_index(&self, name: SymId, skip: u32) -> u32 {
        self.eval_outer.get(skip as usize - 1).and_then(|names| names.iter().position(|&n| n == name)).map_or(0, |p| p as u32)
    }

    pub fn emit_get_local(&mut self, name: SymId, depth: u32) {
        let (d, i) = self.resolve_local(name, depth);
        if d == 0 {
            self.b().emit(Insn::GetLocal(i));
        } else {
            self.b().emit(Insn::GetLocalUp(i, d));
        }
    }

    pub fn emit_set_local(&mut self, name: SymId, depth: u32) {
        let (d, i) = self.resolve_local(name, depth);
        if d == 0 {
            self.b().emit(Insn::SetLocal(i));
        } else {
            self.b().emit(Insn::SetLocalUp(i, d));
        }
    }

    /// Marks every scope as keeping its locals on the heap (`binding`, `eval`).
    /// A block that uses `$~`/`$_` (reads them, or matches with `=~`) shares them with
    /// its method-level scope, also after that scope's frame returned: the scopes from the
    /// method level to here keep heap environments, where the pair is stored
    /// (`interp::ops::svar_env`).
    pub fn share_special_vars(&mut self) {
        let top = self.scopes.len() - 1;
        if self.scopes[top].b.kind != IseqKind::Block {
            return;
        }
        let mut i = top;
        while i > 0 && (self.scopes[i].transparent || self.scopes[i].b.kind == IseqKind::Block) {
            i -= 1;
        }
        for s in &mut self.scopes[i..=top] {
            s.b.locals_on_heap = true;
        }
    }

    /// Records that the enclosing method uses its block (yield, super), and so do the
    /// blocks between it and here: a Proc made from one of them keeps the method's block
    /// for when it runs after the method returned (`proc::record_home`).
    pub fn mark_uses_block(&mut self) {
        for i in self.block_owner_scopes() {
            self.scopes[i].b.uses_block = true;
        }
    }

    /// `block_given?`: like `mark_uses_block` without counting as a use for the warning.
    pub fn mark_checks_block(&mut self) {
        for i in self.block_owner_scopes() {
            self.scopes[i].b.checks_block = true;
        }
    }

    /// The scopes from the innermost method scope in: whose block a `yield` here sees.
    fn block_owner_scopes(&self) -> std::ops::Range<usize> {
        let m = self.scopes.iter().rposition(|s| s.is_method);
        // Code evaluated inside a method (`binding.eval`) uses that method's block.
        let m = m.or_else(|| (self.eval_in_method && self.scopes.first().is_some_and(|s| s.b.kind == IseqKind::Eval)).then_some(0));
        match m {
            Some(m) => m..self.scopes.len(),
            None => 0..0,
        }
    }

    /// The local index of the running method's `&block` parameter when `name` is it, read
    /// in the method's own body (not in a block within it).
    pub fn own_block_param(&self, name: SymId) -> Option<u32> {
        let s = self.scopes.last()?;
        let b = &s.b;
        let idx = *b.local_index.get(&name)?;
        (s.is_method && !s.transparent && b.params.block && idx == b.params.block_index()).then_some(idx)
    }

    pub fn escape_all_scopes(&mut self) {
        for s in &mut self.scopes {
            s.b.locals_on_heap = true;
            s.b.block_param_used = true;
        }
    }

    /// Turns a finished scope into an `RIseq`.
    pub fn finish_scope(&mut self, mut scope: Scope<'pr>, outer_names: Vec<Vec<SymId>>) -> Value {
        let b = &mut scope.b;
        b.finish();
        peephole::optimize(b);
        let uses_block = b.uses_block || b.params.block;
        let sees_block = uses_block || b.checks_block;
        let iseq = Iseq {
            kind: b.kind,
            name: std::mem::take(&mut b.name),
            method_name: b.method_name,
            path: self.path.clone(),
            realpath: self.realpath.clone(),
            first_line: if b.start_line > 0 { b.start_line } else { b.lines.first().copied().unwrap_or(b.line) },
            code: std::mem::take(&mut b.code),
            lines: std::mem::take(&mut b.lines),
            literals: std::mem::take(&mut b.literals),
            calls: std::mem::take(&mut b.calls),
            children: std::mem::take(&mut b.children),
            catch_table: std::mem::take(&mut b.catch_table),
            local_names: std::mem::take(&mut b.local_names),
            params: std::mem::take(&mut b.params),
            locals_on_heap: b.locals_on_heap,
            uses_block,
            sees_block,
            stack_max: (b.max_depth.max(0) as u32) + 4,
            ivar_caches: b.ivar_caches(),
            const_caches: b.const_caches(),
            once_caches: (0..b.once_count).map(|_| std::cell::Cell::new(Value::UNDEF)).collect(),
            block_depth: b.block_depth,
            outer_local_names: outer_names,
        };
        new_iseq_value(self.ctx, iseq)
    }

    /// Local names of the enclosing scopes, innermost first (for eval inside blocks).
    pub fn outer_names(&self) -> Vec<Vec<SymId>> {
        let mut v: Vec<Vec<SymId>> = self.scopes.iter().rev().map(|s| s.b.local_names.clone()).collect();
        v.extend(self.eval_outer.iter().cloned());
        v
    }

    // ---- parameters ----

    /// Lays out parameters as locals (see `iseq` invariants) and records the `Params`.
    /// Returns the nodes needing code at entry: optional defaults, keyword defaults and
    /// destructured parameters, compiled by `compile_param_prologue`.
    pub fn declare_params(&mut self, params: Option<&ParametersNode<'pr>>, locals: &ruby_prism::ConstantList<'pr>, is_block: bool) {
        let Some(p) = params else {
            for name in locals.iter() {
                let id = self.intern(name.as_slice());
                self.b().local(id);
            }
            self.b().params.simple = true;
            return;
        };
        let star = self.intern(b"*");
        let dstar = self.intern(b"**");
        let amp = self.intern(b"&");
        let mut simple = true;
        for r in p.requireds().iter() {
            match r {
                Node::RequiredParameterNode { .. } => {
                    let n = r.as_required_parameter_node().expect("required");
                    let id = self.intern(n.name().as_slice());
                    self.b().add_local(id);
                }
                _ => {
                    simple = false;
                    let hidden = self.intern(b"\0destructure");
                    self.b().hidden_local(hidden);
                }
            }
            self.b().params.lead += 1;
        }
        for o in p.optionals().iter() {
            let n = o.as_optional_parameter_node().expect("optional");
            let id = self.intern(n.name().as_slice());
            self.b().add_local(id);
            self.b().params.opt += 1;
        }
        if let Some(rest) = p.rest() {
            match rest {
                Node::RestParameterNode { .. } => {
                    simple = false;
                    let n = rest.as_rest_parameter_node().expect("rest");
                    let id = match n.name() {
                        Some(name) => self.intern(name.as_slice()),
                        None => star,
                    };
                    self.b().add_local(id);
                    self.b().params.rest = true;
                }
                Node::ImplicitRestNode { .. } => {
                    // `|a,|`: behaves like two parameters for auto-splat, binds only `a`.
                    self.b().params.trailing_comma = true;
                }
                _ => {}
            }
        }
        for r in p.posts().iter() {
            simple = false;
            match r {
                Node::RequiredParameterNode { .. } => {
                    let n = r.as_required_parameter_node().expect("post");
                    let id = self.intern(n.name().as_slice());
                    self.b().add_local(id);
                }
                _ => {
                    let hidden = self.intern(b"\0destructure");
                    self.b().hidden_local(hidden);
                }
            }
            self.b().params.post += 1;
        }
        for k in p.keywords().iter() {
            simple = false;
            let (name, required) = match k {
                Node::RequiredKeywordParameterNode { .. } => (k.as_required_keyword_parameter_node().expect("kw").name().as_slice(), true),
                _ => (k.as_optional_keyword_parameter_node().expect("kw").name().as_slice(), false),
            };
            let id = self.intern(name);
            self.b().add_local(id);
            self.b().params.kw.push(KwParam { name: id, required });
        }
        if let Some(kr) = p.keyword_rest() {
            simple = false;
            match kr {
                Node::KeywordRestParameterNode { .. } => {
                    let n = kr.as_keyword_rest_parameter_node().expect("kwrest");
                    let id = match n.name() {
                        Some(name) => self.intern(name.as_slice()),
                        None => dstar,
                    };
                    self.b().add_local(id);
                    self.b().params.kwrest = true;
                }
                Node::NoKeywordsParameterNode { .. } => self.b().params.no_kw = true,
                Node::ForwardingParameterNode { .. } => {
                    // `...` = `*, **, &`.
                    if !self.b().params.rest {
                        self.b().add_local(star);
                        self.b().params.rest = true;
                    }
                    self.b().add_local(dstar);
                    self.b().params.kwrest = true;
                    self.b().add_local(amp);
                    self.b().params.block = true;
                    self.b().params.forwarding = true;
                }
                _ => {}
            }
        }
        // Optionals are the only difference between `simple` so far and an `opt_simple` method.
        let has_opt = self.b().params.opt > 0;
        let simple_but_block = simple && !has_opt;
        if let Some(blk) = p.block() {
            simple = false;
            if let Node::BlockParameterNode { .. } = blk {
                let n = blk.as_block_parameter_node().expect("block param");
                let id = match n.name() {
                    Some(name) => self.intern(name.as_slice()),
                    None => amp,
                };
                if !self.b().params.block {
                    self.b().add_local(id);
                    self.b().params.block = true;
                }
            }
        }
        if self.b().params.rest && !self.b().params.forwarding && self.b().params.kw.is_empty() && !self.b().params.kwrest && is_block {
            // nothing special
        }
        for name in locals.iter() {
            let id = self.intern(name.as_slice());
            self.b().local(id);
        }
        let trailing_comma = self.b().params.trailing_comma;
        self.b().params.simple = simple && !has_opt && !trailing_comma;
        self.b().params.opt_simple = simple && has_opt && !trailing_comma && !is_block;
        self.b().simple_but_block = simple_but_block && !self.b().params.trailing_comma;
    }

    /// Emits the parameter prologue: optional defaults (with the entry table), keyword
    /// defaults and destructuring of `(a, b)` parameters.
    pub fn compile_param_prologue(&mut self, params: Option<&ParametersNode<'pr>>) {
        let Some(p) = params else { return };
        let lead = self.b().params.lead;
        let opts: Vec<Node<'pr>> = p.optionals().iter().collect();
        if !opts.is_empty() {
            let mut pcs = Vec::new();
            for (i, o) in opts.iter().enumerate() {
                pcs.push(self.b().pc());
                let n = o.as_optional_parameter_node().expect("optional");
                self.set_line(o);
                self.compile(&n.value(), true);
                self.b().emit(Insn::SetLocal(lead + i as u32));
            }
            pcs.push(self.b().pc());
            self.b().params.opt_pcs = pcs;
        }
        let kw_start = self.b().params.kw_start();
        for (i, k) in p.keywords().iter().enumerate() {
            if let Node::OptionalKeywordParameterNode { .. } = k {
                let n = k.as_optional_keyword_parameter_node().expect("kw");
                let local = kw_start + i as u32;
                let skip = self.b().new_label();
                self.b().emit_with_target(Insn::BranchIfSet(local, 0), skip);
                self.compile(&n.value(), true);
                self.b().emit(Insn::SetLocal(local));
                self.b().place(skip);
            }
        }
        // Destructured parameters.
        for (i, r) in p.requireds().iter().enumerate() {
            if let Node::MultiTargetNode { .. } = r {
                self.b().emit(Insn::GetLocal(i as u32));
                self.compile_multi_target_from_stack(&r);
            }
        }
        let post_start = self.b().params.post_start();
        for (i, r) in p.posts().iter().enumerate() {
            if let Node::MultiTargetNode { .. } = r {
                self.b().emit(Insn::GetLocal(post_start + i as u32));
                self.compile_multi_target_from_stack(&r);
            }
        }
    }
}

/// A second handle to a prism node. Prism handles are (parser, node) pointer pairs with no
/// destructor; the parse result owns the nodes, so copies are valid as long as it lives.
pub(crate) fn prism_copy<T>(x: &T) -> T {
    // SAFETY: only used on prism handle types, which are plain pointers without Drop.
    unsafe { std::ptr::read(x) }
}

/// Wraps an iseq in a heap object.
pub fn new_iseq_value(ctx: &mut Ctx, iseq: Iseq) -> Value {
    let boxed = Box::new(iseq);
    let p = ctx.alloc_slot(ObjType::Iseq, Value::NIL) as *mut RIseq;
    // SAFETY: fresh Iseq slot, initialised before the next allocation.
    unsafe { std::ptr::write(&mut (*p).iseq, boxed) };
    Value::from_ptr(p)
}
