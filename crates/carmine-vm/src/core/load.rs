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
use crate::stdlib::NATIVE_FEATURES;
use crate::Result;

/// Features provided by the VM itself.
const BUILTIN_FEATURES: &[&str] = &["set", "enumerator", "rational", "complex", "thread", "fiber", "ruby2_keywords", "continuation", "io/wait", "io/nonblock"];

/// The directory of the Ruby files shipped with Carmine.
pub fn stdlib_dir() -> String {
    std::env::var("CARMINE_LIB").unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../../lib").to_string())
}

fn load_error(ctx: &mut Ctx, name: &str) -> Unwind {
    let e = ctx.new_error(ctx.c().load_error, &format!("cannot load such file -- {name}"));
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
    let so_base = base.strip_suffix(".so");
    if let Some(&(n, init)) = NATIVE_FEATURES.iter().find(|(n, _)| *n == base || Some(*n) == so_base) {
        let key = format!("{}.so", n.trim_end_matches(".so"));
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
            array::rarray(lf).items = items;
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
    let (path, _) = crate::core::kernel::caller_location(ctx);
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
        b.consts[i].1.autoload = Some(path);
    }
    ctx.vm().bump_const_epoch();
    crate::core::module_methods::const_added(ctx, klass, id)
}

/// Loads the file registered for `klass::id`.
pub fn autoload_now(ctx: &mut Ctx, klass: Value, id: SymId, path: Value) -> Result<()> {
    let p = string::to_rust_string_lossy(path);
    // Drop the registration first so a recursive lookup during the load sees "missing".
    if let Some(&i) = module::body(klass).const_index.get(&id) {
        module::body(klass).consts[i].1.autoload = None;
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

fn k_autoload(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let obj = ctx.c().object;
    let id = crate::core::symbol::to_sym_id(ctx, args.pos[0])?;
    let path = string::to_str_arg(ctx, args.pos[1])?;
    register_autoload(ctx, obj, id, path)?;
    Ok(Value::NIL)
}

pub fn init(ctx: &mut Ctx) {
    let k = ctx.c().kernel;
    crate::methods!(ctx, k, [
        ("require", k_require, [1], Unsafe, ModuleFunction),
        ("require_relative", k_require_relative, [1], Unsafe, ModuleFunction),
        ("load", k_load, [1..=2], Unsafe, ModuleFunction),
        ("autoload", k_autoload, [2], Unsafe, ModuleFunction),
    ]);
}
