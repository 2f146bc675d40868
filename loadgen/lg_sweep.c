/* lg_sweep: a sweep's stage rates (lg_sweep.h). */
#include "lg_sweep.h"

#include <math.h>

double lg_sweep_min_rate(int n, double min_rate, double max_rate)
{
    return min_rate > 0.0 ? min_rate : max_rate / pow(2.0, n - 1);
}

int lg_sweep_rates(lg_sweep_kind kind, int n, double lo, double max_rate, double *rates)
{
    if (n < 1 || (kind != LG_SWEEP_LINEAR && kind != LG_SWEEP_GEOMETRIC)) return -1;
    if (!(max_rate > 0.0) || !isfinite(max_rate) || !(lo > 0.0) || !(lo <= max_rate)) return -1;
    for (int i = 0; i < n; i++) {
        if (kind == LG_SWEEP_LINEAR)
            rates[i] = max_rate * (i + 1) / n;
        else
            rates[i] = n == 1 ? max_rate : lo * pow(max_rate / lo, (double)i / (n - 1));
    }
    return 0;
}
