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
. "$(dirname "$0")/../apt_install.sh"
apt_install playground chromium || exit 1
echo "playground: installed $(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"
