/* Tests of lg_judge: the per-worker figures leave the lost workers out of
 * the run's worst loop; the run's verdict is its worst stage's, and among
 * stages judged alike the busiest; the receive clock's health is the worst
 * worker's; a stage the sweep's stop cut short is figured but never judged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_judge.h"

#define K 3
#define S 2

typedef struct fixture {
    lg_slot slot[K];
    const lg_slot *slots[K];
    lg_stage_stats *block[K * S];
    lg_stage_stats *stage[S];
    lg_stage_stats *total;
    int lost[K];
    lg_judge_in in;
} fixture;

/* Worker w's loop in stage s: busy for `rho` of a 1 s window. */
static void set_loop(fixture *f, int w, int s, double rho)
{
    lg_stage_stats *b = f->block[w * S + s];
    b->loop_window_ns = 1000000000LL;
    b->loop_idle_ns = (int64_t)((1.0 - rho) * 1e9);
    b->dispatched = 100;
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    for (int w = 0; w < K; w++) {
        f->slots[w] = &f->slot[w];
        f->slot[w].window_start_ns = 1000;
        f->slot[w].window_end_ns = 1000 + 1000000000LL;
        for (int s = 0; s < S; s++)
            f->block[w * S + s] = lg_stats_new();
    }
    for (int s = 0; s < S; s++)
        f->stage[s] = lg_stats_new();
    f->total = lg_stats_new();
    f->in = (lg_judge_in){
        .k = K,
        .n_stages = S,
        .n_views = S,
        .closed = 1,
        .lost = f->lost,
        .slots = f->slots,
        .blocks = (const lg_stage_stats *const *)f->block,
        .stages = (const lg_stage_stats *const *)f->stage,
        .total = f->total,
        .arrival_model = "constant",
        .arrival_skip = "closed loop: no arrival process to test",
        .budget = {.safe_rho = NAN, .mean_us = 100, .p99_us = 2000, .transport_us = NAN}};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < K * S; i++)
        free(f->block[i]);
    for (int s = 0; s < S; s++)
        free(f->stage[s]);
    free(f->total);
    free(f);
    return 0;
}

static void a_lost_worker_is_figured_but_left_out(void **state)
{
    fixture *f = *state;
    f->slot[0].idle_ns = 800000000LL; /* rho 0.2 */
    f->slot[1].idle_ns = 100000000LL; /* rho 0.9, but lost */
    f->slot[2].idle_ns = 600000000LL; /* rho 0.4 */
    f->slot[1].saw_stamps = 1;
    f->lost[1] = 1;
    lg_worker_bias b[K] = {0};
    double max_rho, wq;
    int stamps;
    lg_judge_workers(&f->in, b, &max_rho, &wq, &stamps);
    assert_true(b[1].lost);
    assert_false(b[0].lost);
    assert_true(fabs(b[1].rho - 0.9) < 1e-9);
    assert_true(fabs(max_rho - 0.4) < 1e-9);
    assert_int_equal(stamps, 0); /* only the lost worker saw them */
    f->lost[1] = 0;
    lg_judge_workers(&f->in, b, &max_rho, &wq, &stamps);
    assert_true(fabs(max_rho - 0.9) < 1e-9);
    assert_int_equal(stamps, 1);
}

/* Each worker's own receive clock (under --mpi, its rank's, resolved on its
 * host): the slot's clock and interface, and the share of its tokens timed
 * from a capture over all its stages; a worker that timed no token has none. */
static void each_worker_names_its_own_clock(void **state)
{
    fixture *f = *state;
    snprintf(f->slot[0].rx_clock, sizeof f->slot[0].rx_clock, "wire");
    snprintf(f->slot[0].capture_iface, sizeof f->slot[0].capture_iface, "vr0");
    snprintf(f->slot[1].rx_clock, sizeof f->slot[1].rx_clock, "kernel");
    snprintf(f->slot[1].rx_fallback, sizeof f->slot[1].rx_fallback, "no CAP_NET_RAW");
    /* worker 0: 30 + 10 tokens, 27 + 9 wire-timed: 0.9; worker 1: none wire */
    f->block[0 * S + 0]->rx_kernel_tokens = 30;
    f->block[0 * S + 0]->rx_wire_tokens = 27;
    f->block[0 * S + 1]->rx_kernel_tokens = 8;
    f->block[0 * S + 1]->rx_user_tokens = 2;
    f->block[0 * S + 1]->rx_wire_tokens = 9;
    f->block[1 * S + 1]->rx_kernel_tokens = 5;
    lg_worker_bias b[K] = {0};
    double max_rho, wq;
    int stamps;
    lg_judge_workers(&f->in, b, &max_rho, &wq, &stamps);
    assert_string_equal(b[0].receive_clock, "wire");
    assert_string_equal(b[0].capture_interface, "vr0");
    assert_true(fabs(b[0].wire_share - 0.9) < 1e-12);
    assert_string_equal(b[1].receive_clock, "kernel");
    assert_string_equal(b[1].capture_interface, "");
    assert_true(b[1].wire_share == 0.0);
    assert_string_equal(b[0].receive_clock_fallback, "");
    assert_string_equal(b[1].receive_clock_fallback, "no CAP_NET_RAW");
    assert_string_equal(b[2].receive_clock, "");
    assert_true(isnan(b[2].wire_share));
}

static void the_worst_stage_decides(void **state)
{
    fixture *f = *state;
    /* stage 1's worker 2 runs its loop at 0.97: past the biased bound */
    for (int w = 0; w < K; w++) {
        set_loop(f, w, 0, 0.2);
        set_loop(f, w, 1, w == 2 ? 0.97 : 0.2);
    }
    lg_bias_stage sb[S], run;
    lg_report rep = {0};
    int v = lg_judge_run(&f->in, 0.97, NAN, sb, &run, &rep);
    assert_int_equal(v, 1);
    assert_int_equal(sb[1].worst_worker, 2);
    assert_int_equal(sb[1].verdict.level, MDL_VERDICT_BIASED);
    assert_true(sb[0].verdict.level < MDL_VERDICT_BIASED);
    assert_int_equal(run.verdict.level, MDL_VERDICT_BIASED);
    assert_true(strncmp(run.verdict.reason, "stage 1: ", 9) == 0);
    assert_true(strstr(run.verdict.reason, sb[1].verdict.reason) != NULL);
    /* the worst stage's loop is lost: stage 1 is judged on the others */
    f->lost[2] = 1;
    v = lg_judge_run(&f->in, 0.2, NAN, sb, &run, &rep);
    assert_int_not_equal(sb[1].worst_worker, 2);
    assert_true(run.verdict.level < MDL_VERDICT_BIASED);
}

static void among_equals_the_busiest_stage_is_named(void **state)
{
    fixture *f = *state;
    for (int w = 0; w < K; w++) {
        set_loop(f, w, 0, 0.35);
        set_loop(f, w, 1, 0.15);
    }
    lg_bias_stage sb[S], run;
    lg_report rep = {0};
    int v = lg_judge_run(&f->in, 0.35, NAN, sb, &run, &rep);
    assert_int_equal(sb[0].verdict.level, sb[1].verdict.level);
    assert_int_equal(v, 0);
    if (run.verdict.level == MDL_VERDICT_OK)
        assert_true(strncmp(run.verdict.reason, "all 2 stages; the busiest, stage 0: ", 36) == 0);
    else
        assert_true(strncmp(run.verdict.reason, "stage 0: ", 9) == 0);
    /* one stage: no stage named */
    f->in.n_views = 1;
    assert_int_equal(lg_judge_run(&f->in, 0.35, NAN, sb, &run, &rep), -1);
}

static void the_clock_health_is_the_worst_kept_workers(void **state)
{
    fixture *f = *state;
    f->slot[0].clock_spread_ns = 500;
    f->slot[1].clock_spread_ns = 9000; /* lost */
    f->slot[2].clock_spread_ns = 700;
    f->slot[0].clock_steps = 1;
    f->slot[2].clock_steps = 2;
    f->slot[1].clock_steps = 40;
    f->block[0 * S + 1]->run_delay_ns = 300000000LL; /* worker 0: 0.3 of its window */
    f->block[2 * S + 0]->run_delay_ns = 100000000LL;
    f->lost[1] = 1;
    lg_bias_stage sb[S], run;
    lg_report rep = {0};
    lg_judge_run(&f->in, 0, NAN, sb, &run, &rep);
    assert_int_equal(rep.clock_spread_ns, 700);
    assert_int_equal(rep.clock_steps, 3);
    assert_true(fabs(run.run_delay_share - 0.3) < 1e-9);
    assert_string_equal(run.arrival.note, "closed loop: no arrival process to test");
    assert_false(run.arrival.tested);
}

static void only_the_stages_after_the_stop_are_cut(void **state)
{
    (void)state;
    assert_int_equal(lg_judge_cut(5, -1), 0); /* no stop: every stage ran */
    assert_int_equal(lg_judge_cut(5, 3), 1);  /* stage 4 only dispatched before the stop */
    assert_int_equal(lg_judge_cut(5, 1), 3);
    assert_int_equal(lg_judge_cut(4, 3), 0); /* the stopping stage was the last used */
    assert_int_equal(lg_judge_cut(2, 3), 0);
    assert_int_equal(lg_judge_cut(1, 0), 0);
}

static void a_cut_stage_never_sets_the_verdict(void **state)
{
    fixture *f = *state;
    /* stage 1 holds stage 0's tail and looks BIASED, but the stop cut it */
    for (int w = 0; w < K; w++) {
        set_loop(f, w, 0, 0.2);
        set_loop(f, w, 1, 0.97);
    }
    f->in.n_cut = 1;
    lg_bias_stage sb[S], run;
    lg_report rep = {0};
    int v = lg_judge_run(&f->in, 0.97, NAN, sb, &run, &rep);
    assert_int_equal(v, 0);
    assert_true(sb[0].verdict.level < MDL_VERDICT_BIASED);
    assert_true(run.verdict.level < MDL_VERDICT_BIASED);
    assert_int_equal(run.verdict.level, sb[0].verdict.level);
    assert_string_equal(sb[1].verdict.cause, "cut short");
    assert_true(strstr(sb[1].verdict.reason, "not judged") != NULL);
    assert_true(fabs(sb[1].max_rho - 0.97) < 1e-9); /* still figured */
    assert_true(strncmp(run.verdict.reason, "stage 0: ", 9) == 0);
    /* not cut: the same stage decides */
    f->in.n_cut = 0;
    v = lg_judge_run(&f->in, 0.97, NAN, sb, &run, &rep);
    assert_int_equal(v, 1);
    assert_int_equal(run.verdict.level, MDL_VERDICT_BIASED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(a_lost_worker_is_figured_but_left_out, setup, teardown),
        cmocka_unit_test_setup_teardown(each_worker_names_its_own_clock, setup, teardown),
        cmocka_unit_test_setup_teardown(the_worst_stage_decides, setup, teardown),
        cmocka_unit_test_setup_teardown(among_equals_the_busiest_stage_is_named, setup, teardown),
        cmocka_unit_test_setup_teardown(the_clock_health_is_the_worst_kept_workers, setup,
                                        teardown),
        cmocka_unit_test(only_the_stages_after_the_stop_are_cut),
        cmocka_unit_test_setup_teardown(a_cut_stage_never_sets_the_verdict, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
