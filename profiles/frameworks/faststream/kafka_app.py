"""A FastStream app on Kafka: one subscriber in the run's consumer group, configured from the
run's variables, on either of FastStream's Kafka brokers: `faststream.kafka` (aiokafka, the
default) or, with KAFKA_CLIENT=confluent, `faststream.confluent` (confluent-kafka, librdkafka).
With enable.auto.commit (FastStream's default policy, AckPolicy.ACK_FIRST) the client commits
what it has handed out every auto-commit interval; without it (AckPolicy.ACK) FastStream commits
each record's offset once its handler has returned. With MAX_RETRIES above 0, a provider error
produces the order again to the topic (a `retries` header counting its tries) and the handler
returns, so the record it replaces is committed; out of retries the error is raised as without.
Run unmodified by profiles/frameworks/faststream-kafka.yaml and faststream-retry-kafka.yaml."""

import asyncio
import json
import os
import urllib.error
import urllib.request

from faststream import AckPolicy, Context, FastStream

env = os.environ
if env.get("KAFKA_CLIENT") == "confluent":
    from faststream.confluent import KafkaBroker

    # librdkafka names its assignors; it has no max.poll.records.
    CLIENT = dict(partition_assignment_strategy=(env["ACKBENCH_PARTITION_ASSIGNMENT_STRATEGY"],))
else:
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from faststream.kafka import KafkaBroker

    CLIENT = dict(
        partition_assignment_strategy=(RangePartitionAssignor,),
        max_poll_records=int(env["ACKBENCH_MAX_POLL_RECORDS"]),
    )

broker = KafkaBroker(env["ACKBENCH_BOOTSTRAP_SERVERS"])
app = FastStream(broker)
PROVIDER = env["ACKBENCH_PROVIDER_URL"] + "send"
AUTO_COMMIT = env["ACKBENCH_ENABLE_AUTO_COMMIT"] == "true"
TOPIC = env["ACKBENCH_TOPIC"]
MAX_RETRIES = int(env.get("MAX_RETRIES", "0"))


def send(order: dict) -> None:
    body = json.dumps({"key": order["key"], "to": order["email"]}).encode()
    req = urllib.request.Request(PROVIDER, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()


@broker.subscriber(
    TOPIC,
    group_id=env["ACKBENCH_GROUP"],
    auto_offset_reset="earliest",
    ack_policy=AckPolicy.ACK_FIRST if AUTO_COMMIT else AckPolicy.ACK,
    auto_commit_interval_ms=int(env["ACKBENCH_AUTO_COMMIT_INTERVAL_MS"]),
    max_poll_interval_ms=int(env["ACKBENCH_MAX_POLL_INTERVAL_MS"]),
    session_timeout_ms=int(env["ACKBENCH_SESSION_TIMEOUT_MS"]),
    heartbeat_interval_ms=int(env["ACKBENCH_HEARTBEAT_INTERVAL_MS"]),
    **CLIENT,
)
async def send_email(order: dict, headers: dict = Context("message.headers")) -> None:
    # The provider call in a thread: the event loop keeps aiokafka's heartbeats going meanwhile.
    try:
        await asyncio.to_thread(send, order)
    except urllib.error.HTTPError:
        retries = int(headers.get("retries", "0"))
        if retries >= MAX_RETRIES:
            raise
        await broker.publish(order, TOPIC, headers={"retries": str(retries + 1)})
