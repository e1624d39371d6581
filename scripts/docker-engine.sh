#!/usr/bin/env bash
# A private Docker engine for tests and CI (see docs/testing.md#scripts).
#
#   eval "$(bash scripts/docker-engine.sh)"   # start (or reuse) it; exports DOCKER_HOST
#   bash scripts/docker-engine.sh stop        # stop the engine this script started
#
# Idempotent: installs docker.io and busybox-static with apt-get when missing, and reuses an
# engine it started before while that engine still answers. Only `export …` lines go to
# stdout (so eval works); progress goes to stderr.
set -euo pipefail

# Where the running engine's socket, pid file and state live; one per machine.
STATE_FILE="${SLUICE_DOCKER_ENGINE_STATE:-/tmp/sluice-docker-engine.env}"

say() { printf 'docker-engine: %s\n' "$*" >&2; }

ping_socket() { curl -sf --max-time 2 --unix-socket "$1" http://localhost/_ping >/dev/null 2>&1; }

print_exports() {
  printf 'export DOCKER_HOST=unix://%s\n' "$1"
  printf '# dockerd pid file: %s\n' "$2"
}

install_missing() {
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  [ -x /bin/busybox ] && file_is_static /bin/busybox || missing+=(busybox-static)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "apt-get install ${missing[*]}"
  apt-get update >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
}

# busybox-static ships /bin/busybox as a static binary; the dynamic `busybox` package does not.
file_is_static() { ! grep -q 'ld-linux' "$1" 2>/dev/null; }

start() {
  if [ -f "$STATE_FILE" ]; then
    # shellcheck disable=SC1090
    . "$STATE_FILE"
    if [ -n "${ENGINE_SOCKET:-}" ] && ping_socket "$ENGINE_SOCKET"; then
      say "reusing the engine at $ENGINE_SOCKET"
      print_exports "$ENGINE_SOCKET" "$ENGINE_PIDFILE"
      return 0
    fi
  fi
  install_missing
  local dir
  dir=$(mktemp -d /tmp/sluice-dockerd.XXXXXX)
  local socket="$dir/docker.sock" pidfile="$dir/pid"
  say "starting dockerd in $dir (log: $dir/log)"
  # setsid: the engine outlives the shell that started it (eval'd from CI or a session).
  setsid dockerd --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$pidfile" \
    -H "unix://$socket" >"$dir/log" 2>&1 </dev/null &
  local waited=0
  until ping_socket "$socket"; do
    sleep 0.2
    waited=$((waited + 1))
    if [ "$waited" -ge 150 ]; then
      say "dockerd did not answer _ping on $socket within 30 s; last lines of $dir/log:"
      tail -n 20 "$dir/log" >&2
      exit 1
    fi
  done
  printf 'ENGINE_DIR=%q\nENGINE_SOCKET=%q\nENGINE_PIDFILE=%q\n' "$dir" "$socket" "$pidfile" >"$STATE_FILE"
  say "ready: DOCKER_HOST=unix://$socket"
  print_exports "$socket" "$pidfile"
}

stop() {
  if [ ! -f "$STATE_FILE" ]; then
    say "no engine started by this script ($STATE_FILE is absent)"
    return 0
  fi
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  if [ -f "${ENGINE_PIDFILE:-}" ]; then
    local pid
    pid=$(cat "$ENGINE_PIDFILE")
    say "stopping dockerd (pid $pid)"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$STATE_FILE"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  *) say "usage: $0 [start|stop]"; exit 2 ;;
esac
