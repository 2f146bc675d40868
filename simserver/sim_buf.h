/* sim_buf: a growable byte buffer, the one output type of simserver's pure
 * renderers. A buffer is owned by whoever declared it; sim_buf_free releases
 * it. Not thread-safe; allocation failure aborts (the server cannot answer
 * without memory, and every buffer is bounded by the request limits). */
#ifndef SIM_BUF_H
#define SIM_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct sim_buf {
    char *data;
    size_t len;
    size_t cap;
} sim_buf;

void sim_buf_reserve(sim_buf *b, size_t extra);
void sim_buf_append(sim_buf *b, const void *p, size_t n);
void sim_buf_puts(sim_buf *b, const char *s);
void sim_buf_printf(sim_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_buf_u64(sim_buf *b, uint64_t v);
void sim_buf_i64(sim_buf *b, int64_t v);
/* Appends s as the inside of a JSON string: quotes, backslashes and control
 * bytes are escaped, invalid UTF-8 becomes U+FFFD, so the output is valid
 * JSON whatever bytes a prompt held. */
void sim_buf_json_str(sim_buf *b, const char *s, size_t n);
void sim_buf_free(sim_buf *b);

#endif
