/* rb_text: small text helpers shared by the programs: the suite's one
 * prompt-token counting rule (simserver counts what it receives, loadgen
 * builds prompts of an exact length: a token is a maximal run of
 * non-whitespace bytes), and filling a caller's error buffer. Pure. */
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

/* printf into err[0..errlen) when err is not NULL and errlen > 0. */
void rb_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
