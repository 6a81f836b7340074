#include "bench_harness.h"

#include <libmemcached/memcached.h>
#include <stdlib.h>
#include <string.h>

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int bench_memcached_get(const char *host, unsigned port, const char *key, size_t expected_size, int iterations,
                        uint64_t *median_ns) {
    if (iterations < 1) return -1;
    memcached_st *memc = memcached_create(NULL);
    uint64_t *samples = malloc(sizeof(uint64_t) * (size_t)iterations);
    int status = -1;
    if (memc == NULL || samples == NULL) goto done;
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
    memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    if (!memcached_success(memcached_server_add(memc, host, (in_port_t)port))) goto done;
    size_t key_length = strlen(key);
    for (int i = -3; i < iterations; i++) { // three warm-up calls (connect, first buffers)
        size_t length = 0;
        uint32_t flags = 0;
        memcached_return_t rc;
        uint64_t t0 = bench_now_ns();
        char *value = memcached_get(memc, key, key_length, &length, &flags, &rc);
        uint64_t t1 = bench_now_ns();
        free(value);
        if (!memcached_success(rc) || length != expected_size) goto done;
        if (i >= 0) samples[i] = t1 - t0;
    }
    qsort(samples, (size_t)iterations, sizeof(uint64_t), compare_u64);
    *median_ns = samples[iterations / 2];
    status = 0;
done:
    free(samples);
    if (memc != NULL) memcached_free(memc);
    return status;
}
