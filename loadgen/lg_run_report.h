/* lg_run_report: the second half of the coordinator (its state is
 * lg_run_state.h's): the merged results judged and reported, the records
 * committed, the result file and the exports written. Called by lg_run.c
 * only. */
#ifndef LG_RUN_REPORT_H
#define LG_RUN_REPORT_H

#include "lg_run_state.h"

/* The merged results judged and reported: the summary on stdout and, with
 * --save-result, the records (committed here unless r->records says how
 * the ranks' fared) and the result file (r->wrote set once it is). slots
 * and blocks are every worker's (k of them; blocks worker-major, n_stages
 * each). Returns 0 or 1 (a lost worker, lost records, a file not written). */
int lg_run_report(lg_runstate *r, int k, const lg_slot *const *slots,
                  const lg_stage_stats *const *blocks, lg_merged *m);

#endif
