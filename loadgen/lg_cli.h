/* lg_cli: the options of a loadgen run and the command-line parser that fills
 * them, from one options table (lg_cli_spec on common/rb_opts). Pure: no I/O
 * (the config file is read by the caller and handed in as flags), so every
 * validation rule is unit-testable. Defaults: the table's, and in
 * lg_opts_defaults those of the flags with parsers of their own.
 * Single-threaded; call before forking workers. */
#ifndef LG_CLI_H
#define LG_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "lg_dataset.h"
#include "lg_sched.h"
#include "lg_sweep.h"
#include "rb_opts.h"

#define LG_MAX_HEADERS 32
#define LG_MAX_STAGES 64
#define LG_MAX_PERCENTILES 16
#define LG_MAX_LORA 16           /* --lora-modules names (lg_lora.h) */
#define LG_LORA_NAME 128         /* a name's bytes, with its NUL */
#define LG_MAX_SERVER_METRICS 16 /* --server-metric NAME (lg_srvm.h's LG_SRVM_MAX_EXTRA) */

typedef enum { LG_DS_RANDOM, LG_DS_PREFIX, LG_DS_SHAREGPT, LG_DS_TRACE, LG_DS_CUSTOM } lg_ds_kind;
typedef enum { LG_STAMPS_AUTO, LG_STAMPS_ON, LG_STAMPS_OFF } lg_stamps_mode;
typedef enum { LG_COST_NONE, LG_COST_FIXED, LG_COST_EXP } lg_cost_kind;
/* Where a token's receive time comes from (--receive-clock). */
typedef enum { LG_RXC_KERNEL, LG_RXC_USER, LG_RXC_WIRE } lg_rxc_mode;

/* The metrics a percentile table can show (--percentile-metrics). */
enum { LG_M_TTFT, LG_M_TPOT, LG_M_ITL, LG_M_E2EL, LG_M_NTPOT, LG_N_METRICS };
extern const char *const lg_metric_names[LG_N_METRICS];

typedef struct lg_goodput {
    /* SLO thresholds in ns; 0 means no constraint on that metric. */
    int64_t slo_ns[LG_N_METRICS];
    int enabled;
} lg_goodput;

typedef struct lg_opts {
    /* target */
    char base_url[512];
    char endpoint[128];
    char model[256];
    char tokenizer[256];           /* --tokenizer: only reported (tokenizer_id) */
    char metadata[1024];           /* --metadata KEY=VALUE items, one a line: into the report */
    char *headers[LG_MAX_HEADERS]; /* "K: V" or "K=V", pointers into argv (not owned) */
    int n_headers;
    int allow_remote;
    char ca_cert[1024]; /* --ca-cert: https: verify the server against this PEM file */
    int insecure;       /* --insecure: https: no certificate check (the report says so) */
    char client_cert[1024], client_key[1024]; /* --cert, --key: mutual TLS */
    /* the server's own metrics (lg_scrape.h): a URL, "target" (the base
     * URL's /metrics), "off" or "" (none) */
    char server_metrics[512];
    int64_t server_metrics_interval_ns;
    const char *server_metric[LG_MAX_SERVER_METRICS]; /* pointers into argv (not owned) */
    int n_server_metric;
    /* the request body's additions (lg_extra.c): --extra-body JSON (into argv),
     * vLLM's sampling flags (each only when given), --served-model-name; all
     * rendered by lg_cli_finish into extra_members, the body's extra
     * "key":value members joined by ',' ("" when none) */
    const char *extra_body;
    double temperature, top_p, min_p;
    int64_t top_k;
    int temperature_given, top_p_given, min_p_given, top_k_given;
    char served_model_name[256];
    char extra_members[16384];
    /* Inference Perf's metrics.prometheus (lg_promql.h): "" none */
    char prometheus_url[512];
    int64_t prometheus_scrape_interval_ns;
    /* process model */
    int num_workers; /* 0: one in-process worker */
    int max_conn_per_worker;
    int nice;        /* worker priority (setpriority); 0: unchanged */
    int rt_priority; /* SCHED_FIFO priority of the workers; 0: off */
    /* --cpu-latency-us: the CPU latency QoS (us) each worker holds for its
     * run (rb_cpu_latency); -1: off */
    int cpu_latency_us;
    /* --worker-cpus: the CPUs the workers may run on, as a list ("0,2-3";
     * "": wherever the scheduler puts them) */
    char worker_cpus[64];
    /* load */
    double request_rate; /* INFINITY allowed */
    int rate_given;
    int ramp_up; /* --ramp-up-strategy: LG_RAMP_LINEAR or _EXPONENTIAL (lg_sched.h); 0 none */
    double ramp_up_start_rps, ramp_up_end_rps; /* 0: not given */
    double burstiness;
    int64_t num_prompts; /* 0: bounded by duration instead */
    int num_prompts_given;
    int64_t duration_ns; /* 0: bounded by num_prompts */
    lg_stage stages[LG_MAX_STAGES];
    int n_stages; /* from --stage, or built by the sweep */
    int64_t stage_pause_ns;
    lg_sweep_kind sweep;
    int sweep_stages;
    double sweep_max_rate;
    double sweep_min_rate; /* geometric start (0: max / 2^(N-1)) */
    int64_t stage_duration_ns;
    int sweep_until_saturation;
    /* --sweep-probe: Inference Perf's saturation probe places the sweep's
     * stages (lg_probe.h) */
    int sweep_probe;
    int sweep_probe_given; /* a --sweep-probe-* flag was given: the probe is on */
    int64_t sweep_probe_requests;
    int64_t sweep_probe_timeout_ns;
    double sweep_probe_percentile;
    struct lg_probe *probe;             /* the probe's own run: its sampler (else NULL) */
    const struct lg_probe *probe_found; /* the sweep after it: the probe's findings */
    double saturation_lag_ms;
    int max_concurrency; /* 0: none */
    uint64_t seed;
    /* data */
    lg_ds_kind dataset;
    char dataset_path[1024];
    double trace_speedup;
    int32_t random_input_len, random_output_len;
    double random_range_ratio;
    lg_len_dist random_len_dist;
    lg_len_ip input_dist, output_dist; /* --input/output-distribution (Inference Perf's) */
    int32_t sharegpt_output_len;       /* --sharegpt-output-len (0: each reply's length) */
    int sharegpt_in_order;             /* --sharegpt-in-order: the file's first entries */
    int sharegpt_no_filter;            /* --sharegpt-no-filter: vLLM's length filters off */
    int32_t custom_output_len;         /* --custom-output-len (-1: each line's output_tokens) */
    int disable_shuffle;               /* --disable-shuffle: custom and sharegpt in file order */
    int32_t random_prefix_len;         /* --random-prefix-len: one fixed prefix per prompt */
    int num_warmups;                   /* --num-warmups: copies of the first request first */
    int32_t prefix_groups, prefix_prompts_per_group, prefix_system_len, prefix_question_len;
    int prefix_multi_turn; /* --prefix-multi-turn: Inference Perf's chat sessions (lg_session.h) */
    int64_t prompt_pool_size; /* prompts in the pool; 0 until lg_cli_finish sizes it */
    int prompt_pool_given;    /* --prompt-pool-size: the user chose (repeats are asked for) */
    int prompt_per_request;   /* random dataset, no pool: each prompt made when sent
                                 (lg_random_gen; a long or open-ended run) */
    int64_t planned_arrivals; /* lg_cli_finish's estimate of the run's requests (-1: unknown) */
    int token_ids;      /* --token-ids: random/shared-prefix prompts sent as "prompt": [ids] */
    int32_t vocab_size; /* --vocab-size: the ids' range [0, V) */
    int ignore_eos; /* 1 on, 0 off; -1 (the default): on for the random dataset, as vLLM sets it */
    int stream;
    int chat; /* endpoint is chat/completions */
    lg_stamps_mode sim_stamps;
    lg_cost_kind client_cost;
    double client_cost_us;
    lg_rxc_mode receive_clock;
    /* --batch-tick: the worker sleeps to the next multiple of this many ns
     * from the send window's start, then sends everything due and reads
     * everything ready, instead of waking on each socket and each intended
     * time (0: off) */
    int64_t batch_tick_ns;
    int receive_clock_given;          /* --receive-clock was given (wire is then a must) */
    char receive_clock_fallback[256]; /* why wire became kernel ("": it did not) */
    char capture_iface[64];           /* the wire clock's interface (lg_capture_resolve) */
    char capture_filter[320];         /* worker 0's BPF filter (the others: their own ports) */
    int capture_buffer_kib;           /* --capture-buffer: each worker's capture ring */
    /* the client's own delay per token that the verdict accepts */
    double bias_budget_mean_us, bias_budget_p99_us;
    /* limits */
    int64_t request_timeout_ns;
    int64_t drain_timeout_ns;
    /* report */
    double percentiles[LG_MAX_PERCENTILES];
    int n_percentiles;
    unsigned percentile_metrics; /* bit per LG_M_* */
    lg_goodput goodput;
    int save_result;
    char result_dir[1024];
    char result_filename[512];
    int save_detailed;
    /* --save-token-times: each record lists its content tokens' arrival
     * times (lg_record.h), the first token_times_cap of them per request */
    int save_token_times;
    int64_t token_times_cap;
    int token_times_cap_given;
    char certificate[1024];
    int force;
    int quiet;
    int mpi;           /* --mpi: one worker per MPI rank (lg_mpi.h) */
    int mpi_salvage;   /* --mpi-salvage N: merge an --mpi run's snapshots (0: no) */
    int progress;      /* -1 auto (isatty), 0 off, 1 on */
    char config[1024]; /* --config FILE, read by the caller */

    unsigned report_formats; /* --report-format: LG_EXPORT_* bits (0: rhobench's only) */
    int dry_run;             /* --dry-run: print the plan, send nothing */
    /* --closed-stage C:N: closed-loop stages in turn (stages[i].max_requests = N) */
    int stage_conc[LG_MAX_STAGES]; /* C of closed stage i */
    int n_closed_stages;           /* all the stages are closed (0: none) */
    /* --lora-modules: request i's model drawn from these by its share
     * (lg_lora.h); n_lora 0: every request carries the one model */
    char lora_names[LG_MAX_LORA][LG_LORA_NAME];
    double lora_split[LG_MAX_LORA];
    int n_lora;
    int lora_even; /* the list is bare names, split evenly (more may join it) */
} lg_opts;

void lg_opts_defaults(lg_opts *o, int online_cpus);

/* Parses argv[0..argc) (no program name) into *o, which must hold defaults
 * (or earlier flags: a config file's flags are parsed first, then the
 * command line's, which override). Returns 0, 1 when --help or --version
 * was asked (msg holds nothing), or -EINVAL with err naming the flag and the
 * value ("--request-rate: must be > 0, got -5"). argv must outlive *o. */
int lg_cli_parse(lg_opts *o, int argc, char **argv, char *err, size_t errlen);

/* Checks the options as a whole after all flags are in (conflicts, the
 * sweep built into stages, the base URL's host). Returns 0 or -EINVAL. */
int lg_cli_finish(lg_opts *o, char *err, size_t errlen);

/* An upper estimate of the requests the stages will make: a stage's
 * --num-prompts bound, else rate x duration plus six standard deviations of
 * the count of a gamma process of that shape; -1 when unbounded or unknown
 * (closed loop bounded by time, a trace). */
int64_t lg_cli_planned_arrivals(const lg_opts *o);

/* The URL the run scrapes the server's metrics from into url[0..cap): "" when
 * --server-metrics is off (the default), the base URL's origin with /metrics
 * for "target", else its URL. */
void lg_server_metrics_url(const lg_opts *o, char *url, size_t cap);

/* 1 if the URL's host is a loopback address (127.0.0.0/8, ::1, localhost). */
int lg_url_is_loopback(const char *url);

/* The options table (rb_opts), alphabetical: every flag, its value, bounds,
 * default and help. */
extern const rb_opts_spec lg_cli_spec;

/* The full --help text, generated from the table (built once). */
const char *lg_cli_usage(void);

/* "--goodput ttft:MS ..." parsing of one "name:ms" item into *g. */
int lg_goodput_parse_item(lg_goodput *g, const char *item, char *err, size_t errlen);

#endif
