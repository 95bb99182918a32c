//! Creating a VM: the core class graph (BasicObject/Object/Module/Class and their
//! metaclasses first), every builtin file's methods, the main object and the constants a
//! Ruby program expects at start-up.

use crate::core::module::{self, body, AllocKind, ClassBody, ClassKind, Visibility};
use crate::core::module_methods::{define_class_under, define_module_under};
use crate::core::{array, hash, object, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

pub const RUBY_VERSION: &str = "3.4.1";
pub const CARMINE_VERSION: &str = env!("CARGO_PKG_VERSION");

pub fn description() -> String {
    format!("carmine {CARMINE_VERSION} (Ruby {RUBY_VERSION} compatible) +PRISM [{}-linux]", std::env::consts::ARCH)
}

fn named(ctx: &mut Ctx, k: Value, name: &str) {
    let s = string::new_utf8(ctx, name);
    body(k).name = Some(object::freeze(s));
}

fn main_to_s(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    Ok(string::new_utf8(ctx, "main"))
}

fn main_include(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = ctx.c().object;
    let inc = ctx.intern("include");
    ctx.call(obj, inc, args.pos)
}

fn main_visibility(ctx: &mut Ctx, name: &str, args: &Args) -> Result<Value> {
    let obj = ctx.c().object;
    if args.pos.is_empty() {
        let vis = match name {
            "public" => Visibility::Public,
            _ => Visibility::Private,
        };
        if let Some(fi) = crate::interp::ops::caller_ruby_frame(ctx) {
            ctx.stacks.frames[fi].visibility = vis;
        }
        return Ok(Value::NIL);
    }
    let mid = ctx.intern(name);
    ctx.call(obj, mid, args.pos)
}

fn main_public(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    main_visibility(ctx, "public", args)
}

fn main_private(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    main_visibility(ctx, "private", args)
}

/// `define_method` at the top level defines a public method of Object (unlike `def`).
fn main_define_method(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = ctx.c().object;
    crate::core::module_methods::define_method_impl(ctx, obj, args)
}

/// `main.ruby2_keywords(*names)`: Object's.
fn main_ruby2_keywords(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = ctx.c().object;
    let mid = ctx.intern("ruby2_keywords");
    ctx.call(obj, mid, args.pos)
}

/// The core classes are named before String exists, so their name strings
/// were allocated without a class; give them String now (recursively through
/// the constants of Object).
fn fix_early_names(ctx: &mut Ctx, module: Value, string: Value) {
    if let Some(n) = body(module).name {
        if crate::object::basic(n).klass != string {
            crate::object::basic(n).klass = string;
        }
    }
    let consts: Vec<Value> = body(module).consts.iter().map(|(_, e)| e.value).collect();
    for v in consts {
        if crate::core::module::is_class_or_module(v) && v != module && body(v).name.is_some_and(|n| crate::object::basic(n).klass != string) {
            fix_early_names(ctx, v, string);
        }
    }
}

/// Builds the core classes into a fresh VM. Runs once, on the VM's first thread.
pub fn boot(ctx: &mut Ctx) {
    // The four classes that refer to each other.
    let bo = object::new_class_object(ctx, Value::NIL, ClassBody::new(ClassKind::Class, Value::NIL, AllocKind::Object));
    let obj = object::new_class_object(ctx, Value::NIL, ClassBody::new(ClassKind::Class, bo, AllocKind::Object));
    let md = object::new_class_object(ctx, Value::NIL, ClassBody::new(ClassKind::Class, obj, AllocKind::Module));
    let cls = object::new_class_object(ctx, Value::NIL, ClassBody::new(ClassKind::Class, md, AllocKind::Class));
    for (k, n) in [(bo, "BasicObject"), (obj, "Object"), (md, "Module"), (cls, "Class")] {
        crate::object::basic(k).klass = cls;
        named(ctx, k, n);
    }
    body(bo).subclasses.push(obj);
    body(obj).subclasses.push(md);
    body(md).subclasses.push(cls);
    {
        let c = &mut ctx.vm_mut().c;
        c.basic_object = bo;
        c.object = obj;
        c.module = md;
        c.class = cls;
    }
    for k in [bo, obj, md, cls] {
        object::singleton_class(ctx, k).expect("metaclass");
    }
    for (k, n) in [(bo, "BasicObject"), (obj, "Object"), (md, "Module"), (cls, "Class")] {
        let id = ctx.intern(n);
        body(obj).const_set(id, k);
    }

    let kernel = define_module_under(ctx, obj, "Kernel");
    body(obj).includes.push(kernel);
    let comparable = define_module_under(ctx, obj, "Comparable");
    let enumerable = define_module_under(ctx, obj, "Enumerable");

    let class = |ctx: &mut Ctx, name: &str, sup: Value, alloc: Option<AllocKind>| -> Value {
        let k = define_class_under(ctx, obj, name, sup);
        if let Some(a) = alloc {
            body(k).alloc = a;
        }
        k
    };
    let nil = class(ctx, "NilClass", obj, Some(AllocKind::None));
    let true_ = class(ctx, "TrueClass", obj, Some(AllocKind::None));
    let false_ = class(ctx, "FalseClass", obj, Some(AllocKind::None));
    let numeric = class(ctx, "Numeric", obj, None);
    body(numeric).includes.push(comparable);
    let integer = class(ctx, "Integer", numeric, Some(AllocKind::None));
    let float = class(ctx, "Float", numeric, Some(AllocKind::None));
    let rational = class(ctx, "Rational", numeric, Some(AllocKind::None));
    let complex = class(ctx, "Complex", numeric, Some(AllocKind::None));
    let string = class(ctx, "String", obj, Some(AllocKind::String));
    body(string).includes.push(comparable);
    let symbol = class(ctx, "Symbol", obj, Some(AllocKind::None));
    body(symbol).includes.push(comparable);
    let array = class(ctx, "Array", obj, Some(AllocKind::Array));
    body(array).includes.push(enumerable);
    let hash = class(ctx, "Hash", obj, Some(AllocKind::Hash));
    body(hash).includes.push(enumerable);
    let range = class(ctx, "Range", obj, Some(AllocKind::Range));
    body(range).includes.push(enumerable);
    let proc_ = class(ctx, "Proc", obj, Some(AllocKind::None));
    let method = class(ctx, "Method", obj, Some(AllocKind::None));
    let unbound_method = class(ctx, "UnboundMethod", obj, Some(AllocKind::None));
    let binding = class(ctx, "Binding", obj, Some(AllocKind::None));
    let regexp = class(ctx, "Regexp", obj, Some(AllocKind::None));
    let match_data = class(ctx, "MatchData", obj, Some(AllocKind::None));
    let struct_ = class(ctx, "Struct", obj, None);
    body(struct_).includes.push(enumerable);
    let time = class(ctx, "Time", obj, None);
    body(time).includes.push(comparable);
    let random = class(ctx, "Random", obj, Some(AllocKind::None));
    let io = class(ctx, "IO", obj, Some(AllocKind::None));
    body(io).includes.push(enumerable);
    let file = class(ctx, "File", io, None);
    let dir = class(ctx, "Dir", obj, Some(AllocKind::None));
    let encoding = class(ctx, "Encoding", obj, Some(AllocKind::None));
    let enumerator = class(ctx, "Enumerator", obj, Some(AllocKind::None));
    body(enumerator).includes.push(enumerable);
    let lazy = define_class_under(ctx, enumerator, "Lazy", enumerator);
    let yielder = define_class_under(ctx, enumerator, "Yielder", obj);
    let generator = define_class_under(ctx, enumerator, "Generator", obj);
    let arith_seq = define_class_under(ctx, enumerator, "ArithmeticSequence", enumerator);
    let chain = define_class_under(ctx, enumerator, "Chain", enumerator);
    let set = class(ctx, "Set", obj, None);
    body(set).includes.push(enumerable);
    let fiber = class(ctx, "Fiber", obj, Some(AllocKind::None));
    let thread = class(ctx, "Thread", obj, Some(AllocKind::None));
    let mutex = define_class_under(ctx, thread, "Mutex", obj);
    let queue = define_class_under(ctx, thread, "Queue", obj);
    let sized_queue = define_class_under(ctx, thread, "SizedQueue", queue);
    let condition_variable = define_class_under(ctx, thread, "ConditionVariable", obj);
    let data = class(ctx, "Data", obj, Some(AllocKind::None));
    let math = define_module_under(ctx, obj, "Math");
    let gc = define_module_under(ctx, obj, "GC");
    let object_space = define_module_under(ctx, obj, "ObjectSpace");
    let process = define_module_under(ctx, obj, "Process");
    let signal = define_module_under(ctx, obj, "Signal");
    let marshal = define_module_under(ctx, obj, "Marshal");
    let errno = define_module_under(ctx, obj, "Errno");
    let file_test = define_module_under(ctx, obj, "FileTest");
    let weakmap = define_class_under(ctx, object_space, "WeakMap", obj);
    let stat = define_class_under(ctx, file, "Stat", obj);

    // Exceptions.
    let exception = class(ctx, "Exception", obj, None);
    let ex = |ctx: &mut Ctx, name: &str, sup: Value| define_class_under(ctx, obj, name, sup);
    let no_memory_error = ex(ctx, "NoMemoryError", exception);
    let script_error = ex(ctx, "ScriptError", exception);
    let load_error = ex(ctx, "LoadError", script_error);
    let not_implemented_error = ex(ctx, "NotImplementedError", script_error);
    let syntax_error = ex(ctx, "SyntaxError", script_error);
    let security_error = ex(ctx, "SecurityError", exception);
    let signal_exception = ex(ctx, "SignalException", exception);
    let interrupt = ex(ctx, "Interrupt", signal_exception);
    // CRuby's `fatal`: a class with that name and no constant.
    let fatal = ex(ctx, "fatal", exception);
    body(obj).const_remove(ctx.intern("fatal"));
    let standard_error = ex(ctx, "StandardError", exception);
    let argument_error = ex(ctx, "ArgumentError", standard_error);
    let uncaught_throw_error = ex(ctx, "UncaughtThrowError", argument_error);
    let encoding_error = ex(ctx, "EncodingError", standard_error);
    let compatibility_error = define_class_under(ctx, encoding, "CompatibilityError", encoding_error);
    let invalid_byte_sequence_error = define_class_under(ctx, encoding, "InvalidByteSequenceError", encoding_error);
    let undefined_conversion_error = define_class_under(ctx, encoding, "UndefinedConversionError", encoding_error);
    let converter_not_found_error = define_class_under(ctx, encoding, "ConverterNotFoundError", encoding_error);
    let fiber_error = ex(ctx, "FiberError", standard_error);
    let io_error = ex(ctx, "IOError", standard_error);
    let eof_error = ex(ctx, "EOFError", io_error);
    let index_error = ex(ctx, "IndexError", standard_error);
    let key_error = ex(ctx, "KeyError", index_error);
    let stop_iteration = ex(ctx, "StopIteration", index_error);
    let closed_queue_error = ex(ctx, "ClosedQueueError", stop_iteration);
    let local_jump_error = ex(ctx, "LocalJumpError", standard_error);
    let name_error = ex(ctx, "NameError", standard_error);
    let no_method_error = ex(ctx, "NoMethodError", name_error);
    let range_error = ex(ctx, "RangeError", standard_error);
    let float_domain_error = ex(ctx, "FloatDomainError", range_error);
    let regexp_error = ex(ctx, "RegexpError", standard_error);
    let runtime_error = ex(ctx, "RuntimeError", standard_error);
    let frozen_error = ex(ctx, "FrozenError", runtime_error);
    let system_call_error = ex(ctx, "SystemCallError", standard_error);
    let thread_error = ex(ctx, "ThreadError", standard_error);
    let type_error = ex(ctx, "TypeError", standard_error);
    let zero_division_error = ex(ctx, "ZeroDivisionError", standard_error);
    let system_exit = ex(ctx, "SystemExit", exception);
    let system_stack_error = ex(ctx, "SystemStackError", exception);
    let no_matching_pattern_error = ex(ctx, "NoMatchingPatternError", standard_error);
    let no_matching_pattern_key_error = ex(ctx, "NoMatchingPatternKeyError", no_matching_pattern_error);
    let math_domain_error = define_class_under(ctx, math, "DomainError", standard_error);

    {
        let c = &mut ctx.vm_mut().c;
        c.kernel = kernel;
        c.comparable = comparable;
        c.enumerable = enumerable;
        c.nil = nil;
        c.true_ = true_;
        c.false_ = false_;
        c.numeric = numeric;
        c.integer = integer;
        c.float = float;
        c.rational = rational;
        c.complex = complex;
        c.string = string;
        c.symbol = symbol;
        c.array = array;
        c.hash = hash;
        c.range = range;
        c.proc_ = proc_;
        c.method = method;
        c.unbound_method = unbound_method;
        c.binding = binding;
        c.regexp = regexp;
        c.match_data = match_data;
        c.struct_ = struct_;
        c.time = time;
        c.random = random;
        c.io = io;
        c.file = file;
        c.dir = dir;
        c.encoding = encoding;
        c.enumerator = enumerator;
        c.lazy = lazy;
        c.yielder = yielder;
        c.generator = generator;
        c.arith_seq = arith_seq;
        c.chain = chain;
        c.math = math;
        c.gc = gc;
        c.object_space = object_space;
        c.process = process;
        c.signal = signal;
        c.marshal = marshal;
        c.set = set;
        c.fiber = fiber;
        c.thread = thread;
        c.mutex = mutex;
        c.queue = queue;
        c.sized_queue = sized_queue;
        c.condition_variable = condition_variable;
        c.fatal = fatal;
        c.data = data;
        c.errno = errno;
        c.file_test = file_test;
        c.weakmap = weakmap;
        c.stat = stat;
        c.exception = exception;
        c.no_memory_error = no_memory_error;
        c.script_error = script_error;
        c.load_error = load_error;
        c.not_implemented_error = not_implemented_error;
        c.syntax_error = syntax_error;
        c.security_error = security_error;
        c.signal_exception = signal_exception;
        c.interrupt = interrupt;
        c.standard_error = standard_error;
        c.argument_error = argument_error;
        c.uncaught_throw_error = uncaught_throw_error;
        c.encoding_error = encoding_error;
        c.compatibility_error = compatibility_error;
        c.invalid_byte_sequence_error = invalid_byte_sequence_error;
        c.undefined_conversion_error = undefined_conversion_error;
        c.converter_not_found_error = converter_not_found_error;
        c.fiber_error = fiber_error;
        c.io_error = io_error;
        c.eof_error = eof_error;
        c.index_error = index_error;
        c.key_error = key_error;
        c.stop_iteration = stop_iteration;
        c.closed_queue_error = closed_queue_error;
        c.local_jump_error = local_jump_error;
        c.name_error = name_error;
        c.no_method_error = no_method_error;
        c.range_error = range_error;
        c.float_domain_error = float_domain_error;
        c.regexp_error = regexp_error;
        c.runtime_error = runtime_error;
        c.frozen_error = frozen_error;
        c.system_call_error = system_call_error;
        c.thread_error = thread_error;
        c.type_error = type_error;
        c.zero_division_error = zero_division_error;
        c.system_exit = system_exit;
        c.system_stack_error = system_stack_error;
        c.no_matching_pattern_error = no_matching_pattern_error;
        c.no_matching_pattern_key_error = no_matching_pattern_key_error;
        c.math_domain_error = math_domain_error;
    }
    fix_early_names(ctx, obj, string);
    ctx.vm().bump_method_epoch();

    let main = object::new_object(ctx, obj);
    ctx.vm().main_obj.set(main);
    let top_cref = crate::interp::exec::new_cref(ctx, obj, Value::NIL, false);
    ctx.vm().top_cref.set(top_cref);

    crate::core::init_all(ctx);

    crate::methods!(ctx, main, [
        ("to_s", main_to_s, [0], Safe, Singleton),
        ("inspect", main_to_s, [0], Safe, Singleton),
        ("include", main_include, [0..], Unsafe, Singleton),
        ("public", main_public, [0..], Unsafe, Singleton),
        ("private", main_private, [0..], Unsafe, Singleton),
        ("define_method", main_define_method, [0..], Unsafe, Singleton),
        ("using", crate::core::refinement::main_using, [1], Unsafe, Singleton),
        ("ruby2_keywords", main_ruby2_keywords, [0..], Unsafe, Singleton),
    ]);
    if let Ok(s) = object::singleton_class(ctx, main) {
        for n in ["include", "public", "private", "define_method", "using", "ruby2_keywords"] {
            let id = ctx.intern(n);
            if let Some(me) = body(s).methods.get(&id).cloned() {
                let mut e = crate::core::module::MethodEntry { name: me.name, original_name: me.original_name, owner: me.owner, visibility: Visibility::Private, body: me.body.clone() };
                e.visibility = Visibility::Private;
                body(s).methods_mut().insert(id, std::sync::Arc::new(e));
            }
        }
    }

    define_constants(ctx);
    let tb = crate::core::binding::new_toplevel(ctx);
    ctx.vm().add_root(tb);
    ctx.vm().toplevel_binding.set(tb);
    let id = ctx.intern("TOPLEVEL_BINDING");
    body(obj).const_set(id, tb);
    ctx.vm().bump_method_epoch();
    ctx.vm().booted.set(true);
    let _ = module::ancestors;
}

fn define_constants(ctx: &mut Ctx) {
    let obj = ctx.c().object;
    let set = |ctx: &mut Ctx, name: &str, v: Value| {
        let id = ctx.intern(name);
        body(obj).const_set(id, v);
    };
    let frozen = |ctx: &mut Ctx, s: &str| {
        let v = string::new_utf8(ctx, s);
        object::freeze(v)
    };
    let v = frozen(ctx, RUBY_VERSION);
    set(ctx, "RUBY_VERSION", v);
    let v = frozen(ctx, &format!("{}-linux", std::env::consts::ARCH));
    set(ctx, "RUBY_PLATFORM", v);
    let v = frozen(ctx, "carmine");
    set(ctx, "RUBY_ENGINE", v);
    let v = frozen(ctx, CARMINE_VERSION);
    set(ctx, "RUBY_ENGINE_VERSION", v);
    // The revision of this build: Carmine's own version (there is no CRuby commit).
    let v = frozen(ctx, CARMINE_VERSION);
    set(ctx, "RUBY_REVISION", v);
    let v = frozen(ctx, "2024-12-25");
    set(ctx, "RUBY_RELEASE_DATE", v);
    set(ctx, "RUBY_PATCHLEVEL", Value::fixnum(0));
    let v = frozen(ctx, "carmine - Copyright (C) the Carmine authors");
    set(ctx, "RUBY_COPYRIGHT", v);
    let v = frozen(ctx, &description());
    set(ctx, "RUBY_DESCRIPTION", v);
    let argv = array::new(ctx);
    set(ctx, "ARGV", argv);
    // CRuby's top-level aliases of the thread primitives (`Mutex == Thread::Mutex`).
    let (mutex, queue) = (ctx.c().mutex, ctx.c().queue);
    set(ctx, "Mutex", mutex);
    set(ctx, "Queue", queue);
    let (sized_queue, condition_variable) = (ctx.c().sized_queue, ctx.c().condition_variable);
    set(ctx, "SizedQueue", sized_queue);
    set(ctx, "ConditionVariable", condition_variable);
    crate::core::globals::define(ctx, crate::symbol::sym::DOLLAR_STAR, argv);
    let env = hash::new(ctx);
    for (k, v) in std::env::vars_os() {
        let ks = string::new_from_bytes(ctx, k.as_encoded_bytes());
        let vs = string::new_from_bytes(ctx, v.as_encoded_bytes());
        let _ = hash::aset(ctx, env, ks, vs);
    }
    set(ctx, "ENV", env);
    let _ = crate::core::env::init(ctx, env);
}
