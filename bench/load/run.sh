#!/usr/bin/env bash
# GW Router load benchmark (see README.md in this folder).
#
#   bench/load/run.sh [target ...]      default: gw-router gw-router-nodedupe limit
#
# Targets
#   gw-router             the router, one isolate, in-flight dedup on (default config)
#   gw-router-nodedupe    same with engine.enable_single_flight: false
#   gw-router-w2          workers: 2 (two isolates on one port, SO_REUSEPORT)
#   gw-router-w2-nodedupe workers: 2, dedup off
#   gw-router-wN[-nodedupe] any worker count N
#   ...-mainisolate / ...-heaplimits  the same, served from the main isolate without heap
#                         limits / from supervised worker threads with heap: {24, 128} MiB
#   limit                 no router: load straight to the reviews subgraph (the floor)
#   hive[-nodedupe][-cache]  the peer: Hive Gateway (Node, under HIVE_DIR, default /tmp/ps-fed)
#                         with the Rust query planner (--hive-router-runtime), --fork 1;
#                         -nodedupe: upstream in-flight deduplication off; -cache: its response
#                         cache plugin (`responseCaching`, in memory, TTL from the subgraphs'
#                         Cache-Control; bench/entity_cache_load.sh)
#
# What one run does: starts the four benchmark subgraphs (one Deno process,
# bench/load/subgraphs/server.ts) pinned to LOAD_CPUS; for each target starts
# the router pinned to GATEWAY_CPUS, checks its answer to the federated query
# deep-equals fixtures/federated.expected.json (computed without federation),
# warms up, then runs wrk (50 connections, closed loop) checking EVERY response
# byte-for-byte against the verified one (post.lua); samples the router's RSS
# every 0.25 s; prints one line per target and appends it to results/results.tsv.
# Every process it starts runs in its own process group and is stopped by that id.
#
# Knobs: WARMUP_S=10 MEASURE_S=20 CONNECTIONS=50 WRK_TIMEOUT=10s GATEWAY_CPUS=1
# WORKER_CPUS=$GATEWAY_CPUS (for -wN targets) LOAD_CPUS=0 SUBGRAPH_PORT=14400 GATEWAY_PORT=14410
# ROUTER_CMD="deno run -A --unstable-net main.ts serve" (run from the project root;
#   e.g. ROUTER_CMD="./gw-router serve" for the compiled binary)
# ROUTER_CONFIG_EXTRA='YAML lines appended to every generated router config'
# REQUEST_BODY=file: the router targets' request body (default fixtures/federated.request.json;
#   bench/shared_state_load.sh sends the same query by hash)
# RESULTS_DIR=bench/load/results
set -Eeuo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WARMUP_S="${WARMUP_S:-10}"
MEASURE_S="${MEASURE_S:-20}"
CONNECTIONS="${CONNECTIONS:-50}"
WRK_TIMEOUT="${WRK_TIMEOUT:-10s}"
GATEWAY_CPUS="${GATEWAY_CPUS:-1}"
WORKER_CPUS="${WORKER_CPUS:-$GATEWAY_CPUS}" # CPUs of the -wN targets (e.g. 0,1: one per worker)
LOAD_CPUS="${LOAD_CPUS:-0}"
SUBGRAPH_PORT="${SUBGRAPH_PORT:-14400}"
GATEWAY_PORT="${GATEWAY_PORT:-14410}"
ROUTER_CMD="${ROUTER_CMD:-deno run -A --unstable-net main.ts serve}"
RESULTS_DIR="${RESULTS_DIR:-$HERE/results}"

LOG_TAG=load
# shellcheck source=bench/load/_lib.sh
source "$HERE/_lib.sh"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
command -v deno >/dev/null || die "deno is not on PATH"
trap stop_groups EXIT

rss_sampler() { # PID OUTFILE: max RSS (KiB) of the process, every 0.25 s, until it exits
  local pid="$1" out="$2" max=0 kb
  while kill -0 "$pid" 2>/dev/null; do
    kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
    [[ -n "$kb" && "$kb" -gt "$max" ]] && { max=$kb; echo "$max" >"$out"; }
    sleep 0.25
  done
}

RUN_DIR="$RESULTS_DIR/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN_DIR"
TSV="$RESULTS_DIR/results.tsv"
[[ -f "$TSV" ]] || printf 'time\ttarget\tcpus\trps\tp50_ms\tp99_ms\trss_peak_mib\terrors\tsubgraph_req_per_req\tsut_cpu_pct\tcpu_ms_per_req\n' >"$TSV"

start_subgraphs "$RUN_DIR"

check_json() { # EXPECTED ACTUAL -> 0 when deep-equal (key order ignored)
  deno eval --quiet 'import assert from "node:assert/strict";
    const [e, a] = Deno.args.map((p) => JSON.parse(Deno.readTextFileSync(p)));
    try { assert.deepStrictEqual(a, e); } catch (err) { console.error(String(err.message).slice(0, 600)); Deno.exit(1); }' \
    "$1" "$2"
}

sub_total() { curl -s "http://127.0.0.1:$SUBGRAPH_PORT/stats" | sed -n 's/.*"total":\([0-9]*\).*/\1/p'; }
cpu_ticks() { # PGID -> utime+stime (clock ticks) of the process group (Hive's forked worker too)
  cat /proc/[0-9]*/stat 2>/dev/null |
    awk -v pg="$1" '{ sub(/^.*\) /, ""); if ($3 == pg) t += $12 + $13 } END { print t + 0 }'
}

run_target() {
  local target="$1" dir="$RUN_DIR/$1" url body expected pid="" workers=1 dedupe=true cpus="$GATEWAY_CPUS"
  mkdir -p "$dir"
  if [[ "$target" == limit ]]; then
    url="http://127.0.0.1:$SUBGRAPH_PORT/reviews"
    body="$HERE/fixtures/limit.request.json"
    expected="$HERE/fixtures/limit.expected.json"
    pid=$SUBGRAPHS_PID
    cpus="$LOAD_CPUS"
  elif [[ "$target" =~ ^gw-router(-w([0-9]+))?(-nodedupe)?(-(mainisolate|heaplimits))?$ ]]; then
    workers="${BASH_REMATCH[2]:-1}"
    [[ -n "${BASH_REMATCH[3]}" ]] && dedupe=false
    local heap=""
    [[ "${BASH_REMATCH[5]}" == mainisolate ]] && heap="heap: { max_young_generation_mb: 0, max_old_generation_mb: 0 }"
    [[ "${BASH_REMATCH[5]}" == heaplimits ]] && heap="heap: { max_young_generation_mb: 24, max_old_generation_mb: 128 }"
    [[ "$workers" -gt 1 ]] && cpus="$WORKER_CPUS"
    url="http://127.0.0.1:$GATEWAY_PORT/graphql"
    body="${REQUEST_BODY:-$HERE/fixtures/federated.request.json}"
    expected="$HERE/fixtures/federated.expected.json"
    cat >"$dir/config.yaml" <<YAML
listen_addr: 127.0.0.1:$GATEWAY_PORT
supergraph_path: $RUN_DIR/supergraph.graphql
log_level: warn
workers: $workers
engine:
  enable_single_flight: $dedupe
$heap
${ROUTER_CONFIG_EXTRA:-}
YAML
    # shellcheck disable=SC2086
    start_group "$dir/router.log" "$cpus" bash -c 'cd "$1" && shift && exec "$@"' _ "$ROOT" \
      $ROUTER_CMD --config "$dir/config.yaml"
    pid=$STARTED_PID
    wait_ok "$url" "$body" 90 || { tail -20 "$dir/router.log" >&2; stop_group "$pid"; log "$target: did not start"; return 1; }
  elif [[ "$target" =~ ^hive(-nodedupe)?(-cache)?$ ]]; then
    local hive_dir="${HIVE_DIR:-/tmp/ps-fed}" transport="" cache=""
    [[ -f "$hive_dir/node_modules/@graphql-hive/gateway/dist/bin.js" ]] ||
      { log "$target: Hive Gateway is not installed under $hive_dir (HIVE_DIR)"; return 1; }
    [[ -n "${BASH_REMATCH[1]}" ]] &&
      transport='transportEntries: { "*.http": { options: { deduplicateInflightRequests: false } } },'
    [[ -n "${BASH_REMATCH[2]}" ]] && cache='responseCaching: { session: () => null },'
    printf 'export const gatewayConfig = { %s %s };\n' "$transport" "$cache" >"$dir/gateway.config.mjs"
    url="http://127.0.0.1:$GATEWAY_PORT/graphql"
    body="${REQUEST_BODY:-$HERE/fixtures/federated.request.json}"
    expected="$HERE/fixtures/federated.expected.json"
    start_group "$dir/gateway.log" "$cpus" bash -c 'cd "$1" && shift && exec "$@"' _ "$hive_dir" \
      env NODE_ENV=production node "$hive_dir/node_modules/@graphql-hive/gateway/dist/bin.js" \
      supergraph "$RUN_DIR/supergraph.graphql" --host 127.0.0.1 --port "$GATEWAY_PORT" --fork 1 \
      --hive-router-runtime --config-path "$dir/gateway.config.mjs"
    pid=$STARTED_PID
    wait_ok "$url" "$body" 90 || { tail -20 "$dir/gateway.log" >&2; stop_group "$pid"; log "$target: did not start"; return 1; }
  else
    die "unknown target $target"
  fi
  echo 0 >"$dir/rss_kib"
  rss_sampler "$pid" "$dir/rss_kib" &
  local sampler=$!

  curl -s -H 'content-type: application/json' --data-binary "@$body" "$url" >"$dir/first.json"
  local status=OK
  if ! check_json "$expected" "$dir/first.json" 2>"$dir/check.err"; then
    status=INCORRECT
    log "$target: answer differs from the expected one: $(head -c 300 "$dir/check.err")"
  fi
  local lua=(-s "$HERE/post.lua")
  BENCH_BODY="$body" BENCH_EXPECT="$dir/first.json" $(pin "$LOAD_CPUS") wrk -t1 -c"$CONNECTIONS" \
    -d"${WARMUP_S}s" --timeout "$WRK_TIMEOUT" "${lua[@]}" "$url" >"$dir/warmup.txt" 2>&1 || true
  curl -s -X POST "http://127.0.0.1:$SUBGRAPH_PORT/stats" >/dev/null || true
  local t0 t1
  t0=$(cpu_ticks "$pid")
  BENCH_BODY="$body" BENCH_EXPECT="$dir/first.json" $(pin "$LOAD_CPUS") wrk -t1 -c"$CONNECTIONS" \
    -d"${MEASURE_S}s" --timeout "$WRK_TIMEOUT" --latency "${lua[@]}" "$url" >"$dir/wrk.txt" 2>&1 || true
  t1=$(cpu_ticks "$pid")
  local sub; sub=$(sub_total)
  local line; line=$(grep '^BENCH_RESULT' "$dir/wrk.txt" || true)
  [[ -n "$line" ]] || { cat "$dir/wrk.txt" >&2; die "$target: no wrk result"; }
  get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<" ${line#BENCH_RESULT}"; }
  local requests rps p50 p99 errors rss cpu per cpu_ms
  requests=$(get requests); rps=$(get rps); p50=$(get p50_ms); p99=$(get p99_ms)
  errors=$(( $(get bad_status) + $(get gql_errors) + $(get mismatch) + $(get sock_connect) + $(get sock_read) + $(get sock_write) + $(get sock_timeout) ))
  [[ "$target" == limit ]] || stop_group "$pid"
  kill "$sampler" 2>/dev/null || true; wait "$sampler" 2>/dev/null || true
  rss=$(( $(cat "$dir/rss_kib") / 1024 ))
  cpu=$(awk -v d=$(( t1 - t0 )) -v hz="$(getconf CLK_TCK)" -v s="$MEASURE_S" 'BEGIN { printf "%.0f", 100 * d / hz / s }')
  per=$(awk -v s="${sub:-0}" -v r="$requests" 'BEGIN { if (r > 0) printf "%.2f", s / r; else print "-" }')
  # CPU time per request: robust to a noisy machine (RPS is not when others take the core).
  cpu_ms=$(awk -v d=$(( t1 - t0 )) -v hz="$(getconf CLK_TCK)" -v r="$requests" 'BEGIN { if (r > 0) printf "%.3f", 1000 * d / hz / r; else print "-" }')
  [[ "$target" == limit ]] && per="1.00"
  [[ "$errors" -gt 0 && "$status" == OK ]] && status=ERRORS
  printf '%-24s rps %9.1f  p50 %8.2f ms  p99 %8.2f ms  RSS %4d MiB  errors %d  subgraph req/req %s  cpu %s%% (%s ms/req)  %s\n' \
    "$target" "$rps" "$p50" "$p99" "$rss" "$errors" "$per" "$cpu" "$cpu_ms" "$status"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$cpus" "$rps" "$p50" "$p99" \
    "$rss" "$errors" "$per" "$cpu" "$cpu_ms" >>"$TSV"
}

targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(gw-router gw-router-nodedupe limit)
log "results: $RUN_DIR (router on CPUs $GATEWAY_CPUS, -wN targets on $WORKER_CPUS, wrk + subgraphs on $LOAD_CPUS)"
for target in "${targets[@]}"; do run_target "$target" || true; done
