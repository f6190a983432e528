//! `OTEL_TRACES_EXPORTER=console`: each span as a line on stderr, to look
//! at spans locally without a collector. On stderr, not on stdout as the
//! `opentelemetry-stdout` crate writes (it takes no other writer): on
//! stdio, stdout carries the protocol's frames only.

use std::fmt::Write as _;
use std::io::Write as _;

use opentelemetry::trace::{SpanId, Status};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

/// Writes the spans of each batch to stderr, a line each.
#[derive(Debug, Default)]
pub(super) struct ConsoleExporter;

impl SpanExporter for ConsoleExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let mut text = String::new();
        for span in &batch {
            line(&mut text, span);
        }
        // One write a batch, from the exporter's own thread: a stderr
        // nobody reads holds up the export, never a request.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
        Ok(())
    }
}

/// `span "tools/call echo" kind=Server trace=… span=… parent=… ms=0.412
/// mcp.method.name="tools/call" …`: values quoted and escaped (a client
/// chose some of them: a line break in a tool name stays `\n`).
fn line(out: &mut String, span: &SpanData) {
    let context = &span.span_context;
    let elapsed = span.end_time.duration_since(span.start_time);
    let millis = elapsed.unwrap_or_default().as_secs_f64() * 1000.0;
    let _ = write!(
        out,
        "span {:?} kind={:?} trace={} span={}",
        span.name,
        span.span_kind,
        context.trace_id(),
        context.span_id()
    );
    if span.parent_span_id != SpanId::INVALID {
        let _ = write!(out, " parent={}", span.parent_span_id);
    }
    let _ = write!(out, " ms={millis:.3}");
    match &span.status {
        Status::Error { description } if description.is_empty() => out.push_str(" status=ERROR"),
        Status::Error { description } => {
            let _ = write!(out, " status=ERROR {:?}", description.as_ref());
        }
        Status::Ok => out.push_str(" status=OK"),
        Status::Unset => {}
    }
    for kv in &span.attributes {
        let _ = write!(out, " {}={:?}", kv.key, kv.value.as_str());
    }
    for link in span.links.iter() {
        let linked = &link.span_context;
        let _ = write!(out, " link={}/{}", linked.trace_id(), linked.span_id());
    }
    out.push('\n');
}
