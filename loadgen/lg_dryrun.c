/* lg_dryrun: the plan of a run, printed instead of run (lg_dryrun.h). */
#include "lg_dryrun.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cert.h"
#include "lg_dataset.h"
#include "lg_export.h"
#include "lg_plan.h"
#include "rb_file.h"
#include "rb_host.h"

int lg_dryrun_count(const lg_sched_spec *spec, int k, int64_t *per_worker, lg_dryrun_counts *c,
                    char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    for (int s = 0; s < LG_MAX_STAGES; s++)
        c->first_ns[s] = c->last_ns[s] = -1;
    if (per_worker) memset(per_worker, 0, (size_t)k * sizeof *per_worker);
    lg_sched *it = lg_sched_new(spec, err, errlen);
    if (!it) return -EINVAL;
    lg_arrival a;
    while (lg_sched_next(it, &a)) {
        if (c->total >= LG_DRYRUN_MAX_COUNT) {
            c->truncated = 1;
            break;
        }
        c->total++;
        if (per_worker) per_worker[lg_sched_owner(spec, &a, k)]++;
        if (a.stage < 0 || a.stage >= LG_MAX_STAGES) continue;
        c->per_stage[a.stage]++;
        if (c->first_ns[a.stage] < 0) c->first_ns[a.stage] = a.t_ns;
        c->last_ns[a.stage] = a.t_ns;
    }
    lg_sched_free(it);
    return 0;
}

/* A duration for people: "2s", "1.5s", "250ms". */
static const char *dur(int64_t ns, char *buf, size_t cap)
{
    if (ns % 1000000000LL == 0)
        snprintf(buf, cap, "%llds", (long long)(ns / 1000000000LL));
    else if (ns < 1000000000LL)
        snprintf(buf, cap, "%gms", (double)ns / 1e6);
    else
        snprintf(buf, cap, "%gs", (double)ns / 1e9);
    return buf;
}

static const char *rate_s(double r, char *buf, size_t cap)
{
    if (isinf(r))
        snprintf(buf, cap, "inf");
    else
        snprintf(buf, cap, "%g", r);
    return buf;
}

static void print_dataset(const lg_opts *o, size_t n_trace, FILE *out)
{
    switch (o->dataset) {
    case LG_DS_RANDOM:
        fprintf(out, "dataset: random, input %d and output %d tokens (range ratio %g)",
                o->random_input_len, o->random_output_len, o->random_range_ratio);
        if (o->random_prefix_len)
            fprintf(out, ", after a fixed prefix of %d tokens", o->random_prefix_len);
        break;
    case LG_DS_PREFIX:
        fprintf(out,
                "dataset: shared prefix, %d groups x %d prompts, system prompt %d and question "
                "%d words, output %d tokens",
                o->prefix_groups, o->prefix_prompts_per_group, o->prefix_system_len,
                o->prefix_question_len, o->random_output_len);
        if (o->prefix_multi_turn) /* lg_session.h */
            fprintf(out, "; multi-turn: %lld users, each on one worker",
                    (long long)lg_plan_session_users(o));
        break;
    case LG_DS_SHAREGPT:
        fprintf(out, "dataset: ShareGPT from %s", o->dataset_path);
        break;
    case LG_DS_CUSTOM:
        fprintf(out, "dataset: custom JSONL from %s, ", o->dataset_path);
        if (o->custom_output_len > 0)
            fprintf(out, "output %d tokens", o->custom_output_len);
        else
            fprintf(out, "output each line's output_tokens");
        break;
    case LG_DS_TRACE:
        fprintf(out, "dataset: trace %s, %zu rows, speed-up %g", o->dataset_path, n_trace,
                o->trace_speedup);
        break;
    }
    /* the shared-prefix pool is its groups' prompts (lg_plan's build_pool) */
    long long pool = o->dataset == LG_DS_PREFIX
                         ? (long long)o->prefix_groups * o->prefix_prompts_per_group
                         : (long long)o->prompt_pool_size;
    if (o->prompt_per_request)
        fprintf(out, "; no pool: each prompt made when its request is sent");
    else if (pool > 0 && o->dataset != LG_DS_TRACE)
        fprintf(out, "; pool of %lld prompts", pool);
    fputc('\n', out);
}

/* The certificate's decision and the predicted rho per stage. Returns 0, or
 * 2 when it cannot be read, LG_EXIT_CERT_REFUSED when it refuses the plan
 * without --force. */
static int print_certificate(const lg_opts *o, int k, int closed, size_t n_trace, FILE *out)
{
    char err[512];
    lg_cert cert;
    if (lg_cert_load(o->certificate, &cert, err, sizeof err)) {
        fprintf(stderr, "loadgen: %s\n", err);
        return 2;
    }
    rb_host host;
    rb_host_read(&host);
    double rate; /* as lg_run compares them */
    lg_cert_workload w;
    lg_plan_cert_inputs(o, &rate, &w);
    lg_cert_decision d;
    lg_cert_check_plan(&cert, &host, k, rate, &w, &d);
    lg_cert_note_cpu_latency(&cert, o->cpu_latency_us, &d);
    for (int i = 0; i < o->n_stages && !closed && !n_trace; i++) {
        double rho = lg_cert_predict_rho(&cert, k, lg_stage_peak_rate(&o->stages[i]), &w);
        if (isnan(rho))
            fprintf(out, "stage %d: predicted rho per worker: n/a (%s)\n", i,
                    isnan(w.output_tokens) && !w.plain ? "output length not fixed by the dataset"
                                                       : "the certificate has no cost model");
        else
            fprintf(out, "stage %d: predicted rho per worker %.4f (certified safe %.4f)\n", i, rho,
                    d.entry ? d.entry->safe_rho : NAN);
    }
    fprintf(out, "certificate: %s: %s\n", d.ok ? "within" : "beyond", d.message);
    if (d.warning[0]) fprintf(out, "certificate: warning: %s\n", d.warning);
    lg_cert_free(&cert);
    if (!d.ok && !o->force) {
        fprintf(stderr, "loadgen: refused: %s (pass --force to run anyway)\n", d.message);
        return LG_EXIT_CERT_REFUSED;
    }
    return 0;
}

/* What the run would read before its first request (a trace, a ShareGPT file): 0, or 2. */
static int read_inputs(const lg_opts *o, lg_trace_row **trace, size_t *n_trace)
{
    char err[512] = "";
    int rc = 0;
    if (o->dataset == LG_DS_TRACE) {
        rc = lg_trace_load(o->dataset_path, trace, n_trace, err, sizeof err);
        if (rc == 0 && *n_trace == 0) {
            snprintf(err, sizeof err, "--dataset-path: the trace has no rows");
            rc = -EINVAL;
        }
    } else if (o->dataset == LG_DS_SHAREGPT) {
        lg_dataset ds = {0};
        rc = lg_dataset_load_sharegpt(o->dataset_path, 1, &ds, err, sizeof err);
        if (rc == 0 && ds.n == 0) {
            snprintf(err, sizeof err, "--dataset-path: the dataset has no usable prompts");
            rc = -EINVAL;
        }
        lg_dataset_free(&ds);
    }
    if (rc) {
        fprintf(stderr, "loadgen: %s\n", err[0] ? err : "cannot read the dataset");
        return 2;
    }
    return 0;
}

/* The plan's first lines: the target, the load mode, the workers. */
static void print_target(const lg_opts *o, int k, int closed, FILE *out)
{
    fprintf(out, "loadgen --dry-run: the plan; nothing is sent\n");
    fprintf(out, "target: %s%s, model %s\n", o->base_url, o->endpoint, o->model);
    if (o->n_lora) { /* --lora-modules */
        fprintf(out, "models (--lora-modules, request i's from a hash of the seed and i):");
        for (int i = 0; i < o->n_lora; i++)
            fprintf(out, "%s %s %g", i ? "," : "", o->lora_names[i], o->lora_split[i]);
        fprintf(out, "\n");
    }
    fprintf(out, "load mode: %s", lg_load_mode(o));
    if (!closed)
        fprintf(out, ", arrivals gamma(shape %g), seed %llu", o->burstiness,
                (unsigned long long)o->seed);
    fputc('\n', out);
    fprintf(out, "workers: %d %s", k,
            o->num_workers > 0 ? (k > 1 ? "processes" : "process") : "(in-process)");
    if (o->max_concurrency) {
        fprintf(out, ", max concurrency %d (", o->max_concurrency);
        for (int w = 0; w < k; w++)
            fprintf(out, "%sworker %d: %d", w ? ", " : "", w,
                    o->max_concurrency / k + (w < o->max_concurrency % k ? 1 : 0));
        fputc(')', out);
    }
    fputc('\n', out);
}

/* Closed stages in turn: stage s's requests j go to worker j % k. */
static void print_closed_stages(const lg_opts *o, int k, FILE *out)
{
    char b1[32], b2[32];
    int64_t base = 0;
    for (int s = 0; s < o->n_stages; s++) {
        int64_t n = o->stages[s].max_requests;
        int c = o->stage_conc[s];
        fprintf(out, "stage %d: closed loop, %lld requests, %d in flight (", s, (long long)n, c);
        for (int w = 0; w < k; w++)
            fprintf(out, "%sworker %d: %lld requests, %d in flight", w ? "; " : "", w,
                    (long long)((n - w + k - 1) / k), c / k + (w < c % k ? 1 : 0));
        fprintf(out, "), indices %lld to %lld\n", (long long)base, (long long)(base + n - 1));
        base += n;
    }
    fprintf(out, "total: %lld requests, stages in turn%s%s%s, within %s at most\n", (long long)base,
            o->stage_pause_ns ? " (pauses of " : "",
            o->stage_pause_ns ? dur(o->stage_pause_ns, b1, sizeof b1) : "",
            o->stage_pause_ns ? ")" : "", dur(lg_closed_stages_bound_ns(o, k), b2, sizeof b2));
}

/* No schedule: C requests in flight, request i goes to worker i % k. */
static void print_closed(const lg_opts *o, int k, FILE *out)
{
    char b1[32];
    const lg_stage *st = &o->stages[0];
    if (st->max_requests > 0) {
        fprintf(out, "stage 0: closed loop, %lld requests (", (long long)st->max_requests);
        for (int w = 0; w < k; w++)
            fprintf(out, "%sworker %d: %lld", w ? ", " : "", w,
                    (long long)((st->max_requests - w + k - 1) / k));
        fprintf(out, ")\n");
    }
    if (st->duration_ns > 0)
        fprintf(out, "stage 0: closed loop for %s, requests as fast as answered\n",
                dur(st->duration_ns, b1, sizeof b1));
    fprintf(out, "total: %s\n",
            st->max_requests > 0 ? "bounded by the request count" : "bounded by time");
}

/* Open stage i's line (the trace's one stage when n_trace), with the schedule's count. */
static void print_open_stage(const lg_opts *o, int i, size_t n_trace, const lg_dryrun_counts *c,
                             FILE *out)
{
    char b1[32], b2[32];
    const lg_stage *st = &o->stages[i];
    if (n_trace)
        fprintf(out, "stage 0: the trace's times");
    else
        fprintf(out, "stage %d: rate %s req/s", i, rate_s(st->rate_per_s, b1, sizeof b1));
    if (!n_trace && st->ramp != LG_RAMP_NONE)
        fprintf(out, " ramping %s to %s req/s",
                st->ramp == LG_RAMP_LINEAR ? "linearly" : "geometrically",
                rate_s(st->ramp_end_per_s, b2, sizeof b2));
    if (!n_trace && st->duration_ns > 0)
        fprintf(out, " for %s", dur(st->duration_ns, b2, sizeof b2));
    if (!n_trace && st->max_requests > 0)
        fprintf(out, ", at most %lld requests", (long long)st->max_requests);
    fprintf(out, ", expected %s%lld requests", c->truncated ? "more than " : "",
            (long long)c->per_stage[i]);
    if (c->first_ns[i] >= 0)
        fprintf(out, ", intended from %.3fs to %.3fs", (double)c->first_ns[i] / 1e9,
                (double)c->last_ns[i] / 1e9);
    fputc('\n', out);
}

/* The open loop's schedule walked as the run would: 0, or 2 when it is refused. */
static int print_open(const lg_opts *o, int k, const lg_trace_row *trace, size_t n_trace,
                      int64_t *per_worker, FILE *out)
{
    char err[512] = "", b1[32], b2[32];
    lg_sched_spec spec = {.seed = o->seed,
                          .burstiness = o->burstiness,
                          .stages = o->stages,
                          .n_stages = (size_t)o->n_stages,
                          .pause_ns = o->stage_pause_ns,
                          .trace = trace,
                          .n_trace = n_trace,
                          .trace_speedup = o->trace_speedup,
                          .max_requests = n_trace && o->num_prompts_given ? o->num_prompts : 0,
                          .session_users = lg_plan_session_users(o)};
    lg_dryrun_counts c;
    if (lg_dryrun_count(&spec, k, per_worker, &c, err, sizeof err)) {
        fprintf(stderr, "loadgen: schedule: %s\n", err);
        return 2;
    }
    int n_st = n_trace ? 1 : o->n_stages;
    int64_t total_ns = 0, last_ns = 0;
    int timed = !n_trace;
    for (int i = 0; i < n_st; i++) {
        const lg_stage *st = &o->stages[i];
        print_open_stage(o, i, n_trace, &c, out);
        if (n_trace || st->duration_ns == 0) timed = 0;
        total_ns += (n_trace ? 0 : st->duration_ns) + (i ? o->stage_pause_ns : 0);
        if (c.last_ns[i] > last_ns) last_ns = c.last_ns[i];
    }
    if (!timed) total_ns = last_ns; /* bounded by count: the last intended send */
    fprintf(out, "total: expected %s%lld requests (", c.truncated ? "more than " : "",
            (long long)c.total);
    for (int w = 0; w < k; w++)
        fprintf(out, "%sworker %d: %lld", w ? ", " : "", w, (long long)per_worker[w]);
    fprintf(out, "), scheduled over %.3fs", (double)total_ns / 1e9);
    if (n_st > 1 && o->stage_pause_ns)
        fprintf(out, " (pauses of %s)", dur(o->stage_pause_ns, b1, sizeof b1));
    fputc('\n', out);
    if (o->sweep_probe) /* Inference Perf's sweep: the stages come from the probe */
        fprintf(out,
                "sweep probe: the stage above is the saturation probe (in flight sampled every "
                "0.5 s for %s; the p%g of its burn-down rates is the saturation rate), then %d "
                "%s stages of %s each from 1 request/s up to that rate\n",
                dur(o->sweep_probe_timeout_ns, b1, sizeof b1), o->sweep_probe_percentile,
                o->sweep_stages, o->sweep == LG_SWEEP_LINEAR ? "linear" : "geometric",
                dur(o->stage_duration_ns, b2, sizeof b2));
    return 0;
}

/* The run's time limits and where its result would go. */
static void print_limits(const lg_opts *o, FILE *out)
{
    char b1[32], b2[32];
    fprintf(out, "limits: request timeout %s, drain %s\n",
            dur(o->request_timeout_ns, b1, sizeof b1), dur(o->drain_timeout_ns, b2, sizeof b2));
    if (o->save_result)
        fprintf(out, "result: in %s%s%s%s\n", o->result_dir,
                o->save_detailed ? ", with records" : "",
                o->report_formats & LG_EXPORT_VLLM ? ", vLLM's layout" : "",
                o->report_formats & LG_EXPORT_IP ? ", Inference Perf's layout" : "");
}

int lg_dryrun(const lg_opts *o, FILE *out)
{
    int k = o->num_workers > 0 ? o->num_workers : 1;
    int closed = lg_closed_loop(o);
    lg_trace_row *trace = NULL;
    size_t n_trace = 0;
    if (read_inputs(o, &trace, &n_trace)) {
        free(trace);
        return 2;
    }
    print_target(o, k, closed, out);
    print_dataset(o, n_trace, out);

    int64_t *per_worker = calloc((size_t)k, sizeof *per_worker);
    if (!per_worker) {
        free(trace);
        return 1;
    }
    int rc = 0;
    if (closed && o->n_closed_stages)
        print_closed_stages(o, k, out);
    else if (closed)
        print_closed(o, k, out);
    else
        rc = print_open(o, k, trace, n_trace, per_worker, out);
    free(per_worker);
    if (rc) {
        free(trace);
        return rc;
    }
    print_limits(o, out);
    rc = o->certificate[0] ? print_certificate(o, k, closed, n_trace, out) : 0;
    free(trace);
    if (rc == 0) fprintf(out, "dry run: the plan is valid; nothing was sent\n");
    return rc;
}
