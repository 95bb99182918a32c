//! `require`, `require_relative`, `load` and `autoload`.
//!
//! Invariants: a feature is identified by its absolute path; `Vm::loaded` and
//! `$LOADED_FEATURES` list each loaded file once. Features built into the VM (`set`,
//! `enumerator` …) are satisfied without a file.

use crate::core::{array, module, object, string};
use crate::error::Unwind;
use crate::interp::Args;
use crate::symbol::{sym, SymId};
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

/// Features provided by the VM itself.
const BUILTIN_FEATURES: &[&str] = &["set", "enumerator", "rational", "complex", "thread", "fiber", "ruby2_keywords", "continuation", "io/wait", "io/nonblock"];

/// The directory of the Ruby files shipped with Carmine.
pub fn stdlib_dir() -> String {
    let dir = std::env::var("CARMINE_LIB").unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../lib").to_string());
    crate::core::file::expand_path(&dir, None)
}

/// The pure-Ruby standard library of an installed CRuby, searched after Carmine's own
/// `lib/`: `$CARMINE_RUBY_STDLIB` when set (empty turns the search off), otherwise the
/// newest `/usr/lib/ruby/X.Y.Z` that holds the library (Debian's `libruby3.x`). CRuby's
/// architecture directory (its `*.so` C extensions) is never used. Found once per
/// process: the answer depends only on the environment and the file system at start.
pub fn ruby_stdlib_dir() -> Option<&'static str> {
    static DIR: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    DIR.get_or_init(find_ruby_stdlib).as_deref()
}

fn find_ruby_stdlib() -> Option<String> {
    if let Ok(d) = std::env::var("CARMINE_RUBY_STDLIB") {
        return (!d.is_empty()).then(|| crate::core::file::expand_path(&d, None));
    }
    let parse = |name: &str| -> Option<Vec<u32>> {
        let v: Option<Vec<u32>> = name.split('.').map(|p| p.parse().ok()).collect();
        v.filter(|v| v.len() == 3)
    };
    let mut best: Option<(Vec<u32>, String)> = None;
    for e in std::fs::read_dir("/usr/lib/ruby").ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(v) = parse(&name) else { continue };
        let dir = format!("/usr/lib/ruby/{name}");
        if std::path::Path::new(&format!("{dir}/optparse.rb")).is_file() && best.as_ref().is_none_or(|(b, _)| v > *b) {
            best = Some((v, dir));
        }
    }
    best.map(|(_, d)| d)
}

/// Whether `name` is one of CRuby's C extensions (a `.so` feature): Carmine cannot load
/// them, and says so in the LoadError.
fn is_c_extension(name: &str) -> bool {
    if name.ends_with(".so") || name.ends_with(".o") {
        return true;
    }
    let Some(std) = ruby_stdlib_dir() else { return false };
    let Some(ver) = std.rsplit('/').next() else { return false };
    let arch = std::env::consts::ARCH;
    [format!("/usr/lib/{arch}-linux-gnu/ruby/{ver}/{name}.so"), format!("{std}/{arch}-linux/{name}.so")].iter().any(|p| std::path::Path::new(p).is_file())
}

fn load_error(ctx: &mut Ctx, name: &str) -> Unwind {
    let msg = if is_c_extension(name) {
        format!("cannot load such file -- {name} (a C extension of CRuby, not available in Carmine)")
    } else {
        format!("cannot load such file -- {name}")
    };
    let e = ctx.new_error(ctx.c().load_error, &msg);
    let id = ctx.intern("@path");
    let p = string::new_utf8(ctx, name);
    object::ivar_set_raw(ctx, e, id, p);
    Unwind::Raise(e)
}

fn candidates(name: &str) -> Vec<String> {
    if name.ends_with(".rb") {
        vec![name.to_string()]
    } else if name.ends_with(".so") || name.ends_with(".o") {
        vec![]
    } else {
        vec![format!("{name}.rb"), name.to_string()]
    }
}

/// Finds the file a `require name` loads.
pub fn resolve(ctx: &mut Ctx, name: &str) -> Result<Option<String>> {
    let is_path = name.starts_with('/') || name.starts_with("./") || name.starts_with("../") || name.starts_with('~');
    if is_path {
        for c in candidates(name) {
            let abs = crate::core::file::expand_path(&c, None);
            if std::path::Path::new(&abs).is_file() {
                return Ok(Some(abs));
            }
        }
        return Ok(None);
    }
    let lp = crate::core::globals::get(ctx, sym::DOLLAR_LOAD_PATH)?;
    let mut dirs: Vec<String> = Vec::new();
    if array::is_array(lp) {
        for d in array::to_vec(lp) {
            let d = if string::is_string(d) { string::to_rust_string_lossy(d) } else { string::to_rust_string_lossy(string::to_s(ctx, d)?) };
            dirs.push(d);
        }
    }
    dirs.push(stdlib_dir());
    dirs.extend(ruby_stdlib_dir().map(str::to_string));
    for d in dirs {
        for c in candidates(name) {
            let abs = crate::core::file::expand_path(&format!("{d}/{c}"), None);
            if std::path::Path::new(&abs).is_file() {
                return Ok(Some(abs));
            }
        }
    }
    Ok(None)
}

/// Loads and runs a file (no "already loaded" check).
pub fn load_file(ctx: &mut Ctx, abs: &str) -> Result<()> {
    let src = match std::fs::read(abs) {
        Ok(s) => s,
        Err(_) => return Err(load_error(ctx, abs)),
    };
    crate::core::kernel::run_program(ctx, &src, abs, false)?;
    Ok(())
}

/// `require name`: true if loaded now, false if already loaded.
pub fn require(ctx: &mut Ctx, name: &str) -> Result<bool> {
    let base = name.trim_end_matches(".rb");
    if BUILTIN_FEATURES.contains(&base) {
        let key = format!("{base}.rb");
        if ctx.vm().loaded.borrow().contains(&key) {
            return Ok(false);
        }
        ctx.vm().loaded.borrow_mut().insert(key.clone());
        push_feature(ctx, &key)?;
        return Ok(true);
    }
    if let Some((init, key)) = crate::stdlib::find_native(base) {
        if ctx.vm().loaded.borrow().contains(&key) {
            return Ok(false);
        }
        ctx.vm().loaded.borrow_mut().insert(key.clone());
        if let Err(e) = init(ctx) {
            ctx.vm().loaded.borrow_mut().remove(&key);
            return Err(e);
        }
        push_feature(ctx, &key)?;
        return Ok(true);
    }
    let Some(abs) = resolve(ctx, name)? else {
        return Err(load_error(ctx, name));
    };
    wait_for_other_loader(ctx, &abs)?;
    // $LOADED_FEATURES decides: a program may remove an entry to load the
    // file again.
    if ctx.vm().loaded.borrow().contains(&abs) {
        if in_loaded_features(ctx, &abs)? {
            return Ok(false);
        }
        ctx.vm().loaded.borrow_mut().remove(&abs);
    }
    ctx.vm().loaded.borrow_mut().insert(abs.clone());
    push_feature(ctx, &abs)?;
    ctx.vm().loading.borrow_mut().insert(abs.clone(), ctx.serial);
    let r = load_file(ctx, &abs);
    ctx.vm().loading.borrow_mut().remove(&abs);
    if let Err(e) = r {
        ctx.vm().loaded.borrow_mut().remove(&abs);
        let lf = crate::core::globals::get(ctx, sym::DOLLAR_LOADED_FEATURES)?;
        if array::is_array(lf) {
            let items: Vec<Value> = array::to_vec(lf).into_iter().filter(|&v| string::to_rust_string_lossy(v) != abs).collect();
            array::rarray(lf).set_items(items);
        }
        return Err(e);
    }
    Ok(true)
}

/// Waits while another thread is loading `path` (a second `require` of a file must not
/// see it half loaded); polls, so that the loader's end needs no wake-up call.
fn wait_for_other_loader(ctx: &mut Ctx, path: &str) -> Result<()> {
    let me = ctx.serial;
    let busy = |ctx: &mut Ctx| ctx.vm().loading.borrow().get(path).is_some_and(|&t| t != me);
    while busy(ctx) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(5);
        crate::thread::sched::wait_until(ctx, Some(deadline), |ctx| Ok(!busy(ctx)))?;
    }
    Ok(())
}

fn in_loaded_features(ctx: &mut Ctx, path: &str) -> Result<bool> {
    let lf = crate::core::globals::get(ctx, sym::DOLLAR_LOADED_FEATURES)?;
    if !array::is_array(lf) {
        return Ok(false);
    }
    let n = array::len(lf);
    for i in 0..n {
        let v = array::get(lf, i);
        if string::is_string(v) && string::bytes(v) == path.as_bytes() {
            return Ok(true);
        }
    }
    Ok(false)
}

fn push_feature(ctx: &mut Ctx, path: &str) -> Result<()> {
    let lf = crate::core::globals::get(ctx, sym::DOLLAR_LOADED_FEATURES)?;
    if array::is_array(lf) {
        let s = string::new_utf8(ctx, path);
        array::push(ctx, lf, s);
    }
    Ok(())
}

fn feature_name(ctx: &mut Ctx, v: Value) -> Result<String> {
    if v.is_heap() && !string::is_string(v) && ctx.respond_to(v, sym::TO_PATH, true) {
        let p = ctx.call(v, sym::TO_PATH, &[])?;
        return string::str_arg(ctx, p);
    }
    let s = string::to_str_arg(ctx, v)?;
    Ok(string::to_rust_string_lossy(s))
}

fn k_require(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let name = feature_name(ctx, args.pos[0])?;
    Ok(Value::bool(require(ctx, &name)?))
}

fn k_require_relative(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let name = feature_name(ctx, args.pos[0])?;
    let path = match crate::core::kernel::caller_realpath(ctx) {
        Some(real) => real,
        None => crate::core::kernel::caller_location(ctx).0,
    };
    // A script given as "x.rb" has the empty parent "": it is relative to the cwd.
    let dir = std::path::Path::new(&*path).parent().map(|p| p.to_string_lossy().into_owned()).filter(|d| !d.is_empty()).unwrap_or_else(|| ".".into());
    let full = if name.starts_with('/') { name } else { format!("{dir}/{name}") };
    let abs = crate::core::file::expand_path(&full, None);
    Ok(Value::bool(require(ctx, &abs)?))
}

fn k_load(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let name = feature_name(ctx, args.pos[0])?;
    let abs = if std::path::Path::new(&name).is_file() {
        crate::core::file::expand_path(&name, None)
    } else {
        match resolve(ctx, &name)? {
            Some(a) => a,
            None => return Err(load_error(ctx, &name)),
        }
    };
    load_file(ctx, &abs)?;
    Ok(Value::TRUE)
}

pub fn register_autoload(ctx: &mut Ctx, klass: Value, id: SymId, path: Value) -> Result<()> {
    let b = module::body(klass);
    if b.const_get(id).is_some_and(|e| e.autoload.is_none()) {
        return Ok(());
    }
    b.const_set(id, Value::UNDEF);
    if let Some(&i) = b.const_index.get(&id) {
        b.consts_mut()[i].1.autoload = Some(path);
    }
    ctx.vm().bump_const_epoch();
    crate::core::module_methods::const_added(ctx, klass, id)
}

/// Loads the file registered for `klass::id`.
pub fn autoload_now(ctx: &mut Ctx, klass: Value, id: SymId, path: Value) -> Result<()> {
    let p = string::to_rust_string_lossy(path);
    // Drop the registration first so a recursive lookup during the load sees "missing".
    if let Some(&i) = module::body(klass).const_index.get(&id) {
        module::body(klass).consts_mut()[i].1.autoload = None;
    }
    let r = require(ctx, &p);
    if let Some(&i) = module::body(klass).const_index.get(&id) {
        if module::body(klass).consts[i].1.value.is_undef() {
            module::body(klass).const_remove(id);
        }
    }
    ctx.vm().bump_const_epoch();
    r.map(|_| ())
}

/// The class of the caller's lexical scope (CRuby's `rb_vm_cbase`), Object at top level.
fn caller_cbase(ctx: &Ctx) -> Value {
    let cref = crate::interp::ops::caller_ruby_frame(ctx).map_or(Value::NIL, |fi| ctx.stacks.frames[fi].cref);
    let c = crate::interp::ops::lexical_cref(cref);
    if c.is_nil() {
        return ctx.c().object;
    }
    let k = crate::interp::env::cref(c).klass;
    if module::is_class_or_module(k) {
        k
    } else {
        ctx.c().object
    }
}

/// `Kernel#autoload`: an autoload in the caller's lexical scope.
fn k_autoload(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let base = module::real_class(caller_cbase(ctx));
    ctx.call_str(base, "autoload", args.pos)
}

/// `Kernel#autoload?(name, inherit = true)` of the caller's lexical scope.
fn k_autoload_p(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let base = caller_cbase(ctx);
    ctx.call_str(base, "autoload?", args.pos)
}

pub fn init(ctx: &mut Ctx) {
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("require", k_require, [1], Unsafe, ModuleFunction),
        ("require_relative", k_require_relative, [1], Unsafe, ModuleFunction),
        ("load", k_load, [1..=2], Unsafe, ModuleFunction),
        ("autoload", k_autoload, [2], Unsafe, ModuleFunction),
        ("autoload?", k_autoload_p, [1..=2], Unsafe, ModuleFunction),
    ]);
    // Every CRuby program sees RbConfig (rubygems loads it at start): lib/rbconfig.rb.
    let obj = ctx.c().object;
    let id = ctx.intern("RbConfig");
    let path = string::new_utf8(ctx, "rbconfig");
    let _ = register_autoload(ctx, obj, id, path);
    // As in CRuby since `set` is loaded at start: SortedSet explains it has moved to a gem
    // (lib/set/sorted_set.rb).
    let id = ctx.intern("SortedSet");
    let path = string::new_utf8(ctx, "set/sorted_set");
    let _ = register_autoload(ctx, obj, id, path);
}
