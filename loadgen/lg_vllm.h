/* lg_vllm: a `vllm bench serve` (benchmark_serving.py) command line runs
 * under loadgen by changing only the program name. Pure: argv in, argv out.
 * The flags both tools share (--base-url, --endpoint, --model,
 * --request-rate, --num-prompts, --burstiness, --max-concurrency, --seed,
 * --dataset-name, --dataset-path, --random-input-len, --random-output-len,
 * --random-range-ratio, --percentile-metrics, --metric-percentiles,
 * --goodput, --ignore-eos, --save-result, --save-detailed, --result-dir,
 * --result-filename, --tokenizer, --sharegpt-output-len, --random-prefix-len,
 * --custom-output-len, --disable-shuffle, --ramp-up-strategy, --ramp-up-start-rps,
 * --ramp-up-end-rps) pass through unchanged to the CLI's
 * parser (--random-prefix-len checked here first, as vLLM's parser does). vLLM's own become
 * loadgen's:
 *   --host H, --port P      --base-url http://H:P (defaults 127.0.0.1, 8000),
 *                           unless --base-url is given (vLLM then ignores them)
 *   --backend B             --endpoint /v1/completions for openai, vllm,
 *                           sglang, lmdeploy, llama.cpp; /v1/chat/completions
 *                           for openai-chat; unless --endpoint is given.
 *                           Other backends (tgi, tensorrt-llm, ...) speak no
 *                           OpenAI API: an error.
 *   --disable-tqdm          --no-progress
 *   --metadata K=V...       --metadata K=V, one flag per item
 * and these are accepted with a note that they have no effect here:
 *   --logprobs N            (not requested)
 *   --tokenizer-mode M, --trust-remote-code (token counts come from the
 *                           server's usage, so no tokenizer is loaded)
 * Both "--flag value" and "--flag=value" are read. */
#ifndef LG_VLLM_H
#define LG_VLLM_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lg_cli.h"
#include "lg_config.h"

/* Returns 0 with the rewritten flags in out (argv[0], the program's name,
 * passes through like any argument that is no vLLM flag) and notes, one
 * "--flag: ..." line each, newline-ended; or -EINVAL with err naming the
 * flag and the value. */
int lg_vllm_args(int argc, char *const *argv, lg_args *out, char *notes, size_t notes_cap,
                 char *err, size_t errlen);

/* vLLM's result keys that loadgen's report lacks: date ("%Y%m%d-%H%M%S",
 * local time of `now`), num_prompts (the requests sent) and tokenizer_id
 * (--tokenizer, else the model). */
void lg_vllm_report_keys(cJSON *j, const lg_opts *o, uint64_t dispatched, time_t now);
/* --metadata's KEY=VALUE items as string keys of j (both trimmed of spaces),
 * as vLLM writes them; a key the report already has keeps its value. */
void lg_vllm_report_metadata(cJSON *j, const lg_opts *o);

#endif
