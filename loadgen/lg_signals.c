/* lg_signals: the run's signal count (see lg_signals.h). */
#include "lg_signals.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t g_signals;
static volatile sig_atomic_t g_last_signal;
/* The signals counted when the workers had ended (-1: not yet), and
 * whether the first that came after was said. */
static int g_signals_at_end = -1, g_late_said;

static void on_signal(int sig)
{
    g_signals++;
    g_last_signal = sig;
}

void lg_signals_install(lg_signals_saved *old)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old->intr);
    sigaction(SIGTERM, &sa, &old->term);
    sigaction(SIGHUP, &sa, &old->hup);
}

void lg_signals_restore(const lg_signals_saved *old)
{
    sigaction(SIGINT, &old->intr, NULL);
    sigaction(SIGTERM, &old->term, NULL);
    sigaction(SIGHUP, &old->hup, NULL);
}

const volatile sig_atomic_t *lg_signals_count(void)
{
    return &g_signals;
}

int lg_signals_last(void)
{
    return (int)g_last_signal;
}

const char *lg_signals_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
}

void lg_signals_workers_ended(void)
{
    g_signals_at_end = g_signals;
}

int lg_signals_late(void)
{
    return g_signals_at_end < 0 ? 0 : g_signals - g_signals_at_end;
}

void lg_signals_phase(const char *phase)
{
    const char *at = getenv("RB_TEST_PAUSE_AT"), *file = getenv("RB_TEST_PAUSE_FILE");
    if (at && file && !strcmp(at, phase)) {
        /* Test hook: says it is here, waits (at most 60 s) for the signals. */
        const char *ns = getenv("RB_TEST_PAUSE_SIGNALS");
        int base = g_signals, want = g_signals + (ns && atoi(ns) > 1 ? atoi(ns) : 1), seen = -1;
        /* The file holds how many signals came here so far: a test sends
         * the next only once the last was counted (two sent at once may
         * reach the process as one, as pending signals merge). */
        for (int i = 0; i < 60000 && g_signals < want; i++) {
            if (g_signals != seen) {
                seen = g_signals;
                FILE *f = fopen(file, "w");
                if (f) {
                    fprintf(f, "%d\n", seen - base);
                    fclose(f);
                }
            }
            struct timespec ts = {0, 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    if (lg_signals_late() > 0 && !g_late_said) {
        g_late_said = 1;
        fprintf(stderr,
                "loadgen: %s after the requests ended: writing the results all the same (again "
                "to skip the --report-format exports)\n",
                lg_signals_name(g_last_signal));
    }
}
