# nginx as a foreign server (no X-Sim-Stamp, not ours): on a free loopback
# port it answers every request with one SSE stream of 16 content chunks, a
# usage chunk and [DONE]. Sourced by the benchmarks and the tests.
#   nginx_sse_start DIR INPUT_LEN   sets NGINX_PID and NGINX_URL; returns 1
#                                   when nginx is not installed or not up
#   nginx_sse_stop                  stops it (TERM to the master, which ends
#                                   its workers; a KILL would orphan them)
nginx_sse_start() {
  local dir=$1 input_len=$2
  command -v nginx >/dev/null || { echo "nginx is not installed (scripts/setup.sh installs nginx-light)" >&2; return 1; }
  local body="" i
  for i in $(seq 1 16); do
    body+="data: {\\\"id\\\":\\\"c\\\",\\\"object\\\":\\\"text_completion\\\",\\\"choices\\\":[{\\\"index\\\":0,\\\"text\\\":\\\" tok\\\",\\\"finish_reason\\\":null}]}\\n\\n"
  done
  body+="data: {\\\"id\\\":\\\"c\\\",\\\"choices\\\":[],\\\"usage\\\":{\\\"prompt_tokens\\\":$input_len,\\\"completion_tokens\\\":16,\\\"total_tokens\\\":$((input_len + 16))}}\\n\\n"
  body+="data: [DONE]\\n\\n"
  mkdir -p "$dir/logs"
  local port
  for _ in $(seq 1 10); do
    port=$((20000 + RANDOM % 30000))
    ss -ltn "( sport = :$port )" 2>/dev/null | grep -q ":$port" && continue
    nginx_sse_conf "$dir" "$port" "$body"
    : >"$dir/logs/error.log"
    nginx -p "$dir" -c "$dir/nginx.conf" 2>"$dir/logs/stderr" &
    NGINX_PID=$!
    NGINX_URL="http://127.0.0.1:$port"
    for _ in $(seq 1 100); do
      kill -0 "$NGINX_PID" 2>/dev/null || break
      grep -q 'Address already in use' "$dir/logs/error.log" "$dir/logs/stderr" 2>/dev/null && break
      curl -s -o /dev/null -X POST "$NGINX_URL/v1/completions" && return 0
      sleep 0.05
    done
    nginx_sse_stop
    grep -q 'Address already in use' "$dir/logs/error.log" "$dir/logs/stderr" 2>/dev/null || break
  done
  echo "nginx did not start: $(cat "$dir/logs/stderr" "$dir/logs/error.log" 2>/dev/null | tail -n 3)" >&2
  return 1
}

nginx_sse_stop() {
  [ -n "${NGINX_PID:-}" ] || return 0
  kill -TERM "$NGINX_PID" 2>/dev/null || true
  wait "$NGINX_PID" 2>/dev/null || true
  NGINX_PID=""
}

# nginx_sse_conf DIR PORT BODY: the configuration.
nginx_sse_conf() {
  local dir=$1 port=$2 body=$3
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  server {
    listen 127.0.0.1:$port;
    location / {
      default_type text/event-stream;
      return 200 "$body";
    }
  }
}
CONF
}
