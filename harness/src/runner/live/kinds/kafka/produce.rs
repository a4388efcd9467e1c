//! The run's producer: message `seq` goes to partition `(seq - 1) % partitions`, as the sim
//! model places it, with the message's key as the record's key, one record per produce batch
//! (`batch.num.messages=1`: Tansu's log end offset counts a batch as one record, see
//! docs/kafka-live.md). The record's offset is known before it is sent (the topic is the run's
//! own, so the n-th record of a partition is at offset n - 1) and handed to the proxy's
//! [`Records`] first, so a fetch of it can never come before ackbench knows which message it is;
//! the broker's delivery report must confirm that offset, or the run fails saying so. A copy a
//! worker produced (its retry, [`Records::copy_sent`]) moves the run's later records on.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::ClientConfig;

use super::records::Records;
use crate::record::Seq;
use crate::runner::live::kinds::Confirmation;
use crate::workload::message::Outgoing;

/// How long a record may wait in the producer's queue for the broker.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(30);

pub struct Producer {
    producer: FutureProducer,
    topic: String,
    /// Records sent to each partition so far: the next one's offset.
    next: Mutex<Vec<i64>>,
    records: Arc<Records>,
}

/// Where message `seq` goes among `partitions` partitions.
pub fn partition_of(seq: Seq, partitions: u32) -> i32 {
    (seq.saturating_sub(1) % partitions.max(1)) as i32
}

impl Producer {
    pub fn create(
        bootstrap: &str,
        topic: &str,
        partitions: u32,
        records: Arc<Records>,
    ) -> Result<Producer, String> {
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("batch.num.messages", "1")
            .set("linger.ms", "0")
            .set("acks", "all")
            // Tansu has no idempotent producer; without retries nothing is written twice or
            // out of order, and a failed send fails the run.
            .set("enable.idempotence", "false")
            .set("retries", "0")
            .set(
                "message.timeout.ms",
                DELIVERY_TIMEOUT.as_millis().to_string(),
            )
            .create()
            .map_err(|e| format!("cannot create a Kafka producer for {bootstrap}: {e}"))?;
        Ok(Producer {
            producer,
            topic: topic.to_string(),
            next: Mutex::new(vec![0; partitions.max(1) as usize]),
            records,
        })
    }

    /// Sends message `seq` keyed `key`: its confirmation checks the offset the broker gave it.
    pub fn send(&self, seq: Seq, key: &str, message: &Outgoing) -> Result<Confirmation, String> {
        let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
        let partition = partition_of(seq, next.len() as u32);
        // After the run's records and the copies workers produced there (their retries).
        let offset = next[partition as usize] + self.records.copies_in(partition);
        self.records.published(partition, offset, seq);
        let mut headers = OwnedHeaders::new();
        for (name, value) in &message.headers {
            let text = crate::workload::message::text_of(value.clone());
            headers = headers.insert(Header {
                key: name,
                value: Some(text.as_bytes()),
            });
        }
        let record = FutureRecord::to(&self.topic)
            .partition(partition)
            .key(key)
            .payload(&message.body)
            .headers(headers);
        let delivery = self
            .producer
            .send_result(record)
            .map_err(|(e, _)| format!("cannot hand message {seq} to the Kafka producer: {e}"))?;
        next[partition as usize] += 1;
        drop(next);
        let records = self.records.clone();
        Ok(Box::pin(async move {
            match delivery.await {
                Ok(Ok(d)) if d.offset == offset => Ok(()),
                Ok(Ok(d)) if records.stored_at(partition, offset, d.offset, seq) => Ok(()),
                Ok(Ok(d)) => Err(format!(
                    "the broker wrote message {seq} at offset {} of partition {partition}, not \
                     at {offset}: the run's topic has records ackbench did not publish",
                    d.offset
                )),
                Ok(Err((e, _))) => Err(format!("the broker refused message {seq}: {e}")),
                Err(_) => Err(format!("the producer dropped message {seq}")),
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_go_round_the_partitions_from_the_first() {
        // seq 1..=5 over 2 partitions: 0, 1, 0, 1, 0; one partition takes everything.
        let got: Vec<i32> = (1..=5).map(|s| partition_of(s, 2)).collect();
        assert_eq!(got, vec![0, 1, 0, 1, 0]);
        assert_eq!(partition_of(7, 1), 0);
    }
}
