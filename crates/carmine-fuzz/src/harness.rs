//! The panic-freedom check: every corpus file and `mutations` random mutations of it are
//! compiled in-process (a panic is caught and reported with its input), and the originals
//! plus a sample of mutations are executed in `carmine` subprocesses (a fatal signal, a
//! panicked main thread or a `[BUG]` report is a crash).
//!
//! Invariants:
//! - Everything random derives from `Config::seed` and the file's corpus-relative path, so
//!   a file's mutations do not depend on the order or the worker that processed it.
//! - The corpus is never written to: each root is copied into the scratch directory and
//!   scripts (originals and mutations) run from the copy, so relative `require`s work.
//! - Before each in-process compile the input is journaled to `inflight-wN.rb` in the
//!   failures directory: a crash that kills the harness itself (a stack overflow in the
//!   compiler) leaves the culprit there.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use carmine_vm::runtime::{Runtime, Verbosity};

use crate::exec::{ExecOutcome, Runner};
use crate::mutate;
use crate::rng::{fnv1a, Rng};

/// Native stack of a worker thread: like the `carmine` command's main thread, so that the
/// in-process compiler gets the same room as in the CLI.
const WORKER_STACK: usize = 512 << 20;

#[derive(Clone, Debug)]
pub struct Config {
    /// Files and directories (searched recursively for `*.rb`).
    pub paths: Vec<PathBuf>,
    pub seed: u64,
    /// Mutations per file compiled in-process.
    pub mutations: usize,
    /// Run every original file in a subprocess.
    pub exec_originals: bool,
    /// Mutations per file also run in a subprocess (taken among those that compile, then
    /// filled up with syntax errors); `None`: all of them.
    pub exec_mutations: Option<usize>,
    /// Parallel workers (at most 2: the machine is shared).
    pub jobs: usize,
    /// How to run subprocesses; `None` compiles only.
    pub runner: Option<Runner>,
    /// Where failing inputs are saved.
    pub failures_dir: PathBuf,
    /// Scratch space: the corpus copy, working directories, mutated scripts.
    pub scratch_dir: PathBuf,
    /// Only files whose relative path contains one of these (empty: all).
    pub only: Vec<String>,
    /// Print a progress line every this many files (0: never).
    pub progress_every: usize,
    /// Stop starting new work after this long (the files begun are finished).
    pub time_limit: Option<Duration>,
    /// Visit the files in a seeded random order (useful with `time_limit`).
    pub shuffle: bool,
    /// SIGINT/SIGTERM stop the run early with its summary (the command line sets it).
    pub stop_on_signal: bool,
}

impl Config {
    /// A compile-and-run check of `paths` with the defaults of the command line.
    pub fn new(paths: Vec<PathBuf>, seed: u64, runner: Option<Runner>) -> Config {
        Config {
            paths,
            seed,
            mutations: 5,
            exec_originals: true,
            exec_mutations: None,
            jobs: 1,
            runner,
            failures_dir: PathBuf::from("/tmp/carmine-fuzz-failures"),
            scratch_dir: PathBuf::from("/tmp/carmine-fuzz-scratch"),
            only: Vec::new(),
            progress_every: 100,
            time_limit: None,
            shuffle: false,
            stop_on_signal: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    Panic,
    Crash,
}

#[derive(Clone, Debug)]
pub struct Failure {
    pub kind: FailureKind,
    /// Corpus file the input came from.
    pub origin: String,
    /// Mutation number, `None` for the original file.
    pub mutation: Option<usize>,
    pub ops: String,
    pub message: String,
    /// Where the failing input was saved.
    pub saved: PathBuf,
}

#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub seed: u64,
    /// Corpus files selected.
    pub files: usize,
    /// Files fully processed (fewer than `files` when the time limit ended the run).
    pub files_done: usize,
    /// Inputs compiled in-process (originals + mutations).
    pub compiled: usize,
    pub mutations: usize,
    /// Compiled inputs that were syntax errors (SyntaxError raised: fine).
    pub syntax_errors: usize,
    pub executions: usize,
    /// Executions of mutated scripts (the rest are original files).
    pub executed_mutations: usize,
    pub timeouts: usize,
    /// Executions that exhausted their memory limit (an abort after growing to it; see
    /// docs/panic-freedom.md): counted, not failures.
    pub out_of_memory: usize,
    /// Subprocesses that could not be started (the check did not run: a failure).
    pub spawn_errors: usize,
    /// Subprocesses ended by a non-crash signal (a script can `Process.kill` itself).
    pub signalled: usize,
    pub panics: usize,
    pub crashes: usize,
    pub failures: Vec<Failure>,
    /// Executions that ended without a verdict (timeouts, out of memory, self-sent
    /// signals), one line each: not failures, listed so that they can be looked into.
    pub inconclusive: Vec<String>,
    pub duration: Duration,
}

impl Summary {
    pub fn clean(&self) -> bool {
        self.panics == 0 && self.crashes == 0 && self.spawn_errors == 0
    }

    pub fn report(&self) -> String {
        let mut s = format!(
            "seed {}: {} of {} files, {} compiled in-process ({} mutations, {} syntax errors), {} executions ({} of mutations; {} timeouts, {} out of memory, {} ended by signals, {} not started), {} panics, {} crashes, {:.1}s\n",
            self.seed,
            self.files_done,
            self.files,
            self.compiled,
            self.mutations,
            self.syntax_errors,
            self.executions,
            self.executed_mutations,
            self.timeouts,
            self.out_of_memory,
            self.signalled,
            self.spawn_errors,
            self.panics,
            self.crashes,
            self.duration.as_secs_f64()
        );
        for f in &self.failures {
            let m = f.mutation.map(|m| format!(" mutation {m} [{}]", f.ops)).unwrap_or_default();
            s.push_str(&format!("{:?}: {}{m}\n  saved as {}\n  {}\n", f.kind, f.origin, f.saved.display(), f.message.lines().take(6).collect::<Vec<_>>().join("\n  ")));
        }
        for line in &self.inconclusive {
            s.push_str(line);
            s.push('\n');
        }
        s
    }
}

/// One corpus file: its root (index into the copied roots) and path relative to it.
#[derive(Clone, Debug)]
struct Entry {
    root: usize,
    rel: PathBuf,
    abs: PathBuf,
}

fn collect_rb(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
        if meta.is_dir() {
            collect_rb(&p, out);
        } else if meta.is_file() && p.extension().is_some_and(|e| e == "rb") {
            out.push(p);
        }
    }
}

/// Copies a directory tree (files and symlinks as they are).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let src = e.path();
        let dst = to.join(e.file_name());
        let meta = std::fs::symlink_metadata(&src)?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&src)?;
            let _ = std::os::unix::fs::symlink(target, &dst);
        } else if meta.is_dir() {
            copy_tree(&src, &dst)?;
        } else if meta.is_file() {
            std::fs::copy(&src, &dst)?;
        }
    }
    Ok(())
}

/// Set by SIGINT/SIGTERM: the run stops like at its time limit and reports what it did.
static STOP_REQUESTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn request_stop(_sig: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::Relaxed);
}

/// Ctrl-C (or a TERM) ends the run early with its summary; a second one kills it.
fn install_stop_handler() {
    // SAFETY: the handler only stores to an atomic (async-signal-safe); SA_RESETHAND makes
    // a second signal take the default action.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = request_stop as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND;
        libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
}

thread_local! {
    static IN_WORKER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Records panics of worker threads (message, location, backtrace) for the report instead
/// of printing them; panics of other threads go to the previous hook.
fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_WORKER.with(|w| w.get()) {
                let bt = std::backtrace::Backtrace::force_capture();
                let text = format!("{info}\n{bt}");
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(text));
            } else {
                prev(info);
            }
        }));
    });
}

enum CompileResult {
    Ok,
    SyntaxError,
    Panic(String),
}

/// A worker's VM for in-process compiles; replaced after a panic (its state may be torn).
struct Compiler {
    rt: Option<Runtime>,
    compiles: usize,
}

impl Compiler {
    fn runtime(&mut self) -> &mut Runtime {
        self.rt.get_or_insert_with(|| {
            let mut rt = Runtime::new();
            rt.configure("fuzz.rb", &[], &[], Verbosity::Silent);
            rt
        })
    }

    fn compile(&mut self, src: &[u8], path: &str) -> CompileResult {
        // Compiled code stays in the VM: a fresh one now and then bounds the memory.
        self.compiles += 1;
        if self.compiles % 500 == 0 {
            self.rt = None;
        }
        let rt = self.runtime();
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| rt.check_syntax(src, path)));
        match r {
            Ok(Ok(())) => CompileResult::Ok,
            Ok(Err(_)) => CompileResult::SyntaxError,
            Err(payload) => {
                // A VM that panicked may hold broken invariants: never reuse or drop it.
                if let Some(rt) = self.rt.take() {
                    std::mem::forget(rt);
                }
                let msg = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_else(|| {
                    payload.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "panic".into())
                });
                CompileResult::Panic(msg)
            }
        }
    }
}

struct Shared<'a> {
    cfg: &'a Config,
    entries: Vec<Entry>,
    /// Scratch copies of the corpus roots.
    roots: Vec<PathBuf>,
    /// The order in which `entries` are visited.
    order: Vec<usize>,
    next: AtomicUsize,
    done: AtomicUsize,
    started: Instant,
    deadline: Option<Instant>,
    summary: Mutex<Summary>,
    failure_seq: AtomicUsize,
}

fn sanitize(rel: &Path) -> String {
    rel.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' { c } else { '_' }).collect()
}

impl Shared<'_> {
    fn record_failure(&self, kind: FailureKind, e: &Entry, mutation: Option<usize>, ops: &str, src: &[u8], message: String) {
        let n = self.failure_seq.fetch_add(1, Ordering::SeqCst);
        let k = match kind {
            FailureKind::Panic => "panic",
            FailureKind::Crash => "crash",
        };
        let m = mutation.map(|m| format!("-m{m}")).unwrap_or_default();
        let name = format!("{n:04}-{k}-{}{m}.rb", sanitize(&e.rel));
        let saved = self.cfg.failures_dir.join(name);
        let _ = std::fs::write(&saved, src);
        let reproduce = match (kind, &self.cfg.runner) {
            (FailureKind::Panic, _) => format!("carmine -c {}", saved.display()),
            (FailureKind::Crash, Some(r)) => format!(
                "MSPEC_RUNNER=1 {} -W0 {}{}   (run it from a copy of {}: relative requires of fixtures resolve from the script's directory)",
                r.carmine.display(),
                r.prelude.as_ref().map(|p| format!("-r {} ", p.display())).unwrap_or_default(),
                saved.display(),
                e.abs.parent().map(|d| d.display().to_string()).unwrap_or_default()
            ),
            (FailureKind::Crash, None) => String::new(),
        };
        let info = format!(
            "kind: {k}\norigin: {}\nmutation: {}\nops: {ops}\nseed: {}\nreproduce: {reproduce}\n\n{message}\n",
            e.abs.display(),
            mutation.map(|m| m.to_string()).unwrap_or_else(|| "none (original file)".into()),
            self.cfg.seed
        );
        let _ = std::fs::write(saved.with_extension("txt"), info);
        eprintln!("carmine-fuzz: {k} in {}{m}: {} (saved as {})", e.rel.display(), message.lines().next().unwrap_or(""), saved.display());
        let mut s = self.summary.lock().unwrap_or_else(|p| p.into_inner());
        match kind {
            FailureKind::Panic => s.panics += 1,
            FailureKind::Crash => s.crashes += 1,
        }
        s.failures.push(Failure { kind, origin: e.abs.display().to_string(), mutation, ops: ops.to_string(), message, saved });
    }

    fn execute(&self, worker: usize, runner: &Runner, e: &Entry, mutation: Option<usize>, ops: &str, src: &[u8]) {
        let root = &self.roots[e.root];
        let script = match mutation {
            None => root.join(&e.rel),
            Some(m) => {
                let stem = e.rel.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
                let p = root.join(&e.rel).with_file_name(format!("{stem}__fuzz{worker}_{m}.rb"));
                if std::fs::write(&p, src).is_err() {
                    return;
                }
                p
            }
        };
        let cwd = self.cfg.scratch_dir.join(format!("cwd{worker}"));
        let tmp = self.cfg.scratch_dir.join(format!("tmp{worker}"));
        for d in [&cwd, &tmp] {
            let _ = std::fs::create_dir_all(d);
            if runner.uid.is_some() {
                let _ = std::fs::set_permissions(d, std::os::unix::fs::PermissionsExt::from_mode(0o777));
            }
        }
        let mut runner = runner.clone();
        runner.env.push(("CARMINE_FUZZ_TMP".into(), tmp.display().to_string()));
        runner.env.push(("TMPDIR".into(), tmp.display().to_string()));
        let outcome = runner.run(&script, &cwd);
        if mutation.is_some() {
            let _ = std::fs::remove_file(&script);
        }
        {
            let mut s = self.summary.lock().unwrap_or_else(|p| p.into_inner());
            s.executions += 1;
            if mutation.is_some() {
                s.executed_mutations += 1;
            }
            let what = match &outcome {
                ExecOutcome::Timeout => {
                    s.timeouts += 1;
                    Some("timeout".to_string())
                }
                ExecOutcome::OutOfMemory => {
                    s.out_of_memory += 1;
                    Some("out of memory".to_string())
                }
                ExecOutcome::Signalled(sig) => {
                    s.signalled += 1;
                    Some(format!("signal {sig}"))
                }
                ExecOutcome::SpawnError(_) => {
                    s.spawn_errors += 1;
                    None
                }
                _ => None,
            };
            if let Some(what) = what {
                let m = mutation.map(|m| format!(" mutation {m} [{ops}]")).unwrap_or_default();
                s.inconclusive.push(format!("{what}: {}{m}", e.abs.display()));
            }
        }
        match outcome {
            ExecOutcome::Crash { reason, stderr } => {
                let tail: String = stderr.lines().take(40).collect::<Vec<_>>().join("\n");
                self.record_failure(FailureKind::Crash, e, mutation, ops, src, format!("{reason}\n{tail}"));
            }
            ExecOutcome::SpawnError(msg) => eprintln!("carmine-fuzz: cannot run {}: {msg}", runner.carmine.display()),
            _ => {}
        }
    }

    fn compile(&self, worker: usize, comp: &mut Compiler, e: &Entry, mutation: Option<usize>, ops: &str, src: &[u8]) -> bool {
        let journal = self.cfg.failures_dir.join(format!("inflight-w{worker}.rb"));
        let _ = std::fs::write(&journal, src);
        let _ = std::fs::write(journal.with_extension("txt"), format!("origin: {}\nmutation: {mutation:?}\nops: {ops}\nseed: {}\n", e.abs.display(), self.cfg.seed));
        let path = e.abs.to_string_lossy().into_owned();
        let r = comp.compile(src, &path);
        {
            let mut s = self.summary.lock().unwrap_or_else(|p| p.into_inner());
            s.compiled += 1;
            if mutation.is_some() {
                s.mutations += 1;
            }
            if matches!(r, CompileResult::SyntaxError) {
                s.syntax_errors += 1;
            }
        }
        match r {
            CompileResult::Ok => true,
            CompileResult::SyntaxError => false,
            CompileResult::Panic(msg) => {
                self.record_failure(FailureKind::Panic, e, mutation, ops, src, msg);
                false
            }
        }
    }

    fn out_of_time(&self) -> bool {
        STOP_REQUESTED.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Compiles and runs one corpus file and its mutations. Returns false when the time
    /// limit stopped it part-way.
    fn process(&self, worker: usize, comp: &mut Compiler, idx: usize) -> bool {
        let e = &self.entries[idx];
        let Ok(src) = std::fs::read(&e.abs) else { return true };
        self.compile(worker, comp, e, None, "", &src);
        if self.cfg.exec_originals {
            if let Some(r) = &self.cfg.runner {
                self.execute(worker, r, e, None, "", &src);
            }
        }
        let file_seed = self.cfg.seed ^ fnv1a(e.rel.to_string_lossy().as_bytes());
        // With a limited number of executions, a reservoir sample of the mutations that
        // compile, filled up with syntax errors; otherwise every mutation that compiles
        // runs, and the first syntax error too (for the error report path).
        let want = if self.cfg.runner.is_some() { self.cfg.exec_mutations } else { Some(0) };
        let mut good: Vec<(usize, String, Vec<u8>)> = Vec::new();
        let mut good_seen = 0usize;
        let mut bad: Vec<(usize, String, Vec<u8>)> = Vec::new();
        let mut ran_syntax_error = false;
        let mut pick = Rng::new(file_seed ^ 0x5eed);
        for m in 0..self.cfg.mutations {
            if self.out_of_time() {
                return false;
            }
            let mut rng = Rng::new(file_seed.wrapping_add(m as u64));
            let donor_idx = rng.below(self.entries.len());
            let donor = if donor_idx == idx { Vec::new() } else { std::fs::read(&self.entries[donor_idx].abs).unwrap_or_default() };
            let (mutated, ops) = mutate::mutate(&mut rng, &src, &donor);
            let ops = ops.iter().map(|o| format!("{o:?}")).collect::<Vec<_>>().join(",");
            let ok = self.compile(worker, comp, e, Some(m), &ops, &mutated);
            match want {
                Some(0) => {}
                None => {
                    if ok || !ran_syntax_error {
                        ran_syntax_error |= !ok;
                        if let Some(r) = &self.cfg.runner {
                            self.execute(worker, r, e, Some(m), &ops, &mutated);
                        }
                    }
                }
                Some(want) => {
                    if ok {
                        good_seen += 1;
                        if good.len() < want {
                            good.push((m, ops, mutated));
                        } else {
                            let j = pick.below(good_seen);
                            if j < want {
                                good[j] = (m, ops, mutated);
                            }
                        }
                    } else if bad.len() < want {
                        bad.push((m, ops, mutated));
                    }
                }
            }
        }
        if let (Some(r), Some(want)) = (&self.cfg.runner, want) {
            let n_bad = want.saturating_sub(good.len());
            for (m, ops, src) in good.iter().chain(bad.iter().take(n_bad)) {
                if self.out_of_time() {
                    return false;
                }
                self.execute(worker, r, e, Some(*m), ops, src);
            }
        }
        let done = self.done.fetch_add(1, Ordering::SeqCst) + 1;
        if self.cfg.progress_every > 0 && (done % self.cfg.progress_every == 0 || done == self.entries.len()) {
            let s = self.summary.lock().unwrap_or_else(|p| p.into_inner());
            eprintln!(
                "carmine-fuzz: [{done}/{}] {:.0}s compiled {} executed {} timeouts {} panics {} crashes {}",
                self.entries.len(),
                self.started.elapsed().as_secs_f64(),
                s.compiled,
                s.executions,
                s.timeouts,
                s.panics,
                s.crashes
            );
        }
        true
    }
}

/// Runs the whole check and returns its summary (the caller decides the exit status).
pub fn run(cfg: &Config) -> std::io::Result<Summary> {
    let start = Instant::now();
    install_panic_hook();
    if cfg.stop_on_signal {
        install_stop_handler();
    }
    std::fs::create_dir_all(&cfg.failures_dir)?;
    std::fs::create_dir_all(&cfg.scratch_dir)?;
    // Leftovers of an earlier run (scripts write their temporary files there).
    if let Ok(rd) = std::fs::read_dir(&cfg.scratch_dir) {
        for e in rd.flatten() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
    let mut entries = Vec::new();
    let mut roots = Vec::new();
    for (i, p) in cfg.paths.iter().enumerate() {
        let copy = cfg.scratch_dir.join(format!("root{i}"));
        let _ = std::fs::remove_dir_all(&copy);
        let meta = std::fs::metadata(p)?;
        let (base, files) = if meta.is_dir() {
            let mut files = Vec::new();
            collect_rb(p, &mut files);
            if cfg.runner.is_some() {
                copy_tree(p, &copy)?;
            }
            (p.clone(), files)
        } else {
            let base = p.parent().map(|d| d.to_path_buf()).unwrap_or_else(|| PathBuf::from("."));
            if cfg.runner.is_some() {
                std::fs::create_dir_all(&copy)?;
                if let Some(name) = p.file_name() {
                    std::fs::copy(p, copy.join(name))?;
                }
            }
            (base, vec![p.clone()])
        };
        for f in files {
            let rel = f.strip_prefix(&base).map(|r| r.to_path_buf()).unwrap_or_else(|_| f.clone());
            if !cfg.only.is_empty() && !cfg.only.iter().any(|o| rel.to_string_lossy().contains(o.as_str())) {
                continue;
            }
            entries.push(Entry { root: i, rel, abs: f });
        }
        roots.push(copy);
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    if cfg.shuffle {
        let mut rng = Rng::new(cfg.seed ^ 0x04de5);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i + 1));
        }
    }
    let shared = Shared {
        cfg,
        entries,
        roots,
        order,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        summary: Mutex::new(Summary { seed: cfg.seed, ..Summary::default() }),
        failure_seq: AtomicUsize::new(0),
        started: start,
        deadline: cfg.time_limit.map(|t| start + t),
    };
    let jobs = cfg.jobs.clamp(1, 2);
    std::thread::scope(|s| {
        for w in 0..jobs {
            let shared = &shared;
            let spawned = std::thread::Builder::new().name(format!("carmine-fuzz-{w}")).stack_size(WORKER_STACK).spawn_scoped(s, move || {
                IN_WORKER.with(|f| f.set(true));
                let mut comp = Compiler { rt: None, compiles: 0 };
                loop {
                    if shared.out_of_time() {
                        break;
                    }
                    let i = shared.next.fetch_add(1, Ordering::SeqCst);
                    let Some(&idx) = shared.order.get(i) else { break };
                    if !shared.process(w, &mut comp, idx) {
                        break;
                    }
                }
                let journal = cfg.failures_dir.join(format!("inflight-w{w}.rb"));
                let _ = std::fs::remove_file(&journal);
                let _ = std::fs::remove_file(journal.with_extension("txt"));
            });
            if let Err(e) = spawned {
                eprintln!("carmine-fuzz: cannot start worker {w}: {e}");
            }
        }
    });
    let mut summary = shared.summary.into_inner().unwrap_or_else(|p| p.into_inner());
    summary.files = shared.entries.len();
    summary.files_done = shared.done.load(Ordering::SeqCst);
    summary.duration = start.elapsed();
    Ok(summary)
}
