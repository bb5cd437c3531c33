# distlock: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
# Exported so that test packages that need a server find it (see scripts/services.sh env).
SERVICES_ENV = eval "$$(scripts/services.sh env)"

.PHONY: demo test test-short vet fmt bench services-up services-down

## demo: the quickstart, then the fencing example (a stale write lands without a guard, is refused with one), on the in-memory driver.
demo:
	$(GO) run ./examples/quickstart
	@echo
	$(GO) run ./examples/fencing

## test: start the test servers, run every test with -race (and the allocation tests without it), stop the servers (also on failure).
test:
	@scripts/services.sh up
	@set -o pipefail; $(SERVICES_ENV); \
	  status=0; \
	  $(GO) vet -tags servers ./... || status=$$?; \
	  if [ $$status -eq 0 ]; then $(GO) test -race -count=1 -tags servers ./... || status=$$?; fi; \
	  if [ $$status -eq 0 ]; then $(GO) test -count=1 -run Allocs . || status=$$?; fi; \
	  scripts/services.sh down; \
	  exit $$status

## test-short: unit tests only, no servers needed.
test-short:
	$(GO) test -race -short ./...

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }

## bench: benchmarks with allocation counts (servers must be up for driver benchmarks).
bench:
	@$(SERVICES_ENV); $(GO) test -run '^$$' -bench . -benchmem ./...

services-up:
	scripts/services.sh up

services-down:
	scripts/services.sh down
