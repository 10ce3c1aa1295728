#!/usr/bin/env bash
# GW Router soak test: the load benchmark's federated query at the benchmark
# load (50 closed-loop connections, every response checked byte-for-byte by
# post.lua) for SOAK_S seconds, with the router's RSS and open file
# descriptors sampled every second. After WARMUP_S it fits a least-squares
# line to RSS over time (Hive Gateway's memtest rule): a slope above
# MAX_SLOPE_MB per SLOPE_WINDOW_S seconds fails, as do a growing fd count
# (last minute's max above the first minute's max + MAX_FD_GROWTH) and any
# error. Bounded: it stops itself after SOAK_S, and every process it starts
# runs in its own process group, stopped by that id. 127.0.0.1 only.
#
#   bench/load/soak.sh                 # 10 minutes
#   SOAK_S=120 WARMUP_S=30 bench/load/soak.sh
#
# Knobs: SOAK_S=600 WARMUP_S=60 CONNECTIONS=50 SLOPE_WINDOW_S=60 MAX_SLOPE_MB=3
# MAX_FD_GROWTH=5 GATEWAY_CPUS=1 LOAD_CPUS=0 SUBGRAPH_PORT=14420 GATEWAY_PORT=14430
# ROUTER_CMD="deno run -A --unstable-net main.ts serve" ROUTER_CONFIG_EXTRA='YAML lines'
# RESULTS_DIR=bench/load/results
set -Eeuo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SOAK_S="${SOAK_S:-600}"
WARMUP_S="${WARMUP_S:-60}"
CONNECTIONS="${CONNECTIONS:-50}"
SLOPE_WINDOW_S="${SLOPE_WINDOW_S:-60}"
MAX_SLOPE_MB="${MAX_SLOPE_MB:-3}"
MAX_FD_GROWTH="${MAX_FD_GROWTH:-5}"
GATEWAY_CPUS="${GATEWAY_CPUS:-1}"
LOAD_CPUS="${LOAD_CPUS:-0}"
SUBGRAPH_PORT="${SUBGRAPH_PORT:-14420}"
GATEWAY_PORT="${GATEWAY_PORT:-14430}"
ROUTER_CMD="${ROUTER_CMD:-deno run -A --unstable-net main.ts serve}"
RESULTS_DIR="${RESULTS_DIR:-$HERE/results}"

LOG_TAG=soak
# shellcheck source=bench/load/_lib.sh
source "$HERE/_lib.sh"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
[[ "$WARMUP_S" -lt "$SOAK_S" ]] || die "WARMUP_S must be below SOAK_S"

SAMPLER=""
cleanup() {
  [[ -n "$SAMPLER" ]] && kill "$SAMPLER" 2>/dev/null || true
  stop_groups
}
trap cleanup EXIT

RUN_DIR="$RESULTS_DIR/soak-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN_DIR"

start_subgraphs "$RUN_DIR"
cat >"$RUN_DIR/config.yaml" <<YAML
listen_addr: 127.0.0.1:$GATEWAY_PORT
supergraph_path: $RUN_DIR/supergraph.graphql
log_level: warn
${ROUTER_CONFIG_EXTRA:-}
YAML
# shellcheck disable=SC2086
start_group "$RUN_DIR/router.log" "$GATEWAY_CPUS" bash -c 'cd "$1" && shift && exec "$@"' _ "$ROOT" \
  $ROUTER_CMD --config "$RUN_DIR/config.yaml"
ROUTER_PID=$STARTED_PID
URL="http://127.0.0.1:$GATEWAY_PORT/graphql"
BODY="$HERE/fixtures/federated.request.json"
wait_ok "$URL" "$BODY" 90 || { tail -20 "$RUN_DIR/router.log" >&2; die "router did not start"; }
# The deno process is the group leader's child when ROUTER_CMD runs through bash -c ... exec.
curl -s -H 'content-type: application/json' --data-binary "@$BODY" "$URL" >"$RUN_DIR/first.json"

# Samples: seconds since the start, RSS (KiB), open fds.
(
  start=$(date +%s)
  while kill -0 "$ROUTER_PID" 2>/dev/null; do
    kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$ROUTER_PID/status" 2>/dev/null || echo 0)
    fds=$(find "/proc/$ROUTER_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
    printf '%s\t%s\t%s\n' "$(( $(date +%s) - start ))" "$kb" "$fds"
    sleep 1
  done
) >"$RUN_DIR/samples.tsv" &
SAMPLER=$!

log "soak ${SOAK_S}s (warm-up ${WARMUP_S}s), $CONNECTIONS connections; samples in $RUN_DIR/samples.tsv"
BENCH_BODY="$BODY" BENCH_EXPECT="$RUN_DIR/first.json" $(pin "$LOAD_CPUS") wrk -t1 -c"$CONNECTIONS" \
  -d"${SOAK_S}s" --timeout 10s --latency -s "$HERE/post.lua" "$URL" >"$RUN_DIR/wrk.txt" 2>&1 || true
kill "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
SAMPLER=""
stop_group "$ROUTER_PID"

LINE=$(grep '^BENCH_RESULT' "$RUN_DIR/wrk.txt" || true)
[[ -n "$LINE" ]] || { cat "$RUN_DIR/wrk.txt" >&2; die "no wrk result"; }
deno eval --quiet '
const [samplesFile, line, warmup, windowS, maxSlope, maxFd] = Deno.args;
const rows = Deno.readTextFileSync(samplesFile).trim().split("\n").map((l) => l.split("\t").map(Number));
const after = rows.filter(([t]) => t >= Number(warmup));
if (after.length < 10) { console.log("too few samples after warm-up"); Deno.exit(1); }
const xs = after.map(([t]) => t), ys = after.map(([, kb]) => kb / 1024);
const mx = xs.reduce((a, b) => a + b) / xs.length, my = ys.reduce((a, b) => a + b) / ys.length;
let sxy = 0, sxx = 0;
for (let i = 0; i < xs.length; i++) { sxy += (xs[i] - mx) * (ys[i] - my); sxx += (xs[i] - mx) ** 2; }
const slope = sxy / sxx * Number(windowS);
const get = (k) => Number((line.match(new RegExp(` ${k}=([0-9.]+)`)) ?? [])[1] ?? 0);
const errors = ["bad_status", "gql_errors", "mismatch", "sock_connect", "sock_read", "sock_write", "sock_timeout"].reduce((n, k) => n + get(k), 0);
const fds = after.map(([, , f]) => f);
const first = Math.max(...fds.slice(0, 60)), last = Math.max(...fds.slice(-60));
const peak = Math.max(...rows.map(([, kb]) => kb)) / 1024;
const ok = slope <= Number(maxSlope) && last - first <= Number(maxFd) && errors === 0;
console.log(`soak rps ${get("rps")}  p50 ${get("p50_ms")} ms  p99 ${get("p99_ms")} ms  errors ${errors}  ` +
  `RSS after warm-up ${Math.min(...ys).toFixed(0)}–${Math.max(...ys).toFixed(0)} MiB (peak ${peak.toFixed(0)})  ` +
  `slope ${slope.toFixed(2)} MB per ${windowS} s (limit ${maxSlope})  fds ${first} → ${last}  ${ok ? "OK" : "FAIL"}`);
Deno.exit(ok ? 0 : 1);
' "$RUN_DIR/samples.tsv" "$LINE" "$WARMUP_S" "$SLOPE_WINDOW_S" "$MAX_SLOPE_MB" "$MAX_FD_GROWTH"
