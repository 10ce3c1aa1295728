# Shared by run.sh and soak.sh (sourced, after HERE, ROOT, LOAD_CPUS and
# SUBGRAPH_PORT are set): logging, CPU pinning, processes in their own process
# groups stopped by that id, waiting for a 200, the benchmark subgraphs.
# shellcheck shell=bash

log() { printf '[%s %s] %s\n' "$LOG_TAG" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }
pin() { if command -v taskset >/dev/null && [[ -n "$1" ]]; then echo "taskset -c $1"; fi; }

GROUPS_STARTED=()
start_group() { # LOGFILE CPUS cmd... -> STARTED_PID (= its process group id)
  local logfile="$1" cpus="$2"; shift 2
  # shellcheck disable=SC2046
  setsid $(pin "$cpus") "$@" >"$logfile" 2>&1 </dev/null &
  STARTED_PID=$!
  GROUPS_STARTED+=("$STARTED_PID")
}
stop_group() { # PGID
  local pg="$1" i
  if kill -0 -- "-$pg" 2>/dev/null; then
    kill -TERM -- "-$pg" 2>/dev/null || true
    for i in $(seq 1 50); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 0.1; done
    kill -0 -- "-$pg" 2>/dev/null && kill -KILL -- "-$pg" 2>/dev/null || true
  fi
  wait "$pg" 2>/dev/null || true
}
stop_groups() { local pg; for pg in "${GROUPS_STARTED[@]}"; do stop_group "$pg"; done; }

wait_ok() { # URL BODYFILE SECONDS -> 0 when a POST (or GET without body) answers 200
  local url="$1" body="$2" n=$(( $3 * 10 )) i code
  for ((i = 0; i < n; i++)); do
    if [[ -n "$body" ]]; then
      code=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
        --data-binary "@$body" "$url" 2>/dev/null || true)
    else
      code=$(curl -s -o /dev/null -w '%{http_code}' "$url" 2>/dev/null || true)
    fi
    [[ "$code" == 200 ]] && return 0
    sleep 0.1
  done
  return 1
}

start_subgraphs() { # RUN_DIR -> SUBGRAPHS_PID; RUN_DIR/supergraph.graphql pointing at them
  local dir="$1"
  # Subgraphs: one Deno process, four paths.
  start_group "$dir/subgraphs.log" "$LOAD_CPUS" env SUBGRAPH_PORT="$SUBGRAPH_PORT" \
    deno run --allow-net --allow-env --allow-read --config "$ROOT/deno.json" "$HERE/subgraphs/server.ts"
  SUBGRAPHS_PID=$STARTED_PID
  wait_ok "http://127.0.0.1:$SUBGRAPH_PORT/health" "" 60 || { cat "$dir/subgraphs.log" >&2; die "subgraphs did not start"; }
  sed -E "s#http://127\.0\.0\.1:[0-9]+/#http://127.0.0.1:$SUBGRAPH_PORT/#g" \
    "$HERE/fixtures/supergraph.graphql" >"$dir/supergraph.graphql"
}
