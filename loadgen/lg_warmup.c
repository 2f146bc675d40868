/* lg_warmup: the warm-up requests before the run (see lg_warmup.h). One
 * libcurl multi handle on the coordinator; the workers are not started yet. */
#include "lg_warmup.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_body.h"
#include "lg_tls.h"
#include "rb_clock.h"

static size_t discard(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    (void)ptr;
    (void)userdata;
    return size * nmemb;
}

static CURL *one(const lg_opts *o, const char *url, const char *body, size_t len,
                 struct curl_slist *headers)
{
    CURL *e = curl_easy_init();
    if (!e) return NULL;
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(o->request_timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->request_timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    lg_tls tls = LG_TLS_OF(o);
    lg_tls_apply(e, &tls);
    return e;
}

/* The finished transfers: counted, removed, and replaced by new ones while
 * any are left to start. */
static void reap(CURLM *m, lg_warmup_result *res, CURL **live, int *in_flight)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(m, &left))) {
        if (msg->msg != CURLMSG_DONE) continue;
        CURL *e = msg->easy_handle;
        long http = 0;
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &http);
        if (msg->data.result == CURLE_OK && http >= 200 && http < 300) {
            res->completed++;
        } else {
            res->failed++;
            if (!res->first_error[0]) {
                if (msg->data.result != CURLE_OK)
                    snprintf(res->first_error, sizeof res->first_error, "%s",
                             curl_easy_strerror(msg->data.result));
                else
                    snprintf(res->first_error, sizeof res->first_error, "HTTP %ld", http);
            }
        }
        char *slot = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, &slot);
        live[(intptr_t)slot] = NULL;
        curl_multi_remove_handle(m, e);
        curl_easy_cleanup(e);
        (*in_flight)--;
    }
}

int lg_warmup_run(const lg_opts *o, const char *url, const char *body, size_t len, int stamps,
                  const volatile sig_atomic_t *signals, lg_warmup_result *res)
{
    *res = (lg_warmup_result){.requested = o->num_warmups};
    if (o->num_warmups <= 0) return 0;
    int64_t t0 = rb_now_ns();
    struct curl_slist *headers = lg_body_headers(o, stamps);
    CURLM *m = curl_multi_init();
    /* every handle by its number, until it is reaped (NULL then) */
    CURL **live = calloc((size_t)o->num_warmups, sizeof *live);
    if (!headers || !m || !live) {
        curl_slist_free_all(headers);
        if (m) curl_multi_cleanup(m);
        free(live);
        return -ENOMEM;
    }
    int cap = o->max_concurrency > 0 ? o->max_concurrency : o->num_warmups;
    int started = 0, in_flight = 0, rc = 0, seen = signals ? *signals : 0;
    while ((started < o->num_warmups || in_flight > 0) && !rc) {
        if (signals && *signals != seen) {
            res->stopped = 1;
            break;
        }
        while (started < o->num_warmups && in_flight < cap) {
            CURL *e = one(o, url, body, len, headers);
            if (e) curl_easy_setopt(e, CURLOPT_PRIVATE, (void *)(intptr_t)started);
            if (!e || curl_multi_add_handle(m, e) != CURLM_OK) {
                if (e) curl_easy_cleanup(e);
                rc = -EIO;
                break;
            }
            live[started] = e;
            started++;
            in_flight++;
        }
        int running = 0;
        if (curl_multi_perform(m, &running) != CURLM_OK ||
            curl_multi_poll(m, NULL, 0, 100, NULL) != CURLM_OK)
            rc = -EIO;
        reap(m, res, live, &in_flight);
    }
    /* abandoned (a signal, an error): the handles still in the multi */
    for (int i = 0; i < started; i++) {
        if (!live[i]) continue;
        curl_multi_remove_handle(m, live[i]);
        curl_easy_cleanup(live[i]);
    }
    free(live);
    curl_multi_cleanup(m);
    curl_slist_free_all(headers);
    res->seconds = (double)(rb_now_ns() - t0) / 1e9;
    return rc;
}
