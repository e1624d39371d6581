#!/usr/bin/env bash
# Runs examples/hello/pipeline.yaml on a standalone server started with
# `pnpm start` (or `pnpm sluice server --standalone`) from this checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
API=${SLUICE_PUBLIC_URL:-http://127.0.0.1:8080}

TOKEN=$(node bin/sluice.cjs token create --workspace demo --user you --role admin 2>/dev/null | tail -n 1)
auth=(-H "Authorization: Bearer $TOKEN")

echo "==> storing the secret and the flow"
curl -sf "${auth[@]}" -X PUT -H 'Content-Type: application/json' \
  --data '{"value":"hello from a secret"}' "$API/api/v1/namespaces/demo/secrets/greeting"
curl -sf "${auth[@]}" -X PUT -H 'Content-Type: application/yaml' \
  --data-binary @examples/hello/pipeline.yaml "$API/api/v1/namespaces/demo/flows/pipeline" >/dev/null

echo "==> starting an execution"
ID=$(curl -sf "${auth[@]}" -X POST "$API/api/v1/namespaces/demo/flows/pipeline/executions" | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')
echo "execution $ID"

for _ in $(seq 1 120); do
  STATE=$(curl -sf "${auth[@]}" "$API/api/v1/executions/$ID" | node -pe 'JSON.parse(require("fs").readFileSync(0)).state')
  case "$STATE" in SUCCEEDED|FAILED|CANCELLED) break ;; esac
  sleep 0.5
done
echo "==> execution $ID ended $STATE"
curl -sf "${auth[@]}" "$API/api/v1/executions/$ID" | node -e '
  const e = JSON.parse(require("fs").readFileSync(0));
  for (const r of e.taskRuns) console.log(`${r.taskId.padEnd(8)} attempt ${r.attempt} ${r.state}${r.reason ? " (" + r.reason + ")" : ""}  ${r.id}`);
'
FIRST=$(curl -sf "${auth[@]}" "$API/api/v1/executions/$ID" | node -pe 'JSON.parse(require("fs").readFileSync(0)).taskRuns.find(r => r.taskId === "report").id')
echo "==> logs of report"
curl -sf "${auth[@]}" "$API/api/v1/task-runs/$FIRST/logs" | node -e '
  for (const l of JSON.parse(require("fs").readFileSync(0)).lines) console.log(`${String(l.seq).padStart(4)} ${l.stream.padEnd(6)} ${l.line}`);
'
[ "$STATE" = SUCCEEDED ]
