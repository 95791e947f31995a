# The workshop's commands. The README's first command is `make workshop`, its
# second `make test`. Everything runs without Docker; DynamoDB Local and
# ElasticMQ (SQS) are started on 127.0.0.1 by `queuekit servers`, shared by
# every run that uses them and stopped after the last (ports DYNAMODB_PORT and
# SQS_PORT, default 8000 and 9324 for the workshop; the tests use 8001 and 9325
# unless those are set).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

STATICCHECK_VERSION := v0.8.2
STATICCHECK := go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
PY := .venv/bin/python
# The notebooks the browser test opens (paths under notebooks/): every one
# that draws charts or tables. Each must render its tables with no math typeset,
# every output table cell showing exactly its source text;
# those with cells tagged "chart" must also draw at least one chart.
# The notebooks test-browser runs with Run All in the browser (the rest: as
# test-notebooks executed them).
BROWSER_LIVE ?= 00-welcome.ipynb 04-simulation.ipynb
EXECUTED := tests/artifacts/executed
NOTEBOOK ?= 00-welcome.ipynb 01-schema-design.ipynb 02-query-vs-scan.ipynb 03-queueing-parameters.ipynb 04-simulation.ipynb \
	05-run-the-night.ipynb 06-timers-ttl-streams.ipynb 07-fan-out-with-sqs.ipynb 08-capacity-and-cost.ipynb 09-when-ml-helps.ipynb \
	10-a-fleet-for-100-million-jobs.ipynb
# Extra arguments for tests/notebooks/run_notebooks.py, e.g. NOTEBOOK_ARGS="-v --runs 2".
NOTEBOOK_ARGS ?=
# How many notebooks test-notebooks runs at a time (after 00), each in a kernel
# of its own, and how many notebooks' exercises it checks at a time: most of a
# notebook's time is spent waiting (leases, timers, SQS), so two at a time on
# CI's 2 cores (docs/tests.md).
NOTEBOOK_JOBS ?= 2
# Shell scripts this repository lints.
SHELL_SCRIPTS := scripts/env.sh .ci/run \
	scripts/progress.sh scripts/budgets.sh \
	scripts/test-stages.sh tests/lib/check.sh tests/lib/dockerd.sh tests/security/loopback.sh \
	tests/runtime/lint-shell.sh \
	scripts/lab-entrypoint.sh tests/compose/run.sh tests/compose/standins.sh tests/compose/compose-plugin.sh \
	tests/compose/standins/elasticmq-native-server scripts/room.sh scripts/room-server.sh tests/room/run.sh \
	tests/offline/run.sh
# The tests' servers: their own ports, so a test run never shares a workshop's
# in-memory tables (set DYNAMODB_PORT / SQS_PORT to choose).
TEST_DYNAMODB_PORT := $(or $(DYNAMODB_PORT),8001)
TEST_SQS_PORT := $(or $(SQS_PORT),9325)
# `queuekit servers with`: start or join them, run the command with
# AWS_ENDPOINT_URL_DYNAMODB/_SQS set, leave them; SERVERS=dynamodb for one.
# The targets using it depend on launcher, which builds $(LAUNCHER) (defined
# below, hence = rather than :=).
WITH_TEST_SERVERS = DYNAMODB_PORT=$(TEST_DYNAMODB_PORT) SQS_PORT=$(TEST_SQS_PORT) $(LAUNCHER) servers with --
# The lease tests run again under -race in test-go: those where one process
# holds leases in many goroutines (slots, heartbeats, the reaper, the
# coordinator), kept to a few so that CI time stays reasonable.
# (Not the ...MatchesTheSimulator tests: their start-time tolerances are not
# meant for a binary slowed by -race.)
RACE_LEASE_TESTS := TestLostRepliesPerWriteKind|TestSkewBoundTakeNight|TestModelTwoHoldersOneJob|TestModelLostReplies|TestFailingJobIsDeadLettered|TestDynamoDBOutageMidRunKeepsTheInvariants
# What `make test` runs after lint and setup, with the test servers up, in order.
TEST_STAGES := test-go test-deploy test-notebooks test-browser test-security test-runtime

.PHONY: help launcher dynamodb-stop sqs-stop servers-status workshop setup prefetch test-offline cross-compile cli-doc dynamodb sqs lint lint-shell test test-go test-deploy test-notebooks test-restart check-notebooks test-browser \
	test-security test-runtime test-exercises test-compose room test-room room-capacity readme-shot notebooks browser security browser-deps bench bench-cells bench-dynamodb bench-fleet bench-tiers bench-limits bench-limits-pin bench-sqs clean \
	reset-notebooks

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

# The launcher is `queuekit workshop` (queuekit/cmd/queuekit/workshop.go),
# built into .cache/bin/ and exec'd, so make's only child is the launcher:
# the TERM make forwards when it alone is signalled (`kill -TERM <pid of
# make>`) reaches it, and it stops JupyterLab and leaves the servers. Ctrl-C,
# TERM and HUP are how the workshop ends: with WORKSHOP_SIGNAL_STATUS=0 it
# exits 0 after saying which signal stopped it, so make prints no error line.
# The build prints a line every 5 s while it runs (minutes on a cold Go cache).
# Its step lines count seconds from make's start (PROGRESS_START), the build included.
LAUNCHER := .cache/bin/queuekit
LAUNCH_T0 := $(shell date +%s)
define build_launcher
@mkdir -p .cache/bin; \
  ( while sleep 5 && kill -0 $$$$ 2>/dev/null; do echo "$(1): [$$(($$(date +%s) - $(LAUNCH_T0))) s] still building the launcher (go build ./queuekit/cmd/queuekit)" >&2; done ) & tick=$$!; \
  s=0; go build -o $(LAUNCHER) ./queuekit/cmd/queuekit || s=$$?; kill $$tick 2>/dev/null || true; exit $$s
endef

workshop: ## start the workshop: setup, DynamoDB Local + ElasticMQ, seed, JupyterLab on 127.0.0.1 with notebook 00 (Ctrl-C stops)
	$(call build_launcher,workshop)
	@PROGRESS_START=$(LAUNCH_T0) WORKSHOP_SIGNAL_STATUS=0 exec $(LAUNCHER) workshop

setup: ## install the venv, GoNB, gopls, the echarts asset and warm the build cache (quick when done)
	$(call build_launcher,setup)
	@PROGRESS_START=$(LAUNCH_T0) exec $(LAUNCHER) setup

prefetch: ## online, before a room with no network: setup, both servers' jars, every Go module, the Python wheels, the Go build cache (then make workshop runs offline)
	$(call build_launcher,prefetch)
	@PROGRESS_START=$(LAUNCH_T0) exec $(LAUNCHER) prefetch

# Not in TEST_STAGES (CI time): run it after make prefetch, as root.
test-offline: ## as root, after make prefetch: with the network cut (unshare -n), make workshop reaches its URL (setup, both servers, JupyterLab), then notebooks 00-04's first and a middle cell in the real kernel
	tests/offline/run.sh

launcher: ## build queuekit into .cache/bin (the workshop's launcher and servers' supervisor; the targets below build it)
	$(call build_launcher,launcher)

dynamodb: launcher ## start DynamoDB Local in the background, or join it (stop: make dynamodb-stop)
	@$(LAUNCHER) servers start dynamodb

dynamodb-stop: launcher ## leave DynamoDB Local (make dynamodb's start); it stops when no other run uses it
	@$(LAUNCHER) servers stop dynamodb

sqs: launcher ## listen for SQS in the background; ElasticMQ starts at the first request, stops when idle with no queue (stop: make sqs-stop)
	@$(LAUNCHER) servers start sqs

sqs-stop: launcher ## leave the SQS server (make sqs's start); it stops when no other run uses it
	@$(LAUNCHER) servers stop sqs

servers-status: launcher ## whether DynamoDB Local, the SQS server and ElasticMQ run, and who uses them
	@$(LAUNCHER) servers status

# The platforms the launcher is built for (.ci/run builds them all; only
# linux/amd64 is run here: docs/running.md says what was not).
CROSS_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
cross-compile: ## build queuekit (the launcher) for $(CROSS_PLATFORMS): no Linux-only call outside a file with a build tag
	@for p in $(CROSS_PLATFORMS); do \
	  GOOS=$${p%/*} GOARCH=$${p#*/} go build -o /dev/null ./queuekit/cmd/queuekit || { echo "cross-compile: $$p failed (above)"; exit 1; }; \
	  echo "cross-compile: $$p ok"; done

cli-doc: ## rewrite docs/cli.md from the commands' own help (a Go test fails when the two differ)
	go test ./queuekit/cmd/queuekit -run TestCLIDocMatchesTheHelp -count=1 -update-cli-doc

reset-notebooks: ## instructors: fresh copies in workspace/ (the old ones go to workspace/.previous/)
	go run ./queuekit/cmd/queuekit workspace reset

lint: lint-shell ## shellcheck (it must be installed: lint fails without it), then gofmt, go vet, staticcheck (pinned) on both Go modules
	@files="$$(git ls-files -co --exclude-standard -- '*.go')"; \
	  bad="$$(gofmt -l $$files)"; \
	  if [[ -n "$$bad" ]]; then echo "gofmt -l lists files that need gofmt -w:"; echo "$$bad"; exit 1; fi; \
	  echo "gofmt: clean"
	go vet ./...
	cd deploy && go vet ./...
	$(STATICCHECK) ./...
	cd deploy && $(STATICCHECK) ./...

# A check that cannot run fails: no shellcheck, no lint.
lint-shell: ## shellcheck on every script (fails when shellcheck is not installed)
	@command -v shellcheck >/dev/null || { echo "lint: shellcheck is not installed, so the scripts cannot be checked: apt-get install shellcheck (Debian/Ubuntu) or brew install shellcheck, then rerun" >&2; exit 1; }
	shellcheck $(SHELL_SCRIPTS)
	@echo "shellcheck: clean"

test: ## everything: lint, setup, then $(TEST_STAGES); a summary line per stage and a verdict
	@DYNAMODB_PORT=$(TEST_DYNAMODB_PORT) SQS_PORT=$(TEST_SQS_PORT) MAKE="$(MAKE)" scripts/test-stages.sh $(TEST_STAGES)

# go test's event stream (go test -json) printed as plain go test output,
# with a summary line counted from the events (queuekit/internal/testjson;
# scripts/test-stages.sh adds up a stage's summary lines). Under pipefail, so
# go test's own exit status counts too.
TESTJSON := go run ./queuekit/internal/testjson

# GO_TEST_P packages at a time, GO_TEST_PARALLEL tests at a time in each
# (those that call t.Parallel: the integration tests that own their tables,
# queues and processes, and spend most of their time waiting on leases,
# timeouts and the servers). 4 and 4: test-go in about a third of the time of
# go test's defaults (2 and 2) on CI's 2 cores, the machine still below full
# load (docs/tests.md). -count=1: the integration tests' results depend on
# the servers, which go test's cache cannot see, so they are never cached.
GO_TEST_P ?= 4
GO_TEST_PARALLEL ?= 4
GO_TEST_FLAGS = -count=1 -p $(GO_TEST_P) -parallel $(GO_TEST_PARALLEL)

# The tests that measure request rates, units and throttles through the
# limits layer need the machine to make the load they measure (64 workers'
# looks at the shards, a pool's ceiling), so they run after the others, one
# package at a time, not beside them: beside them with two busy loops on the
# 2 cores, the one tier made 6.8 looks a second where it needs about 128 to
# throttle; alone under the same loops, 16.1, and it throttled.
RATE_TESTS := TestOneTierThrottlesOnTheLimitsLayerWhereTheDispatcherTierDoesNot|TestOneTierControlPlaneModelAgainstRealWorkers|TestTwoTierControlPlaneAtItsTrueSizeStaysWithinTheModel|TestControlPlanesOneTierThrottlesTheDispatchersDoNot|TestRunFleetSweep|TestRunPeakStart|TestRunPoolCeiling|TestWarmFleetWrongAndRight
RATE_PKGS := ./queuekit/fleetplan/ ./queuekit/lab/fleetlab/ ./queuekit/lab/leaselab/ ./queuekit/lab/limitslab/
# Tests whose bound holds on a quiet machine only run with them, alone:
# the dispatchers' slow rejoin asserts that no shard lease of 1 s is lost,
# and beside the parallel run (load 4 and more on 2 cores) 1 to 8 were;
# slow renewals allow 5 shard leases lost (2 under four busy loops a core,
# 4 and 7 rejoins in a cold CI's parallel run); the takeover bound under
# churn held under four busy loops a core (at most 7.2 s of 14.75) and not
# in a cold CI's parallel run (the kill storm: median 14.1 s, at most 20.5)
# (issue 45: bounds on a busy machine).
QUIET_TESTS := TestSlowRejoinOfTheDispatchersLosesNoJobLease|TestSlowRenewalsDoNotChurnTheShards|TestTakeoverIsBoundedWhileShardsChangeHands
QUIET_PKGS := ./queuekit/fleet/dispatch/
SERIAL_TESTS := $(RATE_TESTS)|$(QUIET_TESTS)

test-go: ## go test -short ./... (the runtime tests are test-runtime's; the rate tests after the rest, alone), then -race over the packages that hold leases (expects AWS_ENDPOINT_URL_DYNAMODB and _SQS, as `make test` sets them)
	go test -json -short $(GO_TEST_FLAGS) -timeout 30m -skip '^($(SERIAL_TESTS))$$' ./... | $(TESTJSON)
	go test -json -short -count=1 -p 1 -timeout 15m -run '^($(SERIAL_TESTS))$$' $(RATE_PKGS) $(QUIET_PKGS) | $(TESTJSON)
	go test -json -race $(GO_TEST_FLAGS) -timeout 15m ./queuekit/fence/ | $(TESTJSON)
	go test -json -race $(GO_TEST_FLAGS) -timeout 15m ./queuekit/lease/ -run '$(RACE_LEASE_TESTS)' | $(TESTJSON)
	go test -json -race $(GO_TEST_FLAGS) -timeout 10m ./queuekit/fleet/ -run 'Example' | $(TESTJSON)
	go test -json -race $(GO_TEST_FLAGS) -timeout 10m ./queuekit/fleetplan/ -run 'TestControlPlaneCost' | $(TESTJSON)

test-deploy: ## parse docker-compose.yml and the Dockerfile with real parsers and check them
	go test -C deploy -json ./... | $(TESTJSON)

test-notebooks: check-notebooks ## execute every notebooks/NN-*.ipynb in the GoNB kernel, then a middle cell of each after Kernel > Restart, offline, then every exercise fed a wrong and a right answer (expects DynamoDB and SQS)
	rm -rf $(EXECUTED)
	$(PY) tests/notebooks/run_notebooks.py --again --jobs $(NOTEBOOK_JOBS) --save-dir $(EXECUTED) $(NOTEBOOK_ARGS)
	$(PY) tests/notebooks/restart_cells.py
	$(PY) tests/notebooks/exercise_checks.py --jobs $(NOTEBOOK_JOBS)

test-exercises: launcher ## every exercise's self-checks fed a wrong and a right answer in the real kernel, offline (tests/notebooks/exercises.py; own servers)
	$(WITH_TEST_SERVERS) $(PY) tests/notebooks/exercise_checks.py

test-restart: launcher ## after Kernel > Restart, with GOPROXY=off: a middle cell of every notebook runs, a dependent cell fails only on the names its needs line lists (own servers)
	$(WITH_TEST_SERVERS) $(PY) tests/notebooks/restart_cells.py

check-notebooks: ## the notebooks' sources: ≤ 25 lines of code a cell, no cell wiring the module (the kernel's go.work does), a needs line naming the cell on dependent cells, no typed measured figures, ≤ 150 words a Markdown cell (tables' cells count, fenced code does not)
	python3 tests/notebooks/test_check_cells.py
	python3 tests/notebooks/check_cells.py

# test-browser runs $(BROWSER_LIVE) with Run All in the browser; every other
# notebook of $(NOTEBOOK) that test-notebooks executed since it last changed
# ($(EXECUTED), signed with jupyter trust) is opened as executed and checked
# the same way, without running it a third time (make browser alone: all live).
# One JupyterLab and browser for the live ones, one for the executed ones
# (lab.test.mjs: a test and a workspace per notebook); a notebook with a cell
# tagged chart must draw one.
test-browser: ## headless Chromium: JupyterLab as first seen (ui.test.mjs), then $(NOTEBOOK), Run All or as the headless run executed it: charts draw, tables render, no math
	source scripts/env.sh && cd tests/browser && fail=0; node --test --test-reporter=spec ui.test.mjs || fail=1; \
	  if [ -d ../../$(EXECUTED) ] && [ -f ../../notebooks/assets/echarts.min.js ]; then \
	    mkdir -p ../../$(EXECUTED)/assets && cp ../../notebooks/assets/echarts.min.js ../../$(EXECUTED)/assets/ || fail=1; fi; \
	  live=""; done_nbs=""; \
	  for nb in $(NOTEBOOK); do \
	  done_nb="../../$(EXECUTED)/$$nb"; \
	  case " $(BROWSER_LIVE) " in *" $$nb "*) done_nb="";; esac; \
	  if [ -n "$$done_nb" ] && [ "$$done_nb" -nt "../../notebooks/$$nb" ] && [ -f ../../$(EXECUTED)/assets/echarts.min.js ]; then \
	    jupyter trust "$$done_nb" >/dev/null && done_nbs="$$done_nbs $$nb" || fail=1; \
	  else live="$$live $$nb"; fi; done; \
	  if [ -n "$$live" ]; then NOTEBOOK="$$live" node --test --test-reporter=spec lab.test.mjs || fail=1; fi; \
	  if [ -n "$$done_nbs" ]; then RENDERED=1 NOTEBOOK_ROOT="../../$(EXECUTED)" NOTEBOOK="$$done_nbs" \
	    node --test --test-reporter=spec lab.test.mjs || fail=1; fi; \
	  exit $$fail

test-security: ## servers on 127.0.0.1 only, unreachable from a network namespace, no CORS (expects servers)
	tests/security/loopback.sh

test-runtime: ## servers shared by two runs and stopped after the last (also when killed), make workshop under TERM, Ctrl-C and HUP, nothing in $HOME, no kernel process left (Go tests running the real launcher), lint fails without shellcheck (own servers, free ports)
	go test -json -count=1 -timeout 10m ./queuekit/internal/servers/ | $(TESTJSON)
	go test -json -count=1 -timeout 30m -run '^TestRuntime' ./queuekit/cmd/queuekit/ | $(TESTJSON)
	tests/runtime/lint-shell.sh

# The room: JupyterHub with one container per participant (docs/room.md).
# Ctrl-C/TERM stop it; as for workshop, those count as a normal stop.
room: ## the workshop room: JupyterHub on ROOM_PORT (8900), a container per participant, room code sign-in (needs Docker; Ctrl-C stops)
	@ROOM_SIGNAL_STATUS=0 exec scripts/room.sh

test-room: ## as root on Debian (CI: .ci/run after test-compose): the room for real, own dockerd, 3 participants, isolation attacks, restart, stop
	python3 tests/room/test_freecores.py
	tests/room/run.sh

# The room's capacity (docs/room.md "How big a host"): measured through the
# real room, then the model (queuekit/roomcap) fed what this run measured.
# ROOM_CAPACITY_NS, _SOLO, _SWEEP choose the steps (tests/room/capacity.py).
room-capacity: ## as root on Debian: one participant's demand and N = 1 2 4 6 at once through the real room (own dockerd), the queueing model checked against it, the host for 30 and 60 (prints the table, writes docs/room.md)
	python3 tests/room/test_freecores.py
	ROOM_TEST_SCRIPT=tests/room/capacity.py tests/room/run.sh
	go run ./queuekit/cmd/roomcap -in tests/artifacts/room/capacity.json -docs docs/room.md

test-compose: ## as root on Debian (CI: .ci/run after make test): docker compose up --build for real, own dockerd, stand-in images, every check, down -v
	tests/compose/run.sh

notebooks: setup launcher ## execute every notebook headless, with the servers started for the run
	$(WITH_TEST_SERVERS) $(MAKE) test-notebooks

browser: setup browser-deps launcher ## the browser test alone, with the servers started for the run
	$(WITH_TEST_SERVERS) $(MAKE) test-browser

security: launcher ## the security test alone, with the servers started for the run
	$(WITH_TEST_SERVERS) $(MAKE) test-security

# The README's picture: a notebook with a chart and a table. Rerun it when that
# notebook changes; queuekit's TestReadmeScreenshotShowsTheCurrentNotebook fails
# until then (it compares the notebook's hash with docs/screenshot.png.sha256).
README_SHOT_NOTEBOOK ?= 04-simulation.ipynb
readme-shot: setup browser-deps launcher ## the README's screenshot (docs/screenshot.png) of $(README_SHOT_NOTEBOOK), taken by the browser test
	$(WITH_TEST_SERVERS) bash -c 'source scripts/env.sh && go run ./queuekit/cmd/queuekit seed --sample && cd tests/browser && \
	  NOTEBOOK=$(README_SHOT_NOTEBOOK) README_SHOT=docs/screenshot.png node --test --test-reporter=spec lab.test.mjs'

browser-deps: tests/browser/node_modules/.package-lock.json

tests/browser/node_modules/.package-lock.json: tests/browser/package-lock.json
	npm_config_cache="$(CURDIR)/.cache/npm" npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
	@touch $@

bench: setup launcher ## simulator benchmarks, queuekit vs Ciw and plain Python, notebooks twice (cold-ish and warm)
	go test -run '^$$' -bench . -benchmem -cpu 1 ./queuekit/sim
	go test -run '^$$' -bench . -benchmem ./queuekit/montecarlo
	$(PY) -m pip install -q -r bench/requirements.txt
	$(PY) bench/compare_python.py
	$(WITH_TEST_SERVERS) $(PY) tests/notebooks/run_notebooks.py --runs 2

bench-dynamodb: launcher ## seeding 100,000 items (minutes); claims/s and lost claims of the executor with 1, 2, 4, 8 workers
	$(WITH_TEST_SERVERS) go test -run '^$$' -bench Seed100k -benchtime 1x -timeout 30m ./queuekit/catalog/
	$(WITH_TEST_SERVERS) go test -run '^$$' -bench Claims -benchtime 400x ./queuekit/lease/

bench-limits: launcher ## the limits layer's overhead on DynamoDB Local's throughput, interleaved with Local directly (about 1 min)
	SERVERS=dynamodb $(WITH_TEST_SERVERS) go test -run '^$$' -bench 'Overhead$$|OverheadPerCall' -benchtime 1x -timeout 20m ./queuekit/limits/

bench-limits-pin: launcher ## bench-limits with DynamoDB Local pinned to one CPU, the client and the layer to another (a laptop's case; needs taskset)
	SERVERS=dynamodb $(WITH_TEST_SERVERS) go test -run '^$$' -bench 'Overhead$$|OverheadPerCall' -benchtime 1x -timeout 20m ./queuekit/limits/ \
	  -args -pin -bench-workers $${BENCH_WORKERS:-8}

bench-fleet: launcher ## the fleet beside the night executor, then the one tier beside the two tiers, at 2 and 8 workers, 20,000 jobs per fleet run, 3 interleaved rounds (about 40 min)
	$(WITH_TEST_SERVERS) go test -run '^$$' -bench 'Compare|Tiers' -benchtime 1x -timeout 120m ./queuekit/claimrate/ \
	  -args -fleet-jobs $${FLEET_JOBS:-20000} -fleet-workers $${FLEET_WORKERS:-2,8} -rounds $${ROUNDS:-3}

bench-tiers: launcher ## the one-tier fleet beside the two tiers (dispatchers, SQS, executors) at 2 and 8 workers, side by side (FLEET_JOBS, default 2,000)
	$(WITH_TEST_SERVERS) go test -run '^$$' -bench Tiers -benchtime 1x -timeout 60m ./queuekit/claimrate/ \
	  -args -fleet-jobs $${FLEET_JOBS:-2000} -fleet-workers $${FLEET_WORKERS:-2,8} -rounds $${ROUNDS:-3} -dispatchers $${DISPATCHERS:-2}

bench-sqs: launcher ## SQS sends and receive+delete with 1, 4, 8 processors on ElasticMQ; TTL timer delay for 20 and 200 items (minutes)
	$(WITH_TEST_SERVERS) go test -run '^$$' -bench 'SendBatch|ReceiveDelete' -benchtime 10000x ./queuekit/sqsqueue/
	$(WITH_TEST_SERVERS) go test -run '^$$' -bench TimerDelay -benchtime 1x -timeout 20m ./queuekit/timers/

# BENCH_CELLS_ARGS: more arguments for bench/cells.py, e.g. "--runs 9",
# "--variants before,kernelspec,ldflags-w", "--notebooks 03,08", "--steps".
BENCH_CELLS_ARGS ?=
bench-cells: setup launcher ## CPU seconds a Go cell costs in the real kernel (trivial, typical, chart cells), before/after the kernelspec's settings, side by side (about 4 min)
	SERVERS=dynamodb $(WITH_TEST_SERVERS) bash -c 'go run ./queuekit/cmd/queuekit seed --sample >/dev/null && $(PY) bench/cells.py $(BENCH_CELLS_ARGS)'

clean: ## remove what setup and the tests made here (not Go's caches, not .cache/)
	rm -rf .venv notebooks/assets tests/artifacts tests/browser/node_modules tools/echarts/node_modules
