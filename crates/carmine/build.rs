//! Lays out the `carmine` command's machine code so that what runs is together.
//!
//! `text-order.txt` lists the functions that the command runs for `-e 0` and for the
//! programs of `bench/programs`, most widely used first (`tools/text-order` regenerates
//! it). The linker puts them at the start of `.text` in that order, the rest after. The
//! kernel maps a file-backed page fault's whole neighbourhood (64 KiB or the page-cache
//! folio), so executed code scattered across the 5 MB of text made most of it resident:
//! 3.5 MB at `carmine -e 0`, against about 0.6 MB of functions that ran (docs/benchmarks.md,
//! issue 13). The order changes where code lies, never what it does; a function missing
//! from the file, or a name that no longer exists, only costs that gain.
//!
//! Only where rustc links with LLD by default (x86_64-unknown-linux-gnu, rustc 1.90 and
//! later): the system's GNU ld has no symbol ordering. `CARMINE_NO_TEXT_ORDER=1` turns it
//! off.

use std::path::Path;
use std::process::Command;

fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    (parts.next()? == "1").then_some(())?;
    parts.next()?.parse().ok()
}

fn main() {
    println!("cargo:rerun-if-changed=text-order.txt");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CARMINE_NO_TEXT_ORDER");
    if std::env::var_os("CARMINE_NO_TEXT_ORDER").is_some_and(|v| v != "0") {
        return;
    }
    if std::env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") || rustc_minor().is_none_or(|m| m < 90) {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let order = Path::new(&dir).join("text-order.txt");
    if order.is_file() {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
