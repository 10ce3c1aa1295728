#!/usr/bin/env bash
# CPU-profile the router under the benchmark load (see README.md).
#
#   bench/load/profile.sh [SECONDS=15]     -> bench/load/results/profile-*/ + top functions
#
# Starts the benchmark subgraphs and the router under `deno run --cpu-prof`
# (pinned like run.sh), loads it with wrk for SECONDS, stops it with SIGTERM
# (the router drains and exits, so V8 writes the profile) and prints the
# functions with the most self time (bench/load/cpuprofile_top.ts).
# Open the .cpuprofile in Chrome DevTools (Performance → Load profile) for flame charts.
# Knobs: ROUTER_CONFIG_EXTRA (e.g. 'engine:\n  enable_single_flight: false'),
# DENO_PROF_FLAGS (e.g. "--v8-flags=--prof" instead of --cpu-prof), GATEWAY_CPUS, LOAD_CPUS, ports as run.sh.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SECONDS_LOAD="${1:-15}"
GATEWAY_CPUS="${GATEWAY_CPUS:-1}"
LOAD_CPUS="${LOAD_CPUS:-0}"
SUBGRAPH_PORT="${SUBGRAPH_PORT:-14400}"
GATEWAY_PORT="${GATEWAY_PORT:-14410}"
OUT="$HERE/results/profile-$(date +%Y%m%d-%H%M%S)"
DENO_PROF_FLAGS="${DENO_PROF_FLAGS:---cpu-prof --cpu-prof-dir=$OUT}"
mkdir -p "$OUT"
pin() { if command -v taskset >/dev/null && [[ -n "$1" ]]; then echo "taskset -c $1"; fi; }

PIDS=()
stop() { # PGID
  kill -TERM -- "-$1" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 -- "-$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
trap 'for p in "${PIDS[@]}"; do stop "$p"; done' EXIT

# shellcheck disable=SC2046
setsid $(pin "$LOAD_CPUS") env SUBGRAPH_PORT="$SUBGRAPH_PORT" deno run --allow-net --allow-env \
  --allow-read --config "$ROOT/deno.json" "$HERE/subgraphs/server.ts" >"$OUT/subgraphs.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$SUBGRAPH_PORT/health" >/dev/null && break; sleep 0.1; done
sed -E "s#http://127\.0\.0\.1:[0-9]+/#http://127.0.0.1:$SUBGRAPH_PORT/#g" \
  "$HERE/fixtures/supergraph.graphql" >"$OUT/supergraph.graphql"
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\nlog_level: warn\n%b\n' \
  "$GATEWAY_PORT" "$OUT/supergraph.graphql" "${ROUTER_CONFIG_EXTRA:-}" >"$OUT/config.yaml"
# shellcheck disable=SC2046,SC2086
setsid $(pin "$GATEWAY_CPUS") bash -c 'cd "$1" && shift && exec "$@"' _ "$ROOT" \
  deno run -A $DENO_PROF_FLAGS main.ts serve --config "$OUT/config.yaml" >"$OUT/router.log" 2>&1 &
ROUTER=$!
PIDS+=("$ROUTER")
URL="http://127.0.0.1:$GATEWAY_PORT/graphql"
for _ in $(seq 1 900); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
    --data-binary "@$HERE/fixtures/federated.request.json" "$URL") == 200 ]] && break
  sleep 0.1
done
curl -s -H 'content-type: application/json' --data-binary "@$HERE/fixtures/federated.request.json" \
  "$URL" >"$OUT/first.json"
# shellcheck disable=SC2046
BENCH_BODY="$HERE/fixtures/federated.request.json" BENCH_EXPECT="$OUT/first.json" \
  $(pin "$LOAD_CPUS") wrk -t1 -c50 -d"${SECONDS_LOAD}s" --timeout 10s -s "$HERE/post.lua" "$URL" \
  | tee "$OUT/wrk.txt" | grep BENCH_RESULT || true
awk '/^VmHWM:|^VmRSS:/' "/proc/$ROUTER/status" | tee "$OUT/memory.txt"
stop "$ROUTER"
profile=$(ls "$OUT"/*.cpuprofile 2>/dev/null | head -1 || true)
if [[ -n "$profile" ]]; then
  deno run -R "$HERE/cpuprofile_top.ts" "$profile" 30 | tee "$OUT/top.txt"
else
  echo "profile files in $OUT:"; ls "$OUT"
fi
