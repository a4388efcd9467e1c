"""A FastStream app on Redis Streams: a consumer group reading the run's stream, and a second
subscriber that claims what a dead worker left pending (XAUTOCLAIM once idle for the run's
min idle). Run unmodified by profiles/frameworks/faststream-redis-streams.yaml."""

import json
import os
import urllib.request

from faststream import FastStream
from faststream.redis import RedisBroker, StreamSub

broker = RedisBroker(os.environ["ACKBENCH_REDIS_URL"])
app = FastStream(broker)
PROVIDER = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
STREAM = dict(
    stream=os.environ["ACKBENCH_STREAM"],
    group=os.environ["ACKBENCH_GROUP"],
    consumer=os.environ["ACKBENCH_CONSUMER"],
    polling_interval=100,
)


def send(order: dict) -> None:
    body = json.dumps({"key": order["key"], "to": order["email"]}).encode()
    req = urllib.request.Request(PROVIDER, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()


@broker.subscriber(stream=StreamSub(**STREAM))
async def send_email(order: dict) -> None:
    send(order)


# Entries a dead worker left pending: claimed once idle for the run's min idle.
@broker.subscriber(stream=StreamSub(**STREAM, min_idle_time=int(os.environ["ACKBENCH_MIN_IDLE_MS"])))
async def send_email_again(order: dict) -> None:
    send(order)
