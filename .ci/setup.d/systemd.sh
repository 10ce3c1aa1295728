#!/usr/bin/env bash
# Installs systemd's tools for tests/e2e/deploy_unit_test.ts (`systemd-analyze
# verify deploy/gw-router.service`). Idempotent; fails softly: without it that
# check registers as ignored with a name saying why.
set -u
if command -v systemd-analyze >/dev/null 2>&1; then
  echo "systemd: $(systemd-analyze --version | head -n 1)"
  exit 0
fi
. "$(dirname "$0")/../apt_install.sh"
apt_install systemd --no-install-recommends systemd || exit 1
echo "systemd: installed $(systemd-analyze --version | head -n 1)"
