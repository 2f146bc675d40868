/* cal_plot: the calibration plot's data and gnuplot script: measured client
 * delay per token against offered rate, one colour per worker count, the
 * fitted PK curve through each, and each k's certified safe range shaded.
 * Writes text to a FILE the caller opened (atomically); runs nothing. */
#ifndef CAL_PLOT_H
#define CAL_PLOT_H

#include <stdio.h>

#include "cal_fit.h"
#include "cal_step.h"

/* calibration.dat: for the j-th worker count, gnuplot index 2j holds the
 * measured steps (offered_rate achieved_rate delay_mean_us delay_p99_us
 * rho_mean fit_pred_us used_in_fit saturated) and index 2j+1 the fitted curve
 * (offered_rate delay_us), sampled up to just below its pole. */
void cal_plot_write_dat(FILE *f, const cal_step *steps, int n, const cal_per_k *pk, int npk);

/* calibration.gp: reads dat_name (a path relative to the script's directory
 * is fine: gnuplot is run there) and writes png_name. */
void cal_plot_write_gp(FILE *f, const char *dat_name, const char *png_name, const cal_per_k *pk,
                       int npk, double budget_us);

#endif
