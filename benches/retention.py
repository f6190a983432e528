#!/usr/bin/env python3
"""The client of benches/retention.sh: opens N idle keep-alive connections to
an MCP server over HTTP, each after one answered request, closes them, and
reports the server's memory (/proc/PID/status) at each step, over several
cycles.

    retention.py HOST:PORT PID [--connections N] [--cycles C] [--settle S]
                 [--per-address N] [--idle S]

Prints one line per sample: `label<TAB>VmRSS KiB<TAB>RssAnon KiB<TAB>VmHWM KiB`
(the shell script tabulates them). Standard library only.
"""

import argparse
import json
import socket
import sys
import time


def status(pid):
    """VmRSS, RssAnon and VmHWM of `pid`, in KiB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "VmHWM"):
                fields[key] = int(value.split()[0])
    return fields["VmRSS"], fields["RssAnon"], fields["VmHWM"]


def sample(pid, label):
    rss, anon, hwm = status(pid)
    print(f"{label}\t{rss}\t{anon}\t{hwm}", flush=True)


META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request_bytes(host, port, index):
    """A keep-alive `tools/call echo` (the full handler path), its text made
    to differ a little between connections."""
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {
                "name": "echo",
                "arguments": {"text": f"idle connection {index}"},
                "_meta": META,
            },
        },
        separators=(",", ":"),
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        "MCP-Protocol-Version: 2026-07-28\r\n"
        "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def read_response(sock):
    """Reads one response with a Content-Length; returns its status."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the response head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    code = int(lines[0].split(" ")[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the response body")
        body += chunk
    return code


def source(index, per_address):
    """The client address of connection `index`: 127.1.0.1, 127.1.0.2, ...
    (all of 127.0.0.0/8 is loopback on Linux), `per_address` connections
    each, below the server's cap on connections per client address."""
    n = index // per_address + 1
    return f"127.1.{n // 256}.{n % 256}"


def open_idle(host, port, count, per_address):
    """`count` connections, each with one request answered, left open."""
    socks = []
    statuses = {}
    for index in range(count):
        sock = socket.create_connection(
            (host, port), timeout=10, source_address=(source(index, per_address), 0)
        )
        sock.sendall(request_bytes(host, port, index))
        code = read_response(sock)
        statuses[code] = statuses.get(code, 0) + 1
        socks.append(sock)
    return socks, statuses


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("address")
    parser.add_argument("pid", type=int)
    parser.add_argument("--connections", type=int, default=6000)
    parser.add_argument("--cycles", type=int, default=5)
    parser.add_argument(
        "--settle",
        type=float,
        default=3.0,
        help="seconds after closing before sampling (the server forgets a "
        "closed connection at its next sweep, every header_timeout / 8)",
    )
    parser.add_argument(
        "--per-address",
        type=int,
        default=200,
        help="connections per client address (the server caps them, 256 by default)",
    )
    parser.add_argument(
        "--idle",
        type=float,
        default=12.0,
        help="seconds idle after the last cycle before a last sample",
    )
    args = parser.parse_args()
    host, _, port = args.address.rpartition(":")
    port = int(port)

    sample(args.pid, "start")
    for cycle in range(1, args.cycles + 1):
        began = time.monotonic()
        socks, statuses = open_idle(host, port, args.connections, args.per_address)
        opened = time.monotonic() - began
        if statuses != {200: args.connections}:
            print(f"error: cycle {cycle}: statuses {statuses}", file=sys.stderr)
            sys.exit(1)
        # All of them idle for less than the server's head timeout (10 s by
        # default), which would close them itself.
        if opened > 8:
            print(
                f"warning: opening took {opened:.1f} s; the first connections "
                "may have been closed by the server's idle limit",
                file=sys.stderr,
            )
        time.sleep(0.5)
        sample(args.pid, f"cycle {cycle}: {args.connections} open")
        for sock in socks:
            sock.close()
        del socks
        time.sleep(args.settle)
        sample(args.pid, f"cycle {cycle}: closed")
    if args.idle > 0:
        time.sleep(args.idle)
        sample(args.pid, f"idle {args.idle:g} s more")


if __name__ == "__main__":
    main()
