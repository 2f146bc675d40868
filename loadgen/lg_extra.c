/* lg_extra: the request body's additions (see lg_extra.h): --extra-body and
 * vLLM's sampling flags, rendered once before the run into the members every
 * body carries (lg_body.c appends them), so they cost nothing per request.
 * Pure. */
#include "lg_extra.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lg_cli.h"

/* The keys the client writes itself, and the flag that sets each. */
static const struct {
    const char *key, *flag;
} OWNED[] = {{"model", "--model or --served-model-name"},
             {"prompt", "the dataset"},
             {"messages", "the dataset"},
             {"stream", "--stream or --no-stream"},
             {"stream_options", "--stream (usage is always asked for)"},
             {"max_tokens", "the dataset's output lengths (--random-output-len)"},
             {"ignore_eos", "--ignore-eos or --no-ignore-eos"}};

static int fail(char *err, size_t n, const char *what, const char *val)
{
    snprintf(err, n, "--extra-body: %s, got '%.200s'", what, val);
    return -EINVAL;
}

int lg_extra_body_render(lg_opts *o, char *err, size_t errlen)
{
    o->extra_members[0] = '\0';
    cJSON *root = NULL;
    if (o->extra_body) {
        root = cJSON_Parse(o->extra_body);
        if (!root) return fail(err, errlen, "not valid JSON", o->extra_body);
        if (!cJSON_IsObject(root)) {
            cJSON_Delete(root);
            return fail(err, errlen, "must be a JSON object", o->extra_body);
        }
        for (size_t i = 0; i < sizeof OWNED / sizeof OWNED[0]; i++)
            if (cJSON_GetObjectItemCaseSensitive(root, OWNED[i].key)) {
                char what[200];
                snprintf(what, sizeof what, "must not set \"%s\" (loadgen writes it: %s)",
                         OWNED[i].key, OWNED[i].flag);
                cJSON_Delete(root);
                return fail(err, errlen, what, o->extra_body);
            }
    } else {
        root = cJSON_CreateObject();
        if (!root) return -ENOMEM;
    }
    struct {
        const char *key, *flag;
        int given;
        double v;
    } s[] = {{"temperature", "--temperature", o->temperature_given, o->temperature},
             {"top_p", "--top-p", o->top_p_given, o->top_p},
             {"top_k", "--top-k", o->top_k_given, (double)o->top_k},
             {"min_p", "--min-p", o->min_p_given, o->min_p}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
        if (!s[i].given) continue;
        if (cJSON_GetObjectItemCaseSensitive(root, s[i].key)) {
            char what[200];
            snprintf(what, sizeof what, "sets \"%s\", as %s does: give one", s[i].key, s[i].flag);
            cJSON_Delete(root);
            return fail(err, errlen, what, o->extra_body);
        }
        cJSON_AddNumberToObject(root, s[i].key, s[i].v);
    }
    size_t used = 0;
    for (cJSON *m = root->child; m; m = m->next) {
        char *v = cJSON_PrintUnformatted(m);
        cJSON *ks = cJSON_CreateString(m->string);
        char *k = ks ? cJSON_PrintUnformatted(ks) : NULL;
        cJSON_Delete(ks);
        int n = v && k ? snprintf(o->extra_members + used, sizeof o->extra_members - used,
                                  "%s%s:%s", used ? "," : "", k, v)
                       : -1;
        cJSON_free(v);
        cJSON_free(k);
        if (n < 0 || (size_t)n >= sizeof o->extra_members - used) {
            cJSON_Delete(root);
            o->extra_members[0] = '\0';
            return fail(err, errlen, "longer than 16 KiB rendered",
                        o->extra_body ? o->extra_body : "");
        }
        used += (size_t)n;
    }
    cJSON_Delete(root);
    return 0;
}
