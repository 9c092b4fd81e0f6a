#!/usr/bin/env bash
# Telemetry against the real engines: installs Debian's prometheus and prometheus-pushgateway
# when they are missing (as root), starts them on loopback with the shipped alert rule, runs
# `spark-pair run` and `bench` against the simulator with pushing on, and reads the series back
# through Prometheus's HTTP API (docs/telemetry.md). Needs the test extra:
#   pip install -e '.[test]'
# PYTHON picks the interpreter (default: .venv/bin/python if there, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v prometheus >/dev/null || ! command -v prometheus-pushgateway >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "telemetry-e2e: install prometheus and prometheus-pushgateway first (apt-get, as root)" >&2
    exit 1
  fi
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    prometheus prometheus-pushgateway >/dev/null
fi
PYTHON="${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}"
PATH="$(dirname "$PYTHON"):$PATH" PYTHONPATH=tests exec "$PYTHON" -m support.telemetry_e2e
