/* lg_fleet: the interface of lg_fleet.h, each call passed to the back-end
 * that lg_fleet_open chose (lg_fleet_backend.h). */

#include "lg_fleet.h"

#include <stdio.h>
#include <stdlib.h>

#include "lg_fleet_backend.h"

lg_fleet *lg_fleet_open(const lg_opts *o, int *rc)
{
    lg_fleet *f = calloc(1, sizeof *f);
    if (!f) {
        fprintf(stderr, "loadgen: out of memory\n");
        *rc = 1;
        return NULL;
    }
    *rc = o->mpi               ? lg_fleet_mpi_open(f, o)
          : o->mpi_salvage > 0 ? lg_fleet_salvage_open(f, o)
                               : lg_fleet_fork_open(f, o);
    if (*rc) {
        free(f);
        return NULL;
    }
    return f;
}

const lg_fleet_place *lg_fleet_where(const lg_fleet *f)
{
    return &f->place;
}

void lg_fleet_close(lg_fleet *f)
{
    if (!f) return;
    if (f->ops->close) f->ops->close(f);
    free(f);
}

int lg_fleet_agree(lg_fleet *f, int rc)
{
    return f->ops->agree ? f->ops->agree(f, rc) : rc;
}

void lg_fleet_share(lg_fleet *f, void *buf, size_t n)
{
    if (f->ops->share) f->ops->share(f, buf, n);
}

int lg_fleet_workers_here(const lg_fleet *f, int k)
{
    return f->ops->workers_here ? f->ops->workers_here(f, k) : k;
}

void lg_fleet_set_certificate(lg_fleet *f, const char *note)
{
    if (f->ops->set_certificate) f->ops->set_certificate(f, note);
}

int lg_fleet_forks(const lg_fleet *f, const lg_opts *o)
{
    return f->ops->forks(f, o);
}

int lg_fleet_progress(const lg_fleet *f, const lg_opts *o)
{
    return f->ops->progress(f, o);
}

void lg_fleet_outputs(const lg_fleet *f, lg_outputs *out)
{
    if (f->ops->outputs) f->ops->outputs(f, out);
}

int64_t lg_fleet_start(lg_fleet *f, const lg_plan *p, int k)
{
    return f->ops->start(f, p, k);
}

int lg_fleet_watch(lg_fleet *f, const lg_plan *p, const lg_sched *stage_clock, int show,
                   int64_t now_ns)
{
    return f->ops->watch ? f->ops->watch(f, p, stage_clock, show, now_ns) : 0;
}

int lg_fleet_collect(lg_fleet *f, const lg_opts *o, lg_plan *p, lg_outputs *out,
                     const char *result_name, const lg_fleet_job *job, lg_fleet_results *res)
{
    return f->ops->collect(f, o, p, out, result_name, job, res);
}

void lg_fleet_results_free(lg_fleet_results *res)
{
    if (res->own) {
        lg_merged_free(&res->merged_);
        free(res->slots);
        free(res->blocks);
    }
    *res = (lg_fleet_results){0};
}

int lg_fleet_run(lg_fleet *f, lg_fleet_job *job)
{
    (void)f;
    return lg_fleet_fork_run(job);
}

int lg_fleet_salvage(lg_fleet *f, lg_plan *p, const char *dir, const char *result_name, int *lost)
{
    return f->ops->salvage ? f->ops->salvage(f, p, dir, result_name, lost) : 2;
}

void lg_fleet_salvage_clean(lg_fleet *f, const lg_plan *p, const char *dir, const char *result_name)
{
    if (f->ops->salvage_clean) f->ops->salvage_clean(f, p, dir, result_name);
}

void lg_fleet_report_json(const lg_fleet *f, const lg_plan *p, const int *lost, int k, cJSON *j)
{
    if (j && f->ops->report_json) f->ops->report_json(f, p, lost, k, j);
}
