/* Unit tests for rb_text: the token-counting rule simserver and loadgen share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "rb_text.h"

static int64_t count(const char *s)
{
    return rb_count_words(s, strlen(s));
}

static void words_are_runs_of_non_space(void **state)
{
    assert_int_equal(count(""), 0);
    assert_int_equal(count("   \t\n"), 0);
    assert_int_equal(count("hello"), 1);
    assert_int_equal(count("hello world"), 2);
    assert_int_equal(count("  leading and trailing  "), 3);
    assert_int_equal(count("a\tb\nc\rd\ve\ff"), 6);
    assert_int_equal(count("don't split-on punctuation."), 3);
}

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
    assert_int_equal(count("caf\xc3\xa9 na\xc3\xafve"), 2);
    assert_true(rb_is_space(' ') && !rb_is_space(0xa0)); /* no locale: NBSP is a word byte */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(words_are_runs_of_non_space),
        cmocka_unit_test(length_bounds_the_count_not_nul),
        cmocka_unit_test(bytes_above_127_are_word_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
