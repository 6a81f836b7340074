// The source-policy hooks: libcurl callbacks that hand each address about to be used to the Swift check.
#include "wi_curl.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

static wi_address_check registered_check = NULL;

void wi_set_address_check(wi_address_check check) {
    registered_check = check;
}

/// Asks the check about a socket address; refuses when no check is registered or the family is unknown.
static int allows_sockaddr(void *context, const struct sockaddr *address) {
    if (registered_check == NULL || address == NULL) return 0;
    switch (address->sa_family) {
    case AF_INET:
        return registered_check(context, AF_INET,
                                (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr);
    case AF_INET6:
        return registered_check(context, AF_INET6,
                                (const unsigned char *)&((const struct sockaddr_in6 *)address)->sin6_addr);
    default:
        return registered_check(context, address->sa_family, NULL);
    }
}

/// `CURLOPT_OPENSOCKETFUNCTION`: the resolved address, before any connect.
static curl_socket_t open_checked_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    if (purpose == CURLSOCKTYPE_IPCXN && !allows_sockaddr(context, &address->addr)) return CURL_SOCKET_BAD;
    int type = address->socktype;
#ifdef SOCK_CLOEXEC
    type |= SOCK_CLOEXEC; // libcurl's own socket() does not, so a child process could inherit it
#endif
    return socket(address->family, type, address->protocol);
}

#if LIBCURL_VERSION_NUM >= 0x075000
/// `CURLOPT_PREREQFUNCTION`: the connection's peer (new or reused), just before the request is sent.
static int check_before_request(void *context, char *primary_ip, char *local_ip, int primary_port, int local_port) {
    (void)local_ip; (void)primary_port; (void)local_port;
    unsigned char bytes[16];
    if (registered_check != NULL && primary_ip != NULL) {
        if (inet_pton(AF_INET, primary_ip, bytes) == 1 && registered_check(context, AF_INET, bytes)) {
            return CURL_PREREQFUNC_OK;
        }
        if (inet_pton(AF_INET6, primary_ip, bytes) == 1 && registered_check(context, AF_INET6, bytes)) {
            return CURL_PREREQFUNC_OK;
        }
    }
    return CURL_PREREQFUNC_ABORT;
}
#endif

CURLcode wi_easy_enable_address_check(CURL *easy, void *context) {
    CURLcode rc = curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, context);
#if LIBCURL_VERSION_NUM >= 0x075000
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_PREREQFUNCTION, check_before_request);
    if (rc == CURLE_OK) rc = curl_easy_setopt(easy, CURLOPT_PREREQDATA, context);
#else
    if (rc == CURLE_OK) rc = CURLE_NOT_BUILT_IN;
#endif
    return rc;
}
