// The libmemcached calls WebImageMemcached makes, as plain functions over an opaque handle: the behaviors
// set in the one order that works (distribution before servers), the return codes folded into a few kinds,
// multi-get as a callback loop. Swift never sees libmemcached's types.
#ifndef WI_MEMCACHED_H
#define WI_MEMCACHED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One libmemcached handle (a `memcached_st`). Not thread-safe: one thread at a time.
typedef struct wi_mc wi_mc;

/// What a call's `memcached_return_t` means to the tier.
typedef enum {
    WI_MC_OK = 0,           ///< success (a stored value, a found key, a deleted key)
    WI_MC_MISS = 1,         ///< NOTFOUND / END: the key is not there
    WI_MC_TIMEOUT = 2,      ///< TIMEOUT: the server did not answer within the poll timeout
    WI_MC_UNAVAILABLE = 3,  ///< the server is down, refused, dead or temporarily disabled
    WI_MC_TOO_LARGE = 4,    ///< E2BIG: the value exceeds the server's item size limit (-I)
    WI_MC_ERROR = 5,        ///< anything else
} wi_mc_kind;

/// Settings applied to every handle (times in milliseconds unless named otherwise).
typedef struct {
    int32_t connect_timeout_ms;   ///< MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT
    int32_t poll_timeout_ms;      ///< MEMCACHED_BEHAVIOR_POLL_TIMEOUT (also send/receive timeouts)
    int32_t failure_limit;        ///< MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT (with REMOVE_FAILED_SERVERS)
    int32_t retry_timeout_s;      ///< MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, seconds
    int32_t dead_timeout_s;       ///< MEMCACHED_BEHAVIOR_DEAD_TIMEOUT, seconds (> 0, or an ejected server never returns)
    int32_t remove_failed;        ///< MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS (auto-eject), 0 or 1
} wi_mc_settings;

/// Makes a handle over `count` servers (`hosts[i]:ports[i]`, weight `weights[i]`, 0 = unweighted) with
/// consistent (ketama) distribution set before the servers. NULL on failure, with a message in `error`.
wi_mc *wi_mc_create(const char *const *hosts, const uint16_t *ports, const uint32_t *weights, size_t count,
                    const wi_mc_settings *settings, char *error, size_t error_size);

/// Frees a handle (closes its connections). NULL is ignored.
void wi_mc_free(wi_mc *mc);

/// The index (in creation order) of the server `key` maps to now, or -1.
int32_t wi_mc_server_index(wi_mc *mc, const char *key, size_t key_length);

/// Wraps `memcached_get`. On WI_MC_OK, `*value` is a malloc'd buffer of `*value_length` bytes (free it with
/// `wi_mc_free_value`); otherwise `*value` is NULL.
wi_mc_kind wi_mc_get(wi_mc *mc, const char *key, size_t key_length, char **value, size_t *value_length, int32_t *rc);

/// Frees a value returned by `wi_mc_get`.
void wi_mc_free_value(char *value);

/// Wraps `memcached_set` with `ttl_s` seconds of life (0 = no expiry).
wi_mc_kind wi_mc_set(wi_mc *mc, const char *key, size_t key_length, const char *value, size_t value_length,
                     int64_t ttl_s, int32_t *rc);

/// Wraps `memcached_delete` (an absent key is WI_MC_MISS).
wi_mc_kind wi_mc_delete(wi_mc *mc, const char *key, size_t key_length, int32_t *rc);

/// Called once per key found by `wi_mc_mget`.
typedef void (*wi_mc_found)(void *context, const char *key, size_t key_length, const char *value, size_t value_length);

/// Wraps `memcached_mget` + `memcached_fetch_result`: calls `found` for each key found. Returns the first
/// failure's kind (a partial result has still been delivered), or WI_MC_OK.
wi_mc_kind wi_mc_mget(wi_mc *mc, const char *const *keys, const size_t *key_lengths, size_t count, void *context,
                      wi_mc_found found, int32_t *rc);

/// Wraps `memcached_strerror`: the text of a return code (static storage).
const char *wi_mc_strerror(wi_mc *mc, int32_t rc);

#ifdef __cplusplus
}
#endif

#endif
