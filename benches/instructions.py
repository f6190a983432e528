#!/usr/bin/env python3
"""Instructions per request (callgrind) for the benchmark's HTTP workloads.

Starts a server under callgrind, sends N keep-alive requests of one
workload on one connection, stops it with SIGINT (a graceful shutdown, so
callgrind writes its counts), and reads the total. The per-request cost is
the difference of two runs (N and 3N requests) divided by 2N, which cancels
start-up and shutdown. Instructions do not move with the machine's speed,
so two builds can be compared on a noisy machine.

    benches/instructions.py target/release [workload ...] [--n N] [--origin O]

Workloads: echo, list, discover, mrtr (round 2 of `confirm_delete` with a
sealed `requestState`), layer-none, layer-noop, layer-timeout (echo under
no item layer, a no-op one, tower's timeout; layer-request-noop: the
no-op layer as a request layer), otel-off, otel-unsampled,
otel-sampled (echo in `bench-otel`, built with the `otel` feature, which
links `mcp-runtime-otel`: export
not started; started with the sampler at 0; everything sampled and
exported to a local OTLP/HTTP receiver; build it with `cargo build
--release -p mcp-bench --no-default-features --features otel --bin
bench-otel`), or all (the default, without the otel ones). `--keep DIR` keeps the larger
run's callgrind file of each workload there, for callgrind_annotate.
`--floor` measures the floor server instead (`floor-http`, answering the
bytes our server answers, captured first), for the gap between the two.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

# The benchmark's fixed requestState key (bench.rs's STATE_KEY).
STATE_KEY = "YmVuY2htYXJrIGtleSwgbm90IGEgc2VjcmV0ISEhISE="
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


def body(method, params):
    params = dict(params, _meta=META)
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
                      separators=(",", ":")).encode()


# name: (binary, method, Mcp-Name, params)
WORKLOADS = {
    "echo": ("quickstart", "tools/call", "echo", {"name": "echo", "arguments": {"text": "hello"}}),
    "list": ("bench-tools", "tools/list", None, {}),
    "discover": ("quickstart", "server/discover", None, {}),
    "mrtr": ("bench-mrtr", "tools/call", "confirm_delete",
             {"name": "confirm_delete", "arguments": {"path": "/tmp/x"}}),
    # The quickstart's echo in `bench-layers`, under no item layer (the
    # control), a no-op layer, and tower's timeout layer (BENCH_LAYER).
    "layer-none": ("bench-layers", "tools/call", "echo", {"name": "echo", "arguments": {"text": "hello"}}),
    "layer-noop": ("bench-layers", "tools/call", "echo", {"name": "echo", "arguments": {"text": "hello"}}),
    "layer-timeout": ("bench-layers", "tools/call", "echo", {"name": "echo", "arguments": {"text": "hello"}}),
    "layer-request-noop": ("bench-layers", "tools/call", "echo", {"name": "echo", "arguments": {"text": "hello"}}),
    # `bench-scoped`: an unscoped echo beside a scoped one (the control),
    # and the scoped one, under the built-in scope check.
    "scope-control": ("bench-scoped", "tools/call", "echo", {"name": "echo", "arguments": {"text": "hello"}}),
    "scope-check": ("bench-scoped", "tools/call", "echo_scoped",
                    {"name": "echo_scoped", "arguments": {"text": "hello"}}),
}

# The layer each `bench-layers` workload runs under.
LAYERS = {"layer-none": "none", "layer-noop": "noop", "layer-timeout": "timeout",
          "layer-request-noop": "request-noop"}

ECHO = {"name": "echo", "arguments": {"text": "hello"}}
for _otel in ("otel-off", "otel-unsampled", "otel-sampled"):
    WORKLOADS[_otel] = ("bench-otel", "tools/call", "echo", ECHO)

# The OTEL_* variables of each `bench-otel` workload ("{receiver}" is the
# local OTLP/HTTP receiver's base URL).
OTEL = {
    "otel-off": {},
    "otel-unsampled": {"OTEL_EXPORTER_OTLP_ENDPOINT": "{receiver}", "OTEL_TRACES_SAMPLER": "always_off"},
    "otel-sampled": {"OTEL_EXPORTER_OTLP_ENDPOINT": "{receiver}", "OTEL_TRACES_SAMPLER": "always_on",
                     "OTEL_BSP_SCHEDULE_DELAY": "100"},
}


def otlp_sink():
    """A local OTLP/HTTP receiver that takes every export (200, no body):
    what the exporter's work costs, without a collector's."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    import threading

    class Sink(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    sink = ThreadingHTTPServer(("127.0.0.1", 0), Sink)
    threading.Thread(target=sink.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{sink.server_address[1]}"


def request(port, method, name, payload, origin=None):
    head = [
        b"POST /mcp HTTP/1.1",
        b"Host: 127.0.0.1:%d" % port,
        b"Content-Type: application/json",
        b"Accept: application/json, text/event-stream",
        b"MCP-Protocol-Version: 2026-07-28",
        b"Mcp-Method: " + method.encode(),
    ]
    if name:
        head.append(b"Mcp-Name: " + name.encode())
    if origin:
        head.append(b"Origin: " + origin.encode())
    head.append(b"Content-Length: %d" % len(payload))
    return b"\r\n".join(head) + b"\r\n\r\n" + payload


def read_response(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            raise SystemExit("the server closed the connection")
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += conn.recv(65536)
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"unexpected answer: {head!r} {rest[:300]!r}")
    answer = json.loads(rest)
    if "result" not in answer:
        raise SystemExit(f"not a result: {rest[:300]!r}")
    return head, answer


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port):
    deadline = time.time() + 60
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=60)
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def server(command, port, answers=None, layer=None, otel=None):
    env = dict(os.environ, MCP_STATE_KEY=STATE_KEY)
    for name in [name for name in env if name.startswith("OTEL_")]:
        del env[name]
    env.update(otel or {})
    if layer:
        env["BENCH_LAYER"] = layer
    if answers:
        # The floor: `floor-http ADDR ANSWERS.json`.
        command = command + [f"127.0.0.1:{port}", answers]
    else:
        command = command + ["--http", f"127.0.0.1:{port}", "--rate-limit", "0"]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def answer_once(release, workload, params):
    """Our server's result for one request of `workload`."""
    binary, method, name, _ = WORKLOADS[workload]
    port = free_port()
    process = server([os.path.join(release, binary)], port)
    try:
        conn = connect(port)
        conn.sendall(request(port, method, name, body(method, params)))
        _, answer = read_response(conn)
        conn.close()
    finally:
        process.kill()
        process.wait()
    return answer["result"]


def floor_answers(release, workload, params):
    """An answers file for the floor: our server's result for the workload."""
    _, method, name, _ = WORKLOADS[workload]
    key = f"{method} {name}" if name else method
    result = answer_once(release, workload, params)
    handle, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(handle, "w") as f:
        json.dump({"results": {key: result}}, f)
    return path


def round_two(release):
    """The round-2 params of `confirm_delete`: round 1's sealed state, answered."""
    params = WORKLOADS["mrtr"][3]
    state = answer_once(release, "mrtr", params)["requestState"]
    return dict(params, inputResponses={"answer": {"action": "accept", "content": {"confirm": True}}},
                requestState=state)


def otel_env(workload):
    """The OTEL_* variables of a `bench-otel` workload, a receiver started
    for it when it exports."""
    wanted = OTEL.get(workload, {})
    if not wanted:
        return {}
    receiver = otlp_sink()
    return {name: value.format(receiver=receiver) for name, value in wanted.items()}


def instructions(release, workload, params, count, origin, keep, answers):
    binary, method, name, _ = WORKLOADS[workload]
    binary = "floor-http" if answers else binary
    port = free_port()
    out = tempfile.mktemp(suffix=".callgrind")
    # One core, as the benchmark pins it: the server then runs on one
    # thread, the path the benchmark measures.
    process = server(["taskset", "-c", "0", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                      os.path.join(release, binary)], port, answers, LAYERS.get(workload),
                     otel_env(workload))
    conn = connect(port)
    message = request(port, method, name, body(method, params), origin)
    for _ in range(count):
        conn.sendall(message)
        head, answer = read_response(conn)
    if answer["result"].get("resultType") != "complete":
        raise SystemExit(f"{workload}: not complete: {answer}")
    conn.close()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=300)
    with open(out) as f:
        total = next(int(line.split()[1]) for line in f if line.startswith("totals:"))
    if keep:
        shutil.move(out, os.path.join(keep, f"{workload}.callgrind"))
    else:
        os.unlink(out)
    return total, head


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release")
    parser.add_argument("workloads", nargs="*", default=["all"])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--origin")
    parser.add_argument("--keep")
    parser.add_argument("--floor", action="store_true")
    args = parser.parse_args()
    every = [name for name in WORKLOADS if name not in OTEL]
    names = every if args.workloads == ["all"] else args.workloads
    for workload in names:
        params = round_two(args.release) if workload == "mrtr" else WORKLOADS[workload][3]
        answers = floor_answers(args.release, workload, params) if args.floor else None
        low, _ = instructions(args.release, workload, params, args.n, args.origin, None, answers)
        high, head = instructions(args.release, workload, params, 3 * args.n, args.origin,
                                  args.keep, answers)
        if answers:
            os.unlink(answers)
        print(f"{workload}{' (floor)' if answers else ''}: {(high - low) / (2 * args.n):,.0f} instructions/request "
              f"({args.n} and {3 * args.n} requests: {low:,} and {high:,})", flush=True)
        if args.origin:
            granted = b"access-control-allow-origin" in head.lower()
            print(f"  (answers {'carry' if granted else 'do not carry'} Access-Control-Allow-Origin)")


if __name__ == "__main__":
    main()
