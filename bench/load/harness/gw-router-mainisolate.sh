#!/usr/bin/env bash
# GW Router variant: gw-router-mainisolate (no heap limits: the main isolate serves, V8 defaults)
export GW_ROUTER_CONFIG_EXTRA='heap: { max_young_generation_mb: 0, max_old_generation_mb: 0 }'
exec "$(dirname "$0")/gw-router.sh" "$@"
