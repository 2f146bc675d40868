/* lg_cfgfile: a --config file's bytes, YAML or JSON, written for Inference
 * Perf, turned into loadgen's flags. Pure: no I/O. The text is read as JSON
 * when it starts with '{' or '[' and is valid JSON, else as YAML (lg_yaml).
 * The tree is then mapped from Inference Perf's schema as it is today onto
 * the keys lg_config reads (lg_config.h), and lg_config checks the rest, so
 * a typo or a wrong type is still an error naming its key path:
 *   server.base_url on 0.0.0.0        this host: 127.0.0.1 (said in a note)
 *   server.ignore_eos true|false      --ignore-eos | --no-ignore-eos
 *   load.base_seed N                  load.seed N
 *   load.interval absent, >1 stage    1 (s), Inference Perf's default pause
 *   load.type "concurrent" with stages [{concurrency_level C, num_requests N}]
 *                                     --max-concurrency C --num-prompts N (one stage)
 *   load.type "trace_replay", load.trace {file F, format "AzurePublicDataset"}
 *                                     --dataset-name trace --dataset-path F; the
 *                                     trace's times set the arrivals, so
 *                                     load.stages and data.trace are not used (note)
 *   load.worker_max_concurrency N     --max-connections-per-worker N
 *   load.request_timeout S            --request-timeout Ss
 *   data.type "shareGPT"              sharegpt; "synthetic": random (note)
 *   data.shared_prefix.num_unique_system_prompts, .num_users_per_system_prompt
 *                                     num_groups, num_prompts_per_group
 *   data.shared_prefix.output_len N   --random-output-len N
 *   data.shared_prefix.{system_prompt_len, question_len, output_len} as a
 *     distribution {type, mean, ...}  its mean (note)
 *   data.{input,output}_distribution {type, mean, std_dev, min, max}
 *                                     --input/output-distribution (drawn as
 *                                     Inference Perf draws them; note)
 *   data.shared_prefix.seed N         load.seed N when the load gives none
 *   data.shared_prefix.enable_multi_turn_chat true, with data.type shared_prefix
 *                                     --prefix-multi-turn (lg_session.h)
 *   metrics {type "prometheus", prometheus {url U, scrape_interval S}}
 *                                     --prometheus-url U --prometheus-scrape-interval S
 *                                     (lg_promql.h; its other keys: a note)
 *   report.goodput.constraints        SECONDS, as Inference Perf defines them
 *     {ttft, tpot, itl, ntpot, e2el, e2e, request_latency (= e2el)}
 * Accepted with a note that they have no effect here (they configure parts
 * loadgen does not have): tokenizer, metrics of another type, storage, circuit_breakers,
 * server.type, load.circuit_breakers, load.worker_max_tcp_connections,
 * report.request_lifecycle.{summary, per_stage, per_request, per_adapter,
 * per_adapter_stage, use_server_output_tokens, max_error_messages},
 * report.prometheus, report.session_lifecycle. */
#ifndef LG_CFGFILE_H
#define LG_CFGFILE_H

#include <stddef.h>

#include "lg_config.h"

/* Returns 0 with the flags in out and notes (one "config: ..." line each,
 * newline-ended; "" when none), or -EINVAL with err naming the line or the
 * key path. */
int lg_cfgfile_to_args(const char *text, size_t len, lg_args *out, char *notes, size_t notes_cap,
                       char *err, size_t errlen);

/* An http(s) URL whose host is 0.0.0.0 (which Inference Perf's examples use
 * for "this host") gets 127.0.0.1 instead. Returns 1 when it rewrote url. */
int lg_url_unspecified_to_loopback(char *url, size_t cap);

#endif
