# uhno build targets. On a fresh Debian machine run `bash scripts/setup.sh`
# first (or `make setup` where make is already installed).

# Go lives in /usr/local/go on the build machines and may not be on PATH.
export PATH := $(PATH):/usr/local/go/bin

GO ?= go
# The version `uhno doctor` and `uhno --version` print.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build test bench setup clean

## build: the CPU binary bin/uhno
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/uhno ./cmd/uhno

## test: vet and run every test, uncached
test:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

## bench: the benchmarks of the internal packages, no tests
bench:
	$(GO) test -run '^$$' -bench . ./internal/...

## setup: system packages (apt-get, as root) and Go modules
setup:
	bash scripts/setup.sh

## clean: remove build outputs
clean:
	rm -rf bin
	$(GO) clean -testcache
