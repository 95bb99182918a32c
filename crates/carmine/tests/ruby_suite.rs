//! Runs every Ruby test file under `test/` (`*_test.rb`) with the carmine binary, each in
//! its own process. The second test runs them all again with `CARMINE_GC_STRESS=1`
//! (`GC.stress = true` from the start: a collection at every allocation) to find missing
//! GC roots. A file that outlives its time limit is killed with its process group and
//! reported with the processes that were left; it runs once more before it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use carmine_fuzz::exec::output_reporting_hangs;

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out);
        } else if p.file_name().is_some_and(|n| n.to_string_lossy().ends_with("_test.rb")) {
            out.push(p);
        }
    }
}

fn run_suite(stress: bool) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_carmine"));
    let mut files = Vec::new();
    collect(&root.join("test"), &mut files);
    assert!(!files.is_empty(), "no test files found");
    // A file that runs longer is reported as hung (GC.stress makes some files minutes long).
    let limit = Duration::from_secs(if stress { 1200 } else { 300 });
    let mut failed = Vec::new();
    for f in &files {
        let build = || {
            let mut cmd = Command::new(&exe);
            cmd.arg(f).current_dir(&root).env("CARMINE", &exe);
            if stress {
                cmd.env("CARMINE_GC_STRESS", "1");
            }
            cmd
        };
        match output_reporting_hangs(build, limit) {
            Ok(out) if out.status.success() => {}
            Ok(out) => failed.push(format!("{}: exit {:?}\n{}{}", f.display(), out.status.code(), String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))),
            Err(e) => failed.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failed.is_empty(), "{} of {} Ruby test files failed:\n{}", failed.len(), files.len(), failed.join("\n"));
}

#[test]
fn ruby_tests() {
    run_suite(false);
}

/// The whole suite again with a collection at every allocation.
#[test]
fn ruby_tests_under_gc_stress() {
    run_suite(true);
}
