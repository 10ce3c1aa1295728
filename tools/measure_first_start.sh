#!/usr/bin/env bash
# tools/measure_first_start.sh [REPO] [ROUTER_PORT] [SUBGRAPH_PORT_BASE]
# What a newcomer's first `deno task demo` costs: a fresh clone of REPO (default:
# this checkout), an empty DENO_DIR, then seconds until /health/ready answers 200
# and the megabytes installed (node_modules and the Deno cache, hard links counted once).
set -u
repo=${1:-$(cd "$(dirname "$0")/.." && pwd)}
port=${2:-3002}
base=${3:-4001}
dir=$(mktemp -d)
git clone -q "$repo" "$dir/gw" && cd "$dir/gw" || exit 1
export DENO_DIR="$dir/deno_dir"
start=$(date +%s.%N)
LISTEN_ADDR=127.0.0.1:$port deno task demo --subgraph-port-base "$base" >"$dir/demo.log" 2>&1 &
pid=$!
until curl -fs -o /dev/null "http://127.0.0.1:$port/health/ready"; do
  sleep 0.1
  kill -0 $pid 2>/dev/null || { echo "the demo exited:"; tail -5 "$dir/demo.log"; exit 1; }
done
end=$(date +%s.%N)
kill -INT $pid
wait $pid 2>/dev/null
echo "ready after $(echo "$end - $start" | bc) s"
echo "installed: $(du -smc node_modules "$DENO_DIR" | tail -n 1 | cut -f1) MB" \
  "($(ls node_modules/.deno | wc -l) npm packages in node_modules)"
rm -rf "$dir"
