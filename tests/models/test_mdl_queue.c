/* Unit tests of mdl_queue against values computed by hand from the textbook
 * closed forms (M/M/1: W_q = rho/(mu - lambda); M/D/1: rho/(2 mu (1 - rho))). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>

#include <cmocka.h>

#include "mdl_queue.h"

#define assert_close(got, want)                                                                    \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        if (!(fabs(g_ - w_) <= 1e-12 + 1e-9 * fabs(w_)))                                           \
            fail_msg("%s = %.15g, want %.15g", #got, g_, w_);                                      \
    } while (0)

/* lambda 500/s, E[S] 1 ms: rho 0.5. */
static void test_mm1_md1_hand_values(void **state)
{
    (void)state;
    assert_close(mdl_rho(500, 1e-3), 0.5);
    /* M/M/1: rho / (mu - lambda) = 0.5 / 500 = 1 ms */
    assert_close(mdl_mm1_wq(500, 1e-3), 1e-3);
    assert_close(mdl_mg1_wq(500, 1e-3, 2e-6), 1e-3);
    /* M/D/1: rho / (2 mu (1 - rho)) = 0.5 / 1000 = 0.5 ms */
    assert_close(mdl_md1_wq(500, 1e-3), 0.5e-3);
    /* W = W_q + E[S]; L_q = lambda W_q = rho^2/(1-rho) = 0.5 for M/M/1 */
    assert_close(mdl_mg1_w(500, 1e-3, 2e-6), 2e-3);
    assert_close(mdl_mg1_lq(500, 1e-3, 2e-6), 0.5);
    assert_close(mdl_mg1_lq(0, 1e-3, 2e-6), 0.0);
    /* rho 0.9, E[S] 100 us, E[S^2] = 3e-8 s^2 (a cs2 of 2):
     * W_q = 9000 * 3e-8 / (2 * 0.1) = 1.35 ms */
    assert_close(mdl_mg1_wq(9000, 1e-4, 3e-8), 1.35e-3);
}

static void test_kingman_hand_values(void **state)
{
    (void)state;
    /* Poisson arrivals, exponential service: Kingman is exact M/M/1 */
    assert_close(mdl_kingman_wq(500, 1e-3, 1, 1), 1e-3);
    /* constant-rate arrivals halve it */
    assert_close(mdl_kingman_wq(500, 1e-3, 0, 1), 0.5e-3);
    /* rho 0.8, cs2 0.5, ca2 0: 4 * 0.25 * 1 ms = 1 ms */
    assert_close(mdl_kingman_wq(800, 1e-3, 0, 0.5), 1e-3);
    assert_close(mdl_kingman_wq(800, 1e-3, 0, 0), 0.0);
}

static void test_k_process_split(void **state)
{
    (void)state;
    /* 3000/s over 4 processes of E[S] 1 ms: rho_k = 0.75 */
    assert_close(mdl_rho_k(3000, 4, 1e-3), 0.75);
    assert_close(mdl_rho_k(3000, 1, 1e-3), 3.0);
    assert_true(isnan(mdl_rho_k(3000, 0, 1e-3)));
}

static void test_inverses(void **state)
{
    (void)state;
    /* M/M/1 with E[S] 1 ms reaches W_q = 1 ms at lambda 500 */
    assert_close(mdl_mg1_max_lambda(1e-3, 2e-6, 1e-3), 500);
    /* and the inverse really is the boundary */
    double l = mdl_mg1_max_lambda(1e-4, 3e-8, 1e-4);
    assert_close(mdl_mg1_wq(l, 1e-4, 3e-8), 1e-4);
    assert_close(mdl_kingman_max_lambda(1e-3, 1, 1, 1e-3), 500);
    l = mdl_kingman_max_lambda(2e-5, 0, 0.3, 5e-5);
    assert_close(mdl_kingman_wq(l, 2e-5, 0, 0.3), 5e-5);
    /* no variability: the stability limit; zero budget: zero rate */
    assert_close(mdl_kingman_max_lambda(1e-3, 0, 0, 1e-3), 1000);
    assert_close(mdl_mg1_max_lambda(1e-3, 2e-6, 0), 0);
}

static void test_domain_and_stability(void **state)
{
    (void)state;
    assert_true(isinf(mdl_mg1_wq(1000, 1e-3, 2e-6)));
    assert_true(isinf(mdl_mg1_wq(2000, 1e-3, 2e-6)));
    assert_true(isinf(mdl_kingman_wq(1000, 1e-3, 1, 1)));
    assert_true(isinf(mdl_mg1_w(1000, 1e-3, 2e-6)));
    assert_true(isnan(mdl_mg1_wq(-1, 1e-3, 2e-6)));
    assert_true(isnan(mdl_mg1_wq(10, 0, 2e-6)));
    assert_true(isnan(mdl_mg1_wq(10, 1e-3, -1)));
    assert_true(isnan(mdl_mg1_wq(NAN, 1e-3, 2e-6)));
    assert_true(isnan(mdl_kingman_wq(10, 1e-3, -1, 1)));
    assert_true(isnan(mdl_mg1_max_lambda(1e-3, 2e-6, -1)));
    assert_true(isnan(mdl_kingman_max_lambda(0, 1, 1, 1)));
    assert_true(isnan(mdl_rho(INFINITY, 1)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mm1_md1_hand_values),  cmocka_unit_test(test_kingman_hand_values),
        cmocka_unit_test(test_k_process_split),      cmocka_unit_test(test_inverses),
        cmocka_unit_test(test_domain_and_stability),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
