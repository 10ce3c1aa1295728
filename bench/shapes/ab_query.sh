#!/usr/bin/env bash
# Alternated A/B runs on the `query` shape (issue 33), each through `ab.sh` at a fixed rate with a
# unique forwarded Authorization, every answer checked, CPU per request by thread (THREADS=1):
#   bench/shapes/ab_query.sh "LABEL|CHECKOUT_DIR|ROUTER_FLAGS[|CONFIG_EXTRA]" ...
# e.g. bench/shapes/ab_query.sh "base|$PWD|" "stgc|$PWD|--v8-flags=--single-threaded-gc"
# Starts bench/shapes/query.ts (10 ms subgraphs) on CPU 0; the router runs on CPU 1.
# Env: ROUNDS ("1 2"), RATE (100), SECONDS_LOAD (15), PORT_BASE (45000: router + 10, subgraphs + 300).
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PORT_BASE="${PORT_BASE:-45000}"
SG_PORT=$((PORT_BASE + 300))
TMP="$(mktemp -d)"
cd "$ROOT"
setsid taskset -c 0 env QUERY_SUBGRAPH_PORT="$SG_PORT" deno run -A "$HERE/query.ts" >"$TMP/subgraphs.log" 2>&1 &
SUB=$!
trap 'kill -TERM -- "-$SUB" 2>/dev/null || true; rm -rf "$TMP"' EXIT
deno run -A "$HERE/query.ts" files "$TMP" "$SG_PORT"
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SG_PORT/health" >/dev/null && break; sleep 0.1; done
for round in ${ROUNDS:-1 2}; do
  for variant in "$@"; do
    IFS='|' read -r label dir flags extra <<<"$variant"
    echo "round $round $label"
    ROUTER_FLAGS="$flags" CONFIG_EXTRA="${extra:-}" THREADS=1 RATE="${RATE:-100}" SECONDS_LOAD="${SECONDS_LOAD:-15}" \
      EXPECT_DATA_FILE="$TMP/expected.json" \
      bash "$HERE/ab.sh" "$dir" $((PORT_BASE + 10)) - "$TMP/body.json" "$TMP/supergraph.graphql"
  done
done
