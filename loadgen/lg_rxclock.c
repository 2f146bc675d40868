/* lg_rxclock: the realtime-to-monotonic map, the per-pickup time assignment,
 * and the two socket calls of lg_rxclock.h. */
#include "lg_rxclock.h"

#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <time.h>

#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>

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

int64_t lg_pickup_event_time(const lg_pickup *p, int conn, int64_t delivery_ns, lg_rx_kind *kind)
{
    if (p->conn < 0 || p->conn != conn) {
        *kind = LG_RX_DELIVERY;
        return delivery_ns;
    }
    int64_t t = p->kernel_ns > 0 ? p->kernel_ns : p->pickup_ns;
    *kind = p->kernel_ns > 0 ? LG_RX_KERNEL : LG_RX_PICKUP;
    return t < delivery_ns ? t : delivery_ns;
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

int lg_rx_peek(int fd, int64_t *real_ns, int64_t *queued)
{
    char byte;
    union {
        char buf[CMSG_SPACE(sizeof(struct scm_timestamping))];
        struct cmsghdr align;
    } ctrl;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl.buf, .msg_controllen = sizeof ctrl};
    *queued = -1;
    ssize_t n = recvmsg(fd, &msg, MSG_PEEK | MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
    if (n == 0) return 0; /* end of stream: nothing to stamp */
    int q;
    if (ioctl(fd, SIOCINQ, &q) == 0) *queued = q;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPING) continue;
        struct scm_timestamping ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        if (!ts.ts[0].tv_sec && !ts.ts[0].tv_nsec) return 0;
        *real_ns = (int64_t)ts.ts[0].tv_sec * 1000000000LL + ts.ts[0].tv_nsec;
        return 1;
    }
    return 0;
}
