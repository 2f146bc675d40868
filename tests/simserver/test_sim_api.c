/* Unit tests for sim_api: routing, the token-counting rule, and validation
 * of request bodies into specs or OpenAI errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <http_parser.h>
#include <stdio.h>
#include <string.h>

#include "sim_api.h"

static const char *const models[] = {"sim-model", "other"};
static const sim_api_limits lim = {.served_models = models, .n_served = 2, .max_model_len = 100};

static int parse(const char *body, int chat, sim_req_spec *s, sim_api_error *e)
{
    return sim_api_parse(body, strlen(body), chat, &lim, s, e);
}

static void routes_by_path_and_method(void **state)
{
    assert_int_equal(sim_api_route(HTTP_POST, "/v1/completions"), SIM_ROUTE_COMPLETIONS);
    assert_int_equal(sim_api_route(HTTP_POST, "/v1/chat/completions"), SIM_ROUTE_CHAT);
    assert_int_equal(sim_api_route(HTTP_GET, "/v1/models"), SIM_ROUTE_MODELS);
    assert_int_equal(sim_api_route(HTTP_GET, "/health"), SIM_ROUTE_HEALTH);
    assert_int_equal(sim_api_route(HTTP_GET, "/metrics"), SIM_ROUTE_METRICS);
    assert_int_equal(sim_api_route(HTTP_GET, "/v1/completions"), SIM_ROUTE_BAD_METHOD);
    assert_int_equal(sim_api_route(HTTP_POST, "/health"), SIM_ROUTE_BAD_METHOD);
    assert_int_equal(sim_api_route(HTTP_GET, "/nope"), SIM_ROUTE_NOT_FOUND);
}

static void words_are_runs_of_non_whitespace(void **state)
{
    assert_int_equal(sim_count_words("", 0), 0);
    assert_int_equal(sim_count_words("   \t\n", 5), 0);
    assert_int_equal(sim_count_words("a", 1), 1);
    assert_int_equal(sim_count_words("  hello,  world!\n x\ty ", 22), 4);
}

static void a_string_prompt_counts_words(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(
        parse("{\"model\":\"other\",\"prompt\":\" the  quick\\nbrown fox \",\"max_tokens\":7,"
              "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true}",
              0, &s, &e),
        0);
    assert_int_equal(s.prompt_tokens, 4);
    assert_int_equal(s.max_tokens, 7);
    assert_true(s.stream);
    assert_true(s.include_usage);
    assert_true(s.ignore_eos);
    assert_string_equal(s.model, "other");
    /* the words are kept in order for echo mode */
    assert_int_equal(s.word_off[2] - s.word_off[1], 5);
    assert_memory_equal(s.words + s.word_off[1], "quick", 5);
    sim_req_spec_free(&s);
}

static void defaults_apply_when_fields_are_absent(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse("{\"prompt\":\"a\"}", 0, &s, &e), 0);
    assert_int_equal(s.max_tokens, SIM_DEFAULT_MAX_TOKENS);
    assert_false(s.stream);
    assert_string_equal(s.model, "sim-model");
    sim_req_spec_free(&s);
}

static void token_ids_count_their_elements(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse("{\"prompt\":[1,2,3,40000,5],\"max_tokens\":1}", 0, &s, &e), 0);
    assert_int_equal(s.prompt_tokens, 5);
    /* distinct ids hash apart, equal ids alike */
    sim_req_spec t;
    assert_int_equal(parse("{\"prompt\":[1,2,3,40000,6],\"max_tokens\":1}", 0, &t, &e), 0);
    assert_int_equal(s.tok_hash[3], t.tok_hash[3]);
    assert_int_not_equal(s.tok_hash[4], t.tok_hash[4]);
    assert_int_not_equal(s.prompt_hash, t.prompt_hash);
    sim_req_spec_free(&s);
    sim_req_spec_free(&t);
}

static void chat_sums_the_words_of_every_message(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(
        parse("{\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
              "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"one two three\"},"
              "{\"type\":\"image_url\",\"image_url\":{\"url\":\"x y\"}}]},"
              "{\"role\":\"assistant\",\"content\":null}],\"max_completion_tokens\":3,\"max_"
              "tokens\":9}",
              1, &s, &e),
        0);
    assert_int_equal(s.prompt_tokens, 5);
    assert_int_equal(s.max_tokens, 3);
    assert_true(s.chat);
    sim_req_spec_free(&s);
}

static void expect_error(const char *body, int chat, int status, const char *param)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse(body, chat, &s, &e), -1);
    assert_int_equal(e.status, status);
    assert_string_equal(e.param, param);
    assert_true(strlen(e.message) > 0);
    assert_null(s.tok_hash);
}

static void bad_bodies_are_400_naming_the_field(void **state)
{
    expect_error("{\"prompt\":\"a\"", 0, 400, "");
    expect_error("[1,2]", 0, 400, "");
    expect_error("{\"max_tokens\":3}", 0, 400, "prompt");
    expect_error("{\"prompt\":7}", 0, 400, "prompt");
    expect_error("{\"prompt\":[]}", 0, 400, "prompt");
    expect_error("{\"prompt\":[1,-2]}", 0, 400, "prompt");
    expect_error("{\"prompt\":[\"a\",\"b\"]}", 0, 400, "prompt");
    expect_error("{\"prompt\":\"a\",\"max_tokens\":0}", 0, 400, "max_tokens");
    expect_error("{\"prompt\":\"a\",\"max_tokens\":-3}", 0, 400, "max_tokens");
    expect_error("{\"prompt\":\"a\",\"max_tokens\":1.5}", 0, 400, "max_tokens");
    expect_error("{\"prompt\":\"a\",\"max_tokens\":\"5\"}", 0, 400, "max_tokens");
    expect_error("{\"prompt\":\"a\",\"max_tokens\":101}", 0, 400, "max_tokens");
    expect_error("{\"prompt\":\"a\",\"stream\":\"yes\"}", 0, 400, "stream");
    expect_error("{\"prompt\":\"a\",\"stream_options\":[]}", 0, 400, "stream_options");
    /* set options without streaming: refused as vLLM does; empty ones pass */
    expect_error("{\"prompt\":\"a\",\"stream_options\":{\"include_usage\":true}}", 0, 400,
                 "stream_options");
    expect_error("{\"prompt\":\"a\",\"stream\":false,\"stream_options\":{\"include_usage\":false}}",
                 0, 400, "stream_options");
    {
        sim_req_spec s;
        sim_api_error e;
        assert_int_equal(parse("{\"prompt\":\"a\",\"stream_options\":{}}", 0, &s, &e), 0);
        sim_req_spec_free(&s);
    }
    expect_error("{\"prompt\":\"a\",\"model\":5}", 0, 400, "model");
    expect_error("{\"messages\":\"hi\"}", 1, 400, "messages");
    expect_error("{\"messages\":[]}", 1, 400, "messages");
    expect_error("{\"messages\":[{\"content\":\"x\"}]}", 1, 400, "messages[0]");
    expect_error("{\"messages\":[{\"role\":\"user\",\"content\":5}]}", 1, 400, "messages[0]");
    expect_error("{\"prompt\":\"a\"}", 1, 400, "messages");
    expect_error("", 0, 400, "");
}

static void prompt_plus_max_tokens_must_fit(void **state)
{
    char body[1024];
    /* 95 words + 5 = 100 fits, + 6 does not */
    char words[600] = "";
    for (int i = 0; i < 95; i++)
        strcat(words, "w ");
    snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"max_tokens\":5}", words);
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse(body, 0, &s, &e), 0);
    assert_int_equal(s.prompt_tokens, 95);
    sim_req_spec_free(&s);
    snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"max_tokens\":6}", words);
    expect_error(body, 0, 400, "prompt");
}

static void an_unknown_model_is_404_model_not_found(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse("{\"model\":\"gpt-9\",\"prompt\":\"a\"}", 0, &s, &e), -1);
    assert_int_equal(e.status, 404);
    assert_string_equal(e.code, "model_not_found");
}

/* /tokenize and /detokenize without a tokenizer: the word rule's tokens
 * (a word's id is its hash: the same word, the same id), and as many words
 * back as ids. */
/* A parameter the simulator does not honour is served as if absent, and
 * marked; its no-op values (null, false, 0, "", [], {}; 1 for best_of) are
 * not. n, stop and logprobs are honoured, so never marked. */
static void unhonoured_parameters_are_marked_unless_no_ops(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(
        parse("{\"prompt\":\"a b\",\"max_tokens\":3,\"n\":2,\"stop\":[\"x\"],"
              "\"logprobs\":1,\"top_logprobs\":3,\"best_of\":1,\"min_tokens\":0,"
              "\"response_format\":{\"type\":\"json_object\"},\"tools\":[],"
              "\"guided_regex\":\"\",\"logit_bias\":{},\"use_beam_search\":false,"
              "\"stop_token_ids\":null,\"prompt_logprobs\":1,\"guided_choice\":[\"y\"]}",
              0, &s, &e),
        0);
    uint32_t want =
        1u << SIM_IGN_RESPONSE_FORMAT | 1u << SIM_IGN_PROMPT_LOGPROBS | 1u << SIM_IGN_GUIDED_CHOICE;
    assert_int_equal(s.ignored, want);
    assert_int_equal(s.max_tokens, 3);
    assert_int_equal(s.n, 2); /* honoured */
    sim_req_spec_free(&s);
    assert_int_equal(parse("{\"prompt\":\"a\",\"n\":1,\"best_of\":3,\"stop\":\"\\n\","
                           "\"min_tokens\":4,\"guided_json\":{\"a\":1},\"tools\":[{}],"
                           "\"use_beam_search\":true,\"stop_token_ids\":[2],"
                           "\"logit_bias\":{\"1\":2},\"guided_regex\":\"a+\"}",
                           0, &s, &e),
                     0);
    assert_int_equal(s.ignored, 1u << SIM_IGN_BEST_OF | 1u << SIM_IGN_MIN_TOKENS |
                                    1u << SIM_IGN_GUIDED_JSON | 1u << SIM_IGN_TOOLS |
                                    1u << SIM_IGN_USE_BEAM_SEARCH | 1u << SIM_IGN_STOP_TOKEN_IDS |
                                    1u << SIM_IGN_LOGIT_BIAS | 1u << SIM_IGN_GUIDED_REGEX);
    sim_req_spec_free(&s);
    assert_int_equal(parse("{\"prompt\":\"a\"}", 0, &s, &e), 0);
    assert_int_equal(s.ignored, 0);
    sim_req_spec_free(&s);
    assert_string_equal(sim_ignored_param_name(SIM_IGN_BEST_OF), "best_of");
    assert_string_equal(sim_ignored_param_name(SIM_IGN_USE_BEAM_SEARCH), "use_beam_search");
    assert_string_equal(sim_ignored_param_name(SIM_IGN_COUNT), "?");
    for (int p = 0; p < SIM_IGN_COUNT; p++) {
        assert_string_not_equal(sim_ignored_param_name(p), "n");
        assert_string_not_equal(sim_ignored_param_name(p), "stop");
        assert_string_not_equal(sim_ignored_param_name(p), "logprobs");
        assert_string_not_equal(sim_ignored_param_name(p), "top_logprobs");
    }
}

/* The sampling parameters the simulator honours, with their defaults. */
static void n_stop_and_logprobs_are_parsed(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse("{\"prompt\":\"a\"}", 0, &s, &e), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(s.n_stop, 0);
    assert_null(s.stop_buf);
    assert_false(s.logprobs);
    assert_false(s.continuous_usage);
    assert_false(sim_req_spec_has_choices(&s));
    sim_req_spec_free(&s);

    assert_int_equal(
        parse("{\"prompt\":\"a\",\"n\":128,\"stop\":[\"ab\",\"\\u00e9 x\",\"c\",\"d\"],"
              "\"include_stop_str_in_output\":true,\"logprobs\":0,\"seed\":-5,"
              "\"temperature\":0.7}",
              0, &s, &e),
        0);
    assert_int_equal(s.n, 128);
    assert_int_equal(s.n_stop, 4);
    assert_string_equal(s.stop[0], "ab");
    assert_string_equal(s.stop[1], "\xc3\xa9 x"); /* decoded, in bytes */
    assert_int_equal(s.stop_len[1], 4);
    assert_string_equal(s.stop[3], "d");
    assert_true(s.include_stop_str);
    assert_true(s.logprobs); /* logprobs 0: the chosen token's only */
    assert_int_equal(s.top_logprobs, 0);
    assert_true(s.has_seed);
    assert_int_equal((int64_t)s.seed, -5);
    assert_true(sim_req_spec_has_choices(&s));
    sim_req_spec_free(&s);
    assert_null(s.stop_buf);

    /* A bare string; completions' logprobs as vLLM reads a boolean. */
    assert_int_equal(
        parse("{\"prompt\":\"a\",\"stop\":\"END\",\"logprobs\":true,\"n\":null}", 0, &s, &e), 0);
    assert_int_equal(s.n_stop, 1);
    assert_string_equal(s.stop[0], "END");
    assert_false(s.include_stop_str);
    assert_int_equal(s.top_logprobs, 1);
    assert_int_equal(s.n, 1);
    sim_req_spec_free(&s);

    /* Chat: a boolean and a count; top_logprobs 0 with logprobs false is fine. */
    assert_int_equal(parse("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                           "\"logprobs\":true,\"top_logprobs\":20}",
                           1, &s, &e),
                     0);
    assert_true(s.logprobs);
    assert_int_equal(s.top_logprobs, 20);
    sim_req_spec_free(&s);
    assert_int_equal(parse("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],"
                           "\"logprobs\":false,\"top_logprobs\":0}",
                           1, &s, &e),
                     0);
    assert_false(s.logprobs);
    assert_false(sim_req_spec_has_choices(&s));
    sim_req_spec_free(&s);

    /* continuous_usage_stats counts only with include_usage, as in vLLM. */
    assert_int_equal(parse("{\"prompt\":\"a\",\"stream\":true,\"stream_options\":"
                           "{\"continuous_usage_stats\":true}}",
                           0, &s, &e),
                     0);
    assert_false(s.continuous_usage);
    sim_req_spec_free(&s);
    assert_int_equal(parse("{\"prompt\":\"a\",\"stream\":true,\"stream_options\":"
                           "{\"include_usage\":true,\"continuous_usage_stats\":true}}",
                           0, &s, &e),
                     0);
    assert_true(s.continuous_usage);
    assert_true(sim_req_spec_has_choices(&s));
    sim_req_spec_free(&s);
}

/* expect_error, and the message must hold want. */
static void expect_message(const char *body, int chat, const char *param, const char *want)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(parse(body, chat, &s, &e), -1);
    assert_int_equal(e.status, 400);
    assert_string_equal(e.param, param);
    if (!strstr(e.message, want)) fail_msg("message '%s' lacks '%s'", e.message, want);
    assert_null(s.stop_buf);
}

/* Out-of-range values are refused with 400 naming the parameter, as vLLM
 * refuses them. */
static void bad_sampling_values_are_400_naming_the_parameter(void **state)
{
    expect_message("{\"prompt\":\"a\",\"n\":0}", 0, "n", "'n' must be at least 1, got 0");
    expect_message("{\"prompt\":\"a\",\"n\":-2}", 0, "n", "at least 1, got -2");
    expect_message("{\"prompt\":\"a\",\"n\":129}", 0, "n", "'n' must be at most 128, got 129");
    expect_message("{\"prompt\":\"a\",\"n\":2.5}", 0, "n", "'n' must be an integer");
    expect_message("{\"prompt\":\"a\",\"n\":\"2\"}", 0, "n", "'n' must be an integer");
    expect_message("{\"prompt\":\"a\",\"n\":2,\"temperature\":0}", 0, "n", "greedy sampling");
    expect_message("{\"prompt\":\"a\",\"stop\":5}", 0, "stop",
                   "'stop' must be a string or a list of strings");
    expect_message("{\"prompt\":\"a\",\"stop\":[\"x\",null]}", 0, "stop",
                   "a string or a list of strings");
    expect_message("{\"prompt\":\"a\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", 0, "stop",
                   "'stop' takes at most 4 strings, got 5");
    expect_message("{\"prompt\":\"a\",\"stop\":\"\"}", 0, "stop", "cannot contain an empty string");
    expect_message("{\"prompt\":\"a\",\"stop\":[\"x\",\"\"]}", 0, "stop", "empty string");
    char body[600];
    char longstop[SIM_STOP_BYTES_MAX + 2];
    memset(longstop, 'x', sizeof longstop - 1);
    longstop[sizeof longstop - 1] = 0;
    snprintf(body, sizeof body, "{\"prompt\":\"a\",\"stop\":\"%s\"}", longstop);
    expect_message(body, 0, "stop", "at most 256 bytes, got 257");
    expect_message("{\"prompt\":\"a\",\"stop\":\"x\",\"include_stop_str_in_output\":1}", 0,
                   "include_stop_str_in_output", "must be a boolean");
    expect_message("{\"prompt\":\"a\",\"logprobs\":-1}", 0, "logprobs",
                   "'logprobs' must be a non-negative integer, got -1");
    expect_message("{\"prompt\":\"a\",\"logprobs\":21}", 0, "logprobs",
                   "above the maximum allowed, 20");
    expect_message("{\"prompt\":\"a\",\"logprobs\":\"5\"}", 0, "logprobs",
                   "'logprobs' must be an integer");
    expect_message("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"logprobs\":1}", 1,
                   "logprobs", "'logprobs' must be a boolean");
    expect_message("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"top_logprobs\":2}", 1,
                   "top_logprobs", "when using 'top_logprobs', 'logprobs' must be set to true");
    expect_message("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"logprobs\":true,"
                   "\"top_logprobs\":21}",
                   1, "top_logprobs", "above the maximum allowed, 20");
    expect_message("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"logprobs\":true,"
                   "\"top_logprobs\":-1}",
                   1, "top_logprobs", "non-negative");
    expect_message("{\"prompt\":\"a\",\"stream\":true,\"stream_options\":"
                   "{\"include_usage\":true,\"continuous_usage_stats\":\"yes\"}}",
                   0, "continuous_usage_stats", "must be a boolean");
    /* At the edges: accepted. */
    sim_req_spec s;
    sim_api_error e;
    snprintf(body, sizeof body,
             "{\"prompt\":\"a\",\"stop\":\"%.*s\",\"logprobs\":20,\"n\":1,"
             "\"temperature\":0}",
             SIM_STOP_BYTES_MAX, longstop);
    assert_int_equal(parse(body, 0, &s, &e), 0);
    assert_int_equal(s.stop_len[0], SIM_STOP_BYTES_MAX);
    assert_int_equal(s.top_logprobs, 20);
    sim_req_spec_free(&s);
}

static void tokenize_by_words(void **state)
{
    (void)state;
    assert_int_equal(sim_api_route(HTTP_POST, "/tokenize"), SIM_ROUTE_TOKENIZE);
    assert_int_equal(sim_api_route(HTTP_POST, "/detokenize"), SIM_ROUTE_DETOKENIZE);
    assert_int_equal(sim_api_route(HTTP_GET, "/tokenize"), SIM_ROUTE_BAD_METHOD);
    rb_buf b = {0};
    sim_api_error e;
    const char *body = "{\"prompt\": \"one two  one\"}";
    assert_int_equal(sim_api_tokenize(body, strlen(body), 0, &lim, &b, &e), 0);
    int a, c, d;
    assert_int_equal(
        sscanf(b.data, "{\"count\":3,\"max_model_len\":100,\"tokens\":[%d,%d,%d]", &a, &c, &d), 3);
    assert_int_equal(a, d);
    assert_true(a != c);
    rb_buf_reset(&b);
    body = "{\"prompt\": [7, 8]}";
    assert_int_equal(sim_api_tokenize(body, strlen(body), 0, &lim, &b, &e), 0);
    assert_non_null(strstr(b.data, "\"count\":2,"));
    assert_non_null(strstr(b.data, "\"tokens\":[7,8]"));
    rb_buf_reset(&b);
    body = "{\"tokens\": [5, 6, 70]}";
    assert_int_equal(sim_api_tokenize(body, strlen(body), 1, &lim, &b, &e), 0);
    assert_string_equal(b.data, "{\"prompt\":\"5 6 70\"}");
    rb_buf_reset(&b);
    body = "{\"tokens\": [\"x\"]}";
    assert_int_equal(sim_api_tokenize(body, strlen(body), 1, &lim, &b, &e), -1);
    assert_int_equal(e.status, 400);
    assert_string_equal(e.param, "tokens");
    body = "{}";
    assert_int_equal(sim_api_tokenize(body, strlen(body), 0, &lim, &b, &e), -1);
    assert_string_equal(e.param, "prompt");
    rb_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(routes_by_path_and_method),
        cmocka_unit_test(words_are_runs_of_non_whitespace),
        cmocka_unit_test(a_string_prompt_counts_words),
        cmocka_unit_test(defaults_apply_when_fields_are_absent),
        cmocka_unit_test(token_ids_count_their_elements),
        cmocka_unit_test(chat_sums_the_words_of_every_message),
        cmocka_unit_test(bad_bodies_are_400_naming_the_field),
        cmocka_unit_test(prompt_plus_max_tokens_must_fit),
        cmocka_unit_test(an_unknown_model_is_404_model_not_found),
        cmocka_unit_test(unhonoured_parameters_are_marked_unless_no_ops),
        cmocka_unit_test(n_stop_and_logprobs_are_parsed),
        cmocka_unit_test(bad_sampling_values_are_400_naming_the_parameter),
        cmocka_unit_test(tokenize_by_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
