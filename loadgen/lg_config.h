/* lg_config: reads a JSON config file with Inference Perf's keys and turns it
 * into the equivalent command-line flags, so that one parser (the CLI's)
 * validates everything and flags given on the command line simply come after
 * and override. Pure: no I/O. Keys understood, and the flags they become:
 *   server.base_url "U"               --base-url U
 *   server.model_name "M"             --model M
 *   api.type "completion" | "chat"    --endpoint /v1/completions | /v1/chat/completions
 *   api.streaming false | true        --no-stream | --stream
 *   load.type "constant"              --burstiness inf
 *   load.type "poisson"               --burstiness 1
 *   load.type "concurrent"            (closed loop: needs load.concurrency)
 *   load.concurrency N                --max-concurrency N
 *   load.stages[i] {rate, duration}   --stage RATE:DURATION  (one per stage, "100:10s")
 *   load.interval D                   --stage-pause D
 *   load.sweep.type "linear"|"geometric"  --sweep TYPE
 *   load.sweep.num_stages N           --sweep-stages N
 *   load.sweep.max_rate R             --sweep-max-rate R
 *   load.sweep.stage_duration D       --stage-duration D
 *   load.num_workers N                --num-workers N
 *   load.seed N                       --seed N
 *   data.type "random" | "shared_prefix" | "sharegpt" | "trace"
 *                                     --dataset-name random | prefix | sharegpt | trace
 *   data.path "P"                     --dataset-path P
 *   data.input_distribution.mean N    --random-input-len N
 *   data.output_distribution.mean N   --random-output-len N
 *   data.shared_prefix.{num_groups, num_prompts_per_group, system_prompt_len,
 *     question_len}                   --prefix-groups, --prefix-prompts-per-group,
 *                                     --prefix-system-len, --prefix-question-len
 *   report.request_lifecycle.percentiles [50, 90, 99]
 *                                     --metric-percentiles 50,90,99
 *   report.goodput.constraints {"ttft": 200, "tpot": 50} (ms; ttft, tpot, itl,
 *     e2el, ntpot, and e2e = e2el)    --goodput ttft:200 --goodput tpot:50
 * Durations (D) are numbers of seconds, as in Inference Perf, or strings with
 * a unit ("500ms"); they are passed on with a unit ("10s"). Flags come out in
 * a fixed order: server, api, load, data, report. Unknown keys, keys given
 * twice, and values of the wrong type are errors (a typo must not pass
 * silently). */
#ifndef LG_CONFIG_H
#define LG_CONFIG_H

#include <stddef.h>

typedef struct lg_args {
    char **argv; /* "--flag", "value", ... each malloc'd; argv[argc] is NULL */
    int argc;
} lg_args;

/* Returns 0, or -EINVAL with err naming the key and the value
 * ("config: load.stages[2].rate: must be > 0, got -5"). */
int lg_config_to_args(const char *json, size_t len, lg_args *out, char *err, size_t errlen);
void lg_args_free(lg_args *a);

#endif
