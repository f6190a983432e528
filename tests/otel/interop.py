"""A trace started by the official Python SDK's client continues in our
server's spans.

Usage: interop.py SERVER_BINARY

The client is `mcp` from PyPI (pinned in requirements.txt) with its own
OpenTelemetry instrumentation, under an OpenTelemetry SDK tracer provider
that keeps its spans in memory. Inside an "agent" span of its own it calls
a tool of the conformance fixture over Streamable HTTP; the fixture exports
to the OTLP/HTTP receiver of check.py. The server span of the call must be
in the client's trace, its parent the SDK's CLIENT span, and the answer the
tool's. Exits non-zero with the reasons on any difference.
"""

import asyncio
import signal
import sys
import threading
from http.server import ThreadingHTTPServer

from mcp import Client
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

import check

TOOL = "test_simple_text"


async def call(port):
    """The SDK's client calls the tool inside an agent span: its text."""
    tracer = trace.get_tracer("interop-agent")
    with tracer.start_as_current_span("agent"):
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            result = await client.call_tool(TOOL, {})
    return [getattr(block, "text", None) for block in result.content]


def client_span(exporter):
    """The SDK's CLIENT span of the tool call."""
    spans = [
        span
        for span in exporter.get_finished_spans()
        if span.kind == SpanKind.CLIENT
        and span.attributes.get("mcp.method.name") == "tools/call"
    ]
    if len(spans) != 1:
        names = [(span.name, span.kind) for span in exporter.get_finished_spans()]
        raise SystemExit(f"expected one CLIENT span of tools/call, got: {names}")
    return spans[0]


def main():
    binary = sys.argv[1]
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), check.Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)

    process, port = check.start_http(binary, check.server_env(endpoint))
    try:
        texts = asyncio.run(call(port))
    finally:
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=30)
    receiver.shutdown()

    problems = [] if status == 0 else [f"the server exited with status {status}"]
    if texts != ["This is a simple text response for testing."]:
        problems.append(f"the tool answered {texts}")
    sent = client_span(exporter)
    trace_id = format(sent.context.trace_id, "032x")
    span_id = format(sent.context.span_id, "016x")
    ours = [span for span in check.received["spans"] if span.name == f"tools/call {TOOL}"]
    if len(ours) != 1:
        problems.append(f"expected one server span of the call, got {len(ours)}")
    for span in ours:
        if span.trace_id.hex() != trace_id:
            problems.append(f"the server span's trace is {span.trace_id.hex()}, the client's {trace_id}")
        if span.parent_span_id.hex() != span_id:
            problems.append(
                f"the server span's parent is {span.parent_span_id.hex()}, "
                f"the SDK's CLIENT span is {span_id}"
            )
        if span.kind != check.Span.SPAN_KIND_SERVER:
            problems.append(f"the server span's kind is {span.kind}")
    if problems:
        for problem in problems:
            print(f"FAIL {problem}")
        sys.exit(1)
    print(
        f"the Python SDK's trace {trace_id} continues in the server: "
        f"its span is the child of the SDK's CLIENT span {span_id}"
    )


if __name__ == "__main__":
    main()
