/* fuzz_config: the JSON config converter never crashes or leaks, and what it
 * accepts is a well-formed flag list, which then goes through the CLI's own
 * parser and checks (lg_cli_parse, lg_cli_finish) as loadgen --config does. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lg_cli.h"
#include "lg_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    lg_args a;
    char err[256];
    int rc = lg_config_to_args((const char *)in, size, &a, err, sizeof err);
    if (rc == 0) {
        if (a.argc < 0 || (a.argc > 0 && !a.argv) || (a.argv && a.argv[a.argc])) abort();
        for (int i = 0; i < a.argc; i++)
            if (!a.argv[i]) abort();
        /* Every flag starts with "--"; a value never stands first. */
        if (a.argc && strncmp(a.argv[0], "--", 2) != 0) abort();
        lg_opts o;
        lg_opts_defaults(&o, 2);
        char cli_err[256];
        if (lg_cli_parse(&o, a.argc, a.argv, cli_err, sizeof cli_err) == 0)
            (void)lg_cli_finish(&o, cli_err, sizeof cli_err);
    } else if (a.argv || a.argc || !memchr(err, '\0', sizeof err) ||
               strncmp(err, "config: ", 8) != 0) {
        abort();
    }
    lg_args_free(&a);
    return 0;
}
