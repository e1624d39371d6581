#!/usr/bin/env bash
# A private Kubernetes API server for tests and CI: etcd, kube-apiserver and
# kube-controller-manager on loopback. No scheduler and no kubelet, so pods stay Pending; tests
# play the kubelet by writing pod status. The Job controller and the garbage collector are real.
#
#   eval "$(bash scripts/kube-apiserver.sh)"   # start (or reuse) it; exports KUBECONFIG
#   bash scripts/kube-apiserver.sh stop        # stop what this script started
#   bash scripts/kube-apiserver.sh build       # only make sure the binaries are cached
#
# Idempotent: installs etcd-server, golang-go, rsync, dpkg-dev, make and openssl with apt-get
# when missing; builds kube-apiserver and kube-controller-manager from Debian's own `kubernetes`
# source package when no cached build exists; reuses a server it started before while that
# server still answers. Only `export …` lines go to stdout (so eval works); progress goes to
# stderr. The kubeconfig's user is bound to system:masters by a static token.
#
# Cache: $SLUICE_KUBE_CACHE (default /var/cache/sluice)/kube-<source version>.r<recipe>/
# (≈ 210 MB), outside the checkout; the newest cached version is used, so a Debian update
# rebuilds only once the old cache is removed.
#
# Measured 2026-12-01 on 2 cores shared with other builds (Debian 12, source
# 1.20.5+really1.20.2-1.1+deb12u1, Go 1.19): cold, nothing installed: 1007 s (make 938 s, load
# ≈ 20); cold with the packages installed: 850 s (make 810 s). Warm start (binaries cached,
# nothing running) 6–16 s in 18 runs at load 2–18 (one outlier of 65 s, not reproduced);
# reuse of a running server 0.02 s. RSS after a Job test: etcd 48 MB, kube-apiserver 320 MB,
# kube-controller-manager 95 MB.
set -euo pipefail

STATE_FILE="${SLUICE_KUBE_APISERVER_STATE:-/tmp/sluice-kube-apiserver.env}"
CACHE_ROOT="${SLUICE_KUBE_CACHE:-/var/cache/sluice}"
BINARIES=(kube-apiserver kube-controller-manager)
# Bump when the build below changes, so builds by an older recipe are not reused.
RECIPE=2
# Debian's reflect2 1.0.2 (see build()).
REFLECT2=/usr/share/gocode/src/github.com/modern-go/reflect2

say() { printf 'kube-apiserver: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }

print_exports() {
  printf 'export KUBECONFIG=%s\n' "$1"
}

install_missing() {
  local missing=()
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  if [ "${1:-}" = build ]; then
    command -v go >/dev/null 2>&1 || missing+=(golang-go)
    command -v rsync >/dev/null 2>&1 || missing+=(rsync)
    command -v dpkg-source >/dev/null 2>&1 || missing+=(dpkg-dev)
    command -v make >/dev/null 2>&1 || missing+=(make)
    command -v diff >/dev/null 2>&1 || missing+=(diffutils)
    [ -d "$REFLECT2" ] || missing+=(golang-github-modern-go-reflect2-dev)
  fi
  [ "${#missing[@]}" -eq 0 ] && return 0
  say "apt-get install ${missing[*]}"
  apt-get update >&2
  # etcd-server's own service (where an init system starts it) is not ours: ours has its own ports.
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >&2
}

# The newest cached build with both binaries, or nothing.
cached_dir() {
  local d
  for d in $(ls -d "$CACHE_ROOT"/kube-*.r"$RECIPE" 2>/dev/null | sort -rV); do
    [ -x "$d/kube-apiserver" ] && [ -x "$d/kube-controller-manager" ] && { echo "$d"; return 0; }
  done
  return 0
}

# deb-src lines for the mirror and suite the system's own apt sources name (read at run time,
# never written into the repository). Handles deb822 (.sources) and one-line (.list) files.
deb_src_lines() {
  local suite="$1" f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" '
      function flush() {
        if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " suite " ") && uris != "")
          { n = split(uris, u, " "); for (i = 1; i <= n; i++)
              printf "deb-src%s %s %s %s\n", (key != "" ? " [signed-by=" key "]" : ""), u[i], suite, comps }
        types = suites = uris = comps = key = "" }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      { k = $1; sub(/:$/, "", k); $1 = ""; sub(/^ +/, "")
        if (k == "Types") types = $0; else if (k == "Suites") suites = $0
        else if (k == "URIs") uris = $0; else if (k == "Components") comps = $0
        else if (k == "Signed-By") key = $0 }
      END { flush() }' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk -v suite="$suite" '$1 == "deb" {
      opts = ""; i = 2
      if ($2 ~ /^\[/) { while (i <= NF) { opts = opts " " $i; if ($i ~ /\]$/) break; i++ }; i++ }
      if ($(i + 1) != suite) next
      line = "deb-src" opts " " $i " " suite
      for (j = i + 2; j <= NF; j++) line = line " " $j
      print line }' "$f"
  done
}

# Debian version -> the upstream version the binaries report ("1.20.5+really1.20.2-1" -> 1.20.2).
upstream_version() {
  local v="${1#*:}"
  v="${v%-*}"
  case "$v" in *+really*) v="${v##*+really}" ;; esac
  v="${v%%[+~]*}"
  echo "$v"
}

build() {
  local have
  have=$(cached_dir)
  if [ -n "$have" ]; then
    say "cached build: $have"
    return 0
  fi
  install_missing build
  local suite
  suite=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ -n "$suite" ] || die "no VERSION_CODENAME in /etc/os-release"
  mkdir -p "$CACHE_ROOT"
  # Under the lock no other build runs: any build dir is an interrupted one's.
  rm -rf "$CACHE_ROOT"/.build.*
  local work
  work=$(mktemp -d "$CACHE_ROOT/.build.XXXXXX")
  # The cache entry appears only by the final rename, so an interrupted build leaves no half
  # cache; the traps remove its work dir too.
  trap 'rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM HUP
  local apt="$work/apt"
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$work/src"
  deb_src_lines "$suite" | sort -u >"$apt/sources.list"
  [ -s "$apt/sources.list" ] || die "no 'deb' source for suite $suite in /etc/apt; cannot add deb-src"
  # APT::Sandbox::User=root: the private dirs are root's; apt would fall back to it with a warning.
  local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
    -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root)
  say "fetching the kubernetes source package ($suite, private apt config in $apt)"
  apt-get "${opts[@]}" update >&2
  (cd "$work/src" && apt-get "${opts[@]}" source --download-only kubernetes >&2)
  local dsc
  dsc=$(ls "$work"/src/kubernetes_*.dsc 2>/dev/null | head -n 1)
  [ -n "$dsc" ] || die "apt-get source fetched no kubernetes_*.dsc"
  local version
  version=$(basename "$dsc" .dsc)
  version="${version#kubernetes_}"
  local up
  up=$(upstream_version "$version")
  say "unpacking kubernetes $version (upstream $up)"
  (cd "$work/src" && dpkg-source --no-check -x "$(basename "$dsc")" tree >&2)
  # The vendored reflect2 1.0.1 links against the map iterator of Go < 1.18; built with Debian's
  # Go 1.19 it corrupts memory on every jsoniter map encode (the API server panics on the first
  # create). reflect2 1.0.2 has the same API and supports Go 1.18+.
  local vendored="$work/src/tree/vendor/github.com/modern-go/reflect2"
  if [ ! -f "$vendored/go_above_118.go" ]; then
    say "replacing the vendored reflect2 with Debian's 1.0.2 (Go 1.18+ map iteration)"
    rm -f "$vendored"/*.go "$vendored"/*.s
    cp "$REFLECT2"/*.go "$REFLECT2"/*.s "$vendored/"
  fi
  local major="${up%%.*}" minor
  minor="${up#*.}"
  minor="${minor%%.*}"
  say "building kube-apiserver and kube-controller-manager: ≈ 6 min on 2 cores (log: $work/build.log)"
  local started=$SECONDS
  if ! (cd "$work/src/tree" &&
    env KUBE_GIT_VERSION="v$up" KUBE_GIT_MAJOR="$major" KUBE_GIT_MINOR="$minor" \
      KUBE_GIT_TREE_STATE=clean CGO_ENABLED=0 GOPROXY=off GOFLAGS=-mod=vendor \
      make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" >"$work/build.log" 2>&1); then
    tail -n 30 "$work/build.log" >&2
    die "make failed (log above)"
  fi
  say "built in $((SECONDS - started)) s"
  local out="$work/out" b path
  mkdir -p "$out"
  for b in "${BINARIES[@]}"; do
    path=$(find "$work/src/tree/_output" -type f -name "$b" -perm -u+x | head -n 1)
    [ -n "$path" ] || die "make produced no $b"
    mv "$path" "$out/$b"
  done
  local dest="$CACHE_ROOT/kube-$version.r$RECIPE"
  rm -rf "$dest"
  mv "$out" "$dest"
  rm -rf "$work"
  trap - EXIT INT TERM HUP
  say "cached: $dest"
}

# A TCP port nobody listens on now (a connect is refused).
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 40000))
    (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
}

api_get() { curl -sf --max-time 2 --cacert "$1/ca.crt" -H "Authorization: Bearer $2" "https://127.0.0.1:$3$4"; }

# setsid: the servers outlive the shell that started them (eval'd from CI or a session).
spawn() {
  local log="$1"
  shift
  # 9>&-: the servers must not hold the script's lock.
  setsid "$@" >"$log" 2>&1 </dev/null 9>&- &
  echo $!
}

wait_for() {
  local what="$1" log="$2" tries="$3"
  shift 3
  local n=0
  until "$@" >/dev/null 2>&1; do
    sleep 0.2
    n=$((n + 1))
    if [ "$n" -ge "$tries" ]; then
      say "$what not ready within $((tries / 5)) s; last lines of $log:"
      tail -n 20 "$log" >&2
      exit 1
    fi
  done
}

has_default_sa_token() {
  api_get "$DIR" "$TOKEN" "$API_PORT" /api/v1/namespaces/default/serviceaccounts/default 2>/dev/null |
    grep -q '"secrets"'
}

make_certs() {
  local dir="$1"
  # A CA and a serving cert it signs; the controller manager hands the CA to pods as ca.crt.
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=sluice-kube-ca \
    -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver \
    -keyout "$dir/apiserver.key" -out "$dir/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local\n' >"$dir/san.ext"
  openssl x509 -req -in "$dir/apiserver.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days 3650 -extfile "$dir/san.ext" -out "$dir/apiserver.crt" 2>/dev/null
  # The service-account token signing key pair.
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
}

write_kubeconfig() {
  local file="$1" ca="$2" port="$3" token="$4"
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: sluice
  cluster:
    server: https://127.0.0.1:$port
    certificate-authority-data: $(base64 -w0 <"$ca")
users:
- name: sluice-admin
  user:
    token: $token
contexts:
- name: sluice
  context:
    cluster: sluice
    user: sluice-admin
    namespace: default
current-context: sluice
EOF
}

start() {
  if [ -f "$STATE_FILE" ]; then
    # shellcheck disable=SC1090
    . "$STATE_FILE"
    if [ -n "${API_PORT:-}" ] && api_get "$DIR" "$TOKEN" "$API_PORT" /readyz >/dev/null 2>&1; then
      say "reusing the API server at https://127.0.0.1:$API_PORT"
      print_exports "$KUBECONFIG_FILE"
      return 0
    fi
    say "the API server in $STATE_FILE does not answer; stopping its leftovers"
    stop
  fi
  install_missing
  build
  local bin
  bin=$(cached_dir)
  [ -n "$bin" ] || die "no cached build in $CACHE_ROOT"
  local started=$SECONDS
  DIR=$(mktemp -d /tmp/sluice-kube.XXXXXX)
  TOKEN=$(openssl rand -hex 24)
  local etcd_port peer_port
  etcd_port=$(free_port)
  peer_port=$(free_port)
  API_PORT=$(free_port)
  KUBECONFIG_FILE="$DIR/kubeconfig"
  make_certs "$DIR"
  printf '%s,sluice-admin,sluice-admin,"system:masters"\n' "$TOKEN" >"$DIR/tokens.csv"
  write_kubeconfig "$KUBECONFIG_FILE" "$DIR/ca.crt" "$API_PORT" "$TOKEN"
  save_state() {
    printf 'DIR=%q\nAPI_PORT=%q\nTOKEN=%q\nKUBECONFIG_FILE=%q\nETCD_PID=%q\nAPISERVER_PID=%q\nKCM_PID=%q\n' \
      "$DIR" "$API_PORT" "$TOKEN" "$KUBECONFIG_FILE" "${ETCD_PID:-}" "${APISERVER_PID:-}" "${KCM_PID:-}" >"$STATE_FILE"
  }
  save_state
  say "starting etcd, kube-apiserver, kube-controller-manager in $DIR ($bin)"
  ETCD_PID=$(spawn "$DIR/etcd.log" etcd --name default --data-dir "$DIR/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
    --initial-cluster "default=http://127.0.0.1:$peer_port")
  save_state
  wait_for etcd "$DIR/etcd.log" 150 curl -sf --max-time 2 "http://127.0.0.1:$etcd_port/health"
  say "etcd ready after $((SECONDS - started)) s"
  APISERVER_PID=$(spawn "$DIR/apiserver.log" "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" --insecure-port 0 \
    --tls-cert-file "$DIR/apiserver.crt" --tls-private-key-file "$DIR/apiserver.key" \
    --client-ca-file "$DIR/ca.crt" --token-auth-file "$DIR/tokens.csv" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$DIR/sa.pub" --service-account-signing-key-file "$DIR/sa.key" \
    --service-cluster-ip-range 10.0.0.0/24 --feature-gates TTLAfterFinished=true \
    --cert-dir "$DIR/certs" --profiling=false)
  save_state
  wait_for kube-apiserver "$DIR/apiserver.log" 300 api_get "$DIR" "$TOKEN" "$API_PORT" /readyz
  say "kube-apiserver ready after $((SECONDS - started)) s"
  # Secure and insecure ports off: nothing else on the machine may collide with them.
  KCM_PID=$(spawn "$DIR/controller-manager.log" "$bin/kube-controller-manager" \
    --kubeconfig "$KUBECONFIG_FILE" --leader-elect=false --use-service-account-credentials=false \
    --service-account-private-key-file "$DIR/sa.key" --root-ca-file "$DIR/ca.crt" \
    --feature-gates TTLAfterFinished=true --port 0 --secure-port 0 --profiling=false)
  save_state
  # Jobs' pods need the default service account and (in 1.20) its token secret.
  wait_for "the default service account" "$DIR/controller-manager.log" 300 has_default_sa_token
  say "ready in $((SECONDS - started)) s: KUBECONFIG=$KUBECONFIG_FILE (https://127.0.0.1:$API_PORT)"
  print_exports "$KUBECONFIG_FILE"
}

stop_pid() {
  local name="$1" pid="$2"
  [ -n "$pid" ] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  # A stale state file's pid may belong to someone else by now: ours name our temp dir.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$DIR/" || return 0
  say "stopping $name (pid $pid)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  if [ ! -f "$STATE_FILE" ]; then
    say "no API server started by this script ($STATE_FILE is absent)"
    return 0
  fi
  # shellcheck disable=SC1090
  . "$STATE_FILE"
  stop_pid kube-controller-manager "${KCM_PID:-}"
  stop_pid kube-apiserver "${APISERVER_PID:-}"
  stop_pid etcd "${ETCD_PID:-}"
  case "${DIR:-}" in /tmp/sluice-kube.*) rm -rf "$DIR" ;; esac
  rm -f "$STATE_FILE"
}

# One run at a time (two test processes may start it together); the lock is released on exit.
exec 9>"$STATE_FILE.lock"
flock 9

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  build) build ;;
  *) say "usage: $0 [start|stop|build]"; exit 2 ;;
esac
