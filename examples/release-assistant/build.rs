//! Rebuilds the crate when a file is added to or removed from `skills/`:
//! `skills!` embeds each file with `include_bytes!`, so cargo already
//! rebuilds when one changes, but a proc macro cannot (on stable Rust) ask
//! cargo to watch a directory. `rerun-if-changed` on the directory does.

fn main() {
    println!("cargo::rerun-if-changed=skills");
}
