# nginx as a TLS terminator in front of a plain-HTTP server (simserver), on a
# free loopback port, with a self-signed certificate made for the run
# (openssl; CN and subjectAltName 127.0.0.1). Streams pass through unbuffered
# (proxy_buffering off), over HTTP/1.1 keep-alive connections upstream.
# Sourced by the tests.
#   nginx_tls_start DIR UPSTREAM_URL [CLIENT_CA]
#                                      with CLIENT_CA (a PEM), mutual TLS:
#                                      a client must present a certificate
#                                      it signed (nginx answers 400 else);
#                                      sets NGINX_PID, NGINX_URL
#                                      (https://127.0.0.1:PORT) and
#                                      NGINX_TLS_CERT (the PEM to trust);
#                                      returns 1, saying why, when nginx or
#                                      openssl is missing or nginx is not up
#   nginx_tls_stop                     stops it (nginx_stop)
# shellcheck shell=bash
source "$(dirname "${BASH_SOURCE[0]}")/nginx.sh"
nginx_tls_start() {
  local dir=$1
  NGINX_TLS_UPSTREAM=${2#http://} NGINX_TLS_CLIENT_CA=${3:-}
  command -v openssl >/dev/null || { echo "openssl is not installed (scripts/setup.sh installs it)" >&2; return 1; }
  mkdir -p "$dir/logs"
  dir=$(cd "$dir" && pwd) # nginx reads relative paths from its prefix
  NGINX_TLS_CERT="$dir/cert.pem"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$dir/key.pem" -out "$NGINX_TLS_CERT" \
    >"$dir/logs/openssl" 2>&1 || { echo "openssl could not make a certificate: $(tail -n 2 "$dir/logs/openssl")" >&2; return 1; }
  nginx_launch "$dir" nginx_tls_conf https /health --cacert "$NGINX_TLS_CERT"
}

nginx_tls_stop() { nginx_stop; }

# nginx_tls_conf DIR PORT: the configuration (upstream: NGINX_TLS_UPSTREAM).
nginx_tls_conf() {
  local dir=$1 port=$2
  {
    nginx_conf_head "$dir"
    cat <<CONF
  upstream sim { server $NGINX_TLS_UPSTREAM; keepalive 64; }
  server {
    listen 127.0.0.1:$port ssl;
    ssl_certificate $dir/cert.pem;
    ssl_certificate_key $dir/key.pem;
${NGINX_TLS_CLIENT_CA:+    ssl_verify_client on;
    ssl_client_certificate $NGINX_TLS_CLIENT_CA;}
    location / {
      proxy_pass http://sim;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 60s;
    }
  }
}
CONF
  } >"$dir/nginx.conf"
}
