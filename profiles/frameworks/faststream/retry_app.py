"""A FastStream app on Redis Streams that retries by adding the order to the stream again: a
failed provider call publishes it anew (a `retries` header counting its tries) and the handler
returns, so FastStream acks the entry it replaces. Out of retries (MAX_RETRIES, default 1) the
order is dropped. Run unmodified by profiles/frameworks/faststream-retry-redis-streams.yaml."""

import json
import os
import urllib.error
import urllib.request

from faststream import FastStream, Logger
from faststream.redis import RedisBroker, StreamSub
from faststream.redis.annotations import RedisStreamMessage

broker = RedisBroker(os.environ["ACKBENCH_REDIS_URL"])
app = FastStream(broker)
PROVIDER = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
NAME = os.environ["ACKBENCH_STREAM"]
MAX_RETRIES = int(os.environ.get("MAX_RETRIES", "1"))
STREAM = StreamSub(
    NAME,
    group=os.environ["ACKBENCH_GROUP"],
    consumer=os.environ["ACKBENCH_CONSUMER"],
    polling_interval=100,
)


def send(order: dict) -> None:
    body = json.dumps({"key": order["key"], "to": order["email"]}).encode()
    req = urllib.request.Request(PROVIDER, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()


@broker.subscriber(stream=STREAM)
async def send_email(order: dict, msg: RedisStreamMessage, logger: Logger) -> None:
    try:
        send(order)
    except urllib.error.HTTPError as e:
        retries = int(msg.headers.get("retries", "0"))
        if retries >= MAX_RETRIES:
            logger.error(f"{order['key']}: provider answered {e.code}, out of retries")
            return
        logger.warning(f"{order['key']}: provider answered {e.code}, published again")
        await broker.publish(order, stream=NAME, headers={"retries": str(retries + 1)})
