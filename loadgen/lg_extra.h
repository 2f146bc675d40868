/* lg_extra: the request body's additions: --extra-body and vLLM's sampling
 * flags, rendered once before the run into the members every body carries
 * (lg_body.c appends them), so they cost nothing per request. Pure. */
#ifndef LG_EXTRA_H
#define LG_EXTRA_H

#include <stddef.h>

#include "lg_cli.h"

/* Renders o->extra_members from --extra-body and the sampling flags (called
 * by lg_cli_finish). Refuses (-EINVAL, err naming the flag and the value)
 * an --extra-body that is not a JSON object, that sets a key the client
 * owns (model, prompt, messages, stream, stream_options, max_tokens,
 * ignore_eos: their flags say), or one a sampling flag sets too, and a
 * rendering past the buffer. */
int lg_extra_body_render(lg_opts *o, char *err, size_t errlen);

#endif
