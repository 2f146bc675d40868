/* rb_host: see rb_host.h. */
#include "rb_host.h"

#include <stdio.h>
#include <string.h>
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
