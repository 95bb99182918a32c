//! Builtin classes, one file each. Every file ends with an `init` function whose table lists
//! each method it defines with its arity and thread-safety flag (see `methods!`).

pub mod array;
pub mod array_items;
pub mod array_methods;
pub mod array_order;
pub mod arith_seq;
pub mod bigconv;
pub mod bigmul;
pub mod bignum;
pub mod binding;
pub mod comparable;
pub mod dtoa;
pub mod complex;
pub mod convert;
pub mod data;
pub mod encoding;
pub mod enumerable;
pub mod enum_chain;
pub mod enum_product;
pub mod enumerator;
pub mod env;
pub mod exception;
pub mod exception_report;
pub mod float;
pub mod format;
pub mod gc;
pub mod globals;
pub mod hash;
pub mod hash_methods;
pub mod integer;
pub mod fs;
pub mod dir;
pub mod file;
pub mod io;
pub mod kernel;
pub mod lazy;
pub mod load;
pub mod marshal;
pub mod math;
pub mod method;
pub mod module;
pub mod module_methods;
pub mod nil_true_false;
pub mod numeric;
pub mod numeric_parse;
pub mod object;
pub mod objspace;
pub mod pack;
pub mod proc;
pub mod process;
pub mod random;
pub mod random_formatter;
pub mod range;
pub mod range_iter;
pub mod refinement;
pub mod tracepoint;
pub mod rational;
pub mod matchdata;
pub mod regexp;
pub mod regexp_syntax;
pub mod string_pattern;
pub mod set;
pub mod signal;
pub mod string;
pub mod string_buf;
pub mod string_case;
pub mod string_conv;
pub mod string_encode;
pub mod string_iter;
pub mod string_methods;
pub mod string_tr;
pub mod struct_;
pub mod symbol;
pub mod warning;
pub mod weak_key_map;
pub mod weak_map;
pub mod unicode;
pub mod unpack;
pub mod time;
pub mod time_format;
pub mod fiber;
pub mod sync;
pub mod thread;

use crate::core::module::{define_builtin, Arity, BuiltinFn, ThreadSafety, Visibility};
use crate::thread::Ctx;
use crate::value::Value;

/// Options of one builtin method definition.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum DefFlag {
    /// The method receives keywords separately (`Args::kw`).
    Kw,
    /// Defined private.
    Private,
    /// Defined on the singleton class (a class method).
    Singleton,
    /// Kernel-style: private instance method plus public singleton method.
    ModuleFunction,
}

/// Defines one builtin; used by the `methods!` tables.
pub fn define(ctx: &mut Ctx, klass: Value, name: &str, f: BuiltinFn, arity: Arity, safety: ThreadSafety, flags: &[DefFlag]) {
    let kw = flags.contains(&DefFlag::Kw);
    let vis = if flags.contains(&DefFlag::Private) || flags.contains(&DefFlag::ModuleFunction) { Visibility::Private } else { Visibility::Public };
    if flags.contains(&DefFlag::Singleton) {
        let single = object::singleton_class(ctx, klass).expect("singleton class of a builtin class");
        define_builtin(ctx, single, name, f, arity, safety, Visibility::Public, kw);
        return;
    }
    define_builtin(ctx, klass, name, f, arity, safety, vis, kw);
    if flags.contains(&DefFlag::ModuleFunction) {
        let single = object::singleton_class(ctx, klass).expect("singleton class of a builtin module");
        define_builtin(ctx, single, name, f, arity, safety, Visibility::Public, kw);
    }
}

/// Makes `new` an alias of the builtin `old` already defined in `klass` (CRuby's
/// `rb_define_alias`): the entry keeps `old`'s original name, so
/// `instance_method(new) == instance_method(old)` as in CRuby.
pub fn define_alias(ctx: &mut Ctx, klass: Value, new: &str, old: &str) {
    let old_id = ctx.intern(old);
    let new_id = ctx.intern(new);
    let Some(me) = module::body(klass).methods.get(&old_id).cloned() else {
        panic!("define_alias: {old} is not defined");
    };
    module::add_method(
        ctx,
        klass,
        module::MethodEntry { name: new_id, original_name: me.original_name, owner: me.owner, visibility: me.visibility, body: me.body.clone() },
    );
}

/// `arity!(0)`, `arity!(1..=2)`, `arity!(0..)`.
#[macro_export]
macro_rules! arity {
    ($n:literal) => {
        $crate::core::module::Arity::exact($n)
    };
    ($min:literal ..= $max:literal) => {
        $crate::core::module::Arity::range($min, $max)
    };
    ($min:literal ..) => {
        $crate::core::module::Arity::rest($min)
    };
}

/// A builtin class's method table:
///
/// ```text
/// methods!(ctx, klass, [
///     ("length", length, [0], Safe),
///     ("push", push, [0..], Unsafe),
///     ("new", new, [0..], Unsafe, Singleton, Kw),
/// ]);
/// ```
///
/// `Safe` methods run without the giant lock; `Unsafe` ones hold it.
#[macro_export]
macro_rules! methods {
    ($ctx:expr, $klass:expr, [ $( ($name:literal, $f:path, [$($ar:tt)*], $safety:ident $(, $flag:ident)* ) ),* $(,)? ]) => {{
        let klass = $klass;
        $(
            $crate::core::define(
                $ctx,
                klass,
                $name,
                $f,
                $crate::arity!($($ar)*),
                $crate::core::module::ThreadSafety::$safety,
                &[$($crate::core::DefFlag::$flag),*],
            );
        )*
    }};
}

/// Runs every builtin file's `init`, in dependency order.
pub fn init_all(ctx: &mut Ctx) {
    object::init(ctx);
    kernel::init(ctx);
    convert::init(ctx);
    module_methods::init(ctx);
    refinement::init(ctx);
    tracepoint::init(ctx);
    comparable::init(ctx);
    enumerable::init(ctx);
    nil_true_false::init(ctx);
    numeric::init(ctx);
    integer::init(ctx);
    bignum::init(ctx);
    float::init(ctx);
    rational::init(ctx);
    complex::init(ctx);
    math::init(ctx);
    string::init(ctx);
    encoding::init(ctx);
    symbol::init(ctx);
    array::init(ctx);
    hash::init(ctx);
    range::init(ctx);
    range_iter::init(ctx);
    proc::init(ctx);
    binding::init(ctx);
    method::init(ctx);
    exception::init(ctx);
    exception_report::init(ctx);
    regexp::init(ctx);
    matchdata::init(ctx);
    string_pattern::init(ctx);
    enumerator::init(ctx);
    enum_chain::init(ctx);
    enum_product::init(ctx);
    lazy::init(ctx);
    arith_seq::init(ctx);
    struct_::init(ctx);
    time::init(ctx);
    random::init(ctx);
    random_formatter::init(ctx);
    io::init(ctx);
    io::class_methods::init(ctx);
    io::chars::init(ctx);
    io::sys::init(ctx);
    io::select::init(ctx);
    io::copy_stream::init(ctx);
    io::wait::init(ctx);
    io::buffer::init(ctx);
    io::argf::init(ctx);
    io::pipe::init(ctx);
    file::init(ctx);
    dir::init(ctx);
    fs::init(ctx);
    gc::init(ctx);
    objspace::init(ctx);
    weak_map::init(ctx);
    weak_key_map::init(ctx);
    process::init(ctx);
    set::init(ctx);
    globals::init(ctx);
    warning::init(ctx);
    load::init(ctx);
    fiber::init(ctx);
    thread::init(ctx);
    sync::init(ctx);
    marshal::init(ctx);
}

/// Shorthand used by builtins: the Ruby `nil`.
pub const NIL: Value = Value::NIL;

/// `ThreadSafety` and `Arity` re-exported for builtin files.
pub use module::{Arity as A, ThreadSafety as TS};
