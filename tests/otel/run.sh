#!/usr/bin/env bash
# OpenTelemetry export against a real OTLP/HTTP receiver: check.py decodes
# what the conformance fixture sends with the official protobuf definitions
# (opentelemetry-proto, pinned in requirements.txt) and checks the spans and
# the duration histogram of a tool call, a tool error, a resource read, a
# prompt, an unknown method and tool, a two-round MRTR exchange, a task,
# notifications, and the HTTP traceparent header's link; every method the
# fixture serves at several RUST_LOG values (the log never changes what is
# exported); made-up versions, methods and names (a handful of series);
# no span attribute naming a source path; OTEL_TRACES_EXPORTER=console's
# lines on stderr with stdout left to the frames; then
# scrapes the Prometheus endpoint and parses it with prometheus_client;
# interop.py has the official Python SDK's client (`mcp`, with its
# OpenTelemetry instrumentation) start the trace that the server continues.
#
#   tests/otel/run.sh [--install-only]
#
# Installs what it needs (a venv with pip), builds the fixture (which
# installs `mcp-runtime-otel`'s `Otel::from_env()`), and exits non-zero
# if any check fails.
set -euo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
root=$(cd -- "$here/../.." && pwd)
source "$root/tests/fixture.sh"
log() { printf '==> %s\n' "$*" >&2; }

cd "$here"
if [[ ! -x .venv/bin/python || requirements.txt -nt .venv/.installed ]]; then
    log "installing opentelemetry-proto (venv + pip)"
    rm -rf .venv
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
    touch .venv/.installed
fi
[[ ${1:-} == --install-only ]] && exit 0

server=$(fixture_server "$root")
[[ -x $server ]] || { echo "error: no conformance-server at $server" >&2; exit 1; }
log "OTLP export of $server over stdio and HTTP, and its Prometheus endpoint"
.venv/bin/python check.py "$server"
log "a trace from the official Python SDK's client, continued by $server"
.venv/bin/python interop.py "$server"
