/* sim_render: the bytes of every response: HTTP heads, OpenAI JSON bodies,
 * SSE events, the ground-truth comments, errors, the model list. Pure: each
 * function appends to a rb_buf. A sim_render_ctx holds the parts shared by
 * every chunk of one response (id, created, model) pre-rendered; free it
 * with sim_render_ctx_free. */
#ifndef SIM_RENDER_H
#define SIM_RENDER_H

#include <stdint.h>

#include "rb_buf.h"
#include "sim_model.h"

typedef struct sim_render_ctx {
    int chat;
    rb_buf pre;  /* `data: {"id":..,"object":..,"created":..,"model":..,` */
    rb_buf body; /* the same without "data: ", for non-streamed bodies */
} sim_render_ctx;

void sim_render_ctx_init(sim_render_ctx *r, int chat, const char *id, int64_t created,
                         const char *model);
void sim_render_ctx_free(sim_render_ctx *r);

/* keep_alive of sim_render_head: 0 adds "connection: close", 1 says nothing
 * (HTTP/1.1's default), SIM_KEEP_ALIVE_SAY adds "connection: keep-alive"
 * (for HTTP/1.0 clients that asked for it). */
#define SIM_KEEP_ALIVE_SAY 2

/* HTTP response head. content_length -1 means chunked transfer encoding,
 * -2 a body that ends when the connection closes (HTTP/1.0 streams);
 * extra is NULL or complete header lines ("Name: value\r\n"). */
void sim_render_head(rb_buf *o, int status, const char *content_type, int64_t content_length,
                     int keep_alive, const char *extra);
const char *sim_render_reason(int status);

/* SSE events ("data: ...\n\n"). finish is NULL, "length" or "stop". */
void sim_render_stamp(rb_buf *o, int64_t t_ns);
void sim_render_role(rb_buf *o, const sim_render_ctx *r);
void sim_render_token(rb_buf *o, const sim_render_ctx *r, const char *word, size_t len,
                      const char *finish);
void sim_render_malformed(rb_buf *o);
void sim_render_usage(rb_buf *o, const sim_render_ctx *r, int64_t prompt, int64_t completion,
                      int64_t cached);
void sim_render_done(rb_buf *o);
/* The last comment: `: {"queue_ns":..,"prefill_ns":..,"decode_ns":..,"cached_tokens":..,
 * "max_late_ns":..}\n\n` (max_late_ns: the stream's largest send lateness). */
void sim_render_truth(rb_buf *o, int64_t queue_ns, int64_t prefill_ns, int64_t decode_ns,
                      int64_t cached, int64_t max_late_ns);

/* A whole non-streamed body; text is the raw output (escaped here). */
void sim_render_full(rb_buf *o, const sim_render_ctx *r, const char *text, size_t len,
                     const char *finish, int64_t prompt, int64_t completion, int64_t cached);
/* Requests with choices (n > 1, stop strings, logprobs, continuous usage
 * stats): each chunk carries one choice with its index, as vLLM's; the
 * finishing chunk of a choice names its stop_reason (the stop string, or
 * null), and a completion chunk names it in every chunk (null until then). */

/* Where log-probabilities come from: token pos of the choice (its text is
 * " " + tok.word, the alternatives' too). */
typedef void (*sim_render_lp_fn)(const void *ud, int64_t pos, sim_token *tok, sim_logprobs *lp);

typedef struct sim_render_lp {
    sim_render_lp_fn get;
    const void *ud;
    int64_t first, count; /* tokens first .. first + count - 1 */
    int64_t text_offset;  /* characters of the choice's text before the first */
    int top;              /* chat's top_logprobs: 0 lists no alternatives */
} sim_render_lp;

typedef struct sim_render_choice {
    int index;
    const char *text; /* (space ? " " : "") + text[0..len) */
    size_t len;
    int space;
    const char *finish;      /* NULL while the choice goes on, "length", "stop" */
    const char *stop_reason; /* the stop string that ended it, or NULL */
    size_t stop_len;
    const sim_render_lp *lp; /* NULL: "logprobs":null */
    int usage;               /* continuous_usage_stats: usage so far in this chunk */
    int64_t prompt, completion;
} sim_render_choice;

/* Chat: the role chunk of choice index (with usage 0 so far if asked). */
void sim_render_choice_role(rb_buf *o, const sim_render_ctx *r, int index, int usage,
                            int64_t prompt);
void sim_render_choice_chunk(rb_buf *o, const sim_render_ctx *r, const sim_render_choice *c);
/* A non-streamed body with choices: begin, each choice (index order), end. */
void sim_render_full_begin(rb_buf *o, const sim_render_ctx *r);
void sim_render_full_choice(rb_buf *o, const sim_render_ctx *r, const sim_render_choice *c);
void sim_render_full_end(rb_buf *o, int64_t prompt, int64_t completion, int64_t cached);

/* {"error":{"message":..,"type":..,"param":..,"code":..}}; param "" or
 * NULL and code NULL render as null. */
void sim_render_error(rb_buf *o, const char *message, const char *type, const char *param,
                      const char *code);
void sim_render_models(rb_buf *o, const char *const *names, int n, int64_t created);

#endif
