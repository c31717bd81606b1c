#!/usr/bin/env bash
# What the tests drive besides npm packages, from Debian's packages, installed when missing:
# - Chromium: the browser tests (test/runtime, test/example) and `npm run bench:client`, through
#   playwright-core (no browser download of its own);
# - PostgreSQL and Redis: the scale-out tests start private servers of their own on 127.0.0.1
#   (test/services/), so the servers the packages start are stopped again;
# - promtool (Debian's prometheus package): checks that /metrics scrapes cleanly (test/server/observability);
# - valgrind: `npm run bench:instructions` counts instructions with its callgrind (CI's guard, .ci/run).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v callgrind_control >/dev/null 2>&1 || missing+=(valgrind)
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  ($SUDO service postgresql stop; $SUDO service redis-server stop; $SUDO service prometheus stop) >/dev/null 2>&1 || true
fi
/usr/bin/chromium --version
ls /usr/lib/postgresql/*/bin/postgres
redis-server --version
promtool --version 2>&1 | sed -n 1p
valgrind --version
