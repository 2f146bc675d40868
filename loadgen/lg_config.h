/* lg_config: reads a JSON config file with Inference Perf's keys and turns it
 * into the equivalent command-line flags, so that one parser (the CLI's)
 * validates everything and flags given on the command line simply come after
 * and override. Pure: no I/O. Keys understood:
 *   load.type ("constant"|"poisson"|"concurrent"), load.stages[].rate,
 *   load.stages[].duration, load.interval (pause), load.sweep.type
 *   ("linear"|"geometric"), load.sweep.num_stages, load.sweep.max_rate,
 *   load.sweep.stage_duration, load.num_workers, load.seed, load.concurrency,
 *   api.type ("completion"|"chat"), api.streaming, server.base_url,
 *   server.model_name, data.type ("random"|"shared_prefix"|"sharegpt"|"trace"),
 *   data.path, data.input_distribution.mean, data.output_distribution.mean,
 *   report.request_lifecycle.percentiles, report.goodput.constraints.
 * Unknown keys are errors (a typo must not pass silently). */
#ifndef LG_CONFIG_H
#define LG_CONFIG_H

#include <stddef.h>

typedef struct lg_args {
    char **argv;   /* "--flag", "value", ... each malloc'd */
    int argc;
} lg_args;

/* Returns 0, or -EINVAL with err naming the key and the value
 * ("config: load.stages[2].rate: must be > 0, got -5"). */
int lg_config_to_args(const char *json, size_t len, lg_args *out, char *err, size_t errlen);
void lg_args_free(lg_args *a);

#endif
