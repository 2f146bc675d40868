/* sim_metrics: see sim_metrics.h. One bucket ladder serves all histograms:
 * vLLM's, with finer steps below 10 ms because the simulator is fast. */
#include "sim_metrics.h"

#include <string.h>

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

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void hist_sum(sim_hist *o, const sim_hist *h)
{
    for (int i = 0; i <= SIM_HIST_BUCKETS; i++)
        o->counts[i] += LOAD(h->counts[i]);
    o->count += LOAD(h->count);
    o->sum_ns += LOAD(h->sum_ns);
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
    }
}

static void head(sim_buf *o, const char *name, const char *type, const char *help)
{
    sim_buf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void sample(sim_buf *o, const char *name, const char *labels, const char *model, double v)
{
    sim_buf_printf(o, "%s{%smodel_name=\"%s\"} %.17g\n", name, labels, model, v);
}

static void hist(sim_buf *o, const char *name, const char *help, const sim_hist *h,
                 const char *model)
{
    head(o, name, "histogram", help);
    uint64_t cum = 0;
    for (int i = 0; i < SIM_HIST_BUCKETS; i++) {
        cum += h->counts[i];
        sim_buf_printf(o, "%s_bucket{le=\"%g\",model_name=\"%s\"} %llu\n", name, bucket_s[i], model,
                       (unsigned long long)cum);
    }
    cum += h->counts[SIM_HIST_BUCKETS];
    sim_buf_printf(o, "%s_bucket{le=\"+Inf\",model_name=\"%s\"} %llu\n", name, model,
                   (unsigned long long)cum);
    sim_buf_printf(o, "%s_sum{model_name=\"%s\"} %.9f\n", name, model, (double)h->sum_ns * 1e-9);
    sim_buf_printf(o, "%s_count{model_name=\"%s\"} %llu\n", name, model,
                   (unsigned long long)h->count);
}

void sim_metrics_render(const sim_metrics *m, const char *model, sim_buf *o)
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
    hist(o, "vllm:e2e_request_latency_seconds",
         "Histogram of end to end request latency in seconds.", &m->e2e, model);
    hist(o, "vllm:request_queue_time_seconds",
         "Histogram of time spent in WAITING phase for request.", &m->queue, model);
    hist(o, "sim:send_lateness_seconds",
         "Histogram of how late each token event was written after its due time, in seconds.",
         &m->late, model);
    head(o, "sim:injected_faults_total", "counter", "Faults injected by the simulator, by type.");
    for (int f = 1; f < SIM_FAULT_COUNT; f++)
        sim_buf_printf(o, "sim:injected_faults_total{type=\"%s\"} %llu\n",
                       sim_fault_name((sim_fault)f), (unsigned long long)m->faults[f]);
}
