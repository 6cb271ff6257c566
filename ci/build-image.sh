#!/bin/sh
# The browser image from this checkout, built in `make test`'s set-up so that no test waits for a
# build (the container tests' own build is then a cached one). Where no engine answers (not root,
# no Docker) it says so and leaves the failing to the container tests, which name `make engine`.
#   ci/build-image.sh PYTHON
set -eu
PYTHON="$1"
if ! "$PYTHON" -c "from susbench.container import DockerApiRuntime; DockerApiRuntime()" >/dev/null 2>&1; then
  echo "no container engine answers: the browser image is not built and the container tests will fail" >&2
  exit 0
fi
"$(dirname "$PYTHON")/susbench" image build --quiet
