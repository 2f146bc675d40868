#!/usr/bin/env bash
# Benchmarks simserver's own speed: wrk (closed loop) asks for a streamed
# 16-token completion, once from simserver (--workers 1, zero latency) and
# once from nginx serving the very same response bytes as a static file, side
# by side, several times. Writes results/simserver/bench.md and bench.json.
#   scripts/bench_simserver.sh [--build-dir DIR] [--duration S] [--reps N]
#                              [--connections N] [--threads N] [--out DIR]
# Loopback only; every run is bounded by --duration.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build"
duration=10
reps=3
conns=64
threads=1
out="$here/results/simserver"
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --reps) reps="$2"; shift 2 ;;
    --connections) conns="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    *) echo "bench_simserver.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
sim="$build/simserver/simserver"
[ -x "$sim" ] || { echo "bench_simserver.sh: no simserver at $sim (build first)" >&2; exit 2; }
# Server on CPU 0, wrk on CPU 1 (when the box has two), the same for both
# servers, so the client and the server do not trade places on a core.
pin_srv=()
pin_cli=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_srv=(taskset -c 0)
  pin_cli=(taskset -c 1)
fi
for tool in wrk nginx curl jq; do
  command -v "$tool" >/dev/null || { echo "bench_simserver.sh: '$tool' is needed" >&2; exit 2; }
done

tmp=$(mktemp -d)
sim_pid=""
nginx_pid=""
cleanup() {
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  [ -n "$nginx_pid" ] && kill "$nginx_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

body='{"model":"sim-model","prompt":"The quick brown fox jumps over the lazy dog","max_tokens":16,"stream":true}'
cat >"$tmp/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
EOF

# simserver, zero latency, one worker, on the server's CPU
# (scripts/lib/sim.sh: SIM_WRAP carries the pinning).
source "$here/scripts/lib/sim.sh"
rc=0
SIM_WRAP="${pin_srv[*]}" sim_start "$tmp" sim "$sim" --workers 1 || rc=$?
sim_pid=$SIM_PID
[ "$rc" -eq 0 ] || exit 1
sim_url=$SIM_URL

# The same response bytes as a static file for nginx.
mkdir -p "$tmp/www/v1" "$tmp/nginx"
curl -sS -N "$sim_url/v1/completions" -d "$body" >"$tmp/www/v1/completions"
resp_bytes=$(wc -c <"$tmp/www/v1/completions")
# nginx's worker may run as an unprivileged user: let it read the file.
chmod a+rx "$tmp" "$tmp/www" "$tmp/www/v1"
chmod a+r "$tmp/www/v1/completions"

# A free loopback port for nginx.
nginx_port=""
for _ in $(seq 1 50); do
  p=$((20000 + RANDOM % 40000))
  if ! ss -Htln | awk '{ print $4 }' | grep -q ":$p\$"; then nginx_port=$p; break; fi
done
[ -n "$nginx_port" ] || { echo "no free port for nginx" >&2; exit 1; }
cat >"$tmp/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  keepalive_requests 100000000;
  # nginx at its best: file descriptors and stat results cached, sendfile.
  open_file_cache max=64 inactive=60s;
  open_file_cache_valid 60s;
  sendfile on;
  server {
    listen 127.0.0.1:$nginx_port;
    location / {
      root $tmp/www;
      default_type text/event-stream;
      # The static module refuses POST with 405; answer it with the file.
      error_page 405 =200 \$uri;
    }
  }
}
EOF
"${pin_srv[@]}" nginx -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log" 2>"$tmp/nginx/start.err" &
nginx_pid=$!
nginx_url="http://127.0.0.1:$nginx_port"
for _ in $(seq 1 100); do curl -s -o /dev/null "$nginx_url/v1/completions" -d x && break; sleep 0.05; done
if ! cmp -s <(curl -sS "$nginx_url/v1/completions" -d "$body") "$tmp/www/v1/completions"; then
  echo "nginx does not answer the POST with the file" >&2
  cat "$tmp/nginx/start.err" "$tmp/nginx/error.log" >&2
  exit 1
fi

# run_wrk URL: prints "rate non2xx errors".
run_wrk() {
  "${pin_cli[@]}" wrk -t "$threads" -c "$conns" -d "${duration}s" -s "$tmp/post.lua" "$1/v1/completions" >"$tmp/wrk.txt" 2>&1
  local rate non2xx errs
  rate=$(awk '/^Requests\/sec:/ { print $2 }' "$tmp/wrk.txt")
  non2xx=$(awk '/Non-2xx or 3xx responses:/ { print $NF }' "$tmp/wrk.txt")
  errs=$(awk -F'[ ,]+' '/Socket errors:/ { print $4 + $6 + $8 + $10 }' "$tmp/wrk.txt")
  echo "${rate:-0} ${non2xx:-0} ${errs:-0}"
}

sim_rates=()
nginx_rates=()
ratios=()
problems=0
for i in $(seq 1 "$reps"); do
  # Alternate which server goes first, so neither always gets the warmer box.
  if [ $((i % 2)) -eq 1 ]; then
    read -r s s_bad s_err < <(run_wrk "$sim_url")
    read -r n n_bad n_err < <(run_wrk "$nginx_url")
  else
    read -r n n_bad n_err < <(run_wrk "$nginx_url")
    read -r s s_bad s_err < <(run_wrk "$sim_url")
  fi
  r=$(awk -v s="$s" -v n="$n" 'BEGIN { printf "%.3f", (n > 0 ? s / n : 0) }')
  echo "rep $i: simserver $s req/s, nginx $n req/s, ratio $r (non-2xx/errors: $s_bad/$s_err, $n_bad/$n_err)" >&2
  problems=$((problems + s_bad + s_err + n_bad + n_err))
  sim_rates+=("$s")
  nginx_rates+=("$n")
  ratios+=("$r")
done
median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
sim_med=$(median "${sim_rates[@]}")
nginx_med=$(median "${nginx_rates[@]}")
ratio_med=$(median "${ratios[@]}")

cpu=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
cores=$(nproc)
kernel=$(uname -sr)
nginx_ver=$(nginx -v 2>&1 | sed 's/^nginx version: //')
wrk_ver=$( (wrk -v 2>&1 || true) | head -n 1 | awk '{ print $2 }')
sim_ver="$("$sim" --version) (commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown))"
when=$(date -u +%Y-%m-%dT%H:%M:%SZ)
load=$(cut -d' ' -f1-3 /proc/loadavg)
cmd="scripts/bench_simserver.sh --duration $duration --reps $reps --connections $conns --threads $threads"
wrk_cmd="wrk -t $threads -c $conns -d ${duration}s -s post.lua URL/v1/completions"

mkdir -p "$out"
jq -n --arg when "$when" --arg cmd "$cmd" --arg wrk_cmd "$wrk_cmd" --arg cpu "$cpu" --argjson cores "$cores" \
  --arg kernel "$kernel" --arg nginx "$nginx_ver" --arg wrk "$wrk_ver" --arg sim "$sim_ver" \
  --argjson resp_bytes "$resp_bytes" --arg body "$body" \
  --argjson sim_rates "[$(IFS=,; echo "${sim_rates[*]}")]" \
  --argjson nginx_rates "[$(IFS=,; echo "${nginx_rates[*]}")]" \
  --argjson ratios "[$(IFS=,; echo "${ratios[*]}")]" \
  --argjson sim_med "$sim_med" --argjson nginx_med "$nginx_med" --argjson ratio_med "$ratio_med" \
  --argjson problems "$problems" --arg load "$load" --argjson pinned "$([ ${#pin_srv[@]} -gt 0 ] && echo true || echo false)" \
  '{date: $when, command: $cmd, wrk_command: $wrk_cmd, request_body: $body, response_body_bytes: $resp_bytes,
    host: {cpu_model: $cpu, cores_online: $cores, kernel: $kernel, loadavg_at_end: $load},
    pinned: $pinned,
    versions: {simserver: $sim, nginx: $nginx, wrk: $wrk},
    simserver_request_throughput: $sim_rates, nginx_request_throughput: $nginx_rates, ratio: $ratios,
    median_simserver_request_throughput: $sim_med, median_nginx_request_throughput: $nginx_med,
    median_ratio: $ratio_med, non_2xx_or_socket_errors: $problems}' >"$out/bench.json.tmp.$$"
mv "$out/bench.json.tmp.$$" "$out/bench.json"

{
  echo "# simserver against nginx: request rate"
  echo
  echo "Run $when with \`$cmd\`."
  echo
  echo "Each repetition runs \`$wrk_cmd\` (closed loop, $conns connections, ${duration} s)"
  echo "against simserver (\`--workers 1\`, zero latency) and against nginx $nginx_ver"
  echo "(\`worker_processes 1\`, \`open_file_cache\`, \`sendfile on\`) serving the same $resp_bytes"
  echo "response bytes as a static file (POST answered through \`error_page 405 =200 \$uri\`),"
  echo "one after the other, the first one alternating between repetitions. The request is a streamed"
  echo "16-token completion: \`$body\`."
  if [ ${#pin_srv[@]} -gt 0 ]; then
    echo "Client and server share the machine: each server runs on CPU 0 (\`taskset -c 0\`), wrk on CPU 1."
  else
    echo "Client and server share the machine (not pinned)."
  fi
  echo
  echo "| rep | simserver req/s | nginx req/s | ratio |"
  echo "| --- | --- | --- | --- |"
  for i in $(seq 0 $((reps - 1))); do
    echo "| $((i + 1)) | ${sim_rates[$i]} | ${nginx_rates[$i]} | ${ratios[$i]} |"
  done
  echo "| **median** | **$sim_med** | **$nginx_med** | **$ratio_med** |"
  echo
  echo "Non-2xx responses and socket errors over all runs: $problems."
  echo
  echo "Machine: $cpu, $cores cores online, $kernel; wrk $wrk_ver; $sim_ver."
  echo "Load average at the end of the run (1, 5, 15 min): $load (other work on the box skews both servers)."
  echo
  echo "simserver frames the stream with chunked transfer encoding and builds every"
  echo "response (JSON parsing of the request, the prefix-cache lookup, 16 chunks, usage"
  echo "accounting, metrics) per request; nginx sends a cached file with Content-Length."
} >"$out/bench.md.tmp.$$"
mv "$out/bench.md.tmp.$$" "$out/bench.md"
echo "simserver $sim_med req/s, nginx $nginx_med req/s, median ratio $ratio_med -> $out/bench.md" >&2
