/* fuzz_yaml: the YAML reader and the config-file mapping on it never crash
 * or leak. What lg_yaml accepts is a tree no deeper than LG_YAML_MAX_DEPTH
 * that prints, and reading the same bytes again prints the same; what it
 * refuses has a message "line N: ..." with N within the input's lines.
 * lg_cfgfile (YAML or JSON, Inference Perf's schema) gives a NULL-ended
 * list of non-NULL strings whose flags then go through the CLI's own parser,
 * or a message starting "config: " and no list. (The line bound counts every
 * byte that can end a line in libyaml: \n, \r and the UTF-8 tails of NEL, LS
 * and PS.) */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cfgfile.h"
#include "lg_cli.h"
#include "lg_yaml.h"

static int depth(const cJSON *v)
{
    int d = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
        int k = depth(c);
        if (k > d) d = k;
    }
    return cJSON_IsArray(v) || cJSON_IsObject(v) ? d + 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    const char *txt = (const char *)in;
    char err[256];
    cJSON *t = lg_yaml_parse(txt, size, err, sizeof err);
    if (t) {
        if (depth(t) > LG_YAML_MAX_DEPTH) abort();
        char *a = cJSON_PrintUnformatted(t);
        if (!a) abort();
        cJSON *again = lg_yaml_parse(txt, size, err, sizeof err);
        char *b = again ? cJSON_PrintUnformatted(again) : NULL;
        if (!b || strcmp(a, b) != 0) abort();
        free(a);
        free(b);
        cJSON_Delete(again);
        cJSON_Delete(t);
    } else {
        size_t lines = 1;
        for (size_t i = 0; i < size; i++)
            lines +=
                in[i] == '\n' || in[i] == '\r' || in[i] == 0x85 || in[i] == 0xA8 || in[i] == 0xA9;
        unsigned long n = 0;
        char tail;
        if (!memchr(err, '\0', sizeof err) || sscanf(err, "line %lu%c", &n, &tail) != 2 ||
            tail != ':' || n < 1 || n > lines + 1)
            abort();
    }

    lg_args args;
    char notes[1024];
    int rc = lg_cfgfile_to_args(txt, size, &args, notes, sizeof notes, err, sizeof err);
    if (!memchr(notes, '\0', sizeof notes)) abort();
    if (rc == 0) {
        if (args.argc < 0 || (args.argc && !args.argv) || (args.argv && args.argv[args.argc]))
            abort();
        for (int i = 0; i < args.argc; i++)
            if (!args.argv[i]) abort();
        lg_opts o;
        lg_opts_defaults(&o, 2);
        char cli_err[256];
        if (lg_cli_parse(&o, args.argc, args.argv, cli_err, sizeof cli_err) == 0)
            (void)lg_cli_finish(&o, cli_err, sizeof cli_err);
    } else if (args.argv || args.argc || !memchr(err, '\0', sizeof err) ||
               strncmp(err, "config: ", 8) != 0 || notes[0]) {
        abort();
    }
    lg_args_free(&args);
    return 0;
}
