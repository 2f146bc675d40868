/* rb_text: see rb_text.h. */
#include "rb_text.h"

#include <stdarg.h>
#include <stdio.h>

int64_t rb_count_words(const char *s, size_t n)
{
    int64_t words = 0;
    int in = 0;
    for (size_t i = 0; i < n; i++) {
        int w = !rb_is_space((unsigned char)s[i]);
        words += w && !in;
        in = w;
    }
    return words;
}

void rb_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
