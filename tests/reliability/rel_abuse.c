/* rel_abuse: abusive loopback clients for simserver's reliability tests:
 * many idle connections, slowloris headers, oversized requests, pipelined
 * garbage, clients that never read. One poll() loop drives every socket;
 * the outcome is printed as one "key=value ..." line on stdout.
 * Single-threaded; loopback only (127.0.0.1). Exit 0 ran, 1 failed, 2 usage.
 * One long file: the abuses share the poll loop, the socket
 * table and the outcome line; main() sets one up and drives the loop. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rb_clock.h"

#define RECV_BYTES 65536

typedef struct {
    int fd;
    char *out; /* bytes still to send (owned) */
    size_t out_len, out_off;
    size_t in_bytes; /* bytes received */
    char head[64];   /* the first bytes received */
    int n200, n4xx, nresp;
    int first_status;
    char tail[16]; /* the last bytes of the previous read (status lines across reads) */
    int64_t t_open_ns, t_closed_ns;
    int64_t t_sent_ns; /* the last send that moved bytes */
    int closed;        /* 1 EOF, 2 reset/error */
} conn;

static conn *g_conns;
static int g_n;
static int g_read = 1; /* 0: never read (noread) */

static void usage(void)
{
    fputs(
        "usage: rel_abuse MODE PORT ARGS...\n"
        "  idle PORT N HOLD_MS              N connections that send nothing\n"
        "  slowloris PORT N EVERY_MS HOLD_MS N connections trickling a header byte every EVERY_MS\n"
        "  bighdr PORT BYTES                a header section of BYTES\n"
        "  bigbody PORT BYTES               a body of BYTES with its Content-Length\n"
        "  garbage PORT CONNS K BYTES SEED  CONNS connections: K pipelined requests, then BYTES "
        "random bytes\n"
        "  noread PORT N K STREAM HOLD_MS   N connections, K pipelined big requests each, never "
        "read\n"
        "  vanish PORT N K AFTER_MS         N connections, K pipelined paced streams each, reset "
        "after AFTER_MS\n"
        "  paced PORT N TOKENS HOLD_MS      N connections, one streamed completion of TOKENS each, "
        "read\n"
        "  halfclose PORT K TOKENS          K pipelined streamed completions, then "
        "shutdown(SHUT_WR)\n"
        "  pipehold PORT N TOKENS BYTES HOLD_MS N connections: a streamed completion, then "
        "BYTES of\n"
        "                                   a pipelined request with a body too large\n"
        "  pipemix PORT ROUNDS TOKENS BYTES  one connection, ROUNDS x (a streamed completion, "
        "BYTES of\n"
        "                                   pipelined GET /health)\n",
        stderr);
    exit(2);
}

static long arg_long(const char *name, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "rel_abuse: %s: must be an integer in [%ld, %ld], got '%s'\n", name, lo, hi,
                s);
        exit(2);
    }
    return v;
}

static int connect_one(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct timeval tv = {.tv_sec = 5};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* bounds connect() */
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* non-blocking from here: the poll loop never stalls on one socket */
    struct timeval zero = {0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &zero, sizeof zero);
    return fd;
}

/* open_all: n connections; returns how many opened (stops at the first error). */
static int open_all(int port, int n)
{
    g_conns = calloc((size_t)n, sizeof *g_conns);
    if (!g_conns) {
        perror("calloc");
        exit(1);
    }
    for (int i = 0; i < n; i++) {
        /* Read before the connection exists, so the server's clock (from its
         * accept) starts after ours: a cut never looks early here. */
        int64_t t_open_ns = rb_now_ns();
        int fd = connect_one(port);
        if (fd < 0) {
            fprintf(stderr, "rel_abuse: connection %d of %d: %s\n", i + 1, n, strerror(-fd));
            g_n = i;
            return i;
        }
        g_conns[i].fd = fd;
        g_conns[i].t_open_ns = t_open_ns;
        g_conns[i].first_status = -1;
    }
    g_n = n;
    return n;
}

static void mark_closed(conn *c, int how)
{
    if (c->closed) return;
    c->closed = how;
    c->t_closed_ns = rb_now_ns();
    close(c->fd);
    c->fd = -1;
}

/* scan: counts "HTTP/1.x NNN" status lines in the bytes received. */
static void scan(conn *c, const char *buf, size_t n)
{
    static char tmp[16 + RECV_BYTES]; /* single-threaded */
    size_t tl = strlen(c->tail);
    memcpy(tmp, c->tail, tl);
    memcpy(tmp + tl, buf, n); /* n <= RECV_BYTES: one recv */
    size_t len = tl + n;
    for (size_t i = 0; i + 12 <= len; i++) {
        if (memcmp(tmp + i, "HTTP/1.", 7) == 0 && (i == 0 || tmp[i - 1] == '\n') &&
            tmp[i + 8] == ' ') {
            int st = atoi(tmp + i + 9);
            if (c->first_status < 0) c->first_status = st;
            c->nresp++;
            if (st == 200) c->n200++;
            if (st >= 400 && st < 500) c->n4xx++;
        }
    }
    size_t keep = len < 11 ? len : 11;
    memcpy(c->tail, tmp + len - keep, keep);
    c->tail[keep] = 0;
}

/* pump: one poll() round over every open connection, at most wait_ms. */
static void pump(int wait_ms)
{
    static struct pollfd *pf;
    static int *idx;
    if (!pf) {
        pf = calloc((size_t)g_n + 1, sizeof *pf);
        idx = calloc((size_t)g_n + 1, sizeof *idx);
        if (!pf || !idx) {
            perror("calloc");
            exit(1);
        }
    }
    int m = 0;
    for (int i = 0; i < g_n; i++) {
        conn *c = &g_conns[i];
        if (c->closed) continue;
        short ev = POLLRDHUP;
        if (g_read) ev |= POLLIN;
        if (c->out_off < c->out_len) ev |= POLLOUT;
        pf[m] = (struct pollfd){.fd = c->fd, .events = ev};
        idx[m++] = i;
    }
    if (m == 0) {
        usleep((useconds_t)wait_ms * 1000);
        return;
    }
    int r = poll(pf, (nfds_t)m, wait_ms);
    if (r <= 0) return;
    for (int j = 0; j < m; j++) {
        conn *c = &g_conns[idx[j]];
        short re = pf[j].revents;
        if (!re) continue;
        if (re & POLLOUT) {
            ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0) {
                c->out_off += (size_t)w;
                c->t_sent_ns = rb_now_ns();
            } else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                mark_closed(c, 2);
                continue;
            }
        }
        if (g_read && (re & (POLLIN | POLLHUP | POLLERR | POLLRDHUP))) {
            char buf[RECV_BYTES];
            for (;;) {
                ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n > 0) {
                    if (c->in_bytes < sizeof c->head - 1) {
                        size_t k = sizeof c->head - 1 - c->in_bytes;
                        memcpy(c->head + c->in_bytes, buf, (size_t)n < k ? (size_t)n : k);
                    }
                    c->in_bytes += (size_t)n;
                    scan(c, buf, (size_t)n);
                    continue;
                }
                if (n == 0)
                    mark_closed(c, 1);
                else if (errno != EAGAIN && errno != EINTR)
                    mark_closed(c, 2);
                break;
            }
        } else if (!g_read && (re & (POLLHUP | POLLERR | POLLRDHUP))) {
            mark_closed(c, (re & POLLERR) ? 2 : 1);
        }
    }
}

static int open_count(void)
{
    int k = 0;
    for (int i = 0; i < g_n; i++)
        k += !g_conns[i].closed;
    return k;
}

/* run_until: pumps until every connection closed or deadline_ns. */
static void run_until(int64_t deadline_ns)
{
    while (open_count() > 0) {
        int64_t left_ms = (deadline_ns - rb_now_ns()) / 1000000;
        if (left_ms <= 0) break;
        pump(left_ms < 50 ? (int)left_ms : 50);
    }
}

static void set_out(conn *c, const char *buf, size_t n)
{
    c->out = malloc(n ? n : 1);
    if (!c->out) {
        perror("malloc");
        exit(1);
    }
    memcpy(c->out, buf, n);
    c->out_len = n;
}

/* report_oneshot: the outcome of connections that each sent one payload. */
static void report_oneshot(const char *mode, int64_t t0_ns)
{
    int closed = 0, reset = 0, n200 = 0, n4xx = 0, nresp = 0, first = -1;
    int64_t max_ms = 0;
    for (int i = 0; i < g_n; i++) {
        conn *c = &g_conns[i];
        closed += c->closed != 0;
        reset += c->closed == 2;
        n200 += c->n200;
        n4xx += c->n4xx;
        nresp += c->nresp;
        if (i == 0) first = c->first_status;
        int64_t end = c->closed ? c->t_closed_ns : rb_now_ns();
        if ((end - t0_ns) / 1000000 > max_ms) max_ms = (end - t0_ns) / 1000000;
    }
    printf("%s conns=%d closed=%d reset=%d responses=%d ok200=%d err4xx=%d first_status=%d "
           "max_ms=%" PRId64 "\n",
           mode, g_n, closed, reset, nresp, n200, n4xx, first, max_ms);
}

/* completion_req: a streamed completion of `tokens` tokens, in buf (cap
 * bytes); returns its length. */
static int completion_req(char *buf, size_t cap, long tokens)
{
    char body[160];
    int bl = snprintf(body, sizeof body,
                      "{\"model\":\"sim-model\",\"prompt\":\"a b c\",\"max_tokens\":%ld,"
                      "\"stream\":true}",
                      tokens);
    return snprintf(buf, cap,
                    "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%s", bl,
                    body);
}

/* count_of: occurrences of needle in hay[0..n). */
static int count_of(const char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    int c = 0;
    for (size_t i = 0; i + k <= n; i++)
        if (memcmp(hay + i, needle, k) == 0) c++;
    return c;
}

int main(int argc, char **argv)
{
    if (argc < 3) usage();
    signal(SIGPIPE, SIG_IGN);
    const char *mode = argv[1];
    int port = (int)arg_long("PORT", argv[2], 1, 65535);
    int64_t t0 = rb_now_ns();

    if (strcmp(mode, "idle") == 0 && argc == 5) {
        int n = (int)arg_long("N", argv[3], 1, 1000000);
        long hold_ms = arg_long("HOLD_MS", argv[4], 0, 600000);
        int got = open_all(port, n);
        printf("ready opened=%d open=%d connect_ms=%" PRId64 "\n", got, open_count(),
               (rb_now_ns() - t0) / 1000000);
        fflush(stdout);
        int64_t t1 = rb_now_ns();
        run_until(t1 + hold_ms * 1000000);
        int64_t first_cut = -1;
        for (int i = 0; i < g_n; i++)
            if (g_conns[i].closed &&
                (first_cut < 0 || g_conns[i].t_closed_ns - g_conns[i].t_open_ns < first_cut))
                first_cut = g_conns[i].t_closed_ns - g_conns[i].t_open_ns;
        printf("idle opened=%d still_open=%d closed_by_server=%d answered=%d first_cut_ms=%" PRId64
               "\n",
               got, open_count(), got - open_count(), 0, first_cut < 0 ? -1 : first_cut / 1000000);
        return got == n ? 0 : 1;
    }
    if (strcmp(mode, "slowloris") == 0 && argc == 6) {
        int n = (int)arg_long("N", argv[3], 1, 1000000);
        long every_ms = arg_long("EVERY_MS", argv[4], 1, 60000);
        long hold_ms = arg_long("HOLD_MS", argv[5], 0, 600000);
        int got = open_all(port, n);
        static const char start[] = "GET /health HTTP/1.1\r\nHost: a\r\nX-Slow: ";
        for (int i = 0; i < g_n; i++)
            set_out(&g_conns[i], start, sizeof start - 1);
        printf("ready opened=%d\n", got);
        fflush(stdout);
        int64_t end = rb_now_ns() + hold_ms * 1000000;
        int64_t next = rb_now_ns() + every_ms * 1000000;
        while (open_count() > 0 && rb_now_ns() < end) {
            if (rb_now_ns() >= next) { /* one more header byte on every open connection */
                for (int i = 0; i < g_n; i++) {
                    conn *c = &g_conns[i];
                    if (c->closed || c->out_off < c->out_len) continue;
                    char *nb = realloc(c->out, c->out_len + 1);
                    if (!nb) {
                        perror("realloc");
                        return 1;
                    }
                    c->out = nb;
                    c->out[c->out_len++] = 'x';
                }
                next += every_ms * 1000000;
            }
            int64_t w = (next - rb_now_ns()) / 1000000;
            pump(w < 1 ? 1 : (w > 50 ? 50 : (int)w));
        }
        int64_t max_cut = -1, min_cut = -1;
        size_t answered = 0, sent_max = 0;
        for (int i = 0; i < g_n; i++) {
            conn *c = &g_conns[i];
            answered += c->in_bytes > 0;
            if (c->out_off > sent_max) sent_max = c->out_off;
            if (!c->closed) continue;
            int64_t d = c->t_closed_ns - c->t_open_ns;
            if (d > max_cut) max_cut = d;
            if (min_cut < 0 || d < min_cut) min_cut = d;
        }
        printf("slowloris opened=%d cut=%d answered=%zu max_header_bytes=%zu min_cut_ms=%" PRId64
               " max_cut_ms=%" PRId64 "\n",
               got, got - open_count(), answered, sent_max, min_cut < 0 ? -1 : min_cut / 1000000,
               max_cut < 0 ? -1 : max_cut / 1000000);
        return got == n ? 0 : 1;
    }
    if ((strcmp(mode, "bighdr") == 0 || strcmp(mode, "bigbody") == 0) && argc == 4) {
        long bytes = arg_long("BYTES", argv[3], 0, 1L << 30);
        char *buf = malloc((size_t)bytes + 256);
        if (!buf) {
            perror("malloc");
            return 1;
        }
        int h;
        if (mode[3] == 'h') {
            h = sprintf(buf, "GET /health HTTP/1.1\r\nHost: a\r\nX-Big: ");
            memset(buf + h, 'a', (size_t)bytes);
            memcpy(buf + h + bytes, "\r\n\r\n", 4);
        } else {
            h = sprintf(buf,
                        "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %ld\r\n\r\n",
                        bytes);
            memset(buf + h, 'a', (size_t)bytes);
        }
        size_t len = (size_t)h + (size_t)bytes + (mode[3] == 'h' ? 4 : 0);
        if (open_all(port, 1) != 1) return 1;
        set_out(&g_conns[0], buf, len);
        free(buf);
        run_until(t0 + 5000 * (int64_t)1000000);
        printf("sent=%zu ", g_conns[0].out_off);
        report_oneshot(mode, t0);
        return 0;
    }
    if (strcmp(mode, "garbage") == 0 && argc == 7) {
        int conns = (int)arg_long("CONNS", argv[3], 1, 100000);
        int k = (int)arg_long("K", argv[4], 0, 100000);
        long bytes = arg_long("BYTES", argv[5], 0, 1L << 26);
        unsigned seed = (unsigned)arg_long("SEED", argv[6], 0, 1L << 30);
        static const char req[] = "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
        size_t len = (size_t)k * (sizeof req - 1) + (size_t)bytes;
        char *buf = malloc(len + 1);
        if (!buf) {
            perror("malloc");
            return 1;
        }
        if (open_all(port, conns) != conns) return 1;
        srandom(seed);
        for (int i = 0; i < conns; i++) {
            for (int j = 0; j < k; j++)
                memcpy(buf + (size_t)j * (sizeof req - 1), req, sizeof req - 1);
            for (long j = 0; j < bytes; j++)
                buf[(size_t)k * (sizeof req - 1) + (size_t)j] = (char)(random() & 0xff);
            set_out(&g_conns[i], buf, len);
        }
        free(buf);
        run_until(t0 + 8000 * (int64_t)1000000);
        report_oneshot(mode, t0);
        return 0;
    }
    if (strcmp(mode, "noread") == 0 && argc == 7) {
        int n = (int)arg_long("N", argv[3], 1, 100000);
        int k = (int)arg_long("K", argv[4], 1, 10000);
        int stream = (int)arg_long("STREAM", argv[5], 0, 1);
        long hold_ms = arg_long("HOLD_MS", argv[6], 0, 600000);
        char body[160], one[320];
        int bl = snprintf(
            body, sizeof body,
            "{\"model\":\"sim-model\",\"prompt\":\"a b\",\"max_tokens\":30000,\"stream\":%s}",
            stream ? "true" : "false");
        int ol = snprintf(
            one, sizeof one,
            "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n%s", bl, body);
        char *buf = malloc((size_t)ol * (size_t)k);
        if (!buf) {
            perror("malloc");
            return 1;
        }
        for (int j = 0; j < k; j++)
            memcpy(buf + (size_t)j * (size_t)ol, one, (size_t)ol);
        g_read = 0;
        int got = open_all(port, n);
        for (int i = 0; i < g_n; i++)
            set_out(&g_conns[i], buf, (size_t)ol * (size_t)k);
        free(buf);
        printf("ready opened=%d\n", got);
        fflush(stdout);
        run_until(rb_now_ns() + hold_ms * 1000000);
        printf("noread opened=%d closed_by_server=%d\n", got, got - open_count());
        return got == n ? 0 : 1;
    }
    if (strcmp(mode, "vanish") == 0 && argc == 6) {
        int n = (int)arg_long("N", argv[3], 1, 100000);
        int k = (int)arg_long("K", argv[4], 1, 1000);
        long after_ms = arg_long("AFTER_MS", argv[5], 0, 600000);
        char one[320];
        static const char body[] =
            "{\"model\":\"sim-model\",\"prompt\":\"a b c\",\"max_tokens\":400,\"stream\":true}";
        int ol = snprintf(one, sizeof one,
                          "POST /v1/completions HTTP/1.1\r\nHost: a\r\nX-Sim-Stamp: "
                          "1\r\nContent-Length: %zu\r\n\r\n%s",
                          sizeof body - 1, body);
        char *buf = malloc((size_t)ol * (size_t)k);
        if (!buf) {
            perror("malloc");
            return 1;
        }
        for (int j = 0; j < k; j++)
            memcpy(buf + (size_t)j * (size_t)ol, one, (size_t)ol);
        int got = open_all(port, n);
        for (int i = 0; i < g_n; i++)
            set_out(&g_conns[i], buf, (size_t)ol * (size_t)k);
        free(buf);
        run_until(rb_now_ns() + after_ms * 1000000);
        size_t bytes = 0;
        int early = 0;
        for (int i = 0; i < g_n; i++) {
            conn *c = &g_conns[i];
            bytes += c->in_bytes;
            if (c->closed) {
                early++;
                continue;
            }
            struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* vanish: RST, mid-stream */
            setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            mark_closed(c, 2);
        }
        printf("vanish opened=%d closed_early=%d bytes=%zu\n", got, early, bytes);
        return got == n ? 0 : 1;
    }
    if (strcmp(mode, "paced") == 0 && argc == 6) {
        /* The ready line comes once every connection has its first bytes
         * (the pacer serves them all), at most 30 s in. */
        int n = (int)arg_long("N", argv[3], 1, 100000);
        long tokens = arg_long("TOKENS", argv[4], 1, 30000);
        long hold_ms = arg_long("HOLD_MS", argv[5], 0, 600000);
        char one[320];
        int ol = completion_req(one, sizeof one, tokens);
        int got = open_all(port, n);
        for (int i = 0; i < g_n; i++)
            set_out(&g_conns[i], one, (size_t)ol);
        int64_t until = rb_now_ns() + 30000 * (int64_t)1000000;
        int started = 0;
        while (rb_now_ns() < until) {
            started = 0;
            for (int i = 0; i < g_n; i++)
                started += g_conns[i].in_bytes > 0;
            if (started == g_n || open_count() == 0) break;
            pump(20);
        }
        printf("ready opened=%d started=%d open=%d start_ms=%" PRId64 "\n", got, started,
               open_count(), (rb_now_ns() - t0) / 1000000);
        fflush(stdout);
        run_until(rb_now_ns() + hold_ms * 1000000);
        size_t bytes = 0;
        for (int i = 0; i < g_n; i++)
            bytes += g_conns[i].in_bytes;
        printf("paced opened=%d started=%d closed_by_server=%d bytes=%zu\n", got, started,
               got - open_count(), bytes);
        return got == n ? 0 : 1;
    }
    if (strcmp(mode, "halfclose") == 0 && argc == 5) {
        /* One connection: K pipelined requests, then our FIN; every answer
         * must still come before the server closes. */
        int k = (int)arg_long("K", argv[3], 1, 1000);
        long tokens = arg_long("TOKENS", argv[4], 1, 30000);
        char one[320];
        int ol = completion_req(one, sizeof one, tokens);
        if (open_all(port, 1) != 1) return 1;
        int fd = g_conns[0].fd;
        for (int j = 0; j < k; j++)
            if (send(fd, one, (size_t)ol, MSG_NOSIGNAL) != ol) {
                perror("send");
                return 1;
            }
        if (shutdown(fd, SHUT_WR) != 0) {
            perror("shutdown");
            return 1;
        }
        size_t cap = 1 << 16, len = 0;
        char *all = malloc(cap);
        if (!all) return 1;
        int eof = 0;
        int64_t until = rb_now_ns() + 20000 * (int64_t)1000000;
        while (rb_now_ns() < until) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, 100) <= 0) continue;
            if (len == cap) {
                char *nb = realloc(all, cap *= 2);
                if (!nb) return 1;
                all = nb;
            }
            ssize_t r = recv(fd, all + len, cap - len, 0);
            if (r <= 0) {
                eof = r == 0 ? 1 : 2;
                break;
            }
            len += (size_t)r;
        }
        printf("halfclose sent=%d responses=%d done=%d closed=%d bytes=%zu\n", k,
               count_of(all, len, "HTTP/1.1 200"), count_of(all, len, "data: [DONE]"), eof, len);
        free(all);
        return 0;
    }
    if (strcmp(mode, "pipehold") == 0 && argc == 7) {
        /* Behind the stream, a request whose body is twice --max-body and
         * BYTES of it: the server holds what it reads of it until the
         * stream is done, then answers 413 and closes. The ready line comes
         * once every connection sent all it had or made no progress for
         * 300 ms (the server stopped reading it). */
        int n = (int)arg_long("N", argv[3], 1, 100000);
        long tokens = arg_long("TOKENS", argv[4], 1, 30000);
        long bytes = arg_long("BYTES", argv[5], 0, 1L << 26);
        long hold_ms = arg_long("HOLD_MS", argv[6], 0, 600000);
        char one[640];
        int ol = completion_req(one, sizeof one, tokens);
        ol += snprintf(one + ol, sizeof one - (size_t)ol,
                       "POST /v1/completions HTTP/1.1\r\nHost: a\r\nContent-Length: %ld\r\n\r\n",
                       2 * bytes);
        size_t len = (size_t)ol + (size_t)bytes;
        char *buf = malloc(len);
        if (!buf) return 1;
        memcpy(buf, one, (size_t)ol);
        memset(buf + ol, 'a', (size_t)bytes);
        int got = open_all(port, n);
        for (int i = 0; i < g_n; i++) {
            set_out(&g_conns[i], buf, len);
            g_conns[i].t_sent_ns = rb_now_ns();
        }
        free(buf);
        int64_t until = rb_now_ns() + 20000 * (int64_t)1000000;
        int settled = 0;
        size_t sent = 0;
        while (rb_now_ns() < until) {
            pump(20);
            int64_t now = rb_now_ns();
            settled = 0;
            sent = 0;
            for (int i = 0; i < g_n; i++) {
                conn *c = &g_conns[i];
                sent += c->out_off;
                settled += c->closed || c->out_off == c->out_len ||
                           now - c->t_sent_ns > 300 * (int64_t)1000000;
            }
            if (settled == g_n) break;
        }
        printf("ready opened=%d settled=%d sent=%zu of=%zu\n", got, settled, sent,
               len * (size_t)g_n);
        fflush(stdout);
        run_until(rb_now_ns() + hold_ms * 1000000);
        int ok = 0, resp = 0;
        for (int i = 0; i < g_n; i++) {
            resp += g_conns[i].nresp;
            ok += g_conns[i].n200 == 1 && g_conns[i].n4xx == 1 && g_conns[i].closed;
        }
        printf("pipehold opened=%d answered_both=%d responses=%d closed=%d\n", got, ok, resp,
               got - open_count());
        return got == n ? 0 : 1;
    }
    if (strcmp(mode, "pipemix") == 0 && argc == 6) {
        /* One connection, ROUNDS times: a streamed completion of TOKENS,
         * then BYTES worth of pipelined GET /health, all sent at once; then
         * read until every answer came (or 30 s). More than the server holds
         * per connection: it must stop reading and go on, round after round. */
        int rounds = (int)arg_long("ROUNDS", argv[3], 1, 1000);
        long tokens = arg_long("TOKENS", argv[4], 1, 30000);
        long bytes = arg_long("BYTES", argv[5], 0, 1L << 24);
        static const char req[] = "GET /health HTTP/1.1\r\nHost: a\r\n\r\n";
        long k = bytes / (long)(sizeof req - 1);
        char one[320];
        int ol = completion_req(one, sizeof one, tokens);
        size_t round_len = (size_t)ol + (size_t)k * (sizeof req - 1);
        char *buf = malloc(round_len * (size_t)rounds);
        if (!buf) return 1;
        for (int r = 0; r < rounds; r++) {
            char *p = buf + (size_t)r * round_len;
            memcpy(p, one, (size_t)ol);
            for (long j = 0; j < k; j++)
                memcpy(p + ol + (size_t)j * (sizeof req - 1), req, sizeof req - 1);
        }
        if (open_all(port, 1) != 1) return 1;
        set_out(&g_conns[0], buf, round_len * (size_t)rounds);
        free(buf);
        long want = (long)rounds * (1 + k);
        int64_t end = rb_now_ns() + 30000 * (int64_t)1000000;
        while (rb_now_ns() < end && !g_conns[0].closed && g_conns[0].nresp < want)
            pump(50);
        printf("pipemix rounds=%d sent=%zu of=%zu responses=%d expected=%ld ok200=%d closed=%d\n",
               rounds, g_conns[0].out_off, g_conns[0].out_len, g_conns[0].nresp, want,
               g_conns[0].n200, g_conns[0].closed);
        return 0;
    }
    usage();
}
