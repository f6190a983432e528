"""The server's OpenTelemetry export, received by a real OTLP/HTTP endpoint.

Usage: check.py SERVER_BINARY

Starts an OTLP/HTTP receiver on a free loopback port that decodes what it is
sent with the official protobuf definitions (opentelemetry-proto), runs the
conformance fixture over stdio with OTEL_EXPORTER_OTLP_ENDPOINT pointing at
it, makes a tool call, a failing tool call, a resource read, a prompt get, a
two-round MRTR exchange, a task and its tasks/get, and an unknown method,
each in a trace of its own (the client's traceparent in `_meta`), then
closes stdin: the server flushes as it stops. Checks the spans (names,
kinds, attributes, parents, status) and the mcp.server.operation.duration
histogram. Exits non-zero with the reasons on any difference.
"""

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

received = {"spans": [], "metrics": [], "resources": []}
lock = threading.Lock()


class Receiver(BaseHTTPRequestHandler):
    """POST /v1/traces and /v1/metrics, protobuf bodies, as a collector."""

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/v1/traces":
            message = ExportTraceServiceRequest.FromString(body)
            with lock:
                for resource_spans in message.resource_spans:
                    received["resources"].append(resource_spans.resource)
                    for scope_spans in resource_spans.scope_spans:
                        received["spans"].extend(scope_spans.spans)
        elif self.path == "/v1/metrics":
            message = ExportMetricsServiceRequest.FromString(body)
            with lock:
                for resource_metrics in message.resource_metrics:
                    for scope_metrics in resource_metrics.scope_metrics:
                        received["metrics"].extend(scope_metrics.metrics)
        else:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def attributes(span):
    """A span's (or data point's) attributes as a dict of plain values."""
    out = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, kind) if kind else None
    return out


def server_env(endpoint):
    """The environment that turns export on, to the receiver."""
    env = dict(os.environ)
    env.update(
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
            "OTEL_BSP_SCHEDULE_DELAY": "100",
            "OTEL_METRIC_EXPORT_INTERVAL": "60000",
            "RUST_LOG": "warn",
        }
    )
    env.pop("OTEL_SERVICE_NAME", None)
    env.pop("OTEL_SDK_DISABLED", None)
    return env


def meta(traceparent, capabilities=None):
    return {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "otel-check", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
        "traceparent": traceparent,
        "tracestate": "check=1",
    }


class Client:
    """The fixture over stdio, one JSON-RPC line each way."""

    def __init__(self, binary, endpoint):
        env = server_env(endpoint)
        self.process = subprocess.Popen(
            [binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        self.next_id = 0

    def request(self, method, params, traceparent, capabilities=None):
        self.next_id += 1
        params = dict(params)
        params["_meta"] = meta(traceparent, capabilities)
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed stdout before answering {method}")
            answer = json.loads(line)
            if answer.get("id") == self.next_id:
                return answer

    def close(self):
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def trace():
    """A fresh trace id and client span id, and their traceparent."""
    trace_id, span_id = secrets.token_hex(16), secrets.token_hex(8)
    return trace_id, span_id, f"00-{trace_id}-{span_id}-01"


def exchange(client):
    """Makes the calls; what each expects of its span, by client span id."""
    expected = []

    def call(method, params, span_name, attrs, capabilities=None, error=None):
        trace_id, span_id, parent = trace()
        answer = client.request(method, params, parent, capabilities)
        expected.append((trace_id, span_id, span_name, attrs, error, "pipe"))
        return answer

    tool = {"gen_ai.tool.name": "test_simple_text", "gen_ai.operation.name": "execute_tool"}
    call("tools/call", {"name": "test_simple_text"}, "tools/call test_simple_text", tool)
    failing = {"gen_ai.tool.name": "test_error_handling", "error.type": "tool_error"}
    call("tools/call", {"name": "test_error_handling"}, "tools/call test_error_handling",
         failing, error="")
    call("resources/read", {"uri": "test://static-text"}, "resources/read",
         {"mcp.resource.uri": "test://static-text"})
    call("prompts/get", {"name": "test_simple_prompt"}, "prompts/get test_simple_prompt",
         {"gen_ai.prompt.name": "test_simple_prompt"})
    unknown = {"error.type": "-32601", "rpc.response.status_code": "-32601"}
    call("nothing/here", {}, "nothing/here", unknown, error="Method not found: nothing/here")

    # Two rounds of one MRTR exchange: one trace, a span per round.
    trace_id, first_id, parent = trace()
    name = "test_input_required_result_elicitation"
    caps = {"elicitation": {"form": {}}}
    first = client.request("tools/call", {"name": name}, parent, caps)
    if first.get("result", {}).get("resultType") != "input_required":
        raise SystemExit(f"the MRTR tool did not ask: {first}")
    key = next(iter(first["result"]["inputRequests"]))
    second_id = secrets.token_hex(8)
    params = {
        "name": name,
        "requestState": first["result"]["requestState"],
        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
    }
    second = client.request("tools/call", params, f"00-{trace_id}-{second_id}-01", caps)
    if second.get("result", {}).get("content", [{}])[0].get("text") != "Hello, Ada!":
        raise SystemExit(f"the MRTR tool did not answer: {second}")
    mrtr = {"gen_ai.tool.name": name}
    expected.append((trace_id, first_id, f"tools/call {name}", mrtr, None, "pipe"))
    expected.append((trace_id, second_id, f"tools/call {name}", mrtr, None, "pipe"))

    # A task, then its tasks/get: each its own span.
    tasks = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
    created = call("tools/call", {"name": "failing_job"}, "tools/call failing_job",
                   {"gen_ai.tool.name": "failing_job"}, tasks)
    if created.get("result", {}).get("resultType") != "task":
        raise SystemExit(f"no task was created: {created}")
    task_id = created["result"]["taskId"]
    call("tasks/get", {"taskId": task_id}, "tasks/get", {}, tasks)
    return expected


def http_exchange(binary, endpoint):
    """One tool call over Streamable HTTP, then SIGTERM (the server stops
    gracefully and flushes): what its span should be."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [binary, "--http", f"127.0.0.1:{port}"], env=server_env(endpoint)
    )
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            break
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("the HTTP server did not start")
            time.sleep(0.05)
    trace_id, span_id, parent = trace()
    params = {"name": "test_simple_text", "_meta": meta(parent)}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        data=body.encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "test_simple_text",
        },
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = response.read().decode()
    if "This is a simple text response" not in answer and '"content"' not in answer:
        raise SystemExit(f"the HTTP call was not answered: {answer}")
    process.send_signal(signal.SIGTERM)
    status = process.wait(timeout=30)
    tool = {"gen_ai.tool.name": "test_simple_text", "gen_ai.operation.name": "execute_tool"}
    return status, (trace_id, span_id, "tools/call test_simple_text", tool, None, "tcp")


def check_spans(expected, problems):
    by_parent = {span.parent_span_id.hex(): span for span in received["spans"]}
    for trace_id, parent_id, name, attrs, error, transport in expected:
        span = by_parent.get(parent_id)
        if span is None:
            problems.append(f"no span has the client's span {parent_id} as parent ({name})")
            continue
        got = attributes(span)
        checks = [
            (span.name, name, "name"),
            (span.trace_id.hex(), trace_id, "trace id"),
            (span.kind, Span.SPAN_KIND_SERVER, "kind"),
            (got.get("mcp.method.name"), name.split(" ")[0], "mcp.method.name"),
            (got.get("mcp.protocol.version"), "2026-07-28", "mcp.protocol.version"),
            (got.get("network.transport"), transport, "network.transport"),
        ]
        checks += [(got.get(key), value, key) for key, value in attrs.items()]
        if error is None:
            checks.append((span.status.code, Status.STATUS_CODE_UNSET, "status"))
            checks.append((got.get("error.type"), None, "no error.type"))
        else:
            checks.append((span.status.code, Status.STATUS_CODE_ERROR, "status"))
            checks.append((span.status.message, error, "status message"))
        if "jsonrpc.request.id" not in got:
            problems.append(f"{name}: no jsonrpc.request.id")
        for actual, wanted, what in checks:
            if actual != wanted:
                problems.append(f"{name}: {what} is {actual!r}, expected {wanted!r}")
    service = {
        attributes(resource).get("service.name") for resource in received["resources"]
    }
    if service != {"conformance-server"}:
        problems.append(f"service.name is {service}, expected the server's name")


def check_histogram(problems):
    histograms = [m for m in received["metrics"] if m.name == "mcp.server.operation.duration"]
    if not histograms:
        problems.append("no mcp.server.operation.duration metric was received")
        return
    points = {}
    for metric in histograms:
        if metric.unit != "s":
            problems.append(f"the histogram's unit is {metric.unit!r}, expected 's'")
        for point in metric.histogram.data_points:
            got = attributes(point)
            key = (got.get("mcp.method.name"), got.get("gen_ai.tool.name"))
            points[key + (got.get("network.transport"),)] = (point, got)
    wanted_bounds = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
    for key, count in [
        (("tools/call", "test_simple_text", "pipe"), 1),
        (("tools/call", "test_simple_text", "tcp"), 1),
        (("tools/call", "test_input_required_result_elicitation", "pipe"), 2),
        (("resources/read", None, "pipe"), 1),
        (("prompts/get", None, "pipe"), 1),
        (("nothing/here", None, "pipe"), 1),
    ]:
        if key not in points:
            problems.append(f"no histogram point for {key}; points: {sorted(points, key=str)}")
            continue
        point, got = points[key]
        if point.count != count:
            problems.append(f"{key}: count {point.count}, expected {count}")
        if list(point.explicit_bounds) != wanted_bounds:
            problems.append(f"{key}: bounds {list(point.explicit_bounds)}")
        if "jsonrpc.request.id" in got or "mcp.resource.uri" in got:
            problems.append(f"{key}: attributes {got}")
    failing = points.get(("tools/call", "test_error_handling", "pipe"))
    if failing is None or failing[1].get("error.type") != "tool_error":
        problems.append(f"the failing tool's point has no error.type tool_error: {failing}")


def main():
    binary = sys.argv[1]
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    client = Client(binary, endpoint)
    expected = exchange(client)
    status = client.close()
    problems = [] if status == 0 else [f"the stdio server exited with status {status}"]
    status, over_http = http_exchange(binary, endpoint)
    expected.append(over_http)
    if status != 0:
        problems.append(f"the HTTP server exited with status {status} on SIGTERM")
    receiver.shutdown()
    check_spans(expected, problems)
    check_histogram(problems)
    print(f"{len(received['spans'])} spans and {len(received['metrics'])} metrics received")
    if problems:
        for problem in problems:
            print(f"FAIL {problem}")
        sys.exit(1)
    print(f"all {len(expected)} server spans and the duration histogram are as the conventions say")


if __name__ == "__main__":
    main()
