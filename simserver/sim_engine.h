/* sim_engine: the simulation of one worker, without I/O. It holds:
 *  - admission: the running slots (--max-num-seqs) and the FIFO waiting
 *    queue (--max-waiting-queue-length, past which a request is refused);
 *  - a request's start: the prefix cache, then the time to first token;
 *  - the decode state machine: one token per step, each due at the previous
 *    one's write + the inter-token latency (with the load factor of that
 *    moment), the midstream_drop and stall faults at their token; a request
 *    with n choices, stop strings or logprobs steps its choices in lockstep
 *    (sim_choices) and matches its stop strings there;
 *  - the deadline heap that paces every running stream;
 *  - the metrics these move (gauges, tokens, TTFT, ITL, queue time, e2e,
 *    send lateness, prefix-cache queries and hits, the KV blocks the running
 *    requests hold, prompt and output lengths), in the worker's own
 *    sim_metrics slot.
 * Every call takes the time (CLOCK_MONOTONIC ns) as an argument, so the
 * engine runs the same on a virtual clock. The shell (sim_server.c) owns
 * sockets, framing, rendering and backpressure: it asks which stream is
 * due, steps it, and writes the events a step returns.
 * Pure (GSL rng, prefix cache and metrics slot passed in, not owned); one
 * owner thread. A sim_stream is embedded in its owner (a connection). */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "sim_api.h"
#include "sim_heap.h"
#include "sim_metrics.h"
#include "sim_model.h"

typedef enum sim_stream_state {
    SIM_ST_IDLE,    /* no request */
    SIM_ST_WAITING, /* in the waiting queue */
    SIM_ST_RUNNING, /* holds a slot; in the heap unless a step is pending */
    SIM_ST_STALLED, /* stall fault: slot released, nothing more is sent */
} sim_stream_state;

/* How a choice ended. */
typedef enum sim_finish {
    SIM_FINISH_NONE,     /* still generating */
    SIM_FINISH_LENGTH,   /* "length": max_tokens */
    SIM_FINISH_EOS,      /* "stop": echo mode ran out of prompt */
    SIM_FINISH_STOP_STR, /* "stop", with stop_reason: a stop string */
} sim_finish;

/* One choice of a request with choices (sim_req_spec_has_choices: n > 1,
 * stop strings, logprobs or continuous usage). Its text is the tokens' text
 * (" " + word each); with stop strings what is delivered lags behind it by
 * the longest stop string's length less one byte (vLLM's hold-back, so that
 * no part of a stop string is ever sent), and ends where a stop string
 * starts (or, with include_stop_str_in_output, where it ends). */
typedef struct sim_choice {
    int64_t tokens;    /* generated, the one that completed a stop string included */
    int64_t out_bytes; /* text delivered so far (sent, or kept for the body) */
    int64_t out_chars; /* the same in characters (UTF-8) */
    int finish;        /* enum sim_finish */
    int stop_idx;      /* the stop string that ended it (spec.stop[]), or -1 */
    /* The token of the last step that named this choice (sim_event.choice): */
    sim_token tok;    /* its text is " " + tok.word */
    int64_t pos;      /* its position in the choice, from 0 */
    const char *emit; /* the text delivered with it: " " + emit[0..emit_len) */
    size_t emit_len;  /* when emit_space, else emit[0..emit_len) */
    int emit_space;
    int64_t text_offset; /* characters delivered before it */
    /* With stop strings: the tail of the text, buf[0..sent) delivered. */
    char *buf;
    uint32_t held, sent;
} sim_choice;

/* The choices of one request, one allocation (with their buffers), made by
 * sim_engine_prepare and freed by sim_engine_remove; NULL for a plain
 * request, which pays nothing for them. */
typedef struct sim_choices {
    int n, live;      /* choices, and those still generating */
    int64_t tokens;   /* generated over all choices (usage completion_tokens) */
    uint32_t hold;    /* bytes held back (longest stop - 1; 0 with include_stop_str) */
    uint32_t context; /* bytes kept to match a stop string across tokens */
    sim_choice ch[];
} sim_choices;

typedef struct sim_stream {
    int state;
    sim_heap_node hn;                 /* the next token's due time, while running */
    struct sim_stream *wprev, *wnext; /* the waiting queue */
    sim_req_spec spec;                /* owned from sim_engine_prepare to sim_engine_remove */
    sim_fault fault;
    int64_t fault_at; /* tokens sent before a drop or a stall */
    int64_t n_out;    /* tokens of the whole response */
    int finish_stop;  /* ends by "stop", else "length" */
    int64_t emitted;  /* tokens sent so far */
    int64_t arrival_ns, start_ns, first_ns, last_ns;
    int64_t max_late_ns; /* the largest (write - due time) of its tokens */
    int64_t cached;      /* prompt tokens found in the prefix cache */
    int64_t kv_blocks;   /* KV blocks held while running (prompt + output) */
    int64_t slots;       /* running slots held (n, less the choices already ended) */
    sim_choices *ch;     /* NULL unless the request has choices */
} sim_stream;

/* completion_tokens of the usage: over all choices. */
static inline int64_t sim_stream_completion_tokens(const sim_stream *s)
{
    return s->ch ? s->ch->tokens : s->emitted;
}

typedef struct sim_engine_cfg {
    sim_latency_cfg lat;
    int mode; /* enum sim_mode */
    uint64_t seed;
    int64_t max_waiting_queue_length; /* 0 = unlimited */
    int enable_prefix_caching;
} sim_engine_cfg;

typedef struct sim_engine {
    sim_engine_cfg cfg;
    gsl_rng *rng;
    sim_prefix_cache *cache;
    sim_metrics *m;
    sim_heap heap;
    sim_stream *wait_head, *wait_tail;
    int64_t n_waiting, n_running;
    int draining; /* waiting requests no longer start */
} sim_engine;

void sim_engine_init(sim_engine *e, const sim_engine_cfg *cfg, gsl_rng *rng,
                     sim_prefix_cache *cache, sim_metrics *m);
/* Frees the heap (the streams belong to their owners). */
void sim_engine_free(sim_engine *e);
void sim_stream_init(sim_stream *s);

/* 1 when every slot is taken and the waiting queue is full: a new request
 * is refused (429 queue_full). */
int sim_engine_full(const sim_engine *e);
/* A validated request in s->spec, with fault f (SIM_FAULT_NONE, or one that
 * acts on the stream: midstream_drop, malformed_chunk, stall), arrived at
 * now: sets its output length, its fault's token and its times. */
void sim_engine_prepare(const sim_engine *e, sim_stream *s, sim_fault f, int64_t now);

typedef enum sim_admit { SIM_ADMIT_RUNNING, SIM_ADMIT_WAITING } sim_admit;
/* Starts s (a slot is free: prefix cache, TTFT; s->hn.deadline_ns is its
 * first token's due time, and the caller steps it now or schedules it) or
 * queues it. */
sim_admit sim_engine_admit(sim_engine *e, sim_stream *s, int64_t now);
/* Puts a running stream into the heap at s->hn.deadline_ns. Returns 0 or
 * -ENOMEM. */
int sim_engine_schedule(sim_engine *e, sim_stream *s);
/* The stream with the earliest due time if it is due at now (taken out of
 * the heap), else NULL. */
sim_stream *sim_engine_pop_due(sim_engine *e, int64_t now);
/* The earliest due time in the heap, or -1 if it is empty. */
int64_t sim_engine_next_deadline(const sim_engine *e);

typedef enum sim_ev_kind {
    SIM_EV_ROLE,      /* chat: the assistant role, before the first token */
    SIM_EV_TOKEN,     /* a token (empty when the response has none) */
    SIM_EV_MALFORMED, /* malformed_chunk: a data line that is not JSON */
} sim_ev_kind;

typedef struct sim_event {
    sim_ev_kind kind;
    sim_token tok; /* SIM_EV_TOKEN */
    int last;      /* SIM_EV_TOKEN: the response's (with choices: the choice's) last token */
    int choice;    /* ROLE, TOKEN: its choice (s->ch->ch[choice] holds the rest) */
} sim_event;

/* A step writes at most: a role event and a token event per choice, and a
 * malformed line. */
#define SIM_STEP_EVENTS_MAX (2 * SIM_N_MAX + 1)

typedef enum sim_step {
    SIM_STEP_NOT_DUE, /* nothing due at now (no events) */
    SIM_STEP_MORE,    /* a token step; s->hn.deadline_ns is the next one's */
    SIM_STEP_ENDED,   /* the last token step: the response is complete */
    SIM_STEP_DROP,    /* midstream_drop: the connection is cut after this step */
    SIM_STEP_STALL,   /* stall: nothing more is sent (no events) */
} sim_step;

/* One token step of a running stream, written at now if it is due: fills
 * ev[0..*n_ev) with what to write (all at now; the server stamps them with
 * it only for a request that asked for send stamps) and records TTFT, ITL,
 * send lateness and generation tokens. With choices, the n choices step in
 * lockstep (one sequence each, as vLLM runs n child requests in the same
 * batch): each unfinished one generates a token, in choice order; one that
 * completes a stop string ends there, gives back its running slot and its
 * KV blocks, and the response ends with its last choice. */
sim_step sim_engine_step(sim_engine *e, sim_stream *s, int64_t now,
                         sim_event ev[SIM_STEP_EVENTS_MAX], int *n_ev);
/* After SIM_STEP_ENDED was written: counts the success and the e2e time
 * (with choices, one of each per choice, by its finish reason). */
void sim_engine_complete(sim_engine *e, const sim_stream *s, int64_t now);
/* After SIM_STEP_STALL: the slot is released (the next waiting request
 * starts at now), the stream stays SIM_ST_STALLED until removed. */
void sim_engine_stall(sim_engine *e, sim_stream *s, int64_t now);
/* Takes s out of the heap or the waiting queue, releases its slot if it
 * held one (the next waiting request starts at now), frees its spec; s is
 * SIM_ST_IDLE after. */
void sim_engine_remove(sim_engine *e, sim_stream *s, int64_t now);
/* From now on waiting requests do not start; the shell answers them. */
void sim_engine_drain(sim_engine *e);
/* The oldest waiting stream, or NULL. */
sim_stream *sim_engine_first_waiting(const sim_engine *e);

/* With choices: appends choice c's text as delivered (the body of a
 * response that is not streamed), the tokens' text regenerated and cut where
 * its delivery stopped, so no per-token text is kept. */
void sim_engine_choice_text(const sim_engine *e, const sim_stream *s, int c, rb_buf *out);
/* With logprobs: token pos of choice c and its log-probabilities. */
void sim_engine_choice_logprobs(const sim_engine *e, const sim_stream *s, int c, int64_t pos,
                                sim_token *tok, sim_logprobs *lp);
/* The number of alternatives a request's logprobs name per token besides the
 * chosen one: completions list max(logprobs, 1) entries with the chosen
 * first, chat top_logprobs entries. */
int sim_engine_lp_alternatives(const sim_req_spec *spec);

#endif
