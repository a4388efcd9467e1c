"""A Celery 5 app as a team would write it: one task that sends an email through the provider.

Run unmodified by profiles/frameworks/celery-rabbitmq.yaml: ackbench publishes Celery task
messages (protocol 2) to the run's queue; `celery worker` consumes them. ACKS_LATE=0 runs the
same app with Celery's default (ack when the task starts).
"""

import json
import os
import urllib.request

from celery import Celery

app = Celery("tasks", broker=os.environ["ACKBENCH_AMQP_URL"])
app.conf.task_acks_late = os.environ.get("ACKS_LATE", "1") == "1"
app.conf.task_default_queue = os.environ["ACKBENCH_QUEUE"]
app.conf.worker_prefetch_multiplier = 1
app.conf.broker_connection_retry_on_startup = True


@app.task(name="tasks.send_email")
def send_email(key, email):
    url = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
    body = json.dumps({"key": key, "to": email}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
