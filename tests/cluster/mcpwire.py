"""A small Streamable HTTP client for the cluster checks (Python stdlib only).

Every request is a POST to the endpoint with the headers the 2026-07-28
revision wants (`MCP-Protocol-Version`, `Mcp-Method`, and `Mcp-Name` for
`tools/call` and the Tasks extension's methods), the protocol version and
client capabilities in `params._meta`. A response is JSON or an SSE stream
whose message with the request's id is the answer.
"""

import http.client
import json
import queue
import socket
import threading
import time
import urllib.parse

VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
TASKS_CAPS = {"extensions": {TASKS: {}}}
ELICIT_CAPS = {"elicitation": {"form": {}}}
# Methods whose Mcp-Name header mirrors a param.
NAMED = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
         "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


def now() -> float:
    return time.time()


def body(method: str, params: dict, caps: dict | None = None, ident=1) -> bytes:
    params = dict(params)
    params["_meta"] = {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps or {},
    }
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


def headers(method: str, params: dict) -> dict:
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if method in NAMED and NAMED[method] in params:
        h["Mcp-Name"] = str(params[NAMED[method]])
    return h


class Reply:
    """One answer: the HTTP status, the JSON-RPC message (None if there was
    none) and, when the request did not get through, why."""

    def __init__(self, status: int, message: dict | None, problem: str | None = None):
        self.status = status
        self.message = message
        self.problem = problem

    @property
    def ok(self) -> bool:
        return self.problem is None and self.message is not None and "result" in self.message

    @property
    def result(self) -> dict:
        return (self.message or {}).get("result") or {}

    @property
    def error(self) -> dict | None:
        return (self.message or {}).get("error")

    def text(self) -> str:
        """The first text content of a tool result."""
        content = self.result.get("content") or [{}]
        return content[0].get("text", "")

    def describe(self) -> str:
        if self.problem:
            return self.problem
        if self.error:
            return f"HTTP {self.status}, error {self.error.get('code')}: {self.error.get('message')}"
        return f"HTTP {self.status}, {json.dumps(self.message)[:300]}"


def read_sse_answer(response, ident) -> dict | None:
    """Reads SSE events until the message answering `ident`."""
    data: list[str] = []
    while True:
        line = response.readline()
        if not line:
            return None
        line = line.decode().rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            message = json.loads("\n".join(data))
            data = []
            if message.get("id") == ident and ("result" in message or "error" in message):
                return message


# A connection idle this long is not reused: the server may be closing it
# (its idle keep-alive limit is 10 s), and a request lost that way would be
# the client's doing, not the server's.
IDLE = 2.0


class Endpoint:
    """A keep-alive connection to one URL, remade after any failure and
    after IDLE seconds unused."""

    def __init__(self, url: str, timeout: float = 10):
        parsed = urllib.parse.urlsplit(url)
        self.url = url
        self.host = parsed.hostname
        self.port = parsed.port
        self.path = parsed.path or "/"
        self.timeout = timeout
        self.connection: http.client.HTTPConnection | None = None
        self.used = 0.0

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def call(self, method: str, params: dict, caps: dict | None = None, ident=1,
             extra_headers: dict | None = None) -> Reply:
        if self.connection is not None and now() - self.used > IDLE:
            self.close()
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self.connection.request("POST", self.path, body(method, params, caps, ident),
                                    {**headers(method, params), **(extra_headers or {})})
            response = self.connection.getresponse()
            self.used = now()
            kind = response.getheader("Content-Type", "")
            if kind.startswith("text/event-stream"):
                message = read_sse_answer(response, ident)
                self.close()  # the rest of the stream is not ours to read
                if message is None:
                    return Reply(response.status, None, "the SSE stream ended without an answer")
                return Reply(response.status, message)
            raw = response.read()
            self.used = now()
            if response.getheader("Connection", "").lower() == "close":
                self.close()
            try:
                message = json.loads(raw) if raw else None
            except ValueError:
                return Reply(response.status, None, f"HTTP {response.status}, not JSON: {raw[:120]!r}")
            if message is None:
                return Reply(response.status, None, f"HTTP {response.status} with no body")
            return Reply(response.status, message)
        except (OSError, http.client.HTTPException) as error:
            self.close()
            return Reply(0, None, f"{type(error).__name__}: {error}")

    def tool(self, name: str, arguments: dict, caps: dict | None = None, **extra) -> Reply:
        return self.call("tools/call", {"name": name, "arguments": arguments, **extra}, caps)


def call(url: str, method: str, params: dict, caps: dict | None = None, timeout: float = 10) -> Reply:
    """One request on a connection of its own."""
    endpoint = Endpoint(url, timeout)
    try:
        return endpoint.call(method, params, caps)
    finally:
        endpoint.close()


class Listener:
    """A `subscriptions/listen` stream, read by a thread of its own: every
    message it delivers goes to a queue with the time it arrived."""

    def __init__(self, url: str, notifications: dict, caps: dict | None = None, ident="listen-1",
                 timeout: float = 3):
        self.url = url
        self.ident = ident
        self.messages: queue.Queue = queue.Queue()
        self.ended = threading.Event()
        self.refusal: Reply | None = None
        self.ack: dict | None = None
        parsed = urllib.parse.urlsplit(url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=timeout)
        self.sock = None
        params = {"notifications": notifications}
        try:
            self.connection.connect()
            self.sock = self.connection.sock
            self.connection.request("POST", parsed.path, body("subscriptions/listen", params, caps, ident),
                                    headers("subscriptions/listen", params))
            self.response = self.connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            self.refusal = Reply(0, None, f"{type(error).__name__}: {error}")
            self.ended.set()
            return
        if not self.response.getheader("Content-Type", "").startswith("text/event-stream"):
            raw = self.response.read()
            try:
                self.refusal = Reply(self.response.status, json.loads(raw))
            except ValueError:
                self.refusal = Reply(self.response.status, None, f"HTTP {self.response.status}: {raw[:120]!r}")
            self.ended.set()
            self.connection.close()
            return
        # The stream may stay quiet: no read timeout once it is open.
        self.sock.settimeout(None)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        data: list[str] = []
        try:
            while True:
                line = self.response.readline()
                if not line:
                    break
                line = line.decode().rstrip("\r\n")
                if line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
                elif not line and data:
                    self.messages.put((now(), json.loads("\n".join(data))))
                    data = []
        except Exception:  # noqa: BLE001 - closed under the reader: the stream ended
            pass
        self.ended.set()

    def next(self, timeout: float) -> tuple[float, dict] | None:
        """The next message within `timeout` s, or None."""
        try:
            return self.messages.get(timeout=max(timeout, 0))
        except queue.Empty:
            return None

    def wait_for(self, method: str, timeout: float) -> tuple[float, dict] | None:
        """The next message of `method` within `timeout` s (others are
        dropped), or None."""
        deadline = now() + timeout
        while True:
            got = self.next(deadline - now())
            if got is None or got[1].get("method") == method:
                return got

    def acknowledged(self, timeout: float = 3) -> bool:
        """Whether the stream opened with its acknowledgement."""
        if self.refusal is not None:
            return False
        got = self.next(timeout)
        if got is None or got[1].get("method") != "notifications/subscriptions/acknowledged":
            return False
        self.ack = got[1]
        return True

    def drain(self, seconds: float) -> list[dict]:
        """Every message that arrives within `seconds`."""
        deadline, found = now() + seconds, []
        while (got := self.next(deadline - now())) is not None:
            found.append(got[1])
        return found

    def close(self):
        try:
            if self.sock is not None:
                self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()


class Checks:
    """Outcomes, one JSON line each, appended to the harness's checks file."""

    def __init__(self, path: str | None):
        self.path = path
        self.failed = 0

    def record(self, name: str, passed: bool, detail: str):
        self.failed += not passed
        line = {"check": name, "status": "PASS" if passed else "FAIL", "detail": detail}
        print(f"  {'PASS' if passed else 'FAIL'}  {name}: {detail}", flush=True)
        if self.path:
            with open(self.path, "a") as out:
                out.write(json.dumps(line) + "\n")
