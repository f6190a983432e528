#!/usr/bin/env python3
"""The load of benches/soak.sh: well-behaved MCP clients on 127.0.0.1 and
hostile ones on 127.0.0.2, against one server over HTTP on loopback, with
the server's memory sampled every second.

    soak.py HOST:PORT PID

Standard library only (asyncio and raw sockets: the hostile clients need
bytes no client library sends). Settings come from the environment (see
soak.sh). Prints a report; exits 1 when a target is missed: a well-behaved
request that failed (any status but 200, 429 and 503 included, a JSON-RPC
error, a wrong answer, a reset, a timeout), or server RSS at the end more
than SOAK_RSS_TOLERANCE above or below its level just after the warm-up.
"""

import asyncio
import collections
import json
import os
import random
import sys
import time


def env(name, default, kind=float):
    value = os.environ.get(name)
    return kind(value) if value not in (None, "") else default


SECONDS = env("SOAK_SECONDS", 600.0)
WARMUP = env("SOAK_WARMUP", 120.0)
CLIENTS = env("SOAK_CLIENTS", 8, int)
# Requests per second from all well-behaved clients together; about half
# are tool calls, so 40 stays well below the default limit of 50 tool
# calls per second per client address (bursts of 100).
RATE = env("SOAK_RATE", 40.0)
TIMEOUT = env("SOAK_TIMEOUT", 10.0)
RECONNECT = env("SOAK_RECONNECT", 200, int)
HOSTILE = os.environ.get("SOAK_HOSTILE_ADDRESS", "127.0.0.2")
SLOW_BODIES = env("SOAK_SLOW_BODIES", 64, int)
SLOWLORIS = env("SOAK_SLOWLORIS", 64, int)
TRICKLE = env("SOAK_TRICKLE_SECONDS", 3.0)
SLOW_CALLS = env("SOAK_SLOW_CALLS", 50.0)
SLOW_CALLS_MAX = env("SOAK_SLOW_CALLS_MAX", 6000, int)
JUNK = env("SOAK_JUNK", 5.0)
# The pool floods: from each of SOAK_FLOOD_ADDRESSES more addresses
# (127.0.0.3 on), SOAK_FLOOD_EACH slow calls and as many
# `subscriptions/listen` streams held open, each opened again a second
# after the server refuses or ends it. 8 x 128 was every slot of the
# default 1,024 in flight, and 2 x 128 every one of the 256 streams.
FLOOD_ADDRESSES = env("SOAK_FLOOD_ADDRESSES", 8, int)
FLOOD_EACH = env("SOAK_FLOOD_EACH", 128, int)
# How often a well-behaved client (127.0.0.1) opens a listen stream of its
# own and checks it is acknowledged.
LISTEN_EVERY = env("SOAK_LISTEN_EVERY", 2.0)
RSS_TOLERANCE = env("SOAK_RSS_TOLERANCE", 0.10)

VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": VERSION,
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
}


class Failure(Exception):
    """A well-behaved request that did not get its answer; `kind` groups
    failures in the report."""

    def __init__(self, kind, detail=""):
        super().__init__(kind)
        self.kind = kind
        self.detail = detail


# ---------------------------------------------------------------- HTTP/1.1


def body_bytes(method, params, ident):
    params = dict(params)
    params["_meta"] = META
    return json.dumps(
        {"jsonrpc": "2.0", "id": ident, "method": method, "params": params},
        separators=(",", ":"),
    ).encode()


def request_bytes(authority, method, name, body, close=False):
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {authority}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {VERSION}\r\nMcp-Method: {method}\r\n"
    )
    if name is not None:
        head += f"Mcp-Name: {name}\r\n"
    if close:
        head += "Connection: close\r\n"
    head += f"Content-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


async def read_response(reader):
    """(status, headers, body) of one response: Content-Length, chunked, or
    until the connection closes."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        raise Failure(
            "connection closed before the response"
            if not error.partial
            else "connection closed inside the response head"
        ) from None
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise Failure("malformed status line", lines[0][:80])
    status = int(parts[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
    try:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";")[0].strip(), 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    break
                body += await reader.readexactly(size)
                await reader.readexactly(2)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:
            body = await reader.read()
    except asyncio.IncompleteReadError:
        raise Failure("connection closed inside the response body") from None
    return status, headers, body


def message_of(headers, body, ident):
    """The JSON-RPC response to `ident` in a JSON or SSE body."""
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    try:
        if kind == "application/json":
            return json.loads(body)
        if kind == "text/event-stream":
            for event in body.decode().replace("\r\n", "\n").split("\n\n"):
                data = "\n".join(
                    line[5:].lstrip()
                    for line in event.split("\n")
                    if line.startswith("data:")
                )
                if data:
                    message = json.loads(data)
                    if message.get("id") == ident:
                        return message
            raise Failure("SSE stream ended without the response")
    except (ValueError, UnicodeDecodeError):
        raise Failure("body is not JSON") from None
    raise Failure(f"unexpected Content-Type {kind or '(none)'}")


# ------------------------------------------------------- well-behaved load


class Stats:
    def __init__(self):
        self.latencies = collections.defaultdict(list)
        self.errors = collections.Counter()
        self.examples = {}
        self.requests = 0

    def ok(self, op, seconds):
        self.requests += 1
        self.latencies[op].append(seconds)

    def failed(self, op, failure, at):
        self.requests += 1
        key = f"{op}: {failure.kind}"
        self.errors[key] += 1
        self.examples.setdefault(key, f"at {at:.0f} s {failure.detail}".strip())


class Client:
    """One well-behaved client: a keep-alive connection from 127.0.0.1,
    reopened every RECONNECT requests and after any failure."""

    def __init__(self, host, port, index, stats):
        self.host, self.port, self.index, self.stats = host, port, index, stats
        self.authority = f"{host}:{port}"
        self.reader = self.writer = None
        self.used = 0
        self.ident = index * 1_000_000_000

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
        self.reader = self.writer = None

    async def send(self, method, params, name=None):
        """One request; returns its `result`, or raises Failure."""
        if self.writer is None or self.used >= RECONNECT:
            await self.close()
            try:
                self.reader, self.writer = await asyncio.wait_for(
                    asyncio.open_connection(
                        self.host, self.port, local_addr=("127.0.0.1", 0)
                    ),
                    TIMEOUT,
                )
            except asyncio.TimeoutError:
                raise Failure("connect timed out") from None
            except OSError as error:
                raise Failure(f"connect: {type(error).__name__}", str(error)) from None
            self.used = 0
        self.used += 1
        self.ident += 1
        ident = self.ident
        self.writer.write(
            request_bytes(self.authority, method, name, body_bytes(method, params, ident))
        )
        try:
            await self.writer.drain()
            status, headers, body = await asyncio.wait_for(
                read_response(self.reader), TIMEOUT
            )
        except asyncio.TimeoutError:
            raise Failure(f"no response within {TIMEOUT:g} s") from None
        except OSError as error:
            raise Failure(f"socket: {type(error).__name__}", str(error)) from None
        if headers.get("connection", "").lower() == "close":
            await self.close()
        if status != 200:
            raise Failure(f"HTTP {status}", body[:120].decode(errors="replace"))
        message = message_of(headers, body, ident)
        if message.get("id") != ident:
            raise Failure("response to another id", str(message.get("id")))
        if "error" in message:
            error = message["error"]
            raise Failure(f"JSON-RPC error {error.get('code')}", str(error.get("message"))[:120])
        result = message.get("result")
        if not isinstance(result, dict):
            raise Failure("no result")
        return result


def text_of(result):
    content = result.get("content") or [{}]
    return content[0].get("text")


def expect(condition, what, result):
    if not condition:
        raise Failure(f"wrong answer ({what})", json.dumps(result)[:160])


async def op_discover(client, n):
    result = await client.send("server/discover", {})
    expect(VERSION in result.get("supportedVersions", []), "supportedVersions", result)


async def op_tools_list(client, n):
    result = await client.send("tools/list", {})
    names = {tool.get("name") for tool in result.get("tools", [])}
    expect({"echo", "add", "countdown", "confirm_delete"} <= names, "tools", result)


async def op_echo(client, n):
    text = f"soak {n} " + "x" * (n % 200)
    result = await client.send("tools/call", {"name": "echo", "arguments": {"text": text}}, "echo")
    expect(result.get("resultType") == "complete" and text_of(result) == text, "echo", result)


async def op_add(client, n):
    result = await client.send("tools/call", {"name": "add", "arguments": {"a": n, "b": 7}}, "add")
    expect(result.get("structuredContent") == {"sum": n + 7}, "add", result)


async def op_divide(client, n):
    result = await client.send("tools/call", {"name": "divide", "arguments": {"a": n, "b": 4}}, "divide")
    expect(result.get("structuredContent") == n / 4, "divide", result)


async def op_countdown(client, n):
    arguments = {"from": 3, "delay_ms": 20}
    result = await client.send("tools/call", {"name": "countdown", "arguments": arguments}, "countdown")
    expect(text_of(result) == "liftoff", "countdown", result)


async def op_mrtr(client, n):
    """confirm_delete: round 1 asks for the form, round 2 answers it."""
    path = f"/tmp/soak-{n}"
    first = {"name": "confirm_delete", "arguments": {"path": path}}
    result = await client.send("tools/call", first, "confirm_delete")
    expect(
        result.get("resultType") == "input_required" and "answer" in result.get("inputRequests", {}),
        "round 1",
        result,
    )
    retry = dict(first)
    retry["inputResponses"] = {"answer": {"action": "accept", "content": {"confirm": True}}}
    retry["requestState"] = result.get("requestState")
    result = await client.send("tools/call", retry, "confirm_delete")
    expect(text_of(result) == f"deleted {path}", "round 2", result)


NOTES = {1: "Note 1: Buy milk.", 2: "Note 2: Call the plumber about the leak.", 3: "Note 3: Ship the quickstart."}


async def op_read(client, n):
    note = n % 3 + 1
    uri = f"memo://notes/{note}"
    result = await client.send("resources/read", {"uri": uri}, uri)
    contents = result.get("contents") or [{}]
    expect(contents[0].get("text") == NOTES[note], "note", result)


async def op_prompt(client, n):
    topic = f"soak round {n}"
    result = await client.send("prompts/get", {"name": "review", "arguments": {"topic": topic}}, "review")
    messages = result.get("messages") or [{}]
    expect(topic in (messages[0].get("content") or {}).get("text", ""), "prompt", result)


# (operation, weight, HTTP requests, tool calls). About half of the
# requests are tool calls.
OPS = [
    ("server/discover", op_discover, 2),
    ("tools/list", op_tools_list, 2),
    ("tools/call echo", op_echo, 3),
    ("tools/call add", op_add, 1),
    ("tools/call divide", op_divide, 1),
    ("tools/call countdown (60 ms)", op_countdown, 1),
    ("MRTR confirm_delete", op_mrtr, 1),
    ("resources/read", op_read, 2),
    ("prompts/get", op_prompt, 1),
]


async def well_behaved(host, port, index, stats, started, deadline):
    client = Client(host, port, index, stats)
    rng = random.Random(index)
    names = [op[0] for op in OPS]
    weights = [op[2] for op in OPS]
    functions = {op[0]: op[1] for op in OPS}
    interval = CLIENTS / RATE
    # Spread the clients over one interval.
    next_at = time.monotonic() + interval * index / CLIENTS
    n = 0
    while True:
        next_at += interval * rng.uniform(0.5, 1.5)
        delay = next_at - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        if time.monotonic() >= deadline:
            break
        name = rng.choices(names, weights)[0]
        n += 1
        began = time.monotonic()
        try:
            await functions[name](client, n)
            stats.ok(name, time.monotonic() - began)
        except Failure as failure:
            stats.failed(name, failure, began - started)
            await client.close()
    await client.close()


# ---------------------------------------------------------------- hostile


class Hostile:
    def __init__(self):
        self.outcomes = collections.defaultdict(collections.Counter)
        self.live = collections.Counter()
        self.peak = collections.Counter()

    def enter(self, kind):
        self.live[kind] += 1
        self.peak[kind] = max(self.peak[kind], self.live[kind])

    def leave(self, kind, outcome):
        self.live[kind] -= 1
        self.outcomes[kind][outcome] += 1


async def hostile_connect(host, port):
    return await asyncio.wait_for(
        asyncio.open_connection(host, port, local_addr=(HOSTILE, 0)), 10
    )


async def outcome_of(reader, limit):
    """What the server did: its status, or how the connection ended."""
    try:
        line = await asyncio.wait_for(reader.readline(), limit)
    except asyncio.TimeoutError:
        return "no answer (client gave up)"
    except OSError as error:
        return type(error).__name__
    if not line:
        return "closed"
    parts = line.split(b" ")
    return f"HTTP {parts[1].decode(errors='replace')}" if len(parts) > 1 else "garbage"


def answered(answer):
    """The outcome an answer task already has, if any."""
    if answer is not None and answer.done() and not answer.cancelled() and answer.exception() is None:
        return answer.result()
    return None


async def trickler(host, port, hostile, kind, deadline, make):
    """Keeps one slow connection open at a time, reconnecting when the
    server gives up on it: `make` returns (bytes sent at once, bytes then
    trickled one at a time)."""
    while time.monotonic() < deadline:
        hostile.enter(kind)
        began = time.monotonic()
        outcome = "connect failed"
        writer = answer = None
        try:
            reader, writer = await hostile_connect(host, port)
            first, rest = make(f"{host}:{port}")
            writer.write(first)
            await writer.drain()
            answer = asyncio.ensure_future(outcome_of(reader, 3600))
            for byte in rest:
                done, _ = await asyncio.wait({answer}, timeout=TRICKLE)
                if done or time.monotonic() >= deadline:
                    break
                writer.write(bytes([byte]))
                await writer.drain()
            if answer.done():
                outcome = answer.result()
            elif time.monotonic() >= deadline:
                outcome = "still open at the end"
            else:
                outcome = await asyncio.wait_for(answer, max(1, deadline - time.monotonic()))
        except (OSError, asyncio.TimeoutError) as error:
            # Writing to a connection the server closed.
            outcome = answered(answer) or f"closed ({type(error).__name__})"
        finally:
            if answer is not None and not answer.done():
                answer.cancel()
            if writer is not None:
                writer.close()
            hostile.leave(kind, outcome)
        # A server that turns such clients away at once is not hammered.
        await asyncio.sleep(0.1 if time.monotonic() - began >= 1 else 1)


def slow_body(authority):
    body = body_bytes("tools/call", {"name": "echo", "arguments": {"text": "z" * 200}}, 1)
    head = request_bytes(authority, "tools/call", "echo", body)[: -len(body)]
    return head, body


def slowloris(authority):
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n"
        "X-Padding: " + "a" * 4000 + "\r\n\r\n"
    ).encode()
    return head[:20], head[20:]


async def slow_call(host, port, hostile, deadline):
    kind = "slow tool calls (countdown 100 x 1 s)"
    hostile.enter(kind)
    outcome = "connect failed"
    writer = None
    try:
        reader, writer = await hostile_connect(host, port)
        arguments = {"from": 100, "delay_ms": 1000}
        body = body_bytes("tools/call", {"name": "countdown", "arguments": arguments}, 1)
        writer.write(request_bytes(f"{host}:{port}", "tools/call", "countdown", body, close=True))
        await writer.drain()
        outcome = await outcome_of(reader, max(1, deadline - time.monotonic()))
        if outcome == "no answer (client gave up)":
            outcome = "still running at the end"
    except (OSError, asyncio.TimeoutError) as error:
        outcome = type(error).__name__
    finally:
        if writer is not None:
            writer.close()
        hostile.leave(kind, outcome)


async def slow_calls(host, port, hostile, deadline):
    """SLOW_CALLS a second, each on its own connection, held until answered."""
    if SLOW_CALLS <= 0:
        return
    tasks = set()
    next_at = time.monotonic()
    while time.monotonic() < deadline:
        next_at += 1 / SLOW_CALLS
        await asyncio.sleep(max(0, next_at - time.monotonic()))
        if len(tasks) >= SLOW_CALLS_MAX:
            continue
        task = asyncio.ensure_future(slow_call(host, port, hostile, deadline))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(tasks)


def flood_address(index):
    return f"127.0.0.{3 + index}"


def listen_bytes(authority, ident):
    params = {"notifications": {"toolsListChanged": True}}
    return request_bytes(authority, "subscriptions/listen", None, body_bytes("subscriptions/listen", params, ident))


def countdown_bytes(authority, ident):
    arguments = {"from": 100, "delay_ms": 1000}
    body = body_bytes("tools/call", {"name": "countdown", "arguments": arguments}, ident)
    return request_bytes(authority, "tools/call", "countdown", body)


async def flood_holder(host, port, source, kind, make, hostile, deadline):
    """Holds one request of `kind` from `source` open until the deadline,
    opening it again a second after the server refuses or ends it."""
    while time.monotonic() < deadline:
        hostile.enter(kind)
        outcome, writer = "connect failed", None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, local_addr=(source, 0)), 10
            )
            writer.write(make(f"{host}:{port}", 1))
            await writer.drain()
            # A refusal comes at once; an admitted call answers no head (or
            # a stream's 200) and runs on.
            outcome = await outcome_of(reader, 2)
            if outcome in ("no answer (client gave up)", "HTTP 200"):
                outcome = await held(reader, deadline)
        except (OSError, asyncio.TimeoutError) as error:
            outcome = type(error).__name__
        finally:
            if writer is not None:
                writer.close()
            hostile.leave(kind, outcome)
        await asyncio.sleep(1)


async def held(reader, deadline):
    """How an admitted request ended: still open at the deadline, or
    closed (answered) before."""
    while True:
        try:
            chunk = await asyncio.wait_for(reader.read(65536), max(0.1, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            return "held to the end"
        except OSError as error:
            return f"admitted, then {type(error).__name__}"
        if not chunk:
            return "admitted, then closed"


def pool_floods(host, port, hostile, deadline):
    kinds = [
        ("pool flood: slow calls from 8 addresses", countdown_bytes),
        ("pool flood: listen streams from 8 addresses", listen_bytes),
    ]
    return [
        asyncio.ensure_future(flood_holder(host, port, flood_address(a), kind, make, hostile, deadline))
        for kind, make in kinds
        for a in range(FLOOD_ADDRESSES)
        for _ in range(FLOOD_EACH)
    ]


async def victim_listens(host, port, stats, deadline):
    """A well-behaved client's `subscriptions/listen`, every few seconds:
    its stream must open and be acknowledged while the floods run."""
    n = 0
    while time.monotonic() + LISTEN_EVERY < deadline:
        await asyncio.sleep(LISTEN_EVERY)
        n += 1
        began, writer = time.monotonic(), None
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), TIMEOUT)
            writer.write(listen_bytes(f"{host}:{port}", n))
            await writer.drain()
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
            status = head.split(b" ")[1].decode(errors="replace")
            if status != "200":
                raise Failure(f"HTTP {status}")
            event = await asyncio.wait_for(reader.readuntil(b"\n\n"), TIMEOUT)
            if b"notifications/subscriptions/acknowledged" not in event:
                raise Failure("no acknowledgement")
            stats.ok("subscriptions/listen", time.monotonic() - began)
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
            stats.failed("subscriptions/listen", Failure(type(error).__name__), time.monotonic() - began)
        except Failure as failure:
            stats.failed("subscriptions/listen", failure, time.monotonic() - began)
        finally:
            if writer is not None:
                writer.close()


def junk_requests(authority):
    """(name, bytes to send at once, bytes of body to stream after)."""
    meta_body = body_bytes("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, 1)

    def post(extra, body, content_type="application/json"):
        return (
            f"POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: {content_type}\r\n"
            f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\n"
            f"Mcp-Method: tools/call\r\nMcp-Name: echo\r\n{extra}Connection: close\r\n\r\n"
        ).encode() + body

    big = 5 * 1024 * 1024
    return [
        ("declared 5 MiB body", post(f"Content-Length: {big}\r\n", b"{" + b" " * 65535), b""),
        ("chunked body past 4 MiB", post("Transfer-Encoding: chunked\r\n", b""), b"x" * big),
        ("invalid JSON", post("Content-Length: 8\r\n", b'{"jsonrp'), b""),
        ("invalid UTF-8", post("Content-Length: 4\r\n", b'"\xff\xfe"'), b""),
        ("wrong Content-Type", post(f"Content-Length: {len(meta_body)}\r\n", meta_body, "text/plain"), b""),
        ("JSON that is not JSON-RPC", post("Content-Length: 12\r\n", b'[1,2,3,{"a"}'), b""),
        ("garbage request line", b"\x16\x03\x01\x02\x00GARBAGE\r\n\r\n", b""),
        ("two Host headers", f"GET /mcp HTTP/1.1\r\nHost: {authority}\r\nHost: evil.example\r\n\r\n".encode(), b""),
        ("512 KiB header", f"POST /mcp HTTP/1.1\r\nHost: {authority}\r\nX-Big: {'b' * 524288}\r\n\r\n".encode(), b""),
    ]


async def junk_one(host, port, hostile, name, first, stream):
    kind = f"junk: {name}"
    hostile.enter(kind)
    outcome = "connect failed"
    writer = answer = None
    try:
        reader, writer = await hostile_connect(host, port)
        writer.write(first)
        await writer.drain()
        answer = asyncio.ensure_future(outcome_of(reader, 30))
        for offset in range(0, len(stream), 65536):
            if answer.done():
                break
            piece = stream[offset : offset + 65536]
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        if stream and not answer.done():
            writer.write(b"0\r\n\r\n")
            await writer.drain()
        outcome = await answer
    except (OSError, asyncio.TimeoutError) as error:
        # Writing to a connection the server closed (after its answer, which
        # a reset may have discarded).
        outcome = answered(answer) or f"closed ({type(error).__name__})"
    finally:
        if answer is not None and not answer.done():
            answer.cancel()
        if writer is not None:
            writer.close()
        hostile.leave(kind, outcome)


async def junk(host, port, hostile, deadline):
    if JUNK <= 0:
        return
    kinds = junk_requests(f"{host}:{port}")
    tasks = set()
    next_at = time.monotonic()
    n = 0
    while time.monotonic() < deadline:
        next_at += 1 / JUNK
        await asyncio.sleep(max(0, next_at - time.monotonic()))
        name, first, stream = kinds[n % len(kinds)]
        n += 1
        task = asyncio.ensure_future(junk_one(host, port, hostile, name, first, stream))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    if tasks:
        await asyncio.wait(tasks, timeout=35)


# ------------------------------------------------------------ the server


def memory(pid):
    """VmRSS in KiB and the number of open descriptors."""
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    try:
        fds = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        fds = -1
    return rss, fds


async def sampler(pid, started, deadline, samples, hostile, stats):
    while True:
        now = time.monotonic()
        rss, fds = memory(pid)
        samples.append((now - started, rss, fds))
        if int(now - started) % 30 == 0 and now - started >= 1:
            live = sum(hostile.live.values())
            print(
                f"  {now - started:5.0f} s  RSS {rss / 1024:6.1f} MiB  fds {fds:5d}  "
                f"hostile connections {live:5d}  well-behaved operations {stats.requests:6d}  "
                f"errors {sum(stats.errors.values())}",
                flush=True,
            )
        if now >= deadline:
            return
        await asyncio.sleep(1 - (time.monotonic() - started) % 1)


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def main():
    address, pid = sys.argv[1], int(sys.argv[2])
    host, _, port = address.rpartition(":")
    port = int(port)
    started = time.monotonic()
    deadline = started + SECONDS
    stats, hostile, samples = Stats(), Hostile(), []
    print(
        f"soak: {SECONDS:g} s (warm-up {WARMUP:g} s) against {address}, pid {pid}\n"
        f"  well-behaved: {CLIENTS} clients on 127.0.0.1, {RATE:g} requests/s in all\n"
        f"  hostile on {HOSTILE}: {SLOW_BODIES} slow bodies and {SLOWLORIS} slowloris heads "
        f"(a byte every {TRICKLE:g} s), {SLOW_CALLS:g} slow tool calls/s, {JUNK:g} junk requests/s\n"
        f"  pool floods from {FLOOD_ADDRESSES} addresses ({flood_address(0)} on): {FLOOD_EACH} slow calls "
        f"and {FLOOD_EACH} listen streams each, held; a listen from 127.0.0.1 every {LISTEN_EVERY:g} s",
        flush=True,
    )
    tasks = [asyncio.ensure_future(sampler(pid, started, deadline, samples, hostile, stats))]
    tasks += [
        asyncio.ensure_future(well_behaved(host, port, i, stats, started, deadline))
        for i in range(CLIENTS)
    ]
    tasks += [
        asyncio.ensure_future(trickler(host, port, hostile, "slow body (a byte every few s)", deadline, slow_body))
        for _ in range(SLOW_BODIES)
    ]
    tasks += [
        asyncio.ensure_future(trickler(host, port, hostile, "slowloris head (a byte every few s)", deadline, slowloris))
        for _ in range(SLOWLORIS)
    ]
    tasks.append(asyncio.ensure_future(slow_calls(host, port, hostile, deadline)))
    tasks.append(asyncio.ensure_future(junk(host, port, hostile, deadline)))
    tasks += pool_floods(host, port, hostile, deadline)
    tasks.append(asyncio.ensure_future(victim_listens(host, port, stats, deadline)))
    await asyncio.wait(tasks)
    for task in tasks:
        if task.exception() is not None:
            raise task.exception()
    return report(stats, hostile, samples)


def report(stats, hostile, samples):
    failed = False
    print("\n== well-behaved clients (127.0.0.1)")
    everything = [s for values in stats.latencies.values() for s in values]
    # The countdown sleeps 60 ms by design: the headline leaves it out.
    prompt = [s for name, values in stats.latencies.items() if "countdown" not in name for s in values]
    errors = sum(stats.errors.values())
    print(
        f"operations: {stats.requests} (an MRTR round trip is two requests), "
        f"answered correctly: {len(everything)}, errors: {errors}"
    )
    print(
        f"latency of correct answers (all but the 60 ms countdown): p50 {percentile(prompt, 0.5) * 1000:.1f} ms, "
        f"p99 {percentile(prompt, 0.99) * 1000:.1f} ms, max {max(prompt, default=0) * 1000:.1f} ms"
    )
    for name in [op[0] for op in OPS] + ["subscriptions/listen"]:
        values = stats.latencies.get(name, [])
        print(
            f"  {name:30} {len(values):6d} ok  p50 {percentile(values, 0.5) * 1000:7.1f} ms"
            f"  p99 {percentile(values, 0.99) * 1000:7.1f} ms"
        )
    if errors:
        failed = True
        print("errors by kind (first occurrence):")
        for key, count in stats.errors.most_common():
            print(f"  {count:6d}  {key}  [{stats.examples[key]}]")

    print(f"\n== hostile clients ({HOSTILE}): outcomes (peak open at once)")
    for kind in sorted(hostile.outcomes):
        outcomes = ", ".join(f"{o}: {c}" for o, c in hostile.outcomes[kind].most_common())
        print(f"  {kind} (peak {hostile.peak[kind]}): {outcomes}")

    print("\n== server")
    after = [s for s in samples if s[0] >= WARMUP]
    if len(after) < 2:
        print("RSS: the run is shorter than its warm-up; no flatness check")
        return 1 if failed else 0
    window = max(1, min(10, len(after) // 10))
    start = sorted(s[1] for s in after[:window])[window // 2]
    end = sorted(s[1] for s in after[-window:])[window // 2]
    peak = max(samples, key=lambda s: s[1])
    first = samples[0]
    print(
        f"RSS: at launch {first[1] / 1024:.1f} MiB; after the warm-up ({WARMUP:g} s) {start / 1024:.1f} MiB; "
        f"peak {peak[1] / 1024:.1f} MiB (at {peak[0]:.0f} s); end {end / 1024:.1f} MiB "
        f"(medians of {window} s)"
    )
    change = end / start - 1
    flat = abs(change) <= RSS_TOLERANCE
    print(f"RSS end / after warm-up: {change * 100:+.1f} % (target within {RSS_TOLERANCE * 100:g} %): {'met' if flat else 'MISSED'}")
    print(f"open descriptors: peak {max(s[2] for s in samples)}, end {samples[-1][2]}")
    print(f"well-behaved errors: {errors} (target 0): {'met' if not errors else 'MISSED'}")
    return 0 if flat and not failed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
