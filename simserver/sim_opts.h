/* sim_opts: simserver's options table (rb_opts), its defaults and its flag
 * parser. Pure: no I/O and no allocation, so every flag's rule is
 * unit-tested (test_sim_opts); main() prints what the parser returns.
 * A sim_opts must not be copied: cfg points into it (and into argv). */
#ifndef SIM_OPTS_H
#define SIM_OPTS_H

#include <stddef.h>

#include "rb_opts.h"
#include "sim_server.h"

#define SIM_NAME_MAX 128

typedef struct sim_opts {
    sim_config cfg;
    char model[SIM_NAME_MAX];                  /* --model */
    char served[SIM_MAX_MODELS][SIM_NAME_MAX]; /* --served-model-name, cfg.served's bytes */
    char tokenizer[1024];                      /* --tokenizer (main loads it into cfg.tok) */
} sim_opts;

/* The table (alphabetical) and the usage text around it. */
extern const rb_opts_spec sim_opts_spec;

/* Every default, from the table and the few settings that are not flags.
 * 0, or -1 with err (a default that does not parse: test_sim_opts holds the
 * table to that). */
int sim_opts_defaults(sim_opts *o, char *err, size_t errlen);

/* Parses argv[0..argc) (no program name) into o, after sim_opts_defaults.
 * Returns RB_OPTS_OK, RB_OPTS_HELP, RB_OPTS_VERSION, or -1 with err naming
 * the flag and the value. argv must outlive o. */
int sim_opts_parse(sim_opts *o, int argc, char **argv, char *err, size_t errlen);

#endif
