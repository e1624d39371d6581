#!/usr/bin/env bash
# Applies the namespace folder examples/demo and runs its flows on a standalone
# server started with `pnpm start` (or `pnpm sluice server --standalone`) from
# this checkout, with the CLI (docs/cli.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export SLUICE_URL=${SLUICE_URL:-http://127.0.0.1:8080}
sluice() { node bin/sluice.cjs "$@"; }

# A token signed with the standalone server's secret in ./.sluice; login checks it and saves it.
sluice token create --workspace demo --user you --role admin 2>/dev/null | tail -n 1 | sluice login

# The pipeline reads the secret `greeting`; the CLI has no secret command yet, so curl
# stores it (docs/api.md#calling-the-api-with-curl).
TOKEN=$(node -pe 'require(process.argv[1]).token' "${XDG_CONFIG_HOME:-$HOME/.config}/sluice/config.json")
curl -sf -H "Authorization: Bearer $TOKEN" -X PUT -H 'Content-Type: application/json' \
  --data '{"value":"hello from a secret"}' "$SLUICE_URL/api/v1/namespaces/demo/secrets/greeting"

echo "==> sluice apply examples/demo"
sluice apply examples/demo
echo "==> sluice run demo/hello --follow"
sluice run demo/hello --follow
echo "==> sluice run demo/pipeline --follow"
sluice run demo/pipeline --follow
sluice executions list --namespace demo --limit 5
