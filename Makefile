# WebImage — the two commands a newcomer needs are `make demo` and `make test`.
# Both install the Debian packages they need first (`make deps`), only when missing.

SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the library needs (its seven C libraries, Little CMS 2 for colour management), and the tools the tests use.
DEPS_PACKAGES := libwebp-dev libpng-dev libjpeg-dev libgif-dev libcurl4-openssl-dev libsqlite3-dev zlib1g-dev liblcms2-dev pkg-config
# The optional products' C libraries: libmemcached-dev for WebImageMemcached (the webimage CLI links it; the
# WebImage library product does not).
OPTIONAL_PACKAGES := libmemcached-dev
# The optional codec modules (WebImageAVIF, WebImageJXL, WebImageHEIF) and the CLI, which registers them.
CODEC_PACKAGES := libavif-dev libjxl-dev libheif-dev
# memcached: the servers the WebImageMemcached tests and benchmark start on loopback ports; the reference
# decoders of the codec modules' tests (avifdec, djxl, heif-convert); GNU time for peak-RSS measurements; the colour
# tests' independent reference (jpgicc/tificc from liblcms2-utils) and Debian's standard ICC profiles.
# python3-venv: the venv of the PyPI reference SSIMULACRA2 (scripts/test-tools).
TEST_PACKAGES := openssl webp libjpeg-turbo-progs imagemagick nginx time memcached libavif-bin libjxl-tools libheif-examples \
	liblcms2-utils icc-profiles-free colord-data argyll-ref python3-venv
# The peers `make bench` measures against, in the same run.
BENCH_PACKAGES := nginx curl libvips-tools memcached wrk
SUDO := $(shell [ "$$(id -u)" = "0" ] || echo sudo)
TSAN_SCRATCH := .build-tsan

.PHONY: all build deps test-deps demo test test-unit test-stress bench bench-service clean fuzz test-asan soak

all: build

## deps: install the Debian packages the library and the optional products need, only when missing.
deps:
	@./scripts/apt-ensure $(DEPS_PACKAGES) $(OPTIONAL_PACKAGES) $(CODEC_PACKAGES)

## test-deps: the packages the tests use too (reference decoders, openssl and nginx for the TLS and HTTP/2 tests), and
## the PyPI reference SSIMULACRA2 in .build/test-tools (scripts/test-tools; the tests that use it skip without it).
test-deps: deps
	@./scripts/apt-ensure $(TEST_PACKAGES)
	@./scripts/test-tools

build: deps
	$(SWIFT) build

## demo: the main job on its built-in default.
demo: deps
	$(SWIFT) run -c release webimage demo

## test: every test, then the stress target under ThreadSanitizer.
test: test-deps test-unit test-stress

test-unit:
	WEBIMAGE_SSIMULACRA2="$${WEBIMAGE_SSIMULACRA2:-$(CURDIR)/.build/test-tools/venv/bin/ssymulacra2}" $(SWIFT) test --skip StressTests

test-stress:
	$(SWIFT) test --sanitize=thread -Xswiftc -DWEBIMAGE_TSAN --scratch-path $(TSAN_SCRATCH) --filter StressTests

## bench: every benchmark with its peers in one run (Benchmarks/ package); writes bench-results.json,
## bench-results.md and bench-results.png. `make bench BENCH_ARGS=--quick` for a short run.
bench: deps
	@./scripts/apt-ensure $(BENCH_PACKAGES)
	@# The thumbnail suite measures `webimage convert --thumbnail` in a child process; the chart is drawn by it too.
	$(SWIFT) build -c release --product webimage
	cd Benchmarks && $(SWIFT) run -c release WebImageBench $(BENCH_ARGS)
	@# The Service suite (webimage-server against thumbor): 30 s per run, 10 s with --quick; skipped by --only.
	@# It adds its rows to bench-results.json, so it runs before the chart and the tables of docs/performance.md.
	@if [[ "$(BENCH_ARGS)" != *--only* ]]; then \
	  $(MAKE) bench-service SERVICE_SECONDS=$(if $(findstring --quick,$(BENCH_ARGS)),10,30); fi
	.build/release/webimage bench-chart bench-results.json --output bench-results.png
	@# A full run (no BENCH_ARGS) also refreshes the generated tables of docs/performance.md.
	@if [ -z "$(BENCH_ARGS)" ]; then ./scripts/bench-tables; fi

## bench-service: webimage-server against thumbor 7.8 (a venv under .build/bench-service), nginx, wrk and
## vipsthumbnail; writes .build/bench-service/service-results.md, puts the "service" rows into bench-results.json
## and draws docs/service-bench.png (with `webimage bench-chart`), then the thumbor compatibility table
## (scripts/thumbor-compat/run.py: .build/bench-service/thumbor-compat.md). SERVICE_SECONDS per wrk run (default 30).
SERVICE_SECONDS ?= 30
bench-service: deps
	@./scripts/apt-ensure $(BENCH_PACKAGES) libcurl4-openssl-dev python3-venv libavif-bin libjxl-tools
	$(SWIFT) build -c release --product webimage-server
	$(SWIFT) build -c release --product webimage
	python3 scripts/bench-service/run.py --duration $(SERVICE_SECONDS)
	@# The thumbor compatibility table (thumbor URLs, >= 150 of them) in the venv run.py made: .build/bench-service/thumbor-compat.md
	.build/bench-service/venv/bin/pip install -q numpy ssimulacra2
	.build/bench-service/venv/bin/python scripts/thumbor-compat/run.py --server .build/release/webimage-server \
	  --venv .build/bench-service/venv --out .build/bench-service/thumbor-compat.md
	@# Quality: resize quality against thumbor, then bytes at equal quality (SSIMULACRA2 against a float Lanczos3
	@# reference; the PyPI ssimulacra2 port in the bench venv). Writes .build/bench-service/quality-*.md.
	@.build/bench-service/venv/bin/python -c "import ssimulacra2" 2>/dev/null || \
	  .build/bench-service/venv/bin/pip install -q ssimulacra2==0.3.0
	.build/bench-service/venv/bin/python scripts/quality/resize_quality.py --server .build/release/webimage-server \
	  --venv .build/bench-service/venv --output .build/bench-service/quality-resize.md
	.build/bench-service/venv/bin/python scripts/quality/bytes_at_quality.py --server .build/release/webimage-server \
	  --venv .build/bench-service/venv --curves --output .build/bench-service/quality-bytes.md \
	  --json .build/bench-service/quality-bytes.json
	@# The limit of the AVIF and JPEG XL bytes goals in the same run: each encoder effort we offer with an ideal
	@# resize and an ideal quality per image, on the opaque files, beside ours on the same files.
	.build/bench-service/venv/bin/python scripts/quality/encoder_ceiling.py .build/bench-service/ceiling \
	  --peer-rows .build/quality/bytes/peer-rows-400x300.json --opaque-only \
	  --ours .build/bench-service/quality-bytes.json > .build/bench-service/quality-ceiling.md

clean:
	rm -rf .build $(TSAN_SCRATCH) Benchmarks/.build

# ---- Reliability suite (the Fuzz/ package): fuzzing, AddressSanitizer, soak ----
#
# Fuzz targets are libFuzzer binaries built by SwiftPM in Fuzz/ (FUZZ_BUILD below). What works on Swift 6.3:
# - Each target is one file exporting `@_cdecl("LLVMFuzzerTestOneInput")`, with no main.swift and no
#   top-level code, so libFuzzer's own `main` is the only one (no -parse-as-library or hand-run swiftc).
# - `--sanitize=fuzzer --sanitize=address` does NOT work: swiftc keeps only the last `-sanitize=` flag, so the
#   Swift code gets ASan but no coverage counters. Hence `-Xswiftc -sanitize=fuzzer,address` (one flag, comes
#   last) and `-Xcc -fsanitize=address` for the C shims; `--sanitize=fuzzer` stays for the link.
# - `--disable-dead-strip`: release links use --gc-sections, which drops the coverage sections.
# Products are built one at a time: building the whole package would also link Soak, which has a main.
# New inputs go to a writable work corpus under $(FUZZ_WORK); the shared corpus is only read (never copied).
# A crash leaves its input in $(FUZZ_WORK)/artifacts/ and makes `make fuzz` fail after every target ran.
FUZZ_SECONDS ?= 300
FUZZ_SCRATCH := .build-fuzz
FUZZ_WORK := $(FUZZ_SCRATCH)/work
FUZZ_TARGETS ?= FuzzDecode FuzzIncremental FuzzKVStorage FuzzAVIF FuzzJXL FuzzHEIF FuzzHTTPHeaders FuzzColorProfile
FUZZ_FLAGS ?= -rss_limit_mb=2048 -timeout=30 -print_final_stats=1
CORPUS ?= ../shared/corpus
FUZZ_BUILD = $(SWIFT) build -c release --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address \
	--disable-dead-strip --scratch-path ../$(FUZZ_SCRATCH)
# Seed folders per target (those that exist). FuzzKVStorage writes its own seeds (valid manifests).
FUZZ_SEEDS_FuzzDecode = $(wildcard $(addprefix $(CORPUS)/,jpeg png apng gif webp bad))
FUZZ_SEEDS_FuzzIncremental = $(FUZZ_SEEDS_FuzzDecode)
FUZZ_SEEDS_FuzzKVStorage = $(FUZZ_WORK)/FuzzKVStorage-seeds
FUZZ_SEEDS_FuzzAVIF = $(wildcard $(CORPUS)/modern/avif)
FUZZ_SEEDS_FuzzJXL = $(wildcard $(CORPUS)/modern/jxl)
FUZZ_SEEDS_FuzzHEIF = $(wildcard $(CORPUS)/modern/heic)
# Debian's standard profiles (icc-profiles-free, colord-data, argyll-ref): the mutations start from real ICC.
FUZZ_SEEDS_FuzzColorProfile = $(wildcard /usr/share/color/icc /usr/share/color/icc/colord /usr/share/color/argyll/ref)

## fuzz: build the fuzz targets and run each for FUZZ_SECONDS (default 300) seeded from the corpus.
fuzz: deps
	cd Fuzz && for target in $(FUZZ_TARGETS); do \
	  $(FUZZ_BUILD) --product $$target || exit 1; \
	done
	@mkdir -p $(FUZZ_WORK)/artifacts
	@if [[ " $(FUZZ_TARGETS) " == *" FuzzKVStorage "* ]]; then \
	  WEBIMAGE_FUZZ_WRITE_SEEDS=$(FUZZ_WORK)/FuzzKVStorage-seeds $(FUZZ_SCRATCH)/release/FuzzKVStorage; fi
	@failed=""; for target in $(FUZZ_TARGETS); do \
	  case $$target in \
	    FuzzDecode) seeds="$(FUZZ_SEEDS_FuzzDecode)";; \
	    FuzzIncremental) seeds="$(FUZZ_SEEDS_FuzzIncremental)";; \
	    FuzzKVStorage) seeds="$(FUZZ_SEEDS_FuzzKVStorage)";; \
	    FuzzAVIF) seeds="$(FUZZ_SEEDS_FuzzAVIF)";; \
	    FuzzJXL) seeds="$(FUZZ_SEEDS_FuzzJXL)";; \
	    FuzzHEIF) seeds="$(FUZZ_SEEDS_FuzzHEIF)";; \
	    FuzzColorProfile) seeds="$(FUZZ_SEEDS_FuzzColorProfile)";; \
	    *) seeds="";; \
	  esac; \
	  mkdir -p $(FUZZ_WORK)/$$target; \
	  echo "== $$target for $(FUZZ_SECONDS) s (seeds: $${seeds:-none})"; \
	  $(FUZZ_SCRATCH)/release/$$target $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_WORK)/artifacts/$$target- $(FUZZ_WORK)/$$target $$seeds \
	    > $(FUZZ_WORK)/$$target.log 2>&1 || failed="$$failed $$target"; \
	  tail -n 12 $(FUZZ_WORK)/$$target.log | grep -v '^"' ; \
	done; \
	if [ -n "$$failed" ]; then echo "make fuzz: FAILED:$$failed (inputs in $(FUZZ_WORK)/artifacts, logs in $(FUZZ_WORK))"; exit 1; fi; \
	echo "make fuzz: no crash in $(FUZZ_TARGETS)"

## test-asan: the codec tests (corpus, truncated and bit-flipped variants) under AddressSanitizer.
## Leak checking stays on; scripts/lsan-suppressions.txt lists the toolchain's own leaks at exit (Foundation,
## the Swift runtime, XCTest), each explained there.
ASAN_SCRATCH := .build-asan
LSAN_SUPPRESSIONS := $(CURDIR)/scripts/lsan-suppressions.txt
test-asan: test-deps
	LSAN_OPTIONS=suppressions=$(LSAN_SUPPRESSIONS):print_suppressions=0 \
	  $(SWIFT) test --sanitize=address --scratch-path $(ASAN_SCRATCH) --filter ImageCodecTests

## soak: SOAK_SECONDS (default 600) of mixed requests with cancellations against a misbehaving loopback
## server; reports RSS drift and leaked descriptors, fails above 10 % drift or any leak. Then the randomized
## pipeline model (WebImageTests.PipelineModelTests) for SOAK_MODEL_SCHEDULES schedules (default 1000; `make test`
## runs 40) from a new seed each run (SOAK_MODEL_SEED to choose it); a failure prints the seed that replays it
## (WEBIMAGE_MODEL_SEED=<seed> WEBIMAGE_MODEL_SCHEDULES=1). Not in CI.
SOAK_SECONDS ?= 600
SOAK_SCRATCH := .build-soak
SOAK_MODEL_SCHEDULES ?= 1000
SOAK_MODEL_SEED ?= $(shell date +%s)
soak: deps
	cd Fuzz && $(SWIFT) build -c release --scratch-path ../$(SOAK_SCRATCH) --product Soak
	$(SOAK_SCRATCH)/release/Soak --seconds $(SOAK_SECONDS)
	WEBIMAGE_MODEL_SEED=$(SOAK_MODEL_SEED) WEBIMAGE_MODEL_SCHEDULES=$(SOAK_MODEL_SCHEDULES) \
	  $(SWIFT) test --filter WebImageTests.PipelineModelTests
