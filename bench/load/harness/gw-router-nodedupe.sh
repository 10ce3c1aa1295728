#!/usr/bin/env bash
# GW Router variant (perf engineer): gw-router-nodedupe
export GW_ROUTER_CONFIG_EXTRA='engine:
  enable_single_flight: false'
exec "$(dirname "$0")/gw-router.sh" "$@"
