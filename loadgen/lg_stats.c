/* lg_stats: the per-stage measurement block of lg_stats.h: recording of one
 * request's outcome into counters and histograms, and the exact merge. */
#include "lg_stats.h"

#include <stdlib.h>
#include <string.h>

const char *const lg_class_names[LG_N_CLASSES] = {
    "ok",        "connect", "timeout",         "reset", "midstream", "malformed", "body_too_large",
    "cancelled", "other",   "client_fd_limit", "tls",   "http",
};

size_t lg_stats_hist_bytes(void)
{
    size_t b = mdl_hist_bytes(MDL_HIST_LATENCY_HIGHEST_NS, MDL_HIST_LATENCY_SUB_BITS);
    return (b + 63) & ~(size_t)63;
}

static size_t header_bytes(void)
{
    return (sizeof(lg_stage_stats) + 63) & ~(size_t)63;
}

size_t lg_stats_block_bytes(void)
{
    return header_bytes() + LG_N_HISTS * lg_stats_hist_bytes();
}

mdl_hist *lg_stats_hist(lg_stage_stats *s, int id)
{
    return (mdl_hist *)((char *)s + header_bytes() + (size_t)id * lg_stats_hist_bytes());
}

const mdl_hist *lg_stats_hist_c(const lg_stage_stats *s, int id)
{
    return (const mdl_hist *)((const char *)s + header_bytes() +
                              (size_t)id * lg_stats_hist_bytes());
}

void lg_stats_init(lg_stage_stats *s, int zeroed)
{
    if (!zeroed) {
        memset(s, 0, lg_stats_block_bytes());
        for (int i = 0; i < LG_N_HISTS; i++)
            mdl_hist_init(lg_stats_hist(s, i), MDL_HIST_LATENCY_HIGHEST_NS,
                          MDL_HIST_LATENCY_SUB_BITS);
        return;
    }
    /* An empty histogram is all zero but for its three shape fields
     * (mdl_hist_reset zeroes the rest); writing only those leaves the
     * counts' pages untouched. The first histogram is initialised properly
     * and the others copy its shape, so a change in mdl_hist's layout shows
     * up here as a mismatch in the unit test, not as silent corruption. */
    mdl_hist *first = lg_stats_hist(s, 0);
    mdl_hist_init(first, MDL_HIST_LATENCY_HIGHEST_NS, MDL_HIST_LATENCY_SUB_BITS);
    for (int i = 1; i < LG_N_HISTS; i++) {
        mdl_hist *h = lg_stats_hist(s, i);
        h->lowest = first->lowest;
        h->highest = first->highest;
        h->sub_bits = first->sub_bits;
        h->n_buckets = first->n_buckets;
    }
}

lg_stage_stats *lg_stats_new(void)
{
    lg_stage_stats *s = malloc(lg_stats_block_bytes());
    if (s) lg_stats_init(s, 0);
    return s;
}

static void min_nonzero(int64_t *dst, int64_t v)
{
    if (v && (!*dst || v < *dst)) *dst = v;
}

void lg_stats_merge(lg_stage_stats *dst, const lg_stage_stats *src)
{
    dst->dispatched += src->dispatched;
    dst->done += src->done;
    dst->lag_over += src->lag_over;
    dst->failed += src->failed;
    dst->completed += src->completed;
    dst->good += src->good;
    for (int i = 0; i < LG_N_CLASSES; i++)
        dst->fail_class[i] += src->fail_class[i];
    for (int i = 0; i < LG_HTTP_CODES; i++)
        dst->fail_http[i] += src->fail_http[i];
    dst->input_tokens += src->input_tokens;
    dst->output_tokens += src->output_tokens;
    dst->cached_tokens += src->cached_tokens;
    dst->cached_of_tokens += src->cached_of_tokens;
    dst->events += src->events;
    min_nonzero(&dst->first_dispatch_ns, src->first_dispatch_ns);
    min_nonzero(&dst->first_intended_ns, src->first_intended_ns);
    if (src->last_dispatch_ns > dst->last_dispatch_ns)
        dst->last_dispatch_ns = src->last_dispatch_ns;
    if (src->last_intended_ns > dst->last_intended_ns)
        dst->last_intended_ns = src->last_intended_ns;
    if (src->last_end_ns > dst->last_end_ns) dst->last_end_ns = src->last_end_ns;
    dst->truth_n += src->truth_n;
    dst->truth_queue_ns += src->truth_queue_ns;
    dst->truth_prefill_ns += src->truth_prefill_ns;
    dst->truth_decode_ns += src->truth_decode_ns;
    dst->truth_client_ns += src->truth_client_ns;
    dst->truth_ttft_ns += src->truth_ttft_ns;
    dst->truth_measured_ttft_ns += src->truth_measured_ttft_ns;
    dst->truth_measured_ttft_u_ns += src->truth_measured_ttft_u_ns;
    dst->rx_kernel_tokens += src->rx_kernel_tokens;
    dst->rx_exact_tokens += src->rx_exact_tokens;
    dst->rx_user_tokens += src->rx_user_tokens;
    dst->pickups += src->pickups;
    dst->rx_wire_tokens += src->rx_wire_tokens;
    dst->wire_fallbacks += src->wire_fallbacks;
    dst->departures += src->departures;
    dst->departure_fallbacks += src->departure_fallbacks;
    dst->cap_packets += src->cap_packets;
    dst->cap_drops += src->cap_drops;
    dst->cap_cost_ns += src->cap_cost_ns;
    dst->loop_window_ns += src->loop_window_ns;
    dst->loop_idle_ns += src->loop_idle_ns;
    dst->svc_n += src->svc_n;
    dst->svc_sum_ns += src->svc_sum_ns;
    dst->svc_sumsq_ns2 += src->svc_sumsq_ns2;
    dst->run_delay_ns += src->run_delay_ns;
    dst->nivcsw += src->nivcsw;
    dst->host_steal_ns += src->host_steal_ns;
    dst->host_cpu_ns += src->host_cpu_ns;
    dst->not_dispatched += src->not_dispatched;
    for (int i = 0; i < LG_MAX_LORA; i++)
        dst->lora_requests[i] += src->lora_requests[i];
    dst->not_dispatched_partial += src->not_dispatched_partial;
    for (int i = 0; i < LG_N_HISTS; i++)
        mdl_hist_merge(lg_stats_hist(dst, i), lg_stats_hist_c(src, i));
}

void lg_stats_record_dispatch(lg_stage_stats *s, int64_t intended_ns, int64_t dispatch_ns,
                              int64_t lag_bound_ns)
{
    int64_t lag = dispatch_ns - intended_ns;
    if (lag < 0) lag = 0;
    mdl_hist_record(lg_stats_hist(s, LG_H_LAG), (uint64_t)lag);
    if (!s->first_dispatch_ns) s->first_dispatch_ns = dispatch_ns;
    if (!s->first_intended_ns || intended_ns < s->first_intended_ns)
        s->first_intended_ns = intended_ns;
    if (dispatch_ns > s->last_dispatch_ns) s->last_dispatch_ns = dispatch_ns;
    if (intended_ns > s->last_intended_ns) s->last_intended_ns = intended_ns;
    if (lag_bound_ns > 0 && lag > lag_bound_ns) lg_stats_live_add(&s->lag_over, 1);
    lg_stats_live_add(&s->dispatched, 1);
}

static void rec(lg_stage_stats *s, int id, int64_t v)
{
    mdl_hist_record(lg_stats_hist(s, id), v > 0 ? (uint64_t)v : 0);
}

int lg_goodput_ok(const lg_goodput *g, const lg_req_result *r)
{
    if (r->cls != LG_OK) return 0;
    if (!g->enabled) return 1;
    int64_t e2e = r->end_ns - r->intended_ns;
    int64_t n = r->output_tokens;
    const int64_t *slo = g->slo_ns;
    if (slo[LG_M_E2EL] && e2e > slo[LG_M_E2EL]) return 0;
    if (slo[LG_M_TTFT] &&
        (!r->first_token_ns || r->first_token_ns - r->intended_ns > slo[LG_M_TTFT]))
        return 0;
    if (slo[LG_M_TPOT] && n > 1 && r->first_token_ns &&
        (r->end_ns - r->first_token_ns) / (n - 1) > slo[LG_M_TPOT])
        return 0;
    if (slo[LG_M_NTPOT] && (n < 1 || e2e / n > slo[LG_M_NTPOT])) return 0;
    if (slo[LG_M_ITL] && r->max_itl_ns > slo[LG_M_ITL]) return 0;
    return 1;
}

void lg_stats_record_request(lg_stage_stats *s, const lg_req_result *r, const lg_goodput *g)
{
    if (r->end_ns > s->last_end_ns) s->last_end_ns = r->end_ns;
    if (r->cls != LG_OK) {
        rec(s, LG_H_FAILED, r->end_ns - r->intended_ns);
        lg_class c = r->cls;
        /* An HTTP failure without a code the table holds would be in no
         * class: counted as other, so the classes always sum to failed. */
        if (c == LG_FAIL_HTTP && (r->http_status <= 0 || r->http_status >= LG_HTTP_CODES))
            c = LG_FAIL_OTHER;
        s->fail_class[c]++;
        if (c == LG_FAIL_HTTP) s->fail_http[r->http_status]++;
        lg_stats_live_add(&s->failed, 1);
        lg_stats_live_add(&s->done, 1);
        return;
    }
    s->completed++;
    s->input_tokens += r->input_tokens > 0 ? (uint64_t)r->input_tokens : 0;
    s->output_tokens += r->output_tokens > 0 ? (uint64_t)r->output_tokens : 0;
    if (r->has_cached && r->input_tokens > 0) {
        s->cached_tokens += r->cached_tokens > 0 ? (uint64_t)r->cached_tokens : 0;
        s->cached_of_tokens += (uint64_t)r->input_tokens;
    }
    if (lg_goodput_ok(g, r)) s->good++;
    if (r->sent_wire_ns) {
        rec(s, LG_H_SEND_WIRE, r->sent_wire_ns - r->dispatch_ns);
        if (r->first_token_ns) rec(s, LG_H_TTFT_W, r->first_token_ns - r->sent_wire_ns);
    }
    int64_t n = r->output_tokens;
    const int64_t starts[2] = {r->intended_ns, r->dispatch_ns};
    const int base[2] = {LG_H_TTFT_I, LG_H_TTFT_D};
    for (int k = 0; k < 2; k++) {
        int64_t e2e = r->end_ns - starts[k];
        rec(s, base[k] + 2, e2e); /* E2EL */
        if (r->first_token_ns) {
            int64_t ttft = r->first_token_ns - starts[k];
            rec(s, base[k] + 0, ttft);
            if (n > 1) rec(s, base[k] + 1, (e2e - ttft) / (n - 1));
        }
        if (n > 0) rec(s, base[k] + 3, e2e / n);
    }
    {
        /* user time: what a client stamping on processing would record */
        int64_t end_u = r->end_u_ns ? r->end_u_ns : r->end_ns;
        int64_t first_u = r->first_token_u_ns ? r->first_token_u_ns : r->first_token_ns;
        int64_t e2e = end_u - r->intended_ns;
        rec(s, LG_H_E2EL_U, e2e);
        if (first_u) {
            int64_t ttft = first_u - r->intended_ns;
            rec(s, LG_H_TTFT_U, ttft);
            if (n > 1) rec(s, LG_H_TPOT_U, (e2e - ttft) / (n - 1));
        }
        if (n > 0) rec(s, LG_H_NTPOT_U, e2e / n);
    }
    if (r->has_truth && n > 0) {
        double q = (double)r->truth_queue_ns / (double)n,
               p = (double)r->truth_prefill_ns / (double)n;
        double d = (double)r->truth_decode_ns / (double)n;
        double ntpot = (double)(r->end_ns - r->intended_ns) / (double)n;
        s->truth_n++;
        s->truth_queue_ns += q;
        s->truth_prefill_ns += p;
        s->truth_decode_ns += d;
        s->truth_client_ns += ntpot - q - p - d;
        s->truth_ttft_ns += (double)(r->truth_queue_ns + r->truth_prefill_ns);
        if (r->first_token_ns > 0) {
            s->truth_measured_ttft_ns += (double)(r->first_token_ns - r->intended_ns);
            int64_t fu = r->first_token_u_ns ? r->first_token_u_ns : r->first_token_ns;
            s->truth_measured_ttft_u_ns += (double)(fu - r->intended_ns);
        }
    }
    lg_stats_live_add(&s->done, 1);
}
