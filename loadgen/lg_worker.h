/* lg_worker: one worker. It owns one libuv loop driving libcurl's multi
 * interface, takes its stripe of the plan's arrival stream, and writes only
 * its own slot (lg_slots.h). */
#ifndef LG_WORKER_H
#define LG_WORKER_H

#include "lg_plan.h"

/* Runs worker w of the plan to its end; returns its exit code (0 ok). */
int lg_worker_run(const lg_plan *p, int w);

#endif
