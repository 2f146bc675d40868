/* rb_host: see rb_host.h. */
#include "rb_host.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

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
