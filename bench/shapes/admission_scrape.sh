#!/usr/bin/env bash
# The admission gate under a fixed rate on the `query50` shape (issue 33): the router (this
# checkout, default config plus Prometheus) on CPU 1, bench/shapes/query.ts answering after 50 ms
# on CPU 0, openloop.ts at RATE for 15 s after 3 s of warm-up, and the gauges
# gw_router_admission_{in_flight,limit,queued} scraped every 0.5 s (printed as
# "in_flight limit queued|..."), then the router process's CPU share over the 18 s.
#   bench/shapes/admission_scrape.sh RATE        e.g. 450 (below one core's capacity), 900 (twice)
# Ports: PORT_BASE (47000) + 10 router, + 88 metrics, + 300 subgraphs.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
RATE="$1"
PORT_BASE="${PORT_BASE:-47000}"
GW=$((PORT_BASE + 10)) METRICS=$((PORT_BASE + 88)) SG=$((PORT_BASE + 300))
TMP="$(mktemp -d)"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done; rm -rf "$TMP"' EXIT
cd "$ROOT"
setsid taskset -c 0 env QUERY_DELAY_MS=50 QUERY_SUBGRAPH_PORT="$SG" deno run -A "$HERE/query.ts" >"$TMP/subgraphs.log" 2>&1 &
PIDS+=($!)
deno run -A "$HERE/query.ts" files "$TMP" "$SG"
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\naccess_logs: { enabled: false }\nmcp: { enabled: false }\nheaders: { all: { request: [ { op: propagate, named: Authorization } ] } }\ntelemetry: { metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:%s" } } }\n' \
  "$GW" "$TMP/supergraph.graphql" "$METRICS" >"$TMP/config.yaml"
LOG_LEVEL=warn setsid taskset -c 1 deno run -A main.ts serve --config "$TMP/config.yaml" >"$TMP/router.log" 2>&1 &
ROUTER=$!
PIDS+=("$ROUTER")
URL="http://127.0.0.1:$GW/graphql"
for _ in $(seq 1 300); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' --data-binary "@$TMP/body.json" "$URL") == 200 ]] && break
  sleep 0.1
done
t0=$(awk '{print $14+$15}' "/proc/$ROUTER/stat")
for _ in $(seq 1 36); do
  curl -s --max-time 1 "http://127.0.0.1:$METRICS/metrics" |
    awk '/^gw_router_admission_(in_flight|limit|queued) /{printf "%s ", $2}'
  echo
  sleep 0.5
done >"$TMP/scrape.txt" &
SCRAPE=$!
EXPECT_DATA_FILE="$TMP/expected.json" taskset -c 0 deno run -A "$HERE/openloop.ts" "$URL" "$TMP/body.json" "$RATE" 15 3
t1=$(awk '{print $14+$15}' "/proc/$ROUTER/stat")
wait "$SCRAPE" || true
echo "router core busy $(((t1 - t0) * 100 / $(getconf CLK_TCK) / 18)) %"
tr '\n' '|' <"$TMP/scrape.txt"
echo
