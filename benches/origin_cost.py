#!/usr/bin/env python3
"""What a request's `Origin` costs the server, in instructions (callgrind).

Starts the server under callgrind, sends N keep-alive `tools/call echo`
requests on one connection (with or without `Origin`), stops it with
SIGINT (a graceful shutdown, so callgrind writes its counts), and reads
the total. Per-request cost is the difference of two runs (N and 3N
requests) divided by 2N, which cancels start-up and shutdown.

    benches/origin_cost.py target/release/quickstart [N]
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

BODY = (
    b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
    b'"arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}}'
)


def request(port, origin):
    head = [
        b"POST /mcp HTTP/1.1",
        b"Host: 127.0.0.1:%d" % port,
        b"Content-Type: application/json",
        b"Accept: application/json, text/event-stream",
        b"MCP-Protocol-Version: 2026-07-28",
        b"Mcp-Method: tools/call",
        b"Mcp-Name: echo",
        b"Content-Length: %d" % len(BODY),
    ]
    if origin:
        head.append(b"Origin: " + origin.encode())
    return b"\r\n".join(head) + b"\r\n\r\n" + BODY


def read_response(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, rest = data.split(b"\r\n\r\n", 1)
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length:"))
    while len(rest) < length:
        rest += conn.recv(65536)
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"unexpected answer: {head!r}")
    return head


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def instructions(binary, count, origin):
    port = free_port()
    out = tempfile.mktemp(suffix=".callgrind")
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
         "--http", f"127.0.0.1:{port}", "--rate-limit", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            conn = socket.create_connection(("127.0.0.1", port), timeout=30)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    message = request(port, origin)
    for _ in range(count):
        conn.sendall(message)
        head = read_response(conn)
    conn.close()
    server.send_signal(signal.SIGINT)
    server.wait(timeout=120)
    with open(out) as f:
        total = next(int(line.split()[1]) for line in f if line.startswith("totals:"))
    os.unlink(out)
    return total, head


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    for origin in (None, "http://localhost:6274"):
        low, _ = instructions(binary, n, origin)
        high, head = instructions(binary, 3 * n, origin)
        label = f"Origin: {origin}" if origin else "no Origin"
        print(f"{label}: {(high - low) / (2 * n):,.0f} instructions/request "
              f"({n} and {3 * n} requests: {low:,} and {high:,})")
        if origin:
            granted = b"access-control-allow-origin" in head.lower()
            print(f"  (answers {'carry' if granted else 'do not carry'} Access-Control-Allow-Origin)")


if __name__ == "__main__":
    main()
