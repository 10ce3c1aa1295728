#!/usr/bin/env bash
# The relay's CPU per request (guard_relay.ts), A/B alternated in one run:
#   ROUNDS=4 SECONDS_LOAD=8 [SIZE=87000] [BURST_MS=0] bench/load/guard_relay.sh [CHECKOUT_B]
# Per round: this checkout with the guard on, CHECKOUT_B's (if given) with the
# guard on, and `Deno.serve` direct; each line: µs of server CPU per request,
# RPS, and the 1-minute load average. Server on CPU 1, wrk -c50 on CPU 0.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
other=${1:-}
rounds=${ROUNDS:-4} seconds=${SECONDS_LOAD:-8} size=${SIZE:-87000} port=${PORT:-15510} burst=${BURST_MS:-0}
body="$here/fixtures/federated.request.json"
lua="$(mktemp)"
printf 'wrk.method="POST"\nwrk.headers["content-type"]="application/json"\nwrk.body=io.open("%s"):read("*a")\n' "$body" >"$lua"
one() { # LABEL DIR MODE
  local label=$1 dir=$2 mode=$3 out pid t0 t1 reqs
  out="$(mktemp)"
  setsid taskset -c 1 deno run -A "$dir/bench/load/guard_relay.ts" "$mode" "$port" "$size" "$burst" >"$out" 2>&1 &
  for _ in $(seq 1 100); do grep -q ready "$out" && break; sleep 0.1; done
  pid=$(sed -n 's/ready //p' "$out")
  taskset -c 0 wrk -t1 -c50 -d2s -s "$lua" "http://127.0.0.1:$port/" >/dev/null 2>&1
  t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  reqs=$(taskset -c 0 wrk -t1 -c50 -d"${seconds}s" -s "$lua" "http://127.0.0.1:$port/" 2>&1 |
    awk '/requests in/{print $1}')
  t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  kill -TERM "$pid" 2>/dev/null; sleep 0.5; kill -KILL "$pid" 2>/dev/null
  awk -v l="$label" -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v r="$reqs" -v s="$seconds" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN { printf "%-8s %6.1f us/req  %7.0f rps  cpu %3.0f%%  load %s\n", l, 1e6*d/hz/r, r/s, 100*d/hz/s, load }'
  rm -f "$out"
}
for _ in $(seq 1 "$rounds"); do
  one guard "$here/../.." guard
  [[ -n $other ]] && one guard-b "$other" guard
  one direct "$here/../.." direct
done
rm -f "$lua"
