/* lg_lora: the model list and its split (lg_lora.h). */
#include "lg_lora.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_units.h"

#define WHY(...) (snprintf(why, n, __VA_ARGS__), -1)

int lg_lora_check(const lg_opts *o, char *why, size_t n)
{
    if (o->n_lora < 1) return WHY("an empty list");
    double sum = 0;
    for (int i = 0; i < o->n_lora; i++) {
        if (!o->lora_names[i][0]) return WHY("an empty name (item %d)", i + 1);
        for (int j = 0; j < i; j++)
            if (!strcmp(o->lora_names[i], o->lora_names[j]))
                return WHY("'%s' given twice", o->lora_names[i]);
        if (!isfinite(o->lora_split[i]) || o->lora_split[i] < 0)
            return WHY("a negative share (%s: %g)", o->lora_names[i], o->lora_split[i]);
        sum += o->lora_split[i];
    }
    if (fabs(sum - 1.0) > 1e-6) return WHY("the shares sum to %.9g, not 1", sum);
    return 0;
}

int lg_lora_parse(lg_opts *o, const char *val, char *why, size_t n)
{
    char buf[LG_MAX_LORA * (LG_LORA_NAME + 32)];
    if (!val || !*val) return WHY("expected names like a,b,c or a=0.7,b=0.3");
    if (strlen(val) >= sizeof buf) return WHY("too long");
    strcpy(buf, val);
    /* vLLM's form, names as separate arguments (the flag takes every one
     * that follows): a list of bare names goes on growing; anything else
     * replaces the list. */
    int k = o->lora_even && !strchr(val, '=') ? o->n_lora : 0, shared = 0, bare = 0;
    for (char *s = buf, *next; s; s = next) {
        next = strchr(s, ',');
        if (next) *next++ = '\0';
        if (k == LG_MAX_LORA) return WHY("too many names (at most %d)", LG_MAX_LORA);
        char *eq = strchr(s, '=');
        if (eq) {
            *eq = '\0';
            if (rb_parse_double(eq + 1, -INFINITY, INFINITY, &o->lora_split[k]))
                return WHY("'%s': a share must be a number", eq + 1);
            shared++;
        } else {
            bare++;
        }
        if (!*s) return WHY("an empty name (item %d)", k + 1);
        if (strlen(s) >= LG_LORA_NAME) return WHY("a name past %d bytes", LG_LORA_NAME - 1);
        strcpy(o->lora_names[k++], s);
    }
    if (shared && bare) return WHY("give every name a share, or none (an even split)");
    o->n_lora = k;
    o->lora_even = bare > 0;
    if (bare)
        for (int i = 0; i < k; i++)
            o->lora_split[i] = 1.0 / k;
    return lg_lora_check(o, why, n);
}

/* splitmix64's finalizer: a 64-bit mix, bijective. */
static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

int lg_lora_pick(const lg_opts *o, uint64_t seed, int64_t index)
{
    uint64_t h = mix(mix(seed ^ 0x4c6f52414c6f5241ULL) ^ (uint64_t)index);
    double u = (double)(h >> 11) * 0x1p-53, cum = 0;
    int last = 0;
    for (int i = 0; i < o->n_lora; i++) {
        if (o->lora_split[i] <= 0) continue;
        cum += o->lora_split[i];
        last = i;
        if (u < cum) return i;
    }
    return last; /* a sum a hair under 1: the last name with a share */
}

const char *lg_lora_model(const lg_opts *o, int64_t index)
{
    return o->n_lora ? o->lora_names[lg_lora_pick(o, o->seed, index)] : NULL;
}
