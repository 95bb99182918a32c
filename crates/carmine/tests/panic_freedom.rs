//! The fast subset of the panic-freedom check (crates/carmine-fuzz, docs/panic-freedom.md)
//! that runs with every `cargo test`: the fuzz seed corpus and the Ruby test files, each
//! compiled in-process together with a few hundred seeded mutations, and run in `carmine`
//! subprocesses with a sample of those mutations. A Rust panic, a fatal signal or a `[BUG]`
//! report fails the test; Ruby exceptions and timeouts do not. The seed is fixed, so a
//! failure here reproduces with the same command.

use std::path::{Path, PathBuf};
use std::time::Duration;

use carmine_fuzz::exec::{unprivileged_uid, Runner};
use carmine_fuzz::harness::{run, Config};

#[test]
fn seeded_mutations_neither_panic_nor_crash() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let fuzz = root.join("crates/carmine-fuzz");
    let scratch = std::env::temp_dir().join(format!("carmine-fuzz-ci-{}", std::process::id()));
    let carmine = PathBuf::from(env!("CARGO_BIN_EXE_carmine"));
    let runner = Runner {
        carmine: carmine.clone(),
        prelude: Some(carmine_fuzz::default_prelude()),
        timeout: Duration::from_secs(20),
        mem_limit: 4096 << 20,
        env: vec![("MSPEC_RUNNER".into(), "1".into())],
        // As root, mutations run as `nobody`: a mutated pid or path cannot reach the
        // harness's processes or files.
        uid: unprivileged_uid(&carmine),
    };
    let mut cfg = Config::new(vec![fuzz.join("corpus"), root.join("test")], 20261122, Some(runner));
    cfg.mutations = 8;
    cfg.exec_mutations = Some(1);
    cfg.failures_dir = scratch.join("failures");
    cfg.scratch_dir = scratch.join("scratch");
    cfg.progress_every = 0;
    let summary = run(&cfg).expect("the harness could not start");
    eprint!("{}", summary.report());
    assert!(summary.mutations >= 200, "too few mutations: {}", summary.mutations);
    assert!(summary.clean(), "the panic-freedom check failed (inputs saved under {}):\n{}", cfg.failures_dir.display(), summary.report());
    let _ = std::fs::remove_dir_all(&scratch);
}
