#ifndef WI_ATOMIC_H
#define WI_ATOMIC_H
// 64-bit atomics on memory Swift does not own (a shared file mapping), for KVStorage's commit generation.
//
// Swift's `Synchronization.Atomic` must be a stored property; a counter in an `mmap`ed file shared by
// several processes needs atomics on a raw address. `address` must be 8-byte aligned.

#include <stdint.h>

/// Loads the 64-bit value at `address` with acquire ordering (`__atomic_load_n`).
uint64_t wi_atomic_load_u64(const void *address);

/// Adds 1 to the 64-bit value at `address` (sequentially consistent `__atomic_add_fetch`); returns the new value.
uint64_t wi_atomic_increment_u64(void *address);

/// Stores `value` at `address` with release ordering (`__atomic_store_n`).
void wi_atomic_store_u64(void *address, uint64_t value);

#endif
