# syntax=docker/dockerfile:1
# The `sluice` runner image (SLUICE_RUNNER_IMAGE): `sluice exec` and `sluice runner-install DIR`
# at /usr/local/bin/sluice. The docker executor copies the runner out of this image; the
# kubernetes executor runs `sluice runner-install /sluice-bin` in it as an init container.
# Build from the repository root:
#   docker build -f docker/runner.Dockerfile -t sluice .
# Note: when the single-executable runner build lands (docs/decisions.md §11), the runtime stage
# becomes distroless static holding only that binary; until then it is node:20-slim.
ARG NODE_IMAGE=node:20-slim

FROM ${NODE_IMAGE} AS pnpm
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH NX_DAEMON=false NX_NO_CLOUD=true
RUN npm i -g pnpm@10.34.9
WORKDIR /src

FROM pnpm AS build
COPY pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm fetch
COPY . .
RUN --mount=type=cache,id=pnpm-store,target=/pnpm/store pnpm install --offline --frozen-lockfile
RUN pnpm exec nx run @sluice/app-runner:build
RUN pnpm --filter @sluice/app-runner deploy --prod --legacy /out

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build --chown=65532:65532 /out /app
RUN printf '#!/bin/sh\nexec node /app/dist/main.js "$@"\n' > /usr/local/bin/sluice && chmod 755 /usr/local/bin/sluice
ENV NODE_ENV=production
USER 65532:65532
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/sluice"]
CMD ["--help"]
