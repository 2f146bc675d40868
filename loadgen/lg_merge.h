/* lg_merge: the workers' results merged exactly. Stats blocks add (lg_stats
 * merge), per stage across the workers kept and then across the stages;
 * the dispatch samples are sorted by global index and cut to the complete
 * prefix of the stream. The inputs are the slots of lg_slots.h, however the
 * fleet filled them. */
#ifndef LG_MERGE_H
#define LG_MERGE_H

#include <stddef.h>

#include "lg_plan.h"

typedef struct lg_merged {
    int n_stages;
    lg_stage_stats **stages; /* [n_stages]: merged over the workers kept */
    lg_stage_stats *total;   /* merged over the stages */
    int n_used;              /* stages up to the last that dispatched anything */
    lg_dispatch_sample *samples;
    size_t n_samples;
} lg_merged;

/* Allocates n_stages empty stage blocks and the total. Returns 0 or -ENOMEM. */
int lg_merged_alloc(lg_merged *m, int n_stages);
/* Merges the plan's k workers' blocks (lost[w]: left out) into m, then the
 * total and n_used. Returns 0 or -ENOMEM (then m holds what was merged). */
int lg_merge_workers(const lg_plan *p, const int *lost, lg_merged *m);
/* The total and n_used from m's stages (once they are merged). */
void lg_merge_total(lg_merged *m);
/* The samples of the workers kept, sorted and cut (NULL on no memory). */
int lg_merge_samples(const lg_plan *p, const int *lost, lg_merged *m);
/* Takes all[0..n) (malloc'd) as m's samples: sorted, then cut. */
void lg_merge_sorted_samples(lg_merged *m, lg_dispatch_sample *all, size_t n);
void lg_merged_free(lg_merged *m);

#endif
