/* rb_text: see rb_text.h. */
#include "rb_text.h"

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
