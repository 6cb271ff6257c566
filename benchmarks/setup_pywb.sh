#!/usr/bin/env bash
# Create a separate venv with pywb (and warcprox if it installs) so tests and benchmarks can
# check that other tools read our snapshots. Kept apart from .venv (pywb pins its own deps), in the
# cache so every checkout on this machine shares it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="${PYWB_VENV:-${SUSBENCH_HOME:-$HOME/.cache/susbench}/venvs/pywb}"
if [ ! -x "$venv/bin/wayback" ]; then
    "$root/.venv/bin/python" -m venv "$venv"
    "$venv/bin/pip" install -q --no-compile pywb
fi
if [ "${WITH_WARCPROX:-0}" = "1" ] && [ ! -x "$venv/bin/warcprox" ]; then
    "$venv/bin/pip" install -q warcprox || echo "warcprox did not install; skipping it" >&2
fi
echo "$venv"
