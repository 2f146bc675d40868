/* rb_tok: see rb_tok.h. The vocabulary is an open-addressed hash of the
 * token strings (kept in one pool); merges are a hash from the pair of ids
 * to (rank, merged id); a piece is merged as the Rust library's BPE does,
 * lowest rank first (ties: leftmost), with a heap of candidate pairs. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "rb_tok.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rb_file.h"
#include "rb_text.h"

/* ---- hashes ----------------------------------------------------------- */

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h ^ (h >> 29);
}

static uint64_t hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

typedef struct str_slot {
    uint32_t off, len;
    int32_t id; /* -1: empty */
} str_slot;

typedef struct pair_slot {
    uint64_t key; /* (a << 32) | b; UINT64_MAX: empty */
    int32_t rank, id;
} pair_slot;

enum { K_HOLE, K_NORMAL, K_ADDED, K_SPECIAL };

typedef struct added_tok {
    uint32_t off, len; /* in the pool */
    int32_t id;
} added_tok;

enum { N_PREPEND, N_REPLACE };
typedef struct norm_op {
    int kind;
    char *a, *b; /* prepend: a; replace: a -> b */
    size_t alen, blen;
} norm_op;

enum { P_SPLIT, P_BYTELEVEL, P_METASPACE, P_DIGITS };
enum { B_ISOLATED, B_REMOVED };
typedef struct pre_op {
    int kind;
    pcre2_code *re; /* split (regex or literal), bytelevel with use_regex */
    int behavior;
    int add_prefix_space;
    char repl[8]; /* metaspace */
    size_t repl_len;
    int prepend; /* metaspace: 0 never, 1 first, 2 always */
    int split;   /* metaspace: split before each replacement; digits: one a piece */
} pre_op;

typedef struct piece {
    size_t off, len;
} piece;

typedef struct pieces {
    rb_buf text;
    piece *p;
    size_t n, cap;
} pieces;

typedef struct sym {
    int32_t id;
    int32_t prev, next; /* -1: none */
    int alive;
} sym;

typedef struct cand {
    int32_t rank, pos, id;
} cand;

struct rb_tok {
    char *pool;
    size_t pool_len, pool_cap;
    str_slot *vocab;
    size_t vocab_mask;
    pair_slot *merges;
    size_t merges_mask;
    int32_t n_ids;
    uint32_t *id_off, *id_len;
    unsigned char *kind;
    int32_t *normal;
    size_t n_normal;
    int byte_level, ignore_merges, byte_fallback, fuse_unk;
    int32_t byte_id[256];  /* byte-level: the id of each byte's character */
    int32_t byte_tok[256]; /* byte fallback: <0xXX> */
    int32_t unk_id;
    int dec_byte_level, dec_strip; /* decoder: byte-level; leading spaces stripped */
    norm_op norm[8];
    int n_norm;
    pre_op pre[8];
    int n_pre;
    added_tok *added;
    size_t n_added;
    int32_t first_added[256]; /* index of the first added token by first byte, -1 none */
    int32_t *added_next;      /* chain, longest first */
    int32_t post_pre[8], post_post[8];
    int n_post_pre, n_post_post;
    /* scratch */
    pcre2_match_data *md;
    rb_buf clean, seg, word;
    pieces pa, pb;
    sym *syms;
    size_t syms_cap;
    cand *heap;
    size_t heap_n, heap_cap;
};

/* ---- GPT-2's byte <-> character map ----------------------------------- */

static int byte_char(int b)
{
    if ((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff)) return b;
    int n = 0;
    for (int i = 0; i < b; i++)
        if (!((i >= '!' && i <= '~') || (i >= 0xa1 && i <= 0xac) || (i >= 0xae && i <= 0xff))) n++;
    return 256 + n;
}

static size_t put_utf8(char *o, uint32_t c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xc0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xe0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* Decodes one valid UTF-8 character at s (len >= 1); returns its length. */
static size_t get_utf8(const unsigned char *s, size_t len, uint32_t *c)
{
    if (s[0] < 0x80 || len < 2) {
        *c = s[0];
        return 1;
    }
    if (s[0] < 0xe0) {
        *c = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
        return 2;
    }
    if (s[0] < 0xf0 || len < 4) {
        *c = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
        return len < 3 ? len : 3;
    }
    *c = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
         ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
    return 4;
}

int rb_utf8_sanitize(const char *str, size_t len, rb_buf *out)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0, run = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t need = 0;
        unsigned char lo = 0x80, hi = 0xbf;
        if (c < 0x80) {
            i++;
            continue;
        } else if (c >= 0xc2 && c <= 0xdf) {
            need = 1;
        } else if (c >= 0xe0 && c <= 0xef) {
            need = 2;
            if (c == 0xe0) lo = 0xa0;
            if (c == 0xed) hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            need = 3;
            if (c == 0xf0) lo = 0x90;
            if (c == 0xf4) hi = 0x8f;
        }
        size_t j = i + 1, got = 0;
        if (need) {
            /* the maximal subpart: bytes that could still begin a valid
             * sequence are one U+FFFD together */
            while (got < need && j < len) {
                unsigned char d = s[j];
                if (d < lo || d > hi) break;
                lo = 0x80;
                hi = 0xbf;
                j++;
                got++;
            }
            if (got == need) {
                i = j;
                continue;
            }
        }
        if (rb_buf_add(out, s + run, i - run) || rb_buf_add(out, "\xef\xbf\xbd", 3)) return -ENOMEM;
        i = j;
        run = i;
    }
    return rb_buf_add(out, s + run, len - run) ? -ENOMEM : 0;
}

/* ---- tables ----------------------------------------------------------- */

static int pool_add(rb_tok *t, const char *s, size_t n, uint32_t *off)
{
    if (t->pool_len + n + 1 > t->pool_cap) {
        size_t cap = t->pool_cap ? t->pool_cap * 2 : 1 << 20;
        while (cap < t->pool_len + n + 1)
            cap *= 2;
        char *p = realloc(t->pool, cap);
        if (!p) return -ENOMEM;
        t->pool = p;
        t->pool_cap = cap;
    }
    if (t->pool_len + n > UINT32_MAX) return -ENOMEM;
    memcpy(t->pool + t->pool_len, s, n);
    *off = (uint32_t)t->pool_len;
    t->pool_len += n;
    t->pool[t->pool_len] = 0;
    return 0;
}

static int32_t vocab_get(const rb_tok *t, const char *s, size_t n)
{
    for (size_t i = hash_bytes(s, n) & t->vocab_mask;; i = (i + 1) & t->vocab_mask) {
        const str_slot *e = &t->vocab[i];
        if (e->id < 0) return -1;
        if (e->len == n && memcmp(t->pool + e->off, s, n) == 0) return e->id;
    }
}

/* Adds s -> id (the first entry for a string wins). */
static int vocab_put(rb_tok *t, const char *s, size_t n, int32_t id)
{
    size_t i = hash_bytes(s, n) & t->vocab_mask;
    for (;; i = (i + 1) & t->vocab_mask) {
        str_slot *e = &t->vocab[i];
        if (e->id < 0) break;
        if (e->len == n && memcmp(t->pool + e->off, s, n) == 0) return 0;
    }
    uint32_t off;
    if (pool_add(t, s, n, &off)) return -ENOMEM;
    t->vocab[i] = (str_slot){.off = off, .len = (uint32_t)n, .id = id};
    return 0;
}

static pair_slot *merge_get(const rb_tok *t, int32_t a, int32_t b)
{
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    for (size_t i = hash_u64(key) & t->merges_mask;; i = (i + 1) & t->merges_mask) {
        pair_slot *e = &t->merges[i];
        if (e->key == UINT64_MAX) return NULL;
        if (e->key == key) return e;
    }
}

static void merge_put(rb_tok *t, int32_t a, int32_t b, int32_t rank, int32_t id)
{
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    size_t i = hash_u64(key) & t->merges_mask;
    for (; t->merges[i].key != UINT64_MAX; i = (i + 1) & t->merges_mask)
        if (t->merges[i].key == key) return; /* the first (lowest) rank wins */
    t->merges[i] = (pair_slot){.key = key, .rank = rank, .id = id};
}

static size_t table_size(size_t n)
{
    size_t s = 1024;
    while (s < n * 2)
        s *= 2;
    return s;
}

/* ---- loading ---------------------------------------------------------- */

#define ERR(...) (rb_set_err(err, errlen, __VA_ARGS__), -EINVAL)

static const char *type_of(const cJSON *j)
{
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(j, "type");
    return cJSON_IsString(ty) ? ty->valuestring : NULL;
}

static int get_flag(const cJSON *j, const char *name, int def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, name);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : def;
}

static pcre2_code *compile(const char *pat, size_t len, int literal, char *err, size_t errlen)
{
    int code;
    PCRE2_SIZE at;
    uint32_t flags = PCRE2_UTF | PCRE2_UCP | (literal ? PCRE2_LITERAL : 0);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, len, flags, &code, &at, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof msg);
        rb_set_err(err, errlen, "pre_tokenizer: the pattern '%.100s' does not compile at %zu: %s",
                   pat, (size_t)at, (char *)msg);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* faster when available; works without */
    return re;
}

static const char GPT2_RE[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|"
                              "\\s+(?!\\S)|\\s+";

static int load_pattern(const cJSON *j, const char *what, pcre2_code **re, char *err, size_t errlen)
{
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(j, "pattern");
    const cJSON *rx = cJSON_GetObjectItemCaseSensitive(pat, "Regex");
    const cJSON *str = cJSON_GetObjectItemCaseSensitive(pat, "String");
    if (cJSON_IsString(rx))
        *re = compile(rx->valuestring, strlen(rx->valuestring), 0, err, errlen);
    else if (cJSON_IsString(str))
        *re = compile(str->valuestring, strlen(str->valuestring), 1, err, errlen);
    else
        return ERR("%s: 'pattern' must be {\"Regex\": ...} or {\"String\": ...}", what);
    return *re ? 0 : -EINVAL;
}

static int load_pre(rb_tok *t, const cJSON *j, char *err, size_t errlen)
{
    if (!j || cJSON_IsNull(j)) return 0;
    const char *ty = type_of(j);
    if (!ty) return ERR("pre_tokenizer: no 'type'");
    if (strcmp(ty, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "pretokenizers");
        if (!cJSON_IsArray(list)) return ERR("pre_tokenizer: Sequence needs 'pretokenizers'");
        const cJSON *e;
        cJSON_ArrayForEach(e, list)
        {
            int rc = load_pre(t, e, err, errlen);
            if (rc) return rc;
        }
        return 0;
    }
    if (t->n_pre == (int)(sizeof t->pre / sizeof t->pre[0]))
        return ERR("pre_tokenizer: more than 8 steps");
    pre_op *op = &t->pre[t->n_pre];
    memset(op, 0, sizeof *op);
    if (strcmp(ty, "Split") == 0) {
        op->kind = P_SPLIT;
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "behavior");
        if (!cJSON_IsString(b)) return ERR("pre_tokenizer: Split needs a 'behavior'");
        if (strcmp(b->valuestring, "Isolated") == 0)
            op->behavior = B_ISOLATED;
        else if (strcmp(b->valuestring, "Removed") == 0)
            op->behavior = B_REMOVED;
        else
            return ERR("pre_tokenizer: Split behavior '%s' is not supported (Isolated, Removed)",
                       b->valuestring);
        if (get_flag(j, "invert", 0))
            return ERR("pre_tokenizer: Split with invert is not supported");
        int rc = load_pattern(j, "pre_tokenizer: Split", &op->re, err, errlen);
        if (rc) return rc;
    } else if (strcmp(ty, "ByteLevel") == 0) {
        op->kind = P_BYTELEVEL;
        op->add_prefix_space = get_flag(j, "add_prefix_space", 1);
        if (get_flag(j, "use_regex", 1) &&
            !(op->re = compile(GPT2_RE, sizeof GPT2_RE - 1, 0, err, errlen)))
            return -EINVAL;
        t->byte_level = 1;
    } else if (strcmp(ty, "Metaspace") == 0) {
        op->kind = P_METASPACE;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(j, "replacement");
        const char *repl = cJSON_IsString(r) ? r->valuestring : "\xe2\x96\x81";
        op->repl_len = strlen(repl);
        if (op->repl_len == 0 || op->repl_len >= sizeof op->repl)
            return ERR("pre_tokenizer: Metaspace replacement must be one character");
        memcpy(op->repl, repl, op->repl_len);
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "prepend_scheme");
        op->prepend = get_flag(j, "add_prefix_space", 1) ? 2 : 0;
        if (cJSON_IsString(ps))
            op->prepend = strcmp(ps->valuestring, "never") == 0   ? 0
                          : strcmp(ps->valuestring, "first") == 0 ? 1
                                                                  : 2;
        op->split = get_flag(j, "split", 1);
    } else if (strcmp(ty, "Digits") == 0) {
        op->kind = P_DIGITS;
        op->split = get_flag(j, "individual_digits", 0);
        const char *pat = op->split ? "\\p{N}" : "\\p{N}+";
        if (!(op->re = compile(pat, strlen(pat), 0, err, errlen))) return -EINVAL;
    } else {
        return ERR("pre_tokenizer: type '%s' is not supported (Sequence, Split, ByteLevel, "
                   "Metaspace, Digits)",
                   ty);
    }
    t->n_pre++;
    return 0;
}

static int load_norm(rb_tok *t, const cJSON *j, char *err, size_t errlen)
{
    if (!j || cJSON_IsNull(j)) return 0;
    const char *ty = type_of(j);
    if (!ty) return ERR("normalizer: no 'type'");
    if (strcmp(ty, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "normalizers");
        if (!cJSON_IsArray(list)) return ERR("normalizer: Sequence needs 'normalizers'");
        const cJSON *e;
        cJSON_ArrayForEach(e, list)
        {
            int rc = load_norm(t, e, err, errlen);
            if (rc) return rc;
        }
        return 0;
    }
    if (strcmp(ty, "NFC") == 0) return 0; /* the identity: see rb_tok.h */
    if (t->n_norm == (int)(sizeof t->norm / sizeof t->norm[0]))
        return ERR("normalizer: more than 8 steps");
    norm_op *op = &t->norm[t->n_norm];
    if (strcmp(ty, "Prepend") == 0) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(j, "prepend");
        if (!cJSON_IsString(p)) return ERR("normalizer: Prepend needs a string 'prepend'");
        op->kind = N_PREPEND;
        op->a = strdup(p->valuestring);
        op->alen = strlen(p->valuestring);
    } else if (strcmp(ty, "Replace") == 0) {
        const cJSON *pat = cJSON_GetObjectItemCaseSensitive(j, "pattern");
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(pat, "String");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "content");
        if (!cJSON_IsString(s) || !cJSON_IsString(c) || !s->valuestring[0])
            return ERR("normalizer: Replace needs a non-empty String 'pattern' and a 'content' "
                       "(a Regex pattern is not supported)");
        op->kind = N_REPLACE;
        op->a = strdup(s->valuestring);
        op->alen = strlen(s->valuestring);
        op->b = strdup(c->valuestring);
        op->blen = strlen(c->valuestring);
        if (!op->b) return -ENOMEM;
    } else {
        return ERR("normalizer: type '%s' is not supported (Sequence, Prepend, Replace, NFC)", ty);
    }
    if (!op->a) return -ENOMEM;
    t->n_norm++;
    return 0;
}

static int32_t special_id(const cJSON *specials, const char *name)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(specials, name);
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(s, "ids");
    const cJSON *first = cJSON_IsArray(ids) ? cJSON_GetArrayItem(ids, 0) : NULL;
    return cJSON_IsNumber(first) ? (int32_t)first->valuedouble : -1;
}

static int load_post(rb_tok *t, const cJSON *j, char *err, size_t errlen)
{
    if (!j || cJSON_IsNull(j)) return 0;
    const char *ty = type_of(j);
    if (!ty) return ERR("post_processor: no 'type'");
    if (strcmp(ty, "ByteLevel") == 0) return 0;
    if (strcmp(ty, "Sequence") == 0) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(j, "processors");
        const cJSON *e;
        cJSON_ArrayForEach(e, list)
        {
            int rc = load_post(t, e, err, errlen);
            if (rc) return rc;
        }
        return 0;
    }
    if (strcmp(ty, "TemplateProcessing") == 0) {
        const cJSON *single = cJSON_GetObjectItemCaseSensitive(j, "single");
        const cJSON *specials = cJSON_GetObjectItemCaseSensitive(j, "special_tokens");
        int after = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, single)
        {
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(e, "SpecialToken");
            if (cJSON_GetObjectItemCaseSensitive(e, "Sequence")) {
                after = 1;
                continue;
            }
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(st, "id");
            if (!cJSON_IsString(id)) continue;
            int32_t v = special_id(specials, id->valuestring);
            if (v < 0) return ERR("post_processor: special token '%s' has no id", id->valuestring);
            if (after && t->n_post_post < 8) t->post_post[t->n_post_post++] = v;
            if (!after && t->n_post_pre < 8) t->post_pre[t->n_post_pre++] = v;
        }
        return 0;
    }
    if (strcmp(ty, "RobertaProcessing") == 0 || strcmp(ty, "BertProcessing") == 0) {
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(j, "cls");
        const cJSON *sep = cJSON_GetObjectItemCaseSensitive(j, "sep");
        const cJSON *c1 = cJSON_GetArrayItem(cls, 1), *s1 = cJSON_GetArrayItem(sep, 1);
        if (!cJSON_IsNumber(c1) || !cJSON_IsNumber(s1))
            return ERR("post_processor: %s needs cls and sep", ty);
        t->post_pre[t->n_post_pre++] = (int32_t)c1->valuedouble;
        t->post_post[t->n_post_post++] = (int32_t)s1->valuedouble;
        return 0;
    }
    return ERR("post_processor: type '%s' is not supported", ty);
}

static void load_decoder(rb_tok *t, const cJSON *j)
{
    const char *ty = j ? type_of(j) : NULL;
    if (!ty) return;
    if (strcmp(ty, "ByteLevel") == 0) t->dec_byte_level = 1;
    if (strcmp(ty, "Metaspace") == 0) {
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(j, "prepend_scheme");
        int pre = get_flag(j, "add_prefix_space", 1);
        if (cJSON_IsString(ps)) pre = strcmp(ps->valuestring, "never") != 0;
        if (pre) t->dec_strip = 1;
    }
    if (strcmp(ty, "Strip") == 0) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(j, "start");
        if (cJSON_IsNumber(s)) t->dec_strip = (int)s->valuedouble;
    }
    if (strcmp(ty, "Sequence") == 0) {
        const cJSON *e, *list = cJSON_GetObjectItemCaseSensitive(j, "decoders");
        cJSON_ArrayForEach(e, list) load_decoder(t, e);
    }
}

/* Sets the string of id (the first one given wins, as the vocabulary's). */
static int set_id(rb_tok *t, int32_t id, const char *s, size_t n, int kind)
{
    if (id < 0 || id >= t->n_ids) return -EINVAL;
    if (t->kind[id] == K_HOLE || kind >= K_ADDED) {
        uint32_t off;
        if (pool_add(t, s, n, &off)) return -ENOMEM;
        t->id_off[id] = off;
        t->id_len[id] = (uint32_t)n;
    }
    if (kind > t->kind[id]) t->kind[id] = (unsigned char)kind;
    return 0;
}

/* The model's options: a BPE without dropout or word affixes, and its flags. */
static int check_model(rb_tok *t, const cJSON *model, const char *ty, const cJSON *vocab,
                       const cJSON *merges, char *err, size_t errlen)
{
    if (!ty) return ERR("model: no 'type'");
    if (strcmp(ty, "BPE") != 0)
        return ERR(
            "model: type '%s' is not supported (only BPE: byte-level or SentencePiece-style)", ty);
    if (!cJSON_IsObject(vocab)) return ERR("model: 'vocab' must be an object of token: id");
    if (!cJSON_IsArray(merges)) return ERR("model: 'merges' must be an array");
    const cJSON *dropout = cJSON_GetObjectItemCaseSensitive(model, "dropout");
    if (cJSON_IsNumber(dropout) && dropout->valuedouble > 0)
        return ERR("model: BPE dropout %g is not supported", dropout->valuedouble);
    const cJSON *cs = cJSON_GetObjectItemCaseSensitive(model, "continuing_subword_prefix");
    const cJSON *ew = cJSON_GetObjectItemCaseSensitive(model, "end_of_word_suffix");
    if ((cJSON_IsString(cs) && cs->valuestring[0]) || (cJSON_IsString(ew) && ew->valuestring[0]))
        return ERR("model: continuing_subword_prefix and end_of_word_suffix are not supported");
    t->ignore_merges = get_flag(model, "ignore_merges", 0);
    t->byte_fallback = get_flag(model, "byte_fallback", 0);
    t->fuse_unk = get_flag(model, "fuse_unk", 0);
    return 0;
}

/* The id tables, sized by the largest id, with the vocabulary's strings. */
static int load_ids(rb_tok *t, const cJSON *vocab, const cJSON *added, char *err, size_t errlen)
{
    int64_t max_id = -1;
    size_t n_vocab = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, vocab)
    {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 16777216 ||
            (double)(int64_t)e->valuedouble != e->valuedouble)
            return ERR("model: vocab: the id of '%.60s' must be a whole number in [0, 2^24]",
                       e->string ? e->string : "");
        if ((int64_t)e->valuedouble > max_id) max_id = (int64_t)e->valuedouble;
        n_vocab++;
    }
    if (n_vocab == 0) return ERR("model: 'vocab' is empty");
    cJSON_ArrayForEach(e, added)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "content");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble > 16777216 ||
            !cJSON_IsString(c) || !c->valuestring[0])
            return ERR("added_tokens: each needs a whole 'id' in [0, 2^24] and a non-empty "
                       "'content'");
        if ((int64_t)id->valuedouble > max_id) max_id = (int64_t)id->valuedouble;
    }
    t->n_ids = (int32_t)max_id + 1;
    t->id_off = calloc((size_t)t->n_ids, sizeof *t->id_off);
    t->id_len = calloc((size_t)t->n_ids, sizeof *t->id_len);
    t->kind = calloc((size_t)t->n_ids, 1);
    t->vocab_mask = table_size(n_vocab + (size_t)cJSON_GetArraySize(added)) - 1;
    t->vocab = malloc((t->vocab_mask + 1) * sizeof *t->vocab);
    if (!t->id_off || !t->id_len || !t->kind || !t->vocab) return -ENOMEM;
    for (size_t i = 0; i <= t->vocab_mask; i++)
        t->vocab[i].id = -1;
    cJSON_ArrayForEach(e, vocab)
    {
        size_t n = strlen(e->string);
        int32_t id = (int32_t)e->valuedouble;
        if (vocab_put(t, e->string, n, id) || set_id(t, id, e->string, n, K_NORMAL)) return -ENOMEM;
    }
    return 0;
}

/* The two tokens of merge e, "a b" or ["a", "b"]. 0, or -EINVAL. */
static int merge_pair(const cJSON *e, int32_t rank, const char **a, size_t *alen, const char **b,
                      size_t *blen, char *err, size_t errlen)
{
    if (cJSON_IsString(e)) {
        *a = e->valuestring;
        const char *sp = strchr(*a + ((*a)[0] ? 1 : 0), ' ');
        if (!sp)
            return ERR("model: merges[%d]: '%.60s' is not two tokens separated by a space",
                       (int)rank, *a);
        *alen = (size_t)(sp - *a);
        *b = sp + 1;
        *blen = strlen(*b);
        return 0;
    }
    if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2 &&
        cJSON_IsString(cJSON_GetArrayItem(e, 0)) && cJSON_IsString(cJSON_GetArrayItem(e, 1))) {
        *a = cJSON_GetArrayItem(e, 0)->valuestring;
        *b = cJSON_GetArrayItem(e, 1)->valuestring;
        *alen = strlen(*a);
        *blen = strlen(*b);
        return 0;
    }
    return ERR("model: merges[%d] must be \"a b\" or [\"a\", \"b\"]", (int)rank);
}

/* The merges, each by its rank, between tokens of the vocabulary. */
static int load_merges(rb_tok *t, const cJSON *merges, char *err, size_t errlen)
{
    size_t n_merges = (size_t)cJSON_GetArraySize(merges);
    t->merges_mask = table_size(n_merges) - 1;
    t->merges = malloc((t->merges_mask + 1) * sizeof *t->merges);
    if (!t->merges) return -ENOMEM;
    for (size_t i = 0; i <= t->merges_mask; i++)
        t->merges[i].key = UINT64_MAX;
    rb_buf both = {0};
    int32_t rank = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, merges)
    {
        const char *a, *b;
        size_t alen, blen;
        int rc = merge_pair(e, rank, &a, &alen, &b, &blen, err, errlen);
        if (rc) {
            rb_buf_free(&both);
            return rc;
        }
        int32_t ia = vocab_get(t, a, alen), ib = vocab_get(t, b, blen);
        rb_buf_reset(&both);
        if (rb_buf_add(&both, a, alen) || rb_buf_add(&both, b, blen)) {
            rb_buf_free(&both);
            return -ENOMEM;
        }
        int32_t im = vocab_get(t, both.data, both.len);
        if (ia < 0 || ib < 0 || im < 0) {
            rb_buf_free(&both);
            return ERR("model: merges[%d]: '%.40s' + '%.40s' is not in the vocabulary", (int)rank,
                       a, b);
        }
        merge_put(t, ia, ib, rank, im);
        rank++;
    }
    rb_buf_free(&both);
    return 0;
}

/* The unknown token and the byte fallback tokens <0x00>..<0xFF>, -1 when absent. */
static void load_fallbacks(rb_tok *t, const cJSON *model)
{
    t->unk_id = -1;
    const cJSON *unk = cJSON_GetObjectItemCaseSensitive(model, "unk_token");
    if (cJSON_IsString(unk)) t->unk_id = vocab_get(t, unk->valuestring, strlen(unk->valuestring));
    for (int b = 0; b < 256; b++) {
        char name[8];
        snprintf(name, sizeof name, "<0x%02X>", b);
        t->byte_tok[b] = vocab_get(t, name, strlen(name));
    }
}

static int load_model(rb_tok *t, const cJSON *model, const cJSON *added, char *err, size_t errlen)
{
    const char *ty = type_of(model);
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (!ty && cJSON_IsObject(vocab) && cJSON_IsArray(merges)) ty = "BPE"; /* older files */
    int rc = check_model(t, model, ty, vocab, merges, err, errlen);
    if (!rc) rc = load_ids(t, vocab, added, err, errlen);
    if (!rc) rc = load_merges(t, merges, err, errlen);
    if (!rc) load_fallbacks(t, model);
    return rc;
}

static int load_added(rb_tok *t, const cJSON *added, char *err, size_t errlen)
{
    size_t n = (size_t)cJSON_GetArraySize(added);
    t->added = calloc(n ? n : 1, sizeof *t->added);
    t->added_next = calloc(n ? n : 1, sizeof *t->added_next);
    if (!t->added || !t->added_next) return -ENOMEM;
    const cJSON *e;
    cJSON_ArrayForEach(e, added)
    {
        const char *c = cJSON_GetObjectItemCaseSensitive(e, "content")->valuestring;
        int32_t id = (int32_t)cJSON_GetObjectItemCaseSensitive(e, "id")->valuedouble;
        int special = get_flag(e, "special", 0);
        if (get_flag(e, "single_word", 0) || get_flag(e, "lstrip", 0) || get_flag(e, "rstrip", 0))
            if (!special)
                return ERR("added_tokens: '%.60s': single_word, lstrip and rstrip are not "
                           "supported",
                           c);
        size_t len = strlen(c);
        added_tok *a = &t->added[t->n_added];
        if (pool_add(t, c, len, &a->off) || set_id(t, id, c, len, special ? K_SPECIAL : K_ADDED) ||
            vocab_put(t, c, len, id))
            return -ENOMEM;
        a->len = (uint32_t)len;
        a->id = id;
        t->n_added++;
    }
    /* chains by first byte, longest first: the first that matches is the longest */
    for (int b = 0; b < 256; b++)
        t->first_added[b] = -1;
    for (size_t i = 0; i < t->n_added; i++) {
        unsigned char b = (unsigned char)t->pool[t->added[i].off];
        int32_t *at = &t->first_added[b];
        while (*at >= 0 && t->added[*at].len >= t->added[i].len)
            at = &t->added_next[*at];
        t->added_next[i] = *at;
        *at = (int32_t)i;
    }
    return 0;
}

int rb_tok_parse(const char *json, size_t len, rb_tok **out, char *err, size_t errlen)
{
    *out = NULL;
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= json && at <= json + len ? (size_t)(at - json) : len;
        return ERR("not valid JSON (truncated or damaged near byte %zu of %zu)", off, len);
    }
    rb_tok *t = calloc(1, sizeof *t);
    int rc = t ? 0 : -ENOMEM;
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
    if (!rc && !cJSON_IsObject(model)) rc = ERR("no 'model' object: not a tokenizer.json");
    if (!rc && added && !cJSON_IsArray(added) && !cJSON_IsNull(added))
        rc = ERR("added_tokens: must be an array");
    if (!cJSON_IsArray(added)) added = NULL;
    if (!rc) rc = load_model(t, model, added, err, errlen);
    if (!rc) rc = load_added(t, added, err, errlen);
    if (!rc) rc = load_norm(t, cJSON_GetObjectItemCaseSensitive(root, "normalizer"), err, errlen);
    if (!rc) rc = load_pre(t, cJSON_GetObjectItemCaseSensitive(root, "pre_tokenizer"), err, errlen);
    if (!rc)
        rc = load_post(t, cJSON_GetObjectItemCaseSensitive(root, "post_processor"), err, errlen);
    if (!rc) load_decoder(t, cJSON_GetObjectItemCaseSensitive(root, "decoder"));
    cJSON_Delete(root);
    if (!rc && t->byte_level) {
        for (int b = 0; b < 256; b++) {
            char s[4];
            size_t n = put_utf8(s, (uint32_t)byte_char(b));
            if ((t->byte_id[b] = vocab_get(t, s, n)) < 0) {
                rc = ERR("model: byte-level, but byte 0x%02x's character is not in the vocabulary",
                         b);
                break;
            }
        }
    }
    if (!rc) {
        t->normal = malloc((size_t)t->n_ids * sizeof *t->normal);
        t->md = pcre2_match_data_create(4, NULL);
        if (!t->normal || !t->md) rc = -ENOMEM;
    }
    if (!rc) {
        for (int32_t i = 0; i < t->n_ids; i++)
            if (t->kind[i] == K_NORMAL || t->kind[i] == K_ADDED) t->normal[t->n_normal++] = i;
        if (t->n_normal == 0) rc = ERR("model: every id is special");
    }
    if (rc == -ENOMEM) rb_set_err(err, errlen, "out of memory");
    if (rc) {
        rb_tok_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

void rb_tok_free(rb_tok *t)
{
    if (!t) return;
    for (int i = 0; i < t->n_norm; i++) {
        free(t->norm[i].a);
        free(t->norm[i].b);
    }
    for (int i = 0; i < t->n_pre + 1 && i < 8; i++)
        if (t->pre[i].re) pcre2_code_free(t->pre[i].re);
    if (t->md) pcre2_match_data_free(t->md);
    free(t->pool);
    free(t->vocab);
    free(t->merges);
    free(t->id_off);
    free(t->id_len);
    free(t->kind);
    free(t->normal);
    free(t->added);
    free(t->added_next);
    rb_buf_free(&t->clean);
    rb_buf_free(&t->seg);
    rb_buf_free(&t->word);
    rb_buf_free(&t->pa.text);
    rb_buf_free(&t->pb.text);
    free(t->pa.p);
    free(t->pb.p);
    free(t->syms);
    free(t->heap);
    free(t);
}

int rb_tok_n_special_added(const rb_tok *t)
{
    return t->n_post_pre + t->n_post_post;
}

int32_t rb_tok_vocab_size(const rb_tok *t)
{
    return t->n_ids;
}

int rb_tok_is_special(const rb_tok *t, int32_t id)
{
    return id < 0 || id >= t->n_ids || t->kind[id] == K_HOLE || t->kind[id] == K_SPECIAL;
}

const int32_t *rb_tok_normal_ids(const rb_tok *t, size_t *n)
{
    *n = t->n_normal;
    return t->normal;
}

/* ---- finding the file ------------------------------------------------- */

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void hub_dir(char *out, size_t cap)
{
    const char *v;
    if ((v = getenv("HF_HUB_CACHE")) && *v)
        snprintf(out, cap, "%s", v);
    else if ((v = getenv("HF_HOME")) && *v)
        snprintf(out, cap, "%s/hub", v);
    else if ((v = getenv("XDG_CACHE_HOME")) && *v)
        snprintf(out, cap, "%s/huggingface/hub", v);
    else
        snprintf(out, cap, "%s/.cache/huggingface/hub", (v = getenv("HOME")) && *v ? v : "/");
}

int rb_tok_resolve(const char *name, char *path, size_t cap, char *err, size_t errlen)
{
    if (!name || !*name) return ERR("empty tokenizer name");
    if (is_file(name)) {
        snprintf(path, cap, "%s", name);
        return 0;
    }
    if (is_dir(name)) {
        if (snprintf(path, cap, "%s/tokenizer.json", name) < (int)cap && is_file(path)) return 0;
        rb_set_err(err, errlen, "'%s': a directory without a tokenizer.json", name);
        return -ENOENT;
    }
    char hub[2048], repo[3072], rev[256] = "";
    hub_dir(hub, sizeof hub);
    int ok_name = name[0] != '/' && name[0] != '.' && !strstr(name, "..") && strlen(name) < 512;
    if (ok_name) {
        char mangled[1100];
        size_t j = 0;
        for (const char *p = name; *p && j + 3 < sizeof mangled; p++) {
            if (*p == '/') {
                mangled[j++] = '-';
                mangled[j++] = '-';
            } else {
                mangled[j++] = *p;
            }
        }
        mangled[j] = 0;
        char ref[3200];
        if (snprintf(repo, sizeof repo, "%s/models--%s", hub, mangled) >= (int)sizeof repo ||
            snprintf(ref, sizeof ref, "%s/refs/main", repo) >= (int)sizeof ref)
            ok_name = 0;
        FILE *f = ok_name ? fopen(ref, "r") : NULL;
        if (f) {
            if (fgets(rev, sizeof rev, f)) rev[strcspn(rev, "\r\n")] = 0;
            fclose(f);
        }
        if (rev[0] && !strchr(rev, '/')) {
            if (snprintf(path, cap, "%s/snapshots/%s/tokenizer.json", repo, rev) < (int)cap &&
                is_file(path))
                return 0;
        }
        char snaps[3200];
        int fits = snprintf(snaps, sizeof snaps, "%s/snapshots", repo) < (int)sizeof snaps;
        DIR *d = ok_name && fits ? opendir(snaps) : NULL;
        if (d) {
            char best[256] = "";
            for (struct dirent *de; (de = readdir(d));) {
                if (de->d_name[0] == '.') continue;
                if (snprintf(path, cap, "%s/%s/tokenizer.json", snaps, de->d_name) >= (int)cap)
                    continue;
                if (is_file(path) && (!best[0] || strcmp(de->d_name, best) < 0))
                    snprintf(best, sizeof best, "%s", de->d_name);
            }
            closedir(d);
            if (best[0] && snprintf(path, cap, "%s/%s/tokenizer.json", snaps, best) < (int)cap)
                return 0;
        }
    }
    rb_set_err(err, errlen,
               "'%s' is not a file, and no tokenizer.json for it is in the local Hugging Face "
               "cache (%s); nothing is downloaded: give the path of a tokenizer.json, or put the "
               "model's files in that cache",
               name, hub);
    return -ENOENT;
}

int rb_tok_open(const char *name, rb_tok **out, char *err, size_t errlen)
{
    char path[4096], sub[512];
    *out = NULL;
    int rc = rb_tok_resolve(name, path, sizeof path, err, errlen);
    if (rc) return rc;
    char *buf;
    size_t len;
    rc = rb_read_file(path, RB_TOK_MAX_FILE_BYTES, &buf, &len);
    if (rc) {
        rb_set_err(err, errlen, "%s: cannot read: %s%s", path, rb_file_strerror(rc),
                   rc == -EFBIG ? " (a tokenizer.json is at most 256 MiB)" : "");
        return rc == -ENOMEM ? rc : -EINVAL;
    }
    rc = rb_tok_parse(buf, len, out, sub, sizeof sub);
    free(buf);
    if (rc) rb_set_err(err, errlen, "%s: %s", path, sub);
    return rc;
}

/* ---- encoding --------------------------------------------------------- */

static int ids_push(rb_tok_ids *o, int32_t id)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? o->cap * 2 : 256;
        int32_t *v = realloc(o->v, cap * sizeof *v);
        if (!v) return -ENOMEM;
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = id;
    return 0;
}

void rb_tok_ids_free(rb_tok_ids *ids)
{
    free(ids->v);
    *ids = (rb_tok_ids){0};
}

static int pieces_add(pieces *ps, size_t off, size_t len)
{
    if (len == 0) return 0;
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        piece *p = realloc(ps->p, cap * sizeof *p);
        if (!p) return -ENOMEM;
        ps->p = p;
        ps->cap = cap;
    }
    ps->p[ps->n++] = (piece){off, len};
    return 0;
}

/* Appends s[0..n) to out's text as pieces split by re (Isolated: the
 * matches and the gaps; Removed: the gaps). */
static int split_re(rb_tok *t, pcre2_code *re, int behavior, const char *s, size_t n, pieces *out)
{
    size_t base = out->text.len, at = 0, gap = 0;
    if (rb_buf_add(&out->text, s, n)) return -ENOMEM;
    while (at <= n) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, n, at, PCRE2_NO_UTF_CHECK, t->md, NULL);
        if (rc < 0) break;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(t->md);
        size_t ms = ov[0], me = ov[1];
        if (me == ms) { /* an empty match: step one character */
            at = ms + 1;
            while (at < n && ((unsigned char)s[at] & 0xc0) == 0x80)
                at++;
            continue;
        }
        if (pieces_add(out, base + gap, ms - gap)) return -ENOMEM;
        if (behavior == B_ISOLATED && pieces_add(out, base + ms, me - ms)) return -ENOMEM;
        gap = at = me;
    }
    return pieces_add(out, base + gap, n - gap);
}

static int pre_step(rb_tok *t, const pre_op *op, const pieces *in, pieces *out, int first_seg)
{
    rb_buf_reset(&out->text);
    out->n = 0;
    for (size_t i = 0; i < in->n; i++) {
        const char *s = in->text.data + in->p[i].off;
        size_t n = in->p[i].len;
        switch (op->kind) {
        case P_SPLIT:
        case P_DIGITS:
            if (split_re(t, op->re, op->behavior, s, n, out)) return -ENOMEM;
            break;
        case P_BYTELEVEL:
            if (op->add_prefix_space && s[0] != ' ') {
                rb_buf_reset(&t->word);
                if (rb_buf_add(&t->word, " ", 1) || rb_buf_add(&t->word, s, n)) return -ENOMEM;
                s = t->word.data;
                n = t->word.len;
            }
            if (op->re) {
                if (split_re(t, op->re, B_ISOLATED, s, n, out)) return -ENOMEM;
            } else {
                size_t base = out->text.len;
                if (rb_buf_add(&out->text, s, n) || pieces_add(out, base, n)) return -ENOMEM;
            }
            break;
        case P_METASPACE: {
            size_t base = out->text.len;
            int pre = op->prepend == 2 || (op->prepend == 1 && first_seg && i == 0);
            if (pre && !(n >= op->repl_len && memcmp(s, op->repl, op->repl_len) == 0))
                if (rb_buf_add(&out->text, op->repl, op->repl_len)) return -ENOMEM;
            for (size_t j = 0; j < n; j++)
                if (s[j] == ' ' ? rb_buf_add(&out->text, op->repl, op->repl_len)
                                : rb_buf_add(&out->text, s + j, 1))
                    return -ENOMEM;
            size_t end = out->text.len, start = base;
            if (op->split) { /* each replacement begins a piece */
                for (size_t j = base + 1; j + op->repl_len <= end; j++)
                    if (memcmp(out->text.data + j, op->repl, op->repl_len) == 0) {
                        if (pieces_add(out, start, j - start)) return -ENOMEM;
                        start = j;
                    }
            }
            if (pieces_add(out, start, end - start)) return -ENOMEM;
            break;
        }
        }
    }
    return 0;
}

static int heap_push(rb_tok *t, int32_t rank, int32_t pos, int32_t id)
{
    if (t->heap_n == t->heap_cap) {
        size_t cap = t->heap_cap ? t->heap_cap * 2 : 256;
        cand *h = realloc(t->heap, cap * sizeof *h);
        if (!h) return -ENOMEM;
        t->heap = h;
        t->heap_cap = cap;
    }
    cand c = {rank, pos, id};
    size_t i = t->heap_n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        cand *q = &t->heap[p];
        if (q->rank < c.rank || (q->rank == c.rank && q->pos < c.pos)) break;
        t->heap[i] = *q;
        i = p;
    }
    t->heap[i] = c;
    return 0;
}

static cand heap_pop(rb_tok *t)
{
    cand top = t->heap[0], last = t->heap[--t->heap_n];
    size_t i = 0, n = t->heap_n;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const cand *best = &last;
        if (l < n && (t->heap[l].rank < best->rank ||
                      (t->heap[l].rank == best->rank && t->heap[l].pos < best->pos))) {
            m = l;
            best = &t->heap[l];
        }
        if (r < n && (t->heap[r].rank < best->rank ||
                      (t->heap[r].rank == best->rank && t->heap[r].pos < best->pos)))
            m = r;
        if (m == i) break;
        t->heap[i] = t->heap[m];
        i = m;
    }
    if (n) t->heap[i] = last;
    return top;
}

static int sym_push(rb_tok *t, size_t *n, int32_t id)
{
    if (*n == t->syms_cap) {
        size_t cap = t->syms_cap ? t->syms_cap * 2 : 256;
        sym *s = realloc(t->syms, cap * sizeof *s);
        if (!s) return -ENOMEM;
        t->syms = s;
        t->syms_cap = cap;
    }
    t->syms[*n] = (sym){.id = id, .prev = (int32_t)*n - 1, .next = (int32_t)*n + 1, .alive = 1};
    (*n)++;
    return 0;
}

static int try_pair(rb_tok *t, int32_t pos)
{
    int32_t nx = t->syms[pos].next;
    if (nx < 0) return 0;
    const pair_slot *m = merge_get(t, t->syms[pos].id, t->syms[nx].id);
    return m ? heap_push(t, m->rank, pos, m->id) : 0;
}

/* One piece through the BPE model. */
static int bpe(rb_tok *t, const char *s, size_t n, rb_tok_ids *out)
{
    if (n == 0) return 0;
    const char *w = s;
    size_t wn = n;
    if (t->byte_level) { /* the piece in GPT-2's characters */
        rb_buf_reset(&t->word);
        for (size_t i = 0; i < n; i++) {
            char c[4];
            size_t k = put_utf8(c, (uint32_t)byte_char((unsigned char)s[i]));
            if (rb_buf_add(&t->word, c, k)) return -ENOMEM;
        }
        w = t->word.data;
        wn = t->word.len;
    }
    if (t->ignore_merges) {
        int32_t id = vocab_get(t, w, wn);
        if (id >= 0) return ids_push(out, id);
    }
    size_t ns = 0;
    if (t->byte_level) {
        for (size_t i = 0; i < n; i++)
            if (sym_push(t, &ns, t->byte_id[(unsigned char)s[i]])) return -ENOMEM;
    } else {
        for (size_t i = 0; i < wn;) {
            uint32_t c;
            size_t k = get_utf8((const unsigned char *)w + i, wn - i, &c);
            int32_t id = vocab_get(t, w + i, k);
            if (id >= 0) {
                if (sym_push(t, &ns, id)) return -ENOMEM;
            } else {
                int all = t->byte_fallback;
                for (size_t j = 0; j < k && all; j++)
                    all = t->byte_tok[(unsigned char)w[i + j]] >= 0;
                if (all) {
                    for (size_t j = 0; j < k; j++)
                        if (sym_push(t, &ns, t->byte_tok[(unsigned char)w[i + j]])) return -ENOMEM;
                } else if (t->unk_id >= 0) {
                    if (!(t->fuse_unk && ns && t->syms[ns - 1].id == t->unk_id))
                        if (sym_push(t, &ns, t->unk_id)) return -ENOMEM;
                }
            }
            i += k;
        }
    }
    if (ns == 0) return 0;
    t->syms[ns - 1].next = -1;
    t->heap_n = 0;
    for (size_t i = 0; i + 1 < ns; i++)
        if (try_pair(t, (int32_t)i)) return -ENOMEM;
    while (t->heap_n) {
        cand c = heap_pop(t);
        sym *l = &t->syms[c.pos];
        if (!l->alive || l->next < 0) continue;
        sym *r = &t->syms[l->next];
        const pair_slot *m = merge_get(t, l->id, r->id);
        if (!m || m->id != c.id) continue; /* stale */
        l->id = c.id;
        r->alive = 0;
        l->next = r->next;
        if (r->next >= 0) t->syms[r->next].prev = c.pos;
        if (l->prev >= 0 && try_pair(t, l->prev)) return -ENOMEM;
        if (try_pair(t, c.pos)) return -ENOMEM;
    }
    for (int32_t i = 0; i >= 0; i = t->syms[i].next)
        if (ids_push(out, t->syms[i].id)) return -ENOMEM;
    return 0;
}

static int normalize(rb_tok *t, const char *s, size_t n, rb_buf *out)
{
    rb_buf_reset(out);
    if (rb_buf_add(out, s, n)) return -ENOMEM;
    rb_buf tmp = {0};
    for (int i = 0; i < t->n_norm; i++) {
        const norm_op *op = &t->norm[i];
        rb_buf_reset(&tmp);
        if (op->kind == N_PREPEND) {
            if (out->len == 0) continue;
            if (rb_buf_add(&tmp, op->a, op->alen) || rb_buf_add(&tmp, out->data, out->len))
                goto nomem;
        } else {
            for (size_t j = 0; j < out->len;) {
                if (j + op->alen <= out->len && memcmp(out->data + j, op->a, op->alen) == 0) {
                    if (rb_buf_add(&tmp, op->b, op->blen)) goto nomem;
                    j += op->alen;
                } else {
                    if (rb_buf_add(&tmp, out->data + j, 1)) goto nomem;
                    j++;
                }
            }
        }
        rb_buf x = *out;
        *out = tmp;
        tmp = x;
    }
    rb_buf_free(&tmp);
    return 0;
nomem:
    rb_buf_free(&tmp);
    return -ENOMEM;
}

/* A stretch of text between added tokens: normalized, pre-tokenized, BPE. */
static int encode_segment(rb_tok *t, const char *s, size_t n, int first_seg, rb_tok_ids *out)
{
    if (n == 0) return 0;
    if (normalize(t, s, n, &t->seg)) return -ENOMEM;
    pieces *in = &t->pa, *nx = &t->pb;
    rb_buf_reset(&in->text);
    in->n = 0;
    if (rb_buf_add(&in->text, t->seg.data, t->seg.len) || pieces_add(in, 0, t->seg.len))
        return -ENOMEM;
    for (int i = 0; i < t->n_pre; i++) {
        if (pre_step(t, &t->pre[i], in, nx, first_seg)) return -ENOMEM;
        pieces *x = in;
        in = nx;
        nx = x;
    }
    for (size_t i = 0; i < in->n; i++)
        if (bpe(t, in->text.data + in->p[i].off, in->p[i].len, out)) return -ENOMEM;
    return 0;
}

int rb_tok_encode(rb_tok *t, const char *text, size_t len, int add_special, rb_tok_ids *out)
{
    rb_buf_reset(&t->clean);
    if (rb_utf8_sanitize(text, len, &t->clean) || rb_buf_add(&t->clean, "", 1)) return -ENOMEM;
    const char *s = t->clean.data;
    size_t n = t->clean.len - 1, start = 0;
    if (add_special)
        for (int i = 0; i < t->n_post_pre; i++)
            if (ids_push(out, t->post_pre[i])) return -ENOMEM;
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        for (int32_t k = t->first_added[(unsigned char)s[i]]; k >= 0; k = t->added_next[k]) {
            const added_tok *a = &t->added[k];
            if (a->len > n - i || memcmp(s + i, t->pool + a->off, a->len) != 0) continue;
            if (encode_segment(t, s + start, i - start, first, out) || ids_push(out, a->id))
                return -ENOMEM;
            first = 0;
            i += a->len - 1;
            start = i + 1;
            break;
        }
    }
    if (encode_segment(t, s + start, n - start, first, out)) return -ENOMEM;
    if (add_special)
        for (int i = 0; i < t->n_post_post; i++)
            if (ids_push(out, t->post_post[i])) return -ENOMEM;
    return 0;
}

int64_t rb_tok_count(rb_tok *t, const char *text, size_t len)
{
    rb_tok_ids ids = {0};
    int rc = rb_tok_encode(t, text, len, 0, &ids);
    int64_t n = rc ? -1 : (int64_t)ids.n;
    rb_tok_ids_free(&ids);
    return n;
}

/* ---- decoding --------------------------------------------------------- */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int rb_tok_decode(const rb_tok *t, const int32_t *ids, size_t n, rb_buf *out)
{
    size_t start = out->len;
    int inverse[512];
    if (t->dec_byte_level) {
        for (int i = 0; i < 512; i++)
            inverse[i] = -1;
        for (int b = 0; b < 256; b++)
            inverse[byte_char(b)] = b;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || id >= t->n_ids || t->kind[id] == K_HOLE) continue;
        const char *s = t->pool + t->id_off[id];
        size_t len = t->id_len[id];
        if (t->kind[id] >= K_ADDED) {
            if (rb_buf_add(out, s, len)) return -ENOMEM;
        } else if (t->dec_byte_level) {
            for (size_t j = 0; j < len;) {
                uint32_t c;
                j += get_utf8((const unsigned char *)s + j, len - j, &c);
                char b = (char)(c < 512 && inverse[c] >= 0 ? inverse[c] : '?');
                if (rb_buf_add(out, &b, 1)) return -ENOMEM;
            }
        } else if (len == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>' && hexval(s[3]) >= 0 &&
                   hexval(s[4]) >= 0) {
            char b = (char)(hexval(s[3]) * 16 + hexval(s[4]));
            if (rb_buf_add(out, &b, 1)) return -ENOMEM;
        } else {
            for (size_t j = 0; j < len; j++) {
                if (j + 3 <= len && memcmp(s + j, "\xe2\x96\x81", 3) == 0) {
                    if (rb_buf_add(out, " ", 1)) return -ENOMEM;
                    j += 2;
                } else if (rb_buf_add(out, s + j, 1)) {
                    return -ENOMEM;
                }
            }
        }
    }
    for (int k = 0; k < t->dec_strip && start < out->len && out->data[start] == ' '; k++) {
        memmove(out->data + start, out->data + start + 1, out->len - start - 1);
        out->len--;
    }
    return 0;
}
