"""A Dramatiq app on RabbitMQ: one actor that sends an email through the provider. Run unmodified
by profiles/frameworks/dramatiq-rabbitmq.yaml (Dramatiq acks after the actor returns)."""

import json
import os
import urllib.request

import dramatiq
from dramatiq.brokers.rabbitmq import RabbitmqBroker

dramatiq.set_broker(RabbitmqBroker(url=os.environ["ACKBENCH_AMQP_URL"]))


@dramatiq.actor(queue_name=os.environ["ACKBENCH_QUEUE"], max_retries=0)
def send_email(key, email):
    url = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
    body = json.dumps({"key": key, "to": email}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
