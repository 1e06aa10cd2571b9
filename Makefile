# shepherd — see README.md.
GO ?= go
PKG := ./...

.PHONY: test build run vet fuzz engines eco-clients clean bench-modes test-ecosystem test-hostile test-big-select test-slt test-go-tpc

# The one test command (README, .ci/run): installs missing engines and the
# clients of the ecosystem suite's representative part, vets, runs every
# test with the race detector.
test: engines eco-clients vet
	$(GO) test -race -count=1 -timeout 14m $(PKG)

engines:
	./scripts/install-engines.sh

# The Python and Java clients of the ecosystem suite's representative part
# (Django, SQLAlchemy, pgjdbc), which make test runs; cached in $(ECO_DIR).
# A failed download leaves that part skipped, with the reason, not failed.
eco-clients:
	SHEPHERD_ECO_DIR=$(ECO_DIR) ./scripts/ecosystem-install.sh python java || echo "eco-clients: not installed; TestEcosystem will say so and skip"

vet:
	./scripts/check-gomod.sh
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet $(PKG)

build:
	$(GO) build -o shepherd ./cmd/shepherd

run:
	$(GO) run ./cmd/shepherd serve

# The hostile-input suite (issue 18): deep nesting at depths 20, 1,000
# and 100,000, huge statements, 10,000 statements in one message, invalid
# UTF-8 and NUL bytes, 2,000 connections, clients that never read or sit
# idle in a transaction, each with another session's SELECT 1 timed and
# the heap watched; numbers with -v. make test runs its quick part.
test-hostile: engines
	SHEPHERD_HOSTILE=1 $(GO) test -count=1 -timeout 30m -v -run '^TestHostile' ./internal/server

# A 5,000,000-row SELECT through cbs over MariaDB, PostgreSQL and
# SQLite (issue 18): every row arrives, by simple query and by a portal
# read 10,000 rows at a time, the replicas' digests agree, and the peak
# heap and RSS are printed and bounded. make test runs it with 200,000.
test-big-select: engines
	SHEPHERD_BIGSELECT_ROWS=$${SHEPHERD_BIGSELECT_ROWS:-5000000} $(GO) test -count=1 -timeout 60m -v -run '^TestBigSelectMemory$$' ./internal/server

# Short fuzz runs of the wire front and the SQL layer (not part of test).
fuzz:
	$(GO) test -run '^$$' -fuzz=FuzzFront -fuzztime=60s ./internal/pgwire
	$(GO) test -run '^$$' -fuzz=FuzzParse -fuzztime=60s ./internal/sqlan
	$(GO) test -run '^$$' -fuzz=FuzzNesting -fuzztime=60s ./internal/sqlan
	$(GO) test -run '^$$' -fuzz=FuzzDecode -fuzztime=60s ./internal/wal

# Bank-transfer throughput of serial, ss and cbs over MariaDB, PostgreSQL
# and SQLite, alternating in one run, as ratios (not part of test).
bench-modes: engines
	SHEPHERD_BENCH_SECONDS=$${SHEPHERD_BENCH_SECONDS:-15} SHEPHERD_BENCH_ROUNDS=$${SHEPHERD_BENCH_ROUNDS:-2} \
		$(GO) test -run '^$$' -bench BankModes -benchtime 1x -timeout 30m ./internal/server

clean:
	rm -rf shepherd shepherd-bench shepherd-data

# The ecosystem suite (issue 15; README, Tests): installs the clients
# (pip, npm, Maven, Go modules) into $(ECO_DIR), then runs each client's
# app against PostgreSQL 15, shepherd's embedded default and a cbs
# cluster of MariaDB + PostgreSQL + SQLite; prints the client x setup
# table. Fails on a regression against internal/ecosystem/expected.txt.
# ECO_RUN=regexp narrows the apps. go-tpc (TPC-C, up to 40 minutes a
# setup) runs only when ECO_RUN names it: make test-go-tpc.
ECO_DIR ?= $(CURDIR)/.ecosystem
ECO_TIMEOUT ?= 30m
test-ecosystem: engines
	mkdir -p $(ECO_DIR) && rm -f $(ECO_DIR)/results.txt
	SHEPHERD_ECO_DIR=$(ECO_DIR) ./scripts/ecosystem-install.sh || true
	{ SHEPHERD_ECO_DIR=$(ECO_DIR) SHEPHERD_ECOSYSTEM=all SHEPHERD_ECOSYSTEM_RUN='$(ECO_RUN)' \
		$(GO) test -count=1 -timeout $(ECO_TIMEOUT) -v -run '^TestEcosystem$$' ./internal/ecosystem; \
		echo $$? >$(ECO_DIR)/test.rc; } 2>&1 | tee $(ECO_DIR)/test.log
	@echo; cat $(ECO_DIR)/results.txt 2>/dev/null || echo "no results: see $(ECO_DIR)/test.log"
	@exit $$(cat $(ECO_DIR)/test.rc)

# The sqllogictest sample (issue 16; README, Tests): every .test file
# under SLT_DIR through shepherd (cbs over MariaDB, PostgreSQL and SQLite,
# a fresh cluster per file) and on PostgreSQL 15 alone, answers compared;
# prints the figures (also in SLT_OUT) and fails on any different answer,
# lost vote, replica taken out or refusal other than 0A000. SLT_FILES=regexp
# narrows the files (paths relative to SLT_DIR).
SLT_DIR ?= $(CURDIR)/../shared/sqllogictest
SLT_OUT ?= $(CURDIR)/slt-results.txt
test-slt: engines
	SHEPHERD_SLT_DIR=$(SLT_DIR) SHEPHERD_SLT_FILES='$(SLT_FILES)' SHEPHERD_SLT_OUT=$(SLT_OUT) \
		$(GO) test -count=1 -timeout 120m -run '^TestSQLLogic$$' ./internal/server; \
		rc=$$?; cat $(SLT_OUT) 2>/dev/null; exit $$rc

# The side-by-side benchmark of BENCHMARKS.md (not part of test): every
# mode at several client counts over throw-away MariaDB and PostgreSQL
# servers, alternating; table, JSON, CSV and plot in bench-out/. Change
# the settings with BENCH_FLAGS="...".
.PHONY: bench
BENCH_FLAGS ?= --workload tpcc --warehouses 4 --modes direct,passthrough,cbs,cbs-locking,ss,serial,bound \
	--clients 1,4,8,16,32,64 --warmup 5s --duration 15s
bench: engines
	$(GO) run ./cmd/shepherd-bench sweep --engines local --out bench-out $(BENCH_FLAGS)

# go-tpc's TPC-C (one warehouse: prepare, a 30 s run, its consistency
# check) against PostgreSQL, the embedded default and cbs over MariaDB +
# PostgreSQL + SQLite: the ecosystem suite's go-tpc app alone.
test-go-tpc:
	$(MAKE) test-ecosystem ECO_RUN='^go-tpc$$' ECO_TIMEOUT=150m
