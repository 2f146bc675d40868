/* lg_signals: the run's signals as its coordinator counts them. From before
 * the run's first file is created until its last is written, SIGINT,
 * SIGTERM and SIGHUP are counted, not fatal (lg_run.c says what each does
 * when); this module holds the count, the last signal's number, and the
 * count at the workers' end, so that the report's half of the coordinator
 * (lg_run_report.c) can tell a signal that came after the requests ended
 * without calling back into lg_run.c. One run per process. */
#ifndef LG_SIGNALS_H
#define LG_SIGNALS_H

#include <signal.h>

/* The handlers they replaced (restored by lg_signals_restore). */
typedef struct lg_signals_saved {
    struct sigaction intr, term, hup;
} lg_signals_saved;

/* Counts SIGINT, SIGTERM and SIGHUP from now on. */
void lg_signals_install(lg_signals_saved *old);
void lg_signals_restore(const lg_signals_saved *old);

/* The count so far, as an address: loops that a signal cuts short
 * (lg_warmup_run, lg_plan_end_offset) watch it. */
const volatile sig_atomic_t *lg_signals_count(void);
/* The last signal's number (0: none yet), and its name as messages say. */
int lg_signals_last(void);
const char *lg_signals_name(int sig);

/* The workers have ended: signals from now on are late ones. */
void lg_signals_workers_ended(void);
/* The signals that came after the workers ended (0 before they end). From
 * the second on, the writing is cut short: the exports are skipped and the
 * result says interrupted. */
int lg_signals_late(void);

/* The coordinator at a phase of its end ("merge", "join", "export") or of
 * its set-up ("walk"): says, once, that a signal came after the workers
 * ended (the files are written all the same). A test hook: with
 * RB_TEST_PAUSE_AT=PHASE and RB_TEST_PAUSE_FILE=PATH in the environment, at
 * PHASE it creates PATH and waits (at most 60 s) for a signal (or for
 * RB_TEST_PAUSE_SIGNALS of them), so that a test's signals land in that
 * phase. */
void lg_signals_phase(const char *phase);

#endif
