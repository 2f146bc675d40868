/* lg_sweep: a sweep's stage rates (lg_sweep.h). */
#include "lg_sweep.h"

#include <math.h>
#include <stdlib.h>

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

int lg_sweep_burn_rates(const int64_t *t_ns, const int64_t *in_flight, int n, int64_t t_end_ns,
                        double *rates)
{
    int m = 0;
    for (int i = 1; i < n; i++) {
        if (t_ns[i] >= t_end_ns) break;
        int64_t dt = t_ns[i] - t_ns[i - 1];
        if (in_flight[i] < in_flight[i - 1] && dt > 0)
            rates[m++] = (double)(in_flight[i - 1] - in_flight[i]) / ((double)dt / 1e9);
    }
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double lg_sweep_percentile(double *x, int n, double p)
{
    if (n < 1 || !(p >= 0.0 && p <= 100.0)) return NAN;
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double h = (n - 1) * p / 100.0;
    int lo = (int)floor(h);
    if (lo >= n - 1) return x[n - 1];
    return x[lo] + (h - lo) * (x[lo + 1] - x[lo]);
}

static double probe_rate(lg_sweep_kind kind, int i, int n, double s)
{
    double f = n == 1 ? 0.0 : (double)i / (n - 1);
    double v = kind == LG_SWEEP_LINEAR ? 1.0 + (s - 1.0) * f : 1.0 + s - pow(s, 1.0 - f);
    return round(v * 100.0) / 100.0;
}

int lg_sweep_probe_rates(lg_sweep_kind kind, int n, double s, double *rates)
{
    if (n < 1 || (kind != LG_SWEEP_LINEAR && kind != LG_SWEEP_GEOMETRIC)) return -1;
    if (!(s > 0.0) || !isfinite(s)) return -1;
    for (int i = 0; i < n; i++)
        if (!(probe_rate(kind, i, n, s) > 0.0)) return -1;
    for (int i = 0; i < n; i++)
        rates[i] = probe_rate(kind, i, n, s);
    return 0;
}
