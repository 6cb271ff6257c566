#!/usr/bin/env bash
# Podman as the container engine for the container tests (Debian, as root; no Docker engine needed).
#   ci/podman-service.sh install   apt-get podman + runc + debootstrap (what `susbench image base` needs)
#   ci/podman-service.sh start     serve the Docker API on $SOCKET (builds use chroot isolation, runs use runc)
#   ci/podman-service.sh stop      stop the service this script started
#   ci/podman-service.sh ensure [SUSBENCH]
#                                  what `make test` runs: nothing if a Docker engine answers; else (as
#                                  root) install, start, and make the registry-free base image with
#                                  `SUSBENCH image base` (once; about 40 s)
# Then: export DOCKER_HOST=unix:///run/podman/podman.sock (start prints it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SOCKET="${SUSBENCH_PODMAN_SOCKET:-/run/podman/podman.sock}"
PIDFILE="${SOCKET%.sock}.service.pid"
LOG="${SOCKET%.sock}.service.log"
CONF="${SOCKET%.sock}.containers.conf"
PACKAGES=(podman runc conmon slirp4netns passt uidmap fuse-overlayfs debootstrap)

answers() {
  local socket="${1:-$SOCKET}"
  [ -S "$socket" ] && python3 - "$socket" <<'PY' >/dev/null 2>&1
import socket, sys
with socket.socket(socket.AF_UNIX) as s:
    s.settimeout(3)
    s.connect(sys.argv[1])
    s.sendall(b"GET /_ping HTTP/1.0\r\n\r\n")
    sys.exit(0 if b"OK" in s.recv(4096) else 1)
PY
}

case "${1:-}" in
  install)
    missing=()
    for package in "${PACKAGES[@]}"; do
      dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
      apt-get update -qq
      # runc is named explicitly so apt does not pick crun for podman's "crun | runc".
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    podman --version
    ;;
  start)
    if answers; then
      echo "podman API already serving on $SOCKET"
    else
      mkdir -p "$(dirname "$SOCKET")"
      rm -f "$SOCKET"
      # The service outlives this checkout (a CI clone is deleted after its run, and conmon fails in a
      # vanished working directory): it runs in / with its own copy of the settings.
      cp "$HERE/containers.conf" "$CONF"
      (cd / && CONTAINERS_CONF="$CONF" BUILDAH_ISOLATION=chroot \
        exec setsid podman system service --time=0 "unix://$SOCKET" >"$LOG" 2>&1) &
      echo $! >"$PIDFILE"
      for _ in $(seq 1 50); do
        answers && break
        sleep 0.2
      done
      answers || { echo "podman API did not come up; see $LOG" >&2; exit 1; }
      echo "podman API serving on $SOCKET (pid $(cat "$PIDFILE"))"
    fi
    echo "export DOCKER_HOST=unix://$SOCKET"
    ;;
  ensure)
    if [ -n "${DOCKER_HOST:-}" ] || answers /var/run/docker.sock; then
      echo "a Docker engine answers; the container tests use it"
      exit 0
    fi
    if [ "$(id -u)" != 0 ]; then
      echo "no container engine answers and this is not root: the container tests will fail" \
        "(start Docker, or run ci/podman-service.sh install && start as root)" >&2
      exit 0
    fi
    "$0" install
    "$0" start
    if [ -n "${2:-}" ]; then
      "$2" image base
    fi
    ;;
  stop)
    if [ -f "$PIDFILE" ]; then
      kill "$(cat "$PIDFILE")" 2>/dev/null || true
      rm -f "$PIDFILE"
    fi
    ;;
  *)
    echo "usage: $0 install|start|stop|ensure [SUSBENCH]" >&2
    exit 2
    ;;
esac
