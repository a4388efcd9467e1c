"""The configuration of an ackbench Kafka consumer, read only from the run variables (see
docs/live.md), and the provider call both Kafka example consumers make.

A live run with `broker.kind: kafka` tells each worker process: ACKBENCH_BOOTSTRAP_SERVERS (this
worker's own proxy port), ACKBENCH_TOPIC, ACKBENCH_GROUP, and the profile's consumer settings,
each named after the consumer configuration it is: ACKBENCH_MAX_POLL_INTERVAL_MS,
ACKBENCH_SESSION_TIMEOUT_MS, ACKBENCH_HEARTBEAT_INTERVAL_MS, ACKBENCH_MAX_POLL_RECORDS,
ACKBENCH_ENABLE_AUTO_COMMIT, ACKBENCH_AUTO_COMMIT_INTERVAL_MS,
ACKBENCH_PARTITION_ASSIGNMENT_STRATEGY and ACKBENCH_GROUP_INSTANCE_ID (empty without static
membership). Durations are wall milliseconds.
"""

import json
import os
import sys
import urllib.error
import urllib.request

TOPIC = os.environ["ACKBENCH_TOPIC"]
PROVIDER_URL = os.environ["ACKBENCH_PROVIDER_URL"]  # this worker's base URL, ends in "/"
WORKER = os.environ.get("ACKBENCH_WORKER", "?")
# How many records one poll takes (librdkafka has no max.poll.records: consume(num_messages)).
MAX_POLL_RECORDS = int(os.environ.get("ACKBENCH_MAX_POLL_RECORDS", "500"))

# A generous client timeout on the provider call (15 minutes): a slow provider is the fault
# under test, so the call waits for it, as naive code does.
CALL_TIMEOUT_S = 900


def log(text):
    print(f"worker {WORKER}: {text}", file=sys.stderr, flush=True)


def consumer_config():
    """The confluent-kafka consumer configuration of this worker."""
    env = os.environ
    config = {
        "bootstrap.servers": env["ACKBENCH_BOOTSTRAP_SERVERS"],
        "group.id": env["ACKBENCH_GROUP"],
        "auto.offset.reset": "earliest",
        "max.poll.interval.ms": int(env["ACKBENCH_MAX_POLL_INTERVAL_MS"]),
        "session.timeout.ms": int(env["ACKBENCH_SESSION_TIMEOUT_MS"]),
        "heartbeat.interval.ms": int(env["ACKBENCH_HEARTBEAT_INTERVAL_MS"]),
        "enable.auto.commit": env["ACKBENCH_ENABLE_AUTO_COMMIT"] == "true",
        "auto.commit.interval.ms": int(env["ACKBENCH_AUTO_COMMIT_INTERVAL_MS"]),
        "partition.assignment.strategy": env["ACKBENCH_PARTITION_ASSIGNMENT_STRATEGY"],
    }
    if env.get("ACKBENCH_GROUP_INSTANCE_ID"):
        config["group.instance.id"] = env["ACKBENCH_GROUP_INSTANCE_ID"]
    return config


def consume(consumer, handle):
    """Polls for ever, up to MAX_POLL_RECORDS records a poll, calling handle(record) on each."""
    while True:
        for record in consumer.consume(num_messages=MAX_POLL_RECORDS, timeout=1.0):
            if record.error():
                log(f"fetch error: {record.error()}")
                continue
            handle(record)


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


def work(record):
    """One record's work: read the order, send its email. True when the provider took it.

    A poison record (old schema, no `email`) raises here and kills the worker, as naive code
    does: the harness restarts it, and the record is fetched again from the committed offset
    (Kafka has no delivery limit).
    """
    body = json.loads(record.value())
    return send(body["key"], body["email"])
