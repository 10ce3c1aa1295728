#!/usr/bin/env bash
# Federated subscription benchmark (issue 29): SUBSCRIBERS graphql-ws clients on
# one topic, the feed subgraph emitting RATE events/s, each event needing one
# entity fetch from a second subgraph; every target gateway in TARGETS runs the
# same workload in this one run, one after the other, and a table closes it.
#
#   bench/subscriptions/run.sh                       # TARGETS="hive-gateway gw gw-nodedup"
#   TARGETS=hive-gateway bench/subscriptions/run.sh  # one target
#   SUBSCRIBERS=200 RATE=50 MEASURE_S=10 bench/subscriptions/run.sh
#
# Per target: delivered events (and the share of those the feed emitted), delivery
# latency p50/p99 (emit at the subgraph -> received by the client), CPU-seconds of
# the gateway's process group per million delivered events (/proc/<pid>/stat),
# events per CPU-second, RSS per 1 000 subscribers (loaded minus idle).
#
# Targets: floor (bench/subscriptions/floor.ts: the hand-written fan-out floor for this one
# subscription, issue 45; gateways are compared with it in events per CPU-second), limit (no gateway: the load generator subscribes at the feed itself, without
# the entity fields; CPU and RSS are then the subgraphs' process: the floor of this
# machine), hive-gateway (npm @graphql-hive/gateway, installed here with npm ci,
# subgraph subscriptions over WebSocket: hive-gateway.config.mjs), gw
# (`deno run -A main.ts serve --config <generated>`, `subscriptions.deduplicate: true`),
# gw-nodedup (the same with `subscriptions.deduplicate: false`: one upstream per client),
# gw-unguarded (gw with the connection limits of traffic_shaping.router at 0: no relay),
# gw-noadmit (gw with subscriptions.admission.enabled: false: no admission by capacity);
# ARRIVAL=live connects the subscribers while the feed runs (load.ts --arrival live: refusals
# at subscribe time counted, admitted subscribers ended must stay 0), ARRIVAL=paused (the
# default) connects them with the feed paused;
# GW_ADMISSION=false turns admission by capacity off in every gw target (to compare the
# fan-out's cost with the floor's, which admits everyone: issue 45);
# GW_CONFIG_EXTRA adds top-level YAML lines to both. A gateway that refuses
# subscriptions fails its row with the reason (exit 3 of load.ts), never hangs.
#
# Every process started here runs in its own session (setsid) and is stopped by
# its process group id only. Ports: 47101-47102 subgraphs, 47110 hive-gateway,
# 47111 gw, 47113 floor (override with FEED_PORT, PRODUCTS_PORT, HIVE_PORT, GW_PORT, FLOOR_PORT).
set -Eeuo pipefail

cd "$(dirname "$0")"
BENCH="$PWD"
ROOT="$(cd ../.. && pwd)"

TARGETS="${TARGETS:-hive-gateway gw gw-nodedup}"
SUBSCRIBERS="${SUBSCRIBERS:-1000}"
RATE="${RATE:-100}"
WARMUP_S="${WARMUP_S:-5}"
MEASURE_S="${MEASURE_S:-20}"
CHECK_TIMEOUT_S="${CHECK_TIMEOUT_S:-15}"
READY_TIMEOUT_S="${READY_TIMEOUT_S:-90}"
GATEWAY_CPUS="${GATEWAY_CPUS:-1}"
LOAD_CPUS="${LOAD_CPUS:-0}"
FEED_PORT="${FEED_PORT:-47101}"
PRODUCTS_PORT="${PRODUCTS_PORT:-47102}"
HIVE_PORT="${HIVE_PORT:-47110}"
GW_PORT="${GW_PORT:-47111}"
FLOOR_PORT="${FLOOR_PORT:-47113}"
HIVE_DIR="${HIVE_DIR:-$BENCH/peer}" # where node_modules/@graphql-hive/gateway is (npm ci)
RESULTS="${RESULTS:-$BENCH/results.tsv}"
ARRIVAL="${ARRIVAL:-paused}"

log() { printf '[subs-bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

pin=()
if command -v taskset >/dev/null; then pin=(taskset -c); fi
pinned() { # pinned CPUS cmd...
  local cpus="$1"; shift
  if [[ ${#pin[@]} -gt 0 && -n "$cpus" ]]; then "${pin[@]}" "$cpus" "$@"; else "$@"; fi
}

WORK="$(mktemp -d -t subs-bench.XXXXXX)"
STARTED=()
start_group() { # start_group LOG CPUS DIR cmd... -> STARTED_PID (= its process group id)
  local logfile="$1" cpus="$2" dir="$3"; shift 3
  # A background subshell is no group leader, so setsid (and taskset) exec in place:
  # $! is the server's PID and the id of its new process group.
  if [[ ${#pin[@]} -gt 0 && -n "$cpus" ]]; then
    (cd "$dir" && exec setsid "${pin[@]}" "$cpus" "$@") >"$logfile" 2>&1 </dev/null &
  else
    (cd "$dir" && exec setsid "$@") >"$logfile" 2>&1 </dev/null &
  fi
  STARTED_PID=$!
  STARTED+=("$STARTED_PID")
}
stop_group() {
  local pg="$1" i
  kill -0 -- "-$pg" 2>/dev/null || return 0
  kill -TERM -- "-$pg" 2>/dev/null || true
  for i in $(seq 1 50); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.1; done
  kill -KILL -- "-$pg" 2>/dev/null || true
  wait "$pg" 2>/dev/null || true
}
cleanup() {
  local pg
  for pg in "${STARTED[@]}"; do stop_group "$pg"; done
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_http() { # wait_http URL BODY SECONDS
  local i
  for i in $(seq 1 "$(( $3 * 4 ))"); do
    if curl -fsS -m 2 -H 'content-type: application/json' -d "$2" "$1" >/dev/null 2>&1; then
      return 0
    fi
    sleep 0.25
  done
  return 1
}

# ---------------------------------------------------------------- set-up
command -v curl >/dev/null || die "curl is needed"
command -v deno >/dev/null || die "deno is needed on PATH"
if [[ " $TARGETS " == *" hive-gateway "* && ! -f "$HIVE_DIR/node_modules/@graphql-hive/gateway/dist/bin.js" ]]; then
  log "installing the peer (npm ci in $HIVE_DIR)"
  (cd "$HIVE_DIR" && npm ci --no-audit --no-fund >/dev/null) || die "npm ci failed in $HIVE_DIR"
fi
SUPERGRAPH="$WORK/supergraph.graphql"
(cd "$ROOT" && deno run -A bench/subscriptions/compose.ts "$SUPERGRAPH" "$FEED_PORT" "$PRODUCTS_PORT") ||
  die "composition failed"

log "subgraphs: feed :$FEED_PORT ($RATE events/s), products :$PRODUCTS_PORT (cpus $LOAD_CPUS)"
start_group "$WORK/subgraphs.log" "$LOAD_CPUS" "$ROOT" env RATE="$RATE" FEED_PORT="$FEED_PORT" \
  PRODUCTS_PORT="$PRODUCTS_PORT" deno run -A "$ROOT/bench/subscriptions/subgraphs.ts"
SUBGRAPHS_PG=$STARTED_PID
wait_http "http://127.0.0.1:$PRODUCTS_PORT/graphql" '{"query":"{__typename}"}' 60 ||
  die "subgraphs did not start: $(tail -5 "$WORK/subgraphs.log")"
# Warm the load generator's module cache outside any measurement.
(cd "$ROOT" && deno cache bench/subscriptions/load.ts >/dev/null 2>&1) || true

start_target() { # start_target NAME -> STARTED_PID, URL
  # base-<gw target>: the same gateway target built from BASE_ROOT (another checkout, e.g.
  # `git archive <commit> | tar -x -C /tmp/base`), for A/B builds alternated in one run.
  local gw_root="$ROOT" name="$1"
  if [[ $name == base-gw* ]]; then
    [[ -n "${BASE_ROOT:-}" && -f "$BASE_ROOT/main.ts" ]] || die "target $name needs BASE_ROOT (a checkout with main.ts)"
    gw_root="$BASE_ROOT"
    name="${name#base-}"
  fi
  case "$name" in
    hive-gateway)
      URL="ws://127.0.0.1:$HIVE_PORT/graphql"
      start_group "$WORK/$1.log" "$GATEWAY_CPUS" "$BENCH" env NODE_ENV=production \
        node "$HIVE_DIR/node_modules/@graphql-hive/gateway/dist/bin.js" supergraph "$SUPERGRAPH" \
        --host 127.0.0.1 --port "$HIVE_PORT" --fork 1 \
        --config-path "$BENCH/hive-gateway.config.mjs"
      ;;
    gw | gw-nodedup | gw-unguarded | gw-noadmit)
      URL="ws://127.0.0.1:$GW_PORT/graphql"
      dedup=true
      [[ $name == gw-nodedup ]] && dedup=false
      guard=""
      # Without the connection limits (all three at 0) the router serves from Deno.serve
      # directly: no relay of every WebSocket frame (lib/listen/guarded_serve.ts).
      [[ $name == gw-unguarded ]] && guard="traffic_shaping:
  router:
    header_read_timeout_ms: 0
    keep_alive_timeout_ms: 0
    max_connections: 0"
      admission="${GW_ADMISSION:-true}"
      [[ $name == gw-noadmit ]] && admission=false
      mkdir -p "$WORK/operations"
      cat >"$WORK/gw.yaml" <<YAML
listen_addr: 127.0.0.1:$GW_PORT
supergraph_path: $SUPERGRAPH
operations_dir: $WORK/operations
log_level: error
mcp:
  enabled: false
subscriptions:
  deduplicate: $dedup
  admission:
    enabled: $admission
$guard
${GW_CONFIG_EXTRA:-}
YAML
      start_group "$WORK/$1.log" "$GATEWAY_CPUS" "$gw_root" deno run -A main.ts serve --config "$WORK/gw.yaml"
      ;;
    floor)
      # The fan-out floor (issue 45): a hand-written server for this one subscription, one
      # upstream, one entity fetch and one serialization per event, direct socket writes.
      URL="ws://127.0.0.1:$FLOOR_PORT/graphql"
      start_group "$WORK/$1.log" "$GATEWAY_CPUS" "$ROOT" env FLOOR_PORT="$FLOOR_PORT" \
        FEED_PORT="$FEED_PORT" PRODUCTS_PORT="$PRODUCTS_PORT" deno run -A bench/subscriptions/floor.ts
      ;;
    limit)
      # No gateway: the load generator subscribes at the feed itself (no entity fields).
      # The floor of this machine: what the feed and the load generator manage alone.
      URL="ws://127.0.0.1:$FEED_PORT/graphql"
      STARTED_PID="$SUBGRAPHS_PG"
      ;;
    *) die "unknown target $1 (limit, floor, hive-gateway, gw, gw-nodedup, gw-unguarded, gw-noadmit, base-gw…)" ;;
  esac
}

port_of() {
  case "$1" in limit) echo "$FEED_PORT" ;; floor) echo "$FLOOR_PORT" ;; hive-gateway) echo "$HIVE_PORT" ;; gw* | base-gw*) echo "$GW_PORT" ;; esac
}

printf 'when\ttarget\tsubscribers\trate\tdelivered\tdelivered_ratio\tp50_ms\tp99_ms\tcpu_s_per_million\tevents_per_cpu_s\trss_per_1000_mib\tnote\n' >"$WORK/table.tsv"
[[ -f "$RESULTS" ]] || head -1 "$WORK/table.tsv" >"$RESULTS"

for target in $TARGETS; do
  # Events flow only while load.ts runs a target (it starts and stops the feed).
  curl -fsS -m 2 -X POST "http://127.0.0.1:$FEED_PORT/stop" >/dev/null 2>&1 || true
  log "target $target: starting (cpus $GATEWAY_CPUS)"
  start_target "$target"
  pg="$STARTED_PID"
  port="$(port_of "$target")"
  if ! wait_http "http://127.0.0.1:$port/graphql" '{"query":"{__typename}"}' "$READY_TIMEOUT_S"; then
    [[ $target == limit ]] || stop_group "$pg"
    note="did not start: $(tail -3 "$WORK/$target.log" | tr '\t\n' '  ')"
    log "$target $note"
    printf '%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$(date -u +%FT%TZ)" "$target" \
      "$SUBSCRIBERS" "$RATE" "$note" >>"$WORK/table.tsv"
    continue
  fi
  log "target $target: ready (process group $pg); $SUBSCRIBERS subscribers, warm-up ${WARMUP_S}s, window ${MEASURE_S}s"
  load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
  set +e
  query=federated
  [[ $target == limit ]] && query=feed-only
  out="$(cd "$ROOT" && pinned "$LOAD_CPUS" deno run -A bench/subscriptions/load.ts --url "$URL" \
    --query "$query" --arrival "$ARRIVAL" \
    --subscribers "$SUBSCRIBERS" --rate "$RATE" --warmup "$WARMUP_S" --measure "$MEASURE_S" \
    --pgid "$pg" --feed "http://127.0.0.1:$FEED_PORT" --check-timeout "$CHECK_TIMEOUT_S" 2>"$WORK/load-$target.err")"
  code=$?
  set -e
  # Other work on the machine skews every figure: each row says the load average around it.
  loadavg="load ${load_before// /\/} -> $(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')"
  [[ $target == limit ]] || stop_group "$pg"
  echo "$out" >"$WORK/load-$target.json"
  if [[ $code -ne 0 ]]; then
    note="FAILED: $(tail -1 "$WORK/load-$target.err" | tr '\t' ' ')"
    log "$target $note"
    printf '%s\t%s\t%s\t%s\t-\t-\t-\t-\t-\t-\t-\t%s\n' "$(date -u +%FT%TZ)" "$target" \
      "$SUBSCRIBERS" "$RATE" "$note" >>"$WORK/table.tsv"
    continue
  fi
  log "$target: $out"
  echo "$out" | deno eval --ext=ts "
    const r = JSON.parse(await new Response(Deno.stdin.readable).text());
    const live = r.arrival === 'live' ? 'admitted ' + r.admitted + ', refused at subscribe ' + r.refused_at_window + ' (' + r.refusals + ' refusals, ' + r.refusals_behind + ' of them thread saturated), admitted ended ' + r.ended_total + (r.first_end ? ' (' + r.first_end.slice(0, 100) + ')' : '') + '; ' : '';
    const note = live + (r.failures_total > 0 ? 'failures: ' + r.failures + ' in the window, ' + r.failures_total + ' in all (' + r.first_failure.slice(0, 80) + '); ' : '') + '$loadavg';
    console.log([new Date().toISOString().slice(0, 19) + 'Z', '$target', r.subscribers, r.rate,
      r.delivered, r.delivered_ratio, r.p50_ms, r.p99_ms, r.cpu_s_per_million, r.events_per_cpu_s,
      r.rss_per_1000_mib, note].join('\t'));" >>"$WORK/table.tsv"
done

stats="$(curl -fsS "http://127.0.0.1:$FEED_PORT/stats" 2>/dev/null || echo '{}')"
stop_group "$SUBGRAPHS_PG"
tail -n +2 "$WORK/table.tsv" >>"$RESULTS"
echo
column -t -s $'\t' "$WORK/table.tsv"
log "feed stats at the end: $stats; rows appended to $RESULTS"
