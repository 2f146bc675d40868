/* TLS to the target. --ca-cert FILE verifies the server's certificate
 * against that PEM file instead of the system's store; --insecure does not
 * verify it at all (the report says which); --cert FILE (and --key FILE)
 * present a client certificate: mutual TLS. Applied to every handle that
 * speaks to the target: the requests, the warm-ups and the /metrics scrape.
 * curl's defaults (verify the peer and the host name against the system's
 * store, no client certificate) hold when none is given. */
#ifndef LG_TLS_H
#define LG_TLS_H

#include <curl/curl.h>

typedef struct lg_tls {
    const char *ca_cert, *client_cert, *client_key; /* "" or NULL: not given */
    int insecure;
} lg_tls;

/* The run's TLS options, from its lg_opts (any struct with the members). */
#define LG_TLS_OF(o)                                                                               \
    ((lg_tls){.ca_cert = (o)->ca_cert,                                                             \
              .client_cert = (o)->client_cert,                                                     \
              .client_key = (o)->client_key,                                                       \
              .insecure = (o)->insecure})

static inline void lg_tls_apply(CURL *e, const lg_tls *t)
{
    if (t->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (t->ca_cert && t->ca_cert[0]) {
        curl_easy_setopt(e, CURLOPT_CAINFO, t->ca_cert);
    }
    if (t->client_cert && t->client_cert[0]) {
        curl_easy_setopt(e, CURLOPT_SSLCERT, t->client_cert);
        if (t->client_key && t->client_key[0]) curl_easy_setopt(e, CURLOPT_SSLKEY, t->client_key);
    }
}

#endif
