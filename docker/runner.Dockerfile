# The `sluice` runner image (SLUICE_RUNNER_IMAGE, docs/decisions.md §11): the self-contained
# runner at /usr/local/bin/sluice and its loader + libraries in /usr/local/bin/lib/, nothing else.
# The docker executor copies both out of it; the kubernetes executor runs
# `sluice runner-install /sluice-bin` in it as an init container. See docs/images.md.
# Build from the repository root (or bash scripts/build-images.sh runner):
#   DOCKER_BUILDKIT=1 docker build -f docker/runner.Dockerfile -t sluice .
#
# The build stage's node is the one the runner embeds. Pin the base by digest where a registry
# is reachable: --build-arg NODE_IMAGE=node:20-slim@sha256:<digest>, the digest from
# `docker buildx imagetools inspect node:20-slim` (docs/images.md, "Bases").
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS pnpm
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH NX_DAEMON=false NX_NO_CLOUD=true CI=true
# binutils: `strip` for the runner's node binary (apps/runner/scripts/build-sea.cjs).
RUN apt-get update \
  && apt-get install -y --no-install-recommends binutils \
  && rm -rf /var/lib/apt/lists/* \
  && npm i -g pnpm@10.34.9
WORKDIR /src

FROM pnpm AS build
# Only the lockfile decides this layer, so it is reused until dependencies change.
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch
COPY . .
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm install --offline --frozen-lockfile
# Every app is built, as in the app images, so the engine builds this layer once for all.
RUN pnpm exec nx run-many -t build
RUN test -x apps/runner/dist/sea/sluice \
  && test -f apps/runner/dist/sea/lib/ld-linux-x86-64.so.2

FROM scratch
COPY --from=build /src/apps/runner/dist/sea/sluice /usr/local/bin/sluice
COPY --from=build /src/apps/runner/dist/sea/lib/ /usr/local/bin/lib/
USER 65532:65532
# A single executable application honours NODE_OPTIONS: keep it empty.
ENV NODE_OPTIONS=
# No libc in the image: the runner starts through the loader beside it.
ENTRYPOINT ["/usr/local/bin/lib/ld-linux-x86-64.so.2", "--library-path", "/usr/local/bin/lib", "/usr/local/bin/sluice"]
CMD ["--help"]
