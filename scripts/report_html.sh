#!/usr/bin/env bash
# A one-page, self-contained report.html beside a loadgen result JSON: the
# client's verdict and the server's knee at the top, the per-stage table, the
# plots (inline SVG from scripts/plot_run.sh), the certificate's summary and
# the machine facts. Nothing in it is fetched (no scripts, no external
# styles, fonts or images); every string from the JSON is HTML-escaped.
# Called by plot_run.sh after it drew PLOTDIR.
#   scripts/report_html.sh [--certificate CERT.json] RESULT.json PLOTDIR
# Prints the report's path.
set -euo pipefail
usage="usage: report_html.sh [--certificate CERT.json] RESULT.json PLOTDIR"
cert=""
if [ "${1:-}" = "--certificate" ]; then
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  cert=$2; shift 2
fi
if [ $# -ne 2 ]; then echo "$usage" >&2; exit 2; fi
result=$1 plots=$2
here=$(cd "$(dirname "$0")" && pwd)
case "$result" in /* | ./*) ;; *) result="./$result" ;; esac
case "$plots" in /* | ./*) ;; *) plots="./$plots" ;; esac
[ -z "$cert" ] || case "$cert" in /* | ./*) ;; *) cert="./$cert" ;; esac
jq -e . "$result" >/dev/null 2>&1 || { echo "report_html: $result: not JSON" >&2; exit 2; }
bad=$(jq -r -f "$here/lib/result_check.jq" "$result")
[ -z "$bad" ] || { echo "report_html: $result: not a loadgen result the report can read: $bad" >&2; exit 2; }
facts="$plots/plot_facts.json"
[ -r "$facts" ] || { echo "report_html: $facts: not readable (run scripts/plot_run.sh first)" >&2; exit 2; }
if [ -n "$cert" ]; then
  jq -e '.per_k | type == "array"' "$cert" >/dev/null 2>&1 ||
    { echo "report_html: --certificate $cert: not a certificate (no per_k array)" >&2; exit 2; }
fi
html="$(dirname -- "$result")/report.html"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/report_html.XXXXXX")
# The page is written under a name mktemp makes beside it, then renamed
# onto report.html (mv -T: onto a planted link, never through it).
htmltmp=$(mktemp -- "$(dirname -- "$result")/.report.html.XXXXXX")
trap 'rm -rf -- "$tmp" "$htmltmp"' EXIT

# Each drawn SVG, inlined: without its XML prolog, its ids prefixed with the
# plot's name so that the four plots' ids (gnuplot's own) stay distinct.
echo '{}' >"$tmp/svgs.json"
for n in $(jq -r '.drawn // [] | .[]' "$facts"); do
  case "$n" in *[!a-z_]*) continue ;; esac # plot names are plot_run.sh's own words
  svg="$plots/$n.svg"
  [ -r "$svg" ] || continue
  sed -e '/^<?xml/d' -e "s/id=\(['\"]\)/id=\1$n-/g" -e "s/href=\(['\"]\)#/href=\1#$n-/g" "$svg" >"$tmp/$n.svg"
  jq -Rs --arg n "$n" --slurpfile all "$tmp/svgs.json" '$all[0] + {($n): .}' "$tmp/$n.svg" >"$tmp/svgs.next"
  mv "$tmp/svgs.next" "$tmp/svgs.json"
done
certargs=(--argjson c null)
[ -z "$cert" ] || certargs=(--slurpfile c "$cert")
jq -n -r --slurpfile r "$result" --slurpfile f "$facts" --slurpfile svgsf "$tmp/svgs.json" "${certargs[@]}" \
  -f "$here/lib/report_html.jq" >"$htmltmp"
chmod 0644 -- "$htmltmp"
mv -T -- "$htmltmp" "$html"
echo "report_html: wrote $html"
