#!/usr/bin/env bash
# GW Router variant (perf engineer): gw-router-w2-nodedupe
export GW_ROUTER_CONFIG_EXTRA='workers: 2
engine:
  enable_single_flight: false'
# The harness pins gateways to GATEWAY_CPUS (one core); two workers get two.
exec taskset -c "${GW_ROUTER_WORKER_CPUS:-0,1}" "$(dirname "$0")/gw-router.sh" "$@"
