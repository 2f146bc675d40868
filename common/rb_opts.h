/* rb_opts: one options table per program, and the parser and --help that
 * are generated from it. Each entry holds the flag's name, its type and
 * unit, where its value goes, its bounds, its default (as it would be
 * typed, so the defaults go through the same parser as the flags), its help
 * text and its config key. Tables are kept in alphabetical order, as curl's
 * src/tool_getparam.c keeps its own; rb_opts_check says when one is not.
 *
 * The convention of the suite, which the programs keep by using this:
 * --help prints the usage to stdout and exits 0; --version prints the
 * version and exits 0; bad usage prints a message naming the flag and the
 * value ("--port: must be an integer in [0, 65535], got 'x'") and exits 2.
 * Flags are long only ("--name VALUE" or "--name=VALUE"; -h is --help);
 * there are no abbreviations and no positional arguments.
 *
 * Pure: no I/O, no allocation but rb_opts_usage's text. Single-threaded. */
#ifndef RB_OPTS_H
#define RB_OPTS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    RB_OPT_FLAG,     /* no value: stores ival in an int */
    RB_OPT_BOOL,     /* --x (1), --x=true|false|1|0, in an int */
    RB_OPT_INT,      /* a whole number in [lo, hi], in an int or a 64-bit integer */
    RB_OPT_DOUBLE,   /* a number in [min, max] (min itself refused when excl_min) */
    RB_OPT_DURATION, /* 500us, 20ms, 2s (rb_parse_duration_ns): int64_t ns in [lo, hi] */
    RB_OPT_SECONDS,  /* the same, a plain number being seconds (run lengths, timeouts) */
    RB_OPT_SIZE,     /* 64k, 1M (rb_parse_size): uint64_t bytes in [lo, hi] */
    RB_OPT_STR,      /* a non-empty string copied into a char array of size bytes */
    RB_OPT_CHOICE,   /* one of choices[] by name, its value stored in an int */
    RB_OPT_CUSTOM,   /* fn parses the value (a flag without one when arg is NULL) */
} rb_opt_type;

/* A custom flag's parser: 0, or -1 with why ("must be random or echo"). base
 * is the options struct; value is NULL for a custom flag without a value. */
typedef int (*rb_opt_fn)(void *base, const char *value, char *why, size_t whylen);

/* One name of an RB_OPT_CHOICE (several names may share a value). */
typedef struct rb_choice {
    const char *name;
    int value;
} rb_choice;

typedef struct rb_opt {
    const char *name; /* without "--" */
    rb_opt_type type;
    const char *arg;          /* the value's name in --help ("N", "DUR"); NULL: takes none */
    const char *unit;         /* the value's unit ("us", "requests/s"); NULL: none */
    size_t off, size;         /* where the value goes (RB_OPT_AT) */
    int64_t lo, hi;           /* INT, DURATION, SECONDS, SIZE bounds (hi 0: none but INT's) */
    double min, max;          /* DOUBLE bounds */
    int excl_min;             /* DOUBLE: must be > min */
    int ival;                 /* FLAG: the value stored */
    rb_opt_fn fn;             /* CUSTOM */
    const rb_choice *choices; /* CHOICE: ended by a NULL name */
    int greedy;       /* takes every following argument not starting with "--" (at least one) */
    int given;        /* a value from the command line also sets an int at given_off to 1 */
    size_t given_off; /* (RB_OPT_GIVEN; a default does not set it) */
    const char *def;  /* the default, as typed; NULL: none, or the program sets it */
    const char *help; /* wrapped in --help */
    const char *why;  /* what a bad value is told; NULL: said from the type and bounds */
    const char *key;  /* the config-file key ("load.seed": a dotted path); NULL: none */
} rb_opt;

#define RB_OPT_AT(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define RB_OPT_GIVEN(type, member) .given = 1, .given_off = offsetof(type, member)

typedef struct rb_opts_spec {
    const char *prog; /* "simserver" */
    const rb_opt *opts;
    size_t n;
    const char *head; /* the usage text before the flags ("Usage: ...\n...\n") */
    const char *tail; /* and after them ("" or NULL: nothing) */
    /* The messages for an unknown flag (%s: "--name") and a stray argument
     * (%s: the argument); NULL: "--name: unknown option (see --help)" and
     * "ARG: unexpected argument (see --help)". */
    const char *unknown_fmt, *stray_fmt;
} rb_opts_spec;

enum { RB_OPTS_OK = 0, RB_OPTS_HELP = 1, RB_OPTS_VERSION = 2 };

/* The table is sorted by name, names are unique, and every entry is
 * well-formed (its storage fits its type, a default parses). 0, or -1 with
 * err naming the entry. For the programs' unit tests. */
int rb_opts_check(const rb_opts_spec *s, void *scratch_base, char *err, size_t errlen);

/* Stores every entry's default (def) into base. 0, or -1 with err. */
int rb_opts_defaults(const rb_opts_spec *s, void *base, char *err, size_t errlen);

/* Parses argv[0..argc) (no program name) into base. Returns RB_OPTS_OK,
 * RB_OPTS_HELP, RB_OPTS_VERSION, or -1 with err naming the flag and value.
 * argv must outlive base only for what custom parsers keep. */
int rb_opts_parse(const rb_opts_spec *s, void *base, int argc, char **argv, char *err,
                  size_t errlen);

/* The entry for name (without "--"), or NULL. */
const rb_opt *rb_opts_find(const rb_opts_spec *s, const char *name);

/* The entry whose config key is key ("load.seed"), or NULL. Keys are unique
 * (rb_opts_check); a linear scan, for reading config files. */
const rb_opt *rb_opts_find_key(const rb_opts_spec *s, const char *key);

/* --help's text: head, one paragraph per entry in table order (wrapped at 79
 * columns, with its unit and default), then --help, --version and tail.
 * malloc'd, caller frees; NULL on no memory. */
char *rb_opts_usage(const rb_opts_spec *s);

#endif
