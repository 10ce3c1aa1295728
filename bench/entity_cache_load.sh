#!/usr/bin/env bash
# Issue 42: the entity cache on the federation load benchmark (bench/load/run.sh:
# the shared benchmark's nested query over its four subgraphs, wrk with 50
# connections, every answer checked byte for byte), with every subgraph
# answering `Cache-Control: max-age=60`, side by side with Hive Gateway (Rust
# planner, `--hive-router-runtime`) and its response cache plugin; all variants
# in one run, interleaved ROUNDS times:
#
#   off            entity_cache off (the baseline; single flight on, the default)
#   memory         entity_cache on, in memory (warm after the first request)
#   redis          entity_cache on a local redis-server
#   miss           entity_cache on, memory bounded at 1 byte: every lookup misses and
#                  nothing is kept (keys, lookups and entries built on every fetch)
#   private-miss   entity_cache on with `private_id: header:X-User`, the subgraphs
#                  answering `private, max-age=60` and every request from a new
#                  X-User: every lookup misses, every entry is written (and evicted)
#   hive           Hive Gateway + Rust planner (upstream in-flight dedup on, its default)
#   hive-cache     the same with `responseCaching` (whole responses, in memory, TTL from
#                  the subgraphs' Cache-Control)
#   *-nodedup      GW: engine.enable_single_flight: false (identical queries in flight
#                  no longer share subgraph answers and rendered results); Hive:
#                  upstream in-flight deduplication off
#
#   bench/entity_cache_load.sh                          # ROUNDS=2 WARMUP_S=5 MEASURE_S=15
#   VARIANTS="off miss" ROUNDS=3 bench/entity_cache_load.sh
#
# Each gateway is pinned to GATEWAY_CPUS (1), wrk and the subgraphs to LOAD_CPUS (0).
# Prints one line per variant and round: rps, subgraph requests per query, the
# gateway's own CPU (its process group's utime+stime over the window: `cpu %`,
# ms per request and requests per core-second; compare these on a shared
# machine, not rps), errors, the answer check, and the 1-minute load average.
# The lines are also appended, with the run's start and end `uptime`, to
# RESULTS (bench/entity_cache/results.md). Every process it starts is stopped by id.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROUNDS="${ROUNDS:-2}"
REDIS_PORT="${REDIS_PORT:-42520}"
RESULTS="${RESULTS:-$HERE/entity_cache/results.md}"
export WARMUP_S="${WARMUP_S:-5}" MEASURE_S="${MEASURE_S:-15}"
export SUBGRAPH_PORT="${SUBGRAPH_PORT:-42500}" GATEWAY_PORT="${GATEWAY_PORT:-42510}"
command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }

setsid redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
REDIS_PID=$!
trap 'kill -- -"$REDIS_PID" 2>/dev/null || kill "$REDIS_PID" 2>/dev/null || true' EXIT

OFF=$'access_logs: { enabled: false }'
REDIS=$'storage_providers:\n  redis: [{ id: local, urls: ["redis://127.0.0.1:'"$REDIS_PORT"$'"] }]'
declare -A EXTRA=(
  [off]="$OFF"
  [memory]="$OFF"$'\nentity_cache: { enabled: true }'
  [redis]="$OFF"$'\n'"$REDIS"$'\nentity_cache: { enabled: true, storage: { provider_id: local } }'
  [miss]="$OFF"$'\nentity_cache: { enabled: true, max_bytes: 1 }'
  [private-miss]="$OFF"$'\nentity_cache: { enabled: true, private_id: "header:X-User" }'
)
# The gateway target of bench/load/run.sh for a variant.
target_of() {
  case "$1" in
    hive) echo hive ;;
    hive-cache) echo hive-cache ;;
    hive-nodedup) echo hive-nodedupe ;;
    *-nodedup) echo gw-router-nodedupe ;;
    *) echo gw-router ;;
  esac
}
load1() { cut -d' ' -f1 /proc/loadavg; }
DEFAULT_VARIANTS="off memory redis hive hive-cache miss private-miss off-nodedup memory-nodedup miss-nodedup private-miss-nodedup hive-nodedup"

mkdir -p "$(dirname "$RESULTS")"
OUT="$(mktemp)"
{
  echo
  echo "### $(date -u '+%F %H:%M') UTC: ROUNDS=$ROUNDS WARMUP_S=$WARMUP_S MEASURE_S=$MEASURE_S, $(nproc) CPUs"
  echo
  echo '```'
  echo "start: $(uptime)"
  printf '%-20s %-3s %9s %9s %7s %9s %11s %6s %-9s %s\n' variant rnd rps sub/query cpu% ms/req req/core-s errors answers load1
} | tee "$OUT"
for round in $(seq 1 "$ROUNDS"); do
  for variant in ${VARIANTS:-$DEFAULT_VARIANTS}; do
    base="${variant%-nodedup}"
    target="$(target_of "$variant")"
    cache_control="max-age=60" unique=""
    if [[ "$base" == private-miss ]]; then cache_control="private, max-age=60" unique="X-User"; fi
    line="$(ROUTER_CONFIG_EXTRA="${EXTRA[$base]:-$OFF}" SUBGRAPH_CACHE_CONTROL="$cache_control" \
      BENCH_UNIQUE_HEADER="$unique" "$HERE/load/run.sh" "$target" 2>/dev/null | tail -1 || true)"
    # bench/load/run.sh's line: `<target> rps R p50 … errors E subgraph req/req S cpu C% (M ms/req) STATUS`
    awk -v v="$variant" -v r="r$round" -v l="$(load1)" '{
      rps = $3; for (i = 1; i <= NF; i++) {
        if ($i == "errors") e = $(i + 1); if ($i == "req/req") s = $(i + 1)
        if ($i == "cpu") { c = $(i + 1); m = substr($(i + 2), 2) }
      }
      printf "%-20s %-3s %9s %9s %7s %9s %11.0f %6s %-9s %s\n", v, r, rps, s, c, m, (m > 0 ? 1000 / m : 0), e, $NF, l
    }' <<<"${line:-$target FAILED}" | tee -a "$OUT"
  done
done
echo "end:   $(uptime)" | tee -a "$OUT"
echo '```' >>"$OUT"
cat "$OUT" >>"$RESULTS"
rm -f "$OUT"
