# Messaging Gateway — the commands a newcomer needs. `make help` lists them.
SHELL := /bin/bash
export PATH := $(PATH):/usr/local/go/bin

DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/gateway?sslmode=disable
TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable
REDOCLY := npx --yes @redocly/cli@2.77.0
export DATABASE_URL TEST_DATABASE_URL

.PHONY: help generate verify build run test fuzz lint bench bench-inbox bench-import bench-media db apicheck sdkcheck schema pgbouncer-test cluster-test

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-15s %s\n", $$1, $$2}'

generate: ## regenerate gen/ from openapi/openapi.yaml
	go generate ./openapi/

# quiet runs a command with its output kept back, shown only when it fails.
quiet = out=$$(mktemp); if ! { $(1); } >$$out 2>&1; then cat $$out; rm -f $$out; exit 1; fi; rm -f $$out

verify: ## fail when gen/, go.mod or go.sum is stale, or gofmt/vet/the spec linter complain; one line when all is well
	@$(call quiet,go generate ./openapi/)
	@git diff --quiet -- gen openapi || { git diff --stat -- gen openapi; echo "verify: gen/ is stale: run make generate and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- gen)" || { echo "verify: untracked files in gen/"; exit 1; }
	@$(call quiet,go mod tidy -diff) || { echo "verify: go.mod/go.sum are stale: run go mod tidy"; exit 1; }
	@$(call quiet,$(MAKE) --no-print-directory lint)
	@echo "verify: ok (gen/ current, go.mod tidy, gofmt, go vet and the OpenAPI linter clean)"

schema: ## regenerate store/schema.sql (every table, index, function and trigger) from a freshly migrated database
	@DATABASE_URL=$(TEST_DATABASE_URL) .ci/pg-up
	go test -count=1 -run '^TestSchemaFile$$' ./store/ -update-schema

build: ## build bin/gateway
	go build -o bin/gateway .

db: ## start PostgreSQL if none answers at DATABASE_URL and create its database
	@.ci/pg-up

run: build ## check the ports (GATEWAY_ADDR, PLATFORM_SIM_ADDR), start PostgreSQL if needed, migrate, seed a local account on the simulator, serve
	@bin/gateway dev --check-ports
	@.ci/pg-up
	GATEWAY_ENV=development bin/gateway dev

test: ## the whole test suite (starts PostgreSQL if needed; installs chromium and axe-core for the browser tests), then the breaking-change gate
	@DATABASE_URL=$(TEST_DATABASE_URL) .ci/pg-up
	@.ci/browser-up
	go test -race -count=1 -timeout 30m ./...
	@$(MAKE) --no-print-directory apicheck

# The end-to-end suite (the root package) and the contract suite (server) a second time, with
# every gateway and store of the tests behind PgBouncer in transaction mode: databases are
# created, migrated and dropped on the direct connection, which also carries LISTEN
# (storetest's TEST_POOLER_URL). When a test fails, PgBouncer's warnings and errors are printed
# (its log is removed with its directory).
# PGBOUNCER_RUN selects the tests of the PgBouncer pass; by default both packages whole (CI runs
# it after make test, which runs everything directly). A narrower pattern, such as
# '^Test(E2E|Send|PlatformWebhook)', tries one path quickly.
PGBOUNCER_RUN ?= .

pgbouncer-test: ## the e2e and contract suites again, whole, through PgBouncer in transaction mode (installs and starts it)
	@DATABASE_URL=$(TEST_DATABASE_URL) .ci/pg-up
	@.ci/browser-up
	@dir=$$(mktemp -d); trap '.ci/pgbouncer-up stop '"$$dir"'; rm -rf '"$$dir" EXIT; \
		url=$$(.ci/pgbouncer-up "$$dir") && \
		{ TEST_POOLER_URL=$$url go test -count=1 -timeout 30m -run '$(PGBOUNCER_RUN)' . ./server/ || \
			{ rc=$$?; echo "PgBouncer's warnings and errors:"; grep -E ' (WARNING|ERROR|FATAL) ' "$$dir/pgbouncer.log" | grep -v 'when not linked' | tail -50; exit $$rc; }; }

# The topology test (TestCluster): a primary, a streaming replica and PgBouncer (.ci/cluster,
# private clusters on free ports, removed at the end even when the test fails), three gateways
# behind a round-robin proxy, faults under load; it prints its counts.
cluster-test: ## a primary, a replica, PgBouncer and three gateways under load and faults; prints the counts
	@set -o pipefail; dir=$$(mktemp -d /tmp/gw-cluster-XXXXXX); chmod 755 "$$dir"; \
		trap '.ci/cluster down '"$$dir/db"'; rm -rf '"$$dir" EXIT; \
		GATEWAY_CLUSTER_DIR=$$dir/db go test -count=1 -timeout 10m -run '^TestCluster$$' -v . | grep -v '^=== '

sdkcheck: ## generated TypeScript and Go clients, built from a running gateway dev's description, type-check and run a scenario
	@sdkcheck/run.sh

apicheck: ## fail when openapi.yaml breaks the released v1 (openapi/baseline/v1.yaml), judged by oasdiff
	@cd openapi/breaking && go test -count=1 ./... >/dev/null 2>&1 || { cd openapi/breaking && go test -count=1 ./...; exit 1; }
	@echo "apicheck: openapi.yaml is backward compatible with openapi/baseline/v1.yaml"

# Every fuzz target, one at a time (one package's fuzzing at once: the machine's cores go to
# its workers), each for FUZZTIME; the committed corpora under testdata/fuzz run first.
# FUZZTIME is a count of executions, not a duration: Go 1.26's fuzz coordinator can report a
# spurious "context deadline exceeded" failure when a -fuzztime duration ends while a worker is
# busy (golang/go#75804, fixed in Go 1.27); a count has no deadline to race.
FUZZTIME ?= 20000x
FUZZ_TARGETS := ./platform/whatsapp:FuzzParseWebhook ./platform/whatsapp:FuzzScanWebhookSameAsLevels ./server:FuzzContactsBody ./server:FuzzSendTemplateBody \
	./server:FuzzPlatformWebhookBody ./server:FuzzInboundMessage ./server:FuzzSendMessageBody

fuzz: ## run each fuzz target for FUZZTIME (20000 executions): never a 5xx, never a panic
	@DATABASE_URL=$(TEST_DATABASE_URL) .ci/pg-up
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} ($${t%%:*}, $(FUZZTIME))"; \
		go test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) "$${t%%:*}"; \
	done

lint: ## gofmt, go vet, and the OpenAPI linter (Redocly CLI from npm)
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "lint: gofmt"; exit 1; }
	go vet ./...
	$(REDOCLY) lint --skip-rule=info-license-strict openapi/openapi.yaml

bench: db ## the benchmarks that print the speed figures
	go test -run '^$$' -bench . -benchtime 2s ./...

bench-inbox: db ## the team inbox at 100,000 conversations and 10M messages (seeded once, minutes): each view, a 500-message thread, and the pages over HTTP
	INBOX_BENCH=1 go test -run '^$$' -bench '^BenchmarkInbox$$' -benchtime 50x -timeout 60m ./store/
	go test -run '^$$' -bench '^BenchmarkInboxPages$$' -benchtime 30x ./server/

bench-import: db ## a 1,000,000-row spreadsheet through the dashboard's import (upload, preview, confirm): the time of each step and the peak memory, then the name index's catch-up
	IMPORT_ROWS=1000000 go test -count=1 -timeout 60m -run '^TestImportMillionRowsThroughTheDashboard$$' -v ./server/dashboard/

bench-media: db ## a 100 MB media file through GET /v1/media/{id} from the simulator: MB/s (median of 3 rounds) and peak memory growth
	go test -run '^$$' -bench MediaDownload -benchtime 1x ./server/
