/* lg_probe: Inference Perf's saturation probe, then the sweep it places
 * (lg_probe.h). */
#include "lg_probe.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_outputs.h"
#include "lg_run.h"
#include "lg_sweep.h"
#include "rb_json.h"

void lg_probe_sample(lg_probe *p, int64_t now_ns, int64_t t0_ns, uint64_t dispatched, uint64_t done,
                     uint64_t failed)
{
    if (!p || t0_ns <= 0 || now_ns < t0_ns || now_ns < p->next_ns || p->n >= p->cap) return;
    if (!p->t0_ns) p->t0_ns = t0_ns;
    if (now_ns >= p->t0_ns + p->timeout_ns) return; /* past the timeout: not counted */
    p->t_ns[p->n] = now_ns;
    p->in_flight[p->n] = (int64_t)(dispatched - done);
    p->n++;
    p->dispatched = dispatched;
    p->done = done;
    p->failed = failed;
    p->next_ns = now_ns + LG_PROBE_SAMPLE_NS;
}

/* The result names: the sweep's (kept in o, so that its default name is
 * the one fixed before the probe) and the probe's, NAME-probe.json. */
static void probe_names(lg_opts *o, lg_opts *po, lg_probe *pr)
{
    if (!o->save_result) return;
    if (!o->result_filename[0]) {
        lg_opts named = *o;
        named.n_stages = 2; /* a sweep's default name */
        lg_outputs_default_name(&named, o->result_filename, sizeof o->result_filename);
    }
    const char *name = o->result_filename, *dot = strrchr(name, '.');
    int stem = dot && strcmp(dot, ".json") == 0 ? (int)(dot - name) : (int)strlen(name);
    snprintf(po->result_filename, sizeof po->result_filename, "%.*s-probe.json", stem, name);
    snprintf(pr->result_file, sizeof pr->result_file, "%s/%s", o->result_dir, po->result_filename);
}

int lg_probe_run(lg_opts *o)
{
    lg_probe *pr = calloc(1, sizeof *pr);
    lg_opts *po = malloc(sizeof *po);
    if (!pr || !po) {
        free(pr);
        free(po);
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    *po = *o;
    pr->timeout_ns = o->sweep_probe_timeout_ns;
    pr->requests = o->sweep_probe_requests;
    pr->rate_per_s = o->stages[0].rate_per_s;
    pr->window_ns = o->stages[0].duration_ns;
    pr->percentile = o->sweep_probe_percentile;
    pr->kind = o->sweep;
    pr->stage_duration_ns = o->stage_duration_ns;
    /* a sample every 0.5 s until the timeout, and a few to spare */
    int64_t cap = pr->timeout_ns / LG_PROBE_SAMPLE_NS + 4;
    pr->cap = cap > (1 << 20) ? (1 << 20) : (int)cap;
    pr->t_ns = calloc((size_t)pr->cap, sizeof *pr->t_ns);
    pr->in_flight = calloc((size_t)pr->cap, sizeof *pr->in_flight);
    pr->rates = calloc((size_t)pr->cap, sizeof *pr->rates);
    int rc = 1;
    if (!pr->t_ns || !pr->in_flight || !pr->rates) {
        fprintf(stderr, "loadgen: out of memory\n");
        goto out;
    }
    probe_names(o, po, pr);
    /* The probe: its one stage, no knee stop, and in-flight requests
     * cancelled at the timeout (Inference Perf cancels them there too). */
    po->probe = pr;
    po->probe_found = NULL;
    po->sweep_until_saturation = 0;
    po->drain_timeout_ns = pr->timeout_ns > pr->window_ns ? pr->timeout_ns - pr->window_ns : 0;
    if (!o->quiet)
        fprintf(stderr,
                "loadgen: saturation probe: %lld requests at %.2f requests/s, in flight sampled "
                "every 0.5 s for %.1f s\n",
                (long long)pr->requests, pr->rate_per_s, (double)pr->timeout_ns / 1e9);
    rc = lg_run(po);
    if (rc) {
        fprintf(stderr, "loadgen: the saturation probe ended with exit %d: no sweep was run\n", rc);
        goto out;
    }
    pr->n_rates =
        lg_sweep_burn_rates(pr->t_ns, pr->in_flight, pr->n, pr->t0_ns + pr->timeout_ns, pr->rates);
    if (pr->n_rates <= 1) {
        /* Inference Perf stops here too ("failed to gather enough samples") */
        fprintf(stderr,
                "loadgen: saturation probe: the in-flight count fell in %d of its %d samples' "
                "intervals before the %.1f s timeout; at least 2 are needed to place a sweep: "
                "send more requests (--sweep-probe-requests, load.sweep.num_requests) or wait "
                "longer (--sweep-probe-timeout, load.sweep.timeout)%s\n",
                pr->n_rates, pr->n > 0 ? pr->n - 1 : 0, (double)pr->timeout_ns / 1e9,
                pr->failed * 2 > pr->done ? "; most of its requests failed (see its report)" : "");
        rc = 1;
        goto out;
    }
    pr->saturation_rate = lg_sweep_percentile(pr->rates, pr->n_rates, pr->percentile);
    pr->n_stages = o->sweep_stages;
    if (lg_sweep_probe_rates(o->sweep, pr->n_stages, pr->saturation_rate, pr->stage_rates)) {
        fprintf(stderr,
                "loadgen: saturation probe: a saturation rate of %.4g requests/s places a stage "
                "at 0 requests/s: no sweep was run\n",
                pr->saturation_rate);
        rc = 1;
        goto out;
    }
    for (int i = 0; i < pr->n_stages; i++)
        o->stages[i] =
            (lg_stage){.rate_per_s = pr->stage_rates[i], .duration_ns = o->stage_duration_ns};
    o->n_stages = pr->n_stages;
    o->probe_found = pr;
    if (!o->quiet) {
        fprintf(stderr,
                "loadgen: saturation probe: %.2f requests/s (the p%g of %d burn-down rates); "
                "%d %s stages:",
                pr->saturation_rate, pr->percentile, pr->n_rates, pr->n_stages,
                pr->kind == LG_SWEEP_LINEAR ? "linear" : "geometric");
        for (int i = 0; i < pr->n_stages; i++)
            fprintf(stderr, "%s %.2f", i ? "," : "", pr->stage_rates[i]);
        fprintf(stderr, " requests/s\n");
    }
    rc = lg_run(o);
out:
    o->probe_found = NULL;
    free(pr->t_ns);
    free(pr->in_flight);
    free(pr->rates);
    free(pr);
    free(po);
    return rc;
}

void lg_probe_json(cJSON *j, const lg_probe *p)
{
    if (!p) {
        cJSON_AddNullToObject(j, "sweep_probe");
        return;
    }
    cJSON *s = cJSON_AddObjectToObject(j, "sweep_probe");
    rb_json_put_num(s, "requests", (double)p->requests);
    rb_json_put_num(s, "rate_per_s", p->rate_per_s);
    rb_json_put_num(s, "send_window_s", (double)p->window_ns / 1e9);
    rb_json_put_num(s, "timeout_s", (double)p->timeout_ns / 1e9);
    rb_json_put_num(s, "sample_interval_s", (double)LG_PROBE_SAMPLE_NS / 1e9);
    rb_json_put_num(s, "samples", p->n);
    rb_json_put_num(s, "dispatched", (double)p->dispatched);
    rb_json_put_num(s, "done", (double)p->done);
    rb_json_put_num(s, "failed", (double)p->failed);
    cJSON *r = cJSON_AddArrayToObject(s, "burn_down_rates_per_s");
    for (int i = 0; r && i < p->n_rates; i++)
        cJSON_AddItemToArray(r, cJSON_CreateNumber(p->rates[i]));
    rb_json_put_num(s, "saturation_percentile", p->percentile);
    rb_json_put_num(s, "saturation_rate_per_s", p->saturation_rate);
    cJSON_AddStringToObject(s, "spacing", p->kind == LG_SWEEP_LINEAR ? "linear" : "geometric");
    cJSON *st = cJSON_AddArrayToObject(s, "stage_rates_per_s");
    for (int i = 0; st && i < p->n_stages; i++)
        cJSON_AddItemToArray(st, cJSON_CreateNumber(p->stage_rates[i]));
    rb_json_put_num(s, "stage_duration_s", (double)p->stage_duration_ns / 1e9);
    if (p->result_file[0])
        cJSON_AddStringToObject(s, "result_file", p->result_file);
    else
        cJSON_AddNullToObject(s, "result_file");
}
