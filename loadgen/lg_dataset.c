/* lg_dataset: the prompt pools (synthetic random, shared-prefix groups,
 * ShareGPT) (see lg_dataset.h; the trace CSV is lg_trace.c). Everything is
 * parsed from memory; only lg_dataset_load_* reads a file. */
#include "lg_dataset.h"
#include "rb_text.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_buf.h"
#include "rb_file.h"
#include "rb_tok.h"

/* Bounds that keep a pool's memory sane whatever the spec says. */
#define LG_MAX_PROMPT_TOKENS 1000000
#define LG_MAX_POOL LG_POOL_MAX

static rb_tok *g_tok; /* lg_dataset_set_tokenizer */

void lg_dataset_set_tokenizer(rb_tok *t)
{
    g_tok = t;
}

rb_tok *lg_dataset_tokenizer(void)
{
    return g_tok;
}

int32_t lg_count_tokens(const char *text, size_t len)
{
    int64_t n = g_tok ? rb_tok_count(g_tok, text, len) : rb_count_words(text, len);
    if (n < 0) n = 0;
    return n > INT32_MAX ? INT32_MAX : (int32_t)n;
}

void lg_dataset_free(lg_dataset *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->n; i++)
        free(d->items[i].text);
    free(d->items);
    d->items = NULL;
    d->n = 0;
}

/* ---- synthetic text -------------------------------------------------- */

static const char *const WORDS[] = {
    "the",      "of",        "and",     "to",     "in",     "is",        "you",       "that",
    "it",       "he",        "was",     "for",    "on",     "are",       "as",        "with",
    "his",      "they",      "at",      "be",     "this",   "have",      "from",      "or",
    "one",      "had",       "by",      "word",   "but",    "not",       "what",      "all",
    "were",     "we",        "when",    "your",   "can",    "said",      "there",     "use",
    "an",       "each",      "which",   "she",    "do",     "how",       "their",     "if",
    "will",     "up",        "other",   "about",  "out",    "many",      "then",      "them",
    "these",    "so",        "some",    "her",    "would",  "make",      "like",      "him",
    "into",     "time",      "has",     "look",   "two",    "more",      "write",     "go",
    "see",      "number",    "no",      "way",    "could",  "people",    "my",        "than",
    "first",    "water",     "been",    "call",   "who",    "oil",       "its",       "now",
    "find",     "long",      "down",    "day",    "did",    "get",       "come",      "made",
    "may",      "part",      "over",    "new",    "sound",  "take",      "only",      "little",
    "work",     "know",      "place",   "year",   "live",   "me",        "back",      "give",
    "most",     "very",      "after",   "thing",  "our",    "just",      "name",      "good",
    "sentence", "man",       "think",   "say",    "great",  "where",     "help",      "through",
    "much",     "before",    "line",    "right",  "too",    "mean",      "old",       "any",
    "same",     "tell",      "boy",     "follow", "came",   "want",      "show",      "also",
    "around",   "form",      "three",   "small",  "set",    "put",       "end",       "does",
    "another",  "well",      "large",   "must",   "big",    "even",      "such",      "because",
    "turn",     "here",      "why",     "ask",    "went",   "men",       "read",      "need",
    "land",     "different", "home",    "us",     "move",   "try",       "kind",      "hand",
    "picture",  "again",     "change",  "off",    "play",   "spell",     "air",       "away",
    "animal",   "house",     "point",   "page",   "letter", "mother",    "answer",    "found",
    "study",    "still",     "learn",   "should", "world",  "high",      "every",     "near",
    "add",      "food",      "between", "own",    "below",  "country",   "plant",     "last",
    "school",   "father",    "keep",    "tree",   "never",  "start",     "city",      "earth",
    "eye",      "light",     "thought", "head",   "under",  "story",     "saw",       "left",
    "few",      "while",     "along",   "might",  "close",  "something", "seem",      "next",
    "hard",     "open",      "example", "begin",  "life",   "always",    "those",     "both",
    "paper",    "together",  "got",     "group",  "often",  "run",       "important", "until",
    "children", "side",      "feet",    "car",    "mile",   "night",     "walk",      "white",
    "sea",      "began",     "grow",    "took",   "river",  "four",      "carry",     "state",
};
#define N_WORDS (sizeof WORDS / sizeof WORDS[0])

size_t lg_pool_bytes_per_prompt(int64_t tokens)
{
    static size_t avg_word_x100; /* mean word length x 100, computed once */
    if (!avg_word_x100) {
        size_t sum = 0;
        for (size_t i = 0; i < N_WORDS; i++)
            sum += strlen(WORDS[i]);
        avg_word_x100 = sum * 100 / N_WORDS;
    }
    if (tokens < 1) tokens = 1;
    if (tokens > LG_MAX_PROMPT_TOKENS) tokens = LG_MAX_PROMPT_TOKENS;
    /* Text plus one space a word, twice (the text and the body), the body's
     * JSON around it, and the pool's own bookkeeping. */
    size_t text = (size_t)tokens * (avg_word_x100 + 100) / 100;
    return 2 * text + 256 + sizeof(lg_prompt) + 2 * sizeof(void *);
}

size_t lg_pool_size_for(int64_t arrivals, size_t bytes_per_prompt, size_t budget_bytes)
{
    size_t cap = bytes_per_prompt ? budget_bytes / bytes_per_prompt : LG_POOL_MAX;
    if (cap > LG_POOL_MAX) cap = LG_POOL_MAX;
    if (cap < 1) cap = 1;
    if (arrivals >= 0 && (uint64_t)arrivals < cap) cap = arrivals > 0 ? (size_t)arrivals : 1;
    return cap;
}

/* Appends n random words, space-separated (and a space before them if the
 * buffer is not empty): exactly n tokens by lg_count_tokens. With vocab > 0
 * the words are token ids in [0, vocab), in decimal. */
static int put_text_tokens(rb_buf *b, gsl_rng *r, int32_t n);

static int put_words(rb_buf *b, gsl_rng *r, int32_t n, int32_t vocab)
{
    char num[16];
    size_t n_normal = 0;
    const int32_t *normal = g_tok ? rb_tok_normal_ids(g_tok, &n_normal) : NULL;
    if (g_tok && vocab <= 0) return put_text_tokens(b, r, n);
    for (int32_t i = 0; i < n; i++) {
        const char *w = num;
        if (vocab > 0 && normal)
            snprintf(num, sizeof num, "%d", (int)normal[gsl_rng_uniform_int(r, n_normal)]);
        else if (vocab > 0)
            snprintf(num, sizeof num, "%lu", gsl_rng_uniform_int(r, (unsigned long)vocab));
        else
            w = WORDS[gsl_rng_uniform_int(r, N_WORDS)];
        if ((b->len && rb_buf_add(b, " ", 1)) || rb_buf_puts(b, w)) return -ENOMEM;
    }
    return 0;
}

/* With a tokenizer: words appended until the buffer's new text is n tokens.
 * Each word's cost is its tokens after a space (most words are one piece of
 * the pre-tokenizer, so costs add up); words are drawn while they fit, then
 * one-token words fill the rest; the whole is then counted, and a word
 * taken off or a one-token word added until it is exact (bounded: when a
 * merge across words defeats it, the prompt is what it is, and the caller
 * counts it). */
static int32_t word_cost[N_WORDS];
static int32_t one_token[N_WORDS], n_one_token;
static rb_tok *costs_for;

static void word_costs(void)
{
    if (costs_for == g_tok) return;
    char s[64];
    int32_t base = lg_count_tokens("the", 3);
    n_one_token = 0;
    for (size_t i = 0; i < N_WORDS; i++) {
        int n = snprintf(s, sizeof s, "the %s", WORDS[i]);
        word_cost[i] = lg_count_tokens(s, (size_t)n) - base;
        if (word_cost[i] < 1) word_cost[i] = 1;
        if (word_cost[i] == 1) one_token[n_one_token++] = (int32_t)i;
    }
    costs_for = g_tok;
}

static int put_one(rb_buf *b, const char *w)
{
    return ((b->len && rb_buf_add(b, " ", 1)) || rb_buf_puts(b, w)) ? -ENOMEM : 0;
}

static int put_text_tokens(rb_buf *b, gsl_rng *r, int32_t n)
{
    word_costs();
    size_t start = b->len;
    int32_t base = start ? lg_count_tokens(b->data, b->len) : 0, acc = 0;
    while (acc < n) {
        size_t w = gsl_rng_uniform_int(r, N_WORDS);
        if (acc + word_cost[w] > n && n_one_token)
            w = (size_t)one_token[gsl_rng_uniform_int(r, (unsigned long)n_one_token)];
        if (put_one(b, WORDS[w])) return -ENOMEM;
        acc += word_cost[w];
    }
    for (int tries = 0; tries < 16; tries++) {
        int32_t got = lg_count_tokens(b->data ? b->data : "", b->len) - base;
        if (got == n) break;
        if (got > n) {
            size_t cut = b->len;
            while (cut > start && b->data[cut - 1] != ' ')
                cut--;
            if (cut <= start) break; /* one word left: nothing to take off */
            cut--;                   /* the space before the word */
            b->len = cut;
            b->data[cut] = 0;
        } else {
            const char *w =
                n_one_token ? WORDS[one_token[gsl_rng_uniform_int(r, (unsigned long)n_one_token)]]
                            : "the";
            if (put_one(b, w)) return -ENOMEM;
        }
    }
    return 0;
}

/* The text length that a prompt of n tokens is built to: the tokenizer's
 * special tokens are added by the server. */
static int32_t text_target(int32_t n, int32_t vocab)
{
    if (!g_tok || vocab > 0) return n;
    int32_t t = n - rb_tok_n_special_added(g_tok);
    return t < 1 ? 1 : t;
}

static int32_t clamp_len(double x)
{
    if (!(x >= 1)) return 1;
    if (x > LG_MAX_PROMPT_TOKENS) return LG_MAX_PROMPT_TOKENS;
    return (int32_t)llround(x);
}

static int32_t draw_len(gsl_rng *r, lg_len_dist dist, int32_t mean, double ratio)
{
    switch (dist) {
    case LG_LEN_UNIFORM: {
        int64_t lo = (int64_t)((double)mean * (1 - ratio)),
                hi = (int64_t)((double)mean * (1 + ratio));
        if (lo < 1) lo = 1;
        if (hi < lo) hi = lo;
        return clamp_len(
            (double)(lo + (int64_t)gsl_rng_uniform_int(r, (unsigned long)(hi - lo + 1))));
    }
    case LG_LEN_NORMAL:
        return clamp_len((double)mean + gsl_ran_gaussian(r, (double)mean * ratio));
    case LG_LEN_LOGNORMAL: {
        if (ratio == 0) return clamp_len(mean);
        /* Parameters that give the lognormal this mean and sd = mean * ratio. */
        double s2 = log1p(ratio * ratio);
        return clamp_len(gsl_ran_lognormal(r, log((double)mean) - s2 / 2, sqrt(s2)));
    }
    case LG_LEN_FIXED:
    default:
        return clamp_len(mean);
    }
}

static int32_t draw_ip(gsl_rng *r, const lg_len_ip *d)
{
    double x;
    switch (d->type) {
    case LG_LEN_FIXED:
        return clamp_len(floor(d->mean));
    case LG_LEN_UNIFORM:
        x = d->min + gsl_rng_uniform(r) * (double)(d->max - d->min);
        break;
    case LG_LEN_LOGNORMAL: {
        double m = d->mean - d->min;
        if (m <= 0) m = 1;
        double s2 = log1p((d->std_dev / m) * (d->std_dev / m));
        x = gsl_ran_lognormal(r, log(m) - s2 / 2, sqrt(s2)) + d->min;
        break;
    }
    case LG_LEN_NORMAL:
    default:
        x = d->mean + gsl_ran_gaussian(r, d->std_dev);
        break;
    }
    if (x < d->min) x = d->min;
    if (x > d->max) x = d->max;
    return clamp_len(nearbyint(x));
}

int lg_len_ip_parse(const char *s, lg_len_ip *out, char *why, size_t n)
{
    lg_len_ip d = {
        .on = 1, .type = LG_LEN_NORMAL, .mean = NAN, .min = 1, .max = LG_MAX_PROMPT_TOKENS};
    char buf[256];
    if (!s || !*s || strlen(s) >= sizeof buf) {
        snprintf(why, n, "expected mean:M[,std_dev:S][,min:A][,max:B][,type:T]");
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(kv, ':');
        if (!colon) {
            snprintf(why, n, "'%s' is not key:value", kv);
            return -1;
        }
        *colon = 0;
        const char *k = kv, *v = colon + 1;
        if (strcmp(k, "type") == 0) {
            if (strcmp(v, "normal") == 0)
                d.type = LG_LEN_NORMAL;
            else if (strcmp(v, "lognormal") == 0)
                d.type = LG_LEN_LOGNORMAL;
            else if (strcmp(v, "uniform") == 0)
                d.type = LG_LEN_UNIFORM;
            else if (strcmp(v, "fixed") == 0)
                d.type = LG_LEN_FIXED;
            else {
                snprintf(why, n, "type '%s' must be normal, lognormal, uniform or fixed", v);
                return -1;
            }
            continue;
        }
        char *end;
        double x = strtod(v, &end);
        if (end == v || *end || !isfinite(x)) {
            snprintf(why, n, "%s: '%s' is not a number", k, v);
            return -1;
        }
        if (strcmp(k, "mean") == 0)
            d.mean = x;
        else if (strcmp(k, "std_dev") == 0)
            d.std_dev = x;
        else if (strcmp(k, "min") == 0 || strcmp(k, "max") == 0) {
            if (x != floor(x) || x < 1 || x > LG_MAX_PROMPT_TOKENS) {
                snprintf(why, n, "%s: must be a whole number in [1, %d], got '%s'", k,
                         LG_MAX_PROMPT_TOKENS, v);
                return -1;
            }
            *(k[1] == 'i' ? &d.min : &d.max) = (int32_t)x;
        } else {
            snprintf(why, n, "unknown key '%s' (mean, std_dev, min, max, type)", k);
            return -1;
        }
    }
    if (!(d.mean >= 1 && d.mean <= LG_MAX_PROMPT_TOKENS)) {
        snprintf(why, n, "mean: required, in [1, %d]", LG_MAX_PROMPT_TOKENS);
        return -1;
    }
    if (!(d.std_dev >= 0)) {
        snprintf(why, n, "std_dev: must be >= 0");
        return -1;
    }
    if (d.min > d.max) {
        snprintf(why, n, "min %d is above max %d", (int)d.min, (int)d.max);
        return -1;
    }
    if (d.type == LG_LEN_NORMAL && (d.mean < d.min || d.mean > d.max)) {
        snprintf(why, n, "mean %g is outside [min, max] = [%d, %d]", d.mean, (int)d.min,
                 (int)d.max);
        return -1;
    }
    *out = d;
    return 0;
}

static int alloc_items(lg_dataset *out, size_t n, char *err, size_t errlen)
{
    out->n = 0;
    out->items = calloc(n, sizeof *out->items);
    if (!out->items) {
        rb_set_err(err, errlen, "dataset: out of memory for %zu prompts", n);
        return -ENOMEM;
    }
    return 0;
}

static int random_spec_ok(const lg_random_spec *spec, char *err, size_t errlen)
{
    if (spec->n < 1 || spec->n > LG_MAX_POOL) {
        rb_set_err(err, errlen, "random dataset: n: must be in [1, %d], got %zu", LG_MAX_POOL,
                   spec->n);
        return -EINVAL;
    }
    if (spec->input_len < 1 || spec->input_len > LG_MAX_PROMPT_TOKENS) {
        rb_set_err(err, errlen, "random dataset: input_len: must be in [1, %d], got %d",
                   LG_MAX_PROMPT_TOKENS, (int)spec->input_len);
        return -EINVAL;
    }
    if (spec->output_len < 1 || spec->output_len > LG_MAX_PROMPT_TOKENS) {
        rb_set_err(err, errlen, "random dataset: output_len: must be in [1, %d], got %d",
                   LG_MAX_PROMPT_TOKENS, (int)spec->output_len);
        return -EINVAL;
    }
    double rr_max = spec->dist == LG_LEN_UNIFORM ? 1 : 100;
    if (!(spec->range_ratio >= 0 && spec->range_ratio <= rr_max)) {
        rb_set_err(err, errlen, "random dataset: range_ratio: must be in [0, %g], got %g", rr_max,
                   spec->range_ratio);
        return -EINVAL;
    }
    if ((unsigned)spec->dist > LG_LEN_LOGNORMAL) {
        rb_set_err(err, errlen, "random dataset: dist: unknown distribution %d", (int)spec->dist);
        return -EINVAL;
    }
    if (spec->vocab < 0) {
        rb_set_err(err, errlen, "random dataset: vocab: must be >= 1 (or 0: words), got %d",
                   (int)spec->vocab);
        return -EINVAL;
    }
    if (spec->prefix_len < 0 || spec->prefix_len > LG_MAX_PROMPT_TOKENS) {
        rb_set_err(err, errlen, "random dataset: prefix_len: must be in [0, %d], got %d",
                   LG_MAX_PROMPT_TOKENS, (int)spec->prefix_len);
        return -EINVAL;
    }
    return 0;
}

/* The prefix every prompt starts with (empty for prefix_len 0), from its
 * own stream: the same for the pool and for per-request prompts. */
static int make_prefix(const lg_random_spec *spec, rb_buf *out)
{
    out->len = 0;
    if (spec->prefix_len <= 0) return 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    if (!r) return -ENOMEM;
    gsl_rng_set(r, lg_seed32(spec->seed, UINT64_MAX));
    int rc = put_words(out, r, spec->prefix_len, spec->vocab);
    gsl_rng_free(r);
    return rc;
}

/* One prompt: the prefix, then its own part of `len` tokens from r. */
static int put_prompt(rb_buf *b, const rb_buf *prefix, gsl_rng *r, int32_t len, int32_t vocab)
{
    b->len = 0;
    if (prefix->len && rb_buf_add(b, prefix->data, prefix->len)) return -ENOMEM;
    return put_words(b, r, text_target(len, vocab), vocab);
}

struct lg_random_gen {
    lg_random_spec spec;
    gsl_rng *r;
    rb_buf text, prefix;
};

lg_random_gen *lg_random_gen_new(const lg_random_spec *spec, char *err, size_t errlen)
{
    lg_random_spec one = *spec;
    one.n = 1;
    if (random_spec_ok(&one, err, errlen)) return NULL;
    lg_random_gen *g = calloc(1, sizeof *g);
    /* taus2: seeding is a few words, cheap enough to do per request */
    if (g) g->r = gsl_rng_alloc(gsl_rng_taus2);
    if (!g || !g->r || make_prefix(&one, &g->prefix)) {
        if (g) gsl_rng_free(g->r);
        if (g) rb_buf_free(&g->prefix);
        free(g);
        rb_set_err(err, errlen, "random dataset: out of memory");
        return NULL;
    }
    g->spec = one;
    return g;
}

int lg_random_gen_at(lg_random_gen *g, uint64_t index, lg_prompt *out)
{
    const lg_random_spec *spec = &g->spec;
    /* stream 0 is the pool's; request i draws from stream i + 1 */
    gsl_rng_set(g->r, lg_seed32(spec->seed, index + 1));
    *out = (lg_prompt){0};
    out->input_tokens = spec->in_ip.on
                            ? draw_ip(g->r, &spec->in_ip)
                            : draw_len(g->r, spec->dist, spec->input_len, spec->range_ratio);
    out->output_tokens = spec->out_ip.on
                             ? draw_ip(g->r, &spec->out_ip)
                             : draw_len(g->r, spec->dist, spec->output_len, spec->range_ratio);
    if (put_prompt(&g->text, &g->prefix, g->r, out->input_tokens, spec->vocab) ||
        rb_buf_add(&g->text, "", 1))
        return -ENOMEM;
    out->input_tokens += spec->prefix_len;
    out->text = malloc(g->text.len);
    if (!out->text) return -ENOMEM;
    memcpy(out->text, g->text.data, g->text.len);
    return 0;
}

void lg_random_gen_free(lg_random_gen *g)
{
    if (!g) return;
    gsl_rng_free(g->r);
    rb_buf_free(&g->text);
    rb_buf_free(&g->prefix);
    free(g);
}

int lg_dataset_random(const lg_random_spec *spec, lg_dataset *out, char *err, size_t errlen)
{
    *out = (lg_dataset){0};
    int rc = random_spec_ok(spec, err, errlen);
    if (rc) return rc;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    rb_buf prefix = {0};
    if (!r || make_prefix(spec, &prefix) || alloc_items(out, spec->n, err, errlen)) {
        gsl_rng_free(r);
        rb_buf_free(&prefix);
        rb_set_err(err, errlen, "random dataset: out of memory");
        return -ENOMEM;
    }
    gsl_rng_set(r, lg_seed32(spec->seed, 0));
    for (size_t i = 0; i < spec->n; i++) {
        lg_prompt *p = &out->items[i];
        p->input_tokens = spec->in_ip.on
                              ? draw_ip(r, &spec->in_ip)
                              : draw_len(r, spec->dist, spec->input_len, spec->range_ratio);
        p->output_tokens = spec->out_ip.on
                               ? draw_ip(r, &spec->out_ip)
                               : draw_len(r, spec->dist, spec->output_len, spec->range_ratio);
        rb_buf b = {0};
        if (put_prompt(&b, &prefix, r, p->input_tokens, spec->vocab) ||
            rb_buf_take(&b, &p->text, NULL)) {
            rb_buf_free(&b);
            rb_buf_free(&prefix);
            gsl_rng_free(r);
            lg_dataset_free(out);
            rb_set_err(err, errlen, "random dataset: out of memory");
            return -ENOMEM;
        }
        p->input_tokens += spec->prefix_len;
        out->n = i + 1;
    }
    rb_buf_free(&prefix);
    gsl_rng_free(r);
    return 0;
}

int lg_dataset_shared_prefix(const lg_prefix_spec *spec, lg_dataset *out, char *err, size_t errlen)
{
    *out = (lg_dataset){0};
    /* A system prompt of 0 words is allowed: no shared prefix at all. */
    struct {
        const char *name;
        int32_t v, min;
    } f[] = {{"groups", spec->groups, 1},
             {"prompts_per_group", spec->prompts_per_group, 1},
             {"system_prompt_len", spec->system_prompt_len, 0},
             {"question_len", spec->question_len, 1},
             {"output_len", spec->output_len, 1}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        if (f[i].v < f[i].min || f[i].v > LG_MAX_PROMPT_TOKENS) {
            rb_set_err(err, errlen, "shared-prefix dataset: %s: must be in [%d, %d], got %d",
                       f[i].name, (int)f[i].min, LG_MAX_PROMPT_TOKENS, (int)f[i].v);
            return -EINVAL;
        }
    }
    if ((int64_t)spec->groups * spec->prompts_per_group > LG_MAX_POOL ||
        (int64_t)spec->system_prompt_len + spec->question_len > LG_MAX_PROMPT_TOKENS) {
        rb_set_err(err, errlen,
                   "shared-prefix dataset: groups x prompts_per_group must be <= %d and "
                   "system_prompt_len + question_len <= %d",
                   LG_MAX_POOL, LG_MAX_PROMPT_TOKENS);
        return -EINVAL;
    }
    if (spec->vocab < 0) {
        rb_set_err(err, errlen, "shared-prefix dataset: vocab: must be >= 1 (or 0: words), got %d",
                   (int)spec->vocab);
        return -EINVAL;
    }
    size_t n = (size_t)spec->groups * (size_t)spec->prompts_per_group;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r || alloc_items(out, n, err, errlen)) {
        gsl_rng_free(r);
        rb_set_err(err, errlen, "shared-prefix dataset: out of memory");
        return -ENOMEM;
    }
    gsl_rng_set(r, lg_seed32(spec->seed, 1));
    rb_buf sys = {0};
    for (int32_t g = 0; g < spec->groups; g++) {
        rb_buf_reset(&sys);
        if (put_words(&sys, r,
                      spec->system_prompt_len ? text_target(spec->system_prompt_len, spec->vocab)
                                              : 0,
                      spec->vocab))
            goto nomem;
        for (int32_t q = 0; q < spec->prompts_per_group; q++) {
            rb_buf b = {0};
            char *text;
            if ((sys.len && rb_buf_add(&b, sys.data, sys.len)) ||
                put_words(&b, r,
                          spec->system_prompt_len ? spec->question_len
                                                  : text_target(spec->question_len, spec->vocab),
                          spec->vocab) ||
                rb_buf_take(&b, &text, NULL)) {
                rb_buf_free(&b);
                goto nomem;
            }
            lg_prompt *p = &out->items[out->n++];
            p->text = text;
            p->input_tokens = spec->system_prompt_len + spec->question_len;
            p->output_tokens = spec->output_len;
            p->prefix_len = (uint32_t)sys.len;
        }
    }
    rb_buf_free(&sys);
    gsl_rng_free(r);
    return 0;
nomem:
    rb_buf_free(&sys);
    gsl_rng_free(r);
    lg_dataset_free(out);
    rb_set_err(err, errlen, "shared-prefix dataset: out of memory");
    return -ENOMEM;
}

/* ---- ShareGPT -------------------------------------------------------- */

/* The 1-based line of byte `at` in s. */
static size_t line_of(const char *s, size_t len, size_t at)
{
    size_t line = 1;
    for (size_t i = 0; i < at && i < len; i++)
        line += s[i] == '\n';
    return line;
}

static int turn_is(const cJSON *turn, const char *a, const char *b)
{
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(turn, "from");
    if (!cJSON_IsString(from)) return 0;
    return strcmp(from->valuestring, a) == 0 || strcmp(from->valuestring, b) == 0;
}

static const char *turn_text(const cJSON *turn)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(turn, "value");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The first human turn with text, and the gpt turn right after it. */
static int find_pair(const cJSON *entry, const char **human, const char **gpt)
{
    const cJSON *conv =
        cJSON_IsObject(entry) ? cJSON_GetObjectItemCaseSensitive(entry, "conversations") : NULL;
    if (!cJSON_IsArray(conv)) return 0;
    for (const cJSON *t = conv->child; t; t = t->next) {
        if (!cJSON_IsObject(t) || !turn_is(t, "human", "user")) continue;
        const char *h = turn_text(t);
        const cJSON *next = t->next;
        if (!h || !next || !cJSON_IsObject(next) || !turn_is(next, "gpt", "assistant")) return 0;
        const char *g = turn_text(next);
        if (!g || lg_count_tokens(h, strlen(h)) < 1) return 0;
        *human = h;
        *gpt = g;
        return 1;
    }
    return 0;
}

/* Appends the entry's prompt if it has a human/gpt pair. */
static int take_entry(const cJSON *e, lg_dataset *out, size_t *cap)
{
    const char *h, *g;
    if (!find_pair(e, &h, &g)) return 0;
    if (out->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        lg_prompt *p = realloc(out->items, nc * sizeof *p);
        if (!p) return -ENOMEM;
        out->items = p;
        *cap = nc;
    }
    lg_prompt *p = &out->items[out->n];
    p->text = strdup(h);
    if (!p->text) return -ENOMEM;
    p->input_tokens = lg_count_tokens(h, strlen(h));
    int32_t o = lg_count_tokens(g, strlen(g));
    p->output_tokens = o < 1 ? 1 : o;
    p->prefix_len = 0;
    out->n++;
    return 0;
}

/* The array is read one entry at a time (a cJSON tree per entry, not per
 * file) and reading stops after max_n prompts: the public ShareGPT file is
 * 670 MB, of which a run needs the first few thousand entries. */
static int sharegpt_parse(const char *what, const char *json, size_t len, size_t max_n,
                          lg_dataset *out, char *err, size_t errlen)
{
    *out = (lg_dataset){0};
    const char *p = json, *end = json + len;
    size_t cap = 0, entries = 0;
    int rc = 0;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) p += 3; /* a UTF-8 byte order mark */
    while (p < end && rb_is_space((unsigned char)*p))
        p++;
    if (p == end) {
        rb_set_err(err, errlen, "%s: not valid JSON (empty)", what);
        return -EINVAL;
    }
    if (*p != '[') {
        rb_set_err(err, errlen, "%s: line %zu: the top level must be a JSON array of conversations",
                   what, line_of(json, len, (size_t)(p - json)));
        return -EINVAL;
    }
    p++;
    const char *bad = NULL, *why = "not valid JSON";
    for (int first = 1;; first = 0) {
        while (p < end && rb_is_space((unsigned char)*p))
            p++;
        if (first && p < end && *p == ']') {
            p++;
            break;
        }
        /* cJSON skips a byte order mark at the start of every parse: only
         * the file's first bytes may hold one */
        if (end - p >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
            bad = p;
            break;
        }
        const char *e_end = NULL;
        cJSON *e = cJSON_ParseWithLengthOpts(p, (size_t)(end - p), &e_end, 0);
        if (!e) {
            bad = e_end && e_end >= p && e_end <= end ? e_end : p;
            break;
        }
        entries++;
        rc = take_entry(e, out, &cap);
        cJSON_Delete(e);
        if (rc) {
            rb_set_err(err, errlen, "%s: out of memory", what);
            break;
        }
        p = e_end;
        if (max_n && out->n >= max_n) goto done; /* enough: the rest is not read */
        while (p < end && rb_is_space((unsigned char)*p))
            p++;
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == ']') {
            p++;
            break;
        }
        bad = p;
        why = "expected ',' or ']' after an entry";
        break;
    }
    if (!rc && !bad) {
        while (p < end && rb_is_space((unsigned char)*p))
            p++;
        if (p < end) {
            bad = p;
            why = "unexpected text after the JSON array";
        }
    }
    if (!rc && bad) {
        size_t at = (size_t)(bad - json);
        rb_set_err(err, errlen, "%s: line %zu: %s (near byte %zu)", what, line_of(json, len, at),
                   why, at);
        rc = -EINVAL;
    }
done:
    if (!rc && out->n == 0) {
        rb_set_err(err, errlen,
                   "%s: no entry has a human turn followed by a gpt turn (%zu entries)", what,
                   entries);
        rc = -EINVAL;
    }
    if (rc) lg_dataset_free(out);
    return rc;
}

int lg_dataset_shuffle(lg_dataset *d, uint64_t seed, uint64_t stream)
{
    if (d->n < 2) return 0;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) return -ENOMEM;
    gsl_rng_set(r, lg_seed32(seed, stream));
    for (size_t i = d->n - 1; i > 0; i--) { /* Fisher-Yates */
        size_t j = gsl_rng_uniform_int(r, i + 1);
        lg_prompt t = d->items[i];
        d->items[i] = d->items[j];
        d->items[j] = t;
    }
    gsl_rng_free(r);
    return 0;
}

int lg_dataset_sharegpt_sample(lg_dataset *d, const lg_sharegpt_spec *spec, char *err,
                               size_t errlen)
{
    int32_t special = g_tok ? rb_tok_n_special_added(g_tok) : 0;
    if (spec->shuffle && lg_dataset_shuffle(d, spec->seed, 2)) {
        rb_set_err(err, errlen, "sharegpt: out of memory");
        return -ENOMEM;
    }
    size_t kept = 0, dropped = 0;
    for (size_t i = 0; i < d->n; i++) {
        lg_prompt *p = &d->items[i];
        int64_t in = (int64_t)p->input_tokens + special;
        int64_t out = spec->output_len > 0 ? spec->output_len : (int64_t)p->output_tokens + special;
        int ok = !spec->filter ||
                 (in >= 4 && (spec->output_len > 0 || out >= 4) && in <= 1024 && in + out <= 2048);
        if (!ok || (spec->max_n && kept == spec->max_n)) {
            dropped += !ok;
            free(p->text);
            continue;
        }
        p->input_tokens = (int32_t)in;
        p->output_tokens = (int32_t)(out < 1 ? 1 : out);
        d->items[kept++] = *p;
    }
    d->n = kept;
    if (kept == 0) {
        rb_set_err(err, errlen,
                   "sharegpt: no entry is left after vLLM's length filters (%zu dropped: a "
                   "prompt of 4 to 1,024 tokens, an output of 4 or more, 2,048 in all; "
                   "--sharegpt-no-filter keeps them)",
                   dropped);
        return -EINVAL;
    }
    return 0;
}

int lg_dataset_sharegpt_parse(const char *json, size_t len, size_t max_n, lg_dataset *out,
                              char *err, size_t errlen)
{
    return sharegpt_parse("sharegpt", json, len, max_n, out, err, errlen);
}

int lg_dataset_read_file(const char *kind, const char *path, char **buf, size_t *len, char *err,
                         size_t errlen)
{
    int rc = rb_read_file(path, LG_MAX_FILE_BYTES, buf, len);
    if (rc) rb_set_err(err, errlen, "%s %s: cannot read: %s", kind, path, rb_file_strerror(rc));
    return rc;
}

int lg_dataset_load_sharegpt(const char *path, size_t max_n, lg_dataset *out, char *err,
                             size_t errlen)
{
    *out = (lg_dataset){0};
    char *buf, what[512];
    size_t len;
    int rc = lg_dataset_read_file("sharegpt", path, &buf, &len, err, errlen);
    if (rc) return rc;
    snprintf(what, sizeof what, "sharegpt %s", path);
    rc = sharegpt_parse(what, buf, len, max_n, out, err, errlen);
    free(buf);
    return rc;
}
