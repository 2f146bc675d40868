# gnuplot script for table.dat (run from /tmp/r71/results/paper: gnuplot plots.gp)
set terminal pngcairo size 900,560 noenhanced font ",11"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set grid ytics
set key top left
set xlabel "target rate (requests/s, Poisson)"
set output "achieved.png"
set title "Achieved rate: the same Poisson arrivals offered by three clients"
set ylabel "achieved requests/s"
set yrange [0:*]
plot "table.dat" using 2:xtic(1) title "loadgen k=1", "" using 3 title "loadgen k=2",      "" using 4 title "asyncio-emulated (k=1, 50 us/event)"
set output "client_delay.png"
set title "Client delay per token, p99 (delivery - kernel receive time)"
set ylabel "ms (log scale)"
set logscale y
set yrange [0.01:*]
plot "table.dat" using 5:xtic(1) title "loadgen k=1", "" using 6 title "loadgen k=2",      "" using 7 title "asyncio-emulated (k=1, 50 us/event)"
