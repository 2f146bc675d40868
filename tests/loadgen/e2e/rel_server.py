#!/usr/bin/env python3
"""A small hostile-or-odd HTTP server for loadgen's rel_* end-to-end tests.

Listens on 127.0.0.1 (port 0), prints 'listening http://127.0.0.1:PORT'.
The first path segment picks the reply:
  /ok/...          a valid SSE completion stream (4 tokens); logs the length
                   of the Authorization and X-Long request headers
  /status/N/...    status N (any three digits) with a JSON error body
  /html/...        200, Content-Type text/html, a body that is a valid SSE stream
  /big/...         200 application/json, a valid non-streamed completion of
                   1.1 MB (past loadgen's 1 MiB body limit)
Every request is counted; the log file gets one line per request.
"""
import http.server
import json
import sys

LOG = sys.argv[1]

CHUNK = 'data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n'
STREAM = (CHUNK * 4 + 'data: {"id":"c","choices":[],"usage":{"prompt_tokens":8,"completion_tokens":4,"total_tokens":12}}\n\n'
          + 'data: [DONE]\n\n').encode()


def big_body():
    text = "x" * (1100 * 1000)
    return json.dumps({"id": "c", "object": "text_completion",
                       "choices": [{"index": 0, "text": text, "finish_reason": "length"}],
                       "usage": {"prompt_tokens": 8, "completion_tokens": 4, "total_tokens": 12}}).encode()


BIG = big_body()


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, ctype, body):
        self.send_response_only(code, "Odd")
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        parts = self.path.strip("/").split("/")
        mode = parts[0]
        with open(LOG, "a") as f:
            f.write(json.dumps({"mode": mode,
                                "authorization": len(self.headers.get("Authorization", "")),
                                "x_long": len(self.headers.get("X-Long", ""))}) + "\n")
        if mode == "ok":
            self.reply(200, "text/event-stream", STREAM)
        elif mode == "status":
            self.reply(int(parts[1]), "application/json", b'{"error":{"message":"odd"}}')
        elif mode == "html":
            self.reply(200, "text/html; charset=utf-8", STREAM)
        elif mode == "big":
            self.reply(200, "application/json", BIG)
        else:
            self.reply(404, "application/json", b"{}")


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
srv.daemon_threads = True
print("listening http://127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
