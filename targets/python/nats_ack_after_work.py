#!/usr/bin/env python3
"""ack-after-work, as an external NATS JetStream consumer: call the provider, then ack.

At-least-once (docs/domain.md, "Ack placement": after the work). Any failure between the effect
and the ack (an AckWait that ran out while the provider was slow, a worker killed after the
provider answered) repeats the work on the next delivery: duplicate effects. A message whose
handler dies is never lost.

One worker process of an ackbench live run with `broker.kind: nats`; its configuration comes
from the environment (see docs/live.md): ACKBENCH_NATS_URL (this worker's own port), ACKBENCH_STREAM,
ACKBENCH_CONSUMER (a durable pull consumer ackbench created), ACKBENCH_PROVIDER_URL,
ACKBENCH_WORKER.

Every duration is in profile seconds: a live run starts its workers on a clock sped up to the
run's pace (`consumer.clock: scaled`, the default of a compressed run), and its proxy converts
the durations sent to the server (a pull request's expiry, a NAK's delay) between profile and
wall time. ACKBENCH_TIME_SCALE is not read.
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
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]  # this worker's base URL, ends in "/"
WORKER = os.environ.get("ACKBENCH_WORKER", "?")

# How long one pull request waits for a message: it only paces an idle loop, the server answers
# a waiting pull request as soon as a message is there.
FETCH_WAIT_S = 5
# A generous client timeout on the provider call (15 minutes): a slow provider is the fault
# under test, so the call waits for it, as naive code does.
CALL_TIMEOUT_S = 900
# Back-off after a fetch that failed (server unreachable).
FETCH_BACKOFF_S = 1
# How long an ack waits for the server's answer. nats-py's default is 1 s; on a clock sped up
# x20 a loopback round trip through a busy machine can take that long, so allow more.
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
        with urllib.request.urlopen(req, timeout=CALL_TIMEOUT_S) as resp:
            json.load(resp)  # {"id": "..."}
            return True
    except urllib.error.HTTPError as e:
        log(f"{key}: provider answered {e.code}")
        return False
    except (urllib.error.URLError, OSError) as e:  # unreachable, reset, timed out
        log(f"{key}: provider call failed: {e}")
        return False


async def handle(msg):
    """One delivery: read the body, do the work, then ack (and wait for the server's answer)."""
    delivery = msg.metadata.num_delivered
    body = json.loads(msg.data)
    key = body["key"]
    # A poison message (old schema, no `email`) raises here and kills the worker, as naive code
    # does: the harness restarts it, and the server redelivers the message when AckWait ends.
    to = body["email"]

    # The provider call blocks, as naive code's would: this worker does nothing else meanwhile.
    if not await asyncio.get_running_loop().run_in_executor(None, send, key, to):
        # Not sent: no ack. AckWait runs out and the server delivers the message again.
        return
    # JetStream accepts a late ack (it matches acks by stream sequence): the ack of a delivery
    # whose AckWait ran out acks the message under whoever holds it now.
    await msg.ack_sync(timeout=ACK_TIMEOUT_S)
    log(f"{key}: delivery {delivery} acked")


async def main():
    nc = await nats.connect(NATS_URL)
    js = nc.jetstream()
    sub = await js.pull_subscribe_bind(CONSUMER, STREAM)
    log(f"consuming {STREAM}/{CONSUMER} at {NATS_URL}, provider {PROVIDER_URL}")
    while True:
        try:
            msgs = await sub.fetch(1, timeout=FETCH_WAIT_S)
        except nats.errors.TimeoutError:
            continue
        except (nats.errors.Error, nats.js.errors.Error) as e:
            # The server cannot be reached: back off and fetch again, as a real consumer does.
            log(f"fetch failed: {e}")
            await asyncio.sleep(FETCH_BACKOFF_S)
            continue
        for msg in msgs:
            await handle(msg)


if __name__ == "__main__":
    asyncio.run(main())
