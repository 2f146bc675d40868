/* rb_timer: a one-shot timer on a libuv loop with nanosecond deadlines.
 * libuv's own timers tick in whole milliseconds, which is too coarse to pace
 * tokens or dispatch requests at thousands per second; this arms a timerfd
 * (CLOCK_MONOTONIC, absolute time) watched by a uv_poll_t instead.
 * Owned by the loop's thread; not thread-safe. */
#ifndef RB_TIMER_H
#define RB_TIMER_H

#include <stdint.h>
#include <uv.h>

typedef struct rb_timer rb_timer;
typedef void (*rb_timer_cb)(rb_timer *t);

struct rb_timer {
    uv_poll_t poll; /* poll.data is reserved; use t->data */
    int fd;
    int armed;
    int64_t deadline_ns;
    rb_timer_cb cb;
    void *data;
    uv_close_cb on_close;
};

/* Returns 0 or a negative errno. */
int rb_timer_init(uv_loop_t *loop, rb_timer *t);
/* Arms the timer for an absolute CLOCK_MONOTONIC deadline; a deadline in the
 * past fires on the next loop iteration. Re-arming replaces the deadline. */
int rb_timer_start_at(rb_timer *t, int64_t deadline_ns, rb_timer_cb cb);
int rb_timer_stop(rb_timer *t);
/* Stops the timer, closes the poll handle and the fd; on_close (may be NULL)
 * is called with the uv_poll_t when libuv has released it. */
void rb_timer_close(rb_timer *t, uv_close_cb on_close);

#endif
