/* sim_metrics: see sim_metrics.h. One bucket ladder serves all histograms:
 * vLLM's, with finer steps below 10 ms because the simulator is fast. */
#include "sim_metrics.h"

#include "sim_api.h"

#include <string.h>

_Static_assert(SIM_IGN_COUNT == SIM_IGNORED_PARAMS, "sim_metrics' table of ignored parameters");

static const double bucket_s[SIM_HIST_BUCKETS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08,  0.1,   0.25,
    0.5,    0.75,    1.0,    2.5,   5.0,    7.5,   10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
};

void sim_hist_add(sim_hist *h, int64_t ns)
{
    if (ns < 0) ns = 0;
    double s = (double)ns * 1e-9;
    int i = 0;
    while (i < SIM_HIST_BUCKETS && s > bucket_s[i])
        i++;
    SIM_METRIC_ADD(h->counts[i], 1);
    SIM_METRIC_ADD(h->count, 1);
    SIM_METRIC_ADD(h->sum_ns, (uint64_t)ns);
}

void sim_hist_add_n(sim_hist *h, int64_t ns, uint64_t k)
{
    if (ns < 0) ns = 0;
    double s = (double)ns * 1e-9;
    int i = 0;
    while (i < SIM_HIST_BUCKETS && s > bucket_s[i])
        i++;
    SIM_METRIC_ADD(h->counts[i], k);
    SIM_METRIC_ADD(h->count, k);
    SIM_METRIC_ADD(h->sum_ns, (uint64_t)ns * k);
}

static const double bucket_tok[SIM_THIST_BUCKETS] = {1,   2,   5,    10,   20,   50,    100,
                                                     200, 500, 1000, 2000, 5000, 10000, 20000};

void sim_thist_add(sim_thist *h, int64_t tokens)
{
    if (tokens < 0) tokens = 0;
    int i = 0;
    while (i < SIM_THIST_BUCKETS && (double)tokens > bucket_tok[i])
        i++;
    SIM_METRIC_ADD(h->counts[i], 1);
    SIM_METRIC_ADD(h->count, 1);
    SIM_METRIC_ADD(h->sum, (uint64_t)tokens);
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void hist_sum(sim_hist *o, const sim_hist *h)
{
    for (int i = 0; i <= SIM_HIST_BUCKETS; i++)
        o->counts[i] += LOAD(h->counts[i]);
    o->count += LOAD(h->count);
    o->sum_ns += LOAD(h->sum_ns);
}

static void thist_sum(sim_thist *o, const sim_thist *h)
{
    for (int i = 0; i <= SIM_THIST_BUCKETS; i++)
        o->counts[i] += LOAD(h->counts[i]);
    o->count += LOAD(h->count);
    o->sum += LOAD(h->sum);
}

void sim_metrics_sum(const sim_metrics *slots, int n, sim_metrics *out)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < n; k++) {
        const sim_metrics *m = &slots[k];
        out->running += LOAD(m->running);
        out->waiting += LOAD(m->waiting);
        out->prompt_tokens += LOAD(m->prompt_tokens);
        out->generation_tokens += LOAD(m->generation_tokens);
        out->success_stop += LOAD(m->success_stop);
        out->success_length += LOAD(m->success_length);
        for (int f = 0; f < SIM_FAULT_COUNT; f++)
            out->faults[f] += LOAD(m->faults[f]);
        hist_sum(&out->ttft, &m->ttft);
        hist_sum(&out->itl, &m->itl);
        hist_sum(&out->e2e, &m->e2e);
        hist_sum(&out->queue, &m->queue);
        hist_sum(&out->late, &m->late);
        out->prefix_queries += LOAD(m->prefix_queries);
        out->prefix_hits += LOAD(m->prefix_hits);
        out->kv_blocks_used += LOAD(m->kv_blocks_used);
        out->kv_blocks_total += LOAD(m->kv_blocks_total);
        thist_sum(&out->prompt_len, &m->prompt_len);
        thist_sum(&out->output_len, &m->output_len);
        out->idle_cuts += LOAD(m->idle_cuts);
        int64_t cut = LOAD(m->idle_cut_min_ns);
        if (cut > 0 && (out->idle_cut_min_ns == 0 || cut < out->idle_cut_min_ns))
            out->idle_cut_min_ns = cut;
        for (int p = 0; p < SIM_IGNORED_PARAMS; p++)
            out->ignored[p] += LOAD(m->ignored[p]);
    }
}

static void head(rb_buf *o, const char *name, const char *type, const char *help)
{
    rb_buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(rb_buf *o, const char *name, const char *labels, const char *model, double v)
{
    rb_buf_printf(o, "%s{%smodel_name=\"%s\"} %.17g\n", name, labels, model, v);
}

/* A histogram's lines: n bucket bounds, then +Inf (counts[n]), sum, count. */
static void hist_lines(rb_buf *o, const char *name, const char *help, const char *model,
                       const double *bounds, int n, const uint64_t *counts, double sum,
                       const char *sum_fmt, uint64_t count)
{
    head(o, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i <= n; i++) {
        cum += counts[i];
        if (i < n)
            rb_buf_printf(o, "%s_bucket{le=\"%g\",model_name=\"%s\"} %llu\n", name, bounds[i],
                          model, (unsigned long long)cum);
        else
            rb_buf_printf(o, "%s_bucket{le=\"+Inf\",model_name=\"%s\"} %llu\n", name, model,
                          (unsigned long long)cum);
    }
    rb_buf_printf(o, "%s_sum{model_name=\"%s\"} ", name, model);
    rb_buf_printf(o, sum_fmt, sum);
    rb_buf_printf(o, "\n%s_count{model_name=\"%s\"} %llu\n", name, model,
                  (unsigned long long)count);
}

static void hist(rb_buf *o, const char *name, const char *help, const sim_hist *h,
                 const char *model)
{
    hist_lines(o, name, help, model, bucket_s, SIM_HIST_BUCKETS, h->counts,
               (double)h->sum_ns * 1e-9, "%.9f", h->count);
}

static void thist(rb_buf *o, const char *name, const char *help, const sim_thist *h,
                  const char *model)
{
    hist_lines(o, name, help, model, bucket_tok, SIM_THIST_BUCKETS, h->counts, (double)h->sum,
               "%.0f", h->count);
}

void sim_metrics_render(const sim_metrics *m, const char *model, rb_buf *o)
{
    head(o, "vllm:num_requests_running", "gauge", "Number of requests in model execution batches.");
    sample(o, "vllm:num_requests_running", "", model, (double)m->running);
    head(o, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
    sample(o, "vllm:num_requests_waiting", "", model, (double)m->waiting);
    head(o, "vllm:prompt_tokens_total", "counter", "Number of prefill tokens processed.");
    sample(o, "vllm:prompt_tokens_total", "", model, (double)m->prompt_tokens);
    head(o, "vllm:generation_tokens_total", "counter", "Number of generation tokens processed.");
    sample(o, "vllm:generation_tokens_total", "", model, (double)m->generation_tokens);
    head(o, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
    sample(o, "vllm:request_success_total", "finished_reason=\"length\",", model,
           (double)m->success_length);
    sample(o, "vllm:request_success_total", "finished_reason=\"stop\",", model,
           (double)m->success_stop);
    hist(o, "vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
         &m->ttft, model);
    hist(o, "vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
         &m->itl, model);
    /* The older name of the same observations, still on many dashboards. */
    hist(o, "vllm:time_per_output_token_seconds",
         "Histogram of time per output token in seconds (the same observations as "
         "vllm:inter_token_latency_seconds).",
         &m->itl, model);
    hist(o, "vllm:e2e_request_latency_seconds",
         "Histogram of end to end request latency in seconds.", &m->e2e, model);
    hist(o, "vllm:request_queue_time_seconds",
         "Histogram of time spent in WAITING phase for request.", &m->queue, model);
    thist(o, "vllm:request_prompt_tokens", "Number of prefill tokens processed.", &m->prompt_len,
          model);
    thist(o, "vllm:request_generation_tokens", "Number of generation tokens processed.",
          &m->output_len, model);
    head(o, "vllm:prefix_cache_queries_total", "counter",
         "Prefix cache queries, in terms of number of queried tokens.");
    sample(o, "vllm:prefix_cache_queries_total", "", model, (double)m->prefix_queries);
    head(o, "vllm:prefix_cache_hits_total", "counter",
         "Prefix cache hits, in terms of number of cached tokens.");
    sample(o, "vllm:prefix_cache_hits_total", "", model, (double)m->prefix_hits);
    /* vLLM V1's name, and V0's (still read by older dashboards). */
    double usage =
        m->kv_blocks_total > 0 ? (double)m->kv_blocks_used / (double)m->kv_blocks_total : 0.0;
    if (usage > 1.0) usage = 1.0;
    if (usage < 0.0) usage = 0.0;
    head(o, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
    sample(o, "vllm:kv_cache_usage_perc", "", model, usage);
    head(o, "vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage.");
    sample(o, "vllm:gpu_cache_usage_perc", "", model, usage);
    /* The simulator never preempts a running request. */
    head(o, "vllm:num_preemptions_total", "counter",
         "Cumulative number of preemption from the engine.");
    sample(o, "vllm:num_preemptions_total", "", model, 0.0);
    hist(o, "sim_send_lateness_seconds",
         "Histogram of how late each token event was written after its due time, in seconds.",
         &m->late, model);
    head(o, "sim_injected_faults_total", "counter", "Faults injected by the simulator, by type.");
    for (int f = 1; f < SIM_FAULT_COUNT; f++)
        rb_buf_printf(o, "sim_injected_faults_total{type=\"%s\"} %llu\n",
                      sim_fault_name((sim_fault)f), (unsigned long long)m->faults[f]);
    head(o, "sim_idle_cuts_total", "counter",
         "Connections closed by the idle or slow-request timeout.");
    rb_buf_printf(o, "sim_idle_cuts_total %llu\n", (unsigned long long)m->idle_cuts);
    head(o, "sim_idle_cut_min_seconds", "gauge",
         "The shortest time a connection was idle (or its request incomplete) before such a cut, "
         "by the server's own clock; 0 before the first cut.");
    rb_buf_printf(o, "sim_idle_cut_min_seconds %.9f\n", (double)m->idle_cut_min_ns / 1e9);
    head(o, "sim_ignored_params_total", "counter",
         "Requests served that set a parameter the simulator does not honour (as if it were "
         "absent), by parameter.");
    for (int p = 0; p < SIM_IGNORED_PARAMS; p++)
        rb_buf_printf(o, "sim_ignored_params_total{param=\"%s\"} %llu\n", sim_ignored_param_name(p),
                      (unsigned long long)m->ignored[p]);
}
