/* cal_opts: calibrate's defaults and command-line parser. */
#include "cal_opts.h"

#include <unistd.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_units.h"

void cal_opts_defaults(cal_opts *o, int online_cpus)
{
    *o = (cal_opts){
        .budget_us = 100.0,
        .mode = CAL_MODE_DEFAULT,
        .cost_kind = "fixed",
        .cost_us = 200.0,
        .start_rate = 20.0,
        .max_rate = 200000.0,
        .itl_ns = 4000000,    /* 4 ms: each event its own read, many streams in flight */
        .itl_sd_ns = 2000000, /* jitter, so the superposed event stream is near Poisson */
        .input_len = 16,
        .output_len = 16,
        .seed = 1,
        .plot = 1,
    };
    o->workers[0] = 1;
    o->n_workers = 1;
    if (online_cpus > 1 && online_cpus <= 64) o->workers[o->n_workers++] = online_cpus;
}

const char *cal_mode_name(cal_mode m)
{
    return m == CAL_MODE_QUICK ? "quick" : m == CAL_MODE_THOROUGH ? "thorough" : "default";
}

int64_t cal_opts_step_ns(const cal_opts *o)
{
    if (o->step_ns > 0) return o->step_ns;
    /* The self-test holds each step against the curve on its own, so its
     * steps average over more busy periods. */
    if (o->self_test)
        return o->mode == CAL_MODE_QUICK      ? 1500000000LL
               : o->mode == CAL_MODE_THOROUGH ? 3000000000LL
                                              : 2000000000LL;
    return o->mode == CAL_MODE_QUICK      ? 1000000000LL
           : o->mode == CAL_MODE_THOROUGH ? 3000000000LL
                                          : 1500000000LL;
}

int cal_opts_batches(const cal_opts *o)
{
    if (o->batches > 0) return o->batches;
    return o->mode == CAL_MODE_QUICK ? 3 : o->mode == CAL_MODE_THOROUGH ? 5 : 4;
}

int64_t cal_opts_budget_ns(const cal_opts *o)
{
    if (o->budget_ns > 0) return o->budget_ns;
    /* Quick: five levels of three 1 s batches (~4.5 s a level) and a repeat
     * or two for one worker, fewer for the others, the whole run within a
     * minute; the self-test, one worker count with 1.5 s batches, and its
     * baseline after it. */
    if (o->self_test && o->mode == CAL_MODE_QUICK) return 40000000000LL;
    return o->mode == CAL_MODE_QUICK      ? 50000000000LL
           : o->mode == CAL_MODE_THOROUGH ? 480000000000LL
                                          : 150000000000LL;
}

double cal_opts_budget_share(const cal_opts *o, int i)
{
    int n = o->n_workers;
    if (n <= 1) return 1.0;
    if (i >= n - 1) return 1.0;
    if (o->workers[0] != 1) return (double)(i + 1) / n;
    /* one worker first, with 60%: it must reach the knee (rho >= 0.7) */
    return 0.6 + 0.4 * (double)i / (n - 1);
}

int cal_parse_int_list(const char *s, int *out, int max, int *n)
{
    *n = 0;
    const char *p = s;
    if (!*p) return -EINVAL;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > 64 || *n >= max || (*end && *end != ','))
            return -EINVAL;
        for (int i = 0; i < *n; i++)
            if (out[i] == (int)v) return -EINVAL; /* a duplicate would calibrate one k twice */
        out[(*n)++] = (int)v;
        p = *end ? end + 1 : end;
        if (*end == ',' && !*p) return -EINVAL;
    }
    return 0;
}

const char *cal_usage(void)
{
    return "usage: calibrate [options]\n"
           "Measures the load generator's own delay against its utilisation on this host in\n"
           "levels of repeated batches, fits d = c + R rho/(1 - rho) (M/G/1, Pollaczek-\n"
           "Khinchine) with bootstrap intervals, and certifies a safe utilisation per\n"
           "worker count, the client's cost model and a safe rate for the reference\n"
           "workload (the calibration's own).\n"
           "\n"
           "  --workers LIST        worker counts to calibrate, e.g. 1,2 (default: 1 and the\n"
           "                        online CPUs; --self-test: 1)\n"
           "  --budget-us US        client-delay budget that defines 'safe' (default 100)\n"
           "  --out FILE            certificate path (default OUT_DIR/certificate.json;\n"
           "                        --self-test: OUT_DIR/selftest-certificate.json)\n"
           "  --out-dir DIR         where the run's files go (default: beside --out; one of\n"
           "                        the two is needed)\n"
           "  --quick | --thorough  ~1 min (self-test ~45 s), or a slower and more precise\n"
           "                        run (default ~3 min)\n"
           "  --self-test           inject a known client cost and check the fit recovers it\n"
           "  --self-test-cost K:US the injected cost per event, fixed:US or exp:US\n"
           "                        (default fixed:200)\n"
           "  --step-duration DUR   length of one batch (default 1.5s; quick 1s; thorough 3s;\n"
           "                        with --self-test 2s, 1.5s, 3s)\n"
           "  --batches N           batches per load level (default 4; quick 3; thorough 5)\n"
           "  --max-steps N         load levels per worker count at most\n"
           "  --time-budget DUR     time for all sweeps together (default 150s; quick 50s;\n"
           "                        thorough 8m; quick self-test 40s); one worker first gets\n"
           "                        60%, the others share the rest; 3 levels each at least\n"
           "  --start-rate R        first offered rate, requests/s per worker (default 20)\n"
           "  --max-rate R          highest offered rate, requests/s in all (default 200000)\n"
           "  --lag-bound DUR       a step whose schedule lag p99 passes this is saturated\n"
           "                        (default 1ms; --self-test: 25 x the cost, at least 1ms)\n"
           "  --realtime-priority P run loadgen's workers SCHED_FIFO at P (0: off; default\n"
           "                        off, --self-test as root: 10)\n"
           "  --inter-token-latency DUR, --inter-token-latency-std-dev DUR\n"
           "                        the simulator's token spacing (default 4ms, 2ms;\n"
           "                        --self-test: 16ms, 16ms)\n"
           "  --random-input-len N, --random-output-len N   (default 16, 16)\n"
           "  --seed N              arrival seed of the first step (default 1)\n"
           "  --kingman             offer constant-rate arrivals (loadgen --burstiness inf)\n"
           "                        and fit Kingman's G/G/1 with ca2=0 instead of PK\n"
           "  --simserver PATH, --loadgen PATH   the binaries (default: beside calibrate)\n"
           "  --simserver-arg ARG   pass ARG to simserver (repeatable)\n"
           "  --no-plot             do not run gnuplot (the .dat and .gp are still written)\n"
           "  --quiet               no progress lines\n"
           "  --help, --version\n"
           "Exit: 0 ok, 1 run failed (or self-test FAIL), 2 bad usage.\n";
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(err, errlen, __VA_ARGS__);                                                        \
        return -EINVAL;                                                                            \
    } while (0)

static int copy_str(char *dst, size_t n, const char *src)
{
    return snprintf(dst, n, "%s", src) < (int)n ? 0 : -1;
}

int cal_opts_parse(cal_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return 1;
        if (!strcmp(a, "--version")) return 2;
        if (!strcmp(a, "--quick")) {
            o->mode = CAL_MODE_QUICK;
            continue;
        }
        if (!strcmp(a, "--thorough")) {
            o->mode = CAL_MODE_THOROUGH;
            continue;
        }
        if (!strcmp(a, "--self-test")) {
            o->self_test = 1;
            continue;
        }
        if (!strcmp(a, "--kingman")) {
            o->kingman = 1;
            continue;
        }
        if (!strcmp(a, "--no-plot")) {
            o->plot = 0;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
            continue;
        }
        /* every other flag takes a value: "--flag V" or "--flag=V" */
        char name[64];
        const char *v;
        const char *eq = strchr(a, '=');
        if (eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            v = eq + 1;
        } else {
            if (copy_str(name, sizeof name, a)) FAIL("%.40s...: unknown option", a);
            if (strncmp(a, "--", 2)) FAIL("%s: unexpected argument", a);
            if (i + 1 >= argc) FAIL("%s: needs a value", a);
            v = argv[++i];
        }
        double d;
        int64_t n;
        if (!strcmp(name, "--workers")) {
            if (cal_parse_int_list(v, o->workers, CAL_MAX_K, &o->n_workers))
                FAIL("--workers: want a comma-separated list of distinct counts 1..64, got '%s'",
                     v);
            o->workers_given = 1;
        } else if (!strcmp(name, "--budget-us")) {
            if (rb_parse_double(v, 0.0, 1e9, &d) || !(d > 0))
                FAIL("--budget-us: must be > 0 microseconds, got '%s'", v);
            o->budget_us = d;
        } else if (!strcmp(name, "--out")) {
            if (!*v || copy_str(o->out, sizeof o->out, v))
                FAIL("--out: want a file path, got '%s'", v);
        } else if (!strcmp(name, "--out-dir")) {
            if (!*v || copy_str(o->out_dir, sizeof o->out_dir, v))
                FAIL("--out-dir: want a directory, got '%s'", v);
            o->out_dir_given = 1;
        } else if (!strcmp(name, "--self-test-cost")) {
            const char *colon = strchr(v, ':');
            size_t kl = colon ? (size_t)(colon - v) : 0;
            if (!colon ||
                !((kl == 5 && !strncmp(v, "fixed", 5)) || (kl == 3 && !strncmp(v, "exp", 3))) ||
                rb_parse_double(colon + 1, 0.0, 1e6, &d) || !(d >= 10))
                FAIL("--self-test-cost: want fixed:US or exp:US with US >= 10, got '%s'", v);
            memcpy(o->cost_kind, v, kl);
            o->cost_kind[kl] = '\0';
            o->cost_us = d;
            o->self_test = 1;
        } else if (!strcmp(name, "--step-duration")) {
            if (rb_parse_duration_ns(v, &n) || n < 200000000LL || n > 600000000000LL)
                FAIL("--step-duration: want a duration from 200ms to 10m, got '%s'", v);
            o->step_ns = n;
        } else if (!strcmp(name, "--time-budget")) {
            if (rb_parse_duration_ns(v, &n) || n < 1000000000LL || n > 86400000000000LL)
                FAIL("--time-budget: want a duration from 1s to 24h, got '%s'", v);
            o->budget_ns = n;
        } else if (!strcmp(name, "--batches")) {
            if (rb_parse_i64(v, 1, 20, &n))
                FAIL("--batches: want a whole number 1..20, got '%s'", v);
            o->batches = (int)n;
        } else if (!strcmp(name, "--max-steps")) {
            if (rb_parse_i64(v, 1, 100, &n))
                FAIL("--max-steps: want a whole number 1..100, got '%s'", v);
            o->max_steps = (int)n;
        } else if (!strcmp(name, "--start-rate")) {
            if (rb_parse_double(v, 0.0, 1e7, &d) || !(d > 0))
                FAIL("--start-rate: must be > 0 requests/s, got '%s'", v);
            o->start_rate = d;
        } else if (!strcmp(name, "--max-rate")) {
            if (rb_parse_double(v, 0.0, 1e8, &d) || !(d > 0))
                FAIL("--max-rate: must be > 0 requests/s, got '%s'", v);
            o->max_rate = d;
        } else if (!strcmp(name, "--lag-bound")) {
            if (rb_parse_duration_ns(v, &n) || n <= 0)
                FAIL("--lag-bound: want a positive duration, got '%s'", v);
            o->lag_bound_ms = (double)n / 1e6;
        } else if (!strcmp(name, "--inter-token-latency")) {
            if (rb_parse_duration_ns(v, &n) || n > 10000000000LL)
                FAIL("--inter-token-latency: want a duration up to 10s, got '%s'", v);
            o->itl_ns = n;
            o->itl_given = 1;
        } else if (!strcmp(name, "--inter-token-latency-std-dev")) {
            if (rb_parse_duration_ns(v, &n) || n > 10000000000LL)
                FAIL("--inter-token-latency-std-dev: want a duration up to 10s, got '%s'", v);
            o->itl_sd_ns = n;
            o->itl_given = 1;
        } else if (!strcmp(name, "--realtime-priority")) {
            if (rb_parse_i64(v, 0, 99, &n))
                FAIL("--realtime-priority: want 0 (off) to 99, got '%s'", v);
            o->rt_priority = (int)n;
            o->rt_given = 1;
        } else if (!strcmp(name, "--random-input-len")) {
            if (rb_parse_i64(v, 1, 100000, &n))
                FAIL("--random-input-len: want 1..100000 tokens, got '%s'", v);
            o->input_len = (int)n;
        } else if (!strcmp(name, "--random-output-len")) {
            if (rb_parse_i64(v, 1, 100000, &n))
                FAIL("--random-output-len: want 1..100000 tokens, got '%s'", v);
            o->output_len = (int)n;
        } else if (!strcmp(name, "--seed")) {
            if (rb_parse_i64(v, 0, INT64_MAX, &n))
                FAIL("--seed: want a whole number >= 0, got '%s'", v);
            o->seed = (uint64_t)n;
        } else if (!strcmp(name, "--simserver")) {
            if (!*v || copy_str(o->simserver, sizeof o->simserver, v))
                FAIL("--simserver: want a path, got '%s'", v);
        } else if (!strcmp(name, "--loadgen")) {
            if (!*v || copy_str(o->loadgen, sizeof o->loadgen, v))
                FAIL("--loadgen: want a path, got '%s'", v);
        } else if (!strcmp(name, "--simserver-arg")) {
            if (o->n_sim_args >= CAL_MAX_EXTRA)
                FAIL("--simserver-arg: at most %d, got one more: '%s'", CAL_MAX_EXTRA, v);
            o->sim_args[o->n_sim_args++] = v;
        } else {
            FAIL("%s: unknown option (see --help)", name);
        }
    }
    /* Nothing goes into the current directory unless asked: the run's files
     * go into --out-dir, or beside the certificate --out names. */
    if (!o->out_dir_given) {
        if (!o->out[0])
            FAIL("say where the results go: --out-dir DIR, or --out FILE (the other files "
                 "then go beside it)");
        const char *slash = strrchr(o->out, '/');
        if (!slash)
            snprintf(o->out_dir, sizeof o->out_dir, ".");
        else if (slash == o->out)
            snprintf(o->out_dir, sizeof o->out_dir, "/");
        else
            snprintf(o->out_dir, sizeof o->out_dir, "%.*s", (int)(slash - o->out), o->out);
    }
    if (o->lag_bound_ms == 0) {
        /* The dispatch timer waits in the same queue as the events, so its lag
         * is of the order of the service time: with an injected cost of
         * hundreds of microseconds a lag of 1 ms is a busy client, not yet an
         * unstable one. */
        o->lag_bound_ms = 1.0;
        if (o->self_test && 25.0 * o->cost_us / 1000.0 > o->lag_bound_ms)
            o->lag_bound_ms = 25.0 * o->cost_us / 1000.0;
    }
    if (o->self_test && !o->itl_given) {
        /* Slow, highly variable token gaps: each request is then a long
         * stream, dozens are in flight, and the superposition of that many
         * independent streams is close to the Poisson arrivals PK assumes
         * (Palm-Khintchine). With 4 +- 2 ms gaps and a handful of streams the
         * event stream is too regular, and PK overestimates at some steps and
         * underestimates at others. */
        o->itl_ns = 16000000;
        o->itl_sd_ns = 16000000;
    }
    if (o->self_test && !o->rt_given && geteuid() == 0) {
        /* The self-test checks the fit against a known cost: other processes'
         * time must not land in the client's queue. Real-time priority keeps
         * the worker's wake-ups on time (loadgen warns and carries on when
         * the kernel refuses it). A host certificate is measured without it,
         * as users run loadgen. */
        o->rt_priority = 10;
    }
    if (o->self_test && !o->workers_given) {
        /* On a small host a second worker competes with the simulator for the
         * CPUs, which the self-test is not about. */
        o->workers[0] = 1;
        o->n_workers = 1;
    }
    return 0;
}
