#!/usr/bin/env bash
# The connection guard's cost, A/B in one run: for ROUNDS rounds, each of
# `gw-router` (dedup on) and `gw-router-nodedupe` (dedup off) with the guard on
# from BASE_DIR (a checkout to compare with, optional), the guard on from this
# checkout, and the guard off (its three limits at 0: `Deno.serve` on TCP).
# Every run is a `bench/load/run.sh` line (router CPU ms per request beside
# RPS) with the 1-minute load average; all go to $OUT (default: stdout).
#   ROUNDS=3 BASE_DIR=/tmp/base bench/load/guard_ab.sh [gw-router gw-router-nodedupe]
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rounds=${ROUNDS:-3}
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(gw-router gw-router-nodedupe)
off='traffic_shaping: { router: { header_read_timeout_ms: 0, keep_alive_timeout_ms: 0, max_connections: 0 } }'
export WARMUP_S=${WARMUP_S:-5} MEASURE_S=${MEASURE_S:-15}
export SUBGRAPH_PORT=${SUBGRAPH_PORT:-15400} GATEWAY_PORT=${GATEWAY_PORT:-15410}
one() { # LABEL TARGET [env...]
  local label=$1 target=$2; shift 2
  local line
  line=$(env "$@" "$here/run.sh" "$target" 2>/dev/null | grep -E "^$target ")
  printf '%-5s %-10s load %s | %s\n' "$label" "$(date -u +%H:%M:%S)" \
    "$(cut -d' ' -f1 /proc/loadavg)" "$line"
}
for round in $(seq 1 "$rounds"); do
  for target in "${targets[@]}"; do
    if [[ -n ${BASE_DIR:-} ]]; then
      one "base" "$target" ROUTER_CMD="deno run -A --unstable-net $BASE_DIR/main.ts serve"
    fi
    one "on" "$target"
    one "off" "$target" ROUTER_CONFIG_EXTRA="$off"
  done
done
