/* lg_worker: one worker process. A libuv loop drives libcurl's multi
 * interface through socket actions (the shape of curl's multi-uv example);
 * requests are dispatched from an rb_timer armed at each next intended time.
 * Every loop callback is timed (a "service unit") so the report can give
 * this worker's utilisation and its M/G/1 queueing prediction. No locks:
 * the worker writes only its own slot of the shared region.
 *
 * The file is long because it is one event loop: the
 * SSE callbacks, the request objects, the end of a request, libcurl's
 * socket and timer callbacks, the dispatch and the worker's end all run on
 * the same loop, share the lg_worker and lg_req state, and are each other's
 * callers (a completion dispatches, a dispatch kicks curl, curl's callbacks
 * end requests). Its sections follow a request's life. What can be pure is
 * out of it: SSE framing (lg_sse), chunk decoding (lg_chunk), bodies
 * (lg_body), the schedule (lg_sched), sessions (lg_session), records
 * (lg_record), the receive clock (lg_rxclock), the wire clock (lg_capture,
 * lg_wire). */

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sched.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "lg_capture.h"
#include "lg_chunk.h"
#include "lg_lora.h"
#include "lg_meter.h"
#include "lg_plan.h"
#include "lg_record.h"
#include "lg_worker.h"
#include "lg_rxclock.h"
#include "lg_session.h"
#include "lg_sse.h"
#include "lg_tls.h"
#include "rb_clock.h"
#include "rb_file.h"
#include "rb_host.h"
#include "rb_timer.h"

#define LG_BATCH 64           /* dispatches per timer callback before yielding */
#define LG_BODY_MAX (1 << 20) /* non-streamed response bodies up to this (body_too_large) */
#define LG_TICK_MS 20

typedef struct lg_worker lg_worker;

typedef struct lg_req {
    CURL *easy;
    lg_worker *w;
    lg_sse sse;
    int in_use;
    int stage;
    int64_t index;
    int64_t intended_ns, dispatch_ns;
    /* receive times: the kernel's (or the fallback of lg_rx_kind) */
    int64_t first_byte_ns, last_byte_ns, cb_ns;
    /* delivery times (curl's write callback): what a user-space client sees */
    int64_t last_byte_u_ns, cb_u_ns;
    lg_rx_kind cb_kind;
    lg_meter_chain tok; /* its content tokens: first and last times, count, max ITL */
    int64_t usage_prompt, usage_completion, usage_cached;
    int64_t stamp_ns; /* the server's send time of the next event (0: none) */
    lg_truth truth;
    int has_truth;
    int done_seen, malformed, error_event, too_large;
    int fd_limit;   /* a socket() for it failed on the descriptor limit */
    int attempts;   /* times curl was about to send this request */
    int local_port; /* its connection's, from curl's pre-request callback */
    /* the wire clock: its first and last bytes' capture times as they left
     * (monotonic; 0: not captured) */
    int64_t sent_wire_ns, sent_wire_last_ns;
    int32_t ds_input_tokens;
    int32_t ds_output_tokens; /* max_tokens asked for (-1: a session's, not known here) */
    rb_buf resp;              /* non-streamed body, capped at LG_BODY_MAX */
    char *own_body;           /* a trace request's rendered body */
    struct lg_req *next_free;
    rb_buf text;       /* multi-turn: the response's text (lg_chunk_decode_text) */
    int64_t sess_user; /* multi-turn: its user (-1: none) */
    /* --save-token-times: its first tt_n content tokens' arrival times, us
     * from its dispatch, and the tokens after them (the cap reached, or no
     * memory to grow); tt_us grows by doubling up to the cap and is kept
     * across the object's reuse (NULL while the flag is off) */
    int64_t *tt_us;
    int64_t tt_n, tt_alloc, tt_dropped;
} lg_req;

/* One poll handle per descriptor, kept for the socket's life (until curl's
 * close callback): curl's wishes change only the mask, and only when it
 * differs, since libuv's uv_poll_start takes the descriptor out of epoll and
 * puts it back. When curl stops watching a socket (CURL_POLL_REMOVE) the
 * handle is stopped at once: curl 7.88 closes a connecting socket that timed
 * out without the close callback, and a handle still armed on it makes
 * libuv's next epoll_ctl(ADD) fail with EBADF, which libuv answers with
 * abort(). A stopped handle is reused when a socket gets the descriptor. */
typedef struct sock_ctx {
    uv_poll_t poll;
    curl_socket_t fd;
    lg_worker *w;
    int armed;  /* the mask uv_poll_start was given (0: stopped) */
    int wanted; /* the mask curl asks for (0: not watched) */
} sock_ctx;

struct lg_worker {
    const lg_plan *p;
    const lg_opts *o;
    lg_tls tls; /* the run's TLS options, applied to every handle */
    /* The target speaks TLS: a read's bytes are ciphertext, and the events
     * it delivers come out of the TLS layer after several reads, so no
     * kernel stamp can be proved exact (rx_close). */
    int tls_target;
    int id;
    uv_loop_t loop;
    CURLM *multi;
    uv_timer_t curl_timer;
    uv_timer_t tick;
    rb_timer dispatch;
    struct curl_slist *headers;
    CURLU *url; /* the target, parsed once (NULL: curl parses p->url) */
    lg_sched *sched;
    lg_arrival next;
    int have_next;
    int sched_done; /* no more dispatches (end of schedule, or stop) */
    int finishing;
    int64_t closed_next; /* closed loop: next global index */
    int cap;             /* concurrency slots (0: none) */
    /* --closed-stage: the stage this worker is in, its first global index,
     * and when the next stage may start after the pause (0: not set) */
    int closed_stage;
    int64_t closed_base, closed_resume_ns;
    int64_t t0_ns;
    int64_t drain_deadline_ns;
    int64_t in_flight;
    lg_req **all; /* every request object ever made (reused) */
    size_t n_all, cap_all;
    lg_req *free_list;
    sock_ctx **socks; /* by descriptor: the live sockets' poll handles */
    size_t n_socks;
    lg_slot *slot;
    lg_shared *sh;
    lg_dispatch_sample *sample;
    /* the send window's and each stage's accounting of the loop and the host */
    lg_meter meter;
    /* client cost */
    uint64_t rng;
    /* detailed records (rb_file's checked record writer) */
    rb_recfile rec;
    int have_rec;
    int rec_warned; /* the first lost record has been told on stderr */
    /* --save-token-times: each request's cap (0: off, nothing per token),
     * and the line a record with token times is formatted in
     * (lg_record_line_max(tt_cap) bytes; NULL: the stack's LG_RECORD_MAX) */
    int64_t tt_cap;
    char *tt_line;
    int64_t last_flush_ns;
    int64_t last_lag_ns;
    int pending_kick;
    /* receive clock */
    int rx_kernel; /* the kernel's stamps are taken (--receive-clock kernel or wire) */
    int rx_wire;   /* --receive-clock wire: tokens timed from the capture */
    lg_wclock wc;  /* the capture (wc.on 0: none, the kernel's stamps instead) */
    uint64_t cap_packets_seen, cap_drops_seen; /* accounted into the stages so far */
    int port_start;         /* where the worker's handles start in its port range */
    lg_clock_map clock;     /* CLOCK_REALTIME -> CLOCK_MONOTONIC */
    lg_rx_read rd;          /* the last stamped read (port -1: none) */
    int64_t cb_entry_ns;    /* the loop callback under way started then (0: none) */
    int rx_keeper;          /* a socket that keeps the kernel's stamping on (-1: none) */
    rb_cpu_latency cpu_lat; /* --cpu-latency-us's request, held until the end */
    /* per connection, by descriptor: its local port, when its queue was
     * last seen empty, and how many data segments it had received then */
    struct conn_rx {
        int port;
        int known; /* segments is a count at an empty queue */
        int64_t drained_ns, segments;
        int64_t consumed; /* bytes read from it so far */
        /* its request stream: bytes written so far, the last request's
         * [req_lo, req_hi), and whether it was read from since it last
         * wrote (the next write then starts a request: HTTP/1.1 sends a
         * request whole before its response, with no 100-continue) */
        int64_t sent, req_lo, req_hi;
        int reading;
        lg_tls_scan tls; /* an https target: its records' headers so far */
    } * conn_rx;
    size_t n_conn_rx;
    int rx_fd; /* the descriptor of the last read (-1: none) */
    /* an https target: the last read ended a TLS record (lg_tls_scan), so
     * the plaintext delivered before the next read came from that record */
    int tls_read_ended;
    /* --batch-tick: the time slept between ticks (the loop's own idle time
     * is then ~0: it polls without waiting), and the ticks whose work ran
     * past the next tick (the next one then started at once) */
    int64_t tick_idle_ns;
    uint64_t ticks, ticks_overrun;
    /* multi-turn sessions (lg_session.h; NULL: none); from_queue while a
     * waiting round is dispatched */
    lg_sessions *sess;
    int sess_from_queue;
};

/* ---- small helpers ---------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    /* xorshift64*: enough for drawing exponential client costs. */
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static void spin_ns(int64_t ns)
{
    if (ns <= 0) return;
    int64_t until = rb_now_ns() + ns;
    while (rb_now_ns() < until) {
    }
}

static void client_cost(lg_worker *w)
{
    const lg_opts *o = w->o;
    if (o->client_cost == LG_COST_NONE) return;
    double us = o->client_cost_us;
    if (o->client_cost == LG_COST_EXP) {
        double u = ((double)(rng_next(&w->rng) >> 11) + 0.5) / 9007199254740992.0;
        us = -us * log(u);
    }
    spin_ns((int64_t)(us * 1000.0));
}

static void rx_close(lg_worker *w);

/* A loop callback starts: its entry is the pickup time of what it reads. */
static inline int64_t svc_begin(lg_worker *w)
{
    return w->cb_entry_ns = rb_now_ns();
}

static inline void svc_end(lg_worker *w, int64_t t0)
{
    rx_close(w);
    w->cb_entry_ns = 0;
    if (w->meter.in_window) lg_meter_callback(&w->meter, rb_now_ns() - t0);
}

static lg_stage_stats *stats_of(lg_worker *w, int stage)
{
    if (stage < 0) stage = 0;
    if (stage >= w->p->n_stages) stage = w->p->n_stages - 1;
    return lg_plan_stats(w->p, w->id, stage);
}

/* The loop's idle time: waiting in epoll, and under --batch-tick the sleeps
 * between ticks. */
static int64_t loop_idle_ns(lg_worker *w)
{
    return (int64_t)uv_metrics_idle_time(&w->loop) + w->tick_idle_ns;
}

/* Closes the accounting of the stage being timed and opens `next`, from one
 * reading of the clock, the loop and the host (lg_meter_stage). Called at
 * stage changes: a few times a run. */
static void account_stage(lg_worker *w, int next)
{
    rb_host_reading h;
    rb_host_sample(&h);
    int64_t now = rb_now_ns(), idle = loop_idle_ns(w);
    int s = w->meter.stage;
    lg_meter_stage(&w->meter, now, idle, &h, next, s >= 0 ? stats_of(w, s) : NULL);
}

static void end_window(lg_worker *w)
{
    if (!w->meter.in_window) return;
    rb_host_reading h;
    rb_host_sample(&h);
    int64_t now = rb_now_ns(), idle = loop_idle_ns(w);
    int s = w->meter.stage;
    lg_meter_end_window(&w->meter, now, idle, &h, s >= 0 ? stats_of(w, s) : NULL, w->slot);
    w->slot->clock_spread_ns = w->clock.spread_ns;
    w->slot->clock_width_ns = w->clock.width_ns;
    w->slot->clock_steps = w->clock.steps;
    w->slot->ticks = w->ticks;
    w->slot->ticks_overrun = w->ticks_overrun;
}

/* ---- SSE handling ----------------------------------------------------- */

/* The wire time of the byte at p of the last read on r's connection, on
 * the monotonic clock and never after the delivery tu: 1 and *t, or 0 (not
 * captured: the caller keeps the kernel's time). */
static int wire_time(lg_worker *w, const lg_req *r, const char *p, int64_t tu, int64_t *t)
{
    int64_t real;
    /* Under TLS p is plaintext, not in the read: the record that carried it
     * ended with the last read, when that read ended one (lg_tls_scan). */
    if (w->tls_target ? !w->tls_read_ended || lg_wclock_time_last(&w->wc, r->local_port, &real)
                      : lg_wclock_time(&w->wc, r->local_port, p, &real))
        return 0;
    int64_t m = lg_clock_map_to_mono(&w->clock, real);
    if (m <= 0 || tu - m > 60000000000LL) return 0; /* a clock step */
    *t = m < tu ? m : tu;
    return 1;
}

/* --save-token-times: one content token's arrival t_ns, the time the ITL
 * histogram took (lg_meter_token), kept as us from the dispatch while the
 * request is under the cap; past it, or when the list cannot grow, the
 * token is counted instead, and so is every later one: the list stays the
 * first tokens, in order. */
static void token_time(const lg_worker *w, lg_req *r, int64_t t_ns)
{
    if (r->tt_dropped || r->tt_n == w->tt_cap) {
        r->tt_dropped++;
        return;
    }
    if (r->tt_n == r->tt_alloc) {
        int64_t n = r->tt_alloc ? 2 * r->tt_alloc : 64;
        if (n > w->tt_cap) n = w->tt_cap;
        int64_t *a = realloc(r->tt_us, (size_t)n * sizeof *a);
        if (!a) {
            r->tt_dropped++;
            return;
        }
        r->tt_us = a;
        r->tt_alloc = n;
    }
    int64_t d = t_ns - r->dispatch_ns;
    r->tt_us[r->tt_n++] = d >= 0 ? d / 1000 : -((999 - d) / 1000); /* floor */
}

static void on_sse_event(void *user, const char *data, size_t len)
{
    lg_req *r = user;
    lg_worker *w = r->w;
    lg_meter_event(&w->meter);
    stats_of(w, r->stage)->events++;
    lg_chunk c;
    if (lg_chunk_decode_text(data, len, &c, w->sess ? &r->text : NULL) < 0) {
        r->malformed = 1;
        r->stamp_ns = 0;
        client_cost(w);
        return;
    }
    if (c.flags & LG_CHUNK_DONE) r->done_seen = 1;
    if (c.flags & LG_CHUNK_ERROR) r->error_event = 1;
    if (c.flags & LG_CHUNK_CONTENT) {
        lg_stage_stats *st = stats_of(w, r->stage);
        lg_meter_tok tok = {.t_ns = r->cb_ns,
                            .tu_ns = r->cb_u_ns,
                            .kind = r->cb_kind,
                            .read_kind = r->cb_kind,
                            .entry_ns = w->cb_entry_ns,
                            .stamp_ns = r->stamp_ns,
                            .dispatch_ns = r->dispatch_ns};
        if (w->rx_wire) {
            if (wire_time(w, r, r->sse.at, tok.tu_ns, &tok.t_ns))
                tok.kind = LG_RX_WIRE;
            else
                st->wire_fallbacks++;
        }
        lg_meter_token(st, &r->tok, &tok);
        if (w->tt_cap) token_time(w, r, tok.t_ns);
        if (tok.kind == LG_RX_KERNEL) {
            /* a token of the read's batch (lg_rx_read_exact judges it) */
            if (!w->rd.tokens && r->dispatch_ns > w->rd.lower_ns)
                w->rd.lower_ns = r->dispatch_ns; /* nothing arrived before the request */
            w->rd.tokens++;
            w->rd.stage = r->stage;
        }
    }
    if (c.flags & LG_CHUNK_USAGE) {
        if (c.prompt_tokens >= 0) r->usage_prompt = c.prompt_tokens;
        if (c.completion_tokens >= 0) r->usage_completion = c.completion_tokens;
        if (c.cached_tokens >= 0) r->usage_cached = c.cached_tokens;
    }
    r->stamp_ns = 0;
    client_cost(w);
}

static void on_sse_comment(void *user, const char *text, size_t len)
{
    lg_req *r = user;
    int64_t stamp;
    lg_truth t;
    int k = lg_chunk_comment(text, len, &stamp, &t);
    if (k == 1) {
        r->stamp_ns = stamp;
        if (!r->w->slot->saw_stamps) r->w->slot->saw_stamps = 1;
    } else if (k == 2) {
        r->truth = t;
        r->has_truth = 1;
    }
}

/* At r's first response byte: the capture times of its request's bytes,
 * [req_lo, req_hi) of the connection's request stream as written. */
static void wire_departure(lg_worker *w, lg_req *r)
{
    int fd = w->rx_fd;
    if (fd < 0 || (size_t)fd >= w->n_conn_rx) return;
    const struct conn_rx *cr = &w->conn_rx[fd];
    if (cr->port != r->local_port || cr->req_hi <= cr->req_lo) return;
    int64_t first, last;
    if (lg_wclock_sent(&w->wc, cr->port, (uint64_t)cr->req_lo, (uint64_t)cr->req_hi, &first,
                       &last) != 0)
        return;
    int64_t now = rb_now_ns(), a = lg_clock_map_to_mono(&w->clock, first),
            b = lg_clock_map_to_mono(&w->clock, last);
    if (a <= 0 || b < a || now - a > 60000000000LL) return; /* a clock step */
    r->sent_wire_ns = a;
    r->sent_wire_last_ns = b;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    lg_req *r = userdata;
    size_t n = size * nmemb;
    /* Once per callback, applied to all its events: the delivery time, and
     * the receive time from the pickup that read these bytes. */
    int64_t tu = rb_now_ns();
    int64_t t = lg_rx_event_time(&r->w->rd, r->local_port, r->w->cb_entry_ns, tu, &r->cb_kind);
    /* A reply read in the callback that sent its request: that callback's
     * start is no receive time for it, its own send is the bound below. */
    if (t < r->dispatch_ns) t = r->dispatch_ns;
    r->cb_ns = t;
    r->cb_u_ns = tu;
    /* The piece's last byte on the wire: the response's first and last byte times. */
    if (r->w->rx_wire && n) wire_time(r->w, r, ptr + n - 1, tu, &t);
    if (!r->first_byte_ns && r->w->rx_wire) wire_departure(r->w, r);
    if (!r->first_byte_ns) r->first_byte_ns = t;
    r->last_byte_ns = t;
    r->last_byte_u_ns = tu;
    if (r->w->o->stream) {
        if (lg_sse_feed(&r->sse, ptr, n) < 0) {
            r->malformed = 1;
            lg_sse_reset(&r->sse);
        }
    } else {
        /* past the cap the buffer is freed and the error sticks: the rest of
         * the body is dropped, the request counted as too large */
        int rc = rb_buf_add(&r->resp, ptr, n);
        if (rc == -EMSGSIZE)
            r->too_large = 1;
        else if (rc)
            r->malformed = 1;
    }
    return n;
}

/* Non-streamed: simserver's truth comes in X-Sim-* response headers. */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    lg_req *r = userdata;
    if (lg_chunk_truth_header(ptr, size * nmemb, &r->truth)) r->has_truth = 1;
    return size * nmemb;
}

/* curl silently re-sends a request whose reused connection died before any
 * response byte. That would hide the server's fault and send it a request
 * the schedule never asked for, so the second attempt is refused (and the
 * request counted as a reset). */
static int on_prereq(void *clientp, char *conn_primary_ip, char *conn_local_ip,
                     int conn_primary_port, int conn_local_port)
{
    lg_req *r = clientp;
    r->local_port = conn_local_port;
    return ++r->attempts > 1 ? CURL_PREREQFUNC_ABORT : CURL_PREREQFUNC_OK;
}

/* Every new connection asks the kernel for receive stamps. */
/* The receive bookkeeping of descriptor fd (NULL: no memory). */
static struct conn_rx *conn_rx_of(lg_worker *w, int fd)
{
    if (fd < 0) return NULL;
    if ((size_t)fd >= w->n_conn_rx) {
        size_t n = w->n_conn_rx ? w->n_conn_rx : 256;
        while (n <= (size_t)fd)
            n *= 2;
        struct conn_rx *a = realloc(w->conn_rx, n * sizeof *a);
        if (!a) return NULL;
        memset(a + w->n_conn_rx, 0, (n - w->n_conn_rx) * sizeof *a);
        w->conn_rx = a;
        w->n_conn_rx = n;
    }
    return &w->conn_rx[fd];
}

static int on_sockopt(void *clientp, curl_socket_t fd, curlsocktype purpose)
{
    lg_worker *w = clientp;
    if (purpose != CURLSOCKTYPE_IPCXN || !w->rx_kernel) return CURL_SOCKOPT_OK;
    if (lg_rx_enable((int)fd) != 0) w->slot->rx_enable_failed++;
    struct conn_rx *cr = conn_rx_of(w, (int)fd);
    /* A new connection: nothing received yet; its port once connected. */
    if (cr) *cr = (struct conn_rx){.port = -1, .known = 1};
    return CURL_SOCKOPT_OK;
}

/* Accounts the tokens of the last read: exact, or batched with a window. */
static void rx_close(lg_worker *w)
{
    lg_rx_read *rd = &w->rd;
    if (rd->port < 0 || !rd->tokens) return;
    lg_stage_stats *st = stats_of(w, rd->stage);
    st->pickups++;
    int64_t win;
    /* Under TLS the events are decrypted out of several reads and given the
     * last one's stamp: measured at rho 0.75 through a TLS terminator, every
     * token judged exact by the read's own bookkeeping while the median ITL
     * read 0 (results/loadgen/tls_clock-f1e7242.md). They are upper bounds. */
    uint64_t exact = lg_rx_read_exact(rd, LG_RX_EXACT_TOL_NS, &win);
    if (!w->tls_target) st->rx_exact_tokens += exact;
    if (rd->tokens > 1)
        mdl_hist_record_n(lg_stats_hist(st, LG_H_RX_WINDOW), (uint64_t)win, rd->tokens - 1);
    rd->tokens = 0;
}

/* The wire clock after a read: the ring's new segments taken, timed. */
static void wire_read(lg_worker *w, int port, const void *buf, size_t n, uint64_t off)
{
    int64_t t0 = rb_now_ns();
    int got = lg_wclock_read(&w->wc, port, buf, n, off);
    lg_stage_stats *st = stats_of(w, w->slot->cur_stage);
    if (got > 0) st->cap_packets += (uint64_t)got;
    st->cap_cost_ns += rb_now_ns() - t0;
}

/* The capture's drops (pcap_stats) since the last call, into the stage
 * under way. Called from the tick and at the end. */
static void wire_account(lg_worker *w)
{
    if (!w->wc.cap) return;
    uint64_t packets, drops;
    lg_cap_stats(w->wc.cap, &packets, &drops);
    if (drops > w->cap_drops_seen) {
        stats_of(w, w->slot->cur_stage)->cap_drops += drops - w->cap_drops_seen;
        w->cap_drops_seen = drops;
    }
}

/* Every recv() curl makes, with its kernel stamp (lg_rxclock.h). */
static void on_rx_read(void *ctx, int fd, const void *buf, ssize_t n, size_t len, int64_t real_ns)
{
    lg_worker *w = ctx;
    rx_close(w);
    struct conn_rx *cr = conn_rx_of(w, fd);
    if (!cr) {
        w->rd.port = -1;
        return;
    }
    if (cr->port <= 0) cr->port = lg_rx_local_port(fd);
    if (!cr->reading) { /* the response's first read: the request was all written */
        cr->req_hi = cr->sent;
        cr->reading = 1;
    }
    w->rx_fd = fd;
    int64_t now = rb_now_ns();
    int64_t k = real_ns ? lg_clock_map_to_mono(&w->clock, real_ns) : 0;
    /* A stamp from before now, and not absurdly old (a clock step). */
    if (k <= 0 || k > now + 1000 || now - k > 60000000000LL) k = 0;
    /* One TCP_INFO call: the segments and bytes received so far. When the
     * bytes equal those read, the queue is empty and the count is a sound
     * baseline for the next read; a segment that arrived after this read
     * shows as bytes left, and then the count only overstates. */
    if (w->rx_wire) wire_read(w, cr->port, buf, (size_t)n, (uint64_t)cr->consumed);
    if (w->tls_target && w->rx_wire)
        w->tls_read_ended = lg_tls_scan_read(&cr->tls, buf, (size_t)n) == 1;
    cr->consumed += n;
    int64_t segs_now = -1, rcvd = -1, left = -1;
    if (lg_rx_tcp_counts(fd, &segs_now, &rcvd) == 0 && rcvd >= cr->consumed)
        left = rcvd - cr->consumed;
    w->rd = (lg_rx_read){.port = cr->port,
                         .kernel_ns = k,
                         .lower_ns = cr->drained_ns,
                         .segments = cr->known && left >= 0 ? segs_now - cr->segments : -1,
                         .stage = 0};
    if (left >= 0) {
        lg_stage_stats *st = stats_of(w, w->slot->cur_stage);
        lg_stats_record_ns(st, LG_H_RXQ, (int64_t)n + left); /* the queue's depth at the read */
    }
    if (left == 0) {
        cr->known = 1;
        cr->segments = segs_now;
        cr->drained_ns = now;
    } else {
        cr->known = 0;
    }
    (void)len;
}

/* Every send() curl makes: counts the connection's request stream. */
static void on_tx_write(void *ctx, int fd, size_t n)
{
    lg_worker *w = ctx;
    if (fd < 0 || (size_t)fd >= w->n_conn_rx) return;
    struct conn_rx *cr = &w->conn_rx[fd];
    if (cr->reading) { /* a write after a read: the next request starts */
        cr->req_lo = cr->sent;
        cr->reading = 0;
    }
    cr->sent += (int64_t)n;
}

static void sample_clock(lg_worker *w)
{
    int64_t a = rb_now_ns(), real = rb_wall_ns(), b = rb_now_ns();
    lg_clock_map_sample(&w->clock, a, real, b);
}

/* ---- request objects -------------------------------------------------- */

static int on_close_socket(void *clientp, curl_socket_t s);

/* curl's socket(): a failure on loadgen's own descriptor limit is marked,
 * so the request is classed client_fd_limit, not a server's connect error. */
static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose, struct curl_sockaddr *addr)
{
    lg_req *r = clientp;
    (void)purpose;
    curl_socket_t s = socket(addr->family, addr->socktype, addr->protocol);
    if (s == CURL_SOCKET_BAD && (errno == EMFILE || errno == ENFILE)) r->fd_limit = 1;
    if (s != CURL_SOCKET_BAD && r->w->wc.port_lo) {
        /* A socket bound in this worker's own port range (the wire clock
         * with k > 1) closes with a reset, leaving no TIME_WAIT behind: a
         * bound port in TIME_WAIT refuses bind() for 60 s, curl tries the
         * range's ports one by one, and back-to-back runs (a calibration's
         * batches after a saturated level: measured, 7,762 of the 8,192
         * ports of k=2's two ranges) then failed half their requests (class
         * other, bind exhausted) while the scan kept the loop busy. The
         * connection is done by the time curl closes it. */
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    return s;
}

static lg_req *req_new(lg_worker *w)
{
    lg_req *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->w = w;
    r->easy = curl_easy_init();
    if (!r->easy) {
        free(r);
        return NULL;
    }
    if (w->n_all == w->cap_all) {
        size_t cap = w->cap_all ? w->cap_all * 2 : 64;
        lg_req **a = realloc(w->all, cap * sizeof *a);
        if (!a) {
            curl_easy_cleanup(r->easy);
            free(r);
            return NULL;
        }
        w->all = a;
        w->cap_all = cap;
    }
    w->all[w->n_all++] = r;
    lg_sse_init(&r->sse, on_sse_event, on_sse_comment, r, 0);
    CURL *e = r->easy;
    const lg_opts *o = w->o;
    /* The target parsed once per worker: with a plain URL string curl
     * parses it again and re-renders it at every transfer's start. */
    if (w->url)
        curl_easy_setopt(e, CURLOPT_CURLU, w->url);
    else
        curl_easy_setopt(e, CURLOPT_URL, w->p->url);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, w->headers);
    curl_easy_setopt(e, CURLOPT_POST, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(e, CURLOPT_PRIVATE, r);
    if (!o->stream) {
        curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(e, CURLOPT_HEADERDATA, r);
    }
    curl_easy_setopt(e, CURLOPT_PREREQFUNCTION, on_prereq);
    curl_easy_setopt(e, CURLOPT_PREREQDATA, r);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
    curl_easy_setopt(e, CURLOPT_SOCKOPTDATA, w);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, r);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
    curl_easy_setopt(e, CURLOPT_CLOSESOCKETDATA, w);
    /* No proxy from the environment: requests go to the target, which the
     * loopback guard has checked, and nowhere else. */
    curl_easy_setopt(e, CURLOPT_PROXY, "");
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    if (w->wc.port_lo) {
        /* This worker's own local ports: its capture filter keeps only them.
         * curl reuses a connection only for a handle with the same local
         * port settings, so every handle of the worker has the same start,
         * drawn once (port_start): curl tries the ports in order, and a
         * run that always started at the range's first port would pay a
         * failed bind for each one an earlier run left in TIME_WAIT. */
        curl_easy_setopt(e, CURLOPT_LOCALPORT, (long)w->port_start);
        curl_easy_setopt(e, CURLOPT_LOCALPORTRANGE, (long)(w->wc.port_hi - w->port_start + 1));
    }
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(o->request_timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->request_timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, NULL);
    lg_tls_apply(e, &w->tls);
    return r;
}

static lg_req *req_get(lg_worker *w)
{
    lg_req *r = w->free_list;
    if (r) {
        w->free_list = r->next_free;
    } else {
        r = req_new(w);
        if (!r) return NULL;
    }
    lg_sse_reset(&r->sse);
    r->in_use = 1;
    r->first_byte_ns = r->last_byte_ns = r->cb_ns = 0;
    r->last_byte_u_ns = r->cb_u_ns = 0;
    r->tok = (lg_meter_chain){0};
    r->usage_prompt = r->usage_completion = r->usage_cached = -1;
    r->stamp_ns = 0;
    r->has_truth = 0;
    r->truth = (lg_truth){0};
    r->done_seen = r->malformed = r->error_event = r->too_large = r->fd_limit = 0;
    r->attempts = 0;
    r->sent_wire_ns = r->sent_wire_last_ns = 0;
    r->tt_n = r->tt_dropped = 0;
    if (r->resp.err) rb_buf_free(&r->resp); /* the last one's error is not this one's */
    r->resp = (rb_buf){.data = r->resp.data, .cap = r->resp.cap, .max = LG_BODY_MAX};
    return r;
}

static void req_put(lg_worker *w, lg_req *r)
{
    r->in_use = 0;
    free(r->own_body);
    r->own_body = NULL;
    r->next_free = w->free_list;
    w->free_list = r;
}

/* ---- the end of a request --------------------------------------------- */

/* Whether a 2xx response's Content-Type is one a completion comes in: an
 * SSE stream or JSON (application/json or application/...+json). A missing
 * header is let through; a text/html page (a proxy's or a portal's) is not. */
static int content_type_ok(const char *ct)
{
    if (!ct) return 1;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, "; \t");
    if (n == 17 && strncasecmp(ct, "text/event-stream", n) == 0) return 1;
    if (n == 16 && strncasecmp(ct, "application/json", n) == 0) return 1;
    return n > 17 && strncasecmp(ct, "application/", 12) == 0 &&
           strncasecmp(ct + n - 5, "+json", 5) == 0;
}

static lg_class classify(lg_req *r, CURLcode res, long http, int stream)
{
    if (r->attempts > 1) return LG_FAIL_RESET;
    switch (res) {
    case CURLE_OK: {
        /* curl takes any three digits; 600-999 are counted by code like the
         * rest (a status outside the table would be in no class) */
        if (http < 100 || http >= LG_HTTP_CODES) return LG_FAIL_MALFORMED;
        if (http < 200 || http >= 300) return LG_FAIL_HTTP;
        const char *ct = NULL;
        curl_easy_getinfo(r->easy, CURLINFO_CONTENT_TYPE, &ct);
        if (!content_type_ok(ct)) return LG_FAIL_MALFORMED;
        if (r->too_large) return LG_FAIL_TOO_LARGE;
        if (r->malformed) return LG_FAIL_MALFORMED;
        if (stream && !r->done_seen) return LG_FAIL_MIDSTREAM;
        if (r->error_event) return LG_FAIL_MIDSTREAM;
        return LG_OK;
    }
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
        return r->fd_limit ? LG_FAIL_FD_LIMIT : LG_FAIL_CONNECT;
    case CURLE_OPERATION_TIMEDOUT:
        return LG_FAIL_TIMEOUT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
        return LG_FAIL_TLS;
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_HTTP2_STREAM:
        if (r->malformed) return LG_FAIL_MALFORMED;
        /* Bytes of a response arrived: the stream broke in the middle. */
        return r->first_byte_ns ? LG_FAIL_MIDSTREAM : LG_FAIL_RESET;
    default:
        return LG_FAIL_OTHER;
    }
}

/* Tells the coordinator (through the slot) how the records fare, and the
 * user once when they start being lost. */
static void rec_account(lg_worker *w)
{
    lg_slot *s = w->slot;
    s->detailed_written = w->rec.written;
    s->detailed_lost = w->rec.lost;
    s->detailed_err = w->rec.err;
    if (w->rec.lost && !w->rec_warned) {
        w->rec_warned = 1;
        fprintf(stderr,
                "loadgen: worker %d: writing the per-request records: %s; records are "
                "being lost (counted in the report)\n",
                w->id, rb_file_strerror(w->rec.err));
    }
}

/* One JSON line per finished request (lg_record); index -1 with no request
 * object (a dispatch that failed before it had one). r: the request's token
 * times under --save-token-times (NULL: none, with no request object). */
static void write_record(lg_worker *w, int64_t index, int stage, int64_t first_byte_ns,
                         const lg_req_result *res, const lg_req *r)
{
    if (!w->have_rec) return;
    int64_t t0 = w->t0_ns;
#define REL(x) ((x) ? (int64_t)((x)-t0) : -1)
    lg_record rec = {.index = index,
                     .worker = w->id,
                     .stage = stage,
                     .intended_ns = REL(res->intended_ns),
                     .dispatch_ns = REL(res->dispatch_ns),
                     .first_byte_ns = REL(first_byte_ns),
                     .first_token_ns = REL(res->first_token_ns),
                     .end_ns = REL(res->end_ns),
                     .input_tokens = res->input_tokens,
                     .output_tokens = res->output_tokens,
                     .status = res->http_status,
                     .has_truth = res->has_truth,
                     .queue_ns = res->truth_queue_ns,
                     .prefill_ns = res->truth_prefill_ns,
                     .decode_ns = res->truth_decode_ns,
                     .has_sent = res->sent_wire_ns != 0,
                     .sent_wire_ns = REL(res->sent_wire_ns),
                     .sent_wire_last_ns = REL(res->sent_wire_last_ns),
                     .has_token_times = w->tt_cap > 0,
                     .token_times_us = r ? r->tt_us : NULL,
                     .n_token_times = r ? r->tt_n : 0,
                     .token_times_dropped = r ? r->tt_dropped : 0,
                     .model = w->o->n_lora && index >= 0 ? lg_lora_model(w->o, index) : NULL};
#undef REL
    /* the report's name for the class: http_429 */
    if (res->cls == LG_FAIL_HTTP)
        snprintf(rec.cls, sizeof rec.cls, "http_%d", res->http_status);
    else
        snprintf(rec.cls, sizeof rec.cls, "%s", lg_class_names[res->cls]);
    char stack_line[LG_RECORD_MAX];
    char *line = w->tt_line ? w->tt_line : stack_line;
    size_t cap = w->tt_line ? lg_record_line_max(w->tt_cap) : sizeof stack_line;
    int n = lg_record_format(&rec, line, cap);
    if (n > 0) {
        if (rb_rec_add(&w->rec, line, (size_t)n) != 0) rec_account(w);
    } else {
        w->rec.lost++; /* cannot happen with these fields; counted if it does */
        rec_account(w);
    }
}

static void write_detailed(lg_worker *w, const lg_req *r, const lg_req_result *res)
{
    write_record(w, r->index, r->stage, r->first_byte_ns, res, r);
}

static void maybe_finish(lg_worker *w);
static void dispatch_due(lg_worker *w);
static int dispatch_one(lg_worker *w, const lg_arrival *a, int64_t intended_ns, int64_t now);

/* Multi-turn: user's round ended; its first waiting round goes now, unless
 * the run is stopping (cancelled, a stop, past the deadline): then every
 * round still waiting for it is counted as not dispatched. */
static void session_next(lg_worker *w, int64_t user, int cancelled)
{
    lg_arrival a;
    int64_t intended;
    while (lg_session_next(w->sess, user, &a, &intended)) {
        int64_t now = rb_now_ns();
        if (cancelled || w->finishing || __atomic_load_n(&w->sh->stop, __ATOMIC_RELAXED) ||
            (w->p->end_deadline_ns && now >= w->p->end_deadline_ns)) {
            stats_of(w, a.stage)->not_dispatched++;
            continue;
        }
        w->sess_from_queue = 1;
        int rc = dispatch_one(w, &a, intended, now);
        w->sess_from_queue = 0;
        if (rc == 0) break; /* in flight: the user's next round waits for it */
    }
}

/* Requested against served lengths, for a completed request whose response
 * carried usage (lg_report's "lengths"). */
static void record_lengths(lg_stage_stats *st, const lg_req *r, lg_class cls)
{
    if (cls != LG_OK) return;
    if (r->usage_prompt >= 0 && r->ds_input_tokens > 0) {
        mdl_hist_record(lg_stats_hist(st, LG_H_IN_REQUESTED), (uint64_t)r->ds_input_tokens);
        mdl_hist_record(lg_stats_hist(st, LG_H_IN_SERVED), (uint64_t)r->usage_prompt);
    }
    if (r->usage_completion >= 0 && r->ds_output_tokens > 0) {
        mdl_hist_record(lg_stats_hist(st, LG_H_OUT_REQUESTED), (uint64_t)r->ds_output_tokens);
        mdl_hist_record(lg_stats_hist(st, LG_H_OUT_SERVED), (uint64_t)r->usage_completion);
    }
}

static void finish_request(lg_worker *w, lg_req *r, CURLcode res, int cancelled)
{
    long http = 0;
    curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &http);
    int stream = w->o->stream;
    if (stream) {
        lg_sse_finish(&r->sse);
    } else if (!cancelled && res == CURLE_OK && http >= 200 && http < 300) {
        lg_chunk c;
        if (r->resp.len == 0 || r->resp.err ||
            lg_chunk_decode_text(r->resp.data, r->resp.len, &c, w->sess ? &r->text : NULL) < 0) {
            r->malformed = 1;
        } else {
            if (c.flags & LG_CHUNK_ERROR) r->error_event = 1;
            if (c.flags & LG_CHUNK_USAGE) {
                r->usage_prompt = c.prompt_tokens;
                r->usage_completion = c.completion_tokens;
                r->usage_cached = c.cached_tokens;
            }
            if (c.flags & LG_CHUNK_CONTENT) r->tok.tokens = 1;
            r->tok.first_ns = r->last_byte_ns; /* TTFT = E2E without streaming */
            r->tok.first_u_ns = r->last_byte_u_ns;
        }
        lg_meter_event(&w->meter);
        stats_of(w, r->stage)->events++;
        client_cost(w);
    }
    lg_req_result rr = {
        .intended_ns = r->intended_ns,
        .dispatch_ns = r->dispatch_ns,
        .first_token_ns = r->tok.first_ns,
        .end_ns = r->last_byte_ns ? r->last_byte_ns : rb_now_ns(),
        .first_token_u_ns = r->tok.first_u_ns,
        .end_u_ns = r->last_byte_u_ns,
        .input_tokens = r->usage_prompt >= 0 ? r->usage_prompt : r->ds_input_tokens,
        .output_tokens = r->usage_completion >= 0 ? r->usage_completion : r->tok.tokens,
        .has_cached = r->usage_cached >= 0,
        .cached_tokens = r->usage_cached,
        .max_itl_ns = r->tok.max_gap_ns,
        .cls = cancelled ? LG_FAIL_CANCELLED : classify(r, res, http, stream),
        .http_status = (int)http,
        .has_truth = r->has_truth,
        .truth_queue_ns = r->truth.queue_ns,
        .truth_prefill_ns = r->truth.prefill_ns,
        .truth_decode_ns = r->truth.decode_ns,
        .sent_wire_ns = r->sent_wire_ns,
        .sent_wire_last_ns = r->sent_wire_last_ns,
    };
    if (rr.cls == LG_FAIL_MIDSTREAM && res == CURLE_OK && !r->done_seen && http >= 200 &&
        http < 300 && !r->first_byte_ns)
        rr.cls = LG_FAIL_RESET;
    lg_stats_record_request(stats_of(w, r->stage), &rr, &w->o->goodput);
    if (w->rx_wire && rr.cls == LG_OK) {
        if (r->sent_wire_ns)
            stats_of(w, r->stage)->departures++;
        else
            stats_of(w, r->stage)->departure_fallbacks++;
    }
    record_lengths(stats_of(w, r->stage), r, rr.cls);
    write_detailed(w, r, &rr);
    w->in_flight--;
    __atomic_store_n(&w->slot->in_flight, (uint64_t)w->in_flight, __ATOMIC_RELAXED);
    int64_t user = r->sess_user;
    if (user >= 0)
        lg_session_end(w->sess, user, rr.cls == LG_OK, &r->text, rr.input_tokens, rr.output_tokens);
    req_put(w, r);
    if (user >= 0) session_next(w, user, cancelled);
}

static void check_multi_info(lg_worker *w)
{
    CURLMsg *m;
    int pending;
    int freed = 0;
    while ((m = curl_multi_info_read(w->multi, &pending))) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL *e = m->easy_handle;
        CURLcode res = m->data.result;
        lg_req *r = NULL;
        curl_easy_getinfo(e, CURLINFO_PRIVATE, (char **)&r);
        curl_multi_remove_handle(w->multi, e);
        finish_request(w, r, res, 0);
        freed = 1;
    }
    if (freed) {
        if (w->cap && !w->sched_done) dispatch_due(w);
        maybe_finish(w);
    }
}

/* ---- curl <-> libuv --------------------------------------------------- */

static void kick_curl(lg_worker *w)
{
    int running;
    curl_multi_socket_action(w->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    check_multi_info(w);
}

static void on_poll(uv_poll_t *h, int status, int events)
{
    sock_ctx *c = (sock_ctx *)h;
    lg_worker *w = c->w;
    if (!c->wanted) {
        /* An event curl no longer asked for (its last wish was a removal):
         * stop watching until curl asks again. */
        uv_poll_stop(&c->poll);
        c->armed = 0;
        return;
    }
    int64_t t0 = svc_begin(w);
    int flags = 0;
    if (status < 0) flags = CURL_CSELECT_ERR;
    if (!status && (events & UV_READABLE)) flags |= CURL_CSELECT_IN;
    if (!status && (events & UV_WRITABLE)) flags |= CURL_CSELECT_OUT;
    int running;
    curl_multi_socket_action(w->multi, c->fd, flags, &running);
    check_multi_info(w);
    svc_end(w, t0);
}

static void on_sock_closed(uv_handle_t *h)
{
    free(h);
}

/* The poll handle of descriptor fd (NULL: none yet). */
static sock_ctx **sock_slot(lg_worker *w, curl_socket_t fd, int grow)
{
    if (fd < 0) return NULL;
    if ((size_t)fd >= w->n_socks) {
        if (!grow) return NULL;
        size_t n = w->n_socks ? w->n_socks : 256;
        while (n <= (size_t)fd)
            n *= 2;
        sock_ctx **a = realloc(w->socks, n * sizeof *a);
        if (!a) return NULL;
        memset(a + w->n_socks, 0, (n - w->n_socks) * sizeof *a);
        w->socks = a;
        w->n_socks = n;
    }
    return &w->socks[fd];
}

static int on_socket(CURL *e, curl_socket_t s, int action, void *userp, void *socketp)
{
    (void)e;
    (void)socketp;
    lg_worker *w = userp;
    sock_ctx **slot = sock_slot(w, s, action != CURL_POLL_REMOVE);
    if (action == CURL_POLL_REMOVE) {
        /* Stopped now (the descriptor may be closed already, see sock_ctx);
         * the handle is closed in on_close_socket. */
        if (slot && *slot) {
            sock_ctx *c = *slot;
            c->wanted = 0;
            if (c->armed) uv_poll_stop(&c->poll);
            c->armed = 0;
        }
        return 0;
    }
    if (!slot) return -1;
    sock_ctx *c = *slot;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c) return -1;
        c->fd = s;
        c->w = w;
        if (uv_poll_init_socket(&w->loop, &c->poll, s) != 0) {
            free(c);
            return -1;
        }
        *slot = c;
    }
    int ev = 0;
    if (action == CURL_POLL_IN || action == CURL_POLL_INOUT) ev |= UV_READABLE;
    if (action == CURL_POLL_OUT || action == CURL_POLL_INOUT) ev |= UV_WRITABLE;
    c->wanted = ev;
    if (ev != c->armed) {
        if (uv_poll_start(&c->poll, ev, on_poll) != 0) return -1;
        c->armed = ev;
    }
    return 0;
}

/* curl closes one of its sockets: its poll handle goes first, so a new
 * socket that gets the same descriptor starts with a handle of its own. */
static int on_close_socket(void *clientp, curl_socket_t s)
{
    lg_worker *w = clientp;
    sock_ctx **slot = sock_slot(w, s, 0);
    if (slot && *slot) {
        uv_close((uv_handle_t *)&(*slot)->poll, on_sock_closed);
        *slot = NULL;
    }
    /* The connection's captured segments go with it. */
    if (w->wc.wire && (size_t)s < w->n_conn_rx && w->conn_rx[s].port > 0)
        lg_wire_close(w->wc.wire, (uint16_t)w->conn_rx[s].port);
    return close(s);
}

static void on_curl_timeout(uv_timer_t *t)
{
    lg_worker *w = t->data;
    int64_t t0 = svc_begin(w);
    kick_curl(w);
    svc_end(w, t0);
}

static int on_curl_timer(CURLM *multi, long timeout_ms, void *userp)
{
    lg_worker *w = userp;
    if (timeout_ms < 0)
        uv_timer_stop(&w->curl_timer);
    else
        uv_timer_start(&w->curl_timer, on_curl_timeout, (uint64_t)timeout_ms, 0);
    return 0;
}

/* ---- dispatch --------------------------------------------------------- */

static const char *trace_body(lg_worker *w, int32_t in_tokens, int32_t out_tokens, lg_req *r,
                              size_t *len)
{
    if (in_tokens < 1) in_tokens = 1;
    if (in_tokens > 200000) in_tokens = 200000;
    if (out_tokens < 1) out_tokens = 1;
    char *prompt = malloc((size_t)in_tokens * 4 + 1);
    if (!prompt) return NULL;
    for (int32_t i = 0; i < in_tokens; i++)
        memcpy(prompt + 4 * i, "tok ", 4);
    prompt[(size_t)in_tokens * 4 - 1] = '\0';
    char *body = NULL;
    int rc = lg_body_render(w->o, prompt, out_tokens, &body, len);
    free(prompt);
    if (rc) return NULL;
    r->own_body = body;
    r->ds_input_tokens = in_tokens;
    r->ds_output_tokens = out_tokens;
    return body;
}

/* o->prompt_per_request: request index's prompt made now (lg_random_gen),
 * its body rendered into the request's own buffer. */
static const char *random_body(lg_worker *w, int64_t index, lg_req *r, size_t *len)
{
    lg_prompt pr;
    if (lg_random_gen_at(w->p->rgen, (uint64_t)index, &pr)) return NULL;
    char *body = NULL;
    int rc = lg_body_render(w->o, pr.text, pr.output_tokens, &body, len);
    free(pr.text);
    if (rc) return NULL;
    r->own_body = body;
    r->ds_input_tokens = pr.input_tokens;
    r->ds_output_tokens = pr.output_tokens;
    return body;
}

/* A multi-turn round's body: the pool's (its context is the first one) or
 * rendered now from its context (lg_session.h); the response text kept. */
static const char *session_body(lg_worker *w, const lg_arrival *a, lg_req *r, const char *pool,
                                size_t *len)
{
    if (r->text.err) rb_buf_free(&r->text); /* the sticky cut of the last response */
    rb_buf_reset(&r->text);
    r->text.max = w->sess->ctx_max;
    char *body;
    size_t n;
    if (lg_session_render(w->sess, lg_session_user(w->sess, a), w->o, &body, &n,
                          &r->ds_input_tokens))
        return NULL;
    if (!body) return pool;
    r->own_body = body;
    *len = n;
    return body;
}

/* --lora-modules: the body again with request index's model (lg_lora.h), in
 * the request's own buffer (the pool's bodies stay shared; an earlier own
 * one is freed). Without a list, body as it is. */
static const char *lora_body(lg_worker *w, int64_t index, lg_req *r, const char *body, size_t *len)
{
    if (!w->o->n_lora || !body) return body;
    char *out;
    size_t n;
    int rc = lg_body_with_model(body, *len, lg_lora_model(w->o, index), &out, &n);
    free(r->own_body);
    r->own_body = NULL;
    if (rc) return NULL;
    r->own_body = out;
    *len = n;
    return out;
}

/* Starts one request now. Returns 0 or -1 (no memory: counted as failed). */
static int dispatch_one(lg_worker *w, const lg_arrival *a, int64_t intended_ns, int64_t now)
{
    int go = w->sess ? lg_session_admit(w->sess, a, intended_ns, w->sess_from_queue) : 1;
    if (go == 0) return 0; /* waits for its user's round in flight (lg_session.h) */
    lg_req *r = go > 0 ? req_get(w) : NULL;
    lg_stage_stats *st = stats_of(w, a->stage);
    lg_stats_record_dispatch(st, intended_ns, now, w->p->lag_bound_ns);
    if (w->o->n_lora) st->lora_requests[lg_lora_pick(w->o, w->o->seed, a->index)]++;
    if (w->slot->n_sample < LG_SAMPLE_PER_WORKER) {
        w->sample[w->slot->n_sample] = (lg_dispatch_sample){
            .index = a->index, .dispatch_ns = now, .intended_ns = intended_ns, .stage = a->stage};
        w->slot->n_sample++;
    }
    if (!r) {
        lg_req_result rr = {
            .intended_ns = intended_ns, .dispatch_ns = now, .end_ns = now, .cls = LG_FAIL_OTHER};
        lg_stats_record_request(st, &rr, &w->o->goodput);
        write_record(w, a->index, a->stage, 0, &rr, NULL);
        return -1;
    }
    r->index = a->index;
    r->sess_user = -1;
    r->stage = a->stage;
    r->intended_ns = intended_ns;
    r->dispatch_ns = now;
    const char *body;
    size_t len;
    if (w->p->n_trace) {
        body = trace_body(w, a->input_tokens, a->output_tokens, r, &len);
    } else if (w->p->rgen) {
        body = random_body(w, a->index, r, &len);
    } else {
        size_t j = (size_t)(a->index % (int64_t)w->p->ds.n);
        body = w->p->bodies[j];
        len = w->p->body_len[j];
        r->ds_input_tokens = w->p->ds.items[j].input_tokens;
        r->ds_output_tokens = w->sess ? -1 : w->p->ds.items[j].output_tokens;
        if (w->sess) body = session_body(w, a, r, body, &len);
    }
    body = lora_body(w, a->index, r, body, &len);
    if (!body) {
        lg_req_result rr = {
            .intended_ns = intended_ns, .dispatch_ns = now, .end_ns = now, .cls = LG_FAIL_OTHER};
        lg_stats_record_request(st, &rr, &w->o->goodput);
        write_detailed(w, r, &rr);
        req_put(w, r);
        return -1;
    }
    curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE, (long)len);
    curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, body);
    w->in_flight++;
    __atomic_store_n(&w->slot->in_flight, (uint64_t)w->in_flight, __ATOMIC_RELAXED);
    if (curl_multi_add_handle(w->multi, r->easy) != CURLM_OK) {
        lg_req_result rr = {
            .intended_ns = intended_ns, .dispatch_ns = now, .end_ns = now, .cls = LG_FAIL_OTHER};
        lg_stats_record_request(st, &rr, &w->o->goodput);
        write_detailed(w, r, &rr);
        w->in_flight--;
        req_put(w, r);
        return -1;
    }
    if (w->sess) lg_session_start(w->sess, r->sess_user = lg_session_user(w->sess, a));
    w->pending_kick = 1;
    return 0;
}

static void on_dispatch_timer(rb_timer *t);

static int fetch_next(lg_worker *w);

/* Arrivals never sent, when a stop or the deadline cut the schedule short:
 * counted per stage, exactly for stages bounded by count (by arithmetic, at
 * any count); a timed stage's rest is drawn, at most LG_NOT_SENT_WALK
 * arrivals, past which its count is marked as a lower bound. */
#define LG_NOT_SENT_WALK 100000000LL

static void count_not_dispatched(lg_worker *w)
{
    const lg_plan *p = w->p;
    if (p->closed) return;
    if (w->have_next) {
        stats_of(w, w->next.stage)->not_dispatched++;
        w->have_next = 0;
    }
    int64_t *left = calloc((size_t)p->n_stages, sizeof *left);
    if (!left) { /* counted, slowly, one by one: never lost */
        while (fetch_next(w)) {
            stats_of(w, w->next.stage)->not_dispatched++;
            w->have_next = 0;
        }
        return;
    }
    int whole =
        lg_sched_rest_for(w->sched, w->id, p->k, left, (size_t)p->n_stages, LG_NOT_SENT_WALK);
    for (int s = 0; s < p->n_stages; s++) {
        lg_stage_stats *st = stats_of(w, s);
        st->not_dispatched += (uint64_t)left[s];
        if (!whole && s >= w->next.stage) st->not_dispatched_partial = 1;
    }
    free(left);
}

static void end_schedule(lg_worker *w, int cut)
{
    if (w->sched_done) return;
    if (cut) count_not_dispatched(w);
    w->sched_done = 1;
    w->have_next = 0;
    rb_timer_stop(&w->dispatch);
    end_window(w);
    __atomic_store_n(&w->slot->cur_stage, w->p->n_stages, __ATOMIC_RELAXED);
    /* Whatever is still in flight is bounded by --request-timeout. */
}

/* Every worker is done with closed stage s: its slot shows a later stage
 * (published once its share of s has ended) or it has finished. */
static int closed_all_past(const lg_worker *w, int s)
{
    for (int i = 0; i < w->p->k; i++) {
        lg_slot *o = lg_plan_slot(w->p, i);
        if (__atomic_load_n(&o->cur_stage, __ATOMIC_RELAXED) <= s &&
            __atomic_load_n(&o->state, __ATOMIC_RELAXED) != LG_W_DONE)
            return 0;
    }
    return 1;
}

/* Closed stages in turn (--closed-stage C:N): this worker's share of stage s
 * is the indices base_s + id, base_s + id + k, ... below base_s + N_s, with
 * its part of C_s in flight. Past its share it waits for its requests of s
 * to end, says so (its slot's stage becomes s + 1), waits for every worker
 * to be past s (the dispatch timer polls each millisecond), then the stage
 * pause. Returns 1 (closed_next is in the current stage), 0 (no stage left)
 * or -1 (waiting: a completion or the timer calls back). */
static int closed_stage_turn(lg_worker *w)
{
    const lg_plan *p = w->p;
    for (;;) {
        int s = w->closed_stage, c = p->o->stage_conc[s];
        const lg_stage *st = &p->spec.stages[s];
        w->cap = c / p->k + (w->id < c % p->k ? 1 : 0);
        if (w->cap > p->o->max_conn_per_worker) w->cap = p->o->max_conn_per_worker;
        if (w->closed_next < w->closed_base + st->max_requests) return 1;
        if (s + 1 >= (int)p->spec.n_stages) return 0;
        if (w->in_flight > 0) return -1;
        if (__atomic_load_n(&w->slot->cur_stage, __ATOMIC_RELAXED) != s + 1) {
            __atomic_store_n(&w->slot->cur_stage, s + 1, __ATOMIC_RELAXED);
            if (w->meter.in_window) account_stage(w, s + 1);
        }
        int64_t now = rb_now_ns();
        if (!closed_all_past(w, s)) {
            rb_timer_start_at(&w->dispatch, now + 1000000, on_dispatch_timer);
            return -1;
        }
        if (!w->closed_resume_ns) w->closed_resume_ns = now + p->o->stage_pause_ns;
        if (now < w->closed_resume_ns) {
            rb_timer_start_at(&w->dispatch, w->closed_resume_ns, on_dispatch_timer);
            return -1;
        }
        w->closed_resume_ns = 0;
        w->closed_base += st->max_requests;
        w->closed_stage = s + 1;
        w->closed_next = w->closed_base + w->id;
    }
}

/* Fetches this worker's next arrival. Returns 0 at the end of the schedule
 * (-1: not yet, closed stages only). */
static int fetch_next(lg_worker *w)
{
    if (w->have_next) return 1;
    const lg_plan *p = w->p;
    if (p->closed) {
        const lg_stage *st = &p->spec.stages[0];
        int64_t i = w->closed_next;
        if (p->o->n_closed_stages) {
            int turn = closed_stage_turn(w);
            if (turn <= 0) return turn;
            i = w->closed_next;
        } else {
            if (st->max_requests > 0 && i >= st->max_requests) return 0;
            if (st->duration_ns > 0 && rb_now_ns() >= w->t0_ns + st->duration_ns) return 0;
        }
        w->next = (lg_arrival){.index = i,
                               .t_ns = 0,
                               .stage = w->closed_stage,
                               .input_tokens = -1,
                               .output_tokens = -1};
        w->closed_next += p->k;
    } else if (!lg_sched_next_for(w->sched, w->id, p->k, &w->next)) {
        return 0;
    }
    w->have_next = 1;
    return 1;
}

/* One pass of dispatch_due: starts every arrival due now, up to LG_BATCH in
 * all (*n so far). Returns the intended time of the next arrival when it is
 * not due yet (the caller arms the timer for it), 0 otherwise. */
static int64_t dispatch_pass(lg_worker *w, int *n)
{
    for (;;) {
        if (__atomic_load_n(&w->sh->stop, __ATOMIC_RELAXED)) {
            end_schedule(w, w->sh->interrupted);
            return 0;
        }
        int got = fetch_next(w);
        if (got < 0) return 0; /* the next closed stage is not open yet */
        if (!got) {
            end_schedule(w, 0);
            return 0;
        }
        if (w->cap && w->in_flight >= w->cap) return 0; /* a completion calls back */
        int64_t now = rb_now_ns();
        int64_t intended = w->p->closed ? now : w->t0_ns + w->next.t_ns;
        if (intended > now) return intended;
        if (w->next.stage != w->slot->cur_stage) {
            __atomic_store_n(&w->slot->cur_stage, w->next.stage, __ATOMIC_RELAXED);
            if (w->meter.in_window) account_stage(w, w->next.stage);
        }
        dispatch_one(w, &w->next, intended, now);
        w->have_next = 0;
        if (++*n >= LG_BATCH) {
            /* Let completions and sockets run; come back on the next
             * iteration (a deadline in the past fires at once). */
            rb_timer_start_at(&w->dispatch, now, on_dispatch_timer);
            return 0;
        }
    }
}

static void dispatch_due(lg_worker *w)
{
    if (w->sched_done || w->finishing) return;
    int n = 0;
    for (;;) {
        int64_t next_ns = dispatch_pass(w, &n);
        if (w->pending_kick) {
            /* The requests go out here: their dispatch times were taken
             * just before (dispatch_one), and sending takes a while. */
            w->pending_kick = 0;
            kick_curl(w);
            /* An arrival that fell due during the send goes now, without
             * a timer wake-up: arming the timerfd and waking on it costs
             * more than the send. Never before its intended time. */
            if (next_ns && !w->sched_done && !w->finishing && rb_now_ns() >= next_ns) continue;
        }
        if (next_ns && !w->sched_done && !w->finishing) {
            /* Completions call back here often; re-arm only on a change. */
            if (!w->dispatch.armed || w->dispatch.deadline_ns != next_ns)
                rb_timer_start_at(&w->dispatch, next_ns, on_dispatch_timer);
        }
        return;
    }
}

static void on_dispatch_timer(rb_timer *t)
{
    lg_worker *w = t->data;
    int64_t t0 = svc_begin(w);
    dispatch_due(w);
    svc_end(w, t0);
}

/* ---- the end of the worker -------------------------------------------- */

static void cancel_all(lg_worker *w)
{
    for (size_t i = 0; i < w->n_all; i++) {
        lg_req *r = w->all[i];
        if (!r->in_use) continue;
        curl_multi_remove_handle(w->multi, r->easy);
        finish_request(w, r, CURLE_OK, 1);
    }
}

static void maybe_finish(lg_worker *w)
{
    if (w->finishing || !w->sched_done || w->in_flight > 0) return;
    w->finishing = 1;
    __atomic_store_n(&w->slot->state, LG_W_DONE, __ATOMIC_RELAXED);
    uv_timer_stop(&w->tick);
    uv_timer_stop(&w->curl_timer);
    uv_stop(&w->loop);
}

static void flush_detailed(lg_worker *w)
{
    if (!w->have_rec) return;
    rb_rec_flush(&w->rec);
    rec_account(w);
}

static void on_tick(uv_timer_t *t)
{
    lg_worker *w = t->data;
    int64_t now = rb_now_ns();
    int stop = __atomic_load_n(&w->sh->stop, __ATOMIC_RELAXED);
    if (stop) {
        /* The schedule may already have ended in dispatch_due on seeing
         * the flag; the drain clock starts here either way. */
        end_schedule(w, w->sh->interrupted);
        if (!w->drain_deadline_ns) {
            __atomic_store_n(&w->slot->state, LG_W_DRAINING, __ATOMIC_RELAXED);
            w->drain_deadline_ns = now + w->o->drain_timeout_ns;
        }
    }
    if (w->sched_done && w->in_flight > 0) {
        int cut = stop >= 2 || (w->drain_deadline_ns && now >= w->drain_deadline_ns) ||
                  (w->p->end_deadline_ns && now >= w->p->end_deadline_ns);
        if (cut) cancel_all(w);
    } else if (!w->sched_done && w->p->end_deadline_ns && now >= w->p->end_deadline_ns) {
        end_schedule(w, 1);
        cancel_all(w);
    }
    if (w->rx_kernel) sample_clock(w);
    if (w->rx_wire) wire_account(w);
    if (now - w->last_lag_ns >= 250000000LL) {
        w->last_lag_ns = now;
        int s = __atomic_load_n(&w->slot->cur_stage, __ATOMIC_RELAXED);
        if (s < w->p->n_stages) {
            uint64_t p99 = mdl_hist_percentile(lg_stats_hist(stats_of(w, s), LG_H_LAG), 99.0);
            __atomic_store_n(&w->slot->lag_p99_ns, p99, __ATOMIC_RELAXED);
        }
    }
    if (now - w->last_flush_ns >= 1000000000LL) {
        w->last_flush_ns = now;
        flush_detailed(w);
    }
    if (w->p->tick) w->p->tick(w->p->tick_ctx);
    maybe_finish(w);
}

/* Appends "<name>: <value>" (any length: JWT keys run to kilobytes). */
static struct curl_slist *build_headers(const lg_worker *w)
{
    return lg_body_headers(w->o, w->p->stamps);
}

static void on_walk_close(uv_handle_t *h, void *arg)
{
    (void)arg;
    if (!uv_is_closing(h)) uv_close(h, NULL);
}

/* The worker's fields from its plan: its slots, its connection cap, the
 * clock it reads, its random stream. */
static void worker_init(lg_worker *w, const lg_plan *p, int id)
{
    w->p = p;
    w->o = p->o;
    w->tls = LG_TLS_OF(p->o);
    w->tls_target = strncasecmp(p->o->base_url, "https:", 6) == 0;
    w->id = id;
    w->slot = lg_plan_slot(p, id);
    w->sh = lg_plan_shared(p);
    w->sample = lg_plan_sample(p, id);
    /* In-flight requests never exceed the worker's connections: curl would
     * queue the rest itself, and its pending queue is rescanned whole on
     * every completion (quadratic under overload). Arrivals beyond wait
     * here, and the wait shows as schedule lag. */
    w->cap = lg_plan_worker_cap(p, id);
    if (w->cap == 0 || w->cap > p->o->max_conn_per_worker) w->cap = p->o->max_conn_per_worker;
    w->closed_next = id;
    w->rd.port = -1;
    lg_meter_init(&w->meter);
    w->rx_wire = p->o->receive_clock == LG_RXC_WIRE;
    w->rx_kernel = w->rx_wire || p->o->receive_clock == LG_RXC_KERNEL;
    w->rx_keeper = -1;
    w->rx_fd = -1;
    w->wc = (lg_wclock){.port = -1};
    w->rng = (p->o->seed + 1) * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(id + 1) * 0xBF58476D1CE4E5B9ULL;
    if (!w->rng) w->rng = 1;
}

/* The receive clocks, before the first connection: the wire clock's capture
 * (so every SYN-ACK is seen) and the kernel's stamps. */
static void worker_open_clocks(lg_worker *w)
{
    const lg_plan *p = w->p;
    if (w->rx_wire) {
        /* A worker that cannot capture times with the kernel's stamps, and
         * its tokens are counted as fallbacks. */
        char werr[512] = "";
        if (lg_wclock_open(&w->wc, p->o, p->url, w->id, p->k, werr, sizeof werr) == 0 &&
            w->wc.port_lo) {
            /* somewhere in the lower half of the range, by the clock */
            int half = (w->wc.port_hi - w->wc.port_lo + 1) / 2;
            w->port_start =
                w->wc.port_lo + (half > 0 ? (int)((uint64_t)rb_now_ns() % (uint64_t)half) : 0);
        } else if (!w->wc.on) {
            fprintf(stderr,
                    "loadgen: worker %d: wire clock: %s; its tokens take the kernel's "
                    "stamps\n",
                    w->id, werr);
            snprintf(w->slot->rx_fallback, sizeof w->slot->rx_fallback, "%.*s",
                     (int)sizeof w->slot->rx_fallback - 1, werr);
        }
    } else if (p->o->receive_clock_fallback[0]) {
        /* the run (under --mpi: this rank, on its host) fell back */
        snprintf(w->slot->rx_fallback, sizeof w->slot->rx_fallback, "%.*s",
                 (int)sizeof w->slot->rx_fallback - 1, p->o->receive_clock_fallback);
    }
    if (w->rx_kernel) {
        sample_clock(w);
        /* Before the run's start (t0 leaves a margin): the kernel stamps
         * packets only once its deferred switch is on. */
        w->rx_keeper = lg_rx_keep_on();
        lg_rx_set_hook(on_rx_read, w);
    }
    if (w->rx_wire) lg_tx_set_hook(on_tx_write, w);
    int wire = w->rx_wire && w->wc.on;
    snprintf(w->slot->rx_clock, sizeof w->slot->rx_clock, "%s",
             wire           ? "wire"
             : w->rx_kernel ? "kernel"
                            : "user");
    snprintf(w->slot->capture_iface, sizeof w->slot->capture_iface, "%s",
             wire ? p->o->capture_iface : "");
}

/* The clocks off again: no hook is left pointing at this worker. */
static void worker_close_clocks(lg_worker *w)
{
    if (w->rx_keeper >= 0) close(w->rx_keeper);
    w->rx_keeper = -1;
    lg_rx_set_hook(NULL, NULL);
    lg_tx_set_hook(NULL, NULL);
    wire_account(w);
    lg_wclock_close(&w->wc);
}

/* The sessions (multi-turn) and the schedule (open loop). 0, or the
 * worker's exit code with slot->error set: 1 no memory, 2 a schedule the
 * spec cannot give. */
static int worker_open_state(lg_worker *w)
{
    const lg_plan *p = w->p;
    char err[256] = "";
    if (p->spec.session_users > 0) {
        w->sess = malloc(sizeof *w->sess);
        if (!w->sess || lg_session_init(w->sess, &p->ds, lg_session_ctx_max(p->ds.n)) != 0) {
            snprintf(w->slot->error, sizeof w->slot->error, "no memory for the sessions");
            free(w->sess);
            w->sess = NULL;
            return 1;
        }
    }
    if (!p->closed) {
        w->sched = lg_sched_new(&p->spec, err, sizeof err);
        if (!w->sched) {
            snprintf(w->slot->error, sizeof w->slot->error, "schedule: %.*s",
                     (int)(sizeof w->slot->error - 16), err);
            if (w->sess) lg_session_free(w->sess);
            free(w->sess);
            w->sess = NULL;
            return 2;
        }
    }
    return 0;
}

/* --cpu-latency-us: the request held until the worker ends (w->cpu_lat);
 * the slot says whether it was, and the host's limit. */
static void worker_hold_cpu_latency(lg_worker *w)
{
    const lg_opts *o = w->o;
    w->cpu_lat = (rb_cpu_latency){.fd = -1, .asked_us = -1, .effective_us = -1};
    w->slot->cpu_latency_held = -1;
    w->slot->cpu_latency_us = -1;
    if (o->cpu_latency_us >= 0) {
        int held = rb_cpu_latency_hold(&w->cpu_lat, o->cpu_latency_us, NULL) == 0;
        w->slot->cpu_latency_held = held;
        w->slot->cpu_latency_us = w->cpu_lat.effective_us;
        if (!held && w->id == 0 && !o->quiet)
            fprintf(stderr,
                    "loadgen: --cpu-latency-us %d: %s %s: %s: idle CPUs may wake late "
                    "(the report says so)\n",
                    o->cpu_latency_us, w->cpu_lat.step, RB_CPU_LATENCY_DEV,
                    strerror(w->cpu_lat.err));
    }
    rb_cpu_latency_describe(&w->cpu_lat, NULL, w->slot->cpu_latency, sizeof w->slot->cpu_latency);
}

/* Timer slack, real-time priority, nice and CPUs, as asked. */
static void worker_set_priority(lg_worker *w)
{
    const lg_opts *o = w->o;
    worker_hold_cpu_latency(w);
    /* The kernel may defer a timer by the thread's slack (50 us by
     * default) to batch wake-ups; dispatch wants the intended instant. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    if (o->rt_priority > 0) {
        /* On a shared host a sleeping worker otherwise wakes late (ms) when
         * other processes hold the CPUs; the kernel's RT throttling still
         * leaves them a share. */
        struct sched_param sp = {.sched_priority = o->rt_priority};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            fprintf(stderr, "loadgen: worker %d: --realtime-priority %d: %s (normal scheduling)\n",
                    w->id, o->rt_priority, strerror(errno));
    }
    if (o->nice && setpriority(PRIO_PROCESS, 0, o->nice) != 0)
        fprintf(stderr, "loadgen: worker %d: --nice %d: %s (priority unchanged)\n", w->id, o->nice,
                strerror(errno));
    /* --worker-cpus (checked against this host's CPUs when parsed; under
     * --mpi each rank binds its own, on its own host) */
    cpu_set_t set;
    if (o->worker_cpus[0] && (rb_host_parse_cpu_list(o->worker_cpus, &set) != 0 ||
                              sched_setaffinity(0, sizeof set, &set) != 0))
        fprintf(stderr, "loadgen: worker %d: --worker-cpus %s: %s (not bound)\n", w->id,
                o->worker_cpus, strerror(errno));
    /* where it may run, as the kernel says, for the report */
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        rb_host_format_cpu_list(&set, w->slot->cpus, sizeof w->slot->cpus);
}

/* libcurl's multi handle on the loop, with the loop's curl and tick timers.
 * -1: no headers or no multi handle (nothing is on the loop yet). */
static int worker_open_curl(lg_worker *w)
{
    const lg_plan *p = w->p;
    w->headers = build_headers(w);
    w->multi = curl_multi_init();
    if (!w->headers || !w->multi) return -1;
    w->url = curl_url();
    if (w->url && curl_url_set(w->url, CURLUPART_URL, p->url, 0) != CURLUE_OK) {
        curl_url_cleanup(w->url);
        w->url = NULL;
    }
    curl_multi_setopt(w->multi, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(w->multi, CURLMOPT_SOCKETDATA, w);
    curl_multi_setopt(w->multi, CURLMOPT_TIMERFUNCTION, on_curl_timer);
    curl_multi_setopt(w->multi, CURLMOPT_TIMERDATA, w);
    curl_multi_setopt(w->multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)p->o->max_conn_per_worker);
    curl_multi_setopt(w->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)p->o->max_conn_per_worker);
    curl_multi_setopt(w->multi, CURLMOPT_MAXCONNECTS, (long)p->o->max_conn_per_worker);
    uv_timer_init(&w->loop, &w->curl_timer);
    w->curl_timer.data = w;
    uv_timer_init(&w->loop, &w->tick);
    w->tick.data = w;
    return 0;
}

/* The per-request records' buffer, and the token times' line. 0, or -1 with
 * slot->error set. */
static int worker_open_records(lg_worker *w)
{
    int fd = lg_plan_detailed_fd(w->p, w->id);
    if (fd < 0) return 0;
    if (rb_rec_init(&w->rec, fd, 1 << 20) != 0) {
        snprintf(w->slot->error, sizeof w->slot->error, "no memory for the record buffer");
        return -1;
    }
    w->have_rec = 1;
    if (w->o->save_token_times) {
        w->tt_line = malloc(lg_record_line_max(w->o->token_times_cap));
        if (!w->tt_line) {
            snprintf(w->slot->error, sizeof w->slot->error,
                     "no memory for a record with token times");
            return -1;
        }
        w->tt_cap = w->o->token_times_cap;
    }
    return 0;
}

/* --batch-tick: the loop never waits in epoll. It sleeps to the next tick
 * (multiples of `tick` from the window's start, so ticks do not drift),
 * then runs once without waiting: every socket ready, every timer due (the
 * dispatch timer among them: the arrivals due go out) and the closes. One
 * wake-up per tick however many sockets and sends fall in it. A tick whose
 * work runs past the next one is followed at once (counted). The sleeps
 * are the loop's idle time. */
static void run_ticked(lg_worker *w, int64_t tick)
{
    int64_t next = w->slot->window_start_ns;
    while (!w->finishing) {
        w->ticks++;
        if (!uv_run(&w->loop, UV_RUN_NOWAIT)) break; /* no handle left */
        if (w->finishing) break;
        int64_t now = rb_now_ns();
        next += tick;
        if (next <= now) {
            /* at once; the next sleep to the boundary after the tick under way */
            w->ticks_overrun++;
            next = now - (now - w->slot->window_start_ns) % tick;
            continue;
        }
        struct timespec ts = {.tv_sec = next / 1000000000LL, .tv_nsec = next % 1000000000LL};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
            if (__atomic_load_n(&w->sh->stop, __ATOMIC_RELAXED)) break;
        }
        w->tick_idle_ns += rb_now_ns() - now;
    }
}

/* The run: from the run's start (t0) to the loop's end, then the window's
 * accounting and the records' flush. */
static void worker_run_window(lg_worker *w)
{
    w->t0_ns = w->sh->t0_ns;
    __atomic_store_n(&w->slot->state, LG_W_RUNNING, __ATOMIC_RELAXED);
    uv_timer_start(&w->tick, on_tick, LG_TICK_MS, LG_TICK_MS);
    /* The send window opens at the run's start, the same instant for every
     * worker; the loop's idle time is counted from there. */
    struct timespec ts = {.tv_sec = w->t0_ns / 1000000000LL, .tv_nsec = w->t0_ns % 1000000000LL};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
    w->last_flush_ns = w->last_lag_ns = rb_now_ns();
    rb_host_reading h;
    rb_host_sample(&h);
    w->slot->window_start_ns = rb_now_ns();
    lg_meter_open(&w->meter, w->slot->window_start_ns, loop_idle_ns(w), &h, 0);
    dispatch_due(w);
    maybe_finish(w);
    if (!w->finishing) {
        if (w->o->batch_tick_ns > 0)
            run_ticked(w, w->o->batch_tick_ns);
        else
            uv_run(&w->loop, UV_RUN_DEFAULT);
    }
    end_window(w);
    flush_detailed(w);
}

/* The loop's handles closed: curl's connections (its socket callbacks
 * close their polls), the dispatch timer (when it was made), every other
 * handle. */
static void worker_close_handles(lg_worker *w, int have_timer)
{
    for (size_t i = 0; i < w->n_all; i++) {
        if (w->all[i]->in_use) curl_multi_remove_handle(w->multi, w->all[i]->easy);
    }
    curl_multi_cleanup(w->multi);
    w->multi = NULL;
    if (have_timer) rb_timer_close(&w->dispatch, NULL);
    uv_walk(&w->loop, on_walk_close, NULL);
    /* Until every close has run: a uv_stop from the callbacks curl's
     * cleanup made (maybe_finish) would end the first uv_run at once, and
     * uv_loop_close would then leave the loop's memory behind. */
    for (int i = 0; i < 8 && uv_run(&w->loop, UV_RUN_DEFAULT); i++) {
    }
}

/* The request objects, the headers and the URL freed, and the loop closed. */
static void worker_free_requests(lg_worker *w)
{
    if (w->multi) curl_multi_cleanup(w->multi);
    w->multi = NULL;
    for (size_t i = 0; i < w->n_all; i++) {
        lg_req *r = w->all[i];
        curl_easy_cleanup(r->easy);
        lg_sse_free(&r->sse);
        rb_buf_free(&r->resp);
        free(r->own_body);
        rb_buf_free(&r->text);
        free(r->tt_us);
        free(r);
    }
    free(w->all);
    curl_slist_free_all(w->headers);
    curl_url_cleanup(w->url);
    uv_loop_close(&w->loop);
}

/* The loop's life: curl and the timers on it, the records, the run, the
 * teardown. 0: the run ended; 1: it could not start (slot->error says why
 * when it is known). */
static int worker_loop(lg_worker *w)
{
    if (uv_loop_init(&w->loop) != 0) return 1;
    uv_loop_configure(&w->loop, UV_METRICS_IDLE_TIME);
    int rc = 1;
    if (worker_open_curl(w) == 0) {
        int have_timer = rb_timer_init(&w->loop, &w->dispatch) == 0;
        if (have_timer) {
            w->dispatch.data = w;
            if (worker_open_records(w) == 0) {
                worker_run_window(w);
                rc = 0;
            }
        }
        worker_close_handles(w, have_timer);
    }
    worker_free_requests(w);
    return rc;
}

/* What outlives the loop: the schedule, the records' buffer, the clocks,
 * the sessions (whose counts go to the slot), the connections' and the
 * sockets' tables. */
static void worker_release(lg_worker *w)
{
    lg_sched_free(w->sched);
    if (w->have_rec) {
        flush_detailed(w); /* (a no-op after the run's own flush) */
        rb_rec_free(&w->rec);
    }
    free(w->tt_line);
    worker_close_clocks(w);
    if (w->sess) {
        w->slot->sess_waited = w->sess->waited;
        w->slot->sess_capped = w->sess->capped;
        fprintf(stderr,
                "loadgen: worker %d: multi-turn: %lld rounds waited for their user's previous "
                "round; %lld contexts stopped growing at %zu bytes\n",
                w->id, (long long)w->sess->waited, (long long)w->sess->capped, w->sess->ctx_max);
        lg_session_free(w->sess);
        free(w->sess);
    }
    free(w->conn_rx);
    /* Handles that only the final walk closed (their sockets outlived curl). */
    for (size_t i = 0; i < w->n_socks; i++)
        free(w->socks[i]);
    free(w->socks);
}

int lg_worker_run(const lg_plan *p, int id)
{
    lg_worker *w = calloc(1, sizeof *w);
    if (!w) return 1;
    worker_init(w, p, id);
    worker_open_clocks(w);
    int rc = worker_open_state(w);
    if (rc) {
        worker_close_clocks(w);
        free(w);
        return rc;
    }
    worker_set_priority(w);
    rc = worker_loop(w);
    worker_release(w);
    rb_cpu_latency_release(&w->cpu_lat);
    w->slot->exit_code = rc;
    free(w);
    return rc;
}
