/* lg_chunk: decodes one OpenAI streaming event (the JSON of a "data:" line)
 * or a whole non-streamed response body into the few facts the load
 * generator needs. Pure: no I/O. Works for /v1/completions (choices[].text)
 * and /v1/chat/completions (choices[].delta.content, choices[].message). */
#ifndef LG_CHUNK_H
#define LG_CHUNK_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    LG_CHUNK_CONTENT = 1 << 0, /* carries non-empty generated text */
    LG_CHUNK_ROLE = 1 << 1,    /* a chat role chunk (no content) */
    LG_CHUNK_USAGE = 1 << 2,   /* carries usage */
    LG_CHUNK_FINISH = 1 << 3,  /* carries a finish_reason */
    LG_CHUNK_DONE = 1 << 4,    /* the literal "[DONE]" */
    LG_CHUNK_ERROR = 1 << 5,   /* an {"error": ...} object */
} lg_chunk_flags;

typedef struct lg_chunk {
    unsigned flags;
    size_t content_bytes;      /* bytes of generated text in this chunk */
    int64_t prompt_tokens;     /* from usage, else -1 */
    int64_t completion_tokens; /* from usage, else -1 */
    int64_t cached_tokens;     /* usage.prompt_tokens_details.cached_tokens, else -1 */
    char finish_reason[16];    /* "" when absent */
} lg_chunk;

/* Returns 0, or -EBADMSG when the data is not JSON or not an object of the
 * expected shape (a malformed chunk). "[DONE]" returns 0 with LG_CHUNK_DONE. */
int lg_chunk_decode(const char *data, size_t len, lg_chunk *out);
/* The same, and the chunk's generated text appended to text (when not NULL)
 * as the inside of a JSON string: the server's own escapes as they came
 * (the scanner's subset), or re-escaped by rb_buf_json_bytes (cJSON's path),
 * so text stays valid inside a JSON string literal. A chunk that is not
 * decoded adds nothing. text's cap (rb_buf's max) bounds it: past it the
 * buffer's sticky -EMSGSIZE says the text was cut (rb_buf.h). */
typedef struct rb_buf rb_buf;
int lg_chunk_decode_text(const char *data, size_t len, lg_chunk *out, rb_buf *text);
/* The same with cJSON only: the reference that lg_chunk_decode's fast path
 * (a scanner for plain server JSON) must agree with; for tests and fuzzing. */
int lg_chunk_decode_json(const char *data, size_t len, lg_chunk *out);

/* Parses simserver's ground-truth comments (see README, "Ground truth"):
 * "t=<ns>" sets *stamp_ns and returns 1; the final JSON comment
 * {"queue_ns":..,"prefill_ns":..,"decode_ns":..,"cached_tokens":..} fills
 * truth and returns 2; anything else returns 0. */
typedef struct lg_truth {
    int64_t queue_ns, prefill_ns, decode_ns, cached_tokens;
} lg_truth;
int lg_chunk_comment(const char *text, size_t len, int64_t *stamp_ns, lg_truth *truth);
/* The same truth from a non-streamed response's header line
 * ("X-Sim-Queue-Ns: 123\r\n", -Prefill-Ns, -Decode-Ns, -Cached-Tokens; names
 * case-insensitive): sets that field and returns 1, else 0. */
int lg_chunk_truth_header(const char *line, size_t len, lg_truth *truth);

#endif
