/* rb_host: see rb_host.h. */
#include "rb_host.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

/* The first line of a small file, without its newline; 1 when read, 0 not. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    int ok = fgets(buf, (int)n, fp) != NULL;
    fclose(fp);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok && buf[0];
}

void rb_host_read(rb_host *h)
{
    memset(h, 0, sizeof *h);
    strcpy(h->cpu_model, "unknown");
    strcpy(h->kernel, "unknown");
    strcpy(h->hostname, "unknown");
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[512];
        while (fgets(line, sizeof line, fp)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            char *colon = strchr(line, ':');
            if (!colon) continue;
            colon++;
            while (*colon == ' ' || *colon == '\t')
                colon++;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(h->cpu_model, sizeof h->cpu_model, "%s", colon);
            break;
        }
        fclose(fp);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores_online = n > 0 ? (int)n : 1;
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(h->kernel, sizeof h->kernel, "%s %s", u.sysname, u.release);
        snprintf(h->hostname, sizeof h->hostname, "%s", u.nodename);
    }
    char drv[32] = "", gov[32] = "";
    read_line("/sys/devices/system/cpu/cpuidle/current_driver", drv, sizeof drv);
    if (!read_line("/sys/devices/system/cpu/cpuidle/current_governor", gov, sizeof gov))
        read_line("/sys/devices/system/cpu/cpuidle/current_governor_ro", gov, sizeof gov);
    if (!drv[0] || !strcmp(drv, "none"))
        strcpy(h->cpuidle, "none");
    else
        snprintf(h->cpuidle, sizeof h->cpuidle, "%s/%s", drv, gov[0] ? gov : "unknown");
}

int rb_cpu_latency_hold(rb_cpu_latency *c, int us, const char *path)
{
    *c = (rb_cpu_latency){.fd = -1, .asked_us = us, .effective_us = -1};
    if (!path) path = RB_CPU_LATENCY_DEV;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        c->err = errno;
        c->step = "open";
        return -1;
    }
    /* the device takes a binary s32 (or a hex string) */
    int32_t v = us;
    if (write(fd, &v, sizeof v) != (ssize_t)sizeof v) {
        c->err = errno ? errno : EIO;
        c->step = "write";
        close(fd);
        return -1;
    }
    c->fd = fd;
    /* a read gives the host's limit: the least of every request held */
    int32_t got;
    if (pread(fd, &got, sizeof got, 0) == (ssize_t)sizeof got) {
        c->effective_us = got;
    } else {
        c->err = errno ? errno : EIO;
        c->step = "read";
    }
    return 0;
}

void rb_cpu_latency_release(rb_cpu_latency *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

void rb_cpu_latency_describe(const rb_cpu_latency *c, const char *path, char *buf, size_t n)
{
    if (!path) path = RB_CPU_LATENCY_DEV;
    if (c->asked_us < 0)
        snprintf(buf, n, "not asked");
    else if (c->fd < 0 && c->step)
        snprintf(buf, n, "not held: %s %s: %s", c->step, path, strerror(c->err));
    else if (c->effective_us < 0)
        snprintf(buf, n, "held: %d us (the host's limit unread: %s)", c->asked_us,
                 strerror(c->err));
    else
        snprintf(buf, n, "held: %d us (the host's limit %d us)", c->asked_us, c->effective_us);
}

int rb_host_parse_cpu_line(const char *line, long hz, rb_host_reading *r)
{
    r->steal_ns = r->cpu_ns = r->idle_ns = 0;
    unsigned long long v[8] = {0};
    int n = sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    if (n < 8) return -1;
    if (hz <= 0) hz = 100;
    unsigned long long total = 0;
    for (int i = 0; i < 8; i++)
        total += v[i];
    unsigned long long ns = 1000000000ULL / (unsigned long long)hz;
    r->steal_ns = (int64_t)(v[7] * ns);
    r->cpu_ns = (int64_t)(total * ns);
    r->idle_ns = (int64_t)((v[3] + v[4]) * ns); /* idle, iowait */
    return 0;
}

static int64_t read_run_delay_ns(void)
{
    FILE *f = fopen("/proc/self/schedstat", "r");
    if (!f) return -1;
    unsigned long long run, wait;
    int n = fscanf(f, "%llu %llu", &run, &wait);
    fclose(f);
    return n == 2 ? (int64_t)wait : -1;
}

static void read_host_cpu(rb_host_reading *r)
{
    static long hz;
    r->steal_ns = r->cpu_ns = r->idle_ns = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return;
    char line[512];
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!got) return;
    if (!hz) hz = sysconf(_SC_CLK_TCK);
    rb_host_parse_cpu_line(line, hz, r);
}

void rb_host_sample(rb_host_reading *r)
{
    r->run_delay_ns = read_run_delay_ns();
    struct rusage ru;
    r->nivcsw = getrusage(RUSAGE_SELF, &ru) == 0 ? (int64_t)ru.ru_nivcsw : 0;
    read_host_cpu(r);
}

int rb_host_parse_cpu_list(const char *s, cpu_set_t *set)
{
    CPU_ZERO(set);
    if (!s || !*s) return -1;
    const char *p = s;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9') return -1;
        errno = 0;
        unsigned long a = strtoul(p, &end, 10), b = a;
        if (errno || end == p) return -1;
        p = end;
        if (*p == '-') {
            p++;
            if (*p < '0' || *p > '9') return -1;
            b = strtoul(p, &end, 10);
            if (errno || end == p) return -1;
            p = end;
        }
        if (b < a || b >= CPU_SETSIZE) return -1;
        for (unsigned long c = a; c <= b; c++)
            CPU_SET((int)c, set);
        if (*p == 0) break;
        if (*p != ',') return -1;
        p++;
    }
    return CPU_COUNT(set) > 0 ? 0 : -1;
}

void rb_host_format_cpu_list(const cpu_set_t *set, char *buf, size_t n)
{
    size_t len = 0;
    if (n) buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int e = c;
        while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
            e++;
        int w = e > c ? snprintf(buf + len, n > len ? n - len : 0, "%s%d-%d", len ? "," : "", c, e)
                      : snprintf(buf + len, n > len ? n - len : 0, "%s%d", len ? "," : "", c);
        if (w < 0 || len + (size_t)w >= n) return; /* truncated: what fits */
        len += (size_t)w;
        c = e;
    }
}

int rb_host_parse_percpu_line(const char *line, int *cpu, uint64_t *busy, uint64_t *total)
{
    unsigned long long v[8];
    int c;
    if (strncmp(line, "cpu", 3) != 0 || line[3] < '0' || line[3] > '9') return -1;
    if (sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &c, &v[0], &v[1], &v[2],
               &v[3], &v[4], &v[5], &v[6], &v[7]) != 9 ||
        c < 0)
        return -1;
    uint64_t t = 0;
    for (int i = 0; i < 8; i++)
        t += v[i];
    *cpu = c;
    *total = t;
    *busy = t - (v[3] + v[4]);
    return 0;
}

/* busy and total ticks of CPUs < max; -1 when unreadable */
static int read_percpu(uint64_t *busy, uint64_t *total, int max)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        int c;
        uint64_t b, t;
        if (rb_host_parse_percpu_line(line, &c, &b, &t) != 0 || c >= max) continue;
        busy[c] = b;
        total[c] = t;
        n++;
    }
    fclose(f);
    return n;
}

int rb_host_cpu_idle(double *idle, int max, int64_t window_ns)
{
    if (max <= 0) return -1;
    uint64_t *v = calloc((size_t)max * 4, sizeof *v);
    if (!v) return -1;
    uint64_t *b0 = v, *t0 = v + max, *b1 = v + 2 * max, *t1 = v + 3 * max;
    int n = read_percpu(b0, t0, max);
    if (n >= 0 && window_ns > 0) {
        struct timespec ts = {window_ns / 1000000000LL, window_ns % 1000000000LL};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    if (n >= 0) n = read_percpu(b1, t1, max);
    for (int c = 0; c < max; c++) {
        uint64_t dt = t1[c] - t0[c];
        idle[c] = n >= 0 && t1[c] > t0[c] ? 1.0 - (double)(b1[c] - b0[c]) / (double)dt : NAN;
    }
    free(v);
    return n;
}
