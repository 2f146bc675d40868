/* rb_opts: see rb_opts.h. */
#include "rb_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_buf.h"
#include "rb_text.h"
#include "rb_units.h"

#define USAGE_WIDTH 79
#define HELP_COLUMN 32

const rb_opt *rb_opts_find(const rb_opts_spec *s, const char *name)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(name, s->opts[mid].name);
        if (c == 0) return &s->opts[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

const rb_opt *rb_opts_find_key(const rb_opts_spec *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->opts[i].key && strcmp(s->opts[i].key, key) == 0) return &s->opts[i];
    return NULL;
}

static int store_int(const rb_opt *o, void *base, int64_t v)
{
    char *p = (char *)base + o->off;
    if (o->size == sizeof(int)) {
        int i = (int)v;
        memcpy(p, &i, sizeof i);
    } else if (o->size == sizeof(int64_t)) {
        memcpy(p, &v, sizeof v);
    } else {
        return -1;
    }
    return 0;
}

/* What a bad value of o is told, when the table does not say. */
static void default_why(const rb_opt *o, char *why, size_t n)
{
    switch (o->type) {
    case RB_OPT_BOOL:
        snprintf(why, n, "must be true or false");
        break;
    case RB_OPT_INT:
        if (o->hi == INT64_MAX)
            snprintf(why, n, "must be an integer >= %lld", (long long)o->lo);
        else
            snprintf(why, n, "must be an integer in [%lld, %lld]", (long long)o->lo,
                     (long long)o->hi);
        break;
    case RB_OPT_DOUBLE:
        if (o->excl_min)
            snprintf(why, n, "must be a number > %g%s%s", o->min, o->unit ? " " : "",
                     o->unit ? o->unit : "");
        else
            snprintf(why, n, "must be a number in [%g, %g]", o->min, o->max);
        break;
    case RB_OPT_DURATION:
        snprintf(why, n, "must be a duration >= 0 such as 500us, 20ms or 2s");
        break;
    case RB_OPT_SIZE:
        snprintf(why, n, "must be a size such as 64k or 1M");
        break;
    case RB_OPT_SECONDS:
        snprintf(why, n, "must be seconds >= 0, or a duration with a unit (500ms, 2s)");
        break;
    case RB_OPT_CHOICE: {
        size_t k = (size_t)snprintf(why, n, "must be");
        for (size_t c = 0; o->choices[c].name && k < n; c++) {
            const char *sep = c == 0 ? " " : !o->choices[c + 1].name ? " or " : ", ";
            k += (size_t)snprintf(why + k, n - k, "%s%s", sep, o->choices[c].name);
        }
        break;
    }
    default:
        snprintf(why, n, "is not valid");
    }
}

/* Parses v as o's value into base: 0, or -1 with why. */
static int set_value(const rb_opt *o, void *base, const char *v, char *why, size_t n)
{
    char *p = (char *)base + o->off;
    int64_t i;
    uint64_t u;
    double d;
    int bad = 0;
    switch (o->type) {
    case RB_OPT_FLAG:
        return store_int(o, base, o->ival);
    case RB_OPT_BOOL:
        if (!v || !strcmp(v, "true") || !strcmp(v, "1"))
            i = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "0"))
            i = 0;
        else
            bad = 1;
        if (!bad) return store_int(o, base, i);
        break;
    case RB_OPT_INT:
        bad = rb_parse_i64(v, o->lo, o->hi, &i) != 0;
        if (!bad) return store_int(o, base, i);
        break;
    case RB_OPT_DOUBLE:
        bad = rb_parse_double(v, o->min, o->max, &d) != 0 || (o->excl_min && !(d > o->min));
        if (!bad) {
            memcpy(p, &d, sizeof d);
            return 0;
        }
        break;
    case RB_OPT_DURATION:
    case RB_OPT_SECONDS:
        bad = (o->type == RB_OPT_DURATION ? rb_parse_duration_ns(v, &i)
                                          : rb_parse_seconds_ns(v, &i)) != 0 ||
              i < o->lo || (o->hi && i > o->hi);
        if (!bad) {
            memcpy(p, &i, sizeof i);
            return 0;
        }
        break;
    case RB_OPT_SIZE:
        bad = rb_parse_size(v, &u) != 0 || u < (uint64_t)o->lo || (o->hi && u > (uint64_t)o->hi);
        if (!bad) {
            memcpy(p, &u, sizeof u);
            return 0;
        }
        break;
    case RB_OPT_STR:
        if (*v && strlen(v) < o->size) {
            memcpy(p, v, strlen(v) + 1);
            return 0;
        }
        if (!o->why) {
            snprintf(why, n, "%s", *v ? "too long" : "must not be empty");
            return -1;
        }
        bad = 1;
        break;
    case RB_OPT_CHOICE:
        for (size_t c = 0; o->choices[c].name; c++)
            if (strcmp(v, o->choices[c].name) == 0) return store_int(o, base, o->choices[c].value);
        bad = 1;
        break;
    case RB_OPT_CUSTOM:
        if (o->fn(base, v, why, n) == 0) return 0;
        if (!o->why) return -1; /* fn said why */
        break;
    }
    if (o->why)
        snprintf(why, n, "%s", o->why);
    else
        default_why(o, why, n);
    return -1;
}

/* Stores v into base; user: the value came from the command line (the
 * entry's "given" mark is then set). */
static int apply(const rb_opts_spec *s, const rb_opt *o, void *base, const char *v, int user,
                 char *err, size_t errlen)
{
    char why[400] = "";
    if (set_value(o, base, v, why, sizeof why) == 0) {
        if (user && o->given) {
            int one = 1;
            memcpy((char *)base + o->given_off, &one, sizeof one);
        }
        return 0;
    }
    if (v)
        rb_set_err(err, errlen, "--%s: %s, got '%s'", o->name, why, v);
    else
        rb_set_err(err, errlen, "--%s: %s", o->name, why);
    return -1;
}

int rb_opts_defaults(const rb_opts_spec *s, void *base, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n; i++) {
        const rb_opt *o = &s->opts[i];
        if (o->def && o->type != RB_OPT_FLAG && apply(s, o, base, o->def, 0, err, errlen))
            return -1;
    }
    return 0;
}

/* A flag whose value is optional (--x or --x=V): a BOOL, or a CUSTOM flag
 * without arg. They never take the next argument as their value. */
static int value_optional(const rb_opt *o)
{
    return o->type == RB_OPT_BOOL || o->type == RB_OPT_FLAG ||
           (o->type == RB_OPT_CUSTOM && !o->arg);
}

int rb_opts_parse(const rb_opts_spec *s, void *base, int argc, char **argv, char *err,
                  size_t errlen)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return RB_OPTS_HELP;
        if (!strcmp(a, "--version")) return RB_OPTS_VERSION;
        if (strncmp(a, "--", 2) != 0 || !a[2]) {
            if (s->stray_fmt)
                rb_set_err(err, errlen, s->stray_fmt, a);
            else
                rb_set_err(err, errlen, "%s: unexpected argument (see --help)", a);
            return -1;
        }
        char name[64];
        const char *eq = strchr(a, '=');
        size_t nl = eq ? (size_t)(eq - a) - 2 : strlen(a) - 2;
        const rb_opt *o = NULL;
        if (nl < sizeof name) {
            memcpy(name, a + 2, nl);
            name[nl] = '\0';
            o = rb_opts_find(s, name);
        }
        if (!o) {
            char shown[80];
            snprintf(shown, sizeof shown, "--%.*s", (int)(nl < 60 ? nl : 60), a + 2);
            if (s->unknown_fmt)
                rb_set_err(err, errlen, s->unknown_fmt, shown);
            else
                rb_set_err(err, errlen, "%s: unknown option (see --help)", shown);
            return -1;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (o->type == RB_OPT_FLAG && v) {
            rb_set_err(err, errlen, "--%s: takes no value, got '%s'", o->name, v);
            return -1;
        }
        if (o->greedy) {
            /* vLLM's form: one or more values after the flag */
            int any = 0;
            if (v) {
                if (apply(s, o, base, v, 1, err, errlen)) return -1;
                any = 1;
            }
            while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                if (apply(s, o, base, argv[++i], 1, err, errlen)) return -1;
                any = 1;
            }
            if (!any) {
                rb_set_err(err, errlen, "--%s: needs a value", o->name);
                return -1;
            }
            continue;
        }
        if (!v && !value_optional(o)) {
            if (i + 1 >= argc) {
                rb_set_err(err, errlen, "--%s: needs a value", o->name);
                return -1;
            }
            v = argv[++i];
        }
        if (apply(s, o, base, v, 1, err, errlen)) return -1;
    }
    return RB_OPTS_OK;
}

int rb_opts_check(const rb_opts_spec *s, void *scratch, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n; i++) {
        const rb_opt *o = &s->opts[i];
        if (i > 0 && strcmp(s->opts[i - 1].name, o->name) >= 0) {
            rb_set_err(err, errlen, "--%s: out of alphabetical order (after --%s)", o->name,
                       s->opts[i - 1].name);
            return -1;
        }
        if (!o->help || !*o->help) {
            rb_set_err(err, errlen, "--%s: no help text", o->name);
            return -1;
        }
        for (size_t j = 0; o->key && j < i; j++)
            if (s->opts[j].key && strcmp(s->opts[j].key, o->key) == 0) {
                rb_set_err(err, errlen, "--%s: config key '%s' is --%s's already", o->name, o->key,
                           s->opts[j].name);
                return -1;
            }
        size_t want = o->type == RB_OPT_DOUBLE                                  ? sizeof(double)
                      : o->type == RB_OPT_DURATION || o->type == RB_OPT_SECONDS ? sizeof(int64_t)
                      : o->type == RB_OPT_SIZE                                  ? sizeof(uint64_t)
                                                                                : 0;
        int ok = o->type == RB_OPT_CUSTOM ? o->fn != NULL
                 : o->type == RB_OPT_STR  ? o->size > 1
                 : o->type == RB_OPT_CHOICE
                     ? o->choices && o->choices[0].name && o->size == sizeof(int)
                 : want ? o->size == want
                        : (o->size == sizeof(int) || o->size == sizeof(int64_t));
        ok = ok && (o->arg != NULL) == !value_optional(o);
        if (!ok) {
            rb_set_err(err, errlen, "--%s: its storage or value name does not fit its type",
                       o->name);
            return -1;
        }
        if (o->def && o->type != RB_OPT_FLAG && apply(s, o, scratch, o->def, 0, err, errlen))
            return -1;
    }
    return 0;
}

/* Appends text at column `col` (already reached), wrapped at USAGE_WIDTH
 * with continuation lines indented to HELP_COLUMN. */
static void wrap(rb_buf *b, const char *text, size_t col)
{
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        size_t wl = (size_t)(p - w);
        if (!wl) break;
        if (col > HELP_COLUMN && col + 1 + wl > USAGE_WIDTH) {
            rb_buf_puts(b, "\n");
            rb_buf_printf(b, "%*s", HELP_COLUMN, "");
            col = HELP_COLUMN;
        } else if (col > HELP_COLUMN) {
            rb_buf_add(b, " ", 1);
            col++;
        }
        rb_buf_add(b, w, wl);
        col += wl;
    }
    rb_buf_puts(b, "\n");
}

static void entry(rb_buf *b, const char *flag, const char *text)
{
    size_t start = b->len;
    rb_buf_printf(b, "  %s", flag);
    size_t col = b->len - start;
    if (col + 2 > HELP_COLUMN) {
        rb_buf_puts(b, "\n");
        col = 0;
    }
    rb_buf_printf(b, "%*s", (int)(HELP_COLUMN - col), "");
    wrap(b, text, HELP_COLUMN);
}

char *rb_opts_usage(const rb_opts_spec *s)
{
    rb_buf b = {0};
    if (s->head) rb_buf_puts(&b, s->head);
    for (size_t i = 0; i < s->n; i++) {
        const rb_opt *o = &s->opts[i];
        char flag[128], text[1024];
        if (o->arg)
            snprintf(flag, sizeof flag, "--%s %s", o->name, o->arg);
        else if (o->type == RB_OPT_BOOL)
            snprintf(flag, sizeof flag, "--%s[=BOOL]", o->name);
        else
            snprintf(flag, sizeof flag, "--%s", o->name);
        int n = snprintf(text, sizeof text, "%s", o->help);
        if (o->unit && n >= 0 && (size_t)n < sizeof text)
            n += snprintf(text + n, sizeof text - (size_t)n, " [%s]", o->unit);
        if (o->def && n >= 0 && (size_t)n < sizeof text)
            snprintf(text + n, sizeof text - (size_t)n, " (default %s)", o->def);
        entry(&b, flag, text);
    }
    entry(&b, "--help, -h", "this text (exit 0)");
    entry(&b, "--version", "the version (exit 0)");
    if (s->tail) rb_buf_puts(&b, s->tail);
    char *out;
    return rb_buf_take(&b, &out, NULL) ? NULL : out;
}
