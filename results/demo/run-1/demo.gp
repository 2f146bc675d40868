# gnuplot script for demo.dat (run from /tmp/demo-kingman.jkm7SO/run-1: gnuplot demo.gp)
set terminal pngcairo size 900,600 noenhanced font ",11"
set output "demo.png"
set title "The client is a queue: waiting time per token against its utilisation rho"
set xlabel "measured utilisation rho of the client's event loop"
set ylabel "client waiting time per token (us, log)"
set logscale y
set grid
set key top left
set xrange [0:1]
R = 5015.265
V = 19590.157
CA2 = 15.107509400000001
pk(x) = x / (1 - x) * R
kg(x) = x / (1 - x) * V
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "red"
set label "rho = 1: no steady state" right at 0.98, graph 0.05 tc rgb "red"
plot [0:0.97] pk(x) with lines lw 2 lc rgb "#1f77b4" title sprintf("Pollaczek-Khinchine M/G/1 (Poisson, ca2 = 1): E[S^2]/2E[S] = %.0f us", R),      kg(x) with lines lw 2 dt 2 lc rgb "#d62728" title sprintf("Kingman G/G/1, measured ca2 (median %.1f): (ca2+cs2)/2 E[S] = %.0f us", CA2, V),      "demo.dat" using 1:($2 > 0 ? $2 : 1/0) with points pt 7 ps 1.5 lc rgb "black" title "measured (receive - server stamp - transport)",      "demo.dat" using 1:3 with points pt 6 ps 1.5 lc rgb "#1f77b4" title "PK from each step's own moments",      "demo.dat" using 1:8 with points pt 4 ps 1.5 lc rgb "#d62728" title "Kingman from each step's own ca2 and moments"
