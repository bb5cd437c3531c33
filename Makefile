# distlock: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
# Exported so that test packages that need a server find it (see scripts/services.sh env).
SERVICES_ENV = eval "$$(scripts/services.sh env)"
# Modules of their own (a driver whose client only its users should download;
# fault tests with toxiproxy): make test, vet, bench and test-short run them too.
MODULES = drivers/etcd faults

.PHONY: demo test test-short vet fmt bench services-up services-down

## demo: start the test servers, compare every driver side by side (distlock bench: a table, and
## $(DEMO_OUT)/bench.svg and bench.json), run the fencing example, stop the servers (also on failure).
DEMO_OUT ?= demo-output
demo:
	@set -o pipefail; \
	  trap 'scripts/services.sh down; echo; echo "demo: chart $(DEMO_OUT)/bench.svg, every figure in $(DEMO_OUT)/bench.json"' EXIT; \
	  status=0; \
	  scripts/services.sh up || status=$$?; \
	  $(SERVICES_ENV); mkdir -p $(DEMO_OUT); \
	  echo "demo: distlock bench, every driver, 1s per measurement (about 30s)"; \
	  $(GO) run ./cmd/distlock bench --duration 1s --json $(DEMO_OUT)/bench.json --svg $(DEMO_OUT)/bench.svg || status=$$?; \
	  echo; echo "demo: a paused holder's stale write, without and with fencing tokens"; \
	  $(GO) run ./examples/fencing || status=$$?; \
	  exit $$status

## test: start the test servers, run every test with -race (and the allocation tests without it), stop the servers (also on failure).
test:
	@scripts/services.sh up
	@set -o pipefail; $(SERVICES_ENV); \
	  status=0; \
	  $(GO) vet -tags servers ./... || status=$$?; \
	  if [ $$status -eq 0 ]; then $(GO) test -race -count=1 -tags servers ./... || status=$$?; fi; \
	  for m in $(MODULES); do \
	    if [ $$status -eq 0 ]; then (cd $$m && $(GO) vet -tags servers ./... && $(GO) test -race -count=1 -tags servers ./...) || status=$$?; fi; \
	  done; \
	  if [ $$status -eq 0 ]; then $(GO) test -count=1 -run Allocs . || status=$$?; fi; \
	  scripts/services.sh down; \
	  exit $$status

## test-short: unit tests only, no servers needed.
test-short:
	$(GO) test -race -short ./...
	@for m in $(MODULES); do (cd $$m && $(GO) test -race -short ./...) || exit 1; done

vet:
	$(GO) vet ./...
	@for m in $(MODULES); do (cd $$m && $(GO) vet ./...) || exit 1; done
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }

## bench: benchmarks with allocation counts (servers must be up for driver benchmarks).
bench:
	@$(SERVICES_ENV); $(GO) test -run '^$$' -bench . -benchmem ./...; \
	  for m in $(MODULES); do (cd $$m && $(GO) test -run '^$$' -bench . -benchmem ./...); done

services-up:
	scripts/services.sh up

services-down:
	scripts/services.sh down
