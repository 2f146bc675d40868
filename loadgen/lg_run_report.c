/* lg_run_report: the second half of the coordinator (lg_run_report.h):
 * a run's merged results judged (lg_judge.h), the summary printed, and with
 * --save-result the per-request records committed (lg_outputs.h) and the
 * result file written, with --mpi's and a salvage's sections and, with
 * --save-detailed, vLLM's per-request arrays read back from the JSONL. */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_bias.h"
#include "lg_export.h"
#include "lg_judge.h"
#include "lg_run_report.h"
#include "lg_run_state.h"
#include "lg_signals.h"
#include "lg_promql.h"
#include "lg_scrape.h"
#include "rb_file.h"

/* Why the run's arrivals cannot be tested (NULL: they can), and the
 * process that was asked for. */
static const char *arrival_skip(const lg_plan *p, char *model, size_t cap)
{
    const lg_opts *o = p->o;
    if (isinf(o->burstiness))
        snprintf(model, cap, "constant");
    else
        snprintf(model, cap, "gamma(shape=%g)", o->burstiness);
    if (p->closed) return "closed loop: no arrival process to test";
    if (p->n_trace) return "trace replay: arrival times come from the trace";
    if (isinf(p->spec.stages[0].rate_per_s)) return "infinite rate: all requests at once";
    return NULL;
}

/* "worker 1 killed by signal 9 (Killed); ..." for the lost workers. */
static void lost_note_of(const lg_runstate *r, int k, char *note, size_t cap)
{
    note[0] = '\0';
    for (int w = 0; w < k; w++) {
        if (!r->lost[w]) continue;
        size_t n = strlen(note);
        if (lg_fleet_where(r->fleet)->per_rank)
            snprintf(note + n, cap - n, "%srank %d lost", n ? "; " : "", w);
        else if (r->lost_sig[w])
            snprintf(note + n, cap - n, "%sworker %d killed by signal %d (%s)", n ? "; " : "", w,
                     r->lost_sig[w], strsignal(r->lost_sig[w]));
        else
            snprintf(note + n, cap - n, "%sworker %d failed", n ? "; " : "", w);
    }
}

/* The server's side: the top-level "server_metrics" (null: not scraped),
 * each stage's, and the knee's evidence. */
static void server_metrics_json(const lg_runstate *r, const lg_report *rep, cJSON *j)
{
    const lg_opts *o = r->o;
    lg_scrape *sc = r->coord.scrape;
    lg_srvm *m = lg_scrape_metrics(sc);
    if (sc)
        cJSON_AddItemToObject(j, "server_metrics",
                              lg_scrape_json(sc, o->percentiles, o->n_percentiles));
    else
        cJSON_AddNullToObject(j, "server_metrics");
    cJSON *st = cJSON_GetObjectItem(j, "stages");
    int per_stage = m && lg_srvm_run_window(m) == r->plan.n_stages;
    for (int i = 0; st && i < cJSON_GetArraySize(st); i++) {
        cJSON *e = cJSON_GetArrayItem(st, i), *sm;
        if (!per_stage) {
            cJSON_AddNullToObject(e, "server_metrics");
        } else if ((sm = cJSON_AddObjectToObject(e, "server_metrics"))) {
            cJSON_AddNumberToObject(sm, "scrapes", lg_srvm_scrapes(m, i));
            cJSON_AddItemToObject(sm, "metrics",
                                  lg_srvm_json(m, i, o->percentiles, o->n_percentiles));
        }
    }
    lg_promql *q = r->coord.promql;
    if (q) {
        cJSON_AddItemToObject(j, "prometheus", lg_promql_json(q));
        for (int i = 0; st && i < cJSON_GetArraySize(st); i++) {
            cJSON *w = lg_promql_stage_json(q, i);
            if (w)
                cJSON_AddItemToObject(cJSON_GetArrayItem(st, i), "prometheus", w);
            else
                cJSON_AddNullToObject(cJSON_GetArrayItem(st, i), "prometheus");
        }
    }
    cJSON *knee = cJSON_GetObjectItem(j, "knee");
    if (rep->knee.found && cJSON_IsObject(knee)) {
        char ev[200];
        lg_srvm_evidence(per_stage ? m : NULL, rep->knee.stage,
                         rep->knee.cause == LG_SAT_SERVER ? 2 : 1, ev, sizeof ev);
        cJSON_AddStringToObject(knee, "evidence", ev);
    }
}

/* The summary's lines of the server's side. */
static void server_metrics_summary(const lg_runstate *r, const lg_report *rep, FILE *f)
{
    lg_scrape *sc = r->coord.scrape;
    lg_srvm *m = lg_scrape_metrics(sc);
    char line[800];
    if (sc) {
        lg_scrape_line(sc, line, sizeof line);
        fprintf(f, "Server metrics: %s\n", line);
    }
    if (rep->knee.found) {
        int per_stage = m && lg_srvm_run_window(m) == r->plan.n_stages;
        lg_srvm_evidence(per_stage ? m : NULL, rep->knee.stage,
                         rep->knee.cause == LG_SAT_SERVER ? 2 : 1, line, sizeof line);
        fprintf(f, "Knee evidence: %s\n", line);
    }
}

/* --save-detailed: the per-request arrays that vLLM's bench keeps in its
 * result with --save-detailed (serve.py: input_lens, output_lens, ttfts,
 * itls, start_times, errors; generated_texts not, as the records keep no
 * text), read back from the committed JSONL with the export's reader and
 * written by its writer, so they hold the values `--report-format vllm` gives. Entry i of
 * each array is line i of the JSONL: the file's order (worker by worker,
 * each in the order its requests ended), not sorted by index as the
 * export's are. Linear: the records once in memory (as the export holds
 * them), the arrays streamed to the file. They cover the JSONL whole or are
 * left out: with records lost (a ".partial" JSONL, the report counting
 * requests the file lacks), no JSONL, under --mpi (each rank's records are
 * in its own file) or when the JSONL cannot be read back. j then says
 * "detailed_arrays": null and why in "detailed_arrays_omitted"; else
 * "detailed_arrays" is the entries of each. Returns x with the records, or
 * NULL (*bad set when they were wanted but could not be read: on stderr). */
static const lg_xrecs *detailed_arrays(const lg_runstate *r, const lg_record_count *rc_, cJSON *j,
                                       lg_xrecs *x, int *bad)
{
    char err[512], why[600];
    if (r->records)
        snprintf(why, sizeof why, "--mpi: each rank's records are in its own JSONL");
    else if (!rc_->path)
        snprintf(why, sizeof why, "no JSONL was written");
    else if (rc_->lost)
        snprintf(why, sizeof why,
                 "%llu per-request records lost: the arrays would not cover the report's "
                 "requests",
                 (unsigned long long)rc_->lost);
    else if (lg_xrecs_read(x, rc_->path, 0, err, sizeof err) == 0) {
        cJSON_AddNumberToObject(j, "detailed_arrays", (double)x->n);
        return x;
    } else {
        lg_xrecs_free(x);
        snprintf(why, sizeof why, "cannot read the JSONL back: %s", err);
        fprintf(stderr, "loadgen: the per-request arrays are left out of the result: %s\n", err);
        *bad = 1;
    }
    cJSON_AddNullToObject(j, "detailed_arrays");
    cJSON_AddStringToObject(j, "detailed_arrays_omitted", why);
    return NULL;
}

/* The result's text (and the arrays of x, unless NULL) written atomically
 * to path. Returns 0 or -errno. */
static int write_result(const char *path, const char *txt, const lg_xrecs *x)
{
    if (!x) return rb_write_file_atomic(path, txt, strlen(txt));
    rb_afile f;
    int rc = rb_afile_open(&f, path);
    if (rc) return rc;
    lg_export_arrays(f.fp, txt, x,
                     LG_XA_INPUT_LENS | LG_XA_OUTPUT_LENS | LG_XA_TTFTS | LG_XA_ITLS |
                         LG_XA_START_TIMES | LG_XA_ERRORS);
    return rb_afile_commit(&f);
}

/* The per-request records (--save-detailed) committed into the JSONL, or
 * under --mpi the count the ranks committed. Returns 1 when some were
 * lost, else 0. */
static int commit_records(lg_runstate *r, int k, const lg_slot *const *slots,
                          lg_record_count *rc_out)
{
    const lg_opts *o = r->o;
    lg_record_count rc_ = {0};
    int exit_code = 0;
    if (r->records) {
        rc_ = *r->records; /* each rank committed its own (lg_fleet_mpi.c) */
        exit_code |= rc_.lost > 0;
    } else if (o->save_detailed) {
        lg_signals_phase("join");
        lg_outputs_commit(&r->out, k, slots, r->lost, &rc_);
        if (rc_.lost) {
            fprintf(stderr, "loadgen: %llu of %llu per-request records lost (%s); %s%s\n",
                    (unsigned long long)rc_.lost, (unsigned long long)(rc_.lost + rc_.written),
                    rb_file_strerror(rc_.err ? rc_.err : -EIO),
                    rc_.path ? "the rest are in " : "no JSONL written", rc_.path ? rc_.path : "");
            exit_code = 1;
        }
        if (rc_.left_out)
            fprintf(stderr,
                    "loadgen: %llu records of lost workers left out of the JSONL, as "
                    "their requests are of the report\n",
                    (unsigned long long)rc_.left_out);
    }
    *rc_out = rc_;
    return exit_code;
}

/* The result's sections beyond the report's: the server's metrics, the
 * records' file and counts and (--save-detailed) their arrays, read into
 * x (returned, or NULL: none), and the fleet's (a salvage's and --mpi's). */
static const lg_xrecs *result_sections(lg_runstate *r, int k, const lg_report *rep_,
                                       const lg_record_count *rc_, cJSON *j, lg_xrecs *x,
                                       int *exit_code)
{
    const lg_opts *o = r->o;
    lg_plan *p = &r->plan;
    const lg_xrecs *arr = NULL;
    if (j) server_metrics_json(r, rep_, j);
    if (j && o->save_detailed) {
        const char *base = rc_->path ? strrchr(rc_->path, '/') : NULL;
        if (rc_->path)
            cJSON_AddStringToObject(j, "detailed_file", base ? base + 1 : rc_->path);
        else
            cJSON_AddNullToObject(j, "detailed_file");
        cJSON_AddNumberToObject(j, "detailed_records", (double)rc_->written);
        cJSON_AddNumberToObject(j, "detailed_records_lost", (double)rc_->lost);
        cJSON_AddNumberToObject(j, "detailed_records_left_out", (double)rc_->left_out);
        arr = detailed_arrays(r, rc_, j, x, exit_code);
    }
    lg_fleet_report_json(r->fleet, p, r->lost, k, j);
    return arr;
}

/* The result written (without the arrays if the disk has no room for
 * them), then the --report-format exports unless a second signal came
 * (then the result says interrupted). Returns 0 or 1. */
static int write_result_and_exports(lg_runstate *r, const lg_report *rep_, cJSON *j,
                                    const lg_xrecs *arr, lg_xrecs *x, const lg_record_count *rc_)
{
    const lg_opts *o = r->o;
    int exit_code = 0;
    char *txt = j ? cJSON_Print(j) : NULL;
    int rc = txt ? write_result(r->out.json, txt, arr) : -ENOMEM;
    if (rc && arr) { /* a disk too full for the arrays may take the rest */
        fprintf(stderr,
                "loadgen: cannot write %s with the per-request arrays: %s; "
                "writing it without them\n",
                r->out.json, rb_file_strerror(rc));
        exit_code = 1;
        arr = NULL;
        cJSON_ReplaceItemInObject(j, "detailed_arrays", cJSON_CreateNull());
        cJSON_AddStringToObject(j, "detailed_arrays_omitted",
                                "the result could not be written with them");
        free(txt);
        txt = cJSON_Print(j);
        rc = txt ? write_result(r->out.json, txt, NULL) : -ENOMEM;
    }
    if (rc) {
        fprintf(stderr, "loadgen: cannot write %s: %s\n", r->out.json, rb_file_strerror(rc));
        exit_code = 1;
    } else {
        fprintf(stderr, "loadgen: wrote %s\n", r->out.json);
        r->wrote = 1;
        lg_signals_phase("export");
        if (o->report_formats && lg_signals_late() > 1) {
            fprintf(stderr, "loadgen: a second signal: the --report-format exports are "
                            "skipped\n");
            if (!rep_->interrupted) { /* written before it came: says so now */
                free(txt);
                cJSON_ReplaceItemInObject(j, "interrupted", cJSON_CreateTrue());
                txt = cJSON_Print(j);
                if (!txt || write_result(r->out.json, txt, arr)) exit_code = 1;
            }
        } else {
            lg_xrecs_free(x); /* the export reads its own */
            if (lg_export_run(o, r->out.json, rc_->path)) exit_code = 1; /* --report-format */
        }
    }
    free(txt);
    return exit_code;
}

/* --save-result: the records, then the result file and the exports.
 * Returns 0 or 1. */
static int save_result(lg_runstate *r, int k, const lg_slot *const *slots, lg_report *rep_)
{
    lg_record_count rc_;
    int exit_code = commit_records(r, k, slots, &rc_);
    /* A second signal after the workers ended cuts the writing short
     * (no exports): the result says so. */
    if (lg_signals_late() > 1) rep_->interrupted = 1;
    cJSON *j = lg_report_json(rep_);
    lg_xrecs x = {0}; /* --save-detailed: the records of the result's arrays */
    const lg_xrecs *arr = j ? result_sections(r, k, rep_, &rc_, j, &x, &exit_code) : NULL;
    if (write_result_and_exports(r, rep_, j, arr, &x, &rc_)) exit_code = 1;
    cJSON_Delete(j);
    lg_xrecs_free(&x);
    return exit_code;
}

int lg_run_report(lg_runstate *r, int k, const lg_slot *const *slots,
                  const lg_stage_stats *const *blocks, lg_merged *m)
{
    lg_opts *o = r->o;
    lg_plan *p = &r->plan;
    lg_shared *sh = lg_plan_shared(p);
    int exit_code = 0;
    lg_stage_view *views = calloc((size_t)p->n_stages, sizeof *views);
    lg_worker_bias *bias = calloc((size_t)k, sizeof *bias);
    char lost_note[512] = "";
    if (!views || !bias) {
        fprintf(stderr, "loadgen: out of memory merging results\n");
        free(views);
        free(bias);
        return 1;
    }
    int n_views = m->n_used;
    for (int s = 0; s < p->n_stages; s++)
        views[s] =
            (lg_stage_view){.rate_per_s = p->n_trace ? NAN : o->stages[s].rate_per_s,
                            .start_ns = p->closed && s > 0 ? m->stages[s]->first_intended_ns
                                                           : lg_coord_stage_start(&r->coord, s),
                            .duration_ns = p->n_trace ? p->total_dur_ns : o->stages[s].duration_ns,
                            .stats = m->stages[s]};
    char model[64];
    lg_judge_in jin = {
        .k = k,
        .n_stages = p->n_stages,
        .n_views = n_views,
        .n_cut = lg_judge_cut(n_views, sh->saturated_stage),
        .closed = p->closed,
        .lost = r->lost,
        .slots = slots,
        .blocks = blocks,
        .stages = (const lg_stage_stats *const *)m->stages,
        .total = m->total,
        .samples = m->samples,
        .n_samples = m->n_samples,
        .budget = {.safe_rho = r->safe_rho,
                   .mean_us = o->certificate[0] && isfinite(r->budget_us) ? r->budget_us
                                                                          : o->bias_budget_mean_us,
                   .p99_us = o->bias_budget_p99_us,
                   .transport_us = r->transport_us},
    };
    jin.arrival_skip = arrival_skip(p, model, sizeof model);
    jin.arrival_model = model;
    double max_rho, worst_wq;
    int stamps;
    lg_judge_workers(&jin, bias, &max_rho, &worst_wq, &stamps);
    for (int w = 0; w < k; w++) {
        if (!r->lost[w]) continue;
        bias[w].signal = r->lost_sig[w];
        exit_code = 1;
    }
    lost_note_of(r, k, lost_note, sizeof lost_note);
    if (lost_note[0]) fprintf(stderr, "loadgen: %s; its results are left out\n", lost_note);
    lg_report rep = {
        .o = o,
        .load_mode = lg_load_mode(o),
        .num_workers = r->num_workers,
        .request_rate = p->n_trace ? NAN : (o->n_stages == 1 ? o->stages[0].rate_per_s : NAN),
        .t0_ns = sh->t0_ns,
        .total = m->total,
        .total_duration_ns = p->bounded_by_time ? p->total_dur_ns : 0,
        .stages = views,
        .n_stages = n_views,
        .interrupted = sh->interrupted,
        .saturated_stage = sh->saturated_stage,
        .workers = bias,
        .n_workers = k,
        .stamps_seen = stamps,
        .predicted_wq_us = worst_wq,
        .max_rho = max_rho,
        .host = r->host,
        .lost_note = lost_note[0] ? lost_note : NULL,
        .prompt_pool_size = p->rgen ? 0 : p->ds.n,
        .prompt_per_request = p->rgen != NULL,
        .warmup = r->warmup.requested ? &r->warmup : NULL,
    };
    if (p->closed) rep.request_rate = NAN;
    lg_knee_verdict *sat = calloc((size_t)p->n_stages, sizeof *sat);
    if (sat && r->coord.knee) {
        lg_knee_watch_finish(r->coord.knee, (const lg_stage_stats *const *)m->stages, n_views,
                             sh->saturated_stage, sat, &rep.knee);
        rep.sat = sat;
    }
    snprintf(rep.certificate_note, sizeof rep.certificate_note, "%s", r->cert_note);
    rep.cert = r->cert_sum;
    /* The client's bias, stage by stage; the run's verdict is the worst
     * stage's. */
    lg_bias_stage *sb = calloc((size_t)(n_views > 0 ? n_views : 1), sizeof *sb);
    lg_bias_stage *run_b = calloc(1, sizeof *run_b);
    if (!sb || !run_b) {
        fprintf(stderr, "loadgen: out of memory judging the run\n");
        exit_code = 1;
    } else {
        rep.verdict_stage = lg_judge_run(&jin, max_rho, worst_wq, sb, run_b, &rep);
        rep.stage_bias = sb;
        rep.n_cut = jin.n_cut;
        rep.run_bias = run_b;
        rep.verdict = run_b->verdict;
        rep.achieved_ratio = run_b->achieved_ratio;
    }
    if (!o->quiet) {
        lg_report_summary(&rep, stdout);
        server_metrics_summary(r, &rep, stdout);
    }
    fflush(stdout);
    if (o->save_result && save_result(r, k, slots, &rep)) exit_code = 1;
    free(sb);
    free(run_b);
    free(views);
    free(bias);
    free(sat);
    return exit_code;
}
