#!/usr/bin/env bash
# GW Router with the lean profile (deno task start:lean's V8 flags).
set -euo pipefail
dir="${GW_ROUTER_DIR:?}"
cfg="$(mktemp -t gw-router-bench.XXXXXX.yaml)"
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\n' "$2" "$1" >"$cfg"
cd "$dir"
exec deno run -A --v8-flags=--max-semi-space-size=16,--max-old-space-size=256 main.ts serve --config "$cfg"
