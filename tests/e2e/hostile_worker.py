#!/usr/bin/env python3
"""A consumer that breaks its broker connection on purpose, for the e2e tests of the proxies.

hostile_worker.py MODE KIND NORMAL_SCRIPT: worker 1 (ACKBENCH_WORKER) connects to its proxy
address and, with MODE `all`, sends in turn, each on a connection of its own, the four inputs
a server facing the internet is sent: a nesting bomb, a size that overflows, a payload over the
server's limit, and garbage bytes (what each is on each kind is below); with MODE `ping`, a
Redis PING. It prints what came back and that the connection closed, then waits for the run's
end; every other worker runs NORMAL_SCRIPT, the example consumer, as it is.
"""

import os
import signal
import socket
import struct
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


def amqp_frame(kind, payload):
    return bytes([kind, 0, 0]) + struct.pack(">I", len(payload)) + payload + b"\xce"


def nested_table(levels):
    """A field table holding a table, `levels` deep: `F`, its size and a key per level."""
    inner = b""
    for _ in range(levels):
        inner = b"F" + struct.pack(">I", len(inner) + 2) + b"\x01k" + inner
    return inner


def kafka_request(key, version, body):
    """A request with header v1 (client id "x"), its size first."""
    payload = struct.pack(">hhih", key, version, 7, 1) + b"x" + body
    return struct.pack(">i", len(payload)) + payload


AMQP = b"AMQP\x00\x00\x09\x01"

# Per kind: the nesting bomb, the overflowing size, the payload over the server's limit and
# the garbage, each (first bytes, bytes sent 0.3 s later). Redis's bomb is two: a reply nested
# 10,000 deep (a script's), and a command of 200,000 nested arrays.
SCRIPT = b"local t = {1} for i=1,10000 do t = {t} end return t"
INPUTS = {
    "redis-streams": [
        (b"*3\r\n$4\r\nEVAL\r\n$%d\r\n%s\r\n$1\r\n0\r\n" % (len(SCRIPT), SCRIPT), b""),
        (b"*1\r\n" * 200_000, b""),
        (b"*1\r\n$99999999999999999999999\r\n", b""),
        (b"*2\r\n$3\r\nSET\r\n$600000000\r\n", b"x" * 64),
        (b"*\xff\xfegarbage\r\n", b""),
    ],
    "nats": [
        (b"CONNECT " + b"[" * 2000 + b"]" * 2000 + b"\r\n", b""),
        (b"CONNECT {}\r\nPUB foo 18446744073709551584\r\nX", b""),
        (b"CONNECT {}\r\nPUB foo 2000000\r\n", b"x" * 64),
        (b"\x16\x03\x01\x00\xa5garbage\r\n", b""),
    ],
    "rabbitmq": [
        # connection.start-ok whose client properties nest 15,000 deep (105,000 bytes).
        (AMQP, amqp_frame(1, b"\x00\x0a\x00\x0b" + nested_table(15_000))),
        (AMQP, b"\x03\x00\x01\xff\xff\xff\xff" + b"x" * 64),
        (AMQP, b"\x03\x00\x01" + struct.pack(">I", 200_000) + b"x" * 64),
        (b"GET / HTTP/1.1\r\n\r\n", b""),
    ],
    "kafka": [
        # Metadata v1 declaring 2^31 - 1 topics (Kafka's schema fixes its nesting: the bomb is
        # a count).
        (kafka_request(3, 1, struct.pack(">i", 0x7FFFFFFF) + b"\x00\x01a"), b""),
        (b"\xff\xff\xff\x00garbage", b""),
        (struct.pack(">i", 200 << 20) + b"\x00\x03", b"x" * 64),
        (struct.pack(">i", 12) + b"\x77\x77\x00\x00\x00\x00\x00\x01garb", b""),
    ],
}


def hostile():
    if MODE == "ping":
        exchange(b"*1\r\n$4\r\nPING\r\n")
        return
    for first, then in INPUTS[KIND]:
        exchange(first, then)


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
