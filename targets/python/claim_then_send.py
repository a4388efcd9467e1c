#!/usr/bin/env python3
"""claim-then-send, as an external SQS consumer: a provider that cannot forget, fenced by a claim.

Kind 3 of docs/domain.md, "Three kinds of effect". Before calling the provider, claim a row (key, claimed_at, sent_at null) in
a SQLite store shared by every worker of the run; after the provider accepts, stamp sent_at, then
ack. A delivery that finds:
- a stamped row: the work is done; ack.
- an unstamped claim younger than the claim window: the first attempt may still be in flight;
  hand the message back, invisible for the window.
- an unstamped claim older than the window, or no row: claim (again) and send.
Trades a rare duplicate (a provider slower than the window) for a late but never lost effect.

One worker process of an ackbench live run; its configuration comes from the environment (see
docs/live.md): AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID (names the worker to the broker),
AWS_SECRET_ACCESS_KEY, AWS_REGION, ACKBENCH_QUEUE_URL, ACKBENCH_PROVIDER_URL, ACKBENCH_WORKER,
ACKBENCH_STATE_DIR, ACKBENCH_CLAIM_WINDOW.

Every duration is in profile seconds: a live run starts its workers on a clock sped up to the
run's pace (`consumer.clock: scaled`, the default of a compressed run), and its endpoint reads
the durations sent over the API in profile seconds too. ACKBENCH_TIME_SCALE is not read.
"""

import json
import math
import os
import re
import sqlite3
import sys
import time
import urllib.error
import urllib.request

import boto3
import botocore.exceptions

QUEUE_URL = os.environ["ACKBENCH_QUEUE_URL"]
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]  # this worker's base URL, ends in "/"
WORKER = os.environ.get("ACKBENCH_WORKER", "?")
STATE_DIR = os.environ["ACKBENCH_STATE_DIR"]  # shared by all workers of the run


def profile_seconds(text):
    """A profile duration in seconds: `120`, `0.5`, or the profile syntax (`2m`, `1m30s`)."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        sys.exit(f"ACKBENCH_CLAIM_WINDOW: not a duration: {text!r}")
    unit = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * unit[u] for n, u in parts)


# The claim window: a claim younger than this is taken to be in flight.
CLAIM_WINDOW_S = profile_seconds(os.environ.get("ACKBENCH_CLAIM_WINDOW", "120"))
# The hand-back: SQS visibility timeouts are whole seconds (0 to 12 h), so the window is rounded
# up, and is at least 1 s.
HAND_BACK_S = min(43200, max(1, math.ceil(CLAIM_WINDOW_S)))
# Long-poll wait, in whole seconds from 1 to 20 (SQS's range).
WAIT_S = 10
# A generous client timeout on the provider call (15 minutes).
CALL_TIMEOUT_S = 900
# Back-off after a receive that failed (broker unreachable).
RECEIVE_BACKOFF_S = 1
# How long a transaction waits for another worker's lock on the store: not a duration of the
# scenario, only of SQLite's locking, so generous at any clock speed (10 min of the worker's
# clock is 30 s of wall time at time scale 0.05).
BUSY_TIMEOUT_S = 600


def log(text):
    print(f"worker {WORKER}: {text}", file=sys.stderr, flush=True)


def error_code(e):
    """The SQS error code of a ClientError (JSON `__type` or the query code)."""
    err = e.response.get("Error", {})
    return {err.get("Code"), err.get("QueryErrorCode")}


# --- The claim store -----------------------------------------------------------------------
# Times are the worker's clock (time.time()), compared with the window: every worker of a run
# reads one timeline, restarted ones too.


def open_store():
    os.makedirs(STATE_DIR, exist_ok=True)
    # isolation_level=None: no implicit transactions; each one below is an explicit
    # BEGIN IMMEDIATE, which takes the write lock up front so that two workers cannot both read
    # "no claim" and both send. timeout= is SQLite's busy timeout.
    db = sqlite3.connect(
        os.path.join(STATE_DIR, "claims.sqlite3"), timeout=BUSY_TIMEOUT_S, isolation_level=None
    )
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS claims ("
        " key TEXT PRIMARY KEY, claimed_at REAL NOT NULL, sent_at REAL NULL)"
    )
    return db


def transaction(db, work):
    """Runs work(db) in one BEGIN IMMEDIATE transaction and returns its result."""
    db.execute("BEGIN IMMEDIATE")
    try:
        result = work(db)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return result


def claim(db, key):
    """What this delivery does: ("done", None), ("in_flight", None) or ("send", claimed_at)."""

    def work(db):
        now = time.time()  # read under the lock
        row = db.execute("SELECT claimed_at, sent_at FROM claims WHERE key = ?", (key,)).fetchone()
        if row is not None and row[1] is not None:
            return "done", None
        if row is not None and now - row[0] < CLAIM_WINDOW_S:
            return "in_flight", None
        # No claim, or one older than the window: the attempt that made it died. Claim anew.
        db.execute(
            "INSERT INTO claims (key, claimed_at, sent_at) VALUES (?, ?, NULL)"
            " ON CONFLICT (key) DO UPDATE SET claimed_at = excluded.claimed_at, sent_at = NULL",
            (key, now),
        )
        return "send", now

    return transaction(db, work)


def stamp(db, key):
    """The provider accepted: the work is done, whoever holds the claim now."""
    transaction(
        db, lambda db: db.execute("UPDATE claims SET sent_at = ? WHERE key = ?", (time.time(), key))
    )


def release(db, key, claimed_at):
    """The provider refused: drop our claim (not a newer one) so the next delivery sends at once."""
    transaction(
        db,
        lambda db: db.execute(
            "DELETE FROM claims WHERE key = ? AND sent_at IS NULL AND claimed_at = ?",
            (key, claimed_at),
        ),
    )


# --- The provider call ---------------------------------------------------------------------


def send(key, to):
    """The effect: POST {provider}send. "sent" (2xx), "refused" (an error status: nothing was
    sent) or "unknown" (no answer: the provider may have sent it)."""
    req = urllib.request.Request(
        PROVIDER_URL + "send",
        data=json.dumps({"key": key, "to": to}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=CALL_TIMEOUT_S) as resp:
            json.load(resp)  # {"id": "..."}
            return "sent"
    except urllib.error.HTTPError as e:
        log(f"{key}: provider answered {e.code}")
        return "refused"
    except (urllib.error.URLError, OSError) as e:  # unreachable, reset, timed out
        log(f"{key}: provider call failed: {e}")
        return "unknown"


# --- One delivery --------------------------------------------------------------------------


def ack(sqs, key, delivery, message):
    try:
        sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message["ReceiptHandle"])
    except botocore.exceptions.ClientError as e:
        if "ReceiptHandleIsInvalid" not in error_code(e):
            raise
        # A late ack: the lease ran out and the message went to another worker, which will
        # find the stamped row and ack it.
        log(f"{key}: ack of delivery {delivery} refused: stale receipt")


def hand_back(sqs, key, delivery, message):
    try:
        sqs.change_message_visibility(
            QueueUrl=QUEUE_URL,
            ReceiptHandle=message["ReceiptHandle"],
            VisibilityTimeout=HAND_BACK_S,
        )
    except botocore.exceptions.ClientError as e:
        if "InvalidParameterValue" not in error_code(e):
            raise
        # The lease already ran out: the broker redelivers the message anyway.
        log(f"{key}: hand-back of delivery {delivery} refused: stale receipt")


def handle(sqs, db, message):
    delivery = message.get("Attributes", {}).get("ApproximateReceiveCount", "?")
    body = json.loads(message["Body"])
    key = body["key"]
    # A poison message (old schema, no `email`) raises here, before any claim, and kills the
    # worker, as naive code does: the harness restarts it.
    to = body["email"]

    decision, claimed_at = claim(db, key)
    if decision == "done":
        log(f"{key}: delivery {delivery} finds it sent: ack")
        ack(sqs, key, delivery, message)
    elif decision == "in_flight":
        # The first attempt may still be waiting for the provider: come back after the window.
        log(f"{key}: delivery {delivery} finds a claim in flight: hand back for {HAND_BACK_S} s")
        hand_back(sqs, key, delivery, message)
    else:
        outcome = send(key, to)
        if outcome == "sent":
            stamp(db, key)
            ack(sqs, key, delivery, message)
        elif outcome == "refused":
            # Nothing was sent: drop the claim so the next delivery sends at once; no ack, the
            # lease runs out and the broker delivers the message again.
            release(db, key, claimed_at)
        # "unknown": the provider may have sent it. Keep the claim: a delivery within the
        # window hands the message back, one after it sends again (a duplicate at worst).


def main():
    # Endpoint, credentials and region come from the AWS_* environment variables.
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    sqs = boto3.client("sqs", region_name=region)
    db = open_store()
    log(
        f"consuming {QUEUE_URL}, provider {PROVIDER_URL},"
        f" claim window {CLAIM_WINDOW_S:g} s (hand-back {HAND_BACK_S} s)"
    )
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
            handle(sqs, db, message)


if __name__ == "__main__":
    main()
