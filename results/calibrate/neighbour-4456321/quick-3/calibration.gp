# rhobench calibration plot; run: gnuplot calibration.gp
set terminal pngcairo size 1000,650 noenhanced font ",11"
set output 'calibration.png'
set title 'Client delay per token vs its utilisation (budget 100 us over transport)'
set xlabel 'utilisation rho per worker (measured)'
set ylabel 'client delay per token, mean (us)'
set grid
set key top right box opaque
set logscale y
set xrange [0:1]
set x2range [0:5856.58]
set x2tics
set x2label 'requests/s of the reference workload (k=1, all workers)'
set object 1 rect from first 0, graph 0 to first 0.560508, graph 1 fc rgb '#1f77b4' fs transparent solid 0.08 noborder behind
set label 1 'certified k=1: rho <= 0.561' at first 0.560508, graph 0.95 left offset 0.5,0 tc rgb '#1f77b4'
set arrow 1 from graph 0, first 115.459 to graph 1, first 115.459 nohead dt 2 lc rgb '#1f77b4'
set object 2 rect from first 0, graph 0 to first 0.284864, graph 1 fc rgb '#d62728' fs transparent solid 0.08 noborder behind
set label 2 'certified k=2: rho <= 0.285' at first 0.284864, graph 0.90 left offset 0.5,0 tc rgb '#d62728'
set arrow 2 from graph 0, first 113.747 to graph 1, first 113.747 nohead dt 2 lc rgb '#d62728'
plot \
  'calibration.dat' index 1 using 1:3:4 with filledcurves fc rgb '#1f77b4' fs transparent solid 0.2 notitle, \
  'calibration.dat' index 0 using 1:($6 == 1 ? $3 : 1/0):($1 - ($2 == $2 ? $2 : 0)):($1 + ($2 == $2 ? $2 : 0)):($3 - ($4 == $4 ? $4 : 0)):($3 + ($4 == $4 ? $4 : 0)) with xyerrorbars pt 7 lc rgb '#1f77b4' title 'k=1 levels (95%)', \
  'calibration.dat' index 0 using 1:($6 == 0 ? $3 : 1/0) with points pt 6 ps 1.3 lc rgb '#1f77b4' title 'k=1 saturated', \
  'calibration.dat' index 1 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'k=1 fit', \
  'calibration.dat' index 3 using 1:3:4 with filledcurves fc rgb '#d62728' fs transparent solid 0.2 notitle, \
  'calibration.dat' index 2 using 1:($6 == 1 ? $3 : 1/0):($1 - ($2 == $2 ? $2 : 0)):($1 + ($2 == $2 ? $2 : 0)):($3 - ($4 == $4 ? $4 : 0)):($3 + ($4 == $4 ? $4 : 0)) with xyerrorbars pt 7 lc rgb '#d62728' title 'k=2 levels (95%)', \
  'calibration.dat' index 2 using 1:($6 == 0 ? $3 : 1/0) with points pt 6 ps 1.3 lc rgb '#d62728' title 'k=2 saturated', \
  'calibration.dat' index 3 using 1:2 with lines lw 2 lc rgb '#d62728' title 'k=2 fit'
