#!/bin/sh
# The manifest-layout experiment of issue 14 ("Flat cost at scale"), from C: for 1k / 100k / 1M entries of
# 2 KB, each manifest layout (KVStorage's, WITHOUT ROWID, hashed rowid; 4/8/16 KB pages) is populated, read
# at random (20,000 lookups, thread CPU time) under several PRAGMAs, and deleted; the floors (pread, memcpy
# from a map) are measured on the current layout's file. One store at a time (at most ~5 GB at 1M) under
# Benchmarks/.build/kvcache-layouts. About 10 minutes on a quiet 2-core machine.
#
#   Benchmarks/scripts/kvcache-layouts.sh [--quick] [--sizes 1000,100000,1000000] [--reads 20000] [--reps 2] [--only SUBSTRING] [--migrate-max 100000]
#
# Needs cc and libsqlite3-dev. Prints one line per measurement (with the load average) and a Markdown table.
set -eu
bench=$(cd "$(dirname "$0")/.." && pwd)
src="$bench/Sources/CBenchHarness"
mkdir -p "$bench/.build"
cc -O2 -std=gnu11 -Wall -Wextra -Wno-unused-parameter -I "$src/include" \
    "$bench/scripts/kvcache_layouts_main.c" "$src/harness_sqlite_layouts.c" "$src/harness_sqlite.c" "$src/bench_harness.c" \
    -lsqlite3 -o "$bench/.build/kvcache-layouts"
exec "$bench/.build/kvcache-layouts" --dir "$bench/.build/kvcache-layouts-stores" "$@"
