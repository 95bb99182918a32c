//! Dir: the working directory, directory listings and glob.

use crate::core::file::path_arg;
use crate::core::{array, string};
use crate::interp::Args;
use crate::thread::Ctx;
use crate::value::Value;
use crate::Result;

fn chdir_to(ctx: &mut Ctx, path: &str) -> Result<()> {
    std::env::set_current_dir(path).map_err(|e| crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &format!("dir_chdir0 - {path}")))
}

/// `Dir.chdir(path = $HOME) { |path| ... }`: with a block the previous directory is
/// restored afterwards (also when the block raises).
fn d_chdir(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let path = match args.pos.first() {
        Some(&p) => path_arg(ctx, p)?,
        None => match std::env::var("HOME") {
            Ok(h) => h,
            Err(_) => return Err(ctx.arg_error("HOME/LOGDIR not set")),
        },
    };
    let Some(b) = args.block else {
        chdir_to(ctx, &path)?;
        return Ok(Value::fixnum(0));
    };
    let previous = std::env::current_dir().map_err(|e| crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), "getcwd"))?;
    chdir_to(ctx, &path)?;
    let pv = string::new_utf8(ctx, &path);
    let r = ctx.yield1(&b, pv);
    let back = chdir_to(ctx, &previous.to_string_lossy());
    let v = r?;
    back?;
    Ok(v)
}

fn d_pwd(ctx: &mut Ctx, _recv: Value, _args: &Args) -> Result<Value> {
    let d = std::env::current_dir().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(string::new_utf8(ctx, &d))
}

fn d_exist(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    Ok(Value::bool(std::path::Path::new(&p).is_dir()))
}

fn d_entries(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    let out = array::new(ctx);
    match std::fs::read_dir(&p) {
        Ok(rd) => {
            let mut names: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
            names.sort();
            for n in [".", ".."].iter().map(|s| s.to_string()).chain(names) {
                let s = string::new_utf8(ctx, &n);
                array::push(ctx, out, s);
            }
            Ok(out)
        }
        Err(e) => Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::ENOENT), &format!("rb_dir_initialize - {p}"))),
    }
}

fn d_children(ctx: &mut Ctx, recv: Value, args: &Args) -> Result<Value> {
    let all = d_entries(ctx, recv, args)?;
    let v: Vec<Value> = array::to_vec(all).into_iter().filter(|&s| !matches!(string::bytes(s), b"." | b"..")).collect();
    Ok(array::from_vec(ctx, v))
}

fn d_mkdir(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let p = path_arg(ctx, args.pos[0])?;
    match std::fs::create_dir(&p) {
        Ok(()) => Ok(Value::fixnum(0)),
        Err(e) => Err(crate::core::process::errno_error(ctx, e.raw_os_error().unwrap_or(libc::EIO), &format!("rb_dir_s_mkdir - {p}"))),
    }
}

fn glob_match(pat: &[u8], s: &[u8]) -> bool {
    match (pat.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob_match(&pat[1..], s) || (!s.is_empty() && glob_match(pat, &s[1..])),
        (Some(b'?'), Some(_)) => glob_match(&pat[1..], &s[1..]),
        (Some(&p), Some(&c)) if p == c => glob_match(&pat[1..], &s[1..]),
        _ => false,
    }
}

fn glob_walk(dir: &str, segs: &[&str], prefix: &str, out: &mut Vec<String>) {
    let Some((first, rest)) = segs.split_first() else {
        out.push(prefix.to_string());
        return;
    };
    if *first == "**" {
        glob_walk(dir, rest, prefix, out);
        if let Ok(rd) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) {
            let mut names: Vec<_> = rd.filter_map(|e| e.ok()).filter(|e| e.path().is_dir()).map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| !n.starts_with('.')).collect();
            names.sort();
            for n in names {
                let p = if prefix.is_empty() { n.clone() } else { format!("{prefix}/{n}") };
                let d = if dir.is_empty() { n } else { format!("{dir}/{n}") };
                glob_walk(&d, segs, &p, out);
            }
        }
        return;
    }
    if !first.contains(['*', '?']) {
        let p = if prefix.is_empty() { first.to_string() } else { format!("{prefix}/{first}") };
        let d = if dir.is_empty() { first.to_string() } else { format!("{dir}/{first}") };
        if std::path::Path::new(&d).exists() || (first.is_empty() && prefix.is_empty()) {
            glob_walk(&d, rest, &p, out);
        }
        return;
    }
    if let Ok(rd) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) {
        let mut names: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        for n in names {
            if n.starts_with('.') && !first.starts_with('.') {
                continue;
            }
            if glob_match(first.as_bytes(), n.as_bytes()) {
                let p = if prefix.is_empty() { n.clone() } else { format!("{prefix}/{n}") };
                let d = if dir.is_empty() { n } else { format!("{dir}/{n}") };
                glob_walk(&d, rest, &p, out);
            }
        }
    }
}

fn d_glob(ctx: &mut Ctx, _recv: Value, args: &Args) -> Result<Value> {
    let mut pats = Vec::new();
    let a = args.pos[0];
    if array::is_array(a) {
        for x in array::to_vec(a) {
            pats.push(path_arg(ctx, x)?);
        }
    } else {
        pats.push(path_arg(ctx, a)?);
    }
    let mut results = Vec::new();
    for pat in pats {
        let abs = pat.starts_with('/');
        let segs: Vec<&str> = pat.trim_start_matches('/').split('/').collect();
        let mut out = Vec::new();
        glob_walk(if abs { "/" } else { "" }, &segs, if abs { "" } else { "" }, &mut out);
        for o in out {
            results.push(if abs { format!("/{o}") } else { o });
        }
    }
    let arr = array::new(ctx);
    for r in results {
        let s = string::new_utf8(ctx, &r);
        array::push(ctx, arr, s);
    }
    if let Some(b) = args.block {
        for s in array::to_vec(arr) {
            ctx.yield1(&b, s)?;
        }
        return Ok(Value::NIL);
    }
    Ok(arr)
}


pub fn init(ctx: &mut Ctx) {
    let d = ctx.c().dir;
    crate::methods!(ctx, d, [
        ("pwd", d_pwd, [0], Unsafe, Singleton),
        ("chdir", d_chdir, [0..=1], Unsafe, Singleton),
        ("getwd", d_pwd, [0], Unsafe, Singleton),
        ("exist?", d_exist, [1], Unsafe, Singleton),
        ("entries", d_entries, [1], Unsafe, Singleton),
        ("children", d_children, [1], Unsafe, Singleton),
        ("mkdir", d_mkdir, [1..=2], Unsafe, Singleton),
        ("glob", d_glob, [1..=2], Unsafe, Singleton, Kw),
        ("[]", d_glob, [1..], Unsafe, Singleton),
    ]);
}
