#!/usr/bin/env python3
"""Publishes orders to a queue, as ackbench's workload does, for runs driven by hand.

Usage: publish.py QUEUE_URL COUNT [--every SECONDS] [--poison-first N]

Bodies are `{"key": "msg-<seq>", "seq": <seq>, "email": "msg-<seq>@example.test"}` for
seq = 1..COUNT; the first N (--poison-first) are poison: the old schema, without `email`.
Endpoint, credentials and region come from the AWS_* environment variables (the access key id
names the publisher to the broker; any id that is not a worker's will do).
"""

import argparse
import json
import os
import time

import boto3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("queue_url")
    ap.add_argument("count", type=int)
    ap.add_argument("--every", type=float, default=0, help="wall seconds between two orders")
    ap.add_argument("--poison-first", type=int, default=0, metavar="N")
    args = ap.parse_args()
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    sqs = boto3.client("sqs", region_name=region)
    for seq in range(1, args.count + 1):
        key = f"msg-{seq}"
        body = {"key": key, "seq": seq}
        if seq > args.poison_first:
            body["email"] = f"{key}@example.test"
        sqs.send_message(QueueUrl=args.queue_url, MessageBody=json.dumps(body))
        print(f"published {key}" + ("" if "email" in body else " (poison)"), flush=True)
        if args.every and seq < args.count:
            time.sleep(args.every)


if __name__ == "__main__":
    main()
