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
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "observability: not root and no passwordless sudo; cannot install prometheus"
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
# --no-install-recommends: the package alone (no node exporter, no service start needed).
$sudo apt-get update -q >/dev/null &&
  $sudo apt-get install -y -q --no-install-recommends prometheus >/dev/null ||
  { echo "observability: apt-get install prometheus failed"; exit 1; }
# The package starts a system service where one runs; the test starts its own.
echo "observability: installed $(/usr/bin/prometheus --version 2>&1 | head -n 1)"
