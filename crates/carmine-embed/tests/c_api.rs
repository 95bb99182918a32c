//! Builds the C tests of libcarmine (`tests/c/embed_test.c`) against the library cargo just
//! built, the way docs/embedding.md tells a C program to (pkg-config with the generated
//! `carmine.pc`), and runs each group of checks; then links a program statically against
//! `libcarmine.a`, and runs the open/close test under valgrind (no definitely or
//! indirectly lost bytes).
//!
//! A C compiler, pkg-config and valgrind are installed with apt-get when missing (as root);
//! a test is skipped, with the reason printed, only if that is impossible.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// target/<profile>: where build.rs wrote carmine.pc and cargo put the carmine command.
fn lib_dir() -> PathBuf {
    deps_dir().parent().expect("target directory").to_path_buf()
}

/// target/<profile>/deps: where `cargo test` builds libcarmine.so and libcarmine.a (only
/// `cargo build` copies them up to target/<profile>).
fn deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent().expect("deps directory").to_path_buf()
}

fn have(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().is_ok_and(|o| o.status.success())
}

/// Makes `tool` available (installing Debian `package` as root when it is missing);
/// the reason it cannot be, otherwise.
fn ensure(tool: &str, package: &str) -> Result<(), String> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if have(tool) {
        return Ok(());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 || !have("apt-get") {
        return Err(format!("{tool} is missing and cannot be installed here (not root, or no apt-get)"));
    }
    let ok = Command::new("sh")
        .arg("-c")
        .arg(format!("DEBIAN_FRONTEND=noninteractive apt-get install -y -q {package} >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q {package} >/dev/null 2>&1)"))
        .status()
        .is_ok_and(|s| s.success());
    if ok && have(tool) {
        Ok(())
    } else {
        Err(format!("{tool} is missing and `apt-get install {package}` failed"))
    }
}

/// The C test program, built once; None (reason printed) if no C compiler can exist here.
fn test_binary() -> Option<&'static Path> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let r = BIN.get_or_init(|| {
        ensure("cc", "gcc")?;
        ensure("pkg-config", "pkg-config")?;
        let (lib, deps) = (lib_dir(), deps_dir());
        assert!(deps.join("libcarmine.so").exists(), "libcarmine.so not built in {}", deps.display());
        assert!(lib.join("carmine.pc").exists(), "carmine.pc not generated in {}", lib.display());
        let define = format!("--define-variable=libdir={}", deps.display());
        let flags = Command::new("pkg-config").args([define.as_str(), "--cflags", "--libs", "carmine"]).env("PKG_CONFIG_PATH", &lib).output().expect("pkg-config runs");
        assert!(flags.status.success(), "pkg-config --cflags --libs carmine failed: {}", String::from_utf8_lossy(&flags.stderr));
        let flags = String::from_utf8_lossy(&flags.stdout).into_owned();
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("embed_test");
        let src = manifest_dir().join("tests/c/embed_test.c");
        let status = Command::new("cc")
            .args(["-std=c11", "-D_GNU_SOURCE", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-o"])
            .arg(&out)
            .arg(&src)
            .args(flags.split_whitespace())
            .arg("-lpthread")
            .status()
            .expect("cc runs");
        assert!(status.success(), "compiling {} failed", src.display());
        Ok(out)
    });
    match r {
        Ok(p) => Some(p.as_path()),
        Err(why) => {
            println!("skipped: {why}");
            None
        }
    }
}

/// Runs one group of the C checks and asserts that it passed.
fn run_group(args: &[&str]) {
    let Some(bin) = test_binary() else { return };
    let mut cmd = Command::new(bin);
    // cargo's LD_LIBRARY_PATH names target/<profile>, which may hold an older copy; the
    // program's rpath names the library this test run built.
    cmd.env_remove("LD_LIBRARY_PATH");
    // The carmine command (built by `cargo test --workspace`), for `carmine --compile`.
    let carmine = lib_dir().join("carmine");
    if carmine.exists() {
        cmd.env("CARMINE_BIN", carmine);
    }
    let out = cmd.args(args).output().expect("embed_test runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    assert!(out.status.success(), "C test `{}` failed ({:?}):\n{}{}", args.join(" "), out.status, stdout, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains(&format!("ok {}", args[0])), "C test `{}` did not finish", args[0]);
}

#[test]
fn values() {
    run_group(&["values"]);
}

#[test]
fn arrays() {
    run_group(&["arrays"]);
}

#[test]
fn hashes() {
    run_group(&["hashes"]);
}

#[test]
fn methods_defined_in_c() {
    run_group(&["methods"]);
}

#[test]
fn exceptions_as_data() {
    run_group(&["exceptions"]);
}

#[test]
fn limits() {
    run_group(&["limits"]);
}

#[test]
fn isolation() {
    run_group(&["isolation"]);
}

#[test]
fn scripts_compiled_once() {
    run_group(&["scripts"]);
}

#[test]
fn output() {
    run_group(&["output"]);
}

#[test]
fn gc_rules() {
    run_group(&["gc"]);
}

#[test]
fn threads_one_vm_each() {
    run_group(&["threads"]);
}

/// Scripts loaded from `carmine --compile` output (skipped, saying so, when the carmine
/// command was not built alongside).
#[test]
fn precompiled_bytecode() {
    run_group(&["bytecode"]);
}

#[test]
fn suspendable_runs() {
    run_group(&["tasks"]);
}

#[test]
fn forked() {
    run_group(&["forked"]);
}

#[test]
fn open_close_1000_vms() {
    run_group(&["lifecycle", "1000"]);
}

/// The C test program, when valgrind is there to run it (installed when missing).
fn under_valgrind() -> Option<&'static Path> {
    let bin = test_binary()?;
    if let Err(why) = ensure("valgrind", "valgrind") {
        println!("skipped: {why}");
        return None;
    }
    Some(bin)
}

/// Opening and closing VMs frees everything: valgrind finds no definitely or indirectly
/// lost bytes and no memory errors (100 VMs here; docs/embedding.md records 1,000).
#[test]
fn open_close_under_valgrind() {
    let Some(bin) = under_valgrind() else { return };
    let out = Command::new("valgrind")
        .env_remove("LD_LIBRARY_PATH")
        .args(["--leak-check=full", "--show-leak-kinds=definite,indirect", "--errors-for-leak-kinds=definite,indirect", "--error-exitcode=99"])
        .arg(bin)
        .args(["lifecycle", "100"])
        .output()
        .expect("valgrind runs");
    let report = String::from_utf8_lossy(&out.stderr);
    let summary: String = report.lines().filter(|l| l.contains("lost:") || l.contains("ERROR SUMMARY")).collect::<Vec<_>>().join("\n");
    println!("{summary}");
    assert!(out.status.success(), "valgrind reported leaks or errors ({:?}):\n{report}", out.status);
    assert!(report.contains("definitely lost: 0 bytes") || report.contains("All heap blocks were freed"), "{report}");
}

/// A VM made in a forked child (a daemonizing server) works under valgrind, where the
/// child's main stack is reported a few KiB deep once it grew (heap/stack_scan.rs).
#[test]
fn forked_child_under_valgrind() {
    let Some(bin) = under_valgrind() else { return };
    let out = Command::new("valgrind").env_remove("LD_LIBRARY_PATH").args(["--tool=none", "-q"]).arg(bin).arg("forked").output().expect("valgrind runs");
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && report.contains("ok forked"), "{:?}:\n{report}", out.status);
}

/// The static library links into a C program with the flags pkg-config gives for it.
#[test]
fn static_library_links() {
    if test_binary().is_none() {
        return;
    }
    let lib = lib_dir();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let src = dir.join("static_main.c");
    std::fs::write(
        &src,
        "#include <carmine.h>\n#include <string.h>\nint main(void) {\n  carmine_vm *vm = carmine_open();\n  carmine_value r;\n  const char *s = \"[1, 2, 3].sum * 7\";\n  int ok = carmine_eval(vm, s, strlen(s), \"static.rb\", &r) == CARMINE_OK;\n  int64_t i = 0;\n  ok = ok && carmine_to_int(vm, r, &i) == CARMINE_OK && i == 42;\n  carmine_close(vm);\n  return ok ? 0 : 1;\n}\n",
    )
    .expect("write static_main.c");
    let flags = Command::new("pkg-config").args(["--static", "--libs-only-l", "carmine"]).env("PKG_CONFIG_PATH", &lib).output().expect("pkg-config runs");
    let libs = String::from_utf8_lossy(&flags.stdout).replace("-lcarmine", "");
    let exe = dir.join("static_main");
    let status = Command::new("cc")
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .arg(format!("-I{}", manifest_dir().join("include").display()))
        .arg(deps_dir().join("libcarmine.a"))
        .args(libs.split_whitespace())
        .status()
        .expect("cc runs");
    assert!(status.success(), "linking against libcarmine.a failed");
    let run = Command::new(&exe).status().expect("static_main runs");
    assert!(run.success(), "the statically linked program failed");
}
