//! Orders the `carmine` command's machine code: see `text_order.rs`.

include!("text_order.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=text_order.rs");
    link_text_order("bins");
}
