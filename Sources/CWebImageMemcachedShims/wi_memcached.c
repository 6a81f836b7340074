#include "wi_memcached.h"

#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wi_mc {
    memcached_st *memc;
};

static wi_mc_kind wi_mc_classify(memcached_return_t rc) {
    switch (rc) {
    case MEMCACHED_SUCCESS:
    case MEMCACHED_STORED:
    case MEMCACHED_DELETED:
    case MEMCACHED_BUFFERED:
        return WI_MC_OK;
    case MEMCACHED_NOTFOUND:
    case MEMCACHED_END:
        return WI_MC_MISS;
    case MEMCACHED_TIMEOUT:
        return WI_MC_TIMEOUT;
    case MEMCACHED_E2BIG:
        return WI_MC_TOO_LARGE;
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_CONNECTION_SOCKET_CREATE_FAILURE:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
    case MEMCACHED_NO_SERVERS:
    case MEMCACHED_ERRNO:
    case MEMCACHED_WRITE_FAILURE:
    case MEMCACHED_READ_FAILURE:
    case MEMCACHED_UNKNOWN_READ_FAILURE:
    case MEMCACHED_HOST_LOOKUP_FAILURE:
        return WI_MC_UNAVAILABLE;
    default:
        return WI_MC_ERROR;
    }
}

static int wi_mc_behavior(memcached_st *memc, memcached_behavior_t flag, uint64_t value, const char *name, char *error,
                          size_t error_size) {
    memcached_return_t rc = memcached_behavior_set(memc, flag, value);
    if (memcached_success(rc)) return 1;
    snprintf(error, error_size, "%s: %s", name, memcached_strerror(memc, rc));
    return 0;
}

wi_mc *wi_mc_create(const char *const *hosts, const uint16_t *ports, const uint32_t *weights, size_t count,
                    const wi_mc_settings *s, char *error, size_t error_size) {
    wi_mc *mc = calloc(1, sizeof(*mc));
    if (mc == NULL) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    mc->memc = memcached_create(NULL);
    if (mc->memc == NULL) {
        snprintf(error, error_size, "memcached_create failed");
        free(mc);
        return NULL;
    }
    memcached_st *memc = mc->memc;
    int weighted = 0;
    for (size_t i = 0; i < count; i++) weighted |= weights[i] > 0;
    // Distribution (and weights) first: libmemcached 1.1.4 ignores weights given after the servers, and its
    // default distribution (modula) moves a third of the keys when one of three servers goes away.
    int ok = wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION, MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA,
                            "DISTRIBUTION", error, error_size)
        && (!weighted || wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1, "KETAMA_WEIGHTED", error, error_size))
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1, "TCP_NODELAY", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, (uint64_t)s->connect_timeout_ms, "CONNECT_TIMEOUT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_POLL_TIMEOUT, (uint64_t)s->poll_timeout_ms, "POLL_TIMEOUT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_SND_TIMEOUT, (uint64_t)s->poll_timeout_ms * 1000, "SND_TIMEOUT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_RCV_TIMEOUT, (uint64_t)s->poll_timeout_ms * 1000, "RCV_TIMEOUT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, (uint64_t)s->failure_limit, "SERVER_FAILURE_LIMIT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, (uint64_t)s->retry_timeout_s, "RETRY_TIMEOUT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, (uint64_t)s->dead_timeout_s, "DEAD_TIMEOUT", error, error_size)
        && wi_mc_behavior(memc, MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, (uint64_t)(s->remove_failed != 0),
                          "REMOVE_FAILED_SERVERS", error, error_size);
    for (size_t i = 0; ok && i < count; i++) {
        memcached_return_t rc = memcached_server_add_with_weight(memc, hosts[i], ports[i], weights[i]);
        if (!memcached_success(rc)) {
            snprintf(error, error_size, "server %s:%u: %s", hosts[i], (unsigned)ports[i], memcached_strerror(memc, rc));
            ok = 0;
        }
    }
    if (!ok) {
        wi_mc_free(mc);
        return NULL;
    }
    return mc;
}

void wi_mc_free(wi_mc *mc) {
    if (mc == NULL) return;
    memcached_free(mc->memc);
    free(mc);
}

int32_t wi_mc_server_index(wi_mc *mc, const char *key, size_t key_length) {
    memcached_return_t rc = MEMCACHED_SUCCESS;
    const memcached_instance_st *server = memcached_server_by_key(mc->memc, key, key_length, &rc);
    if (server == NULL) return -1;
    uint32_t count = memcached_server_count(mc->memc);
    for (uint32_t i = 0; i < count; i++) {
        if (memcached_server_instance_by_position(mc->memc, i) == server) return (int32_t)i;
    }
    return -1;
}

wi_mc_kind wi_mc_get(wi_mc *mc, const char *key, size_t key_length, char **value, size_t *value_length, int32_t *rc) {
    uint32_t flags = 0;
    memcached_return_t status = MEMCACHED_SUCCESS;
    *value_length = 0;
    *value = memcached_get(mc->memc, key, key_length, value_length, &flags, &status);
    *rc = (int32_t)status;
    if (*value == NULL && status == MEMCACHED_SUCCESS) {
        // A stored empty value: give the caller a buffer it can free like any other.
        *value = malloc(1);
        if (*value == NULL) return WI_MC_ERROR;
    }
    wi_mc_kind kind = wi_mc_classify(status);
    if (kind != WI_MC_OK && *value != NULL) {
        free(*value);
        *value = NULL;
    }
    return kind;
}

void wi_mc_free_value(char *value) { free(value); }

wi_mc_kind wi_mc_set(wi_mc *mc, const char *key, size_t key_length, const char *value, size_t value_length,
                     int64_t ttl_s, int32_t *rc) {
    memcached_return_t status = memcached_set(mc->memc, key, key_length, value, value_length, (time_t)ttl_s, 0);
    *rc = (int32_t)status;
    return wi_mc_classify(status);
}

wi_mc_kind wi_mc_delete(wi_mc *mc, const char *key, size_t key_length, int32_t *rc) {
    memcached_return_t status = memcached_delete(mc->memc, key, key_length, 0);
    *rc = (int32_t)status;
    return wi_mc_classify(status);
}

wi_mc_kind wi_mc_mget(wi_mc *mc, const char *const *keys, const size_t *key_lengths, size_t count, void *context,
                      wi_mc_found found, int32_t *rc) {
    memcached_return_t status = memcached_mget(mc->memc, keys, key_lengths, count);
    *rc = (int32_t)status;
    wi_mc_kind first = wi_mc_classify(status);
    if (first != WI_MC_OK) return first;
    // One result on our stack for the whole loop. A heap one made by memcached_result_create(memc, NULL) is
    // freed by memcached_fetch_result itself at the end of the results (freeing it again is a double free).
    memcached_result_st buffer;
    if (memcached_result_create(mc->memc, &buffer) == NULL) return WI_MC_ERROR;
    memcached_result_st *result;
    while ((result = memcached_fetch_result(mc->memc, &buffer, &status)) != NULL) {
        found(context, memcached_result_key_value(result), memcached_result_key_length(result),
              memcached_result_value(result), memcached_result_length(result));
    }
    memcached_result_free(&buffer);
    *rc = (int32_t)status;
    wi_mc_kind kind = wi_mc_classify(status);
    return kind == WI_MC_MISS ? WI_MC_OK : kind;
}

const char *wi_mc_strerror(wi_mc *mc, int32_t rc) { return memcached_strerror(mc->memc, (memcached_return_t)rc); }
