#!/usr/bin/env bash
# Installs Debian's Chromium for the playground's browser test
# (tests/e2e/playground_test.ts). Idempotent: does nothing when it is there.
# Fails softly: without Chromium the browser tests register as ignored with a
# name saying why ("KNOWN GAP: ... Chromium not installed").
set -u
if [ -x /usr/bin/chromium ]; then
  echo "playground: $(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
  else
    echo "playground: not root and no passwordless sudo; cannot install chromium"
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null &&
  $sudo apt-get install -y -q chromium >/dev/null ||
  { echo "playground: apt-get install chromium failed"; exit 1; }
echo "playground: installed $(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"
