/* lg_run_state: what both halves of the coordinator compute from the run's
 * state (see lg_run_state.h). */
#include "lg_run_state.h"

int64_t lg_coord_stage_start(const lg_coord *c, int s)
{
    if (!c->stage_clock) return lg_plan_shared(c->p)->t0_ns;
    int64_t st = lg_sched_stage_start_ns(c->stage_clock, s);
    return lg_plan_shared(c->p)->t0_ns + (st < 0 ? 0 : st);
}
