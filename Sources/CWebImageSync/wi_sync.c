#include "wi_sync.h"

#if defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define WI_THREAD_SANITIZER 1
void __tsan_acquire(void *address);
void __tsan_release(void *address);
#  endif
#endif

void wi_tsan_acquire(void *address) {
#ifdef WI_THREAD_SANITIZER
    __tsan_acquire(address);
#else
    (void)address;
#endif
}

void wi_tsan_release(void *address) {
#ifdef WI_THREAD_SANITIZER
    __tsan_release(address);
#else
    (void)address;
#endif
}
