#!/usr/bin/env bash
# Builds the three example connector images from their Dockerfiles:
#   sluice-example/source-sequence, sluice-example/destination-postgres, sluice-example/destination-null
# TAG (default latest) and NODE_IMAGE (default node:20-slim) may be set.
set -euo pipefail
cd "$(dirname "$0")"
tag="${TAG:-latest}"
node_image="${NODE_IMAGE:-node:20-slim}"
node bundle.cjs dist
for connector in source-sequence destination-postgres destination-null; do
  docker build -q --build-arg "NODE_IMAGE=$node_image" -f "$connector/Dockerfile" \
    -t "sluice-example/$connector:$tag" . >/dev/null
  echo "built sluice-example/$connector:$tag"
done
