# nginx on a free loopback port, for the tests and the benchmarks: the one
# launcher (sourced). scripts/lib/nginx_sse.sh (a fixed SSE stream) and
# scripts/lib/nginx_tls.sh (a TLS terminator) write its configuration.
#   nginx_launch DIR CONF_FN SCHEME PATH [curl args...]
#       DIR must exist. For up to 10 free ports: CONF_FN DIR PORT writes
#       DIR/nginx.conf, nginx starts with DIR as its prefix, and the launch
#       waits up to 5 s for `curl -s -o /dev/null [curl args] SCHEME://
#       127.0.0.1:PORT PATH` to answer. Sets NGINX_PID and NGINX_URL
#       (SCHEME://127.0.0.1:PORT); returns 1, saying why, when nginx is not
#       installed or not up (a port taken meanwhile is tried again).
#   nginx_conf_head DIR   prints the configuration's common part, up to
#       inside `http {` (one worker, no daemon, logs and temporary files in
#       DIR, long keep-alive)
#   nginx_stop   TERM to the master, which ends its workers (a KILL would
#                orphan them)
# shellcheck shell=bash
nginx_launch() {
  local dir=$1 conf_fn=$2 scheme=$3 path=$4
  shift 4
  command -v nginx >/dev/null || { echo "nginx is not installed (scripts/setup.sh installs nginx-light)" >&2; return 1; }
  mkdir -p "$dir/logs"
  local port
  for _ in $(seq 1 10); do
    port=$((20000 + RANDOM % 30000))
    ss -ltn "( sport = :$port )" 2>/dev/null | grep -q ":$port" && continue
    "$conf_fn" "$dir" "$port"
    : >"$dir/logs/error.log"
    nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/logs/stderr" &
    NGINX_PID=$!
    NGINX_URL="$scheme://127.0.0.1:$port"
    for _ in $(seq 1 100); do
      kill -0 "$NGINX_PID" 2>/dev/null || break
      grep -q 'Address already in use' "$dir/logs/error.log" "$dir/logs/stderr" 2>/dev/null && break
      curl -s -o /dev/null "$@" "$NGINX_URL$path" && return 0
      sleep 0.05
    done
    nginx_stop
    grep -q 'Address already in use' "$dir/logs/error.log" "$dir/logs/stderr" 2>/dev/null || break
  done
  echo "nginx did not start: $(cat "$dir/logs/stderr" "$dir/logs/error.log" 2>/dev/null | tail -n 3)" >&2
  return 1
}

nginx_stop() {
  [ -n "${NGINX_PID:-}" ] || return 0
  kill -TERM "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=""
}

nginx_conf_head() {
  local dir=$1
  cat <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
CONF
}
