/* lg_yaml: libyaml's event stream folded into a cJSON tree (see lg_yaml.h). */
#include "lg_yaml.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

typedef struct ystate {
    yaml_parser_t parser;
    char *err;
    size_t errlen;
    int depth;
} ystate;

static cJSON *fail(ystate *s, size_t line0, const char *what)
{
    snprintf(s->err, s->errlen, "line %zu: %s", line0 + 1, what);
    return NULL;
}

/* The text is one of the three spellings PyYAML accepts: lower, Capital, UPPER. */
static int spelled(const char *t, const char *lower)
{
    size_t n = strlen(lower);
    if (strlen(t) != n) return 0;
    if (strcmp(t, lower) == 0) return 1;
    int cap = 1, up = 1;
    for (size_t i = 0; i < n; i++) {
        char u = (char)(lower[i] >= 'a' && lower[i] <= 'z' ? lower[i] - 32 : lower[i]);
        up &= t[i] == u;
        cap &= t[i] == (i == 0 ? u : lower[i]);
    }
    return cap || up;
}

/* The digits of t in base `base` (underscores skipped, as PyYAML does),
 * into *v; 0 when any other character, or no digit, is there. */
static int digits_in(const char *t, int base, double *v)
{
    int any = 0;
    *v = 0;
    for (; *t; t++) {
        int d;
        if (*t == '_') continue;
        if (*t >= '0' && *t <= '9')
            d = *t - '0';
        else if (*t >= 'a' && *t <= 'f')
            d = *t - 'a' + 10;
        else if (*t >= 'A' && *t <= 'F')
            d = *t - 'A' + 10;
        else
            return 0;
        if (d >= base) return 0;
        *v = *v * base + d;
        any = 1;
    }
    return any;
}

/* PyYAML's (YAML 1.1) integers, after the sign: 0b binary, 0 octal, 0x
 * hex, decimal, each with underscores, and base 60 (1:30 is 90). Returns 1
 * for an integer, 0 for no number at all (a string: 09, 1__), -1 for a
 * text to read as a float. */
static int as_int(const char *p, double *v)
{
    if (p[0] == '0' && (p[1] == 'b' || p[1] == 'B')) return digits_in(p + 2, 2, v);
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return digits_in(p + 2, 16, v);
    if (strpbrk(p, ".eE")) return -1;
    if (strchr(p, ':')) { /* [1-9][0-9_]*(:[0-5]?[0-9])+ */
        if (p[0] < '1' || p[0] > '9') return 0;
        char buf[64];
        if (strlen(p) >= sizeof buf) return 0;
        strcpy(buf, p);
        double acc = 0, part;
        char *save = NULL;
        int first = 1;
        for (char *tok = strtok_r(buf, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
            if (!first &&
                (strlen(tok) > 2 || strchr(tok, '_') || !digits_in(tok, 10, &part) || part > 59))
                return 0;
            if (first && !digits_in(tok, 10, &part)) return 0;
            acc = acc * 60 + part;
            first = 0;
        }
        if (strstr(p, "::") || p[strlen(p) - 1] == ':') return 0;
        *v = acc;
        return 1;
    }
    if (p[0] == '0' && p[1]) return digits_in(p + 1, 8, v); /* 0[0-7_]+ */
    if (p[0] == '_') return 0;
    return digits_in(p, 10, v);
}

/* A plain scalar that is a whole finite number, as PyYAML's safe_load
 * reads it: an integer of as_int, or a decimal float (with an optional
 * fraction and exponent). */
static int as_number(const char *t, double *out)
{
    const char *p = t;
    if (*p == '+' || *p == '-') p++;
    if (!*p) return 0;
    double iv;
    int ir = as_int(p, &iv);
    if (ir >= 0) {
        if (ir && isfinite(iv)) *out = t[0] == '-' ? -iv : iv;
        return ir && isfinite(iv);
    }
    /* Only digits, one '.', and an exponent: strtod alone would also take
     * "inf", "nan" and hex floats. */
    int digits = 0;
    for (const char *q = p; *q; q++) {
        if (*q >= '0' && *q <= '9')
            digits = 1;
        else if (*q == 'e' || *q == 'E') {
            if (!digits) return 0;
            break;
        } else if (*q != '.')
            return 0;
    }
    if (!digits) return 0;
    char *end;
    double v = strtod(t, &end);
    if (*end || !isfinite(v)) return 0;
    *out = v;
    return 1;
}

static int is_null_text(const char *t)
{
    return !*t || strcmp(t, "~") == 0 || spelled(t, "null");
}

static int bool_text(const char *t)
{
    static const char *const yes[] = {"true", "yes", "on"}, *const no[] = {"false", "no", "off"};
    for (int i = 0; i < 3; i++) {
        if (spelled(t, yes[i])) return 1;
        if (spelled(t, no[i])) return 0;
    }
    return -1;
}

static cJSON *scalar(ystate *s, const yaml_event_t *ev)
{
    const char *t = (const char *)ev->data.scalar.value;
    const char *tag = (const char *)ev->data.scalar.tag;
    size_t line = ev->start_mark.line;
    if (strlen(t) != ev->data.scalar.length) return fail(s, line, "a scalar holds a NUL byte");
    double num;
    int b;
    if (tag) {
        static const char pre[] = "tag:yaml.org,2002:";
        if (strncmp(tag, pre, sizeof pre - 1) != 0 || !tag[sizeof pre - 1]) {
            char what[160];
            snprintf(what, sizeof what, "unsupported tag '%.100s'", tag);
            return fail(s, line, what);
        }
        const char *kind = tag + sizeof pre - 1;
        if (strcmp(kind, "str") == 0) return cJSON_CreateString(t);
        if (strcmp(kind, "int") == 0 || strcmp(kind, "float") == 0) {
            if (!as_number(t, &num)) return fail(s, line, "a !!int or !!float that is no number");
            return cJSON_CreateNumber(num);
        }
        if (strcmp(kind, "bool") == 0) {
            if ((b = bool_text(t)) < 0) return fail(s, line, "a !!bool that is no boolean");
            return cJSON_CreateBool(b);
        }
        if (strcmp(kind, "null") == 0) {
            if (!is_null_text(t)) return fail(s, line, "a !!null that is not null");
            return cJSON_CreateNull();
        }
        char what[160];
        snprintf(what, sizeof what, "unsupported tag '!!%.100s'", kind);
        return fail(s, line, what);
    }
    if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return cJSON_CreateString(t);
    if (is_null_text(t)) return cJSON_CreateNull();
    if ((b = bool_text(t)) >= 0) return cJSON_CreateBool(b);
    if (as_number(t, &num)) return cJSON_CreateNumber(num);
    return cJSON_CreateString(t);
}

/* Next event, or NULL with the parser's own message and line. */
static int next(ystate *s, yaml_event_t *ev)
{
    if (yaml_parser_parse(&s->parser, ev)) return 0;
    char what[200];
    snprintf(what, sizeof what, "not valid YAML: %.120s%s%.60s",
             s->parser.problem ? s->parser.problem : "error", s->parser.context ? " " : "",
             s->parser.context ? s->parser.context : "");
    fail(s, s->parser.problem_mark.line, what);
    return -1;
}

static cJSON *node(ystate *s, yaml_event_t *ev);

/* The rest of a sequence or mapping whose start event has been read. */
static cJSON *collection(ystate *s, int mapping, size_t line)
{
    if (++s->depth > LG_YAML_MAX_DEPTH) {
        char what[64];
        snprintf(what, sizeof what, "nested deeper than %d levels", LG_YAML_MAX_DEPTH);
        return fail(s, line, what);
    }
    cJSON *c = mapping ? cJSON_CreateObject() : cJSON_CreateArray();
    if (!c) return fail(s, line, "out of memory");
    for (;;) {
        yaml_event_t ev;
        if (next(s, &ev)) goto bad;
        if (ev.type == (mapping ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT)) {
            yaml_event_delete(&ev);
            break;
        }
        char *key = NULL;
        if (mapping) {
            if (ev.type != YAML_SCALAR_EVENT) {
                fail(s, ev.start_mark.line,
                     ev.type == YAML_ALIAS_EVENT ? "aliases (*name) are not supported"
                                                 : "a mapping key must be a scalar");
                yaml_event_delete(&ev);
                goto bad;
            }
            key = strdup((const char *)ev.data.scalar.value);
            yaml_event_delete(&ev);
            if (!key) {
                fail(s, line, "out of memory");
                goto bad;
            }
            if (next(s, &ev)) {
                free(key);
                goto bad;
            }
        }
        cJSON *v = node(s, &ev);
        yaml_event_delete(&ev);
        if (!v) {
            free(key);
            goto bad;
        }
        if (mapping) {
            /* cJSON_AddItemToObject keeps a repeated key: the config reader
             * then names it. */
            int ok = cJSON_AddItemToObject(c, key, v);
            free(key);
            if (!ok) {
                cJSON_Delete(v);
                fail(s, line, "out of memory");
                goto bad;
            }
        } else if (!cJSON_AddItemToArray(c, v)) {
            cJSON_Delete(v);
            fail(s, line, "out of memory");
            goto bad;
        }
    }
    s->depth--;
    return c;
bad:
    cJSON_Delete(c);
    return NULL;
}

/* The node that starts with ev (ev is the caller's to delete). */
static cJSON *node(ystate *s, yaml_event_t *ev)
{
    size_t line = ev->start_mark.line;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        cJSON *v = scalar(s, ev);
        return v || s->err[0] ? v : fail(s, line, "out of memory");
    }
    case YAML_SEQUENCE_START_EVENT:
        if (ev->data.sequence_start.tag &&
            strcmp((const char *)ev->data.sequence_start.tag, YAML_SEQ_TAG) != 0)
            return fail(s, line, "unsupported tag on a sequence");
        return collection(s, 0, line);
    case YAML_MAPPING_START_EVENT:
        if (ev->data.mapping_start.tag &&
            strcmp((const char *)ev->data.mapping_start.tag, YAML_MAP_TAG) != 0)
            return fail(s, line, "unsupported tag on a mapping");
        return collection(s, 1, line);
    case YAML_ALIAS_EVENT:
        return fail(s, line, "aliases (*name) are not supported");
    default:
        return fail(s, line, "unexpected YAML event");
    }
}

cJSON *lg_yaml_parse(const char *text, size_t len, char *err, size_t errlen)
{
    char dummy[8];
    ystate s = {.err = err && errlen ? err : dummy,
                .errlen = err && errlen ? errlen : sizeof dummy};
    s.err[0] = '\0';
    if (!yaml_parser_initialize(&s.parser)) {
        snprintf(s.err, s.errlen, "line 1: out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&s.parser, (const unsigned char *)text, len);
    cJSON *root = NULL;
    yaml_event_t ev;
    int docs = 0, ok = 0;
    for (;;) {
        if (next(&s, &ev)) break;
        yaml_event_type_t t = ev.type;
        size_t line = ev.start_mark.line;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            ok = 1;
            break;
        }
        if (t == YAML_DOCUMENT_START_EVENT && ++docs > 1) {
            yaml_event_delete(&ev);
            fail(&s, line, "more than one YAML document (one config per file)");
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT ||
            t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        /* The document's one node. */
        root = node(&s, &ev);
        yaml_event_delete(&ev);
        if (!root) break;
    }
    yaml_parser_delete(&s.parser);
    if (!ok) {
        cJSON_Delete(root);
        if (!s.err[0]) snprintf(s.err, s.errlen, "line 1: not valid YAML");
        return NULL;
    }
    if (cJSON_IsNull(root)) { /* an empty document; Inference Perf reads it as {} */
        cJSON_Delete(root);
        root = NULL;
    }
    if (!root) root = cJSON_CreateObject();
    if (!root) snprintf(s.err, s.errlen, "line 1: out of memory");
    return root;
}

int lg_yaml_looks_like_json(const char *text, size_t len)
{
    size_t i = 0;
    if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
        (unsigned char)text[2] == 0xBF)
        i = 3;
    while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
        i++;
    return i < len && (text[i] == '{' || text[i] == '[');
}
