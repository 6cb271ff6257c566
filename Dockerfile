# SusBench Replay's containerized browser: Debian's Chromium with the pinned font set, the project
# installed as a wheel (its data inside it, as `pip install` gives it) with its injection extension
# built in, and `susbench browser serve` (Chromium + CDP + the offline replayer, reached only
# through a mounted unix socket) as the default command. Any other command runs too:
#   docker run --rm IMAGE susbench demo --tasks 'voltcart-*' --no-local-model
#
#   docker build -t susbench-browser .             # where debian:bookworm-slim can be pulled
#   susbench image base && susbench image build    # no registry: a debootstrap base, then this file
ARG BASE=debian:bookworm-slim
FROM ${BASE} AS runtime

# The same Chromium and fonts as the host path (`susbench browser --install`), pinned, so a page
# gives the same pixels in the container and on a bookworm host with these versions.
ARG CHROMIUM_VERSION=156.0.8078.114-1~deb12u1
ARG FONTS_DEJAVU_CORE_VERSION=2.37-6
ARG FONTS_LIBERATION_VERSION=1:1.07.4-11

# libatomic1: Playwright's Node driver needs it (serve launches Chromium through Playwright, as the host does).
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      "chromium=${CHROMIUM_VERSION}" "chromium-common=${CHROMIUM_VERSION}" \
      "fonts-dejavu-core=${FONTS_DEJAVU_CORE_VERSION}" "fonts-liberation=${FONTS_LIBERATION_VERSION}" \
      python3 python3-venv libatomic1 tini ca-certificates \
 || { echo "error: a pinned package is not on the Debian mirror (chromium=${CHROMIUM_VERSION}?);" \
      "build with --build-arg CHROMIUM_VERSION=<a version that \`apt-cache policy chromium\` lists>" >&2; \
      exit 1; } \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --user-group susbench

ENV VIRTUAL_ENV=/opt/susbench/venv PATH=/opt/susbench/venv/bin:$PATH
WORKDIR /opt/susbench/src
# Dependencies first (from pyproject.toml alone), so a source or README change reuses this layer.
COPY pyproject.toml ./
# PEM certificates pip trusts while it downloads (behind a TLS-intercepting proxy); never kept.
ARG BUILD_CA_CERTS=
RUN python3 -m venv "$VIRTUAL_ENV" \
 && python -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb")); \
print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"]))' > /tmp/requirements.txt \
 && if [ -n "$BUILD_CA_CERTS" ]; then \
      printf '%s\n' "$BUILD_CA_CERTS" | cat /etc/ssl/certs/ca-certificates.crt - > /tmp/build-ca.pem; \
      export PIP_CERT=/tmp/build-ca.pem; \
    fi \
 && pip install --no-cache-dir --disable-pip-version-check -r /tmp/requirements.txt \
 && rm -f /tmp/requirements.txt /tmp/build-ca.pem

# In this stage, where the pins' ARGs are in scope; the image inherits the labels.
ARG SUSBENCH_VERSION=0.1.0
LABEL org.opencontainers.image.title="susbench-browser" \
      org.opencontainers.image.description="Chromium + injection extension + offline replayer for SusBench Replay" \
      org.opencontainers.image.version="${SUSBENCH_VERSION}" \
      io.susbench.chromium="${CHROMIUM_VERSION}" \
      io.susbench.fonts="fonts-dejavu-core=${FONTS_DEJAVU_CORE_VERSION} fonts-liberation=${FONTS_LIBERATION_VERSION}"

# The wheel, built from the checkout in a stage of its own: the image gets the wheel, not the sources.
FROM runtime AS wheel
COPY . .
RUN pip wheel --no-cache-dir --disable-pip-version-check --no-deps --no-build-isolation \
      --wheel-dir /opt/susbench/wheel .

FROM runtime
COPY --from=wheel /opt/susbench/wheel /tmp/wheel
RUN pip install --no-cache-dir --disable-pip-version-check --no-deps /tmp/wheel/*.whl \
 && rm -rf /tmp/wheel /opt/susbench/src \
 && SUSBENCH_HOME=/tmp/susbench-build susbench extension build --out /opt/susbench/extension \
 && chmod -R a+rX /opt/susbench/extension \
 && rm -rf /tmp/susbench-build

ENV SUSBENCH_EXTENSION=/opt/susbench/extension
USER susbench
WORKDIR /home/susbench
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["susbench", "browser", "serve"]
