/* sim_http: see sim_http.h. The parser pauses itself at the end of each
 * message, so a connection serves pipelined requests strictly in order. */
#include "sim_http.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static sim_http_parser *hp_of(http_parser *p)
{
    return (sim_http_parser *)p->data;
}

static int count_header_bytes(sim_http_parser *hp, size_t n)
{
    hp->header_bytes += n;
    if (hp->header_bytes > hp->lim.max_header_bytes) {
        hp->error_status = 431;
        return -1;
    }
    return 0;
}

static int on_message_begin(http_parser *p)
{
    sim_http_parser *hp = hp_of(p);
    hp->in_message = 1;
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    sim_http_parser *hp = hp_of(p);
    hp->in_message = 1;
    if (count_header_bytes(hp, n)) return -1;
    sim_http_request *r = &hp->req;
    size_t have = strlen(r->path);
    if (r->path_too_long) return 0;
    if (have + n >= sizeof r->path) {
        r->path_too_long = 1;
        return 0;
    }
    memcpy(r->path + have, at, n);
    r->path[have + n] = '\0';
    return 0;
}

/* Called when a header's value is complete. */
static void header_done(sim_http_parser *hp)
{
    if (!hp->field_is_value || hp->field_overflow) goto reset;
    hp->value[hp->value_len] = '\0';
    /* Trailing whitespace is not part of the value. */
    while (hp->value_len &&
           (hp->value[hp->value_len - 1] == ' ' || hp->value[hp->value_len - 1] == '\t'))
        hp->value[--hp->value_len] = '\0';
    if (strcasecmp(hp->field, "x-sim-stamp") == 0) {
        hp->req.stamp = strcmp(hp->value, "1") == 0 || strcasecmp(hp->value, "true") == 0;
    } else if (strcasecmp(hp->field, "x-sim-fail") == 0) {
        memcpy(hp->req.fail, hp->value, hp->value_len + 1);
    } else if (strcasecmp(hp->field, "expect") == 0) {
        hp->req.expect_continue = strcasecmp(hp->value, "100-continue") == 0;
    }
reset:
    hp->field_len = 0;
    hp->value_len = 0;
    hp->field_is_value = 0;
    hp->field_overflow = 0;
    hp->field[0] = '\0';
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    sim_http_parser *hp = hp_of(p);
    if (count_header_bytes(hp, n)) return -1;
    if (hp->field_is_value) header_done(hp);
    if (hp->field_len + n >= sizeof hp->field) {
        hp->field_overflow = 1;
        return 0;
    }
    memcpy(hp->field + hp->field_len, at, n);
    hp->field_len += n;
    hp->field[hp->field_len] = '\0';
    return 0;
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    sim_http_parser *hp = hp_of(p);
    if (count_header_bytes(hp, n)) return -1;
    hp->field_is_value = 1;
    if (hp->value_len + n >= sizeof hp->value) {
        hp->field_overflow = 1; /* no header we read is that long */
        return 0;
    }
    memcpy(hp->value + hp->value_len, at, n);
    hp->value_len += n;
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    sim_http_parser *hp = hp_of(p);
    if (hp->field_is_value) header_done(hp);
    hp->headers_done = 1;
    sim_http_request *r = &hp->req;
    r->method = (int)p->method;
    r->http_minor = p->http_major == 1 ? p->http_minor : 1;
    char *q = strchr(r->path, '?');
    if (q) *q = '\0';
    q = strchr(r->path, '#');
    if (q) *q = '\0';
    /* A declared body that is too large is refused before it is sent. */
    if (!(p->flags & F_CHUNKED) && p->content_length != ULLONG_MAX &&
        p->content_length > hp->lim.max_body_bytes) {
        hp->error_status = 413;
        return -1;
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    sim_http_parser *hp = hp_of(p);
    sim_http_request *r = &hp->req;
    if (r->body_len + n > hp->lim.max_body_bytes) {
        hp->error_status = 413;
        return -1;
    }
    if (rb_buf_add(&hp->body, at, n)) abort(); /* no memory: simserver's policy */
    r->body = hp->body.data;
    r->body_len = hp->body.len;
    return 0;
}

static int on_message_complete(http_parser *p)
{
    sim_http_parser *hp = hp_of(p);
    hp->req.keep_alive = http_should_keep_alive(p);
    hp->done = 1;
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_message_begin,
    .on_url = on_url,
    .on_header_field = on_header_field,
    .on_header_value = on_header_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

static void reset_request(sim_http_parser *hp)
{
    memset(&hp->req, 0, sizeof hp->req);
    rb_buf_reset(&hp->body); /* the memory is kept for the next request */
    hp->req.body = hp->body.data;
    hp->header_bytes = 0;
    hp->in_message = 0;
    hp->headers_done = 0;
    hp->done = 0;
    hp->field_len = hp->value_len = 0;
    hp->field_is_value = hp->field_overflow = 0;
    hp->field[0] = '\0';
}

void sim_http_init(sim_http_parser *hp, const sim_http_limits *lim)
{
    memset(hp, 0, sizeof *hp);
    hp->lim = *lim;
    http_parser_init(&hp->p, HTTP_REQUEST);
    hp->p.data = hp;
}

int sim_http_feed(sim_http_parser *hp, const char *data, size_t len, size_t *used)
{
    *used = 0;
    if (hp->error_status) return hp->error_status;
    if (hp->done) return SIM_HTTP_DONE;
    if (len == 0) return SIM_HTTP_MORE;
    size_t n = http_parser_execute(&hp->p, &settings, data, len);
    *used = n;
    if (hp->error_status) return hp->error_status;
    if (hp->done) return SIM_HTTP_DONE;
    enum http_errno e = HTTP_PARSER_ERRNO(&hp->p);
    if (e == HPE_HEADER_OVERFLOW) return hp->error_status = 431;
    if (e != HPE_OK || n != len) return hp->error_status = 400;
    if (hp->p.upgrade) return hp->error_status = 400;
    return SIM_HTTP_MORE;
}

int sim_http_in_message(const sim_http_parser *hp)
{
    return hp->in_message;
}

void sim_http_next(sim_http_parser *hp)
{
    reset_request(hp);
    http_parser_pause(&hp->p, 0);
}

void sim_http_free(sim_http_parser *hp)
{
    rb_buf_free(&hp->body);
    hp->req.body = NULL;
}

int sim_http_parse_bytes(const char *data, size_t len, const sim_http_limits *lim,
                         sim_http_request_cb on_req, void *ud)
{
    sim_http_parser hp;
    sim_http_init(&hp, lim);
    int count = 0, rc = 0;
    while (len > 0) {
        size_t used = 0;
        int st = sim_http_feed(&hp, data, len, &used);
        data += used;
        len -= used;
        if (st == SIM_HTTP_DONE) {
            if (on_req) on_req(&hp.req, ud);
            count++;
            sim_http_next(&hp);
        } else if (st == SIM_HTTP_MORE) {
            break;
        } else {
            rc = -st;
            break;
        }
    }
    sim_http_free(&hp);
    return rc ? rc : count;
}
