#!/usr/bin/env bash
# Issue 16: the cost of metrics and tracing on the federation load benchmark
# (bench/load/run.sh: four subgraphs, the nested 16-fetch query, wrk with 50
# connections), all variants in one run, interleaved ROUNDS times:
#
#   off          no metrics registry, no tracing, no access log
#   metrics      the Prometheus registry and listener (scraped by nobody)
#   access-log   metrics + one access log line per request (log_level info, to a file)
#   traced-1     metrics + tracing, sampling_rate 0.01, OTLP to a local sink
#   traced-100   metrics + tracing, sampling_rate 1
#
#   bench/telemetry_load.sh                 # ROUNDS=2 WARMUP_S=5 MEASURE_S=15
#   VARIANTS="off metrics" ROUNDS=3 bench/telemetry_load.sh
#
# Prints one bench/load line per variant and round, prefixed by the variant.
# Compare `cpu … ms/req` (the router's CPU per request) on a shared machine;
# rps moves with whatever else runs. Every process it starts is stopped by id.
set -Eeuo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROUNDS="${ROUNDS:-2}"
SINK_PORT="${SINK_PORT:-14480}"
export WARMUP_S="${WARMUP_S:-5}" MEASURE_S="${MEASURE_S:-15}"
export SUBGRAPH_PORT="${SUBGRAPH_PORT:-14460}" GATEWAY_PORT="${GATEWAY_PORT:-14470}"

# An OTLP/HTTP sink on loopback: reads each export and answers 200.
setsid deno run --allow-net=127.0.0.1 - >/dev/null 2>&1 <<DENO &
Deno.serve({ hostname: "127.0.0.1", port: $SINK_PORT, onListen() {} }, async (request) => {
  await request.arrayBuffer();
  return new Response(null, { status: 200 });
});
setTimeout(() => Deno.exit(0), 3_600_000); // bounded, whatever happens
DENO
SINK_PID=$!
trap 'kill -- -"$SINK_PID" 2>/dev/null || kill "$SINK_PID" 2>/dev/null || true' EXIT

OFF=$'access_logs: { enabled: false }'
METRICS=$'telemetry:\n  metrics: { prometheus: { enabled: true, listen_addr: "127.0.0.1:0" } }'
traced() { # RATE
  printf '%s\n  tracing:\n    enabled: true\n    sampling_rate: %s\n    exporters: [{ endpoint: "http://127.0.0.1:%s/v1/traces", batch_timeout: 1s }]\n%s' \
    "$METRICS" "$1" "$SINK_PORT" "$OFF"
}
declare -A EXTRA=(
  [off]="$OFF"
  [metrics]="$METRICS"$'\n'"$OFF"
  [access-log]="$METRICS"
  [traced-1]="$(traced 0.01)"
  [traced-100]="$(traced 1)"
)
for round in $(seq 1 "$ROUNDS"); do
  for variant in ${VARIANTS:-off metrics access-log traced-1 traced-100}; do
    # The generated config says log_level: warn; the access log writes at info.
    level=warn
    [[ "$variant" == access-log ]] && level=info
    LOG_LEVEL="$level" ROUTER_CONFIG_EXTRA="${EXTRA[$variant]}" "$HERE/load/run.sh" gw-router 2>/dev/null |
      sed "s/^gw-router /$(printf '%-11s' "$variant") r$round /"
  done
done
