/* cal_plot: the text of calibration.dat and calibration.gp. */
#include "cal_plot.h"

#include <math.h>

#include "mdl_fit.h"

#define CURVE_POINTS 120

/* NAN as gnuplot's missing value. */
static void val(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, " %.6g", v);
    else
        fprintf(f, " NaN");
}

void cal_plot_write_dat(FILE *f, const cal_step *steps, int n, const cal_per_k *pk, int npk)
{
    fprintf(f, "# rhobench calibration: client delay per token against offered rate\n");
    for (int j = 0; j < npk; j++) {
        const cal_per_k *p = &pk[j];
        if (j > 0) fprintf(f, "\n\n");
        fprintf(f,
                "# index %d: k=%d measured: offered_rate achieved_rate delay_mean_us "
                "delay_p99_us rho_mean fit_pred_us used_in_fit saturated\n",
                2 * j, p->workers);
        int rows = 0;
        for (int i = 0; i < n; i++) {
            const cal_step *s = &steps[i];
            if (s->workers != p->workers) continue;
            val(f, s->request_rate);
            val(f, s->achieved_rate);
            val(f, s->overhead_mean_us);
            val(f, s->overhead_p99_us);
            val(f, s->rho_mean);
            val(f, s->fit_pred_us);
            fprintf(f, " %d %d\n", s->used_in_fit, s->saturated);
            rows++;
        }
        if (!rows) fprintf(f, " NaN NaN NaN NaN NaN NaN 0 0\n");
        fprintf(f, "\n\n# index %d: k=%d fitted %s: offered_rate delay_us\n", 2 * j + 1, p->workers,
                p->fit.model_name ? p->fit.model_name : "curve");
        double m1 = p->fit.m1_s.value, epr = p->events_per_request;
        if (!(m1 > 0) || !(epr > 0) || !isfinite(epr)) {
            fprintf(f, " NaN NaN\n");
            continue;
        }
        /* up to rho 0.97 of the pole, or 1.3 times the largest measured rate */
        double lam_max = 0.97 / m1;
        double rate_max = lam_max * p->workers / epr;
        if (p->max_measured_rate > 0 && 1.3 * p->max_measured_rate < rate_max)
            rate_max = 1.3 * p->max_measured_rate;
        for (int i = 1; i <= CURVE_POINTS; i++) {
            double rate = rate_max * i / CURVE_POINTS;
            double lam = rate / p->workers * epr;
            val(f, rate);
            val(f, mdl_fit_predict(&p->fit, lam) * 1e6);
            fprintf(f, "\n");
        }
    }
}

void cal_plot_write_gp(FILE *f, const char *dat_name, const char *png_name, const cal_per_k *pk,
                       int npk, double budget_us)
{
    static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
    const int nc = (int)(sizeof colours / sizeof colours[0]);
    fprintf(f, "# rhobench calibration plot; run: gnuplot calibration.gp\n");
    fprintf(f, "set terminal pngcairo size 1000,650 noenhanced font \",11\"\n");
    fprintf(f, "set output '%s'\n", png_name);
    fprintf(f,
            "set title 'Client delay per token vs offered rate (budget %.0f us over transport)'\n",
            budget_us);
    fprintf(f, "set xlabel 'offered rate (requests/s, all workers)'\n");
    fprintf(f, "set ylabel 'client delay per token, mean (us)'\n");
    fprintf(f, "set grid\nset key bottom right box opaque\nset logscale y\n");
    for (int j = 0; j < npk; j++) {
        double safe = pk[j].safe_total_rate;
        if (!(safe > 0) || !isfinite(safe)) continue;
        fprintf(f,
                "set object %d rect from graph 0, graph 0 to first %.6g, graph 1 "
                "fc rgb '%s' fs transparent solid 0.10 noborder behind\n",
                j + 1, safe, colours[j % nc]);
        fprintf(f,
                "set arrow %d from first %.6g, graph 0 to first %.6g, graph 1 nohead dt 2 "
                "lc rgb '%s'\n",
                j + 1, safe, safe, colours[j % nc]);
        fprintf(f,
                "set label %d 'safe k=%d: %.0f/s' at first %.6g, graph %.2f right offset -0.5,0 "
                "tc rgb '%s'\n",
                j + 1, pk[j].workers, safe, safe, 0.95 - 0.05 * j, colours[j % nc]);
    }
    fprintf(f, "plot \\\n");
    for (int j = 0; j < npk; j++) {
        const char *c = colours[j % nc];
        fprintf(f,
                "  '%s' index %d using 1:($8 == 0 ? $3 : 1/0) with points pt 7 ps 1.2 lc rgb '%s' "
                "title 'k=%d measured', \\\n",
                dat_name, 2 * j, c, pk[j].workers);
        fprintf(f,
                "  '%s' index %d using 1:($8 == 1 ? $3 : 1/0) with points pt 6 ps 1.2 lc rgb '%s' "
                "title 'k=%d saturated', \\\n",
                dat_name, 2 * j, c, pk[j].workers);
        fprintf(f, "  '%s' index %d using 1:2 with lines lw 2 lc rgb '%s' title 'k=%d PK fit'%s\n",
                dat_name, 2 * j + 1, c, pk[j].workers, j + 1 < npk ? ", \\" : "");
    }
}
