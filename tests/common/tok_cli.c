/* tok_cli: rb_tok from the shell, for the reference comparison and the
 * speed record.
 *   tok_cli encode TOKENIZER [--special] < HEXLINES   one line of ids per input line
 *   tok_cli decode TOKENIZER < IDLINES                 one hex line of text per line
 *   tok_cli bench TOKENIZER HEXLINES ROUNDS            tokens/s of encoding the lines
 * HEXLINES: each line a string's bytes in hex (any bytes, newlines too).
 * Exit 2 (with the message) when the tokenizer cannot be read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rb_tok.h"

static int unhex(const char *line, rb_buf *out)
{
    rb_buf_reset(out);
    for (size_t i = 0; line[i] && line[i] != '\n'; i += 2) {
        unsigned v;
        if (sscanf(line + i, "%2x", &v) != 1) return -1;
        char c = (char)v;
        if (rb_buf_add(out, &c, 1)) return -1;
    }
    return rb_buf_add(out, "", 0);
}

static char *read_lines(FILE *f, size_t *n_lines, char ***lines)
{
    size_t cap = 0;
    char *line = NULL;
    *n_lines = 0;
    *lines = NULL;
    size_t lcap = 0;
    while (getline(&line, &cap, f) > 0) {
        if (*n_lines == lcap) {
            lcap = lcap ? lcap * 2 : 1024;
            *lines = realloc(*lines, lcap * sizeof **lines);
        }
        (*lines)[(*n_lines)++] = strdup(line);
    }
    return line;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: tok_cli encode|decode|bench TOKENIZER [...]\n");
        return 2;
    }
    char err[1024];
    rb_tok *t;
    if (rb_tok_open(argv[2], &t, err, sizeof err)) {
        fprintf(stderr, "tok_cli: --tokenizer: %s\n", err);
        return 2;
    }
    rb_buf text = {0};
    rb_tok_ids ids = {0};
    if (strcmp(argv[1], "encode") == 0) {
        int special = argc > 3 && strcmp(argv[3], "--special") == 0;
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, stdin) > 0) {
            if (unhex(line, &text)) return 2;
            ids.n = 0;
            if (rb_tok_encode(t, text.data ? text.data : "", text.len, special, &ids)) return 1;
            for (size_t i = 0; i < ids.n; i++)
                printf(i ? " %d" : "%d", (int)ids.v[i]);
            printf("\n");
        }
        free(line);
    } else if (strcmp(argv[1], "decode") == 0) {
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, stdin) > 0) {
            ids.n = 0;
            for (char *p = line, *end; *p && *p != '\n'; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p) break;
                ids.n++;
                ids.v = realloc(ids.v, ids.n * sizeof *ids.v);
                ids.v[ids.n - 1] = (int32_t)v;
            }
            rb_buf_reset(&text);
            if (rb_tok_decode(t, ids.v, ids.n, &text)) return 1;
            for (size_t i = 0; i < text.len; i++)
                printf("%02x", (unsigned char)text.data[i]);
            printf("\n");
        }
        free(line);
    } else if (strcmp(argv[1], "bench") == 0 && argc == 5) {
        FILE *f = fopen(argv[3], "r");
        if (!f) return 2;
        char **lines;
        size_t n;
        free(read_lines(f, &n, &lines));
        fclose(f);
        rb_buf *texts = calloc(n, sizeof *texts);
        for (size_t i = 0; i < n; i++)
            unhex(lines[i], &texts[i]);
        int rounds = atoi(argv[4]);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        size_t total = 0, bytes = 0;
        for (int r = 0; r < rounds; r++)
            for (size_t i = 0; i < n; i++) {
                ids.n = 0;
                rb_tok_encode(t, texts[i].data ? texts[i].data : "", texts[i].len, 0, &ids);
                total += ids.n;
                bytes += texts[i].len;
            }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        printf("{\"tokens\":%zu,\"bytes\":%zu,\"seconds\":%.6f,\"tokens_per_s\":%.0f}\n", total,
               bytes, s, (double)total / s);
    } else {
        fprintf(stderr, "tok_cli: unknown command '%s'\n", argv[1]);
        return 2;
    }
    rb_tok_ids_free(&ids);
    rb_buf_free(&text);
    rb_tok_free(t);
    return 0;
}
