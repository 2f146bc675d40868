/* calibrate: certifies this host for the load generator. It starts the
 * simulator and, for each worker count k, aims load levels at the mode's
 * utilisation targets (the first level, one batch at the start rate, probes
 * the busy time per request that aims the rest), measures each level in a few
 * short batches (so each has an error bar), repeats a level that looks bad
 * before it counts, fits d = c + R rho/(1 - rho) with bootstrap intervals,
 * applies the certification rule (cal_rule.h), measures the cost model with a
 * probe against an unpaced simulator, and writes the certificate (format 2)
 * that `loadgen --certificate` enforces. A simulator that dies voids the run.
 *
 * The file is long because it is the one shell of the
 * program: the child processes, the sweep that drives them level by level,
 * the probe, the files written and the summary share the cal_run state and
 * each other's failure paths; every rule they apply (options, sweep, fit,
 * certificate, plot) is a pure cal_* module of its own.
 *
 * Design decision (docs/DESIGN.md; the proposal had calibrate link liblg):
 * calibrate runs the `loadgen` binary as a child process per step and reads
 * its result JSON.
 * The contract is then the documented result file that users see too (what
 * is calibrated is exactly what users run), every step starts in fresh
 * processes (no state carried from one rate to the next), and a step that
 * crashes cannot take calibrate down: it is recorded and the sweep goes on.
 *
 * The calibration load (documented choice): the simulator runs with zero
 * queueing and prefill cost but an inter-token latency (4 ms, jitter 2 ms by
 * default). With a zero-latency server all tokens of a response arrive in one
 * read, one callback then serves ~19 SSE events, and the client is a batch
 * queue that PK does not describe. Spaced tokens arrive one per callback, as
 * from a real inference server, and the jitter with many streams in flight
 * makes the superposed event stream close to Poisson (Palm-Khintchine), which
 * is PK's premise. The fit's rate is events per second per worker. */
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include <cjson/cJSON.h>

#include "cal_cert.h"
#include "cal_fit.h"
#include "cal_opts.h"
#include "cal_plot.h"
#include "cal_proc.h"
#include "cal_rule.h"
#include "cal_step.h"
#include "cal_sweep.h"
#include "rb_cert.h"
#include "rb_clock.h"
#include "rb_file.h"
#include "rb_host.h"
#include "rb_json.h"
#include "rb_proc.h"

#define MAX_STEPS 256
#define CAL_MIN_LEVELS 3 /* two parameters and a test of the fit */
#define SIM_START_TIMEOUT_NS 10000000000LL
#define CAL_SIM_NICE 19
/* A simulator on a CPU of its own, apart from the workers (cal_run.apart),
 * needs no lower priority than theirs to let them go first; it needs a
 * higher one than background work's, whose time it would otherwise share
 * evenly (see place_cpus). */
#define CAL_SIM_NICE_APART 10
/* How long the CPUs' idle time is read before the simulator's is chosen: a
 * few periods of a neighbour that works in bursts of tens of ms. */
#define CAL_PLACE_WINDOW_NS 300000000LL
#define CAL_MAX_BASELINE 8  /* a baseline's steps per k */
#define CAL_MAX_COSTS 4     /* the self-test's costs: fixed, exponential, their repeats */
#define SELFTEST_RHO_LO 0.2 /* the self-test judges PK's curve over this range */
#define SELFTEST_RHO_HI 0.85
#define SELFTEST_R_TOL 0.20    /* R against PK's: the fit's interval, at least this wide */
#define SELFTEST_RULE_TOL 0.15 /* the certified rho against PK's crossing of the budget */
#define SELFTEST_HOLD_LO 0.6   /* the held-out level (out of sample) is taken from this range */
#define SELFTEST_HOLD_HI 0.8
#define CAL_BASELINE_STEP_NS                                                                       \
    2000000000LL /* the utilisation is exact after a few thousand events                           \
                  */

/* The self-test's baseline: the judged rates of each k without the injected
 * cost. Measured once after the planned sweeps, and once more after the
 * repeats, which are judged against it (baseline_of). */
typedef struct cal_baseline {
    double us[CAL_MAX_K], us_ci[CAL_MAX_K][2]; /* the client's own busy time per event */
    double m1[CAL_MAX_K], m2[CAL_MAX_K];       /* and its callbacks' E[S], E[S^2] */
    int n[CAL_MAX_K];
} cal_baseline;

typedef struct cal_run {
    cal_opts o;
    char simserver[1024], loadgen[1024];
    char steps_dir[1100];
    char cert_path[1100];
    pid_t sim_pid, probe_pid; /* the simulator, and the unpaced one of the probe */
    int port, probe_port;
    int dead;                /* a simulator died: the run is void */
    int client_cpu, sim_cpu; /* -1: not bound */
    /* A certificate's placement (place_cpus): for k below apart_n (the CPUs
     * this process may use), the simulator on CPU apart_cpu (the busiest at
     * the start, idle apart_idle) and the workers on apart_list, the other
     * CPUs; apart: placed at all; sim_apart: the running simulator is. */
    int apart, apart_n, apart_cpu, sim_apart;
    double apart_idle;
    char apart_list[64];
    /* k measured again sharing the CPUs (sweep_k_placed), for o.workers[i]:
     * both[i], measured both ways; kept_shared[i], the shared sweep kept
     * (its figures are the k's); both_rho[i], what each certified, placed
     * then shared (NAN: nothing); both_why[i], why the placed one was not
     * enough. again: that sweep is running (batch files "a"). superseded:
     * the batches of the sweep not kept, out of r->steps and every fit,
     * kept for the certificate's table */
    int kept_shared[CAL_MAX_K], both[CAL_MAX_K], again;
    double both_rho[CAL_MAX_K][2];
    char both_why[CAL_MAX_K][160];
    cal_step superseded[MAX_STEPS];
    int n_superseded;
    cal_step steps[MAX_STEPS];
    int n_steps;
    int n_retried;   /* batches measured again, other processes busy on the host */
    cal_retry retry; /* the run's streak of disturbed retries */
    cal_step base[2 * CAL_MAX_K * CAL_MAX_BASELINE]; /* the baselines' steps */
    int n_base;
    cal_baseline bl[2];      /* the first baseline, and the repeats' */
    int n_bl;                /* baselines measured */
    cal_per_k pk[CAL_MAX_K]; /* the certificate's: the (first) injected cost's in a self-test */
    int npk;
    /* the self-test's injected costs, each its own sweep: steps [first, end);
     * the first n_planned as planned, then the repeats of those that failed
     * (repeat_of: the planned cost measured again, or -1) */
    int n_costs, n_planned, cur_cost;
    int repeat_of[CAL_MAX_COSTS];
    char cost_kind[CAL_MAX_COSTS][8];
    double cost_us[CAL_MAX_COSTS];
    int cost_first[CAL_MAX_COSTS], cost_end[CAL_MAX_COSTS];
    cal_per_k pkc[CAL_MAX_COSTS][CAL_MAX_K];
    cal_cost cost;
    cal_sweep_cfg sweep;
    /* the cost probe's workload in the batch being run: output tokens (0:
     * --random-output-len's) and non-streamed responses */
    int probe_output_len, probe_plain;
} cal_run;

static void progress(const cal_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const cal_run *r, const char *fmt, ...)
{
    if (r->o.quiet) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

static int resolve_binary(const char *given, const char *rel, const char *flag, char *out, size_t n)
{
    if (given[0]) {
        snprintf(out, n, "%s", given);
        if (access(out, X_OK) != 0) {
            fprintf(stderr, "calibrate: %s: '%s' is not an executable file\n", flag, given);
            return 2;
        }
        return 0;
    }
    if (cal_proc_sibling(rel, out, n) != 0 || access(out, X_OK) != 0) {
        fprintf(stderr, "calibrate: cannot find %s (looked at %s); build it or give %s PATH\n", rel,
                out, flag);
        return 1;
    }
    return 0;
}

/* Starts a simulator with the given token spacing (log: OUT_DIR/name.log);
 * fills *pid and *port. 0, or -1 (the reason printed). */
static int start_sim(cal_run *r, int64_t itl_ns, int64_t itl_sd_ns, const char *name, pid_t *pid,
                     int *port)
{
    char itl[32], itl_sd[32], ttft[32], ttft_sd[32], log[1200];
    snprintf(itl, sizeof itl, "%lldus", (long long)(itl_ns / 1000));
    snprintf(itl_sd, sizeof itl_sd, "%lldus", (long long)(itl_sd_ns / 1000));
    snprintf(log, sizeof log, "%s/%s.log", r->o.out_dir, name);
    char *argv[16 + CAL_MAX_EXTRA];
    int a = 0;
    argv[a++] = r->simserver;
    argv[a++] = "--host";
    argv[a++] = "127.0.0.1";
    argv[a++] = "--port";
    argv[a++] = "0";
    argv[a++] = "--inter-token-latency";
    argv[a++] = itl;
    argv[a++] = "--inter-token-latency-std-dev";
    argv[a++] = itl_sd;
    if (r->o.ttft_ns > 0 && pid == &r->sim_pid) {
        /* the self-test's one-token responses: a jittered time to first
         * token spreads the deliveries (cal_opts_parse) */
        snprintf(ttft, sizeof ttft, "%lldus", (long long)(r->o.ttft_ns / 1000));
        snprintf(ttft_sd, sizeof ttft_sd, "%lldus", (long long)(r->o.ttft_sd_ns / 1000));
        argv[a++] = "--time-to-first-token";
        argv[a++] = ttft;
        argv[a++] = "--time-to-first-token-std-dev";
        argv[a++] = ttft_sd;
    }
    for (int i = 0; i < r->o.n_sim_args; i++)
        argv[a++] = (char *)r->o.sim_args[i];
    argv[a] = NULL;
    /* In the self-test the simulator's timers must fire on time whatever
     * else runs on its CPU: late timers send tokens in bursts, and a bursty
     * arrival stream waits longer than the Poisson one PK describes. */
    int sim_rt = r->o.self_test && r->sim_cpu >= 0 ? r->o.rt_priority : 0;
    int cpu = r->o.self_test ? r->sim_cpu : r->sim_apart ? r->apart_cpu : -1;
    int rc = cal_proc_spawn_on(argv, log, cpu, sim_rt, pid);
    /* A certificate's simulator runs at the lowest priority (nice 19; no
     * privilege needed): it is the calibration's fixture, and where the
     * worker and it want the same CPU the worker goes first. An inference
     * server is not on the client's CPUs in the runs the certificate is
     * for, and its lateness is not the client's delay (measured from the
     * kernel's receive time). Measured (calibrate --quick --workers 1,
     * alternated, load 2.3-3.4): at rho 0.3-0.48 the worker's run-queue
     * share 26-37% and delay 92-250 us at nice 0, 6-11% and 27-58 us at
     * nice 19; the simulator takes 22-27% of the host's CPU time at
     * 2400-3900 requests/s. The self-test binds it to its own CPU instead,
     * and so does a certificate for each k with a CPU to spare (place_cpus),
     * at CAL_SIM_NICE_APART. */
    if (rc == 0 && !r->o.self_test)
        setpriority(PRIO_PGRP, *pid, r->sim_apart ? CAL_SIM_NICE_APART : CAL_SIM_NICE);
    if (rc) {
        fprintf(stderr, "calibrate: cannot start %s: %s\n", r->simserver, strerror(-rc));
        return -1;
    }
    *port = cal_proc_wait_listening(*pid, log, SIM_START_TIMEOUT_NS);
    if (*port < 0) {
        fprintf(stderr,
                "calibrate: simserver did not report 'listening http://127.0.0.1:PORT' "
                "(%s); see %s\n",
                *port == -ECHILD ? "it exited" : strerror(-*port), log);
        cal_proc_stop(*pid, 2000000000LL);
        *pid = 0;
        return -1;
    }
    progress(r, "calibrate: %s on 127.0.0.1:%d (inter-token latency %s +- %s)\n", name, *port, itl,
             itl_sd);
    return 0;
}

static int start_simserver(cal_run *r)
{
    return start_sim(r, r->o.itl_ns, r->o.itl_sd_ns, "simserver", &r->sim_pid, &r->port);
}

/* A certificate's placement. The server in the runs a certificate is for
 * is not on the client's CPUs, so for each k with a CPU to spare the
 * simulator gets one of its own, the busiest at the start, and the workers
 * the others (loadgen --worker-cpus; among them the scheduler still places
 * them). Measured beside a loop busy half of CPU 0 at nice 19 (calibrate
 * --quick --workers 1, alternated; results/calibrate/neighbour-apart):
 * sharing the CPUs, the worker waits behind the simulator and the
 * simulator, at nice 19 as the neighbour, sends late in bursts; apart, with
 * the simulator at nice 10, k=1 certified within 13% of its quiet median
 * where shared fell 39-51% below. Off with --shared-cpus, and in the
 * self-test (its own binding, configure_sweep). */
static void place_cpus(cal_run *r)
{
    r->apart = r->sim_apart = 0;
    cpu_set_t allowed, workers;
    if (r->o.self_test || r->o.shared_cpus || sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    static double idle[CPU_SETSIZE];
    if (rb_host_cpu_idle(idle, CPU_SETSIZE, CAL_PLACE_WINDOW_NS) < 0) return;
    if (cal_proc_place(idle, CPU_SETSIZE, &allowed, 1, &r->apart_cpu, &workers) != 0) return;
    r->apart = 1;
    r->apart_n = CPU_COUNT(&allowed);
    r->apart_idle = idle[r->apart_cpu];
    rb_host_format_cpu_list(&workers, r->apart_list, sizeof r->apart_list);
    r->sim_apart = r->o.workers[0] < r->apart_n;
    progress(r,
             "calibrate: for k < %d, simserver on CPU %d (the busiest: idle %.0f%% over %.1f s) at "
             "nice %d, the workers on CPUs %s; k >= %d shares the CPUs, simserver at nice %d\n",
             r->apart_n, r->apart_cpu, 100 * r->apart_idle, CAL_PLACE_WINDOW_NS / 1e9,
             CAL_SIM_NICE_APART, r->apart_list, r->apart_n, CAL_SIM_NICE);
}

/* Whether k's runs are placed (the simulator on a CPU of its own): k below
 * the CPUs there are, and not measured again shared (sweep_k_placed), which
 * holds for every run of that k, the cost probe's k=1 too. The certificate's
 * placement per k (fit_all) and the simulator's (place_sim) both come from
 * here. */
static int k_placed(const cal_run *r, int k)
{
    if (r->o.self_test || !r->apart || k >= r->apart_n) return 0;
    for (int i = 0; i < r->o.n_workers; i++)
        if (r->o.workers[i] == k && r->kept_shared[i]) return 0;
    return 1;
}

/* The simulator, started again when k wants the other placement: 0, or -1
 * (the run is void: r->dead). */
static int place_sim(cal_run *r, int k)
{
    int want = k_placed(r, k);
    if (r->o.self_test || want == r->sim_apart || r->sim_pid <= 0) return 0;
    r->sim_apart = want;
    cal_proc_stop(r->sim_pid, 3000000000LL);
    r->sim_pid = 0;
    if (start_simserver(r) == 0) return 0;
    r->dead = 1;
    return -1;
}

/* The host's CPU time so far, busy and total, in ns (rb_host's reading of
 * /proc/stat, the one loadgen's workers use). */
static int host_cpu_ns(double *busy, double *total)
{
    rb_host_reading r;
    rb_host_sample(&r);
    if (r.cpu_ns <= 0) return -1;
    *total = (double)r.cpu_ns;
    *busy = (double)(r.cpu_ns - r.idle_ns); /* less idle and iowait */
    return 0;
}

/* CPU seconds (user + system) that process pid has used, or 0 (gone). */
static double proc_cpu_s(pid_t pid)
{
    char buf[1024];
    const char *p = rb_proc_stat(pid, buf, sizeof buf);
    unsigned long long ut = 0, st = 0;
    if (!p || sscanf(p, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* CPU seconds this run's own processes have used: calibrate, its reaped
 * children (each batch's loadgen with its workers) and the live simulators. */
static double own_cpu_s(const cal_run *r)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    double t = (double)self.ru_utime.tv_sec + (double)self.ru_utime.tv_usec * 1e-6 +
               (double)self.ru_stime.tv_sec + (double)self.ru_stime.tv_usec * 1e-6 +
               (double)kids.ru_utime.tv_sec + (double)kids.ru_utime.tv_usec * 1e-6 +
               (double)kids.ru_stime.tv_sec + (double)kids.ru_stime.tv_usec * 1e-6;
    return t + proc_cpu_s(r->sim_pid) + proc_cpu_s(r->probe_pid);
}

/* 1 (and the reason printed, the run marked failed) when a simulator of
 * this run has exited: what loadgen measured against it is no measurement. */
static int sim_died(cal_run *r)
{
    pid_t pids[2] = {r->sim_pid, r->probe_pid};
    for (int i = 0; i < 2; i++) {
        if (pids[i] <= 0) continue;
        int status;
        if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
            fprintf(stderr,
                    "calibrate: simserver (pid %d) died (%s %d) during the run; see %s/%s\n",
                    (int)pids[i], WIFSIGNALED(status) ? "signal" : "exit status",
                    WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), r->o.out_dir,
                    i ? "probe-simserver.log" : "simserver.log");
            if (i == 0)
                r->sim_pid = 0;
            else
                r->probe_pid = 0;
            r->dead = 1;
            return 1;
        }
    }
    return 0;
}

/* One loadgen run, with the injected client cost when inject is set; tag
 * and index name its files ("s": a sweep step, "b": a self-test baseline
 * step), seed_index its arrivals (the seed's offset: a batch measured
 * again keeps its batch's arrivals, so what changed is the host alone).
 * Returns 0 with *s filled, or -1 (the reason printed). */
static int run_step_on(cal_run *r, int port, int k, int index, int seed_index, double rate,
                       int inject, const char *tag, int64_t step_ns, cal_step *s)
{
    char url[64], kbuf[16], rbuf[32], dbuf[32], seed[32], in_len[16], out_len[16], cost[48];
    char fname[64], json_path[1200], log_path[1200];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    snprintf(kbuf, sizeof kbuf, "%d", k);
    snprintf(rbuf, sizeof rbuf, "%.3f", rate);
    snprintf(dbuf, sizeof dbuf, "%lldms", (long long)(step_ns / 1000000));
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)(r->o.seed + (uint64_t)seed_index));
    snprintf(in_len, sizeof in_len, "%d", r->o.input_len);
    snprintf(out_len, sizeof out_len, "%d",
             r->probe_output_len > 0 ? r->probe_output_len : r->o.output_len);
    snprintf(cost, sizeof cost, "%s:%g", r->cost_kind[r->cur_cost], r->cost_us[r->cur_cost]);
    snprintf(fname, sizeof fname, "k%d_%s%02d.json", k, tag, index);
    snprintf(json_path, sizeof json_path, "%s/%s", r->steps_dir, fname);
    snprintf(log_path, sizeof log_path, "%s/k%d_%s%02d.log", r->steps_dir, k, tag, index);
    unlink(json_path);
    char *argv[48];
    int a = 0;
    argv[a++] = r->loadgen;
    argv[a++] = "--base-url";
    argv[a++] = url;
    argv[a++] = "--endpoint";
    argv[a++] = "/v1/completions";
    argv[a++] = "--model";
    argv[a++] = "sim-model";
    argv[a++] = "--num-workers";
    argv[a++] = kbuf;
    argv[a++] = "--request-rate";
    argv[a++] = rbuf;
    argv[a++] = "--duration";
    argv[a++] = dbuf;
    argv[a++] = "--seed";
    argv[a++] = seed;
    argv[a++] = "--random-input-len";
    argv[a++] = in_len;
    argv[a++] = "--random-output-len";
    argv[a++] = out_len;
    if (inject) {
        argv[a++] = "--client-cost";
        argv[a++] = cost;
    }
    if (r->probe_plain) argv[a++] = "--no-stream";
    if (!r->o.self_test && r->sim_apart) {
        argv[a++] = "--worker-cpus";
        argv[a++] = r->apart_list;
    }
    char rt[16];
    if (r->o.rt_priority > 0) {
        snprintf(rt, sizeof rt, "%d", r->o.rt_priority);
        argv[a++] = "--realtime-priority";
        argv[a++] = rt;
    }
    if (r->o.kingman) {
        /* constant-rate arrivals, the case Kingman's ca2 = 0 describes */
        argv[a++] = "--burstiness";
        argv[a++] = "inf";
    }
    argv[a++] = "--save-result";
    argv[a++] = "--result-dir";
    argv[a++] = r->steps_dir;
    argv[a++] = "--result-filename";
    argv[a++] = fname;
    argv[a++] = "--quiet";
    argv[a] = NULL;

    pid_t pid;
    double busy0 = 0, total0 = 0, busy1 = 0, total1 = 0;
    int ticks = host_cpu_ns(&busy0, &total0) == 0;
    double own0 = own_cpu_s(r);
    int rc = cal_proc_spawn_on(argv, log_path, k == 1 ? r->client_cpu : -1, 0, &pid);
    if (rc) {
        fprintf(stderr, "calibrate: cannot start %s: %s\n", r->loadgen, strerror(-rc));
        return -1;
    }
    /* the run, its drain, and start-up, with room to spare */
    int status = cal_proc_wait(pid, step_ns + 60000000000LL);
    double own1 = own_cpu_s(r);
    ticks = ticks && host_cpu_ns(&busy1, &total1) == 0 && total1 > total0;
    if (sim_died(r)) return -1;
    if (status != 0) {
        if (status == -EINTR) return -1;
        fprintf(stderr, "calibrate: k=%d step %d at %.1f/s: loadgen %s %d; see %s\n", k, index,
                rate, status == -ETIMEDOUT ? "timed out" : "exited with", status < 0 ? 0 : status,
                log_path);
        return -1;
    }
    char *text = NULL;
    size_t len = 0;
    rc = rb_read_file(json_path, 64 << 20, &text, &len);
    if (rc) {
        fprintf(stderr, "calibrate: k=%d step %d: cannot read %s: %s\n", k, index, json_path,
                strerror(-rc));
        return -1;
    }
    char err[256];
    s->workers = k;
    rc = cal_step_parse(text, len, s, err, sizeof err);
    free(text);
    if (rc) {
        fprintf(stderr, "calibrate: k=%d step %d: %s: %s\n", k, index, json_path, err);
        return -1;
    }
    s->workers = k;
    if (!isfinite(s->request_rate)) s->request_rate = rate;
    /* what the host's CPUs did that this run's processes did not (the
     * readings are ns: dividing them by the clock tick, as when they were
     * ticks, made every busy host's share "other processes") */
    if (ticks)
        cal_step_host_shares(busy1 - busy0, total1 - total0, own1 - own0, &s->host_busy,
                             &s->host_other);
    return 0;
}

/* One level: cal_opts_batches() batches at the same offered rate, each its
 * own loadgen run (another arrival seed), into r->steps with level = lv.
 * Prints the level's line. 0, or -1 (the reason printed; the batches made
 * stay). */
static int run_level(cal_run *r, int k, int lv, double rate, int nb, cal_level *out)
{
    int first = r->n_steps, retries = 0;
    for (int b = 0; b < nb && r->n_steps < MAX_STEPS && !cal_proc_interrupted(); b++) {
        cal_step *s = &r->steps[r->n_steps];
        int tries = 0;
        for (;;) {
            cal_step_clear(s);
            /* file k<k>_s<level><batch>: at most 20 batches, and their
             * retries from 20 on, so no two share a name; a self-test's
             * second injected cost from 5000 on */
            int batch = r->cur_cost * 5000 + lv * 100 + b;
            int idx = tries ? batch - b + 20 + retries : batch;
            if (run_step_on(r, r->port, k, idx, batch, rate, r->o.self_test, r->again ? "a" : "s",
                            cal_opts_step_ns(&r->o), s))
                return -1;
            s->apart = !r->o.self_test && r->sim_apart;
            /* Other processes took the CPUs during the batch: what it
             * measured is their work as much as the client's. Measured again,
             * at most twice a batch and nb times a level, and not while the
             * other work is steady (cal_retry_again), so a host that is
             * never quiet spends its time budget on levels, not retries. */
            /* (The self-test is not retried: it isolates itself instead,
             * its two sides bound to their own CPUs at real-time priority,
             * and its time budget must go to the levels it judges.) */
            int stops = r->retry.stops;
            if (r->o.self_test || cal_proc_interrupted() ||
                !cal_retry_again(&r->retry, s->host_other > CAL_HOST_OTHER_MAX, tries, retries,
                                 nb)) {
                if (r->retry.stops > stops)
                    progress(r,
                             "calibrate: k=%d level %2d: other processes kept the host's CPUs "
                             "busy through %d retries in a row: steady other work; batches are "
                             "kept as measured (counted as disturbed) until one is quiet\n",
                             k, lv, CAL_RETRY_FUTILE);
                break;
            }
            progress(r,
                     "calibrate: k=%d level %2d batch %d: other processes took %.0f%% of the "
                     "host's CPU time; measured again\n",
                     k, lv, b, 100.0 * s->host_other);
            tries++;
            retries++;
            r->n_retried++;
        }
        if (cal_step_empty(s)) {
            progress(r,
                     "calibrate: k=%d level %2d batch %d: no events and no failure (nothing "
                     "arrived in its window at %.1f/s): not counted\n",
                     k, lv, b, rate);
            continue;
        }
        s->retried = tries;
        s->saturated = cal_sweep_saturated(&r->sweep, s, s->why, sizeof s->why);
        s->level = lv;
        r->n_steps++;
    }
    if (r->n_steps == first) return -1;
    cal_levels_build(r->steps + first, r->n_steps - first, k, out, 1);
    progress(r,
             "calibrate: k=%d level %2d: offered %8.1f/s rho %.3f +- %.3f delay %8.1f +- %6.1f us "
             "(%d batches%s) host CPUs %.0f%% busy\n",
             k, lv, rate, out->rho, out->rho_sd, out->delay_us, out->delay_err_us, out->n,
             out->saturated ? ", saturated" : "", 100.0 * out->host_busy);
    return 0;
}

/* The levels of k measured so far (steps from first on) that count, one
 * step each standing for its level (its means), for the sweep's rules; err
 * (may be NULL): each one's error bar. */
static int level_view(const cal_run *r, int k, int first, cal_step *view, int max, int *confirmed,
                      double *err)
{
    static cal_level lv[CAL_MAX_LEVELS];
    int n = cal_levels_build(r->steps + first, r->n_steps - first, k, lv, CAL_MAX_LEVELS), m = 0;
    *confirmed = 0;
    for (int i = 0; i < n && m < max; i++) {
        *confirmed |= lv[i].confirmed;
        cal_step *v = &view[m++];
        cal_step_clear(v);
        v->workers = k;
        v->level = lv[i].level;
        v->request_rate = lv[i].request_rate;
        v->achieved_rate = lv[i].request_rate; /* a level that kept up */
        v->rho_mean = lv[i].rho;
        v->overhead_mean_us = lv[i].delay_us;
        v->completed = 1;
        v->saturated = lv[i].saturated;
        v->confirmed = lv[i].confirmed;
        if (err) { /* the error bar the rule will use (0: not known yet) */
            double e = cal_level_pooled_err_us(lv, n, i, r->o.budget_us);
            err[m - 1] = isfinite(e) ? e : 0;
        }
    }
    return m;
}

/* The lowest mean delay of the counted levels: the transport term's stand-in
 * while the sweep runs. */
static double lowest_delay(const cal_step *view, int n)
{
    double lo = INFINITY;
    for (int i = 0; i < n; i++)
        if (!view[i].saturated && view[i].overhead_mean_us < lo) lo = view[i].overhead_mean_us;
    return isfinite(lo) ? lo : NAN;
}

/* The error bar of level lv in the view (0: not in it, or not known). */
static double err_of(const cal_step *view, const double *err, int nv, int lv)
{
    for (int i = 0; i < nv; i++)
        if (view[i].level == lv) return err[i];
    return 0;
}

/* The sweep of one worker count: levels aimed at the mode's utilisation
 * targets, until deadline_ns (after at least CAL_MIN_LEVELS levels).
 * Returns the number of levels made. */
static int sweep_k(cal_run *r, int k, int64_t deadline_ns)
{
    int first = r->n_steps, made = 0, fills = 0;
    int64_t spent_ns = 0;
    static cal_step view[CAL_MAX_LEVELS];
    static double err[CAL_MAX_LEVELS];
    if (place_sim(r, k) != 0) return 0;
    for (;;) {
        if (cal_proc_interrupted() || r->dead || r->n_steps + 16 >= MAX_STEPS) break;
        /* a level costs its batches plus their start-up and drain: as measured */
        int64_t per_level = made
                                ? spent_ns / made
                                : cal_opts_batches(&r->o) * (cal_opts_step_ns(&r->o) + 500000000LL);
        int64_t t0 = rb_now_ns();
        int confirmed = 0;
        int nv = level_view(r, k, first, view, CAL_MAX_LEVELS, &confirmed, err);
        /* (the self-test's budget is 5 x its injected cost: the sweep repeats and
         * bisects at its crossing as a calibration does, and the rule is judged) */
        double budget = r->o.budget_us;
        double c_now = lowest_delay(view, nv);
        /* the rule's own test: a level's delay with its error bar */
        int limit = 0; /* a saturated level, or one over budget and confirmed */
        for (int i = 0; i < nv; i++)
            limit |= view[i].saturated ||
                     (view[i].confirmed && isfinite(budget) &&
                      !cal_rule_within(view[i].overhead_mean_us, err[i], c_now, 0, budget));
        /* Up to the first level at the limit; after it, the rest of the time
         * bisects between it and the fastest level within budget below, where
         * the certified value is decided (a level above a confirmed bad one
         * can never be certified). */
        double rate =
            limit
                ? (nv < r->sweep.max_steps ? cal_sweep_fill_rate(view, err, nv, c_now, budget) : 0)
                : cal_sweep_next_rate(&r->sweep, view, nv, r->o.start_rate * k);
        if (!(rate > 0)) break;
        if (cal_sweep_out_of_time(made, CAL_MIN_LEVELS, rb_now_ns(), per_level, deadline_ns, limit,
                                  fills)) {
            progress(r, "calibrate: k=%d: time budget used up after %d levels\n", k, made);
            break;
        }
        fills += limit;
        cal_level lv;
        int no = made++;
        /* the first level, at the start rate, is the probe of the cost per
         * request that aims the others: one batch */
        if (run_level(r, k, no, rate, no ? cal_opts_batches(&r->o) : 1, &lv) != 0) break;
        /* A level that looked bad is measured again before it counts, until
         * one is confirmed: one host hiccup never decides. */
        /* Bad by the certification rule's own test: the delay with the
         * error bar the fit will give it (a level within budget by its mean
         * but not with its bar would otherwise be neither repeated nor
         * bisected below, and the certificate would fall to the level under
         * it: measured, one quiet run certified 0.50 with levels at 0.76 and
         * 0.83 in that state and none between). */
        nv = level_view(r, k, first, view, CAL_MAX_LEVELS, &confirmed, err);
        double c_est = lowest_delay(view, nv);
        int bad = !cal_rule_within(lv.delay_us, err_of(view, err, nv, no), c_est, lv.saturated,
                                   r->o.budget_us);
        if (bad && !confirmed && !cal_sweep_repeat_bad(view, nv, err, no, c_est, r->o.budget_us)) {
            progress(r,
                     "calibrate: k=%d level %2d saturated at rho %.2f, above a level within "
                     "budget: not measured again; the sweep bisects below it\n",
                     k, no, lv.rho);
        } else if (bad && !confirmed && !cal_proc_interrupted()) {
            progress(r, "calibrate: k=%d level %2d looks %s at rho %.2f; measured again\n", k, no,
                     lv.saturated ? "saturated" : "over budget", lv.rho);
            cal_level again;
            int no2 = made++;
            if (run_level(r, k, no2, rate, cal_opts_batches(&r->o), &again) != 0) break;
            /* both measurements pooled into level no, and the pool judged:
             * confirmed bad by a bar from a pool of enough batches, else by
             * its mean (cal_level_confirm_err_us) */
            int bad2 = cal_sweep_pool_repeat(r->steps + first, r->n_steps - first, k, no, no2,
                                             c_est, r->o.budget_us);
            nv = level_view(r, k, first, view, CAL_MAX_LEVELS, &confirmed, err);
            for (int i = 0; i < nv; i++)
                if (view[i].level == no)
                    progress(r,
                             "calibrate: k=%d level %2d pooled with its repeat: rho %.3f delay "
                             "%.1f us: %s\n",
                             k, no, view[i].rho_mean, view[i].overhead_mean_us,
                             bad2 ? (view[i].saturated ? "saturated, confirmed"
                                                       : "over budget, confirmed")
                                  : "within budget");
        }
        spent_ns += rb_now_ns() - t0;
    }
    return made;
}

/* One kind of cost-probe batch, twice, at rate on port (tag "p", files
 * from index first on): output_len tokens (0: the sweep's), plain
 * (non-streamed) or not. */
static void probe_batches(cal_run *r, int port, int first, double rate, int output_len, int plain,
                          const char *what)
{
    int64_t step_ns = cal_opts_step_ns(&r->o);
    r->probe_output_len = output_len;
    r->probe_plain = plain;
    for (int b = 0; b < 2 && r->n_steps < MAX_STEPS && !cal_proc_interrupted(); b++) {
        cal_step *s = &r->steps[r->n_steps];
        cal_step_clear(s);
        if (run_step_on(r, port, 1, first + b, first + b, rate, 0, "p", step_ns, s) != 0) break;
        s->saturated = cal_sweep_saturated(&r->sweep, s, s->why, sizeof s->why);
        s->probe = 1;
        s->plain = plain;
        r->n_steps++;
        progress(r,
                 "calibrate: cost probe (%s) %d: offered %8.1f/s rho %.3f, %.1f events per "
                 "delivery, %.1f per request%s\n",
                 what, b + 1, rate, s->rho_mean,
                 s->callback_rate_per_worker > 0
                     ? s->event_rate_per_worker / s->callback_rate_per_worker
                     : NAN,
                 s->events_per_request, s->saturated ? " (saturated: not used)" : "");
    }
    r->probe_output_len = r->probe_plain = 0;
}

/* The cost model's probes, at the rate of the one-worker level nearest rho
 * 0.4: unpaced tokens from a simulator that does not space them (many
 * events per delivery, where the sweep's carry one each: the delivery's
 * cost apart from the event's), one-token responses at twice that rate (few
 * events per request: the request's own cost) and non-streamed responses at
 * 1.5 times it (a plain response's cost), each in two batches. */
static void probe_cost(cal_run *r)
{
    double rate = 0, best = INFINITY;
    for (int i = 0; i < r->n_steps; i++) {
        const cal_step *s = &r->steps[i];
        if (s->workers == 1 && !s->saturated && fabs(s->rho_mean - 0.4) < best) {
            best = fabs(s->rho_mean - 0.4);
            rate = s->request_rate;
        }
    }
    if (!(rate > 0) || cal_proc_interrupted() || place_sim(r, 1) != 0) return;
    probe_batches(r, r->port, 93, 2.0 * rate, 1, 0, "one token");
    probe_batches(r, r->port, 95, 1.5 * rate, 0, 1, "not streamed");
    if (start_sim(r, 0, 0, "probe-simserver", &r->probe_pid, &r->probe_port) != 0) return;
    probe_batches(r, r->probe_port, 90, rate, 0, 0, "unpaced");
    cal_proc_stop(r->probe_pid, 3000000000LL);
    r->probe_pid = 0;
}

/* The self-test's baseline b (0: the first; 1: the repeats'): the judged
 * steps of worker count k once more, at the same offered rates, without the
 * injected cost. Their busy time per event is the client's own, which the
 * injected run pays too. The second baseline has arrival seeds of its own,
 * after every cost's (d x 5000, run_level), and files "k1_rb01.json". */
static void baseline_k(cal_run *r, int j, int b)
{
    int k = r->o.workers[j], first = r->n_base;
    cal_baseline *bl = &r->bl[b];
    double rates[CAL_MAX_BASELINE];
    int n = cal_sweep_baseline_rates(r->steps, r->cost_end[0], k, SELFTEST_RHO_LO, SELFTEST_RHO_HI,
                                     rates, CAL_MAX_BASELINE);
    int64_t step_ns = cal_opts_step_ns(&r->o);
    if (step_ns > CAL_BASELINE_STEP_NS) step_ns = CAL_BASELINE_STEP_NS;
    int max = (int)(sizeof r->base / sizeof r->base[0]);
    for (int i = 0; i < n && r->n_base < max && !cal_proc_interrupted(); i++) {
        cal_step *s = &r->base[r->n_base];
        cal_step_clear(s);
        int seed = b ? CAL_MAX_COSTS * 5000 + i + 1 : i + 1;
        if (run_step_on(r, r->port, k, i + 1, seed, rates[i], 0, b ? "rb" : "b", step_ns, s) != 0)
            break;
        s->saturated = cal_sweep_saturated(&r->sweep, s, s->why, sizeof s->why);
        r->n_base++;
        progress(r,
                 "calibrate: k=%d baseline%s %d: offered %8.1f/s rho %.3f busy/event %6.1f us "
                 "(no injected cost)%s%s\n",
                 k, b ? " again" : "", i + 1, s->request_rate, s->rho_mean, s->service_per_event_us,
                 s->saturated ? "  saturated: " : "", s->saturated ? s->why : "");
    }
    bl->n[j] = r->n_base - first;
    bl->us[j] = cal_baseline_service_us(r->base + first, r->n_base - first, k, bl->us_ci[j]);
    cal_baseline_moments(r->base + first, r->n_base - first, k, &bl->m1[j], &bl->m2[j]);
}

/* The baseline cost c is judged against: a repeat's own, once measured. */
static const cal_baseline *baseline_of(const cal_run *r, int c)
{
    return &r->bl[r->repeat_of[c] >= 0 && r->n_bl > 1];
}

/* The 1-minute load average, or NAN. */
static double loadavg_1min(void)
{
    double v = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &v) != 1) v = NAN;
        fclose(f);
    }
    return v;
}

static void iso_now(char *out, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int write_text(const char *path, const char *text)
{
    int rc = rb_write_file_atomic(path, text, strlen(text));
    if (rc) fprintf(stderr, "calibrate: cannot write %s: %s\n", path, strerror(-rc));
    return rc;
}

/* The cost model's terms, with the k scales, one line each. */
static void print_cost(const cal_run *r)
{
    const cal_cost *c = &r->cost;
    printf("\ncost model (one worker): %.2f us per request [%.2f, %.2f]%s + %.2f us per delivery "
           "[%.2f, %.2f]%s + %.2f us per event [%.2f, %.2f] + %.2f us per non-streamed response "
           "[%.2f, %.2f]%s\n",
           c->per_request_us, c->per_request_us_ci[0], c->per_request_us_ci[1],
           c->request_identified ? "" : " (not told apart)", c->per_delivery_us,
           c->per_delivery_us_ci[0], c->per_delivery_us_ci[1],
           c->identified ? "" : " (deliveries and events not told apart)", c->per_event_us,
           c->per_event_us_ci[0], c->per_event_us_ci[1], c->per_plain_response_us,
           c->per_plain_response_us_ci[0], c->per_plain_response_us_ci[1],
           c->plain_identified ? "" : " (not told apart)");
    for (int i = 0; i < r->npk; i++)
        if (isfinite(r->pk[i].cost_scale))
            printf("  k=%d: each worker %.2fx [%.2f, %.2f] as busy as the one-worker model says\n",
                   r->pk[i].workers, r->pk[i].cost_scale, r->pk[i].cost_scale_ci[0],
                   r->pk[i].cost_scale_ci[1]);
}

/* gnuplot from PATH, or "" */
static void find_in_path(const char *name, char *out, size_t n)
{
    out[0] = '\0';
    const char *path = getenv("PATH");
    if (!path) path = "/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        if (len > 0 && (size_t)snprintf(out, n, "%.*s/%s", (int)len, path, name) < n &&
            access(out, X_OK) == 0)
            return;
        out[0] = '\0';
        path += len + (colon ? 1 : 0);
    }
}

static void write_plot(cal_run *r)
{
    char dat[1200], gp[1200];
    snprintf(dat, sizeof dat, "%s/calibration.dat", r->o.out_dir);
    snprintf(gp, sizeof gp, "%s/calibration.gp", r->o.out_dir);
    rb_afile f;
    if (rb_afile_open(&f, dat) == 0) {
        cal_plot_write_dat(f.fp, r->pk, r->npk);
        if (rb_afile_commit(&f)) fprintf(stderr, "calibrate: cannot write %s\n", dat);
    }
    if (rb_afile_open(&f, gp) == 0) {
        cal_plot_write_gp(f.fp, "calibration.dat", "calibration.png", r->pk, r->npk,
                          r->o.budget_us);
        if (rb_afile_commit(&f)) fprintf(stderr, "calibrate: cannot write %s\n", gp);
    }
    if (!r->o.plot) return;
    char gnuplot[1024];
    find_in_path("gnuplot", gnuplot, sizeof gnuplot);
    if (!gnuplot[0]) {
        progress(r, "calibrate: gnuplot not found; %s is ready for it\n", gp);
        return;
    }
    char cd[2200], quoted[2100], log[1200];
    if (cal_plot_quote(r->o.out_dir, quoted, sizeof quoted) != 0) return;
    snprintf(cd, sizeof cd, "cd %s", quoted);
    snprintf(log, sizeof log, "%s/gnuplot.log", r->o.out_dir);
    char *argv[] = {gnuplot, "-e", cd, "calibration.gp", NULL};
    pid_t pid;
    if (cal_proc_spawn(argv, log, &pid) == 0) {
        int st = cal_proc_wait(pid, 30000000000LL);
        if (st != 0) fprintf(stderr, "calibrate: gnuplot failed (%d); see %s\n", st, log);
    }
}

/* The superseded batches of the k of pk[j]. */
static int count_superseded(const cal_run *r, int j)
{
    int n = 0;
    for (int i = 0; i < r->n_superseded; i++)
        n += r->superseded[i].workers == r->pk[j].workers;
    return n;
}

static void print_summary(const cal_run *r, const cal_cert_info *info)
{
    printf("\nrhobench calibrate: %s, %d cores online, %s, load average %.2f -> %.2f\n",
           info->host.cpu_model, info->host.cores_online, info->host.kernel, info->loadavg_start,
           info->loadavg_end);
    printf("model %s, budget %.0f us of client queueing delay, %s mode%s\n", info->model,
           r->o.budget_us, cal_mode_name(r->o.mode), r->o.self_test ? ", self-test" : "");
    if (isnan(info->cpu_latency_us))
        printf("idle CPUs (%s) not held awake in every batch: loadgen's --cpu-latency-us was "
               "off or refused\n",
               info->host.cpuidle);
    else
        printf("idle CPUs (%s) held to wake within %.0f us in every batch (loadgen's "
               "--cpu-latency-us)\n",
               info->host.cpuidle, info->cpu_latency_us);
    printf("\nmeasured levels (delay: the client's own delay per token, mean; +-: 95%% "
           "interval over the batches)\n");
    printf("%3s %3s %10s %14s %9s %10s %18s %10s %6s %6s  %s\n", "k", "lvl", "offered/s", "rho",
           "events/s", "busy/ev us", "delay us", "fit us", "host", "other", "note");
    for (int j = 0; j < r->npk; j++) {
        const cal_per_k *p = &r->pk[j];
        for (int i = 0; i < p->n_levels; i++) {
            const cal_level *l = &p->levels[i];
            char rho[32], d[32];
            snprintf(rho, sizeof rho, "%.3f+-%.3f", l->rho, l->rho_sd);
            snprintf(d, sizeof d, "%.1f+-%.1f", l->delay_us, l->delay_err_us);
            printf("%3d %3d %10.1f %14s %9.0f %10.1f %18s %10.1f %5.0f%% %5.0f%%  %s\n", p->workers,
                   l->level, l->request_rate, rho, l->event_rate_per_worker,
                   l->event_rate_per_worker > 0 ? l->rho / l->event_rate_per_worker * 1e6 : NAN, d,
                   p->level_pred_us[i], 100.0 * l->host_busy, 100.0 * l->host_other,
                   l->confirmed   ? (l->saturated   ? "saturated, confirmed"
                                     : l->undecided ? "over by its bar only, confirmed (caps nothing)"
                                                    : "over budget, confirmed")
                   : l->saturated ? "saturated"
                   : l->repeated  ? "measured twice, pooled"
                                  : "");
        }
    }
    print_cost(r);
    printf("\ncertificate (per worker count; E[S] per SSE event; rates in requests/s of the "
           "reference workload)\n");
    printf("%3s %-14s %6s %-20s %-22s %-22s %7s %8s %10s %10s\n", "k", "method", "levels",
           "E[S] us [95% CI]", "R us [95% CI]", "transport us [95% CI]", "fit p", "safe rho",
           "safe/wkr", "safe total");
    for (int j = 0; j < r->npk; j++) {
        const cal_per_k *p = &r->pk[j];
        char es[64], rr[64], c[64];
        snprintf(es, sizeof es, "%.1f [%.1f, %.1f]", p->mean_service_us, p->mean_service_us_ci[0],
                 p->mean_service_us_ci[1]);
        snprintf(rr, sizeof rr, "%.1f [%.1f, %.1f]", p->r_us, p->r_us_ci[0], p->r_us_ci[1]);
        snprintf(c, sizeof c, "%.1f [%.1f, %.1f]", p->transport_us, p->transport_us_ci[0],
                 p->transport_us_ci[1]);
        printf("%3d %-14s %2d/%-3d %-20s %-22s %-22s %7.3f %8.3f %10.1f %10.1f\n", p->workers,
               p->method, p->n_fit, p->n_levels, es, rr, c, p->gof_p, p->safe_rho,
               p->safe_rate_per_worker, p->safe_total_rate);
    }
    for (int j = 0; j < r->npk; j++) {
        printf("k=%d: certified safe rho %.3f, limited by %s: %s\n", r->pk[j].workers,
               r->pk[j].safe_rho, r->pk[j].limited_by, r->pk[j].cert_note);
        if (r->pk[j].host_limited) printf("k=%d: %s\n", r->pk[j].workers, r->pk[j].host_note);
        if (r->pk[j].measured_both) {
            /* pk[j] is o.workers[j]'s entry (fit_all) */
            int placed = !strcmp(r->pk[j].placement, "apart");
            printf("k=%d: measured again with every CPU shared: placed (simserver alone on CPU "
                   "%d, the workers on CPUs %s) it %s; kept the %s sweep (rho %.3f placed, %.3f "
                   "shared; the other's %d batches are in the table, superseded); its figures "
                   "hold for runs %s\n",
                   r->pk[j].workers, r->apart_cpu, r->apart_list, r->both_why[j],
                   placed ? "placed" : "shared", r->both_rho[j][0], r->both_rho[j][1],
                   count_superseded(r, j), placed ? "placed so" : "that share the CPUs");
        }
    }
}

/* The injected client of cost c for worker count index j, as the loop
 * saw it (cal_injected): the baseline's callback moments, the injected
 * levels' events and callbacks per request. */
static cal_injected injected_of(const cal_run *r, int c, int j)
{
    cal_injected inj = {.mean_us = r->cost_us[c],
                        .exponential = !strcmp(r->cost_kind[c], "exp"),
                        .base_m1_us = baseline_of(r, c)->m1[j],
                        .base_m2_us2 = baseline_of(r, c)->m2[j]};
    cal_selftest_delivery(&r->pkc[c][j], SELFTEST_RHO_LO, SELFTEST_RHO_HI, &inj.events_per_request,
                          &inj.callbacks_per_request);
    /* A response's events arrive in one read unless each has its own (a
     * callback or more per event: paced tokens, the fake loadgen's law) */
    inj.events_per_delivery =
        inj.callbacks_per_request >= inj.events_per_request ? 1 : inj.events_per_request;
    return inj;
}

/* The self-test's checks of injected cost c: the cost recovered, the curve,
 * then the model's own (R against PK's, the goodness of fit, the
 * certification rule, a level held out and predicted), all counted: the
 * self-test's deliveries arrive as a Poisson stream (cal_opts_parse). Rows
 * from checks[*n] on, each named after its cost ("exp:200", "exp:200#2" for
 * its repeat); returns the counted failures. */
static int cost_checks(const cal_run *r, int c, cal_check *checks, int max, int *n)
{
    int from = *n, m = 0, fails = 0;
    /* (cal_selftest_eval fills from its first row) */
    fails += cal_selftest_eval(r->pkc[c], r->npk, r->cost_us[c], baseline_of(r, c)->us, 0.10, 0.20,
                               SELFTEST_RHO_LO, SELFTEST_RHO_HI, checks + from, max - from, &m);
    *n = from + m;
    for (int j = 0; j < r->npk; j++) {
        cal_injected inj = injected_of(r, c, j);
        fails += cal_selftest_model(&r->pkc[c][j], &inj, r->o.budget_us, SELFTEST_R_TOL,
                                    SELFTEST_RULE_TOL, checks, max, n);
        fails += cal_selftest_holdout(
            r->steps + r->cost_first[c], r->cost_end[c] - r->cost_first[c], &r->pkc[c][j],
            r->o.budget_us, SELFTEST_HOLD_LO, SELFTEST_HOLD_HI, checks, max, n);
    }
    for (int i = from; i < *n; i++) {
        /* room for the prefix, then cut to the field (a Debug build's
         * -Wformat-truncation refuses a buffer of the field's size) */
        char name[sizeof checks[i].name + 64];
        snprintf(name, sizeof name, "%s:%g%s %s", r->cost_kind[c], r->cost_us[c],
                 r->repeat_of[c] >= 0 ? "#2" : "", checks[i].name);
        name[sizeof checks[i].name - 1] = '\0';
        memcpy(checks[i].name, name, sizeof checks[i].name);
        checks[i].attempt = r->repeat_of[c] >= 0 ? 2 : 1;
    }
    return fails;
}

/* Whether planned cost c was measured again (its first sweep failed a check). */
static int measured_again(const cal_run *r, int c)
{
    for (int d = r->n_planned; d < r->n_costs; d++)
        if (r->repeat_of[d] == c) return 1;
    return 0;
}

/* Every cost's checks, the repeats' after the planned ones. A cost measured
 * again is judged by its second sweep: its first sweep's failed rows are
 * shown, not counted (superseded). Returns the counted failures; *first_fails:
 * the planned sweeps' own (what the verdict would be without repeats). */
static int selftest_checks(const cal_run *r, cal_check *checks, int max, int *n, int *first_fails)
{
    *n = 0;
    int fails = 0, first = 0;
    for (int c = 0; c < r->n_costs; c++) {
        int from = *n;
        int f = cost_checks(r, c, checks, max, n);
        if (c < r->n_planned) first += f;
        if (c < r->n_planned && measured_again(r, c)) {
            for (int i = from; i < *n; i++) {
                checks[i].superseded = checks[i].counted;
                checks[i].counted = 0;
            }
            f = 0;
        }
        fails += f;
    }
    if (first_fails) *first_fails = first;
    return fails;
}

/* The checks into the certificate's text (a new text; the old one freed). */
static char *with_checks(const cal_run *r, char *text)
{
    cal_check checks[128];
    int n = 0, first_fails = 0;
    int fails = selftest_checks(r, checks, 128, &n, &first_fails);
    cJSON *root = cJSON_Parse(text);
    cJSON *st = root ? cJSON_AddObjectToObject(root, "self_test_result") : NULL;
    cJSON *arr = st ? cJSON_AddArrayToObject(st, "checks") : NULL;
    for (int i = 0; arr && i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            break;
        }
        cJSON_AddStringToObject(o, "check", checks[i].name);
        rb_json_put_num(o, "measured", checks[i].measured);
        rb_json_put_num(o, "expected", checks[i].expected);
        rb_json_put_num(o, "rel_err", checks[i].rel_err);
        rb_json_put_num(o, "tol", checks[i].tol);
        cJSON_AddBoolToObject(o, "pass", checks[i].pass);
        cJSON_AddBoolToObject(o, "counted", checks[i].counted);
        cJSON_AddBoolToObject(o, "superseded", checks[i].superseded);
        cJSON_AddNumberToObject(o, "attempt", checks[i].attempt);
    }
    if (st) {
        cJSON_AddBoolToObject(st, "pass", fails == 0);
        cJSON_AddNumberToObject(st, "failed", fails);
        /* without the repeats: the pass rate of one sweep per cost */
        cJSON_AddBoolToObject(st, "first_attempt_pass", first_fails == 0);
        cJSON_AddNumberToObject(st, "first_attempt_failed", first_fails);
        cJSON_AddNumberToObject(st, "baselines", r->n_bl);
        cJSON *again = cJSON_AddArrayToObject(st, "measured_again");
        for (int c = 0; again && c < r->n_planned; c++) {
            char kind[32];
            snprintf(kind, sizeof kind, "%s:%g", r->cost_kind[c], r->cost_us[c]);
            if (measured_again(r, c)) cJSON_AddItemToArray(again, cJSON_CreateString(kind));
        }
        cJSON_AddStringToObject(st, "arrivals",
                                "one-token responses to open-loop Poisson requests, the first "
                                "token jittered: a Poisson stream of deliveries, every check "
                                "counted");
        cJSON_AddNumberToObject(st, "budget_us", r->o.budget_us);
        cJSON_AddNumberToObject(st, "r_tol", SELFTEST_R_TOL);
        cJSON_AddNumberToObject(st, "rule_tol", SELFTEST_RULE_TOL);
        cJSON_AddNumberToObject(st, "holdout_rho_lo", SELFTEST_HOLD_LO);
        cJSON_AddNumberToObject(st, "holdout_rho_hi", SELFTEST_HOLD_HI);
        cJSON *costs = cJSON_AddArrayToObject(st, "injected");
        for (int c = 0; costs && c < r->n_costs; c++)
            for (int j = 0; j < r->npk; j++) {
                const cal_per_k *p = &r->pkc[c][j];
                cal_injected inj = injected_of(r, c, j);
                cJSON *o = cJSON_CreateObject();
                if (!o || !cJSON_AddItemToArray(costs, o)) {
                    cJSON_Delete(o);
                    break;
                }
                cJSON_AddStringToObject(o, "kind", r->cost_kind[c]);
                cJSON_AddNumberToObject(o, "attempt", r->repeat_of[c] >= 0 ? 2 : 1);
                rb_json_put_num(o, "mean_us", r->cost_us[c]);
                cJSON_AddNumberToObject(o, "workers", p->workers);
                rb_json_put_num(o, "baseline_us", baseline_of(r, c)->us[j]);
                cJSON_AddNumberToObject(o, "baseline", baseline_of(r, c) == &r->bl[1] ? 2 : 1);
                rb_json_put_num(o, "baseline_callback_m1_us", inj.base_m1_us);
                rb_json_put_num(o, "baseline_callback_m2_us2", inj.base_m2_us2);
                rb_json_put_num(o, "events_per_request", inj.events_per_request);
                rb_json_put_num(o, "callbacks_per_request", inj.callbacks_per_request);
                rb_json_put_num(o, "events_per_delivery", inj.events_per_delivery);
                rb_json_put_num(o, "mean_service_us", p->mean_service_us);
                rb_json_put_num(o, "r_us", p->r_us);
                rb_json_put_num(o, "r_us_lo", p->r_us_ci[0]);
                rb_json_put_num(o, "r_us_hi", p->r_us_ci[1]);
                rb_json_put_num(o, "r_pk_us", cal_selftest_r_true(&inj));
                rb_json_put_num(o, "gof_p", p->gof_p);
                rb_json_put_num(o, "safe_rho", p->safe_rho);
                cJSON_AddStringToObject(o, "limited_by", p->limited_by);
            }
    }
    char *out = st ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    if (!out) return text;
    free(text);
    return out;
}

static int self_test(const cal_run *r)
{
    cal_check checks[128];
    int n = 0, first_fails = 0;
    int fails = selftest_checks(r, checks, 128, &n, &first_fails);
    printf("\nself-test: injected client cost per SSE event:");
    for (int c = 0; c < r->n_planned; c++)
        printf(" %s:%g us", r->cost_kind[c], r->cost_us[c]);
    printf("; budget %g us; one-token responses (a Poisson stream of deliveries)\n",
           r->o.budget_us);
    for (int b = 0; b < r->n_bl; b++)
        for (int j = 0; j < r->o.n_workers; j++)
            printf("k=%d baseline%s (same rates, no injected cost): the client's own busy time "
                   "%.1f us per event [%.1f, %.1f] over %d steps\n",
                   r->o.workers[j], b ? " measured again, for the repeats" : "", r->bl[b].us[j],
                   r->bl[b].us_ci[j][0], r->bl[b].us_ci[j][1], r->bl[b].n[j]);
    printf("%-66s %10s %10s %7s %6s  %s\n", "check", "measured", "expected", "error", "tol",
           "result");
    for (int i = 0; i < n; i++) {
        const cal_check *c = &checks[i];
        printf("%-66s %10.4g %10.4g %6.1f%% %5.0f%%  %s\n", c->name, c->measured, c->expected,
               100.0 * c->rel_err, 100.0 * c->tol,
               c->pass         ? "PASS"
               : c->counted    ? "FAIL"
               : c->superseded ? "FAIL (measured again)"
                               : "over (the median decides)");
    }
    for (int c = 0; c < r->n_costs; c++)
        for (int j = 0; j < r->npk; j++) {
            const cal_per_k *p = &r->pkc[c][j];
            cal_injected inj = injected_of(r, c, j);
            printf("(%s:%g%s k=%d: E[S] %.1f us per event [%.1f, %.1f]; R %.1f us [%.1f, %.1f], "
                   "PK's %.1f from a baseline callback of %.1f us (R_b %.1f) and %.2f events in "
                   "%.2f callbacks per request; curve by '%s', fit p %.3f; safe rho %.3f limited "
                   "by %s)\n",
                   r->cost_kind[c], r->cost_us[c], r->repeat_of[c] >= 0 ? "#2" : "", p->workers,
                   p->mean_service_us, p->mean_service_us_ci[0], p->mean_service_us_ci[1], p->r_us,
                   p->r_us_ci[0], p->r_us_ci[1], cal_selftest_r_true(&inj), inj.base_m1_us,
                   inj.base_m2_us2 / (2.0 * inj.base_m1_us), inj.events_per_request,
                   inj.callbacks_per_request, p->method, p->gof_p, p->safe_rho, p->limited_by);
        }
    for (int c = 0; c < r->n_planned; c++)
        if (measured_again(r, c))
            printf("self-test: %s:%g failed a check on its first sweep and was measured again; "
                   "its second sweep (%s:%g#2) decides\n",
                   r->cost_kind[c], r->cost_us[c], r->cost_kind[c], r->cost_us[c]);
    printf("self-test: %s (%d of %d checks failed)\n", fails ? "FAIL" : "PASS", fails, n);
    return fails ? 1 : 0;
}

/* The options: -1 to go on, else the exit code (0: --help, --version; 2: bad usage). */
static int read_opts(cal_run *r, int argc, char **argv, long cpus)
{
    cal_opts_defaults(&r->o, (int)cpus);
    char err[512];
    int rc = cal_opts_parse(&r->o, argc - 1, argv + 1, err, sizeof err);
    if (rc == 1) {
        fputs(cal_usage(), stdout);
        return 0;
    }
    if (rc == 2) {
        printf("calibrate (rhobench) %s\n", RHOBENCH_VERSION);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "calibrate: %s\n", err);
        return 2;
    }
    return -1;
}

/* The run's folder: writable, and this run's alone. 0, or 2 (said why). */
static int lock_out_dir(cal_run *r)
{
    snprintf(r->steps_dir, sizeof r->steps_dir, "%.1000s/steps", r->o.out_dir);
    int rc = rb_dir_check_writable(r->steps_dir);
    if (rc != 0) {
        fprintf(stderr, "calibrate: --out-dir: cannot write in '%s': %s\n", r->o.out_dir,
                strerror(-rc));
        return 2;
    }
    /* Two calibrates in one folder would share their batch files: the second
     * is refused while the first holds the folder's lock (released at exit:
     * the descriptor is left open on purpose). */
    char lock_path[1100];
    snprintf(lock_path, sizeof lock_path, "%.1000s/.calibrate.lock", r->o.out_dir);
    int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        fprintf(stderr,
                "calibrate: --out-dir: '%s' is in use by another calibrate (%s); give "
                "each run its own folder\n",
                r->o.out_dir, lock_fd < 0 ? strerror(errno) : "its lock is held");
        return 2;
    }
    return 0;
}

/* Where the certificate goes (--out, else in the run's folder). 0, or 2: not writable. */
static int set_cert_path(cal_run *r)
{
    if (r->o.out[0])
        snprintf(r->cert_path, sizeof r->cert_path, "%.1090s", r->o.out);
    else
        snprintf(r->cert_path, sizeof r->cert_path, "%.1000s/%s", r->o.out_dir,
                 r->o.self_test ? "selftest-certificate.json" : "certificate.json");
    if (!r->o.out[0]) return 0;
    /* refuse now rather than lose the run at the end */
    char dir[1100];
    snprintf(dir, sizeof dir, "%.1090s", r->cert_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    int rc = rb_dir_check_writable(slash ? dir : ".");
    if (rc != 0) {
        fprintf(stderr, "calibrate: --out: cannot write in '%s': %s\n", slash ? dir : ".",
                strerror(-rc));
        return 2;
    }
    return 0;
}

/* The sweep's settings from the options, and the self-test's CPUs. */
static void configure_sweep(cal_run *r)
{
    cal_sweep_defaults(&r->sweep, (int)r->o.mode);
    r->sweep.lag_bound_ms = r->o.lag_bound_ms;
    r->sweep.max_rate = r->o.max_rate;
    if (r->o.max_steps) r->sweep.max_steps = r->o.max_steps;

    r->client_cpu = r->sim_cpu = -1;
    if (r->o.self_test && cal_proc_pick_cpus(&r->client_cpu, &r->sim_cpu) == 0) {
        /* The self-test checks the model against a known cost, so the two
         * sides must not share a CPU: with the client's worker spinning at
         * real-time priority, a simulator on the same CPU would only send
         * (and stamp) its tokens while the client is idle, and the client
         * would see no queue at all. A host certificate binds only its
         * simulator apart, and restricts the workers to the other CPUs
         * (place_cpus), among which the scheduler places them as it would
         * place a user's loadgen. */
        progress(r, "calibrate: self-test: loadgen bound to CPU %d, simserver to CPU %d%s\n",
                 r->client_cpu, r->sim_cpu,
                 r->o.rt_priority > 0 ? ", both at real-time priority" : "");
    }
    place_cpus(r);
}

/* The injected costs, each its own sweep with its share of the time. */
static void plan_costs(cal_run *r)
{
    /* the one asked for, or a fixed and an exponential one of the same mean */
    r->n_costs = 1;
    snprintf(r->cost_kind[0], sizeof r->cost_kind[0], "%.7s", r->o.cost_kind);
    r->cost_us[0] = r->o.cost_us;
    if (r->o.self_test && !r->o.cost_given) {
        snprintf(r->cost_kind[0], sizeof r->cost_kind[0], "fixed");
        snprintf(r->cost_kind[1], sizeof r->cost_kind[1], "exp");
        r->cost_us[1] = r->o.cost_us;
        r->n_costs = 2;
    }
    r->n_planned = r->n_costs;
    for (int c = 0; c < CAL_MAX_COSTS; c++)
        r->repeat_of[c] = -1;
}

/* The sweep of o.workers[i], and, when it was placed (the simulator on a
 * CPU of its own) and its certificate is doubtful (cal_fit_placed_doubtful:
 * empty, low, or capped below levels within budget), its sweep again
 * sharing the CPUs, with a time budget of its own; the k keeps the sweep
 * that certified more (cal_fit_keep_placed).
 * - Empty: beside a one-job compile at nice 0 (calibrate --quick --workers
 *   1, alternated; results/calibrate/busy-placement), placed k=1 certified
 *   nothing 3 of 3, its first levels at 234-315 us against the 100 us
 *   budget (the worker, confined to one CPU, waits behind the compiler
 *   whenever the scheduler puts it there); shared, 0.28-0.40.
 * - Low (below CAL_PLACED_LOW_RHO): beside that compile, twice rho
 *   0.03-0.04, certified at the lowest levels.
 * - Capped (a level within budget above a confirmed bad one): placed, one
 *   worker at 20-50 requests/s read 94-143 us of delay per token against
 *   36-72 shared (results/calibrate/lowrate-placement: every token woken
 *   across CPUs); over budget there, where its levels at rho 0.19-0.72
 *   were within it, a low level capped them all and k=1 certified 0.040
 *   (results/main/same_vm-77e41ea.md). A delay that falls as the load
 *   rises is not a queue's; sharing, it did not.
 * Keeping the larger of two certificates biases it up by their noise; so
 * the placed one is kept unless the shared one certifies more, and a
 * placed k is measured twice only when its own certificate is empty, low
 * or contradicts itself. The certificate entry says which (placement,
 * measured_again_shared), so a run placed as it says
 * (scripts/lib/placement.sh) runs that k that way. */
static void sweep_k_placed(cal_run *r, int i, int64_t tc)
{
    int k = r->o.workers[i], first = r->n_steps;
    r->kept_shared[i] = r->both[i] = 0;
    r->both_rho[i][0] = r->both_rho[i][1] = NAN;
    sweep_k(r, k, cal_opts_deadline_ns(&r->o, i, tc, rb_now_ns(), r->n_planned));
    if (r->o.self_test || !r->sim_apart || r->n_steps == first || r->dead || cal_proc_interrupted())
        return;
    static cal_per_k pk;
    int fitted = cal_fit_per_k(r->steps + first, r->n_steps - first, k, r->o.budget_us, &pk) == 0;
    if (!cal_fit_placed_doubtful(fitted ? &pk : NULL, r->both_why[i], sizeof r->both_why[i]))
        return;
    if (fitted) r->both_rho[i][0] = pk.safe_rho;
    double other = 0;
    for (int j = first; j < r->n_steps; j++)
        other = fmax(other, isfinite(r->steps[j].host_other) ? r->steps[j].host_other : 0);
    progress(r,
             "calibrate: k=%d placed %s (other processes took up to %.0f%% of the host's CPU "
             "time); measured again with every CPU shared\n",
             k, r->both_why[i], 100 * other);
    int mid = r->n_steps;
    r->both[i] = r->kept_shared[i] = 1;
    r->again = 1;
    /* (a start long past: the k's own share of the time, from now) */
    sweep_k(r, k, cal_opts_deadline_ns(&r->o, i, 0, rb_now_ns(), r->n_planned));
    r->again = 0;
    if (r->n_steps > mid &&
        cal_fit_per_k(r->steps + mid, r->n_steps - mid, k, r->o.budget_us, &pk) == 0)
        r->both_rho[i][1] = pk.safe_rho;
    int keep_placed = cal_fit_keep_placed(r->both_rho[i][0], r->both_rho[i][1]);
    int from = keep_placed ? mid : first, to = keep_placed ? r->n_steps : mid;
    for (int j = from; j < to && r->n_superseded < MAX_STEPS; j++) {
        r->steps[j].superseded = 1;
        r->steps[j].used_in_fit = 0;
        r->steps[j].fit_pred_us = NAN;
        r->superseded[r->n_superseded++] = r->steps[j];
    }
    if (keep_placed) {
        r->n_steps = mid;
        r->kept_shared[i] = 0;
    } else {
        memmove(r->steps + first, r->steps + mid, (size_t)(r->n_steps - mid) * sizeof *r->steps);
        r->n_steps -= mid - first;
    }
    progress(r, "calibrate: k=%d kept the %s sweep (placed certified rho %.3f, shared %.3f)\n", k,
             keep_placed ? "placed" : "shared", r->both_rho[i][0], r->both_rho[i][1]);
}

/* Cost c's sweep over every k, into steps [cost_first[c], cost_end[c]). Each
 * planned cost gets its share of the time from its own start, so one that
 * ran over does not cut the next one short; a repeat gets a planned cost's
 * share. Each k its share of that (cal_opts_budget_share); what one leaves
 * over goes to the next, and one that ran over does not take the next one's
 * own share (cal_opts_deadline_ns). */
static void sweep_cost(cal_run *r, int c)
{
    int64_t tc = rb_now_ns();
    r->cur_cost = c;
    r->cost_first[c] = r->n_steps;
    for (int i = 0; i < r->o.n_workers && !cal_proc_interrupted(); i++)
        sweep_k_placed(r, i, tc);
    r->cost_end[c] = r->n_steps;
    r->cur_cost = 0;
}

/* The measurements: each cost's sweep over every k, then the baselines or the cost probe. */
static void run_sweeps(cal_run *r)
{
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < CAL_MAX_K; i++)
            r->bl[b].us[i] = r->bl[b].us_ci[i][0] = r->bl[b].us_ci[i][1] = r->bl[b].m1[i] =
                r->bl[b].m2[i] = NAN;
    plan_costs(r);
    for (int c = 0; c < r->n_costs; c++) {
        if (r->o.self_test)
            progress(r, "calibrate: self-test: injected cost %s:%g us per event\n", r->cost_kind[c],
                     r->cost_us[c]);
        sweep_cost(r, c);
    }
    for (int i = 0; r->o.self_test && i < r->o.n_workers && !cal_proc_interrupted() && !r->dead;
         i++)
        baseline_k(r, i, 0);
    r->n_bl = r->o.self_test;
    if (!r->o.self_test && !r->dead) probe_cost(r);
}

/* The simulator stopped (at the end of the measurements). */
static void stop_simserver(cal_run *r)
{
    if (r->sim_pid > 0) cal_proc_stop(r->sim_pid, 3000000000LL);
    r->sim_pid = 0;
}

/* The self-test's repeats: a planned cost that failed a counted check is
 * swept once more, from arrivals of its own and with a cost's share of the
 * time, and its second sweep decides (selftest_checks). One sweep on a
 * shared host can miss by chance, as one level can (a level over budget is
 * confirmed by a repeat before it counts); a client whose cost or curve is
 * wrong misses twice. The first sweep's rows stay in the output, marked. */
static void measure_failed_again(cal_run *r)
{
    for (int c = 0; c < r->n_planned; c++) {
        cal_check checks[64];
        int n = 0;
        int fails = cost_checks(r, c, checks, 64, &n);
        if (!fails || r->n_costs >= CAL_MAX_COSTS || cal_proc_interrupted() || r->dead) continue;
        int d = r->n_costs++;
        memcpy(r->cost_kind[d], r->cost_kind[c], sizeof r->cost_kind[d]);
        r->cost_us[d] = r->cost_us[c];
        r->repeat_of[d] = c;
        progress(r, "calibrate: self-test: %s:%g failed %d check%s; measured again\n",
                 r->cost_kind[c], r->cost_us[c], fails, fails == 1 ? "" : "s");
        sweep_cost(r, d); /* (its batches' arrival seeds: from d x 5000 on, run_level) */
        for (int i = 0; i < r->o.n_workers; i++)
            cal_fit_per_k(r->steps + r->cost_first[d], r->cost_end[d] - r->cost_first[d],
                          r->o.workers[i], r->o.budget_us, &r->pkc[d][i]);
    }
    /* The repeats are judged against a baseline of their own, measured after
     * them: a first baseline that a bad minute on the host skewed (its busy
     * time 50% over the usual) fails every cost's E[S] check, on both sweeps
     * if they shared it. */
    if (r->n_costs == r->n_planned || cal_proc_interrupted() || r->dead) return;
    progress(r, "calibrate: self-test: the baseline measured again, for the repeats\n");
    for (int i = 0; i < r->o.n_workers && !cal_proc_interrupted() && !r->dead; i++)
        baseline_k(r, i, 1);
    r->n_bl = 2;
}

/* A run that measured nothing: -1 when it did, else main's exit code. */
static int voided(const cal_run *r)
{
    /* A signal first: it reaches the simulators too, so their deaths are
     * its doing, not the run's failure. */
    if (cal_proc_interrupted()) {
        fprintf(stderr, "calibrate: interrupted by signal %d; no certificate written\n",
                cal_proc_interrupted());
        return 128 + cal_proc_interrupted();
    }
    if (r->dead) {
        fprintf(stderr, "calibrate: a simulator died: the run measured nothing; no certificate "
                        "written\n");
        return 1;
    }
    return -1;
}

/* The fits per cost and k, and the cost model; returns how many k have nothing certified. */
static int fit_all(cal_run *r)
{
    int missing = 0;
    for (int c = 1; r->o.self_test && c < r->n_costs; c++)
        for (int i = 0; i < r->o.n_workers; i++)
            cal_fit_per_k(r->steps + r->cost_first[c], r->cost_end[c] - r->cost_first[c],
                          r->o.workers[i], r->o.budget_us, &r->pkc[c][i]);
    for (int i = 0; i < r->o.n_workers; i++) {
        cal_per_k *p = &r->pk[r->npk++];
        if (cal_fit_per_k(r->steps, r->o.self_test ? r->cost_end[0] : r->n_steps, r->o.workers[i],
                          r->o.budget_us, p) != 0) {
            fprintf(stderr, "calibrate: k=%d: no usable level, nothing to certify\n",
                    r->o.workers[i]);
            missing++;
        } else if (!isfinite(p->safe_rho)) {
            fprintf(stderr, "calibrate: k=%d: nothing certified: %s\n", r->o.workers[i],
                    p->cert_note);
            missing++;
        }
    }
    if (cal_cost_fit(r->steps, r->n_steps, &r->cost) == 0)
        for (int i = 0; i < r->npk; i++) {
            /* each k's own busy time against the one-worker model (a scale
             * the certificate's reader refuses unless > 0 is not written) */
            cal_per_k *p = &r->pk[i];
            p->cost_scale = cal_cost_scale(r->steps, r->o.self_test ? r->cost_end[0] : r->n_steps,
                                           p->workers, &r->cost, p->cost_scale_ci);
            if (!(p->cost_scale > 0) || !isfinite(p->cost_scale)) p->cost_scale = NAN;
        }
    for (int i = 0; i < r->npk; i++) {
        int k = r->pk[i].workers;
        snprintf(r->pk[i].placement, sizeof r->pk[i].placement, "%s",
                 k_placed(r, k) ? "apart" : "shared");
        r->pk[i].measured_both = r->both[i];
    }
    memcpy(r->pkc[0], r->pk, sizeof r->pk);
    return missing;
}

/* The certificate's account of the run: when, on what, under which load. */
static void describe_run(const cal_run *r, double load_start, cal_cert_info *info)
{
    memset(info, 0, sizeof *info);
    iso_now(info->created, sizeof info->created);
    rb_host_read(&info->host);
    snprintf(info->version_rhobench, sizeof info->version_rhobench, "%s", RHOBENCH_VERSION);
    snprintf(info->version_libcurl, sizeof info->version_libcurl, "%s",
             curl_version_info(CURLVERSION_NOW)->version);
    snprintf(info->version_libuv, sizeof info->version_libuv, "%s", uv_version_string());
    info->budget_us = r->o.budget_us;
    snprintf(info->model, sizeof info->model, "%s",
             r->o.kingman ? "G/G/1 Kingman ca2=0: d = c + R rho/(1-rho)"
                          : "M/G/1 Pollaczek-Khinchine: d = c + R rho/(1-rho)");
    info->cost = r->cost;
    info->ref_events_per_request = r->npk ? r->pk[0].events_per_request : NAN;
    snprintf(info->mode, sizeof info->mode, "%s", cal_mode_name(r->o.mode));
    info->self_test = r->o.self_test;
    for (int c = 0; r->o.self_test && c < r->n_planned; c++) {
        size_t used = strlen(info->client_cost);
        snprintf(info->client_cost + used, sizeof info->client_cost - used, "%s%.7s:%g",
                 c ? "," : "", r->cost_kind[c], r->cost_us[c]);
    }
    info->server_itl_us = (double)r->o.itl_ns / 1000.0;
    info->input_len = r->o.input_len;
    info->output_len = r->o.output_len;
    info->step_duration_s = (double)cal_opts_step_ns(&r->o) / 1e9;
    info->place_sim_cpu = r->apart ? r->apart_cpu : -1;
    info->place_sim_cpu_idle = r->apart ? r->apart_idle : NAN;
    info->place_sim_nice = CAL_SIM_NICE_APART;
    info->place_shared_from_k = r->apart_n;
    snprintf(info->place_worker_cpus, sizeof info->place_worker_cpus, "%s", r->apart_list);
    info->loadavg_start = load_start;
    info->loadavg_end = loadavg_1min();
    /* the batches the certificate counts (a superseded sweep's are in no fit) */
    info->cpu_latency_us = cal_step_cpu_latency(r->steps, r->n_steps);
    info->batches_retried = r->n_retried;
    info->other_max = CAL_HOST_OTHER_MAX;
    for (int i = 0; i < r->n_steps; i++)
        info->batches_disturbed += r->steps[i].host_other > CAL_HOST_OTHER_MAX;
}

/* The certificate, written unless loadgen would refuse it: 1 when not written, else 0. */
static int write_certificate(const cal_run *r, const cal_cert_info *info)
{
    /* the table: every batch, a placed sweep's that was measured again too */
    static cal_step table[2 * MAX_STEPS];
    int nt = 0;
    for (int i = 0; i < r->n_steps; i++)
        table[nt++] = r->steps[i];
    for (int i = 0; i < r->n_superseded; i++)
        table[nt++] = r->superseded[i];
    char *text = cal_cert_to_json(info, r->pk, r->npk, table, nt);
    if (text && r->o.self_test) text = with_checks(r, text);
    rb_cert chk;
    char why[512];
    if (text && rb_cert_parse(text, strlen(text), &chk, why, sizeof why)) {
        /* never write what loadgen would refuse */
        fprintf(stderr, "calibrate: the fit gave an impossible certificate (%s): not written\n",
                why);
        free(text);
        text = NULL;
    } else if (text) {
        rb_cert_free(&chk);
    }
    int failed = !text || write_text(r->cert_path, text) != 0;
    free(text);
    return failed;
}

/* The summary's last lines: a host that was not quiet, the files, the time. */
static void print_outcome(const cal_run *r, const cal_cert_info *info, int failed, int64_t t0)
{
    if (!r->o.self_test && (info->batches_retried || info->batches_disturbed))
        printf("\nthe host was not quiet: %d batches were measured again because other processes "
               "took more than %.0f%% of its CPU time, and %d kept such a share (retries used "
               "up%s); their work counts as the client's delay here: certify again on a quiet "
               "host\n",
               info->batches_retried, 100.0 * CAL_HOST_OTHER_MAX, info->batches_disturbed,
               r->retry.stops ? ", or given up while the other work was steady" : "");
    printf("\ncertificate: %s\n", failed ? "(not written)" : r->cert_path);
    if (r->o.plot)
        printf("plot: %s/calibration.png (data %s/calibration.dat)\n", r->o.out_dir, r->o.out_dir);
    else
        printf("plot: none (--no-plot)\n");
    printf("elapsed: %.1f s\n", (double)(rb_now_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
    static cal_run run; /* large: steps */
    cal_run *r = &run;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int rc = read_opts(r, argc, argv, cpus);
    if (rc >= 0) return rc;
    if ((rc = resolve_binary(r->o.simserver, "../simserver/simserver", "--simserver", r->simserver,
                             sizeof r->simserver)) ||
        (rc = resolve_binary(r->o.loadgen, "../loadgen/loadgen", "--loadgen", r->loadgen,
                             sizeof r->loadgen)) ||
        (rc = lock_out_dir(r)) || (rc = set_cert_path(r)))
        return rc;
    configure_sweep(r);
    cal_proc_install();
    int64_t t0 = rb_now_ns();
    double load_start = loadavg_1min();
    if (load_start > 0.5 * (double)cpus)
        fprintf(stderr,
                "calibrate: warning: load average %.2f on %ld CPUs: other processes compete "
                "for the CPUs, and their time is measured as the client's\n",
                load_start, cpus);
    if (start_simserver(r) != 0) return 1;
    run_sweeps(r);
    int missing = 0;
    if (!cal_proc_interrupted() && !r->dead) {
        missing = fit_all(r);
        if (r->o.self_test) measure_failed_again(r);
    }
    stop_simserver(r);
    if ((rc = voided(r)) >= 0) return rc;

    cal_cert_info info;
    describe_run(r, load_start, &info);
    int failed = write_certificate(r, &info);
    write_plot(r);
    print_summary(r, &info);
    print_outcome(r, &info, failed, t0);
    int st = 0;
    if (r->o.self_test) st = self_test(r);
    fflush(stdout);
    /* a self-test's verdict is its checks: with the injected cost nothing
     * need be within the budget, so an empty certificate is no failure */
    if (r->o.self_test) return failed || st ? 1 : 0;
    return failed || missing ? 1 : 0;
}
