/* Unit tests for rb_text: the token-counting rule simserver and loadgen share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rb_text.h"

/* The rule's everyday cases are tested through its loadgen wrapper
 * (tests/loadgen/test_lg_dataset.c); these are the edges of the byte rule. */
static void length_bounds_the_count_not_nul(void **state)
{
    const char buf[] = {'a', ' ', 'b', '\0', 'c', ' ', 'd'};
    /* a NUL byte is not whitespace: it joins the word around it */
    assert_int_equal(rb_count_words(buf, sizeof buf), 3);
    assert_int_equal(rb_count_words(buf, 1), 1);
    assert_int_equal(rb_count_words(buf, 0), 0);
}

static void bytes_above_127_are_word_bytes(void **state)
{
    const char utf8[] = "caf\xc3\xa9 na\xc3\xafve";
    assert_int_equal(rb_count_words(utf8, sizeof utf8 - 1), 2);
    assert_true(rb_is_space(' ') && !rb_is_space(0xa0)); /* no locale: NBSP is a word byte */
}

static void set_err_formats_truncates_and_tolerates_null(void **state)
{
    char buf[16];
    rb_set_err(buf, sizeof buf, "rate: %d", -5);
    assert_string_equal(buf, "rate: -5");
    rb_set_err(buf, sizeof buf, "%s", "a message longer than the buffer");
    assert_int_equal(strlen(buf), sizeof buf - 1);
    rb_set_err(NULL, 10, "ignored %d", 1);
    rb_set_err(buf, 0, "ignored %d", 2);
    assert_int_equal(strlen(buf), sizeof buf - 1); /* untouched */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(length_bounds_the_count_not_nul),
        cmocka_unit_test(bytes_above_127_are_word_bytes),
        cmocka_unit_test(set_err_formats_truncates_and_tolerates_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
