"""A real legacy client: the Python SDK 1.x (`mcp<2`), which always opens
with the `initialize` handshake. Drives the conformance fixture over stdio
(`--stdio BINARY`) or Streamable HTTP (`--url URL`) and checks what a host
does with a server: list and call tools, read a resource, get a prompt, and
answer an elicitation the server bridges from an `input_required` result.

Prints one line per check and `N passed, N failed`; exits 1 on any failure.
"""

import argparse
import sys
from datetime import timedelta

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.context import RequestContext

TIMEOUT = timedelta(seconds=20)


async def elicit(context: RequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    """Answers the fixture's form the way a user would."""
    properties = params.requestedSchema.get("properties", {})
    assert set(properties) == {"username", "email"}, properties
    return types.ElicitResult(
        action="accept", content={"username": "py-user", "email": "py@example.com"}
    )


async def checks(session: ClientSession) -> list[tuple[str, bool, str]]:
    results: list[tuple[str, bool, str]] = []

    def check(name: str, ok: bool, detail: object = "") -> None:
        results.append((name, bool(ok), str(detail)[:300]))

    init = await session.initialize()
    check("initialize negotiates 2025-11-25", init.protocolVersion == "2025-11-25", init.protocolVersion)
    check("server advertises tools", init.capabilities.tools is not None, init.capabilities)

    tools = await session.list_tools()
    names = {tool.name for tool in tools.tools}
    check("tools/list has the fixture's tools", {"test_simple_text", "test_elicitation"} <= names, sorted(names))

    text = await session.call_tool("test_simple_text", {})
    check(
        "tools/call returns text",
        not text.isError and text.content[0].text == "This is a simple text response for testing.",
        text,
    )

    failing = await session.call_tool("test_error_handling", {})
    check("tool errors are results with isError", failing.isError is True, failing)

    resource = await session.read_resource("test://static-text")
    check(
        "resources/read returns the text",
        resource.contents[0].text == "This is the content of the static text resource.",
        resource,
    )

    try:
        await session.read_resource("test://nonexistent")
        check("unknown resource is -32002", False, "no error")
    except Exception as error:  # McpError
        code = getattr(getattr(error, "error", None), "code", None)
        check("unknown resource is -32002", code == -32002, error)

    prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
    check("prompts/get fills in arguments", "a" in prompt.messages[0].content.text, prompt)

    elicited = await session.call_tool("test_elicitation", {"message": "Who are you?"})
    check(
        "elicitation is bridged to elicitation/create",
        not elicited.isError and "py-user" in elicited.content[0].text,
        elicited,
    )

    await session.set_logging_level("debug")
    await session.send_ping()
    check("ping and logging/setLevel answer", True)
    return results


async def run(args: argparse.Namespace) -> int:
    capabilities_session = {"elicitation_callback": elicit, "read_timeout_seconds": TIMEOUT}
    if args.stdio:
        params = StdioServerParameters(command=args.stdio, args=[])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, **capabilities_session) as session:
                results = await checks(session)
    else:
        async with streamablehttp_client(args.url) as (read, write, _):
            async with ClientSession(read, write, **capabilities_session) as session:
                results = await checks(session)
    failed = 0
    for name, ok, detail in results:
        print(f"  {'ok  ' if ok else 'FAIL'} python/{args.label}: {name}" + ("" if ok else f" -- {detail}"))
        failed += not ok
    print(f"python/{args.label}: {len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser()
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--stdio", metavar="BINARY")
    target.add_argument("--url")
    args = parser.parse_args()
    args.label = "stdio" if args.stdio else "http"
    return anyio.run(run, args)


if __name__ == "__main__":
    sys.exit(main())
