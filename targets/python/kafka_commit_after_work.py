#!/usr/bin/env python3
"""commit-after-work, as an external Kafka consumer (confluent-kafka): poll a batch, and for each
record call the provider, then commit its offset synchronously.

At-least-once (docs/domain.md, "Ack placement": after the work). A member that works through a
batch for longer than max.poll.interval.ms is removed from the group (librdkafka leaves it): its
partitions go to another member from the last committed offset, so the records of the batch
after the last commit are processed twice, and its own late commit is refused
(UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: logged and ignored). A worker killed mid-batch has the
records since its last commit processed again by the member that takes its partitions over
once its session times out. A record the provider refused is not committed, but the next
record's commit covers it: Kafka commits an offset, not a record.

One worker process of an ackbench live run with `broker.kind: kafka`, configured only from the
run variables (kafka_settings.py).
"""

from confluent_kafka import Consumer, KafkaException

from kafka_settings import TOPIC, consume, consumer_config, log, work


def main():
    consumer = Consumer(consumer_config())
    consumer.subscribe([TOPIC])
    log(f"consuming {TOPIC}, committing after each record")

    def handle(record):
        if not work(record):
            return  # not committed; the next record's commit covers it
        try:
            consumer.commit(message=record, asynchronous=False)
        except KafkaException as e:
            # A commit after the member was removed (or its generation ended) is refused.
            log(f"commit of {record.partition()}:{record.offset()} refused: {e}")

    consume(consumer, handle)


if __name__ == "__main__":
    main()
