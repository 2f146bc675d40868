/* lg_rxclock: the realtime-to-monotonic map, the time given to each
 * delivered event, the process's stamped recv(), and the socket calls of
 * lg_rxclock.h. */
#include "lg_rxclock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <linux/tcp.h> /* glibc's tcp_info lacks tcpi_data_segs_in */

void lg_clock_map_sample(lg_clock_map *m, int64_t mono_before_ns, int64_t real_ns,
                         int64_t mono_after_ns)
{
    int64_t width = mono_after_ns - mono_before_ns;
    if (width < 0) return;
    /* The realtime reading sits between the two monotonic ones: the
     * midpoint's error is at most half the width. */
    int64_t off = real_ns - (mono_before_ns + width / 2);
    if (!m->samples) {
        m->lo_ns = m->hi_ns = off;
        m->width_ns = width;
    } else {
        int64_t d = off - m->offset_ns;
        if (d > LG_CLOCK_STEP_NS || d < -LG_CLOCK_STEP_NS) {
            m->steps++;
            m->lo_ns = m->hi_ns = off;
        } else {
            if (off < m->lo_ns) m->lo_ns = off;
            if (off > m->hi_ns) m->hi_ns = off;
        }
        if (width < m->width_ns) m->width_ns = width;
    }
    if (m->hi_ns - m->lo_ns > m->spread_ns) m->spread_ns = m->hi_ns - m->lo_ns;
    m->offset_ns = off;
    m->samples++;
}

int64_t lg_clock_map_to_mono(const lg_clock_map *m, int64_t real_ns)
{
    return m->samples ? real_ns - m->offset_ns : 0;
}

int64_t lg_rx_event_time(const lg_rx_read *rd, int port, int64_t pickup_ns, int64_t delivery_ns,
                         lg_rx_kind *kind)
{
    int64_t t;
    if (rd->port >= 0 && rd->port == port && rd->kernel_ns > 0) {
        t = rd->kernel_ns;
        *kind = LG_RX_KERNEL;
    } else if (pickup_ns > 0) {
        t = pickup_ns;
        *kind = LG_RX_PICKUP;
    } else {
        *kind = LG_RX_DELIVERY;
        return delivery_ns;
    }
    return t < delivery_ns ? t : delivery_ns;
}

uint32_t lg_rx_read_exact(const lg_rx_read *rd, int64_t tol_ns, int64_t *window_ns)
{
    *window_ns = 0;
    if (rd->kernel_ns <= 0 || rd->tokens == 0) return 0;
    if (rd->tokens == 1 || rd->segments == 1) return rd->tokens;
    /* No lower bound known: the window is unbounded below; say so with the
     * kernel time itself, far over any tolerance. */
    int64_t w = rd->lower_ns > 0 ? rd->kernel_ns - rd->lower_ns : rd->kernel_ns;
    if (w < 0) w = 0;
    *window_ns = w;
    return w <= tol_ns ? rd->tokens : 1;
}

int lg_rx_enable(int fd)
{
    int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
    if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) != 0) return -errno;
    return 0;
}

int lg_rx_keep_on(void)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int rc = lg_rx_enable(fd);
    if (rc) {
        close(fd);
        return rc;
    }
    return fd;
}

int lg_rx_tcp_counts(int fd, int64_t *segments, int64_t *bytes)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return -1;
    if (len < offsetof(struct tcp_info, tcpi_data_segs_in) + sizeof ti.tcpi_data_segs_in) return -1;
    *segments = (int64_t)ti.tcpi_data_segs_in;
    *bytes = (int64_t)ti.tcpi_bytes_received;
    return 0;
}

int lg_rx_local_port(int fd)
{
    struct sockaddr_storage sa;
    socklen_t sl = sizeof sa;
    if (getsockname(fd, (struct sockaddr *)&sa, &sl) != 0) return -1;
    if (sa.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&sa)->sin_port);
    if (sa.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&sa)->sin6_port);
    return -1;
}

ssize_t lg_rx_recv(int fd, void *buf, size_t len, int flags, int64_t *real_ns)
{
    union {
        char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
        struct cmsghdr align;
    } ctrl;
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.buf, .msg_controllen = sizeof ctrl};
    *real_ns = 0;
    ssize_t n = recvmsg(fd, &msg, flags);
    if (n <= 0) return n;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPING) continue;
        struct scm_timestamping ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        *real_ns = (int64_t)ts.ts[0].tv_sec * 1000000000LL + ts.ts[0].tv_nsec;
        break;
    }
    return n;
}

static lg_rx_hook g_hook;
static void *g_hook_ctx;

void lg_rx_set_hook(lg_rx_hook hook, void *ctx)
{
    g_hook_ctx = ctx;
    g_hook = hook;
}

/* The process's recv(): libcurl's reads come here. Without a hook, or for
 * a peek (curl's liveness check of a pooled connection), it is recv(2). */
ssize_t recv(int fd, void *buf, size_t len, int flags)
{
    if (!g_hook || (flags & MSG_PEEK)) return recvfrom(fd, buf, len, flags, NULL, NULL);
    int64_t real;
    ssize_t n = lg_rx_recv(fd, buf, len, flags, &real);
    if (n > 0) g_hook(g_hook_ctx, fd, buf, n, len, real);
    return n;
}

static lg_tx_hook g_tx_hook;
static void *g_tx_ctx;

void lg_tx_set_hook(lg_tx_hook hook, void *ctx)
{
    g_tx_ctx = ctx;
    g_tx_hook = hook;
}

/* The process's send(): libcurl's writes come here (its swrite is send()),
 * so the bytes each connection has sent are counted where they are written. */
ssize_t send(int fd, const void *buf, size_t len, int flags)
{
    ssize_t n = sendto(fd, buf, len, flags, NULL, 0);
    if (n > 0 && g_tx_hook) g_tx_hook(g_tx_ctx, fd, (size_t)n);
    return n;
}
