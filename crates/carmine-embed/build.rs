//! Writes `carmine.pc` next to the built library (`target/<profile>/carmine.pc`), naming
//! this source tree's `include/` and that directory, so that a C program builds with
//! `PKG_CONFIG_PATH=target/release pkg-config --cflags --libs carmine`. An installed copy
//! is written by `crates/carmine-embed/install.sh`. Also orders libcarmine.so's machine
//! code as the `carmine` command's is (`crates/carmine/text_order.rs`).

use std::path::PathBuf;

include!("../carmine/text_order.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=../carmine/text_order.rs");
    link_text_order("cdylib");
    println!("cargo:rerun-if-changed=carmine.pc.in");
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    // OUT_DIR is target/<profile>/build/<pkg>-<hash>/out.
    let Some(libdir) = out.ancestors().nth(3) else { return };
    let template = std::fs::read_to_string(manifest.join("carmine.pc.in")).unwrap_or_default();
    let pc = template
        .replace("@INCLUDEDIR@", &manifest.join("include").to_string_lossy())
        .replace("@LIBDIR@", &libdir.to_string_lossy())
        .replace("@VERSION@", &std::env::var("CARGO_PKG_VERSION").unwrap_or_default());
    // A failed write leaves the library usable; the .pc is a convenience.
    let _ = std::fs::write(libdir.join("carmine.pc"), pc);
}
