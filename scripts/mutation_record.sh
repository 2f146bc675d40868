#!/usr/bin/env bash
# The mutation check's record, and the proof that it is current.
#   scripts/mutation_record.sh            runs scripts/mutate.sh and writes
#       results/tests/mutation.md (every mutant) and mutation-summary.md (per
#       file; the README copies it), with the command, commit, machine, load;
#   scripts/mutation_record.sh --add
#       runs only the mutants the record lacks, drops the rows of mutants that
#       no longer exist, and rewrites the record in the check's order (the
#       header then names both runs' commits);
#   scripts/mutation_record.sh --check OUT
#       compares the table of a mutate.sh run's output OUT (as CI ran it) with
#       the record's, mutant by mutant (id, file, tests, result; not the
#       seconds): exit 1, naming the rows that differ, when the record is
#       stale (a mutant judged otherwise, or a mutant of mutate.sh --list
#       that the record lacks or the record has and the list does not). OUT
#       may hold a part of the mutants (--plan's sample): each of its rows
#       must equal the record's, and the lists are compared whole.
#   scripts/mutation_record.sh --plan
#       prints the mutants CI runs, one id a line, and why on stderr: every
#       mutant when anything a mutant or a test reads changed since the
#       commit the record measured (any path but results/, *.md, .ci/,
#       this script, records.sh and the benchmarks scripts/bench_*.sh, which
#       no test runs), when that commit is not in this
#       history, or with RHOBENCH_MUTATE_FULL=1; else one in
#       RHOBENCH_MUTATE_SAMPLE (default 5), chosen by HEAD's hash, so that
#       successive commits re-run different parts of a record that the code
#       has not moved away from (a full run of it re-judges the same code).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rec="$here/results/tests/mutation.md" sum="$here/results/tests/mutation-summary.md"
rows() { grep '^| [a-z0-9]' "$1" | grep -v '^| mutant |' | awk -F' [|] ' '{ print $1 " | " $2 " | " $3 " | " $4 }' | sort; }
if [ "${1:-}" = --check ]; then
  out=${2:?usage: mutation_record.sh --check OUTPUT}
  [ -f "$rec" ] || { echo "mutation_record: no $rec" >&2; exit 1; }
  ids_of() { awk -F' [|] ' '{ sub(/^[|] /, "", $1); print $1 }' | sort; }
  # the run's rows, each against the record's row of the same mutant
  stale=$(awk -F' [|] ' 'NR == FNR { r[$1] = $0; next }
            !($1 in r) { print "> " $0 " (the record has no such mutant)"; next }
            r[$1] != $0 { print "< " r[$1]; print "> " $0 }' <(rows "$rec") <(rows "$out")) || true
  # the mutants of the check against the record's, as lists
  lists=$(diff <(rows "$rec" | ids_of) <(bash "$here/scripts/mutate.sh" --list | cut -f1 | sort) | grep '^[<>]' |
          sed 's/^</< in the record, not in mutate.sh:/; s/^>/> in mutate.sh, not in the record:/') || true
  n=$(rows "$out" | wc -l)
  if [ -n "$stale" ] || [ -n "$lists" ] || [ "$n" -eq 0 ]; then
    echo "mutation_record: results/tests/mutation.md is stale against this run (< record, > run):" >&2
    { [ -z "$stale" ] || echo "$stale"; [ -z "$lists" ] || echo "$lists"; [ "$n" -gt 0 ] || echo "the run has no mutant rows"; } | head -n 40 >&2
    echo "mutation_record: re-record with scripts/mutation_record.sh" >&2
    exit 1
  fi
  echo "mutation_record: results/tests/mutation.md matches this run ($n of $(rows "$rec" | wc -l) mutants)"
  exit 0
fi
if [ "${1:-}" = --plan ]; then
  [ $# -eq 1 ] || { echo "mutation_record: usage: mutation_record.sh --plan" >&2; exit 2; }
  every=${RHOBENCH_MUTATE_SAMPLE:-5}
  [[ "$every" =~ ^[1-9][0-9]*$ ]] || { echo "mutation_record: RHOBENCH_MUTATE_SAMPLE: a positive integer, got '$every'" >&2; exit 2; }
  mapfile -t all < <(bash "$here/scripts/mutate.sh" --list | cut -f1)
  rcommit=$(sed -n 's/^- date: .*; commit \([0-9a-f]*\).*/\1/p' "$rec" 2>/dev/null | head -n 1)
  why=""
  if [ "${RHOBENCH_MUTATE_FULL:-0}" = 1 ]; then
    why="RHOBENCH_MUTATE_FULL=1"
  elif [ -z "$rcommit" ] || ! git -C "$here" merge-base --is-ancestor "$rcommit" HEAD 2>/dev/null; then
    why="the record's commit (${rcommit:-none}) is not in this history"
  else
    moved=$({ git -C "$here" diff --name-only "$rcommit" HEAD; git -C "$here" diff --name-only HEAD; \
              git -C "$here" ls-files --others --exclude-standard; } |
            grep -Ev '^(results/|\.ci/|scripts/mutation_record\.sh$|scripts/records\.sh$|scripts/bench_[a-z_]*\.sh$)|\.md$' |
            sort -u | head -n 5) || true
    [ -z "$moved" ] || why="since the record's commit $rcommit, $(echo "$moved" | paste -sd ' ') changed"
  fi
  if [ -n "$why" ] || [ "$every" -eq 1 ]; then
    echo "mutation_record: every mutant (${#all[@]}): ${why:-a sample of 1 in 1}" >&2
    printf '%s\n' "${all[@]}"
    exit 0
  fi
  off=$(( 16#$(git -C "$here" rev-parse HEAD | cut -c1-7) % every ))
  n=0
  for i in "${!all[@]}"; do
    if [ $(( (i + off) % every )) -eq 0 ]; then echo "${all[$i]}"; n=$((n + 1)); fi
  done
  echo "mutation_record: $n of ${#all[@]} mutants (1 in $every, part $off of HEAD's hash): nothing a mutant or a test reads changed since the record's commit $rcommit" >&2
  exit 0
fi
add=0
[ "${1:-}" != --add ] || { add=1; shift; }
[ $# -eq 0 ] || { echo "mutation_record: usage: mutation_record.sh [--add | --check OUTPUT | --plan]" >&2; exit 2; }
tmp=$(mktemp "$rec.XXXXXX") tsum=$(mktemp "$sum.XXXXXX") out=$(mktemp)
trap 'rm -f "$tmp" "$tsum" "$out"' EXIT
load0=$(cut -d' ' -f1-3 /proc/loadavg) start=$(date -u +%FT%TZ) t0=$(date +%s)
rc=0
ids=()
if [ "$add" -eq 1 ]; then
  [ -f "$rec" ] || { echo "mutation_record: --add needs an existing $rec" >&2; exit 2; }
  mapfile -t ids < <(comm -23 <(bash "$here/scripts/mutate.sh" --list | cut -f1 | sort) \
                              <(rows "$rec" | awk -F' [|] ' '{ sub(/^[|] /, "", $1); print $1 }' | sort))
  [ ${#ids[@]} -gt 0 ] || { echo "mutation_record: the record has every mutant already" >&2; ids=(); }
fi
if [ "$add" -eq 0 ] || [ ${#ids[@]} -gt 0 ]; then
  bash "$here/scripts/mutate.sh" "${ids[@]}" >"$out" || rc=$?
else
  : >"$out"
fi
if [ "$add" -eq 1 ]; then
  # The old rows of mutants that still exist, and the new ones, in --list order.
  prev_commit=$(sed -n 's/^- date: .*; commit \([0-9a-f]*\).*/\1/p' "$rec" | head -n 1)
  merged=$(mktemp)
  { grep '^| [a-z0-9]' "$rec" | grep -v '^| mutant |'; grep '^| [a-z0-9]' "$out" | grep -v '^| mutant |'; } >"$merged.rows"
  {
    echo "| mutant | file | tests | result | s |"
    echo "| --- | --- | --- | --- | ---: |"
    bash "$here/scripts/mutate.sh" --list | cut -f1 | while read -r id; do
      grep -m1 "^| $id | " "$merged.rows" || true
    done
  } >"$merged"
  k=$(grep -c '| killed |' "$merged" || true) sv=$(grep -c '| SURVIVED |' "$merged" || true)
  { cat "$merged"; echo; echo "mutants: $k killed, $sv survived"; } >"$out"
  rm -f "$merged" "$merged.rows"
  [ "$sv" -eq 0 ] || rc=1
fi
load1=$(cut -d' ' -f1-3 /proc/loadavg) secs=$(( $(date +%s) - t0 ))
commit=$(git -C "$here" rev-parse --short HEAD)
dirty=""
git -C "$here" diff --quiet HEAD -- . ':!results' || dirty=" (with uncommitted changes)"
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
last=$(tail -n 1 "$out")
{
  echo "# Mutation check"
  echo
  if [ "$add" -eq 1 ]; then
    echo "- command: \`bash scripts/mutate.sh\` at $prev_commit, then the ${#ids[@]} mutants it lacked at $commit (exit $rc), by \`scripts/mutation_record.sh --add\`"
  else
    echo "- command: \`bash scripts/mutate.sh\` (exit $rc), recorded by \`scripts/mutation_record.sh\`"
  fi
  echo "- date: $start; commit $commit$dirty; $cpu, $(nproc) CPUs, Linux $(uname -r); load average $load0 before, $load1 after"
  echo "- $(rows "$out" | wc -l) mutants in $secs s"
  echo
  grep '^|' "$out"
  echo
  echo "$last"
} >"$tmp"
{
  echo "**Mutation check** ([results/tests/mutation.md](results/tests/mutation.md), every mutant with its file and tests): \`bash scripts/mutate.sh\` at commit $commit on $start, exit $rc: **${last#mutants: }**."
  echo
  echo "| file | mutants | killed |"
  echo "| --- | ---: | ---: |"
  rows "$out" | awk -F' [|] ' '{ n[$2]++; if ($4 == "killed") k[$2]++ } END { for (f in n) printf "| %s | %d | %d |\n", f, n[f], k[f] + 0 }' | sed 's/^| | /| /' | sort
  echo
  echo "- measures: scripts/mutate.sh (the mutants; CI's own run of the check is compared with this record, mutant by mutant)"
} >"$tsum"
mv "$tmp" "$rec"
mv "$tsum" "$sum"
echo "mutation_record: wrote $rec and $sum ($last)"
exit "$rc"
