//! `server!()`'s link to the package's own library.
//!
//! Handlers register themselves at link time, and a binary links a crate
//! only if it names it: a package whose handlers live in `src/lib.rs` and
//! whose `main.rs` is `server!().run()` would serve nothing. So `server!()`
//! names the library (`extern crate my_server as _;`) whenever the target
//! being compiled is not the library itself and cargo links the library
//! into it, which it does for every binary, example, integration test and
//! benchmark of a package whose library is a Rust library.
//!
//! What cargo does is read from its own inputs: the environment it sets
//! for the compiler (`CARGO_*`) and the package's manifest. Outside cargo
//! (no `CARGO`), with a manifest that cannot be read, or a library that is
//! not linkable (`cdylib`, `staticlib` or `proc-macro` only), nothing is
//! emitted, and the server's startup warning names what to add instead.

use std::path::Path;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

/// What cargo says about the target being compiled.
#[derive(Debug, Default)]
pub(crate) struct Target {
    /// `CARGO_PKG_NAME`.
    package: String,
    /// `CARGO_CRATE_NAME`: the crate being compiled.
    krate: String,
    /// `CARGO_BIN_NAME` is set: a binary or binary example.
    binary: bool,
    /// `CARGO_TARGET_TMPDIR` is set: an integration test or benchmark.
    test_or_bench: bool,
}

/// The library's crate name, if the package has a library that cargo
/// links into the target being compiled (and it is not that library).
pub(crate) fn library_to_link(target: &Target, manifest: &str, has_lib_rs: bool) -> Option<String> {
    let manifest: toml::Table = manifest.parse().ok()?;
    let lib = manifest.get("lib").and_then(toml::Value::as_table);
    let autolib = manifest
        .get("package")
        .and_then(|p| p.get("autolib"))
        .and_then(toml::Value::as_bool)
        .unwrap_or(true);
    if lib.is_none() && !(autolib && has_lib_rs) {
        return None;
    }
    let flag = |key: &str, alias: &str| {
        lib.and_then(|l| l.get(key).or_else(|| l.get(alias)))
            .and_then(toml::Value::as_bool)
            .unwrap_or(false)
    };
    if flag("proc-macro", "proc_macro") {
        return None;
    }
    let crate_types = lib.and_then(|l| l.get("crate-type").or_else(|| l.get("crate_type")));
    if let Some(types) = crate_types.and_then(toml::Value::as_array) {
        let linkable = ["lib", "rlib", "dylib"];
        if !types
            .iter()
            .any(|t| t.as_str().is_some_and(|t| linkable.contains(&t)))
        {
            return None;
        }
    }
    let name = lib
        .and_then(|l| l.get("name"))
        .and_then(toml::Value::as_str)
        .map_or_else(|| target.package.replace('-', "_"), str::to_owned);
    let is_the_library = name == target.krate && !target.binary && !target.test_or_bench;
    (!is_the_library).then_some(name)
}

/// `extern crate <library> as _;` for the crate being compiled, or nothing.
pub(crate) fn expand() -> TokenStream {
    let var = |name: &str| std::env::var(name).ok();
    // Only cargo sets `CARGO` for the compiler; other build systems may set
    // some `CARGO_*` variables without linking the way cargo does.
    if var("CARGO").is_none() {
        return TokenStream::new();
    }
    let (Some(dir), Some(package), Some(krate)) = (
        var("CARGO_MANIFEST_DIR"),
        var("CARGO_PKG_NAME"),
        var("CARGO_CRATE_NAME"),
    ) else {
        return TokenStream::new();
    };
    let target = Target {
        package,
        krate,
        binary: var("CARGO_BIN_NAME").is_some(),
        test_or_bench: var("CARGO_TARGET_TMPDIR").is_some(),
    };
    let dir = Path::new(&dir);
    let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
        return TokenStream::new();
    };
    let has_lib_rs = dir.join("src").join("lib.rs").is_file();
    match library_to_link(&target, &manifest, has_lib_rs) {
        Some(name) => {
            let ident = Ident::new(&name, Span::call_site());
            quote! {
                #[allow(unused_extern_crates)]
                extern crate #ident as _;
            }
        }
        None => TokenStream::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(krate: &str, binary: bool, test_or_bench: bool) -> Target {
        Target {
            package: "my-server".into(),
            krate: krate.into(),
            binary,
            test_or_bench,
        }
    }

    const PLAIN: &str = "[package]\nname = \"my-server\"\nversion = \"0.1.0\"\n";

    #[test]
    fn a_binary_links_the_discovered_library() {
        let bin = target("my_server", true, false);
        assert_eq!(
            library_to_link(&bin, PLAIN, true).as_deref(),
            Some("my_server")
        );
        // Without src/lib.rs there is no library.
        assert_eq!(library_to_link(&bin, PLAIN, false), None);
        // Tests, benchmarks and examples link it too.
        let test = target("my_server", false, true);
        assert_eq!(
            library_to_link(&test, PLAIN, true).as_deref(),
            Some("my_server")
        );
        let example = target("demo", true, false);
        assert_eq!(
            library_to_link(&example, PLAIN, true).as_deref(),
            Some("my_server")
        );
    }

    #[test]
    fn the_library_itself_links_nothing() {
        let lib = target("my_server", false, false);
        assert_eq!(library_to_link(&lib, PLAIN, true), None);
    }

    #[test]
    fn the_lib_section_decides() {
        let bin = target("my_server", true, false);
        let renamed = format!("{PLAIN}[lib]\nname = \"handlers\"\npath = \"src/handlers.rs\"\n");
        assert_eq!(
            library_to_link(&bin, &renamed, false).as_deref(),
            Some("handlers")
        );
        let lib_as_handlers = target("handlers", false, false);
        assert_eq!(library_to_link(&lib_as_handlers, &renamed, false), None);
        let no_autolib = "[package]\nname = \"my-server\"\nautolib = false\n";
        assert_eq!(library_to_link(&bin, no_autolib, true), None);
        for unlinkable in [
            "[lib]\ncrate-type = [\"cdylib\"]\n",
            "[lib]\ncrate_type = [\"staticlib\"]\n",
            "[lib]\nproc-macro = true\n",
        ] {
            let manifest = format!("{PLAIN}{unlinkable}");
            assert_eq!(library_to_link(&bin, &manifest, true), None, "{unlinkable}");
        }
        let both = format!("{PLAIN}[lib]\ncrate-type = [\"cdylib\", \"rlib\"]\n");
        assert_eq!(
            library_to_link(&bin, &both, true).as_deref(),
            Some("my_server")
        );
        assert_eq!(library_to_link(&bin, "not [toml", true), None);
    }
}
