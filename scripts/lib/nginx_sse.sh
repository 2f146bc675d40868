# nginx as a foreign server (no X-Sim-Stamp, not ours): on a free loopback
# port it answers every request with one SSE stream of 16 content chunks, a
# usage chunk and [DONE]. Sourced by the benchmarks and the tests.
#   nginx_sse_start DIR INPUT_LEN   sets NGINX_PID and NGINX_URL; returns 1
#                                   when nginx is not installed or not up
#   nginx_sse_stop                  stops it (nginx_stop)
# shellcheck shell=bash
source "$(dirname "${BASH_SOURCE[0]}")/nginx.sh"
nginx_sse_start() {
  local dir=$1 input_len=$2 i
  NGINX_SSE_BODY=""
  for i in $(seq 1 16); do
    NGINX_SSE_BODY+="data: {\\\"id\\\":\\\"c\\\",\\\"object\\\":\\\"text_completion\\\",\\\"choices\\\":[{\\\"index\\\":0,\\\"text\\\":\\\" tok\\\",\\\"finish_reason\\\":null}]}\\n\\n"
  done
  NGINX_SSE_BODY+="data: {\\\"id\\\":\\\"c\\\",\\\"choices\\\":[],\\\"usage\\\":{\\\"prompt_tokens\\\":$input_len,\\\"completion_tokens\\\":16,\\\"total_tokens\\\":$((input_len + 16))}}\\n\\n"
  NGINX_SSE_BODY+="data: [DONE]\\n\\n"
  mkdir -p "$dir"
  nginx_launch "$dir" nginx_sse_conf http /v1/completions -X POST
}

nginx_sse_stop() { nginx_stop; }

# nginx_sse_conf DIR PORT: the configuration (the body: NGINX_SSE_BODY).
nginx_sse_conf() {
  local dir=$1 port=$2
  {
    nginx_conf_head "$dir"
    cat <<CONF
  server {
    listen 127.0.0.1:$port;
    location / {
      default_type text/event-stream;
      return 200 "$NGINX_SSE_BODY";
    }
  }
}
CONF
  } >"$dir/nginx.conf"
}
