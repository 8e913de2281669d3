# ceiling: find the throughput ceiling of a WebSocket server, honestly.
#
#   make ceiling                                   sweep against refserver, sets picked for this machine
#   make ceiling SRV_CPUSET=1,2,3 LT_CPUSET=0      exactly those sets (a 4-core runner)
#   make ceiling-quick                             a small ladder in about a minute
#   make ceiling-compare BASE_TARGET=FILE [TARGET=FILE]  base and head swept in one run and compared (docs/compare.md)
#   make test                                      vet + race tests + actionlint
#   make bench                                     generator efficiency report
#   make load                                      refserver + one short `ceiling load`
#   make node-generator                            the Node generator's pinned dependencies (docs/generators.md)
#   make release-dry-run                           the archives and SHA256SUMS a v* tag would release, into dist/

SHELL   := /bin/bash
GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# Sweep knobs: exported so `ceiling sweep` reads them (flags override).
export SRV_CPUSET LT_CPUSET BATCH_LADDER RECORD_SIZE HEADLINE_BATCH REPS DURATION WARMUP SCENARIO OUT QUICK GENERATOR TARGET ALLOW_OVERLAP HEADROOM_PROBE KEEP_WORK_DIR PROFILE_DIR OBJECTIVE DROP SCENARIO_FILE SOURCE_ADDRS SEARCH CALIBRATE CALIBRATION AGENTS AGENTS_LISTEN AGENTS_TOKEN AGENTS_TOKEN_FILE AGENTS_JOIN_TIMEOUT AGENTS_NETNS AGENTS_PORT_RANGE SRV_USER AGENTS_TLS_CERT AGENTS_TLS_KEY AGENTS_TLS_CA FAULT
# Two-arm sweep knobs (docs/compare.md).
export BASE_TARGET COMPARE_REPS ALPHA COMPARE_STOP COMPARE_MODE DUET_CPUSETS COMPARE_DURATION COMPARE_WARMUP
# CONNS_LADDER_<batch> (from the command line or the environment) reach
# `ceiling sweep` through the environment as well, never pasted into a
# shell command line, where a quote in a value would end the quoting and
# run the rest as a command. (A bare `export` with an empty list would
# export every variable, hence one export per name.)
$(foreach v,$(filter CONNS_LADDER_%,$(.VARIABLES)),$(eval export $(v)))

.PHONY: all build test vet lint bench load ceiling ceiling-quick ceiling-compare node-generator release-dry-run clean

all: build

# bin/nats-server: the broker of benchmark/targets/nats.json, a tool
# dependency in go.mod (built from the module cache, no separate install).
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...
	$(GO) build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2

vet:
	$(GO) vet ./...

lint:
	$(GO) tool actionlint

# -p 1: one package's tests at a time. The harness tests boot pinned
# servers and judge contention on their CPUs; another package's tests
# running beside them on a 2-core machine would be that contention.
test: vet lint
	$(GO) test -race -count=1 -p 1 -timeout 45m ./...

bench: build
	$(GO) run ./benchmark/efficiency

# The release's build step as release.yml runs it on a v* tag
# (.github/release/build.sh), with a dry-run version: every platform's
# archive and SHA256SUMS in dist/, nothing published.
release-dry-run:
	bash .github/release/build.sh $(or $(RELEASE_VERSION),v0.0.0-dry) dist

load: build
	@set -e; \
	$(BIN)/refserver --addr 127.0.0.1:6001 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/6001) 2>/dev/null && break; sleep 0.1; done; \
	$(BIN)/ceiling load --scenario echo --url ws://127.0.0.1:6001/echo --connections 16 --batch 10 --duration 5s --warmup 1s

ceiling: build
	$(BIN)/ceiling sweep

ceiling-quick: build
	QUICK=1 $(BIN)/ceiling sweep

ceiling-compare: build
	@test -n "$$BASE_TARGET" || { echo "make ceiling-compare: set BASE_TARGET=FILE, the base arm's target file (TARGET is the head's)" >&2; exit 2; }
	$(BIN)/ceiling sweep

# The second generator (GENERATOR="node benchmark/generators/node/gen.js"):
# ws and hdr-histogram-js at the versions in its package-lock.json, into its
# git-ignored node_modules. Its tests skip without them (fail under CI=true).
node-generator:
	npm ci --prefix benchmark/generators/node --ignore-scripts --no-audit --no-fund --loglevel=error

clean:
	rm -rf $(BIN)
