//! The `carmine` command: runs Ruby programs with `ruby`'s command-line conventions.

use std::io::{Read, Write as _};
use std::process::ExitCode;

use carmine_vm::runtime::{Outcome, Runtime, Verbosity};

/// `println!`/`eprintln!` that ignore a failed write: a closed pipe on the other end of
/// stdout or stderr must not panic.
macro_rules! say_out {
    ($($t:tt)*) => {{ let _ = writeln!(std::io::stdout(), $($t)*); }};
}
macro_rules! say_err {
    ($($t:tt)*) => {{ let _ = writeln!(std::io::stderr(), $($t)*); }};
}

/// Native stack of the thread that runs Ruby (deep recursion through builtins needs room).
const MAIN_STACK: usize = 512 << 20;

struct Options {
    /// `-e` programs as given (their bytes, whatever their encoding).
    exprs: Vec<Vec<u8>>,
    script: Option<String>,
    args: Vec<Vec<u8>>,
    check: bool,
    print_version: bool,
    version_only: bool,
    load_path: Vec<String>,
    requires: Vec<String>,
    verbose: Verbosity,
    dump_insns: bool,
    chdir: Option<String>,
    frozen_string_literals: bool,
}

fn usage() -> &'static str {
    "Usage: carmine [switches] [--] [programfile] [arguments]\n  -c              check syntax only\n  -Cdirectory     cd to directory before executing your script\n  -e 'command'    one line of script. Several -e's allowed. Omit [programfile]\n  -Idirectory     specify $LOAD_PATH directory (may be used more than once)\n  -rlibrary       require the library before executing your script\n  -v              print the version number, then turn on verbose mode\n  -w              turn warnings on for your script\n  -W[level=2]     set warning level; 0=silence, 1=medium, 2=verbose\n  --dump=insns    print the compiled bytecode instead of running\n  --version       print the version number, then exit\n  -h, --help      show this message"
}

fn parse_args(argv: Vec<std::ffi::OsString>) -> Result<Options, String> {
    let mut o = Options { exprs: Vec::new(), script: None, args: Vec::new(), check: false, print_version: false, version_only: false, load_path: Vec::new(), requires: Vec::new(), verbose: Verbosity::Medium, dump_insns: false, chdir: None, frozen_string_literals: false };
    let mut it = argv.into_iter().skip(1);
    while let Some(a) = it.next() {
        let s = a.to_string_lossy().into_owned();
        if s == "--" {
            break;
        }
        if !s.starts_with('-') || s == "-" {
            if s != "-" {
                o.script = Some(s);
            }
            o.args.extend(it.by_ref().map(|x| x.into_encoded_bytes()));
            return Ok(o);
        }
        match s.as_str() {
            "-e" => o.exprs.push(it.next().ok_or("no code specified for -e (RuntimeError)")?.into_encoded_bytes()),
            "-c" => o.check = true,
            "-v" => {
                o.print_version = true;
                o.verbose = Verbosity::Verbose;
            }
            "--version" => o.version_only = true,
            "-w" | "-W" | "-W2" => o.verbose = Verbosity::Verbose,
            "-W0" => o.verbose = Verbosity::Silent,
            "-W1" => o.verbose = Verbosity::Medium,
            "--dump=insns" => o.dump_insns = true,
            "-h" | "--help" => return Err(usage().to_string()),
            "-I" => o.load_path.push(it.next().ok_or("no directory specified for -I")?.to_string_lossy().into_owned()),
            "-r" => o.requires.push(it.next().ok_or("no library specified for -r")?.to_string_lossy().into_owned()),
            "-C" => o.chdir = Some(it.next().ok_or("no directory specified for -C")?.to_string_lossy().into_owned()),
            "--enable-frozen-string-literal" | "--enable=frozen-string-literal" | "--enable=frozen_string_literal" => o.frozen_string_literals = true,
            "--disable-frozen-string-literal" | "--disable=frozen-string-literal" | "--disable=frozen_string_literal" => o.frozen_string_literals = false,
            "--disable-gems" | "--disable=gems" | "--yjit" | "-U" | "-E" => {}
            _ if s.starts_with("-e") => o.exprs.push(a.into_encoded_bytes()[2..].to_vec()),
            _ if s.starts_with("-I") => o.load_path.push(s[2..].to_string()),
            _ if s.starts_with("-r") => o.requires.push(s[2..].to_string()),
            _ if s.starts_with("-C") => o.chdir = Some(s[2..].to_string()),
            _ if s.starts_with("--disable") || s.starts_with("--enable") || s.starts_with("--encoding") || s.starts_with("-E") || s.starts_with("-K") => {}
            _ => return Err(format!("carmine: invalid option {s}  (-h will show valid options) (RuntimeError)")),
        }
    }
    o.args.extend(it.map(|x| x.into_encoded_bytes()));
    Ok(o)
}

fn run(o: Options) -> i32 {
    if o.version_only || o.print_version {
        say_out!("{}", carmine_vm::boot::description());
        if o.version_only || (o.exprs.is_empty() && o.script.is_none()) {
            return 0;
        }
    }
    if let Some(d) = &o.chdir {
        if let Err(e) = std::env::set_current_dir(d) {
            say_err!("carmine: Can't chdir to {d} ({e})");
            return 1;
        }
    }
    let (source, path): (Vec<u8>, String) = if !o.exprs.is_empty() {
        (o.exprs.join(&b'\n'), "-e".to_string())
    } else if let Some(s) = &o.script {
        match std::fs::read(s) {
            Ok(b) => (b, s.clone()),
            Err(e) => {
                let reason = match e.kind() {
                    std::io::ErrorKind::NotFound => "No such file or directory".to_string(),
                    std::io::ErrorKind::PermissionDenied => "Permission denied".to_string(),
                    _ => e.to_string(),
                };
                say_err!("carmine: {reason} -- {s} (LoadError)");
                return 1;
            }
        }
    } else {
        let mut b = Vec::new();
        if std::io::stdin().read_to_end(&mut b).is_err() {
            return 1;
        }
        (b, "-".to_string())
    };
    let mut args = o.args;
    if !o.exprs.is_empty() {
        if let Some(s) = o.script {
            args.insert(0, s.into_bytes());
        }
    }
    let mut rt = Runtime::new();
    rt.configure(&path, &args, &o.load_path, o.verbose);
    rt.set_frozen_string_literals(o.frozen_string_literals);
    rt.install_signal_handlers();
    if o.dump_insns {
        return match rt.dump_insns(&source, &path) {
            Ok(text) => {
                let _ = std::io::stdout().write_all(text.as_bytes());
                0
            }
            Err(msg) => {
                say_err!("{msg}");
                1
            }
        };
    }
    if o.check {
        return match rt.check_syntax(&source, &path) {
            Ok(()) => {
                say_out!("Syntax OK");
                0
            }
            Err(msg) => {
                say_err!("{msg}");
                1
            }
        };
    }
    for r in &o.requires {
        if let Err(o) = rt.require(r) {
            return exit_status(o);
        }
    }
    exit_status(rt.run_main(&source, &path))
}

/// The process status for an outcome; an uncaught SignalException ends the process by
/// its signal.
fn exit_status(o: Outcome) -> i32 {
    match o {
        Outcome::Signal(n) => carmine_vm::runtime::die_of_signal(n),
        o => o.status(),
    }
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let opts = match parse_args(argv) {
        Ok(o) => o,
        Err(msg) => {
            say_err!("{msg}");
            return ExitCode::from(1);
        }
    };
    std::panic::set_hook(Box::new(|info| {
        say_err!("[BUG] Carmine internal error: {info}");
        say_err!("{}", std::backtrace::Backtrace::force_capture());
    }));
    let handle = std::thread::Builder::new().name("carmine-main".into()).stack_size(MAIN_STACK).spawn(move || run(opts));
    let code = match handle {
        Ok(h) => match h.join() {
            Ok(code) => code,
            Err(_) => 70,
        },
        Err(e) => {
            say_err!("carmine: cannot start the main thread: {e}");
            70
        }
    };
    ExitCode::from((code & 0xff) as u8)
}
