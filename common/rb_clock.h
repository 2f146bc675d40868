/* rb_clock: the one clock of the suite. Inside the programs, time is int64_t
 * nanoseconds of CLOCK_MONOTONIC; simserver's stamps and loadgen's receive
 * times use the same clock, so on one host they subtract exactly. */
#ifndef RB_CLOCK_H
#define RB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t rb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Wall-clock time, for report headers only. */
static inline int64_t rb_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

#endif
