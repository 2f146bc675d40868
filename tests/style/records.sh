#!/usr/bin/env bash
# The README's tables, and those of every other file that quotes records
# (scripts/records.sh's RECORD_FILES: --all), equal the committed records they cite, and the records tool catches a
# figure typed over one (checked on a copy).
set -euo pipefail
src=${RB_SOURCE_DIR:?}
bash "$src/scripts/records.sh" --check --all
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts" "$tmp/results"
cp "$src/scripts/records.sh" "$tmp/scripts/"
printf '| a | b |\n| --- | --- |\n| 1 | 2 |\n' >"$tmp/results/t.md"
printf 'x\n<!-- record: results/t.md -->\n| a | b |\n| --- | --- |\n| 1 | 3 |\n<!-- /record -->\ny\n' >"$tmp/README.md"
if bash "$tmp/scripts/records.sh" --check "$tmp/README.md" 2>/dev/null; then
  echo "FAIL: an edited figure passed the check"; exit 1
fi
bash "$tmp/scripts/records.sh" "$tmp/README.md" >/dev/null
grep -q '^| 1 | 2 |$' "$tmp/README.md" || { echo "FAIL: the block was not rewritten"; exit 1; }
bash "$tmp/scripts/records.sh" --check "$tmp/README.md" >/dev/null
printf 'x\n<!-- record: results/missing.md -->\n<!-- /record -->\n' >"$tmp/README.md"
if bash "$tmp/scripts/records.sh" --check "$tmp/README.md" 2>/dev/null; then
  echo "FAIL: a missing record passed"; exit 1
fi
# --fresh: a record that names its commit and what it measures passes until
# a later commit changes what it measures; then it is stale and fails.
(
  cd "$tmp"
  git init -q . && git config user.email t@t && git config user.name t
  mkdir -p code && echo 1 >code/a.c && git add -A && git commit -qm one
  c=$(git rev-parse --short HEAD)
  printf -- '- commit %s\n- measures: code\n| 1 | 2 |\n' "$c" >results/t.md
  printf 'x\n<!-- record: results/t.md -->\n<!-- /record -->\n' >README.md
  bash scripts/records.sh README.md >/dev/null
  git add -A && git commit -qm record
  bash scripts/records.sh --check --fresh README.md >/dev/null || { echo "FAIL: a current record failed --fresh"; exit 1; }
  # a Markdown file under what it measures (a module's README) changes no figure
  echo notes >code/README.md && git add -A && git commit -qm docs
  bash scripts/records.sh --check --fresh README.md >/dev/null || { echo "FAIL: a docs-only change staled the record"; exit 1; }
  # what it measures changed but not yet committed: stale already, so a
  # README rewritten before the commit is still right after it
  echo 2 >code/a.c
  if bash scripts/records.sh --check --fresh README.md 2>/dev/null >/dev/null; then
    echo "FAIL: a record whose code has an uncommitted change passed --fresh"; exit 1
  fi
  git commit -qam change
  if bash scripts/records.sh --check --fresh README.md 2>"$tmp/stale.err"; then
    echo "FAIL: a stale record passed --fresh"; exit 1
  fi
  grep -q "results/t.md is stale" "$tmp/stale.err" || { echo "FAIL: the message: $(cat "$tmp/stale.err")"; exit 1; }
  # without --fresh: the README must say the record is not current
  if bash scripts/records.sh --check README.md 2>/dev/null >/dev/null; then
    echo "FAIL: a README quoting a stale record without saying so passed --check"; exit 1
  fi
  bash scripts/records.sh README.md >/dev/null
  grep -q "^> \*\*Not current:\*\* results/t.md: measured at $c, and code changed since" README.md ||
    { echo "FAIL: no 'Not current' line: $(cat README.md)"; exit 1; }
  bash scripts/records.sh --check README.md >/dev/null || { echo "FAIL: the rewritten README failed --check"; exit 1; }
  # re-measured and committed with the change: current again, the line gone
  echo 3 >code/a.c && printf -- '- commit %s\n- measures: code\n| 1 | 3 |\n' "$c" >results/t.md
  bash scripts/records.sh README.md >/dev/null && git add -A && git commit -qm "re-measured with the change"
  bash scripts/records.sh --check --fresh README.md >/dev/null || { echo "FAIL: a record committed with its change failed --fresh"; exit 1; }
  ! grep -q "Not current" README.md || { echo "FAIL: the 'Not current' line stayed"; exit 1; }
  printf -- '| 1 | 2 |\n' >results/t.md && bash scripts/records.sh README.md >/dev/null
  if bash scripts/records.sh --check --fresh README.md 2>/dev/null; then
    echo "FAIL: a record naming no commit passed --fresh"; exit 1
  fi
) || exit 1
echo "records: ok"
