/* fuzz_dataset: the ShareGPT and trace parsers on any bytes. What they accept
 * must hold their promises (counted lengths, sorted relative times), and a
 * parsed trace is replayed through the schedule. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_dataset.h"
#include "lg_sched.h"

static void check_sharegpt(const char *s, size_t len)
{
    lg_dataset d;
    char err[256];
    if (lg_dataset_sharegpt_parse(s, len, len % 7, &d, err, sizeof err) == 0) {
        if (d.n == 0 || (len % 7 && d.n > len % 7)) abort();
        for (size_t i = 0; i < d.n; i++) {
            const lg_prompt *p = &d.items[i];
            if (p->input_tokens < 1 || p->output_tokens < 1 ||
                lg_count_tokens(p->text, strlen(p->text)) != p->input_tokens)
                abort();
        }
    } else if (d.n || d.items) {
        abort();
    }
    lg_dataset_free(&d);
}

static void check_trace(const char *s, size_t len)
{
    lg_trace_row *rows;
    size_t n;
    char err[256];
    if (lg_trace_parse(s, len, &rows, &n, err, sizeof err) != 0) {
        if (rows || n) abort();
        return;
    }
    if (n == 0 || rows[0].t_ns != 0) abort();
    for (size_t i = 0; i < n; i++)
        if (rows[i].input_tokens < 1 || rows[i].output_tokens < 1 ||
            (i && rows[i].t_ns < rows[i - 1].t_ns))
            abort();
    lg_sched_spec sp = {.trace = rows, .n_trace = n, .trace_speedup = 1 + (double)(len % 5)};
    lg_sched *sc = lg_sched_new(&sp, err, sizeof err);
    if (!sc) abort(); /* a parsed trace is always a valid schedule */
    lg_arrival a;
    int64_t prev = 0;
    size_t k = 0;
    while (lg_sched_next(sc, &a)) {
        if (a.index != (int64_t)k || a.t_ns < prev || a.input_tokens != rows[k].input_tokens)
            abort();
        prev = a.t_ns;
        k++;
    }
    if (k != n) abort();
    lg_sched_free(sc);
    free(rows);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    check_sharegpt((const char *)in, size);
    check_trace((const char *)in, size);
    return 0;
}
