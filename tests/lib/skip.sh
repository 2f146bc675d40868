# skip REASON: the test cannot run on this host (sourced by every test
# library). Under CI=true a skip is never a pass: it fails, with the reason.
# Elsewhere it exits 77, which ctest shows as skipped (SKIP_RETURN_CODE).
# shellcheck shell=bash
skip() {
  if [ "${CI:-}" = true ]; then
    echo "FAIL: (CI=true: a skip is a failure) $*" >&2
    exit 1
  fi
  echo "SKIP: $*"
  exit 77
}
