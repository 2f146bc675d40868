#!/usr/bin/env bash
# An https target: loadgen through nginx as a TLS terminator in front of
# simserver (scripts/lib/nginx_tls.sh; a self-signed certificate made for
# the run).
#  - with curl's defaults the certificate is refused: every request fails as
#    `tls`, and the summary names --ca-cert and --insecure;
#  - --ca-cert CERT: every request completes with all its tokens, the
#    warm-ups and the /metrics scrape go over TLS too (all complete, every
#    scrape succeeds), the report says `tls.verify` "ca_cert", the receive
#    clock is the wire's (every token timed by the capture of its TLS
#    record; lg_e2e_wire_tls checks it under load), or where this user may
#    not capture the kernel's with the reason, and the client sees tokens
#    5 ms apart (median, the server's pacing through the proxy);
#  - --receive-clock kernel: every token kernel-timed and none counted exact
#    (ciphertext reads cannot prove an event's time: results/loadgen/
#    tls_clock.md);
#  - --insecure: every request completes, `tls.verify` "off";
#  - mutual TLS (nginx then asks for a client certificate that the test's
#    own CA signed): without --cert every request is refused (HTTP 400),
#    with --cert and --key (and --cacert, curl's spelling) all complete, as
#    they do from an Inference Perf config's server.cert_path and key_path, and
#    the report names the client certificate;
#  - exit 2, naming the flag: --insecure or
#    --ca-cert on plain http, --ca-cert with a file that is not there,
#    --ca-cert with --insecure, --key without --cert, an unreadable --cert.
source "$(dirname "$0")/lib.sh"
source "$RB_SOURCE_DIR/scripts/lib/nginx_tls.sh"
trap 'nginx_tls_stop; cleanup' EXIT
start_sim sim --time-to-first-token 20ms --inter-token-latency 5ms
nginx_tls_start "$WORK/nginx" "$SIM_URL" || fail "nginx (TLS) could not be started"
URL=$NGINX_URL CERT=$NGINX_TLS_CERT
common=(--base-url "$URL" --request-rate 40 --num-prompts 40 --seed 3 --random-input-len 8
  --random-output-len 16 --no-progress --save-result --result-dir "$WORK")

# curl's defaults: the self-signed certificate is refused
"$LOADGEN" "${common[@]}" --num-workers 1 --result-filename refused.json >"$WORK/refused.out" 2>&1 ||
  fail "refused run: exit $?: $(tail -n 5 "$WORK/refused.out")"
jq -e '.completed == 0 and .failed == 40 and .failures_by_class == {"tls": 40}
       and .tls == {"verify": "system", "ca_cert": null, "client_cert": null}' "$WORK/refused.json" >/dev/null ||
  fail "refused certificate: $(jq -c '{completed, failed, failures_by_class, tls}' "$WORK/refused.json")"
grep -q -- "--ca-cert FILE" "$WORK/refused.out" || fail "the summary does not name --ca-cert: $(grep -A3 Failures "$WORK/refused.out")"

# --ca-cert: verified, with warm-ups and the server's metrics over TLS
"$LOADGEN" "${common[@]}" --num-workers 2 --ca-cert "$CERT" --num-warmups 2 --server-metrics target \
  --server-metrics-interval 0.2 --quiet --result-filename ca.json 2>"$WORK/ca.err" ||
  fail "--ca-cert run: exit $?: $(cat "$WORK/ca.err")"
sent_equals_done "$WORK/ca.json"
jq -e --arg cert "$CERT" '.completed == 40 and .failed == 0 and .total_output_tokens == 40 * 16
       and .tls == {"verify": "ca_cert", "ca_cert": $cert, "client_cert": null}
       and ((.receive_clock == "wire" and .receive_clock_wire_share == 1)
            or (.receive_clock == "kernel" and (.receive_clock_fallback_reason | test("CAP_NET_RAW"))
                and .receive_clock_kernel_share == 1 and .receive_clock_exact_share == 0))
       and .warmup.completed == 2 and .warmup.failed == 0
       and .server_metrics.scrapes >= 2 and .server_metrics.failed_scrapes == 0' "$WORK/ca.json" >/dev/null ||
  fail "--ca-cert: $(jq -c '{completed, failed, failures_by_class, tls, receive_clock, receive_clock_fallback_reason, receive_clock_kernel_share, receive_clock_exact_share, warmup, s: (.server_metrics | {scrapes, failed_scrapes, last_error})}' "$WORK/ca.json")"
"$LOADGEN" "${common[@]}" --num-workers 1 --ca-cert "$CERT" --receive-clock kernel --quiet \
  --result-filename kernel.json 2>"$WORK/kernel.err" || fail "kernel-clock run: exit $?: $(cat "$WORK/kernel.err")"
jq -e '.completed == 40 and .receive_clock == "kernel" and .receive_clock_kernel_share == 1
       and .receive_clock_exact_share == 0' "$WORK/kernel.json" >/dev/null ||
  fail "kernel clock through TLS: $(jq -c '{completed, receive_clock, receive_clock_kernel_share, receive_clock_exact_share}' "$WORK/kernel.json")"
itl=$(jnum "$WORK/ca.json" .median_itl_ms)
in_range "$itl" 4 6.5 "median ITL through the TLS terminator (ms; simserver paces 5 ms)"

# --insecure: not verified, and said so
"$LOADGEN" "${common[@]}" --num-workers 1 --insecure --quiet --result-filename insecure.json 2>"$WORK/in.err" ||
  fail "--insecure run: exit $?: $(cat "$WORK/in.err")"
jq -e '.completed == 40 and .failed == 0 and .tls == {"verify": "off", "ca_cert": null, "client_cert": null}' \
  "$WORK/insecure.json" >/dev/null || fail "--insecure: $(jq -c '{completed, failed, failures_by_class, tls}' "$WORK/insecure.json")"

# mutual TLS: a CA of the test's own signs the client's certificate
nginx_tls_stop
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=rhobench test CA" \
  -keyout "$WORK/ca.key" -out "$WORK/ca.pem" >"$WORK/openssl.log" 2>&1 || fail "openssl (CA): $(tail -n 2 "$WORK/openssl.log")"
openssl req -newkey rsa:2048 -nodes -subj "/CN=loadgen" -keyout "$WORK/client.key" -out "$WORK/client.csr" \
  >>"$WORK/openssl.log" 2>&1 || fail "openssl (client request): $(tail -n 2 "$WORK/openssl.log")"
openssl x509 -req -in "$WORK/client.csr" -CA "$WORK/ca.pem" -CAkey "$WORK/ca.key" -CAcreateserial -days 2 \
  -out "$WORK/client.pem" >>"$WORK/openssl.log" 2>&1 || fail "openssl (client certificate): $(tail -n 2 "$WORK/openssl.log")"
nginx_tls_start "$WORK/nginx-mtls" "$SIM_URL" "$WORK/ca.pem" || fail "nginx (mutual TLS) could not be started"
URL=$NGINX_URL CERT=$NGINX_TLS_CERT
mtls=(--base-url "$URL" --cacert "$CERT" --request-rate 40 --num-prompts 20 --seed 3 --random-input-len 8
  --random-output-len 16 --num-workers 1 --no-progress --quiet --save-result --result-dir "$WORK")
"$LOADGEN" "${mtls[@]}" --result-filename nocert.json 2>"$WORK/nocert.err" ||
  fail "mutual TLS without --cert: exit $?: $(cat "$WORK/nocert.err")"
jq -e '.completed == 0 and .failed == 20 and .failures_by_class.http_400 == 20' "$WORK/nocert.json" >/dev/null ||
  fail "mutual TLS without a client certificate: $(jq -c '{completed, failed, failures_by_class}' "$WORK/nocert.json")"
"$LOADGEN" "${mtls[@]}" --cert "$WORK/client.pem" --key "$WORK/client.key" --result-filename mtls.json \
  2>"$WORK/mtls.err" || fail "mutual TLS: exit $?: $(cat "$WORK/mtls.err")"
jq -e --arg c "$WORK/client.pem" '.completed == 20 and .failed == 0 and .total_output_tokens == 20 * 16
       and .tls.verify == "ca_cert" and .tls.client_cert == $c' "$WORK/mtls.json" >/dev/null ||
  fail "mutual TLS: $(jq -c '{completed, failed, failures_by_class, tls}' "$WORK/mtls.json")"
# The same through an Inference Perf config: server.cert_path and key_path
printf 'server:\n  base_url: %s\n  cert_path: %s\n  key_path: %s\n' "$URL" "$WORK/client.pem" \
  "$WORK/client.key" >"$WORK/mtls.yml"
"$LOADGEN" --config "$WORK/mtls.yml" --cacert "$CERT" --request-rate 40 --num-prompts 20 --seed 3 \
  --random-input-len 8 --random-output-len 16 --num-workers 1 --no-progress --quiet --save-result \
  --result-dir "$WORK" --result-filename mtls-cfg.json 2>"$WORK/mtls-cfg.err" ||
  fail "mutual TLS from a config: exit $?: $(cat "$WORK/mtls-cfg.err")"
jq -e --arg c "$WORK/client.pem" '.completed == 20 and .failed == 0 and .tls.client_cert == $c' \
  "$WORK/mtls-cfg.json" >/dev/null ||
  fail "mutual TLS from a config: $(jq -c '{completed, failed, failures_by_class, tls}' "$WORK/mtls-cfg.json")"

# bad input: exit 2, the flag named
refuse() {
  local what=$1 needle=$2 rc=0
  shift 2
  "$LOADGEN" --num-prompts 2 --no-progress "$@" >"$WORK/bad.out" 2>&1 || rc=$?
  [ "$rc" -eq 2 ] && grep -q -- "$needle" "$WORK/bad.out" ||
    fail "$what: exit $rc, expected 2 naming '$needle': $(cat "$WORK/bad.out")"
}
refuse "--insecure on http" "--insecure: applies to https:// only" --base-url "$SIM_URL" --insecure
refuse "--ca-cert on http" "--ca-cert: applies to https:// only" --base-url "$SIM_URL" --ca-cert "$CERT"
refuse "--ca-cert missing" "--ca-cert: cannot read '$WORK/none.pem'" --base-url "$URL" --ca-cert "$WORK/none.pem"
refuse "--ca-cert with --insecure" "--ca-cert: cannot be given with --insecure" --base-url "$URL" --ca-cert "$CERT" --insecure
refuse "--key without --cert" "--key: is the key of a client certificate: give --cert too" --base-url "$URL" --key "$WORK/client.key"
refuse "--cert missing" "--cert: cannot read '$WORK/none.pem'" --base-url "$URL" --cert "$WORK/none.pem"
refuse "--cert on http" "--cert: applies to https:// only" --base-url "$SIM_URL" --cert "$WORK/client.pem"
pass "https through a TLS terminator: refused by default (tls), verified with --ca-cert (requests, warm-ups, scrapes), unverified with --insecure (said), mutual TLS with --cert and --key, median ITL $itl ms"
