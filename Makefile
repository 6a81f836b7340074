# WebImage — the two commands a newcomer needs are `make demo` and `make test`.
# Both install the Debian packages they need first (`make deps`), only when missing.

SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the library needs (its six C libraries), and the tools the tests use.
DEPS_PACKAGES := libwebp-dev libpng-dev libjpeg-dev libgif-dev libcurl4-openssl-dev libsqlite3-dev zlib1g-dev pkg-config
TEST_PACKAGES := openssl webp libjpeg-turbo-progs imagemagick
# The peers `make bench` measures against, in the same run.
BENCH_PACKAGES := nginx curl libvips-tools
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
TSAN_SCRATCH := .build-tsan

.PHONY: all build deps test-deps demo test test-unit test-stress bench clean

all: build

## deps: install the Debian packages the library needs, only when missing.
deps:
	@./scripts/apt-ensure $(DEPS_PACKAGES)

## test-deps: the packages the tests use too (reference decoders, openssl for the TLS tests).
test-deps: deps
	@./scripts/apt-ensure $(TEST_PACKAGES)

build: deps
	$(SWIFT) build

## demo: the main job on its built-in default.
demo: deps
	$(SWIFT) run -c release webimage demo

## test: every test, then the stress target under ThreadSanitizer.
test: test-deps test-unit test-stress

test-unit:
	$(SWIFT) test --skip StressTests

test-stress:
	$(SWIFT) test --sanitize=thread -Xswiftc -DWEBIMAGE_TSAN --scratch-path $(TSAN_SCRATCH) --filter StressTests

## bench: every benchmark with its peers in one run (Benchmarks/ package); writes bench-results.json,
## bench-results.md and bench-results.png. `make bench BENCH_ARGS=--quick` for a short run.
bench: deps
	@./scripts/apt-ensure $(BENCH_PACKAGES)
	cd Benchmarks && $(SWIFT) run -c release WebImageBench $(BENCH_ARGS)
	$(SWIFT) run -c release webimage bench-chart bench-results.json --output bench-results.png
	@# A full run (no BENCH_ARGS) also refreshes the README's Performance tables.
	@if [ -z "$(BENCH_ARGS)" ]; then ./scripts/readme-performance; fi

clean:
	rm -rf .build $(TSAN_SCRATCH) Benchmarks/.build
