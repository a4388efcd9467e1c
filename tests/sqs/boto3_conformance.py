#!/usr/bin/env python3
"""SQS conformance of ackbench's embedded broker, seen from boto3 (the JSON 1.0 protocol).

Usage: python3 tests/sqs/boto3_conformance.py http://127.0.0.1:PORT

Prints each check; exits 0 when all pass, 1 at the first failure, 2 on bad usage.
Every wait is bounded (long polls of at most 5 s).
"""

import hashlib
import json
import sys
import threading
import time

import boto3
from botocore.config import Config

CHECKS = []


def check(name, cond, detail=""):
    CHECKS.append(name)
    if not cond:
        print(f"FAIL {name} {detail}", flush=True)
        sys.exit(1)
    print(f"ok   {name}", flush=True)


def raises(name, code, fn):
    try:
        fn()
    except Exception as e:  # botocore.exceptions.ClientError and modeled subclasses
        got = getattr(e, "response", {}).get("Error", {}).get("Code")
        qcode = getattr(e, "response", {}).get("Error", {}).get("QueryErrorCode")
        check(name, code in (got, qcode), f"expected {code}, got {got} / {qcode}: {e}")
        return e
    check(name, False, f"expected {code}, no error")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    endpoint = sys.argv[1]
    sqs = boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="worker-5",
        aws_secret_access_key="unused",
        config=Config(retries={"max_attempts": 1}, read_timeout=30, connect_timeout=5),
    )

    # Queues and attributes.
    url = sqs.create_queue(QueueName="py-orders")["QueueUrl"]
    check("CreateQueue returns the queue URL", url.endswith("/000000000000/py-orders"), url)
    check("GetQueueUrl", sqs.get_queue_url(QueueName="py-orders")["QueueUrl"] == url)
    check("ListQueues with prefix", sqs.list_queues(QueueNamePrefix="py-")["QueueUrls"] == [url])
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "20"})
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    check("SetQueueAttributes / GetQueueAttributes", attrs["VisibilityTimeout"] == "20", attrs)
    check("QueueArn", attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:py-orders", attrs)
    raises("unknown queue is QueueDoesNotExist", "QueueDoesNotExist", lambda: sqs.get_queue_url(QueueName="nope"))
    check(
        "modeled exception class",
        isinstance(
            raises("modeled class raised", "QueueDoesNotExist", lambda: sqs.get_queue_url(QueueName="nope")),
            sqs.exceptions.QueueDoesNotExist,
        ),
    )
    raises(
        "unknown attribute is InvalidAttributeName",
        "InvalidAttributeName",
        lambda: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Colour"]),
    )

    # Send, receive, delete.
    body = json.dumps({"key": "msg-1", "seq": 1, "email": "msg-1@example.test"})
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes={"trace": {"DataType": "String", "StringValue": "t-1"}},
    )
    check("MD5OfMessageBody", sent["MD5OfMessageBody"] == hashlib.md5(body.encode()).hexdigest(), sent)
    got = sqs.receive_message(
        QueueUrl=url, MessageSystemAttributeNames=["All"], MessageAttributeNames=["All"], WaitTimeSeconds=1
    )["Messages"]
    m = got[0]
    check("ReceiveMessage body", m["Body"] == body)
    check("ApproximateReceiveCount", m["Attributes"]["ApproximateReceiveCount"] == "1", m)
    check("SentTimestamp", int(m["Attributes"]["SentTimestamp"]) > 1_600_000_000_000, m)
    check("message attributes", m["MessageAttributes"]["trace"]["StringValue"] == "t-1", m)
    check("MD5OfMessageAttributes", m["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"], m)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    check("deleted", "Messages" not in sqs.receive_message(QueueUrl=url))
    raises(
        "forged receipt is ReceiptHandleIsInvalid",
        "ReceiptHandleIsInvalid",
        lambda: sqs.delete_message(QueueUrl=url, ReceiptHandle="forged"),
    )
    raises(
        "MaxNumberOfMessages 11 is InvalidParameterValue",
        "InvalidParameterValue",
        lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11),
    )
    raises(
        "message over 1 MiB is InvalidParameterValue",
        "InvalidParameterValue",
        lambda: sqs.send_message(QueueUrl=url, MessageBody="x" * 1_048_577),
    )
    big = sqs.send_message(QueueUrl=url, MessageBody="x" * 1_048_576)
    check("a 1 MiB message is accepted", "MessageId" in big, big)
    sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)  # leases it: out of later checks' way
    size = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["MaximumMessageSize"])["Attributes"]
    check("MaximumMessageSize defaults to 1 MiB", size["MaximumMessageSize"] == "1048576", size)
    raises(
        "a batch over 1 MiB in total is BatchRequestTooLong",
        "BatchRequestTooLong",
        lambda: sqs.send_message_batch(
            QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "x" * 600_000}, {"Id": "b", "MessageBody": "y" * 600_000}]
        ),
    )

    # Long polling wakes on a send from another thread.
    result = {}

    def poll():
        r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5)
        result["at"] = time.monotonic()
        result["n"] = len(r.get("Messages", []))

    t = threading.Thread(target=poll)
    t.start()
    time.sleep(0.3)
    sent_at = time.monotonic()
    sqs.send_message(QueueUrl=url, MessageBody="wake")
    t.join(10)
    check("long poll returns the message", result.get("n") == 1, result)
    check("long poll wakes within 100 ms of the send", result["at"] - sent_at < 0.1, result["at"] - sent_at)

    # Lease expiry: visible again with receive count 2; the old receipt's delete succeeds, deletes nothing.
    purge_url = sqs.create_queue(QueueName="py-lease")["QueueUrl"]
    sqs.send_message(QueueUrl=purge_url, MessageBody="lease")
    first = sqs.receive_message(QueueUrl=purge_url, VisibilityTimeout=1)["Messages"][0]
    second = sqs.receive_message(QueueUrl=purge_url, WaitTimeSeconds=5, AttributeNames=["ApproximateReceiveCount"])
    check("redelivered after the lease", second["Messages"][0]["Attributes"]["ApproximateReceiveCount"] == "2", second)
    sqs.delete_message(QueueUrl=purge_url, ReceiptHandle=first["ReceiptHandle"])
    n = sqs.get_queue_attributes(QueueUrl=purge_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"])
    check("stale delete deletes nothing", n["Attributes"]["ApproximateNumberOfMessagesNotVisible"] == "1", n)
    sqs.purge_queue(QueueUrl=purge_url)
    n = sqs.get_queue_attributes(QueueUrl=purge_url, AttributeNames=["All"])["Attributes"]
    check("PurgeQueue", n["ApproximateNumberOfMessages"] == "0" and n["ApproximateNumberOfMessagesNotVisible"] == "0", n)
    raises("a second purge within 60 s", "PurgeQueueInProgress", lambda: sqs.purge_queue(QueueUrl=purge_url))

    # Redrive policy: after 2 deliveries the message is receivable from the DLQ.
    dlq = sqs.create_queue(QueueName="py-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    main_q = sqs.create_queue(
        QueueName="py-main",
        Attributes={"RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "2"})},
    )["QueueUrl"]
    sqs.send_message(QueueUrl=main_q, MessageBody="poison")
    for _ in range(2):
        sqs.receive_message(QueueUrl=main_q, VisibilityTimeout=0)
    check("gone from the main queue", "Messages" not in sqs.receive_message(QueueUrl=main_q))
    dead = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=2, AttributeNames=["ApproximateReceiveCount"]).get("Messages", [])
    check("dead letter receivable from the DLQ", len(dead) == 1 and dead[0]["Body"] == "poison", dead)
    check("receive count carries over into the DLQ", dead[0]["Attributes"]["ApproximateReceiveCount"] == "3", dead)
    sources = sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"]
    check("ListDeadLetterSourceQueues", sources == [main_q], sources)

    # The latest receipt handle after its lease ended, nobody having received the message since.
    late = sqs.create_queue(QueueName="py-late")["QueueUrl"]
    sqs.send_message(QueueUrl=late, MessageBody="late")
    h = sqs.receive_message(QueueUrl=late, VisibilityTimeout=1)["Messages"][0]["ReceiptHandle"]
    time.sleep(1.3)
    sqs.change_message_visibility(QueueUrl=late, ReceiptHandle=h, VisibilityTimeout=30)
    check("visibility change with the latest handle after expiry hides it again", "Messages" not in sqs.receive_message(QueueUrl=late))
    sqs.send_message(QueueUrl=late, MessageBody="late 2")
    h2 = sqs.receive_message(QueueUrl=late, VisibilityTimeout=1)["Messages"][0]["ReceiptHandle"]
    time.sleep(1.3)
    sqs.delete_message(QueueUrl=late, ReceiptHandle=h2)
    sqs.delete_message(QueueUrl=late, ReceiptHandle=h)
    n = sqs.get_queue_attributes(QueueUrl=late, AttributeNames=["All"])["Attributes"]
    check(
        "delete with the latest handle after expiry deletes",
        n["ApproximateNumberOfMessages"] == "0" and n["ApproximateNumberOfMessagesNotVisible"] == "0",
        n,
    )

    # Tags.
    tagged = sqs.create_queue(QueueName="py-tagged", tags={"team": "mail"})["QueueUrl"]
    check("CreateQueue tags", sqs.list_queue_tags(QueueUrl=tagged).get("Tags") == {"team": "mail"})
    sqs.tag_queue(QueueUrl=tagged, Tags={"env": "prod", "team": "ops"})
    sqs.untag_queue(QueueUrl=tagged, TagKeys=["env"])
    tags = sqs.list_queue_tags(QueueUrl=tagged).get("Tags")
    check("TagQueue / UntagQueue / ListQueueTags", tags == {"team": "ops"}, tags)
    raises("the aws: tag prefix is reserved", "InvalidParameterValue", lambda: sqs.tag_queue(QueueUrl=tagged, Tags={"aws:x": "1"}))

    # Batches.
    b = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": f"e{i}", "MessageBody": f"b{i}"} for i in range(3)] + [{"Id": "bad", "MessageBody": "x", "DelaySeconds": 901}],
    )
    check("SendMessageBatch", len(b["Successful"]) == 3 and b["Failed"][0]["Id"] == "bad", b)
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    check("receive up to 10, in publish order", [m["Body"] for m in got] == ["b0", "b1", "b2"], [m["Body"] for m in got])
    v = sqs.change_message_visibility_batch(
        QueueUrl=url, Entries=[{"Id": f"v{i}", "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 30} for i, m in enumerate(got)]
    )
    check("ChangeMessageVisibilityBatch", len(v["Successful"]) == 3, v)
    d = sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[{"Id": f"d{i}", "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(got)]
        + [{"Id": "forged", "ReceiptHandle": "AAAA"}],
    )
    check("DeleteMessageBatch", len(d["Successful"]) == 3 and d["Failed"][0]["Code"] == "ReceiptHandleIsInvalid", d)
    raises("empty batch", "EmptyBatchRequest", lambda: sqs.delete_message_batch(QueueUrl=url, Entries=[]))
    raises(
        "too many entries",
        "TooManyEntriesInBatchRequest",
        lambda: sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": f"e{i}", "MessageBody": "x"} for i in range(11)]),
    )
    raises(
        "repeated entry ids",
        "BatchEntryIdsNotDistinct",
        lambda: sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "x"}, {"Id": "a", "MessageBody": "y"}]),
    )

    # FIFO queues: deduplication, message groups, sequence numbers.
    raises("a .fifo name needs FifoQueue=true", "InvalidParameterValue", lambda: sqs.create_queue(QueueName="py-jobs.fifo"))
    furl = sqs.create_queue(QueueName="py-jobs.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
    fa = sqs.get_queue_attributes(QueueUrl=furl, AttributeNames=["All"])["Attributes"]
    check("a FIFO queue says so", fa.get("FifoQueue") == "true" and fa.get("ContentBasedDeduplication") == "true", fa)
    s1 = sqs.send_message(QueueUrl=furl, MessageBody="j1", MessageGroupId="A", MessageDeduplicationId="job-1")
    s2 = sqs.send_message(QueueUrl=furl, MessageBody="j2", MessageGroupId="A", MessageDeduplicationId="job-2")
    k1 = sqs.send_message(QueueUrl=furl, MessageBody="k1", MessageGroupId="B")  # content-based id
    again = sqs.send_message(QueueUrl=furl, MessageBody="j1 retried", MessageGroupId="A", MessageDeduplicationId="job-1")
    check("a repeat inside the window is answered as the first send", again["MessageId"] == s1["MessageId"] and again["SequenceNumber"] == s1["SequenceNumber"], again)
    same = sqs.send_message(QueueUrl=furl, MessageBody="k1", MessageGroupId="B")
    check("content-based deduplication drops the same body", same["MessageId"] == k1["MessageId"], (same, k1))
    check("sequence numbers grow", int(s1["SequenceNumber"]) < int(s2["SequenceNumber"]), (s1, s2))
    got = sqs.receive_message(QueueUrl=furl, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"])["Messages"]
    check("one message of each group in flight", [m["Body"] for m in got] == ["j1", "k1"], [m["Body"] for m in got])
    a = got[0]["Attributes"]
    check("MessageGroupId, MessageDeduplicationId, SequenceNumber", (a.get("MessageGroupId"), a.get("MessageDeduplicationId"), a.get("SequenceNumber")) == ("A", "job-1", s1["SequenceNumber"]), a)
    check("group A waits for its head", "Messages" not in sqs.receive_message(QueueUrl=furl))
    sqs.delete_message(QueueUrl=furl, ReceiptHandle=got[0]["ReceiptHandle"])
    nxt = sqs.receive_message(QueueUrl=furl, MessageSystemAttributeNames=["All"])["Messages"]
    check("the next of group A after the delete", [m["Body"] for m in nxt] == ["j2"], nxt)
    raises("a FIFO send needs MessageGroupId", "MissingParameter", lambda: sqs.send_message(QueueUrl=furl, MessageBody="x"))
    raises("a standard queue takes no MessageDeduplicationId", "InvalidParameterValue", lambda: sqs.send_message(QueueUrl=url, MessageBody="x", MessageDeduplicationId="d"))
    fb = sqs.send_message_batch(
        QueueUrl=furl,
        Entries=[{"Id": "c1", "MessageBody": "c1", "MessageGroupId": "C", "MessageDeduplicationId": "c-1"}, {"Id": "nogroup", "MessageBody": "x"}],
    )
    check("SendMessageBatch on a FIFO queue", [e["Id"] for e in fb["Successful"]] == ["c1"] and "SequenceNumber" in fb["Successful"][0] and fb["Failed"][0]["Id"] == "nogroup", fb)
    sqs.delete_queue(QueueUrl=furl)

    sqs.delete_queue(QueueUrl=url)
    raises("deleted queue", "QueueDoesNotExist", lambda: sqs.send_message(QueueUrl=url, MessageBody="x"))
    print(f"{len(CHECKS)} passed, 0 failed")


if __name__ == "__main__":
    main()
