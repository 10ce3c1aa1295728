#!/usr/bin/env bash
# apt_install AREA [APT-OPTION...] PACKAGE...: installs Debian packages for a .ci/setup.d/ script,
# as root or through passwordless sudo; prints why and returns 1 when it cannot.
# Sourced (not run) by setup scripts: `. "$(dirname "$0")/../apt_install.sh"`.
apt_install() {
  local area=$1 sudo=""
  shift
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      echo "$area: not root and no passwordless sudo; cannot install $*"
      return 1
    fi
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get update -q >/dev/null &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "$@" \
      >/dev/null ||
    { echo "$area: apt-get install $* failed"; return 1; }
}
