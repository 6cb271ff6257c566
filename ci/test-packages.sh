#!/bin/sh
# The Debian packages the end-to-end tests need beyond Chromium (run by `make test`, as root; a user
# without root is told what to install): a virtual screen and real X input for people as operators
# (xvfb, xdotool), the remote seat's VNC server, WebSocket bridge and browser client (x11vnc,
# websockify, novnc), iproute2 for the test that serves a seat on every address of a private network
# namespace, npm for fetching ReplayWeb.page in the interoperability test, and the real apps' Debian
# packages (WordPress with its Twenty Twenty-One theme, Apache with PHP, and MariaDB, which WordPress
# and Ghost keep their data in), and nginx and wrk, the replay benchmark's anchor and load generator
# (`make bench-smoke`).
set -eu
missing=""
for package in xvfb xdotool x11vnc novnc websockify iproute2 \
    wordpress wordpress-theme-twentytwentyone apache2 libapache2-mod-php mariadb-server nginx wrk; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing="$missing $package"
done
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "missing Debian packages:$missing (apt-get install -y$missing); their tests will skip or fail" >&2
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
