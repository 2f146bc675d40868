/* sim_server: see sim_server.h. The simulation itself (admission, the
 * waiting queue, the decode state machine, fault timing, deadlines) is
 * sim_engine; this is its shell: sockets, HTTP framing, rendering, writes
 * and backpressure. One connection serves one request at a time (HTTP/1.1
 * keeps responses in order); bytes of the next request that arrive
 * meanwhile wait in the connection's input buffer, up to a bound per
 * connection and per worker, past which reading stops. Every running stream
 * has one node in the engine's deadline heap; the single rb_timer is armed
 * for the earliest, and each firing writes what is due, in bounded passes.
 * The file is long because it is one state machine: a
 * connection's reads, input holds, half-close, lingering close, responses
 * and the drain share the conn and worker structs and each other's libuv
 * callbacks; its sections follow that lifecycle (writes, closing,
 * responses, the engine's events, requests, input, connections, shutdown,
 * run). */
#include "sim_server.h"

#include <errno.h>
#include <gsl/gsl_rng.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <uv.h>

#include "rb_clock.h"
#include "rb_timer.h"
#include "sim_api.h"
#include "rb_buf.h"
#include "sim_engine.h"
#include "sim_http.h"
#include "sim_render.h"

#define READ_BUF_BYTES 65536
#define CHUNK_HDR_RESERVE 10 /* "ffffffff\r\n" at most */
/* A long zero-latency response goes out in batches of about this size; the
 * next batch waits until the previous one left, so a response of any length
 * never piles up more than one batch in memory for a reader that keeps up. */
#define BATCH_BYTES (256 * 1024)
/* One pacing pass writes at most this many streams, or for this long, then
 * yields to the loop (accept, reads, the idle sweep, signals) and goes on at
 * its next iteration. A pacer that cannot keep up is late, never deaf; how
 * late is sim_send_lateness_seconds and each stream's max_late_ns. */
#define PACE_PASS_STREAMS 256
#define PACE_PASS_NS (1000000LL)
/* Bytes of pipelined requests held while one is in service: per connection
 * (reads are cut to fit) and per worker. Past either, the connection stops
 * reading until its request in service is done: the rest waits in the
 * kernel, and TCP holds the client back. */
#define PIPELINE_HOLD_BYTES ((size_t)64 * 1024)
#define PIPELINE_TOTAL_BYTES ((size_t)8 * 1024 * 1024)
#define PIPELINE_MIN_READ ((size_t)4096)
/* The longest a closing connection keeps reading its peer's leftovers. */
#define LINGER_MAX_NS (5LL * 1000000000LL)

typedef struct conn conn;
typedef struct worker worker;

/* The request in service: the engine's stream, and how it goes on the wire. */
typedef struct stream {
    sim_stream es;
    sim_render_ctx rc;
    int stamp;
    int keep_alive;
    int chunked; /* HTTP/1.1: chunked; HTTP/1.0: close-delimited */
    int stream;
    int head_sent;
    int blocked; /* due events wait for the socket to drain */
    rb_buf text; /* non-streamed output so far */
} stream;

struct conn {
    uv_tcp_t tcp;
    worker *w;
    conn *prev, *next; /* all connections of the worker */
    sim_http_parser hp;
    rb_buf in; /* bytes received while busy */
    int closing;
    int read_paused;
    int in_process;
    int sent_continue;
    int busy;            /* a request is in service */
    int peer_eof;        /* the peer shut its side down (or left) */
    int64_t deadline_ns; /* idle or slow-request cut; 0 = none */
    stream st;
};

struct worker {
    const sim_config *cfg;
    int index;
    uv_loop_t loop;
    uv_tcp_t server;
    int server_open;
    rb_timer pace;
    int pace_open;
    int in_pace; /* inside on_pace: arm once at its end */
    uv_timer_t sweep;
    uv_timer_t grace;
    uv_signal_t sigint, sigterm;
    sim_engine eng;
    conn *conns;
    int64_t n_conns;
    size_t in_total; /* bytes held in every connection's c->in */
    gsl_rng *rng;
    sim_prefix_cache cache;
    sim_metrics *m;
    sim_metrics *slots;
    int n_slots;
    uint64_t req_counter;
    int draining;
    int handles_closed;
    sim_http_limits hlim;
    sim_api_limits alim;
    rb_buf out; /* scratch for one write */
    char rbuf[READ_BUF_BYTES];
};

typedef struct wreq {
    uv_write_t req;
    conn *c;
    char data[];
} wreq;

static void conn_abort(conn *c);
static void conn_end(conn *c);
static void conn_process(conn *c, const char *data, size_t len);
static void arm_pace(worker *w);
static void stream_pump(conn *c);
static void check_done(worker *w);
static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf);

#define CONN_OF_STREAM(p) ((conn *)((char *)(p)-offsetof(conn, st.es)))

/* ---------------------------------------------------------------- writes */

static void on_write(uv_write_t *req, int status)
{
    wreq *q = (wreq *)req;
    conn *c = q->c;
    free(q);
    if (c->closing) return;
    if (status < 0) {
        conn_abort(c);
        return;
    }
    if (c->st.blocked && uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) == 0) {
        c->st.blocked = 0;
        c->deadline_ns = 0;
        stream_pump(c);
    }
}

/* Writes bufs, directly when the socket takes them, else queued (copied).
 * Returns 0, or -1 if the connection was dropped. */
static int conn_write(conn *c, uv_buf_t *bufs, unsigned n)
{
    if (c->closing) return -1;
    size_t total = 0;
    for (unsigned i = 0; i < n; i++)
        total += bufs[i].len;
    if (total == 0) return 0;
    size_t done = 0;
    uv_stream_t *s = (uv_stream_t *)&c->tcp;
    if (uv_stream_get_write_queue_size(s) == 0) {
        int r = uv_try_write(s, bufs, n);
        if (r < 0 && r != UV_EAGAIN) {
            conn_abort(c);
            return -1;
        }
        if (r > 0) done = (size_t)r;
    }
    if (done == total) return 0;
    size_t rest = total - done;
    if (uv_stream_get_write_queue_size(s) + rest > c->w->cfg->max_write_queue_bytes) {
        conn_abort(c); /* a client that does not read: bound our memory */
        return -1;
    }
    wreq *q = malloc(sizeof *q + rest);
    if (!q) {
        conn_abort(c);
        return -1;
    }
    q->c = c;
    size_t off = 0, skip = done;
    for (unsigned i = 0; i < n; i++) {
        size_t len = bufs[i].len;
        if (skip >= len) {
            skip -= len;
            continue;
        }
        memcpy(q->data + off, bufs[i].base + skip, len - skip);
        off += len - skip;
        skip = 0;
    }
    uv_buf_t b = uv_buf_init(q->data, (unsigned)rest);
    int r = uv_write(&q->req, s, &b, 1, on_write);
    if (r < 0) {
        free(q);
        conn_abort(c);
        return -1;
    }
    return 0;
}

static int conn_write1(conn *c, const char *p, size_t len)
{
    uv_buf_t b = uv_buf_init((char *)p, (unsigned)len);
    return conn_write(c, &b, 1);
}

/* -------------------------------------------------------------- closing */

/* The connection leaves the worker's list only here, when libuv let go of
 * it, so a drain waits for connections that are still flushing. */
static void on_closed(uv_handle_t *h)
{
    conn *c = (conn *)h;
    worker *w = c->w;
    if (c->prev)
        c->prev->next = c->next;
    else
        w->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    w->n_conns--;
    free(c);
    check_done(w);
}

/* Frees the request in service and takes the connection out of every queue. */
static void stream_clear(conn *c)
{
    worker *w = c->w;
    stream *s = &c->st;
    sim_engine_remove(&w->eng, &s->es, rb_now_ns());
    s->blocked = 0;
    sim_render_ctx_free(&s->rc);
    rb_buf_free(&s->text);
    c->busy = 0;
    arm_pace(w); /* a waiting request may have started */
}

static void conn_detach(conn *c)
{
    worker *w = c->w;
    c->closing = 1;
    stream_clear(c);
    sim_http_free(&c->hp);
    w->in_total -= c->in.len;
    rb_buf_free(&c->in);
    arm_pace(w);
}

/* Closes now; queued writes are dropped. */
static void conn_abort(conn *c)
{
    if (c->closing) return;
    conn_detach(c);
    uv_close((uv_handle_t *)&c->tcp, on_closed);
}

/* Closes with RST: SO_LINGER 0, before any response. */
static void conn_reset(conn *c)
{
    if (c->closing) return;
    uv_os_fd_t fd;
    if (uv_fileno((uv_handle_t *)&c->tcp, &fd) == 0) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    conn_abort(c);
}

/* Closes a connection that is already being closed, if libuv has not yet
 * (a peer that does not read never lets a shutdown finish). */
static void conn_force_close(conn *c)
{
    if (!uv_is_closing((uv_handle_t *)&c->tcp)) uv_close((uv_handle_t *)&c->tcp, on_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    conn *c = req->data;
    free(req);
    /* Our FIN is out. Lingering: wait for the peer's EOF (on_read) or the
     * deadline (on_sweep), reading and dropping what it still sends. */
    if (status < 0 || c->peer_eof) conn_force_close(c);
}

/* Closes after the queued writes are sent, with a lingering close as
 * nginx's: the socket keeps reading and discarding until the peer closes
 * (or LINGER_MAX_NS), because closing with unread input sends an RST that
 * can destroy the response (a 413 to a client still sending its body) in
 * the peer's receive queue. A peer that takes neither our bytes nor our FIN
 * is closed at the deadline anyway (by on_sweep). */
static void conn_end(conn *c)
{
    if (c->closing) return;
    conn_detach(c);
    int64_t linger =
        c->w->cfg->idle_timeout_ns < LINGER_MAX_NS ? c->w->cfg->idle_timeout_ns : LINGER_MAX_NS;
    c->deadline_ns = rb_now_ns() + linger;
    if (c->read_paused) {
        c->read_paused = 0;
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    }
    uv_shutdown_t *req = malloc(sizeof *req);
    if (!req || uv_shutdown(req, (uv_stream_t *)&c->tcp, on_shutdown) != 0) {
        free(req);
        uv_close((uv_handle_t *)&c->tcp, on_closed);
        return;
    }
    req->data = c;
}

/* ------------------------------------------------------------ responses */

/* rb_buf's policy is to report no memory; simserver's is to abort on it (a
 * server without memory cannot answer, and every buffer is bounded by the
 * request limits). Called on each buffer before its bytes are used. */
static void need_memory(const rb_buf *b)
{
    if (b->err) abort();
}

static void respond(conn *c, int status, const char *ctype, const char *body, size_t len,
                    const char *extra, int keep_alive)
{
    worker *w = c->w;
    keep_alive = keep_alive && !w->draining;
    rb_buf *o = &w->out;
    rb_buf_reset(o);
    int say = keep_alive && c->hp.req.http_minor == 0 ? SIM_KEEP_ALIVE_SAY : keep_alive;
    sim_render_head(o, status, ctype, (int64_t)len, say, extra);
    rb_buf_add(o, body, len);
    need_memory(o);
    if (conn_write1(c, o->data, o->len) != 0) return;
    if (!keep_alive) conn_end(c);
}

static void respond_error(conn *c, int status, const char *message, const char *type,
                          const char *param, const char *code, const char *extra, int keep_alive)
{
    rb_buf body = {0};
    sim_render_error(&body, message, type, param, code);
    need_memory(&body);
    respond(c, status, "application/json", body.data, body.len, extra, keep_alive);
    rb_buf_free(&body);
}

/* ------------------------------------------------------------ the engine */

/* Arms the one timer for the earliest deadline. Inside on_pace it does
 * nothing (on_pace arms once at its end); a timer already armed earlier than
 * the heap's top is left alone (it fires, finds nothing due, and re-arms):
 * timerfd_settime is the costliest call on the token path. */
static void arm_pace(worker *w)
{
    if (!w->pace_open || w->in_pace) return;
    int64_t next = sim_engine_next_deadline(&w->eng);
    if (next < 0) return;
    if (w->pace.armed && w->pace.deadline_ns <= next) return;
    rb_timer_start_at(&w->pace, next, w->pace.cb);
}

static const char *finish_of(const stream *s)
{
    return s->es.finish_stop ? "stop" : "length";
}

static void append_stamp(rb_buf *o, const stream *s, int64_t t)
{
    if (s->stamp) sim_render_stamp(o, t);
}

/* Ends a served request: the connection goes back to reading. A peer that
 * half-closed still gets the answers to the requests it sent before its
 * FIN (pipelined ones wait in c->in); the connection ends after the last. */
static void stream_finish(conn *c, int64_t now)
{
    worker *w = c->w;
    stream *s = &c->st;
    int keep = s->keep_alive && !w->draining;
    stream_clear(c);
    if (c->closing) return;
    if (!keep) {
        conn_end(c);
        return;
    }
    c->deadline_ns = rb_now_ns() + w->cfg->idle_timeout_ns; /* fresh: never early */
    if (c->in_process) return;                              /* conn_process goes on with the rest */
    if (c->in.len) {
        /* Bytes of the next request that came in meanwhile. */
        char *buf;
        size_t n;
        w->in_total -= c->in.len;
        rb_buf_take(&c->in, &buf, &n); /* it holds bytes: no error */
        conn_process(c, buf, n);       /* it ends c if the peer is gone */
        free(buf);
    } else if (c->peer_eof && !c->busy) {
        conn_end(c);
        return;
    }
    if (c->read_paused && !c->closing && !c->busy && !c->peer_eof) {
        c->read_paused = 0;
        if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) conn_abort(c);
    }
}

/* ---- requests with choices (n > 1, stop strings, logprobs, continuous usage) */

static const char *choice_finish(const sim_choice *ch)
{
    switch (ch->finish) {
    case SIM_FINISH_LENGTH:
        return "length";
    case SIM_FINISH_NONE:
        return NULL;
    default:
        return "stop";
    }
}

typedef struct lp_source {
    const sim_engine *e;
    const sim_stream *s;
    int choice;
} lp_source;

static void lp_get(const void *ud, int64_t pos, sim_token *tok, sim_logprobs *lp)
{
    const lp_source *src = ud;
    sim_engine_choice_logprobs(src->e, src->s, src->choice, pos, tok, lp);
}

/* The rendering of choice c: its last step's chunk, or (full) its whole text. */
static sim_render_choice choice_render(const sim_stream *es, int c, int full)
{
    const sim_choice *ch = &es->ch->ch[c];
    int stopped = ch->finish == SIM_FINISH_STOP_STR;
    return (sim_render_choice){
        .index = c,
        .text = full ? NULL : ch->emit,
        .len = full ? 0 : ch->emit_len,
        .space = full ? 0 : ch->emit_space,
        .finish = choice_finish(ch),
        .stop_reason = stopped ? es->spec.stop[ch->stop_idx] : NULL,
        .stop_len = stopped ? es->spec.stop_len[ch->stop_idx] : 0,
    };
}

static void render_choice_event(worker *w, rb_buf *o, stream *s, const sim_event *e)
{
    const sim_stream *es = &s->es;
    if (e->kind == SIM_EV_ROLE) {
        sim_render_choice_role(o, &s->rc, e->choice, es->spec.continuous_usage,
                               es->spec.prompt_tokens);
        return;
    }
    const sim_choice *ch = &es->ch->ch[e->choice];
    sim_render_choice rc = choice_render(es, e->choice, 0);
    lp_source src = {&w->eng, es, e->choice};
    sim_render_lp lp = {.get = lp_get,
                        .ud = &src,
                        .first = ch->pos,
                        .count = es->n_out > 0,
                        .text_offset = ch->text_offset,
                        .top = es->spec.top_logprobs};
    if (es->spec.logprobs) rc.lp = &lp;
    rc.usage = es->spec.continuous_usage;
    rc.prompt = es->spec.prompt_tokens;
    rc.completion = ch->tokens;
    sim_render_choice_chunk(o, &s->rc, &rc);
}

static void render_full_choices(worker *w, rb_buf *body, stream *s)
{
    const sim_stream *es = &s->es;
    rb_buf text = {0};
    sim_render_full_begin(body, &s->rc);
    for (int c = 0; c < es->ch->n; c++) {
        rb_buf_reset(&text);
        sim_engine_choice_text(&w->eng, es, c, &text);
        need_memory(&text);
        sim_render_choice rc = choice_render(es, c, 1);
        rc.text = text.data ? text.data : "";
        rc.len = text.len;
        lp_source src = {&w->eng, es, c};
        sim_render_lp lp = {.get = lp_get,
                            .ud = &src,
                            .first = 0,
                            .count = es->ch->ch[c].tokens,
                            .top = es->spec.top_logprobs};
        if (es->spec.logprobs) rc.lp = &lp;
        sim_render_full_choice(body, &s->rc, &rc);
    }
    sim_render_full_end(body, es->spec.prompt_tokens, sim_stream_completion_tokens(es), es->cached);
    rb_buf_free(&text);
}

/* Non-streamed responses: the whole body at the end. */
static void write_full(conn *c, int fault_cut)
{
    worker *w = c->w;
    stream *s = &c->st;
    rb_buf body = {0};
    const sim_stream *es = &s->es;
    if (es->ch) {
        render_full_choices(w, &body, s);
    } else {
        need_memory(&s->text);
        sim_render_full(&body, &s->rc, s->text.data ? s->text.data : "", s->text.len, finish_of(s),
                        es->spec.prompt_tokens, es->emitted, es->cached);
    }
    need_memory(&body);
    size_t send_len = body.len;
    int64_t declared = (int64_t)body.len;
    if (es->fault == SIM_FAULT_MALFORMED_CHUNK) {
        send_len = body.len / 2; /* a body that is not JSON */
        declared = (int64_t)send_len;
    } else if (fault_cut) {
        send_len = body.len / 2; /* shorter than declared */
    }
    char extra[256] = "";
    if (s->stamp)
        snprintf(extra, sizeof extra,
                 "x-sim-queue-ns: %lld\r\nx-sim-prefill-ns: %lld\r\nx-sim-decode-ns: %lld\r\n"
                 "x-sim-cached-tokens: %lld\r\nx-sim-max-late-ns: %lld\r\n",
                 (long long)(es->start_ns - es->arrival_ns),
                 (long long)(es->first_ns - es->start_ns), (long long)(es->last_ns - es->first_ns),
                 (long long)es->cached, (long long)es->max_late_ns);
    rb_buf *o = &w->out;
    rb_buf_reset(o);
    int keep = s->keep_alive && !w->draining;
    sim_render_head(o, 200, "application/json", declared,
                    keep && !s->chunked ? SIM_KEEP_ALIVE_SAY : keep, extra);
    rb_buf_add(o, body.data, send_len);
    rb_buf_free(&body);
    need_memory(o);
    conn_write1(c, o->data, o->len);
}

/* Writes every event of c's stream that is due, in one write. */
static void stream_pump(conn *c)
{
    worker *w = c->w;
    const sim_config *cfg = w->cfg;
    stream *s = &c->st;
    rb_buf *o = &w->out;
    int64_t now = rb_now_ns();
    rb_buf_reset(o);
    if (s->stream && !s->head_sent) {
        sim_render_head(o, 200, "text/event-stream; charset=utf-8", s->chunked ? -1 : -2,
                        s->keep_alive, NULL);
        s->head_sent = 1;
    }
    size_t head_end = o->len;
    size_t payload = head_end;
    if (s->stream && s->chunked) {
        if (rb_buf_reserve(o, CHUNK_HDR_RESERVE)) abort(); /* see need_memory */
        o->len += CHUNK_HDR_RESERVE;
        payload = o->len;
    }
    sim_stream *es = &s->es;
    int ended = 0, drop = 0, stall = 0;
    while (o->len - payload < BATCH_BYTES) {
        sim_event ev[SIM_STEP_EVENTS_MAX];
        int n_ev = 0;
        sim_step r = sim_engine_step(&w->eng, es, now, ev, &n_ev);
        for (int k = 0; k < n_ev; k++) {
            const sim_event *e = &ev[k];
            if (!s->stream) {
                /* (a response of no tokens has one empty token event; with
                 * choices the body is rebuilt at the end) */
                if (e->kind == SIM_EV_TOKEN && es->n_out > 0 && !es->ch) {
                    rb_buf_add(&s->text, " ", 1);
                    rb_buf_add(&s->text, e->tok.word, e->tok.len);
                }
                continue;
            }
            append_stamp(o, s, now);
            if (es->ch && e->kind != SIM_EV_MALFORMED)
                render_choice_event(w, o, s, e);
            else if (e->kind == SIM_EV_ROLE)
                sim_render_role(o, &s->rc);
            else if (e->kind == SIM_EV_MALFORMED)
                sim_render_malformed(o);
            else
                sim_render_token(o, &s->rc, e->tok.word, e->tok.len, e->last ? finish_of(s) : NULL);
        }
        ended = r == SIM_STEP_ENDED;
        drop = r == SIM_STEP_DROP;
        stall = r == SIM_STEP_STALL;
        if (r != SIM_STEP_MORE) break;
    }
    if (s->stream && ended) {
        if (es->spec.include_usage) {
            append_stamp(o, s, now);
            sim_render_usage(o, &s->rc, es->spec.prompt_tokens, sim_stream_completion_tokens(es),
                             es->cached);
        }
        append_stamp(o, s, now);
        sim_render_done(o);
        if (s->stamp)
            sim_render_truth(o, es->start_ns - es->arrival_ns, es->first_ns - es->start_ns,
                             es->last_ns - es->first_ns, es->cached, es->max_late_ns);
    }
    /* Frame and write what was rendered. Appends first (they may move the
     * buffer), then the iovecs. */
    need_memory(o);
    if (s->stream) {
        size_t plen = o->len - payload;
        size_t start = payload;
        if (s->chunked) {
            if (plen) {
                char hdr[CHUNK_HDR_RESERVE + 1];
                int hl = snprintf(hdr, sizeof hdr, "%zx\r\n", plen);
                start = payload - (size_t)hl;
                memcpy(o->data + start, hdr, (size_t)hl);
                rb_buf_puts(o, "\r\n");
            }
            if (ended) rb_buf_puts(o, "0\r\n\r\n");
            need_memory(o);
        }
        uv_buf_t bufs[2];
        unsigned nb = 0;
        if (head_end) bufs[nb++] = uv_buf_init(o->data, (unsigned)head_end);
        if (o->len > payload) bufs[nb++] = uv_buf_init(o->data + start, (unsigned)(o->len - start));
        if (nb && conn_write(c, bufs, nb) != 0) return;
    } else if (ended || drop || stall) {
        write_full(c, drop || stall);
        if (c->closing) return;
    }
    if (drop) {
        conn_end(c); /* no [DONE]: the stream is cut */
        return;
    }
    if (stall) {
        /* Never finishes: the slot is freed, the connection stays open until
         * the client or the idle timeout closes it. */
        sim_engine_stall(&w->eng, es, rb_now_ns());
        arm_pace(w);
        c->deadline_ns = rb_now_ns() + cfg->idle_timeout_ns;
        return;
    }
    if (ended) {
        sim_engine_complete(&w->eng, es, now);
        stream_finish(c, now);
        return;
    }
    if (es->hn.deadline_ns <= now && uv_stream_get_write_queue_size((uv_stream_t *)&c->tcp) > 0) {
        /* A full batch is still in the socket's queue: go on when it left
         * (on_write). A client that stops reading is cut by the idle timeout. */
        s->blocked = 1;
        c->deadline_ns = rb_now_ns() + cfg->idle_timeout_ns;
        return;
    }
    sim_engine_schedule(&w->eng, es);
    arm_pace(w);
}

static void on_pace(rb_timer *t)
{
    worker *w = t->data;
    sim_stream *es;
    w->in_pace = 1;
    int64_t t0 = rb_now_ns(), now = t0;
    int served = 0;
    while ((es = sim_engine_pop_due(&w->eng, now))) {
        stream_pump(CONN_OF_STREAM(es));
        now = rb_now_ns();
        if (++served >= PACE_PASS_STREAMS || now - t0 >= PACE_PASS_NS) break;
    }
    w->in_pace = 0;
    /* Streams still due re-arm the timer in the past: it fires on the next
     * loop iteration, after the I/O that is ready now. */
    arm_pace(w);
}

/* -------------------------------------------------------------- requests */

static void fault_response(conn *c, sim_fault f, int keep)
{
    static const struct {
        const char *message, *type, *code;
    } e[SIM_FAULT_COUNT] = {
        [SIM_FAULT_RATE_LIMIT] = {"Rate limit reached (simulated).", "rate_limit_error",
                                  "rate_limit_exceeded"},
        [SIM_FAULT_SERVER_ERROR] =
            {"The server had an error while processing your request (simulated).", "server_error",
             NULL},
        [SIM_FAULT_UNAVAILABLE] = {"The server is overloaded or not ready yet (simulated).",
                                   "server_error", "service_unavailable"},
        [SIM_FAULT_INVALID_REQUEST] = {"Invalid request (simulated).", "invalid_request_error",
                                       NULL},
        [SIM_FAULT_INVALID_API_KEY] = {"Incorrect API key provided (simulated).",
                                       "invalid_request_error", "invalid_api_key"},
    };
    respond_error(c, sim_fault_status(f), e[f].message, e[f].type, NULL, e[f].code, NULL, keep);
}

static void start_completion(conn *c, int chat)
{
    worker *w = c->w;
    const sim_config *cfg = w->cfg;
    const sim_http_request *req = &c->hp.req;
    int keep = req->keep_alive && !w->draining;
    int64_t now = rb_now_ns();

    sim_fault f = SIM_FAULT_NONE;
    if (req->fail[0]) {
        f = sim_fault_parse(req->fail);
        if (f == SIM_FAULT_NONE) {
            char msg[128];
            snprintf(msg, sizeof msg, "X-Sim-Fail: unknown fault type '%s'", req->fail);
            respond_error(c, 400, msg, "invalid_request_error", NULL, NULL, NULL, keep);
            return;
        }
    }
    stream *s = &c->st;
    sim_api_error err;
    sim_stream *es = &s->es;
    if (sim_api_parse(req->body, req->body_len, chat, &w->alim, &es->spec, &err) != 0) {
        respond_error(c, err.status, err.message, err.type, err.param, err.code, NULL, keep);
        return;
    }
    if (f == SIM_FAULT_NONE) f = sim_fault_draw(w->rng, cfg->failure_rate_pct, cfg->failure_mask);
    if (f != SIM_FAULT_NONE) {
        SIM_METRIC_ADD(w->m->faults[f], 1);
        if (sim_fault_status(f)) {
            sim_req_spec_free(&es->spec);
            fault_response(c, f, keep);
            return;
        }
        if (f == SIM_FAULT_CONNECTION_RESET) {
            sim_req_spec_free(&es->spec);
            conn_reset(c);
            return;
        }
    }
    if (sim_engine_full(&w->eng)) {
        sim_req_spec_free(&es->spec);
        respond_error(c, 429, "The server's waiting queue is full.", "rate_limit_error", NULL,
                      "queue_full", NULL, keep);
        return;
    }

    for (int p = 0; p < SIM_IGN_COUNT; p++)
        if (es->spec.ignored & (1u << p)) SIM_METRIC_ADD(w->m->ignored[p], 1);
    s->stamp = req->stamp;
    s->chunked = req->http_minor >= 1;
    s->stream = es->spec.stream;
    s->keep_alive = keep && (s->chunked || !s->stream);
    sim_engine_prepare(&w->eng, es, f, now);
    s->head_sent = 0;
    char id[64];
    w->req_counter++;
    snprintf(id, sizeof id, "%s-%d-%llu", chat ? "chatcmpl" : "cmpl", w->index,
             (unsigned long long)w->req_counter);
    sim_render_ctx_init(&s->rc, chat, id, (int64_t)time(NULL), es->spec.model);
    need_memory(&s->rc.pre);
    need_memory(&s->rc.body);
    c->busy = 1;
    c->deadline_ns = 0;

    if (sim_engine_admit(&w->eng, es, now) == SIM_ADMIT_WAITING) return;
    if (es->hn.deadline_ns <= rb_now_ns()) {
        stream_pump(c); /* zero latency: the whole response in one write */
    } else {
        sim_engine_schedule(&w->eng, es);
        arm_pace(w);
    }
}

static void handle_request(conn *c)
{
    worker *w = c->w;
    const sim_http_request *req = &c->hp.req;
    int keep = req->keep_alive && !w->draining;
    sim_route route =
        req->path_too_long ? SIM_ROUTE_NOT_FOUND : sim_api_route(req->method, req->path);
    switch (route) {
    case SIM_ROUTE_COMPLETIONS:
    case SIM_ROUTE_CHAT:
        start_completion(c, route == SIM_ROUTE_CHAT);
        return;
    case SIM_ROUTE_HEALTH:
        respond(c, 200, "application/json", "", 0, NULL, keep);
        return;
    case SIM_ROUTE_MODELS: {
        rb_buf b = {0};
        sim_render_models(&b, w->cfg->served, w->cfg->n_served, (int64_t)time(NULL));
        need_memory(&b);
        respond(c, 200, "application/json", b.data, b.len, NULL, keep);
        rb_buf_free(&b);
        return;
    }
    case SIM_ROUTE_METRICS: {
        sim_metrics sum;
        sim_metrics_sum(w->slots, w->n_slots, &sum);
        rb_buf b = {0};
        sim_metrics_render(&sum, w->cfg->served[0], &b);
        need_memory(&b);
        respond(c, 200, "text/plain; version=0.0.4; charset=utf-8", b.data, b.len, NULL, keep);
        rb_buf_free(&b);
        return;
    }
    case SIM_ROUTE_TOKENIZE:
    case SIM_ROUTE_DETOKENIZE: {
        rb_buf b = {0};
        sim_api_error err;
        if (sim_api_tokenize(req->body, req->body_len, route == SIM_ROUTE_DETOKENIZE, &w->alim, &b,
                             &err))
            respond_error(c, err.status, err.message, err.type, err.param[0] ? err.param : NULL,
                          err.code, NULL, keep);
        else
            respond(c, 200, "application/json", b.data, b.len, NULL, keep);
        rb_buf_free(&b);
        return;
    }
    case SIM_ROUTE_BAD_METHOD:
        respond_error(c, 405, "Method Not Allowed", "invalid_request_error", NULL, NULL,
                      strcmp(req->path, "/v1/completions") == 0 ||
                              strcmp(req->path, "/v1/chat/completions") == 0 ||
                              strcmp(req->path, "/tokenize") == 0 ||
                              strcmp(req->path, "/detokenize") == 0
                          ? "allow: POST\r\n"
                          : "allow: GET\r\n",
                      keep);
        return;
    case SIM_ROUTE_NOT_FOUND:
    default: {
        char msg[SIM_HTTP_PATH_MAX + 32];
        snprintf(msg, sizeof msg, "Not Found: %s",
                 req->path_too_long ? "(path too long)" : req->path);
        respond_error(c, 404, msg, "invalid_request_error", NULL, NULL, NULL, keep);
        return;
    }
    }
}

static void conn_buffer_input(conn *c, const char *data, size_t len)
{
    size_t before = c->in.len;
    if (rb_buf_add(&c->in, data, len)) {
        /* no memory for a client's pipelined bytes: that client goes */
        c->w->in_total -= before;
        conn_abort(c);
        return;
    }
    c->w->in_total += len;
    /* Past the hold, stop reading until the request in service is done. */
    if ((c->in.len >= PIPELINE_HOLD_BYTES || c->w->in_total >= PIPELINE_TOTAL_BYTES) &&
        !c->read_paused) {
        uv_read_stop((uv_stream_t *)&c->tcp);
        c->read_paused = 1;
    }
}

static void conn_process(conn *c, const char *data, size_t len)
{
    worker *w = c->w;
    c->in_process = 1;
    while (len > 0 && !c->busy && !c->closing) {
        /* A request must arrive whole within the idle timeout (slowloris). */
        if (!sim_http_in_message(&c->hp)) c->deadline_ns = rb_now_ns() + w->cfg->idle_timeout_ns;
        size_t used = 0;
        int rc = sim_http_feed(&c->hp, data, len, &used);
        data += used;
        len -= used;
        if (rc == SIM_HTTP_MORE) {
            if (c->hp.req.expect_continue && !c->sent_continue && c->hp.headers_done) {
                static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
                c->sent_continue = 1;
                conn_write1(c, cont, sizeof cont - 1);
            }
            break;
        }
        if (rc != SIM_HTTP_DONE) {
            const char *msg = rc == 413   ? "The request body is too large."
                              : rc == 431 ? "The request header section is too large."
                                          : "The request is not valid HTTP/1.1.";
            respond_error(c, rc, msg, "invalid_request_error", NULL, NULL, NULL, 0);
            break;
        }
        c->sent_continue = 0;
        handle_request(c);
        if (!c->closing) sim_http_next(&c->hp);
    }
    if (len > 0 && !c->closing) conn_buffer_input(c, data, len);
    c->in_process = 0;
    /* A half-closed peer with nothing more in service: nothing to answer. */
    if (c->peer_eof && !c->busy && !c->closing) conn_end(c);
}

/* ----------------------------------------------------------- connections */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
    conn *c = h->data;
    size_t n = sizeof c->w->rbuf;
    size_t total = c->w->in_total;
    size_t wroom = total < PIPELINE_TOTAL_BYTES ? PIPELINE_TOTAL_BYTES - total : 0;
    if (c->busy && !c->closing) {
        /* What is read now is held: no more than both holds allow (none
         * left: a zero-length buffer, and on_read pauses the reads). */
        size_t room = c->in.len < PIPELINE_HOLD_BYTES ? PIPELINE_HOLD_BYTES - c->in.len : 0;
        if (wroom < room) room = wroom;
        if (room < n) n = room;
    } else if (!c->closing && wroom < n) {
        /* A read may start a request and leave the rest held: with the
         * worker's hold full, small reads keep that rest small. */
        n = wroom > PIPELINE_MIN_READ ? wroom : PIPELINE_MIN_READ;
    }
    *buf = uv_buf_init(c->w->rbuf, (unsigned)n);
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    conn *c = st->data;
    if (c->closing) {
        if (nread >= 0) return; /* lingering close: drop what the peer still sends */
        c->peer_eof = 1;
        uv_read_stop(st);
        /* The peer is done; close once our last bytes left. */
        if (nread != UV_EOF || uv_stream_get_write_queue_size(st) == 0) conn_force_close(c);
        return;
    }
    if (nread == UV_EOF) {
        /* A half-close still gets its answer (writes fail if the peer is
         * gone); with nothing in service there is nothing to answer. */
        c->peer_eof = 1;
        uv_read_stop(st);
        if (!c->busy || c->st.es.state == SIM_ST_STALLED) conn_end(c);
        return;
    }
    if (nread == UV_ENOBUFS) {
        /* No room to hold more (on_alloc): wait for the request in service. */
        uv_read_stop(st);
        c->read_paused = 1;
        return;
    }
    if (nread < 0) {
        conn_abort(c); /* a reset or another error */
        return;
    }
    if (nread == 0) return;
    if (c->busy) {
        conn_buffer_input(c, buf->base, (size_t)nread);
        return;
    }
    conn_process(c, buf->base, (size_t)nread);
}

static void on_connection(uv_stream_t *server, int status)
{
    worker *w = server->data;
    if (status < 0 || w->draining) return;
    conn *c = calloc(1, sizeof *c);
    if (!c) return;
    c->w = w;
    uv_tcp_init(&w->loop, &c->tcp);
    c->tcp.data = c;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        uv_close((uv_handle_t *)&c->tcp, (uv_close_cb)free);
        return;
    }
    uv_tcp_nodelay(&c->tcp, 1);
    sim_http_init(&c->hp, &w->hlim);
    sim_stream_init(&c->st.es);
    c->next = w->conns;
    if (w->conns) w->conns->prev = c;
    w->conns = c;
    w->n_conns++;
    c->deadline_ns = rb_now_ns() + w->cfg->idle_timeout_ns;
    if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) conn_abort(c);
}

/* The idle and slow-request cut, checked a few times per timeout. */
static void on_sweep(uv_timer_t *t)
{
    worker *w = t->data;
    int64_t now = rb_now_ns();
    for (conn *c = w->conns; c; c = c->next) {
        if (!c->deadline_ns || now < c->deadline_ns) continue;
        if (c->closing) {
            conn_force_close(c); /* its deadline was the linger's */
            continue;
        }
        /* Every deadline is a fresh reading plus the timeout, so this is the
         * silence the connection was given, by the same clock. */
        int64_t idle_ns = now - (c->deadline_ns - w->cfg->idle_timeout_ns);
        SIM_METRIC_ADD(w->m->idle_cuts, 1);
        if (w->m->idle_cut_min_ns == 0 || idle_ns < w->m->idle_cut_min_ns)
            __atomic_store_n(&w->m->idle_cut_min_ns, idle_ns, __ATOMIC_RELAXED);
        conn_abort(c);
    }
}

/* ------------------------------------------------------------- shutdown */

static void close_handles(worker *w)
{
    if (w->handles_closed) return;
    w->handles_closed = 1;
    uv_close((uv_handle_t *)&w->sweep, NULL);
    uv_close((uv_handle_t *)&w->grace, NULL);
    uv_close((uv_handle_t *)&w->sigint, NULL);
    uv_close((uv_handle_t *)&w->sigterm, NULL);
    if (w->pace_open) {
        w->pace_open = 0;
        rb_timer_close(&w->pace, NULL);
    }
}

static void check_done(worker *w)
{
    if (w->draining && w->n_conns == 0) close_handles(w);
}

static void on_grace(uv_timer_t *t)
{
    worker *w = t->data;
    for (conn *c = w->conns; c; c = c->next) {
        if (c->closing)
            conn_force_close(c);
        else
            conn_abort(c);
    }
    check_done(w);
}

static void on_signal(uv_signal_t *sig, int signum)
{
    worker *w = sig->data;
    if (w->draining) return;
    w->draining = 1;
    sim_engine_drain(&w->eng);
    if (w->server_open) {
        w->server_open = 0;
        uv_close((uv_handle_t *)&w->server, NULL);
    }
    /* Connections with no request in service close now; the others finish
     * their response (then close), or are cut when the grace runs out. */
    conn *c = w->conns;
    while (c) {
        conn *next = c->next;
        if (!c->busy || c->st.es.state == SIM_ST_STALLED) conn_end(c);
        c = next;
    }
    /* Requests still waiting for a slot will not get one: answer 503. */
    sim_stream *ws;
    while ((ws = sim_engine_first_waiting(&w->eng))) {
        conn *wc = CONN_OF_STREAM(ws);
        stream_clear(wc);
        respond_error(wc, 503, "The server is shutting down.", "server_error", NULL, NULL, NULL, 0);
    }
    uv_timer_start(&w->grace, on_grace, (uint64_t)(w->cfg->shutdown_grace_ns / 1000000), 0);
    check_done(w);
}

/* ------------------------------------------------------------------ run */

int sim_server_run(const sim_config *cfg, int listen_fd, int index, sim_metrics *slots, int n_slots)
{
    worker *w = calloc(1, sizeof *w);
    if (!w) return 1;
    w->cfg = cfg;
    w->index = index;
    w->slots = slots;
    w->n_slots = n_slots;
    w->m = &slots[index];
    w->hlim = (sim_http_limits){.max_header_bytes = cfg->max_header_bytes,
                                .max_body_bytes = cfg->max_body_bytes};
    w->alim = (sim_api_limits){.served_models = cfg->served,
                               .n_served = cfg->n_served,
                               .max_model_len = cfg->max_model_len,
                               .tok = cfg->tok};
    w->rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(w->rng, (unsigned long)(cfg->seed + (uint64_t)index * 7919u));
    int rc = sim_cache_init(&w->cache, cfg->prefix_cache_blocks, cfg->block_size);
    if (rc) {
        fprintf(stderr, "simserver: prefix cache: %s\n", strerror(-rc));
        goto fail_early;
    }
    sim_engine_cfg ecfg = {.lat = cfg->lat,
                           .mode = cfg->mode,
                           .seed = cfg->seed,
                           .max_waiting_queue_length = cfg->max_waiting_queue_length,
                           .enable_prefix_caching = cfg->enable_prefix_caching};
    sim_engine_init(&w->eng, &ecfg, w->rng, &w->cache, w->m);
    uv_loop_init(&w->loop);
    uv_tcp_init(&w->loop, &w->server);
    w->server.data = w;
    rc = uv_tcp_open(&w->server, listen_fd);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&w->server, 4096, on_connection);
    if (rc) {
        fprintf(stderr, "simserver: worker %d: listen: %s\n", index, uv_strerror(rc));
        uv_close((uv_handle_t *)&w->server, NULL);
        uv_run(&w->loop, UV_RUN_DEFAULT);
        uv_loop_close(&w->loop);
        goto fail_early;
    }
    w->server_open = 1;
    rc = rb_timer_init(&w->loop, &w->pace);
    if (rc) {
        fprintf(stderr, "simserver: timer: %s\n", strerror(-rc));
        abort();
    }
    w->pace.data = w;
    w->pace.cb = on_pace;
    w->pace_open = 1;
    uv_timer_init(&w->loop, &w->sweep);
    w->sweep.data = w;
    int64_t sweep_ms = cfg->idle_timeout_ns / 1000000 / 8;
    if (sweep_ms < 1) sweep_ms = 1;
    if (sweep_ms > 250) sweep_ms = 250;
    uv_timer_start(&w->sweep, on_sweep, (uint64_t)sweep_ms, (uint64_t)sweep_ms);
    uv_unref((uv_handle_t *)&w->sweep);
    uv_timer_init(&w->loop, &w->grace);
    w->grace.data = w;
    uv_signal_init(&w->loop, &w->sigint);
    uv_signal_init(&w->loop, &w->sigterm);
    w->sigint.data = w->sigterm.data = w;
    uv_signal_start(&w->sigint, on_signal, SIGINT);
    uv_signal_start(&w->sigterm, on_signal, SIGTERM);

    uv_run(&w->loop, UV_RUN_DEFAULT);
    /* The loop ends once the drain closed every handle. */
    uv_loop_close(&w->loop);
    sim_engine_free(&w->eng);
    rb_buf_free(&w->out);
    sim_cache_free(&w->cache);
    gsl_rng_free(w->rng);
    free(w);
    return 0;

fail_early:
    sim_cache_free(&w->cache);
    gsl_rng_free(w->rng);
    free(w);
    return 1;
}
