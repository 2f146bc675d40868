/* TLS to the target. --ca-cert FILE verifies the server's certificate
 * against that PEM file instead of the system's store; --insecure does not
 * verify it at all (the report says which). Applied to every handle that
 * speaks to the target: the requests, the warm-ups and the /metrics scrape.
 * curl's defaults (verify the peer and the host name against the system's
 * store) hold when neither is given. */
#ifndef LG_TLS_H
#define LG_TLS_H

#include <curl/curl.h>

static inline void lg_tls_apply(CURL *e, const char *ca_cert, int insecure)
{
    if (insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (ca_cert && ca_cert[0]) {
        curl_easy_setopt(e, CURLOPT_CAINFO, ca_cert);
    }
}

#endif
