/* rb_host: the facts that bind a measurement to a machine (CPU model, online
 * cores, kernel), used in every report and in calibrate's certificate; and
 * the host's running counters (rb_host_reading), read at a window's edges to
 * tell how much the process waited for a CPU. */
#ifndef RB_HOST_H
#define RB_HOST_H

#include <sched.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rb_host {
    char cpu_model[160];
    int cores_online;
    char kernel[160]; /* uname -sr */
    char hostname[96];
    /* the cpuidle driver and governor ("haltpoll/haltpoll"; "none" when the
     * kernel has no cpuidle): how an idle CPU sleeps, so how late it wakes */
    char cpuidle[64];
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

/* CPU lists as taskset and /sys write them ("0,2-3"). Parses s into *set
 * (CPUs below CPU_SETSIZE, at least one); 0, or -1 on anything else. */
int rb_host_parse_cpu_list(const char *s, cpu_set_t *set);

/* *set as a list ("0,2-3"; "" when empty) into buf of n bytes. */
void rb_host_format_cpu_list(const cpu_set_t *set, char *buf, size_t n);

/* A /proc/stat per-CPU line ("cpu3 u n s idle iowait ..."): its CPU number,
 * and its busy (all but idle and iowait) and total ticks. 0, or -1 when the
 * line is not a per-CPU line of at least eight fields. */
int rb_host_parse_percpu_line(const char *line, int *cpu, uint64_t *busy, uint64_t *total);

/* Each CPU's idle share over window_ns, from /proc/stat read at the
 * window's edges: idle[c] for c < max (NAN: not listed, or no tick passed).
 * Returns the number of CPUs read, or -1 when /proc/stat is unreadable. */
int rb_host_cpu_idle(double *idle, int max, int64_t window_ns);

/* A CPU latency QoS request (the kernel's /dev/cpu_dma_latency), in force
 * while its file stays open: no idle CPU of the host then takes more than
 * the asked microseconds to wake (0: idle CPUs poll instead of halting).
 * On a VM whose idle vCPUs halt at once, a timer otherwise wakes its thread
 * through the hypervisor, ms late at p99 (results/loadgen/cpu_latency). */
#define RB_CPU_LATENCY_DEV "/dev/cpu_dma_latency"
typedef struct rb_cpu_latency {
    int fd;           /* -1: not held */
    int asked_us;     /* -1: not asked */
    int effective_us; /* the host's limit read back once held (-1: unread) */
    int err;          /* errno of the step that failed; 0: none */
    const char *step; /* that step: "open", "write" or "read"; NULL */
} rb_cpu_latency;

/* Asks for us (>= 0) microseconds through path (NULL: RB_CPU_LATENCY_DEV).
 * 0: held; -1: not held (c->err and c->step say why). A request whose
 * read-back fails is still held (effective_us -1, err and step say so). */
int rb_cpu_latency_hold(rb_cpu_latency *c, int us, const char *path);

/* Gives the request back (a no-op when it is not held); c keeps what was
 * asked and read. */
void rb_cpu_latency_release(rb_cpu_latency *c);

/* "not asked", "held: 0 us (the host's limit 0 us)" or "not held: open
 * /dev/cpu_dma_latency: Permission denied" into buf of n bytes. */
void rb_cpu_latency_describe(const rb_cpu_latency *c, const char *path, char *buf, size_t n);

#endif
