/* Tests of lg_worker, run in this process (as --num-workers 0 runs it)
 * against a small HTTP server on loopback in a thread of the test: every
 * dispatch is at or after its intended time and the intended times are the
 * schedule's own; each stage counts its own requests; a stop counts every
 * arrival of the worker's share that was not sent; and k workers take the
 * arrivals by index mod k, each once; --save-token-times lists each
 * token's time as the ITL histogram took it, up to its cap, the rest
 * counted; under --batch-tick requests wait for the worker's ticks, which
 * sleep in between. No bound on lateness: the host may be slow. Every wait is
 * bounded (the server's poll, the worker's deadline). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lg_cli.h"
#include "lg_plan.h"
#include "lg_record.h"
#include "lg_sched.h"
#include "lg_worker.h"
#include "rb_clock.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define SEED 7
#define RATE_PER_S 200
#define IN_TOKENS 4  /* the usage the server reports */
#define OUT_TOKENS 2 /* content chunks per streamed reply, and the usage's count */
#define MAX_ARRIVALS 64
#define MAX_STAGES 4
/* A worker that has not ended this long after its start is cut by its own
 * deadline (the plan's end_deadline_ns), and the test fails saying so. */
#define SAFETY_NS (30 * 1000000000LL)
#define SERVER_LIFE_NS (120 * 1000000000LL)

/* A test's server and run, which its teardown ends and frees. */
typedef struct srv srv;
typedef struct run run;
typedef struct fixture {
    srv *s;
    run *r;
    int64_t batch_tick_ns; /* --batch-tick for run_new (0: off) */
} fixture;

/* ---- the server --------------------------------------------------------- */

#define SRV_CLIENTS 64
#define SRV_BUF (64 * 1024)

typedef struct srv_conn {
    int fd;
    size_t len;
    char buf[SRV_BUF];
} srv_conn;

struct srv {
    int lfd, port;
    pthread_t th;
    int started;
    int quit;               /* atomic: the thread ends */
    int64_t answered;       /* atomic: requests read whole (counted as their reply goes) */
    int64_t stop_after;     /* set the plan's stop (interrupted) at this many answered; 0: never */
    lg_shared *sh;          /* atomic: where the stop goes */
    int64_t bad_requests;   /* atomic: requests it could not read (an error the test reports) */
    int64_t reply_delay_ns; /* atomic: how long the reply waits after its request (0: none) */
    srv_conn conns[SRV_CLIENTS];
};

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* One reply: OpenAI's streamed completion (OUT_TOKENS content events, one
 * with usage, [DONE]) or the same as one JSON body. */
static int srv_reply(int fd, int stream)
{
    static const char chunk[] =
        "data: {\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"created\":0,\"model\":\"m\","
        "\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null}]}\n\n";
    char usage[160];
    snprintf(usage, sizeof usage,
             "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}",
             IN_TOKENS, OUT_TOKENS, IN_TOKENS + OUT_TOKENS);
    char body[2048];
    int n = 0;
    if (stream) {
        for (int i = 0; i < OUT_TOKENS; i++)
            n += snprintf(body + n, sizeof body - (size_t)n, "%s", chunk);
        n += snprintf(body + n, sizeof body - (size_t)n,
                      "data: {\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"created\":0,"
                      "\"model\":\"m\",\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":"
                      "\"length\"}],%s}\n\ndata: [DONE]\n\n",
                      usage);
    } else {
        n = snprintf(body, sizeof body,
                     "{\"id\":\"cmpl-t\",\"object\":\"text_completion\",\"created\":0,\"model\":"
                     "\"m\",\"choices\":[{\"index\":0,\"text\":\"aa\",\"finish_reason\":"
                     "\"length\"}],%s}",
                     usage);
    }
    char head[256];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n"
                     "Connection: keep-alive\r\n\r\n",
                     stream ? "text/event-stream" : "application/json", n);
    return send_all(fd, head, (size_t)h) || send_all(fd, body, (size_t)n) ? -1 : 0;
}

/* The request's Content-Length (-1: none or bad). head is NUL-terminated. */
static long content_length(const char *head)
{
    for (const char *l = strstr(head, "\r\n"); l; l = strstr(l + 2, "\r\n")) {
        if (strncasecmp(l + 2, "content-length:", 15) == 0) {
            char *end;
            long v = strtol(l + 17, &end, 10);
            return end == l + 17 || v < 0 ? -1 : v;
        }
    }
    return -1;
}

/* Answers every whole request in c's buffer. Returns -1 to drop the connection. */
static int srv_serve(srv *s, srv_conn *c)
{
    for (;;) {
        char *eoh = memmem(c->buf, c->len, "\r\n\r\n", 4);
        if (!eoh) return c->len == sizeof c->buf ? -1 : 0;
        size_t hl = (size_t)(eoh - c->buf) + 4;
        char saved = c->buf[hl - 2];
        c->buf[hl - 2] = '\0'; /* the head as a string (its last CRLF kept) */
        long cl = content_length(c->buf);
        c->buf[hl - 2] = saved;
        if (cl < 0 || (size_t)cl > sizeof c->buf - hl) {
            __atomic_add_fetch(&s->bad_requests, 1, __ATOMIC_RELAXED);
            return -1;
        }
        if (c->len < hl + (size_t)cl) return 0; /* the body is still coming */
        int stream = memmem(c->buf + hl, (size_t)cl, "\"stream\":true", 13) != NULL;
        /* Counted (and the stop set) before the reply goes: once the
         * worker has its reply, the count includes it. */
        int64_t n = __atomic_add_fetch(&s->answered, 1, __ATOMIC_RELEASE);
        lg_shared *sh = __atomic_load_n(&s->sh, __ATOMIC_ACQUIRE);
        if (n == __atomic_load_n(&s->stop_after, __ATOMIC_ACQUIRE) && sh) {
            /* as lg_run's signal watch does: interrupted, then stop */
            __atomic_store_n(&sh->interrupted, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
        }
        int64_t delay = __atomic_load_n(&s->reply_delay_ns, __ATOMIC_ACQUIRE);
        if (delay > 0) {
            struct timespec ts = {.tv_sec = delay / 1000000000LL, .tv_nsec = delay % 1000000000LL};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        }
        if (srv_reply(c->fd, stream)) return -1;
        size_t used = hl + (size_t)cl;
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
    }
}

static void srv_drop(srv_conn *c)
{
    close(c->fd);
    c->fd = -1;
    c->len = 0;
}

static void *srv_main(void *arg)
{
    srv *s = arg;
    int64_t until = rb_now_ns() + SERVER_LIFE_NS;
    while (!__atomic_load_n(&s->quit, __ATOMIC_ACQUIRE) && rb_now_ns() < until) {
        struct pollfd pf[SRV_CLIENTS + 1];
        int map[SRV_CLIENTS + 1], n = 0;
        pf[n] = (struct pollfd){.fd = s->lfd, .events = POLLIN};
        map[n++] = -1;
        for (int i = 0; i < SRV_CLIENTS; i++) {
            if (s->conns[i].fd < 0) continue;
            pf[n] = (struct pollfd){.fd = s->conns[i].fd, .events = POLLIN};
            map[n++] = i;
        }
        if (poll(pf, (nfds_t)n, 20) <= 0) continue;
        for (int j = 0; j < n; j++) {
            if (!pf[j].revents) continue;
            if (map[j] < 0) {
                int fd = accept(s->lfd, NULL, NULL);
                if (fd < 0) continue;
                int one = 1;
                setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                int i = 0;
                while (i < SRV_CLIENTS && s->conns[i].fd >= 0)
                    i++;
                if (i == SRV_CLIENTS) {
                    close(fd);
                    continue;
                }
                s->conns[i].fd = fd;
                s->conns[i].len = 0;
                continue;
            }
            srv_conn *c = &s->conns[map[j]];
            ssize_t k = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                srv_drop(c);
                continue;
            }
            c->len += (size_t)k;
            if (srv_serve(s, c)) srv_drop(c);
        }
    }
    for (int i = 0; i < SRV_CLIENTS; i++)
        if (s->conns[i].fd >= 0) srv_drop(&s->conns[i]);
    return NULL;
}

/* A server on 127.0.0.1, on a port of the kernel's choosing. */
static srv *srv_start(fixture *f)
{
    srv *s = f->s = calloc(1, sizeof *s); /* the fixture's teardown stops it */
    assert_non_null(s);
    s->lfd = -1;
    for (int i = 0; i < SRV_CLIENTS; i++)
        s->conns[i].fd = -1;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(s->lfd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (bind(s->lfd, (struct sockaddr *)&a, sizeof a) || listen(s->lfd, 128) ||
        getsockname(s->lfd, (struct sockaddr *)&a, &al))
        fail_msg("server: cannot listen on 127.0.0.1: %s", strerror(errno));
    s->port = ntohs(a.sin_port);
    if (pthread_create(&s->th, NULL, srv_main, s)) fail_msg("server: cannot start its thread");
    s->started = 1;
    return s;
}

static void srv_stop(srv *s)
{
    if (!s) return;
    if (s->started) {
        __atomic_store_n(&s->quit, 1, __ATOMIC_RELEASE);
        pthread_join(s->th, NULL);
    }
    if (s->lfd >= 0) close(s->lfd);
    free(s);
}

static int64_t srv_answered(srv *s)
{
    return __atomic_load_n(&s->answered, __ATOMIC_ACQUIRE);
}

/* ---- a plan, as lg_run builds one --------------------------------------- */

struct run {
    lg_opts o;
    lg_plan p;
    int k, have_plan;
    int fds[2];
    FILE *files[2];
    char *argv[48];
    char url[64], num[32], workers[32], pause[32];
    lg_stage stages[MAX_STAGES]; /* what the test asked for, kept for the expectation */
    int n_stages;
    int64_t pause_ns;
};

/* One stage of RATE_PER_S per count (counts[i] arrivals, no duration), or
 * with n_stages == 1 the single stage of --request-rate and --num-prompts. */
static run *run_new(fixture *f, int k, int stream, const int64_t *counts, int n_stages,
                    int64_t pause_s)
{
    assert_true(k >= 1 && k <= 2 && n_stages >= 1 && n_stages <= MAX_STAGES);
    srv *s = f->s;
    run *r = f->r = calloc(1, sizeof *r); /* the fixture's teardown frees it */
    assert_non_null(r);
    r->k = k;
    r->fds[0] = r->fds[1] = -1;
    snprintf(r->url, sizeof r->url, "http://127.0.0.1:%d", s->port);
    snprintf(r->num, sizeof r->num, "%lld", (long long)counts[0]);
    snprintf(r->workers, sizeof r->workers, "%d", k);
    snprintf(r->pause, sizeof r->pause, "%llds", (long long)pause_s);
    int n = 0;
    const char *fixed[][2] = {{"--base-url", r->url},
                              {"--seed", STR(SEED)},
                              {"--burstiness", "1"},
                              {"--dataset-name", "random"},
                              {"--random-input-len", "4"},
                              {"--random-output-len", STR(OUT_TOKENS)},
                              {"--prompt-pool-size", "8"},
                              {"--receive-clock", "user"},
                              {"--sim-stamps", "off"},
                              {"--request-timeout", "60s"},
                              {"--drain-timeout", "60s"},
                              {"--num-workers", k > 1 ? r->workers : "0"},
                              {"--quiet", stream ? "--stream" : "--no-stream"}};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        r->argv[n++] = (char *)fixed[i][0];
        r->argv[n++] = (char *)fixed[i][1];
    }
    if (n_stages == 1) {
        r->argv[n++] = "--request-rate";
        r->argv[n++] = STR(RATE_PER_S);
        r->argv[n++] = "--num-prompts";
        r->argv[n++] = r->num;
    } else {
        for (int i = 0; i < n_stages; i++) {
            r->argv[n++] = "--stage";
            r->argv[n++] =
                STR(RATE_PER_S) ":1s"; /* made count-bounded below (no flag says "N at R/s") */
        }
        r->argv[n++] = "--stage-pause";
        r->argv[n++] = r->pause;
    }
    r->argv[n] = NULL;
    char err[512] = "";
    lg_opts_defaults(&r->o, 2);
    if (lg_cli_parse(&r->o, n, r->argv, err, sizeof err))
        fail_msg("lg_cli_parse refused the test's flags: %s", err);
    for (int i = 0; i < n_stages; i++) {
        r->stages[i] = (lg_stage){.rate_per_s = RATE_PER_S, .max_requests = counts[i]};
        if (n_stages > 1) r->o.stages[i] = r->stages[i];
    }
    r->n_stages = n_stages;
    r->pause_ns = n_stages > 1 ? pause_s * 1000000000LL : 0;
    if (lg_cli_finish(&r->o, err, sizeof err))
        fail_msg("lg_cli_finish refused the test's flags: %s", err);
    /* (after lg_cli_finish, which refuses it with the user clock: the
     * worker's ticks are under test here, not the clock) */
    r->o.batch_tick_ns = f->batch_tick_ns;
    r->have_plan = 1; /* lg_plan_free after lg_plan_build either way */
    if (lg_plan_build(&r->p, &r->o, k, 0, err, sizeof err)) fail_msg("lg_plan_build: %s", err);
    assert_false(r->p.closed);
    assert_int_equal(r->p.n_stages, n_stages);
    for (int w = 0; w < k; w++) {
        r->files[w] = tmpfile();
        assert_non_null(r->files[w]);
        r->fds[w] = fileno(r->files[w]);
    }
    r->p.detailed_fd = r->fds;
    int rc = lg_plan_map(&r->p, 0, k);
    if (rc) fail_msg("lg_plan_map: %s", strerror(-rc));
    __atomic_store_n(&s->sh, lg_plan_shared(&r->p), __ATOMIC_RELEASE);
    return r;
}

static void run_free(run *r)
{
    if (!r) return;
    if (r->have_plan) lg_plan_free(&r->p);
    for (int w = 0; w < 2; w++)
        if (r->files[w]) fclose(r->files[w]);
    free(r);
}

/* The run's start instant, a little ahead as lg_run's in-process margin. */
static void run_start_instant(run *r)
{
    lg_shared *sh = lg_plan_shared(&r->p);
    sh->t0_ns = rb_now_ns() + 5000000LL;
    r->p.end_deadline_ns = sh->t0_ns + SAFETY_NS;
}

/* Runs worker w to its end, in this process. */
static void run_worker(run *r, int w)
{
    int rc = lg_worker_run(&r->p, w);
    if (rc) fail_msg("worker %d exited %d: %s", w, rc, lg_plan_slot(&r->p, w)->error);
    if (rb_now_ns() >= r->p.end_deadline_ns)
        fail_msg("worker %d was still running %lld s after the start (its deadline cut it)", w,
                 (long long)(SAFETY_NS / 1000000000LL));
    assert_int_equal(lg_plan_slot(&r->p, w)->state, LG_W_DONE);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    srv_stop(f->s); /* first: it may still point at the plan's region */
    run_free(f->r);
    free(f);
    return 0;
}

/* ---- what the schedule says, independently ------------------------------ */

typedef struct expect {
    int64_t n;
    lg_arrival a[MAX_ARRIVALS];
    int64_t share[2][MAX_STAGES]; /* per worker of k, per stage: index % k == w */
} expect;

static void expect_of(const run *r, expect *e)
{
    lg_sched_spec spec = {.seed = SEED,
                          .burstiness = 1.0,
                          .stages = r->stages,
                          .n_stages = (size_t)r->n_stages,
                          .pause_ns = r->pause_ns};
    char err[256] = "";
    lg_sched *it = lg_sched_new(&spec, err, sizeof err);
    if (!it) fail_msg("lg_sched_new: %s", err);
    memset(e, 0, sizeof *e);
    lg_arrival a;
    while (e->n < MAX_ARRIVALS && lg_sched_next(it, &a)) {
        assert_int_equal(a.index, e->n);
        assert_true(a.stage >= 0 && a.stage < r->n_stages);
        e->a[e->n++] = a;
        e->share[a.index % r->k][a.stage]++;
    }
    assert_false(lg_sched_next(it, &a));
    lg_sched_free(it);
}

/* ---- the per-request records -------------------------------------------- */

static int read_records(const run *r, int w, lg_record *out, int max)
{
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    ssize_t len = pread(r->fds[w], buf, (1 << 20) - 1, 0);
    assert_true(len >= 0);
    int n = 0;
    for (char *p = buf, *end = buf + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) fail_msg("worker %d's records end in a partial line", w);
        if (n == max) fail_msg("worker %d wrote more than %d records", w, max);
        char err[256] = "";
        if (lg_record_parse(p, (size_t)(nl + 1 - p), &out[n], err, sizeof err))
            fail_msg("worker %d's record %d: %s", w, n, err);
        n++;
        p = nl + 1;
    }
    free(buf);
    return n;
}

/* Worker w's dispatches, one per arrival of its share in schedule order:
 * the intended time is t0 plus the schedule's offset exactly, the dispatch
 * never before it, and in order. Returns how many (a prefix of its share). */
static int64_t check_dispatches(const run *r, const expect *e, int w)
{
    const lg_slot *slot = lg_plan_slot(&r->p, w);
    const lg_dispatch_sample *d = lg_plan_sample(&r->p, w);
    int64_t t0 = lg_plan_shared(&r->p)->t0_ns, n = (int64_t)slot->n_sample, j = 0;
    assert_true(n <= e->n);
    for (int64_t i = 0; i < e->n && j < n; i++) {
        const lg_arrival *a = &e->a[i];
        if (a->index % r->k != w) continue;
        if (d[j].index != a->index)
            fail_msg("worker %d's dispatch %lld is arrival %lld, wanted %lld", w, (long long)j,
                     (long long)d[j].index, (long long)a->index);
        if (d[j].intended_ns != t0 + a->t_ns)
            fail_msg("arrival %lld: intended t0%+lld ns, the schedule says t0%+lld ns",
                     (long long)a->index, (long long)(d[j].intended_ns - t0), (long long)a->t_ns);
        if (d[j].dispatch_ns < d[j].intended_ns)
            fail_msg("arrival %lld was sent %lld ns before its intended time", (long long)a->index,
                     (long long)(d[j].intended_ns - d[j].dispatch_ns));
        if (j && d[j].dispatch_ns < d[j - 1].dispatch_ns)
            fail_msg("arrival %lld was sent before arrival %lld", (long long)a->index,
                     (long long)d[j - 1].index);
        assert_int_equal(d[j].stage, a->stage);
        j++;
    }
    assert_int_equal(j, n);
    return n;
}

/* Worker w's records: one per request it sent, its own, each once, ok,
 * with the schedule's intended offset; marks seen[index]. */
static void check_records(const run *r, const expect *e, int w, int64_t want, int *seen)
{
    lg_record *rec = calloc(MAX_ARRIVALS, sizeof *rec);
    assert_non_null(rec);
    int n = read_records(r, w, rec, MAX_ARRIVALS);
    assert_int_equal(n, want);
    assert_int_equal(lg_plan_slot(&r->p, w)->detailed_written, (uint64_t)want);
    assert_int_equal(lg_plan_slot(&r->p, w)->detailed_lost, 0);
    for (int i = 0; i < n; i++) {
        const lg_record *x = &rec[i];
        if (x->index < 0 || x->index >= e->n)
            fail_msg("record of arrival %lld", (long long)x->index);
        const lg_arrival *a = &e->a[x->index];
        assert_int_equal(x->worker, w);
        assert_int_equal(x->index % r->k, w);
        if (seen[x->index]++) fail_msg("arrival %lld has two records", (long long)x->index);
        assert_int_equal(x->stage, a->stage);
        assert_int_equal(x->intended_ns, a->t_ns);
        assert_true(x->dispatch_ns >= x->intended_ns);
        /* nothing of a reply is received before its request left (a reply
         * read inside the callback that sent it once took that callback's
         * start, before the send), and its times are in order */
        if (x->first_byte_ns < x->dispatch_ns || x->first_token_ns < x->first_byte_ns ||
            x->end_ns < x->first_token_ns)
            fail_msg("arrival %lld: dispatch %lld, first byte %lld, first token %lld, end %lld ns",
                     (long long)x->index, (long long)x->dispatch_ns, (long long)x->first_byte_ns,
                     (long long)x->first_token_ns, (long long)x->end_ns);
        assert_string_equal(x->cls, "ok");
        assert_int_equal(x->status, 200);
        assert_int_equal(x->output_tokens, OUT_TOKENS);
    }
    free(rec);
}

static const lg_stage_stats *stats(const run *r, int w, int s)
{
    return lg_plan_stats(&r->p, w, s);
}

/* ---- the tests ---------------------------------------------------------- */

static void dispatch_is_never_early_and_at_the_schedules_times(void **state)
{
    fixture *f = *state;
    int64_t count = 40;
    srv_start(f);
    run_new(f, 1, 1, &count, 1, 0);
    run *r = f->r;
    expect e;
    expect_of(r, &e);
    assert_int_equal(e.n, count);
    run_start_instant(r);
    run_worker(r, 0);

    assert_int_equal(check_dispatches(r, &e, 0), count);
    const lg_stage_stats *st = stats(r, 0, 0);
    int64_t t0 = lg_plan_shared(&r->p)->t0_ns;
    assert_int_equal(st->dispatched, count);
    assert_int_equal(st->completed, count);
    assert_int_equal(st->failed, 0);
    assert_int_equal(st->done, count);
    assert_int_equal(st->not_dispatched, 0);
    assert_int_equal(st->first_intended_ns, t0 + e.a[0].t_ns);
    assert_int_equal(st->last_intended_ns, t0 + e.a[count - 1].t_ns);
    assert_true(st->first_dispatch_ns >= st->first_intended_ns);
    assert_int_equal(st->output_tokens, OUT_TOKENS * count);
    int seen[MAX_ARRIVALS] = {0};
    check_records(r, &e, 0, count, seen);
    for (int64_t i = 0; i < count; i++)
        assert_int_equal(seen[i], 1);
    assert_int_equal(srv_answered(f->s), count);
    assert_int_equal(__atomic_load_n(&f->s->bad_requests, __ATOMIC_RELAXED), 0);
}

/* --batch-tick: the worker wakes only on its ticks, so a request waits for
 * the first tick at or after its intended time: its lag is at least the
 * distance to that tick, about uniform over [0, tick) for Poisson arrivals.
 * The mean of 40 is then 2.5 ms +/- 0.23 ms for a 5 ms tick, and under
 * 0.3 tick (1.5 ms) with odds of about 1e-5; a loop that woke at each
 * intended time has a mean lag of its wake-up latency (tens of us; more on
 * a busy host, which only the mutants would notice). Each request still goes
 * out in order and never early (check_dispatches). Between ticks the worker
 * sleeps: its loop idle most of the window, and never more sleeps than
 * there are tick boundaries in it. */
static void a_ticked_worker_sends_on_its_ticks(void **state)
{
    fixture *f = *state;
    int64_t count = 40, tick = 5000000;
    f->batch_tick_ns = tick;
    srv_start(f);
    run_new(f, 1, 1, &count, 1, 0);
    run *r = f->r;
    expect e;
    expect_of(r, &e);
    run_start_instant(r);
    run_worker(r, 0);

    assert_int_equal(check_dispatches(r, &e, 0), count);
    const lg_dispatch_sample *d = lg_plan_sample(&r->p, 0);
    double lag = 0;
    for (int64_t i = 0; i < count; i++)
        lag += (double)(d[i].dispatch_ns - d[i].intended_ns);
    lag /= (double)count;
    if (lag < 0.3 * (double)tick)
        fail_msg("mean dispatch lag %.0f us under a %lld us tick: the requests did not wait for "
                 "their ticks",
                 lag / 1e3, (long long)(tick / 1000));
    const lg_slot *sl = lg_plan_slot(&r->p, 0);
    int64_t win = sl->window_end_ns - sl->window_start_ns;
    assert_true(win > 0);
    assert_true(sl->ticks >= 1);
    assert_true(sl->ticks_overrun <= sl->ticks);
    if (sl->ticks - sl->ticks_overrun > (uint64_t)(win / tick) + 1)
        fail_msg("%llu sleeps in a %lld us window of %lld us ticks",
                 (unsigned long long)(sl->ticks - sl->ticks_overrun), (long long)(win / 1000),
                 (long long)(tick / 1000));
    if (sl->idle_ns < win / 2)
        fail_msg("loop idle %lld us of a %lld us window: the sleeps between ticks are not idle",
                 (long long)(sl->idle_ns / 1000), (long long)(win / 1000));
    const lg_stage_stats *st = stats(r, 0, 0);
    assert_int_equal(st->completed, count);
    assert_int_equal(st->failed, 0);
    assert_int_equal(st->output_tokens, OUT_TOKENS * count);
    assert_int_equal(srv_answered(f->s), count);
}

/* A worker that runs no wire clock says why in its slot (the report's
 * client_bias.workers[].receive_clock_fallback_reason; under --mpi, each
 * rank's own): its capture's error when its own capture did not open (here
 * an interface that does not exist), its run's fallback when the run fell
 * back before it started; its tokens are timed all the same. */
static void a_worker_without_the_wire_clock_says_why(void **state)
{
    fixture *f = *state;
    int64_t count = 4;
    srv_start(f);
    for (int pass = 0; pass < 2; pass++) {
        __atomic_store_n(&f->s->sh, NULL, __ATOMIC_RELEASE); /* not the region freed next */
        run_free(f->r);
        f->r = NULL;
        run_new(f, 1, 1, &count, 1, 0);
        run *r = f->r;
        if (pass == 0) {
            r->o.receive_clock = LG_RXC_WIRE;
            snprintf(r->o.capture_iface, sizeof r->o.capture_iface, "rbnoif9");
        } else {
            r->o.receive_clock = LG_RXC_KERNEL;
            snprintf(r->o.receive_clock_fallback, sizeof r->o.receive_clock_fallback,
                     "no CAP_NET_RAW: packets cannot be captured");
        }
        run_start_instant(r);
        run_worker(r, 0);
        const lg_slot *sl = lg_plan_slot(&r->p, 0);
        assert_string_equal(sl->rx_clock, "kernel");
        assert_string_equal(sl->capture_iface, "");
        if (pass == 0) {
            if (!sl->rx_fallback[0]) fail_msg("no reason for the capture that did not open");
        } else
            assert_string_equal(sl->rx_fallback, "no CAP_NET_RAW: packets cannot be captured");
        assert_int_equal(stats(r, 0, 0)->completed, count);
    }
}

static void each_stage_counts_its_own_requests(void **state)
{
    fixture *f = *state;
    int64_t counts[2] = {10, 15};
    srv_start(f);
    run_new(f, 1, 0, counts, 2, 0); /* non-streamed: one JSON body each */
    run *r = f->r;
    expect e;
    expect_of(r, &e);
    assert_int_equal(e.n, 25);
    run_start_instant(r);
    run_worker(r, 0);

    assert_int_equal(check_dispatches(r, &e, 0), 25);
    int64_t t0 = lg_plan_shared(&r->p)->t0_ns;
    for (int s = 0; s < 2; s++) {
        const lg_stage_stats *st = stats(r, 0, s);
        uint64_t want = (uint64_t)counts[s];
        assert_int_equal(st->dispatched, want);
        assert_int_equal(st->dispatched, st->completed + st->failed);
        assert_int_equal(st->completed, want);
        assert_int_equal(st->done, want);
        assert_int_equal(st->not_dispatched, 0);
        assert_int_equal(st->events, want); /* a whole response is one event */
        assert_int_equal(st->input_tokens, IN_TOKENS * want);
        assert_int_equal(st->output_tokens, OUT_TOKENS * want);
        /* the stage's own first and last arrivals */
        int64_t first = s ? counts[0] : 0, last = first + counts[s] - 1;
        assert_int_equal(st->first_intended_ns, t0 + e.a[first].t_ns);
        assert_int_equal(st->last_intended_ns, t0 + e.a[last].t_ns);
    }
    assert_int_equal(lg_plan_slot(&r->p, 0)->cur_stage, 2);
    int seen[MAX_ARRIVALS] = {0};
    check_records(r, &e, 0, 25, seen);
    assert_int_equal(srv_answered(f->s), 25);
    assert_int_equal(__atomic_load_n(&f->s->bad_requests, __ATOMIC_RELAXED), 0);
}

static void a_stop_before_the_start_counts_the_whole_share(void **state)
{
    fixture *f = *state;
    int64_t counts[2] = {10, 15};
    srv_start(f);
    run_new(f, 2, 1, counts, 2, 0);
    run *r = f->r;
    expect e;
    expect_of(r, &e);
    lg_shared *sh = lg_plan_shared(&r->p);
    /* a SIGINT during the set-up, as lg_run's watch records it */
    sh->interrupted = 1;
    sh->stop = 1;
    run_start_instant(r);
    for (int w = 0; w < 2; w++) {
        run_worker(r, w);
        assert_int_equal(lg_plan_slot(&r->p, w)->n_sample, 0);
        for (int s = 0; s < 2; s++) {
            const lg_stage_stats *st = stats(r, w, s);
            assert_int_equal(st->dispatched, 0);
            assert_int_equal(st->done, 0);
            if (st->not_dispatched != (uint64_t)e.share[w][s])
                fail_msg("worker %d stage %d: %llu not dispatched, its share is %lld", w, s,
                         (unsigned long long)st->not_dispatched, (long long)e.share[w][s]);
        }
    }
    /* 10 + 15 arrivals: 5 + 8 for worker 0 (even indices), 5 + 7 for worker 1 */
    assert_int_equal(e.share[0][0], 5);
    assert_int_equal(e.share[0][1], 8);
    assert_int_equal(e.share[1][0], 5);
    assert_int_equal(e.share[1][1], 7);
    assert_int_equal(srv_answered(f->s), 0);
}

/* A schedule the worker cannot make ends it before its loop, with exit code
 * 2 (as bad input) and the schedule's own reason in its slot, and nothing
 * sent. */
static void a_schedule_refused_exits_2_with_its_reason(void **state)
{
    fixture *f = *state;
    int64_t counts[1] = {4};
    srv_start(f);
    run_new(f, 1, 1, counts, 1, 0);
    run *r = f->r;
    r->p.spec.max_requests = -1;
    run_start_instant(r);
    assert_int_equal(lg_worker_run(&r->p, 0), 2);
    const char *why = lg_plan_slot(&r->p, 0)->error;
    if (strncmp(why, "schedule: max_requests: must be >= 0", 36) != 0)
        fail_msg("the slot's error is '%s'", why);
    assert_int_equal(srv_answered(f->s), 0);
}

static void a_stop_mid_run_counts_the_rest_of_the_share(void **state)
{
    fixture *f = *state;
    int64_t counts[2] = {10, 15};
    srv_start(f);
    /* An hour's pause before stage 1: no arrival of it can fall due before
     * the stop, which the server sets once it has answered two requests. */
    run_new(f, 2, 1, counts, 2, 3600);
    __atomic_store_n(&f->s->stop_after, 2, __ATOMIC_RELEASE);
    run *r = f->r;
    expect e;
    expect_of(r, &e);
    assert_true(e.a[counts[0]].t_ns >= 3600 * 1000000000LL);
    int w = 1;
    run_start_instant(r);
    run_worker(r, w);

    lg_shared *sh = lg_plan_shared(&r->p);
    assert_int_equal(sh->stop, 1);
    int64_t sent = check_dispatches(r, &e, w), total = 0;
    for (int s = 0; s < 2; s++) {
        const lg_stage_stats *st = stats(r, w, s);
        if (st->dispatched + st->not_dispatched != (uint64_t)e.share[w][s])
            fail_msg("worker %d stage %d: %llu dispatched + %llu not, its share is %lld", w, s,
                     (unsigned long long)st->dispatched, (unsigned long long)st->not_dispatched,
                     (long long)e.share[w][s]);
        assert_int_equal(st->dispatched, st->completed + st->failed);
        assert_int_equal(st->done, st->dispatched);
        total += (int64_t)st->dispatched;
    }
    assert_int_equal(total, sent);
    assert_true(stats(r, w, 0)->dispatched >= 2); /* the server answered two */
    assert_int_equal(stats(r, w, 1)->dispatched, 0);
    assert_int_equal(stats(r, w, 1)->not_dispatched, e.share[w][1]);
    /* the other worker's slot is untouched */
    for (int s = 0; s < 2; s++) {
        assert_int_equal(stats(r, 0, s)->dispatched, 0);
        assert_int_equal(stats(r, 0, s)->not_dispatched, 0);
    }
    assert_int_equal(srv_answered(f->s), sent);
    assert_int_equal(__atomic_load_n(&f->s->bad_requests, __ATOMIC_RELAXED), 0);
}

static void two_workers_take_the_arrivals_by_index_mod_k(void **state)
{
    fixture *f = *state;
    int64_t counts[2] = {10, 15};
    srv_start(f);
    run_new(f, 2, 1, counts, 2, 0);
    run *r = f->r;
    expect e;
    expect_of(r, &e);
    assert_int_equal(e.n, 25);
    /* One start instant for both, as in a forked run: worker 1, run after
     * worker 0 has ended, finds all its arrivals due and sends them late. */
    run_start_instant(r);
    int seen[MAX_ARRIVALS] = {0}, sampled[MAX_ARRIVALS] = {0};
    for (int w = 0; w < 2; w++) {
        run_worker(r, w);
        int64_t share = e.share[w][0] + e.share[w][1];
        assert_int_equal(check_dispatches(r, &e, w), share);
        const lg_dispatch_sample *d = lg_plan_sample(&r->p, w);
        for (int64_t j = 0; j < share; j++)
            sampled[d[j].index]++;
        for (int s = 0; s < 2; s++) {
            const lg_stage_stats *st = stats(r, w, s);
            assert_int_equal(st->dispatched, e.share[w][s]);
            assert_int_equal(st->completed, e.share[w][s]);
            assert_int_equal(st->dispatched, st->completed + st->failed);
            assert_int_equal(st->not_dispatched, 0);
        }
        check_records(r, &e, w, share, seen);
    }
    for (int64_t i = 0; i < e.n; i++) {
        if (sampled[i] != 1)
            fail_msg("arrival %lld was dispatched %d times", (long long)i, sampled[i]);
        assert_int_equal(seen[i], 1);
    }
    for (int s = 0; s < 2; s++)
        assert_int_equal(stats(r, 0, s)->dispatched + stats(r, 1, s)->dispatched, counts[s]);
    assert_int_equal(srv_answered(f->s), 25);
    assert_int_equal(__atomic_load_n(&f->s->bad_requests, __ATOMIC_RELAXED), 0);
}

/* --save-token-times with cap: each record lists min(cap, OUT_TOKENS)
 * times and counts the rest; the first is its first token's, they never
 * decrease, and with every token listed their gaps are the ITL histogram's
 * (its count exactly, its sum of ns within the times' 1 us each). */
static void token_times_with_cap(void **state, int64_t cap)
{
    fixture *f = *state;
    int64_t count = 30;
    srv_start(f);
    run_new(f, 1, 1, &count, 1, 0);
    run *r = f->r;
    /* A server that answers at once is often read in the callback that sent
     * the request, whose token times are then the send's own (0 us): a
     * reply 1 ms later gives every record a first-token offset with a
     * sub-microsecond part, so a time rounded instead of floored shows. */
    __atomic_store_n(&f->s->reply_delay_ns, 1000000LL, __ATOMIC_RELEASE);
    r->o.save_token_times = 1; /* the plan reads the options it was built from */
    r->o.token_times_cap = cap;
    run_start_instant(r);
    run_worker(r, 0);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    ssize_t len = pread(r->fds[0], buf, (1 << 20) - 1, 0);
    assert_true(len > 0);
    int64_t n = 0, gaps = 0, gap_us = 0, listed = cap < OUT_TOKENS ? cap : OUT_TOKENS;
    for (char *p = buf, *end = buf + len, *nl; p < end; p = nl + 1, n++) {
        nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) fail_msg("a partial line");
        lg_record x;
        int64_t tt[OUT_TOKENS + 1];
        char err[256] = "";
        if (lg_record_parse_times(p, (size_t)(nl + 1 - p), &x, tt, OUT_TOKENS + 1, err, sizeof err))
            fail_msg("record %lld: %s", (long long)n, err);
        assert_string_equal(x.cls, "ok");
        assert_int_equal(x.has_token_times, 1);
        assert_int_equal(x.n_token_times, listed);
        assert_int_equal(x.token_times_dropped, OUT_TOKENS - listed);
        int64_t d = x.first_token_ns - x.dispatch_ns;
        assert_true(d >= 0);
        assert_int_equal(tt[0], d / 1000);
        for (int64_t j = 1; j < x.n_token_times; j++) {
            assert_true(tt[j] >= tt[j - 1]);
            gap_us += tt[j] - tt[j - 1];
            gaps++;
        }
    }
    free(buf);
    assert_int_equal(n, count);
    if (listed == OUT_TOKENS) {
        const mdl_hist *itl = lg_stats_hist_c(stats(r, 0, 0), LG_H_ITL);
        assert_int_equal(itl->total, (uint64_t)gaps);
        assert_true(fabs(itl->sum - (double)gap_us * 1000.0) < 1000.0 * (double)gaps);
    }
}

static void token_times_list_every_token(void **state)
{
    token_times_with_cap(state, 4096);
}

static void token_times_past_the_cap_are_counted(void **state)
{
    token_times_with_cap(state, 1);
}

static int group_setup(void **state)
{
    (void)state;
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    curl_global_cleanup();
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(dispatch_is_never_early_and_at_the_schedules_times, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_ticked_worker_sends_on_its_ticks, setup, teardown),
        cmocka_unit_test_setup_teardown(a_worker_without_the_wire_clock_says_why, setup, teardown),
        cmocka_unit_test_setup_teardown(each_stage_counts_its_own_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(a_stop_before_the_start_counts_the_whole_share, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_schedule_refused_exits_2_with_its_reason, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_stop_mid_run_counts_the_rest_of_the_share, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(two_workers_take_the_arrivals_by_index_mod_k, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(token_times_list_every_token, setup, teardown),
        cmocka_unit_test_setup_teardown(token_times_past_the_cap_are_counted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
