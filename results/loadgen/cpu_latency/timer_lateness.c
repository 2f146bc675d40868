/* How late a timer wakes its thread on this host, with idle CPUs free to
 * halt and with a CPU latency QoS request of 0 us held (as loadgen's
 * --cpu-latency-us 0 holds it): N absolute timerfd deadlines at exponential
 * gaps of mean MEAN_US, each one's lateness, then its percentiles.
 *   cc -O2 -o /tmp/timer_lateness timer_lateness.c -lm
 *   /tmp/timer_lateness MEAN_US N [hold]     (hold needs root) */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MEAN_US N [hold]\n", argv[0]);
        return 2;
    }
    double mean_us = atof(argv[1]);
    int n = atoi(argv[2]);
    if (!(mean_us > 0) || n < 100) {
        fprintf(stderr, "MEAN_US must be > 0 and N >= 100\n");
        return 2;
    }
    if (argc > 3 && strcmp(argv[3], "hold") == 0) {
        int fd = open("/dev/cpu_dma_latency", O_RDWR); /* held until exit */
        int32_t zero = 0;
        if (fd < 0 || write(fd, &zero, sizeof zero) != (ssize_t)sizeof zero) {
            perror("/dev/cpu_dma_latency");
            return 1;
        }
    }
    int64_t *late = malloc((size_t)n * sizeof *late);
    int tfd = timerfd_create(CLOCK_MONOTONIC, 0);
    if (!late || tfd < 0) return 1;
    srand(1);
    int64_t t = now_ns();
    for (int i = 0; i < n; i++) {
        double u = (rand() + 1.0) / (RAND_MAX + 2.0);
        t += (int64_t)(-log(u) * mean_us * 1000);
        struct itimerspec its = {.it_value = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000}};
        timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL);
        uint64_t x;
        if (read(tfd, &x, sizeof x) != (ssize_t)sizeof x) return 1;
        late[i] = now_ns() - t;
    }
    qsort(late, (size_t)n, sizeof *late, cmp);
    printf("mean gap %.0f us, %d timers, %s: lateness p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max "
           "%.1f us\n",
           mean_us, n, argc > 3 ? "held at 0 us" : "idle CPUs free", late[n / 2] / 1e3,
           late[n * 9 / 10] / 1e3, late[n * 99 / 100] / 1e3, late[n * 999 / 1000] / 1e3,
           late[n - 1] / 1e3);
    return 0;
}
