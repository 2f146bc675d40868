/* rb_timer: see rb_timer.h. */
#include "rb_timer.h"

#include "rb_clock.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Reads the timerfd's expiration count, which makes it unreadable. */
static void drain(rb_timer *t)
{
    uint64_t expirations;
    while (read(t->fd, &expirations, sizeof expirations) < 0 && errno == EINTR) {
    }
}

static void timer_readable(uv_poll_t *p, int status, int events)
{
    rb_timer *t = (rb_timer *)p; /* poll is the first member */
    (void)status;
    (void)events;
    if (!t->armed) {
        drain(t); /* stopped after this wake-up was collected (or a late expiry) */
        return;
    }
    /* Re-armed after this wake-up was collected: timerfd_settime reset the
     * count, so the fd is silent until the new deadline, not yet passed. */
    if (rb_now_ns() < t->deadline_ns) return;
    t->armed = 0;
    if (t->cb) t->cb(t);
    /* Re-armed by the callback: its timerfd_settime reset the count, so
     * the fd needs no read (one syscall fewer per wake-up). Not re-armed:
     * drain it and release the loop. The poll stays started
     * (uv_poll_stop/start would take the fd out of epoll and put it back
     * at every arming); a drained, disarmed timerfd is silent. */
    if (!t->armed && t->fd >= 0) {
        drain(t);
        uv_unref((uv_handle_t *)&t->poll);
    }
}

int rb_timer_init(uv_loop_t *loop, rb_timer *t)
{
    memset(t, 0, sizeof *t);
    t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (t->fd < 0) return -errno;
    int rc = uv_poll_init(loop, &t->poll, t->fd);
    if (rc) {
        close(t->fd);
        t->fd = -1;
        return rc;
    }
    t->poll.data = t;
    return 0;
}

int rb_timer_start_at(rb_timer *t, int64_t deadline_ns, rb_timer_cb cb)
{
    if (deadline_ns < 1) deadline_ns = 1; /* 0 would disarm the timerfd */
    struct itimerspec its = {0};
    its.it_value.tv_sec = deadline_ns / 1000000000LL;
    its.it_value.tv_nsec = deadline_ns % 1000000000LL;
    if (timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL) != 0) return -errno;
    t->cb = cb;
    t->deadline_ns = deadline_ns;
    if (!uv_is_active((uv_handle_t *)&t->poll)) {
        int rc = uv_poll_start(&t->poll, UV_READABLE, timer_readable);
        if (rc) return rc;
    }
    uv_ref((uv_handle_t *)&t->poll); /* armed: keeps the loop alive */
    t->armed = 1;
    return 0;
}

int rb_timer_stop(rb_timer *t)
{
    if (!t->armed) return 0;
    struct itimerspec its = {0};
    timerfd_settime(t->fd, 0, &its, NULL);
    t->armed = 0;
    uv_unref((uv_handle_t *)&t->poll);
    return 0;
}

static void timer_closed(uv_handle_t *h)
{
    rb_timer *t = (rb_timer *)h;
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    if (t->on_close) t->on_close(h);
}

void rb_timer_close(rb_timer *t, uv_close_cb on_close)
{
    rb_timer_stop(t);
    t->on_close = on_close;
    uv_close((uv_handle_t *)&t->poll, timer_closed);
}
