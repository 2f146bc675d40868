/* fuzz_dataset: the ShareGPT and trace parsers on any bytes. What the
 * ShareGPT parser accepts is checked against an independent reading of the
 * same bytes (cJSON on the whole document, the header's selection rule and
 * word count re-implemented here), and a parse capped at max_n must be the
 * uncapped one's prefix. What the trace parser accepts must hold its
 * promises (at most one row per line, sorted relative times), and a parsed
 * trace is replayed through the schedule. What the custom JSONL parser
 * accepts has one prompt per non-blank line, in order, each counted by the
 * word rule here and asking for its own output_tokens or the fixed length;
 * what it refuses names a line. */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_custom.h"
#include "lg_dataset.h"
#include "lg_sched.h"

/* Words as maximal runs of bytes that C's isspace (the "C" locale: space,
 * \t \n \v \f \r) does not call space: a second reading of simserver's rule,
 * not the parser's own function. */
static int32_t words(const char *s)
{
    int32_t n = 0;
    for (size_t i = 0; s[i]; i++)
        n += !isspace((unsigned char)s[i]) && (i == 0 || isspace((unsigned char)s[i - 1]));
    return n;
}

static int from_is(const cJSON *turn, const char *a, const char *b)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(turn, "from");
    return cJSON_IsString(f) && (!strcmp(f->valuestring, a) || !strcmp(f->valuestring, b));
}

/* lg_dataset.h's rule for one entry: the first human (or user) turn, which
 * must have text with a word and be followed by a gpt (or assistant) turn
 * with text. Returns 1 and the two texts, or 0 when the entry is skipped. */
static int expected_pair(const cJSON *e, const char **human, const char **gpt)
{
    const cJSON *conv =
        cJSON_IsObject(e) ? cJSON_GetObjectItemCaseSensitive(e, "conversations") : NULL;
    if (!cJSON_IsArray(conv)) return 0;
    const cJSON *t = conv->child;
    while (t && !(cJSON_IsObject(t) && from_is(t, "human", "user")))
        t = t->next;
    if (!t || !t->next || !cJSON_IsObject(t->next) || !from_is(t->next, "gpt", "assistant"))
        return 0;
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(t, "value");
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(t->next, "value");
    if (!cJSON_IsString(h) || !cJSON_IsString(g) || words(h->valuestring) < 1) return 0;
    *human = h->valuestring;
    *gpt = g->valuestring;
    return 1;
}

/* The accepted dataset d against the whole document read by cJSON. */
static void check_against_cjson(const char *s, size_t len, const lg_dataset *d)
{
    const char *p = s;
    if (len >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
        p += 3;
        len -= 3;
    }
    size_t opens = 0;
    for (size_t i = 0; i < len; i++)
        opens += p[i] == '[' || p[i] == '{';
    cJSON *root = cJSON_ParseWithLength(p, len);
    if (!root) {
        /* the parser reads one entry at a time, one level below the whole
         * document: only cJSON's nesting limit may part the two */
        if (opens < CJSON_NESTING_LIMIT) abort();
        return;
    }
    if (!cJSON_IsArray(root)) abort();
    size_t k = 0;
    for (const cJSON *e = root->child; e; e = e->next) {
        const char *h, *g;
        if (!expected_pair(e, &h, &g)) continue;
        if (k >= d->n) abort(); /* an entry the parser skipped */
        const lg_prompt *it = &d->items[k++];
        int32_t out = words(g);
        if (strcmp(it->text, h) != 0 || it->input_tokens != words(h) ||
            it->output_tokens != (out < 1 ? 1 : out))
            abort();
    }
    if (k != d->n) abort(); /* a prompt from nowhere */
    cJSON_Delete(root);
}

static void check_sharegpt(const char *s, size_t len)
{
    lg_dataset all, some;
    char err[256];
    if (lg_dataset_sharegpt_parse(s, len, 0, &all, err, sizeof err) != 0) {
        if (all.n || all.items || strncmp(err, "sharegpt: ", 10) != 0) abort();
        return;
    }
    if (all.n == 0) abort();
    check_against_cjson(s, len, &all);
    /* capped at max_n: the first max_n prompts, the rest not even read */
    size_t max_n = 1 + len % 4;
    if (lg_dataset_sharegpt_parse(s, len, max_n, &some, err, sizeof err) != 0) abort();
    if (some.n != (all.n < max_n ? all.n : max_n)) abort();
    for (size_t i = 0; i < some.n; i++)
        if (strcmp(some.items[i].text, all.items[i].text) != 0 ||
            some.items[i].input_tokens != all.items[i].input_tokens ||
            some.items[i].output_tokens != all.items[i].output_tokens)
            abort();
    lg_dataset_free(&some);
    lg_dataset_free(&all);
}

static void check_trace(const char *s, size_t len)
{
    lg_trace_row *rows;
    size_t n;
    char err[256];
    if (lg_trace_parse(s, len, &rows, &n, err, sizeof err) != 0) {
        if (rows || n) abort();
        return;
    }
    size_t lines = 1; /* a header and one row per line at most */
    for (size_t i = 0; i < len; i++)
        lines += s[i] == '\n' || s[i] == '\r';
    if (n == 0 || n >= lines || rows[0].t_ns != 0) abort();
    for (size_t i = 0; i < n; i++)
        if (rows[i].input_tokens < 1 || rows[i].output_tokens < 1 ||
            (i && rows[i].t_ns < rows[i - 1].t_ns))
            abort();
    lg_sched_spec sp = {.trace = rows, .n_trace = n, .trace_speedup = 1 + (double)(len % 5)};
    lg_sched *sc = lg_sched_new(&sp, err, sizeof err);
    if (!sc) abort(); /* a parsed trace is always a valid schedule */
    lg_arrival a;
    int64_t prev = 0;
    size_t k = 0;
    while (lg_sched_next(sc, &a)) {
        if (a.index != (int64_t)k || a.t_ns < prev || a.input_tokens != rows[k].input_tokens)
            abort();
        prev = a.t_ns;
        k++;
    }
    if (k != n) abort();
    lg_sched_free(sc);
    free(rows);
}

static void check_custom(const char *s, size_t len)
{
    char err[256];
    for (int32_t olen = -1; olen <= 7; olen += 8) {
        lg_custom_spec sp = {.seed = 1, .output_len = olen};
        lg_dataset d;
        if (lg_custom_parse("custom", s, len, &sp, &d, err, sizeof err) != 0) {
            if (d.n || d.items || !memchr(err, '\0', sizeof err) ||
                (strncmp(err, "custom: line ", 13) != 0 &&
                 strncmp(err, "custom: no prompt", 17) != 0 &&
                 strncmp(err, "custom: out of memory", 21) != 0))
                abort();
            continue;
        }
        size_t lines = 0, at = len >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
        for (size_t i = at; i < len;) {
            const char *nl = memchr(s + i, '\n', len - i);
            size_t e = nl ? (size_t)(nl - s) : len;
            int blank = 1;
            for (size_t j = i; j < e; j++)
                blank &= isspace((unsigned char)s[j]) != 0;
            lines += !blank;
            i = e + 1;
        }
        if (d.n == 0 || d.n != lines) abort(); /* one prompt per non-blank line */
        for (size_t i = 0; i < d.n; i++) {
            const lg_prompt *p = &d.items[i];
            if (!p->text[0] || p->input_tokens != words(p->text) || p->output_tokens < 1 ||
                (olen > 0 && p->output_tokens != olen))
                abort();
        }
        /* capped: the first max_n of the same (unshuffled) reading */
        lg_custom_spec cap = sp;
        cap.max_n = 1 + len % 3;
        lg_dataset some;
        if (lg_custom_parse("custom", s, len, &cap, &some, err, sizeof err) != 0) abort();
        if (some.n != (d.n < cap.max_n ? d.n : cap.max_n)) abort();
        for (size_t i = 0; i < some.n; i++)
            if (strcmp(some.items[i].text, d.items[i].text) != 0) abort();
        lg_dataset_free(&some);
        lg_dataset_free(&d);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    check_custom((const char *)in, size);
    check_sharegpt((const char *)in, size);
    check_trace((const char *)in, size);
    return 0;
}
