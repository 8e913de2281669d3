# ceiling: find the throughput ceiling of a WebSocket server, honestly.
#
#   make ceiling                                   sweep against refserver, sets picked for this machine
#   make ceiling SRV_CPUSET=1,2,3 LT_CPUSET=0      exactly those sets (a 4-core runner)
#   make ceiling-quick                             a small ladder in about a minute
#   make ceiling-compare BASE_TARGET=FILE [TARGET=FILE]  base and head swept in one run and compared (docs/compare.md)
#   make install                                   bin/ceiling into BINDIR (default: go env GOBIN, else GOPATH/bin), for your own repository
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
#   make screenshots                               docs/report.md's pictures of the site, from Chromium, into docs/images/

SHELL   := /bin/bash
GO      ?= go
BIN     := bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
# The full commit: `ceiling init` pins the action to it when the build
# stamped no VCS information (-buildvcs=false, common in CI images), and a
# pin must be the whole SHA (VERSION's is short).
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
BINDIR  ?= $(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin)

# Sweep knobs: exported so `ceiling sweep` reads them (flags override).
export SRV_CPUSET LT_CPUSET BATCH_LADDER RECORD_SIZE HEADLINE_BATCH REPS DURATION WARMUP SCENARIO OUT QUICK GENERATOR TARGET ALLOW_OVERLAP ALLOW_LONG HEADROOM_PROBE KEEP_WORK_DIR PROFILE_DIR OBJECTIVE DROP SCENARIO_FILE SOURCE_ADDRS SEARCH CALIBRATE CALIBRATION AGENTS AGENTS_LISTEN AGENTS_TOKEN AGENTS_TOKEN_FILE AGENTS_JOIN_TIMEOUT AGENTS_NETNS AGENTS_PORT_RANGE SRV_USER AGENTS_TLS_CERT AGENTS_TLS_KEY AGENTS_TLS_CA FAULT IO_PATTERN CONN_RAMP CONN_INTERVAL SERVER_CONN_BYTES
# Two-arm sweep knobs (docs/compare.md).
export BASE_TARGET COMPARE_REPS ALPHA COMPARE_STOP COMPARE_SCOPE COMPARE_PREFER COMPARE_BUDGET FAIL_ON COMPARE_MODE COMPARE_PROFILE DUET_CPUSETS COMPARE_DURATION COMPARE_WARMUP COMPARE_ARMS COMPARE_REBOOT_EVERY SERVER_COSTS
# CONNS_LADDER_<batch> (from the command line or the environment) reach
# `ceiling sweep` through the environment as well, never pasted into a
# shell command line, where a quote in a value would end the quoting and
# run the rest as a command. (A bare `export` with an empty list would
# export every variable, hence one export per name.)
$(foreach v,$(filter CONNS_LADDER_%,$(.VARIABLES)),$(eval export $(v)))

.PHONY: all build install screenshots test e2e check validate vet lint bench bench-clients load ceiling ceiling-quick ceiling-compare ceiling-connections node-generator release-dry-run clean

all: build

# bin/nats-server: the broker of benchmark/targets/nats.json, a tool
# dependency in go.mod (built from the module cache, no separate install).
# The echoed build line is short (the flags' values said after it): a
# 40-character commit made it run past 100 columns.
build:
	@echo '$(GO) build -ldflags "$$(LDFLAGS)" -o $(BIN)/ ./cmd/...   # version $(VERSION)'
	@$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...
	$(GO) build -o $(BIN)/nats-server github.com/nats-io/nats-server/v2

# ceiling into your PATH, from this clone (no module proxy for ceiling
# itself; docs/your-server.md): then `ceiling init` and `ceiling compare`
# run in your own repository.
install:
	@echo '$(GO) build -ldflags "$$(LDFLAGS)" -o $(BINDIR)/ceiling ./cmd/ceiling'
	@mkdir -p "$(BINDIR)"
	@$(GO) build -ldflags "$(LDFLAGS)" -o "$(BINDIR)/ceiling" ./cmd/ceiling
	@echo "installed $(BINDIR)/ceiling ($(VERSION)); ceiling version prints it"

# Both builds of the tests: the unit lane's and the tagged lanes'.
vet:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); test -z "$$out" || { echo "gofmt: not formatted: $$out" >&2; exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags e2e,validate ./...

lint:
	$(GO) tool actionlint

# The unit lane: every test that needs no real server process and no
# quiet CPU. Packages run in parallel and in a shuffled order; a test here
# that fails on a busy machine is a bug in the test (docs/ARCHITECTURE.md,
# "Testing"). Four packages at a time, not one per CPU: the loopback
# tests spend most of their time in windows and drains, and a package
# waiting holds a slot the CPU-bound ones could use.
test: vet lint
	$(GO) test -race -shuffle=on -count=1 -timeout 15m -p 4 ./...

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

# The site as Chromium lays it out at 1280 and 390 px (docs/report.md,
# "Screenshots"): publish/site's TestScreenshots, which runs only when
# given a directory.
screenshots:
	$(GO) test ./publish/site -run '^TestScreenshots$$' -count=1 -screenshots "$(CURDIR)/docs/images"

load: build
	@set -e; \
	$(BIN)/refserver --addr 127.0.0.1:6001 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT; \
	for i in $$(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/6001) 2>/dev/null && break; sleep 0.1; done; \
	$(BIN)/ceiling load --scenario echo --url ws://127.0.0.1:6001/echo --connections 16 --batch 10 --duration 5s --warmup 1s

# The sweep's own exit status said in words after a failure: make
# reports any failed recipe as 2, which is the sweep's "bad input".
SWEEP_STATUS = || { rc=$$?; \
	echo "make $@: ceiling sweep exited $$rc (1: the result is written but not publishable, or" >&2; \
	echo "  FAIL_ON's verdict; 2: bad input); make reports any failure as 2" >&2; exit $$rc; }

ceiling: build
	@echo '$(BIN)/ceiling sweep'
	@$(BIN)/ceiling sweep $(SWEEP_STATUS)

ceiling-quick: build
	@echo 'QUICK=1 $(BIN)/ceiling sweep'
	@QUICK=1 $(BIN)/ceiling sweep $(SWEEP_STATUS)

# The connection-scale sweep: a ladder of held connections up to 100,000
# (CONNS_LADDER_1 to change it), each sending one message every
# CONN_INTERVAL; refused before anything boots when this machine's limits
# cannot hold its top rung (docs/sweep.md, "Limits that cap a ladder").
ceiling-connections: build
	SCENARIO=connections $(BIN)/ceiling sweep

ceiling-compare: build
	@test -n "$$BASE_TARGET" || { echo "make ceiling-compare: set BASE_TARGET=FILE, the base arm's target file (TARGET is the head's)" >&2; exit 2; }
	@$(BIN)/ceiling sweep $(SWEEP_STATUS)

# The second generator (GENERATOR="node benchmark/generators/node/gen.js"):
# ws and hdr-histogram-js at the versions in its package-lock.json, into its
# git-ignored node_modules. Its tests skip without them (fail under CI=true).
node-generator:
	npm ci --prefix benchmark/generators/node --ignore-scripts --no-audit --no-fund --loglevel=error

clean:
	rm -rf $(BIN)
