//! The `carmine` command: runs Ruby programs with `ruby`'s command-line conventions.

use std::io::{Read, Write as _};
use std::process::ExitCode;

use carmine_vm::compile::CommandLine;
use carmine_vm::runtime::{Outcome, Runtime, Verbosity};

/// `println!`/`eprintln!` that ignore a failed write: a closed pipe on the other end of
/// stdout or stderr must not panic.
macro_rules! say_out {
    ($($t:tt)*) => {{ let _ = writeln!(std::io::stdout(), $($t)*); }};
}
macro_rules! say_err {
    ($($t:tt)*) => {{ let _ = writeln!(std::io::stderr(), $($t)*); }};
}

/// mimalloc instead of glibc's malloc: Ruby programs make many small, short-lived buffers
/// (argument vectors, keyword hashes, string and array storage), and glibc's
/// consolidation and free-list work was up to a third of the time of keyword-heavy and
/// allocation-heavy programs (perf, bench/programs: call_super_kwargs, json_parser, havlak,
/// str_build). Only the command sets it; an embedding program keeps its own allocator.
#[global_allocator]
static GLOBAL: Allocator = Allocator;

/// mimalloc, and CRuby's answer when a small allocation fails: the process is out of
/// memory (or address space, under `ulimit -v`), with no room to build an exception, so it
/// ends with `[FATAL] failed to allocate memory` and status 1 instead of Rust's abort.
/// Requests of 1 MiB and more return null as usual, so that fallible reservations
/// (`Array.new(2**40)`, huge strings) still become NoMemoryError.
struct Allocator;

const SMALL_REQUEST: usize = 1 << 20;

#[inline]
fn checked(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() && size < SMALL_REQUEST {
        carmine_vm::error::fatal_out_of_memory();
    }
    p
}

// SAFETY: every call is forwarded to mimalloc with the same size and an alignment it
// guarantees; only a null result of a small request is turned into process exit.
// Requests whose alignment mimalloc's plain entry points already give (at most 16 and at
// most the size: blocks are aligned to their size class, `mi_malloc_is_naturally_aligned`)
// skip the crate's `mi_malloc_aligned`, three calls deep and about 50 instructions more
// per allocation (callgrind, bench/programs/call_struct).
unsafe impl std::alloc::GlobalAlloc for Allocator {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        let p = if naturally_aligned(l.align(), l.size()) { mi_malloc(l.size()) } else { mimalloc::MiMalloc.alloc(l) };
        checked(p, l.size())
    }
    unsafe fn alloc_zeroed(&self, l: std::alloc::Layout) -> *mut u8 {
        let p = if naturally_aligned(l.align(), l.size()) { mi_zalloc(l.size()) } else { mimalloc::MiMalloc.alloc_zeroed(l) };
        checked(p, l.size())
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        mimalloc::MiMalloc.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new_size: usize) -> *mut u8 {
        let q = if naturally_aligned(l.align(), new_size) { mi_realloc(p, new_size) } else { mimalloc::MiMalloc.realloc(p, l, new_size) };
        checked(q, new_size)
    }
}

#[inline(always)]
fn naturally_aligned(align: usize, size: usize) -> bool {
    align <= 16 && align <= size
}

extern "C" {
    fn mi_malloc(size: usize) -> *mut u8;
    fn mi_zalloc(size: usize) -> *mut u8;
    fn mi_realloc(p: *mut u8, new_size: usize) -> *mut u8;
    /// mimalloc's option setter (linked in by the `mimalloc` crate).
    fn mi_option_set(option: i32, value: std::ffi::c_long);
    fn mi_collect(force: bool);
}

/// After a major collection: mimalloc gives the memory of the buffers it freed back to the
/// kernel. It otherwise purges freed spans only some time after they are freed, and only
/// when a later allocation looks, so a program that builds big Strings round after round
/// (bench/programs/str_build) kept each round's freed buffers resident: its RSS crept
/// from 17 to 38 MB while its live data stayed the same.
fn release_freed_memory() {
    // SAFETY: mi_collect may be called at any time from any thread.
    unsafe { mi_collect(true) };
}

/// `mi_option_arena_eager_commit` in mimalloc v2's (and v3's) `mi_option_t` (libmimalloc-sys 0.1.49,
/// pinned in Cargo.lock): arenas committed on demand instead of at reservation keep peak
/// RSS at or below glibc's (havlak 57 -> 45 MB, json_parser 48 -> 33 MB) for a few
/// percent of time.
const MI_OPTION_ARENA_EAGER_COMMIT: i32 = 4;

/// Sets mimalloc's options before it initializes: its own constructor has priority 101, so
/// this one (100) runs first, and options set here are not read from the environment again.
extern "C" fn set_allocator_options() {
    // SAFETY: mi_option_set only stores the value in mimalloc's option table.
    unsafe { mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0) };
}

#[used]
#[link_section = ".init_array.00100"]
static ALLOCATOR_OPTIONS: extern "C" fn() = set_allocator_options;

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
    /// `--backtrace-limit=N` (-1: no limit).
    backtrace_limit: i64,
    /// `-n`, `-p`, `-a`, `-l`.
    command_line: CommandLine,
    /// `-l` was given (`$-l`), with or without `-n`/`-p`.
    line_mode: bool,
    /// `$/` set by `-0` (the inner None: nil, from `-0777`).
    input_separator: Option<Option<Vec<u8>>>,
    /// `$\` set by `-l`: `$/` as it was when `-l` came.
    output_separator: Option<Option<Vec<u8>>>,
    /// `-Fpattern`.
    field_separator: Option<Vec<u8>>,
    /// `-i[ext]`: the backup extension, empty for none.
    inplace: Option<Vec<u8>>,
    /// `-d`: `$DEBUG`.
    debug: bool,
    /// `-s`: the program's leading `-name[=value]` arguments become global variables.
    switch_variables: bool,
    /// `--compile`: write the program as bytecode instead of running it.
    compile: bool,
    /// `-o FILE` with `--compile`: where the bytecode goes.
    output: Option<String>,
}

fn usage() -> &'static str {
    "Usage: carmine [switches] [--] [programfile] [arguments]\n  -0[octal]       specify record separator (\\0, if no argument)\n  -a              autosplit mode with -n or -p (splits $_ into $F)\n  -c              check syntax only\n  -Cdirectory     cd to directory before executing your script\n  -d              set debugging flags (set $DEBUG to true)\n  -e 'command'    one line of script. Several -e's allowed. Omit [programfile]\n  -Fpattern       split() pattern for autosplit (-a)\n  -i[extension]   edit ARGV files in place (make backup if extension supplied)\n  -Idirectory     specify $LOAD_PATH directory (may be used more than once)\n  -l              enable line ending processing\n  -n              assume 'while gets(); ... end' loop around your script\n  -p              assume loop like -n but print line also like sed\n  -rlibrary       require the library before executing your script\n  -s              enable some switch parsing for switches after script name\n  -v              print the version number, then turn on verbose mode\n  -w              turn warnings on for your script\n  -W[level=2]     set warning level; 0=silence, 1=medium, 2=verbose\n  -x[directory]   strip off text before #!ruby line and perhaps cd to directory\n  --dump=insns    print the compiled bytecode instead of running\n  --compile       write the program as bytecode to FILE.cmb (or -o FILE); run it with carmine FILE.cmb\n  --version       print the version number, then exit\n  -h, --help      show this message"
}

/// `-0[octal]`: the digits after the switch (at most three, after the `0`) read as an
/// octal character code; `-00` is paragraph mode (""), a code above 0377 means nil.
fn record_separator(digits: &[u8]) -> (Option<Vec<u8>>, usize) {
    let n = digits.iter().take(4).take_while(|c| (b'0'..=b'7').contains(c)).count();
    let v = digits[..n].iter().fold(0u32, |v, c| v * 8 + (c - b'0') as u32);
    let sep = if v > 0o377 {
        None
    } else if v == 0 && n >= 2 {
        Some(Vec::new())
    } else {
        Some(vec![v as u8])
    };
    (sep, n)
}

fn long_option(o: &mut Options, s: &str) -> Result<(), String> {
    match s {
        "--version" => o.version_only = true,
        "--dump=insns" => o.dump_insns = true,
        "--compile" => o.compile = true,
        "--help" => return Err(usage().to_string()),
        "--debug" => {
            o.debug = true;
            o.verbose = Verbosity::Verbose;
        }
        "--enable-frozen-string-literal" | "--enable=frozen-string-literal" | "--enable=frozen_string_literal" => o.frozen_string_literals = true,
        "--disable-frozen-string-literal" | "--disable=frozen-string-literal" | "--disable=frozen_string_literal" => o.frozen_string_literals = false,
        "--disable-gems" | "--disable=gems" | "--yjit" => {}
        _ if s.starts_with("--backtrace-limit=") => {
            let n = &s["--backtrace-limit=".len()..];
            match n.parse::<i64>() {
                Ok(v) if v >= -1 => o.backtrace_limit = v,
                _ => return Err(String::from("carmine: wrong limit for backtrace length (RuntimeError)")),
            }
        }
        _ if s.starts_with("--disable") || s.starts_with("--enable") || s.starts_with("--encoding") => {}
        _ => return Err(format!("carmine: invalid option {s}  (-h will show valid options) (RuntimeError)")),
    }
    Ok(())
}

fn parse_args(argv: Vec<std::ffi::OsString>) -> Result<Options, String> {
    let mut o = Options { exprs: Vec::new(), script: None, args: Vec::new(), check: false, print_version: false, version_only: false, load_path: Vec::new(), requires: Vec::new(), verbose: Verbosity::Medium, dump_insns: false, chdir: None, frozen_string_literals: false, backtrace_limit: -1, command_line: CommandLine::default(), line_mode: false, input_separator: None, output_separator: None, field_separator: None, inplace: None, debug: false, switch_variables: false, compile: false, output: None };
    let mut it = argv.into_iter().skip(1);
    while let Some(a) = it.next() {
        let bytes = a.clone().into_encoded_bytes();
        if bytes == b"--" {
            break;
        }
        if bytes.first() != Some(&b'-') || bytes == b"-" {
            // "-" is the program read from standard input (or, after -e, an argument).
            o.script = Some(a.to_string_lossy().into_owned());
            o.args.extend(it.by_ref().map(|x| x.into_encoded_bytes()));
            return Ok(o);
        }
        if bytes.starts_with(b"--") {
            long_option(&mut o, &a.to_string_lossy())?;
            continue;
        }
        // A cluster of one-letter switches (`-lane`, `-pi.bak`); a switch that takes a
        // value ends the cluster with the rest of the word, or takes the next word.
        let mut i = 1;
        while i < bytes.len() {
            let c = bytes[i];
            i += 1;
            let rest = &bytes[i..];
            match c {
                b'n' => o.command_line.each_line = true,
                b'p' => o.command_line.print = true,
                b'a' => o.command_line.split = true,
                b'c' => o.check = true,
                b'l' => {
                    o.command_line.chomp = true;
                    o.line_mode = true;
                    o.output_separator = Some(o.input_separator.clone().unwrap_or_else(|| Some(b"\n".to_vec())));
                }
                b'0' => {
                    let (sep, n) = record_separator(&bytes[i - 1..]);
                    o.input_separator = Some(sep);
                    i += n.saturating_sub(1);
                }
                b'v' => {
                    o.print_version = true;
                    o.verbose = Verbosity::Verbose;
                }
                b'w' => o.verbose = Verbosity::Verbose,
                b'W' => {
                    match rest.first() {
                        Some(b'0') => o.verbose = Verbosity::Silent,
                        Some(b'1') => o.verbose = Verbosity::Medium,
                        Some(b':') => {}
                        _ => o.verbose = Verbosity::Verbose,
                    }
                    match rest.first() {
                        Some(b'0'..=b'2') => i += 1,
                        Some(b':') => i = bytes.len(),
                        _ => {}
                    }
                }
                b'h' => return Err(usage().to_string()),
                b'U' | b'y' => {}
                b'd' => {
                    o.debug = true;
                    o.verbose = Verbosity::Verbose;
                }
                b's' => o.switch_variables = true,
                b'x' => {
                    o.command_line.search_shebang = true;
                    if !rest.is_empty() {
                        o.chdir = Some(String::from_utf8_lossy(rest).into_owned());
                    }
                    i = bytes.len();
                }
                b'o' if !o.compile => return Err(String::from("carmine: invalid option -o  (-o names the output of --compile) (RuntimeError)")),
                b'e' | b'I' | b'r' | b'C' | b'X' | b'E' | b'o' => {
                    let value = if rest.is_empty() {
                        let what = match c {
                            b'e' => "no code specified for -e (RuntimeError)",
                            b'I' => "no directory specified for -I",
                            b'r' => "no library specified for -r",
                            b'C' | b'X' => "no directory specified for -C",
                            b'o' => "no file specified for -o",
                            _ => "missing argument for -E",
                        };
                        it.next().ok_or(what)?.into_encoded_bytes()
                    } else {
                        rest.to_vec()
                    };
                    let text = String::from_utf8_lossy(&value).into_owned();
                    match c {
                        b'e' => o.exprs.push(value),
                        b'I' => o.load_path.push(text),
                        b'r' => o.requires.push(text),
                        b'C' | b'X' => o.chdir = Some(text),
                        b'o' => o.output = Some(text),
                        _ => {}
                    }
                    i = bytes.len();
                }
                b'K' => i += 1,
                b'F' => {
                    if !rest.is_empty() {
                        o.field_separator = Some(rest.to_vec());
                    }
                    i = bytes.len();
                }
                b'i' => {
                    o.inplace = Some(rest.to_vec());
                    i = bytes.len();
                }
                _ => return Err(format!("carmine: invalid option -{}  (-h will show valid options) (RuntimeError)", c as char)),
            }
        }
    }
    o.args.extend(it.map(|x| x.into_encoded_bytes()));
    Ok(o)
}

fn run(mut o: Options) -> i32 {
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
    } else if let Some(s) = o.script.as_ref().filter(|s| *s != "-") {
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
    if o.command_line.search_shebang && !source.split(|&b| b == b'\n').any(|l| l.starts_with(b"#!") && l.windows(4).any(|w| w == b"ruby")) {
        say_err!("carmine: no Ruby script found in input (LoadError)");
        return 1;
    }
    if o.compile {
        return compile_to_file(&o, &source, &path);
    }
    let bytecode = o.exprs.is_empty() && carmine_vm::compile::bytecode::is_bytecode(&source);
    let mut args = std::mem::take(&mut o.args);
    let switch_variables = if o.switch_variables { take_switch_variables(&mut args) } else { Vec::new() };
    // RUBYLIB's directories come after those of -I.
    if let Some(lib) = std::env::var_os("RUBYLIB") {
        o.load_path.extend(lib.to_string_lossy().split(':').filter(|d| !d.is_empty()).map(str::to_string));
    }
    if !o.exprs.is_empty() {
        if let Some(s) = o.script.take() {
            args.insert(0, s.into_bytes());
        }
    }
    let mut rt = Runtime::new();
    rt.set_release_memory_hook(release_freed_memory);
    rt.configure(&path, &args, &o.load_path, o.verbose);
    rt.set_frozen_string_literals(o.frozen_string_literals);
    rt.set_backtrace_limit(o.backtrace_limit);
    let command_line = CommandLine { inline_program: !o.exprs.is_empty(), ..o.command_line };
    rt.set_command_line(command_line, o.line_mode);
    if let Err(e) = apply_switches(&mut rt, &o) {
        return exit_status(e);
    }
    for (name, value) in &switch_variables {
        rt.set_switch_variable(name, value.as_deref());
    }
    rt.install_signal_handlers();
    rt.own_process_title();
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
    if bytecode {
        if o.check {
            // A bytecode file is checked by loading it (every check of the loader runs).
            return match rt.load_bytecode(&source) {
                Ok(_) => {
                    say_out!("Bytecode OK");
                    0
                }
                Err(e) => exit_status(rt.report(e)),
            };
        }
        for r in &o.requires {
            if let Err(o) = rt.require(r) {
                return exit_status(o);
            }
        }
        // DATA reads the data section from the file (a program on standard input has none).
        let file = Some(path.as_str()).filter(|p| *p != "-");
        return exit_status(rt.run_bytecode_main(&source, file));
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

/// `--compile FILE [-o OUT]`: compiles the program and writes its bytecode to OUT
/// (default: FILE with its `.rb` extension replaced by `.cmb`), through a temporary file
/// renamed into place, so that a server loading OUT never sees half a file. A syntax
/// error is reported as `-c` reports it, with status 1.
fn compile_to_file(o: &Options, source: &[u8], path: &str) -> i32 {
    let mut output = o.output.clone();
    let mut extra = o.args.iter();
    while let Some(a) = extra.next() {
        match a.as_slice() {
            b"-o" if output.is_none() => match extra.next() {
                Some(f) => output = Some(String::from_utf8_lossy(f).into_owned()),
                None => {
                    say_err!("carmine: no file specified for -o");
                    return 1;
                }
            },
            _ if a.starts_with(b"-o") && a.len() > 2 && output.is_none() => output = Some(String::from_utf8_lossy(&a[2..]).into_owned()),
            _ => {
                say_err!("carmine: --compile takes one program file (and -o OUT), not {}", String::from_utf8_lossy(a));
                return 1;
            }
        }
    }
    if !o.exprs.is_empty() || path == "-" {
        if output.is_none() {
            say_err!("carmine: --compile of -e or standard input needs -o OUT");
            return 1;
        }
    }
    let out = output.unwrap_or_else(|| format!("{}.cmb", path.strip_suffix(".rb").unwrap_or(path)));
    let mut rt = Runtime::new();
    rt.configure(path, &[], &o.load_path, o.verbose);
    rt.set_frozen_string_literals(o.frozen_string_literals);
    rt.set_command_line(CommandLine { inline_program: !o.exprs.is_empty(), ..o.command_line }, o.line_mode);
    let bytes = match rt.compile_to_bytecode(source, path) {
        Ok(b) => b,
        Err(msg) => {
            say_err!("{msg}");
            return 1;
        }
    };
    let tmp = format!("{out}.tmp{}", std::process::id());
    if let Err(e) = std::fs::write(&tmp, &bytes).and_then(|()| std::fs::rename(&tmp, &out)) {
        let _ = std::fs::remove_file(&tmp);
        say_err!("carmine: cannot write {out}: {e}");
        return 1;
    }
    0
}

/// `-s`: the leading `-name[=value]` arguments of the program, taken out of its
/// arguments (up to a `--`, which is dropped, or the first other argument) as global
/// variable names (`-` after the first becomes `_`) with their values (None: true).
fn take_switch_variables(args: &mut Vec<Vec<u8>>) -> Vec<(String, Option<Vec<u8>>)> {
    let mut vars = Vec::new();
    let mut taken = 0;
    for a in args.iter() {
        if a.first() != Some(&b'-') || a.len() < 2 {
            break;
        }
        taken += 1;
        if a == b"--" {
            break;
        }
        let (name, value) = match a.iter().position(|&c| c == b'=') {
            Some(eq) => (&a[1..eq], Some(a[eq + 1..].to_vec())),
            None => (&a[1..], None),
        };
        let name: String = String::from_utf8_lossy(name).chars().map(|c| if c == '-' { '_' } else { c }).collect();
        vars.push((format!("${name}"), value));
    }
    args.drain(..taken);
    vars
}

/// The global state that `-0`, `-l`, `-F` and `-i` set before the program runs.
fn apply_switches(rt: &mut Runtime, o: &Options) -> Result<(), Outcome> {
    if let Some(sep) = &o.input_separator {
        rt.set_record_separator(false, sep.as_deref())?;
    }
    if let Some(sep) = &o.output_separator {
        rt.set_record_separator(true, sep.as_deref())?;
    }
    if let Some(pattern) = &o.field_separator {
        rt.set_field_separator(pattern)?;
    }
    if let Some(ext) = &o.inplace {
        rt.set_inplace_mode(ext)?;
    }
    if o.debug {
        rt.set_debug(true);
    }
    Ok(())
}

/// The process status for an outcome; an uncaught SignalException ends the process by
/// its signal.
fn exit_status(o: Outcome) -> i32 {
    match o {
        Outcome::Signal(n) => carmine_vm::runtime::die_of_signal(n),
        o => o.status(),
    }
}

/// RUBYOPT: more switches, taken after the command line's; only those CRuby allows
/// there (-d -E -I -K -r -T -U -v -w -W and the long --debug/--enable/--disable/
/// --encoding ones). A word without a leading `-` gets one.
fn apply_rubyopt(o: &mut Options, value: &[u8]) -> Result<(), String> {
    let mut words: Vec<std::ffi::OsString> = vec!["carmine".into()];
    for w in value.split(|b| b.is_ascii_whitespace()).filter(|w| !w.is_empty()) {
        let w = if w.first() == Some(&b'-') { w.to_vec() } else { [b"-".as_slice(), w].concat() };
        if !w.starts_with(b"--") {
            for &c in &w[1..] {
                if !b"dEIKrTUvwW0123456789:".contains(&c) {
                    return Err(format!("carmine: invalid switch in RUBYOPT: -{} (RuntimeError)", c as char));
                }
                if b"EIKr".contains(&c) {
                    break;
                }
            }
        }
        // SAFETY: the bytes come from an OsString (the environment) or are ASCII.
        words.push(unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(w) });
    }
    let env = parse_args(words)?;
    o.load_path.extend(env.load_path);
    o.requires.extend(env.requires);
    o.debug |= env.debug;
    o.print_version |= env.print_version;
    // A warning level given on the command line wins.
    if o.verbose == Verbosity::Medium {
        o.verbose = env.verbose;
    }
    o.frozen_string_literals |= env.frozen_string_literals;
    Ok(())
}

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let parsed = parse_args(argv).and_then(|mut o| {
        if let Some(v) = std::env::var_os("RUBYOPT") {
            apply_rubyopt(&mut o, v.as_encoded_bytes())?;
        }
        Ok(o)
    });
    let opts = match parsed {
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
    let parent = std::process::id();
    let handle = std::thread::Builder::new().name("carmine-main".into()).stack_size(MAIN_STACK).spawn(move || {
        let code = run(opts);
        // In a child forked without a block this thread is the process's only thread of
        // ours (the main one waits in the parent), so it ends the process itself.
        if std::process::id() != parent {
            std::process::exit(code & 0xff);
        }
        code
    });
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
