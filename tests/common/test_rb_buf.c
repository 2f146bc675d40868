/* Unit tests for rb_buf: growth, the cap, the sticky error, the appenders
 * and the two JSON escapers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rb_buf.h"

static void grows_and_stays_nul_terminated(void **state)
{
    rb_buf b = RB_BUF_INIT(0);
    char chunk[100];
    memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 50; i++)
        assert_int_equal(rb_buf_add(&b, chunk, sizeof chunk), 0);
    assert_int_equal(b.len, 5000);
    assert_true(b.cap > b.len);
    assert_int_equal(b.data[b.len], '\0');
    assert_int_equal(strspn(b.data, "x"), 5000);
    rb_buf_free(&b);
    assert_null(b.data);
    assert_int_equal(b.len + b.cap + (size_t)b.err, 0);
}

static void the_cap_is_exact_and_the_error_sticks(void **state)
{
    rb_buf b = RB_BUF_INIT(10);
    assert_int_equal(rb_buf_puts(&b, "0123456789"), 0); /* exactly the cap */
    assert_int_equal(rb_buf_add(&b, "a", 1), -EMSGSIZE);
    assert_null(b.data); /* the buffer was freed */
    assert_int_equal(b.len, 0);
    /* sticky: nothing more is added, even what would fit */
    assert_int_equal(rb_buf_puts(&b, "a"), -EMSGSIZE);
    assert_int_equal(rb_buf_u64(&b, 7), -EMSGSIZE);
    assert_int_equal(rb_buf_json_str(&b, "x", 1), -EMSGSIZE);
    assert_int_equal(b.len, 0);
    char *out = (char *)1;
    size_t len = 9;
    assert_int_equal(rb_buf_take(&b, &out, &len), -EMSGSIZE);
    assert_null(out);
    assert_int_equal(len, 0);
    /* take cleared the error: the buffer is usable again */
    assert_int_equal(rb_buf_puts(&b, "ok"), 0);
    assert_string_equal(b.data, "ok");
    rb_buf_free(&b);
}

static void a_huge_append_is_refused_without_overflow(void **state)
{
    rb_buf b = RB_BUF_INIT(0);
    assert_int_equal(rb_buf_puts(&b, "abc"), 0);
    assert_int_equal(rb_buf_reserve(&b, SIZE_MAX - 1), -EMSGSIZE);
    assert_int_equal(b.err, -EMSGSIZE);
    rb_buf_free(&b);
    assert_int_equal(b.err, 0);
}

static void printf_and_integers(void **state)
{
    rb_buf b = {0};
    rb_buf_printf(&b, "%s=%d;", "n", 42);
    rb_buf_u64(&b, 0);
    rb_buf_puts(&b, ",");
    rb_buf_u64(&b, UINT64_MAX);
    rb_buf_puts(&b, ",");
    rb_buf_i64(&b, INT64_MIN);
    rb_buf_puts(&b, ",");
    rb_buf_i64(&b, -1);
    assert_int_equal(b.err, 0);
    assert_string_equal(b.data, "n=42;0,18446744073709551615,-9223372036854775808,-1");
    /* printf past the cap fails like any append */
    rb_buf c = RB_BUF_INIT(4);
    assert_int_equal(rb_buf_printf(&c, "%d", 12345), -EMSGSIZE);
    rb_buf_free(&b);
    rb_buf_free(&c);
}

static void json_str_escapes_and_replaces_bad_utf8(void **state)
{
    rb_buf b = {0};
    const char in[] = "a\"b\\c\n\r\t\x01 caf\xc3\xa9 \xff \xed\xa0\x80 \xc3";
    rb_buf_json_str(&b, in, sizeof in - 1);
    assert_string_equal(b.data, "a\\\"b\\\\c\\n\\r\\t\\u0001 caf\xc3\xa9 \\ufffd "
                                "\\ufffd\\ufffd\\ufffd \\ufffd");
    rb_buf_free(&b);
}

static void json_bytes_copies_high_bytes(void **state)
{
    rb_buf b = {0};
    const char in[] = "q\"\x1f caf\xc3\xa9 \xff";
    rb_buf_json_bytes(&b, in, sizeof in - 1);
    assert_string_equal(b.data, "q\\\"\\u001f caf\xc3\xa9 \xff");
    rb_buf_free(&b);
}

static void take_hands_over_and_reset_keeps_memory(void **state)
{
    rb_buf b = {0};
    char *out;
    size_t len;
    assert_int_equal(rb_buf_take(&b, &out, &len), 0); /* nothing added: "" */
    assert_string_equal(out, "");
    assert_int_equal(len, 0);
    free(out);
    rb_buf_puts(&b, "hello");
    char *keep = b.data;
    rb_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(b.data, "");
    rb_buf_puts(&b, "again");
    assert_ptr_equal(b.data, keep); /* the memory was reused */
    assert_int_equal(rb_buf_take(&b, &out, &len), 0);
    assert_string_equal(out, "again");
    assert_int_equal(len, 5);
    assert_null(b.data);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(grows_and_stays_nul_terminated),
        cmocka_unit_test(the_cap_is_exact_and_the_error_sticks),
        cmocka_unit_test(a_huge_append_is_refused_without_overflow),
        cmocka_unit_test(printf_and_integers),
        cmocka_unit_test(json_str_escapes_and_replaces_bad_utf8),
        cmocka_unit_test(json_bytes_copies_high_bytes),
        cmocka_unit_test(take_hands_over_and_reset_keeps_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
