# MPI helpers of loadgen's end-to-end tests (sourced after lib.sh). MPIRUN
# starts N ranks on this host: Open MPI needs --oversubscribe past the
# cores (and, under root, its two consent variables); MPICH needs neither.
: "${RB_MPIEXEC:=mpirun}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Open MPI: loopback only; the shared-memory and TCP transports.
export OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
MPI_FLAGS=()
case "$("$RB_MPIEXEC" --version 2>&1 || true)" in
  *"Open MPI"* | *OpenRTE*) MPI_FLAGS=(--oversubscribe) ;;
esac
mpirun_np() {
  local n=$1; shift
  "$RB_MPIEXEC" "${MPI_FLAGS[@]}" -np "$n" "$@"
}
