# loadgen's end-to-end tests: real simserver and loadgen processes on
# loopback (port 0), a few seconds each. The scripts live in e2e/.
foreach(t basic faults same_arrivals sigint dead_server worker_crash certificate cli modes verdict)
  rb_e2e_test(lg_e2e_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${t}.sh TIMEOUT 120)
endforeach()
