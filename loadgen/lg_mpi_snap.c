/* lg_mpi_snap: a rank's final slot on disk, for --mpi-salvage (see lg_mpi_snap.h).
 * Format: a header, the slot header, each stage block as its nonzero 8-byte
 * words (index, value), then the dispatch samples. No MPI here: a salvage
 * runs without mpirun. */

#include "lg_mpi_snap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_file.h"

#define SNAP_MAGIC "LGSNAP1"

typedef struct snap_head {
    char magic[8];
    int32_t rank, ranks, n_stages, interrupted;
    int64_t t0_root_ns;
    uint64_t block_bytes, n_sample;
} snap_head;

/* A lost rank's stripe of the stream (a pure function of seed, N and r):
 * its count and index range, and the part of it never offered: the
 * arrivals due after rank 0 saw the process gone (it cannot have sent
 * them; those due before may or may not have left). */
cJSON *lg_mpi_lost_arrivals(const lg_plan *p, int r, int n, int64_t t0_root_ns, int64_t died)
{
    cJSON *e = cJSON_CreateObject();
    if (!e) return NULL;
    int64_t count = 0, first = -1, last = -1, nv_first = -1, nv_last = -1, nv_count = 0;
    int known = 1;
    if (p->closed) {
        int64_t total = p->spec.stages[0].max_requests;
        known = total > 0;
        if (known && total > r) {
            count = (total - r + n - 1) / n;
            first = r;
            last = r + (count - 1) * n;
        }
    } else {
        char err[128];
        lg_sched *it = lg_sched_new(&p->spec, err, sizeof err);
        lg_arrival a;
        known = it != NULL;
        while (it && lg_sched_next_for(it, r, n, &a)) {
            count++;
            if (first < 0) first = a.index;
            last = a.index;
            if (died && t0_root_ns + a.t_ns >= died) {
                if (nv_first < 0) nv_first = a.index;
                nv_last = a.index;
                nv_count++;
            }
        }
        lg_sched_free(it);
    }
    cJSON_AddNumberToObject(e, "rank", r);
    cJSON_AddNumberToObject(e, "stride", n);
    if (known) {
        cJSON_AddNumberToObject(e, "count", (double)count);
        cJSON_AddNumberToObject(e, "first_index", (double)first);
        cJSON_AddNumberToObject(e, "last_index", (double)last);
    } else {
        cJSON_AddNullToObject(e, "count");
    }
    if (died)
        cJSON_AddNumberToObject(e, "gone_after_s", (double)(died - t0_root_ns) / 1e9);
    else
        cJSON_AddNullToObject(e, "gone_after_s");
    if (died && !p->closed) {
        cJSON *nv = cJSON_AddObjectToObject(e, "never_offered");
        if (nv) {
            cJSON_AddNumberToObject(nv, "count", (double)nv_count);
            cJSON_AddNumberToObject(nv, "first_index", (double)nv_first);
            cJSON_AddNumberToObject(nv, "last_index", (double)nv_last);
        }
    } else {
        /* a rank on another host, a salvage, a closed loop: no time of loss */
        cJSON_AddNullToObject(e, "never_offered");
    }
    return e;
}

void lg_mpi_snap_path(const char *dir, const char *name, int rank, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/.%s.rank%d.snap", dir, name, rank);
}

int lg_mpi_snap_write(const char *path, const lg_plan *p, int rank, int ranks, int64_t t0_root_ns,
                      int interrupted)
{
    size_t words = lg_stats_block_bytes() / 8;
    const lg_slot *sl = lg_plan_slot(p, rank);
    uint64_t n_sample = sl->n_sample;
    size_t nz_total = 0;
    for (int s = 0; s < p->n_stages; s++) {
        const uint64_t *b = (const uint64_t *)lg_plan_stats(p, rank, s);
        for (size_t i = 0; i < words; i++)
            nz_total += b[i] != 0;
    }
    size_t len = sizeof(snap_head) + sizeof(lg_slot) + (size_t)p->n_stages * 8 + nz_total * 16 +
                 n_sample * sizeof(lg_dispatch_sample);
    char *buf = malloc(len), *at = buf;
    if (!buf) return -ENOMEM;
    snap_head h = {.rank = rank,
                   .ranks = ranks,
                   .n_stages = p->n_stages,
                   .interrupted = interrupted,
                   .t0_root_ns = t0_root_ns,
                   .block_bytes = lg_stats_block_bytes(),
                   .n_sample = n_sample};
    memcpy(h.magic, SNAP_MAGIC, sizeof h.magic);
    memcpy(at, &h, sizeof h);
    at += sizeof h;
    memcpy(at, sl, sizeof *sl);
    at += sizeof *sl;
    for (int s = 0; s < p->n_stages; s++) {
        const uint64_t *b = (const uint64_t *)lg_plan_stats(p, rank, s);
        uint64_t nz = 0;
        char *count_at = at;
        at += 8;
        for (size_t i = 0; i < words; i++) {
            if (!b[i]) continue;
            uint64_t pair[2] = {i, b[i]};
            memcpy(at, pair, sizeof pair);
            at += sizeof pair;
            nz++;
        }
        memcpy(count_at, &nz, 8);
    }
    memcpy(at, lg_plan_sample(p, rank), n_sample * sizeof(lg_dispatch_sample));
    int rc = rb_write_file_atomic(path, buf, len);
    free(buf);
    return rc;
}

int lg_mpi_snap_read(const char *path, const lg_plan *p, int rank, int ranks, int64_t *t0_root_ns,
                     int *interrupted)
{
    char *buf = NULL;
    size_t len = 0;
    int rc = rb_read_file(path, (size_t)1 << 34, &buf, &len);
    if (rc) return rc;
    rc = -EINVAL;
    snap_head h;
    const char *at = buf, *end = buf + len;
    size_t words = lg_stats_block_bytes() / 8;
    if (len < sizeof h + sizeof(lg_slot)) goto out;
    memcpy(&h, at, sizeof h);
    at += sizeof h;
    if (memcmp(h.magic, SNAP_MAGIC, sizeof h.magic) || h.rank != rank || h.ranks != ranks ||
        h.n_stages != p->n_stages || h.block_bytes != lg_stats_block_bytes() ||
        h.n_sample > LG_SAMPLE_PER_WORKER)
        goto out;
    memcpy(lg_plan_slot(p, rank), at, sizeof(lg_slot));
    at += sizeof(lg_slot);
    for (int s = 0; s < p->n_stages; s++) {
        uint64_t nz;
        if ((size_t)(end - at) < 8) goto out;
        memcpy(&nz, at, 8);
        at += 8;
        if (nz > words || (size_t)(end - at) < nz * 16) goto out;
        uint64_t *b = (uint64_t *)lg_plan_stats(p, rank, s);
        for (uint64_t i = 0; i < nz; i++) {
            uint64_t pair[2];
            memcpy(pair, at, sizeof pair);
            at += sizeof pair;
            if (pair[0] >= words) goto out;
            b[pair[0]] = pair[1];
        }
    }
    if ((size_t)(end - at) != h.n_sample * sizeof(lg_dispatch_sample)) goto out;
    memcpy(lg_plan_sample(p, rank), at, (size_t)(end - at));
    lg_plan_slot(p, rank)->n_sample = h.n_sample;
    *t0_root_ns = h.t0_root_ns;
    *interrupted = h.interrupted;
    rc = 0;
out:
    free(buf);
    return rc;
}
