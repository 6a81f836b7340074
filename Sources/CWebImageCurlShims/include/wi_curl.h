#ifndef WI_CURL_H
#define WI_CURL_H
// Typed, non-variadic wrappers for libcurl's variadic calls (Swift cannot call C variadics).
// Each returns the CURLcode / CURLMcode of the call it wraps.
#include <curl/curl.h>
#include <stdint.h>

/// Wraps `curl_easy_setopt` for options taking a `long`.
CURLcode wi_easy_setopt_long(CURL *easy, CURLoption option, long value);
/// Wraps `curl_easy_setopt` for options taking a `curl_off_t`.
CURLcode wi_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value);
/// Wraps `curl_easy_setopt` for options taking a string (copied by libcurl) or any object pointer.
CURLcode wi_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value);
/// Wraps `curl_easy_setopt` for `CURLOPT_WRITEFUNCTION` and `CURLOPT_HEADERFUNCTION`.
CURLcode wi_easy_setopt_write_callback(CURL *easy, CURLoption option,
                                       size_t (*callback)(char *, size_t, size_t, void *));
/// Wraps `curl_easy_setopt(CURLOPT_XFERINFOFUNCTION)`.
CURLcode wi_easy_setopt_xferinfo_callback(CURL *easy,
                                          int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t));

/// Wraps `curl_easy_getinfo` for `long` results.
CURLcode wi_easy_getinfo_long(CURL *easy, CURLINFO info, long *out);
/// Wraps `curl_easy_getinfo` for `curl_off_t` results.
CURLcode wi_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *out);
/// Wraps `curl_easy_getinfo` for `double` results.
CURLcode wi_easy_getinfo_double(CURL *easy, CURLINFO info, double *out);
/// Wraps `curl_easy_getinfo` for string results (owned by libcurl; valid until the handle changes).
CURLcode wi_easy_getinfo_string(CURL *easy, CURLINFO info, const char **out);
/// Wraps `curl_easy_getinfo(CURLINFO_PRIVATE)`.
CURLcode wi_easy_getinfo_private(CURL *easy, void **out);

/// Wraps `curl_multi_setopt` for options taking a `long`.
CURLMcode wi_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// The `CURLMsg` fields Swift needs (the struct holds a union Swift imports awkwardly).
/// Returns 1 and fills the out-parameters when `curl_multi_info_read` had a message, else 0.
int wi_multi_info_read(CURLM *multi, CURL **easy, CURLMSG *msg, CURLcode *result, int *remaining);

/// Wraps `curl_share_setopt` for options taking a `long` (e.g. `CURLSHOPT_SHARE` with a `curl_lock_data`).
CURLSHcode wi_share_setopt_long(CURLSH *share, CURLSHoption option, long value);

/// The source-policy check the fetcher installs once (`wi_set_address_check`): returns nonzero when the
/// transfer whose `context` is given may use `address` (4 bytes for AF_INET, 16 for AF_INET6, NULL for any
/// other family), 0 to refuse it.
typedef int (*wi_address_check)(void *context, int family, const unsigned char *address);

/// Registers the one address check every `wi_easy_enable_address_check` handle calls. Call once, before
/// the first transfer (the fetcher does it with libcurl's global initialisation).
void wi_set_address_check(wi_address_check check);

/// Makes `easy` call the registered check with `context`:
/// - `CURLOPT_OPENSOCKETFUNCTION`: every resolved address, before `socket`/`connect`; a refused one gets
///   `CURL_SOCKET_BAD` (libcurl tries the next address, then fails with `CURLE_COULDNT_CONNECT`), so no byte
///   is sent to it;
/// - `CURLOPT_PREREQFUNCTION` (libcurl >= 7.80): `CURLINFO_PRIMARY_IP` before each request goes out, which
///   covers a reused connection; a refused one aborts (`CURLE_ABORTED_BY_CALLBACK`) before the request.
/// Returns the first failing `CURLcode` (`CURLE_NOT_BUILT_IN` when libcurl is older than 7.80).
CURLcode wi_easy_enable_address_check(CURL *easy, void *context);

/// `CURLAUTH_BASIC` (a macro with a cast Swift cannot import).
unsigned long wi_curlauth_basic(void);
/// `CURL_ERROR_SIZE`: the size `CURLOPT_ERRORBUFFER` needs.
int wi_curl_error_size(void);

#endif
