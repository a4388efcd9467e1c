#!/usr/bin/env python3
"""A consumer that breaks its broker connection on purpose, for the e2e tests of the proxies.

hostile_worker.py MODE KIND NORMAL_SCRIPT: worker 1 (ACKBENCH_WORKER) connects to its proxy
address and, with MODE `bomb`, sends bytes no broker takes (a reply nested 10,000 deep and nested
arrays on Redis, a size that overflows on NATS, a frame over frame_max on RabbitMQ, a negative
request size on Kafka); with MODE `ping`, a Redis PING. It prints what came back and that the
connection closed, then waits for the run's end; every other worker runs NORMAL_SCRIPT, the
example consumer, as it is.
"""

import os
import signal
import socket
import sys
import time
from urllib.parse import urlparse

MODE, KIND, NORMAL = sys.argv[1], sys.argv[2], sys.argv[3]


def log(msg):
    print(f"hostile worker: {msg}", file=sys.stderr, flush=True)


def address():
    var = {
        "redis-streams": "ACKBENCH_REDIS_URL",
        "nats": "ACKBENCH_NATS_URL",
        "rabbitmq": "ACKBENCH_AMQP_URL",
        "kafka": "ACKBENCH_BOOTSTRAP_SERVERS",
    }[KIND]
    value = os.environ[var]
    if "://" not in value:
        value = "tcp://" + value
    u = urlparse(value)
    return u.hostname, u.port


def exchange(first, then=b""):
    """Sends `first`, reads a little, sends `then`, reads until the proxy closes (10 s)."""
    s = socket.create_connection(address(), timeout=10)
    got = b""
    try:
        s.sendall(first)
        time.sleep(0.3)
        if then:
            s.sendall(then)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        log(f"closed after {len(got)} bytes back: {got[-80:]!r}")
    except OSError as e:
        log(f"closed: {e}; {len(got)} bytes back: {got[-80:]!r}")
    finally:
        s.close()


def hostile():
    if MODE == "ping":
        exchange(b"*1\r\n$4\r\nPING\r\n")
    elif KIND == "redis-streams":
        script = b"local t = {1} for i=1,10000 do t = {t} end return t"
        exchange(b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(script), script))
        exchange(b"*1\r\n" * 200_000)
    elif KIND == "nats":
        exchange(b"CONNECT {}\r\nPUB foo 18446744073709551584\r\nX")
    elif KIND == "rabbitmq":
        exchange(b"AMQP\x00\x00\x09\x01", b"\x03\x00\x01\xff\xff\xff\xff" + b"x" * 64)
    elif KIND == "kafka":
        exchange(b"\xff\xff\xff\x00garbage")


def main():
    if os.environ.get("ACKBENCH_WORKER") != "1":
        os.execvp(sys.executable, [sys.executable, NORMAL])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    hostile()
    # The run goes on without this worker's connection: it waits to be told to stop.
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
