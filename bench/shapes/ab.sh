#!/usr/bin/env bash
# A/B of one build on one shape: router CPU ms per answer, answers, peak RSS.
#   bench/shapes/ab.sh CHECKOUT_DIR PORT CLIENTS QUERY_FILE SUPERGRAPH_FILE
# The subgraphs (bench/shapes/subgraphs.ts) must run already, pinned to CPU 0, and the
# supergraph name their URLs. The router runs on CPU 1 (its own process group, stopped by it).
set -u
dir=$1 port=$2 clients=$3 q=$4 sg=$5
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\nmcp: { enabled: false }\naccess_logs: { enabled: false }\n' "$port" "$sg" >"$tmp/c.yaml"
cd "$dir" || exit 2
LOG_LEVEL=warn setsid taskset -c 1 deno run -A main.ts serve --config "$tmp/c.yaml" >"$tmp/router.log" 2>&1 &
pid=$!
sleep 5
taskset -c 0 deno run -A "$here/closedloop.ts" "http://127.0.0.1:$port/graphql" "$q" "$clients" 3 8000000 >/dev/null
(while kill -0 "$pid" 2>/dev/null; do awk '/VmRSS/{print $2}' "/proc/$pid/status"; sleep 0.1; done) >"$tmp/rss.txt" &
t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
out=$(taskset -c 0 deno run -A "$here/closedloop.ts" "http://127.0.0.1:$port/graphql" "$q" "$clients" 15 8000000)
t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
kill -TERM -- "-$pid"
sleep 1
ok=$(sed 's/.*"ok":\([0-9]*\).*/\1/' <<<"$out")
peak=$(sort -n "$tmp/rss.txt" | tail -1)
hz=$(getconf CLK_TCK)
echo "$dir clients=$clients ok=$ok cpu_ms_per_req=$(((t1 - t0) * 1000 / hz / ok)) peak_rss_mib=$((peak / 1024)) $(grep -o '"p50_ms":[0-9]*' <<<"$out")"
rm -rf "$tmp"
