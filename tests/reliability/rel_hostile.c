/* rel_hostile: a hostile HTTP server on loopback for loadgen's reliability
 * tests. Each request (headers and Content-Length body read) gets the answer
 * of one MODE: nothing, a reset, random bytes, a broken chunk, an endless
 * stream, a huge header, non-JSON events, a redirect off the host.
 * Prints "listening http://127.0.0.1:PORT" (flushed) first, runs SECONDS
 * (or until SIGTERM), then prints "served conns=N requests=M" and exits 0. Single-threaded. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rb_clock.h"

#define MAX_CONNS 4096

typedef struct {
    int fd;
    char in[8192];
    size_t in_len;
    int answered; /* the request was read and the answer queued */
    int endless;  /* refill the output forever */
    char *out;
    size_t out_len, out_off, out_cap;
    int close_after; /* close once the output is sent */
} hconn;

static const char *g_mode;
static hconn g_c[MAX_CONNS];
static int g_n_conns, g_n_requests;
static volatile sig_atomic_t g_stop;

static void on_term(int sig)
{
    (void)sig;
    g_stop = 1;
}

static const char SSE_HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                               "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
static const char EVENT[] =
    "data: {\"id\":\"x\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,"
    "\"text\":\" a\",\"finish_reason\":null}]}\n\n";

static void out_append(hconn *c, const char *p, size_t n)
{
    if (c->out_len + n > c->out_cap) { /* geometric: a 256 KiB header is 64 appends */
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + n)
            cap *= 2;
        char *nb = realloc(c->out, cap);
        if (!nb) {
            perror("realloc");
            exit(1);
        }
        c->out = nb;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
}

static void out_chunk(hconn *c, const char *p, size_t n)
{
    char h[32];
    int hl = snprintf(h, sizeof h, "%zx\r\n", n);
    out_append(c, h, (size_t)hl);
    out_append(c, p, n);
    out_append(c, "\r\n", 2);
}

static void hclose(hconn *c, int rst)
{
    if (rst) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(c->fd);
    free(c->out);
    memset(c, 0, sizeof *c);
    c->fd = -1;
}

/* request_done: a whole request (headers, then Content-Length bytes) is in. */
static int request_done(const hconn *c)
{
    const char *end = memmem(c->in, c->in_len, "\r\n\r\n", 4);
    if (!end) return c->in_len == sizeof c->in; /* too big: answer anyway */
    size_t head = (size_t)(end - c->in) + 4;
    const char *cl = memmem(c->in, head, "Content-Length:", 15);
    if (!cl) cl = memmem(c->in, head, "content-length:", 15);
    size_t body = cl ? (size_t)strtoul(cl + 15, NULL, 10) : 0;
    return c->in_len >= head + body || c->in_len == sizeof c->in;
}

/* answer: queues MODE's answer; returns 1 when the connection is closed now. */
static int answer(hconn *c)
{
    g_n_requests++;
    c->answered = 1;
    c->close_after = 1;
    const char *m = g_mode;
    if (!strcmp(m, "close")) {
        hclose(c, 0);
        return 1;
    }
    if (!strcmp(m, "rst")) {
        hclose(c, 1);
        return 1;
    }
    if (!strcmp(m, "hang")) {
        c->close_after = 0;
        return 0;
    }
    if (!strcmp(m, "garbage")) {
        char r[4096];
        for (size_t i = 0; i < sizeof r; i++)
            r[i] = (char)(random() & 0xff);
        out_append(c, r, sizeof r);
    } else if (!strcmp(m, "badchunk")) {
        out_append(c, SSE_HEAD, sizeof SSE_HEAD - 1);
        out_chunk(c, EVENT, sizeof EVENT - 1);
        out_append(c, "zz\r\nnot a chunk\r\n", 17);
    } else if (!strcmp(m, "endless")) {
        out_append(c, SSE_HEAD, sizeof SSE_HEAD - 1);
        c->endless = 1;
    } else if (!strcmp(m, "hugeheader")) {
        static const char h[] = "HTTP/1.1 200 OK\r\nX-Big: ";
        out_append(c, h, sizeof h - 1);
        char a[4096];
        memset(a, 'a', sizeof a);
        for (int i = 0; i < 64; i++)
            out_append(c, a, sizeof a); /* 256 KiB: over curl's 100 KiB limit */
        static const char t[] = "\r\nContent-Length: 0\r\n\r\n";
        out_append(c, t, sizeof t - 1);
    } else if (!strcmp(m, "nonjson")) {
        out_append(c, SSE_HEAD, sizeof SSE_HEAD - 1);
        for (int i = 0; i < 5; i++)
            out_chunk(c, "data: not json {\n\n", 18);
        out_chunk(c, "data: [DONE]\n\n", 14);
        out_append(c, "0\r\n\r\n", 5);
    } else if (!strcmp(m, "redirect")) {
        /* off the host: a client that follows it leaves loopback */
        static const char r[] =
            "HTTP/1.1 302 Found\r\nLocation: http://10.255.255.1:9/v1/completions\r\n"
            "Content-Length: 0\r\nConnection: close\r\n\r\n";
        out_append(c, r, sizeof r - 1);
    } else {
        fprintf(stderr, "rel_hostile: unknown MODE '%s'\n", m);
        exit(2);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: rel_hostile MODE SECONDS\n"
              "  MODE: close rst hang garbage badchunk endless hugeheader nonjson redirect\n",
              stderr);
        return 2;
    }
    g_mode = argv[1];
    char *end;
    long secs = strtol(argv[2], &end, 10);
    if (*end || secs < 1 || secs > 600) {
        fprintf(stderr, "rel_hostile: SECONDS: must be in [1, 600], got '%s'\n", argv[2]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGTERM, on_term);
    srandom(1);
    for (int i = 0; i < MAX_CONNS; i++)
        g_c[i].fd = -1;
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(lfd, 1024) < 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &al) < 0) {
        perror("rel_hostile: listen");
        return 1;
    }
    printf("listening http://127.0.0.1:%d\n", ntohs(a.sin_port));
    fflush(stdout);

    static struct pollfd pf[MAX_CONNS + 1];
    static int idx[MAX_CONNS + 1];
    int64_t deadline = rb_now_ns() + secs * 1000000000LL;
    while (!g_stop && rb_now_ns() < deadline) {
        int m = 0;
        pf[m++] = (struct pollfd){.fd = lfd, .events = POLLIN};
        for (int i = 0; i < MAX_CONNS; i++) {
            hconn *c = &g_c[i];
            if (c->fd < 0) continue;
            short ev = POLLIN;
            if (c->out_off < c->out_len || c->endless) ev |= POLLOUT;
            pf[m] = (struct pollfd){.fd = c->fd, .events = ev};
            idx[m++] = i;
        }
        if (poll(pf, (nfds_t)m, 50) <= 0) continue;
        if (pf[0].revents & POLLIN) {
            for (;;) {
                int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (fd < 0) break;
                int slot = -1;
                for (int i = 0; i < MAX_CONNS && slot < 0; i++)
                    if (g_c[i].fd < 0) slot = i;
                if (slot < 0) {
                    close(fd);
                    continue;
                }
                g_c[slot].fd = fd;
                g_n_conns++;
            }
        }
        for (int j = 1; j < m; j++) {
            hconn *c = &g_c[idx[j]];
            short re = pf[j].revents;
            if (c->fd < 0 || !re) continue;
            if (re & (POLLIN | POLLHUP | POLLERR)) {
                char buf[16384];
                ssize_t n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                    hclose(c, 0);
                    continue;
                }
                if (n > 0 && !c->answered) {
                    size_t take = sizeof c->in - c->in_len;
                    if ((size_t)n < take) take = (size_t)n;
                    memcpy(c->in + c->in_len, buf, take);
                    c->in_len += take;
                    if (request_done(c) && answer(c)) continue;
                }
            }
            if (c->endless && c->out_off >= c->out_len) { /* refill: 64 events */
                c->out_len = c->out_off = 0;
                for (int k = 0; k < 64; k++)
                    out_chunk(c, EVENT, sizeof EVENT - 1);
            }
            if ((re & POLLOUT) && c->out_off < c->out_len) {
                ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0)
                    c->out_off += (size_t)w;
                else if (w < 0 && errno != EAGAIN && errno != EINTR) {
                    hclose(c, 0);
                    continue;
                }
            }
            if (c->answered && c->close_after && !c->endless && c->out_off >= c->out_len)
                hclose(c, 0);
        }
    }
    for (int i = 0; i < MAX_CONNS; i++)
        if (g_c[i].fd >= 0) hclose(&g_c[i], 0);
    close(lfd);
    printf("served conns=%d requests=%d\n", g_n_conns, g_n_requests);
    return 0;
}
