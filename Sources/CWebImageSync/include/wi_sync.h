#ifndef WI_SYNC_H
#define WI_SYNC_H
// ThreadSanitizer annotations for locks TSan cannot see (used by WebImageSync.Mutex in -DWEBIMAGE_TSAN builds).
//
// Swift's `Synchronization.Mutex` on Linux is built on raw futex syscalls, which ThreadSanitizer does not
// intercept, so every access under such a lock looks like a race to it. These functions tell TSan that a
// lock was acquired or released. When this file is compiled without TSan they do nothing.

/// Tells ThreadSanitizer that the lock identified by `address` was acquired (`__tsan_acquire`).
void wi_tsan_acquire(void *address);
/// Tells ThreadSanitizer that the lock identified by `address` is about to be released (`__tsan_release`).
void wi_tsan_release(void *address);

#endif
