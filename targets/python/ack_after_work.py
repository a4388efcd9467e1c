#!/usr/bin/env python3
"""ack-after-work, as an external SQS consumer: call the provider, then delete the message.

At-least-once (docs/domain.md, "Ack placement": after the work). Any failure between the effect and the ack (a lease
that ran out while the provider was slow, a worker killed after the provider answered) repeats
the work on the next delivery: duplicate effects. A message whose handler dies is never lost.

One worker process of an ackbench live run; its configuration comes from the environment (see
docs/live.md): AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID (names the worker to the broker),
AWS_SECRET_ACCESS_KEY, AWS_REGION, ACKBENCH_QUEUE_URL, ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER.

Every duration is in profile seconds: a live run starts its workers on a clock sped up to the
run's pace (`consumer.clock: scaled`, the default of a compressed run), and its endpoint reads
the durations sent over the API in profile seconds too. ACKBENCH_TIME_SCALE is not read.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

import boto3
import botocore.exceptions

QUEUE_URL = os.environ["ACKBENCH_QUEUE_URL"]
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]  # this worker's base URL, ends in "/"
WORKER = os.environ.get("ACKBENCH_WORKER", "?")
# Long-poll wait, in whole seconds from 1 to 20 (SQS's range). The broker answers a long poll as
# soon as a message becomes visible, so this only paces an idle loop.
WAIT_S = 10
# A generous client timeout on the provider call (15 minutes): a slow provider is the fault
# under test, so the call waits for it, as naive code does.
CALL_TIMEOUT_S = 900
# Back-off after a receive that failed (broker unreachable).
RECEIVE_BACKOFF_S = 1


def log(text):
    print(f"worker {WORKER}: {text}", file=sys.stderr, flush=True)


def error_code(e):
    """The SQS error code of a ClientError (JSON `__type` or the query code)."""
    err = e.response.get("Error", {})
    return {err.get("Code"), err.get("QueryErrorCode")}


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


def handle(sqs, message):
    """One delivery: read the body, do the work, then ack."""
    delivery = message.get("Attributes", {}).get("ApproximateReceiveCount", "?")
    body = json.loads(message["Body"])
    key = body["key"]
    # A poison message (old schema, no `email`) raises here and kills the worker, as naive code
    # does: the harness restarts it, and the broker redelivers the message when its lease ends.
    to = body["email"]

    if not send(key, to):
        # Not sent: no ack. The lease runs out and the broker delivers the message again.
        return
    try:
        sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])
    except botocore.exceptions.ClientError as e:
        if "ReceiptHandleIsInvalid" not in error_code(e):
            raise
        # A late ack: this delivery's lease ran out while the provider worked, and the message
        # went to another worker (which will send it again: a duplicate effect).
        log(f"{key}: ack of delivery {delivery} refused: stale receipt")


def main():
    # Endpoint, credentials and region come from the AWS_* environment variables.
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    sqs = boto3.client("sqs", region_name=region)
    log(f"consuming {QUEUE_URL}, provider {PROVIDER_URL}")
    while True:
        try:
            got = sqs.receive_message(
                QueueUrl=QUEUE_URL,
                MaxNumberOfMessages=1,
                WaitTimeSeconds=WAIT_S,
                AttributeNames=["ApproximateReceiveCount"],
            )
        except (botocore.exceptions.BotoCoreError, botocore.exceptions.ClientError) as e:
            # The queue cannot be reached: back off and poll again, as a real consumer does.
            log(f"receive failed: {e}")
            time.sleep(RECEIVE_BACKOFF_S)
            continue
        for message in got.get("Messages", []):
            handle(sqs, message)


if __name__ == "__main__":
    main()
