#!/usr/bin/env python3
"""A reference ingress service: the HTTP front door of an order system, publishing to SQS.

`POST /orders` with a JSON order (`{"key": ..., ...}`) publishes the body, as is, to the queue
and answers `202 {"message_id": ...}`. A body that is not a JSON object with a string `key`
answers 400 and publishes nothing; a failed publish answers 503. `GET /health` answers 200.

It is what ackbench's HTTP ingress load (`workload.ingress`) drives: ackbench starts it once per
run with the run's SQS endpoint in its environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_REGION, ACKBENCH_QUEUE_URL) and the port to listen on
(ACKBENCH_INGRESS_PORT, on 127.0.0.1).

Two faults can be switched on, to check producer-side scenarios:
- INGRESS_DROP_EVERY=N answers 202 but publishes nothing for every Nth order (a fire-and-forget
  front door that loses work it said it took). ackbench counts those as accepted but never
  published (`ingress.lost` in summary.json).
- INGRESS_DELAY_S=X waits X wall seconds before handling each order (a slow front door): the
  closed-model load falls behind its schedule, which summary.json's `ingress.schedule_lag_ms`
  and `achieved_rate_per_s` show.
"""

import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import boto3

QUEUE_URL = os.environ["ACKBENCH_QUEUE_URL"]
PORT = int(os.environ["ACKBENCH_INGRESS_PORT"])
DROP_EVERY = int(os.environ.get("INGRESS_DROP_EVERY", "0"))
DELAY_S = float(os.environ.get("INGRESS_DELAY_S", "0"))
# Bodies above SQS's message size are refused before reading them.
MAX_BODY = 256 * 1024

sqs = boto3.client("sqs")
orders = 0
orders_lock = threading.Lock()


def log(text):
    print(f"ingress: {text}", file=sys.stderr, flush=True)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, doc):
        body = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/health":
            self.answer(200, {"ok": True})
        else:
            self.answer(404, {"error": "not found"})

    def do_POST(self):
        global orders
        if self.path != "/orders":
            self.answer(404, {"error": "not found"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.answer(413, {"error": f"body over {MAX_BODY} bytes"})
            self.close_connection = True
            return
        raw = self.rfile.read(length)
        try:
            order = json.loads(raw)
            key = order["key"]
            if not isinstance(key, str) or not key:
                raise ValueError("key must be a non-empty string")
        except (ValueError, KeyError, TypeError) as e:
            self.answer(400, {"error": f"not an order: {e}"})
            return
        if DELAY_S > 0:
            time.sleep(DELAY_S)
        with orders_lock:
            orders += 1
            n = orders
        if DROP_EVERY and n % DROP_EVERY == 0:
            log(f"order {key} accepted but not published (INGRESS_DROP_EVERY={DROP_EVERY})")
            self.answer(202, {"message_id": None})
            return
        try:
            sent = sqs.send_message(QueueUrl=QUEUE_URL, MessageBody=raw.decode())
        except Exception as e:  # the queue is down or refused it: tell the caller to retry
            log(f"publish of {key} failed: {e}")
            self.answer(503, {"error": "cannot publish now"})
            return
        self.answer(202, {"message_id": sent["MessageId"]})

    def log_message(self, fmt, *args):
        pass  # one line per request would drown the log


def main():
    server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
    server.daemon_threads = True
    log(f"listening on 127.0.0.1:{PORT}, publishing to {QUEUE_URL}")
    server.serve_forever()


if __name__ == "__main__":
    main()
