/* lg_export: the report in other tools' layouts (--report-format), one
 * module in two files: lg_export.c (the records reader and Inference
 * Perf's layout) and lg_export_vllm.c (vLLM's), which share this header and
 * each other's functions. Converted from the files a run wrote: the result JSON and, with
 * --save-detailed, its per-request JSONL. Nothing here reads the run's memory, so a result saved
 * earlier converts the same way. The run's own result takes vLLM's arrays from here too
 * (lg_export_arrays, called by lg_run_report.c), so the two give the same values.
 *
 * - vLLM: the result JSON of `vllm bench serve` (vllm/benchmarks/serve.py,
 *   main_async: date, backend, model_id, tokenizer_id, num_prompts, the
 *   metadata, request_rate, burstiness, max_concurrency, then the benchmark's
 *   duration, completed, totals, throughputs and mean/median/std/pNN of ttft,
 *   tpot, itl, e2el in ms; with --save-detailed the per-request arrays
 *   input_lens, output_lens, ttfts, itls, start_times, generated_texts,
 *   errors), into "<stem>.vllm.json".
 * - Inference Perf: summary_lifecycle_metrics.json and one
 *   stage_N_lifecycle_metrics.json per stage (inference_perf/reportgen/
 *   base.py, summarize_requests: benchmark_time_seconds, load_summary,
 *   successes.{count, latency.*, throughput.*, prompt_tokens, output_len,
 *   output_tokens, goodput_metrics}, failures.{count, request_latency,
 *   by_label}), in seconds, into the folder "<stem>.inference-perf/".
 *
 * Latencies are the result's own: measured from the intended send time (in
 * a closed loop that is the dispatch). rhobench's additions (client bias and
 * verdict, the NTPOT split, the figures from dispatch) sit under the key
 * "rhobench" in both. What the files cannot tell is null, never made up:
 * without records there are no min/max (Inference Perf) and no per-request
 * arrays; vLLM's itls come from the records' token times (--save-token-times;
 * without them empty lists), and the records hold no texts, so
 * generated_texts are empty strings (both said under "rhobench"). */
#ifndef LG_EXPORT_H
#define LG_EXPORT_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lg_cli.h"
#include "lg_record.h"
#include "lg_xrecs.h"

/* --report-format bits (0: rhobench's own result only). */
enum { LG_EXPORT_VLLM = 1u, LG_EXPORT_IP = 2u };

/* "rhobench", "vllm", "inference-perf" or "both" -> bits; -1 if none of them. */
int lg_export_parse_format(const char *s);

/* Inference Perf's lifecycle report of the whole run (stage -1) or of one
 * stage of the result; recs may be NULL. NULL if the result has no such
 * stage or memory ran out. */
cJSON *lg_export_ip(const cJSON *result, const lg_xrecs *recs, int stage, const char *source);

/* Writes vLLM's result JSON to f; metadata is lg_opts.metadata (its keys are
 * kept at the top, as vLLM writes them). Returns 0 or -ENOMEM; write errors
 * are left on f (ferror). */
int lg_export_vllm(FILE *f, const cJSON *result, const lg_xrecs *recs, const char *metadata,
                   const char *source);

/* vLLM's per-request arrays (serve.py's --save-detailed keys), bits for
 * lg_export_arrays: entry i of each is recs->r[i]. */
enum {
    LG_XA_INPUT_LENS = 1u,       /* input_tokens */
    LG_XA_OUTPUT_LENS = 2u,      /* output_tokens; 0 for a failure, as vLLM */
    LG_XA_TTFTS = 4u,            /* s from the intended send; 0.0 for a failure, as vLLM */
    LG_XA_ITLS = 8u,             /* the gaps of the token times, s; [] without them */
    LG_XA_START_TIMES = 16u,     /* the intended send, s from the run's start */
    LG_XA_GENERATED_TEXTS = 32u, /* "": the records keep no text */
    LG_XA_ERRORS = 64u,          /* "" for a success, else its class */
    LG_XA_ALL = 127u
};
/* 1 if k is the name of one of those arrays. */
int lg_export_array_key(const char *k);
/* Writes txt (a printed JSON object) to f with the arrays of `which` added
 * as its last keys, each straight from recs (a long run has millions of
 * entries: no tree); recs NULL: txt alone. Write errors are left on f. */
void lg_export_arrays(FILE *f, const char *txt, const lg_xrecs *recs, unsigned which);

/* Converts the result file (and the JSONL, jsonl_path may be NULL) into the
 * formats asked, beside the result, each file under a temporary name then
 * renamed. Prints what it wrote or why not on stderr. Returns 0 or 1. */
int lg_export_run(const lg_opts *o, const char *result_path, const char *jsonl_path);

#endif
