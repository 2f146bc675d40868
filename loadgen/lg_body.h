/* lg_body: an OpenAI request body for one prompt, rendered once per dataset
 * entry before the run (the hot path only points curl at bytes), or for a
 * multi-turn session's round at its dispatch (lg_session.h). Pure. */
#ifndef LG_BODY_H
#define LG_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "lg_cli.h"

struct curl_slist;
/* The request headers every request carries: JSON, no 100-continue,
 * X-Sim-Stamp when stamps is set, OPENAI_API_KEY as a bearer token, and
 * each --header. NULL: no memory. The caller frees (curl_slist_free_all). */
struct curl_slist *lg_body_headers(const lg_opts *o, int stamps);

/* Renders one request body for a prompt (malloc'd into *out). */
int lg_body_render(const lg_opts *o, const char *prompt, int32_t max_tokens, char **out,
                   size_t *len);
/* The same for a prompt given in pieces, joined as they are: a piece is raw
 * bytes (escaped here) or, with escaped set, the inside of a JSON string
 * already (a session's context, a response's text as lg_chunk kept it). */
typedef struct lg_body_piece {
    const char *s;
    size_t len;
    int escaped;
} lg_body_piece;
int lg_body_render_pieces(const lg_opts *o, const lg_body_piece *pieces, int n_pieces,
                          int32_t max_tokens, char **out, size_t *len);

/* body (rendered here) with its "model" replaced by model, into *out
 * (malloc'd): a --lora-modules request's. -EINVAL: not one of ours. */
int lg_body_with_model(const char *body, size_t len, const char *model, char **out,
                       size_t *out_len);

#endif
