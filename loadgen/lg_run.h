/* lg_run: a whole loadgen run. The coordinator (lg_run) builds the plan
 * (lg_plan.h), has the fleet (lg_fleet.h) run k workers (lg_worker.h) while
 * it watches their live counters, merges their results exactly
 * (lg_merge.h), judges them (lg_judge.h) and writes the report. */
#ifndef LG_RUN_H
#define LG_RUN_H

#include "lg_cli.h"
#include "lg_plan.h"

/* The whole run: returns the process exit code (0, 1, 2 or 130); reports go
 * to stdout and, with --save-result, to the result file. */
int lg_run(lg_opts *o);

#endif
