# gnuplot script for demo.dat (run from results/teaching: gnuplot demo.gp)
set terminal pngcairo size 900,600 noenhanced font ",11"
set output "demo.png"
set title "The client is a queue: waiting time per token against its utilisation rho"
set xlabel "measured utilisation rho of the client's event loop"
set ylabel "client waiting time per token (us, log)"
set logscale y
set grid
set key top left
set xrange [0:1]
R = 342.110
pk(x) = x / (1 - x) * R
set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lc rgb "red"
set label "rho = 1: no steady state" right at 0.98, graph 0.05 tc rgb "red"
plot [0:0.97] pk(x) with lines lw 2 title sprintf("Pollaczek-Khinchine, E[S^2]/2E[S] = %.0f us", R),      "demo.dat" using 1:($2 > 0 ? $2 : 1/0) with points pt 7 ps 1.5 title "measured (receive - server stamp - transport)",      "demo.dat" using 1:3 with points pt 6 ps 1.5 title "PK from each step's own moments"
