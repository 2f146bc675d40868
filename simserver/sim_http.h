/* sim_http: HTTP/1.1 request framing on top of libhttp-parser. Pure: bytes
 * in, one request at a time out, or the HTTP status that a bad request earns
 * (400, 413, 431). No sockets, no clocks. One parser per connection; owned by
 * the connection's loop thread. The fuzz entry point is sim_http_parse_bytes. */
#ifndef SIM_HTTP_H
#define SIM_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include <http_parser.h>

#include "rb_buf.h"

#define SIM_HTTP_PATH_MAX 256
#define SIM_HTTP_FAIL_MAX 32

typedef struct sim_http_limits {
    size_t max_header_bytes; /* request line + header section; past it: 431 */
    size_t max_body_bytes;   /* past it: 413 */
} sim_http_limits;

/* One parsed request. The body belongs to the parser and stays valid until
 * sim_http_next or sim_http_free. */
typedef struct sim_http_request {
    int method;                   /* enum http_method */
    char path[SIM_HTTP_PATH_MAX]; /* without the query string */
    int path_too_long;
    int http_minor; /* 0 = HTTP/1.0, 1 = HTTP/1.1 */
    int keep_alive;
    int stamp;                    /* X-Sim-Stamp: 1 */
    char fail[SIM_HTTP_FAIL_MAX]; /* X-Sim-Fail value, "" if absent */
    int expect_continue;          /* Expect: 100-continue */
    char *body;
    size_t body_len;
} sim_http_request;

typedef struct sim_http_parser {
    http_parser p;
    sim_http_limits lim;
    sim_http_request req;
    rb_buf body; /* req.body's bytes */
    size_t header_bytes;
    int in_message; /* some bytes of a request were seen */
    int headers_done;
    int done;         /* a whole request is in req */
    int error_status; /* set by the callbacks: 413, 431 */
    /* the header being read: which one it is, and its value so far */
    char field[24];
    size_t field_len;
    int field_is_value;
    int field_overflow;
    char value[SIM_HTTP_FAIL_MAX];
    size_t value_len;
} sim_http_parser;

enum { SIM_HTTP_MORE = 0, SIM_HTTP_DONE = 1 };

void sim_http_init(sim_http_parser *hp, const sim_http_limits *lim);
/* Feeds bytes. Returns SIM_HTTP_DONE when hp->req holds a whole request
 * (*used says how many bytes it took; the rest belongs to the next request),
 * SIM_HTTP_MORE when every byte was taken and more are needed, or an HTTP
 * error status >= 400 (the connection must then be closed). */
int sim_http_feed(sim_http_parser *hp, const char *data, size_t len, size_t *used);
/* True once the current request has begun (for the slow-header deadline). */
int sim_http_in_message(const sim_http_parser *hp);
/* Forgets the finished request and readies the parser for the next one. */
void sim_http_next(sim_http_parser *hp);
void sim_http_free(sim_http_parser *hp);

typedef void (*sim_http_request_cb)(const sim_http_request *req, void *ud);
/* Fuzz entry: parses a whole byte string as one connection's input, calling
 * on_req (may be NULL) for each request. Returns the number of requests, or
 * the negated HTTP error status. */
int sim_http_parse_bytes(const char *data, size_t len, const sim_http_limits *lim,
                         sim_http_request_cb on_req, void *ud);

#endif
