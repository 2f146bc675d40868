/* rb_host: the facts that bind a measurement to a machine (CPU model, online
 * cores, kernel), used in every report and in calibrate's certificate; and
 * the host's running counters (rb_host_reading), read at a window's edges to
 * tell how much the process waited for a CPU. */
#ifndef RB_HOST_H
#define RB_HOST_H

#include <stdint.h>

typedef struct rb_host {
    char cpu_model[160];
    int cores_online;
    char kernel[160]; /* uname -sr */
    char hostname[96];
} rb_host;

/* Fills *h from /proc/cpuinfo, sysconf and uname. Never fails: unknown
 * fields read "unknown". */
void rb_host_read(rb_host *h);

/* The host's counters at one instant; a window's evidence is the difference
 * of two readings. */
typedef struct rb_host_reading {
    int64_t run_delay_ns; /* this process's runnable-but-waiting time, from
                           * /proc/self/schedstat (-1: the kernel keeps none) */
    int64_t nivcsw;       /* this process's involuntary context switches
                           * (getrusage; 0 when it fails) */
    int64_t steal_ns;     /* the host's steal time (/proc/stat's cpu line) */
    int64_t cpu_ns;       /* the host's total CPU time, the line's first eight
                           * fields */
    int64_t idle_ns;      /* the host's idle and iowait time, of cpu_ns (the
                           * three are 0 when the line is unreadable) */
} rb_host_reading;

/* Reads the four counters into *r. Never fails: what cannot be read takes
 * the value its field names. */
void rb_host_sample(rb_host_reading *r);

/* The steal, total and idle CPU times (ns) of a /proc/stat "cpu ..." line,
 * at hz clock ticks a second (<= 0: 100), into r's steal_ns, cpu_ns and
 * idle_ns. Returns 0, or -1 when the line has fewer than eight fields (then
 * the three are 0). */
int rb_host_parse_cpu_line(const char *line, long hz, rb_host_reading *r);

#endif
