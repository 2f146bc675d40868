/* Unit tests for rb_tok on two small hand-made tokenizer.json files, built
 * here: a byte-level BPE (GPT-2's byte characters, ids = byte values, a few
 * merges whose ranks decide the result, one added special token) and a
 * SentencePiece-style BPE (Prepend/Replace normalizers, byte fallback, a
 * TemplateProcessing BOS). Each expected id list is worked out by hand from
 * the merges. Bad files and names fail with -EINVAL or -ENOENT and say why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb_buf.h"
#include "rb_tok.h"

/* GPT-2's printable character for byte b, as UTF-8 into o; its length. */
static size_t byte_char(int b, char *o)
{
    int c = b, n = 0;
    if (!((b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff))) {
        for (int i = 0; i < b; i++)
            if (!((i >= '!' && i <= '~') || (i >= 0xa1 && i <= 0xac) || (i >= 0xae && i <= 0xff)))
                n++;
        c = 256 + n;
    }
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    o[0] = (char)(0xc0 | (c >> 6));
    o[1] = (char)(0x80 | (c & 0x3f));
    return 2;
}

static void add_json_str(rb_buf *b, const char *s, size_t n)
{
    rb_buf_add(b, "\"", 1);
    rb_buf_json_bytes(b, s, n);
    rb_buf_add(b, "\"", 1);
}

static char *byte_level_json(void)
{
    rb_buf b = {0};
    rb_buf_puts(&b, "{\"version\":\"1.0\",\"added_tokens\":[{\"id\":300,\"content\":\"<|x|>\","
                    "\"special\":true}],\"normalizer\":null,"
                    "\"pre_tokenizer\":{\"type\":\"ByteLevel\",\"add_prefix_space\":false,"
                    "\"use_regex\":true},\"decoder\":{\"type\":\"ByteLevel\"},"
                    "\"model\":{\"type\":\"BPE\",\"vocab\":{");
    char c[4], num[32];
    for (int i = 0; i < 256; i++) {
        size_t n = byte_char(i, c);
        if (i) rb_buf_puts(&b, ",");
        add_json_str(&b, c, n);
        snprintf(num, sizeof num, ":%d", i);
        rb_buf_puts(&b, num);
    }
    rb_buf_puts(&b,
                ",\"he\":256,\"ll\":257,\"hell\":258,\"hello\":259,\"\xc4\xa0w\":260,\"or\":261,"
                "\"\xc4\xa0wor\":262,\"\xc4\xa0worl\":263,\"\xc4\xa0world\":264,\"ab\":265,"
                "\"bc\":266},\"merges\":[\"h e\",\"l l\",\"he ll\",\"hell o\",\"\xc4\xa0 w\","
                "[\"o\",\"r\"],\"\xc4\xa0w or\",\"\xc4\xa0wor l\",\"\xc4\xa0worl d\",\"b c\","
                "\"a b\"]}}");
    char *s;
    assert_int_equal(rb_buf_take(&b, &s, NULL), 0);
    return s;
}

static char *sp_json(void)
{
    rb_buf b = {0};
    rb_buf_puts(&b, "{\"added_tokens\":[{\"id\":0,\"content\":\"<unk>\",\"special\":true},"
                    "{\"id\":1,\"content\":\"<s>\",\"special\":true},"
                    "{\"id\":2,\"content\":\"</s>\",\"special\":true}],"
                    "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":["
                    "{\"type\":\"Prepend\",\"prepend\":\"\xe2\x96\x81\"},{\"type\":\"Replace\","
                    "\"pattern\":{\"String\":\" \"},\"content\":\"\xe2\x96\x81\"}]},"
                    "\"pre_tokenizer\":null,"
                    "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":["
                    "{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},{\"Sequence\":{\"id\":\"A\","
                    "\"type_id\":0}}],\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[1]}}},"
                    "\"decoder\":{\"type\":\"Sequence\",\"decoders\":[{\"type\":\"Replace\","
                    "\"pattern\":{\"String\":\"\xe2\x96\x81\"},\"content\":\" \"},"
                    "{\"type\":\"ByteFallback\"},{\"type\":\"Fuse\"},{\"type\":\"Strip\","
                    "\"content\":\" \",\"start\":1,\"stop\":0}]},"
                    "\"model\":{\"type\":\"BPE\",\"unk_token\":\"<unk>\",\"fuse_unk\":true,"
                    "\"byte_fallback\":true,\"vocab\":{\"<unk>\":0,\"<s>\":1,\"</s>\":2");
    char num[32];
    for (int i = 0; i < 256; i++) {
        snprintf(num, sizeof num, ",\"<0x%02X>\":%d", i, 3 + i);
        rb_buf_puts(&b, num);
    }
    rb_buf_puts(&b, ",\"\xe2\x96\x81\":259,\"a\":260,\"b\":261,\"\xe2\x96\x81"
                    "a\":262,\"ab\":263,\"\xe2\x96\x81"
                    "ab\":264},\"merges\":[\"\xe2\x96\x81 a\",\"a b\",\"\xe2\x96\x81"
                    "a b\"]}}");
    char *s;
    assert_int_equal(rb_buf_take(&b, &s, NULL), 0);
    return s;
}

static rb_tok *load(char *json)
{
    rb_tok *t;
    char err[512];
    int rc = rb_tok_parse(json, strlen(json), &t, err, sizeof err);
    if (rc) fail_msg("parse: %s", err);
    free(json);
    return t;
}

static void expect_ids(rb_tok *t, const char *text, size_t len, int special, const int32_t *want,
                       size_t n)
{
    rb_tok_ids ids = {0};
    assert_int_equal(rb_tok_encode(t, text, len, special, &ids), 0);
    char got[512] = "";
    for (size_t i = 0; i < ids.n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", (int)ids.v[i]);
    if (ids.n != n) fail_msg("'%s': got%s (%zu ids), want %zu", text, got, ids.n, n);
    for (size_t i = 0; i < n; i++)
        if (ids.v[i] != want[i])
            fail_msg("'%s': got%s; id %zu should be %d", text, got, i, want[i]);
    rb_tok_ids_free(&ids);
}

#define IDS(...) ((const int32_t[]){__VA_ARGS__}), sizeof((const int32_t[]){__VA_ARGS__}) / 4

static void expect_decode(rb_tok *t, const int32_t *ids, size_t n, const char *want)
{
    rb_buf b = {0};
    assert_int_equal(rb_tok_decode(t, ids, n, &b), 0);
    assert_int_equal(b.len, strlen(want));
    assert_memory_equal(b.data, want, b.len);
    rb_buf_free(&b);
}

static void byte_level_bpe(void **state)
{
    (void)state;
    rb_tok *t = load(byte_level_json());
    expect_ids(t, "hello world", 11, 0, IDS(259, 264));
    expect_ids(t, "hello", 5, 1, IDS(259)); /* no post-processor: nothing added */
    expect_ids(t, "hellx", 5, 0, IDS(258, 'x'));
    /* the regex: "hello", " ", " world" (\s+(?!\S) keeps the last space) */
    expect_ids(t, "hello  world", 12, 0, IDS(259, 32, 264));
    /* rank decides: "b c" (rank 9) before "a b" (rank 10) */
    expect_ids(t, "abc", 3, 0, IDS('a', 266));
    expect_ids(t, "ab", 2, 0, IDS(265));
    /* the added token is split out first, special or not */
    expect_ids(t, "ab<|x|>hello", 12, 0, IDS(265, 300, 259));
    expect_ids(t, "<|x|", 4, 0, IDS('<', '|', 'x', '|'));
    /* invalid UTF-8 becomes U+FFFD, whose bytes are EF BF BD */
    expect_ids(t, "\xff", 1, 0, IDS(0xef, 0xbf, 0xbd));
    expect_ids(t, "a\xe6\x97", 3, 0, IDS('a', 0xef, 0xbf, 0xbd));
    expect_ids(t, "", 0, 0, NULL, 0);
    expect_decode(t, IDS(259, 32, 264, 300), "hello  world<|x|>");
    expect_decode(t, IDS(0xc3, 0xa9), "\xc3\xa9");
    assert_int_equal(rb_tok_vocab_size(t), 301);
    assert_true(rb_tok_is_special(t, 300));
    assert_true(rb_tok_is_special(t, 280)); /* a hole */
    assert_false(rb_tok_is_special(t, 264));
    size_t n;
    const int32_t *normal = rb_tok_normal_ids(t, &n);
    assert_int_equal(n, 267);
    assert_int_equal(normal[266], 266);
    /* " hello" has no merge with its space: hello, Ġworld, Ġ, hello */
    assert_int_equal(rb_tok_count(t, "hello world hello", 17), 4);
    rb_tok_free(t);
}

static void sentencepiece_bpe(void **state)
{
    (void)state;
    rb_tok *t = load(sp_json());
    expect_ids(t, "ab", 2, 0, IDS(264));
    /* "▁a▁é": é is not in the vocabulary: its two bytes */
    expect_ids(t, "a \xc3\xa9", 4, 0, IDS(262, 259, 3 + 0xc3, 3 + 0xa9));
    expect_ids(t, "a \xc3\xa9", 4, 1, IDS(1, 262, 259, 3 + 0xc3, 3 + 0xa9));
    /* each stretch between added tokens is normalized on its own */
    expect_ids(t, "a</s>b", 6, 0, IDS(262, 2, 259, 261));
    expect_decode(t, IDS(262, 259, 3 + 0xc3, 3 + 0xa9), "a \xc3\xa9");
    expect_decode(t, IDS(1, 264), "<s> ab");
    assert_true(rb_tok_is_special(t, 1));
    rb_tok_free(t);
}

static void expect_bad(const char *json, const char *want)
{
    rb_tok *t = NULL;
    char err[512] = "";
    assert_int_equal(rb_tok_parse(json, strlen(json), &t, err, sizeof err), -EINVAL);
    assert_null(t);
    if (!strstr(err, want)) fail_msg("message '%s' lacks '%s'", err, want);
}

static void bad_files_say_why(void **state)
{
    (void)state;
    char *full = byte_level_json();
    full[strlen(full) / 2] = 0; /* truncated */
    expect_bad(full, "not valid JSON");
    free(full);
    expect_bad("{\"model\":{\"type\":\"Unigram\",\"vocab\":[]}}",
               "type 'Unigram' is not supported");
    expect_bad("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}}}", "WordPiece");
    expect_bad("[1,2,3]", "no 'model'");
    expect_bad("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[\"a b\"]}}",
               "merges[0]");
    expect_bad("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":-1},\"merges\":[]}}", "vocab");
    expect_bad("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},"
               "\"pre_tokenizer\":{\"type\":\"Split\",\"pattern\":{\"Regex\":\"(\"},"
               "\"behavior\":\"Isolated\"}}",
               "does not compile");
    expect_bad("{\"model\":{\"type\":\"BPE\",\"vocab\":{\"a\":0},\"merges\":[]},"
               "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
               "BertPreTokenizer");
    expect_bad("\x01\x02garbage\xff", "not valid JSON");
}

static void files_and_names(void **state)
{
    (void)state;
    char dir[] = "/tmp/rb_tok_test.XXXXXX", path[512], err[1024];
    assert_non_null(mkdtemp(dir));
    rb_tok *t = NULL;
    /* 1 GiB of garbage (a sparse file): refused by its size, not read */
    snprintf(path, sizeof path, "%s/big.json", dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)1 << 30), 0);
    close(fd);
    assert_int_equal(rb_tok_open(path, &t, err, sizeof err), -EINVAL);
    assert_non_null(strstr(err, "256 MiB"));
    unlink(path);
    /* a model id in a hub cache laid out as the hub lays it out */
    char snap[600];
    snprintf(path, sizeof path, "%s/hub/models--org--tiny/snapshots/abc123", dir);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "mkdir -p %s %s/hub/models--org--tiny/refs", path, dir);
    assert_int_equal(system(cmd), 0);
    snprintf(snap, sizeof snap, "%s/tokenizer.json", path);
    char *json = byte_level_json();
    FILE *f = fopen(snap, "w");
    fputs(json, f);
    fclose(f);
    free(json);
    snprintf(path, sizeof path, "%s/hub/models--org--tiny/refs/main", dir);
    f = fopen(path, "w");
    fputs("abc123\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s", dir);
    setenv("HF_HOME", path, 1);
    unsetenv("HF_HUB_CACHE");
    char found[4096];
    assert_int_equal(rb_tok_resolve("org/tiny", found, sizeof found, err, sizeof err), 0);
    assert_string_equal(found, snap);
    assert_int_equal(rb_tok_open("org/tiny", &t, err, sizeof err), 0);
    expect_ids(t, "hello", 5, 0, IDS(259));
    rb_tok_free(t);
    /* a directory holding tokenizer.json */
    snprintf(path, sizeof path, "%s/hub/models--org--tiny/snapshots/abc123", dir);
    assert_int_equal(rb_tok_resolve(path, found, sizeof found, err, sizeof err), 0);
    assert_int_equal(rb_tok_resolve("org/absent", found, sizeof found, err, sizeof err), -ENOENT);
    assert_non_null(strstr(err, "nothing is downloaded"));
    assert_non_null(strstr(err, "org/absent"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static void utf8_sanitize(void **state)
{
    (void)state;
    struct {
        const char *in, *out;
    } cases[] = {
        {"ok \xc3\xa9", "ok \xc3\xa9"},
        {"\x80", "\xef\xbf\xbd"},
        {"\xe6\x97", "\xef\xbf\xbd"},                             /* truncated: one U+FFFD */
        {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                 /* overlong: two */
        {"\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"}, /* a surrogate: three */
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
        {"\xf0\x9f\x98x", "\xef\xbf\xbdx"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        rb_buf b = {0};
        assert_int_equal(rb_utf8_sanitize(cases[i].in, strlen(cases[i].in), &b), 0);
        if (b.len != strlen(cases[i].out) || memcmp(b.data, cases[i].out, b.len) != 0)
            fail_msg("case %zu: wrong replacement", i);
        rb_buf_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(byte_level_bpe),    cmocka_unit_test(sentencepiece_bpe),
        cmocka_unit_test(bad_files_say_why), cmocka_unit_test(files_and_names),
        cmocka_unit_test(utf8_sanitize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
