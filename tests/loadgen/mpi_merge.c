/* Under mpirun -np N: the ranks' stats blocks reduced to rank 0
 * (lg_mpi_reduce_blocks) equal, byte for byte (every counter and every
 * histogram bucket), the blocks of all ranks merged in one process, as the
 * fork back-end merges them. Each rank records its own seeded requests;
 * rank 0 records every rank's again to compare. Exit 0: equal. */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_mpi.h"

#define STAGES 2

static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* Rank r's requests of one stage: integers, so sums are exact in any order. */
static void fill(lg_stage_stats *b, int rank, int stage)
{
    uint64_t x = 0x9E3779B97F4A7C15ULL * (uint64_t)(rank * STAGES + stage + 1);
    lg_goodput g;
    memset(&g, 0, sizeof g);
    int n = 500 + 300 * rank;
    for (int i = 0; i < n; i++) {
        int64_t t = 1000000000LL + (int64_t)(next(&x) % 1000000000ULL);
        int64_t lag = (int64_t)(next(&x) % 3000000ULL);
        lg_stats_record_dispatch(b, t, t + lag, 1000000);
        lg_req_result r = {.intended_ns = t,
                           .dispatch_ns = t + lag,
                           .first_token_ns = t + lag + (int64_t)(next(&x) % 50000000ULL) + 1,
                           .end_ns = t + lag + 60000000LL + (int64_t)(next(&x) % 90000000ULL),
                           .input_tokens = 8,
                           .output_tokens = 1 + (int64_t)(next(&x) % 16),
                           .cls = (next(&x) % 10) ? LG_OK : LG_FAIL_TIMEOUT};
        lg_stats_record_request(b, &r, &g);
        lg_stats_record_itl(b, (int64_t)(next(&x) % 20000000ULL));
    }
}

int main(int argc, char **argv)
{
    lg_mpi *m = lg_mpi_init();
    if (!m) return 2;
    int rank = lg_mpi_rank(m), size = lg_mpi_size(m), bad = 0;
    lg_stage_stats *mine[STAGES], *got[STAGES], *want[STAGES];
    for (int s = 0; s < STAGES; s++) {
        mine[s] = lg_stats_new();
        got[s] = lg_stats_new();
        want[s] = lg_stats_new();
        if (!mine[s] || !got[s] || !want[s]) return 2;
        fill(mine[s], rank, s);
    }
    lg_mpi_reduce_blocks(m, (const lg_stage_stats *const *)mine, got, STAGES);
    if (rank == 0) {
        for (int s = 0; s < STAGES; s++) {
            for (int r = 0; r < size; r++) {
                lg_stage_stats *b = lg_stats_new();
                fill(b, r, s);
                lg_stats_merge(want[s], b);
                free(b);
            }
            if (want[s]->dispatched == 0 || want[s]->dispatched != got[s]->dispatched) bad = 1;
            for (int h = 0; h < LG_N_HISTS; h++) {
                const mdl_hist *a = lg_stats_hist_c(got[s], h), *b = lg_stats_hist_c(want[s], h);
                /* every bucket and count exactly; the floating sums (of
                 * squares past 2^53) to their rounding, as the ranks'
                 * order of addition is MPI's */
                int same = a->total == b->total && a->clamped == b->clamped && a->min == b->min &&
                           a->max == b->max && a->n_buckets == b->n_buckets &&
                           memcmp(a->counts, b->counts, (size_t)a->n_buckets * 8) == 0 &&
                           fabs(a->sum - b->sum) <= 1e-12 * fabs(b->sum) &&
                           fabs(a->sum_sq - b->sum_sq) <= 1e-12 * fabs(b->sum_sq);
                if (!same) {
                    fprintf(stderr, "stage %d histogram %d differs\n", s, h);
                    bad = 1;
                }
                if (h == LG_H_E2EL_I && a->total == 0) bad = 1; /* it was recorded into */
            }
            if (memcmp(got[s], want[s], sizeof *got[s]) != 0) {
                fprintf(stderr, "stage %d counters differ\n", s);
                bad = 1;
            }
        }
        printf("%s: %d ranks, %d stages, %llu dispatched in stage 0\n", bad ? "FAIL" : "PASS", size,
               STAGES, (unsigned long long)got[0]->dispatched);
    }
    for (int s = 0; s < STAGES; s++) {
        free(mine[s]);
        free(got[s]);
        free(want[s]);
    }
    lg_mpi_finish(m);
    (void)argc;
    (void)argv;
    return bad;
}
