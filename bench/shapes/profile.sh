#!/usr/bin/env bash
# CPU-profile GW Router at a fixed arrival rate on one shape (issue 33):
#   bench/shapes/profile.sh SHAPE RATE [SECONDS=20]     SHAPE: many | plans | unique | query | nested | nestedheld
# `many`: bench/shapes/subgraphs.ts and the 87-fetch query (run.ts); `plans`: the same
# subgraphs and the many-plans query (plans.ts); `unique`: the
# bench/load subgraphs answering after 10 ms and the federated query, a unique
# `Authorization` per request, forwarded; `query`: bench/shapes/query.ts's subgraphs answering
# after 10 ms and its query, answers checked; `nested` / `nestedheld`: bench/shapes/nested.ts's
# subgraphs and its ~8 MB query (with the 100 ms second subgraph), answers checked. With SYSCALLS=1 the router also runs under
# `strace -c -f` over the load window (system calls by kind; divide by the requests; strace
# slows the router, so its CPU figure is not comparable then). The router runs under
# `deno run --cpu-prof` on CPU 1 (GATEWAY_CPUS), subgraphs and the open-loop load on CPU 0 (LOAD_CPUS); SIGTERM
# makes it drain and write the profile, summarized by bench/load/cpuprofile_top.ts.
# Output in bench/load/results/shape-profile-*/ (git-ignored). Ports: PORT_BASE (49000) + 10, + 100.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
SHAPE="$1" RATE="$2" SECONDS_LOAD="${3:-20}"
GATEWAY_CPUS="${GATEWAY_CPUS:-1}" LOAD_CPUS="${LOAD_CPUS:-0}"
PORT_BASE="${PORT_BASE:-49000}"
GW_PORT=$((PORT_BASE + 10)) SG_PORT=$((PORT_BASE + 100))
OUT="$ROOT/bench/load/results/shape-profile-$SHAPE-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
PIDS=()
stop() { kill -TERM -- "-$1" 2>/dev/null || true; for _ in $(seq 1 100); do kill -0 -- "-$1" 2>/dev/null || break; sleep 0.1; done; kill -KILL -- "-$1" 2>/dev/null || true; }
trap 'for p in "${PIDS[@]}"; do stop "$p"; done' EXIT
cd "$ROOT"
if [[ $SHAPE == many || $SHAPE == plans ]]; then
  setsid taskset -c "$LOAD_CPUS" env SHAPES_SUBGRAPH_PORT="$SG_PORT" deno run -A "$HERE/subgraphs.ts" >"$OUT/subgraphs.log" 2>&1 &
  PIDS+=($!)
  deno eval --config "$ROOT/deno.json" "
    import { composeSupergraph } from '$ROOT/lib/compose/mod.ts';
    import { manyExpected, manyQuery, SDLS } from '$HERE/subgraphs.ts';
    import { plansExpected, plansQuery } from '$HERE/plans.ts';
    const link = 'extend schema @link(url: \"https://specs.apollo.dev/federation/v2.5\", import: [\"@key\", \"@shareable\"])';
    const c = composeSupergraph(Object.entries(SDLS).map(([name, sdl]) => ({ name, url: 'http://127.0.0.1:$SG_PORT/' + name, sdl: link + '\n' + sdl })));
    if (!c.ok) throw new Error('no compose');
    Deno.writeTextFileSync('$OUT/supergraph.graphql', c.supergraphSdl);
    const plans = '$SHAPE' === 'plans';
    Deno.writeTextFileSync('$OUT/body.json', JSON.stringify({ query: plans ? plansQuery : manyQuery(17) }));
    Deno.writeTextFileSync('$OUT/expected.json', JSON.stringify(plans ? plansExpected : manyExpected(17)));"
  export EXPECT_DATA_FILE="$OUT/expected.json"
elif [[ $SHAPE == nested || $SHAPE == nestedheld ]]; then
  setsid taskset -c "$LOAD_CPUS" env NESTED_SUBGRAPH_PORT="$SG_PORT" deno run -A "$HERE/nested.ts" >"$OUT/subgraphs.log" 2>&1 &
  PIDS+=($!)
  deno run -A "$HERE/nested.ts" files "$OUT" "$SG_PORT" ${SHAPE#nested}
  export EXPECT_DATA_FILE="$OUT/expected.json"
elif [[ $SHAPE == query ]]; then
  setsid taskset -c "$LOAD_CPUS" env QUERY_SUBGRAPH_PORT="$SG_PORT" deno run -A "$HERE/query.ts" >"$OUT/subgraphs.log" 2>&1 &
  PIDS+=($!)
  deno run -A "$HERE/query.ts" files "$OUT" "$SG_PORT"
  export EXPECT_DATA_FILE="$OUT/expected.json"
else
  setsid taskset -c "$LOAD_CPUS" env SUBGRAPH_PORT="$SG_PORT" SUBGRAPH_DELAY_MS=10 deno run -A "$ROOT/bench/load/subgraphs/server.ts" >"$OUT/subgraphs.log" 2>&1 &
  PIDS+=($!)
  sed -E "s#http://127\.0\.0\.1:[0-9]+/#http://127.0.0.1:$SG_PORT/#g" bench/load/fixtures/supergraph.graphql >"$OUT/supergraph.graphql"
  cp bench/load/fixtures/federated.request.json "$OUT/body.json"
fi
printf 'listen_addr: 127.0.0.1:%s\nsupergraph_path: %s\nmcp: { enabled: false }\naccess_logs: { enabled: false }\nheaders: { all: { request: [ { op: propagate, named: Authorization } ] } }\n' \
  "$GW_PORT" "$OUT/supergraph.graphql" >"$OUT/config.yaml"
LOG_LEVEL=warn setsid taskset -c "$GATEWAY_CPUS" deno run -A --cpu-prof --cpu-prof-dir="$OUT" main.ts serve --config "$OUT/config.yaml" >"$OUT/router.log" 2>&1 &
ROUTER=$!
PIDS+=("$ROUTER")
URL="http://127.0.0.1:$GW_PORT/graphql"
for _ in $(seq 1 600); do
  [[ $(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' --data-binary "@$OUT/body.json" "$URL") == 200 ]] && break
  sleep 0.1
done
t0=$(awk '{print $14+$15}' "/proc/$ROUTER/stat")
if [[ ${SYSCALLS:-0} == 1 ]]; then
  strace -c -f -p "$ROUTER" -o "$OUT/strace.txt" &
  STRACE=$!
fi
taskset -c "$LOAD_CPUS" deno run -A "$HERE/openloop.ts" "$URL" "$OUT/body.json" "$RATE" "$SECONDS_LOAD" 3 | tee "$OUT/load.json"
t1=$(awk '{print $14+$15}' "/proc/$ROUTER/stat")
if [[ -n ${STRACE:-} ]]; then kill -INT "$STRACE"; wait "$STRACE" || true; head -30 "$OUT/strace.txt"; fi
echo "router CPU $(((t1 - t0) * 1000 / $(getconf CLK_TCK))) ms over $((RATE * (SECONDS_LOAD + 3))) requests" | tee "$OUT/cpu.txt"
stop "$ROUTER"
deno run -R "$ROOT/bench/load/cpuprofile_top.ts" "$OUT"/*.cpuprofile 40 | tee "$OUT/top.txt"
