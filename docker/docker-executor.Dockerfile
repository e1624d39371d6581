# syntax=docker/dockerfile:1
# sluice docker-executor: an instance with the docker executor. Give it the Docker socket and DOCKER_EXECUTOR_OWNER_ID.
# Build from the repository root:
#   docker build -f docker/docker-executor.Dockerfile -t sluice-docker-executor .
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS pnpm
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH NX_DAEMON=false NX_NO_CLOUD=true
RUN npm i -g pnpm@10.34.9
WORKDIR /src

FROM pnpm AS build
# Only the lockfile decides this layer, so it is reused until dependencies change.
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch
COPY . .
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm install --offline --frozen-lockfile
RUN pnpm exec nx run @sluice/app-docker-executor:build
# A self-contained copy of the app with production dependencies only (workspace packages included).
RUN pnpm --filter @sluice/app-docker-executor deploy --prod --legacy /out

FROM ${NODE_IMAGE} AS runtime
# tini forwards SIGTERM to node and reaps zombies (or run the image with `docker run --init`).
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build --chown=65532:65532 /out /app
ENV NODE_ENV=production
USER 65532:65532
EXPOSE 8081
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/main.js"]
