/* Unit tests of lg_meter, fed with a fake clock and fake host readings: the
 * send window (callbacks and events counted only inside it, its totals in
 * the slot), each stage's share of the loop and the host, the cut at a stage
 * change (the closing stage gets exactly the readings up to the change, the
 * next starts from them, a short stage between two keeps its own tail), and
 * the split of each token's times into the stage's histograms. Also
 * rb_host's parse of /proc/stat's cpu line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lg_meter.h"
#include "rb_host.h"

static const mdl_hist *H(const lg_stage_stats *st, int id)
{
    return lg_stats_hist_c(st, id);
}

/* The one value recorded in a histogram (it must hold exactly one). */
static uint64_t only(const lg_stage_stats *st, int id)
{
    const mdl_hist *h = H(st, id);
    assert_int_equal(h->total, 1);
    assert_int_equal(h->min, h->max);
    return h->max;
}

static rb_host_reading reading(int64_t rd, int64_t nv, int64_t steal, int64_t cpu)
{
    return (rb_host_reading){.run_delay_ns = rd, .nivcsw = nv, .steal_ns = steal, .cpu_ns = cpu};
}

static void test_callbacks_in_window(void **state)
{
    (void)state;
    lg_meter m;
    lg_meter_init(&m);
    assert_int_equal(m.stage, -1);
    lg_meter_callback(&m, 999); /* before the window: not a service unit of it */
    lg_meter_event(&m);
    assert_int_equal(m.callbacks, 0);
    assert_int_equal(m.events, 0);
    rb_host_reading h = reading(0, 0, 0, 0);
    lg_meter_open(&m, 1000, 0, &h, 0);
    lg_meter_callback(&m, 100);
    lg_meter_callback(&m, 300);
    lg_meter_event(&m);
    assert_int_equal(m.callbacks, 2);
    assert_int_equal(m.events, 1);
    assert_true(m.svc_sum == 400.0);
    assert_true(m.svc_sumsq == 100.0 * 100 + 300.0 * 300);
}

static void test_window_one_stage(void **state)
{
    (void)state;
    lg_stage_stats *st = lg_stats_new();
    lg_slot slot;
    memset(&slot, 0, sizeof slot);
    lg_meter m;
    lg_meter_init(&m);
    rb_host_reading a = reading(10, 2, 100, 1000), b = reading(40, 5, 160, 9000);
    lg_meter_open(&m, 1000, 50, &a, 0);
    assert_int_equal(m.stage, 0);
    lg_meter_callback(&m, 100);
    lg_meter_callback(&m, 300);
    lg_meter_event(&m);
    lg_meter_event(&m);
    assert_int_equal(lg_meter_end_window(&m, 6000, 2050, &b, st, &slot), 1);
    assert_int_equal(st->loop_window_ns, 5000);
    assert_int_equal(st->loop_idle_ns, 2000);
    assert_int_equal(st->svc_n, 2);
    assert_true(st->svc_sum_ns == 400.0);
    assert_true(st->svc_sumsq_ns2 == 100000.0);
    assert_int_equal(st->run_delay_ns, 30);
    assert_int_equal(st->nivcsw, 3);
    assert_int_equal(st->host_steal_ns, 60);
    assert_int_equal(st->host_cpu_ns, 8000);
    assert_int_equal(slot.window_end_ns, 6000);
    assert_int_equal(slot.idle_ns, 2000);
    assert_int_equal(slot.callbacks, 2);
    assert_true(slot.svc_sum_ns == 400.0);
    assert_true(slot.svc_sumsq_ns2 == 100000.0);
    assert_int_equal(slot.events, 2);
    assert_int_equal(slot.nivcsw, 3);
    assert_int_equal(m.in_window, 0);
    assert_int_equal(m.stage, -1);
    /* Closed: nothing more is counted, a second end writes nothing, and a
     * stage call with no stage timed adds nothing to the block it is given. */
    lg_meter_callback(&m, 7);
    lg_meter_event(&m);
    lg_slot before = slot;
    rb_host_reading c = reading(90, 9, 900, 90000);
    assert_int_equal(lg_meter_end_window(&m, 9000, 5000, &c, st, &slot), 0);
    assert_memory_equal(&before, &slot, sizeof slot);
    lg_meter_stage(&m, 9000, 5000, &c, 0, st);
    assert_int_equal(st->loop_window_ns, 5000);
    assert_int_equal(st->svc_n, 2);
    assert_int_equal(st->nivcsw, 3);
    free(st);
}

/* A stage change mid-run, and a short stage between two: each stage gets
 * exactly what happened between its cuts, and the window is their sum. */
static void test_cut_stage(void **state)
{
    (void)state;
    lg_stage_stats *st[3] = {lg_stats_new(), lg_stats_new(), lg_stats_new()};
    lg_slot slot;
    memset(&slot, 0, sizeof slot);
    lg_meter m;
    lg_meter_init(&m);
    rb_host_reading r0 = reading(0, 1, 0, 0), r1 = reading(7, 4, 10, 500);
    rb_host_reading r2 = reading(9, 6, 15, 600), r3 = reading(20, 10, 40, 2000);
    lg_meter_open(&m, 0, 0, &r0, 0);
    lg_meter_callback(&m, 100); /* stage 0's tail, before the cut */
    lg_meter_stage(&m, 1000, 400, &r1, 1, st[0]);
    assert_int_equal(m.stage, 1);
    lg_meter_callback(&m, 30); /* the short stage 1: one callback */
    lg_meter_stage(&m, 1100, 420, &r2, 2, st[1]);
    lg_meter_callback(&m, 200);
    lg_meter_callback(&m, 50);
    assert_int_equal(lg_meter_end_window(&m, 3000, 1500, &r3, st[2], &slot), 1);

    assert_int_equal(st[0]->loop_window_ns, 1000);
    assert_int_equal(st[0]->loop_idle_ns, 400);
    assert_int_equal(st[0]->svc_n, 1);
    assert_true(st[0]->svc_sum_ns == 100.0);
    assert_true(st[0]->svc_sumsq_ns2 == 10000.0);
    assert_int_equal(st[0]->run_delay_ns, 7);
    assert_int_equal(st[0]->nivcsw, 3);
    assert_int_equal(st[0]->host_steal_ns, 10);
    assert_int_equal(st[0]->host_cpu_ns, 500);

    assert_int_equal(st[1]->loop_window_ns, 100);
    assert_int_equal(st[1]->loop_idle_ns, 20);
    assert_int_equal(st[1]->svc_n, 1);
    assert_true(st[1]->svc_sum_ns == 30.0);
    assert_true(st[1]->svc_sumsq_ns2 == 900.0);
    assert_int_equal(st[1]->run_delay_ns, 2);
    assert_int_equal(st[1]->nivcsw, 2);
    assert_int_equal(st[1]->host_steal_ns, 5);
    assert_int_equal(st[1]->host_cpu_ns, 100);

    assert_int_equal(st[2]->loop_window_ns, 1900);
    assert_int_equal(st[2]->loop_idle_ns, 1080);
    assert_int_equal(st[2]->svc_n, 2);
    assert_true(st[2]->svc_sum_ns == 250.0);
    assert_true(st[2]->svc_sumsq_ns2 == 200.0 * 200 + 50.0 * 50);
    assert_int_equal(st[2]->run_delay_ns, 11);
    assert_int_equal(st[2]->nivcsw, 4);
    assert_int_equal(st[2]->host_steal_ns, 25);
    assert_int_equal(st[2]->host_cpu_ns, 1400);

    /* The window is the stages' sum: nothing counted twice or lost. */
    assert_int_equal(slot.callbacks, 4);
    assert_int_equal(slot.idle_ns, 1500);
    assert_int_equal(slot.nivcsw, 9);
    assert_true(slot.svc_sum_ns == 380.0);
    for (int i = 0; i < 3; i++)
        free(st[i]);
}

/* A run delay the kernel does not keep (-1) at either end of a stage adds
 * nothing; the next stage with both ends known adds its own. */
static void test_run_delay_unknown(void **state)
{
    (void)state;
    lg_stage_stats *a = lg_stats_new(), *b = lg_stats_new(), *c = lg_stats_new();
    lg_slot slot;
    lg_meter m;
    lg_meter_init(&m);
    rb_host_reading r0 = reading(-1, 0, 0, 0), r1 = reading(50, 0, 0, 0);
    rb_host_reading r2 = reading(80, 0, 0, 0), r3 = reading(-1, 0, 0, 0);
    lg_meter_open(&m, 0, 0, &r0, 0);
    lg_meter_stage(&m, 10, 0, &r1, 1, a);
    lg_meter_stage(&m, 20, 0, &r2, 2, b);
    lg_meter_end_window(&m, 30, 0, &r3, c, &slot);
    assert_int_equal(a->run_delay_ns, 0);
    assert_int_equal(b->run_delay_ns, 30);
    assert_int_equal(c->run_delay_ns, 0);
    free(a);
    free(b);
    free(c);
}

static lg_meter_tok kernel_tok(int64_t t, int64_t tu, int64_t entry, int64_t stamp)
{
    return (lg_meter_tok){.t_ns = t,
                          .tu_ns = tu,
                          .kind = LG_RX_KERNEL,
                          .read_kind = LG_RX_KERNEL,
                          .entry_ns = entry,
                          .stamp_ns = stamp,
                          .dispatch_ns = 100};
}

/* Kernel-timed tokens with the server's stamps: each delay in its histogram. */
static void test_token_split(void **state)
{
    (void)state;
    lg_stage_stats *st = lg_stats_new();
    lg_meter_chain c = {0};
    lg_meter_tok k1 = kernel_tok(1000, 1500, 1200, 900);
    lg_meter_token(st, &c, &k1);
    assert_int_equal(c.first_ns, 1000);
    assert_int_equal(c.first_u_ns, 1500);
    assert_int_equal(c.tokens, 1);
    assert_int_equal(H(st, LG_H_ITL)->total, 0); /* no gap yet */
    assert_int_equal(H(st, LG_H_ITL_U)->total, 0);
    assert_int_equal(H(st, LG_H_ITL_S)->total, 0);
    assert_int_equal(only(st, LG_H_OVERHEAD), 600);     /* tu - stamp */
    assert_int_equal(only(st, LG_H_TTFT_S), 800);       /* stamp - dispatch */
    assert_int_equal(only(st, LG_H_PROCESSING), 300);   /* tu - entry */
    assert_int_equal(only(st, LG_H_CLIENT_DELAY), 500); /* tu - t */
    assert_int_equal(only(st, LG_H_PICKUP), 200);       /* entry - t */
    assert_int_equal(only(st, LG_H_SERVER_SEND), 100);  /* t - stamp */
    assert_int_equal(st->rx_kernel_tokens, 1);
    assert_int_equal(st->rx_exact_tokens + st->rx_wire_tokens + st->rx_user_tokens, 0);

    lg_stage_stats *s2 = lg_stats_new();
    lg_meter_tok k2 = kernel_tok(3000, 3100, 3050, 2950);
    lg_meter_token(s2, &c, &k2);
    assert_int_equal(only(s2, LG_H_ITL), 2000);     /* t - last t */
    assert_int_equal(only(s2, LG_H_ITL_U), 1600);   /* tu - last tu */
    assert_int_equal(only(s2, LG_H_ITL_S), 2050);   /* stamp - last stamp */
    assert_int_equal(H(s2, LG_H_TTFT_S)->total, 0); /* the first token's only */
    assert_int_equal(only(s2, LG_H_OVERHEAD), 150);
    assert_int_equal(only(s2, LG_H_PROCESSING), 50);
    assert_int_equal(only(s2, LG_H_CLIENT_DELAY), 100);
    assert_int_equal(only(s2, LG_H_PICKUP), 50);
    assert_int_equal(only(s2, LG_H_SERVER_SEND), 50);
    assert_int_equal(c.max_gap_ns, 2000);
    assert_int_equal(c.last_ns, 3000);
    assert_int_equal(c.last_u_ns, 3100);
    assert_int_equal(c.first_ns, 1000);

    /* A token without a stamp breaks the chain of stamps: the next stamped
     * token is neither a stamp gap nor a first token. A smaller gap leaves
     * the largest as it was. No pickup: no pickup delay. */
    lg_stage_stats *s3 = lg_stats_new();
    lg_meter_tok k3 = kernel_tok(4000, 4500, 0, 0);
    lg_meter_token(s3, &c, &k3);
    assert_int_equal(H(s3, LG_H_OVERHEAD)->total, 0);
    assert_int_equal(H(s3, LG_H_SERVER_SEND)->total, 0);
    assert_int_equal(H(s3, LG_H_PICKUP)->total, 0);
    assert_int_equal(H(s3, LG_H_PROCESSING)->total, 0);
    assert_int_equal(only(s3, LG_H_CLIENT_DELAY), 500);
    assert_int_equal(c.max_gap_ns, 2000);
    assert_int_equal(c.last_stamp_ns, 0);
    lg_meter_tok k4 = kernel_tok(5000, 5200, 5100, 4990);
    lg_meter_token(s3, &c, &k4);
    assert_int_equal(H(s3, LG_H_ITL_S)->total, 0);
    assert_int_equal(H(s3, LG_H_TTFT_S)->total, 0);
    assert_int_equal(only(s3, LG_H_OVERHEAD), 210);
    assert_int_equal(c.tokens, 4);
    assert_int_equal(c.last_stamp_ns, 4990);
    /* A pickup before the kernel's stamp (a clock's error): recorded as 0. */
    lg_stage_stats *s4 = lg_stats_new();
    lg_meter_tok k5 = kernel_tok(6000, 6400, 5900, 0);
    lg_meter_token(s4, &c, &k5);
    assert_int_equal(only(s4, LG_H_PICKUP), 0);
    free(st);
    free(s2);
    free(s3);
    free(s4);
}

/* Wire-timed tokens are exact; pickup- and delivery-timed ones are the
 * user's; processing needs a read that a pickup timed. */
static void test_token_kinds(void **state)
{
    (void)state;
    lg_stage_stats *st = lg_stats_new();
    lg_meter_chain c = {0};
    lg_meter_tok w = kernel_tok(1000, 1300, 1100, 0);
    w.kind = LG_RX_WIRE;
    lg_meter_token(st, &c, &w);
    assert_int_equal(st->rx_kernel_tokens, 1);
    assert_int_equal(st->rx_wire_tokens, 1);
    assert_int_equal(st->rx_exact_tokens, 1);
    assert_int_equal(st->rx_user_tokens, 0);
    assert_int_equal(only(st, LG_H_CLIENT_DELAY), 300);
    assert_int_equal(only(st, LG_H_PICKUP), 100);
    assert_int_equal(only(st, LG_H_PROCESSING), 200);

    /* a wire time for a read no pickup timed (read_kind delivery): the
     * pickup delay is there, the processing is not */
    lg_stage_stats *s2 = lg_stats_new();
    lg_meter_tok wd = kernel_tok(2000, 2500, 2100, 0);
    wd.kind = LG_RX_WIRE;
    wd.read_kind = LG_RX_DELIVERY;
    lg_meter_token(s2, &c, &wd);
    assert_int_equal(H(s2, LG_H_PROCESSING)->total, 0);
    assert_int_equal(only(s2, LG_H_PICKUP), 100);

    lg_stage_stats *s3 = lg_stats_new();
    lg_meter_tok p = {.t_ns = 3100,
                      .tu_ns = 3400,
                      .kind = LG_RX_PICKUP,
                      .read_kind = LG_RX_PICKUP,
                      .entry_ns = 3100,
                      .stamp_ns = 3000,
                      .dispatch_ns = 100};
    lg_meter_token(s3, &c, &p);
    assert_int_equal(s3->rx_user_tokens, 1);
    assert_int_equal(s3->rx_kernel_tokens + s3->rx_wire_tokens + s3->rx_exact_tokens, 0);
    assert_int_equal(only(s3, LG_H_PROCESSING), 300);
    assert_int_equal(only(s3, LG_H_OVERHEAD), 400);
    assert_int_equal(H(s3, LG_H_CLIENT_DELAY)->total, 0);
    assert_int_equal(H(s3, LG_H_PICKUP)->total, 0);
    assert_int_equal(H(s3, LG_H_SERVER_SEND)->total, 0);
    assert_int_equal(only(s3, LG_H_ITL), 1100);

    lg_stage_stats *s4 = lg_stats_new();
    lg_meter_tok d = {
        .t_ns = 5000, .tu_ns = 5000, .kind = LG_RX_DELIVERY, .read_kind = LG_RX_DELIVERY};
    lg_meter_token(s4, &c, &d);
    assert_int_equal(s4->rx_user_tokens, 1);
    assert_int_equal(H(s4, LG_H_PROCESSING)->total, 0);
    assert_int_equal(H(s4, LG_H_CLIENT_DELAY)->total, 0);
    assert_int_equal(c.tokens, 4);
    free(st);
    free(s2);
    free(s3);
    free(s4);
}

static void test_host_cpu_line(void **state)
{
    (void)state;
    rb_host_reading x = reading(-5, -5, -5, -5);
    assert_int_equal(rb_host_parse_cpu_line("cpu  1 2 3 4 5 6 7 8 9 10\n", 100, &x), 0);
    assert_int_equal(x.steal_ns, 8 * 10000000LL); /* the eighth field, at 10 ms a tick */
    assert_int_equal(x.cpu_ns, 36 * 10000000LL);  /* the first eight */
    assert_int_equal(x.idle_ns, 9 * 10000000LL);  /* idle and iowait */
    assert_int_equal(rb_host_parse_cpu_line("cpu 1 2 3 4 5 6 7 8\n", 1000, &x), 0);
    assert_int_equal(x.steal_ns, 8 * 1000000LL);
    assert_int_equal(rb_host_parse_cpu_line("cpu 1 2 3 4 5 6 7 8\n", 0, &x), 0);
    assert_int_equal(x.steal_ns, 8 * 10000000LL); /* no clock rate: 100 Hz */
    assert_int_equal(rb_host_parse_cpu_line("cpu 1 2 3 4 5 6 7\n", 100, &x), -1);
    assert_int_equal(x.steal_ns, 0);
    assert_int_equal(x.cpu_ns, 0);
    assert_int_equal(x.idle_ns, 0);
    /* On this Linux host the counters are there and count. */
    rb_host_reading r;
    rb_host_sample(&r);
    assert_true(r.cpu_ns > 0);
    assert_true(r.steal_ns >= 0 && r.steal_ns <= r.cpu_ns);
    assert_true(r.idle_ns >= 0 && r.idle_ns <= r.cpu_ns);
    assert_true(r.nivcsw >= 0);
    assert_true(r.run_delay_ns >= -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callbacks_in_window), cmocka_unit_test(test_window_one_stage),
        cmocka_unit_test(test_cut_stage),           cmocka_unit_test(test_run_delay_unknown),
        cmocka_unit_test(test_token_split),         cmocka_unit_test(test_token_kinds),
        cmocka_unit_test(test_host_cpu_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
