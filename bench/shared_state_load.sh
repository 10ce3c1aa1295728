#!/usr/bin/env bash
# Issue 30: the benchmark query sent by hash vs as text, and the cost of rate
# limiting in memory and on Redis, on the federation load benchmark
# (bench/load/run.sh: four subgraphs, the nested 16-fetch query, wrk with 50
# connections), all variants in one run, interleaved ROUNDS times:
#
#   text        the query as text (parse cache hit after the first)
#   hash        {"documentId": "sha256:…"} of a trusted document (persisted_operations.manifests)
#   rl-memory   text + rate_limit on (a budget never spent: the check's cost), memory store
#   rl-redis    the same with the budget in a local redis-server (one EVALSHA per request)
#
#   bench/shared_state_load.sh                 # ROUNDS=2 WARMUP_S=5 MEASURE_S=15
#   VARIANTS="text hash" ROUNDS=3 bench/shared_state_load.sh
#
# Prints one bench/load line per variant and round, prefixed by the variant.
# Compare `cpu … ms/req` (the router's CPU per request) on a shared machine;
# rps moves with whatever else runs. Every process it starts is stopped by id.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROUNDS="${ROUNDS:-2}"
REDIS_PORT="${REDIS_PORT:-42420}"
export WARMUP_S="${WARMUP_S:-5}" MEASURE_S="${MEASURE_S:-15}"
export SUBGRAPH_PORT="${SUBGRAPH_PORT:-42400}" GATEWAY_PORT="${GATEWAY_PORT:-42410}"
command -v redis-server >/dev/null || { echo "redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }

WORK="$(mktemp -d)"
setsid redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
REDIS_PID=$!
trap 'kill -- -"$REDIS_PID" 2>/dev/null || kill "$REDIS_PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT

# The benchmark query as a trusted document, and the request that names it by hash.
deno run --allow-read --allow-write - "$HERE/load/fixtures/federated.request.json" "$WORK" <<'DENO'
const [requestFile, work] = Deno.args;
const { query } = JSON.parse(await Deno.readTextFile(requestFile));
const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(query));
const hash = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
await Deno.writeTextFile(`${work}/manifest.json`, JSON.stringify({ [hash]: query }));
await Deno.writeTextFile(`${work}/by_hash.json`, JSON.stringify({ documentId: `sha256:${hash}` }));
DENO

OFF=$'access_logs: { enabled: false }'
MANIFEST=$'persisted_operations:\n  manifests: ['"$WORK/manifest.json"$']'
RL=$'rate_limit:\n  enabled: true\n  rate: 1000000000\n  burst: 1000000000\n  period: 1s'
REDIS=$'storage_providers:\n  redis: [{ id: local, urls: ["redis://127.0.0.1:'"$REDIS_PORT"$'"] }]'
declare -A EXTRA=(
  [text]="$OFF"$'\n'"$MANIFEST"
  [hash]="$OFF"$'\n'"$MANIFEST"
  [rl-memory]="$OFF"$'\n'"$RL"
  [rl-redis]="$OFF"$'\n'"$REDIS"$'\n'"$RL"$'\n  storage: { provider_id: local }'
)
for round in $(seq 1 "$ROUNDS"); do
  for variant in ${VARIANTS:-text hash rl-memory rl-redis}; do
    body=""
    [[ "$variant" == hash ]] && body="$WORK/by_hash.json"
    REQUEST_BODY="$body" ROUTER_CONFIG_EXTRA="${EXTRA[$variant]}" "$HERE/load/run.sh" gw-router 2>/dev/null |
      sed "s/^gw-router /$(printf '%-10s' "$variant") r$round /"
  done
done
