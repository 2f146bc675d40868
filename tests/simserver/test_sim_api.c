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
 * marked; its no-op values (null, false, 0, "", [], {}; 1 for n and best_of)
 * are not. */
static void unhonoured_parameters_are_marked_unless_no_ops(void **state)
{
    sim_req_spec s;
    sim_api_error e;
    assert_int_equal(
        parse("{\"prompt\":\"a b\",\"max_tokens\":3,\"n\":2,\"stop\":[\"x\"],"
              "\"logprobs\":true,\"top_logprobs\":0,\"best_of\":1,\"min_tokens\":0,"
              "\"response_format\":{\"type\":\"json_object\"},\"tools\":[],"
              "\"guided_regex\":\"\",\"logit_bias\":{},\"use_beam_search\":false,"
              "\"stop_token_ids\":null,\"prompt_logprobs\":1,\"guided_choice\":[\"y\"]}",
              0, &s, &e),
        0);
    uint32_t want = 1u << SIM_IGN_N | 1u << SIM_IGN_STOP | 1u << SIM_IGN_LOGPROBS |
                    1u << SIM_IGN_RESPONSE_FORMAT | 1u << SIM_IGN_PROMPT_LOGPROBS |
                    1u << SIM_IGN_GUIDED_CHOICE;
    assert_int_equal(s.ignored, want);
    assert_int_equal(s.max_tokens, 3); /* served as asked, one sequence */
    sim_req_spec_free(&s);
    assert_int_equal(parse("{\"prompt\":\"a\",\"n\":1,\"best_of\":3,\"stop\":\"\\n\","
                           "\"min_tokens\":4,\"guided_json\":{\"a\":1},\"tools\":[{}],"
                           "\"use_beam_search\":true,\"stop_token_ids\":[2],\"top_logprobs\":5,"
                           "\"logit_bias\":{\"1\":2},\"guided_regex\":\"a+\"}",
                           0, &s, &e),
                     0);
    assert_int_equal(s.ignored, 1u << SIM_IGN_BEST_OF | 1u << SIM_IGN_STOP |
                                    1u << SIM_IGN_MIN_TOKENS | 1u << SIM_IGN_GUIDED_JSON |
                                    1u << SIM_IGN_TOOLS | 1u << SIM_IGN_USE_BEAM_SEARCH |
                                    1u << SIM_IGN_STOP_TOKEN_IDS | 1u << SIM_IGN_TOP_LOGPROBS |
                                    1u << SIM_IGN_LOGIT_BIAS | 1u << SIM_IGN_GUIDED_REGEX);
    sim_req_spec_free(&s);
    assert_int_equal(parse("{\"prompt\":\"a\"}", 0, &s, &e), 0);
    assert_int_equal(s.ignored, 0);
    sim_req_spec_free(&s);
    assert_string_equal(sim_ignored_param_name(SIM_IGN_N), "n");
    assert_string_equal(sim_ignored_param_name(SIM_IGN_USE_BEAM_SEARCH), "use_beam_search");
    assert_string_equal(sim_ignored_param_name(SIM_IGN_COUNT), "?");
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
        cmocka_unit_test(tokenize_by_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
