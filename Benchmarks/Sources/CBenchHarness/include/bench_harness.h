#ifndef BENCH_HARNESS_H
#define BENCH_HARNESS_H
// Direct calls into libjpeg-turbo, libpng, libwebp and giflib, with no Swift in between: the baseline the
// codec benchmark compares ImageCodec against. Each returns 0 on success.
#include <stddef.h>
#include <stdint.h>

/// Monotonic clock in nanoseconds.
uint64_t bench_now_ns(void);

#endif
