/* cal_opts: calibrate's options, their defaults and the command-line parser,
 * from one alphabetical options table (common/rb_opts) that also gives
 * --help. Pure: no I/O, so every validation rule is testable.
 * Single-threaded. */
#ifndef CAL_OPTS_H
#define CAL_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "rb_opts.h"

#define CAL_MAX_K 16
#define CAL_MAX_EXTRA 16

typedef enum { CAL_MODE_QUICK = 0, CAL_MODE_DEFAULT = 1, CAL_MODE_THOROUGH = 2 } cal_mode;

typedef struct cal_opts {
    int workers[CAL_MAX_K]; /* worker counts to calibrate */
    int n_workers;
    int workers_given;
    double budget_us;
    char out_dir[1024]; /* --out-dir, or the directory of --out */
    int out_dir_given;
    char out[1024]; /* certificate path; "" = <out_dir>/certificate.json */
    cal_mode mode;
    int self_test;
    char cost_kind[8]; /* "fixed" or "exp": the injected client cost */
    double cost_us;
    int cost_given;    /* --self-test-cost: that one alone; else fixed and exp of cost_us in turn */
    int64_t step_ns;   /* 0: the mode's default */
    int64_t budget_ns; /* 0: the mode's default time budget of the sweeps */
    int max_steps;     /* load levels per k; 0: the mode's default */
    int batches;       /* batches per level; 0: the mode's default */
    double start_rate; /* requests/s per worker at the first step */
    int start_rate_given;
    double max_rate;     /* requests/s, all workers */
    double lag_bound_ms; /* 0: 1 ms, or with --self-test max(1 ms, 25 x the cost) */
    int64_t itl_ns;      /* the simulator's inter-token latency */
    int64_t itl_sd_ns;   /* and its jitter */
    int itl_given;       /* either was set on the command line */
    int rt_priority;     /* loadgen --realtime-priority for the steps; 0: normal scheduling */
    int rt_given;
    int input_len, output_len;
    int input_len_given, output_len_given;
    int64_t ttft_ns,
        ttft_sd_ns; /* the simulator's time to first token and its jitter (0: its own) */
    int budget_given;
    uint64_t seed;
    char simserver[1024];                /* "" = ../simserver/simserver beside calibrate */
    char loadgen[1024];                  /* "" = ../loadgen/loadgen beside calibrate */
    const char *sim_args[CAL_MAX_EXTRA]; /* --simserver-arg, passed through */
    int n_sim_args;
    int kingman;     /* fit Kingman's ca2 = 0 (constant-rate arrivals) */
    int shared_cpus; /* no placement apart (cal_run.apart) */
    int plot;        /* run gnuplot when present */
    int quiet;
} cal_opts;

void cal_opts_defaults(cal_opts *o, int online_cpus);

/* Parses argv[0..argc) (no program name). Returns 0, 1 for --help, 2 for
 * --version, or -EINVAL with err naming the flag and value
 * ("--budget-us: must be > 0, got -5"). argv must outlive *o. */
int cal_opts_parse(cal_opts *o, int argc, char **argv, char *err, size_t errlen);

/* The batch duration the mode and flags give. */
int64_t cal_opts_step_ns(const cal_opts *o);
/* Batches per load level: quick 3 (quick self-test 2), default 4, thorough 5, or
 * --batches. */
int cal_opts_batches(const cal_opts *o);
/* The end of the i-th worker count's sweep, as a fraction of the time budget
 * from the start: a first count of 1 ends at 0.6 (one worker must reach the
 * knee; the others share the rest equally), otherwise equal shares; the last
 * ends at 1. */
double cal_opts_budget_share(const cal_opts *o, int i);
/* The deadline of worker count i's sweep, which starts at now_ns within a
 * cost's sweeps that started at cost_start_ns, each cost with budget_ns / n_costs:
 * the cumulative share's end (what an earlier k left over is this one's), but
 * never less than its own share from now (an earlier k that ran over, its
 * batches measured again on a busy host, does not starve this one: a quick
 * k=2 beside a neighbour got 3 levels up to rho 0.09, its crossing unmeasured). */
int64_t cal_opts_deadline_ns(const cal_opts *o, int i, int64_t cost_start_ns, int64_t now_ns,
                             int n_costs);
/* The time budget of all sweeps together: quick 50 s (with --self-test
 * 48 s, its two injected costs 24 s each), default 150 s, thorough 480 s (the whole run adds the
 * simulator's start, the probe, the fit and the plot, a few seconds). */
int64_t cal_opts_budget_ns(const cal_opts *o);
const char *cal_mode_name(cal_mode m);

/* Parses "1,2,4" into out[0..*n) (each 1..64, at most max). 0 or -EINVAL. */
int cal_parse_int_list(const char *s, int *out, int max, int *n);

/* The options table, alphabetical. */
extern const rb_opts_spec cal_opts_spec;

/* --help's text, generated from the table (built once). */
const char *cal_usage(void);

#endif
