/* lg_fleet_mpi: the mpi back-end of lg_fleet.h (its table, lg_fleet_backend.h):
 * one worker per rank, lg_mpi.h's clock sync before the run and its exchange
 * after it, each rank's snapshot for a salvage, and the salvage itself
 * (--mpi-salvage N: the snapshots of a run whose exchange never happened,
 * merged as that run's rank 0 would have). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lg_fleet_backend.h"
#include "lg_mpi.h"
#include "lg_mpi_snap.h"
#include "lg_progress.h"
#include "rb_file.h"

/* The back-end's state: the exchange, and at rank 0 its results. */
typedef struct mpi_be {
    lg_mpi *mpi;
    int progress; /* --mpi --progress: this rank sends, rank 0 shows */
    lg_mpi_fleet mf;
} mpi_be;

static mpi_be *be(const lg_fleet *f)
{
    return f->be;
}

static int mpi_agree(lg_fleet *f, int rc)
{
    return lg_mpi_max(be(f)->mpi, rc);
}

static void mpi_share(lg_fleet *f, void *buf, size_t n)
{
    lg_mpi_bcast(be(f)->mpi, buf, n);
}

/* Each host checks its own ranks against its own certificate. */
static int mpi_workers_here(const lg_fleet *f, int k)
{
    (void)k;
    return lg_mpi_ranks_here(be(f)->mpi);
}

static void mpi_set_certificate(lg_fleet *f, const char *note)
{
    lg_mpi_set_certificate(be(f)->mpi, note);
}

static int no_forks(const lg_fleet *f, const lg_opts *o)
{
    (void)f, (void)o;
    return 0;
}

/* The progress line is asked for (--progress: every rank reads the same
 * flags, and mpirun's stderr is no terminal): each rank sends its counters
 * once a second, rank 0 shows their combination (lg_mpi_progress). */
static int mpi_progress(const lg_fleet *f, const lg_opts *o)
{
    (void)o;
    return be(f)->progress && f->place.reporter;
}

static void mpi_outputs(const lg_fleet *f, lg_outputs *out)
{
    lg_outputs_for_rank(out, f->place.first);
}

/* About 1 s ahead: the clock sync and every rank's last setup fit. */
static int64_t mpi_start(lg_fleet *f, const lg_plan *p, int k)
{
    (void)p, (void)k;
    return lg_mpi_start(be(f)->mpi, 1000000000LL);
}

static int mpi_watch(lg_fleet *f, const lg_plan *p, const lg_sched *stage_clock, int show,
                     int64_t now)
{
    lg_mpi_watch(be(f)->mpi, now);
    if (!be(f)->progress || now < lg_plan_shared(p)->t0_ns) return 0;
    uint64_t mine[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)],
        all[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)];
    unsigned char is_max[LG_PROGRESS_NCOUNTS(LG_PROGRESS_MAX_STAGES)];
    int n = LG_PROGRESS_NCOUNTS(p->n_stages);
    lg_progress_counts(p, mine);
    lg_progress_counts_max(p->n_stages, is_max);
    if (lg_mpi_progress(be(f)->mpi, mine, n, is_max, all, now) && show)
        lg_progress_print_counts(p, stage_clock, now, all);
    return 1;
}

/* After the run: each rank commits its records and writes its snapshot,
 * the exchange brings everything to rank 0, which reports. */
static int mpi_collect(lg_fleet *f, const lg_opts *o, lg_plan *p, lg_outputs *out,
                       const char *result_name, const lg_fleet_job *job, lg_fleet_results *res)
{
    int rank = f->place.first, n_ranks = f->place.k, exit_code = 0;
    lg_record_count rec = {0};
    const lg_slot *mine = lg_plan_slot(p, rank);
    if (o->save_detailed) {
        lg_outputs_commit(out, 1, &mine, job->lost, &rec);
        if (rec.lost) {
            fprintf(stderr, "loadgen: rank %d: %llu of %llu per-request records lost (%s)\n", rank,
                    (unsigned long long)rec.lost, (unsigned long long)(rec.lost + rec.written),
                    rb_file_strerror(rec.err ? rec.err : -EIO));
            exit_code = 1;
        }
    }
    /* This rank's final slot, for a salvage if the exchange never happens. */
    char snap[2200] = "";
    lg_shared *sh = lg_plan_shared(p);
    if (o->save_result) {
        lg_mpi_to_root_clock(be(f)->mpi, p);
        lg_mpi_snap_path(o->result_dir, result_name, rank, snap, sizeof snap);
        int src =
            lg_mpi_snap_write(snap, p, rank, n_ranks, lg_mpi_t0_root(be(f)->mpi), sh->interrupted);
        if (src) {
            fprintf(stderr, "loadgen: rank %d: cannot write %s: %s\n", rank, snap,
                    rb_file_strerror(src));
            snap[0] = '\0';
        }
    }
    /* Every rank says it is done; the exchange runs over the survivors. */
    int gone =
        lg_mpi_survivors(be(f)->mpi, p->end_deadline_ns ? p->end_deadline_ns + 3000000000LL : 0);
    if (gone == -EIO) fprintf(stderr, "loadgen: rank %d: cannot form the survivors' group\n", rank);
    if (gone < 0) return 1;
    uint64_t counts[3] = {rec.written, rec.lost, rec.left_out};
    lg_mpi_sum_u64(be(f)->mpi, counts, 3);
    sh->interrupted = lg_mpi_max(be(f)->mpi, sh->interrupted);
    sh->saturated_stage = -1;
    int rc = lg_mpi_collect(be(f)->mpi, p, job->lost[0], &be(f)->mf);
    if (snap[0]) unlink(snap); /* the exchange happened */
    if (rank != 0) return exit_code;
    if (rc) {
        fprintf(stderr, "loadgen: out of memory merging results\n");
        return 1;
    }
    /* A lost rank of this host left its part: its records are counted
     * as left out (its requests are left out of the report) and removed. */
    for (int w = 1; w < n_ranks && o->save_detailed; w++) {
        long pid = lg_mpi_local_pid(be(f)->mpi, w);
        if (be(f)->mf.lost[w] && pid)
            counts[2] += lg_outputs_drop_lost_part(o->result_dir, result_name, pid);
    }
    for (int w = 1; w < n_ranks && o->save_result; w++) {
        if (!be(f)->mf.lost[w]) continue;
        lg_mpi_snap_path(o->result_dir, result_name, w, snap, sizeof snap);
        unlink(snap); /* a rank lost after its snapshot: this report is the run's */
        if (!lg_mpi_local_pid(be(f)->mpi, w)) continue;
        lg_outputs theirs;
        lg_outputs_init(&theirs, out->json);
        lg_outputs_for_rank(&theirs, w);
        snprintf(snap, sizeof snap, "%s.lock", theirs.json);
        unlink(snap); /* its lock, left by its death */
    }
    res->records_ = (lg_record_count){.written = counts[0],
                                      .lost = counts[1],
                                      .left_out = counts[2],
                                      .err = rec.err,
                                      .path = rec.path};
    res->records = o->save_detailed ? &res->records_ : NULL;
    res->k = n_ranks;
    res->slots = be(f)->mf.slots;
    res->blocks = be(f)->mf.blocks;
    res->merged = &be(f)->mf.merged;
    res->lost = be(f)->mf.lost;
    res->lost_sig = be(f)->mf.lost_sig;
    return exit_code;
}

static void any_degraded(const int *lost, int k, cJSON *j)
{
    int degraded = 0;
    for (int w = 0; w < k; w++)
        degraded |= lost[w];
    if (degraded) cJSON_AddBoolToObject(j, "degraded", 1);
}

static void mpi_report_json(const lg_fleet *f, const lg_plan *p, const int *lost, int k, cJSON *j)
{
    any_degraded(lost, k, j);
    cJSON_AddItemToObject(j, "mpi", lg_mpi_json(be(f)->mpi, &be(f)->mf, p));
}

static void mpi_close(lg_fleet *f)
{
    lg_mpi_fleet_free(&be(f)->mf);
    lg_mpi_finish(be(f)->mpi);
    free(f->be);
}

static const lg_fleet_ops mpi_ops = {
    .agree = mpi_agree,
    .share = mpi_share,
    .workers_here = mpi_workers_here,
    .set_certificate = mpi_set_certificate,
    .forks = no_forks,
    .progress = mpi_progress,
    .outputs = mpi_outputs,
    .start = mpi_start,
    .watch = mpi_watch,
    .collect = mpi_collect,
    .report_json = mpi_report_json,
    .close = mpi_close,
};

/* Each rank is one worker (--num-workers has no say). No knee watch and no
 * scrape: they would need every rank's histograms live, and MPI stays off
 * the run's hot path. */
int lg_fleet_mpi_open(lg_fleet *f, const lg_opts *o)
{
    if (o->sweep_until_saturation) {
        fprintf(stderr, "loadgen: --mpi: --sweep-until-saturation needs every worker's live "
                        "counters, which --mpi keeps off the network during the run\n");
        return 2;
    }
    if (!(f->be = calloc(1, sizeof(mpi_be)))) {
        fprintf(stderr, "loadgen: out of memory\n");
        return 1;
    }
    if (!(be(f)->mpi = lg_mpi_init())) {
        free(f->be);
        return 2;
    }
    f->ops = &mpi_ops;
    int rank = lg_mpi_rank(be(f)->mpi), n = lg_mpi_size(be(f)->mpi);
    f->place = (lg_fleet_place){
        .k = n, .first = rank, .n_slots = 1, .reporter = rank == 0, .live = 0, .per_rank = 1};
    be(f)->progress = o->progress == 1;
    if (o->max_concurrency && o->max_concurrency < n) {
        if (rank == 0)
            fprintf(stderr,
                    "loadgen: --mpi: --max-concurrency %d is fewer than the %d ranks (each "
                    "needs at least one)\n",
                    o->max_concurrency, n);
        lg_mpi_finish(be(f)->mpi);
        free(f->be);
        return 2;
    }
    return 0;
}

/* ---- --mpi-salvage N -------------------------------------------------- */

static int salvage_progress(const lg_fleet *f, const lg_opts *o)
{
    (void)f, (void)o;
    return 0;
}

static int64_t salvage_start(lg_fleet *f, const lg_plan *p, int k)
{
    (void)f, (void)p, (void)k;
    return 0;
}

/* A salvaged run is degraded, and says which ranks it lost and what they
 * would have sent. */
static void salvage_report_json(const lg_fleet *f, const lg_plan *p, const int *lost, int k,
                                cJSON *j)
{
    (void)f;
    lg_shared *sh = lg_plan_shared(p);
    cJSON_AddBoolToObject(j, "degraded", 1);
    cJSON *m = cJSON_AddObjectToObject(j, "mpi");
    cJSON *lr = m ? cJSON_AddArrayToObject(m, "lost_ranks") : NULL;
    cJSON *la = m ? cJSON_AddArrayToObject(m, "lost_arrivals") : NULL;
    if (m) {
        cJSON_AddNumberToObject(m, "ranks", k);
        cJSON_AddBoolToObject(m, "salvaged", 1);
    }
    for (int w = 0; w < k && lr && la; w++) {
        if (!lost[w]) continue;
        cJSON_AddItemToArray(lr, cJSON_CreateNumber(w));
        cJSON_AddItemToArray(la, lg_mpi_lost_arrivals(p, w, k, sh->t0_ns, 0));
    }
}

static int salvage_load(lg_fleet *f, lg_plan *p, const char *dir, const char *result_name,
                        int *lost)
{
    (void)f;
    lg_shared *sh = lg_plan_shared(p);
    int k = p->k, found = 0;
    char path[2200];
    for (int w = 0; w < k; w++) {
        lg_mpi_snap_path(dir, result_name, w, path, sizeof path);
        int64_t t0 = 0;
        int intr = 0;
        int rc = lg_mpi_snap_read(path, p, w, k, &t0, &intr);
        if (rc) {
            if (rc != -ENOENT)
                fprintf(stderr, "loadgen: --mpi-salvage: %s: %s\n", path,
                        rc == -EINVAL ? "not a snapshot of this run's shape (ranks, stages)"
                                      : rb_file_strerror(rc));
            lost[w] = 1;
            continue;
        }
        found++;
        sh->t0_ns = t0;
        sh->interrupted |= intr;
        lost[w] = lg_plan_slot(p, w)->exit_code != 0;
    }
    if (!found) {
        fprintf(stderr, "loadgen: --mpi-salvage: no snapshot of '%s' in %s\n", result_name, dir);
        return 2;
    }
    return 0;
}

static void salvage_clean(lg_fleet *f, const lg_plan *p, const char *dir, const char *result_name)
{
    (void)f;
    char path[2200];
    for (int w = 0; w < p->k; w++) {
        lg_mpi_snap_path(dir, result_name, w, path, sizeof path);
        unlink(path);
    }
    lg_outputs_remove_rank_parts(dir, result_name); /* the lost ranks' */
}

static const lg_fleet_ops salvage_ops = {
    .forks = no_forks,
    .progress = salvage_progress,
    .start = salvage_start,
    .collect = lg_fleet_fork_collect,
    .report_json = salvage_report_json,
    .salvage = salvage_load,
    .salvage_clean = salvage_clean,
};

int lg_fleet_salvage_open(lg_fleet *f, const lg_opts *o)
{
    if (!o->save_result) {
        fprintf(stderr, "loadgen: --mpi-salvage: give the run's --save-result, --result-dir "
                        "and --result-filename\n");
        return 2;
    }
    f->ops = &salvage_ops;
    f->place = (lg_fleet_place){.k = o->mpi_salvage,
                                .first = 0,
                                .n_slots = 0,
                                .reporter = 1,
                                .live = 0,
                                .salvage = 1,
                                .per_rank = 1};
    return 0;
}
