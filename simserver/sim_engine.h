/* sim_engine: the simulation of one worker, without I/O. It holds:
 *  - admission: the running slots (--max-num-seqs) and the FIFO waiting
 *    queue (--max-waiting-queue-length, past which a request is refused);
 *  - a request's start: the prefix cache, then the time to first token;
 *  - the decode state machine: one token per step, each due at the previous
 *    one's write + the inter-token latency (with the load factor of that
 *    moment), the midstream_drop and stall faults at their token;
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
} sim_stream;

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
    int last;      /* SIM_EV_TOKEN: the response's last token */
} sim_event;

#define SIM_STEP_EVENTS_MAX 3

typedef enum sim_step {
    SIM_STEP_NOT_DUE, /* nothing due at now (no events) */
    SIM_STEP_MORE,    /* a token step; s->hn.deadline_ns is the next one's */
    SIM_STEP_ENDED,   /* the last token step: the response is complete */
    SIM_STEP_DROP,    /* midstream_drop: the connection is cut after this step */
    SIM_STEP_STALL,   /* stall: nothing more is sent (no events) */
} sim_step;

/* One token step of a running stream, written at now if it is due: fills
 * ev[0..*n_ev) with what to write (all stamped now) and records TTFT, ITL,
 * send lateness and generation tokens. */
sim_step sim_engine_step(sim_engine *e, sim_stream *s, int64_t now,
                         sim_event ev[SIM_STEP_EVENTS_MAX], int *n_ev);
/* After SIM_STEP_ENDED was written: counts the success and the e2e time. */
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

#endif
