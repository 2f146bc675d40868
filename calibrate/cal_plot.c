/* cal_plot: the text of calibration.dat and calibration.gp. */
#include "cal_plot.h"

#include <math.h>
#include <string.h>

/* NAN as gnuplot's missing value. */
static void val(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, " %.6g", v);
    else
        fprintf(f, " NaN");
}

int cal_plot_quote(const char *s, char *out, size_t n)
{
    size_t o = 0;
    if (n < 3) return -1;
    out[o++] = '\'';
    for (; *s; s++) {
        size_t need = *s == '\'' ? 2 : 1;
        if (o + need + 2 > n) return -1;
        out[o++] = *s;
        if (*s == '\'') out[o++] = '\'';
    }
    out[o++] = '\'';
    out[o] = '\0';
    return 0;
}

void cal_plot_write_dat(FILE *f, const cal_per_k *pk, int npk)
{
    fprintf(f, "# rhobench calibration: client delay per token against utilisation\n");
    for (int j = 0; j < npk; j++) {
        const cal_per_k *p = &pk[j];
        if (j > 0) fprintf(f, "\n\n");
        fprintf(f,
                "# index %d: k=%d levels: rho rho_sd delay_us delay_err_us fit_us counted "
                "saturated\n",
                2 * j, p->workers);
        for (int i = 0; i < p->n_levels; i++) {
            const cal_level *l = &p->levels[i];
            val(f, l->rho);
            val(f, l->rho_sd);
            val(f, l->delay_us);
            val(f, l->delay_err_us);
            val(f, p->level_pred_us[i]);
            fprintf(f, " %d %d\n", !l->saturated, l->saturated);
        }
        if (!p->n_levels) fprintf(f, " NaN NaN NaN NaN NaN 0 0\n");
        fprintf(f, "\n\n# index %d: k=%d fit: rho delay_us band_lo_us band_hi_us\n", 2 * j + 1,
                p->workers);
        int rows = 0;
        for (int g = 0; g < CAL_BAND_N && isfinite(p->r_us); g++) {
            if (!isfinite(p->band_rho[g])) continue;
            val(f, p->band_rho[g]);
            val(f, cal_fit_predict_us(p, p->band_rho[g]));
            val(f, p->band_lo_us[g]);
            val(f, p->band_hi_us[g]);
            fprintf(f, "\n");
            rows++;
        }
        if (!rows) fprintf(f, " NaN NaN NaN NaN\n");
    }
}

void cal_plot_write_gp(FILE *f, const char *dat_name, const char *png_name, const cal_per_k *pk,
                       int npk, double budget_us)
{
    static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                          "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
    const int nc = (int)(sizeof colours / sizeof colours[0]);
    char dat[2100], png[2100];
    if (cal_plot_quote(dat_name, dat, sizeof dat) || cal_plot_quote(png_name, png, sizeof png)) {
        fprintf(f, "# path too long to plot\n");
        return;
    }
    fprintf(f, "# rhobench calibration plot; run: gnuplot calibration.gp\n");
    fprintf(f, "set terminal pngcairo size 1000,650 noenhanced font \",11\"\n");
    fprintf(f, "set output %s\n", png);
    fprintf(f,
            "set title 'Client delay per token vs its utilisation (budget %.0f us over "
            "transport)'\n",
            budget_us);
    fprintf(f, "set xlabel 'utilisation rho per worker (measured)'\n");
    fprintf(f, "set ylabel 'client delay per token, mean (us)'\n");
    fprintf(f, "set grid\nset key top right box opaque\nset logscale y\nset xrange [0:1]\n");
    if (npk > 0 && pk[0].busy_per_request_us > 0) {
        /* the reference workload's rate at rho, for the first worker count */
        double per = pk[0].workers / (pk[0].busy_per_request_us * 1e-6);
        fprintf(f,
                "set x2range [0:%.6g]\nset x2tics\nset x2label 'requests/s of the reference "
                "workload (k=%d, all workers)'\n",
                per, pk[0].workers);
    }
    for (int j = 0; j < npk; j++) {
        double safe = pk[j].safe_rho;
        const char *c = colours[j % nc];
        if (safe > 0 && isfinite(safe)) {
            fprintf(f,
                    "set object %d rect from first 0, graph 0 to first %.6g, graph 1 "
                    "fc rgb '%s' fs transparent solid 0.08 noborder behind\n",
                    j + 1, safe, c);
            fprintf(f,
                    "set label %d 'certified k=%d: rho <= %.3f' at first %.6g, graph %.2f left "
                    "offset 0.5,0 tc rgb '%s'\n",
                    j + 1, pk[j].workers, safe, safe, 0.95 - 0.05 * j, c);
        }
        double cb = isfinite(pk[j].transport_us) && pk[j].transport_us > 0 ? pk[j].transport_us : 0;
        fprintf(f,
                "set arrow %d from graph 0, first %.6g to graph 1, first %.6g nohead dt 2 lc "
                "rgb '%s'\n",
                j + 1, cb + budget_us, cb + budget_us, c);
    }
    fprintf(f, "plot \\\n");
    for (int j = 0; j < npk; j++) {
        const char *c = colours[j % nc];
        fprintf(f,
                "  %s index %d using 1:3:4 with filledcurves fc rgb '%s' fs transparent solid 0.2 "
                "notitle, \\\n",
                dat, 2 * j + 1, c);
        /* the levels with their error bars (a level of one batch has none) */
        fprintf(f,
                "  %s index %d using 1:($6 == 1 ? $3 : 1/0):($1 - ($2 == $2 ? $2 : 0)):($1 + "
                "($2 == $2 ? $2 : 0)):($3 - ($4 == $4 ? $4 : 0)):($3 + ($4 == $4 ? $4 : 0)) "
                "with xyerrorbars pt 7 lc rgb '%s' title 'k=%d levels (95%%)', \\\n",
                dat, 2 * j, c, pk[j].workers);
        fprintf(f,
                "  %s index %d using 1:($6 == 0 ? $3 : 1/0) with points pt 6 ps 1.3 lc rgb '%s' "
                "title 'k=%d saturated', \\\n",
                dat, 2 * j, c, pk[j].workers);
        fprintf(f, "  %s index %d using 1:2 with lines lw 2 lc rgb '%s' title 'k=%d fit'%s\n", dat,
                2 * j + 1, c, pk[j].workers, j + 1 < npk ? ", \\" : "");
    }
}
