"""A Dramatiq app on RabbitMQ that retries as teams configure it: the Retries middleware (on by
default) with one retry and a backoff of 1-2 s. A provider error raises from urlopen; Dramatiq
publishes the message to its delay queue `<queue>.DQ`, the worker takes it back when due and
publishes it to the queue again. Out of retries, the message is rejected and dead-lettered to
`<queue>.XQ`. Run unmodified by profiles/frameworks/dramatiq-retry-rabbitmq.yaml.
"""

import json
import os
import urllib.request

import dramatiq
from dramatiq.brokers.rabbitmq import RabbitmqBroker

dramatiq.set_broker(RabbitmqBroker(url=os.environ["ACKBENCH_AMQP_URL"]))


@dramatiq.actor(
    queue_name=os.environ["ACKBENCH_QUEUE"],
    max_retries=int(os.environ.get("MAX_RETRIES", "1")),
    min_backoff=1000,
    max_backoff=2000,
)
def send_email(key, email):
    url = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
    body = json.dumps({"key": key, "to": email}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
