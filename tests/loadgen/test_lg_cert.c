/* Tests of lg_cert: parsing calibrate's certificate and the refuse/accept
 * rule (per-process planned rate against the certified one for this k, or
 * the closest k; another host is only a warning). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lg_cert.h"

static const char *CERT =
    "{\"host\":{\"cpu_model\":\"Test CPU\",\"cores_online\":2,\"kernel\":\"Linux\"},"
    "\"budget_us\":50,"
    "\"per_k\":[{\"workers\":1,\"safe_rho\":0.3,\"safe_rate_per_worker\":1000,\"safe_total_rate\":"
    "1000,\"transport_us\":21.5},"
    "{\"workers\":2,\"safe_rho\":0.25,\"safe_rate_per_worker\":800,\"safe_total_rate\":1600}]}";

static rb_host host(const char *cpu, int cores)
{
    rb_host h = {0};
    strcpy(h.cpu_model, cpu);
    h.cores_online = cores;
    return h;
}

static void test_parse(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    assert_string_equal(c.cpu_model, "Test CPU");
    assert_int_equal(c.cores_online, 2);
    assert_true(c.budget_us == 50);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.per_k[1].workers, 2);
    assert_true(c.per_k[1].safe_rate_per_worker == 800);
    assert_true(c.per_k[1].safe_rho == 0.25);
    /* the transport term feeds the verdict; an entry without it has NAN */
    assert_true(c.per_k[0].transport_us == 21.5);
    assert_true(isnan(c.per_k[1].transport_us));
    lg_cert_free(&c);
}

static void test_parse_errors_name_the_key(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    const char *no_host = "{\"per_k\":[]}";
    assert_int_equal(lg_cert_parse(no_host, strlen(no_host), &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "host.cpu_model"));
    const char *no_rate = "{\"host\":{\"cpu_model\":\"x\",\"cores_online\":2},"
                          "\"per_k\":[{\"workers\":1,\"safe_rho\":0.3}]}";
    assert_int_equal(lg_cert_parse(no_rate, strlen(no_rate), &c, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "per_k[0].safe_rate_per_worker"));
    assert_int_equal(lg_cert_parse("nope", 4, &c, err, sizeof err), -EINVAL);
}

static void test_rule(void **state)
{
    (void)state;
    lg_cert c;
    char err[256];
    assert_int_equal(lg_cert_parse(CERT, strlen(CERT), &c, err, sizeof err), 0);
    rb_host h = host("Test CPU", 2);
    lg_cert_decision d;
    /* 1500/s over 2 workers = 750 per worker <= 800: accepted */
    lg_cert_check(&c, &h, 2, 1500, &d);
    assert_true(d.ok);
    assert_true(d.exact_k);
    assert_false(d.other_host);
    assert_string_equal(d.warning, "");
    /* 1700/s over 2 = 850 > 800: refused, and the message gives the numbers */
    lg_cert_check(&c, &h, 2, 1700, &d);
    assert_false(d.ok);
    assert_non_null(strstr(d.message, "850.0"));
    assert_non_null(strstr(d.message, "800.0"));
    /* the boundary is accepted */
    lg_cert_check(&c, &h, 2, 1600, &d);
    assert_true(d.ok);
    /* no entry for k=4: the closest (2) is used, and said */
    lg_cert_check(&c, &h, 4, 3000, &d);
    assert_true(d.ok); /* 750 per worker */
    assert_false(d.exact_k);
    assert_int_equal(d.entry->workers, 2);
    assert_non_null(strstr(d.warning, "closest"));
    /* an infinite rate is beyond any certificate */
    lg_cert_check(&c, &h, 1, INFINITY, &d);
    assert_false(d.ok);
    /* closed loop: nothing to compare, accepted */
    lg_cert_check(&c, &h, 1, NAN, &d);
    assert_true(d.ok);
    /* another host: a warning, the rule still applies */
    rb_host other = host("Other CPU", 8);
    lg_cert_check(&c, &other, 1, 900, &d);
    assert_true(d.ok);
    assert_true(d.other_host);
    assert_non_null(strstr(d.warning, "another host"));
    lg_cert_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_errors_name_the_key),
        cmocka_unit_test(test_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
