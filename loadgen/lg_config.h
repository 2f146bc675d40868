/* lg_config: a JSON config file with Inference Perf's key names, as
 * lg_cfgfile hands it on (lg_cfgfile.h maps Inference Perf's schema onto
 * these keys), turned into the equivalent command-line flags, so that one
 * parser (the CLI's) validates everything and flags given on the command
 * line simply come after and override. Pure: no I/O.
 *
 * A key that is one flag's is that flag's entry's key field in loadgen's
 * options table (lg_cli.c; `grep -n '.key =' loadgen/lg_cli.c` lists them:
 * server.base_url, load.seed, data.shared_prefix.num_groups, ...). Its value is
 * checked for the entry's type and bounds (so a mistake is told by its key
 * path; load.num_workers must be >= 1) and passed on: durations (D) are
 * numbers of seconds, as in Inference Perf, or strings ("500ms", "2s"; a
 * string without a unit is seconds too, as on the command line), passed on
 * with a unit ("10s"). Adding a flag with its config key is one entry of
 * the table. The keys whose values lg_config shapes itself:
 *   api.type "completion" | "chat"    --endpoint /v1/completions | /v1/chat/completions
 *   api.streaming false | true        --no-stream | --stream
 *   load.type "constant"              --burstiness inf
 *   load.type "poisson"               --burstiness 1
 *   load.type "concurrent"            (closed loop: needs load.concurrency)
 *   load.stages[i] {rate, duration}   --stage RATE:DURATION  (one per stage, "100:10s")
 *   load.lora_traffic_split [{name, split}, ...]
 *                                     --lora-modules NAME=SPLIT,...  (splits >= 0 summing to
 *                                     1 within 1e-6, names non-empty without ',' or '=')
 *   load.sweep.timeout, load.sweep.saturation_percentile
 *                                     refused with a message: Inference Perf's saturation
 *                                     probe; here --sweep-until-saturation finds the knee
 *   data.type "random" | "shared_prefix" | "sharegpt" | "trace"
 *                                     --dataset-name random | prefix | sharegpt | trace
 *   report.request_lifecycle.percentiles [50, 90, 99]
 *                                     --metric-percentiles 50,90,99
 *   report.goodput.constraints {"ttft": 200, "tpot": 50} (ttft, tpot, itl,
 *     e2el, ntpot, and e2e = e2el)    --goodput ttft:200 --goodput tpot:50
 *     in milliseconds, --goodput's unit: a --config file gives Inference
 *     Perf's seconds, which lg_cfgfile turns into milliseconds first.
 * Flags come out section by section in a fixed order (server, api, load,
 * data, report), and within one in Inference Perf's order of its keys.
 * Unknown keys, keys given twice, and values of the wrong type are errors
 * (a typo must not pass silently). */
#ifndef LG_CONFIG_H
#define LG_CONFIG_H

#include <stddef.h>

typedef struct lg_args {
    char **argv; /* "--flag", "value", ... each malloc'd; argv[argc] is NULL */
    int argc;
} lg_args;

/* Appends a copy of s (argv[argc] stays NULL): the one builder of the
 * argument lists that config files and vLLM's flags become. argv is sized
 * to argc + 1 each time (the lists are a few dozen words; it holds no
 * capacity that another realloc of argv could make wrong). Returns 0, or
 * -ENOMEM with a unchanged. */
int lg_args_add(lg_args *a, const char *s);

struct cJSON;
/* The one form of a config file's refusal, for lg_config and lg_cfgfile:
 * writes "config: PATH: WHAT, got VALUE" (VALUE as JSON, cut at 60
 * characters; without ", got" when v is NULL) into err and returns -EINVAL. */
int lg_config_refuse(char *err, size_t errlen, const char *path, const struct cJSON *v,
                     const char *what);

/* Returns 0, or -EINVAL with err naming the key and the value
 * ("config: load.stages[2].rate: must be > 0, got -5"). */
int lg_config_to_args(const char *json, size_t len, lg_args *out, char *err, size_t errlen);
void lg_args_free(lg_args *a);

#endif
