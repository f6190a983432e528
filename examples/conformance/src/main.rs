//! Serves the conformance fixture (see the library).

fn main() -> std::process::ExitCode {
    conformance_server::builder().run()
}
