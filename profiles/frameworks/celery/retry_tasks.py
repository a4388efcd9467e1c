"""A Celery 5 app that retries as teams write it, on RabbitMQ (ACKBENCH_AMQP_URL) or on SQS
(kombu's transport, ACKBENCH_QUEUE_URL): `task_acks_late`, and either

- RETRY=self (the default): `bind=True` and `raise self.retry(exc=e, countdown=2)`;
- RETRY=auto: `autoretry_for=(OSError,)` with `retry_backoff=1` (1 s, doubling, jittered).

Either way a failed call publishes the task again (its ETA 1-2 s away); the worker receives it at
once and holds it until then. Out of retries (MAX_RETRIES, default 1) the task fails and its
message is acked: nothing is re-queued. Run unmodified by the celery-retry profiles in
profiles/frameworks/.
"""

import json
import os
import urllib.request

from celery import Celery

MAX_RETRIES = int(os.environ.get("MAX_RETRIES", "1"))

if "ACKBENCH_AMQP_URL" in os.environ:
    QUEUE = os.environ["ACKBENCH_QUEUE"]
    app = Celery("tasks", broker=os.environ["ACKBENCH_AMQP_URL"])
else:
    QUEUE = "orders"
    app = Celery("tasks", broker="sqs://")
    app.conf.broker_transport_options = {
        "region": os.environ["AWS_REGION"],
        "predefined_queues": {QUEUE: {"url": os.environ["ACKBENCH_QUEUE_URL"]}},
        "wait_time_seconds": 1,
        "polling_interval": 0.1,
    }
    app.conf.worker_enable_remote_control = False
app.conf.task_default_queue = QUEUE
app.conf.task_acks_late = True
app.conf.worker_prefetch_multiplier = 1
app.conf.broker_connection_retry_on_startup = True


def call_provider(key, email):
    url = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
    body = json.dumps({"key": key, "to": email}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()


if os.environ.get("RETRY", "self") == "auto":

    @app.task(
        name="tasks.send_email",
        autoretry_for=(OSError,),
        retry_backoff=1,
        max_retries=MAX_RETRIES,
    )
    def send_email(key, email):
        call_provider(key, email)

else:

    @app.task(name="tasks.send_email", bind=True, max_retries=MAX_RETRIES)
    def send_email(self, key, email):
        try:
            call_provider(key, email)
        except OSError as e:
            raise self.retry(exc=e, countdown=2)
