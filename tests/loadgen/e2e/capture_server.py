#!/usr/bin/env python3
"""A capture server for loadgen's request tests: on 127.0.0.1 (port 0) it
prints 'listening http://127.0.0.1:PORT', answers every POST with a valid
SSE completion stream (2 tokens, usage), and appends one JSON line per
request to the log file: {"path", "headers": {name: value}, "body": text}.
"""
import http.server
import json
import sys

LOG = sys.argv[1]
STREAM = ('data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":" a","finish_reason":null}]}\n\n'
          'data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":" b","finish_reason":"length"}]}\n\n'
          'data: {"id":"c","choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}\n\n'
          'data: [DONE]\n\n').encode()


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode("utf-8", "replace")
        with open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "headers": dict(self.headers.items()), "body": body}) + "\n")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(STREAM)))
        self.end_headers()
        self.wfile.write(STREAM)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print("listening http://127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
