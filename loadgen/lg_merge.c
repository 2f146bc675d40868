/* lg_merge: see lg_merge.h. */

#include "lg_merge.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int lg_merged_alloc(lg_merged *m, int n_stages)
{
    memset(m, 0, sizeof *m);
    m->n_stages = n_stages;
    m->total = lg_stats_new();
    m->stages = calloc((size_t)n_stages, sizeof *m->stages);
    if (!m->total || !m->stages) return -ENOMEM;
    for (int s = 0; s < n_stages; s++)
        if (!(m->stages[s] = lg_stats_new())) return -ENOMEM;
    return 0;
}

void lg_merge_total(lg_merged *m)
{
    m->n_used = 0;
    for (int s = 0; s < m->n_stages; s++) {
        lg_stats_merge(m->total, m->stages[s]);
        if (m->stages[s]->dispatched) m->n_used = s + 1;
    }
}

int lg_merge_workers(const lg_plan *p, const int *lost, lg_merged *m)
{
    int rc = lg_merged_alloc(m, p->n_stages);
    if (rc) return rc;
    for (int s = 0; s < p->n_stages; s++)
        for (int w = 0; w < p->k; w++)
            if (!lost[w]) lg_stats_merge(m->stages[s], lg_plan_stats(p, w, s));
    lg_merge_total(m);
    return 0;
}

static int cmp_sample_index(const void *a, const void *b)
{
    const lg_dispatch_sample *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

/* Every worker kept its first arrivals, so indices are contiguous up to
 * where one worker's sample ends. */
int lg_merge_samples(const lg_plan *p, const int *lost, lg_merged *m)
{
    size_t n = 0;
    m->n_samples = 0;
    for (int w = 0; w < p->k; w++)
        if (!lost[w]) n += lg_plan_slot(p, w)->n_sample;
    lg_dispatch_sample *all = malloc((n ? n : 1) * sizeof *all);
    if (!all) return -ENOMEM;
    size_t k = 0;
    for (int w = 0; w < p->k; w++) {
        if (lost[w]) continue;
        const lg_dispatch_sample *s = lg_plan_sample(p, w);
        for (uint64_t i = 0; i < lg_plan_slot(p, w)->n_sample; i++)
            all[k++] = s[i];
    }
    lg_merge_sorted_samples(m, all, k);
    return 0;
}

void lg_merge_sorted_samples(lg_merged *m, lg_dispatch_sample *all, size_t n)
{
    qsort(all, n, sizeof *all, cmp_sample_index);
    size_t c = 0;
    while (c < n && all[c].index == all[0].index + (int64_t)c)
        c++;
    free(m->samples);
    m->samples = all;
    m->n_samples = c;
}

void lg_merged_free(lg_merged *m)
{
    if (m->stages)
        for (int s = 0; s < m->n_stages; s++)
            free(m->stages[s]);
    free(m->stages);
    free(m->total);
    free(m->samples);
    memset(m, 0, sizeof *m);
}
