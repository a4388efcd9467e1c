#!/usr/bin/env python3
"""ack-after-work, as an external RabbitMQ consumer (pika): call the provider, then ack.

At-least-once (docs/domain.md, "Ack placement": after the work). Any failure between the effect
and the ack (a worker killed after the provider answered, a channel the server closed after
consumer_timeout) repeats the work on the next delivery: duplicate effects. A message whose
handler dies is never lost: its connection closes and the server requeues it.

One worker process of an ackbench live run; its configuration comes from the environment (see
docs/live.md): ACKBENCH_AMQP_URL (this worker's own ackbench proxy port, with the broker's
credentials and vhost), ACKBENCH_QUEUE, ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER,
ACKBENCH_PREFETCH (optional, default 1).

Every duration is in seconds of the consumer's own clock, as a production consumer writes them:
a live run starts its workers on a clock sped up to the run's pace (`consumer.clock: scaled`, the
default of a compressed run), and ackbench's AMQP proxy converts the durations on the wire
(the heartbeat pika takes from the server, any TTL) between that clock and the server's.
ACKBENCH_TIME_SCALE is not read.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

import pika
import pika.exceptions

AMQP_URL = os.environ["ACKBENCH_AMQP_URL"]
QUEUE = os.environ["ACKBENCH_QUEUE"]
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]  # this worker's base URL, ends in "/"
WORKER = os.environ.get("ACKBENCH_WORKER", "?")
PREFETCH = int(os.environ.get("ACKBENCH_PREFETCH", "1"))

# A generous client timeout on the provider call (15 minutes): a slow provider is the fault
# under test, so the call waits for it, as naive code does.
CALL_TIMEOUT_S = 900
# Back-off after the connection failed (broker unreachable).
RECONNECT_BACKOFF_S = 1


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


def handle(channel, method, properties, body):
    """One delivery: read the body, do the work, then ack."""
    message = json.loads(body)
    key = message["key"]
    # A poison message (old schema, no `email`) raises here and kills the worker, as naive code
    # does: the harness restarts it, and the server requeues the message when the connection closes.
    to = message["email"]

    if not send(key, to):
        # Not sent: hand it back at once (RabbitMQ has no delayed redelivery).
        channel.basic_nack(delivery_tag=method.delivery_tag, requeue=True)
        return
    try:
        channel.basic_ack(delivery_tag=method.delivery_tag)
    except pika.exceptions.ChannelWrongStateError:
        # A late ack: the server closed this channel (consumer_timeout) while the provider
        # worked and requeued the message (another delivery will send it again: a duplicate).
        log(f"{key}: ack refused: the channel is closed")


def main():
    log(f"consuming {QUEUE}, provider {PROVIDER_URL}")
    params = pika.URLParameters(AMQP_URL)
    while True:
        try:
            connection = pika.BlockingConnection(params)
            channel = connection.channel()
            channel.basic_qos(prefetch_count=PREFETCH)
            channel.basic_consume(queue=QUEUE, on_message_callback=handle)
            channel.start_consuming()
        except pika.exceptions.ChannelClosedByBroker as e:
            # 406 PRECONDITION_FAILED after consumer_timeout: consume again on a new channel.
            log(f"channel closed by the server: {e}")
        except pika.exceptions.AMQPConnectionError as e:
            # The broker cannot be reached: back off and connect again, as a real consumer does.
            log(f"connection failed: {e}")
            time.sleep(RECONNECT_BACKOFF_S)


if __name__ == "__main__":
    main()
