// Lays out machine code so that what runs is together; included by the build scripts of
// `carmine` (the command) and `carmine-embed` (libcarmine.so).
//
// `crates/carmine/text-order.txt` lists the functions that the command runs for `-e 0` and
// for the programs of `bench/programs`, most widely used first, by name without rustc's
// hash (`tools/text-order` regenerates it). The linker puts them at the start of `.text`
// in that order, the rest after. The kernel maps a file-backed page fault's whole
// neighbourhood (64 KiB or the page-cache folio), so executed code scattered across the
// 5 MB of text made most of it resident: 3 MB at `carmine -e 0`, against about 0.6 MB of
// functions that ran (docs/benchmarks.md, issue 13). The order changes where code lies,
// never what it does; a function missing from the file, or a name that no longer exists,
// only costs that gain.
//
// LLD wants the exact names, hash included, and the hashes change with the compiler, the
// build settings and the code; rustc therefore links through `tools/cc-text-order`
// (.cargo/config.toml), which matches the list to the names of the objects being linked.
// Only where rustc links with LLD by default (x86_64-unknown-linux-gnu, rustc 1.90 and
// later): the system's GNU ld has no symbol ordering. `CARMINE_NO_TEXT_ORDER=1` turns it
// off.

/// Prints the link arguments that order the text of this package's `kind` of output
/// (`bins`, `cdylib`), when the toolchain links with LLD.
fn link_text_order(kind: &str) {
    use std::path::Path;
    use std::process::Command;

    let rustc_minor = || -> Option<u32> {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let out = Command::new(rustc).arg("--version").output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let version = text.split_whitespace().nth(1)?;
        let mut parts = version.split('.');
        (parts.next()? == "1").then_some(())?;
        parts.next()?.parse().ok()
    };
    let order = Path::new(env!("CARGO_MANIFEST_DIR")).join("../carmine/text-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    println!("cargo:rerun-if-env-changed=CARMINE_NO_TEXT_ORDER");
    if std::env::var_os("CARMINE_NO_TEXT_ORDER").is_some_and(|v| v != "0") {
        return;
    }
    if std::env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") || rustc_minor().is_none_or(|m| m < 90) {
        return;
    }
    if let Ok(order) = order.canonicalize() {
        println!("cargo:rustc-link-arg-{kind}=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-{kind}=-Wl,--no-warn-symbol-ordering");
    }
}
