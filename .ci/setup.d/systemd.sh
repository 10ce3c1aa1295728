#!/usr/bin/env bash
# Installs systemd's tools for tests/e2e/deploy_unit_test.ts (`systemd-analyze
# verify deploy/gw-router.service`). Idempotent; fails softly: without it that
# check registers as ignored with a name saying why.
set -u
if command -v systemd-analyze >/dev/null 2>&1; then
  echo "systemd: $(systemd-analyze --version | head -n 1)"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "systemd: not root and no passwordless sudo; cannot install systemd"
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null &&
  $sudo apt-get install -y -q --no-install-recommends systemd >/dev/null ||
  { echo "systemd: apt-get install systemd failed"; exit 1; }
echo "systemd: installed $(systemd-analyze --version | head -n 1)"
