#!/usr/bin/env bash
# The browser tests (test/runtime, test/example) and `npm run bench:client` drive Debian's
# Chromium through playwright-core (no browser download of its own). Installs it when missing.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  /usr/bin/chromium --version
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
/usr/bin/chromium --version
