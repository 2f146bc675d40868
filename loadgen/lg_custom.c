/* lg_custom: vLLM's custom JSONL dataset (see lg_custom.h). */
#include "lg_custom.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_file.h"
#include "rb_text.h"
#include "rb_tok.h"

/* Appends one line's prompt; the line's problem goes to why. */
static int take_line(const cJSON *o, const lg_custom_spec *spec, int32_t special, lg_dataset *out,
                     size_t *cap, const char **why)
{
    if (!cJSON_IsObject(o)) return *why = "must be a JSON object", -EINVAL;
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(o, "prompt");
    if (!pr) return *why = "has no \"prompt\"", -EINVAL;
    if (!cJSON_IsString(pr) || !pr->valuestring[0])
        return *why = "\"prompt\" must be a non-empty string", -EINVAL;
    const cJSON *ot = cJSON_GetObjectItemCaseSensitive(o, "output_tokens");
    int32_t want = spec->output_len;
    if (ot && !(cJSON_IsNumber(ot) && ot->valuedouble >= 1 && ot->valuedouble <= 1000000 &&
                ot->valuedouble == floor(ot->valuedouble)))
        return *why = "\"output_tokens\" must be a whole number in [1, 1000000]", -EINVAL;
    if (want < 0) {
        if (!ot)
            return *why = "has no \"output_tokens\" (needed when --custom-output-len is -1)",
                   -EINVAL;
        want = (int32_t)ot->valuedouble;
    }
    if (out->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        lg_prompt *p = realloc(out->items, nc * sizeof *p);
        if (!p) return *why = "out of memory", -ENOMEM;
        out->items = p;
        *cap = nc;
    }
    lg_prompt *p = &out->items[out->n];
    *p = (lg_prompt){.text = strdup(pr->valuestring), .output_tokens = want};
    if (!p->text) return *why = "out of memory", -ENOMEM;
    p->input_tokens = lg_count_tokens(p->text, strlen(p->text)) + special;
    out->n++;
    return 0;
}

int lg_custom_parse(const char *what, const char *jsonl, size_t len, const lg_custom_spec *spec,
                    lg_dataset *out, char *err, size_t errlen)
{
    *out = (lg_dataset){0};
    if (spec->output_len == 0 || spec->output_len < -1) {
        rb_set_err(err, errlen, "%s: output_len must be >= 1 or -1 (each line's), got %d", what,
                   (int)spec->output_len);
        return -EINVAL;
    }
    rb_tok *tok = lg_dataset_tokenizer();
    int32_t special = tok ? rb_tok_n_special_added(tok) : 0;
    size_t cap = 0, line = 0;
    const char *p = jsonl, *end = jsonl + len;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3; /* a UTF-8 byte order mark */
    int rc = 0;
    while (p < end && !rc) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        line++;
        const char *q = p;
        while (q < e && rb_is_space((unsigned char)*q))
            q++;
        if (q < e) {
            const char *stop = NULL, *why = NULL;
            cJSON *o = cJSON_ParseWithLengthOpts(q, (size_t)(e - q), &stop, 0);
            if (!o) {
                why = "not valid JSON";
                rc = -EINVAL;
            } else {
                while (stop && stop < e && rb_is_space((unsigned char)*stop))
                    stop++;
                if (stop && stop < e) {
                    why = "unexpected text after the JSON object (one object per line)";
                    rc = -EINVAL;
                } else {
                    rc = take_line(o, spec, special, out, &cap, &why);
                }
                cJSON_Delete(o);
            }
            if (rc) rb_set_err(err, errlen, "%s: line %zu: %s", what, line, why);
        }
        p = nl ? nl + 1 : end;
    }
    if (!rc && out->n == 0) {
        rb_set_err(err, errlen, "%s: no prompt (%zu lines, all blank)", what, line);
        rc = -EINVAL;
    }
    if (!rc && spec->shuffle && lg_dataset_shuffle(out, spec->seed, 3)) {
        rb_set_err(err, errlen, "%s: out of memory", what);
        rc = -ENOMEM;
    }
    if (!rc && spec->max_n && out->n > spec->max_n) {
        for (size_t i = spec->max_n; i < out->n; i++)
            free(out->items[i].text);
        out->n = spec->max_n;
    }
    if (rc) lg_dataset_free(out);
    return rc;
}

int lg_custom_load(const char *path, const lg_custom_spec *spec, lg_dataset *out, char *err,
                   size_t errlen)
{
    *out = (lg_dataset){0};
    char *buf, what[1100];
    size_t len;
    int rc = lg_dataset_read_file("custom", path, &buf, &len, err, errlen);
    if (rc) return rc;
    snprintf(what, sizeof what, "custom %s", path);
    rc = lg_custom_parse(what, buf, len, spec, out, err, errlen);
    free(buf);
    return rc;
}
