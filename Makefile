# selmem — build, run and test.
GO ?= go

.PHONY: all build demo test test-deps vet bench fuzz clean

all: build

build:
	$(GO) build -o bin/selmem ./cmd/selmem

# demo creates a demo workspace in $SELMEM_HOME (default ~/.local/share/selmem)
# and searches it.
demo:
	-$(GO) run ./cmd/selmem init --demo
	$(GO) run ./cmd/selmem search "retention policy"

# test sets up what the tests need where it can (Postgres' pgvector and
# Chromium, when run as root on a Debian-like machine; the pinned MCP
# Inspector CLI, and Node 22 with the pinned MCP conformance suite and
# TypeScript SDK, when npm is there), then runs every test with the race
# detector.
test: test-deps vet
	$(GO) test -race -count=1 ./...

test-deps:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		scripts/install-pgvector.sh; \
		scripts/install-chromium.sh; \
	fi
	@if command -v npm >/dev/null 2>&1; then \
		scripts/install-inspector.sh >/dev/null; \
		scripts/install-conformance.sh >/dev/null; \
	fi

vet:
	$(GO) vet ./...

# bench prints the performance figures (medians) quoted in issues.
bench:
	bench/run.sh

# fuzz runs every fuzz target for FUZZTIME each.
FUZZTIME ?= 30s
fuzz:
	$(GO) test ./memstore -run '^$$' -fuzz FuzzStore_StrReplaceInsert -fuzztime $(FUZZTIME)
	$(GO) test ./memstore/gate -run '^$$' -fuzz FuzzPath -fuzztime $(FUZZTIME)
	$(GO) test ./memstore/gate -run '^$$' -fuzz FuzzFrontMatter -fuzztime $(FUZZTIME)
	$(GO) test ./refresh/lint -run '^$$' -fuzz FuzzProgram -fuzztime $(FUZZTIME)
	$(GO) test ./refresh -run '^$$' -fuzz FuzzValueType -fuzztime $(FUZZTIME)
	$(GO) test ./refresh -run '^$$' -fuzz FuzzAppendString -fuzztime $(FUZZTIME)

clean:
	rm -rf bin
