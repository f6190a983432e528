#!/usr/bin/env python3
"""The client under test in the conformance suite's client leg: the
inspector built into every server binary (`MCP_INSPECTOR`, a path), run
against the scenario's server the way a user scripts it:

    conformance client --command "python3 tests/conformance/client.py" --scenario NAME

The suite appends the server's URL and names the scenario in
MCP_CONFORMANCE_SCENARIO; some scenarios pass data in
MCP_CONFORMANCE_CONTEXT (`toolCalls`: the calls to make).

Nothing here knows what a scenario checks. It lists what the server offers
(`list --json`: the client's own `tools/list`, which leaves out tools whose
`x-mcp-header` annotations are invalid), then calls every listed tool (or
the context's `toolCalls`) with arguments made from its input schema, reads
every resource and gets every prompt, each with a fresh `--url` inspector
process. Questions a tool asks (`input_required`) are answered from
ANSWERS below. Every request, header and retry is the inspector's.

Servers behind OAuth are authorized by the inspector itself (`--authorize
fetch`: the suite's authorization servers approve without a person), with
the pre-registered client the context names, if any, and a token cache the
scenario's commands share. In the ext-auth scenarios with no user (GRANTS)
it acts for itself: `--grant client-credentials` with the context's secret
or, for `private_key_jwt`, its private key (`--client-key`), or `--grant
jwt-bearer` with the workload's JWT (`--assertion-file`), each in a file
only its owner can read. In enterprise-managed authorization it acts for a
user signed in through the organization's identity provider: `--grant
enterprise` with the context's IdP token endpoint and client id, and the
user's ID token in such a file (`--id-token-file`; the IdP's client secret
too, `--idp-client-secret-file`, when the context gives one).

Exits 0 when every command ran; a command the server answered with an
error is reported on stderr and does not stop the others.
"""

import json
import os
import subprocess
import sys
import tempfile

# Answers to the questions tools ask, by `inputRequests` key: the
# `sep-2322-client-request-state` scenario asks for a confirmation.
ANSWERS = {"confirm": {"action": "accept", "content": {"confirmed": True}}}

# Scenarios that ask the client to hand back what it received: (tool to
# call, argument, the tool whose `inputSchema` it is). The
# `json-schema-2020-12-preservation` scenario checks that the client's
# `tools/list` keeps every JSON Schema 2020-12 keyword.
ECHOES = {
    "json-schema-2020-12-preservation": ("json_schema_echo", "schema", "json_schema_2020_12_tool"),
}

# The Skills extension's client scenarios, and whether the script uses a
# skill there: in `no-prefetch` it only lists them (nothing may be fetched
# until a skill is loaded); in the others it loads the first listed skill
# with `skills load URI FILE...` (SKILL.md, then the entry's other files
# as a model reading them would), which stops at the first file that fails
# verification.
SKILL_SCENARIOS = {
    "sep-2640-client-no-prefetch": False,
    "sep-2640-client-verify-digest": True,
    "sep-2640-client-verify-size": True,
    "sep-2640-client-verify-frontmatter": True,
}

# This client's Client ID Metadata Document URL, its client_id where an
# authorization server supports such documents (the suite's `auth/basic-cimd`
# expects this one).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"

# The ext-auth scenarios in which no user approves in a browser, and the
# grant the inspector uses (`--grant`): the client credentials extension's,
# workload identity federation's JWT bearer grant, and enterprise-managed
# authorization (an ID-JAG from the IdP for the user's ID token).
GRANTS = {
    "auth/client-credentials-basic": "client-credentials",
    "auth/client-credentials-jwt": "client-credentials",
    "auth/wif-jwt-bearer": "jwt-bearer",
    "auth/enterprise-managed-authorization": "enterprise",
}

# The DPoP extension's scenarios (SEP-1932): tokens bound to the
# inspector's key (`--dpop`).
DPOP_SCENARIOS = {"auth/dpop", "auth/dpop-nonce"}

# One scenario's commands should take well under a second each.
TIMEOUT = 20


def main():
    url = sys.argv[-1]
    inspector = os.environ["MCP_INSPECTOR"]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as answers:
        json.dump(ANSWERS, answers)
    tokens = answers.name + ".tokens"
    # OAuth, when the server asks: the suite's authorization servers approve
    # without a person, so the inspector reads their redirect itself; one
    # token cache serves every command of the scenario.
    oauth = ["--authorize", "fetch", "--token-cache", tokens,
             "--client-metadata-url", CLIENT_METADATA_URL]
    if "client_id" in context:
        oauth += ["--client-id", context["client_id"]]
        oauth += ["--client-secret", context["client_secret"]] if context.get("client_secret") else []
        oauth += ["--client-issuer", context["issuer"]] if context.get("issuer") else []
    # The client credentials extension's scenarios: the client acts for
    # itself, with the credentials the context gives (a secret, or a
    # private key to sign its assertions with, handed over in a file of
    # the owner's only, as a user would keep one).
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    grant = GRANTS.get(scenario)
    if grant:
        oauth += ["--grant", grant]
    if scenario in DPOP_SCENARIOS:
        oauth += ["--dpop"]
    if context.get("private_key_pem"):
        oauth += ["--client-key", secret_file(answers.name + ".key.pem", context["private_key_pem"]),
                  "--client-key-algorithm", context.get("signing_algorithm", "ES256")]
    if context.get("valid_jwt"):
        oauth += ["--assertion-file", secret_file(answers.name + ".jwt", context["valid_jwt"])]
    # Enterprise-managed authorization: the identity provider the context
    # names, and the user's ID token from signing in there.
    if context.get("idp_id_token"):
        oauth += ["--idp-token-endpoint", context["idp_token_endpoint"],
                  "--idp-client-id", context["idp_client_id"],
                  "--id-token-file", secret_file(answers.name + ".id-token", context["idp_id_token"])]
        if context.get("idp_client_secret"):
            oauth += ["--idp-client-secret-file",
                      secret_file(answers.name + ".idp-secret", context["idp_client_secret"])]

    def run(*args):
        command = [inspector, *args, "--url", url, *oauth]
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        sys.stderr.write(f"$ {' '.join(command)}\n{done.stderr}")
        print(done.stdout, end="")
        return done

    try:
        listed = run("list", "--json")
        if listed.returncode != 0:
            return 1
        offered = json.loads(listed.stdout)
        tools = offered.get("tools", [])
        calls = context.get("toolCalls") or [
            {"name": tool["name"], "arguments": arguments(tool.get("inputSchema", {}))}
            for tool in tools
        ]
        echo = ECHOES.get(os.environ.get("MCP_CONFORMANCE_SCENARIO", ""))
        if echo:
            tool, argument, source = echo
            schema = next(t["inputSchema"] for t in tools if t["name"] == source)
            calls = [{"name": tool, "arguments": {argument: schema}}]
        for call in calls:
            run("call", call["name"], json.dumps(call["arguments"]), "--answers", answers.name)
        for resource in offered.get("resources", []):
            run("read", resource["uri"])
        for prompt in offered.get("prompts", []):
            needed = {
                a["name"]: "conformance" for a in prompt.get("arguments", []) if a.get("required")
            }
            run("prompt", prompt["name"], json.dumps(needed))
        scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
        if scenario in SKILL_SCENARIOS:
            use_skills(run, SKILL_SCENARIOS[scenario])
    finally:
        os.unlink(answers.name)
        for left in (tokens, tokens + ".lock", answers.name + ".key.pem", answers.name + ".jwt",
                     answers.name + ".id-token", answers.name + ".idp-secret"):
            if os.path.exists(left):
                os.unlink(left)
    return 0


def secret_file(path, text):
    """Writes `text` to `path`, readable by its owner only, as a user keeps
    a key or a token; returns the path."""
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        out.write(text)
    return path


def use_skills(run, load):
    """Lists the skills; with `load`, loads the first one and reads its
    other files, each verified by the inspector."""
    listed = run("skills", "list", "--json")
    if listed.returncode != 0 or not load:
        return
    entries = json.loads(listed.stdout)
    if not entries:
        return
    entry = entries[0]
    files = [f["uri"] for f in entry.get("resources", []) if f["uri"] != entry["uri"]]
    run("skills", "load", entry["uri"], *files)


def arguments(schema):
    """A value for every required argument, from its schema."""
    properties = schema.get("properties", {})
    return {name: example(properties.get(name, {})) for name in schema.get("required", [])}


def example(schema):
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = next((k for k in kind if k != "null"), None) if isinstance(kind, list) else kind
    return {
        "string": "conformance",
        "integer": 1,
        "number": 1.5,
        "boolean": True,
        "array": [],
        "object": {},
    }.get(kind, "conformance")


if __name__ == "__main__":
    sys.exit(main())
