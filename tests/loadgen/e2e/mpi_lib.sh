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
# kill_rank_once_sending R: kill -9 of this run's rank R (the loadgen whose
# record part "$WORK/.m.json.w0.<pid>.part" is here and whose environment
# names rank R) once that part holds records, i.e. once it has sent requests.
kill_rank_once_sending() {
  local want=$1 victim="" part p
  for _ in $(seq 1 300); do
    for part in "$WORK"/.m.json.w0.*.part; do
      [ -s "$part" ] || continue
      p=${part%.part}
      p=${p##*.}
      if { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$want"; then
        victim=$p
      fi
    done
    [ -n "$victim" ] && break
    sleep 0.05
  done
  [ -n "$victim" ] || fail "rank $want never started sending"
  kill -9 "$victim"
}
