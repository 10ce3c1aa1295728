#!/usr/bin/env bash
# Alternated A/B runs on the `plans` or `many` shape (issue 45), each through `ab.sh` at a fixed
# rate, every answer's `data` checked, CPU per request by thread (THREADS=1):
#   SHAPE=plans bench/shapes/ab_plans.sh "LABEL|CHECKOUT_DIR|ROUTER_FLAGS[|CONFIG_EXTRA]" ...
# e.g. bench/shapes/ab_plans.sh "base|/tmp/base|" "new|$PWD|"
# Starts bench/shapes/subgraphs.ts (the seven `p<i>` and the six `many` subgraphs) on CPU 0; the
# router runs on CPU 1. req/core·s = 1e6 / cpu_us_per_req.
# Env: SHAPE (plans | many), ROUNDS ("1 2"), RATE (50), SECONDS_LOAD (15),
# PORT_BASE (45000: router + 10, subgraphs + 100).
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SHAPE="${SHAPE:-plans}"
PORT_BASE="${PORT_BASE:-45000}"
SG_PORT=$((PORT_BASE + 100))
TMP="$(mktemp -d)"
cd "$ROOT"
setsid taskset -c 0 env SHAPES_SUBGRAPH_PORT="$SG_PORT" deno run -A "$HERE/subgraphs.ts" >"$TMP/subgraphs.log" 2>&1 &
SUB=$!
trap 'kill -TERM -- "-$SUB" 2>/dev/null || true; rm -rf "$TMP"' EXIT
deno eval --config "$ROOT/deno.json" "
  import { composeSupergraph } from '$ROOT/lib/compose/mod.ts';
  import { manyExpected, manyQuery, SDLS } from '$HERE/subgraphs.ts';
  import { plansExpected, plansQuery } from '$HERE/plans.ts';
  const link = 'extend schema @link(url: \"https://specs.apollo.dev/federation/v2.5\", import: [\"@key\", \"@shareable\"])';
  const c = composeSupergraph(Object.entries(SDLS).map(([name, sdl]) => ({ name, url: 'http://127.0.0.1:$SG_PORT/' + name, sdl: link + '\n' + sdl })));
  if (!c.ok) throw new Error('no compose');
  Deno.writeTextFileSync('$TMP/supergraph.graphql', c.supergraphSdl);
  const plans = '$SHAPE' === 'plans';
  Deno.writeTextFileSync('$TMP/body.json', JSON.stringify({ query: plans ? plansQuery : manyQuery(17) }));
  Deno.writeTextFileSync('$TMP/expected.json', JSON.stringify(plans ? plansExpected : manyExpected(17)));"
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SG_PORT/health" >/dev/null && break; sleep 0.1; done
for round in ${ROUNDS:-1 2}; do
  for variant in "$@"; do
    IFS='|' read -r label dir flags extra <<<"$variant"
    echo "round $round $label $(cut -d' ' -f1-3 /proc/loadavg)"
    ROUTER_FLAGS="$flags" CONFIG_EXTRA="${extra:-}" THREADS=1 RATE="${RATE:-50}" SECONDS_LOAD="${SECONDS_LOAD:-15}" \
      EXPECT_DATA_FILE="$TMP/expected.json" \
      bash "$HERE/ab.sh" "$dir" $((PORT_BASE + 10)) - "$TMP/body.json" "$TMP/supergraph.graphql"
  done
done
