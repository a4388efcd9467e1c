#!/usr/bin/env python3
"""auto-commit, as an external Kafka consumer (confluent-kafka): poll a batch and call the provider
for each record; librdkafka commits in the background (enable.auto.commit, every
auto.commit.interval.ms), the code never does.

Neither at-least-once nor at-most-once: librdkafka stores a record's offset when the poll hands
it over, not when its work is done, and the timer commits what is stored. A worker killed after
a commit that ran ahead of its work loses the rest of that batch (committed, never processed);
one killed before the next commit has the records since the last one processed twice by the
member that takes its partitions over.

One worker process of an ackbench live run with `broker.kind: kafka` and
`enable_auto_commit: true`, configured only from the run variables (kafka_settings.py).
"""

from confluent_kafka import Consumer

from kafka_settings import TOPIC, consume, consumer_config, log, work


def main():
    consumer = Consumer(consumer_config())
    consumer.subscribe([TOPIC])
    log(f"consuming {TOPIC}, offsets committed by librdkafka's auto-commit")
    consume(consumer, work)


if __name__ == "__main__":
    main()
