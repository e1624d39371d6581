#!/usr/bin/env bash
# From a fresh checkout with Node.js 20: install pnpm and the dependencies,
# build, and start `sluice server --standalone` with an embedded PostgreSQL
# under ./.sluice. Stop it with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false NX_NO_CLOUD=true
PNPM_VERSION=10.34.9
if [ "$(pnpm --version 2>/dev/null || true)" != "$PNPM_VERSION" ]; then
  echo "==> installing pnpm $PNPM_VERSION"
  npm i -g "pnpm@$PNPM_VERSION"
fi
echo "==> pnpm install"
pnpm install --frozen-lockfile
echo "==> pnpm build"
pnpm build
echo "==> sluice server --standalone (public API :8080, internal API :8081)"
exec node bin/sluice.cjs server --standalone
