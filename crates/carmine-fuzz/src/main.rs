//! `carmine-fuzz`: the panic-freedom check from the command line.
//!
//!     carmine-fuzz [options] PATH...
//!
//! See `usage()` and docs/panic-freedom.md.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use carmine_fuzz::exec::{sibling_carmine, Runner, NOBODY};
use carmine_fuzz::harness::{run, Config};

fn usage() -> &'static str {
    "Usage: carmine-fuzz [options] PATH...   (files or directories of .rb)
  --seed N             seed of all random choices (default: from the clock; printed)
  --mutations N        mutations per file (default 5), each compiled in-process
  --exec-mutations N   how many of them also run in a subprocess (default: every one that
                       compiles, plus the first syntax error)
  --no-exec            compile only (no subprocesses)
  --no-exec-originals  do not execute the original files
  --carmine PATH       the carmine binary (default: next to this executable)
  --prelude PATH       file required with -r before each script (default: the spec-DSL prelude)
  --no-prelude         run scripts without a prelude
  --timeout SECS       per execution (default 10); a timeout is counted, not a failure
  --mem-limit MB       address-space limit of each subprocess (default 4096)
  --no-sandbox         when run as root, run the scripts as root too (default: as nobody)
  --jobs N             parallel workers, at most 2 (default 1)
  --seconds N          stop starting new work after N seconds (the summary says how far it got;
                       Ctrl-C stops early the same way)
  --shuffle            visit the files in a seeded random order (with --seconds: a different
                       sample for each seed)
  --failures DIR       where failing inputs are saved (default /tmp/carmine-fuzz-failures)
  --scratch DIR        scratch space (default /tmp/carmine-fuzz-scratch)
  --only SUBSTR        only files whose path contains SUBSTR (repeatable)
  --progress N         progress line every N files (default 100; 0 = none)"
}

fn parse() -> Result<(Config, bool), String> {
    let mut args = std::env::args().skip(1);
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1) % 1_000_000_007;
    let mut cfg = Config::new(Vec::new(), seed, None);
    cfg.stop_on_signal = true;
    let mut exec = true;
    let mut sandbox = true;
    let mut carmine: Option<PathBuf> = None;
    let mut prelude = Some(carmine_fuzz::default_prelude());
    let mut timeout = 10.0f64;
    let mut mem_mb = 4096u64;
    fn num<T: std::str::FromStr>(v: Option<String>, what: &str) -> Result<T, String> {
        v.ok_or(format!("{what} needs a value"))?.parse::<T>().map_err(|_| format!("bad value for {what}"))
    }
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seed" => cfg.seed = num(args.next(), "--seed")?,
            "--mutations" => cfg.mutations = num(args.next(), "--mutations")?,
            "--exec-mutations" => cfg.exec_mutations = Some(num(args.next(), "--exec-mutations")?),
            "--seconds" => cfg.time_limit = Some(Duration::from_secs_f64(num(args.next(), "--seconds")?)),
            "--shuffle" => cfg.shuffle = true,
            "--no-exec" => exec = false,
            "--no-sandbox" => sandbox = false,
            "--no-exec-originals" => cfg.exec_originals = false,
            "--carmine" => carmine = Some(PathBuf::from(args.next().ok_or("--carmine needs a path")?)),
            "--prelude" => prelude = Some(PathBuf::from(args.next().ok_or("--prelude needs a path")?)),
            "--no-prelude" => prelude = None,
            "--timeout" => timeout = num(args.next(), "--timeout")?,
            "--mem-limit" => mem_mb = num(args.next(), "--mem-limit")?,
            "--jobs" => cfg.jobs = num(args.next(), "--jobs")?,
            "--failures" => cfg.failures_dir = PathBuf::from(args.next().ok_or("--failures needs a path")?),
            "--scratch" => cfg.scratch_dir = PathBuf::from(args.next().ok_or("--scratch needs a path")?),
            "--only" => cfg.only.push(args.next().ok_or("--only needs a value")?),
            "--progress" => cfg.progress_every = num(args.next(), "--progress")?,
            "-h" | "--help" => return Err(usage().into()),
            s if s.starts_with('-') => return Err(format!("unknown option {s}\n{}", usage())),
            _ => cfg.paths.push(PathBuf::from(a)),
        }
    }
    if cfg.paths.is_empty() {
        return Err(usage().into());
    }
    if exec {
        let Some(bin) = carmine.or_else(sibling_carmine) else {
            return Err("carmine-fuzz: no carmine binary next to this executable; build it or pass --carmine PATH (or --no-exec)".into());
        };
        let prelude = prelude.map(|p| std::fs::canonicalize(&p).unwrap_or(p));
        cfg.runner = Some(Runner {
            carmine: bin,
            prelude,
            timeout: Duration::from_secs_f64(timeout),
            mem_limit: mem_mb << 20,
            env: vec![("MSPEC_RUNNER".into(), "1".into())],
            // SAFETY: geteuid has no preconditions.
            uid: (sandbox && unsafe { libc::geteuid() } == 0).then_some(NOBODY),
        });
    }
    Ok((cfg, exec))
}

fn main() -> ExitCode {
    let (cfg, _) = match parse() {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    eprintln!(
        "carmine-fuzz: seed {} ({} mutations/file, {} executed/file, {}); failing inputs go to {}; if the harness itself dies, its in-flight input is {}/inflight-w*.rb",
        cfg.seed,
        cfg.mutations,
        cfg.exec_mutations.map(|n| n.to_string()).unwrap_or_else(|| "all that compile".into()),
        cfg.runner.as_ref().map(|r| format!("running {}", r.carmine.display())).unwrap_or_else(|| "no execution".into()),
        cfg.failures_dir.display(),
        cfg.failures_dir.display()
    );
    match run(&cfg) {
        Ok(summary) => {
            print!("{}", summary.report());
            if summary.clean() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("carmine-fuzz: {e}");
            ExitCode::from(2)
        }
    }
}
