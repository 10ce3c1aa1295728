#!/usr/bin/env bash
# The MCP conformance suite (@modelcontextprotocol/conformance, npm), fetched
# ahead of tests/e2e/mcp_conformance_test.ts, which runs its server scenarios
# with `deno run -A --no-config --no-lock npm:...`. Idempotent (Deno's npm
# cache); a failure here only means the test fetches it itself, or registers
# as ignored ("KNOWN GAP: ...") when npm cannot be reached.
set -uo pipefail
cd "$(mktemp -d)" || exit 1
deno run -A --quiet --no-config --no-lock npm:@modelcontextprotocol/conformance@0.1.16 --version || exit 1
