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
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status
from prometheus_client.parser import text_string_to_metric_families

received = {"spans": [], "metrics": [], "resources": []}
lock = threading.Lock()
# What each notification sent should be a span of: (trace id, client span
# id, method, network.transport, protocol version).
notified = []


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

    def __init__(self, binary, endpoint, extra=None, env=None, stderr=None):
        env = env or dict(server_env(endpoint), **(extra or {}))
        self.process = subprocess.Popen(
            [binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=env,
            text=True,
        )
        self.next_id = 0

    def request(self, method, params, traceparent, capabilities=None):
        self.next_id += 1
        params = dict(params)
        params["_meta"] = meta(traceparent, capabilities)
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return self.send(message)

    def send(self, message):
        """Sends a request as it is; its answer."""
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit(f"the server closed stdout before answering {message['method']}")
            answer = json.loads(line)
            if answer.get("id") == message["id"]:
                return answer

    def notify(self, method, params, traceparent):
        params = dict(params, _meta=meta(traceparent))
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

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
    # A tool nobody serves: the span carries the name as sent, the
    # histogram `_OTHER` (check_histogram).
    missing = {"gen_ai.tool.name": "no_such_tool", "error.type": "-32602"}
    call("tools/call", {"name": "no_such_tool"}, "tools/call no_such_tool", missing,
         error="Unknown tool: no_such_tool")

    # A notification (cancelling nothing in flight): a span with no id.
    trace_id, span_id, parent = trace()
    client.notify("notifications/cancelled", {"requestId": 999}, parent)
    notified.append((trace_id, span_id, "notifications/cancelled", "pipe", "2026-07-28"))

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
    # The work's span ends with the work (about a second): wait for it.
    deadline = time.monotonic() + 15
    while True:
        got = client.request("tasks/get", {"taskId": task_id}, trace()[2], tasks)
        if got.get("result", {}).get("status") in ("completed", "failed", "cancelled"):
            break
        if time.monotonic() > deadline:
            raise SystemExit(f"the task did not end: {got}")
        time.sleep(0.1)
    return expected


def http_post(port, message, traceparent=None):
    """POSTs one message to the MCP endpoint, with an HTTP `traceparent`
    header when given; the status and the answer's text."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": message["method"],
    }
    params = message.get("params", {})
    if "name" in params or "uri" in params:
        headers["Mcp-Name"] = params.get("name", params.get("uri"))
    if traceparent:
        headers["traceparent"] = traceparent
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=json.dumps(message).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode()


def http_exchange(binary, endpoint):
    """Over Streamable HTTP: a tool call with trace context in both `_meta`
    and the HTTP `traceparent` header (the span's parent is `_meta`'s, the
    header's a link), one with the header only (its parent), and a
    notification; then SIGTERM (the server stops gracefully and flushes).
    What the spans should be, and the link expected."""
    process, port = start_http(binary, server_env(endpoint))
    tool = {"gen_ai.tool.name": "test_simple_text", "gen_ai.operation.name": "execute_tool"}
    expected = []
    trace_id, span_id, parent = trace()
    link_trace, link_span, header = trace()
    params = {"name": "test_simple_text", "_meta": meta(parent)}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    _, answer = http_post(port, message, header)
    if '"content"' not in answer:
        raise SystemExit(f"the HTTP call was not answered: {answer}")
    expected.append((trace_id, span_id, "tools/call test_simple_text", tool, None, "tcp"))
    link = (span_id, link_trace, link_span)

    trace_id, span_id, header = trace()
    params = {"name": "test_simple_text", "_meta": meta(None)}
    del params["_meta"]["traceparent"], params["_meta"]["tracestate"]
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}
    _, answer = http_post(port, message, header)
    if '"content"' not in answer:
        raise SystemExit(f"the second HTTP call was not answered: {answer}")
    expected.append((trace_id, span_id, "tools/call test_simple_text", tool, None, "tcp"))

    trace_id, span_id, parent = trace()
    message = {"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": 5, "_meta": {"traceparent": parent}}}
    status, _ = http_post(port, message)
    if status != 202:
        raise SystemExit(f"the HTTP notification was answered {status}, expected 202")
    notified.append((trace_id, span_id, "notifications/cancelled", "tcp", "2026-07-28"))
    process.send_signal(signal.SIGTERM)
    status = process.wait(timeout=30)
    return status, expected, link


def legacy_exchange(binary, endpoint):
    """A client of the 2025-11-25 revision over stdio (initialize, then a
    tool call with its traceparent in `_meta`): its call is a span as a
    modern one is, with the session's protocol version."""
    process = subprocess.Popen(
        [binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=server_env(endpoint), text=True
    )

    def send(message):
        process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()

    def answer(wanted):
        while True:
            line = process.stdout.readline()
            if not line:
                raise SystemExit("the legacy server closed stdout")
            message = json.loads(line)
            if message.get("id") == wanted:
                return message

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "otel-legacy", "version": "1.0.0"}}})
    if answer(1).get("result", {}).get("protocolVersion") != "2025-11-25":
        raise SystemExit("the legacy handshake failed")
    trace_id, span_id, parent = trace()
    send({"jsonrpc": "2.0", "method": "notifications/initialized",
          "params": {"_meta": {"traceparent": parent}}})
    notified.append((trace_id, span_id, "notifications/initialized", "pipe", "2025-11-25"))
    trace_id, span_id, parent = trace()
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "test_simple_text", "arguments": {}, "_meta": {"traceparent": parent}}})
    if "result" not in answer(2):
        raise SystemExit("the legacy tool call failed")
    process.stdin.close()
    status = process.wait(timeout=30)
    tool = {"gen_ai.tool.name": "test_simple_text", "gen_ai.operation.name": "execute_tool",
            "mcp.protocol.version": "2025-11-25"}
    return status, (trace_id, span_id, "tools/call test_simple_text", tool, None, "pipe")


def inspector_exchange(binary, endpoint, problems):
    """`SERVER call TOOL` (the inspector, in process) with export on: it
    prints the trace id, and that trace holds its own span, the CLIENT span
    of the call under it and the SERVER span under that."""
    run = subprocess.run(
        [binary, "call", "test_simple_text"],
        env=server_env(endpoint),
        capture_output=True,
        text=True,
        timeout=60,
    )
    printed = [line.split()[1] for line in run.stderr.splitlines() if line.startswith("trace ")]
    if run.returncode != 0 or len(printed) != 1:
        problems.append(f"the inspector: status {run.returncode}, stderr {run.stderr!r}")
        return
    trace_id = printed[0]
    with lock:
        spans = [span for span in received["spans"] if span.trace_id.hex() == trace_id]
    by_name = {span.name: span for span in spans}
    root = by_name.get("inspect call")
    client = next((s for s in spans if s.kind == Span.SPAN_KIND_CLIENT), None)
    server = next((s for s in spans if s.kind == Span.SPAN_KIND_SERVER), None)
    if root is None or client is None or server is None:
        problems.append(f"the inspector's trace {trace_id}: {[(s.name, s.kind) for s in spans]}")
        return
    if client.parent_span_id != root.span_id or server.parent_span_id != client.span_id:
        problems.append(f"the inspector's trace {trace_id} is not root > client > server")
    if client.name != "tools/call test_simple_text" or server.name != client.name:
        problems.append(f"the inspector's spans are named {client.name!r} and {server.name!r}")


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
            (got.get("mcp.protocol.version"), attrs.get("mcp.protocol.version", "2026-07-28"),
             "mcp.protocol.version"),
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


def check_no_source_paths(problems):
    """No span or span event names a source file: the build machine's
    paths (`code.file.path`, absolute for a dependency built from the
    registry) are not the collector's business."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for span in received["spans"]:
        for where, kvs in [("span", span)] + [(f"event {e.name!r}", e) for e in span.events]:
            for key, value in attributes(kvs).items():
                text = str(value)
                if key.startswith("code.file") or text.startswith("/") or root in text \
                        or text.endswith(".rs"):
                    problems.append(f"{span.name}: {where} attribute {key} = {text!r}")


def check_notifications(problems):
    """Each notification is a SERVER span named by its method, its parent
    the client's span, with no request id."""
    by_parent = {span.parent_span_id.hex(): span for span in received["spans"]}
    for trace_id, parent_id, method, transport, version in notified:
        span = by_parent.get(parent_id)
        if span is None:
            problems.append(f"no span has the client's span {parent_id} as parent ({method})")
            continue
        got = attributes(span)
        checks = [
            (span.name, method, "name"),
            (span.trace_id.hex(), trace_id, "trace id"),
            (span.kind, Span.SPAN_KIND_SERVER, "kind"),
            (got.get("mcp.method.name"), method, "mcp.method.name"),
            (got.get("mcp.protocol.version"), version, "mcp.protocol.version"),
            (got.get("network.transport"), transport, "network.transport"),
            (got.get("jsonrpc.request.id"), None, "no jsonrpc.request.id"),
            (span.status.code, Status.STATUS_CODE_UNSET, "status"),
        ]
        for actual, wanted, what in checks:
            if actual != wanted:
                problems.append(f"{method} ({transport}): {what} is {actual!r}, expected {wanted!r}")


def check_http_link(link, problems):
    """The span whose parent is `_meta`'s links the HTTP request's own
    context (the `traceparent` header)."""
    parent_id, link_trace, link_span = link
    span = next((s for s in received["spans"] if s.parent_span_id.hex() == parent_id), None)
    links = [(l.trace_id.hex(), l.span_id.hex()) for l in span.links] if span else None
    if links != [(link_trace, link_span)]:
        problems.append(f"the HTTP call's span links {links}, expected the header's context")


def check_task_link(expected, problems):
    """The task's work is a span of its own (`task failing_job`, INTERNAL),
    in a trace of its own, linked to the request span that created it."""
    parents = [parent for _, parent, name, *_ in expected if name == "tools/call failing_job"]
    by_parent = {span.parent_span_id.hex(): span for span in received["spans"]}
    request = by_parent.get(parents[0]) if parents else None
    if request is None:
        problems.append("no request span for the task's creation")
        return
    work = [span for span in received["spans"] if span.name == "task failing_job"]
    if len(work) != 1:
        names = sorted(span.name for span in received["spans"])
        problems.append(f"expected one 'task failing_job' span, got {len(work)}; spans: {names}")
        return
    span = work[0]
    links = [(link.trace_id.hex(), link.span_id.hex()) for link in span.links]
    if links != [(request.trace_id.hex(), request.span_id.hex())]:
        problems.append(f"the task span's links are {links}, expected the creating request's span")
    if span.kind != Span.SPAN_KIND_INTERNAL or span.parent_span_id:
        problems.append(f"the task span: kind {span.kind}, parent {span.parent_span_id.hex()!r}")
    got = attributes(span)
    if got.get("gen_ai.tool.name") != "failing_job" or not got.get("mcp.task.id"):
        problems.append(f"the task span's attributes: {got}")


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
        (("tools/call", "test_simple_text", "tcp"), 2),
        (("tools/call", "test_input_required_result_elicitation", "pipe"), 2),
        (("resources/read", None, "pipe"), 1),
        (("prompts/get", None, "pipe"), 1),
        (("_OTHER", None, "pipe"), 1),
        (("tools/call", "_OTHER", "pipe"), 1),
        (("notifications/cancelled", None, "pipe"), 1),
        (("notifications/cancelled", None, "tcp"), 1),
        (("notifications/initialized", None, "pipe"), 1),
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
    sent = [key for key in points if "nothing/here" in key or "no_such_tool" in key]
    if sent:
        problems.append(f"names nobody serves are series of their own: {sent}")
    failing = points.get(("tools/call", "test_error_handling", "pipe"))
    if failing is None or failing[1].get("error.type") != "tool_error":
        problems.append(f"the failing tool's point has no error.type tool_error: {failing}")


def unsampled_exchange(binary, problems):
    """The fixture over stdio with the sampler at 0 (OTEL_TRACES_SAMPLER=
    always_off) and a fresh receiver: no span at all, and the histogram's
    points for a tool call, a tool error, an unknown tool and method and a
    list page all the same (the server records them with a request
    observer rather than a layer there)."""
    with lock:
        for kind in received.values():
            kind.clear()
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    client = Client(binary, endpoint, {"OTEL_TRACES_SAMPLER": "always_off"})
    answers = []
    for method, params in [
        ("tools/call", {"name": "test_simple_text"}),
        ("tools/call", {"name": "test_simple_text"}),
        ("tools/call", {"name": "test_error_handling"}),
        ("tools/call", {"name": "no_such_tool"}),
        ("nothing/here", {}),
        ("tools/list", {}),
    ]:
        answers.append(client.request(method, params, trace()[2]))
    status = client.close()
    receiver.shutdown()
    if status != 0:
        problems.append(f"the unsampled server exited with status {status}")
    if received["spans"]:
        problems.append(f"the sampler at 0 still exported {len(received['spans'])} spans")
    points = {}
    for metric in received["metrics"]:
        if metric.name == "mcp.server.operation.duration":
            for point in metric.histogram.data_points:
                got = attributes(point)
                key = (got.get("mcp.method.name"), got.get("gen_ai.tool.name"),
                       got.get("error.type"), got.get("network.transport"))
                points[key] = point.count
    wanted = {
        ("tools/call", "test_simple_text", None, "pipe"): 2,
        ("tools/call", "test_error_handling", "tool_error", "pipe"): 1,
        ("tools/call", "_OTHER", "-32602", "pipe"): 1,
        ("_OTHER", None, "-32601", "pipe"): 1,
        ("tools/list", None, None, "pipe"): 1,
    }
    if points != wanted:
        problems.append(f"sampler at 0: histogram points {points}, expected {wanted}")
    if [bool(answer.get("result")) for answer in answers] != [True, True, True, False, False, True]:
        problems.append(f"sampler at 0: answers {answers}")


# Each method the fixture serves (a tool call, a tool error, a read of a
# resource and of a template's, a prompt, a completion, the lists, the
# discovery, a method nobody serves), and its span's name.
SERVED = [
    ("server/discover", {}, "server/discover"),
    ("tools/list", {}, "tools/list"),
    ("tools/call", {"name": "test_simple_text"}, "tools/call test_simple_text"),
    ("tools/call", {"name": "test_error_handling"}, "tools/call test_error_handling"),
    ("resources/list", {}, "resources/list"),
    ("resources/templates/list", {}, "resources/templates/list"),
    ("resources/read", {"uri": "test://static-text"}, "resources/read"),
    ("resources/read", {"uri": "test://template/7/data"}, "resources/read"),
    ("prompts/list", {}, "prompts/list"),
    ("prompts/get", {"name": "test_simple_prompt"}, "prompts/get test_simple_prompt"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                             "argument": {"name": "arg1", "value": "te"}}, "completion/complete"),
    ("nothing/here", {}, "nothing/here"),
]

# RUST_LOG values, and whether each turns the audit events on: what is
# logged must not change what is exported.
LEVELS = [(None, False), ("info", True), ("debug", True), ("warn,mcp::audit=info", True),
          ("info,mcp::audit=off", False)]


def levels_exchange(binary, problems):
    """Each method the fixture serves, over stdio and HTTP, at each RUST_LOG
    of LEVELS, to a fresh receiver: every request is a SERVER span (its
    parent the client's span), whatever is logged; the audit events are on
    where the level says (an `mcp::audit` line on stderr), off elsewhere."""
    with lock:
        for kind in received.values():
            kind.clear()
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    sent = []
    for level, audited in LEVELS:
        env = server_env(endpoint)
        env.pop("RUST_LOG")
        if level is not None:
            env["RUST_LOG"] = level
        for transport, run in [("pipe", served_over_stdio), ("tcp", served_over_http)]:
            status, logged, spans = run(binary, env)
            where = f"RUST_LOG={level} ({transport})"
            if status != 0:
                problems.append(f"{where}: the server exited with status {status}")
            if ("mcp::audit" in logged) != audited:
                problems.append(f"{where}: audit events {'missing' if audited else 'logged'}")
            sent += [(where, name, parent) for name, parent in spans]
    receiver.shutdown()
    print(f"{len(sent)} requests at {len(LEVELS)} RUST_LOG values, over stdio and HTTP")
    by_parent = {}
    for span in received["spans"]:
        by_parent.setdefault(span.parent_span_id.hex(), []).append(span)
    for where, name, parent in sent:
        got = [(span.name, span.kind) for span in by_parent.get(parent, [])]
        if got != [(name, Span.SPAN_KIND_SERVER)]:
            problems.append(f"{where}: {name}: spans under the client's {got}")


def served_over_stdio(binary, env):
    """SERVED over stdio: the exit status, stderr, and (span name, client
    span id) of each request."""
    with tempfile.TemporaryFile("w+") as log:
        client = Client(binary, None, env=env, stderr=log)
        spans = []
        for method, params, name in SERVED:
            _, span_id, parent = trace()
            client.request(method, params, parent)
            spans.append((name, span_id))
        status = client.close()
        log.seek(0)
        return status, log.read(), spans


def served_over_http(binary, env):
    """SERVED over Streamable HTTP, then SIGTERM: as served_over_stdio."""
    with tempfile.TemporaryFile("w+") as log:
        port = free_port()
        process = subprocess.Popen([binary, "--http", f"127.0.0.1:{port}"], env=env,
                                   stderr=log)
        wait_listening(process, port)
        spans = []
        for id, (method, params, name) in enumerate(SERVED, 1):
            _, span_id, parent = trace()
            message = {"jsonrpc": "2.0", "id": id, "method": method,
                       "params": dict(params, _meta=meta(parent))}
            try:
                http_post(port, message)
            except urllib.error.HTTPError:
                pass  # the method nobody serves: its span is checked all the same
            spans.append((name, span_id))
        process.send_signal(signal.SIGTERM)
        status = process.wait(timeout=30)
        log.seek(0)
        return status, log.read(), spans


def wait_listening(process, port):
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit("the HTTP server did not start")
            time.sleep(0.05)


def made_up_exchange(binary, problems):
    """What a client can make up, 200 of each, to a fresh receiver, with
    spans and with the sampler at 0: protocol versions (refused), methods,
    tool and prompt names. The duration histogram keeps five series, with
    `_OTHER` in place of each made-up value; none is a series of its own."""
    for extra in [{}, {"OTEL_TRACES_SAMPLER": "always_off"}]:
        with lock:
            for kind in received.values():
                kind.clear()
        receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        client = Client(binary, f"http://127.0.0.1:{receiver.server_address[1]}", extra)
        for i in range(200):
            for version, method, params in [
                (f"1999-01-{i}", "tools/call", {"name": f"made_up_{i}"}),
                (f"1999-02-{i}", f"made/up/{i}", {}),
                ("2026-07-28", f"made/up/{i}", {}),
                ("2026-07-28", "tools/call", {"name": f"made_up_{i}"}),
                ("2026-07-28", "prompts/get", {"name": f"made_up_{i}"}),
            ]:
                client.next_id += 1
                params = dict(params, _meta=dict(meta(trace()[2]), **{
                    "io.modelcontextprotocol/protocolVersion": version}))
                answer = client.send({"jsonrpc": "2.0", "id": client.next_id,
                                      "method": method, "params": params})
                if "error" not in answer:
                    problems.append(f"made-up {method} {version} was answered {answer}")
        status = client.close()
        receiver.shutdown()
        where = f"made-up values ({extra or 'spans'})"
        if status != 0:
            problems.append(f"{where}: the server exited with status {status}")
        series = set()
        for metric in received["metrics"]:
            if metric.name == "mcp.server.operation.duration":
                for point in metric.histogram.data_points:
                    series.add(tuple(sorted(attributes(point).items())))
        made_up = [s for s in series if any("1999-" in str(v) or "made" in str(v) for _, v in s)]
        if made_up or len(series) != 5:
            problems.append(f"{where}: {len(series)} series, made up in {made_up[:3]}")


def console_exchange(binary, problems):
    """OTEL_TRACES_EXPORTER=console, no collector, over stdio: a tool call's
    span is a line on stderr (its name, kind, trace and parent), and
    stdout carries the protocol's frames only."""
    env = server_env("")
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT")
    env["OTEL_TRACES_EXPORTER"] = "console"
    trace_id, span_id, parent = trace()
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
               "params": {"name": "test_simple_text", "_meta": meta(parent)}}
    run = subprocess.run([binary], input=json.dumps(message) + "\n", env=env,
                         capture_output=True, text=True, timeout=60)
    frames = [json.loads(line) for line in run.stdout.splitlines()]
    if run.returncode != 0 or [frame.get("id") for frame in frames] != [1]:
        problems.append(f"console: status {run.returncode}, stdout {run.stdout!r}")
    lines = [line for line in run.stderr.splitlines() if line.startswith("span ")]
    wanted = [f'span "tools/call test_simple_text" kind=Server trace={trace_id} span=',
              f" parent={span_id} ", ' mcp.method.name="tools/call"']
    if len(lines) != 1 or not all(part in lines[0] for part in wanted):
        problems.append(f"console: span lines on stderr {lines}, stderr {run.stderr!r}")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_http(binary, env):
    """The fixture over HTTP on a free loopback port, once it listens."""
    port = free_port()
    process = subprocess.Popen([binary, "--http", f"127.0.0.1:{port}"], env=env)
    wait_listening(process, port)
    return process, port


def raw_status(port, head):
    """Sends a request head as given; the status of the answer."""
    with socket.create_connection(("127.0.0.1", port), 5) as connection:
        connection.sendall(head.encode())
        return int(connection.recv(4096).split(b" ", 2)[1])


def post_mcp(port, method, params, name=None, origin=None):
    params = dict(params, _meta=meta(trace()[2]))
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
    }
    if name:
        headers["Mcp-Name"] = name
    if origin:
        headers["Origin"] = origin
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=body.encode(), headers=headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def scrape(port, host=None):
    """GET /metrics: the status and the text."""
    headers = {"Host": host} if host else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""


def prometheus_exchange(binary, problems):
    """The fixture over HTTP with OTEL_METRICS_EXPORTER=prometheus and no
    collector: a tool call, a prompt, a refused Origin and a body over the
    limit, then a scrape parsed with prometheus_client's text parser."""
    metrics_port = free_port()
    env = server_env("")
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT")
    env.update(
        {
            "OTEL_METRICS_EXPORTER": "prometheus",
            "OTEL_EXPORTER_PROMETHEUS_HOST": "127.0.0.1",
            "OTEL_EXPORTER_PROMETHEUS_PORT": str(metrics_port),
        }
    )
    process, port = start_http(binary, env)
    try:
        statuses = [
            post_mcp(port, "tools/call", {"name": "test_simple_text"}, "test_simple_text"),
            post_mcp(port, "prompts/get", {"name": "test_simple_prompt"}, "test_simple_prompt"),
            post_mcp(port, "tools/list", {}, origin="http://evil.example"),
            raw_status(port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n"),
        ]
        if statuses != [200, 200, 403, 413]:
            problems.append(f"prometheus run: statuses {statuses}, expected [200, 200, 403, 413]")
        check_scrape_refusals(metrics_port, problems)
        status, text = scrape(metrics_port)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    if status != 200:
        problems.append(f"the scrape answered {status}")
        return
    check_families(text, problems)


def check_scrape_refusals(port, problems):
    """The endpoint answers loopback names only, and /metrics only."""
    if (got := scrape(port, host="evil.example")[0]) != 403:
        problems.append(f"a scrape with Host evil.example got {got}, expected 403")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        kind = response.headers.get("Content-Type", "")
        if not kind.startswith("text/plain; version=0.0.4"):
            problems.append(f"the scrape's Content-Type is {kind!r}")
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=10)
        problems.append("/other was answered")
    except urllib.error.HTTPError as error:
        if error.code != 404:
            problems.append(f"/other got {error.code}, expected 404")


def check_families(text, problems):
    families = {family.name: family for family in text_string_to_metric_families(text)}
    wanted = {
        "mcp_server_operation_duration_seconds": "histogram",
        "mcp_runtime_refusals": "counter",
        "mcp_runtime_requests_active": "gauge",
        "mcp_runtime_tasks_running": "gauge",
        "mcp_runtime_subscriptions_open": "gauge",
        "mcp_runtime_shared_store_errors": "counter",
    }
    for name, kind in wanted.items():
        if name not in families:
            problems.append(f"no {name} family in the scrape; families: {sorted(families)}")
        elif families[name].type != kind:
            problems.append(f"{name} is a {families[name].type}, expected a {kind}")
    if problems:
        return
    counts = {}
    for sample in families["mcp_server_operation_duration_seconds"].samples:
        if sample.name.endswith("_count"):
            labels = sample.labels
            key = (labels.get("mcp_method_name"), labels.get("gen_ai_tool_name"),
                   labels.get("gen_ai_prompt_name"), labels.get("network_transport"),
                   labels.get("mcp_protocol_version"))
            counts[key] = sample.value
    for key in [("tools/call", "test_simple_text", None, "tcp", "2026-07-28"),
                ("prompts/get", None, "test_simple_prompt", "tcp", "2026-07-28")]:
        if counts.get(key) != 1:
            problems.append(f"duration count for {key} is {counts.get(key)}; counts: {counts}")
    refusals = {
        (s.labels.get("reason"), s.labels.get("http_response_status_code")): s.value
        for s in families["mcp_runtime_refusals"].samples
        if s.name == "mcp_runtime_refusals_total"
    }
    for key in [("origin", "403"), ("too_large", "413")]:
        if refusals.get(key) != 1:
            problems.append(f"refusals {key}: {refusals.get(key)}; all: {refusals}")
    if refusals.get(("busy", "503")) != 0:
        problems.append(f"refusals busy should be 0: {refusals}")


def main():
    binary = sys.argv[1]
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    endpoint = f"http://127.0.0.1:{receiver.server_address[1]}"
    client = Client(binary, endpoint)
    expected = exchange(client)
    status = client.close()
    problems = [] if status == 0 else [f"the stdio server exited with status {status}"]
    inspector_exchange(binary, endpoint, problems)
    status, legacy = legacy_exchange(binary, endpoint)
    expected.append(legacy)
    if status != 0:
        problems.append(f"the legacy stdio server exited with status {status}")
    status, over_http, link = http_exchange(binary, endpoint)
    expected += over_http
    if status != 0:
        problems.append(f"the HTTP server exited with status {status} on SIGTERM")
    receiver.shutdown()
    check_spans(expected, problems)
    check_task_link(expected, problems)
    check_notifications(problems)
    check_no_source_paths(problems)
    check_http_link(link, problems)
    check_histogram(problems)
    print(f"{len(received['spans'])} spans and {len(received['metrics'])} metrics received")
    unsampled_exchange(binary, problems)
    levels_exchange(binary, problems)
    made_up_exchange(binary, problems)
    console_exchange(binary, problems)
    prometheus_exchange(binary, problems)
    if problems:
        for problem in problems:
            print(f"FAIL {problem}")
        sys.exit(1)
    print(f"all {len(expected)} request spans, {len(notified)} notification spans, the HTTP link"
          " and the duration histogram are as the conventions say, the sampler at 0 exports"
          " no span and the same histogram, and the Prometheus scrape parses with the names"
          " and labels expected")


if __name__ == "__main__":
    main()
