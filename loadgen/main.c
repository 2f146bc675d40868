/* loadgen: the command-line program on liblg. Reads --config (if any) into
 * flags, parses them and then the command line's (which override), and runs
 * (or, with --dry-run, prints the plan: lg_dryrun).
 * Exit codes: 0 ok, 1 run failed, 2 bad usage or input, 3 refused by the
 * certificate, 128 + N after signal N (130 SIGINT). */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lg_cli.h"
#include "lg_cfgfile.h"
#include "lg_config.h"
#include "lg_dryrun.h"
#include "lg_probe.h"
#include "lg_run.h"
#include "lg_vllm.h"
#include "rb_file.h"

/* What the plan will do that a user may not expect, said before the run. */
static void warn_plan(const lg_opts *o)
{
    if (o->quiet && !o->save_result)
        fprintf(stderr, "loadgen: warning: --quiet without --save-result: the results will be "
                        "neither shown nor saved (add --save-result)\n");
    int64_t pool = o->dataset == LG_DS_PREFIX
                       ? (int64_t)o->prefix_groups * o->prefix_prompts_per_group
                       : o->prompt_pool_size;
    if (o->dataset == LG_DS_TRACE || o->dataset == LG_DS_SHAREGPT || o->dataset == LG_DS_CUSTOM ||
        o->prompt_per_request)
        return;
    if (o->planned_arrivals < 0 && o->dataset == LG_DS_RANDOM && !o->prompt_pool_given) {
        fprintf(stderr,
                "loadgen: note: the run's number of requests is not known in advance; the pool "
                "holds %lld prompts and the report counts any repeats (prompts_repeated)\n",
                (long long)pool);
        return;
    }
    if (o->planned_arrivals <= pool || o->prefix_multi_turn) return; /* sessions: rounds */
    if (o->dataset == LG_DS_PREFIX || o->prompt_pool_given)
        fprintf(stderr,
                "loadgen: note: about %lld requests over %lld distinct prompts: prompts will "
                "repeat, as asked\n",
                (long long)o->planned_arrivals, (long long)pool);
    else
        fprintf(stderr,
                "loadgen: warning: about %lld requests, but memory bounds the prompt pool to "
                "%lld prompts of this length: prompts will repeat, and a server's prefix cache "
                "will answer the repeats faster (shorter prompts or a shorter run avoid it)\n",
                (long long)o->planned_arrivals, (long long)pool);
}

/* The run, on the command line after vLLM's flags were rewritten. */
static int run(int argc, char **argv)
{
    lg_opts o;
    char err[512] = "";
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    lg_opts_defaults(&o, (int)cpus);
    /* First pass: only to find --config (and --help). */
    lg_opts probe = o;
    int rc = lg_cli_parse(&probe, argc - 1, argv + 1, err, sizeof err);
    if (rc == 1) {
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "--version") == 0) {
                printf("loadgen %s\n", RHOBENCH_VERSION);
                return 0;
            }
        }
        fputs(lg_cli_usage(), stdout);
        return 0;
    }
    if (rc < 0) {
        fprintf(stderr, "loadgen: %s\n", err);
        return 2;
    }
    lg_args cfg = {0};
    if (probe.config[0]) {
        char *txt = NULL;
        size_t len = 0;
        rc = rb_read_file(probe.config, 1 << 24, &txt, &len);
        if (rc) {
            fprintf(stderr, "loadgen: --config: cannot read '%s': %s\n", probe.config,
                    rb_file_strerror(rc));
            return 2;
        }
        char notes[2048];
        rc = lg_cfgfile_to_args(txt, len, &cfg, notes, sizeof notes, err, sizeof err);
        free(txt);
        if (rc) {
            fprintf(stderr, "loadgen: %s\n", err);
            return 2;
        }
        for (char *l = notes, *nl; *l && (nl = strchr(l, '\n')); l = nl + 1)
            fprintf(stderr, "loadgen: %.*s\n", (int)(nl - l), l);
        rc = lg_cli_parse(&o, cfg.argc, cfg.argv, err, sizeof err);
        if (rc) {
            fprintf(stderr, "loadgen: config %s: %s\n", probe.config, err);
            lg_args_free(&cfg);
            return 2;
        }
    }
    rc = lg_cli_parse(&o, argc - 1, argv + 1, err, sizeof err);
    if (rc == 0 && lg_url_unspecified_to_loopback(o.base_url, sizeof o.base_url))
        fprintf(stderr, "loadgen: note: --base-url: 0.0.0.0 means this host; connecting to %s\n",
                o.base_url);
    if (rc == 0) rc = lg_cli_finish(&o, err, sizeof err);
    if (rc) {
        fprintf(stderr, "loadgen: %s\n", err);
        lg_args_free(&cfg);
        return 2;
    }
    warn_plan(&o);
    if (o.dry_run) { /* the plan, and no request */
        rc = lg_dryrun(&o, stdout);
        lg_args_free(&cfg);
        return rc;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "loadgen: curl_global_init failed\n");
        lg_args_free(&cfg);
        return 1;
    }
    rc = o.sweep_probe ? lg_probe_run(&o) : lg_run(&o);
    curl_global_cleanup();
    lg_args_free(&cfg);
    return rc;
}

int main(int argc, char **argv)
{
    /* vLLM bench's own flags, read as loadgen's (the program name passes
     * through). The list outlives the run: the options point into it
     * (--header values), so it is freed after. */
    lg_args vl = {0};
    char err[512] = "", vnotes[1024];
    if (lg_vllm_args(argc, argv, &vl, vnotes, sizeof vnotes, err, sizeof err)) {
        fprintf(stderr, "loadgen: %s\n", err);
        lg_args_free(&vl);
        return 2;
    }
    for (char *l = vnotes, *nl; *l && (nl = strchr(l, '\n')); l = nl + 1)
        fprintf(stderr, "loadgen: note: %.*s\n", (int)(nl - l), l);
    int rc = run(vl.argc, vl.argv);
    lg_args_free(&vl);
    return rc;
}
