/* cal_plot: the calibration plot's data and gnuplot script: the client's
 * mean delay per token against its measured utilisation rho, one colour per
 * worker count: the measured levels with their 95% error bars, the fitted
 * curve d = c + R rho/(1 - rho) with its bootstrap band, the budget line
 * (transport + budget), and each k's certified range shaded; the reference
 * workload's request rate (of the first worker count) on the top axis.
 * Writes text to a FILE the caller opened (atomically); runs nothing. */
#ifndef CAL_PLOT_H
#define CAL_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "cal_fit.h"
#include "cal_step.h"

/* calibration.dat: for the j-th worker count, gnuplot index 2j holds the
 * levels (rho rho_sd delay_us delay_err_us fit_us counted
 * saturated) and index 2j+1 the fitted curve with its band (rho delay_us
 * band_lo_us band_hi_us). */
void cal_plot_write_dat(FILE *f, const cal_per_k *pk, int npk);

/* calibration.gp: reads dat_name and writes png_name (both quoted for
 * gnuplot, so any name works: a path relative to the directory gnuplot is
 * run in is fine). */
void cal_plot_write_gp(FILE *f, const char *dat_name, const char *png_name, const cal_per_k *pk,
                       int npk, double budget_us);

/* s as a gnuplot single-quoted string ('it''s'): into out (n bytes).
 * Returns 0, or -1 when it does not fit. */
int cal_plot_quote(const char *s, char *out, size_t n);

#endif
