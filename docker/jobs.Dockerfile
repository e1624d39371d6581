# sluice jobs: scheduler, watchdog, retention and event consumers of a distributed installation.
# Build from the repository root (or bash scripts/build-images.sh jobs; see docs/images.md):
#   DOCKER_BUILDKIT=1 docker build -f docker/jobs.Dockerfile -t sluice-jobs .
#
# Pin the base by digest where a registry is reachable:
#   --build-arg NODE_IMAGE=node:20-slim@sha256:<digest>
# the digest from `docker buildx imagetools inspect node:20-slim` (docs/images.md, "Bases").
ARG NODE_IMAGE=node:20-slim

# The first two stages are the same in every docker/*.Dockerfile, so the engine builds them once.
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
# Every app is built, so this layer too is shared by all the images. The build runs prisma
# generate (packages/store's generate script) before tsc.
RUN pnpm exec nx run-many -t build
# A self-contained copy of the app with production dependencies only, workspace packages
# included, resolved from the lockfile (inject-workspace-packages: the non-legacy deploy, which
# reads the lockfile instead of resolving versions again), then trimmed to what runs: not the
# prisma CLI (migrations run over pg), no source maps, types or docs (prune-node-modules.cjs).
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store \
  pnpm --config.inject-workspace-packages=true --filter @sluice/app-jobs deploy --prod --offline /out \
  && node docker/prune-node-modules.cjs /out

FROM ${NODE_IMAGE} AS runtime
# tini forwards SIGTERM to node and reaps zombies. User 65532 gets a passwd entry: Node's
# os.userInfo() (which the embedded PostgreSQL calls) fails without one. apt-get clean: a base
# without the slim images' docker-clean hook (a local stand-in) keeps ~90 MB of apt caches.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates \
  && apt-get clean && rm -rf /var/lib/apt/lists/* \
  && groupadd --gid 65532 sluice \
  && useradd --uid 65532 --gid 65532 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin sluice
WORKDIR /app
# Owned by root: the app never writes its own files, so the root file system can be read-only.
COPY --from=build /out /app
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 8081
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const p = (process.env.INTERNAL_HTTP_SERVER_ADDR || ':8081').split(':').pop(); fetch('http://127.0.0.1:' + p + '/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/main.js"]

