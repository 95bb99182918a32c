//! Precompiled bytecode (`carmine --compile`, docs/bytecode.md) through the `carmine`
//! command:
//! - every Ruby test under `test/` compiled to a `.cmb` file and run from it prints the
//!   same output, on both streams, and ends with the same status as its source;
//! - every program of `bench/programs` compiles and loads;
//! - hostile files: seeded mutations of all those compiled files are loaded in-process
//!   (a `LoadError` or a program, never a panic), and a sample of the mutations that
//!   still load run in `carmine` subprocesses (a Ruby error or a timeout, never a crash);
//! - the command line: syntax errors reported as `-c` reports them, the default output
//!   name, and bytecode recognised by its magic bytes whatever the file is called.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::Duration;

use carmine_fuzz::bytecode::{mutate, LoadOutcome, Loader};
use carmine_fuzz::exec::{output_reporting_hangs, output_within, unprivileged_uid, ExecOutcome, Runner};
use carmine_fuzz::rng::Rng;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("repository root")
}

fn exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_carmine"))
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("carmine-bytecode-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}

fn collect(dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, suffix, out);
        } else if p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)) {
            out.push(p);
        }
    }
}

/// A test file that runs longer than this is reported as hung (with its process group).
const RUN_LIMIT: Duration = Duration::from_secs(300);

/// `carmine ARGS` in `cwd`, killed after `RUN_LIMIT`.
fn run_carmine(args: &[&std::ffi::OsStr], cwd: &Path) -> Result<Output, String> {
    let build = || {
        let mut c = Command::new(exe());
        c.args(args).current_dir(cwd).env("CARMINE", exe());
        c
    };
    output_reporting_hangs(build, RUN_LIMIT).map_err(|e| format!("carmine {args:?}: {e}"))
}

fn carmine(args: &[&std::ffi::OsStr], cwd: &Path) -> Output {
    run_carmine(args, cwd).unwrap_or_else(|e| panic!("{e}"))
}

/// Compiles `src` to `out` with `carmine --compile`.
fn compile(src: &Path, out: &Path, cwd: &Path) -> Result<(), String> {
    let o = run_carmine(&[std::ffi::OsStr::new("--compile"), src.as_os_str(), std::ffi::OsStr::new("-o"), out.as_os_str()], cwd)?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!("{}: --compile failed:\n{}", src.display(), String::from_utf8_lossy(&o.stderr)))
    }
}

/// Runs `work` over `items` on two threads (the machine's cores), collecting failures.
fn in_parallel<T: Sync>(items: &[T], work: impl Fn(&T) -> Result<(), String> + Sync) -> Vec<String> {
    let failures = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap_or_else(|p| p.into_inner());
                    *n += 1;
                    *n - 1
                };
                let Some(item) = items.get(i) else { break };
                if let Err(e) = work(item) {
                    failures.lock().unwrap_or_else(|p| p.into_inner()).push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap_or_else(|p| p.into_inner())
}

fn cmb_name(dir: &Path, root: &Path, src: &Path) -> PathBuf {
    let rel = src.strip_prefix(root).unwrap_or(src).to_string_lossy().replace('/', "_");
    dir.join(rel).with_extension("cmb")
}

#[test]
fn compiled_tests_run_like_their_source() {
    let root = root();
    let out = scratch("equiv");
    let mut files = Vec::new();
    collect(&root.join("test"), "_test.rb", &mut files);
    assert!(!files.is_empty(), "no test files found");
    let failures = in_parallel(&files, |f| {
        let cmb = cmb_name(&out, &root, f);
        compile(f, &cmb, &root)?;
        let a = run_carmine(&[f.as_os_str()], &root)?;
        let b = run_carmine(&[cmb.as_os_str()], &root)?;
        if (a.status.code(), &a.stdout, &a.stderr) != (b.status.code(), &b.stdout, &b.stderr) {
            return Err(format!(
                "{}: source and bytecode differ\n--- source (exit {:?})\n{}{}\n--- bytecode (exit {:?})\n{}{}",
                f.display(),
                a.status.code(),
                String::from_utf8_lossy(&a.stdout),
                String::from_utf8_lossy(&a.stderr),
                b.status.code(),
                String::from_utf8_lossy(&b.stdout),
                String::from_utf8_lossy(&b.stderr)
            ));
        }
        Ok(())
    });
    assert!(failures.is_empty(), "{} of {} files:\n{}", failures.len(), files.len(), failures.join("\n"));
    let _ = std::fs::remove_dir_all(&out);
}

/// Compiles every test and bench program into `dir`; returns the compiled files.
fn compile_corpus(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(&root.join("test"), ".rb", &mut files);
    collect(&root.join("bench/programs"), ".rb", &mut files);
    let failures = in_parallel(&files, |f| {
        let cmb = cmb_name(dir, root, f);
        compile(f, &cmb, root)?;
        let check = run_carmine(&[std::ffi::OsStr::new("-c"), cmb.as_os_str()], root)?;
        if check.status.success() && check.stdout == b"Bytecode OK\n" {
            Ok(())
        } else {
            Err(format!("{}: the compiled file does not load:\n{}", f.display(), String::from_utf8_lossy(&check.stderr)))
        }
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    files.iter().map(|f| cmb_name(dir, root, f)).collect()
}

/// Seeded mutations per compiled file, loaded in-process, and how many of the mutated
/// files that still load run in subprocesses. A longer run for a search:
/// `CARMINE_BYTECODE_FUZZ=MUTATIONS,RUNS,SEED cargo test --release --test bytecode hostile`.
fn fuzz_settings() -> (usize, usize, u64) {
    let custom = std::env::var("CARMINE_BYTECODE_FUZZ").ok();
    let v: Vec<u64> = custom.iter().flat_map(|s| s.split(',')).filter_map(|x| x.trim().parse().ok()).collect();
    match v[..] {
        [m, r, seed] => (m as usize, r as usize, seed),
        _ => (150, 40, 20261127),
    }
}

#[test]
fn hostile_bytecode_never_panics_or_crashes() {
    let root = root();
    let dir = scratch("fuzz");
    let compiled = compile_corpus(&root, &dir);
    let (mutations_per_file, runs, seed) = fuzz_settings();
    let mut rng = Rng::new(seed);
    let mut loader = Loader::new();
    let (mut loaded, mut rejected) = (0usize, 0usize);
    let mut panics = Vec::new();
    let mut runnable: Vec<Vec<u8>> = Vec::new();
    for f in &compiled {
        let bytes = std::fs::read(f).expect("compiled file");
        assert_eq!(loader.load(&bytes), LoadOutcome::Loaded, "{} loads in-process", f.display());
        for m in 0..mutations_per_file {
            let v = mutate(&mut rng, &bytes);
            match loader.load(&v) {
                LoadOutcome::Loaded => {
                    loaded += 1;
                    if v != bytes && runnable.len() < runs * 4 {
                        runnable.push(v);
                    }
                }
                LoadOutcome::Rejected(msg) => {
                    rejected += 1;
                    assert!(msg.starts_with("invalid bytecode: "), "{}: mutation {m} rejected with {msg}", f.display());
                }
                LoadOutcome::Panic(msg) => {
                    let saved = dir.join(format!("panic-{}.cmb", panics.len()));
                    let _ = std::fs::write(&saved, &v);
                    panics.push(format!("{} mutation {m}: {msg} (saved as {})", f.display(), saved.display()));
                }
            }
        }
    }
    eprintln!("bytecode fuzz: {} files, {} mutations: {rejected} rejected, {loaded} loaded", compiled.len(), compiled.len() * mutations_per_file);
    assert!(panics.is_empty(), "loading panicked:\n{}", panics.join("\n"));
    assert!(rejected > loaded, "the mutations should mostly be rejected");

    // Loadable mutations run: whatever they do, the VM must not crash.
    // As root they run as `nobody` (a mutated pid must not reach the harness's processes),
    // in a scratch directory everyone may write.
    let uid = unprivileged_uid(&exe());
    let runner = Runner { carmine: exe(), prelude: None, timeout: Duration::from_secs(10), mem_limit: 4096 << 20, env: vec![("TMPDIR".into(), dir.display().to_string())], uid };
    let picked: Vec<(usize, Vec<u8>)> = runnable.into_iter().enumerate().filter(|(i, _)| i % 4 == 0).take(runs).collect();
    let cwd = dir.join("cwd");
    std::fs::create_dir_all(&cwd).expect("cwd");
    if uid.is_some() {
        for d in [&dir, &cwd] {
            std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777)).expect("scratch permissions");
        }
    }
    let crashes = in_parallel(&picked, |(i, v)| {
        let script = dir.join(format!("run-{i}.cmb"));
        std::fs::write(&script, v).map_err(|e| e.to_string())?;
        match runner.run(&script, &cwd) {
            ExecOutcome::Crash { reason, stderr } => Err(format!("{}: {reason}\n{stderr}", script.display())),
            _ => {
                let _ = std::fs::remove_file(&script);
                Ok(())
            }
        }
    });
    assert!(crashes.is_empty(), "loaded mutations crashed the VM:\n{}", crashes.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn command_line() {
    let dir = scratch("cli");
    std::fs::write(dir.join("ok.rb"), "puts [__FILE__, $0, __LINE__].inspect\nputs DATA.read\n__END__\ntail\n").expect("write");
    std::fs::write(dir.join("bad.rb"), "def x(\n  1 +\nend\n").expect("write");
    std::fs::write(dir.join("raises.rb"), "def boom = raise(ArgumentError, 'no')\nboom\n").expect("write");
    let arg = std::ffi::OsStr::new;

    // Default output name, and the program sees its source path.
    let o = carmine(&[arg("--compile"), arg("ok.rb")], &dir);
    assert!(o.status.success() && o.stdout.is_empty(), "{o:?}");
    let o = carmine(&[arg("ok.cmb")], &dir);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[\"ok.rb\", \"ok.rb\", 1]\ntail\n");

    // Loading under GC.stress (a collection at every allocation) keeps what it made.
    std::fs::write(dir.join("kinds.rb"), "# frozen_string_literal: false\nx = [1, -2.5, 2**70, 3r, :sym, 'str', \"\\u00e9\", /re+/i, 1..10, nil..3, __ENCODING__, 'ab'.b]\nx << \"i#{x.size}\" << :\"d#{1}\" << /x#{2}/o\np x, x.map(&:frozen?)\nbegin; raise 'e'; rescue; p $!; end\n").expect("write");
    assert!(carmine(&[arg("--compile"), arg("kinds.rb")], &dir).status.success());
    let src = carmine(&[arg("kinds.rb")], &dir);
    let o = output_within(Command::new(exe()).arg("kinds.cmb").current_dir(&dir).env("CARMINE_GC_STRESS", "1"), RUN_LIMIT).expect("carmine runs");
    assert!(src.status.success() && !src.stdout.is_empty(), "{src:?}");
    assert_eq!((o.stdout, o.status.code()), (src.stdout, src.status.code()));

    // The magic bytes, not the name, make a file bytecode.
    std::fs::copy(dir.join("ok.cmb"), dir.join("renamed.rb")).expect("copy");
    let o = carmine(&[arg("renamed.rb")], &dir);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "[\"ok.rb\", \"ok.rb\", 1]\ntail\n");

    // A syntax error: reported as -c reports it, status 1, nothing written.
    let c = carmine(&[arg("-c"), arg("bad.rb")], &dir);
    let o = carmine(&[arg("--compile"), arg("bad.rb"), arg("-o"), arg("bad.cmb")], &dir);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(o.stderr, c.stderr);
    assert!(String::from_utf8_lossy(&o.stderr).contains("syntax error"));
    assert!(!dir.join("bad.cmb").exists());

    // Backtraces name the source file and its lines.
    assert!(carmine(&[arg("--compile"), arg("raises.rb")], &dir).status.success());
    let a = carmine(&[arg("raises.rb")], &dir);
    let b = carmine(&[arg("raises.cmb")], &dir);
    assert_eq!((a.status.code(), &a.stderr), (b.status.code(), &b.stderr));
    let report = String::from_utf8_lossy(&b.stderr);
    assert!(report.contains("raises.rb:1:in '") && report.contains("raises.rb:2:in '<main>'"), "{report}");

    // A damaged file is a LoadError, status 1.
    let mut bytes = std::fs::read(dir.join("ok.cmb")).expect("read");
    bytes.truncate(bytes.len() / 2);
    std::fs::write(dir.join("cut.cmb"), &bytes).expect("write");
    let o = carmine(&[arg("cut.cmb")], &dir);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("invalid bytecode") && err.contains("LoadError"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
