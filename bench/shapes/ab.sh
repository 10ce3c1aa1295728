#!/usr/bin/env bash
# A/B of one build on one shape: router CPU per request, answers, latency, peak RSS.
#   bench/shapes/ab.sh CHECKOUT_DIR PORT CLIENTS QUERY_FILE SUPERGRAPH_FILE
#   RATE=50 bench/shapes/ab.sh CHECKOUT_DIR PORT - QUERY_FILE SUPERGRAPH_FILE
# Without RATE: CLIENTS clients in a closed loop (closedloop.ts, answers of 8 MB expected).
# With RATE: an open loop at RATE req/s (openloop.ts), a unique Authorization per request
# forwarded to the subgraphs by a header rule; EXPECT_DATA_FILE (optional) checks every answer.
# The subgraphs must run already, pinned to CPU 0, and the supergraph name their URLs. The
# router runs on CPU 1 (its own process group, stopped by it). SECONDS_LOAD (15) per run.
# CONFIG_EXTRA: YAML lines appended to the router's config (e.g. `engine: { ... }`).
# THREADS=1 adds the router's CPU per request by thread name (main, tokio, V8 workers ...).
# ALLOC=1 runs the router under _alloc_router.ts and adds the bytes its isolate allocated per
# request over the load window (V8's total_allocated_bytes, read by SIGUSR2).
set -u
dir=$1 port=$2 clients=$3 q=$4 sg=$5
rate=${RATE:-} seconds=${SECONDS_LOAD:-15}
here="$(cd "$(dirname "$0")" && pwd)"
# ROUTER_FLAGS unset: the V8 flags of CHECKOUT_DIR's `deno task start` (what operators run);
# ROUTER_FLAGS= (empty): none.
if [[ -z ${ROUTER_FLAGS+set} ]]; then
  ROUTER_FLAGS=$(grep -o '"start": "[^"]*' "$dir/deno.json" | grep -o -- '--v8-flags=[^ ]*' || true)
fi
tmp="$(mktemp -d)"
url="http://127.0.0.1:$port/graphql"
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\nmcp: { enabled: false }\naccess_logs: { enabled: false }\n' "$port" "$sg" >"$tmp/c.yaml"
[[ -n ${CONFIG_EXTRA:-} ]] && printf '%s\n' "$CONFIG_EXTRA" >>"$tmp/c.yaml"
[[ -n $rate ]] && printf 'headers: { all: { request: [ { op: propagate, named: Authorization } ] } }\n' >>"$tmp/c.yaml"
cd "$dir" || exit 2
# shellcheck disable=SC2086 # ROUTER_FLAGS: extra `deno run` flags of the router (e.g. --v8-flags=...)
if [[ ${ALLOC:-0} == 1 ]]; then
  # shellcheck disable=SC2086
  LOG_LEVEL=warn setsid taskset -c 1 deno run -A --config "$dir/deno.json" ${ROUTER_FLAGS:-} "$here/_alloc_router.ts" "$dir" serve --config "$tmp/c.yaml" >"$tmp/router.log" 2>&1 &
else
  # shellcheck disable=SC2086
  LOG_LEVEL=warn setsid taskset -c 1 deno run -A ${ROUTER_FLAGS:-} main.ts serve --config "$tmp/c.yaml" >"$tmp/router.log" 2>&1 &
fi
pid=$!
for _ in $(seq 1 300); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' --data-binary "@$q" "$url") == 200 ]] && break
  sleep 0.1
done
load() { # SECONDS
  if [[ -n $rate ]]; then taskset -c 0 deno run -A "$here/openloop.ts" "$url" "$q" "$rate" "$1"
  else taskset -c 0 deno run -A "$here/closedloop.ts" "$url" "$q" "$clients" "$1" 8000000; fi
}
load 3 >/dev/null
(while kill -0 "$pid" 2>/dev/null; do awk '/VmRSS/{print $2}' "/proc/$pid/status" 2>/dev/null; sleep 0.1; done) >"$tmp/rss.txt" &
threads() { for t in /proc/"$pid"/task/*; do echo "${t##*/} $(tr -d ' ' <"$t/comm") $(sed 's/.*) //' "$t/stat" | awk '{print $12+$13}')"; done; }
allocated() { kill -USR2 "$pid"; sleep 0.3; grep -o 'alloc_bytes=[0-9]*' "$tmp/router.log" | tail -1 | cut -d= -f2; }
[[ ${ALLOC:-0} == 1 ]] && a0=$(allocated)
t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
[[ ${THREADS:-0} == 1 ]] && threads >"$tmp/threads0.txt"
out=$(load "$seconds")
t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
[[ ${ALLOC:-0} == 1 ]] && a1=$(allocated)
[[ ${THREADS:-0} == 1 ]] && threads >"$tmp/threads1.txt"
kill -TERM -- "-$pid"
sleep 1
if [[ -n $rate ]]; then n=$(sed 's/.*"sent":\([0-9]*\).*/\1/' <<<"$out"); else n=$(sed 's/.*"ok":\([0-9]*\).*/\1/' <<<"$out"); fi
peak=$(sort -n "$tmp/rss.txt" | tail -1)
hz=$(getconf CLK_TCK)
echo "$dir ${rate:+rate=$rate }clients=$clients requests=$n cpu_us_per_req=$(((t1 - t0) * 1000000 / hz / n)) ${a1:+kb_alloc_per_req=$(((a1 - a0) / 1024 / n)) }peak_rss_mib=$((peak / 1024)) $(grep -o '"statuses":{[^}]*}\|"wrong_answers":[0-9]*\|"graphql_errors":[0-9]*\|"p50_ms":[0-9.]*\|"p99_ms":[0-9.]*' <<<"$out" | tr '\n' ' ')"
if [[ ${THREADS:-0} == 1 ]]; then
  # By thread id (one born during the run counts whole), summed by name: µs of CPU per request.
  awk -v n="$n" -v hz="$hz" 'NR==FNR { a[$1]=$3; next } { d[$2]+=$3-a[$1] } END { for (k in d) if (d[k] > 0) printf "  %s %d us/req\n", k, d[k]*1000000/hz/n }' \
    "$tmp/threads0.txt" "$tmp/threads1.txt" | sort -k2 -n -r
fi
rm -rf "$tmp"
