# Standings: common developer and CI tasks. Run `make help` for the list.

SHELL := /bin/bash
.DEFAULT_GOAL := help

GO       ?= go
ARGS     ?=
CHROMIUM ?= /usr/bin/chromium
# Passed to go test, e.g. make test TESTFLAGS='-run TestFoo -v'.
TESTFLAGS ?=
# Packages to test, e.g. make test PKGS=./ranking/...
PKGS ?= ./...
# Passed to the benchmark program, e.g. make bench BENCHFLAGS='-suite ingest -duration 2s'.
BENCHFLAGS ?=

.PHONY: help
help: ## List the targets.
	@grep -E '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | \
		awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

.PHONY: deps
deps: ## Install missing system packages (redis-server, chromium, the en_US.UTF-8 locale) and axe-core (npm).
	@.ci/deps.sh
	@.ci/axe.sh

.PHONY: generate
generate: ## Generate Go code from .templ files.
	$(GO) tool templ generate -log-level warn

.PHONY: build
build: generate ## Build bin/standings.
	$(GO) build -o bin/standings ./cmd/standings

.PHONY: run
run: generate ## Run the server; pass flags with ARGS='...'.
	$(GO) run ./cmd/standings $(ARGS)

.PHONY: test
test: deps generate lint ## Lint, then run all tests against real Redis and Chromium (what CI runs).
	STANDINGS_REQUIRE_REDIS=1 STANDINGS_CHROMIUM=$(CHROMIUM) STANDINGS_AXE=$(CURDIR)/.cache/axe/node_modules/axe-core/axe.min.js \
		$(GO) test -race -count=1 -timeout 14m $(TESTFLAGS) $(PKGS)

.PHONY: test-quick
test-quick: generate ## Run the tests without -race or installing anything; real-Redis tests skip without Redis.
	# Four packages at once: much of a package's time is waiting (timeouts,
	# outages, browsers), which the others' work fills on two cores.
	$(GO) test -p 4 -count=1 $(TESTFLAGS) $(PKGS)

.PHONY: screenshots
screenshots: deps generate ## Render docs/screenshots/*.png (every page, 390 and 1280 px, light and dark) in headless Chromium.
	STANDINGS_SCREENSHOTS=1 STANDINGS_CHROMIUM=$(CHROMIUM) $(GO) test -count=1 -run TestScreenshots ./web

.PHONY: bench
bench: deps generate ## Run the benchmark program; pass flags with BENCHFLAGS='...'.
	$(GO) run ./cmd/benchmark $(BENCHFLAGS)

.PHONY: lint
lint: ## gofmt, go vet, templ fmt, and a check that generated code is up to date.
	@.ci/lint.sh

.PHONY: clean
clean: ## Remove build output.
	rm -rf bin
