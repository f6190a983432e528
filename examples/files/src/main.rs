//! `files DIR`: serves the files of DIR over MCP (stdio, or `--http
//! ADDR`); `files DIR list`, `files DIR read URI`... inspect it.
//!
//! DIR is taken off the command line and opened here, before the server
//! runs: the catalog's provider and the watcher need it too, and the
//! server is given it as its state (`.state(files)`).

use std::process::ExitCode;

use mcp_runtime::catalog::{Catalog, Kind};

const USAGE: &str = "usage: files DIR [--http ADDR | SUBCOMMAND ...]\n\
serves the files under DIR; `files DIR --help` lists the options and subcommands";

fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let program = args.next().unwrap_or_else(|| "files".into());
    let Some(dir) = args
        .next()
        .filter(|dir| !dir.to_string_lossy().starts_with('-'))
    else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let files = match files::open(&dir) {
        Ok(files) => files,
        Err(error) => {
            eprintln!("error: cannot serve {}: {error}", dir.to_string_lossy());
            return ExitCode::FAILURE;
        }
    };
    let catalog = Catalog::of([Kind::Resources]);
    let provider = catalog
        .add_provider(
            "files",
            files::FileProvider::new(files.clone()),
            None::<&str>,
        )
        .expect("the catalog is empty");
    files.set_provider(provider.clone());
    // Held while the server runs; without it, changes on disk show on the
    // next write or restart.
    let _watcher = files::watch(files.clone(), provider)
        .inspect_err(|error| eprintln!("warning: changes on disk will not be announced: {error}"))
        .ok();
    mcp_runtime::server!()
        .title("Files")
        .description(format!("The files under {}", files.root().display()))
        .instructions(files::INSTRUCTIONS)
        .catalog(&catalog)
        .resource_subscriptions()
        .state(files)
        .run_with_args(std::iter::once(program).chain(args))
}
