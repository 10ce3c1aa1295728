#!/usr/bin/env bash
# A/B of one build at a fixed arrival rate (open loop, a unique Authorization per request,
# forwarded to the subgraphs by a header rule): router CPU ms per request, latency, peak RSS.
#   bench/shapes/ab_rate.sh CHECKOUT_DIR PORT RATE QUERY_FILE SUPERGRAPH_FILE [SECONDS=15]
# The subgraphs must run already, pinned to CPU 0, and the supergraph name their URLs;
# EXPECT_DATA_FILE (optional) checks every answer (openloop.ts). Router on CPU 1.
set -u
dir=$1 port=$2 rate=$3 q=$4 sg=$5 seconds=${6:-15}
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\nmcp: { enabled: false }\naccess_logs: { enabled: false }\nheaders: { all: { request: [ { op: propagate, named: Authorization } ] } }\n' "$port" "$sg" >"$tmp/c.yaml"
cd "$dir" || exit 2
LOG_LEVEL=warn setsid taskset -c 1 deno run -A main.ts serve --config "$tmp/c.yaml" >"$tmp/router.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' --data-binary "@$q" "http://127.0.0.1:$port/graphql") == 200 ]] && break
  sleep 0.1
done
taskset -c 0 deno run -A "$here/openloop.ts" "http://127.0.0.1:$port/graphql" "$q" "$rate" 3 >/dev/null
(while kill -0 "$pid" 2>/dev/null; do awk '/VmRSS/{print $2}' "/proc/$pid/status"; sleep 0.1; done) >"$tmp/rss.txt" &
t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
out=$(taskset -c 0 deno run -A "$here/openloop.ts" "http://127.0.0.1:$port/graphql" "$q" "$rate" "$seconds")
t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
kill -TERM -- "-$pid"
sleep 1
sent=$(sed 's/.*"sent":\([0-9]*\).*/\1/' <<<"$out")
peak=$(sort -n "$tmp/rss.txt" | tail -1)
hz=$(getconf CLK_TCK)
echo "$dir rate=$rate sent=$sent cpu_us_per_req=$(((t1 - t0) * 1000000 / hz / sent)) peak_rss_mib=$((peak / 1024)) $(grep -o '"statuses":{[^}]*}\|"wrong_answers":[0-9]*\|"graphql_errors":[0-9]*\|"p50_ms":[0-9.]*\|"p99_ms":[0-9.]*' <<<"$out" | tr '\n' ' ')"
rm -rf "$tmp"
