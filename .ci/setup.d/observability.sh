#!/usr/bin/env bash
# Installs Debian's Prometheus (prometheus + promtool) for the metrics e2e test
# (tests/e2e/observability_prometheus_test.ts). Idempotent: does nothing when
# both are there. Fails softly: without them that test registers as ignored
# with a name saying why ("KNOWN GAP: ... Prometheus not installed").
set -u
if [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; then
  echo "observability: $(/usr/bin/prometheus --version 2>&1 | head -n 1)"
  exit 0
fi
. "$(dirname "$0")/../apt_install.sh"
apt_install observability --no-install-recommends prometheus || exit 1
# The package starts a system service where one runs; the test starts its own.
echo "observability: installed $(/usr/bin/prometheus --version 2>&1 | head -n 1)"
