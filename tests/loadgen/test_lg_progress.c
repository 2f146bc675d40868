/* Tests of lg_progress: the progress line names the stage, its rate, the
 * completed count and an ETA. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "lg_progress.h"

static void has(const char *line, const char *needle)
{
    if (!strstr(line, needle)) fail_msg("'%s' lacks '%s'", line, needle);
}

static void a_sweep_stage_with_its_rate_and_eta(void **state)
{
    (void)state;
    lg_progress_in in = {.elapsed_s = 12.3,
                         .stage = 1,
                         .n_stages = 5,
                         .stage_rate = 100,
                         .stage_elapsed_s = 2.0,
                         .stage_dispatched = 197,
                         .dispatched = 1200,
                         .completed = 1178,
                         .failed = 2,
                         .in_flight = 20,
                         .lag_p99_ms = 0.12,
                         .total_s = 50};
    char line[320];
    lg_progress_format(&in, line, sizeof line);
    has(line, "stage 2/5 ");
    has(line, "100.0/s (achieved 98.5/s)");
    has(line, "completed 1178 failed 2");
    has(line, "sent 1200");
    has(line, "ETA 38s");
    in.total_s = 200;
    lg_progress_format(&in, line, sizeof line);
    has(line, "ETA 3m07s");
}

static void a_count_bounded_run_estimates_from_its_pace(void **state)
{
    (void)state;
    lg_progress_in in = {.elapsed_s = 10,
                         .n_stages = 1,
                         .stage_rate = INFINITY,
                         .dispatched = 500,
                         .completed = 400,
                         .planned = 1000};
    char line[320];
    lg_progress_format(&in, line, sizeof line);
    has(line, "stage 1/1 inf/s");
    has(line, "ETA 10s");
    in.planned = 0;
    in.stage_rate = NAN;
    lg_progress_format(&in, line, sizeof line);
    has(line, "closed loop");
    has(line, "ETA ?");
    /* past the scheduled end, while draining */
    in.total_s = 5;
    lg_progress_format(&in, line, sizeof line);
    has(line, "ETA 0s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_sweep_stage_with_its_rate_and_eta),
        cmocka_unit_test(a_count_bounded_run_estimates_from_its_pace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
