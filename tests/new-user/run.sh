#!/usr/bin/env bash
# A new user's first hour, scripted: a crate outside the workspace made of
# the guide's own snippets (docs/src/getting-started.md, the blocks marked
# `<!-- new-user: PATH -->`; the README's Cargo.toml lines are checked to be
# in the same file), with a path dependency on this checkout:
#
#   tests/new-user/run.sh
#
# 1. writes the crate to a temporary directory (the guide's `Cargo.toml`
#    with `mcp-runtime = { path = ... }`, this checkout's Cargo.lock so
#    that it resolves to the same versions as the workspace);
# 2. `cargo build` and `cargo test` it, into the workspace's target
#    directory (CARGO_TARGET_DIR if set), so that what the workspace built
#    already is reused;
# 3. checks the binary: `tools/list` over stdio lists the guide's tools,
#    `--http 127.0.0.1:0` says where it listens and answers there, the
#    inspector lists enum choices, `list | head -1` and `list | true` exit
#    0, `prompt` takes numbers;
# 4. makes the guide's Cargo.toml and lib.rs wrong the way new users do
#    (schemars 0.8, a type without Serialize, a `#[ctx]` that is not a
#    context type) and checks each gives the one error that says how to fix
#    it.
#
# Exits non-zero on the first check that fails.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-new-user.XXXXXX")
trap 'rm -rf "$work"' EXIT
crate="$work/weather"

log() { printf '==> %s\n' "$*" >&2; }
fail() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# --- 1. The crate, from the guide ---------------------------------------
log "writing the guide's crate to $crate"
python3 - "$root/docs/src/getting-started.md" "$crate" "$root" "$root/README.md" <<'PY'
import pathlib, re, sys

chapter, crate, root, readme = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3], sys.argv[4]


def blocks(path, kind):
    """(marked path, the block's lines) for each block after <!-- KIND: PATH -->."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found = []
    for i, line in enumerate(lines):
        marker = re.match(rf"<!-- {kind}: (\S+)", line)
        if marker:
            start = i + 1
            while not lines[start].startswith("```"):
                start += 1
            end = lines.index("```", start + 1)
            found.append((marker.group(1), lines[start + 1 : end]))
    return found


written = []
for name, body in blocks(chapter, "new-user"):
    path = crate / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(body) + "\n", encoding="utf-8")
    written.append(name)
expected = ["Cargo.toml", "src/lib.rs", "src/main.rs", "tests/forecast.rs"]
if sorted(written) != sorted(expected):
    sys.exit(f"the guide's new-user blocks are {written}, expected {expected}")
# The README shows part of the same Cargo.toml: every line of it must be
# in the file built here, so that the README cannot drift from it.
subsets = blocks(readme, "new-user-subset")
if [name for name, _ in subsets] != ["Cargo.toml"]:
    sys.exit("the README has no <!-- new-user-subset: Cargo.toml --> block")
manifest_lines = (crate / "Cargo.toml").read_text(encoding="utf-8").split("\n")
for line in subsets[0][1]:
    if line not in manifest_lines:
        sys.exit(f"the README's Cargo.toml line {line!r} is not in the guide's Cargo.toml")
manifest = crate / "Cargo.toml"
text, count = re.subn(
    r'^mcp-runtime = .*$',
    f'mcp-runtime = {{ path = "{root}/mcp-runtime" }}',
    manifest.read_text(encoding="utf-8"),
    flags=re.M,
)
if count != 1:
    sys.exit("the guide's Cargo.toml has no `mcp-runtime = ...` line")
manifest.write_text(text, encoding="utf-8")
PY
cp "$root/Cargo.lock" "$crate/Cargo.lock"

if [[ -z ${CARGO_TARGET_DIR:-} ]]; then
    CARGO_TARGET_DIR=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    export CARGO_TARGET_DIR
fi
weather="$CARGO_TARGET_DIR/debug/weather"

# --- 2. Build and test it ------------------------------------------------
started=$SECONDS
log "cargo build (target directory $CARGO_TARGET_DIR)"
(cd "$crate" && cargo build)
log "cargo test"
(cd "$crate" && cargo test)
log "built and tested in $((SECONDS - started)) s"

# --- 3. The binary --------------------------------------------------------
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
list_request='{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{'"$meta"'}}'

log "stdio: tools/list"
printf '%s\n' "$list_request" | "$weather" >"$work/stdio.out" 2>"$work/stdio.err"
python3 - "$work/stdio.out" <<'PY'
import json, sys
frames = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
assert len(frames) == 1, f"stdout carries one frame, not {frames}"
tools = [tool["name"] for tool in frames[0]["result"]["tools"]]
assert tools == ["forecast"], f"tools/list answered {frames[0]}"
PY
[[ ! -s $work/stdio.err ]] || fail "the server wrote to stderr: $(cat "$work/stdio.err")"

log "--http 127.0.0.1:0: the startup line, then tools/list over HTTP"
"$weather" --http 127.0.0.1:0 2>"$work/http.err" &
server=$!
stop_server() { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
trap 'stop_server; rm -rf "$work"' EXIT
line_pattern='^weather: serving MCP over Streamable HTTP on 127\.0\.0\.1:([0-9]+), endpoint http://127\.0\.0\.1:([0-9]+)/mcp$'
for _ in $(seq 100); do
    [[ -s $work/http.err ]] && break
    sleep 0.05
done
line=$(head -1 "$work/http.err")
[[ $line =~ $line_pattern && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] ||
    fail "unexpected startup line: '$line'"
url="http://127.0.0.1:${BASH_REMATCH[1]}/mcp"
python3 - "$url" "$list_request" <<'PY'
import json, sys, urllib.request
url, body = sys.argv[1], sys.argv[2]
request = urllib.request.Request(url, data=body.encode(), method="POST", headers={
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/list",
})
with urllib.request.urlopen(request, timeout=10) as response:
    answer = json.load(response)
assert [t["name"] for t in answer["result"]["tools"]] == ["forecast"], answer
PY
stop_server
trap 'rm -rf "$work"' EXIT

log "inspector: list, list | head -1, list | true, prompt with a number"
listing=$("$weather" list)
expected='  forecast(city: string, unit: celsius|fahrenheit, days?: integer)  The forecast for a city, day by day.'
grep -qxF -- "$expected" <<<"$listing" || fail "list printed: $listing"
set -o pipefail
first=$("$weather" list | head -1) || fail "list | head -1 exited non-zero"
[[ $first == "Tools (1)" ]] || fail "list | head -1 printed '$first'"
# `true` reads nothing: the inspector's writes meet a closed pipe.
"$weather" list 2>"$work/pipe.err" | true || fail "list | true exited non-zero"
[[ ! -s $work/pipe.err ]] || fail "list | true wrote to stderr: $(cat "$work/pipe.err")"
prompt=$("$weather" prompt packing_list '{"city": "Oslo", "days": 4}')
[[ $prompt == *"for 4 days there."* ]] || fail "prompt printed: $prompt"

# --- 4. Mistakes new users make --------------------------------------------
# Each: a copy of the crate with `old` replaced by `new` in `file`; the build
# must fail with exactly `count` errors (as rustc counts them), and each
# line of `expected` must be in its output.
mistake() {
    local name=$1 count=$2 expected=$3 file=$4 old=$5 new=$6 copy="$work/$1"
    log "mistake: $name"
    rm -rf "$copy"
    cp -r "$crate" "$copy"
    python3 - "$copy/$file" "$old" "$new" <<'PY'
import pathlib, sys
path, old, new = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3]
text = path.read_text(encoding="utf-8")
assert old in text, f"{old!r} is not in {path}"
path.write_text(text.replace(old, new, 1), encoding="utf-8")
PY
    if (cd "$copy" && cargo build --lib 2>"$work/$name.err" >/dev/null); then
        fail "$name: the build succeeded"
    fi
    local counted
    counted=$(grep -o "due to [0-9]* previous errors\?" "$work/$name.err" || true)
    if [[ $counted != "due to $count previous error"* ]]; then
        cat "$work/$name.err" >&2
        fail "$name: rustc reports '$counted', expected $count errors"
    fi
    while IFS= read -r want; do
        grep -qF -- "$want" "$work/$name.err" || {
            cat "$work/$name.err" >&2
            fail "$name: no '$want' in the errors"
        }
    done <<<"$expected"
}

mistake schemars-0.8 2 \
"error[E0277]: \`Unit\` cannot be a tool argument: it does not implement \`schemars::JsonSchema\` (1.x)
error[E0277]: \`Day\` cannot be a tool's structured output: it does not implement \`schemars::JsonSchema\` (1.x)
it is another version's trait: mcp-runtime uses schemars 1.x, so depend on \`schemars = \"1\"\`" \
    Cargo.toml 'schemars = "1"' 'schemars = "0.8"'

mistake output-without-serialize 1 \
"error[E0277]: \`Day\` cannot be a tool's structured output: it does not implement \`serde::Serialize\`" \
    src/lib.rs '#[derive(serde::Serialize, schemars::JsonSchema)]' '#[derive(schemars::JsonSchema)]'

mistake ctx-not-a-context-type 1 \
"error[E0277]: \`std::string::String\` cannot be a \`#[ctx]\` parameter" \
    src/lib.rs '    city: String,' '    #[ctx] city: String,'

log "the new-user scenario passed in $((SECONDS - started)) s"
