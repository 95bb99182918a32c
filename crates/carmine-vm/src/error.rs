//! Non-local exits as values: Ruby exceptions, `break`, `return`, `throw`.
//!
//! Invariants:
//! - Every non-local exit travels as `Err(Unwind)` through Rust; nothing unwinds with a
//!   Rust panic. A panic is a VM bug and is reported as `[BUG]` by the embedder.
//! - `Break`/`Return` carry the serial of the frame they return to (see `interp::frame`).
//! - Exceptions created here get their backtrace at creation, from the current frames.

use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;

#[derive(Debug, Clone, Copy)]
pub enum Unwind {
    /// A Ruby exception (the exception object).
    Raise(Value),
    /// `break` from a block: the frame with serial `target` gets `value` as the result of
    /// the call the block was given to.
    Break { target: u64, value: Value },
    /// `return` from a block or proc: the frame with serial `target` returns `value`.
    Return { target: u64, value: Value },
    /// `throw tag, value`.
    Throw { tag: Value, value: Value },
    /// `exit!`: leave immediately with a status, running no handlers.
    Exit(i32),
    /// A shallow `Fiber.yield`: the fiber's dispatch loop returns without unwinding its
    /// frames (see `fiber`). Never seen by Ruby code.
    Suspend,
}

pub type Result<T> = std::result::Result<T, Unwind>;

impl Unwind {
    pub fn exception(&self) -> Option<Value> {
        match self {
            Unwind::Raise(e) => Some(*e),
            _ => None,
        }
    }
}

/// Ends the process when the heap cannot grow (there is no memory to build an exception).
pub fn fatal_out_of_memory() -> ! {
    crate::core::io::write_stderr_fd(b"[FATAL] failed to allocate memory\n");
    std::process::exit(1)
}

impl Ctx {
    /// A new exception of `class` with message `msg`, with the current backtrace.
    pub fn new_error(&mut self, class: Value, msg: &str) -> Value {
        let m = crate::core::string::new_utf8(self, msg);
        self.new_error_value(class, m)
    }

    pub fn new_error_value(&mut self, class: Value, msg: Value) -> Value {
        let e = crate::core::exception::allocate(self, class);
        crate::core::exception::set_message(self, e, msg);
        crate::core::exception::capture_backtrace(self, e);
        e
    }

    pub fn raise(&mut self, class: Value, msg: &str) -> Unwind {
        Unwind::Raise(self.new_error(class, msg))
    }

    pub fn type_error(&mut self, msg: &str) -> Unwind {
        self.raise(self.c().type_error, msg)
    }

    pub fn arg_error(&mut self, msg: &str) -> Unwind {
        self.raise(self.c().argument_error, msg)
    }

    pub fn runtime_error(&mut self, msg: &str) -> Unwind {
        self.raise(self.c().runtime_error, msg)
    }

    pub fn index_error(&mut self, msg: &str) -> Unwind {
        self.raise(self.c().index_error, msg)
    }

    pub fn range_error(&mut self, msg: &str) -> Unwind {
        self.raise(self.c().range_error, msg)
    }

    pub fn zero_division(&mut self) -> Unwind {
        self.raise(self.c().zero_division_error, "divided by 0")
    }

    /// `NoMemoryError: failed to allocate memory`, for a buffer whose size Ruby code chose.
    pub fn no_memory_error(&mut self) -> Unwind {
        self.raise(self.c().no_memory_error, "failed to allocate memory")
    }

    /// `Vec::reserve` for sizes that come from Ruby code: an allocation that fails raises
    /// `NoMemoryError` (as CRuby does) instead of aborting the process.
    pub fn try_reserve<T>(&mut self, v: &mut Vec<T>, additional: usize) -> Result<()> {
        v.try_reserve(additional).map_err(|_| self.no_memory_error())
    }

    /// `vec![fill; n]` for a length that comes from Ruby code (NoMemoryError when it
    /// cannot be allocated).
    pub fn try_vec_filled<T: Clone>(&mut self, n: usize, fill: T) -> Result<Vec<T>> {
        let mut v = Vec::new();
        self.try_reserve(&mut v, n)?;
        v.resize(n, fill);
        Ok(v)
    }

    pub fn float_domain_error(&mut self, msg: &str) -> Unwind {
        self.raise(self.c().float_domain_error, msg)
    }

    pub fn local_jump_error(&mut self, msg: &str, reason: SymId, exit_value: Value) -> Unwind {
        let e = self.new_error(self.c().local_jump_error, msg);
        let reason_sym = self.intern("@reason");
        let exit_sym = self.intern("@exit_value");
        crate::core::object::ivar_set_raw(self, e, reason_sym, Value::symbol(reason));
        crate::core::object::ivar_set_raw(self, e, exit_sym, exit_value);
        Unwind::Raise(e)
    }

    pub fn not_implemented(&mut self, what: &str) -> Unwind {
        let msg = format!("{what} is not implemented yet in Carmine");
        self.raise(self.c().not_implemented_error, &msg)
    }

    /// `wrong number of arguments (given 1, expected 2)` and its range forms.
    pub fn arity_error(&mut self, given: usize, min: usize, max: Option<usize>) -> Unwind {
        self.arg_error(&format!("wrong number of arguments ({})", arity_counts(given, min, max)))
    }

    pub fn check_arity(&mut self, given: usize, min: usize, max: usize) -> Result<()> {
        if given < min || given > max {
            return Err(self.arity_error(given, min, Some(max)));
        }
        Ok(())
    }

    /// `NameError` with its `name` and `receiver`.
    pub fn name_error(&mut self, msg: &str, name: SymId, receiver: Value) -> Unwind {
        let e = self.new_error(self.c().name_error, msg);
        crate::core::object::ivar_set_raw(self, e, sym::NAME, Value::symbol(name));
        crate::core::object::ivar_set_raw(self, e, sym::RECEIVER, receiver);
        Unwind::Raise(e)
    }

    /// `FrozenError: can't modify frozen String: "abc"`.
    pub fn frozen_error(&mut self, obj: Value) -> Unwind {
        // A class or module is named by its singleton class, as CRuby's CLASS_OF does.
        let cls = if crate::core::module::is_class_or_module(obj) { crate::object::basic(obj).klass } else { crate::core::object::real_class_of(self, obj) };
        let cname = crate::core::module_methods::class_path(self, cls);
        let shown = match crate::core::object::inspect(self, obj) {
            Ok(s) => crate::core::string::to_rust_string_lossy(s),
            Err(e) => return e,
        };
        let e = self.new_error(self.c().frozen_error, &format!("can't modify frozen {cname}: {shown}"));
        crate::core::object::ivar_set_raw(self, e, sym::RECEIVER, obj);
        Unwind::Raise(e)
    }

    /// Raises `FrozenError` if `obj` is frozen.
    #[inline]
    pub fn check_frozen(&mut self, obj: Value) -> Result<()> {
        if crate::core::object::is_frozen(obj) {
            return Err(self.frozen_error(obj));
        }
        if crate::object::basic(obj).flags & crate::object::FL_CHILLED != 0 {
            return crate::core::string::chilled_mutation(self, obj);
        }
        Ok(())
    }

    pub fn key_error(&mut self, msg: &str, receiver: Value, key: Value) -> Unwind {
        let e = self.new_error(self.c().key_error, msg);
        crate::core::object::ivar_set_raw(self, e, sym::RECEIVER, receiver);
        crate::core::object::ivar_set_raw(self, e, sym::KEY, key);
        Unwind::Raise(e)
    }

    /// `TypeError: no implicit conversion of X into Y`.
    pub fn conversion_error(&mut self, v: Value, into: &str) -> Unwind {
        let what = crate::core::object::type_name_for_error(self, v);
        self.type_error(&format!("no implicit conversion of {what} into {into}"))
    }
}

/// `given 1, expected 2..3`: the inside of an arity error's parentheses.
pub fn arity_counts(given: usize, min: usize, max: Option<usize>) -> String {
    let expected = match max {
        Some(max) if max == min => format!("{min}"),
        Some(max) => format!("{min}..{max}"),
        None => format!("{min}+"),
    };
    format!("given {given}, expected {expected}")
}
