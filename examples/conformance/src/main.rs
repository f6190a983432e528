//! Serves the conformance fixture (see the library).

fn main() -> std::process::ExitCode {
    conformance_server::builder()
        // OpenTelemetry export when the OTEL_* variables ask (tests/otel).
        .with(mcp_runtime_otel::Otel::from_env())
        .run()
}
