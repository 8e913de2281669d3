# ceiling: find the throughput ceiling of a WebSocket server, honestly.
#
#   make ceiling                                   sweep against refserver, sets picked for this machine
#   make ceiling SRV_CPUSET=1,2,3 LT_CPUSET=0      exactly those sets (a 4-core runner)
#   make ceiling-quick                             a small ladder in about a minute
#   make ceiling-compare BASE_TARGET=FILE [TARGET=FILE]  base and head swept in one run and compared (docs/compare.md)
#   make ceiling-connections                       how many connections the server holds, and what each costs it (docs/sweep.md)
#   make test                                      the unit lane: vet + actionlint + race tests, shuffled, packages in parallel (no server process, no quiet CPU)
#   make e2e                                       the end-to-end lane: real servers, real sweeps, pinned CPUs (files tagged e2e)
#   make check                                     both lanes: what CI runs (.ci/run)
#   make validate                                  the long measurement runs (files tagged validate; out of CI)
#   make bench                                     generator efficiency report
#   make bench-clients                             what each client I/O pattern costs refserver, measured server-side
#   make load                                      refserver + one short `ceiling load`
#   make node-generator                            the Node generator's pinned dependencies (docs/generators.md)
#   make release-dry-run                           the archives and SHA256SUMS a v* tag would release, into dist/

SHELL   := /bin/bash
GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

# Sweep knobs: exported so `ceiling sweep` reads them (flags override).
export SRV_CPUSET LT_CPUSET BATCH_LADDER RECORD_SIZE HEADLINE_BATCH REPS DURATION WARMUP SCENARIO OUT QUICK GENERATOR TARGET ALLOW_OVERLAP ALLOW_LONG HEADROOM_PROBE KEEP_WORK_DIR PROFILE_DIR OBJECTIVE DROP SCENARIO_FILE SOURCE_ADDRS SEARCH CALIBRATE CALIBRATION AGENTS AGENTS_LISTEN AGENTS_TOKEN AGENTS_TOKEN_FILE AGENTS_JOIN_TIMEOUT AGENTS_NETNS AGENTS_PORT_RANGE SRV_USER AGENTS_TLS_CERT AGENTS_TLS_KEY AGENTS_TLS_CA FAULT IO_PATTERN CONN_RAMP CONN_INTERVAL SERVER_CONN_BYTES
# Two-arm sweep knobs (docs/compare.md).
export BASE_TARGET COMPARE_REPS ALPHA COMPARE_STOP COMPARE_SCOPE COMPARE_PREFER COMPARE_BUDGET FAIL_ON COMPARE_MODE DUET_CPUSETS COMPARE_DURATION COMPARE_WARMUP
# CONNS_LADDER_<batch> (from the command line or the environment) reach
# `ceiling sweep` through the environment as well, never pasted into a
# shell command line, where a quote in a value would end the quoting and
# run the rest as a command. (A bare `export` with an empty list would
# export every variable, hence one export per name.)
$(foreach v,$(filter CONNS_LADDER_%,$(.VARIABLES)),$(eval export $(v)))

.PHONY: all build test e2e check validate vet lint bench bench-clients load ceiling ceiling-quick ceiling-compare ceiling-connections node-generator release-dry-run clean

all: build

# bin/nats-server: the broker of benchmark/targets/nats.json, a tool
# dependency in go.mod (built from the module cache, no separate install).
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...
	$(GO) build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2

# Both builds of the tests: the unit lane's and the tagged lanes'.
vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e,validate ./...

lint:
	$(GO) tool actionlint

# The unit lane: every test that needs no real server process and no
# quiet CPU. Packages run in parallel and in a shuffled order; a test here
# that fails on a busy machine is a bug in the test (docs/ARCHITECTURE.md,
# "Testing").
test: vet lint
	$(GO) test -race -shuffle=on -count=1 -timeout 15m ./...

# The end-to-end lane: the tests of files tagged `//go:build e2e`, one
# package at a time (they pin servers and generators to this machine's
# CPUs and judge contention on them: two packages side by side would be
# that contention).
e2e:
	bash .ci/lane e2e

# Both lanes, as CI runs them.
check: test e2e

# The measurement runs (`//go:build validate`): an agent's CPU quota
# whose premise is this machine's speed. Out of CI.
validate:
	LANE_TAGS=e2e,validate LANE_TIMEOUT=120m bash .ci/lane validate -v

bench: build
	$(GO) run ./benchmark/efficiency

bench-clients: build
	$(GO) run ./benchmark/clientcost

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

# The connection-scale sweep: a ladder of held connections up to 100,000
# (CONNS_LADDER_1 to change it), each sending one message every
# CONN_INTERVAL; refused before anything boots when this machine's limits
# cannot hold its top rung (docs/sweep.md, "Limits that cap a ladder").
ceiling-connections: build
	SCENARIO=connections $(BIN)/ceiling sweep

ceiling-compare: build
	@test -n "$$BASE_TARGET" || { echo "make ceiling-compare: set BASE_TARGET=FILE, the base arm's target file (TARGET is the head's)" >&2; exit 2; }
	@$(BIN)/ceiling sweep || { rc=$$?; echo "make ceiling-compare: ceiling sweep exited $$rc (1: no comparison to publish, or FAIL_ON's verdict; 2: bad input); make reports any failure as 2, so run bin/ceiling sweep for the status itself" >&2; exit $$rc; }

# The second generator (GENERATOR="node benchmark/generators/node/gen.js"):
# ws and hdr-histogram-js at the versions in its package-lock.json, into its
# git-ignored node_modules. Its tests skip without them (fail under CI=true).
node-generator:
	npm ci --prefix benchmark/generators/node --ignore-scripts --no-audit --no-fund --loglevel=error

clean:
	rm -rf $(BIN)
