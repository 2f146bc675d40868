# rhobench calibration plot; run: gnuplot calibration.gp
set terminal pngcairo size 1000,650 noenhanced font ",11"
set output 'calibration.png'
set title 'Client delay per token vs offered rate (budget 100 us over transport)'
set xlabel 'offered rate (requests/s, all workers)'
set ylabel 'client delay per token, mean (us)'
set grid
set key bottom right box opaque
set logscale y
set object 1 rect from graph 0, graph 0 to first 134.453, graph 1 fc rgb '#1f77b4' fs transparent solid 0.10 noborder behind
set arrow 1 from first 134.453, graph 0 to first 134.453, graph 1 nohead dt 2 lc rgb '#1f77b4'
set label 1 'safe k=1: 134/s' at first 134.453, graph 0.95 right offset -0.5,0 tc rgb '#1f77b4'
plot \
  'calibration.dat' index 0 using 1:($8 == 0 ? $3 : 1/0) with points pt 7 ps 1.2 lc rgb '#1f77b4' title 'k=1 measured', \
  'calibration.dat' index 0 using 1:($8 == 1 ? $3 : 1/0) with points pt 6 ps 1.2 lc rgb '#1f77b4' title 'k=1 saturated', \
  'calibration.dat' index 1 using 1:2 with lines lw 2 lc rgb '#1f77b4' title 'k=1 PK fit'
