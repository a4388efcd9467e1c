"""A Celery 5 app on SQS (kombu's SQS transport with its defaults: base64 bodies, long polling):
one task that sends an email through the provider. Run unmodified by
profiles/frameworks/celery-sqs.yaml against the embedded SQS endpoint (kombu reads the
endpoint, credentials and region from the AWS variables ackbench sets).
"""

import json
import os
import urllib.request

from celery import Celery

QUEUE = "orders"
app = Celery("tasks", broker="sqs://")
app.conf.broker_transport_options = {
    "region": os.environ["AWS_REGION"],
    "predefined_queues": {QUEUE: {"url": os.environ["ACKBENCH_QUEUE_URL"]}},
    "wait_time_seconds": 1,
    "polling_interval": 0.1,
}
app.conf.task_default_queue = QUEUE
app.conf.task_acks_late = os.environ.get("ACKS_LATE", "1") == "1"
app.conf.worker_prefetch_multiplier = 1
app.conf.broker_connection_retry_on_startup = True
app.conf.worker_enable_remote_control = False


@app.task(name="tasks.send_email")
def send_email(key, email):
    url = os.environ["ACKBENCH_PROVIDER_URL"] + "send"
    body = json.dumps({"key": key, "to": email}).encode()
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=60).read()
