#!/usr/bin/env bash
# redis-server for the shared-state e2e tests (issue 30: APQ and rate limits
# across two routers, Redis killed mid-run). Debian's package; idempotent.
set -uo pipefail
command -v redis-server >/dev/null 2>&1 && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null 2>&1 || true
apt-get install -y -qq redis-server >/dev/null 2>&1 || exit 1
# The package's own service is not needed: tests start their own servers.
(systemctl stop redis-server 2>/dev/null || service redis-server stop 2>/dev/null) >/dev/null 2>&1 || true
command -v redis-server >/dev/null 2>&1
