# selmem — build, run and test.
GO ?= go

.PHONY: all build install demo test test-deps vet bench fuzz release-check clean

# VERSION is what selmem reports (selmem version, --version, MCP
# serverInfo): the git description of the checkout, e.g. v0.4.0 on a tag.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# PREFIX empty: make install puts selmem where go install does
# ($$GOBIN, else $$GOPATH/bin). Set it (make install PREFIX=/usr/local,
# DESTDIR for staging) to install into PREFIX/bin instead.
PREFIX ?=

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/selmem ./cmd/selmem

install:
ifeq ($(PREFIX),)
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags "$(LDFLAGS)" ./cmd/selmem
	@bin="$$($(GO) env GOBIN)"; [ -n "$$bin" ] || bin="$$($(GO) env GOPATH)/bin"; \
		echo "installed $$bin/selmem ($(VERSION))"; \
		case ":$$PATH:" in *":$$bin:"*) ;; *) echo "note: $$bin is not on PATH; add it, or make install PREFIX=/usr/local";; esac
else
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/selmem ./cmd/selmem
	install -d "$(DESTDIR)$(PREFIX)/bin"
	install -m 0755 bin/selmem "$(DESTDIR)$(PREFIX)/bin/selmem"
	@echo "installed $(DESTDIR)$(PREFIX)/bin/selmem ($(VERSION))"
endif

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
		command -v ip >/dev/null 2>&1 || apt-get -q -y install iproute2 >/dev/null 2>&1 || \
			{ apt-get -q -y update >/dev/null && apt-get -q -y install iproute2 >/dev/null; }; \
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

# fuzz runs every fuzz target for FUZZTIME each (scripts/fuzz.sh finds them).
FUZZTIME ?= 30s
fuzz:
	FUZZTIME=$(FUZZTIME) scripts/fuzz.sh

# release-check validates .goreleaser.yaml, builds the snapshot archives
# into dist/ and checks that go install @version reports that version. Slow
# (six cross builds); CI does not run it.
release-check:
	scripts/release-check.sh

clean:
	rm -rf bin dist
