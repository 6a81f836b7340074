#include "wi_curl.h"

CURLcode wi_easy_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode wi_easy_setopt_off(CURL *easy, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode wi_easy_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}
CURLcode wi_easy_setopt_write_callback(CURL *easy, CURLoption option,
                                       size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(easy, option, callback);
}
CURLcode wi_easy_setopt_xferinfo_callback(CURL *easy,
                                          int (*callback)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
    return curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, callback);
}
CURLcode wi_easy_getinfo_long(CURL *easy, CURLINFO info, long *out) {
    return curl_easy_getinfo(easy, info, out);
}
CURLcode wi_easy_getinfo_off(CURL *easy, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(easy, info, out);
}
CURLcode wi_easy_getinfo_double(CURL *easy, CURLINFO info, double *out) {
    return curl_easy_getinfo(easy, info, out);
}
CURLcode wi_easy_getinfo_string(CURL *easy, CURLINFO info, const char **out) {
    char *value = NULL;
    CURLcode rc = curl_easy_getinfo(easy, info, &value);
    *out = value;
    return rc;
}
CURLcode wi_easy_getinfo_private(CURL *easy, void **out) {
    char *value = NULL;
    CURLcode rc = curl_easy_getinfo(easy, CURLINFO_PRIVATE, &value);
    *out = value;
    return rc;
}
CURLMcode wi_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
int wi_multi_info_read(CURLM *multi, CURL **easy, CURLMSG *msg, CURLcode *result, int *remaining) {
    CURLMsg *m = curl_multi_info_read(multi, remaining);
    if (m == NULL) return 0;
    *easy = m->easy_handle;
    *msg = m->msg;
    *result = m->msg == CURLMSG_DONE ? m->data.result : CURLE_OK;
    return 1;
}
CURLSHcode wi_share_setopt_long(CURLSH *share, CURLSHoption option, long value) {
    return curl_share_setopt(share, option, value);
}
unsigned long wi_curlauth_basic(void) {
    return CURLAUTH_BASIC;
}
int wi_curl_error_size(void) {
    return CURL_ERROR_SIZE;
}
