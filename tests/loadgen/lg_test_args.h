/* Shared by the loadgen unit tests that turn input into an lg_args list
 * (config files, vLLM command lines): the list against the flags wanted,
 * or the error against the words it must hold. Include after cmocka.h. */
#ifndef LG_TEST_ARGS_H
#define LG_TEST_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lg_config.h"

/* rc and *a from the call on `what`: 0 and exactly the flags `want`, joined
 * by single spaces. Frees *a. */
static inline void lg_test_args_are(const char *what, int rc, lg_args *a, const char *err,
                                    const char *want)
{
    if (rc) fail_msg("'%s': refused: %s", what, err);
    char got[1024] = "";
    for (int i = 0; i < a->argc; i++) {
        size_t l = strlen(got);
        snprintf(got + l, sizeof got - l, "%s%s", i ? " " : "", a->argv[i]);
    }
    assert_null(a->argv ? a->argv[a->argc] : NULL);
    lg_args_free(a);
    assert_null(a->argv);
    assert_int_equal(a->argc, 0);
    if (strcmp(got, want) != 0) fail_msg("'%s'\n  gave  '%s'\n  wants '%s'", what, got, want);
}

/* -EINVAL, no list, and an error containing want. */
static inline void lg_test_refused(const char *what, int rc, lg_args *a, const char *err,
                                   const char *want)
{
    if (rc != -EINVAL) {
        lg_args_free(a);
        fail_msg("'%s': accepted, wanted an error with '%s'", what, want);
    }
    assert_null(a->argv);
    assert_int_equal(a->argc, 0);
    if (!strstr(err, want)) fail_msg("'%s': error '%s' does not contain '%s'", what, err, want);
}

#endif
