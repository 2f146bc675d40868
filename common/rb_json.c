/* rb_json: see rb_json.h. */
#include "rb_json.h"

#include <math.h>
#include <stdio.h>

double rb_json_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

int rb_json_get_num(const cJSON *o, const char *key, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v)) return -1;
    *out = v->valuedouble;
    return 0;
}

void rb_json_str(const cJSON *o, const char *key, char *dst, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    snprintf(dst, n, "%s", cJSON_IsString(v) ? v->valuestring : "");
}

void rb_json_pair(const cJSON *o, const char *key, double v[2])
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    for (int i = 0; i < 2; i++) {
        const cJSON *x = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, i) : NULL;
        v[i] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
    }
}

void rb_json_put_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

void rb_json_put_num_inf(cJSON *o, const char *key, double v)
{
    if (isinf(v))
        cJSON_AddStringToObject(o, key, v > 0 ? "inf" : "-inf");
    else
        rb_json_put_num(o, key, v);
}

void rb_json_put_pair(cJSON *o, const char *key, const double v[2])
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; i < 2; i++)
        cJSON_AddItemToArray(a, isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
}

void rb_json_put_str(cJSON *o, const char *key, const char *s)
{
    if (s && s[0])
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

void rb_json_copy(cJSON *dst, const cJSON *src, const char *key)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(src, key);
    if (x) cJSON_AddItemToObject(dst, key, cJSON_Duplicate(x, 1));
}
