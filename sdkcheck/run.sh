#!/usr/bin/env bash
# make sdkcheck: generated clients work against the real service. Starts `gateway dev` on free
# loopback ports, fetches the description it serves (/v1/openapi.json), generates a TypeScript
# client (openapi-typescript + openapi-fetch, versions pinned in ts/package-lock.json) and a Go
# client (oapi-codegen with its default options: models and client, unreferenced schemas pruned)
# in a module of its own (go/), type-checks both strictly and runs one scenario with each.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PATH="$PATH:/usr/local/go/bin"
export npm_config_loglevel=error npm_config_update_notifier=false
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "sdkcheck: $*" >&2; [ -f "$work/dev.log" ] && tail -n 30 "$work/dev.log" >&2; exit 1; }

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$(( 20000 + RANDOM % 40000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}

go build -o bin/gateway .
export DATABASE_URL="${SDKCHECK_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/gateway_sdkcheck?sslmode=disable}"
.ci/pg-up >/dev/null 2>&1 || .ci/pg-up
# A scratch database, new each run: the check must not depend on what an earlier run (of an
# older schema) left behind.
db=${DATABASE_URL##*/}; db=${db%%\?*}
psql -q "${DATABASE_URL%/*}/postgres?sslmode=disable" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null
.ci/pg-up >/dev/null 2>&1 || .ci/pg-up
addr="127.0.0.1:$(free_port)"; sim="127.0.0.1:$(free_port)"
GATEWAY_ENV=development GATEWAY_ADDR="$addr" PLATFORM_SIM_ADDR="$sim" GATEWAY_DEV_KEYS_FILE="$work/keys.json" \
  bin/gateway dev >"$work/dev.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
  [ -s "$work/keys.json" ] && curl -fsS "http://$addr/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "gateway dev exited"
  sleep 0.1
done
[ -s "$work/keys.json" ] || fail "gateway dev did not start within 30 s"
export SDKCHECK_KEYS="$work/keys.json"
curl -fsS "http://$addr/v1/openapi.json" -o sdkcheck/ts/openapi.json
cp sdkcheck/ts/openapi.json sdkcheck/go/openapi.json

start=$(date +%s)
(
  cd sdkcheck/ts
  [ -d node_modules ] || npm ci --silent --no-audit --no-fund >/dev/null 2>&1 || npm ci --no-audit --no-fund
  npx --no-install openapi-typescript openapi.json -o schema.d.ts --silent >/dev/null
  # One strict compile (tsconfig: strict, noUncheckedIndexedAccess, exactOptionalPropertyTypes,
  # noEmitOnError): it type-checks exactly as tsc --noEmit would, and emits what node runs.
  npx --no-install tsc -p tsconfig.json
  node dist/scenario.js
) || fail "TypeScript client"
echo "sdkcheck: TypeScript client (openapi-typescript + openapi-fetch) generated, type-checked (tsc --strict) and its scenario passed in $(( $(date +%s) - start )) s"

start=$(date +%s)
(
  cd sdkcheck/go
  mkdir -p client
  go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen -config oapi-codegen.yaml openapi.json
  go vet ./...
  go run .
) || fail "Go client"
echo "sdkcheck: Go client (oapi-codegen, default options) generated, vetted and its scenario passed in $(( $(date +%s) - start )) s"
