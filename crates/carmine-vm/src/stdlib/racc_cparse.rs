//! `racc/cparse`: the native runtime core of Racc-generated parsers (CRuby's
//! ext/racc/cparse). `racc/parser.rb` uses it when it loads: `do_parse` runs
//! `_racc_do_parse_c`, `yyparse` runs `_racc_yyparse_c`.
//!
//! The core interprets the LALR tables a generated parser passes in `Racc_arg` (action,
//! goto and reduce tables, the token table, the shift and reduce counts) and calls back
//! into the parser: `next_token` (or the lexer method of `yyparse`, whose block feeds the
//! core one token at a time), the `_reduce_N` actions, `on_error`, and the `racc_*` debug
//! hooks while `@yydebug` is set.
//!
//! Invariants:
//! - The semantics are those of the C core, which differ from the pure-Ruby core
//!   (`_racc_do_parse_rb`) in error recovery: after shifting the `error` token the C core
//!   retries the token that caused the error instead of dropping it, a `yyerror` in an
//!   action does not call `on_error`, and a `yyparse` lexer that keeps yielding after the
//!   input was accepted gets "extra token after EndOfToken".
//! - `@racc_error_status` mirrors the error-recovery countdown: the core writes it when
//!   the countdown changes and reads it back after every action (so `yyerrok` works).
//! - Every Ruby value the core holds is in `Core`, which lives on the native stack (scanned
//!   conservatively) or is reachable from the parser (`@vstack`, `@tstack`) or the
//!   `Racc_arg` Array.

use crate::core::integer::to_i64_arg;
use crate::core::{array, hash, object, string};
use crate::interp::Args;
use crate::symbol::SymId;
use crate::thread::Ctx;
use crate::value::Value;
use crate::{Result, Unwind};

/// The version of the C core this reproduces (`Racc_Runtime_Core_Version_C`).
const CORE_VERSION: &str = "1.4.15";
const CORE_ID: &str = "$originalId: cparse.c,v 1.8 2006/07/06 11:39:46 aamine Exp $";

const FINAL_TOKEN: i64 = 0;
const ERROR_TOKEN: i64 = 1;

#[derive(Copy, Clone, PartialEq, Eq)]
enum Fin {
    Running,
    Accepted,
    /// An error at the end of input while recovering from another.
    EndOfTokens,
    /// The error token could not be shifted in any state of the stack.
    CantPop,
}

/// What an action (`_reduce_N`) asked for by throwing `:racc_jump`.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Jump {
    None,
    YyError,
    YyAccept,
}

struct Core {
    parser: Value,
    /// `yyparse`: the lexer's receiver and method; tokens arrive through `feed`.
    lexer: Option<(Value, SymId)>,
    action_table: Value,
    action_check: Value,
    action_default: Value,
    action_pointer: Value,
    goto_table: Value,
    goto_check: Value,
    goto_default: Value,
    goto_pointer: Value,
    nt_base: i64,
    reduce_table: Value,
    token_table: Value,
    shift_n: i64,
    reduce_n: i64,
    use_result: bool,
    /// The state stack (kept as integers; the debug hooks get an Array copy).
    state: Vec<i64>,
    curstate: i64,
    vstack: Value,
    /// The token stack, an Array while `@yydebug` is set, else nil.
    tstack: Value,
    /// The current token's number and value.
    t: i64,
    val: Value,
    read_next: bool,
    errstatus: i64,
    nerr: i64,
    retval: Value,
    fin: Fin,
    debug: bool,
    ids: Ids,
}

/// Names the core uses on every token or reduction, interned once per parse.
struct Ids {
    next_token: SymId,
    on_error: SymId,
    reduce_none: SymId,
    error_status: SymId,
    /// `:racc_jump`, the tag `yyerror` and `yyaccept` throw.
    jump: Value,
}

/// Element `i` of Array `a`, nil outside it (negative `i` included).
fn at(a: Value, i: i64) -> Value {
    if i < 0 {
        Value::NIL
    } else {
        array::get(a, i as usize)
    }
}

fn expect_array(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if array::is_array(v) {
        return Ok(v);
    }
    let cname = object::class_name_of(ctx, v);
    Err(ctx.type_error(&format!("wrong argument type {cname} (expected Array)")))
}

fn expect_hash(ctx: &mut Ctx, v: Value) -> Result<Value> {
    if hash::is_hash(v) {
        return Ok(v);
    }
    let cname = object::class_name_of(ctx, v);
    Err(ctx.type_error(&format!("wrong argument type {cname} (expected Hash)")))
}

fn expect_symbol(ctx: &mut Ctx, v: Value) -> Result<SymId> {
    v.as_symbol().ok_or_else(|| ctx.type_error("not symbol"))
}

impl Core {
    /// Checks `Racc_arg` and sets up the stacks (and the parser's `@racc_error_status`,
    /// `@vstack` and `@tstack`).
    fn new(ctx: &mut Ctx, parser: Value, arg: Value, lexer: Option<(Value, SymId)>) -> Result<Core> {
        let yydebug = ctx.intern("@yydebug");
        let debug = object::ivar_get(ctx, parser, yydebug).truthy();
        let arg = expect_array(ctx, arg)?;
        let n = array::len(arg);
        if !(13..=14).contains(&n) {
            return Err(ctx.runtime_error(&format!("[Racc Bug] wrong arg.size {n}")));
        }
        let a = |i: usize| array::get(arg, i);
        let vstack = array::with_capacity(ctx, 64);
        let tstack = if debug { array::with_capacity(ctx, 64) } else { Value::NIL };
        let ids = Ids {
            next_token: ctx.intern("next_token"),
            on_error: ctx.intern("on_error"),
            reduce_none: ctx.intern("_reduce_none"),
            error_status: ctx.intern("@racc_error_status"),
            jump: Value::symbol(ctx.intern("racc_jump")),
        };
        let core = Core {
            parser,
            lexer,
            action_table: expect_array(ctx, a(0))?,
            action_check: expect_array(ctx, a(1))?,
            action_default: expect_array(ctx, a(2))?,
            action_pointer: expect_array(ctx, a(3))?,
            goto_table: expect_array(ctx, a(4))?,
            goto_check: expect_array(ctx, a(5))?,
            goto_default: expect_array(ctx, a(6))?,
            goto_pointer: expect_array(ctx, a(7))?,
            nt_base: to_i64_arg(ctx, a(8))?,
            reduce_table: expect_array(ctx, a(9))?,
            token_table: expect_hash(ctx, a(10))?,
            shift_n: to_i64_arg(ctx, a(11))?,
            reduce_n: to_i64_arg(ctx, a(12))?,
            use_result: n < 14 || a(13).truthy(),
            state: vec![0],
            curstate: 0,
            vstack,
            tstack,
            // Anything but FINAL_TOKEN, so that the first token is read.
            t: FINAL_TOKEN + 1,
            val: Value::NIL,
            read_next: true,
            errstatus: 0,
            nerr: 0,
            retval: Value::NIL,
            fin: Fin::Running,
            debug,
            ids,
        };
        core.store_errstatus(ctx)?;
        let (iv_v, iv_t) = (ctx.intern("@vstack"), ctx.intern("@tstack"));
        object::ivar_set(ctx, parser, iv_v, core.vstack)?;
        object::ivar_set(ctx, parser, iv_t, core.tstack)?;
        Ok(core)
    }

    fn store_errstatus(&self, ctx: &mut Ctx) -> Result<()> {
        object::ivar_set(ctx, self.parser, self.ids.error_status, Value::fixnum(self.errstatus))
    }

    fn load_errstatus(&mut self, ctx: &mut Ctx) -> Result<()> {
        let v = object::ivar_get(ctx, self.parser, self.ids.error_status);
        self.errstatus = to_i64_arg(ctx, v)?;
        Ok(())
    }

    fn hook(&self, ctx: &mut Ctx, name: &str, args: &[Value]) -> Result<()> {
        let mid = ctx.intern(name);
        ctx.call(self.parser, mid, args)?;
        Ok(())
    }

    fn state_array(&self, ctx: &mut Ctx) -> Value {
        let items = self.state.iter().map(|&s| Value::fixnum(s)).collect();
        array::from_vec(ctx, items)
    }

    /// `[tok, val]` from what `next_token` returned or the lexer yielded (nil: end of input).
    fn user_token(&self, ctx: &mut Ctx, given: Value) -> Result<(Value, Value)> {
        if given.is_nil() {
            return Ok((Value::FALSE, string::new_utf8(ctx, "$")));
        }
        let (who, how) = match self.lexer {
            Some((_, mid)) => (ctx.sym_str(mid), "yielded"),
            None => (String::from("next_token"), "returned"),
        };
        if !array::is_array(given) {
            let cname = object::class_name_of(ctx, given);
            return Err(ctx.type_error(&format!("{who}() {how} {cname} (must be Array[2])")));
        }
        let n = array::len(given);
        if n != 2 {
            return Err(ctx.arg_error(&format!("{who}() {how} wrong size of array ({n} for 2)")));
        }
        Ok((array::get(given, 0), array::get(given, 1)))
    }

    /// The action for token number `self.t` in the current state, reading past `base`
    /// (the state's action pointer); the state's default action when the tables have none.
    fn action_at(&self, ctx: &mut Ctx, i: i64) -> Result<i64> {
        if i >= 0 {
            let act = at(self.action_table, i);
            if !act.is_nil() {
                let check = at(self.action_check, i);
                if !check.is_nil() && to_i64_arg(ctx, check)? == self.curstate {
                    return to_i64_arg(ctx, act);
                }
            }
        }
        self.default_action(ctx)
    }

    fn default_action(&self, ctx: &mut Ctx) -> Result<i64> {
        let d = at(self.action_default, self.curstate);
        to_i64_arg(ctx, d)
    }

    // Table entries are untrusted integers: index arithmetic wraps (an out-of-range index
    // reads nil) rather than overflowing.

    /// Runs the automaton until the input is accepted or rejected (`fin`), or, with a
    /// lexer, until it needs the next token (`token`: the one just yielded, if any).
    fn run(&mut self, ctx: &mut Ctx, mut token: Option<Value>) -> Result<()> {
        loop {
            // A safepoint: tables that send the automaton round a cycle of reductions
            // without actions never return to Ruby code, and stay interruptible here.
            crate::thread::sched::poll_interrupts(ctx)?;
            let ptr = at(self.action_pointer, self.curstate);
            let act = if ptr.is_nil() {
                self.default_action(ctx)?
            } else {
                let base = to_i64_arg(ctx, ptr)?;
                if self.read_next && self.t != FINAL_TOKEN {
                    let given = match token.take() {
                        Some(g) => g,
                        None if self.lexer.is_some() => return Ok(()),
                        None => ctx.call(self.parser, self.ids.next_token, &[])?,
                    };
                    let (tok, val) = self.user_token(ctx, given)?;
                    self.val = val;
                    let t = hash::aref(ctx, self.token_table, tok)?;
                    self.t = if t.is_nil() { ERROR_TOKEN } else { to_i64_arg(ctx, t)? };
                    if self.debug {
                        self.hook(ctx, "racc_read_token", &[Value::fixnum(self.t), tok, val])?;
                    }
                }
                self.read_next = false;
                self.action_at(ctx, base.wrapping_add(self.t))?
            };
            self.act(ctx, act)?;
            if self.fin != Fin::Running {
                return Ok(());
            }
            if self.debug {
                let st = self.state_array(ctx);
                self.hook(ctx, "racc_next_state", &[Value::fixnum(self.curstate), st])?;
            }
        }
    }

    fn act(&mut self, ctx: &mut Ctx, act: i64) -> Result<()> {
        if act > 0 && act < self.shift_n {
            if self.errstatus > 0 {
                self.errstatus -= 1;
                self.store_errstatus(ctx)?;
            }
            self.shift(ctx, act, Value::fixnum(self.t))?;
            self.read_next = true;
            Ok(())
        } else if act < 0 && act > self.reduce_n.wrapping_neg() {
            match self.reduce(ctx, act)? {
                Jump::None => Ok(()),
                Jump::YyError => self.recover(ctx, true),
                Jump::YyAccept => self.accept(ctx),
            }
        } else if act == self.reduce_n.wrapping_neg() {
            self.recover(ctx, false)
        } else if act == self.shift_n {
            self.accept(ctx)
        } else {
            Err(ctx.runtime_error(&format!("[Racc Bug] unknown act value {act}")))
        }
    }

    fn shift(&mut self, ctx: &mut Ctx, act: i64, tok: Value) -> Result<()> {
        array::push(ctx, self.vstack, self.val);
        if self.debug {
            array::push(ctx, self.tstack, tok);
            self.hook(ctx, "racc_shift", &[tok, self.tstack, self.vstack])?;
        }
        self.curstate = act;
        self.state.push(act);
        Ok(())
    }

    fn accept(&mut self, ctx: &mut Ctx) -> Result<()> {
        if self.debug {
            self.hook(ctx, "racc_accept", &[])?;
        }
        self.retval = array::get(self.vstack, 0);
        self.fin = Fin::Accepted;
        Ok(())
    }

    /// A syntax error (or `yyerror` from an action): reports it with `on_error` unless
    /// already recovering, then pops states until one can shift or reduce the `error`
    /// token, and does so.
    fn recover(&mut self, ctx: &mut Ctx, mut from_yyerror: bool) -> Result<()> {
        loop {
            if !from_yyerror && self.errstatus == 0 {
                self.nerr += 1;
                ctx.call(self.parser, self.ids.on_error, &[Value::fixnum(self.t), self.val, self.vstack])?;
            }
            if self.errstatus == 3 {
                if self.t == FINAL_TOKEN {
                    self.retval = Value::NIL;
                    self.fin = Fin::EndOfTokens;
                    return Ok(());
                }
                self.read_next = true;
            }
            self.errstatus = 3;
            self.store_errstatus(ctx)?;
            let act = loop {
                let ptr = at(self.action_pointer, self.curstate);
                if !ptr.is_nil() {
                    let i = to_i64_arg(ctx, ptr)?.wrapping_add(ERROR_TOKEN);
                    let act = at(self.action_table, i);
                    if i >= 0 && !act.is_nil() {
                        let check = at(self.action_check, i);
                        if !check.is_nil() && to_i64_arg(ctx, check)? == self.curstate {
                            break to_i64_arg(ctx, act)?;
                        }
                    }
                }
                if self.state.len() <= 1 {
                    self.retval = Value::NIL;
                    self.fin = Fin::CantPop;
                    return Ok(());
                }
                self.state.pop();
                array::rarray(self.vstack).items_mut().pop();
                self.curstate = *self.state.last().unwrap_or(&0);
                if self.debug {
                    array::rarray(self.tstack).items_mut().pop();
                    let st = self.state_array(ctx);
                    self.hook(ctx, "racc_e_pop", &[st, self.tstack, self.vstack])?;
                }
            };
            if act > 0 && act < self.shift_n {
                return self.shift(ctx, act, Value::fixnum(ERROR_TOKEN));
            } else if act < 0 && act > self.reduce_n.wrapping_neg() {
                match self.reduce(ctx, act)? {
                    Jump::None => return Ok(()),
                    Jump::YyError => from_yyerror = true,
                    Jump::YyAccept => return self.accept(ctx),
                }
            } else if act == self.shift_n {
                return self.accept(ctx);
            } else {
                return Err(ctx.runtime_error(&format!("[Racc Bug] unknown act value {act}")));
            }
        }
    }

    /// Reduces by rule `-act`, inside `catch(:racc_jump)` (`yyerror`, `yyaccept`), then
    /// reads back `@racc_error_status`.
    fn reduce(&mut self, ctx: &mut Ctx, act: i64) -> Result<Jump> {
        let tag = self.ids.jump;
        ctx.stacks.catch_tags.push(tag);
        let r = self.reduce_rule(ctx, act.wrapping_neg().wrapping_mul(3));
        ctx.stacks.catch_tags.pop();
        let code = match r {
            Ok(()) => 0,
            Err(Unwind::Throw { tag: t, value }) if t == tag => to_i64_arg(ctx, value)?,
            Err(e) => return Err(e),
        };
        self.load_errstatus(ctx)?;
        Ok(match code {
            1 => Jump::YyError,
            2 => Jump::YyAccept,
            _ => Jump::None,
        })
    }

    fn reduce_rule(&mut self, ctx: &mut Ctx, ruleno: i64) -> Result<()> {
        let len = at(self.reduce_table, ruleno);
        let len = to_i64_arg(ctx, len)?;
        let reduce_to = at(self.reduce_table, ruleno.wrapping_add(1));
        let method = at(self.reduce_table, ruleno.wrapping_add(2));
        let mid = expect_symbol(ctx, method)?;
        // `_reduce_none` (a rule without an action) passes its first value on uncalled.
        let noreduce = mid == self.ids.reduce_none;
        let mut values = Value::NIL;
        let mut tokens = Value::NIL;
        let mut result = Value::NIL;
        if len <= 0 {
            if !noreduce {
                values = array::new(ctx);
            }
            if self.debug {
                tokens = array::new(ctx);
            }
        } else {
            let len = len as usize;
            if noreduce {
                result = array::aref_fix(self.vstack, (array::len(self.vstack) as i64).wrapping_sub(len as i64));
            } else {
                values = tail(ctx, self.vstack, len);
                result = array::get(values, 0);
            }
            cut(self.vstack, len);
            if self.debug {
                tokens = tail(ctx, self.tstack, len);
                cut(self.tstack, len);
            }
            let keep = self.state.len().saturating_sub(len);
            self.state.truncate(keep);
        }
        if !noreduce {
            result = if self.use_result { ctx.call(self.parser, mid, &[values, self.vstack, result])? } else { ctx.call(self.parser, mid, &[values, self.vstack])? };
        }
        array::push(ctx, self.vstack, result);
        if self.debug {
            array::push(ctx, self.tstack, reduce_to);
            self.hook(ctx, "racc_reduce", &[tokens, reduce_to, self.tstack, self.vstack])?;
        }
        let Some(&k2) = self.state.last() else {
            return Err(ctx.runtime_error("state stack unexpectedly empty"));
        };
        let k1 = to_i64_arg(ctx, reduce_to)?.wrapping_sub(self.nt_base);
        let goto_state = self.goto_at(ctx, k1, k2)?;
        let next = to_i64_arg(ctx, goto_state)?;
        self.state.push(next);
        self.curstate = next;
        Ok(())
    }

    /// The state to go to after reducing to nonterminal `k1` in state `k2`.
    fn goto_at(&self, ctx: &mut Ctx, k1: i64, k2: i64) -> Result<Value> {
        let ptr = at(self.goto_pointer, k1);
        if !ptr.is_nil() {
            let i = to_i64_arg(ctx, ptr)?.wrapping_add(k2);
            if i >= 0 {
                let st = at(self.goto_table, i);
                let check = at(self.goto_check, i);
                if !st.is_nil() && check == Value::fixnum(k1) {
                    return Ok(st);
                }
            }
        }
        Ok(at(self.goto_default, k1))
    }
}

/// A new Array of the last `len` elements of `stack` (all of them if it is shorter).
fn tail(ctx: &mut Ctx, stack: Value, len: usize) -> Value {
    let n = array::len(stack);
    let items = array::slice_to_vec(stack, n - len.min(n), len.min(n));
    array::from_vec(ctx, items)
}

fn cut(stack: Value, len: usize) {
    let mut items = array::rarray(stack).items_mut();
    let keep = items.len().saturating_sub(len);
    items.truncate(keep);
}

/// `_racc_do_parse_c(arg, sysdebug)`: parses with tokens from `next_token`.
fn do_parse_c(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let mut core = Core::new(ctx, recv, args.pos[0], None)?;
    core.run(ctx, None)?;
    Ok(core.retval)
}

/// `_racc_yyparse_c(lexer, mid, arg, sysdebug)`: parses with the tokens `lexer.mid`
/// yields, one `[tok, val]` at a time.
fn yyparse_c(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let lexer = args.pos[0];
    let mid = expect_symbol(ctx, args.pos[1])?;
    let mut core = Core::new(ctx, recv, args.pos[2], Some((lexer, mid)))?;
    core.run(ctx, None)?;
    // The lexer's iteration is left (running its `ensure` clauses) by throwing this tag
    // when the input is rejected.
    let stop = object::new_object(ctx, ctx.c().object);
    let mut feed = |ctx: &mut Ctx, yielded: &[Value]| -> Result<Value> {
        if core.fin != Fin::Running {
            return Err(ctx.arg_error("extra token after EndOfToken"));
        }
        let given = yielded.first().copied().unwrap_or(Value::NIL);
        core.run(ctx, Some(given))?;
        if core.fin != Fin::Running && core.fin != Fin::Accepted {
            return Err(Unwind::Throw { tag: stop, value: Value::NIL });
        }
        Ok(Value::NIL)
    };
    ctx.stacks.catch_tags.push(stop);
    let r = crate::core::proc::with_native_block(ctx, &mut feed, |ctx, blk| ctx.call_with_block(lexer, mid, &[], Some(blk)));
    ctx.stacks.catch_tags.pop();
    match r {
        Ok(_) => {}
        Err(Unwind::Throw { tag, .. }) if tag == stop => {}
        Err(e) => return Err(e),
    }
    if core.fin == Fin::Running {
        let name = ctx.sym_str(mid);
        return Err(ctx.arg_error(&format!("{name}() is finished before EndOfToken")));
    }
    Ok(core.retval)
}

pub fn init(ctx: &mut Ctx) -> Result<()> {
    let object = ctx.c().object;
    let racc = super::module_under(ctx, object, "Racc");
    let parser = super::class_under(ctx, racc, "Parser", object);
    crate::methods!(ctx, parser, [
        ("_racc_do_parse_c", do_parse_c, [2], Unsafe, Private),
        ("_racc_yyparse_c", yyparse_c, [4], Unsafe, Private),
    ]);
    for (name, text) in [("Racc_Runtime_Core_Version_C", CORE_VERSION), ("Racc_Runtime_Core_Id_C", CORE_ID)] {
        let id = ctx.intern(name);
        let s = string::new_utf8(ctx, text);
        crate::core::module::body(parser).const_set(id, s);
    }
    let params = super::class_under(ctx, racc, "CparseParams", object);
    crate::core::module::body(params).alloc = crate::core::module::AllocKind::None;
    Ok(())
}
