// WI_MULTIVERSION: on x86-64 Linux a function marked with it gets an AVX2 clone and a baseline one, chosen once by
// the dynamic loader (ifunc); elsewhere it is plain C. No clones under a sanitizer: an ifunc resolver runs while
// the dynamic loader relocates the library, before the sanitizer's runtime is set up, and its instrumented code
// crashes there (SIGSEGV under ThreadSanitizer). Private to the shims (not in include/).
#ifndef WI_MULTIVERSION_H
#define WI_MULTIVERSION_H

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define WI_SANITIZED 1
#endif
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(WI_SANITIZED)
#define WI_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define WI_MULTIVERSION
#endif

#endif
