#!/usr/bin/env bash
# Issue 42: the entity cache on the federation load benchmark (bench/load/run.sh:
# four subgraphs, the nested benchmark query, wrk with 50 connections), with
# every subgraph answering `Cache-Control: max-age=60`; all variants in one run,
# interleaved ROUNDS times:
#
#   off     entity_cache off (the baseline)
#   miss    entity_cache on, memory bounded at 1 byte: every lookup misses and
#           nothing is kept (the cost of keys, lookups and writes on every fetch)
#   memory  entity_cache on, in memory (warm after the first request)
#   redis   entity_cache on a local redis-server
#   off-nodedup, memory-nodedup   the same with engine.enable_single_flight: false (identical
#           queries in flight no longer share subgraph answers and rendered results)
#
#   bench/entity_cache_load.sh                 # ROUNDS=2 WARMUP_S=5 MEASURE_S=15
#   VARIANTS="off miss" ROUNDS=3 bench/entity_cache_load.sh
#
# Prints one bench/load line per variant and round, prefixed by the variant:
# rps, `subgraph req/req` (subgraph requests per client request) and
# `cpu … ms/req` (the router's CPU per request; compare this one on a shared
# machine). Every process it starts is stopped by id.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROUNDS="${ROUNDS:-2}"
REDIS_PORT="${REDIS_PORT:-42520}"
export WARMUP_S="${WARMUP_S:-5}" MEASURE_S="${MEASURE_S:-15}"
export SUBGRAPH_PORT="${SUBGRAPH_PORT:-42500}" GATEWAY_PORT="${GATEWAY_PORT:-42510}"
export SUBGRAPH_CACHE_CONTROL="max-age=60"
command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }

setsid redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
REDIS_PID=$!
trap 'kill -- -"$REDIS_PID" 2>/dev/null || kill "$REDIS_PID" 2>/dev/null || true' EXIT

OFF=$'access_logs: { enabled: false }'
REDIS=$'storage_providers:\n  redis: [{ id: local, urls: ["redis://127.0.0.1:'"$REDIS_PORT"$'"] }]'
declare -A EXTRA=(
  [off]="$OFF"
  [miss]="$OFF"$'\nentity_cache: { enabled: true, max_bytes: 1 }'
  [memory]="$OFF"$'\nentity_cache: { enabled: true }'
  [redis]="$OFF"$'\n'"$REDIS"$'\nentity_cache: { enabled: true, storage: { provider_id: local } }'
  [off-nodedup]="$OFF"
  [memory-nodedup]="$OFF"$'\nentity_cache: { enabled: true }'
)
for round in $(seq 1 "$ROUNDS"); do
  for variant in ${VARIANTS:-off miss memory redis off-nodedup memory-nodedup}; do
    target=gw-router
    [[ "$variant" == *-nodedup ]] && target=gw-router-nodedupe
    ROUTER_CONFIG_EXTRA="${EXTRA[$variant]}" "$HERE/load/run.sh" "$target" 2>/dev/null |
      sed -E "s/^$target +/$(printf '%-14s' "$variant") r$round /"
  done
done
