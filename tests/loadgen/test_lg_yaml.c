/* Unit tests for lg_yaml: YAML documents become the JSON tree PyYAML's
 * safe_load would give, and what it refuses names its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_yaml.h"

/* The document read back as compact JSON equals want. */
static void expect_json(const char *yaml, const char *want)
{
    char err[256] = "";
    cJSON *t = lg_yaml_parse(yaml, strlen(yaml), err, sizeof err);
    if (!t) fail_msg("yaml '%s': refused: %s", yaml, err);
    char *got = cJSON_PrintUnformatted(t);
    cJSON_Delete(t);
    if (strcmp(got, want) != 0) fail_msg("yaml '%s'\n  gave  %s\n  wants %s", yaml, got, want);
    free(got);
}

static void expect_error(const char *yaml, const char *want)
{
    char err[256] = "";
    cJSON *t = lg_yaml_parse(yaml, strlen(yaml), err, sizeof err);
    if (t) {
        char *got = cJSON_PrintUnformatted(t);
        fail_msg("yaml '%s': accepted as %s, wanted an error with '%s'", yaml, got, want);
    }
    if (!strstr(err, want))
        fail_msg("yaml '%s': error '%s' does not contain '%s'", yaml, err, want);
}

static void block_and_flow_collections(void **state)
{
    (void)state;
    expect_json("load:\n  type: constant\n  stages:\n  - rate: 1\n    duration: 30\n",
                "{\"load\":{\"type\":\"constant\",\"stages\":[{\"rate\":1,\"duration\":30}]}}");
    expect_json("a: {b: [1, 2, {c: d}]}\n", "{\"a\":{\"b\":[1,2,{\"c\":\"d\"}]}}");
    expect_json("- 1\n- - 2\n  - 3\n", "[1,[2,3]]");
    /* comments, indentation of sequences under a key, a trailing document end */
    expect_json("# head\nx:   # after\n- a # item\n- b\n...\n", "{\"x\":[\"a\",\"b\"]}");
    /* JSON is YAML too */
    expect_json("{\"a\": [1.5, true, null]}", "{\"a\":[1.5,true,null]}");
}

static void scalars_resolve_as_pyyaml_does(void **state)
{
    (void)state;
    expect_json("[~, null, Null, NULL, ]", "[null,null,null,null]");
    expect_json("k:\n", "{\"k\":null}");
    expect_json("[true, True, TRUE, yes, Yes, on, ON, false, No, off, OFF]",
                "[true,true,true,true,true,true,true,false,false,false,false]");
    /* other spellings are strings */
    expect_json("[tRUE, nULL, yEs]", "[\"tRUE\",\"nULL\",\"yEs\"]");
    expect_json("[0, -7, +3, 2.5, .5, 1e3, -1.5E-2, 0x1F]", "[0,-7,3,2.5,0.5,1000,-0.015,31]");
    /* YAML 1.1 integers, as PyYAML reads them: a leading 0 is octal, 0b
     * binary, underscores are skipped, and base 60 */
    expect_json("[010, -010, 0b11, 1_000, 0x_1F, 1:30, 190:20:30, 0]",
                "[8,-8,3,1000,31,90,685230,0]");
    /* ... and what PyYAML leaves a string: no octal digit, a bad base-60 part */
    expect_json("[09, 0b12, 1:60, 01:30, 1::3, 1:3_0]",
                "[\"09\",\"0b12\",\"1:60\",\"01:30\",\"1::3\",\"1:3_0\"]");
    /* not numbers: no digits, inf/nan, text after the number, a version */
    expect_json("[., .inf, nan, 10s, 1.2.3, 0x, e5]",
                "[\".\",\".inf\",\"nan\",\"10s\",\"1.2.3\",\"0x\",\"e5\"]");
    /* quoted and block scalars are strings, whatever they look like */
    expect_json("[\"1\", 'true', \"\", 'it''s']", "[\"1\",\"true\",\"\",\"it's\"]");
    expect_json("a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\n",
                "{\"a\":\"line 1\\nline 2\\n\",\"b\":\"folded text\\n\"}");
    expect_json("u: \"caf\\u00e9 \\t\"\n", "{\"u\":\"caf\xc3\xa9 \\t\"}");
    /* keys keep their text */
    expect_json("{1: a, true: b, ~: c}", "{\"1\":\"a\",\"true\":\"b\",\"~\":\"c\"}");
}

static void tags_force_a_type(void **state)
{
    (void)state;
    expect_json("[!!str 1, !!int \"2\", !!float '2.5', !!bool \"yes\", !!null '']",
                "[\"1\",2,2.5,true,null]");
    expect_error("a: !!int ten\n", "line 1: a !!int or !!float that is no number");
    expect_error("a: !!bool maybe\n", "line 1: a !!bool that is no boolean");
    expect_error("a: 1\nb: !!binary aGk=\n", "line 2: unsupported tag '!!binary'");
    expect_error("a: !custom x\n", "line 1: unsupported tag '!custom'");
    expect_error("a: !!set {x}\n", "line 1: unsupported tag on a mapping");
}

static void repeated_keys_are_kept_for_the_config_reader(void **state)
{
    (void)state;
    expect_json("a: 1\na: 2\n", "{\"a\":1,\"a\":2}");
}

static void empty_documents_are_empty_objects(void **state)
{
    (void)state;
    expect_json("", "{}");
    expect_json("# only a comment\n\n", "{}");
    expect_json("---\n", "{}");
    expect_json("--- # c\n...\n", "{}");
}

static void refused_with_the_line(void **state)
{
    (void)state;
    expect_error("a: 1\nb: [1, 2\n", "not valid YAML");
    expect_error("a: 1\n b: 2\n", "line 2: not valid YAML");
    expect_error("a: &x 1\nb: *x\n", "line 2: aliases (*name) are not supported");
    expect_error("- &x [1]\n- *x\n", "line 2: aliases");
    expect_error("a: 1\n---\nb: 2\n", "line 2: more than one YAML document");
    expect_error("? [1, 2]\n: x\n", "line 1: a mapping key must be a scalar");
    expect_error("\tkey: 1\n", "line 1: not valid YAML");
    /* an anchor alone is harmless */
    expect_json("a: &x 1\n", "{\"a\":1}");
    /* NUL bytes inside a scalar */
    char nul[] = "a: \"x\\0y\"\n";
    expect_error(nul, "line 1: a scalar holds a NUL byte");
}

static void depth_is_bounded(void **state)
{
    (void)state;
    char deep[2 * (LG_YAML_MAX_DEPTH + 2) + 1];
    size_t n = 0;
    for (int i = 0; i < LG_YAML_MAX_DEPTH; i++)
        deep[n++] = '[';
    for (int i = 0; i < LG_YAML_MAX_DEPTH; i++)
        deep[n++] = ']';
    deep[n] = '\0';
    char err[128];
    cJSON *t = lg_yaml_parse(deep, n, err, sizeof err);
    if (!t) fail_msg("%d levels refused: %s", LG_YAML_MAX_DEPTH, err);
    cJSON_Delete(t);
    memmove(deep + 1, deep, n + 1);
    deep[0] = '[';
    deep[n + 1] = ']';
    deep[n + 2] = '\0';
    expect_error(deep, "line 1: nested deeper than 64 levels");
}

static void the_length_is_honoured(void **state)
{
    (void)state;
    const char *txt = "a: 1\nb: [";
    char err[64];
    cJSON *t = lg_yaml_parse(txt, 4, err, sizeof err); /* "a: 1" only */
    assert_non_null(t);
    char *got = cJSON_PrintUnformatted(t);
    assert_string_equal(got, "{\"a\":1}");
    free(got);
    cJSON_Delete(t);
    /* a NULL error buffer is allowed */
    assert_null(lg_yaml_parse("[", 1, NULL, 0));
}

static void json_is_told_from_yaml(void **state)
{
    (void)state;
    assert_true(lg_yaml_looks_like_json(" \n{\"a\":1}", 9));
    assert_true(lg_yaml_looks_like_json("\xef\xbb\xbf[1]", 6));
    assert_false(lg_yaml_looks_like_json("a: {b: 1}", 9));
    assert_false(lg_yaml_looks_like_json("# {x}\n", 6));
    assert_false(lg_yaml_looks_like_json("   ", 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(block_and_flow_collections),
        cmocka_unit_test(scalars_resolve_as_pyyaml_does),
        cmocka_unit_test(tags_force_a_type),
        cmocka_unit_test(repeated_keys_are_kept_for_the_config_reader),
        cmocka_unit_test(empty_documents_are_empty_objects),
        cmocka_unit_test(refused_with_the_line),
        cmocka_unit_test(depth_is_bounded),
        cmocka_unit_test(the_length_is_honoured),
        cmocka_unit_test(json_is_told_from_yaml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
