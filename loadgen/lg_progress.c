/* lg_progress: see lg_progress.h. */
#include "lg_progress.h"

#include <math.h>
#include <stdio.h>

static void eta_text(const lg_progress_in *in, char *buf, size_t cap)
{
    double left = NAN;
    if (in->total_s > 0) {
        left = in->total_s - in->elapsed_s;
    } else if (in->planned > 0 && in->dispatched > 0 && in->elapsed_s > 0) {
        double rate = (double)in->dispatched / in->elapsed_s;
        left =
            (double)((uint64_t)in->planned > in->dispatched ? (uint64_t)in->planned - in->dispatched
                                                            : 0) /
            rate;
    }
    if (isnan(left)) {
        snprintf(buf, cap, "?");
        return;
    }
    if (left < 0) left = 0; /* draining */
    if (left >= 3600)
        snprintf(buf, cap, "%dh%02dm", (int)(left / 3600), (int)fmod(left / 60, 60));
    else if (left >= 60)
        snprintf(buf, cap, "%dm%02ds", (int)(left / 60), (int)fmod(left, 60));
    else
        snprintf(buf, cap, "%.0fs", ceil(left));
}

void lg_progress_format(const lg_progress_in *in, char *buf, size_t cap)
{
    char rate[64], eta[32];
    if (isnan(in->stage_rate))
        snprintf(rate, sizeof rate, "closed loop");
    else if (isinf(in->stage_rate))
        snprintf(rate, sizeof rate, "inf/s");
    else if (in->stage_elapsed_s >= 0.5) /* before that the rate is mostly noise */
        snprintf(rate, sizeof rate, "%.1f/s (achieved %.1f/s)", in->stage_rate,
                 (double)in->stage_dispatched / in->stage_elapsed_s);
    else
        snprintf(rate, sizeof rate, "%.1f/s", in->stage_rate);
    eta_text(in, eta, sizeof eta);
    snprintf(buf, cap,
             "[loadgen] stage %d/%d %s %.1fs sent %llu completed %llu failed %llu in flight %llu "
             "lag p99 %.3f ms ETA %s",
             in->stage + 1, in->n_stages, rate, in->elapsed_s, (unsigned long long)in->dispatched,
             (unsigned long long)in->completed, (unsigned long long)in->failed,
             (unsigned long long)in->in_flight, in->lag_p99_ms, eta);
}
