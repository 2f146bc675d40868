/* lg_custom: vLLM's custom dataset (`--dataset-name custom`): a JSONL file,
 * one object per line with a "prompt" string and, optionally, an
 * "output_tokens" integer; other keys are ignored, blank lines skipped.
 * Sampled as vLLM's CustomDataset samples it: the lines shuffled from the
 * seed (loadgen's generator, so other lines than Python's random.shuffle
 * picks), unless shuffle is 0, and the first max_n kept (0: all; the pool
 * then repeats them, as vLLM oversamples). Every request asks for
 * output_len tokens (vLLM's --custom-output-len, default 256), or, with
 * output_len -1, for its line's output_tokens, which every line must then
 * have. A prompt's length is lg_count_tokens's plus the tokenizer's special
 * tokens (vLLM's len(tokenizer(prompt).input_ids)). vLLM applies the
 * model's chat template to each prompt unless --custom-skip-chat-template;
 * loadgen has no template engine and sends the prompt as it is (on the chat
 * endpoint the server applies its template). */
#ifndef LG_CUSTOM_H
#define LG_CUSTOM_H

#include <stddef.h>
#include <stdint.h>

#include "lg_dataset.h"

typedef struct lg_custom_spec {
    uint64_t seed;
    size_t max_n;
    int32_t output_len; /* >= 1: every request; -1: each line's output_tokens */
    int shuffle;
} lg_custom_spec;

/* Parses the JSONL text (`what` names it in messages: "custom FILE"). 0, or
 * a negative errno with the line named ("custom f.jsonl: line 3: ..."). */
int lg_custom_parse(const char *what, const char *jsonl, size_t len, const lg_custom_spec *spec,
                    lg_dataset *out, char *err, size_t errlen);
int lg_custom_load(const char *path, const lg_custom_spec *spec, lg_dataset *out, char *err,
                   size_t errlen);

#endif
