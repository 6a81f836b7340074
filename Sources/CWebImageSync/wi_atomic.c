#include "wi_atomic.h"

uint64_t wi_atomic_load_u64(const void *address) {
    return __atomic_load_n((const uint64_t *)address, __ATOMIC_ACQUIRE);
}

uint64_t wi_atomic_increment_u64(void *address) {
    return __atomic_add_fetch((uint64_t *)address, 1, __ATOMIC_SEQ_CST);
}

void wi_atomic_store_u64(void *address, uint64_t value) {
    __atomic_store_n((uint64_t *)address, value, __ATOMIC_RELEASE);
}
