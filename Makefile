# The workshop's commands. The README's first command is `make workshop`, its
# second `make test`. Everything runs without Docker; DynamoDB Local is started
# through scripts/dynamodb-local.sh (port DYNAMODB_PORT, default 8000).

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

STATICCHECK_VERSION := v0.8.2
STATICCHECK := go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
PY := .venv/bin/python
# The notebooks the browser test opens (paths under notebooks/): every one
# that draws charts.
NOTEBOOK ?= 02-query-vs-scan.ipynb 04-simulation.ipynb
# Extra arguments for tests/notebooks/run_notebooks.py, e.g. NOTEBOOK_ARGS="-v --runs 2".
NOTEBOOK_ARGS ?=
# Shell scripts this repository lints.
SHELL_SCRIPTS := scripts/setup.sh scripts/workshop.sh scripts/env.sh scripts/with-dynamodb.sh scripts/dynamodb-local.sh .ci/run

.PHONY: help workshop setup dynamodb lint test test-go test-deploy test-notebooks test-browser \
	notebooks browser browser-deps bench bench-dynamodb clean

help: ## list the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 18

workshop: ## start the workshop: setup, DynamoDB Local, seed, JupyterLab on 127.0.0.1 (Ctrl-C stops)
	scripts/workshop.sh

setup: ## install the venv, GoNB, the echarts asset and warm the build cache (quick when done)
	scripts/setup.sh

dynamodb: ## start DynamoDB Local in the background (stop: scripts/dynamodb-local.sh stop)
	scripts/dynamodb-local.sh start

lint: ## gofmt, go vet, staticcheck (pinned) on both Go modules; shellcheck
	@files="$$(git ls-files -co --exclude-standard -- '*.go')"; \
	  bad="$$(gofmt -l $$files)"; \
	  if [[ -n "$$bad" ]]; then echo "gofmt -l lists files that need gofmt -w:"; echo "$$bad"; exit 1; fi; \
	  echo "gofmt: clean"
	go vet ./...
	cd deploy && go vet ./...
	$(STATICCHECK) ./...
	cd deploy && $(STATICCHECK) ./...
	@if command -v shellcheck >/dev/null; then shellcheck $(SHELL_SCRIPTS) && echo "shellcheck: clean"; \
	  else echo "shellcheck not installed (Debian: apt-get install shellcheck); skipped"; fi

test: lint setup browser-deps ## everything: lint, Go tests, deploy files, notebooks headless, browser
	scripts/with-dynamodb.sh $(MAKE) --keep-going test-go test-deploy test-notebooks test-browser

test-go: ## go test ./... (expects AWS_ENDPOINT_URL_DYNAMODB, as `make test` sets it)
	go test ./...

test-deploy: ## parse docker-compose.yml and the Dockerfile with real parsers and check them
	cd deploy && go test ./...

test-notebooks: ## execute every notebooks/NN-*.ipynb in the GoNB kernel (expects DynamoDB)
	$(PY) tests/notebooks/run_notebooks.py --again $(NOTEBOOK_ARGS)

test-browser: ## JupyterLab in headless Chromium runs $(NOTEBOOK); ECharts must draw (expects DynamoDB)
	source scripts/env.sh && cd tests/browser && for nb in $(NOTEBOOK); do \
	  NOTEBOOK="$$nb" node --test --test-reporter=spec lab.test.mjs || exit 1; done

notebooks: setup ## execute every notebook headless, with DynamoDB Local started for the run
	scripts/with-dynamodb.sh $(MAKE) test-notebooks

browser: setup browser-deps ## the browser test alone, with DynamoDB Local started for the run
	scripts/with-dynamodb.sh $(MAKE) test-browser

browser-deps: tests/browser/node_modules/.package-lock.json

tests/browser/node_modules/.package-lock.json: tests/browser/package-lock.json
	npm_config_cache="$(CURDIR)/.cache/npm" npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error
	@touch $@

bench: setup ## simulator benchmarks, queuekit vs Ciw and plain Python, notebooks twice (cold-ish and warm)
	go test -run '^$$' -bench . -benchmem -cpu 1 ./queuekit/sim
	go test -run '^$$' -bench . -benchmem ./queuekit/montecarlo
	$(PY) -m pip install -q -r bench/requirements.txt
	$(PY) bench/compare_python.py
	scripts/with-dynamodb.sh $(PY) tests/notebooks/run_notebooks.py --runs 2

bench-dynamodb: ## seeding 100,000 items (minutes); claims/s and lost claims of the executor with 1, 2, 4, 8 workers
	scripts/with-dynamodb.sh go test -run '^$$' -bench Seed100k -benchtime 1x -timeout 30m ./queuekit/catalog/
	scripts/with-dynamodb.sh go test -run '^$$' -bench Claims -benchtime 400x ./queuekit/lease/

clean: ## remove what setup and the tests made here (not Go's caches, not .cache/)
	rm -rf .venv notebooks/assets tests/artifacts tests/browser/node_modules tools/echarts/node_modules
