/* Unit tests for rb_json: absent, null and wrong-typed keys read the same
 * way everywhere; figures that are not finite are written as null. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rb_json.h"

static const char DOC[] = "{\"n\":2.5,\"z\":null,\"s\":\"text\",\"ci\":[1,null],\"bad\":[\"x\"],"
                          "\"o\":{\"n\":7}}";

static void getters_read_numbers_and_fall_back(void **state)
{
    cJSON *j = cJSON_Parse(DOC);
    assert_non_null(j);
    assert_true(rb_json_num(j, "n") == 2.5);
    assert_true(isnan(rb_json_num(j, "z")));       /* null */
    assert_true(isnan(rb_json_num(j, "s")));       /* a string */
    assert_true(isnan(rb_json_num(j, "missing"))); /* absent */
    assert_true(isnan(rb_json_num(NULL, "n")));    /* no parent */
    assert_true(rb_json_num(cJSON_GetObjectItemCaseSensitive(j, "o"), "n") == 7);
    double v = -1;
    assert_int_equal(rb_json_get_num(j, "n", &v), 0);
    assert_true(v == 2.5);
    v = -1;
    assert_int_equal(rb_json_get_num(j, "z", &v), -1);
    assert_true(v == -1); /* untouched */
    char buf[3];
    rb_json_str(j, "s", buf, sizeof buf);
    assert_string_equal(buf, "te"); /* truncated to the buffer */
    rb_json_str(j, "n", buf, sizeof buf);
    assert_string_equal(buf, "");
    double p[2];
    rb_json_pair(j, "ci", p);
    assert_true(p[0] == 1 && isnan(p[1]));
    rb_json_pair(j, "bad", p);
    assert_true(isnan(p[0]) && isnan(p[1]));
    cJSON_Delete(j);
}

static void putters_write_null_for_what_is_not_finite(void **state)
{
    cJSON *o = cJSON_CreateObject();
    rb_json_put_num(o, "a", 1.5);
    rb_json_put_num(o, "b", NAN);
    rb_json_put_num(o, "c", -INFINITY);
    const double ci[2] = {INFINITY, 3};
    rb_json_put_pair(o, "ci", ci);
    rb_json_put_str(o, "s", "lo");
    rb_json_put_str(o, "e", "");
    rb_json_put_str(o, "n", NULL);
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"a\":1.5,\"b\":null,\"c\":null,\"ci\":[null,3],\"s\":\"lo\","
                              "\"e\":null,\"n\":null}");
    free(text);
    cJSON_Delete(o);
}

/* The result JSON's unbounded values: "inf", "-inf"; NaN is still null, and
 * the getter reads neither string as a number. */
static void put_num_inf_writes_inf_as_a_string(void **state)
{
    cJSON *o = cJSON_CreateObject();
    rb_json_put_num_inf(o, "a", 2.5);
    rb_json_put_num_inf(o, "b", NAN);
    rb_json_put_num_inf(o, "c", INFINITY);
    rb_json_put_num_inf(o, "d", -INFINITY);
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"a\":2.5,\"b\":null,\"c\":\"inf\",\"d\":\"-inf\"}");
    free(text);
    assert_true(isnan(rb_json_num(o, "c")));
    cJSON_Delete(o);
}

static void copy_duplicates_a_member_when_there(void **state)
{
    cJSON *src = cJSON_Parse("{\"a\":{\"b\":[1,2]},\"n\":null}");
    cJSON *dst = cJSON_CreateObject();
    rb_json_copy(dst, src, "a");
    rb_json_copy(dst, src, "n");
    rb_json_copy(dst, src, "absent");
    cJSON_Delete(src); /* a deep copy: dst stands alone */
    char *text = cJSON_PrintUnformatted(dst);
    assert_string_equal(text, "{\"a\":{\"b\":[1,2]},\"n\":null}");
    free(text);
    cJSON_Delete(dst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(getters_read_numbers_and_fall_back),
        cmocka_unit_test(putters_write_null_for_what_is_not_finite),
        cmocka_unit_test(put_num_inf_writes_inf_as_a_string),
        cmocka_unit_test(copy_duplicates_a_member_when_there),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
