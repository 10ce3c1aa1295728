#!/usr/bin/env bash
# The connection guard's CPU per WebSocket frame (ws_relay.ts), alternated in one run:
#   ROUNDS=3 SUBSCRIBERS=1000 RATE=10 SECONDS_LOAD=8 FRAME=300 bench/subscriptions/ws_relay.sh [BASE_ROOT]
# Per round: this checkout's guard, BASE_ROOT's guard (if given), and `Deno.serve`
# direct (no relay); each line: µs of server CPU per delivered frame (server pinned
# to CPU 1, /proc/<pid>/stat), frames delivered, frames out of order, load average.
# guard minus direct is the relay's cost per frame.
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
base=${1:-}
rounds=${ROUNDS:-3} subs=${SUBSCRIBERS:-1000} rate=${RATE:-10} secs=${SECONDS_LOAD:-8} frame=${FRAME:-300}
for _ in $(seq 1 "$rounds"); do
  printf 'new  '; deno run -A "$here/ws_relay.ts" drive "$subs" "$rate" "$secs" "$frame" guard
  if [[ -n "$base" ]]; then
    cp "$here/ws_relay.ts" "$base/bench/subscriptions/ws_relay.ts"
    printf 'base '; deno run -A "$base/bench/subscriptions/ws_relay.ts" drive "$subs" "$rate" "$secs" "$frame" guard
  fi
  printf 'new  '; deno run -A "$here/ws_relay.ts" drive "$subs" "$rate" "$secs" "$frame" direct
done
