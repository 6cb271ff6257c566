#!/bin/sh
# The Debian packages people as operators need: a virtual screen and real X input (Xvfb, xdotool;
# `--operator human` and its tests), and the remote study's VNC server and browser client.
set -eu
apt-get update -qq
apt-get install -y --no-install-recommends xvfb xdotool x11vnc novnc websockify
