#!/usr/bin/env bash
# Builds the Sluice images with a local Docker engine (see docs/images.md).
#
#   bash scripts/build-images.sh                 # every image: runner, sluice-uv, server, jobs, docker-executor, k8s-executor
#   bash scripts/build-images.sh runner server   # only these
#   bash scripts/build-images.sh --no-check ...  # skip the start-and-answer-/live check
#   (`nx affected -t docker-build` runs it per affected app: each app's docker-build script)
#
# Environment:
#   DOCKER_HOST          the engine (default: the one scripts/docker-engine.sh starts or reuses)
#   SLUICE_BASES         auto (default) | registry | local
#                        auto: the public bases, pulled (a pulled one on the engine is used as it
#                        is); where no registry answers, a local stand-in, said in one line;
#                        registry: the public bases or fail; local: stand-ins, no pull.
#   NODE_IMAGE           the Node.js base (default node:20-slim). Pin it by digest on a machine
#                        with a registry: NODE_IMAGE=node:20-slim@sha256:<digest>, the digest this
#                        script logs after pulling it (`base node:20-slim: pulled, node@sha256:…`),
#                        or `docker buildx imagetools inspect node:20-slim` (the index digest)
#   DEBIAN_IMAGE         the Debian base of sluice-uv (default debian:bookworm-slim); pin it by digest likewise
#   SLUICE_UV_WITH_UV    1 | 0 (default: 1 when astral.sh answers): sluice-uv with uv and Python 3.12,
#                        or without uv and with Debian's python3 (docker/sluice-uv.Dockerfile)
#   SLUICE_IMAGE_TAG     tag of the built images (default: latest)
#   SLUICE_BASE_CACHE    where stand-in root file systems are cached (default /var/cache/sluice/base-images)
#
# Progress goes to stderr; the last stdout line is `export SLUICE_IMAGES_BUILT=1`, which the
# image tests (apps/docker-executor/test/images.test.ts) wait for.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ALL_IMAGES=(runner sluice-uv server jobs docker-executor k8s-executor)
NODE_IMAGE=${NODE_IMAGE:-node:20-slim}
DEBIAN_IMAGE=${DEBIAN_IMAGE:-debian:bookworm-slim}
BASES=${SLUICE_BASES:-auto}
TAG=${SLUICE_IMAGE_TAG:-latest}
CACHE=${SLUICE_BASE_CACHE:-/var/cache/sluice/base-images}
DEBIAN_RELEASE=bookworm
# The CA bundle of this host: traffic to the npm registry may pass a TLS-intercepting proxy.
HOST_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
CHECK=1

say() { printf 'build-images: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

# Debian's 20.10 CLI does BuildKit with DOCKER_BUILDKIT=1; a newer CLI without the buildx
# plugin falls back to the legacy builder, which refuses RUN --mount.
pick_docker() {
  if [ -x /usr/bin/docker ]; then DOCKER=/usr/bin/docker; else DOCKER=$(command -v docker); fi
  export DOCKER_BUILDKIT=1
}

image_exists() { "$DOCKER" image inspect "$1" >/dev/null 2>&1; }

# --- local stand-ins for the public bases -------------------------------------------------

# debootstrap --variant=minbase: the same Debian release as the slim images, from Debian's mirror.
debian_rootfs_tar() {
  local tar="$CACHE/debian-$DEBIAN_RELEASE-minbase.tar"
  if [ ! -s "$tar" ]; then
    command -v debootstrap >/dev/null 2>&1 || {
      say "apt-get install debootstrap"
      apt-get install -y --no-install-recommends debootstrap >&2 ||
        { apt-get update >&2 && apt-get install -y --no-install-recommends debootstrap >&2; }
    }
    local dir
    dir=$(mktemp -d /tmp/sluice-base.XXXXXX)
    say "debootstrap --variant=minbase $DEBIAN_RELEASE (≈40 s, once; cached in $tar)"
    debootstrap --variant=minbase "$DEBIAN_RELEASE" "$dir/rootfs" >"$dir/log" 2>&1 ||
      { tail -n 20 "$dir/log" >&2; die "debootstrap failed"; }
    # What the slim images leave out, so the stand-in is as small as theirs.
    rm -rf "$dir/rootfs/var/cache/apt/archives/"*.deb "$dir/rootfs/var/lib/apt/lists/"*
    mkdir -p "$CACHE"
    tar -C "$dir/rootfs" --numeric-owner -cf "$tar.partial.$$" .
    mv "$tar.partial.$$" "$tar"
    rm -rf "$dir"
  fi
  printf '%s\n' "$tar"
}

# node:20-slim stand-in: the Debian rootfs plus this host's node, npm and corepack, and the
# host's CA bundle (kept apart from /etc/ssl/certs, which installing ca-certificates rewrites).
node_rootfs_tar() {
  local node_version
  node_version=$(node --version)
  local tar="$CACHE/node-slim-$DEBIAN_RELEASE-$node_version.tar"
  if [ ! -s "$tar" ]; then
    local node_bin node_modules dir
    node_bin=$(readlink -f "$(command -v node)")
    node_modules=$(cd "$(dirname "$node_bin")/../lib/node_modules" && pwd)
    dir=$(mktemp -d /tmp/sluice-base.XXXXXX)
    mkdir -p "$dir/rootfs"
    tar -C "$dir/rootfs" -xf "$(debian_rootfs_tar)"
    say "node stand-in: $node_bin ($node_version) + npm + corepack from $node_modules"
    mkdir -p "$dir/rootfs/usr/local/bin" "$dir/rootfs/usr/local/lib/node_modules" "$dir/rootfs/usr/local/share"
    cp "$node_bin" "$dir/rootfs/usr/local/bin/node"
    cp -a "$node_modules/npm" "$node_modules/corepack" "$dir/rootfs/usr/local/lib/node_modules/"
    ln -s ../lib/node_modules/npm/bin/npm-cli.js "$dir/rootfs/usr/local/bin/npm"
    ln -s ../lib/node_modules/npm/bin/npx-cli.js "$dir/rootfs/usr/local/bin/npx"
    ln -s ../lib/node_modules/corepack/dist/corepack.js "$dir/rootfs/usr/local/bin/corepack"
    cp "$HOST_CA_BUNDLE" "$dir/rootfs/usr/local/share/host-ca-certificates.crt"
    tar -C "$dir/rootfs" --numeric-owner -cf "$tar.partial.$$" .
    mv "$tar.partial.$$" "$tar"
    rm -rf "$dir"
  fi
  printf '%s\n' "$tar"
}

import_stand_in() {
  local name=$1 tar=$2
  shift 2
  "$DOCKER" import "$@" --change 'LABEL org.sluice.stand-in=true' "$tar" "$name" >/dev/null
}

is_stand_in() { [ "$("$DOCKER" image inspect -f '{{index .Config.Labels "org.sluice.stand-in"}}' "$1" 2>/dev/null)" = true ]; }

# The digest to pin a pulled base with (empty for a stand-in, which has none in any registry).
repo_digest() { "$DOCKER" image inspect -f '{{range .RepoDigests}}{{println .}}{{end}}' "$1" 2>/dev/null | head -n 1; }

# Makes sure `name` exists on the engine: the public image when a registry answers (a stand-in
# left by an earlier run is replaced then), else a local stand-in, said in one line.
ensure_base() {
  local name=$1 kind=$2
  if image_exists "$name" && { [ "$BASES" = local ] || ! is_stand_in "$name"; }; then
    if is_stand_in "$name"; then say "base $name: the local stand-in on the engine (SLUICE_BASES=local)"
    else say "base $name: on the engine, $(repo_digest "$name" || true)"; fi
    return 0
  fi
  if [ "$BASES" != local ]; then
    local log
    log=$(mktemp /tmp/sluice-pull.XXXXXX)
    if "$DOCKER" pull "$name" >"$log" 2>&1; then
      rm -f "$log"
      # What to pin it with: NODE_IMAGE/DEBIAN_IMAGE=<this> (docs/images.md, "Bases").
      say "base $name: pulled, $(repo_digest "$name")"
      return 0
    fi
    [ "$BASES" = registry ] && { cat "$log" >&2; rm -f "$log"; die "cannot pull $name (SLUICE_BASES=registry)"; }
    local why
    why=$(grep -v '^\s*$' "$log" | tail -n 1)
    rm -f "$log"
    if image_exists "$name"; then
      say "base $name: no registry ($why): using the local stand-in already on the engine"
      return 0
    fi
    say "base $name: no registry ($why): using a local stand-in (not the public image)"
  else
    say "base $name: a local stand-in (SLUICE_BASES=local)"
  fi
  case "$name" in *@sha256:*) die "$name is pinned by digest and cannot be pulled: a stand-in cannot have that digest; use a tag" ;; esac
  case "$kind" in
    node)
      import_stand_in "$name" "$(node_rootfs_tar)" \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/host-ca-certificates.crt' \
        --change 'CMD ["node"]'
      ;;
    debian) import_stand_in "$name" "$(debian_rootfs_tar)" --change 'CMD ["bash"]' ;;
    *) die "no stand-in recipe for $kind" ;;
  esac
}

# --- the images -----------------------------------------------------------------------------

image_name() {
  case "$1" in
    runner) printf 'sluice:%s' "$TAG" ;;
    sluice-uv) printf 'sluice-uv:%s' "$TAG" ;;
    *) printf 'sluice-%s:%s' "$1" "$TAG" ;;
  esac
}

# sluice-uv needs uv's and Python's downloads from astral.sh; they are not reachable everywhere.
with_uv() {
  if [ -n "${SLUICE_UV_WITH_UV:-}" ]; then printf '%s' "$SLUICE_UV_WITH_UV"; return; fi
  if curl -sfI --max-time 10 https://astral.sh/uv/install.sh >/dev/null 2>&1; then printf 1; else printf 0; fi
}

build_one() {
  local app=$1 name started
  name=$(image_name "$app")
  started=$(date +%s)
  say "docker build -f docker/$app.Dockerfile -t $name"
  local extra=()
  if [ "$app" = sluice-uv ]; then
    local uv
    uv=$(with_uv)
    [ "$uv" = 1 ] || say "sluice-uv: astral.sh is not reachable: built WITH_UV=0 (no uv; Debian's python3, not 3.12)"
    extra=(--build-arg "RUNNER_IMAGE=$(image_name runner)" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" --build-arg "WITH_UV=$uv")
  fi
  # Tagged by app and version too (the app's package.json), so a pipeline can push both.
  local pkg=$app version versioned
  [ "$app" = sluice-uv ] && pkg=runner
  version=$(node -p "require('$ROOT/apps/$pkg/package.json').version")
  versioned="${name%:*}:$version"
  "$DOCKER" build -f "$ROOT/docker/$app.Dockerfile" --build-arg "NODE_IMAGE=$NODE_IMAGE" "${extra[@]}" \
    --label "org.opencontainers.image.version=$version" -t "$name" "$ROOT" >&2
  BUILD_SECONDS[$app]=$(($(date +%s) - started))
  "$DOCKER" tag "$name" "$versioned"
  say "$name ($versioned) built in ${BUILD_SECONDS[$app]} s"
}

# --- checks: each image starts ------------------------------------------------------------

# What the Dockerfiles' HEALTHCHECK runs: /live at the port of INTERNAL_HTTP_SERVER_ADDR.
LIVE_PROBE="const p = (process.env.INTERNAL_HTTP_SERVER_ADDR || ':8081').split(':').pop(); \
fetch('http://127.0.0.1:' + p + '/live').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }

# A throwaway PostgreSQL for the jobs check, from this machine's Debian PostgreSQL (jobs migrates
# it itself). Sets PG_URL, or leaves it empty when there is none.
PG_DIR=''
PG_URL=''
start_postgres() {
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bin" ] || ! id postgres >/dev/null 2>&1; then return 0; fi
  PG_DIR=$(mktemp -d /tmp/sluice-images-pg.XXXXXX)
  chown postgres "$PG_DIR"
  local port
  port=$(free_port)
  su postgres -s /bin/sh -c "$bin/initdb --auth=trust -D $PG_DIR/data >$PG_DIR/log 2>&1 &&
    $bin/pg_ctl -w -D $PG_DIR/data -l $PG_DIR/log -o '-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off' start >>$PG_DIR/log 2>&1" ||
    { tail -n 20 "$PG_DIR/log" >&2; die "the PostgreSQL for the jobs check did not start"; }
  PG_URL="postgresql://postgres@127.0.0.1:$port/postgres"
  PG_BIN=$bin
}
stop_postgres() {
  [ -n "$PG_DIR" ] || return 0
  su postgres -s /bin/sh -c "$PG_BIN/pg_ctl -D $PG_DIR/data -m immediate stop" >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
}

wait_live() {
  local container=$1
  for _ in $(seq 1 60); do
    if [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$container" 2>/dev/null)" != true ]; then
      "$DOCKER" logs "$container" >&2 || true
      return 1
    fi
    # The image's own HEALTHCHECK command, run inside it: the internal port stays unpublished.
    if "$DOCKER" exec "$container" node -e "$LIVE_PROBE" 2>/dev/null; then
      return 0
    fi
    sleep 1
  done
  "$DOCKER" logs "$container" >&2 || true
  return 1
}

check_runner() {
  local name out
  name=$(image_name runner)
  out=$("$DOCKER" run --rm "$name" help 2>&1) || die "$name help failed: $out"
  grep -q runner-install <<<"$out" || die "$name help does not list runner-install: $out"
  say "$name help: $(head -n 1 <<<"$out")"
  local dir
  dir=$(mktemp -d /tmp/sluice-runner-install.XXXXXX)
  chmod 777 "$dir"
  "$DOCKER" run --rm -v "$dir:/out" "$name" runner-install /out >&2 || die "$name runner-install failed"
  [ -x "$dir/sluice" ] && [ -f "$dir/lib/ld-linux-x86-64.so.2" ] || die "$name runner-install wrote no runner"
  say "$name runner-install: $(ls "$dir" "$dir/lib" | tr '\n' ' ')"
  rm -rf "$dir"
}

check_uv() {
  local name out
  name=$(image_name sluice-uv)
  out=$("$DOCKER" run --rm "$name" bash -c 'id -u; sluice help | head -n 1; python --version; bun --version; git --version;
    if command -v uv >/dev/null; then uv --version; fi; cat /etc/sluice-uv.left-out 2>/dev/null || true' 2>&1) ||
    die "$name does not run bash, sluice, python, bun and git: $out"
  say "$name: $(tr '\n' ';' <<<"$out")"
}

check_app() {
  local app=$1 name c
  name=$(image_name "$app")
  c="sluice-check-$app-$$"
  case "$app" in
    server)
      # server --standalone as uid 65532 with its embedded PostgreSQL in a volume, root fs read-only.
      "$DOCKER" volume create "$c" >/dev/null
      "$DOCKER" run -d --name "$c" --read-only --tmpfs /tmp -v "$c:/var/lib/sluice" \
        -e SLUICE_EXECUTORS=inline "$name" server --standalone >/dev/null
      ;;
    jobs)
      # jobs migrates and uses a database: a throwaway one on the host network.
      start_postgres
      if [ -z "$PG_URL" ]; then
        say "$name: not started (no Debian PostgreSQL on this machine: apt-get install postgresql)"
        return 0
      fi
      "$DOCKER" run -d --name "$c" --read-only --tmpfs /tmp --network host \
        -e SLUICE_DATABASE_URL="$PG_URL" -e INTERNAL_HTTP_SERVER_ADDR="127.0.0.1:$(free_port)" "$name" >/dev/null
      ;;
    docker-executor | k8s-executor)
      local var=DOCKER_EXECUTOR_OWNER_ID
      [ "$app" = k8s-executor ] && var=K8S_EXECUTOR_OWNER_ID
      # Without its owner ID the executor does not start, and says which variable is missing.
      local out
      if out=$("$DOCKER" run --rm -e EXECUTOR_API_URL=http://127.0.0.1:8081 -e EXECUTOR_API_TOKEN=check "$name" 2>&1); then
        die "$name started without $var"
      fi
      grep -q "$var" <<<"$out" || die "$name exited without naming $var: $out"
      say "$name without $var exits: $(grep -m1 "$var" <<<"$out")"
      # The executor it is named for: docker with this engine's socket (through the socket's
      # group, as docker/compose.yaml does); the kubernetes executor is not built yet, so
      # k8s-executor runs SLUICE_EXECUTORS=process (README).
      local run_as=(-e SLUICE_EXECUTORS=process)
      local sock=${DOCKER_HOST#unix://}
      if [ "$app" = docker-executor ] && [ -S "$sock" ]; then
        run_as=(-e SLUICE_EXECUTORS=docker -v "$sock:/var/run/docker.sock" --group-add "$(stat -c %g "$sock")"
          -e DOCKER_HOST=unix:///var/run/docker.sock)
      fi
      "$DOCKER" run -d --name "$c" --read-only --tmpfs /tmp -e "$var=check" "${run_as[@]}" \
        -e EXECUTOR_API_URL=http://127.0.0.1:8081 -e EXECUTOR_API_TOKEN=check "$name" >/dev/null
      ;;
  esac
  if wait_live "$c"; then
    say "$name answers /live (user $("$DOCKER" exec "$c" id -u))"
    "$DOCKER" rm -f "$c" >/dev/null
    "$DOCKER" volume rm "$c" >/dev/null 2>&1 || true
    stop_postgres
  else
    "$DOCKER" rm -f "$c" >/dev/null
    "$DOCKER" volume rm "$c" >/dev/null 2>&1 || true
    stop_postgres
    die "$name did not answer /live"
  fi
}

# --- main -----------------------------------------------------------------------------------

main() {
  local images=()
  for arg in "$@"; do
    case "$arg" in
      --no-check) CHECK=0 ;;
      -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 0 ;;
      *) images+=("$arg") ;;
    esac
  done
  [ "${#images[@]}" -gt 0 ] || images=("${ALL_IMAGES[@]}")
  for app in "${images[@]}"; do [ -f "$ROOT/docker/$app.Dockerfile" ] || die "no docker/$app.Dockerfile"; done

  pick_docker
  if [ -z "${DOCKER_HOST:-}" ]; then eval "$(bash "$ROOT/scripts/docker-engine.sh")"; fi
  ensure_base "$NODE_IMAGE" node
  for app in "${images[@]}"; do
    if [ "$app" = sluice-uv ]; then
      ensure_base "$DEBIAN_IMAGE" debian
      [[ " ${images[*]} " == *" runner "* ]] || image_exists "$(image_name runner)" ||
        die "sluice-uv copies the runner from $(image_name runner): build runner first"
    fi
  done

  declare -gA BUILD_SECONDS=()
  for app in "${images[@]}"; do build_one "$app"; done
  if [ "$CHECK" = 1 ]; then
    for app in "${images[@]}"; do
      case "$app" in
        runner) check_runner ;;
        sluice-uv) check_uv ;;
        *) check_app "$app" ;;
      esac
    done
  fi

  say "images:"
  for app in "${images[@]}"; do
    local name
    name=$(image_name "$app")
    printf 'build-images:   %-32s %8s MB  built in %4s s\n' "$name" \
      "$(($("$DOCKER" image inspect -f '{{.Size}}' "$name") / 1000000))" "${BUILD_SECONDS[$app]}" >&2
  done
  printf 'export SLUICE_IMAGES_BUILT=1\n'
}

main "$@"
