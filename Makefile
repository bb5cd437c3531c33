# distlock: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO    ?= go
# Exported so that test packages that need a server find it (see scripts/services.sh env).
SERVICES_ENV = eval "$$(scripts/services.sh env)"
# Every module of the repository, found by its go.mod (scripts/ holds build
# helpers of our servers, and tools/ pins the tools we run, not modules of
# the library). go.work lists the same set, so one go command can build and
# test them all: `make modules-check` says when the two differ.
#
# The modules whose tests take longest (a ZooKeeper and an etcd ensemble,
# members killed and hung) come first: go test starts packages in the order
# given, and the one started last sets the end of the run.
SLOWEST  := ./drivers/zookeeper ./drivers/etcd
MODULES  := $(shell find . -name go.mod -not -path './scripts/*' -not -path './tools/*' -not -path './.git/*' -printf '%h\n' | sort)
MODULES  := $(filter $(MODULES),$(SLOWEST)) $(filter-out $(SLOWEST),$(MODULES))
PACKAGES := $(addsuffix /...,$(MODULES))

# staticcheck's version is the one tools/go.mod requires. tools/ stays out of
# go.work, so its dependencies never change the versions our modules resolve.
STATICCHECK_VERSION = $(shell awk '$$1 == "honnef.co/go/tools" { print $$2 }' tools/go.mod)
STATICCHECK         = .cache/staticcheck-$(STATICCHECK_VERSION)

.PHONY: chart demo test test-short vet fmt bench services-up services-down modules-check tidy-check staticcheck

## demo: compare every driver side by side, at speed and through a fault (distlock bench: a table,
## and $(DEMO_OUT)/bench.svg and bench.json), run the fencing example, run distlock verify briefly
## on Redlock and PostgreSQL and on an unsafe Redis of its own, stop the servers (also on
## failure). On a fresh machine the
## servers built from source build in the background, at nice 19 on one CPU, while a first stage
## measures the drivers whose servers start in seconds: scripts/demo.sh has the stages.
DEMO_OUT ?= demo-output
demo:
	@GO='$(GO)' DEMO_OUT='$(DEMO_OUT)' scripts/demo.sh

## chart: redo the README's chart and figures (docs/bench.svg, docs/bench.txt, docs/bench.json):
## the demo's comparison with its faults, at 2s per measurement, on the test servers, which it
## starts and stops.
chart:
	@set -o pipefail; trap 'scripts/services.sh down' EXIT; \
	  scripts/services.sh up && $(SERVICES_ENV) && mkdir -p docs && \
	  DEMO_BENCH_DURATION=2s scripts/demo-bench.sh docs $(GO) run ./cmd/distlock | tee docs/bench.txt

## test: start the test servers while staticcheck and vet run, then run every module's tests
## with -race in one go command (and the allocation tests without it), stop the servers (also on
## failure). Each phase prints its time.
##
## TEST_P is how many packages go test runs at once. It is above the two cores of our machines on
## purpose: a package that waits for a server lock (testenv.Servers) holds a slot and no CPU, and
## most of the rest wait on servers, timeouts and faults.
TEST_P ?= 4
test: modules-check tidy-check $(STATICCHECK)
	@set -o pipefail; status=0; t0=$$SECONDS; \
	  up_log=$$(mktemp); scripts/services.sh up >$$up_log 2>&1 & up_pid=$$!; \
	  $(STATICCHECK) -tags servers $(PACKAGES) || status=$$?; \
	  echo "make test: staticcheck done at $$((SECONDS-t0))s"; \
	  if [ $$status -eq 0 ]; then $(GO) vet -tags servers $(PACKAGES) || status=$$?; fi; \
	  echo "make test: vet done at $$((SECONDS-t0))s"; \
	  wait $$up_pid || status=$$?; cat $$up_log; rm -f $$up_log; \
	  echo "make test: servers up at $$((SECONDS-t0))s"; \
	  $(SERVICES_ENV); \
	  if [ $$status -eq 0 ]; then $(GO) test -p $(TEST_P) -race -count=1 -tags servers $(PACKAGES) || status=$$?; fi; \
	  if [ $$status -eq 0 ]; then $(GO) test -count=1 -run Allocs . || status=$$?; fi; \
	  echo "make test: tests done at $$((SECONDS-t0))s"; \
	  if [ $$status -ne 0 ]; then echo "make test: failed; the clusters' logs follow"; scripts/services.sh logs; fi; \
	  scripts/services.sh down; \
	  exit $$status

## test-short: unit tests only, no servers needed.
test-short: modules-check
	$(GO) test -race -short $(PACKAGES)

vet: modules-check tidy-check
	$(GO) vet $(PACKAGES)
	@test -z "$$(gofmt -l .)" || { gofmt -l .; echo "gofmt: the files above need formatting"; exit 1; }

## modules-check: go.work uses exactly the modules that have a go.mod.
modules-check:
	@want="$$(printf '%s\n' $(MODULES) | sed 's#^\./##; s#^\.$$##' | sort)"; \
	  have="$$($(GO) list -m -f '{{.Dir}}' | sed "s#^$$PWD/\?##" | sort)"; \
	  [ "$$want" = "$$have" ] || { echo "go.work and the go.mod files differ:"; diff <(echo "$$want") <(echo "$$have"); exit 1; }

## tidy-check: go mod tidy would change no module's go.mod or go.sum (tools/ included).
tidy-check:
	@for m in $(MODULES) ./tools; do (cd $$m && GOWORK=off $(GO) mod tidy -diff >/dev/null) || { echo "go mod tidy: $$m is not tidy"; exit 1; }; done

## staticcheck: every module's packages, their tests and the files of the servers tag (no file
## excludes that tag, so this one run sees every file). Fails on any finding.
staticcheck: modules-check $(STATICCHECK)
	$(STATICCHECK) -tags servers $(PACKAGES)

# The pinned staticcheck, built from tools/ outside the workspace. A new
# version in tools/go.mod is a new file name, so it is built again.
$(STATICCHECK):
	@mkdir -p $(@D)
	cd tools && GOWORK=off $(GO) build -o ../$@ honnef.co/go/tools/cmd/staticcheck

## bench: benchmarks with allocation counts (servers must be up for driver benchmarks).
bench:
	@$(SERVICES_ENV); $(GO) test -run '^$$' -bench . -benchmem $(PACKAGES)

services-up:
	scripts/services.sh up

services-down:
	scripts/services.sh down
