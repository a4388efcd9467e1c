#!/usr/bin/env python3
"""ack-after-work on NATS JetStream with the consumer's own retries: a failed provider call
publishes the message again to the stream's subject (with a retry count header) and acks the
delivery it replaces, the pattern teams write when they want a retry to go to the back of the
stream instead of waiting for AckWait. Out of retries, the message is acked: dropped.

One worker process of an ackbench live run with `broker.kind: nats` (nats-py); configuration from
the run's variables: ACKBENCH_NATS_URL (this worker's own proxy port), ACKBENCH_STREAM,
ACKBENCH_CONSUMER, ACKBENCH_SUBJECT, ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER. MAX_RETRIES
(default 1) is how many times one message is published again.

ackbench reads the publish through the worker's proxy: the body names the order, so the copy is
the same message's next life (docs/retries.md).
"""

import asyncio
import json
import os
import sys
import urllib.error
import urllib.request

import nats
import nats.errors
import nats.js.errors

NATS_URL = os.environ["ACKBENCH_NATS_URL"]
STREAM = os.environ["ACKBENCH_STREAM"]
CONSUMER = os.environ["ACKBENCH_CONSUMER"]
SUBJECT = os.environ["ACKBENCH_SUBJECT"]
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]
WORKER = os.environ.get("ACKBENCH_WORKER", "?")
MAX_RETRIES = int(os.environ.get("MAX_RETRIES", "1"))
RETRIES = "Retries"
# As nats_ack_after_work.py: pull waits pace an idle loop; acks wait for the server's answer.
FETCH_WAIT_S = 5
ACK_TIMEOUT_S = 30


def log(text):
    print(f"worker {WORKER}: {text}", file=sys.stderr, flush=True)


def send(key, to):
    """The effect: POST {provider}send. True when the provider accepted it (2xx)."""
    req = urllib.request.Request(
        PROVIDER_URL + "send",
        data=json.dumps({"key": key, "to": to}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            json.load(resp)
            return True
    except urllib.error.HTTPError as e:
        log(f"{key}: provider answered {e.code}")
        return False
    except (urllib.error.URLError, OSError) as e:
        log(f"{key}: provider call failed: {e}")
        return False


async def handle(js, msg):
    body = json.loads(msg.data)
    key = body["key"]
    if not await asyncio.get_running_loop().run_in_executor(None, send, key, body["email"]):
        retries = int((msg.headers or {}).get(RETRIES, "0"))
        if retries < MAX_RETRIES:
            # The retry: the same body to the back of the stream, then the failed delivery acked.
            await js.publish(SUBJECT, msg.data, headers={RETRIES: str(retries + 1)})
            log(f"{key}: published again (retry {retries + 1})")
        else:
            log(f"{key}: out of retries, dropped")
    await msg.ack_sync(timeout=ACK_TIMEOUT_S)


async def main():
    nc = await nats.connect(NATS_URL)
    js = nc.jetstream()
    sub = await js.pull_subscribe_bind(CONSUMER, STREAM)
    log(f"consuming {STREAM}/{CONSUMER} at {NATS_URL}, retries to {SUBJECT}")
    while True:
        try:
            msgs = await sub.fetch(1, timeout=FETCH_WAIT_S)
        except nats.errors.TimeoutError:
            continue
        except (nats.errors.Error, nats.js.errors.Error) as e:
            log(f"fetch failed: {e}")
            await asyncio.sleep(1)
            continue
        for msg in msgs:
            await handle(js, msg)


if __name__ == "__main__":
    asyncio.run(main())
