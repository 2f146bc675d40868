/* lg_lora: a list of model names (LoRA adapters) with a traffic split, as
 * vLLM bench's --lora-modules (uniform) and Inference Perf's
 * load.lora_traffic_split (weighted). Request i's model is a pure function of
 * (seed, i): any worker count, any worker, the same name. Pure. */
#ifndef LG_LORA_H
#define LG_LORA_H

#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"

/* --lora-modules NAME[=SHARE],...: into o->lora_* (replacing an earlier
 * list, except that bare names after a list of bare names join it, so
 * vLLM's `--lora-modules a b c` is one list of three). Bare names share
 * evenly; with shares, every name has one, each >= 0, summing to 1 within
 * 1e-6, in one value. Returns 0, or -1 with why. */
int lg_lora_parse(lg_opts *o, const char *val, char *why, size_t n);

/* Checks a split given name by name (the config reader's): a name must be
 * non-empty and fit, a share finite and >= 0, the sum 1 within 1e-6. Returns
 * 0, or -1 with why (naming nothing: the caller names the key). */
int lg_lora_check(const lg_opts *o, char *why, size_t n);

/* The index into o->lora_names of request index's model (o->n_lora > 0):
 * the split's share of a name is its chance, a 0 share never chosen. */
int lg_lora_pick(const lg_opts *o, uint64_t seed, int64_t index);

/* The name request index carries: the chosen one, or NULL without a list. */
const char *lg_lora_model(const lg_opts *o, int64_t index);

#endif
