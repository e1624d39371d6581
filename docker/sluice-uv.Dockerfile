# The `sluice-uv` image: Debian slim with the same self-contained runner as `sluice` (at
# /usr/local/bin/sluice, its lib/ beside it), bash, ca-certificates, git, uv, Python 3.12 and
# bun, for tasks with `inject_runner: false`: the runner starts from PATH. See docs/images.md.
# Build from the repository root after the runner image (bash scripts/build-images.sh does both):
#   DOCKER_BUILDKIT=1 docker build -f docker/sluice-uv.Dockerfile -t sluice-uv .
#
# Where astral.sh (uv and its Python builds) is unreachable, --build-arg WITH_UV=0 leaves uv out
# and installs Debian's python3 (3.11 on bookworm) as `python` instead; /etc/sluice-uv.left-out
# then says so. Pin the bases by digest where a registry is reachable:
#   --build-arg DEBIAN_IMAGE=debian:bookworm-slim@sha256:<digest> --build-arg NODE_IMAGE=node:20-slim@sha256:<digest>
# the digests from `docker buildx imagetools inspect <image>` (docs/images.md, "Bases").
ARG RUNNER_IMAGE=sluice:latest
ARG NODE_IMAGE=node:20-slim
ARG DEBIAN_IMAGE=debian:bookworm-slim

FROM ${RUNNER_IMAGE} AS runner

# bun from npm: its platform package holds the binary, no install script needed.
FROM ${NODE_IMAGE} AS bun
ARG BUN_VERSION=1.4.4
RUN npm i -g --no-fund --no-audit "@oven/bun-linux-x64@${BUN_VERSION}" \
  && cp "$(npm root -g)/@oven/bun-linux-x64/bin/bun" /bun \
  && /bun --version

FROM ${DEBIAN_IMAGE}
ARG WITH_UV=1
ARG UV_VERSION=0.9.5
ARG PYTHON_VERSION=3.12
RUN apt-get update \
  && apt-get install -y --no-install-recommends bash ca-certificates git curl \
  && if [ "$WITH_UV" = 1 ]; then \
       curl -LsSf "https://astral.sh/uv/${UV_VERSION}/install.sh" \
         | env UV_INSTALL_DIR=/usr/local/bin UV_NO_MODIFY_PATH=1 sh \
       && UV_PYTHON_INSTALL_DIR=/opt/python uv python install "$PYTHON_VERSION" \
       && ln -s "$(UV_PYTHON_INSTALL_DIR=/opt/python uv python find "$PYTHON_VERSION")" /usr/local/bin/python3 \
       && ln -s python3 /usr/local/bin/python; \
     else \
       apt-get install -y --no-install-recommends python3 \
       && ln -s /usr/bin/python3 /usr/local/bin/python \
       && echo "WITH_UV=0: uv left out; $(python3 --version) from Debian instead of Python ${PYTHON_VERSION}" \
         | tee /etc/sluice-uv.left-out; \
     fi \
  && apt-get clean && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 65532 sluice \
  && useradd --uid 65532 --gid 65532 --create-home --home-dir /home/sluice --shell /bin/bash sluice
COPY --from=bun /bun /usr/local/bin/bun
COPY --from=runner /usr/local/bin/sluice /usr/local/bin/sluice
COPY --from=runner /usr/local/bin/lib/ /usr/local/bin/lib/
ENV UV_PYTHON_INSTALL_DIR=/opt/python
USER 65532:65532
WORKDIR /home/sluice
CMD ["bash"]
