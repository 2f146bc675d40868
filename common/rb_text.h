/* rb_text: the suite's one prompt-token counting rule, shared by simserver
 * (which counts what it receives) and loadgen (which builds prompts of an
 * exact length): a token is a maximal run of non-whitespace bytes. Pure. */
#ifndef RB_TEXT_H
#define RB_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Whitespace is ' ', '\t', '\n', '\r', '\v', '\f' (bytes, no locale). */
static inline int rb_is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

int64_t rb_count_words(const char *s, size_t n);

#endif
