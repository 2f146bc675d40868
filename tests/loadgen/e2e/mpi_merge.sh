#!/usr/bin/env bash
# The exact reduce of stats blocks across 3 ranks equals the in-process
# merge, bucket for bucket (tests/loadgen/mpi_merge.c).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/mpi_lib.sh"
: "${RB_MPI_MERGE:?RB_MPI_MERGE must point at the mpi_merge binary}"
out=$(mpirun_np 3 "$RB_MPI_MERGE") || fail "mpi_merge exited $?: $out"
echo "$out" | grep -q '^PASS: 3 ranks' || fail "mpi_merge: $out"
pass "$out"
